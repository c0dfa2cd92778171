// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: buffer objects
 *
 * BOs are shmem GEM objects.  Each belongs to the address space of the file
 * that created it and is mapped there, pinned, for its whole life: a job
 * never faults on a BO it was given, and its VA never changes.  Userspace
 * maps BOs with mmap() at the offset BO_MMAP_OFFSET returns; x86 is DMA
 * coherent, so mappings are cached.
 *
 * A freed BO stays mapped, its pages pinned, until every job already
 * submitted on its address space has finished (loom_mmu.c says why).
 * Nothing sleeps for that: the free takes the address space's busy fences
 * as they are at the close and chains a callback through them, and only
 * the release after the last runs on the device's workqueue (a client
 * closing many BOs under an endless job must not fill the workqueue with
 * sleepers).  A file may
 * pin at most max_pinned_mb MiB of BOs, and all files of all loom devices
 * together max_pinned_total_mb (by default half the RAM): ENOSPC beyond.
 * Without the second cap, clients opening many files could pin every page
 * and leave the OOM killer to pick among processes whose RSS does not show
 * the BOs.
 *
 * PRIME: a BO exported as a dma-buf and imported by a file of another loom
 * device becomes a GEM object of that device whose pages are the
 * exporter's (its sg table DMA-mapped for the importer; the exporter keeps
 * the pages pinned while attached).  Its handle's creation maps it into
 * the importing file's address space, as BO_CREATE does; BO_INFO tells
 * the VA.  The pages stay charged to the exporting file only, and the
 * reservation object is the exporter's, so the jobs of both devices order
 * through it.  A device-read-only BO is not exported (EINVAL): the flag
 * would not survive the import.  A file cannot import a BO of another file
 * of the same device (EINVAL): the DRM core hands back the exporter's own
 * object, which lives in that file's address space.
 */

#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>

#include "loom_drv.h"
#include "loom_trace.h"

static void loom_pin_uncharge(struct loom_file *lf, u64 size);

static void loom_gem_release(struct loom_bo *bo)
{
	struct loom_file *lf = bo->lf;

	if (lf) {
		if (drm_mm_node_allocated(&bo->node))
			trace_loom_bo_free(lf->ldev->pdev, lf->client_id,
					   bo->node.start, bo->node.size);
		loom_vm_unmap_bo(&lf->vm, bo);
		if (!bo->base.base.import_attach)
			loom_pin_uncharge(lf, bo->base.base.size);
	}
	drm_gem_shmem_free(&bo->base);
	if (lf)
		loom_file_put(lf);
}

static void loom_gem_free_cb(struct dma_fence *fence, struct dma_fence_cb *cb);

/*
 * Waits, without sleeping, for the next of the fences the free took, and
 * releases the BO once the last has signalled: from the caller of the free
 * or from the workqueue, never from the callback (which may be in hard IRQ).
 */
static void loom_gem_free_next(struct loom_bo *bo)
{
	for (; bo->free_next < LOOM_MAX_CORES; bo->free_next++) {
		struct dma_fence *fence = bo->free_fences[bo->free_next];

		if (fence && !dma_fence_add_callback(fence, &bo->free_cb, loom_gem_free_cb))
			return;
		dma_fence_put(fence);
	}
	loom_gem_release(bo);
}

static void loom_gem_free_work(struct work_struct *work)
{
	struct loom_bo *bo = container_of(work, struct loom_bo, free_work);

	dma_fence_put(bo->free_fences[bo->free_next++]);
	loom_gem_free_next(bo);
}

static void loom_gem_free_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct loom_bo *bo = container_of(cb, struct loom_bo, free_cb);

	queue_work(bo->lf->ldev->wq, &bo->free_work);
}

static void loom_gem_free(struct drm_gem_object *obj)
{
	struct loom_bo *bo = to_loom_bo(obj);

	if (!bo->lf) {
		loom_gem_release(bo);
		return;
	}
	/*
	 * The jobs submitted before the close: a later one that reaches for
	 * the BO's VA faults once it is unmapped, never its freed pages.
	 */
	loom_vm_busy_fences(&bo->lf->vm, bo->free_fences);
	INIT_WORK(&bo->free_work, loom_gem_free_work);
	bo->free_next = 0;
	loom_gem_free_next(bo);
}

/*
 * A new handle of @obj in @file: a BO of the file (created, or its own
 * export imported back) is already mapped there; an import from another
 * device is mapped now.  An imported object is reachable from the file
 * that imported it only (another file's import of the same dma-buf makes
 * its own object), and that file's PRIME lock serialises its imports.
 */
static int loom_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct loom_file *lf = file->driver_priv;
	struct loom_bo *bo = to_loom_bo(obj);
	int ret;

	if (bo->lf)
		return bo->lf == lf ? 0 : -EINVAL;
	if (!obj->import_attach)
		return -EINVAL;
	/* kept until the BO goes, as BO_CREATE's (see there) */
	bo->lf = loom_file_get(lf);
	ret = loom_vm_map_bo(&lf->vm, bo);
	if (ret)
		return ret;
	trace_loom_bo_create(lf->ldev->pdev, lf->client_id, bo->node.start,
			     bo->node.size);
	return 0;
}

static struct dma_buf *loom_gem_prime_export(struct drm_gem_object *obj, int flags)
{
	if (to_loom_bo(obj)->flags & DRM_LOOM_BO_DEVICE_READ_ONLY)
		return ERR_PTR(-EINVAL);
	return drm_gem_prime_export(obj, flags);
}

static const struct drm_gem_object_funcs loom_gem_funcs = {
	.free = loom_gem_free,
	.open = loom_gem_open,
	.export = loom_gem_prime_export,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *loom_gem_create_object(struct drm_device *drm, size_t size)
{
	struct loom_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &loom_gem_funcs;
	return &bo->base.base;
}

/*
 * Unmaps @bo's pages from the device that is going away (remove); its
 * pages stay, for mmap, until the BO is freed.  No job can use it any more.
 */
void loom_bo_release_dma(struct loom_bo *bo)
{
	struct drm_gem_shmem_object *shmem = &bo->base;

	/* an import's sg table is its attachment's, unmapped at the free */
	if (shmem->base.import_attach)
		return;
	dma_resv_lock(shmem->base.resv, NULL);
	if (shmem->sgt) {
		dma_unmap_sgtable(shmem->base.dev->dev, shmem->sgt, DMA_BIDIRECTIONAL, 0);
		sg_free_table(shmem->sgt);
		kfree(shmem->sgt);
		shmem->sgt = NULL;
	}
	dma_resv_unlock(shmem->base.resv);
}

/* Bytes of BOs pinned by every file of every loom device. */
static atomic64_t loom_pinned_bytes = ATOMIC64_INIT(0);

static u64 loom_pinned_total_cap(void)
{
	u64 mb = READ_ONCE(loom_max_pinned_total_mb);

	return mb ? mb << 20 : (u64)totalram_pages() << PAGE_SHIFT >> 1;
}

/* Counts @size against the file's and the system's pinned-memory caps. */
static int loom_pin_charge(struct loom_file *lf, u64 size)
{
	u64 cap = (u64)READ_ONCE(loom_max_pinned_mb) << 20;

	if (atomic64_add_return(size, &lf->bo_bytes) > cap) {
		atomic64_sub(size, &lf->bo_bytes);
		return -ENOSPC;
	}
	if (atomic64_add_return(size, &loom_pinned_bytes) > loom_pinned_total_cap()) {
		atomic64_sub(size, &loom_pinned_bytes);
		atomic64_sub(size, &lf->bo_bytes);
		return -ENOSPC;
	}
	return 0;
}

static void loom_pin_uncharge(struct loom_file *lf, u64 size)
{
	atomic64_sub(size, &lf->bo_bytes);
	atomic64_sub(size, &loom_pinned_bytes);
}

int loom_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct loom_file *lf = file->driver_priv;
	struct drm_loom_bo_create *args = data;
	u64 size = PAGE_ALIGN(args->size);
	struct drm_gem_shmem_object *shmem;
	struct loom_bo *bo;
	int ret;

	if (args->flags & ~DRM_LOOM_BO_FLAGS)
		return -EINVAL;
	if (!args->size || args->size > DRM_LOOM_BO_MAX_SIZE)
		return -EINVAL;
	ret = loom_pin_charge(lf, size);
	if (ret)
		return ret;

	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem)) {
		loom_pin_uncharge(lf, size);
		return PTR_ERR(shmem);
	}
	bo = container_of(shmem, struct loom_bo, base);
	bo->flags = args->flags;
	/*
	 * The BO's mapping lives in lf->vm: keep it until the BO goes.  Set
	 * before mapping: a map that fails after writing PTEs leaves pages a
	 * job may have reached, and the free (which uncharges them) waits for
	 * the address space's jobs as any BO's does.
	 */
	bo->lf = loom_file_get(lf);

	ret = loom_vm_map_bo(&lf->vm, bo);
	if (ret)
		goto err_put;
	trace_loom_bo_create(lf->ldev->pdev, lf->client_id, bo->node.start,
			     bo->node.size);

	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	if (ret)
		goto err_put;
	args->va = bo->node.start;
	/* The handle holds the object now. */
	drm_gem_object_put(&shmem->base);
	return 0;

err_put:
	drm_gem_object_put(&shmem->base);
	return ret;
}

int loom_ioctl_bo_mmap_offset(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct drm_loom_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return ret;
}

int loom_ioctl_bo_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_loom_bo_wait *args = data;
	struct drm_gem_object *obj;
	long ret;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	/* DMA_RESV_USAGE_READ covers every job, reading or writing. */
	if (args->timeout_ns == 0) {
		ret = dma_resv_test_signaled(obj->resv, DMA_RESV_USAGE_READ) ? 0 : -EBUSY;
	} else {
		long timeout = args->timeout_ns < 0 ? MAX_SCHEDULE_TIMEOUT :
			       (long)nsecs_to_jiffies64(args->timeout_ns) + 1;

		ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true,
					    timeout);
		if (ret == 0)
			ret = -ETIMEDOUT;
		else if (ret > 0)
			ret = 0;
	}
	drm_gem_object_put(obj);
	return ret;
}

int loom_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct loom_file *lf = file->driver_priv;
	struct drm_loom_bo_info *args = data;
	struct drm_gem_object *obj;
	struct loom_bo *bo;
	int ret = 0;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_loom_bo(obj);
	/* a handle's creation mapped it (loom_gem_open), or failed */
	if (bo->lf != lf || !drm_mm_node_allocated(&bo->node)) {
		ret = -ENOENT;
	} else {
		args->va = bo->node.start;
		args->size = obj->size;
	}
	drm_gem_object_put(obj);
	return ret;
}
