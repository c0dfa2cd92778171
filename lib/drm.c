// SPDX-License-Identifier: MIT
/*
 * DOC: the driver backend
 *
 * How a device opened on a loom node carries libloom's requests: ioctls
 * through libdrm, sync_files where a fence crosses devices, io_uring for
 * rings.  The only file of libloom that talks to the driver.
 */
#include <errno.h>
#include <linux/sync_file.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "device_internal.h"

/* libdrm returns -errno or, from some versions, -1 with errno set. */
static int drm_ret(int ret)
{
	return ret >= 0 ? ret : ret == -1 && errno ? -errno : ret;
}

static int drm_ioctl(struct loom_device *dev, unsigned long req, void *arg)
{
	return drmIoctl(dev->fd, req, arg) ? -errno : 0;
}

static void drm_close(struct loom_device *dev)
{
	close(dev->fd);
}

static int bo_mmap(struct loom_device *dev, uint32_t handle, uint64_t size,
		   void **map)
{
	struct drm_loom_bo_mmap_offset off = { .handle = handle };
	void *p;
	int ret = drm_ioctl(dev, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off);

	if (ret)
		return ret;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		 off.offset);
	if (p == MAP_FAILED)
		return -errno;
	*map = p;
	return 0;
}

static int drm_bo_create(struct loom_device *dev, struct drm_loom_bo_create *c,
			 void **map)
{
	int ret = drm_ioctl(dev, DRM_IOCTL_LOOM_BO_CREATE, c);

	if (ret)
		return ret;
	ret = bo_mmap(dev, c->handle, c->size, map);
	if (ret)
		drmCloseBufferHandle(dev->fd, c->handle);
	return ret;
}

/*
 * A job holds its own references on the BOs it uses (kernel/loom_job.c),
 * so closing the handle never pulls pages from under a running job.
 */
static void drm_bo_destroy(struct loom_device *dev, uint32_t handle, void *map,
			   uint64_t size)
{
	munmap(map, size);
	drmCloseBufferHandle(dev->fd, handle);
}

/* Exports @bo as a dma-buf that @other imports; BO_INFO says where. */
static int drm_bo_import(struct loom_bo *bo, struct loom_device *other,
			 struct loom_bo *s)
{
	struct drm_loom_bo_info info = { 0 };
	int fd, ret;

	if (other->be != &loom_drm_backend)
		return LOOM_E_NOT_SUPPORTED;
	if (drmPrimeHandleToFD(bo->dev->fd, bo->handle, DRM_CLOEXEC | DRM_RDWR, &fd))
		return -errno;
	ret = drmPrimeFDToHandle(other->fd, fd, &info.handle) ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	ret = drm_ioctl(other, DRM_IOCTL_LOOM_BO_INFO, &info);
	if (!ret)
		ret = bo_mmap(other, info.handle, s->size, &s->map);
	if (ret) {
		drmCloseBufferHandle(other->fd, info.handle);
		return ret;
	}
	s->handle = info.handle;
	s->va = info.va;
	return 0;
}

static int drm_submit(struct loom_device *dev, struct drm_loom_submit *s)
{
	return drm_ioctl(dev, DRM_IOCTL_LOOM_SUBMIT, s);
}

static int drm_job_info(struct loom_device *dev, struct drm_loom_job_info *info)
{
	return drm_ioctl(dev, DRM_IOCTL_LOOM_JOB_INFO, info);
}

static int drm_syncobj_create(struct loom_device *dev, uint32_t *h)
{
	int ret = drm_ret(drmSyncobjCreate(dev->fd, 0, h));

	return ret > 0 ? -EIO : ret;
}

static void drm_syncobj_destroy(struct loom_device *dev, uint32_t h)
{
	drmSyncobjDestroy(dev->fd, h);
}

static int drm_syncobj_wait(struct loom_device *dev, const uint32_t *h,
			    unsigned n, int64_t abs_ns, uint32_t flags)
{
	int ret = drm_ret(drmSyncobjWait(dev->fd, (uint32_t *)h, n, abs_ns,
					 flags, NULL));

	return ret == -ETIMEDOUT ? -ETIME : ret > 0 ? -EIO : ret;
}

static int drm_syncobj_signal(struct loom_device *dev, uint32_t h)
{
	int ret = drm_ret(drmSyncobjSignal(dev->fd, &h, 1));

	return ret > 0 ? -EIO : ret;
}

static int export_fence(struct loom_device *dev, uint32_t h, int *fd)
{
	int ret = drm_ret(drmSyncobjExportSyncFile(dev->fd, h, fd));

	return ret > 0 ? -EIO : ret;
}

static int drm_syncobj_status(struct loom_device *dev, uint32_t h, int *status,
			      uint64_t *done_ns)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = {
		.num_fences = 1, .sync_fence_info = (uintptr_t)&fi,
	};
	int fd, ret = export_fence(dev, h, &fd);

	if (ret)
		return ret;
	ret = ioctl(fd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	*status = info.status;
	*done_ns = fi.status ? fi.timestamp_ns : 0;
	return 0;
}

/* A new syncobj of @dev holding the fence of sync_file @fd. */
static int import_fence(struct loom_device *dev, int fd, uint32_t *out)
{
	uint32_t h;
	int ret = drm_syncobj_create(dev, &h);

	if (ret)
		return ret;
	ret = drm_ret(drmSyncobjImportSyncFile(dev->fd, h, fd));
	if (ret) {
		drmSyncobjDestroy(dev->fd, h);
		return ret > 0 ? -EIO : ret;
	}
	*out = h;
	return 0;
}

static int drm_syncobj_transfer(struct loom_device *from, uint32_t h,
				struct loom_device *to, uint32_t *out)
{
	int fd, ret;

	if (to->be != &loom_drm_backend)
		return LOOM_E_NOT_SUPPORTED;
	ret = export_fence(from, h, &fd);
	if (ret)
		return ret;
	ret = import_fence(to, fd, out);
	close(fd);
	return ret;
}

/* Merges the fences of @parts into one sync_file, *@out. */
static int merge_fences(struct loom_token *const *parts, unsigned n, int *out)
{
	int fd = -1, ret = 0;

	for (unsigned i = 0; i < n && !ret; i++) {
		struct sync_merge_data m = { .name = "loom-spread" };
		int next;

		if (parts[i]->dev->be != &loom_drm_backend) {
			ret = LOOM_E_NOT_SUPPORTED;
			break;
		}
		ret = export_fence(parts[i]->dev, parts[i]->syncobj, &next);
		if (ret)
			break;
		if (fd < 0) {
			fd = next;
			continue;
		}
		m.fd2 = next;
		ret = ioctl(fd, SYNC_IOC_MERGE, &m) ? -errno : 0;
		close(next);
		close(fd);
		fd = ret ? -1 : m.fence;
	}
	if (ret && fd >= 0)
		close(fd);
	if (!ret)
		*out = fd;
	return ret;
}

static int drm_syncobj_merge(struct loom_device *dev, uint32_t out,
			     struct loom_token *const *parts, unsigned n)
{
	int fd, ret = merge_fences(parts, n, &fd);

	if (ret)
		return ret;
	ret = drm_ret(drmSyncobjImportSyncFile(dev->fd, out, fd));
	close(fd);
	return ret > 0 ? -EIO : ret;
}

/* ------------------------------------------------------------ io_uring --- */

static int drm_uring_init(struct loom_uring *u, unsigned entries, bool job_id)
{
	unsigned flags = IORING_SETUP_SQE128 | (job_id ? IORING_SETUP_CQE32 : 0);
	int ret = io_uring_queue_init(entries, &u->ring, flags);

	if (ret)
		return ret;
	u->fd = u->dev->fd;
	u->cqe32 = job_id;
	return 0;
}

static void drm_uring_exit(struct loom_uring *u)
{
	io_uring_queue_exit(&u->ring);
}

/*
 * liburing declares the command area as a zero-length array; copying
 * through a function keeps the compiler from sizing it at zero.
 */
static __attribute__((noinline)) void sqe_set_submit(struct io_uring_sqe *sqe,
						     const struct drm_loom_submit *s)
{
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), s, sizeof(*s));
}

static int drm_uring_submit(struct loom_uring *u,
			    const struct drm_loom_submit *s, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, u->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, s);
	sqe->user_data = user_data;
	ret = io_uring_submit(&u->ring);
	return ret == 1 ? 0 : ret < 0 ? ret : -EIO;
}

static int drm_uring_next(struct loom_uring *u, bool wait, struct loom_cqe *out)
{
	struct io_uring_cqe *cqe;
	int ret = wait ? io_uring_wait_cqe(&u->ring, &cqe) :
			 io_uring_peek_cqe(&u->ring, &cqe);

	if (ret)
		return ret;
	*out = (struct loom_cqe){
		.user_data = cqe->user_data,
		.res = cqe->res,
		.job_id = u->cqe32 ? cqe->big_cqe[0] : 0,
	};
	io_uring_cqe_seen(&u->ring, cqe);
	return 0;
}

const struct loom_backend loom_drm_backend = {
	.name = "drm",
	.close = drm_close,
	.bo_create = drm_bo_create,
	.bo_destroy = drm_bo_destroy,
	.bo_import = drm_bo_import,
	.submit = drm_submit,
	.job_info = drm_job_info,
	.syncobj_create = drm_syncobj_create,
	.syncobj_destroy = drm_syncobj_destroy,
	.syncobj_wait = drm_syncobj_wait,
	.syncobj_signal = drm_syncobj_signal,
	.syncobj_status = drm_syncobj_status,
	.syncobj_transfer = drm_syncobj_transfer,
	.syncobj_merge = drm_syncobj_merge,
	.uring_init = drm_uring_init,
	.uring_exit = drm_uring_exit,
	.uring_submit = drm_uring_submit,
	.uring_next = drm_uring_next,
};
