/* SPDX-License-Identifier: MIT */
/*
 * DOC: the scheduler's deque
 *
 * A bounded Chase-Lev deque of record pointers, one per scheduler worker:
 * its owner pushes and pops at the bottom without a lock, thieves take the
 * top with a compare-and-swap.  top only grows; [top, bottom) are queued,
 * the oldest at top.  Everything is static inline: the scheduler's common
 * path (sched.c) and its commit engine (sched_commit.c) both run it, and
 * a call per push or pop was measurable (sched.c, ALWAYS_INLINE).
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
 *
 * Not installed.
 */
#ifndef LOOM_SCHED_DEQUE_H
#define LOOM_SCHED_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "work_internal.h"

/*
 * The deque's state: bottom and the ring on the line thieves read, top
 * alone on the line they compare-and-swap.
 */
struct sched_deque {
	_Atomic int64_t bottom;
	_Atomic(struct loom_work_record *) *ring;
	uint64_t mask;			/* ring size - 1: a power of two */
	_Atomic int64_t top __attribute__((aligned(LOOM_CACHE_LINE)));
};

static inline int64_t deque_size(const struct sched_deque *d)
{
	int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_seq_cst);

	return b > t ? b - t : 0;
}

/* Owner only.  The queued items, measured against a possibly stale top. */
static inline int64_t deque_owner_size(const struct sched_deque *d)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);

	return b > t ? b - t : 0;
}

/* Owner only, with room checked: queues @rec at the bottom (unpublished). */
static inline void deque_put(struct sched_deque *d, int64_t at,
			     struct loom_work_record *rec)
{
	atomic_store_explicit(&d->ring[(uint64_t)at & d->mask], rec,
			      memory_order_relaxed);
}

/*
 * Owner only: makes the items put below @bottom visible.  Sequentially
 * consistent when the deque was empty, for the scheduler's wake_one()
 * (see park() in sched.c).
 */
static inline void deque_publish_bottom(struct sched_deque *d, int64_t bottom,
					bool was_empty)
{
	atomic_store_explicit(&d->bottom, bottom, was_empty ?
			      memory_order_seq_cst : memory_order_release);
}

/* Owner only: the newest item, or NULL. */
static inline struct loom_work_record *deque_pop(struct sched_deque *d)
{
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
	struct loom_work_record *rec;
	int64_t t;

	/* The fence also orders the caller's earlier stores (finish_take()). */
#ifdef __SANITIZE_THREAD__
	/* GCC refuses fences there; a locked exchange is one on the CPU. */
	atomic_exchange_explicit(&d->bottom, b, memory_order_seq_cst);
#else
	atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
#endif
	t = atomic_load_explicit(&d->top, memory_order_seq_cst);
	if (t > b) {
		/* Empty: restore. */
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
		return NULL;
	}
	rec = atomic_load_explicit(&d->ring[(uint64_t)b & d->mask],
				   memory_order_relaxed);
	if (t == b) {
		/* The last item: race the thieves for it on top. */
		if (!atomic_compare_exchange_strong_explicit(
			    &d->top, &t, t + 1, memory_order_seq_cst,
			    memory_order_relaxed))
			rec = NULL;
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
	}
	return rec;
}

enum steal_result { STEAL_EMPTY, STEAL_LOST, STEAL_OK };

/*
 * Any thread: the oldest item of @d into *@out, and how many it left in
 * *@left.  With @numbering (the trace's counter, or NULL: not tracing),
 * *@seq gets the steal's trace number, taken after top was read and
 * before the compare-and-swap, so thieves of one deque number their
 * steals in top order.
 */
static inline enum steal_result deque_steal(struct sched_deque *d,
					    _Atomic uint64_t *numbering,
					    struct loom_work_record **out,
					    uint64_t *seq, int64_t *left)
{
	int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
	struct loom_work_record *rec;
	int64_t b;

	b = atomic_load_explicit(&d->bottom, memory_order_seq_cst);
	if (t >= b)
		return STEAL_EMPTY;
	rec = atomic_load_explicit(&d->ring[(uint64_t)t & d->mask],
				   memory_order_relaxed);
	if (numbering)
		*seq = atomic_fetch_add_explicit(numbering, 1,
						 memory_order_relaxed) + 1;
	if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
						     memory_order_seq_cst,
						     memory_order_relaxed))
		return STEAL_LOST;
	*out = rec;
	*left = b - t - 1;
	return STEAL_OK;
}

/* Every owner lock held: nobody else touches any deque. */
static inline struct loom_work_record *deque_take_front(struct sched_deque *d)
{
	int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
	struct loom_work_record *rec;

	rec = atomic_load_explicit(&d->ring[(uint64_t)t & d->mask],
				   memory_order_relaxed);
	atomic_store_explicit(&d->top, t + 1, memory_order_relaxed);
	return rec;
}

/* Every owner lock held: removes @rec from @d, keeping the others in order. */
static inline bool deque_remove(struct sched_deque *d,
				struct loom_work_record *rec)
{
	int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
	int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	int64_t i;

	for (i = t; i < b; i++)
		if (atomic_load_explicit(&d->ring[(uint64_t)i & d->mask],
					 memory_order_relaxed) == rec)
			break;
	if (i == b)
		return false;
	for (; i + 1 < b; i++)
		deque_put(d, i, atomic_load_explicit(
				  &d->ring[(uint64_t)(i + 1) & d->mask],
				  memory_order_relaxed));
	atomic_store_explicit(&d->bottom, b - 1, memory_order_relaxed);
	return true;
}

#endif /* LOOM_SCHED_DEQUE_H */
