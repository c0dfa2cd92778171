/* SPDX-License-Identifier: MIT */
/*
 * DOC: the dynamic-work core (public)
 *
 * libloom's dynamic-work core: work-item identity, the responsibility
 * kernel, the bounded work-stealing scheduler with its replay trace, and
 * the synchronous adapter (lib/work.c, lib/sched.c, lib/adapter_sync.c).
 * Pure: no device, no system call beyond threads and memory, usable
 * without a loom device.  <loom/loom.h>, the device runtime, includes it.
 *
 * Conventions: functions never set errno and never print; they report
 * failure with the typed enum loom_error (<loom/error.h>: LOOM_OK, 0, is
 * success); out
 * parameters are written only on success unless documented; opaque
 * objects are created by *_create() and released by *_destroy().
 */
#ifndef LOOM_WORK_H
#define LOOM_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <loom/error.h>

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
 * from any thread (but not *_destroy() while others still use the object),
 * and each call is one atomic transaction.  The kernel API serialises on a
 * mutex of the domain; the scheduler's common path (acquire, publish,
 * complete) takes no lock shared between workers and makes no system call
 * (Documentation/runtime.rst, "Concurrency").  Identity functions only read
 * immutable data and need no lock.
 */

/* Where a domain is in its life. */
enum loom_work_status {
	LOOM_WORK_AWAITING_ROOT = 0,	/* created; the root source is still open */
	LOOM_WORK_ACTIVE,		/* root admitted; responsibilities remain */
	LOOM_WORK_COMPLETED,		/* root source closed and no responsibility left */
};

/* ------------------------------------------------------ identity --- */

/*
 * One step of an identity path: an item's parent, ordinal and depth, and a
 * cache of its hash.  Opaque and immutable; owned by the domain that
 * created it.
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

/*
 * Structural equality; O(1) when the hashes differ (once computed, see
 * loom_item_id_hash()), else O(depth).
 */
bool loom_item_id_equal(const struct loom_item_id *a,
			const struct loom_item_id *b);

/*
 * A structural hash: equal ids hash equal, in every domain and process.
 * Computed when first asked for and cached along the path: O(1) once the
 * parent's is known, else about O(d) for the d ancestors not hashed before.
 */
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
 * @serial: which responsibility: unique in its domain, from 1 (the root);
 *	0 is no responsibility.  Each scheduler worker issues its serials
 *	from blocks it reserves, so they are ordered per worker, not dense
 *	across workers; the kernel API's are consecutive.
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
 * Creates a domain, its root source open, for a dispatch occurrence
 * libloom mints (spec §2.3: the runtime owns them): non-zero, larger than
 * every occurrence minted before in the process, and never minted again,
 * so no two domains of the process share one, even of the same root
 * launch (loom_work_domain_occurrence() tells which).  After UINT64_MAX,
 * the last one, creation is LOOM_WORK_OCCURRENCES_EXHAUSTED.
 *
 * The domain keeps every identity it issues until it is destroyed (memory
 * is linear in the number of items: 64 bytes an item, 128 with a
 * scheduler's trace); then libloom keeps up to 256 MiB of that storage,
 * mapped, for the process's later domains.
 */
enum loom_error loom_work_domain_create(struct loom_work_domain **out);

/*
 * Replay and tests only: loom_work_domain_create() for the caller's
 * @occurrence (non-zero, else LOOM_WORK_INVALID_ARGUMENT), e.g. a recorded
 * trace's, to reproduce its ids and text exactly.  Nothing is minted or
 * reserved: the caller vouches that no live domain or launch of the
 * process uses @occurrence (minted occurrences only grow, so one minted
 * earlier whose dispatch is over is safe to reuse).
 */
enum loom_error
loom_work_domain_create_with_occurrence(uint64_t occurrence,
					struct loom_work_domain **out);

/*
 * Releases the caller's reference.  (A scheduler's domain is its own; its
 * storage lives on while a trace taken from the scheduler does.)
 */
void loom_work_domain_destroy(struct loom_work_domain *domain);

/* The dispatch occurrence of @domain: the first component of its ids. */
uint64_t loom_work_domain_occurrence(const struct loom_work_domain *domain);
enum loom_work_status loom_work_domain_status(const struct loom_work_domain *domain);

/*
 * Responsibilities acquired and not yet retired: a cache of the set,
 * derived from counters.  While others spawn and retire it may lag, but
 * never below zero and never to zero while a responsibility is live; exact
 * when nothing runs.
 */
uint64_t loom_work_active_count(const struct loom_work_domain *domain);

/*
 * Admits the root: acquires its responsibility and closes the root source
 * in one transaction.  The root is (occurrence, Root, 0).  A second
 * admission is LOOM_WORK_ROOT_CLOSED.  @root_id may be NULL.
 */
enum loom_error loom_work_admit(struct loom_work_domain *domain,
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
enum loom_error loom_work_spawn_group(struct loom_work_domain *domain,
					   struct loom_work_resp parent,
					   size_t count,
					   struct loom_work_resp *children,
					   struct loom_item_id *child_ids);

static inline enum loom_error
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
enum loom_error loom_work_retire(struct loom_work_domain *domain,
				      struct loom_work_resp resp,
				      enum loom_work_status *status);

/* The identity of any responsibility @domain issued, live or retired. */
enum loom_error loom_work_item_id(const struct loom_work_domain *domain,
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
 *
 * The adapters' configurations embed it (their @sched), so a new
 * scheduling knob is added here once.
 *
 * @replay_occurrence: 0 (the normal case): the domain's occurrence is
 *	minted, as by loom_work_domain_create(); else, for replay and tests
 *	only, the occurrence to use, as loom_work_domain_create_with_occurrence()
 *	takes it
 * @workers: number of workers, at least 1
 * @deque_capacity: queued items each worker's deque holds, at least 1
 * @max_batch: items one worker may hold active at once; 0 means 1
 * @flags: LOOM_SCHED_* flags
 */
struct loom_sched_config {
	uint64_t replay_occurrence;
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

/*
 * Creates a scheduler and its domain (occurrence: see @replay_occurrence).
 * LOOM_WORK_INVALID_ARGUMENT, LOOM_WORK_OUT_OF_MEMORY,
 * LOOM_WORK_OCCURRENCES_EXHAUSTED.
 */
enum loom_error loom_sched_create(const struct loom_sched_config *config,
				       struct loom_sched **out);
void loom_sched_destroy(struct loom_sched *sched);

/* The scheduler's domain, for queries only: transact through the scheduler. */
const struct loom_work_domain *loom_sched_domain(const struct loom_sched *sched);

/* Items queued on @worker's deque now (0 for a worker out of range). */
uint32_t loom_sched_queued(const struct loom_sched *sched, uint32_t worker);

/* Admits the root with @payload onto worker 0's deque.  @root may be NULL. */
enum loom_error loom_sched_admit(struct loom_sched *sched,
				      uint64_t payload,
				      struct loom_work_resp *root);

/* loom_sched_acquire_batch() flags */
#define LOOM_SCHED_WAIT		(1u << 0)	/* block until work or completion */

/*
 * Makes up to @max items (at most the configured max_batch) active on
 * @worker, one acquisition at a time by the policy above; *@count gets how
 * many (0 on failure).  Returns LOOM_OK if it got at least one; else
 * LOOM_WORK_WORKER_BUSY, LOOM_WORK_DOMAIN_COMPLETE, or LOOM_WORK_NO_WORK
 * (never with LOOM_SCHED_WAIT: that blocks until something is queued or
 * the domain completes, including before the root is admitted).
 *
 * A later adapter runs a batch elsewhere, then for each item publishes its
 * children (one group, ordinal order) and completes or cancels it.
 */
enum loom_error loom_sched_acquire_batch(struct loom_sched *sched,
					      uint32_t worker,
					      struct loom_sched_item *items,
					      size_t max, unsigned int flags,
					      size_t *count);

static inline enum loom_error
loom_sched_acquire(struct loom_sched *sched, uint32_t worker,
		   struct loom_sched_item *item)
{
	size_t count;

	return loom_sched_acquire_batch(sched, worker, item, 1, 0, &count);
}

static inline enum loom_error
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
enum loom_error loom_sched_publish(struct loom_sched *sched,
					const struct loom_sched_item *parent,
					const uint64_t *payloads, size_t count,
					struct loom_work_resp *children);

/*
 * loom_sched_publish() then loom_sched_complete() of @parent as one call
 * (two transitions, recorded in that order; one pass over the worker's
 * state instead of two).  If publication fails, nothing happens and its
 * error is returned; once it succeeds, completion cannot fail.  *@status
 * (may be NULL) as in loom_sched_complete().
 */
enum loom_error loom_sched_publish_complete(struct loom_sched *sched,
					    const struct loom_sched_item *parent,
					    const uint64_t *payloads,
					    size_t count,
					    struct loom_work_resp *children,
					    enum loom_work_status *status);

/*
 * Completes the active @item: retires it.  *@status (may be NULL) as in
 * loom_work_retire().  LOOM_WORK_CANCEL_REQUESTED if a cancellation is
 * pending: call loom_sched_cancel_active() instead.
 */
enum loom_error loom_sched_complete(struct loom_sched *sched,
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
enum loom_error loom_sched_cancel(struct loom_sched *sched,
				       struct loom_work_resp item,
				       enum loom_sched_cancel_effect *effect,
				       enum loom_work_status *status);

/*
 * Retires the active @item whose cancellation was requested.
 * LOOM_WORK_NO_CANCEL_REQUEST if none was.
 */
enum loom_error loom_sched_cancel_active(struct loom_sched *sched,
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
enum loom_error loom_sched_cancel_all(struct loom_sched *sched,
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
enum loom_error loom_sched_take_trace(struct loom_sched *sched,
					   struct loom_sched_trace **out);
size_t loom_sched_trace_count(const struct loom_sched_trace *trace);
const struct loom_sched_event *
loom_sched_trace_events(const struct loom_sched_trace *trace);
/*
 * The dispatch occurrence of the domain it was taken from (every event's
 * item carries it too), also when it holds no event; 0 for NULL.
 */
uint64_t loom_sched_trace_occurrence(const struct loom_sched_trace *trace);
void loom_sched_trace_free(struct loom_sched_trace *trace);

/* A constant name for @kind ("admit", "acquire-local", ...); never NULL. */
const char *loom_sched_event_name(enum loom_sched_event_kind kind);

/* ------------------------------------------- synchronous adapter --- */

/* What the callback says about its item. */
enum loom_work_sync_verdict {
	LOOM_WORK_SYNC_CHILDREN = 0,	/* publish the children reported, then retire */
	LOOM_WORK_SYNC_CANCEL,		/* cancel this item (request, then cancel);
					   it publishes nothing, so reporting
					   children with it fails the run */
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

/* struct loom_work_sync_config.flags (the trace: @sched.flags) */
#define LOOM_WORK_SYNC_THREADED	(1u << 0)	/* one thread per worker */
#define LOOM_WORK_SYNC_BUDGET	(1u << 1)	/* at most @max_items callbacks */

/**
 * struct loom_work_sync_config - one synchronous run
 * @sched: the scheduler's shape: workers (at least 1), deque capacity
 *	(at least 1) and flags (LOOM_SCHED_NO_TRACE: record no replay
 *	trace); items run one at a time, so @sched.max_batch only sizes each
 *	worker's active slots; @sched.replay_occurrence is 0 unless the run
 *	replays a recorded one
 * @root_payload: the launch's one root payload
 * @child_capacity: most children one item may report
 * @flags: LOOM_WORK_SYNC_*
 * @payload_type: 0: a payload is any u64; else the thread's work-item
 *	type, an enum loom_arg_type of <loom_image.h>: LOOM_ARG_I64 or
 *	LOOM_ARG_INDEX (any u64, read as signed), or LOOM_ARG_I32 (an int32
 *	sign-extended to 64 bits, as the fabric carries it: the root and
 *	every child must be one)
 * @max_items: with LOOM_WORK_SYNC_BUDGET, the most callbacks the run
 *	makes (its budget; 0 runs none); ignored without that flag
 *
 * Without LOOM_WORK_SYNC_THREADED the calling thread drives the workers in
 * turn, 0, 1, ..., N-1, 0, ..., each running at most one item per turn; the
 * run (and its trace) is then deterministic.
 */
struct loom_work_sync_config {
	struct loom_sched_config sched;
	uint64_t root_payload;
	uint32_t child_capacity;
	uint32_t flags;
	uint32_t payload_type;
	uint32_t max_items;	/* was tail padding: read only with the flag */
};

/**
 * struct loom_work_sync_result - what a run did
 * @items_run: callbacks made
 * @items_completed: items retired by completion
 * @items_cancelled: items retired by cancellation (queued or active)
 * @children_published: children queued
 * @steals: acquisitions that stole
 * @occurrence: the dispatch occurrence of the run's domain, minted for it
 *	(unless @sched.replay_occurrence named one): the first component of
 *	every id below; 0 if the run failed before it had a domain
 * @failed: the run failed because of @failed_item (the first failure;
 *	false for LOOM_WORK_INCOMPLETE, which no item caused)
 * @failed_item: the item whose children did not fit, that overflowed,
 *	whose callback aborted, or that was cancelled with children
 * @failed_payload: its payload
 * @trace: the replay trace, empty with LOOM_SCHED_NO_TRACE; it keeps
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
	uint64_t occurrence;
	bool failed;
	struct loom_item_id failed_item;
	uint64_t failed_payload;
	struct loom_sched_trace *trace;
};

/*
 * Admits @config->root_payload and drains the whole domain through the
 * bounded scheduler, calling @fn once per acquired item.  Returns:
 *   LOOM_OK: every item completed or was cancelled by its callback (a
 *	budget the domain did not exceed changes nothing);
 *   LOOM_WORK_QUEUE_CAPACITY: an item's children did not fit its worker's
 *	deque (publication is all or nothing, so none was queued);
 *   LOOM_WORK_CHILD_OVERFLOW, LOOM_WORK_CALLBACK_ABORTED,
 *	LOOM_WORK_CANCEL_CHILDREN (a LOOM_WORK_SYNC_CANCEL verdict that also
 *	reported children: the item was cancelled, none was published), or
 *	any other error publication answered: likewise, naming the item;
 *	after each of these the domain was cancelled and drained to
 *	completion, and @result->failed_item names the first failing item
 *	(a publication that ran out of memory is one of these too);
 *   LOOM_WORK_PAYLOAD_WIDTH with @result->failed: an item reported a child
 *	that is not a value of @config->payload_type (none of its children
 *	was published); the domain was cancelled and drained likewise;
 *   LOOM_WORK_INCOMPLETE: with LOOM_WORK_SYNC_BUDGET, the run made
 *	@config->max_items callbacks and took an item more: it stopped there
 *	(unless a failure above came first).  The domain was cancelled and
 *	drained likewise (no item taken past the budget ran);
 *	@result counts what the run did (items_run is max_items) and holds
 *	its trace; @result->failed is false: no item failed;
 *   LOOM_WORK_INVALID_ARGUMENT: nothing ran and @result is untouched;
 *   LOOM_E_UNSUPPORTED_PAYLOAD: @config->payload_type is no payload type;
 *	nothing ran and @result is untouched;
 *   LOOM_WORK_PAYLOAD_WIDTH without @result->failed: the root payload is
 *	not a value of @config->payload_type; nothing ran, @result is
 *	untouched;
 *   LOOM_WORK_OUT_OF_MEMORY without @result->failed: setting up failed and
 *	nothing ran, or the trace could not be handed over at the end;
 *   LOOM_WORK_OCCURRENCES_EXHAUSTED: no occurrence was left to mint;
 *	nothing ran.
 * On every other return @result is filled and
 * must be released (loom_work_sync_result_free() also accepts a zeroed
 * result).
 */
enum loom_error loom_work_sync_run(const struct loom_work_sync_config *config,
					loom_work_sync_fn fn, void *ctx,
					struct loom_work_sync_result *result);

void loom_work_sync_result_free(struct loom_work_sync_result *result);

/* ================================================= end dynamic work === */

#ifdef __cplusplus
}
#endif

#endif /* LOOM_WORK_H */
