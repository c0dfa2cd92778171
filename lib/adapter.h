/* SPDX-License-Identifier: MIT */
/*
 * DOC: the adapters' shared header
 *
 * adapter.h: what the synchronous adapter (adapter_sync.c) and the device
 * adapter (adapter_device.c) share: how a worker retires the items it
 * holds, how a run records its first failure, and how a run's workers
 * are started.  Both drain a domain through the bounded scheduler and
 * differ only in how an item runs.
 *
 * Not installed; the names are global in libloom.a, hence the prefix.
 */
#ifndef LOOM_ADAPTER_H
#define LOOM_ADAPTER_H

#include <pthread.h>

#include "loom/work.h"
#include "loom_image.h"	/* LOOM_ARG_*: the payload types */

/*
 * The part of a run every worker touches: the scheduler, the children an
 * item may report, and the first failure (workers race to record it).
 */
struct loom_adapter_run {
	struct loom_sched *sched;
	uint32_t child_capacity;
	uint32_t payload_type;		/* 0 (any u64) or a LOOM_ARG_* payload type */
	pthread_mutex_t failure_lock;
	uint64_t cancelled_queued;	/* by every cancel_all of the run */
	enum loom_error error;
	int device_error;
	bool named;			/* the failure names failed_item */
	struct loom_item_id failed_item;
	uint64_t failed_payload;
};

/* One worker's counts: private to it, summed at the end. */
struct loom_adapter_counts {
	uint64_t items_run;
	uint64_t items_completed;
	uint64_t items_cancelled;
	uint64_t children_published;
	uint64_t steals;
};

/*
 * Whether @type can be a work-item payload: 0 (an untyped u64) or
 * LOOM_ARG_I32, LOOM_ARG_I64, LOOM_ARG_INDEX.
 */
bool loom_payload_type_ok(uint32_t type);

/*
 * Whether @payload is a value of @type: an i32 travels sign-extended to
 * 64 bits (the fabric's convention), so its upper half repeats bit 31.
 */
bool loom_payload_fits(uint32_t type, uint64_t payload);

/* The dispatch occurrence of @run's domain (its scheduler is made). */
static inline uint64_t loom_adapter_occurrence(const struct loom_adapter_run *run)
{
	return loom_work_domain_occurrence(loom_sched_domain(run->sched));
}

/* LOOM_OK, or LOOM_WORK_OUT_OF_MEMORY when the lock cannot be made. */
enum loom_error loom_adapter_init(struct loom_adapter_run *run);
void loom_adapter_fini(struct loom_adapter_run *run);

/*
 * Records the first failure, naming @item (NULL: none), and cancels the
 * domain so that it drains.
 */
void loom_adapter_fail(struct loom_adapter_run *run, enum loom_error err,
		       int device_error, const struct loom_sched_item *item);

/*
 * Stops the run with @err, which no item caused (a budget spent): records
 * it unless a failure came first, and cancels the domain so that it drains.
 */
void loom_adapter_stop(struct loom_adapter_run *run, enum loom_error err);

/* Cancels the active @item: a request (unless one is pending), then retire. */
void loom_adapter_cancel(struct loom_adapter_run *run,
			 struct loom_adapter_counts *counts,
			 const struct loom_sched_item *item);

/* Whether every one of @count @payloads is an i32 value. */
bool loom_adapter_i32_fit(const uint64_t *payloads, size_t count);

/* Whether each of @count @children is a value of @run's payload type. */
static inline bool loom_adapter_children_fit(const struct loom_adapter_run *run,
					     const uint64_t *children,
					     size_t count)
{
	/* Only i32 payloads can be too wide: the others need no look. */
	return run->payload_type != LOOM_ARG_I32 ||
	       loom_adapter_i32_fit(children, count);
}

/*
 * Whether @count @children can be published in @run: no more than its
 * child capacity, each a value of its payload type.  Inline: the
 * synchronous adapter asks for every item.
 */
static inline bool loom_adapter_children_ok(const struct loom_adapter_run *run,
					    const uint64_t *children,
					    size_t count)
{
	return count <= run->child_capacity &&
	       loom_adapter_children_fit(run, children, count);
}

/*
 * The scheduler refused to publish the active @item's children (@err):
 * cancels it, failing the run unless the refusal was a pending cancel
 * request (LOOM_WORK_WOULD_BLOCK fails it as LOOM_WORK_QUEUE_CAPACITY).
 */
void loom_adapter_refused(struct loom_adapter_run *run,
			  struct loom_adapter_counts *counts,
			  const struct loom_sched_item *item, enum loom_error err);

/*
 * Publishes @item's @count @children as one group, then completes it; an
 * item claiming more than the run's child capacity, or a publication the
 * scheduler refuses, fails the run and cancels the item.
 */
void loom_adapter_publish(struct loom_adapter_run *run,
			  struct loom_adapter_counts *counts,
			  const struct loom_sched_item *item,
			  const uint64_t *children, size_t count);

/*
 * Runs @main on each of @n workers (@size bytes apart from @workers):
 * worker 0 on the caller's thread, the others on their own.  A worker whose
 * thread cannot start never runs: only its own items publish to its deque,
 * so it stays empty and the others do the work.
 */
void loom_adapter_run_workers(void *workers, size_t size, uint32_t n,
			      void *(*main)(void *));

/* Adds one worker's @counts into @result. */
void loom_adapter_add_counts(struct loom_work_sync_result *result,
			     const struct loom_adapter_counts *counts);

/*
 * The run's failure into @result (@result->failed only when it names an
 * item): its error, or LOOM_OK.
 */
enum loom_error loom_adapter_outcome(const struct loom_adapter_run *run,
					  struct loom_work_sync_result *result);

#endif /* LOOM_ADAPTER_H */
