// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: cores, their queues and interrupts
 *
 * Each core has a ring of LOOM_RING_SIZE descriptors and one completion
 * record per slot, in coherent DMA memory, plus a state-dump buffer.  A job
 * is written at the tail and the doorbell rung; the core's MSI-X vector
 * fires after each completion record lands, and the handler walks the
 * slots from the driver's head to the device's, signalling each job's
 * hardware fence with the errno its status maps to.
 *
 * Nothing the device writes is trusted: a head outside the window of jobs
 * in flight, or ahead of the device's count of completed jobs, is not
 * believed (the next interrupt or the hang check reads it again), a record
 * must echo its job's seqno (slots are cleared before reuse, so a record
 * never written shows as seqno 0), and a dump must carry the job's seqno
 * and the fabric size read at probe.  A job whose record is refused ends with EPROTO;
 * each kind of misbehaviour is logged once per core.  Dumps are copied out
 * of the device's buffer into preallocated stages and handed to the job's
 * record by a worker, which may sleep.
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <drm/drm_print.h>

#include "loom_drv.h"
#include "loom_trace.h"

static const char *loom_fence_driver_name(struct dma_fence *fence)
{
	return "loom";
}

static const char *loom_fence_timeline_name(struct dma_fence *fence)
{
	return "loom-core";
}

static const struct dma_fence_ops loom_fence_ops = {
	.get_driver_name = loom_fence_driver_name,
	.get_timeline_name = loom_fence_timeline_name,
};

static const char *loom_failed_fence_timeline_name(struct dma_fence *fence)
{
	return "loom-failed";
}

static const struct dma_fence_ops loom_failed_fence_ops = {
	.get_driver_name = loom_fence_driver_name,
	.get_timeline_name = loom_failed_fence_timeline_name,
};

/**
 * loom_hw_failed_fence - the hardware fence of a job that fails unrun
 * @core: the job's core
 * @error: the job's error, or 0 for a job the device finished already
 *
 * The fence is signalled with @error before it is returned.  run_job()
 * hands it to the scheduler rather than NULL: a resubmitted job without a
 * hardware fence is completed by 6.7+'s drm_sched_start() with -ECANCELED,
 * over the error the job has.
 *
 * Return: the fence, or NULL without memory.
 */
struct dma_fence *loom_hw_failed_fence(struct loom_core *core, int error)
{
	struct dma_fence *fence = kzalloc(sizeof(*fence), GFP_KERNEL);

	if (!fence)
		return NULL;
	dma_fence_init(fence, &loom_failed_fence_ops, &core->failed_lock,
		       core->failed_context, atomic64_inc_return(&core->failed_seqno));
	if (error)
		dma_fence_set_error(fence, error);
	dma_fence_signal(fence);
	return fence;
}

static void loom_core_misbehaved(struct loom_core *core, enum loom_hw_fault kind,
				 u32 value)
{
	static const char * const what[LOOM_HW_FAULT_COUNT] = {
		[LOOM_HW_FAULT_HEAD] = "a queue head its completed jobs do not explain",
		[LOOM_HW_FAULT_SEQNO] = "a completion record with the wrong seqno",
		[LOOM_HW_FAULT_DUMP] = "a state dump that does not fit its fabric",
	};

	atomic64_inc(&core->hw_faults);
	if (!test_and_set_bit(kind, &core->logged))
		dev_err(&core->ldev->pdev->dev,
			"core %u: device wrote %s (0x%x); not trusted\n",
			core->index, what[kind], value);
}

/*
 * Copies the dump of the job with @seqno out of the device's buffer into a
 * free stage for @job, if it is that job's and has the fabric's size.
 * Returns whether a stage now holds it.  core->lock held.
 */
static bool loom_core_stage_dump_locked(struct loom_core *core,
					struct loom_job *job, u64 seqno)
{
	const struct loom_hw_dump *hdr = core->dump;
	struct loom_device *ldev = core->ldev;
	struct loom_dump_stage *stage = NULL;
	struct loom_hw_dump copy;
	unsigned int i;
	u32 len;

	lockdep_assert_held(&core->lock);
	memcpy(&copy, hdr, sizeof(copy));
	if (copy.magic != LOOM_DUMP_MAGIC || copy.seqno != seqno)
		return false;
	if (copy.width != LOOM_FABRIC_WIDTH(ldev->fabric) ||
	    copy.height != LOOM_FABRIC_HEIGHT(ldev->fabric)) {
		loom_core_misbehaved(core, LOOM_HW_FAULT_DUMP,
				     copy.width | copy.height << 8);
		return false;
	}
	for (i = 0; i < LOOM_DUMP_STAGES && !stage; i++)
		if (!core->stages[i].len)
			stage = &core->stages[i];
	if (!stage) {
		atomic64_inc(&core->dumps_dropped);
		return false;
	}
	/* Probe bounded the fabric: this is at most LOOM_DUMP_MAX_SIZE. */
	len = LOOM_DUMP_SIZE(copy.width * copy.height);
	memcpy(stage->buf, hdr, len);
	/* The device may have begun the next job's dump meanwhile. */
	dma_rmb();
	if (READ_ONCE(hdr->seqno) != seqno)
		return false;
	memcpy(stage->buf, &copy, sizeof(copy));
	stage->len = len;
	stage->lf = loom_file_get(job->lf);
	stage->job_id = job->job_id;
	queue_work(ldev->wq, &core->dump_work);
	return true;
}

/* Finishes the job in the slot at core->head; core->lock held. */
static void loom_core_finish_slot_locked(struct loom_core *core)
{
	struct loom_job *job = core->inflight[core->head];
	struct loom_hw_completion rec;
	ktime_t now = ktime_get(), start;
	bool dump;
	int error;

	lockdep_assert_held(&core->lock);
	core->inflight[core->head] = NULL;
	if (!job)
		return;
	memcpy(&rec, &core->done[core->head], sizeof(rec));
	/* It ran from when it could start: queued, or the previous job's end. */
	start = ktime_after(job->queued_at, core->last_done) ? job->queued_at :
							       core->last_done;
	atomic64_add(ktime_to_ns(ktime_sub(now, start)),
		     &job->lf->busy_ns[core->index]);
	core->last_done = now;
	if (rec.seqno != job->hw_seqno) {
		loom_core_misbehaved(core, LOOM_HW_FAULT_SEQNO, (u32)rec.seqno);
		atomic64_inc(&core->jobs_failed);
		loom_job_hw_refused_locked(job);
		return;
	}
	if (core->stopping && rec.status == LOOM_STATUS_STOPPED) {
		/*
		 * The suspected job ended on its own before the stop: the stop
		 * caught the next one, which has done nothing wrong.  It runs
		 * again (the scheduler resubmits it).
		 */
		if (rec.seqno != core->stop_seqno) {
			loom_job_hw_drop_locked(job, -ECANCELED, false);
			return;
		}
		core->stop_hit = true;
		error = core->stop_error;
	} else {
		error = drm_loom_status_errno(rec.status);
	}
	dump = rec.status != LOOM_STATUS_OK &&
	       loom_core_stage_dump_locked(core, job, rec.seqno);
	/* counted before the fence wakes anyone who reads them */
	atomic64_inc(rec.status ? &core->jobs_failed : &core->jobs_done);
	loom_job_hw_done_locked(job, &rec, error, dump);
}

/*
 * Processes every completion the device has written; core->lock held.
 * The head must lie among the jobs in flight, and a job counts as done
 * only once LOOM_CORE_COMPLETED reached its seqno: a head that runs ahead
 * of the device's own count of finished jobs is not believed past it.
 */
unsigned int loom_hw_reap_locked(struct loom_core *core)
{
	u32 head = loom_core_read(core, LOOM_CORE_Q_HEAD);
	/* Read after the head: it is at least as new. */
	u32 completed = loom_core_read(core, LOOM_CORE_COMPLETED);
	u32 inflight = (core->tail - core->head) % LOOM_RING_SIZE;
	unsigned int reaped = 0;

	lockdep_assert_held(&core->lock);
	/*
	 * The ring was emptied for a reset of the function: a job the stop
	 * did not catch in time may still end, and the reset zeroes the head.
	 */
	if (core->quiesced)
		return 0;
	if (head >= LOOM_RING_SIZE ||
	    (head - core->head) % LOOM_RING_SIZE > inflight) {
		loom_core_misbehaved(core, LOOM_HW_FAULT_HEAD, head);
		return 0;
	}
	/* The record is written before the head moves: read it after. */
	dma_rmb();
	while (core->head != head) {
		struct loom_job *job = core->inflight[core->head];

		if (job && (s32)((u32)job->hw_seqno - completed) > 0) {
			loom_core_misbehaved(core, LOOM_HW_FAULT_HEAD, head);
			return reaped;
		}
		loom_core_finish_slot_locked(core);
		core->head = (core->head + 1) % LOOM_RING_SIZE;
		reaped++;
	}
	return reaped;
}

/*
 * A doorbell the device did not see leaves jobs on the ring it will never
 * start: its Q_TAIL is not ours.  Rings it again, and gives the job at the
 * head its deadline afresh (it has not run).  core->lock held.
 */
void loom_hw_check_doorbell_locked(struct loom_core *core)
{
	struct loom_job *job = core->inflight[core->head];

	lockdep_assert_held(&core->lock);
	if (core->head == core->tail ||
	    loom_core_read(core, LOOM_CORE_Q_TAIL) == core->tail)
		return;
	atomic64_inc(&core->doorbells_lost);
	loom_core_write(core, LOOM_CORE_Q_TAIL, core->tail);
	if (job)
		job->seen = false;
}

/* Hands staged dumps to their jobs' records; may sleep. */
void loom_hw_dump_work(struct work_struct *work)
{
	struct loom_core *core = container_of(work, struct loom_core, dump_work);
	unsigned int i;

	for (i = 0; i < LOOM_DUMP_STAGES; i++) {
		struct loom_dump_stage *stage = &core->stages[i];
		unsigned long flags;
		struct loom_file *lf;
		void *copy = NULL;
		u64 job_id;
		u32 len;

		spin_lock_irqsave(&core->lock, flags);
		len = stage->len;
		lf = stage->lf;
		job_id = stage->job_id;
		spin_unlock_irqrestore(&core->lock, flags);
		if (!len)
			continue;
		/* Only this worker empties a stage: it cannot change under us. */
		if (atomic64_add_return(len, &lf->dump_bytes) <=
		    DRM_LOOM_DUMP_BYTES_PER_FILE)
			copy = kvmalloc(len, GFP_KERNEL_ACCOUNT);
		if (copy)
			memcpy(copy, stage->buf, len);
		else
			atomic64_sub(len, &lf->dump_bytes);
		spin_lock_irqsave(&core->lock, flags);
		stage->len = 0;
		stage->lf = NULL;
		spin_unlock_irqrestore(&core->lock, flags);
		if (!copy)
			atomic64_inc(&core->dumps_dropped);
		loom_record_attach_dump(lf, job_id, copy, copy ? len : 0);
		loom_file_put(lf);
	}
}

static irqreturn_t loom_core_irq(int irq, void *arg)
{
	struct loom_core *core = arg;
	unsigned long flags;

	spin_lock_irqsave(&core->lock, flags);
	/* Spurious, or the hang check reaped first: harmless, but counted. */
	if (!loom_hw_reap_locked(core))
		atomic64_inc(&core->irqs_idle);
	spin_unlock_irqrestore(&core->lock, flags);
	return IRQ_HANDLED;
}

static irqreturn_t loom_error_irq(int irq, void *arg)
{
	struct loom_device *ldev = arg;
	u32 status = loom_read(ldev, LOOM_REG_ERROR_STATUS);

	loom_write(ldev, LOOM_REG_ERROR_STATUS, status);
	/* A device in a loop of errors must not flood the log. */
	dev_err_ratelimited(&ldev->pdev->dev, "device error 0x%x on core %u\n",
			    status & ~(0xffU << LOOM_ERROR_CORE_SHIFT),
			    status >> LOOM_ERROR_CORE_SHIFT);
	return IRQ_HANDLED;
}

/* Points the core at its ring and dump buffer and enables it. */
static void loom_core_start_locked(struct loom_core *core)
{
	lockdep_assert_held(&core->lock);
	loom_core_write(core, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
	loom_core_write(core, LOOM_CORE_Q_BASE_LO, lower_32_bits(core->ring_dma));
	loom_core_write(core, LOOM_CORE_Q_BASE_HI, upper_32_bits(core->ring_dma));
	loom_core_write(core, LOOM_CORE_Q_SIZE, LOOM_RING_SIZE);
	loom_core_write(core, LOOM_CORE_DUMP_LO, lower_32_bits(core->dump_dma));
	loom_core_write(core, LOOM_CORE_DUMP_HI, upper_32_bits(core->dump_dma));
	loom_core_write(core, LOOM_CORE_DUMP_SIZE, LOOM_DUMP_MAX_SIZE);
	loom_core_write(core, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE);
	core->head = 0;
	core->tail = 0;
}

static int loom_core_init(struct loom_device *ldev, unsigned int index)
{
	struct loom_core *core = &ldev->cores[index];
	struct device *dev = &ldev->pdev->dev;
	unsigned long flags;
	unsigned int i;
	int ret;

	core->ldev = ldev;
	core->index = index;
	spin_lock_init(&core->lock);
	INIT_DELAYED_WORK(&core->hang_work, loom_hang_work);
	INIT_WORK(&core->dump_work, loom_hw_dump_work);
	core->fence_context = dma_fence_context_alloc(1);
	core->failed_context = dma_fence_context_alloc(1);
	spin_lock_init(&core->failed_lock);
	for (i = 0; i < LOOM_DUMP_STAGES; i++) {
		core->stages[i].buf = devm_kzalloc(dev, LOOM_DUMP_MAX_SIZE, GFP_KERNEL);
		if (!core->stages[i].buf)
			return -ENOMEM;
	}
	core->ring = dmam_alloc_coherent(dev, LOOM_RING_SIZE * sizeof(*core->ring),
					 &core->ring_dma, GFP_KERNEL);
	core->done = dmam_alloc_coherent(dev, LOOM_RING_SIZE * sizeof(*core->done),
					 &core->done_dma, GFP_KERNEL);
	core->dump = dmam_alloc_coherent(dev, LOOM_DUMP_MAX_SIZE, &core->dump_dma,
					 GFP_KERNEL);
	if (!core->ring || !core->done || !core->dump)
		return -ENOMEM;

	core->irq = pci_irq_vector(ldev->pdev, LOOM_MSIX_CORE_VECTOR(index));
	ret = request_irq(core->irq, loom_core_irq, 0, "loom", core);
	if (ret) {
		core->irq = 0;
		return ret;
	}
	/* The handler may run from here on: it reads the ring state. */
	spin_lock_irqsave(&core->lock, flags);
	loom_core_start_locked(core);
	spin_unlock_irqrestore(&core->lock, flags);
	core->up_since = ktime_get();
	return 0;
}

/* Releases what loom_hw_init() took; the device does no DMA afterwards. */
void loom_hw_fini(struct loom_device *ldev)
{
	unsigned int i;

	loom_write(ldev, LOOM_REG_DEVICE_RESET, LOOM_RESET_MAGIC);
	for (i = 0; i < ldev->num_cores; i++) {
		if (ldev->cores[i].irq)
			free_irq(ldev->cores[i].irq, &ldev->cores[i]);
		ldev->cores[i].irq = 0;
	}
	if (ldev->error_irq)
		free_irq(ldev->error_irq, ldev);
	ldev->error_irq = 0;
	pci_free_irq_vectors(ldev->pdev);
}

int loom_hw_init(struct loom_device *ldev)
{
	struct pci_dev *pdev = ldev->pdev;
	unsigned int i, vectors = ldev->num_cores + 1;
	int ret;

	/* Rings, tables and pages are reached through LOOM_PTE_ADDR_MASK. */
	ret = dma_set_mask_and_coherent(&pdev->dev,
					DMA_BIT_MASK(fls64(LOOM_PTE_ADDR_MASK)));
	if (ret)
		return ret;
	/*
	 * The MMU maps a buffer page by page, so a mapped segment may be any
	 * length; left at the default 64 KiB, shmem's larger segments broke
	 * the DMA API's contract (DMA-API debugging reports it).  A PCI
	 * device always has the parameters this sets (and 6.12 returns void).
	 */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);
	pci_set_master(pdev);
	ret = pci_alloc_irq_vectors(pdev, vectors, vectors, PCI_IRQ_MSIX);
	if (ret < 0)
		return ret;
	ret = pci_irq_vector(pdev, LOOM_MSIX_ERROR_VECTOR(ldev->num_cores));
	if (ret >= 0)
		ret = request_irq(ret, loom_error_irq, 0, "loom-error", ldev);
	if (ret) {
		pci_free_irq_vectors(pdev);
		return ret;
	}
	ldev->error_irq = pci_irq_vector(pdev, LOOM_MSIX_ERROR_VECTOR(ldev->num_cores));
	for (i = 0; i < ldev->num_cores; i++) {
		ret = loom_core_init(ldev, i);
		if (ret) {
			loom_hw_fini(ldev);
			return ret;
		}
	}
	return 0;
}

/*
 * The device is going away: stop every core and fail every job on a ring
 * with -ENODEV.  The schedulers stay: jobs still queued reach run_job,
 * which fails them with -ENODEV too.
 */
void loom_hw_cancel_all(struct loom_device *ldev)
{
	unsigned long flags;
	unsigned int i, slot;

	for (i = 0; i < ldev->num_cores; i++) {
		struct loom_core *core = &ldev->cores[i];

		spin_lock_irqsave(&core->lock, flags);
		/* Under the lock: no reap may run between reset and drop. */
		loom_core_write(core, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
		for (slot = 0; slot < LOOM_RING_SIZE; slot++) {
			struct loom_job *job = core->inflight[slot];

			core->inflight[slot] = NULL;
			if (job)
				loom_job_hw_drop_locked(job, -ENODEV, true);
		}
		core->head = core->tail;
		spin_unlock_irqrestore(&core->lock, flags);
	}
}

/*
 * Writes @job's descriptor (cmd_va, cmd_size, pt_root) at the ring's tail
 * with @fence as its hardware fence, and rings the doorbell; core->lock
 * held.
 */
static void loom_hw_queue_locked(struct loom_core *core, struct loom_job *job,
				 struct dma_fence *fence)
{
	u32 slot = core->tail;

	lockdep_assert_held(&core->lock);
	dma_fence_init(fence, &loom_fence_ops, &core->lock, core->fence_context,
		       ++core->seqno);
	core->ring[slot] = job->desc;
	core->ring[slot].seqno = core->seqno;
	core->ring[slot].completion = core->done_dma + slot * sizeof(*core->done);
	/* seqno 0 is never issued: a record never written shows as such. */
	memset(&core->done[slot], 0, sizeof(core->done[slot]));
	core->inflight[slot] = job;
	/* Set before the doorbell: the completion may come at once. */
	job->hw_fence = dma_fence_get(fence);
	job->hw_seqno = core->seqno;
	job->queued_at = ktime_get();
	job->seen = false;
	core->tail = (slot + 1) % LOOM_RING_SIZE;
	/* The descriptor must be in memory before the doorbell. */
	dma_wmb();
	loom_core_write(core, LOOM_CORE_Q_TAIL, core->tail);
	/* After the write: its cost (an MMIO exit) belongs to ringing. */
	trace_loom_job_run(core->ldev->pdev, job->lf->client_id, job->job_id,
			   core->index, job->hw_seqno);
}

/*
 * Whether the direct path may put a job on @core's ring now: the core takes
 * jobs and has a slot the scheduler's credits leave free.  core->lock held.
 */
static bool loom_hw_direct_room_locked(struct loom_core *core)
{
	u32 used = (core->tail - core->head) % LOOM_RING_SIZE;

	lockdep_assert_held(&core->lock);
	return !core->sched_stopped && !core->stopping && !core->quiesced &&
	       !READ_ONCE(core->ldev->resetting) &&
	       core->direct_unclaimed < LOOM_DIRECT_MAX && used < LOOM_RING_SIZE - 1;
}

/*
 * Puts @job on the ring and arms the hang check.  Returns its hardware
 * fence (the caller's reference), ERR_PTR(-ENOMEM), or, on the @direct
 * path, NULL when loom_hw_direct_room_locked() says no.
 */
static struct dma_fence *loom_hw_queue(struct loom_core *core, struct loom_job *job,
				       bool direct)
{
	struct dma_fence *fence;
	unsigned long flags;

	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	if (!fence)
		return ERR_PTR(-ENOMEM);

	spin_lock_irqsave(&core->lock, flags);
	if (direct && !loom_hw_direct_room_locked(core)) {
		spin_unlock_irqrestore(&core->lock, flags);
		kfree(fence);
		return NULL;
	}
	loom_hw_queue_locked(core, job, fence);
	if (direct) {
		job->direct = true;
		core->direct_unclaimed++;
		atomic_inc(&job->lf->direct_jobs);
	}
	spin_unlock_irqrestore(&core->lock, flags);
	queue_delayed_work(core->ldev->hang_wq, &core->hang_work,
			   msecs_to_jiffies(LOOM_HANG_CHECK_MS));
	return fence;
}

/*
 * From run_job(): @job on the ring.  The scheduler's credit limit keeps
 * the ring from overflowing.  Returns the job's hardware fence.
 */
struct dma_fence *loom_hw_queue_job(struct loom_core *core, struct loom_job *job)
{
	return loom_hw_queue(core, job, false);
}

/*
 * The direct path: puts @job on the ring from SUBMIT, before the scheduler
 * gets to it, when loom_hw_direct_room_locked() allows.  The caller has
 * checked that nothing the job depends on is pending.  run_job() then
 * hands its hardware fence to the scheduler (loom_hw_take_queued()).
 * Returns whether the job is on the ring.
 */
bool loom_hw_queue_direct(struct loom_core *core, struct loom_job *job)
{
	struct dma_fence *fence = loom_hw_queue(core, job, true);

	if (IS_ERR_OR_NULL(fence))
		return false;
	/* The job holds the fence (job->hw_fence); ours is not needed. */
	dma_fence_put(fence);
	atomic64_inc(&core->jobs_direct);
	return true;
}

/*
 * A job the direct path took leaves it: run_job() claimed it, or it is
 * off the ring.  core->lock held.
 */
void loom_hw_direct_end_locked(struct loom_job *job)
{
	lockdep_assert_held(&job->core->lock);
	if (!job->direct)
		return;
	job->direct = false;
	job->core->direct_unclaimed--;
	if (atomic_dec_and_test(&job->lf->direct_jobs))
		wake_up_all(&job->lf->direct_wq);
}

/*
 * For run_job(): the fence of a job that needs no queueing, in *@fence:
 * one the direct path put on the ring (its hardware fence), or one the
 * device has finished already (a signalled fence with its error; NULL
 * without memory).  Returns false when the job is to be queued.
 */
bool loom_hw_take_queued(struct loom_core *core, struct loom_job *job,
			 struct dma_fence **fence)
{
	unsigned long flags;
	bool done;
	int error;

	spin_lock_irqsave(&core->lock, flags);
	if (job->direct) {
		loom_hw_direct_end_locked(job);
		*fence = dma_fence_get(job->hw_fence);
		spin_unlock_irqrestore(&core->lock, flags);
		return true;
	}
	done = job->hw_done;
	error = job->hw_error;
	spin_unlock_irqrestore(&core->lock, flags);
	if (!done)
		return false;
	*fence = loom_hw_failed_fence(core, error);
	return true;
}

/*
 * Stops a core and resets it; the job with hardware @seqno (a hung job,
 * or the one an operator's reset interrupts; 0 for none) fails with
 * @error.  The stop is attributed by the seqno of the record it produces:
 * that job, if the core obeys STOP while it runs, completes with
 * LOOM_STATUS_STOPPED (and a dump); but it may have ended on its own since
 * the caller looked, and the stop then catches the job after it, which is
 * dropped like every job still on the ring: its hardware fence is
 * signalled with -ECANCELED and the scheduler resubmits it.  The job with
 * @seqno, if still on the ring (the core ignored STOP), fails too.  Called
 * with the scheduler stopped.
 *
 * Return: whether the job with @seqno was stopped, rather than ended on
 * its own.
 */
bool loom_hw_stop_and_reset(struct loom_core *core, u64 seqno, int error)
{
	unsigned long flags;
	unsigned int i;
	bool hit;

	spin_lock_irqsave(&core->lock, flags);
	core->stop_seqno = seqno;
	core->stop_error = error;
	core->stop_hit = false;
	core->stopping = true;
	spin_unlock_irqrestore(&core->lock, flags);

	trace_loom_core_stop(core->ldev->pdev, core->index, seqno);
	loom_core_write(core, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE | LOOM_CTRL_STOP);
	for (i = 0; i < 100; i++) {
		if (loom_core_read(core, LOOM_CORE_STATUS) & LOOM_CORE_HALTED)
			break;
		usleep_range(1000, 2000);
	}

	spin_lock_irqsave(&core->lock, flags);
	loom_hw_reap_locked(core);
	hit = core->stop_hit;
	for (i = 0; i < LOOM_RING_SIZE; i++) {
		struct loom_job *job = core->inflight[i];
		bool stopped = job && seqno && job->hw_seqno == seqno;

		core->inflight[i] = NULL;
		hit |= stopped;
		if (job)
			loom_job_hw_drop_locked(job, error, stopped);
	}
	core->stopping = false;
	loom_core_start_locked(core);
	spin_unlock_irqrestore(&core->lock, flags);
	atomic64_inc(&core->resets);
	trace_loom_core_reset(core->ldev->pdev, core->index, hit);
	return hit;
}

/*
 * A reset of the whole function (FLR, or AER's recovery) is coming: empty
 * every ring.  If the device is @reachable each core is stopped first and
 * what it finished is reaped; the job a stop ends and every job not begun
 * are dropped for the scheduler to resubmit.  If it is not, the job at
 * each ring's head may have run partly and its result is lost: it fails
 * with -EIO.  Called with the schedulers stopped and the hang checks
 * cancelled.
 */
void loom_hw_quiesce(struct loom_device *ldev, bool reachable)
{
	unsigned long flags;
	unsigned int i, n;

	for (i = 0; i < ldev->num_cores; i++) {
		struct loom_core *core = &ldev->cores[i];

		spin_lock_irqsave(&core->lock, flags);
		/* seqno 0 is never issued: every STOPPED record is dropped */
		core->stop_seqno = 0;
		core->stopping = true;
		spin_unlock_irqrestore(&core->lock, flags);
		if (reachable)
			loom_core_write(core, LOOM_CORE_CTRL,
					LOOM_CTRL_ENABLE | LOOM_CTRL_STOP);
	}
	for (i = 0; i < ldev->num_cores; i++) {
		struct loom_core *core = &ldev->cores[i];
		ktime_t until = ktime_add_ms(ktime_get(),
						READ_ONCE(ldev->quiesce_wait_ms));
		u32 status;

		/* halted in a job, or idle: with STOP set it starts no other */
		while (reachable && ktime_before(ktime_get(), until)) {
			status = loom_core_read(core, LOOM_CORE_STATUS);
			if ((status & LOOM_CORE_HALTED) || !(status & LOOM_CORE_BUSY))
				break;
			usleep_range(1000, 2000);
		}
		spin_lock_irqsave(&core->lock, flags);
		if (reachable)
			loom_hw_reap_locked(core);
		for (n = 0; n < LOOM_RING_SIZE; n++) {
			u32 slot = (core->head + n) % LOOM_RING_SIZE;
			struct loom_job *job = core->inflight[slot];

			core->inflight[slot] = NULL;
			if (job)
				loom_job_hw_drop_locked(job, -EIO, !reachable && !n);
		}
		core->head = core->tail;
		core->stopping = false;
		core->quiesced = true;
		spin_unlock_irqrestore(&core->lock, flags);
	}
}

/* After a reset of the whole function: bring every queue up again. */
void loom_hw_restart(struct loom_device *ldev)
{
	unsigned long flags;
	unsigned int i;

	loom_write(ldev, LOOM_REG_ERROR_STATUS, loom_read(ldev, LOOM_REG_ERROR_STATUS));
	for (i = 0; i < ldev->num_cores; i++) {
		struct loom_core *core = &ldev->cores[i];

		spin_lock_irqsave(&core->lock, flags);
		loom_core_start_locked(core);
		core->quiesced = false;
		/* The reset zeroed the progress counter: start the comparison over. */
		core->hang_progress = 0;
		spin_unlock_irqrestore(&core->lock, flags);
	}
}
