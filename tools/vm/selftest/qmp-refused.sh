#!/bin/sh
# Asks the host for QMP although loom-vm runs without --hotplug: the run
# must fail, saying so, though this test itself passes.
printf 'loom-vm: qmp: {"execute":"device_del","arguments":{"id":"loom0"}}\n'
exit 0
