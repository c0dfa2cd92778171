// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * work_bench: benchmark P3 of issue 7, run in the test VM on the real
 * driver and device.  A dynamic tree of TREE_ITEMS work items (the
 * complete binary tree of depth TREE_DEPTH, @tree in work_bench.loom)
 * drained by loom_work_device_run(), against the same number of instances
 * as one dense launch (@dense).  Both store out[v] = v * mul + 1, so what
 * differs is the cost of dynamic work: per item a slot of a (pipelined)
 * items dispatch, a result record and a trip through the host scheduler,
 * against one pipelined dense instance.
 *
 * The tree is drained with 1 and 2 workers (the VM has one vCPU, so a
 * second worker buys a second device core, not host parallelism) and
 * batches of 64, 256 and 1024 items, once through the device's work stack
 * (LOOM_PKT_RUN_WORK: a packet drains a subtree of up to 16384 items) and
 * once through items dispatches (one dispatch per batch); the best is
 * compared with the dense launch, and so is the best items-dispatch run.  For context, every node of the tree is also run
 * as one items dispatch without the scheduler (loom_launch_items): the
 * device's share of the dynamic cost, with its cycle counters.
 *
 * Times are wall clock (CLOCK_MONOTONIC), best of REPS, of the whole call:
 * loom_work_device_run() with its scheduler, rings and BOs; a launch and
 * its token wait.  Every run is checked: no failure, the item count is the
 * tree's size, and each slot of out holds its own value, written with a
 * multiplier fresh for the run into a zeroed buffer (so every node ran,
 * and ran in this run).
 *
 * Usage: work_bench [image.lcb]   (default /data/work_bench.lcb, the image
 * loomc --fabric 8x8 makes of bench/vm/work_bench.loom)
 * Prints a table, then "RESULT\tP3\t<ratio>\t<label>\t<detail>\thigher\t<goal>"
 * lines (goal 0.5 for the dynamic tree's items/s and for its items per
 * device cycle, issue 14; "-" for the device's share) and "N passed, N
 * failed"; exits 1 on any failed check.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom.h"
#include "loom_device.h"

#define TREE_DEPTH	17
#define TREE_ITEMS	((1u << TREE_DEPTH) - 1)	/* 131071 */
#define CHILD_CAP	2	/* @tree's loom.child_capacity */
#define REPS		2
/* No rep is started past this many seconds (the whole VM run is ~90 s). */
#define TIME_BUDGET	30.0
#define SEC		1000000000LL
#define DEFAULT_IMAGE	"/data/work_bench.lcb"

static const uint32_t worker_counts[] = { 1, 2 };
static const uint32_t batch_sizes[] = { 64, 256, 1024 };
/* loom_work_device_config.flags: the work stack, then items dispatches */
static const uint32_t modes[] = { 0, LOOM_WORK_DEVICE_ITEMS_ONLY };
static const char *const mode_names[] = { "work stack", "items" };

#define N_WORKERS	(sizeof(worker_counts) / sizeof(worker_counts[0]))
#define N_BATCHES	(sizeof(batch_sizes) / sizeof(batch_sizes[0]))
#define N_MODES		(sizeof(modes) / sizeof(modes[0]))

static unsigned passed, failed;

static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		return true;
	}
	failed++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return false;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct bench {
	struct loom_device *dev;
	struct loom_image *img;
	struct loom_bo *out;		/* TREE_ITEMS i64 slots */
	struct loom_bo *payloads;	/* 0 .. TREE_ITEMS - 1, for the items row */
	struct loom_bo *records;	/* TREE_ITEMS item records */
	int64_t *slot;
	int64_t mul;			/* bumped for every run */
};

/* One configuration: its best rep. */
struct measure {
	double best;		/* seconds */
	uint64_t items;		/* 0 until a rep passed its checks */
	uint64_t jobs;		/* dispatches */
	uint64_t steals;
	uint64_t cycles;	/* single-job runs: device cycles of the job */
};

static void measure_init(struct measure *m)
{
	memset(m, 0, sizeof(*m));
	m->best = 1e30;
}

static double rate(const struct measure *m)
{
	return m->items ? m->items / m->best : 0;
}

static void keep_best(struct measure *m, double t, uint64_t jobs,
		      uint64_t steals, uint64_t cycles)
{
	if (t >= m->best)
		return;
	*m = (struct measure){ t, TREE_ITEMS, jobs, steals, cycles };
}

/*
 * A fresh multiplier and a zeroed buffer before each run, so a slot the
 * run did not write, or one an earlier run left, is caught.
 */
static void prepare(struct bench *b)
{
	b->mul++;
	memset(b->slot, 0, sizeof(int64_t) * TREE_ITEMS);
}

static bool check_slots(const struct bench *b, const char *what)
{
	unsigned first = 0, bad = 0;

	for (unsigned v = TREE_ITEMS; v-- > 0;) {
		if (b->slot[v] != (int64_t)v * b->mul + 1) {
			bad++;
			first = v;
		}
	}
	return check(!bad, "%s: %u of %u slots wrong, first out[%u] = %lld, want %lld",
		     what, bad, TREE_ITEMS, first, (long long)b->slot[first],
		     (long long)first * b->mul + 1);
}

/* @tree's signature; the work item's value is ignored (payloads feed it). */
static void tree_args(const struct bench *b, struct loom_arg args[4])
{
	args[0] = (struct loom_arg){ LOOM_ARG_I64, 0 };
	args[1] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(b->out) };
	args[2] = (struct loom_arg){ LOOM_ARG_I64, (uint64_t)b->mul };
	args[3] = (struct loom_arg){ LOOM_ARG_I64, TREE_ITEMS };
}

/* Drains the tree once from root 0. */
static void tree_once(struct bench *b, unsigned mode, uint32_t workers,
		      uint32_t batch, unsigned rep, struct measure *m)
{
	struct loom_device *devs[1] = { b->dev };
	struct loom_arg args[4];
	struct loom_work_device_config c = {
		.root_payload = 0,
		.image = b->img, .thread = "tree", .args = args, .n_args = 4,
		.devices = devs, .n_devices = 1, .sched.workers = workers,
		/* every item queued at once still fits */
		.sched.deque_capacity = TREE_ITEMS, .sched.max_batch = batch,
		.sched.flags = LOOM_SCHED_NO_TRACE, .flags = modes[mode],
	};
	struct loom_work_device_result r;
	enum loom_error err;
	char what[64];
	double t;
	bool ok;

	snprintf(what, sizeof(what), "tree, %s, %u worker(s), batch %u, rep %u",
		 mode_names[mode], workers, batch, rep);
	prepare(b);
	tree_args(b, args);
	t = now();
	err = loom_work_device_run(&c, &r);
	t = now() - t;
	if (err == LOOM_WORK_INVALID_ARGUMENT) {
		check(false, "%s: %s", what, loom_strerror(err));
		return;
	}
	ok = check(err == LOOM_OK && !r.work.failed && !r.device_error,
		   "%s: %s (device error: %s)", what, loom_strerror(err),
		   loom_strerror(r.device_error));
	ok &= check(r.work.items_run == TREE_ITEMS &&
		    r.work.items_completed == TREE_ITEMS &&
		    r.work.children_published == TREE_ITEMS - 1 &&
		    !r.work.items_cancelled,
		    "%s: %llu items run, %llu completed, %llu cancelled, %llu "
		    "children published; want %u, %u, 0, %u", what,
		    (unsigned long long)r.work.items_run,
		    (unsigned long long)r.work.items_completed,
		    (unsigned long long)r.work.items_cancelled,
		    (unsigned long long)r.work.children_published,
		    TREE_ITEMS, TREE_ITEMS, TREE_ITEMS - 1);
	ok &= check_slots(b, what);
	if (ok)
		keep_best(m, t, r.jobs_submitted, r.work.steals, 0);
	loom_work_device_result_free(&r);
}

/* Launches @thread (a dense one if @items is 0) and waits for it. */
static int launch_wait(struct bench *b, const char *thread,
		       const struct loom_arg *args, unsigned n_args,
		       uint32_t items, double *t, struct loom_hw_counters *cnt)
{
	const int64_t extent = TREE_ITEMS;
	struct loom_token *tok;
	int ret;

	*t = now();
	if (items)
		ret = loom_launch_items(b->dev, b->img, thread, args, n_args,
					items, loom_bo_va(b->payloads),
					loom_bo_va(b->records), NULL, 0, 0, &tok);
	else
		ret = loom_launch_dense(b->dev, b->img, thread, args, n_args,
					&extent, 1, NULL, 0, 0, &tok);
	if (ret)
		return ret;
	ret = loom_token_wait(tok, 60 * SEC);
	*t = now() - *t;
	/* read after the clock stopped: context, not part of the launch */
	if (!ret)
		ret = loom_token_counters(tok, cnt);
	loom_token_free(tok);
	return ret;
}

/* One dense launch over [0, TREE_ITEMS). */
static void dense_once(struct bench *b, unsigned rep, struct measure *m)
{
	struct loom_hw_counters cnt;
	struct loom_arg args[2];
	char what[32];
	double t = 0;
	int ret;
	bool ok;

	snprintf(what, sizeof(what), "dense, rep %u", rep);
	prepare(b);
	args[0] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(b->out) };
	args[1] = (struct loom_arg){ LOOM_ARG_I64, (uint64_t)b->mul };
	ret = launch_wait(b, "dense", args, 2, 0, &t, &cnt);
	if (!check(!ret, "%s: %s", what, loom_strerror(ret)))
		return;
	ok = check(cnt.instances == TREE_ITEMS, "%s: %llu instances, want %u",
		   what, (unsigned long long)cnt.instances, TREE_ITEMS);
	ok &= check_slots(b, what);
	if (ok)
		keep_best(m, t, 1, 0, cnt.cycles);
}

/* Item v's record: the children heap order gives it. */
static bool check_records(const struct bench *b, const char *what)
{
	const uint8_t *base = loom_bo_map(b->records);
	unsigned bad = 0, first = 0;

	for (unsigned v = TREE_ITEMS; v-- > 0;) {
		const struct loom_item_result *r = (const void *)
			(base + v * LOOM_ITEM_RESULT_SIZE(CHILD_CAP));
		uint64_t left = 2ULL * v + 1;
		bool inner = left < TREE_ITEMS;

		if (r->child_count != (inner ? 2u : 0u) ||
		    (inner && (r->children[0] != left ||
			       r->children[1] != left + 1))) {
			bad++;
			first = v;
		}
	}
	return check(!bad, "%s: %u of %u item records wrong, first item %u",
		     what, bad, TREE_ITEMS, first);
}

/*
 * Every node as one items dispatch of @tree, children reported but not
 * scheduled: what the device alone takes for the dynamic run's items.
 */
static void items_once(struct bench *b, unsigned rep, struct measure *m)
{
	struct loom_hw_counters cnt;
	struct loom_arg args[4];
	char what[32];
	double t = 0;
	int ret;
	bool ok;

	snprintf(what, sizeof(what), "items dispatch, rep %u", rep);
	prepare(b);
	/* all ones: a record the device did not write is caught */
	memset(loom_bo_map(b->records), 0xff, loom_bo_size(b->records));
	tree_args(b, args);
	ret = launch_wait(b, "tree", args, 4, TREE_ITEMS, &t, &cnt);
	if (!check(!ret, "%s: %s", what, loom_strerror(ret)))
		return;
	ok = check(cnt.items == TREE_ITEMS && cnt.spawns == TREE_ITEMS - 1,
		   "%s: %llu items, %llu spawns counted, want %u and %u", what,
		   (unsigned long long)cnt.items, (unsigned long long)cnt.spawns,
		   TREE_ITEMS, TREE_ITEMS - 1);
	ok &= check_records(b, what);
	ok &= check_slots(b, what);
	if (ok)
		keep_best(m, t, 1, 0, cnt.cycles);
}

static int open_all(struct bench *b, const char *path)
{
	const struct loom_device_info *info;
	uint64_t *pay;
	unsigned w, h;
	int ret;

	ret = loom_image_load_file(path, &b->img);
	if (ret) {
		printf("work_bench: %s: %s\n", path, loom_strerror(ret));
		return ret;
	}
	ret = loom_device_open_first(&b->dev);
	if (ret) {
		printf("work_bench: no loom device: %s\n", loom_strerror(ret));
		return ret;
	}
	info = loom_device_info(b->dev);
	loom_image_fabric(b->img, &w, &h);
	printf("device %s: %u cores, fabric %ux%u; image fabric %ux%u\n",
	       info->path, info->num_cores, info->fabric_width,
	       info->fabric_height, w, h);
	if (w != info->fabric_width || h != info->fabric_height) {
		printf("work_bench: start the VM with --device-opts \",fabric=%ux%u\"\n",
		       w, h);
		return LOOM_E_FABRIC_MISMATCH;
	}
	ret = loom_bo_alloc(b->dev, sizeof(int64_t) * TREE_ITEMS, 0, &b->out);
	if (!ret)
		ret = loom_bo_alloc(b->dev, sizeof(uint64_t) * TREE_ITEMS,
				    LOOM_BO_DEVICE_READ_ONLY, &b->payloads);
	if (!ret)
		ret = loom_bo_alloc(b->dev, LOOM_ITEM_RESULT_SIZE(CHILD_CAP) * TREE_ITEMS,
				    0, &b->records);
	if (ret) {
		printf("work_bench: BO: %s\n", loom_strerror(ret));
		return ret;
	}
	b->slot = loom_bo_map(b->out);
	pay = loom_bo_map(b->payloads);
	for (unsigned v = 0; v < TREE_ITEMS; v++)
		pay[v] = v;
	return 0;
}

static void close_all(struct bench *b)
{
	loom_bo_free(b->records);
	loom_bo_free(b->payloads);
	loom_bo_free(b->out);
	loom_device_close(b->dev);
	loom_image_free(b->img);
}

static void print_row(const char *name, const struct measure *m,
		      const struct measure *dense)
{
	if (!m->items) {
		printf("%-44s  %9s  %10s  %10s  %6s  %8s\n", name, "-", "-", "-",
		       "-", "failed");
		return;
	}
	printf("%-44s  %9.1f  %10.0f  %10llu  %6llu  %8.4f\n", name,
	       m->best * 1e3, rate(m), (unsigned long long)m->jobs,
	       (unsigned long long)m->steals,
	       rate(dense) ? rate(m) / rate(dense) : 0);
}

static const char *plural(uint32_t n)
{
	return n == 1 ? "" : "s";
}

/* The fastest tree run of @mode, or NULL: *@tw, *@tb its configuration. */
static const struct measure *
best_tree(struct measure tree[N_MODES][N_WORKERS][N_BATCHES], unsigned mode,
	  unsigned *tw, unsigned *tb)
{
	const struct measure *top = NULL;

	for (unsigned i = 0; i < N_WORKERS; i++) {
		for (unsigned j = 0; j < N_BATCHES; j++) {
			const struct measure *m = &tree[mode][i][j];

			if (m->items && (!top || rate(m) > rate(top))) {
				top = m;
				*tw = i;
				*tb = j;
			}
		}
	}
	return top;
}

static void result_line(const char *label, const struct measure *top,
			unsigned tw, unsigned tb, const struct measure *dense)
{
	printf("RESULT\tP3\t%.3f\t%s\t"
	       "dynamic %.0f items/s (%llu items, %llu dispatches, %u worker%s, "
	       "batch %u), dense %.0f items/s (%llu device cycles)\thigher\t0.5\n",
	       rate(top) / rate(dense), label, rate(top),
	       (unsigned long long)top->items, (unsigned long long)top->jobs,
	       worker_counts[tw], plural(worker_counts[tw]), batch_sizes[tb],
	       rate(dense), (unsigned long long)dense->cycles);
}

static void report(struct measure tree[N_MODES][N_WORKERS][N_BATCHES],
		   const struct measure *dense, const struct measure *items,
		   unsigned reps)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const struct measure *top, *old;
	unsigned tw = 0, tb = 0, ow = 0, ob = 0;
	char name[64];

	printf("\nP3: complete binary tree of depth %u (%u items) vs one dense "
	       "launch of %u instances\n(wall clock, best of %u, %ld guest CPU%s)\n",
	       TREE_DEPTH, TREE_ITEMS, TREE_ITEMS, reps, ncpu, ncpu == 1 ? "" : "s");
	printf("%-44s  %9s  %10s  %10s  %6s  %8s\n", "run", "ms", "items/s",
	       "dispatches", "steals", "vs dense");
	for (unsigned k = 0; k < N_MODES; k++) {
		for (unsigned i = 0; i < N_WORKERS; i++) {
			for (unsigned j = 0; j < N_BATCHES; j++) {
				snprintf(name, sizeof(name),
					 "dynamic, %s, %u worker%s, batch %u",
					 mode_names[k], worker_counts[i],
					 plural(worker_counts[i]), batch_sizes[j]);
				print_row(name, &tree[k][i][j], dense);
			}
		}
	}
	print_row("dense, one launch", dense, dense);
	print_row("items, one dispatch, no sched", items, dense);
	if (dense->items)
		printf("dense job: %llu device cycles, %.2f per instance\n",
		       (unsigned long long)dense->cycles,
		       (double)dense->cycles / TREE_ITEMS);
	if (items->items)
		printf("items job: %llu device cycles, %.2f per item\n",
		       (unsigned long long)items->cycles,
		       (double)items->cycles / TREE_ITEMS);
	top = best_tree(tree, 0, &tw, &tb);
	old = best_tree(tree, 1, &ow, &ob);
	if (!dense->items)
		return;
	if (top)
		printf("best dynamic: work stack, %u worker%s, batch %u, %.4f of "
		       "the dense launch's items/s (dense %.1fx faster)\n\n",
		       worker_counts[tw], plural(worker_counts[tw]),
		       batch_sizes[tb], rate(top) / rate(dense),
		       rate(dense) / rate(top));
	if (top)
		result_line("dynamic tree through the device's work stack / one "
			    "dense launch (items/s)", top, tw, tb, dense);
	if (old)
		result_line("the same through items dispatches, one per batch / "
			    "one dense launch (items/s)", old, ow, ob, dense);
	if (items->items)
		printf("RESULT\tP3\t%.3f\tone items dispatch of every node, no "
		       "scheduler / one dense launch (items/s): the device's share\t"
		       "items %.0f items/s (%llu items, %llu device cycles), dense "
		       "%.0f items/s (%llu device cycles)\thigher\t-\n",
		       rate(items) / rate(dense), rate(items),
		       (unsigned long long)items->items,
		       (unsigned long long)items->cycles, rate(dense),
		       (unsigned long long)dense->cycles);
	/*
	 * What the hardware would see (items per device cycle), and what the
	 * simulation adds on top: its time per cycle grows with the graph it
	 * steps (PEs and route hops), and @tree's is the larger.
	 */
	if (items->items && items->cycles && dense->cycles)
		printf("RESULT\tP3\t%.3f\tthe same in device cycles: items per "
		       "cycle of one items dispatch / of the dense launch\t"
		       "%llu / %llu cycles; the simulator took %.3f / %.3f us "
		       "per device cycle\thigher\t0.5\n",
		       (double)dense->cycles / items->cycles,
		       (unsigned long long)dense->cycles,
		       (unsigned long long)items->cycles,
		       items->best * 1e6 / items->cycles,
		       dense->best * 1e6 / dense->cycles);
}

/*
 * One rep of every configuration.  Reps go round the configurations, so a
 * burst of load on the (shared, 2-core) host spoils one rep of several
 * rather than every rep of one.
 */
static void one_rep(struct bench *b, unsigned rep,
		    struct measure tree[N_MODES][N_WORKERS][N_BATCHES],
		    struct measure *dense, struct measure *items)
{
	dense_once(b, rep, dense);
	items_once(b, rep, items);
	for (unsigned k = 0; k < N_MODES; k++)
		for (unsigned i = 0; i < N_WORKERS; i++)
			for (unsigned j = 0; j < N_BATCHES; j++)
				tree_once(b, k, worker_counts[i], batch_sizes[j],
					  rep, &tree[k][i][j]);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : DEFAULT_IMAGE;
	struct measure tree[N_MODES][N_WORKERS][N_BATCHES], dense, items;
	struct bench b = { 0 };
	double start = now();
	unsigned reps = 0;
	int ret;

	measure_init(&dense);
	measure_init(&items);
	for (unsigned k = 0; k < N_MODES; k++)
		for (unsigned i = 0; i < N_WORKERS; i++)
			for (unsigned j = 0; j < N_BATCHES; j++)
				measure_init(&tree[k][i][j]);
	ret = open_all(&b, path);
	if (check(!ret, "setup: %s", loom_strerror(ret))) {
		/*
		 * The first launch of a thread also uploads its configuration
		 * (once per device and image): best of REPS leaves that out.
		 */
		while (reps < REPS && now() - start < TIME_BUDGET)
			one_rep(&b, reps++, tree, &dense, &items);
		report(tree, &dense, &items, reps);
		printf("work_bench: %u reps, %.1f s\n", reps, now() - start);
	}
	close_all(&b);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
