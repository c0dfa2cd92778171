// SPDX-License-Identifier: GPL-2.0
/*
 * atomic_vm_test: memref.atomic_rmw on the device, through the driver and
 * libloom, on 1, 2 and 4 cores at once.  The image is loomc's of
 * compiler/tests/corpus/valid/atomics.loom for an 8x8 fabric, copied into
 * the guest's /data; its @scatter is bicg's s = A^T r written as a
 * scatter (instance i adds r[i] * A[i][j] into s[j] with atomic addi),
 * its @histogram one atomic addi per sample.  Checked against C, bit for
 * bit (i32):
 *
 *  - k whole launches of @scatter on queues 0..k-1 at once, k = 1, 2, 4
 *    (as many as the device has cores): s is k times A^T r;
 *  - one launch spread over every core (loom_launch_spread()): s is A^T r;
 *  - the histogram spread over every core.
 *
 * make test runs it on a device with cores=4,fabric=8x8 (tools/run-tests);
 * without the image, or on another fabric, it skips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "loom/loom.h"
#include "loom_device.h"

#define IMAGE		"/data/atomics.lcb"
#define SEC		1000000000LL
#define ROWS		150
#define COLS		40
#define SAMPLES		5000
#define BINS		13

FIXTURE(atomics) {
	struct loom_device *dev;
	struct loom_image *img;
	struct loom_bo *bo;
	int32_t *a, *r, *s;
	uint64_t a_va, r_va, s_va;
	int32_t want[COLS];
	unsigned cores;
	char skip[128];		/* why the tests skip, or empty */
};

/*
 * A SKIP in a 6.1 harness's FIXTURE_SETUP still runs the test: the setup
 * says why in self->skip and each test skips.
 */
#define SKIP_UNLESS_SET_UP() do {					\
	if (self->skip[0])						\
		SKIP(return, "%s", self->skip);				\
} while (0)

FIXTURE_SETUP(atomics)
{
	const struct loom_device_info *info;
	uint8_t *mem;

	self->dev = NULL;
	self->img = NULL;
	self->bo = NULL;
	if (access(IMAGE, R_OK)) {
		snprintf(self->skip, sizeof(self->skip),
			 "no " IMAGE " (tools/loom-vm --file)");
		return;
	}
	ASSERT_EQ(0, loom_image_load_file(IMAGE, &self->img));
	ASSERT_EQ(0, loom_device_open_first(&self->dev));
	info = loom_device_info(self->dev);
	if (info->fabric_width != 8 || info->fabric_height != 8) {
		snprintf(self->skip, sizeof(self->skip),
			 "the image is for 8x8, the device is %ux%u",
			 info->fabric_width, info->fabric_height);
		return;
	}
	ASSERT_NE(0, info->hw_caps & LOOM_CAP_ATOMIC);
	self->cores = info->num_cores;
	ASSERT_EQ(0, loom_bo_alloc(self->dev, 1 << 20, 0, &self->bo));
	mem = loom_bo_map(self->bo);
	self->a = (int32_t *)mem;
	self->r = (int32_t *)(mem + 0x80000);
	self->s = (int32_t *)(mem + 0x90000);
	self->a_va = loom_bo_va(self->bo);
	self->r_va = self->a_va + 0x80000;
	self->s_va = self->a_va + 0x90000;
	for (unsigned k = 0; k < ROWS * COLS; k++)
		self->a[k] = (int32_t)((k * 2654435761U) >> 20) % 201 - 100;
	for (unsigned i = 0; i < ROWS; i++)
		self->r[i] = (int32_t)i % 17 - 8;
	for (unsigned j = 0; j < COLS; j++) {
		uint32_t sum = 0;

		for (unsigned i = 0; i < ROWS; i++)
			sum += (uint32_t)self->r[i] * (uint32_t)self->a[i * COLS + j];
		self->want[j] = (int32_t)sum;
	}
}

FIXTURE_TEARDOWN(atomics)
{
	loom_bo_free(self->bo);
	if (self->dev)
		loom_device_close(self->dev);
	loom_image_free(self->img);
}

/* @scatter's arguments: A, r, s, then A's two '?' sizes. */
static struct loom_launch scatter_launch(struct loom_arg *args,
					 const uint64_t *va, const int64_t *rows)
{
	args[0] = (struct loom_arg){ LOOM_ARG_MEMREF_I32, va[0] };
	args[1] = (struct loom_arg){ LOOM_ARG_MEMREF_I32, va[1] };
	args[2] = (struct loom_arg){ LOOM_ARG_MEMREF_I32, va[2] };
	args[3] = (struct loom_arg){ LOOM_ARG_INDEX, ROWS };
	args[4] = (struct loom_arg){ LOOM_ARG_INDEX, COLS };
	return loom_launch_dense_of("scatter", args, 5, rows, 1, NULL, 0, 0);
}

/* k whole launches on queues 0..k-1 at once: s = k A^T r. */
TEST_F(atomics, scatter_on_1_2_4_cores_at_once)
{
	static const unsigned ks[] = { 1, 2, 4 };
	const uint64_t va[3] = { self->a_va, self->r_va, self->s_va };
	const int64_t rows = ROWS;
	struct loom_arg args[5];
	struct loom_launch l = scatter_launch(args, va, &rows);

	SKIP_UNLESS_SET_UP();
	for (unsigned c = 0; c < 3; c++) {
		unsigned k = ks[c];
		struct loom_token *t[4];

		if (k > self->cores) {
			TH_LOG("%u cores: the device has %u", k, self->cores);
			continue;
		}
		memset(self->s, 0, COLS * sizeof(int32_t));
		for (unsigned q = 0; q < k; q++) {
			l.queue = q;
			ASSERT_EQ(0, loom_launch(self->dev, self->img, &l, &t[q]));
		}
		for (unsigned q = 0; q < k; q++) {
			EXPECT_EQ(0, loom_token_wait(t[q], 60 * SEC));
			loom_token_free(t[q]);
		}
		for (unsigned j = 0; j < COLS; j++) {
			EXPECT_EQ((int32_t)((uint32_t)self->want[j] * k), self->s[j])
				TH_LOG("%u cores, s[%u]", k, j);
		}
	}
}

/* One launch spread over every core: each row once, s = A^T r. */
TEST_F(atomics, scatter_spread_over_every_core)
{
	const uint64_t va[3] = { self->a_va, self->r_va, self->s_va };
	const int64_t rows = ROWS;
	struct loom_arg args[5];
	struct loom_launch l = scatter_launch(args, va, &rows);
	struct loom_device *devs[1] = { self->dev };
	struct loom_token *t;

	SKIP_UNLESS_SET_UP();
	memset(self->s, 0, COLS * sizeof(int32_t));
	ASSERT_EQ(0, loom_launch_spread(devs, 1, self->img, &l, &t));
	EXPECT_EQ(0, loom_token_wait(t, 60 * SEC));
	EXPECT_EQ(self->cores, loom_token_num_parts(t));
	loom_token_free(t);
	for (unsigned j = 0; j < COLS; j++) {
		EXPECT_EQ(self->want[j], self->s[j]) TH_LOG("s[%u]", j);
	}
}

/* The histogram spread over every core: every sample counted once. */
TEST_F(atomics, histogram_spread_over_every_core)
{
	int32_t *key = self->a, *hist = self->s, want[BINS] = { 0 };
	struct loom_arg args[2] = {
		{ LOOM_ARG_MEMREF_I32, self->a_va },
		{ LOOM_ARG_MEMREF_I32, self->s_va },
	};
	const int64_t n = SAMPLES;
	struct loom_launch l = loom_launch_dense_of("histogram", args, 2, &n, 1,
						    NULL, 0, 0);
	struct loom_device *devs[1] = { self->dev };
	struct loom_token *t;

	SKIP_UNLESS_SET_UP();
	for (unsigned j = 0; j < SAMPLES; j++) {
		key[j] = (int32_t)((j * 2654435761U) % BINS);
		want[key[j]]++;
	}
	memset(hist, 0, BINS * sizeof(int32_t));
	ASSERT_EQ(0, loom_launch_spread(devs, 1, self->img, &l, &t));
	EXPECT_EQ(0, loom_token_wait(t, 60 * SEC));
	loom_token_free(t);
	for (unsigned b = 0; b < BINS; b++) {
		EXPECT_EQ(want[b], hist[b]) TH_LOG("bin %u", b);
	}
}

TEST_HARNESS_MAIN
