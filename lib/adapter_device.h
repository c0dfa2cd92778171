/* SPDX-License-Identifier: MIT */
/*
 * adapter_device.h: what the device adapter's two halves share:
 * adapter_device.c (the run, its workers, items dispatches) and
 * adapter_work.c (the device's work stack, LOOM_PKT_RUN_WORK).
 *
 * Not installed; the names are global in libloom.a, hence the prefix.
 */
#ifndef LOOM_ADAPTER_DEVICE_H
#define LOOM_ADAPTER_DEVICE_H

#include <stdatomic.h>

#include "adapter.h"
#include "sched_internal.h"
#include "device_internal.h"
#include "loom_device.h"

struct device_run;
struct work_state;

struct device_worker {
	struct device_run *run;
	uint32_t index;
	struct loom_device *dev;
	const struct loom_arg *args;	/* its device's */
	unsigned core;
	struct loom_ring *ring;
	struct loom_bo *payloads;	/* max_batch u64 */
	struct loom_bo *results;	/* max_batch records */
	struct loom_sched_item *batch;
	uint64_t *children;	/* child_capacity: one record's, copied once */
	struct work_state *work;	/* RUN_WORK, or NULL: items dispatches */
	struct loom_adapter_counts counts;
	uint64_t jobs;
	struct loom_hw_counters counters;	/* summed over its dispatches */
} __attribute__((aligned(LOOM_CACHE_LINE)));	/* written for every batch */

struct device_run {
	struct loom_adapter_run common;	/* child_capacity: the thread's */
	const struct loom_work_device_config *config;
	uint32_t max_batch;
	uint64_t record_size;
	struct device_worker *workers;
	atomic_uint unstarted;		/* workers yet to take a first batch */
};

/*
 * Sums a finished job's counters (@hw, written by its WRITE_COUNTERS) and
 * shows it to the observer: @n items, submitted at @submit_ns.
 */
void loom_device_account_job(struct device_worker *w, size_t n,
			     uint64_t submit_ns, int error,
			     const struct loom_hw_counters *hw);
/* Runs @w's first @n batch items as one items dispatch, then retires them. */
void loom_device_run_items(struct device_worker *w, size_t n);

/* adapter_work.c: @w's work stack state (-ENOMEM, or a BO error). */
int loom_work_stack_setup(struct device_worker *w);
void loom_work_stack_free(struct work_state *ws);
/* The most items a batch of @w's may hold on its device's work stack. */
uint32_t loom_work_stack_batch(const struct device_worker *w);
/* Runs a batch of @n items through @w's device's work stack. */
void loom_work_stack_run(struct device_worker *w, size_t n);

#endif /* LOOM_ADAPTER_DEVICE_H */
