/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verifier.h: the meaning of a parsed unit.
 *
 * verify_module() resolves every use to its definition, folds constants,
 * and checks the thread ABI and the specification's §6 list (launch extent
 * count = callee coordinate rank, no provably negative extent, operand
 * types = callee inputs, ctrl/iv slot typing, one token per launch,
 * work_item_arg, dynamic-work launches and spawn, no channels in
 * dynamic-work threads, no launch or wait in a thread body, none-typed
 * yield frontiers, no physical placement or topology attribute) plus the
 * usual SSA and type rules and the device limits LOOM_MAX_RANK and
 * LOOM_IMAGE_MAX_ARGS.  Each rule has its own diagnostic; the list, with
 * an example of each, is in Documentation/compiler.rst.
 */
#ifndef LOOMC_VERIFIER_H
#define LOOMC_VERIFIER_H

#include "ir.h"

/*
 * Verifies @m, reporting through @d.  Returns the number of errors found
 * (0: the module is valid and every struct ir_use is resolved).
 */
unsigned verify_module(struct diag *d, struct ir_module *m);

/* Called by verify_source() with each unit that has no error. */
typedef void (*verify_unit_fn)(struct ir_module *m, void *arg);

/*
 * The front end over a whole file: splits d->src into "// -----" units,
 * then lexes, parses and verifies each one independently (every unit's
 * diagnostics are reported).  Calls @each (when non-NULL) with every unit
 * that has no error, before freeing it.  Then, if the file has no error,
 * its warnings (unused values, host function parameters, no @main, an
 * empty program; verify_module() gives none).  Returns the number of
 * errors (warnings too under d->werror).
 */
unsigned verify_source(struct diag *d, verify_unit_fn each, void *arg);

#endif /* LOOMC_VERIFIER_H */
