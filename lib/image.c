// SPDX-License-Identifier: MIT
/*
 * DOC: program images
 *
 * The loader validates an ELF64 image (uapi/loom_image.h) completely before
 * anything uses it -- a launch then only reads fields that were checked --
 * and keeps aligned copies of the structured sections, because ELF places
 * sections at arbitrary file offsets.  The builder writes the same format;
 * tests use it now, loomc may later.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_device.h"
#include "device_internal.h"

#define BAD LOOM_E_BAD_IMAGE

/* ------------------------------------------------------------ loader --- */

struct section {
	uint64_t offset, size;
	bool found;
};

/* The sections a loader looks for, in this order. */
enum { S_INFO, S_THREADS, S_CONFIGS, S_TEMPLATES, S_PATCHES, S_HOST, S_STRTAB,
       S_COUNT };

static const char *const section_names[S_COUNT] = {
	LOOM_IMAGE_SECTION_INFO, LOOM_IMAGE_SECTION_THREADS,
	LOOM_IMAGE_SECTION_CONFIGS, LOOM_IMAGE_SECTION_TEMPLATES,
	LOOM_IMAGE_SECTION_PATCHES, LOOM_IMAGE_SECTION_HOST,
	LOOM_IMAGE_SECTION_STRTAB,
};

static bool inside(uint64_t offset, uint64_t size, uint64_t limit)
{
	return offset <= limit && size <= limit - offset;
}

static int check_ehdr(const unsigned char *data, size_t size, Elf64_Ehdr *eh)
{
	if (size < sizeof(*eh))
		return BAD;
	memcpy(eh, data, sizeof(*eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_type != ET_EXEC ||
	    eh->e_machine != EM_NONE || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shnum == 0 || eh->e_shstrndx >= eh->e_shnum)
		return BAD;
	if (!inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
		return BAD;
	return 0;
}

static void read_shdr(const unsigned char *data, const Elf64_Ehdr *eh,
		      unsigned i, Elf64_Shdr *sh)
{
	memcpy(sh, data + eh->e_shoff + (uint64_t)i * sizeof(*sh), sizeof(*sh));
}

/* Bytes a section occupies in the file (SHT_NOBITS: none). */
static uint64_t file_size(const Elf64_Shdr *sh)
{
	return sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
}

/* Records section @name if it is one of ours; a second copy is malformed. */
static int note_section(struct section *s, const char *name,
			const Elf64_Shdr *sh)
{
	for (unsigned k = 0; k < S_COUNT; k++) {
		if (strcmp(name, section_names[k]))
			continue;
		if (s[k].found || sh->sh_type == SHT_NOBITS)
			return BAD;
		s[k] = (struct section){ sh->sh_offset, sh->sh_size, true };
	}
	return 0;
}

static int find_sections(const unsigned char *data, size_t size,
			 const Elf64_Ehdr *eh, struct section *s)
{
	Elf64_Shdr shstr, sh;
	const char *names;

	read_shdr(data, eh, eh->e_shstrndx, &shstr);
	if (!inside(shstr.sh_offset, file_size(&shstr), size) ||
	    shstr.sh_size == 0 || data[shstr.sh_offset + shstr.sh_size - 1])
		return BAD;
	names = (const char *)data + shstr.sh_offset;
	for (unsigned i = 1; i < eh->e_shnum; i++) {
		read_shdr(data, eh, i, &sh);
		if (sh.sh_name >= shstr.sh_size ||
		    !inside(sh.sh_offset, file_size(&sh), size))
			return BAD;
		if (note_section(s, names + sh.sh_name, &sh))
			return BAD;
	}
	for (unsigned k = 0; k < S_COUNT; k++)
		if (!s[k].found && k != S_HOST)
			return BAD;
	return 0;
}

static bool reserved_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static int check_info(const struct loom_image_info *info)
{
	if (info->magic != LOOM_IMAGE_MAGIC ||
	    info->version != LOOM_IMAGE_VERSION || info->reserved0 ||
	    !reserved_zero(info->reserved, sizeof(info->reserved)) ||
	    info->fabric_width == 0 || info->fabric_height == 0 ||
	    info->fabric_width > LOOM_FABRIC_MAX_DIM ||
	    info->fabric_height > LOOM_FABRIC_MAX_DIM)
		return BAD;
	return 0;
}

/* A configuration image whose header matches its size and the fabric. */
static bool config_ok(const unsigned char *p, uint64_t size, unsigned width,
		      unsigned height)
{
	struct loom_fabric_config c;

	if (size < sizeof(c))
		return false;
	memcpy(&c, p, sizeof(c));
	return c.magic == LOOM_CONFIG_MAGIC && c.version == LOOM_CONFIG_VERSION &&
	       c.width == width && c.height == height &&
	       c.num_ports <= LOOM_MAX_PORTS &&
	       size == LOOM_CONFIG_SIZE((uint64_t)width * height, c.num_ports);
}

static bool arg_type_ok(unsigned t)
{
	return t >= LOOM_ARG_I32 && t <= LOOM_ARG_MEMREF_I64;
}

static int check_signature(const struct loom_image_thread *t)
{
	if (t->num_args > LOOM_IMAGE_MAX_ARGS)
		return BAD;
	for (unsigned i = 0; i < LOOM_IMAGE_MAX_ARGS; i++)
		if (i < t->num_args ? !arg_type_ok(t->arg_types[i]) : t->arg_types[i])
			return BAD;
	if (t->domain == LOOM_DOMAIN_DENSE)
		return t->rank <= LOOM_MAX_RANK &&
		       t->work_item_arg == LOOM_IMAGE_NO_WORK_ARG &&
		       t->child_capacity == 0 ? 0 : BAD;
	if (t->domain == LOOM_DOMAIN_DYNAMIC_WORK)
		return t->rank == 0 && t->work_item_arg < t->num_args &&
		       t->child_capacity <= LOOM_MAX_CHILD_CAPACITY ? 0 : BAD;
	return BAD;
}

/* Bytes a patch of @kind writes into the template. */
static unsigned patch_width(unsigned kind)
{
	return kind == LOOM_PATCH_ITEM_COUNT ? 4 : 8;
}

/*
 * Each patch lies inside the template and names something the thread has;
 * every operand and extent is patched exactly once, so no launch value can
 * be silently dropped.
 */
static int check_patches(const struct loom_image *img,
			 const struct loom_image_thread *t)
{
	unsigned operands = 0, extents = 0, config = 0;
	bool dense = t->domain == LOOM_DOMAIN_DENSE;

	if (!inside(t->patch_first, t->num_patches, img->num_patches))
		return BAD;
	for (uint32_t i = 0; i < t->num_patches; i++) {
		const struct loom_image_patch *p = &img->patches[t->patch_first + i];

		if (p->offset % 4 || !inside(p->offset, patch_width(p->kind), t->template_size))
			return BAD;
		switch (p->kind) {
		case LOOM_PATCH_CONFIG_VA:
			config++;
			if (p->index)
				return BAD;
			break;
		case LOOM_PATCH_OPERAND:
			if (p->index >= t->num_args || (operands & (1u << p->index)))
				return BAD;
			operands |= 1u << p->index;
			break;
		case LOOM_PATCH_EXTENT:
			if (!dense || p->index >= t->rank || (extents & (1u << p->index)))
				return BAD;
			extents |= 1u << p->index;
			break;
		case LOOM_PATCH_ITEM_COUNT:
		case LOOM_PATCH_PAYLOAD_VA:
		case LOOM_PATCH_RESULT_VA:
			if (dense || p->index)
				return BAD;
			break;
		default:
			return BAD;
		}
	}
	if (config == 0 || operands != (1u << t->num_args) - 1 ||
	    (dense && extents != (1u << t->rank) - 1))
		return BAD;
	return 0;
}

/* Every packet header of the template fits inside it. */
static int check_template(const unsigned char *tpl, uint32_t size)
{
	uint32_t off = 0, h;

	while (off < size) {
		memcpy(&h, tpl + off, 4);
		if (LOOM_PKT_DWORDS(h) == 0 ||
		    !inside(off, (uint64_t)LOOM_PKT_DWORDS(h) * 4, size))
			return BAD;
		off += LOOM_PKT_DWORDS(h) * 4;
	}
	return 0;
}

static int check_thread(const struct loom_image *img,
			const struct loom_image_thread *t)
{
	if (!reserved_zero(t->reserved, sizeof(t->reserved)) ||
	    t->name >= img->strtab_size || !img->strtab[t->name] ||
	    check_signature(t))
		return BAD;
	if (t->config_offset % 8 ||
	    !inside(t->config_offset, t->config_size, img->configs_size) ||
	    !config_ok(img->configs + t->config_offset, t->config_size,
		       img->info.fabric_width, img->info.fabric_height))
		return BAD;
	if (t->template_size == 0 || t->template_size % 4 ||
	    t->template_offset % 4 ||
	    !inside(t->template_offset, t->template_size, img->templates_size) ||
	    check_template(img->templates + t->template_offset, t->template_size))
		return BAD;
	return check_patches(img, t);
}

static int check_threads(const struct loom_image *img)
{
	for (uint32_t i = 0; i < img->info.num_threads; i++) {
		if (check_thread(img, &img->threads[i]))
			return BAD;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(img->strtab + img->threads[i].name,
				    img->strtab + img->threads[j].name))
				return BAD;
	}
	return 0;
}

/* Points @img at the sections of its own copy of the file, @b. */
static int map_sections(struct loom_image *img, unsigned char *b,
			const struct section *s)
{
	if (s[S_INFO].size != sizeof(img->info))
		return BAD;
	memcpy(&img->info, b + s[S_INFO].offset, sizeof(img->info));
	if (check_info(&img->info) ||
	    s[S_THREADS].size != (uint64_t)img->info.num_threads * sizeof(*img->threads) ||
	    s[S_PATCHES].size % sizeof(*img->patches) ||
	    s[S_CONFIGS].size > UINT32_MAX || s[S_TEMPLATES].size > UINT32_MAX ||
	    s[S_STRTAB].size > UINT32_MAX || s[S_PATCHES].size > UINT32_MAX ||
	    (s[S_STRTAB].size && b[s[S_STRTAB].offset + s[S_STRTAB].size - 1]))
		return BAD;
	img->configs = b + s[S_CONFIGS].offset;
	img->configs_size = s[S_CONFIGS].size;
	img->templates = b + s[S_TEMPLATES].offset;
	img->templates_size = s[S_TEMPLATES].size;
	img->strtab = (char *)b + s[S_STRTAB].offset;
	img->strtab_size = s[S_STRTAB].size;
	img->num_patches = s[S_PATCHES].size / sizeof(*img->patches);
	img->threads = malloc(s[S_THREADS].size + 1);
	img->patches = malloc(s[S_PATCHES].size + 1);
	if (!img->threads || !img->patches)
		return -ENOMEM;
	memcpy(img->threads, b + s[S_THREADS].offset, s[S_THREADS].size);
	memcpy(img->patches, b + s[S_PATCHES].offset, s[S_PATCHES].size);
	if (s[S_HOST].found) {
		/* validated by loom_host_run(), which alone interprets it */
		img->host = malloc(s[S_HOST].size + 1);
		if (!img->host)
			return -ENOMEM;
		memcpy(img->host, b + s[S_HOST].offset, s[S_HOST].size);
		img->host_size = s[S_HOST].size;
	}
	return 0;
}

static uint64_t next_image_id(void)
{
	static uint64_t id;

	return __atomic_add_fetch(&id, 1, __ATOMIC_RELAXED);
}

int loom_image_load(const void *data, size_t size, struct loom_image **out)
{
	struct section s[S_COUNT] = { 0 };
	struct loom_image *img;
	Elf64_Ehdr eh;
	int ret;

	if (!data || !out)
		return -EINVAL;
	ret = check_ehdr(data, size, &eh);
	if (!ret)
		ret = find_sections(data, size, &eh, s);
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
	ret = map_sections(img, img->bytes, s);
	if (!ret)
		ret = check_threads(img);
	if (ret) {
		loom_image_free(img);
		return ret;
	}
	img->id = next_image_id();
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
	free(img->bytes);
	free(img);
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

/* ----------------------------------------------------------- builder --- */

/* A growable byte array; every append keeps 8-byte alignment if asked. */
struct buf {
	unsigned char *p;
	size_t len, cap;
};

struct loom_image_builder {
	unsigned width, height;
	struct buf threads, configs, templates, patches, strtab;
	uint32_t num_threads;
	int error;		/* first allocation failure, sticky */
};

static int buf_reserve(struct buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	unsigned char *p;

	if (b->len + more <= b->cap)
		return 0;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	memset(p + b->cap, 0, cap - b->cap);
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Appends @n bytes (zeros if @data is NULL); returns the offset or -ENOMEM. */
static int64_t buf_add(struct buf *b, const void *data, size_t n)
{
	size_t at = b->len;

	if (n == 0)	/* an empty section: b->p may still be NULL */
		return at;
	if (buf_reserve(b, n))
		return -ENOMEM;
	if (data)
		memcpy(b->p + at, data, n);
	else
		memset(b->p + at, 0, n);
	b->len += n;
	return at;
}

/* Pads to a multiple of 8; returns the new length (the next offset). */
static int64_t buf_align8(struct buf *b)
{
	if (b->len % 8 && buf_add(b, NULL, 8 - b->len % 8) < 0)
		return -ENOMEM;
	return b->len;
}

int loom_builder_new(unsigned fabric_width, unsigned fabric_height,
		     struct loom_image_builder **out)
{
	struct loom_image_builder *b;

	if (!out || fabric_width == 0 || fabric_height == 0 ||
	    fabric_width > LOOM_FABRIC_MAX_DIM || fabric_height > LOOM_FABRIC_MAX_DIM)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->width = fabric_width;
	b->height = fabric_height;
	/* offset 0 of the string table is the empty name: never a thread's */
	if (buf_add(&b->strtab, "", 1) < 0) {
		free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

void loom_builder_free(struct loom_image_builder *b)
{
	if (!b)
		return;
	free(b->threads.p);
	free(b->configs.p);
	free(b->templates.p);
	free(b->patches.p);
	free(b->strtab.p);
	free(b);
}

static bool builder_has(const struct loom_image_builder *b, const char *name)
{
	for (uint32_t i = 0; i < b->num_threads; i++) {
		struct loom_image_thread t;

		memcpy(&t, b->threads.p + i * sizeof(t), sizeof(t));
		if (!strcmp((const char *)b->strtab.p + t.name, name))
			return true;
	}
	return false;
}

static int check_new_thread(const struct loom_image_builder *b,
			    const char *name, const enum loom_arg_type *types,
			    unsigned num_args, const void *config,
			    size_t config_size)
{
	if (!name || !*name || num_args > LOOM_IMAGE_MAX_ARGS ||
	    (num_args && !types) || !config)
		return -EINVAL;
	for (unsigned i = 0; i < num_args; i++)
		if (!arg_type_ok(types[i]))
			return -EINVAL;
	if (!config_ok(config, config_size, b->width, b->height))
		return LOOM_E_BAD_CONFIG;
	if (builder_has(b, name))
		return LOOM_E_DUPLICATE_THREAD;
	return 0;
}

/* One template being written, with its patches. */
struct tpl {
	uint32_t words[64];
	unsigned len;
	struct loom_image_patch patches[64];
	unsigned num_patches;
};

static void tpl_emit32(struct tpl *t, uint32_t v)
{
	t->words[t->len++] = v;
}

/* A 64-bit hole (value 0) that the loader fills with @kind/@index. */
static void tpl_hole64(struct tpl *t, unsigned kind, unsigned index)
{
	t->patches[t->num_patches++] = (struct loom_image_patch){
		.offset = t->len * 4, .kind = kind, .index = index };
	tpl_emit32(t, 0);
	tpl_emit32(t, 0);
}

static void tpl_prologue(struct tpl *t, uint32_t config_size, unsigned num_args)
{
	tpl_emit32(t, LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	tpl_emit32(t, config_size);
	tpl_hole64(t, LOOM_PATCH_CONFIG_VA, 0);
	tpl_emit32(t, LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 2 + 2 * num_args));
	tpl_emit32(t, num_args);
	for (unsigned i = 0; i < num_args; i++)
		tpl_hole64(t, LOOM_PATCH_OPERAND, i);
}

static void tpl_dense(struct tpl *t, unsigned rank)
{
	tpl_emit32(t, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 2 + 2 * rank));
	tpl_emit32(t, rank);
	for (unsigned i = 0; i < rank; i++)
		tpl_hole64(t, LOOM_PATCH_EXTENT, i);
}

static void tpl_items(struct tpl *t, uint32_t child_capacity)
{
	tpl_emit32(t, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8));
	t->patches[t->num_patches++] = (struct loom_image_patch){
		.offset = t->len * 4, .kind = LOOM_PATCH_ITEM_COUNT };
	tpl_emit32(t, 0);
	tpl_hole64(t, LOOM_PATCH_PAYLOAD_VA, 0);
	tpl_hole64(t, LOOM_PATCH_RESULT_VA, 0);
	tpl_emit32(t, child_capacity);
	tpl_emit32(t, 0);
}

/* Appends the thread record @t (offsets filled here) and its data. */
static int add_thread(struct loom_image_builder *b, struct loom_image_thread *t,
		      const char *name, const void *config, size_t config_size,
		      const struct tpl *tpl)
{
	int64_t name_off = buf_add(&b->strtab, name, strlen(name) + 1);
	int64_t cfg = buf_align8(&b->configs);
	int64_t tpl_off = buf_align8(&b->templates);

	if (name_off < 0 || cfg < 0 || buf_add(&b->configs, config, config_size) < 0 ||
	    tpl_off < 0 || buf_add(&b->templates, tpl->words, tpl->len * 4) < 0)
		return -ENOMEM;
	t->name = name_off;
	t->config_offset = cfg;
	t->config_size = config_size;
	t->template_offset = tpl_off;
	t->template_size = tpl->len * 4;
	t->patch_first = b->patches.len / sizeof(struct loom_image_patch);
	t->num_patches = tpl->num_patches;
	if (buf_add(&b->patches, tpl->patches, tpl->num_patches * sizeof(tpl->patches[0])) < 0 ||
	    buf_add(&b->threads, t, sizeof(*t)) < 0)
		return -ENOMEM;
	b->num_threads++;
	return 0;
}

static void set_signature(struct loom_image_thread *t,
			  const enum loom_arg_type *types, unsigned num_args)
{
	t->num_args = num_args;
	for (unsigned i = 0; i < num_args; i++)
		t->arg_types[i] = types[i];
}

int loom_builder_add_dense(struct loom_image_builder *b, const char *name,
			   unsigned rank, const enum loom_arg_type *arg_types,
			   unsigned num_args, const void *config,
			   size_t config_size)
{
	struct loom_image_thread t = { .domain = LOOM_DOMAIN_DENSE, .rank = rank,
				       .work_item_arg = LOOM_IMAGE_NO_WORK_ARG };
	struct tpl tpl = { .len = 0 };
	int ret;

	if (!b || rank > LOOM_MAX_RANK)
		return -EINVAL;
	ret = check_new_thread(b, name, arg_types, num_args, config, config_size);
	if (ret)
		return ret;
	set_signature(&t, arg_types, num_args);
	tpl_prologue(&tpl, config_size, num_args);
	tpl_dense(&tpl, rank);
	return add_thread(b, &t, name, config, config_size, &tpl);
}

int loom_builder_add_dynamic(struct loom_image_builder *b, const char *name,
			     const enum loom_arg_type *arg_types,
			     unsigned num_args, unsigned work_item_arg,
			     uint32_t child_capacity, const void *config,
			     size_t config_size)
{
	struct loom_image_thread t = { .domain = LOOM_DOMAIN_DYNAMIC_WORK,
				       .work_item_arg = work_item_arg,
				       .child_capacity = child_capacity };
	struct tpl tpl = { .len = 0 };
	int ret;

	if (!b || work_item_arg >= num_args ||
	    child_capacity > LOOM_MAX_CHILD_CAPACITY)
		return -EINVAL;
	ret = check_new_thread(b, name, arg_types, num_args, config, config_size);
	if (ret)
		return ret;
	set_signature(&t, arg_types, num_args);
	tpl_prologue(&tpl, config_size, num_args);
	tpl_items(&tpl, child_capacity);
	return add_thread(b, &t, name, config, config_size, &tpl);
}

/* ---- ELF writer */

enum { W_NULL, W_INFO, W_THREADS, W_CONFIGS, W_TEMPLATES, W_PATCHES, W_STRTAB,
       W_SHSTRTAB, W_COUNT };

struct elf_out {
	struct buf file;
	Elf64_Shdr sh[W_COUNT];
	struct buf shstr;
};

/* Appends section @idx's data (8-byte aligned) and its header. */
static int put_raw(struct elf_out *o, unsigned idx, int64_t name_off,
		   unsigned type, const void *data, size_t size)
{
	int64_t off = buf_align8(&o->file);

	if (name_off < 0 || off < 0 || buf_add(&o->file, data, size) < 0)
		return -ENOMEM;
	o->sh[idx] = (Elf64_Shdr){ .sh_name = name_off, .sh_type = type,
				   .sh_offset = off, .sh_size = size,
				   .sh_addralign = 8 };
	return 0;
}

static int put_section(struct elf_out *o, unsigned idx, const char *name,
		       unsigned type, const void *data, size_t size)
{
	return put_raw(o, idx, buf_add(&o->shstr, name, strlen(name) + 1),
		       type, data, size);
}

static Elf64_Ehdr elf_header(void)
{
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_NONE,
			  .e_version = EV_CURRENT, .e_ehsize = sizeof(eh),
			  .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = W_COUNT,
			  .e_shstrndx = W_SHSTRTAB };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	return eh;
}

static int write_sections(struct loom_image_builder *b, struct elf_out *o)
{
	struct loom_image_info info = { .magic = LOOM_IMAGE_MAGIC,
					.version = LOOM_IMAGE_VERSION,
					.num_threads = b->num_threads,
					.fabric_width = b->width,
					.fabric_height = b->height };
	int ret = buf_add(&o->shstr, "", 1) < 0 ? -ENOMEM : 0;

	if (!ret)
		ret = put_section(o, W_INFO, LOOM_IMAGE_SECTION_INFO, SHT_PROGBITS, &info, sizeof(info));
	if (!ret)
		ret = put_section(o, W_THREADS, LOOM_IMAGE_SECTION_THREADS, SHT_PROGBITS, b->threads.p, b->threads.len);
	if (!ret)
		ret = put_section(o, W_CONFIGS, LOOM_IMAGE_SECTION_CONFIGS, SHT_PROGBITS, b->configs.p, b->configs.len);
	if (!ret)
		ret = put_section(o, W_TEMPLATES, LOOM_IMAGE_SECTION_TEMPLATES, SHT_PROGBITS, b->templates.p, b->templates.len);
	if (!ret)
		ret = put_section(o, W_PATCHES, LOOM_IMAGE_SECTION_PATCHES, SHT_PROGBITS, b->patches.p, b->patches.len);
	if (!ret)
		ret = put_section(o, W_STRTAB, LOOM_IMAGE_SECTION_STRTAB, SHT_STRTAB, b->strtab.p, b->strtab.len);
	/* the section-name table names itself: its name goes in first */
	if (!ret) {
		int64_t self = buf_add(&o->shstr, ".shstrtab", 10);

		ret = put_raw(o, W_SHSTRTAB, self, SHT_STRTAB, o->shstr.p,
			      o->shstr.len);
	}
	return ret;
}

int loom_builder_finish(struct loom_image_builder *b, void **bytes,
			size_t *size)
{
	struct elf_out o = { 0 };
	Elf64_Ehdr eh = elf_header();
	int64_t shoff;
	int ret;

	if (!b || !bytes || !size)
		return -EINVAL;
	ret = buf_add(&o.file, NULL, sizeof(eh)) < 0 ? -ENOMEM : 0;
	if (!ret)
		ret = write_sections(b, &o);
	shoff = ret ? -ENOMEM : buf_align8(&o.file);
	if (!ret && (shoff < 0 || buf_add(&o.file, o.sh, sizeof(o.sh)) < 0))
		ret = -ENOMEM;
	free(o.shstr.p);
	if (ret) {
		free(o.file.p);
		return ret;
	}
	eh.e_shoff = shoff;
	memcpy(o.file.p, &eh, sizeof(eh));
	*bytes = o.file.p;
	*size = o.file.len;
	return 0;
}
