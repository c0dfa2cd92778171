/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lower.h: a verified dataflow.thread to a dataflow graph of fabric
 * operations (Documentation/compiler.rst, "Lowering").
 */
#ifndef LOOMC_LOWER_H
#define LOOMC_LOWER_H

#include "graph.h"
#include "ir.h"

/*
 * Children per item a dynamic-work thread may spawn when a spawn is inside
 * an scf.for and the thread carries no "loom.child_capacity = N" attribute.
 */
#define LOWER_DEFAULT_CHILD_CAPACITY	64

/*
 * Lowers thread @f of a verified module into @g (initialised by the
 * caller).  Returns the number of errors reported through @d; what cannot
 * be lowered yet is reported as "cannot lower ...: not supported yet".
 */
unsigned lower_thread(struct diag *d, struct ir_func *f, struct graph *g);

#endif /* LOOMC_LOWER_H */
