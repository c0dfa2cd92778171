// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lexer.c: source file -> units -> tokens.
 *
 * Spellings (MLIR's):
 *   bare identifier   [A-Za-z_][A-Za-z0-9_$.]*
 *   %value, @symbol   sigil then [A-Za-z0-9_$.-]+
 *   #attr, !type      sigil then a bare identifier
 *   integer           [0-9]+ or 0x[0-9a-fA-F]+ (a sign is a separate '-')
 *   float             [0-9]+ "." [0-9]* ([eE] [+-]? [0-9]+)?  (a '.' is
 *                     what makes it a float, as in MLIR)
 *   string            "..." on one line, escapes \" \\ \n \t
 *   punctuation       ( ) { } [ ] < > , : = ? * + - and ->
 * An integer ends at the first non-digit, so memref<16xi64> lexes as
 * "memref" "<" 16 "xi64" ">" and the parser splits the 'x'.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

/* ------------------------------------------------------------- units --- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Is the line starting at @pos a "// -----" separator? */
static bool is_separator(const char *text, size_t pos, size_t end)
{
	static const char mark[] = "// -----";

	while (pos < end && is_blank(text[pos]))
		pos++;
	return end - pos >= sizeof(mark) - 1 &&
	       memcmp(text + pos, mark, sizeof(mark) - 1) == 0;
}

static size_t next_line(const char *text, size_t pos, size_t end)
{
	const char *nl = memchr(text + pos, '\n', end - pos);

	return nl ? (size_t)(nl - text) + 1 : end;
}

long lex_split_units(const struct loom_source *src, struct unit_span **units)
{
	size_t cap = 4, num = 0, pos = 0, end = src->len;
	struct unit_span *u = malloc(cap * sizeof(*u));
	uint32_t line = 1;

	if (!u)
		return -1;
	u[0] = (struct unit_span){ .begin = 0, .end = end, .line = 1 };
	while (pos < end) {
		size_t next = next_line(src->text, pos, end);

		line++;
		if (is_separator(src->text, pos, end)) {
			if (num + 1 == cap) {
				struct unit_span *bigger;

				cap *= 2;
				bigger = realloc(u, cap * sizeof(*u));
				if (!bigger) {
					free(u);
					return -1;
				}
				u = bigger;
			}
			u[num].end = pos;
			num++;
			u[num] = (struct unit_span){
				.begin = next, .end = end, .line = line };
		}
		pos = next;
	}
	*units = u;
	return (long)num + 1;
}

/* ------------------------------------------------------------ tokens --- */

/**
 * struct lexer - state while tokenizing one unit
 * @d: diagnostics (d->src is the file)
 * @text: the file's bytes
 * @pos: next byte to read
 * @end: end of the unit
 * @line: line of @pos
 * @line_start: offset of the first byte of that line
 * @out: the tokens so far
 * @cap: allocated tokens
 */
struct lexer {
	struct diag *d;
	const char *text;
	size_t pos;
	size_t end;
	uint32_t line;
	size_t line_start;
	struct token_list *out;
	size_t cap;
};

bool tok_is(const struct token *tok, const char *s)
{
	size_t n = strlen(s);

	return tok->len == n && memcmp(tok->text, s, n) == 0;
}

static struct loom_loc loc_at(const struct lexer *l, size_t pos, size_t len)
{
	return (struct loom_loc){
		.line = l->line,
		.col = (uint32_t)(pos - l->line_start + 1),
		.offset = (uint32_t)pos,
		.len = (uint32_t)len,
	};
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.';
}

static bool is_suffix_char(char c)
{
	return is_ident_char(c) || c == '-';
}

static int push(struct lexer *l, enum tok_kind kind, size_t start)
{
	struct token *t;

	if (l->out->num == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;

		t = realloc(l->out->toks, cap * sizeof(*t));
		if (!t) {
			diag_error(l->d, loc_at(l, start, 1), "out of memory");
			return -1;
		}
		l->out->toks = t;
		l->cap = cap;
	}
	t = &l->out->toks[l->out->num++];
	*t = (struct token){
		.kind = kind,
		.text = l->text + start,
		.len = l->pos - start,
		.loc = loc_at(l, start, l->pos - start),
	};
	return 0;
}

/* Skips blanks, newlines and // comments. */
static void skip_space(struct lexer *l)
{
	while (l->pos < l->end) {
		char c = l->text[l->pos];

		if (c == '\n') {
			l->pos++;
			l->line++;
			l->line_start = l->pos;
		} else if (is_blank(c)) {
			l->pos++;
		} else if (c == '/' && l->pos + 1 < l->end &&
			   l->text[l->pos + 1] == '/') {
			while (l->pos < l->end && l->text[l->pos] != '\n')
				l->pos++;
		} else {
			break;
		}
	}
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

static bool digit_at(const struct lexer *l, size_t pos)
{
	return pos < l->end && isdigit((unsigned char)l->text[pos]);
}

/* The rest of a float literal whose digits before the '.' are lexed. */
static int lex_float(struct lexer *l, size_t start)
{
	size_t e;

	l->pos++;	/* '.' */
	while (digit_at(l, l->pos))
		l->pos++;
	e = l->pos;
	if (e < l->end && (l->text[e] == 'e' || l->text[e] == 'E')) {
		e++;
		if (e < l->end && (l->text[e] == '+' || l->text[e] == '-'))
			e++;
		if (digit_at(l, e)) {
			while (digit_at(l, e))
				e++;
			l->pos = e;
		}
	}
	return push(l, TK_FLOAT, start);
}

/* integer = [0-9]+ | "0x" [0-9a-fA-F]+ */
static int lex_int(struct lexer *l)
{
	size_t start = l->pos;
	unsigned base = 10;
	uint64_t v = 0;
	bool overflow = false;
	int dv;

	if (l->text[l->pos] == '0' && l->pos + 2 < l->end &&
	    l->text[l->pos + 1] == 'x' &&
	    digit_value(l->text[l->pos + 2]) < 16) {
		base = 16;
		l->pos += 2;
	}
	while (l->pos < l->end &&
	       (dv = digit_value(l->text[l->pos])) < (int)base) {
		if (v > (UINT64_MAX - (uint64_t)dv) / base)
			overflow = true;
		v = v * base + (uint64_t)dv;
		l->pos++;
	}
	if (base == 10 && l->pos < l->end && l->text[l->pos] == '.')
		return lex_float(l, start);
	if (push(l, TK_INT, start))
		return -1;
	l->out->toks[l->out->num - 1].ival = v;
	l->out->toks[l->out->num - 1].overflow = overflow;
	return 0;
}

/* A sigil (%, @, #, !) and the name after it. */
static int lex_sigil(struct lexer *l, enum tok_kind kind)
{
	size_t start = l->pos++;
	bool suffix = kind == TK_VALUE || kind == TK_SYMBOL;

	if (l->pos >= l->end || !(suffix ? is_suffix_char(l->text[l->pos]) :
					    is_ident_start(l->text[l->pos]))) {
		diag_error(l->d, loc_at(l, start, 1),
			   "expected a name after '%c'", l->text[start]);
		return -1;
	}
	while (l->pos < l->end && (suffix ? is_suffix_char(l->text[l->pos]) :
					    is_ident_char(l->text[l->pos])))
		l->pos++;
	return push(l, kind, start);
}

static int lex_string(struct lexer *l)
{
	size_t start = l->pos++;

	while (l->pos < l->end && l->text[l->pos] != '"' &&
	       l->text[l->pos] != '\n') {
		if (l->text[l->pos] == '\\' && l->pos + 1 < l->end &&
		    l->text[l->pos + 1] != '\n')
			l->pos++;
		l->pos++;
	}
	if (l->pos >= l->end || l->text[l->pos] != '"') {
		diag_error(l->d, loc_at(l, start, 1), "unterminated string");
		return -1;
	}
	l->pos++;
	return push(l, TK_STRING, start);
}

static int lex_punct(struct lexer *l)
{
	size_t start = l->pos;
	char c = l->text[l->pos];

	if (c == '-' && l->pos + 1 < l->end && l->text[l->pos + 1] == '>') {
		l->pos += 2;
		return push(l, TK_PUNCT, start);
	}
	if (!strchr("(){}[]<>,:=?*+-", c) || c == '\0') {
		unsigned char u = (unsigned char)c;

		if (isprint(u))
			diag_error(l->d, loc_at(l, start, 1),
				   "unexpected character '%c'", c);
		else
			diag_error(l->d, loc_at(l, start, 1),
				   "unexpected character '\\x%02x'", u);
		return -1;
	}
	l->pos++;
	return push(l, TK_PUNCT, start);
}

static int lex_one(struct lexer *l)
{
	char c = l->text[l->pos];

	if (is_ident_start(c)) {
		size_t start = l->pos;

		while (l->pos < l->end && is_ident_char(l->text[l->pos]))
			l->pos++;
		return push(l, TK_IDENT, start);
	}
	if (isdigit((unsigned char)c))
		return lex_int(l);
	switch (c) {
	case '%':	return lex_sigil(l, TK_VALUE);
	case '@':	return lex_sigil(l, TK_SYMBOL);
	case '#':	return lex_sigil(l, TK_HASH);
	case '!':	return lex_sigil(l, TK_BANG);
	case '"':	return lex_string(l);
	default:	return lex_punct(l);
	}
}

/*
 * "Found end of input" is best shown just past the last token, on its line,
 * rather than on the separator or past the end of the file.
 */
static void eof_after_last(struct token_list *out)
{
	struct token *eof = &out->toks[out->num - 1], *last;

	if (out->num < 2)
		return;
	last = eof - 1;
	eof->loc = last->loc;
	eof->loc.col += last->loc.len;
	eof->loc.offset += last->loc.len;
	eof->loc.len = 0;
	eof->text = last->text + last->len;
	eof->len = 0;
}

int lex_unit(struct diag *d, const struct unit_span *unit,
	     struct token_list *out)
{
	struct lexer l = {
		.d = d,
		.text = d->src->text,
		.pos = unit->begin,
		.end = unit->end,
		.line = unit->line,
		.line_start = unit->begin,
		.out = out,
	};

	out->toks = NULL;
	out->num = 0;
	if (d->src->len > LEX_MAX_SOURCE) {
		diag_error(d, (struct loom_loc){ 0 },
			   "file too large (more than %u bytes)",
			   LEX_MAX_SOURCE);
		return -1;
	}
	for (;;) {
		skip_space(&l);
		if (l.pos >= l.end)
			break;
		if (lex_one(&l)) {
			token_list_free(out);
			return -1;
		}
	}
	if (push(&l, TK_EOF, l.pos)) {
		token_list_free(out);
		return -1;
	}
	eof_after_last(out);
	return 0;
}

void token_list_free(struct token_list *list)
{
	free(list->toks);
	list->toks = NULL;
	list->num = 0;
}
