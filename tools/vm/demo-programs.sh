#!/bin/sh
# make demo, inside the VM: run each compiled example with loom-run.
status=0
for f in /data/*.lcb; do
	name=${f##*/}
	[ "$name" = bad_check.lcb ] && continue
	echo "== ${name%.lcb}"
	/data/loom-run --stats --workers 2 "$f" || status=1
done
exit $status
