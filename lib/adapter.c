// SPDX-License-Identifier: MIT
/*
 * DOC: what the adapters share
 *
 * adapter.c: retirement, failure and worker threads, shared by the
 * synchronous and the device adapters (adapter.h).
 *
 * A failure names the item, cancels the whole domain and lets the workers
 * drain it: cancelling never needs memory (see sched.c), so a run always
 * reaches completion, and every item is retired exactly once.
 */
#include <stdlib.h>

#include "adapter.h"
#include "work_internal.h"

bool loom_payload_type_ok(uint32_t type)
{
	return type == 0 || type == LOOM_ARG_I32 || type == LOOM_ARG_I64 ||
	       type == LOOM_ARG_INDEX;
}

bool loom_payload_fits(uint32_t type, uint64_t payload)
{
	return type != LOOM_ARG_I32 ||
	       (uint64_t)(int64_t)(int32_t)(uint32_t)payload == payload;
}

enum loom_error loom_adapter_init(struct loom_adapter_run *run)
{
	return pthread_mutex_init(&run->failure_lock, NULL) ?
	       LOOM_WORK_OUT_OF_MEMORY : LOOM_OK;
}

void loom_adapter_fini(struct loom_adapter_run *run)
{
	pthread_mutex_destroy(&run->failure_lock);
}

void loom_adapter_fail(struct loom_adapter_run *run, enum loom_error err,
		       int device_error, const struct loom_sched_item *item)
{
	uint64_t cancelled = 0;

	loom_sched_cancel_all(run->sched, &cancelled, NULL);
	pthread_mutex_lock(&run->failure_lock);
	if (!run->error) {
		run->error = err;
		run->device_error = device_error;
		run->named = item != NULL;
		if (item) {
			run->failed_item = item->id;
			run->failed_payload = item->payload;
		}
	}
	run->cancelled_queued += cancelled;
	pthread_mutex_unlock(&run->failure_lock);
}

void loom_adapter_stop(struct loom_adapter_run *run, enum loom_error err)
{
	loom_adapter_fail(run, err, 0, NULL);
}

void loom_adapter_cancel(struct loom_adapter_run *run,
			 struct loom_adapter_counts *counts,
			 const struct loom_sched_item *item)
{
	enum loom_error err;

	err = loom_sched_cancel(run->sched, item->resp, NULL, NULL);
	if (err && err != LOOM_WORK_CANCEL_PENDING) {
		loom_adapter_fail(run, err, 0, item);
		return;
	}
	err = loom_sched_cancel_active(run->sched, item, NULL);
	if (err) {
		loom_adapter_fail(run, err, 0, item);
		return;
	}
	counts->items_cancelled++;
}

bool loom_adapter_i32_fit(const uint64_t *payloads, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!loom_payload_fits(LOOM_ARG_I32, payloads[i]))
			return false;
	return true;
}

void loom_adapter_refused(struct loom_adapter_run *run,
			  struct loom_adapter_counts *counts,
			  const struct loom_sched_item *item, enum loom_error err)
{
	if (err != LOOM_WORK_CANCEL_REQUESTED)
		loom_adapter_fail(run, err == LOOM_WORK_WOULD_BLOCK ?
				  LOOM_WORK_QUEUE_CAPACITY : err, 0, item);
	loom_adapter_cancel(run, counts, item);
}

void loom_adapter_publish(struct loom_adapter_run *run,
			  struct loom_adapter_counts *counts,
			  const struct loom_sched_item *item,
			  const uint64_t *children, size_t count)
{
	enum loom_error err;

	if (count > run->child_capacity) {
		loom_adapter_fail(run, LOOM_WORK_CHILD_OVERFLOW, 0, item);
		loom_adapter_cancel(run, counts, item);
		return;
	}
	if (!loom_adapter_children_fit(run, children, count)) {
		loom_adapter_fail(run, LOOM_WORK_PAYLOAD_WIDTH, 0, item);
		loom_adapter_cancel(run, counts, item);
		return;
	}
	/* Publication and completion in one pass over the worker's state. */
	err = loom_sched_publish_complete(run->sched, item, children, count,
					  NULL, NULL);
	if (err) {
		loom_adapter_refused(run, counts, item, err);
		return;
	}
	counts->children_published += count;
	counts->items_completed++;
}

void loom_adapter_run_workers(void *workers, size_t size, uint32_t n,
			      void *(*main)(void *))
{
	pthread_t *threads = n > 1 ? calloc(n, sizeof(*threads)) : NULL;
	bool *started = n > 1 ? calloc(n, sizeof(*started)) : NULL;

	for (uint32_t i = 1; threads && started && i < n; i++)
		started[i] = !pthread_create(&threads[i], NULL, main,
					     (char *)workers + i * size);
	main(workers);
	for (uint32_t i = 1; threads && started && i < n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	free(threads);
	free(started);
}

void loom_adapter_add_counts(struct loom_work_sync_result *result,
			     const struct loom_adapter_counts *counts)
{
	result->items_run += counts->items_run;
	result->items_completed += counts->items_completed;
	result->items_cancelled += counts->items_cancelled;
	result->children_published += counts->children_published;
	result->steals += counts->steals;
}

enum loom_error loom_adapter_outcome(const struct loom_adapter_run *run,
					  struct loom_work_sync_result *result)
{
	if (!run->error)
		return LOOM_OK;
	if (run->named) {
		result->failed = true;
		result->failed_item = run->failed_item;
		result->failed_payload = run->failed_payload;
	}
	return run->error;
}
