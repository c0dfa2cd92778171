// SPDX-License-Identifier: MIT
/*
 * reader.c: the image reader and validator, and the host program's
 * checker.
 *
 * Images come from files, so everything is checked before anyone looks
 * inside: a reader then only follows references that were checked.  Each
 * rejection says what is wrong in a sentence (loomc --disasm prints it;
 * libloom only returns LOOM_FORMAT_BAD_IMAGE, its LOOM_E_BAD_IMAGE).
 * Sections are read with memcpy:
 * ELF places them at any file offset, so nothing here is aligned.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loom_format.h"
#include "loom_ops.h"

const char *const loom_image_sec_names[LOOM_SEC_COUNT] = {
	LOOM_IMAGE_SECTION_INFO, LOOM_IMAGE_SECTION_THREADS,
	LOOM_IMAGE_SECTION_CONFIGS, LOOM_IMAGE_SECTION_TEMPLATES,
	LOOM_IMAGE_SECTION_PATCHES, LOOM_IMAGE_SECTION_STRTAB,
	LOOM_IMAGE_SECTION_HOST, LOOM_IMAGE_SECTION_SRCMAP,
	LOOM_IMAGE_SECTION_MEMREFS,
};

static bool optional_sec(int s)
{
	return s == LOOM_SEC_HOST || s == LOOM_SEC_SRCMAP || s == LOOM_SEC_MEMREFS;
}

/* Writes why the image is bad into @why; returns LOOM_FORMAT_BAD_IMAGE. */
__attribute__((format(printf, 3, 4)))
static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return LOOM_FORMAT_BAD_IMAGE;
}

#define FAIL(...) return bad(why, whylen, __VA_ARGS__)

static bool inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* ----------------------------------------------------------------- ELF --- */

static int check_ehdr(const struct loom_image_view *v, Elf64_Ehdr *eh,
		      char *why, size_t whylen)
{
	if (v->size < sizeof(*eh))
		FAIL("too short for an ELF header");
	memcpy(eh, v->data, sizeof(*eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_type != ET_EXEC ||
	    eh->e_machine != EM_NONE)
		FAIL("not an ELF64 little-endian executable for no machine");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
	    eh->e_shstrndx >= eh->e_shnum ||
	    !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), v->size))
		FAIL("bad section header table");
	return 0;
}

static Elf64_Shdr shdr_at(const struct loom_image_view *v, const Elf64_Ehdr *eh,
			  unsigned i)
{
	Elf64_Shdr sh;

	memcpy(&sh, v->data + eh->e_shoff + (uint64_t)i * sizeof(sh), sizeof(sh));
	return sh;
}

/* Bytes a section occupies in the file (SHT_NOBITS: none). */
static uint64_t file_size(const Elf64_Shdr *sh)
{
	return sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
}

/* Finds the .loom.* sections; each at most once, in the file. */
static int find_sections(struct loom_image_view *v, const Elf64_Ehdr *eh,
			 char *why, size_t whylen)
{
	Elf64_Shdr names = shdr_at(v, eh, eh->e_shstrndx), sh;

	/* NOBITS would put no bytes in the file for the names we read */
	if (names.sh_type == SHT_NOBITS || !inside(names.sh_offset, names.sh_size, v->size) ||
	    !names.sh_size || v->data[names.sh_offset + names.sh_size - 1])
		FAIL("bad .shstrtab");
	for (unsigned i = 1; i < eh->e_shnum; i++) {
		sh = shdr_at(v, eh, i);
		if (sh.sh_name >= names.sh_size)
			FAIL("section %u: bad name", i);
		if (!inside(sh.sh_offset, file_size(&sh), v->size))
			FAIL("section %u runs past the end of the file", i);
		for (int s = 0; s < LOOM_SEC_COUNT; s++) {
			if (strcmp((const char *)v->data + names.sh_offset + sh.sh_name,
				   loom_image_sec_names[s]))
				continue;
			if (v->sec[s] || sh.sh_type == SHT_NOBITS)
				FAIL("section %s is there twice or has no bytes",
				     loom_image_sec_names[s]);
			v->sec[s] = v->data + sh.sh_offset;
			v->len[s] = sh.sh_size;
		}
	}
	for (int s = 0; s < LOOM_SEC_COUNT; s++)
		if (!v->sec[s] && !optional_sec(s))
			FAIL("missing section %s", loom_image_sec_names[s]);
	return 0;
}

static int check_info(struct loom_image_view *v, char *why, size_t whylen)
{
	if (v->len[LOOM_SEC_INFO] != sizeof(v->info))
		FAIL(".loom.info has the wrong size");
	memcpy(&v->info, v->sec[LOOM_SEC_INFO], sizeof(v->info));
	if (v->info.magic != LOOM_IMAGE_MAGIC || v->info.version != LOOM_IMAGE_VERSION)
		FAIL("bad image magic or version");
	if (v->info.reserved0 || !zero(v->info.reserved, sizeof(v->info.reserved)) ||
	    !v->info.fabric_width || !v->info.fabric_height ||
	    v->info.fabric_width > LOOM_FABRIC_MAX_DIM ||
	    v->info.fabric_height > LOOM_FABRIC_MAX_DIM)
		FAIL("bad .loom.info fabric size or reserved fields");
	/* offsets inside the structs are 32 bits wide */
	for (int s = 0; s < LOOM_SEC_COUNT; s++)
		if (v->len[s] > UINT32_MAX)
			FAIL("section %s is larger than 4 GiB", loom_image_sec_names[s]);
	if (!v->len[LOOM_SEC_STRTAB] ||
	    v->sec[LOOM_SEC_STRTAB][v->len[LOOM_SEC_STRTAB] - 1] ||
	    v->len[LOOM_SEC_PATCHES] % sizeof(struct loom_image_patch))
		FAIL("bad .loom.strtab or .loom.patches size");
	if (v->len[LOOM_SEC_THREADS] != (uint64_t)v->info.num_threads *
					sizeof(struct loom_image_thread))
		FAIL(".loom.threads does not hold %u threads", v->info.num_threads);
	return 0;
}

/* ------------------------------------------------------------- threads --- */

bool loom_arg_type_valid(unsigned t)
{
	return t >= LOOM_ARG_I32 && t <= LOOM_ARG_MEMREF_F32;
}

unsigned loom_arg_memref_elem_size(unsigned t)
{
	switch (t) {
	case LOOM_ARG_MEMREF_I32: case LOOM_ARG_MEMREF_F32:
		return 4;
	case LOOM_ARG_MEMREF_I64:
		return 8;
	}
	return 0;
}

/*
 * One layout entry: a source @kind may have, its operand an index argument
 * of @t (not the work item), its value a static one's only.
 */
static bool layout_entry_ok(const struct loom_image_thread *t,
			    const struct loom_layout_entry *e, bool size,
			    bool stride)
{
	switch (e->source) {
	case LOOM_LAYOUT_STATIC:
		return !e->operand && (!size || e->value >= 0);
	case LOOM_LAYOUT_OPERAND:
		return !e->value && e->operand < t->num_args &&
		       t->arg_types[e->operand] == LOOM_ARG_INDEX &&
		       (t->domain != LOOM_DOMAIN_DYNAMIC_WORK ||
			e->operand != t->work_item_arg);
	case LOOM_LAYOUT_NOT_PASSED:
		return size && !e->operand && !e->value;
	case LOOM_LAYOUT_ROW_MAJOR:
		return stride && !e->operand && !e->value;
	}
	return false;
}

bool loom_memref_record_ok(const struct loom_image_thread *t,
			   const struct loom_image_memref *m)
{
	static const struct loom_layout_entry none;

	if (m->arg >= t->num_args || !loom_arg_memref_elem_size(t->arg_types[m->arg]) ||
	    m->rank < 1 || m->rank > LOOM_MEMREF_MAX_RANK || m->reserved0 ||
	    m->reserved || !layout_entry_ok(t, &m->offset, false, false))
		return false;
	for (unsigned k = 0; k < LOOM_MEMREF_MAX_RANK; k++) {
		if (k >= m->rank) {
			if (memcmp(&m->sizes[k], &none, sizeof(none)) ||
			    memcmp(&m->strides[k], &none, sizeof(none)))
				return false;
		} else if (!layout_entry_ok(t, &m->sizes[k], true, false) ||
			   !layout_entry_ok(t, &m->strides[k], false, true)) {
			return false;
		}
	}
	return true;
}

bool loom_config_fits(const void *config, uint64_t size, unsigned width,
		      unsigned height)
{
	struct loom_fabric_config c;

	if (size < sizeof(c))
		return false;
	memcpy(&c, config, sizeof(c));
	if ((c.version == LOOM_CONFIG_VERSION_SLOTS ||
	     c.version == LOOM_CONFIG_VERSION_CHANNELS) &&
	    (c.slots < 1 || c.slots > LOOM_PE_SLOTS))
		return false;
	return c.magic == LOOM_CONFIG_MAGIC &&
	       (c.version == LOOM_CONFIG_VERSION ||
		c.version == LOOM_CONFIG_VERSION_SLOTS ||
		c.version == LOOM_CONFIG_VERSION_CHANNELS) &&
	       c.width == width && c.height == height &&
	       c.num_ports <= LOOM_MAX_PORTS &&
	       size == LOOM_CONFIG_SIZE((uint64_t)width * height *
					LOOM_CONFIG_SLOTS(c.version, c.slots),
					c.num_ports);
}

static bool signature_ok(const struct loom_image_thread *t)
{
	if (t->num_args > LOOM_IMAGE_MAX_ARGS)
		return false;
	if (t->domain == LOOM_DOMAIN_DENSE)
		return t->rank <= LOOM_MAX_RANK &&
		       t->work_item_arg == LOOM_IMAGE_NO_WORK_ARG &&
		       t->child_capacity == 0;
	return t->domain == LOOM_DOMAIN_DYNAMIC_WORK && t->rank == 0 &&
	       t->work_item_arg < t->num_args &&
	       t->child_capacity <= LOOM_MAX_CHILD_CAPACITY;
}

/* The configuration is inside .loom.configs, aligned, for this fabric. */
static bool config_ok(const struct loom_image_view *v,
		      const struct loom_image_thread *t)
{
	return t->config_offset % 8 == 0 &&
	       inside(t->config_offset, t->config_size, v->len[LOOM_SEC_CONFIGS]) &&
	       loom_config_fits(v->sec[LOOM_SEC_CONFIGS] + t->config_offset,
				t->config_size, v->info.fabric_width,
				v->info.fabric_height);
}

/* Every packet of the template has a known opcode and fits inside it. */
static bool packets_ok(const uint8_t *tpl, uint32_t size)
{
	uint32_t at = 0, h;

	while (at < size) {
		memcpy(&h, tpl + at, 4);
		if (!LOOM_PKT_DWORDS(h) || LOOM_PKT_OPCODE(h) >= LOOM_PKT_OPCODE_COUNT ||
		    !inside(at, (uint64_t)LOOM_PKT_DWORDS(h) * 4, size))
			return false;
		at += LOOM_PKT_DWORDS(h) * 4;
	}
	return true;
}

static unsigned patch_width(unsigned kind)
{
	return kind == LOOM_PATCH_ITEM_COUNT ? 4 : 8;
}

/*
 * Each patch lies inside the template and names something the thread
 * has; every operand and extent is patched exactly once and the
 * configuration VA at least once, so no launch value is silently dropped.
 */
static bool patches_ok(const struct loom_image_view *v,
		       const struct loom_image_thread *t)
{
	unsigned operands = 0, extents = 0, config = 0;
	bool dense = t->domain == LOOM_DOMAIN_DENSE;

	for (uint32_t k = 0; k < t->num_patches; k++) {
		struct loom_image_patch p = loom_view_patch(v, t->patch_first + k);

		if (p.offset % 4 || !inside(p.offset, patch_width(p.kind), t->template_size))
			return false;
		switch (p.kind) {
		case LOOM_PATCH_CONFIG_VA:
			config++;
			if (p.index)
				return false;
			break;
		case LOOM_PATCH_OPERAND:
			if (p.index >= t->num_args || (operands & (1u << p.index)))
				return false;
			operands |= 1u << p.index;
			break;
		case LOOM_PATCH_EXTENT:
			if (!dense || p.index >= t->rank || (extents & (1u << p.index)))
				return false;
			extents |= 1u << p.index;
			break;
		case LOOM_PATCH_ITEM_COUNT:
		case LOOM_PATCH_PAYLOAD_VA:
		case LOOM_PATCH_RESULT_VA:
			if (dense || p.index)
				return false;
			break;
		default:
			return false;
		}
	}
	return config && operands == (1u << t->num_args) - 1 &&
	       extents == (dense ? (1u << t->rank) - 1 : 0);
}

static int check_thread(const struct loom_image_view *v, unsigned i,
			char *why, size_t whylen)
{
	struct loom_image_thread t = loom_view_thread(v, i);
	const char *name;

	if (!zero(t.reserved, sizeof(t.reserved)))
		FAIL("thread %u: reserved fields are not zero", i);
	if (t.name >= v->len[LOOM_SEC_STRTAB] || !v->sec[LOOM_SEC_STRTAB][t.name])
		FAIL("thread %u: bad name", i);
	name = loom_view_name(v, t.name);
	for (unsigned j = 0; j < i; j++)
		if (!strcmp(loom_view_name(v, loom_view_thread(v, j).name), name))
			FAIL("thread %u: a second thread named @%s", i, name);
	if (!signature_ok(&t))
		FAIL("thread %u: domain, rank, arguments, work-item argument or capacity are bad or disagree", i);
	for (unsigned a = 0; a < LOOM_IMAGE_MAX_ARGS; a++)
		if (a < t.num_args ? !loom_arg_type_valid(t.arg_types[a]) : t.arg_types[a])
			FAIL("thread %u: bad type of argument %u", i, a);
	if (!config_ok(v, &t))
		FAIL("thread %u: configuration outside .loom.configs or not for this fabric", i);
	if (!inside(t.template_offset, t.template_size, v->len[LOOM_SEC_TEMPLATES]) ||
	    !t.template_size || t.template_size % 4 || t.template_offset % 4)
		FAIL("thread %u: template outside .loom.templates", i);
	if (!packets_ok(v->sec[LOOM_SEC_TEMPLATES] + t.template_offset, t.template_size))
		FAIL("thread %u: a template packet is unknown or runs past the template", i);
	if (!inside(t.patch_first, t.num_patches,
		    v->len[LOOM_SEC_PATCHES] / sizeof(struct loom_image_patch)))
		FAIL("thread %u: patches outside .loom.patches", i);
	if (!patches_ok(v, &t))
		FAIL("thread %u: a patch is bad, or operands, extents or the configuration are not each patched once", i);
	return 0;
}

/* ------------------------------------------------------ .loom.srcmap --- */

static struct loom_srcmap_header srcmap_header(const struct loom_image_view *v)
{
	struct loom_srcmap_header h;

	memcpy(&h, v->sec[LOOM_SEC_SRCMAP], sizeof(h));
	return h;
}

static struct loom_srcmap_entry srcmap_entry(const struct loom_image_view *v,
					     uint32_t i)
{
	struct loom_srcmap_entry e;

	memcpy(&e, v->sec[LOOM_SEC_SRCMAP] + sizeof(struct loom_srcmap_header) +
	       (uint64_t)i * sizeof(e), sizeof(e));
	return e;
}

/* Orders entries by their key: kind, unit, at, slot, out. */
static int srcmap_key_cmp(const struct loom_srcmap_entry *a,
			  const struct loom_srcmap_entry *b)
{
	uint32_t ka[5] = { a->kind, a->unit, a->at, a->slot, a->out };
	uint32_t kb[5] = { b->kind, b->unit, b->at, b->slot, b->out };

	for (int i = 0; i < 5; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* The fields of @e's kind are in range, the others zero. */
static bool srcmap_entry_ok(const struct loom_image_view *v,
			    const struct loom_srcmap_entry *e, uint32_t strings)
{
	unsigned tiles = v->info.fabric_width * v->info.fabric_height;
	bool thread = e->unit < v->info.num_threads;

	if (e->reserved || e->name >= strings || !e->line || !e->col)
		return false;
	switch (e->kind) {
	case LOOM_SRCMAP_THREAD:
		return thread && !e->at && !e->slot && !e->out;
	case LOOM_SRCMAP_SLOT:
		return thread && e->at < tiles && e->slot < LOOM_PE_SLOTS && !e->out;
	case LOOM_SRCMAP_PORT:
		return thread && e->at < LOOM_MAX_PORTS && !e->slot && !e->out;
	case LOOM_SRCMAP_ROUTE:
		return thread && e->at < tiles && e->slot < LOOM_PE_SLOTS &&
		       e->out < LOOM_ROUTE_OUTS;
	case LOOM_SRCMAP_HOST:	/* instructions: checked at the lookup */
		return !e->at && !e->slot && !e->out;
	}
	return false;
}

/*
 * The header, every entry in range and in strictly ascending key order
 * (the lookup's binary search needs it), the strings NUL-terminated.
 */
static int check_srcmap(const struct loom_image_view *v, char *why,
			size_t whylen)
{
	const uint64_t len = v->len[LOOM_SEC_SRCMAP];
	struct loom_srcmap_header h;
	struct loom_srcmap_entry prev = { 0 }, e;
	const uint8_t *strings;

	if (!v->sec[LOOM_SEC_SRCMAP])
		return 0;
	if (len < sizeof(h))
		FAIL(".loom.srcmap is too short");
	h = srcmap_header(v);
	if (h.magic != LOOM_SRCMAP_MAGIC || h.version != LOOM_SRCMAP_VERSION ||
	    !zero(h.reserved, sizeof(h.reserved)) || !h.strings_size ||
	    len != sizeof(h) + (uint64_t)h.num_entries * sizeof(e) + h.strings_size)
		FAIL(".loom.srcmap: bad header or size");
	strings = v->sec[LOOM_SEC_SRCMAP] + len - h.strings_size;
	if (strings[0] || strings[h.strings_size - 1] || h.file >= h.strings_size)
		FAIL(".loom.srcmap: bad strings");
	for (uint32_t i = 0; i < h.num_entries; i++) {
		e = srcmap_entry(v, i);
		if (!srcmap_entry_ok(v, &e, h.strings_size))
			FAIL(".loom.srcmap: entry %u is bad", i);
		if (i && srcmap_key_cmp(&prev, &e) >= 0)
			FAIL(".loom.srcmap: entry %u is out of order", i);
		prev = e;
	}
	return 0;
}

/* ----------------------------------------------------- .loom.memrefs --- */

static struct loom_image_memref memref_at(const struct loom_image_view *v,
					  uint32_t i)
{
	struct loom_image_memref m;

	memcpy(&m, v->sec[LOOM_SEC_MEMREFS] + sizeof(struct loom_memref_header) +
	       (uint64_t)i * sizeof(m), sizeof(m));
	return m;
}

static uint32_t memref_count(const struct loom_image_view *v)
{
	return (v->len[LOOM_SEC_MEMREFS] - sizeof(struct loom_memref_header)) /
	       sizeof(struct loom_image_memref);
}

/*
 * The header and size, each record well formed and in strictly ascending
 * (thread, arg) order, and as many records as the threads have memref
 * arguments: with the order, one for each.
 */
static int check_memrefs(const struct loom_image_view *v, char *why,
			 size_t whylen)
{
	const uint64_t len = v->len[LOOM_SEC_MEMREFS];
	struct loom_memref_header h;
	uint64_t prev = 0, memref_args = 0;

	if (!v->sec[LOOM_SEC_MEMREFS])
		return 0;
	if (len < sizeof(h))
		FAIL(".loom.memrefs is too short");
	memcpy(&h, v->sec[LOOM_SEC_MEMREFS], sizeof(h));
	if (h.magic != LOOM_MEMREFS_MAGIC || h.version != LOOM_MEMREFS_VERSION ||
	    h.reserved ||
	    len != sizeof(h) + (uint64_t)h.num_memrefs * sizeof(struct loom_image_memref))
		FAIL(".loom.memrefs: bad header or size");
	for (uint32_t i = 0; i < h.num_memrefs; i++) {
		struct loom_image_memref m = memref_at(v, i);
		uint64_t key = (uint64_t)m.thread << 8 | m.arg;
		struct loom_image_thread t;

		if (m.thread >= v->info.num_threads)
			FAIL(".loom.memrefs: record %u names no thread", i);
		t = loom_view_thread(v, m.thread);
		if (!loom_memref_record_ok(&t, &m))
			FAIL(".loom.memrefs: record %u (thread %u, argument %u) is bad",
			     i, m.thread, m.arg);
		if (i && key <= prev)
			FAIL(".loom.memrefs: record %u is out of order or twice", i);
		prev = key;
	}
	for (uint32_t i = 0; i < v->info.num_threads; i++) {
		struct loom_image_thread t = loom_view_thread(v, i);

		for (unsigned a = 0; a < t.num_args; a++)
			memref_args += loom_arg_memref_elem_size(t.arg_types[a]) != 0;
	}
	if (memref_args != h.num_memrefs)
		FAIL(".loom.memrefs: %u records for %llu memref arguments",
		     h.num_memrefs, (unsigned long long)memref_args);
	return 0;
}

bool loom_view_memref(const struct loom_image_view *v, unsigned thread,
		      unsigned arg, struct loom_image_memref *m)
{
	if (!v->sec[LOOM_SEC_MEMREFS])
		return false;
	for (uint32_t i = 0, n = memref_count(v); i < n; i++) {
		*m = memref_at(v, i);
		if (m->thread == thread && m->arg == arg)
			return true;
	}
	return false;
}

int loom_view_source(const struct loom_image_view *v,
		     const struct loom_srcmap_entry *key,
		     struct loom_view_loc *loc)
{
	struct loom_srcmap_header h;
	const char *strings;
	uint32_t lo = 0, hi;

	if (!v->sec[LOOM_SEC_SRCMAP])
		return -ENOENT;
	h = srcmap_header(v);
	strings = (const char *)v->sec[LOOM_SEC_SRCMAP] + v->len[LOOM_SEC_SRCMAP] -
		  h.strings_size;
	hi = h.num_entries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct loom_srcmap_entry e = srcmap_entry(v, mid);
		int c = srcmap_key_cmp(&e, key);

		if (c < 0) {
			lo = mid + 1;
		} else if (c > 0) {
			hi = mid;
		} else {
			*loc = (struct loom_view_loc){
				.file = strings + h.file, .line = e.line,
				.col = e.col, .name = strings + e.name,
			};
			return 0;
		}
	}
	return -ENOENT;
}

int loom_view_open(struct loom_image_view *v, const void *data, size_t size,
		   char *why, size_t whylen)
{
	Elf64_Ehdr eh;
	int ret;

	memset(v, 0, sizeof(*v));
	v->data = data;
	v->size = size;
	if (!data)
		FAIL("no image");
	ret = check_ehdr(v, &eh, why, whylen);
	if (!ret)
		ret = find_sections(v, &eh, why, whylen);
	if (!ret)
		ret = check_info(v, why, whylen);
	for (unsigned i = 0; !ret && i < v->info.num_threads; i++)
		ret = check_thread(v, i, why, whylen);
	if (!ret)
		ret = check_srcmap(v, why, whylen);
	if (!ret)
		ret = check_memrefs(v, why, whylen);
	return ret;
}

struct loom_image_thread loom_view_thread(const struct loom_image_view *v,
					  unsigned i)
{
	struct loom_image_thread t;

	memcpy(&t, v->sec[LOOM_SEC_THREADS] + (uint64_t)i * sizeof(t), sizeof(t));
	return t;
}

struct loom_image_patch loom_view_patch(const struct loom_image_view *v,
					unsigned i)
{
	struct loom_image_patch p;

	memcpy(&p, v->sec[LOOM_SEC_PATCHES] + (uint64_t)i * sizeof(p), sizeof(p));
	return p;
}

const char *loom_view_name(const struct loom_image_view *v, uint32_t offset)
{
	return (const char *)v->sec[LOOM_SEC_STRTAB] + offset;
}

int loom_view_find_thread(const struct loom_image_view *v, const char *name)
{
	for (unsigned i = 0; name && i < v->info.num_threads; i++)
		if (!strcmp(loom_view_name(v, loom_view_thread(v, i).name), name))
			return i;
	return -1;
}

/* -------------------------------------------------------- .loom.host --- */

static uint64_t host_funcs_at(void)
{
	return sizeof(struct loom_host_header);
}

static uint64_t host_insns_at(const struct loom_image_view *v)
{
	return host_funcs_at() + (uint64_t)v->host.num_funcs * sizeof(struct loom_host_func);
}

static uint64_t host_consts_at(const struct loom_image_view *v)
{
	return host_insns_at(v) + (uint64_t)v->host.num_insns * sizeof(struct loom_host_insn);
}

static uint64_t host_list_at(const struct loom_image_view *v)
{
	return host_consts_at(v) + (uint64_t)v->host.num_consts * sizeof(uint64_t);
}

struct loom_host_func loom_view_host_func(const struct loom_image_view *v,
					  unsigned i)
{
	struct loom_host_func f;

	memcpy(&f, v->sec[LOOM_SEC_HOST] + host_funcs_at() + (uint64_t)i * sizeof(f),
	       sizeof(f));
	return f;
}

struct loom_host_insn loom_view_host_insn(const struct loom_image_view *v,
					  unsigned i)
{
	struct loom_host_insn x;

	memcpy(&x, v->sec[LOOM_SEC_HOST] + host_insns_at(v) + (uint64_t)i * sizeof(x),
	       sizeof(x));
	return x;
}

uint64_t loom_view_host_const(const struct loom_image_view *v, unsigned i)
{
	uint64_t c;

	memcpy(&c, v->sec[LOOM_SEC_HOST] + host_consts_at(v) + (uint64_t)i * 8, 8);
	return c;
}

uint32_t loom_view_host_list(const struct loom_image_view *v, unsigned i)
{
	uint32_t c;

	memcpy(&c, v->sec[LOOM_SEC_HOST] + host_list_at(v) + (uint64_t)i * 4, 4);
	return c;
}

int loom_view_find_host_func(const struct loom_image_view *v, const char *name)
{
	for (unsigned i = 0; name && v->sec[LOOM_SEC_HOST] && i < v->host.num_funcs; i++)
		if (!strcmp(loom_view_name(v, loom_view_host_func(v, i).name), name))
			return i;
	return -1;
}

int64_t loom_view_host_launch(const struct loom_image_view *v, unsigned func,
			      unsigned ordinal)
{
	struct loom_host_func f;

	if (!v->sec[LOOM_SEC_HOST] || func >= v->host.num_funcs)
		return -1;
	f = loom_view_host_func(v, func);
	for (uint32_t i = f.first; i < f.first + f.count; i++)
		if (loom_view_host_insn(v, i).op == LOOM_HOST_LAUNCH && !ordinal--)
			return i;
	return -1;
}

/*
 * A launch's list at @at: its thread, then its arguments (as many as the
 * thread has), the launches it waits for, its extents (as many as the
 * thread's rank); every entry but the counts a register below @regs.
 */
static bool launch_ok(const struct loom_image_view *v, uint32_t at, uint32_t regs)
{
	uint32_t n = v->host.num_list;
	struct loom_image_thread t;

	if (at >= n || loom_view_host_list(v, at) >= v->info.num_threads)
		return false;
	t = loom_view_thread(v, loom_view_host_list(v, at++));
	for (int part = 0; part < 3; part++) {
		uint32_t k;

		if (at >= n)
			return false;
		k = loom_view_host_list(v, at++);
		if (k > n - at || (part == 0 && k != t.num_args) ||
		    (part == 2 && k != t.rank))
			return false;
		for (uint32_t i = 0; i < k; i++)
			if (loom_view_host_list(v, at + i) >= regs)
				return false;
		at += k;
	}
	return true;
}

/*
 * An ALU instruction computes a PE operation (or MOV); the f32 ones other
 * than conversions only in LOOM_TYPE_I32, as on a PE.
 */
static bool host_alu_ok(unsigned op, unsigned type)
{
	if (type != LOOM_TYPE_I32 && type != LOOM_TYPE_I64)
		return false;
	return loom_op_info(op)->host &&
	       (!loom_op_f32_only(op) || type == LOOM_TYPE_I32);
}

/* Registers and references of instruction @i of function @f. */
static bool insn_ok(const struct loom_image_view *v,
		    const struct loom_host_func *f, uint32_t i)
{
	struct loom_host_insn x = loom_view_host_insn(v, i), y;
	uint32_t r = f->num_regs, end = f->first + f->count;
	bool abc = x.a < r && x.b < r && x.c < r;

	if (x.reserved)
		return false;
	switch (x.op) {
	case LOOM_HOST_CONST:
		return x.dst < r && x.a < v->host.num_consts;
	case LOOM_HOST_ALU:
		return x.dst < r && abc && host_alu_ok(x.aux, x.type);
	case LOOM_HOST_ALLOC: case LOOM_HOST_LOAD: case LOOM_HOST_STORE:
		return x.dst < r && abc && (x.aux == 4 || x.aux == 8);
	case LOOM_HOST_FOR:
		if (x.dst >= r || !abc || x.d <= i || x.d >= end)
			return false;
		y = loom_view_host_insn(v, x.d);
		return y.op == LOOM_HOST_END_FOR && y.a == i;
	case LOOM_HOST_END_FOR:
		if (x.a < f->first || x.a >= i)
			return false;
		y = loom_view_host_insn(v, x.a);
		return y.op == LOOM_HOST_FOR && y.d == i;
	case LOOM_HOST_LAUNCH:
		return x.dst < r && launch_ok(v, x.a, r);
	case LOOM_HOST_WAIT:
		return x.a < r;
	case LOOM_HOST_PRINT:
		return x.a < r && loom_arg_type_valid(x.type);
	case LOOM_HOST_CHECK:
		return x.a < r && x.b < r;
	case LOOM_HOST_RETURN:
		return true;
	}
	return false;
}

int loom_view_check_host(struct loom_image_view *v, char *why, size_t whylen)
{
	struct loom_host_header *h = &v->host;

	if (!v->sec[LOOM_SEC_HOST])
		FAIL("no .loom.host");
	if (v->len[LOOM_SEC_HOST] < sizeof(*h))
		FAIL(".loom.host is too short");
	memcpy(h, v->sec[LOOM_SEC_HOST], sizeof(*h));
	if (h->magic != LOOM_HOST_MAGIC || h->version != LOOM_HOST_VERSION ||
	    h->reserved || h->num_funcs > (1U << 20) || h->num_insns > (1U << 24) ||
	    h->num_consts > (1U << 24) || h->num_list > (1U << 24) ||
	    host_list_at(v) + 4ULL * h->num_list != v->len[LOOM_SEC_HOST]) {
		memset(h, 0, sizeof(*h));
		FAIL(".loom.host: bad header or size");
	}
	for (unsigned i = 0; i < h->num_funcs; i++) {
		struct loom_host_func f = loom_view_host_func(v, i);

		if (f.name >= v->len[LOOM_SEC_STRTAB] || !v->sec[LOOM_SEC_STRTAB][f.name] ||
		    !inside(f.first, f.count, h->num_insns))
			FAIL(".loom.host: function %u is bad", i);
		for (uint32_t k = f.first; k < f.first + f.count; k++)
			if (!insn_ok(v, &f, k))
				FAIL(".loom.host: function %u, instruction %u is bad", i, k);
	}
	return 0;
}
