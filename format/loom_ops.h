/* SPDX-License-Identifier: MIT */
/*
 * loom_ops.h: the device's operations (enum loom_op, uapi/loom_device.h)
 * described once, for everything that asks about them: the device's
 * engine (inputs, type rules, REDUCE's folds), the image reader (what a
 * host program may compute), the compiler (names, pure operations,
 * operand swaps, placement) and their tests.
 *
 * LOOM_OPS() has one row per operation, named by its enum loom_op name
 * without LOOM_OP_; nothing here restates or relies on the enum's numeric
 * values or order (the table is indexed by the names).  Columns:
 *
 *   inputs   how many of A, B, C the operation consumes, before IMM_B
 *            removes B (JOIN consumes C as well when C is routed)
 *   class    enum loom_op_class
 *   mirror   the operation computing b op a from a op b: itself when
 *            commutative, NOP when there is none
 *   pure     the result depends only on the inputs and the immediate (the
 *            compiler shares identical pure nodes)
 *   host     a host program's ALU instruction may compute it (f32 ones
 *            other than conversions only in LOOM_TYPE_I32, as on a PE)
 *   reduce   REDUCE may fold with it (its imm)
 *
 * MIT, like the rest of format/; the device's engine gets a copy
 * (tools/build-qemu), as it does of alu.c.
 */
#ifndef LOOM_OPS_H
#define LOOM_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "loom_device.h"

/**
 * enum loom_op_class - what kind of computation an operation is
 * @LOOM_OPC_NONE: NOP, and any value that is no operation
 * @LOOM_OPC_MOVE: CONST, MOV: a value passed on
 * @LOOM_OPC_INT: integer arithmetic, logic, shifts and SELECT (loom_alu())
 * @LOOM_OPC_ICMP: integer compares (loom_alu())
 * @LOOM_OPC_F32: f32 arithmetic; the tile's type must be LOOM_TYPE_I32
 * @LOOM_OPC_FCMP: f32 compares; the tile's type must be LOOM_TYPE_I32
 * @LOOM_OPC_CONV: integer <-> f32 conversions; the type is the integer's
 * @LOOM_OPC_MEM: LOAD, STORE, ATOMIC: the fabric's memory ports
 * @LOOM_OPC_FLOW: token sequencing: STREAM, INVARIANT, JOIN, SPAWN,
 *	REDUCE, SINK
 */
enum loom_op_class {
	LOOM_OPC_NONE,
	LOOM_OPC_MOVE,
	LOOM_OPC_INT,
	LOOM_OPC_ICMP,
	LOOM_OPC_F32,
	LOOM_OPC_FCMP,
	LOOM_OPC_CONV,
	LOOM_OPC_MEM,
	LOOM_OPC_FLOW,
};

/*  op        inputs class mirror pure host reduce */
#define LOOM_OPS(X)						\
	X(NOP,		0, NONE, NOP,	0, 0, 0)		\
	X(CONST,	1, MOVE, NOP,	1, 0, 0) /* A: trigger */ \
	X(MOV,		1, MOVE, NOP,	1, 1, 0)		\
	X(ADD,		2, INT,	 ADD,	1, 1, 1)		\
	X(SUB,		2, INT,	 NOP,	1, 1, 0)		\
	X(MUL,		2, INT,	 MUL,	1, 1, 1)		\
	X(DIVS,		2, INT,	 NOP,	1, 1, 0)		\
	X(DIVU,		2, INT,	 NOP,	1, 1, 0)		\
	X(REMS,		2, INT,	 NOP,	1, 1, 0)		\
	X(REMU,		2, INT,	 NOP,	1, 1, 0)		\
	X(AND,		2, INT,	 AND,	1, 1, 1)		\
	X(OR,		2, INT,	 OR,	1, 1, 1)		\
	X(XOR,		2, INT,	 XOR,	1, 1, 1)		\
	X(SHL,		2, INT,	 NOP,	1, 1, 0)		\
	X(SHRL,		2, INT,	 NOP,	1, 1, 0)		\
	X(SHRA,		2, INT,	 NOP,	1, 1, 0)		\
	X(EQ,		2, ICMP, EQ,	1, 1, 0)		\
	X(NE,		2, ICMP, NE,	1, 1, 0)		\
	X(LTS,		2, ICMP, GTS,	1, 1, 0)		\
	X(LTU,		2, ICMP, GTU,	1, 1, 0)		\
	X(LES,		2, ICMP, GES,	1, 1, 0)		\
	X(LEU,		2, ICMP, GEU,	1, 1, 0)		\
	X(GTS,		2, ICMP, LTS,	1, 1, 0)		\
	X(GTU,		2, ICMP, LTU,	1, 1, 0)		\
	X(GES,		2, ICMP, LES,	1, 1, 0)		\
	X(GEU,		2, ICMP, LEU,	1, 1, 0)		\
	X(SELECT,	3, INT,	 NOP,	1, 1, 0)		\
	X(LOAD,		1, MEM,	 NOP,	0, 0, 0)		\
	X(STORE,	2, MEM,	 NOP,	0, 0, 0)		\
	X(STREAM,	3, FLOW, NOP,	0, 0, 0)		\
	X(INVARIANT,	2, FLOW, NOP,	1, 0, 0)		\
	X(JOIN,		2, FLOW, NOP,	0, 0, 0) /* C when routed */ \
	X(SPAWN,	1, FLOW, NOP,	0, 0, 0)		\
	X(REDUCE,	3, FLOW, NOP,	0, 0, 0)		\
	X(SINK,		1, FLOW, NOP,	0, 0, 0)		\
	/* canonical NaNs and -0 < +0 make these commutative bit for bit */ \
	X(FADD,		2, F32,	 FADD,	1, 1, 1)		\
	X(FSUB,		2, F32,	 NOP,	1, 1, 0)		\
	X(FMUL,		2, F32,	 FMUL,	1, 1, 1)		\
	X(FDIV,		2, F32,	 NOP,	1, 1, 0)		\
	X(FMAX,		2, F32,	 FMAX,	1, 1, 1)		\
	X(FMIN,		2, F32,	 FMIN,	1, 1, 1)		\
	X(FFALSE,	2, FCMP, FFALSE, 1, 1, 0)		\
	X(FOEQ,		2, FCMP, FOEQ,	1, 1, 0)		\
	X(FOGT,		2, FCMP, FOLT,	1, 1, 0)		\
	X(FOGE,		2, FCMP, FOLE,	1, 1, 0)		\
	X(FOLT,		2, FCMP, FOGT,	1, 1, 0)		\
	X(FOLE,		2, FCMP, FOGE,	1, 1, 0)		\
	X(FONE,		2, FCMP, FONE,	1, 1, 0)		\
	X(FORD,		2, FCMP, FORD,	1, 1, 0)		\
	X(FUEQ,		2, FCMP, FUEQ,	1, 1, 0)		\
	X(FUGT,		2, FCMP, FULT,	1, 1, 0)		\
	X(FUGE,		2, FCMP, FULE,	1, 1, 0)		\
	X(FULT,		2, FCMP, FUGT,	1, 1, 0)		\
	X(FULE,		2, FCMP, FUGE,	1, 1, 0)		\
	X(FUNE,		2, FCMP, FUNE,	1, 1, 0)		\
	X(FUNO,		2, FCMP, FUNO,	1, 1, 0)		\
	X(FTRUE,	2, FCMP, FTRUE,	1, 1, 0)		\
	X(FMA,		3, F32,	 NOP,	1, 1, 0)		\
	X(FNEG,		1, F32,	 NOP,	1, 1, 0)		\
	X(SITOF,	1, CONV, NOP,	1, 1, 0)		\
	X(UITOF,	1, CONV, NOP,	1, 1, 0)		\
	X(FTOSI,	1, CONV, NOP,	1, 1, 0)		\
	X(FTOUI,	1, CONV, NOP,	1, 1, 0)		\
	X(ATOMIC,	2, MEM,	 NOP,	0, 0, 0) /* imm: the kind */

/*
 * Checked against the uapi enum: one row per enumerator.  Each row's
 * index is LOOM_OP_<op> (a name that is no enumerator does not compile),
 * a row named twice is a duplicate case label in loom_ops_distinct_(),
 * and there are as many rows as enumerators.
 */
#define LOOM_OPS_ONE_(op, in, cls, mirror, pure, host, reduce) + 1
_Static_assert(0 LOOM_OPS(LOOM_OPS_ONE_) == LOOM_OP_COUNT,
	       "LOOM_OPS() has one row per enum loom_op enumerator");
#undef LOOM_OPS_ONE_

static inline bool loom_ops_distinct_(enum loom_op op)
{
	switch (op) {
#define LOOM_OPS_CASE_(op, in, cls, mirror, pure, host, reduce) case LOOM_OP_##op:
	LOOM_OPS(LOOM_OPS_CASE_)
#undef LOOM_OPS_CASE_
		return true;
	case LOOM_OP_COUNT:
		break;
	}
	return false;
}

/**
 * struct loom_op_info - one row of LOOM_OPS()
 * @name: the operation's name without LOOM_OP_ ("ADD")
 * @inputs: inputs consumed, before IMM_B
 * @cls: enum loom_op_class
 * @mirror: the enum loom_op computing b op a, or LOOM_OP_NOP
 * @pure: result depends only on inputs and immediate
 * @host: a host program may compute it
 * @reduce: REDUCE may fold with it
 */
struct loom_op_info {
	const char *name;
	uint8_t inputs;
	uint8_t cls;
	uint8_t mirror;
	bool pure;
	bool host;
	bool reduce;
};

/* The row of @op; a value that is no operation gets a NONE row named "?". */
static inline const struct loom_op_info *loom_op_info(uint64_t op)
{
	static const struct loom_op_info info[LOOM_OP_COUNT] = {
#define LOOM_OPS_ROW_(op, in, cls_, mirror_, pure_, host_, reduce_)	\
		[LOOM_OP_##op] = { .name = #op, .inputs = in,		\
				   .cls = LOOM_OPC_##cls_,		\
				   .mirror = LOOM_OP_##mirror_,		\
				   .pure = pure_, .host = host_,	\
				   .reduce = reduce_ },
		LOOM_OPS(LOOM_OPS_ROW_)
#undef LOOM_OPS_ROW_
	};
	static const struct loom_op_info none = { .name = "?" };

	return op < LOOM_OP_COUNT ? &info[op] : &none;
}

static inline const char *loom_op_name(uint64_t op)
{
	return loom_op_info(op)->name;
}

/* Number of inputs (A, B, C) @op consumes, before IMM_B removes B. */
static inline unsigned loom_op_inputs(uint64_t op)
{
	return loom_op_info(op)->inputs;
}

static inline enum loom_op_class loom_op_class(uint64_t op)
{
	return (enum loom_op_class)loom_op_info(op)->cls;
}

/* An f32 operation whose tile type must be LOOM_TYPE_I32 (not a conversion). */
static inline bool loom_op_f32_only(uint64_t op)
{
	enum loom_op_class c = loom_op_class(op);

	return c == LOOM_OPC_F32 || c == LOOM_OPC_FCMP;
}

/* An operation loom_alu() computes. */
static inline bool loom_op_alu(uint64_t op)
{
	switch (loom_op_class(op)) {
	case LOOM_OPC_INT:
	case LOOM_OPC_ICMP:
	case LOOM_OPC_F32:
	case LOOM_OPC_FCMP:
	case LOOM_OPC_CONV:
		return true;
	default:
		return false;
	}
}

static inline bool loom_op_commutative(uint64_t op)
{
	return loom_op_info(op)->mirror == op && op != LOOM_OP_NOP;
}

/*
 * LOOM_ATOMIC_KINDS() has one row per enum loom_atomic_kind, named by its
 * enumerator without LOOM_ATOMIC_.  Columns:
 *
 *   mlir   its name in MLIR's memref.atomic_rmw (arith::AtomicRMWKind)
 *   op     the enum loom_op computing "old op b"; NOP for the kinds
 *          loom_atomic_apply() computes itself (min, max, assign)
 *   f32    the kind works on f32 (the tile's type must be LOOM_TYPE_I32)
 */
#define LOOM_ATOMIC_KINDS(X)					\
	X(ADDI,		"addi",		ADD,	0)		\
	X(ADDF,		"addf",		FADD,	1)		\
	X(MULI,		"muli",		MUL,	0)		\
	X(MULF,		"mulf",		FMUL,	1)		\
	X(MAXS,		"maxs",		NOP,	0)		\
	X(MAXU,		"maxu",		NOP,	0)		\
	X(MINS,		"mins",		NOP,	0)		\
	X(MINU,		"minu",		NOP,	0)		\
	X(MAXIMUMF,	"maximumf",	FMAX,	1)		\
	X(MINIMUMF,	"minimumf",	FMIN,	1)		\
	X(ANDI,		"andi",		AND,	0)		\
	X(ORI,		"ori",		OR,	0)		\
	X(XORI,		"xori",		XOR,	0)		\
	X(ASSIGN,	"assign",	NOP,	0)

#define LOOM_ATOMIC_ONE_(k, mlir, op, f32) + 1
_Static_assert(0 LOOM_ATOMIC_KINDS(LOOM_ATOMIC_ONE_) == LOOM_ATOMIC_COUNT,
	       "LOOM_ATOMIC_KINDS() has one row per enum loom_atomic_kind");
#undef LOOM_ATOMIC_ONE_

/**
 * struct loom_atomic_info - one row of LOOM_ATOMIC_KINDS()
 * @name: MLIR's name ("addi"); NULL for a value that is no kind
 * @op: the enum loom_op computing old op b, or LOOM_OP_NOP
 * @f32: an f32 kind
 */
struct loom_atomic_info {
	const char *name;
	uint8_t op;
	bool f32;
};

static inline const struct loom_atomic_info *loom_atomic_info(uint64_t kind)
{
	static const struct loom_atomic_info info[LOOM_ATOMIC_COUNT] = {
#define LOOM_ATOMIC_ROW_(k, mlir, op_, f32_)				\
		[LOOM_ATOMIC_##k] = { .name = mlir, .op = LOOM_OP_##op_, \
				      .f32 = f32_ },
		LOOM_ATOMIC_KINDS(LOOM_ATOMIC_ROW_)
#undef LOOM_ATOMIC_ROW_
	};
	static const struct loom_atomic_info none = { .name = NULL };

	return kind < LOOM_ATOMIC_COUNT ? &info[kind] : &none;
}

/* An ATOMIC tile's kind @kind is valid for its @type. */
static inline bool loom_atomic_kind_ok(uint64_t kind, unsigned type)
{
	return kind < LOOM_ATOMIC_COUNT &&
	       (!loom_atomic_info(kind)->f32 || type == LOOM_TYPE_I32);
}

#endif /* LOOM_OPS_H */
