#!/bin/sh
# make bench: P1 again in a VM with two guest CPUs (bench/run boots it with -smp 2).
exec /data/submit_bench --p1-only
