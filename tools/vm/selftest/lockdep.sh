#!/bin/sh
# Loads a module that takes two mutexes in both orders: lockdep reports it (the debug kernel lane).
insmod /data/loom_selftest_warn.ko what=lockdep
