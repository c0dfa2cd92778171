// SPDX-License-Identifier: MIT
/*
 * DOC: the device adapter's work stack
 *
 * adapter_work.c: the device adapter's work stack (LOOM_PKT_RUN_WORK, spec
 * §2.2: an execution-local scheduler), for workers whose device has
 * LOOM_CAP_RUN_WORK.
 *
 * A worker's batch goes on the device's stack instead of a payload BO;
 * the device runs items and their children depth first until the stack is
 * empty or a bound is reached, writing a record per item (parent record,
 * ordinal, payload, child count).  The
 * worker then commits the records in record order as the transactions
 * the items path performs (sched_commit.c): each item publishes
 * its children in ordinal order, acquiring every one before it is
 * visible, and completes; children the device ran are taken by the worker
 * at once, those still on the stack are queued on its deque like any
 * publication, where other workers and devices steal them.  Batch items
 * the device did not reach go on the stack of the next packet.  So ids,
 * payloads, counts and the trace's events per item are the items path's;
 * only the host round trips drop, to one per packet.  The stack is
 * bounded by the deque's free room, so what is left on it always fits.
 * A packet that stops on a bound has its successor started on a second
 * stack and record area before it is committed, with what the commit then
 * keeps active for the worker (run_ahead()): the device runs while the
 * host commits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_items.h"
#include "adapter_match.h"
#include "adapter_work.h"

/* Records (and items) one RUN_WORK packet may run: one round trip's worth. */
#define WORK_RECORDS	16384u
/*
 * Items a packet runs when other workers wait for work (parked, or yet to
 * take their first batch, when it is submitted): what it leaves on its
 * stack is published only when it stops, so a packet that drains a whole
 * subtree alone would starve them (measured, bench P3: 2 workers on two
 * cores gained nothing at 16384; the root's packet ran 16384 items alone
 * while the second worker's thread was still on its way to park).
 */
#define WORK_SHARE_BUDGET	1024u
/* Entries of a worker's stack, at most: depth first keeps it shallow. */
#define WORK_STACK	16384u
/*
 * Items of a batch on the work stack, at most: the whole batch goes on the
 * stack, with room left to start (the items path takes any max_batch).
 */
#define WORK_BATCH_MAX	(WORK_STACK / 2)
/* Status of the stack the device has not written (it writes a stop). */
#define STATUS_UNWRITTEN	0xffffffffu

/* One packet's device memory. */
struct work_buf {
	struct loom_bo *stack;		/* WORK_STACK entries */
	struct loom_bo *records;	/* records, status, counters */
	uint64_t job;			/* its job's user_data */
	uint64_t submit_ns;
	bool in_flight;
	int res;			/* its job's result, once reaped */
};

/*
 * A RUN_WORK worker's device memory, two packets' worth (one runs while
 * the other's records are committed), and the scratch of its commits, all
 * sized once: a slot is one child of one record, to be matched with the
 * record or the stack entry that claims it.
 */
struct work_state {
	struct work_buf buf[2];
	uint32_t cur;			/* the batch's packet's buffer */
	uint32_t stack_max;
	uint32_t n_batch;		/* of the batch being drained */
	bool *unrun;			/* max_batch: a batch item not yet run */
	bool *live;			/* max_batch: still active after a commit */
	struct loom_work_match m;	/* slots and steps (adapter_match.h) */
	struct loom_sched_item *items;	/* per record */
	struct loom_sched_held *held;
	size_t max_held;
	/* a finished packet's report, copied once: the device may write on */
	struct loom_hw_work_record *recs;	/* WORK_RECORDS */
	struct loom_hw_work_entry *left;	/* WORK_STACK */
	/* the packet run ahead: per item of its batch */
	uint32_t n_carry;
	uint32_t *carry_slot;		/* slot, or LOOM_LOOM_CARRY_BATCH | i */
	uint32_t *carry_held;		/* max_batch */
	struct loom_sched_item *carried;	/* max_batch: the next batch */
};

static uint64_t work_status_offset(void)
{
	return (uint64_t)WORK_RECORDS * sizeof(struct loom_hw_work_record);
}

static uint64_t work_counters_offset(void)
{
	return work_status_offset() + sizeof(struct loom_hw_work_status);
}

static struct loom_hw_work_entry *stack_map(const struct work_buf *b)
{
	return loom_bo_map(b->stack);
}

static const struct loom_hw_work_record *records_map(const struct work_buf *b)
{
	return loom_bo_map(b->records);
}

static struct loom_hw_work_status *status_map(const struct work_buf *b)
{
	return (void *)((char *)loom_bo_map(b->records) + work_status_offset());
}

/* The buffer of the packet whose records are committed next. */
static struct work_buf *cur_buf(const struct device_worker *w)
{
	return &w->work->buf[w->work->cur];
}

/*
 * Puts the batch items not yet run on @e, batch order from the top;
 * returns how many.
 */
static uint32_t stack_batch(struct device_worker *w,
			    struct loom_hw_work_entry *e)
{
	struct work_state *ws = w->work;
	uint32_t k = 0;

	for (uint32_t i = ws->n_batch; i-- > 0;)
		if (ws->unrun[i])
			e[k++] = (struct loom_hw_work_entry){
				w->batch[i].payload, LOOM_WORK_NO_PARENT, i,
			};
	return k;
}

/* Whether another worker waits for work: a hint, stale at worst. */
static bool others_wait(struct device_run *run)
{
	return loom_sched_sleepers(run->common.sched) ||
	       atomic_load_explicit(&run->unstarted, memory_order_relaxed);
}

/*
 * The packet for @count initial entries on @b, or false when the deque
 * has no room for what the device may leave on a stack big enough to
 * start, besides @reserve entries a commit still has to queue.
 */
static bool work_packet(const struct device_worker *w,
			const struct work_buf *b, uint32_t count,
			uint32_t reserve, struct loom_pkt_run_work *p)
{
	struct device_run *run = w->run;
	uint32_t cap = run->common.child_capacity;
	uint64_t used = (uint64_t)loom_sched_queued(run->common.sched,
						    w->index) + reserve;
	uint32_t room, size;

	if (used >= run->config->sched.deque_capacity)
		return false;
	room = run->config->sched.deque_capacity - (uint32_t)used;
	size = room < w->work->stack_max ? room : w->work->stack_max;
	if ((uint64_t)count - 1 + cap > size || cap >= size)
		return false;
	*p = (struct loom_pkt_run_work){
		.child_capacity = cap,
		.stack_va = loom_bo_va(b->stack),
		.stack_capacity = size,
		.stack_count = count,
		.record_va = loom_bo_va(b->records),
		.record_capacity = WORK_RECORDS,
		.budget = others_wait(run) ? WORK_SHARE_BUDGET : WORK_RECORDS,
		.status_va = loom_bo_va(b->records) + work_status_offset(),
		.flags = run->common.payload_type == LOOM_ARG_I32 ?
			 LOOM_RUN_WORK_CHILDREN_I32 : 0,
	};
	return true;
}

/* Submits @p on @b; its result comes with work_wait(). */
static int work_launch(struct device_worker *w, struct work_buf *b,
		       const struct loom_pkt_run_work *p)
{
	const struct loom_work_device_config *c = w->run->config;
	struct loom_launch l = {
		.kind = LOOM_LAUNCH_ITEMS,
		.thread = c->thread,
		.args = w->args,
		.n_args = c->n_args,
		.items = p->stack_count,
		.payload_va = p->stack_va,
		.result_va = p->record_va,
		.counters_va = loom_bo_va(b->records) + work_counters_offset(),
		.queue = w->core,
	};
	int ret;

	status_map(b)->stop = STATUS_UNWRITTEN;
	b->submit_ns = loom_now_ns();
	ret = loom_ring_launch_for(w->ring, c->image, &l, p,
				   loom_adapter_occurrence(&w->run->common),
				   w->jobs);
	if (ret)
		return ret;
	b->job = w->jobs++;
	b->in_flight = true;
	return 0;
}

/* Waits for @b's job (the other buffer's may finish first): its result. */
static int work_wait(struct device_worker *w, struct work_buf *b)
{
	struct work_state *ws = w->work;

	while (b->in_flight) {
		struct loom_completion done;
		int ret = loom_ring_reap(w->ring, &done, 1, true);

		if (ret == -EINTR || ret == -EAGAIN)
			continue;	/* a signal: the job runs on */
		if (ret != 1) {
			b->in_flight = false;
			b->res = ret < 0 ? ret : -EIO;
			break;
		}
		for (int i = 0; i < 2; i++) {
			struct work_buf *o = &ws->buf[i];

			if (o->in_flight && o->job == done.user_data) {
				o->in_flight = false;
				o->res = done.res;
			}
		}
	}
	return b->res;
}

/* What a packet's status says; nothing when the device wrote no stop. */
struct work_report {
	bool stopped;
	bool top;		/* the stack's top entry is the failing item */
	uint32_t nrec;		/* records written */
	uint32_t left;		/* entries left on the stack */
};

static struct work_report report_of(const struct loom_hw_work_status *st)
{
	bool stopped = st->stop <= LOOM_WORK_STOP_FAILED;

	return (struct work_report){
		.stopped = stopped,
		.top = stopped && st->stop >= LOOM_WORK_STOP_CHILD_WIDTH,
		.nrec = stopped ? st->items_run : 0,
		.left = stopped ? st->stack_count : 0,
	};
}

/* Waits for @b's job and sums its counters: its result and status. */
static int work_finish(struct device_worker *w, struct work_buf *b,
		       struct loom_hw_work_status *st)
{
	int ret = work_wait(w, b);
	const void *hw = (const char *)loom_bo_map(b->records) +
			 work_counters_offset();
	struct work_report r;

	*st = *status_map(b);
	r = report_of(st);
	loom_device_account_job(w, r.nrec + r.top, b->submit_ns, ret, hw);
	return ret;
}

/*
 * The report work_check() copied out of device memory, as the matcher
 * takes it: nothing of it when matching found it @bad.
 */
static struct loom_work_report copied_report(const struct work_state *ws,
					     struct work_report r, int bad)
{
	return (struct loom_work_report){
		.recs = ws->recs, .nrec = bad ? 0 : r.nrec,
		.left = ws->left, .n_left = bad ? 0 : r.left,
		.top = !bad && r.top,
	};
}

/* The stop of a packet that ran well and left items for a next one. */
static bool stopped_on_bound(uint32_t stop)
{
	return stop == LOOM_WORK_STOP_BUDGET ||
	       stop == LOOM_WORK_STOP_RECORDS_FULL ||
	       stop == LOOM_WORK_STOP_STACK_FULL;
}

/*
 * Once a packet that stopped on a bound has been matched (its @left stack
 * entries each claim a child), the next one starts at once on the other
 * buffer and runs while this one's records are committed: every batch
 * item not run yet, then children left, a batch in all.  A lone worker
 * takes the biggest subtrees (the bottom of the stack: its device stays
 * busy longest); with other workers, those go to be stolen and it takes
 * at most half, the deepest (the top).  The commit keeps them active (its
 * carry) and queues the other children.  Returns whether it was
 * submitted.
 */
static bool run_ahead(struct device_worker *w, uint32_t left)
{
	struct work_state *ws = w->work;
	const struct loom_hw_work_entry *stack = ws->left;
	struct work_buf *next = &ws->buf[ws->cur ^ 1];
	struct loom_hw_work_entry *e = stack_map(next);
	uint32_t n = 0, children = 0, keep, skip, max = loom_work_stack_batch(w);
	bool alone;
	struct loom_pkt_run_work p;

	/* a cancelled domain runs nothing more: the commit cancels the rest */
	if (loom_sched_cancelling(w->run->common.sched))
		return false;
	for (uint32_t i = ws->n_batch; i-- > 0;) {
		/* one not carried last time is gone with its subtree */
		if (!ws->unrun[i] || w->batch[i].worker == LOOM_SCHED_NO_WORKER)
			continue;
		ws->carry_slot[n] = LOOM_CARRY_BATCH | i;
		e[n] = (struct loom_hw_work_entry){
			w->batch[i].payload, LOOM_WORK_NO_PARENT, n,
		};
		n++;
	}
	for (uint32_t k = 0; k < left; k++)
		children += stack[k].parent != LOOM_WORK_NO_PARENT;
	alone = w->run->config->sched.workers == 1;
	keep = alone ? children : children / 2;
	if (keep > max - n)
		keep = max - n;
	skip = children - keep;
	for (uint32_t k = 0, c = 0; k < left; k++) {
		const struct loom_hw_work_entry *s = &stack[k];
		uint32_t slot;

		if (s->parent == LOOM_WORK_NO_PARENT)
			continue;
		c++;
		if (alone ? c > keep : c <= skip)
			continue;
		slot = loom_work_slot(&ws->m, s->parent, s->ordinal);
		ws->carry_slot[n] = slot;
		e[n] = (struct loom_hw_work_entry){
			ws->m.slot_payload[slot], LOOM_WORK_NO_PARENT, n,
		};
		n++;
	}
	if (!n || !work_packet(w, next, n, skip, &p) ||
	    work_launch(w, next, &p))
		return false;
	ws->n_carry = n;
	return true;
}

/*
 * Commits one packet's records and takes the failure it reports, if any:
 * @error the job's, @st its status, @bad what matching them found,
 * @ahead whether the next packet runs already.  Returns whether the batch
 * goes on.
 */
static bool work_commit(struct device_worker *w, int error,
			const struct loom_hw_work_status *st, int bad,
			bool ahead)
{
	struct work_state *ws = w->work;
	struct device_run *run = w->run;
	const struct loom_work_device_config *c = run->config;
	struct work_report r = report_of(st);
	struct loom_work_report copied = copied_report(ws, r, bad);
	uint32_t nrec = copied.nrec, fail_held;
	struct loom_sched_carry carry = {
		ws->carry_held, ws->n_carry, ws->carried,
	};
	enum loom_error err = LOOM_OK;
	struct loom_sched_commit out;

	fail_held = loom_work_steps(&ws->m, &copied, ws->n_batch, ws->carry_slot,
				    ahead ? ws->n_carry : 0, ws->carry_held);
	if (bad || (error && !r.top))
		fail_held = loom_work_first_unrun(ws->unrun, ws->n_batch);
	loom_sched_commit_begin(&out, run->common.sched, w->index, w->batch,
				ws->n_batch, ws->held, ws->max_held);
	for (uint32_t r = 0; r < nrec; r++)
		loom_sched_commit_step(&out, &ws->m.steps[r],
				       c->observe ? &ws->items[r] : NULL);
	loom_sched_commit_end(&out, fail_held, ahead ? &carry : NULL, ws->live);
	w->counts.items_run += nrec + r.top;
	w->counts.items_completed += out.completed;
	w->counts.items_cancelled += out.cancelled;
	w->counts.children_published += out.published;
	for (uint32_t r = 0; c->observe && r < nrec; r++)
		if (ws->items[r].worker != LOOM_SCHED_NO_WORKER)
			c->observe(c->observe_ctx, &ws->items[r],
				   ws->m.steps[r].payloads, ws->m.steps[r].count);
	for (uint32_t i = 0; i < ws->n_batch; i++)
		ws->unrun[i] = ws->live[i];
	if (out.error)
		err = out.error;
	else if (bad || error)
		err = LOOM_WORK_DEVICE_ERROR;
	else if (st->stop == LOOM_WORK_STOP_CHILD_WIDTH)
		err = LOOM_WORK_PAYLOAD_WIDTH;
	if (!err)
		return true;
	loom_adapter_fail(&run->common, err, err == LOOM_WORK_DEVICE_ERROR ?
			  (bad ? bad : error) : 0,
			  out.has_failed ? &out.failed :
			  &w->batch[loom_work_first_unrun(ws->unrun, ws->n_batch)]);
	for (uint32_t i = 0; i < ws->n_batch; i++)
		if (ws->unrun[i])
			loom_adapter_cancel(&run->common, &w->counts, &w->batch[i]);
	return false;
}

/*
 * Checks a finished packet's report (@error the job's, @st its status) and
 * matches its records: 0, or -EIO for a report that does not add up.
 */
static int work_check(struct device_worker *w, int error,
		      const struct loom_hw_work_status *st)
{
	struct work_state *ws = w->work;
	struct work_report r = report_of(st);
	struct loom_work_report report;

	if (r.nrec > WORK_RECORDS || r.left > ws->stack_max ||
	    (r.top && !r.left) || (!error && !r.stopped))
		return -EIO;
	memcpy(ws->recs, records_map(cur_buf(w)), r.nrec * sizeof(*ws->recs));
	memcpy(ws->left, stack_map(cur_buf(w)), r.left * sizeof(*ws->left));
	report = copied_report(ws, r, 0);
	return loom_work_match(&ws->m, &report, ws->n_batch, ws->unrun);
}

/*
 * The batch the commit carried into the packet run ahead becomes the
 * worker's batch (an item reported with no worker was not carried: its
 * records are skipped), and that packet's buffer the current one.
 */
static void take_carried(struct device_worker *w)
{
	struct work_state *ws = w->work;

	memcpy(w->batch, ws->carried, ws->n_carry * sizeof(*w->batch));
	ws->n_batch = ws->n_carry;
	for (uint32_t j = 0; j < ws->n_batch; j++)
		ws->unrun[j] = true;
	ws->n_carry = 0;
	ws->cur ^= 1;
}

/*
 * The domain is being cancelled: the batch items not run yet (each with a
 * request pending) are cancelled instead of run.
 */
static void cancel_unrun(struct device_worker *w)
{
	for (uint32_t i = 0; i < w->work->n_batch; i++)
		if (w->work->unrun[i])
			loom_adapter_cancel(&w->run->common, &w->counts,
					    &w->batch[i]);
}

/* The batch items not yet run, moved to the front of the batch: their count. */
static size_t compact_unrun(struct device_worker *w)
{
	size_t k = 0;

	for (uint32_t i = 0; i < w->work->n_batch; i++)
		if (w->work->unrun[i])
			w->batch[k++] = w->batch[i];
	return k;
}

/*
 * Runs a batch of @n items through the device's work stack, one packet
 * after another until every batch item ran; a stack the deque could not
 * take back goes the items way.  A packet that stops on a bound has its
 * successor started before its commit (run_ahead()), so the device does
 * not wait for the host; nothing is in flight when this returns.
 */
void loom_work_stack_run(struct device_worker *w, size_t n)
{
	struct work_state *ws = w->work;
	bool ahead = false;

	ws->n_batch = n;
	for (size_t i = 0; i < n; i++) {
		ws->unrun[i] = true;
		w->counts.steals += w->batch[i].from_worker != w->batch[i].worker;
	}
	for (;;) {
		struct work_buf *b = cur_buf(w);
		struct loom_hw_work_status st;
		bool goes_on;
		int ret, bad;

		if (!ahead) {
			struct loom_pkt_run_work p;
			uint32_t count = stack_batch(w, stack_map(b));

			if (!count)
				return;
			if (loom_sched_cancelling(w->run->common.sched)) {
				cancel_unrun(w);
				return;
			}
			if (!work_packet(w, b, count, 0, &p)) {
				loom_device_run_items(w, compact_unrun(w));
				return;
			}
			ret = work_launch(w, b, &p);
			if (ret)
				b->res = ret;	/* never ran: fails it */
		}
		ret = work_finish(w, b, &st);
		bad = work_check(w, ret, &st);
		ahead = !bad && !ret && stopped_on_bound(st.stop) &&
			st.stack_count && run_ahead(w, st.stack_count);
		goes_on = work_commit(w, ret, &st, bad, ahead);
		if (ahead && !goes_on) {
			/* nothing was carried: what it ran is dropped */
			work_finish(w, &ws->buf[ws->cur ^ 1], &st);
			ws->n_carry = 0;
			return;
		}
		if (!goes_on)
			return;
		if (ahead)
			take_carried(w);
	}
}

void loom_work_stack_free(struct work_state *ws)
{
	if (!ws)
		return;
	for (int i = 0; i < 2; i++) {
		loom_bo_free(ws->buf[i].stack);
		loom_bo_free(ws->buf[i].records);
	}
	free(ws->unrun);
	free(ws->live);
	free(ws->m.base);
	free(ws->m.claim);
	free(ws->m.slot_payload);
	free(ws->m.slot_taken);
	free(ws->m.slot_held);
	free(ws->m.steps);
	free(ws->items);
	free(ws->held);
	free(ws->recs);
	free(ws->left);
	free(ws->carry_slot);
	free(ws->carry_held);
	free(ws->carried);
	free(ws);
}

uint32_t loom_work_stack_batch(const struct device_worker *w)
{
	uint32_t max = w->run->max_batch;

	return max < WORK_BATCH_MAX ? max : WORK_BATCH_MAX;
}

/* Buffer @b's stack and records. */
static int setup_buf(struct device_worker *w, struct work_buf *b)
{
	int ret = loom_bo_alloc(w->dev, WORK_STACK *
				sizeof(struct loom_hw_work_entry), 0,
				&b->stack);

	if (!ret)
		ret = loom_bo_alloc(w->dev, work_counters_offset() +
				    sizeof(struct loom_hw_counters), 0,
				    &b->records);
	return ret;
}

/* The RUN_WORK state of worker @w: its two buffers, and scratch. */
int loom_work_stack_setup(struct device_worker *w)
{
	uint32_t batch = w->run->max_batch;
	size_t slots = (size_t)WORK_RECORDS + WORK_STACK;
	struct work_state *ws = calloc(1, sizeof(*ws));
	int ret;

	if (!ws)
		return -ENOMEM;
	w->work = ws;
	ws->stack_max = WORK_STACK;
	ws->max_held = (size_t)batch + WORK_RECORDS + 1;
	ws->unrun = calloc(batch, sizeof(*ws->unrun));
	ws->live = calloc(batch, sizeof(*ws->live));
	ws->m = (struct loom_work_match){
		.child_capacity = w->run->common.child_capacity,
		.max_slots = slots,
		.base = calloc(WORK_RECORDS, sizeof(*ws->m.base)),
		.claim = calloc(slots, sizeof(*ws->m.claim)),
		.slot_payload = calloc(slots, sizeof(*ws->m.slot_payload)),
		.slot_taken = calloc(slots, sizeof(*ws->m.slot_taken)),
		.slot_held = calloc(slots, sizeof(*ws->m.slot_held)),
		.steps = calloc(WORK_RECORDS, sizeof(*ws->m.steps)),
	};
	ws->items = calloc(WORK_RECORDS, sizeof(*ws->items));
	ws->held = calloc(ws->max_held, sizeof(*ws->held));
	ws->recs = calloc(WORK_RECORDS, sizeof(*ws->recs));
	ws->left = calloc(WORK_STACK, sizeof(*ws->left));
	ws->carry_slot = calloc(batch, sizeof(*ws->carry_slot));
	ws->carry_held = calloc(batch, sizeof(*ws->carry_held));
	ws->carried = calloc(batch, sizeof(*ws->carried));
	if (!ws->unrun || !ws->live || !ws->m.base || !ws->m.claim ||
	    !ws->m.slot_payload || !ws->m.slot_taken || !ws->m.slot_held ||
	    !ws->m.steps || !ws->items || !ws->held || !ws->recs ||
	    !ws->left || !ws->carry_slot || !ws->carry_held || !ws->carried)
		return -ENOMEM;
	ret = setup_buf(w, &ws->buf[0]);
	if (!ret)
		ret = setup_buf(w, &ws->buf[1]);
	return ret;
}
