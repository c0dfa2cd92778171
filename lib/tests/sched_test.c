// SPDX-License-Identifier: MIT
/*
 * sched_test: the bounded scheduler, one rule per test, single-threaded so
 * every replay trace is exact: the root starts on worker 0, WorkerBusy,
 * own-back pops, cyclic front steals, WouldBlock publication, cancellation
 * of queued and active items, batches, and a trace that holds every
 * successful transition and nothing else.
 */
#include "work_util.h"
#include "sched_internal.h"

#define OCC	7

static struct loom_sched *new_sched(uint32_t workers, uint32_t capacity,
				    uint32_t max_batch, uint32_t flags)
{
	struct loom_sched_config config = {
		/* exact traces name their occurrence: a replay's */
		.replay_occurrence = OCC,
		.workers = workers,
		.deque_capacity = capacity,
		.max_batch = max_batch,
		.flags = flags,
	};
	struct loom_sched *s = NULL;

	if (loom_sched_create(&config, &s))
		return NULL;
	return s;
}

static struct loom_sched_item take(struct loom_sched *s, uint32_t worker)
{
	struct loom_sched_item item;

	memset(&item, 0, sizeof(item));
	CHECK_OK(loom_sched_acquire(s, worker, &item));
	return item;
}

static void publish(struct loom_sched *s, const struct loom_sched_item *parent,
		    size_t count)
{
	uint64_t payloads[16];

	for (size_t i = 0; i < count; i++)
		payloads[i] = parent->payload * 10 + i;
	CHECK_OK(loom_sched_publish(s, parent, payloads, count, NULL));
}

static enum loom_work_status complete(struct loom_sched *s,
				      const struct loom_sched_item *item)
{
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;

	CHECK_OK(loom_sched_complete(s, item, &st));
	return st;
}

static size_t trace_count(struct loom_sched *s)
{
	struct loom_sched_trace *t;
	size_t n;

	/* Taking moves the events out; callers only compare counts. */
	if (loom_sched_take_trace(s, &t))
		return SIZE_MAX;
	n = loom_sched_trace_count(t);
	loom_sched_trace_free(t);
	return n;
}

TEST(root_starts_on_worker_0)
{
	struct loom_sched *s = new_sched(3, 4, 0, 0);
	struct loom_work_resp root;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 42, &root));
	CHECK_EQ(1, loom_sched_queued(s, 0));
	CHECK_EQ(0, loom_sched_queued(s, 1));
	CHECK_EQ(0, loom_sched_queued(s, 2));
	CHECK_EQ(LOOM_WORK_ROOT_CLOSED, loom_sched_admit(s, 43, NULL));
	CHECK_EQ(1, loom_sched_queued(s, 0));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(worker_holds_one_active_item)
{
	struct loom_sched *s = new_sched(2, 4, 0, 0);
	struct loom_sched_item root, other;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 2);
	/* Work is queued on its own deque, yet the worker is busy. */
	CHECK_EQ(LOOM_WORK_WORKER_BUSY, loom_sched_acquire(s, 0, &other));
	CHECK_EQ(LOOM_WORK_WORKER_BUSY, loom_sched_acquire_wait(s, 0, &other));
	CHECK_EQ(2, loom_sched_queued(s, 0));
	complete(s, &root);
	other = take(s, 0);
	CHECK_STR("7:root/1", id_text(&other.id));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/1");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(worker_pops_back_of_own_deque)
{
	struct loom_sched *s = new_sched(1, 8, 0, 0);
	struct loom_sched_item root, item;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_EQ(0, root.from_worker);
	publish(s, &root, 3);
	complete(s, &root);
	/* Last published first: root/2, root/1, root/0. */
	for (int expect = 2; expect >= 0; expect--) {
		item = take(s, 0);
		CHECK_EQ(expect, item.id.ordinal);
		CHECK_EQ(10 + expect, item.payload);
		CHECK_EQ(0, item.from_worker);
		complete(s, &item);
	}
	loom_sched_destroy(s);
}

TEST(steal_takes_front_of_next_nonempty_deque_cyclically)
{
	struct loom_sched *s = new_sched(3, 8, 0, 0);
	struct loom_sched_item root, r0, r00, r01, r1;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 2);		/* deque 0: root/0 root/1 */
	complete(s, &root);
	r0 = take(s, 2);		/* 2 -> 0: the front, root/0 */
	CHECK_EQ(0, r0.from_worker);
	publish(s, &r0, 2);		/* deque 2: root/0/0 root/0/1 */
	/* Worker 1 looks at 2 before 0, and takes 2's front. */
	r00 = take(s, 1);
	CHECK_STR("7:root/0/0", id_text(&r00.id));
	CHECK_EQ(2, r00.from_worker);
	complete(s, &r0);
	r01 = take(s, 2);		/* its own back */
	complete(s, &r00);
	complete(s, &r01);
	r1 = take(s, 2);		/* own deque empty: wraps to 0 */
	CHECK_EQ(0, r1.from_worker);
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &r1));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "steal 2<-0 7:root/0",
		    "publish 2 7:root/0/0", "publish 2 7:root/0/1",
		    "steal 1<-2 7:root/0/0", "complete 2 7:root/0",
		    "acquire-local 2 7:root/0/1", "complete 1 7:root/0/0",
		    "complete 2 7:root/0/1", "steal 2<-0 7:root/1",
		    "complete 2 7:root/1 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(publish_to_full_deque_would_block_acquiring_nothing)
{
	struct loom_sched *s = new_sched(1, 2, 0, 0);
	const struct loom_work_domain *d;
	uint64_t payloads[3] = { 5, 6, 7 };
	struct loom_sched_item root, r1;
	struct loom_sched_trace *t;

	REQUIRE(s);
	d = loom_sched_domain(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_EQ(LOOM_WORK_WOULD_BLOCK,
		 loom_sched_publish(s, &root, payloads, 3, NULL));
	CHECK_EQ(1, loom_work_active_count(d));
	CHECK_EQ(0, loom_sched_queued(s, 0));
	/* No ordinal was used: the next group starts at 0. */
	CHECK_OK(loom_sched_publish(s, &root, payloads, 2, NULL));
	CHECK_EQ(LOOM_WORK_WOULD_BLOCK,
		 loom_sched_publish(s, &root, payloads, 1, NULL));
	CHECK_EQ(3, loom_work_active_count(d));
	complete(s, &root);
	r1 = take(s, 0);		/* frees one slot */
	CHECK_OK(loom_sched_publish(s, &r1, payloads + 2, 1, NULL));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/1",
		    "publish 0 7:root/1/0");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(cancel_queued_item_retires_it)
{
	struct loom_sched *s = new_sched(1, 4, 0, 0);
	enum loom_sched_cancel_effect effect = 0;
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	struct loom_work_resp kids[3];
	uint64_t payloads[3] = { 0, 1, 2 };
	struct loom_sched_item root, item;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_publish(s, &root, payloads, 3, kids));
	CHECK_OK(loom_sched_cancel(s, kids[1], &effect, &st));
	CHECK_EQ(LOOM_SCHED_CANCELLED_QUEUED, effect);
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_EQ(3, loom_work_active_count(loom_sched_domain(s)));
	CHECK_EQ(2, loom_sched_queued(s, 0));
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_sched_cancel(s, kids[1], NULL, NULL));
	complete(s, &root);
	/* The others keep their order: root/2 then root/0. */
	item = take(s, 0);
	CHECK_STR("7:root/2", id_text(&item.id));
	complete(s, &item);
	item = take(s, 0);
	CHECK_STR("7:root/0", id_text(&item.id));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "publish 0 7:root/2", "cancel-queued 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/2",
		    "complete 0 7:root/2", "acquire-local 0 7:root/0");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(cancel_queued_item_can_complete_domain)
{
	struct loom_sched *s = new_sched(2, 4, 0, 0);
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	struct loom_sched_item item;
	struct loom_sched_trace *t;
	struct loom_work_resp root;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, &root));
	CHECK_OK(loom_sched_cancel(s, root, NULL, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 1, &item));
	/* Waiting returns at once (only asked if it cannot block forever). */
	if (loom_sched_acquire(s, 0, &item) == LOOM_WORK_DOMAIN_COMPLETE)
		CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE,
			 loom_sched_acquire_wait(s, 0, &item));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "cancel-queued 0 7:root completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(cancel_active_item_blocks_completion_and_publication)
{
	struct loom_sched *s = new_sched(1, 4, 0, 0);
	enum loom_sched_cancel_effect effect = 0;
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	uint64_t payload = 9;
	struct loom_sched_item root;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_cancel(s, root.resp, &effect, &st));
	CHECK_EQ(LOOM_SCHED_CANCEL_REQUESTED, effect);
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	/* A request is not a retirement. */
	CHECK_EQ(LOOM_WORK_ACTIVE, loom_work_domain_status(loom_sched_domain(s)));
	CHECK_EQ(LOOM_WORK_CANCEL_REQUESTED,
		 loom_sched_publish(s, &root, &payload, 1, NULL));
	CHECK_EQ(LOOM_WORK_CANCEL_REQUESTED, loom_sched_complete(s, &root, &st));
	CHECK_EQ(LOOM_WORK_CANCEL_PENDING, loom_sched_cancel(s, root.resp, NULL, NULL));
	CHECK_EQ(1, loom_work_active_count(loom_sched_domain(s)));
	CHECK_OK(loom_sched_cancel_active(s, &root, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_sched_cancel_active(s, &root, &st));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "cancel-request 0 7:root",
		    "cancel-active 0 7:root completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(cancel_active_needs_a_request)
{
	struct loom_sched *s = new_sched(1, 4, 0, 0);
	struct loom_sched_item root;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_EQ(LOOM_WORK_NO_CANCEL_REQUEST,
		 loom_sched_cancel_active(s, &root, NULL));
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &root));
	CHECK_EQ(3, trace_count(s));
	loom_sched_destroy(s);
}

TEST(acquire_answers_no_work_or_domain_complete)
{
	struct loom_sched *s = new_sched(2, 4, 0, 0);
	struct loom_sched_item root, item;

	REQUIRE(s);
	CHECK_EQ(LOOM_WORK_NO_WORK, loom_sched_acquire(s, 0, &item));
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	/* Idle and empty, but root is active: not completion. */
	CHECK_EQ(LOOM_WORK_NO_WORK, loom_sched_acquire(s, 1, &item));
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &root));
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 1, &item));
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &item));
	loom_sched_destroy(s);
}

/* Every kind of event, in one deterministic run. */
TEST(trace_records_every_transition_in_order)
{
	struct loom_sched *s = new_sched(2, 4, 0, 0);
	struct loom_work_resp kids[3];
	uint64_t payloads[3] = { 1, 2, 3 };
	struct loom_sched_item root, a, b;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_publish(s, &root, payloads, 3, kids));
	CHECK_OK(loom_sched_cancel(s, kids[0], NULL, NULL));	/* queued */
	a = take(s, 1);					/* steals root/1 */
	complete(s, &root);
	b = take(s, 0);					/* root/2 */
	CHECK_OK(loom_sched_cancel(s, a.resp, NULL, NULL));	/* request */
	CHECK_OK(loom_sched_cancel_active(s, &a, NULL));
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &b));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "publish 0 7:root/2", "cancel-queued 0 7:root/0",
		    "steal 1<-0 7:root/1", "complete 0 7:root",
		    "acquire-local 0 7:root/2", "cancel-request 1 7:root/1",
		    "cancel-active 1 7:root/1", "complete 0 7:root/2 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(failed_calls_record_nothing)
{
	struct loom_sched *s = new_sched(2, 1, 0, 0);
	struct loom_sched *other = new_sched(1, 1, 0, 0);
	uint64_t payloads[2] = { 1, 2 };
	struct loom_sched_item root, stale, foreign, item;
	struct loom_work_resp none = { 0, 0 };

	REQUIRE(s && other);
	CHECK_EQ(LOOM_WORK_NO_WORK, loom_sched_acquire(s, 0, &item));
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	CHECK_OK(loom_sched_admit(other, 1, NULL));
	CHECK_EQ(1, trace_count(s));
	root = take(s, 0);
	foreign = take(other, 0);
	stale = root;
	stale.worker = 1;
	CHECK_EQ(LOOM_WORK_ROOT_CLOSED, loom_sched_admit(s, 1, NULL));
	CHECK_EQ(LOOM_WORK_WORKER_BUSY, loom_sched_acquire(s, 0, &item));
	CHECK_EQ(LOOM_WORK_NO_WORK, loom_sched_acquire(s, 1, &item));
	CHECK_EQ(LOOM_WORK_WOULD_BLOCK, loom_sched_publish(s, &root, payloads, 2, NULL));
	CHECK_EQ(LOOM_WORK_NOT_ACTIVE, loom_sched_publish(s, &stale, payloads, 1, NULL));
	CHECK_EQ(LOOM_WORK_NOT_ACTIVE, loom_sched_complete(s, &stale, NULL));
	CHECK_EQ(LOOM_WORK_FOREIGN_DOMAIN, loom_sched_complete(s, &foreign, NULL));
	CHECK_EQ(LOOM_WORK_FOREIGN_DOMAIN, loom_sched_cancel(s, foreign.resp, NULL, NULL));
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_sched_cancel(s, none, NULL, NULL));
	CHECK_EQ(LOOM_WORK_NO_CANCEL_REQUEST, loom_sched_cancel_active(s, &root, NULL));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_sched_acquire(s, 2, &item));
	CHECK_EQ(1, trace_count(s));		/* just the acquisition */
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &root));
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_sched_complete(s, &root, NULL));
	CHECK_EQ(LOOM_WORK_PARENT_RETIRED, loom_sched_publish(s, &root, payloads, 1, NULL));
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_sched_cancel(s, root.resp, NULL, NULL));
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 1, &item));
	CHECK_EQ(1, trace_count(s));		/* just the completion */
	loom_sched_destroy(other);
	loom_sched_destroy(s);
}

TEST(batch_acquires_one_at_a_time_and_publishes_per_item)
{
	struct loom_sched *s = new_sched(2, 8, 3, 0);
	struct loom_sched_item root, batch[4], item;
	struct loom_sched_trace *t;
	size_t n = 99;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 4);
	complete(s, &root);
	/* Asking for 4 gets max_batch = 3, each stolen from 0's front. */
	CHECK_OK(loom_sched_acquire_batch(s, 1, batch, 4, 0, &n));
	REQUIRE_EQ(3, n);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(i, batch[i].id.ordinal);
		CHECK_EQ(1, batch[i].worker);
		CHECK_EQ(0, batch[i].from_worker);
	}
	CHECK_EQ(LOOM_WORK_WORKER_BUSY, loom_sched_acquire_batch(s, 1, batch + 3, 1, 0, &n));
	CHECK_EQ(0, n);
	/* Ran elsewhere; now each item's children, then its retirement. */
	for (int i = 0; i < 3; i++) {
		publish(s, &batch[i], 1);
		complete(s, &batch[i]);
	}
	item = take(s, 1);	/* own deque back: root/2/0 */
	CHECK_STR("7:root/2/0", id_text(&item.id));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "publish 0 7:root/2", "publish 0 7:root/3",
		    "complete 0 7:root", "steal 1<-0 7:root/0",
		    "steal 1<-0 7:root/1", "steal 1<-0 7:root/2",
		    "publish 1 7:root/0/0", "complete 1 7:root/0",
		    "publish 1 7:root/1/0", "complete 1 7:root/1",
		    "publish 1 7:root/2/0", "complete 1 7:root/2",
		    "acquire-local 1 7:root/2/0");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(cancel_all_requests_active_then_cancels_queued)
{
	struct loom_sched *s = new_sched(2, 8, 0, 0);
	uint64_t cancelled = 0;
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	struct loom_sched_item root, a;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 3);
	a = take(s, 1);			/* root/0, stolen */
	CHECK_OK(loom_sched_cancel_all(s, &cancelled, &st));
	CHECK_EQ(2, cancelled);
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_EQ(0, loom_sched_queued(s, 0));
	CHECK_EQ(LOOM_WORK_CANCEL_REQUESTED, loom_sched_complete(s, &root, NULL));
	CHECK_OK(loom_sched_cancel_active(s, &root, &st));
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_OK(loom_sched_cancel_active(s, &a, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "publish 0 7:root/2", "steal 1<-0 7:root/0",
		    "cancel-request 0 7:root", "cancel-request 1 7:root/0",
		    "cancel-queued 0 7:root/1", "cancel-queued 0 7:root/2",
		    "cancel-active 0 7:root",
		    "cancel-active 1 7:root/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/*
 * 65536 queued items, cancelled in one call: each is removed from the
 * front in O(1) (removing by shifting the rest made this quadratic: 8.4 s).
 * The count, the order and the completion are checked, not the time.
 */
TEST(cancel_all_of_65536_queued_items_cancels_front_to_back)
{
	enum { N = 65536 };
	struct loom_sched *s = new_sched(1, N, 0, 0);
	uint64_t *payloads = calloc(N, sizeof(*payloads)), cancelled = 0;
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	const struct loom_sched_event *ev;
	struct loom_sched_trace *t;
	struct loom_sched_item root;
	size_t n, order_bad = 0;

	REQUIRE(s && payloads);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_publish(s, &root, payloads, N, NULL));
	CHECK_EQ(N, loom_sched_queued(s, 0));
	CHECK_OK(loom_sched_cancel_all(s, &cancelled, &st));
	CHECK_EQ(N, cancelled);
	CHECK_EQ(LOOM_WORK_ACTIVE, st);		/* the root is still active */
	CHECK_EQ(0, loom_sched_queued(s, 0));
	CHECK_EQ(1, loom_work_active_count(loom_sched_domain(s)));
	CHECK_OK(loom_sched_cancel_active(s, &root, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_OK(loom_sched_take_trace(s, &t));
	n = loom_sched_trace_count(t);
	ev = loom_sched_trace_events(t);
	/* admit, acquire, N publish, request, N cancel-queued, cancel-active */
	REQUIRE(n == 2 * (size_t)N + 4);
	for (size_t i = 0; i < N; i++) {
		const struct loom_sched_event *e = &ev[N + 3 + i];

		order_bad += e->kind != LOOM_SCHED_EV_CANCEL_QUEUED ||
			     e->item.ordinal != i || e->completes_domain;
	}
	CHECK_EQ(0, order_bad);
	CHECK_STR("cancel-active 0 7:root completes", event_text(&ev[n - 1]));
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
	free(payloads);
}

TEST(publish_complete_is_publish_then_complete)
{
	struct loom_sched *s = new_sched(2, 2, 0, 0);
	uint64_t payloads[3] = { 5, 6, 7 };
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	struct loom_work_resp kids[2];
	struct loom_sched_item root, a, b, stale;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	/* Refusals change nothing: the item stays active and unpublished. */
	CHECK_EQ(LOOM_WORK_WOULD_BLOCK,
		 loom_sched_publish_complete(s, &root, payloads, 3, NULL, &st));
	CHECK_EQ(LOOM_WORK_AWAITING_ROOT, st);
	stale = root;
	stale.worker = 1;
	CHECK_EQ(LOOM_WORK_NOT_ACTIVE,
		 loom_sched_publish_complete(s, &stale, payloads, 1, NULL, NULL));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT,
		 loom_sched_publish_complete(s, &root, NULL, 1, NULL, NULL));
	CHECK_EQ(1, loom_work_active_count(loom_sched_domain(s)));
	CHECK_OK(loom_sched_publish_complete(s, &root, payloads, 2, kids, &st));
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_EQ(2, kids[1].serial - kids[0].serial + 1);
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_sched_complete(s, &root, NULL));
	a = take(s, 0);
	b = take(s, 1);
	CHECK_EQ(6, a.payload);
	CHECK_EQ(5, b.payload);
	/* A pending request refuses it, as publication does. */
	CHECK_OK(loom_sched_cancel(s, a.resp, NULL, NULL));
	CHECK_EQ(LOOM_WORK_CANCEL_REQUESTED,
		 loom_sched_publish_complete(s, &a, NULL, 0, NULL, NULL));
	CHECK_OK(loom_sched_cancel_active(s, &a, &st));
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_OK(loom_sched_publish_complete(s, &b, NULL, 0, NULL, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/1",
		    "steal 1<-0 7:root/0", "cancel-request 0 7:root/1",
		    "cancel-active 0 7:root/1",
		    "complete 1 7:root/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/* loom_sched_publish_complete_next() with the status, no children's handles. */
static enum loom_error step(struct loom_sched *s,
			    const struct loom_sched_item *item,
			    const uint64_t *payloads, size_t count,
			    enum loom_work_status *status,
			    struct loom_sched_item *next, bool *took)
{
	return loom_sched_publish_complete_next(s, item, payloads, count, NULL,
						status, next, took);
}

/*
 * The synchronous adapter's step: publish_complete, then the worker's next
 * item as acquire would take it, under one lock, with the same trace.
 */
TEST(publish_complete_next_is_publish_complete_then_acquire)
{
	struct loom_sched *s = new_sched(2, 2, 2, 0);
	uint64_t payloads[3] = { 5, 6, 7 };
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;
	struct loom_sched_item root, item, other, stolen, batch[2];
	struct loom_work_resp kids[2];
	struct loom_sched_trace *t;
	bool took = true;
	size_t n;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT,
		 step(s, &root, payloads, 1, NULL, NULL, &took));
	/* A refusal takes nothing and leaves the item active. */
	CHECK_EQ(LOOM_WORK_WOULD_BLOCK,
		 step(s, &root, payloads, 3, &st, &item, &took));
	CHECK(!took);
	CHECK_EQ(LOOM_WORK_AWAITING_ROOT, st);
	CHECK_EQ(1, loom_work_active_count(loom_sched_domain(s)));
	/* The newest child comes back at once; @next may be @parent. */
	item = root;
	CHECK_OK(loom_sched_publish_complete_next(s, &item, payloads, 2, kids,
						  &st, &item, &took));
	CHECK(took);
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_EQ(6, item.payload);
	CHECK_EQ(kids[1].serial, item.resp.serial);
	CHECK_EQ(0, item.worker);
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_sched_complete(s, &root, NULL));
	CHECK_EQ(LOOM_WORK_WORKER_BUSY, loom_sched_acquire(s, 0, &other));
	/* Nothing of its own left: it steals, as acquire does. */
	stolen = take(s, 1);
	CHECK_EQ(5, stolen.payload);
	CHECK_OK(step(s, &stolen, payloads + 2, 1, NULL, &other, &took));
	CHECK(took);
	CHECK_EQ(7, other.payload);
	/* Worker 0 steals too; then nothing is left, and nothing is taken. */
	CHECK_OK(loom_sched_publish(s, &other, payloads, 1, NULL));
	CHECK_OK(step(s, &item, NULL, 0, NULL, &root, &took));
	CHECK(took);
	CHECK_EQ(5, root.payload);
	CHECK_EQ(1, root.from_worker);
	CHECK_OK(step(s, &root, NULL, 0, &st, &item, &took));
	CHECK(!took);
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_OK(step(s, &other, NULL, 0, &st, &item, &took));
	CHECK(!took);
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/1",
		    "steal 1<-0 7:root/0", "publish 1 7:root/0/0",
		    "complete 1 7:root/0", "acquire-local 1 7:root/0/0",
		    "publish 1 7:root/0/0/0", "complete 0 7:root/1",
		    "steal 0<-1 7:root/0/0/0", "complete 0 7:root/0/0/0",
		    "complete 1 7:root/0/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);

	/* A worker that still holds an item of its batch takes nothing. */
	s = new_sched(1, 4, 2, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_publish_complete(s, &root, payloads, 3, NULL, NULL));
	CHECK_OK(loom_sched_acquire_batch(s, 0, batch, 2, 0, &n));
	CHECK_EQ(2, n);
	CHECK_OK(step(s, &batch[0], NULL, 0, NULL, &item, &took));
	CHECK(!took);
	CHECK_OK(step(s, &batch[1], NULL, 0, NULL, &item, &took));
	CHECK(took);
	CHECK_EQ(5, item.payload);
	CHECK_OK(step(s, &item, NULL, 0, &st, &item, &took));
	CHECK(!took);
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	loom_sched_destroy(s);
}

/*
 * A script for loom_sched_run_loop(): item p has children 2p and 2p + 1
 * up to @last (a heap); it is handed back when p is @decline, after a
 * cancel request on itself when p is @cancel.  @seen: the payloads run.
 */
struct script {
	struct loom_sched *sched;
	uint64_t last, decline, cancel;
	uint64_t kids[2];
	uint64_t seen[16];
	size_t nseen;
};

static bool script_run(void *arg, const struct loom_sched_item *item,
		       const uint64_t **payloads, size_t *count)
{
	struct script *sc = arg;
	uint64_t p = item->payload;

	if (sc->nseen < 16)
		sc->seen[sc->nseen++] = p;
	if (p == sc->decline)
		return false;
	if (p == sc->cancel)
		CHECK_OK(loom_sched_cancel(sc->sched, item->resp, NULL, NULL));
	*count = 0;
	for (uint64_t c = 2 * p; c <= 2 * p + 1 && c <= sc->last; c++)
		sc->kids[(*count)++] = c;
	*payloads = sc->kids;
	return true;
}

static void check_seen(const struct script *sc, size_t n,
		       const uint64_t *expected)
{
	CHECK_EQ(n, sc->nseen);
	for (size_t i = 0; i < n && i < sc->nseen; i++)
		CHECK_EQ(expected[i], sc->seen[i]);
}

/* The synchronous adapter's loop: acquire, run, publish_complete_next. */
TEST(run_loop_commits_each_item_as_publish_complete_next)
{
	static const uint64_t lifo[] = { 1, 3, 2, 5, 4 };
	struct loom_sched *s = new_sched(1, 4, 1, 0);
	struct script sc = { .sched = s, .last = 5 };
	struct loom_sched_loop loop = { .run = script_run, .ctx = &sc };
	struct loom_sched_trace *t;
	struct loom_sched_item item;

	REQUIRE(s);
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT,
		 loom_sched_run_loop(s, 1, &loop, &item));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT,
		 loom_sched_run_loop(s, 0, NULL, &item));
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE,
		 loom_sched_run_loop(s, 0, &loop, &item));
	check_seen(&sc, 5, lifo);
	CHECK_EQ(5, loop.completed);
	CHECK_EQ(4, loop.published);
	CHECK_EQ(LOOM_OK, loop.refused);
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/1",
		    "complete 0 7:root/1", "acquire-local 0 7:root/0",
		    "publish 0 7:root/0/0", "publish 0 7:root/0/1",
		    "complete 0 7:root/0", "acquire-local 0 7:root/0/1",
		    "complete 0 7:root/0/1", "acquire-local 0 7:root/0/0",
		    "complete 0 7:root/0/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/* What the loop hands back is still held; the caller settles it. */
TEST(run_loop_hands_back_declined_and_refused_items)
{
	static const uint64_t declined[] = { 1, 3, 2, 5, 4 };
	struct loom_sched *s = new_sched(1, 4, 1, 0);
	struct script sc = { .sched = s, .last = 5, .decline = 3 };
	struct loom_sched_loop loop = { .run = script_run, .ctx = &sc };
	enum loom_work_status st;
	struct loom_sched_item item;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	CHECK_OK(loom_sched_run_loop(s, 0, &loop, &item));
	CHECK_EQ(LOOM_OK, loop.refused);
	CHECK_EQ(3, item.payload);
	CHECK_EQ(1, loop.completed);
	/* Settled by the caller, then the loop goes on with the rest. */
	CHECK_OK(loom_sched_complete(s, &item, NULL));
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE,
		 loom_sched_run_loop(s, 0, &loop, &item));
	check_seen(&sc, 5, declined);
	CHECK_EQ(4, loop.completed);
	loom_sched_destroy(s);

	/* Two children on a deque of one: refused, nothing published. */
	s = new_sched(1, 1, 1, 0);
	REQUIRE(s);
	sc = (struct script){ .sched = s, .last = 3 };
	loop = (struct loom_sched_loop){ .run = script_run, .ctx = &sc };
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	CHECK_OK(loom_sched_run_loop(s, 0, &loop, &item));
	CHECK_EQ(LOOM_WORK_WOULD_BLOCK, loop.refused);
	CHECK_EQ(1, item.payload);
	CHECK_EQ(0, loop.completed);
	CHECK_EQ(1, loom_work_active_count(loom_sched_domain(s)));
	CHECK_EQ(0, loom_sched_queued(s, 0));
	CHECK_OK(loom_sched_cancel(s, item.resp, NULL, NULL));
	CHECK_OK(loom_sched_cancel_active(s, &item, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	loom_sched_destroy(s);

	/* A cancel request made while the item ran: refused, still held. */
	s = new_sched(1, 4, 1, 0);
	REQUIRE(s);
	sc = (struct script){ .sched = s, .last = 5, .cancel = 2 };
	loop = (struct loom_sched_loop){ .run = script_run, .ctx = &sc };
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	CHECK_OK(loom_sched_run_loop(s, 0, &loop, &item));
	CHECK_EQ(LOOM_WORK_CANCEL_REQUESTED, loop.refused);
	CHECK_EQ(2, item.payload);
	CHECK_EQ(0, loom_sched_queued(s, 0));
	CHECK_OK(loom_sched_cancel_active(s, &item, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE,
		 loom_sched_run_loop(s, 0, &loop, &item));
	CHECK_EQ(2, loop.completed);
	loom_sched_destroy(s);
}

/* A worker with nothing of its own steals, as acquire does. */
TEST(run_loop_steals_when_its_deque_is_empty)
{
	struct loom_sched *s = new_sched(2, 4, 1, 0);
	struct script sc = { .sched = s, .last = 3, .decline = 3 };
	struct loom_sched_loop loop = { .run = script_run, .ctx = &sc };
	struct loom_sched_item held, stolen;
	enum loom_work_status st;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	CHECK_OK(loom_sched_run_loop(s, 0, &loop, &held));
	CHECK_EQ(3, held.payload);
	sc.decline = 2;
	CHECK_OK(loom_sched_run_loop(s, 1, &loop, &stolen));
	CHECK_EQ(2, stolen.payload);
	CHECK_EQ(1, stolen.worker);
	CHECK_EQ(0, stolen.from_worker);
	CHECK_OK(loom_sched_complete(s, &held, &st));
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_OK(loom_sched_complete(s, &stolen, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_EQ(1, loop.completed);
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "complete 0 7:root", "acquire-local 0 7:root/1",
		    "steal 1<-0 7:root/0", "complete 0 7:root/1",
		    "complete 1 7:root/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/*
 * A worker's publications take serials from a block of its own (no shared
 * write per publication): consecutive within a group and a worker, from
 * another block for another worker; serials never issued stay invalid.
 */
TEST(workers_take_serials_from_blocks_of_their_own)
{
	struct loom_sched *s = new_sched(2, 8, 1, 0);
	uint64_t payloads[3] = { 1, 2, 3 };
	struct loom_work_resp kids[3], more[2], next;
	struct loom_sched_item root, stolen;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	CHECK_EQ(1, root.resp.serial);
	CHECK_OK(loom_sched_publish(s, &root, payloads, 3, kids));
	CHECK_EQ(kids[0].serial + 1, kids[1].serial);
	CHECK_EQ(kids[1].serial + 1, kids[2].serial);
	stolen = take(s, 1);
	CHECK_EQ(kids[0].serial, stolen.resp.serial);
	CHECK_OK(loom_sched_publish(s, &stolen, payloads, 2, more));
	CHECK(more[0].serial >= kids[0].serial + LOOM_WORK_LANE_SERIALS);
	CHECK_EQ(more[0].serial + 1, more[1].serial);
	CHECK_OK(loom_sched_publish(s, &root, payloads, 1, &next));
	CHECK_EQ(kids[2].serial + 1, next.serial);
	/* Reserved by worker 0, never issued: not a responsibility. */
	next.serial++;
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_sched_cancel(s, next, NULL, NULL));
	/* The root and its 4 children, the stolen one's 2 */
	CHECK_EQ(7, loom_work_active_count(loom_sched_domain(s)));
	loom_sched_destroy(s);
}

TEST(trace_take_moves_events_and_outlives_scheduler)
{
	struct loom_sched *s = new_sched(1, 4, 0, 0);
	struct loom_sched_trace *first, *second;
	struct loom_sched_item root;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 1);
	CHECK_OK(loom_sched_take_trace(s, &first));
	complete(s, &root);
	CHECK_OK(loom_sched_take_trace(s, &second));
	loom_sched_destroy(s);
	/* The ids still point at live storage (ASan would say otherwise). */
	CHECK_TRACE(first, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0");
	CHECK_TRACE(second, "complete 0 7:root");
	loom_sched_trace_free(first);
	loom_sched_trace_free(second);
}

/*
 * The completing retirement must be the last event.  It keeps the number it
 * took before it was elected when that is still the last one taken (a
 * fresh one would leave a hole, and a trace with a hole must be compacted
 * when taken); only a thief's lost race can have taken one since.
 */
TEST(completing_retirement_keeps_its_number_when_it_is_last)
{
	struct loom_sched *s = new_sched(1, 4, 0, 0);
	struct loom_sched_item root, kid;
	struct loom_sched_trace *t;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 1);
	complete(s, &root);
	kid = take(s, 0);
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &kid));
	/* admit, acquire, publish, complete, acquire, complete: 6 numbers */
	CHECK_EQ(6, atomic_load(&loom_sched_domain(s)->trace_seq));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "complete 0 7:root",
		    "acquire-local 0 7:root/0", "complete 0 7:root/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

TEST(no_trace_flag_records_nothing)
{
	struct loom_sched *s = new_sched(1, 4, 0, LOOM_SCHED_NO_TRACE);
	struct loom_sched_item root;

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 1, NULL));
	root = take(s, 0);
	publish(s, &root, 2);
	complete(s, &root);
	CHECK_EQ(0, trace_count(s));
	loom_sched_destroy(s);
}

TEST(identity_independent_of_worker_and_payload)
{
	struct loom_sched *one = new_sched(1, 4, 0, 0);
	struct loom_sched *two = new_sched(2, 4, 0, 0);
	struct loom_sched_item r1, r2, a1, b0, b1;
	uint64_t p1[2] = { 111, 222 }, p2[2] = { 9, 9 };

	REQUIRE(one && two);
	CHECK_OK(loom_sched_admit(one, 5, NULL));
	CHECK_OK(loom_sched_admit(two, 6, NULL));
	r1 = take(one, 0);		/* local */
	r2 = take(two, 1);		/* stolen, another payload */
	CHECK(loom_item_id_equal(&r1.id, &r2.id));
	CHECK_OK(loom_sched_publish(one, &r1, p1, 2, NULL));
	CHECK_OK(loom_sched_publish(two, &r2, p2, 2, NULL));
	complete(one, &r1);
	complete(two, &r2);
	a1 = take(one, 0);		/* root/1: own back on worker 0 */
	b0 = take(two, 0);		/* root/0: stolen from worker 1's front */
	b1 = take(two, 1);		/* root/1: own back on worker 1 */
	CHECK_STR("7:root/1", id_text(&a1.id));
	CHECK(loom_item_id_equal(&a1.id, &b1.id));
	CHECK_EQ(loom_item_id_hash(&a1.id), loom_item_id_hash(&b1.id));
	CHECK(a1.payload != b1.payload && a1.worker != b1.worker);
	CHECK(!loom_item_id_equal(&a1.id, &b0.id));
	loom_sched_destroy(one);
	loom_sched_destroy(two);
}

/*
 * A commit as adapter_work.c makes one: begin for worker 0 of @s with the
 * @n_batch items of @batch, a step per record, end.  *@out gets the
 * result.
 */
static void commit_run(struct loom_sched *s, const struct loom_sched_item *batch,
		       uint32_t n_batch, const struct loom_sched_step *steps,
		       size_t n_steps, uint32_t fail_held,
		       struct loom_sched_item *items, bool *live,
		       const struct loom_sched_carry *carry,
		       struct loom_sched_commit *out)
{
	struct loom_sched_held held[8];

	loom_sched_commit_begin(out, s, 0, batch, n_batch, held, 8);
	for (size_t i = 0; i < n_steps; i++)
		loom_sched_commit_step(out, &steps[i], items ? &items[i] : NULL);
	loom_sched_commit_end(out, fail_held, carry, live);
}

/*
 * A commit of what an execution-local scheduler ran: the root ran with
 * its children 0 and 2 (2 with a child of its own), child 1 was left.
 * The same transactions, in record order, as publishing and completing
 * by hand: taken children never queue, the left one does, and can be
 * stolen.
 */
TEST(commit_run_publishes_takes_and_completes_in_record_order)
{
	struct loom_sched *s = new_sched(2, 4, 2, 0);
	uint64_t root_kids[3] = { 10, 11, 12 }, kid2_kids[1] = { 120 };
	bool root_taken[3] = { true, false, true }, kid2_taken[1] = { true };
	struct loom_sched_step steps[4] = {
		{ .held = 0, .count = 3, .payloads = root_kids, .taken = root_taken },
		{ .held = 1, .count = 0 },		/* root/0 */
		{ .held = 2, .count = 1, .payloads = kid2_kids, .taken = kid2_taken },
		{ .held = 3, .count = 0 },		/* root/2/0 */
	};
	struct loom_sched_item root, items[4], left;
	struct loom_sched_commit out;
	struct loom_sched_trace *t;
	bool live[1];

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, steps, 4, UINT32_MAX,
			      items, live, NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(4, out.completed);
	CHECK_EQ(0, out.cancelled);
	CHECK_EQ(4, out.published);
	CHECK(!out.has_failed);
	CHECK(!live[0]);
	CHECK_EQ(12, items[2].payload);
	CHECK_EQ(2, items[2].id.ordinal);
	CHECK_EQ(1, loom_sched_queued(s, 0));
	left = take(s, 1);				/* steals root/1 */
	CHECK_EQ(11, left.payload);
	CHECK_EQ(LOOM_WORK_COMPLETED, complete(s, &left));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "publish 0 7:root/2", "acquire-local 0 7:root/0",
		    "acquire-local 0 7:root/2", "complete 0 7:root",
		    "complete 0 7:root/0", "publish 0 7:root/2/0",
		    "acquire-local 0 7:root/2/0", "complete 0 7:root/2",
		    "complete 0 7:root/2/0", "steal 1<-0 7:root/1",
		    "complete 1 7:root/1 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/*
 * The same run as above, with a cancel request on the root made while the
 * device ran it: what ran still gets its responsibility, before it is
 * visible, and retires once.  The root publishes its children as one
 * group and queues none: the two that ran are held, the left one is
 * cancelled at once; then each item that ran is cancelled in record
 * order, root/2 after publishing its own child.  Every record is
 * reported; the last cancellation completes the domain.
 */
TEST(commit_run_under_a_cancel_request_retires_what_ran)
{
	struct loom_sched *s = new_sched(2, 4, 2, 0);
	uint64_t root_kids[3] = { 10, 11, 12 }, kid2_kids[1] = { 120 };
	bool root_taken[3] = { true, false, true }, kid2_taken[1] = { true };
	struct loom_sched_step steps[4] = {
		{ .held = 0, .count = 3, .payloads = root_kids, .taken = root_taken },
		{ .held = 1, .count = 0 },		/* root/0 */
		{ .held = 2, .count = 1, .payloads = kid2_kids, .taken = kid2_taken },
		{ .held = 3, .count = 0 },		/* root/2/0 */
	};
	struct loom_sched_item root, items[4];
	struct loom_sched_commit out;
	struct loom_sched_trace *t;
	bool live[1];

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_cancel_all(s, NULL, NULL));
	commit_run(s, &root, 1, steps, 4, UINT32_MAX, items, live, NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(0, out.completed);
	CHECK_EQ(5, out.cancelled);
	CHECK_EQ(4, out.published);
	CHECK(!live[0]);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(0, items[i].worker);
	CHECK_STR("7:root/2/0", id_text(&items[3].id));
	CHECK_EQ(120, items[3].payload);
	CHECK_EQ(0, loom_sched_queued(s, 0));
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 1, &root));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "cancel-request 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "publish 0 7:root/2", "acquire-local 0 7:root/0",
		    "cancel-queued 0 7:root/1", "acquire-local 0 7:root/2",
		    "cancel-active 0 7:root",
		    "cancel-request 0 7:root/0", "cancel-active 0 7:root/0",
		    "publish 0 7:root/2/0", "acquire-local 0 7:root/2/0",
		    "cancel-request 0 7:root/2", "cancel-active 0 7:root/2",
		    "cancel-request 0 7:root/2/0",
		    "cancel-active 0 7:root/2/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/*
 * A refused step (no room for what it leaves) and a failing item name
 * the item and cancel it; taken children without a step are cancelled;
 * batch items without one stay active; a cancel request cancels its
 * item, and the children it took (they ran) are still published, held
 * and cancelled.
 */
TEST(commit_run_cancels_what_it_cannot_complete)
{
	struct loom_sched *s = new_sched(1, 1, 2, 0);
	uint64_t kids[2] = { 1, 2 };
	bool left2[2] = { false, false }, taken2[2] = { true, true };
	struct loom_sched_step refused = { 0, 2, kids, left2 };
	struct loom_sched_step took = { 0, 2, kids, taken2 };
	struct loom_sched_item root, items[1];
	struct loom_sched_commit out;
	bool live[1];

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	/* two left on a deque of one: refused, the root named and cancelled */
	commit_run(s, &root, 1, &refused, 1, UINT32_MAX, items, live, NULL, &out);
	CHECK_EQ(LOOM_WORK_QUEUE_CAPACITY, out.error);
	CHECK(out.has_failed);
	CHECK(loom_item_id_is_root(&out.failed.id));
	CHECK_EQ(1, out.cancelled);
	CHECK(!live[0]);
	CHECK_EQ(LOOM_SCHED_NO_WORKER, items[0].worker);
	loom_sched_destroy(s);

	/* the root completes; its taken children have no step: cancelled */
	s = new_sched(1, 1, 2, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, &took, 1, 2, items,
			      live, NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(1, out.completed);
	CHECK_EQ(2, out.cancelled);
	CHECK(out.has_failed);
	CHECK_EQ(1, out.failed.id.ordinal);	/* held 2: root/1 */
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE,
		 loom_sched_acquire(s, 0, &root));
	loom_sched_destroy(s);

	/* no step: the batch item stays active; a request then cancels it */
	s = new_sched(1, 4, 2, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, NULL, 0, UINT32_MAX,
			      NULL, live, NULL, &out);
	CHECK(live[0]);
	CHECK_OK(loom_sched_cancel(s, root.resp, NULL, NULL));
	commit_run(s, &root, 1, &took, 1, UINT32_MAX,
			      items, live, NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(0, out.completed);
	CHECK_EQ(3, out.cancelled);
	CHECK_EQ(2, out.published);
	CHECK(!live[0]);
	CHECK_EQ(0, items[0].worker);		/* it ran: reported */
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE,
		 loom_sched_acquire(s, 0, &root));
	loom_sched_destroy(s);
}

/*
 * Within a commit only the retirement that leaves no taken child held
 * looks for completion: the domain completes with the last one, whether
 * it completes (every child ran) or is cancelled (the device failed on
 * it), and with no earlier one.
 */
TEST(commit_run_completes_the_domain_with_its_last_retirement)
{
	uint64_t kids[2] = { 1, 2 }, grandkid[1] = { 3 };
	bool taken2[2] = { true, true }, taken1[1] = { true };
	struct loom_sched_step all[4] = {
		{ .held = 0, .count = 2, .payloads = kids, .taken = taken2 },
		{ .held = 1, .count = 1, .payloads = grandkid, .taken = taken1 },
		{ .held = 2, .count = 0 },		/* root/1 */
		{ .held = 3, .count = 0 },		/* root/0/0 */
	};
	struct loom_sched_item root, items[4];
	struct loom_sched_commit out;
	struct loom_sched_trace *t;
	struct loom_sched *s = new_sched(1, 4, 1, 0);
	bool live[1];

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, all, 4, UINT32_MAX,
			      items, live, NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(4, out.completed);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &root));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "acquire-local 0 7:root/0", "acquire-local 0 7:root/1",
		    "complete 0 7:root", "publish 0 7:root/0/0",
		    "acquire-local 0 7:root/0/0", "complete 0 7:root/0",
		    "complete 0 7:root/1", "complete 0 7:root/0/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);

	/* the device failed on root/0/0: its cancellation completes */
	s = new_sched(1, 4, 1, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, all, 3, 3, items, live,
			      NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(3, out.completed);
	CHECK_EQ(1, out.cancelled);
	CHECK(out.has_failed);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &root));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "acquire-local 0 7:root/0", "acquire-local 0 7:root/1",
		    "complete 0 7:root", "publish 0 7:root/0/0",
		    "acquire-local 0 7:root/0/0", "complete 0 7:root/0",
		    "complete 0 7:root/1", "cancel-request 0 7:root/0/0",
		    "cancel-active 0 7:root/0/0 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/*
 * A carry: what the device runs next stays with the worker.  The root ran
 * with child 0 (whose own child was left), child 1 was carried: it is
 * active on the worker (acquire-local, like a taken child), the next
 * commit completes it, and the left grandchild is queued meanwhile.
 */
TEST(commit_run_carries_held_items_into_the_next_batch)
{
	uint64_t kids[2] = { 1, 2 }, grandkid[1] = { 3 };
	bool taken2[2] = { true, true }, left1[1] = { false };
	struct loom_sched_step steps[2] = {
		{ .held = 0, .count = 2, .payloads = kids, .taken = taken2 },
		{ .held = 1, .count = 1, .payloads = grandkid, .taken = left1 },
	};
	struct loom_sched_step next = { .held = 0, .count = 0 };
	uint32_t carry_held[1] = { 2 };		/* root/1 */
	struct loom_sched_item root, carried[1], item, dummy;
	struct loom_sched_carry carry = { carry_held, 1, carried };
	struct loom_sched_commit out;
	struct loom_sched_trace *t;
	struct loom_sched *s = new_sched(2, 4, 1, 0);
	bool live[1];

	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, steps, 2, UINT32_MAX,
			      NULL, live, &carry, &out);
	CHECK_OK(out.error);
	CHECK_EQ(2, out.completed);
	CHECK_EQ(0, out.cancelled);
	CHECK(!live[0]);
	CHECK_EQ(0, carried[0].worker);
	CHECK_EQ(2, carried[0].payload);
	CHECK_STR("7:root/1", id_text(&carried[0].id));
	CHECK_EQ(LOOM_WORK_WORKER_BUSY, loom_sched_acquire(s, 0, &dummy));
	item = take(s, 1);			/* steals root/0/0 */
	CHECK_STR("7:root/0/0", id_text(&item.id));
	CHECK_EQ(LOOM_WORK_ACTIVE, complete(s, &item));
	commit_run(s, carried, 1, &next, 1, UINT32_MAX,
			      NULL, live, NULL, &out);
	CHECK_OK(out.error);
	CHECK_EQ(1, out.completed);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &dummy));
	CHECK_OK(loom_sched_take_trace(s, &t));
	CHECK_TRACE(t, "admit 0 7:root", "acquire-local 0 7:root",
		    "publish 0 7:root/0", "publish 0 7:root/1",
		    "acquire-local 0 7:root/0", "acquire-local 0 7:root/1",
		    "complete 0 7:root", "publish 0 7:root/0/0",
		    "complete 0 7:root/0", "steal 1<-0 7:root/0/0",
		    "complete 1 7:root/0/0", "complete 0 7:root/1 completes");
	loom_sched_trace_free(t);
	loom_sched_destroy(s);
}

/*
 * What is carried is reported, and what cannot be is never lost: a batch
 * item not run yet is carried as itself; a child with no free active slot
 * is cancelled with the commit; a child of a cancelled item that runs next
 * is carried with a cancel request of its own, and the next commit
 * cancels it; a refused step carries nothing.
 */
TEST(commit_run_reports_what_it_cannot_carry)
{
	uint64_t kids[2] = { 5, 6 };
	bool taken[2] = { true, true }, left[2] = { false, false };
	struct loom_sched_step one = { 0, 1, kids, taken };
	struct loom_sched_step two = { 0, 2, kids, taken };
	struct loom_sched_step refused = { 0, 2, kids, left };
	struct loom_sched_step done[2] = { { .held = 0 }, { .held = 1 } };
	uint32_t unrun_and_child[2] = { 1, 2 }, children[2] = { 1, 2 };
	struct loom_sched_item root, batch[2], carried[2];
	struct loom_sched_carry carry = { unrun_and_child, 2, carried };
	struct loom_sched_commit out;
	struct loom_sched *s = new_sched(1, 4, 2, 0);
	bool live[2];
	size_t n;

	/* batch item 0 ran (one child carried), batch item 1 did not */
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	publish(s, &root, 2);
	CHECK_EQ(LOOM_WORK_ACTIVE, complete(s, &root));
	CHECK_OK(loom_sched_acquire_batch(s, 0, batch, 2, 0, &n));
	CHECK_EQ(2, n);
	commit_run(s, batch, 2, &one, 1, UINT32_MAX,
			      NULL, live, &carry, &out);
	CHECK_OK(out.error);
	CHECK(!live[0] && live[1]);
	CHECK(loom_item_id_equal(&batch[1].id, &carried[0].id));
	CHECK_EQ(0, carried[0].worker);
	CHECK_EQ(0, carried[1].worker);
	CHECK_EQ(5, carried[1].payload);
	commit_run(s, carried, 2, done, 2, UINT32_MAX,
			      NULL, live, NULL, &out);
	CHECK_EQ(2, out.completed);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &root));
	loom_sched_destroy(s);

	/* one active slot: the second child does not fit and is cancelled */
	s = new_sched(1, 4, 1, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	carry.held = children;
	commit_run(s, &root, 1, &two, 1, UINT32_MAX,
			      NULL, live, &carry, &out);
	CHECK_EQ(1, out.completed);
	CHECK_EQ(1, out.cancelled);
	CHECK_EQ(0, carried[0].worker);
	CHECK_EQ(LOOM_SCHED_NO_WORKER, carried[1].worker);
	commit_run(s, carried, 1, done, 1, UINT32_MAX,
			      NULL, live, NULL, &out);
	CHECK_EQ(1, out.completed);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &root));
	loom_sched_destroy(s);

	/* a cancelled item's children the device runs next: carried, cancelled */
	s = new_sched(1, 4, 2, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	CHECK_OK(loom_sched_cancel(s, root.resp, NULL, NULL));
	commit_run(s, &root, 1, &two, 1, UINT32_MAX,
			      NULL, live, &carry, &out);
	CHECK_EQ(1, out.cancelled);
	CHECK_EQ(2, out.published);
	CHECK_EQ(0, carried[0].worker);
	CHECK_EQ(0, carried[1].worker);
	CHECK_EQ(LOOM_WORK_CANCEL_REQUESTED, loom_sched_complete(s, &carried[0], NULL));
	commit_run(s, carried, 2, done, 2, UINT32_MAX,
			      NULL, live, NULL, &out);
	CHECK_EQ(0, out.completed);
	CHECK_EQ(2, out.cancelled);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &root));
	loom_sched_destroy(s);

	/* a refused step (two left on a deque of one) carries nothing */
	s = new_sched(1, 1, 2, 0);
	REQUIRE(s);
	CHECK_OK(loom_sched_admit(s, 100, NULL));
	root = take(s, 0);
	commit_run(s, &root, 1, &refused, 1, UINT32_MAX, NULL, live, &carry, &out);
	CHECK_EQ(LOOM_WORK_QUEUE_CAPACITY, out.error);
	CHECK_EQ(LOOM_SCHED_NO_WORKER, carried[0].worker);
	CHECK_EQ(LOOM_SCHED_NO_WORKER, carried[1].worker);
	CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, loom_sched_acquire(s, 0, &root));
	loom_sched_destroy(s);
}

TEST(invalid_configurations_rejected)
{
	struct loom_sched_config config = { .workers = 0, .deque_capacity = 1 };
	struct loom_sched *s = NULL;

	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_sched_create(&config, &s));
	config.workers = 1;
	config.deque_capacity = 0;
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_sched_create(&config, &s));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_sched_create(NULL, &s));
	CHECK(s == NULL);
}

TEST(event_names)
{
	CHECK_STR("admit", loom_sched_event_name(LOOM_SCHED_EV_ADMIT));
	CHECK_STR("acquire-local", loom_sched_event_name(LOOM_SCHED_EV_ACQUIRE_LOCAL));
	CHECK_STR("steal", loom_sched_event_name(LOOM_SCHED_EV_STEAL));
	CHECK_STR("publish", loom_sched_event_name(LOOM_SCHED_EV_PUBLISH));
	CHECK_STR("cancel-request", loom_sched_event_name(LOOM_SCHED_EV_CANCEL_REQUEST));
	CHECK_STR("cancel-queued", loom_sched_event_name(LOOM_SCHED_EV_CANCEL_QUEUED));
	CHECK_STR("cancel-active", loom_sched_event_name(LOOM_SCHED_EV_CANCEL_ACTIVE));
	CHECK_STR("complete", loom_sched_event_name(LOOM_SCHED_EV_COMPLETE));
}

int main(void)
{
	RUN(root_starts_on_worker_0);
	RUN(worker_holds_one_active_item);
	RUN(worker_pops_back_of_own_deque);
	RUN(steal_takes_front_of_next_nonempty_deque_cyclically);
	RUN(publish_to_full_deque_would_block_acquiring_nothing);
	RUN(cancel_queued_item_retires_it);
	RUN(cancel_queued_item_can_complete_domain);
	RUN(cancel_active_item_blocks_completion_and_publication);
	RUN(cancel_active_needs_a_request);
	RUN(acquire_answers_no_work_or_domain_complete);
	RUN(trace_records_every_transition_in_order);
	RUN(failed_calls_record_nothing);
	RUN(batch_acquires_one_at_a_time_and_publishes_per_item);
	RUN(cancel_all_requests_active_then_cancels_queued);
	RUN(cancel_all_of_65536_queued_items_cancels_front_to_back);
	RUN(publish_complete_is_publish_then_complete);
	RUN(publish_complete_next_is_publish_complete_then_acquire);
	RUN(run_loop_commits_each_item_as_publish_complete_next);
	RUN(run_loop_hands_back_declined_and_refused_items);
	RUN(run_loop_steals_when_its_deque_is_empty);
	RUN(workers_take_serials_from_blocks_of_their_own);
	RUN(trace_take_moves_events_and_outlives_scheduler);
	RUN(completing_retirement_keeps_its_number_when_it_is_last);
	RUN(no_trace_flag_records_nothing);
	RUN(identity_independent_of_worker_and_payload);
	RUN(commit_run_publishes_takes_and_completes_in_record_order);
	RUN(commit_run_under_a_cancel_request_retires_what_ran);
	RUN(commit_run_cancels_what_it_cannot_complete);
	RUN(commit_run_completes_the_domain_with_its_last_retirement);
	RUN(commit_run_carries_held_items_into_the_next_batch);
	RUN(commit_run_reports_what_it_cannot_carry);
	RUN(invalid_configurations_rejected);
	RUN(event_names);
	return checks_done();
}
