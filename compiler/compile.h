/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compile.h: the whole pipeline over a source file: verify every unit,
 * lower each thread, place and route it, collect it into an image with the
 * host functions.
 */
#ifndef LOOMC_COMPILE_H
#define LOOMC_COMPILE_H

#include <stdbool.h>
#include <stdio.h>

#include "emit.h"

/**
 * struct compile_options - what to produce besides the image
 * @width: fabric width
 * @height: fabric height
 * @dot: when non-NULL, each thread's graph in DOT goes there
 * @listing: when non-NULL, each thread's configuration listing goes there
 * @stats: when non-NULL, each thread's place_stats line goes there
 */
struct compile_options {
	unsigned width, height;
	FILE *dot;
	FILE *listing;
	FILE *stats;
};

/*
 * Compiles d->src into @img (image_init()ed by the caller with the fabric
 * size): every thread, then every host function of each unit into the
 * host program.  Returns the number of errors reported through @d.
 */
unsigned compile_source(struct diag *d, const struct compile_options *o,
			struct image_builder *img);

#endif /* LOOMC_COMPILE_H */
