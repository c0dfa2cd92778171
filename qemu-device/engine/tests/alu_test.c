// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * alu_test: the arithmetic of every PE operation in i64 and i32, with the
 * edges the uapi pins: division by zero, MIN / -1, shift amounts at and
 * beyond the width, signed vs unsigned compares, i32 sign extension.
 */
#include <string.h>

#include "check.h"
#include "engine.h"

#define I64	LOOM_TYPE_I64
#define I32	LOOM_TYPE_I32

#define MIN64	0x8000000000000000ULL
#define MAX64	0x7fffffffffffffffULL
#define ONES	0xffffffffffffffffULL
#define MIN32	0xffffffff80000000ULL	/* INT32_MIN sign-extended */
#define MAX32	0x000000007fffffffULL

/* -n as a 64-bit pattern */
#define NEG(n)	(0 - (uint64_t)(n))

/* Junk in the high half of i32 operands, which must be ignored. */
#define HI	0xdeadbeef00000000ULL

#define ALU(op, type, a, b)	loom_alu(LOOM_OP_##op, type, a, b, 0)
#define CHECK_ALU(exp, op, type, a, b) \
	CHECK_EQ((uint64_t)(exp), ALU(op, type, a, b))

TEST(add_sub_mul_i64)
{
	CHECK_ALU(5, ADD, I64, 2, 3);
	CHECK_ALU(MIN64, ADD, I64, MAX64, 1);
	CHECK_ALU(0, ADD, I64, ONES, 1);
	CHECK_ALU(NEG(1), SUB, I64, 2, 3);
	CHECK_ALU(MAX64, SUB, I64, MIN64, 1);
	CHECK_ALU(42, MUL, I64, 6, 7);
	CHECK_ALU(NEG(42), MUL, I64, NEG(6), 7);
	CHECK_ALU(MIN64, MUL, I64, MIN64, NEG(1));
	CHECK_ALU(0xfffffffe00000001ULL, MUL, I64, 0xffffffffULL, 0xffffffffULL);
	CHECK_ALU(0x00000001ffffffffULL, MUL, I64, 0xffffffffULL, NEG(0xffffffffULL));
	CHECK_ALU(1, MUL, I64, ONES, ONES);
}

TEST(add_sub_mul_i32)
{
	CHECK_ALU(5, ADD, I32, HI | 2, HI | 3);
	CHECK_ALU(MIN32, ADD, I32, MAX32, 1);
	CHECK_ALU(0, ADD, I32, 0xffffffffULL, 1);
	CHECK_ALU(NEG(1), SUB, I32, 2, 3);
	CHECK_ALU(MAX32, SUB, I32, MIN32, 1);
	CHECK_ALU(NEG(42), MUL, I32, HI | 0xfffffffaULL, 7);
	CHECK_ALU(MIN32, MUL, I32, 0x80000000ULL, 0xffffffffULL);
	CHECK_ALU(1, MUL, I32, 0xffffffffULL, 0xffffffffULL);
	CHECK_ALU(0, MUL, I32, 0x10000, 0x10000);
}

TEST(div_rem_i64)
{
	CHECK_ALU(3, DIVS, I64, 7, 2);
	CHECK_ALU(NEG(3), DIVS, I64, NEG(7), 2);
	CHECK_ALU(NEG(3), DIVS, I64, 7, NEG(2));
	CHECK_ALU(3, DIVS, I64, NEG(7), NEG(2));
	CHECK_ALU(1, REMS, I64, 7, 2);
	CHECK_ALU(NEG(1), REMS, I64, NEG(7), 2);
	CHECK_ALU(1, REMS, I64, 7, NEG(2));
	CHECK_ALU(NEG(1), REMS, I64, NEG(7), NEG(2));
	CHECK_ALU(0x7fffffffffffffffULL, DIVU, I64, ONES, 2);
	CHECK_ALU(1, REMU, I64, ONES, 2);
	CHECK_ALU(0, DIVU, I64, 3, NEG(1));
	CHECK_ALU(3, REMU, I64, 3, NEG(1));
	/* by zero: all ones, remainder the dividend */
	CHECK_ALU(ONES, DIVS, I64, 7, 0);
	CHECK_ALU(ONES, DIVS, I64, NEG(7), 0);
	CHECK_ALU(ONES, DIVU, I64, 7, 0);
	CHECK_ALU(ONES, DIVU, I64, 0, 0);
	CHECK_ALU(7, REMS, I64, 7, 0);
	CHECK_ALU(NEG(7), REMS, I64, NEG(7), 0);
	CHECK_ALU(MIN64, REMU, I64, MIN64, 0);
	/* the signed overflow */
	CHECK_ALU(MIN64, DIVS, I64, MIN64, NEG(1));
	CHECK_ALU(0, REMS, I64, MIN64, NEG(1));
	CHECK_ALU(1, DIVS, I64, MIN64, MIN64);
	CHECK_ALU(MIN64 / 2, DIVU, I64, MIN64, 2);
}

TEST(div_rem_i32)
{
	CHECK_ALU(3, DIVS, I32, HI | 7, 2);
	CHECK_ALU(NEG(3), DIVS, I32, 0xfffffff9ULL, 2);
	CHECK_ALU(NEG(3), DIVS, I32, 7, 0xfffffffeULL);
	CHECK_ALU(NEG(1), REMS, I32, 0xfffffff9ULL, 2);
	CHECK_ALU(1, REMS, I32, 7, HI | 0xfffffffeULL);
	/* unsigned: 0xffffffff is 4294967295, the result sign-extends */
	CHECK_ALU(MAX32, DIVU, I32, 0xffffffffULL, 2);
	CHECK_ALU(1, REMU, I32, 0xffffffffULL, 2);
	CHECK_ALU(ONES, DIVU, I32, 0xffffffffULL, 1);
	CHECK_ALU(0, DIVU, I32, 3, 0xffffffffULL);
	/* high halves are ignored: this is 5 / 0 in i32 */
	CHECK_ALU(ONES, DIVU, I32, 5, HI);
	CHECK_ALU(ONES, DIVS, I32, 5, HI);
	CHECK_ALU(5, REMU, I32, HI | 5, HI);
	CHECK_ALU(ONES, DIVS, I32, 7, 0);
	CHECK_ALU(ONES, DIVU, I32, 7, 0);
	CHECK_ALU(NEG(7), REMS, I32, 0xfffffff9ULL, 0);
	CHECK_ALU(NEG(7), REMU, I32, 0xfffffff9ULL, 0);	/* sign-extended x */
	CHECK_ALU(MIN32, DIVS, I32, 0x80000000ULL, 0xffffffffULL);
	CHECK_ALU(0, REMS, I32, 0x80000000ULL, 0xffffffffULL);
	CHECK_ALU(MIN32, DIVS, I32, MIN32, NEG(1));
}

TEST(logic)
{
	CHECK_ALU(0x0f00, AND, I64, 0xff00, 0x0ff0);
	CHECK_ALU(0xfff0, OR, I64, 0xff00, 0x0ff0);
	CHECK_ALU(0xf0f0, XOR, I64, 0xff00, 0x0ff0);
	CHECK_ALU(ONES, OR, I64, MIN64, MAX64);
	CHECK_ALU(MIN32, AND, I32, ONES, 0x80000000ULL);
	CHECK_ALU(NEG(1), OR, I32, 0xffff0000ULL, 0xffffULL);
	CHECK_ALU(0x7fffffff, XOR, I32, HI | 0x80000000ULL, 0xffffffffULL);
}

TEST(shifts_i64)
{
	uint64_t v = 0x8000000000000011ULL;

	CHECK_ALU(v, SHL, I64, v, 0);
	CHECK_ALU(v, SHRL, I64, v, 0);
	CHECK_ALU(v, SHRA, I64, v, 0);
	CHECK_ALU(MIN64, SHL, I64, 1, 63);
	CHECK_ALU(1, SHRL, I64, v, 63);
	CHECK_ALU(ONES, SHRA, I64, v, 63);
	CHECK_ALU(0, SHRA, I64, MAX64, 63);
	/* amounts modulo 64 */
	CHECK_ALU(v, SHL, I64, v, 64);
	CHECK_ALU(v, SHRL, I64, v, 64);
	CHECK_ALU(v, SHRA, I64, v, 64);
	CHECK_ALU(0x22, SHL, I64, v, 65);
	CHECK_ALU(0x4000000000000008ULL, SHRL, I64, v, 65);
	CHECK_ALU(0xc000000000000008ULL, SHRA, I64, v, 65);
	CHECK_ALU(MIN64, SHL, I64, 1, ONES);	/* 63 */
	CHECK_ALU(1, SHRL, I64, v, ONES);
	CHECK_ALU(1ULL << 40, SHL, I64, 1, 1000);	/* 1000 % 64 = 40 */
	CHECK_ALU(NEG(1ULL << 23), SHRA, I64, MIN64, 1000);
	CHECK_ALU(4, SHL, I64, 1, MIN64 | 2);
}

TEST(shifts_i32)
{
	uint64_t v = HI | 0x80000011ULL;

	CHECK_ALU(0xffffffff80000011ULL, SHL, I32, v, 0);
	CHECK_ALU(0xffffffff80000011ULL, SHRL, I32, v, 0);
	CHECK_ALU(0xffffffff80000011ULL, SHRA, I32, v, 0);
	CHECK_ALU(MIN32, SHL, I32, 1, 31);
	CHECK_ALU(1, SHRL, I32, v, 31);
	CHECK_ALU(ONES, SHRA, I32, v, 31);
	CHECK_ALU(0, SHRA, I32, MAX32, 31);
	/* amounts modulo 32 */
	CHECK_ALU(0xffffffff80000011ULL, SHL, I32, v, 32);
	CHECK_ALU(0xffffffff80000011ULL, SHRL, I32, v, 32);
	CHECK_ALU(0x22, SHL, I32, v, 33);
	CHECK_ALU(0x40000008, SHRL, I32, v, 33);
	CHECK_ALU(0xffffffffc0000008ULL, SHRA, I32, v, 33);
	CHECK_ALU(MIN32, SHL, I32, 1, ONES);	/* 31 */
	CHECK_ALU(1, SHRL, I32, v, 0xffffffffULL);
	CHECK_ALU(0x100, SHL, I32, 1, 1000);	/* 1000 % 32 = 8 */
	CHECK_ALU(0xffffffffff800000ULL, SHRA, I32, 0x80000000ULL, 1000);
	/* a 32-bit shift never reaches the high half */
	CHECK_ALU(0, SHL, I32, 0x80000000ULL, 1);
	CHECK_ALU(0x7fffffff, SHRL, I32, ONES, 1);
}

/* Checks all ten compares of @a and @b: signed and unsigned orderings. */
static void compares(unsigned type, uint64_t a, uint64_t b, int slt, int ult,
		     int eq)
{
	int sgt = !slt && !eq, ugt = !ult && !eq;

	CHECK_EQ(eq, loom_alu(LOOM_OP_EQ, type, a, b, 0));
	CHECK_EQ(!eq, loom_alu(LOOM_OP_NE, type, a, b, 0));
	CHECK_EQ(slt, loom_alu(LOOM_OP_LTS, type, a, b, 0));
	CHECK_EQ(ult, loom_alu(LOOM_OP_LTU, type, a, b, 0));
	CHECK_EQ(slt || eq, loom_alu(LOOM_OP_LES, type, a, b, 0));
	CHECK_EQ(ult || eq, loom_alu(LOOM_OP_LEU, type, a, b, 0));
	CHECK_EQ(sgt, loom_alu(LOOM_OP_GTS, type, a, b, 0));
	CHECK_EQ(ugt, loom_alu(LOOM_OP_GTU, type, a, b, 0));
	CHECK_EQ(!slt, loom_alu(LOOM_OP_GES, type, a, b, 0));
	CHECK_EQ(!ult, loom_alu(LOOM_OP_GEU, type, a, b, 0));
}

TEST(compares_i64)
{
	compares(I64, 1, 2, 1, 1, 0);
	compares(I64, 2, 1, 0, 0, 0);
	compares(I64, 5, 5, 0, 0, 1);
	compares(I64, NEG(1), 1, 1, 0, 0);	/* -1 < 1, but 0xff.. > 1 */
	compares(I64, 1, NEG(1), 0, 1, 0);
	compares(I64, MIN64, MAX64, 1, 0, 0);
	compares(I64, NEG(2), NEG(1), 1, 1, 0);
	compares(I64, ONES, ONES, 0, 0, 1);
	/* i64 sees the high half that i32 ignores (HI is negative) */
	compares(I64, HI | 1, 1, 1, 0, 0);
}

TEST(compares_i32)
{
	compares(I32, 1, 2, 1, 1, 0);
	compares(I32, 0xffffffffULL, 1, 1, 0, 0);
	compares(I32, 1, 0xffffffffULL, 0, 1, 0);
	compares(I32, 0x80000000ULL, 0x7fffffffULL, 1, 0, 0);
	compares(I32, HI | 1, 1, 0, 0, 1);	/* high halves ignored */
	compares(I32, HI | 0xffffffffULL, NEG(1), 0, 0, 1);
	compares(I32, 0x100000000ULL, 0, 0, 0, 1);
	compares(I32, NEG(2), 0xffffffffULL, 1, 1, 0);
}

TEST(select)
{
	CHECK_EQ(10, loom_alu(LOOM_OP_SELECT, I64, 1, 10, 20));
	CHECK_EQ(10, loom_alu(LOOM_OP_SELECT, I64, MIN64, 10, 20));
	CHECK_EQ(20, loom_alu(LOOM_OP_SELECT, I64, 0, 10, 20));
	CHECK_EQ((long long)ONES, loom_alu(LOOM_OP_SELECT, I64, 7, ONES, 0));
	/* i32: a's low half decides; results sign-extend */
	CHECK_EQ(20, loom_alu(LOOM_OP_SELECT, I32, 0x100000000ULL, 10, 20));
	CHECK_EQ(10, loom_alu(LOOM_OP_SELECT, I32, HI | 1, 10, 20));
	CHECK_EQ((long long)MIN32,
		 loom_alu(LOOM_OP_SELECT, I32, 1, HI | 0x80000000ULL, 0));
	CHECK_EQ(NEG(1), loom_alu(LOOM_OP_SELECT, I32, 0, 0, 0xffffffffULL));
	CHECK_EQ(5, loom_alu(LOOM_OP_SELECT, I32, 0, 0, HI | 5));
}

TEST(i32_sign_extension)
{
	/* every i32 result is the sign extension of its low half */
	static const unsigned ops[] = {
		LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_DIVS,
		LOOM_OP_DIVU, LOOM_OP_REMS, LOOM_OP_REMU, LOOM_OP_AND,
		LOOM_OP_OR, LOOM_OP_XOR, LOOM_OP_SHL, LOOM_OP_SHRL,
		LOOM_OP_SHRA, LOOM_OP_SELECT,
	};
	static const uint64_t vals[] = {
		0, 1, 3, 0x7fffffff, 0x80000000, 0xffffffff, HI | 0x12345678,
		ONES, MIN64, 0x1ffffffffULL, 0xfedcba9876543210ULL,
	};
	unsigned i, j, k;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		for (j = 0; j < sizeof(vals) / sizeof(vals[0]); j++)
			for (k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
				uint64_t r = loom_alu(ops[i], I32, vals[j],
						      vals[k], vals[k] ^ 1);
				uint64_t lo = r & 0xffffffffULL;

				CHECK_EQ((lo ^ 0x80000000ULL) - 0x80000000ULL, r);
			}
	CHECK_ALU(0xffffffff80000000ULL, ADD, I32, 0x7fffffff, 1);
	CHECK_ALU(0x7fffffff, ADD, I32, 0x80000000ULL, NEG(1));
}

TEST(i64_and_i32_agree_on_small_values)
{
	static const unsigned ops[] = {
		LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_DIVS,
		LOOM_OP_REMS, LOOM_OP_AND, LOOM_OP_OR, LOOM_OP_XOR,
		LOOM_OP_EQ, LOOM_OP_NE, LOOM_OP_LTS, LOOM_OP_LES,
		LOOM_OP_GTS, LOOM_OP_GES,
	};
	static const int64_t vals[] = { -100, -7, -1, 0, 1, 2, 7, 1000 };
	unsigned i, j, k;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		for (j = 0; j < 8; j++)
			for (k = 0; k < 8; k++) {
				uint64_t a = (uint64_t)vals[j], b = (uint64_t)vals[k];

				CHECK_EQ(loom_alu(ops[i], I64, a, b, 0),
					 loom_alu(ops[i], I32, a, b, 0));
			}
}

/* The integer operations of two inputs, A op B. */
static const unsigned binary_ops[] = {
	LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_DIVS, LOOM_OP_DIVU,
	LOOM_OP_REMS, LOOM_OP_REMU, LOOM_OP_AND, LOOM_OP_OR, LOOM_OP_XOR,
	LOOM_OP_SHL, LOOM_OP_SHRL, LOOM_OP_SHRA, LOOM_OP_EQ, LOOM_OP_NE,
	LOOM_OP_LTS, LOOM_OP_LTU, LOOM_OP_LES, LOOM_OP_LEU, LOOM_OP_GTS,
	LOOM_OP_GTU, LOOM_OP_GES, LOOM_OP_GEU,
};

TEST(op_inputs)
{
	CHECK_EQ(0, loom_op_inputs(LOOM_OP_NOP));
	CHECK_EQ(1, loom_op_inputs(LOOM_OP_CONST));
	CHECK_EQ(1, loom_op_inputs(LOOM_OP_MOV));
	for (unsigned i = 0; i < sizeof(binary_ops) / sizeof(binary_ops[0]); i++)
		CHECK_EQ(2, loom_op_inputs(binary_ops[i]));
	CHECK_EQ(3, loom_op_inputs(LOOM_OP_SELECT));
	CHECK_EQ(1, loom_op_inputs(LOOM_OP_LOAD));
	CHECK_EQ(2, loom_op_inputs(LOOM_OP_STORE));
	CHECK_EQ(3, loom_op_inputs(LOOM_OP_STREAM));
	CHECK_EQ(2, loom_op_inputs(LOOM_OP_INVARIANT));
	CHECK_EQ(2, loom_op_inputs(LOOM_OP_JOIN));
	CHECK_EQ(1, loom_op_inputs(LOOM_OP_SPAWN));
	CHECK_EQ(3, loom_op_inputs(LOOM_OP_REDUCE));
	CHECK_EQ(1, loom_op_inputs(LOOM_OP_SINK));
	CHECK_EQ(2, loom_op_inputs(LOOM_OP_ATOMIC));
	CHECK_EQ(0, loom_op_inputs(LOOM_OP_COUNT));
}

/*
 * loom_ops.h's table against the arithmetic: an operation's mirror
 * computes b op a (checked on values where order matters, in both
 * types), mirrors pair up, what REDUCE folds with is commutative, and
 * what a host program computes is loom_alu()'s (or MOV).
 */
TEST(op_table)
{
	static const uint64_t v[] = {
		0, 1, 2, 7, NEG(1), NEG(7), MIN64, MAX64, MIN32, MAX32,
		0x3f800000, 0xbf800000, 0x7fc00000, 0x80000000,	/* f32 1, -1, NaN, -0 */
	};
	unsigned n = sizeof(v) / sizeof(v[0]);

	for (unsigned op = 0; op < LOOM_OP_COUNT; op++) {
		const struct loom_op_info *o = loom_op_info(op);

		CHECK(strcmp(o->name, "?") != 0);
		if (o->reduce)
			CHECK(loom_op_commutative(op));
		if (o->host)
			CHECK(loom_op_alu(op) || op == LOOM_OP_MOV);
		if (o->mirror == LOOM_OP_NOP)
			continue;
		CHECK_EQ(2, o->inputs);
		CHECK_EQ(op, loom_op_info(o->mirror)->mirror);
		for (unsigned t = 0; t < 2; t++)
			for (unsigned i = 0; i < n; i++)
				for (unsigned j = 0; j < n; j++)
					CHECK_EQ(loom_alu(op, t ? I32 : I64, v[i], v[j], 0),
						 loom_alu(o->mirror, t ? I32 : I64, v[j], v[i], 0));
	}
	CHECK(strcmp(loom_op_name(LOOM_OP_SHRA), "SHRA") == 0);
	CHECK(strcmp(loom_op_name(LOOM_OP_COUNT), "?") == 0);
	CHECK(!loom_op_commutative(LOOM_OP_SUB));
	CHECK(loom_op_info(LOOM_OP_FMIN)->reduce);
	CHECK(!loom_op_info(LOOM_OP_SUB)->reduce);
}

/*
 * loom_atomic_apply(): what each kind stores, in both widths; the f32
 * kinds only in I32 (loom_atomic_kind_ok()), with MLIR's names.
 */
TEST(atomic_apply)
{
	CHECK_EQ(12, loom_atomic_apply(LOOM_ATOMIC_ADDI, I64, 5, 7));
	CHECK_EQ(MIN32, loom_atomic_apply(LOOM_ATOMIC_ADDI, I32, MAX32, 1));
	CHECK_EQ(NEG(35), loom_atomic_apply(LOOM_ATOMIC_MULI, I64, 5, NEG(7)));
	CHECK_EQ(7, loom_atomic_apply(LOOM_ATOMIC_MAXS, I64, NEG(1), 7));
	CHECK_EQ(NEG(1), loom_atomic_apply(LOOM_ATOMIC_MAXU, I64, NEG(1), 7));
	CHECK_EQ(NEG(1), loom_atomic_apply(LOOM_ATOMIC_MINS, I32, NEG(1), 7));
	CHECK_EQ(7, loom_atomic_apply(LOOM_ATOMIC_MINU, I32, NEG(1), 7));
	CHECK_EQ(MIN32, loom_atomic_apply(LOOM_ATOMIC_MINS, I32, MIN32, MAX32));
	CHECK_EQ(MIN64, loom_atomic_apply(LOOM_ATOMIC_MINS, I64, MIN64, MAX64));
	CHECK_EQ(0x0f, loom_atomic_apply(LOOM_ATOMIC_ANDI, I64, 0xff, 0x0f));
	CHECK_EQ(0xff, loom_atomic_apply(LOOM_ATOMIC_ORI, I64, 0xf0, 0x0f));
	CHECK_EQ(0xf0, loom_atomic_apply(LOOM_ATOMIC_XORI, I64, 0xff, 0x0f));
	CHECK_EQ(9, loom_atomic_apply(LOOM_ATOMIC_ASSIGN, I64, 5, 9));
	CHECK_EQ(MIN32, loom_atomic_apply(LOOM_ATOMIC_ASSIGN, I32, 5, 0x80000000));
	/* 1 + 1 = 2, 2 * -1 = -2, max/min of 1 and NaN is NaN */
	CHECK_EQ(0x40000000, loom_atomic_apply(LOOM_ATOMIC_ADDF, I32, 0x3f800000,
					       0x3f800000));
	CHECK_EQ(0xffffffffc0000000ULL,	/* -2, a sign-extended token */
		 loom_atomic_apply(LOOM_ATOMIC_MULF, I32, 0x40000000, 0xbf800000));
	CHECK_EQ(0x7fc00000, loom_atomic_apply(LOOM_ATOMIC_MAXIMUMF, I32,
					       0x3f800000, 0x7fc00000));
	CHECK_EQ(0x7fc00000, loom_atomic_apply(LOOM_ATOMIC_MINIMUMF, I32,
					       0x7fc00000, 0x3f800000));
	for (unsigned k = 0; k < LOOM_ATOMIC_COUNT; k++) {
		CHECK(loom_atomic_info(k)->name != NULL);
		CHECK(loom_atomic_kind_ok(k, I32));
		CHECK_EQ(!loom_atomic_info(k)->f32, loom_atomic_kind_ok(k, I64));
	}
	CHECK(!loom_atomic_kind_ok(LOOM_ATOMIC_COUNT, I64));
	CHECK(loom_atomic_info(LOOM_ATOMIC_COUNT)->name == NULL);
	CHECK(strcmp(loom_atomic_info(LOOM_ATOMIC_MAXIMUMF)->name, "maximumf") == 0);
}

int main(void)
{
	RUN(add_sub_mul_i64);
	RUN(add_sub_mul_i32);
	RUN(div_rem_i64);
	RUN(div_rem_i32);
	RUN(logic);
	RUN(shifts_i64);
	RUN(shifts_i32);
	RUN(compares_i64);
	RUN(compares_i32);
	RUN(select);
	RUN(i32_sign_extension);
	RUN(i64_and_i32_agree_on_small_values);
	RUN(op_inputs);
	RUN(op_table);
	RUN(atomic_apply);
	return checks_done();
}
