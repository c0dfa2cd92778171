#!/bin/sh
# Loads a module that reads past a kmalloc'd buffer: KASAN reports it (the debug kernel lane).
insmod /data/loom_selftest_warn.ko what=kasan
