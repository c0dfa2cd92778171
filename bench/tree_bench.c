// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tree_bench: libloom's responsibility kernel and bounded work-stealing
 * scheduler (loom_work_sync_run) against OpenMP tasks (libgomp) on the same
 * unbalanced tree, 1 and 2 workers, on the host (issue 7, benchmark P4).
 *
 * The tree is the UTS-style tree of the examples (bench/kernels/uts_node.loom):
 * a node is one u64, payload = (hash << 8) | depth, so the hash keeps 56
 * bits and the depth 8.  A node above max_depth has ((hash >> 33) % 4)
 * children; child k has hash (hash + k) * 6364136223846793005 +
 * 1442695040888963407 (mod 2^64, then cut to 56 bits by the packing) and
 * depth + 1.  The cut changes no node's fan-out: the low 56 bits of the
 * product depend only on the low 56 bits of the operands.  Every variant
 * walks exactly this packed u64, so the trees are identical.
 *
 * Root: hash 0x2a itself has (0x2a >> 33) % 4 = 0 children (a one-node
 * tree), so the root is 0x2a with fan-out 3 set in bits 33-34, hash
 * 0x60000002a, as compiler/tests/run_engine_test.c does.  Mean fan-out is
 * 1.5, so the tree grows ~1.5x per level: the default max_depth 30 gives
 * 809,817 nodes (28: 360,433; 32: 1,823,579; --quick: 18, 6,553).  It is
 * unbalanced: a node's line dies out with probability sqrt(2) - 1, so
 * sibling subtrees differ by orders of magnitude.
 *
 * Per-node work: --rounds (default 256) rounds of splitmix64's finaliser
 * over the node, ~0.9 us here, the same function in every variant, summed
 * into a checksum (order-independent, so parallel variants must agree) so
 * it cannot be optimised away.  Each node's work is done before its
 * children are spawned, in every variant, because libloom's adapter
 * publishes children only when the callback returns.  Counts and checksums
 * are per worker (cache-line padded) and summed at the end.
 *
 * The light tree (issue 14, P4 (b)): UTS's binomial tree, T3's shape with
 * splitmix64 in place of SHA-1 (see light_fanout() below): root fan-out
 * 2000, m = 8, q = 0.124875, 1,100,145 nodes, no work per node beyond
 * computing its children, so it measures the runtimes themselves.
 *
 * Variants, each the best of --reps (default 3) wall-clock runs (the worst
 * is printed too, and the least CPU time of all the process's threads in
 * a run: on a machine too loaded to give two cores, cpu ms of 2 workers
 * against 1 still shows how much work the second worker added), the
 * reps round-robin over the variants so that load from elsewhere on this
 * shared machine hits one rep of each rather than every rep of one:
 *   sequential    plain recursion, 1 thread: the baseline.  An untimed
 *                 run of it first is the reference that every timed run's
 *                 node count and checksum must equal (else exit 1);
 *   libloom       loom_work_sync_run(), LOOM_WORK_SYNC_THREADED, 1 and 2
 *                 workers, no trace: the callback does the work and reports
 *                 the children, the adapter publishes them as one group and
 *                 completes the item (loom_sched_publish_complete);
 *   libloom+trace the same with the replay trace on (3 events per item,
 *                 checked), taken at the end of the run;
 *   openmp        one parallel/single region of 1 and 2 threads, a task
 *                 per child, taskwait;
 *   static-split  the same nodes listed beforehand and split statically
 *                 over 2 threads: no scheduler, no tree.  Not a rival, the
 *                 ceiling: it shows what the 2 cores gave during this run.
 *
 * libloom settings.  deque_capacity 4096 for the heavy tree (an owner pops
 * its newest item, so its deque holds at most 3 items per level of its
 * path: < 3 x 256 for any depth the payload can carry), 2^20 for the light
 * one (the root's 2000, then at most 7 per level); a deque too small fails
 * the run (LOOM_WORK_QUEUE_CAPACITY) rather than slowing it, so capacity is
 * not a performance knob.  Nor is max_batch: the synchronous adapter fixes
 * it at 1.
 *
 * RESULT lines: cancel_all's time per item at 65536 and 8192 queued items
 * (lower is better; goal 1, linear); (a) heavy tree, libloom / OpenMP at 1
 * and 2 workers and libloom's 2 workers / 1 worker (goal 1.8), with the
 * trace off and on; (b) light tree, libloom's nodes/s per worker /
 * sequential's (goal 0.25) and libloom / OpenMP at 2 workers (goal 2),
 * with the trace off and on.  The goals are issue 14's and hold with the
 * trace off; every other ratio is higher-is-better with no goal.
 * Documentation/benchmarks.rst (P4) has the figures and what limits them.
 *
 * Usage: tree_bench [--max-depth N] [--reps N] [--rounds N] [--quick]
 *                   [--heavy-only | --light-only] [--only VARIANT:WORKERS]
 *
 * --only times one variant (with the sequential reference) and prints its
 * row, no RESULT lines: for perf and callgrind, e.g.
 * `perf record tree_bench --light-only --only libloom:1`.
 *
 * From the repository root:
 *   gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -fopenmp -Iuapi \
 *       -I/usr/include/libdrm -Ilib -Ilib/include -Iqemu-device/engine \
 *       -o /tmp/tree_bench bench/tree_bench.c lib/[a-z]*.c \
 *       qemu-device/engine/alu.c -ldrm -luring -lpthread
 * (lib/[a-z]*.c is every .c file of lib/, spelt so because a slash and a
 * star would open a comment here.)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "loom/work.h"

#define MAX_WORKERS		2
#define DEFAULT_REPS		3
#define QUICK_REPS		1

/* ---------------------------------------------------------- the trees --- */

/* A tree: its root, each node's fan-out and children, the work per node. */
struct tree {
	const char *name;
	uint64_t root;
	unsigned max_fanout;		/* child_capacity for libloom */
	unsigned (*fanout)(const struct tree *t, uint64_t node);
	uint64_t (*child)(const struct tree *t, uint64_t node, unsigned k);
	unsigned max_depth;		/* heavy */
	unsigned rounds;		/* hash rounds of work per node */
	uint32_t deque_capacity;
};

/* The heavy tree: UTS-style, payload = (hash << 8) | depth (see the top). */
#define HEAVY_ROOT		0x60000002aULL	/* 0x2a with fan-out 3 */
#define LCG_MUL			6364136223846793005ULL
#define LCG_INC			1442695040888963407ULL
#define DEPTH_BITS		8
#define DEPTH_MASK		((1ULL << DEPTH_BITS) - 1)
#define DEFAULT_ROUNDS		256
#define DEFAULT_MAX_DEPTH	30
#define QUICK_MAX_DEPTH		18

static unsigned heavy_fanout(const struct tree *t, uint64_t node)
{
	if ((node & DEPTH_MASK) >= t->max_depth)
		return 0;
	return (unsigned)(((node >> DEPTH_BITS) >> 33) % 4);
}

static uint64_t heavy_child(const struct tree *t, uint64_t node, unsigned k)
{
	(void)t;
	return (((node >> DEPTH_BITS) + k) * LCG_MUL + LCG_INC) << DEPTH_BITS |
	       ((node & DEPTH_MASK) + 1);
}

/*
 * The light tree: UTS's binomial tree (T3's shape) with splitmix64 in place
 * of SHA-1.  The root has LIGHT_ROOT_FANOUT children; every other node has
 * LIGHT_M children with probability LIGHT_Q, else none (q * m = 0.999: a
 * nearly critical branching process, so subtrees range from one node to
 * most of the tree).  Child k of a node hashes (hash, k).  No work per
 * node beyond making its children: this measures the runtime alone.
 */
#define LIGHT_ROOT		0x4c69676875ULL	/* "Light" + 1: 1100145 nodes */
#define LIGHT_ROOT_FANOUT	2000
#define LIGHT_M			8
#define LIGHT_Q			0.124875
#define QUICK_ROOT_FANOUT	200

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static unsigned light_root_fanout = LIGHT_ROOT_FANOUT;

static unsigned light_fanout(const struct tree *t, uint64_t node)
{
	(void)t;
	if (node == LIGHT_ROOT)
		return light_root_fanout;
	/* The top 53 bits as a uniform number in [0, 1). */
	return (mix64(node) >> 11) * 0x1.0p-53 < LIGHT_Q ? LIGHT_M : 0;
}

static uint64_t light_child(const struct tree *t, uint64_t node, unsigned k)
{
	(void)t;
	return mix64(node + (k + 1) * 0x9e3779b97f4a7c15ULL);
}

/* The synthetic per-node work: a dependent chain the compiler must run. */
static uint64_t node_work(const struct tree *t, uint64_t node)
{
	uint64_t x = node;

	for (unsigned i = 0; i < t->rounds; i++)
		x = mix64(x);
	return x;
}

/* ----------------------------------------------------------- tallies --- */

/* What one worker visited; padded so two workers never share a line. */
struct tally {
	uint64_t nodes;
	uint64_t checksum;
} __attribute__((aligned(64)));

static void tally_visit(const struct tree *t, struct tally *tl, uint64_t node)
{
	tl->nodes++;
	tl->checksum += node_work(t, node);
}

static struct tally tally_sum(const struct tally *slots, unsigned n)
{
	struct tally sum = { 0 };

	for (unsigned i = 0; i < n; i++) {
		sum.nodes += slots[i].nodes;
		sum.checksum += slots[i].checksum;
	}
	return sum;
}

/* One run: fills *@out; returns 0, or -1 after saying why on stderr. */
typedef int (*variant_fn)(const struct tree *t, unsigned workers,
			  struct tally *out);

/* -------------------------------------------------------- sequential --- */

static void seq_visit(const struct tree *t, uint64_t node, struct tally *tl)
{
	unsigned n;

	tally_visit(t, tl, node);
	n = t->fanout(t, node);
	for (unsigned k = 0; k < n; k++)
		seq_visit(t, t->child(t, node, k), tl);
}

static int run_sequential(const struct tree *t, unsigned workers,
			  struct tally *out)
{
	(void)workers;
	memset(out, 0, sizeof(*out));
	seq_visit(t, t->root, out);
	return 0;
}

/* ----------------------------------------------------------- libloom --- */

struct loom_run {
	const struct tree *tree;
	struct tally slots[MAX_WORKERS];	/* indexed by item->worker */
};

static enum loom_work_sync_verdict
loom_visit(void *ctx, const struct loom_sched_item *item, uint64_t *children,
	   size_t capacity, size_t *count)
{
	struct loom_run *run = ctx;
	const struct tree *t = run->tree;
	unsigned n;

	(void)capacity;		/* child_capacity is the tree's max_fanout */
	tally_visit(t, &run->slots[item->worker], item->payload);
	n = t->fanout(t, item->payload);
	for (unsigned k = 0; k < n; k++)
		children[k] = t->child(t, item->payload, k);
	*count = n;
	return LOOM_WORK_SYNC_CHILDREN;
}

static uint64_t last_loom_steals;	/* of the latest libloom run, for the table */
static size_t last_trace_events;
static double last_loom_share;		/* worker 0's share of the nodes */

static int run_loom(const struct tree *t, unsigned workers, bool trace,
		    struct tally *out)
{
	struct loom_work_sync_config config = {
		.root_payload = t->root,
		.sched.workers = workers,
		.sched.deque_capacity = t->deque_capacity,
		.child_capacity = t->max_fanout,
		.flags = LOOM_WORK_SYNC_THREADED,
		.sched.flags = trace ? 0 : LOOM_SCHED_NO_TRACE,
	};
	struct loom_run run = { .tree = t };
	struct loom_work_sync_result result;
	enum loom_error err;
	uint64_t completed;

	err = loom_work_sync_run(&config, loom_visit, &run, &result);
	if (err) {
		fprintf(stderr, "tree_bench: loom_work_sync_run: %s\n",
			loom_strerror(err));
		if (err != LOOM_WORK_INVALID_ARGUMENT)
			loom_work_sync_result_free(&result);
		return -1;
	}
	*out = tally_sum(run.slots, workers);
	last_loom_share = (double)run.slots[0].nodes / out->nodes;
	completed = result.items_completed;
	last_loom_steals = result.steals;
	last_trace_events = loom_sched_trace_count(result.trace);
	loom_work_sync_result_free(&result);
	if (completed != out->nodes) {
		fprintf(stderr, "tree_bench: libloom completed %llu items, callbacks saw %llu\n",
			(unsigned long long)completed,
			(unsigned long long)out->nodes);
		return -1;
	}
	/* A trace has admit/publish, acquire and complete per item. */
	if (trace && last_trace_events != 3 * completed) {
		fprintf(stderr, "tree_bench: libloom traced %zu events for %llu items\n",
			last_trace_events, (unsigned long long)completed);
		return -1;
	}
	return 0;
}

static int run_libloom(const struct tree *t, unsigned workers,
		       struct tally *out)
{
	return run_loom(t, workers, false, out);
}

static int run_libloom_traced(const struct tree *t, unsigned workers,
			      struct tally *out)
{
	return run_loom(t, workers, true, out);
}

/* ------------------------------------------------------------ OpenMP --- */

static void omp_visit(const struct tree *t, uint64_t node, struct tally *slots)
{
	unsigned n;

	tally_visit(t, &slots[omp_get_thread_num()], node);
	n = t->fanout(t, node);
	for (unsigned k = 0; k < n; k++) {
		uint64_t child = t->child(t, node, k);

#pragma omp task default(none) firstprivate(child, t, slots)
		omp_visit(t, child, slots);
	}
#pragma omp taskwait
}

static int run_openmp(const struct tree *t, unsigned workers,
		      struct tally *out)
{
	struct tally slots[MAX_WORKERS] = { 0 };
	int team = 0;

	/* Exactly @workers threads: no dynamic shrinking of the team. */
	omp_set_dynamic(0);
	omp_set_num_threads((int)workers);
#pragma omp parallel default(none) shared(t, slots, team)
#pragma omp single
	{
		team = omp_get_num_threads();
		omp_visit(t, t->root, slots);
	}
	if (team != (int)workers) {
		fprintf(stderr, "tree_bench: OpenMP gave %d threads, not %u\n",
			team, workers);
		return -1;
	}
	*out = tally_sum(slots, workers);
	return 0;
}

/* ------------------------------------------------------ static split --- */

/*
 * The machine's ceiling: the same nodes' work, listed beforehand, split
 * statically between the threads, with no scheduler and no tree.  The two
 * cores of these shared machines are not always two cores' worth.
 */
static struct {
	uint64_t *nodes;
	size_t count, cap;
} flat;

static void flat_collect(const struct tree *t, uint64_t node)
{
	unsigned n;

	if (flat.count == flat.cap) {
		flat.cap = flat.cap ? 2 * flat.cap : 4096;
		flat.nodes = realloc(flat.nodes, flat.cap * sizeof(*flat.nodes));
		if (!flat.nodes) {
			fprintf(stderr, "tree_bench: out of memory\n");
			exit(1);
		}
	}
	flat.nodes[flat.count++] = node;
	n = t->fanout(t, node);
	for (unsigned k = 0; k < n; k++)
		flat_collect(t, t->child(t, node, k));
}

static int run_static_split(const struct tree *t, unsigned workers,
			    struct tally *out)
{
	struct tally slots[MAX_WORKERS] = { 0 };

	omp_set_dynamic(0);
	omp_set_num_threads((int)workers);
#pragma omp parallel for schedule(static) default(none) shared(flat, slots, t)
	for (size_t i = 0; i < flat.count; i++)
		tally_visit(t, &slots[omp_get_thread_num()], flat.nodes[i]);
	*out = tally_sum(slots, workers);
	return 0;
}

/* ------------------------------------------------------------ driver --- */

struct variant {
	const char *name;
	unsigned workers;
	variant_fn run;
	double best;		/* seconds */
	double worst;
	double cpu;		/* CPU seconds of every thread, least of the reps */
	struct tally result;
	uint64_t steals;	/* libloom: of its last run */
	double share_lo, share_hi;	/* libloom: worker 0's share, over the reps */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time (user + system) of the whole process, every thread. */
static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* One timed run, which must match @ref; keeps the best and worst times. */
static int measure(struct variant *v, const struct tree *t,
		   const struct tally *ref)
{
	double c = cpu_now(), s = now();

	if (v->run(t, v->workers, &v->result))
		return -1;
	s = now() - s;
	c = cpu_now() - c;
	if (c < v->cpu)
		v->cpu = c;
	if (v->result.nodes != ref->nodes ||
	    v->result.checksum != ref->checksum) {
		fprintf(stderr, "tree_bench: %s tree, %s, %u worker(s): %llu nodes, checksum %016llx; the reference has %llu nodes, checksum %016llx\n",
			t->name, v->name, v->workers,
			(unsigned long long)v->result.nodes,
			(unsigned long long)v->result.checksum,
			(unsigned long long)ref->nodes,
			(unsigned long long)ref->checksum);
		return -1;
	}
	if (v->run == run_libloom || v->run == run_libloom_traced) {
		v->steals = last_loom_steals;
		if (last_loom_share < v->share_lo)
			v->share_lo = last_loom_share;
		if (last_loom_share > v->share_hi)
			v->share_hi = last_loom_share;
	}
	if (s < v->best)
		v->best = s;
	if (s > v->worst)
		v->worst = s;
	return 0;
}

static double rate(const struct variant *v)
{
	return v->result.nodes / v->best;
}

/* Indices into the variant table in main(). */
enum { SEQ, LOOM1, LOOM2, TRACE1, TRACE2, OMP1, OMP2, SPLIT2, NVARIANTS };

static const struct variant variant_table[NVARIANTS] = {
	[SEQ] = { "sequential", 1, run_sequential },
	[LOOM1] = { "libloom", 1, run_libloom },
	[LOOM2] = { "libloom", 2, run_libloom },
	[TRACE1] = { "libloom+trace", 1, run_libloom_traced },
	[TRACE2] = { "libloom+trace", 2, run_libloom_traced },
	[OMP1] = { "openmp", 1, run_openmp },
	[OMP2] = { "openmp", 2, run_openmp },
	[SPLIT2] = { "static-split", 2, run_static_split },
};

/* Minima start here: a variant whose best is still this never ran. */
#define UNMEASURED	1e30

static bool measured(const struct variant *v)
{
	return v->best < UNMEASURED;
}

static void print_table(const struct tree *t, const struct variant *v,
			unsigned reps)
{
	printf("%s tree: %llu nodes, %u hash rounds per node; best (worst) of %u\n",
	       t->name, (unsigned long long)v[0].result.nodes, t->rounds, reps);
	printf("%-14s %7s %10s %10s %10s %12s %7s %8s\n", "variant", "workers",
	       "ms", "worst ms", "cpu ms", "nodes/s", "vs seq", "steals");
	for (size_t i = 0; i < NVARIANTS; i++)
		if (measured(&v[i]))
			printf("%-14s %7u %10.1f %10.1f %10.1f %12.0f %6.2fx %8llu\n",
			       v[i].name, v[i].workers, v[i].best * 1e3,
			       v[i].worst * 1e3, v[i].cpu * 1e3, rate(&v[i]),
			       rate(&v[i]) / rate(&v[0]),
			       (unsigned long long)v[i].steals);
	/*
	 * Whether the second worker really worked: on a machine too loaded
	 * to give two cores the wall time cannot say.
	 */
	if (measured(&v[LOOM2]) && measured(&v[TRACE2]))
		printf("libloom, 2 workers: worker 0 ran %.0f-%.0f%% of the nodes (%.0f-%.0f%% with the trace)\n",
		       v[LOOM2].share_lo * 100, v[LOOM2].share_hi * 100,
		       v[TRACE2].share_lo * 100, v[TRACE2].share_hi * 100);
}

/* @better: "higher" or "lower"; @goal: a number, or "-" for none. */
static void result(double ratio, const char *what, const char *detail,
		   const char *better, const char *goal)
{
	printf("RESULT\tP4\t%.3f\t%s\t%s\t%s\t%s\n", ratio, what, detail,
	       better, goal);
}

/* P4 (a): the heavy tree against OpenMP, and its scaling. */
static void heavy_results(const struct variant *v)
{
	char d[256];

	for (int w = 1; w <= 2; w++) {
		const struct variant *l = &v[w == 1 ? LOOM1 : LOOM2];
		const struct variant *o = &v[w == 1 ? OMP1 : OMP2];
		char what[128];

		snprintf(what, sizeof(what), "heavy tree: libloom / OpenMP tasks, %d worker%s (nodes/s)",
			 w, w == 1 ? "" : "s");
		snprintf(d, sizeof(d), "libloom %.0f nodes/s, OpenMP %.0f nodes/s, %llu nodes",
			 rate(l), rate(o), (unsigned long long)l->result.nodes);
		result(rate(l) / rate(o), what, d, "higher", "-");
	}
	snprintf(d, sizeof(d), "2 workers %.0f nodes/s, 1 worker %.0f nodes/s; static split %.2fx sequential",
		 rate(&v[LOOM2]), rate(&v[LOOM1]),
		 rate(&v[SPLIT2]) / rate(&v[SEQ]));
	result(rate(&v[LOOM2]) / rate(&v[LOOM1]),
	       "heavy tree: libloom 2 workers / 1 worker (nodes/s)", d,
	       "higher", "1.8");
	snprintf(d, sizeof(d), "2 workers %.0f nodes/s, 1 worker %.0f nodes/s",
		 rate(&v[TRACE2]), rate(&v[TRACE1]));
	result(rate(&v[TRACE2]) / rate(&v[TRACE1]),
	       "heavy tree, trace on: libloom 2 workers / 1 worker (nodes/s)", d,
	       "higher", "-");
}

/* P4 (b): the light tree, per worker against sequential, and against OpenMP. */
static void light_results(const struct variant *v)
{
	char d[256];

	for (int traced = 0; traced <= 1; traced++) {
		const char *on = traced ? ", trace on" : "";

		for (int w = 1; w <= 2; w++) {
			const struct variant *l =
				&v[traced ? (w == 1 ? TRACE1 : TRACE2) :
					    (w == 1 ? LOOM1 : LOOM2)];
			char what[128];

			snprintf(what, sizeof(what), "light tree%s: libloom nodes/s per worker / sequential, %d worker%s",
				 on, w, w == 1 ? "" : "s");
			snprintf(d, sizeof(d), "libloom %.0f nodes/s, sequential %.0f nodes/s, %llu nodes",
				 rate(l), rate(&v[SEQ]),
				 (unsigned long long)l->result.nodes);
			result(rate(l) / w / rate(&v[SEQ]), what, d, "higher",
			       traced ? "-" : "0.25");
		}
		snprintf(d, sizeof(d), "libloom %.0f nodes/s, OpenMP %.0f nodes/s",
			 rate(&v[traced ? TRACE2 : LOOM2]), rate(&v[OMP2]));
		result(rate(&v[traced ? TRACE2 : LOOM2]) / rate(&v[OMP2]),
		       traced ? "light tree, trace on: libloom / OpenMP tasks, 2 workers (nodes/s)" :
				"light tree: libloom / OpenMP tasks, 2 workers (nodes/s)",
		       d, "higher", traced ? "-" : "2");
	}
}

/*
 * loom_sched_cancel_all() of @n queued items (one worker, one root that
 * published them all): its seconds, or a negative number on failure.
 */
static double time_cancel_all(uint32_t n)
{
	struct loom_sched_config config = {
		.workers = 1, .deque_capacity = n,
		.flags = LOOM_SCHED_NO_TRACE,
	};
	uint64_t *payloads = calloc(n, sizeof(*payloads)), cancelled = 0;
	struct loom_sched_item root;
	struct loom_sched *s = NULL;
	double t = -1;

	if (payloads && !loom_sched_create(&config, &s) &&
	    !loom_sched_admit(s, 0, NULL) && !loom_sched_acquire(s, 0, &root) &&
	    !loom_sched_publish(s, &root, payloads, n, NULL)) {
		t = now();
		if (loom_sched_cancel_all(s, &cancelled, NULL) || cancelled != n)
			t = -1;
		else
			t = now() - t;
	}
	loom_sched_destroy(s);
	free(payloads);
	return t;
}

/*
 * cancel_all's cost per item at 65536 queued items over its cost per item
 * at 8192: 1 if it is linear, 8 if quadratic (issue 14: it was 8.4 s for
 * 65536).  Best of @reps each.
 */
static int cancel_all_result(int reps)
{
	double small = 1e30, big = 1e30;
	char d[160];

	for (int r = 0; r < reps; r++) {
		double a = time_cancel_all(8192), b = time_cancel_all(65536);

		if (a < 0 || b < 0) {
			fprintf(stderr, "tree_bench: cancel_all failed\n");
			return -1;
		}
		small = a < small ? a : small;
		big = b < big ? b : big;
	}
	snprintf(d, sizeof(d), "65536 items in %.3f ms, 8192 in %.3f ms",
		 big * 1e3, small * 1e3);
	result((big / 65536) / (small / 8192),
	       "loom_sched_cancel_all: time per item, 65536 queued / 8192 queued (linear 1, quadratic 8)",
	       d, "lower", "1");
	return 0;
}

/* A decimal number in 0 .. @max, or -1. */
static int parse_number(const char *s, int max)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v >= 0 && v <= max ? (int)v : -1;
}

struct options {
	int max_depth;
	int reps;
	int rounds;
	bool heavy, light;
	int only;		/* a variant's index, or -1: all */
};

/* The index of "name:workers" in the variant table, or -1. */
static int variant_index(const char *spec)
{
	for (int i = 0; i < NVARIANTS; i++) {
		const struct variant *v = &variant_table[i];
		size_t len = strlen(v->name);
		char *end;

		if (!strncmp(spec, v->name, len) && spec[len] == ':' &&
		    strtoul(spec + len + 1, &end, 10) == v->workers &&
		    end != spec + len + 1 && !*end)
			return i;
	}
	return -1;
}

/* Fills *@o; returns 0, or -1 for a bad command line. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int max_depth = -2, reps = -2, quick = 0;	/* -2: not given */

	o->rounds = DEFAULT_ROUNDS;
	o->heavy = o->light = true;
	o->only = -1;
	for (int i = 1; i < argc; i++) {
		/* The depth must fit the payload's 8 bits, children's included. */
		if (!strcmp(argv[i], "--max-depth") && i + 1 < argc)
			max_depth = parse_number(argv[++i], DEPTH_MASK);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = parse_number(argv[++i], 1000);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			o->rounds = parse_number(argv[++i], 1 << 20);
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--heavy-only"))
			o->light = false;
		else if (!strcmp(argv[i], "--light-only"))
			o->heavy = false;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
			 (o->only = variant_index(argv[++i])) >= 0)
			;
		else
			return -1;
		if (max_depth == -1 || reps == -1 || !reps || o->rounds == -1)
			return -1;
	}
	if (!o->heavy && !o->light)
		return -1;
	/* --quick only changes what was not given. */
	o->max_depth = max_depth != -2 ? max_depth :
		       quick ? QUICK_MAX_DEPTH : DEFAULT_MAX_DEPTH;
	o->reps = reps != -2 ? reps : quick ? QUICK_REPS : DEFAULT_REPS;
	if (quick)
		light_root_fanout = QUICK_ROOT_FANOUT;
	return 0;
}

/*
 * Times every variant @reps times on @t; 0, or -1 if a run failed or did
 * not match the reference.  The reps go round-robin over the variants, so
 * a burst of load from elsewhere on this shared machine hits one rep of
 * each, not every rep of one.
 */
static int measure_tree(const struct tree *t, struct variant *v, int reps,
			int only)
{
	struct tally ref;

	memcpy(v, variant_table, sizeof(variant_table));
	/* The reference: one untimed plain recursion. */
	run_sequential(t, 1, &ref);
	flat.count = 0;
	flat_collect(t, t->root);
	for (int i = 0; i < NVARIANTS; i++) {
		v[i].best = v[i].cpu = v[i].share_lo = UNMEASURED;
		v[i].worst = v[i].share_hi = 0;
	}
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < NVARIANTS; i++)
			if ((only < 0 || i == SEQ || i == only) &&
			    measure(&v[i], t, &ref))
				return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct variant v[NVARIANTS];
	struct options o;
	struct tree heavy = {
		.name = "heavy", .root = HEAVY_ROOT << DEPTH_BITS,
		.max_fanout = 3, .fanout = heavy_fanout, .child = heavy_child,
		/*
		 * An owner pops its newest item, so its deque holds at most 3
		 * items per level of its path (< 3 x 256 for any depth the
		 * payload can carry).
		 */
		.deque_capacity = 4096,
	};
	struct tree light = {
		.name = "light", .root = LIGHT_ROOT,
		.max_fanout = LIGHT_ROOT_FANOUT, .fanout = light_fanout,
		.child = light_child, .rounds = 0,
		/* The root's group, then at most 7 per level of a path. */
		.deque_capacity = 1 << 20,
	};

	if (parse_options(argc, argv, &o)) {
		fprintf(stderr, "usage: %s [--max-depth N] [--reps N] [--rounds N] [--quick] [--heavy-only | --light-only] [--only VARIANT:WORKERS]\n",
			argv[0]);
		return 2;
	}
	heavy.max_depth = (unsigned)o.max_depth;
	heavy.rounds = (unsigned)o.rounds;
	if (o.heavy) {
		if (measure_tree(&heavy, v, o.reps, o.only))
			return 1;
		print_table(&heavy, v, (unsigned)o.reps);
		if (o.only < 0)
			heavy_results(v);
	}
	if (o.light) {
		if (measure_tree(&light, v, o.reps, o.only))
			return 1;
		print_table(&light, v, (unsigned)o.reps);
		if (o.only < 0)
			light_results(v);
	}
	if (o.only < 0 && cancel_all_result(o.reps))
		return 1;
	free(flat.nodes);
	return 0;
}
