#!/bin/sh
# Loads a module that drops 8 allocations: the guest's closing kmemleak scan reports it (the debug kernel lane).
insmod /data/loom_selftest_warn.ko what=leak
