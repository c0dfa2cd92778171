/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deadlock.h: prove that a placed configuration cannot deadlock
 * (Documentation/compiler.rst, "Deadlock freedom").
 */
#ifndef LOOMC_DEADLOCK_H
#define LOOMC_DEADLOCK_H

#include <stddef.h>

#include "place.h"

/*
 * Checks the configuration @p as the device will read it: every PE input
 * it consumes is fed through the routes by exactly one slot output or
 * input port, nothing is routed that nobody consumes, the values form an
 * acyclic graph whose tokens agree in rate (one per instance, or one per
 * iteration of one loop), and no loop waits on its own reductions.  A
 * configuration that passes cannot deadlock on the engine, whatever the
 * buffer depths, slot sharing and memory arbitration.  Returns 0, or -1
 * with the first reason in @why (@n bytes).
 */
int deadlock_check(const struct placement *p, char *why, size_t n);

#endif /* LOOMC_DEADLOCK_H */
