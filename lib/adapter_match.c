// SPDX-License-Identifier: MIT
/*
 * DOC: matching a work-stack report
 *
 * The pure half of the device's work stack (adapter_work.c does the
 * packets and the commit): a packet's records and the entries it left on
 * its stack, matched against the batch, become the scheduler's steps
 * (adapter_match.h).
 */
#include <errno.h>
#include <string.h>

#include "adapter_match.h"

/*
 * Marks the slot (child @e->ordinal of record @e->parent) @who claims,
 * its payload with it; a batch entry (no parent) names an item not yet
 * run.  @limit: records a claimant may name as parent.  -EIO for a claim
 * the records do not explain.
 */
static int claim(struct loom_work_match *m, const struct loom_work_report *r,
		 const struct loom_hw_work_entry *e, uint32_t limit,
		 uint32_t who, uint32_t n_batch, const bool *unrun)
{
	uint32_t slot;

	if (e->parent == LOOM_WORK_NO_PARENT)
		return e->ordinal < n_batch && unrun[e->ordinal] ? 0 : -EIO;
	if (e->parent >= limit || e->ordinal >= r->recs[e->parent].child_count)
		return -EIO;
	slot = loom_work_slot(m, e->parent, e->ordinal);
	if (m->claim[slot])
		return -EIO;
	m->claim[slot] = who;
	m->slot_payload[slot] = e->payload;
	return 0;
}

/* Each record's first slot; -EIO for too many children. */
static int number_slots(struct loom_work_match *m,
			const struct loom_work_report *r, uint64_t *slots)
{
	*slots = 0;
	for (uint32_t i = 0; i < r->nrec; i++) {
		if (r->recs[i].child_count > m->child_capacity)
			return -EIO;
		m->base[i] = (uint32_t)*slots;
		*slots += r->recs[i].child_count;
	}
	return *slots > m->max_slots ? -EIO : 0;
}

int loom_work_match(struct loom_work_match *m,
		    const struct loom_work_report *r, uint32_t n_batch,
		    bool *unrun)
{
	uint64_t slots;
	int ret = number_slots(m, r, &slots);

	if (ret)
		return ret;
	memset(m->claim, 0, slots * sizeof(*m->claim));
	for (uint32_t i = 0; i < r->nrec && !ret; i++) {
		const struct loom_hw_work_entry *e = &r->recs[i].entry;

		ret = claim(m, r, e, i, i + 1, n_batch, unrun);
		if (!ret && e->parent == LOOM_WORK_NO_PARENT)
			unrun[e->ordinal] = false;
	}
	for (uint32_t k = 0; k < r->n_left && !ret; k++)
		ret = claim(m, r, &r->left[k], r->nrec, LOOM_CLAIM_LEFT,
			    n_batch, unrun);
	for (uint64_t k = 0; k < slots && !ret; k++)
		if (m->claim[k] == LOOM_CLAIM_NONE)
			ret = -EIO;
	return ret;
}

/* The slot of the failing top entry, UINT32_MAX if none or a batch item. */
static uint32_t failing_slot(const struct loom_work_match *m,
			     const struct loom_work_report *r)
{
	const struct loom_hw_work_entry *t;

	if (!r->top || !r->n_left)
		return UINT32_MAX;
	t = &r->left[r->n_left - 1];
	if (t->parent == LOOM_WORK_NO_PARENT)
		return UINT32_MAX;
	return loom_work_slot(m, t->parent, t->ordinal);
}

/*
 * One step per record: its held item, its children and which of them the
 * worker takes (claimed by a record or the carry, or @fail_slot).
 * Children take held indices after the batch's, in publication order.
 */
static void build_steps(struct loom_work_match *m,
			const struct loom_work_report *r, uint32_t n_batch,
			uint32_t fail_slot)
{
	uint32_t next = n_batch;

	for (uint32_t i = 0; i < r->nrec; i++) {
		const struct loom_hw_work_entry *e = &r->recs[i].entry;
		uint32_t b = m->base[i];

		for (uint32_t k = 0; k < r->recs[i].child_count; k++) {
			m->slot_taken[b + k] = m->claim[b + k] != LOOM_CLAIM_LEFT ||
					       b + k == fail_slot;
			if (m->slot_taken[b + k])
				m->slot_held[b + k] = next++;
		}
		m->steps[i] = (struct loom_sched_step){
			.held = e->parent == LOOM_WORK_NO_PARENT ? e->ordinal :
				m->slot_held[loom_work_slot(m, e->parent,
							    e->ordinal)],
			.count = r->recs[i].child_count,
			.payloads = &m->slot_payload[b],
			.taken = &m->slot_taken[b],
		};
	}
}

uint32_t loom_work_steps(struct loom_work_match *m,
			 const struct loom_work_report *r, uint32_t n_batch,
			 const uint32_t *carry, uint32_t n_carry,
			 uint32_t *carry_held)
{
	uint32_t fail_slot = failing_slot(m, r);

	for (uint32_t j = 0; j < n_carry; j++)
		if (!(carry[j] & LOOM_CARRY_BATCH))
			m->claim[carry[j]] = LOOM_CLAIM_CARRY;
	build_steps(m, r, n_batch, fail_slot);
	for (uint32_t j = 0; j < n_carry; j++)
		carry_held[j] = carry[j] & LOOM_CARRY_BATCH ?
				carry[j] & ~LOOM_CARRY_BATCH :
				m->slot_held[carry[j]];
	if (fail_slot != UINT32_MAX)
		return m->slot_held[fail_slot];
	if (r->top && r->n_left)
		return r->left[r->n_left - 1].ordinal;	/* a batch item */
	return UINT32_MAX;
}

uint32_t loom_work_first_unrun(const bool *unrun, uint32_t n_batch)
{
	for (uint32_t i = 0; i < n_batch; i++)
		if (unrun[i])
			return i;
	return 0;
}
