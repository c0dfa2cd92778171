/* SPDX-License-Identifier: MIT */
/*
 * DOC: the responsibility kernel's private header
 *
 * work_internal.h: what work.c shares with the scheduler (sched_internal.h)
 * and the tests -- the domain's layout and the kernel's steps, which the
 * scheduler composes into its transitions without any domain-wide lock
 * (see the ordering argument at the top of work.c and in
 * Documentation/runtime.rst).
 *
 * Not installed; the names are global in libloom.a, hence the loom_ prefix.
 */
#ifndef LOOM_WORK_INTERNAL_H
#define LOOM_WORK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "loom/work.h"

#define LOOM_CACHE_LINE		64

/* Immutable once issued (see struct loom_item_id), but for a cache. */
struct loom_item_node {
	const struct loom_item_node *parent;	/* NULL: the root */
	uint64_t ordinal;
	uint64_t depth;
	/*
	 * Its structural hash (of its parent's and its ordinal), or 0 until
	 * the first hash or equality needs it: see node_hash() in work.c.
	 */
	_Atomic uint64_t hash;
};

/*
 * struct loom_work_record.state: these bits, and above them the generation
 * of the chunk (struct loom_work_chunk.gen) when the record was issued.
 */
#define LOOM_REC_ISSUED		(1u << 0)	/* the fields below are valid */
#define LOOM_REC_RETIRED	(1u << 1)
#define LOOM_REC_EXHAUSTED	(1u << 2)	/* ordinal UINT64_MAX was used */
#define LOOM_REC_GEN_SHIFT	3
#define LOOM_REC_GEN_MAX	(UINT32_MAX >> LOOM_REC_GEN_SHIFT)

/*
 * One responsibility and the identity of the item that holds it: one cache
 * line, so records of items on different workers never share one.
 *
 * The identity, payload and serial are written once, before the record is
 * issued (state gets LOOM_REC_ISSUED and its chunk's generation with
 * release: a record left by an earlier domain reads unissued, see
 * loom_work_issued()); next_ordinal and the
 * other state bits change only under the lock of whoever holds the item
 * (its worker's owner lock, or the domain's mutex for the kernel API).
 */
struct loom_work_record {
	struct loom_item_node node;
	uint64_t next_ordinal;		/* the ordinal its next child gets */
	uint64_t payload;		/* the scheduler's payload */
	uint64_t serial;
	atomic_uint state;		/* LOOM_REC_* */
	uint32_t worker;		/* scheduler: its deque, then its worker */
} __attribute__((aligned(LOOM_CACHE_LINE)));

/*
 * The replay trace keeps, per record, one slot per event an item can cause
 * after its creation and the creation itself: written once each, by whoever
 * causes the event, so recording needs no shared log and no allocation.
 */
enum loom_trace_slot {
	LOOM_SLOT_CREATE,	/* admit or publish */
	LOOM_SLOT_ACQUIRE,	/* acquire-local or steal */
	LOOM_SLOT_REQUEST,	/* cancel-request */
	LOOM_SLOT_RETIRE,	/* complete, cancel-queued or cancel-active */
	LOOM_TRACE_SLOTS,
};

/* seq_kind: sequence << 8 | TAKEN | COMPLETES | kind; 0 is empty. */
#define LOOM_SLOT_KIND_MASK	0x0fu
#define LOOM_SLOT_COMPLETES	0x10u
#define LOOM_SLOT_TAKEN		0x20u
#define LOOM_SLOT_SEQ_SHIFT	8

struct loom_trace_slot_rec {
	_Atomic uint64_t seq_kind;	/* written last, with release */
	uint32_t worker;
	uint32_t other_worker;
};

/* 2 MiB of records per chunk: one transparent huge page where available. */
#define LOOM_WORK_CHUNK_SHIFT	15
#define LOOM_WORK_CHUNK_RECORDS	(1u << LOOM_WORK_CHUNK_SHIFT)
#define LOOM_WORK_DIR_SHIFT	12
#define LOOM_WORK_DIR_ENTRIES	(1u << LOOM_WORK_DIR_SHIFT)

/*
 * Records 1 + k * CHUNK_RECORDS ... live in chunk k.  A pooled chunk is
 * not cleared for its next domain: its generation goes up instead, and a
 * record counts as issued only with the current one (cleared and restarted
 * at 1 once in LOOM_REC_GEN_MAX uses).  Chunks are installed
 * once (compare-and-swap into the directory) and never move before the
 * domain dies; then they go to a process-wide pool for the next domain,
 * so records are written into memory that is already mapped.
 */
struct loom_work_chunk {
	struct loom_work_chunk *next;		/* in the pool */
	uint32_t gen;				/* 1 + uses before this one */
	struct loom_work_record *records;	/* LOOM_WORK_CHUNK_RECORDS */
	bool traced;				/* slots after them: loom_work_slots() */
};

/*
 * A traced chunk's slots follow its records in the same mapping, a record's
 * slots (one line) as far from it as the records' size: the slots of a
 * record are found from the record alone, with no directory lookup.
 */
#define LOOM_WORK_RECORDS_BYTES	\
	((size_t)LOOM_WORK_CHUNK_RECORDS * sizeof(struct loom_work_record))

_Static_assert(LOOM_TRACE_SLOTS * sizeof(struct loom_trace_slot_rec) ==
	       sizeof(struct loom_work_record),
	       "a record's trace slots are one record's size");

/* Whether @state, of a record of @chunk, says issued in this domain. */
static inline bool loom_work_issued(const struct loom_work_chunk *chunk,
				    unsigned int state)
{
	return (state & LOOM_REC_ISSUED) &&
	       state >> LOOM_REC_GEN_SHIFT == chunk->gen;
}

/*
 * A lane: one scheduler worker, or the shared lane of the kernel API and
 * the rare paths.  Alone on its line, written only by whoever holds the
 * lane (the worker's owner lock, or the domain's mutex): what it acquired
 * and retired, and the serials it reserved but has not issued yet.
 */
struct loom_work_lane {
	_Atomic uint64_t retired;
	_Atomic uint64_t acquired;
	uint64_t next, end;	/* reserved serials [next, end) */
} __attribute__((aligned(LOOM_CACHE_LINE)));

/*
 * Serials a lane reserves at a time: one shared write per 4096 items.  With
 * blocks of 64 two workers spent a fifth more time on the light tree
 * (benchmarks.rst, P4); a lane leaves at most a block unissued.
 */
#define LOOM_WORK_LANE_SERIALS	4096

struct loom_work_domain {
	/*
	 * Serialises the rare paths: the kernel API (loom_work_*), admission
	 * and cancellation.  The scheduler's common path never takes it.
	 */
	pthread_mutex_t lock;
	atomic_uint refs;		/* creator + schedulers + traces */
	uint64_t key;			/* struct loom_work_resp.domain_key */
	uint64_t occurrence;		/* non-zero; minted unless replayed */
	bool tracing;			/* chunks carry trace slots */
	uint32_t nlanes;		/* the scheduler's workers + the shared lane */
	struct loom_work_lane *lanes;
	atomic_bool root_admitted;	/* the root source is closed */
	atomic_bool completed;		/* set by the one completing retirement */
	/*
	 * The serial allocator: serials 1 .. reserved have their records;
	 * lanes take them LOOM_WORK_LANE_SERIALS at a time.
	 */
	_Atomic uint64_t reserved __attribute__((aligned(LOOM_CACHE_LINE)));
	_Atomic uint64_t trace_seq __attribute__((aligned(LOOM_CACHE_LINE)));
	/* Chunk k at dir[k >> DIR_SHIFT][k & (DIR_ENTRIES - 1)]. */
	_Atomic(struct loom_work_chunk *) *_Atomic dir[LOOM_WORK_DIR_ENTRIES]
		__attribute__((aligned(LOOM_CACHE_LINE)));
};

static inline void loom_work_lock(const struct loom_work_domain *domain)
{
	/* The mutex is not part of the domain's logical value. */
	pthread_mutex_lock((pthread_mutex_t *)&domain->lock);
}

static inline void loom_work_unlock(const struct loom_work_domain *domain)
{
	pthread_mutex_unlock((pthread_mutex_t *)&domain->lock);
}

static inline struct loom_work_resp
loom_work_resp_of(const struct loom_work_domain *domain, uint64_t serial)
{
	return (struct loom_work_resp){ .domain_key = domain->key, .serial = serial };
}

/*
 * Zeroed room for @n objects of @size bytes on cache lines of their own
 * (aligned, and padded to a whole line), or NULL.  For per-worker state
 * that its worker writes for every item: from calloc(), two workers' state
 * could share a line, and every write would take it from the other core.
 * free() it.
 */
void *loom_lines_alloc(size_t n, size_t size);

#define LOOM_HUGE_PAGE	((size_t)2 << 20)

/*
 * @bytes (a multiple of LOOM_HUGE_PAGE) of zeroed memory, huge-page aligned
 * and advised for transparent huge pages; NULL if the mapping fails.
 * munmap() it.
 */
void *loom_huge_alloc(size_t bytes);

/* The lane the kernel API and the scheduler's rare paths retire in. */
static inline uint32_t loom_work_shared_lane(const struct loom_work_domain *domain)
{
	return domain->nlanes - 1;
}

/*
 * A domain of dispatch @occurrence (0: one minted) with @workers worker
 * lanes and one shared lane, tracing (trace slots per record) or not.
 * loom_work_domain_create() is (0, 0, false).
 */
enum loom_error loom_work_domain_create_lanes(uint64_t occurrence,
					      uint32_t workers, bool tracing,
					      struct loom_work_domain **out);

void loom_work_domain_get(struct loom_work_domain *domain);
void loom_work_domain_put(struct loom_work_domain *domain);

static inline struct loom_work_chunk *
loom_work_chunk_at(const struct loom_work_domain *domain, uint64_t k)
{
	_Atomic(struct loom_work_chunk *) *leaf;

	if (k >= (uint64_t)LOOM_WORK_DIR_ENTRIES << LOOM_WORK_DIR_SHIFT)
		return NULL;
	/* Acquire: the chunk's cleared memory before its use. */
	leaf = atomic_load_explicit(&domain->dir[k >> LOOM_WORK_DIR_SHIFT],
				    memory_order_acquire);
	if (!leaf)
		return NULL;
	return atomic_load_explicit(&leaf[k & (LOOM_WORK_DIR_ENTRIES - 1)],
				    memory_order_acquire);
}

/* The chunk @serial's record lives in, if it exists yet. */
static inline struct loom_work_chunk *
loom_work_chunk_of(const struct loom_work_domain *domain, uint64_t serial)
{
	return loom_work_chunk_at(domain, (serial - 1) >> LOOM_WORK_CHUNK_SHIFT);
}

/* @serial's record in @chunk, its chunk. */
static inline struct loom_work_record *
loom_work_chunk_record(const struct loom_work_chunk *chunk, uint64_t serial)
{
	return &chunk->records[(serial - 1) & (LOOM_WORK_CHUNK_RECORDS - 1)];
}

/*
 * The chunk of reserved @serial, given @prev, that of @serial - 1, or
 * NULL: a run of serials looks the directory up once per chunk.
 */
static inline struct loom_work_chunk *
loom_work_chunk_after(const struct loom_work_domain *domain,
		      struct loom_work_chunk *prev, uint64_t serial)
{
	if (prev && ((serial - 1) & (LOOM_WORK_CHUNK_RECORDS - 1)))
		return prev;
	return loom_work_chunk_of(domain, serial);
}

/*
 * The record of a reserved serial (issued or being issued by the caller):
 * its chunk exists.
 */
static inline struct loom_work_record *
loom_work_record_at(const struct loom_work_domain *domain, uint64_t serial)
{
	return loom_work_chunk_record(loom_work_chunk_of(domain, serial), serial);
}

/* The record of @serial if it was issued, else NULL.  Any thread. */
struct loom_work_record *
loom_work_record(const struct loom_work_domain *domain, uint64_t serial);

static inline struct loom_item_id
loom_work_id_of(const struct loom_work_domain *domain,
		const struct loom_work_record *rec)
{
	return (struct loom_item_id){ domain->occurrence, rec->node.parent,
				      rec->node.ordinal };
}

/* The trace slots of @rec, whose domain traces. */
static inline struct loom_trace_slot_rec *
loom_work_slots(const struct loom_work_record *rec)
{
	return (struct loom_trace_slot_rec *)((char *)rec +
					      LOOM_WORK_RECORDS_BYTES);
}

/*
 * LOOM_WORK_RESP_INVALID, LOOM_WORK_FOREIGN_DOMAIN, @if_retired when @resp
 * was retired, else LOOM_OK and *@rec.  The retired bit is only
 * stable for the item's holder (or under the locks that exclude it).
 */
enum loom_error loom_work_check_live(const struct loom_work_domain *domain,
				     struct loom_work_resp resp,
				     enum loom_error if_retired,
				     struct loom_work_record **rec);

/* Under domain->lock: acquires the root (serial 1) and closes the source. */
enum loom_error loom_work_admit_locked(struct loom_work_domain *domain,
				       uint64_t payload,
				       struct loom_work_record **rec);

/*
 * Acquires @count (>= 1) responsibilities for children of the live @parent
 * (held by the caller, who holds @lane) and issues them: serials *@first
 * .. *@first + @count - 1, in ordinal order, with @payloads (may be NULL:
 * 0).  Every acquisition is counted in @lane before this returns, so
 * before the caller can make any child visible.  Rejections:
 * LOOM_WORK_ORDINALS_EXHAUSTED, LOOM_WORK_OUT_OF_MEMORY, with nothing
 * changed.
 */
enum loom_error loom_work_spawn_held(struct loom_work_domain *domain,
				     uint32_t lane,
				     struct loom_work_record *parent,
				     size_t count, const uint64_t *payloads,
				     uint64_t *first);

/*
 * Adds @n to a lane's counter: the lane has one writer at a time, so no
 * read-modify-write is needed; release, for the combining check's acquire.
 */
static inline void loom_work_lane_add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(counter,
			      atomic_load_explicit(counter,
						   memory_order_relaxed) + n,
			      memory_order_release);
}

/* Marks the live @rec, held by the caller, retired. */
static inline void loom_work_mark_retired(struct loom_work_record *rec)
{
	/* Only the holder writes the state: no read-modify-write needed. */
	atomic_store_explicit(&rec->state,
			      atomic_load_explicit(&rec->state,
						   memory_order_relaxed) |
			      LOOM_REC_RETIRED, memory_order_relaxed);
}

/*
 * Retires the live @rec, held by the caller, counting it in @lane (written
 * by one thread at a time).  Sequentially consistent, so a caller may then
 * look at its own deque to decide whether this can have been the last
 * retirement; if it can, it must call loom_work_try_complete().
 */
static inline void loom_work_retire_held(struct loom_work_domain *domain,
					 struct loom_work_record *rec,
					 uint32_t lane)
{
	loom_work_mark_retired(rec);
	/*
	 * seq_cst: release for the combining check's acquire, and ordered
	 * before the caller's later loads that decide whether to check.
	 */
	atomic_fetch_add_explicit(&domain->lanes[lane].retired, 1,
				  memory_order_seq_cst);
}

/*
 * loom_work_retire_held() without its fence: the count is a release store
 * (@lane has one writer at a time), so it is ordered before the caller's
 * later loads only by a sequentially consistent fence the caller executes
 * before it decides whether this can have been the last retirement.
 */
static inline void
loom_work_retire_held_unfenced(struct loom_work_domain *domain,
			       struct loom_work_record *rec, uint32_t lane)
{
	loom_work_mark_retired(rec);
	loom_work_lane_add(&domain->lanes[lane].retired, 1);
}

/*
 * The combining check: true for the one caller that sees the root source
 * closed and every acquired responsibility retired and claims completion.
 */
bool loom_work_try_complete(struct loom_work_domain *domain);

/* Acquired minus retired: never zero while a responsibility is live. */
uint64_t loom_work_active_now(const struct loom_work_domain *domain);

/*
 * Tests only: makes @parent's next child ordinal @next, so the end of the
 * ordinal space can be reached without 2^64 spawns.
 */
enum loom_error
loom_work_set_next_ordinal_for_test(struct loom_work_domain *domain,
				    struct loom_work_resp parent, uint64_t next);

#endif /* LOOM_WORK_INTERNAL_H */
