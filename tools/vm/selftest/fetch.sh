#!/bin/sh
# Writes every byte value, twice, and a line of text, for --fetch.
for round in 1 2; do
	i=0
	while [ $i -lt 256 ]; do
		printf "\\$(printf %o $i)"
		i=$((i + 1))
	done
done > /tmp/bytes
echo "hello from the guest" > /tmp/hello.txt
