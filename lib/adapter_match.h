/* SPDX-License-Identifier: MIT */
/*
 * DOC: matching a work-stack report (adapter_match.c)
 *
 * A RUN_WORK packet ran a batch and the children of what it ran, depth
 * first, and reported one record per item it ran (parent record, ordinal,
 * payload, child count) and the entries left on its stack.  Matching it
 * is pure: no device, no scheduler, no I/O -- a batch, the records and
 * the stack in, the scheduler's steps (one per record) and the carry's
 * held indices out, so host tests feed it what the engine writes.
 *
 * Every child of every record is a slot; a slot is claimed exactly once,
 * by the record that ran it or by the stack entry that still holds it.  A
 * report in which that fails does not tile, and is -EIO: a broken or
 * hostile device can make a run fail, never publish an item twice or
 * lose one.
 *
 * Not installed; the names are global in libloom.a, hence the prefix.
 */
#ifndef LOOM_ADAPTER_MATCH_H
#define LOOM_ADAPTER_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "loom_device.h"
#include "sched_internal.h"

/* struct loom_work_match.claim: who claims a slot. */
#define LOOM_CLAIM_NONE		0u		/* else record + 1 */
#define LOOM_CLAIM_LEFT		0xffffffffu	/* a stack entry */
#define LOOM_CLAIM_CARRY	0xfffffffeu	/* the packet run ahead */
/* A carry entry naming batch item i, not a slot: LOOM_CARRY_BATCH | i. */
#define LOOM_CARRY_BATCH	0x80000000u

/* One packet's report, copied out of device memory once. */
struct loom_work_report {
	const struct loom_hw_work_record *recs;
	uint32_t nrec;			/* records written */
	const struct loom_hw_work_entry *left;
	uint32_t n_left;		/* entries left on the stack */
	bool top;			/* the top entry is the failing item */
};

/*
 * The matcher's room, sized once by its owner: @base and @steps per
 * record, the others per slot (@max_slots of them).
 */
struct loom_work_match {
	uint32_t child_capacity;	/* the thread's: more is -EIO */
	uint64_t max_slots;
	uint32_t *base;			/* per record: its first slot */
	uint32_t *claim;		/* per slot: LOOM_CLAIM_* or record + 1 */
	uint64_t *slot_payload;
	bool *slot_taken;		/* the worker takes it: it ran, or runs next */
	uint32_t *slot_held;		/* if taken: its held index */
	struct loom_sched_step *steps;	/* per record */
};

/* The slot of child @ordinal of record @parent (matched). */
static inline uint32_t loom_work_slot(const struct loom_work_match *m,
				      uint32_t parent, uint32_t ordinal)
{
	return m->base[parent] + ordinal;
}

/*
 * Matches @r against a batch of @n_batch items, @unrun[i] true for those
 * not run before this packet: every child of every record with the record
 * or the stack entry that claims it, each exactly once, every batch entry
 * with an item not run yet.  Clears @unrun[i] for the batch items the
 * records ran.  0, or -EIO for a report that does not tile (then @unrun
 * may have lost some marks: the run fails anyway).
 */
int loom_work_match(struct loom_work_match *m,
		    const struct loom_work_report *r, uint32_t n_batch,
		    bool *unrun);

/*
 * After loom_work_match(): the commit's steps, one per record of @r, in
 * m->steps: each record's held item (batch item i is held index i; the
 * children the worker takes follow, in publication order), its children
 * and which of them it takes -- those that ran, the failing top entry's
 * and the @n_carry the packet run ahead got (@carry[j]: a slot, or
 * LOOM_CARRY_BATCH | batch index), whose held indices go to @carry_held.
 * Returns the held index of the item the report's top entry failed on,
 * or UINT32_MAX.
 */
uint32_t loom_work_steps(struct loom_work_match *m,
			 const struct loom_work_report *r, uint32_t n_batch,
			 const uint32_t *carry, uint32_t n_carry,
			 uint32_t *carry_held);

/* The first of @n_batch items still @unrun (or 0): named when nothing better is known. */
uint32_t loom_work_first_unrun(const bool *unrun, uint32_t n_batch);

#endif /* LOOM_ADAPTER_MATCH_H */
