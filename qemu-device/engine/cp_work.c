// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RUN_WORK: the command processor as the execution-local scheduler of a
 * dynamic work domain's part on one core (uapi: struct loom_pkt_run_work).
 *
 * Items wait on a bounded stack in job memory.  The device takes items
 * from the top (as many at once as its bounds allow, up to WORK_BATCH),
 * runs them, writes their records and puts their children where their
 * entries were, until the stack is empty or one of the packet's bounds is
 * reached; it checks the bounds before taking items, so every item taken
 * has room for every child it may spawn and nothing is ever dropped.  It
 * decides no identity and no completion: records name parents by record
 * index and children by ordinal, and the host commits them.
 *
 * Items run through one call (struct loom_work_ops.run_items), a batch at
 * a time, so how the fabric runs them -- one after another, or overlapped
 * -- is cp.c's business alone.
 */
#include <stddef.h>
#include <stdlib.h>

#include "engine.h"

#define ENTRY_SIZE	sizeof(struct loom_hw_work_entry)
#define RECORD_SIZE	sizeof(struct loom_hw_work_record)
/* Items taken from the top at once, at most: what run_items may overlap. */
#define WORK_BATCH	64u

struct work_run {
	const struct loom_work_ops *ops;
	const struct loom_pkt_run_work *pkt;
	uint32_t cap;			/* child_capacity */
	/* one batch: WORK_BATCH items, top first */
	struct loom_hw_work_entry *taken;	/* as read, bottom first */
	struct loom_hw_work_entry *items;
	uint64_t *payloads;
	uint64_t *children;		/* cap per item */
	uint32_t *counts;
	struct loom_hw_work_record *recs;
	struct loom_hw_work_entry *put;	/* what goes back on the stack */
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

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * How many items to take from the top: as many as the bounds allow, each
 * item taken freeing its entry and needing room for cap children, but
 * only up to half the free room: a stack that fills stops the packet, so
 * wide batches give way to depth first as it fills.  must_stop() said the
 * first one fits.
 */
static uint32_t batch_size(const struct work_run *w)
{
	const struct loom_pkt_run_work *p = w->pkt;
	uint32_t k = min32(min32(w->count, WORK_BATCH),
			   min32(p->budget - w->run, p->record_capacity - w->run));
	uint32_t half;

	if (w->cap > 1) {
		half = (p->stack_capacity - w->count) / (2 * (w->cap - 1));
		k = min32(k, half ? half : 1);
	}
	return k;
}

/* Whether item @i's children may go on the stack (LOOM_RUN_WORK_CHILDREN_I32). */
static bool children_fit(const struct work_run *w, uint32_t i)
{
	const uint64_t *c = &w->children[(size_t)i * w->cap];

	if (!(w->pkt->flags & LOOM_RUN_WORK_CHILDREN_I32))
		return true;
	for (uint32_t k = 0; k < w->counts[i]; k++)
		if ((uint64_t)(int64_t)(int32_t)(uint32_t)c[k] != c[k])
			return false;
	return true;
}

/*
 * Writes back what the @k items taken from @base did, @done of them
 * completed (@failed: item @done failed): records of the completed items
 * whose children fit, in item order; on the stack, above the items not
 * run (untouched), their children (item 0's on top, child 0 topmost), the
 * entries of the items whose children did not fit, and the failing one's
 * on top.  *@narrow: some children did not fit.
 */
static int put_back(struct work_run *w, uint32_t base, uint32_t k,
		    uint32_t done, bool failed, bool *narrow)
{
	const struct loom_work_ops *ops = w->ops;
	uint32_t nrec = 0, nput = 0, below = failed ? k - done - 1 : 0;
	int ret;

	for (uint32_t i = 0; i < done; i++) {
		if (!children_fit(w, i))
			continue;
		w->recs[nrec++] = (struct loom_hw_work_record){
			.entry = w->items[i], .child_count = w->counts[i],
		};
	}
	for (uint32_t i = done, r = nrec; i-- > 0;) {
		if (!children_fit(w, i))
			continue;
		r--;
		for (uint32_t c = w->counts[i]; c-- > 0;)
			w->put[nput++] = (struct loom_hw_work_entry){
				w->children[(size_t)i * w->cap + c], w->run + r, c,
			};
	}
	for (uint32_t i = done; i-- > 0;)
		if (!children_fit(w, i))
			w->put[nput++] = w->items[i];
	if (failed)
		w->put[nput++] = w->items[done];
	*narrow = nrec < done;
	ret = nrec ? ops->write(ops->opaque, w->pkt->record_va +
				(uint64_t)w->run * RECORD_SIZE, w->recs,
				nrec * RECORD_SIZE) : LOOM_STATUS_OK;
	if (!ret && nput)
		ret = ops->write(ops->opaque, entry_va(w, base + below), w->put,
				 nput * ENTRY_SIZE);
	if (ret)
		return ret;
	w->count = base + below + nput;
	w->run += nrec;
	return LOOM_STATUS_OK;
}

/*
 * Item @failed, not item @done, failed (neither completed): swaps their
 * entries, on the stack too, so that put_back() leaves @failed on top and
 * every other item not run where it was.  Returns @ret, or a write's
 * failure.
 */
static int name_failed(struct work_run *w, uint32_t base, uint32_t k,
		       uint32_t done, uint32_t failed, int ret)
{
	const struct loom_work_ops *ops = w->ops;
	struct loom_hw_work_entry e = w->items[done];
	int wr;

	w->items[done] = w->items[failed];
	w->items[failed] = e;
	w->taken[k - 1 - done] = w->items[done];
	w->taken[k - 1 - failed] = w->items[failed];
	wr = ops->write(ops->opaque, entry_va(w, base), w->taken, k * ENTRY_SIZE);
	return wr ? wr : ret;
}

/*
 * Takes the top items and runs them through the one call; on failure the
 * failing item's entry ends on top, unchanged.
 */
static int run_batch(struct work_run *w, bool *narrow, uint32_t *detail)
{
	const struct loom_work_ops *ops = w->ops;
	uint32_t k = batch_size(w), base = w->count - k, done = 0, failed = 0;
	int ret, put;

	ret = ops->read(ops->opaque, entry_va(w, base), w->taken, k * ENTRY_SIZE);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < k; i++) {
		w->items[i] = w->taken[k - 1 - i];
		w->payloads[i] = w->items[i].payload;
	}
	ret = ops->run_items(ops->opaque, w->payloads, k, w->children,
			     w->counts, &done, &failed);
	if (!ret)
		done = k;
	else if (failed > done && failed < k)
		ret = name_failed(w, base, k, done, failed, ret);
	/* run_items keeps to the capacity; a count beyond it is an overflow */
	for (uint32_t i = 0; i < done; i++) {
		if (w->counts[i] > w->cap) {
			done = i;
			ret = LOOM_STATUS_CHILD_OVERFLOW;
		}
	}
	put = put_back(w, base, k, done, ret, narrow);
	if (ret == LOOM_STATUS_CHILD_OVERFLOW)
		*detail = w->run;	/* the record it would have had */
	return ret ? ret : put;
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
		ret = run_batch(w, &narrow, detail);
		if (ret)
			return ret;
		if (narrow) {
			why = LOOM_WORK_STOP_CHILD_WIDTH;
			break;
		}
	}
	return write_status(w, why);
}

static void free_run(struct work_run *w)
{
	free(w->taken);
	free(w->items);
	free(w->payloads);
	free(w->children);
	free(w->counts);
	free(w->recs);
	free(w->put);
}

int loom_work_run(const struct loom_work_ops *ops,
		  const struct loom_pkt_run_work *pkt, uint32_t *detail)
{
	size_t cap = pkt->child_capacity;
	struct work_run w = {
		.ops = ops, .pkt = pkt, .cap = pkt->child_capacity,
		.count = pkt->stack_count,
		.taken = calloc(WORK_BATCH, ENTRY_SIZE),
		.items = calloc(WORK_BATCH, ENTRY_SIZE),
		.payloads = calloc(WORK_BATCH, sizeof(uint64_t)),
		.children = calloc(WORK_BATCH * (cap ? cap : 1), sizeof(uint64_t)),
		.counts = calloc(WORK_BATCH, sizeof(uint32_t)),
		.recs = calloc(WORK_BATCH, RECORD_SIZE),
		/* every child, every entry back, and the failing one */
		.put = calloc(WORK_BATCH * (cap + 1) + 1, ENTRY_SIZE),
	};
	int ret;

	*detail = 0;
	if (!w.taken || !w.items || !w.payloads || !w.children || !w.counts ||
	    !w.recs || !w.put) {
		ret = LOOM_STATUS_DMA_ERROR;
	} else {
		ret = drain(&w, detail);
		/*
		 * The host names the failing item by its entry, on top: best
		 * effort, the job's status already says what failed.
		 */
		if (ret)
			write_status(&w, LOOM_WORK_STOP_FAILED);
	}
	free_run(&w);
	return ret;
}
