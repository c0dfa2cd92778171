// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lexer_test: units ("// -----"), token kinds and spellings, locations,
 * integers, memref shapes, and every lexical error with its location.
 */
#include "front.h"

/* Lexes @text as one unit into f; returns lex_unit()'s result. */
static int lex(struct front *f, const char *text)
{
	struct unit_span all;

	front_open(f, text);
	all = (struct unit_span){ .begin = 0, .end = f->src.len, .line = 1 };
	return lex_unit(&f->d, &all, &f->toks);
}

static bool tok(struct front *f, size_t i, enum tok_kind kind,
		const char *text)
{
	const struct token *t;

	if (i >= f->toks.num) {
		printf("#   token %zu: only %zu tokens\n", i, f->toks.num);
		return false;
	}
	t = &f->toks.toks[i];
	if (t->kind == kind && (!text || tok_is(t, text)))
		return true;
	printf("#   token %zu: kind %d '%.*s', wanted kind %d '%s'\n", i,
	       t->kind, (int)t->len, t->text, kind, text ? text : "");
	return false;
}

TEST(token_kinds)
{
	struct front f;

	REQUIRE_EQ(0, lex(&f, "%a = arith.addi %b, %c : i64 @k "
			  "#dataflow.thread_domain !dataflow.thread_token "
			  "42 \"s\\\"q\" -> ( ) { } [ ] < > , : = ? * + -"));
	CHECK(tok(&f, 0, TK_VALUE, "%a"));
	CHECK(tok(&f, 1, TK_PUNCT, "="));
	CHECK(tok(&f, 2, TK_IDENT, "arith.addi"));
	CHECK(tok(&f, 3, TK_VALUE, "%b"));
	CHECK(tok(&f, 4, TK_PUNCT, ","));
	CHECK(tok(&f, 5, TK_VALUE, "%c"));
	CHECK(tok(&f, 6, TK_PUNCT, ":"));
	CHECK(tok(&f, 7, TK_IDENT, "i64"));
	CHECK(tok(&f, 8, TK_SYMBOL, "@k"));
	CHECK(tok(&f, 9, TK_HASH, "#dataflow.thread_domain"));
	CHECK(tok(&f, 10, TK_BANG, "!dataflow.thread_token"));
	CHECK(tok(&f, 11, TK_INT, "42"));
	CHECK(tok(&f, 12, TK_STRING, "\"s\\\"q\""));
	CHECK(tok(&f, 13, TK_PUNCT, "->"));
	for (size_t i = 0; i < 15; i++)
		CHECK(tok(&f, 14 + i, TK_PUNCT, NULL));
	CHECK(tok(&f, 29, TK_EOF, ""));
	CHECK_EQ(30, f.toks.num);
	CHECK_EQ(0, f.d.errors);
	front_close(&f);
}

TEST(value_and_symbol_names)
{
	struct front f;

	REQUIRE_EQ(0, lex(&f, "%0 %arg1 %a.b-c_$ @k-2.x %c-1"));
	CHECK(tok(&f, 0, TK_VALUE, "%0"));
	CHECK(tok(&f, 1, TK_VALUE, "%arg1"));
	CHECK(tok(&f, 2, TK_VALUE, "%a.b-c_$"));
	CHECK(tok(&f, 3, TK_SYMBOL, "@k-2.x"));
	CHECK(tok(&f, 4, TK_VALUE, "%c-1"));
	front_close(&f);
}

TEST(locations)
{
	struct front f;
	const struct token *t;

	REQUIRE_EQ(0, lex(&f, "func.func @main() {\n\t%x = arith.constant 1 : i64\n}\n"));
	t = &f.toks.toks[5];	/* %x */
	CHECK(tok(&f, 5, TK_VALUE, "%x"));
	CHECK_EQ(2, t->loc.line);
	CHECK_EQ(2, t->loc.col);
	CHECK_EQ(21, t->loc.offset);
	CHECK_EQ(2, t->loc.len);
	t = &f.toks.toks[11];	/* } */
	CHECK(tok(&f, 11, TK_PUNCT, "}"));
	CHECK_EQ(3, t->loc.line);
	CHECK_EQ(1, t->loc.col);
	/* end of input is placed right after the last token */
	t = &f.toks.toks[12];
	CHECK(tok(&f, 12, TK_EOF, ""));
	CHECK_EQ(3, t->loc.line);
	CHECK_EQ(2, t->loc.col);
	front_close(&f);
}

TEST(comments_and_blanks)
{
	struct front f;

	REQUIRE_EQ(0, lex(&f, "// a comment %x @y\n  \t\r\n%a// tail\n// end"));
	CHECK(tok(&f, 0, TK_VALUE, "%a"));
	CHECK(tok(&f, 1, TK_EOF, ""));
	CHECK_EQ(3, f.toks.toks[0].loc.line);
	front_close(&f);

	REQUIRE_EQ(0, lex(&f, ""));
	CHECK(tok(&f, 0, TK_EOF, ""));
	CHECK_EQ(1, f.toks.num);
	front_close(&f);
}

TEST(integers)
{
	struct front f;

	REQUIRE_EQ(0, lex(&f, "0 18446744073709551615 18446744073709551616 "
			  "0x1F 0xffffffffffffffff 0x10000000000000000 0x 0xg"));
	CHECK_EQ(0, f.toks.toks[0].ival);
	CHECK_EQ((long long)UINT64_MAX, (long long)f.toks.toks[1].ival);
	CHECK(!f.toks.toks[1].overflow);
	CHECK(f.toks.toks[2].overflow);
	CHECK_EQ(31, f.toks.toks[3].ival);
	CHECK(tok(&f, 3, TK_INT, "0x1F"));
	CHECK(!f.toks.toks[4].overflow);
	CHECK(f.toks.toks[5].overflow);
	/* "0x" with no hex digit is 0 then the identifier x */
	CHECK(tok(&f, 6, TK_INT, "0"));
	CHECK(tok(&f, 7, TK_IDENT, "x"));
	CHECK(tok(&f, 8, TK_INT, "0"));
	CHECK(tok(&f, 9, TK_IDENT, "xg"));
	front_close(&f);
}

TEST(floats)
{
	struct front f;

	/* a '.' makes a float; an exponent needs digits; no '.' stays an int */
	REQUIRE_EQ(0, lex(&f, "1.5 2. 3.0e-7 4.25E+10 5.5e 6e3 0x1e0 16xf32"));
	CHECK(tok(&f, 0, TK_FLOAT, "1.5"));
	CHECK(tok(&f, 1, TK_FLOAT, "2."));
	CHECK(tok(&f, 2, TK_FLOAT, "3.0e-7"));
	CHECK(tok(&f, 3, TK_FLOAT, "4.25E+10"));
	CHECK(tok(&f, 4, TK_FLOAT, "5.5"));
	CHECK(tok(&f, 5, TK_IDENT, "e"));
	CHECK(tok(&f, 6, TK_INT, "6"));
	CHECK(tok(&f, 7, TK_IDENT, "e3"));
	CHECK(tok(&f, 8, TK_INT, "0x1e0"));	/* hex is always an integer */
	CHECK(tok(&f, 9, TK_INT, "16"));
	CHECK(tok(&f, 10, TK_IDENT, "xf32"));
	front_close(&f);
}

TEST(memref_shapes)
{
	struct front f;

	REQUIRE_EQ(0, lex(&f, "memref<?xi64> memref<16xi32> memref<0xi64>"));
	CHECK(tok(&f, 0, TK_IDENT, "memref"));
	CHECK(tok(&f, 1, TK_PUNCT, "<"));
	CHECK(tok(&f, 2, TK_PUNCT, "?"));
	CHECK(tok(&f, 3, TK_IDENT, "xi64"));
	CHECK(tok(&f, 4, TK_PUNCT, ">"));
	CHECK(tok(&f, 7, TK_INT, "16"));
	CHECK(tok(&f, 8, TK_IDENT, "xi32"));
	CHECK(tok(&f, 12, TK_INT, "0"));
	CHECK(tok(&f, 13, TK_IDENT, "xi64"));
	front_close(&f);
}

TEST(errors_are_located)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ "%a = $", 1, 6, "unexpected character '$'" },
		{ "%a\n  \"abc", 2, 3, "unterminated string" },
		{ "\"abc\ndef\"", 1, 1, "unterminated string" },
		{ "x %", 1, 3, "expected a name after '%'" },
		{ "@ x", 1, 1, "expected a name after '@'" },
		{ "#1", 1, 1, "expected a name after '#'" },
		{ "!", 1, 1, "expected a name after '!'" },
		{ "a\x01", 1, 2, "unexpected character '\\x01'" },
		{ "a /b", 1, 3, "unexpected character '/'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct front f;

		CHECK_EQ(-1, lex(&f, cases[i].text));
		CHECK_EQ(1, f.d.errors);
		CHECK(front_diag_is(&f, 0, DIAG_ERROR, cases[i].line,
				    cases[i].col, cases[i].msg));
		CHECK_EQ(0, f.toks.num);
		front_close(&f);
	}
}

TEST(nul_byte_is_an_error)
{
	struct front f;
	struct unit_span all;
	static const char text[] = { '%', 'a', ' ', '\0', 'b' };

	memset(&f, 0, sizeof(f));
	REQUIRE(loom_source_from_memory(&f.src, "t", text, sizeof(text)) == 0);
	diag_init(&f.d, &f.src, NULL, true);
	all = (struct unit_span){ .begin = 0, .end = f.src.len, .line = 1 };
	CHECK_EQ(-1, lex_unit(&f.d, &all, &f.toks));
	CHECK(front_diag_is(&f, 0, DIAG_ERROR, 1, 4, "unexpected character '\\x00'"));
	front_close(&f);
}

TEST(split_units)
{
	struct front f;
	struct unit_span *u;
	const char *text = "a\n// -----\nb\n  // ------ more\nc\n//-----\n";
	long n;

	front_open(&f, text);
	n = lex_split_units(&f.src, &u);
	REQUIRE_EQ(3, n);
	CHECK_EQ(0, u[0].begin);
	CHECK_EQ(2, u[0].end);
	CHECK_EQ(1, u[0].line);
	CHECK_EQ(11, u[1].begin);
	CHECK_EQ(13, u[1].end);
	CHECK_EQ(3, u[1].line);
	CHECK_EQ(5, u[2].line);
	CHECK_EQ(strlen(text), u[2].end);	/* "//-----" is a comment */
	free(u);
	front_close(&f);

	front_open(&f, "");
	n = lex_split_units(&f.src, &u);
	CHECK_EQ(1, n);
	CHECK_EQ(0, u[0].end);
	free(u);
	front_close(&f);

	front_open(&f, "// -----");
	n = lex_split_units(&f.src, &u);
	CHECK_EQ(2, n);
	free(u);
	front_close(&f);
}

TEST(units_keep_file_locations)
{
	struct front f;
	struct unit_span *u;

	front_open(&f, "a\n// -----\n\n  %x b\n");
	REQUIRE_EQ(2, lex_split_units(&f.src, &u));
	REQUIRE_EQ(0, lex_unit(&f.d, &u[1], &f.toks));
	CHECK(tok(&f, 0, TK_VALUE, "%x"));
	CHECK_EQ(4, f.toks.toks[0].loc.line);
	CHECK_EQ(3, f.toks.toks[0].loc.col);
	CHECK(tok(&f, 1, TK_IDENT, "b"));
	CHECK(tok(&f, 2, TK_EOF, ""));
	free(u);
	front_close(&f);
}

int main(void)
{
	RUN(token_kinds);
	RUN(value_and_symbol_names);
	RUN(locations);
	RUN(comments_and_blanks);
	RUN(integers);
	RUN(floats);
	RUN(memref_shapes);
	RUN(errors_are_located);
	RUN(nul_byte_is_an_error);
	RUN(split_units);
	RUN(units_keep_file_locations);
	return checks_done();
}
