// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * parser.c: a recursive-descent parser, one function per grammar rule with
 * the rule above it.  Everything it builds lives in the module's arena, so
 * the first syntax error simply reports, longjmps out of the descent and
 * drops the arena: nothing can leak and nothing half-built escapes.  An
 * unsupported type is not a syntax error: it is reported and parsing goes
 * on, and the unit is still verified (but never compiled).
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"

/**
 * struct parser - parsing state of one unit
 * @d: diagnostics
 * @tok: the current token (never past the TK_EOF)
 * @m: the module being built
 * @depth: current nesting of regions, arrays and types
 * @func: the function being parsed
 * @misindented: in @func, the first region whose '}' is not indented like
 *	the line of its '{' (line 0: none); the likely unclosed one when a
 *	'}' turns out to be missing
 * @misindented_end: that region's '}'
 * @fail: where a syntax error jumps to
 */
/**
 * struct vec - a growable array in the module's arena
 * @data: the elements
 * @num: used
 * @cap: allocated
 */
struct vec {
	void *data;
	int num;
	int cap;
};

struct parser {
	struct diag *d;
	const struct token *tok;
	struct ir_module *m;
	int depth;
	const struct ir_func *func;
	struct loom_loc misindented;
	struct loom_loc misindented_end;
	struct vec map_aliases;		/* struct map_alias, this unit's */
	jmp_buf fail;
};

/**
 * struct map_alias - a top-level "#name = affine_map<...>"
 * @name: the name with its '#'
 * @map: the map
 */
struct map_alias {
	const char *name;
	const struct ir_affine_map *map;
};

/**
 * struct map_names - the dimension and symbol names of the map being
 * parsed: names[0, num_dims) the dims, then the syms
 */
struct map_names {
	const struct token *names[64];
	int num_dims;
	int num;
};

/* ------------------------------------------------------------ helpers --- */

static _Noreturn __attribute__((format(printf, 3, 4)))
void fail_at(struct parser *p, struct loom_loc loc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_error(p->d, loc, "%s", msg);
	longjmp(p->fail, 1);
}

static void *alloc(struct parser *p, size_t size)
{
	void *mem = ir_alloc(p->m, size);

	if (!mem)
		fail_at(p, p->tok->loc, "out of memory");
	return mem;
}

/* Appends a zeroed element of @size bytes to @v and returns it. */
static void *vec_push(struct parser *p, struct vec *v, size_t size)
{
	if (v->num == v->cap) {
		int cap = v->cap ? v->cap * 2 : 4;
		void *data;

		if (v->cap > INT_MAX / 4)
			fail_at(p, p->tok->loc, "too many elements");
		data = alloc(p, (size_t)cap * size);
		if (v->num)
			memcpy(data, v->data, (size_t)v->num * size);
		v->data = data;
		v->cap = cap;
	}
	return memset((char *)v->data + (size_t)v->num++ * size, 0, size);
}

/* How the current token reads in "found ..." messages. */
static const char *found(struct parser *p, char *buf, size_t size)
{
	const struct token *t = p->tok;

	if (t->kind == TK_EOF)
		return "end of input";
	snprintf(buf, size, "'%.*s%s'", t->len > 40 ? 40 : (int)t->len,
		 t->text, t->len > 40 ? "..." : "");
	return buf;
}

static _Noreturn void fail_expected(struct parser *p, const char *what)
{
	char buf[64];

	fail_at(p, p->tok->loc, "expected %s, found %s", what,
		found(p, buf, sizeof(buf)));
}

static void advance(struct parser *p)
{
	if (p->tok->kind != TK_EOF)
		p->tok++;
}

static bool at(struct parser *p, const char *s)
{
	return p->tok->kind != TK_STRING && tok_is(p->tok, s);
}

static bool consume(struct parser *p, const char *s)
{
	if (!at(p, s))
		return false;
	advance(p);
	return true;
}

static const struct token *expect(struct parser *p, const char *s)
{
	const struct token *t = p->tok;
	char what[64];

	if (!at(p, s)) {
		snprintf(what, sizeof(what), "'%s'", s);
		fail_expected(p, what);
	}
	advance(p);
	return t;
}

static const struct token *expect_kind(struct parser *p, enum tok_kind kind,
				       const char *what)
{
	const struct token *t = p->tok;

	if (t->kind != kind)
		fail_expected(p, what);
	advance(p);
	return t;
}

/* The token's text without its sigil, as a string in the arena. */
static const char *name_of(struct parser *p, const struct token *t)
{
	char *s = ir_strndup(p->m, t->text + 1, t->len - 1);

	if (!s)
		fail_at(p, t->loc, "out of memory");
	return s;
}

static void enter(struct parser *p)
{
	if (++p->depth > PARSE_MAX_DEPTH)
		fail_at(p, p->tok->loc, "nesting deeper than %d levels",
			PARSE_MAX_DEPTH);
}

static void leave(struct parser *p)
{
	p->depth--;
}

static uint64_t int_literal(struct parser *p)
{
	const struct token *t = expect_kind(p, TK_INT, "an integer");

	if (t->overflow)
		fail_at(p, t->loc, "integer literal too large");
	return t->ival;
}

/* ------------------------------------------------------------- types --- */

static const struct ir_type *type(struct parser *p);

static const struct ir_type *new_type(struct parser *p, enum ir_type_kind k,
				      const struct ir_type *elem)
{
	struct ir_type *t = alloc(p, sizeof(*t));

	t->kind = k;
	t->elem = elem;
	return t;
}

/* A scalar spelled by the @len bytes at @s, or NULL. */
static const struct ir_type *scalar_named(const char *s, size_t len)
{
	static const struct { const char *name; const struct ir_type *t; }
	scalars[] = {
		{ "i1", &ir_i1 }, { "i32", &ir_i32 }, { "i64", &ir_i64 },
		{ "index", &ir_index }, { "none", &ir_none }, { "f32", &ir_f32 },
	};

	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (strlen(scalars[i].name) == len &&
		    memcmp(scalars[i].name, s, len) == 0)
			return scalars[i].t;
	return NULL;
}

/* Longest spelling of an unsupported type kept (and printed) in full. */
#define UNSUPPORTED_NAME_MAX	40

static size_t unsupported_name_len(size_t len)
{
	return len > UNSUPPORTED_NAME_MAX ? UNSUPPORTED_NAME_MAX : len;
}

/*
 * The type spelled by the @len bytes at @s, which loomc does not support.
 * Its error is reported where it is written, and parsing goes on with
 * this stand-in, so that a launch or an operation using it is still
 * checked: a mismatch is diagnosed where it is, not hidden behind the
 * unsupported type.
 */
static const struct ir_type *unsupported_type(struct parser *p, const char *s,
					      size_t len)
{
	struct ir_type *t = alloc(p, sizeof(*t));

	t->kind = IR_TYPE_UNSUPPORTED;
	t->name = ir_strndup(p->m, s, unsupported_name_len(len));
	if (!t->name)
		fail_at(p, p->tok->loc, "out of memory");
	return t;
}

/* Element type of a memref, from the text after the shape's last 'x'. */
static const struct ir_type *memref_elem(struct parser *p, const char *s,
					 size_t len, struct loom_loc loc)
{
	const struct ir_type *t = scalar_named(s, len);

	if (t && (t->kind == IR_TYPE_I32 || t->kind == IR_TYPE_I64 ||
		  t->kind == IR_TYPE_F32))
		return t;
	diag_error(p->d, loc,
		   "memref element type must be i32, i64 or f32, not '%.*s'",
		   (int)unsupported_name_len(len), s);
	return unsupported_type(p, s, len);
}

/* The location of the @len bytes @skip bytes into token @t. */
static struct loom_loc loc_within(const struct token *t, size_t skip,
				  size_t len)
{
	struct loom_loc loc = t->loc;

	loc.col += skip;
	loc.offset += skip;
	loc.len = len;
	return loc;
}

/*
 * Appends size @v (IR_DYNAMIC for '?') written at @loc to memref type @t,
 * whose rank and element count stay within what loomc compiles.
 */
static void memref_size(struct parser *p, struct ir_type *t, int64_t v,
			struct loom_loc loc)
{
	if (t->rank == IR_MEMREF_MAX_RANK)
		fail_at(p, loc, "memref rank above %d, the device's coordinate limit",
			IR_MEMREF_MAX_RANK);
	if (v > 0) {
		int64_t elems = v;	/* a byte offset must fit in an i64 */

		for (int k = 0; k < t->rank; k++)
			if (t->dims[k] > 0 && elems > (INT64_MAX >> 3) / t->dims[k])
				fail_at(p, loc, "memref size too large");
			else if (t->dims[k] > 0)
				elems *= t->dims[k];
	}
	t->dims[t->rank++] = v;
}

/* One size token: '?' or an integer; false when there is none. */
static bool memref_size_token(struct parser *p, struct ir_type *t)
{
	const struct token *tok = p->tok;

	if (consume(p, "?")) {
		memref_size(p, t, IR_DYNAMIC, tok->loc);
		return true;
	}
	if (tok->kind != TK_INT)
		return false;
	if (int_literal(p) > INT64_MAX >> 3)
		fail_at(p, tok->loc, "memref size too large");
	memref_size(p, t, (int64_t)tok->ival, tok->loc);
	return true;
}

/*
 * The lexer reads "4x8xi64" as 4 and the identifier "x8xi64": take the
 * sizes inside identifier @x (which starts with 'x') and return the
 * element type after the last 'x', or NULL when @x ends with an 'x' and
 * the next size is a token of its own ("x?xf32").
 */
static const struct ir_type *memref_sizes_in(struct parser *p,
					     struct ir_type *t,
					     const struct token *x)
{
	size_t i = 1;

	while (i < x->len && x->text[i] >= '0' && x->text[i] <= '9') {
		size_t start = i;
		int64_t v = 0;

		while (i < x->len && x->text[i] >= '0' && x->text[i] <= '9') {
			if (v > (INT64_MAX >> 3) / 10)
				fail_at(p, loc_within(x, start, i - start + 1),
					"memref size too large");
			v = v * 10 + (x->text[i++] - '0');
		}
		memref_size(p, t, v, loc_within(x, start, i - start));
		if (i == x->len || x->text[i] != 'x')
			fail_at(p, loc_within(x, i, 1),
				"expected 'x' after a memref size");
		i++;
	}
	if (i == x->len)
		return NULL;
	/* "xf64" alone is located as a whole, as it was before rank-N */
	return memref_elem(p, x->text + i, x->len - i,
			   i == 1 ? x->loc : loc_within(x, i, x->len - i));
}

/* A stride or offset of a layout: '?' or an integer, kept in range. */
static int64_t layout_entry(struct parser *p)
{
	const struct token *tok = p->tok;

	if (consume(p, "?"))
		return IR_DYNAMIC;
	if (tok->kind != TK_INT)
		fail_expected(p, "'?' or a non-negative integer");
	if (int_literal(p) > INT64_MAX >> 3)
		fail_at(p, tok->loc, "memref stride or offset too large");
	return (int64_t)tok->ival;
}

/*
 * layout = "strided" "<" "[" entry ("," entry)* "]" ("," "offset" ":"
 *	    entry)? ">" ; entry = "?" | INT
 * One stride per size of @t.
 */
static void strided_layout(struct parser *p, struct ir_type *t)
{
	const struct token *open;
	int n = 0;

	expect(p, "strided");
	expect(p, "<");
	open = expect(p, "[");
	do {
		if (n == t->rank)
			fail_at(p, p->tok->loc,
				"a strided layout of a rank-%d memref takes %d stride%s, not more",
				t->rank, t->rank, t->rank == 1 ? "" : "s");
		t->strides[n++] = layout_entry(p);
	} while (consume(p, ","));
	if (n != t->rank)
		fail_at(p, open->loc,
			"a strided layout of a rank-%d memref takes %d stride%s, not %d",
			t->rank, t->rank, t->rank == 1 ? "" : "s", n);
	expect(p, "]");
	if (consume(p, ",")) {
		expect(p, "offset");
		expect(p, ":");
		t->offset = layout_entry(p);
	}
	expect(p, ">");
	t->strided = true;
}

/*
 * memref_type = "memref" "<" size ("x" size)* "x" elem ("," layout)? ">"
 * size = "?" | INT ; elem = "i32" | "i64" | "f32"
 * Rank 1 to IR_MEMREF_MAX_RANK, row-major unless a strided layout says
 * otherwise.  (Another element type is reported and kept as unsupported.)
 */
static const struct ir_type *memref_type(struct parser *p)
{
	struct ir_type *t = alloc(p, sizeof(*t));
	const struct ir_type *elem = NULL;

	t->kind = IR_TYPE_MEMREF;
	expect(p, "memref");
	expect(p, "<");
	while (!elem) {
		const struct token *x;

		if (!memref_size_token(p, t)) {
			if (t->rank == 0 && p->tok->kind == TK_IDENT)
				fail_at(p, p->tok->loc,
					"rank-0 memrefs are not supported; use memref<?xT> or memref<NxT>");
			fail_expected(p, "'?' or a size");
		}
		x = p->tok;
		if (x->kind != TK_IDENT || x->text[0] != 'x')
			fail_expected(p, "'x' and an element type");
		advance(p);
		if (x->len > 1) {
			elem = memref_sizes_in(p, t, x);
		} else if (p->tok->kind == TK_IDENT) {
			x = p->tok;
			advance(p);
			elem = memref_elem(p, x->text, x->len, x->loc);
		}
	}
	if (consume(p, ","))
		strided_layout(p, t);
	expect(p, ">");
	t->elem = elem;
	return t;
}

/* dialect_type = "!dataflow.thread_token" | "!dataflow.channel" "<" type ">" */
static const struct ir_type *dialect_type(struct parser *p)
{
	const struct token *t = p->tok;
	const struct ir_type *elem;

	advance(p);
	if (tok_is(t, "!dataflow.thread_token"))
		return &ir_token;
	if (!tok_is(t, "!dataflow.channel"))
		fail_at(p, t->loc, "unknown type '%.*s' (the dialect types are %s)",
			(int)(t->len > 40 ? 40 : t->len), t->text,
			"!dataflow.thread_token and !dataflow.channel<T>");
	expect(p, "<");
	elem = type(p);
	expect(p, ">");
	return new_type(p, IR_TYPE_CHANNEL, elem);
}

/* What loomc supports, for the diagnostics. */
#define SUPPORTED_TYPES \
	"i1, i32, i64, index, f32, none, memref<?xT>, !dataflow.thread_token, !dataflow.channel<T>"

/* Does the identifier look like a type we do not support (i8, f32)? */
static bool looks_like_type(const struct token *t)
{
	size_t i = 1;

	if (t->len < 2 || (t->text[0] != 'i' && t->text[0] != 'f' &&
			   t->text[0] != 'u' && t->text[0] != 's'))
		return tok_is(t, "bf16");
	while (i < t->len && t->text[i] >= '0' && t->text[i] <= '9')
		i++;
	return i == t->len;
}

/*
 * type = "i1" | "i32" | "i64" | "index" | "f32" | "none" | memref_type
 *      | dialect_type
 * (an identifier shaped like a type, f64 or i8, is reported and kept as
 * unsupported)
 */
static const struct ir_type *type(struct parser *p)
{
	const struct token *t = p->tok;
	const struct ir_type *ty;

	enter(p);
	if (t->kind == TK_BANG) {
		ty = dialect_type(p);
	} else if (at(p, "memref")) {
		ty = memref_type(p);
	} else if (t->kind == TK_IDENT && (ty = scalar_named(t->text, t->len))) {
		advance(p);
	} else if (t->kind == TK_IDENT && looks_like_type(t)) {
		diag_error(p->d, t->loc, "unsupported type '%.*s' (the types are %s)",
			   (int)t->len, t->text, SUPPORTED_TYPES);
		ty = unsupported_type(p, t->text, t->len);
		advance(p);
	} else {
		char buf[64];

		fail_at(p, t->loc, "expected a type, found %s (one of %s)",
			found(p, buf, sizeof(buf)), SUPPORTED_TYPES);
	}
	leave(p);
	return ty;
}

/*
 * type_list = type ("," type)* ; appends to @v.  A ',' followed by a value
 * is not part of it ("%a : none, %b : none").
 */
static void type_list(struct parser *p, struct vec *v)
{
	do {
		*(const struct ir_type **)vec_push(p, v, sizeof(void *)) =
			type(p);
	} while (at(p, ",") && p->tok[1].kind != TK_VALUE && consume(p, ","));
}

/* result_types = "(" (type ("," type)*)? ")" | type */
static void result_types(struct parser *p, struct vec *v)
{
	if (!consume(p, "(")) {
		type_list(p, v);
		return;
	}
	if (!consume(p, ")")) {
		type_list(p, v);
		expect(p, ")");
	}
}

/* -------------------------------------------------------- attributes --- */

static void attr_value(struct parser *p, struct ir_attr *a);

static bool is_type_keyword(const struct token *t)
{
	return t->kind == TK_IDENT && (tok_is(t, "memref") ||
				       scalar_named(t->text, t->len));
}

static bool is_punct(const struct token *t, const char *s)
{
	return t->kind == TK_PUNCT && tok_is(t, s);
}

/*
 * The text of a dialect attribute's body, from the token after '<' to the
 * matching '>', tokens separated by one space where the source had space.
 */
static const char *balanced_body(struct parser *p)
{
	const struct token *first = p->tok, *t;
	size_t len = 0;
	int level = 1;
	char *s;

	for (t = first;; t++) {
		if (t->kind == TK_EOF)
			fail_at(p, t->loc, "unbalanced '<' in attribute");
		if (is_punct(t, "<"))
			level++;
		else if (is_punct(t, ">") && --level == 0)
			break;
		len += t->len + 1;
	}
	s = alloc(p, len + 1);
	len = 0;
	for (const struct token *u = first; u != t; u++) {
		if (u != first && u[-1].loc.offset + u[-1].len < u->loc.offset)
			s[len++] = ' ';
		memcpy(s + len, u->text, u->len);
		len += u->len;
	}
	s[len] = '\0';
	p->tok = t + 1;
	return s;
}

/* domain_param = IDENT "=" attr_value | attr_value */
static void domain_param(struct parser *p, struct ir_attr *a)
{
	if (p->tok->kind == TK_IDENT && tok_is(&p->tok[1], "=") &&
	    p->tok[1].kind == TK_PUNCT) {
		a->name = ir_strndup(p->m, p->tok->text, p->tok->len);
		if (!a->name)
			fail_at(p, p->tok->loc, "out of memory");
		a->loc = p->tok->loc;
		advance(p);
		advance(p);
		attr_value(p, a);
		return;
	}
	attr_value(p, a);
	a->loc = a->value_loc;
}

/*
 * dialect_attr = "#dataflow.thread_domain" "<" domain_param
 *                    ("," domain_param)* ">"
 *              | HASH ("<" balanced tokens ">")?
 */
static void dialect_attr(struct parser *p, struct ir_attr *a)
{
	const struct token *t = p->tok;
	struct vec params = { 0 };

	a->kind = IR_ATTR_DIALECT;
	a->str = ir_strndup(p->m, t->text, t->len);
	if (!a->str)
		fail_at(p, t->loc, "out of memory");
	advance(p);
	if (!consume(p, "<"))
		return;
	if (!tok_is(t, "#dataflow.thread_domain")) {
		a->body = balanced_body(p);
		return;
	}
	do {
		domain_param(p, vec_push(p, &params, sizeof(struct ir_attr)));
	} while (consume(p, ","));
	expect(p, ">");
	a->elems = params.data;
	a->num_elems = params.num;
}

/* int_attr = "-"? INT (":" type)? */
static void int_attr(struct parser *p, struct ir_attr *a)
{
	bool neg = consume(p, "-");
	const struct token *t = p->tok;
	uint64_t mag = int_literal(p);

	if (mag > (uint64_t)INT64_MAX + neg)
		fail_at(p, t->loc, "integer attribute out of range");
	a->kind = IR_ATTR_INT;
	a->ival = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	if (consume(p, ":"))
		a->type = type(p);
}

/* array_attr = "[" (attr_value ("," attr_value)*)? "]" */
static void array_attr(struct parser *p, struct ir_attr *a)
{
	struct vec elems = { 0 };

	expect(p, "[");
	a->kind = IR_ATTR_ARRAY;
	if (!consume(p, "]")) {
		do {
			struct ir_attr *e = vec_push(p, &elems, sizeof(*e));

			attr_value(p, e);
			e->loc = e->value_loc;
		} while (consume(p, ","));
		expect(p, "]");
	}
	a->elems = elems.data;
	a->num_elems = elems.num;
}

/* A string, symbol or keyword attribute: its text without the sigil. */
static void text_attr(struct parser *p, struct ir_attr *a,
		      enum ir_attr_kind kind, size_t skip_front,
		      size_t skip_back)
{
	const struct token *t = p->tok;

	a->kind = kind;
	a->str = ir_strndup(p->m, t->text + skip_front,
			    t->len - skip_front - skip_back);
	if (!a->str)
		fail_at(p, t->loc, "out of memory");
	advance(p);
}

static void type_attr(struct parser *p, struct ir_attr *a)
{
	a->kind = IR_ATTR_TYPE;
	a->type = type(p);
}

/*
 * attr_value = int_attr | STRING | SYMBOL | array_attr | dialect_attr
 *            | type | IDENT
 */
static void attr_value(struct parser *p, struct ir_attr *a)
{
	const struct token *t = p->tok;

	enter(p);
	a->value_loc = t->loc;
	if (t->kind == TK_INT || at(p, "-"))
		int_attr(p, a);
	else if (t->kind == TK_STRING)
		text_attr(p, a, IR_ATTR_STRING, 1, 1);
	else if (t->kind == TK_SYMBOL)
		text_attr(p, a, IR_ATTR_SYMBOL, 1, 0);
	else if (at(p, "["))
		array_attr(p, a);
	else if (t->kind == TK_HASH)
		dialect_attr(p, a);
	else if (t->kind == TK_BANG || is_type_keyword(t))
		type_attr(p, a);
	else if (t->kind == TK_IDENT)
		text_attr(p, a, IR_ATTR_KEYWORD, 0, 0);
	else
		fail_expected(p, "an attribute value");
	leave(p);
}

/* attr_entry = IDENT ("=" attr_value)? */
static void attr_entry(struct parser *p, struct ir_attr *a)
{
	const struct token *t = expect_kind(p, TK_IDENT, "an attribute name");

	a->name = ir_strndup(p->m, t->text, t->len);
	if (!a->name)
		fail_at(p, t->loc, "out of memory");
	a->loc = t->loc;
	a->value_loc = t->loc;
	if (consume(p, "="))
		attr_value(p, a);
	else
		a->kind = IR_ATTR_UNIT;
}

/* attr_dict = "{" (attr_entry ("," attr_entry)*)? "}" */
static void attr_dict(struct parser *p, struct ir_attr **attrs, int *num)
{
	struct vec v = { 0 };

	expect(p, "{");
	if (!consume(p, "}")) {
		do {
			attr_entry(p, vec_push(p, &v, sizeof(struct ir_attr)));
		} while (consume(p, ","));
		expect(p, "}");
	}
	*attrs = v.data;
	*num = v.num;
}

/* An operation's optional attr_dict. */
static void opt_attr_dict(struct parser *p, struct ir_op *op)
{
	if (at(p, "{"))
		attr_dict(p, &op->attrs, &op->num_attrs);
}

/* --------------------------------------------------------- operations --- */

static void region(struct parser *p, struct ir_region *r);

/* Appends the operand %name at the current token to @v. */
static void operand(struct parser *p, struct vec *v)
{
	const struct token *t = expect_kind(p, TK_VALUE, "a value ('%name')");
	struct ir_use *u = vec_push(p, v, sizeof(*u));

	u->name = name_of(p, t);
	u->loc = t->loc;
}

/* operand_list = VALUE ("," VALUE)* */
static void operand_list(struct parser *p, struct vec *v)
{
	do {
		operand(p, v);
	} while (consume(p, ","));
}

/* paren_operands = "(" operand_list? ")" */
static void paren_operands(struct parser *p, struct vec *v)
{
	expect(p, "(");
	if (!consume(p, ")")) {
		operand_list(p, v);
		expect(p, ")");
	}
}

/* Moves the operands in @v into @op, with room for their types. */
static void set_operands(struct parser *p, struct ir_op *op, struct vec *v)
{
	op->operands = v->data;
	op->num_operands = v->num;
	op->operand_types = alloc(p, (size_t)(v->num ? v->num : 1) *
				  sizeof(*op->operand_types));
}

static void set_results(struct parser *p, struct ir_op *op, int n,
			const struct ir_type *t)
{
	op->num_results = n;
	op->results = alloc(p, (size_t)(n ? n : 1) * sizeof(*op->results));
	for (int i = 0; i < n; i++) {
		op->results[i].type = t;
		op->results[i].def = op;
		op->results[i].index = i;
	}
}

/* Every operand of @op is stated to have type @t. */
static void all_types(struct ir_op *op, const struct ir_type *t)
{
	for (int i = 0; i < op->num_operands; i++)
		op->operand_types[i] = t;
}

/* Parses n operands separated by commas into @op. */
static void fixed_operands(struct parser *p, struct ir_op *op, int n)
{
	struct vec v = { 0 };

	for (int i = 0; i < n; i++) {
		if (i)
			expect(p, ",");
		operand(p, &v);
	}
	set_operands(p, op, &v);
}

/* ":" type */
static const struct ir_type *colon_type(struct parser *p)
{
	expect(p, ":");
	return type(p);
}

static void set_literal(struct ir_op *op, bool neg, uint64_t mag)
{
	op->lit_neg = neg;
	op->lit_mag = mag;
	if (op->type->kind == IR_TYPE_F32)	/* the verifier judges the literal */
		op->imm = ir_sext(op->lit_float && neg ? mag | 0x80000000U : mag, 32);
	else
		op->imm = ir_sext(neg ? 0 - mag : mag, ir_type_width(op->type));
}

/*
 * A float literal's magnitude as f32 bits, rounded to nearest even by
 * strtof(); sets op->lit_range when it rounds to infinity.
 */
static uint64_t float_literal(struct parser *p, struct ir_op *op)
{
	const struct token *t = p->tok;
	char *text = ir_strndup(p->m, t->text, t->len);
	float f;
	uint32_t bits;

	if (!text)
		fail_at(p, t->loc, "out of memory");
	advance(p);
	f = strtof(text, NULL);
	op->lit_float = true;
	op->lit_range = isinf(f);
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/* constant = ("true" | "false" | "-"? (INT | FLOAT)) attr_dict? (":" type)? */
static void constant(struct parser *p, struct ir_op *op)
{
	bool neg = false, boolean = at(p, "true") || at(p, "false");
	uint64_t mag;

	set_operands(p, op, &(struct vec){ 0 });
	if (boolean) {
		mag = at(p, "true");
		advance(p);
	} else {
		neg = consume(p, "-");
		op->lit_hex = p->tok->kind == TK_INT && p->tok->len > 2 &&
			      p->tok->text[1] == 'x';
		mag = p->tok->kind == TK_FLOAT ? float_literal(p, op) :
						 int_literal(p);
	}
	opt_attr_dict(p, op);
	op->type = boolean && !at(p, ":") ? &ir_i1 : colon_type(p);
	set_literal(op, neg, mag);
	set_results(p, op, 1, op->type);
}

/* index_constant = "-"? INT attr_dict? */
static void index_constant(struct parser *p, struct ir_op *op)
{
	bool neg = consume(p, "-");
	uint64_t mag = int_literal(p);

	set_operands(p, op, &(struct vec){ 0 });
	opt_attr_dict(p, op);
	op->type = &ir_index;
	set_literal(op, neg, mag);
	set_results(p, op, 1, op->type);
}

/* binary = VALUE "," VALUE attr_dict? ":" type */
static void binary(struct parser *p, struct ir_op *op)
{
	fixed_operands(p, op, 2);
	opt_attr_dict(p, op);
	op->type = colon_type(p);
	all_types(op, op->type);
	set_results(p, op, 1, op->type);
}

/* index_binary = VALUE "," VALUE attr_dict? */
static void index_binary(struct parser *p, struct ir_op *op)
{
	fixed_operands(p, op, 2);
	opt_attr_dict(p, op);
	op->type = &ir_index;
	all_types(op, op->type);
	set_results(p, op, 1, op->type);
}

/* predicate = "eq" | "ne" | "slt" | "sle" | "sgt" | "sge" | "ult" | ... */
static enum ir_pred predicate(struct parser *p)
{
	const struct token *t = expect_kind(p, TK_IDENT, "a predicate");

	for (int i = 0; i < IR_PRED_COUNT; i++)
		if (tok_is(t, ir_pred_name[i]))
			return (enum ir_pred)i;
	fail_at(p, t->loc, "unknown predicate '%.*s' (one of %s)",
		(int)(t->len > 40 ? 40 : t->len), t->text,
		"eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge");
}

/* fpredicate = "false" | "oeq" | "ogt" | ... | "uno" | "true" */
static enum ir_fpred fpredicate(struct parser *p)
{
	const struct token *t = expect_kind(p, TK_IDENT, "a predicate");

	for (int i = 0; i < IR_FPRED_COUNT; i++)
		if (tok_is(t, ir_fpred_name[i]))
			return (enum ir_fpred)i;
	fail_at(p, t->loc, "unknown predicate '%.*s' (one of %s)",
		(int)(t->len > 40 ? 40 : t->len), t->text,
		"false, oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno, true");
}

/* cmpf = fpredicate "," VALUE "," VALUE attr_dict? ":" type */
static void cmpf(struct parser *p, struct ir_op *op)
{
	op->fpred = fpredicate(p);
	expect(p, ",");
	binary(p, op);
	op->results[0].type = &ir_i1;
}

/* unary = VALUE attr_dict? ":" type;  ternary = VALUE "," VALUE "," VALUE ... */
static void nary(struct parser *p, struct ir_op *op, int n)
{
	fixed_operands(p, op, n);
	opt_attr_dict(p, op);
	op->type = colon_type(p);
	all_types(op, op->type);
	set_results(p, op, 1, op->type);
}

/* cmpi = predicate "," VALUE "," VALUE attr_dict? ":" type */
static void cmpi(struct parser *p, struct ir_op *op)
{
	op->pred = predicate(p);
	expect(p, ",");
	binary(p, op);
	op->results[0].type = &ir_i1;
}

/* index_cmp = predicate "(" VALUE "," VALUE ")" attr_dict? */
static void index_cmp(struct parser *p, struct ir_op *op)
{
	op->pred = predicate(p);
	expect(p, "(");
	fixed_operands(p, op, 2);
	expect(p, ")");
	opt_attr_dict(p, op);
	op->type = &ir_index;
	all_types(op, op->type);
	set_results(p, op, 1, &ir_i1);
}

/* select = VALUE "," VALUE "," VALUE attr_dict? ":" type */
static void select_op(struct parser *p, struct ir_op *op)
{
	fixed_operands(p, op, 3);
	opt_attr_dict(p, op);
	op->type = colon_type(p);
	all_types(op, op->type);
	op->operand_types[0] = &ir_i1;
	set_results(p, op, 1, op->type);
}

/* cast = VALUE attr_dict? ":" type "to" type */
static void cast(struct parser *p, struct ir_op *op)
{
	fixed_operands(p, op, 1);
	opt_attr_dict(p, op);
	op->type = colon_type(p);
	expect(p, "to");
	op->to_type = type(p);
	op->operand_types[0] = op->type;
	set_results(p, op, 1, op->to_type);
}

/* A type that must be a memref. */
static const struct ir_type *memref_colon_type(struct parser *p)
{
	const struct ir_type *t;

	expect(p, ":");
	if (!at(p, "memref"))
		fail_expected(p, "a memref type");
	t = type(p);
	return t;
}

/*
 * subscript = "[" VALUE ("," VALUE)* "]" ; the verifier checks that there
 * is one index per size of the memref
 */
static void subscript(struct parser *p, struct vec *v)
{
	expect(p, "[");
	do
		operand(p, v);
	while (consume(p, ","));
	expect(p, "]");
}

/* load = VALUE subscript attr_dict? ":" memref_type */
static void load(struct parser *p, struct ir_op *op)
{
	struct vec v = { 0 };

	operand(p, &v);
	subscript(p, &v);
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	op->type = memref_colon_type(p);
	all_types(op, &ir_index);
	op->operand_types[0] = op->type;
	set_results(p, op, 1, op->type->elem);
}

/*
 * VALUE "," VALUE subscript attr_dict?: a value, the memref and its
 * indices, as a store and an atomic_rmw take them.
 */
static void value_into_memref(struct parser *p, struct ir_op *op)
{
	struct vec v = { 0 };

	operand(p, &v);
	expect(p, ",");
	operand(p, &v);
	subscript(p, &v);
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
}

/* store = VALUE "," VALUE subscript attr_dict? ":" memref_type */
static void store(struct parser *p, struct ir_op *op)
{
	value_into_memref(p, op);
	op->type = memref_colon_type(p);
	all_types(op, &ir_index);
	op->operand_types[0] = op->type->elem;
	op->operand_types[1] = op->type;
	set_results(p, op, 0, NULL);
}

/* atomic_kind = "addi" | "addf" | ... | "assign" (loom_atomic_info()) */
static unsigned atomic_kind(struct parser *p)
{
	const struct token *t = expect_kind(p, TK_IDENT, "an atomic kind");

	for (unsigned k = 0; k < LOOM_ATOMIC_COUNT; k++)
		if (tok_is(t, loom_atomic_info(k)->name))
			return k;
	fail_at(p, t->loc, "unknown atomic kind '%.*s' (one of %s)",
		(int)(t->len > 40 ? 40 : t->len), t->text,
		"addi, addf, muli, mulf, maxs, maxu, mins, minu, maximumf, minimumf, andi, ori, xori, assign");
}

/*
 * atomic_rmw = atomic_kind VALUE "," VALUE subscript attr_dict? ":"
 *		"(" type "," memref_type ")" "->" type
 */
static void atomic_rmw(struct parser *p, struct ir_op *op)
{
	const struct ir_type *value_type, *result_type;

	op->atomic_kind = atomic_kind(p);
	value_into_memref(p, op);
	expect(p, ":");
	expect(p, "(");
	value_type = type(p);
	expect(p, ",");
	if (!at(p, "memref"))
		fail_expected(p, "a memref type");
	op->type = type(p);
	expect(p, ")");
	expect(p, "->");
	result_type = type(p);
	all_types(op, &ir_index);
	op->operand_types[0] = value_type;
	op->operand_types[1] = op->type;
	set_results(p, op, 1, result_type);
}

/* alloc = "(" operand_list? ")" attr_dict? ":" memref_type */
static void alloc_op(struct parser *p, struct ir_op *op)
{
	struct vec v = { 0 };

	paren_operands(p, &v);
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	op->type = memref_colon_type(p);
	all_types(op, &ir_index);
	set_results(p, op, 1, op->type);
}

/* dim = VALUE "," VALUE attr_dict? ":" memref_type */
static void dim_op(struct parser *p, struct ir_op *op)
{
	fixed_operands(p, op, 2);
	opt_attr_dict(p, op);
	op->type = memref_colon_type(p);
	op->operand_types[0] = op->type;
	op->operand_types[1] = &ir_index;
	set_results(p, op, 1, &ir_index);
}

/*
 * view_list = "[" (view_entry ("," view_entry)*)? "]"
 * view_entry = VALUE | INT
 * Values are appended to @v as operands (index), literals kept in @w.
 */
static void view_list(struct parser *p, struct ir_view *w,
		      enum ir_view_list which, struct vec *v)
{
	expect(p, "[");
	if (consume(p, "]"))
		return;
	do {
		int k = w->num[which];

		if (k == IR_MEMREF_MAX_RANK)
			fail_at(p, p->tok->loc,
				"more than %d entries in a view's list (the highest memref rank)",
				IR_MEMREF_MAX_RANK);
		w->num[which]++;
		w->operand[which][k] = -1;
		w->loc[which][k] = p->tok->loc;
		if (p->tok->kind == TK_VALUE) {
			w->operand[which][k] = v->num;
			w->lit[which][k] = IR_DYNAMIC;
			operand(p, v);
		} else if (p->tok->kind == TK_INT) {
			const struct token *t = p->tok;

			if (int_literal(p) > INT64_MAX >> 3)
				fail_at(p, t->loc, "view offset, size or stride too large");
			w->lit[which][k] = (int64_t)t->ival;
		} else {
			fail_expected(p, "a value ('%name') or a non-negative integer");
		}
	} while (consume(p, ","));
	expect(p, "]");
}

/*
 * subview = VALUE view_list view_list view_list attr_dict? ":"
 *	     memref_type "to" memref_type
 * (offsets, sizes, strides; the verifier checks them against the types)
 */
static void subview_op(struct parser *p, struct ir_op *op)
{
	struct ir_view *w = alloc(p, sizeof(*w));
	struct vec v = { 0 };

	operand(p, &v);
	for (int l = 0; l < IR_VIEW_LISTS; l++)
		view_list(p, w, l, &v);
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	op->view = w;
	op->type = memref_colon_type(p);
	expect(p, "to");
	if (!at(p, "memref"))
		fail_expected(p, "a memref type");
	op->to_type = type(p);
	all_types(op, &ir_index);
	op->operand_types[0] = op->type;
	set_results(p, op, 1, op->to_type);
}

/* ": T to U" (@word "to") or ": T into U" of a view operation. */
static void view_types(struct parser *p, struct ir_op *op, const char *word)
{
	op->type = memref_colon_type(p);
	expect(p, word);
	if (!at(p, "memref"))
		fail_expected(p, "a memref type");
	op->to_type = type(p);
	all_types(op, &ir_index);
	op->operand_types[0] = op->type;
	set_results(p, op, 1, op->to_type);
}

/* memref_cast = VALUE attr_dict? ":" memref_type "to" memref_type */
static void memref_cast_op(struct parser *p, struct ir_op *op)
{
	struct vec v = { 0 };

	operand(p, &v);
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	op->view = alloc(p, sizeof(*op->view));
	view_types(p, op, "to");
}

/*
 * reinterpret = VALUE "to" "offset" ":" view_list "," "sizes" ":"
 *		 view_list "," "strides" ":" view_list attr_dict? ":"
 *		 memref_type "to" memref_type
 */
static void reinterpret_op(struct parser *p, struct ir_op *op)
{
	static const char *const words[IR_VIEW_LISTS] = {
		"offset", "sizes", "strides"
	};
	struct ir_view *w = alloc(p, sizeof(*w));
	struct vec v = { 0 };

	operand(p, &v);
	expect(p, "to");
	for (int l = 0; l < IR_VIEW_LISTS; l++) {
		if (l)
			expect(p, ",");
		expect(p, words[l]);
		expect(p, ":");
		view_list(p, w, l, &v);
	}
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	op->view = w;
	view_types(p, op, "to");
}

/*
 * reassociation = "[" group ("," group)* "]" ; group = "[" INT ("," INT)* "]"
 * Each size number's group into @w->group (their order is the
 * verifier's to check).
 */
static void reassociation(struct parser *p, struct ir_view *w)
{
	expect(p, "[");
	do {
		expect(p, "[");
		do {
			const struct token *t = p->tok;
			uint64_t k = int_literal(p);

			if (w->num_grouped == IR_MEMREF_MAX_RANK)
				fail_at(p, t->loc,
					"more than %d sizes in a reassociation (the highest memref rank)",
					IR_MEMREF_MAX_RANK);
			if (k != (uint64_t)w->num_grouped)
				fail_at(p, t->loc,
					"reassociation lists size %d where size %llu is: the sizes go in order, each once",
					w->num_grouped, (unsigned long long)k);
			w->group[w->num_grouped++] = w->num_groups;
		} while (consume(p, ","));
		expect(p, "]");
		w->num_groups++;
	} while (consume(p, ","));
	expect(p, "]");
}

/*
 * reshape = VALUE reassociation ("output_shape" view_list)? attr_dict?
 *	     ":" memref_type "into" memref_type
 * (output_shape: expand_shape only)
 */
static void reshape_op(struct parser *p, struct ir_op *op)
{
	struct ir_view *w = alloc(p, sizeof(*w));
	struct vec v = { 0 };

	operand(p, &v);
	reassociation(p, w);
	if (op->code == IR_OP_MEMREF_EXPAND_SHAPE && consume(p, "output_shape")) {
		w->has_output_shape = true;
		view_list(p, w, IR_VIEW_SIZES, &v);
	}
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	op->view = w;
	view_types(p, op, "into");
}

/* ------------------------------------------------------- affine maps --- */

static const struct ir_affine_expr *affine_expr(struct parser *p,
						const struct map_names *n);

static const struct ir_affine_expr *affine_node(struct parser *p,
						enum ir_affine_kind kind,
						int64_t val,
						const struct ir_affine_expr *lhs,
						const struct ir_affine_expr *rhs)
{
	struct ir_affine_expr *e = alloc(p, sizeof(*e));

	e->kind = kind;
	e->val = val;
	e->lhs = lhs;
	e->rhs = rhs;
	return e;
}

static bool is_affine_const(const struct ir_affine_expr *e)
{
	return e->kind == AFF_CONST;
}

/* No dimension in @e: constant for the whole op, a "symbolic" factor. */
static bool is_affine_symbolic(const struct ir_affine_expr *e)
{
	if (e->kind == AFF_DIM)
		return false;
	return e->kind <= AFF_SYM ||
	       (is_affine_symbolic(e->lhs) && is_affine_symbolic(e->rhs));
}

/*
 * lhs OP rhs, checked against the affine rules where OP is written (@at):
 * a product has a side without dimensions (a constant or symbols: d0 * s0
 * is a stride), a division or mod a positive constant divisor.  Constant operands fold, so that these rules see constants.
 */
static const struct ir_affine_expr *affine_binary(struct parser *p,
						  const struct token *at,
						  enum ir_affine_kind kind,
						  const struct ir_affine_expr *lhs,
						  const struct ir_affine_expr *rhs)
{
	struct ir_affine_expr e = { .kind = kind, .lhs = lhs, .rhs = rhs };
	int64_t v;

	if (kind == AFF_MUL && !is_affine_symbolic(lhs) &&
	    !is_affine_symbolic(rhs))
		fail_at(p, at->loc,
			"'*' of two expressions of dimensions is not affine: one side must be a constant or of symbols only");
	if (kind >= AFF_FLOORDIV && (!is_affine_const(rhs) || rhs->val <= 0))
		fail_at(p, at->loc,
			"the right side of '%.*s' must be a positive constant",
			(int)at->len, at->text);
	if (is_affine_const(lhs) && is_affine_const(rhs) &&
	    ir_affine_eval(&e, NULL, NULL, 0, &v))
		return affine_node(p, AFF_CONST, v, NULL, NULL);
	return affine_node(p, kind, 0, lhs, rhs);
}

/* affine_factor = INT | "-" affine_factor | name | "(" affine_expr ")" */
static const struct ir_affine_expr *affine_factor(struct parser *p,
						  const struct map_names *n)
{
	const struct token *t = p->tok;
	const struct ir_affine_expr *e;

	if (consume(p, "-")) {
		e = affine_factor(p, n);
		return affine_binary(p, t, AFF_MUL, e,
				     affine_node(p, AFF_CONST, -1, NULL, NULL));
	}
	if (t->kind == TK_INT) {
		if (int_literal(p) > INT64_MAX)
			fail_at(p, t->loc, "affine constant too large");
		return affine_node(p, AFF_CONST, (int64_t)t->ival, NULL, NULL);
	}
	if (consume(p, "(")) {
		enter(p);
		e = affine_expr(p, n);
		leave(p);
		expect(p, ")");
		return e;
	}
	if (t->kind != TK_IDENT)
		fail_expected(p, "a dimension, a symbol, an integer or '('");
	for (int i = 0; i < n->num; i++)
		if (n->names[i]->len == t->len &&
		    !memcmp(n->names[i]->text, t->text, t->len)) {
			advance(p);
			return affine_node(p, i < n->num_dims ? AFF_DIM : AFF_SYM,
					   i < n->num_dims ? i : i - n->num_dims,
					   NULL, NULL);
		}
	fail_at(p, t->loc, "'%.*s' is not a dimension or symbol of this affine map",
		t->len > 40 ? 40 : (int)t->len, t->text);
}

/* affine_term = affine_factor (("*" | "floordiv" | "ceildiv" | "mod") affine_factor)* */
static const struct ir_affine_expr *affine_term(struct parser *p,
						const struct map_names *n)
{
	static const struct { const char *op; enum ir_affine_kind kind; } ops[] = {
		{ "*", AFF_MUL }, { "floordiv", AFF_FLOORDIV },
		{ "ceildiv", AFF_CEILDIV }, { "mod", AFF_MOD },
	};
	const struct ir_affine_expr *e = affine_factor(p, n);

	for (;;) {
		const struct token *t = p->tok;
		size_t i = 0;

		while (i < sizeof(ops) / sizeof(ops[0]) && !at(p, ops[i].op))
			i++;
		if (i == sizeof(ops) / sizeof(ops[0]))
			return e;
		advance(p);
		e = affine_binary(p, t, ops[i].kind, e, affine_factor(p, n));
	}
}

/* affine_expr = affine_term (("+" | "-") affine_term)* */
static const struct ir_affine_expr *affine_expr(struct parser *p,
						const struct map_names *n)
{
	const struct ir_affine_expr *e = affine_term(p, n);

	for (;;) {
		const struct token *t = p->tok;

		if (!at(p, "+") && !at(p, "-"))
			return e;
		advance(p);
		e = affine_binary(p, t, tok_is(t, "+") ? AFF_ADD : AFF_SUB, e,
				  affine_term(p, n));
	}
}

/* A dimension or symbol name list up to @close; each name once. */
static void affine_names(struct parser *p, struct map_names *n,
			 const char *close)
{
	if (consume(p, close))
		return;
	do {
		const struct token *t = expect_kind(p, TK_IDENT, "a name");

		for (int i = 0; i < n->num; i++)
			if (n->names[i]->len == t->len &&
			    !memcmp(n->names[i]->text, t->text, t->len))
				fail_at(p, t->loc, "'%.*s' is named twice in this affine map",
					(int)t->len, t->text);
		if (n->num == (int)(sizeof(n->names) / sizeof(n->names[0])))
			fail_at(p, t->loc, "more than 64 dimensions and symbols in an affine map");
		n->names[n->num++] = t;
	} while (consume(p, ","));
	expect(p, close);
}

/*
 * affine_map = "affine_map" "<" "(" names? ")" ("[" names? "]")?
 *              "->" "(" affine_expr ("," affine_expr)* ")" ">"
 */
static const struct ir_affine_map *affine_map(struct parser *p)
{
	struct ir_affine_map *m = alloc(p, sizeof(*m));
	struct map_names n = { .num = 0 };
	struct vec results = { 0 };

	expect(p, "affine_map");
	expect(p, "<");
	expect(p, "(");
	affine_names(p, &n, ")");
	n.num_dims = n.num;
	if (consume(p, "["))
		affine_names(p, &n, "]");
	m->num_dims = n.num_dims;
	m->num_syms = n.num - n.num_dims;
	expect(p, "->");
	expect(p, "(");
	do
		*(const struct ir_affine_expr **)vec_push(p, &results,
							  sizeof(void *)) =
			affine_expr(p, &n);
	while (consume(p, ","));
	expect(p, ")");
	expect(p, ">");
	m->results = results.data;
	m->num_results = results.num;
	return m;
}

/* A #name defined earlier in the unit, or a fatal error at it. */
static const struct ir_affine_map *map_alias_use(struct parser *p)
{
	const struct token *t = p->tok;
	const struct map_alias *a = p->map_aliases.data;

	for (int i = 0; i < p->map_aliases.num; i++)
		if (strlen(a[i].name) == t->len &&
		    !memcmp(a[i].name, t->text, t->len)) {
			advance(p);
			return a[i].map;
		}
	fail_at(p, t->loc, "unknown affine map alias '%.*s' (define it before use: %.*s = affine_map<...>)",
		t->len > 40 ? 40 : (int)t->len, t->text,
		t->len > 40 ? 40 : (int)t->len, t->text);
}

/* map_alias_def = HASH "=" affine_map */
static void map_alias_def(struct parser *p)
{
	const struct token *t = p->tok;
	struct map_alias *a;

	advance(p);
	for (int i = 0; i < p->map_aliases.num; i++)
		if (strlen(((struct map_alias *)p->map_aliases.data)[i].name) ==
		    t->len &&
		    !memcmp(((struct map_alias *)p->map_aliases.data)[i].name,
			    t->text, t->len))
			fail_at(p, t->loc, "affine map alias '%.*s' is defined twice",
				(int)t->len, t->text);
	expect(p, "=");
	a = vec_push(p, &p->map_aliases, sizeof(*a));
	a->name = ir_strndup(p->m, t->text, t->len);
	a->map = affine_map(p);
}

/*
 * affine_op = (HASH | affine_map) "(" operand_list? ")"
 *             ("[" operand_list? "]")? attr_dict?
 */
static void affine_op(struct parser *p, struct ir_op *op)
{
	struct vec v = { 0 };

	if (p->tok->kind == TK_HASH) {
		op->map_alias = ir_strndup(p->m, p->tok->text + 1,
					   p->tok->len - 1);
		op->map = map_alias_use(p);
	} else if (at(p, "affine_map")) {
		op->map = affine_map(p);
	} else {
		fail_expected(p, "an affine map ('#name' or 'affine_map<...>')");
	}
	paren_operands(p, &v);
	op->num_args = v.num;
	if (consume(p, "[") && !consume(p, "]")) {
		operand_list(p, &v);
		expect(p, "]");
	}
	set_operands(p, op, &v);
	opt_attr_dict(p, op);
	all_types(op, &ir_index);
	set_results(p, op, 1, &ir_index);
}

/* Adds a block argument named by token @t to @v. */
static struct ir_value *block_arg(struct parser *p, struct vec *v,
				  const struct token *t,
				  const struct ir_type *ty)
{
	struct ir_value *a = vec_push(p, v, sizeof(*a));

	a->name = name_of(p, t);
	a->loc = t->loc;
	a->type = ty;
	return a;
}

/* Gives the arguments in @v to region @r. */
static void set_region_args(struct ir_region *r, struct vec *v)
{
	r->args = v->data;
	r->num_args = v->num;
	for (int i = 0; i < v->num; i++) {
		r->args[i].region = r;
		r->args[i].index = i;
	}
}

/* iter_args = "iter_args" "(" VALUE "=" VALUE ("," VALUE "=" VALUE)* ")" */
static void iter_args(struct parser *p, struct vec *inits, struct vec *names)
{
	expect(p, "iter_args");
	expect(p, "(");
	do {
		*(const struct token **)vec_push(p, names, sizeof(void *)) =
			expect_kind(p, TK_VALUE, "a value ('%name')");
		expect(p, "=");
		operand(p, inits);
	} while (consume(p, ","));
	expect(p, ")");
}

/*
 * for = VALUE "=" VALUE "to" VALUE "step" VALUE
 *       (iter_args "->" result_types)? (":" type)? region attr_dict?
 */
static void for_op(struct parser *p, struct ir_op *op)
{
	const struct token *iv = expect_kind(p, TK_VALUE, "an induction variable");
	struct vec ops = { 0 }, args = { 0 }, names = { 0 }, types = { 0 };
	const struct token *arrow;

	expect(p, "=");
	operand(p, &ops);
	expect(p, "to");
	operand(p, &ops);
	expect(p, "step");
	operand(p, &ops);
	if (at(p, "iter_args")) {
		iter_args(p, &ops, &names);
		arrow = expect(p, "->");
		result_types(p, &types);
		if (types.num != names.num)
			fail_at(p, arrow->loc, "scf.for has %d iter_args but %d result types",
				names.num, types.num);
	}
	op->type = consume(p, ":") ? type(p) : &ir_index;
	set_operands(p, op, &ops);
	op->num_iter_args = names.num;
	for (int i = 0; i < 3; i++)
		op->operand_types[i] = op->type;
	block_arg(p, &args, iv, op->type);
	for (int i = 0; i < names.num; i++) {
		const struct ir_type *t = ((const struct ir_type **)types.data)[i];

		op->operand_types[3 + i] = t;
		block_arg(p, &args, ((const struct token **)names.data)[i], t);
	}
	set_results(p, op, names.num, NULL);
	for (int i = 0; i < names.num; i++)
		op->results[i].type = op->operand_types[3 + i];
	op->body = alloc(p, sizeof(*op->body));
	op->body->parent_op = op;
	set_region_args(op->body, &args);
	region(p, op->body);
	opt_attr_dict(p, op);
}

/* The then or else region of scf.if @op: no block arguments. */
static struct ir_region *branch(struct parser *p, struct ir_op *op)
{
	struct ir_region *r = alloc(p, sizeof(*r));

	r->parent_op = op;
	region(p, r);
	return r;
}

/* if = VALUE ("->" result_types)? region ("else" region)? attr_dict? */
static void if_op(struct parser *p, struct ir_op *op)
{
	struct vec ops = { 0 }, types = { 0 };

	operand(p, &ops);
	if (consume(p, "->"))
		result_types(p, &types);
	set_operands(p, op, &ops);
	op->operand_types[0] = &ir_i1;
	set_results(p, op, types.num, NULL);
	for (int i = 0; i < types.num; i++)
		op->results[i].type = ((const struct ir_type **)types.data)[i];
	op->body = branch(p, op);
	if (consume(p, "else"))
		op->else_body = branch(p, op);
	opt_attr_dict(p, op);
}

/* Does a new operation with results ("%a, %b =") start here? */
static bool at_op_results(struct parser *p)
{
	const struct token *t = p->tok;

	while (t->kind == TK_VALUE) {
		t++;
		if (tok_is(t, "="))
			return true;
		if (!tok_is(t, ","))
			return false;
		t++;
	}
	return false;
}

/*
 * trailing_operands = operand_list attr_dict? ":" type_list
 *                   | VALUE ":" type ("," VALUE ":" type)* attr_dict?
 *                   | attr_dict?
 * for scf.yield, dataflow.thread.wait, dataflow.thread.yield and return;
 * the second form ("%a : none, %b : none") is read as the first.
 */
static void trailing_operands(struct parser *p, struct ir_op *op)
{
	struct vec v = { 0 }, types = { 0 };
	const struct token *colon = p->tok;

	if (p->tok->kind == TK_VALUE && !at_op_results(p))
		operand_list(p, &v);
	opt_attr_dict(p, op);
	if (v.num) {
		colon = expect(p, ":");
		type_list(p, &types);
		while (types.num == v.num && at(p, ",") &&
		       p->tok[1].kind == TK_VALUE) {
			advance(p);
			operand(p, &v);
			expect(p, ":");
			type_list(p, &types);
		}
		if (!op->num_attrs)
			opt_attr_dict(p, op);
	}
	if (types.num != v.num)
		fail_at(p, colon->loc, "%d operands but %d types", v.num,
			types.num);
	set_operands(p, op, &v);
	set_results(p, op, 0, NULL);
	if (v.num)
		memcpy(op->operand_types, types.data,
		       (size_t)v.num * sizeof(void *));
}

/* wait = operand_list attr_dict? ":" type_list */
static void wait_op(struct parser *p, struct ir_op *op)
{
	if (p->tok->kind != TK_VALUE)
		fail_expected(p, "a token ('%name')");
	trailing_operands(p, op);
}

/* launch_clause = ("wait" | "grid") paren_operands */
static void launch_clause(struct parser *p, struct ir_op *op,
			  struct vec *waits, struct vec *extents)
{
	bool grid = at(p, "grid");
	bool *seen = grid ? &op->has_grid : &op->has_wait;

	if (*seen)
		fail_at(p, p->tok->loc, "duplicate '%s' clause",
			grid ? "grid" : "wait");
	*seen = true;
	if (grid)
		op->grid_loc = p->tok->loc;
	else
		op->wait_loc = p->tok->loc;
	advance(p);
	paren_operands(p, grid ? extents : waits);
}

/* Concatenates launch operand segments into one operand list. */
static void launch_operands(struct parser *p, struct ir_op *op,
			    struct vec *args, struct vec *waits,
			    struct vec *extents)
{
	struct vec all = { 0 };
	struct vec *seg[] = { args, waits, extents };

	for (int s = 0; s < 3; s++)
		for (int i = 0; i < seg[s]->num; i++)
			*(struct ir_use *)vec_push(p, &all, sizeof(struct ir_use)) =
				((struct ir_use *)seg[s]->data)[i];
	set_operands(p, op, &all);
	op->num_args = args->num;
	op->num_waits = waits->num;
	op->num_extents = extents->num;
}

/*
 * ":" "(" type_list? ")" "->" result_types: the signature a launch or a
 * call (@what) ends with, one type per operand (@nargs), then the results.
 */
static void call_signature(struct parser *p, struct ir_op *op,
			   const char *what, int nargs)
{
	struct vec types = { 0 }, results = { 0 };
	const struct token *sig;

	expect(p, ":");
	sig = expect(p, "(");
	if (!consume(p, ")")) {
		type_list(p, &types);
		expect(p, ")");
	}
	if (types.num != nargs)
		fail_at(p, sig->loc, "%s passes %d operand%s but its signature lists %d type%s",
			what, nargs, nargs == 1 ? "" : "s", types.num,
			types.num == 1 ? "" : "s");
	if (types.num)
		memcpy(op->operand_types, types.data,
		       (size_t)types.num * sizeof(void *));
	expect(p, "->");
	result_types(p, &results);
	set_results(p, op, results.num, NULL);
	for (int i = 0; i < results.num; i++)
		op->results[i].type = ((const struct ir_type **)results.data)[i];
}

/*
 * launch = SYMBOL paren_operands launch_clause* attr_dict?
 *          ":" "(" type_list? ")" "->" result_types
 */
static void launch(struct parser *p, struct ir_op *op)
{
	const struct token *callee = expect_kind(p, TK_SYMBOL, "a thread ('@name')");
	struct vec args = { 0 }, waits = { 0 }, extents = { 0 };

	op->callee = name_of(p, callee);
	op->callee_loc = callee->loc;
	paren_operands(p, &args);
	while (at(p, "wait") || at(p, "grid"))
		launch_clause(p, op, &waits, &extents);
	launch_operands(p, op, &args, &waits, &extents);
	opt_attr_dict(p, op);
	call_signature(p, op, "launch", args.num);
}

/*
 * call = SYMBOL paren_operands attr_dict? ":" "(" type_list? ")" "->"
 *        result_types (func.call; the verifier judges the callee)
 */
static void call_op(struct parser *p, struct ir_op *op)
{
	const struct token *callee = expect_kind(p, TK_SYMBOL, "a function ('@name')");
	struct vec args = { 0 };

	op->callee = name_of(p, callee);
	op->callee_loc = callee->loc;
	paren_operands(p, &args);
	set_operands(p, op, &args);
	op->num_args = args.num;
	opt_attr_dict(p, op);
	call_signature(p, op, "call", args.num);
}

/* typed_operands = operand_list(n) attr_dict? ":" type (spawn, print, check) */
static void typed_operands(struct parser *p, struct ir_op *op, int n)
{
	fixed_operands(p, op, n);
	opt_attr_dict(p, op);
	op->type = colon_type(p);
	all_types(op, op->type);
	set_results(p, op, 0, NULL);
}

/* The part of an operation after its name, by syntax class. */
static void op_body(struct parser *p, struct ir_op *op)
{
	switch (ir_opinfo[op->code].syntax) {
	case SYN_CONSTANT:		constant(p, op); break;
	case SYN_INDEX_CONSTANT:	index_constant(p, op); break;
	case SYN_BINARY:		binary(p, op); break;
	case SYN_INDEX_BINARY:		index_binary(p, op); break;
	case SYN_CMPI:			cmpi(p, op); break;
	case SYN_CMPF:			cmpf(p, op); break;
	case SYN_UNARY:			nary(p, op, 1); break;
	case SYN_TERNARY:		nary(p, op, 3); break;
	case SYN_INDEX_CMP:		index_cmp(p, op); break;
	case SYN_SELECT:		select_op(p, op); break;
	case SYN_CAST:			cast(p, op); break;
	case SYN_LOAD:			load(p, op); break;
	case SYN_STORE:			store(p, op); break;
	case SYN_ATOMIC_RMW:		atomic_rmw(p, op); break;
	case SYN_ALLOC:			alloc_op(p, op); break;
	case SYN_DIM:			dim_op(p, op); break;
	case SYN_SUBVIEW:		subview_op(p, op); break;
	case SYN_MEMREF_CAST:		memref_cast_op(p, op); break;
	case SYN_REINTERPRET:		reinterpret_op(p, op); break;
	case SYN_RESHAPE:		reshape_op(p, op); break;
	case SYN_AFFINE:		affine_op(p, op); break;
	case SYN_FOR:			for_op(p, op); break;
	case SYN_IF:			if_op(p, op); break;
	case SYN_LAUNCH:		launch(p, op); break;
	case SYN_CALL:			call_op(p, op); break;
	case SYN_WAIT:			wait_op(p, op); break;
	case SYN_SPAWN:
	case SYN_PRINT:			typed_operands(p, op, 1); break;
	case SYN_CHECK:			typed_operands(p, op, 2); break;
	case SYN_SCF_YIELD:
	case SYN_THREAD_YIELD:
	case SYN_RETURN:		trailing_operands(p, op); break;
	}
}

/* Names the results of @op after the tokens in @names. */
static void bind_results(struct parser *p, struct ir_op *op,
			 struct vec *names)
{
	const struct token **t = names->data;

	if (names->num != op->num_results)
		fail_at(p, op->loc, "'%s' has %d result%s but %d name%s bound",
			ir_opinfo[op->code].name, op->num_results,
			op->num_results == 1 ? "" : "s", names->num,
			names->num == 1 ? " is" : "s are");
	for (int i = 0; i < names->num; i++) {
		op->results[i].name = name_of(p, t[i]);
		op->results[i].loc = t[i]->loc;
	}
}

/* op_results = VALUE ("," VALUE)* "=" */
static void op_results(struct parser *p, struct vec *names)
{
	if (p->tok->kind != TK_VALUE)
		return;
	do {
		*(const struct token **)vec_push(p, names, sizeof(void *)) =
			expect_kind(p, TK_VALUE, "a result name ('%name')");
	} while (consume(p, ","));
	expect(p, "=");
}

/* operation = op_results? OP_NAME op_body */
static struct ir_op *operation(struct parser *p, struct ir_region *r)
{
	struct vec names = { 0 };
	struct ir_op *op = alloc(p, sizeof(*op));
	const struct token *t;

	op_results(p, &names);
	t = p->tok;
	if (t->kind != TK_IDENT)
		fail_expected(p, "an operation");
	op->code = ir_op_lookup(t->text, t->len);
	if (op->code == IR_OP_COUNT) {
		struct diag_suggest sg;
		char buf[128];

		diag_suggest_init(&sg, t->text, t->len);
		for (int i = 0; i < IR_OP_COUNT; i++)
			diag_suggest_add(&sg, ir_opinfo[i].name);
		fail_at(p, t->loc, "unknown operation '%.*s'%s",
			(int)(t->len > 60 ? 60 : t->len), t->text,
			diag_suggest_str(&sg, "", buf, sizeof(buf)));
	}
	op->loc = t->loc;
	op->region = r;
	advance(p);
	op_body(p, op);
	bind_results(p, op, &names);
	return op;
}

/*
 * The column of the first non-blank byte of the line holding @loc, and
 * whether @loc is that byte.
 */
static uint32_t line_indent(struct parser *p, struct loom_loc loc, bool *first)
{
	const char *text = p->d->src->text;
	uint32_t start = loc.offset, i;

	while (start > 0 && text[start - 1] != '\n')
		start--;
	for (i = start; i < loc.offset && (text[i] == ' ' || text[i] == '\t'); i++)
		;
	*first = i == loc.offset;
	return i - start + 1;
}

/* Remembers the first region of the function closed by a misplaced '}'. */
static void check_indent(struct parser *p, const struct ir_region *r)
{
	bool first, unused;

	if (p->misindented.line)
		return;
	if (line_indent(p, r->end, &first) != line_indent(p, r->begin, &unused) &&
	    first) {
		p->misindented = r->begin;
		p->misindented_end = r->end;
	}
}

/*
 * A '}' is missing: the unit ended, or a new function starts, inside @r.
 * The note shows the '{' left open: the one a misindented '}' closed
 * earlier in the function if there is one, else @r's.
 */
static _Noreturn void missing_brace(struct parser *p, const struct ir_region *r)
{
	char buf[64];

	if (p->tok->kind == TK_EOF)
		diag_error(p->d, p->tok->loc, "expected '}', found end of input");
	else
		diag_error(p->d, p->tok->loc,
			   "expected '}', found %s: the body of @%s is not closed",
			   found(p, buf, sizeof(buf)), p->func->name);
	if (p->misindented.line)
		diag_note(p->d, p->misindented,
			  "this '{' is probably the one left open: the '}' on line %u, indented like an outer block, closes it",
			  p->misindented_end.line);
	else
		diag_note(p->d, r->begin, "to match this '{'");
	longjmp(p->fail, 1);
}

/* region = "{" operation* "}" */
static void region(struct parser *p, struct ir_region *r)
{
	enter(p);
	r->begin = expect(p, "{")->loc;
	while (!at(p, "}")) {
		struct ir_op *op;

		if (p->tok->kind == TK_EOF || at(p, "func.func") ||
		    at(p, "dataflow.thread"))
			missing_brace(p, r);
		op = operation(p, r);
		if (r->last)
			r->last->next = op;
		else
			r->first = op;
		r->last = op;
		r->num_ops++;
	}
	r->end = p->tok->loc;
	check_indent(p, r);
	advance(p);
	leave(p);
}

/* ---------------------------------------------------------- functions --- */

/* Marks @f as the function of every region in @r, recursively. */
static void own_regions(struct ir_region *r, struct ir_func *f)
{
	r->parent_func = f;
	for (struct ir_op *op = r->first; op; op = op->next) {
		if (op->body)
			own_regions(op->body, f);
		if (op->else_body)
			own_regions(op->else_body, f);
	}
}

/* block_args = "(" (VALUE ":" type ("," VALUE ":" type)*)? ")" */
static void block_args(struct parser *p, struct vec *v)
{
	expect(p, "(");
	if (consume(p, ")"))
		return;
	do {
		const struct token *t = expect_kind(p, TK_VALUE, "an argument ('%name')");

		expect(p, ":");
		block_arg(p, v, t, type(p));
	} while (consume(p, ","));
	expect(p, ")");
}

/* visibility = "private" | "public" | "nested" */
static void visibility(struct parser *p, struct ir_func *f)
{
	if (at(p, "private") || at(p, "public") || at(p, "nested")) {
		f->visibility = ir_strndup(p->m, p->tok->text, p->tok->len);
		if (!f->visibility)
			fail_at(p, p->tok->loc, "out of memory");
		advance(p);
	}
}

/* symbol = SYMBOL */
static void symbol(struct parser *p, struct ir_func *f)
{
	const struct token *t = expect_kind(p, TK_SYMBOL, "a symbol name ('@name')");

	f->name = name_of(p, t);
	f->name_loc = t->loc;
}

/* thread_clause = ("ctrl" | "iv") block_args */
static void thread_clause(struct parser *p, struct ir_func *f,
			  struct vec *ctrl, struct vec *ivs)
{
	bool iv = at(p, "iv");
	bool *seen = iv ? &f->has_iv : &f->has_ctrl;

	if (*seen)
		fail_at(p, p->tok->loc, "duplicate '%s' clause",
			iv ? "iv" : "ctrl");
	*seen = true;
	if (iv) {
		f->iv_loc = p->tok->loc;
		f->iv_before_ctrl = !f->has_ctrl;
	} else {
		f->ctrl_loc = p->tok->loc;
	}
	advance(p);
	block_args(p, iv ? ivs : ctrl);
}

/* Entry block arguments: inputs ++ ctrl ++ ivs. */
static void thread_args(struct parser *p, struct ir_func *f,
			struct vec *in, struct vec *ctrl, struct vec *ivs)
{
	f->num_inputs = in->num;
	f->num_ctrl = ctrl->num;
	f->num_ivs = ivs->num;
	for (int i = 0; i < ctrl->num; i++)
		*(struct ir_value *)vec_push(p, in, sizeof(struct ir_value)) =
			((struct ir_value *)ctrl->data)[i];
	for (int i = 0; i < ivs->num; i++)
		*(struct ir_value *)vec_push(p, in, sizeof(struct ir_value)) =
			((struct ir_value *)ivs->data)[i];
	set_region_args(&f->body, in);
}

/* attributes = "attributes" attr_dict */
static void func_attributes(struct parser *p, struct ir_func *f)
{
	if (consume(p, "attributes"))
		attr_dict(p, &f->attrs, &f->num_attrs);
}

/*
 * thread = "dataflow.thread" visibility? symbol "domain" "(" attr_value ")"
 *          block_args thread_clause* attributes? region
 */
static void thread(struct parser *p, struct ir_func *f)
{
	struct vec in = { 0 }, ctrl = { 0 }, ivs = { 0 };

	f->is_thread = true;
	f->work_item_arg = -1;
	visibility(p, f);
	symbol(p, f);
	expect(p, "domain");
	expect(p, "(");
	f->domain = alloc(p, sizeof(*f->domain));
	attr_value(p, f->domain);
	f->domain->loc = f->domain->value_loc;
	expect(p, ")");
	block_args(p, &in);
	while (at(p, "ctrl") || at(p, "iv"))
		thread_clause(p, f, &ctrl, &ivs);
	thread_args(p, f, &in, &ctrl, &ivs);
	func_attributes(p, f);
	region(p, &f->body);
}

/* func = "func.func" visibility? symbol block_args attributes? region */
static void func(struct parser *p, struct ir_func *f)
{
	struct vec in = { 0 };

	f->work_item_arg = -1;
	visibility(p, f);
	symbol(p, f);
	block_args(p, &in);
	f->num_inputs = in.num;
	set_region_args(&f->body, &in);
	if (at(p, "->"))
		fail_at(p, p->tok->loc, "host functions return no values");
	func_attributes(p, f);
	region(p, &f->body);
}

/* top_op = thread | func */
static struct ir_func *top_op(struct parser *p)
{
	struct ir_func *f = alloc(p, sizeof(*f));

	f->kw_loc = p->tok->loc;
	p->func = f;
	p->misindented.line = 0;
	if (consume(p, "dataflow.thread"))
		thread(p, f);
	else if (consume(p, "func.func"))
		func(p, f);
	else
		fail_expected(p, "'dataflow.thread' or 'func.func'");
	own_regions(&f->body, f);
	return f;
}

/* unit = (top_op | map_alias_def)* EOF */
static void unit(struct parser *p)
{
	struct ir_func *last = NULL;

	while (p->tok->kind != TK_EOF) {
		struct ir_func *f;

		if (p->tok->kind == TK_HASH) {
			map_alias_def(p);
			continue;
		}
		f = top_op(p);

		if (last)
			last->next = f;
		else
			p->m->funcs = f;
		last = f;
		p->m->num_funcs++;
	}
}

struct ir_module *parse_unit(struct diag *d, const struct token_list *toks)
{
	struct parser p = { .d = d, .tok = toks->toks };

	p.m = ir_module_new();
	if (!p.m) {
		diag_error(d, toks->toks[0].loc, "out of memory");
		return NULL;
	}
	if (setjmp(p.fail)) {
		ir_module_free(p.m);
		return NULL;
	}
	unit(&p);
	return p.m;
}
