#!/bin/sh
# make bench: P2 again with the device sleeping as soon as its queue is
# empty (bench/run boots it with -device loom-cgra,poll-us=0).
exec /data/submit_bench --p2-only P2n --p2-note "the device not polling its doorbell: poll-us=0"
