/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * front.h: helpers shared by the compiler's unit tests: run the front end
 * over a string and look at what it recorded.
 */
#ifndef LOOMC_TESTS_FRONT_H
#define LOOMC_TESTS_FRONT_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph.h"
#include "lexer.h"
#include "lower.h"
#include "parser.h"
#include "place.h"
#include "verifier.h"

/**
 * struct front - one run of the front end over a string
 * @src: the source ("test.loom")
 * @d: its diagnostics, recorded
 * @toks: tokens of its first unit
 * @m: the module parsed from them (NULL on a syntax error)
 */
struct front {
	struct loom_source src;
	struct diag d;
	struct token_list toks;
	struct ir_module *m;
};

static inline void front_open(struct front *f, const char *text)
{
	memset(f, 0, sizeof(*f));
	if (loom_source_from_memory(&f->src, "test.loom", text, strlen(text)))
		abort();
	diag_init(&f->d, &f->src, NULL, true);
}

/* Lexes and parses @text as one unit (no verification). */
static inline struct ir_module *front_parse(struct front *f, const char *text)
{
	struct unit_span all;

	front_open(f, text);
	all = (struct unit_span){ .begin = 0, .end = f->src.len, .line = 1 };
	if (lex_unit(&f->d, &all, &f->toks) == 0)
		f->m = parse_unit(&f->d, &f->toks);
	return f->m;
}

/* Lexes, parses and verifies @text as one unit; returns the error count. */
static inline unsigned front_verify(struct front *f, const char *text)
{
	if (!front_parse(f, text))
		return f->d.errors;
	return verify_module(&f->d, f->m);
}

static inline void front_close(struct front *f)
{
	ir_module_free(f->m);
	token_list_free(&f->toks);
	diag_free(&f->d);
	loom_source_free(&f->src);
}

/* The @i-th recorded diagnostic, or a dummy one past the end. */
static inline const struct diag_record *front_diag(struct front *f, size_t i)
{
	static const struct diag_record none = { .msg = (char *)"<none>" };

	return i < f->d.num_recs ? &f->d.recs[i] : &none;
}

/* Is diagnostic @i of kind @kind, at @line:@col, containing @msg? */
static inline bool front_diag_is(struct front *f, size_t i,
				 enum diag_kind kind, unsigned line,
				 unsigned col, const char *msg)
{
	const struct diag_record *r = front_diag(f, i);
	bool ok = i < f->d.num_recs && r->kind == kind &&
		  r->loc.line == line && r->loc.col == col &&
		  strstr(r->msg, msg);

	if (!ok)
		printf("#   diagnostic %zu: %s at %u:%u \"%s\"; wanted %s at %u:%u \"%s\"\n",
		       i, diag_kind_name(r->kind), r->loc.line, r->loc.col,
		       r->msg, diag_kind_name(kind), line, col, msg);
	return ok;
}

/* The @n-th operation (0-based) of region @r. */
static inline struct ir_op *front_op(struct ir_region *r, int n)
{
	struct ir_op *op = r->first;

	while (op && n--)
		op = op->next;
	return op;
}

/*
 * Fabric operations of @src's (first) thread and the II loomc measures for
 * it on 8x8: what a view costs against the same thread indexed by hand.
 * -1 for what could not be had (a front-end error, no mapping).
 */
static inline void front_cost_on_8x8(const char *src, int *ops, double *ii)
{
	struct front f;
	struct graph g;
	struct placement *p = malloc(sizeof(*p));

	REQUIRE(p);
	graph_init(&g);
	*ops = -1;
	*ii = -1;
	if (!front_verify(&f, src) && !lower_thread(&f.d, f.m->funcs, &g)) {
		*ops = 0;
		for (int i = 0; i < g.num; i++)
			*ops += g.nodes[i].kind == G_PE;
		if (!place_graph(&f.d, f.m->funcs->name_loc, &g, 8, 8, p))
			*ii = p->stats.measured;
	}
	graph_free(&g);
	front_close(&f);
	free(p);
}

#endif /* LOOMC_TESTS_FRONT_H */
