// SPDX-License-Identifier: MIT
/*
 * adapter_test: the generic synchronous adapter.  A fixed tree (heap
 * numbering: node n's children are B*n+1 .. B*n+B below N) is traversed
 * with 1, 2 and 4 workers, in turn and threaded, and must give the same
 * WorkItemIds with the same payloads; a full deque, too many children or
 * an aborting callback fail the run with a typed error naming the item and
 * cancel the domain; a cancelling callback cancels just its item, and
 * one that reports children with its cancel verdict fails the run; a run
 * that stops on its budget is LOOM_WORK_INCOMPLETE with its counters.  With
 * an i32 payload type, a root or a child outside int32 (sign-extended) is
 * the typed LOOM_WORK_PAYLOAD_WIDTH, and a type the runtime cannot carry
 * is LOOM_E_UNSUPPORTED_PAYLOAD.
 */
#include "loom/loom.h"	/* the device adapter's argument checks */
#include "work_util.h"

#define OCC		5
#define NONE		UINT64_MAX
#define MAX_WORKERS	4

struct seen {
	struct loom_item_id id;
	uint64_t payload;
};

/* What one worker saw; only that worker's callbacks touch it. */
struct seen_list {
	struct seen *items;
	size_t count, cap;
	uint64_t path_mismatches;
};

struct tree {
	uint64_t nodes;
	uint64_t branching;
	uint64_t cancel_node;		/* callback asks to cancel it */
	uint64_t cancel_children_node;	/* callback reports children, then cancels */
	uint64_t abort_node;		/* callback aborts at it */
	uint64_t overflow_node;		/* callback reports one child too many */
	uint64_t wide_node;		/* callback reports wide_count children */
	uint64_t wide_count;
	uint64_t odd_node;		/* callback reports odd_child as its last child */
	uint64_t odd_child;
	struct seen_list seen[MAX_WORKERS];
};

static struct tree tree(uint64_t nodes, uint64_t branching)
{
	return (struct tree){ .nodes = nodes, .branching = branching,
			      .cancel_node = NONE, .cancel_children_node = NONE,
			      .abort_node = NONE,
			      .overflow_node = NONE, .wide_node = NONE,
			      .odd_node = NONE };
}

/* The heap number a path names: what the payload must be. */
static uint64_t heap_number(const struct tree *t, const struct loom_item_id *id)
{
	struct loom_item_id parent;

	if (!loom_item_id_parent(id, &parent))
		return 0;
	return t->branching * heap_number(t, &parent) + 1 + id->ordinal;
}

static void remember(struct tree *t, const struct loom_sched_item *item)
{
	struct seen_list *l = &t->seen[item->worker];

	if (l->count == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->items = realloc(l->items, l->cap * sizeof(*l->items));
		if (!l->items)
			abort();
	}
	l->items[l->count++] = (struct seen){ item->id, item->payload };
	l->path_mismatches += heap_number(t, &item->id) != item->payload;
}

static enum loom_work_sync_verdict
tree_fn(void *ctx, const struct loom_sched_item *item, uint64_t *children,
	size_t capacity, size_t *count)
{
	struct tree *t = ctx;
	uint64_t n = item->payload;

	remember(t, item);
	if (n == t->cancel_node)
		return LOOM_WORK_SYNC_CANCEL;
	if (n == t->abort_node)
		return LOOM_WORK_SYNC_ABORT;
	for (uint64_t i = 0; i < t->branching; i++) {
		uint64_t child = t->branching * n + 1 + i;

		if (child >= t->nodes || *count == capacity)
			break;
		children[(*count)++] = child;
	}
	if (n == t->overflow_node)
		*count = capacity + 1;
	if (n == t->wide_node) {
		for (*count = 0; *count < t->wide_count; (*count)++)
			children[*count] = 1000 + *count;
	}
	if (n == t->odd_node && *count < capacity)
		children[(*count)++] = t->odd_child;
	if (n == t->cancel_children_node)
		return LOOM_WORK_SYNC_CANCEL;
	return LOOM_WORK_SYNC_CHILDREN;
}

static struct loom_work_sync_config config(uint32_t workers, uint32_t flags)
{
	return (struct loom_work_sync_config){
		.root_payload = 0, .sched.workers = workers,
		.sched.deque_capacity = 64, .child_capacity = 8, .flags = flags,
	};
}

static int by_id(const void *a, const void *b)
{
	return loom_item_id_compare(&((const struct seen *)a)->id,
				    &((const struct seen *)b)->id);
}

/* All workers' sightings, sorted by id; frees the per-worker lists. */
static struct seen *collect(struct tree *t, size_t *count)
{
	struct seen *all;
	size_t n = 0;

	for (int w = 0; w < MAX_WORKERS; w++)
		n += t->seen[w].count;
	all = malloc((n + 1) * sizeof(*all));
	if (!all)
		abort();
	n = 0;
	for (int w = 0; w < MAX_WORKERS; w++) {
		if (t->seen[w].count)
			memcpy(all + n, t->seen[w].items,
			       t->seen[w].count * sizeof(*all));
		n += t->seen[w].count;
		free(t->seen[w].items);
		t->seen[w] = (struct seen_list){ 0 };
	}
	qsort(all, n, sizeof(*all), by_id);
	*count = n;
	return all;
}

static uint64_t path_mismatches(const struct tree *t)
{
	uint64_t n = 0;

	for (int w = 0; w < MAX_WORKERS; w++)
		n += t->seen[w].path_mismatches;
	return n;
}

static size_t count_events(const struct loom_sched_trace *trace,
			   enum loom_sched_event_kind kind)
{
	const struct loom_sched_event *ev = loom_sched_trace_events(trace);
	size_t n = 0;

	for (size_t i = 0; i < loom_sched_trace_count(trace); i++)
		n += ev[i].kind == kind;
	return n;
}

/* Exactly one event completes the domain, and it is the last one. */
static bool completes_once_at_end(const struct loom_sched_trace *trace)
{
	const struct loom_sched_event *ev = loom_sched_trace_events(trace);
	size_t n = loom_sched_trace_count(trace), completions = 0;

	for (size_t i = 0; i < n; i++)
		completions += ev[i].completes_domain;
	return n && completions == 1 && ev[n - 1].completes_domain;
}

TEST(drains_tree_one_callback_per_item)
{
	struct loom_work_sync_config c = config(2, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(121, 3);
	struct seen *all;
	size_t n;

	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	CHECK_EQ(121, r.items_run);
	CHECK_EQ(121, r.items_completed);
	CHECK_EQ(0, r.items_cancelled);
	CHECK_EQ(120, r.children_published);
	CHECK(!r.failed);
	CHECK_EQ(0, path_mismatches(&t));
	CHECK(completes_once_at_end(r.trace));
	CHECK_EQ(r.steals, count_events(r.trace, LOOM_SCHED_EV_STEAL));
	CHECK(r.steals > 0);
	all = collect(&t, &n);
	REQUIRE_EQ(121, n);
	for (size_t i = 1; i < n; i++)
		CHECK(loom_item_id_compare(&all[i - 1].id, &all[i].id) < 0);
	free(all);
	loom_work_sync_result_free(&r);
}

TEST(same_ids_and_payloads_for_1_2_4_workers)
{
	static const uint32_t workers[] = { 1, 2, 4 };
	struct loom_work_sync_result ref_result, r;
	struct loom_work_sync_config c = config(1, 0);
	struct tree t = tree(1000, 3);
	struct seen *ref, *got;
	size_t nref, n;

	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &ref_result));
	CHECK(ref_result.occurrence != 0);
	ref = collect(&t, &nref);
	CHECK_EQ(1000, nref);
	for (int threaded = 0; threaded < 2; threaded++) {
		for (size_t k = 0; k < 3; k++) {
			c = config(workers[k],
				   threaded ? LOOM_WORK_SYNC_THREADED : 0);
			CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
			CHECK_EQ(0, path_mismatches(&t));
			/* Another dispatch: another occurrence, larger. */
			CHECK(r.occurrence > ref_result.occurrence);
			got = collect(&t, &n);
			CHECK_EQ(nref, n);
			for (size_t i = 0; i < n && i < nref; i++) {
				/* Ids from different domains: structural. */
				if (got[i].id.occurrence != r.occurrence ||
				    !same_path(&ref[i].id, &got[i].id) ||
				    ref[i].payload != got[i].payload) {
					CHECK_FAIL_("%u workers%s: item %zu is %s=%" PRIu64
						    ", expected %s=%" PRIu64,
						    workers[k],
						    threaded ? " threaded" : "", i,
						    id_text(&got[i].id), got[i].payload,
						    id_text(&ref[i].id), ref[i].payload);
					break;
				}
			}
			free(got);
			loom_work_sync_result_free(&r);
		}
	}
	free(ref);
	loom_work_sync_result_free(&ref_result);
}

TEST(in_turn_run_is_deterministic)
{
	struct loom_work_sync_config c = config(3, 0);
	struct loom_work_sync_result a, b;
	const struct loom_sched_event *ea, *eb;
	struct tree t = tree(200, 2);
	size_t n;

	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &a));
	free(collect(&t, &n));
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &b));
	free(collect(&t, &n));
	n = loom_sched_trace_count(a.trace);
	REQUIRE_EQ(n, loom_sched_trace_count(b.trace));
	ea = loom_sched_trace_events(a.trace);
	eb = loom_sched_trace_events(b.trace);
	for (size_t i = 0; i < n; i++) {
		if (ea[i].kind != eb[i].kind || ea[i].worker != eb[i].worker ||
		    ea[i].other_worker != eb[i].other_worker ||
		    !same_path(&ea[i].item, &eb[i].item)) {
			CHECK_FAIL_("event %zu: %s vs %s", i, event_text(&ea[i]),
				    event_text(&eb[i]));
			break;
		}
	}
	loom_work_sync_result_free(&a);
	loom_work_sync_result_free(&b);
}

TEST(small_run_trace_is_exact)
{
	struct loom_work_sync_config c = config(2, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(4, 2);	/* 0 -> 1, 2; 1 -> 3 */
	size_t n;

	/* an exact trace is a replay's: it names its occurrence */
	c.sched.replay_occurrence = OCC;
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	free(collect(&t, &n));
	CHECK_TRACE(r.trace, "admit 0 5:root", "acquire-local 0 5:root",
		    "publish 0 5:root/0", "publish 0 5:root/1",
		    "complete 0 5:root", "steal 1<-0 5:root/0",
		    "publish 1 5:root/0/0", "complete 1 5:root/0",
		    "acquire-local 0 5:root/1", "complete 0 5:root/1",
		    "acquire-local 1 5:root/0/0",
		    "complete 1 5:root/0/0 completes");
	loom_work_sync_result_free(&r);
}

TEST(callback_cancellation_cancels_only_its_item)
{
	struct loom_work_sync_config c = config(2, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(13, 3);	/* 1 has children 4, 5, 6 */
	size_t n;

	t.cancel_node = 1;
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	free(collect(&t, &n));
	CHECK(!r.failed);
	CHECK_EQ(10, r.items_run);		/* 4, 5, 6 never exist */
	CHECK_EQ(9, r.items_completed);
	CHECK_EQ(1, r.items_cancelled);
	CHECK_EQ(1, count_events(r.trace, LOOM_SCHED_EV_CANCEL_REQUEST));
	CHECK_EQ(1, count_events(r.trace, LOOM_SCHED_EV_CANCEL_ACTIVE));
	CHECK(completes_once_at_end(r.trace));
	loom_work_sync_result_free(&r);
}

/* A run that fails because of node 2: the error, the item, a drained domain. */
static void check_failed_run(enum loom_error expected, struct tree *t,
			     struct loom_work_sync_config *c)
{
	struct loom_work_sync_result r;
	char root_1[32];
	size_t n;

	CHECK_EQ(expected, loom_work_sync_run(c, tree_fn, t, &r));
	free(collect(t, &n));
	CHECK(r.failed);
	/* the run's own occurrence, minted */
	snprintf(root_1, sizeof(root_1), "%" PRIu64 ":root/1", r.occurrence);
	CHECK_STR(root_1, id_text(&r.failed_item));
	CHECK_EQ(2, r.failed_payload);
	/* Every published item retired, and the domain completed once. */
	CHECK_EQ(r.children_published + 1, r.items_completed + r.items_cancelled);
	CHECK(r.items_cancelled >= 1);
	CHECK(completes_once_at_end(r.trace));
	CHECK_EQ(r.items_completed, count_events(r.trace, LOOM_SCHED_EV_COMPLETE));
	CHECK_EQ(r.items_cancelled,
		 count_events(r.trace, LOOM_SCHED_EV_CANCEL_QUEUED) +
		 count_events(r.trace, LOOM_SCHED_EV_CANCEL_ACTIVE));
	loom_work_sync_result_free(&r);
}

TEST(full_deque_fails_with_queue_capacity_naming_item)
{
	static const uint32_t workers[] = { 1, 2, 4 };

	/*
	 * Only the root (children 1 2 3) and node 2 have children; node 2's
	 * five never fit a deque of four, whatever the schedule.
	 */
	for (int threaded = 0; threaded < 2; threaded++) {
		for (size_t k = 0; k < 3; k++) {
			struct loom_work_sync_config c = config(workers[k],
				threaded ? LOOM_WORK_SYNC_THREADED : 0);
			struct tree t = tree(4, 3);

			c.sched.deque_capacity = 4;
			t.wide_node = 2;
			t.wide_count = 5;
			check_failed_run(LOOM_WORK_QUEUE_CAPACITY, &t, &c);
		}
	}
}

TEST(failure_cancels_rest_of_domain)
{
	struct loom_work_sync_config c = config(1, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(4, 3);
	size_t n;

	c.sched.deque_capacity = 4;
	t.wide_node = 2;
	t.wide_count = 5;
	/* an exact trace is a replay's: it names its occurrence */
	c.sched.replay_occurrence = OCC;
	CHECK_EQ(LOOM_WORK_QUEUE_CAPACITY, loom_work_sync_run(&c, tree_fn, &t, &r));
	free(collect(&t, &n));
	/* Node 1 (root/0) was still queued: it never runs. */
	CHECK_EQ(3, r.items_run);
	CHECK_EQ(2, r.items_completed);
	CHECK_EQ(2, r.items_cancelled);
	CHECK_TRACE(r.trace, "admit 0 5:root", "acquire-local 0 5:root",
		    "publish 0 5:root/0", "publish 0 5:root/1",
		    "publish 0 5:root/2", "complete 0 5:root",
		    "acquire-local 0 5:root/2", "complete 0 5:root/2",
		    "acquire-local 0 5:root/1", "cancel-request 0 5:root/1",
		    "cancel-queued 0 5:root/0",
		    "cancel-active 0 5:root/1 completes");
	loom_work_sync_result_free(&r);
}

TEST(child_overflow_fails_naming_item)
{
	struct loom_work_sync_config c = config(2, 0);
	struct tree t = tree(40, 3);

	t.overflow_node = 2;
	check_failed_run(LOOM_WORK_CHILD_OVERFLOW, &t, &c);
	c.flags = LOOM_WORK_SYNC_THREADED;
	check_failed_run(LOOM_WORK_CHILD_OVERFLOW, &t, &c);
}

TEST(callback_abort_fails_naming_item)
{
	struct loom_work_sync_config c = config(4, 0);
	struct tree t = tree(40, 3);

	t.abort_node = 2;
	check_failed_run(LOOM_WORK_CALLBACK_ABORTED, &t, &c);
	c.flags = LOOM_WORK_SYNC_THREADED;
	check_failed_run(LOOM_WORK_CALLBACK_ABORTED, &t, &c);
}

/*
 * A cancel verdict publishes nothing: children reported with it would be
 * lost, so the run fails with a typed error naming the item.  A childless
 * item's cancel verdict is still just a cancellation.
 */
TEST(cancel_verdict_with_children_fails_naming_item)
{
	struct loom_work_sync_config c = config(2, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(40, 3);	/* 2 has children 7, 8, 9 */
	size_t n;

	t.cancel_children_node = 2;
	check_failed_run(LOOM_WORK_CANCEL_CHILDREN, &t, &c);
	c.flags = LOOM_WORK_SYNC_THREADED;
	check_failed_run(LOOM_WORK_CANCEL_CHILDREN, &t, &c);
	t.cancel_children_node = 20;	/* a leaf: 61 is past 40 */
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	free(collect(&t, &n));
	CHECK(!r.failed);
	CHECK_EQ(39, r.items_completed);
	CHECK_EQ(1, r.items_cancelled);
	loom_work_sync_result_free(&r);
}

/*
 * A run that stops on its budget: LOOM_WORK_INCOMPLETE with its counters,
 * no item named, every item retired once and the domain drained.
 */
static void check_incomplete_run(struct loom_work_sync_config *c,
				 uint32_t budget)
{
	struct loom_work_sync_result r;
	struct tree t = tree(121, 3);
	size_t n;

	c->flags |= LOOM_WORK_SYNC_BUDGET;
	c->max_items = budget;
	CHECK_EQ(LOOM_WORK_INCOMPLETE, loom_work_sync_run(c, tree_fn, &t, &r));
	free(collect(&t, &n));
	CHECK_EQ(budget, n);
	CHECK(!r.failed);
	CHECK_EQ(budget, r.items_run);
	CHECK(r.items_completed <= budget);
	CHECK_EQ(r.children_published + 1, r.items_completed + r.items_cancelled);
	CHECK(r.items_cancelled >= 1);
	CHECK(completes_once_at_end(r.trace));
	CHECK_EQ(r.items_completed, count_events(r.trace, LOOM_SCHED_EV_COMPLETE));
	CHECK_EQ(r.items_cancelled,
		 count_events(r.trace, LOOM_SCHED_EV_CANCEL_QUEUED) +
		 count_events(r.trace, LOOM_SCHED_EV_CANCEL_ACTIVE));
	loom_work_sync_result_free(&r);
}

TEST(budget_stops_run_incomplete_with_counters)
{
	struct loom_work_sync_config c = config(1, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(121, 3);
	size_t n;

	/*
	 * In turn, one worker, depth first: 0 3 12 39 120 119 118 38 117 116
	 * ran and completed (15 children); 115, taken next, and the five
	 * still queued (1 2 10 11 37) are cancelled.
	 */
	check_incomplete_run(&c, 10);
	c = config(1, 0);
	c.flags = LOOM_WORK_SYNC_BUDGET;
	c.max_items = 10;
	CHECK_EQ(LOOM_WORK_INCOMPLETE, loom_work_sync_run(&c, tree_fn, &t, &r));
	free(collect(&t, &n));
	CHECK_EQ(10, r.items_completed);
	CHECK_EQ(15, r.children_published);
	CHECK_EQ(6, r.items_cancelled);
	loom_work_sync_result_free(&r);
	for (uint32_t workers = 2; workers <= 4; workers += 2) {
		c = config(workers, 0);
		check_incomplete_run(&c, 10);
		c = config(workers, LOOM_WORK_SYNC_THREADED);
		check_incomplete_run(&c, 10);
		c = config(workers, LOOM_WORK_SYNC_THREADED);
		check_incomplete_run(&c, 120);
	}
	c = config(2, 0);
	check_incomplete_run(&c, 0);	/* not even the root runs */
}

/* A budget the domain does not exhaust, or no budget flag: a whole run. */
TEST(budget_not_reached_completes)
{
	static const uint32_t flags[] = { 0, LOOM_WORK_SYNC_THREADED };
	struct loom_work_sync_result r;
	size_t n;

	for (size_t i = 0; i < 2; i++) {
		struct loom_work_sync_config c = config(2, flags[i]);
		struct tree t = tree(121, 3);

		c.flags |= LOOM_WORK_SYNC_BUDGET;
		c.max_items = 121;	/* exactly enough */
		CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
		free(collect(&t, &n));
		CHECK_EQ(121, r.items_completed);
		loom_work_sync_result_free(&r);
		/* without the flag max_items is never read (old callers' padding) */
		c.flags &= ~LOOM_WORK_SYNC_BUDGET;
		c.max_items = 1;
		CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
		free(collect(&t, &n));
		CHECK_EQ(121, r.items_completed);
		loom_work_sync_result_free(&r);
	}
}

/* i32 payloads travel sign-extended: a negative one is a valid i32. */
TEST(i32_payloads_run_sign_extended)
{
	struct loom_work_sync_config c = config(2, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(40, 3);
	size_t n;
	struct seen *s;

	c.payload_type = LOOM_ARG_I32;
	t.odd_node = 2;
	t.odd_child = (uint64_t)(int64_t)INT32_MIN;
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	s = collect(&t, &n);
	/* 40 nodes and the odd child, which is childless (3n+1 wraps past N) */
	CHECK_EQ(41, n);
	CHECK_EQ(41, r.items_completed);
	CHECK(!r.failed);
	free(s);
	loom_work_sync_result_free(&r);
}

/* A child that is no sign-extended int32 fails the run, naming its parent. */
TEST(i32_child_out_of_range_fails_naming_item)
{
	static const uint64_t wide[] = {
		(uint64_t)INT32_MAX + 1,	/* one past */
		0xffffffffULL,			/* -1 zero-extended */
		(uint64_t)(int64_t)INT32_MIN - 1,
		1ULL << 32,
	};

	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
		struct loom_work_sync_config c = config(2, 0);
		struct loom_work_sync_result r;
		struct tree t = tree(40, 3);
		size_t n;

		c.payload_type = LOOM_ARG_I32;
		t.odd_node = 2;
		t.odd_child = wide[i];
		check_failed_run(LOOM_WORK_PAYLOAD_WIDTH, &t, &c);
		c.flags = LOOM_WORK_SYNC_THREADED;
		check_failed_run(LOOM_WORK_PAYLOAD_WIDTH, &t, &c);
		/* the same child is an i64 (and an untyped u64) */
		for (uint32_t type = 0; type <= LOOM_ARG_INDEX; type++) {
			if (type == LOOM_ARG_I32)
				continue;
			t = tree(40, 3);
			t.odd_node = 2;
			t.odd_child = wide[i];
			c.payload_type = type;
			CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
			free(collect(&t, &n));
			CHECK_EQ(41, r.items_completed);
			loom_work_sync_result_free(&r);
		}
	}
}

/* A root outside the payload type, or an uncarriable type: nothing runs. */
TEST(root_payload_width_and_unsupported_type_rejected)
{
	static const uint32_t bad_types[] = {
		LOOM_ARG_MEMREF_I32, LOOM_ARG_MEMREF_I64, LOOM_ARG_F32,
		LOOM_ARG_MEMREF_F32, 99,
	};
	struct loom_work_sync_config c = config(1, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(40, 3);
	size_t n;

	memset(&r, 0xa5, sizeof(r));
	c.payload_type = LOOM_ARG_I32;
	c.root_payload = 0x80000000ULL;
	CHECK_EQ(LOOM_WORK_PAYLOAD_WIDTH, loom_work_sync_run(&c, tree_fn, &t, &r));
	c.root_payload = 0xffffffffULL;
	CHECK_EQ(LOOM_WORK_PAYLOAD_WIDTH, loom_work_sync_run(&c, tree_fn, &t, &r));
	CHECK_EQ(0xa5a5a5a5a5a5a5a5ULL, r.items_run);	/* untouched */
	for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		c.payload_type = bad_types[i];
		c.root_payload = 0;
		CHECK_EQ(LOOM_E_UNSUPPORTED_PAYLOAD,
			 loom_work_sync_run(&c, tree_fn, &t, &r));
	}
	free(collect(&t, &n));
	CHECK_EQ(0, n);		/* no callback ran */
	c.payload_type = LOOM_ARG_I64;
	c.root_payload = 0x80000000ULL;	/* an i64 takes it: one childless item */
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	CHECK_EQ(1, r.items_completed);
	free(collect(&t, &n));
	loom_work_sync_result_free(&r);
}

TEST(no_trace_flag_gives_empty_trace)
{
	struct loom_work_sync_config c = config(2, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(50, 2);
	size_t n;

	c.sched.flags = LOOM_SCHED_NO_TRACE;
	CHECK_OK(loom_work_sync_run(&c, tree_fn, &t, &r));
	free(collect(&t, &n));
	CHECK_EQ(50, r.items_completed);
	CHECK(r.trace != NULL);
	CHECK_EQ(0, loom_sched_trace_count(r.trace));
	loom_work_sync_result_free(&r);
}

TEST(invalid_arguments_rejected)
{
	struct loom_work_sync_config c = config(0, 0);
	struct loom_work_sync_result r;
	struct tree t = tree(1, 1);

	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_sync_run(&c, tree_fn, &t, &r));
	c = config(1, 0);
	c.sched.deque_capacity = 0;
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_sync_run(&c, tree_fn, &t, &r));
	c = config(1, 0);
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_sync_run(&c, NULL, &t, &r));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_sync_run(&c, tree_fn, &t, NULL));
	loom_work_sync_result_free(NULL);
}

/* The device adapter's argument checks need no device. */
TEST(device_adapter_invalid_arguments_rejected)
{
	struct loom_device *devs[1] = { NULL };
	struct loom_work_device_config c = {
		.thread = "t", .devices = devs, .n_devices = 1, .sched.workers = 1,
		.sched.deque_capacity = 1,
	};
	struct loom_work_device_result r;

	/* no image, a NULL device, no devices, no workers, no deque, no result */
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(NULL, &r));
	c.image = (const struct loom_image *)&c;	/* never read: rejected first */
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(&c, &r));
	c.n_devices = 0;
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(&c, &r));
	c.n_devices = 1;
	c.n_args = 2;	/* arguments announced, none given */
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_device_run(&c, NULL));
	loom_work_device_result_free(NULL);
}

int main(void)
{
	RUN(drains_tree_one_callback_per_item);
	RUN(same_ids_and_payloads_for_1_2_4_workers);
	RUN(in_turn_run_is_deterministic);
	RUN(small_run_trace_is_exact);
	RUN(callback_cancellation_cancels_only_its_item);
	RUN(full_deque_fails_with_queue_capacity_naming_item);
	RUN(failure_cancels_rest_of_domain);
	RUN(child_overflow_fails_naming_item);
	RUN(callback_abort_fails_naming_item);
	RUN(cancel_verdict_with_children_fails_naming_item);
	RUN(budget_stops_run_incomplete_with_counters);
	RUN(budget_not_reached_completes);
	RUN(i32_payloads_run_sign_extended);
	RUN(i32_child_out_of_range_fails_naming_item);
	RUN(root_payload_width_and_unsupported_type_rejected);
	RUN(no_trace_flag_gives_empty_trace);
	RUN(invalid_arguments_rejected);
	RUN(device_adapter_invalid_arguments_rejected);
	return checks_done();
}
