/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libloom-sim: the loom device simulated in the process
 *
 * libloom-sim is libloom (every function of loom/loom.h and loom/work.h)
 * plus loom_sim_open(): a struct loom_device whose jobs run on the very
 * engine the QEMU device runs (qemu-device/engine), on threads of the
 * process, one per core.  An application written against libloom runs
 * on it unchanged: link -lloom-sim instead of -lloom, open the device
 * with loom_sim_open() instead of loom_device_open_first().  It needs no
 * kernel module, no VM and no privileges.
 *
 * What the simulated device does as the real one does: the device's
 * MMU, with each BO in pages of its own and nothing mapped between BOs
 * unless one was allocated there (a load before a buffer faults), the
 * command processor, RUN_WORK, the cycle-level fabric with its device
 * cycles, firings and stalls, the driver's job records (JOB_INFO:
 * status, counters, state dump) and fence errors (EFAULT, EDEADLK,
 * ENOSPC, ETIMEDOUT, ...), io_uring rings (loom_ring_*).  What it does
 * not: PRIME (loom_bo_share() is LOOM_E_NOT_SUPPORTED), fences that
 * cross into a device of the kernel, fault injection.
 *
 * GPL-2.0-or-later, as the engine it contains; libloom alone is MIT.
 */
#ifndef LOOM_SIM_H
#define LOOM_SIM_H

#include <stdint.h>

#include "loom/loom.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* =========================================================================
 * The simulated device
 * =========================================================================
 *
 * A device of libloom-sim: the QEMU device's engine and loom.ko's job
 * handling in the process, opened with loom_sim_open(), used with every
 * other libloom function, closed with loom_device_close().
 */

/**
 * struct loom_sim_config - the simulated device
 * @fabric_width: tiles per fabric row, 1..LOOM_FABRIC_MAX_DIM; 0: 4, the
 *	QEMU device's default
 * @fabric_height: fabric rows; 0: 4
 * @cores: compute cores (hardware queues), 1..64; 0: 2, the QEMU
 *	device's default
 * @max_job_ms: longest a job may run before it is stopped with
 *	ETIMEDOUT, as loom.ko's max_job_ms; 0: 60000, its default.  As the
 *	driver's hang check, a job is also stopped after 2 s without
 *	progress or 20 s in all (ten deadlines of a submission without one).
 * @reserved: must be zero
 */
struct loom_sim_config {
	unsigned fabric_width;
	unsigned fabric_height;
	unsigned cores;
	unsigned max_job_ms;
	uint64_t reserved[4];
};

/*
 * Opens a simulated device as @config describes (NULL: every default);
 * close it with loom_device_close().  Returns 0, -EINVAL for a config
 * out of range, -ENOMEM.  loom_device_info() of it reads path "sim",
 * uapi version DRM_LOOM_UAPI_VERSION and the caps of the QEMU device;
 * loom_device_fd() is -1.
 */
int loom_sim_open(const struct loom_sim_config *config,
		  struct loom_device **out);

/* Whether @dev is a simulated device. */
int loom_device_is_sim(const struct loom_device *dev);

#if defined(__cplusplus)
}
#endif

#endif /* LOOM_SIM_H */
