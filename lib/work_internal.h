/* SPDX-License-Identifier: MIT */
/*
 * work_internal.h: what work.c shares with sched.c, adapter_sync.c and the
 * tests -- the domain's layout, its lock, and transactions that run with
 * the lock already held, so the scheduler can make "check a deque, acquire,
 * queue, record" one transaction under one mutex.
 *
 * Not installed; the names are global in libloom.a, hence the loom_ prefix.
 */
#ifndef LOOM_WORK_INTERNAL_H
#define LOOM_WORK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "loom/work.h"

/* Immutable once created; readers need no lock (see struct loom_item_id). */
struct loom_item_node {
	const struct loom_item_node *parent;	/* NULL: the root */
	uint64_t ordinal;
	uint64_t depth;
	uint64_t hash;		/* of (parent's hash, ordinal): structural */
};

/* One responsibility and the identity of the item that holds it. */
struct loom_work_record {
	struct loom_item_node node;
	uint64_t next_ordinal;		/* the ordinal its next child gets */
	bool ordinals_exhausted;	/* ordinal UINT64_MAX was used */
	bool retired;
};

#define LOOM_WORK_CHUNK_SHIFT	12
#define LOOM_WORK_CHUNK_RECORDS	(1u << LOOM_WORK_CHUNK_SHIFT)

struct loom_work_domain {
	/* Serialises every transaction, and the scheduler's state with them. */
	pthread_mutex_t lock;
	/*
	 * The creator's reference plus one per scheduler or trace that needs
	 * the identity storage.
	 */
	atomic_uint refs;
	uint64_t key;			/* struct loom_work_resp.domain_key */
	uint64_t occurrence;
	bool root_admitted;		/* the root source is closed */
	uint64_t issued;		/* records 1 .. issued exist */
	uint64_t active;		/* records not retired: a cache of the set */
	/*
	 * Record s lives at chunks[(s - 1) >> SHIFT][(s - 1) & (RECORDS - 1)];
	 * chunks never move, so node pointers stay valid.
	 */
	struct loom_work_record **chunks;
	size_t nchunks;
	size_t chunks_cap;
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

void loom_work_domain_get(struct loom_work_domain *domain);
void loom_work_domain_put(struct loom_work_domain *domain);

/* Everything below needs domain->lock held. */

/* @serial must be in 1 .. domain->issued. */
struct loom_work_record *
loom_work_record_locked(const struct loom_work_domain *domain, uint64_t serial);

struct loom_item_id loom_work_id_locked(const struct loom_work_domain *domain,
					uint64_t serial);

/*
 * LOOM_WORK_RESP_INVALID, LOOM_WORK_FOREIGN_DOMAIN, @if_retired when @resp
 * was retired, else LOOM_WORK_OK.
 */
enum loom_error
loom_work_check_live_locked(const struct loom_work_domain *domain,
			    struct loom_work_resp resp,
			    enum loom_error if_retired);

enum loom_error loom_work_admit_locked(struct loom_work_domain *domain,
					    uint64_t *serial);

/*
 * Spawns @count children of @parent (all checks included); they get serials
 * *@first .. *@first + @count - 1, in ordinal order.
 */
enum loom_error loom_work_spawn_locked(struct loom_work_domain *domain,
					    struct loom_work_resp parent,
					    size_t count, uint64_t *first);

/* @serial must be live (loom_work_check_live_locked() said so). */
enum loom_work_status loom_work_retire_locked(struct loom_work_domain *domain,
					      uint64_t serial);

/*
 * Tests only: makes @parent's next child ordinal @next, so the end of the
 * ordinal space can be reached without 2^64 spawns.
 */
enum loom_error
loom_work_set_next_ordinal_for_test(struct loom_work_domain *domain,
				    struct loom_work_resp parent, uint64_t next);

#endif /* LOOM_WORK_INTERNAL_H */
