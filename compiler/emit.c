// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * emit.c: compiled threads and host functions into format/'s image writer,
 * and loomc --disasm over format/'s reader.
 *
 * The format (templates, patches, layout) is format/'s alone: this file
 * only says what each thread's signature is.  The compiler's images are
 * valid by construction, so a writer error is a compiler bug: abort().
 */
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

void image_init(struct image_builder *b, unsigned width, unsigned height)
{
	memset(b, 0, sizeof(*b));
	if (loom_builder_new(width, height, &b->writer))
		abort();
}

static void host_free(struct host_image *h)
{
	for (int i = 0; i < h->num_funcs; i++)
		free(h->names[i]);
	free(h->names);
	free(h->funcs);
	free(h->insns);
	free(h->locs);
	free(h->consts);
	free(h->list);
}

void image_free(struct image_builder *b)
{
	host_free(&b->host);
	for (int i = 0; i < b->num; i++)
		free(b->threads[i].name);
	free(b->threads);
	loom_builder_free(b->writer);
	memset(b, 0, sizeof(*b));
}

/* ---------------------------------------------------------- source map --- */

static void add_source(struct loom_image_builder *w, struct loom_srcmap_entry e,
		       const struct place_src *src)
{
	if (!src || !src->loc.line)
		return;
	e.line = src->loc.line;
	e.col = src->loc.col;
	if (loom_builder_add_source(w, &e, src->name))
		abort();
}

static const struct loom_tile_config *tile_slot(const struct placement *p,
						unsigned t, unsigned k)
{
	return &p->tiles[t * p->slots + k];
}

/* The port bound to the edge link of tile (@x, @y) on side @dir, or NULL. */
static const struct place_src *port_at(const struct placement *p,
				       unsigned dir, unsigned x, unsigned y)
{
	unsigned pos = dir == LOOM_DIR_N || dir == LOOM_DIR_S ? x : y;

	for (unsigned i = 0; i < p->num_ports; i++)
		if (p->ports[i].side == dir && p->ports[i].pos == pos)
			return &p->port_src[i];
	return NULL;
}

/*
 * The source of the value that switch source @src of slot @k of tile @t
 * reads: a slot's output on the tile, else back along the links it
 * arrives on, to the PE or port it leaves.  @hops bounds the walk (a valid
 * configuration has no loop of links).
 */
static const struct place_src *route_source(const struct placement *p,
					    unsigned t, unsigned k,
					    unsigned src, unsigned hops)
{
	static const int dx[4] = { 0, 1, 0, -1 }, dy[4] = { -1, 0, 1, 0 };
	unsigned dir, opposite, ch = 0, from;
	int x = t % p->width, y = t / p->width;

	if (src == LOOM_SRC_NONE || src > LOOM_SRC_CHAN_LAST ||
	    hops > 4 * LOOM_PE_SLOTS * p->width * p->height)
		return NULL;
	if (src == LOOM_SRC_PE)
		return &p->slot_src[t * LOOM_PE_SLOTS + k];
	if (src >= LOOM_SRC_SLOT0 && src < LOOM_SRC_CHAN0)
		return &p->slot_src[t * LOOM_PE_SLOTS + src - LOOM_SRC_SLOT0];
	if (LOOM_SRC_IS_CHAN(src)) {
		dir = LOOM_SRC_CHAN_DIR(src);
		ch = LOOM_SRC_CHAN_INDEX(src);
	} else {
		dir = src - LOOM_SRC_N;
	}
	x += dx[dir];
	y += dy[dir];
	if (x < 0 || y < 0 || x >= (int)p->width || y >= (int)p->height)
		return port_at(p, dir, t % p->width, t / p->width);
	t = y * p->width + x;
	opposite = (dir + 2) % 4;
	/* with channels, channel k is set in slot k */
	if (p->channels) {
		if (ch >= p->slots)
			return NULL;
		from = tile_slot(p, t, ch)->route[LOOM_OUT_N + opposite];
		return route_source(p, t, ch, from, hops + 1);
	}
	/* else a link output is set in one slot of its tile only */
	for (unsigned j = 0; j < p->slots; j++) {
		from = tile_slot(p, t, j)->route[LOOM_OUT_N + opposite];
		if (from != LOOM_SRC_NONE)
			return route_source(p, t, j, from, hops + 1);
	}
	return NULL;
}

/* Thread @thread's definition, slots, ports and routes. */
static void add_thread_sources(struct image_builder *b, unsigned thread,
			       const struct ir_func *f,
			       const struct placement *p)
{
	struct place_src def = { .loc = f->name_loc, .name = NULL };
	unsigned tiles = p->width * p->height;

	add_source(b->writer, (struct loom_srcmap_entry){ .kind = LOOM_SRCMAP_THREAD,
						  .unit = thread }, &def);
	for (unsigned i = 0; i < p->num_ports; i++)
		add_source(b->writer, (struct loom_srcmap_entry){
				   .kind = LOOM_SRCMAP_PORT, .unit = thread,
				   .at = i }, &p->port_src[i]);
	for (unsigned t = 0; t < tiles; t++) {
		for (unsigned k = 0; k < p->slots; k++) {
			const struct loom_tile_config *tc = tile_slot(p, t, k);

			if (tc->op != LOOM_OP_NOP)
				add_source(b->writer, (struct loom_srcmap_entry){
						   .kind = LOOM_SRCMAP_SLOT,
						   .unit = thread, .at = t,
						   .slot = k },
					   &p->slot_src[t * LOOM_PE_SLOTS + k]);
			for (unsigned o = 0; o < LOOM_ROUTE_OUTS; o++)
				add_source(b->writer, (struct loom_srcmap_entry){
						   .kind = LOOM_SRCMAP_ROUTE,
						   .unit = thread, .at = t,
						   .slot = k, .out = o },
					   route_source(p, t, k, tc->route[o], 0));
		}
	}
}

/* Each host instruction's operation. */
static void add_host_sources(const struct image_builder *b)
{
	const struct host_image *h = &b->host;

	for (int i = 0; i < h->num_insns; i++) {
		struct place_src src = { .loc = h->locs[i] };
		struct loom_srcmap_entry e = { .kind = LOOM_SRCMAP_HOST,
					       .unit = i };

		add_source(b->writer, e, &src);
	}
}

/* ------------------------------------------------------------ memrefs --- */

/* An entry of a layout: a constant, or the launch operand that carries it. */
static struct loom_layout_entry layout_entry(int64_t v, int operand)
{
	if (v != IR_DYNAMIC)
		return (struct loom_layout_entry){ LOOM_LAYOUT_STATIC, 0, v };
	return (struct loom_layout_entry){ LOOM_LAYOUT_OPERAND, operand, 0 };
}

/*
 * The .loom.memrefs record of each memref input of thread @f (image index
 * @thread): its sizes, offset and strides, each constant or the launch
 * operand the launch ABI passes it in (Documentation/compiler.rst,
 * "Dynamic memref sizes").
 */
static void add_memrefs(struct image_builder *b, unsigned thread,
			const struct ir_func *f)
{
	for (int i = 0; i < f->num_inputs; i++) {
		const struct ir_type *t = f->body.args[i].type;
		struct loom_image_memref m = { .thread = thread, .arg = i };
		int64_t strides[IR_MEMREF_MAX_RANK], offset;

		if (t->kind != IR_TYPE_MEMREF)
			continue;
		m.rank = t->rank;
		ir_memref_layout(t, strides, &offset);
		m.offset = layout_entry(offset,
					ir_func_layout_operand(f, i, ir_offset_operand(t)));
		for (int k = 0; k < t->rank; k++) {
			if (t->dims[k] != IR_DYNAMIC || t->rank >= 2)
				m.sizes[k] = layout_entry(t->dims[k],
							  ir_func_size_operand(f, i, k));
			else	/* a rank-1 memref<?xT>: its base VA alone */
				m.sizes[k].source = LOOM_LAYOUT_NOT_PASSED;
			if (t->strided)
				m.strides[k] = layout_entry(strides[k],
							    ir_func_layout_operand(f, i, ir_stride_operand(t, k)));
			else if (strides[k] == IR_DYNAMIC)
				m.strides[k].source = LOOM_LAYOUT_ROW_MAJOR;
			else
				m.strides[k] = layout_entry(strides[k], 0);
		}
		if (loom_builder_add_memref(b->writer, &m))
			abort();
	}
}

void image_add_thread(struct image_builder *b, const struct ir_func *f,
		      const struct graph *g, const struct placement *p)
{
	struct loom_image_thread sig = {
		.domain = f->dom_kind,
		.num_args = f->num_inputs + f->num_size_operands,
	};
	size_t config_size = place_config_size(p);
	void *config = xrealloc(NULL, config_size);

	if (f->dom_kind == LOOM_DOMAIN_DENSE) {
		sig.rank = f->num_ivs;
	} else {
		sig.work_item_arg = f->work_item_arg;
		sig.child_capacity = g->child_capacity;
	}
	for (int i = 0; i < f->num_inputs; i++)
		sig.arg_types[i] = ir_type_arg_type(f->body.args[i].type);
	/* the '?' sizes of rank-N memref inputs, after the inputs */
	for (int i = f->num_inputs; i < (int)sig.num_args; i++)
		sig.arg_types[i] = LOOM_ARG_INDEX;
	place_config_write(p, config);
	if (loom_builder_add_thread(b->writer, f->name, &sig, config, config_size))
		abort();
	free(config);
	add_memrefs(b, b->num, f);
	add_thread_sources(b, b->num, f, p);
	if (b->num == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 8;
		b->threads = xrealloc(b->threads, b->cap * sizeof(*b->threads));
	}
	b->threads[b->num].name = strdup(f->name);
	if (!b->threads[b->num++].name)
		abort();
}

void image_write(const struct image_builder *b, void **data, size_t *size)
{
	const struct host_image *h = &b->host;
	struct loom_host_program prog = {
		.funcs = h->funcs, .names = (const char *const *)h->names,
		.num_funcs = h->num_funcs, .insns = h->insns,
		.num_insns = h->num_insns, .consts = h->consts,
		.num_consts = h->num_consts, .list = h->list,
		.num_list = h->num_list,
	};

	if (b->strip)
		loom_builder_drop_sources(b->writer);
	else
		add_host_sources(b);
	if (loom_builder_set_host(b->writer, &prog) ||
	    loom_builder_finish(b->writer, data, size))
		abort();
}

/* ------------------------------------------------------------- disasm --- */

static const char *const arg_names[] = {
	"?", "i32", "i64", "index", "memref<?xi32>", "memref<?xi64>", "f32",
	"memref<?xf32>",
};

static const char *const patch_names[] = {
	"?", "config_va", "operand", "extent", "item_count", "payload_va",
	"result_va",
};

static const char *const pkt_names[LOOM_PKT_OPCODE_COUNT] = {
	"NOP", "LOAD_CONFIG", "SET_OPERANDS", "DISPATCH_DENSE",
	"DISPATCH_ITEMS", "WRITE_TIMESTAMP", "WRITE_COUNTERS", "RUN_WORK",
};

static void print_signature(FILE *out, const struct loom_image_view *v,
			    const struct loom_image_thread *t)
{
	fprintf(out, "thread @%s %s", loom_view_name(v, t->name),
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

static void print_layout_entry(FILE *out, const struct loom_layout_entry *e)
{
	switch (e->source) {
	case LOOM_LAYOUT_STATIC:
		fprintf(out, "%lld", (long long)e->value);
		break;
	case LOOM_LAYOUT_OPERAND:
		fprintf(out, "operand %u", e->operand);
		break;
	case LOOM_LAYOUT_NOT_PASSED:
		fprintf(out, "not passed");
		break;
	default:
		fprintf(out, "row-major");
	}
}

/* Thread @i's .loom.memrefs records: each memref argument's layout. */
static void print_memrefs(FILE *out, const struct loom_image_view *v,
			  unsigned i, const struct loom_image_thread *t)
{
	struct loom_image_memref m;

	for (unsigned a = 0; a < t->num_args; a++) {
		if (!loom_view_memref(v, i, a, &m))
			continue;
		fprintf(out, "  memref argument %u: rank %u, sizes [", a, m.rank);
		for (unsigned k = 0; k < m.rank; k++) {
			fprintf(out, "%s", k ? ", " : "");
			print_layout_entry(out, &m.sizes[k]);
		}
		fprintf(out, "], strides [");
		for (unsigned k = 0; k < m.rank; k++) {
			fprintf(out, "%s", k ? ", " : "");
			print_layout_entry(out, &m.strides[k]);
		}
		fprintf(out, "], offset ");
		print_layout_entry(out, &m.offset);
		fprintf(out, "\n");
	}
}

/* Packets of the template (the reader checked them), then its holes. */
static void print_template(FILE *out, const struct loom_image_view *v,
			   const struct loom_image_thread *t)
{
	const uint8_t *p = v->sec[LOOM_SEC_TEMPLATES] + t->template_offset;

	fprintf(out, "  template, %u bytes:\n", t->template_size);
	for (uint32_t at = 0; at < t->template_size;) {
		uint32_t h, n;

		memcpy(&h, p + at, 4);
		n = LOOM_PKT_DWORDS(h) * 4;
		fprintf(out, "    %04x  %-15s %u dwords\n", at,
			pkt_names[LOOM_PKT_OPCODE(h)], n / 4);
		at += n;
	}
	for (unsigned k = 0; k < t->num_patches; k++) {
		struct loom_image_patch pt = loom_view_patch(v, t->patch_first + k);

		fprintf(out, "    patch %04x  %s", pt.offset, patch_names[pt.kind]);
		if (pt.kind == LOOM_PATCH_OPERAND || pt.kind == LOOM_PATCH_EXTENT)
			fprintf(out, " %u", pt.index);
		fprintf(out, "\n");
	}
}

static const char *const host_names[] = {
	"?", "const", "alu", "alloc", "load", "store", "for", "end_for",
	"launch", "wait", "print", "check", "return",
};

static void print_host(FILE *out, const struct loom_image_view *v)
{
	for (unsigned i = 0; i < v->host.num_funcs; i++) {
		struct loom_host_func f = loom_view_host_func(v, i);

		fprintf(out, "host func @%s, %u registers:\n",
			loom_view_name(v, f.name), f.num_regs);
		for (uint32_t k = f.first; k < f.first + f.count; k++) {
			struct loom_host_insn x = loom_view_host_insn(v, k);

			fprintf(out, "    %04u  %-8s", k, host_names[x.op]);
			if (x.op == LOOM_HOST_CONST)
				fprintf(out, " r%u = %lld", x.dst,
					(long long)loom_view_host_const(v, x.a));
			else if (x.op == LOOM_HOST_ALU)
				fprintf(out, " r%u = %s.%s r%u, r%u, r%u", x.dst,
					loom_op_name(x.aux),
					loom_op_f32_only(x.aux) ? "f32" :
					x.type == LOOM_TYPE_I32 ? "i32" : "i64",
					x.a, x.b, x.c);
			else if (x.op == LOOM_HOST_LAUNCH)
				fprintf(out, " r%u = @%s", x.dst, loom_view_name(v,
					loom_view_thread(v, loom_view_host_list(v, x.a)).name));
			else if (x.op != LOOM_HOST_RETURN)
				fprintf(out, " r%u, r%u, r%u, r%u, %u (%u)", x.dst,
					x.a, x.b, x.c, x.d, x.aux);
			fprintf(out, "\n");
		}
	}
}

/* Does @data start like loom source text (a comment or a top-level op)? */
static bool looks_like_source(const char *data, size_t size)
{
	static const char *const starts[] = { "//", "dataflow.thread", "func.func" };
	size_t i = 0;

	while (i < size && (data[i] == ' ' || data[i] == '\t' ||
			    data[i] == '\n' || data[i] == '\r'))
		i++;
	for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++)
		if (size - i >= strlen(starts[k]) &&
		    !memcmp(data + i, starts[k], strlen(starts[k])))
			return true;
	return false;
}

int image_disasm(FILE *out, const char *name, const void *data, size_t size)
{
	struct loom_image_view v;
	char err[160];

	if (size < 4 || memcmp(data, "\177ELF", 4)) {
		fprintf(stderr, "loomc: error: %s: not a program image (no ELF header)%s\n",
			name, looks_like_source(data, size) ?
			"; it looks like loom source: compile it with loomc first" : "");
		return -1;
	}
	if (loom_view_open(&v, data, size, err, sizeof(err)) ||
	    (v.sec[LOOM_SEC_HOST] && loom_view_check_host(&v, err, sizeof(err)))) {
		fprintf(stderr, "loomc: error: %s: invalid program image: %s\n",
			name, err);
		return -1;
	}
	fprintf(out, "image: %u thread%s, fabric %ux%u\n", v.info.num_threads,
		v.info.num_threads == 1 ? "" : "s", v.info.fabric_width,
		v.info.fabric_height);
	for (unsigned i = 0; i < v.info.num_threads; i++) {
		struct loom_image_thread t = loom_view_thread(&v, i);

		print_signature(out, &v, &t);
		print_memrefs(out, &v, i, &t);
		if (print_config(out, v.sec[LOOM_SEC_CONFIGS] + t.config_offset,
				 t.config_size)) {
			fprintf(stderr, "loomc: error: %s: invalid program image: thread %u: bad configuration\n",
				name, i);
			return -1;
		}
		print_template(out, &v, &t);
	}
	if (v.sec[LOOM_SEC_HOST])
		print_host(out, &v);
	if (v.sec[LOOM_SEC_SRCMAP]) {
		struct loom_srcmap_header h;

		memcpy(&h, v.sec[LOOM_SEC_SRCMAP], sizeof(h));
		fprintf(out, "source map: %s, %u entries\n",
			(const char *)v.sec[LOOM_SEC_SRCMAP] + v.len[LOOM_SEC_SRCMAP] -
			h.strings_size + h.file, h.num_entries);
	}
	return 0;
}
