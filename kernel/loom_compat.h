/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: kernel API differences loom builds across
 *
 * Kbuild detects each difference from the installed headers and defines a
 * LOOM_HAVE_* macro; the rest of the driver calls only the wrappers here.
 */
#ifndef LOOM_COMPAT_H
#define LOOM_COMPAT_H

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/gpu_scheduler.h>
#include <linux/aer.h>
#include <linux/pci.h>
#ifdef LOOM_HAVE_DRM_ACCEL
#include <drm/drm_accel.h>
#endif
#ifdef LOOM_HAVE_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

/**
 * struct loom_sched_params - what loom passes to drm_sched_init()
 * @ops: backend operations
 * @credit_limit: jobs the hardware queue holds at once
 * @timeout: job timeout in jiffies
 * @timeout_wq: workqueue for timeout handling, or NULL for system_wq
 * @name: scheduler name shown in traces
 * @dev: device for diagnostics
 */
struct loom_sched_params {
	const struct drm_sched_backend_ops *ops;
	u32 credit_limit;
	long timeout;
	struct workqueue_struct *timeout_wq;
	const char *name;
	struct device *dev;
};

/*
 * 6.1.191+ takes struct drm_sched_init_args; earlier 6.1 takes the
 * positional list.  hang_limit is deprecated in both: loom passes 0 and
 * handles repeat offenders itself.
 */
static inline int loom_sched_init(struct drm_gpu_scheduler *sched,
				  const struct loom_sched_params *p)
{
#ifdef LOOM_HAVE_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = p->ops,
		.timeout_wq = p->timeout_wq,
		.credit_limit = p->credit_limit,
#ifdef LOOM_HAVE_SCHED_NUM_RQS
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#endif
		.hang_limit = 0,
		.timeout = p->timeout,
		.name = p->name,
		.dev = p->dev,
	};

	return drm_sched_init(sched, &args);
#elif defined(LOOM_HAVE_SCHED_NUM_RQS)
	return drm_sched_init(sched, p->ops, NULL, DRM_SCHED_PRIORITY_COUNT,
			      p->credit_limit, 0, p->timeout, p->timeout_wq, NULL,
			      p->name, p->dev);
#else
	return drm_sched_init(sched, p->ops, p->credit_limit, 0, p->timeout,
			      p->timeout_wq, NULL, p->name, p->dev);
#endif
}

/*
 * Where the kernel has the accel subsystem, loom is a compute accelerator
 * (/dev/accel/accelN, opened through accel_open()); before it, a render
 * node.  GET_PARAM's features tell userspace which.
 */
#ifdef LOOM_HAVE_DRM_ACCEL
/* The accel core makes the debugfs directory but calls no debugfs_init. */
#define LOOM_DEBUGFS_INIT	NULL
#define loom_accel_debugfs_init(drm, init)	init((drm)->accel)
#define LOOM_DRIVER_NODE	DRIVER_COMPUTE_ACCEL
#define LOOM_NODE_FOPS		DRM_ACCEL_FOPS
#define LOOM_FEATURE_NODE	DRM_LOOM_FEATURE_ACCEL_NODE
#else
#define LOOM_DEBUGFS_INIT	loom_debugfs_init
#define loom_accel_debugfs_init(drm, init)	do { } while (0)
#define LOOM_DRIVER_NODE	DRIVER_RENDER
#define LOOM_NODE_FOPS		DRM_GEM_FOPS
#define LOOM_FEATURE_NODE	0
#endif

/*
 * Before 6.6 the dma-buf of an exported BO is mmap()ed (as an importer
 * maps it for the CPU) through drm_driver.gem_prime_mmap; later kernels
 * go to the object's own mmap.
 */
#ifdef LOOM_HAVE_GEM_PRIME_MMAP
#define LOOM_GEM_PRIME_MMAP	.gem_prime_mmap = drm_gem_prime_mmap,
#else
#define LOOM_GEM_PRIME_MMAP
#endif

#ifdef LOOM_HAVE_URING_CMD_CANCEL
#define LOOM_FEATURE_URING_CANCEL	DRM_LOOM_FEATURE_URING_CANCEL
#else
#define LOOM_FEATURE_URING_CANCEL	0
#endif

/* Every loom job takes one slot of its core's ring: one credit. */
static inline int loom_sched_job_init(struct drm_sched_job *job,
				      struct drm_sched_entity *entity,
				      struct drm_file *file)
{
#if defined(LOOM_HAVE_SCHED_JOB_CLIENT_ID)
	return drm_sched_job_init(job, entity, 1, NULL, file->client_id);
#elif defined(LOOM_HAVE_SCHED_JOB_CREDITS)
	return drm_sched_job_init(job, entity, 1, NULL);
#else
	return drm_sched_job_init(job, entity, NULL);
#endif
}

/* Restarts a stopped scheduler after a reset that left nothing broken. */
static inline void loom_sched_start(struct drm_gpu_scheduler *sched)
{
#if defined(LOOM_HAVE_SCHED_START_ERRNO)
	drm_sched_start(sched, 0);
#elif defined(LOOM_HAVE_SCHED_START_PLAIN)
	drm_sched_start(sched);
#else
	drm_sched_start(sched, true);
#endif
}

/* The command area of a uring_cmd's 128-byte SQE. */
static inline const void *loom_uring_sqe_cmd(struct io_uring_cmd *ioucmd)
{
#ifdef LOOM_HAVE_URING_CMD_H
	return io_uring_sqe_cmd(ioucmd->sqe);
#else
	return ioucmd->cmd;
#endif
}

/* The driver's per-command words inside struct io_uring_cmd. */
#define loom_uring_cmd_pdu(ioucmd, type) ({				\
	BUILD_BUG_ON(sizeof(type) > sizeof((ioucmd)->pdu));		\
	(type *)(ioucmd)->pdu;						\
})

/*
 * Lets the device report PCIe errors (AER).  Kernels before 6.4 leave that
 * to each driver; later ones enable it for every device they control.
 */
static inline void loom_pci_enable_error_reporting(struct pci_dev *pdev)
{
#ifdef LOOM_HAVE_PCI_ERR_REPORTING
	/* fails only when the platform keeps AER: nothing to enable then */
	pci_enable_pcie_error_reporting(pdev);
#endif
}

#endif /* LOOM_COMPAT_H */
