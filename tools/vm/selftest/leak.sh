#!/bin/sh
# Loads a module that leaks 64 bytes: the guest's closing kmemleak scan reports it (the debug kernel lane).
insmod /data/loom_selftest_warn.ko what=leak
