#!/bin/sh
# make bench: P2 again with the device polling its doorbell for 100 us
# after each job (bench/run boots it with -device loom-cgra,poll-us=100).
exec /data/submit_bench --p2-only P2p --p2-note "the device polling its doorbell: poll-us=100"
