#!/bin/sh
# make bench: P2 again with the device running every job on its core
# thread, as before issue 36's inline path (bench/run boots it with
# -device loom-cgra,inline-steps=0).
exec /data/submit_bench --p2-only P2i --p2-note "every job on the core thread: inline-steps=0"
