// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lower.c: a thread body to a dataflow graph.
 *
 * Values map to graph nodes per scope: the thread body is the top scope,
 * each scf.for body a nested one whose tokens flow once per iteration,
 * and each scf.if branch with effects one whose tokens flow once when it
 * is taken and never when not (a branch without effects is computed in
 * its parent scope and its results selected).
 * Thread arguments become input ports the first time they are used
 * (unused ones cost nothing), constants become IMM_B immediates or CONST
 * PEs triggered by a token of the scope that needs them, and a value an
 * inner scope uses from an outer one is repeated by an INVARIANT PE.
 * Memory effects on one memref are ordered with JOIN; side effects
 * (STORE, ATOMIC, SPAWN) are the roots of the graph: what they do not need is
 * dropped and every token nobody consumes goes to a SINK, because the
 * device only finishes a dispatch once the fabric is empty.
 */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

#define MAX_ARGS	LOOM_IMAGE_MAX_ARGS
#define MAX_SKIP	8
#define MAX_IF_RESULTS	8
#define MAX_READS	16	/* loads of a memref kept apart between stores */
#define AFTER_STREAM	(-2)	/* scope.mem[]: the loop's stream, once built */

struct vmap {
	const struct ir_value *v;
	int node;
};

/**
 * struct scope - the body being lowered and its value map
 * @parent: enclosing scope, NULL for the thread body
 * @map: values already available in this scope
 * @trigger: a node producing one token per activation of the scope (CONST
 *	triggers); G_NONE in the thread body until needed (the ctrl port)
 * @count: loop scopes: the iteration count node in @parent, or G_NONE
 *	when constant (@count_val)
 * @mem: per memref argument, the done token of the last store
 * @reads: per memref argument, load results since that store (beyond
 *	MAX_READS, joined into one)
 * @nreads: how many
 * @skip: reduction operations folded into REDUCE PEs
 * @in_loop: an scf.for body, or a branch in one: its tokens flow once per
 *	iteration
 * @spawn: outside loops, a token that arrives once the last spawn of the
 *	item so far has fired (spawns are chained on it), or G_NONE
 */
struct scope {
	struct scope *parent;
	struct vmap *map;
	int n, cap;
	int trigger;
	int count;
	int64_t count_val;
	int mem[MAX_ARGS];
	int reads[MAX_ARGS][MAX_READS];
	int nreads[MAX_ARGS];
	const struct ir_op *skip[MAX_SKIP];
	int num_skip;
	bool in_loop;
	int spawn;
	const struct ir_op *loop;	/* the scf.for this is the body of */
	int ctok;			/* its trip count token (in parent) */
};

struct view_layout;

struct lower {
	struct diag *d;
	struct ir_func *f;
	struct graph *g;
	int ports[LOOM_PORT_COMPLETION + 1][LOOM_MAX_OPERANDS];
	unsigned errors;
	int spawns;		/* spawns outside loops */
	int loop_spawns;	/* spawns inside loops */
	/*
	 * Stand-ins for the launch operands after the inputs, the '?' sizes
	 * of rank-N memref inputs (ir_func_size_operand()), so that value()
	 * maps and carries them into loops like any argument.
	 */
	struct ir_value sizes[LOOM_IMAGE_MAX_ARGS];
	struct view_layout *views;	/* the views lowered so far */
	/*
	 * Stands for the address parts view_linear() carries into a scope,
	 * mapped there so that invariant() finds and shares them.
	 */
	struct ir_value hoisted;
};

static void unsupported(struct lower *l, const struct ir_op *op,
			const char *why)
{
	diag_error(l->d, op->loc, "cannot lower %s: %s: not supported yet",
		   ir_opinfo[op->code].name, why);
	l->errors++;
}

/* ------------------------------------------------------------ nodes --- */

/* Whether @o computes what PE node @n would: same operation and inputs. */
static bool same_pe(const struct g_node *o, const struct g_node *n)
{
	return o->kind == G_PE && o->op == n->op && o->type == n->type &&
	       o->imm_b == n->imm_b && o->imm == n->imm &&
	       !memcmp(o->in, n->in, sizeof(n->in));
}

/*
 * Appends a node, or returns an identical pure one already there (common
 * subexpressions: every address computation asks for base + (i << k)).
 */
static int add(struct lower *l, const struct g_node *n)
{
	for (int i = 0; loom_op_info(n->op)->pure && i < l->g->num; i++)
		if (same_pe(&l->g->nodes[i], n))
			return i;
	return graph_add(l->g, n);
}

static int pe(struct lower *l, unsigned op, unsigned type, int a, int b,
	      int c, struct loom_loc loc)
{
	struct g_node n = {
		.kind = G_PE, .op = op, .type = type, .in = { a, b, c },
		.loc = loc,
	};

	return add(l, &n);
}

/* @op with B = @imm */
static int pe_imm(struct lower *l, unsigned op, unsigned type, int a,
		  uint64_t imm, int c, struct loom_loc loc)
{
	struct g_node n = {
		.kind = G_PE, .op = op, .type = type, .in = { a, G_NONE, c },
		.imm_b = true, .imm = imm, .loc = loc,
	};

	return add(l, &n);
}

/* The thread argument a port feeds, for the source map; NULL: none. */
static const struct ir_value *port_value(struct lower *l, unsigned kind,
					 unsigned index)
{
	struct ir_func *f = l->f;

	switch (kind) {
	case LOOM_PORT_OPERAND:
		return (int)index < f->num_inputs ? &f->body.args[index] : NULL;
	case LOOM_PORT_PAYLOAD:
		return f->work_item_arg >= 0 ? &f->body.args[f->work_item_arg] : NULL;
	case LOOM_PORT_COORD:
		return (int)index < f->num_ivs ? &ir_func_ivs(f)[index] : NULL;
	case LOOM_PORT_CTRL:
		return ir_func_ctrl(f);
	}
	return NULL;
}

static int port(struct lower *l, unsigned kind, unsigned index)
{
	const struct ir_value *v = port_value(l, kind, index);
	struct g_node n = { .kind = G_PORT, .port_kind = kind,
			    .port_index = index, .in = { G_NONE, G_NONE, G_NONE },
			    .loc = v ? v->loc : l->f->name_loc,
			    .name = v ? v->name : NULL };

	if (!l->ports[kind][index])
		l->ports[kind][index] = graph_add(l->g, &n) + 1;
	return l->ports[kind][index] - 1;
}

/* f32 travels as an i32 holding its bits: LOOM_TYPE_I32. */
unsigned lower_dev_type(const struct ir_type *t)
{
	return ir_type_size(t) == 8 ? LOOM_TYPE_I64 : LOOM_TYPE_I32;
}

/* i1 values are 0 or 1 on the fabric (compares produce 1), not -1. */
static int64_t const_of(const struct ir_value *v)
{
	return ir_type_width(v->type) == 1 ? v->const_val & 1 : v->const_val;
}

/* a + b * scale, wrapping as index arithmetic does (no signed overflow) */
static int64_t wrap_madd(int64_t a, int64_t b, int64_t scale)
{
	return (int64_t)((uint64_t)a + (uint64_t)b * (uint64_t)scale);
}

/* ----------------------------------------------------------- values --- */

static void map_put(struct lower *l, struct scope *s,
		    const struct ir_value *v, int node)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->map = realloc(s->map, s->cap * sizeof(*s->map));
		if (!s->map)
			abort();
	}
	s->map[s->n++] = (struct vmap){ v, node };
	if (node >= 0 && !l->g->nodes[node].name)
		l->g->nodes[node].name = v->name;
}

static int map_get(const struct scope *s, const struct ir_value *v)
{
	for (int i = 0; i < s->n; i++)
		if (s->map[i].v == v)
			return s->map[i].node;
	return G_NONE;
}

static int trigger(struct lower *l, struct scope *s)
{
	if (s->trigger == G_NONE)
		s->trigger = port(l, LOOM_PORT_CTRL, 0);
	return s->trigger;
}

static int konst(struct lower *l, struct scope *s, unsigned type, int64_t v,
		 struct loom_loc loc)
{
	struct g_node n = {
		.kind = G_PE, .op = LOOM_OP_CONST, .type = type,
		.in = { trigger(l, s), G_NONE, G_NONE }, .imm = (uint64_t)v,
		.loc = loc,
	};

	return add(l, &n);
}

/* The port a thread argument becomes. */
static int arg_port(struct lower *l, const struct ir_value *v)
{
	struct ir_func *f = l->f;
	int i = v->index;

	if (i < f->num_inputs)
		return f->dom_kind == LOOM_DOMAIN_DYNAMIC_WORK &&
				       i == f->work_item_arg ?
			       port(l, LOOM_PORT_PAYLOAD, 0) :
			       port(l, LOOM_PORT_OPERAND, i);
	if (i < f->num_inputs + f->num_ctrl)
		return port(l, LOOM_PORT_CTRL, 0);
	return port(l, LOOM_PORT_COORD, i - f->num_inputs - f->num_ctrl);
}

/*
 * A value of an outer scope, once per iteration of loop scope @s.  The
 * INVARIANT is this loop's own: add() would hand two loops of one trip
 * count the same one, and the second loop would then take its iterations
 * from the first's (the deadlock proof refuses such a mapping, rightly:
 * the fork of the shared INVARIANT waits for both loops).
 */
static int invariant(struct lower *l, struct scope *s, int n,
		     struct loom_loc loc)
{
	struct g_node inv = {
		.kind = G_PE, .op = LOOM_OP_INVARIANT, .type = LOOM_TYPE_I64,
		.in = { n, s->count, G_NONE }, .imm_b = s->count == G_NONE,
		.imm = s->count == G_NONE ? (uint64_t)s->count_val : 0,
		.loc = loc,
	};

	for (int i = 0; i < s->n; i++)
		if (s->map[i].node >= 0 && same_pe(&l->g->nodes[s->map[i].node], &inv))
			return s->map[i].node;
	return graph_add(l->g, &inv);
}

/* The node carrying @v in scope @s. */
static int value(struct lower *l, struct scope *s, const struct ir_value *v)
{
	int n = map_get(s, v);

	if (n != G_NONE)
		return n;
	if (v->is_const)
		n = konst(l, s, lower_dev_type(v->type), const_of(v), v->loc);
	else if (!s->parent && v >= l->sizes && v < l->sizes + LOOM_IMAGE_MAX_ARGS)
		n = port(l, LOOM_PORT_OPERAND, (unsigned)v->index);
	else if (!s->parent)
		n = arg_port(l, v);
	else
		n = invariant(l, s, value(l, s->parent, v), v->loc);
	map_put(l, s, v, n);
	return n;
}

/* ------------------------------------------------------- arithmetic --- */

static const uint8_t alu_op[] = {
	[ALU_ADD] = LOOM_OP_ADD, [ALU_SUB] = LOOM_OP_SUB,
	[ALU_MUL] = LOOM_OP_MUL, [ALU_DIVS] = LOOM_OP_DIVS,
	[ALU_DIVU] = LOOM_OP_DIVU, [ALU_REMS] = LOOM_OP_REMS,
	[ALU_REMU] = LOOM_OP_REMU, [ALU_AND] = LOOM_OP_AND,
	[ALU_OR] = LOOM_OP_OR, [ALU_XOR] = LOOM_OP_XOR,
	[ALU_SHL] = LOOM_OP_SHL, [ALU_SHRS] = LOOM_OP_SHRA,
	[ALU_SHRU] = LOOM_OP_SHRL,
	[ALU_MAXS] = LOOM_OP_GTS, [ALU_MINS] = LOOM_OP_LTS,
	[ALU_MAXU] = LOOM_OP_GTU, [ALU_MINU] = LOOM_OP_LTU,
	[ALU_FADD] = LOOM_OP_FADD, [ALU_FSUB] = LOOM_OP_FSUB,
	[ALU_FMUL] = LOOM_OP_FMUL, [ALU_FDIV] = LOOM_OP_FDIV,
	[ALU_FMAX] = LOOM_OP_FMAX, [ALU_FMIN] = LOOM_OP_FMIN,
	[ALU_FMA] = LOOM_OP_FMA, [ALU_FNEG] = LOOM_OP_FNEG,
	[ALU_SITOF] = LOOM_OP_SITOF, [ALU_UITOF] = LOOM_OP_UITOF,
	[ALU_FTOSI] = LOOM_OP_FTOSI, [ALU_FTOUI] = LOOM_OP_FTOUI,
};

static const uint8_t pred_op[IR_PRED_COUNT] = {
	[IR_PRED_EQ] = LOOM_OP_EQ, [IR_PRED_NE] = LOOM_OP_NE,
	[IR_PRED_SLT] = LOOM_OP_LTS, [IR_PRED_SLE] = LOOM_OP_LES,
	[IR_PRED_SGT] = LOOM_OP_GTS, [IR_PRED_SGE] = LOOM_OP_GES,
	[IR_PRED_ULT] = LOOM_OP_LTU, [IR_PRED_ULE] = LOOM_OP_LEU,
	[IR_PRED_UGT] = LOOM_OP_GTU, [IR_PRED_UGE] = LOOM_OP_GEU,
};

static const uint8_t fpred_op[IR_FPRED_COUNT] = {
	[IR_FPRED_FALSE] = LOOM_OP_FFALSE, [IR_FPRED_OEQ] = LOOM_OP_FOEQ,
	[IR_FPRED_OGT] = LOOM_OP_FOGT, [IR_FPRED_OGE] = LOOM_OP_FOGE,
	[IR_FPRED_OLT] = LOOM_OP_FOLT, [IR_FPRED_OLE] = LOOM_OP_FOLE,
	[IR_FPRED_ONE] = LOOM_OP_FONE, [IR_FPRED_ORD] = LOOM_OP_FORD,
	[IR_FPRED_UEQ] = LOOM_OP_FUEQ, [IR_FPRED_UGT] = LOOM_OP_FUGT,
	[IR_FPRED_UGE] = LOOM_OP_FUGE, [IR_FPRED_ULT] = LOOM_OP_FULT,
	[IR_FPRED_ULE] = LOOM_OP_FULE, [IR_FPRED_UNE] = LOOM_OP_FUNE,
	[IR_FPRED_UNO] = LOOM_OP_FUNO, [IR_FPRED_TRUE] = LOOM_OP_FTRUE,
};

unsigned lower_alu_op(enum ir_alu alu)
{
	return alu_op[alu];
}

unsigned lower_pred_op(enum ir_pred pred)
{
	return pred_op[pred];
}

unsigned lower_fpred_op(enum ir_fpred pred)
{
	return fpred_op[pred];
}

/* ---------------------------------------------- shared expansions --- */

/*
 * floor(a / d): the truncated quotient, less one when the remainder is
 * not zero and has the sign opposite to d's (r ^ d < 0); ceil: plus one
 * when it is not zero and has d's sign.  Compares give 0 or 1.
 */
int build_floor_ceil_div(const struct alu_builder *b, unsigned type,
			 bool ceil, int a, int d)
{
	int q = b->op(b->ctx, LOOM_OP_DIVS, type, a, d);
	int r = b->op(b->ctx, LOOM_OP_REMS, type, a, d);
	int sign = b->op(b->ctx, LOOM_OP_XOR, type, r, d);
	int side = b->op_imm(b->ctx, ceil ? LOOM_OP_GES : LOOM_OP_LTS, type,
			     sign, 0);
	int nonzero = b->op_imm(b->ctx, LOOM_OP_NE, type, r, 0);
	int adjust = b->op(b->ctx, LOOM_OP_AND, type, side, nonzero);

	return b->op(b->ctx, ceil ? LOOM_OP_ADD : LOOM_OP_SUB, type, q, adjust);
}

/* By @c > 0 the remainder's sign alone says which way to round. */
int build_floor_ceil_div_const(const struct alu_builder *b, unsigned type,
			       bool ceil, int a, int64_t c)
{
	int q = b->op_imm(b->ctx, LOOM_OP_DIVS, type, a, c);
	int r = b->op_imm(b->ctx, LOOM_OP_REMS, type, a, c);
	int adjust = b->op_imm(b->ctx, ceil ? LOOM_OP_GTS : LOOM_OP_LTS, type,
			       r, 0);

	return b->op(b->ctx, ceil ? LOOM_OP_ADD : LOOM_OP_SUB, type, q, adjust);
}

/* a mod c, c > 0, in [0, c): the truncated remainder, plus c if negative. */
int build_mod_const(const struct alu_builder *b, unsigned type, int a,
		    int64_t c)
{
	int r = b->op_imm(b->ctx, LOOM_OP_REMS, type, a, c);
	int negative = b->op_imm(b->ctx, LOOM_OP_LTS, type, r, 0);
	int adjust = b->op_imm(b->ctx, LOOM_OP_MUL, type, negative, c);

	return b->op(b->ctx, LOOM_OP_ADD, type, r, adjust);
}

/* A value while an affine expression is built: a constant or built. */
struct affine_value {
	bool is_const;
	int64_t c;
	int v;
};

static struct affine_value affine_const(int64_t c)
{
	return (struct affine_value){ .is_const = true, .c = c };
}

static struct affine_value affine_built(int v)
{
	return (struct affine_value){ .v = v };
}

/* x + y, x - y or x * y (a product by a constant is an immediate). */
static struct affine_value affine_arith(const struct alu_builder *b,
					enum ir_affine_kind kind,
					struct affine_value x,
					struct affine_value y)
{
	const unsigned t = LOOM_TYPE_I64;

	if (kind == AFF_MUL && !x.is_const && !y.is_const)	/* d0 * s0 */
		return affine_built(b->op(b->ctx, LOOM_OP_MUL, t, x.v, y.v));
	if (kind == AFF_MUL) {
		struct affine_value var = x.is_const ? y : x;
		int64_t c = x.is_const ? x.c : y.c;

		if (c == 0 || c == 1)
			return c ? var : affine_const(0);
		return affine_built(b->op_imm(b->ctx, LOOM_OP_MUL, t, var.v, c));
	}
	if (y.is_const && y.c == 0)
		return x;
	if (y.is_const)
		return affine_built(b->op_imm(b->ctx, kind == AFF_ADD ?
					      LOOM_OP_ADD : LOOM_OP_SUB,
					      t, x.v, y.c));
	if (x.is_const && kind == AFF_ADD)
		return affine_arith(b, kind, y, x);
	if (x.is_const)		/* c - y = y * -1 + c */
		return affine_arith(b, AFF_ADD,
				    affine_arith(b, AFF_MUL, y, affine_const(-1)),
				    x);
	return affine_built(b->op(b->ctx, kind == AFF_ADD ? LOOM_OP_ADD :
				  LOOM_OP_SUB, t, x.v, y.v));
}

static struct affine_value build_affine_expr(const struct alu_builder *b,
					     const struct ir_op *op,
					     const int *vals,
					     const struct ir_affine_expr *e)
{
	struct affine_value x, y;
	int64_t r;

	if (e->kind == AFF_CONST)
		return affine_const(e->val);
	if (e->kind == AFF_DIM || e->kind == AFF_SYM) {
		int i = (int)e->val + (e->kind == AFF_SYM ? op->num_args : 0);
		const struct ir_value *v = op->operands[i].value;

		return v->is_const ? affine_const(v->const_val) :
				     affine_built(vals[i]);
	}
	x = build_affine_expr(b, op, vals, e->lhs);
	y = build_affine_expr(b, op, vals, e->rhs);
	if (x.is_const && y.is_const) {
		struct ir_affine_expr k = { .kind = e->kind };
		struct ir_affine_expr cx = { .kind = AFF_CONST, .val = x.c };
		struct ir_affine_expr cy = { .kind = AFF_CONST, .val = y.c };

		k.lhs = &cx;
		k.rhs = &cy;
		ir_affine_eval(&k, NULL, NULL, 0, &r);
		return affine_const(r);
	}
	if (e->kind <= AFF_MUL)
		return affine_arith(b, e->kind, x, y);
	/* floordiv, ceildiv, mod: by a constant > 0 (the parser's rule) */
	if (y.c == 1)
		return e->kind == AFF_MOD ? affine_const(0) : x;
	if (e->kind == AFF_MOD)
		return affine_built(build_mod_const(b, LOOM_TYPE_I64, x.v, y.c));
	return affine_built(build_floor_ceil_div_const(b, LOOM_TYPE_I64,
						       e->kind == AFF_CEILDIV,
						       x.v, y.c));
}

/* min or max of @x and @y: a compare and a select. */
static struct affine_value affine_pick(const struct alu_builder *b, bool max,
				       struct affine_value x,
				       struct affine_value y)
{
	const unsigned t = LOOM_TYPE_I64;
	int cond;

	if (x.is_const && y.is_const)
		return affine_const(max ? (x.c > y.c ? x.c : y.c) :
					  (x.c < y.c ? x.c : y.c));
	if (x.is_const)
		return affine_pick(b, max, y, x);
	if (y.is_const) {
		/* the constant goes in B: min is x >= c ? c : x */
		cond = b->op_imm(b->ctx, max ? LOOM_OP_LES : LOOM_OP_GES, t,
				 x.v, y.c);
		return affine_built(b->select_imm(b->ctx, t, cond, y.c, x.v));
	}
	cond = b->op(b->ctx, max ? LOOM_OP_GTS : LOOM_OP_LTS, t, x.v, y.v);
	return affine_built(b->select(b->ctx, t, cond, x.v, y.v));
}

int build_affine_op(const struct alu_builder *b, const struct ir_op *op,
		    const int *vals)
{
	const struct ir_affine_map *m = op->map;
	struct affine_value r = build_affine_expr(b, op, vals, m->results[0]);

	for (int i = 1; i < m->num_results; i++)
		r = affine_pick(b, op->code == IR_OP_AFFINE_MAX, r,
				build_affine_expr(b, op, vals, m->results[i]));
	return r.is_const ? -1 : r.v;
}

/* The lowering as an alu_builder: a PE per operation. */
struct pe_builder {
	struct lower *l;
	struct loom_loc loc;
};

static int pe_builder_op(void *ctx, unsigned op, unsigned type, int a, int b)
{
	struct pe_builder *pb = ctx;

	return pe(pb->l, op, type, a, b, G_NONE, pb->loc);
}

static int pe_builder_op_imm(void *ctx, unsigned op, unsigned type, int a,
			     int64_t imm)
{
	struct pe_builder *pb = ctx;

	return pe_imm(pb->l, op, type, a, (uint64_t)imm, G_NONE, pb->loc);
}

static int pe_builder_select(void *ctx, unsigned type, int cond, int a,
			     int b)
{
	struct pe_builder *pb = ctx;

	return pe(pb->l, LOOM_OP_SELECT, type, cond, a, b, pb->loc);
}

static int pe_builder_select_imm(void *ctx, unsigned type, int cond,
				 int64_t imm, int b)
{
	struct pe_builder *pb = ctx;

	return pe_imm(pb->l, LOOM_OP_SELECT, type, cond, (uint64_t)imm, b,
		      pb->loc);
}

#define PE_BUILDER(pb) { &(pb), pe_builder_op, pe_builder_op_imm, \
			 pe_builder_select, pe_builder_select_imm }

/* affine.apply, min, max: the map's arithmetic as PEs. */
static void lower_affine(struct lower *l, struct scope *s, struct ir_op *op)
{
	struct pe_builder pb = { l, op->loc };
	struct alu_builder ab = PE_BUILDER(pb);
	int vals[64], n;

	if (op->num_operands > 64)
		return unsupported(l, op, "an affine map of more than 64 operands");
	for (int i = 0; i < op->num_operands; i++)
		if (!op->operands[i].value->is_const)
			vals[i] = value(l, s, op->operands[i].value);
	n = build_affine_op(&ab, op, vals);
	if (n < 0)
		return unsupported(l, op, "an affine map whose value is constant");
	map_put(l, s, &op->results[0], n);
}

/*
 * a op b, with a constant operand as the immediate when it can be: a
 * constant a by the mirror operation (loom_ops.h), which computes b op a.
 */
static int binary(struct lower *l, struct scope *s, unsigned op,
		  unsigned type, const struct ir_value *a,
		  const struct ir_value *b, struct loom_loc loc)
{
	unsigned mirror = loom_op_info(op)->mirror;

	if (b->is_const)
		return pe_imm(l, op, type, value(l, s, a), (uint64_t)const_of(b),
			      G_NONE, loc);
	if (a->is_const && mirror != LOOM_OP_NOP)
		return pe_imm(l, mirror, type, value(l, s, b),
			      (uint64_t)const_of(a), G_NONE, loc);
	return pe(l, op, type, value(l, s, a), value(l, s, b), G_NONE, loc);
}

/* c ? a : b */
static int select_of(struct lower *l, struct scope *s, unsigned type, int c,
		     const struct ir_value *a, const struct ir_value *b,
		     struct loom_loc loc)
{
	if (a->is_const)
		return pe_imm(l, LOOM_OP_SELECT, type, c, (uint64_t)const_of(a),
			      value(l, s, b), loc);
	return pe(l, LOOM_OP_SELECT, type, c, value(l, s, a), value(l, s, b),
		  loc);
}

/* max/min: a compare then a select (the fabric has no MAX PE). */
static int minmax(struct lower *l, struct scope *s, enum ir_alu alu,
		  unsigned type, const struct ir_value *a,
		  const struct ir_value *b, struct loom_loc loc)
{
	int c = binary(l, s, alu_op[alu], type, a, b, loc);

	return select_of(l, s, type, c, a, b, loc);
}

static void lower_binary(struct lower *l, struct scope *s, struct ir_op *op)
{
	enum ir_alu alu = ir_opinfo[op->code].alu;
	const struct ir_value *a = op->operands[0].value;
	const struct ir_value *b = op->operands[1].value;
	unsigned type = lower_dev_type(op->results[0].type);
	int n;

	if (alu >= ALU_MAXS && alu <= ALU_MINU) {
		n = minmax(l, s, alu, type, a, b, op->loc);
	} else if (alu == ALU_FLOORDIVS || alu == ALU_CEILDIVS) {
		struct pe_builder pb = { l, op->loc };
		struct alu_builder ab = PE_BUILDER(pb);
		bool ceil = alu == ALU_CEILDIVS;

		if (b->is_const && const_of(b) > 0)
			n = build_floor_ceil_div_const(&ab, type, ceil,
						       value(l, s, a),
						       const_of(b));
		else
			n = build_floor_ceil_div(&ab, type, ceil, value(l, s, a),
						 value(l, s, b));
	} else
		n = binary(l, s, alu_op[alu], type, a, b, op->loc);
	map_put(l, s, &op->results[0], n);
}

static void lower_cmp(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *a = op->operands[0].value;
	unsigned code = ir_opinfo[op->code].syntax == SYN_CMPF ?
			lower_fpred_op(op->fpred) : pred_op[op->pred];
	int n = binary(l, s, code, lower_dev_type(a->type), a,
		       op->operands[1].value, op->loc);

	map_put(l, s, &op->results[0], n);
}

/* negf, fma: one PE, B as the immediate when it is a constant. */
static void lower_nary(struct lower *l, struct scope *s, struct ir_op *op)
{
	unsigned code = alu_op[ir_opinfo[op->code].alu];
	const struct ir_value *b = op->num_operands > 1 ?
				   op->operands[1].value : NULL;
	int a = value(l, s, op->operands[0].value);
	int c = op->num_operands > 2 ? value(l, s, op->operands[2].value) :
				       G_NONE;
	int n;

	if (b && b->is_const)
		n = pe_imm(l, code, LOOM_TYPE_I32, a, (uint64_t)const_of(b), c,
			   op->loc);
	else
		n = pe(l, code, LOOM_TYPE_I32, a, b ? value(l, s, b) : G_NONE,
		       c, op->loc);
	map_put(l, s, &op->results[0], n);
}

static void lower_select(struct lower *l, struct scope *s, struct ir_op *op)
{
	int c = value(l, s, op->operands[0].value);
	int n = select_of(l, s, lower_dev_type(op->results[0].type), c,
			  op->operands[1].value, op->operands[2].value,
			  op->loc);

	map_put(l, s, &op->results[0], n);
}

/*
 * Casts.  Tokens hold i32 values sign-extended and i1 values as 0 or 1,
 * so sign extension from i32 and zero extension from i1 are free.
 */
static void lower_cast(struct lower *l, struct scope *s, struct ir_op *op)
{
	unsigned from = ir_type_width(op->type), to = ir_type_width(op->to_type);
	enum ir_alu alu = ir_opinfo[op->code].alu;
	bool sext = alu == ALU_CASTS;
	int n = value(l, s, op->operands[0].value);

	if (alu == ALU_SITOF || alu == ALU_UITOF)	/* type: the integer's */
		n = pe(l, alu_op[alu], lower_dev_type(op->type), n, G_NONE,
		       G_NONE, op->loc);
	else if (alu == ALU_FTOSI || alu == ALU_FTOUI)
		n = pe(l, alu_op[alu], lower_dev_type(op->to_type), n, G_NONE,
		       G_NONE, op->loc);
	else if (alu == ALU_BITCAST)
		;	/* i32 and f32 tokens are the same bits */
	else if (to > from && from == 1 && sext)
		n = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, n, (uint64_t)-1,
			   G_NONE, op->loc);
	else if (to > from && from == 32 && !sext)
		n = pe_imm(l, LOOM_OP_AND, LOOM_TYPE_I64, n, 0xffffffffULL,
			   G_NONE, op->loc);
	else if (to < from && to == 32)
		n = pe(l, LOOM_OP_MOV, LOOM_TYPE_I32, n, G_NONE, G_NONE,
		       op->loc);
	else if (to < from && to == 1)
		n = pe_imm(l, LOOM_OP_AND, LOOM_TYPE_I64, n, 1, G_NONE,
			   op->loc);
	map_put(l, s, &op->results[0], n);
}

/* ----------------------------------------------------------- memory --- */

/*
 * The thread argument a memref is, or a view of, or -1 (an iter_arg,
 * say): its accesses are ordered with that argument's.
 */
static int memref_arg(const struct ir_value *m)
{
	m = ir_view_root(m);
	return !m->def && m->region && !m->region->parent_op ? m->index : -1;
}

/* @n once every token of @toks (G_NONE ones skipped) has arrived. */
static int join_all(struct lower *l, int n, const int *toks, int num,
		    struct loom_loc loc)
{
	int pend[2], np = 0;

	for (int i = 0; i < num; i++) {
		if (toks[i] == G_NONE)
			continue;
		pend[np++] = toks[i];
		if (np == 2) {
			n = pe(l, LOOM_OP_JOIN, LOOM_TYPE_I64, n, pend[0],
			       pend[1], loc);
			np = 0;
		}
	}
	if (np)
		n = pe(l, LOOM_OP_JOIN, LOOM_TYPE_I64, n, pend[0], G_NONE, loc);
	return n;
}

/* @n, released only once @tok (if any) has arrived. */
static int after(struct lower *l, int n, int tok, struct loom_loc loc)
{
	if (tok == G_NONE)
		return n;
	return pe(l, LOOM_OP_JOIN, LOOM_TYPE_I64, n, tok, G_NONE, loc);
}

/* The node of size operand @j of thread input @m: a launch operand. */
static int layout_value(struct lower *l, struct scope *s,
			const struct ir_value *m, int j)
{
	struct ir_value *v;

	j = ir_func_layout_operand(l->f, m->index, j);
	v = &l->sizes[j - l->f->num_inputs];

	v->index = j;
	v->type = &ir_index;
	v->loc = m->loc;
	return value(l, s, v);
}

/* The node of size @k of thread input @m, a '?' size: a launch operand. */
static int size_value(struct lower *l, struct scope *s,
		      const struct ir_value *m, int k)
{
	return layout_value(l, s, m, ir_size_operand_of(m->type, k));
}

/*
 * The element number of indices @uses when an inner size is '?' (a
 * launch operand): ((i0 * d1 + i1) * d2 + i2) ..., static sizes as MUL
 * immediates, constant indices as ADD immediates.
 */
static int dynamic_linear(struct lower *l, struct scope *s, struct ir_op *op,
			  const struct ir_value *m, const struct ir_use *uses)
{
	const struct ir_type *t = op->type;
	int acc = value(l, s, uses[0].value);

	for (int k = 1; k < t->rank; k++) {
		const struct ir_value *idx = uses[k].value;

		if (t->dims[k] != IR_DYNAMIC)
			acc = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, acc,
				     (uint64_t)t->dims[k], G_NONE, op->loc);
		else
			acc = pe(l, LOOM_OP_MUL, LOOM_TYPE_I64, acc,
				 size_value(l, s, m, k), G_NONE, op->loc);
		if (!idx->is_const)
			acc = pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, acc,
				 value(l, s, idx), G_NONE, op->loc);
		else if (idx->const_val)
			acc = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, acc,
				     (uint64_t)idx->const_val, G_NONE, op->loc);
	}
	return acc;
}

/* ------------------------------------------------------------ views --- */

/*
 * A view is address arithmetic on its root memref (a thread argument):
 * nothing about it reaches the fabric but the PEs that compute addresses.
 * An offset or stride is a term, c + node: constants fold (a constant
 * stride is a MUL immediate, a constant offset part of the ADD immediate
 * every address has), values are PEs built where the view operation is.
 */
struct term {
	int64_t c;
	int node;		/* G_NONE: the term is the constant c */
};

static struct term term_const(int64_t c)
{
	return (struct term){ c, G_NONE };
}

static struct term term_node(int node)
{
	return (struct term){ 0, node };
}

static struct term term_add(struct lower *l, struct term a, struct term b,
			    struct loom_loc loc)
{
	struct term r = { a.c + b.c, a.node == G_NONE ? b.node : a.node };

	if (a.node != G_NONE && b.node != G_NONE)
		r.node = pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, a.node, b.node,
			    G_NONE, loc);
	return r;
}

/* a * b, each either a constant or a node (never both). */
static struct term term_mul(struct lower *l, struct term a, struct term b,
			    struct loom_loc loc)
{
	if (a.node == G_NONE && b.node == G_NONE)
		return term_const(a.c * b.c);
	if (a.node == G_NONE)
		return term_mul(l, b, a, loc);
	if (b.node != G_NONE)
		return term_node(pe(l, LOOM_OP_MUL, LOOM_TYPE_I64, a.node,
				    b.node, G_NONE, loc));
	if (b.c == 0 || b.c == 1)
		return b.c ? a : term_const(0);
	return term_node(pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, a.node,
				(uint64_t)b.c, G_NONE, loc));
}

/* A value's term in scope @s: its constant, or its node. */
static struct term term_of(struct lower *l, struct scope *s,
			   const struct ir_value *v)
{
	return v->is_const ? term_const(v->const_val) :
			     term_node(value(l, s, v));
}

/**
 * struct view_layout - a lowered view
 * @m: the view (a view operation's result)
 * @offset_c: the constant part of its offset from its root, in elements
 * @offset: the rest, a stand-in value (index), or NULL when none
 * @stride_c: per size, its stride when constant
 * @stride: per size, a stand-in value for a stride that is not
 * @stand_in: storage for those stand-ins: mapped, in the scope the view
 *	operation is lowered in, to the nodes computing them, so that
 *	value() carries them into inner scopes like any value
 * @next: the view lowered before
 */
struct view_layout {
	const struct ir_value *m;
	int64_t offset_c;
	const struct ir_value *offset;
	int64_t stride_c[IR_MEMREF_MAX_RANK];
	const struct ir_value *stride[IR_MEMREF_MAX_RANK];
	struct ir_value stand_in[1 + IR_MEMREF_MAX_RANK];
	struct view_layout *next;
};

static struct view_layout *find_view(struct lower *l, const struct ir_value *m)
{
	struct view_layout *vl = l->views;

	while (vl && vl->m != m)
		vl = vl->next;
	return vl;
}

/*
 * The layout of memref @m in scope @s: a view's as lowered, a strided
 * thread argument's (its '?' entries launch operands), or a thread
 * argument's row-major one (a stride after a '?' size is the product of
 * the sizes after it, size operands among them), offset 0.
 */
static void layout_terms(struct lower *l, struct scope *s,
			 const struct ir_value *m, struct term *offset,
			 struct term *strides, struct loom_loc loc)
{
	const struct ir_type *t = m->type;
	struct view_layout *vl = find_view(l, m);
	struct term stride = term_const(1);

	if (vl) {
		*offset = term_const(vl->offset_c);
		if (vl->offset)
			offset->node = value(l, s, vl->offset);
		for (int k = 0; k < t->rank; k++)
			strides[k] = vl->stride[k] ?
				     term_node(value(l, s, vl->stride[k])) :
				     term_const(vl->stride_c[k]);
		return;
	}
	if (t->strided) {	/* an input: its '?' entries are operands */
		*offset = t->offset != IR_DYNAMIC ? term_const(t->offset) :
			  term_node(layout_value(l, s, m, ir_offset_operand(t)));
		for (int k = 0; k < t->rank; k++)
			strides[k] = t->strides[k] != IR_DYNAMIC ?
				     term_const(t->strides[k]) :
				     term_node(layout_value(l, s, m,
							    ir_stride_operand(t, k)));
		return;
	}
	*offset = term_const(0);
	for (int k = t->rank - 1; k >= 0; k--) {
		strides[k] = stride;
		stride = term_mul(l, stride,
				  t->dims[k] != IR_DYNAMIC ?
				  term_const(t->dims[k]) :
				  term_node(size_value(l, s, m, k)), loc);
	}
}

/* A stand-in value for node @n, mapped in scope @s. */
static const struct ir_value *stand_in(struct lower *l, struct scope *s,
				       struct ir_value *v, int n,
				       const struct ir_value *of)
{
	v->type = &ir_index;
	v->loc = of->loc;
	v->name = of->name;
	map_put(l, s, v, n);
	return v;
}

/*
 * memref.subview: offset = source offset + sum of offset k * source
 * stride k; stride k = source stride k * stride k; the sizes a rank
 * reduction drops take their strides with them.
 */
static void subview_layout(struct lower *l, struct scope *s, struct ir_op *op,
			   struct term *offset, struct term *strides)
{
	struct term st[IR_MEMREF_MAX_RANK];

	for (int k = 0; k < op->type->rank; k++) {
		const struct ir_value *x;
		int64_t c;
		struct term o, t;

		o = ir_view_entry(op, IR_VIEW_OFFSETS, k, &c, &x) ?
		    term_const(c) : term_of(l, s, x);
		t = ir_view_entry(op, IR_VIEW_STRIDES, k, &c, &x) ?
		    term_const(c) : term_of(l, s, x);
		*offset = term_add(l, *offset, term_mul(l, o, strides[k], op->loc),
				   op->loc);
		st[k] = term_mul(l, strides[k], t, op->loc);
	}
	for (int i = 0; i < op->view->num_kept; i++)
		strides[i] = st[op->view->kept[i]];
}

/*
 * memref.cast: the source's layout, except where the result type states
 * a stride or offset: the program asserts it, and a constant folds.
 */
static void cast_layout(struct ir_op *op, struct term *offset,
			struct term *strides)
{
	int64_t rs[IR_MEMREF_MAX_RANK], ro;

	ir_memref_layout(op->to_type, rs, &ro);
	if (ro != IR_DYNAMIC)
		*offset = term_const(ro);
	for (int k = 0; k < op->to_type->rank; k++)
		if (rs[k] != IR_DYNAMIC)
			strides[k] = term_const(rs[k]);
}

/* memref.reinterpret_cast: its offset and strides, from the root's base. */
static void reinterpret_layout(struct lower *l, struct scope *s,
			       struct ir_op *op, struct term *offset,
			       struct term *strides)
{
	const struct ir_value *x;
	int64_t c;

	*offset = ir_view_entry(op, IR_VIEW_OFFSETS, 0, &c, &x) ?
		  term_const(c) : term_of(l, s, x);
	for (int k = 0; k < op->to_type->rank; k++)
		strides[k] = ir_view_entry(op, IR_VIEW_STRIDES, k, &c, &x) ?
			     term_const(c) : term_of(l, s, x);
}

/* Size @k of a view or argument @m: a constant or a node. */
static struct term view_dim(struct lower *l, struct scope *s,
			    const struct ir_value *m, int k,
			    struct loom_loc loc)
{
	const struct ir_op *def = m->def;
	const struct ir_value *x;
	struct term t;
	int64_t c;
	int j;

	if (m->type->dims[k] != IR_DYNAMIC)
		return term_const(m->type->dims[k]);
	if (!def)
		return term_node(size_value(l, s, m, k));
	switch (def->code) {
	case IR_OP_MEMREF_CAST:
		return view_dim(l, s, def->operands[0].value, k, loc);
	case IR_OP_MEMREF_COLLAPSE_SHAPE:
		t = term_const(1);
		for (j = 0; j < def->type->rank; j++)
			if (def->view->group[j] == k)
				t = term_mul(l, t, view_dim(l, s,
							    def->operands[0].value,
							    j, loc), loc);
		return t;
	case IR_OP_MEMREF_SUBVIEW:
		j = def->view->kept[k];
		break;
	default:	/* reinterpret_cast, expand_shape: as written */
		j = k;
		break;
	}
	return ir_view_entry(def, IR_VIEW_SIZES, j, &c, &x) ? term_const(c) :
							      term_of(l, s, x);
}

/*
 * memref.expand_shape splits each size's stride over its group: the
 * innermost keeps it, each other one is the next one's times the next
 * size.  collapse_shape keeps each group's innermost stride.
 */
static void reshape_layout(struct lower *l, struct scope *s, struct ir_op *op,
			   struct term *strides)
{
	const struct ir_view *w = op->view;
	const struct ir_type *res = op->to_type;
	struct term st[IR_MEMREF_MAX_RANK];

	if (op->code == IR_OP_MEMREF_COLLAPSE_SHAPE) {
		for (int j = 0; j < op->type->rank; j++)
			st[w->group[j]] = strides[j];
		memcpy(strides, st, res->rank * sizeof(*st));
		return;
	}
	for (int k = res->rank - 1; k >= 0; k--)
		st[k] = k == res->rank - 1 || w->group[k + 1] != w->group[k] ?
			strides[w->group[k]] :
			term_mul(l, st[k + 1],
				 view_dim(l, s, &op->results[0], k + 1, op->loc),
				 op->loc);
	memcpy(strides, st, res->rank * sizeof(*st));
}

/*
 * A view operation: the result's layout from its source's, recorded with
 * stand-ins for what is not constant.
 */
static void lower_view(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *src = op->operands[0].value;
	const struct ir_value *m = &op->results[0];
	struct term offset, strides[IR_MEMREF_MAX_RANK];
	struct view_layout *vl;

	if (memref_arg(src) < 0)
		return unsupported(l, op, "a memref that is not a thread argument");
	layout_terms(l, s, src, &offset, strides, op->loc);
	switch (op->code) {
	case IR_OP_MEMREF_SUBVIEW:
		subview_layout(l, s, op, &offset, strides);
		break;
	case IR_OP_MEMREF_CAST:
		cast_layout(op, &offset, strides);
		break;
	case IR_OP_MEMREF_REINTERPRET_CAST:
		reinterpret_layout(l, s, op, &offset, strides);
		break;
	default:
		reshape_layout(l, s, op, strides);
		break;
	}
	vl = calloc(1, sizeof(*vl));
	if (!vl)
		abort();
	vl->m = m;
	vl->offset_c = offset.c;
	if (offset.node != G_NONE)
		vl->offset = stand_in(l, s, &vl->stand_in[0], offset.node, m);
	for (int i = 0; i < m->type->rank; i++) {
		vl->stride_c[i] = strides[i].c;
		if (strides[i].node != G_NONE)
			vl->stride[i] = stand_in(l, s, &vl->stand_in[1 + i],
						 strides[i].node, m);
	}
	vl->next = l->views;
	l->views = vl;
}

/*
 * Is @v in scope @s without anything computed below it: a constant, a
 * thread argument or launch operand, or a value of @s or around it?
 */
static bool available_in(const struct lower *l, const struct scope *s,
			 const struct ir_value *v)
{
	if (v->is_const || (!v->def && v->region && !v->region->parent_op) ||
	    (v >= l->sizes && v < l->sizes + LOOM_IMAGE_MAX_ARGS))
		return true;
	for (; s; s = s->parent)
		if (map_get(s, v) != G_NONE)
			return true;
	return false;
}

/* Is the layout of memref @m (its stand-ins) in scope @s? */
static bool layout_available(struct lower *l, const struct scope *s,
			     const struct ir_value *m)
{
	const struct view_layout *vl = find_view(l, m);

	if (!vl)
		return true;	/* an argument's: launch operands */
	if (vl->offset && !available_in(l, s, vl->offset))
		return false;
	for (int k = 0; k < m->type->rank; k++)
		if (vl->stride[k] && !available_in(l, s, vl->stride[k]))
			return false;
	return true;
}

/*
 * The offset (@with_offset) plus index k * stride k for each k in @mask
 * of view @m, in scope @s.  The part a scope around @s has the values
 * for is computed there and carried in: a loop over k adds k * stride to
 * i * stride + offset computed once per activation, as a hand-linearised
 * loop does.
 */
static struct term view_linear(struct lower *l, struct scope *s,
			       const struct ir_value *m,
			       const struct ir_use *uses, unsigned mask,
			       bool with_offset, struct loom_loc loc)
{
	struct term lin = term_const(0), offset, strides[IR_MEMREF_MAX_RANK];
	unsigned outer = 0;

	if (s->parent && layout_available(l, s->parent, m)) {
		for (int k = 0; k < m->type->rank; k++)
			if ((mask >> k & 1) &&
			    available_in(l, s->parent, uses[k].value))
				outer |= 1U << k;
	}
	if (outer || (s->parent && with_offset &&
		      layout_available(l, s->parent, m))) {
		lin = view_linear(l, s->parent, m, uses, outer, with_offset,
				  loc);
		if (lin.node != G_NONE) {
			lin.node = invariant(l, s, lin.node, loc);
			map_put(l, s, &l->hoisted, lin.node);
		}
		mask &= ~outer;
		with_offset = false;
	}
	if (!mask && !with_offset)
		return lin;
	layout_terms(l, s, m, &offset, strides, loc);
	if (with_offset)
		lin = term_add(l, lin, offset, loc);
	for (int k = 0; k < m->type->rank; k++)
		if (mask >> k & 1)
			lin = term_add(l, lin,
				       term_mul(l, term_of(l, s, uses[k].value),
						strides[k], loc),
				       loc);
	return lin;
}

/*
 * The address of indices @uses of view @m: its root's base + ((offset +
 * sum of index k * stride k) << log2 of the element size), the constant
 * part an ADD immediate, as address() builds it for a thread argument.
 */
static int view_address(struct lower *l, struct scope *s, struct ir_op *op,
			const struct ir_value *m, const struct ir_use *uses)
{
	unsigned shift = ir_type_size(op->type->elem) == 4 ? 2 : 3;
	struct term linear = view_linear(l, s, m, uses,
					 (1U << m->type->rank) - 1, true,
					 op->loc);
	int a = value(l, s, ir_view_root(m));

	if (linear.node != G_NONE)
		a = pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, a,
		       pe_imm(l, LOOM_OP_SHL, LOOM_TYPE_I64, linear.node, shift,
			      G_NONE, op->loc),
		       G_NONE, op->loc);
	if (linear.c)
		a = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, a,
			   (uint64_t)linear.c << shift, G_NONE, op->loc);
	return a;
}

/* memref.dim of a view's '?' size (view_dim()). */
static void lower_view_dim(struct lower *l, struct scope *s, struct ir_op *op)
{
	struct term t = view_dim(l, s, op->operands[0].value,
				 (int)op->operands[1].value->const_val, op->loc);

	map_put(l, s, &op->results[0], t.node != G_NONE ? t.node :
		konst(l, s, LOOM_TYPE_I64, t.c, op->loc));
}

/* memref.dim of a '?' size of a rank-N input (a static one is folded). */
static void lower_dim(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *m = op->operands[0].value;

	if (m->def && m->def->view)
		return lower_view_dim(l, s, op);
	if (memref_arg(m) < 0)
		return unsupported(l, op, "a memref that is not a thread argument");
	map_put(l, s, &op->results[0],
		size_value(l, s, m, (int)op->operands[1].value->const_val));
}

/*
 * base + (sum of index k * stride k) * element size, over the row-major
 * strides of @op's memref type (uses[0..rank) are the indices).  Strides
 * are static, so each becomes a multiply by an immediate (none for the
 * last index) and constant indices fold into one byte offset: a rank-2
 * load costs what the hand-linearised i * N + j does.
 */
static int address(struct lower *l, struct scope *s, struct ir_op *op,
		   const struct ir_value *m, const struct ir_use *uses)
{
	unsigned shift = ir_type_size(op->type->elem) == 4 ? 2 : 3;
	const struct ir_type *t = op->type;
	int a, linear = G_NONE;
	uint64_t offset = 0;

	if ((m->def && m->def->view) || m->type->strided)
		return view_address(l, s, op, m, uses);
	a = value(l, s, m);

	/* a '?' after the first size: a stride is a value, not an immediate */
	if (ir_size_operand_of(t, t->rank) > ir_size_operand_of(t, 1))
		return pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, a,
			  pe_imm(l, LOOM_OP_SHL, LOOM_TYPE_I64,
				 dynamic_linear(l, s, op, m, uses), shift,
				 G_NONE, op->loc),
			  G_NONE, op->loc);

	for (int k = 0; k < t->rank; k++) {
		const struct ir_value *idx = uses[k].value;
		uint64_t stride = (uint64_t)ir_memref_stride(t, k);
		int term;

		if (idx->is_const) {
			offset += (uint64_t)idx->const_val * stride;
			continue;
		}
		term = value(l, s, idx);
		if (stride != 1)
			term = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, term, stride,
				      G_NONE, op->loc);
		linear = linear == G_NONE ? term :
			 pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, linear, term, G_NONE,
			    op->loc);
	}
	if (linear != G_NONE)
		a = pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, a,
		       pe_imm(l, LOOM_OP_SHL, LOOM_TYPE_I64, linear, shift,
			      G_NONE, op->loc),
		       G_NONE, op->loc);
	if (offset)
		a = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, a, offset << shift,
			   G_NONE, op->loc);
	return a;
}

static bool defined_in(const struct ir_value *v, const struct ir_region *r);

/*
 * How an index changes from one iteration of @loop to the next, per step
 * of its induction variable: not at all, by a constant, or by a constant
 * times a value from outside the loop.
 */
enum slope_kind { SLOPE_NONE, SLOPE_CONST, SLOPE_VALUE };

struct slope {
	enum slope_kind kind;
	int64_t c;
	const struct ir_value *v;
};

static bool slope_add(struct slope *to, struct slope x, int64_t scale)
{
	x.c = wrap_madd(0, x.c, scale);
	if (x.kind == SLOPE_NONE || !x.c)
		return true;
	if (to->kind == SLOPE_NONE) {
		*to = x;
		return true;
	}
	if (to->kind != x.kind || to->v != x.v)
		return false;
	to->c = wrap_madd(to->c, x.c, 1);
	if (!to->c)
		to->kind = SLOPE_NONE;
	return true;
}

/* The ALU operation of index arithmetic @d (ADD, SUB, MUL), or ALU_NONE. */
static enum ir_alu index_alu(const struct ir_op *d)
{
	enum ir_alu alu = ir_opinfo[d->code].alu;

	if ((ir_opinfo[d->code].syntax != SYN_BINARY &&
	     ir_opinfo[d->code].syntax != SYN_INDEX_BINARY) ||
	    (alu != ALU_ADD && alu != ALU_SUB && alu != ALU_MUL))
		return ALU_NONE;
	return alu;
}

/*
 * @v's slope over @loop, when @v is index additions, subtractions and
 * products of the induction variable, constants and values from outside
 * the loop, with the induction variable's coefficient a constant or a
 * constant times one outside value; false otherwise.
 */
static bool slope_of(const struct ir_op *loop, const struct ir_value *v,
		     struct slope *out)
{
	const struct ir_op *d = v->def;
	struct slope a = { SLOPE_NONE, 0, NULL }, b = a;
	const struct ir_value *x, *y;
	enum ir_alu alu;

	*out = a;
	if (v->is_const || (v != &loop->body->args[0] &&
			    !defined_in(v, loop->body)))
		return true;
	if (v == &loop->body->args[0]) {
		out->kind = SLOPE_CONST;
		out->c = 1;
		return true;
	}
	if (!d || v->type != &ir_index || d->code == IR_OP_AFFINE_APPLY)
		return false;
	alu = index_alu(d);
	if (alu == ALU_NONE)
		return false;
	x = d->operands[0].value;
	y = d->operands[1].value;
	if (!slope_of(loop, x, &a) || !slope_of(loop, y, &b))
		return false;
	if (alu != ALU_MUL) {
		*out = a;
		return slope_add(out, b, alu == ALU_SUB ? -1 : 1);
	}
	if (b.kind != SLOPE_NONE) {	/* the varying factor first */
		const struct ir_value *t = x;
		struct slope ts = a;

		x = y;
		y = t;
		a = b;
		b = ts;
	}
	if (b.kind != SLOPE_NONE)
		return false;
	if (a.kind == SLOPE_NONE)
		return true;
	if (y->is_const)
		return slope_add(out, a, y->const_val);
	if (a.kind != SLOPE_CONST || defined_in(y, loop->body))
		return false;
	out->kind = SLOPE_VALUE;
	out->c = a.c;
	out->v = y;
	return true;
}

/* A value built in the scope enclosing a loop: a constant or a node. */
struct outer {
	bool is_const;
	int64_t c;
	int node;
};

static int outer_node(struct lower *l, struct scope *s, struct outer x,
		      struct loom_loc loc)
{
	return x.is_const ? konst(l, s, LOOM_TYPE_I64, x.c, loc) : x.node;
}

/*
 * @v of slope_of()'s form as it is in @loop's first iteration, built in
 * the enclosing scope @ps: the induction variable is the lower bound.
 */
static struct outer first_value(struct lower *l, struct scope *ps,
				const struct ir_op *loop,
				const struct ir_value *v, struct loom_loc loc)
{
	const struct ir_value *lb = loop->operands[0].value;
	struct outer r = { false, 0, G_NONE }, x, y;
	enum ir_alu alu;
	unsigned op;

	if (v == &loop->body->args[0])
		v = lb;
	if (v->is_const) {
		r.is_const = true;
		r.c = v->const_val;
		return r;
	}
	if (!defined_in(v, loop->body)) {
		r.node = value(l, ps, v);
		return r;
	}
	alu = index_alu(v->def);
	x = first_value(l, ps, loop, v->def->operands[0].value, loc);
	y = first_value(l, ps, loop, v->def->operands[1].value, loc);
	if (x.is_const && y.is_const) {
		r.is_const = true;
		r.c = alu == ALU_MUL ? (int64_t)((uint64_t)x.c * (uint64_t)y.c) :
		      wrap_madd(x.c, y.c, alu == ALU_SUB ? -1 : 1);
		return r;
	}
	op = alu == ALU_MUL ? LOOM_OP_MUL : alu == ALU_SUB ? LOOM_OP_SUB :
	     LOOM_OP_ADD;
	if (alu == ALU_MUL && ((x.is_const && !x.c) || (y.is_const && !y.c))) {
		r.is_const = true;
		return r;
	}
	if (alu != ALU_SUB && x.is_const) {
		struct outer t = x;

		x = y;
		y = t;
	}
	if (y.is_const && alu != ALU_MUL && !y.c)
		return x;
	if (y.is_const && alu == ALU_MUL && y.c == 1)
		return x;
	if (y.is_const)
		r.node = pe_imm(l, op, LOOM_TYPE_I64, x.node, (uint64_t)y.c,
				G_NONE, loc);
	else
		r.node = pe(l, op, LOOM_TYPE_I64, outer_node(l, ps, x, loc),
			    y.node, G_NONE, loc);
	return r;
}

/*
 * The address of load @op in the body of a loop, when its index is
 * linear in the induction variable (slope_of()): a STREAM in the scope
 * enclosing the loop, from the first iteration's address by the slope's
 * bytes, one a trip, so no INVARIANT, index arithmetic or shift runs in
 * the loop; G_NONE otherwise (address() builds it in the body).
 */
static int stream_address(struct lower *l, struct scope *s, struct ir_op *op,
			  const struct ir_value *m, const struct ir_use *uses)
{
	const struct ir_type *t = op->type;
	const struct ir_op *loop = s->loop;
	const struct ir_value *st;
	unsigned shift = ir_type_size(t->elem) == 4 ? 2 : 3;
	struct slope sl = { SLOPE_NONE, 0, NULL };
	struct outer first = { true, 0, G_NONE };
	struct scope *ps = s->parent;
	const struct view_layout *vl = NULL;
	int64_t strides[IR_MEMREF_MAX_RANK];
	int start, step;

	if (!loop)
		return G_NONE;
	if (m->def && m->def->view) {
		/*
		 * A view made outside the loop with constant strides: its
		 * offset is loop-invariant, so its address is as linear in
		 * the induction variable as an argument's (issue 31: a view
		 * costs nothing a hand-linearised index does not).
		 */
		vl = find_view(l, m);
		if (!vl || !layout_available(l, ps, m))
			return G_NONE;
		for (int k = 0; k < t->rank; k++) {
			if (vl->stride[k])
				return G_NONE;
			strides[k] = vl->stride_c[k];
		}
	} else if (t->strided ||
		   ir_size_operand_of(t, t->rank) > ir_size_operand_of(t, 1)) {
		return G_NONE;
	} else {
		for (int k = 0; k < t->rank; k++)
			strides[k] = ir_memref_stride(t, k);
	}
	st = loop->operands[2].value;
	for (int k = 0; k < t->rank; k++) {
		struct slope x;

		if (!slope_of(loop, uses[k].value, &x) ||
		    !slope_add(&sl, x, strides[k]))
			return G_NONE;
	}
	if (sl.kind == SLOPE_NONE)
		return G_NONE;
	if (vl) {
		first.c = vl->offset_c;
		if (vl->offset) {
			first.is_const = false;
			first.node = value(l, ps, vl->offset);
		}
	}
	for (int k = 0; k < t->rank; k++) {
		int64_t stride = strides[k];
		struct outer x = first_value(l, ps, loop, uses[k].value,
					     op->loc);

		if (x.is_const) {
			first.c = wrap_madd(first.c, x.c, stride);
			continue;
		}
		if (stride != 1)
			x.node = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, x.node,
					(uint64_t)stride, G_NONE, op->loc);
		first.node = first.is_const ? x.node :
			     pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, first.node,
				x.node, G_NONE, op->loc);
		first.is_const = false;
	}
	start = value(l, ps, vl ? ir_view_root(m) : m);
	if (!first.is_const)
		start = pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, start,
			   pe_imm(l, LOOM_OP_SHL, LOOM_TYPE_I64, first.node,
				  shift, G_NONE, op->loc),
			   G_NONE, op->loc);
	if (!first.is_const && first.c)
		start = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, start,
			       (uint64_t)first.c << shift, G_NONE, op->loc);
	else if (first.is_const && first.c)
		start = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, start,
			       (uint64_t)first.c << shift, G_NONE, op->loc);
	if (sl.kind == SLOPE_CONST && st->is_const)
		return pe_imm(l, LOOM_OP_STREAM, LOOM_TYPE_I64, start,
			      ((uint64_t)sl.c * (uint64_t)st->const_val) << shift,
			      s->ctok, op->loc);
	if (sl.kind == SLOPE_CONST) {
		step = value(l, ps, st);
		if (sl.c != 1)
			step = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, step,
				      (uint64_t)sl.c, G_NONE, op->loc);
	} else {
		step = value(l, ps, sl.v);
		if (sl.c != 1)
			step = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, step,
				      (uint64_t)sl.c, G_NONE, op->loc);
		if (!st->is_const)
			step = pe(l, LOOM_OP_MUL, LOOM_TYPE_I64, step,
				  value(l, ps, st), G_NONE, op->loc);
		else if (st->const_val != 1)
			step = pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, step,
				      (uint64_t)st->const_val, G_NONE, op->loc);
	}
	step = pe_imm(l, LOOM_OP_SHL, LOOM_TYPE_I64, step, shift, G_NONE,
		      op->loc);
	return pe(l, LOOM_OP_STREAM, LOOM_TYPE_I64, start, step, s->ctok,
		  op->loc);
}

static void lower_load(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *m = op->operands[0].value;
	int k = memref_arg(m);
	int a, n;

	if (k < 0)
		return unsupported(l, op, "a memref that is not a thread argument");
	a = stream_address(l, s, op, m, &op->operands[1]);
	if (a == G_NONE)
		a = address(l, s, op, m, &op->operands[1]);
	a = after(l, a, s->mem[k], op->loc);
	n = pe(l, LOOM_OP_LOAD, lower_dev_type(op->type->elem), a, G_NONE, G_NONE,
	       op->loc);

	if (s->nreads[k] == MAX_READS) {
		s->reads[k][0] = join_all(l, s->reads[k][0], &s->reads[k][1],
					  MAX_READS - 1, op->loc);
		s->nreads[k] = 1;
	}
	s->reads[k][s->nreads[k]++] = n;
	map_put(l, s, &op->results[0], n);
}

/*
 * Is node @anc an input of @n, directly or not, one that @n's value cannot
 * come before?  Nodes come after their inputs, so a walk down from @n,
 * each node once, stops below @anc.  A REDUCE's folded values (C) do not
 * count: a loop of no iteration gives its init without taking one.
 */
static bool depends(const struct graph *g, int n, int anc)
{
	bool *seen, found = false;
	int *stack, top = 0;

	if (n == G_NONE || n < anc)
		return false;
	seen = calloc(n + 1, sizeof(bool));
	stack = calloc(n + 1, sizeof(int));
	if (!seen || !stack)
		abort();
	stack[top++] = n;
	seen[n] = true;
	while (top && !found) {
		const struct g_node *m = &g->nodes[stack[--top]];

		for (int k = 0; k < 3; k++) {
			int in = m->in[k];

			if (!(graph_inputs(m) & (1U << k)) || in < anc || seen[in] ||
			    (m->kind == G_PE && m->op == LOOM_OP_REDUCE && k == 2))
				continue;
			found |= in == anc;
			seen[in] = true;
			stack[top++] = in;
		}
	}
	found |= n == anc;
	free(seen);
	free(stack);
	return found;
}

/*
 * A store's address waits for the earlier loads of its memref, except
 * those the stored value @v already depends on (y[i] = f(y[i])) and those
 * another load it waits for depends on.
 */
static int after_reads(struct lower *l, struct scope *s, int k, int a, int v,
		       struct loom_loc loc)
{
	int r[MAX_READS], n = 0, nr = s->nreads[k];

	for (int i = 0; i < nr; i++) {
		int t = s->reads[k][i];
		bool implied = depends(l->g, v, t);

		for (int j = 0; j < nr && !implied; j++)
			implied = j != i && depends(l->g, s->reads[k][j], t);
		if (!implied)
			r[n++] = t;
	}
	s->nreads[k] = 0;
	return join_all(l, a, r, n, loc);
}

/* A store waits for earlier stores and loads of the same memref. */
static void lower_store(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *v = op->operands[0].value;
	const struct ir_value *m = op->operands[1].value;
	int k = memref_arg(m);
	unsigned type = lower_dev_type(op->type->elem);
	int a;

	if (k < 0)
		return unsupported(l, op, "a memref that is not a thread argument");
	a = after(l, address(l, s, op, m, &op->operands[2]), s->mem[k],
		  op->loc);

	a = after_reads(l, s, k, a, v->is_const ? G_NONE : value(l, s, v),
			op->loc);
	if (v->is_const)
		s->mem[k] = pe_imm(l, LOOM_OP_STORE, type, a,
				   (uint64_t)const_of(v), G_NONE, op->loc);
	else
		s->mem[k] = pe(l, LOOM_OP_STORE, type, a, value(l, s, v),
			       G_NONE, op->loc);
}

/*
 * memref.atomic_rmw: an ATOMIC PE (its kind in imm), ordered like a store:
 * after the memref's last store or atomic and the loads since.  Its
 * result, the old value, is also the token the memref's later accesses
 * wait for.  Only the thread's own accesses are ordered; instances, and
 * cores, reach the element in any order, and the device makes each
 * read-modify-write indivisible.
 */
static void lower_atomic(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *v = op->operands[0].value;
	const struct ir_value *m = op->operands[1].value;
	int k = memref_arg(m);
	int a, n, val;

	if (k < 0)
		return unsupported(l, op, "a memref that is not a thread argument");
	a = after(l, address(l, s, op, m, &op->operands[2]), s->mem[k],
		  op->loc);
	val = value(l, s, v);
	a = after_reads(l, s, k, a, v->is_const ? G_NONE : val, op->loc);
	n = pe(l, LOOM_OP_ATOMIC, lower_dev_type(op->type->elem), a, val,
	       G_NONE, op->loc);
	l->g->nodes[n].imm = op->atomic_kind;	/* imm is the kind: no IMM_B */
	s->mem[k] = n;
	map_put(l, s, &op->results[0], n);
}

/* Children are appended in firing order: chain the spawns with JOIN. */
static void lower_spawn(struct lower *l, struct scope *s, struct ir_op *op)
{
	int p = value(l, s, op->operands[0].value);

	if (s->in_loop) {
		l->loop_spawns++;
		pe(l, LOOM_OP_SPAWN, LOOM_TYPE_I64, p, G_NONE, G_NONE, op->loc);
		return;
	}
	l->spawns++;
	s->spawn = pe(l, LOOM_OP_SPAWN, LOOM_TYPE_I64,
		      after(l, p, s->spawn, op->loc), G_NONE, G_NONE, op->loc);
}

/* ------------------------------------------------------------ loops --- */

static void lower_region(struct lower *l, struct scope *s,
			 struct ir_region *r);
static bool defined_in(const struct ir_value *v, const struct ir_region *r);

static void scope_init(struct scope *s, struct scope *parent)
{
	memset(s, 0, sizeof(*s));
	s->parent = parent;
	s->trigger = G_NONE;
	s->count = G_NONE;
	s->spawn = G_NONE;
	for (int k = 0; k < MAX_ARGS; k++)
		s->mem[k] = G_NONE;
}

/* Uses of @v in @r, nested regions included. */
static int count_uses(const struct ir_region *r, const struct ir_value *v)
{
	int n = 0;

	for (const struct ir_op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->num_operands; i++)
			n += op->operands[i].value == v;
		if (op->body)
			n += count_uses(op->body, v);
		if (op->else_body)
			n += count_uses(op->else_body, v);
	}
	return n;
}

/*
 * An iter_arg the fabric can carry: yielded as acc OP x with OP a REDUCE
 * operation, acc used nowhere else and the new value used by the yield
 * alone (REDUCE gives only the final one, never a value per iteration).
 * Returns the operation, sets *x.
 */
static const struct ir_op *reduction(struct ir_op *loop, int i,
				     const struct ir_value **x)
{
	const struct ir_value *acc = &loop->body->args[1 + i];
	const struct ir_op *y = loop->body->last;
	const struct ir_op *def = y->operands[i].value->def;
	enum ir_alu alu;

	if (!def || def->region != loop->body || def->num_operands != 2)
		return NULL;
	alu = ir_opinfo[def->code].alu;
	if (alu != ALU_ADD && alu != ALU_MUL && alu != ALU_AND &&
	    alu != ALU_OR && alu != ALU_XOR && alu != ALU_FADD &&
	    alu != ALU_FMUL && alu != ALU_FMAX && alu != ALU_FMIN)
		return NULL;
	if (count_uses(loop->body, acc) != 1 ||
	    count_uses(loop->body, &def->results[0]) != 1)
		return NULL;
	if (def->operands[0].value == acc)
		*x = def->operands[1].value;
	else if (def->operands[1].value == acc)
		*x = def->operands[0].value;
	else
		return NULL;
	return def;
}

/*
 * An iter_arg the fabric can generate: yielded as acc + x or acc - x,
 * integer, with x a value the loop does not change.  Its value in
 * iteration k is init + k * (+-x), what a STREAM of its own produces, so
 * acc and the new value may be used anywhere (a carried index or
 * pointer).  Returns the operation, sets *x and *negate.
 */
static const struct ir_op *induction(struct ir_op *loop, int i,
				     const struct ir_value **x, bool *negate)
{
	const struct ir_value *acc = &loop->body->args[1 + i];
	const struct ir_op *def = loop->body->last->operands[i].value->def;
	const struct ir_value *a, *b;
	enum ir_alu alu;

	if (!def || def->region != loop->body || def->num_operands != 2 ||
	    (ir_opinfo[def->code].syntax != SYN_BINARY &&
	     ir_opinfo[def->code].syntax != SYN_INDEX_BINARY) ||
	    (acc->type->kind != IR_TYPE_I32 && acc->type->kind != IR_TYPE_I64 &&
	     acc->type->kind != IR_TYPE_INDEX))
		return NULL;
	alu = ir_opinfo[def->code].alu;
	a = def->operands[0].value;
	b = def->operands[1].value;
	if (alu == ALU_ADD && b == acc)
		b = a, a = acc;
	if ((alu != ALU_ADD && alu != ALU_SUB) || a != acc ||
	    (!b->is_const && defined_in(b, loop->body)))
		return NULL;
	*x = b;
	*negate = alu == ALU_SUB;
	return def;
}

/* The iteration count (ub - lb + step - 1) / step: a node, or constant. */
static int trip_count(struct lower *l, struct scope *s, struct ir_op *op,
		      int64_t *cval)
{
	const struct ir_value *lb = op->operands[0].value;
	const struct ir_value *ub = op->operands[1].value;
	const struct ir_value *st = op->operands[2].value;
	int n;

	if (lb->is_const && ub->is_const && st->is_const) {
		int64_t c = (ub->const_val - lb->const_val + st->const_val - 1) /
			    st->const_val;
		*cval = c > 0 ? c : 0;
		return G_NONE;
	}
	if (lb->is_const && lb->const_val == 0)
		n = value(l, s, ub);
	else
		n = binary(l, s, LOOM_OP_SUB, LOOM_TYPE_I64, ub, lb, op->loc);
	if (st->is_const && st->const_val == 1)
		return n;
	if (st->is_const) {
		n = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, n,
			   (uint64_t)(st->const_val - 1), G_NONE, op->loc);
		return pe_imm(l, LOOM_OP_DIVS, LOOM_TYPE_I64, n,
			      (uint64_t)st->const_val, G_NONE, op->loc);
	}
	n = pe(l, LOOM_OP_ADD, LOOM_TYPE_I64, n, value(l, s, st), G_NONE,
	       op->loc);
	n = pe_imm(l, LOOM_OP_ADD, LOOM_TYPE_I64, n, (uint64_t)-1, G_NONE,
		   op->loc);
	return pe(l, LOOM_OP_DIVS, LOOM_TYPE_I64, n, value(l, s, st), G_NONE,
		  op->loc);
}

/*
 * Each iter_arg is a reduction (red[i]) or an induction (ind[i], x[i]
 * its step, negated when neg[i]).  A step that is a value must be
 * positive when the loop runs (MLIR's rule); a constant one is checked.
 */
static bool check_loop(struct lower *l, struct ir_op *op,
		       const struct ir_op **red, const struct ir_op **ind,
		       const struct ir_value **x, bool *neg)
{
	const struct ir_value *st = op->operands[2].value;

	if (st->is_const && st->const_val <= 0) {
		unsupported(l, op, "a step that is not positive");
		return false;
	}
	if (op->num_iter_args > MAX_SKIP) {
		unsupported(l, op, "more than 8 iter_args");
		return false;
	}
	for (int i = 0; i < op->num_iter_args; i++) {
		red[i] = reduction(op, i, &x[i]);
		ind[i] = red[i] ? NULL : induction(op, i, &x[i], &neg[i]);
		if (!red[i] && !ind[i]) {
			unsupported(l, op,
				    "an iter_arg that is not a reduction (acc = acc op x with op addi, muli, andi, ori, xori, addf, mulf, maximumf or minimumf, acc and the new value used once) or an induction (acc = acc + x or acc - x, integer, x not changed by the loop), which would need a value carried back to the next iteration");
			return false;
		}
	}
	return true;
}

/* The memref argument @op loads from, stores to or updates, or -1. */
static int accessed_arg(const struct ir_op *op)
{
	if (op->code == IR_OP_MEMREF_LOAD)
		return memref_arg(op->operands[0].value);
	if (op->code == IR_OP_MEMREF_STORE ||
	    op->code == IR_OP_MEMREF_ATOMIC_RMW)
		return memref_arg(op->operands[1].value);
	return -1;
}

/* Memrefs accessed anywhere in @r. */
static void touches(const struct ir_region *r, bool *t)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		int k = accessed_arg(op);

		if (k >= 0)
			t[k] = true;
		if (op->body)
			touches(op->body, t);
		if (op->else_body)
			touches(op->else_body, t);
	}
}

/*
 * A loop starts once the enclosing scope's earlier accesses to the memrefs
 * it touches are done; inside, those memrefs' accesses wait for the
 * induction variable, which only flows after that.
 */
static int loop_start(struct lower *l, struct scope *s, struct scope *body,
		      const bool *touched, int start, struct loom_loc loc)
{
	for (int k = 0; k < MAX_ARGS; k++) {
		if (!touched[k] || (s->mem[k] == G_NONE && !s->nreads[k]))
			continue;
		start = join_all(l, start, &s->mem[k], 1, loc);
		start = join_all(l, start, s->reads[k], s->nreads[k], loc);
		body->mem[k] = AFTER_STREAM;
	}
	return start;
}

/*
 * After a loop, a memref it touched is "stored" by a token that arrives
 * once every iteration's accesses are done: REDUCE folds one token per
 * iteration (and gives its init at once for an empty loop, hence the join
 * with the earlier token).
 */
static void loop_done(struct lower *l, struct scope *s, struct scope *body,
		      const bool *touched, int ctok, struct loom_loc loc)
{
	for (int k = 0; k < MAX_ARGS; k++) {
		const int *t = body->reads[k];
		int it = body->mem[k], nt = body->nreads[k], red;

		if (!touched[k])
			continue;
		if (it == G_NONE && nt) {
			it = t[0];
			t++;
			nt--;
		}
		if (it == G_NONE)
			continue;
		it = join_all(l, it, t, nt, loc);
		red = pe(l, LOOM_OP_REDUCE, LOOM_TYPE_I64,
			 konst(l, s, LOOM_TYPE_I64, 0, loc), ctok, it, loc);
		l->g->nodes[red].imm = LOOM_OP_ADD;
		s->mem[k] = after(l, red, s->mem[k], loc);
	}
}

/* An induction's step +-x in scope @s (x is constant or outer). */
static int induction_step(struct lower *l, struct scope *s,
			  const struct ir_value *x, bool negate,
			  struct loom_loc loc)
{
	if (x->is_const)
		return konst(l, s, LOOM_TYPE_I64,
			     negate ? wrap_madd(0, const_of(x), -1) :
				      const_of(x), loc);
	if (!negate)
		return value(l, s, x);
	return pe_imm(l, LOOM_OP_MUL, LOOM_TYPE_I64, value(l, s, x),
		      (uint64_t)-1, G_NONE, loc);
}

/*
 * Induction iter_arg @i of loop @op: STREAM(init, +-x, count) in the
 * enclosing scope @s gives its value in every iteration, init + k * step.
 * STREAM adds in 64 bits: an i32 one is brought back to its 32 bits,
 * sign-extended, by MOV.i32 (what arith.addi on i32 wraps to).
 */
static void induction_stream(struct lower *l, struct scope *s,
			     struct scope *body, struct ir_op *op, int i,
			     const struct ir_value *x, bool negate, int ctok)
{
	const struct ir_value *acc = &op->body->args[1 + i];
	int init = value(l, s, op->operands[3 + i].value);
	int n;

	if (x->is_const)
		n = pe_imm(l, LOOM_OP_STREAM, LOOM_TYPE_I64, init,
			   (uint64_t)const_of(x) * (negate ? (uint64_t)-1 : 1),
			   ctok, op->loc);
	else
		n = pe(l, LOOM_OP_STREAM, LOOM_TYPE_I64, init,
		       induction_step(l, s, x, negate, op->loc), ctok, op->loc);
	if (lower_dev_type(acc->type) == LOOM_TYPE_I32)
		n = pe(l, LOOM_OP_MOV, LOOM_TYPE_I32, n, G_NONE, G_NONE,
		       op->loc);
	map_put(l, body, acc, n);
}

/*
 * scf.for: STREAM(lb, step, count) drives the body once per iteration;
 * outer values enter through INVARIANT, iter_args leave through REDUCE
 * (an induction's final value too: init plus count steps).
 */
static void lower_for(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_op *red[MAX_SKIP], *ind[MAX_SKIP];
	const struct ir_value *x[MAX_SKIP];
	const struct ir_value *st = op->operands[2].value;
	bool touched[MAX_ARGS] = { 0 }, neg[MAX_SKIP] = { 0 };
	struct scope body;
	int64_t cval = 0;
	int count, ctok, stream, start;

	if (!check_loop(l, op, red, ind, x, neg))
		return;
	l->g->loops++;
	touches(op->body, touched);
	scope_init(&body, s);
	count = trip_count(l, s, op, &cval);
	ctok = count != G_NONE ? count :
				 konst(l, s, LOOM_TYPE_I64, cval, op->loc);
	start = loop_start(l, s, &body, touched,
			   value(l, s, op->operands[0].value), op->loc);
	if (st->is_const)
		stream = pe_imm(l, LOOM_OP_STREAM, LOOM_TYPE_I64, start,
				(uint64_t)st->const_val, ctok, op->loc);
	else
		stream = pe(l, LOOM_OP_STREAM, LOOM_TYPE_I64, start,
			    value(l, s, st), ctok, op->loc);
	for (int k = 0; k < MAX_ARGS; k++)
		if (body.mem[k] == AFTER_STREAM)
			body.mem[k] = stream;
	body.trigger = stream;
	body.loop = op;
	body.ctok = ctok;
	body.count = count;
	body.count_val = cval;
	body.in_loop = true;
	for (int i = 0; i < op->num_iter_args; i++)
		if (red[i])
			body.skip[body.num_skip++] = red[i];
	map_put(l, &body, &op->body->args[0], stream);
	for (int i = 0; i < op->num_iter_args; i++)
		if (ind[i])
			induction_stream(l, s, &body, op, i, x[i], neg[i], ctok);
	lower_region(l, &body, op->body);
	if (!l->errors)
		loop_done(l, s, &body, touched, ctok, op->loc);
	for (int i = 0; !l->errors && i < op->num_iter_args; i++) {
		int init = value(l, s, op->operands[3 + i].value);
		int c = ind[i] ? induction_step(l, &body, x[i], neg[i], op->loc) :
				 value(l, &body, x[i]);
		unsigned type = lower_dev_type(op->results[i].type);
		/* REDUCE keeps its fold operation in imm: the count is a token */
		int r = pe(l, LOOM_OP_REDUCE, type, init, ctok, c, op->loc);

		l->g->nodes[r].imm = ind[i] ? LOOM_OP_ADD :
				     alu_op[ir_opinfo[red[i]->code].alu];
		map_put(l, s, &op->results[i], r);
	}
	free(body.map);
}

/* --------------------------------------------------------- branches --- */

/*
 * Does @r (nested regions included) load, store or spawn?  A branch that
 * does not is computed whether or not it is taken: its values are pure
 * and cannot trap (division by zero has a result), so a SELECT of both
 * branches' results is all an scf.if costs.  A load is not speculated: its
 * address may be one the condition guards (a[i] for i < n).
 */
static bool has_effects(const struct ir_region *r)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		if (op->code == IR_OP_MEMREF_LOAD || op->code == IR_OP_MEMREF_STORE ||
		    op->code == IR_OP_MEMREF_ATOMIC_RMW ||
		    op->code == IR_OP_WORK_SPAWN)
			return true;
		if ((op->body && has_effects(op->body)) ||
		    (op->else_body && has_effects(op->else_body)))
			return true;
	}
	return false;
}

/* Does @r (nested regions included) spawn? */
static bool has_spawn(const struct ir_region *r)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		if (op->code == IR_OP_WORK_SPAWN)
			return true;
		if ((op->body && has_spawn(op->body)) ||
		    (op->else_body && has_spawn(op->else_body)))
			return true;
	}
	return false;
}

/*
 * After a branch that spawns: the chain goes on from a token that
 * arrives once the branch's last spawn has fired, or at once (after the
 * spawns before the if) when it was not taken: REDUCE(previous, count,
 * last), whose init is the previous chain token.
 */
static void spawn_done(struct lower *l, struct scope *s, struct scope *body,
		       int count, struct loom_loc loc)
{
	int init = s->spawn != G_NONE ? s->spawn :
				       konst(l, s, LOOM_TYPE_I64, 0, loc);
	int red = pe(l, LOOM_OP_REDUCE, LOOM_TYPE_I64, init, count, body->spawn,
		     loc);

	l->g->nodes[red].imm = LOOM_OP_OR;
	s->spawn = red;
}

/* Is @v defined in @r or in a region nested in it? */
static bool defined_in(const struct ir_value *v, const struct ir_region *r)
{
	const struct ir_region *at = v->def ? v->def->region : v->region;

	while (at && at != r)
		at = at->parent_op ? at->parent_op->region : NULL;
	return at == r;
}

/*
 * A gated branch: a scope that runs @count (0 or 1) times per activation
 * of @s, exactly as a loop body does.  INVARIANT(value, count) lets each
 * outer value in once when the branch is taken and drops it when not, so
 * nothing inside fires (no store, load or spawn) unless the condition
 * chose the branch; the memrefs it touches are ordered around it as
 * around a loop (loop_start, loop_done's REDUCE of 0 or 1 tokens).  Each
 * value the branch yields leaves through REDUCE(0, count, v) folding with
 * OR: v when the branch ran, 0 when not, one token per activation either
 * way.  Returns the yielded values' nodes in @out.
 */
static void lower_gated(struct lower *l, struct scope *s, struct ir_op *op,
			struct ir_region *r, int count, int *out)
{
	const struct ir_op *y = r->last && r->last->code == IR_OP_SCF_YIELD ?
				r->last : NULL;
	bool touched[MAX_ARGS] = { 0 };
	bool chains = !s->in_loop && has_spawn(r);
	struct scope body;
	int gate;

	touches(r, touched);
	scope_init(&body, s);
	body.count = count;
	body.in_loop = s->in_loop;
	gate = loop_start(l, s, &body, touched, trigger(l, s), op->loc);
	if (chains)
		gate = after(l, gate, s->spawn, op->loc);
	gate = invariant(l, &body, gate, op->loc);
	for (int k = 0; k < MAX_ARGS; k++)
		if (body.mem[k] == AFTER_STREAM)
			body.mem[k] = gate;
	body.trigger = gate;
	if (chains)
		body.spawn = gate;
	lower_region(l, &body, r);
	if (!l->errors)
		loop_done(l, s, &body, touched, count, op->loc);
	if (!l->errors && chains)
		spawn_done(l, s, &body, count, op->loc);
	for (int i = 0; y && !l->errors && i < y->num_operands; i++) {
		const struct ir_value *v = y->operands[i].value;
		unsigned type = lower_dev_type(v->type);
		int red;

		if (v->is_const || !defined_in(v, r)) {
			out[i] = value(l, s, v);
			continue;
		}
		red = pe(l, LOOM_OP_REDUCE, type, konst(l, s, type, 0, op->loc),
			 count, value(l, &body, v), op->loc);
		l->g->nodes[red].imm = LOOM_OP_OR;
		out[i] = red;
	}
	free(body.map);
}

/* A branch without effects, computed in @s; its yields' nodes in @out. */
static void lower_speculated(struct lower *l, struct scope *s,
			     struct ir_region *r, int *out)
{
	const struct ir_op *y = r->last && r->last->code == IR_OP_SCF_YIELD ?
				r->last : NULL;

	lower_region(l, s, r);
	for (int i = 0; y && !l->errors && i < y->num_operands; i++)
		out[i] = value(l, s, y->operands[i].value);
}

/*
 * scf.if: a constant condition keeps one branch; branches without effects
 * are both computed and their results selected; others are gated scopes
 * (lower_gated) whose results are then selected.
 */
static void lower_if(struct lower *l, struct scope *s, struct ir_op *op)
{
	const struct ir_value *cv = op->operands[0].value;
	int then_v[MAX_IF_RESULTS], else_v[MAX_IF_RESULTS], c;

	if (op->num_results > MAX_IF_RESULTS)
		return unsupported(l, op, "more than 8 results");
	if (cv->is_const) {
		struct ir_region *taken = cv->const_val & 1 ? op->body :
							      op->else_body;

		if (taken)
			lower_speculated(l, s, taken, then_v);
		for (int i = 0; taken && !l->errors && i < op->num_results; i++)
			map_put(l, s, &op->results[i], then_v[i]);
		return;
	}
	c = value(l, s, cv);
	if (!has_effects(op->body) &&
	    (!op->else_body || !has_effects(op->else_body))) {
		lower_speculated(l, s, op->body, then_v);
		if (op->else_body)
			lower_speculated(l, s, op->else_body, else_v);
	} else {
		lower_gated(l, s, op, op->body, c, then_v);
		if (op->else_body)
			lower_gated(l, s, op, op->else_body,
				    pe_imm(l, LOOM_OP_XOR, LOOM_TYPE_I64, c, 1,
					   G_NONE, op->loc),
				    else_v);
	}
	for (int i = 0; !l->errors && i < op->num_results; i++)
		map_put(l, s, &op->results[i],
			pe(l, LOOM_OP_SELECT,
			   lower_dev_type(op->results[i].type), c, then_v[i],
			   else_v[i], op->loc));
}

/* -------------------------------------------------------------- ops --- */

static bool skipped(const struct scope *s, const struct ir_op *op)
{
	for (int i = 0; i < s->num_skip; i++)
		if (s->skip[i] == op)
			return true;
	return false;
}

static void lower_op(struct lower *l, struct scope *s, struct ir_op *op)
{
	if (skipped(s, op) ||
	    (op->num_results == 1 && op->results[0].is_const))
		return;
	switch (ir_opinfo[op->code].syntax) {
	case SYN_CONSTANT: case SYN_INDEX_CONSTANT:
	case SYN_SCF_YIELD: case SYN_THREAD_YIELD:
		return;
	case SYN_BINARY: case SYN_INDEX_BINARY:
		return lower_binary(l, s, op);
	case SYN_CMPI: case SYN_INDEX_CMP: case SYN_CMPF:
		return lower_cmp(l, s, op);
	case SYN_UNARY: case SYN_TERNARY:
		return lower_nary(l, s, op);
	case SYN_SELECT:
		return lower_select(l, s, op);
	case SYN_CAST:
		return lower_cast(l, s, op);
	case SYN_AFFINE:
		return lower_affine(l, s, op);
	case SYN_DIM:
		return lower_dim(l, s, op);
	case SYN_SUBVIEW: case SYN_MEMREF_CAST: case SYN_REINTERPRET:
	case SYN_RESHAPE:
		return lower_view(l, s, op);
	case SYN_LOAD:
		return lower_load(l, s, op);
	case SYN_STORE:
		return lower_store(l, s, op);
	case SYN_ATOMIC_RMW:
		return lower_atomic(l, s, op);
	case SYN_FOR:
		return lower_for(l, s, op);
	case SYN_IF:
		return lower_if(l, s, op);
	case SYN_SPAWN:
		return lower_spawn(l, s, op);
	default:
		unsupported(l, op, "this operation in a thread");
	}
}

static void lower_region(struct lower *l, struct scope *s,
			 struct ir_region *r)
{
	for (struct ir_op *op = r->first; op && !l->errors; op = op->next)
		lower_op(l, s, op);
}

/* ---------------------------------------------------- what we refuse --- */

/*
 * Counts, per memref argument, accesses and stores in @r and below, and
 * spawns outside and inside loops.
 */
static void count_accesses(struct lower *l, const struct ir_region *r,
			   int *count, int *stores, int depth)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		int k = accessed_arg(op);

		if (op->code == IR_OP_WORK_SPAWN && l) {
			if (depth)
				l->loop_spawns++;
			else
				l->spawns++;
		}
		if (k >= 0) {
			count[k]++;
			stores[k] += op->code != IR_OP_MEMREF_LOAD;	/* atomics write */
		}
		/* a branch runs once: its spawns are not in a loop */
		if (op->body)
			count_accesses(l, op->body, count, stores,
				       depth + (op->code == IR_OP_SCF_FOR));
		if (op->else_body)
			count_accesses(l, op->else_body, count, stores, depth);
	}
}

/*
 * An index as a linear form over one loop: iv * its induction variable +
 * the sum of coef[t] * term[t] over values defined outside the loop + c.
 */
#define MAX_TERMS	8

struct lin_index {
	int64_t iv;
	int64_t c;
	int n;
	const struct ir_value *term[MAX_TERMS];
	int64_t coef[MAX_TERMS];
};

static bool lin_add(struct lin_index *to, const struct lin_index *x,
		    int64_t scale)
{
	to->iv = wrap_madd(to->iv, x->iv, scale);
	to->c = wrap_madd(to->c, x->c, scale);
	for (int i = 0; i < x->n; i++) {
		int t = 0;

		while (t < to->n && to->term[t] != x->term[i])
			t++;
		if (t == to->n) {
			if (to->n == MAX_TERMS)
				return false;
			to->term[to->n] = x->term[i];
			to->coef[to->n++] = 0;
		}
		to->coef[t] = wrap_madd(to->coef[t], x->coef[i], scale);
	}
	return true;
}

static bool linear_index(const struct ir_op *loop, const struct ir_value *v,
			 struct lin_index *out);

/* An affine map's expression over @op's operands, when it is linear. */
static bool linear_affine(const struct ir_op *loop, const struct ir_op *op,
			  const struct ir_affine_expr *e, struct lin_index *out)
{
	struct lin_index x = { 0 }, y = { 0 };

	memset(out, 0, sizeof(*out));
	switch (e->kind) {
	case AFF_CONST:
		out->c = e->val;
		return true;
	case AFF_DIM:
	case AFF_SYM:
		return linear_index(loop, op->operands[(int)e->val +
				    (e->kind == AFF_SYM ? op->num_args : 0)].value,
				    out);
	case AFF_ADD:
	case AFF_SUB:
	case AFF_MUL:
		if (!linear_affine(loop, op, e->lhs, &x) ||
		    !linear_affine(loop, op, e->rhs, &y))
			return false;
		if (e->kind != AFF_MUL)
			return lin_add(out, &x, 1) &&
			       lin_add(out, &y, e->kind == AFF_SUB ? -1 : 1);
		if (!y.iv && !y.n)
			return lin_add(out, &x, y.c);
		return !x.iv && !x.n && lin_add(out, &y, x.c);
	default:
		return false;
	}
}

/*
 * @v as a linear form over @loop's induction variable and values the loop
 * does not change (index additions, subtractions, products by a constant,
 * linear affine.apply); false when it is not one.
 */
static bool linear_index(const struct ir_op *loop, const struct ir_value *v,
			 struct lin_index *out)
{
	const struct ir_op *d = v->def;
	struct lin_index a = { 0 }, b = { 0 };
	enum ir_alu alu;

	memset(out, 0, sizeof(*out));
	if (v->is_const) {
		out->c = v->const_val;
		return true;
	}
	if (v == &loop->body->args[0]) {
		out->iv = 1;
		return true;
	}
	if (!defined_in(v, loop->body)) {
		out->term[0] = v;
		out->coef[0] = 1;
		out->n = 1;
		return true;
	}
	if (!d || v->type != &ir_index)
		return false;
	if (d->code == IR_OP_AFFINE_APPLY)
		return linear_affine(loop, d, d->map->results[0], out);
	alu = ir_opinfo[d->code].alu;
	if ((ir_opinfo[d->code].syntax != SYN_BINARY &&
	     ir_opinfo[d->code].syntax != SYN_INDEX_BINARY) ||
	    (alu != ALU_ADD && alu != ALU_SUB && alu != ALU_MUL) ||
	    !linear_index(loop, d->operands[0].value, &a) ||
	    !linear_index(loop, d->operands[1].value, &b))
		return false;
	if (alu != ALU_MUL)
		return lin_add(out, &a, 1) &&
		       lin_add(out, &b, alu == ALU_SUB ? -1 : 1);
	if (!b.iv && !b.n)
		return lin_add(out, &a, b.c);
	return !a.iv && !a.n && lin_add(out, &b, a.c);
}

static bool lin_equal(const struct lin_index *x, const struct lin_index *y)
{
	struct lin_index diff = *x;

	if (!lin_add(&diff, y, -1) || diff.iv || diff.c)
		return false;
	for (int i = 0; i < diff.n; i++)
		if (diff.coef[i])
			return false;
	return true;
}

/* Accesses of memref argument @k in @r, nested regions included. */
static int collect_accesses(const struct ir_region *r, int k,
			    const struct ir_op **acc, int max, int n)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		if (accessed_arg(op) == k && n < max)
			acc[n] = op;
		n += accessed_arg(op) == k;
		if (op->body)
			n = collect_accesses(op->body, k, acc, max, n);
		if (op->else_body)
			n = collect_accesses(op->else_body, k, acc, max, n);
	}
	return n;
}

/* The index uses of a load, store or atomic. */
static const struct ir_use *access_indices(const struct ir_op *op)
{
	return &op->operands[op->code == IR_OP_MEMREF_LOAD ? 1 : 2];	/* store, atomic: 2 */
}

#define MAX_LOOP_ACCESSES	64

/*
 * Do different iterations of @loop access different elements of memref
 * argument @k?  They do when some index position holds, in every access
 * of @k in the loop, one same linear form in which the induction
 * variable's coefficient is not zero: iteration i then reaches only
 * elements whose index there is that form at i (MLIR leaves an access
 * out of bounds undefined), so iterations share no element, and the
 * order the tokens keep within one iteration is all memory order needs.
 */
static bool iterations_disjoint(const struct ir_op *loop, int k)
{
	const struct ir_op *acc[MAX_LOOP_ACCESSES];
	int n = collect_accesses(loop->body, k, acc, MAX_LOOP_ACCESSES, 0);
	int rank = acc[0]->type->rank;

	if (n > MAX_LOOP_ACCESSES)
		return false;
	for (int d = 0; d < rank; d++) {
		struct lin_index first, other;
		bool same;

		same = linear_index(loop, access_indices(acc[0])[d].value, &first) &&
		       first.iv != 0;
		for (int i = 1; i < n && same; i++)
			same = linear_index(loop, access_indices(acc[i])[d].value,
					    &other) && lin_equal(&first, &other);
		if (same)
			return true;
	}
	return false;
}

/*
 * Memory order inside a loop body holds within one iteration only: a
 * stored memref accessed more than once in a loop (its nested loops
 * included) is lowered when its iterations touch different elements
 * (iterations_disjoint); otherwise it would need a token carried back to
 * the next iteration, a cycle the graph cannot have.
 */
static void refuse_loops(struct lower *l, const struct ir_region *r)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		int count[MAX_ARGS] = { 0 }, stores[MAX_ARGS] = { 0 };

		if (!op->body)
			continue;
		if (op->code == IR_OP_SCF_IF) {	/* runs once: no iterations */
			refuse_loops(l, op->body);
			if (op->else_body)
				refuse_loops(l, op->else_body);
			continue;
		}
		count_accesses(NULL, op->body, count, stores, 1);
		for (int k = 0; k < MAX_ARGS; k++)
			if (stores[k] && count[k] > 1 &&
			    !iterations_disjoint(op, k)) {
				diag_error(l->d, op->loc,
					   "cannot lower scf.for: memref %%%s is stored and accessed again in the loop body at an element another iteration may access too, which needs ordering across iterations: not supported yet",
					   l->f->body.args[k].name);
				l->errors++;
			}
		refuse_loops(l, op->body);
	}
}

static void refuse(struct lower *l)
{
	int count[MAX_ARGS] = { 0 }, stores[MAX_ARGS] = { 0 };

	count_accesses(l, &l->f->body, count, stores, 0);
	refuse_loops(l, &l->f->body);
	if (l->loop_spawns && l->loop_spawns + l->spawns > 1) {
		diag_error(l->d, l->f->name_loc,
			   "cannot lower @%s: several dataflow.work.spawn with one inside an scf.for: not supported yet",
			   l->f->name);
		l->errors++;
	}
}

/* ----------------------------------------------------------- finish --- */

/* Keeps what the side effects need, renumbering the nodes. */
static void dead_code(struct graph *g)
{
	int *keep = calloc(g->num + 1, sizeof(*keep));
	int n = 0;

	if (!keep)
		abort();
	for (int i = g->num - 1; i >= 0; i--) {
		struct g_node *x = &g->nodes[i];

		if (x->kind == G_PE && (x->op == LOOM_OP_STORE ||
					x->op == LOOM_OP_ATOMIC ||
					x->op == LOOM_OP_SPAWN))
			keep[i] = 1;
		if (keep[i])
			for (int k = 0; k < 3; k++)
				if (graph_inputs(x) & (1U << k))
					keep[x->in[k]] = 1;
	}
	for (int i = 0; i < g->num; i++) {
		if (!keep[i])
			continue;
		keep[i] = n + 1;
		g->nodes[n] = g->nodes[i];
		for (int k = 0; k < 3; k++)
			if (graph_inputs(&g->nodes[n]) & (1U << k))
				g->nodes[n].in[k] = keep[g->nodes[n].in[k]] - 1;
		n++;
	}
	g->num = n;
	free(keep);
}

/* Every token must be consumed, or the dispatch never quiesces. */
static void add_sinks(struct lower *l)
{
	struct graph *g = l->g;
	int num = g->num;
	char *used = calloc(num + 1, 1);

	if (!used)
		abort();
	for (int i = 0; i < num; i++)
		for (int k = 0; k < 3; k++)
			if (graph_inputs(&g->nodes[i]) & (1U << k))
				used[g->nodes[i].in[k]] = 1;
	for (int i = 0; i < num; i++)
		if (!used[i] && !(g->nodes[i].kind == G_PE &&
				  g->nodes[i].op == LOOM_OP_SINK))
			pe(l, LOOM_OP_SINK, LOOM_TYPE_I64, i, G_NONE, G_NONE,
			   g->nodes[i].loc);
	free(used);
}

static const struct ir_attr *find_attr(const struct ir_func *f,
				       const char *name)
{
	for (int i = 0; i < f->num_attrs; i++)
		if (f->attrs[i].name && strcmp(f->attrs[i].name, name) == 0)
			return &f->attrs[i];
	return NULL;
}

/*
 * Spawns outside loops are counted; a spawn in a loop has no static
 * bound, so the thread's "loom.child_capacity = N" or the default is used
 * and the device reports LOOM_STATUS_CHILD_OVERFLOW beyond it.
 */
static void child_capacity(struct lower *l)
{
	const struct ir_attr *a = find_attr(l->f, "loom.child_capacity");
	unsigned cap = l->loop_spawns ? LOWER_DEFAULT_CHILD_CAPACITY :
					(unsigned)l->spawns;

	if (a && (a->kind != IR_ATTR_INT || a->ival < l->spawns ||
		  a->ival > LOOM_MAX_CHILD_CAPACITY)) {
		diag_error(l->d, a->value_loc,
			   "loom.child_capacity must be an integer in %d..%d (the thread spawns %d times outside loops)",
			   l->spawns, LOOM_MAX_CHILD_CAPACITY, l->spawns);
		l->errors++;
		return;
	}
	if (a)
		cap = (unsigned)a->ival;
	l->g->child_capacity = cap;
}

unsigned lower_thread(struct diag *d, struct ir_func *f, struct graph *g)
{
	struct lower l = { .d = d, .f = f, .g = g };
	struct scope top;

	g->thread = f->name;
	g->domain = f->dom_kind;
	g->rank = f->num_ivs;
	refuse(&l);
	if (l.errors)
		return l.errors;
	child_capacity(&l);
	l.spawns = l.loop_spawns = 0;
	scope_init(&top, NULL);
	lower_region(&l, &top, &f->body);
	free(top.map);
	while (l.views) {
		struct view_layout *next = l.views->next;

		free(l.views);
		l.views = next;
	}
	if (l.errors)
		return l.errors;
	dead_code(g);
	add_sinks(&l);
	return 0;
}
