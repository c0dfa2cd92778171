// SPDX-License-Identifier: MIT
/*
 * DOC: the responsibility kernel
 *
 * work.c: the responsibility kernel of a DynamicWork domain and the
 * identity of its items.
 *
 * The active responsibility set is the set of records not yet retired.
 * Every responsibility is a record that is never freed before the domain,
 * so a used or foreign handle is always recognised, and every identity's
 * parent pointer stays valid.
 *
 * The count of the set is derived, never stored: the sum of the lanes'
 * acquired counters minus the sum of their retired counters (one lane per
 * scheduler worker, on its own cache line, plus a shared lane for the
 * kernel API and the rare paths; each written only by whoever holds it).
 * Serials come from one shared allocator, a block per lane at a time, so
 * a publication writes no shared line but once in LOOM_WORK_LANE_SERIALS.
 *
 * Why a transient zero cannot complete the domain.  The combining check
 * (loom_work_try_complete) reads every lane's retired counter, then every
 * lane's acquired counter.  Acquisition before publication: a child's
 * acquisition is stored (release) in its publisher's lane before the child
 * can be seen, so it happens before anyone's retirement of the child, and
 * before its parent's retirement (spawning precedes its holder's
 * retirement); each retirement is a release increment of the retirer's
 * lane.  So if the check's acquire load of a lane includes some
 * retirement, its later loads of acquired include that item's acquisition
 * and the acquisitions of every child the item spawned.  acquired ==
 * retired then means: every acquisition the check saw was retired, and
 * starting from the root (its acquisition precedes root_admitted, which
 * the check reads first) every child of every one of them was seen and
 * retired too.  No live item is left to spawn from: the zero is final.
 * The check can only be late, never early.
 *
 * Why the last retirement sees it.  Retirements increment their lane
 * sequentially consistently, or with a release store followed by a
 * sequentially consistent fence (the scheduler's worker loop), and then
 * check (the scheduler skips the check only where another live item
 * provably exists and will be retired by a checking call, see sched.c); of
 * two racing last retirements at least one reads the other's increment.
 * Both may see zero: an exchange on domain->completed elects the one that
 * reports completion.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "occurrence.h"
#include "work_internal.h"

/* ----------------------------------------------------------- identity --- */

#define ROOT_PARENT_HASH	0x526f6f745061726eULL	/* "RootParn" */
#define GOLDEN_GAMMA		0x9e3779b97f4a7c15ULL

/* splitmix64's finaliser: a bijection that spreads every input bit. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_step(uint64_t seed, uint64_t value)
{
	return mix64(seed ^ mix64(value + GOLDEN_GAMMA));
}

/* The most nodes hash_path() walks back down without recursing. */
#define HASH_PATH	256

/* The hash @node's children start from: 0 while it is not cached. */
static uint64_t cached_hash(const struct loom_item_node *node)
{
	return node ? atomic_load_explicit(&node->hash, memory_order_relaxed) :
		      ROOT_PARENT_HASH;
}

/*
 * Hashes the @len nodes from @node up (each the parent of the one before),
 * from @h, the hash above the topmost, caching each; returns @node's.  Up
 * to HASH_PATH nodes are remembered on the way up and hashed on the way
 * down.  A longer path is cut into at most HASH_PATH pieces, hashed from
 * the top one down by recursive calls: O(len log len) steps, recursion
 * log_256(len) deep, no allocation.  Threads that race here store the same
 * values; the cache is not part of a node's value, so it is written
 * through the const pointer.
 */
static uint64_t hash_path(const struct loom_item_node *node, uint64_t len,
			  uint64_t h)
{
	const struct loom_item_node *lowest[HASH_PATH];
	uint64_t stride = (len + HASH_PATH - 1) / HASH_PATH;
	size_t pieces = 0;

	/* The lowest node of every piece of stride nodes, from @node up. */
	for (uint64_t i = 0; i < len; i++, node = node->parent)
		if (i % stride == 0)
			lowest[pieces++] = node;
	for (size_t k = pieces; k-- > 0;) {
		if (stride > 1) {
			/* The top piece is the rest: stride or fewer. */
			h = hash_path(lowest[k], k == pieces - 1 ?
					  len - k * stride : stride, h);
			continue;
		}
		h = hash_step(h, lowest[k]->ordinal);
		atomic_store_explicit((_Atomic uint64_t *)&lowest[k]->hash, h,
				      memory_order_relaxed);
	}
	return h;
}

/*
 * @node's structural hash, computed on first use and cached: publication
 * does not pay for it (two splitmix rounds a child were 5% of the light
 * tree's time, see benchmarks.rst), and ids that are never hashed or
 * compared for equality never compute it.  What is not cached yet, from
 * @node up to the nearest cached ancestor (or the root), is hashed down
 * from there.  (A hash that comes out 0 reads as not cached and is
 * computed again: slower, never wrong.)
 */
static uint64_t node_hash(const struct loom_item_node *node)
{
	uint64_t d = 0, h;

	for (const struct loom_item_node *up = node; !(h = cached_hash(up));
	     up = up->parent)
		d++;
	return d ? hash_path(node, d, h) : h;
}

uint64_t loom_item_id_hash(const struct loom_item_id *id)
{
	return hash_step(hash_step(node_hash(id->parent), id->ordinal),
			 id->occurrence);
}

uint64_t loom_item_id_depth(const struct loom_item_id *id)
{
	return id->parent ? id->parent->depth + 1 : 0;
}

bool loom_item_id_parent(const struct loom_item_id *id,
			 struct loom_item_id *parent)
{
	const struct loom_item_node *node = id->parent;

	if (!node)
		return false;
	/* Through a local: @parent may be @id. */
	*parent = (struct loom_item_id){ id->occurrence, node->parent,
					 node->ordinal };
	return true;
}

/* A position on an identity path: the item (parent, ordinal) at depth. */
struct path_cursor {
	const struct loom_item_node *parent;
	uint64_t ordinal;
	uint64_t depth;
};

static struct path_cursor path_cursor(const struct loom_item_id *id)
{
	return (struct path_cursor){ id->parent, id->ordinal,
				     loom_item_id_depth(id) };
}

static void path_cursor_up(struct path_cursor *c)
{
	c->ordinal = c->parent->ordinal;
	c->parent = c->parent->parent;
	c->depth--;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/*
 * Lexicographic order of the ordinal paths without materialising them:
 * bring both to the same depth, then walk up in lockstep; the difference
 * nearest the root decides, and a proper prefix sorts first.  Reaching one
 * node from both sides means the rest of the paths are the same.
 */
int loom_item_id_compare(const struct loom_item_id *a,
			 const struct loom_item_id *b)
{
	struct path_cursor ca = path_cursor(a), cb = path_cursor(b);
	int by_depth, by_path = 0;

	if (a->occurrence != b->occurrence)
		return cmp_u64(a->occurrence, b->occurrence);
	by_depth = cmp_u64(ca.depth, cb.depth);
	while (ca.depth > cb.depth)
		path_cursor_up(&ca);
	while (cb.depth > ca.depth)
		path_cursor_up(&cb);
	for (;;) {
		if (ca.ordinal != cb.ordinal)
			by_path = cmp_u64(ca.ordinal, cb.ordinal);
		if (ca.parent == cb.parent || !ca.parent || !cb.parent)
			break;
		path_cursor_up(&ca);
		path_cursor_up(&cb);
	}
	return by_path ? by_path : by_depth;
}

bool loom_item_id_equal(const struct loom_item_id *a,
			const struct loom_item_id *b)
{
	if (a->occurrence != b->occurrence || a->ordinal != b->ordinal ||
	    node_hash(a->parent) != node_hash(b->parent))
		return false;
	return loom_item_id_compare(a, b) == 0;
}

static size_t decimal_length(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * Writes text right to left (paths are only walkable leaf to root), keeping
 * only the characters that fit, as snprintf would.
 */
struct back_writer {
	char *buf;
	size_t limit;		/* characters at or past this are dropped */
	size_t pos;		/* the next character goes at pos - 1 */
};

static void back_put(struct back_writer *w, char c)
{
	w->pos--;
	if (w->pos < w->limit)
		w->buf[w->pos] = c;
}

static void back_put_u64(struct back_writer *w, uint64_t v)
{
	do {
		back_put(w, (char)('0' + v % 10));
		v /= 10;
	} while (v);
}

static void back_put_str(struct back_writer *w, const char *s)
{
	for (size_t i = strlen(s); i-- > 0;)
		back_put(w, s[i]);
}

/* The ordinals after "root", leaf first: the root's own 0 is not printed. */
static size_t format_length(const struct loom_item_id *id)
{
	size_t len = decimal_length(id->occurrence) + strlen(":root");
	const struct loom_item_node *n;

	if (!id->parent)
		return len;
	len += 1 + decimal_length(id->ordinal);
	for (n = id->parent; n->parent; n = n->parent)
		len += 1 + decimal_length(n->ordinal);
	return len;
}

size_t loom_item_id_format(const struct loom_item_id *id, char *buf,
			   size_t size)
{
	size_t len = format_length(id);
	struct back_writer w = { buf, size ? size - 1 : 0, len };
	const struct loom_item_node *n;

	if (id->parent) {
		back_put_u64(&w, id->ordinal);
		back_put(&w, '/');
		for (n = id->parent; n->parent; n = n->parent) {
			back_put_u64(&w, n->ordinal);
			back_put(&w, '/');
		}
	}
	back_put_str(&w, ":root");
	back_put_u64(&w, id->occurrence);
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}

/* ------------------------------------------------------------ records --- */

/* More records than the directory holds: refuse before trying to allocate. */
#define MAX_CHUNKS	((uint64_t)LOOM_WORK_DIR_ENTRIES << LOOM_WORK_DIR_SHIFT)
#define MAX_RECORDS	(MAX_CHUNKS << LOOM_WORK_CHUNK_SHIFT)

/*
 * The chunk pool: chunks of dead domains, kept (up to POOL_MAX_BYTES) so
 * that the next domain writes its records into memory that is already
 * mapped instead of taking page faults.  Used once per
 * LOOM_WORK_CHUNK_RECORDS records, so one mutex is enough.
 */
#define POOL_MAX_BYTES	(256u << 20)

static struct {
	pthread_mutex_t lock;
	struct loom_work_chunk *plain, *traced;
	size_t bytes;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A chunk's mapping: its records, then, if traced, their slots. */
static size_t chunk_bytes(bool traced)
{
	return LOOM_WORK_RECORDS_BYTES * (traced ? 2 : 1);
}

void *loom_lines_alloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size && n > (SIZE_MAX - LOOM_CACHE_LINE) / size)
		return NULL;
	bytes = (n * size + LOOM_CACHE_LINE - 1) & ~(size_t)(LOOM_CACHE_LINE - 1);
	p = aligned_alloc(LOOM_CACHE_LINE, bytes ? bytes : LOOM_CACHE_LINE);
	if (p)
		memset(p, 0, bytes);
	return p;
}

/*
 * @bytes (a multiple of 2 MiB) of zeroed memory, 2 MiB aligned and marked
 * for transparent huge pages: a first touch costs one fault per 2 MiB, not
 * one per 4 KiB (64 records).
 */
void *loom_huge_alloc(size_t bytes)
{
	size_t span = bytes + LOOM_HUGE_PAGE;
	char *p = mmap(NULL, span, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t start, end;

	if (p == MAP_FAILED)
		return NULL;
	start = ((uintptr_t)p + LOOM_HUGE_PAGE - 1) & ~(uintptr_t)(LOOM_HUGE_PAGE - 1);
	end = start + bytes;
	if (start > (uintptr_t)p)
		munmap(p, start - (uintptr_t)p);
	if ((uintptr_t)p + span > end)
		munmap((void *)end, (uintptr_t)p + span - end);
	madvise((void *)start, bytes, MADV_HUGEPAGE);	/* advice only */
	return (void *)start;
}

static void chunk_free(struct loom_work_chunk *chunk)
{
	munmap(chunk->records, chunk_bytes(chunk->traced));
	free(chunk);
}

static void pool_put(struct loom_work_chunk *chunk)
{
	bool traced = chunk->traced;
	size_t bytes = chunk_bytes(traced);

	pthread_mutex_lock(&pool.lock);
	if (pool.bytes + bytes <= POOL_MAX_BYTES) {
		struct loom_work_chunk **head = traced ? &pool.traced : &pool.plain;

		chunk->next = *head;
		*head = chunk;
		pool.bytes += bytes;
		chunk = NULL;
	}
	pthread_mutex_unlock(&pool.lock);
	if (chunk)
		chunk_free(chunk);
}

/* A chunk whose every record reads unissued. */
static struct loom_work_chunk *chunk_get(bool traced)
{
	struct loom_work_chunk *chunk;

	pthread_mutex_lock(&pool.lock);
	chunk = traced ? pool.traced : pool.plain;
	if (chunk) {
		*(traced ? &pool.traced : &pool.plain) = chunk->next;
		pool.bytes -= chunk_bytes(traced);
	}
	pthread_mutex_unlock(&pool.lock);
	if (chunk) {
		/*
		 * Its records read unissued under the next generation, so
		 * they are cleared only when the generations wrap.  Trace
		 * slots carry no generation: issue_record() clears a
		 * record's, and no one reads those of an unissued record.
		 */
		if (++chunk->gen > LOOM_REC_GEN_MAX) {
			memset(chunk->records, 0, LOOM_WORK_RECORDS_BYTES);
			chunk->gen = 1;
		}
		return chunk;
	}
	chunk = calloc(1, sizeof(*chunk));
	if (!chunk)
		return NULL;
	/* Fresh anonymous memory reads zero: unissued, empty. */
	chunk->gen = 1;
	chunk->records = loom_huge_alloc(chunk_bytes(traced));
	if (!chunk->records) {
		free(chunk);
		return NULL;
	}
	chunk->traced = traced;
	return chunk;
}

static struct loom_work_chunk *
chunk_at(const struct loom_work_domain *domain, uint64_t k)
{
	return loom_work_chunk_at(domain, k);
}

/*
 * Installs chunk @k if nobody has: whoever first needs it allocates it and
 * the losers of the race give theirs back.  Lock-free.
 */
static enum loom_error ensure_chunk(struct loom_work_domain *domain,
				    uint64_t k)
{
	_Atomic(struct loom_work_chunk *) *leaf, *fresh_leaf;
	struct loom_work_chunk *chunk, *none = NULL;
	_Atomic(struct loom_work_chunk *) *no_leaf = NULL;
	size_t top = k >> LOOM_WORK_DIR_SHIFT;

	if (chunk_at(domain, k))
		return LOOM_OK;
	leaf = atomic_load_explicit(&domain->dir[top], memory_order_acquire);
	if (!leaf) {
		fresh_leaf = calloc(LOOM_WORK_DIR_ENTRIES, sizeof(*fresh_leaf));
		if (!fresh_leaf)
			return LOOM_WORK_OUT_OF_MEMORY;
		if (atomic_compare_exchange_strong_explicit(
			    &domain->dir[top], &no_leaf, fresh_leaf,
			    memory_order_acq_rel, memory_order_acquire)) {
			leaf = fresh_leaf;
		} else {
			free(fresh_leaf);
			leaf = no_leaf;
		}
	}
	chunk = chunk_get(domain->tracing);
	if (!chunk)
		return LOOM_WORK_OUT_OF_MEMORY;
	if (!atomic_compare_exchange_strong_explicit(
		    &leaf[k & (LOOM_WORK_DIR_ENTRIES - 1)], &none, chunk,
		    memory_order_acq_rel, memory_order_acquire))
		pool_put(chunk);
	return LOOM_OK;
}

/*
 * Makes the records of serials @first .. @last exist (unissued).  Those
 * before @first exist already: whoever reserved them made them first.
 */
static enum loom_error ensure_records(struct loom_work_domain *domain,
				      uint64_t first, uint64_t last)
{
	uint64_t k_last = (last - 1) >> LOOM_WORK_CHUNK_SHIFT;
	enum loom_error err;

	for (uint64_t k = (first - 1) >> LOOM_WORK_CHUNK_SHIFT; k <= k_last; k++) {
		err = ensure_chunk(domain, k);
		if (err)
			return err;
	}
	return LOOM_OK;
}

struct loom_work_record *
loom_work_record(const struct loom_work_domain *domain, uint64_t serial)
{
	struct loom_work_chunk *chunk;
	struct loom_work_record *rec;

	if (serial == 0)
		return NULL;
	chunk = loom_work_chunk_of(domain, serial);
	if (!chunk)
		return NULL;
	rec = loom_work_chunk_record(chunk, serial);
	/* Acquire: the identity written before the record was issued. */
	if (!loom_work_issued(chunk, atomic_load_explicit(&rec->state,
							  memory_order_acquire)))
		return NULL;
	return rec;
}

/* Empties a record's trace slots: a reused chunk's hold an old domain's. */
static void clear_slots(struct loom_trace_slot_rec *slots)
{
	for (int i = 0; i < LOOM_TRACE_SLOTS; i++)
		atomic_store_explicit(&slots[i].seq_kind, 0,
				      memory_order_relaxed);
}

/*
 * Issues the reserved record of @serial, in @chunk.  Inline: it is most of
 * a publication's work per child.
 */
static inline __attribute__((always_inline)) struct loom_work_record *
issue_record(struct loom_work_chunk *chunk, uint64_t serial,
	     const struct loom_item_node *parent, uint64_t ordinal,
	     uint64_t payload)
{
	struct loom_work_record *rec = loom_work_chunk_record(chunk, serial);

	rec->node.parent = parent;
	rec->node.ordinal = ordinal;
	rec->node.depth = parent ? parent->depth + 1 : 0;
	atomic_store_explicit(&rec->node.hash, 0, memory_order_relaxed);
	rec->next_ordinal = 0;
	rec->payload = payload;
	rec->serial = serial;
	if (chunk->traced)
		clear_slots(loom_work_slots(rec));
	/* Release: a reader that sees it issued sees the identity. */
	atomic_store_explicit(&rec->state,
			      chunk->gen << LOOM_REC_GEN_SHIFT | LOOM_REC_ISSUED,
			      memory_order_release);
	return rec;
}

/* ------------------------------------------------------ transactions --- */

enum loom_error loom_work_check_live(const struct loom_work_domain *domain,
				     struct loom_work_resp resp,
				     enum loom_error if_retired,
				     struct loom_work_record **out)
{
	struct loom_work_record *rec;

	if (resp.serial == 0)
		return LOOM_WORK_RESP_INVALID;
	if (resp.domain_key != domain->key)
		return LOOM_WORK_FOREIGN_DOMAIN;
	rec = loom_work_record(domain, resp.serial);
	if (!rec)
		return LOOM_WORK_RESP_INVALID;
	if (atomic_load_explicit(&rec->state, memory_order_relaxed) &
	    LOOM_REC_RETIRED)
		return if_retired;
	*out = rec;
	return LOOM_OK;
}

enum loom_error loom_work_admit_locked(struct loom_work_domain *domain,
				       uint64_t payload,
				       struct loom_work_record **rec)
{
	enum loom_error err;

	if (atomic_load_explicit(&domain->root_admitted, memory_order_relaxed))
		return LOOM_WORK_ROOT_CLOSED;
	err = ensure_records(domain, 1, 1);
	if (err)
		return err;
	/* Acquire the root's responsibility, then close the source. */
	atomic_store_explicit(&domain->reserved, 1, memory_order_release);
	atomic_store_explicit(&domain->lanes[loom_work_shared_lane(domain)].acquired,
			      1, memory_order_seq_cst);
	*rec = issue_record(loom_work_chunk_of(domain, 1), 1, NULL, 0, payload);
	atomic_store_explicit(&domain->root_admitted, true, memory_order_seq_cst);
	return LOOM_OK;
}

/* Whether @rec can still give @count (>= 1) ordinals from its next one. */
static bool ordinals_cover(const struct loom_work_record *rec, uint64_t count)
{
	return !(atomic_load_explicit(&rec->state, memory_order_relaxed) &
		 LOOM_REC_EXHAUSTED) &&
	       count - 1 <= UINT64_MAX - rec->next_ordinal;
}

/*
 * Reserves a block of @want (or at least @count) serials for @lane, with
 * their records in place: the records exist before the serials are taken,
 * so a failure takes none.  What was left of the lane's block is never
 * issued.
 */
static enum loom_error reserve_block(struct loom_work_domain *domain,
				     struct loom_work_lane *lane,
				     uint64_t count, uint64_t want)
{
	uint64_t cur = atomic_load_explicit(&domain->reserved,
					    memory_order_relaxed);
	enum loom_error err;

	do {
		if (count > MAX_RECORDS - cur)
			return LOOM_WORK_OUT_OF_MEMORY;
		if (want > MAX_RECORDS - cur)
			want = count;
		err = ensure_records(domain, cur + 1, cur + want);
		if (err)
			return err;
		/* Release: whoever reads reserved finds the chunks. */
	} while (!atomic_compare_exchange_weak_explicit(&domain->reserved, &cur,
							cur + want,
							memory_order_release,
							memory_order_relaxed));
	lane->next = cur + 1;
	lane->end = cur + 1 + want;
	return LOOM_OK;
}

/*
 * Serials *@first .. + @count - 1 from @lane's block, counted as acquired
 * in @lane (release: before the caller can make any of them visible).  The
 * shared lane reserves exactly what it issues, under the domain's mutex:
 * the kernel API's serials stay consecutive.
 */
static enum loom_error acquire_serials(struct loom_work_domain *domain,
				       uint32_t lane, uint64_t count,
				       uint64_t *first)
{
	struct loom_work_lane *l = &domain->lanes[lane];
	uint64_t want = count;
	enum loom_error err;

	if (lane != loom_work_shared_lane(domain) &&
	    want < LOOM_WORK_LANE_SERIALS)
		want = LOOM_WORK_LANE_SERIALS;
	if (count > l->end - l->next) {
		err = reserve_block(domain, l, count, want);
		if (err)
			return err;
	}
	*first = l->next;
	l->next += count;
	loom_work_lane_add(&l->acquired, count);
	return LOOM_OK;
}

enum loom_error loom_work_spawn_held(struct loom_work_domain *domain,
				     uint32_t lane,
				     struct loom_work_record *parent,
				     size_t count, const uint64_t *payloads,
				     uint64_t *first)
{
	struct loom_work_chunk *chunk = NULL;
	enum loom_error err;
	uint64_t last;

	if (!ordinals_cover(parent, count))
		return LOOM_WORK_ORDINALS_EXHAUSTED;
	err = acquire_serials(domain, lane, count, first);
	if (err)
		return err;
	/* Nothing can fail from here: the group is all or nothing. */
	for (size_t i = 0; i < count; i++) {
		chunk = loom_work_chunk_after(domain, chunk, *first + i);
		issue_record(chunk, *first + i, &parent->node,
			     parent->next_ordinal + i, payloads ? payloads[i] : 0);
	}
	last = parent->next_ordinal + (count - 1);
	if (last == UINT64_MAX)
		atomic_fetch_or_explicit(&parent->state, LOOM_REC_EXHAUSTED,
					 memory_order_relaxed);
	else
		parent->next_ordinal = last + 1;
	return LOOM_OK;
}

/*
 * Retired, then acquired: never zero while a responsibility is live (see
 * the top).
 */
static uint64_t active_now(const struct loom_work_domain *domain)
{
	uint64_t retired = 0, acquired = 0;

	for (uint32_t i = 0; i < domain->nlanes; i++)
		retired += atomic_load_explicit(&domain->lanes[i].retired,
						memory_order_seq_cst);
	for (uint32_t i = 0; i < domain->nlanes; i++)
		acquired += atomic_load_explicit(&domain->lanes[i].acquired,
						 memory_order_seq_cst);
	return acquired - retired;
}

uint64_t loom_work_active_now(const struct loom_work_domain *domain)
{
	return active_now(domain);
}

bool loom_work_try_complete(struct loom_work_domain *domain)
{
	if (!atomic_load_explicit(&domain->root_admitted, memory_order_seq_cst) ||
	    atomic_load_explicit(&domain->completed, memory_order_relaxed) ||
	    active_now(domain))
		return false;
	return !atomic_exchange_explicit(&domain->completed, true,
					 memory_order_seq_cst);
}

enum loom_error
loom_work_set_next_ordinal_for_test(struct loom_work_domain *domain,
				    struct loom_work_resp parent, uint64_t next)
{
	struct loom_work_record *rec;
	enum loom_error err;

	loom_work_lock(domain);
	err = loom_work_check_live(domain, parent, LOOM_WORK_PARENT_RETIRED,
				   &rec);
	if (!err) {
		rec->next_ordinal = next;
		atomic_fetch_and_explicit(&rec->state, ~LOOM_REC_EXHAUSTED,
					  memory_order_relaxed);
	}
	loom_work_unlock(domain);
	return err;
}

/* ------------------------------------------------------------- domain --- */

/* Keys only need to differ; no other memory is ordered by them. */
static atomic_uint_fast64_t next_domain_key = 1;

enum loom_error loom_work_domain_create_lanes(uint64_t occurrence,
					      uint32_t workers, bool tracing,
					      struct loom_work_domain **out)
{
	struct loom_work_domain *domain;

	enum loom_error err;

	if (!out || workers == UINT32_MAX)
		return LOOM_WORK_INVALID_ARGUMENT;
	/* Minted first: a domain that cannot be named is not made. */
	if (!occurrence && (err = loom_occurrence_mint(&occurrence)))
		return err;
	domain = aligned_alloc(LOOM_CACHE_LINE, sizeof(*domain));
	if (!domain)
		return LOOM_WORK_OUT_OF_MEMORY;
	memset(domain, 0, sizeof(*domain));
	domain->nlanes = workers + 1;
	domain->lanes = aligned_alloc(LOOM_CACHE_LINE,
				      domain->nlanes * sizeof(*domain->lanes));
	if (!domain->lanes || pthread_mutex_init(&domain->lock, NULL)) {
		free(domain->lanes);
		free(domain);
		return LOOM_WORK_OUT_OF_MEMORY;
	}
	for (uint32_t i = 0; i < domain->nlanes; i++) {
		atomic_init(&domain->lanes[i].retired, 0);
		atomic_init(&domain->lanes[i].acquired, 0);
		domain->lanes[i].next = domain->lanes[i].end = 0;
	}
	atomic_init(&domain->refs, 1);
	domain->key = atomic_fetch_add_explicit(&next_domain_key, 1,
						memory_order_relaxed);
	domain->occurrence = occurrence;
	domain->tracing = tracing;
	*out = domain;
	return LOOM_OK;
}

enum loom_error loom_work_domain_create(struct loom_work_domain **out)
{
	return loom_work_domain_create_lanes(0, 0, false, out);
}

enum loom_error
loom_work_domain_create_with_occurrence(uint64_t occurrence,
					struct loom_work_domain **out)
{
	if (!occurrence)
		return LOOM_WORK_INVALID_ARGUMENT;
	return loom_work_domain_create_lanes(occurrence, 0, false, out);
}

void loom_work_domain_get(struct loom_work_domain *domain)
{
	/* The caller already holds a reference: nothing to order against. */
	atomic_fetch_add_explicit(&domain->refs, 1, memory_order_relaxed);
}

static void free_chunks(struct loom_work_domain *domain)
{
	for (size_t top = 0; top < LOOM_WORK_DIR_ENTRIES; top++) {
		_Atomic(struct loom_work_chunk *) *leaf = domain->dir[top];

		if (!leaf)
			break;	/* chunks are installed in order, mostly */
		for (size_t i = 0; i < LOOM_WORK_DIR_ENTRIES; i++)
			if (leaf[i])
				pool_put(leaf[i]);
		free(leaf);
	}
}

void loom_work_domain_put(struct loom_work_domain *domain)
{
	/*
	 * acq_rel: every holder's earlier accesses happen before the last
	 * holder frees the storage.
	 */
	if (atomic_fetch_sub_explicit(&domain->refs, 1, memory_order_acq_rel) != 1)
		return;
	free_chunks(domain);
	free(domain->lanes);
	pthread_mutex_destroy(&domain->lock);
	free(domain);
}

void loom_work_domain_destroy(struct loom_work_domain *domain)
{
	if (domain)
		loom_work_domain_put(domain);
}

uint64_t loom_work_domain_occurrence(const struct loom_work_domain *domain)
{
	return domain->occurrence;
}

enum loom_work_status loom_work_domain_status(const struct loom_work_domain *domain)
{
	if (!atomic_load_explicit(&domain->root_admitted, memory_order_acquire))
		return LOOM_WORK_AWAITING_ROOT;
	if (atomic_load_explicit(&domain->completed, memory_order_acquire))
		return LOOM_WORK_COMPLETED;
	/* A zero is final (see the top of this file). */
	return active_now(domain) ? LOOM_WORK_ACTIVE : LOOM_WORK_COMPLETED;
}

uint64_t loom_work_active_count(const struct loom_work_domain *domain)
{
	return active_now(domain);
}

/* ---------------------------------------------------- public kernel --- */

enum loom_error loom_work_admit(struct loom_work_domain *domain,
				struct loom_work_resp *root,
				struct loom_item_id *root_id)
{
	struct loom_work_record *rec;
	enum loom_error err;

	if (!domain || !root)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = loom_work_admit_locked(domain, 0, &rec);
	if (!err) {
		*root = loom_work_resp_of(domain, rec->serial);
		if (root_id)
			*root_id = loom_work_id_of(domain, rec);
	}
	loom_work_unlock(domain);
	return err;
}

enum loom_error loom_work_spawn_group(struct loom_work_domain *domain,
				      struct loom_work_resp parent,
				      size_t count,
				      struct loom_work_resp *children,
				      struct loom_item_id *child_ids)
{
	struct loom_work_record *rec;
	enum loom_error err;
	uint64_t first;

	if (!domain)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = loom_work_check_live(domain, parent, LOOM_WORK_PARENT_RETIRED,
				   &rec);
	if (!err && count)
		err = loom_work_spawn_held(domain, loom_work_shared_lane(domain),
					   rec, count, NULL, &first);
	for (size_t i = 0; !err && i < count; i++) {
		if (children)
			children[i] = loom_work_resp_of(domain, first + i);
		if (child_ids)
			child_ids[i] = loom_work_id_of(
				domain, loom_work_record(domain, first + i));
	}
	loom_work_unlock(domain);
	return err;
}

enum loom_error loom_work_retire(struct loom_work_domain *domain,
				 struct loom_work_resp resp,
				 enum loom_work_status *status)
{
	enum loom_work_status after = LOOM_WORK_ACTIVE;
	struct loom_work_record *rec;
	enum loom_error err;

	if (!domain)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = loom_work_check_live(domain, resp, LOOM_WORK_RESP_USED, &rec);
	if (!err) {
		loom_work_retire_held(domain, rec, loom_work_shared_lane(domain));
		if (loom_work_try_complete(domain))
			after = LOOM_WORK_COMPLETED;
	}
	loom_work_unlock(domain);
	if (!err && status)
		*status = after;
	return err;
}

enum loom_error loom_work_item_id(const struct loom_work_domain *domain,
				  struct loom_work_resp resp,
				  struct loom_item_id *id)
{
	struct loom_work_record *rec;

	if (!domain || !id)
		return LOOM_WORK_INVALID_ARGUMENT;
	if (resp.serial == 0)
		return LOOM_WORK_RESP_INVALID;
	if (resp.domain_key != domain->key)
		return LOOM_WORK_FOREIGN_DOMAIN;
	/* Issued records are immutable identities: no lock needed. */
	rec = loom_work_record(domain, resp.serial);
	if (!rec)
		return LOOM_WORK_RESP_INVALID;
	*id = loom_work_id_of(domain, rec);
	return LOOM_OK;
}
