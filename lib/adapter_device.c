// SPDX-License-Identifier: MIT
/*
 * DOC: the device adapter
 *
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
 * The items dispatch of a batch is adapter_items.c, the work stack's way
 * of running one adapter_work.c; this file is the run and its workers.
 *
 * Captures: the launch has one capture list (config->args), whose memrefs
 * are VAs of devices[0]; each device gets it translated through the share
 * groups of the BOs (bo.c), so every item writes the same memory whichever
 * device runs it.  A memref no device can be given is refused before
 * anything runs, and so are deprecated per-device lists (device_args) that
 * are not one list seen from each device.
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

#include "adapter_items.h"
#include "adapter_work.h"

static void *worker_main(void *arg)
{
	struct device_worker *w = arg;
	size_t max = w->work ? loom_work_stack_batch(w) : w->run->max_batch;
	bool started = false;
	size_t n;

	while (loom_sched_acquire_batch(w->run->common.sched, w->index, w->batch,
					max, LOOM_SCHED_WAIT, &n) == LOOM_OK) {
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
	for (uint32_t i = 0; i < run->config->sched.workers; i++) {
		const struct device_worker *w = &run->workers[i];

		loom_adapter_add_counts(r, &w->counts);
		result->jobs_submitted += w->jobs;
		loom_counters_add(&result->counters, &w->counters);
	}
}

static void free_workers(struct device_run *run)
{
	if (!run->workers)
		return;
	for (uint32_t i = 0; i < run->config->sched.workers; i++) {
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
	w->args = run->captures + (size_t)(i % c->n_devices) * c->n_args;
	w->batch = loom_lines_alloc(run->max_batch, sizeof(*w->batch));
	w->children = calloc(run->common.child_capacity + 1,
			     sizeof(*w->children));
	if (!w->batch || !w->children)
		return -ENOMEM;
	ret = loom_ring_create(w->dev, 4, &w->ring);
	if (!ret)
		ret = loom_device_items_setup(w);
	if (!ret && uses_work_stack(w))
		ret = loom_work_stack_setup(w);
	return ret;
}

/* Every device must take the launch on every core a worker uses. */
static int check_devices(struct device_run *run)
{
	const struct loom_work_device_config *c = run->config;
	struct loom_thread_info info;

	for (uint32_t i = 0; i < c->sched.workers; i++) {
		unsigned core;
		struct loom_device *dev = worker_device(c, i, &core);
		struct loom_launch l = {
			.kind = LOOM_LAUNCH_ITEMS,
			.thread = c->thread,
			.args = run->captures + (size_t)(i % c->n_devices) * c->n_args,
			.n_args = c->n_args,
			.queue = core,
			.site = c->site,
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

static bool is_memref(enum loom_arg_type type)
{
	return type == LOOM_ARG_MEMREF_I32 || type == LOOM_ARG_MEMREF_I64 ||
	       type == LOOM_ARG_MEMREF_F32;
}

/*
 * Device @d's view of capture @k of @list, a capture list of devices[0]:
 * a memref translated through its BO's share group.
 */
static int capture_on(const struct loom_work_device_config *c,
		      const struct loom_arg *list, unsigned k, unsigned d,
		      struct loom_arg *out)
{
	*out = list[k];
	if (!is_memref(out->type))
		return 0;
	return loom_bo_translate_va(c->devices[0], list[k].value, c->devices[d],
				    &out->value);
}

/*
 * Fills run->captures: the one capture list seen from each device.  With
 * device_args, each device's list must be devices[0]'s so seen.  The
 * work-item entry is no capture: its value is never read.
 */
static int resolve_captures(struct device_run *run)
{
	const struct loom_work_device_config *c = run->config;
	const struct loom_arg *list = c->device_args ? c->device_args[0] : c->args;
	struct loom_thread_info info;
	int item;

	run->captures = calloc((size_t)c->n_devices * c->n_args + 1,
			       sizeof(*run->captures));
	if (!run->captures)
		return -ENOMEM;
	if (loom_image_thread(c->image, c->thread, &info))
		return LOOM_E_NO_THREAD;
	item = info.work_item_arg;
	for (unsigned d = 0; d < c->n_devices; d++) {
		struct loom_arg *mine = run->captures + (size_t)d * c->n_args;

		for (unsigned k = 0; k < c->n_args; k++) {
			int ret = capture_on(c, list, k, d, &mine[k]);

			if (ret && (int)k != item)
				return ret;
			if (c->device_args && (int)k != item &&
			    (c->device_args[d][k].type != mine[k].type ||
			     c->device_args[d][k].value != mine[k].value))
				return LOOM_E_CAPTURE_MISMATCH;
		}
	}
	return 0;
}

static enum loom_error start_run(struct device_run *run, int *device_error)
{
	const struct loom_work_device_config *c = run->config;
	enum loom_error err;
	int ret = resolve_captures(run);

	if (ret == -ENOMEM)
		return LOOM_WORK_OUT_OF_MEMORY;
	if (!ret)
		ret = check_devices(run);
	if (ret) {
		*device_error = ret;
		return LOOM_WORK_DEVICE_ERROR;
	}
	if (!loom_payload_fits(run->common.payload_type, c->root_payload))
		return LOOM_WORK_PAYLOAD_WIDTH;
	run->record_size = LOOM_ITEM_RESULT_SIZE(run->common.child_capacity);
	err = loom_sched_create(&c->sched, &run->common.sched);
	if (err)
		return err;
	run->workers = loom_lines_alloc(c->sched.workers, sizeof(*run->workers));
	if (!run->workers)
		return LOOM_WORK_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < c->sched.workers; i++) {
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

/*
 * The collective token: a syncobj of devices[0], signalled now, of the
 * domain's dispatch @occurrence.
 */
static int collective_token(const struct loom_work_device_config *c,
			    uint64_t occurrence, struct loom_token **out)
{
	struct loom_token *t;
	int ret = loom_token_new(c->devices[0], &t);

	if (ret)
		return ret;
	t->occurrence = occurrence;
	if (c->site)
		t->launch = *c->site;
	ret = t->dev->be->syncobj_signal(t->dev, t->syncobj);
	if (ret) {
		loom_token_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

static bool config_ok(const struct loom_work_device_config *c)
{
	if (!c || !c->image || !c->thread ||
	    (c->n_args && !c->args && !c->device_args) ||
	    !c->devices || !c->n_devices || !c->sched.workers ||
	    c->sched.workers == LOOM_SCHED_NO_WORKER || !c->sched.deque_capacity ||
	    c->sched.max_batch > LOOM_MAX_ITEMS)	/* one DISPATCH_ITEMS each */
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
	if (config->site)
		result->launch = *config->site;
	run.max_batch = config->sched.max_batch ? config->sched.max_batch : 1;
	if (loom_adapter_init(&run.common))
		return LOOM_WORK_OUT_OF_MEMORY;
	err = start_run(&run, &device_error);
	if (run.common.sched)
		result->work.occurrence = loom_adapter_occurrence(&run.common);
	atomic_init(&run.unstarted, config->sched.workers);
	if (!err) {
		loom_adapter_run_workers(run.workers, sizeof(*run.workers),
					 config->sched.workers, worker_main);
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
		device_error = collective_token(config, result->work.occurrence,
						&result->token);
		if (device_error) {
			result->device_error = device_error;
			err = LOOM_WORK_DEVICE_ERROR;
		}
	}
	free_workers(&run);
	free(run.captures);
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
