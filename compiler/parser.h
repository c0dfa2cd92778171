/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * parser.h: tokens of one unit -> struct ir_module.
 *
 * The parser is purely syntactic: it builds every operation with its
 * operands (by name), written types, results, attributes and locations,
 * and leaves meaning (name resolution, types, the thread ABI, spec §6) to
 * the verifier.  It stops at the first syntax error, which it reports with
 * its location; it never crashes on malformed or truncated input.  Nesting
 * (regions, attribute arrays, types) is limited to PARSE_MAX_DEPTH.
 */
#ifndef LOOMC_PARSER_H
#define LOOMC_PARSER_H

#include "ir.h"
#include "lexer.h"

#define PARSE_MAX_DEPTH	64

/*
 * Parses the tokens of one unit.  Returns a new module (free it with
 * ir_module_free()), or NULL after reporting the first syntax error
 * through @d.
 */
struct ir_module *parse_unit(struct diag *d, const struct token_list *toks);

#endif /* LOOMC_PARSER_H */
