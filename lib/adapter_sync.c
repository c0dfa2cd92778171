// SPDX-License-Identifier: MIT
/*
 * adapter_sync.c: the generic synchronous adapter.  Drains one DynamicWork
 * domain through the bounded scheduler, running a callback per item: the
 * children it reports are published as one group, then the item retires.
 *
 * A failure (children that do not fit, too many children, an aborting
 * callback, a publication the scheduler refuses) names the item, cancels
 * the whole domain and lets the workers drain it: cancelling never needs
 * memory (see sched.c), so the run always reaches completion.
 */
#include <stdlib.h>
#include <string.h>

#include "work_internal.h"

struct sync_run;

/* One worker's loop state; counters are private to it, summed at the end. */
struct sync_worker {
	struct sync_run *run;
	uint32_t index;
	uint64_t *children;	/* child_capacity slots for the callback */
	pthread_t thread;
	bool started;
	uint64_t items_run;
	uint64_t items_completed;
	uint64_t items_cancelled;
	uint64_t children_published;
	uint64_t steals;
};

struct sync_run {
	const struct loom_work_sync_config *config;
	loom_work_sync_fn fn;
	void *ctx;
	struct loom_sched *sched;
	struct sync_worker *workers;
	/* The first failure; workers of a threaded run race to set it. */
	pthread_mutex_t failure_lock;
	uint64_t cancelled_queued;	/* by every cancel_all of the run */
	enum loom_work_error error;
	struct loom_item_id failed_item;
	uint64_t failed_payload;
};

/* Records the first failure and cancels the domain so that it drains. */
static void fail_run(struct sync_run *run, enum loom_work_error err,
		     const struct loom_sched_item *item)
{
	uint64_t cancelled = 0;

	loom_sched_cancel_all(run->sched, &cancelled, NULL);
	pthread_mutex_lock(&run->failure_lock);
	if (!run->error) {
		run->error = err;
		run->failed_item = item->id;
		run->failed_payload = item->payload;
	}
	run->cancelled_queued += cancelled;
	pthread_mutex_unlock(&run->failure_lock);
}

/* Cancels the active @item: a request (unless one is pending), then retire. */
static void cancel_item(struct sync_worker *w, const struct loom_sched_item *item)
{
	enum loom_work_error err;

	err = loom_sched_cancel(w->run->sched, item->resp, NULL, NULL);
	if (err && err != LOOM_WORK_CANCEL_PENDING) {
		fail_run(w->run, err, item);
		return;
	}
	err = loom_sched_cancel_active(w->run->sched, item, NULL);
	if (err) {
		fail_run(w->run, err, item);
		return;
	}
	w->items_cancelled++;
}

/* Retires @item after publication, or cancels it if that was requested. */
static void complete_item(struct sync_worker *w,
			  const struct loom_sched_item *item)
{
	enum loom_work_error err;

	err = loom_sched_complete(w->run->sched, item, NULL);
	if (err == LOOM_WORK_CANCEL_REQUESTED) {
		cancel_item(w, item);
		return;
	}
	if (err) {
		fail_run(w->run, err, item);
		return;
	}
	w->items_completed++;
}

static void publish_and_complete(struct sync_worker *w,
				 const struct loom_sched_item *item,
				 size_t count)
{
	enum loom_work_error err;

	if (count > w->run->config->child_capacity) {
		fail_run(w->run, LOOM_WORK_CHILD_OVERFLOW, item);
		cancel_item(w, item);
		return;
	}
	err = loom_sched_publish(w->run->sched, item, w->children, count, NULL);
	if (err == LOOM_WORK_CANCEL_REQUESTED) {
		cancel_item(w, item);
		return;
	}
	if (err) {
		fail_run(w->run, err == LOOM_WORK_WOULD_BLOCK ?
			 LOOM_WORK_QUEUE_CAPACITY : err, item);
		cancel_item(w, item);
		return;
	}
	w->children_published += count;
	complete_item(w, item);
}

static void run_item(struct sync_worker *w, const struct loom_sched_item *item)
{
	struct sync_run *run = w->run;
	enum loom_work_sync_verdict verdict;
	size_t count = 0;

	w->items_run++;
	w->steals += item->from_worker != item->worker;
	verdict = run->fn(run->ctx, item, w->children,
			  run->config->child_capacity, &count);
	switch (verdict) {
	case LOOM_WORK_SYNC_CHILDREN:
		publish_and_complete(w, item, count);
		return;
	case LOOM_WORK_SYNC_CANCEL:
		cancel_item(w, item);
		return;
	case LOOM_WORK_SYNC_ABORT:
		break;
	}
	fail_run(run, LOOM_WORK_CALLBACK_ABORTED, item);
	cancel_item(w, item);
}

/* Threaded: each worker blocks for work until the domain completes. */
static void *worker_main(void *arg)
{
	struct sync_worker *w = arg;
	struct loom_sched_item item;

	while (loom_sched_acquire_wait(w->run->sched, w->index, &item) ==
	       LOOM_WORK_OK)
		run_item(w, &item);
	return NULL;
}

/*
 * Threaded: workers 1..N-1 on their own threads, worker 0 on the caller's.
 * A worker whose thread cannot start just never runs: its deque stays
 * empty (only its own items publish there) and the others do the work.
 */
static void drain_threaded(struct sync_run *run)
{
	uint32_t n = run->config->workers;

	for (uint32_t i = 1; i < n; i++) {
		struct sync_worker *w = &run->workers[i];

		w->started = !pthread_create(&w->thread, NULL, worker_main, w);
	}
	worker_main(&run->workers[0]);
	for (uint32_t i = 1; i < n; i++)
		if (run->workers[i].started)
			pthread_join(run->workers[i].thread, NULL);
}

/*
 * Not threaded: workers take turns, one item each per turn.  Only the
 * current worker ever holds an item, so an empty round means completion.
 */
static void drain_in_turn(struct sync_run *run)
{
	struct loom_sched_item item;

	for (;;) {
		bool ran = false;

		for (uint32_t i = 0; i < run->config->workers; i++) {
			enum loom_work_error err;

			err = loom_sched_acquire(run->sched, i, &item);
			if (err == LOOM_WORK_DOMAIN_COMPLETE)
				return;
			if (err == LOOM_WORK_OK) {
				run_item(&run->workers[i], &item);
				ran = true;
			}
		}
		if (!ran)
			return;
	}
}

static void sum_counts(const struct sync_run *run,
		       struct loom_work_sync_result *result)
{
	result->items_cancelled = run->cancelled_queued;
	for (uint32_t i = 0; i < run->config->workers; i++) {
		const struct sync_worker *w = &run->workers[i];

		result->items_run += w->items_run;
		result->items_completed += w->items_completed;
		result->items_cancelled += w->items_cancelled;
		result->children_published += w->children_published;
		result->steals += w->steals;
	}
}

static void free_workers(struct sync_run *run)
{
	if (!run->workers)
		return;
	for (uint32_t i = 0; i < run->config->workers; i++)
		free(run->workers[i].children);
	free(run->workers);
}

static enum loom_work_error alloc_workers(struct sync_run *run)
{
	uint32_t n = run->config->workers;

	run->workers = calloc(n, sizeof(*run->workers));
	if (!run->workers)
		return LOOM_WORK_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < n; i++) {
		struct sync_worker *w = &run->workers[i];

		w->run = run;
		w->index = i;
		/* +1: a callback may be handed a valid pointer even at 0. */
		w->children = calloc((size_t)run->config->child_capacity + 1,
				     sizeof(*w->children));
		if (!w->children)
			return LOOM_WORK_OUT_OF_MEMORY;
	}
	return LOOM_WORK_OK;
}

static enum loom_work_error start_run(struct sync_run *run)
{
	const struct loom_work_sync_config *config = run->config;
	struct loom_sched_config sched_config = {
		.occurrence = config->occurrence,
		.workers = config->workers,
		.deque_capacity = config->deque_capacity,
		.max_batch = 1,
		.flags = config->flags & LOOM_WORK_SYNC_NO_TRACE ?
			 LOOM_SCHED_NO_TRACE : 0,
	};
	enum loom_work_error err;

	err = loom_sched_create(&sched_config, &run->sched);
	if (!err)
		err = alloc_workers(run);
	if (!err)
		err = loom_sched_admit(run->sched, config->root_payload, NULL);
	return err;
}

enum loom_work_error loom_work_sync_run(const struct loom_work_sync_config *config,
					loom_work_sync_fn fn, void *ctx,
					struct loom_work_sync_result *result)
{
	struct sync_run run = { .config = config, .fn = fn, .ctx = ctx };
	enum loom_work_error err;

	if (!config || !fn || !result || !config->workers ||
	    !config->deque_capacity || config->workers == LOOM_SCHED_NO_WORKER)
		return LOOM_WORK_INVALID_ARGUMENT;
	memset(result, 0, sizeof(*result));
	if (pthread_mutex_init(&run.failure_lock, NULL))
		return LOOM_WORK_OUT_OF_MEMORY;
	err = start_run(&run);
	if (!err) {
		if (config->flags & LOOM_WORK_SYNC_THREADED)
			drain_threaded(&run);
		else
			drain_in_turn(&run);
		sum_counts(&run, result);
		err = loom_sched_take_trace(run.sched, &result->trace);
	}
	if (!err && run.error) {
		err = run.error;
		result->failed = true;
		result->failed_item = run.failed_item;
		result->failed_payload = run.failed_payload;
	}
	free_workers(&run);
	loom_sched_destroy(run.sched);
	pthread_mutex_destroy(&run.failure_lock);
	return err;
}

void loom_work_sync_result_free(struct loom_work_sync_result *result)
{
	if (!result)
		return;
	loom_sched_trace_free(result->trace);
	memset(result, 0, sizeof(*result));
}
