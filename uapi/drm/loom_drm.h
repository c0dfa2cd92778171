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

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * uapi version, answered by DRM_LOOM_PARAM_UAPI_VERSION.  It grows whenever
 * an ioctl or parameter is added; userspace compares it instead of probing.
 */
#define DRM_LOOM_UAPI_VERSION	2

#define DRM_LOOM_GET_PARAM	0x00

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
};

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

#define DRM_IOCTL_LOOM_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_GET_PARAM, struct drm_loom_get_param)

#if defined(__cplusplus)
}
#endif

#endif /* LOOM_DRM_H */
