// SPDX-License-Identifier: MIT
/*
 * DOC: committing a device run
 *
 * The commit engine of the device's work stack (adapter_work.c): a device
 * ran a worker's batch and their children depth first and wrote a record
 * per item; the worker commits the records, in record order, as the very
 * transactions the items path performs (each item publishes its children
 * in ordinal order, acquiring every one before it is visible, and
 * completes), so ids, payloads and the trace's events per item are the
 * items path's.  Children the device ran are taken by the worker at once
 * ("held": the batch's items, then every taken child, in the order
 * taken), the others are queued on its deque.
 *
 * A cancel request does not undo what the device ran: an item it covers
 * (one with a pending request, and every descendant the device ran of
 * it) still publishes its children as one group, acquiring each before
 * it is visible, so every item that ran holds a responsibility; but it
 * queues none -- those it took are held and covered, the others are
 * cancelled at once -- and it is cancelled, not completed.
 *
 * A commit is an object (struct loom_sched_commit, sched_internal.h):
 * begin takes the worker's owner lock, each step commits one record, end
 * cancels what the run failed or left held and releases the lock.  With
 * the lock held throughout, no held item is in a deque or an active slot
 * of anyone else, so no thief or canceller can reach one before it is
 * retired, and each is retired exactly once.
 */
#include "sched_internal.h"

/* Held item @h is one of the batch, active on the worker: its slot. */
static struct active_item *batch_slot(struct loom_sched_commit *c, uint32_t h)
{
	struct active_item *slot;

	if (h >= c->n_batch || c->batch[h].worker != c->worker ||
	    loom_sched_active_slot(c->sched, &c->sched->workers[c->worker], &c->batch[h],
			LOOM_WORK_RESP_USED, &slot))
		return NULL;
	return slot;
}

static bool held_live(const struct loom_sched_commit *c, uint32_t h)
{
	return h < c->n_held && c->held[h].rec &&
	       !(atomic_load_explicit(&c->held[h].rec->state,
				      memory_order_relaxed) & LOOM_REC_RETIRED);
}

/*
 * Skips @step's taken children: the step's item is a batch item that is
 * not active (the carry could not keep it), so none of them can exist.
 */
static bool skip_taken(struct loom_sched_commit *c, const struct loom_sched_step *step)
{
	for (uint32_t k = 0; k < step->count; k++) {
		if (!step->taken[k])
			continue;
		if (c->n_held == c->max_held)
			return false;
		c->held[c->n_held++] = (struct loom_sched_held){ NULL, false };
	}
	return true;
}

/*
 * Retires held item @h, which has no active slot.  While the commit holds
 * another taken child, this cannot be the domain's last retirement (that
 * child's responsibility is active), so it neither fences nor looks for
 * completion: the retirement that leaves none does both, and its
 * sequentially consistent increment of the same lane comes after these in
 * its modification order.  The check was a fifth of a commit's cost.
 */
static void retire_held_item(struct loom_sched_commit *c, uint32_t h,
			     enum loom_sched_event_kind kind)
{
	struct loom_sched *sched = c->sched;
	struct loom_work_record *rec = c->held[h].rec;
	uint64_t seq;

	if (h < c->n_batch || !--c->live_taken) {
		loom_sched_retire(sched, rec, c->worker, kind, c->worker, true);
		return;
	}
	seq = sched->tracing ? trace_number(sched, 1) : 0;
	loom_work_retire_held_unfenced(sched->domain, rec, c->worker);
	loom_sched_retired(sched, rec, kind, c->worker, seq, false);
}

/* Cancels held item @h: a request, then its retirement. */
static void cancel_held_item(struct loom_sched_commit *c, uint32_t h)
{
	struct loom_sched *sched = c->sched;
	struct loom_work_record *rec = c->held[h].rec;
	struct active_item *slot = batch_slot(c, h);

	if (slot) {
		if (!slot->cancel_requested)
			loom_sched_request_cancel(sched, c->worker, slot);
		loom_sched_finish_slot(sched, c->worker, slot, true, NULL);
	} else {
		record_event(sched, rec, LOOM_SLOT_REQUEST,
			     LOOM_SCHED_EV_CANCEL_REQUEST, c->worker,
			     LOOM_SCHED_NO_WORKER,
			     sched->tracing ? trace_number(sched, 1) : 0, false);
		retire_held_item(c, h, LOOM_SCHED_EV_CANCEL_ACTIVE);
	}
	c->cancelled++;
}

/*
 * Cancels @child, just published by an item a cancel request covers and
 * never run: it was never visible.  That item is still live, so this is
 * not the domain's last retirement (as in retire_held_item()).
 */
static void cancel_unrun_child(struct loom_sched_commit *c,
			       struct loom_work_record *child)
{
	struct loom_sched *sched = c->sched;
	uint64_t seq = sched->tracing ? trace_number(sched, 1) : 0;

	loom_work_retire_held_unfenced(sched->domain, child, c->worker);
	loom_sched_retired(sched, child, LOOM_SCHED_EV_CANCEL_QUEUED, c->worker,
			   seq, false);
	c->cancelled++;
}

/*
 * Publishes @step's children: every one acquired before any is visible,
 * then the taken ones held and the others queued -- or, when a cancel
 * request covers the item (@cancel), cancelled.
 */
static enum loom_error publish_step(struct loom_sched_commit *c,
				    const struct loom_sched_step *step,
				    struct loom_work_record *rec, bool cancel)
{
	struct loom_sched *sched = c->sched;
	struct sched_worker *w = &sched->workers[c->worker];
	int64_t queued = deque_owner_size(&w->deque), b;
	uint64_t first, seq = 0, nq = 0, nt = 0;
	enum loom_error err;

	for (uint32_t k = 0; k < step->count; k++)
		step->taken[k] ? nt++ : nq++;
	if (!cancel && nq > sched->capacity - (uint64_t)queued)
		return LOOM_WORK_QUEUE_CAPACITY;
	if (nt > c->max_held - c->n_held)
		return LOOM_WORK_INVALID_ARGUMENT;
	if (!step->count)
		return LOOM_OK;
	err = loom_work_spawn_held(sched->domain, c->worker, rec, step->count,
				   step->payloads, &first);
	if (err)
		return err;
	if (sched->tracing)
		seq = trace_number(sched, step->count);
	b = atomic_load_explicit(&w->deque.bottom, memory_order_relaxed);
	for (uint32_t k = 0, q = 0; k < step->count; k++) {
		struct loom_work_record *child =
			loom_work_record_at(sched->domain, first + k);

		child->worker = c->worker;
		record_event(sched, child, LOOM_SLOT_CREATE,
			     LOOM_SCHED_EV_PUBLISH, c->worker,
			     LOOM_SCHED_NO_WORKER, seq + k, false);
		if (!step->taken[k] && cancel) {
			cancel_unrun_child(c, child);
			continue;
		}
		if (!step->taken[k]) {
			deque_put(&w->deque, b + q++, child);
			continue;
		}
		record_event(sched, child, LOOM_SLOT_ACQUIRE,
			     LOOM_SCHED_EV_ACQUIRE_LOCAL, c->worker,
			     LOOM_SCHED_NO_WORKER,
			     sched->tracing ? trace_number(sched, 1) : 0, false);
		c->held[c->n_held++] = (struct loom_sched_held){ child, cancel };
		c->live_taken++;
	}
	if (nq && !cancel) {
		deque_publish_bottom(&w->deque, b + (int64_t)nq, queued == 0);
		c->woke |= queued == 0;
	}
	c->published += step->count;
	return LOOM_OK;
}

/* One step: LOOM_OK, or why it was refused (its item still held). */
static enum loom_error run_step(struct loom_sched_commit *c,
				const struct loom_sched_step *step,
				struct loom_sched_item *item)
{
	struct active_item *slot;
	struct loom_work_record *rec;
	enum loom_error err;
	bool cancel;

	if (step->held < c->n_held && !c->held[step->held].rec)
		return skip_taken(c, step) ? LOOM_OK :
					     LOOM_WORK_INVALID_ARGUMENT;
	if (!held_live(c, step->held) || (step->count && !step->payloads) ||
	    (step->count && !step->taken))
		return LOOM_WORK_INVALID_ARGUMENT;
	rec = c->held[step->held].rec;
	slot = batch_slot(c, step->held);
	cancel = c->held[step->held].cancel || (slot && slot->cancel_requested);
	err = publish_step(c, step, rec, cancel);
	if (err)
		return err;
	if (item)
		fill_item(c->sched, rec, c->worker, c->worker, item);
	if (cancel) {
		cancel_held_item(c, step->held);
		return LOOM_OK;
	}
	if (slot)
		loom_sched_finish_slot(c->sched, c->worker, slot, false, NULL);
	else
		retire_held_item(c, step->held, LOOM_SCHED_EV_COMPLETE);
	c->completed++;
	return LOOM_OK;
}

/*
 * Owner lock held: moves @w's active slots to the front, in order, so that
 * a carry's new slots fit behind them (a batch retires with holes).
 */
static void compact_active(struct sched_worker *w)
{
	uint32_t k = 0;

	for (uint32_t i = w->first; i < w->end; i++)
		if (!w->active[i].retired)
			w->active[k++] = w->active[i];
	w->first = 0;
	w->end = k;
}

/*
 * Owner lock held, every step committed: the held items @carry names stay
 * with the worker, active, in its order.  A batch item still is; a taken
 * child gets an active slot and is no longer the commit's to cancel.  One
 * that is not live (skipped with a cancelled parent, or retired) or finds
 * no free slot keeps the worker LOOM_SCHED_NO_WORKER its report was given
 * before (loom_sched_commit_end()).
 */
static void carry_held(struct loom_sched_commit *c, const struct loom_sched_carry *carry)
{
	struct sched_worker *w = &c->sched->workers[c->worker];

	compact_active(w);
	for (uint32_t j = 0; j < carry->count; j++) {
		uint32_t h = carry->held[j];
		struct loom_sched_item *item = &carry->items[j];

		if (!held_live(c, h))
			continue;
		if (h < c->n_batch) {
			*item = c->batch[h];
			continue;
		}
		if (w->end == c->sched->max_batch)
			continue;
		add_active(w, c->held[h].rec);
		if (c->held[h].cancel)
			loom_sched_request_cancel(c->sched, c->worker,
						  &w->active[w->end - 1]);
		fill_item(c->sched, c->held[h].rec, c->worker, c->worker, item);
		c->held[h].rec = NULL;
	}
}

static void name_failed(struct loom_sched_commit *c, uint32_t h)
{
	if (c->has_failed || !held_live(c, h))
		return;
	c->has_failed = true;
	fill_item(c->sched, c->held[h].rec, c->worker, c->worker, &c->failed);
}

void loom_sched_commit_begin(struct loom_sched_commit *c,
			     struct loom_sched *sched, uint32_t worker,
			     const struct loom_sched_item *batch,
			     uint32_t n_batch, struct loom_sched_held *held,
			     size_t max_held)
{
	*c = (struct loom_sched_commit){
		.sched = sched, .worker = worker, .batch = batch,
		.n_batch = n_batch, .held = held, .max_held = max_held,
	};
	owner_lock(&sched->workers[worker]);
	for (uint32_t i = 0; i < n_batch && c->n_held < max_held; i++) {
		struct active_item *slot = batch_slot(c, i);

		held[c->n_held++] = (struct loom_sched_held){
			slot ? slot->rec : NULL, false,
		};
	}
}

enum loom_error loom_sched_commit_step(struct loom_sched_commit *c,
				       const struct loom_sched_step *step,
				       struct loom_sched_item *item)
{
	if (item)
		item->worker = LOOM_SCHED_NO_WORKER;
	if (c->error)
		return c->error;
	c->error = run_step(c, step, item);
	if (c->error) {
		name_failed(c, step->held);
		if (held_live(c, step->held))
			cancel_held_item(c, step->held);
	}
	return c->error;
}

void loom_sched_commit_end(struct loom_sched_commit *c, uint32_t fail_held,
			   const struct loom_sched_carry *carry,
			   bool *batch_live)
{
	if (fail_held != UINT32_MAX) {
		name_failed(c, fail_held);
		if (held_live(c, fail_held))
			cancel_held_item(c, fail_held);
	}
	for (uint32_t j = 0; carry && j < carry->count; j++)
		carry->items[j].worker = LOOM_SCHED_NO_WORKER;
	if (carry && !c->error && fail_held == UINT32_MAX)
		carry_held(c, carry);
	/* Other taken children have no slot to wait in: none outlives it. */
	for (size_t h = c->n_batch; h < c->n_held; h++)
		if (held_live(c, h))
			cancel_held_item(c, h);
	for (uint32_t i = 0; i < c->n_batch; i++)
		batch_live[i] = held_live(c, i);
	owner_unlock(&c->sched->workers[c->worker]);
	if (c->woke)
		loom_sched_wake_one(c->sched);
}
