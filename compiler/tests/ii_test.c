// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Honest statistics: the II loomc --stats reports (place_stats' measured:
 * two short synthetic launches on the engine, measure.c) is what one long
 * launch with the real arguments takes, within 5%: cycles over its
 * instances (loop iterations), on 4x4 and 8x8.  The threads are the
 * corpus's and PolyBench's with one thread to a file; their memory is
 * zeroed (an II does not depend on the values).  The schedule's own II
 * (cycles_per_instance) is printed beside them: it is optimistic where
 * buffers fill or a temporal PE's round robin slips.  The bound it rates
 * the II against (ii_bound: no mapping beats it) is no more than what runs.
 */
#include "check.h"
#include "engine_run.h"
#include "front.h"
#include "place.h"

#define BUF_VA(k)	(ER_DATA_VA + (uint64_t)(k) * 0x20000)

/**
 * struct ii_case - one thread and one launch of it
 * @file: the source, from the repository root (its first thread runs)
 * @name: the thread
 * @args: its operands; 1..5 stand for buffers BUF_VA(0..4)
 * @nargs: how many
 * @extents: the dense extents
 * @rank: how many
 * @iterations: loop iterations per instance (1 without loops)
 */
struct ii_case {
	const char *file, *name;
	uint64_t args[8];
	int nargs;
	int64_t extents[2];
	int rank;
	int64_t iterations;
};

#define BUF(k)	((uint64_t)(k) + 1)

static const struct ii_case cases[] = {
	{ "compiler/tests/corpus/valid/vector_add.loom", "vadd",
	  { BUF(0), BUF(1), BUF(2) }, 3, { 2000 }, 1, 1 },
	{ "compiler/tests/corpus/valid/matvec.loom", "matvec",
	  { BUF(0), BUF(1), BUF(2), 64 }, 4, { 64 }, 1, 64 },
	{ "bench/polybench/gemm.loom", "gemm",
	  { 0x3fc00000, 0x3f99999a, BUF(0), BUF(1), BUF(2), 25, 30 }, 7,
	  { 20, 25 }, 2, 30 },
	{ "bench/polybench/gesummv.loom", "gesummv",
	  { 0x3fc00000, 0x3f99999a, BUF(0), BUF(1), BUF(2), BUF(3), BUF(4), 40 },
	  8, { 40 }, 1, 40 },
	{ "bench/polybench/syrk.loom", "syrk",
	  { 0x3fc00000, 0x3f99999a, BUF(0), BUF(1), 30, 20 }, 6, { 30, 30 }, 2,
	  20 },
	{ "bench/polybench/jacobi_2d.loom", "jacobi_2d",
	  { BUF(0), BUF(1), 30 }, 3, { 28, 28 }, 2, 1 },
	/* 68 operations, about 20 a loop iteration: link channels on 4x4 */
	{ "bench/polybench/gemm_tiled.loom", "gemm_tiled",
	  { 0x3fc00000, 0x3f99999a, BUF(0), BUF(1), BUF(2), 24, 30 }, 7,
	  { 10, 12 }, 2, 30 },
};

/*
 * The II loomc reports for @c's thread on a @w x @h fabric, or -1; its
 * schedule's in *@scheduled.
 */
static double reported_ii(const char *text, unsigned w, unsigned h,
			  int *scheduled, int *bound)
{
	struct front f;
	struct graph g;
	struct placement *p = malloc(sizeof(*p));
	double ii = -1;

	if (!p)
		abort();
	graph_init(&g);
	if (!front_verify(&f, text) &&
	    !lower_thread(&f.d, f.m->funcs, &g) &&
	    !place_graph(&f.d, f.m->funcs->name_loc, &g, w, h, p))
		ii = p->stats.measured;
	*scheduled = p->stats.cycles_per_instance;
	*bound = p->stats.ii_bound;
	graph_free(&g);
	front_close(&f);
	free(p);
	return ii;
}

static void case_on(const struct ii_case *c, unsigned n)
{
	char *text = er_read_file(c->file);
	uint64_t args[8];
	int64_t count = c->iterations;
	double measured, ii;
	int scheduled = 0, bound = 0;
	bool within;
	struct er e;

	if (!text) {
		CHECK(text);
		return;
	}
	ii = reported_ii(text, n, n, &scheduled, &bound);
	if (er_open(&e, text, n, n) || ii <= 0) {
		printf("#   %s does not map on %ux%u\n", c->name, n, n);
		CHECK(0);
		er_close(&e);
		free(text);
		return;
	}
	for (int k = 0; k < c->nargs; k++)
		args[k] = c->args[k] >= 1 && c->args[k] <= 5 ?
			  BUF_VA(c->args[k] - 1) : c->args[k];
	for (int d = 0; d < c->rank; d++)
		count *= c->extents[d];
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, c->name, args, c->extents, 0, 0, 0));
	measured = (double)e.done.counters.cycles / (double)count;
	within = measured <= ii * 1.05 && measured >= ii * 0.95;
	printf("#   %s on %ux%u: II %.2f reported (scheduled %d, bound %d), %.2f measured%s\n",
	       c->name, n, n, ii, scheduled, bound, measured,
	       within ? "" : "  (off by more than 5%)");
	CHECK(within);
	/* a bound above what runs would rate the mapping better than ideal */
	CHECK(bound <= measured * 1.01);
	er_close(&e);
	free(text);
}

TEST(reported_ii_is_measured_4x4)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		case_on(&cases[i], 4);
}

TEST(reported_ii_is_measured_8x8)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		case_on(&cases[i], 8);
}

int main(void)
{
	RUN(reported_ii_is_measured_4x4);
	RUN(reported_ii_is_measured_8x8);
	return checks_done();
}
