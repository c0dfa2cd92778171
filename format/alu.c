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
 */
#include "loom_alu.h"

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
	if (op >= LOOM_OP_EQ && op <= LOOM_OP_GEU)
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
	if (op >= LOOM_OP_EQ && op <= LOOM_OP_GEU)
		return compare(op, za, zb, lts64(sa, sb), lts64(sb, sa),
			       za < zb, za > zb);
	return sext32(alu64(op, sa, sb, 0));
}

uint64_t loom_alu(unsigned op, unsigned type, uint64_t a, uint64_t b,
		  uint64_t c)
{
	if (type == LOOM_TYPE_I32)
		return alu32(op, a, b, c);
	return alu64(op, a, b, c);
}
