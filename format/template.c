// SPDX-License-Identifier: MIT
/*
 * Filling a thread's launch template: the one place that knows what value
 * each kind of patch takes (uapi/loom_image.h, struct loom_image_patch).
 * libloom's launches and the compiler tests' engine runs both use it.
 */
#include <string.h>

#include "loom_format.h"

static void put(unsigned char *p, uint64_t v, unsigned width)
{
	/* little-endian, like every field of the format and the device */
	for (unsigned i = 0; i < width; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

void loom_template_fill(void *cmd, const struct loom_image_thread *t,
			const struct loom_image_patch *patch,
			const struct loom_template_values *v)
{
	unsigned char *p = cmd;

	for (uint32_t i = 0; i < t->num_patches; i++) {
		const struct loom_image_patch *pt = &patch[i];

		switch (pt->kind) {
		case LOOM_PATCH_CONFIG_VA:
			put(p + pt->offset, v->config_va, 8);
			break;
		case LOOM_PATCH_OPERAND:
			/*
			 * The work-item slot carries no launch value: the
			 * device feeds each item's payload to its port.
			 */
			if (t->domain == LOOM_DOMAIN_DYNAMIC_WORK && pt->index == t->work_item_arg)
				put(p + pt->offset, 0, 8);
			else
				put(p + pt->offset, v->operands[pt->index], 8);
			break;
		case LOOM_PATCH_EXTENT:
			put(p + pt->offset, (uint64_t)v->extents[pt->index], 8);
			break;
		case LOOM_PATCH_ITEM_COUNT:
			put(p + pt->offset, v->items, 4);
			break;
		case LOOM_PATCH_PAYLOAD_VA:
			put(p + pt->offset, v->payload_va, 8);
			break;
		case LOOM_PATCH_RESULT_VA:
			put(p + pt->offset, v->result_va, 8);
			break;
		}
	}
}
