// SPDX-License-Identifier: GPL-2.0
/*
 * polybench_vm_test: PolyBench/C 4.2's kernels (bench/polybench/) on the
 * device, through libloom, with what the host engine's polybench_test
 * runs (bench/polybench/polybench.h): the published init_array, the
 * launches in the published order, every array compared bit for bit with
 * the published loops.  The images are loomc's for the device's default
 * 4x4 fabric, copied into the guest's /data (tools/loom-vm --file
 * $BUILD/polybench/NAME.lcb); without them the tests skip.  A kernel
 * expected not to map on 4x4 (struct kernel's ON_4X4) has no image and no
 * test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "loom/loom.h"
#include "polybench.h"

#define DATA_DIR	"/data"
#define SEC		1000000000LL

struct device_run {
	struct loom_device *dev;
	struct loom_image *img;
	struct loom_bo *bo;
	uint8_t *mem;
	uint64_t va;
};

static uint8_t *at(struct device_run *d, uint64_t va, size_t size)
{
	if (va < d->va || va + size > d->va + 7 * PB_ARRAY_SIZE)
		abort();	/* polybench.h keeps to its arrays */
	return d->mem + (va - d->va);
}

static void device_poke(void *ctx, uint64_t va, const void *data, size_t size)
{
	memcpy(at(ctx, va, size), data, size);
}

static void device_peek(void *ctx, uint64_t va, void *data, size_t size)
{
	memcpy(data, at(ctx, va, size), size);
}

static int device_launch(void *ctx, const char *name, const uint64_t *args,
			 const int64_t *extents)
{
	struct device_run *d = ctx;
	struct loom_arg a[LOOM_IMAGE_MAX_ARGS];
	struct loom_thread_info info;
	struct loom_token *t;
	int ret;

	ret = loom_image_thread(d->img, name, &info);
	if (ret) {
		printf("#   %s: %s\n", name, loom_strerror(ret));
		return ret;
	}
	for (unsigned k = 0; k < info.num_args; k++)
		a[k] = (struct loom_arg){ info.arg_types[k], args[k] };
	ret = loom_launch_dense(d->dev, d->img, name, a, info.num_args,
				extents, info.rank, NULL, 0, 0, &t);
	if (!ret) {
		ret = loom_token_wait(t, 60 * SEC);
		loom_token_free(t);
	}
	if (ret)
		printf("#   %s: %s\n", name, loom_strerror(ret));
	return ret;
}

static const struct kernel *kernel_named(const char *name)
{
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		if (!strcmp(kernels[k].name, name))
			return &kernels[k];
	return NULL;
}

static void run_kernel(struct __test_metadata *_metadata, const char *name)
{
	const struct kernel *k = kernel_named(name);
	struct device_run d = { 0 };
	struct pb pb = {
		.ctx = &d, .poke = device_poke, .peek = device_peek,
		.launch = device_launch,
	};
	char path[256];

	ASSERT_NE(NULL, k);
	ASSERT_FALSE(k->unmapped & ON_4X4);
	snprintf(path, sizeof(path), DATA_DIR "/%s.lcb", name);
	if (access(path, R_OK))
		SKIP(return, "no %s (tools/loom-vm --file)", path);
	ASSERT_EQ(0, loom_image_load_file(path, &d.img));
	ASSERT_EQ(0, loom_device_open_first(&d.dev));
	ASSERT_EQ(0, loom_bo_alloc(d.dev, 7 * PB_ARRAY_SIZE, 0, &d.bo));
	d.mem = loom_bo_map(d.bo);
	d.va = loom_bo_va(d.bo);
	memset(d.mem, 0, 7 * PB_ARRAY_SIZE);
	for (int a = 0; a < 7; a++)
		pb.va[a] = d.va + (uint64_t)a * PB_ARRAY_SIZE;
	EXPECT_TRUE(k->run(&pb)) TH_LOG("%s runs wrong on the device", name);
	loom_bo_free(d.bo);
	loom_device_close(d.dev);
	loom_image_free(d.img);
}

/* The kernels that map on 4x4, by their files' names. */
#define KERNEL_TEST(id, file) \
	TEST(id##_runs_right) { run_kernel(_metadata, file); }

KERNEL_TEST(gemm, "gemm")
KERNEL_TEST(gesummv, "gesummv")
KERNEL_TEST(syrk, "syrk")
KERNEL_TEST(trmm, "trmm")
KERNEL_TEST(seidel_2d, "seidel_2d")
KERNEL_TEST(atax, "atax")
KERNEL_TEST(bicg, "bicg")
KERNEL_TEST(mvt, "mvt")
KERNEL_TEST(jacobi_1d, "jacobi_1d")
KERNEL_TEST(jacobi_2d, "jacobi_2d")
KERNEL_TEST(trisolv, "trisolv")
KERNEL_TEST(mm2, "2mm")
KERNEL_TEST(mm3, "3mm")
KERNEL_TEST(syr2k, "syr2k")
KERNEL_TEST(symm, "symm")
KERNEL_TEST(fdtd_2d, "fdtd_2d")
KERNEL_TEST(heat_3d, "heat_3d")
KERNEL_TEST(floyd_warshall, "floyd_warshall")
KERNEL_TEST(gemm_subview, "gemm_subview")
KERNEL_TEST(jacobi_2d_views, "jacobi_2d_views")
KERNEL_TEST(gemm_in_place, "gemm_in_place")
KERNEL_TEST(syrk_if, "syrk_if")
/* these two route on 4x4 only with link channels (device ABI 0.8) */
KERNEL_TEST(gemm_tiled, "gemm_tiled")
KERNEL_TEST(trmm_if, "trmm_if")

/*
 * Every kernel the table says maps on 4x4 has a test above and an image in
 * /data; none of the others has an image.
 */
TEST(every_kernel_that_maps_has_run)
{
	static const char *const tested[] = {
		"gemm", "gesummv", "syrk", "trmm", "seidel_2d", "atax", "bicg",
		"mvt", "jacobi_1d", "jacobi_2d", "trisolv", "2mm", "3mm",
		"syr2k", "symm", "fdtd_2d", "heat_3d", "floyd_warshall", "gemm_subview",
		"jacobi_2d_views", "gemm_in_place", "syrk_if", "gemm_tiled",
		"trmm_if",
	};
	char path[256];

	if (access(DATA_DIR "/gemm.lcb", R_OK))
		SKIP(return, "no images in " DATA_DIR);
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		bool maps = !(kernels[k].unmapped & ON_4X4), listed = false;

		for (size_t i = 0; i < sizeof(tested) / sizeof(tested[0]); i++)
			listed |= !strcmp(tested[i], kernels[k].name);
		snprintf(path, sizeof(path), DATA_DIR "/%s.lcb", kernels[k].name);
		EXPECT_EQ(maps, listed) TH_LOG("%s", kernels[k].name);
		EXPECT_EQ(maps, !access(path, R_OK)) TH_LOG("%s", path);
	}
}

TEST_HARNESS_MAIN
