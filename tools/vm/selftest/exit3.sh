#!/bin/sh
# Fails with a distinctive status.
echo "not ok 1 - deliberate failure"
exit 3
