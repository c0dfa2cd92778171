/* SPDX-License-Identifier: MIT */
/*
 * DOC: the device adapter's items dispatches (adapter_items.c)
 *
 * Not installed; the names are global in libloom.a, hence the prefix.
 */
#ifndef LOOM_ADAPTER_ITEMS_H
#define LOOM_ADAPTER_ITEMS_H

#include "adapter_worker.h"

/* @w's payload and result BOs, for max_batch items (a BO error). */
int loom_device_items_setup(struct device_worker *w);
/*
 * Sums a finished job's counters (@hw, written by its WRITE_COUNTERS) and
 * shows it to the observer: @n items, submitted at @submit_ns.
 */
void loom_device_account_job(struct device_worker *w, size_t n,
			     uint64_t submit_ns, int error,
			     const struct loom_hw_counters *hw);
/* Runs @w's first @n batch items as one items dispatch, then retires them. */
void loom_device_run_items(struct device_worker *w, size_t n);

#endif /* LOOM_ADAPTER_ITEMS_H */
