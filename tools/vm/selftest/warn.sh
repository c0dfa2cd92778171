#!/bin/sh
# Loads a module that WARNs; with panic_on_warn the kernel panics.
insmod /data/loom_selftest_warn.ko
echo "still alive after the WARN (should not happen)"
