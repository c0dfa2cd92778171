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
 * Variants, each the best of --reps (default 3) wall-clock runs, the reps
 * round-robin over the variants so that load from elsewhere on this shared
 * machine hits one rep of each rather than every rep of one:
 *   sequential    plain recursion, 1 thread: the baseline.  An untimed
 *                 run of it first is the reference that every timed run's
 *                 node count and checksum must equal (else exit 1);
 *   libloom       loom_work_sync_run(), LOOM_WORK_SYNC_THREADED, 1 and 2
 *                 workers: the callback does the work and reports the
 *                 children, the adapter publishes them as one group and
 *                 completes the item;
 *   openmp        one parallel/single region of 1 and 2 threads, a task
 *                 per child, taskwait;
 *   static-split  the same nodes listed beforehand and split statically
 *                 over 2 threads: no scheduler, no tree.  Not a rival, the
 *                 ceiling: it shows what the 2 cores gave during this run.
 *
 * libloom settings.  No replay trace (LOOM_WORK_SYNC_NO_TRACE; a trace
 * records four events per item, bookkeeping OpenMP does not do).
 * deque_capacity 4096: an owner pops its newest item, so its deque holds at
 * most 3 items per level of its path (< 3 x 256 for any depth the payload
 * can carry); a deque too small fails the run (LOOM_WORK_QUEUE_CAPACITY)
 * rather than slowing it, so capacity is not a performance knob.  Nor is max_batch: the synchronous adapter fixes
 * it at 1 (only loom_sched_* and the device adapter can batch).  The
 * callback is the node's work plus at most 3 child hashes.
 *
 * What was measured here (2-vCPU PVM guest, perf stat; numbers vary with
 * the load other tenants put on the machine):
 *   - Per item, with --rounds 0 and 1 worker: libloom ~190 ns, OpenMP
 *     ~63 ns.  ~115 ns of libloom's is first-touch page faults on the
 *     domain's identity records (48 bytes per item, kept for the whole run:
 *     ~39 MB, 11.4k faults per run, ~9 us each in this guest; glibc hands
 *     the memory back between runs).  With glibc told to keep it
 *     (GLIBC_TUNABLES=glibc.malloc.trim_threshold=1000000000:
 *     glibc.malloc.mmap_threshold=1000000000) libloom is ~80 ns per item.
 *   - A system call costs ~1.1 us in this guest (a bare futex wake), more
 *     than a node's work.  With 2 workers every libloom transition
 *     (acquire, publish, complete: three per item) takes the domain's one
 *     mutex, a default pthread mutex that does not spin: each contended
 *     acquisition sleeps in futex_wait and its release calls futex_wake.
 *     That is 120k-410k futex calls and 5k-10k context switches per run of
 *     810k items, plus the lock's and the scheduler's cache lines moving
 *     between the cores on every transition.  The condition variable is not
 *     the problem: the idle worker steals the victim's oldest item (nearest
 *     the root), so there are only ~20 steals and almost no waits per run.
 *     libgomp pays the same way: 270k-460k futex calls per run with 2
 *     threads, 2 with 1.  So at ~0.9 us per node neither runtime gains
 *     much from the second core here: from run to run 2 workers ran at
 *     0.6-1.2x of 1 worker with libloom and 0.6-0.9x with OpenMP, while
 *     static-split got 2.0x.  With --rounds 1024 --max-depth 28 (~3.7 us
 *     per node) libloom's 2 workers ran at ~1.5x of 1 worker, OpenMP's at
 *     ~1.26x, static-split at 2.0x.
 *   - What would help, in lib/: a spinning (or adaptive) domain lock;
 *     completing an item and acquiring the next in one transaction (two
 *     lock round trips per item, not three); identity records allocated in
 *     bigger chunks or recycled across runs.
 *
 * Usage: tree_bench [--max-depth N] [--reps N] [--rounds N] [--quick]
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
#include <time.h>

#include "loom/work.h"

#define ROOT_HASH		0x60000002aULL	/* 0x2a with fan-out 3 */
#define LCG_MUL			6364136223846793005ULL
#define LCG_INC			1442695040888963407ULL
#define DEPTH_BITS		8
#define DEPTH_MASK		((1ULL << DEPTH_BITS) - 1)
#define MAX_FANOUT		3
#define DEFAULT_ROUNDS		256

#define DEFAULT_MAX_DEPTH	30
#define QUICK_MAX_DEPTH		18
#define DEFAULT_REPS		3
#define QUICK_REPS		1

#define MAX_WORKERS		2
#define DEQUE_CAPACITY		4096
#define OCCURRENCE		4	/* any; it only names the domain */

/* ---------------------------------------------------------- the tree --- */

static uint64_t node_pack(uint64_t hash, uint64_t depth)
{
	return hash << DEPTH_BITS | depth;
}

static uint64_t node_hash(uint64_t node)
{
	return node >> DEPTH_BITS;
}

static uint64_t node_depth(uint64_t node)
{
	return node & DEPTH_MASK;
}

/* Writes @node's children to @out (MAX_FANOUT slots); returns how many. */
static unsigned node_children(uint64_t node, unsigned max_depth, uint64_t *out)
{
	uint64_t hash = node_hash(node), depth = node_depth(node);
	unsigned n;

	if (depth >= max_depth)
		return 0;
	n = (unsigned)((hash >> 33) % 4);
	for (unsigned k = 0; k < n; k++)
		out[k] = node_pack((hash + k) * LCG_MUL + LCG_INC, depth + 1);
	return n;
}

static unsigned work_rounds = DEFAULT_ROUNDS;	/* --rounds */

/* The synthetic per-node work: a dependent chain the compiler must run. */
static uint64_t node_work(uint64_t node)
{
	uint64_t x = node;

	for (unsigned i = 0; i < work_rounds; i++) {
		x ^= x >> 30;
		x *= 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 27;
		x *= 0x94d049bb133111ebULL;
		x ^= x >> 31;
	}
	return x;
}

/* ----------------------------------------------------------- tallies --- */

/* What one worker visited; padded so two workers never share a line. */
struct tally {
	uint64_t nodes;
	uint64_t checksum;
} __attribute__((aligned(64)));

static void tally_visit(struct tally *t, uint64_t node)
{
	t->nodes++;
	t->checksum += node_work(node);
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
typedef int (*variant_fn)(unsigned max_depth, unsigned workers,
			  struct tally *out);

/* -------------------------------------------------------- sequential --- */

static void seq_visit(uint64_t node, unsigned max_depth, struct tally *t)
{
	uint64_t kids[MAX_FANOUT];
	unsigned n;

	tally_visit(t, node);
	n = node_children(node, max_depth, kids);
	for (unsigned k = 0; k < n; k++)
		seq_visit(kids[k], max_depth, t);
}

static int run_sequential(unsigned max_depth, unsigned workers,
			  struct tally *out)
{
	(void)workers;
	memset(out, 0, sizeof(*out));
	seq_visit(node_pack(ROOT_HASH, 0), max_depth, out);
	return 0;
}

/* ----------------------------------------------------------- libloom --- */

struct loom_run {
	unsigned max_depth;
	struct tally slots[MAX_WORKERS];	/* indexed by item->worker */
};

static enum loom_work_sync_verdict
loom_visit(void *ctx, const struct loom_sched_item *item, uint64_t *children,
	   size_t capacity, size_t *count)
{
	struct loom_run *run = ctx;

	(void)capacity;		/* child_capacity is MAX_FANOUT */
	tally_visit(&run->slots[item->worker], item->payload);
	*count = node_children(item->payload, run->max_depth, children);
	return LOOM_WORK_SYNC_CHILDREN;
}

static uint64_t last_loom_steals;	/* of the latest libloom run, for the table */

static int run_libloom(unsigned max_depth, unsigned workers, struct tally *out)
{
	struct loom_work_sync_config config = {
		.occurrence = OCCURRENCE,
		.root_payload = node_pack(ROOT_HASH, 0),
		.workers = workers,
		.deque_capacity = DEQUE_CAPACITY,
		.child_capacity = MAX_FANOUT,
		.flags = LOOM_WORK_SYNC_THREADED | LOOM_WORK_SYNC_NO_TRACE,
	};
	struct loom_run run = { .max_depth = max_depth };
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
	completed = result.items_completed;
	last_loom_steals = result.steals;
	loom_work_sync_result_free(&result);
	if (completed != out->nodes) {
		fprintf(stderr, "tree_bench: libloom completed %llu items, callbacks saw %llu\n",
			(unsigned long long)completed,
			(unsigned long long)out->nodes);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ OpenMP --- */

static void omp_visit(uint64_t node, unsigned max_depth, struct tally *slots)
{
	uint64_t kids[MAX_FANOUT];
	unsigned n;

	tally_visit(&slots[omp_get_thread_num()], node);
	n = node_children(node, max_depth, kids);
	for (unsigned k = 0; k < n; k++) {
		uint64_t child = kids[k];

#pragma omp task default(none) firstprivate(child, max_depth, slots)
		omp_visit(child, max_depth, slots);
	}
#pragma omp taskwait
}

static int run_openmp(unsigned max_depth, unsigned workers, struct tally *out)
{
	struct tally slots[MAX_WORKERS] = { 0 };
	int team = 0;

	/* Exactly @workers threads: no dynamic shrinking of the team. */
	omp_set_dynamic(0);
	omp_set_num_threads((int)workers);
#pragma omp parallel default(none) shared(max_depth, slots, team)
#pragma omp single
	{
		team = omp_get_num_threads();
		omp_visit(node_pack(ROOT_HASH, 0), max_depth, slots);
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

static void flat_collect(uint64_t node, unsigned max_depth)
{
	uint64_t kids[MAX_FANOUT];
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
	n = node_children(node, max_depth, kids);
	for (unsigned k = 0; k < n; k++)
		flat_collect(kids[k], max_depth);
}

static int run_static_split(unsigned max_depth, unsigned workers,
			    struct tally *out)
{
	struct tally slots[MAX_WORKERS] = { 0 };

	(void)max_depth;	/* flat already holds the tree */
	omp_set_dynamic(0);
	omp_set_num_threads((int)workers);
#pragma omp parallel for schedule(static) default(none) shared(flat, slots)
	for (size_t i = 0; i < flat.count; i++)
		tally_visit(&slots[omp_get_thread_num()], flat.nodes[i]);
	*out = tally_sum(slots, workers);
	return 0;
}

/* ------------------------------------------------------------ driver --- */

struct variant {
	const char *name;
	unsigned workers;
	variant_fn run;
	double best;		/* seconds */
	struct tally result;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One timed run, which must match @ref; keeps the best time. */
static int measure(struct variant *v, unsigned max_depth,
		   const struct tally *ref)
{
	double t = now();

	if (v->run(max_depth, v->workers, &v->result))
		return -1;
	t = now() - t;
	if (v->result.nodes != ref->nodes ||
	    v->result.checksum != ref->checksum) {
		fprintf(stderr, "tree_bench: %s, %u worker(s): %llu nodes, checksum %016llx; the reference has %llu nodes, checksum %016llx\n",
			v->name, v->workers,
			(unsigned long long)v->result.nodes,
			(unsigned long long)v->result.checksum,
			(unsigned long long)ref->nodes,
			(unsigned long long)ref->checksum);
		return -1;
	}
	if (t < v->best)
		v->best = t;
	return 0;
}

static double rate(const struct variant *v)
{
	return v->result.nodes / v->best;
}

static void print_table(const struct variant *v, size_t n, unsigned max_depth,
			unsigned reps)
{
	printf("tree: root hash 0x%llx, max_depth %u, %llu nodes, %u hash rounds per node; best of %u\n",
	       (unsigned long long)ROOT_HASH, max_depth,
	       (unsigned long long)v[0].result.nodes, work_rounds, reps);
	printf("%-12s %7s %10s %10s %12s %7s\n", "variant", "workers",
	       "nodes", "ms", "nodes/s", "vs seq");
	for (size_t i = 0; i < n; i++)
		printf("%-12s %7u %10llu %10.1f %12.0f %6.2fx\n", v[i].name,
		       v[i].workers, (unsigned long long)v[i].result.nodes,
		       v[i].best * 1e3, rate(&v[i]), rate(&v[i]) / rate(&v[0]));
}

static void print_ratio(const struct variant *loom, const struct variant *omp)
{
	printf("RESULT\tP4\t%.3f\tlibloom kernel+scheduler / OpenMP tasks, %u worker%s (nodes/s)\tlibloom %.0f nodes/s, OpenMP %.0f nodes/s, %llu nodes\n",
	       rate(loom) / rate(omp), loom->workers,
	       loom->workers == 1 ? "" : "s", rate(loom), rate(omp),
	       (unsigned long long)loom->result.nodes);
}

static void print_scaling(const struct variant *one, const struct variant *two)
{
	printf("RESULT\tP4\t%.3f\tlibloom kernel+scheduler, 2 workers / 1 worker (nodes/s)\t2 workers %.0f nodes/s, 1 worker %.0f nodes/s, %llu nodes\n",
	       rate(two) / rate(one), rate(two), rate(one),
	       (unsigned long long)one->result.nodes);
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
};

/* Fills *@o; returns 0, or -1 for a bad command line. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int max_depth = -2, reps = -2, quick = 0;	/* -2: not given */

	o->rounds = DEFAULT_ROUNDS;
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
		else
			return -1;
		if (max_depth == -1 || reps == -1 || !reps || o->rounds == -1)
			return -1;
	}
	/* --quick only changes what was not given. */
	o->max_depth = max_depth != -2 ? max_depth :
		       quick ? QUICK_MAX_DEPTH : DEFAULT_MAX_DEPTH;
	o->reps = reps != -2 ? reps : quick ? QUICK_REPS : DEFAULT_REPS;
	return 0;
}

/* Indices into the variant table in main(). */
enum { SEQ, LOOM1, LOOM2, OMP1, OMP2, SPLIT2, NVARIANTS };

/*
 * Times every variant @o->reps times; 0, or -1 if a run failed or did not
 * match @ref.  The reps go round-robin over the variants, so a burst of
 * load from elsewhere on this shared machine hits one rep of each, not
 * every rep of one.
 */
static int measure_all(struct variant *v, const struct options *o,
		       const struct tally *ref, uint64_t *steals)
{
	for (int i = 0; i < NVARIANTS; i++)
		v[i].best = 1e30;
	for (int r = 0; r < o->reps; r++) {
		for (int i = 0; i < NVARIANTS; i++) {
			if (measure(&v[i], (unsigned)o->max_depth, ref))
				return -1;
			if (v[i].run == run_libloom)
				steals[v[i].workers] = last_loom_steals;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct variant v[NVARIANTS] = {
		[SEQ] = { "sequential", 1, run_sequential },
		[LOOM1] = { "libloom", 1, run_libloom },
		[LOOM2] = { "libloom", 2, run_libloom },
		[OMP1] = { "openmp", 1, run_openmp },
		[OMP2] = { "openmp", 2, run_openmp },
		[SPLIT2] = { "static-split", 2, run_static_split },
	};
	uint64_t steals[MAX_WORKERS + 1] = { 0 };
	struct options o;
	struct tally ref;

	if (parse_options(argc, argv, &o)) {
		fprintf(stderr, "usage: %s [--max-depth N] [--reps N] [--rounds N] [--quick]\n",
			argv[0]);
		return 2;
	}
	work_rounds = (unsigned)o.rounds;
	/* The reference: one untimed plain recursion. */
	run_sequential((unsigned)o.max_depth, 1, &ref);
	flat_collect(node_pack(ROOT_HASH, 0), (unsigned)o.max_depth);
	if (measure_all(v, &o, &ref, steals))
		return 1;
	print_table(v, NVARIANTS, (unsigned)o.max_depth, (unsigned)o.reps);
	printf("libloom steals (last run): %llu with 1 worker, %llu with 2\n",
	       (unsigned long long)steals[1], (unsigned long long)steals[2]);
	print_ratio(&v[LOOM1], &v[OMP1]);
	print_ratio(&v[LOOM2], &v[OMP2]);
	print_scaling(&v[LOOM1], &v[LOOM2]);
	free(flat.nodes);
	return 0;
}
