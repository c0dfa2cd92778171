// SPDX-License-Identifier: MIT
/*
 * DOC: dispatch occurrences
 *
 * occurrence.c: libloom mints every ThreadDispatchOccurrenceId (spec
 * "Logical Domains And Data Views" §2.3: "Runtime owns one transient
 * ThreadDispatchOccurrenceId per concrete dispatch").  Each dense or items
 * launch and each dynamic-work domain takes one here, unless a replay
 * names its own (loom_work_domain_create_with_occurrence(),
 * loom_sched_config.replay_occurrence).
 *
 * One counter for the whole process, so an occurrence is unique among
 * every device, device set and domain of the process, live or gone, and
 * later dispatches get larger ones.  They are not dense: a launch that
 * fails after minting leaves a gap.  0 is never minted (it names no
 * dispatch); after UINT64_MAX minting fails with a typed error rather
 * than wrap to a value that may still be live.
 */
#include <stdatomic.h>

#include "occurrence.h"

/* The last occurrence minted; 0: none yet. */
static _Atomic uint64_t last_minted;

enum loom_error loom_occurrence_mint(uint64_t *out)
{
	/*
	 * Relaxed: an occurrence only has to differ from the others and grow
	 * in the counter's own modification order; it orders no other memory
	 * (whoever publishes a domain or token publishes it with them).
	 * A compare-and-swap, not a fetch-and-add: the counter must stop at
	 * UINT64_MAX, never wrap past it.
	 */
	uint64_t last = atomic_load_explicit(&last_minted, memory_order_relaxed);

	do {
		if (last == UINT64_MAX)
			return LOOM_WORK_OCCURRENCES_EXHAUSTED;
	} while (!atomic_compare_exchange_weak_explicit(&last_minted, &last,
							last + 1,
							memory_order_relaxed,
							memory_order_relaxed));
	*out = last + 1;
	return LOOM_OK;
}

uint64_t loom_occurrence_set_last_for_test(uint64_t last)
{
	return atomic_exchange_explicit(&last_minted, last,
					memory_order_relaxed);
}
