/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * measure.h: the II a placement runs at, measured on the fabric engine
 * (Documentation/compiler.rst, "Statistics").
 */
#ifndef LOOMC_MEASURE_H
#define LOOMC_MEASURE_H

#include "graph.h"
#include "place.h"

/*
 * Runs @p, the placement of @g, on the device's fabric engine for two
 * synthetic launches and fills @p->stats' measured, measured_status and
 * measured_per_iteration.
 */
void place_measure(const struct graph *g, struct placement *p);

/* Why @s has no measured II: a phrase for --stats. */
const char *place_measure_failure(const struct place_stats *s);

#endif /* LOOMC_MEASURE_H */
