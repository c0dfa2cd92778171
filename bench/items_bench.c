// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * items_bench: what P3's threads cost the fabric simulator, on the host.
 *
 * Compiles bench/vm/work_bench.loom for an 8x8 fabric, as the VM
 * benchmark does, and runs on the engine (through the command processor,
 * the MMU and a fake bus) either one items dispatch of @tree over the
 * nodes 0 .. N-1 of the complete binary tree (every item stores its value
 * and reports its children; nothing is re-injected: P3's "one items
 * dispatch, no scheduler" row) or one dense launch of @dense over N
 * instances.  Both store out[v] = v * 3 + 1, which is checked.
 *
 * It prints the device cycles; bench/run-fabric runs it under
 * `valgrind --tool=callgrind` at two sizes and divides the difference in
 * instructions by the difference in items, which gives the simulator's
 * host instructions per item for each thread: the part of P3's wall-clock
 * ratio that no machine load moves (Documentation/benchmarks.rst).
 *
 * Usage: items_bench tree|dense N    (N <= MAX_ITEMS; run from the
 * repository root, which has bench/vm/work_bench.loom)
 */
#include "engine_run.h"

#define MAX_ITEMS	8191
#define MUL		3
#define OUT_VA		ER_DATA_VA
#define PAYLOAD_VA	(ER_DATA_VA + 0x10000)
#define RESULT_VA	(ER_DATA_VA + 0x20000)
#define CHILD_CAP	2	/* @tree's loom.child_capacity */

static int run(struct er *e, bool tree, uint32_t n)
{
	static int64_t nodes[MAX_ITEMS];

	if (!tree) {
		uint64_t args[2] = { OUT_VA, MUL };
		int64_t extent = n;

		return er_launch(e, "dense", args, &extent, 0, 0, 0);
	}
	for (uint32_t v = 0; v < n; v++)
		nodes[v] = v;
	er_poke64(e, PAYLOAD_VA, nodes, n);
	return er_launch(e, "tree", (uint64_t[]){ 0, OUT_VA, MUL, n }, NULL, n,
			 PAYLOAD_VA, RESULT_VA);
}

/* Whether every node's value was stored. */
static bool stored(struct er *e, uint32_t n)
{
	static int64_t out[MAX_ITEMS];

	er_peek64(e, OUT_VA, out, n);
	for (uint32_t v = 0; v < n; v++)
		if (out[v] != (int64_t)v * MUL + 1)
			return false;
	return true;
}

int main(int argc, char **argv)
{
	bool tree = argc == 3 && !strcmp(argv[1], "tree");
	long n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
	char *text;
	struct er e;
	int st;

	_Static_assert(OUT_VA + 8 * MAX_ITEMS <= PAYLOAD_VA &&
		       PAYLOAD_VA + 8 * MAX_ITEMS <= RESULT_VA &&
		       RESULT_VA + MAX_ITEMS * LOOM_ITEM_RESULT_SIZE(CHILD_CAP) <=
		       ER_DATA_VA + ER_DATA_SIZE, "the data does not fit");
	if (argc != 3 || (!tree && strcmp(argv[1], "dense")) || n < 1 ||
	    n > MAX_ITEMS) {
		fprintf(stderr, "usage: %s tree|dense N (1 <= N <= %d)\n",
			argv[0], MAX_ITEMS);
		return 2;
	}
	text = er_read_file("bench/vm/work_bench.loom");
	if (!text || er_open(&e, text, 8, 8)) {
		fprintf(stderr, "items_bench: cannot compile work_bench.loom\n");
		return 1;
	}
	st = run(&e, tree, (uint32_t)n);
	if (st || !stored(&e, (uint32_t)n)) {
		fprintf(stderr, "items_bench: %s over %ld: status %d%s\n",
			argv[1], n, st, st ? "" : ", wrong values stored");
		return 1;
	}
	printf("%llu\n", (unsigned long long)e.done.counters.cycles);
	er_close(&e);
	free(text);
	return 0;
}
