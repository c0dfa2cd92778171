// SPDX-License-Identifier: MIT
/*
 * stress_test: the scheduler under real threads.  Workers block for work
 * (no sleeps, no timing): the outcome is checked, not the schedule.
 *
 *   - exactly-once completion: 2 and 4 threads drain a tree of ITEMS items
 *     (at least a million; fewer under TSan, whose cost is per access);
 *     every item runs once and exactly one retirement reports completion;
 *   - random cancellation: workers cancel their own items, their children
 *     and items other workers published, racing with the owners; no item is
 *     lost or run twice, every item retires once, completion is reported
 *     once, and the trace agrees;
 *   - the synchronous adapter's worker loop over a tree of ITEMS items,
 *     with and without callbacks that cancel their items: every item that
 *     should run runs once, and the run's counts add up.
 *
 * Even workers publish, complete and acquire in three calls; odd ones in
 * one (loom_sched_publish_complete_next(), the step of the synchronous
 * adapter's loop), so both paths race each other.
 *
 * The tree: an item's payload is the size of its subtree; it spawns up to
 * BRANCHING children that share the rest as evenly as possible.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "work_util.h"
#include "sched_internal.h"

#ifdef __SANITIZE_THREAD__
#define ITEMS		200000
#define CANCEL_ITEMS	60000
#else
#define ITEMS		1000000
#define CANCEL_ITEMS	300000
#endif
#define BRANCHING	4
#define CAPACITY	256
#define MAX_THREADS	4
#define RECENT		256

/* A subtree of @size items: its root's children's sizes into @out. */
static size_t split(uint64_t size, uint64_t *out)
{
	uint64_t rest = size - 1;
	size_t k = rest < BRANCHING ? (size_t)rest : BRANCHING;

	for (size_t i = 0; i < k; i++)
		out[i] = rest / k + (i < rest % k);
	return k;
}

/*
 * Per-item facts, indexed by responsibility serial.  Serials are unique
 * but not dense (workers reserve them in blocks): the ledger has room for
 * the items and a block left unissued per lane, and any serial beyond it
 * is counted as out of range.
 */
struct ledger {
	atomic_uchar *issued;		/* admitted or published */
	atomic_uchar *ran;		/* times acquired */
	atomic_uchar *retired;		/* times a retirement said OK */
	atomic_uchar *cancelled_queued;
	atomic_ullong out_of_range;
	size_t size;
};

struct stress {
	struct loom_sched *sched;
	struct loom_work_resp root;
	struct ledger ledger;
	atomic_uint completions;	/* retirements that reported completion */
	atomic_ullong published;
	atomic_ullong steals;
	atomic_uint failures;		/* unexpected answers */
	bool cancelling;
	/* Serials recently published, for cross-thread cancellation. */
	_Atomic uint64_t recent[RECENT];
};

struct worker {
	struct stress *st;
	uint32_t index;
	uint64_t rng;
	pthread_t thread;
};

static bool ledger_init(struct ledger *l, size_t items, uint32_t threads)
{
	l->size = items + (threads + 1) * (size_t)LOOM_WORK_LANE_SERIALS + 2;
	l->issued = calloc(l->size, 1);
	l->ran = calloc(l->size, 1);
	l->retired = calloc(l->size, 1);
	l->cancelled_queued = calloc(l->size, 1);
	atomic_init(&l->out_of_range, 0);
	return l->issued && l->ran && l->retired && l->cancelled_queued;
}

static void ledger_free(struct ledger *l)
{
	free(l->issued);
	free(l->ran);
	free(l->retired);
	free(l->cancelled_queued);
}

/* Counters only: the thread join orders them before the checks. */
static void bump(atomic_uchar *counters, struct ledger *l, uint64_t serial)
{
	if (serial < l->size)
		atomic_fetch_add_explicit(&counters[serial], 1,
					  memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&l->out_of_range, 1,
					  memory_order_relaxed);
}

static void unexpected(struct stress *st, enum loom_error err)
{
	printf("#   unexpected: %s\n", loom_strerror(err));
	atomic_fetch_add_explicit(&st->failures, 1, memory_order_relaxed);
}

static void retired(struct stress *st, uint64_t serial,
		    enum loom_work_status status)
{
	bump(st->ledger.retired, &st->ledger, serial);
	if (status == LOOM_WORK_COMPLETED)
		atomic_fetch_add_explicit(&st->completions, 1,
					  memory_order_relaxed);
}

static uint64_t next_random(struct worker *w)
{
	/* xorshift64: deterministic per worker; the schedule is not. */
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static bool one_in(struct worker *w, unsigned int n)
{
	return w->st->cancelling && next_random(w) % n == 0;
}

/* Cancels any item by handle; the answer depends on where it is now. */
static void try_cancel(struct stress *st, struct loom_work_resp resp)
{
	enum loom_sched_cancel_effect effect;
	enum loom_work_status status;
	enum loom_error err;

	err = loom_sched_cancel(st->sched, resp, &effect, &status);
	if (!err && effect == LOOM_SCHED_CANCELLED_QUEUED) {
		bump(st->ledger.cancelled_queued, &st->ledger, resp.serial);
		retired(st, resp.serial, status);
	} else if (err && err != LOOM_WORK_RESP_USED &&
		   err != LOOM_WORK_CANCEL_PENDING) {
		unexpected(st, err);
	}
}

static void cancel_own(struct stress *st, const struct loom_sched_item *item)
{
	enum loom_work_status status;
	enum loom_error err;

	err = loom_sched_cancel_active(st->sched, item, &status);
	if (err)
		unexpected(st, err);
	else
		retired(st, item->resp.serial, status);
}

static void finish(struct worker *w, const struct loom_sched_item *item)
{
	struct stress *st = w->st;
	enum loom_work_status status;
	enum loom_error err;

	err = loom_sched_complete(st->sched, item, &status);
	if (err == LOOM_WORK_CANCEL_REQUESTED)
		cancel_own(st, item);
	else if (err)
		unexpected(st, err);
	else
		retired(st, item->resp.serial, status);
}

/*
 * Publishes @item's children and completes it; with @next, in one step
 * that also takes the worker's next item: returns whether it did.
 */
static bool publish_children(struct worker *w, const struct loom_sched_item *item,
			     struct loom_sched_item *next)
{
	struct stress *st = w->st;
	struct loom_work_resp kids[BRANCHING];
	uint64_t sizes[BRANCHING];
	size_t k = split(item->payload, sizes);
	enum loom_work_status status;
	bool took = false;
	enum loom_error err;

	if (next)
		err = loom_sched_publish_complete_next(st->sched, item, sizes,
						       k, kids, &status, next,
						       &took);
	else
		err = loom_sched_publish(st->sched, item, sizes, k, kids);
	if (err == LOOM_WORK_CANCEL_REQUESTED) {
		cancel_own(st, item);
		return false;
	}
	if (err) {
		unexpected(st, err);
		return false;
	}
	if (next)
		retired(st, item->resp.serial, status);
	atomic_fetch_add_explicit(&st->published, k, memory_order_relaxed);
	for (size_t i = 0; i < k; i++) {
		bump(st->ledger.issued, &st->ledger, kids[i].serial);
		atomic_store_explicit(&st->recent[next_random(w) % RECENT],
				      kids[i].serial, memory_order_relaxed);
		if (one_in(w, 16))
			try_cancel(st, kids[i]);
	}
	if (one_in(w, 8)) {
		uint64_t serial = atomic_load_explicit(
			&st->recent[next_random(w) % RECENT],
			memory_order_relaxed);

		if (serial)
			try_cancel(st, (struct loom_work_resp){
				st->root.domain_key, serial });
	}
	if (!next)
		finish(w, item);
	return took;
}

static bool run_item(struct worker *w, const struct loom_sched_item *item,
		     struct loom_sched_item *next)
{
	struct stress *st = w->st;

	bump(st->ledger.ran, &st->ledger, item->resp.serial);
	if (item->from_worker != item->worker)
		atomic_fetch_add_explicit(&st->steals, 1, memory_order_relaxed);
	if (one_in(w, 32)) {
		/* Cancel itself: a request, then the cancellation. */
		try_cancel(st, item->resp);
		cancel_own(st, item);
		return false;
	}
	return publish_children(w, item, next);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct loom_sched_item item, next;
	enum loom_error err;
	bool held = false;

	for (;;) {
		if (!held) {
			err = loom_sched_acquire_wait(w->st->sched, w->index,
						      &item);
			if (err)
				break;
		}
		held = run_item(w, &item, w->index % 2 ? &next : NULL);
		if (held)
			item = next;
	}
	if (err != LOOM_WORK_DOMAIN_COMPLETE)
		unexpected(w->st, err);
	return NULL;
}

/* Runs @threads workers over a tree of @items; false if setup failed. */
static bool run(struct stress *st, uint32_t threads, uint64_t items,
		bool cancelling, uint32_t flags)
{
	struct loom_sched_config config = {
		.workers = threads,
		.deque_capacity = CAPACITY, .flags = flags,
	};
	struct worker workers[MAX_THREADS];
	uint32_t started = 0;

	memset(st, 0, sizeof(*st));
	st->cancelling = cancelling;
	if (!ledger_init(&st->ledger, items, threads) ||
	    loom_sched_create(&config, &st->sched))
		return false;
	/* Workers may start before the root: they wait for it. */
	for (uint32_t i = 0; i < threads; i++) {
		workers[i] = (struct worker){ .st = st, .index = i,
					      .rng = 0x9e3779b97f4a7c15ULL * (i + 1) };
		if (pthread_create(&workers[i].thread, NULL, worker_main,
				   &workers[i]))
			break;
		started++;
	}
	if (loom_sched_admit(st->sched, items, &st->root))
		unexpected(st, LOOM_WORK_ROOT_CLOSED);
	else
		bump(st->ledger.issued, &st->ledger, st->root.serial);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(workers[i].thread, NULL);
	return started == threads;
}

static void done(struct stress *st)
{
	loom_sched_destroy(st->sched);
	ledger_free(&st->ledger);
}

static void check_exactly_once(uint32_t threads)
{
	struct stress st;
	const struct loom_work_domain *d;
	uint64_t twice = 0, never = 0, issued = 0, stray = 0;

	REQUIRE(run(&st, threads, ITEMS, false, LOOM_SCHED_NO_TRACE));
	d = loom_sched_domain(st.sched);
	CHECK_EQ(0, atomic_load(&st.failures));
	CHECK_EQ(1, atomic_load(&st.completions));
	CHECK_EQ(ITEMS - 1, atomic_load(&st.published));
	CHECK_EQ(LOOM_WORK_COMPLETED, loom_work_domain_status(d));
	CHECK_EQ(0, loom_work_active_count(d));
	for (uint64_t s = 0; s < st.ledger.size; s++) {
		if (!st.ledger.issued[s]) {
			stray += st.ledger.ran[s] || st.ledger.retired[s];
			continue;
		}
		issued++;
		twice += st.ledger.issued[s] > 1 || st.ledger.ran[s] > 1 ||
			 st.ledger.retired[s] > 1;
		never += st.ledger.ran[s] == 0 || st.ledger.retired[s] == 0;
	}
	CHECK_EQ(ITEMS, issued);
	CHECK_EQ(0, twice);
	CHECK_EQ(0, never);
	CHECK_EQ(0, stray);
	CHECK_EQ(0, atomic_load(&st.ledger.out_of_range));
	printf("# %u threads: %d items, %llu steals\n", threads, ITEMS,
	       (unsigned long long)atomic_load(&st.steals));
	done(&st);
}

TEST(exactly_once_completion_2_threads)
{
	check_exactly_once(2);
}

TEST(exactly_once_completion_4_threads)
{
	check_exactly_once(4);
}

static int by_id(const void *a, const void *b)
{
	return loom_item_id_compare(a, b);
}

/* A set of ids (open addressing on the structural hash). */
struct id_set {
	struct loom_item_id *slots;
	bool *used;
	size_t mask;
};

static bool id_set_init(struct id_set *set, size_t max)
{
	size_t size = 64;

	while (size < 2 * max)
		size *= 2;
	set->slots = calloc(size, sizeof(*set->slots));
	set->used = calloc(size, sizeof(*set->used));
	set->mask = size - 1;
	return set->slots && set->used;
}

static size_t id_set_find(const struct id_set *set, const struct loom_item_id *id)
{
	size_t i = loom_item_id_hash(id) & set->mask;

	while (set->used[i] && !loom_item_id_equal(&set->slots[i], id))
		i = (i + 1) & set->mask;
	return i;
}

static void id_set_add(struct id_set *set, const struct loom_item_id *id)
{
	size_t i = id_set_find(set, id);

	set->used[i] = true;
	set->slots[i] = *id;
}

static bool id_set_has(const struct id_set *set, const struct loom_item_id *id)
{
	return set->used[id_set_find(set, id)];
}

static void id_set_free(struct id_set *set)
{
	free(set->slots);
	free(set->used);
}

/*
 * Replays @trace: no item publishes a child after its cancellation was
 * requested (the request blocks publication).
 */
static void check_no_publish_after_request(const struct loom_sched_trace *trace)
{
	const struct loom_sched_event *ev = loom_sched_trace_events(trace);
	size_t n = loom_sched_trace_count(trace), late = 0, requests = 0;
	struct loom_item_id parent;
	struct id_set requested;

	for (size_t i = 0; i < n; i++)
		requests += ev[i].kind == LOOM_SCHED_EV_CANCEL_REQUEST;
	REQUIRE(id_set_init(&requested, requests));
	for (size_t i = 0; i < n; i++) {
		if (ev[i].kind == LOOM_SCHED_EV_CANCEL_REQUEST)
			id_set_add(&requested, &ev[i].item);
		if (ev[i].kind == LOOM_SCHED_EV_PUBLISH &&
		    loom_item_id_parent(&ev[i].item, &parent) &&
		    id_set_has(&requested, &parent))
			late++;
	}
	CHECK_EQ(0, late);
	CHECK(requests > 0);
	id_set_free(&requested);
}

/* Every item has exactly one retirement event in @trace; @items of them. */
static void check_trace_retirements(const struct loom_sched_trace *trace,
				    uint64_t items)
{
	const struct loom_sched_event *ev = loom_sched_trace_events(trace);
	size_t n = loom_sched_trace_count(trace), count = 0, dups = 0;
	size_t kinds[LOOM_SCHED_EV_COMPLETE + 1] = { 0 }, completes = 0;
	struct loom_item_id *ids = malloc((n + 1) * sizeof(*ids));

	REQUIRE(ids);
	for (size_t i = 0; i < n; i++) {
		kinds[ev[i].kind]++;
		completes += ev[i].completes_domain;
		if (ev[i].kind == LOOM_SCHED_EV_COMPLETE ||
		    ev[i].kind == LOOM_SCHED_EV_CANCEL_QUEUED ||
		    ev[i].kind == LOOM_SCHED_EV_CANCEL_ACTIVE)
			ids[count++] = ev[i].item;
	}
	qsort(ids, count, sizeof(*ids), by_id);
	for (size_t i = 1; i < count; i++)
		dups += loom_item_id_equal(&ids[i - 1], &ids[i]);
	CHECK_EQ(0, dups);
	CHECK_EQ(items, count);
	CHECK_EQ(1, kinds[LOOM_SCHED_EV_ADMIT]);
	CHECK_EQ(items - 1, kinds[LOOM_SCHED_EV_PUBLISH]);
	CHECK_EQ(kinds[LOOM_SCHED_EV_CANCEL_REQUEST],
		 kinds[LOOM_SCHED_EV_CANCEL_ACTIVE]);
	CHECK_EQ(kinds[LOOM_SCHED_EV_ACQUIRE_LOCAL] + kinds[LOOM_SCHED_EV_STEAL],
		 kinds[LOOM_SCHED_EV_COMPLETE] + kinds[LOOM_SCHED_EV_CANCEL_ACTIVE]);
	CHECK_EQ(1, completes);
	CHECK(n && ev[n - 1].completes_domain);
	free(ids);
}

static void check_random_cancellation(uint32_t threads)
{
	struct stress st;
	struct loom_sched_trace *trace = NULL;
	uint64_t items, lost = 0, twice = 0, ran_cancelled = 0, queued = 0;
	uint64_t issued = 0, stray = 0;

	REQUIRE(run(&st, threads, CANCEL_ITEMS, true, 0));
	items = atomic_load(&st.published) + 1;
	CHECK_EQ(0, atomic_load(&st.failures));
	CHECK_EQ(1, atomic_load(&st.completions));
	CHECK_EQ(LOOM_WORK_COMPLETED,
		 loom_work_domain_status(loom_sched_domain(st.sched)));
	for (uint64_t s = 0; s < st.ledger.size; s++) {
		if (!st.ledger.issued[s]) {
			stray += st.ledger.ran[s] || st.ledger.retired[s] ||
				 st.ledger.cancelled_queued[s];
			continue;
		}
		issued++;
		lost += st.ledger.retired[s] == 0;
		twice += st.ledger.issued[s] > 1 || st.ledger.ran[s] > 1 ||
			 st.ledger.retired[s] > 1;
		/* A queued cancellation means it never ran, else it ran once. */
		ran_cancelled += st.ledger.cancelled_queued[s] &&
				 st.ledger.ran[s];
		queued += st.ledger.cancelled_queued[s];
		lost += !st.ledger.cancelled_queued[s] && !st.ledger.ran[s];
	}
	CHECK_EQ(items, issued);
	CHECK_EQ(0, lost);
	CHECK_EQ(0, twice);
	CHECK_EQ(0, stray);
	CHECK_EQ(0, atomic_load(&st.ledger.out_of_range));
	CHECK_EQ(0, ran_cancelled);
	CHECK(queued > 0);		/* cancellation really happened */
	CHECK(items < CANCEL_ITEMS);
	printf("# %u threads: %llu items, %llu cancelled while queued, %llu steals\n",
	       threads, (unsigned long long)items, (unsigned long long)queued,
	       (unsigned long long)atomic_load(&st.steals));
	CHECK_OK(loom_sched_take_trace(st.sched, &trace));
	if (trace) {
		check_trace_retirements(trace, items);
		check_no_publish_after_request(trace);
	}
	loom_sched_trace_free(trace);
	done(&st);
}

TEST(random_cancellation_2_threads_no_item_lost_or_run_twice)
{
	check_random_cancellation(2);
}

TEST(random_cancellation_4_threads_no_item_lost_or_run_twice)
{
	check_random_cancellation(4);
}

/*
 * The synchronous adapter's worker loop (loom_sched_run_loop()) at the
 * same scale: a complete BRANCHING-ary tree of ITEMS nodes in heap order
 * (payload = node), every node whose mix is 0 mod @cancel_every cancelled
 * by its callback (its subtree never spawned; 0: none).  Every node that
 * should run runs exactly once, and the counts add up.
 */
struct loop_tree {
	atomic_uchar *ran;
	uint64_t cancel_every;
};

static bool cancels(const struct loop_tree *t, uint64_t node)
{
	return t->cancel_every && node &&
	       (node * 0x9e3779b97f4a7c15ULL >> 40) % t->cancel_every == 0;
}

static enum loom_work_sync_verdict loop_node(void *ctx,
					     const struct loom_sched_item *item,
					     uint64_t *children,
					     size_t capacity, size_t *count)
{
	struct loop_tree *t = ctx;
	uint64_t node = item->payload;

	(void)capacity;
	if (node < ITEMS)
		atomic_fetch_add_explicit(&t->ran[node], 1,
					  memory_order_relaxed);
	if (cancels(t, node))
		return LOOM_WORK_SYNC_CANCEL;
	for (uint64_t c = BRANCHING * node + 1;
	     c <= BRANCHING * node + BRANCHING && c < ITEMS; c++)
		children[(*count)++] = c;
	return LOOM_WORK_SYNC_CHILDREN;
}

static void check_loop(uint32_t threads, uint64_t cancel_every)
{
	struct loom_work_sync_config config = {
		.sched.workers = threads, .sched.deque_capacity = CAPACITY,
		.child_capacity = BRANCHING,
		.flags = LOOM_WORK_SYNC_THREADED,
		.sched.flags = LOOM_SCHED_NO_TRACE,
	};
	struct loop_tree t = { .cancel_every = cancel_every };
	uint64_t expected = 0, cancelled = 0, wrong = 0;
	struct loom_work_sync_result r;
	bool *runs = calloc(ITEMS, sizeof(*runs));

	t.ran = calloc(ITEMS, 1);
	REQUIRE(t.ran && runs);
	/* Heap order: a node runs iff its parent ran and was not cancelled. */
	for (uint64_t v = 0; v < ITEMS; v++) {
		runs[v] = !v || (runs[(v - 1) / BRANCHING] &&
				 !cancels(&t, (v - 1) / BRANCHING));
		expected += runs[v];
		cancelled += runs[v] && cancels(&t, v);
	}
	CHECK_OK(loom_work_sync_run(&config, loop_node, &t, &r));
	for (uint64_t v = 0; v < ITEMS; v++)
		wrong += atomic_load(&t.ran[v]) != runs[v];
	CHECK_EQ(0, wrong);
	CHECK_EQ(expected, r.items_run);
	CHECK_EQ(expected - cancelled, r.items_completed);
	CHECK_EQ(cancelled, r.items_cancelled);
	CHECK_EQ(expected - 1, r.children_published);
	CHECK(!r.failed);
	CHECK(!cancel_every || cancelled > 0);
	printf("# %u threads: %llu items, %llu cancelled, %llu steals\n",
	       threads, (unsigned long long)expected,
	       (unsigned long long)cancelled, (unsigned long long)r.steals);
	loom_work_sync_result_free(&r);
	free(t.ran);
	free(runs);
}

TEST(adapter_loop_runs_each_item_once_2_threads)
{
	check_loop(2, 0);
}

TEST(adapter_loop_runs_each_item_once_4_threads)
{
	check_loop(4, 0);
}

TEST(adapter_loop_with_cancelling_callbacks_4_threads)
{
	check_loop(4, 211);
}

int main(void)
{
	RUN(exactly_once_completion_2_threads);
	RUN(exactly_once_completion_4_threads);
	RUN(random_cancellation_2_threads_no_item_lost_or_run_twice);
	RUN(random_cancellation_4_threads_no_item_lost_or_run_twice);
	RUN(adapter_loop_runs_each_item_once_2_threads);
	RUN(adapter_loop_runs_each_item_once_4_threads);
	RUN(adapter_loop_with_cancelling_callbacks_4_threads);
	return checks_done();
}
