// SPDX-License-Identifier: MIT
/*
 * DOC: command arenas
 *
 * A launch's command buffer, the thread's template with the holes filled,
 * is written into a command arena: one BO per (device, queue) for
 * launches by ioctl, one per ring for launches through io_uring.  An
 * arena is a byte ring: entries are handed out in order, and the oldest
 * are reused once their jobs are done -- a device arena knows it from the
 * launches' token syncobjs (it waits for them here), a ring's from their
 * CQEs (ring.c waits for those).  No BO is created per launch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"
#include "device_internal.h"

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
/* Entries a full device arena waits for at once, at most. */
#define RECLAIM_MAX		256

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

uint64_t loom_arena_push(struct loom_arena *a, uint32_t off, uint32_t size,
			 struct loom_token *token)
{
	*entry_at(a, a->count) = (struct loom_arena_entry){
		off, size, token ? loom_token_get(token) : NULL, false,
	};
	a->head = off + size;
	return a->first_seq + a->count++;
}

static void arena_pop(struct loom_arena *a)
{
	struct loom_arena_entry *e = entry_at(a, 0);

	if (e->token)
		loom_token_put(e->token);
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
	ret = dev->be->syncobj_wait(dev, handles, k, INT64_MAX,
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
	if (ret)
		return ret;
	while (k--)
		arena_pop(a);
	return 0;
}

int loom_arena_room(struct loom_device *dev, struct loom_arena *a,
		    uint32_t min, uint32_t size, uint32_t *off,
		    int (*wait)(void *ctx, bool all), void *ctx)
{
	int ret;

	if (a->bo && a->bo->size < 2ull * size) {
		while (a->count) {
			ret = wait(ctx, true);
			if (ret)
				return ret;
		}
		loom_bo_free(a->bo);
		a->bo = NULL;
	}
	if (!a->bo) {
		ret = arena_bo(dev, a, min, size);
		if (ret)
			return ret;
	}
	while (!arena_fit(a, size, off)) {
		ret = wait(ctx, false);
		if (ret)
			return ret;
	}
	return arena_grow(a);
}

/* A device arena and its device: what arena_reclaim() waits with. */
struct device_arena {
	struct loom_device *dev;
	struct loom_arena *a;
};

static int device_arena_reclaim(void *ctx, bool all)
{
	struct device_arena *da = ctx;

	return arena_reclaim(da->dev, da->a, all);
}

int loom_device_arena_room(struct loom_device *dev, struct loom_arena *a,
			   uint32_t size, uint32_t *off)
{
	struct device_arena da = { dev, a };

	return loom_arena_room(dev, a, ARENA_SIZE, size, off,
			       device_arena_reclaim, &da);
}

void loom_arena_done(struct loom_arena *a, uint64_t seq)
{
	entry_at(a, seq - a->first_seq)->done = true;
	while (a->count && entry_at(a, 0)->done)
		arena_pop(a);
}

void loom_arena_unpush(struct loom_arena *a, uint32_t off)
{
	a->count--;
	a->head = off;
}

void loom_arena_fini(struct loom_arena *a)
{
	while (a->count)
		arena_pop(a);
	free(a->fifo);
	loom_bo_free(a->bo);
	memset(a, 0, sizeof(*a));
}
