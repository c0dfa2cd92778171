/* SPDX-License-Identifier: MIT */
/*
 * image_util.h: the last step of every VM test's program image, shared by
 * the libloom VM tests and the fault campaign (fuzz/vm/loom_faults.c).
 */
#ifndef LOOM_TEST_IMAGE_UTIL_H
#define LOOM_TEST_IMAGE_UTIL_H

#include <stdbool.h>
#include <stdlib.h>

#include "loom/loom.h"

/*
 * Finishes @b if every thread was @added to it, loads the bytes and frees
 * the builder: the loaded image, or NULL on any failure.
 */
static inline struct loom_image *loom_test_load_built(struct loom_image_builder *b,
						      bool added)
{
	struct loom_image *img = NULL;
	void *bytes;
	size_t size;

	if (added && !loom_builder_finish(b, &bytes, &size)) {
		if (loom_image_load(bytes, size, &img))
			img = NULL;
		free(bytes);
	}
	loom_builder_free(b);
	return img;
}

#endif
