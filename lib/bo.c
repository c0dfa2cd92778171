// SPDX-License-Identifier: MIT
/*
 * DOC: buffer objects
 *
 * A loom BO is created, given its device VA by the driver and mapped for
 * the CPU in one step, so every BO a caller holds has both addresses.
 *
 * Sharing: loom_bo_share() exports a BO as a dma-buf and imports it on
 * another device, whose driver maps it into that device's address space
 * (BO_INFO tells where).  The BOs that are one memory form a share group,
 * at most one per device, each on its device's shared list: what turns a
 * capture VA of one device into the VA of the same byte on another.
 *
 * Every BO is also in its device's VA-ordered table, so that a launch can
 * find the BO a memref operand's view starts in and check that the view
 * ends inside it (launch.c).  Its lock, bo_lock, is taken after the
 * device's lock, never before: a plan's configuration is allocated under
 * the latter.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "device_internal.h"

/* The first entry of @dev->bos whose VA is at or above @va; under bo_lock. */
static size_t bo_slot_locked(const struct loom_device *dev, uint64_t va)
{
	size_t lo = 0, hi = dev->num_bos;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dev->bos[mid]->va < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct loom_bo *loom_bo_holding_locked(const struct loom_device *dev,
				       uint64_t va)
{
	size_t k = bo_slot_locked(dev, va);
	struct loom_bo *b;

	if (k < dev->num_bos && dev->bos[k]->va == va)
		return dev->bos[k];
	if (!k)
		return NULL;
	b = dev->bos[k - 1];
	return va - b->va < b->size ? b : NULL;
}

/* Enters @bo in its device's table; under dev->bo_lock. */
static int bo_register_locked(struct loom_bo *bo)
{
	struct loom_device *dev = bo->dev;
	size_t k;

	if (dev->num_bos == dev->cap_bos) {
		size_t cap = dev->cap_bos ? 2 * dev->cap_bos : 16;
		struct loom_bo **p = realloc(dev->bos, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		dev->bos = p;
		dev->cap_bos = cap;
	}
	k = bo_slot_locked(dev, bo->va);
	memmove(&dev->bos[k + 1], &dev->bos[k], (dev->num_bos - k) * sizeof(*dev->bos));
	dev->bos[k] = bo;
	dev->num_bos++;
	return 0;
}

static int bo_register(struct loom_bo *bo)
{
	int ret;

	pthread_mutex_lock(&bo->dev->bo_lock);
	ret = bo_register_locked(bo);
	pthread_mutex_unlock(&bo->dev->bo_lock);
	return ret;
}

static void bo_unregister(struct loom_bo *bo)
{
	struct loom_device *dev = bo->dev;
	size_t k;

	pthread_mutex_lock(&dev->bo_lock);
	k = bo_slot_locked(dev, bo->va);
	while (k < dev->num_bos && dev->bos[k] != bo && dev->bos[k]->va == bo->va)
		k++;
	if (k < dev->num_bos && dev->bos[k] == bo) {
		memmove(&dev->bos[k], &dev->bos[k + 1],
			(dev->num_bos - k - 1) * sizeof(*dev->bos));
		dev->num_bos--;
	}
	pthread_mutex_unlock(&dev->bo_lock);
}

int loom_bo_alloc(struct loom_device *dev, uint64_t size, uint32_t flags,
		  struct loom_bo **out)
{
	struct drm_loom_bo_create c = { .size = size };
	struct loom_bo *bo;
	void *map;
	int ret;

	if (!dev || !out || (flags & ~LOOM_BO_DEVICE_READ_ONLY))
		return -EINVAL;
	if (flags & LOOM_BO_DEVICE_READ_ONLY)
		c.flags = DRM_LOOM_BO_DEVICE_READ_ONLY;
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	ret = dev->be->bo_create(dev, &c, &map);
	if (ret) {
		free(bo);
		return ret;
	}
	*bo = (struct loom_bo){ .dev = dev, .handle = c.handle, .va = c.va,
				.size = size, .map = map };
	ret = bo_register(bo);
	if (ret) {
		dev->be->bo_destroy(dev, bo->handle, bo->map, bo->size);
		free(bo);
		return ret;
	}
	*out = bo;
	return 0;
}

/* Share groups: ids unique in the process, 0 for none. */
static atomic_uint_fast64_t share_groups;

/* Puts @bo on its device's shared list in group @group; under dev->lock. */
static void share_link_locked(struct loom_bo *bo, uint64_t group)
{
	struct loom_device *dev = bo->dev;

	bo->share_group = group;
	bo->share_prev = NULL;
	bo->share_next = dev->shared;
	if (dev->shared)
		dev->shared->share_prev = bo;
	dev->shared = bo;
}

static void share_unlink(struct loom_bo *bo)
{
	struct loom_device *dev = bo->dev;

	pthread_mutex_lock(&dev->lock);
	if (bo->share_prev)
		bo->share_prev->share_next = bo->share_next;
	else
		dev->shared = bo->share_next;
	if (bo->share_next)
		bo->share_next->share_prev = bo->share_prev;
	pthread_mutex_unlock(&dev->lock);
}

/* @dev's BO of share group @group, NULL if none; under dev->lock. */
static struct loom_bo *share_find_locked(const struct loom_device *dev,
					 uint64_t group)
{
	struct loom_bo *b;

	for (b = dev->shared; b; b = b->share_next)
		if (b->share_group == group)
			return b;
	return NULL;
}

/* @bo's share group, given one now if it has none. */
static uint64_t share_group_of(struct loom_bo *bo)
{
	uint64_t group;

	pthread_mutex_lock(&bo->dev->lock);
	if (!bo->share_group)
		share_link_locked(bo, atomic_fetch_add(&share_groups, 1) + 1);
	group = bo->share_group;
	pthread_mutex_unlock(&bo->dev->lock);
	return group;
}

/* Imports @bo's pages on @other: handle, VA and CPU mapping into @s. */
static int share_import(struct loom_bo *bo, struct loom_device *other,
			struct loom_bo *s)
{
	*s = (struct loom_bo){ .dev = other, .size = bo->size };
	return bo->dev->be->bo_import(bo, other, s);
}

int loom_bo_share(struct loom_bo *bo, struct loom_device *other,
		  struct loom_bo **out)
{
	struct loom_bo *s;
	uint64_t group;
	int ret;

	if (!bo || !other || !out || other == bo->dev)
		return -EINVAL;
	if (!(bo->dev->info.features & other->info.features &
	      DRM_LOOM_FEATURE_PRIME))
		return LOOM_E_NOT_SUPPORTED;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	group = share_group_of(bo);
	/*
	 * One BO per device and group: a second import on @other would be
	 * the same GEM handle (the DRM core's PRIME cache), closed twice.
	 */
	pthread_mutex_lock(&other->lock);
	ret = share_find_locked(other, group) ? -EEXIST : share_import(bo, other, s);
	if (!ret) {
		ret = bo_register(s);
		if (ret)
			other->be->bo_destroy(other, s->handle, s->map, s->size);
	}
	if (!ret)
		share_link_locked(s, group);
	pthread_mutex_unlock(&other->lock);
	if (ret) {
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int loom_bo_translate_va(struct loom_device *from, uint64_t va,
			 struct loom_device *to, uint64_t *out)
{
	uint64_t group = 0, offset = 0;
	struct loom_bo *b;

	if (from == to) {
		*out = va;
		return 0;
	}
	pthread_mutex_lock(&from->lock);
	for (b = from->shared; b; b = b->share_next) {
		if (va >= b->va && va - b->va < b->size) {
			group = b->share_group;
			offset = va - b->va;
			break;
		}
	}
	pthread_mutex_unlock(&from->lock);
	if (!group)
		return LOOM_E_CAPTURE_NOT_SHARED;
	pthread_mutex_lock(&to->lock);
	b = share_find_locked(to, group);
	if (b)
		*out = b->va + offset;
	pthread_mutex_unlock(&to->lock);
	return b ? 0 : LOOM_E_CAPTURE_NOT_SHARED;
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

void loom_bo_free(struct loom_bo *bo)
{
	if (!bo)
		return;
	if (bo->share_group)
		share_unlink(bo);
	bo_unregister(bo);
	bo->dev->be->bo_destroy(bo->dev, bo->handle, bo->map, bo->size);
	free(bo);
}
