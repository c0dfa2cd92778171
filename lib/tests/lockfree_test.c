// SPDX-License-Identifier: MIT
/*
 * lockfree_test: the scheduler's lock-free paths under real threads (run
 * under ASan/UBSan and under TSan by the Makefile).  Outcomes are checked,
 * never timing:
 *
 *   - the last item of a deque: an owner's pop and a thief's steal race
 *     for every item of a long chain; each item runs exactly once;
 *   - completion: two workers retire a domain's last two items at once,
 *     over and over; exactly one retirement reports completion each time;
 *   - the replay trace of threaded runs (4 workers, steals, cancellations,
 *     and a cancel_all racing the running workers) replays exactly: every
 *     steal takes its victim's front, every local acquisition its own
 *     deque's back, every retirement an item queued or active there, and
 *     the completing retirement is the last event;
 *   - a worker blocked in acquire (parked) is woken by work and by
 *     completion.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "work_util.h"

#ifdef __SANITIZE_THREAD__
#define CHAIN		20000
#define ROUNDS		300
#define TREE_DEPTH	11
#else
#define CHAIN		200000
#define ROUNDS		3000
#define TREE_DEPTH	14
#endif

/* ------------------------------------------------- the last item race --- */

/*
 * A chain: item k publishes one child (k + 1) until CHAIN.  Its worker
 * then pops that child itself while another thread keeps stealing from
 * it, so every item is the last one of a deque, raced for on top.
 */
struct chain {
	struct loom_sched *sched;
	atomic_uchar *ran;
	atomic_uint failures;
	atomic_uint completions;
	atomic_bool done;
	atomic_ullong stolen;
};

static void chain_run(struct chain *c, const struct loom_sched_item *item)
{
	uint64_t next = item->payload + 1;
	enum loom_work_status status = LOOM_WORK_ACTIVE;
	enum loom_error err;

	atomic_fetch_add_explicit(&c->ran[item->payload], 1,
				  memory_order_relaxed);
	err = loom_sched_publish_complete(c->sched, item, &next,
					  next < CHAIN ? 1 : 0, NULL, &status);
	if (err)
		atomic_fetch_add(&c->failures, 1);
	if (status == LOOM_WORK_COMPLETED)
		atomic_fetch_add(&c->completions, 1);
}

static void *chain_thief(void *arg)
{
	struct chain *c = arg;
	struct loom_sched_item item;
	enum loom_error err;

	while ((err = loom_sched_acquire(c->sched, 1, &item)) !=
	       LOOM_WORK_DOMAIN_COMPLETE) {
		if (err == LOOM_WORK_NO_WORK)
			continue;
		if (err) {
			atomic_fetch_add(&c->failures, 1);
			break;
		}
		atomic_fetch_add(&c->stolen, 1);
		chain_run(c, &item);
	}
	return NULL;
}

TEST(owner_pop_and_steal_race_for_every_last_item)
{
	struct loom_sched_config config = {
		.workers = 2, .deque_capacity = 1,
		.flags = LOOM_SCHED_NO_TRACE,
	};
	struct chain c = { 0 };
	struct loom_sched_item item;
	uint64_t twice = 0, never = 0;
	pthread_t thief;
	enum loom_error err;

	c.ran = calloc(CHAIN, 1);
	REQUIRE(c.ran);
	REQUIRE(!loom_sched_create(&config, &c.sched));
	CHECK_OK(loom_sched_admit(c.sched, 0, NULL));
	REQUIRE(!pthread_create(&thief, NULL, chain_thief, &c));
	while ((err = loom_sched_acquire(c.sched, 0, &item)) !=
	       LOOM_WORK_DOMAIN_COMPLETE) {
		if (err == LOOM_WORK_NO_WORK)
			continue;
		if (err) {
			atomic_fetch_add(&c.failures, 1);
			break;
		}
		chain_run(&c, &item);
	}
	pthread_join(thief, NULL);
	for (size_t i = 0; i < CHAIN; i++) {
		twice += c.ran[i] > 1;
		never += c.ran[i] == 0;
	}
	CHECK_EQ(0, atomic_load(&c.failures));
	CHECK_EQ(0, twice);
	CHECK_EQ(0, never);
	CHECK_EQ(1, atomic_load(&c.completions));
	CHECK_EQ(0, loom_work_active_count(loom_sched_domain(c.sched)));
	printf("# %d items, %llu stolen\n", CHAIN,
	       (unsigned long long)atomic_load(&c.stolen));
	loom_sched_destroy(c.sched);
	free(c.ran);
}

/* ------------------------------------------- racing last retirements --- */

/*
 * Each round: a root with two children, one on each worker (the second
 * stolen); both workers complete theirs at once.  The last two
 * retirements race; exactly one may report completion.
 */
struct rounds {
	pthread_barrier_t start, end;
	struct loom_sched *sched;	/* this round's */
	atomic_uint completions;
	atomic_uint failures;
	atomic_uint bad_rounds;
};

static void *round_worker(void *arg)
{
	struct rounds *r = ((void **)arg)[0];
	uint32_t worker = (uint32_t)(uintptr_t)((void **)arg)[1];

	for (int i = 0; i < ROUNDS; i++) {
		struct loom_sched_item item;
		enum loom_work_status status = LOOM_WORK_ACTIVE;

		pthread_barrier_wait(&r->start);
		if (loom_sched_acquire(r->sched, worker, &item) ||
		    loom_sched_complete(r->sched, &item, &status))
			atomic_fetch_add(&r->failures, 1);
		if (status == LOOM_WORK_COMPLETED)
			atomic_fetch_add(&r->completions, 1);
		pthread_barrier_wait(&r->end);
	}
	return NULL;
}

TEST(racing_last_retirements_complete_exactly_once)
{
	struct loom_sched_config config = {
		.workers = 2, .deque_capacity = 4,
	};
	struct rounds r = { 0 };
	void *args[2][2] = { { &r, (void *)0 }, { &r, (void *)1 } };
	uint64_t kids[2] = { 1, 2 };
	pthread_t threads[2];

	REQUIRE(!pthread_barrier_init(&r.start, NULL, 3));
	REQUIRE(!pthread_barrier_init(&r.end, NULL, 3));
	for (int t = 0; t < 2; t++)
		REQUIRE(!pthread_create(&threads[t], NULL, round_worker,
					args[t]));
	for (int i = 0; i < ROUNDS; i++) {
		struct loom_sched_item root;
		struct loom_sched_trace *trace = NULL;
		const struct loom_sched_event *ev;
		size_t n;

		REQUIRE(!loom_sched_create(&config, &r.sched));
		atomic_store(&r.completions, 0);
		CHECK_OK(loom_sched_admit(r.sched, 0, NULL));
		CHECK_OK(loom_sched_acquire(r.sched, 0, &root));
		CHECK_OK(loom_sched_publish_complete(r.sched, &root, kids, 2,
						     NULL, NULL));
		pthread_barrier_wait(&r.start);
		pthread_barrier_wait(&r.end);
		CHECK_OK(loom_sched_take_trace(r.sched, &trace));
		n = loom_sched_trace_count(trace);
		ev = loom_sched_trace_events(trace);
		/* admit, acquire, 2 publish, complete; 2 x (take, complete) */
		if (atomic_load(&r.completions) != 1 || n != 9 ||
		    !ev[n - 1].completes_domain ||
		    loom_work_domain_status(loom_sched_domain(r.sched)) !=
		    LOOM_WORK_COMPLETED)
			atomic_fetch_add(&r.bad_rounds, 1);
		loom_sched_trace_free(trace);
		loom_sched_destroy(r.sched);
	}
	for (int t = 0; t < 2; t++)
		pthread_join(threads[t], NULL);
	CHECK_EQ(0, atomic_load(&r.failures));
	CHECK_EQ(0, atomic_load(&r.bad_rounds));
	pthread_barrier_destroy(&r.start);
	pthread_barrier_destroy(&r.end);
}

/* ------------------------------------------------------------ replay --- */

/* One simulated deque of ids: [front, back). */
struct sim_deque {
	struct loom_item_id *ids;
	size_t front, back;
};

struct replay {
	struct sim_deque *deques;
	struct loom_item_id *active;	/* one per worker (batch 1) */
	bool *busy;
	uint32_t workers;
	size_t bad;			/* events that do not replay */
	size_t first_bad;
};

static bool replay_init(struct replay *r, uint32_t workers, size_t events)
{
	r->workers = workers;
	r->bad = 0;
	r->first_bad = SIZE_MAX;
	r->deques = calloc(workers, sizeof(*r->deques));
	r->active = calloc(workers, sizeof(*r->active));
	r->busy = calloc(workers, sizeof(*r->busy));
	if (!r->deques || !r->active || !r->busy)
		return false;
	for (uint32_t w = 0; w < workers; w++) {
		r->deques[w].ids = calloc(events + 1, sizeof(struct loom_item_id));
		if (!r->deques[w].ids)
			return false;
	}
	return true;
}

static void replay_free(struct replay *r)
{
	for (uint32_t w = 0; r->deques && w < r->workers; w++)
		free(r->deques[w].ids);
	free(r->deques);
	free(r->active);
	free(r->busy);
}

/* Removes @id from @d wherever it is; false if it is not queued there. */
static bool sim_remove(struct sim_deque *d, const struct loom_item_id *id)
{
	for (size_t i = d->front; i < d->back; i++) {
		if (!loom_item_id_equal(&d->ids[i], id))
			continue;
		memmove(&d->ids[i], &d->ids[i + 1],
			(d->back - i - 1) * sizeof(*d->ids));
		d->back--;
		return true;
	}
	return false;
}

static bool replay_one(struct replay *r, const struct loom_sched_event *ev)
{
	struct loom_item_id parent;
	struct sim_deque *d;

	if (ev->worker >= r->workers)
		return false;
	d = &r->deques[ev->worker];
	switch (ev->kind) {
	case LOOM_SCHED_EV_ADMIT:
		d->ids[d->back++] = ev->item;
		return ev->worker == 0;
	case LOOM_SCHED_EV_PUBLISH:
		d->ids[d->back++] = ev->item;
		return r->busy[ev->worker] &&
		       loom_item_id_parent(&ev->item, &parent) &&
		       loom_item_id_equal(&parent, &r->active[ev->worker]);
	case LOOM_SCHED_EV_ACQUIRE_LOCAL:
		if (r->busy[ev->worker] || d->back == d->front ||
		    !loom_item_id_equal(&d->ids[d->back - 1], &ev->item))
			return false;
		d->back--;
		break;
	case LOOM_SCHED_EV_STEAL:
		if (ev->other_worker >= r->workers || r->busy[ev->worker])
			return false;
		d = &r->deques[ev->other_worker];
		if (d->back == d->front ||
		    !loom_item_id_equal(&d->ids[d->front], &ev->item))
			return false;
		d->front++;
		break;
	case LOOM_SCHED_EV_CANCEL_QUEUED:
		return sim_remove(d, &ev->item);
	case LOOM_SCHED_EV_CANCEL_REQUEST:
		return r->busy[ev->worker] &&
		       loom_item_id_equal(&r->active[ev->worker], &ev->item);
	case LOOM_SCHED_EV_COMPLETE:
	case LOOM_SCHED_EV_CANCEL_ACTIVE:
		if (!r->busy[ev->worker] ||
		    !loom_item_id_equal(&r->active[ev->worker], &ev->item))
			return false;
		r->busy[ev->worker] = false;
		return true;
	default:
		return false;
	}
	r->busy[ev->worker] = true;
	r->active[ev->worker] = ev->item;
	return true;
}

/* Replays @trace of a run with @workers workers; checks it holds. */
static void check_replay(const struct loom_sched_trace *trace, uint32_t workers)
{
	const struct loom_sched_event *ev = loom_sched_trace_events(trace);
	size_t n = loom_sched_trace_count(trace), completes = 0, left = 0;
	struct replay r;

	REQUIRE(n > 0);
	REQUIRE(replay_init(&r, workers, n));
	for (size_t i = 0; i < n; i++) {
		completes += ev[i].completes_domain;
		if (!replay_one(&r, &ev[i]) && r.bad++ == 0)
			r.first_bad = i;
	}
	for (uint32_t w = 0; w < workers; w++)
		left += r.busy[w] + (r.deques[w].back - r.deques[w].front);
	if (r.bad)
		printf("#   first event that does not replay: %zu of %zu, %s\n",
		       r.first_bad, n, event_text(&ev[r.first_bad]));
	CHECK_EQ(0, r.bad);
	CHECK_EQ(0, left);
	CHECK_EQ(1, completes);
	CHECK(ev[n - 1].completes_domain);
	replay_free(&r);
}

/*
 * A full tree of TREE_DEPTH levels, fan-out 2; payload = depth.  Some
 * items cancel themselves (mode 1); one aborts the run (mode 2).
 */
struct tree_ctx {
	int mode;
	atomic_uint aborted;
};

static enum loom_work_sync_verdict
tree_fn(void *arg, const struct loom_sched_item *item, uint64_t *children,
	size_t capacity, size_t *count)
{
	struct tree_ctx *ctx = arg;
	uint64_t h = loom_item_id_hash(&item->id);

	(void)capacity;
	if (ctx->mode == 1 && item->payload > 2 && h % 61 == 0)
		return LOOM_WORK_SYNC_CANCEL;
	if (ctx->mode == 2 && item->payload == TREE_DEPTH - 3 && h % 7 == 0 &&
	    !atomic_exchange(&ctx->aborted, 1))
		return LOOM_WORK_SYNC_ABORT;
	if (item->payload + 1 < TREE_DEPTH) {
		children[0] = children[1] = item->payload + 1;
		*count = 2;
	}
	return LOOM_WORK_SYNC_CHILDREN;
}

static void check_threaded_trace(uint32_t workers, int mode)
{
	struct loom_work_sync_config config = {
		.root_payload = 0, .sched.workers = workers,
		.sched.deque_capacity = 64, .child_capacity = 2,
		.flags = LOOM_WORK_SYNC_THREADED,
	};
	struct tree_ctx ctx = { .mode = mode };
	struct loom_work_sync_result result;
	enum loom_error err;
	uint64_t items = (1ull << TREE_DEPTH) - 1;

	err = loom_work_sync_run(&config, tree_fn, &ctx, &result);
	if (mode == 2) {
		CHECK_EQ(LOOM_WORK_CALLBACK_ABORTED, err);
		CHECK(result.failed);
		CHECK(result.items_run < items);
	} else {
		CHECK_OK(err);
	}
	if (mode == 0)
		CHECK_EQ(items, result.items_run);
	/* Everything that ran, or was queued and cancelled, retired once. */
	CHECK_EQ(result.children_published + 1,
		 result.items_completed + result.items_cancelled);
	if (mode == 1)
		CHECK(result.items_cancelled > 0);
	check_replay(result.trace, workers);
	printf("# %u workers: %llu run, %llu cancelled, %llu steals\n", workers,
	       (unsigned long long)result.items_run,
	       (unsigned long long)result.items_cancelled,
	       (unsigned long long)result.steals);
	loom_work_sync_result_free(&result);
}

TEST(threaded_trace_replays_exactly_4_workers)
{
	check_threaded_trace(4, 0);
}

TEST(threaded_trace_with_cancellations_replays_exactly_4_workers)
{
	check_threaded_trace(4, 1);
}

TEST(cancel_all_racing_running_workers_drains_2_workers)
{
	check_threaded_trace(2, 2);
}

TEST(cancel_all_racing_running_workers_drains_4_workers)
{
	check_threaded_trace(4, 2);
}

/* ----------------------------------------------------------- parking --- */

struct parked {
	struct loom_sched *sched;
	uint32_t worker;
	enum loom_error first, last;
	int ran;
};

static void *parked_worker(void *arg)
{
	struct parked *p = arg;
	struct loom_sched_item item;

	/* Blocks (parks) until the root is admitted or stolen. */
	p->first = loom_sched_acquire_wait(p->sched, p->worker, &item);
	while (p->first == LOOM_OK) {
		p->ran++;
		if (loom_sched_complete(p->sched, &item, NULL))
			break;
		p->last = loom_sched_acquire_wait(p->sched, p->worker, &item);
		if (p->last)
			break;
	}
	return NULL;
}

TEST(parked_workers_wake_for_work_and_for_completion)
{
	struct loom_sched_config config = {
		.workers = 4, .deque_capacity = 4,
	};
	struct parked p[4];
	pthread_t threads[4];
	struct loom_sched *s;
	int ran = 0;

	REQUIRE(!loom_sched_create(&config, &s));
	for (uint32_t i = 0; i < 4; i++) {
		p[i] = (struct parked){ .sched = s, .worker = i,
					.last = LOOM_WORK_DOMAIN_COMPLETE };
		REQUIRE(!pthread_create(&threads[i], NULL, parked_worker, &p[i]));
	}
	/* One item: one worker runs it, three wake only for completion. */
	CHECK_OK(loom_sched_admit(s, 0, NULL));
	for (uint32_t i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		ran += p[i].ran;
		CHECK(p[i].first == LOOM_OK ||
		      p[i].first == LOOM_WORK_DOMAIN_COMPLETE);
		CHECK_EQ(LOOM_WORK_DOMAIN_COMPLETE, p[i].last);
	}
	CHECK_EQ(1, ran);
	loom_sched_destroy(s);
}

int main(void)
{
	RUN(owner_pop_and_steal_race_for_every_last_item);
	RUN(racing_last_retirements_complete_exactly_once);
	RUN(threaded_trace_replays_exactly_4_workers);
	RUN(threaded_trace_with_cancellations_replays_exactly_4_workers);
	RUN(cancel_all_racing_running_workers_drains_2_workers);
	RUN(cancel_all_racing_running_workers_drains_4_workers);
	RUN(parked_workers_wake_for_work_and_for_completion);
	return checks_done();
}
