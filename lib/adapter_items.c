// SPDX-License-Identifier: MIT
/*
 * DOC: the device adapter's items dispatches
 *
 * One batch of a worker as one items dispatch (LOOM_PKT_DISPATCH_ITEMS):
 * write the payloads, launch through the worker's ring, reap the CQE,
 * then for each item in batch order publish the children its record
 * reports (one group, in spawn order, which is ordinal order) and complete
 * it.  A dispatch whose job failed is never published from: its items
 * are all cancelled.
 *
 * Each dispatch ends with a WRITE_COUNTERS into the result BO's tail
 * (after the records): the run sums what the device did without an ioctl
 * per dispatch (loom_device_account_job(), which the work stack's packets
 * use too).
 */
#include <errno.h>
#include <string.h>

#include "adapter_items.h"

/* Marks a result record the device has not written (it writes reserved 0). */
#define RECORD_UNWRITTEN	0xffffffffu

static const struct loom_item_result *record(const struct device_worker *w,
					     size_t i)
{
	return (const struct loom_item_result *)
		((const char *)loom_bo_map(w->results) + i * w->run->record_size);
}

/*
 * The item a failed dispatch failed on.  Its items were in flight together
 * and the device writes no record header after a failure but the one of an
 * item that overflowed (uapi: struct loom_pkt_dispatch_items): that item,
 * or else the first of the batch.
 */
static size_t failing_index(const struct device_worker *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (record(w, i)->reserved != RECORD_UNWRITTEN)
			return i;
	return 0;
}

/*
 * Copies record @i's children into w->children and returns its
 * child_count, read once.  The result BO stays writable by the device
 * (a hostile or broken one may rewrite it at any time): what is checked
 * and what is published must be one snapshot, as adapter_work.c copies
 * its records.  A count above the capacity copies nothing and is
 * returned as is, for loom_adapter_publish() to refuse.
 */
static uint32_t copy_record(struct device_worker *w, size_t i)
{
	const struct loom_item_result *rec = record(w, i);
	/* one load: the count checked is the count used */
	uint32_t count = __atomic_load_n(&rec->child_count, __ATOMIC_RELAXED);

	if (count <= w->run->common.child_capacity)
		memcpy(w->children, rec->children, count * sizeof(uint64_t));
	return count;
}

/* The counters area: after the max_batch records. */
static uint64_t counters_offset(const struct device_worker *w)
{
	return w->run->record_size * w->run->max_batch;
}

void loom_device_account_job(struct device_worker *w, size_t n,
			     uint64_t submit_ns, int error,
			     const struct loom_hw_counters *hw)
{
	const struct loom_work_device_config *c = w->run->config;
	struct loom_job_record rec = {
		.thread = c->thread,
		.device = w->index % c->n_devices,
		.queue = w->core,
		.worker = w->index,
		.occurrence = loom_adapter_occurrence(&w->run->common),
		.items = n,
		.submit_ns = submit_ns,
		.done_ns = loom_now_ns(),
		.error = error,
	};

	if (!error) {
		rec.counters = (struct loom_hw_counters){
			hw->cycles, hw->firings, hw->stalls, hw->instances,
			hw->items, hw->spawns, hw->mem_reads, hw->mem_writes,
		};
		loom_counters_add(&w->counters, &rec.counters);
	}
	if (c->observe_job)
		c->observe_job(c->observe_job_ctx, &rec);
}

/* Runs one batch of @n items on the device, then publishes and retires. */
void loom_device_run_items(struct device_worker *w, size_t n)
{
	const struct loom_work_device_config *c = w->run->config;
	uint64_t *payloads = loom_bo_map(w->payloads);
	struct loom_launch l = {
		.kind = LOOM_LAUNCH_ITEMS,
		.thread = c->thread,
		.args = w->args,
		.n_args = c->n_args,
		.items = n,
		.payload_va = loom_bo_va(w->payloads),
		.result_va = loom_bo_va(w->results),
		.counters_va = loom_bo_va(w->results) + counters_offset(w),
		.queue = w->core,
	};
	struct loom_completion done;
	uint64_t submit_ns = loom_now_ns();
	int ret;

	for (size_t i = 0; i < n; i++) {
		struct loom_item_result *rec =
			(struct loom_item_result *)record(w, i);

		payloads[i] = w->batch[i].payload;
		rec->child_count = 0;
		rec->reserved = RECORD_UNWRITTEN;
		w->counts.steals += w->batch[i].from_worker != w->batch[i].worker;
	}
	ret = loom_ring_launch_for(w->ring, c->image, &l, NULL,
				   loom_adapter_occurrence(&w->run->common),
				   w->jobs);
	if (!ret) {
		w->jobs++;
		do	/* a signal may interrupt the wait; the job runs on */
			ret = loom_ring_reap(w->ring, &done, 1, true);
		while (ret == -EINTR || ret == -EAGAIN);
		if (ret == 1)
			w->counts.items_run += n;
		ret = ret == 1 ? done.res : ret < 0 ? ret : -EIO;
		loom_device_account_job(w, n, submit_ns, ret, (const void *)
				 ((const char *)loom_bo_map(w->results) +
				  counters_offset(w)));
	}
	if (ret) {
		size_t bad = failing_index(w, n);

		loom_adapter_fail(&w->run->common, LOOM_WORK_DEVICE_ERROR, ret,
				  &w->batch[bad]);
		for (size_t i = 0; i < n; i++)
			loom_adapter_cancel(&w->run->common, &w->counts,
					    &w->batch[i]);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t count = copy_record(w, i);

		if (c->observe && count <= w->run->common.child_capacity)
			c->observe(c->observe_ctx, &w->batch[i], w->children,
				   count);
		loom_adapter_publish(&w->run->common, &w->counts, &w->batch[i],
				     w->children, count);
	}
}

int loom_device_items_setup(struct device_worker *w)
{
	int ret = loom_bo_alloc(w->dev, 8ULL * w->run->max_batch, 0,
				&w->payloads);

	if (!ret)
		ret = loom_bo_alloc(w->dev, counters_offset(w) +
				    sizeof(struct loom_hw_counters), 0,
				    &w->results);
	return ret;
}
