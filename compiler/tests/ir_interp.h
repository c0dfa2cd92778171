/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ir_interp.h: a reference interpreter of a verified dataflow.thread, the
 * tests' oracle for what the compiled thread must compute.
 *
 * It walks the IR as the language defines it (Documentation/compiler.rst),
 * one instance at a time, against host arrays standing for the memref
 * arguments: integers wrap at their type's width, signedness is per
 * operation, shifts are modulo the width, i1 true is all ones; f32
 * arithmetic, compares and conversions are format/alu.c's, the one
 * definition of the language's floating point.  What the language leaves
 * open (a division by zero or MIN / -1, an access out of bounds, a step
 * that is not positive, too many children) stops the run with a reason:
 * a program that needs it has no reference result.
 *
 * Nothing here knows how the compiler lowers a thread.
 */
#ifndef LOOMC_TESTS_IR_INTERP_H
#define LOOMC_TESTS_IR_INTERP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "loom_alu.h"

#define II_SLOTS	4096	/* values live at once: far more than a test thread's */
#define II_MAX_TRIPS	(1 << 20)

/**
 * struct ii_buf - the host array behind a memref argument
 * @data: its bytes
 * @len: its length in elements
 */
struct ii_buf {
	void *data;
	size_t len;
};

/**
 * struct ii_run - one thread and its inputs
 * @f: the thread (verified)
 * @args: per input, its launch operand (scalars: the value as the launch
 *	ABI carries it; memrefs: ignored, see @bufs)
 * @bufs: per input, the array of a memref argument
 * @children: a dynamic-work item's spawned payloads, in program order
 * @num_children: how many so far
 * @child_cap: room in @children
 * @err: why the last run stopped, when it did
 */
struct ii_run {
	struct ir_func *f;
	const uint64_t *args;
	const struct ii_buf *bufs;
	uint64_t *children;
	unsigned num_children, child_cap;
	char err[160];
	/* private: the values of the running instance */
	struct { const struct ir_value *k; int64_t v; unsigned gen; } tab[II_SLOTS];
	unsigned gen;
};

static inline int ii_fail(struct ii_run *r, const struct ir_op *op,
			  const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%u:%u: %s: ",
			 op ? op->loc.line : 0, op ? op->loc.col : 0,
			 op ? ir_opinfo[op->code].name : "thread");

	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
	return -1;
}

static inline unsigned ii_slot(const struct ir_value *v)
{
	return (unsigned)(((uintptr_t)v >> 4) * 2654435761u) % II_SLOTS;
}

static inline void ii_set(struct ii_run *r, const struct ir_value *v,
			  int64_t x)
{
	unsigned i = ii_slot(v);

	while (r->tab[i].gen == r->gen && r->tab[i].k != v)
		i = (i + 1) % II_SLOTS;
	r->tab[i].k = v;
	r->tab[i].v = x;
	r->tab[i].gen = r->gen;
}

static inline int64_t ii_get(struct ii_run *r, const struct ir_value *v)
{
	unsigned i = ii_slot(v);

	if (v->is_const)
		return v->const_val;
	while (r->tab[i].gen == r->gen) {
		if (r->tab[i].k == v)
			return r->tab[i].v;
		i = (i + 1) % II_SLOTS;
	}
	return 0;	/* a verified thread defines every value before use */
}

/* The width a value of type @t has in a register: 64 for index, 32 for f32. */
static inline unsigned ii_width(const struct ir_type *t)
{
	return t->kind == IR_TYPE_F32 ? 32 : ir_type_width(t);
}

static inline uint64_t ii_zext(int64_t v, unsigned w)
{
	return w >= 64 ? (uint64_t)v : (uint64_t)v & ((1ULL << w) - 1);
}

static inline bool ii_cmp(enum ir_pred p, int64_t a, int64_t b, unsigned w)
{
	uint64_t ua = ii_zext(a, w), ub = ii_zext(b, w);

	switch (p) {
	case IR_PRED_EQ: return a == b;
	case IR_PRED_NE: return a != b;
	case IR_PRED_SLT: return a < b;
	case IR_PRED_SLE: return a <= b;
	case IR_PRED_SGT: return a > b;
	case IR_PRED_SGE: return a >= b;
	case IR_PRED_ULT: return ua < ub;
	case IR_PRED_ULE: return ua <= ub;
	case IR_PRED_UGT: return ua > ub;
	default: return ua >= ub;
	}
}

/* An integer operation on @a and @b, both sign-extended from @w. */
static inline int ii_int(struct ii_run *r, const struct ir_op *op,
			 enum ir_alu alu, int64_t a, int64_t b, unsigned w,
			 int64_t *out)
{
	uint64_t ua = ii_zext(a, w), ub = ii_zext(b, w), x;
	int64_t min = w >= 64 ? INT64_MIN : -(int64_t)(1ULL << (w - 1));
	unsigned sh = (unsigned)(ub % w);

	switch (alu) {
	case ALU_ADD: x = (uint64_t)a + (uint64_t)b; break;
	case ALU_SUB: x = (uint64_t)a - (uint64_t)b; break;
	case ALU_MUL: x = (uint64_t)a * (uint64_t)b; break;
	case ALU_DIVS: case ALU_REMS:
		if (b == 0 || (a == min && b == -1))
			return ii_fail(r, op, "%lld by %lld is undefined",
				       (long long)a, (long long)b);
		x = (uint64_t)(alu == ALU_DIVS ? a / b : a % b);
		break;
	case ALU_FLOORDIVS: case ALU_CEILDIVS:
		if (b == 0 || (a == min && b == -1))
			return ii_fail(r, op, "%lld by %lld is undefined",
				       (long long)a, (long long)b);
		x = (uint64_t)(a / b);
		if (a % b && ((a % b < 0) != (b < 0)) == (alu == ALU_FLOORDIVS))
			x += alu == ALU_FLOORDIVS ? (uint64_t)-1 : 1;
		break;
	case ALU_DIVU: case ALU_REMU:
		if (ub == 0)
			return ii_fail(r, op, "division by zero");
		x = alu == ALU_DIVU ? ua / ub : ua % ub;
		break;
	case ALU_AND: x = ua & ub; break;
	case ALU_OR: x = ua | ub; break;
	case ALU_XOR: x = ua ^ ub; break;
	case ALU_SHL: x = ua << sh; break;
	case ALU_SHRS: x = (uint64_t)(a >> sh); break;
	case ALU_SHRU: x = ua >> sh; break;
	case ALU_MAXS: x = (uint64_t)(a > b ? a : b); break;
	case ALU_MINS: x = (uint64_t)(a < b ? a : b); break;
	case ALU_MAXU: x = ua > ub ? ua : ub; break;
	case ALU_MINU: x = ua < ub ? ua : ub; break;
	case ALU_CMP: x = ii_cmp(op->pred, a, b, w) ? ~0ULL : 0; w = 1; break;
	default:
		return ii_fail(r, op, "not an integer operation");
	}
	*out = ir_sext(x, w);
	return 0;
}

/* The device's LOOM_TYPE_* of an integer or f32 type (conversions). */
static inline unsigned ii_dev_type(const struct ir_type *t)
{
	return ii_width(t) <= 32 ? LOOM_TYPE_I32 : LOOM_TYPE_I64;
}

static inline int ii_float(struct ii_run *r, const struct ir_op *op,
			   const int64_t *v, int64_t *out)
{
	static const unsigned fop[] = {
		[ALU_FADD] = LOOM_OP_FADD, [ALU_FSUB] = LOOM_OP_FSUB,
		[ALU_FMUL] = LOOM_OP_FMUL, [ALU_FDIV] = LOOM_OP_FDIV,
		[ALU_FMAX] = LOOM_OP_FMAX, [ALU_FMIN] = LOOM_OP_FMIN,
		[ALU_FMA] = LOOM_OP_FMA, [ALU_FNEG] = LOOM_OP_FNEG,
		[ALU_SITOF] = LOOM_OP_SITOF, [ALU_UITOF] = LOOM_OP_UITOF,
		[ALU_FTOSI] = LOOM_OP_FTOSI, [ALU_FTOUI] = LOOM_OP_FTOUI,
	};
	enum ir_alu alu = ir_opinfo[op->code].alu;
	unsigned type = LOOM_TYPE_I32;
	uint64_t x;

	if (alu == ALU_FCMP) {
		x = loom_alu(LOOM_OP_FFALSE + op->fpred, type, (uint64_t)v[0],
			     (uint64_t)v[1], 0);
		*out = x ? -1 : 0;
		return 0;
	}
	if (alu >= sizeof(fop) / sizeof(fop[0]) || !fop[alu])
		return ii_fail(r, op, "not an f32 operation");
	if (alu == ALU_SITOF || alu == ALU_UITOF)
		type = ii_dev_type(op->type);
	else if (alu == ALU_FTOSI || alu == ALU_FTOUI)
		type = ii_dev_type(op->to_type);
	x = loom_alu(fop[alu], type, (uint64_t)v[0], (uint64_t)v[1],
		     (uint64_t)v[2]);
	*out = ir_sext(x, ii_width(op->results[0].type));
	return 0;
}

static inline int ii_cast(struct ii_run *r, const struct ir_op *op,
			  int64_t v, int64_t *out)
{
	unsigned from = ii_width(op->type), to = ii_width(op->to_type);
	int64_t k[3] = { v, 0, 0 };

	switch (ir_opinfo[op->code].alu) {
	case ALU_CASTS:
		*out = ir_sext((uint64_t)v, to);
		return 0;
	case ALU_CASTU:
		*out = ir_sext(ii_zext(v, from), to);
		return 0;
	case ALU_BITCAST:
		*out = ir_sext((uint64_t)v, 32);
		return 0;
	default:
		return ii_float(r, op, k, out);
	}
}

/* The array a memref operand names: a thread input. */
static inline const struct ii_buf *ii_memref(struct ii_run *r,
					     const struct ir_value *m)
{
	if (m->def || m->region != &r->f->body || m->index >= r->f->num_inputs)
		return NULL;
	return &r->bufs[m->index];
}

static inline int ii_access(struct ii_run *r, const struct ir_op *op,
			    int mi, int64_t *v)
{
	const struct ii_buf *b = ii_memref(r, op->operands[mi].value);
	int64_t i = 0;
	unsigned size = ir_type_size(op->type->elem);
	uint8_t *at;

	/* row-major: ((i0 * d1 + i1) * d2 + i2) ... */
	for (int k = 1; k < op->type->rank; k++)
		if (op->type->dims[k] == IR_DYNAMIC)
			return ii_fail(r, op, "a '?' size after the first");
	for (int k = 0; k < op->type->rank; k++)
		i = i * (k ? op->type->dims[k] : 1) +
		    ii_get(r, op->operands[mi + 1 + k].value);
	if (!b || !b->data)
		return ii_fail(r, op, "not a memref argument");
	if (i < 0 || (uint64_t)i >= b->len)
		return ii_fail(r, op, "index %lld out of [0, %zu)",
			       (long long)i, b->len);
	at = (uint8_t *)b->data + (size_t)i * size;
	if (op->code == IR_OP_MEMREF_STORE) {
		memcpy(at, v, size);	/* little endian: the low bytes */
		return 0;
	}
	*v = 0;
	memcpy(v, at, size);
	*v = ir_sext((uint64_t)*v, size * 8);
	return 0;
}

static int ii_region(struct ii_run *r, const struct ir_region *body);

static inline int ii_for(struct ii_run *r, const struct ir_op *op)
{
	int64_t lb = ii_get(r, op->operands[0].value);
	int64_t ub = ii_get(r, op->operands[1].value);
	int64_t st = ii_get(r, op->operands[2].value);
	const struct ir_region *b = op->body;
	long trips = 0;

	if (st <= 0)
		return ii_fail(r, op, "step %lld", (long long)st);
	for (int k = 0; k < op->num_iter_args; k++)
		ii_set(r, &b->args[1 + k], ii_get(r, op->operands[3 + k].value));
	for (int64_t iv = lb; iv < ub; iv += st) {
		if (++trips > II_MAX_TRIPS)
			return ii_fail(r, op, "more than %d iterations", II_MAX_TRIPS);
		ii_set(r, &b->args[0], iv);
		if (ii_region(r, b))
			return -1;
		if (b->last && b->last->code == IR_OP_SCF_YIELD) {
			int64_t y[16];

			for (int k = 0; k < op->num_iter_args && k < 16; k++)
				y[k] = ii_get(r, b->last->operands[k].value);
			for (int k = 0; k < op->num_iter_args && k < 16; k++)
				ii_set(r, &b->args[1 + k], y[k]);
		}
		if (ub - iv <= st)
			break;	/* iv + st would overflow, or end */
	}
	for (int k = 0; k < op->num_results; k++)
		ii_set(r, &op->results[k], ii_get(r, &b->args[1 + k]));
	return 0;
}

/* scf.if: the taken region, if there is one; its yield gives the results. */
static inline int ii_if(struct ii_run *r, const struct ir_op *op)
{
	const struct ir_region *b = ii_get(r, op->operands[0].value) ?
				    op->body : op->else_body;

	if (!b)
		return 0;
	if (ii_region(r, b))
		return -1;
	for (int k = 0; k < op->num_results; k++)
		ii_set(r, &op->results[k], ii_get(r, b->last->operands[k].value));
	return 0;
}

static inline int ii_op(struct ii_run *r, const struct ir_op *op)
{
	int64_t v[3] = { 0 }, x = 0;
	enum ir_alu alu = ir_opinfo[op->code].alu;

	for (int i = 0; i < op->num_operands && i < 3; i++)
		v[i] = ii_get(r, op->operands[i].value);
	switch (ir_opinfo[op->code].syntax) {
	case SYN_CONSTANT: case SYN_INDEX_CONSTANT:
		x = op->results[0].is_const ? op->results[0].const_val : op->imm;
		break;
	case SYN_BINARY: case SYN_INDEX_BINARY:
	case SYN_CMPI: case SYN_INDEX_CMP:
		if (alu >= ALU_FADD)
			return ii_float(r, op, v, &x) ? -1 :
			       (ii_set(r, &op->results[0], x), 0);
		if (ii_int(r, op, alu, v[0], v[1],
			   ii_width(op->operands[0].value->type), &x))
			return -1;
		break;
	case SYN_CMPF: case SYN_UNARY: case SYN_TERNARY:
		if (ii_float(r, op, v, &x))
			return -1;
		break;
	case SYN_SELECT:
		x = v[0] ? v[1] : v[2];
		break;
	case SYN_CAST:
		if (ii_cast(r, op, v[0], &x))
			return -1;
		break;
	case SYN_LOAD:
		if (ii_access(r, op, 0, &x))
			return -1;
		break;
	case SYN_STORE:
		return ii_access(r, op, 1, &v[0]);
	case SYN_FOR:
		return ii_for(r, op);
	case SYN_IF:
		return ii_if(r, op);
	case SYN_SPAWN:
		if (r->num_children >= r->child_cap)
			return ii_fail(r, op, "more than %u children", r->child_cap);
		r->children[r->num_children++] = (uint64_t)v[0];
		return 0;
	case SYN_SCF_YIELD: case SYN_THREAD_YIELD:
		return 0;
	default:
		return ii_fail(r, op, "not in a thread");
	}
	ii_set(r, &op->results[0], x);
	return 0;
}

static int ii_region(struct ii_run *r, const struct ir_region *body)
{
	for (const struct ir_op *op = body->first; op; op = op->next)
		if (ii_op(r, op))
			return -1;
	return 0;
}

/* The thread's inputs as its body's arguments, for a new instance. */
static inline void ii_begin(struct ii_run *r)
{
	struct ir_func *f = r->f;

	if (++r->gen == 0) {
		memset(r->tab, 0, sizeof(r->tab));
		r->gen = 1;
	}
	for (int k = 0; k < f->num_inputs; k++) {
		const struct ir_type *t = f->body.args[k].type;

		if (t->kind != IR_TYPE_MEMREF)
			ii_set(r, &f->body.args[k],
			       ir_sext(r->args[k], ii_width(t)));
	}
}

/*
 * Runs every instance of dense thread r->f over @extents (its rank of
 * them), in lexicographic order.  Returns 0, or -1 with r->err.
 */
static inline int ii_dense(struct ii_run *r, const int64_t *extents)
{
	struct ir_func *f = r->f;
	int64_t c[8] = { 0 };
	int k = f->num_ivs;

	for (int d = 0; d < k; d++)
		if (extents[d] <= 0)
			return 0;
	for (;;) {
		int d;

		ii_begin(r);
		for (d = 0; d < k; d++)
			ii_set(r, &ir_func_ivs(f)[d], c[d]);
		if (ii_region(r, &f->body))
			return -1;
		for (d = k - 1; d >= 0; d--) {
			if (++c[d] < extents[d])
				break;
			c[d] = 0;
		}
		if (d < 0)
			return 0;
	}
}

/*
 * Runs dynamic-work thread r->f for one item: @payload is its work-item
 * input; the children it spawns land in r->children (r->num_children).
 */
static inline int ii_item(struct ii_run *r, uint64_t payload)
{
	struct ir_func *f = r->f;
	const struct ir_type *t = f->body.args[f->work_item_arg].type;

	r->num_children = 0;
	ii_begin(r);
	ii_set(r, &f->body.args[f->work_item_arg],
	       ir_sext(payload, ii_width(t)));
	return ii_region(r, &f->body);
}

#endif /* LOOMC_TESTS_IR_INTERP_H */
