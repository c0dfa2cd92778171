/* SPDX-License-Identifier: MIT */
/*
 * DOC: the scheduler's private header
 *
 * What the scheduler's files share with each other (sched.c: lifecycle,
 * owner locks, parking, transitions; sched_commit.c: committing a device
 * run; sched_trace.c: the replay trace; sched_deque.h: the deque), and
 * what the adapters and tests use of it beyond the public work.h: the
 * synchronous adapter's loop and the commit engine.
 *
 * Not installed; the names are global in libloom.a, hence the loom_ prefix.
 */
#ifndef LOOM_SCHED_INTERNAL_H
#define LOOM_SCHED_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sched_deque.h"
#include "work_internal.h"

/* ---------------------------------------------------------------------------
 * For the adapters and the tests: committing what an execution-local
 * scheduler ran (spec §2.2)
 */

/* Workers parked for want of work right now: a hint, stale at once. */
uint32_t loom_sched_sleepers(const struct loom_sched *sched);

/*
 * Whether the whole domain is being cancelled (loom_sched_cancel_all()
 * was called): once true, never false again.  A worker that sees it starts
 * nothing more; one that does not yet see it still has every item it
 * holds cancelled.
 */
bool loom_sched_cancelling(const struct loom_sched *sched);

/*
 * loom_sched_publish_complete(), and then, unless that completed the
 * domain or the worker still holds an item, the worker's next item as
 * loom_sched_acquire() would take it (its own newest, else a steal), all
 * under one owner lock: the step loom_sched_run_loop() commits each item
 * with.  *@took says whether *@next was taken; nothing is taken after a
 * refusal.  @next may be @parent.
 */
enum loom_error
loom_sched_publish_complete_next(struct loom_sched *sched,
				 const struct loom_sched_item *parent,
				 const uint64_t *payloads, size_t count,
				 struct loom_work_resp *children,
				 enum loom_work_status *status,
				 struct loom_sched_item *next, bool *took);

/*
 * The synchronous adapter's worker loop (loom_sched_run_loop()).  @run runs
 * an item: true to publish its *@count children (*@payloads, ordinal order)
 * and complete it, false to hand it back held.  @completed and @published
 * count what the loop committed; @refused says why an item came back.
 */
struct loom_sched_loop {
	bool (*run)(void *ctx, const struct loom_sched_item *item,
		    const uint64_t **payloads, size_t *count);
	void *ctx;
	uint64_t completed;
	uint64_t published;
	enum loom_error refused;
};

/*
 * Runs @worker (holding nothing) until the domain completes: takes items as
 * loom_sched_acquire_wait() does, runs each through @loop->run and commits
 * it as loom_sched_publish_complete_next() does, so the trace is the one
 * of those calls.  Returns LOOM_WORK_DOMAIN_COMPLETE; LOOM_OK with
 * *@item still held when @run declined it (@loop->refused LOOM_OK) or
 * the scheduler refused its publication (@loop->refused says why: then
 * nothing of it was published); or acquire's error.
 */
enum loom_error loom_sched_run_loop(struct loom_sched *sched, uint32_t worker,
				    struct loom_sched_loop *loop,
				    struct loom_sched_item *item);

/*
 * One item's transactions: item @held (an index into the commit's held
 * items: the batch's, then every child taken, in the order taken)
 * publishes @count children in ordinal order with @payloads, acquiring
 * each before it is visible; a child with @taken[k] ran in the same run
 * and is taken by the worker at once (it becomes the next held item),
 * the others are queued on the worker's deque like any publication; then
 * the item completes.
 */
struct loom_sched_step {
	uint32_t held;
	uint32_t count;
	const uint64_t *payloads;
	const bool *taken;
};

/*
 * What a commit keeps for the worker's next packet: @count held items,
 * @held[j] the held index of the one that becomes @items[j].
 */
struct loom_sched_carry {
	const uint32_t *held;
	uint32_t count;
	struct loom_sched_item *items;
};

/*
 * An item a commit holds: @rec (NULL: a batch item that is not active, its
 * records skipped) and whether @cancel covers it: a cancel request on it,
 * or on the item it descends from in this run, reached it before its
 * record was committed (it ran; it is retired by cancellation).
 */
struct loom_sched_held {
	struct loom_work_record *rec;
	bool cancel;
};

/*
 * The commit of one run of a worker (sched_commit.c): begin, one step per
 * record the device wrote, end.  The worker's owner lock is held from
 * begin to end, so no taken child is ever visible to another worker: a
 * commit is one atomic change of the worker's state, and every item it
 * holds is retired exactly once.
 *
 * The fields after the banner are the result; the others are the
 * engine's.
 */
struct loom_sched_commit {
	struct loom_sched *sched;
	uint32_t worker;
	const struct loom_sched_item *batch;
	uint32_t n_batch;
	struct loom_sched_held *held;
	size_t n_held, max_held;
	size_t live_taken;		/* taken children not yet retired */
	bool woke;			/* a publication to an empty deque */
	/* --- the result --- */
	uint64_t completed, cancelled, published;
	/*
	 * The first step the scheduler refused (LOOM_WORK_QUEUE_CAPACITY,
	 * LOOM_WORK_ORDINALS_EXHAUSTED, LOOM_WORK_OUT_OF_MEMORY,
	 * LOOM_WORK_INVALID_ARGUMENT for a step naming no live held item) or
	 * LOOM_OK.
	 */
	enum loom_error error;
	/* That step's item, or end()'s @fail_held, when @has_failed. */
	bool has_failed;
	struct loom_sched_item failed;
};

/*
 * Begins a commit for @worker, whose @n_batch active items are @batch
 * (held items 0 .. @n_batch - 1): takes the worker's owner lock.  @held
 * is room for @max_held held items, the commit's until end.
 */
void loom_sched_commit_begin(struct loom_sched_commit *c,
			     struct loom_sched *sched, uint32_t worker,
			     const struct loom_sched_item *batch,
			     uint32_t n_batch, struct loom_sched_held *held,
			     size_t max_held);

/*
 * Commits one step, in record order.  An item a cancel request covers
 * (a pending request on it, or on the batch item it descends from) ran
 * all the same: it still publishes its children as one group, acquiring
 * each before it is visible, but queues none: the children it took (they
 * ran, or run next) are held, covered too, and the others are cancelled
 * at once (cancel-queued); then the item is cancelled.  So every item the
 * device ran holds a responsibility and retires exactly once.  @item, if
 * not NULL, gets the step's item if it was retired by the step (completed
 * or cancelled), else a worker of LOOM_SCHED_NO_WORKER.  Returns LOOM_OK
 * or the refusal (c->error): the refused step's item is then cancelled,
 * and every later step only clears its @item.
 */
enum loom_error loom_sched_commit_step(struct loom_sched_commit *c,
				       const struct loom_sched_step *step,
				       struct loom_sched_item *item);

/*
 * Ends the commit: cancels @fail_held (or UINT32_MAX: none), and every
 * taken child still held that @carry does not keep; releases the owner
 * lock.  Batch items without a step stay active: @batch_live[i] says
 * whether batch item i still is (the caller runs or cancels it).
 * @carry, if not NULL and every step committed without @fail_held: the
 * held items it names stay active on the worker instead (the device
 * already runs them in its next packet), the taken children among them in
 * new active slots, at most max_batch active items in all (a child a
 * cancel request covers gets one too, with a request of its own); each is
 * reported in @carry->items, or with a worker of LOOM_SCHED_NO_WORKER if
 * it is not live, does not fit, or nothing was carried.
 */
void loom_sched_commit_end(struct loom_sched_commit *c, uint32_t fail_held,
			   const struct loom_sched_carry *carry,
			   bool *batch_live);

/* ---------------------------------------------------------------------------
 * Between the scheduler's own files
 */

/* An item a worker is running. */
struct active_item {
	struct loom_work_record *rec;
	bool cancel_requested;
	bool retired;			/* a hole until the batch is done */
};

struct sched_worker {
	/* Read by thieves: bottom and the ring; top on a line of its own. */
	struct sched_deque deque;
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
	atomic_bool cancelling;		/* cancel_all was called */
};

/*
 * The owner lock of a worker: an atomic flag on the worker's own line,
 * uncontended but for the rare paths (sched.c's opening comment).
 */
void loom_sched_owner_lock_slow(struct sched_worker *w);

static inline void owner_lock(struct sched_worker *w)
{
	if (atomic_exchange_explicit(&w->lock, 1, memory_order_acquire))
		loom_sched_owner_lock_slow(w);
}

static inline void owner_unlock(struct sched_worker *w)
{
	atomic_store_explicit(&w->lock, 0, memory_order_release);
}

/*
 * Recording the replay trace: each event takes @n numbers from one counter
 * and is written into its item's record (work_internal.h), so recording
 * needs no log, no lock and no memory.  Taking it is sched_trace.c's.
 */
static inline uint64_t trace_number(struct loom_sched *sched, uint64_t n)
{
	return atomic_fetch_add_explicit(&sched->domain->trace_seq, n,
					 memory_order_relaxed) + 1;
}

/* Writes one event into @rec's @slot; the number is written last. */
static inline void record_event(struct loom_sched *sched,
				struct loom_work_record *rec,
				enum loom_trace_slot slot,
				enum loom_sched_event_kind kind,
				uint32_t worker, uint32_t other, uint64_t seq,
				bool completes)
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

static inline void fill_item(struct loom_sched *sched,
			     struct loom_work_record *rec, uint32_t worker,
			     uint32_t from, struct loom_sched_item *item)
{
	item->resp = loom_work_resp_of(sched->domain, rec->serial);
	item->id = loom_work_id_of(sched->domain, rec);
	item->payload = rec->payload;
	item->worker = worker;
	item->from_worker = from;
}

/* Owner lock held: @rec takes @w's next active slot. */
static inline __attribute__((always_inline)) void
add_active(struct sched_worker *w, struct loom_work_record *rec)
{
	w->active[w->end++] = (struct active_item){ rec, false, false };
	w->nactive++;
}

/*
 * sched.c's transitions that the commit engine composes.  Defined inline
 * there (its common path gets them without calls), with these external
 * definitions for sched_commit.c.
 */

/*
 * The active slot of @item on @w, its worker (owner lock held), or why
 * there is none: @if_retired, or not active.
 */
enum loom_error loom_sched_active_slot(struct loom_sched *sched,
				       struct sched_worker *w,
				       const struct loom_sched_item *item,
				       enum loom_error if_retired,
				       struct active_item **slot);

/* Owner lock held: retires the active @slot of @worker. */
void loom_sched_finish_slot(struct loom_sched *sched, uint32_t worker,
			    struct active_item *slot, bool cancelling,
			    enum loom_work_status *status);

/*
 * Retires @rec in @lane and records @kind in its retirement slot; returns
 * whether that completed the domain.  @owner: the retirement of an item by
 * its worker (owner lock held), which checks for completion only if it
 * can have been the last; the rare paths always check.
 */
enum loom_work_status loom_sched_retire(struct loom_sched *sched,
					struct loom_work_record *rec,
					uint32_t lane,
					enum loom_sched_event_kind kind,
					uint32_t worker, bool owner);

/*
 * Records @rec's retirement (@kind, numbered @seq), already counted, and,
 * if it @completes the domain, wakes every parked worker.
 */
enum loom_work_status loom_sched_retired(struct loom_sched *sched,
					 struct loom_work_record *rec,
					 enum loom_sched_event_kind kind,
					 uint32_t worker, uint64_t seq,
					 bool completes);

/* Owner lock of @worker held: requests cancellation of an active item. */
enum loom_error loom_sched_request_cancel(struct loom_sched *sched,
					  uint32_t worker,
					  struct active_item *slot);

/* Something was queued: wake one sleeper, if any sleeps. */
void loom_sched_wake_one(struct loom_sched *sched);

#endif /* LOOM_SCHED_INTERNAL_H */
