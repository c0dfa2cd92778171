// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: debugfs
 *
 * /sys/kernel/debug/dri/N/queues: per core, the device's queue registers,
 * the driver's view of the ring, jobs in flight, completed, failed and
 * recovered from hangs, completions refused because the device wrote them
 * wrong, state dumps dropped, interrupts that completed nothing and
 * doorbells the device missed.
 *
 * hang_stop_delay_ms (testing): milliseconds recovery sleeps between
 * deciding a job hung and stopping its core (0, the default: none).
 * fail_pt_alloc (testing): the n-th next page-table allocation of any
 * address space fails (0, the default: none).
 * quiesce_wait_ms (testing): how long a reset of the function waits for
 * each core to stop before it empties the ring regardless (0: not at all,
 * as with a device slow to stop).
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "loom_drv.h"

static void loom_debugfs_core(struct seq_file *m, struct loom_core *core)
{
	unsigned long flags;
	u32 head, tail, inflight = 0, i;

	spin_lock_irqsave(&core->lock, flags);
	head = core->head;
	tail = core->tail;
	for (i = 0; i < LOOM_RING_SIZE; i++)
		inflight += !!core->inflight[i];
	spin_unlock_irqrestore(&core->lock, flags);

	seq_printf(m, "core %u: head %u tail %u in-flight %u\n", core->index,
		   head, tail, inflight);
	seq_printf(m, "  device: head %u tail %u status 0x%x progress %u completed %u\n",
		   loom_core_read(core, LOOM_CORE_Q_HEAD),
		   loom_core_read(core, LOOM_CORE_Q_TAIL),
		   loom_core_read(core, LOOM_CORE_STATUS),
		   loom_core_read(core, LOOM_CORE_PROGRESS),
		   loom_core_read(core, LOOM_CORE_COMPLETED));
	seq_printf(m, "  jobs: done %lld failed %lld resets %lld\n",
		   atomic64_read(&core->jobs_done), atomic64_read(&core->jobs_failed),
		   atomic64_read(&core->resets));
	seq_printf(m, "  refused from the device: %lld, dumps dropped: %lld\n",
		   atomic64_read(&core->hw_faults), atomic64_read(&core->dumps_dropped));
	seq_printf(m, "  interrupts with nothing to reap: %lld, doorbells rung again: %lld\n",
		   atomic64_read(&core->irqs_idle), atomic64_read(&core->doorbells_lost));
	seq_printf(m, "  put on the ring at SUBMIT: %lld\n",
		   atomic64_read(&core->jobs_direct));
}

static int loom_debugfs_queues(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct loom_device *ldev = to_loom_device(node->minor->dev);
	unsigned int i;
	int idx;

	if (!drm_dev_enter(&ldev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < ldev->num_cores; i++)
		loom_debugfs_core(m, &ldev->cores[i]);
	drm_dev_exit(idx);
	return 0;
}

static const struct drm_info_list loom_debugfs_list[] = {
	{ "queues", loom_debugfs_queues, 0 },
};

void loom_debugfs_init(struct drm_minor *minor)
{
	struct loom_device *ldev = to_loom_device(minor->dev);

	drm_debugfs_create_files(loom_debugfs_list, ARRAY_SIZE(loom_debugfs_list),
				 minor->debugfs_root, minor);
	/* Testing only: widens the window between a hang decision and STOP. */
	debugfs_create_u32("hang_stop_delay_ms", 0600, minor->debugfs_root,
			   &ldev->hang_stop_delay_ms);
	/* Testing only: fails the n-th next page-table allocation. */
	debugfs_create_atomic_t("fail_pt_alloc", 0600, minor->debugfs_root,
				&ldev->fail_pt_alloc);
	/* Testing only: a reset that does not wait for the cores to stop. */
	debugfs_create_u32("quiesce_wait_ms", 0600, minor->debugfs_root,
			   &ldev->quiesce_wait_ms);
}
