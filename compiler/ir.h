/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ir.h: loomc's intermediate representation, as the parser builds it and
 * the verifier checks it; later stages (lowering to a dataflow graph, place
 * and route, emission) consume it.
 *
 * Shape:
 *   struct ir_module   one "// -----" unit: a list of ir_func (threads and
 *                      host functions, in source order) and the arena that
 *                      owns every node of the unit
 *   struct ir_func     a dataflow.thread or a func.func: name, domain
 *                      attribute (threads), entry-block arguments
 *                      (inputs ++ ctrl ++ ivs), attributes, one body region
 *   struct ir_region   a single block: arguments and a list of ir_op
 *   struct ir_op       opcode, operands (struct ir_use), the operand types
 *                      the syntax states, results (struct ir_value),
 *                      attributes, an optional region (scf.for) and
 *                      per-opcode fields (constant, predicate, callee,
 *                      launch operand segments, written types)
 *   struct ir_value    an SSA value (op result or block argument) with its
 *                      type and the location of its definition
 *
 * Every node carries the struct loom_loc of its source text.  Uses are
 * parsed by name; the verifier resolves each struct ir_use to its
 * struct ir_value (use->value), so a verified module is fully linked.
 * Nothing is freed individually: ir_module_free() drops the arena.
 */
#ifndef LOOMC_IR_H
#define LOOMC_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "loom_device.h"
#include "loom_image.h"
#include "loom_ops.h"	/* loom_atomic_info(): atomic_rmw's kinds */

/* ------------------------------------------------------------- types --- */

enum ir_type_kind {
	IR_TYPE_I1,
	IR_TYPE_I32,
	IR_TYPE_I64,
	IR_TYPE_INDEX,		/* 64-bit signed, as LOOM_ARG_INDEX */
	IR_TYPE_F32,		/* IEEE-754 binary32 */
	IR_TYPE_NONE,		/* a control token carrying no value */
	IR_TYPE_MEMREF,		/* rank-1..4 row-major memref of i32, i64
				 * or f32 */
	IR_TYPE_TOKEN,		/* !dataflow.thread_token */
	IR_TYPE_CHANNEL,	/* !dataflow.channel<T> */
	IR_TYPE_UNSUPPORTED,	/* a type loomc cannot compile (f64, i8, a
				 * memref element other than i32/i64/f32): the
				 * parser reports it and keeps it, so the
				 * verifier can still judge what uses it */
};

/* struct ir_type.dims[] entry of a '?' size */
#define IR_DYNAMIC	(-1)

/*
 * Highest memref rank: the device's coordinate limit, so that a view may
 * have one index per coordinate of its thread.
 */
#define IR_MEMREF_MAX_RANK	LOOM_MAX_RANK

/**
 * struct ir_type - a type; compare with ir_type_equal()
 * @kind: enum ir_type_kind
 * @rank: IR_TYPE_MEMREF: number of sizes, 1 to IR_MEMREF_MAX_RANK
 * @dims: IR_TYPE_MEMREF: each size, or IR_DYNAMIC for '?'.  A launch
 *	passes a rank-1 memref as its base VA alone; a rank-N one (N >= 2)
 *	as its base VA and, after the thread's own inputs, one index
 *	operand per '?' size; a strided one also its '?' offset and
 *	strides (ir_size_operands())
 * @elem: IR_TYPE_MEMREF: element type (i32, i64 or f32, or an
 *	unsupported one); IR_TYPE_CHANNEL: the carried type
 * @name: IR_TYPE_UNSUPPORTED: its spelling in the source ("f64")
 * @strided: IR_TYPE_MEMREF: a "strided<[...], offset: ...>" layout was
 *	written (a view's type); otherwise the layout is the identity:
 *	row-major, offset 0
 * @strides: with @strided: each size's stride in elements, or IR_DYNAMIC
 * @offset: with @strided: the first element's offset in elements from the
 *	base, or IR_DYNAMIC
 */
struct ir_type {
	enum ir_type_kind kind;
	int rank;
	int64_t dims[IR_MEMREF_MAX_RANK];
	bool strided;
	int64_t strides[IR_MEMREF_MAX_RANK];
	int64_t offset;
	const struct ir_type *elem;
	const char *name;
};

extern const struct ir_type ir_i1, ir_i32, ir_i64, ir_index, ir_f32,
	ir_none, ir_token;

bool ir_type_equal(const struct ir_type *a, const struct ir_type *b);

/* i1, i32, i64 or index: what arith operates on. */
bool ir_type_is_integer(const struct ir_type *t);

/* Bit width of an integer type (index is 64); 0 for others. */
unsigned ir_type_width(const struct ir_type *t);

static inline bool ir_type_is_f32(const struct ir_type *t)
{
	return t->kind == IR_TYPE_F32;
}

/*
 * Bytes a value of scalar type @t occupies in memory and on the fabric's
 * data path: 4 for i1, i32 and f32 (an f32 travels as an i32 holding its
 * bits), 8 for i64 and index; 0 for others.
 */
unsigned ir_type_size(const struct ir_type *t);

/* Does @t mention a !dataflow.channel anywhere? */
bool ir_type_has_channel(const struct ir_type *t);

/*
 * Does @t mention an unsupported type anywhere?  The parser has reported
 * each one already, so later rules need not report it again.
 */
bool ir_type_has_unsupported(const struct ir_type *t);

/*
 * The launch ABI's encoding of @t (uapi enum loom_arg_type), or 0 when a
 * thread argument of that type cannot be passed at launch.
 */
enum loom_arg_type ir_type_arg_type(const struct ir_type *t);

/*
 * @v truncated to @width bits and sign-extended back to 64: the canonical
 * form of a constant of an integer type of that width.
 */
static inline int64_t ir_sext(uint64_t v, unsigned width)
{
	uint64_t sign;

	if (width == 0 || width >= 64)
		return (int64_t)v;
	sign = 1ULL << (width - 1);
	v &= (sign << 1) - 1;
	return (int64_t)((v ^ sign) - sign);
}

/*
 * Elements between consecutive values of index @k of memref type @t in its
 * row-major layout: the product of the sizes after @k (all static).
 */
int64_t ir_memref_stride(const struct ir_type *t, int k);

/*
 * The layout of memref type @t whatever its spelling: a strided one's
 * strides and offset, or the identity's row-major strides (IR_DYNAMIC
 * where a '?' size after it makes one unknown) and offset 0.
 */
void ir_memref_layout(const struct ir_type *t, int64_t *strides,
		      int64_t *offset);

/* Elements of memref type @t, or IR_DYNAMIC when a size is '?'. */
int64_t ir_memref_elems(const struct ir_type *t);

/*
 * Index operands a launch adds for memref type @t: one per '?' size of a
 * memref of rank 2 or more (a rank-1 memref<?xT> keeps its ABI: its base
 * VA alone), then, of a strided layout, one for a '?' offset and one per
 * '?' stride; 0 for other types.
 */
int ir_size_operands(const struct ir_type *t);

/* Which of @t's size operands is size @k's: the '?' sizes before it. */
int ir_size_operand_of(const struct ir_type *t, int k);

/* Which of strided @t's size operands is its '?' offset. */
int ir_offset_operand(const struct ir_type *t);

/* Which of strided @t's size operands is its '?' stride @k. */
int ir_stride_operand(const struct ir_type *t, int k);

/* Spells @t as the source does ("memref<?xi64>") into @buf; returns @buf. */
const char *ir_type_str(const struct ir_type *t, char *buf, size_t size);

/* Enough for any type the parser accepts (nesting is bounded). */
#define IR_TYPE_STR_MAX	384

/* -------------------------------------------------------- attributes --- */

enum ir_attr_kind {
	IR_ATTR_UNIT,		/* a key with no value: {foo} */
	IR_ATTR_INT,		/* 42, -1, 42 : i64 */
	IR_ATTR_STRING,		/* "text" (@str holds the contents, escapes kept) */
	IR_ATTR_KEYWORD,	/* a bare identifier: dense, true */
	IR_ATTR_SYMBOL,		/* @name */
	IR_ATTR_TYPE,		/* a type */
	IR_ATTR_DIALECT,	/* #dialect.name or #dialect.name<...> */
	IR_ATTR_ARRAY,		/* [a, b, ...] */
};

/**
 * struct ir_attr - an attribute, or a key = value entry of a dictionary
 * @name: the key in a dictionary or a #dataflow.thread_domain parameter
 *	list; NULL for a positional value
 * @loc: location of the key (of the value when @name is NULL)
 * @kind: enum ir_attr_kind
 * @value_loc: location of the value
 * @ival: IR_ATTR_INT: the value
 * @str: IR_ATTR_STRING/KEYWORD/SYMBOL: the text without sigil or quotes;
 *	IR_ATTR_DIALECT: the name with its '#'
 * @body: IR_ATTR_DIALECT other than #dataflow.thread_domain: the text
 *	between '<' and '>' as written, or NULL
 * @type: IR_ATTR_TYPE: the type; IR_ATTR_INT: its ": type" or NULL
 * @elems: IR_ATTR_ARRAY: the elements; #dataflow.thread_domain: its
 *	parameters (the kind keyword, then key = value entries)
 * @num_elems: number of @elems
 */
struct ir_attr {
	const char *name;
	struct loom_loc loc;
	enum ir_attr_kind kind;
	struct loom_loc value_loc;
	int64_t ival;
	const char *str;
	const char *body;
	const struct ir_type *type;
	struct ir_attr *elems;
	int num_elems;
};

/* --------------------------------------------------------- operations --- */

/*
 * Syntax classes: how the parser reads an operation and the printer writes
 * it.  Documentation/compiler.rst gives each one's grammar.
 */
enum ir_syntax {
	SYN_CONSTANT,		/* %r = arith.constant 4 : T */
	SYN_INDEX_CONSTANT,	/* %r = index.constant 4 */
	SYN_BINARY,		/* %r = arith.addi %a, %b : T */
	SYN_INDEX_BINARY,	/* %r = index.add %a, %b */
	SYN_CMPI,		/* %r = arith.cmpi slt, %a, %b : T */
	SYN_CMPF,		/* %r = arith.cmpf olt, %a, %b : f32 */
	SYN_UNARY,		/* %r = arith.negf %a : f32 */
	SYN_TERNARY,		/* %r = math.fma %a, %b, %c : f32 */
	SYN_INDEX_CMP,		/* %r = index.cmp slt(%a, %b) */
	SYN_SELECT,		/* %r = arith.select %c, %a, %b : T */
	SYN_CAST,		/* %r = arith.index_cast %x : T to U */
	SYN_LOAD,		/* %v = memref.load %m[%i] : memref<?xT> */
	SYN_STORE,		/* memref.store %v, %m[%i] : memref<?xT> */
	SYN_ATOMIC_RMW,		/* %o = memref.atomic_rmw addi %v, %m[%i]
				 * : (T, memref<?xT>) -> T */
	SYN_ALLOC,		/* %m = memref.alloc(%n) : memref<?xT> */
	SYN_DIM,		/* %n = memref.dim %m, %k : memref<?x8xT> */
	SYN_AFFINE,		/* %r = affine.apply #map(%i)[%n] */
	SYN_SUBVIEW,		/* %v = memref.subview %m[o][s][t] : T to U */
	SYN_MEMREF_CAST,	/* %v = memref.cast %m : T to U */
	SYN_REINTERPRET,	/* %v = memref.reinterpret_cast %m to offset:
				 * [o], sizes: [s], strides: [t] : T to U */
	SYN_RESHAPE,		/* %v = memref.expand_shape %m [[0, 1]]
				 * [output_shape [s]] : T into U, and
				 * collapse_shape (no output_shape) */
	SYN_FOR,		/* scf.for %i = %lb to %ub step %s ... { } */
	SYN_IF,			/* scf.if %c [-> (T)] { } [else { }] */
	SYN_SCF_YIELD,		/* scf.yield %x : T */
	SYN_LAUNCH,		/* %t = dataflow.thread.launch @k(...) ... */
	SYN_WAIT,		/* dataflow.thread.wait %t : !dataflow.thread_token */
	SYN_SPAWN,		/* dataflow.work.spawn %p : T */
	SYN_THREAD_YIELD,	/* dataflow.thread.yield [%f : none] */
	SYN_RETURN,		/* return */
	SYN_CALL,		/* func.call @f(%a) : (T) -> () */
	SYN_PRINT,		/* loom.print %v : T */
	SYN_CHECK,		/* loom.check %a, %b : T */
};

/* What an arithmetic operation computes (constant folding, lowering). */
enum ir_alu {
	ALU_NONE,
	ALU_ADD, ALU_SUB, ALU_MUL,
	ALU_DIVS, ALU_DIVU, ALU_REMS, ALU_REMU,
	ALU_AND, ALU_OR, ALU_XOR,
	ALU_SHL, ALU_SHRS, ALU_SHRU,
	ALU_MAXS, ALU_MINS, ALU_MAXU, ALU_MINU,
	ALU_FLOORDIVS, ALU_CEILDIVS,	/* expanded: build_floor_ceil_div() */
	ALU_CMP,		/* with struct ir_op.pred */
	ALU_SELECT,
	ALU_CASTS,		/* sign-extend or truncate */
	ALU_CASTU,		/* zero-extend or truncate */
	ALU_FADD, ALU_FSUB, ALU_FMUL, ALU_FDIV,
	ALU_FMAX, ALU_FMIN,	/* maximumf, minimumf */
	ALU_FCMP,		/* with struct ir_op.fpred */
	ALU_FMA, ALU_FNEG,
	ALU_SITOF, ALU_UITOF, ALU_FTOSI, ALU_FTOUI,
	ALU_BITCAST,		/* i32 <-> f32: the same token */
};

/* struct ir_opinfo.flags */
#define IR_HOST_ONLY	(1U << 0)	/* only in func.func bodies */
#define IR_TERMINATOR	(1U << 1)	/* ends its block */
#define IR_INDEX_DIALECT (1U << 2)	/* index.*: every type is index */

/*   opcode            spelling                 syntax              alu        flags */
#define IR_OPCODES(X)							\
	X(ARITH_CONSTANT, "arith.constant", SYN_CONSTANT, ALU_NONE, 0)	\
	X(ARITH_ADDI, "arith.addi", SYN_BINARY, ALU_ADD, 0)		\
	X(ARITH_SUBI, "arith.subi", SYN_BINARY, ALU_SUB, 0)		\
	X(ARITH_MULI, "arith.muli", SYN_BINARY, ALU_MUL, 0)		\
	X(ARITH_DIVSI, "arith.divsi", SYN_BINARY, ALU_DIVS, 0)		\
	X(ARITH_DIVUI, "arith.divui", SYN_BINARY, ALU_DIVU, 0)		\
	X(ARITH_REMSI, "arith.remsi", SYN_BINARY, ALU_REMS, 0)		\
	X(ARITH_FLOORDIVSI, "arith.floordivsi", SYN_BINARY, ALU_FLOORDIVS, 0) \
	X(ARITH_CEILDIVSI, "arith.ceildivsi", SYN_BINARY, ALU_CEILDIVS, 0) \
	X(ARITH_REMUI, "arith.remui", SYN_BINARY, ALU_REMU, 0)		\
	X(ARITH_ANDI, "arith.andi", SYN_BINARY, ALU_AND, 0)		\
	X(ARITH_ORI, "arith.ori", SYN_BINARY, ALU_OR, 0)		\
	X(ARITH_XORI, "arith.xori", SYN_BINARY, ALU_XOR, 0)		\
	X(ARITH_SHLI, "arith.shli", SYN_BINARY, ALU_SHL, 0)		\
	X(ARITH_SHRSI, "arith.shrsi", SYN_BINARY, ALU_SHRS, 0)		\
	X(ARITH_SHRUI, "arith.shrui", SYN_BINARY, ALU_SHRU, 0)		\
	X(ARITH_MAXSI, "arith.maxsi", SYN_BINARY, ALU_MAXS, 0)		\
	X(ARITH_MINSI, "arith.minsi", SYN_BINARY, ALU_MINS, 0)		\
	X(ARITH_MAXUI, "arith.maxui", SYN_BINARY, ALU_MAXU, 0)		\
	X(ARITH_MINUI, "arith.minui", SYN_BINARY, ALU_MINU, 0)		\
	X(ARITH_CMPI, "arith.cmpi", SYN_CMPI, ALU_CMP, 0)		\
	X(ARITH_SELECT, "arith.select", SYN_SELECT, ALU_SELECT, 0)	\
	X(ARITH_INDEX_CAST, "arith.index_cast", SYN_CAST, ALU_CASTS, 0) \
	X(ARITH_INDEX_CASTUI, "arith.index_castui", SYN_CAST, ALU_CASTU, 0) \
	X(ARITH_EXTSI, "arith.extsi", SYN_CAST, ALU_CASTS, 0)		\
	X(ARITH_EXTUI, "arith.extui", SYN_CAST, ALU_CASTU, 0)		\
	X(ARITH_TRUNCI, "arith.trunci", SYN_CAST, ALU_CASTS, 0)		\
	X(ARITH_ADDF, "arith.addf", SYN_BINARY, ALU_FADD, 0)		\
	X(ARITH_SUBF, "arith.subf", SYN_BINARY, ALU_FSUB, 0)		\
	X(ARITH_MULF, "arith.mulf", SYN_BINARY, ALU_FMUL, 0)		\
	X(ARITH_DIVF, "arith.divf", SYN_BINARY, ALU_FDIV, 0)		\
	X(ARITH_MAXIMUMF, "arith.maximumf", SYN_BINARY, ALU_FMAX, 0)	\
	X(ARITH_MINIMUMF, "arith.minimumf", SYN_BINARY, ALU_FMIN, 0)	\
	X(ARITH_NEGF, "arith.negf", SYN_UNARY, ALU_FNEG, 0)		\
	X(ARITH_CMPF, "arith.cmpf", SYN_CMPF, ALU_FCMP, 0)		\
	X(MATH_FMA, "math.fma", SYN_TERNARY, ALU_FMA, 0)		\
	X(ARITH_SITOFP, "arith.sitofp", SYN_CAST, ALU_SITOF, 0)		\
	X(ARITH_UITOFP, "arith.uitofp", SYN_CAST, ALU_UITOF, 0)		\
	X(ARITH_FPTOSI, "arith.fptosi", SYN_CAST, ALU_FTOSI, 0)		\
	X(ARITH_FPTOUI, "arith.fptoui", SYN_CAST, ALU_FTOUI, 0)		\
	X(ARITH_BITCAST, "arith.bitcast", SYN_CAST, ALU_BITCAST, 0)	\
	X(INDEX_CONSTANT, "index.constant", SYN_INDEX_CONSTANT, ALU_NONE, IR_INDEX_DIALECT) \
	X(INDEX_ADD, "index.add", SYN_INDEX_BINARY, ALU_ADD, IR_INDEX_DIALECT) \
	X(INDEX_SUB, "index.sub", SYN_INDEX_BINARY, ALU_SUB, IR_INDEX_DIALECT) \
	X(INDEX_MUL, "index.mul", SYN_INDEX_BINARY, ALU_MUL, IR_INDEX_DIALECT) \
	X(INDEX_DIVS, "index.divs", SYN_INDEX_BINARY, ALU_DIVS, IR_INDEX_DIALECT) \
	X(INDEX_DIVU, "index.divu", SYN_INDEX_BINARY, ALU_DIVU, IR_INDEX_DIALECT) \
	X(INDEX_REMS, "index.rems", SYN_INDEX_BINARY, ALU_REMS, IR_INDEX_DIALECT) \
	X(INDEX_REMU, "index.remu", SYN_INDEX_BINARY, ALU_REMU, IR_INDEX_DIALECT) \
	X(INDEX_MAXS, "index.maxs", SYN_INDEX_BINARY, ALU_MAXS, IR_INDEX_DIALECT) \
	X(INDEX_MINS, "index.mins", SYN_INDEX_BINARY, ALU_MINS, IR_INDEX_DIALECT) \
	X(INDEX_MAXU, "index.maxu", SYN_INDEX_BINARY, ALU_MAXU, IR_INDEX_DIALECT) \
	X(INDEX_MINU, "index.minu", SYN_INDEX_BINARY, ALU_MINU, IR_INDEX_DIALECT) \
	X(INDEX_AND, "index.and", SYN_INDEX_BINARY, ALU_AND, IR_INDEX_DIALECT) \
	X(INDEX_OR, "index.or", SYN_INDEX_BINARY, ALU_OR, IR_INDEX_DIALECT) \
	X(INDEX_XOR, "index.xor", SYN_INDEX_BINARY, ALU_XOR, IR_INDEX_DIALECT) \
	X(INDEX_SHL, "index.shl", SYN_INDEX_BINARY, ALU_SHL, IR_INDEX_DIALECT) \
	X(INDEX_SHRS, "index.shrs", SYN_INDEX_BINARY, ALU_SHRS, IR_INDEX_DIALECT) \
	X(INDEX_SHRU, "index.shru", SYN_INDEX_BINARY, ALU_SHRU, IR_INDEX_DIALECT) \
	X(INDEX_CMP, "index.cmp", SYN_INDEX_CMP, ALU_CMP, IR_INDEX_DIALECT) \
	X(INDEX_CASTS, "index.casts", SYN_CAST, ALU_CASTS, 0)		\
	X(INDEX_CASTU, "index.castu", SYN_CAST, ALU_CASTU, 0)		\
	X(MEMREF_LOAD, "memref.load", SYN_LOAD, ALU_NONE, 0)		\
	X(MEMREF_STORE, "memref.store", SYN_STORE, ALU_NONE, 0)		\
	X(MEMREF_ATOMIC_RMW, "memref.atomic_rmw", SYN_ATOMIC_RMW, ALU_NONE, 0) \
	X(MEMREF_ALLOC, "memref.alloc", SYN_ALLOC, ALU_NONE, IR_HOST_ONLY) \
	X(MEMREF_DIM, "memref.dim", SYN_DIM, ALU_NONE, 0)		\
	X(MEMREF_SUBVIEW, "memref.subview", SYN_SUBVIEW, ALU_NONE, 0)	\
	X(MEMREF_CAST, "memref.cast", SYN_MEMREF_CAST, ALU_NONE, 0)	\
	X(MEMREF_REINTERPRET_CAST, "memref.reinterpret_cast", SYN_REINTERPRET, ALU_NONE, 0) \
	X(MEMREF_EXPAND_SHAPE, "memref.expand_shape", SYN_RESHAPE, ALU_NONE, 0) \
	X(MEMREF_COLLAPSE_SHAPE, "memref.collapse_shape", SYN_RESHAPE, ALU_NONE, 0) \
	X(AFFINE_APPLY, "affine.apply", SYN_AFFINE, ALU_NONE, 0)	\
	X(AFFINE_MIN, "affine.min", SYN_AFFINE, ALU_NONE, 0)		\
	X(AFFINE_MAX, "affine.max", SYN_AFFINE, ALU_NONE, 0)		\
	X(SCF_FOR, "scf.for", SYN_FOR, ALU_NONE, 0)			\
	X(SCF_IF, "scf.if", SYN_IF, ALU_NONE, 0)			\
	X(SCF_YIELD, "scf.yield", SYN_SCF_YIELD, ALU_NONE, IR_TERMINATOR) \
	X(THREAD_LAUNCH, "dataflow.thread.launch", SYN_LAUNCH, ALU_NONE, IR_HOST_ONLY) \
	X(THREAD_WAIT, "dataflow.thread.wait", SYN_WAIT, ALU_NONE, IR_HOST_ONLY) \
	X(WORK_SPAWN, "dataflow.work.spawn", SYN_SPAWN, ALU_NONE, 0)	\
	X(THREAD_YIELD, "dataflow.thread.yield", SYN_THREAD_YIELD, ALU_NONE, IR_TERMINATOR) \
	X(RETURN, "return", SYN_RETURN, ALU_NONE, IR_HOST_ONLY | IR_TERMINATOR) \
	X(FUNC_CALL, "func.call", SYN_CALL, ALU_NONE, IR_HOST_ONLY)	\
	X(LOOM_PRINT, "loom.print", SYN_PRINT, ALU_NONE, IR_HOST_ONLY)	\
	X(LOOM_CHECK, "loom.check", SYN_CHECK, ALU_NONE, IR_HOST_ONLY)

enum ir_opcode {
#define IR_OPCODE_ENUM(code, name, syntax, alu, flags) IR_OP_##code,
	IR_OPCODES(IR_OPCODE_ENUM)
#undef IR_OPCODE_ENUM
	IR_OP_COUNT
};

/**
 * struct ir_opinfo - static facts about an opcode
 * @name: its spelling
 * @syntax: enum ir_syntax
 * @alu: enum ir_alu
 * @flags: IR_HOST_ONLY, IR_TERMINATOR, IR_INDEX_DIALECT
 */
struct ir_opinfo {
	const char *name;
	enum ir_syntax syntax;
	enum ir_alu alu;
	unsigned flags;
};

extern const struct ir_opinfo ir_opinfo[IR_OP_COUNT];

/*
 * The opcode spelled by the @len bytes at @name ("func.return" is an alias
 * of "return"); returns IR_OP_COUNT when there is none.
 */
enum ir_opcode ir_op_lookup(const char *name, size_t len);

/* arith.cmpi / index.cmp predicates, in MLIR's order. */
enum ir_pred {
	IR_PRED_EQ, IR_PRED_NE,
	IR_PRED_SLT, IR_PRED_SLE, IR_PRED_SGT, IR_PRED_SGE,
	IR_PRED_ULT, IR_PRED_ULE, IR_PRED_UGT, IR_PRED_UGE,
	IR_PRED_COUNT
};

extern const char *const ir_pred_name[IR_PRED_COUNT];

/*
 * arith.cmpf predicates, in MLIR's order (which enum loom_op's
 * LOOM_OP_FFALSE .. LOOM_OP_FTRUE follow).
 */
enum ir_fpred {
	IR_FPRED_FALSE, IR_FPRED_OEQ, IR_FPRED_OGT, IR_FPRED_OGE,
	IR_FPRED_OLT, IR_FPRED_OLE, IR_FPRED_ONE, IR_FPRED_ORD,
	IR_FPRED_UEQ, IR_FPRED_UGT, IR_FPRED_UGE, IR_FPRED_ULT,
	IR_FPRED_ULE, IR_FPRED_UNE, IR_FPRED_UNO, IR_FPRED_TRUE,
	IR_FPRED_COUNT
};

extern const char *const ir_fpred_name[IR_FPRED_COUNT];

/* ------------------------------------------------------- affine maps --- */

enum ir_affine_kind {
	AFF_CONST,		/* @val */
	AFF_DIM,		/* d@val */
	AFF_SYM,		/* s@val */
	AFF_ADD, AFF_SUB,
	AFF_MUL,		/* one side is constant (an affine map) */
	AFF_FLOORDIV, AFF_CEILDIV, AFF_MOD,	/* by a constant > 0 */
};

/**
 * struct ir_affine_expr - one node of an affine map's result expression
 * @kind: enum ir_affine_kind
 * @val: AFF_CONST: the constant; AFF_DIM/AFF_SYM: the position
 * @lhs: binary kinds: the left operand
 * @rhs: binary kinds: the right operand
 */
struct ir_affine_expr {
	enum ir_affine_kind kind;
	int64_t val;
	const struct ir_affine_expr *lhs, *rhs;
};

/**
 * struct ir_affine_map - affine_map<(d0, ...)[s0, ...] -> (e0, ...)>
 * @num_dims: how many dN
 * @num_syms: how many sN
 * @results: the result expressions
 * @num_results: how many (affine.apply: one; min, max: at least one)
 */
struct ir_affine_map {
	int num_dims;
	int num_syms;
	const struct ir_affine_expr **results;
	int num_results;
};

/*
 * Evaluates @e with dimension and symbol values @vals (dims, then syms)
 * as index arithmetic (wrapping, floor/ceil/mod by positive constants);
 * @known[i] says whether vals[i] is known.  Returns whether the value is
 * known (x * 0 is, whatever x).
 */
bool ir_affine_eval(const struct ir_affine_expr *e, const int64_t *vals,
		    const bool *known, int num_dims, int64_t *out);

/* floor(a / c), ceil(a / c) and a mod c in [0, c), for c > 0. */
int64_t ir_floordiv(int64_t a, int64_t c);
int64_t ir_ceildiv(int64_t a, int64_t c);
int64_t ir_mod(int64_t a, int64_t c);

/* ------------------------------------------------------------- views --- */

/* The lists of struct ir_view, in the order the syntax writes them. */
enum ir_view_list {
	IR_VIEW_OFFSETS,
	IR_VIEW_SIZES,
	IR_VIEW_STRIDES,
	IR_VIEW_LISTS
};

/**
 * struct ir_view - what a view operation (memref.subview, cast,
 * reinterpret_cast, expand_shape, collapse_shape) was given
 * @num: per list, how many entries were written (reinterpret_cast: one
 *	offset; expand_shape: its output_shape as the sizes)
 * @lit: per list and entry, the integer written, or IR_DYNAMIC for a
 *	value (an operand)
 * @operand: per list and entry written as a value, its operand number;
 *	-1 for a literal
 * @loc: per list and entry, where it is written
 * @kept: set by the verifier: per result size, the size of the subview it
 *	is (a rank-reducing subview drops sizes of 1)
 * @num_kept: the result's rank, once verified
 * @group: expand_shape, collapse_shape: per size of the type of the
 *	higher rank, which size of the other it belongs to (the
 *	reassociation [[0, 1], [2]] gives 0, 0, 1)
 * @num_grouped: how many sizes the reassociation lists
 * @num_groups: how many groups it has
 * @has_output_shape: expand_shape: an output_shape list was written
 */
struct ir_view {
	int num[IR_VIEW_LISTS];
	int64_t lit[IR_VIEW_LISTS][IR_MEMREF_MAX_RANK];
	int operand[IR_VIEW_LISTS][IR_MEMREF_MAX_RANK];
	struct loom_loc loc[IR_VIEW_LISTS][IR_MEMREF_MAX_RANK];
	int kept[IR_MEMREF_MAX_RANK];
	int num_kept;
	int group[IR_MEMREF_MAX_RANK];
	int num_grouped;
	int num_groups;
	bool has_output_shape;
};

struct ir_op;
struct ir_region;
struct ir_func;

/**
 * struct ir_value - an SSA value
 * @name: its name without '%'
 * @loc: where it is defined (the %name token)
 * @type: its type
 * @def: the operation it is a result of; NULL for a block argument
 * @region: for a block argument, the region whose block it belongs to
 * @index: result number, or block argument number
 * @is_const: set by the verifier: constant folding knows the value
 * @const_val: that value, sign-extended from the type's width (f32: its
 *	bits sign-extended from 32; i1 true is
 *	-1)
 * @used: set by the verifier: an operand refers to it
 */
struct ir_value {
	const char *name;
	struct loom_loc loc;
	const struct ir_type *type;
	struct ir_op *def;
	struct ir_region *region;
	int index;
	bool is_const;
	int64_t const_val;
	bool used;
};

/**
 * struct ir_use - an operand: a value referenced by name
 * @name: the name without '%'
 * @loc: the %name token
 * @value: what it refers to; set by the verifier (NULL when undefined)
 */
struct ir_use {
	const char *name;
	struct loom_loc loc;
	struct ir_value *value;
};

/**
 * struct ir_region - a region of exactly one block
 * @args: the block's arguments
 * @num_args: how many
 * @first: first operation
 * @last: last operation
 * @num_ops: how many
 * @begin: the '{'
 * @end: the '}'
 * @parent_op: the operation owning it (scf.for, scf.if), or NULL for a body
 * @parent_func: the thread or function it is (or is nested) in
 */
struct ir_region {
	struct ir_value *args;
	int num_args;
	struct ir_op *first;
	struct ir_op *last;
	int num_ops;
	struct loom_loc begin;
	struct loom_loc end;
	struct ir_op *parent_op;
	struct ir_func *parent_func;
};

/**
 * struct ir_op - one operation
 * @code: enum ir_opcode
 * @loc: its name token
 * @operands: every operand, in syntax order (segments below)
 * @operand_types: per operand, the type the syntax states for it (the ": T"
 *	of arith.addi for both operands, a launch signature's types, ...), or
 *	NULL where the syntax states none (launch wait()/grid() operands)
 * @num_operands: how many
 * @results: its results
 * @num_results: how many
 * @attrs: its attribute dictionary
 * @num_attrs: how many entries
 * @body: SYN_FOR: the loop body (args: the induction variable, then one
 *	per iter_arg); SYN_IF: the then region (no args)
 * @else_body: SYN_IF: the else region, or NULL when there is no else
 * @type: the main written type: the ": T" of constants, arith, print,
 *	check, spawn; the memref type of load/store/atomic_rmw/alloc; the induction
 *	variable type of scf.for; the source type of a cast
 * @to_type: SYN_CAST: the result type
 * @lit_neg: SYN_CONSTANT/SYN_INDEX_CONSTANT: the literal had a '-'
 * @lit_mag: its magnitude as written (true is 1; a float literal's
 *	magnitude's f32 bits)
 * @lit_float: SYN_CONSTANT: the literal is a float one (1.5, 2.0e-3)
 * @lit_hex: SYN_CONSTANT: the literal is a 0x integer
 * @lit_range: SYN_CONSTANT: a float literal's magnitude rounds beyond
 *	FLT_MAX (to infinity)
 * @imm: the constant, sign-extended from the type's width (f32: its bits,
 *	sign-extended from 32 like an i32)
 * @pred: SYN_CMPI/SYN_INDEX_CMP: the predicate
 * @fpred: SYN_CMPF: the predicate
 * @atomic_kind: SYN_ATOMIC_RMW: the kind, an enum loom_atomic_kind (MLIR's
 *	arith::AtomicRMWKind names: loom_atomic_info()); operands are the
 *	value, the memref, then its indices; @type the memref's type,
 *	operand_types[0] the value's written type, the result's type the
 *	one after "->"
 * @callee: SYN_LAUNCH: the thread's name without '@'
 * @callee_loc: the @name token
 * @num_args: SYN_LAUNCH: operands [0, num_args) are the thread's inputs;
 *	SYN_AFFINE: operands [0, num_args) are the "(...)" dims, the rest
 *	the "[...]" syms
 * @num_waits: then this many wait() tokens
 * @num_extents: then this many grid() extents
 * @has_wait: a wait() clause is present (possibly empty)
 * @has_grid: a grid() clause is present (possibly empty)
 * @wait_loc: the 'wait' keyword
 * @grid_loc: the 'grid' keyword
 * @num_iter_args: SYN_FOR: operands [3, 3 + num_iter_args) are the inits
 *	after lb, ub, step
 * @map: SYN_AFFINE: the map (operands: its dims, then its syms)
 * @map_alias: SYN_AFFINE: the #name it was written as (without '#'), or
 *	NULL for an inline affine_map<...>; the printer writes it inline
 * @view: SYN_SUBVIEW, SYN_MEMREF_CAST, SYN_REINTERPRET, SYN_RESHAPE:
 *	what the view operation was given (operand 0 is the source, @type
 *	its type, @to_type the result's); NULL for other operations
 * @region: the region this operation is in
 * @next: the next operation in @region
 */
struct ir_op {
	enum ir_opcode code;
	struct loom_loc loc;
	struct ir_use *operands;
	const struct ir_type **operand_types;
	int num_operands;
	struct ir_value *results;
	int num_results;
	struct ir_attr *attrs;
	int num_attrs;
	struct ir_region *body;
	struct ir_region *else_body;
	const struct ir_type *type;
	const struct ir_type *to_type;
	bool lit_neg;
	uint64_t lit_mag;
	bool lit_float;
	bool lit_hex;
	bool lit_range;
	int64_t imm;
	enum ir_pred pred;
	enum ir_fpred fpred;
	unsigned atomic_kind;
	const char *callee;
	struct loom_loc callee_loc;
	struct ir_func *target;
	int num_args;
	int num_waits;
	int num_extents;
	bool has_wait;
	bool has_grid;
	struct loom_loc wait_loc;
	struct loom_loc grid_loc;
	int num_iter_args;
	const struct ir_affine_map *map;
	const char *map_alias;
	struct ir_view *view;
	struct ir_region *region;
	struct ir_op *next;
};

/* Launch operand segments. */
static inline struct ir_use *ir_launch_waits(struct ir_op *op)
{
	return op->operands + op->num_args;
}

static inline struct ir_use *ir_launch_extents(struct ir_op *op)
{
	return op->operands + op->num_args + op->num_waits;
}

/*
 * Entry @k of list @which of view operation @op: returns true and its
 * value in *@c when it is known (a literal, or an operand the verifier
 * folded), else false and the operand's value in *@v.
 */
static inline bool ir_view_entry(const struct ir_op *op,
				 enum ir_view_list which, int k, int64_t *c,
				 const struct ir_value **v)
{
	int i = op->view->operand[which][k];

	*v = i < 0 ? NULL : op->operands[i].value;
	if (i < 0)
		*c = op->view->lit[which][k];
	else if (*v && (*v)->is_const)
		*c = (*v)->const_val;
	return i < 0 || (*v && (*v)->is_const);
}

/*
 * The memref a view is of, through every view operation down to the
 * thread argument or allocation it started from: what its memory
 * accesses are ordered by.  (In a unit that failed to verify, the last
 * view whose source is undefined.)
 */
static inline const struct ir_value *ir_view_root(const struct ir_value *m)
{
	while (m->def && m->def->view && m->def->operands[0].value)
		m = m->def->operands[0].value;
	return m;
}

/* ---------------------------------------------------------- functions --- */

/**
 * struct ir_func - a dataflow.thread or a func.func
 * @is_thread: a dataflow.thread (else a host function)
 * @kw_loc: the 'dataflow.thread' / 'func.func' token
 * @name: its symbol without '@'
 * @name_loc: the @name token
 * @visibility: "private", "public" or "nested" as written, or NULL
 * @domain: threads: the attribute inside domain(...)
 * @dom_kind: set by the verifier from @domain: LOOM_DOMAIN_DENSE or
 *	LOOM_DOMAIN_DYNAMIC_WORK, 0 when @domain is invalid
 * @work_item_arg: set by the verifier: the work-item input of a
 *	dynamic-work thread, else -1
 * @num_inputs: the ordinary arguments: body.args[0, num_inputs)
 * @num_size_operands: threads: the index operands a launch passes after
 *	the inputs, the '?' sizes of rank-N memref inputs and the '?'
 *	offsets and strides of strided ones, in order (input by input,
 *	ir_size_operands()); launch operand num_inputs + j is the j-th
 * @called: host functions: a func.call of the unit names it (set by the
 *	verifier first): its parameters come from its call sites, where it
 *	is inlined, and it is not compiled on its own when it has any
 * @num_ctrl: then the ctrl(...) arguments (exactly one when valid)
 * @num_ivs: then the iv(...) coordinates; their count is the rank K
 * @has_ctrl: a ctrl(...) clause is present
 * @has_iv: an iv(...) clause is present
 * @iv_before_ctrl: iv(...) was written before ctrl(...)
 * @ctrl_loc: the 'ctrl' keyword
 * @iv_loc: the 'iv' keyword
 * @attrs: the "attributes {...}" dictionary
 * @num_attrs: its entries
 * @body: the body; body.args are the entry block arguments
 * @next: the next function of the module
 */
struct ir_func {
	bool is_thread;
	struct loom_loc kw_loc;
	const char *name;
	struct loom_loc name_loc;
	const char *visibility;
	struct ir_attr *domain;
	enum loom_domain_kind dom_kind;
	int work_item_arg;
	int num_inputs;
	int num_size_operands;
	bool called;
	int num_ctrl;
	int num_ivs;
	bool has_ctrl;
	bool has_iv;
	bool iv_before_ctrl;
	struct loom_loc ctrl_loc;
	struct loom_loc iv_loc;
	struct ir_attr *attrs;
	int num_attrs;
	struct ir_region body;
	struct ir_func *next;
};

static inline struct ir_value *ir_func_ctrl(struct ir_func *f)
{
	return f->num_ctrl ? &f->body.args[f->num_inputs] : NULL;
}

/*
 * The launch operand that is size operand @j (ir_size_operands()) of
 * thread input @input: num_inputs + the size operands of the inputs
 * before it + @j.
 */
static inline int ir_func_layout_operand(const struct ir_func *f, int input,
					 int j)
{
	int n = f->num_inputs;

	for (int i = 0; i < input; i++)
		n += ir_size_operands(f->body.args[i].type);
	return n + j;
}

/*
 * The launch operand of size @k of thread input @input (a rank-N memref
 * whose size @k is '?').
 */
static inline int ir_func_size_operand(const struct ir_func *f, int input,
				       int k)
{
	return ir_func_layout_operand(f, input,
				      ir_size_operand_of(f->body.args[input].type, k));
}

static inline struct ir_value *ir_func_ivs(struct ir_func *f)
{
	return &f->body.args[f->num_inputs + f->num_ctrl];
}

/* ------------------------------------------------------------ modules --- */

struct ir_arena;

/**
 * struct ir_module - one unit of a source file
 * @funcs: its threads and host functions, in source order
 * @num_funcs: how many
 * @arena: owns the module and every node in it
 */
struct ir_module {
	struct ir_func *funcs;
	int num_funcs;
	struct ir_arena *arena;
};

/* A new empty module, or NULL when out of memory. */
struct ir_module *ir_module_new(void);
void ir_module_free(struct ir_module *m);

/* Zeroed memory owned by @m's arena, or NULL when out of memory. */
void *ir_alloc(struct ir_module *m, size_t size);

/* A NUL-terminated copy of @len bytes at @s in @m's arena. */
char *ir_strndup(struct ir_module *m, const char *s, size_t len);

/* Looks a thread or function up by name (without '@'). */
struct ir_func *ir_module_find(struct ir_module *m, const char *name);

/*
 * Prints @m in the source syntax (one canonical spelling: printing what the
 * parser read, then parsing and printing that, gives the same text).
 */
void ir_print_module(FILE *out, const struct ir_module *m);

#endif /* LOOMC_IR_H */
