// SPDX-License-Identifier: MIT
/*
 * DOC: the synchronous adapter
 *
 * adapter_sync.c: the generic synchronous adapter.  Drains one DynamicWork
 * domain through the bounded scheduler, running a callback per item: the
 * children it reports are published as one group, then the item retires.
 *
 * A failure (children that do not fit, too many children, an aborting
 * callback, a cancel verdict that also reports children, a publication
 * the scheduler refuses) names the item, cancels
 * the whole domain and lets the workers drain it (adapter.c).  A spent
 * budget (LOOM_WORK_SYNC_BUDGET) stops the run the same way, naming no
 * item: an item taken past it is not run.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "sched_internal.h"

/*
 * @max_items went into what was the tail padding of the config: its size
 * and every other offset are those of the struct before it, so a caller
 * built against the old header passes a whole struct.  Its padding is
 * indeterminate, hence LOOM_WORK_SYNC_BUDGET (which it never sets) gates
 * the field.
 */
#if defined(__LP64__)
_Static_assert(offsetof(struct loom_work_sync_config, max_items) == 44 &&
	       sizeof(struct loom_work_sync_config) == 48,
	       "max_items is the old tail padding");
#endif

struct sync_run;

/* One worker's loop state. */
struct sync_worker {
	struct sync_run *run;
	uint32_t index;
	uint64_t *children;	/* child_capacity slots for the callback */
	enum loom_work_sync_verdict verdict;	/* of the item run last */
	size_t count;				/* and its children */
	bool over_budget;			/* it was not run: budget spent */
	struct loom_adapter_counts counts;
} __attribute__((aligned(LOOM_CACHE_LINE)));	/* written for every item */

struct sync_run {
	struct loom_adapter_run common;
	const struct loom_work_sync_config *config;
	loom_work_sync_fn fn;
	void *ctx;
	struct sync_worker *workers;
	bool budgeted;			/* LOOM_WORK_SYNC_BUDGET */
	_Atomic uint64_t calls;		/* callbacks started, with a budget */
};

/*
 * Whether one more callback fits the budget.  Only a budgeted run counts:
 * the counter is one line every worker writes.  Relaxed: it orders
 * nothing, each callback just takes one ticket below max_items.
 */
static inline bool within_budget(struct sync_run *run)
{
	return !run->budgeted ||
	       atomic_fetch_add_explicit(&run->calls, 1, memory_order_relaxed) <
	       run->config->max_items;
}

/* Runs the callback on @item: its verdict, and its children in w. */
static inline void call(struct sync_worker *w, const struct loom_sched_item *item)
{
	struct sync_run *run = w->run;

	w->counts.steals += item->from_worker != item->worker;
	w->count = 0;
	w->over_budget = !within_budget(run);
	if (w->over_budget)
		return;
	w->counts.items_run++;
	w->verdict = run->fn(run->ctx, item, w->children,
			     run->config->child_capacity, &w->count);
}

/* Carries out the verdict of the active @item, one scheduler call each. */
static void settle(struct sync_worker *w, const struct loom_sched_item *item)
{
	struct sync_run *run = w->run;

	if (w->over_budget) {
		/* the run stops here: the domain is cancelled, this item too */
		loom_adapter_stop(&run->common, LOOM_WORK_INCOMPLETE);
		loom_adapter_cancel(&run->common, &w->counts, item);
		return;
	}
	switch (w->verdict) {
	case LOOM_WORK_SYNC_CHILDREN:
		loom_adapter_publish(&run->common, &w->counts, item,
				     w->children, w->count);
		return;
	case LOOM_WORK_SYNC_CANCEL:
		/* a cancelled item publishes nothing: its children would vanish */
		if (w->count)
			loom_adapter_fail(&run->common, LOOM_WORK_CANCEL_CHILDREN,
					  0, item);
		loom_adapter_cancel(&run->common, &w->counts, item);
		return;
	case LOOM_WORK_SYNC_ABORT:
		break;
	}
	loom_adapter_fail(&run->common, LOOM_WORK_CALLBACK_ABORTED, 0, item);
	loom_adapter_cancel(&run->common, &w->counts, item);
}

/*
 * The scheduler's loop asks for an item's children: those the callback
 * reported, when they can be published; anything else comes back to
 * worker_main() to be settled.
 */
static bool run_in_loop(void *arg, const struct loom_sched_item *item,
			const uint64_t **payloads, size_t *count)
{
	struct sync_worker *w = arg;

	call(w, item);
	*payloads = w->children;
	*count = w->count;
	return !w->over_budget && w->verdict == LOOM_WORK_SYNC_CHILDREN &&
	       loom_adapter_children_ok(&w->run->common, w->children,
					w->count);
}

/*
 * Threaded: each worker runs the scheduler's loop until the domain
 * completes; an item the loop hands back is settled here, then it goes on.
 */
static void *worker_main(void *arg)
{
	struct sync_worker *w = arg;
	struct loom_adapter_run *common = &w->run->common;
	struct loom_sched_loop loop = { .run = run_in_loop, .ctx = w };
	struct loom_sched_item item;

	while (loom_sched_run_loop(common->sched, w->index, &loop, &item) ==
	       LOOM_OK) {
		if (loop.refused)
			loom_adapter_refused(common, &w->counts, &item,
					     loop.refused);
		else
			settle(w, &item);
	}
	w->counts.items_completed += loop.completed;
	w->counts.children_published += loop.published;
	return NULL;
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

		for (uint32_t i = 0; i < run->config->sched.workers; i++) {
			enum loom_error err;

			err = loom_sched_acquire(run->common.sched, i, &item);
			if (err == LOOM_WORK_DOMAIN_COMPLETE)
				return;
			if (err == LOOM_OK) {
				call(&run->workers[i], &item);
				settle(&run->workers[i], &item);
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
	result->items_cancelled = run->common.cancelled_queued;
	for (uint32_t i = 0; i < run->config->sched.workers; i++)
		loom_adapter_add_counts(result, &run->workers[i].counts);
}

static void free_workers(struct sync_run *run)
{
	if (!run->workers)
		return;
	for (uint32_t i = 0; i < run->config->sched.workers; i++)
		free(run->workers[i].children);
	free(run->workers);
}

static enum loom_error alloc_workers(struct sync_run *run)
{
	uint32_t n = run->config->sched.workers;

	run->workers = loom_lines_alloc(n, sizeof(*run->workers));
	if (!run->workers)
		return LOOM_WORK_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < n; i++) {
		struct sync_worker *w = &run->workers[i];
		/* +1: a callback may be handed a valid pointer even at 0. */
		size_t slots = (size_t)run->config->child_capacity + 1;

		w->run = run;
		w->index = i;
		w->children = loom_lines_alloc(slots, sizeof(*w->children));
		if (!w->children)
			return LOOM_WORK_OUT_OF_MEMORY;
	}
	return LOOM_OK;
}

static enum loom_error start_run(struct sync_run *run)
{
	const struct loom_work_sync_config *config = run->config;
	enum loom_error err;

	err = loom_sched_create(&config->sched, &run->common.sched);
	if (!err)
		err = alloc_workers(run);
	if (!err)
		err = loom_sched_admit(run->common.sched, config->root_payload,
				       NULL);
	return err;
}

enum loom_error loom_work_sync_run(const struct loom_work_sync_config *config,
					loom_work_sync_fn fn, void *ctx,
					struct loom_work_sync_result *result)
{
	struct sync_run run = { .config = config, .fn = fn, .ctx = ctx };
	enum loom_error err;

	if (!config || !fn || !result || !config->sched.workers ||
	    !config->sched.deque_capacity || config->sched.workers == LOOM_SCHED_NO_WORKER)
		return LOOM_WORK_INVALID_ARGUMENT;
	if (!loom_payload_type_ok(config->payload_type))
		return LOOM_E_UNSUPPORTED_PAYLOAD;
	if (!loom_payload_fits(config->payload_type, config->root_payload))
		return LOOM_WORK_PAYLOAD_WIDTH;
	memset(result, 0, sizeof(*result));
	run.common.child_capacity = config->child_capacity;
	run.common.payload_type = config->payload_type;
	run.budgeted = config->flags & LOOM_WORK_SYNC_BUDGET;
	atomic_init(&run.calls, 0);
	if (loom_adapter_init(&run.common))
		return LOOM_WORK_OUT_OF_MEMORY;
	err = start_run(&run);
	if (run.common.sched)
		result->occurrence = loom_adapter_occurrence(&run.common);
	if (!err) {
		if (config->flags & LOOM_WORK_SYNC_THREADED)
			loom_adapter_run_workers(run.workers, sizeof(*run.workers),
						 config->sched.workers, worker_main);
		else
			drain_in_turn(&run);
		sum_counts(&run, result);
		err = loom_sched_take_trace(run.common.sched, &result->trace);
	}
	if (!err)
		err = loom_adapter_outcome(&run.common, result);
	free_workers(&run);
	loom_sched_destroy(run.common.sched);
	loom_adapter_fini(&run.common);
	return err;
}

void loom_work_sync_result_free(struct loom_work_sync_result *result)
{
	if (!result)
		return;
	loom_sched_trace_free(result->trace);
	memset(result, 0, sizeof(*result));
}
