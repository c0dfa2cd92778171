/* SPDX-License-Identifier: MIT */
/*
 * loom_alu.h: the PE operations' arithmetic (format/alu.c), on its own so
 * that the device's engine includes nothing else of format/.
 */
#ifndef LOOM_ALU_H
#define LOOM_ALU_H

#include <stdbool.h>
#include <stdint.h>

#include "loom_device.h"

/*
 * The value an arithmetic, logic, compare or SELECT operation produces from
 * its operands, for @type LOOM_TYPE_I64 or LOOM_TYPE_I32 (see enum loom_op
 * for the rules: no traps, shifts modulo the width, i32 results
 * sign-extended; f32 in IEEE-754 binary32 with canonical NaNs and
 * saturating conversions).  @op must be one loom_op_alu() accepts
 * (loom_ops.h: the INT, ICMP, F32, FCMP and CONV classes).
 */
uint64_t loom_alu(unsigned op, unsigned type, uint64_t a, uint64_t b,
		  uint64_t c);

/*
 * The value LOOM_OP_ATOMIC of kind @kind (enum loom_atomic_kind, one
 * loom_atomic_kind_ok() accepts for @type) stores where @old was, with
 * operand @b; i32 results sign-extended like loom_alu()'s.  @old and @b
 * are tokens: an i32 one sign-extended.
 */
uint64_t loom_atomic_apply(unsigned kind, unsigned type, uint64_t old,
			   uint64_t b);

#endif /* LOOM_ALU_H */
