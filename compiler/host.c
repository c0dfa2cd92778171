// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * host.c: host functions to a register machine.
 *
 * Every SSA value gets a register (a cast that changes nothing shares its
 * operand's).  Constants are loaded where the verifier folded them, so
 * their register is set wherever it can be used.  scf.for becomes a
 * FOR ... END_FOR pair; its iter_args live in registers copied at entry
 * and at each yield (through temporaries: a yield may swap them).
 * scf.if becomes FOR loops that run once or not at all (the host program
 * has no jumps); each branch's yield copies into the result registers.
 * func.call is inlined: the callee's body is compiled in place, its
 * arguments bound to the operands' registers and aliased to the operands
 * (origin()), so that an allocation's sizes and a view's layout reach
 * it; a callee inlined twice reuses its values' registers.
 * Arithmetic uses the PE operations' semantics (enum loom_op), so the host
 * and the fabric agree on every value.
 */
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "lower.h"

struct hv {
	const struct ir_value *v;
	uint32_t reg;
};

struct host_view;

struct hc {
	struct diag *d;
	struct image_builder *img;
	struct host_image *h;
	struct hv *map;
	int n, cap;
	uint32_t regs;
	unsigned errors;
	struct loom_loc loc;	/* the operation being compiled */
	struct host_view *views;	/* the views compiled so far */
	int num_views, cap_views;
	struct alias *aliases;		/* inlined callees' arguments */
	int num_aliases, cap_aliases;
};

/* An inlined callee's argument and the caller's operand it stands for. */
struct alias {
	const struct ir_value *arg, *operand;
};

/*
 * The value @m stands for: itself, or for an inlined callee's argument the
 * caller's operand (through every level of inlining); the newest binding
 * first, as a callee inlined twice binds its arguments twice.
 */
static const struct ir_value *origin(const struct hc *c,
				     const struct ir_value *m)
{
	for (int i = c->num_aliases - 1; i >= 0; i--)
		if (c->aliases[i].arg == m) {
			m = c->aliases[i].operand;
			i = c->num_aliases;
		}
	return m;
}

static void *grow(void *p, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return p;
	*cap = need * 2 + 16;
	p = realloc(p, *cap * elem);
	if (!p)
		abort();
	return p;
}

static uint32_t new_reg(struct hc *c)
{
	return c->regs++;
}

static void bind(struct hc *c, const struct ir_value *v, uint32_t reg)
{
	c->map = grow(c->map, &c->cap, c->n + 1, sizeof(*c->map));
	c->map[c->n++] = (struct hv){ v, reg };
}

static uint32_t reg(struct hc *c, const struct ir_value *v)
{
	for (int i = c->n - 1; i >= 0; i--)
		if (c->map[i].v == v)
			return c->map[i].reg;
	bind(c, v, new_reg(c));
	return c->regs - 1;
}

static uint32_t emit(struct hc *c, struct loom_host_insn x)
{
	struct host_image *h = c->h;

	h->insns = grow(h->insns, &h->cap_insns, h->num_insns + 1,
			sizeof(*h->insns));
	h->locs = grow(h->locs, &h->cap_locs, h->num_insns + 1,
		       sizeof(*h->locs));
	h->insns[h->num_insns] = x;
	h->locs[h->num_insns] = c->loc;
	return h->num_insns++;
}

static uint32_t konst(struct hc *c, uint32_t dst, int64_t v)
{
	struct host_image *h = c->h;

	h->consts = grow(h->consts, &h->cap_consts, h->num_consts + 1, 8);
	h->consts[h->num_consts] = (uint64_t)v;
	emit(c, (struct loom_host_insn){ .op = LOOM_HOST_CONST, .dst = dst,
					 .a = h->num_consts++ });
	return dst;
}

static void list(struct hc *c, uint32_t v)
{
	struct host_image *h = c->h;

	h->list = grow(h->list, &h->cap_list, h->num_list + 1, 4);
	h->list[h->num_list++] = v;
}

static uint32_t alu(struct hc *c, unsigned op, unsigned type, uint32_t dst,
		    uint32_t a, uint32_t b, uint32_t cc)
{
	emit(c, (struct loom_host_insn){ .op = LOOM_HOST_ALU, .type = type,
					 .aux = op, .dst = dst, .a = a, .b = b,
					 .c = cc });
	return dst;
}

static void error(struct hc *c, const struct ir_op *op, const char *why)
{
	diag_error(c->d, op->loc, "cannot compile %s: %s",
		   ir_opinfo[op->code].name, why);
	c->errors++;
}

/* ------------------------------------------------------- arithmetic --- */

/* The host program as an alu_builder: one ALU instruction a register. */
static int hc_builder_op(void *ctx, unsigned op, unsigned type, int a, int b)
{
	struct hc *c = ctx;

	return (int)alu(c, op, type, new_reg(c), (uint32_t)a, (uint32_t)b, 0);
}

static int hc_builder_op_imm(void *ctx, unsigned op, unsigned type, int a,
			     int64_t imm)
{
	struct hc *c = ctx;

	return (int)alu(c, op, type, new_reg(c), (uint32_t)a,
			konst(c, new_reg(c), imm), 0);
}

static int hc_builder_select(void *ctx, unsigned type, int cond, int a,
			     int b)
{
	struct hc *c = ctx;

	return (int)alu(c, LOOM_OP_SELECT, type, new_reg(c), (uint32_t)cond,
			(uint32_t)a, (uint32_t)b);
}

static int hc_builder_select_imm(void *ctx, unsigned type, int cond,
				 int64_t imm, int b)
{
	struct hc *c = ctx;

	return (int)alu(c, LOOM_OP_SELECT, type, new_reg(c), (uint32_t)cond,
			konst(c, new_reg(c), imm), (uint32_t)b);
}

#define HC_BUILDER(c) { (c), hc_builder_op, hc_builder_op_imm, \
			hc_builder_select, hc_builder_select_imm }

/* affine.apply, min, max not folded: the map's arithmetic on the ALU. */
static void affine(struct hc *c, struct ir_op *op)
{
	struct alu_builder ab = HC_BUILDER(c);
	int vals[64], n;

	if (op->num_operands > 64)
		return error(c, op, "an affine map of more than 64 operands");
	for (int i = 0; i < op->num_operands; i++)
		if (!op->operands[i].value->is_const)
			vals[i] = (int)reg(c, op->operands[i].value);
	n = build_affine_op(&ab, op, vals);
	if (n < 0)
		return error(c, op, "an affine map whose value is constant");
	bind(c, &op->results[0], (uint32_t)n);
}

static void binary(struct hc *c, struct ir_op *op)
{
	enum ir_alu a = ir_opinfo[op->code].alu;
	unsigned type = lower_dev_type(op->results[0].type);
	uint32_t x = reg(c, op->operands[0].value);
	uint32_t y = reg(c, op->operands[1].value);
	uint32_t dst;

	if (a == ALU_FLOORDIVS || a == ALU_CEILDIVS) {
		struct alu_builder ab = HC_BUILDER(c);

		bind(c, &op->results[0],
		     (uint32_t)build_floor_ceil_div(&ab, type,
						    a == ALU_CEILDIVS, (int)x,
						    (int)y));
		return;
	}
	dst = reg(c, &op->results[0]);
	if (a >= ALU_MAXS && a <= ALU_MINU) {
		uint32_t t = alu(c, lower_alu_op(a), type, new_reg(c), x, y, 0);

		alu(c, LOOM_OP_SELECT, type, dst, t, x, y);
		return;
	}
	alu(c, lower_alu_op(a), type, dst, x, y, 0);
}

/* negf, fma: one ALU instruction, as on a PE. */
static void nary(struct hc *c, struct ir_op *op)
{
	uint32_t r[3] = { 0, 0, 0 };

	for (int i = 0; i < op->num_operands; i++)
		r[i] = reg(c, op->operands[i].value);
	alu(c, lower_alu_op(ir_opinfo[op->code].alu), LOOM_TYPE_I32,
	    reg(c, &op->results[0]), r[0], r[1], r[2]);
}

/* int <-> f32: the PE conversion, typed by the integer side. */
static bool float_cast(struct hc *c, struct ir_op *op, uint32_t x)
{
	enum ir_alu a = ir_opinfo[op->code].alu;
	const struct ir_type *int_side;

	if (a == ALU_BITCAST) {
		bind(c, &op->results[0], x);	/* the same bits */
		return true;
	}
	if (a < ALU_SITOF || a > ALU_FTOUI)
		return false;
	int_side = a == ALU_SITOF || a == ALU_UITOF ? op->type : op->to_type;
	alu(c, lower_alu_op(a), lower_dev_type(int_side),
	    reg(c, &op->results[0]), x, 0, 0);
	return true;
}

/* The fabric lowering's cast rules (Documentation/compiler.rst). */
static void cast(struct hc *c, struct ir_op *op)
{
	unsigned from = ir_type_width(op->type), to = ir_type_width(op->to_type);
	bool sext = ir_opinfo[op->code].alu == ALU_CASTS;
	uint32_t x = reg(c, op->operands[0].value);
	int64_t mask = 0;

	if (float_cast(c, op, x))
		return;
	if (to > from && from == 1 && sext)
		mask = -1;
	else if (to > from && from == 32 && !sext)
		mask = 0xffffffffLL;
	else if (to < from && to == 1)
		mask = 1;
	if (mask) {
		uint32_t m = konst(c, new_reg(c), mask);

		alu(c, mask == -1 ? LOOM_OP_MUL : LOOM_OP_AND, LOOM_TYPE_I64,
		    reg(c, &op->results[0]), x, m, 0);
	} else if (to < from && to == 32) {
		alu(c, LOOM_OP_MOV, LOOM_TYPE_I32, reg(c, &op->results[0]), x, 0, 0);
	} else {
		bind(c, &op->results[0], x);
	}
}

/* ----------------------------------------------------------- memory --- */

static unsigned elem_size(const struct ir_type *memref)
{
	return ir_type_size(memref->elem);
}

/*
 * The register holding size @k of memref @m: a constant, or a '?' size:
 * the operand of the memref.alloc that made @m (the only memrefs with
 * dynamic sizes a host function can index; the verifier sees to it for
 * launches and memref.dim, this for loads and stores).
 */
static uint32_t size_reg(struct hc *c, const struct ir_op *op,
			 const struct ir_value *m, int k)
{
	const struct ir_type *t = m->type;

	m = origin(c, m);
	if (t->dims[k] != IR_DYNAMIC)
		return konst(c, new_reg(c), t->dims[k]);
	if (!m->def || m->def->code != IR_OP_MEMREF_ALLOC) {
		error(c, op, "an access to a memref with dynamic sizes that is not a memref.alloc of this function");
		return 0;
	}
	return reg(c, m->def->operands[ir_size_operand_of(t, k)].value);
}

/* Elements: the static sizes' product times each '?' size. */
static void alloc(struct hc *c, struct ir_op *op)
{
	const struct ir_type *t = op->type;
	int64_t fixed = 1;
	uint32_t n = 0;

	for (int k = 0; k < t->rank; k++)
		fixed *= t->dims[k] == IR_DYNAMIC ? 1 : t->dims[k];
	for (int j = 0; j < op->num_operands; j++) {
		uint32_t size = reg(c, op->operands[j].value);

		n = j ? alu(c, LOOM_OP_MUL, LOOM_TYPE_I64, new_reg(c), n, size, 0) :
			size;
	}
	if (!op->num_operands)
		n = konst(c, new_reg(c), fixed);
	else if (fixed != 1)
		n = alu(c, LOOM_OP_MUL, LOOM_TYPE_I64, new_reg(c), n,
			konst(c, new_reg(c), fixed), 0);
	emit(c, (struct loom_host_insn){ .op = LOOM_HOST_ALLOC,
					 .aux = elem_size(t),
					 .dst = reg(c, &op->results[0]), .a = n });
}

/*
 * A view in a host function: the register of its root allocation (a load
 * or store names the allocation and an element number), its offset from
 * it and its strides, in elements, each in a register.
 */
struct host_view {
	const struct ir_value *m;
	uint32_t offset;
	uint32_t strides[IR_MEMREF_MAX_RANK];
};

/* The newest view of @m: a callee inlined twice makes its views again. */
static const struct host_view *find_view(const struct hc *c,
					 const struct ir_value *m)
{
	m = origin(c, m);
	for (int i = c->num_views - 1; i >= 0; i--)
		if (c->views[i].m == m)
			return &c->views[i];
	return NULL;
}

/* A view entry's register: its value's, or its literal loaded. */
static uint32_t view_entry_reg(struct hc *c, const struct ir_op *op,
			       enum ir_view_list which, int k)
{
	const struct ir_value *x;
	int64_t v;

	if (op->view->operand[which][k] >= 0)
		return reg(c, op->operands[op->view->operand[which][k]].value);
	ir_view_entry(op, which, k, &v, &x);
	return konst(c, new_reg(c), v);
}

/*
 * Size @k of @m in a register: static, its memref.alloc's operand, or
 * what the view operation that made it was given (cast: its source's,
 * collapse_shape: the product of its group's).
 */
static uint32_t dim_reg(struct hc *c, const struct ir_op *op,
			const struct ir_value *m, int k)
{
	const struct ir_op *def = origin(c, m)->def;
	uint32_t r;
	int j;

	if (m->type->dims[k] != IR_DYNAMIC || !def || !def->view)
		return size_reg(c, op, m, k);
	switch (def->code) {
	case IR_OP_MEMREF_CAST:
		return dim_reg(c, op, def->operands[0].value, k);
	case IR_OP_MEMREF_COLLAPSE_SHAPE:
		r = konst(c, new_reg(c), 1);
		for (j = 0; j < def->type->rank; j++)
			if (def->view->group[j] == k)
				r = alu(c, LOOM_OP_MUL, LOOM_TYPE_I64, new_reg(c), r,
					dim_reg(c, op, def->operands[0].value, j),
					0);
		return r;
	case IR_OP_MEMREF_SUBVIEW:
		return view_entry_reg(c, def, IR_VIEW_SIZES, def->view->kept[k]);
	default:
		return view_entry_reg(c, def, IR_VIEW_SIZES, k);
	}
}

static uint32_t mul(struct hc *c, uint32_t a, uint32_t b)
{
	return alu(c, LOOM_OP_MUL, LOOM_TYPE_I64, new_reg(c), a, b, 0);
}

/*
 * memref.subview: offset = source offset + sum of offset k * source
 * stride k, stride k = source stride k * stride k.
 */
static void subview_layout(struct hc *c, struct ir_op *op, uint32_t *offset,
			   uint32_t *strides)
{
	uint32_t st[IR_MEMREF_MAX_RANK];

	for (int k = 0; k < op->type->rank; k++) {
		uint32_t o = view_entry_reg(c, op, IR_VIEW_OFFSETS, k);

		*offset = alu(c, LOOM_OP_ADD, LOOM_TYPE_I64, new_reg(c),
			      *offset, mul(c, o, strides[k]), 0);
		st[k] = mul(c, strides[k],
			    view_entry_reg(c, op, IR_VIEW_STRIDES, k));
	}
	for (int i = 0; i < op->view->num_kept; i++)
		strides[i] = st[op->view->kept[i]];
}

/* expand_shape and collapse_shape, as lower.c's reshape_layout(). */
static void reshape_layout(struct hc *c, struct ir_op *op, uint32_t *strides)
{
	const struct ir_view *w = op->view;
	int rank = op->to_type->rank;
	uint32_t st[IR_MEMREF_MAX_RANK];

	if (op->code == IR_OP_MEMREF_COLLAPSE_SHAPE) {
		for (int j = 0; j < op->type->rank; j++)
			st[w->group[j]] = strides[j];
	} else {
		for (int k = rank - 1; k >= 0; k--)
			st[k] = k == rank - 1 || w->group[k + 1] != w->group[k] ?
				strides[w->group[k]] :
				mul(c, st[k + 1],
				    dim_reg(c, op, &op->results[0], k + 1));
	}
	memcpy(strides, st, rank * sizeof(*st));
}

/*
 * A view operation: its offset and strides from its source's (an
 * allocation's are row-major, offset 0); the result names the allocation.
 */
static void view_op(struct hc *c, struct ir_op *op)
{
	const struct ir_value *src = origin(c, op->operands[0].value);
	const struct host_view *sv = find_view(c, src);
	uint32_t strides[IR_MEMREF_MAX_RANK], offset;
	struct host_view *v;
	int rank = src->type->rank;

	if (!sv && (!src->def || src->def->code != IR_OP_MEMREF_ALLOC))
		return error(c, op, "a view of a memref that is not a memref.alloc of this function");
	if (sv) {
		offset = sv->offset;
		memcpy(strides, sv->strides, sizeof(strides));
	} else {
		offset = konst(c, new_reg(c), 0);
		strides[rank - 1] = konst(c, new_reg(c), 1);
		for (int k = rank - 2; k >= 0; k--)
			strides[k] = mul(c, strides[k + 1],
					 size_reg(c, op, src, k + 1));
	}
	switch (op->code) {
	case IR_OP_MEMREF_SUBVIEW:
		subview_layout(c, op, &offset, strides);
		break;
	case IR_OP_MEMREF_CAST:
		break;
	case IR_OP_MEMREF_REINTERPRET_CAST:
		offset = view_entry_reg(c, op, IR_VIEW_OFFSETS, 0);
		for (int k = 0; k < op->to_type->rank; k++)
			strides[k] = view_entry_reg(c, op, IR_VIEW_STRIDES, k);
		break;
	default:
		reshape_layout(c, op, strides);
		break;
	}
	c->views = grow(c->views, &c->cap_views, c->num_views + 1,
			sizeof(*c->views));
	v = &c->views[c->num_views++];
	v->m = &op->results[0];
	v->offset = offset;
	memcpy(v->strides, strides, sizeof(strides));
	bind(c, &op->results[0], reg(c, src));
}

/*
 * memref.dim of a dynamic size (a static one is folded): the verifier
 * allows it only where dim_reg() knows it.
 */
static void dim(struct hc *c, struct ir_op *op)
{
	bind(c, &op->results[0],
	     dim_reg(c, op, op->operands[0].value,
		     (int)op->operands[1].value->const_val));
}

/*
 * The row-major element number of the indices @uses of @op's memref @m:
 * ((i0 * d1 + i1) * d2 + i2) ...; of a view, offset + sum of index k *
 * stride k.
 */
static uint32_t linear_index(struct hc *c, const struct ir_op *op,
			     const struct ir_value *m,
			     const struct ir_use *uses)
{
	const struct host_view *v = find_view(c, m);
	uint32_t acc = reg(c, uses[0].value);

	if (v) {
		acc = v->offset;
		for (int k = 0; k < m->type->rank; k++)
			acc = alu(c, LOOM_OP_ADD, LOOM_TYPE_I64, new_reg(c), acc,
				  alu(c, LOOM_OP_MUL, LOOM_TYPE_I64,
				      new_reg(c), reg(c, uses[k].value),
				      v->strides[k], 0),
				  0);
		return acc;
	}

	for (int k = 1; k < m->type->rank; k++) {
		acc = alu(c, LOOM_OP_MUL, LOOM_TYPE_I64, new_reg(c), acc,
			  size_reg(c, op, m, k), 0);
		acc = alu(c, LOOM_OP_ADD, LOOM_TYPE_I64, new_reg(c), acc,
			  reg(c, uses[k].value), 0);
	}
	return acc;
}

static void load(struct hc *c, struct ir_op *op)
{
	emit(c, (struct loom_host_insn){ .op = LOOM_HOST_LOAD,
					 .aux = elem_size(op->type),
					 .dst = reg(c, &op->results[0]),
					 .a = reg(c, op->operands[0].value),
					 .b = linear_index(c, op,
							   op->operands[0].value,
							   &op->operands[1]) });
}

static void store(struct hc *c, struct ir_op *op)
{
	emit(c, (struct loom_host_insn){ .op = LOOM_HOST_STORE,
					 .aux = elem_size(op->type),
					 .a = reg(c, op->operands[0].value),
					 .b = reg(c, op->operands[1].value),
					 .c = linear_index(c, op,
							   op->operands[1].value,
							   &op->operands[2]) });
}

/* ---------------------------------------------------------- control --- */

static void region(struct hc *c, struct ir_region *r);

static void yield_into(struct hc *c, struct ir_op *y, const uint32_t *iter)
{
	uint32_t tmp[64];

	for (int i = 0; i < y->num_operands; i++)
		tmp[i] = alu(c, LOOM_OP_MOV, LOOM_TYPE_I64, new_reg(c),
			     reg(c, y->operands[i].value), 0, 0);
	for (int i = 0; i < y->num_operands; i++)
		alu(c, LOOM_OP_MOV, LOOM_TYPE_I64, iter[i], tmp[i], 0, 0);
}

static void loop(struct hc *c, struct ir_op *op)
{
	uint32_t iter[64], head, end;

	if (op->num_iter_args > 64)
		return error(c, op, "more than 64 iter_args");
	for (int i = 0; i < op->num_iter_args; i++) {
		iter[i] = alu(c, LOOM_OP_MOV, LOOM_TYPE_I64, new_reg(c),
			      reg(c, op->operands[3 + i].value), 0, 0);
		bind(c, &op->body->args[1 + i], iter[i]);
		bind(c, &op->results[i], iter[i]);
	}
	head = emit(c, (struct loom_host_insn){
		.op = LOOM_HOST_FOR, .dst = reg(c, &op->body->args[0]),
		.a = reg(c, op->operands[0].value),
		.b = reg(c, op->operands[1].value),
		.c = reg(c, op->operands[2].value) });
	region(c, op->body);
	if (op->body->last && op->body->last->code == IR_OP_SCF_YIELD)
		yield_into(c, op->body->last, iter);
	c->loc = op->loc;	/* the body's operations set their own */
	end = emit(c, (struct loom_host_insn){ .op = LOOM_HOST_END_FOR,
					       .a = head });
	c->h->insns[head].d = end;
}

/*
 * One branch of an scf.if: the host program has loops but no jumps, so a
 * branch is a FOR from 0 while below @count (1 to run it, 0 to skip it).
 * Its scf.yield copies the values into the if's result registers @res.
 */
static void branch(struct hc *c, struct ir_op *op, struct ir_region *r,
		   uint32_t count, const uint32_t *res)
{
	uint32_t zero = konst(c, new_reg(c), 0), one = konst(c, new_reg(c), 1);
	uint32_t head, end;

	head = emit(c, (struct loom_host_insn){
		.op = LOOM_HOST_FOR, .dst = new_reg(c), .a = zero, .b = count,
		.c = one });
	region(c, r);
	if (r->last && r->last->code == IR_OP_SCF_YIELD)
		for (int i = 0; i < r->last->num_operands; i++)
			alu(c, LOOM_OP_MOV, LOOM_TYPE_I64, res[i],
			    reg(c, r->last->operands[i].value), 0, 0);
	c->loc = op->loc;	/* the branch's operations set their own */
	end = emit(c, (struct loom_host_insn){ .op = LOOM_HOST_END_FOR,
					       .a = head });
	c->h->insns[head].d = end;
}

/* scf.if: the then branch runs cond times, the else branch 1 - cond. */
static void if_op(struct hc *c, struct ir_op *op)
{
	uint32_t res[64], cond = reg(c, op->operands[0].value);

	if (op->num_results > 64)
		return error(c, op, "more than 64 results");
	for (int i = 0; i < op->num_results; i++)
		res[i] = reg(c, &op->results[i]);
	branch(c, op, op->body, cond, res);
	if (op->else_body) {
		uint32_t one = konst(c, new_reg(c), 1);

		branch(c, op, op->else_body,
		       alu(c, LOOM_OP_XOR, LOOM_TYPE_I64, new_reg(c), cond, one,
			   0),
		       res);
	}
}

static int thread_index(struct hc *c, const char *name)
{
	for (int i = 0; i < c->img->num; i++)
		if (!strcmp(c->img->threads[i].name, name))
			return i;
	return -1;
}

static int launch_size_operands(const struct ir_op *op)
{
	int n = 0;

	for (int i = 0; i < op->num_args; i++)
		n += ir_size_operands(op->operands[i].value->type);
	return n;
}

/*
 * The size operands of launch operand @m (ir_size_operands()): its '?'
 * sizes (rank 2 and above), then of a strided one its '?' offset and
 * strides, which the verifier lets only a view have.
 */
static void launch_layout(struct hc *c, const struct ir_op *op,
			  const struct ir_value *m)
{
	const struct ir_type *t = m->type;
	const struct host_view *v;

	if (!ir_size_operands(t))
		return;
	for (int k = 0; t->rank >= 2 && k < t->rank; k++)
		if (t->dims[k] == IR_DYNAMIC)
			list(c, dim_reg(c, op, m, k));
	if (!t->strided)
		return;
	v = find_view(c, m);
	if (!v)
		return error(c, op, "a strided memref that is not a view of this function");
	if (t->offset == IR_DYNAMIC)
		list(c, v->offset);
	for (int k = 0; k < t->rank; k++)
		if (t->strides[k] == IR_DYNAMIC)
			list(c, v->strides[k]);
}

static void launch(struct hc *c, struct ir_op *op)
{
	int t = thread_index(c, op->callee);
	uint32_t at = c->h->num_list;

	/*
	 * The verifier found the callee, a thread of this unit, and every
	 * thread is compiled before the host functions: it is missing only
	 * when it failed, and that error is already reported.  No second
	 * diagnostic for one mistake.
	 */
	if (t < 0) {
		c->errors++;
		return;
	}
	list(c, t);
	list(c, op->num_args + launch_size_operands(op));
	for (int i = 0; i < op->num_args; i++)
		list(c, reg(c, op->operands[i].value));
	/* then the size operands of memrefs: '?' sizes, offsets, strides */
	for (int i = 0; i < op->num_args; i++)
		launch_layout(c, op, op->operands[i].value);
	list(c, op->num_waits);
	for (int i = 0; i < op->num_waits; i++)
		list(c, reg(c, ir_launch_waits(op)[i].value));
	list(c, op->num_extents);
	for (int i = 0; i < op->num_extents; i++)
		list(c, reg(c, ir_launch_extents(op)[i].value));
	emit(c, (struct loom_host_insn){ .op = LOOM_HOST_LAUNCH,
					 .dst = reg(c, &op->results[0]), .a = at });
}

static void one(struct hc *c, struct ir_op *op, enum loom_host_op code)
{
	unsigned type = op->type ? ir_type_arg_type(op->type) : 0;

	emit(c, (struct loom_host_insn){
		.op = code, .type = type ? type : LOOM_ARG_I32,
		.a = reg(c, op->operands[0].value),
		.b = op->num_operands > 1 ? reg(c, op->operands[1].value) : 0 });
}

static void host_op(struct hc *c, struct ir_op *op);

/*
 * func.call, inlined: the callee's arguments take the operands' registers
 * and stand for the operands (origin()), then its body but its closing
 * return.  The verifier found the callee, a host function of this unit
 * that does not recurse (op->target), else reported why.
 */
static void call(struct hc *c, struct ir_op *op)
{
	struct ir_func *f = op->target;
	struct loom_loc at = op->loc;

	if (!f) {
		c->errors++;
		return;
	}
	for (int i = 0; i < op->num_args; i++) {
		const struct ir_value *arg = &f->body.args[i];

		bind(c, arg, reg(c, op->operands[i].value));
		c->aliases = grow(c->aliases, &c->cap_aliases,
				  c->num_aliases + 1, sizeof(*c->aliases));
		c->aliases[c->num_aliases++] = (struct alias){
			arg, op->operands[i].value };
	}
	for (struct ir_op *o = f->body.first; o && !c->errors; o = o->next)
		if (o->code != IR_OP_RETURN)
			host_op(c, o);
	c->loc = at;
}

static void host_op(struct hc *c, struct ir_op *op)
{
	c->loc = op->loc;
	if (op->num_results == 1 && op->results[0].is_const) {
		const struct ir_value *v = &op->results[0];

		konst(c, reg(c, v), ir_type_width(v->type) == 1 ?
			  v->const_val & 1 : v->const_val);
		return;
	}
	switch (ir_opinfo[op->code].syntax) {
	case SYN_BINARY: case SYN_INDEX_BINARY: return binary(c, op);
	case SYN_CMPI: case SYN_INDEX_CMP: case SYN_CMPF:
		alu(c, ir_opinfo[op->code].syntax == SYN_CMPF ?
			       lower_fpred_op(op->fpred) : lower_pred_op(op->pred),
		    lower_dev_type(op->operands[0].value->type),
		    reg(c, &op->results[0]), reg(c, op->operands[0].value),
		    reg(c, op->operands[1].value), 0);
		return;
	case SYN_UNARY: case SYN_TERNARY: return nary(c, op);
	case SYN_SELECT:
		alu(c, LOOM_OP_SELECT, lower_dev_type(op->results[0].type),
		    reg(c, &op->results[0]), reg(c, op->operands[0].value),
		    reg(c, op->operands[1].value), reg(c, op->operands[2].value));
		return;
	case SYN_CAST: return cast(c, op);
	case SYN_ALLOC: return alloc(c, op);
	case SYN_DIM: return dim(c, op);
	case SYN_SUBVIEW: case SYN_MEMREF_CAST: case SYN_REINTERPRET:
	case SYN_RESHAPE:
		return view_op(c, op);
	case SYN_AFFINE: return affine(c, op);
	case SYN_LOAD: return load(c, op);
	case SYN_STORE: return store(c, op);
	case SYN_FOR: return loop(c, op);
	case SYN_IF: return if_op(c, op);
	case SYN_LAUNCH: return launch(c, op);
	case SYN_CALL: return call(c, op);
	case SYN_WAIT: return one(c, op, LOOM_HOST_WAIT);
	case SYN_PRINT: return one(c, op, LOOM_HOST_PRINT);
	case SYN_CHECK: return one(c, op, LOOM_HOST_CHECK);
	case SYN_RETURN:
		emit(c, (struct loom_host_insn){ .op = LOOM_HOST_RETURN });
		return;
	case SYN_SCF_YIELD:
		return;		/* loop() and branch() copy the values */
	default:
		return error(c, op, "not supported in host functions yet");
	}
}

static void region(struct hc *c, struct ir_region *r)
{
	for (struct ir_op *op = r->first; op && !c->errors; op = op->next)
		host_op(c, op);
}

unsigned host_compile(struct diag *d, struct ir_func *f,
		      struct image_builder *img)
{
	struct hc c = { .d = d, .img = img, .h = &img->host };
	struct host_image *h = &img->host;
	struct loom_host_func hf = { .first = h->num_insns };
	uint32_t first_list = h->num_list, first_const = h->num_consts;

	for (int i = 0; i < h->num_funcs; i++)
		if (!strcmp(h->names[i], f->name)) {
			diag_error(d, f->name_loc,
				   "host function @%s is already defined in an earlier unit; an image holds one function per name",
				   f->name);
			return 1;
		}
	region(&c, &f->body);
	free(c.map);
	free(c.views);
	free(c.aliases);
	if (c.errors) {
		h->num_insns = hf.first;	/* drop what was emitted */
		h->num_list = first_list;
		h->num_consts = first_const;
		return c.errors;
	}
	hf.count = h->num_insns - hf.first;
	hf.num_regs = c.regs;
	h->funcs = grow(h->funcs, &h->cap_funcs, h->num_funcs + 1,
			sizeof(*h->funcs));
	h->names = realloc(h->names, (h->num_funcs + 1) * sizeof(*h->names));
	if (!h->names)
		abort();
	h->funcs[h->num_funcs] = hf;
	h->names[h->num_funcs] = strdup(f->name);
	if (!h->names[h->num_funcs++])
		abort();
	return 0;
}
