#!/bin/sh
# A dynamically linked program given with --file runs: loom-vm brought its
# libraries and loader.
/data/printf 'ok 1 - %s\n' "a dynamically linked program ran" || exit 1
exit 0
