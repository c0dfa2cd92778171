// SPDX-License-Identifier: MIT
/*
 * writer.c: the image builder.
 *
 * Sections grow as threads are added; loom_builder_finish() lays out the
 * ELF file: the header, each section 8-byte aligned in enum loom_image_sec
 * order (.loom.host only when there is a host program, .loom.srcmap only
 * with a source map, .loom.memrefs only with a memref record), the section-name table right after them, then the
 * section headers, 8-byte aligned.  loomc's images have had exactly this
 * layout since the format began, and an image without a source map or
 * memref records stays byte for byte what it was before there were any.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loom_format.h"

/* A growable byte array. */
struct buf {
	unsigned char *p;
	size_t len, cap;
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

static int64_t buf_add32(struct buf *b, uint32_t v)
{
	return buf_add(b, &v, 4);
}

/* Pads to a multiple of 8; returns the new length (the next offset). */
static int64_t buf_align8(struct buf *b)
{
	if (b->len % 8 && buf_add(b, NULL, 8 - b->len % 8) < 0)
		return -ENOMEM;
	return b->len;
}

struct loom_image_builder {
	unsigned width, height;
	struct buf sec[LOOM_SEC_COUNT];	/* .loom.info and .loom.host: at finish */
	uint32_t num_threads;
	struct buf host_funcs, host_insns, host_consts, host_list;
	struct buf host_names;		/* the functions' names, NUL-separated */
	uint32_t num_host_funcs;
	/*
	 * The source map: entries in the order added (their @name offsets
	 * into @src_strings, which starts with the empty string), sorted at
	 * finish; @src_slots an open-addressing table of string offsets, so
	 * each name is stored once.
	 */
	bool has_sources;
	uint32_t src_file;
	struct buf src_entries, src_strings;
	uint32_t *src_slots;
	size_t src_slots_cap, src_slots_used;
	struct buf memrefs;		/* struct loom_image_memref, as added */
};

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
	if (buf_add(&b->sec[LOOM_SEC_STRTAB], "", 1) < 0) {
		free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

static void host_clear(struct loom_image_builder *b)
{
	free(b->host_funcs.p);
	free(b->host_insns.p);
	free(b->host_consts.p);
	free(b->host_list.p);
	free(b->host_names.p);
	memset(&b->host_funcs, 0, sizeof(b->host_funcs));
	memset(&b->host_insns, 0, sizeof(b->host_insns));
	memset(&b->host_consts, 0, sizeof(b->host_consts));
	memset(&b->host_list, 0, sizeof(b->host_list));
	memset(&b->host_names, 0, sizeof(b->host_names));
	b->num_host_funcs = 0;
}

void loom_builder_free(struct loom_image_builder *b)
{
	if (!b)
		return;
	for (int s = 0; s < LOOM_SEC_COUNT; s++)
		free(b->sec[s].p);
	host_clear(b);
	loom_builder_drop_sources(b);
	free(b->memrefs.p);
	free(b);
}

/* ------------------------------------------------------------ threads --- */

static bool has_thread(const struct loom_image_builder *b, const char *name)
{
	const struct buf *strtab = &b->sec[LOOM_SEC_STRTAB];

	for (uint32_t i = 0; i < b->num_threads; i++) {
		struct loom_image_thread t;

		memcpy(&t, b->sec[LOOM_SEC_THREADS].p + i * sizeof(t), sizeof(t));
		if (!strcmp((const char *)strtab->p + t.name, name))
			return true;
	}
	return false;
}

static int check_new_thread(const struct loom_image_builder *b,
			    const char *name,
			    const struct loom_image_thread *sig,
			    const void *config, size_t config_size)
{
	bool dense = sig->domain == LOOM_DOMAIN_DENSE;

	if (!name || !*name || sig->num_args > LOOM_IMAGE_MAX_ARGS || !config)
		return -EINVAL;
	for (unsigned i = 0; i < sig->num_args; i++)
		if (!loom_arg_type_valid(sig->arg_types[i]))
			return -EINVAL;
	if (dense ? sig->rank > LOOM_MAX_RANK :
		    sig->domain != LOOM_DOMAIN_DYNAMIC_WORK ||
		    sig->work_item_arg >= sig->num_args ||
		    sig->child_capacity > LOOM_MAX_CHILD_CAPACITY)
		return -EINVAL;
	if (!loom_config_fits(config, config_size, b->width, b->height))
		return LOOM_FORMAT_BAD_CONFIG;
	if (has_thread(b, name))
		return LOOM_FORMAT_DUPLICATE_THREAD;
	return 0;
}

/* A 64-bit hole (value 0) that the loader fills with @kind/@index. */
static int hole(struct buf *tpl, size_t base, struct buf *patches,
		unsigned kind, unsigned index, unsigned width)
{
	struct loom_image_patch p = { .offset = tpl->len - base, .kind = kind,
				      .index = index };

	if (buf_add(patches, &p, sizeof(p)) < 0 || buf_add(tpl, NULL, width) < 0)
		return -ENOMEM;
	return 0;
}

/* The launch packets of @t into @tpl (from @base), its holes into @patches. */
static int template(const struct loom_image_thread *t, struct buf *tpl,
		    size_t base, struct buf *patches)
{
	int ret = 0;

	buf_add32(tpl, LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	buf_add32(tpl, t->config_size);
	ret |= hole(tpl, base, patches, LOOM_PATCH_CONFIG_VA, 0, 8);
	if (t->num_args) {
		buf_add32(tpl, LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS,
					       2 + 2 * t->num_args));
		buf_add32(tpl, t->num_args);
		for (unsigned k = 0; k < t->num_args; k++)
			ret |= hole(tpl, base, patches, LOOM_PATCH_OPERAND, k, 8);
	}
	if (t->domain == LOOM_DOMAIN_DENSE) {
		buf_add32(tpl, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE,
					       2 + 2 * t->rank));
		buf_add32(tpl, t->rank);
		for (unsigned k = 0; k < t->rank; k++)
			ret |= hole(tpl, base, patches, LOOM_PATCH_EXTENT, k, 8);
	} else {
		buf_add32(tpl, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8));
		ret |= hole(tpl, base, patches, LOOM_PATCH_ITEM_COUNT, 0, 4);
		ret |= hole(tpl, base, patches, LOOM_PATCH_PAYLOAD_VA, 0, 8);
		ret |= hole(tpl, base, patches, LOOM_PATCH_RESULT_VA, 0, 8);
		buf_add32(tpl, t->child_capacity);
		buf_add32(tpl, 0);
	}
	/* a failed append leaves len short: the sizes no longer add up */
	if (ret || tpl->len - base != 4u * (4 + (t->num_args ? 2 + 2 * t->num_args : 0) +
		   (t->domain == LOOM_DOMAIN_DENSE ? 2 + 2 * t->rank : 8)))
		return -ENOMEM;
	return 0;
}

int loom_builder_add_thread(struct loom_image_builder *b, const char *name,
			    const struct loom_image_thread *sig,
			    const void *config, size_t config_size)
{
	struct buf *sec = b ? b->sec : NULL;
	struct loom_image_thread t = { 0 };
	int64_t name_at, config_at, tpl_at;
	int ret;

	if (!b || !sig)
		return -EINVAL;
	ret = check_new_thread(b, name, sig, config, config_size);
	if (ret)
		return ret;
	t.domain = sig->domain;
	t.num_args = sig->num_args;
	memcpy(t.arg_types, sig->arg_types, sig->num_args);
	if (t.domain == LOOM_DOMAIN_DENSE) {
		t.rank = sig->rank;
		t.work_item_arg = LOOM_IMAGE_NO_WORK_ARG;
	} else {
		t.work_item_arg = sig->work_item_arg;
		t.child_capacity = sig->child_capacity;
	}
	name_at = buf_add(&sec[LOOM_SEC_STRTAB], name, strlen(name) + 1);
	config_at = buf_align8(&sec[LOOM_SEC_CONFIGS]);
	if (name_at < 0 || config_at < 0 ||
	    buf_add(&sec[LOOM_SEC_CONFIGS], config, config_size) < 0)
		return -ENOMEM;
	tpl_at = buf_align8(&sec[LOOM_SEC_TEMPLATES]);
	t.name = name_at;
	t.config_offset = config_at;
	t.config_size = config_size;
	t.template_offset = tpl_at;
	t.patch_first = sec[LOOM_SEC_PATCHES].len / sizeof(struct loom_image_patch);
	if (tpl_at < 0 || template(&t, &sec[LOOM_SEC_TEMPLATES], tpl_at,
				   &sec[LOOM_SEC_PATCHES]))
		return -ENOMEM;
	t.template_size = sec[LOOM_SEC_TEMPLATES].len - tpl_at;
	t.num_patches = sec[LOOM_SEC_PATCHES].len / sizeof(struct loom_image_patch) -
			t.patch_first;
	if (buf_add(&sec[LOOM_SEC_THREADS], &t, sizeof(t)) < 0)
		return -ENOMEM;
	b->num_threads++;
	return 0;
}

static int signature(struct loom_image_thread *t,
		     const enum loom_arg_type *types, unsigned num_args)
{
	if (num_args > LOOM_IMAGE_MAX_ARGS || (num_args && !types))
		return -EINVAL;
	t->num_args = num_args;
	for (unsigned i = 0; i < num_args; i++) {
		if (!loom_arg_type_valid(types[i]))
			return -EINVAL;
		t->arg_types[i] = types[i];
	}
	return 0;
}

int loom_builder_add_dense(struct loom_image_builder *b, const char *name,
			   unsigned rank, const enum loom_arg_type *arg_types,
			   unsigned num_args, const void *config,
			   size_t config_size)
{
	struct loom_image_thread t = { .domain = LOOM_DOMAIN_DENSE };

	if (rank > LOOM_MAX_RANK || signature(&t, arg_types, num_args))
		return -EINVAL;
	t.rank = rank;
	return loom_builder_add_thread(b, name, &t, config, config_size);
}

int loom_builder_add_dynamic(struct loom_image_builder *b, const char *name,
			     const enum loom_arg_type *arg_types,
			     unsigned num_args, unsigned work_item_arg,
			     uint32_t child_capacity, const void *config,
			     size_t config_size)
{
	struct loom_image_thread t = { .domain = LOOM_DOMAIN_DYNAMIC_WORK };

	if (work_item_arg >= num_args || child_capacity > LOOM_MAX_CHILD_CAPACITY ||
	    signature(&t, arg_types, num_args))
		return -EINVAL;
	t.work_item_arg = work_item_arg;
	t.child_capacity = child_capacity;
	return loom_builder_add_thread(b, name, &t, config, config_size);
}

/* ------------------------------------------------------------ memrefs --- */

static struct loom_image_memref memref_added(const struct loom_image_builder *b,
					     size_t i)
{
	struct loom_image_memref m;

	memcpy(&m, b->memrefs.p + i * sizeof(m), sizeof(m));
	return m;
}

int loom_builder_add_memref(struct loom_image_builder *b,
			    const struct loom_image_memref *m)
{
	size_t n = b ? b->memrefs.len / sizeof(*m) : 0;
	struct loom_image_thread t;

	if (!b || !m || m->thread >= b->num_threads)
		return -EINVAL;
	memcpy(&t, b->sec[LOOM_SEC_THREADS].p + m->thread * sizeof(t), sizeof(t));
	if (!loom_memref_record_ok(&t, m))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct loom_image_memref o = memref_added(b, i);

		if (o.thread == m->thread && o.arg == m->arg)
			return -EEXIST;
	}
	return buf_add(&b->memrefs, m, sizeof(*m)) < 0 ? -ENOMEM : 0;
}

static int by_thread_arg(const void *pa, const void *pb)
{
	const struct loom_image_memref *a = pa, *b = pb;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return (a->arg > b->arg) - (a->arg < b->arg);
}

/* .loom.memrefs: the header, the records by (thread, arg). */
static int memrefs_section(const struct loom_image_builder *b, struct buf *out)
{
	size_t n = b->memrefs.len / sizeof(struct loom_image_memref);
	struct loom_memref_header h = { .magic = LOOM_MEMREFS_MAGIC,
					.version = LOOM_MEMREFS_VERSION,
					.num_memrefs = n };
	int64_t at = buf_add(out, &h, sizeof(h));

	if (at < 0 || buf_add(out, b->memrefs.p, b->memrefs.len) < 0)
		return -ENOMEM;
	qsort(out->p + sizeof(h), n, sizeof(struct loom_image_memref), by_thread_arg);
	return 0;
}

/* ------------------------------------------------------- host program --- */

int loom_builder_set_host(struct loom_image_builder *b,
			  const struct loom_host_program *h)
{
	int ret = 0;

	if (!b || !h || (h->num_funcs && (!h->funcs || !h->names)))
		return -EINVAL;
	host_clear(b);
	for (uint32_t i = 0; i < h->num_funcs && !ret; i++)
		if (!h->names[i] ||
		    buf_add(&b->host_names, h->names[i], strlen(h->names[i]) + 1) < 0)
			ret = h->names[i] ? -ENOMEM : -EINVAL;
	if (!ret &&
	    (buf_add(&b->host_funcs, h->funcs, h->num_funcs * sizeof(*h->funcs)) < 0 ||
	     buf_add(&b->host_insns, h->insns, h->num_insns * sizeof(*h->insns)) < 0 ||
	     buf_add(&b->host_consts, h->consts, h->num_consts * sizeof(*h->consts)) < 0 ||
	     buf_add(&b->host_list, h->list, h->num_list * sizeof(*h->list)) < 0))
		ret = -ENOMEM;
	if (ret) {
		host_clear(b);
		return ret;
	}
	b->num_host_funcs = h->num_funcs;
	return 0;
}

/*
 * .loom.host: header, functions, instructions, constants, lists; the
 * functions' names go into @strtab after the threads'.
 */
static int host_section(const struct loom_image_builder *b, struct buf *host,
			struct buf *strtab)
{
	struct loom_host_header hdr = {
		.magic = LOOM_HOST_MAGIC, .version = LOOM_HOST_VERSION,
		.num_funcs = b->num_host_funcs,
		.num_insns = b->host_insns.len / sizeof(struct loom_host_insn),
		.num_consts = b->host_consts.len / sizeof(uint64_t),
		.num_list = b->host_list.len / sizeof(uint32_t),
	};
	const char *name = (const char *)b->host_names.p;

	if (buf_add(host, &hdr, sizeof(hdr)) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->num_host_funcs; i++) {
		struct loom_host_func f;
		int64_t at = buf_add(strtab, name, strlen(name) + 1);

		memcpy(&f, b->host_funcs.p + i * sizeof(f), sizeof(f));
		f.name = at;
		name += strlen(name) + 1;
		if (at < 0 || buf_add(host, &f, sizeof(f)) < 0)
			return -ENOMEM;
	}
	if (buf_add(host, b->host_insns.p, b->host_insns.len) < 0 ||
	    buf_add(host, b->host_consts.p, b->host_consts.len) < 0 ||
	    buf_add(host, b->host_list.p, b->host_list.len) < 0)
		return -ENOMEM;
	return 0;
}

/* --------------------------------------------------------- source map --- */

void loom_builder_drop_sources(struct loom_image_builder *b)
{
	if (!b)
		return;
	free(b->src_entries.p);
	free(b->src_strings.p);
	free(b->src_slots);
	memset(&b->src_entries, 0, sizeof(b->src_entries));
	memset(&b->src_strings, 0, sizeof(b->src_strings));
	b->src_slots = NULL;
	b->src_slots_cap = b->src_slots_used = 0;
	b->src_file = 0;
	b->has_sources = false;
}

static uint32_t fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static int grow_string_slots(struct loom_image_builder *b)
{
	size_t cap = b->src_slots_cap ? 2 * b->src_slots_cap : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < b->src_slots_cap; i++) {
		uint32_t at = b->src_slots[i];
		size_t k;

		if (!at)
			continue;
		k = fnv1a32((const char *)b->src_strings.p + at) & (cap - 1);
		while (slots[k])
			k = (k + 1) & (cap - 1);
		slots[k] = at;
	}
	free(b->src_slots);
	b->src_slots = slots;
	b->src_slots_cap = cap;
	return 0;
}

/* @s's offset in the source map's strings, added once; 0 for "" or NULL. */
static int64_t source_string(struct loom_image_builder *b, const char *s)
{
	size_t k;
	int64_t at;

	if (!s || !*s)
		return 0;
	if (!b->src_strings.len && buf_add(&b->src_strings, "", 1) < 0)
		return -ENOMEM;
	if (2 * (b->src_slots_used + 1) > b->src_slots_cap &&
	    grow_string_slots(b))
		return -ENOMEM;
	k = fnv1a32(s) & (b->src_slots_cap - 1);
	for (; b->src_slots[k]; k = (k + 1) & (b->src_slots_cap - 1))
		if (!strcmp((const char *)b->src_strings.p + b->src_slots[k], s))
			return b->src_slots[k];
	at = buf_add(&b->src_strings, s, strlen(s) + 1);
	if (at < 0 || at > UINT32_MAX)
		return -ENOMEM;
	b->src_slots[k] = at;
	b->src_slots_used++;
	return at;
}

int loom_builder_set_source_file(struct loom_image_builder *b,
				 const char *file)
{
	int64_t at;

	if (!b || !file)
		return -EINVAL;
	at = source_string(b, file);
	if (at < 0)
		return at;
	b->src_file = at;
	b->has_sources = true;
	return 0;
}

static bool source_key_ok(const struct loom_srcmap_entry *e)
{
	switch (e->kind) {
	case LOOM_SRCMAP_THREAD: case LOOM_SRCMAP_PORT: case LOOM_SRCMAP_HOST:
		return !e->slot && !e->out && (e->kind != LOOM_SRCMAP_PORT ||
					       e->at < LOOM_MAX_PORTS);
	case LOOM_SRCMAP_SLOT:
		return e->slot < LOOM_PE_SLOTS && !e->out;
	case LOOM_SRCMAP_ROUTE:
		return e->slot < LOOM_PE_SLOTS && e->out < LOOM_ROUTE_OUTS;
	}
	return false;
}

int loom_builder_add_source(struct loom_image_builder *b,
			    const struct loom_srcmap_entry *e,
			    const char *name)
{
	struct loom_srcmap_entry copy;
	int64_t at;

	if (!b || !e || !source_key_ok(e) || !e->line || !e->col)
		return -EINVAL;
	at = source_string(b, name);
	if (at < 0)
		return at;
	copy = (struct loom_srcmap_entry){
		.kind = e->kind, .slot = e->slot, .out = e->out,
		.unit = e->unit, .at = e->at, .line = e->line, .col = e->col,
		.name = at,
	};
	if (buf_add(&b->src_entries, &copy, sizeof(copy)) < 0)
		return -ENOMEM;
	b->has_sources = true;
	return 0;
}

/* An entry and the order it was added in: ties keep the first added. */
struct sorted_entry {
	struct loom_srcmap_entry e;
	size_t seq;
};

static int by_key(const void *pa, const void *pb)
{
	const struct sorted_entry *a = pa, *b = pb;
	uint32_t ka[5] = { a->e.kind, a->e.unit, a->e.at, a->e.slot, a->e.out };
	uint32_t kb[5] = { b->e.kind, b->e.unit, b->e.at, b->e.slot, b->e.out };

	for (int i = 0; i < 5; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static bool same_key(const struct loom_srcmap_entry *a,
		     const struct loom_srcmap_entry *b)
{
	return a->kind == b->kind && a->unit == b->unit && a->at == b->at &&
	       a->slot == b->slot && a->out == b->out;
}

/* .loom.srcmap: header, the entries by key (one per key), the strings. */
static int srcmap_section(const struct loom_image_builder *b, struct buf *out)
{
	size_t n = b->src_entries.len / sizeof(struct loom_srcmap_entry), kept = 0;
	struct sorted_entry *v = malloc((n ? n : 1) * sizeof(*v));
	struct loom_srcmap_header h = { .magic = LOOM_SRCMAP_MAGIC,
					.version = LOOM_SRCMAP_VERSION,
					.file = b->src_file };
	static const char empty[1];
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memcpy(&v[i].e, b->src_entries.p + i * sizeof(v[i].e), sizeof(v[i].e));
		v[i].seq = i;
	}
	qsort(v, n, sizeof(*v), by_key);
	for (size_t i = 0; i < n; i++)
		if (!kept || !same_key(&v[kept - 1].e, &v[i].e))
			v[kept++] = v[i];
	h.num_entries = kept;
	h.strings_size = b->src_strings.len ? b->src_strings.len : 1;
	if (buf_add(out, &h, sizeof(h)) < 0)
		ret = -ENOMEM;
	for (size_t i = 0; i < kept && !ret; i++)
		if (buf_add(out, &v[i].e, sizeof(v[i].e)) < 0)
			ret = -ENOMEM;
	if (!ret && buf_add(out, b->src_strings.len ? (const void *)b->src_strings.p :
			    empty, h.strings_size) < 0)
		ret = -ENOMEM;
	free(v);
	return ret;
}

/* ---------------------------------------------------------------- ELF --- */

static int64_t shdr(struct buf *out, uint32_t name, uint32_t type,
		    uint64_t off, uint64_t size)
{
	Elf64_Shdr sh = {
		.sh_name = name, .sh_type = type, .sh_offset = off,
		.sh_size = size, .sh_addralign = type ? 8 : 0,
	};

	return buf_add(out, &sh, sizeof(sh));
}

static Elf64_Ehdr elf_header(unsigned num_sections, uint64_t shoff)
{
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_NONE,
			  .e_version = EV_CURRENT, .e_ehsize = sizeof(eh),
			  .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shnum = num_sections + 2,	/* NULL, .shstrtab */
			  .e_shstrndx = num_sections + 1, .e_shoff = shoff };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	return eh;
}

/* The file from the sections in @sec that are @present, in their order. */
static int elf_file(const struct buf *sec, const bool *present,
		    struct buf *out)
{
	struct buf shstr = { 0 };
	uint64_t off[LOOM_SEC_COUNT];
	uint32_t name[LOOM_SEC_COUNT + 1];
	int64_t shstr_off, shoff;
	unsigned nsec = 0;
	Elf64_Ehdr eh;
	int ret = 0;

	buf_add(&shstr, "", 1);
	for (int s = 0; s <= LOOM_SEC_COUNT; s++) {
		const char *n = s < LOOM_SEC_COUNT ? loom_image_sec_names[s] : ".shstrtab";

		if (s < LOOM_SEC_COUNT && !present[s])
			continue;
		name[s] = shstr.len;
		buf_add(&shstr, n, strlen(n) + 1);
	}
	buf_add(out, NULL, sizeof(eh));		/* filled below */
	for (int s = 0; s < LOOM_SEC_COUNT; s++) {
		int64_t at;

		if (!present[s])
			continue;
		at = buf_align8(out);
		off[s] = at;
		nsec++;
		if (at < 0 || buf_add(out, sec[s].p, sec[s].len) < 0)
			ret = -ENOMEM;
	}
	shstr_off = buf_add(out, shstr.p, shstr.len);
	shoff = buf_align8(out);
	if (ret || !shstr.len || shstr_off < 0 || shoff < 0 ||
	    shdr(out, 0, SHT_NULL, 0, 0) < 0)
		ret = -ENOMEM;
	for (int s = 0; s < LOOM_SEC_COUNT && !ret; s++)
		if (present[s] &&
		    shdr(out, name[s], s == LOOM_SEC_STRTAB ? SHT_STRTAB : SHT_PROGBITS,
			 off[s], sec[s].len) < 0)
			ret = -ENOMEM;
	if (!ret && shdr(out, name[LOOM_SEC_COUNT], SHT_STRTAB, shstr_off, shstr.len) < 0)
		ret = -ENOMEM;
	free(shstr.p);
	if (ret)
		return ret;
	eh = elf_header(nsec, shoff);
	memcpy(out->p, &eh, sizeof(eh));
	return 0;
}

int loom_builder_finish(struct loom_image_builder *b, void **bytes,
			size_t *size)
{
	struct buf sec[LOOM_SEC_COUNT], out = { 0 };
	struct loom_image_info info = {
		.magic = LOOM_IMAGE_MAGIC, .version = LOOM_IMAGE_VERSION,
	};
	bool present[LOOM_SEC_COUNT];
	int ret = 0;

	if (!b || !bytes || !size)
		return -EINVAL;
	info.num_threads = b->num_threads;
	info.fabric_width = b->width;
	info.fabric_height = b->height;
	/* the host's names extend a copy of the string table */
	memcpy(sec, b->sec, sizeof(sec));
	sec[LOOM_SEC_INFO] = (struct buf){ (unsigned char *)&info, sizeof(info), sizeof(info) };
	sec[LOOM_SEC_STRTAB] = (struct buf){ 0 };
	sec[LOOM_SEC_HOST] = (struct buf){ 0 };
	sec[LOOM_SEC_SRCMAP] = (struct buf){ 0 };
	sec[LOOM_SEC_MEMREFS] = (struct buf){ 0 };
	for (int s = 0; s < LOOM_SEC_COUNT; s++)
		present[s] = true;
	present[LOOM_SEC_HOST] = b->num_host_funcs > 0;
	present[LOOM_SEC_SRCMAP] = b->has_sources;
	present[LOOM_SEC_MEMREFS] = b->memrefs.len > 0;
	if (buf_add(&sec[LOOM_SEC_STRTAB], b->sec[LOOM_SEC_STRTAB].p,
		    b->sec[LOOM_SEC_STRTAB].len) < 0)
		ret = -ENOMEM;
	if (!ret && present[LOOM_SEC_HOST])
		ret = host_section(b, &sec[LOOM_SEC_HOST], &sec[LOOM_SEC_STRTAB]);
	if (!ret && present[LOOM_SEC_SRCMAP])
		ret = srcmap_section(b, &sec[LOOM_SEC_SRCMAP]);
	if (!ret && present[LOOM_SEC_MEMREFS])
		ret = memrefs_section(b, &sec[LOOM_SEC_MEMREFS]);
	if (!ret)
		ret = elf_file(sec, present, &out);
	free(sec[LOOM_SEC_STRTAB].p);
	free(sec[LOOM_SEC_HOST].p);
	free(sec[LOOM_SEC_SRCMAP].p);
	free(sec[LOOM_SEC_MEMREFS].p);
	if (ret) {
		free(out.p);
		return ret;
	}
	*bytes = out.p;
	*size = out.len;
	return 0;
}
