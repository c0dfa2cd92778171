// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ir.c: the IR's types, the opcode table, the arena that owns a module, and
 * the printer (the inverse of parser.c).
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* ------------------------------------------------------------- types --- */

const struct ir_type ir_i1 = { .kind = IR_TYPE_I1 };
const struct ir_type ir_i32 = { .kind = IR_TYPE_I32 };
const struct ir_type ir_i64 = { .kind = IR_TYPE_I64 };
const struct ir_type ir_index = { .kind = IR_TYPE_INDEX };
const struct ir_type ir_f32 = { .kind = IR_TYPE_F32 };
const struct ir_type ir_none = { .kind = IR_TYPE_NONE };
const struct ir_type ir_token = { .kind = IR_TYPE_TOKEN };

bool ir_type_equal(const struct ir_type *a, const struct ir_type *b)
{
	while (a && b && a != b) {
		if (a->kind != b->kind)
			return false;
		if (a->kind == IR_TYPE_MEMREF &&
		    (a->rank != b->rank ||
		     memcmp(a->dims, b->dims, a->rank * sizeof(a->dims[0])) ||
		     a->strided != b->strided))
			return false;
		if (a->kind == IR_TYPE_MEMREF && a->strided &&
		    (a->offset != b->offset ||
		     memcmp(a->strides, b->strides,
			    a->rank * sizeof(a->strides[0]))))
			return false;
		if (a->kind == IR_TYPE_UNSUPPORTED)
			return strcmp(a->name, b->name) == 0;
		a = a->elem;
		b = b->elem;
	}
	return a == b;
}

bool ir_type_is_integer(const struct ir_type *t)
{
	return ir_type_width(t) != 0;
}

unsigned ir_type_width(const struct ir_type *t)
{
	switch (t->kind) {
	case IR_TYPE_I1:	return 1;
	case IR_TYPE_I32:	return 32;
	case IR_TYPE_I64:
	case IR_TYPE_INDEX:	return 64;
	default:		return 0;
	}
}

unsigned ir_type_size(const struct ir_type *t)
{
	if (t->kind == IR_TYPE_F32)
		return 4;
	if (!ir_type_width(t))
		return 0;
	return ir_type_width(t) <= 32 ? 4 : 8;
}

bool ir_type_has_channel(const struct ir_type *t)
{
	for (; t; t = t->elem)
		if (t->kind == IR_TYPE_CHANNEL)
			return true;
	return false;
}

bool ir_type_has_unsupported(const struct ir_type *t)
{
	for (; t; t = t->elem)
		if (t->kind == IR_TYPE_UNSUPPORTED)
			return true;
	return false;
}

enum loom_arg_type ir_type_arg_type(const struct ir_type *t)
{
	switch (t->kind) {
	case IR_TYPE_I32:	return LOOM_ARG_I32;
	case IR_TYPE_I64:	return LOOM_ARG_I64;
	case IR_TYPE_INDEX:	return LOOM_ARG_INDEX;
	case IR_TYPE_F32:	return LOOM_ARG_F32;
	case IR_TYPE_MEMREF:
		switch (t->elem->kind) {
		case IR_TYPE_I32:	return LOOM_ARG_MEMREF_I32;
		case IR_TYPE_I64:	return LOOM_ARG_MEMREF_I64;
		case IR_TYPE_F32:	return LOOM_ARG_MEMREF_F32;
		default:		return 0;
		}
	default:		return 0;
	}
}

int64_t ir_floordiv(int64_t a, int64_t c)
{
	return a / c - (a % c < 0);
}

int64_t ir_ceildiv(int64_t a, int64_t c)
{
	return a / c + (a % c > 0);
}

int64_t ir_mod(int64_t a, int64_t c)
{
	return a % c + (a % c < 0 ? c : 0);
}

bool ir_affine_eval(const struct ir_affine_expr *e, const int64_t *vals,
		    const bool *known, int num_dims, int64_t *out)
{
	int64_t a = 0, b = 0;
	bool ka, kb;

	switch (e->kind) {
	case AFF_CONST:
		*out = e->val;
		return true;
	case AFF_DIM:
	case AFF_SYM: {
		int i = (int)e->val + (e->kind == AFF_SYM ? num_dims : 0);

		*out = vals[i];
		return known[i];
	}
	default:
		break;
	}
	ka = ir_affine_eval(e->lhs, vals, known, num_dims, &a);
	kb = ir_affine_eval(e->rhs, vals, known, num_dims, &b);
	if (e->kind == AFF_MUL && ((ka && a == 0) || (kb && b == 0))) {
		*out = 0;
		return true;
	}
	if (!ka || !kb)
		return false;
	switch (e->kind) {
	case AFF_ADD:	*out = (int64_t)((uint64_t)a + (uint64_t)b); break;
	case AFF_SUB:	*out = (int64_t)((uint64_t)a - (uint64_t)b); break;
	case AFF_MUL:	*out = (int64_t)((uint64_t)a * (uint64_t)b); break;
	case AFF_FLOORDIV: *out = ir_floordiv(a, b); break;
	case AFF_CEILDIV: *out = ir_ceildiv(a, b); break;
	default:	*out = ir_mod(a, b); break;
	}
	return true;
}

int64_t ir_memref_stride(const struct ir_type *t, int k)
{
	int64_t stride = 1;

	for (int j = k + 1; j < t->rank; j++)
		stride *= t->dims[j];
	return stride;
}

void ir_memref_layout(const struct ir_type *t, int64_t *strides,
		      int64_t *offset)
{
	int64_t stride = 1;

	*offset = t->strided ? t->offset : 0;
	for (int k = t->rank - 1; k >= 0; k--) {
		if (t->strided) {
			strides[k] = t->strides[k];
			continue;
		}
		strides[k] = stride;
		if (stride != IR_DYNAMIC)
			stride = t->dims[k] == IR_DYNAMIC ? IR_DYNAMIC :
				 stride * t->dims[k];
	}
}

int64_t ir_memref_elems(const struct ir_type *t)
{
	int64_t n = 1;

	for (int k = 0; k < t->rank; k++) {
		if (t->dims[k] == IR_DYNAMIC)
			return IR_DYNAMIC;
		n *= t->dims[k];
	}
	return n;
}

/* '?' sizes a launch passes: none of a rank-1 memref (its ABI). */
static int passed_sizes(const struct ir_type *t)
{
	return t->rank < 2 ? 0 : ir_size_operand_of(t, t->rank);
}

int ir_size_operands(const struct ir_type *t)
{
	if (t->kind != IR_TYPE_MEMREF)
		return 0;
	if (!t->strided)
		return passed_sizes(t);
	return ir_stride_operand(t, t->rank);
}

int ir_offset_operand(const struct ir_type *t)
{
	return passed_sizes(t);
}

int ir_stride_operand(const struct ir_type *t, int k)
{
	int n = passed_sizes(t) + (t->offset == IR_DYNAMIC);

	for (int j = 0; j < k; j++)
		n += t->strides[j] == IR_DYNAMIC;
	return n;
}

int ir_size_operand_of(const struct ir_type *t, int k)
{
	int n = 0;

	for (int j = 0; j < k; j++)
		n += t->dims[j] == IR_DYNAMIC;
	return n;
}

static void size_str(int64_t v, char *buf, size_t size)
{
	if (v == IR_DYNAMIC)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%lld", (long long)v);
}

/* ", strided<[s0, s1], offset: o>" (no offset when it is 0, as MLIR). */
static void layout_str(const struct ir_type *t, char *buf, size_t size)
{
	size_t len = snprintf(buf, size, ", strided<[");
	char v[24];

	for (int k = 0; k < t->rank && len < size; k++) {
		size_str(t->strides[k], v, sizeof(v));
		len += snprintf(buf + len, size - len, "%s%s", k ? ", " : "", v);
	}
	size_str(t->offset, v, sizeof(v));
	if (len < size && t->offset)
		len += snprintf(buf + len, size - len, "], offset: %s>", v);
	else if (len < size)
		snprintf(buf + len, size - len, "]>");
}

const char *ir_type_str(const struct ir_type *t, char *buf, size_t size)
{
	char inner[IR_TYPE_STR_MAX];

	switch (t->kind) {
	case IR_TYPE_I1:	snprintf(buf, size, "i1"); break;
	case IR_TYPE_I32:	snprintf(buf, size, "i32"); break;
	case IR_TYPE_I64:	snprintf(buf, size, "i64"); break;
	case IR_TYPE_INDEX:	snprintf(buf, size, "index"); break;
	case IR_TYPE_F32:	snprintf(buf, size, "f32"); break;
	case IR_TYPE_NONE:	snprintf(buf, size, "none"); break;
	case IR_TYPE_TOKEN:
		snprintf(buf, size, "!dataflow.thread_token");
		break;
	case IR_TYPE_MEMREF: {
		char shape[IR_MEMREF_MAX_RANK * 21] = "";
		size_t len = 0;

		for (int k = 0; k < t->rank; k++) {
			if (t->dims[k] == IR_DYNAMIC)
				len += snprintf(shape + len, sizeof(shape) - len,
						"?x");
			else
				len += snprintf(shape + len, sizeof(shape) - len,
						"%lldx", (long long)t->dims[k]);
		}
		ir_type_str(t->elem, inner, sizeof(inner));
		if (t->strided)
			layout_str(t, inner + strlen(inner),
				   sizeof(inner) - strlen(inner));
		snprintf(buf, size, "memref<%s%s>", shape, inner);
		break;
	}
	case IR_TYPE_CHANNEL:
		ir_type_str(t->elem, inner, sizeof(inner));
		snprintf(buf, size, "!dataflow.channel<%s>", inner);
		break;
	case IR_TYPE_UNSUPPORTED:
		snprintf(buf, size, "%s", t->name);
		break;
	}
	return buf;
}

/* ----------------------------------------------------------- opcodes --- */

const struct ir_opinfo ir_opinfo[IR_OP_COUNT] = {
#define IR_OPINFO(code, name_, syntax_, alu_, flags_)			\
	[IR_OP_##code] = { .name = name_, .syntax = syntax_, .alu = alu_, \
			   .flags = flags_ },
	IR_OPCODES(IR_OPINFO)
#undef IR_OPINFO
};

const char *const ir_pred_name[IR_PRED_COUNT] = {
	"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
};

const char *const ir_fpred_name[IR_FPRED_COUNT] = {
	"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
	"uge", "ult", "ule", "une", "uno", "true",
};

enum ir_opcode ir_op_lookup(const char *name, size_t len)
{
	if (len == 11 && memcmp(name, "func.return", 11) == 0)
		return IR_OP_RETURN;
	for (int i = 0; i < IR_OP_COUNT; i++)
		if (strlen(ir_opinfo[i].name) == len &&
		    memcmp(ir_opinfo[i].name, name, len) == 0)
			return (enum ir_opcode)i;
	return IR_OP_COUNT;
}

/* ------------------------------------------------------------- arena --- */

#define ARENA_CHUNK	(64 * 1024)

/**
 * struct ir_arena - one chunk of a module's memory
 * @next: the previously filled chunk
 * @size: usable bytes in @data
 * @used: bytes handed out
 * @data: the memory
 */
struct ir_arena {
	struct ir_arena *next;
	size_t size;
	size_t used;
	alignas(max_align_t) unsigned char data[];
};

static struct ir_arena *arena_chunk(struct ir_arena *next, size_t min)
{
	size_t size = min > ARENA_CHUNK ? min : ARENA_CHUNK;
	struct ir_arena *a;

	if (min > SIZE_MAX / 2)
		return NULL;
	a = malloc(sizeof(*a) + size);
	if (!a)
		return NULL;
	a->next = next;
	a->size = size;
	a->used = 0;
	return a;
}

void *ir_alloc(struct ir_module *m, size_t size)
{
	size_t align = alignof(max_align_t);
	struct ir_arena *a = m->arena;
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (size == 0)
		size = align;
	if (a->size - a->used < size) {
		a = arena_chunk(a, size);
		if (!a)
			return NULL;
		m->arena = a;
	}
	p = a->data + a->used;
	a->used += size;
	memset(p, 0, size);
	return p;
}

char *ir_strndup(struct ir_module *m, const char *s, size_t len)
{
	char *p = len < SIZE_MAX ? ir_alloc(m, len + 1) : NULL;

	if (p)
		memcpy(p, s, len);
	return p;
}

struct ir_module *ir_module_new(void)
{
	struct ir_arena *a = arena_chunk(NULL, 0);
	struct ir_module *m;

	if (!a)
		return NULL;
	m = (struct ir_module *)a->data;
	a->used = (sizeof(*m) + alignof(max_align_t) - 1) &
		  ~(alignof(max_align_t) - 1);
	memset(m, 0, sizeof(*m));
	m->arena = a;
	return m;
}

void ir_module_free(struct ir_module *m)
{
	struct ir_arena *a, *next;

	if (!m)
		return;
	for (a = m->arena; a; a = next) {
		next = a->next;
		free(a);
	}
}

struct ir_func *ir_module_find(struct ir_module *m, const char *name)
{
	for (struct ir_func *f = m->funcs; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* ----------------------------------------------------------- printer --- */

static void print_type(FILE *out, const struct ir_type *t)
{
	char buf[IR_TYPE_STR_MAX];

	fputs(ir_type_str(t, buf, sizeof(buf)), out);
}

static void print_attr_value(FILE *out, const struct ir_attr *a);

static void print_attr_list(FILE *out, const struct ir_attr *a, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		if (a[i].name) {
			fputs(a[i].name, out);
			if (a[i].kind == IR_ATTR_UNIT)
				continue;
			fputs(" = ", out);
		}
		print_attr_value(out, &a[i]);
	}
}

static void print_attr_value(FILE *out, const struct ir_attr *a)
{
	switch (a->kind) {
	case IR_ATTR_UNIT:
		break;
	case IR_ATTR_INT:
		fprintf(out, "%lld", (long long)a->ival);
		if (a->type) {
			fputs(" : ", out);
			print_type(out, a->type);
		}
		break;
	case IR_ATTR_STRING:
		fprintf(out, "\"%s\"", a->str);
		break;
	case IR_ATTR_KEYWORD:
		fputs(a->str, out);
		break;
	case IR_ATTR_SYMBOL:
		fprintf(out, "@%s", a->str);
		break;
	case IR_ATTR_TYPE:
		print_type(out, a->type);
		break;
	case IR_ATTR_DIALECT:
		fputs(a->str, out);
		if (a->body) {
			fprintf(out, "<%s>", a->body);
		} else if (a->num_elems) {
			fputc('<', out);
			print_attr_list(out, a->elems, a->num_elems);
			fputc('>', out);
		}
		break;
	case IR_ATTR_ARRAY:
		fputc('[', out);
		print_attr_list(out, a->elems, a->num_elems);
		fputc(']', out);
		break;
	}
}

static void print_attr_dict(FILE *out, const struct ir_attr *a, int n)
{
	if (!n)
		return;
	fputs(" {", out);
	print_attr_list(out, a, n);
	fputc('}', out);
}

static void print_uses(FILE *out, const struct ir_use *u, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%%%s", i ? ", " : "", u[i].name);
}

static const char *const affine_op_name[] = {
	[AFF_ADD] = "+", [AFF_SUB] = "-", [AFF_MUL] = "*",
	[AFF_FLOORDIV] = "floordiv", [AFF_CEILDIV] = "ceildiv",
	[AFF_MOD] = "mod",
};

/* Binary operands in parentheses: the printed text needs no precedence. */
static void print_affine_expr(FILE *out, const struct ir_affine_expr *e,
			      bool nested)
{
	switch (e->kind) {
	case AFF_CONST:
		fprintf(out, "%lld", (long long)e->val);
		return;
	case AFF_DIM:
	case AFF_SYM:
		fprintf(out, "%c%lld", e->kind == AFF_DIM ? 'd' : 's',
			(long long)e->val);
		return;
	default:
		break;
	}
	if (nested)
		fputc('(', out);
	print_affine_expr(out, e->lhs, true);
	fprintf(out, " %s ", affine_op_name[e->kind]);
	print_affine_expr(out, e->rhs, true);
	if (nested)
		fputc(')', out);
}

static void print_affine_map(FILE *out, const struct ir_affine_map *m)
{
	fputs("affine_map<(", out);
	for (int i = 0; i < m->num_dims; i++)
		fprintf(out, "%sd%d", i ? ", " : "", i);
	fputs(")[", out);
	for (int i = 0; i < m->num_syms; i++)
		fprintf(out, "%ss%d", i ? ", " : "", i);
	fputs("] -> (", out);
	for (int i = 0; i < m->num_results; i++) {
		if (i)
			fputs(", ", out);
		print_affine_expr(out, m->results[i], false);
	}
	fputs(")>", out);
}

static void print_types(FILE *out, const struct ir_type *const *t, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		print_type(out, t[i]);
	}
}

static void print_block_args(FILE *out, const struct ir_value *v, int n)
{
	fputc('(', out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s%%%s: ", i ? ", " : "", v[i].name);
		print_type(out, v[i].type);
	}
	fputc(')', out);
}

/* " {attrs} : T" */
static void print_attrs_type(FILE *out, const struct ir_op *op,
			     const struct ir_type *t)
{
	print_attr_dict(out, op->attrs, op->num_attrs);
	fputs(" : ", out);
	print_type(out, t);
}

static void print_region(FILE *out, const struct ir_region *r, int indent);

static void print_constant(FILE *out, const struct ir_op *op)
{
	if (op->code == IR_OP_INDEX_CONSTANT) {
		fprintf(out, " %s%llu", op->lit_neg ? "-" : "",
			(unsigned long long)op->lit_mag);
		print_attr_dict(out, op->attrs, op->num_attrs);
		return;
	}
	if (op->type->kind == IR_TYPE_F32) {	/* its bits: exact */
		fprintf(out, " 0x%08llX", (unsigned long long)op->imm & 0xffffffffULL);
		print_attrs_type(out, op, op->type);
		return;
	}
	if (op->type->kind == IR_TYPE_I1 && !op->lit_neg && op->lit_mag <= 1) {
		fputs(op->lit_mag ? " true" : " false", out);
		print_attr_dict(out, op->attrs, op->num_attrs);
		return;
	}
	fprintf(out, " %s%llu", op->lit_neg ? "-" : "",
		(unsigned long long)op->lit_mag);
	print_attrs_type(out, op, op->type);
}

static void print_for(FILE *out, const struct ir_op *op, int indent)
{
	const struct ir_region *b = op->body;

	fprintf(out, " %%%s = %%%s to %%%s step %%%s", b->args[0].name,
		op->operands[0].name, op->operands[1].name,
		op->operands[2].name);
	if (op->num_iter_args) {
		fputs(" iter_args(", out);
		for (int i = 0; i < op->num_iter_args; i++)
			fprintf(out, "%s%%%s = %%%s", i ? ", " : "",
				b->args[i + 1].name, op->operands[i + 3].name);
		fputs(") -> (", out);
		print_types(out, op->operand_types + 3, op->num_iter_args);
		fputc(')', out);
	}
	if (op->type->kind != IR_TYPE_INDEX) {
		fputs(" : ", out);
		print_type(out, op->type);
	}
	fputc(' ', out);
	print_region(out, b, indent);
	print_attr_dict(out, op->attrs, op->num_attrs);
}

/* scf.if %c [-> (T, ...)] { ... } [else { ... }] */
static void print_if(FILE *out, const struct ir_op *op, int indent)
{
	fprintf(out, " %%%s", op->operands[0].name);
	if (op->num_results) {
		fputs(" -> (", out);
		for (int i = 0; i < op->num_results; i++) {
			if (i)
				fputs(", ", out);
			print_type(out, op->results[i].type);
		}
		fputc(')', out);
	}
	fputc(' ', out);
	print_region(out, op->body, indent);
	if (op->else_body) {
		fputs(" else ", out);
		print_region(out, op->else_body, indent);
	}
	print_attr_dict(out, op->attrs, op->num_attrs);
}

static void print_launch(FILE *out, const struct ir_op *op)
{
	fprintf(out, " @%s(", op->callee);
	print_uses(out, op->operands, op->num_args);
	fputc(')', out);
	if (op->has_wait) {
		fputs(" wait(", out);
		print_uses(out, op->operands + op->num_args, op->num_waits);
		fputc(')', out);
	}
	if (op->has_grid) {
		fputs(" grid(", out);
		print_uses(out, op->operands + op->num_args + op->num_waits,
			   op->num_extents);
		fputc(')', out);
	}
	print_attr_dict(out, op->attrs, op->num_attrs);
	fputs(" : (", out);
	print_types(out, op->operand_types, op->num_args);
	fputs(") -> ", out);
	if (op->num_results == 1) {
		print_type(out, op->results[0].type);
		return;
	}
	fputc('(', out);
	for (int i = 0; i < op->num_results; i++) {
		if (i)
			fputs(", ", out);
		print_type(out, op->results[i].type);
	}
	fputc(')', out);
}

/* "%a, %b {attrs} : T, U" or, without operands, just "{attrs}". */
static void print_operands_types(FILE *out, const struct ir_op *op)
{
	if (op->num_operands)
		fputc(' ', out);
	print_uses(out, op->operands, op->num_operands);
	print_attr_dict(out, op->attrs, op->num_attrs);
	if (op->num_operands) {
		fputs(" : ", out);
		print_types(out, op->operand_types, op->num_operands);
	}
}

/* "[%o, 4]": list @which of a view operation, values and literals. */
static void print_view_list(FILE *out, const struct ir_op *op, int which)
{
	const struct ir_view *w = op->view;

	fputc('[', out);
	for (int k = 0; k < w->num[which]; k++) {
		int i = w->operand[which][k];

		fputs(k ? ", " : "", out);
		if (i >= 0)
			fprintf(out, "%%%s", op->operands[i].name);
		else
			fprintf(out, "%lld", (long long)w->lit[which][k]);
	}
	fputc(']', out);
}

/* "[[0, 1], [2]]" */
static void print_reassociation(FILE *out, const struct ir_view *w)
{
	fputs("[[", out);
	for (int k = 0; k < w->num_grouped; k++) {
		if (k && w->group[k] != w->group[k - 1])
			fputs("], [", out);
		else if (k)
			fputs(", ", out);
		fprintf(out, "%d", k);
	}
	fputs("]]", out);
}

static void print_op_body(FILE *out, const struct ir_op *op, int indent)
{
	const struct ir_use *u = op->operands;

	switch (ir_opinfo[op->code].syntax) {
	case SYN_CONSTANT:
	case SYN_INDEX_CONSTANT:
		print_constant(out, op);
		break;
	case SYN_BINARY:
		fprintf(out, " %%%s, %%%s", u[0].name, u[1].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_INDEX_BINARY:
		fprintf(out, " %%%s, %%%s", u[0].name, u[1].name);
		print_attr_dict(out, op->attrs, op->num_attrs);
		break;
	case SYN_UNARY:
		fprintf(out, " %%%s", u[0].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_TERNARY:
		fprintf(out, " %%%s, %%%s, %%%s", u[0].name, u[1].name,
			u[2].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_CMPF:
		fprintf(out, " %s, %%%s, %%%s", ir_fpred_name[op->fpred],
			u[0].name, u[1].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_CMPI:
		fprintf(out, " %s, %%%s, %%%s", ir_pred_name[op->pred],
			u[0].name, u[1].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_INDEX_CMP:
		fprintf(out, " %s(%%%s, %%%s)", ir_pred_name[op->pred],
			u[0].name, u[1].name);
		print_attr_dict(out, op->attrs, op->num_attrs);
		break;
	case SYN_SELECT:
		fprintf(out, " %%%s, %%%s, %%%s", u[0].name, u[1].name,
			u[2].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_CAST:
		fprintf(out, " %%%s", u[0].name);
		print_attrs_type(out, op, op->type);
		fputs(" to ", out);
		print_type(out, op->to_type);
		break;
	case SYN_LOAD:
		fprintf(out, " %%%s[", u[0].name);
		print_uses(out, u + 1, op->num_operands - 1);
		fputc(']', out);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_STORE:
		fprintf(out, " %%%s, %%%s[", u[0].name, u[1].name);
		print_uses(out, u + 2, op->num_operands - 2);
		fputc(']', out);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_ATOMIC_RMW:
		fprintf(out, " %s %%%s, %%%s[", loom_atomic_info(op->atomic_kind)->name,
			u[0].name, u[1].name);
		print_uses(out, u + 2, op->num_operands - 2);
		fputc(']', out);
		print_attr_dict(out, op->attrs, op->num_attrs);
		fputs(" : (", out);
		print_type(out, op->operand_types[0]);
		fputs(", ", out);
		print_type(out, op->type);
		fputs(") -> ", out);
		print_type(out, op->results[0].type);
		break;
	case SYN_AFFINE:
		fputc(' ', out);
		print_affine_map(out, op->map);
		fputc('(', out);
		print_uses(out, u, op->num_args);
		fputs(")[", out);
		print_uses(out, u + op->num_args, op->num_operands - op->num_args);
		fputc(']', out);
		print_attr_dict(out, op->attrs, op->num_attrs);
		break;
	case SYN_DIM:
		fprintf(out, " %%%s, %%%s", u[0].name, u[1].name);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_MEMREF_CAST:
		fprintf(out, " %%%s", u[0].name);
		print_attrs_type(out, op, op->type);
		fputs(" to ", out);
		print_type(out, op->to_type);
		break;
	case SYN_REINTERPRET:
		fprintf(out, " %%%s to offset: ", u[0].name);
		print_view_list(out, op, IR_VIEW_OFFSETS);
		fputs(", sizes: ", out);
		print_view_list(out, op, IR_VIEW_SIZES);
		fputs(", strides: ", out);
		print_view_list(out, op, IR_VIEW_STRIDES);
		print_attrs_type(out, op, op->type);
		fputs(" to ", out);
		print_type(out, op->to_type);
		break;
	case SYN_RESHAPE:
		fprintf(out, " %%%s ", u[0].name);
		print_reassociation(out, op->view);
		if (op->view->has_output_shape) {
			fputs(" output_shape ", out);
			print_view_list(out, op, IR_VIEW_SIZES);
		}
		print_attrs_type(out, op, op->type);
		fputs(" into ", out);
		print_type(out, op->to_type);
		break;
	case SYN_SUBVIEW:
		fprintf(out, " %%%s", u[0].name);
		for (int w = 0; w < IR_VIEW_LISTS; w++)
			print_view_list(out, op, w);
		print_attrs_type(out, op, op->type);
		fputs(" to ", out);
		print_type(out, op->to_type);
		break;
	case SYN_ALLOC:
		fputc('(', out);
		print_uses(out, u, op->num_operands);
		fputc(')', out);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_FOR:
		print_for(out, op, indent);
		break;
	case SYN_IF:
		print_if(out, op, indent);
		break;
	case SYN_LAUNCH:
	case SYN_CALL:
		print_launch(out, op);
		break;
	case SYN_SPAWN:
	case SYN_PRINT:
	case SYN_CHECK:
		fputc(' ', out);
		print_uses(out, u, op->num_operands);
		print_attrs_type(out, op, op->type);
		break;
	case SYN_SCF_YIELD:
	case SYN_WAIT:
	case SYN_THREAD_YIELD:
	case SYN_RETURN:
		print_operands_types(out, op);
		break;
	}
}

static void print_op(FILE *out, const struct ir_op *op, int indent)
{
	fprintf(out, "%*s", indent, "");
	for (int i = 0; i < op->num_results; i++)
		fprintf(out, "%s%%%s", i ? ", " : "", op->results[i].name);
	if (op->num_results)
		fputs(" = ", out);
	fputs(ir_opinfo[op->code].name, out);
	print_op_body(out, op, indent);
	fputc('\n', out);
}

static void print_region(FILE *out, const struct ir_region *r, int indent)
{
	fputs("{\n", out);
	for (const struct ir_op *op = r->first; op; op = op->next)
		print_op(out, op, indent + 2);
	fprintf(out, "%*s}", indent, "");
}

static void print_thread_clauses(FILE *out, const struct ir_func *f)
{
	const struct ir_value *ctrl = f->body.args + f->num_inputs;
	const struct ir_value *ivs = ctrl + f->num_ctrl;

	if (f->has_iv && f->iv_before_ctrl) {
		fputs(" iv", out);
		print_block_args(out, ivs, f->num_ivs);
	}
	if (f->has_ctrl) {
		fputs(" ctrl", out);
		print_block_args(out, ctrl, f->num_ctrl);
	}
	if (f->has_iv && !f->iv_before_ctrl) {
		fputs(" iv", out);
		print_block_args(out, ivs, f->num_ivs);
	}
}

static void print_func(FILE *out, const struct ir_func *f)
{
	fputs(f->is_thread ? "dataflow.thread " : "func.func ", out);
	if (f->visibility)
		fprintf(out, "%s ", f->visibility);
	fprintf(out, "@%s", f->name);
	if (f->is_thread) {
		fputs(" domain(", out);
		print_attr_value(out, f->domain);
		fputc(')', out);
	}
	print_block_args(out, f->body.args, f->num_inputs);
	if (f->is_thread)
		print_thread_clauses(out, f);
	if (f->num_attrs) {
		fputs(" attributes", out);
		print_attr_dict(out, f->attrs, f->num_attrs);
	}
	fputc(' ', out);
	print_region(out, &f->body, 0);
	fputc('\n', out);
}

void ir_print_module(FILE *out, const struct ir_module *m)
{
	for (const struct ir_func *f = m->funcs; f; f = f->next) {
		if (f != m->funcs)
			fputc('\n', out);
		print_func(out, f);
	}
}
