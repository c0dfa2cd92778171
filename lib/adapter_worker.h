/* SPDX-License-Identifier: MIT */
/*
 * DOC: the device adapter's worker types
 *
 * A device adapter run and its workers: what adapter_device.c (the run),
 * adapter_items.c (items dispatches) and adapter_work.c (the device's
 * work stack) all read.  Types only: the files call each other through
 * adapter_items.h and adapter_work.h, in one direction (device -> work ->
 * items).
 *
 * Not installed.
 */
#ifndef LOOM_ADAPTER_WORKER_H
#define LOOM_ADAPTER_WORKER_H

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
	struct loom_arg *captures;	/* n_devices x n_args: each device's view */
};

#endif /* LOOM_ADAPTER_WORKER_H */
