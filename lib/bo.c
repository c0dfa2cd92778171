// SPDX-License-Identifier: MIT
/*
 * DOC: buffer objects
 *
 * A loom BO is created, given its device VA by the driver and mapped for
 * the CPU in one step, so every BO a caller holds has both addresses.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "device_internal.h"

static int bo_mmap(struct loom_bo *bo)
{
	struct drm_loom_bo_mmap_offset off = { .handle = bo->handle };
	void *p;

	if (drmIoctl(bo->dev->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off))
		return -errno;
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bo->dev->fd, off.offset);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

int loom_bo_alloc(struct loom_device *dev, uint64_t size, uint32_t flags,
		  struct loom_bo **out)
{
	struct drm_loom_bo_create c = { .size = size };
	struct loom_bo *bo;
	int ret;

	if (!dev || !out || (flags & ~LOOM_BO_DEVICE_READ_ONLY))
		return -EINVAL;
	if (flags & LOOM_BO_DEVICE_READ_ONLY)
		c.flags = DRM_LOOM_BO_DEVICE_READ_ONLY;
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	if (drmIoctl(dev->fd, DRM_IOCTL_LOOM_BO_CREATE, &c)) {
		ret = -errno;
		goto err_free;
	}
	*bo = (struct loom_bo){ .dev = dev, .handle = c.handle, .va = c.va,
				.size = size };
	ret = bo_mmap(bo);
	if (ret)
		goto err_close;
	*out = bo;
	return 0;

err_close:
	drmCloseBufferHandle(dev->fd, c.handle);
err_free:
	free(bo);
	return ret;
}

void *loom_bo_map(const struct loom_bo *bo)
{
	return bo->map;
}

uint64_t loom_bo_va(const struct loom_bo *bo)
{
	return bo->va;
}

uint64_t loom_bo_size(const struct loom_bo *bo)
{
	return bo->size;
}

uint32_t loom_bo_handle(const struct loom_bo *bo)
{
	return bo->handle;
}

/*
 * A job holds its own references on the BOs it uses (kernel/loom_job.c),
 * so closing the handle here never pulls pages from under a running job.
 */
void loom_bo_free(struct loom_bo *bo)
{
	if (!bo)
		return;
	munmap(bo->map, bo->size);
	drmCloseBufferHandle(bo->dev->fd, bo->handle);
	free(bo);
}
