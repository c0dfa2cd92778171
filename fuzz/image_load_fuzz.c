// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: libloom's image loader (format/'s reader behind
 * loom_image_load()) and the host-program checker on arbitrary bytes.  Whatever it
 * accepts must then answer every query about every thread without
 * reading outside the image; ASan and UBSan watch.
 *
 * make fuzz-host runs it (seeded with the images loomc writes for the
 * corpus and examples); inputs that ever crashed it are kept in
 * fuzz/crashes/image_load/ and make test replays them.
 */
#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"
#include "loom_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loom_image_view view;
	struct loom_image *img;
	struct loom_thread_info info;
	unsigned width, height;
	size_t host_size;
	char why[160];

	/* the host program's checker, which loom_host_run() and --disasm use */
	if (loom_view_open(&view, data, size, why, sizeof(why)) == 0)
		(void)loom_view_check_host(&view, why, sizeof(why));
	if (loom_image_load(data, size, &img))
		return 0;
	loom_image_fabric(img, &width, &height);
	for (unsigned i = 0; i < loom_image_num_threads(img); i++) {
		if (loom_image_thread_at(img, i, &info) == 0)
			(void)loom_image_thread(img, info.name, &info);
	}
	(void)loom_image_host_section(img, &host_size);
	loom_image_free(img);
	return 0;
}
