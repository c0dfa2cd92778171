#!/bin/sh
# Never returns.
echo "hanging on purpose"
while :; do sleep 1; done
