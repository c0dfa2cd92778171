/* SPDX-License-Identifier: MIT */
/*
 * DOC: the device adapter's work stack (adapter_work.c)
 *
 * Not installed; the names are global in libloom.a, hence the prefix.
 */
#ifndef LOOM_ADAPTER_WORK_H
#define LOOM_ADAPTER_WORK_H

#include "adapter_worker.h"

/* @w's work stack state (-ENOMEM, or a BO error). */
int loom_work_stack_setup(struct device_worker *w);
void loom_work_stack_free(struct work_state *ws);
/* The most items a batch of @w's may hold on its device's work stack. */
uint32_t loom_work_stack_batch(const struct device_worker *w);
/* Runs a batch of @n items through @w's device's work stack. */
void loom_work_stack_run(struct device_worker *w, size_t n);

#endif /* LOOM_ADAPTER_WORK_H */
