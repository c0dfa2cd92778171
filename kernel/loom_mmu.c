// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: device address spaces
 *
 * Each open file owns one address space: four levels of LOOM_PTE_* tables
 * (uapi/loom_device.h) in coherent DMA memory, and a drm_mm allocator of
 * device VAs.  A BO is mapped when it is created and unmapped when it is
 * freed; table pages live until the address space goes.  Jobs name the
 * level-0 table of their file, so another file's BOs are simply not there.
 *
 * A job may touch any BO of its address space, not only those it listed,
 * so a BO is unmapped and its pages released only once every job submitted
 * on the address space has finished: the address space keeps the done
 * fence of its last job per core (a core finishes its jobs in order).  The
 * device caches translations (LOOM_CAP_TLB): after clearing PTEs, and
 * before the pages or table pages are reused, the driver invalidates them.
 */

#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <drm/drm_drv.h>

#include "loom_drv.h"

/* Mapping or unmapping reschedules after this many bytes. */
#define LOOM_MAP_RESCHED_BYTES	(4ULL << 20)

struct loom_pt_page {
	struct list_head link;
	u64 *cpu;
	dma_addr_t dma;
};

static struct device *loom_vm_dev(struct loom_vm *vm)
{
	return &vm->ldev->pdev->dev;
}

static struct loom_pt_page *loom_pt_alloc_locked(struct loom_vm *vm)
{
	struct loom_pt_page *pt;

	lockdep_assert_held(&vm->lock);
	/* Testing (debugfs fail_pt_alloc): the n-th next allocation fails. */
	if (unlikely(atomic_read(&vm->ldev->fail_pt_alloc)) &&
	    !atomic_dec_if_positive(&vm->ldev->fail_pt_alloc))
		return NULL;
	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (!pt)
		return NULL;
	pt->cpu = dma_alloc_coherent(loom_vm_dev(vm), LOOM_PAGE_SIZE, &pt->dma,
				     GFP_KERNEL);
	if (!pt->cpu)
		goto err_free;
	/* Indexed by bus page: a walk finds each table in O(1). */
	if (xa_err(xa_store(&vm->table_index, pt->dma >> LOOM_PAGE_SHIFT, pt,
			    GFP_KERNEL)))
		goto err_dma;
	list_add(&pt->link, &vm->tables);
	return pt;

err_dma:
	dma_free_coherent(loom_vm_dev(vm), LOOM_PAGE_SIZE, pt->cpu, pt->dma);
err_free:
	kfree(pt);
	return NULL;
}

int loom_vm_init(struct loom_vm *vm, struct loom_device *ldev)
{
	struct loom_pt_page *root;

	vm->ldev = ldev;
	mutex_init(&vm->lock);
	spin_lock_init(&vm->fence_lock);
	INIT_LIST_HEAD(&vm->tables);
	xa_init(&vm->table_index);
	/* No one else sees @vm yet: taken for the tables' lockdep rule. */
	mutex_lock(&vm->lock);
	root = loom_pt_alloc_locked(vm);
	mutex_unlock(&vm->lock);
	if (!root)
		return -ENOMEM;
	vm->root = root->cpu;
	vm->root_dma = root->dma;
	drm_mm_init(&vm->mm, LOOM_VA_START, LOOM_VA_END - LOOM_VA_START);
	return 0;
}

/*
 * Drops every translation the device cached.  Without the device (unplug)
 * there is nothing to invalidate.
 */
static void loom_vm_invalidate(struct loom_vm *vm)
{
	struct loom_device *ldev = vm->ldev;
	int idx;

	if (!(ldev->hw_caps & LOOM_CAP_TLB) || !drm_dev_enter(&ldev->drm, &idx))
		return;
	loom_write(ldev, LOOM_REG_MMU_INVALIDATE, LOOM_MMU_INVALIDATE_ALL);
	/* The read flushes the posted write: the invalidation is done. */
	loom_read(ldev, LOOM_REG_MMU_INVALIDATE);
	drm_dev_exit(idx);
}

/* Remembers @fence, a job's done fence, as the last on @core. */
void loom_vm_add_fence(struct loom_vm *vm, unsigned int core,
		       struct dma_fence *fence)
{
	struct dma_fence *old;

	spin_lock(&vm->fence_lock);
	old = vm->last[core];
	vm->last[core] = dma_fence_get(fence);
	spin_unlock(&vm->fence_lock);
	dma_fence_put(old);
}

/* The fence of the last job on core @i not known done, or NULL. */
static struct dma_fence *loom_vm_busy_fence(struct loom_vm *vm, unsigned int i)
{
	struct dma_fence *fence;

	spin_lock(&vm->fence_lock);
	fence = vm->last[i];
	if (fence && dma_fence_is_signaled(fence)) {
		vm->last[i] = NULL;
		spin_unlock(&vm->fence_lock);
		dma_fence_put(fence);
		return NULL;
	}
	fence = dma_fence_get(fence);
	spin_unlock(&vm->fence_lock);
	return fence;
}

/*
 * Fills @fences with a reference to each core's last fence of @vm not known
 * done, or NULL: every job submitted on @vm so far ends by them.
 */
void loom_vm_busy_fences(struct loom_vm *vm, struct dma_fence **fences)
{
	unsigned int i;

	for (i = 0; i < LOOM_MAX_CORES; i++)
		fences[i] = loom_vm_busy_fence(vm, i);
}

static void loom_vm_free_tables_locked(struct loom_vm *vm)
{
	struct loom_pt_page *pt, *tmp;

	lockdep_assert_held(&vm->lock);
	list_for_each_entry_safe(pt, tmp, &vm->tables, link) {
		dma_free_coherent(loom_vm_dev(vm), LOOM_PAGE_SIZE, pt->cpu, pt->dma);
		list_del(&pt->link);
		kfree(pt);
	}
	xa_destroy(&vm->table_index);
}

void loom_vm_fini(struct loom_vm *vm)
{
	unsigned int i;

	/* A new address space may get these table pages. */
	loom_vm_invalidate(vm);
	for (i = 0; i < LOOM_MAX_CORES; i++)
		dma_fence_put(vm->last[i]);
	drm_mm_takedown(&vm->mm);
	/* The last reference: taken for the tables' lockdep rule. */
	mutex_lock(&vm->lock);
	loom_vm_free_tables_locked(vm);
	mutex_unlock(&vm->lock);
	mutex_destroy(&vm->lock);
}

/*
 * The device is going (remove): its DMA memory must not outlive the driver's
 * binding, but a file may stay open long after.  No job runs any more; the
 * BOs' DMA mappings and the tables go now, and later unmaps find nothing
 * to clear (the BOs' pages stay until the BOs go).
 */
void loom_vm_release_dma(struct loom_vm *vm)
{
	struct drm_mm_node *node;

	mutex_lock(&vm->lock);
	drm_mm_for_each_node(node, &vm->mm)
		loom_bo_release_dma(container_of(node, struct loom_bo, node));
	loom_vm_free_tables_locked(vm);
	vm->root = NULL;
	vm->released = true;
	mutex_unlock(&vm->lock);
}

/* CPU pointer of the table at bus address @dma; vm->lock held. */
static u64 *loom_pt_lookup_locked(struct loom_vm *vm, dma_addr_t dma)
{
	struct loom_pt_page *pt;

	lockdep_assert_held(&vm->lock);
	pt = xa_load(&vm->table_index, dma >> LOOM_PAGE_SHIFT);
	return pt && pt->dma == dma ? pt->cpu : NULL;
}

/*
 * The level-3 entry for @va, creating missing tables when @create;
 * vm->lock held.  NULL when a table cannot be allocated (or is missing and
 * @create is false).
 */
static u64 *loom_pte_locked(struct loom_vm *vm, u64 va, bool create)
{
	u64 *table = vm->root;
	unsigned int level;

	lockdep_assert_held(&vm->lock);
	for (level = 0; level < LOOM_PT_LEVELS - 1; level++) {
		u64 *entry = &table[LOOM_PT_INDEX(va, level)];
		struct loom_pt_page *pt;

		if (!(*entry & LOOM_PTE_VALID)) {
			if (!create)
				return NULL;
			pt = loom_pt_alloc_locked(vm);
			if (!pt)
				return NULL;
			/* The device reads tables by DMA: publish it whole. */
			WRITE_ONCE(*entry, pt->dma | LOOM_PTE_VALID);
			table = pt->cpu;
			continue;
		}
		/*
		 * The tables sit in memory the device can reach: an entry
		 * naming no table of ours was not written by us.  No WARN.
		 */
		table = loom_pt_lookup_locked(vm, READ_ONCE(*entry) & LOOM_PTE_ADDR_MASK);
		if (!table) {
			dev_err_ratelimited(loom_vm_dev(vm),
					    "page table entry 0x%llx names no table\n",
					    *entry);
			return NULL;
		}
	}
	return &table[LOOM_PT_INDEX(va, LOOM_PT_LEVELS - 1)];
}

static void loom_vm_clear_locked(struct loom_vm *vm, u64 va, u64 size)
{
	u64 off;

	lockdep_assert_held(&vm->lock);
	for (off = 0; off < size; off += LOOM_PAGE_SIZE) {
		u64 *pte = loom_pte_locked(vm, va + off, false);

		if (pte)
			WRITE_ONCE(*pte, 0);
		if (!((off + LOOM_PAGE_SIZE) % LOOM_MAP_RESCHED_BYTES))
			cond_resched();
	}
}

static int loom_vm_write_ptes_locked(struct loom_vm *vm, struct loom_bo *bo,
				     struct sg_table *sgt)
{
	u64 perms = LOOM_PTE_VALID | LOOM_PTE_READ;
	u64 va = bo->node.start;
	struct sg_dma_page_iter iter;

	lockdep_assert_held(&vm->lock);
	if (!(bo->flags & DRM_LOOM_BO_DEVICE_READ_ONLY))
		perms |= LOOM_PTE_WRITE;

	/* PAGE_SIZE is 4 KiB on x86-64, the device's page size too. */
	for_each_sgtable_dma_page(sgt, &iter, 0) {
		u64 *pte = loom_pte_locked(vm, va, true);

		if (!pte)
			return -ENOMEM;
		WRITE_ONCE(*pte, sg_page_iter_dma_address(&iter) | perms);
		va += LOOM_PAGE_SIZE;
		/* up to 1 GiB: let others run every few MiB */
		if (!((va - bo->node.start) % LOOM_MAP_RESCHED_BYTES))
			cond_resched();
	}
	return 0;
}

int loom_vm_map_bo(struct loom_vm *vm, struct loom_bo *bo)
{
	size_t size = bo->base.base.size;
	struct sg_table *sgt;
	int ret;

	BUILD_BUG_ON(PAGE_SIZE != LOOM_PAGE_SIZE);
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);

	mutex_lock(&vm->lock);
	if (vm->released) {
		mutex_unlock(&vm->lock);
		return -ENODEV;
	}
	ret = drm_mm_insert_node_generic(&vm->mm, &bo->node, size,
					 LOOM_PAGE_SIZE, 0, 0);
	if (!ret) {
		ret = loom_vm_write_ptes_locked(vm, bo, sgt);
		if (ret) {
			/*
			 * A job of the file may have reached the pages
			 * through the PTEs written so far (its TLB too): the
			 * caller frees them only once the VM is idle.
			 */
			loom_vm_clear_locked(vm, bo->node.start, size);
			loom_vm_invalidate(vm);
			drm_mm_remove_node(&bo->node);
		}
	}
	mutex_unlock(&vm->lock);
	return ret;
}

void loom_vm_unmap_bo(struct loom_vm *vm, struct loom_bo *bo)
{
	if (!drm_mm_node_allocated(&bo->node))
		return;
	mutex_lock(&vm->lock);
	if (!vm->released) {
		loom_vm_clear_locked(vm, bo->node.start, bo->node.size);
		loom_vm_invalidate(vm);
	}
	drm_mm_remove_node(&bo->node);
	mutex_unlock(&vm->lock);
}
