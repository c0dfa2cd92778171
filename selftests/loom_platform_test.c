// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated machine every VM test runs on must itself be right.  QEMU
 * 7.2's TCG computed the flags of CMPXCHG8B and CMPXCHG16B from a stale
 * condition-code state: the helpers read env->cc_op without the
 * translator writing back the lazily tracked one first, so after a
 * flag-setting instruction in the same translation block they took the
 * flags from whatever CC_SRC held -- any 64-bit value, reserved bits, TF
 * and DF included.  The kernel's SLUB fast path is such a sequence (a
 * xor, then cmpxchg16b %gs:...); an interrupt frame pushed right after it
 * carried the garbage, and its iret loaded TF (a single-step trap in the
 * kernel, WARN at exc_debug_kernel) or DF (memset/memcpy running
 * backwards: memory corruption, one seen as shmem_evict_inode's i_blocks
 * WARN).  tools/build-qemu applies the patches in qemu-device/qemu-7.2/, which
 * fixes it; these tests fail on a QEMU without the fix.
 *
 * Each test ends a translation block with POPFQ (QEMU then stores
 * cc_op = EFLAGS), sets the flags with an ADD whose source operand is the
 * garbage a stale cc_op would return, runs the compare-exchange and reads
 * the flags with PUSHFQ.  The architecture says: ZF from the compare,
 * CF, PF, AF, SF and OF as the ADD left them, nothing else changed.
 */
#include <stdint.h>

#include "kselftest_harness.h"

#define FLAG_CF		0x0001ULL
#define FLAG_PF		0x0004ULL
#define FLAG_AF		0x0010ULL
#define FLAG_ZF		0x0040ULL
#define FLAG_SF		0x0080ULL
#define FLAG_OF		0x0800ULL
#define ARITH_FLAGS	(FLAG_CF | FLAG_PF | FLAG_AF | FLAG_ZF | FLAG_SF | FLAG_OF)
/* What POPFQ starts each sequence from: bit 1 (always 1) and IF. */
#define START_FLAGS	0x202ULL

/*
 * Source operands for the ADD: what a stale cc_op = EFLAGS would hand back
 * as the flags.  None has TF (bit 8) alone set in a way that matters: the
 * flags are only pushed, never loaded, so nothing traps.
 */
static const uint64_t garbage[] = {
	0x0000000005880282ULL, 0x00000000067c63e2ULL, 0x0000000000000400ULL,
	0xffffffffffffffffULL, 0x123456789abcdef0ULL, 0x0000000000400000ULL,
};

/* The red zone is stepped over: the pushes must not clobber the compiler's. */
#define FLAGS_SEQUENCE(insn)						\
	"sub $128, %%rsp\n\t"						\
	"pushq %[start]\n\t"						\
	"popfq\n\t"							\
	"add %[src], %[acc]\n\t"					\
	insn "\n\t"							\
	"pushfq\n\t"							\
	"popq %[flags]\n\t"						\
	"add $128, %%rsp\n\t"

/* The flags an ADD of @src to @acc leaves, read at once. */
static uint64_t add_flags(uint64_t acc, uint64_t src)
{
	uint64_t flags;

	asm volatile(FLAGS_SEQUENCE("")
		     : [flags] "=&r"(flags), [acc] "+&r"(acc)
		     : [src] "r"(src), [start] "i"(START_FLAGS)
		     : "cc", "memory");
	return flags;
}

/*
 * A compare-exchange's operands, locked or not, around the caller's flags,
 * acc and src: rdx:rax (@lo, @hi) compared with @target, rcx:rbx (@two,
 * @one) stored when equal.
 */
#define CMPXCHG_OPERANDS(target, lo, hi, one, two)			\
	: [flags] "=&r"(flags), [acc] "+&r"(acc),			\
	  [mem] "+m"(target), "+a"(lo), "+d"(hi)			\
	: [src] "r"(src), [start] "i"(START_FLAGS), "b"(one), "c"(two)	\
	: "cc", "memory"

static uint64_t cmpxchg16b_flags(uint64_t acc, uint64_t src, bool locked,
				 bool *swapped)
{
	static unsigned __int128 target __attribute__((aligned(16)));
	uint64_t lo = 0, hi = 0, flags;

	target = 0;	/* equal to rdx:rax: the exchange happens */
	if (locked)
		asm volatile(FLAGS_SEQUENCE("lock cmpxchg16b %[mem]")
			     CMPXCHG_OPERANDS(target, lo, hi, 1ULL, 2ULL));
	else
		asm volatile(FLAGS_SEQUENCE("cmpxchg16b %[mem]")
			     CMPXCHG_OPERANDS(target, lo, hi, 1ULL, 2ULL));
	*swapped = target == ((unsigned __int128)2 << 64 | 1);
	return flags;
}

static uint64_t cmpxchg8b_flags(uint64_t acc, uint64_t src, bool locked,
				bool *swapped)
{
	static uint64_t target __attribute__((aligned(8)));
	uint32_t lo = 0, hi = 0;
	uint64_t flags;

	target = 0;
	if (locked)
		asm volatile(FLAGS_SEQUENCE("lock cmpxchg8b %[mem]")
			     CMPXCHG_OPERANDS(target, lo, hi, 1U, 2U));
	else
		asm volatile(FLAGS_SEQUENCE("cmpxchg8b %[mem]")
			     CMPXCHG_OPERANDS(target, lo, hi, 1U, 2U));
	*swapped = target == ((uint64_t)2 << 32 | 1);
	return flags;
}

/* What the compare-exchange must leave: the ADD's flags with ZF set. */
static uint64_t expected_flags(uint64_t acc, uint64_t src)
{
	return add_flags(acc, src) | FLAG_ZF;
}

typedef uint64_t (*cmpxchg_flags_fn)(uint64_t acc, uint64_t src, bool locked,
				     bool *swapped);

/* Every garbage source, locked and not: the exchange and its flags. */
static void check_only_zf(struct __test_metadata *_metadata,
			  cmpxchg_flags_fn run, const char *insn)
{
	for (unsigned int lock = 0; lock < 2; lock++) {
		for (unsigned int i = 0; i < ARRAY_SIZE(garbage); i++) {
			uint64_t acc = 0x8000000000000001ULL;
			bool swapped = false;
			uint64_t got = run(acc, garbage[i], lock, &swapped);

			EXPECT_TRUE(swapped);
			EXPECT_EQ(expected_flags(acc, garbage[i]), got) {
				TH_LOG("%s%s after add of %#llx: flags %#llx",
				       lock ? "lock " : "", insn,
				       (unsigned long long)garbage[i],
				       (unsigned long long)got);
			}
		}
	}
}

TEST(cmpxchg16b_changes_only_zf)
{
	check_only_zf(_metadata, cmpxchg16b_flags, "cmpxchg16b");
}

TEST(cmpxchg8b_changes_only_zf)
{
	check_only_zf(_metadata, cmpxchg8b_flags, "cmpxchg8b");
}

/* The reference itself: an ADD's flags hold only arithmetic flags. */
TEST(add_flags_are_architectural)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(garbage); i++) {
		uint64_t flags = add_flags(0x8000000000000001ULL, garbage[i]);

		EXPECT_EQ(START_FLAGS, flags & ~ARITH_FLAGS);
	}
}

TEST_HARNESS_MAIN
