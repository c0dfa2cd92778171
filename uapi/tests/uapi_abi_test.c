// SPDX-License-Identifier: MIT
/*
 * The uapi is an ABI: once released, a struct's layout, an ioctl's number and
 * a register's offset never change.  This test pins them, so an accidental
 * change fails here rather than in a user's program.  Adding is fine: extend
 * the lists below.
 */
#include <stddef.h>
#include <stdio.h>

#include "drm/loom_drm.h"
#include "loom_device.h"

static int passed, failed;

#define CHECK(expr) do {						\
	if (expr) {							\
		passed++;						\
		printf("ok %d - %s\n", passed + failed, #expr);		\
	} else {							\
		failed++;						\
		printf("not ok %d - %s (%s:%d)\n", passed + failed,	\
		       #expr, __FILE__, __LINE__);			\
	}								\
} while (0)

static void device_abi(void)
{
	CHECK(LOOM_PCI_VENDOR_ID == 0x1234);
	CHECK(LOOM_PCI_DEVICE_ID == 0x4c4d);
	CHECK(LOOM_BAR0_SIZE == 0x10000);
	CHECK(LOOM_REG_ID == 0x0000);
	CHECK(LOOM_ID_MAGIC == 0x4c4f4f4d);
	CHECK(LOOM_REG_VERSION == 0x0004);
	CHECK(LOOM_REG_CAPS == 0x0008);
	CHECK(LOOM_REG_SCRATCH == 0x000c);
	CHECK(LOOM_VERSION_MAJOR(LOOM_VERSION(3, 7)) == 3);
	CHECK(LOOM_VERSION_MINOR(LOOM_VERSION(3, 7)) == 7);
}

static void drm_abi(void)
{
	CHECK(sizeof(struct drm_loom_get_param) == 16);
	CHECK(offsetof(struct drm_loom_get_param, param) == 0);
	CHECK(offsetof(struct drm_loom_get_param, pad) == 4);
	CHECK(offsetof(struct drm_loom_get_param, value) == 8);
	CHECK(DRM_IOCTL_LOOM_GET_PARAM == 0xc0106440);
	CHECK(DRM_LOOM_PARAM_HW_ID == 0);
	CHECK(DRM_LOOM_PARAM_HW_VERSION == 1);
	CHECK(DRM_LOOM_PARAM_HW_CAPS == 2);
	CHECK(DRM_LOOM_PARAM_UAPI_VERSION == 3);
	CHECK(DRM_LOOM_PARAM_PCI_ID == 4);
	CHECK(DRM_LOOM_UAPI_VERSION >= 1);
}

int main(void)
{
	device_abi();
	drm_abi();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
