// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: loom PCI driver and DRM device
 *
 * Probe enables the loom-cgra function, maps BAR0, checks the device's
 * identity and ABI major, brings up its cores and their schedulers, and
 * registers a DRM device: a compute accelerator (/dev/accel/accelN) where
 * the kernel has the accel subsystem, else a render node.  The ioctl table, open/postclose,
 * fdinfo and the PCI reset and AER handlers live here; each ioctl's argument rules are in
 * Documentation/uapi.rst and uapi/drm/loom_drm.h.
 */

#include <linux/module.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "drm/loom_drm.h"
#include "loom_compat.h"
#include "loom_drv.h"

/*
 * The DRM driver version (major.minor.patchlevel) and MODULE_VERSION are the
 * project's version, the top-level VERSION file: Kbuild defines
 * LOOM_DRIVER_MAJOR, LOOM_DRIVER_MINOR, LOOM_DRIVER_PATCHLEVEL and
 * LOOM_PROJECT_VERSION from it.  The interface's own number is
 * DRM_LOOM_UAPI_VERSION.  What each minor brought:
 * 0.1 - GET_PARAM: hardware ID, version, capabilities, uapi version, PCI ID
 * 0.2 - GET_PARAM: cores, fabric width and height, hardware limits
 * 0.3 - BO_CREATE, BO_MMAP_OFFSET, BO_WAIT, SUBMIT, JOB_INFO, uring_cmd
 *       SUBMIT, fdinfo; GET_PARAM: features, VA range
 * 0.4 - SUBMIT_NONBLOCK, in-flight and pinned-memory limits, per-process
 *       bans, EPROTO for completions the device got wrong
 * 0.5 - accel node on 6.2+ kernels, cancelable uring_cmds where io_uring
 *       has them; features say which
 * 0.6 - GET_PARAM: instruction slots per PE (temporal PEs); a cap on the
 *       memory all files pin together; missed doorbells rung again
 * 0.7 - one project version (0.7.0); tracepoints; the fdinfo drm-cycles
 *       and drm-total-cycles pair; AER and function-level resets;
 *       timeline syncobjs (uapi 8); PRIME between loom devices and
 *       BO_INFO (uapi 9); JOB_INFO waits for the job (uapi 10)
 */
#ifndef LOOM_PROJECT_VERSION
#error "LOOM_PROJECT_VERSION: build loom.ko through Kbuild, which reads VERSION"
#endif

#define LOOM_FEATURES	(DRM_LOOM_FEATURE_SUBMIT | DRM_LOOM_FEATURE_URING_CMD | \
			 DRM_LOOM_FEATURE_DEADLINE | DRM_LOOM_FEATURE_JOB_INFO | \
			 DRM_LOOM_FEATURE_FDINFO | DRM_LOOM_FEATURE_SUBMIT_NONBLOCK | \
			 LOOM_FEATURE_NODE | LOOM_FEATURE_URING_CANCEL | \
			 DRM_LOOM_FEATURE_URING_JOB_ID | DRM_LOOM_FEATURE_TIMELINE | \
			 DRM_LOOM_FEATURE_PRIME | DRM_LOOM_FEATURE_JOB_INFO_WAIT)

unsigned int loom_max_pinned_mb = 1024;
module_param_named(max_pinned_mb, loom_max_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_mb, "MiB of BOs one open file may pin (BO_CREATE: ENOSPC beyond)");

unsigned int loom_max_pinned_total_mb;
module_param_named(max_pinned_total_mb, loom_max_pinned_total_mb, uint, 0644);
MODULE_PARM_DESC(max_pinned_total_mb,
		 "MiB of BOs all files together may pin, 0 for half the RAM (BO_CREATE: ENOSPC beyond)");

unsigned int loom_max_job_ms = 60000;
module_param_named(max_job_ms, loom_max_job_ms, uint, 0644);
MODULE_PARM_DESC(max_job_ms, "longest a job may run, progressing or not (ms)");

bool loom_direct_submit = true;
module_param_named(direct_submit, loom_direct_submit, bool, 0644);
MODULE_PARM_DESC(direct_submit,
		 "put a job whose dependencies are done on the ring at SUBMIT, not from the scheduler's worker");

/* The device ABI major this driver speaks. */
#define LOOM_SUPPORTED_HW_MAJOR	LOOM_VERSION_MAJOR(LOOM_VERSION_CURRENT)

static int loom_ioctl_get_param(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct loom_device *ldev = to_loom_device(drm);
	struct drm_loom_get_param *args = data;
	int idx, ret = 0;

	if (args->pad)
		return -EINVAL;

	/* Registers are gone once the device is unplugged. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	switch (args->param) {
	case DRM_LOOM_PARAM_HW_ID:
		args->value = loom_read(ldev, LOOM_REG_ID);
		break;
	case DRM_LOOM_PARAM_HW_VERSION:
		args->value = loom_read(ldev, LOOM_REG_VERSION);
		break;
	case DRM_LOOM_PARAM_HW_CAPS:
		args->value = loom_read(ldev, LOOM_REG_CAPS);
		break;
	case DRM_LOOM_PARAM_UAPI_VERSION:
		args->value = DRM_LOOM_UAPI_VERSION;
		break;
	case DRM_LOOM_PARAM_PCI_ID:
		args->value = (u32)ldev->pdev->vendor << 16 | ldev->pdev->device;
		break;
	case DRM_LOOM_PARAM_NUM_CORES:
		args->value = ldev->num_cores;
		break;
	case DRM_LOOM_PARAM_FABRIC_WIDTH:
		args->value = LOOM_FABRIC_WIDTH(ldev->fabric);
		break;
	case DRM_LOOM_PARAM_FABRIC_HEIGHT:
		args->value = LOOM_FABRIC_HEIGHT(ldev->fabric);
		break;
	case DRM_LOOM_PARAM_HW_LIMITS:
		args->value = ldev->limits;
		break;
	case DRM_LOOM_PARAM_FEATURES:
		args->value = LOOM_FEATURES;
		break;
	case DRM_LOOM_PARAM_VA_START:
		args->value = LOOM_VA_START;
		break;
	case DRM_LOOM_PARAM_VA_END:
		args->value = LOOM_VA_END;
		break;
	case DRM_LOOM_PARAM_PE_SLOTS:
		args->value = LOOM_FABRIC_SLOTS(ldev->fabric) ?: 1;
		break;
	default:
		drm_dbg_driver(drm, "unknown GET_PARAM %u\n", args->param);
		ret = -EINVAL;
		break;
	}

	drm_dev_exit(idx);
	return ret;
}

/* ---- processes ---------------------------------------------------------------- */

/*
 * The calling process's standing, created on its first open.  Entries of
 * processes that are gone, and of processes with no file and no hang, are
 * dropped here, so the list is bounded by the processes that use the device.
 */
static struct loom_client *loom_client_get(struct loom_device *ldev)
{
	struct loom_client *client, *tmp, *found = NULL;
	struct pid *tgid = task_tgid(current);

	mutex_lock(&ldev->clients_lock);
	list_for_each_entry_safe(client, tmp, &ldev->clients, link) {
		if (client->tgid == tgid) {
			found = client;
		} else if (!client->users && !pid_has_task(client->tgid, PIDTYPE_TGID)) {
			list_del(&client->link);
			put_pid(client->tgid);
			kfree(client);
		}
	}
	if (!found) {
		found = kzalloc(sizeof(*found), GFP_KERNEL_ACCOUNT);
		if (found) {
			found->tgid = get_pid(tgid);
			list_add(&found->link, &ldev->clients);
		}
	}
	if (found)
		found->users++;
	mutex_unlock(&ldev->clients_lock);
	return found;
}

static void loom_client_put(struct loom_device *ldev, struct loom_client *client)
{
	mutex_lock(&ldev->clients_lock);
	/* A banned process stays banned while it lives. */
	if (!--client->users && !atomic_read(&client->hangs)) {
		list_del(&client->link);
		put_pid(client->tgid);
		kfree(client);
	}
	mutex_unlock(&ldev->clients_lock);
}

void loom_client_hung(struct loom_device *ldev, struct loom_client *client)
{
	if (atomic_inc_return(&client->hangs) == DRM_LOOM_MAX_HANGS)
		drm_dbg_driver(&ldev->drm, "pid %d banned after %d hangs\n",
			       pid_nr(client->tgid), DRM_LOOM_MAX_HANGS);
}

static void loom_clients_fini(struct loom_device *ldev)
{
	struct loom_client *client, *tmp;

	list_for_each_entry_safe(client, tmp, &ldev->clients, link) {
		put_pid(client->tgid);
		kfree(client);
	}
}

/* ---- files ------------------------------------------------------------------ */

struct loom_file *loom_file_get(struct loom_file *lf)
{
	kref_get(&lf->refcount);
	return lf;
}

static void loom_file_release(struct kref *ref)
{
	struct loom_file *lf = container_of(ref, struct loom_file, refcount);
	struct loom_device *ldev = lf->ldev;

	mutex_lock(&ldev->file_list_lock);
	list_del(&lf->link);
	mutex_unlock(&ldev->file_list_lock);
	loom_vm_fini(&lf->vm);
	loom_records_fini(lf);
	loom_client_put(ldev, lf->client);
	kvfree(lf);
	if (atomic_dec_and_test(&ldev->files))
		wake_up_all(&ldev->files_wq);
}

void loom_file_put(struct loom_file *lf)
{
	kref_put(&lf->refcount, loom_file_release);
}

/*
 * The file's drm-client-id: the DRM core's where it prints the common
 * fdinfo keys itself, so that tracepoints and fdinfo name files alike.
 */
static u64 loom_new_client_id(struct loom_device *ldev, struct drm_file *file)
{
#ifdef LOOM_HAVE_DRM_SHOW_FDINFO
	return file->client_id;
#else
	return atomic64_inc_return(&ldev->next_client_id);
#endif
}

static int loom_open(struct drm_device *drm, struct drm_file *file)
{
	struct loom_device *ldev = to_loom_device(drm);
	struct loom_file *lf;
	unsigned int i;
	int ret;

	lf = kvzalloc(sizeof(*lf), GFP_KERNEL_ACCOUNT);
	if (!lf)
		return -ENOMEM;
	kref_init(&lf->refcount);
	lf->ldev = ldev;
	spin_lock_init(&lf->records_lock);
	init_waitqueue_head(&lf->records_wq);
	init_waitqueue_head(&lf->inflight_wq);
	init_waitqueue_head(&lf->direct_wq);
	lf->client_id = loom_new_client_id(ldev, file);
	lf->client = loom_client_get(ldev);
	if (!lf->client) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = loom_vm_init(&lf->vm, ldev);
	if (ret)
		goto err_client;
	for (i = 0; i < ldev->num_cores; i++) {
		struct drm_gpu_scheduler *sched = &ldev->cores[i].sched;

		ret = drm_sched_entity_init(&lf->entity[i], DRM_SCHED_PRIORITY_NORMAL,
					    &sched, 1, NULL);
		if (ret)
			goto err_entities;
	}
	atomic_inc(&ldev->files);
	mutex_lock(&ldev->file_list_lock);
	list_add(&lf->link, &ldev->file_list);
	mutex_unlock(&ldev->file_list_lock);
	file->driver_priv = lf;
	return 0;

err_entities:
	while (i--)
		drm_sched_entity_destroy(&lf->entity[i]);
	loom_vm_fini(&lf->vm);
err_client:
	loom_client_put(ldev, lf->client);
err_free:
	kvfree(lf);
	return ret;
}

static void loom_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct loom_device *ldev = to_loom_device(drm);
	struct loom_file *lf = file->driver_priv;
	unsigned int i;

	/*
	 * A job the direct path put on a ring stays in its entity until the
	 * scheduler claims it; killed there, it would be freed while the
	 * device runs it.  Every such job is claimed or leaves the ring soon
	 * (it ends, or the hang check, a reset or the unplug takes it off).
	 */
	wait_event(lf->direct_wq, !atomic_read(&lf->direct_jobs));
	/* Waits for the file's queued jobs, or kills them past a timeout. */
	for (i = 0; i < ldev->num_cores; i++) {
		drm_sched_entity_destroy(&lf->entity[i]);
		dma_fence_put(lf->last_scheduled[i]);
	}
	/* BOs and jobs still alive keep the address space. */
	loom_file_put(lf);
}

/*
 * One core's keys.  The device has no free-running clock and its fabric
 * cycles count work, not time (an idle core counts none), so the cycle pair
 * generic tools divide for utilisation is in nanoseconds: drm-cycles is
 * drm-engine's busy time, drm-total-cycles the time since the core came
 * up.  The device's fabric cycles have a key of loom's own.
 */
static void loom_print_fdinfo_core(struct drm_printer *p, struct loom_file *lf,
				   struct loom_core *core)
{
	unsigned int i = core->index;
	s64 busy = atomic64_read(&lf->busy_ns[i]);

	drm_printf(p, "drm-engine-core%u:\t%lld ns\n", i, busy);
	drm_printf(p, "drm-engine-capacity-core%u:\t1\n", i);
	drm_printf(p, "drm-cycles-core%u:\t%lld\n", i, busy);
	drm_printf(p, "drm-total-cycles-core%u:\t%lld\n", i,
		   ktime_to_ns(ktime_sub(ktime_get(), core->up_since)));
	drm_printf(p, "loom-fabric-cycles-core%u:\t%lld\n", i,
		   atomic64_read(&lf->cycles[i]));
}

/* DRM fdinfo keys (Documentation/gpu/drm-usage-stats.rst), for nvtop & co. */
static void loom_print_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct loom_device *ldev = to_loom_device(file->minor->dev);
	struct loom_file *lf = file->driver_priv;
	unsigned int i;

	for (i = 0; i < ldev->num_cores; i++)
		loom_print_fdinfo_core(p, lf, &ldev->cores[i]);
	/* Every BO is pinned and resident for its whole life. */
	drm_printf(p, "drm-memory-system:\t%lld KiB\n",
		   atomic64_read(&lf->bo_bytes) / 1024);
	drm_printf(p, "drm-total-system:\t%lld KiB\n",
		   atomic64_read(&lf->bo_bytes) / 1024);
	drm_printf(p, "drm-resident-system:\t%lld KiB\n",
		   atomic64_read(&lf->bo_bytes) / 1024);
}

#ifdef LOOM_HAVE_DRM_SHOW_FDINFO
/* drm_show_fdinfo() has printed drm-driver, drm-client-id and drm-pdev. */
#define loom_fops_show_fdinfo	drm_show_fdinfo
#else
static void loom_fops_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_printer p = drm_seq_file_printer(m);
	struct drm_file *file = f->private_data;
	struct loom_device *ldev = to_loom_device(file->minor->dev);
	struct loom_file *lf = file->driver_priv;

	drm_printf(&p, "drm-driver:\t%s\n", ldev->drm.driver->name);
	drm_printf(&p, "drm-pdev:\t%s\n", pci_name(ldev->pdev));
	drm_printf(&p, "drm-client-id:\t%llu\n", lf->client_id);
	loom_print_fdinfo(&p, file);
}
#endif

/*
 * Ioctls run inside drm_dev_enter(): once the device is unplugged they fail
 * with ENODEV instead of reaching for hardware that is gone.
 */
#define LOOM_IOCTL_ENTERED(fn)						\
static int fn##_entered(struct drm_device *drm, void *data,		\
			struct drm_file *file)				\
{									\
	int idx, ret;							\
									\
	if (!drm_dev_enter(drm, &idx))					\
		return -ENODEV;						\
	ret = fn(drm, data, file);					\
	drm_dev_exit(idx);						\
	return ret;							\
}

/*
 * Except those that sleep until a job ends (BO_WAIT, JOB_INFO's wait) or
 * behind a worker (JOB_INFO's dump) and touch no hardware: removal waits
 * for every caller inside drm_dev_enter() to leave before it ends the
 * jobs, so they sleep outside.  They fail with ENODEV once the device is
 * unplugged too, also when the removal ended their sleep.
 */
#define LOOM_IOCTL_PRESENT(fn)						\
static int fn##_present(struct drm_device *drm, void *data,		\
			struct drm_file *file)				\
{									\
	int ret;							\
									\
	if (drm_dev_is_unplugged(drm))					\
		return -ENODEV;						\
	ret = fn(drm, data, file);					\
	return drm_dev_is_unplugged(drm) ? -ENODEV : ret;		\
}

LOOM_IOCTL_ENTERED(loom_ioctl_bo_create)
LOOM_IOCTL_ENTERED(loom_ioctl_bo_mmap_offset)
LOOM_IOCTL_ENTERED(loom_ioctl_bo_info)
LOOM_IOCTL_PRESENT(loom_ioctl_bo_wait)

/* SUBMIT's waits for submission sleep on userspace: outside, first. */
static int loom_ioctl_submit_entered(struct drm_device *drm, void *data,
				     struct drm_file *file)
{
	int idx, ret;

	ret = loom_submit_wait_for_points(file, data, false);
	if (ret)
		return ret;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = loom_ioctl_submit(drm, data, file);
	drm_dev_exit(idx);
	return ret;
}

LOOM_IOCTL_PRESENT(loom_ioctl_job_info)

static const struct drm_ioctl_desc loom_ioctls[] = {
	DRM_IOCTL_DEF_DRV(LOOM_GET_PARAM, loom_ioctl_get_param, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(LOOM_BO_CREATE, loom_ioctl_bo_create_entered,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(LOOM_BO_MMAP_OFFSET, loom_ioctl_bo_mmap_offset_entered,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(LOOM_BO_WAIT, loom_ioctl_bo_wait_present, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(LOOM_SUBMIT, loom_ioctl_submit_entered, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(LOOM_JOB_INFO, loom_ioctl_job_info_present,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(LOOM_BO_INFO, loom_ioctl_bo_info_entered,
			  DRM_RENDER_ALLOW),
};

static const struct file_operations loom_drm_fops = {
	.owner = THIS_MODULE,
	LOOM_NODE_FOPS,
	.uring_cmd = loom_uring_cmd,
	.show_fdinfo = loom_fops_show_fdinfo,
};

static const struct drm_driver loom_drm_driver = {
	.driver_features = DRIVER_GEM | LOOM_DRIVER_NODE | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = loom_open,
	.postclose = loom_postclose,
	.gem_create_object = loom_gem_create_object,
	/* PRIME between loom devices: loom_gem.c maps imports */
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	LOOM_GEM_PRIME_MMAP
	.debugfs_init = LOOM_DEBUGFS_INIT,
	.ioctls = loom_ioctls,
	.num_ioctls = ARRAY_SIZE(loom_ioctls),
	.fops = &loom_drm_fops,
#ifdef LOOM_HAVE_DRM_SHOW_FDINFO
	.show_fdinfo = loom_print_fdinfo,
#endif
	.name = "loom",
	.desc = "loom spatial-dataflow accelerator",
	.date = "20261202",
	.major = LOOM_DRIVER_MAJOR,
	.minor = LOOM_DRIVER_MINOR,
	.patchlevel = LOOM_DRIVER_PATCHLEVEL,
};

static int loom_check_identity(struct loom_device *ldev)
{
	struct device *dev = &ldev->pdev->dev;
	u32 id = loom_read(ldev, LOOM_REG_ID);

	if (id != LOOM_ID_MAGIC) {
		dev_err(dev, "unexpected ID register 0x%08x\n", id);
		return -ENODEV;
	}

	ldev->hw_version = loom_read(ldev, LOOM_REG_VERSION);
	if (LOOM_VERSION_MAJOR(ldev->hw_version) != LOOM_SUPPORTED_HW_MAJOR) {
		dev_err(dev, "device ABI %u.%u, driver speaks %u.x\n",
			LOOM_VERSION_MAJOR(ldev->hw_version),
			LOOM_VERSION_MINOR(ldev->hw_version),
			LOOM_SUPPORTED_HW_MAJOR);
		return -ENODEV;
	}

	ldev->hw_caps = loom_read(ldev, LOOM_REG_CAPS);
	ldev->num_cores = loom_read(ldev, LOOM_REG_NUM_CORES);
	ldev->fabric = loom_read(ldev, LOOM_REG_FABRIC);
	ldev->limits = loom_read(ldev, LOOM_REG_LIMITS);
	/* The fabric size bounds the state dumps the device may write. */
	if (!ldev->num_cores || ldev->num_cores > LOOM_MAX_CORES ||
	    !LOOM_FABRIC_WIDTH(ldev->fabric) || !LOOM_FABRIC_HEIGHT(ldev->fabric) ||
	    LOOM_FABRIC_WIDTH(ldev->fabric) > LOOM_FABRIC_MAX_DIM ||
	    LOOM_FABRIC_HEIGHT(ldev->fabric) > LOOM_FABRIC_MAX_DIM) {
		dev_err(dev, "implausible device: %u cores, fabric 0x%x\n",
			ldev->num_cores, ldev->fabric);
		return -ENODEV;
	}
	return 0;
}

/*
 * The last reference to the DRM device is gone: every file is closed.
 * Jobs and BOs may still hold their file's state for a moment (a job being
 * freed, a deferred BO free); once they let go, nothing uses the
 * schedulers.
 */
static void loom_drm_release(struct drm_device *drm, void *arg)
{
	struct loom_device *ldev = to_loom_device(drm);

	wait_event(ldev->files_wq, !atomic_read(&ldev->files));
	loom_sched_fini_all(ldev);
	destroy_workqueue(ldev->hang_wq);
	destroy_workqueue(ldev->wq);
	loom_clients_fini(ldev);
}

static int loom_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct loom_device *ldev;
	int ret;

	ldev = devm_drm_dev_alloc(&pdev->dev, &loom_drm_driver,
				  struct loom_device, drm);
	if (IS_ERR(ldev))
		return PTR_ERR(ldev);
	ldev->pdev = pdev;
	pci_set_drvdata(pdev, ldev);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	loom_pci_enable_error_reporting(pdev);

	ret = pcim_iomap_regions(pdev, BIT(0), "loom");
	if (ret)
		return ret;
	ldev->regs = pcim_iomap_table(pdev)[0];

	ret = loom_check_identity(ldev);
	if (ret)
		return ret;

	ret = drmm_mutex_init(&ldev->drm, &ldev->sched_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ldev->drm, &ldev->clients_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ldev->drm, &ldev->operator_reset_lock);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&ldev->clients);
	ldev->quiesce_wait_ms = LOOM_QUIESCE_MS;
	init_waitqueue_head(&ldev->files_wq);
	mutex_init(&ldev->file_list_lock);
	INIT_LIST_HEAD(&ldev->file_list);
	ldev->wq = alloc_workqueue("loom", WQ_UNBOUND, 0);
	if (!ldev->wq)
		return -ENOMEM;
	ldev->hang_wq = alloc_workqueue("loom-hang", WQ_UNBOUND, 0);
	if (!ldev->hang_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = loom_hw_init(ldev);
	if (ret)
		goto err_wq;
	ret = loom_sched_init_all(ldev);
	if (ret) {
		loom_hw_fini(ldev);
		goto err_wq;
	}
	/* From here on the schedulers and wq go with the DRM device. */
	ret = drmm_add_action_or_reset(&ldev->drm, loom_drm_release, NULL);
	if (ret)
		goto err_hw;

	ret = drm_dev_register(&ldev->drm, 0);
	if (ret)
		goto err_hw;
	loom_accel_debugfs_init(&ldev->drm, loom_debugfs_init);

	drm_info(&ldev->drm, "loom-cgra ABI %u.%u, %u cores of %ux%u tiles, caps 0x%08x\n",
		 LOOM_VERSION_MAJOR(ldev->hw_version),
		 LOOM_VERSION_MINOR(ldev->hw_version), ldev->num_cores,
		 LOOM_FABRIC_WIDTH(ldev->fabric), LOOM_FABRIC_HEIGHT(ldev->fabric),
		 ldev->hw_caps);
	return 0;

err_hw:
	loom_hw_fini(ldev);
	return ret;
err_wq:
	if (ldev->hang_wq)
		destroy_workqueue(ldev->hang_wq);
	destroy_workqueue(ldev->wq);
	return ret;
}

/*
 * Removal is starting: SUBMITs waiting for room in a file's in-flight budget
 * (inside drm_dev_enter(), which drm_dev_unplug() waits out) give up with
 * ENODEV rather than wait for jobs only the removal will end.  JOB_INFO's
 * waits (outside) give up too: a job held back by a fence nobody signals
 * would keep them asleep after the device is gone.
 */
static void loom_files_wake_unplug(struct loom_device *ldev)
{
	struct loom_file *lf;

	WRITE_ONCE(ldev->unplugging, true);
	mutex_lock(&ldev->file_list_lock);
	list_for_each_entry(lf, &ldev->file_list, link) {
		wake_up_all(&lf->inflight_wq);
		wake_up_all(&lf->records_wq);
	}
	mutex_unlock(&ldev->file_list_lock);
}

/* Open files outlive the device: their page tables must not. */
static void loom_files_release_dma(struct loom_device *ldev)
{
	struct loom_file *lf;

	mutex_lock(&ldev->file_list_lock);
	list_for_each_entry(lf, &ldev->file_list, link)
		loom_vm_release_dma(&lf->vm);
	mutex_unlock(&ldev->file_list_lock);
}

static void loom_remove(struct pci_dev *pdev)
{
	struct loom_device *ldev = pci_get_drvdata(pdev);

	unsigned int i;

	/*
	 * Open files keep the drm_device; drm_dev_enter() fails from now on,
	 * and returns once every ioctl, hang check and submit inside it left.
	 */
	loom_files_wake_unplug(ldev);
	drm_dev_unplug(&ldev->drm);
	for (i = 0; i < ldev->num_cores; i++)
		cancel_delayed_work_sync(&ldev->cores[i].hang_work);
	loom_hw_cancel_all(ldev);
	loom_hw_fini(ldev);
	/* No reap is left to stage a dump: let the last ones land. */
	for (i = 0; i < ldev->num_cores; i++)
		flush_work(&ldev->cores[i].dump_work);
	loom_files_release_dma(ldev);
}

/*
 * Resets of the function the PCI core makes (sysfs "reset", VFIO, the DRM
 * device_reset test): quiesce before, restore the queues after.  The
 * PCI core saves and restores config space (MSI-X, bus mastering) itself.
 */
static void loom_pci_reset_prepare(struct pci_dev *pdev)
{
	loom_reset_prepare(pci_get_drvdata(pdev), true);
}

static void loom_pci_reset_done(struct pci_dev *pdev)
{
	loom_reset_done(pci_get_drvdata(pdev));
}

/*
 * AER: the link or the device failed.  Registers may not answer, so the
 * jobs that were running are failed with -EIO; the rest run again after
 * the slot reset.
 */
static pci_ers_result_t loom_pci_error_detected(struct pci_dev *pdev,
						pci_channel_state_t state)
{
	struct loom_device *ldev = pci_get_drvdata(pdev);

	dev_err(&pdev->dev, "PCI error (channel state %d)\n", state);
	if (state == pci_channel_io_perm_failure)
		return PCI_ERS_RESULT_DISCONNECT;
	if (!ldev->resetting)
		loom_reset_prepare(ldev, state == pci_channel_io_normal);
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t loom_pci_slot_reset(struct pci_dev *pdev)
{
	struct loom_device *ldev = pci_get_drvdata(pdev);

	pci_restore_state(pdev);
	pci_save_state(pdev);
	pci_set_master(pdev);
	if (loom_read(ldev, LOOM_REG_ID) == LOOM_ID_MAGIC)
		return PCI_ERS_RESULT_RECOVERED;
	/*
	 * Gone for good: no resume follows.  Let the queues run on so that
	 * every job still ends (the hang checks fail what never completes).
	 */
	loom_reset_done(ldev);
	return PCI_ERS_RESULT_DISCONNECT;
}

static void loom_pci_resume(struct pci_dev *pdev)
{
	struct loom_device *ldev = pci_get_drvdata(pdev);

	if (ldev->resetting)
		loom_reset_done(ldev);
}

static const struct pci_error_handlers loom_pci_err_handlers = {
	.error_detected = loom_pci_error_detected,
	.slot_reset = loom_pci_slot_reset,
	.resume = loom_pci_resume,
	.reset_prepare = loom_pci_reset_prepare,
	.reset_done = loom_pci_reset_done,
};

static const struct pci_device_id loom_pci_ids[] = {
	{ PCI_DEVICE(LOOM_PCI_VENDOR_ID, LOOM_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, loom_pci_ids);

static struct pci_driver loom_pci_driver = {
	.name = "loom",
	.id_table = loom_pci_ids,
	.probe = loom_probe,
	.remove = loom_remove,
	.err_handler = &loom_pci_err_handlers,
	.dev_groups = loom_sysfs_groups,
};
module_pci_driver(loom_pci_driver);

MODULE_DESCRIPTION("loom spatial-dataflow (CGRA) accelerator");
MODULE_LICENSE("GPL");
/* The project version (VERSION): the DKMS package's PACKAGE_VERSION too. */
MODULE_VERSION(LOOM_PROJECT_VERSION);
