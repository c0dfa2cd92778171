// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RUN_WORK: the command processor as the execution-local scheduler of a
 * dynamic work domain's part on one core (uapi: struct loom_pkt_run_work).
 *
 * Items wait on a bounded stack in job memory.  The device runs the top
 * one, writes its record and puts its children where its entry was, until
 * the stack is empty or one of the packet's bounds is reached; it checks
 * the bounds before an item starts, so an item that starts always has room
 * for every child it may spawn and nothing is ever dropped.  It decides no
 * identity and no completion: records name parents by record index and
 * children by ordinal, and the host commits them.
 *
 * Items run through one call (struct loom_work_ops.run_item), so how the
 * fabric runs an item is cp.c's business alone.
 */
#include <stddef.h>
#include <stdlib.h>

#include "engine.h"

#define ENTRY_SIZE	sizeof(struct loom_hw_work_entry)
#define RECORD_SIZE	sizeof(struct loom_hw_work_record)

struct work_run {
	const struct loom_work_ops *ops;
	const struct loom_pkt_run_work *pkt;
	uint64_t *children;			/* child_capacity */
	struct loom_hw_work_entry *entries;	/* child_capacity */
	uint32_t count;		/* entries on the stack */
	uint32_t run;		/* records written */
};

#define BAD_FIELD(member) \
	(*field = offsetof(struct loom_pkt_run_work, member), \
	 LOOM_STATUS_BAD_PACKET_FIELD)

int loom_work_check(const struct loom_pkt_run_work *p, uint32_t *field)
{
	if (!p->stack_capacity || p->stack_capacity > LOOM_MAX_WORK_STACK)
		return BAD_FIELD(stack_capacity);
	/* An item alone on the stack must always be able to start. */
	if (p->child_capacity > LOOM_MAX_CHILD_CAPACITY ||
	    p->child_capacity >= p->stack_capacity)
		return BAD_FIELD(child_capacity);
	if (p->stack_va & 7)
		return BAD_FIELD(stack_va);
	if (p->stack_count > p->stack_capacity)
		return BAD_FIELD(stack_count);
	if (p->record_va & 7)
		return BAD_FIELD(record_va);
	if (p->record_capacity > LOOM_MAX_WORK_RECORDS)
		return BAD_FIELD(record_capacity);
	if (!p->budget)
		return BAD_FIELD(budget);
	if (p->status_va & 7)
		return BAD_FIELD(status_va);
	if (p->flags & ~LOOM_RUN_WORK_FLAGS_MASK)
		return BAD_FIELD(flags);
	if (p->reserved)
		return BAD_FIELD(reserved);
	return LOOM_STATUS_OK;
}

static uint64_t entry_va(const struct work_run *w, uint32_t i)
{
	return w->pkt->stack_va + (uint64_t)i * ENTRY_SIZE;
}

/* Whether the packet stops before the top item, and why. */
static bool must_stop(const struct work_run *w, enum loom_work_stop *why)
{
	const struct loom_pkt_run_work *p = w->pkt;

	if (!w->count)
		*why = LOOM_WORK_STOP_QUIESCENT;
	else if (w->run == p->budget)
		*why = LOOM_WORK_STOP_BUDGET;
	else if (w->run == p->record_capacity)
		*why = LOOM_WORK_STOP_RECORDS_FULL;
	else if ((uint64_t)w->count - 1 + p->child_capacity > p->stack_capacity)
		*why = LOOM_WORK_STOP_STACK_FULL;
	else
		return false;
	return true;
}

/* Whether a child of @payload may go on the stack. */
static bool child_fits(const struct work_run *w, uint64_t payload)
{
	return !(w->pkt->flags & LOOM_RUN_WORK_CHILDREN_I32) ||
	       (uint64_t)(int64_t)(int32_t)(uint32_t)payload == payload;
}

/*
 * Runs the top item: its record, then its children in its entry's place,
 * child 0 on top.  On failure, or when *@narrow says a child did not fit
 * its type, its entry is still there, unchanged.
 */
static int run_top(struct work_run *w, bool *narrow, uint32_t *detail)
{
	const struct loom_work_ops *ops = w->ops;
	struct loom_hw_work_record rec = { 0 };
	uint32_t top = w->count - 1, n = 0;
	int ret;

	ret = ops->read(ops->opaque, entry_va(w, top), &rec.entry, ENTRY_SIZE);
	if (ret)
		return ret;
	ret = ops->run_item(ops->opaque, rec.entry.payload, w->run,
			    w->children, &n);
	/* run_item keeps to the capacity; a count beyond it is an overflow */
	if (!ret && n > w->pkt->child_capacity)
		ret = LOOM_STATUS_CHILD_OVERFLOW;
	if (ret) {
		if (ret == LOOM_STATUS_CHILD_OVERFLOW)
			*detail = w->run;
		return ret;
	}
	for (uint32_t k = 0; k < n; k++)
		if (!child_fits(w, w->children[k])) {
			*narrow = true;
			return LOOM_STATUS_OK;
		}
	rec.child_count = n;
	ret = ops->write(ops->opaque, w->pkt->record_va +
			 (uint64_t)w->run * RECORD_SIZE, &rec, RECORD_SIZE);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < n; k++)
		w->entries[n - 1 - k] = (struct loom_hw_work_entry){
			.payload = w->children[k], .parent = w->run, .ordinal = k,
		};
	if (n) {
		ret = ops->write(ops->opaque, entry_va(w, top), w->entries,
				 n * ENTRY_SIZE);
		if (ret)
			return ret;
	}
	w->count = top + n;
	w->run++;
	return LOOM_STATUS_OK;
}

static int write_status(const struct work_run *w, enum loom_work_stop why)
{
	struct loom_hw_work_status s = {
		.stop = why, .items_run = w->run, .stack_count = w->count,
	};

	return w->ops->write(w->ops->opaque, w->pkt->status_va, &s, sizeof(s));
}

static int drain(struct work_run *w, uint32_t *detail)
{
	enum loom_work_stop why;
	bool narrow = false;
	int ret;

	while (!must_stop(w, &why)) {
		if (__atomic_load_n(w->ops->stop, __ATOMIC_RELAXED))
			return LOOM_STATUS_STOPPED;
		ret = run_top(w, &narrow, detail);
		if (ret)
			return ret;
		if (narrow) {
			why = LOOM_WORK_STOP_CHILD_WIDTH;
			break;
		}
	}
	return write_status(w, why);
}

int loom_work_run(const struct loom_work_ops *ops,
		  const struct loom_pkt_run_work *pkt, uint32_t *detail)
{
	uint32_t cap = pkt->child_capacity ? pkt->child_capacity : 1;
	struct work_run w = {
		.ops = ops, .pkt = pkt, .count = pkt->stack_count,
		.children = malloc(cap * sizeof(uint64_t)),
		.entries = malloc(cap * ENTRY_SIZE),
	};
	int ret;

	*detail = 0;
	if (!w.children || !w.entries) {
		ret = LOOM_STATUS_DMA_ERROR;
	} else {
		ret = drain(&w, detail);
		/*
		 * The host names the failing item by its entry, still on top:
		 * best effort, the job's status already says what failed.
		 */
		if (ret)
			write_status(&w, LOOM_WORK_STOP_FAILED);
	}
	free(w.children);
	free(w.entries);
	return ret;
}
