// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verifier.c: what a parsed unit means, and whether it is a valid loom
 * program (spec "Logical Domains And Data Views" §2, §3, §6 and the thread
 * ABI of uapi/loom_image.h).
 *
 * Two passes over a module: first the symbols and every thread's signature
 * (domain, ctrl/iv slots, ABI types and limits), then every body in
 * program order: resolve each use, check the operation in its context,
 * fold constants, define its results.  Each rule reports its own
 * diagnostic, with a note at the related definition where there is one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "parser.h"
#include "verifier.h"

#define NAME_BUCKETS	1024

/**
 * struct name_entry - one visible value name
 * @name: the name
 * @value: what it denotes
 * @hash: hash of @name
 * @prev: the entry this one hides in its bucket, or -1
 */
struct name_entry {
	const char *name;
	struct ir_value *value;
	uint32_t hash;
	int prev;
};

/**
 * struct verifier - verification state of one module
 * @d: diagnostics
 * @m: the module
 * @func: the function being checked
 * @names: visible names, innermost last (a stack of scopes)
 * @num_names: entries in @names
 * @cap_names: allocated entries
 * @bucket: per hash bucket, the newest entry's index or -1
 */
struct verifier {
	struct diag *d;
	struct ir_module *m;
	struct ir_func *func;
	struct name_entry *names;
	int num_names;
	int cap_names;
	int bucket[NAME_BUCKETS];
};

static const char *tstr(const struct ir_type *t, char *buf)
{
	return ir_type_str(t, buf, IR_TYPE_STR_MAX);
}

static const char *plural(long n)
{
	return n == 1 ? "" : "s";
}

static const char *op_name(const struct ir_op *op)
{
	return ir_opinfo[op->code].name;
}

static bool is_dynamic(const struct ir_func *f)
{
	return f->is_thread && f->dom_kind == LOOM_DOMAIN_DYNAMIC_WORK;
}

/* ------------------------------------------------------------- names --- */

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static struct ir_value *lookup(struct verifier *v, const char *name)
{
	uint32_t h = hash_name(name);

	for (int i = v->bucket[h % NAME_BUCKETS]; i >= 0; i = v->names[i].prev)
		if (v->names[i].hash == h && strcmp(v->names[i].name, name) == 0)
			return v->names[i].value;
	return NULL;
}

/* Makes @val visible by its name; a name already visible is an error. */
static void define(struct verifier *v, struct ir_value *val)
{
	struct ir_value *old = lookup(v, val->name);
	struct name_entry *e;

	if (old) {
		diag_error(v->d, val->loc, "redefinition of value '%%%s'",
			   val->name);
		diag_note(v->d, old->loc, "previous definition of '%%%s' is here",
			  old->name);
	}
	if (v->num_names == v->cap_names) {
		int cap = v->cap_names ? v->cap_names * 2 : 64;

		e = realloc(v->names, (size_t)cap * sizeof(*e));
		if (!e) {
			diag_error(v->d, val->loc, "out of memory");
			return;
		}
		v->names = e;
		v->cap_names = cap;
	}
	e = &v->names[v->num_names];
	e->name = val->name;
	e->value = val;
	e->hash = hash_name(val->name);
	e->prev = v->bucket[e->hash % NAME_BUCKETS];
	v->bucket[e->hash % NAME_BUCKETS] = v->num_names++;
}

/* Forgets the names defined since the stack had @mark entries. */
static void pop_names(struct verifier *v, int mark)
{
	while (v->num_names > mark) {
		struct name_entry *e = &v->names[--v->num_names];

		v->bucket[e->hash % NAME_BUCKETS] = e->prev;
	}
}

/* Resolves the operands of @op; returns false if one is undefined. */
static bool resolve(struct verifier *v, struct ir_op *op)
{
	bool ok = true;

	for (int i = 0; i < op->num_operands; i++) {
		struct ir_use *u = &op->operands[i];

		u->value = lookup(v, u->name);
		if (u->value)
			u->value->used = true;
		if (!u->value) {
			struct diag_suggest sg;
			char buf[160];

			diag_suggest_init(&sg, u->name, strlen(u->name));
			for (int k = 0; k < v->num_names; k++)
				diag_suggest_add(&sg, v->names[k].name);
			diag_error(v->d, u->loc, "use of undefined value '%%%s'%s",
				   u->name,
				   diag_suggest_str(&sg, "%", buf, sizeof(buf)));
			ok = false;
		}
	}
	return ok;
}

/* -------------------------------------------------------- attributes --- */

/*
 * The attributes loomc defines, and where each may be written.  The list
 * is closed: any other attribute is an error, wherever it is written.  An
 * attribute loomc does not read would be kept without a meaning, and the
 * ones front ends write (staticGrid, thread_axis, dataflow.map_info,
 * B_thread, loom.accCore ...) restate what the domain and the launch say
 * or choose placement, which is the mapping's (spec §2, §5, §8).
 */
enum attr_place {
	ON_THREAD,	/* a dataflow.thread's "attributes {...}" */
	ON_HOST,	/* a host function's "attributes {...}" */
	ON_OP,		/* an operation's {...} */
};

static const struct {
	const char *name;
	enum attr_place place;
} defined_attrs[] = {
	/* dynamic-work threads; lower.c, child_capacity() */
	{ "loom.child_capacity", ON_THREAD },
};

/* What loomc defines in each place, for the diagnostic. */
static const char *const defined_in[] = {
	[ON_THREAD] = "the only one is loom.child_capacity, for a dynamic-work thread",
	[ON_HOST] = "it takes none",
	[ON_OP] = "it takes none",
};

static bool is_defined_attr(const char *name, enum attr_place place)
{
	for (size_t i = 0; i < sizeof(defined_attrs) / sizeof(*defined_attrs);
	     i++)
		if (defined_attrs[i].place == place &&
		    strcmp(defined_attrs[i].name, name) == 0)
			return true;
	return false;
}

/*
 * Dialect attributes in the value @a, recursively: loomc defines one,
 * #dataflow.thread_domain, and only as a thread's domain (checked there).
 */
static void check_dialect_values(struct verifier *v, const struct ir_attr *a)
{
	if (a->kind == IR_ATTR_DIALECT) {
		if (strcmp(a->str, "#dataflow.thread_domain") == 0)
			diag_error(v->d, a->value_loc,
				   "attribute '#dataflow.thread_domain' is only allowed as a thread's domain(...)");
		else
			diag_error(v->d, a->value_loc,
				   "attribute '%s' is not one loomc defines: its only dialect attribute is #dataflow.thread_domain, a thread's domain(...)",
				   a->str);
		return;
	}
	for (int i = 0; i < a->num_elems; i++)
		check_dialect_values(v, &a->elems[i]);
}

/*
 * The entries of a dictionary in @place (@what names it) that loomc does
 * not define, with the dialect attributes in their values.
 */
static void check_attrs(struct verifier *v, const struct ir_attr *a, int n,
			enum attr_place place, const char *what)
{
	for (int i = 0; i < n; i++) {
		if (is_defined_attr(a[i].name, place))
			continue;
		diag_error(v->d, a[i].loc,
			   "attribute '%s' is not one loomc defines on %s: %s",
			   a[i].name, what, defined_in[place]);
		check_dialect_values(v, &a[i]);
	}
}

/*
 * loom.child_capacity = N: once, on a dynamic-work thread, an integer
 * (lowering checks its range against the thread's spawns).
 */
static void check_child_capacity(struct verifier *v, struct ir_func *f)
{
	const struct ir_attr *first = NULL;

	for (int i = 0; i < f->num_attrs; i++) {
		const struct ir_attr *a = &f->attrs[i];

		if (strcmp(a->name, "loom.child_capacity") != 0)
			continue;
		if (first) {
			diag_error(v->d, a->loc,
				   "duplicate attribute 'loom.child_capacity'");
			diag_note(v->d, first->loc,
				  "the first 'loom.child_capacity' is here");
			continue;
		}
		first = a;
		if (f->dom_kind == LOOM_DOMAIN_DENSE) {
			diag_error(v->d, a->loc,
				   "'loom.child_capacity' is only allowed on a dynamic-work thread");
			diag_note(v->d, f->domain->value_loc,
				  "@%s has a dense domain", f->name);
		} else if (a->kind != IR_ATTR_INT) {
			diag_error(v->d, a->value_loc,
				   "loom.child_capacity must be an integer");
		}
	}
}

/* ----------------------------------------------------- thread domain --- */

static void bad_domain(struct verifier *v, const struct ir_attr *a)
{
	diag_error(v->d, a->value_loc,
		   "thread domain must be #dataflow.thread_domain<dense> or #dataflow.thread_domain<dynamic_work, work_item_arg = N>");
}

/* The kind keyword, first of the domain's parameters. */
static enum loom_domain_kind domain_kind(struct verifier *v,
					 const struct ir_attr *a)
{
	const struct ir_attr *k = &a->elems[0];

	if (k->name || k->kind != IR_ATTR_KEYWORD) {
		bad_domain(v, a);
		return 0;
	}
	if (strcmp(k->str, "dense") == 0)
		return LOOM_DOMAIN_DENSE;
	if (strcmp(k->str, "dynamic_work") == 0)
		return LOOM_DOMAIN_DYNAMIC_WORK;
	diag_error(v->d, k->value_loc,
		   "unknown thread domain kind '%s'; expected dense or dynamic_work",
		   k->str);
	return 0;
}

/* work_item_arg = N; returns the parameter or NULL when none is valid. */
static const struct ir_attr *domain_param(struct verifier *v,
					  struct ir_func *f,
					  const struct ir_attr *p,
					  const struct ir_attr *seen)
{
	if (!p->name) {
		diag_error(v->d, p->value_loc,
			   "expected 'key = value' in the thread domain");
	} else if (strcmp(p->name, "work_item_arg") != 0) {
		diag_error(v->d, p->loc,
			   "unexpected thread domain parameter '%s': the domain has only its kind and work_item_arg (the coordinate rank comes from iv(...))",
			   p->name);
	} else if (f->dom_kind == LOOM_DOMAIN_DENSE) {
		diag_error(v->d, p->loc, "a dense domain takes no work_item_arg");
	} else if (seen) {
		diag_error(v->d, p->loc, "duplicate work_item_arg");
	} else if (p->kind != IR_ATTR_INT || p->type) {
		diag_error(v->d, p->value_loc,
			   "work_item_arg must be an integer");
	} else {
		return p;
	}
	return seen;
}

/* Sets f->work_item_arg from its parameter (or reports why not). */
static void work_item_arg(struct verifier *v, struct ir_func *f,
			  const struct ir_attr *p)
{
	if (!p) {
		diag_error(v->d, f->domain->value_loc,
			   "a dynamic_work domain needs work_item_arg = N, naming its work-item input");
		return;
	}
	if (p->ival < 0 || p->ival >= f->num_inputs) {
		diag_error(v->d, p->value_loc,
			   "work_item_arg = %lld names no input of @%s, which has %d input%s",
			   (long long)p->ival, f->name, f->num_inputs,
			   plural(f->num_inputs));
		return;
	}
	f->work_item_arg = (int)p->ival;
}

/* Interprets f->domain into f->dom_kind and f->work_item_arg. */
static void check_domain(struct verifier *v, struct ir_func *f)
{
	const struct ir_attr *a = f->domain, *wia = NULL;

	f->dom_kind = 0;
	f->work_item_arg = -1;
	if (a->kind != IR_ATTR_DIALECT ||
	    strcmp(a->str, "#dataflow.thread_domain") != 0 || !a->num_elems) {
		bad_domain(v, a);
		return;
	}
	f->dom_kind = domain_kind(v, a);
	if (!f->dom_kind)
		return;
	for (int i = 1; i < a->num_elems; i++)
		wia = domain_param(v, f, &a->elems[i], wia);
	if (f->dom_kind == LOOM_DOMAIN_DYNAMIC_WORK)
		work_item_arg(v, f, wia);
}

/* -------------------------------------------------- thread signature --- */

static void check_inputs(struct verifier *v, struct ir_func *f)
{
	char buf[IR_TYPE_STR_MAX];

	f->num_size_operands = 0;
	for (int i = 0; i < f->num_inputs; i++)
		f->num_size_operands += ir_size_operands(f->body.args[i].type);
	if (f->num_inputs > LOOM_IMAGE_MAX_ARGS)
		diag_error(v->d, f->name_loc,
			   "@%s has %d inputs, more than LOOM_IMAGE_MAX_ARGS (%d)",
			   f->name, f->num_inputs, LOOM_IMAGE_MAX_ARGS);
	else if (f->num_inputs + f->num_size_operands > LOOM_IMAGE_MAX_ARGS)
		diag_error(v->d, f->name_loc,
			   "@%s has %d inputs and %d dynamic memref sizes, more launch operands than LOOM_IMAGE_MAX_ARGS (%d)",
			   f->name, f->num_inputs, f->num_size_operands,
			   LOOM_IMAGE_MAX_ARGS);
	for (int i = 0; i < f->num_inputs; i++) {
		struct ir_value *a = &f->body.args[i];

		if (is_dynamic(f) && ir_type_has_channel(a->type))
			diag_error(v->d, a->loc,
				   "dynamic-work thread @%s cannot use channel type %s",
				   f->name, tstr(a->type, buf));
		else if (!ir_type_arg_type(a->type) &&
			 !ir_type_has_unsupported(a->type))
			diag_error(v->d, a->loc,
				   "input '%%%s' of @%s has type %s, which a launch cannot pass (i32, i64, index, f32, memref of i32, i64 or f32)",
				   a->name, f->name, tstr(a->type, buf));
	}
}

static void check_ctrl(struct verifier *v, struct ir_func *f)
{
	struct ir_value *c = ir_func_ctrl(f);
	char buf[IR_TYPE_STR_MAX];

	if (!f->has_ctrl) {
		diag_error(v->d, f->name_loc,
			   "@%s has no ctrl slot: its entry block is (inputs..., ctrl(%%c: none)%s)",
			   f->name, is_dynamic(f) ? "" : ", iv(%i: index, ...)");
	} else if (f->num_ctrl != 1) {
		diag_error(v->d, f->ctrl_loc,
			   "the ctrl slot of @%s takes exactly one argument, not %d",
			   f->name, f->num_ctrl);
	} else if (c->type->kind != IR_TYPE_NONE) {
		diag_error(v->d, c->loc,
			   "ctrl slot '%%%s' of @%s has type %s; it must be none",
			   c->name, f->name, tstr(c->type, buf));
	} else if (f->has_iv && f->iv_before_ctrl) {
		diag_error(v->d, f->ctrl_loc,
			   "the ctrl slot of @%s must come right after the inputs, before iv(...)",
			   f->name);
	}
}

static void check_ivs(struct verifier *v, struct ir_func *f)
{
	struct ir_value *iv = ir_func_ivs(f);
	char buf[IR_TYPE_STR_MAX];

	if (is_dynamic(f)) {
		if (f->has_iv)
			diag_error(v->d, f->iv_loc,
				   "dynamic-work thread @%s has no coordinates: it takes no iv(...)",
				   f->name);
		return;
	}
	if (f->num_ivs > LOOM_MAX_RANK)
		diag_error(v->d, f->iv_loc,
			   "@%s has coordinate rank %d, above LOOM_MAX_RANK (%d)",
			   f->name, f->num_ivs, LOOM_MAX_RANK);
	for (int i = 0; i < f->num_ivs; i++)
		if (iv[i].type->kind != IR_TYPE_INDEX)
			diag_error(v->d, iv[i].loc,
				   "coordinate '%%%s' of @%s has type %s; coordinates are index",
				   iv[i].name, f->name, tstr(iv[i].type, buf));
}

static void check_work_item_type(struct verifier *v, struct ir_func *f)
{
	struct ir_value *w;
	char buf[IR_TYPE_STR_MAX];

	if (!is_dynamic(f) || f->work_item_arg < 0)
		return;
	w = &f->body.args[f->work_item_arg];
	if (w->type->kind != IR_TYPE_I32 && w->type->kind != IR_TYPE_I64 &&
	    w->type->kind != IR_TYPE_INDEX && !ir_type_has_channel(w->type))
		diag_error(v->d, w->loc,
			   "work item '%%%s' of @%s has type %s; a work-item payload is i32, i64 or index",
			   w->name, f->name, tstr(w->type, buf));
}

/* Channels in the ctrl and iv slots of a dynamic-work thread. */
static void check_slot_channels(struct verifier *v, struct ir_func *f)
{
	char buf[IR_TYPE_STR_MAX];

	if (!is_dynamic(f))
		return;
	for (int i = f->num_inputs; i < f->body.num_args; i++)
		if (ir_type_has_channel(f->body.args[i].type))
			diag_error(v->d, f->body.args[i].loc,
				   "dynamic-work thread @%s cannot use channel type %s",
				   f->name, tstr(f->body.args[i].type, buf));
}

static void check_thread_signature(struct verifier *v, struct ir_func *f)
{
	check_domain(v, f);
	check_inputs(v, f);
	check_ctrl(v, f);
	check_ivs(v, f);
	check_work_item_type(v, f);
	check_slot_channels(v, f);
}

/* ---------------------------------------------------- operation types --- */

static void note_defined(struct verifier *v, const struct ir_value *val)
{
	diag_note(v->d, val->loc, "'%%%s' is defined here", val->name);
}

/* Every operand has the type the syntax states for it. */
static void check_operand_types(struct verifier *v, struct ir_op *op)
{
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	for (int i = 0; i < op->num_operands; i++) {
		const struct ir_type *want = op->operand_types[i];
		struct ir_value *val = op->operands[i].value;

		if (!want || ir_type_equal(val->type, want))
			continue;
		diag_error(v->d, op->operands[i].loc,
			   "'%%%s' has type %s but '%s' expects %s",
			   val->name, tstr(val->type, a), op_name(op),
			   tstr(want, b));
		note_defined(v, val);
	}
}

static bool need_integer(struct verifier *v, struct ir_op *op,
			 const struct ir_type *t)
{
	char buf[IR_TYPE_STR_MAX];

	if (ir_type_is_integer(t))
		return true;
	if (ir_type_has_unsupported(t))
		return false;	/* reported where the type is written */
	diag_error(v->d, op->loc, "'%s' needs an integer or index type, not %s",
		   op_name(op), tstr(t, buf));
	return false;
}

static bool need_f32(struct verifier *v, struct ir_op *op,
		     const struct ir_type *t)
{
	char buf[IR_TYPE_STR_MAX];

	if (ir_type_is_f32(t))
		return true;
	if (ir_type_has_unsupported(t))
		return false;	/* reported where the type is written */
	diag_error(v->d, op->loc, "'%s' needs a float type (f32), not %s",
		   op_name(op), tstr(t, buf));
	return false;
}

/* A value a register or token carries: an integer, index or f32. */
static bool need_scalar(struct verifier *v, struct ir_op *op,
			const struct ir_type *t)
{
	char buf[IR_TYPE_STR_MAX];

	if (ir_type_is_integer(t) || ir_type_is_f32(t))
		return true;
	if (ir_type_has_unsupported(t))
		return false;	/* reported where the type is written */
	diag_error(v->d, op->loc,
		   "'%s' needs an integer, index or f32 type, not %s",
		   op_name(op), tstr(t, buf));
	return false;
}

/*
 * An f32 constant is a float literal (rounded to nearest even; it must
 * not round to infinity) or its bits in hex, as in MLIR.
 */
static bool check_f32_constant(struct verifier *v, struct ir_op *op)
{
	const char *why = NULL;

	if (op->lit_float && op->lit_range) {
		diag_error(v->d, op->loc,
			   "float literal is out of range for f32 (it rounds to infinity; write infinity as 0x7F800000)");
		return false;
	}
	if (op->lit_float)
		return true;
	if (!op->lit_hex)
		why = "is an integer literal: write a float literal (1.0) or the bits in hex (0x3F800000)";
	else if (op->lit_neg)
		why = "is a hexadecimal bit pattern, which takes no '-' (flip bit 31)";
	else if (op->lit_mag > 0xffffffffULL)
		why = "has more than 32 bits";
	else
		return true;
	diag_error(v->d, op->loc, op->lit_hex ? "f32 constant %s0x%llX %s" :
						"f32 constant %s%llu %s",
		   op->lit_neg ? "-" : "", (unsigned long long)op->lit_mag, why);
	return false;
}

/* The literal of a constant fits its type (as signed or unsigned). */
static bool check_constant(struct verifier *v, struct ir_op *op)
{
	unsigned w;
	uint64_t max;
	char buf[IR_TYPE_STR_MAX];

	if (op->code == IR_OP_ARITH_CONSTANT && ir_type_is_f32(op->type))
		return check_f32_constant(v, op);
	if (!need_integer(v, op, op->type))
		return false;
	if (op->lit_float) {
		diag_error(v->d, op->loc,
			   "a float literal needs type f32, not %s",
			   tstr(op->type, buf));
		return false;
	}
	w = ir_type_width(op->type);
	max = w == 64 ? UINT64_MAX : (1ULL << w) - 1;
	if (op->lit_neg ? op->lit_mag > (max >> 1) + 1 : op->lit_mag > max) {
		diag_error(v->d, op->loc, "constant %s%llu does not fit in %s",
			   op->lit_neg ? "-" : "",
			   (unsigned long long)op->lit_mag, tstr(op->type, buf));
		return false;
	}
	return true;
}

/* i32 or i64: what the float conversions take or give. */
static bool is_i32_i64(const struct ir_type *t)
{
	return t->kind == IR_TYPE_I32 || t->kind == IR_TYPE_I64;
}

/* The rule a float cast breaks, or NULL. */
static const char *float_cast_rule(const struct ir_op *op)
{
	const struct ir_type *from = op->type, *to = op->to_type;

	switch (ir_opinfo[op->code].alu) {
	case ALU_SITOF:
	case ALU_UITOF:
		return is_i32_i64(from) && ir_type_is_f32(to) ? NULL :
		       "converts i32 or i64 to f32";
	case ALU_FTOSI:
	case ALU_FTOUI:
		return ir_type_is_f32(from) && is_i32_i64(to) ? NULL :
		       "converts f32 to i32 or i64";
	default:	/* bitcast */
		return (from->kind == IR_TYPE_I32 || ir_type_is_f32(from)) &&
		       (to->kind == IR_TYPE_I32 || ir_type_is_f32(to)) ? NULL :
		       "reinterprets the bits of i32 or f32 as i32 or f32";
	}
}

static bool check_cast(struct verifier *v, struct ir_op *op)
{
	const struct ir_type *from = op->type, *to = op->to_type;
	bool fi = from->kind == IR_TYPE_INDEX, ti = to->kind == IR_TYPE_INDEX;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];
	enum ir_alu alu = ir_opinfo[op->code].alu;
	const char *rule = NULL;

	if (ir_type_has_unsupported(from) || ir_type_has_unsupported(to))
		return false;	/* reported where the type is written */
	if (alu >= ALU_SITOF && alu <= ALU_BITCAST)
		rule = float_cast_rule(op);
	else if (!ir_type_is_integer(from) || !ir_type_is_integer(to))
		rule = "casts between integer types";
	else if ((op->code == IR_OP_ARITH_INDEX_CAST ||
		  op->code == IR_OP_ARITH_INDEX_CASTUI ||
		  op->code == IR_OP_INDEX_CASTS ||
		  op->code == IR_OP_INDEX_CASTU) && fi == ti)
		rule = "casts between index and an integer type";
	else if ((op->code == IR_OP_ARITH_EXTSI ||
		  op->code == IR_OP_ARITH_EXTUI) &&
		 (fi || ti || ir_type_width(from) >= ir_type_width(to)))
		rule = "widens an integer type to a wider one";
	else if (op->code == IR_OP_ARITH_TRUNCI &&
		 (fi || ti || ir_type_width(from) <= ir_type_width(to)))
		rule = "narrows an integer type to a narrower one";
	if (!rule)
		return true;
	diag_error(v->d, op->loc, "'%s' %s, not %s to %s", op_name(op), rule,
		   tstr(from, a), tstr(to, b));
	return false;
}

/*
 * memref.atomic_rmw: the value and the result are the memref's element
 * type, and the kind works on it (addf, mulf, maximumf, minimumf on f32;
 * assign on any; the rest on integers), as MLIR's verifier has it.
 */
static bool check_atomic_types(struct verifier *v, struct ir_op *op)
{
	const struct loom_atomic_info *k = loom_atomic_info(op->atomic_kind);
	const struct ir_type *elem = op->type->elem;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX], c[IR_TYPE_STR_MAX];
	bool ok = true;

	if (op->type->kind != IR_TYPE_MEMREF || ir_type_has_unsupported(op->type) ||
	    ir_type_has_unsupported(op->operand_types[0]) ||
	    ir_type_has_unsupported(op->results[0].type))
		return false;	/* reported where the type is written */
	if (!ir_type_equal(op->operand_types[0], elem)) {
		diag_error(v->d, op->operands[0].loc,
			   "'%s' of %s takes a value of its element type %s, not %s",
			   op_name(op), tstr(op->type, a), tstr(elem, b),
			   tstr(op->operand_types[0], c));
		ok = false;
	}
	if (!ir_type_equal(op->results[0].type, elem)) {
		diag_error(v->d, op->results[0].loc,
			   "'%s' of %s gives the old element, of type %s, not %s",
			   op_name(op), tstr(op->type, a), tstr(elem, b),
			   tstr(op->results[0].type, c));
		ok = false;
	}
	if (op->atomic_kind != LOOM_ATOMIC_ASSIGN &&
	    k->f32 != ir_type_is_f32(elem)) {
		diag_error(v->d, op->loc,
			   "atomic kind '%s' needs %s element type, not %s (%s)",
			   k->name, k->f32 ? "a float (f32)" : "an integer",
			   tstr(elem, a),
			   k->f32 ? "addi, muli, maxs, maxu, mins, minu, andi, ori and xori work on integers" :
				    "addf, mulf, maximumf and minimumf work on f32");
		ok = false;
	}
	return ok;
}

/* The types written on @op make sense for it. */
static bool check_written_types(struct verifier *v, struct ir_op *op)
{
	switch (ir_opinfo[op->code].syntax) {
	case SYN_CONSTANT:
		return check_constant(v, op);
	case SYN_INDEX_CONSTANT:
		return check_constant(v, op);
	case SYN_BINARY:
		if (ir_opinfo[op->code].alu >= ALU_FADD)
			return need_f32(v, op, op->type);
		return need_integer(v, op, op->type);
	case SYN_CMPF:
	case SYN_UNARY:
	case SYN_TERNARY:
		return need_f32(v, op, op->type);
	case SYN_SELECT:
	case SYN_PRINT:
	case SYN_CHECK:
		return need_scalar(v, op, op->type);
	case SYN_CMPI:
	case SYN_FOR:
		return need_integer(v, op, op->type);
	case SYN_CAST:
		return check_cast(v, op);
	case SYN_ATOMIC_RMW:
		return check_atomic_types(v, op);
	default:
		return true;
	}
}

/* -------------------------------------------------- context & control --- */

/* "an scf.for" or "an scf.if": what owns a nested region. */
static const char *owner_kind(const struct ir_op *op)
{
	return op->code == IR_OP_SCF_IF ? "an scf.if" : "an scf.for";
}

/*
 * Does region @r end without an scf.yield that it may leave out?  An
 * scf.for without iter_args and an scf.if without results yield nothing.
 */
static bool yield_implicit(const struct ir_region *r)
{
	const struct ir_op *owner = r->parent_op;

	return owner->code == IR_OP_SCF_IF ? !owner->num_results :
					     !owner->num_iter_args;
}

/* The kind of body @r is: a host function, a thread, an scf.for or scf.if. */
static const char *body_kind(const struct ir_region *r)
{
	if (r->parent_op)
		return owner_kind(r->parent_op);
	return r->parent_func->is_thread ? "a dataflow.thread" :
					   "a host function";
}

/* What must end region @r. */
static enum ir_opcode terminator_of(const struct ir_region *r)
{
	if (r->parent_op)
		return IR_OP_SCF_YIELD;
	return r->parent_func->is_thread ? IR_OP_THREAD_YIELD : IR_OP_RETURN;
}

static bool check_terminator_place(struct verifier *v, struct ir_op *op)
{
	enum ir_opcode want;

	if (!(ir_opinfo[op->code].flags & IR_TERMINATOR))
		return true;
	want = terminator_of(op->region);
	if (want == op->code && op->region->last == op)
		return true;
	diag_error(v->d, op->loc, "'%s' must be the last operation of %s body",
		   op_name(op),
		   op->code == IR_OP_SCF_YIELD ?
			   (op->region->parent_op ?
				    owner_kind(op->region->parent_op) :
				    "an scf.for") :
		   op->code == IR_OP_RETURN ? "a host function" :
					      "a dataflow.thread");
	return false;
}

/* Is @op allowed where it is?  Reports and returns false if not. */
static bool check_context(struct verifier *v, struct ir_op *op)
{
	struct ir_func *f = v->func;
	unsigned flags = ir_opinfo[op->code].flags;

	if (flags & IR_TERMINATOR)
		return check_terminator_place(v, op);
	if (f->is_thread && (op->code == IR_OP_THREAD_LAUNCH ||
			     op->code == IR_OP_THREAD_WAIT)) {
		diag_error(v->d, op->loc,
			   "'%s' is not allowed inside a thread body", op_name(op));
		return false;
	}
	if (!f->is_thread && op->code == IR_OP_MEMREF_ATOMIC_RMW) {
		diag_error(v->d, op->loc,
			   "'%s' is only allowed in thread bodies: a host function runs alone, so memref.load and memref.store do what it would",
			   op_name(op));
		return false;
	}
	if (f->is_thread && (flags & IR_HOST_ONLY)) {
		diag_error(v->d, op->loc, "'%s' is only allowed in host functions",
			   op_name(op));
		return false;
	}
	if (op->code == IR_OP_WORK_SPAWN && !is_dynamic(f)) {
		diag_error(v->d, op->loc,
			   "'dataflow.work.spawn' is only allowed in a dynamic-work thread");
		if (f->is_thread && f->dom_kind == LOOM_DOMAIN_DENSE)
			diag_note(v->d, f->domain->value_loc,
				  "@%s has a dense domain", f->name);
		return false;
	}
	return true;
}

/* A region that must end with a terminator does. */
static void check_region_end(struct verifier *v, struct ir_region *r)
{
	enum ir_opcode want = terminator_of(r);

	for (struct ir_op *op = r->first; op; op = op->next)
		if (ir_opinfo[op->code].flags & IR_TERMINATOR)
			return;	/* there, or misplaced and reported */
	if (want == IR_OP_SCF_YIELD && yield_implicit(r))
		return;	/* implicit */
	diag_error(v->d, r->end, "%s body must end with '%s'", body_kind(r),
		   ir_opinfo[want].name);
}

/* ------------------------------------------------------------ launch --- */

static void note_thread(struct verifier *v, const struct ir_func *t)
{
	diag_note(v->d, t->name_loc, "@%s is defined here", t->name);
}

/* Exactly one !dataflow.thread_token result. */
static void check_launch_result(struct verifier *v, struct ir_op *op)
{
	if (op->num_results == 1 && op->results[0].type->kind == IR_TYPE_TOKEN)
		return;
	diag_error(v->d, op->loc,
		   "'dataflow.thread.launch' must return exactly one !dataflow.thread_token");
}

/* The token operands of a wait() clause or a dataflow.thread.wait. */
static void check_tokens(struct verifier *v, struct ir_op *op,
			 struct ir_use *u, int n, bool written)
{
	char buf[IR_TYPE_STR_MAX];

	for (int i = 0; i < n; i++) {
		const struct ir_type *t = u[i].value->type;

		if (t->kind == IR_TYPE_TOKEN && written)
			t = op->operand_types[i];
		if (t->kind == IR_TYPE_TOKEN)
			continue;
		diag_error(v->d, u[i].loc,
			   "'%%%s' has type %s but wait operands must be !dataflow.thread_token",
			   u[i].name, tstr(t, buf));
		note_defined(v, u[i].value);
	}
}

static bool dim_known(const struct ir_func *f, const struct ir_value *m,
		      int k);
static bool is_memref_input(const struct ir_func *f, const struct ir_value *m);

/*
 * A launch (or a call: @what) passes the size operands of memref @m
 * (ir_size_operands()): its '?' sizes must be known to the host function
 * (dim_known()), and a strided one must be a view, whose offset and
 * strides it computed, or a parameter its own call sites pass.
 */
static void check_launch_layout(struct verifier *v, struct ir_use *u,
				const char *what)
{
	const struct ir_value *m = u->value;
	const struct ir_type *t = m->type;
	char a[IR_TYPE_STR_MAX];

	for (int k = 0; t->rank >= 2 && k < t->rank; k++)
		if (!dim_known(v->func, m, k)) {
			diag_error(v->d, u->loc,
				   "%s operand '%%%s' (%s) has dynamic sizes, which a %s passes from its memref.alloc or view operation: it must be one of this function",
				   what, m->name, tstr(t, a), what);
			return;
		}
	if (t->strided && !(m->def && m->def->view) && !is_memref_input(v->func, m))
		diag_error(v->d, u->loc,
			   "%s operand '%%%s' (%s) has a strided layout, which a %s passes from the view operation that made it: it must be one of this function",
			   what, m->name, tstr(t, a), what);
}

/* Launch operand types equal the callee's inputs. */
static void check_launch_args(struct verifier *v, struct ir_op *op,
			      struct ir_func *t)
{
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	for (int i = 0; i < op->num_args; i++) {
		const struct ir_value *in = &t->body.args[i];
		const struct ir_value *m = op->operands[i].value;

		if (ir_type_equal(op->operand_types[i], in->type)) {
			if (ir_size_operands(in->type) &&
			    ir_type_equal(m->type, in->type))
				check_launch_layout(v, &op->operands[i], "launch");
			continue;
		}
		diag_error(v->d, op->operands[i].loc,
			   "launch operand #%d has type %s but @%s input '%%%s' has type %s",
			   i, tstr(op->operand_types[i], a), t->name, in->name,
			   tstr(in->type, b));
		diag_note(v->d, in->loc, "'%%%s' is declared here", in->name);
	}
}

/* Extents are index values, never provably negative. */
static void check_extents(struct verifier *v, struct ir_op *op)
{
	struct ir_use *e = ir_launch_extents(op);
	char buf[IR_TYPE_STR_MAX];

	for (int i = 0; i < op->num_extents; i++) {
		struct ir_value *val = e[i].value;

		if (val->type->kind != IR_TYPE_INDEX) {
			diag_error(v->d, e[i].loc,
				   "launch extent '%%%s' has type %s; extents are index",
				   e[i].name, tstr(val->type, buf));
			note_defined(v, val);
		} else if (val->is_const && val->const_val < 0) {
			diag_error(v->d, e[i].loc,
				   "launch extent '%%%s' is negative (%lld after constant folding)",
				   e[i].name, (long long)val->const_val);
			note_defined(v, val);
		}
	}
}

static void check_dense_launch(struct verifier *v, struct ir_op *op,
			       struct ir_func *t)
{
	if (op->num_args != t->num_inputs) {
		diag_error(v->d, op->callee_loc,
			   "launch supplies %d operand%s but @%s takes %d input%s",
			   op->num_args, plural(op->num_args), t->name,
			   t->num_inputs, plural(t->num_inputs));
		note_thread(v, t);
	} else {
		check_launch_args(v, op, t);
	}
	if (op->num_extents != t->num_ivs) {
		diag_error(v->d, op->has_grid ? op->grid_loc : op->callee_loc,
			   "launch supplies %d extent%s but @%s has coordinate rank %d",
			   op->num_extents, plural(op->num_extents), t->name,
			   t->num_ivs);
		diag_note(v->d, t->name_loc,
			  "@%s is defined here with coordinate rank %d",
			  t->name, t->num_ivs);
	} else {
		check_extents(v, op);
	}
}

static void check_dynamic_launch(struct verifier *v, struct ir_op *op,
				 struct ir_func *t)
{
	if (op->has_grid) {
		diag_error(v->d, op->grid_loc,
			   "dynamic-work thread @%s is launched without grid(): it has no coordinates",
			   t->name);
		diag_note(v->d, t->domain->value_loc,
			  "@%s has a dynamic_work domain", t->name);
	}
	if (op->num_args != t->num_inputs) {
		diag_error(v->d, op->callee_loc,
			   "launch of dynamic-work thread @%s supplies %d operand%s; it takes exactly one root payload and %d capture%s",
			   t->name, op->num_args, plural(op->num_args),
			   t->num_inputs - 1, plural(t->num_inputs - 1));
		note_thread(v, t);
	} else {
		check_launch_args(v, op, t);
	}
}

static void check_launch(struct verifier *v, struct ir_op *op)
{
	struct ir_func *t = ir_module_find(v->m, op->callee);

	check_launch_result(v, op);
	check_tokens(v, op, ir_launch_waits(op), op->num_waits, false);
	if (!t) {
		struct diag_suggest sg;
		char buf[160];

		diag_suggest_init(&sg, op->callee, strlen(op->callee));
		for (struct ir_func *f = v->m->funcs; f; f = f->next)
			if (f->is_thread)
				diag_suggest_add(&sg, f->name);
		diag_error(v->d, op->callee_loc, "launch of unknown thread @%s%s",
			   op->callee, diag_suggest_str(&sg, "@", buf, sizeof(buf)));
		return;
	}
	if (!t->is_thread) {
		diag_error(v->d, op->callee_loc,
			   "@%s is a host function, not a dataflow.thread",
			   t->name);
		note_thread(v, t);
		return;
	}
	if (t->dom_kind == LOOM_DOMAIN_DENSE)
		check_dense_launch(v, op, t);
	else if (t->dom_kind == LOOM_DOMAIN_DYNAMIC_WORK)
		check_dynamic_launch(v, op, t);
}

/* ----------------------------------------------------------- calls --- */

/* Marks each host function a func.call in @r (nested too) names. */
static void mark_calls_in(struct verifier *v, const struct ir_region *r)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		struct ir_func *f;

		if (op->code == IR_OP_FUNC_CALL &&
		    (f = ir_module_find(v->m, op->callee)) && !f->is_thread)
			f->called = true;
		if (op->body)
			mark_calls_in(v, op->body);
		if (op->else_body)
			mark_calls_in(v, op->else_body);
	}
}

/*
 * Before any body is checked: which host functions are called, whose
 * parameters' sizes and layouts then come from their call sites.
 */
static void mark_called(struct verifier *v)
{
	for (struct ir_func *f = v->m->funcs; f; f = f->next)
		f->called = false;
	for (struct ir_func *f = v->m->funcs; f; f = f->next)
		mark_calls_in(v, &f->body);
}

/*
 * func.call: a host function of this unit, as many operands as it has
 * arguments, each of its argument's type, and no results (host functions
 * return nothing).  Sets @op->target, which host.c inlines.
 */
static void check_call(struct verifier *v, struct ir_op *op)
{
	struct ir_func *f = ir_module_find(v->m, op->callee);
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];
	bool ok = true;

	op->target = NULL;
	if (!f) {
		struct diag_suggest sg;
		char buf[160];

		diag_suggest_init(&sg, op->callee, strlen(op->callee));
		for (struct ir_func *g = v->m->funcs; g; g = g->next)
			if (!g->is_thread)
				diag_suggest_add(&sg, g->name);
		diag_error(v->d, op->callee_loc, "call of unknown function @%s%s",
			   op->callee, diag_suggest_str(&sg, "@", buf, sizeof(buf)));
		return;
	}
	if (f->is_thread) {
		diag_error(v->d, op->callee_loc,
			   "@%s is a dataflow.thread: start it with 'dataflow.thread.launch', not 'func.call'",
			   f->name);
		note_thread(v, f);
		return;
	}
	if (op->num_results) {
		diag_error(v->d, op->loc,
			   "call of @%s has %d result%s, but host functions return nothing",
			   f->name, op->num_results, plural(op->num_results));
		ok = false;
	}
	if (op->num_args != f->num_inputs) {
		diag_error(v->d, op->loc, "call of @%s passes %d operand%s; it takes %d",
			   f->name, op->num_args, plural(op->num_args), f->num_inputs);
		note_thread(v, f);
		return;
	}
	for (int i = 0; i < op->num_args; i++) {
		const struct ir_value *arg = &f->body.args[i];

		if (ir_type_equal(op->operand_types[i], arg->type)) {
			if (ir_size_operands(arg->type) &&
			    ir_type_equal(op->operands[i].value->type, arg->type))
				check_launch_layout(v, &op->operands[i], "call");
			continue;
		}
		diag_error(v->d, op->operands[i].loc,
			   "operand #%d of the call has type %s but argument '%%%s' of @%s has type %s",
			   i, tstr(op->operand_types[i], a), arg->name, f->name,
			   tstr(arg->type, b));
		note_thread(v, f);
		ok = false;
	}
	if (ok)
		op->target = f;
}

/* Does a call in @r (or in its nested regions) lead to @to?  @seen: visited. */
static bool calls_reach(const struct ir_region *r, const struct ir_func *to,
			const struct ir_func **seen, int *num_seen, int max);

static bool func_reaches(const struct ir_func *f, const struct ir_func *to,
			 const struct ir_func **seen, int *num_seen, int max)
{
	if (f == to)
		return true;
	for (int i = 0; i < *num_seen; i++)
		if (seen[i] == f)
			return false;
	if (*num_seen == max)
		return false;
	seen[(*num_seen)++] = f;
	return calls_reach(&f->body, to, seen, num_seen, max);
}

static bool calls_reach(const struct ir_region *r, const struct ir_func *to,
			const struct ir_func **seen, int *num_seen, int max)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		if (op->code == IR_OP_FUNC_CALL && op->target &&
		    func_reaches(op->target, to, seen, num_seen, max))
			return true;
		if ((op->body && calls_reach(op->body, to, seen, num_seen, max)) ||
		    (op->else_body && calls_reach(op->else_body, to, seen, num_seen, max)))
			return true;
	}
	return false;
}

/*
 * Each call of @f's body (nested regions too) whose callee leads back to
 * @f: loomc inlines calls, so none may recurse.
 */
static void check_recursion_in(struct verifier *v, struct ir_func *f,
			       const struct ir_region *r, int funcs)
{
	const struct ir_func **seen = calloc(funcs ? funcs : 1, sizeof(*seen));

	if (!seen)
		abort();
	for (struct ir_op *op = r->first; op; op = op->next) {
		int num_seen = 0;

		if (op->code == IR_OP_FUNC_CALL && op->target &&
		    func_reaches(op->target, f, seen, &num_seen, funcs)) {
			diag_error(v->d, op->callee_loc,
				   "call of @%s from @%s recurses: loomc inlines every call, so calls cannot recurse",
				   op->target->name, f->name);
			op->target = NULL;	/* host.c must not follow it */
		}
		if (op->body)
			check_recursion_in(v, f, op->body, funcs);
		if (op->else_body)
			check_recursion_in(v, f, op->else_body, funcs);
	}
	free(seen);
}

static void check_recursion(struct verifier *v)
{
	int funcs = 0;

	for (struct ir_func *f = v->m->funcs; f; f = f->next)
		funcs++;
	for (struct ir_func *f = v->m->funcs; f; f = f->next)
		if (!f->is_thread)
			check_recursion_in(v, f, &f->body, funcs);
}

/* ------------------------------------------------- other operations --- */

static void check_spawn(struct verifier *v, struct ir_op *op)
{
	struct ir_func *f = v->func;
	struct ir_value *w;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	if (f->work_item_arg < 0)
		return;
	w = &f->body.args[f->work_item_arg];
	if (ir_type_equal(op->type, w->type))
		return;
	diag_error(v->d, op->operands[0].loc,
		   "spawned payload has type %s but the work item of @%s has type %s",
		   tstr(op->type, a), f->name, tstr(w->type, b));
	diag_note(v->d, w->loc, "'%%%s' is the work item (work_item_arg = %d)",
		  w->name, f->work_item_arg);
}

static void check_frontiers(struct verifier *v, struct ir_op *op)
{
	char buf[IR_TYPE_STR_MAX];

	for (int i = 0; i < op->num_operands; i++) {
		const struct ir_type *t = op->operands[i].value->type;

		if (t->kind == IR_TYPE_NONE)
			t = op->operand_types[i];
		if (t->kind == IR_TYPE_NONE)
			continue;
		diag_error(v->d, op->operands[i].loc,
			   "yield frontier '%%%s' has type %s; frontiers are none",
			   op->operands[i].name, tstr(t, buf));
	}
}

/* An scf.if's yield gives one value of each result's type. */
static void check_if_yield(struct verifier *v, struct ir_op *op,
			   struct ir_op *cond)
{
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	if (op->num_operands != cond->num_results) {
		diag_error(v->d, op->loc,
			   "'scf.yield' yields %d value%s but the scf.if has %d result%s",
			   op->num_operands, plural(op->num_operands),
			   cond->num_results, plural(cond->num_results));
		diag_note(v->d, cond->loc, "the scf.if is here");
		return;
	}
	for (int i = 0; i < op->num_operands; i++) {
		const struct ir_type *want = cond->results[i].type;

		if (ir_type_equal(op->operand_types[i], want))
			continue;
		diag_error(v->d, op->operands[i].loc,
			   "'scf.yield' operand #%d has type %s but result #%d of the scf.if has type %s",
			   i, tstr(op->operand_types[i], a), i, tstr(want, b));
		diag_note(v->d, cond->loc, "the scf.if is here");
	}
}

static void check_scf_yield(struct verifier *v, struct ir_op *op)
{
	struct ir_op *loop = op->region->parent_op;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	if (loop->code == IR_OP_SCF_IF)
		return check_if_yield(v, op, loop);

	if (op->num_operands != loop->num_iter_args) {
		diag_error(v->d, op->loc,
			   "'scf.yield' yields %d value%s but the scf.for has %d iter_arg%s",
			   op->num_operands, plural(op->num_operands),
			   loop->num_iter_args, plural(loop->num_iter_args));
		diag_note(v->d, loop->loc, "the scf.for is here");
		return;
	}
	for (int i = 0; i < op->num_operands; i++) {
		const struct ir_value *acc = &loop->body->args[i + 1];

		if (ir_type_equal(op->operand_types[i], acc->type))
			continue;
		diag_error(v->d, op->operands[i].loc,
			   "'scf.yield' operand #%d has type %s but iter_arg '%%%s' has type %s",
			   i, tstr(op->operand_types[i], a), acc->name,
			   tstr(acc->type, b));
		diag_note(v->d, acc->loc, "'%%%s' is declared here", acc->name);
	}
}

/*
 * A value an scf.if gives must come from whichever branch runs: results
 * need an else.  They are scalars: the fabric selects them (arith.select's
 * types).
 */
static void check_if(struct verifier *v, struct ir_op *op)
{
	char buf[IR_TYPE_STR_MAX];

	if (op->num_results && !op->else_body) {
		diag_error(v->d, op->loc,
			   "an scf.if with results needs an 'else' region");
		diag_note(v->d, op->body->end,
			  "the then region ends here; add 'else { ... scf.yield ... }'");
	}
	for (int i = 0; i < op->num_results; i++) {
		const struct ir_type *t = op->results[i].type;

		if (ir_type_is_integer(t) || ir_type_is_f32(t) ||
		    ir_type_has_unsupported(t))
			continue;
		diag_error(v->d, op->results[i].loc,
			   "scf.if result '%%%s' has type %s; results are integer, index or f32",
			   op->results[i].name, tstr(t, buf));
	}
}

static void check_alloc(struct verifier *v, struct ir_op *op)
{
	int want = ir_size_operand_of(op->type, op->type->rank);
	char buf[IR_TYPE_STR_MAX];

	if (op->num_operands != want)
		diag_error(v->d, op->loc,
			   "'memref.alloc' of %s takes %d size operand%s, not %d",
			   tstr(op->type, buf), want, plural(want),
			   op->num_operands);
}

/*
 * memref.load/store/atomic_rmw: one index per size, and a constant index inside its
 * static size (a dynamic size bounds it only at run time).
 */
static void check_access(struct verifier *v, struct ir_op *op)
{
	int first = op->code == IR_OP_MEMREF_LOAD ? 1 : 2;	/* store, atomic */
	int n = op->num_operands - first;
	const struct ir_type *t = op->type;
	char buf[IR_TYPE_STR_MAX];

	if (t->kind != IR_TYPE_MEMREF)
		return;
	if (n != t->rank) {
		diag_error(v->d, op->loc, "'%s' of %s takes %d ind%s, not %d",
			   op_name(op), tstr(t, buf), t->rank,
			   t->rank == 1 ? "ex" : "ices", n);
		return;
	}
	for (int k = 0; k < n; k++) {
		const struct ir_use *u = &op->operands[first + k];
		int64_t c;

		if (!u->value || !u->value->is_const)
			continue;
		c = u->value->const_val;
		if (c >= 0 && (t->dims[k] == IR_DYNAMIC || c < t->dims[k]))
			continue;
		if (t->dims[k] == IR_DYNAMIC)
			diag_error(v->d, u->loc,
				   "index %d of '%s' is %lld, below 0",
				   k, op_name(op), (long long)c);
		else
			diag_error(v->d, u->loc,
				   "index %d of '%s' is %lld, outside 0..%lld (size %lld of %s)",
				   k, op_name(op), (long long)c,
				   (long long)t->dims[k] - 1,
				   (long long)t->dims[k], tstr(t, buf));
	}
}

/*
 * memref.dim: a constant size number below the rank.  A static size
 * folds; a dynamic one is known where the memref was allocated (a host
 * function's memref.alloc(%n)) and in a thread whose input it is when its
 * rank is 2 or more (a size operand); a rank-1 memref<?xT> crosses a
 * launch as its base address alone.
 */
/*
 * An input of a thread, or a parameter of a host function a func.call
 * calls: the launch or the call site passes its sizes and layout.
 */
static bool is_memref_input(const struct ir_func *f, const struct ir_value *m)
{
	return (f->is_thread || f->called) && !m->def && m->region == &f->body &&
	       m->index < f->num_inputs;
}

/*
 * Is size @k of memref @m known where a program runs: static, a size
 * operand of a rank-N thread input, an operand of the allocation or view
 * operation that made it, or derived from such through a cast or a
 * collapse_shape?
 */
static bool dim_known(const struct ir_func *f, const struct ir_value *m,
		      int k)
{
	const struct ir_op *def = m->def;
	const struct ir_value *src;

	if (m->type->dims[k] != IR_DYNAMIC)
		return true;
	if (!def)
		return m->type->rank >= 2 && is_memref_input(f, m);
	src = def->num_operands ? def->operands[0].value : NULL;
	switch (def->code) {
	case IR_OP_MEMREF_ALLOC:
	case IR_OP_MEMREF_SUBVIEW:
	case IR_OP_MEMREF_REINTERPRET_CAST:
	case IR_OP_MEMREF_EXPAND_SHAPE:
		return true;
	case IR_OP_MEMREF_CAST:
		return src && dim_known(f, src, k);
	case IR_OP_MEMREF_COLLAPSE_SHAPE:
		for (int j = 0; src && j < src->type->rank; j++)
			if (def->view->group[j] == k && !dim_known(f, src, j))
				return false;
		return src != NULL;
	default:
		return false;
	}
}

static void check_dim(struct verifier *v, struct ir_op *op)
{
	const struct ir_value *m = op->operands[0].value;
	const struct ir_value *k = op->operands[1].value;
	const struct ir_type *t = op->type;
	char buf[IR_TYPE_STR_MAX];

	if (t->kind != IR_TYPE_MEMREF)
		return;
	if (!k->is_const) {
		diag_error(v->d, op->operands[1].loc,
			   "the size number of 'memref.dim' must be a constant");
		return;
	}
	if (k->const_val < 0 || k->const_val >= t->rank) {
		diag_error(v->d, op->operands[1].loc,
			   "'memref.dim' of %s asks for size %lld; its sizes are 0..%d",
			   tstr(t, buf), (long long)k->const_val, t->rank - 1);
		return;
	}
	if (!dim_known(v->func, m, (int)k->const_val))
		diag_error(v->d, op->loc,
			   "'memref.dim' of dynamic size %lld of '%%%s' (%s): a rank-1 memref argument arrives as its base address alone; pass the size as an index argument",
			   (long long)k->const_val, m->name, tstr(t, buf));
}

/*
 * affine.apply/min/max: one operand per dimension and symbol of the map;
 * affine.apply's map has one result.
 */
static void check_affine(struct verifier *v, struct ir_op *op)
{
	const struct ir_affine_map *m = op->map;
	int syms = op->num_operands - op->num_args;

	if (op->num_args != m->num_dims || syms != m->num_syms)
		diag_error(v->d, op->loc,
			   "'%s': the map has %d dimension%s and %d symbol%s, but %d dimension operand%s and %d symbol operand%s are given",
			   op_name(op), m->num_dims, plural(m->num_dims),
			   m->num_syms, plural(m->num_syms), op->num_args,
			   plural(op->num_args), syms, plural(syms));
	if (op->code == IR_OP_AFFINE_APPLY && m->num_results != 1)
		diag_error(v->d, op->loc,
			   "'affine.apply' takes a map with one result, not %d (affine.min and affine.max take several)",
			   m->num_results);
}

/* ------------------------------------------------------------- views --- */

static const char *const view_list_name[IR_VIEW_LISTS] = {
	"offset", "size", "stride"
};

/* Where entry @k of list @which is written. */
static struct loom_loc view_entry_loc(const struct ir_op *op,
				      enum ir_view_list which, int k)
{
	return op->view->loc[which][k];
}

/* a * b for layouts: 0 when either is 0, else IR_DYNAMIC when either is. */
static int64_t layout_mul(int64_t a, int64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	if (a == IR_DYNAMIC || b == IR_DYNAMIC)
		return IR_DYNAMIC;
	return a * b;
}

static int64_t layout_add(int64_t a, int64_t b)
{
	return a == IR_DYNAMIC || b == IR_DYNAMIC ? IR_DYNAMIC : a + b;
}

/*
 * Known offsets, sizes and strides of size @k of a subview of @src: not
 * negative, strides at least 1, and the elements the view reaches inside
 * a static size.
 */
static void check_subview_bounds(struct verifier *v, struct ir_op *op, int k)
{
	const struct ir_type *src = op->type;
	const struct ir_value *x;
	bool known[IR_VIEW_LISTS];
	int64_t c[IR_VIEW_LISTS] = { 0 }, last;
	char buf[IR_TYPE_STR_MAX];

	for (int l = 0; l < IR_VIEW_LISTS; l++) {
		known[l] = ir_view_entry(op, l, k, &c[l], &x);
		if (known[l] && c[l] < (l == IR_VIEW_STRIDES)) {
			diag_error(v->d, view_entry_loc(op, l, k),
				   "%s %d of 'memref.subview' is %lld; %ss are %s",
				   view_list_name[l], k, (long long)c[l],
				   view_list_name[l],
				   l == IR_VIEW_STRIDES ? "1 or more" : "0 or more");
			return;
		}
	}
	if (src->dims[k] == IR_DYNAMIC || !known[IR_VIEW_OFFSETS])
		return;
	if (c[IR_VIEW_OFFSETS] > src->dims[k]) {
		diag_error(v->d, view_entry_loc(op, IR_VIEW_OFFSETS, k),
			   "offset %d of 'memref.subview' is %lld, beyond size %d of %s (%lld)",
			   k, (long long)c[IR_VIEW_OFFSETS], k, tstr(src, buf),
			   (long long)src->dims[k]);
		return;
	}
	if (!known[IR_VIEW_SIZES] || !known[IR_VIEW_STRIDES] ||
	    c[IR_VIEW_SIZES] == 0)
		return;
	if (__builtin_mul_overflow(c[IR_VIEW_SIZES] - 1, c[IR_VIEW_STRIDES],
				   &last) ||
	    __builtin_add_overflow(last, c[IR_VIEW_OFFSETS], &last) ||
	    last >= src->dims[k])
		diag_error(v->d, op->loc,
			   "'memref.subview' leaves size %d of %s (%lld): offset %lld + (size %lld - 1) * stride %lld is beyond its last element",
			   k, tstr(src, buf), (long long)src->dims[k],
			   (long long)c[IR_VIEW_OFFSETS],
			   (long long)c[IR_VIEW_SIZES],
			   (long long)c[IR_VIEW_STRIDES]);
}

/*
 * The type a subview has, as MLIR infers it: a literal size, offset or
 * stride is static, a value dynamic; strides and the offset compose with
 * the source's layout.  Rank of the source, nothing dropped yet.
 */
static void subview_type(const struct ir_op *op, struct ir_type *t)
{
	const struct ir_type *src = op->type;
	const struct ir_view *w = op->view;
	int64_t strides[IR_MEMREF_MAX_RANK], offset;

	ir_memref_layout(src, strides, &offset);
	*t = *src;
	t->strided = true;
	for (int k = 0; k < src->rank; k++) {
		t->dims[k] = w->lit[IR_VIEW_SIZES][k];
		t->strides[k] = layout_mul(strides[k],
					   w->lit[IR_VIEW_STRIDES][k]);
		offset = layout_add(offset, layout_mul(w->lit[IR_VIEW_OFFSETS][k],
						       strides[k]));
	}
	t->offset = offset;
}

/*
 * Which sizes of @full the result type @res keeps, into @w->kept: each in
 * order where it matches, a size of 1 dropped where it does not (MLIR's
 * rank reduction).  False when @res is not @full with sizes of 1 dropped.
 */
static bool subview_kept(struct ir_view *w, const struct ir_type *full,
			 const struct ir_type *res)
{
	int64_t strides[IR_MEMREF_MAX_RANK], offset;
	int i = 0;

	for (int j = 0; j < full->rank; j++) {
		if (i < res->rank && res->dims[i] == full->dims[j])
			w->kept[i++] = j;
		else if (full->dims[j] != 1)
			return false;
	}
	if (i != res->rank)
		return false;
	ir_memref_layout(res, strides, &offset);
	if (offset != full->offset)
		return false;
	for (i = 0; i < res->rank; i++)
		if (strides[i] != full->strides[w->kept[i]])
			return false;
	w->num_kept = res->rank;
	return true;
}

/*
 * memref.subview: an offset, a size and a stride per size of the source;
 * the known ones inside it (check_subview_bounds()); the result type the
 * one the view has, or it with sizes of 1 dropped.
 */
static void check_subview(struct verifier *v, struct ir_op *op)
{
	const struct ir_type *src = op->type, *res = op->to_type;
	struct ir_view *w = op->view;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];
	struct ir_type full;

	if (ir_type_has_unsupported(src) || ir_type_has_unsupported(res))
		return;		/* reported where the type is written */
	for (int l = 0; l < IR_VIEW_LISTS; l++)
		if (w->num[l] != src->rank) {
			diag_error(v->d, op->loc,
				   "'memref.subview' of %s takes %d %ss, not %d",
				   tstr(src, a), src->rank, view_list_name[l],
				   w->num[l]);
			return;
		}
	for (int k = 0; k < src->rank; k++)
		check_subview_bounds(v, op, k);
	if (!ir_type_equal(src->elem, res->elem)) {
		diag_error(v->d, op->loc,
			   "'memref.subview' of %s cannot give %s: the element types differ",
			   tstr(src, a), tstr(res, b));
		return;
	}
	subview_type(op, &full);
	if (!subview_kept(w, &full, res))
		diag_error(v->d, op->loc,
			   "'memref.subview' gives %s, not %s (nor that with sizes of 1 dropped)",
			   tstr(&full, a), tstr(res, b));
}

/* @a and @b have the same sizes and, whatever their spelling, layout. */
static bool same_shape_layout(const struct ir_type *a, const struct ir_type *b)
{
	int64_t sa[IR_MEMREF_MAX_RANK], sb[IR_MEMREF_MAX_RANK], oa, ob;

	if (a->rank != b->rank ||
	    memcmp(a->dims, b->dims, a->rank * sizeof(a->dims[0])))
		return false;
	ir_memref_layout(a, sa, &oa);
	ir_memref_layout(b, sb, &ob);
	return oa == ob && !memcmp(sa, sb, a->rank * sizeof(sa[0]));
}

/* Two sizes, strides or offsets agree: equal, or one of them '?'. */
static bool entries_agree(int64_t a, int64_t b)
{
	return a == b || a == IR_DYNAMIC || b == IR_DYNAMIC;
}

/* The element types of a view operation's source and result agree. */
static bool view_elems_agree(struct verifier *v, struct ir_op *op)
{
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	if (ir_type_has_unsupported(op->type) ||
	    ir_type_has_unsupported(op->to_type))
		return false;		/* reported where the type is written */
	if (ir_type_equal(op->type->elem, op->to_type->elem))
		return true;
	diag_error(v->d, op->loc, "'%s' of %s cannot give %s: the element types differ",
		   op_name(op), tstr(op->type, a), tstr(op->to_type, b));
	return false;
}

/*
 * memref.cast: the same rank, and sizes, strides and offset that agree
 * (where both are static they are equal): a cast only changes what the
 * type says is known.
 */
static void check_memref_cast(struct verifier *v, struct ir_op *op)
{
	const struct ir_type *src = op->type, *res = op->to_type;
	int64_t ss[IR_MEMREF_MAX_RANK], rs[IR_MEMREF_MAX_RANK], so, ro;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];
	bool agree;

	if (!view_elems_agree(v, op))
		return;
	if (src->rank != res->rank) {
		diag_error(v->d, op->loc,
			   "'memref.cast' of %s to %s: the ranks differ",
			   tstr(src, a), tstr(res, b));
		return;
	}
	ir_memref_layout(src, ss, &so);
	ir_memref_layout(res, rs, &ro);
	agree = entries_agree(so, ro);
	for (int k = 0; k < src->rank; k++)
		agree &= entries_agree(src->dims[k], res->dims[k]) &&
			 entries_agree(ss[k], rs[k]);
	if (!agree)
		diag_error(v->d, op->loc,
			   "'memref.cast' of %s to %s: a size, stride or offset static in both differs",
			   tstr(src, a), tstr(res, b));
}

/*
 * The first element past a view of @rank sizes at @offset with @sizes and
 * @strides (all known, sizes > 0), or -1 when it overflows.
 */
static int64_t view_end(int64_t offset, const int64_t *sizes,
			const int64_t *strides, int rank)
{
	int64_t last = offset, t;

	for (int k = 0; k < rank; k++)
		if (__builtin_mul_overflow(sizes[k] - 1, strides[k], &t) ||
		    __builtin_add_overflow(last, t, &last))
			return -1;
	return last + 1;
}

/*
 * memref.reinterpret_cast: one offset and a size and a stride per size of
 * the result, whose type has them where it states them; known ones not
 * negative, and inside the root memref when its sizes are static.  It is
 * relative to the memref the source is a view of, not to the view.
 */
static void check_reinterpret(struct verifier *v, struct ir_op *op)
{
	const struct ir_type *res = op->to_type;
	const struct ir_type *root = ir_view_root(op->operands[0].value)->type;
	struct ir_view *w = op->view;
	int64_t c[IR_VIEW_LISTS][IR_MEMREF_MAX_RANK], rs[IR_MEMREF_MAX_RANK];
	int64_t ro, end;
	bool all_known = true, agree;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];
	struct ir_type gives;

	if (!view_elems_agree(v, op))
		return;
	if (w->num[IR_VIEW_OFFSETS] != 1 || w->num[IR_VIEW_SIZES] != res->rank ||
	    w->num[IR_VIEW_STRIDES] != res->rank) {
		diag_error(v->d, op->loc,
			   "'memref.reinterpret_cast' to %s takes 1 offset and %d sizes and strides, not %d, %d and %d",
			   tstr(res, a), res->rank, w->num[IR_VIEW_OFFSETS],
			   w->num[IR_VIEW_SIZES], w->num[IR_VIEW_STRIDES]);
		return;
	}
	for (int l = 0; l < IR_VIEW_LISTS; l++)
		for (int k = 0; k < w->num[l]; k++) {
			const struct ir_value *x;

			if (!ir_view_entry(op, l, k, &c[l][k], &x)) {
				all_known = false;
			} else if (c[l][k] < 0) {
				diag_error(v->d, w->loc[l][k],
					   "%s %d of 'memref.reinterpret_cast' is %lld, below 0",
					   view_list_name[l], k, (long long)c[l][k]);
				return;
			} else if (l == IR_VIEW_SIZES && !c[l][k]) {
				all_known = false;	/* empty: reaches nothing */
			}
		}
	gives = *res;
	gives.strided = true;
	gives.offset = w->lit[IR_VIEW_OFFSETS][0];
	memcpy(gives.dims, w->lit[IR_VIEW_SIZES], sizeof(gives.dims));
	memcpy(gives.strides, w->lit[IR_VIEW_STRIDES], sizeof(gives.strides));
	ir_memref_layout(res, rs, &ro);
	agree = ro == IR_DYNAMIC || ro == gives.offset;
	for (int k = 0; k < res->rank; k++)
		agree &= (res->dims[k] == IR_DYNAMIC || res->dims[k] == gives.dims[k]) &&
			 (rs[k] == IR_DYNAMIC || rs[k] == gives.strides[k]);
	if (!agree) {
		diag_error(v->d, op->loc,
			   "'memref.reinterpret_cast' gives %s, not %s (a '?' may stand for a static entry, not the other way)",
			   tstr(&gives, a), tstr(res, b));
		return;
	}
	if (!all_known || root->strided || ir_memref_elems(root) == IR_DYNAMIC)
		return;
	end = view_end(c[IR_VIEW_OFFSETS][0], c[IR_VIEW_SIZES],
		       c[IR_VIEW_STRIDES], res->rank);
	if (end < 0 || end > ir_memref_elems(root))
		diag_error(v->d, op->loc,
			   "'memref.reinterpret_cast' reaches beyond the %lld elements of %s",
			   (long long)ir_memref_elems(root), tstr(root, a));
}

/*
 * memref.expand_shape and collapse_shape: a reassociation with a group
 * per size of the lower-rank type covering the sizes of the higher-rank
 * one; expand_shape's output_shape (needed for '?' sizes) has the
 * result's sizes where it states them.
 */
static bool check_groups(struct verifier *v, struct ir_op *op,
			 const struct ir_type *low, const struct ir_type *high)
{
	const struct ir_view *w = op->view;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];

	if (w->num_groups != low->rank || w->num_grouped != high->rank) {
		diag_error(v->d, op->loc,
			   "'%s' of %s into %s: the reassociation needs %d groups of %d sizes in all, not %d of %d",
			   op_name(op), tstr(op->type, a), tstr(op->to_type, b),
			   low->rank, high->rank, w->num_groups, w->num_grouped);
		return false;
	}
	if (op->code != IR_OP_MEMREF_EXPAND_SHAPE)
		return true;
	if (!w->has_output_shape) {
		for (int k = 0; k < high->rank; k++)
			if (high->dims[k] == IR_DYNAMIC) {
				diag_error(v->d, op->loc,
					   "'memref.expand_shape' into %s needs an output_shape for its '?' sizes",
					   tstr(high, a));
				return false;
			}
		return true;
	}
	if (w->num[IR_VIEW_SIZES] != high->rank) {
		diag_error(v->d, op->loc,
			   "'memref.expand_shape' into %s takes %d output_shape entries, not %d",
			   tstr(high, a), high->rank, w->num[IR_VIEW_SIZES]);
		return false;
	}
	for (int k = 0; k < high->rank; k++)
		if (w->lit[IR_VIEW_SIZES][k] != high->dims[k]) {
			diag_error(v->d, w->loc[IR_VIEW_SIZES][k],
				   "output_shape entry %d must be %s: size %d of %s is %s",
				   k, high->dims[k] == IR_DYNAMIC ? "a value" :
				   "that size", k, tstr(high, a),
				   high->dims[k] == IR_DYNAMIC ? "'?'" : "static");
			return false;
		}
	return true;
}

/*
 * The type a reshape of @op->type gives, as MLIR infers it: expand_shape
 * splits a size's stride over its group (each size's stride the next
 * one's times its size), collapse_shape keeps each group's innermost
 * stride and multiplies its sizes; the offset stays.  A collapsed group
 * must be contiguous where its strides and sizes are known.
 */
static bool reshape_type(struct verifier *v, struct ir_op *op,
			 struct ir_type *t)
{
	const struct ir_type *src = op->type;
	const struct ir_view *w = op->view;
	bool expand = op->code == IR_OP_MEMREF_EXPAND_SHAPE;
	int64_t ss[IR_MEMREF_MAX_RANK];
	char a[IR_TYPE_STR_MAX];

	*t = *op->to_type;
	t->strided = true;
	ir_memref_layout(src, ss, &t->offset);
	if (expand) {
		for (int k = t->rank - 1; k >= 0; k--) {
			bool last = k == t->rank - 1 || w->group[k + 1] != w->group[k];

			t->strides[k] = last ? ss[w->group[k]] :
					layout_mul(t->strides[k + 1], t->dims[k + 1]);
		}
		return true;
	}
	for (int i = 0; i < t->rank; i++)
		t->dims[i] = 1;
	for (int j = 0; j < src->rank; j++) {
		int g = w->group[j];
		bool last = j == src->rank - 1 || w->group[j + 1] != g;

		t->dims[g] = layout_mul(t->dims[g], src->dims[j]);
		if (src->dims[j] == 0)
			t->dims[g] = 0;
		if (last) {
			t->strides[g] = ss[j];
			continue;
		}
		if (ss[j] != IR_DYNAMIC && ss[j + 1] != IR_DYNAMIC &&
		    src->dims[j + 1] != IR_DYNAMIC &&
		    ss[j] != ss[j + 1] * src->dims[j + 1]) {
			diag_error(v->d, op->loc,
				   "'memref.collapse_shape' of %s: sizes %d and %d are not contiguous (stride %lld, not %lld)",
				   tstr(src, a), j, j + 1, (long long)ss[j],
				   (long long)(ss[j + 1] * src->dims[j + 1]));
			return false;
		}
	}
	return true;
}

static void check_reshape(struct verifier *v, struct ir_op *op)
{
	bool expand = op->code == IR_OP_MEMREF_EXPAND_SHAPE;
	const struct ir_type *low = expand ? op->type : op->to_type;
	const struct ir_type *high = expand ? op->to_type : op->type;
	char a[IR_TYPE_STR_MAX], b[IR_TYPE_STR_MAX];
	struct ir_type full;

	if (!view_elems_agree(v, op) || !check_groups(v, op, low, high))
		return;
	for (int g = 0; g < low->rank; g++) {
		int64_t product = 1;

		for (int k = 0; k < high->rank; k++)
			if (op->view->group[k] == g)
				product = layout_mul(product, high->dims[k]);
		if (product != IR_DYNAMIC && low->dims[g] != IR_DYNAMIC &&
		    product != low->dims[g]) {
			diag_error(v->d, op->loc,
				   "'%s': the sizes of %s grouped into size %d of %s multiply to %lld, not %lld",
				   op_name(op), tstr(high, a), g, tstr(low, b),
				   (long long)product, (long long)low->dims[g]);
			return;
		}
	}
	if (!reshape_type(v, op, &full))
		return;
	if (!same_shape_layout(&full, op->to_type))
		diag_error(v->d, op->loc, "'%s' gives %s, not %s", op_name(op),
			   tstr(&full, a), tstr(op->to_type, b));
}

/* Rules particular to one operation. */
static void check_semantics(struct verifier *v, struct ir_op *op)
{
	switch (op->code) {
	case IR_OP_THREAD_LAUNCH:
		check_launch(v, op);
		break;
	case IR_OP_FUNC_CALL:
		check_call(v, op);
		break;
	case IR_OP_THREAD_WAIT:
		check_tokens(v, op, op->operands, op->num_operands, true);
		break;
	case IR_OP_WORK_SPAWN:
		check_spawn(v, op);
		break;
	case IR_OP_THREAD_YIELD:
		check_frontiers(v, op);
		break;
	case IR_OP_SCF_YIELD:
		check_scf_yield(v, op);
		break;
	case IR_OP_MEMREF_ALLOC:
		check_alloc(v, op);
		break;
	case IR_OP_MEMREF_LOAD:
	case IR_OP_MEMREF_STORE:
	case IR_OP_MEMREF_ATOMIC_RMW:
		check_access(v, op);
		break;
	case IR_OP_MEMREF_DIM:
		check_dim(v, op);
		break;
	case IR_OP_MEMREF_SUBVIEW:
		check_subview(v, op);
		break;
	case IR_OP_MEMREF_CAST:
		check_memref_cast(v, op);
		break;
	case IR_OP_MEMREF_REINTERPRET_CAST:
		check_reinterpret(v, op);
		break;
	case IR_OP_MEMREF_EXPAND_SHAPE:
	case IR_OP_MEMREF_COLLAPSE_SHAPE:
		check_reshape(v, op);
		break;
	case IR_OP_AFFINE_APPLY:
	case IR_OP_AFFINE_MIN:
	case IR_OP_AFFINE_MAX:
		check_affine(v, op);
		break;
	case IR_OP_SCF_IF:
		check_if(v, op);
		break;
	case IR_OP_RETURN:
		if (op->num_operands)
			diag_error(v->d, op->loc,
				   "'return' takes no operands: host functions return nothing");
		break;
	default:
		break;
	}
}

/* No channel type anywhere in an operation of a dynamic-work thread. */
static bool check_op_channels(struct verifier *v, struct ir_op *op)
{
	const struct ir_type *bad = NULL;
	char buf[IR_TYPE_STR_MAX];

	if (!is_dynamic(v->func))
		return true;
	for (int i = 0; i < op->num_operands && !bad; i++)
		if (op->operand_types[i] &&
		    ir_type_has_channel(op->operand_types[i]))
			bad = op->operand_types[i];
	for (int i = 0; i < op->num_results && !bad; i++)
		if (ir_type_has_channel(op->results[i].type))
			bad = op->results[i].type;
	if (!bad && op->type && ir_type_has_channel(op->type))
		bad = op->type;
	if (!bad)
		return true;
	diag_error(v->d, op->loc,
		   "dynamic-work thread @%s cannot use channel type %s",
		   v->func->name, tstr(bad, buf));
	return false;
}

/* ---------------------------------------------------- constant folding --- */

static uint64_t mask(unsigned w)
{
	return w >= 64 ? UINT64_MAX : (1ULL << w) - 1;
}

static bool fold_cmp(enum ir_pred pred, int64_t a, int64_t b, unsigned w)
{
	uint64_t ua = (uint64_t)a & mask(w), ub = (uint64_t)b & mask(w);

	switch (pred) {
	case IR_PRED_EQ:	return ua == ub;
	case IR_PRED_NE:	return ua != ub;
	case IR_PRED_SLT:	return a < b;
	case IR_PRED_SLE:	return a <= b;
	case IR_PRED_SGT:	return a > b;
	case IR_PRED_SGE:	return a >= b;
	case IR_PRED_ULT:	return ua < ub;
	case IR_PRED_ULE:	return ua <= ub;
	case IR_PRED_UGT:	return ua > ub;
	default:		return ua >= ub;
	}
}

/*
 * a op b on values of width @w, sign-extended; false when the result is
 * undefined (division by zero, signed overflow of a division, a shift by
 * the width or more).
 */
static bool fold_binary(enum ir_alu alu, int64_t a, int64_t b, unsigned w,
			uint64_t *r)
{
	uint64_t ua = (uint64_t)a & mask(w), ub = (uint64_t)b & mask(w);
	int64_t min = ir_sext(1ULL << (w - 1), w);

	switch (alu) {
	case ALU_ADD:	*r = (uint64_t)a + (uint64_t)b; return true;
	case ALU_SUB:	*r = (uint64_t)a - (uint64_t)b; return true;
	case ALU_MUL:	*r = (uint64_t)a * (uint64_t)b; return true;
	case ALU_AND:	*r = ua & ub; return true;
	case ALU_OR:	*r = ua | ub; return true;
	case ALU_XOR:	*r = ua ^ ub; return true;
	case ALU_MAXS:	*r = (uint64_t)(a > b ? a : b); return true;
	case ALU_MINS:	*r = (uint64_t)(a < b ? a : b); return true;
	case ALU_MAXU:	*r = ua > ub ? ua : ub; return true;
	case ALU_MINU:	*r = ua < ub ? ua : ub; return true;
	case ALU_DIVU:	*r = ub ? ua / ub : 0; return ub != 0;
	case ALU_REMU:	*r = ub ? ua % ub : 0; return ub != 0;
	case ALU_DIVS:
	case ALU_REMS:
		if (b == 0 || (a == min && b == -1))
			return false;
		*r = (uint64_t)(alu == ALU_DIVS ? a / b : a % b);
		return true;
	case ALU_FLOORDIVS:
	case ALU_CEILDIVS:
		if (b == 0 || (a == min && b == -1))
			return false;
		*r = (uint64_t)(a / b);
		if (a % b && ((a % b < 0) != (b < 0)) == (alu == ALU_FLOORDIVS))
			*r += alu == ALU_FLOORDIVS ? -1 : 1;
		return true;
	case ALU_SHL:	*r = ub < w ? ua << ub : 0; return ub < w;
	case ALU_SHRU:	*r = ub < w ? ua >> ub : 0; return ub < w;
	case ALU_SHRS:
		*r = ub < w ? (uint64_t)(a >> ub) : 0;	/* gcc: arithmetic */
		return ub < w;
	default:
		return false;
	}
}

/* memref.dim of a static size is that size. */
static void fold_dim(struct ir_op *op)
{
	const struct ir_value *k = op->operands[1].value;
	const struct ir_type *t = op->type;

	if (t->kind != IR_TYPE_MEMREF || !k || !k->is_const ||
	    k->const_val < 0 || k->const_val >= t->rank ||
	    t->dims[k->const_val] == IR_DYNAMIC)
		return;
	op->results[0].is_const = true;
	op->results[0].const_val = t->dims[k->const_val];
}

/*
 * An affine op whose value is known: every result of its map is, from the
 * constant operands (x * 0 needs none).  Only a well-formed op is folded.
 */
static void fold_affine(struct ir_op *op)
{
	const struct ir_affine_map *m = op->map;
	int64_t vals[64], r = 0;
	bool known[64];

	if (op->num_operands > 64 || op->num_args != m->num_dims ||
	    op->num_operands - op->num_args != m->num_syms ||
	    (op->code == IR_OP_AFFINE_APPLY && m->num_results != 1))
		return;
	for (int i = 0; i < op->num_operands; i++) {
		const struct ir_value *x = op->operands[i].value;

		known[i] = x && x->is_const;
		vals[i] = known[i] ? x->const_val : 0;
	}
	for (int i = 0; i < m->num_results; i++) {
		int64_t x;

		if (!ir_affine_eval(m->results[i], vals, known, m->num_dims, &x))
			return;
		if (i == 0 || (op->code == IR_OP_AFFINE_MAX ? x > r : x < r))
			r = x;
	}
	op->results[0].is_const = true;
	op->results[0].const_val = r;
}

/* Folds @op when all its operands are known constants. */
static void fold(struct ir_op *op)
{
	enum ir_alu alu = ir_opinfo[op->code].alu;
	int64_t x[3] = { 0 };
	uint64_t r;
	unsigned w;

	if (op->code == IR_OP_ARITH_CONSTANT || op->code == IR_OP_INDEX_CONSTANT) {
		op->results[0].is_const = true;
		op->results[0].const_val = op->imm;
		return;
	}
	if (op->code == IR_OP_MEMREF_DIM) {
		fold_dim(op);
		return;
	}
	if (ir_opinfo[op->code].syntax == SYN_AFFINE) {
		fold_affine(op);
		return;
	}
	if (alu == ALU_NONE || op->num_results != 1 || op->num_operands > 3)
		return;
	for (int i = 0; i < op->num_operands; i++) {
		if (!op->operands[i].value || !op->operands[i].value->is_const)
			return;
		x[i] = op->operands[i].value->const_val;
	}
	/* f32 arithmetic is left to the ALU; a bitcast keeps the token */
	if (alu == ALU_BITCAST && op->num_operands == 1) {
		op->results[0].is_const = true;
		op->results[0].const_val = x[0];
	}
	if (alu >= ALU_FADD)
		return;
	w = ir_type_width(op->operands[op->num_operands - 1].value->type);
	if (!w || !ir_type_width(op->results[0].type))
		return;
	if (alu == ALU_CMP)
		r = fold_cmp(op->pred, x[0], x[1], w);
	else if (alu == ALU_SELECT)
		r = (uint64_t)(x[0] ? x[1] : x[2]);
	else if (alu == ALU_CASTS)
		r = (uint64_t)x[0];
	else if (alu == ALU_CASTU)
		r = (uint64_t)x[0] & mask(w);
	else if (!fold_binary(alu, x[0], x[1], w, &r))
		return;
	op->results[0].is_const = true;
	op->results[0].const_val = ir_sext(r, ir_type_width(op->results[0].type));
}

/* ------------------------------------------------------------- bodies --- */

static void check_region(struct verifier *v, struct ir_region *r);

static void check_op(struct verifier *v, struct ir_op *op)
{
	bool resolved = resolve(v, op);

	if (op->num_attrs) {
		char what[64];

		snprintf(what, sizeof(what), "'%s'", op_name(op));
		check_attrs(v, op->attrs, op->num_attrs, ON_OP, what);
	}
	if (check_context(v, op) && resolved && check_op_channels(v, op)) {
		if (check_written_types(v, op)) {
			if (op->code != IR_OP_THREAD_WAIT &&
			    op->code != IR_OP_THREAD_YIELD)
				check_operand_types(v, op);
			check_semantics(v, op);
		}
	}
	if (op->body)
		check_region(v, op->body);
	if (op->else_body)
		check_region(v, op->else_body);
	fold(op);
	for (int i = 0; i < op->num_results; i++)
		define(v, &op->results[i]);
}

static void check_region(struct verifier *v, struct ir_region *r)
{
	int mark = v->num_names;

	for (int i = 0; i < r->num_args; i++)
		define(v, &r->args[i]);
	for (struct ir_op *op = r->first; op; op = op->next)
		check_op(v, op);
	check_region_end(v, r);
	pop_names(v, mark);
}

static void check_body(struct verifier *v, struct ir_func *f)
{
	v->func = f;
	if (f->is_thread) {
		check_attrs(v, f->attrs, f->num_attrs, ON_THREAD,
			    "a dataflow.thread");
		check_child_capacity(v, f);
	} else {
		check_attrs(v, f->attrs, f->num_attrs, ON_HOST,
			    "a host function");
	}
	check_region(v, &f->body);
	pop_names(v, 0);
}

/* Every symbol is defined once. */
static void check_symbols(struct verifier *v)
{
	for (struct ir_func *f = v->m->funcs; f; f = f->next) {
		struct ir_func *first = ir_module_find(v->m, f->name);

		if (first == f)
			continue;
		diag_error(v->d, f->name_loc, "redefinition of symbol @%s",
			   f->name);
		diag_note(v->d, first->name_loc,
			  "previous definition of @%s is here", f->name);
	}
}

/* ---------------------------------------------------------- warnings --- */

static bool any_result_used(const struct ir_op *op)
{
	for (int i = 0; i < op->num_results; i++)
		if (op->results[i].used)
			return true;
	return false;
}

/*
 * Operations none of whose results is used: computed for nothing.  (One
 * unused result of several is not reported: the operation is needed.  An
 * atomic_rmw is done for its effect; MLIR names its old value anyway.)
 */
static void warn_unused(struct verifier *v, const struct ir_region *r)
{
	for (const struct ir_op *op = r->first; op; op = op->next) {
		bool effect = op->code == IR_OP_MEMREF_ATOMIC_RMW;

		if (!effect && op->num_results == 1 && !op->results[0].used)
			diag_warning(v->d, op->results[0].loc,
				     "value '%%%s' is never used",
				     op->results[0].name);
		else if (!effect && op->num_results > 1 && !any_result_used(op))
			diag_warning(v->d, op->results[0].loc,
				     "none of the %d results of '%s' is used",
				     op->num_results, op_name(op));
		if (op->body)
			warn_unused(v, op->body);
		if (op->else_body)
			warn_unused(v, op->else_body);
	}
}

/* Does an operation of @r (nested regions too) func.call @f? */
static bool region_calls(const struct ir_region *r, const struct ir_func *f)
{
	for (const struct ir_op *op = r->first; op; op = op->next)
		if ((op->code == IR_OP_FUNC_CALL && op->target == f) ||
		    (op->body && region_calls(op->body, f)) ||
		    (op->else_body && region_calls(op->else_body, f)))
			return true;
	return false;
}

/*
 * Host functions that no func.call calls have no caller that passes
 * arguments: loom_host_run() (and loom-run) call them with none.
 */
static void warn_host_params(struct verifier *v, const struct ir_func *f)
{
	if (f->is_thread || !f->num_inputs)
		return;
	for (const struct ir_func *g = v->m->funcs; g; g = g->next)
		if (!g->is_thread && region_calls(&g->body, f))
			return;
	diag_warning(v->d, f->body.args[0].loc,
		     "host function @%s has %d parameter%s, but nothing can pass %s: loom_host_run() and loom-run call host functions with none, and no func.call calls it",
		     f->name, f->num_inputs, plural(f->num_inputs),
		     f->num_inputs == 1 ? "it" : "them");
}

/* The warnings of a verified unit (that has no error). */
static void warn_module(struct diag *d, struct ir_module *m)
{
	struct verifier v = { .d = d, .m = m };

	for (struct ir_func *f = m->funcs; f; f = f->next) {
		warn_host_params(&v, f);
		warn_unused(&v, &f->body);
	}
}

unsigned verify_module(struct diag *d, struct ir_module *m)
{
	struct verifier v = { .d = d, .m = m };
	unsigned before = d->errors;

	memset(v.bucket, 0xff, sizeof(v.bucket));
	check_symbols(&v);
	mark_called(&v);
	for (struct ir_func *f = m->funcs; f; f = f->next)
		if (f->is_thread)
			check_thread_signature(&v, f);
	for (struct ir_func *f = m->funcs; f; f = f->next)
		check_body(&v, f);
	check_recursion(&v);
	free(v.names);
	return d->errors - before;
}

/* -------------------------------------------------------- whole files --- */

/**
 * struct program - what the units of a file hold, for its warnings
 * @num_threads: threads
 * @num_host: host functions
 * @first_host: the first host function's name
 * @has_main: a host function is named main
 */
struct program {
	int num_threads;
	int num_host;
	struct loom_loc first_host;
	bool has_main;
};

static void count_funcs(struct program *prog, const struct ir_module *m)
{
	for (const struct ir_func *f = m->funcs; f; f = f->next) {
		if (f->is_thread) {
			prog->num_threads++;
			continue;
		}
		if (!prog->num_host++)
			prog->first_host = f->name_loc;
		if (!strcmp(f->name, "main"))
			prog->has_main = true;
	}
}

/*
 * An image with nothing in it, or host functions none of which is the
 * one loom-run runs.  (Threads alone are fine: a C program launches them
 * through libloom.)
 */
static void warn_program(struct diag *d, const struct program *prog)
{
	if (!prog->num_threads && !prog->num_host)
		diag_warning(d, (struct loom_loc){ 1, 1, 0, 0 },
			     "empty program: no thread and no host function, the image holds nothing");
	else if (prog->num_host && !prog->has_main)
		diag_warning(d, prog->first_host,
			     "no @main: loom-run runs @main (and so does loom_host_run() unless given another host function)");
}

static void verify_unit(struct diag *d, const struct unit_span *unit,
			struct program *prog, verify_unit_fn each, void *arg)
{
	unsigned before = d->errors;
	struct token_list toks;
	struct ir_module *m = NULL;

	if (lex_unit(d, unit, &toks) == 0)
		m = parse_unit(d, &toks);
	token_list_free(&toks);
	if (!m)
		return;
	count_funcs(prog, m);
	verify_module(d, m);
	if (d->errors == before)
		warn_module(d, m);
	if (d->errors == before && each)
		each(m, arg);
	ir_module_free(m);
}

unsigned verify_source(struct diag *d, verify_unit_fn each, void *arg)
{
	struct unit_span *units;
	long n = lex_split_units(d->src, &units);
	unsigned before = d->errors;
	struct program prog = { 0 };

	if (n < 0) {
		diag_error(d, (struct loom_loc){ 0 }, "out of memory");
		return 1;
	}
	diag_hold_warnings(d);
	for (long i = 0; i < n; i++)
		verify_unit(d, &units[i], &prog, each, arg);
	free(units);
	if (d->errors == before)
		warn_program(d, &prog);
	diag_release_warnings(d, d->errors == before);
	return d->errors - before;
}
