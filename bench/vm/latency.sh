#!/bin/sh
# make bench's latency step (bench/run): the breakdown of one empty job.
exec /data/submit_bench --breakdown 500
