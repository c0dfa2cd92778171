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
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <drm/drm_print.h>

#include "loom_drv.h"

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

/* What a job's fence reports for each device status. */
int loom_hw_status_errno(u32 status)
{
	switch (status) {
	case LOOM_STATUS_OK:
		return 0;
	case LOOM_STATUS_MMU_FAULT:
		return -EFAULT;
	case LOOM_STATUS_DMA_ERROR:
		return -EIO;
	case LOOM_STATUS_STOPPED:
		return -ETIMEDOUT;
	case LOOM_STATUS_DEADLOCK:
		return -EDEADLK;
	case LOOM_STATUS_CHILD_OVERFLOW:
		return -ENOSPC;
	default:
		/* malformed commands, configurations or descriptors */
		return -EINVAL;
	}
}

/* Processes every completion the device has written; core->lock held. */
static void loom_core_reap(struct loom_core *core)
{
	u32 head = loom_core_read(core, LOOM_CORE_Q_HEAD);
	const struct loom_hw_dump *dump = core->dump;

	/* The record is written before the head moves: read it after. */
	dma_rmb();
	while (core->head != head && head < LOOM_RING_SIZE) {
		struct loom_job *job = core->inflight[core->head];
		const struct loom_hw_completion *rec = &core->done[core->head];
		bool has_dump = rec->status != LOOM_STATUS_OK &&
				dump->magic == LOOM_DUMP_MAGIC &&
				dump->seqno == rec->seqno;

		core->inflight[core->head] = NULL;
		if (job) {
			/* counted before the fence wakes anyone who reads them */
			atomic64_inc(rec->status ? &core->jobs_failed : &core->jobs_done);
			loom_job_hw_done(job, rec, has_dump ? dump : NULL,
					 has_dump ? LOOM_DUMP_SIZE(dump->width * dump->height) : 0);
		}
		core->head = (core->head + 1) % LOOM_RING_SIZE;
	}
}

static irqreturn_t loom_core_irq(int irq, void *arg)
{
	struct loom_core *core = arg;
	unsigned long flags;

	spin_lock_irqsave(&core->lock, flags);
	loom_core_reap(core);
	spin_unlock_irqrestore(&core->lock, flags);
	return IRQ_HANDLED;
}

static irqreturn_t loom_error_irq(int irq, void *arg)
{
	struct loom_device *ldev = arg;
	u32 status = loom_read(ldev, LOOM_REG_ERROR_STATUS);

	loom_write(ldev, LOOM_REG_ERROR_STATUS, status);
	dev_err(&ldev->pdev->dev, "device error 0x%x on core %u\n",
		status & ~(0xffU << LOOM_ERROR_CORE_SHIFT),
		status >> LOOM_ERROR_CORE_SHIFT);
	return IRQ_HANDLED;
}

/* Points the core at its ring and dump buffer and enables it. */
static void loom_core_start(struct loom_core *core)
{
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
	int ret;

	core->ldev = ldev;
	core->index = index;
	spin_lock_init(&core->lock);
	core->fence_context = dma_fence_context_alloc(1);
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
	loom_core_start(core);
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

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
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
 * with -ENODEV, then let the schedulers retire them.
 */
void loom_hw_cancel_all(struct loom_device *ldev)
{
	unsigned long flags;
	unsigned int i, slot;

	for (i = 0; i < ldev->num_cores; i++) {
		struct loom_core *core = &ldev->cores[i];
		int wait;

		loom_core_write(core, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
		spin_lock_irqsave(&core->lock, flags);
		for (slot = 0; slot < LOOM_RING_SIZE; slot++) {
			struct loom_job *job = core->inflight[slot];

			core->inflight[slot] = NULL;
			if (job)
				loom_job_hw_drop(job, -ENODEV, true);
		}
		spin_unlock_irqrestore(&core->lock, flags);
		/* free_job() runs in the scheduler thread: let it drain. */
		for (wait = 0; wait < 100 && !list_empty(&core->sched.pending_list); wait++)
			usleep_range(10000, 20000);
	}
}

/*
 * Writes @desc (cmd_va, cmd_size, pt_root) at the ring's tail for @job and
 * rings the doorbell.  Returns the job's hardware fence.  The scheduler's
 * credit limit keeps the ring from overflowing.
 */
struct dma_fence *loom_hw_queue_job(struct loom_core *core, struct loom_job *job,
				    const struct loom_hw_job *desc)
{
	struct dma_fence *fence;
	unsigned long flags;
	u32 slot;

	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	if (!fence)
		return ERR_PTR(-ENOMEM);

	spin_lock_irqsave(&core->lock, flags);
	slot = core->tail;
	dma_fence_init(fence, &loom_fence_ops, &core->lock, core->fence_context,
		       ++core->seqno);
	core->ring[slot] = *desc;
	core->ring[slot].seqno = core->seqno;
	core->ring[slot].completion = core->done_dma + slot * sizeof(*core->done);
	core->inflight[slot] = job;
	/* Set before the doorbell: the completion may come at once. */
	job->hw_fence = dma_fence_get(fence);
	core->tail = (slot + 1) % LOOM_RING_SIZE;
	/* The descriptor must be in memory before the doorbell. */
	dma_wmb();
	loom_core_write(core, LOOM_CORE_Q_TAIL, core->tail);
	spin_unlock_irqrestore(&core->lock, flags);
	return fence;
}

/*
 * Stops a hung core and resets it.  The job at the head completes with
 * LOOM_STATUS_STOPPED (and a dump) if the core obeys STOP; every job still
 * in the ring afterwards is cancelled: its hardware fence is signalled with
 * -ECANCELED, and the scheduler resubmits it.  Called with the scheduler
 * stopped.
 */
void loom_hw_stop_and_reset(struct loom_core *core)
{
	unsigned long flags;
	unsigned int i;

	loom_core_write(core, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE | LOOM_CTRL_STOP);
	for (i = 0; i < 100; i++) {
		if (loom_core_read(core, LOOM_CORE_STATUS) & LOOM_CORE_HALTED)
			break;
		usleep_range(1000, 2000);
	}

	spin_lock_irqsave(&core->lock, flags);
	loom_core_reap(core);
	for (i = 0; i < LOOM_RING_SIZE; i++) {
		struct loom_job *job = core->inflight[i];

		core->inflight[i] = NULL;
		if (job)
			loom_job_hw_drop(job, -ECANCELED, false);
	}
	loom_core_start(core);
	spin_unlock_irqrestore(&core->lock, flags);
	atomic64_inc(&core->resets);
}
