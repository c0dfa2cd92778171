// SPDX-License-Identifier: MIT
/*
 * alu.c: the arithmetic of the PE operations (enum loom_op), one
 * implementation for the device's engine (qemu-device/engine) and for host
 * programs (interp.c): a host program computes exactly what a PE would.
 *
 * Everything is computed on unsigned integers so that no operand value can
 * reach C undefined behaviour (signed overflow, oversized shifts, INT_MIN /
 * -1): the device never traps, and neither may its model.  Signed meaning
 * is recovered with explicit two's-complement tricks instead of casts.
 *
 * f32 operations are C float operations, which are IEEE-754 binary32 with
 * round-to-nearest-even (C's default mode, never changed here) and no
 * excess precision (checked below); each operation is one C operation, so
 * nothing can be contracted into a fused one behind our back.  fma is
 * computed exactly in double arithmetic (fma_f32()), so that format/
 * needs no libm.  What C leaves open is decided here: NaN results are
 * canonical, conversions to integers saturate, maximum/minimum order -0
 * below +0.  Only math.h's classification macros are used (no libm).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "loom_alu.h"
#include "loom_ops.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "f32 operations need float arithmetic without excess precision"
#endif

#define SIGN64		(1ULL << 63)
#define SIGN32		(1ULL << 31)

/* Sign-extends the low 32 bits of @v to 64 bits. */
static uint64_t sext32(uint64_t v)
{
	return ((v & 0xffffffffULL) ^ SIGN32) - SIGN32;
}

static uint64_t zext32(uint64_t v)
{
	return v & 0xffffffffULL;
}

/* Arithmetic right shift by @s (0..63) without relying on signed >>. */
static uint64_t sra64(uint64_t v, unsigned s)
{
	uint64_t sign = 0 - (v >> 63);	/* all ones when negative */

	return ((v ^ sign) >> s) ^ sign;
}

/* Signed a < b: flipping the sign bits turns it into an unsigned compare. */
static bool lts64(uint64_t a, uint64_t b)
{
	return (a ^ SIGN64) < (b ^ SIGN64);
}

static uint64_t neg_if(uint64_t v, bool neg)
{
	return neg ? 0 - v : v;
}

/*
 * Signed division on magnitudes.  MIN / -1 needs no special case: the
 * magnitude 2^63 negated in uint64 is MIN again, and the remainder is 0.
 */
static uint64_t divs64(uint64_t a, uint64_t b, bool rem)
{
	bool na = a >> 63, nb = b >> 63;
	uint64_t ma = neg_if(a, na), mb = neg_if(b, nb);

	if (b == 0)
		return rem ? a : ~0ULL;
	if (rem)
		return neg_if(ma % mb, na);
	return neg_if(ma / mb, na != nb);
}

static uint64_t divu64(uint64_t a, uint64_t b, bool rem)
{
	if (b == 0)
		return rem ? a : ~0ULL;
	return rem ? a % b : a / b;
}

/* Compares, given the signed and unsigned orderings of the operands. */
static uint64_t compare(unsigned op, uint64_t a, uint64_t b, bool slt,
			bool sgt, bool ult, bool ugt)
{
	switch (op) {
	case LOOM_OP_EQ:	return a == b;
	case LOOM_OP_NE:	return a != b;
	case LOOM_OP_LTS:	return slt;
	case LOOM_OP_LTU:	return ult;
	case LOOM_OP_LES:	return !sgt;
	case LOOM_OP_LEU:	return !ugt;
	case LOOM_OP_GTS:	return sgt;
	case LOOM_OP_GTU:	return ugt;
	case LOOM_OP_GES:	return !slt;
	case LOOM_OP_GEU:	return !ult;
	}
	return 0;
}

static uint64_t alu64(unsigned op, uint64_t a, uint64_t b, uint64_t c)
{
	switch (op) {
	case LOOM_OP_ADD:	return a + b;
	case LOOM_OP_SUB:	return a - b;
	case LOOM_OP_MUL:	return a * b;
	case LOOM_OP_DIVS:	return divs64(a, b, false);
	case LOOM_OP_DIVU:	return divu64(a, b, false);
	case LOOM_OP_REMS:	return divs64(a, b, true);
	case LOOM_OP_REMU:	return divu64(a, b, true);
	case LOOM_OP_AND:	return a & b;
	case LOOM_OP_OR:	return a | b;
	case LOOM_OP_XOR:	return a ^ b;
	case LOOM_OP_SHL:	return a << (b & 63);
	case LOOM_OP_SHRL:	return a >> (b & 63);
	case LOOM_OP_SHRA:	return sra64(a, b & 63);
	case LOOM_OP_SELECT:	return a ? b : c;
	}
	if (loom_op_class(op) == LOOM_OPC_ICMP)
		return compare(op, a, b, lts64(a, b), lts64(b, a), a < b, a > b);
	return 0;
}

/*
 * 32-bit operations reuse the 64-bit ones on suitably extended operands:
 * the low 32 bits of a sum, product or quotient of extended values are the
 * 32-bit result, including x / 0 (all ones), x % 0 and MIN32 / -1.
 */
static uint64_t alu32(unsigned op, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t sa = sext32(a), sb = sext32(b);
	uint64_t za = zext32(a), zb = zext32(b);

	switch (op) {
	case LOOM_OP_DIVU:
	case LOOM_OP_REMU:
		return sext32(alu64(op, za, zb, 0));
	case LOOM_OP_SHL:	return sext32(za << (b & 31));
	case LOOM_OP_SHRL:	return sext32(za >> (b & 31));
	case LOOM_OP_SHRA:	return sext32(sra64(sa, b & 31));
	case LOOM_OP_SELECT:	return za ? sb : sext32(c);
	}
	if (loom_op_class(op) == LOOM_OPC_ICMP)
		return compare(op, za, zb, lts64(sa, sb), lts64(sb, sa),
			       za < zb, za > zb);
	return sext32(alu64(op, sa, sb, 0));
}

/* ---------------------------------------------------------- f32 --- */

static float f32_of(uint64_t v)
{
	uint32_t u = (uint32_t)v;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* An f32 token: the bits sign-extended, any NaN made the canonical one. */
static uint64_t f32_token(float f)
{
	uint32_t u = LOOM_F32_CANONICAL_NAN;

	if (!isnan(f))
		memcpy(&u, &f, sizeof(u));
	return sext32(u);
}

/* The float @dir (+1 or -1) steps away from zero from @f (same sign). */
static float f32_step(float f, int dir)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	u += (uint32_t)dir;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * a * b + c rounded once.  The product of two floats is exact in a
 * double, and TwoSum gives their sum exactly as s + e.  Rounding s to a
 * float is right unless s lies exactly halfway between two floats while
 * e is not zero: then the true value is past the midpoint, on e's side.
 */
static float fma_f32(float a, float b, float c)
{
	double p = (double)a * b, s = p + c, t, e, hi_val;
	float r, lo, hi;
	bool away;

	if (!isfinite(s))
		return (float)s;
	t = s - p;
	e = (p - (s - t)) + (c - t);
	r = (float)s;
	if (e == 0 || (double)r == s)
		return r;
	away = s > 0 ? (double)r > s : (double)r < s;
	lo = away ? f32_step(r, -1) : r;
	hi = away ? r : f32_step(r, 1);
	/* above FLT_MAX, the next "float" is 2^128 */
	hi_val = isinf(hi) ? (s > 0 ? 0x1p128 : -0x1p128) : (double)hi;
	if (s != ((double)lo + hi_val) / 2)
		return r;
	return (e > 0) == (s > 0) ? hi : lo;
}

/* maximumf / minimumf: NaN wins, then -0 < +0, then the usual order. */
static float f32_maximum(float a, float b, bool max)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == b)	/* equal, or +0 and -0: keep the one with the right sign */
		return (signbit(a) != 0) == max ? b : a;
	return (a > b) == max ? a : b;
}

static bool fcompare(unsigned op, float a, float b)
{
	bool uno = isnan(a) || isnan(b);

	switch (op) {
	case LOOM_OP_FOEQ:	return !uno && a == b;
	case LOOM_OP_FOGT:	return !uno && a > b;
	case LOOM_OP_FOGE:	return !uno && a >= b;
	case LOOM_OP_FOLT:	return !uno && a < b;
	case LOOM_OP_FOLE:	return !uno && a <= b;
	case LOOM_OP_FONE:	return !uno && a != b;
	case LOOM_OP_FORD:	return !uno;
	case LOOM_OP_FUEQ:	return uno || a == b;
	case LOOM_OP_FUGT:	return uno || a > b;
	case LOOM_OP_FUGE:	return uno || a >= b;
	case LOOM_OP_FULT:	return uno || a < b;
	case LOOM_OP_FULE:	return uno || a <= b;
	case LOOM_OP_FUNE:	return uno || a != b;
	case LOOM_OP_FUNO:	return uno;
	case LOOM_OP_FTRUE:	return true;
	}
	return false;		/* FFALSE */
}

/*
 * Integer -> f32.  A negative value converts as its negated magnitude:
 * round-to-nearest-even is symmetric, so that is the rounded value, and no
 * cast of an out-of-range unsigned value to a signed type is needed.
 */
static float int_to_f32(uint64_t v, unsigned type, bool is_signed)
{
	bool neg;

	if (type == LOOM_TYPE_I32)
		v = is_signed ? sext32(v) : zext32(v);
	neg = is_signed && (v >> 63);
	return neg ? -(float)(0 - v) : (float)v;
}

/*
 * f32 -> integer, toward zero, saturating (NaN is 0): C leaves an
 * out-of-range conversion undefined, so the range is checked first
 * against powers of two a float holds exactly; inside it, C's conversion
 * truncates toward zero.
 */
static uint64_t f32_to_int(float f, unsigned type, bool is_signed)
{
	bool w32 = type == LOOM_TYPE_I32;
	float lim = is_signed ? (w32 ? 0x1p31f : 0x1p63f) :
				(w32 ? 0x1p32f : 0x1p64f);
	uint64_t r;

	if (isnan(f))
		r = 0;
	else if (f >= lim)	/* the largest value */
		r = is_signed ? (w32 ? 0x7fffffffULL : ~0ULL >> 1) :
				(w32 ? 0xffffffffULL : ~0ULL);
	else if (!is_signed)
		r = f > 0 ? (uint64_t)f : 0;	/* (-1, 0] truncates to 0 */
	else if (f <= -lim)	/* the smallest */
		r = 0 - (uint64_t)lim;
	else if (f < 0)
		r = 0 - (uint64_t)-f;	/* -f < 2^63 */
	else
		r = (uint64_t)f;
	return w32 ? sext32(r) : r;
}

static uint64_t aluf(unsigned op, unsigned type, uint64_t a, uint64_t b,
		     uint64_t c)
{
	float x = f32_of(a), y = f32_of(b);

	switch (op) {
	case LOOM_OP_FADD:	return f32_token(x + y);
	case LOOM_OP_FSUB:	return f32_token(x - y);
	case LOOM_OP_FMUL:	return f32_token(x * y);
	case LOOM_OP_FDIV:	return f32_token(x / y);
	case LOOM_OP_FMAX:	return f32_token(f32_maximum(x, y, true));
	case LOOM_OP_FMIN:	return f32_token(f32_maximum(x, y, false));
	case LOOM_OP_FMA:	return f32_token(fma_f32(x, y, f32_of(c)));
	case LOOM_OP_FNEG:	return sext32(a ^ SIGN32);
	case LOOM_OP_SITOF:	return f32_token(int_to_f32(a, type, true));
	case LOOM_OP_UITOF:	return f32_token(int_to_f32(a, type, false));
	case LOOM_OP_FTOSI:	return f32_to_int(x, type, true);
	case LOOM_OP_FTOUI:	return f32_to_int(x, type, false);
	}
	return fcompare(op, x, y);
}

uint64_t loom_alu(unsigned op, unsigned type, uint64_t a, uint64_t b,
		  uint64_t c)
{
	switch (loom_op_class(op)) {
	case LOOM_OPC_F32:
	case LOOM_OPC_FCMP:
	case LOOM_OPC_CONV:
		return aluf(op, type, a, b, c);
	default:
		break;
	}
	if (type == LOOM_TYPE_I32)
		return alu32(op, a, b, c);
	return alu64(op, a, b, c);
}

/* The larger (@max) or smaller of two i32 or i64 tokens. */
static uint64_t int_extreme(unsigned type, uint64_t a, uint64_t b,
			    bool is_signed, bool max)
{
	unsigned gt = is_signed ? LOOM_OP_GTS : LOOM_OP_GTU;
	bool a_gt_b = loom_alu(gt, type, a, b, 0) != 0;

	return loom_alu(LOOM_OP_SELECT, type, a_gt_b == max, a, b);
}

uint64_t loom_atomic_apply(unsigned kind, unsigned type, uint64_t old,
			   uint64_t b)
{
	switch (kind) {
	case LOOM_ATOMIC_MAXS:	return int_extreme(type, old, b, true, true);
	case LOOM_ATOMIC_MAXU:	return int_extreme(type, old, b, false, true);
	case LOOM_ATOMIC_MINS:	return int_extreme(type, old, b, true, false);
	case LOOM_ATOMIC_MINU:	return int_extreme(type, old, b, false, false);
	case LOOM_ATOMIC_ASSIGN:
		return type == LOOM_TYPE_I32 ? sext32(b) : b;
	}
	return loom_alu(loom_atomic_info(kind)->op, type, old, b, 0);
}
