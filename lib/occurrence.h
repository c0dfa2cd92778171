/* SPDX-License-Identifier: MIT */
/*
 * DOC: dispatch occurrences (private)
 *
 * occurrence.h: the runtime's minting of ThreadDispatchOccurrenceIds
 * (lib/occurrence.c), shared by the dynamic-work core (work.c, sched.c)
 * and the device runtime (launch.c, ring.c).
 *
 * Not installed; the names are global in libloom.a, hence the loom_ prefix.
 */
#ifndef LOOM_OCCURRENCE_H
#define LOOM_OCCURRENCE_H

#include <stdint.h>

#include "loom/error.h"

/*
 * Sets *@out to a fresh dispatch occurrence: non-zero, above every one
 * minted before in this process (by any thread, for any device), never
 * handed out again.  UINT64_MAX is the last one; after it every call is
 * LOOM_WORK_OCCURRENCES_EXHAUSTED and *@out is untouched.  Lock-free.
 */
enum loom_error loom_occurrence_mint(uint64_t *out);

/*
 * Tests only: the next mint returns @last + 1 (or is exhausted, for
 * UINT64_MAX); returns the last occurrence minted so far.  Not for use
 * while other threads mint.
 */
uint64_t loom_occurrence_set_last_for_test(uint64_t last);

#endif /* LOOM_OCCURRENCE_H */
