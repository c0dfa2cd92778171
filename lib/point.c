// SPDX-License-Identifier: MIT
/*
 * DOC: launch sites and logical thread points
 *
 * RootThreadLaunchRef (struct loom_launch_ref) and LogicalThreadPoint
 * (struct loom_thread_point) of spec §2.3: the registry of an image's
 * named launch sites, the refs of its host program's LAUNCHes, and the
 * points' equality and text.  Pure: no device, no system call.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_device.h"
#include "device_internal.h"
#include "loom_format.h"

uint64_t loom_image_digest(const struct loom_image *img)
{
	return img ? img->digest : 0;
}

/* ------------------------------------------------------ launch sites --- */

/* 1..LOOM_SITE_NAME_MAX characters of [A-Za-z0-9_.-]: unambiguous text. */
static bool site_name_ok(const char *name)
{
	size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz"
			  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");

	return n && n <= LOOM_SITE_NAME_MAX && !name[n];
}

static int add_site(struct loom_image *img, const char *name, uint32_t thread)
{
	char *copy;

	if (img->n_sites == img->cap_sites) {
		size_t cap = img->cap_sites ? 2 * img->cap_sites : 8;
		struct loom_image_site *s = realloc(img->sites, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		img->sites = s;
		img->cap_sites = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	img->sites[img->n_sites++] = (struct loom_image_site){ copy, thread };
	return 0;
}

int loom_launch_site_register(struct loom_image *img, const char *thread,
			      const char *name, struct loom_launch_ref *ref)
{
	struct loom_thread_info ti;
	int ret;

	if (!img || !thread || !name || !ref)
		return -EINVAL;
	ret = loom_image_thread(img, thread, &ti);
	if (ret)
		return ret;
	if (!site_name_ok(name))
		return LOOM_E_SITE_NAME;
	for (size_t i = 0; i < img->n_sites; i++)
		if (!strcmp(img->sites[i].name, name))
			return LOOM_E_SITE_EXISTS;
	ret = add_site(img, name, ti.index);
	if (ret)
		return ret;
	*ref = (struct loom_launch_ref){
		.image = img->digest, .thread = ti.index, .kind = LOOM_SITE_API,
		.site = img->sites[img->n_sites - 1].name,
	};
	return 0;
}

int loom_launch_site_host(const struct loom_image *img, const char *func,
			  unsigned ordinal, struct loom_launch_ref *ref)
{
	struct loom_image_view v;
	int64_t insn;
	int f;

	if (!img || !func || !ref)
		return -EINVAL;
	loom_image_view_of(img, &v);
	if (loom_view_check_host(&v, NULL, 0))
		return LOOM_E_BAD_IMAGE;
	f = loom_view_find_host_func(&v, func);
	if (f < 0)
		return LOOM_E_NO_HOST_FUNC;
	insn = loom_view_host_launch(&v, f, ordinal);
	if (insn < 0)
		return LOOM_E_NO_LAUNCH_SITE;
	*ref = (struct loom_launch_ref){
		.image = img->digest,
		/* a LAUNCH's list begins with its thread (checked above) */
		.thread = loom_view_host_list(&v, loom_view_host_insn(&v, insn).a),
		.kind = LOOM_SITE_HOST, .ordinal = ordinal,
		.site = loom_view_name(&v, loom_view_host_func(&v, f).name),
	};
	return 0;
}

/* ------------------------------------------------------------- refs --- */

static bool ref_ok(const struct loom_launch_ref *ref)
{
	return ref && ref->site &&
	       (ref->kind == LOOM_SITE_HOST || ref->kind == LOOM_SITE_API);
}

bool loom_launch_site_of(const struct loom_image *img, uint32_t thread,
			 const struct loom_launch_ref *site)
{
	if (!ref_ok(site) || site->image != img->digest || site->thread != thread)
		return false;
	if (site->kind == LOOM_SITE_HOST)
		return true;
	for (size_t i = 0; site->ordinal == 0 && i < img->n_sites; i++)
		if (img->sites[i].thread == thread &&
		    !strcmp(img->sites[i].name, site->site))
			return true;
	return false;
}

bool loom_launch_ref_equal(const struct loom_launch_ref *a,
			   const struct loom_launch_ref *b)
{
	if (!a || !b)
		return false;
	if (a->image != b->image || a->thread != b->thread ||
	    a->kind != b->kind || a->ordinal != b->ordinal)
		return false;
	if (!a->site || !b->site)
		return a->site == b->site;
	return !strcmp(a->site, b->site);
}

/*
 * A text built in pieces like snprintf: @len counts the whole text, the
 * buffer gets what fits and stays NUL-terminated.
 */
struct text {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	size_t room = t->len < t->size ? t->size - t->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? t->buf + t->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += n;
}

static void put_ref(struct text *t, const struct loom_launch_ref *ref)
{
	put(t, "%016" PRIx64 "/%" PRIu32 "/", ref->image, ref->thread);
	if (ref->kind == LOOM_SITE_HOST)
		put(t, "host:%s#%" PRIu32, ref->site, ref->ordinal);
	else
		put(t, "api:%s", ref->site);
}

/* The end of a format: its length, or -EINVAL with an empty text. */
static int text_end(struct text *t, bool ok)
{
	if (!ok) {
		if (t->buf && t->size)
			t->buf[0] = '\0';
		return -EINVAL;
	}
	if (t->len > INT_MAX)
		return -EOVERFLOW;
	return (int)t->len;
}

int loom_launch_ref_format(const struct loom_launch_ref *ref, char *buf,
			   size_t size)
{
	struct text t = { buf, size, 0 };

	if (!buf && size)
		return -EINVAL;
	if (!ref_ok(ref))
		return text_end(&t, false);
	put_ref(&t, ref);
	return text_end(&t, true);
}

/* ----------------------------------------------------------- points --- */

int loom_thread_point_dense(const struct loom_launch_ref *ref,
			    const int64_t *coords, const int64_t *extents,
			    unsigned rank, struct loom_thread_point *point)
{
	if (!ref_ok(ref) || !point || rank > LOOM_MAX_RANK ||
	    (rank && (!coords || !extents)))
		return -EINVAL;
	for (unsigned d = 0; d < rank; d++)
		if (coords[d] < 0 || coords[d] >= extents[d])
			return LOOM_E_POINT_OUTSIDE;
	*point = (struct loom_thread_point){
		.kind = LOOM_POINT_DENSE, .launch = *ref, .rank = rank,
	};
	for (unsigned d = 0; d < rank; d++)
		point->coords[d] = coords[d];
	return 0;
}

int loom_thread_point_dynamic(const struct loom_launch_ref *ref,
			      const struct loom_item_id *item,
			      struct loom_thread_point *point)
{
	if (!ref_ok(ref) || !item || !point || !item->occurrence)
		return -EINVAL;
	*point = (struct loom_thread_point){
		.kind = LOOM_POINT_DYNAMIC, .launch = *ref, .item = *item,
	};
	return 0;
}

bool loom_thread_point_equal(const struct loom_thread_point *a,
			     const struct loom_thread_point *b)
{
	if (!a || !b || a->kind != b->kind ||
	    !loom_launch_ref_equal(&a->launch, &b->launch))
		return false;
	switch (a->kind) {
	case LOOM_POINT_DENSE:
		if (a->rank != b->rank || a->rank > LOOM_MAX_RANK)
			return false;
		for (unsigned d = 0; d < a->rank; d++)
			if (a->coords[d] != b->coords[d])
				return false;
		return true;
	case LOOM_POINT_DYNAMIC:
		return loom_item_id_equal(&a->item, &b->item);
	}
	return false;
}

/* loom_item_id_format() is snprintf-like too: it writes in place. */
static void put_item(struct text *t, const struct loom_item_id *item)
{
	size_t room = t->len < t->size ? t->size - t->len : 0;

	t->len += loom_item_id_format(item, room ? t->buf + t->len : NULL, room);
}

int loom_thread_point_format(const struct loom_thread_point *point, char *buf,
			     size_t size)
{
	struct text t = { buf, size, 0 };

	if (!buf && size)
		return -EINVAL;
	if (!point || !ref_ok(&point->launch) || point->rank > LOOM_MAX_RANK ||
	    (point->kind != LOOM_POINT_DENSE && point->kind != LOOM_POINT_DYNAMIC))
		return text_end(&t, false);
	put_ref(&t, &point->launch);
	if (point->kind == LOOM_POINT_DYNAMIC) {
		put(&t, "{");
		put_item(&t, &point->item);
		put(&t, "}");
		return text_end(&t, true);
	}
	put(&t, "[");
	for (unsigned d = 0; d < point->rank; d++)
		put(&t, d ? ",%" PRId64 : "%" PRId64, point->coords[d]);
	put(&t, "]");
	return text_end(&t, true);
}
