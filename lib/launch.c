// SPDX-License-Identifier: MIT
/*
 * DOC: launch, tokens and rings
 *
 * A launch (struct loom_launch) is checked completely before anything
 * reaches the driver (spec §2.1: a negative extent is rejected before any
 * instance exists).  What depends only on the device and the thread --
 * the fabric size, the rank, the driver's features, the uploaded
 * configuration -- is checked and done once, into a plan kept per device
 * and keyed by (image load id, thread index); a launch then checks only
 * its own arguments, extents, queue and dependencies.
 *
 * Its command buffer, the thread's template with the holes filled, is
 * written into a command arena: one BO per (device, queue) for launches by
 * ioctl, one per ring for launches through io_uring.  An arena is a byte
 * ring: entries are handed out in order, and the oldest are reused once
 * their jobs are done -- a device arena knows it from the launches' token
 * syncobjs, a ring's from their CQEs.  No BO is created per launch.
 *
 * Every launch gets a token, a syncobj that receives the job's done
 * fence, whatever carried it; token waits and dependencies only ever use
 * that syncobj, and a job's error is the fence's (the driver sets it).
 * Syncobjs are reused: a token's goes back to the device's pool once
 * neither its caller nor its arena entry holds it.
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
#include "loom_format.h"

/*
 * A device arena's size; it grows for a command that would not fit.  16 KiB
 * holds at most 682 of the smallest commands (24 bytes), fewer than the
 * driver lets a file have in flight (DRM_LOOM_MAX_INFLIGHT_JOBS): a bigger
 * arena only keeps more finished entries and their syncobjs waiting for
 * reuse (measured in the VM, bench P7: 64 KiB launched 0.58-0.79 as fast
 * as raw SUBMIT, 16 KiB 0.71-1.38, 4 KiB 0.44-0.46, its submitter
 * waiting).
 */
#define ARENA_SIZE		(16u * 1024)
/* A ring's: its launches wait for their CQEs anyway. */
#define RING_ARENA_SIZE		(16u * 1024)
/* Syncobjs a device keeps for reuse; more are destroyed. */
#define POOL_MAX		4096
/* Entries a full device arena waits for at once, at most. */
#define RECLAIM_MAX		256

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

/* The launch against the thread's signature. */
static int check_signature(const struct loom_image_thread *t,
			   const struct loom_launch *l)
{
	if (l->kind == LOOM_LAUNCH_ITEMS) {
		/* the work-item slot's type is checked, its value unused */
		if (t->domain != LOOM_DOMAIN_DYNAMIC_WORK)
			return LOOM_E_DOMAIN_KIND;
		return check_args(t, l->args, l->n_args);
	}
	if (t->domain != LOOM_DOMAIN_DENSE)
		return LOOM_E_DOMAIN_KIND;
	if (l->n_extents != t->rank || (l->n_extents && !l->extents))
		return LOOM_E_EXTENT_COUNT;
	for (unsigned i = 0; i < l->n_extents; i++)
		if (l->extents[i] < 0)
			return LOOM_E_NEGATIVE_EXTENT;
	return check_args(t, l->args, l->n_args);
}

/* Slots per PE the thread's configuration needs (the loader checked it). */
static unsigned config_slots(const struct loom_image *img,
			     const struct loom_image_thread *t)
{
	struct loom_fabric_config c;

	memcpy(&c, img->configs + t->config_offset, sizeof(c));
	return LOOM_CONFIG_SLOTS(c.version, c.slots);
}

/* What the device says about the thread, once per plan. */
static int check_device(const struct loom_device *dev,
			const struct loom_image *img,
			const struct loom_image_thread *t)
{
	if (img->info.fabric_width != dev->info.fabric_width ||
	    img->info.fabric_height != dev->info.fabric_height ||
	    config_slots(img, t) > dev->info.pe_slots)
		return LOOM_E_FABRIC_MISMATCH;
	if (t->rank > dev->info.max_rank)
		return LOOM_E_RANK_LIMIT;
	if (!(dev->info.features & DRM_LOOM_FEATURE_SUBMIT))
		return LOOM_E_NOT_SUPPORTED;
	if (t->domain == LOOM_DOMAIN_DYNAMIC_WORK &&
	    !(dev->info.hw_caps & LOOM_CAP_ITEMS))
		return LOOM_E_NOT_SUPPORTED;
	return 0;
}

/* The launch's own queue, items and dependencies. */
static int check_launch(const struct loom_device *dev,
			const struct loom_launch *l, bool items_known)
{
	if (l->queue >= dev->info.num_cores ||
	    l->n_deps > DRM_LOOM_MAX_IN_SYNCOBJS || (l->n_deps && !l->deps))
		return -EINVAL;
	if (l->kind == LOOM_LAUNCH_ITEMS && items_known &&
	    (!l->items || (l->payload_va & 7) || (l->result_va & 7) ||
	     (l->counters_va & 7)))
		return -EINVAL;
	if (l->counters_va & 7)
		return -EINVAL;
	for (unsigned i = 0; i < l->n_deps; i++) {
		if (!l->deps[i])
			return -EINVAL;
		/* syncobj handles belong to one fd */
		if (l->deps[i]->dev != dev)
			return LOOM_E_FOREIGN_TOKEN;
	}
	return 0;
}

/* ------------------------------------------------------------- plans --- */

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

/* Thread @t's plan on @dev, if a launch of it has made one. */
static struct loom_plan *plan_find(struct loom_device *dev,
				   const struct loom_image *img,
				   const struct loom_image_thread *t)
{
	unsigned index = t - img->threads;
	struct loom_plan *p;

	pthread_mutex_lock(&dev->lock);
	for (p = dev->configs; p; p = p->next)
		if (p->image_id == img->id && p->thread == index)
			break;
	pthread_mutex_unlock(&dev->lock);
	return p;
}

/*
 * Makes thread @t's plan, its configuration uploaded, once every check has
 * passed; a launch racing on another thread may have made it meanwhile.
 */
static int plan_make(struct loom_device *dev, const struct loom_image *img,
		     const struct loom_image_thread *t, struct loom_plan **out)
{
	unsigned index = t - img->threads;
	struct loom_plan *p;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	for (p = dev->configs; p; p = p->next)
		if (p->image_id == img->id && p->thread == index)
			break;
	if (!p) {
		p = calloc(1, sizeof(*p));
		ret = p ? upload_config(dev, img, t, &p->config) : -ENOMEM;
		if (ret) {
			free(p);
		} else {
			p->image_id = img->id;
			p->thread = index;
			p->next = dev->configs;
			dev->configs = p;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	if (!ret)
		*out = p;
	return ret;
}

/* A launch, checked: its thread, its plan, its command's size. */
struct checked {
	const struct loom_image_thread *t;
	const struct loom_plan *plan;
	uint32_t cmd_size;
	const struct loom_pkt_run_work *work;	/* replaces DISPATCH_ITEMS */
};

/*
 * Every check, in the documented order: the signature, what the device
 * says about the thread (once: a thread with a plan has passed it), the
 * launch's queue, items and dependencies; then the plan.  @make false:
 * the checks only, no configuration uploaded.
 */
static int check(struct loom_device *dev, const struct loom_image *img,
		 const struct loom_launch *l, bool items_known, bool make,
		 struct checked *c)
{
	struct loom_plan *plan;
	int ret;

	if (!dev || !img || !l ||
	    (l->kind != LOOM_LAUNCH_DENSE && l->kind != LOOM_LAUNCH_ITEMS))
		return -EINVAL;
	c->work = NULL;
	c->t = loom_image_find(img, l->thread);
	if (!c->t)
		return LOOM_E_NO_THREAD;
	ret = check_signature(c->t, l);
	if (ret)
		return ret;
	plan = plan_find(dev, img, c->t);
	if (!plan)
		ret = check_device(dev, img, c->t);
	if (!ret)
		ret = check_launch(dev, l, items_known);
	if (!ret && !plan && make)
		ret = plan_make(dev, img, c->t, &plan);
	if (ret)
		return ret;
	c->plan = plan;
	c->cmd_size = c->t->template_size +
		      (l->counters_va ? sizeof(struct loom_pkt_write) : 0);
	return 0;
}

int loom_launch_check(struct loom_device *dev, const struct loom_image *img,
		      const struct loom_launch *l)
{
	struct checked c;

	return check(dev, img, l, false, false, &c);
}

/*
 * An items launch whose DISPATCH_ITEMS becomes @work (the device's work
 * stack drains what the dispatch would have run once).
 */
static int check_work(const struct loom_device *dev,
		      const struct loom_launch *l,
		      const struct loom_pkt_run_work *work, struct checked *c)
{
	c->work = work;
	if (!work)
		return 0;
	if (l->kind != LOOM_LAUNCH_ITEMS)
		return -EINVAL;
	if (!(dev->info.hw_caps & LOOM_CAP_RUN_WORK))
		return LOOM_E_NOT_SUPPORTED;
	c->cmd_size += sizeof(*work) - sizeof(struct loom_pkt_dispatch_items);
	return 0;
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

/*
 * Replaces the DISPATCH_ITEMS of the @size bytes of filled template at @p
 * by @work; returns the new size.  The loader checked that the packets
 * tile the template.
 */
static uint32_t put_work(unsigned char *p, uint32_t size,
			 const struct loom_pkt_run_work *work)
{
	const uint32_t old = sizeof(struct loom_pkt_dispatch_items);
	struct loom_pkt_run_work w = *work;
	uint32_t at, h;

	for (at = 0; at < size; at += LOOM_PKT_DWORDS(h) * 4) {
		memcpy(&h, p + at, 4);
		if (LOOM_PKT_OPCODE(h) == LOOM_PKT_DISPATCH_ITEMS)
			break;
	}
	if (at == size)
		return size;	/* check_signature() admitted no such thread */
	memmove(p + at + sizeof(w), p + at + old, size - at - old);
	w.header = LOOM_PKT_HEADER(LOOM_PKT_RUN_WORK, sizeof(w) / 4);
	memcpy(p + at, &w, sizeof(w));
	return size - old + sizeof(w);
}

/*
 * The template, its holes filled, then a WRITE_COUNTERS if asked for: the
 * template ends with its dispatch, so the counters are exactly that
 * dispatch's.
 */
static void encode(unsigned char *p, const struct loom_image *img,
		   const struct checked *c, const struct loom_launch *l)
{
	const struct loom_image_thread *t = c->t;
	uint64_t operands[LOOM_IMAGE_MAX_ARGS];
	struct loom_template_values v = {
		.config_va = c->plan->config->va, .operands = operands,
		.extents = l->extents, .items = l->items,
		.payload_va = l->payload_va, .result_va = l->result_va,
	};
	uint32_t size = t->template_size;

	/* check() has matched n_args to the thread's signature */
	for (unsigned i = 0; i < l->n_args; i++)
		operands[i] = l->args[i].value;

	memcpy(p, img->templates + t->template_offset, t->template_size);
	loom_template_fill(p, t, &img->patches[t->patch_first], &v);
	if (c->work)
		size = put_work(p, size, c->work);
	if (l->counters_va) {
		p += size;
		put32(p, LOOM_PKT_HEADER(LOOM_PKT_WRITE_COUNTERS,
					 sizeof(struct loom_pkt_write) / 4));
		put32(p + 4, 0);
		put64(p + 8, l->counters_va);
	}
}

int loom_launch_encode(struct loom_device *dev, const struct loom_image *img,
		       const struct loom_launch *l, void *buf, uint32_t size,
		       uint32_t *cmd_size, uint32_t *config)
{
	struct checked c;
	int ret = check(dev, img, l, true, true, &c);

	if (ret)
		return ret;
	if (c.cmd_size > size)
		return -ENOSPC;
	encode(buf, img, &c, l);
	*cmd_size = c.cmd_size;
	*config = c.plan->config->handle;
	return 0;
}

/* ------------------------------------------------------------ tokens --- */

uint64_t loom_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000000ULL + now.tv_nsec;
}

static struct loom_token *token_alloc(struct loom_device *dev, uint32_t syncobj)
{
	struct loom_token *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->dev = dev;
	t->syncobj = syncobj;
	atomic_init(&t->refs, 1);
	return t;
}

int loom_token_new(struct loom_device *dev, struct loom_token **out)
{
	struct loom_token *t;
	uint32_t syncobj;
	int ret = drmSyncobjCreate(dev->fd, 0, &syncobj);

	if (ret)
		return ret < 0 ? ret : -EIO;
	t = token_alloc(dev, syncobj);
	if (!t) {
		drmSyncobjDestroy(dev->fd, syncobj);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/*
 * A token for an ioctl launch: its syncobj may come from the pool, as
 * SUBMIT replaces whatever fence it held before anyone can wait on it.
 */
static int token_for_submit(struct loom_device *dev, struct loom_token **out)
{
	uint32_t syncobj = 0;
	struct loom_token *t;

	pthread_mutex_lock(&dev->lock);
	if (dev->pool_count)
		syncobj = dev->pool[--dev->pool_count];
	pthread_mutex_unlock(&dev->lock);
	if (!syncobj)
		return loom_token_new(dev, out);
	t = token_alloc(dev, syncobj);
	if (!t) {
		drmSyncobjDestroy(dev->fd, syncobj);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

static struct loom_token *token_get(struct loom_token *t)
{
	atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
	return t;
}

/* Drops a reference; the last one gives the syncobj to the pool. */
static void token_put(struct loom_token *t)
{
	struct loom_device *dev = t->dev;
	bool pooled = false;

	if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_lock(&dev->lock);
	if (dev->pool_count == dev->pool_cap && dev->pool_cap < POOL_MAX) {
		unsigned n = dev->pool_cap ? dev->pool_cap * 2 : 64;
		uint32_t *p = realloc(dev->pool, n * sizeof(*p));

		if (p) {
			dev->pool = p;
			dev->pool_cap = n;
		}
	}
	if (dev->pool_count < dev->pool_cap) {
		dev->pool[dev->pool_count++] = t->syncobj;
		pooled = true;
	}
	pthread_mutex_unlock(&dev->lock);
	if (!pooled)
		drmSyncobjDestroy(dev->fd, t->syncobj);
	free(t);
}

void loom_token_free(struct loom_token *token)
{
	if (token)
		token_put(token);
}

/* ------------------------------------------------------------ arenas --- */

static struct loom_arena_entry *entry_at(struct loom_arena *a, unsigned i)
{
	return &a->fifo[(a->first + i) % a->cap];
}

/* Where @size bytes fit after the in-flight entries, if they do. */
static bool arena_fit(struct loom_arena *a, uint32_t size, uint32_t *off)
{
	uint32_t end = a->bo->size, tail;

	if (!a->count) {
		a->head = 0;
		*off = 0;
		return size <= end;
	}
	tail = entry_at(a, 0)->offset;
	if (a->head > tail) {		/* free: [head, end) and [0, tail) */
		*off = end - a->head >= size ? a->head : 0;
		return end - a->head >= size || tail >= size;
	}
	*off = a->head;			/* wrapped: free [head, tail) */
	return tail - a->head >= size;
}

/* Room for one more entry, so that recording one cannot fail. */
static int arena_grow(struct loom_arena *a)
{
	unsigned n = a->cap ? a->cap * 2 : 64;
	struct loom_arena_entry *f;

	if (a->count < a->cap)
		return 0;
	f = malloc(n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (unsigned i = 0; i < a->count; i++)
		f[i] = *entry_at(a, i);
	free(a->fifo);
	a->fifo = f;
	a->first = 0;
	a->cap = n;
	return 0;
}

/*
 * Records the command at @off (after arena_grow()); the arena holds a
 * reference to @token.  Returns the entry's sequence number.
 */
static uint64_t arena_push(struct loom_arena *a, uint32_t off, uint32_t size,
			   struct loom_token *token)
{
	*entry_at(a, a->count) = (struct loom_arena_entry){
		off, size, token ? token_get(token) : NULL, false,
	};
	a->head = off + size;
	return a->first_seq + a->count++;
}

static void arena_pop(struct loom_arena *a)
{
	struct loom_arena_entry *e = entry_at(a, 0);

	if (e->token)
		token_put(e->token);
	a->first = (a->first + 1) % a->cap;
	a->first_seq++;
	a->count--;
}

/* The arena's BO, of at least @size bytes, once nothing is in flight. */
static int arena_bo(struct loom_device *dev, struct loom_arena *a,
		    uint32_t min, uint32_t size)
{
	uint64_t n = min;
	struct loom_bo *bo;
	int ret;

	while (n < 2ull * size)
		n *= 2;
	if (n > LOOM_CMD_MAX_SIZE * 2ull)
		return -E2BIG;
	ret = loom_bo_alloc(dev, n, LOOM_BO_DEVICE_READ_ONLY, &bo);
	if (ret)
		return ret;
	/* in-flight jobs hold the old one (bo.c) */
	loom_bo_free(a->bo);
	a->bo = bo;
	a->head = 0;
	return 0;
}

/*
 * A device arena is full: waits until its oldest entries, half the arena
 * (or all of it, @all) and at most RECLAIM_MAX of them, are done, then
 * reuses them.  Each entry's own fence is waited for, in one ioctl:
 * nothing assumes that a queue's jobs complete in submission order.
 */
static int arena_reclaim(struct loom_device *dev, struct loom_arena *a, bool all)
{
	uint32_t handles[RECLAIM_MAX];
	uint64_t bytes = 0;
	unsigned k = 0;
	int ret;

	while (k < a->count && k < RECLAIM_MAX &&
	       (all || bytes < a->bo->size / 2)) {
		struct loom_arena_entry *e = entry_at(a, k);

		handles[k++] = e->token->syncobj;
		bytes += e->size;
	}
	if (!k)
		return 0;
	ret = drmSyncobjWait(dev->fd, handles, k, INT64_MAX,
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	if (ret)
		return ret < 0 ? ret : -EIO;
	while (k--)
		arena_pop(a);
	return 0;
}

/* Room for @size bytes in device arena @a; its lock is held. */
static int device_arena_room(struct loom_device *dev, struct loom_arena *a,
			     uint32_t size, uint32_t *off)
{
	int ret;

	if (a->bo && a->bo->size < 2ull * size) {
		while (a->count) {
			ret = arena_reclaim(dev, a, true);
			if (ret)
				return ret;
		}
		loom_bo_free(a->bo);
		a->bo = NULL;
	}
	if (!a->bo) {
		ret = arena_bo(dev, a, ARENA_SIZE, size);
		if (ret)
			return ret;
	}
	while (!arena_fit(a, size, off)) {
		ret = arena_reclaim(dev, a, false);
		if (ret)
			return ret;
	}
	return arena_grow(a);
}

static void arena_fini(struct loom_arena *a)
{
	while (a->count)
		arena_pop(a);
	free(a->fifo);
	loom_bo_free(a->bo);
	memset(a, 0, sizeof(*a));
}

void loom_device_release_launches(struct loom_device *dev)
{
	for (unsigned q = 0; dev->arenas && q < dev->info.num_cores; q++) {
		arena_fini(&dev->arenas[q]);
		pthread_mutex_destroy(&dev->arenas[q].lock);
	}
	free(dev->arenas);
	for (unsigned i = 0; i < dev->pool_count; i++)
		drmSyncobjDestroy(dev->fd, dev->pool[i]);
	free(dev->pool);
}

/* ---------------------------------------------------------- launches --- */

static uint32_t align8(uint32_t n)
{
	return (n + 7) & ~7u;
}

static void fill_submit(struct drm_loom_submit *s, const struct loom_launch *l,
			const struct checked *c, const struct loom_arena *a,
			uint32_t off, const struct drm_loom_bo_ref *ref,
			const uint32_t *in, uint32_t out)
{
	*s = (struct drm_loom_submit){
		.queue = l->queue,
		.cmd_handle = a->bo->handle,
		.cmd_offset = off,
		.cmd_size = c->cmd_size,
		.bo_count = 1,
		.bos = (uintptr_t)ref,
		.in_syncobjs = (uintptr_t)in,
		.in_syncobj_count = l->n_deps,
		.out_syncobj = out,
	};
}

int loom_launch(struct loom_device *dev, const struct loom_image *img,
		const struct loom_launch *l, struct loom_token **token)
{
	uint32_t in[DRM_LOOM_MAX_IN_SYNCOBJS];
	struct drm_loom_bo_ref ref;
	struct drm_loom_submit s;
	struct loom_arena *a;
	struct loom_token *t;
	struct checked c;
	uint32_t off;
	int ret;

	if (!token)
		return -EINVAL;
	ret = check(dev, img, l, true, true, &c);
	if (ret)
		return ret;
	ret = token_for_submit(dev, &t);
	if (ret)
		return ret;
	ref = (struct drm_loom_bo_ref){ c.plan->config->handle, DRM_LOOM_BO_REF_READ };
	for (unsigned i = 0; i < l->n_deps; i++)
		in[i] = l->deps[i]->syncobj;
	a = &dev->arenas[l->queue];
	/* held through SUBMIT: the arena's order is its queue's */
	pthread_mutex_lock(&a->lock);
	ret = device_arena_room(dev, a, align8(c.cmd_size), &off);
	if (!ret) {
		encode((unsigned char *)a->bo->map + off, img, &c, l);
		fill_submit(&s, l, &c, a, off, &ref, in, t->syncobj);
		t->submit_ns = loom_now_ns();
		ret = drmIoctl(dev->fd, DRM_IOCTL_LOOM_SUBMIT, &s) ? -errno : 0;
	}
	if (!ret)
		arena_push(a, off, align8(c.cmd_size), t);
	pthread_mutex_unlock(&a->lock);
	if (ret) {
		token_put(t);
		return ret;
	}
	t->job_id = s.job_id;
	*token = t;
	return 0;
}

int loom_launch_dense(struct loom_device *dev, const struct loom_image *img,
		      const char *thread, const struct loom_arg *args,
		      unsigned n_args, const int64_t *extents,
		      unsigned n_extents, struct loom_token *const *deps,
		      unsigned n_deps, unsigned queue, struct loom_token **token)
{
	struct loom_launch l = {
		.kind = LOOM_LAUNCH_DENSE, .thread = thread,
		.args = args, .n_args = n_args,
		.extents = extents, .n_extents = n_extents,
		.deps = deps, .n_deps = n_deps, .queue = queue,
	};

	return loom_launch(dev, img, &l, token);
}

int loom_launch_items(struct loom_device *dev, const struct loom_image *img,
		      const char *thread, const struct loom_arg *args,
		      unsigned n_args, uint32_t count, uint64_t payload_va,
		      uint64_t result_va, struct loom_token *const *deps,
		      unsigned n_deps, unsigned queue, struct loom_token **token)
{
	struct loom_launch l = {
		.kind = LOOM_LAUNCH_ITEMS, .thread = thread,
		.args = args, .n_args = n_args,
		.items = count, .payload_va = payload_va, .result_va = result_va,
		.deps = deps, .n_deps = n_deps, .queue = queue,
	};

	return loom_launch(dev, img, &l, token);
}

/* ---------------------------------------------------------- waiting --- */

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
 * A signalled token's result, asked once: its fence's status, where the
 * driver puts the job's error (kernel/loom_job.c) -- for every job, by
 * ioctl or io_uring, however long ago it ran.
 */
static int settle(struct loom_token *t)
{
	struct sync_file_info info;
	struct sync_fence_info fi;
	int ret = fence_info(t, &info, &fi);

	if (ret)
		return ret;
	t->status = info.status < 0 ? info.status : 0;
	t->status_known = true;
	return 0;
}

static int wait_until(struct loom_token *t, int64_t abs_ns)
{
	int ret;

	if (t->status_known)
		return t->status;
	ret = drmSyncobjWait(t->dev->fd, &t->syncobj, 1, abs_ns,
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (!ret)
		ret = settle(t);
	return ret ? ret : t->status;
}

int loom_token_wait(struct loom_token *token, int64_t timeout_ns)
{
	if (!token)
		return -EINVAL;
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
		int ret = tokens[i] ? wait_until(tokens[i], abs_ns) : -EINVAL;

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
			struct loom_hw_counters *c)
{
	struct drm_loom_job_info info = { .job_id = token ? token->job_id : 0 };

	if (!token || !c)
		return -EINVAL;
	if (!token->job_id)	/* a ring launch whose CQE was not reaped yet */
		return token->dev->info.features & DRM_LOOM_FEATURE_URING_JOB_ID ?
		       -EBUSY : LOOM_E_NOT_SUPPORTED;
	if (drmIoctl(token->dev->fd, DRM_IOCTL_LOOM_JOB_INFO, &info))
		return errno == ENOENT ? LOOM_E_JOB_EXPIRED : -errno;
	if (info.state != DRM_LOOM_JOB_DONE)
		return -EBUSY;
	*c = (struct loom_hw_counters){
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
	struct sync_file_info info;
	struct sync_fence_info fi;
	int ret;

	if (!token || !submit_ns || !done_ns)
		return -EINVAL;
	ret = fence_info(token, &info, &fi);
	if (ret)
		return ret;
	if (!fi.status)
		return -EBUSY;
	*submit_ns = token->submit_ns;
	*done_ns = fi.timestamp_ns;
	return 0;
}

/* ------------------------------------------------------------- rings --- */

/*
 * A ring launch in flight: what the kernel may still read after
 * io_uring_submit() returned (an issue punted to a worker reads the BO
 * reference and the in-syncobjs then), the references that keep its
 * dependencies' syncobjs alive until then, and its token.  Records are
 * reused, their arrays only ever grow: no allocation per launch.
 */
struct ring_rec {
	bool busy;			/* submitted, not yet reaped */
	bool done;			/* its CQE arrived */
	uint64_t user_data;
	int res;
	uint64_t seq;			/* its arena entry */
	struct drm_loom_bo_ref ref;
	uint32_t *in;
	struct loom_token **deps;	/* references */
	unsigned n_deps, deps_cap;
	struct loom_token *token;	/* a reference, or NULL */
};

struct loom_ring {
	struct loom_device *dev;
	struct loom_uring u;
	struct loom_arena arena;
	struct ring_rec *recs;
	unsigned nrecs;
	unsigned in_flight;		/* busy records */
	unsigned pending;		/* busy records without their CQE */
	unsigned *doneq;		/* records whose CQE arrived, in order */
	unsigned done_head, done_count;	/* FIFO over doneq[nrecs] */
};

int loom_ring_create(struct loom_device *dev, unsigned entries,
		     struct loom_ring **out)
{
	struct loom_ring *r;
	int ret;

	if (!dev || !out || entries == 0)
		return -EINVAL;
	if (!(dev->info.features & DRM_LOOM_FEATURE_URING_CMD))
		return LOOM_E_NOT_SUPPORTED;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = loom_uring_init(&r->u, dev->fd, entries,
			      dev->info.features & DRM_LOOM_FEATURE_URING_JOB_ID);
	if (ret) {
		free(r);
		return ret;
	}
	r->dev = dev;
	*out = r;
	return 0;
}

/* Makes room for more records; indices stay valid across growth. */
static int recs_grow(struct loom_ring *r)
{
	unsigned n = r->nrecs ? r->nrecs * 2 : 16;
	struct ring_rec *s = realloc(r->recs, n * sizeof(*s));
	unsigned *q;

	if (!s)
		return -ENOMEM;
	r->recs = s;
	memset(s + r->nrecs, 0, (n - r->nrecs) * sizeof(*s));
	q = malloc(n * sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (unsigned i = 0; i < r->done_count; i++)
		q[i] = r->doneq[(r->done_head + i) % r->nrecs];
	free(r->doneq);
	r->doneq = q;
	r->done_head = 0;
	r->nrecs = n;
	return 0;
}

/* A free record with room for @n_deps dependencies. */
static int rec_get(struct loom_ring *r, unsigned n_deps, unsigned *index)
{
	struct ring_rec *s;
	unsigned i;

	for (i = 0; i < r->nrecs; i++)
		if (!r->recs[i].busy)
			break;
	if (i == r->nrecs && recs_grow(r))
		return -ENOMEM;
	s = &r->recs[i];
	if (n_deps > s->deps_cap) {
		uint32_t *in = realloc(s->in, n_deps * sizeof(*in));
		struct loom_token **d;

		if (!in)
			return -ENOMEM;
		s->in = in;
		d = realloc(s->deps, n_deps * sizeof(*d));
		if (!d)
			return -ENOMEM;
		s->deps = d;
		s->deps_cap = n_deps;
	}
	*index = i;
	return 0;
}

/* Lets go of what a record holds; it is free again. */
static void rec_release(struct ring_rec *s)
{
	for (unsigned i = 0; i < s->n_deps; i++)
		token_put(s->deps[i]);
	if (s->token)
		token_put(s->token);
	s->n_deps = 0;
	s->token = NULL;
	s->busy = false;
	s->done = false;
}

/* The job is done: its command's arena entry can be reused. */
static void ring_arena_done(struct loom_ring *r, uint64_t seq)
{
	struct loom_arena *a = &r->arena;

	entry_at(a, seq - a->first_seq)->done = true;
	while (a->count && entry_at(a, 0)->done)
		arena_pop(a);
}

/*
 * Records one CQE.  A submission the driver refused after
 * io_uring_submit() returned never got its fence: the token's syncobj is
 * signalled so nothing waits for it forever, and keeps the refusal.
 */
static void ring_complete(struct loom_ring *r, const struct loom_cqe *cqe)
{
	struct ring_rec *s = &r->recs[cqe->user_data];
	struct loom_token *t = s->token;

	s->done = true;
	s->res = cqe->res;
	if (t && cqe->job_id)
		t->job_id = cqe->job_id;
	if (t && cqe->res && drmSyncobjWait(r->dev->fd, &t->syncobj, 1, 0, 0,
					    NULL) == -EINVAL) {
		t->status = cqe->res;
		t->status_known = true;
		drmSyncobjSignal(r->dev->fd, &t->syncobj, 1);
	}
	for (unsigned i = 0; i < s->n_deps; i++)
		token_put(s->deps[i]);
	s->n_deps = 0;
	ring_arena_done(r, s->seq);
	r->pending--;
	r->doneq[(r->done_head + r->done_count++) % r->nrecs] = cqe->user_data;
}

/* Takes every CQE there is, or waits for one (@wait, if any is pending). */
static int ring_drain(struct loom_ring *r, bool wait)
{
	struct loom_cqe cqe;
	int ret;

	if (wait && r->pending) {
		ret = loom_uring_next(&r->u, true, &cqe);
		if (ret)
			return ret;
		ring_complete(r, &cqe);
	}
	while (loom_uring_next(&r->u, false, &cqe) == 0)
		ring_complete(r, &cqe);
	return 0;
}

/* Room for @size bytes in the ring's arena, waiting for CQEs if needed. */
static int ring_arena_room(struct loom_ring *r, uint32_t size, uint32_t *off)
{
	struct loom_arena *a = &r->arena;
	int ret;

	if (a->bo && a->bo->size < 2ull * size) {
		while (a->count) {
			ret = ring_drain(r, true);
			if (ret)
				return ret;
		}
		loom_bo_free(a->bo);
		a->bo = NULL;
	}
	if (!a->bo) {
		ret = arena_bo(r->dev, a, RING_ARENA_SIZE, size);
		if (ret)
			return ret;
	}
	while (!arena_fit(a, size, off)) {
		ret = ring_drain(r, true);
		if (ret)
			return ret;
	}
	return arena_grow(a);
}

static int ring_launch(struct loom_ring *r, const struct loom_image *img,
		       const struct loom_launch *l,
		       const struct loom_pkt_run_work *work, uint64_t user_data,
		       struct loom_token **token)
{
	struct drm_loom_submit s;
	struct loom_token *t = NULL;
	struct ring_rec *rec;
	struct checked c;
	unsigned index;
	uint32_t off;
	int ret;

	if (!r)
		return -EINVAL;
	ret = check(r->dev, img, l, true, true, &c);
	if (!ret)
		ret = check_work(r->dev, l, work, &c);
	if (ret)
		return ret;
	/* fresh: a punted issue attaches the fence after we return */
	if (token)
		ret = loom_token_new(r->dev, &t);
	if (!ret)
		ret = ring_arena_room(r, align8(c.cmd_size), &off);
	if (!ret)
		ret = rec_get(r, l->n_deps, &index);
	if (ret)
		goto err_token;
	rec = &r->recs[index];
	encode((unsigned char *)r->arena.bo->map + off, img, &c, l);
	rec->ref = (struct drm_loom_bo_ref){ c.plan->config->handle,
					     DRM_LOOM_BO_REF_READ };
	for (unsigned i = 0; i < l->n_deps; i++) {
		rec->in[i] = l->deps[i]->syncobj;
		rec->deps[i] = token_get(l->deps[i]);
	}
	rec->n_deps = l->n_deps;
	rec->user_data = user_data;
	rec->busy = true;
	rec->token = t ? token_get(t) : NULL;
	rec->seq = arena_push(&r->arena, off, align8(c.cmd_size), NULL);
	fill_submit(&s, l, &c, &r->arena, off, &rec->ref, rec->in,
		    t ? t->syncobj : 0);
	if (t)
		t->submit_ns = loom_now_ns();
	ret = loom_uring_submit(&r->u, &s, index);
	if (ret) {
		/* never reached the kernel: the newest entry goes again */
		r->arena.count--;
		r->arena.head = off;
		rec_release(rec);
		goto err_token;
	}
	r->in_flight++;
	r->pending++;
	if (t)
		*token = t;
	return 0;

err_token:
	if (t)
		token_put(t);
	return ret;
}

int loom_ring_launch(struct loom_ring *r, const struct loom_image *img,
		     const struct loom_launch *l, uint64_t user_data,
		     struct loom_token **token)
{
	return ring_launch(r, img, l, NULL, user_data, token);
}

int loom_ring_launch_work(struct loom_ring *r, const struct loom_image *img,
			  const struct loom_launch *l,
			  const struct loom_pkt_run_work *work,
			  uint64_t user_data)
{
	if (!work)
		return -EINVAL;
	return ring_launch(r, img, l, work, user_data, NULL);
}

int loom_ring_launch_dense(struct loom_ring *r, const struct loom_image *img,
			   const char *thread, const struct loom_arg *args,
			   unsigned n_args, const int64_t *extents,
			   unsigned n_extents, struct loom_token *const *deps,
			   unsigned n_deps, unsigned queue, uint64_t user_data,
			   struct loom_token **token)
{
	struct loom_launch l = {
		.kind = LOOM_LAUNCH_DENSE, .thread = thread,
		.args = args, .n_args = n_args,
		.extents = extents, .n_extents = n_extents,
		.deps = deps, .n_deps = n_deps, .queue = queue,
	};

	return loom_ring_launch(r, img, &l, user_data, token);
}

int loom_ring_launch_items(struct loom_ring *r, const struct loom_image *img,
			   const char *thread, const struct loom_arg *args,
			   unsigned n_args, uint32_t count, uint64_t payload_va,
			   uint64_t result_va, struct loom_token *const *deps,
			   unsigned n_deps, unsigned queue, uint64_t user_data,
			   struct loom_token **token)
{
	struct loom_launch l = {
		.kind = LOOM_LAUNCH_ITEMS, .thread = thread,
		.args = args, .n_args = n_args,
		.items = count, .payload_va = payload_va, .result_va = result_va,
		.deps = deps, .n_deps = n_deps, .queue = queue,
	};

	return loom_ring_launch(r, img, &l, user_data, token);
}

unsigned loom_ring_in_flight(const struct loom_ring *r)
{
	return r->in_flight;
}

int loom_ring_reap(struct loom_ring *r, struct loom_completion *out,
		   unsigned max, bool wait)
{
	unsigned n = 0;
	int ret;

	if (!r || (max && !out))
		return -EINVAL;
	ret = ring_drain(r, wait && max && !r->done_count);
	if (ret)
		return ret;
	while (n < max && r->done_count) {
		unsigned i = r->doneq[r->done_head];
		struct ring_rec *s = &r->recs[i];

		r->done_head = (r->done_head + 1) % r->nrecs;
		r->done_count--;
		out[n++] = (struct loom_completion){ s->user_data, s->res };
		rec_release(s);
		r->in_flight--;
	}
	return n;
}

void loom_ring_destroy(struct loom_ring *r)
{
	if (!r)
		return;
	/* the kernel may still read records and the arena: every CQE first */
	while (r->pending)
		if (ring_drain(r, true))
			break;
	for (unsigned i = 0; i < r->nrecs; i++) {
		if (r->recs[i].busy)
			rec_release(&r->recs[i]);
		free(r->recs[i].in);
		free(r->recs[i].deps);
	}
	loom_uring_exit(&r->u);
	arena_fini(&r->arena);
	free(r->recs);
	free(r->doneq);
	free(r);
}
