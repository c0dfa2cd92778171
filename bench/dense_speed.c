// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dense_speed: P5's kernel (the vector add of qemu-device/engine/tests/
 * configs.h, n = 100000 on a 4x4 fabric or larger) launched through
 * libloom, and how many device cycles per second of wall clock the device
 * delivers: its job's cycles (JOB_INFO) over the job's time from
 * submission to its fence (loom_token_times()), best of 5.
 *
 * Built twice (issue 32): with LOOM_SIM against libloom-sim, on the host
 * (P5s: loom-sim), and statically for the VM against libloom (P5d: the
 * QEMU device, whose engine runs on a host thread of QEMU).  Both print
 * the RESULT line of bench/run in P5's unit, cycles/s over 1M, so the
 * engine alone (P5), loom-sim and the device stand side by side.
 *
 * Usage: dense_speed [--n N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vadd_image.h"
#include "loom/loom.h"
#ifdef LOOM_SIM
#include "loom/sim.h"
#define ID	"P5s"
#define WHAT	"loom-sim"
#else
#define ID	"P5d"
#define WHAT	"the device"
#endif

#define REPS	5

/* One launch: its cycles and seconds, or a negative error. */
static int run(struct loom_device *dev, const struct loom_image *img,
	       struct loom_bo *const bo[3], int64_t n, uint64_t *cycles,
	       double *seconds)
{
	struct loom_arg args[3];
	struct loom_hw_counters c;
	struct loom_token *t;
	uint64_t s, d;
	int ret;

	for (int i = 0; i < 3; i++)
		args[i] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(bo[i]) };
	ret = loom_launch_dense(dev, img, "vadd", args, 3, &n, 1, NULL, 0, 0, &t);
	if (ret)
		return ret;
	ret = loom_token_wait(t, -1);
	if (!ret)
		ret = loom_token_counters(t, &c);
	if (!ret)
		ret = loom_token_times(t, &s, &d);
	loom_token_free(t);
	if (ret)
		return ret;
	*cycles = c.cycles;
	*seconds = (d - s) * 1e-9;
	return 0;
}

int main(int argc, char **argv)
{
	int64_t n = 100000;
	const struct loom_device_info *info;
	struct loom_device *dev;
	struct loom_image *img;
	struct loom_bo *bo[3] = { NULL };
	double best = 1e30, t;
	uint64_t cycles = 0;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--n"))
		n = strtoll(argv[2], NULL, 10);
	else if (argc != 1 || n <= 0) {
		fprintf(stderr, "usage: dense_speed [--n N]\n");
		return 2;
	}
#ifdef LOOM_SIM
	ret = loom_sim_open(NULL, &dev);
#else
	ret = loom_device_open_first(&dev);
#endif
	if (ret) {
		printf("dense_speed: %s\n0 passed, 1 failed\n", loom_strerror(ret));
		return 1;
	}
	info = loom_device_info(dev);
	img = loom_test_vadd_image(info->fabric_width, info->fabric_height);
	ret = img ? 0 : -ENOMEM;
	for (int i = 0; i < 3 && !ret; i++)
		ret = loom_bo_alloc(dev, n * 8, 0, &bo[i]);
	for (int r = 0; r < REPS && !ret; r++) {
		ret = run(dev, img, bo, n, &cycles, &t);
		if (!ret && t < best)
			best = t;
	}
	for (int64_t i = 0; i < n && !ret; i++)
		if (((int64_t *)loom_bo_map(bo[2]))[i] !=
		    ((int64_t *)loom_bo_map(bo[0]))[i] + ((int64_t *)loom_bo_map(bo[1]))[i])
			ret = -EIO;
	if (!ret) {
		printf("%s (%s, %ux%u): vector add n=%lld: %llu cycles in %.1f ms, "
		       "%.3g cycles/s (best of %d)\n", WHAT, info->path,
		       info->fabric_width, info->fabric_height, (long long)n,
		       (unsigned long long)cycles, best * 1e3, cycles / best, REPS);
		printf("RESULT\t%s\t%.3f\t%s cycles/s / 1M, P5's kernel through libloom "
		       "(%ux%u vector add)\t%.3g cycles/s, %llu cycles in %.1f ms, "
		       "submission to fence, best of %d\thigher\t-\n", ID,
		       cycles / best / 1e6, WHAT, info->fabric_width,
		       info->fabric_height, cycles / best,
		       (unsigned long long)cycles, best * 1e3, REPS);
	} else {
		printf("dense_speed: %s\n", loom_strerror(ret));
	}
	printf("%d passed, %d failed\n", !ret, !!ret);
	for (int i = 0; i < 3; i++)
		loom_bo_free(bo[i]);
	loom_image_free(img);
	loom_device_close(dev);
	return ret ? 1 : 0;
}
