// SPDX-License-Identifier: MIT
/*
 * DOC: spread: one dense launch over every core of several devices
 *
 * B_thread (spec §5) is the relation that places each point of a dense
 * domain on a core.  libloom's is a function of the extents and of the
 * device set's shape (how many devices, how many cores each) only -- not
 * of the occurrence, the time or the load -- so every execution of the
 * same launch on the same devices places every point the same way:
 *
 *   the P cores, device by device and core by core, are parts 0..P-1;
 *   part p runs the block [floor(p * e0 / P), floor((p + 1) * e0 / P)) of
 *   dimension 0, every coordinate of the other dimensions with it.
 *
 * The blocks partition [0, e0), so each point runs exactly once; they
 * differ in size by at most one row.  A domain of rank 0 (one instance)
 * or an empty one (a zero extent) is one part, device 0's core 0, as a
 * plain dense launch.  loom_launch_placement() answers the relation for
 * one point; loom_launch_spread() submits the non-empty parts, each a
 * DISPATCH_DENSE of its block (LOOM_CAP_DENSE_BLOCK), and returns one
 * collective token whose fence is the merge (a sync_file merge) of the
 * parts' fences: it signals when every part has, and fails with the first
 * failing part's error.
 *
 * Dependencies may be tokens of any of the devices: for a part on another
 * device than the token's, the token's fence is carried over as a
 * sync_file into a syncobj of the part's device for the submission.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"
#include "occurrence.h"

#define MAX_PARTS	(LOOM_SPREAD_MAX_DEVICES * LOOM_MAX_CORES)

/* The parts of a device set: each device's cores in order. */
static unsigned count_parts(struct loom_device *const *devs, unsigned n_devs)
{
	unsigned n = 0;

	for (unsigned d = 0; d < n_devs; d++)
		n += devs[d]->info.num_cores;
	return n;
}

static int64_t block_begin(int64_t e0, unsigned p, unsigned n_parts)
{
	return (int64_t)((unsigned __int128)e0 * p / n_parts);
}

static void part_at(struct loom_device *const *devs, unsigned p,
		    struct loom_part *out)
{
	unsigned d = 0;

	while (p >= devs[d]->info.num_cores)
		p -= devs[d++]->info.num_cores;
	out->device = d;
	out->queue = p;
}

static bool devs_ok(struct loom_device *const *devs, unsigned n_devs)
{
	if (!devs || !n_devs || n_devs > LOOM_SPREAD_MAX_DEVICES)
		return false;
	for (unsigned d = 0; d < n_devs; d++)
		if (!devs[d] || !devs[d]->info.num_cores)
			return false;
	return true;
}

/* One part for the whole domain: rank 0 or a zero extent. */
static bool single_part(const int64_t *extents, unsigned rank)
{
	if (!rank)
		return true;
	for (unsigned k = 0; k < rank; k++)
		if (!extents[k])
			return true;
	return false;
}

int loom_launch_placement(struct loom_device *const *devs, unsigned n_devs,
			  const int64_t *extents, unsigned rank,
			  const int64_t *point, struct loom_part *out)
{
	unsigned n_parts, p;
	int64_t e0, c0;

	if (!devs_ok(devs, n_devs) || !out || rank > LOOM_MAX_RANK ||
	    (rank && (!extents || !point)))
		return -EINVAL;
	for (unsigned k = 0; k < rank; k++)
		if (extents[k] < 0)
			return LOOM_E_NEGATIVE_EXTENT;
	for (unsigned k = 0; k < rank; k++)
		if (point[k] < 0 || point[k] >= extents[k])
			return -EINVAL;	/* also: no point of an empty domain */
	if (single_part(extents, rank)) {
		*out = (struct loom_part){ 0, 0, 0, rank ? extents[0] : 1 };
		return 0;
	}
	n_parts = count_parts(devs, n_devs);
	e0 = extents[0];
	c0 = point[0];
	/* the floor division's guess, then the one exact answer */
	p = (unsigned)((unsigned __int128)c0 * n_parts / e0);
	while (p + 1 < n_parts && block_begin(e0, p + 1, n_parts) <= c0)
		p++;
	while (p && block_begin(e0, p, n_parts) > c0)
		p--;
	part_at(devs, p, out);
	out->begin = block_begin(e0, p, n_parts);
	out->end = block_begin(e0, p + 1, n_parts);
	return 0;
}

/* --------------------------------------------------------------- fences --- */

/*
 * @dev's in-syncobjs for @deps: their own where the token is @dev's, else
 * a new syncobj with the token's fence (the caller destroys those, the
 * ones whose *@temp bit is set, after the submission).
 */
static int deps_for(struct loom_device *dev, struct loom_token *const *deps,
		    unsigned n_deps, uint32_t *in, uint32_t *temp)
{
	int ret = 0;

	*temp = 0;
	for (unsigned i = 0; i < n_deps && !ret; i++) {
		if (deps[i]->dev == dev) {
			in[i] = deps[i]->syncobj;
			continue;
		}
		ret = deps[i]->dev->be->syncobj_transfer(deps[i]->dev,
							 deps[i]->syncobj,
							 dev, &in[i]);
		if (!ret)
			*temp |= 1u << i;
	}
	if (ret)
		for (unsigned i = 0; i < n_deps; i++)
			if (*temp & (1u << i))
				dev->be->syncobj_destroy(dev, in[i]);
	return ret;
}

/*
 * The collective token of @n parts, on @dev, of dispatch occurrence
 * @occurrence (the parts'); takes the parts' references.
 */
static int collective(struct loom_device *dev, struct loom_token **parts,
		      unsigned n, uint64_t occurrence, struct loom_token **out)
{
	struct loom_token *t = NULL;
	int ret = loom_token_new(dev, &t);

	if (!ret)
		ret = dev->be->syncobj_merge(dev, t->syncobj, parts, n);
	if (!ret) {
		t->parts = malloc(n * sizeof(*parts));
		ret = t->parts ? 0 : -ENOMEM;
	}
	if (ret) {
		if (t)
			loom_token_put(t);
		return ret;
	}
	memcpy(t->parts, parts, n * sizeof(*parts));
	t->n_parts = n;
	t->occurrence = occurrence;
	t->submit_ns = parts[0]->submit_ns;
	*out = t;
	return 0;
}

/* ------------------------------------------------------------- launch --- */

/* Everything that can be refused, on every device, before any submission. */
static int check_all(struct loom_device *const *devs, unsigned n_devs,
		     const struct loom_image *img, const struct loom_launch *l,
		     bool split)
{
	struct loom_launch own = *l;
	int ret;

	if (l->kind != LOOM_LAUNCH_DENSE || l->counters_va ||
	    l->n_deps > DRM_LOOM_MAX_IN_SYNCOBJS || (l->n_deps && !l->deps))
		return -EINVAL;
	for (unsigned i = 0; i < l->n_deps; i++)
		if (!l->deps[i])
			return -EINVAL;
	own.deps = NULL;
	own.n_deps = 0;
	own.queue = 0;
	for (unsigned d = 0; d < n_devs; d++) {
		ret = loom_launch_check(devs[d], img, &own);
		if (ret)
			return ret;
		if (split && !(devs[d]->info.hw_caps & LOOM_CAP_DENSE_BLOCK))
			return LOOM_E_NOT_SUPPORTED;
	}
	return 0;
}

/* Part @p of @l, block [@begin, @end) (whole: !@block), after @l's deps. */
static int launch_one(struct loom_device *dev, const struct loom_image *img,
		      const struct loom_launch *l, unsigned queue, bool block,
		      int64_t begin, int64_t end, uint64_t occurrence,
		      struct loom_token **out)
{
	uint32_t in[DRM_LOOM_MAX_IN_SYNCOBJS], temp;
	struct loom_launch own = *l;
	int ret = deps_for(dev, l->deps, l->n_deps, in, &temp);

	if (ret)
		return ret;
	own.queue = queue;
	ret = loom_launch_part(dev, img, &own, block, begin, end, in,
			       l->n_deps, occurrence, out);
	for (unsigned i = 0; i < l->n_deps; i++)
		if (temp & (1u << i))
			dev->be->syncobj_destroy(dev, in[i]);
	return ret;
}

int loom_launch_spread(struct loom_device *const *devs, unsigned n_devs,
		       const struct loom_image *img,
		       const struct loom_launch *l, struct loom_token **token)
{
	struct loom_token *parts[MAX_PARTS];
	unsigned n_parts, n = 0;
	uint64_t occurrence;
	bool whole;
	int ret;

	if (!devs_ok(devs, n_devs) || !img || !l || !token)
		return -EINVAL;
	whole = l->kind == LOOM_LAUNCH_DENSE && l->n_extents <= LOOM_MAX_RANK &&
		(!l->n_extents || l->extents) &&
		single_part(l->extents, l->n_extents);
	n_parts = count_parts(devs, n_devs);
	ret = check_all(devs, n_devs, img, l, !whole && n_parts > 1);
	if (!ret)	/* one dispatch: its parts share its occurrence */
		ret = loom_occurrence_mint(&occurrence);
	if (ret)
		return ret;
	if (whole || n_parts == 1)
		return launch_one(devs[0], img, l, 0, false, 0, 0, occurrence,
				  token);
	for (unsigned p = 0; p < n_parts && !ret; p++) {
		int64_t e0 = l->extents[0];
		int64_t begin = block_begin(e0, p, n_parts);
		int64_t end = block_begin(e0, p + 1, n_parts);
		struct loom_part at;

		if (begin == end)
			continue;
		part_at(devs, p, &at);
		ret = launch_one(devs[at.device], img, l, at.queue, true,
				 begin, end, occurrence, &parts[n]);
		if (!ret)
			n++;
	}
	if (!ret && n == 1) {
		*token = parts[0];
		return 0;
	}
	if (!ret)
		ret = collective(devs[0], parts, n, occurrence, token);
	if (!ret && l->site)
		(*token)->launch = *l->site;
	if (ret) {
		/* the parts already submitted run; nothing is left behind */
		loom_token_wait_all(parts, n, -1);
		for (unsigned i = 0; i < n; i++)
			loom_token_put(parts[i]);
	}
	return ret;
}
