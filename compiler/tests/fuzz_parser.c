// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_parser: a libFuzzer harness for loomc's front end.
 *
 * Each input is a whole .loom file: split into units, lexed, parsed,
 * verified, with every diagnostic printed (to /dev/null) so the caret code
 * runs too.  Every unit that verifies is printed, and the printed text must
 * parse and verify again without error and print identically: the printer
 * and parser agree on the whole language.
 *
 * Not a unit test (the Makefile links only the *_test.c files of this
 * directory); build and run it by hand, in bash:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iuapi -Icompiler \
 *	compiler/tests/fuzz_parser.c compiler/{diag,lexer,parser,ir,verifier}.c \
 *	-o /tmp/fuzz_parser
 *   mkdir -p /tmp/fuzz-corpus
 *   /tmp/fuzz_parser -max_total_time=120 -dict=compiler/tests/fuzz_parser.dict \
 *	/tmp/fuzz-corpus compiler/tests/corpus/valid compiler/tests/corpus/invalid
 *
 * Crashes it finds go to compiler/tests/corpus/crashes/, which
 * tests/run-corpus feeds to loomc.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "parser.h"
#include "verifier.h"

static FILE *sink;

static char *print(struct ir_module *m, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);

	if (!out)
		abort();
	ir_print_module(out, m);
	fclose(out);
	return buf;
}

/* A verified unit's printed form verifies and prints the same again. */
static void round_trip(struct ir_module *m, void *arg)
{
	struct loom_source src;
	struct unit_span all;
	struct token_list toks;
	struct ir_module *again = NULL;
	struct diag d;
	size_t len, len2;
	char *once = print(m, &len), *twice;

	(void)arg;
	if (loom_source_from_memory(&src, "printed.loom", once, len))
		abort();
	diag_init(&d, &src, stderr, false);
	all = (struct unit_span){ .begin = 0, .end = len, .line = 1 };
	if (lex_unit(&d, &all, &toks) == 0)
		again = parse_unit(&d, &toks);
	if (!again || verify_module(&d, again)) {
		fprintf(stderr, "printed unit does not verify:\n%s", once);
		abort();
	}
	twice = print(again, &len2);
	if (len != len2 || memcmp(once, twice, len)) {
		fprintf(stderr, "printing is not stable:\n%s\n---\n%s", once, twice);
		abort();
	}
	free(twice);
	ir_module_free(again);
	token_list_free(&toks);
	diag_free(&d);
	loom_source_free(&src);
	free(once);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loom_source src;
	struct diag d;

	if (!sink)
		sink = fopen("/dev/null", "w");
	if (loom_source_from_memory(&src, "fuzz.loom", (const char *)data, size))
		return 0;
	diag_init(&d, &src, sink, false);
	verify_source(&d, round_trip, NULL);
	diag_free(&d);
	loom_source_free(&src);
	return 0;
}
