// SPDX-License-Identifier: MIT
/*
 * DOC: launch: checks, plans, encoding, loom_launch()
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
 * written into a command arena (arena.c): the device's for @queue here,
 * the ring's for a launch through io_uring (ring.c, which checks and
 * encodes with the same functions).  Every launch is a dispatch of its
 * own: it mints an occurrence (occurrence.c) once it passed its checks,
 * and gets a token (token.c) that carries it.
 *
 * An empty domain (a zero extent) is submitted like any other: the device
 * completes a dispatch with no instance, and because the job waits for its
 * in-fences, its token retires only after the launch's dependencies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"
#include "device_internal.h"
#include "loom_format.h"
#include "occurrence.h"

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

/* ------------------------------------------------------------- views --- */

/* One entry of a memref's layout, from the image or the launch's operands. */
static int64_t layout_value(const struct loom_layout_entry *e,
			    const struct loom_arg *args)
{
	return e->source == LOOM_LAYOUT_OPERAND ? (int64_t)args[e->operand].value :
						  e->value;
}

/*
 * The lowest and highest element, from the base, that view @m of a launch
 * with @args can address, into *@lo and *@hi.  Returns 0, 1 for a view
 * that addresses nothing (a size of 0) or that the launch does not bound
 * (a size no operand carries), or LOOM_E_BAD_VIEW for a negative size or
 * an extent beyond 64 bits.
 */
static int view_span(const struct loom_image_memref *m,
		     const struct loom_arg *args, int64_t *lo, int64_t *hi)
{
	int64_t size[LOOM_MEMREF_MAX_RANK], empty = 0;

	for (unsigned k = 0; k < m->rank; k++) {
		if (m->sizes[k].source == LOOM_LAYOUT_NOT_PASSED)
			return 1;
		size[k] = layout_value(&m->sizes[k], args);
		if (size[k] < 0)
			return LOOM_E_BAD_VIEW;
		empty |= size[k] == 0;
	}
	if (empty)
		return 1;
	*lo = *hi = layout_value(&m->offset, args);
	for (int k = m->rank - 1; k >= 0; k--) {
		int64_t stride = 1, span;

		if (m->strides[k].source != LOOM_LAYOUT_ROW_MAJOR)
			stride = layout_value(&m->strides[k], args);
		else
			for (unsigned j = k + 1; j < m->rank; j++)
				if (__builtin_mul_overflow(stride, size[j], &stride))
					return LOOM_E_BAD_VIEW;
		if (__builtin_mul_overflow(size[k] - 1, stride, &span) ||
		    __builtin_add_overflow(span < 0 ? *lo : *hi, span,
					   span < 0 ? lo : hi))
			return LOOM_E_BAD_VIEW;
	}
	return 0;
}

/*
 * Every memref operand whose view the image describes (.loom.memrefs) and
 * the launch bounds: every element it can address lies in the one BO of
 * @dev its lowest one starts in.
 */
static int check_views(struct loom_device *dev, const struct loom_image *img,
		       const struct loom_image_thread *t,
		       const struct loom_arg *args)
{
	unsigned index = t - img->threads;

	if (!img->memrefs)
		return 0;
	for (uint32_t i = img->memref_first[index]; i < img->memref_first[index + 1]; i++) {
		const struct loom_image_memref *m = &img->memrefs[i];
		int64_t es = loom_arg_memref_elem_size(t->arg_types[m->arg]);
		int64_t lo, hi, first, end;
		uint64_t base = args[m->arg].value, from, to;
		struct loom_bo *bo;
		int ret = view_span(m, args, &lo, &hi);

		if (ret < 0)
			return ret;
		if (ret)
			continue;
		/* bytes [first, end) from the base, then as VAs */
		if (__builtin_mul_overflow(lo, es, &first) ||
		    __builtin_add_overflow(hi, 1, &end) ||
		    __builtin_mul_overflow(end, es, &end))
			return LOOM_E_BAD_VIEW;
		if (__builtin_add_overflow(base, (uint64_t)first, &from) != (first < 0) ||
		    __builtin_add_overflow(base, (uint64_t)end, &to) != (end < 0))
			return LOOM_E_VIEW_OUTSIDE;
		pthread_mutex_lock(&dev->bo_lock);
		bo = loom_bo_holding_locked(dev, from);
		ret = !bo || to - bo->va > bo->size ? LOOM_E_VIEW_OUTSIDE : 0;
		pthread_mutex_unlock(&dev->bo_lock);
		if (ret)
			return ret;
	}
	return 0;
}

/* The header of the thread's configuration (the loader checked it). */
static struct loom_fabric_config config_header(const struct loom_image *img,
					       const struct loom_image_thread *t)
{
	struct loom_fabric_config c;

	memcpy(&c, img->configs + t->config_offset, sizeof(c));
	return c;
}

/* Slots per PE the thread's configuration needs. */
static unsigned config_slots(const struct loom_image *img,
			     const struct loom_image_thread *t)
{
	struct loom_fabric_config c = config_header(img, t);

	return LOOM_CONFIG_SLOTS(c.version, c.slots);
}

/*
 * Does thread @t's configuration use LOOM_OP_ATOMIC (device ABI 0.7)?  The
 * loader has checked that its tiles are inside it.
 */
static bool config_uses_atomics(const struct loom_image *img,
				const struct loom_image_thread *t)
{
	const unsigned char *cfg = img->configs + t->config_offset;
	struct loom_fabric_config c;
	struct loom_tile_config tile;
	size_t tiles;

	memcpy(&c, cfg, sizeof(c));
	tiles = (size_t)c.width * c.height * LOOM_CONFIG_SLOTS(c.version, c.slots);
	for (size_t k = 0; k < tiles &&
	     sizeof(c) + (k + 1) * sizeof(tile) <= t->config_size; k++) {
		memcpy(&tile, cfg + sizeof(c) + k * sizeof(tile), sizeof(tile));
		if (tile.op == LOOM_OP_ATOMIC)
			return true;
	}
	return false;
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
	/* memref.atomic_rmw: a device older than 0.7 would refuse the config */
	if (!(dev->info.hw_caps & LOOM_CAP_ATOMIC) && config_uses_atomics(img, t))
		return LOOM_E_NOT_SUPPORTED;
	/* link channels: a device older than 0.8 would refuse the version */
	if (!(dev->info.hw_caps & LOOM_CAP_LINK_CHANNELS) &&
	    config_header(img, t).version == LOOM_CONFIG_VERSION_CHANNELS)
		return LOOM_E_NOT_SUPPORTED;
	/* a device capability, not a driver feature: its own reason */
	if (t->domain == LOOM_DOMAIN_DYNAMIC_WORK &&
	    !(dev->info.hw_caps & LOOM_CAP_ITEMS))
		return LOOM_E_NO_DYNAMIC_WORK;
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

/*
 * Every check, in the documented order: the signature, what the device
 * says about the thread (once: a thread with a plan has passed it), the
 * launch's queue, items and dependencies; then the plan.  @make false:
 * the checks only, no configuration uploaded.
 */
static int check(struct loom_device *dev, const struct loom_image *img,
		 const struct loom_launch *l, bool items_known, bool make,
		 struct loom_checked_launch *c)
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
	if (l->site && !loom_launch_site_of(img, c->t - img->threads, l->site))
		return LOOM_E_SITE_MISMATCH;
	ret = check_signature(c->t, l);
	if (!ret)
		ret = check_views(dev, img, c->t, l->args);
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
	c->block = false;
	return 0;
}

int loom_launch_check(struct loom_device *dev, const struct loom_image *img,
		      const struct loom_launch *l)
{
	struct loom_checked_launch c;

	return check(dev, img, l, false, false, &c);
}

/*
 * An items launch whose DISPATCH_ITEMS becomes @work (the device's work
 * stack drains what the dispatch would have run once).
 */
static int check_work(const struct loom_device *dev,
		      const struct loom_launch *l,
		      const struct loom_pkt_run_work *work, struct loom_checked_launch *c)
{
	c->work = work;
	if (!work)
		return 0;
	if (l->kind != LOOM_LAUNCH_ITEMS)
		return -EINVAL;
	if (!(dev->info.hw_caps & LOOM_CAP_RUN_WORK))
		return LOOM_E_NO_DYNAMIC_WORK;
	c->cmd_size += sizeof(*work) - sizeof(struct loom_pkt_dispatch_items);
	return 0;
}

int loom_launch_prepare(struct loom_device *dev, const struct loom_image *img,
			const struct loom_launch *l,
			const struct loom_pkt_run_work *work,
			struct loom_checked_launch *c)
{
	int ret = check(dev, img, l, true, true, c);

	return ret ? ret : check_work(dev, l, work, c);
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
 * The offset of the first packet of @opcode in the @size bytes of filled
 * template at @p, its header in *@h; @size if there is none.  The loader
 * checked that the packets tile the template.
 */
static uint32_t find_packet(const unsigned char *p, uint32_t size,
			    uint32_t opcode, uint32_t *h)
{
	uint32_t at;

	for (at = 0; at < size; at += LOOM_PKT_DWORDS(*h) * 4) {
		memcpy(h, p + at, 4);
		if (LOOM_PKT_OPCODE(*h) == opcode)
			break;
	}
	return at;
}

/*
 * Replaces the DISPATCH_ITEMS of the @size bytes of filled template at @p
 * by @work; returns the new size.
 */
static uint32_t put_work(unsigned char *p, uint32_t size,
			 const struct loom_pkt_run_work *work)
{
	const uint32_t old = sizeof(struct loom_pkt_dispatch_items);
	struct loom_pkt_run_work w = *work;
	uint32_t h, at = find_packet(p, size, LOOM_PKT_DISPATCH_ITEMS, &h);

	if (at == size)
		return size;	/* check_signature() admitted no such thread */
	memmove(p + at + sizeof(w), p + at + old, size - at - old);
	w.header = LOOM_PKT_HEADER(LOOM_PKT_RUN_WORK, sizeof(w) / 4);
	memcpy(p + at, &w, sizeof(w));
	return size - old + sizeof(w);
}

/*
 * Makes the DISPATCH_DENSE of the @size bytes at @p a block packet: its
 * begin and end after the extents.  Returns the new size.
 */
static uint32_t put_block(unsigned char *p, uint32_t size,
			  const struct loom_checked_launch *c)
{
	uint32_t h, end, at = find_packet(p, size, LOOM_PKT_DISPATCH_DENSE, &h);

	if (at == size)
		return size;	/* check_signature() admitted no such thread */
	end = at + LOOM_PKT_DWORDS(h) * 4;
	memmove(p + end + 16, p + end, size - end);
	put64(p + end, (uint64_t)c->begin);
	put64(p + end + 8, (uint64_t)c->end);
	put32(p + at, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE,
				      LOOM_PKT_DWORDS(h) + 4));
	return size + 16;
}

/*
 * The template, its holes filled, then a WRITE_COUNTERS if asked for: the
 * template ends with its dispatch, so the counters are exactly that
 * dispatch's.
 */
void loom_launch_write(unsigned char *p, const struct loom_image *img,
		       const struct loom_checked_launch *c,
		       const struct loom_launch *l)
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
	if (c->block)
		size = put_block(p, size, c);
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
	struct loom_checked_launch c;
	int ret = check(dev, img, l, true, true, &c);

	if (ret)
		return ret;
	if (c.cmd_size > size)
		return -ENOSPC;
	loom_launch_write(buf, img, &c, l);
	*cmd_size = c.cmd_size;
	*config = c.plan->config->handle;
	return 0;
}

/* ---------------------------------------------------------- launches --- */

void loom_launch_submit_args(struct drm_loom_submit *s,
			     const struct loom_launch *l,
			     const struct loom_checked_launch *c,
			     const struct loom_arena *a, uint32_t off,
			     const struct drm_loom_bo_ref *ref,
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

/*
 * Submits checked launch @c of @l by ioctl, after the @n_in syncobjs @in,
 * as dispatch occurrence @occurrence.
 */
static int submit(struct loom_device *dev, const struct loom_image *img,
		  const struct loom_launch *l,
		  const struct loom_checked_launch *c, const uint32_t *in,
		  unsigned n_in, uint64_t occurrence, struct loom_token **token)
{
	struct drm_loom_bo_ref ref;
	struct drm_loom_submit s;
	struct loom_arena *a;
	struct loom_token *t;
	uint32_t off;
	int ret;

	ret = loom_token_for_submit(dev, &t);
	if (ret)
		return ret;
	t->occurrence = occurrence;
	if (l->site)
		t->launch = *l->site;
	ref = (struct drm_loom_bo_ref){ c->plan->config->handle, DRM_LOOM_BO_REF_READ };
	a = &dev->arenas[l->queue];
	/* held through SUBMIT: the arena's order is its queue's */
	pthread_mutex_lock(&a->lock);
	ret = loom_device_arena_room(dev, a, loom_cmd_room(c->cmd_size), &off);
	if (!ret) {
		loom_launch_write((unsigned char *)a->bo->map + off, img, c, l);
		loom_launch_submit_args(&s, l, c, a, off, &ref, in, t->syncobj);
		s.in_syncobj_count = n_in;
		t->submit_ns = loom_now_ns();
		ret = dev->be->submit(dev, &s);
	}
	if (!ret)
		loom_arena_push(a, off, loom_cmd_room(c->cmd_size), t);
	pthread_mutex_unlock(&a->lock);
	if (ret) {
		loom_token_put(t);
		return ret;
	}
	t->job_id = s.job_id;
	*token = t;
	return 0;
}

int loom_launch(struct loom_device *dev, const struct loom_image *img,
		const struct loom_launch *l, struct loom_token **token)
{
	uint32_t in[DRM_LOOM_MAX_IN_SYNCOBJS];
	struct loom_checked_launch c;
	uint64_t occurrence;
	int ret;

	if (!token)
		return -EINVAL;
	ret = loom_launch_prepare(dev, img, l, NULL, &c);
	if (!ret)
		ret = loom_occurrence_mint(&occurrence);
	if (ret)
		return ret;
	for (unsigned i = 0; i < l->n_deps; i++)
		in[i] = l->deps[i]->syncobj;
	return submit(dev, img, l, &c, in, l->n_deps, occurrence, token);
}

int loom_launch_part(struct loom_device *dev, const struct loom_image *img,
		     const struct loom_launch *l, bool block, int64_t begin,
		     int64_t end, const uint32_t *in, unsigned n_in,
		     uint64_t occurrence, struct loom_token **token)
{
	struct loom_launch own = *l;
	struct loom_checked_launch c;
	int ret;

	own.deps = NULL;
	own.n_deps = 0;
	ret = loom_launch_prepare(dev, img, &own, NULL, &c);
	if (ret)
		return ret;
	/* spread.c's check_all() admitted only dense launches, and blocks
	 * only on devices with LOOM_CAP_DENSE_BLOCK, before any part went */
	if (block) {
		c.block = true;
		c.begin = begin;
		c.end = end;
		c.cmd_size += 16;
	}
	return submit(dev, img, &own, &c, in, n_in, occurrence, token);
}

void loom_device_release_launches(struct loom_device *dev)
{
	for (unsigned q = 0; dev->arenas && q < dev->info.num_cores; q++) {
		loom_arena_fini(&dev->arenas[q]);
		pthread_mutex_destroy(&dev->arenas[q].lock);
	}
	free(dev->arenas);
	loom_token_pool_release(dev);
}
