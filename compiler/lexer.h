/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lexer.h: splitting a source file into units and units into tokens.
 *
 * A file is a sequence of independent units separated by lines whose text
 * (after leading blanks) starts with "// -----", like mlir-opt's
 * -split-input-file.  Each unit is tokenized on its own, with locations in
 * the whole file.  Whitespace is insignificant; "//" starts a comment that
 * runs to the end of the line.
 */
#ifndef LOOMC_LEXER_H
#define LOOMC_LEXER_H

#include "diag.h"

/*
 * Token kinds.  The sigil is part of the spelling: a TK_VALUE token's text
 * is "%x", a TK_SYMBOL's "@f".
 */
enum tok_kind {
	TK_EOF,		/* end of the unit */
	TK_IDENT,	/* bare identifier: arith.addi, i64, step, xi64 */
	TK_VALUE,	/* %name: an SSA value */
	TK_SYMBOL,	/* @name: a thread or function */
	TK_HASH,	/* #dialect.attr */
	TK_BANG,	/* !dialect.type */
	TK_INT,		/* decimal or 0x hex integer, no sign */
	TK_FLOAT,	/* decimal float with a '.': 1.5, 2.0e-3, no sign */
	TK_STRING,	/* "..." with \" \\ \n \t escapes */
	TK_PUNCT,	/* ( ) { } [ ] < > , : = ? * + - -> */
};

/**
 * struct token - one token
 * @kind: enum tok_kind
 * @text: its spelling in the source (not NUL-terminated)
 * @len: length of @text
 * @loc: where it starts (loc.len == @len)
 * @ival: TK_INT: the value
 * @overflow: TK_INT: the literal does not fit in 64 bits
 */
struct token {
	enum tok_kind kind;
	const char *text;
	size_t len;
	struct loom_loc loc;
	uint64_t ival;
	bool overflow;
};

/**
 * struct token_list - the tokens of one unit, ending with TK_EOF
 * @toks: the tokens
 * @num: how many, TK_EOF included
 */
struct token_list {
	struct token *toks;
	size_t num;
};

/**
 * struct unit_span - one "// -----"-separated unit of a file
 * @begin: byte offset of its first byte (the start of a line)
 * @end: byte offset just past its last byte
 * @line: line number of @begin
 */
struct unit_span {
	size_t begin;
	size_t end;
	uint32_t line;
};

/* Files larger than this are refused (locations are 32-bit). */
#define LEX_MAX_SOURCE	(1U << 30)

/*
 * Splits @src into units.  Returns the number of units (at least one) and
 * a malloc'd array in *@units, or -1 when out of memory.
 */
long lex_split_units(const struct loom_source *src, struct unit_span **units);

/*
 * Tokenizes one unit of d->src into @out.  Returns 0, or -1 after reporting
 * the first lexical error through @d (then @out is empty).  Free @out with
 * token_list_free() either way.
 */
int lex_unit(struct diag *d, const struct unit_span *unit,
	     struct token_list *out);

void token_list_free(struct token_list *list);

/* Does @tok spell exactly @s? */
bool tok_is(const struct token *tok, const char *s);

#endif /* LOOMC_LEXER_H */
