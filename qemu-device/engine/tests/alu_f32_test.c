// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * alu_f32_test: the f32 PE operations against C on the host.
 *
 * Every binary operation is run over every pair of a set of edge values
 * (±0, ±inf, NaNs of either sign and both kinds, denormals, FLT_MIN,
 * FLT_MAX, rounding ties) and compared with the host's float arithmetic
 * (round-to-nearest-even, no flush to zero), with the uapi's rules for
 * what C leaves open: NaN results are 0x7fc00000, maximum/minimum put -0
 * below +0 and propagate NaN, conversions saturate and take NaN to 0.
 * fma is compared with libm's fmaf() on the edges and on random triples,
 * and pinned on a case where rounding through a double would be wrong.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "engine.h"

#define I64	LOOM_TYPE_I64
#define I32	LOOM_TYPE_I32
#define CNAN	LOOM_F32_CANONICAL_NAN

static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float flt(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* The token an f32 result travels as: its bits sign-extended. */
static uint64_t tok(uint32_t u)
{
	return (uint64_t)(int64_t)(int32_t)u;
}

/* What C computes, as the device must deliver it. */
static uint64_t want(float f)
{
	return tok(isnan(f) ? CNAN : bits(f));
}

static uint64_t alu(unsigned op, uint32_t a, uint32_t b)
{
	/* junk in the high half is ignored: only the low 32 bits are f32 */
	return loom_alu(op, I32, 0xdeadbeef00000000ULL | a, tok(b), 0);
}

static const uint32_t edges[] = {
	0x00000000, 0x80000000,			/* ±0 */
	0x7f800000, 0xff800000,			/* ±inf */
	0x7fc00000, 0xffc00000, 0x7fa00001,	/* quiet, negative, signalling NaN */
	0x7fffffff,				/* NaN with a payload */
	0x00000001, 0x80000001, 0x007fffff,	/* denormals */
	0x00800000, 0x80800000,			/* ±FLT_MIN */
	0x7f7fffff, 0xff7fffff,			/* ±FLT_MAX */
	0x3f800000, 0xbf800000,			/* ±1 */
	0x3f800001, 0x33800000, 0x34000000,	/* 1 + ulp, 2^-24, 2^-23 */
	0x4b800000, 0x4b800001,			/* 2^24, 2^24 + 2 */
	0x40490fdb, 0xc0490fdb,			/* ±pi */
	0x3eaaaaab, 0x4f000000, 0xcf000000,	/* 1/3, ±2^31 */
	0x5f000000, 0xdf000000, 0x5f800000,	/* ±2^63, 2^64 */
	0x3f000000, 0xbf000000, 0x3fc00000,	/* ±0.5, 1.5 */
	0x40200000, 0xc0200000,			/* ±2.5 */
};
#define NEDGES	(sizeof(edges) / sizeof(edges[0]))

static float c_max(float a, float b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

static float c_min(float a, float b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return signbit(a) ? a : b;
	return a < b ? a : b;
}

TEST(arithmetic_against_c)
{
	for (unsigned i = 0; i < NEDGES; i++)
		for (unsigned j = 0; j < NEDGES; j++) {
			uint32_t a = edges[i], b = edges[j];
			float x = flt(a), y = flt(b);

			CHECK_EQ(want(x + y), alu(LOOM_OP_FADD, a, b));
			CHECK_EQ(want(x - y), alu(LOOM_OP_FSUB, a, b));
			CHECK_EQ(want(x * y), alu(LOOM_OP_FMUL, a, b));
			CHECK_EQ(want(x / y), alu(LOOM_OP_FDIV, a, b));
			CHECK_EQ(want(c_max(x, y)), alu(LOOM_OP_FMAX, a, b));
			CHECK_EQ(want(c_min(x, y)), alu(LOOM_OP_FMIN, a, b));
		}
}

TEST(arithmetic_pinned)
{
	/* ties to even: 1 + 2^-24 is halfway, 1 + 3 * 2^-24 too */
	CHECK_EQ(tok(0x3f800000), alu(LOOM_OP_FADD, 0x3f800000, 0x33800000));
	CHECK_EQ(tok(0x3f800002), alu(LOOM_OP_FADD, 0x3f800001, 0x33800000));
	/* denormal results are kept: FLT_MIN / 2 and the smallest - itself */
	CHECK_EQ(tok(0x00400000), alu(LOOM_OP_FMUL, 0x00800000, 0x3f000000));
	CHECK_EQ(tok(0x00000001), alu(LOOM_OP_FSUB, 0x00000002, 0x00000001));
	CHECK_EQ(tok(0x00000000), alu(LOOM_OP_FSUB, 0x00000001, 0x00000001));
	/* overflow to inf, division by zero */
	CHECK_EQ(tok(0x7f800000), alu(LOOM_OP_FADD, 0x7f7fffff, 0x7f7fffff));
	CHECK_EQ(tok(0xff800000), alu(LOOM_OP_FDIV, 0xbf800000, 0x00000000));
	CHECK_EQ(tok(0x7f800000), alu(LOOM_OP_FDIV, 0xbf800000, 0x80000000));
	/* invalid operations and NaN operands give the canonical NaN */
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FSUB, 0x7f800000, 0x7f800000));
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FDIV, 0x00000000, 0x80000000));
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FMUL, 0x7f800000, 0x00000000));
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FADD, 0xffc00001, 0x3f800000));
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FADD, 0x3f800000, 0x7fa00001));
	/* -0 + -0 is -0, -0 + +0 is +0 under round to nearest */
	CHECK_EQ(tok(0x80000000), alu(LOOM_OP_FADD, 0x80000000, 0x80000000));
	CHECK_EQ(tok(0x00000000), alu(LOOM_OP_FADD, 0x80000000, 0x00000000));
	/* maximum / minimum: -0 < +0, NaN wins over anything */
	CHECK_EQ(tok(0x00000000), alu(LOOM_OP_FMAX, 0x80000000, 0x00000000));
	CHECK_EQ(tok(0x00000000), alu(LOOM_OP_FMAX, 0x00000000, 0x80000000));
	CHECK_EQ(tok(0x80000000), alu(LOOM_OP_FMIN, 0x00000000, 0x80000000));
	CHECK_EQ(tok(0x80000000), alu(LOOM_OP_FMIN, 0x80000000, 0x00000000));
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FMAX, 0x7f800000, 0xffc00000));
	CHECK_EQ(tok(CNAN), alu(LOOM_OP_FMIN, 0xff800000, 0x7fa00001));
	CHECK_EQ(tok(0xff800000), alu(LOOM_OP_FMIN, 0xff800000, 0x7f7fffff));
	/* i32 tokens of negative floats are sign-extended */
	CHECK_EQ(0xffffffffbf800000ULL, alu(LOOM_OP_FSUB, 0x00000000, 0x3f800000));
}

TEST(negate)
{
	/* a sign-bit flip for every value, NaN included (not canonicalised) */
	for (unsigned i = 0; i < NEDGES; i++)
		CHECK_EQ(tok(edges[i] ^ 0x80000000U),
			 loom_alu(LOOM_OP_FNEG, I32, edges[i], 0, 0));
}

/* What each compare opcode computes, written out in C. */
static bool c_cmp(unsigned op, float a, float b)
{
	bool u = isunordered(a, b);

	switch (op) {
	case LOOM_OP_FFALSE:	return false;
	case LOOM_OP_FOEQ:	return !u && a == b;
	case LOOM_OP_FOGT:	return !u && a > b;
	case LOOM_OP_FOGE:	return !u && a >= b;
	case LOOM_OP_FOLT:	return !u && a < b;
	case LOOM_OP_FOLE:	return !u && a <= b;
	case LOOM_OP_FONE:	return !u && a != b;
	case LOOM_OP_FORD:	return !u;
	case LOOM_OP_FUEQ:	return u || a == b;
	case LOOM_OP_FUGT:	return u || a > b;
	case LOOM_OP_FUGE:	return u || a >= b;
	case LOOM_OP_FULT:	return u || a < b;
	case LOOM_OP_FULE:	return u || a <= b;
	case LOOM_OP_FUNE:	return u || a != b;
	case LOOM_OP_FUNO:	return u;
	default:		return true;	/* FTRUE */
	}
}

/* MLIR's arith.cmpf predicates. */
static const unsigned compares[] = {
	LOOM_OP_FFALSE, LOOM_OP_FOEQ, LOOM_OP_FOGT, LOOM_OP_FOGE, LOOM_OP_FOLT,
	LOOM_OP_FOLE, LOOM_OP_FONE, LOOM_OP_FORD, LOOM_OP_FUEQ, LOOM_OP_FUGT,
	LOOM_OP_FUGE, LOOM_OP_FULT, LOOM_OP_FULE, LOOM_OP_FUNE, LOOM_OP_FUNO,
	LOOM_OP_FTRUE,
};
#define NCOMPARES	(sizeof(compares) / sizeof(compares[0]))

TEST(compares_against_c)
{
	for (unsigned k = 0; k < NCOMPARES; k++)
		for (unsigned i = 0; i < NEDGES; i++)
			for (unsigned j = 0; j < NEDGES; j++)
				CHECK_EQ((uint64_t)c_cmp(compares[k], flt(edges[i]), flt(edges[j])),
					 alu(compares[k], edges[i], edges[j]));
	/* -0 equals +0; NaN is unordered with itself */
	CHECK_EQ(1, alu(LOOM_OP_FOEQ, 0x80000000, 0x00000000));
	CHECK_EQ(0, alu(LOOM_OP_FONE, 0x80000000, 0x00000000));
	CHECK_EQ(0, alu(LOOM_OP_FOEQ, 0x7fc00000, 0x7fc00000));
	CHECK_EQ(1, alu(LOOM_OP_FUNE, 0x7fc00000, 0x7fc00000));
	CHECK_EQ(1, alu(LOOM_OP_FUEQ, 0x7fc00000, 0x3f800000));
	CHECK_EQ(0, alu(LOOM_OP_FOLT, 0x7fc00000, 0x3f800000));
	CHECK_EQ(1, alu(LOOM_OP_FULT, 0x7fc00000, 0x3f800000));
	CHECK_EQ(1, alu(LOOM_OP_FUNO, 0x3f800000, 0xffc00000));
	CHECK_EQ(0, alu(LOOM_OP_FORD, 0x3f800000, 0xffc00000));
	CHECK_EQ(1, alu(LOOM_OP_FOLT, 0xff800000, 0xff7fffff));
	CHECK_EQ(1, alu(LOOM_OP_FOGT, 0x00000001, 0x80000000));
}

static uint64_t fma_alu(uint32_t a, uint32_t b, uint32_t c)
{
	return loom_alu(LOOM_OP_FMA, I32, a, b, c);
}

TEST(fma_against_libm)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (unsigned i = 0; i < NEDGES; i++)
		for (unsigned j = 0; j < NEDGES; j++)
			for (unsigned k = 0; k < NEDGES; k += 3)
				CHECK_EQ(want(fmaf(flt(edges[i]), flt(edges[j]), flt(edges[k]))),
					 fma_alu(edges[i], edges[j], edges[k]));
	/*
	 * Random triples with exponents near each other, where cancellation
	 * and midpoints are common; a third of the c values are -a*b rounded.
	 */
	for (unsigned n = 0; n < 200000; n++) {
		uint32_t a, b, c;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = (uint32_t)x & 0x807fffff, a |= (uint32_t)(120 + (x >> 32) % 16) << 23;
		b = (uint32_t)(x >> 23) & 0x807fffff, b |= (uint32_t)(120 + (x >> 40) % 16) << 23;
		c = (uint32_t)(x >> 9) & 0x807fffff, c |= (uint32_t)(112 + (x >> 48) % 32) << 23;
		if (n % 3 == 0)
			c = bits(-(flt(a) * flt(b))) ^ (uint32_t)((x >> 60) & 3);
		if (n % 7 == 0)	/* denormal range */
			c = (c & 0x807fffff), a = (a & 0x807fffff) | (1U << 23) * 40;
		CHECK_EQ(want(fmaf(flt(a), flt(b), flt(c))), fma_alu(a, b, c));
	}
}

TEST(fma_rounds_once)
{
	/*
	 * 0x1.000002p-24 * 0x1.fffffcp-1 = 2^-24 - 2^-70, plus 1 + 2^-23:
	 * just below the midpoint 1 + 2^-23 + 2^-24, so 1 + 2^-23.  Rounding
	 * the sum to a double first lands on the midpoint, which ties to the
	 * even 1 + 2^-22.
	 */
	CHECK_EQ(tok(0x3f800001), fma_alu(0x33800001, 0x3f7ffffe, 0x3f800001));
	CHECK_EQ(tok(0xbf800001), fma_alu(0xb3800001, 0x3f7ffffe, 0xbf800001));
	/* exact products survive: a * a - a * a rounded is the error term */
	CHECK_EQ(want(fmaf(flt(0x3f800001), flt(0x3f800001), -flt(0x3f800002))),
		 fma_alu(0x3f800001, 0x3f800001, 0xbf800002));
	CHECK_EQ(tok(0x28800000), fma_alu(0x3f800001, 0x3f800001, 0xbf800002));	/* 2^-46 */
	CHECK_EQ(tok(CNAN), fma_alu(0x7f800000, 0x00000000, 0x3f800000));
	CHECK_EQ(tok(CNAN), fma_alu(0x7f800000, 0x3f800000, 0xff800000));
	CHECK_EQ(tok(0x7f7fffff), fma_alu(0x7f7fffff, 0x40000000, 0xff7fffff));
	CHECK_EQ(tok(0x7f800000), fma_alu(0x7f7fffff, 0x40000000, 0x00000000));
}

static uint64_t conv(unsigned op, unsigned type, uint64_t a)
{
	return loom_alu(op, type, a, 0, 0);
}

TEST(int_to_f32)
{
	static const int64_t vals[] = {
		0, 1, -1, 3, 16777216, 16777217, 16777219, -16777217,
		2147483647, -2147483647 - 1, 0x7fffffffffffffffLL,
		-0x7fffffffffffffffLL - 1, 0x123456789abcdefLL,
		-0x123456789abcdefLL, 0x20000010000001LL,
	};

	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		int64_t v = vals[i];
		int32_t v32 = (int32_t)(uint32_t)v;

		CHECK_EQ(want((float)v), conv(LOOM_OP_SITOF, I64, (uint64_t)v));
		CHECK_EQ(want((float)(uint64_t)v), conv(LOOM_OP_UITOF, I64, (uint64_t)v));
		CHECK_EQ(want((float)v32), conv(LOOM_OP_SITOF, I32, (uint64_t)v));
		CHECK_EQ(want((float)(uint32_t)v32), conv(LOOM_OP_UITOF, I32, (uint64_t)v));
	}
	/* ties to even: 2^24 + 1 -> 2^24, 2^24 + 3 -> 2^24 + 4 */
	CHECK_EQ(tok(0x4b800000), conv(LOOM_OP_SITOF, I32, 16777217));
	CHECK_EQ(tok(0x4b800002), conv(LOOM_OP_SITOF, I32, 16777219));
	CHECK_EQ(tok(0xcb800000), conv(LOOM_OP_SITOF, I64, (uint64_t)-16777217));
	CHECK_EQ(tok(0x5f800000), conv(LOOM_OP_UITOF, I64, ~0ULL));	/* 2^64 */
	CHECK_EQ(tok(0x4f800000), conv(LOOM_OP_UITOF, I32, ~0ULL));	/* 2^32 */
	CHECK_EQ(tok(0xbf800000), conv(LOOM_OP_SITOF, I32, 0xffffffffULL));
}

TEST(f32_to_int)
{
	/* in range: toward zero */
	CHECK_EQ(2, conv(LOOM_OP_FTOSI, I32, 0x40200000));		/* 2.5 */
	CHECK_EQ((uint64_t)-2, conv(LOOM_OP_FTOSI, I32, 0xc0200000));	/* -2.5 */
	CHECK_EQ((uint64_t)-2, conv(LOOM_OP_FTOSI, I64, 0xc0200000));
	CHECK_EQ(0, conv(LOOM_OP_FTOSI, I64, 0xbf000000));		/* -0.5 */
	CHECK_EQ(0, conv(LOOM_OP_FTOUI, I64, 0xbf000000));
	CHECK_EQ(0, conv(LOOM_OP_FTOSI, I32, 0x80000000));		/* -0 */
	CHECK_EQ(0, conv(LOOM_OP_FTOSI, I32, 0x00000001));		/* denormal */
	CHECK_EQ(16777216, conv(LOOM_OP_FTOSI, I32, 0x4b800000));
	/* the bounds themselves */
	CHECK_EQ(0xffffffff80000000ULL, conv(LOOM_OP_FTOSI, I32, 0xcf000000));
	CHECK_EQ(0x8000000000000000ULL, conv(LOOM_OP_FTOSI, I64, 0xdf000000));
	CHECK_EQ(0x7fffff8000000000ULL, conv(LOOM_OP_FTOSI, I64, 0x5effffff));
	CHECK_EQ(0xffffff00ULL | 0xffffffff00000000ULL,
		 conv(LOOM_OP_FTOUI, I32, 0x4f7fffff));	/* 2^32 - 256, as an i32 */
	/* saturation */
	CHECK_EQ(0x7fffffffULL, conv(LOOM_OP_FTOSI, I32, 0x4f000000));	/* 2^31 */
	CHECK_EQ(0xffffffff80000000ULL, conv(LOOM_OP_FTOSI, I32, 0xcf000001));
	CHECK_EQ(0x7fffffffffffffffULL, conv(LOOM_OP_FTOSI, I64, 0x7f800000));
	CHECK_EQ(0x8000000000000000ULL, conv(LOOM_OP_FTOSI, I64, 0xff800000));
	CHECK_EQ(~0ULL, conv(LOOM_OP_FTOUI, I32, 0x4f800000));	/* 2^32: all ones */
	CHECK_EQ(~0ULL, conv(LOOM_OP_FTOUI, I64, 0x7f7fffff));
	CHECK_EQ(0, conv(LOOM_OP_FTOUI, I64, 0xff800000));
	CHECK_EQ(0, conv(LOOM_OP_FTOUI, I32, 0xcf000000));
	/* NaN is 0 */
	CHECK_EQ(0, conv(LOOM_OP_FTOSI, I32, CNAN));
	CHECK_EQ(0, conv(LOOM_OP_FTOSI, I64, 0xffc00000));
	CHECK_EQ(0, conv(LOOM_OP_FTOUI, I64, 0x7fa00001));
	/* every edge in range agrees with C's own conversion */
	for (unsigned i = 0; i < NEDGES; i++) {
		float f = flt(edges[i]);

		if (f > -0x1p31f && f < 0x1p31f)
			CHECK_EQ((uint64_t)(int64_t)(int32_t)f,
				 conv(LOOM_OP_FTOSI, I32, edges[i]));
		if (f > -0x1p63f && f < 0x1p63f)
			CHECK_EQ((uint64_t)(int64_t)f, conv(LOOM_OP_FTOSI, I64, edges[i]));
		if (f > -1.0f && f < 0x1p64f)
			CHECK_EQ((uint64_t)f, conv(LOOM_OP_FTOUI, I64, edges[i]));
	}
}

static const unsigned binary_f32[] = {
	LOOM_OP_FADD, LOOM_OP_FSUB, LOOM_OP_FMUL, LOOM_OP_FDIV, LOOM_OP_FMAX,
	LOOM_OP_FMIN,
};
static const unsigned conversions[] = {
	LOOM_OP_SITOF, LOOM_OP_UITOF, LOOM_OP_FTOSI, LOOM_OP_FTOUI,
};
#define COUNT(a)	(sizeof(a) / sizeof((a)[0]))

TEST(op_inputs_and_types)
{
	unsigned f32 = 0;

	for (unsigned k = 0; k < COUNT(binary_f32); k++) {
		CHECK_EQ(2, loom_op_inputs(binary_f32[k]));
		CHECK(loom_op_f32_only(binary_f32[k]));
	}
	for (unsigned k = 0; k < NCOMPARES; k++) {
		CHECK_EQ(2, loom_op_inputs(compares[k]));
		CHECK(loom_op_f32_only(compares[k]));
	}
	CHECK_EQ(3, loom_op_inputs(LOOM_OP_FMA));
	CHECK_EQ(1, loom_op_inputs(LOOM_OP_FNEG));
	CHECK(loom_op_f32_only(LOOM_OP_FMA));
	CHECK(loom_op_f32_only(LOOM_OP_FNEG));
	for (unsigned k = 0; k < COUNT(conversions); k++) {
		CHECK_EQ(1, loom_op_inputs(conversions[k]));
		CHECK(!loom_op_f32_only(conversions[k]));
	}
	CHECK(!loom_op_f32_only(LOOM_OP_ADD));
	/* every f32 operation is one of those above: none goes untested */
	for (unsigned op = 0; op < LOOM_OP_COUNT; op++)
		f32 += loom_op_f32_only(op) || loom_op_class(op) == LOOM_OPC_CONV;
	CHECK_EQ(COUNT(binary_f32) + NCOMPARES + 2 + COUNT(conversions), f32);
}

int main(void)
{
	RUN(arithmetic_against_c);
	RUN(arithmetic_pinned);
	RUN(negate);
	RUN(compares_against_c);
	RUN(fma_against_libm);
	RUN(fma_rounds_once);
	RUN(int_to_f32);
	RUN(f32_to_int);
	RUN(op_inputs_and_types);
	return checks_done();
}
