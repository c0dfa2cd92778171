// SPDX-License-Identifier: GPL-2.0
/*
 * work_vm_test: the device adapter against the real driver and device.
 * A tree of a few hundred nodes with irregular fanout is traversed on the
 * device by the tree-spawner configuration (payload = node index, operand
 * 0 = the child table) and on the host by the synchronous adapter with a
 * plain C callback over the same table; the visited sets and the
 * (WorkItemId, payload) pairs must be identical, for 1, 2 and 4 workers on
 * one device and on two devices.  Child-capacity overflow fails the run
 * naming the item, without hanging; the collective token orders later
 * device work and is awaited through io_uring; items launches are checked
 * like dense ones.  A result record rewritten after its job completed
 * changes nothing: what is checked is what is published.  A cancel that
 * reaches a work-stack job while it runs loses nothing the device ran:
 * every such item is acquired and retired exactly once.  A run on two
 * devices takes one capture list: the table and the marker's buffer are
 * shared between the devices (loom_bo_share()), every item's store lands
 * in the one buffer, and a capture that is not shared is refused, typed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "configs.h"
#include "loom/loom.h"
#include "loom_format.h"
#include "image_util.h"
#include "loom_device.h"

#define SEC		1000000000LL
#define N_NODES		300
#define MAX_NODES	131071
#define MAX_FANOUT	6

/* node n: children first[n] .. first[n] + count[n] - 1 */
static int64_t first_child[MAX_NODES], child_count[MAX_NODES];
/* The tree's size: N_NODES but in work_stack_trees_match_host. */
static int64_t n_nodes = N_NODES;

/* Irregular fanout 0..MAX_FANOUT, breadth-first numbering, all reachable. */
static void gen_tree(void)
{
	loom_test_tree_gen(first_child, child_count, n_nodes, MAX_FANOUT, 12345);
}

static const enum loom_arg_type tree_sig[2] = { LOOM_ARG_MEMREF_I64, LOOM_ARG_I64 };
static const enum loom_arg_type tree32_sig[2] = { LOOM_ARG_MEMREF_I64, LOOM_ARG_I32 };
static const enum loom_arg_type mark_sig[3] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_I64, LOOM_ARG_MEMREF_I64 };
static const enum loom_arg_type vadd_sig[3] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64 };

/*
 * "tree": capacity MAX_FANOUT; "tree_small": MAX_FANOUT - 1 (some nodes
 * overflow it); "tree32": "tree" with an i32 work item; "mark": "tree"
 * that also stores at cell n of operand 2 the cell's own VA; "vadd": a
 * dense thread.  Operand 0 is the table, the work-item argument is 1.
 */
static struct loom_image *test_image(const struct loom_device_info *info)
{
	static unsigned char cfg[3][16384];
	size_t n0, n1, n2;
	struct loom_image_builder *b;

	n0 = loom_test_config_tree_spawner(cfg[0], sizeof(cfg[0]),
					   info->fabric_width, info->fabric_height);
	n1 = loom_test_config_vector_add(cfg[1], sizeof(cfg[1]),
					 info->fabric_width, info->fabric_height);
	n2 = loom_test_config_tree_marker(cfg[2], sizeof(cfg[2]),
					  info->fabric_width, info->fabric_height);
	if (!n0 || !n1 || !n2 ||
	    loom_builder_new(info->fabric_width, info->fabric_height, &b))
		return NULL;
	return loom_test_load_built(b,
		!loom_builder_add_dynamic(b, "tree", tree_sig, 2, 1, MAX_FANOUT, cfg[0], n0) &&
		!loom_builder_add_dynamic(b, "tree_small", tree_sig, 2, 1, MAX_FANOUT - 1,
					  cfg[0], n0) &&
		!loom_builder_add_dynamic(b, "tree32", tree32_sig, 2, 1, MAX_FANOUT,
					  cfg[0], n0) &&
		!loom_builder_add_dynamic(b, "mark", mark_sig, 3, 1, MAX_FANOUT,
					  cfg[2], n2) &&
		!loom_builder_add_dense(b, "vadd", 1, vadd_sig, 3, cfg[1], n1));
}

/*
 * One device with the child table uploaded, and on the second device of a
 * run the share of the first's table (device-writable: a device-read-only
 * BO is not shared).
 */
struct devctx {
	struct loom_device *dev;
	struct loom_bo *table;
	struct loom_bo *shared_table;
	struct loom_arg args[2];
};

static int devctx_open(struct devctx *d, unsigned nth)
{
	int64_t *t;
	int ret = loom_device_open_nth(nth, &d->dev);

	if (ret)
		return ret;
	d->shared_table = NULL;
	ret = loom_bo_alloc(d->dev, MAX_NODES * 16, 0, &d->table);
	if (ret)
		return ret;
	t = loom_bo_map(d->table);
	for (int n = 0; n < n_nodes; n++) {
		t[2 * n] = first_child[n];
		t[2 * n + 1] = child_count[n];
	}
	d->args[0] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(d->table) };
	d->args[1] = (struct loom_arg){ LOOM_ARG_I64, 0 };	/* the work item */
	return 0;
}

/* Gives @d[1] the share of @d[0]'s table: one capture list serves both. */
static int devctx_share(struct devctx *d)
{
	return loom_bo_share(d[0].table, d[1].dev, &d[1].shared_table);
}

static void devctx_close(struct devctx *d)
{
	loom_bo_free(d->shared_table);
	loom_bo_free(d->table);
	loom_device_close(d->dev);
}

/* ------------------------------------------------- what a run visited --- */

struct pair {
	struct loom_item_id id;
	uint64_t payload;
};

struct visits {
	pthread_mutex_t lock;
	struct pair pairs[2 * MAX_NODES];
	size_t n;
	unsigned count[MAX_NODES];
	unsigned bad_payload, bad_children;
	unsigned by_worker[8];
};

static void visits_init(struct visits *v)
{
	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->lock, NULL);
}

/* Records @item and checks @children against the table. */
static void visit(struct visits *v, const struct loom_sched_item *item,
		  const uint64_t *children, size_t count)
{
	uint64_t p = item->payload;

	pthread_mutex_lock(&v->lock);
	if (v->n < 2 * MAX_NODES)
		v->pairs[v->n++] = (struct pair){ item->id, p };
	if (item->worker < 8)
		v->by_worker[item->worker]++;
	if (p >= (uint64_t)n_nodes) {
		v->bad_payload++;
	} else {
		v->count[p]++;
		if (children && count != (size_t)child_count[p])
			v->bad_children++;
		for (size_t k = 0; children && k < count; k++)
			if (children[k] != (uint64_t)(first_child[p] + (int64_t)k))
				v->bad_children++;
	}
	pthread_mutex_unlock(&v->lock);
}

static void observe(void *ctx, const struct loom_sched_item *item,
		    const uint64_t *children, size_t count)
{
	visit(ctx, item, children, count);
}

/* The host's traversal: children straight from the table. */
static enum loom_work_sync_verdict host_fn(void *ctx, const struct loom_sched_item *item,
					   uint64_t *children, size_t capacity,
					   size_t *count)
{
	int64_t n = (int64_t)item->payload;

	if (n < 0 || n >= n_nodes || (size_t)child_count[n] > capacity)
		return LOOM_WORK_SYNC_ABORT;
	for (int64_t k = 0; k < child_count[n]; k++)
		children[k] = (uint64_t)(first_child[n] + k);
	*count = (size_t)child_count[n];
	visit(ctx, item, NULL, 0);
	return LOOM_WORK_SYNC_CHILDREN;
}

/*
 * Whether @a and @b name the same ordinal path: the host's run and a
 * device run are two dispatches, with two minted occurrences.
 */
static bool same_path(const struct loom_item_id *a, const struct loom_item_id *b)
{
	struct loom_item_id b_as_a = *b;

	b_as_a.occurrence = a->occurrence;
	return loom_item_id_equal(a, &b_as_a);
}

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return loom_item_id_compare(&x->id, &y->id);
}

/* The host run all device runs are compared with (kept alive for its ids). */
static struct visits host;
static struct loom_work_sync_result host_result;

static void host_run(struct __test_metadata *_metadata)
{
	struct loom_work_sync_config c = {
		.root_payload = 0, .sched.workers = 1,
		.sched.deque_capacity = (uint32_t)n_nodes, .child_capacity = MAX_FANOUT,
	};

	gen_tree();
	visits_init(&host);
	ASSERT_EQ(LOOM_OK, loom_work_sync_run(&c, host_fn, &host, &host_result));
	ASSERT_EQ(n_nodes, host.n);
	qsort(host.pairs, host.n, sizeof(host.pairs[0]), pair_cmp);
}

/* Exactly one retirement completed the domain. */
static unsigned completions(const struct loom_sched_trace *t)
{
	const struct loom_sched_event *e = loom_sched_trace_events(t);
	unsigned n = 0;

	for (size_t i = 0; i < loom_sched_trace_count(t); i++)
		n += e[i].completes_domain;
	return n;
}

/* What the job observer saw of a run's dispatches. */
struct dispatches {
	pthread_mutex_t lock;
	uint64_t jobs, items, cycles, bad;
	uint32_t workers;
	const char *thread;
};

static void observe_job(void *ctx, const struct loom_job_record *job)
{
	struct dispatches *d = ctx;

	pthread_mutex_lock(&d->lock);
	d->jobs++;
	d->items += job->items;
	d->cycles += job->counters.cycles;
	/* the WRITE_COUNTERS after the dispatch counted exactly its items */
	d->bad += job->error || job->worker >= d->workers ||
		  job->counters.items != job->items || !job->counters.cycles ||
		  job->submit_ns > job->done_ns || strcmp(job->thread, d->thread);
	pthread_mutex_unlock(&d->lock);
}

/*
 * A trace's events by kind, acquisitions as one (which worker takes an
 * item is the schedule's, not the domain's).
 */
static void trace_kinds(const struct loom_sched_trace *t, unsigned long *kinds)
{
	const struct loom_sched_event *e = loom_sched_trace_events(t);

	memset(kinds, 0, 16 * sizeof(*kinds));
	for (size_t i = 0; i < loom_sched_trace_count(t); i++)
		kinds[e[i].kind == LOOM_SCHED_EV_STEAL ?
		      LOOM_SCHED_EV_ACQUIRE_LOCAL : e[i].kind & 15]++;
}

/*
 * One device run of @thread over @n_dev devices, through the device's
 * work stack or (@flags LOOM_WORK_DEVICE_ITEMS_ONLY) items dispatches;
 * compares it with the host: counts, (WorkItemId, payload) pairs, trace.
 */
static void thread_run_flags(struct __test_metadata *_metadata, const char *thread,
			     struct devctx *d, unsigned n_dev, uint32_t workers,
			     uint32_t max_batch, uint32_t flags)
{
	struct loom_device *devs[2] = { d[0].dev, n_dev > 1 ? d[1].dev : NULL };
	static struct visits v;
	struct dispatches seen = {
		.lock = PTHREAD_MUTEX_INITIALIZER, .workers = workers,
		.thread = thread,
	};
	struct loom_work_device_config c = {
		.root_payload = 0,
		.image = NULL, .thread = thread, .n_args = 2, .args = d[0].args,
		.devices = devs, .n_devices = n_dev, .sched.workers = workers,
		.sched.deque_capacity = (uint32_t)(n_nodes < N_NODES ? N_NODES : n_nodes),
		.sched.max_batch = max_batch, .flags = flags,
		.observe = observe, .observe_ctx = &v,
		.observe_job = observe_job, .observe_job_ctx = &seen,
	};
	bool items = flags & LOOM_WORK_DEVICE_ITEMS_ONLY;
	unsigned long kinds[16], host_kinds[16];
	struct loom_work_device_result r;
	struct loom_image *img = test_image(loom_device_info(d[0].dev));
	uint64_t n = (uint64_t)n_nodes;
	enum loom_error err;

	ASSERT_NE(NULL, img);
	c.image = img;
	visits_init(&v);
	err = loom_work_device_run(&c, &r);
	ASSERT_EQ(LOOM_OK, err) {
		TH_LOG("%s: device error %s", loom_strerror(err),
		       loom_strerror(r.device_error));
	}
	EXPECT_EQ(n, r.work.items_run);
	EXPECT_EQ(n, r.work.items_completed);
	EXPECT_EQ(0, r.work.items_cancelled);
	EXPECT_EQ(n - 1, r.work.children_published);
	EXPECT_FALSE(r.work.failed);
	EXPECT_EQ(0, r.device_error);
	if (items)
		EXPECT_LE((n + max_batch - 1) / max_batch, r.jobs_submitted);
	EXPECT_LE(1, r.jobs_submitted);
	EXPECT_GE(n, r.jobs_submitted);
	EXPECT_EQ(1, completions(r.work.trace));
	/* the same transactions as the host's, whoever took each item */
	trace_kinds(r.work.trace, kinds);
	trace_kinds(host_result.trace, host_kinds);
	EXPECT_EQ(0, memcmp(kinds, host_kinds, sizeof(kinds)));
	EXPECT_EQ(3 * n, loom_sched_trace_count(r.work.trace));
	/* every dispatch observed once; the device's counters add up */
	EXPECT_EQ(r.jobs_submitted, seen.jobs);
	EXPECT_EQ(n, seen.items);
	EXPECT_EQ(0, seen.bad);
	EXPECT_EQ(n, r.counters.items);
	EXPECT_EQ(n - 1, r.counters.spawns);
	EXPECT_EQ(seen.cycles, r.counters.cycles);
	/* every node once, with the table's children */
	EXPECT_EQ(0, v.bad_payload);
	EXPECT_EQ(0, v.bad_children);
	for (int64_t node = 0; node < n_nodes; node++) {
		if (v.count[node] != 1)
			TH_LOG("node %lld visited %u times", (long long)node,
			       v.count[node]);
		ASSERT_EQ(1, v.count[node]);
	}
	/* the same (WorkItemId, payload) pairs as the host */
	ASSERT_EQ(host.n, v.n);
	qsort(v.pairs, v.n, sizeof(v.pairs[0]), pair_cmp);
	for (size_t i = 0; i < v.n; i++) {
		ASSERT_TRUE(same_path(&host.pairs[i].id, &v.pairs[i].id));
		ASSERT_EQ(host.pairs[i].payload, v.pairs[i].payload);
	}
	TH_LOG("%s, %lld nodes, %u device(s), %u workers, batch %u: %llu jobs, %llu steals; items by worker %u %u %u %u",
	       items ? "items" : "work stack", (long long)n_nodes, n_dev,
	       workers, max_batch, (unsigned long long)r.jobs_submitted,
	       (unsigned long long)r.work.steals, v.by_worker[0], v.by_worker[1],
	       v.by_worker[2], v.by_worker[3]);
	loom_work_device_result_free(&r);
	loom_image_free(img);
}

static void thread_run(struct __test_metadata *_metadata, const char *thread,
		       struct devctx *d, unsigned n_dev, uint32_t workers,
		       uint32_t max_batch)
{
	thread_run_flags(_metadata, thread, d, n_dev, workers, max_batch, 0);
}

/* Through the work stack, then through items dispatches. */
static void tree_run(struct __test_metadata *_metadata, struct devctx *d,
		     unsigned n_dev, uint32_t workers, uint32_t max_batch)
{
	thread_run_flags(_metadata, "tree", d, n_dev, workers, max_batch, 0);
	thread_run_flags(_metadata, "tree", d, n_dev, workers, max_batch,
			 LOOM_WORK_DEVICE_ITEMS_ONLY);
}

/*
 * Trees of 1, 2, 300 and 131071 nodes through the device's work stack
 * with 1 and 2 workers on one device and 2 on two (131071 nodes: also
 * with a max_batch larger than the stack), and (131071 nodes: batched)
 * through items dispatches: the host's ids, payloads, counts and
 * transactions every time.
 */
TEST(work_stack_trees_match_host)
{
	static const int64_t sizes[] = { 1, 2, 300, MAX_NODES };
	struct devctx d[2];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n_nodes = sizes[i];
		host_run(_metadata);
		ASSERT_EQ(0, devctx_open(&d[0], 0));
		ASSERT_EQ(0, devctx_open(&d[1], 1));
		ASSERT_EQ(0, devctx_share(d));
		thread_run(_metadata, "tree", d, 1, 1, 1);
		thread_run(_metadata, "tree", d, 1, 2, 4);
		thread_run(_metadata, "tree", d, 2, 2, 8);
		/* more than the work stack holds: batches of 8192 there */
		if (n_nodes == MAX_NODES)
			thread_run(_metadata, "tree", d, 1, 2, 65536);
		thread_run_flags(_metadata, "tree", d, 2, 2,
				 n_nodes > N_NODES ? 256 : 1,
				 LOOM_WORK_DEVICE_ITEMS_ONLY);
		devctx_close(&d[1]);
		devctx_close(&d[0]);
		loom_work_sync_result_free(&host_result);
	}
	n_nodes = N_NODES;
}

TEST(tree_one_device_matches_host)
{
	struct devctx d[1];

	host_run(_metadata);
	ASSERT_EQ(0, devctx_open(&d[0], 0));
	tree_run(_metadata, d, 1, 1, 1);
	tree_run(_metadata, d, 1, 2, 1);
	tree_run(_metadata, d, 1, 4, 1);
	tree_run(_metadata, d, 1, 1, 8);
	tree_run(_metadata, d, 1, 2, 4);
	tree_run(_metadata, d, 1, 4, 16);
	devctx_close(&d[0]);
	loom_work_sync_result_free(&host_result);
}

TEST(tree_two_devices_matches_host)
{
	struct devctx d[2];

	host_run(_metadata);
	ASSERT_EQ(0, devctx_open(&d[0], 0));
	ASSERT_EQ(0, devctx_open(&d[1], 1));
	ASSERT_EQ(0, devctx_share(d));
	tree_run(_metadata, d, 2, 2, 1);
	tree_run(_metadata, d, 2, 4, 1);
	tree_run(_metadata, d, 2, 4, 8);
	devctx_close(&d[1]);
	devctx_close(&d[0]);
	loom_work_sync_result_free(&host_result);
}

/* "tree_small" overflows on nodes with MAX_FANOUT children. */
static void overflow_run(struct __test_metadata *_metadata, struct devctx *d,
			 uint32_t workers, uint32_t max_batch, uint32_t flags)
{
	struct loom_device *devs[1] = { d->dev };
	struct loom_work_device_config c = {
		.root_payload = 0, .thread = "tree_small",
		.args = d->args, .n_args = 2, .devices = devs, .n_devices = 1,
		.sched.workers = workers, .sched.deque_capacity = N_NODES,
		.sched.max_batch = max_batch, .flags = flags,
	};
	struct loom_work_device_result r;
	struct loom_image *img = test_image(loom_device_info(d->dev));
	enum loom_error err;
	uint64_t p;
	size_t i;

	ASSERT_NE(NULL, img);
	c.image = img;
	err = loom_work_device_run(&c, &r);
	ASSERT_EQ(LOOM_WORK_DEVICE_ERROR, err);
	EXPECT_EQ(-ENOSPC, r.device_error);
	ASSERT_TRUE(r.work.failed);
	p = r.work.failed_payload;
	ASSERT_GT(N_NODES, p);
	EXPECT_EQ(MAX_FANOUT, child_count[p]);
	/* named by the same identity the host gave that node */
	for (i = 0; i < host.n; i++)
		if (host.pairs[i].payload == p)
			break;
	ASSERT_GT(host.n, i);
	EXPECT_TRUE(same_path(&host.pairs[i].id, &r.work.failed_item));
	/* every item retired, once; the domain completed */
	EXPECT_EQ(1 + r.work.children_published,
		  r.work.items_completed + r.work.items_cancelled);
	EXPECT_LE(1, r.work.items_cancelled);
	EXPECT_EQ(1, completions(r.work.trace));
	EXPECT_LE(1, r.jobs_submitted);
	{
		char text[128];

		loom_item_id_format(&r.work.failed_item, text, sizeof(text));
		TH_LOG("%u workers, batch %u: failed on %s (node %llu): %s",
		       workers, max_batch, text, (unsigned long long)p,
		       loom_strerror(r.device_error));
	}
	loom_work_device_result_free(&r);
	loom_image_free(img);
}

/*
 * An i32 work item: the same tree, its payloads sign-extended int32s, runs
 * as the i64 one does; a root outside int32 is refused before anything
 * runs; a child the device writes outside int32 (a table entry says
 * 0x7fffffff, 0x80000000) fails the run naming its parent, publishes
 * nothing, and the domain drains.
 */
TEST(i32_payloads_on_the_device)
{
	struct devctx d;
	struct loom_device *devs[1];
	struct loom_work_device_config c = {
		.thread = "tree32", .n_args = 2,
		.n_devices = 1, .sched.workers = 2, .sched.deque_capacity = N_NODES,
		.sched.max_batch = 4,
	};
	struct loom_work_device_result r;
	struct loom_image *img;
	struct loom_bo *wide;
	int64_t *t;

	host_run(_metadata);
	ASSERT_EQ(0, devctx_open(&d, 0));
	d.args[1].type = LOOM_ARG_I32;
	thread_run(_metadata, "tree32", &d, 1, 1, 1);
	thread_run(_metadata, "tree32", &d, 1, 4, 8);
	thread_run_flags(_metadata, "tree32", &d, 1, 4, 8, LOOM_WORK_DEVICE_ITEMS_ONLY);

	img = test_image(loom_device_info(d.dev));
	ASSERT_NE(NULL, img);
	devs[0] = d.dev;
	c.image = img;
	c.devices = devs;
	c.args = d.args;
	c.root_payload = 0x80000000ULL;		/* 2^31: no int32 */
	EXPECT_EQ(LOOM_WORK_PAYLOAD_WIDTH, loom_work_device_run(&c, &r));
	EXPECT_FALSE(r.work.failed);
	EXPECT_EQ(0, r.jobs_submitted);
	EXPECT_EQ(0, r.work.items_run);
	loom_work_device_result_free(&r);

	ASSERT_EQ(0, loom_bo_alloc(d.dev, 16, LOOM_BO_DEVICE_READ_ONLY, &wide));
	t = loom_bo_map(wide);
	t[0] = INT32_MAX;	/* node 0: children 2^31 - 1 and 2^31 */
	t[1] = 2;
	c.args = (struct loom_arg[2]){
		{ LOOM_ARG_MEMREF_I64, loom_bo_va(wide) }, { LOOM_ARG_I32, 0 },
	};
	c.root_payload = 0;
	/* the work stack stops at the root; items dispatches refuse its record */
	for (int k = 0; k < 2; k++) {
		c.flags = k ? LOOM_WORK_DEVICE_ITEMS_ONLY : 0;
		EXPECT_EQ(LOOM_WORK_PAYLOAD_WIDTH, loom_work_device_run(&c, &r));
		EXPECT_TRUE(r.work.failed);
		EXPECT_EQ(0, r.work.failed_payload);
		EXPECT_TRUE(loom_item_id_is_root(&r.work.failed_item));
		EXPECT_EQ(0, r.device_error);
		EXPECT_EQ(1, r.jobs_submitted);
		EXPECT_EQ(0, r.work.children_published);
		EXPECT_EQ(0, r.work.items_completed);
		EXPECT_EQ(1, r.work.items_cancelled);
		EXPECT_EQ(2, r.counters.spawns);	/* the device did spawn both */
		EXPECT_EQ(1, r.counters.items);		/* and ran neither */
		EXPECT_EQ(1, completions(r.work.trace));
		loom_work_device_result_free(&r);
	}

	loom_bo_free(wide);
	loom_image_free(img);
	devctx_close(&d);
	loom_work_sync_result_free(&host_result);
}

TEST(child_overflow_names_the_item)
{
	struct devctx d;

	host_run(_metadata);
	ASSERT_EQ(0, devctx_open(&d, 0));
	for (uint32_t flags = 0; flags <= LOOM_WORK_DEVICE_ITEMS_ONLY;
	     flags += LOOM_WORK_DEVICE_ITEMS_ONLY) {
		overflow_run(_metadata, &d, 1, 1, flags);
		overflow_run(_metadata, &d, 1, 8, flags);
		overflow_run(_metadata, &d, 4, 1, flags);
		overflow_run(_metadata, &d, 4, 4, flags);
	}
	devctx_close(&d);
	loom_work_sync_result_free(&host_result);
}

/* Fills every cell of @bo with -1 (never a cell's VA). */
static int64_t *cells_reset(struct loom_bo *bo)
{
	int64_t *cell = loom_bo_map(bo);

	memset(cell, 0xff, (size_t)n_nodes * 8);
	return cell;
}

/*
 * One capture list for a run on two devices (spec 2.2: "all other
 * ordinary arguments are launch captures reused by every item"): "mark"
 * stores, for item n, the VA of cell n of its memref capture (operand 2)
 * into that cell.  The buffer is one BO shared by both devices, so every
 * item's store lands in it, whichever device ran the item: cell n holds
 * cell n's VA on device 0 or on device 1, and both devices ran items.
 * Through the work stack and through items dispatches.
 */
TEST(captures_one_buffer_across_devices)
{
	struct devctx d[2];
	struct loom_bo *out, *out_1;
	static struct visits v;

	host_run(_metadata);
	ASSERT_EQ(0, devctx_open(&d[0], 0));
	ASSERT_EQ(0, devctx_open(&d[1], 1));
	ASSERT_EQ(0, devctx_share(d));
	ASSERT_EQ(0, loom_bo_alloc(d[0].dev, (uint64_t)n_nodes * 8, 0, &out));
	ASSERT_EQ(0, loom_bo_share(out, d[1].dev, &out_1));
	/* one group, one BO per device */
	EXPECT_EQ(-EEXIST, loom_bo_share(out, d[1].dev, &(struct loom_bo *){ NULL }));
	EXPECT_EQ(-EINVAL, loom_bo_share(out, d[0].dev, &(struct loom_bo *){ NULL }));
	for (unsigned f = 0; f < 2; f++) {
		struct loom_device *devs[2] = { d[0].dev, d[1].dev };
		struct loom_arg args[3] = {
			d[0].args[0], { LOOM_ARG_I64, 0 },
			{ LOOM_ARG_MEMREF_I64, loom_bo_va(out) },
		};
		struct loom_work_device_config c = {
			.thread = "mark", .args = args, .n_args = 3,
			.devices = devs, .n_devices = 2, .sched.workers = 4,
			.sched.deque_capacity = N_NODES, .sched.max_batch = 1,
			.flags = f ? LOOM_WORK_DEVICE_ITEMS_ONLY : 0,
			.observe = observe, .observe_ctx = &v,
		};
		struct loom_work_device_result r;
		struct loom_image *img = test_image(loom_device_info(d[0].dev));
		int64_t *cell = cells_reset(out);
		unsigned on[2] = { 0, 0 };

		ASSERT_NE(NULL, img);
		c.image = img;
		visits_init(&v);
		ASSERT_EQ(LOOM_OK, loom_work_device_run(&c, &r)) {
			TH_LOG("device error %s", loom_strerror(r.device_error));
		}
		EXPECT_EQ(n_nodes, r.work.items_completed);
		for (int64_t n = 0; n < n_nodes; n++) {
			uint64_t va0 = loom_bo_va(out) + 8 * (uint64_t)n;
			uint64_t va1 = loom_bo_va(out_1) + 8 * (uint64_t)n;

			ASSERT_EQ(1, v.count[n]);
			if ((uint64_t)cell[n] != va0 && (uint64_t)cell[n] != va1)
				TH_LOG("cell %lld: %#llx", (long long)n,
				       (unsigned long long)cell[n]);
			ASSERT_TRUE((uint64_t)cell[n] == va0 || (uint64_t)cell[n] == va1);
		}
		for (unsigned w = 0; w < 4; w++)
			on[w % 2] += v.by_worker[w];
		TH_LOG("%s: items on device 0: %u, on device 1: %u",
		       f ? "items" : "work stack", on[0], on[1]);
		/* batches of one item on four workers: both devices take some */
		if (f) {
			EXPECT_LT(0, on[0]);
			EXPECT_LT(0, on[1]);
		}
		loom_work_device_result_free(&r);
		loom_image_free(img);
	}
	loom_bo_free(out_1);
	loom_bo_free(out);
	devctx_close(&d[1]);
	devctx_close(&d[0]);
	loom_work_sync_result_free(&host_result);
}

/*
 * A memref capture not shared with every device of the run is refused
 * before anything runs, and so are per-device lists (device_args) that
 * give each device a buffer of its own -- the old way, whose results
 * depended on which device ran an item.  Nothing is written.
 */
TEST(unshared_capture_is_refused)
{
	struct devctx d[2];
	struct loom_bo *out[2], *out0_1 = NULL;

	host_run(_metadata);
	ASSERT_EQ(0, devctx_open(&d[0], 0));
	ASSERT_EQ(0, devctx_open(&d[1], 1));
	ASSERT_EQ(0, devctx_share(d));
	for (unsigned i = 0; i < 2; i++) {
		ASSERT_EQ(0, loom_bo_alloc(d[i].dev, (uint64_t)n_nodes * 8, 0, &out[i]));
		cells_reset(out[i]);
	}
	for (unsigned k = 0; k < 2; k++) {
		struct loom_device *devs[2] = { d[0].dev, d[1].dev };
		struct loom_arg args[2][3] = {
			{ d[0].args[0], { LOOM_ARG_I64, 0 },
			  { LOOM_ARG_MEMREF_I64, loom_bo_va(out[0]) } },
			{ { LOOM_ARG_MEMREF_I64, loom_bo_va(d[1].shared_table) },
			  { LOOM_ARG_I64, 0 },
			  { LOOM_ARG_MEMREF_I64, loom_bo_va(out[1]) } },
		};
		const struct loom_arg *dargs[2] = { args[0], args[1] };
		struct loom_work_device_config c = {
			.thread = "mark", .args = args[0], .n_args = 3,
			.device_args = k ? dargs : NULL,
			.devices = devs, .n_devices = 2, .sched.workers = 2,
			.sched.deque_capacity = N_NODES,
		};
		struct loom_work_device_result r;
		struct loom_image *img = test_image(loom_device_info(d[0].dev));

		ASSERT_NE(NULL, img);
		c.image = img;
		/* then out[0] is shared, but device 1 is given its own buffer */
		if (k)
			ASSERT_EQ(0, loom_bo_share(out[0], d[1].dev, &out0_1));
		ASSERT_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
		EXPECT_EQ(k ? LOOM_E_CAPTURE_MISMATCH : LOOM_E_CAPTURE_NOT_SHARED,
			  r.device_error);
		EXPECT_FALSE(r.work.failed);
		EXPECT_EQ(0, r.work.items_run);
		EXPECT_EQ(0, r.jobs_submitted);
		loom_work_device_result_free(&r);
		loom_image_free(img);
	}
	for (unsigned i = 0; i < 2; i++) {
		int64_t *cell = loom_bo_map(out[i]);

		for (int64_t n = 0; n < n_nodes; n++)
			ASSERT_EQ(-1, cell[n]);
		loom_bo_free(out[i]);
	}
	loom_bo_free(out0_1);
	devctx_close(&d[1]);
	devctx_close(&d[0]);
	loom_work_sync_result_free(&host_result);
}

/*
 * A job that faults (the root's table entry at an unmapped VA: the table
 * is shared, the root payload far beyond it) fails the run naming the
 * root, on one device and on two; nothing is published, nothing hangs.
 */
TEST(job_fault_names_the_item)
{
	const uint64_t root = 1ULL << 36;	/* entry at table + 1 TiB */
	struct devctx d[2];

	ASSERT_EQ(0, devctx_open(&d[0], 0));
	ASSERT_EQ(0, devctx_open(&d[1], 1));
	ASSERT_EQ(0, devctx_share(d));
	for (unsigned k = 0; k < 4; k++) {
		unsigned n_dev = 1 + k % 2;
		struct loom_device *devs[2] = { d[0].dev, d[1].dev };
		struct loom_work_device_config c = {
			.root_payload = root, .thread = "tree",
			.args = d[0].args, .n_args = 2, .devices = devs,
			.n_devices = n_dev, .sched.workers = 4, .sched.deque_capacity = 8,
			.sched.max_batch = 2, .flags = LOOM_WORK_DEVICE_TOKEN |
			(k >= 2 ? LOOM_WORK_DEVICE_ITEMS_ONLY : 0),
		};
		struct loom_work_device_result r;
		struct loom_image *img = test_image(loom_device_info(d[0].dev));

		ASSERT_NE(NULL, img);
		c.image = img;
		ASSERT_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
		EXPECT_EQ(-EFAULT, r.device_error);
		ASSERT_TRUE(r.work.failed);
		EXPECT_TRUE(loom_item_id_is_root(&r.work.failed_item));
		EXPECT_EQ(root, r.work.failed_payload);
		EXPECT_EQ(1, r.work.items_run);
		EXPECT_EQ(0, r.work.items_completed);
		EXPECT_EQ(1, r.work.items_cancelled);
		EXPECT_EQ(0, r.work.children_published);
		EXPECT_EQ(1, r.jobs_submitted);
		EXPECT_EQ(1, completions(r.work.trace));
		EXPECT_EQ(NULL, r.token);	/* only a run that succeeded has one */
		loom_work_device_result_free(&r);
		loom_image_free(img);
	}
	devctx_close(&d[1]);
	devctx_close(&d[0]);
}

/*
 * A fault deep in a big tree: its last node gets one child whose table
 * entry lies far past the table, so the job that runs that child faults,
 * late in the run (through the work stack, in a packet started before
 * the previous one's commit, with items already carried into it).  The
 * run fails naming that child (the work stack knows which item failed);
 * every item published is completed or
 * cancelled exactly once and the domain completes once, with one or two
 * workers, through the work stack and through items dispatches.
 */
TEST(fault_deep_in_a_tree_fails_the_run_once)
{
	static const struct { uint32_t workers, batch, flags; } runs[] = {
		{ 1, 64, 0 }, { 1, 1, 0 }, { 2, 8, 0 },
		{ 1, 64, LOOM_WORK_DEVICE_ITEMS_ONLY },
	};
	const int64_t bad = 1LL << 36;
	struct devctx d[1];

	n_nodes = MAX_NODES;
	gen_tree();
	first_child[n_nodes - 1] = bad;
	child_count[n_nodes - 1] = 1;
	ASSERT_EQ(0, devctx_open(&d[0], 0));
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct loom_device *devs[1] = { d[0].dev };
		struct loom_work_device_config c = {
			.root_payload = 0, .thread = "tree",
			.args = d[0].args, .n_args = 2, .devices = devs,
			.n_devices = 1, .sched.workers = runs[i].workers,
			.sched.deque_capacity = MAX_NODES, .sched.max_batch = runs[i].batch,
			.flags = runs[i].flags,
		};
		struct loom_work_device_result r;
		struct loom_image *img = test_image(loom_device_info(d[0].dev));

		ASSERT_NE(NULL, img);
		c.image = img;
		ASSERT_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
		EXPECT_EQ(-EFAULT, r.device_error);
		ASSERT_TRUE(r.work.failed);
		/* an items dispatch names the first item of its batch */
		if (!runs[i].flags)
				EXPECT_LT(0, r.work.items_completed);
		EXPECT_EQ(r.work.children_published + 1,
			  r.work.items_completed + r.work.items_cancelled);
		EXPECT_EQ(1, completions(r.work.trace));
		TH_LOG("%u worker(s), batch %u, %s: %llu jobs, %llu completed, "
		       "%llu cancelled", runs[i].workers, runs[i].batch,
		       runs[i].flags ? "items" : "work stack",
		       (unsigned long long)r.jobs_submitted,
		       (unsigned long long)r.work.items_completed,
		       (unsigned long long)r.work.items_cancelled);
		loom_work_device_result_free(&r);
		loom_image_free(img);
	}
	devctx_close(&d[0]);
	n_nodes = N_NODES;
	gen_tree();
}

/* ----------------------------------- a cancel during a work-stack job --- */

/*
 * The tree of cancel_during_a_job: root 0 with children 1 and 2.  Node 1
 * fans out (4 children a node, 3 levels) to 64 chains of @chain nodes;
 * node 2 heads a chain of 8 nodes, the last of which has one child,
 * @bad: its table entry lies far past the table, so the job that runs it
 * faults.  The device takes up to 64 items at once from the top of its
 * stack, so node 2's chain sinks below the 64 chains before it reaches
 * @bad, and the root's job stops on its budget with every chain half
 * run: the next job's batch are chain nodes, each with a chain below.
 */
static void gen_cancel_tree(int64_t chain, int64_t bad)
{
	int64_t level[64], n_level = 1, next = 3, cur;

	memset(child_count, 0, sizeof(child_count));
	first_child[0] = 1;
	child_count[0] = 2;
	level[0] = 1;
	/* each level's nodes are numbered consecutively, from level[0] */
	for (int depth = 0; depth < 3; depth++) {
		int64_t from = next;

		for (int64_t i = 0; i < n_level; i++) {
			first_child[level[i]] = next;
			child_count[level[i]] = 4;
			next += 4;
		}
		n_level = next - from;
		for (int64_t i = 0; i < n_level; i++)
			level[i] = from + i;
	}
	for (int64_t i = 0; i < n_level; i++) {
		cur = level[i];
		for (int64_t k = 0; k < chain; k++) {
			first_child[cur] = next;
			child_count[cur] = 1;
			cur = next++;
		}
	}
	cur = 2;
	for (int k = 0; k < 8; k++) {
		first_child[cur] = next;
		child_count[cur] = 1;
		cur = next++;
	}
	first_child[cur] = bad;
	child_count[cur] = 1;
	n_nodes = next;
}

/*
 * The jobs of cancel_during_a_job: worker 0's second job (the one its
 * first commit runs ahead, on node 1's subtree) is held, once reaped and
 * before its commit, until a job has failed (worker 1's, on node 2: the
 * fault cancels the domain) and the cancel has landed.
 */
struct cancel_gate {
	pthread_mutex_t lock;
	pthread_cond_t failed;
	bool has_failed, held;
	unsigned worker0_jobs;
};

static void gate_job(void *ctx, const struct loom_job_record *job)
{
	struct cancel_gate *g = ctx;
	struct timespec until;
	bool hold = false;

	pthread_mutex_lock(&g->lock);
	if (job->error) {
		g->has_failed = true;
		pthread_cond_broadcast(&g->failed);
	} else if (job->worker == 0 && ++g->worker0_jobs == 2) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		while (!g->has_failed &&
		       !pthread_cond_timedwait(&g->failed, &g->lock, &until))
			;
		g->held = hold = g->has_failed;
	}
	pthread_mutex_unlock(&g->lock);
	/* the failing worker commits, then cancels the domain */
	if (hold)
		usleep(200 * 1000);
}

/* What a trace says of one item: its events by kind. */
struct item_events {
	unsigned created, acquired, requested, retired;
	enum loom_sched_event_kind retired_by;
};

static int event_cmp(const void *a, const void *b)
{
	const struct loom_sched_event *x = a, *y = b;

	return loom_item_id_compare(&x->item, &y->item);
}

/* @id's events in @e[0 .. @n), sorted by item. */
static struct item_events events_of(const struct loom_sched_event *e, size_t n,
				    const struct loom_item_id *id)
{
	struct loom_sched_event key = { .item = *id };
	const struct loom_sched_event *hit = bsearch(&key, e, n, sizeof(*e), event_cmp);
	struct item_events ev = { 0 };

	while (hit && hit > e && !event_cmp(hit - 1, &key))
		hit--;
	for (; hit && hit < e + n && !event_cmp(hit, &key); hit++) {
		switch (hit->kind) {
		case LOOM_SCHED_EV_ADMIT:
		case LOOM_SCHED_EV_PUBLISH:
			ev.created++;
			break;
		case LOOM_SCHED_EV_ACQUIRE_LOCAL:
		case LOOM_SCHED_EV_STEAL:
			ev.acquired++;
			break;
		case LOOM_SCHED_EV_CANCEL_REQUEST:
			ev.requested++;
			break;
		default:
			ev.retired++;
			ev.retired_by = hit->kind;
		}
	}
	return ev;
}

/*
 * A cancel request that reaches a work-stack job while it runs: worker
 * 0's job runs (and stores the records of) items of node 1's subtree
 * when worker 1's job faults and cancels the domain.  Every item the
 * device ran (a record of a job that succeeded, the device's own count)
 * was acquired before it was visible and retired exactly once: observed
 * with its id, one creation, one acquisition and one retirement in the
 * trace; every item in the trace retired exactly once; the domain
 * completed once.
 */
#define CANCEL_ATTEMPTS	8

/* No state: a fixture only for the harness's longer timeout (retries). */
FIXTURE(cancel) {
	int unused;
};

FIXTURE_SETUP(cancel)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(cancel)
{
}

TEST_F_TIMEOUT(cancel, during_a_job_retires_every_item_that_ran, 240)
{
	static struct visits v;
	struct loom_sched_event *e;
	const int64_t bad = 1LL << 36;
	struct cancel_gate g;
	struct devctx d;
	struct loom_device *devs[1];
	struct loom_work_device_config c = {
		.root_payload = 0, .thread = "tree", .n_args = 2, .devices = devs,
		.n_devices = 1, .sched.workers = 2, .sched.deque_capacity = MAX_NODES,
		.sched.max_batch = 64, .observe = observe, .observe_ctx = &v,
		.observe_job = gate_job, .observe_job_ctx = &g,
	};
	struct loom_work_device_result r;
	struct loom_image *img;
	unsigned lost = 0, twice = 0, cancelled_after_run = 0;
	size_t n;

	gen_cancel_tree(400, bad);
	ASSERT_EQ(0, devctx_open(&d, 0));
	devs[0] = d.dev;
	c.args = d.args;
	img = test_image(loom_device_info(d.dev));
	ASSERT_NE(NULL, img);
	c.image = img;
	/*
	 * Which worker takes node 2 is the scheduler's choice: when worker 0
	 * takes both subtrees, no job fails while its second one is held, and
	 * the run is repeated (the checks below hold for any run; they are
	 * only telling for one where the cancel came during a held job).  On
	 * the 6.1 lane the first run nearly always is one; on 6.12 it can
	 * take several, and after CANCEL_ATTEMPTS the test skips, saying so.
	 */
	for (int attempt = 1;; attempt++) {
		g = (struct cancel_gate){
			.lock = PTHREAD_MUTEX_INITIALIZER,
			.failed = PTHREAD_COND_INITIALIZER,
		};
		visits_init(&v);
		ASSERT_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
		EXPECT_EQ(-EFAULT, r.device_error);
		ASSERT_TRUE(r.work.failed);
		if (g.held)
			break;
		if (attempt == CANCEL_ATTEMPTS) {
			loom_work_device_result_free(&r);
			loom_image_free(img);
			devctx_close(&d);
			n_nodes = N_NODES;
			gen_tree();
			SKIP(return, "in %d runs, no job failed while worker 0's second job was held",
			     attempt);
		}
		TH_LOG("attempt %d: no job failed while worker 0's second job was held; again",
		       attempt);
		loom_work_device_result_free(&r);
	}
	/* the cancel came while worker 0's second job was held */
	ASSERT_TRUE(g.held);
	EXPECT_EQ(0, v.bad_payload);
	EXPECT_EQ(0, v.bad_children);

	/*
	 * Every item the device ran was observed, but the faulting one: the
	 * records of every job (the jobs that succeeded: the device's count).
	 */
	EXPECT_EQ(r.work.items_run, v.n + 1);
	EXPECT_LE(r.counters.items, v.n);
	EXPECT_EQ(r.work.children_published + 1,
		  r.work.items_completed + r.work.items_cancelled);
	EXPECT_EQ(1, completions(r.work.trace));

	/* each observed item: created, acquired and retired once */
	n = loom_sched_trace_count(r.work.trace);
	e = malloc(n * sizeof(*e) + 1);
	ASSERT_NE(NULL, e);
	memcpy(e, loom_sched_trace_events(r.work.trace), n * sizeof(*e));
	qsort(e, n, sizeof(*e), event_cmp);
	for (size_t i = 0; i < v.n; i++) {
		struct item_events ev = events_of(e, n, &v.pairs[i].id);

		lost += ev.created != 1 || ev.acquired != 1;
		twice += ev.retired != 1;
		cancelled_after_run += ev.retired_by == LOOM_SCHED_EV_CANCEL_ACTIVE;
	}
	EXPECT_EQ(0, lost);
	EXPECT_EQ(0, twice);
	/* the cancel did reach items that had run */
	EXPECT_LT(0, cancelled_after_run);
	/* and every item of the trace was retired exactly once */
	for (size_t i = 0; i < n;) {
		struct item_events ev = events_of(e, n, &e[i].item);
		size_t next = i + 1;

		while (next < n && !event_cmp(&e[next], &e[i]))
			next++;
		if (ev.created != 1 || ev.retired != 1 || ev.acquired > 1 ||
		    ev.requested > 1)
			twice++;
		i = next;
	}
	EXPECT_EQ(0, twice);
	free(e);
	TH_LOG("%llu jobs; %llu run, %zu observed (%u cancelled after they ran); "
	       "%llu completed, %llu cancelled, device ran %llu",
	       (unsigned long long)r.jobs_submitted,
	       (unsigned long long)r.work.items_run, v.n, cancelled_after_run,
	       (unsigned long long)r.work.items_completed,
	       (unsigned long long)r.work.items_cancelled,
	       (unsigned long long)r.counters.items);
	loom_work_device_result_free(&r);
	loom_image_free(img);
	devctx_close(&d);
	n_nodes = N_NODES;
	gen_tree();
}

/*
 * The collective token: waited on, then a dependency of an items launch
 * through io_uring (waited on through the ring, and its CQE reaped) and of
 * an ioctl items launch.
 */
TEST(collective_token_orders_later_work)
{
	struct devctx d;
	struct loom_device *devs[1];
	struct loom_work_device_config c = {
		.root_payload = 0, .thread = "tree",
		.n_args = 2, .n_devices = 1, .sched.workers = 2, .sched.deque_capacity = N_NODES,
		.sched.max_batch = 4, .flags = LOOM_WORK_DEVICE_TOKEN,
		.sched.flags = LOOM_SCHED_NO_TRACE,
	};
	struct loom_work_device_result r;
	struct loom_image *img;
	struct loom_ring *ring;
	struct loom_bo *io;
	struct loom_token *t, *rt, *it;
	struct loom_completion cqe;
	struct loom_hw_counters cnt;
	uint64_t *mem;
	const struct loom_item_result *rec;
	uint64_t rsize = LOOM_ITEM_RESULT_SIZE(MAX_FANOUT);
	int64_t root = 0;

	gen_tree();
	ASSERT_EQ(0, devctx_open(&d, 0));
	img = test_image(loom_device_info(d.dev));
	ASSERT_NE(NULL, img);
	devs[0] = d.dev;
	c.devices = devs;
	c.args = d.args;
	c.image = img;
	ASSERT_EQ(LOOM_OK, loom_work_device_run(&c, &r));
	EXPECT_EQ(N_NODES, r.work.items_completed);
	EXPECT_EQ(0, loom_sched_trace_count(r.work.trace));
	ASSERT_NE(NULL, r.token);
	/* the collective token is the domain's dispatch: its occurrence */
	EXPECT_NE(0, r.work.occurrence);
	EXPECT_EQ(r.work.occurrence, loom_token_occurrence(r.token));
	t = r.token;
	r.token = NULL;
	loom_work_device_result_free(&r);
	EXPECT_EQ(0, loom_token_wait(t, 10 * SEC));
	EXPECT_EQ(1, loom_token_done(t));

	ASSERT_EQ(0, loom_bo_alloc(d.dev, 4096, 0, &io));
	mem = loom_bo_map(io);
	mem[0] = (uint64_t)root;
	ASSERT_EQ(0, loom_ring_create(d.dev, 4, &ring));
	ASSERT_EQ(0, loom_ring_launch_items(ring, img, "tree", d.args, 2, 1,
					    loom_bo_va(io), loom_bo_va(io) + 64,
					    &t, 1, 0, 42, &rt));
	/* a standalone items launch is a dispatch of its own, minted later */
	EXPECT_LT(loom_token_occurrence(t), loom_token_occurrence(rt));
	EXPECT_EQ(0, loom_token_wait(rt, 10 * SEC));
	ASSERT_EQ(1, loom_ring_reap(ring, &cqe, 1, true));
	EXPECT_EQ(42, cqe.user_data);
	EXPECT_EQ(0, cqe.res);
	rec = (const struct loom_item_result *)((char *)mem + 64);
	ASSERT_EQ(child_count[root], rec->child_count);
	for (int64_t k = 0; k < child_count[root]; k++)
		EXPECT_EQ(first_child[root] + k, (int64_t)rec->children[k]);

	/* ioctl path: two items, the second's record after the first's */
	mem[1] = 5;
	memset((char *)mem + 64, 0, 2 * rsize);
	ASSERT_EQ(0, loom_launch_items(d.dev, img, "tree", d.args, 2, 2,
				       loom_bo_va(io), loom_bo_va(io) + 64,
				       &rt, 1, 0, &it));
	EXPECT_LT(loom_token_occurrence(rt), loom_token_occurrence(it));
	ASSERT_EQ(0, loom_token_wait(it, 10 * SEC));
	ASSERT_EQ(0, loom_token_counters(it, &cnt));
	EXPECT_EQ(2, cnt.items);
	EXPECT_EQ(child_count[0] + child_count[5], cnt.spawns);
	rec = (const struct loom_item_result *)((char *)mem + 64 + rsize);
	ASSERT_EQ(child_count[5], rec->child_count);
	for (int64_t k = 0; k < child_count[5]; k++)
		EXPECT_EQ(first_child[5] + k, (int64_t)rec->children[k]);

	loom_token_free(it);
	loom_token_free(rt);
	loom_token_free(t);
	loom_ring_destroy(ring);
	loom_bo_free(io);
	loom_image_free(img);
	devctx_close(&d);
}

TEST(items_launch_rejections)
{
	struct devctx d;
	struct loom_device *devs[1];
	struct loom_image *img;
	struct loom_token *t = NULL;
	struct loom_bo *io;
	struct loom_arg bad[2];
	struct loom_arg vargs[3];
	int64_t n = 1;
	uint64_t va;
	struct loom_work_device_config c = {
		.thread = "vadd", .n_args = 3, .n_devices = 1, .sched.workers = 1,
		.sched.deque_capacity = 4,
	};
	struct loom_work_device_result r;

	gen_tree();
	ASSERT_EQ(0, devctx_open(&d, 0));
	img = test_image(loom_device_info(d.dev));
	ASSERT_NE(NULL, img);
	ASSERT_EQ(0, loom_bo_alloc(d.dev, 4096, 0, &io));
	va = loom_bo_va(io);
	for (int i = 0; i < 3; i++)
		vargs[i] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, va };

	EXPECT_EQ(LOOM_E_NO_THREAD, loom_launch_items(d.dev, img, "nope", d.args, 2, 1, va, va + 64, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_DOMAIN_KIND, loom_launch_items(d.dev, img, "vadd", vargs, 3, 1, va, va + 64, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_DOMAIN_KIND, loom_launch_dense(d.dev, img, "tree", d.args, 2, NULL, 0, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_ARG_COUNT, loom_launch_items(d.dev, img, "tree", d.args, 1, 1, va, va + 64, NULL, 0, 0, &t));
	bad[0] = d.args[0];
	bad[1] = (struct loom_arg){ LOOM_ARG_INDEX, 0 };	/* work-item slot: wrong type */
	EXPECT_EQ(LOOM_E_ARG_TYPE, loom_launch_items(d.dev, img, "tree", bad, 2, 1, va, va + 64, NULL, 0, 0, &t));
	EXPECT_EQ(-EINVAL, loom_launch_items(d.dev, img, "tree", d.args, 2, 0, va, va + 64, NULL, 0, 0, &t));
	EXPECT_EQ(-EINVAL, loom_launch_items(d.dev, img, "tree", d.args, 2, 1, va + 4, va + 64, NULL, 0, 0, &t));
	EXPECT_EQ(-EINVAL, loom_launch_items(d.dev, img, "tree", d.args, 2, 1, va, va + 64, NULL, 0, 99, &t));
	EXPECT_EQ(NULL, t);

	/* the adapter checks the same before anything runs */
	devs[0] = d.dev;
	c.devices = devs;
	c.image = img;
	c.args = vargs;
	EXPECT_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	EXPECT_EQ(LOOM_E_DOMAIN_KIND, r.device_error);
	EXPECT_FALSE(r.work.failed);
	EXPECT_EQ(0, r.work.items_run);
	EXPECT_EQ(0, r.jobs_submitted);
	loom_work_device_result_free(&r);
	c.sched.workers = 0;
	EXPECT_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(&c, &r));
	(void)n;

	loom_bo_free(io);
	loom_image_free(img);
	devctx_close(&d);
}

/*
 * Plays a device (or any other mapper of the result BO) that rewrites a
 * record after its job completed: finds, in this process's mappings of
 * the DRM node, the records holding @children and points them outside
 * the tree.  Returns the records rewritten.
 */
static unsigned rewrite_records(const uint64_t *children, size_t count)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned hits = 0;
	char line[512];

	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    strncmp(perms, "rw", 2) ||
		    (!strstr(line, "/dev/dri/") && !strstr(line, "/dev/accel/")))
			continue;
		for (uint64_t *p = (uint64_t *)lo;
		     p + 1 + count <= (uint64_t *)hi; p++) {
			struct loom_item_result *rec = (void *)p;

			if (rec->child_count != count || rec->reserved ||
			    memcmp(rec->children, children, count * sizeof(*children)))
				continue;
			for (size_t k = 0; k < count; k++)
				rec->children[k] = (uint64_t)n_nodes + 1000 + k;
			hits++;
		}
	}
	if (maps)
		fclose(maps);
	return hits;
}

static unsigned records_rewritten;

/* Checks the root's children, then rewrites their record under the adapter. */
static void hostile_observe(void *ctx, const struct loom_sched_item *item,
			    const uint64_t *children, size_t count)
{
	visit(ctx, item, children, count);
	if (item->payload == 0 && count)
		records_rewritten += rewrite_records(children, count);
}

/*
 * The children an items dispatch publishes are the ones checked and
 * observed, one snapshot of the device-writable record: rewriting it after
 * the observer saw it publishes nothing else (every node once, none
 * outside the tree).
 */
TEST(items_publish_the_record_they_checked)
{
	static struct visits v;
	struct devctx d;
	struct loom_device *devs[1];
	struct loom_work_device_config c = {
		.root_payload = 0, .thread = "tree",
		.n_args = 2, .devices = devs, .n_devices = 1,
		.sched.workers = 1, .sched.deque_capacity = N_NODES,
		.sched.max_batch = 4, .flags = LOOM_WORK_DEVICE_ITEMS_ONLY,
		.observe = hostile_observe, .observe_ctx = &v,
	};
	struct loom_work_device_result r;
	struct loom_image *img;
	unsigned missed = 0;

	n_nodes = N_NODES;
	gen_tree();
	ASSERT_LT(0, child_count[0]);
	ASSERT_EQ(0, devctx_open(&d, 0));
	devs[0] = d.dev;
	c.args = d.args;
	img = test_image(loom_device_info(d.dev));
	ASSERT_NE(NULL, img);
	c.image = img;
	visits_init(&v);
	records_rewritten = 0;
	ASSERT_EQ(LOOM_OK, loom_work_device_run(&c, &r));
	/* the rewrite happened: the test saw the record in the BO */
	EXPECT_LE(1, records_rewritten);
	EXPECT_EQ(0, v.bad_payload);
	EXPECT_EQ(0, v.bad_children);
	EXPECT_EQ((uint64_t)n_nodes, r.work.items_run);
	EXPECT_EQ((uint64_t)n_nodes - 1, r.work.children_published);
	for (int64_t node = 0; node < n_nodes; node++)
		missed += v.count[node] != 1;
	EXPECT_EQ(0, missed);
	loom_work_device_result_free(&r);
	loom_image_free(img);
	devctx_close(&d);
}

TEST_HARNESS_MAIN
