// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: jobs, the scheduler and hang recovery
 *
 * SUBMIT turns a command buffer and its BOs into a drm_sched job on the
 * submitting file's entity for the chosen core: in-syncobj fences and the
 * BOs' implicit fences become dependencies, the job's done fence goes to
 * the BOs' reservations and the out-syncobj.  The scheduler's run_job puts
 * it on the core's ring.
 *
 * Hangs are told from long jobs by the core's progress counter: every
 * LOOM_HANG_CHECK_MS while a core has jobs on its ring, loom's own hang
 * check samples it, and only a job that made no progress for its deadline,
 * ran ten deadlines, or ran past the runtime cap (max_job_ms) is stopped.
 * (The scheduler's own timeout is off: its handler would have to put a
 * long job back on the pending list by hand.)  Recovery uses the
 * scheduler's stop/resubmit/start: it stops the core (the job completes
 * with LOOM_STATUS_STOPPED and a state dump, which also goes to
 * devcoredump), resets it, fails the guilty job with -ETIMEDOUT and runs
 * the innocent ones again.  The stop is attributed by the seqno of the
 * record it produces: the suspected job may have ended on its own since
 * the hang check looked, and a job the stop caught instead runs again.  A
 * process whose jobs hung DRM_LOOM_MAX_HANGS times is refused further
 * submissions with -ECANCELED.  An operator's reset of a core (sysfs,
 * loom_core_reset()) is the same recovery run by the hang check, with the
 * job the core was running failed with -ECANCELED and no one blamed.  A
 * reset of the whole PCI function (FLR, AER) goes through the same stop
 * and resubmission: loom_reset_prepare() and loom_reset_done().
 *
 * A file has at most DRM_LOOM_MAX_INFLIGHT_JOBS jobs between SUBMIT and
 * free_job(); SUBMIT waits for room, or fails with -EAGAIN when asked not
 * to wait.
 */

#include <linux/delay.h>
#include <linux/devcoredump.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>

#include "loom_compat.h"
#include "loom_drv.h"
#include "loom_trace.h"

#define LOOM_DEFAULT_DEADLINE_NS	(2ULL * NSEC_PER_SEC)

static struct loom_job *to_loom_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct loom_job, base);
}

static void loom_job_release(struct kref *ref)
{
	struct loom_job *job = container_of(ref, struct loom_job, refcount);
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	if (job->bos != job->bos_inline) {
		kvfree(job->bos);
		kvfree(job->bo_write);
	}
	loom_file_put(job->lf);
	kfree(job);
}

static void loom_job_put(struct loom_job *job)
{
	kref_put(&job->refcount, loom_job_release);
}

/* ---- outcome records (JOB_INFO) ------------------------------------------- */

static struct loom_job_record *loom_record(struct loom_file *lf, u64 job_id)
{
	return &lf->records[job_id % LOOM_JOB_RECORDS];
}

static void loom_record_free_dump(struct loom_file *lf, void *dump, u32 len)
{
	if (dump)
		atomic64_sub(len, &lf->dump_bytes);
	kvfree(dump);
}

static void loom_record_start(struct loom_file *lf, u64 job_id)
{
	struct loom_job_record *rec = loom_record(lf, job_id);
	unsigned long flags;
	void *old;
	u32 old_len;

	spin_lock_irqsave(&lf->records_lock, flags);
	old = rec->dump;
	old_len = rec->dump_len;
	memset(rec, 0, sizeof(*rec));
	rec->job_id = job_id;
	rec->state = DRM_LOOM_JOB_PENDING;
	rec->dump_core = -1;
	spin_unlock_irqrestore(&lf->records_lock, flags);
	loom_record_free_dump(lf, old, old_len);
}

/*
 * Records an outcome unless one was recorded already, and wakes JOB_INFO's
 * waiters (also from hard IRQ).  @dump_core is the core whose dump_work
 * will deliver the job's dump, or -1.
 */
static void loom_record_done(struct loom_file *lf, u64 job_id, int error,
			     const struct loom_hw_completion *hw, int dump_core)
{
	struct loom_job_record *rec = loom_record(lf, job_id);
	unsigned long flags;
	bool done = false;

	spin_lock_irqsave(&lf->records_lock, flags);
	if (rec->job_id == job_id && rec->state == DRM_LOOM_JOB_PENDING) {
		rec->state = DRM_LOOM_JOB_DONE;
		rec->error = error;
		if (hw)
			rec->hw = *hw;
		rec->dump_core = dump_core;
		done = true;
	}
	spin_unlock_irqrestore(&lf->records_lock, flags);
	/* Its barrier pairs with the waiter's, which then sees the state. */
	if (done && wq_has_sleeper(&lf->records_wq))
		wake_up_all(&lf->records_wq);
}

/* dump_work delivers a job's dump (NULL: there is none after all). */
void loom_record_attach_dump(struct loom_file *lf, u64 job_id, void *dump,
			     u32 len)
{
	struct loom_job_record *rec = loom_record(lf, job_id);
	unsigned long flags;

	spin_lock_irqsave(&lf->records_lock, flags);
	if (rec->job_id == job_id && rec->dump_core >= 0 && !rec->dump) {
		rec->dump = dump;
		rec->dump_len = len;
		rec->dump_core = -1;
		dump = NULL;
	}
	spin_unlock_irqrestore(&lf->records_lock, flags);
	loom_record_free_dump(lf, dump, len);
}

void loom_records_fini(struct loom_file *lf)
{
	unsigned int i;

	for (i = 0; i < LOOM_JOB_RECORDS; i++)
		loom_record_free_dump(lf, lf->records[i].dump, lf->records[i].dump_len);
}

static void loom_trace_job_done(struct loom_job *job, u32 status, int error,
				u64 cycles)
{
	trace_loom_job_done(job->core->ldev->pdev, job->lf->client_id,
			    job->job_id, job->core->index, job->hw_seqno, status,
			    error, cycles);
}

static void loom_job_signal_hw_locked(struct loom_job *job, int error)
{
	struct dma_fence *fence = job->hw_fence;

	lockdep_assert_held(&job->core->lock);
	loom_hw_direct_end_locked(job);
	job->hw_fence = NULL;
	if (!fence)
		return;
	if (error)
		dma_fence_set_error(fence, error);
	dma_fence_signal_locked(fence);
	dma_fence_put(fence);
}

/*
 * The device is done with @job; @rec is its completion record, @error what
 * its fences report, and a stage holds its dump when @dump_staged.  Called
 * with core->lock held, from the IRQ handler, the hang check or recovery.
 */
void loom_job_hw_done_locked(struct loom_job *job,
			     const struct loom_hw_completion *rec, int error,
			     bool dump_staged)
{
	lockdep_assert_held(&job->core->lock);
	job->hw_done = true;
	job->hw_error = error;
	loom_trace_job_done(job, rec->status, error, rec->counters.cycles);
	loom_record_done(job->lf, job->job_id, error, rec,
			 dump_staged ? (int)job->core->index : -1);
	atomic64_add(rec->counters.cycles, &job->lf->cycles[job->core->index]);
	/*
	 * The 6.1 scheduler does not pass the hardware fence's error on to
	 * the done fence: set it there too, before the signal completes it.
	 */
	if (error)
		dma_fence_set_error(&job->base.s_fence->finished, error);
	loom_job_signal_hw_locked(job, error);
}

/*
 * The device ended @job with a completion record that failed the checks:
 * the job fails with -EPROTO and nothing of the record is kept.
 * core->lock held.
 */
void loom_job_hw_refused_locked(struct loom_job *job)
{
	lockdep_assert_held(&job->core->lock);
	job->hw_done = true;
	job->hw_error = -EPROTO;
	loom_trace_job_done(job, LOOM_TRACE_NO_STATUS, -EPROTO, 0);
	loom_record_done(job->lf, job->job_id, -EPROTO, NULL, -1);
	dma_fence_set_error(&job->base.s_fence->finished, -EPROTO);
	loom_job_signal_hw_locked(job, -EPROTO);
}

/*
 * The device dropped @job without running it to the end: a reset (the
 * scheduler will resubmit it, @final false) or the device going away
 * (@final true: the job fails with @error).  core->lock held.
 */
void loom_job_hw_drop_locked(struct loom_job *job, int error, bool final)
{
	lockdep_assert_held(&job->core->lock);
	if (final) {
		loom_trace_job_done(job, LOOM_TRACE_NO_STATUS, error, 0);
		loom_record_done(job->lf, job->job_id, error, NULL, -1);
		dma_fence_set_error(&job->base.s_fence->finished, error);
	}
	loom_job_signal_hw_locked(job, -ECANCELED);
}

/* ---- the scheduler backend -------------------------------------------------- */

static struct dma_fence *loom_run_job(struct drm_sched_job *sched_job)
{
	struct loom_job *job = to_loom_job(sched_job);
	struct loom_device *ldev = job->core->ldev;
	struct dma_fence *fence;
	int idx;

	/*
	 * On the ring from SUBMIT already (the direct path), or finished: the
	 * device finished it after drm_sched_stop() took the scheduler's
	 * callback off its hardware fence and recovery resubmits it, or it
	 * came by the direct path and ended before the scheduler came.  It
	 * does not run twice.
	 */
	if (loom_hw_take_queued(job->core, job, &fence))
		return fence;
	/* Failed already: the guilty job of a hang, or its entity was killed. */
	if (unlikely(sched_job->s_fence->finished.error))
		return loom_hw_failed_fence(job->core, sched_job->s_fence->finished.error);
	if (!drm_dev_enter(&ldev->drm, &idx)) {
		dma_fence_set_error(&sched_job->s_fence->finished, -ENODEV);
		return loom_hw_failed_fence(job->core, -ENODEV);
	}
	fence = loom_hw_queue_job(job->core, job);
	drm_dev_exit(idx);
	return fence;
}

/*
 * Stops the core's scheduler for a recovery or a reset: from here until
 * loom_core_sched_restart() no job takes the direct path, which would put
 * it on the ring before the jobs the scheduler is to run again.
 */
static void loom_core_sched_stop(struct loom_core *core)
{
	unsigned long flags;

	spin_lock_irqsave(&core->lock, flags);
	core->sched_stopped = true;
	spin_unlock_irqrestore(&core->lock, flags);
	drm_sched_stop(&core->sched, NULL);
}

/* Runs again the jobs the scheduler had running, and restarts it. */
static void loom_core_sched_restart(struct loom_core *core)
{
	unsigned long flags;

	drm_sched_resubmit_jobs(&core->sched);
	loom_sched_start(&core->sched);
	spin_lock_irqsave(&core->lock, flags);
	core->sched_stopped = false;
	spin_unlock_irqrestore(&core->lock, flags);
}

/* The hung job's state dump, for whoever debugs the hang. */
static void loom_hang_coredump(struct loom_core *core, struct loom_job *bad)
{
	struct loom_job_record *rec;
	unsigned long flags;
	u32 dump_len = 0;
	void *dump;

	flush_work(&core->dump_work);
	/* dev_coredumpv() takes ownership and vfree()s it. */
	dump = vmalloc(LOOM_DUMP_MAX_SIZE);
	spin_lock_irqsave(&bad->lf->records_lock, flags);
	rec = loom_record(bad->lf, bad->job_id);
	if (dump && rec->job_id == bad->job_id && rec->dump) {
		dump_len = min_t(u32, rec->dump_len, LOOM_DUMP_MAX_SIZE);
		memcpy(dump, rec->dump, dump_len);
	}
	spin_unlock_irqrestore(&bad->lf->records_lock, flags);
	if (dump_len)
		dev_coredumpv(&core->ldev->pdev->dev, dump, dump_len, GFP_KERNEL);
	else
		vfree(dump);
}

/*
 * Stops the core, fails @bad with -ETIMEDOUT if the stop caught it, and
 * runs every other job of the core again, except those the device
 * finished meanwhile (run_job() completes them with their own result).
 * Holds a reference to @bad: drm_sched_stop() may free it if it finished
 * meanwhile.
 */
static void loom_recover(struct loom_core *core, struct loom_job *bad)
{
	struct loom_device *ldev = core->ldev;
	u32 delay_ms = READ_ONCE(ldev->hang_stop_delay_ms);

	loom_core_sched_stop(core);
	if (unlikely(delay_ms))
		msleep(delay_ms);
	if (loom_hw_stop_and_reset(core, bad->hw_seqno, -ETIMEDOUT)) {
		loom_hang_coredump(core, bad);
		loom_client_hung(ldev, bad->lf->client);
	}
	loom_core_sched_restart(core);
}

/* Whether the running @job is hung at @now; updates its progress marks. */
static bool loom_job_hung_locked(struct loom_core *core, struct loom_job *job,
				 u32 progress, ktime_t now)
{
	u64 cap = (u64)READ_ONCE(loom_max_job_ms) * NSEC_PER_MSEC;

	lockdep_assert_held(&core->lock);
	if (!job->seen) {
		job->seen = true;
		job->started = now;
		job->last_progress = now;
	} else if (progress != core->hang_progress) {
		job->last_progress = now;
	}
	core->hang_progress = progress;
	return ktime_to_ns(ktime_sub(now, job->last_progress)) >= job->deadline ||
	       ktime_to_ns(ktime_sub(now, job->started)) >= min(10 * job->deadline, cap);
}

static void loom_trace_hang(struct loom_core *core, struct loom_job *job)
{
	ktime_t now = ktime_get();

	trace_loom_job_hang(core->ldev->pdev, job->lf->client_id, job->job_id,
			    core->index, job->hw_seqno,
			    ktime_to_ns(ktime_sub(now, job->started)),
			    ktime_to_ns(ktime_sub(now, job->last_progress)));
}

/*
 * An operator's reset: stops the core, fails the job it was running with
 * -ECANCELED (its process is not blamed: nothing says the job was at
 * fault) and runs every other job of the core again.
 */
static void loom_operator_reset(struct loom_core *core)
{
	struct loom_job *job;
	unsigned long flags;
	u64 seqno = 0;

	loom_core_sched_stop(core);
	spin_lock_irqsave(&core->lock, flags);
	loom_hw_reap_locked(core);
	job = core->inflight[core->head];
	if (job)
		seqno = job->hw_seqno;
	spin_unlock_irqrestore(&core->lock, flags);
	loom_hw_stop_and_reset(core, seqno, -ECANCELED);
	loom_core_sched_restart(core);
}

static void loom_core_reset_request(struct loom_core *core)
{
	atomic_set(&core->reset_requested, 1);
	mod_delayed_work(core->ldev->hang_wq, &core->hang_work, 0);
}

/* Waits for the reset asked of @core; 0, or -EBUSY if it was not done. */
static int loom_core_reset_wait(struct loom_core *core)
{
	flush_delayed_work(&core->hang_work);
	/* Still asked for: the hang check stood down for a function reset. */
	return atomic_xchg(&core->reset_requested, 0) ? -EBUSY : 0;
}

/**
 * loom_core_reset - reset a core at an operator's request
 * @core: the core
 *
 * The job the core is running fails with -ECANCELED; the jobs queued
 * behind it run.  The reset is done by the core's hang check, which
 * therefore never races a hang recovery of the same core.  Sleeps until
 * it is done.
 *
 * Return: 0, or -EBUSY if a reset of the whole function is under way.
 */
int loom_core_reset(struct loom_core *core)
{
	int ret;

	mutex_lock(&core->ldev->operator_reset_lock);
	loom_core_reset_request(core);
	ret = loom_core_reset_wait(core);
	mutex_unlock(&core->ldev->operator_reset_lock);
	return ret;
}

/**
 * loom_device_reset - reset every core at an operator's request
 * @ldev: the device
 *
 * loom_core_reset() of every core, the cores in parallel.
 *
 * Return: 0, or -EBUSY if a reset of the whole function is under way.
 */
int loom_device_reset(struct loom_device *ldev)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&ldev->operator_reset_lock);
	for (i = 0; i < ldev->num_cores; i++)
		loom_core_reset_request(&ldev->cores[i]);
	for (i = 0; i < ldev->num_cores; i++)
		ret = loom_core_reset_wait(&ldev->cores[i]) ?: ret;
	mutex_unlock(&ldev->operator_reset_lock);
	return ret;
}

/*
 * The hang check: runs every LOOM_HANG_CHECK_MS while the core has jobs on
 * its ring.  It also reaps, in case an interrupt was lost or the device
 * showed a bogus head, and rings the doorbell again if the device missed it.
 */
void loom_hang_work(struct work_struct *work)
{
	struct loom_core *core = container_of(to_delayed_work(work),
					      struct loom_core, hang_work);
	struct loom_device *ldev = core->ldev;
	struct loom_job *job;
	unsigned long flags;
	bool hung = false, busy;
	int idx;

	/* A reset of the function is under way; loom_reset_done() re-arms. */
	if (READ_ONCE(ldev->resetting) || !drm_dev_enter(&ldev->drm, &idx))
		return;
	if (atomic_xchg(&core->reset_requested, 0))
		loom_operator_reset(core);
	spin_lock_irqsave(&core->lock, flags);
	loom_hw_reap_locked(core);
	loom_hw_check_doorbell_locked(core);
	job = core->inflight[core->head];
	if (job) {
		kref_get(&job->refcount);
		hung = loom_job_hung_locked(core, job,
					    loom_core_read(core, LOOM_CORE_PROGRESS),
					    ktime_get());
	}
	spin_unlock_irqrestore(&core->lock, flags);

	if (hung) {
		drm_dbg_driver(&ldev->drm, "core %u: job %llu hung\n", core->index,
			       job->job_id);
		loom_trace_hang(core, job);
		loom_recover(core, job);
	}
	if (job)
		loom_job_put(job);

	spin_lock_irqsave(&core->lock, flags);
	busy = core->head != core->tail;
	spin_unlock_irqrestore(&core->lock, flags);
	if (busy)
		queue_delayed_work(ldev->hang_wq, &core->hang_work,
				   msecs_to_jiffies(LOOM_HANG_CHECK_MS));
	drm_dev_exit(idx);
}

/**
 * loom_reset_prepare - quiesce before a reset of the whole function
 * @ldev: the device
 * @reachable: whether its registers still answer (not after an AER error)
 *
 * Stops the hang checks (waiting for a recovery under way) and the
 * schedulers, and empties the rings (loom_hw_quiesce()).  Jobs wait in
 * their entities, or on the scheduler's pending list to be run again by
 * loom_reset_done().  Called with the PCI device locked.
 */
void loom_reset_prepare(struct loom_device *ldev, bool reachable)
{
	unsigned int i;

	trace_loom_function_reset(ldev->pdev, false, reachable);
	WRITE_ONCE(ldev->resetting, true);
	for (i = 0; i < ldev->num_cores; i++)
		cancel_delayed_work_sync(&ldev->cores[i].hang_work);
	for (i = 0; i < ldev->num_cores; i++)
		loom_core_sched_stop(&ldev->cores[i]);
	loom_hw_quiesce(ldev, reachable);
}

/**
 * loom_reset_done - bring the device back after loom_reset_prepare()
 * @ldev: the device
 *
 * Restarts the queues (the reset emptied the device's TLB: the page tables
 * are the driver's and need nothing) and runs again every job the reset
 * did not fail.
 */
void loom_reset_done(struct loom_device *ldev)
{
	unsigned int i;

	loom_hw_restart(ldev);
	trace_loom_function_reset(ldev->pdev, true, true);
	WRITE_ONCE(ldev->resetting, false);
	for (i = 0; i < ldev->num_cores; i++)
		loom_core_sched_restart(&ldev->cores[i]);
}

static void loom_free_job(struct drm_sched_job *sched_job)
{
	struct loom_job *job = to_loom_job(sched_job);
	struct loom_file *lf = job->lf;

	/* Jobs that never reached the device record their fence's error. */
	loom_record_done(lf, job->job_id, sched_job->s_fence->finished.error,
			 NULL, -1);
	drm_sched_job_cleanup(sched_job);
	atomic_dec(&lf->inflight);
	wake_up(&lf->inflight_wq);
	loom_job_put(job);
}

static const struct drm_sched_backend_ops loom_sched_ops = {
	.run_job = loom_run_job,
	.free_job = loom_free_job,
};

int loom_sched_init_all(struct loom_device *ldev)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ldev->num_cores; i++) {
		struct loom_sched_params params = {
			.ops = &loom_sched_ops,
			/* the rest of the ring is the direct path's */
			.credit_limit = LOOM_RING_SIZE - 1 - LOOM_DIRECT_MAX,
			/* loom_hang_work() watches the jobs instead */
			.timeout = MAX_SCHEDULE_TIMEOUT,
			.name = "loom",
			.dev = &ldev->pdev->dev,
		};

		ret = loom_sched_init(&ldev->cores[i].sched, &params);
		if (ret) {
			while (i--)
				drm_sched_fini(&ldev->cores[i].sched);
			return ret;
		}
	}
	return 0;
}

void loom_sched_fini_all(struct loom_device *ldev)
{
	unsigned int i;

	for (i = 0; i < ldev->num_cores; i++)
		drm_sched_fini(&ldev->cores[i].sched);
}

/* ---- SUBMIT ---------------------------------------------------------------- */

/* Index of @obj in the job's BO list, or -1. */
static int loom_job_find_bo(struct loom_job *job, struct drm_gem_object *obj)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		if (job->bos[i] == obj)
			return i;
	return -1;
}

/* Adds a looked-up BO (consuming the reference); duplicates are EINVAL. */
static int loom_job_add_bo(struct loom_job *job, struct drm_gem_object *obj,
			   bool write)
{
	if (loom_job_find_bo(job, obj) >= 0 ||
	    to_loom_bo(obj)->lf != job->lf) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	job->bos[job->bo_count] = obj;
	job->bo_write[job->bo_count++] = write;
	return 0;
}

static int loom_job_lookup_bos(struct loom_job *job, struct drm_file *file,
			       const struct drm_loom_submit *args)
{
	struct drm_loom_bo_ref refs_inline[LOOM_JOB_INLINE_BOS - 1], *refs = refs_inline;
	struct drm_gem_object *obj;
	u32 i, n = args->bo_count + 1;
	int ret = 0;

	/* The lists hold the command BO too, if it is not among @bos. */
	if (n <= LOOM_JOB_INLINE_BOS) {
		job->bos = job->bos_inline;
		job->bo_write = job->bo_write_inline;
	} else {
		job->bos = kvcalloc(n, sizeof(*job->bos), GFP_KERNEL_ACCOUNT);
		job->bo_write = kvcalloc(n, sizeof(*job->bo_write), GFP_KERNEL_ACCOUNT);
		refs = kvmalloc_array(args->bo_count, sizeof(*refs), GFP_KERNEL_ACCOUNT);
		if (!job->bos || !job->bo_write || !refs) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (copy_from_user(refs, u64_to_user_ptr(args->bos),
			   args->bo_count * sizeof(*refs))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < args->bo_count && !ret; i++) {
		u32 flags = refs[i].flags;

		if (!flags || (flags & ~(DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE))) {
			ret = -EINVAL;
			break;
		}
		obj = drm_gem_object_lookup(file, refs[i].handle);
		if (!obj) {
			ret = -ENOENT;
			break;
		}
		ret = loom_job_add_bo(job, obj, flags & DRM_LOOM_BO_REF_WRITE);
	}
out:
	if (refs != refs_inline)
		kvfree(refs);
	return ret;
}

/* The command BO is read by the job: in the list already, or added. */
static int loom_job_set_cmd(struct loom_job *job, struct drm_file *file,
			    const struct drm_loom_submit *args)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, args->cmd_handle);
	int idx;

	if (!obj)
		return -ENOENT;
	if ((u64)args->cmd_offset + args->cmd_size > obj->size ||
	    to_loom_bo(obj)->lf != job->lf) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	job->desc.cmd_va = to_loom_bo(obj)->node.start + args->cmd_offset;
	job->desc.cmd_size = args->cmd_size;
	job->desc.pt_root = job->lf->vm.root_dma;
	idx = loom_job_find_bo(job, obj);
	if (idx >= 0) {
		drm_gem_object_put(obj);
		return 0;
	}
	return loom_job_add_bo(job, obj, false);
}

/* One in-fence: a binary handle's fence, or a timeline point's. */
static int loom_job_add_in_fence(struct loom_job *job, struct drm_file *file,
				 const struct drm_loom_syncobj_point *p)
{
	struct dma_fence *fence;
	int ret;

	if (p->flags & ~DRM_LOOM_SYNC_FLAGS)
		return -EINVAL;
	/*
	 * ENOENT: no such syncobj; EINVAL: no fence (at that point).  A
	 * point to wait for got its fence in loom_submit_wait_for_points().
	 */
	ret = drm_syncobj_find_fence(file, p->handle, p->point, 0, &fence);
	if (ret)
		return ret;
	return drm_sched_job_add_dependency(&job->base, fence);
}

/**
 * loom_submit_wait_for_points - the waits for submission, before the job
 * @file: the submitting file
 * @args: the SUBMIT arguments
 * @nonblock: fail with -EAGAIN rather than wait
 *
 * Waits until every in-syncobj point flagged DRM_LOOM_SYNC_WAIT_FOR_SUBMIT
 * has a fence.  Called outside drm_dev_enter(): the wait is on userspace,
 * which removal must not wait out, nor may it hold a lock (the DRM core
 * asserts that).  Errors in the arguments are left to loom_submit().
 */
int loom_submit_wait_for_points(struct drm_file *file,
				const struct drm_loom_submit *args, bool nonblock)
{
	struct drm_loom_syncobj_point __user *user = u64_to_user_ptr(args->in_syncobjs);
	struct drm_loom_syncobj_point p;
	struct dma_fence *fence;
	u32 i;
	int ret;

	if (!(args->flags & DRM_LOOM_SUBMIT_TIMELINE) ||
	    args->in_syncobj_count > DRM_LOOM_MAX_IN_SYNCOBJS)
		return 0;
	for (i = 0; i < args->in_syncobj_count; i++) {
		if (copy_from_user(&p, &user[i], sizeof(p)))
			return 0;
		if (!(p.flags & DRM_LOOM_SYNC_WAIT_FOR_SUBMIT))
			continue;
		ret = drm_syncobj_find_fence(file, p.handle, p.point, 0, &fence);
		if (ret == -EINVAL) {
			/* io_uring retries from its worker, where waiting is fine */
			if (nonblock || (args->flags & DRM_LOOM_SUBMIT_NONBLOCK))
				return -EAGAIN;
			ret = drm_syncobj_find_fence(file, p.handle, p.point,
						     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
						     &fence);
			if (ret == -ETIME || ret == -EINTR || ret == -ERESTARTSYS)
				return ret;
		}
		if (!ret)
			dma_fence_put(fence);
	}
	return 0;
}

/* Reads the in-syncobjs, plain handles or timeline points, once. */
static int loom_job_add_syncobj_deps(struct loom_job *job, struct drm_file *file,
				     const struct drm_loom_submit *args)
{
	void __user *user = u64_to_user_ptr(args->in_syncobjs);
	bool timeline = args->flags & DRM_LOOM_SUBMIT_TIMELINE;
	size_t size = timeline ? sizeof(struct drm_loom_syncobj_point) : sizeof(u32);
	struct drm_loom_syncobj_point p = {};
	void *in;
	u32 i;
	int ret = 0;

	if (!args->in_syncobj_count)
		return 0;
	in = kvmalloc_array(args->in_syncobj_count, size, GFP_KERNEL_ACCOUNT);
	if (!in)
		return -ENOMEM;
	if (copy_from_user(in, user, args->in_syncobj_count * size))
		ret = -EFAULT;
	for (i = 0; i < args->in_syncobj_count && !ret; i++) {
		if (timeline)
			p = ((struct drm_loom_syncobj_point *)in)[i];
		else
			p.handle = ((u32 *)in)[i];
		ret = loom_job_add_in_fence(job, file, &p);
	}
	kvfree(in);
	return ret;
}

static int loom_submit_check(struct loom_device *ldev, struct loom_file *lf,
			     const struct drm_loom_submit *args)
{
	if (args->flags & ~DRM_LOOM_SUBMIT_FLAGS)
		return -EINVAL;
	/* A point needs a timeline submit and a syncobj to put it on. */
	if (args->out_point && (!(args->flags & DRM_LOOM_SUBMIT_TIMELINE) ||
				!args->out_syncobj))
		return -EINVAL;
	if (args->queue >= ldev->num_cores)
		return -EINVAL;
	if (!args->cmd_size || args->cmd_size > LOOM_CMD_MAX_SIZE ||
	    args->cmd_size % 4 || args->cmd_offset % 8)
		return -EINVAL;
	if (args->bo_count > DRM_LOOM_MAX_BOS ||
	    args->in_syncobj_count > DRM_LOOM_MAX_IN_SYNCOBJS ||
	    args->deadline_ns > DRM_LOOM_MAX_DEADLINE_NS)
		return -EINVAL;
	if (atomic_read(&lf->client->hangs) >= DRM_LOOM_MAX_HANGS)
		return -ECANCELED;
	return 0;
}

/*
 * Takes one of the file's in-flight slots, waiting for one unless told not
 * to.  The wait runs inside drm_dev_enter(), which removal waits out before
 * it ends the jobs that would make room: removal wakes it first, and it
 * fails with -ENODEV.
 */
static int loom_inflight_get(struct loom_file *lf, bool nonblock)
{
	struct loom_device *ldev = lf->ldev;

	while (!atomic_add_unless(&lf->inflight, 1, DRM_LOOM_MAX_INFLIGHT_JOBS)) {
		int ret;

		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(lf->inflight_wq,
					       atomic_read(&lf->inflight) <
					       DRM_LOOM_MAX_INFLIGHT_JOBS ||
					       READ_ONCE(ldev->unplugging));
		if (ret)
			return ret;
		if (READ_ONCE(ldev->unplugging))
			return -ENODEV;
	}
	return 0;
}

/*
 * Locks the BOs, waits on their fences, then queues and publishes the job.
 * *@done receives a reference to its done fence.
 */
/* Where the job's done fence goes: a syncobj, and a point of it or none. */
struct loom_out_sync {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};

static void loom_out_sync_signal(struct loom_out_sync *out, struct dma_fence *done)
{
	if (out->chain) {
		/* The syncobj takes the chain node */
		drm_syncobj_add_point(out->syncobj, out->chain, done, out->point);
		out->chain = NULL;
	} else if (out->syncobj) {
		drm_syncobj_replace_fence(out->syncobj, done);
	}
}

/*
 * The direct path (loom_hw_queue_direct()): at SUBMIT a job goes on the
 * ring itself, a scheduler-worker hop earlier, when nothing it waits for
 * is pending: every dependency signalled and every earlier job of its
 * entity run, so that the ring keeps the entity's order.  The scheduler
 * still takes the job, its fences and its end as for any other.  Called
 * with sched_lock held, before the push.
 */
static void loom_job_try_direct(struct loom_device *ldev, struct loom_job *job)
{
	unsigned int core = job->core->index;
	struct dma_fence *prev = job->lf->last_scheduled[core], *dep;
	unsigned long index;
	int idx;

	lockdep_assert_held(&ldev->sched_lock);
	job->lf->last_scheduled[core] = dma_fence_get(&job->base.s_fence->scheduled);
	if (!READ_ONCE(loom_direct_submit) || (prev && !dma_fence_is_signaled(prev)))
		goto out;
	xa_for_each(&job->base.dependencies, index, dep)
		if (!dma_fence_is_signaled(dep))
			goto out;
	if (drm_dev_enter(&ldev->drm, &idx)) {
		loom_hw_queue_direct(job->core, job);
		drm_dev_exit(idx);
	}
out:
	dma_fence_put(prev);
}

static int loom_job_push(struct loom_device *ldev, struct loom_job *job,
			 struct loom_out_sync *out, struct dma_fence **done)
{
	struct ww_acquire_ctx ctx;
	u32 i;
	int ret;

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &ctx);
	if (ret)
		return ret;
	for (i = 0; i < job->bo_count && !ret; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (!ret)
			ret = drm_sched_job_add_implicit_dependencies(&job->base,
								      job->bos[i],
								      job->bo_write[i]);
	}
	if (ret) {
		drm_gem_unlock_reservations(job->bos, job->bo_count, &ctx);
		return ret;
	}

	mutex_lock(&ldev->sched_lock);
	drm_sched_job_arm(&job->base);
	/* Taken before the push: the job may be done and cleaned up at once. */
	*done = dma_fence_get(&job->base.s_fence->finished);
	loom_record_start(job->lf, job->job_id);
	trace_loom_job_submit(ldev->pdev, job->lf->client_id, job->job_id,
			      job->core->index, (*done)->seqno);
	/* Before it can run: BOs freed from now on wait for it. */
	loom_vm_add_fence(&job->lf->vm, job->core->index, *done);
	/* The scheduler's reference, dropped in free_job(). */
	kref_get(&job->refcount);
	loom_job_try_direct(ldev, job);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&ldev->sched_lock);

	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, *done, job->bo_write[i] ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ctx);
	loom_out_sync_signal(out, *done);
	return 0;
}

/* Looks up the out-syncobj and, for a timeline point, allocates its node. */
static int loom_out_sync_get(struct loom_out_sync *out, struct drm_file *file,
			     const struct drm_loom_submit *args)
{
	if (!args->out_syncobj)
		return 0;
	out->syncobj = drm_syncobj_find(file, args->out_syncobj);
	if (!out->syncobj)
		return -ENOENT;
	if (!args->out_point)
		return 0;
	out->point = args->out_point;
	out->chain = dma_fence_chain_alloc();
	return out->chain ? 0 : -ENOMEM;
}

static void loom_out_sync_put(struct loom_out_sync *out)
{
	dma_fence_chain_free(out->chain);
	if (out->syncobj)
		drm_syncobj_put(out->syncobj);
}

/*
 * The SUBMIT ioctl's work, shared with uring_cmd.  On success *@done (if
 * non-NULL) receives a reference to the job's done fence.  With @nonblock
 * (or DRM_LOOM_SUBMIT_NONBLOCK) a full in-flight budget is -EAGAIN.
 */
int loom_submit(struct loom_device *ldev, struct drm_file *file,
		struct drm_loom_submit *args, bool nonblock, struct dma_fence **done)
{
	struct loom_file *lf = file->driver_priv;
	struct loom_out_sync out = {};
	struct dma_fence *fence = NULL;
	struct loom_job *job;
	int ret;

	ret = loom_submit_check(ldev, lf, args);
	if (ret)
		return ret;
	ret = loom_inflight_get(lf, nonblock || (args->flags & DRM_LOOM_SUBMIT_NONBLOCK));
	if (ret)
		return ret;
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job) {
		ret = -ENOMEM;
		goto err_inflight;
	}
	kref_init(&job->refcount);
	job->lf = loom_file_get(lf);
	job->core = &ldev->cores[args->queue];
	job->deadline = args->deadline_ns ?: LOOM_DEFAULT_DEADLINE_NS;
	job->job_id = atomic64_inc_return(&lf->next_job_id);

	ret = loom_job_lookup_bos(job, file, args);
	if (!ret)
		ret = loom_job_set_cmd(job, file, args);
	if (ret)
		goto err_put;
	ret = loom_out_sync_get(&out, file, args);
	if (ret)
		goto err_syncobj;
	ret = loom_sched_job_init(&job->base, &lf->entity[args->queue], file);
	if (ret)
		goto err_syncobj;
	ret = loom_job_add_syncobj_deps(job, file, args);
	if (!ret)
		ret = loom_job_push(ldev, job, &out, &fence);
	if (ret) {
		drm_sched_job_cleanup(&job->base);
		goto err_syncobj;
	}
	args->job_id = job->job_id;
	if (done)
		*done = fence;
	else
		dma_fence_put(fence);

err_syncobj:
	loom_out_sync_put(&out);
err_put:
	loom_job_put(job);
err_inflight:
	/* A job that was pushed gives its slot back in free_job(). */
	if (ret) {
		atomic_dec(&lf->inflight);
		wake_up(&lf->inflight_wq);
	}
	return ret;
}

int loom_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	return loom_submit(to_loom_device(drm), file, data, false, NULL);
}

/* ---- JOB_INFO -------------------------------------------------------------- */

/* A dump still on its way to the record arrives before JOB_INFO reads it. */
static void loom_job_info_flush_dump(struct loom_file *lf, u64 job_id)
{
	struct loom_job_record *rec = loom_record(lf, job_id);
	unsigned long flags;
	int core;

	spin_lock_irqsave(&lf->records_lock, flags);
	core = rec->job_id == job_id ? rec->dump_core : -1;
	spin_unlock_irqrestore(&lf->records_lock, flags);
	if (core >= 0)
		flush_work(&lf->ldev->cores[core].dump_work);
}

/*
 * JOB_INFO_WAIT's condition: the job is done, or its record is gone (a
 * later job took the slot: ENOENT), or the device is going away.
 */
static bool loom_job_info_settled(struct loom_file *lf, u64 job_id)
{
	struct loom_job_record *rec = loom_record(lf, job_id);
	unsigned long flags;
	bool settled;

	spin_lock_irqsave(&lf->records_lock, flags);
	settled = rec->job_id != job_id || rec->state == DRM_LOOM_JOB_DONE;
	spin_unlock_irqrestore(&lf->records_lock, flags);
	return settled || READ_ONCE(lf->ldev->unplugging);
}

/*
 * Sleeps until the job is settled or the absolute CLOCK_MONOTONIC
 * @timeout_ns passes (0 or past: not at all).  Every job the file
 * submitted ends exactly once and its end records it (loom_record_done(),
 * the last in free_job()), so a waiter does not outlive its job; removal
 * wakes the waiters of one held back by a fence nobody will signal.  The
 * deadline is absolute, so a restart after a signal waits no longer.
 */
static int loom_job_info_wait(struct loom_file *lf, u64 job_id, s64 timeout_ns)
{
	long ret;

	ret = wait_event_interruptible_timeout(lf->records_wq,
					       loom_job_info_settled(lf, job_id),
					       drm_timeout_abs_to_jiffies(timeout_ns));
	if (ret < 0)
		return ret;
	return READ_ONCE(lf->ldev->unplugging) ? -ENODEV : 0;
}

int loom_ioctl_job_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct loom_file *lf = file->driver_priv;
	struct drm_loom_job_info *args = data;
	struct loom_job_record *rec;
	const struct loom_hw_completion *hw;
	unsigned long flags;
	void *dump = NULL;
	u32 dump_len = 0;
	int ret = 0;

	if ((args->flags & ~DRM_LOOM_JOB_INFO_FLAGS) || !args->job_id ||
	    (!(args->flags & DRM_LOOM_JOB_INFO_WAIT) && args->timeout_ns))
		return -EINVAL;
	if (args->flags & DRM_LOOM_JOB_INFO_WAIT) {
		ret = loom_job_info_wait(lf, args->job_id, args->timeout_ns);
		if (ret)
			return ret;
	}
	loom_job_info_flush_dump(lf, args->job_id);
	spin_lock_irqsave(&lf->records_lock, flags);
	rec = loom_record(lf, args->job_id);
	if (rec->job_id != args->job_id) {
		ret = -ENOENT;
	} else {
		hw = &rec->hw;
		args->state = rec->state;
		args->error = rec->error;
		args->hw_status = hw->status;
		args->detail = hw->detail;
		args->fault_va = hw->fault_va;
		args->packet_offset = hw->packet_offset;
		args->packet_opcode = hw->packet_opcode;
		args->counters = hw->counters;
		if (rec->dump && args->dump && args->dump_size)
			dump = kmemdup(rec->dump, min(args->dump_size, rec->dump_len),
				       GFP_ATOMIC);
		dump_len = rec->dump_len;
		/* Still pending: the deadline passed (or there was none). */
		if ((args->flags & DRM_LOOM_JOB_INFO_WAIT) &&
		    rec->state == DRM_LOOM_JOB_PENDING)
			ret = -ETIME;
	}
	spin_unlock_irqrestore(&lf->records_lock, flags);
	if (ret == -ENOENT)
		return ret;
	if (dump && copy_to_user(u64_to_user_ptr(args->dump), dump,
				 min(args->dump_size, dump_len)))
		ret = -EFAULT;
	kfree(dump);
	args->dump_size = dump_len;
	return ret;
}
