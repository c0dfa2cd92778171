// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PolyBench/C 4.2 kernels (bench/polybench/, one .loom file each, run as
 * bench/polybench/polybench.h says) on the host engine: each is compiled
 * for 4x4 and 8x8 fabrics and its arrays compared bit for bit with the
 * published loops.  A kernel that does not map is a failure unless it is
 * listed as an expected one (struct kernel's @unmapped): a kernel that
 * stops mapping fails the test, and so does one that starts to, until
 * its entry is removed.  lib/tests/vm/polybench_vm_test.c runs the same
 * kernels on the device.
 */
#include <time.h>

#include "check.h"
#include "engine_run.h"
#include "polybench.h"

static void engine_poke(void *ctx, uint64_t va, const void *data, size_t size)
{
	struct er *er = ctx;

	fake_bus_poke(&er->bus, va, data, size);
}

static void engine_peek(void *ctx, uint64_t va, void *data, size_t size)
{
	struct er *er = ctx;

	fake_bus_peek(&er->bus, va, data, size);
}

static int engine_launch(void *ctx, const char *name, const uint64_t *args,
			 const int64_t *extents)
{
	int status = er_launch(ctx, name, args, extents, 0, 0, 0);

	if (status != LOOM_STATUS_OK)
		printf("#   %s ends with status %d\n", name, status);
	return status != LOOM_STATUS_OK;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * Kernel @k on a @w x @h fabric: maps (or, @expect_unmapped, does not)
 * and, when it maps, computes what C does.
 */
static void kernel_on(const struct kernel *k, unsigned w, unsigned h,
		      bool expect_unmapped)
{
	char path[96];
	struct timespec t0;
	double compile_ms;
	char *text;
	struct er e;
	int opened;

	snprintf(path, sizeof(path), "bench/polybench/%s.loom", k->name);
	text = er_read_file(path);
	if (!text) {
		CHECK(text);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	opened = er_open(&e, text, w, h);
	compile_ms = ms_since(&t0);
	if (opened) {
		printf("#   %s does not map on %ux%u%s\n", k->name, w, h,
		       expect_unmapped ? " (expected)" : "");
		CHECK(expect_unmapped);
	} else {
		struct pb pb = {
			.ctx = &e, .poke = engine_poke, .peek = engine_peek,
			.launch = engine_launch,
		};
		bool right;

		for (int a = 0; a < 7; a++)
			pb.va[a] = ER_DATA_VA + (uint64_t)a * PB_ARRAY_SIZE;
		right = k->run(&pb);

		printf("#   %s maps on %ux%u (%.0f ms to compile, sanitized), %s\n",
		       k->name, w, h, compile_ms,
		       right ? "runs right" : "RUNS WRONG");
		CHECK(right);
		if (expect_unmapped)
			printf("#   %s now maps on %ux%u: remove its expected failure\n",
			       k->name, w, h);
		CHECK(!expect_unmapped);
	}
	er_close(&e);
	free(text);
}

TEST(polybench_4x4)
{
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		kernel_on(&kernels[k], 4, 4, kernels[k].unmapped & ON_4X4);
}

TEST(polybench_8x8)
{
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		kernel_on(&kernels[k], 8, 8, kernels[k].unmapped & ON_8X8);
}

/*
 * What maps on 4x4 maps on every larger fabric (place.c's map_smaller()):
 * 5x5, and 4x6 and 6x4, where trisolv's own search fails and 4x4's
 * mapping, embedded, is what runs.
 */
TEST(what_maps_on_4x4_maps_on_larger_fabrics)
{
	static const unsigned sizes[][2] = { { 5, 5 }, { 4, 6 }, { 6, 4 } };

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			if (!(kernels[k].unmapped & ON_4X4))
				kernel_on(&kernels[k], sizes[i][0], sizes[i][1],
					  false);
}

int main(void)
{
	RUN(polybench_4x4);
	RUN(polybench_8x8);
	RUN(what_maps_on_4x4_maps_on_larger_fabrics);
	return checks_done();
}
