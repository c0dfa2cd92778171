/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vadd_image.h: configs.h's vector add as a program image of one dense
 * thread, "vadd" (a, b, c: memref<?xi64>, rank 1), for what runs it
 * through libloom: sim/tests/sim_test.c and bench/dense_speed.c.  Needs
 * format/'s builder (loom_format.h) and libloom.
 */
#ifndef LOOM_TEST_VADD_IMAGE_H
#define LOOM_TEST_VADD_IMAGE_H

#include "configs.h"
#include "loom_format.h"
#include "loom/loom.h"

/* The image for a @w x @h fabric, or NULL. */
static inline struct loom_image *loom_test_vadd_image(unsigned w, unsigned h)
{
	static const enum loom_arg_type types[3] = {
		LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64,
	};
	static unsigned char cfg[65536];
	struct loom_image_builder *b;
	struct loom_image *img = NULL;
	size_t n = loom_test_config_vector_add(cfg, sizeof(cfg), w, h), size;
	void *bytes = NULL;

	if (!n || loom_builder_new(w, h, &b))
		return NULL;
	if (!loom_builder_add_dense(b, "vadd", 1, types, 3, cfg, n) &&
	    !loom_builder_finish(b, &bytes, &size))
		loom_image_load(bytes, size, &img);
	loom_builder_free(b);
	free(bytes);
	return img;
}

#endif
