// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * emit.c: program images, ELF64 little-endian with .loom.* sections.
 *
 * Each thread gets its configuration and a launch template: LOAD_CONFIG
 * (size baked in, VA patched), SET_OPERANDS (every argument patched, so
 * operand k is argument k), then DISPATCH_DENSE (extents patched) or
 * DISPATCH_ITEMS (count, payload and result VAs patched, the child
 * capacity baked in).  The reader validates everything before anyone
 * looks inside, since images come from files.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

/* -------------------------------------------------------------- bytes --- */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void align8(struct buf *b)
{
	static const uint8_t zero[8];

	put(b, zero, (8 - b->len % 8) % 8);
}

/* ------------------------------------------------------------ builder --- */

void image_init(struct image_builder *b, unsigned width, unsigned height)
{
	memset(b, 0, sizeof(*b));
	b->width = width;
	b->height = height;
}

static void host_free(struct host_image *h)
{
	for (int i = 0; i < h->num_funcs; i++)
		free(h->names[i]);
	free(h->names);
	free(h->funcs);
	free(h->insns);
	free(h->consts);
	free(h->list);
}

void image_free(struct image_builder *b)
{
	host_free(&b->host);
	for (int i = 0; i < b->num; i++) {
		free(b->threads[i].name);
		free(b->threads[i].config);
	}
	free(b->threads);
	memset(b, 0, sizeof(*b));
}

void image_add_thread(struct image_builder *b, const struct ir_func *f,
		      const struct graph *g, const struct placement *p)
{
	struct emit_thread *t;

	if (b->num == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 8;
		b->threads = xrealloc(b->threads, b->cap * sizeof(*t));
	}
	t = &b->threads[b->num++];
	memset(t, 0, sizeof(*t));
	t->name = strdup(f->name);
	if (!t->name)
		abort();
	t->config_size = place_config_size(p);
	t->config = xrealloc(NULL, t->config_size);
	place_config_write(p, t->config);
	t->desc.domain = f->dom_kind;
	t->desc.rank = f->dom_kind == LOOM_DOMAIN_DENSE ? f->num_ivs : 0;
	t->desc.num_args = f->num_inputs;
	t->desc.work_item_arg = f->dom_kind == LOOM_DOMAIN_DYNAMIC_WORK ?
		f->work_item_arg : LOOM_IMAGE_NO_WORK_ARG;
	for (int i = 0; i < f->num_inputs; i++)
		t->desc.arg_types[i] = ir_type_arg_type(f->body.args[i].type);
	t->desc.child_capacity = f->dom_kind == LOOM_DOMAIN_DYNAMIC_WORK ?
		g->child_capacity : 0;
}

static void patch(struct buf *patches, size_t at, unsigned kind,
		  unsigned index)
{
	struct loom_image_patch p = { .offset = at, .kind = kind,
				      .index = index };

	put(patches, &p, sizeof(p));
}

/* The launch packets of @t into @tpl, their holes into @patches. */
static void template(const struct emit_thread *t, struct buf *tpl,
		     struct buf *patches)
{
	size_t base = tpl->len;
	const struct loom_image_thread *d = &t->desc;

	put32(tpl, LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	put32(tpl, t->config_size);
	patch(patches, tpl->len - base, LOOM_PATCH_CONFIG_VA, 0);
	put64(tpl, 0);
	if (d->num_args) {
		put32(tpl, LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS,
					   2 + 2 * d->num_args));
		put32(tpl, d->num_args);
		for (unsigned k = 0; k < d->num_args; k++) {
			patch(patches, tpl->len - base, LOOM_PATCH_OPERAND, k);
			put64(tpl, 0);
		}
	}
	if (d->domain == LOOM_DOMAIN_DENSE) {
		put32(tpl, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE,
					   2 + 2 * d->rank));
		put32(tpl, d->rank);
		for (unsigned k = 0; k < d->rank; k++) {
			patch(patches, tpl->len - base, LOOM_PATCH_EXTENT, k);
			put64(tpl, 0);
		}
		return;
	}
	put32(tpl, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8));
	patch(patches, tpl->len - base, LOOM_PATCH_ITEM_COUNT, 0);
	put32(tpl, 0);
	patch(patches, tpl->len - base, LOOM_PATCH_PAYLOAD_VA, 0);
	put64(tpl, 0);
	patch(patches, tpl->len - base, LOOM_PATCH_RESULT_VA, 0);
	put64(tpl, 0);
	put32(tpl, d->child_capacity);
	put32(tpl, 0);
}

static const char *const sec_names[SEC_COUNT] = {
	LOOM_IMAGE_SECTION_INFO, LOOM_IMAGE_SECTION_THREADS,
	LOOM_IMAGE_SECTION_CONFIGS, LOOM_IMAGE_SECTION_TEMPLATES,
	LOOM_IMAGE_SECTION_PATCHES, LOOM_IMAGE_SECTION_STRTAB,
	LOOM_IMAGE_SECTION_HOST,
};

/* .loom.host: header, functions, instructions, constants, lists. */
static void host_contents(const struct host_image *h, struct buf *host,
			  struct buf *strtab)
{
	struct loom_host_header hdr = {
		.magic = LOOM_HOST_MAGIC, .version = LOOM_HOST_VERSION,
		.num_funcs = h->num_funcs, .num_insns = h->num_insns,
		.num_consts = h->num_consts, .num_list = h->num_list,
	};

	put(host, &hdr, sizeof(hdr));
	for (int i = 0; i < h->num_funcs; i++) {
		struct loom_host_func f = h->funcs[i];

		f.name = strtab->len;
		put(strtab, h->names[i], strlen(h->names[i]) + 1);
		put(host, &f, sizeof(f));
	}
	put(host, h->insns, h->num_insns * sizeof(*h->insns));
	put(host, h->consts, h->num_consts * sizeof(*h->consts));
	put(host, h->list, h->num_list * sizeof(*h->list));
}

/* The sections' contents, in enum image_sec order. */
static void contents(const struct image_builder *b, struct buf *sec)
{
	struct loom_image_info info = {
		.magic = LOOM_IMAGE_MAGIC, .version = LOOM_IMAGE_VERSION,
		.num_threads = b->num, .fabric_width = b->width,
		.fabric_height = b->height,
	};

	put(&sec[SEC_INFO], &info, sizeof(info));
	put(&sec[SEC_STRTAB], "", 1);
	for (int i = 0; i < b->num; i++) {
		const struct emit_thread *t = &b->threads[i];
		struct loom_image_thread d = t->desc;
		size_t first = sec[SEC_PATCHES].len / sizeof(struct loom_image_patch);

		d.name = sec[SEC_STRTAB].len;
		put(&sec[SEC_STRTAB], t->name, strlen(t->name) + 1);
		align8(&sec[SEC_CONFIGS]);
		d.config_offset = sec[SEC_CONFIGS].len;
		d.config_size = t->config_size;
		put(&sec[SEC_CONFIGS], t->config, t->config_size);
		align8(&sec[SEC_TEMPLATES]);
		d.template_offset = sec[SEC_TEMPLATES].len;
		template(t, &sec[SEC_TEMPLATES], &sec[SEC_PATCHES]);
		d.template_size = sec[SEC_TEMPLATES].len - d.template_offset;
		d.patch_first = first;
		d.num_patches = sec[SEC_PATCHES].len /
				sizeof(struct loom_image_patch) - first;
		put(&sec[SEC_THREADS], &d, sizeof(d));
	}
	if (b->host.num_funcs)
		host_contents(&b->host, &sec[SEC_HOST], &sec[SEC_STRTAB]);
}

static void shdr(struct buf *out, uint32_t name, uint32_t type,
		 uint64_t off, uint64_t size)
{
	Elf64_Shdr sh = {
		.sh_name = name, .sh_type = type, .sh_offset = off,
		.sh_size = size, .sh_addralign = type ? 8 : 0,
	};

	put(out, &sh, sizeof(sh));
}

void image_write(const struct image_builder *b, void **data, size_t *size)
{
	struct buf sec[SEC_COUNT] = { 0 }, shstr = { 0 }, out = { 0 };
	uint64_t off[SEC_COUNT];
	uint32_t name[SEC_COUNT + 1];
	Elf64_Ehdr eh = { 0 };
	uint64_t shoff, shstr_off;
	int nsec;

	contents(b, sec);
	nsec = sec[SEC_HOST].len ? SEC_COUNT : SEC_HOST;	/* .loom.host last */
	put(&shstr, "", 1);
	for (int s = 0; s <= nsec; s++) {
		const char *n = s < nsec ? sec_names[s] : ".shstrtab";

		name[s] = shstr.len;
		put(&shstr, n, strlen(n) + 1);
	}
	put(&out, &eh, sizeof(eh));	/* filled below */
	for (int s = 0; s < nsec; s++) {
		align8(&out);
		off[s] = out.len;
		put(&out, sec[s].p, sec[s].len);
	}
	shstr_off = out.len;
	put(&out, shstr.p, shstr.len);
	align8(&out);
	shoff = out.len;
	shdr(&out, 0, SHT_NULL, 0, 0);
	for (int s = 0; s < nsec; s++)
		shdr(&out, name[s], s == SEC_STRTAB ? SHT_STRTAB : SHT_PROGBITS,
		     off[s], sec[s].len);
	shdr(&out, name[nsec], SHT_STRTAB, shstr_off, shstr.len);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_NONE;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = nsec + 2;
	eh.e_shstrndx = nsec + 1;
	eh.e_shoff = shoff;
	memcpy(out.p, &eh, sizeof(eh));
	for (int s = 0; s < SEC_COUNT; s++)
		free(sec[s].p);
	free(shstr.p);
	*data = out.p;
	*size = out.len;
}

/* ------------------------------------------------------------- reader --- */

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static bool in_range(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Finds the .loom.* sections through the section headers. */
static int sections(struct image_view *v, const Elf64_Ehdr *eh, char *err,
		    size_t errlen)
{
	Elf64_Shdr names, sh;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum ||
	    !in_range(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(sh), v->size))
		FAIL("bad section header table");
	memcpy(&names, v->data + eh->e_shoff + eh->e_shstrndx * sizeof(sh),
	       sizeof(sh));
	if (!in_range(names.sh_offset, names.sh_size, v->size) || !names.sh_size ||
	    v->data[names.sh_offset + names.sh_size - 1])
		FAIL("bad .shstrtab");
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		memcpy(&sh, v->data + eh->e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_name >= names.sh_size)
			FAIL("section %u: bad name", i);
		if (!in_range(sh.sh_offset, sh.sh_size, v->size))
			FAIL("section %u runs past the end of the file", i);
		for (int s = 0; s < SEC_COUNT; s++)
			if (!strcmp((const char *)v->data + names.sh_offset +
				    sh.sh_name, sec_names[s])) {
				v->sec[s] = v->data + sh.sh_offset;
				v->len[s] = sh.sh_size;
			}
	}
	for (int s = 0; s < SEC_COUNT; s++)
		if (!v->sec[s] && s != SEC_HOST)
			FAIL("missing section %s", sec_names[s]);
	return 0;
}

static unsigned patch_width(unsigned kind)
{
	return kind == LOOM_PATCH_ITEM_COUNT ? 4 : 8;
}

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* The configuration is for the image's fabric and has the right size. */
static bool config_ok(const struct image_view *v,
		      const struct loom_image_thread *t)
{
	struct loom_fabric_config c;

	if (t->config_size < sizeof(c))
		return false;
	memcpy(&c, v->sec[SEC_CONFIGS] + t->config_offset, sizeof(c));
	return c.magic == LOOM_CONFIG_MAGIC && c.version == LOOM_CONFIG_VERSION &&
	       c.width == v->info.fabric_width &&
	       c.height == v->info.fabric_height &&
	       c.num_ports <= LOOM_MAX_PORTS &&
	       t->config_size == LOOM_CONFIG_SIZE((size_t)c.width * c.height,
						  c.num_ports);
}

/* Every operand and extent is patched exactly once, the config VA too. */
static bool patches_cover(const struct image_view *v,
			  const struct loom_image_thread *t)
{
	unsigned seen[LOOM_PATCH_RESULT_VA + 1] = { 0 }, ops = 0, ext = 0;

	for (unsigned k = 0; k < t->num_patches; k++) {
		struct loom_image_patch p = image_patch(v, t->patch_first + k);

		if (p.kind == LOOM_PATCH_OPERAND && p.index < t->num_args &&
		    !(ops & (1U << p.index)))
			ops |= 1U << p.index;
		else if (p.kind == LOOM_PATCH_EXTENT && p.index < t->rank &&
			 t->domain == LOOM_DOMAIN_DENSE && !(ext & (1U << p.index)))
			ext |= 1U << p.index;
		else if (p.index || (t->domain == LOOM_DOMAIN_DENSE &&
				     p.kind >= LOOM_PATCH_ITEM_COUNT))
			return false;
		seen[p.kind]++;
	}
	return seen[LOOM_PATCH_CONFIG_VA] >= 1 &&
	       ops == (1U << t->num_args) - 1 &&
	       ext == (t->domain == LOOM_DOMAIN_DENSE ? (1U << t->rank) - 1 : 0);
}

static int check_thread(const struct image_view *v, unsigned i, char *err,
			size_t errlen)
{
	struct loom_image_thread t = image_thread(v, i);
	uint64_t npatch = v->len[SEC_PATCHES] / sizeof(struct loom_image_patch);

	if (!zero(t.reserved, sizeof(t.reserved)))
		FAIL("thread %u: reserved fields are not zero", i);
	for (unsigned j = 0; j < i && t.name < v->len[SEC_STRTAB]; j++)
		if (!strcmp(image_name(v, image_thread(v, j).name),
			    image_name(v, t.name)))
			FAIL("thread %u: a second thread named @%s", i,
			     image_name(v, t.name));

	if (t.name >= v->len[SEC_STRTAB] || !v->sec[SEC_STRTAB][t.name])
		FAIL("thread %u: bad name", i);
	if ((t.domain != LOOM_DOMAIN_DENSE && t.domain != LOOM_DOMAIN_DYNAMIC_WORK) ||
	    t.rank > LOOM_MAX_RANK || t.num_args > LOOM_IMAGE_MAX_ARGS ||
	    t.child_capacity > LOOM_MAX_CHILD_CAPACITY)
		FAIL("thread %u: bad domain, rank, arguments or capacity", i);
	for (unsigned a = 0; a < LOOM_IMAGE_MAX_ARGS; a++)
		if (a < t.num_args ? t.arg_types[a] < LOOM_ARG_I32 ||
				     t.arg_types[a] > LOOM_ARG_MEMREF_I64 :
				     t.arg_types[a] != 0)
			FAIL("thread %u: bad type of argument %u", i, a);
	if (t.domain == LOOM_DOMAIN_DENSE ?
		    t.work_item_arg != LOOM_IMAGE_NO_WORK_ARG || t.child_capacity :
		    t.rank || t.work_item_arg >= t.num_args)
		FAIL("thread %u: work-item argument, rank or capacity disagree with the domain", i);
	if (!in_range(t.config_offset, t.config_size, v->len[SEC_CONFIGS]) ||
	    t.config_offset % 8 || !config_ok(v, &t))
		FAIL("thread %u: configuration outside .loom.configs or not for this fabric", i);
	if (!in_range(t.template_offset, t.template_size, v->len[SEC_TEMPLATES]) ||
	    !t.template_size || t.template_size % 4 || t.template_offset % 4)
		FAIL("thread %u: template outside .loom.templates", i);
	if (!in_range(t.patch_first, t.num_patches, npatch))
		FAIL("thread %u: patches outside .loom.patches", i);
	for (unsigned k = 0; k < t.num_patches; k++) {
		struct loom_image_patch p = image_patch(v, t.patch_first + k);

		if (p.kind < LOOM_PATCH_CONFIG_VA || p.kind > LOOM_PATCH_RESULT_VA ||
		    p.offset % 4 ||
		    !in_range(p.offset, patch_width(p.kind), t.template_size))
			FAIL("thread %u: patch %u is bad", i, k);
	}
	if (!patches_cover(v, &t))
		FAIL("thread %u: operands, extents or the configuration are not each patched once", i);
	return 0;
}

/* ------------------------------------------------------------ .loom.host --- */

static size_t host_funcs_at(void)
{
	return sizeof(struct loom_host_header);
}

static size_t host_insns_at(const struct image_view *v)
{
	return host_funcs_at() + v->host.num_funcs * sizeof(struct loom_host_func);
}

static size_t host_consts_at(const struct image_view *v)
{
	return host_insns_at(v) + v->host.num_insns * sizeof(struct loom_host_insn);
}

static size_t host_list_at(const struct image_view *v)
{
	return host_consts_at(v) + v->host.num_consts * sizeof(uint64_t);
}

struct loom_host_func image_host_func(const struct image_view *v, unsigned i)
{
	struct loom_host_func f;

	memcpy(&f, v->sec[SEC_HOST] + host_funcs_at() + i * sizeof(f), sizeof(f));
	return f;
}

struct loom_host_insn image_host_insn(const struct image_view *v, unsigned i)
{
	struct loom_host_insn x;

	memcpy(&x, v->sec[SEC_HOST] + host_insns_at(v) + i * sizeof(x), sizeof(x));
	return x;
}

uint64_t image_host_const(const struct image_view *v, unsigned i)
{
	uint64_t c;

	memcpy(&c, v->sec[SEC_HOST] + host_consts_at(v) + i * 8, 8);
	return c;
}

uint32_t image_host_list(const struct image_view *v, unsigned i)
{
	uint32_t c;

	memcpy(&c, v->sec[SEC_HOST] + host_list_at(v) + i * 4, 4);
	return c;
}

/* A launch's list: thread, then three counted register lists. */
static bool launch_ok(const struct image_view *v, uint32_t at, uint32_t regs)
{
	uint32_t n = v->host.num_list;

	if (at >= n || image_host_list(v, at) >= v->info.num_threads)
		return false;
	at++;
	for (int part = 0; part < 3; part++) {
		uint32_t k;

		if (at >= n)
			return false;
		k = image_host_list(v, at++);
		if (k > n - at)
			return false;
		for (uint32_t i = 0; i < k; i++)
			if (image_host_list(v, at + i) >= regs)
				return false;
		at += k;
	}
	return true;
}

/* Registers and references of one instruction of function @f. */
static bool insn_ok(const struct image_view *v, const struct loom_host_func *f,
		    uint32_t i)
{
	struct loom_host_insn x = image_host_insn(v, i);
	uint32_t r = f->num_regs, end = f->first + f->count;

	switch (x.op) {
	case LOOM_HOST_CONST:
		return x.dst < r && x.a < v->host.num_consts;
	case LOOM_HOST_ALU:
		return x.dst < r && x.a < r && x.b < r && x.c < r &&
		       (x.aux == LOOM_OP_MOV ||
			(x.aux >= LOOM_OP_ADD && x.aux <= LOOM_OP_SELECT));
	case LOOM_HOST_ALLOC: case LOOM_HOST_LOAD: case LOOM_HOST_STORE:
		return x.dst < r && x.a < r && x.b < r && x.c < r &&
		       (x.aux == 4 || x.aux == 8);
	case LOOM_HOST_FOR:
		return x.dst < r && x.a < r && x.b < r && x.c < r &&
		       x.d > i && x.d < end &&
		       image_host_insn(v, x.d).op == LOOM_HOST_END_FOR &&
		       image_host_insn(v, x.d).a == i;
	case LOOM_HOST_END_FOR:
		return x.a >= f->first && x.a < i &&
		       image_host_insn(v, x.a).op == LOOM_HOST_FOR &&
		       image_host_insn(v, x.a).d == i;
	case LOOM_HOST_LAUNCH:
		return x.dst < r && launch_ok(v, x.a, r);
	case LOOM_HOST_WAIT: case LOOM_HOST_PRINT:
		return x.a < r;
	case LOOM_HOST_CHECK:
		return x.a < r && x.b < r;
	case LOOM_HOST_RETURN:
		return true;
	}
	return false;
}

static int check_host(struct image_view *v, char *err, size_t errlen)
{
	if (v->len[SEC_HOST] < sizeof(v->host))
		FAIL(".loom.host is too short");
	memcpy(&v->host, v->sec[SEC_HOST], sizeof(v->host));
	if (v->host.magic != LOOM_HOST_MAGIC || v->host.version != LOOM_HOST_VERSION ||
	    v->host.reserved || v->host.num_funcs > (1U << 20) ||
	    v->host.num_insns > (1U << 24) || v->host.num_consts > (1U << 24) ||
	    v->host.num_list > (1U << 24) ||
	    host_list_at(v) + 4ULL * v->host.num_list != v->len[SEC_HOST])
		FAIL(".loom.host: bad header or size");
	for (unsigned i = 0; i < v->host.num_funcs; i++) {
		struct loom_host_func f = image_host_func(v, i);

		if (f.name >= v->len[SEC_STRTAB] || !v->sec[SEC_STRTAB][f.name] ||
		    !in_range(f.first, f.count, v->host.num_insns))
			FAIL(".loom.host: function %u is bad", i);
		for (uint32_t k = f.first; k < f.first + f.count; k++)
			if (!insn_ok(v, &f, k))
				FAIL(".loom.host: function %u, instruction %u is bad", i, k);
	}
	return 0;
}

int image_open(struct image_view *v, const void *data, size_t size,
	       char *err, size_t errlen)
{
	Elf64_Ehdr eh;

	memset(v, 0, sizeof(*v));
	v->data = data;
	v->size = size;
	if (size < sizeof(eh))
		FAIL("too short for an ELF header");
	memcpy(&eh, data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_EXEC)
		FAIL("not an ELF64 little-endian executable");
	if (sections(v, &eh, err, errlen))
		return -1;
	if (v->len[SEC_INFO] != sizeof(v->info))
		FAIL(".loom.info has the wrong size");
	memcpy(&v->info, v->sec[SEC_INFO], sizeof(v->info));
	if (v->info.magic != LOOM_IMAGE_MAGIC || v->info.version != LOOM_IMAGE_VERSION)
		FAIL("bad image magic or version");
	if (v->info.reserved0 || !zero(v->info.reserved, sizeof(v->info.reserved)) ||
	    !v->info.fabric_width || !v->info.fabric_height ||
	    v->info.fabric_width > LOOM_FABRIC_MAX_DIM ||
	    v->info.fabric_height > LOOM_FABRIC_MAX_DIM)
		FAIL("bad .loom.info fabric size or reserved fields");
	if (!v->len[SEC_STRTAB] || v->sec[SEC_STRTAB][v->len[SEC_STRTAB] - 1] ||
	    v->len[SEC_PATCHES] % sizeof(struct loom_image_patch))
		FAIL("bad .loom.strtab or .loom.patches size");
	if (v->len[SEC_THREADS] != (uint64_t)v->info.num_threads *
				   sizeof(struct loom_image_thread))
		FAIL(".loom.threads does not hold %u threads", v->info.num_threads);
	for (unsigned i = 0; i < v->info.num_threads; i++)
		if (check_thread(v, i, err, errlen))
			return -1;
	return v->sec[SEC_HOST] ? check_host(v, err, errlen) : 0;
}

struct loom_image_thread image_thread(const struct image_view *v, unsigned i)
{
	struct loom_image_thread t;

	memcpy(&t, v->sec[SEC_THREADS] + i * sizeof(t), sizeof(t));
	return t;
}

struct loom_image_patch image_patch(const struct image_view *v, unsigned i)
{
	struct loom_image_patch p;

	memcpy(&p, v->sec[SEC_PATCHES] + i * sizeof(p), sizeof(p));
	return p;
}

const char *image_name(const struct image_view *v, uint32_t offset)
{
	return (const char *)v->sec[SEC_STRTAB] + offset;
}

/* ------------------------------------------------------------- disasm --- */

static const char *const arg_names[] = {
	"?", "i32", "i64", "index", "memref<?xi32>", "memref<?xi64>",
};

static const char *const patch_names[] = {
	"?", "config_va", "operand", "extent", "item_count", "payload_va",
	"result_va",
};

static const char *const pkt_names[LOOM_PKT_OPCODE_COUNT] = {
	"NOP", "LOAD_CONFIG", "SET_OPERANDS", "DISPATCH_DENSE",
	"DISPATCH_ITEMS", "WRITE_TIMESTAMP", "WRITE_COUNTERS",
};

static void print_signature(FILE *out, const struct image_view *v,
			    const struct loom_image_thread *t)
{
	fprintf(out, "thread @%s %s", image_name(v, t->name),
		t->domain == LOOM_DOMAIN_DENSE ? "dense" : "dynamic_work");
	if (t->domain == LOOM_DOMAIN_DENSE)
		fprintf(out, " rank %u", t->rank);
	fprintf(out, " (");
	for (unsigned a = 0; a < t->num_args; a++)
		fprintf(out, "%s%s%s", a ? ", " : "",
			a == t->work_item_arg ? "item " : "",
			arg_names[t->arg_types[a]]);
	fprintf(out, ")");
	if (t->domain == LOOM_DOMAIN_DYNAMIC_WORK)
		fprintf(out, " child_capacity %u", t->child_capacity);
	fprintf(out, "\n");
}

/* Packets of the template, then its holes. */
static int print_template(FILE *out, const struct image_view *v,
			  const struct loom_image_thread *t)
{
	const uint8_t *p = v->sec[SEC_TEMPLATES] + t->template_offset;

	fprintf(out, "  template, %u bytes:\n", t->template_size);
	for (uint32_t at = 0; at < t->template_size;) {
		uint32_t h, n;

		memcpy(&h, p + at, 4);
		n = LOOM_PKT_DWORDS(h) * 4;
		if (!n || !in_range(at, n, t->template_size) ||
		    LOOM_PKT_OPCODE(h) >= LOOM_PKT_OPCODE_COUNT)
			return -1;
		fprintf(out, "    %04x  %-15s %u dwords\n", at,
			pkt_names[LOOM_PKT_OPCODE(h)], n / 4);
		at += n;
	}
	for (unsigned k = 0; k < t->num_patches; k++) {
		struct loom_image_patch pt = image_patch(v, t->patch_first + k);

		fprintf(out, "    patch %04x  %s", pt.offset, patch_names[pt.kind]);
		if (pt.kind == LOOM_PATCH_OPERAND || pt.kind == LOOM_PATCH_EXTENT)
			fprintf(out, " %u", pt.index);
		fprintf(out, "\n");
	}
	return 0;
}

static const char *const host_names[] = {
	"?", "const", "alu", "alloc", "load", "store", "for", "end_for",
	"launch", "wait", "print", "check", "return",
};

static void print_host(FILE *out, const struct image_view *v)
{
	for (unsigned i = 0; i < v->host.num_funcs; i++) {
		struct loom_host_func f = image_host_func(v, i);

		fprintf(out, "host func @%s, %u registers:\n",
			image_name(v, f.name), f.num_regs);
		for (uint32_t k = f.first; k < f.first + f.count; k++) {
			struct loom_host_insn x = image_host_insn(v, k);

			fprintf(out, "    %04u  %-8s", k, host_names[x.op]);
			if (x.op == LOOM_HOST_CONST)
				fprintf(out, " r%u = %lld", x.dst,
					(long long)image_host_const(v, x.a));
			else if (x.op == LOOM_HOST_ALU)
				fprintf(out, " r%u = %s.%s r%u, r%u, r%u", x.dst,
					loom_op_name(x.aux),
					x.type == LOOM_TYPE_I32 ? "i32" : "i64",
					x.a, x.b, x.c);
			else if (x.op == LOOM_HOST_LAUNCH)
				fprintf(out, " r%u = @%s", x.dst, image_name(v,
					image_thread(v, image_host_list(v, x.a)).name));
			else if (x.op != LOOM_HOST_RETURN)
				fprintf(out, " r%u, r%u, r%u, r%u, %u (%u)", x.dst,
					x.a, x.b, x.c, x.d, x.aux);
			fprintf(out, "\n");
		}
	}
}

int image_disasm(FILE *out, const void *data, size_t size)
{
	struct image_view v;
	char err[160];

	if (image_open(&v, data, size, err, sizeof(err))) {
		fprintf(stderr, "loomc: error: invalid image: %s\n", err);
		return -1;
	}
	fprintf(out, "image: %u thread%s, fabric %ux%u\n", v.info.num_threads,
		v.info.num_threads == 1 ? "" : "s", v.info.fabric_width,
		v.info.fabric_height);
	for (unsigned i = 0; i < v.info.num_threads; i++) {
		struct loom_image_thread t = image_thread(&v, i);

		print_signature(out, &v, &t);
		if (print_config(out, v.sec[SEC_CONFIGS] + t.config_offset,
				 t.config_size) || print_template(out, &v, &t)) {
			fprintf(stderr, "loomc: error: invalid image: thread %u: bad configuration or template\n", i);
			return -1;
		}
	}
	if (v.sec[SEC_HOST])
		print_host(out, &v);
	return 0;
}
