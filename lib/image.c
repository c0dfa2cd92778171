// SPDX-License-Identifier: MIT
/*
 * DOC: program images
 *
 * The loader has format/reader.c validate an ELF64 image
 * (uapi/loom_image.h) completely before anything uses it -- a launch then
 * only reads fields that were checked -- and keeps aligned copies of the
 * structured sections, because ELF places sections at arbitrary file
 * offsets.  The builder is format/writer.c, loomc's writer too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_device.h"
#include "device_internal.h"
#include "loom_format.h"

/* ------------------------------------------------------------ loader --- */

/*
 * .loom.memrefs' records copied out aligned, and where each thread's begin:
 * the reader checked they are in (thread, arg) order.
 */
static int map_memrefs(struct loom_image *img, const struct loom_image_view *v)
{
	const size_t hdr = sizeof(struct loom_memref_header);
	uint32_t n, k = 0;

	if (!v->sec[LOOM_SEC_MEMREFS])
		return 0;
	n = (v->len[LOOM_SEC_MEMREFS] - hdr) / sizeof(*img->memrefs);
	img->memrefs = malloc(n * sizeof(*img->memrefs) + 1);
	img->memref_first = malloc((img->info.num_threads + 1) *
				   sizeof(*img->memref_first));
	if (!img->memrefs || !img->memref_first)
		return -ENOMEM;
	memcpy(img->memrefs, v->sec[LOOM_SEC_MEMREFS] + hdr, n * sizeof(*img->memrefs));
	img->num_memrefs = n;
	for (uint32_t t = 0; t <= img->info.num_threads; t++) {
		while (k < n && img->memrefs[k].thread < t)
			k++;
		img->memref_first[t] = k;
	}
	return 0;
}

/*
 * Points @img at the sections of its own copy of the file, validated as
 * @v by format/reader.c; threads and patches are copied out aligned.
 */
static int map_sections(struct loom_image *img, const struct loom_image_view *v)
{
	unsigned char *b = img->bytes;

#define AT(s) (b + (v->sec[s] - v->data))
	img->info = v->info;
	img->configs = AT(LOOM_SEC_CONFIGS);
	img->configs_size = v->len[LOOM_SEC_CONFIGS];
	img->templates = AT(LOOM_SEC_TEMPLATES);
	img->templates_size = v->len[LOOM_SEC_TEMPLATES];
	img->strtab = (char *)AT(LOOM_SEC_STRTAB);
	img->strtab_size = v->len[LOOM_SEC_STRTAB];
	img->num_patches = v->len[LOOM_SEC_PATCHES] / sizeof(*img->patches);
	img->threads = malloc(v->len[LOOM_SEC_THREADS] + 1);
	img->patches = malloc(v->len[LOOM_SEC_PATCHES] + 1);
	if (!img->threads || !img->patches)
		return -ENOMEM;
	memcpy(img->threads, v->sec[LOOM_SEC_THREADS], v->len[LOOM_SEC_THREADS]);
	memcpy(img->patches, v->sec[LOOM_SEC_PATCHES], v->len[LOOM_SEC_PATCHES]);
	if (v->sec[LOOM_SEC_HOST]) {
		/* checked by loom_host_run(), which alone interprets it */
		img->host = malloc(v->len[LOOM_SEC_HOST] + 1);
		if (!img->host)
			return -ENOMEM;
		memcpy(img->host, v->sec[LOOM_SEC_HOST], v->len[LOOM_SEC_HOST]);
		img->host_size = v->len[LOOM_SEC_HOST];
	}
	if (v->sec[LOOM_SEC_SRCMAP]) {	/* checked by loom_view_open() */
		img->srcmap = AT(LOOM_SEC_SRCMAP);
		img->srcmap_size = v->len[LOOM_SEC_SRCMAP];
	}
#undef AT
	return map_memrefs(img, v);
}

/*
 * Spec §7: a work-item payload the runtime cannot carry is a capability
 * error at load, not a surprise at launch.  The runtime carries i32
 * (sign-extended), i64 and index payloads, each in one u64.
 */
static int check_payloads(const struct loom_image *img)
{
	for (uint32_t i = 0; i < img->info.num_threads; i++) {
		const struct loom_image_thread *t = &img->threads[i];
		uint8_t type;

		if (t->domain != LOOM_DOMAIN_DYNAMIC_WORK)
			continue;
		type = t->arg_types[t->work_item_arg];
		if (type != LOOM_ARG_I32 && type != LOOM_ARG_I64 &&
		    type != LOOM_ARG_INDEX)
			return LOOM_E_UNSUPPORTED_PAYLOAD;
	}
	return 0;
}

/* 64-bit FNV-1a: stable across processes and hosts, no table. */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t next_image_id(void)
{
	static uint64_t id;

	return __atomic_add_fetch(&id, 1, __ATOMIC_RELAXED);
}

int loom_image_load(const void *data, size_t size, struct loom_image **out)
{
	struct loom_image_view v;
	struct loom_image *img;
	int ret;

	if (!data || !out)
		return -EINVAL;
	ret = loom_view_open(&v, data, size, NULL, 0);
	if (ret)
		return ret;
	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	img->bytes = malloc(size);
	if (!img->bytes) {
		free(img);
		return -ENOMEM;
	}
	memcpy(img->bytes, data, size);
	ret = map_sections(img, &v);
	if (!ret)
		ret = check_payloads(img);
	if (ret) {
		loom_image_free(img);
		return ret;
	}
	img->id = next_image_id();
	img->digest = fnv1a(img->bytes, size);
	*out = img;
	return 0;
}

static int read_file(FILE *f, void **data, size_t *size)
{
	long n;

	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return -EIO;
	*data = malloc(n ? n : 1);
	if (!*data)
		return -ENOMEM;
	if (fread(*data, 1, n, f) != (size_t)n) {
		free(*data);
		return -EIO;
	}
	*size = n;
	return 0;
}

int loom_image_load_file(const char *path, struct loom_image **out)
{
	FILE *f;
	void *data;
	size_t size;
	int ret;

	if (!path || !out)
		return -EINVAL;
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	ret = read_file(f, &data, &size);
	fclose(f);
	if (ret)
		return ret;
	ret = loom_image_load(data, size, out);
	free(data);
	return ret;
}

void loom_image_free(struct loom_image *img)
{
	if (!img)
		return;
	free(img->threads);
	free(img->patches);
	free(img->host);
	free(img->memrefs);
	free(img->memref_first);
	free(img->bytes);
	for (size_t i = 0; i < img->n_sites; i++)
		free(img->sites[i].name);
	free(img->sites);
	free(img);
}

void loom_image_view_of(const struct loom_image *img,
			struct loom_image_view *v)
{
	memset(v, 0, sizeof(*v));
	v->info = img->info;
	v->sec[LOOM_SEC_THREADS] = (const uint8_t *)img->threads;
	v->len[LOOM_SEC_THREADS] = (uint64_t)img->info.num_threads * sizeof(*img->threads);
	v->sec[LOOM_SEC_PATCHES] = (const uint8_t *)img->patches;
	v->len[LOOM_SEC_PATCHES] = (uint64_t)img->num_patches * sizeof(*img->patches);
	v->sec[LOOM_SEC_CONFIGS] = img->configs;
	v->len[LOOM_SEC_CONFIGS] = img->configs_size;
	v->sec[LOOM_SEC_TEMPLATES] = img->templates;
	v->len[LOOM_SEC_TEMPLATES] = img->templates_size;
	v->sec[LOOM_SEC_STRTAB] = (const uint8_t *)img->strtab;
	v->len[LOOM_SEC_STRTAB] = img->strtab_size;
	v->sec[LOOM_SEC_HOST] = img->host;
	v->len[LOOM_SEC_HOST] = img->host_size;
	v->sec[LOOM_SEC_SRCMAP] = img->srcmap;
	v->len[LOOM_SEC_SRCMAP] = img->srcmap_size;
}

int loom_image_source_of(const struct loom_image *img,
			 enum loom_srcmap_kind kind, unsigned unit,
			 unsigned at, unsigned slot, unsigned out,
			 struct loom_source_loc *loc)
{
	struct loom_srcmap_entry key = { .kind = kind, .unit = unit, .at = at,
					 .slot = slot, .out = out };
	struct loom_image_view v;
	struct loom_view_loc found;
	int ret;

	if (!img || !loc || slot > UINT8_MAX || out > UINT8_MAX)
		return -EINVAL;
	loom_image_view_of(img, &v);
	ret = loom_view_source(&v, &key, &found);
	if (ret)
		return ret;
	*loc = (struct loom_source_loc){ .file = found.file, .line = found.line,
					 .col = found.col, .name = found.name };
	return 0;
}

const void *loom_image_host_section(const struct loom_image *img,
				    size_t *size)
{
	if (size)
		*size = img->host ? img->host_size : 0;
	return img->host;
}

unsigned loom_image_num_threads(const struct loom_image *img)
{
	return img->info.num_threads;
}

void loom_image_fabric(const struct loom_image *img, unsigned *width,
		       unsigned *height)
{
	*width = img->info.fabric_width;
	*height = img->info.fabric_height;
}

const struct loom_image_thread *loom_image_find(const struct loom_image *img,
						const char *name)
{
	for (uint32_t i = 0; name && i < img->info.num_threads; i++)
		if (!strcmp(img->strtab + img->threads[i].name, name))
			return &img->threads[i];
	return NULL;
}

static void fill_info(const struct loom_image *img,
		      const struct loom_image_thread *t,
		      struct loom_thread_info *info)
{
	memset(info, 0, sizeof(*info));
	info->name = img->strtab + t->name;
	info->index = t - img->threads;
	info->domain = t->domain;
	info->rank = t->rank;
	info->num_args = t->num_args;
	for (unsigned i = 0; i < t->num_args; i++)
		info->arg_types[i] = t->arg_types[i];
	info->work_item_arg = t->domain == LOOM_DOMAIN_DYNAMIC_WORK ?
			      (int)t->work_item_arg : -1;
	info->child_capacity = t->child_capacity;
}

int loom_image_thread(const struct loom_image *img, const char *name,
		      struct loom_thread_info *info)
{
	const struct loom_image_thread *t = loom_image_find(img, name);

	if (!t)
		return LOOM_E_NO_THREAD;
	fill_info(img, t, info);
	return 0;
}

int loom_image_thread_at(const struct loom_image *img, unsigned index,
			 struct loom_thread_info *info)
{
	if (index >= img->info.num_threads)
		return -EINVAL;
	fill_info(img, &img->threads[index], info);
	return 0;
}
