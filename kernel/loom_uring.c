// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: io_uring submission
 *
 * IORING_OP_URING_CMD with DRM_LOOM_URING_CMD_SUBMIT carries a struct
 * drm_loom_submit in a 128-byte SQE.  The job is submitted as by the ioctl,
 * and the command completes when the job's done fence signals: the fence
 * callback (which may run in hard-IRQ context) only queues task work, and
 * the task work posts the CQE with the fence's error.  Every accepted
 * command completes exactly once, because every done fence signals —
 * timeouts, resets and device removal included.
 *
 * The CQE's second word (io_uring_cmd_done()'s res2, big_cqe[0] of a ring
 * set up with IORING_SETUP_CQE32) is the job's id, as SUBMIT returns it,
 * so JOB_INFO can be asked about a job submitted this way; 0 when the
 * submit itself failed.  A ring without CQE32 drops it.
 *
 * uring_cmd does not pass through drm_ioctl(): the checks drm_ioctl()
 * would make (device present, a loom file) are made here.  An issue with
 * IO_URING_F_NONBLOCK (io_uring makes it holding its own lock) never waits
 * for room in the file's in-flight budget: it gets -EAGAIN, and io_uring
 * issues the command again from a worker that may wait.  Its in-syncobjs
 * are then looked up at that later issue.  An inline issue interrupted
 * while waiting for a BO's lock is issued again from a worker too.
 *
 * Where io_uring can cancel commands (6.7+), a ring that goes away with
 * commands pending completes them with -ECANCELED at once instead of
 * waiting for their jobs; the jobs themselves run to their end.
 *
 * A command issued from io-wq (IOSQE_ASYNC, or the retry after -EAGAIN)
 * can be cancelled, or its fence can signal, while its issue still runs.
 * So the fence callback is armed before the command is marked cancelable
 * (a cancellation then always finds it armed), and the command completes
 * only once both the issue is done with it and its end is known: the fence
 * signalled, or a cancellation took the callback off.  Whichever of the
 * two comes second completes it, exactly once.
 */

#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "loom_compat.h"
#include "loom_drv.h"
#include "loom_trace.h"

/**
 * struct loom_uring_cmd - a command waiting for its job
 * @ioucmd: the io_uring command
 * @done: the job's done fence (a reference)
 * @cb: on @done; its removal decides whether a cancellation owns the command
 * @job_id: the job's id, the CQE's res2
 * @pdev: the device, for tracing (the command's file keeps it)
 * @client_id: the file's drm-client-id, for tracing
 * @result: the CQE's res, set before @pending drops
 * @pending: 2 while the issue runs and the end is unknown; the issue and
 *	the end (the fence's callback, or a cancellation that removed it) each
 *	drop one, and whoever drops the last completes the command
 */
struct loom_uring_cmd {
	struct io_uring_cmd *ioucmd;
	struct dma_fence *done;
	struct dma_fence_cb cb;
	u64 job_id;
	struct pci_dev *pdev;
	u64 client_id;
	int result;
	atomic_t pending;
};

/* The per-command state hangs off the command's pdu. */
static struct loom_uring_cmd **loom_pdu(struct io_uring_cmd *ioucmd)
{
	return loom_uring_cmd_pdu(ioucmd, struct loom_uring_cmd *);
}

/* Posts the CQE; @cmd is gone after. */
static void loom_uring_complete(struct loom_uring_cmd *cmd, int result,
				unsigned int issue_flags)
{
	struct io_uring_cmd *ioucmd = cmd->ioucmd;
	u64 job_id = cmd->job_id;

	trace_loom_uring_complete(cmd->pdev, cmd->client_id, job_id, result);
	dma_fence_put(cmd->done);
	kfree(cmd);
	/* Last: it may drop the final reference to the file and device. */
	io_uring_cmd_done(ioucmd, result, job_id, issue_flags);
}

static void loom_uring_task_done(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct loom_uring_cmd *cmd = *loom_pdu(ioucmd);

	loom_uring_complete(cmd, cmd->result, issue_flags);
}

/* The job ended, or the issue is done with the command: the second posts it. */
static void loom_uring_put(struct loom_uring_cmd *cmd)
{
	if (atomic_dec_and_test(&cmd->pending))
		io_uring_cmd_complete_in_task(cmd->ioucmd, loom_uring_task_done);
}

/* May run in hard-IRQ context, and on another CPU while the issue runs. */
static void loom_uring_fence_done(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct loom_uring_cmd *cmd = container_of(cb, struct loom_uring_cmd, cb);

	cmd->result = fence->error;
	loom_uring_put(cmd);
}

#ifdef LOOM_HAVE_URING_CMD_CANCEL
/*
 * The ring is going away (its last reference closed, or its task exiting):
 * io_uring asks, holding its lock, that the command complete now.  It can
 * ask only once the command is cancelable, so the callback is armed, but
 * the issue may still be running on another CPU.  Taking the callback off
 * ends the job's watch: the command completes with -ECANCELED, here if the
 * issue is done, else when it is, and the job runs on unwatched.  If the
 * fence fired first, its callback completes the command (the task work
 * runs under the same lock, after this); io_uring may ask again meanwhile,
 * and then nothing is on the fence any more.
 */
static int loom_uring_cancel(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct loom_uring_cmd *cmd = *loom_pdu(ioucmd);

	if (!dma_fence_remove_callback(cmd->done, &cmd->cb))
		return 0;
	cmd->result = -ECANCELED;
	if (atomic_dec_and_test(&cmd->pending))
		loom_uring_complete(cmd, -ECANCELED, issue_flags);
	return 0;
}

static void loom_uring_mark_cancelable(struct io_uring_cmd *ioucmd,
				       unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(ioucmd, issue_flags);
}
#else
static void loom_uring_mark_cancelable(struct io_uring_cmd *ioucmd,
				       unsigned int issue_flags)
{
}
#endif

int loom_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct drm_file *file = ioucmd->file->private_data;
	struct loom_device *ldev = to_loom_device(file->minor->dev);
	struct loom_file *lf = file->driver_priv;
	struct drm_loom_submit args;
	struct loom_uring_cmd *cmd;
	struct dma_fence *done;
	bool nonblock = issue_flags & IO_URING_F_NONBLOCK;
	int idx, ret;

#ifdef LOOM_HAVE_URING_CMD_CANCEL
	if (issue_flags & IO_URING_F_CANCEL)
		return loom_uring_cancel(ioucmd, issue_flags);
#endif
	if (ioucmd->cmd_op != DRM_LOOM_URING_CMD_SUBMIT)
		return -EINVAL;
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	/* The SQE is shared with userspace: read it once. */
	memcpy(&args, loom_uring_sqe_cmd(ioucmd), sizeof(args));

	/* Outside drm_dev_enter(): it may wait on userspace. */
	ret = loom_submit_wait_for_points(file, &args, nonblock);
	if (ret)
		return ret;
	cmd = kzalloc(sizeof(*cmd), GFP_KERNEL_ACCOUNT);
	if (!cmd)
		return -ENOMEM;
	if (!drm_dev_enter(&ldev->drm, &idx)) {
		kfree(cmd);
		return -ENODEV;
	}
	ret = loom_submit(ldev, file, &args, nonblock, &done);
	drm_dev_exit(idx);
	/*
	 * Inline, io_uring's own task work (TIF_NOTIFY_SIGNAL, e.g. to start an
	 * io-wq worker) can interrupt the wait for a BO's lock that another
	 * command's issue holds.  Nothing was done: let io_uring issue the
	 * command again from a worker rather than fail it with -EINTR.
	 */
	if (nonblock && (ret == -EINTR || ret == -ERESTARTSYS))
		ret = -EAGAIN;
	trace_loom_uring_issue(ldev->pdev, lf->client_id, ret ? 0 : args.job_id, ret);
	if (ret) {
		kfree(cmd);
		return ret;
	}

	cmd->ioucmd = ioucmd;
	cmd->done = done;
	cmd->job_id = args.job_id;
	cmd->pdev = ldev->pdev;
	cmd->client_id = lf->client_id;
	atomic_set(&cmd->pending, 2);
	*loom_pdu(ioucmd) = cmd;
	/*
	 * Armed before it is cancelable: a cancellation must find the callback
	 * on the fence (or already run).  The command cannot complete before
	 * the issue drops its share below, so marking it is safe.
	 */
	if (dma_fence_add_callback(done, &cmd->cb, loom_uring_fence_done))
		/* Done already: complete the same way, from task work. */
		loom_uring_fence_done(done, &cmd->cb);
	loom_uring_mark_cancelable(ioucmd, issue_flags);
	/* Last: the command may be gone after this. */
	loom_uring_put(cmd);
	return -EIOCBQUEUED;
}
