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

/*
 * How IR arithmetic maps onto the device's operations, for everything that
 * computes as the fabric does (the host program too): the LOOM_TYPE_* of a
 * value, the LOOM_OP_* of an ALU kind (for min and max: the comparison
 * that is true when the first operand is the one to pick; maximumf and
 * minimumf are FMAX and FMIN), and of a comparison predicate.
 */
unsigned lower_dev_type(const struct ir_type *t);
unsigned lower_alu_op(enum ir_alu alu);
unsigned lower_pred_op(enum ir_pred pred);
unsigned lower_fpred_op(enum ir_fpred pred);

/**
 * struct alu_builder - where an expansion puts its operations: the
 * lowering's PEs (values are graph nodes) or the host program's ALU
 * instructions (values are registers)
 * @ctx: the builder's state
 * @op: a op b, of device type @type; returns the result
 * @op_imm: a op @imm
 * @select: cond ? a : b
 * @select_imm: cond ? @imm : b
 */
struct alu_builder {
	void *ctx;
	int (*op)(void *ctx, unsigned op, unsigned type, int a, int b);
	int (*op_imm)(void *ctx, unsigned op, unsigned type, int a,
		      int64_t imm);
	int (*select)(void *ctx, unsigned type, int cond, int a, int b);
	int (*select_imm)(void *ctx, unsigned type, int cond, int64_t imm,
			  int b);
};

/*
 * Operations the device has no one PE for, expanded the same way in
 * threads and host functions so that both round alike: floor and
 * ceiling signed division (arith.floordivsi, ceildivsi; affine floordiv,
 * ceildiv) of @a by @b, or by a positive constant @c (cheaper: the
 * remainder's sign alone decides), and the non-negative remainder (affine
 * mod) by a positive constant.  @type is the operands' device type.
 */
int build_floor_ceil_div(const struct alu_builder *b, unsigned type,
			 bool ceil, int a, int d);
int build_floor_ceil_div_const(const struct alu_builder *b, unsigned type,
			       bool ceil, int a, int64_t c);
int build_mod_const(const struct alu_builder *b, unsigned type, int a,
		    int64_t c);

/*
 * affine.apply, affine.min or affine.max @op, whose result the verifier
 * could not fold: its map's expressions as index arithmetic (constant
 * terms as immediates), then a compare and a select per extra result of
 * min and max.  @vals[k] is operand k's value where it is not a constant.
 */
int build_affine_op(const struct alu_builder *b, const struct ir_op *op,
		    const int *vals);

#endif /* LOOMC_LOWER_H */
