// SPDX-License-Identifier: MIT
/*
 * work.c: the responsibility kernel of a DynamicWork domain and the
 * identity of its items.
 *
 * The active responsibility set is the set of records not yet retired;
 * domain->active counts it and is only a cache.  Every responsibility is a
 * record that is never freed before the domain, so a used or foreign handle
 * is always recognised, and every identity's parent pointer stays valid.
 */
#include <stdlib.h>
#include <string.h>

#include "work_internal.h"

/* ------------------------------------------------------------- errors --- */

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

static uint64_t parent_hash(const struct loom_item_node *parent)
{
	return parent ? parent->hash : ROOT_PARENT_HASH;
}

uint64_t loom_item_id_hash(const struct loom_item_id *id)
{
	return hash_step(hash_step(parent_hash(id->parent), id->ordinal),
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
	    parent_hash(a->parent) != parent_hash(b->parent))
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

/* More records than any memory holds: refuse before trying to allocate. */
#define MAX_RECORDS	(1ULL << 48)

struct loom_work_record *
loom_work_record_locked(const struct loom_work_domain *domain, uint64_t serial)
{
	uint64_t index = serial - 1;

	return &domain->chunks[index >> LOOM_WORK_CHUNK_SHIFT]
			      [index & (LOOM_WORK_CHUNK_RECORDS - 1)];
}

static enum loom_error grow_chunk_table(struct loom_work_domain *domain,
					     size_t needed)
{
	size_t cap = domain->chunks_cap ? domain->chunks_cap : 16;
	struct loom_work_record **chunks;

	while (cap < needed)
		cap *= 2;
	chunks = realloc(domain->chunks, cap * sizeof(*chunks));
	if (!chunks)
		return LOOM_WORK_OUT_OF_MEMORY;
	domain->chunks = chunks;
	domain->chunks_cap = cap;
	return LOOM_WORK_OK;
}

/*
 * Makes room for @count more records without issuing any, so a spawn can
 * fail for memory before it changes anything.
 */
static enum loom_error reserve_records(struct loom_work_domain *domain,
					    uint64_t count)
{
	uint64_t last, needed;
	enum loom_error err;

	if (count > MAX_RECORDS - domain->issued)
		return LOOM_WORK_OUT_OF_MEMORY;
	last = domain->issued + count;
	needed = last ? ((last - 1) >> LOOM_WORK_CHUNK_SHIFT) + 1 : 0;
	if (needed > domain->chunks_cap) {
		err = grow_chunk_table(domain, needed);
		if (err)
			return err;
	}
	while (domain->nchunks < needed) {
		struct loom_work_record *chunk;

		chunk = malloc(LOOM_WORK_CHUNK_RECORDS * sizeof(*chunk));
		if (!chunk)
			return LOOM_WORK_OUT_OF_MEMORY;
		domain->chunks[domain->nchunks++] = chunk;
	}
	return LOOM_WORK_OK;
}

/* Issues the next record; room for it was reserved. */
static void issue_record(struct loom_work_domain *domain,
			 const struct loom_item_node *parent, uint64_t ordinal)
{
	struct loom_work_record *rec;

	domain->issued++;
	rec = loom_work_record_locked(domain, domain->issued);
	rec->node.parent = parent;
	rec->node.ordinal = ordinal;
	rec->node.depth = parent ? parent->depth + 1 : 0;
	rec->node.hash = hash_step(parent_hash(parent), ordinal);
	rec->next_ordinal = 0;
	rec->ordinals_exhausted = false;
	rec->retired = false;
	domain->active++;
}

struct loom_item_id loom_work_id_locked(const struct loom_work_domain *domain,
					uint64_t serial)
{
	const struct loom_work_record *rec = loom_work_record_locked(domain, serial);

	return (struct loom_item_id){ domain->occurrence, rec->node.parent,
				      rec->node.ordinal };
}

/* ------------------------------------------------------ transactions --- */

static enum loom_error check_issued(const struct loom_work_domain *domain,
					 struct loom_work_resp resp)
{
	if (resp.serial == 0)
		return LOOM_WORK_RESP_INVALID;
	if (resp.domain_key != domain->key)
		return LOOM_WORK_FOREIGN_DOMAIN;
	if (resp.serial > domain->issued)
		return LOOM_WORK_RESP_INVALID;
	return LOOM_WORK_OK;
}

enum loom_error
loom_work_check_live_locked(const struct loom_work_domain *domain,
			    struct loom_work_resp resp,
			    enum loom_error if_retired)
{
	enum loom_error err = check_issued(domain, resp);

	if (err)
		return err;
	if (loom_work_record_locked(domain, resp.serial)->retired)
		return if_retired;
	return LOOM_WORK_OK;
}

enum loom_error loom_work_admit_locked(struct loom_work_domain *domain,
					    uint64_t *serial)
{
	enum loom_error err;

	if (domain->root_admitted)
		return LOOM_WORK_ROOT_CLOSED;
	err = reserve_records(domain, 1);
	if (err)
		return err;
	/* Acquire the root's responsibility and close the source together. */
	issue_record(domain, NULL, 0);
	domain->root_admitted = true;
	*serial = domain->issued;
	return LOOM_WORK_OK;
}

/* Whether @rec can still give @count (>= 1) ordinals from its next one. */
static bool ordinals_cover(const struct loom_work_record *rec, uint64_t count)
{
	return !rec->ordinals_exhausted &&
	       count - 1 <= UINT64_MAX - rec->next_ordinal;
}

enum loom_error loom_work_spawn_locked(struct loom_work_domain *domain,
					    struct loom_work_resp parent,
					    size_t count, uint64_t *first)
{
	struct loom_work_record *rec;
	enum loom_error err;
	uint64_t last;

	err = loom_work_check_live_locked(domain, parent,
					  LOOM_WORK_PARENT_RETIRED);
	if (err)
		return err;
	*first = domain->issued + 1;
	if (count == 0)
		return LOOM_WORK_OK;
	rec = loom_work_record_locked(domain, parent.serial);
	if (!ordinals_cover(rec, count))
		return LOOM_WORK_ORDINALS_EXHAUSTED;
	err = reserve_records(domain, count);
	if (err)
		return err;
	/* Nothing can fail from here: the group is all or nothing. */
	for (size_t i = 0; i < count; i++)
		issue_record(domain, &rec->node, rec->next_ordinal + i);
	last = rec->next_ordinal + (count - 1);
	if (last == UINT64_MAX)
		rec->ordinals_exhausted = true;
	else
		rec->next_ordinal = last + 1;
	return LOOM_WORK_OK;
}

enum loom_work_status loom_work_retire_locked(struct loom_work_domain *domain,
					      uint64_t serial)
{
	loom_work_record_locked(domain, serial)->retired = true;
	domain->active--;
	/*
	 * The root source closed at admission, so an empty set is final: no
	 * live parent remains to spawn from.  Only this retirement sees it.
	 */
	return domain->active ? LOOM_WORK_ACTIVE : LOOM_WORK_COMPLETED;
}

enum loom_error
loom_work_set_next_ordinal_for_test(struct loom_work_domain *domain,
				    struct loom_work_resp parent, uint64_t next)
{
	enum loom_error err;

	loom_work_lock(domain);
	err = loom_work_check_live_locked(domain, parent,
					  LOOM_WORK_PARENT_RETIRED);
	if (!err) {
		struct loom_work_record *rec;

		rec = loom_work_record_locked(domain, parent.serial);
		rec->next_ordinal = next;
		rec->ordinals_exhausted = false;
	}
	loom_work_unlock(domain);
	return err;
}

/* ------------------------------------------------------------- domain --- */

/* Keys only need to differ; no other memory is ordered by them. */
static atomic_uint_fast64_t next_domain_key = 1;

/*
 * Every acquire, publish and complete of every worker takes the domain's
 * one lock for a short while: spinning a little before sleeping keeps two
 * workers from trading futex sleeps and wake-ups on each item (P4 in
 * Documentation/benchmarks.rst: 1.6x the two-worker rate).
 */
static int init_lock(pthread_mutex_t *lock)
{
	pthread_mutexattr_t attr;
	int ret;

	if (pthread_mutexattr_init(&attr))
		return -1;
#ifdef __GLIBC__	/* the spinning type is a glibc extension */
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	ret = pthread_mutex_init(lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return ret;
}

enum loom_error loom_work_domain_create(uint64_t occurrence,
					     struct loom_work_domain **out)
{
	struct loom_work_domain *domain;

	if (!out)
		return LOOM_WORK_INVALID_ARGUMENT;
	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return LOOM_WORK_OUT_OF_MEMORY;
	if (init_lock(&domain->lock)) {
		free(domain);
		return LOOM_WORK_OUT_OF_MEMORY;
	}
	atomic_init(&domain->refs, 1);
	domain->key = atomic_fetch_add_explicit(&next_domain_key, 1,
						memory_order_relaxed);
	domain->occurrence = occurrence;
	*out = domain;
	return LOOM_WORK_OK;
}

void loom_work_domain_get(struct loom_work_domain *domain)
{
	/* The caller already holds a reference: nothing to order against. */
	atomic_fetch_add_explicit(&domain->refs, 1, memory_order_relaxed);
}

void loom_work_domain_put(struct loom_work_domain *domain)
{
	/*
	 * acq_rel: every holder's earlier accesses happen before the last
	 * holder frees the storage.
	 */
	if (atomic_fetch_sub_explicit(&domain->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < domain->nchunks; i++)
		free(domain->chunks[i]);
	free(domain->chunks);
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
	enum loom_work_status status;

	loom_work_lock(domain);
	if (!domain->root_admitted)
		status = LOOM_WORK_AWAITING_ROOT;
	else
		status = domain->active ? LOOM_WORK_ACTIVE : LOOM_WORK_COMPLETED;
	loom_work_unlock(domain);
	return status;
}

uint64_t loom_work_active_count(const struct loom_work_domain *domain)
{
	uint64_t active;

	loom_work_lock(domain);
	active = domain->active;
	loom_work_unlock(domain);
	return active;
}

/* ---------------------------------------------------- public kernel --- */

enum loom_error loom_work_admit(struct loom_work_domain *domain,
				     struct loom_work_resp *root,
				     struct loom_item_id *root_id)
{
	enum loom_error err;
	uint64_t serial;

	if (!domain || !root)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = loom_work_admit_locked(domain, &serial);
	if (!err) {
		*root = loom_work_resp_of(domain, serial);
		if (root_id)
			*root_id = loom_work_id_locked(domain, serial);
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
	enum loom_error err;
	uint64_t first;

	if (!domain)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = loom_work_spawn_locked(domain, parent, count, &first);
	for (size_t i = 0; !err && i < count; i++) {
		if (children)
			children[i] = loom_work_resp_of(domain, first + i);
		if (child_ids)
			child_ids[i] = loom_work_id_locked(domain, first + i);
	}
	loom_work_unlock(domain);
	return err;
}

enum loom_error loom_work_retire(struct loom_work_domain *domain,
				      struct loom_work_resp resp,
				      enum loom_work_status *status)
{
	enum loom_work_status after = LOOM_WORK_ACTIVE;
	enum loom_error err;

	if (!domain)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = loom_work_check_live_locked(domain, resp, LOOM_WORK_RESP_USED);
	if (!err)
		after = loom_work_retire_locked(domain, resp.serial);
	loom_work_unlock(domain);
	if (!err && status)
		*status = after;
	return err;
}

enum loom_error loom_work_item_id(const struct loom_work_domain *domain,
				       struct loom_work_resp resp,
				       struct loom_item_id *id)
{
	enum loom_error err;

	if (!domain || !id)
		return LOOM_WORK_INVALID_ARGUMENT;
	loom_work_lock(domain);
	err = check_issued(domain, resp);
	if (!err)
		*id = loom_work_id_locked(domain, resp.serial);
	loom_work_unlock(domain);
	return err;
}
