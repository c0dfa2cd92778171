// SPDX-License-Identifier: MIT
/*
 * DOC: the bounded work-stealing scheduler
 *
 * sched.c: the bounded work-stealing scheduler: its lifecycle, the owner
 * locks, parking, and the transitions.  The deque is sched_deque.h, the
 * commit of a device run sched_commit.c, taking the replay trace
 * sched_trace.c; sched_internal.h is what they share.
 *
 * Every queued or active item holds one responsibility of the scheduler's
 * domain; the scheduler only decides where an item waits and who runs it,
 * and asks the kernel (work.c) for every admission, spawn and retirement.
 * Each transition checks every precondition and allocates everything it
 * needs before it changes anything, so a failure leaves no trace.
 *
 * Concurrency.  There is no domain-wide lock on the common path:
 *   - each worker's deque is a bounded Chase-Lev deque: its owner pushes
 *     and pops at the bottom without a lock, thieves take the top with a
 *     compare-and-swap;
 *   - each worker has an owner lock: an atomic flag on the worker's own
 *     cache line that the worker's own operations (acquire, publish,
 *     complete, cancel_active) take, so one worker's state has one writer
 *     at a time even when several threads drive the same worker.  Thieves
 *     never take it; nobody else does except the rare paths below, so it
 *     is uncontended: one atomic exchange on a line the worker owns;
 *   - the rare paths take the domain's mutex: admission also worker 0's
 *     owner lock, cancel and cancel_all every owner lock in worker order;
 *     with all of them held no deque, active slot or record changes, which
 *     makes cancellation exact, atomic and linear.  Taking the trace needs
 *     only the mutex;
 *   - the active count is derived (work.c): the lanes' acquired minus
 *     their retired counters, and the completing retirement is elected
 *     there.
 * No system call on the common path: a worker that finds nothing parks on
 * a futex, and a publisher wakes one sleeper, only when its deque was
 * empty and someone sleeps (see park() and loom_sched_wake_one()).
 *
 * The replay trace: each event takes a number from one counter and is
 * stored in its item's record (sched_internal.h), so recording needs no
 * log, no lock and no memory; taking the trace orders the events by number.
 * The numbers respect causality: a child's publish number is taken before
 * the child is visible, an acquisition's after the item is taken (a
 * thief's after it read top and before its compare-and-swap, so thieves
 * of one deque number their steals in top order), a retirement's before
 * its counter moves, and the completing retirement is the last event of
 * the domain: its number is the last one taken when it was elected, or a
 * fresh one (last_number()).
 */
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sched_internal.h"

/*
 * The steps of one item (publish, retire, take the next) are small
 * functions; the loop that composes them (loom_sched_run_loop()) gets them
 * inline, so a step costs no calls and no saved registers.  They take the
 * worker's state from their caller: recomputed in each step (a load of
 * sched->workers, which any store might have changed as far as the
 * compiler knows, and a multiplication), it cost 15 instructions an item.
 */
#define ALWAYS_INLINE	static inline __attribute__((always_inline))
/*
 * The same for the steps sched_commit.c composes too: inline here, and
 * external definitions for it (their declarations in sched_internal.h
 * make these definitions external, C11 6.7.4).
 */
#define SHARED_INLINE	inline __attribute__((always_inline))

/* ------------------------------------------------------- owner locks --- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Out of line: only contended with a rare path. */
__attribute__((noinline, cold)) void
loom_sched_owner_lock_slow(struct sched_worker *w)
{
	unsigned int spins = 0;

	do {
		/* Only a rare path holds it for long: then yield the CPU. */
		while (atomic_load_explicit(&w->lock, memory_order_relaxed)) {
			if (++spins < 128)
				cpu_relax();
			else
				sched_yield();
		}
	} while (atomic_exchange_explicit(&w->lock, 1, memory_order_acquire));
}

/* The rare paths: the domain's mutex, then every worker in order. */
static void lock_all(struct loom_sched *sched)
{
	loom_work_lock(sched->domain);
	for (uint32_t i = 0; i < sched->nworkers; i++)
		owner_lock(&sched->workers[i]);
}

static void unlock_all(struct loom_sched *sched)
{
	for (uint32_t i = sched->nworkers; i-- > 0;)
		owner_unlock(&sched->workers[i]);
	loom_work_unlock(sched->domain);
}

/* ------------------------------------------------------------ parking --- */

/* How long a parked worker sleeps before it looks again on its own. */
#define PARK_TIMEOUT_NS		(50 * 1000 * 1000)

static long futex(_Atomic uint32_t *word, int op, uint32_t val,
		  const struct timespec *timeout)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static bool any_queued(const struct loom_sched *sched)
{
	for (uint32_t i = 0; i < sched->nworkers; i++)
		if (deque_size(&sched->workers[i].deque))
			return true;
	return false;
}

static bool completed(const struct loom_sched *sched)
{
	return atomic_load_explicit(&sched->domain->completed,
				    memory_order_acquire);
}

/*
 * Sleeps until woken, unless work or completion appeared.  Registering
 * first and then looking again pairs with a publisher's store of bottom
 * and wake_one()'s load, all sequentially consistent: either the waker
 * sees this sleeper, or this sleeper sees the waker's items.  The epoch
 * is read before looking, so a wake between the look and the sleep makes
 * the sleep return at once.  The timeout only
 * bounds the cost of a wake that a publisher skipped because its deque
 * looked non-empty (see loom_sched_publish); no completion is ever missed:
 * completion always wakes everyone.
 */
static __attribute__((noinline)) void park(struct loom_sched *sched)
{
	struct timespec timeout = { 0, PARK_TIMEOUT_NS };
	uint32_t epoch;

	atomic_fetch_add_explicit(&sched->sleepers, 1, memory_order_seq_cst);
	epoch = atomic_load_explicit(&sched->epoch, memory_order_acquire);
	if (!any_queued(sched) && !completed(sched) &&
	    futex(&sched->epoch, FUTEX_WAIT_PRIVATE, epoch, &timeout) == 0)
		atomic_store_explicit(&sched->wake_pending, 0,
				      memory_order_release);
	atomic_fetch_sub_explicit(&sched->sleepers, 1, memory_order_relaxed);
}

/*
 * Something was queued: wake one sleeper, if any sleeps and no wake is in
 * flight already (the woken one looks at every deque).  No thundering
 * herd, and no system call when nobody sleeps.
 */
void loom_sched_wake_one(struct loom_sched *sched)
{
	if (!atomic_load_explicit(&sched->sleepers, memory_order_seq_cst) ||
	    atomic_exchange_explicit(&sched->wake_pending, 1,
				     memory_order_acq_rel))
		return;
	atomic_fetch_add_explicit(&sched->epoch, 1, memory_order_release);
	if (futex(&sched->epoch, FUTEX_WAKE_PRIVATE, 1, NULL) <= 0)
		atomic_store_explicit(&sched->wake_pending, 0,
				      memory_order_release);
}

/* The domain completed: every sleeper must return. */
static void wake_all(struct loom_sched *sched)
{
	atomic_fetch_add_explicit(&sched->epoch, 1, memory_order_release);
	if (atomic_load_explicit(&sched->sleepers, memory_order_seq_cst))
		futex(&sched->epoch, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* ---------------------------------------------------------- lifecycle --- */

static void free_workers(struct loom_sched *sched)
{
	if (!sched->workers)
		return;
	for (uint32_t i = 0; i < sched->nworkers; i++) {
		free(sched->workers[i].deque.ring);
		free(sched->workers[i].active);
	}
	free(sched->workers);
}

static enum loom_error alloc_workers(struct loom_sched *sched)
{
	uint64_t ring = 1;

	while (ring < sched->capacity)
		ring <<= 1;
	sched->workers = aligned_alloc(LOOM_CACHE_LINE,
				       sched->nworkers * sizeof(*sched->workers));
	if (!sched->workers)
		return LOOM_WORK_OUT_OF_MEMORY;
	memset(sched->workers, 0, sched->nworkers * sizeof(*sched->workers));
	for (uint32_t i = 0; i < sched->nworkers; i++) {
		struct sched_worker *w = &sched->workers[i];

		atomic_init(&w->deque.top, 0);
		atomic_init(&w->deque.bottom, 0);
		atomic_init(&w->lock, 0);
		w->deque.mask = ring - 1;
		/* Shared with thieves anyway; calloc() maps a big one zeroed. */
		w->deque.ring = calloc(ring, sizeof(*w->deque.ring));
		w->active = loom_lines_alloc(sched->max_batch,
					     sizeof(*w->active));
		if (!w->deque.ring || !w->active)
			return LOOM_WORK_OUT_OF_MEMORY;
	}
	return LOOM_OK;
}

enum loom_error loom_sched_create(const struct loom_sched_config *config,
				  struct loom_sched **out)
{
	struct loom_sched *sched;
	enum loom_error err;

	if (!config || !out || !config->workers || !config->deque_capacity ||
	    config->workers == LOOM_SCHED_NO_WORKER)
		return LOOM_WORK_INVALID_ARGUMENT;
	sched = aligned_alloc(LOOM_CACHE_LINE, sizeof(*sched));
	if (!sched)
		return LOOM_WORK_OUT_OF_MEMORY;
	memset(sched, 0, sizeof(*sched));
	sched->nworkers = config->workers;
	sched->capacity = config->deque_capacity;
	sched->max_batch = config->max_batch ? config->max_batch : 1;
	sched->tracing = !(config->flags & LOOM_SCHED_NO_TRACE);
	atomic_init(&sched->sleepers, 0);
	atomic_init(&sched->wake_pending, 0);
	atomic_init(&sched->epoch, 0);
	atomic_init(&sched->cancelling, false);
	err = alloc_workers(sched);
	if (!err)
		err = loom_work_domain_create_lanes(config->replay_occurrence,
						    sched->nworkers,
						    sched->tracing,
						    &sched->domain);
	if (err) {
		free_workers(sched);
		free(sched);
		return err;
	}
	*out = sched;
	return LOOM_OK;
}

void loom_sched_destroy(struct loom_sched *sched)
{
	if (!sched)
		return;
	free_workers(sched);
	loom_work_domain_put(sched->domain);
	free(sched);
}

const struct loom_work_domain *loom_sched_domain(const struct loom_sched *sched)
{
	return sched->domain;
}

uint32_t loom_sched_sleepers(const struct loom_sched *sched)
{
	/* A hint: whoever acts on it must tolerate it being stale. */
	return atomic_load_explicit(&sched->sleepers, memory_order_relaxed);
}

bool loom_sched_cancelling(const struct loom_sched *sched)
{
	/* Set under every owner lock with the requests: a hint outside them. */
	return atomic_load_explicit(&sched->cancelling, memory_order_relaxed);
}

uint32_t loom_sched_queued(const struct loom_sched *sched, uint32_t worker)
{
	if (worker >= sched->nworkers)
		return 0;
	return (uint32_t)deque_size(&sched->workers[worker].deque);
}

/* ------------------------------------------------------ transitions --- */

enum loom_error loom_sched_admit(struct loom_sched *sched,
				 uint64_t payload,
				 struct loom_work_resp *root)
{
	struct sched_worker *w0;
	struct loom_work_record *rec;
	enum loom_error err;

	if (!sched)
		return LOOM_WORK_INVALID_ARGUMENT;
	w0 = &sched->workers[0];
	loom_work_lock(sched->domain);
	owner_lock(w0);
	err = loom_work_admit_locked(sched->domain, payload, &rec);
	if (!err) {
		rec->worker = 0;
		record_event(sched, rec, LOOM_SLOT_CREATE, LOOM_SCHED_EV_ADMIT,
			     0, LOOM_SCHED_NO_WORKER, trace_number(sched, 1),
			     false);
		/* Nothing is queued before the root, and capacity >= 1. */
		deque_put(&w0->deque, 0, rec);
		deque_publish_bottom(&w0->deque, 1, true);
		if (root)
			*root = loom_work_resp_of(sched->domain, rec->serial);
	}
	owner_unlock(w0);
	loom_work_unlock(sched->domain);
	if (!err)
		loom_sched_wake_one(sched);
	return err;
}

/*
 * Owner lock held: @worker (@own) now holds @rec, taken from its own deque
 * (@victim LOOM_SCHED_NO_WORKER) or stolen from @victim's; @seq numbers
 * the event.
 */
static inline void hold(struct loom_sched *sched, struct sched_worker *own,
			uint32_t worker, struct loom_work_record *rec,
			uint32_t victim, uint64_t seq,
			struct loom_sched_item *item)
{
	bool local = victim == LOOM_SCHED_NO_WORKER;

	if (!local)
		rec->worker = worker;	/* a local one says so already */
	add_active(own, rec);
	record_event(sched, rec, LOOM_SLOT_ACQUIRE,
		     local ? LOOM_SCHED_EV_ACQUIRE_LOCAL : LOOM_SCHED_EV_STEAL,
		     worker, victim, seq, false);
	fill_item(sched, rec, worker, local ? worker : victim, item);
}

/*
 * Owner lock held: the front of the next non-empty deque, cyclically, for
 * @worker (@own).
 */
static __attribute__((noinline)) bool steal_one(struct loom_sched *sched,
						 struct sched_worker *own,
						 uint32_t worker,
						 struct loom_sched_item *item)
{
	for (uint32_t i = 1; i < sched->nworkers; i++) {
		uint32_t v = (worker + i) % sched->nworkers;
		struct loom_work_record *rec;
		enum steal_result r;
		int64_t left = 0;
		uint64_t seq = 0;

		/* Lost races leave items behind: this deque is not empty. */
		while ((r = deque_steal(&sched->workers[v].deque,
					sched->tracing ?
					&sched->domain->trace_seq : NULL,
					&rec, &seq, &left)) == STEAL_LOST)
			cpu_relax();
		if (r == STEAL_OK) {
			/* More where it came from: let another sleeper help. */
			if (left)
				loom_sched_wake_one(sched);
			hold(sched, own, worker, rec, v, seq, item);
			return true;
		}
	}
	return false;
}

/* The policy, owner lock held: own deque's back, else a steal. */
ALWAYS_INLINE bool
take_one(struct loom_sched *sched, struct sched_worker *own, uint32_t worker,
	 struct loom_sched_item *item)
{
	struct loom_work_record *rec = deque_pop(&own->deque);

	if (!rec)
		return steal_one(sched, own, worker, item);
	hold(sched, own, worker, rec, LOOM_SCHED_NO_WORKER,
	     sched->tracing ? trace_number(sched, 1) : 0, item);
	return true;
}

enum loom_error loom_sched_acquire_batch(struct loom_sched *sched,
					 uint32_t worker,
					 struct loom_sched_item *items,
					 size_t max, unsigned int flags,
					 size_t *count)
{
	struct sched_worker *own;
	size_t n;

	if (count)
		*count = 0;
	if (!sched || !items || !count || !max || worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	if (max > sched->max_batch)
		max = sched->max_batch;
	own = &sched->workers[worker];
	for (;;) {
		owner_lock(own);
		if (own->nactive) {
			owner_unlock(own);
			return LOOM_WORK_WORKER_BUSY;
		}
		for (n = 0; n < max && take_one(sched, own, worker, &items[n]);
		     n++)
			;
		owner_unlock(own);
		if (n) {
			*count = n;
			return LOOM_OK;
		}
		if (completed(sched))
			return LOOM_WORK_DOMAIN_COMPLETE;
		if (!(flags & LOOM_SCHED_WAIT))
			return LOOM_WORK_NO_WORK;
		park(sched);
	}
}

static struct active_item *find_active(struct sched_worker *w,
				       const struct loom_work_record *rec)
{
	for (uint32_t i = w->first; i < w->end; i++)
		if (!w->active[i].retired && w->active[i].rec == rec)
			return &w->active[i];
	return NULL;
}

/*
 * A batch is acquired only by a worker with nothing active and usually
 * retires in acquisition order: leaving holes and skipping the leading
 * ones keeps each retirement O(1) where closing the gap made a batch
 * quadratic.
 */
static void remove_active(struct sched_worker *w, struct active_item *slot)
{
	slot->retired = true;
	if (!--w->nactive) {
		w->first = w->end = 0;
		return;
	}
	while (w->first < w->end && w->active[w->first].retired)
		w->first++;
}

/*
 * The active slot of @item on @w, its worker (owner lock held), or why
 * there is none: @if_retired, or not active.
 */
inline enum loom_error loom_sched_active_slot(struct loom_sched *sched,
					      struct sched_worker *w,
					      const struct loom_sched_item *item,
					      enum loom_error if_retired,
					      struct active_item **slot)
{
	struct loom_work_record *rec;
	enum loom_error err;

	/* The common case, without the directory: the item is held here. */
	if (item->resp.domain_key == sched->domain->key) {
		/* Its only one: the first slot (retired ones are skipped). */
		if (w->nactive == 1 &&
		    w->active[w->first].rec->serial == item->resp.serial) {
			*slot = &w->active[w->first];
			return LOOM_OK;
		}
		for (uint32_t i = w->first; i < w->end; i++) {
			if (!w->active[i].retired &&
			    w->active[i].rec->serial == item->resp.serial) {
				*slot = &w->active[i];
				return LOOM_OK;
			}
		}
	}
	err = loom_work_check_live(sched->domain, item->resp, if_retired, &rec);
	if (err)
		return err;
	*slot = find_active(w, rec);
	return *slot ? LOOM_OK : LOOM_WORK_NOT_ACTIVE;
}

/*
 * Owner lock held: publishes @count children of the active @slot of
 * @worker (@w), acquiring every responsibility before any child is visible.
 */
ALWAYS_INLINE enum loom_error
publish_slot(struct loom_sched *sched, struct sched_worker *w, uint32_t worker,
	     struct active_item *slot, const uint64_t *payloads, size_t count,
	     struct loom_work_resp *children, bool *was_empty)
{
	struct loom_work_chunk *chunk = NULL;
	enum loom_error err;
	uint64_t first, seq = 0;
	int64_t queued, b;

	if (slot->cancel_requested)
		return LOOM_WORK_CANCEL_REQUESTED;
	if (!count)
		return LOOM_OK;
	queued = deque_owner_size(&w->deque);
	if (count > sched->capacity - (uint64_t)queued)
		return LOOM_WORK_WOULD_BLOCK;
	err = loom_work_spawn_held(sched->domain, worker, slot->rec, count,
				   payloads, &first);
	if (err)
		return err;
	if (sched->tracing)
		seq = trace_number(sched, count);
	b = atomic_load_explicit(&w->deque.bottom, memory_order_relaxed);
	for (size_t i = 0; i < count; i++) {
		struct loom_work_record *rec;

		chunk = loom_work_chunk_after(sched->domain, chunk, first + i);
		rec = loom_work_chunk_record(chunk, first + i);
		rec->worker = worker;
		record_event(sched, rec, LOOM_SLOT_CREATE, LOOM_SCHED_EV_PUBLISH,
			     worker, LOOM_SCHED_NO_WORKER, seq + i, false);
		deque_put(&w->deque, b + (int64_t)i, rec);
		if (children)
			children[i] = loom_work_resp_of(sched->domain, first + i);
	}
	*was_empty = queued == 0;
	deque_publish_bottom(&w->deque, b + (int64_t)count, *was_empty);
	return LOOM_OK;
}

ALWAYS_INLINE enum loom_error
publish_held(struct loom_sched *sched, struct sched_worker *w,
	     const struct loom_sched_item *parent,
	     const uint64_t *payloads, size_t count,
	     struct loom_work_resp *children, bool *was_empty,
	     struct active_item **out)
{
	enum loom_error err;

	err = loom_sched_active_slot(sched, w, parent, LOOM_WORK_PARENT_RETIRED, out);
	if (err)
		return err;
	return publish_slot(sched, w, parent->worker, *out, payloads, count,
			    children, was_empty);
}

/*
 * Whether the retirement just counted on @worker (owner lock held) can
 * have been the domain's last: not if the worker still holds an item, nor
 * if its deque still queues one.  Either is live and will be retired by a
 * later call, after the thief's compare-and-swap on top or in this
 * worker's own order, that looks again (runtime.rst, "completion").
 */
static inline bool owner_may_be_last(struct loom_sched *sched,
				     uint32_t worker)
{
	const struct sched_worker *w = &sched->workers[worker];

	return !w->nactive && !deque_size(&w->deque);
}

/*
 * The number of the completing retirement, @seq reserved before it was
 * elected: it must be the domain's last event.  Every event that happened
 * before the election has its number by then (it read their counts), and
 * after it only a thief that loses its race takes one, leaving a hole; so
 * if no number was taken since @seq, @seq is already last.  Else a fresh
 * one.  Keeping it leaves a one-worker trace without holes, and a trace
 * without holes needs no compaction (loom_sched_take_trace()).
 */
static uint64_t last_number(struct loom_sched *sched, uint64_t seq)
{
	if (atomic_load_explicit(&sched->domain->trace_seq,
				 memory_order_relaxed) == seq)
		return seq;
	return trace_number(sched, 1);
}

/*
 * Records @rec's retirement (@kind, numbered @seq) and, if it @completes the
 * domain, wakes every parked worker.
 */
SHARED_INLINE enum loom_work_status
loom_sched_retired(struct loom_sched *sched, struct loom_work_record *rec,
	enum loom_sched_event_kind kind, uint32_t worker, uint64_t seq,
	bool completes)
{
	if (completes && sched->tracing)
		seq = last_number(sched, seq);
	record_event(sched, rec, LOOM_SLOT_RETIRE, kind, worker,
		     LOOM_SCHED_NO_WORKER, seq, completes);
	if (completes)
		wake_all(sched);
	return completes ? LOOM_WORK_COMPLETED : LOOM_WORK_ACTIVE;
}

/*
 * Retires @rec in @lane and records @kind in its retirement slot; returns
 * whether that completed the domain.  @owner: the retirement of an active
 * item by its worker (owner lock held), which checks for completion only
 * if it can have been the last (owner_may_be_last()); the rare paths
 * always check.
 */
SHARED_INLINE enum loom_work_status
loom_sched_retire(struct loom_sched *sched, struct loom_work_record *rec, uint32_t lane,
       enum loom_sched_event_kind kind, uint32_t worker, bool owner)
{
	uint64_t seq = sched->tracing ? trace_number(sched, 1) : 0;
	bool completes;

	loom_work_retire_held(sched->domain, rec, lane);
	completes = (!owner || owner_may_be_last(sched, worker)) &&
		    loom_work_try_complete(sched->domain);
	return loom_sched_retired(sched, rec, kind, worker, seq, completes);
}

/* Owner lock held: retires the active @slot of @worker. */
SHARED_INLINE void
loom_sched_finish_slot(struct loom_sched *sched, uint32_t worker,
	    struct active_item *slot, bool cancelling,
	    enum loom_work_status *status)
{
	struct loom_work_record *rec = slot->rec;
	enum loom_work_status after;

	remove_active(&sched->workers[worker], slot);
	after = loom_sched_retire(sched, rec, worker, cancelling ?
		       LOOM_SCHED_EV_CANCEL_ACTIVE : LOOM_SCHED_EV_COMPLETE,
		       worker, true);
	if (status)
		*status = after;
}

/*
 * Owner lock held: completes the active @slot of @worker (@w) and, if the
 * worker then holds nothing, takes its next item into *@next (*@took).  The
 * retirement is counted without a fence of its own: take_one() begins with
 * deque_pop(), whose fence orders the count before every later load, and the
 * worker looks for completion only after it and only if it took nothing.  An
 * item it took is live and will be retired by a call that looks; otherwise
 * its check comes after its fence, as loom_sched_retire()'s does after its sequentially
 * consistent increment (runtime.rst, "completion").  One fence an item
 * instead of two.
 */
ALWAYS_INLINE enum loom_work_status
finish_take(struct loom_sched *sched, struct sched_worker *w, uint32_t worker,
	    struct active_item *slot, struct loom_sched_item *next,
	    bool *took)
{
	struct loom_work_record *rec = slot->rec;
	uint64_t seq = sched->tracing ? trace_number(sched, 1) : 0;
	bool completes = false;

	remove_active(w, slot);
	loom_work_retire_held_unfenced(sched->domain, rec, worker);
	if (!w->nactive) {
		*took = take_one(sched, w, worker, next);
		completes = !*took && loom_work_try_complete(sched->domain);
	}
	return loom_sched_retired(sched, rec, LOOM_SCHED_EV_COMPLETE, worker, seq,
		       completes);
}

/*
 * Owner lock held: completes (@cancelling false) or cancels (true) the
 * active @item: the one needs no pending request, the other needs one.
 */
static enum loom_error finish_held(struct loom_sched *sched,
				   const struct loom_sched_item *item,
				   bool cancelling,
				   enum loom_work_status *status)
{
	struct active_item *slot;
	enum loom_error err;

	err = loom_sched_active_slot(sched, &sched->workers[item->worker], item,
			  LOOM_WORK_RESP_USED, &slot);
	if (!err && slot->cancel_requested != cancelling)
		err = cancelling ? LOOM_WORK_NO_CANCEL_REQUEST :
				   LOOM_WORK_CANCEL_REQUESTED;
	if (!err)
		loom_sched_finish_slot(sched, item->worker, slot, cancelling, status);
	return err;
}

static enum loom_error finish_active(struct loom_sched *sched,
				     const struct loom_sched_item *item,
				     bool cancelling,
				     enum loom_work_status *status)
{
	struct sched_worker *w;
	enum loom_error err;

	if (!sched || !item || item->worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	w = &sched->workers[item->worker];
	owner_lock(w);
	err = finish_held(sched, item, cancelling, status);
	owner_unlock(w);
	return err;
}

/*
 * Publishes @count children of @parent and, if @complete, then completes
 * @parent under the same owner lock.  Publication found the item active
 * without a request, and a request needs this lock: completing it cannot
 * fail.  With @next, a worker left holding nothing then takes its next
 * item as loom_sched_acquire() would, still under that lock; *@took says
 * whether it did (@next may be @parent: it is read before it is written).
 */
ALWAYS_INLINE enum loom_error
publish(struct loom_sched *sched, const struct loom_sched_item *parent,
	const uint64_t *payloads, size_t count, struct loom_work_resp *children,
	bool complete, enum loom_work_status *status,
	struct loom_sched_item *next, bool *took)
{
	enum loom_work_status after = LOOM_WORK_ACTIVE;
	struct active_item *slot;
	struct sched_worker *w;
	bool was_empty = false;
	enum loom_error err;
	uint32_t worker;

	if (!sched || !parent || (count && !payloads) ||
	    parent->worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	worker = parent->worker;
	w = &sched->workers[worker];
	owner_lock(w);
	err = publish_held(sched, w, parent, payloads, count, children,
			   &was_empty, &slot);
	if (!err && complete && next)
		after = finish_take(sched, w, worker, slot, next, took);
	else if (!err && complete)
		loom_sched_finish_slot(sched, worker, slot, false, &after);
	owner_unlock(w);
	if (status && !err && complete)
		*status = after;
	/*
	 * Only a deque that was empty can have sent a worker to sleep (a
	 * sleeper looked at every deque after registering); its owner is
	 * awake, so items on a non-empty deque are never stranded.
	 */
	if (was_empty)
		loom_sched_wake_one(sched);
	return err;
}

enum loom_error loom_sched_publish(struct loom_sched *sched,
				   const struct loom_sched_item *parent,
				   const uint64_t *payloads, size_t count,
				   struct loom_work_resp *children)
{
	return publish(sched, parent, payloads, count, children, false, NULL,
		       NULL, NULL);
}

enum loom_error loom_sched_publish_complete(struct loom_sched *sched,
					    const struct loom_sched_item *parent,
					    const uint64_t *payloads,
					    size_t count,
					    struct loom_work_resp *children,
					    enum loom_work_status *status)
{
	return publish(sched, parent, payloads, count, children, true, status,
		       NULL, NULL);
}

enum loom_error
loom_sched_publish_complete_next(struct loom_sched *sched,
				 const struct loom_sched_item *parent,
				 const uint64_t *payloads, size_t count,
				 struct loom_work_resp *children,
				 enum loom_work_status *status,
				 struct loom_sched_item *next, bool *took)
{
	if (!next || !took)
		return LOOM_WORK_INVALID_ARGUMENT;
	*took = false;
	return publish(sched, parent, payloads, count, children, true, status,
		       next, took);
}

enum loom_error loom_sched_run_loop(struct loom_sched *sched, uint32_t worker,
				    struct loom_sched_loop *loop,
				    struct loom_sched_item *item)
{
	bool held;

	if (!sched || !loop || !loop->run || !item ||
	    worker >= sched->nworkers)
		return LOOM_WORK_INVALID_ARGUMENT;
	loop->refused = LOOM_OK;
	for (held = false;;) {
		enum loom_work_status after = LOOM_WORK_ACTIVE;
		const uint64_t *payloads = NULL;
		enum loom_error err;
		size_t count = 0;

		if (!held) {
			err = loom_sched_acquire_wait(sched, worker, item);
			if (err)
				return err;
		}
		if (!loop->run(loop->ctx, item, &payloads, &count))
			return LOOM_OK;
		held = false;
		err = publish(sched, item, payloads, count, NULL, true, &after,
			      item, &held);
		if (err) {
			/* Still held: the caller cancels it. */
			loop->refused = err;
			return LOOM_OK;
		}
		loop->completed++;
		loop->published += count;
		if (after == LOOM_WORK_COMPLETED)
			return LOOM_WORK_DOMAIN_COMPLETE;
	}
}

enum loom_error loom_sched_complete(struct loom_sched *sched,
				    const struct loom_sched_item *item,
				    enum loom_work_status *status)
{
	return finish_active(sched, item, false, status);
}

enum loom_error loom_sched_cancel_active(struct loom_sched *sched,
					 const struct loom_sched_item *item,
					 enum loom_work_status *status)
{
	return finish_active(sched, item, true, status);
}

/* Owner lock of @worker held: requests cancellation of an active item. */
enum loom_error loom_sched_request_cancel(struct loom_sched *sched,
					  uint32_t worker,
					  struct active_item *slot)
{
	if (slot->cancel_requested)
		return LOOM_WORK_CANCEL_PENDING;
	slot->cancel_requested = true;
	record_event(sched, slot->rec, LOOM_SLOT_REQUEST,
		     LOOM_SCHED_EV_CANCEL_REQUEST, worker, LOOM_SCHED_NO_WORKER,
		     sched->tracing ? trace_number(sched, 1) : 0, false);
	return LOOM_OK;
}

/* All locks held: retires a queued item just taken off @worker's deque. */
static enum loom_work_status cancel_queued(struct loom_sched *sched,
					   uint32_t worker,
					   struct loom_work_record *rec)
{
	return loom_sched_retire(sched, rec, loom_work_shared_lane(sched->domain),
		      LOOM_SCHED_EV_CANCEL_QUEUED, worker, false);
}

static enum loom_error cancel_held(struct loom_sched *sched,
				   struct loom_work_resp item,
				   enum loom_sched_cancel_effect *effect,
				   enum loom_work_status *status)
{
	struct loom_work_record *rec;
	enum loom_error err;

	err = loom_work_check_live(sched->domain, item, LOOM_WORK_RESP_USED,
				   &rec);
	if (err)
		return err;
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct active_item *slot = find_active(&sched->workers[w], rec);

		if (!slot)
			continue;
		err = loom_sched_request_cancel(sched, w, slot);
		if (!err) {
			*effect = LOOM_SCHED_CANCEL_REQUESTED;
			*status = LOOM_WORK_ACTIVE;
		}
		return err;
	}
	/* Every live responsibility is active or queued: it is queued. */
	if (rec->worker >= sched->nworkers ||
	    !deque_remove(&sched->workers[rec->worker].deque, rec))
		return LOOM_WORK_RESP_INVALID;
	*status = cancel_queued(sched, rec->worker, rec);
	*effect = LOOM_SCHED_CANCELLED_QUEUED;
	return LOOM_OK;
}

enum loom_error loom_sched_cancel(struct loom_sched *sched,
				  struct loom_work_resp item,
				  enum loom_sched_cancel_effect *effect,
				  enum loom_work_status *status)
{
	enum loom_sched_cancel_effect did;
	enum loom_work_status after;
	enum loom_error err;

	if (!sched)
		return LOOM_WORK_INVALID_ARGUMENT;
	lock_all(sched);
	err = cancel_held(sched, item, &did, &after);
	unlock_all(sched);
	if (!err && effect)
		*effect = did;
	if (!err && status)
		*status = after;
	return err;
}

enum loom_error loom_sched_cancel_all(struct loom_sched *sched,
				      uint64_t *cancelled,
				      enum loom_work_status *status)
{
	uint64_t n = 0;

	if (!sched)
		return LOOM_WORK_INVALID_ARGUMENT;
	lock_all(sched);
	atomic_store_explicit(&sched->cancelling, true, memory_order_relaxed);
	/* Requests first, so no active item can publish afterwards. */
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct sched_worker *sw = &sched->workers[w];

		for (uint32_t i = sw->first; i < sw->end; i++)
			if (!sw->active[i].retired &&
			    !sw->active[i].cancel_requested)
				loom_sched_request_cancel(sched, w, &sw->active[i]);
	}
	/* Then every queued item, front to back: O(1) each. */
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct sched_worker *sw = &sched->workers[w];

		for (; deque_size(&sw->deque); n++)
			cancel_queued(sched, w, deque_take_front(&sw->deque));
	}
	if (cancelled)
		*cancelled = n;
	if (status)
		*status = loom_work_domain_status(sched->domain);
	unlock_all(sched);
	return LOOM_OK;
}
