// SPDX-License-Identifier: MIT
/*
 * sched.c: the bounded work-stealing scheduler and its replay trace.
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
 * empty and someone sleeps (see park() and wake_one()).
 *
 * The replay trace: each event takes a number from one counter and is
 * stored in its item's record (work_internal.h), so recording needs no
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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "work_internal.h"

/* An item a worker is running. */
struct active_item {
	struct loom_work_record *rec;
	bool cancel_requested;
	bool retired;			/* a hole until the batch is done */
};

struct sched_worker {
	/* Read by thieves: the deque's bottom and ring. */
	_Atomic int64_t bottom;
	_Atomic(struct loom_work_record *) *ring;
	uint64_t mask;			/* ring size - 1: a power of two */
	/* Thieves compare-and-swap it: alone on its line. */
	_Atomic int64_t top __attribute__((aligned(LOOM_CACHE_LINE)));
	/* The owner's own line. */
	atomic_int lock __attribute__((aligned(LOOM_CACHE_LINE)));
	struct active_item *active;	/* max_batch slots, acquisition order */
	uint32_t nactive;		/* live ones among active[first, end) */
	uint32_t first, end;
} __attribute__((aligned(LOOM_CACHE_LINE)));

struct loom_sched {
	struct loom_work_domain *domain;	/* owned */
	uint32_t nworkers;
	uint32_t capacity;
	uint32_t max_batch;
	bool tracing;
	struct sched_worker *workers;
	/* Parking: written only when workers run out of work. */
	atomic_uint sleepers __attribute__((aligned(LOOM_CACHE_LINE)));
	atomic_uint wake_pending;	/* a wake-one is in flight */
	_Atomic uint32_t epoch;		/* the futex word */
};

struct loom_sched_trace {
	struct loom_sched_event *events;
	size_t count;
	size_t mapped;			/* bytes mapped for events, or 0: malloc */
	struct loom_work_domain *domain;	/* a reference: keeps the ids valid */
};

/*
 * The steps of one item (publish, retire, take the next) are small
 * functions; the loop that composes them (loom_sched_run_loop()) gets them
 * inline, so a step costs no calls and no saved registers.  They take the
 * worker's state from their caller: recomputed in each step (a load of
 * sched->workers, which any store might have changed as far as the
 * compiler knows, and a multiplication), it cost 15 instructions an item.
 */
#define ALWAYS_INLINE	static inline __attribute__((always_inline))

/* ------------------------------------------------------- owner locks --- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Out of line: only contended with a rare path. */
static __attribute__((noinline, cold)) void
owner_lock_slow(struct sched_worker *w)
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

static inline void owner_lock(struct sched_worker *w)
{
	if (atomic_exchange_explicit(&w->lock, 1, memory_order_acquire))
		owner_lock_slow(w);
}

static inline void owner_unlock(struct sched_worker *w)
{
	atomic_store_explicit(&w->lock, 0, memory_order_release);
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

/* -------------------------------------------------------------- deques --- */

/*
 * A bounded Chase-Lev deque.  Items are record pointers.  top only grows;
 * [top, bottom) are queued, the oldest at top.
 *
 * Memory ordering (the classic argument, for a ring that never grows):
 *   - push writes the slots, then bottom with release: a thief that reads
 *     the new bottom with acquire reads the slots and the records' fields;
 *   - pop first lowers bottom, then reads top, with a sequentially
 *     consistent fence between them; a thief reads top, then bottom,
 *     sequentially consistently; so the owner's lowered bottom and the
 *     thief's top cannot both be missed:
 *     an item with index > top is the owner's alone, and for the last one
 *     (index == top) both sides compare-and-swap top and exactly one wins;
 *   - a thief reads the slot before its compare-and-swap; if the owner
 *     reused the slot meanwhile (after others took the item), top moved and
 *     the compare-and-swap fails, so the stale read is dropped.  Slots are
 *     atomic so that racing read is defined;
 *   - the ring is never overwritten while queued: push refuses beyond the
 *     capacity, measured against a top that can only be stale low.
 */
static inline int64_t deque_size(const struct sched_worker *w)
{
	int64_t t = atomic_load_explicit(&w->top, memory_order_seq_cst);
	int64_t b = atomic_load_explicit(&w->bottom, memory_order_seq_cst);

	return b > t ? b - t : 0;
}

/* Owner only.  The queued items, measured against a possibly stale top. */
static int64_t deque_owner_size(const struct sched_worker *w)
{
	int64_t b = atomic_load_explicit(&w->bottom, memory_order_relaxed);
	int64_t t = atomic_load_explicit(&w->top, memory_order_acquire);

	return b > t ? b - t : 0;
}

/* Owner only, with room checked: queues @rec at the bottom (unpublished). */
static void deque_put(struct sched_worker *w, int64_t at,
		      struct loom_work_record *rec)
{
	atomic_store_explicit(&w->ring[(uint64_t)at & w->mask], rec,
			      memory_order_relaxed);
}

/*
 * Owner only: makes the items put below @bottom visible.  Sequentially
 * consistent when the deque was empty, for wake_one() (see park()).
 */
static void deque_publish_bottom(struct sched_worker *w, int64_t bottom,
				 bool was_empty)
{
	atomic_store_explicit(&w->bottom, bottom, was_empty ?
			      memory_order_seq_cst : memory_order_release);
}

/* Owner only: the newest item, or NULL. */
static inline struct loom_work_record *deque_pop(struct sched_worker *w)
{
	int64_t b = atomic_load_explicit(&w->bottom, memory_order_relaxed) - 1;
	struct loom_work_record *rec;
	int64_t t;

	/* The fence also orders the caller's earlier stores (finish_take()). */
#ifdef __SANITIZE_THREAD__
	/* GCC refuses fences there; a locked exchange is one on the CPU. */
	atomic_exchange_explicit(&w->bottom, b, memory_order_seq_cst);
#else
	atomic_store_explicit(&w->bottom, b, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
#endif
	t = atomic_load_explicit(&w->top, memory_order_seq_cst);
	if (t > b) {
		/* Empty: restore. */
		atomic_store_explicit(&w->bottom, b + 1, memory_order_relaxed);
		return NULL;
	}
	rec = atomic_load_explicit(&w->ring[(uint64_t)b & w->mask],
				   memory_order_relaxed);
	if (t == b) {
		/* The last item: race the thieves for it on top. */
		if (!atomic_compare_exchange_strong_explicit(
			    &w->top, &t, t + 1, memory_order_seq_cst,
			    memory_order_relaxed))
			rec = NULL;
		atomic_store_explicit(&w->bottom, b + 1, memory_order_relaxed);
	}
	return rec;
}

enum steal_result { STEAL_EMPTY, STEAL_LOST, STEAL_OK };

/*
 * Any thread: the oldest item of @w.  *@seq gets its trace number (taken
 * after top was read, before the compare-and-swap) when @tracing.
 */
static enum steal_result deque_steal(struct sched_worker *w,
				     struct loom_work_domain *domain,
				     bool tracing,
				     struct loom_work_record **out,
				     uint64_t *seq, int64_t *left)
{
	int64_t t = atomic_load_explicit(&w->top, memory_order_seq_cst);
	struct loom_work_record *rec;
	int64_t b;

	b = atomic_load_explicit(&w->bottom, memory_order_seq_cst);
	if (t >= b)
		return STEAL_EMPTY;
	rec = atomic_load_explicit(&w->ring[(uint64_t)t & w->mask],
				   memory_order_relaxed);
	if (tracing)
		*seq = atomic_fetch_add_explicit(&domain->trace_seq, 1,
						 memory_order_relaxed) + 1;
	if (!atomic_compare_exchange_strong_explicit(&w->top, &t, t + 1,
						     memory_order_seq_cst,
						     memory_order_relaxed))
		return STEAL_LOST;
	*out = rec;
	*left = b - t - 1;
	return STEAL_OK;
}

/* All locks held: nobody else touches any deque. */
static struct loom_work_record *deque_take_front(struct sched_worker *w)
{
	int64_t t = atomic_load_explicit(&w->top, memory_order_relaxed);
	struct loom_work_record *rec;

	rec = atomic_load_explicit(&w->ring[(uint64_t)t & w->mask],
				   memory_order_relaxed);
	atomic_store_explicit(&w->top, t + 1, memory_order_relaxed);
	return rec;
}

/* All locks held: removes @rec from @w, keeping the others in order. */
static bool deque_remove(struct sched_worker *w, struct loom_work_record *rec)
{
	int64_t t = atomic_load_explicit(&w->top, memory_order_relaxed);
	int64_t b = atomic_load_explicit(&w->bottom, memory_order_relaxed);
	int64_t i;

	for (i = t; i < b; i++)
		if (atomic_load_explicit(&w->ring[(uint64_t)i & w->mask],
					 memory_order_relaxed) == rec)
			break;
	if (i == b)
		return false;
	for (; i + 1 < b; i++)
		deque_put(w, i, atomic_load_explicit(
				  &w->ring[(uint64_t)(i + 1) & w->mask],
				  memory_order_relaxed));
	atomic_store_explicit(&w->bottom, b - 1, memory_order_relaxed);
	return true;
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
		if (deque_size(&sched->workers[i]))
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
static void wake_one(struct loom_sched *sched)
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

/* -------------------------------------------------------------- trace --- */

static uint64_t trace_number(struct loom_sched *sched, uint64_t n)
{
	return atomic_fetch_add_explicit(&sched->domain->trace_seq, n,
					 memory_order_relaxed) + 1;
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

/* Writes one event into @rec's @slot; the number is written last. */
static void record_event(struct loom_sched *sched,
			 struct loom_work_record *rec, enum loom_trace_slot slot,
			 enum loom_sched_event_kind kind, uint32_t worker,
			 uint32_t other, uint64_t seq, bool completes)
{
	struct loom_trace_slot_rec *s;

	if (!sched->tracing)
		return;
	s = &loom_work_slots(rec)[slot];
	s->worker = worker;
	s->other_worker = other;
	atomic_store_explicit(&s->seq_kind,
			      seq << LOOM_SLOT_SEQ_SHIFT | (uint64_t)kind |
			      (completes ? LOOM_SLOT_COMPLETES : 0),
			      memory_order_release);
}

const char *loom_sched_event_name(enum loom_sched_event_kind kind)
{
	switch (kind) {
	case LOOM_SCHED_EV_ADMIT:
		return "admit";
	case LOOM_SCHED_EV_ACQUIRE_LOCAL:
		return "acquire-local";
	case LOOM_SCHED_EV_STEAL:
		return "steal";
	case LOOM_SCHED_EV_PUBLISH:
		return "publish";
	case LOOM_SCHED_EV_CANCEL_REQUEST:
		return "cancel-request";
	case LOOM_SCHED_EV_CANCEL_QUEUED:
		return "cancel-queued";
	case LOOM_SCHED_EV_CANCEL_ACTIVE:
		return "cancel-active";
	case LOOM_SCHED_EV_COMPLETE:
		return "complete";
	}
	return "unknown";
}

/* ---------------------------------------------------------- lifecycle --- */

static void free_workers(struct loom_sched *sched)
{
	if (!sched->workers)
		return;
	for (uint32_t i = 0; i < sched->nworkers; i++) {
		free(sched->workers[i].ring);
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

		atomic_init(&w->top, 0);
		atomic_init(&w->bottom, 0);
		atomic_init(&w->lock, 0);
		w->mask = ring - 1;
		/* Shared with thieves anyway; calloc() maps a big one zeroed. */
		w->ring = calloc(ring, sizeof(*w->ring));
		w->active = loom_lines_alloc(sched->max_batch,
					     sizeof(*w->active));
		if (!w->ring || !w->active)
			return LOOM_WORK_OUT_OF_MEMORY;
	}
	return LOOM_WORK_OK;
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
	err = alloc_workers(sched);
	if (!err)
		err = loom_work_domain_create_lanes(config->occurrence,
						    sched->nworkers,
						    sched->tracing,
						    &sched->domain);
	if (err) {
		free_workers(sched);
		free(sched);
		return err;
	}
	*out = sched;
	return LOOM_WORK_OK;
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

uint32_t loom_sched_queued(const struct loom_sched *sched, uint32_t worker)
{
	if (worker >= sched->nworkers)
		return 0;
	return (uint32_t)deque_size(&sched->workers[worker]);
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
		deque_put(w0, 0, rec);
		deque_publish_bottom(w0, 1, true);
		if (root)
			*root = loom_work_resp_of(sched->domain, rec->serial);
	}
	owner_unlock(w0);
	loom_work_unlock(sched->domain);
	if (!err)
		wake_one(sched);
	return err;
}

static void fill_item(struct loom_sched *sched, struct loom_work_record *rec,
		      uint32_t worker, uint32_t from,
		      struct loom_sched_item *item)
{
	item->resp = loom_work_resp_of(sched->domain, rec->serial);
	item->id = loom_work_id_of(sched->domain, rec);
	item->payload = rec->payload;
	item->worker = worker;
	item->from_worker = from;
}

/* Owner lock held: @rec takes @w's next active slot. */
ALWAYS_INLINE void
add_active(struct sched_worker *w, struct loom_work_record *rec)
{
	w->active[w->end++] = (struct active_item){ rec, false, false };
	w->nactive++;
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
		while ((r = deque_steal(&sched->workers[v], sched->domain,
					sched->tracing, &rec, &seq, &left)) ==
		       STEAL_LOST)
			cpu_relax();
		if (r == STEAL_OK) {
			/* More where it came from: let another sleeper help. */
			if (left)
				wake_one(sched);
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
	struct loom_work_record *rec = deque_pop(own);

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
			return LOOM_WORK_OK;
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
static inline enum loom_error active_slot(struct loom_sched *sched,
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
			return LOOM_WORK_OK;
		}
		for (uint32_t i = w->first; i < w->end; i++) {
			if (!w->active[i].retired &&
			    w->active[i].rec->serial == item->resp.serial) {
				*slot = &w->active[i];
				return LOOM_WORK_OK;
			}
		}
	}
	err = loom_work_check_live(sched->domain, item->resp, if_retired, &rec);
	if (err)
		return err;
	*slot = find_active(w, rec);
	return *slot ? LOOM_WORK_OK : LOOM_WORK_NOT_ACTIVE;
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
		return LOOM_WORK_OK;
	queued = deque_owner_size(w);
	if (count > sched->capacity - (uint64_t)queued)
		return LOOM_WORK_WOULD_BLOCK;
	err = loom_work_spawn_held(sched->domain, worker, slot->rec, count,
				   payloads, &first);
	if (err)
		return err;
	if (sched->tracing)
		seq = trace_number(sched, count);
	b = atomic_load_explicit(&w->bottom, memory_order_relaxed);
	for (size_t i = 0; i < count; i++) {
		struct loom_work_record *rec;

		chunk = loom_work_chunk_after(sched->domain, chunk, first + i);
		rec = loom_work_chunk_record(chunk, first + i);
		rec->worker = worker;
		record_event(sched, rec, LOOM_SLOT_CREATE, LOOM_SCHED_EV_PUBLISH,
			     worker, LOOM_SCHED_NO_WORKER, seq + i, false);
		deque_put(w, b + (int64_t)i, rec);
		if (children)
			children[i] = loom_work_resp_of(sched->domain, first + i);
	}
	*was_empty = queued == 0;
	deque_publish_bottom(w, b + (int64_t)count, *was_empty);
	return LOOM_WORK_OK;
}

ALWAYS_INLINE enum loom_error
publish_held(struct loom_sched *sched, struct sched_worker *w,
	     const struct loom_sched_item *parent,
	     const uint64_t *payloads, size_t count,
	     struct loom_work_resp *children, bool *was_empty,
	     struct active_item **out)
{
	enum loom_error err;

	err = active_slot(sched, w, parent, LOOM_WORK_PARENT_RETIRED, out);
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

	return !w->nactive && !deque_size(w);
}

/*
 * Records @rec's retirement (@kind, numbered @seq) and, if it @completes the
 * domain, wakes every parked worker.
 */
ALWAYS_INLINE enum loom_work_status
retired(struct loom_sched *sched, struct loom_work_record *rec,
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
ALWAYS_INLINE enum loom_work_status
retire(struct loom_sched *sched, struct loom_work_record *rec, uint32_t lane,
       enum loom_sched_event_kind kind, uint32_t worker, bool owner)
{
	uint64_t seq = sched->tracing ? trace_number(sched, 1) : 0;
	bool completes;

	loom_work_retire_held(sched->domain, rec, lane);
	completes = (!owner || owner_may_be_last(sched, worker)) &&
		    loom_work_try_complete(sched->domain);
	return retired(sched, rec, kind, worker, seq, completes);
}

/* Owner lock held: retires the active @slot of @worker. */
ALWAYS_INLINE void
finish_slot(struct loom_sched *sched, uint32_t worker,
	    struct active_item *slot, bool cancelling,
	    enum loom_work_status *status)
{
	struct loom_work_record *rec = slot->rec;
	enum loom_work_status after;

	remove_active(&sched->workers[worker], slot);
	after = retire(sched, rec, worker, cancelling ?
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
 * its check comes after its fence, as retire()'s does after its sequentially
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
	return retired(sched, rec, LOOM_SCHED_EV_COMPLETE, worker, seq,
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

	err = active_slot(sched, &sched->workers[item->worker], item,
			  LOOM_WORK_RESP_USED, &slot);
	if (!err && slot->cancel_requested != cancelling)
		err = cancelling ? LOOM_WORK_NO_CANCEL_REQUEST :
				   LOOM_WORK_CANCEL_REQUESTED;
	if (!err)
		finish_slot(sched, item->worker, slot, cancelling, status);
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
		finish_slot(sched, worker, slot, false, &after);
	owner_unlock(w);
	if (status && !err && complete)
		*status = after;
	/*
	 * Only a deque that was empty can have sent a worker to sleep (a
	 * sleeper looked at every deque after registering); its owner is
	 * awake, so items on a non-empty deque are never stranded.
	 */
	if (was_empty)
		wake_one(sched);
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
	loop->refused = LOOM_WORK_OK;
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
			return LOOM_WORK_OK;
		held = false;
		err = publish(sched, item, payloads, count, NULL, true, &after,
			      item, &held);
		if (err) {
			/* Still held: the caller cancels it. */
			loop->refused = err;
			return LOOM_WORK_OK;
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

/* All locks held: requests cancellation of an active item. */
static enum loom_error request_cancel(struct loom_sched *sched,
				      uint32_t worker,
				      struct active_item *slot)
{
	if (slot->cancel_requested)
		return LOOM_WORK_CANCEL_PENDING;
	slot->cancel_requested = true;
	record_event(sched, slot->rec, LOOM_SLOT_REQUEST,
		     LOOM_SCHED_EV_CANCEL_REQUEST, worker, LOOM_SCHED_NO_WORKER,
		     sched->tracing ? trace_number(sched, 1) : 0, false);
	return LOOM_WORK_OK;
}

/* All locks held: retires a queued item just taken off @worker's deque. */
static enum loom_work_status cancel_queued(struct loom_sched *sched,
					   uint32_t worker,
					   struct loom_work_record *rec)
{
	return retire(sched, rec, loom_work_shared_lane(sched->domain),
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
		err = request_cancel(sched, w, slot);
		if (!err) {
			*effect = LOOM_SCHED_CANCEL_REQUESTED;
			*status = LOOM_WORK_ACTIVE;
		}
		return err;
	}
	/* Every live responsibility is active or queued: it is queued. */
	if (rec->worker >= sched->nworkers ||
	    !deque_remove(&sched->workers[rec->worker], rec))
		return LOOM_WORK_RESP_INVALID;
	*status = cancel_queued(sched, rec->worker, rec);
	*effect = LOOM_SCHED_CANCELLED_QUEUED;
	return LOOM_WORK_OK;
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
	/* Requests first, so no active item can publish afterwards. */
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct sched_worker *sw = &sched->workers[w];

		for (uint32_t i = sw->first; i < sw->end; i++)
			if (!sw->active[i].retired &&
			    !sw->active[i].cancel_requested)
				request_cancel(sched, w, &sw->active[i]);
	}
	/* Then every queued item, front to back: O(1) each. */
	for (uint32_t w = 0; w < sched->nworkers; w++) {
		struct sched_worker *sw = &sched->workers[w];

		for (; deque_size(sw); n++)
			cancel_queued(sched, w, deque_take_front(sw));
	}
	if (cancelled)
		*cancelled = n;
	if (status)
		*status = loom_work_domain_status(sched->domain);
	unlock_all(sched);
	return LOOM_WORK_OK;
}

/* ------------------------------------------------- committing a run --- */

/*
 * A commit's state, the worker's owner lock held throughout: no held item
 * is in a deque or an active slot of anyone else, so no thief or
 * canceller can reach one before it is retired.
 */
struct commit {
	struct loom_sched *sched;
	uint32_t worker;
	const struct loom_sched_item *batch;
	uint32_t n_batch;
	struct loom_work_record **held;	/* NULL: skipped */
	size_t n_held, max_held;
	size_t live_taken;		/* taken children not yet retired */
	bool woke;			/* a publication to an empty deque */
	struct loom_sched_commit *out;
};

/* Held item @h is one of the batch, active on the worker: its slot. */
static struct active_item *batch_slot(struct commit *c, uint32_t h)
{
	struct active_item *slot;

	if (h >= c->n_batch || c->batch[h].worker != c->worker ||
	    active_slot(c->sched, &c->sched->workers[c->worker], &c->batch[h],
			LOOM_WORK_RESP_USED, &slot))
		return NULL;
	return slot;
}

static bool held_live(const struct commit *c, uint32_t h)
{
	return h < c->n_held && c->held[h] &&
	       !(atomic_load_explicit(&c->held[h]->state,
				      memory_order_relaxed) & LOOM_REC_RETIRED);
}

/* Skips @step's taken children: their items never exist. */
static bool skip_taken(struct commit *c, const struct loom_sched_step *step)
{
	for (uint32_t k = 0; k < step->count; k++) {
		if (!step->taken[k])
			continue;
		if (c->n_held == c->max_held)
			return false;
		c->held[c->n_held++] = NULL;
	}
	return true;
}

/*
 * Retires held item @h, which has no active slot.  While the commit holds
 * another taken child, this cannot be the domain's last retirement (that
 * child's responsibility is active), so it neither fences nor looks for
 * completion: the retirement that leaves none does both, and its
 * sequentially consistent increment of the same lane comes after these in
 * its modification order.  The check was a fifth of a commit's cost.
 */
static void retire_held_item(struct commit *c, uint32_t h,
			     enum loom_sched_event_kind kind)
{
	struct loom_sched *sched = c->sched;
	struct loom_work_record *rec = c->held[h];
	uint64_t seq;

	if (h < c->n_batch || !--c->live_taken) {
		retire(sched, rec, c->worker, kind, c->worker, true);
		return;
	}
	seq = sched->tracing ? trace_number(sched, 1) : 0;
	loom_work_retire_held_unfenced(sched->domain, rec, c->worker);
	retired(sched, rec, kind, c->worker, seq, false);
}

/* Cancels held item @h: a request, then its retirement. */
static void cancel_held_item(struct commit *c, uint32_t h)
{
	struct loom_sched *sched = c->sched;
	struct loom_work_record *rec = c->held[h];
	struct active_item *slot = batch_slot(c, h);

	if (slot) {
		if (!slot->cancel_requested)
			request_cancel(sched, c->worker, slot);
		finish_slot(sched, c->worker, slot, true, NULL);
	} else {
		record_event(sched, rec, LOOM_SLOT_REQUEST,
			     LOOM_SCHED_EV_CANCEL_REQUEST, c->worker,
			     LOOM_SCHED_NO_WORKER,
			     sched->tracing ? trace_number(sched, 1) : 0, false);
		retire_held_item(c, h, LOOM_SCHED_EV_CANCEL_ACTIVE);
	}
	c->out->cancelled++;
}

/*
 * Publishes @step's children: every one acquired before any is visible,
 * then the taken ones held and the others queued.
 */
static enum loom_error publish_step(struct commit *c,
				    const struct loom_sched_step *step,
				    struct loom_work_record *rec)
{
	struct loom_sched *sched = c->sched;
	struct sched_worker *w = &sched->workers[c->worker];
	int64_t queued = deque_owner_size(w), b;
	uint64_t first, seq = 0, nq = 0, nt = 0;
	enum loom_error err;

	for (uint32_t k = 0; k < step->count; k++)
		step->taken[k] ? nt++ : nq++;
	if (nq > sched->capacity - (uint64_t)queued)
		return LOOM_WORK_QUEUE_CAPACITY;
	if (nt > c->max_held - c->n_held)
		return LOOM_WORK_INVALID_ARGUMENT;
	if (!step->count)
		return LOOM_WORK_OK;
	err = loom_work_spawn_held(sched->domain, c->worker, rec, step->count,
				   step->payloads, &first);
	if (err)
		return err;
	if (sched->tracing)
		seq = trace_number(sched, step->count);
	b = atomic_load_explicit(&w->bottom, memory_order_relaxed);
	for (uint32_t k = 0, q = 0; k < step->count; k++) {
		struct loom_work_record *child =
			loom_work_record_at(sched->domain, first + k);

		child->worker = c->worker;
		record_event(sched, child, LOOM_SLOT_CREATE,
			     LOOM_SCHED_EV_PUBLISH, c->worker,
			     LOOM_SCHED_NO_WORKER, seq + k, false);
		if (!step->taken[k]) {
			deque_put(w, b + q++, child);
			continue;
		}
		record_event(sched, child, LOOM_SLOT_ACQUIRE,
			     LOOM_SCHED_EV_ACQUIRE_LOCAL, c->worker,
			     LOOM_SCHED_NO_WORKER,
			     sched->tracing ? trace_number(sched, 1) : 0, false);
		c->held[c->n_held++] = child;
		c->live_taken++;
	}
	if (nq) {
		deque_publish_bottom(w, b + (int64_t)nq, queued == 0);
		c->woke |= queued == 0;
	}
	c->out->published += step->count;
	return LOOM_WORK_OK;
}

/* One step: LOOM_WORK_OK, or why it was refused (its item still held). */
static enum loom_error run_step(struct commit *c,
				const struct loom_sched_step *step,
				struct loom_sched_item *item)
{
	struct active_item *slot;
	struct loom_work_record *rec;
	enum loom_error err;

	if (step->held < c->n_held && !c->held[step->held])
		return skip_taken(c, step) ? LOOM_WORK_OK :
					     LOOM_WORK_INVALID_ARGUMENT;
	if (!held_live(c, step->held) || (step->count && !step->payloads) ||
	    (step->count && !step->taken))
		return LOOM_WORK_INVALID_ARGUMENT;
	rec = c->held[step->held];
	slot = batch_slot(c, step->held);
	if (slot && slot->cancel_requested) {
		cancel_held_item(c, step->held);
		return skip_taken(c, step) ? LOOM_WORK_OK :
					     LOOM_WORK_INVALID_ARGUMENT;
	}
	err = publish_step(c, step, rec);
	if (err)
		return err;
	if (item)
		fill_item(c->sched, rec, c->worker, c->worker, item);
	if (slot)
		finish_slot(c->sched, c->worker, slot, false, NULL);
	else
		retire_held_item(c, step->held, LOOM_SCHED_EV_COMPLETE);
	c->out->completed++;
	return LOOM_WORK_OK;
}

/*
 * Owner lock held: moves @w's active slots to the front, in order, so that
 * a carry's new slots fit behind them (a batch retires with holes).
 */
static void compact_active(struct sched_worker *w)
{
	uint32_t k = 0;

	for (uint32_t i = w->first; i < w->end; i++)
		if (!w->active[i].retired)
			w->active[k++] = w->active[i];
	w->first = 0;
	w->end = k;
}

/*
 * Owner lock held, every step committed: the held items @carry names stay
 * with the worker, active, in its order.  A batch item still is; a taken
 * child gets an active slot and is no longer the commit's to cancel.  One
 * that is not live (skipped with a cancelled parent, or retired) or finds
 * no free slot keeps the worker LOOM_SCHED_NO_WORKER its report was given
 * before (loom_sched_commit_run()).
 */
static void carry_held(struct commit *c, const struct loom_sched_carry *carry)
{
	struct sched_worker *w = &c->sched->workers[c->worker];

	compact_active(w);
	for (uint32_t j = 0; j < carry->count; j++) {
		uint32_t h = carry->held[j];
		struct loom_sched_item *item = &carry->items[j];

		if (!held_live(c, h))
			continue;
		if (h < c->n_batch) {
			*item = c->batch[h];
			continue;
		}
		if (w->end == c->sched->max_batch)
			continue;
		add_active(w, c->held[h]);
		fill_item(c->sched, c->held[h], c->worker, c->worker, item);
		c->held[h] = NULL;
	}
}

static void name_failed(struct commit *c, uint32_t h)
{
	if (c->out->has_failed || !held_live(c, h))
		return;
	c->out->has_failed = true;
	fill_item(c->sched, c->held[h], c->worker, c->worker, &c->out->failed);
}

void loom_sched_commit_run(struct loom_sched *sched, uint32_t worker,
			   const struct loom_sched_item *batch, uint32_t n_batch,
			   const struct loom_sched_step *steps, size_t n_steps,
			   uint32_t fail_held, struct loom_work_record **held,
			   size_t max_held, struct loom_sched_item *items,
			   bool *batch_live,
			   const struct loom_sched_carry *carry,
			   struct loom_sched_commit *out)
{
	struct commit c = {
		.sched = sched, .worker = worker, .batch = batch,
		.n_batch = n_batch, .held = held, .max_held = max_held,
		.out = out,
	};
	struct sched_worker *w = &sched->workers[worker];

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; items && i < n_steps; i++)
		items[i].worker = LOOM_SCHED_NO_WORKER;
	owner_lock(w);
	for (uint32_t i = 0; i < n_batch && c.n_held < max_held; i++) {
		struct active_item *slot = batch_slot(&c, i);

		held[c.n_held++] = slot ? slot->rec : NULL;
	}
	for (size_t s = 0; s < n_steps; s++) {
		out->error = run_step(&c, &steps[s], items ? &items[s] : NULL);
		if (out->error) {
			name_failed(&c, steps[s].held);
			if (held_live(&c, steps[s].held))
				cancel_held_item(&c, steps[s].held);
			break;
		}
	}
	if (fail_held != UINT32_MAX) {
		name_failed(&c, fail_held);
		if (held_live(&c, fail_held))
			cancel_held_item(&c, fail_held);
	}
	for (uint32_t j = 0; carry && j < carry->count; j++)
		carry->items[j].worker = LOOM_SCHED_NO_WORKER;
	if (carry && !out->error && fail_held == UINT32_MAX)
		carry_held(&c, carry);
	/* Other taken children have no slot to wait in: none outlives it. */
	for (size_t h = n_batch; h < c.n_held; h++)
		if (held_live(&c, h))
			cancel_held_item(&c, h);
	for (uint32_t i = 0; i < n_batch; i++)
		batch_live[i] = held_live(&c, i);
	owner_unlock(w);
	if (c.woke)
		wake_one(sched);
}

/* -------------------------------------------------------- replay trace --- */

static struct loom_sched_event slot_event(const struct loom_sched *sched,
					  const struct loom_work_record *rec,
					  const struct loom_trace_slot_rec *s,
					  uint64_t v)
{
	return (struct loom_sched_event){
		.kind = (enum loom_sched_event_kind)(v & LOOM_SLOT_KIND_MASK),
		.worker = s->worker,
		.other_worker = s->other_worker,
		.completes_domain = v & LOOM_SLOT_COMPLETES,
		.item = loom_work_id_of(sched->domain, rec),
	};
}

/* The events of one record into place (see place_events()). */
static size_t place_record_events(struct loom_sched *sched,
				  const struct loom_work_chunk *chunk,
				  struct loom_work_record *rec,
				  struct loom_sched_event *events,
				  uint64_t numbers)
{
	struct loom_trace_slot_rec *slots = loom_work_slots(rec);
	size_t placed = 0;

	if (!loom_work_issued(chunk, atomic_load_explicit(&rec->state,
							  memory_order_acquire)))
		return 0;	/* being issued: no event yet */
	for (int i = 0; i < LOOM_TRACE_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&slots[i].seq_kind,
						  memory_order_acquire);
		uint64_t seq = v >> LOOM_SLOT_SEQ_SHIFT;

		if (!v || (v & LOOM_SLOT_TAKEN) || seq > numbers)
			continue;
		events[seq - 1] = slot_event(sched, rec, &slots[i], v);
		atomic_store_explicit(&slots[i].seq_kind,
				      v | LOOM_SLOT_TAKEN,
				      memory_order_relaxed);
		placed++;
	}
	return placed;
}

/*
 * Domain mutex held.  Every recorded event numbered 1 .. @numbers and not
 * taken before goes to events[number - 1] (zeroed: kind 0 is a hole) and
 * is marked taken; returns how many did.  Numbers are dense but for a
 * thief's lost race (and a completing retirement's renumbering after one),
 * so placing by number orders the trace in one pass.  An event still being
 * written, or numbered later, is left for the next trace.
 */
static size_t place_events(struct loom_sched *sched,
			   struct loom_sched_event *events, uint64_t numbers)
{
	uint64_t reserved = atomic_load_explicit(&sched->domain->reserved,
						 memory_order_acquire);
	size_t placed = 0;

	for (uint64_t k = 0; k << LOOM_WORK_CHUNK_SHIFT < reserved; k++) {
		struct loom_work_chunk *chunk = loom_work_chunk_at(sched->domain, k);
		uint64_t left = reserved - (k << LOOM_WORK_CHUNK_SHIFT);

		for (uint64_t at = 0; at < LOOM_WORK_CHUNK_RECORDS && at < left; at++)
			placed += place_record_events(sched, chunk,
						      &chunk->records[at],
						      events, numbers);
	}
	return placed;
}

/*
 * Zeroed room for @n events.  A big trace (40 bytes an event, three or
 * four events an item) gets huge pages: one fault per 2 MiB instead of one
 * per 4 KiB, which is most of the cost of taking it.
 */
static struct loom_sched_event *events_alloc(uint64_t n, size_t *mapped)
{
	size_t bytes = n * sizeof(struct loom_sched_event);

	*mapped = 0;
	if (n > SIZE_MAX / sizeof(struct loom_sched_event))
		return NULL;
	if (bytes < LOOM_HUGE_PAGE)
		return calloc(n, sizeof(struct loom_sched_event));
	bytes = (bytes + LOOM_HUGE_PAGE - 1) & ~(LOOM_HUGE_PAGE - 1);
	*mapped = bytes;
	return loom_huge_alloc(bytes);
}

static void events_free(struct loom_sched_event *events, size_t mapped)
{
	if (mapped)
		munmap(events, mapped);
	else
		free(events);
}

/*
 * Closes the holes among @numbers events, @placed of them not holes;
 * returns how many remain.  Only what follows the first hole moves, and
 * a trace without holes (one worker's, see last_number()) is not read.
 */
static size_t compact_events(struct loom_sched_event *events, uint64_t numbers,
			     size_t placed)
{
	uint64_t j = 0;
	size_t n;

	if (placed == numbers)
		return placed;
	while (j < numbers && events[j].kind)
		j++;
	for (n = j; j < numbers; j++)
		if (events[j].kind)
			events[n++] = events[j];
	return n;
}

enum loom_error loom_sched_take_trace(struct loom_sched *sched,
				      struct loom_sched_trace **out)
{
	struct loom_sched_trace *trace;
	uint64_t numbers = 0;
	size_t n = 0;

	if (!sched || !out)
		return LOOM_WORK_INVALID_ARGUMENT;
	trace = calloc(1, sizeof(*trace));
	if (!trace)
		return LOOM_WORK_OUT_OF_MEMORY;
	loom_work_lock(sched->domain);
	if (sched->tracing)
		numbers = atomic_load_explicit(&sched->domain->trace_seq,
					       memory_order_acquire);
	if (numbers) {
		/* Allocated before any event is marked taken. */
		trace->events = events_alloc(numbers, &trace->mapped);
		if (!trace->events) {
			loom_work_unlock(sched->domain);
			free(trace);
			return LOOM_WORK_OUT_OF_MEMORY;
		}
		n = compact_events(trace->events, numbers,
				   place_events(sched, trace->events, numbers));
	}
	loom_work_unlock(sched->domain);
	trace->count = n;
	trace->domain = sched->domain;
	loom_work_domain_get(sched->domain);
	*out = trace;
	return LOOM_WORK_OK;
}

size_t loom_sched_trace_count(const struct loom_sched_trace *trace)
{
	return trace ? trace->count : 0;
}

const struct loom_sched_event *
loom_sched_trace_events(const struct loom_sched_trace *trace)
{
	return trace ? trace->events : NULL;
}

void loom_sched_trace_free(struct loom_sched_trace *trace)
{
	if (!trace)
		return;
	events_free(trace->events, trace->mapped);
	loom_work_domain_put(trace->domain);
	free(trace);
}
