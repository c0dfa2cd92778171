// SPDX-License-Identifier: MIT
/*
 * adapter_device.c: the device adapter.  Drains one DynamicWork domain
 * through the bounded scheduler, running its items on devices as items
 * dispatches (LOOM_PKT_DISPATCH_ITEMS) or, where a device has
 * LOOM_CAP_RUN_WORK, through its on-device work stack (LOOM_PKT_RUN_WORK).
 *
 * Worker w is bound to device w % n_devices, core (w / n_devices) % cores,
 * and owns one io_uring and one payload and one result BO of max_batch
 * items.  Its loop: acquire a batch (blocking until work or completion),
 * write the payloads, launch one dispatch through its ring, reap the CQE,
 * then for each item in batch order publish the children its record
 * reports (one group, in spawn order, which is ordinal order) and complete
 * it.  The device never decides completion: only the scheduler's
 * retirements do, exactly as in the synchronous adapter.
 *
 * Each dispatch ends with a WRITE_COUNTERS into the result BO's tail
 * (after the records): the run sums what the device did without an ioctl
 * per dispatch.  The work stack's way of running a batch is in
 * adapter_work.c.
 *
 * A failure (a launch or job error, children that do not fit, more
 * children than the capacity) names the item, cancels the whole domain,
 * and every worker retires what it holds; cancelling needs no memory
 * (sched.c), so the domain always completes and every blocked worker
 * wakes.  A dispatch whose job failed is never published from: its items
 * are all cancelled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "adapter_device.h"

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

static void add_counters(struct loom_hw_counters *sum,
			 const struct loom_hw_counters *c)
{
	sum->cycles += c->cycles;
	sum->firings += c->firings;
	sum->stalls += c->stalls;
	sum->instances += c->instances;
	sum->items += c->items;
	sum->spawns += c->spawns;
	sum->mem_reads += c->mem_reads;
	sum->mem_writes += c->mem_writes;
}

/*
 * Sums a finished job's counters (@hw, written by its WRITE_COUNTERS) and
 * shows it to the observer.
 */
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
		add_counters(&w->counters, &rec.counters);
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
	ret = loom_ring_launch(w->ring, c->image, &l, w->jobs, NULL);
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

static void *worker_main(void *arg)
{
	struct device_worker *w = arg;
	size_t max = w->work ? loom_work_stack_batch(w) : w->run->max_batch;
	bool started = false;
	size_t n;

	while (loom_sched_acquire_batch(w->run->common.sched, w->index, w->batch,
					max, LOOM_SCHED_WAIT, &n) == LOOM_WORK_OK) {
		if (!started)
			atomic_fetch_sub_explicit(&w->run->unstarted, 1,
						  memory_order_relaxed);
		started = true;
		if (w->work)
			loom_work_stack_run(w, n);
		else
			loom_device_run_items(w, n);
	}
	return NULL;
}

static void sum_counts(const struct device_run *run,
		       struct loom_work_device_result *result)
{
	struct loom_work_sync_result *r = &result->work;

	r->items_cancelled = run->common.cancelled_queued;
	for (uint32_t i = 0; i < run->config->workers; i++) {
		const struct device_worker *w = &run->workers[i];

		loom_adapter_add_counts(r, &w->counts);
		result->jobs_submitted += w->jobs;
		add_counters(&result->counters, &w->counters);
	}
}

static void free_workers(struct device_run *run)
{
	if (!run->workers)
		return;
	for (uint32_t i = 0; i < run->config->workers; i++) {
		struct device_worker *w = &run->workers[i];

		/* waits for anything still in flight before the BOs go */
		loom_ring_destroy(w->ring);
		loom_bo_free(w->payloads);
		loom_bo_free(w->results);
		loom_work_stack_free(w->work);
		free(w->batch);
		free(w->children);
	}
	free(run->workers);
}

/* Whether worker @w drains through its device's work stack. */
static bool uses_work_stack(const struct device_worker *w)
{
	return (loom_device_info(w->dev)->hw_caps & LOOM_CAP_RUN_WORK) &&
	       !(w->run->config->flags & LOOM_WORK_DEVICE_ITEMS_ONLY);
}

/* Worker @i's device and core (a device without cores fails its checks). */
static struct loom_device *worker_device(const struct loom_work_device_config *c,
					 uint32_t i, unsigned *core)
{
	struct loom_device *dev = c->devices[i % c->n_devices];
	unsigned cores = loom_device_info(dev)->num_cores;

	*core = cores ? (i / c->n_devices) % cores : 0;
	return dev;
}

/* Sets worker @i up; a device error is returned as such (negative). */
static int setup_worker(struct device_run *run, uint32_t i)
{
	const struct loom_work_device_config *c = run->config;
	struct device_worker *w = &run->workers[i];
	int ret;

	w->run = run;
	w->index = i;
	w->dev = worker_device(c, i, &w->core);
	w->args = c->device_args ? c->device_args[i % c->n_devices] : c->args;
	w->batch = loom_lines_alloc(run->max_batch, sizeof(*w->batch));
	w->children = calloc(run->common.child_capacity + 1,
			     sizeof(*w->children));
	if (!w->batch || !w->children)
		return -ENOMEM;
	ret = loom_ring_create(w->dev, 4, &w->ring);
	if (!ret)
		ret = loom_bo_alloc(w->dev, 8ULL * run->max_batch, 0,
				    &w->payloads);
	if (!ret)
		ret = loom_bo_alloc(w->dev, counters_offset(w) +
				    sizeof(struct loom_hw_counters), 0,
				    &w->results);
	if (!ret && uses_work_stack(w))
		ret = loom_work_stack_setup(w);
	return ret;
}

/* Every device must take the launch on every core a worker uses. */
static int check_devices(struct device_run *run)
{
	const struct loom_work_device_config *c = run->config;
	struct loom_thread_info info;

	for (uint32_t i = 0; i < c->workers; i++) {
		unsigned core;
		struct loom_device *dev = worker_device(c, i, &core);
		struct loom_launch l = {
			.kind = LOOM_LAUNCH_ITEMS,
			.thread = c->thread,
			.args = c->device_args ? c->device_args[i % c->n_devices] :
						 c->args,
			.n_args = c->n_args,
			.queue = core,
		};
		int ret = loom_launch_check(dev, c->image, &l);

		if (ret)
			return ret;
	}
	if (loom_image_thread(c->image, c->thread, &info))
		return LOOM_E_NO_THREAD;
	run->common.child_capacity = info.child_capacity;
	/* the loader admitted only payload types the runtime carries */
	run->common.payload_type = info.arg_types[info.work_item_arg];
	return 0;
}

static enum loom_error start_run(struct device_run *run, int *device_error)
{
	const struct loom_work_device_config *c = run->config;
	struct loom_sched_config sc = {
		.occurrence = c->occurrence,
		.workers = c->workers,
		.deque_capacity = c->deque_capacity,
		.max_batch = run->max_batch,
		.flags = c->flags & LOOM_WORK_DEVICE_NO_TRACE ?
			 LOOM_SCHED_NO_TRACE : 0,
	};
	enum loom_error err;
	int ret = check_devices(run);

	if (ret) {
		*device_error = ret;
		return LOOM_WORK_DEVICE_ERROR;
	}
	if (!loom_payload_fits(run->common.payload_type, c->root_payload))
		return LOOM_WORK_PAYLOAD_WIDTH;
	run->record_size = LOOM_ITEM_RESULT_SIZE(run->common.child_capacity);
	err = loom_sched_create(&sc, &run->common.sched);
	if (err)
		return err;
	run->workers = loom_lines_alloc(c->workers, sizeof(*run->workers));
	if (!run->workers)
		return LOOM_WORK_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < c->workers; i++) {
		ret = setup_worker(run, i);
		if (ret == -ENOMEM)
			return LOOM_WORK_OUT_OF_MEMORY;
		if (ret) {
			*device_error = ret;
			return LOOM_WORK_DEVICE_ERROR;
		}
	}
	return loom_sched_admit(run->common.sched, c->root_payload, NULL);
}

/* The collective token: a syncobj of devices[0], signalled now. */
static int collective_token(const struct loom_work_device_config *c,
			    struct loom_token **out)
{
	struct loom_token *t;
	int ret = loom_token_new(c->devices[0], &t);

	if (ret)
		return ret;
	ret = drmSyncobjSignal(loom_device_fd(c->devices[0]), &t->syncobj, 1);
	if (ret) {
		loom_token_free(t);
		return ret < 0 ? ret : -EIO;
	}
	*out = t;
	return 0;
}

static bool config_ok(const struct loom_work_device_config *c)
{
	if (!c || !c->image || !c->thread ||
	    (c->n_args && !c->args && !c->device_args) ||
	    !c->devices || !c->n_devices || !c->workers ||
	    c->workers == LOOM_SCHED_NO_WORKER || !c->deque_capacity ||
	    c->max_batch > LOOM_MAX_ITEMS)	/* one DISPATCH_ITEMS each */
		return false;
	for (unsigned i = 0; i < c->n_devices; i++)
		if (!c->devices[i] ||
		    (c->device_args && c->n_args && !c->device_args[i]))
			return false;
	return true;
}

enum loom_error loom_work_device_run(const struct loom_work_device_config *config,
					  struct loom_work_device_result *result)
{
	struct device_run run = { .config = config };
	enum loom_error err;
	int device_error = 0;

	if (!config_ok(config) || !result)
		return LOOM_WORK_INVALID_ARGUMENT;
	memset(result, 0, sizeof(*result));
	run.max_batch = config->max_batch ? config->max_batch : 1;
	if (loom_adapter_init(&run.common))
		return LOOM_WORK_OUT_OF_MEMORY;
	err = start_run(&run, &device_error);
	atomic_init(&run.unstarted, config->workers);
	if (!err) {
		loom_adapter_run_workers(run.workers, sizeof(*run.workers),
					 config->workers, worker_main);
		sum_counts(&run, result);
		err = loom_sched_take_trace(run.common.sched, &result->work.trace);
	} else {
		result->device_error = device_error;
	}
	if (!err) {
		err = loom_adapter_outcome(&run.common, &result->work);
		result->device_error = run.common.device_error;
	}
	if (!err && (config->flags & LOOM_WORK_DEVICE_TOKEN)) {
		device_error = collective_token(config, &result->token);
		if (device_error) {
			result->device_error = device_error;
			err = LOOM_WORK_DEVICE_ERROR;
		}
	}
	free_workers(&run);
	loom_sched_destroy(run.common.sched);
	loom_adapter_fini(&run.common);
	return err;
}

void loom_work_device_result_free(struct loom_work_device_result *result)
{
	if (!result)
		return;
	loom_work_sync_result_free(&result->work);
	loom_token_free(result->token);
	memset(result, 0, sizeof(*result));
}
