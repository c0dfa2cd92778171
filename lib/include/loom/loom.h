/* SPDX-License-Identifier: MIT */
/*
 * libloom: the loom runtime library.  This is its one public header.
 *
 * Conventions, for every section:
 *   - functions never set errno and never print; each section says how it
 *     reports failure (dynamic work: a typed enum, 0 is success);
 *   - out parameters are written only on success unless documented;
 *   - opaque objects are created by *_create() and released by
 *     *_destroy() / *_free().
 *
 * Sections:
 *   Dynamic work   identity, the responsibility kernel, the bounded
 *                  scheduler and its replay trace, the synchronous adapter
 *                  (lib/work.c, lib/sched.c, lib/adapter_sync.c)
 *   Devices        errors, devices, buffers, program images (loader and
 *                  builder), dense and items launch, tokens, io_uring
 *                  completions, the device adapter for dynamic work
 *                  (lib/device.c, bo.c, image.c, launch.c, ring.c,
 *                  adapter_device.c)
 */
#ifndef LOOM_LOOM_H
#define LOOM_LOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom_image.h"		/* enum loom_arg_type, enum loom_domain_kind */

#ifdef __cplusplus
extern "C" {
#endif

/* =========================================================================
 * Dynamic work
 * =========================================================================
 *
 * A DynamicWork launch (spec "Logical Domains And Data Views" §2.2) is a
 * domain of work items.  Its only completion authority is the set of
 * active responsibilities: admitting the root acquires one, every spawn
 * acquires one for the child before the child can be seen, and every item
 * retires its own exactly once.  The domain completes when the root source
 * is closed (it closes at admission) and the set is empty.
 *
 * Three layers, each usable on its own:
 *   loom_work_*   the responsibility kernel (struct loom_work_domain) and
 *                 item identity (struct loom_item_id);
 *   loom_sched_*  a bounded work-stealing scheduler that places queued
 *                 items on finite per-worker deques and delegates every
 *                 admission, spawn and retirement to the kernel;
 *   loom_work_sync_*  the generic synchronous adapter: one callback per
 *                 item, children published as a group, then retirement.
 *
 * Thread safety: every loom_work_* and loom_sched_* function may be called
 * from any thread (but not *_destroy() while others still use the object).
 * A domain (and the scheduler built on it) serialises its transactions
 * with one mutex, so each call is one atomic transaction.  Identity
 * functions only read immutable data and need no lock.
 */

/* -------------------------------------------------------- errors --- */

/*
 * Everything a dynamic-work call can answer.  A call that fails changes
 * nothing: no responsibility is acquired or retired, no ordinal is used,
 * no item moves and no trace event is recorded.  (loom_work_sync_run() is
 * a whole run, not one transaction; it documents its own failures.)
 */
enum loom_work_error {
	LOOM_WORK_OK = 0,
	LOOM_WORK_INVALID_ARGUMENT,	/* NULL pointer, zero size, worker out of range */
	LOOM_WORK_OUT_OF_MEMORY,
	LOOM_WORK_ROOT_CLOSED,		/* the root was already admitted */
	LOOM_WORK_FOREIGN_DOMAIN,	/* the responsibility belongs to another domain */
	LOOM_WORK_RESP_INVALID,		/* not a responsibility this domain issued */
	LOOM_WORK_RESP_USED,		/* the responsibility was already retired */
	LOOM_WORK_PARENT_RETIRED,	/* spawn or publish from a retired item */
	LOOM_WORK_ORDINALS_EXHAUSTED,	/* the parent's ordinals cannot cover the group */
	LOOM_WORK_WOULD_BLOCK,		/* the worker's deque cannot take the whole group */
	LOOM_WORK_WORKER_BUSY,		/* the worker already holds an active item */
	LOOM_WORK_NO_WORK,		/* nothing is queued now; the domain is not complete */
	LOOM_WORK_DOMAIN_COMPLETE,	/* the domain completed; nothing will be queued again */
	LOOM_WORK_NOT_ACTIVE,		/* the item is not active on the worker named */
	LOOM_WORK_CANCEL_REQUESTED,	/* completion/publication blocked: cancel the item */
	LOOM_WORK_CANCEL_PENDING,	/* a cancellation was already requested */
	LOOM_WORK_NO_CANCEL_REQUEST,	/* cancel_active on an item nobody asked to cancel */
	LOOM_WORK_QUEUE_CAPACITY,	/* adapter: an item's children did not fit its deque */
	LOOM_WORK_CHILD_OVERFLOW,	/* adapter: more children than child_capacity */
	LOOM_WORK_CALLBACK_ABORTED,	/* adapter: the callback asked to abort the domain */
	LOOM_WORK_DEVICE_ERROR,		/* device adapter: a launch or job failed */
};

/* A constant English sentence for @err; never NULL. */
const char *loom_work_strerror(enum loom_work_error err);

/* Where a domain is in its life. */
enum loom_work_status {
	LOOM_WORK_AWAITING_ROOT = 0,	/* created; the root source is still open */
	LOOM_WORK_ACTIVE,		/* root admitted; responsibilities remain */
	LOOM_WORK_COMPLETED,		/* root source closed and no responsibility left */
};

/* ------------------------------------------------------ identity --- */

/*
 * One step of an identity path: an item's parent, ordinal and cached depth
 * and hash.  Opaque and immutable; owned by the domain that created it.
 */
struct loom_item_node;

/**
 * struct loom_item_id - WorkItemId = (occurrence, parent, ordinal)
 * @occurrence: the dispatch occurrence (the spec's domain_instance)
 * @parent: the parent item's identity; NULL is the distinguished parent Root
 * @ordinal: zero-based spawn ordinal within the parent; 0 for the root
 *
 * Equality is structural: two ids are equal when their occurrences are
 * equal, their ordinals are equal and their parents are equal ids (Root
 * only equals Root).  Payload, worker, queue, address and time never enter
 * it, so ids from two different domains of the same occurrence compare
 * equal when they name the same path.  The order (loom_item_id_compare)
 * is by occurrence, then lexicographic on the ordinal path from the root
 * (a parent sorts before its children: pre-order).
 *
 * An id is a plain value: copy it freely.  @parent points into storage of
 * the domain that issued it, which lives as long as the domain, its
 * scheduler, or any trace or adapter result taken from them.  To keep an id
 * beyond that, keep its text (loom_item_id_format).
 */
struct loom_item_id {
	uint64_t occurrence;
	const struct loom_item_node *parent;
	uint64_t ordinal;
};

/* <0, 0, >0 as @a sorts before, equal to, after @b (see above). O(depth). */
int loom_item_id_compare(const struct loom_item_id *a,
			 const struct loom_item_id *b);

/* Structural equality; O(1) when the hashes differ, else O(depth). */
bool loom_item_id_equal(const struct loom_item_id *a,
			const struct loom_item_id *b);

/* A structural hash: equal ids hash equal, in every domain and process. */
uint64_t loom_item_id_hash(const struct loom_item_id *id);

/* 0 for the root, its parent's depth + 1 otherwise. */
uint64_t loom_item_id_depth(const struct loom_item_id *id);

/* Sets *@parent (may be @id) to @id's parent and returns true; false for the root. */
bool loom_item_id_parent(const struct loom_item_id *id,
			 struct loom_item_id *parent);

/*
 * Writes "<occurrence>:root" for a root and "<occurrence>:root/<o1>/.../<on>"
 * for the item reached by ordinals o1..on (e.g. "3:root/0/2"), like
 * snprintf: at most @size - 1 characters and a NUL (nothing if @size is 0),
 * and returns the length of the whole text.
 */
size_t loom_item_id_format(const struct loom_item_id *id, char *buf,
			   size_t size);

static inline bool loom_item_id_is_root(const struct loom_item_id *id)
{
	return id->parent == NULL;
}

/* ------------------------------------------- responsibility kernel --- */

/* A DynamicWork domain: the active responsibility set of one dispatch. */
struct loom_work_domain;

/**
 * struct loom_work_resp - one responsibility, as a handle
 * @domain_key: which domain issued it (unique per process, never reused;
 *	not part of any item's identity)
 * @serial: which responsibility, from 1 in issue order; 0 is no
 *	responsibility
 *
 * Each item holds exactly one responsibility from admission or spawn until
 * its retirement; the handle stays recognisable afterwards, so using it
 * again is the typed rejection LOOM_WORK_RESP_USED.
 */
struct loom_work_resp {
	uint64_t domain_key;
	uint64_t serial;
};

static inline bool loom_work_resp_is_none(struct loom_work_resp resp)
{
	return resp.serial == 0;
}

/*
 * Creates a domain for dispatch @occurrence, its root source open.  The
 * domain keeps every identity it issues until it is destroyed (memory is
 * linear in the number of items).
 */
enum loom_work_error loom_work_domain_create(uint64_t occurrence,
					     struct loom_work_domain **out);

/*
 * Releases the caller's reference.  (A scheduler's domain is its own; its
 * storage lives on while a trace taken from the scheduler does.)
 */
void loom_work_domain_destroy(struct loom_work_domain *domain);

uint64_t loom_work_domain_occurrence(const struct loom_work_domain *domain);
enum loom_work_status loom_work_domain_status(const struct loom_work_domain *domain);

/* Responsibilities acquired and not yet retired (a cache of the set). */
uint64_t loom_work_active_count(const struct loom_work_domain *domain);

/*
 * Admits the root: acquires its responsibility and closes the root source
 * in one transaction.  The root is (occurrence, Root, 0).  A second
 * admission is LOOM_WORK_ROOT_CLOSED.  @root_id may be NULL.
 */
enum loom_work_error loom_work_admit(struct loom_work_domain *domain,
				     struct loom_work_resp *root,
				     struct loom_item_id *root_id);

/*
 * Acquires responsibilities for @count children of the live item @parent,
 * with the parent's next @count ordinals, all or nothing.  Ordinals count
 * 0, 1, 2, ... per parent across calls; UINT64_MAX is the last one.
 * @children and @child_ids (either may be NULL) receive @count entries in
 * ordinal order.  @count 0 succeeds and acquires nothing.
 *
 * Rejections, in the order checked: LOOM_WORK_RESP_INVALID (serial 0),
 * LOOM_WORK_FOREIGN_DOMAIN, LOOM_WORK_RESP_INVALID (never issued),
 * LOOM_WORK_PARENT_RETIRED, LOOM_WORK_ORDINALS_EXHAUSTED,
 * LOOM_WORK_OUT_OF_MEMORY.
 */
enum loom_work_error loom_work_spawn_group(struct loom_work_domain *domain,
					   struct loom_work_resp parent,
					   size_t count,
					   struct loom_work_resp *children,
					   struct loom_item_id *child_ids);

static inline enum loom_work_error
loom_work_spawn(struct loom_work_domain *domain, struct loom_work_resp parent,
		struct loom_work_resp *child, struct loom_item_id *child_id)
{
	return loom_work_spawn_group(domain, parent, 1, child, child_id);
}

/*
 * Retires @resp: consumes it exactly once.  *@status (may be NULL) becomes
 * LOOM_WORK_COMPLETED for the one retirement that empties the set (exactly
 * one per domain, ever) and LOOM_WORK_ACTIVE for every other.  Rejections:
 * LOOM_WORK_RESP_INVALID, LOOM_WORK_FOREIGN_DOMAIN, LOOM_WORK_RESP_USED.
 */
enum loom_work_error loom_work_retire(struct loom_work_domain *domain,
				      struct loom_work_resp resp,
				      enum loom_work_status *status);

/* The identity of any responsibility @domain issued, live or retired. */
enum loom_work_error loom_work_item_id(const struct loom_work_domain *domain,
				       struct loom_work_resp resp,
				       struct loom_item_id *id);

/* ------------------------------------------------------- scheduler --- */

/*
 * The bounded scheduler: N workers, each with a deque of at most
 * deque_capacity queued (not yet started) items, over its own domain.
 *
 * Policy:
 *   - admission queues the root on worker 0's deque;
 *   - a worker holds at most one active item (max_batch > 1 allows one
 *     batch of up to max_batch); acquiring while holding any is
 *     LOOM_WORK_WORKER_BUSY;
 *   - acquisition pops the back of the worker's own deque, else steals the
 *     front of the first non-empty deque among worker+1, worker+2, ...
 *     (cyclic), else answers LOOM_WORK_NO_WORK or LOOM_WORK_DOMAIN_COMPLETE;
 *   - an active item's children are published as one group, in ordinal
 *     order, onto the back of its worker's deque; a group that does not fit
 *     is LOOM_WORK_WOULD_BLOCK with nothing acquired and no ordinal used;
 *   - an item is retired by completing it or by cancelling it.
 *
 * Cancellation: cancelling a queued item removes it and retires it (that
 * may complete the domain).  Cancelling an active item only records a
 * request; from then on publishing and completing it answer
 * LOOM_WORK_CANCEL_REQUESTED until its worker cancels it with
 * loom_sched_cancel_active().  Requests, idleness and queue pressure never
 * complete a domain; only retirements do.
 *
 * The replay trace records every successful transition, in order, and
 * nothing else.
 *
 * Memory: only admission and publication allocate (responsibilities and
 * trace room for everything their items may still record), so acquiring,
 * completing and cancelling never fail for memory, and a cancelled domain
 * always drains.
 */
struct loom_sched;

#define LOOM_SCHED_NO_WORKER	UINT32_MAX

/* struct loom_sched_config.flags */
#define LOOM_SCHED_NO_TRACE	(1u << 0)	/* record no replay trace */

/**
 * struct loom_sched_config - the shape of a scheduler
 * @occurrence: dispatch occurrence of its domain
 * @workers: number of workers, at least 1
 * @deque_capacity: queued items each worker's deque holds, at least 1
 * @max_batch: items one worker may hold active at once; 0 means 1
 * @flags: LOOM_SCHED_* flags
 */
struct loom_sched_config {
	uint64_t occurrence;
	uint32_t workers;
	uint32_t deque_capacity;
	uint32_t max_batch;
	uint32_t flags;
};

/**
 * struct loom_sched_item - an item active on a worker
 * @resp: its responsibility
 * @id: its identity
 * @payload: its payload
 * @worker: the worker it is active on
 * @from_worker: the worker whose deque it was taken from (@worker unless
 *	it was stolen)
 *
 * Returned by acquisition; pass it back to publish, complete and cancel.
 */
struct loom_sched_item {
	struct loom_work_resp resp;
	struct loom_item_id id;
	uint64_t payload;
	uint32_t worker;
	uint32_t from_worker;
};

enum loom_work_error loom_sched_create(const struct loom_sched_config *config,
				       struct loom_sched **out);
void loom_sched_destroy(struct loom_sched *sched);

/* The scheduler's domain, for queries only: transact through the scheduler. */
const struct loom_work_domain *loom_sched_domain(const struct loom_sched *sched);

/* Items queued on @worker's deque now (0 for a worker out of range). */
uint32_t loom_sched_queued(const struct loom_sched *sched, uint32_t worker);

/* Admits the root with @payload onto worker 0's deque.  @root may be NULL. */
enum loom_work_error loom_sched_admit(struct loom_sched *sched,
				      uint64_t payload,
				      struct loom_work_resp *root);

/* loom_sched_acquire_batch() flags */
#define LOOM_SCHED_WAIT		(1u << 0)	/* block until work or completion */

/*
 * Makes up to @max items (at most the configured max_batch) active on
 * @worker, one acquisition at a time by the policy above; *@count gets how
 * many (0 on failure).  Returns LOOM_WORK_OK if it got at least one; else
 * LOOM_WORK_WORKER_BUSY, LOOM_WORK_DOMAIN_COMPLETE, or LOOM_WORK_NO_WORK
 * (never with LOOM_SCHED_WAIT: that blocks until something is queued or
 * the domain completes, including before the root is admitted).
 *
 * A later adapter runs a batch elsewhere, then for each item publishes its
 * children (one group, ordinal order) and completes or cancels it.
 */
enum loom_work_error loom_sched_acquire_batch(struct loom_sched *sched,
					      uint32_t worker,
					      struct loom_sched_item *items,
					      size_t max, unsigned int flags,
					      size_t *count);

static inline enum loom_work_error
loom_sched_acquire(struct loom_sched *sched, uint32_t worker,
		   struct loom_sched_item *item)
{
	size_t count;

	return loom_sched_acquire_batch(sched, worker, item, 1, 0, &count);
}

static inline enum loom_work_error
loom_sched_acquire_wait(struct loom_sched *sched, uint32_t worker,
			struct loom_sched_item *item)
{
	size_t count;

	return loom_sched_acquire_batch(sched, worker, item, 1,
					LOOM_SCHED_WAIT, &count);
}

/*
 * Publishes @count children of the active @parent with @payloads, as one
 * group: acquires their responsibilities (ordinals in order), then queues
 * them on the back of the parent's worker's deque.  @children (may be NULL)
 * receives their responsibilities.  Rejections beyond the kernel's:
 * LOOM_WORK_NOT_ACTIVE, LOOM_WORK_CANCEL_REQUESTED, LOOM_WORK_WOULD_BLOCK.
 */
enum loom_work_error loom_sched_publish(struct loom_sched *sched,
					const struct loom_sched_item *parent,
					const uint64_t *payloads, size_t count,
					struct loom_work_resp *children);

/*
 * Completes the active @item: retires it.  *@status (may be NULL) as in
 * loom_work_retire().  LOOM_WORK_CANCEL_REQUESTED if a cancellation is
 * pending: call loom_sched_cancel_active() instead.
 */
enum loom_work_error loom_sched_complete(struct loom_sched *sched,
					 const struct loom_sched_item *item,
					 enum loom_work_status *status);

/* What loom_sched_cancel() did. */
enum loom_sched_cancel_effect {
	LOOM_SCHED_CANCELLED_QUEUED = 1,	/* removed and retired */
	LOOM_SCHED_CANCEL_REQUESTED,		/* active: request recorded */
};

/*
 * Cancels the item holding @item: a queued item is removed and retired
 * (*@status may become LOOM_WORK_COMPLETED), an active one gets a
 * cancellation request (*@status is LOOM_WORK_ACTIVE).  @effect and
 * @status may be NULL.  LOOM_WORK_RESP_USED if it was already retired,
 * LOOM_WORK_CANCEL_PENDING if a request is already pending.
 */
enum loom_work_error loom_sched_cancel(struct loom_sched *sched,
				       struct loom_work_resp item,
				       enum loom_sched_cancel_effect *effect,
				       enum loom_work_status *status);

/*
 * Retires the active @item whose cancellation was requested.
 * LOOM_WORK_NO_CANCEL_REQUEST if none was.
 */
enum loom_work_error loom_sched_cancel_active(struct loom_sched *sched,
					      const struct loom_sched_item *item,
					      enum loom_work_status *status);

/*
 * Cancels the whole domain: first requests cancellation of every active
 * item without one (workers in order, each worker's batch in acquisition
 * order), then cancels every queued item (workers in order, each deque
 * front to back); *@cancelled gets how many queued items that retired.
 * Once the active items are cancelled the domain completes; *@status tells
 * whether it already has.  Both may be NULL.
 */
enum loom_work_error loom_sched_cancel_all(struct loom_sched *sched,
					   uint64_t *cancelled,
					   enum loom_work_status *status);

/* ------------------------------------------------------ replay trace --- */

enum loom_sched_event_kind {
	LOOM_SCHED_EV_ADMIT = 1,	/* root admitted onto worker 0's deque */
	LOOM_SCHED_EV_ACQUIRE_LOCAL,	/* popped from the back of own deque */
	LOOM_SCHED_EV_STEAL,		/* taken from the front of other_worker's deque */
	LOOM_SCHED_EV_PUBLISH,		/* a child queued on worker's deque */
	LOOM_SCHED_EV_CANCEL_REQUEST,	/* cancellation requested, item active on worker */
	LOOM_SCHED_EV_CANCEL_QUEUED,	/* a queued item on worker's deque cancelled */
	LOOM_SCHED_EV_CANCEL_ACTIVE,	/* an active item on worker cancelled */
	LOOM_SCHED_EV_COMPLETE,		/* an active item on worker completed */
};

/**
 * struct loom_sched_event - one successful transition
 * @kind: what happened
 * @worker: the worker whose deque or active slot it happened on (for a
 *	steal: the thief)
 * @other_worker: for a steal, the victim; else LOOM_SCHED_NO_WORKER
 * @completes_domain: this retirement (COMPLETE, CANCEL_QUEUED or
 *	CANCEL_ACTIVE) emptied the responsibility set
 * @item: the item it happened to
 */
struct loom_sched_event {
	enum loom_sched_event_kind kind;
	uint32_t worker;
	uint32_t other_worker;
	bool completes_domain;
	struct loom_item_id item;
};

/* A recorded trace; keeps the identities of its events valid. */
struct loom_sched_trace;

/*
 * Moves the events recorded so far into a new trace (recording goes on
 * into an empty one; with LOOM_SCHED_NO_TRACE every trace is empty).  The
 * trace outlives the scheduler; free it with loom_sched_trace_free().
 */
enum loom_work_error loom_sched_take_trace(struct loom_sched *sched,
					   struct loom_sched_trace **out);
size_t loom_sched_trace_count(const struct loom_sched_trace *trace);
const struct loom_sched_event *
loom_sched_trace_events(const struct loom_sched_trace *trace);
void loom_sched_trace_free(struct loom_sched_trace *trace);

/* A constant name for @kind ("admit", "acquire-local", ...); never NULL. */
const char *loom_sched_event_name(enum loom_sched_event_kind kind);

/* ------------------------------------------- synchronous adapter --- */

/* What the callback says about its item. */
enum loom_work_sync_verdict {
	LOOM_WORK_SYNC_CHILDREN = 0,	/* publish the children reported, then retire */
	LOOM_WORK_SYNC_CANCEL,		/* cancel this item (request, then cancel) */
	LOOM_WORK_SYNC_ABORT,		/* fail the run and cancel the domain */
};

/*
 * Runs one item.  Writes its children's payloads, in spawn order, to
 * @children[0 .. *@count) (at most @capacity; *@count starts at 0).  Called
 * concurrently from different workers when the run is threaded.
 */
typedef enum loom_work_sync_verdict
(*loom_work_sync_fn)(void *ctx, const struct loom_sched_item *item,
		     uint64_t *children, size_t capacity, size_t *count);

/* struct loom_work_sync_config.flags */
#define LOOM_WORK_SYNC_THREADED	(1u << 0)	/* one thread per worker */
#define LOOM_WORK_SYNC_NO_TRACE	(1u << 1)	/* record no replay trace */

/**
 * struct loom_work_sync_config - one synchronous run
 * @occurrence: dispatch occurrence
 * @root_payload: the launch's one root payload
 * @workers: scheduler workers, at least 1
 * @deque_capacity: per-worker deque capacity, at least 1
 * @child_capacity: most children one item may report
 * @flags: LOOM_WORK_SYNC_*
 *
 * Without LOOM_WORK_SYNC_THREADED the calling thread drives the workers in
 * turn, 0, 1, ..., N-1, 0, ..., each running at most one item per turn; the
 * run (and its trace) is then deterministic.
 */
struct loom_work_sync_config {
	uint64_t occurrence;
	uint64_t root_payload;
	uint32_t workers;
	uint32_t deque_capacity;
	uint32_t child_capacity;
	uint32_t flags;
};

/**
 * struct loom_work_sync_result - what a run did
 * @items_run: callbacks made
 * @items_completed: items retired by completion
 * @items_cancelled: items retired by cancellation (queued or active)
 * @children_published: children queued
 * @steals: acquisitions that stole
 * @failed: the run failed because of @failed_item (the first failure)
 * @failed_item: the item whose children did not fit, that overflowed, or
 *	whose callback aborted
 * @failed_payload: its payload
 * @trace: the replay trace, empty with LOOM_WORK_SYNC_NO_TRACE; it keeps
 *	every identity above and in its events valid
 *
 * Release with loom_work_sync_result_free().
 */
struct loom_work_sync_result {
	uint64_t items_run;
	uint64_t items_completed;
	uint64_t items_cancelled;
	uint64_t children_published;
	uint64_t steals;
	bool failed;
	struct loom_item_id failed_item;
	uint64_t failed_payload;
	struct loom_sched_trace *trace;
};

/*
 * Admits @config->root_payload and drains the whole domain through the
 * bounded scheduler, calling @fn once per acquired item.  Returns:
 *   LOOM_WORK_OK: every item completed or was cancelled by its callback;
 *   LOOM_WORK_QUEUE_CAPACITY: an item's children did not fit its worker's
 *	deque (publication is all or nothing, so none was queued);
 *   LOOM_WORK_CHILD_OVERFLOW, LOOM_WORK_CALLBACK_ABORTED, or any other
 *	error publication answered: likewise, naming the item;
 *	after each of these the domain was cancelled and drained to
 *	completion, and @result->failed_item names the first failing item
 *	(a publication that ran out of memory is one of these too);
 *   LOOM_WORK_INVALID_ARGUMENT: nothing ran and @result is untouched;
 *   LOOM_WORK_OUT_OF_MEMORY without @result->failed: setting up failed and
 *	nothing ran, or the trace could not be handed over at the end.
 * On every return but LOOM_WORK_INVALID_ARGUMENT, @result is filled and
 * must be released (loom_work_sync_result_free() also accepts a zeroed
 * result).
 */
enum loom_work_error loom_work_sync_run(const struct loom_work_sync_config *config,
					loom_work_sync_fn fn, void *ctx,
					struct loom_work_sync_result *result);

void loom_work_sync_result_free(struct loom_work_sync_result *result);

/* ================================================= end dynamic work === */

/* =========================================================================
 * Devices, buffers, program images, dense launch, tokens, io_uring
 * =========================================================================
 *
 * Functions return 0 (or a count) on success and a negative value on
 * failure: -errno (from the driver or libc) or one of the typed LOOM_E_*
 * errors, which lie below -4096 so they are never mistaken for an errno;
 * loom_strerror() names both.  Out parameters are written only on success.
 *
 * Thread safety: a struct loom_device may be shared by threads (its
 * launch plans, syncobj pool and command arenas are locked).  Tokens, images and builders are not
 * locked: one thread at a time per object.  A struct loom_ring and the
 * tokens it returned belong to one thread.
 */

/* =========================================================================
 * Errors
 * ========================================================================= */

/*
 * Typed errors.  Negative errno values (-4095..-1) keep their usual meaning;
 * these start at -4097 so the two sets never overlap.
 */
enum loom_error {
	LOOM_E_EXTENT_COUNT = -4097,	/* extents given != the thread's rank */
	LOOM_E_NEGATIVE_EXTENT = -4098,	/* an extent is below zero */
	LOOM_E_ARG_COUNT = -4099,	/* args given != the thread's arguments */
	LOOM_E_ARG_TYPE = -4100,	/* an arg's type differs from the signature */
	LOOM_E_DOMAIN_KIND = -4101,	/* dense launch of a dynamic-work thread,
					   or items launch of a dense one */
	LOOM_E_NO_THREAD = -4102,	/* no thread of that name in the image */
	LOOM_E_BAD_IMAGE = -4103,	/* the image is malformed */
	LOOM_E_FABRIC_MISMATCH = -4104,	/* image fabric size != the device's */
	LOOM_E_NO_DEVICE = -4105,	/* no (such) loom device node */
	LOOM_E_RANK_LIMIT = -4106,	/* rank above the device's HW_LIMITS */
	LOOM_E_NOT_SUPPORTED = -4107,	/* the driver lacks a needed feature */
	LOOM_E_FOREIGN_TOKEN = -4108,	/* a dependency token of another device */
	LOOM_E_JOB_EXPIRED = -4109,	/* the driver no longer knows the job */
	LOOM_E_BAD_CONFIG = -4110,	/* builder: a fabric configuration is malformed */
	LOOM_E_DUPLICATE_THREAD = -4111,/* builder: the name is already used */
	LOOM_E_CHECK_FAILED = -4112,	/* host program: a loom.check failed */
	LOOM_E_NO_HOST_FUNC = -4113,	/* no host function of that name */
	LOOM_E_WORK_FAILED = -4114,	/* host program: a dynamic-work run
					   failed without a device error */
	LOOM_E_HOST_FAULT = -4115,	/* host program: a load or store
					   outside every buffer it allocated */
};

/* An English sentence for a LOOM_E_* or negative errno; never NULL. */
const char *loom_strerror(int err);

/* =========================================================================
 * Devices
 * ========================================================================= */

struct loom_device;

struct loom_device_info {
	char path[32];			/* /dev/accel/accel0, /dev/dri/renderD128 */
	uint32_t uapi_version;		/* DRM_LOOM_PARAM_UAPI_VERSION */
	uint32_t num_cores;		/* hardware queues: launch queue < this */
	uint32_t fabric_width;
	uint32_t fabric_height;
	uint32_t max_rank;		/* from DRM_LOOM_PARAM_HW_LIMITS */
	uint32_t hw_version;
	uint32_t hw_caps;		/* LOOM_CAP_* */
	uint64_t features;		/* DRM_LOOM_FEATURE_* (ACCEL_NODE: an accel node) */
};

/*
 * loom's device nodes are compute accelerator nodes (/dev/accel/accelN) on
 * kernels with the accel subsystem (6.2+) and render nodes
 * (/dev/dri/renderDN) on 6.1.  The numbered opens below scan accel nodes,
 * then render nodes, in minor order; when the environment variable
 * LOOM_DEVICE is set, its comma-separated paths are the devices instead,
 * in that order (LOOM_DEVICE=/dev/accel/accel1 uses only that one).
 */

/* Opens @path; LOOM_E_NO_DEVICE if it is not a loom node. */
int loom_device_open(const char *path, struct loom_device **out);
/* Opens the @n-th loom node (0-based). */
int loom_device_open_nth(unsigned n, struct loom_device **out);
/* Opens the first loom node. */
int loom_device_open_first(struct loom_device **out);
/*
 * Opens every loom node, at most @max; returns how many were opened
 * into @devs (0 if there are none) or a negative error (nothing left open).
 */
int loom_device_open_all(struct loom_device **devs, unsigned max);
/* Closes @dev (NULL is fine); BOs and tokens of it must be freed first. */
void loom_device_close(struct loom_device *dev);
const struct loom_device_info *loom_device_info(const struct loom_device *dev);
int loom_device_fd(const struct loom_device *dev);

/* =========================================================================
 * Buffer objects
 * ========================================================================= */

struct loom_bo;

#define LOOM_BO_DEVICE_READ_ONLY	(1u << 0)	/* jobs may not write it */

/* A zero-filled BO of @size bytes, mapped for the CPU and the device. */
int loom_bo_alloc(struct loom_device *dev, uint64_t size, uint32_t flags,
		  struct loom_bo **out);
void *loom_bo_map(const struct loom_bo *bo);
uint64_t loom_bo_va(const struct loom_bo *bo);	/* device VA */
uint64_t loom_bo_size(const struct loom_bo *bo);
uint32_t loom_bo_handle(const struct loom_bo *bo);
/*
 * Frees @bo (NULL is fine).  A job keeps only the BOs in its submission
 * (libloom's own command and configuration BOs), not those its operands
 * point at: free a data BO after the tokens of the jobs using it.
 */
void loom_bo_free(struct loom_bo *bo);

/* =========================================================================
 * Program images (uapi/loom_image.h)
 * ========================================================================= */

struct loom_image;

struct loom_thread_info {
	const char *name;		/* valid while the image lives */
	unsigned index;
	enum loom_domain_kind domain;
	unsigned rank;			/* dense: K; dynamic work: 0 */
	unsigned num_args;
	enum loom_arg_type arg_types[LOOM_IMAGE_MAX_ARGS];
	int work_item_arg;		/* dynamic work: its index; dense: -1 */
	uint32_t child_capacity;	/* dynamic work only */
};

/*
 * Validates and copies an image; LOOM_E_BAD_IMAGE for anything malformed
 * (ELF header, missing/duplicate/out-of-file sections, unknown version,
 * any reference outside its section, bad thread or patch fields).
 */
int loom_image_load(const void *data, size_t size, struct loom_image **out);
int loom_image_load_file(const char *path, struct loom_image **out);
void loom_image_free(struct loom_image *img);
unsigned loom_image_num_threads(const struct loom_image *img);
void loom_image_fabric(const struct loom_image *img, unsigned *width,
		       unsigned *height);
/*
 * The image's .loom.host section (struct loom_host_header ...), 8-byte
 * aligned and valid while the image lives, its size in *@size; NULL (and
 * 0) when the image has no host program.  Not validated by the loader:
 * loom_host_run() checks it before running anything.
 */
const void *loom_image_host_section(const struct loom_image *img,
				    size_t *size);
/* LOOM_E_NO_THREAD if there is no thread @name. */
int loom_image_thread(const struct loom_image *img, const char *name,
		      struct loom_thread_info *info);
/* -EINVAL if @index >= loom_image_num_threads(). */
int loom_image_thread_at(const struct loom_image *img, unsigned index,
			 struct loom_thread_info *info);

/*
 * The image builder: threads with their configurations, each given its
 * launch command template and patches, written out as an ELF image.
 */
struct loom_image_builder;

int loom_builder_new(unsigned fabric_width, unsigned fabric_height,
		     struct loom_image_builder **out);
void loom_builder_free(struct loom_image_builder *b);
/*
 * A dense thread of rank @rank; @config is a struct loom_fabric_config
 * image for the builder's fabric (LOOM_E_BAD_CONFIG otherwise).
 * Template: LOAD_CONFIG, SET_OPERANDS (one per arg), DISPATCH_DENSE.
 */
int loom_builder_add_dense(struct loom_image_builder *b, const char *name,
			   unsigned rank, const enum loom_arg_type *arg_types,
			   unsigned num_args, const void *config,
			   size_t config_size);
/*
 * A dynamic-work thread whose argument @work_item_arg is the item payload.
 * Template: LOAD_CONFIG, SET_OPERANDS, DISPATCH_ITEMS (count, payload and
 * result VA patched at launch; @child_capacity fixed).
 */
int loom_builder_add_dynamic(struct loom_image_builder *b, const char *name,
			     const enum loom_arg_type *arg_types,
			     unsigned num_args, unsigned work_item_arg,
			     uint32_t child_capacity, const void *config,
			     size_t config_size);
/* The image bytes in a malloc()ed buffer the caller free()s. */
int loom_builder_finish(struct loom_image_builder *b, void **bytes,
			size_t *size);

/* =========================================================================
 * Dense launch and tokens
 * ========================================================================= */

/* One launch operand; @value holds a VA, or an integer (i32: low 32 bits). */
struct loom_arg {
	enum loom_arg_type type;
	uint64_t value;
};

/*
 * A launch's completion: a DRM syncobj (plus the job id).  It can be
 * waited on and passed as a dependency of later launches on the same
 * device; free it with loom_token_free().
 */
struct loom_token;

/* What a struct loom_launch runs: a dense dispatch or an items dispatch. */
enum loom_launch_kind {
	LOOM_LAUNCH_DENSE = 0,
	LOOM_LAUNCH_ITEMS = 1,
};

/**
 * struct loom_launch - one launch of one thread, by ioctl or through a ring
 * @kind: LOOM_LAUNCH_DENSE or LOOM_LAUNCH_ITEMS
 * @thread: the thread's name in the image
 * @args: its whole signature (see loom_launch_items() for the work-item
 *	argument of a dynamic-work thread)
 * @n_args: entries of @args
 * @extents: dense: the domain [0, extents[0]) x ..., the thread's rank of them
 * @n_extents: entries of @extents
 * @items: items: how many items the dispatch runs, at least 1
 * @payload_va: items: item i's payload is the u64 at @payload_va + 8 * i
 * @result_va: items: item i's result record is at @result_va + i *
 *	LOOM_ITEM_RESULT_SIZE(child capacity)
 * @counters_va: 0, or a device VA (8-byte aligned) where a
 *	LOOM_PKT_WRITE_COUNTERS after the dispatch writes its struct
 *	loom_hw_counters
 * @deps: tokens (of the same device) the job waits for
 * @n_deps: entries of @deps, at most DRM_LOOM_MAX_IN_SYNCOBJS
 * @queue: the hardware queue (core), below num_cores
 */
struct loom_launch {
	enum loom_launch_kind kind;
	const char *thread;
	const struct loom_arg *args;
	unsigned n_args;
	const int64_t *extents;
	unsigned n_extents;
	uint32_t items;
	uint64_t payload_va;
	uint64_t result_va;
	uint64_t counters_va;
	struct loom_token *const *deps;
	unsigned n_deps;
	unsigned queue;
};

/*
 * Launches @l on @dev by ioctl and returns its token.  Checked before
 * anything is submitted, as loom_launch_dense() and loom_launch_items()
 * list (those two are this with @kind set); -EINVAL for a NULL @dev, @img,
 * @l or @token, or an unknown @kind.  What depends only on the device and
 * the thread is checked once per (device, image, thread) and remembered;
 * the command buffer goes into the device's command arena for @queue, not
 * a BO of its own.
 */
int loom_launch(struct loom_device *dev, const struct loom_image *img,
		const struct loom_launch *l, struct loom_token **token);

/*
 * Launches dense thread @thread of @img over [0, extents[0]) x ... on core
 * @queue, after every token of @deps.  Checked before anything is
 * submitted, in this order: LOOM_E_NO_THREAD, LOOM_E_DOMAIN_KIND,
 * LOOM_E_EXTENT_COUNT, LOOM_E_NEGATIVE_EXTENT, LOOM_E_ARG_COUNT,
 * LOOM_E_ARG_TYPE, LOOM_E_FABRIC_MISMATCH, LOOM_E_RANK_LIMIT, then -EINVAL
 * (queue, too many deps) and LOOM_E_FOREIGN_TOKEN.  Rank 0 is one instance;
 * a zero extent is an empty domain: nothing runs, and the token still
 * completes only after @deps.
 */
int loom_launch_dense(struct loom_device *dev, const struct loom_image *img,
		      const char *thread, const struct loom_arg *args,
		      unsigned n_args, const int64_t *extents,
		      unsigned n_extents, struct loom_token *const *deps,
		      unsigned n_deps, unsigned queue, struct loom_token **token);

/*
 * One items dispatch of dynamic-work thread @thread (LOOM_PKT_DISPATCH_ITEMS):
 * runs @count items one after another on core @queue, item i's payload
 * read from the u64 at @payload_va + 8 * i, its result record (struct
 * loom_item_result: child_count, then the children's payloads in spawn
 * order) written at @result_va + i * LOOM_ITEM_RESULT_SIZE(capacity),
 * capacity being the thread's child_capacity.  @args are the thread's
 * whole signature: the work-item argument's entry must have its type, its
 * value is ignored (each item's payload feeds the payload port).  An item
 * spawning more than the capacity fails the job with -ENOSPC.  Checked
 * before anything is submitted, in this order: LOOM_E_NO_THREAD,
 * LOOM_E_DOMAIN_KIND, LOOM_E_ARG_COUNT, LOOM_E_ARG_TYPE,
 * LOOM_E_FABRIC_MISMATCH, LOOM_E_NOT_SUPPORTED (no SUBMIT feature or no
 * LOOM_CAP_ITEMS), -EINVAL (queue, deps, @count 0, a VA not 8-byte
 * aligned), LOOM_E_FOREIGN_TOKEN.  The payload and result BOs must
 * outlive the job.
 */
int loom_launch_items(struct loom_device *dev, const struct loom_image *img,
		      const char *thread, const struct loom_arg *args,
		      unsigned n_args, uint32_t count, uint64_t payload_va,
		      uint64_t result_va, struct loom_token *const *deps,
		      unsigned n_deps, unsigned queue, struct loom_token **token);

/*
 * Waits for @token; @timeout_ns relative, negative = forever.  Returns 0,
 * the job's error (negative errno, e.g. -EFAULT for an MMU fault),
 * -ETIMEDOUT, or LOOM_E_JOB_EXPIRED.
 */
int loom_token_wait(struct loom_token *token, int64_t timeout_ns);
/*
 * Waits for all @n tokens (any devices) within one @timeout_ns; returns 0
 * or the first failing token's error, in array order.
 */
int loom_token_wait_all(struct loom_token *const *tokens, unsigned n,
			int64_t timeout_ns);
/* 1 if done, 0 if not yet; never blocks (negative on error). */
int loom_token_done(struct loom_token *token);
/*
 * The driver's job id; for a ring launch, 0 until its completion is reaped
 * (and always 0 where the driver lacks DRM_LOOM_FEATURE_URING_JOB_ID).
 */
uint64_t loom_token_job_id(const struct loom_token *token);

struct loom_job_counters {
	uint64_t cycles, firings, stalls, instances, items, spawns;
	uint64_t mem_reads, mem_writes;
};

/*
 * What a finished job did (JOB_INFO); -EBUSY while it runs (a ring
 * launch's: until its completion is reaped); LOOM_E_NOT_SUPPORTED for a
 * ring launch where the driver gives no job id through io_uring.
 */
int loom_token_counters(struct loom_token *token,
			struct loom_job_counters *counters);
/*
 * When a finished job was submitted and when its fence signalled (the
 * kernel's timestamp), both CLOCK_MONOTONIC nanoseconds; -EBUSY while it
 * runs.  A queue runs its jobs in order, so a job started at the later of
 * its submission and the previous job's end on the same queue.
 */
int loom_token_times(struct loom_token *token, uint64_t *submit_ns,
		     uint64_t *done_ns);

/**
 * struct loom_job_record - one finished job, as a run's job observer sees it
 * @thread: the thread it launched
 * @device: index of its device among the run's devices
 * @queue: the hardware queue (core) it ran on
 * @worker: for an items dispatch, the scheduler worker that ran it; else
 *	LOOM_SCHED_NO_WORKER
 * @items: items in an items dispatch; 0 for a dense launch
 * @submit_ns: CLOCK_MONOTONIC when the library submitted it
 * @done_ns: when it completed: the fence's timestamp for a dense launch,
 *	when its completion was reaped for an items dispatch
 * @error: 0, or the job's error (its @counters are then zero)
 * @counters: what the device counted for it
 */
struct loom_job_record {
	const char *thread;
	unsigned device;
	unsigned queue;
	uint32_t worker;
	uint32_t items;
	uint64_t submit_ns;
	uint64_t done_ns;
	int error;
	struct loom_job_counters counters;
};

/* Watches finished jobs; may be called from several threads at once. */
typedef void (*loom_job_observe_fn)(void *ctx,
				    const struct loom_job_record *job);
void loom_token_free(struct loom_token *token);

/* =========================================================================
 * io_uring completions
 * ========================================================================= */

struct loom_ring;

struct loom_completion {
	uint64_t user_data;
	int res;		/* 0, or the job's (or the submit's) -errno */
};

/* A ring (IORING_SETUP_SQE128) for @dev; LOOM_E_NOT_SUPPORTED without
 * DRM_LOOM_FEATURE_URING_CMD. */
int loom_ring_create(struct loom_device *dev, unsigned entries,
		     struct loom_ring **out);
/* Waits for every launch still in flight, then frees the ring. */
void loom_ring_destroy(struct loom_ring *ring);
/*
 * loom_launch_dense() through the ring: same checks, then one
 * DRM_LOOM_URING_CMD_SUBMIT whose completion carries @user_data.  @token
 * may be NULL; a token returned is a syncobj like any other: it serves as
 * a dependency and can be waited on without reaping the ring.
 */
int loom_ring_launch_dense(struct loom_ring *ring,
			   const struct loom_image *img, const char *thread,
			   const struct loom_arg *args, unsigned n_args,
			   const int64_t *extents, unsigned n_extents,
			   struct loom_token *const *deps, unsigned n_deps,
			   unsigned queue, uint64_t user_data,
			   struct loom_token **token);
/*
 * loom_launch() through the ring: same checks, then one
 * DRM_LOOM_URING_CMD_SUBMIT whose completion carries @user_data; @token may
 * be NULL.  The command buffer goes into the ring's own command arena,
 * reused as the ring's completions arrive.
 */
int loom_ring_launch(struct loom_ring *ring, const struct loom_image *img,
		     const struct loom_launch *l, uint64_t user_data,
		     struct loom_token **token);

/* loom_launch_items() through the ring, like loom_ring_launch_dense(). */
int loom_ring_launch_items(struct loom_ring *ring,
			   const struct loom_image *img, const char *thread,
			   const struct loom_arg *args, unsigned n_args,
			   uint32_t count, uint64_t payload_va,
			   uint64_t result_va, struct loom_token *const *deps,
			   unsigned n_deps, unsigned queue, uint64_t user_data,
			   struct loom_token **token);
/* Launches whose completion has not been reaped yet. */
unsigned loom_ring_in_flight(const struct loom_ring *ring);
/*
 * Reaps up to @max completions into @out; with @wait, blocks until at
 * least one is available (if any is in flight).  Returns the count.
 */
int loom_ring_reap(struct loom_ring *ring, struct loom_completion *out,
		   unsigned max, bool wait);

/* =========================================================================
 * The device adapter: a dynamic-work thread on the device
 * =========================================================================
 *
 * Drains one DynamicWork domain (see "Dynamic work" above) through the
 * bounded scheduler, running the items on devices: worker w is bound to
 * device w % n_devices and core (w / n_devices) % num_cores of it, and owns
 * one io_uring (struct loom_ring) and its own payload and result BOs of
 * max_batch items.  Each worker runs on its own thread (worker 0 on the
 * caller's): it acquires a batch of ready items (loom_sched_acquire_batch),
 * writes their payloads, launches one items dispatch through its ring,
 * reaps the CQE, then for each item in batch order publishes the children
 * the device reported (one group, in spawn = ordinal order) and completes
 * it.  Identities are the scheduler's, so a run is comparable item for item
 * with loom_work_sync_run() over the same tree.
 */

/* struct loom_work_device_config.flags */
#define LOOM_WORK_DEVICE_NO_TRACE	(1u << 0)	/* record no replay trace */
#define LOOM_WORK_DEVICE_TOKEN		(1u << 1)	/* return a collective token */

/*
 * Watches one item whose dispatch succeeded, from its worker's thread,
 * before its children are published: @children[0 .. @count) are the
 * payloads the device reported, in spawn order.  Optional; it must not
 * call back into the run.
 */
typedef void (*loom_work_device_observe_fn)(void *ctx,
					    const struct loom_sched_item *item,
					    const uint64_t *children,
					    size_t count);

/**
 * struct loom_work_device_config - one device run
 * @occurrence: dispatch occurrence
 * @root_payload: the launch's one root payload
 * @image: the program image
 * @thread: a dynamic-work thread of @image
 * @args: its whole signature, as for loom_launch_items() (the work-item
 *	entry's value is ignored)
 * @n_args: entries of @args
 * @device_args: NULL, or one argument array per device (n_args entries
 *	each) replacing @args on that device: a memref is a device VA, so a
 *	run on several devices needs each one's own
 * @devices: the devices, at least one; every one must fit the image
 * @n_devices: entries of @devices
 * @workers: scheduler workers, at least 1
 * @deque_capacity: per-worker deque capacity, at least 1
 * @max_batch: items per dispatch, at most; 0 means 1
 * @flags: LOOM_WORK_DEVICE_*
 * @observe: NULL, or called once per item that ran successfully
 * @observe_ctx: its first argument
 * @observe_job: NULL, or called once per items dispatch, from the thread
 *	of the worker that ran it, after its completion was reaped
 * @observe_job_ctx: its first argument
 */
struct loom_work_device_config {
	uint64_t occurrence;
	uint64_t root_payload;
	const struct loom_image *image;
	const char *thread;
	const struct loom_arg *args;
	unsigned n_args;
	const struct loom_arg *const *device_args;
	struct loom_device *const *devices;
	unsigned n_devices;
	uint32_t workers;
	uint32_t deque_capacity;
	uint32_t max_batch;
	uint32_t flags;
	loom_work_device_observe_fn observe;
	void *observe_ctx;
	loom_job_observe_fn observe_job;
	void *observe_job_ctx;
};

/**
 * struct loom_work_device_result - what a device run did
 * @work: as for the synchronous adapter; items_run counts items that
 *	were in a dispatch whose CQE was reaped, @work.failed_item names
 *	the failing item
 * @jobs_submitted: items dispatches submitted
 * @counters: the device's counters, summed over the dispatches that
 *	succeeded (each dispatch ends with a LOOM_PKT_WRITE_COUNTERS)
 * @device_error: with LOOM_WORK_DEVICE_ERROR, the launch's or job's error
 *	(a LOOM_E_* or negative errno; -ENOSPC: the item spawned more than
 *	the thread's child capacity); else 0
 * @token: with LOOM_WORK_DEVICE_TOKEN and a run that succeeded, a token of
 *	devices[0] (a syncobj the library signals once the domain has
 *	completed): wait on it, or pass it as a dependency of later launches
 *	on that device.  loom_work_device_result_free() frees it unless the
 *	caller took it (set it to NULL and free it with loom_token_free()).
 */
struct loom_work_device_result {
	struct loom_work_sync_result work;
	uint64_t jobs_submitted;
	struct loom_job_counters counters;
	int device_error;
	struct loom_token *token;
};

/*
 * Admits @config->root_payload and drains the whole domain on the devices.
 * Returns:
 *   LOOM_WORK_OK: every item ran on a device and completed;
 *   LOOM_WORK_DEVICE_ERROR with @result->work.failed: a launch or a job
 *	failed (@result->device_error says how); the failing item is the
 *	first of its dispatch whose result record the device did not write;
 *   LOOM_WORK_QUEUE_CAPACITY, LOOM_WORK_CHILD_OVERFLOW, or any error
 *	publication answered: as for loom_work_sync_run();
 *	after each of these the domain was cancelled and drained to
 *	completion: every item is retired, none hangs;
 *   LOOM_WORK_DEVICE_ERROR without @result->work.failed: the launch does
 *	not fit a device (@result->device_error: LOOM_E_NO_THREAD,
 *	LOOM_E_DOMAIN_KIND, LOOM_E_ARG_COUNT, LOOM_E_ARG_TYPE,
 *	LOOM_E_FABRIC_MISMATCH, LOOM_E_NOT_SUPPORTED, ...) or a ring or BO
 *	could not be set up: nothing ran;
 *   LOOM_WORK_INVALID_ARGUMENT: nothing ran and @result is untouched;
 *   LOOM_WORK_OUT_OF_MEMORY without @result->work.failed: as for
 *	loom_work_sync_run().
 * On every return but LOOM_WORK_INVALID_ARGUMENT, @result is filled and
 * must be released with loom_work_device_result_free().
 */
enum loom_work_error loom_work_device_run(const struct loom_work_device_config *config,
					  struct loom_work_device_result *result);

void loom_work_device_result_free(struct loom_work_device_result *result);

/* =========================================================================
 * Host programs (.loom.host, Documentation/compiler.rst)
 * =========================================================================
 *
 * loom_host_run() interprets an image's host function on one device:
 * ALLOC takes a zeroed BO, LOAD and STORE go through its CPU mapping (after
 * every launch made so far has completed, so host accesses see launches in
 * program order, as in the reference interpreter), a dense LAUNCH is a
 * loom_launch_dense() on queue 0 after the tokens of its wait list, WAIT
 * waits for a launch's token, a dynamic-work LAUNCH drains its domain with
 * loom_work_device_run() (after its wait list) before the next instruction.
 * The library prints nothing itself: PRINT goes to @print or @out.
 */

/* Receives one PRINT: @value of enum loom_arg_type @type. */
typedef void (*loom_host_print_fn)(void *ctx, enum loom_arg_type type,
				   int64_t value);

/**
 * struct loom_host_options - how to run a host program (NULL: defaults)
 * @func: the host function; NULL means "main"
 * @print: NULL, or called for each PRINT (takes precedence over @out)
 * @print_ctx: its first argument
 * @out: NULL (PRINT is silent), or where PRINT writes "<value>\n"
 * @workers: dynamic-work scheduler workers; 0 means 1
 * @deque_capacity: per-worker deque capacity; 0 means 65536
 * @max_batch: items per dispatch; 0 means 64
 * @timeout_ns: for each token wait; 0 or negative means forever
 * @observe_job: NULL, or called for every job once it is known to have
 *	finished (dense launches: when the run first waits for them;
 *	items dispatches: as loom_work_device_config.observe_job)
 * @observe_domain: NULL, or called after each dynamic-work launch with
 *	its thread and result; the result then carries the scheduler's
 *	replay trace (@result->work.trace), valid during the call
 * @observe_ctx: the first argument of both
 */
struct loom_host_options {
	const char *func;
	loom_host_print_fn print;
	void *print_ctx;
	FILE *out;
	uint32_t workers;
	uint32_t deque_capacity;
	uint32_t max_batch;
	int64_t timeout_ns;
	loom_job_observe_fn observe_job;
	void (*observe_domain)(void *ctx, const char *thread,
			       const struct loom_work_device_result *result);
	void *observe_ctx;
};

/**
 * struct loom_host_stats - what a run did (filled on success and failure)
 * @jobs: jobs submitted (dense launches plus items dispatches)
 * @cycles: device cycles, summed over every job
 * @firings: PE firings, likewise
 * @items: dynamic-work items run
 * @steals: dynamic-work acquisitions that stole
 * @insns: host instructions executed
 * @failed_insn: index (in the host section) of the instruction that
 *	failed, or -1
 * @check_lhs: for LOOM_E_CHECK_FAILED, the two values compared
 * @check_rhs: likewise
 */
struct loom_host_stats {
	uint64_t jobs;
	uint64_t cycles;
	uint64_t firings;
	uint64_t items;
	uint64_t steals;
	uint64_t insns;
	int64_t failed_insn;
	int64_t check_lhs, check_rhs;
};

/*
 * Runs @opt->func of @img on @dev, and waits for everything it launched.
 * Returns 0, or the first error: LOOM_E_BAD_IMAGE (no host program, or one
 * that does not validate; nothing ran), LOOM_E_NO_HOST_FUNC,
 * LOOM_E_CHECK_FAILED (a loom.check did not hold), LOOM_E_HOST_FAULT,
 * LOOM_E_WORK_FAILED, -ENOMEM, or any error of the launches, waits and
 * BO allocations it made.  @stats may be NULL.
 */
int loom_host_run(struct loom_device *dev, const struct loom_image *img,
		  const struct loom_host_options *opt,
		  struct loom_host_stats *stats);

/* =========================================================================
 * Source induction variables (spec §3)
 * ========================================================================= */

/* lower + coord * step, wrapping modulo 2^64 like the device. */
static inline int64_t loom_source_iv(int64_t lower, int64_t coord, int64_t step)
{
	return (int64_t)((uint64_t)lower + (uint64_t)coord * (uint64_t)step);
}

#ifdef __cplusplus
}
#endif

#endif /* LOOM_LOOM_H */
