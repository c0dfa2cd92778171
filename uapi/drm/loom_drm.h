/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * loom DRM render-node interface.
 *
 * Every struct is built from __u32/__u64 only, with explicit pad fields that
 * must be zero; unknown flags and non-zero pad are rejected with EINVAL, so
 * any field can later be given a meaning.  Documentation/uapi.rst lists each
 * ioctl with the errno of every failure.
 */
#ifndef LOOM_DRM_H
#define LOOM_DRM_H

/*
 * The kernel finds drm.h as <drm/drm.h>; userspace takes libdrm's copy, as
 * for every DRM driver header (pkg-config --cflags libdrm).
 */
#ifdef __KERNEL__
#include <drm/drm.h>
#else
#include "drm.h"
#endif
/* JOB_INFO's counters are the device's own (struct loom_hw_counters). */
#include "loom_device.h"
/* drm_loom_status_errno()'s errno values */
#include <linux/errno.h>

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * uapi version, answered by DRM_LOOM_PARAM_UAPI_VERSION.  It grows whenever
 * an ioctl or parameter is added; userspace compares it instead of probing.
 */
#define DRM_LOOM_UAPI_VERSION	10

#define DRM_LOOM_GET_PARAM	0x00
#define DRM_LOOM_BO_CREATE	0x01
#define DRM_LOOM_BO_MMAP_OFFSET	0x02
#define DRM_LOOM_BO_WAIT	0x03
#define DRM_LOOM_SUBMIT		0x04
#define DRM_LOOM_JOB_INFO	0x05
#define DRM_LOOM_BO_INFO	0x06

/**
 * enum drm_loom_param - what DRM_IOCTL_LOOM_GET_PARAM can answer
 * @DRM_LOOM_PARAM_HW_ID: the device's LOOM_REG_ID (LOOM_ID_MAGIC)
 * @DRM_LOOM_PARAM_HW_VERSION: the device's LOOM_REG_VERSION
 * @DRM_LOOM_PARAM_HW_CAPS: the device's LOOM_REG_CAPS bits
 * @DRM_LOOM_PARAM_UAPI_VERSION: DRM_LOOM_UAPI_VERSION of the running driver
 * @DRM_LOOM_PARAM_PCI_ID: PCI vendor ID << 16 | device ID
 * @DRM_LOOM_PARAM_NUM_CORES: compute cores, each with one hardware queue
 *	(uapi 2)
 * @DRM_LOOM_PARAM_FABRIC_WIDTH: tiles per fabric row (uapi 2)
 * @DRM_LOOM_PARAM_FABRIC_HEIGHT: fabric rows (uapi 2)
 * @DRM_LOOM_PARAM_HW_LIMITS: the device's LOOM_REG_LIMITS (max rank, FIFO
 *	depth, memory ports, load latency; uapi 2)
 * @DRM_LOOM_PARAM_FEATURES: DRM_LOOM_FEATURE_* bits the driver offers
 *	(uapi 3); userspace turns off what is missing instead of failing
 * @DRM_LOOM_PARAM_VA_START: lowest device VA a BO may get (uapi 3)
 * @DRM_LOOM_PARAM_VA_END: end of the BO VA range, exclusive (uapi 3)
 * @DRM_LOOM_PARAM_PE_SLOTS: instruction slots per PE (temporal PEs:
 *	LOOM_FABRIC_SLOTS of the device's LOOM_REG_FABRIC; 1 on a device
 *	without LOOM_CAP_PE_SLOTS; uapi 7)
 */
enum drm_loom_param {
	DRM_LOOM_PARAM_HW_ID = 0,
	DRM_LOOM_PARAM_HW_VERSION = 1,
	DRM_LOOM_PARAM_HW_CAPS = 2,
	DRM_LOOM_PARAM_UAPI_VERSION = 3,
	DRM_LOOM_PARAM_PCI_ID = 4,
	DRM_LOOM_PARAM_NUM_CORES = 5,
	DRM_LOOM_PARAM_FABRIC_WIDTH = 6,
	DRM_LOOM_PARAM_FABRIC_HEIGHT = 7,
	DRM_LOOM_PARAM_HW_LIMITS = 8,
	DRM_LOOM_PARAM_FEATURES = 9,
	DRM_LOOM_PARAM_VA_START = 10,
	DRM_LOOM_PARAM_VA_END = 11,
	DRM_LOOM_PARAM_PE_SLOTS = 12,
};

/* DRM_LOOM_PARAM_FEATURES bits. */
#define DRM_LOOM_FEATURE_SUBMIT		(1ULL << 0)	/* BO_* and SUBMIT */
#define DRM_LOOM_FEATURE_URING_CMD	(1ULL << 1)	/* DRM_LOOM_URING_CMD_SUBMIT */
#define DRM_LOOM_FEATURE_DEADLINE	(1ULL << 2)	/* drm_loom_submit.deadline_ns */
#define DRM_LOOM_FEATURE_JOB_INFO	(1ULL << 3)	/* JOB_INFO, fault records */
#define DRM_LOOM_FEATURE_FDINFO		(1ULL << 4)	/* drm-* keys in fdinfo */
#define DRM_LOOM_FEATURE_SUBMIT_NONBLOCK (1ULL << 5)	/* DRM_LOOM_SUBMIT_NONBLOCK (uapi 4) */
/* The device is a compute accelerator node, /dev/accel/accelN; else a render node (uapi 5). */
#define DRM_LOOM_FEATURE_ACCEL_NODE	(1ULL << 6)
/* A ring that goes away completes its pending commands with -ECANCELED (uapi 5). */
#define DRM_LOOM_FEATURE_URING_CANCEL	(1ULL << 7)
/* A ring set up with IORING_SETUP_CQE32 gets the job id in big_cqe[0] of each CQE (uapi 6). */
#define DRM_LOOM_FEATURE_URING_JOB_ID	(1ULL << 8)
/*
 * Timeline syncobjs: DRM_LOOM_SUBMIT_TIMELINE points, and the DRM core's
 * timeline ioctls (DRIVER_SYNCOBJ_TIMELINE) on the device (uapi 8).
 */
#define DRM_LOOM_FEATURE_TIMELINE	(1ULL << 9)
/*
 * PRIME: the DRM core's PRIME_HANDLE_TO_FD and PRIME_FD_TO_HANDLE between
 * loom devices (a BO of one device imported by a file of another is mapped
 * into that file's address space), and BO_INFO, which tells an imported
 * BO's VA (uapi 9).
 */
#define DRM_LOOM_FEATURE_PRIME		(1ULL << 10)
/*
 * JOB_INFO waits: DRM_LOOM_JOB_INFO_WAIT and drm_loom_job_info.timeout_ns
 * (uapi 10).
 */
#define DRM_LOOM_FEATURE_JOB_INFO_WAIT	(1ULL << 11)

/**
 * struct drm_loom_get_param - read one device or driver fact
 * @param: in, an enum drm_loom_param; an unknown value fails with EINVAL
 * @pad: must be zero (EINVAL otherwise)
 * @value: out, the answer
 */
struct drm_loom_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/* drm_loom_bo_create.flags */
#define DRM_LOOM_BO_DEVICE_READ_ONLY	(1U << 0)	/* jobs may not write it */
#define DRM_LOOM_BO_FLAGS		DRM_LOOM_BO_DEVICE_READ_ONLY

#define DRM_LOOM_BO_MAX_SIZE		(1ULL << 30)

/**
 * struct drm_loom_bo_create - a buffer object, mapped into this file's
 *	device address space
 * @size: in, bytes, 1..DRM_LOOM_BO_MAX_SIZE; rounded up to pages
 * @flags: in, DRM_LOOM_BO_* flags
 * @handle: out, the GEM handle
 * @va: out, its device VA in this file's address space (page aligned);
 *	only this file's jobs can reach it
 */
struct drm_loom_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 va;
};

/**
 * struct drm_loom_bo_info - a BO's place in this file's address space
 *	(uapi 9): for a BO imported with PRIME_FD_TO_HANDLE, whose VA no
 *	ioctl returned
 * @handle: in
 * @pad: must be zero
 * @va: out, its device VA in this file's address space
 * @size: out, its size in bytes (a whole number of pages)
 */
struct drm_loom_bo_info {
	__u32 handle;
	__u32 pad;
	__u64 va;
	__u64 size;
};

/**
 * struct drm_loom_bo_mmap_offset - where to mmap() a BO on this fd
 * @handle: in
 * @pad: must be zero
 * @offset: out, the offset to pass to mmap()
 */
struct drm_loom_bo_mmap_offset {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

/**
 * struct drm_loom_bo_wait - wait until the jobs using a BO are done
 * @handle: in
 * @flags: must be zero
 * @timeout_ns: in, relative; 0 polls (EBUSY if busy), negative waits
 *	forever
 */
struct drm_loom_bo_wait {
	__u32 handle;
	__u32 flags;
	__s64 timeout_ns;
};

/* drm_loom_bo_ref.flags: how the job uses the BO (implicit fencing). */
#define DRM_LOOM_BO_REF_READ	(1U << 0)
#define DRM_LOOM_BO_REF_WRITE	(1U << 1)

/**
 * struct drm_loom_bo_ref - a BO a job uses
 * @handle: the BO
 * @flags: DRM_LOOM_BO_REF_* (at least one)
 */
struct drm_loom_bo_ref {
	__u32 handle;
	__u32 flags;
};

/*
 * A job's BOs plus its command BO are locked together (one ww acquire
 * context); lockdep counts at most 2047 locks of one class in one context
 * (an 11-bit field), so a job may list at most 2046 (uapi 7; 4096 before).
 */
#define DRM_LOOM_MAX_BOS		2046
/*
 * A process whose jobs hung this many times on a device: its SUBMITs there
 * fail with ECANCELED, from every file it has or opens, until it exits.
 */
#define DRM_LOOM_MAX_HANGS		3
#define DRM_LOOM_MAX_IN_SYNCOBJS	256
#define DRM_LOOM_MAX_DEADLINE_NS	(600ULL * 1000000000ULL)
/*
 * Jobs one file may have submitted and not yet finished (uapi 4).  SUBMIT
 * beyond it waits (interruptibly) for one to finish, or fails with EAGAIN
 * with DRM_LOOM_SUBMIT_NONBLOCK.
 */
#define DRM_LOOM_MAX_INFLIGHT_JOBS	1024

/* Bytes of state dumps JOB_INFO keeps per file; later dumps are dropped. */
#define DRM_LOOM_DUMP_BYTES_PER_FILE	(256 * 1024)

/* drm_loom_submit.flags */
#define DRM_LOOM_SUBMIT_NONBLOCK	(1U << 0)	/* EAGAIN instead of waiting (uapi 4) */
/*
 * @in_syncobjs holds struct drm_loom_syncobj_point entries and @out_point
 * names a point of @out_syncobj (uapi 8).
 */
#define DRM_LOOM_SUBMIT_TIMELINE	(1U << 1)
#define DRM_LOOM_SUBMIT_FLAGS		(DRM_LOOM_SUBMIT_NONBLOCK | DRM_LOOM_SUBMIT_TIMELINE)

/* drm_loom_syncobj_point.flags */
/*
 * A point that has no fence yet is waited for (up to the DRM core's 10 s,
 * interruptibly) instead of failing the submit with EINVAL.  Through
 * io_uring the wait happens in io_uring's worker, not the submitter.
 */
#define DRM_LOOM_SYNC_WAIT_FOR_SUBMIT	(1U << 0)
#define DRM_LOOM_SYNC_FLAGS		DRM_LOOM_SYNC_WAIT_FOR_SUBMIT

/**
 * struct drm_loom_syncobj_point - one in-fence of a DRM_LOOM_SUBMIT_TIMELINE
 *	submit
 * @handle: a syncobj of the file, binary or timeline
 * @flags: DRM_LOOM_SYNC_* flags
 * @point: the timeline point to wait for; 0 waits for the syncobj's
 *	current fence (a binary syncobj's only one)
 */
struct drm_loom_syncobj_point {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/**
 * struct drm_loom_submit - run a command buffer on one hardware queue
 * @queue: core index, below DRM_LOOM_PARAM_NUM_CORES
 * @flags: DRM_LOOM_SUBMIT_* flags
 * @cmd_handle: the BO holding the command buffer (also implicitly read)
 * @cmd_offset: byte offset of the commands in it, a multiple of 8
 * @cmd_size: bytes of commands, a multiple of 4, 4..LOOM_CMD_MAX_SIZE
 * @bo_count: entries at @bos, at most DRM_LOOM_MAX_BOS
 * @bos: user pointer to struct drm_loom_bo_ref[@bo_count]; the job waits
 *	for earlier writers (and, when it writes, readers) of each, and holds
 *	them until it is done
 * @in_syncobjs: user pointer to __u32 syncobj handles[@in_syncobj_count],
 *	or with DRM_LOOM_SUBMIT_TIMELINE to struct
 *	drm_loom_syncobj_point[@in_syncobj_count]; the job starts after all
 *	their fences signal.  A handle with no fence (at that point) fails
 *	the submit with EINVAL, unless the point asks to wait for one.
 * @in_syncobj_count: at most DRM_LOOM_MAX_IN_SYNCOBJS
 * @out_syncobj: 0, or a syncobj that receives the job's done fence
 * @deadline_ns: how long the job may make no progress before it is
 *	declared hung; 0 for the driver's default, at most
 *	DRM_LOOM_MAX_DEADLINE_NS.  A job whose device progress counter keeps
 *	moving is long, not hung, and is given time up to 10 deadlines, but
 *	never more than the driver's runtime cap (module parameter
 *	max_job_ms, 60 s by default): past it the job fails with ETIMEDOUT.
 * @out_point: with DRM_LOOM_SUBMIT_TIMELINE and @out_syncobj, the point
 *	of the timeline the job's done fence is added at (0: the fence
 *	replaces the syncobj's, as for a binary one); otherwise must be zero
 *	(it was @pad before uapi 8)
 * @job_id: out, this file's identifier of the job (for JOB_INFO)
 */
struct drm_loom_submit {
	__u32 queue;
	__u32 flags;
	__u32 cmd_handle;
	__u32 cmd_offset;
	__u32 cmd_size;
	__u32 bo_count;
	__u64 bos;
	__u64 in_syncobjs;
	__u32 in_syncobj_count;
	__u32 out_syncobj;
	__u64 deadline_ns;
	__u64 out_point;
	__u64 job_id;
};

/* drm_loom_job_info.state */
#define DRM_LOOM_JOB_PENDING	0	/* not done yet */
#define DRM_LOOM_JOB_DONE	1	/* done; the fields below are valid */

/* drm_loom_job_info.flags */
/* Sleep until the job is done or @timeout_ns passes (uapi 10). */
#define DRM_LOOM_JOB_INFO_WAIT	(1U << 0)
#define DRM_LOOM_JOB_INFO_FLAGS	DRM_LOOM_JOB_INFO_WAIT

/**
 * struct drm_loom_job_info - how one of this file's recent jobs ended: its
 *	status, counters and, when it failed, the fault record
 * @job_id: in, from drm_loom_submit.job_id; the last 256 jobs of the file
 *	are kept (older ones: ENOENT)
 * @dump_size: in, bytes available at @dump; out, bytes of the device's
 *	state dump (struct loom_hw_dump) the job has, 0 if none (also when
 *	the dump failed the driver's checks, or the file's records already
 *	hold DRM_LOOM_DUMP_BYTES_PER_FILE bytes of dumps)
 * @dump: in, user pointer for the dump, or 0
 * @state: out, DRM_LOOM_JOB_*
 * @error: out, 0 or the negative errno its fence completed with; EPROTO
 *	when the device's completion record failed the driver's checks (a
 *	seqno other than the job's, a record never written): the fields
 *	below are then zero, never another job's
 * @hw_status: out, enum loom_hw_status of the device
 * @detail: out, its detail (uapi/loom_device.h)
 * @fault_va: out, the faulting device VA of an MMU fault
 * @packet_offset: out, the packet being executed when it ended
 * @packet_opcode: out, its opcode
 * @flags: in, DRM_LOOM_JOB_INFO_*; unknown bits fail with EINVAL (it was
 *	@pad before uapi 10)
 * @counters: out
 * @timeout_ns: in, with DRM_LOOM_JOB_INFO_WAIT: an absolute
 *	CLOCK_MONOTONIC deadline, as DRM_IOCTL_SYNCOBJ_WAIT's timeout_nsec
 *	(0 or one that has passed: do not sleep).  The call sleeps,
 *	interruptibly, until the job is done, then answers as without the
 *	flag; past the deadline with the job still pending it fails with
 *	ETIME, the fields out as for a pending job (@state PENDING, the rest
 *	zero).  Otherwise must be zero.  Appended in uapi 10: a caller built
 *	with the shorter struct is given zero here by the DRM core
 */
struct drm_loom_job_info {
	__u64 job_id;
	__u32 dump_size;
	__u32 state;
	__u64 dump;
	__s32 error;
	__u32 hw_status;
	__u32 detail;
	__u32 packet_offset;
	__u64 fault_va;
	__u32 packet_opcode;
	__u32 flags;
	struct loom_hw_counters counters;
	__s64 timeout_ns;
};

/*
 * A job's error (its fence's, drm_loom_job_info.error) for the status of
 * the device's completion record (enum loom_hw_status), as loom.ko and
 * loom-sim both report it.  A status not listed (a malformed command,
 * configuration or descriptor) is -EINVAL.
 */
static inline int drm_loom_status_errno(__u32 hw_status)
{
	switch (hw_status) {
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
		return -EINVAL;
	}
}

#define DRM_IOCTL_LOOM_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_GET_PARAM, struct drm_loom_get_param)
#define DRM_IOCTL_LOOM_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_BO_CREATE, struct drm_loom_bo_create)
#define DRM_IOCTL_LOOM_BO_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_BO_MMAP_OFFSET, struct drm_loom_bo_mmap_offset)
#define DRM_IOCTL_LOOM_BO_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_LOOM_BO_WAIT, struct drm_loom_bo_wait)
#define DRM_IOCTL_LOOM_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_SUBMIT, struct drm_loom_submit)
#define DRM_IOCTL_LOOM_JOB_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_JOB_INFO, struct drm_loom_job_info)
#define DRM_IOCTL_LOOM_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_BO_INFO, struct drm_loom_bo_info)

/*
 * io_uring: IORING_OP_URING_CMD on the render node with cmd_op
 * DRM_LOOM_URING_CMD_SUBMIT and a struct drm_loom_submit in the SQE's
 * command area (a ring set up with IORING_SETUP_SQE128).  The CQE arrives
 * when the job is done: res 0, or the negative errno the job's fence
 * completed with (or the submit's own error); user_data is the SQE's.
 * The SQE's job_id is not written back: on a ring set up with
 * IORING_SETUP_CQE32 (DRM_LOOM_FEATURE_URING_JOB_ID, uapi 6) the CQE's
 * big_cqe[0] is the job id for JOB_INFO, 0 if the submit was refused.
 */
#define DRM_LOOM_URING_CMD_SUBMIT	0x4c01

#if defined(__cplusplus)
}
#endif

#endif /* LOOM_DRM_H */
