// SPDX-License-Identifier: MIT
/*
 * DOC: dense launch and tokens
 *
 * A launch is checked completely before anything reaches the driver (spec
 * §2.1: a negative extent is rejected before any instance exists), then
 * the thread's configuration is uploaded once per device and image, its
 * command template is copied into a fresh command BO with the holes
 * filled, and the job is submitted with the dependencies' syncobjs as
 * in-fences and a new syncobj -- the token -- as out-fence.
 *
 * An empty domain (a zero extent) is submitted like any other: the device
 * completes a dispatch with no instance, and because the job waits for its
 * in-fences, its token retires only after the launch's dependencies.
 */
#include <errno.h>
#include <linux/sync_file.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"
#include "device_internal.h"

/* ------------------------------------------------------------ checks --- */

static int check_args(const struct loom_image_thread *t,
		      const struct loom_arg *args, unsigned n_args)
{
	if (n_args != t->num_args || (n_args && !args))
		return LOOM_E_ARG_COUNT;
	for (unsigned i = 0; i < n_args; i++)
		if (args[i].type != (enum loom_arg_type)t->arg_types[i])
			return LOOM_E_ARG_TYPE;
	return 0;
}

static int check_signature(const struct loom_image_thread *t,
			   const struct loom_arg *args, unsigned n_args,
			   const int64_t *extents, unsigned n_extents)
{
	if (t->domain != LOOM_DOMAIN_DENSE)
		return LOOM_E_DOMAIN_KIND;
	if (n_extents != t->rank || (n_extents && !extents))
		return LOOM_E_EXTENT_COUNT;
	for (unsigned i = 0; i < n_extents; i++)
		if (extents[i] < 0)
			return LOOM_E_NEGATIVE_EXTENT;
	return check_args(t, args, n_args);
}

/* A dynamic-work thread: the work-item slot's type is checked, its value unused. */
static int check_items_signature(const struct loom_image_thread *t,
				 const struct loom_arg *args, unsigned n_args)
{
	if (t->domain != LOOM_DOMAIN_DYNAMIC_WORK)
		return LOOM_E_DOMAIN_KIND;
	return check_args(t, args, n_args);
}

static int check_device(const struct loom_device *dev,
			const struct loom_image *img,
			const struct loom_image_thread *t, unsigned queue,
			struct loom_token *const *deps, unsigned n_deps)
{
	if (img->info.fabric_width != dev->info.fabric_width ||
	    img->info.fabric_height != dev->info.fabric_height)
		return LOOM_E_FABRIC_MISMATCH;
	if (t->rank > dev->info.max_rank)
		return LOOM_E_RANK_LIMIT;
	if (!(dev->info.features & DRM_LOOM_FEATURE_SUBMIT))
		return LOOM_E_NOT_SUPPORTED;
	if (queue >= dev->info.num_cores || n_deps > DRM_LOOM_MAX_IN_SYNCOBJS ||
	    (n_deps && !deps))
		return -EINVAL;
	for (unsigned i = 0; i < n_deps; i++) {
		if (!deps[i])
			return -EINVAL;
		/* syncobj handles belong to one fd */
		if (deps[i]->dev != dev)
			return LOOM_E_FOREIGN_TOKEN;
	}
	return 0;
}

/* ------------------------------------------------------ config cache --- */

static int upload_config(struct loom_device *dev, const struct loom_image *img,
			 const struct loom_image_thread *t, struct loom_bo **out)
{
	struct loom_bo *bo;
	int ret = loom_bo_alloc(dev, t->config_size, LOOM_BO_DEVICE_READ_ONLY, &bo);

	if (ret)
		return ret;
	memcpy(bo->map, img->configs + t->config_offset, t->config_size);
	*out = bo;
	return 0;
}

/*
 * The configuration BO of thread @t for @img on @dev, uploaded on first
 * use.  Keyed by the image's load id, not its address, so a freed and
 * reallocated image can never hit a stale entry.
 */
static int config_bo(struct loom_device *dev, const struct loom_image *img,
		     const struct loom_image_thread *t, struct loom_bo **out)
{
	unsigned index = t - img->threads;
	struct loom_config_entry *e;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	for (e = dev->configs; e; e = e->next)
		if (e->image_id == img->id && e->thread == index)
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		ret = e ? upload_config(dev, img, t, &e->bo) : -ENOMEM;
		if (ret) {
			free(e);
			e = NULL;
		} else {
			e->image_id = img->id;
			e->thread = index;
			e->next = dev->configs;
			dev->configs = e;
		}
	}
	if (e)
		*out = e->bo;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/* ----------------------------------------------------- command buffer --- */

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);	/* little-endian host, like the device */
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint64_t patch_value(const struct loom_image_patch *p,
			    const struct loom_image_thread *t,
			    const struct loom_bo *config,
			    const struct loom_arg *args, const int64_t *extents,
			    const struct loom_items_batch *items)
{
	switch (p->kind) {
	case LOOM_PATCH_CONFIG_VA:
		return config->va;
	case LOOM_PATCH_OPERAND:
		/* the work-item slot carries no launch value: the device feeds
		 * each item's payload to its payload port */
		if (t->domain == LOOM_DOMAIN_DYNAMIC_WORK &&
		    p->index == t->work_item_arg)
			return 0;
		return args[p->index].value;
	case LOOM_PATCH_PAYLOAD_VA:
		return items->payload_va;
	case LOOM_PATCH_RESULT_VA:
		return items->result_va;
	default:	/* LOOM_PATCH_EXTENT: the loader allows nothing else in dense */
		return (uint64_t)extents[p->index];
	}
}

/* The command's size: the template, and a WRITE_COUNTERS if asked for. */
static uint32_t cmd_size(const struct loom_image_thread *t,
			 const struct loom_items_batch *items)
{
	bool counters = items && items->counters_va;

	return t->template_size +
	       (counters ? sizeof(struct loom_pkt_write) : 0);
}

/*
 * The template ends with its dispatch, so a WRITE_COUNTERS appended after
 * it reports exactly that dispatch: items jobs have no job id to ask
 * JOB_INFO with when they go through io_uring.
 */
static void put_counters(unsigned char *p, uint64_t va)
{
	put32(p, LOOM_PKT_HEADER(LOOM_PKT_WRITE_COUNTERS,
				 sizeof(struct loom_pkt_write) / 4));
	put32(p + 4, 0);
	put64(p + 8, va);
}

static int build_cmd(struct loom_device *dev, const struct loom_image *img,
		     const struct loom_image_thread *t,
		     const struct loom_bo *config, const struct loom_arg *args,
		     const int64_t *extents, const struct loom_items_batch *items,
		     struct loom_bo **out)
{
	struct loom_bo *cmd;
	unsigned char *p;
	int ret = loom_bo_alloc(dev, cmd_size(t, items), 0, &cmd);

	if (ret)
		return ret;
	p = cmd->map;
	if (items && items->counters_va)
		put_counters(p + t->template_size, items->counters_va);
	memcpy(p, img->templates + t->template_offset, t->template_size);
	for (uint32_t i = 0; i < t->num_patches; i++) {
		const struct loom_image_patch *pt = &img->patches[t->patch_first + i];

		if (pt->kind == LOOM_PATCH_ITEM_COUNT)
			put32(p + pt->offset, items->count);
		else
			put64(p + pt->offset,
			      patch_value(pt, t, config, args, extents, items));
	}
	*out = cmd;
	return 0;
}

/* --------------------------------------------------------- submission --- */

/* Everything after the signature check, shared by dense and items. */
static int prepare(struct loom_device *dev, const struct loom_image *img,
		   const struct loom_image_thread *t, const struct loom_arg *args,
		   const int64_t *extents, const struct loom_items_batch *items,
		   struct loom_token *const *deps, unsigned n_deps,
		   unsigned queue, struct loom_prepared *p)
{
	struct loom_bo *config;
	int ret;

	ret = check_device(dev, img, t, queue, deps, n_deps);
	if (!ret)
		ret = config_bo(dev, img, t, &config);
	if (!ret)
		ret = build_cmd(dev, img, t, config, args, extents, items, &p->cmd);
	if (ret)
		return ret;
	p->cmd_size = cmd_size(t, items);
	p->refs[0] = (struct drm_loom_bo_ref){ config->handle, DRM_LOOM_BO_REF_READ };
	for (unsigned i = 0; i < n_deps; i++)
		p->in_syncobjs[i] = deps[i]->syncobj;
	p->n_in = n_deps;
	return 0;
}

/* @thread of @img, or why a launch of it cannot be made at all. */
static int find_thread(const struct loom_device *dev,
		       const struct loom_image *img, const char *thread,
		       const struct loom_image_thread **t)
{
	if (!dev || !img)
		return -EINVAL;
	*t = loom_image_find(img, thread);
	return *t ? 0 : LOOM_E_NO_THREAD;
}

int loom_launch_prepare(struct loom_device *dev, const struct loom_image *img,
			const char *thread, const struct loom_arg *args,
			unsigned n_args, const int64_t *extents,
			unsigned n_extents, struct loom_token *const *deps,
			unsigned n_deps, unsigned queue,
			struct loom_prepared *p)
{
	const struct loom_image_thread *t;
	int ret = find_thread(dev, img, thread, &t);

	if (!ret)
		ret = check_signature(t, args, n_args, extents, n_extents);
	if (ret)
		return ret;
	return prepare(dev, img, t, args, extents, NULL, deps, n_deps, queue, p);
}

int loom_launch_items_check(struct loom_device *dev,
			    const struct loom_image *img, const char *thread,
			    const struct loom_arg *args, unsigned n_args,
			    unsigned queue, uint32_t *child_capacity)
{
	const struct loom_image_thread *t;
	int ret = find_thread(dev, img, thread, &t);

	if (!ret)
		ret = check_items_signature(t, args, n_args);
	if (!ret)
		ret = check_device(dev, img, t, queue, NULL, 0);
	if (!ret && !(dev->info.hw_caps & LOOM_CAP_ITEMS))
		ret = LOOM_E_NOT_SUPPORTED;
	if (!ret && child_capacity)
		*child_capacity = t->child_capacity;
	return ret;
}

int loom_launch_prepare_items(struct loom_device *dev,
			      const struct loom_image *img, const char *thread,
			      const struct loom_arg *args, unsigned n_args,
			      const struct loom_items_batch *items,
			      struct loom_token *const *deps, unsigned n_deps,
			      unsigned queue, struct loom_prepared *p)
{
	int ret = loom_launch_items_check(dev, img, thread, args, n_args,
					  queue, NULL);

	if (ret)
		return ret;
	if (!items || !items->count || (items->payload_va & 7) ||
	    (items->result_va & 7) || (items->counters_va & 7))
		return -EINVAL;
	return prepare(dev, img, loom_image_find(img, thread), args, NULL,
		       items, deps, n_deps, queue, p);
}

void loom_launch_fill_submit(const struct loom_prepared *p, unsigned queue,
			     uint32_t out_syncobj, struct drm_loom_submit *s)
{
	*s = (struct drm_loom_submit){
		.queue = queue,
		.cmd_handle = p->cmd->handle,
		.cmd_size = p->cmd_size,
		.bo_count = 1,
		.bos = (uintptr_t)p->refs,
		.in_syncobjs = (uintptr_t)p->in_syncobjs,
		.in_syncobj_count = p->n_in,
		.out_syncobj = out_syncobj,
	};
}

/* The job holds its command BO (bo.c): ours can go once it is submitted. */
void loom_prepared_release(struct loom_prepared *p)
{
	loom_bo_free(p->cmd);
	p->cmd = NULL;
}

int loom_token_new(struct loom_device *dev, struct loom_token **out)
{
	struct loom_token *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	ret = drmSyncobjCreate(dev->fd, 0, &t->syncobj);
	if (ret) {
		free(t);
		return ret < 0 ? ret : -EIO;
	}
	t->dev = dev;
	*out = t;
	return 0;
}

/* Submits a prepared launch by ioctl; releases @p either way. */
static int loom_submit_prepared(struct loom_device *dev, struct loom_prepared *p,
				unsigned queue, struct loom_token **token)
{
	struct drm_loom_submit s;
	struct loom_token *t;
	int ret;

	ret = loom_token_new(dev, &t);
	if (ret)
		goto out;
	loom_launch_fill_submit(p, queue, t->syncobj, &s);
	t->submit_ns = loom_now_ns();
	if (drmIoctl(dev->fd, DRM_IOCTL_LOOM_SUBMIT, &s)) {
		ret = -errno;
		loom_token_free(t);
		goto out;
	}
	t->job_id = s.job_id;
	*token = t;
out:
	loom_prepared_release(p);
	return ret;
}

int loom_launch_dense(struct loom_device *dev, const struct loom_image *img,
		      const char *thread, const struct loom_arg *args,
		      unsigned n_args, const int64_t *extents,
		      unsigned n_extents, struct loom_token *const *deps,
		      unsigned n_deps, unsigned queue, struct loom_token **token)
{
	struct loom_prepared p;
	int ret;

	if (!token)
		return -EINVAL;
	ret = loom_launch_prepare(dev, img, thread, args, n_args, extents,
				  n_extents, deps, n_deps, queue, &p);
	if (ret)
		return ret;
	return loom_submit_prepared(dev, &p, queue, token);
}

int loom_launch_items(struct loom_device *dev, const struct loom_image *img,
		      const char *thread, const struct loom_arg *args,
		      unsigned n_args, uint32_t count, uint64_t payload_va,
		      uint64_t result_va, struct loom_token *const *deps,
		      unsigned n_deps, unsigned queue, struct loom_token **token)
{
	struct loom_items_batch items = { count, payload_va, result_va, 0 };
	struct loom_prepared p;
	int ret;

	if (!token)
		return -EINVAL;
	ret = loom_launch_prepare_items(dev, img, thread, args, n_args, &items,
					deps, n_deps, queue, &p);
	if (ret)
		return ret;
	return loom_submit_prepared(dev, &p, queue, token);
}

/* ------------------------------------------------------------- tokens --- */

uint64_t loom_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000000ULL + now.tv_nsec;
}

static int64_t deadline(int64_t timeout_ns)
{
	return timeout_ns < 0 ? INT64_MAX : (int64_t)loom_now_ns() + timeout_ns;
}

/* The token's fence as a sync_file sees it: @info and its one @fi. */
static int fence_info(struct loom_token *t, struct sync_file_info *info,
		      struct sync_fence_info *fi)
{
	int fd, ret;

	*fi = (struct sync_fence_info){ 0 };
	*info = (struct sync_file_info){
		.num_fences = 1, .sync_fence_info = (uintptr_t)fi,
	};
	ret = drmSyncobjExportSyncFile(t->dev->fd, t->syncobj, &fd);
	if (ret)
		return ret < 0 ? ret : -EIO;
	ret = ioctl(fd, SYNC_IOC_FILE_INFO, info) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * The fence's own status: the driver sets the job's error on it
 * (kernel/loom_job.c), so this answers even for jobs JOB_INFO has
 * forgotten.
 */
static int fence_status(struct loom_token *t)
{
	struct sync_file_info info;
	struct sync_fence_info fi;
	int ret = fence_info(t, &info, &fi);

	if (ret)
		return ret;
	return info.status < 0 ? info.status : 0;
}

/* When the fence signalled (CLOCK_MONOTONIC), or 0 if it has not. */
static int fence_time(struct loom_token *t, uint64_t *ns)
{
	struct sync_file_info info;
	struct sync_fence_info fi;
	int ret = fence_info(t, &info, &fi);

	if (ret)
		return ret;
	*ns = fi.status ? fi.timestamp_ns : 0;
	return 0;
}

static int job_status(struct loom_token *t)
{
	struct drm_loom_job_info info = { .job_id = t->job_id };

	if (drmIoctl(t->dev->fd, DRM_IOCTL_LOOM_JOB_INFO, &info) == 0 &&
	    info.state == DRM_LOOM_JOB_DONE)
		return info.error;
	/* forgotten (ENOENT) or dropped before it ran: ask the fence */
	return fence_status(t);
}

static int wait_until(struct loom_token *t, int64_t abs_ns)
{
	int ret;

	if (t->status_known)
		return t->status;
	ret = drmSyncobjWait(t->dev->fd, &t->syncobj, 1, abs_ns,
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	if (ret == -ETIME)
		ret = -ETIMEDOUT;
	if (!ret)
		t->status = job_status(t);
	if (ret)
		return ret;
	t->status_known = true;
	return t->status;
}

int loom_token_wait(struct loom_token *token, int64_t timeout_ns)
{
	if (!token)
		return -EINVAL;
	if (token->ring)
		return loom_ring_token_wait(token, timeout_ns);
	return wait_until(token, deadline(timeout_ns));
}

/* All-of: every token within one deadline, then the first error in order. */
int loom_token_wait_all(struct loom_token *const *tokens, unsigned n,
			int64_t timeout_ns)
{
	int64_t abs_ns = deadline(timeout_ns);
	int first = 0;

	if (n && !tokens)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		int ret = tokens[i] ? (tokens[i]->ring ?
				       loom_ring_token_wait(tokens[i], timeout_ns) :
				       wait_until(tokens[i], abs_ns)) : -EINVAL;

		if (ret == -ETIMEDOUT || ret == -EINVAL)
			return ret;
		if (!first)
			first = ret;
	}
	return first;
}

int loom_token_done(struct loom_token *token)
{
	int ret;

	if (!token)
		return -EINVAL;
	if (token->status_known)
		return 1;
	if (token->ring)
		ret = loom_ring_token_poll(token);
	else
		ret = drmSyncobjWait(token->dev->fd, &token->syncobj, 1, 0,
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	if (ret == -ETIME || ret == -ETIMEDOUT)
		return 0;
	return ret ? ret : 1;
}

uint64_t loom_token_job_id(const struct loom_token *token)
{
	return token->job_id;
}

int loom_token_counters(struct loom_token *token,
			struct loom_job_counters *c)
{
	struct drm_loom_job_info info = { .job_id = token ? token->job_id : 0 };

	if (!token || !c)
		return -EINVAL;
	if (!token->job_id)
		return LOOM_E_NOT_SUPPORTED;	/* io_uring: the driver gives no id */
	if (drmIoctl(token->dev->fd, DRM_IOCTL_LOOM_JOB_INFO, &info))
		return errno == ENOENT ? LOOM_E_JOB_EXPIRED : -errno;
	if (info.state != DRM_LOOM_JOB_DONE)
		return -EBUSY;
	*c = (struct loom_job_counters){
		info.counters.cycles, info.counters.firings,
		info.counters.stalls, info.counters.instances,
		info.counters.items, info.counters.spawns,
		info.counters.mem_reads, info.counters.mem_writes,
	};
	return 0;
}

int loom_token_times(struct loom_token *token, uint64_t *submit_ns,
		     uint64_t *done_ns)
{
	uint64_t done;
	int ret;

	if (!token || !submit_ns || !done_ns)
		return -EINVAL;
	ret = fence_time(token, &done);
	if (ret)
		return ret;
	if (!done)
		return -EBUSY;
	*submit_ns = token->submit_ns;
	*done_ns = done;
	return 0;
}

void loom_token_free(struct loom_token *token)
{
	if (!token)
		return;
	if (token->ring)
		loom_ring_token_detach(token->ring, token->slot);
	drmSyncobjDestroy(token->dev->fd, token->syncobj);
	free(token);
}
