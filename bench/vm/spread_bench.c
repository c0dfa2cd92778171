// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spread_bench: one dense launch over 1, 2 and 4 cores (issue 34, P9),
 * measured inside the test VM with two loom devices of two cores each.
 *
 * The launch is PolyBench's gemm (bench/polybench/gemm.loom, loomc's
 * default 4x4 fabric), C = alpha * A * B + beta * C with ni = nj = NI and
 * nk = NK: NI x NI instances, each an NK-iteration loop.  It runs
 *   1 core   loom_launch_dense() on device 0's core 0
 *   2 cores  loom_launch_spread() over device 0 (both its cores)
 *   4 cores  loom_launch_spread() over devices 0 and 1
 * and each run's makespan is the device cycles of its token (a spread
 * launch's token gives its longest part's).  Every run's C is checked bit
 * for bit against the same f32 arithmetic on the CPU: each device owns a
 * copy of A, B and C at the same VA (the first BO of a fresh address
 * space), and each row is read from the device B_thread placed it on.
 *
 * Reported: makespan on 1 core / makespan on 4 cores (higher is better,
 * goal 3.6), and beside it the same ratio of wall-clock times, which on
 * this machine's 2 host CPUs cannot exceed ~2: every core is a QEMU
 * thread running the fabric engine.
 *
 * Usage: spread_bench [--ni N] [--nk K] [--reps R] [gemm.lcb]
 * (default /data/gemm.lcb).  Prints a table, a RESULT line as bench/run
 * reads it, and "N passed, N failed"; exits 1 if a run failed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/loom.h"

#define WAIT_NS		(600LL * 1000000000LL)
#define DEFAULT_IMAGE	"/data/gemm.lcb"
#define ALPHA		1.5f
#define BETA		1.2f

struct problem {
	int64_t ni, nk;
	float *a, *b, *c, *want;
};

struct device_copy {
	struct loom_device *dev;
	struct loom_bo *bo;
	float *c, *a, *b;		/* in the BO */
	uint64_t va;
};

static int passed, failed;

static void check(bool ok, const char *what)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("not ok: %s\n", what);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* PolyBench's init_array, and the reference in the thread's own order. */
static void make_problem(struct problem *p)
{
	int64_t ni = p->ni, nk = p->nk;

	for (int64_t i = 0; i < ni; i++)
		for (int64_t j = 0; j < ni; j++)
			p->c[i * ni + j] = (float)((i * j + 1) % ni) / ni;
	for (int64_t i = 0; i < ni; i++)
		for (int64_t k = 0; k < nk; k++)
			p->a[i * nk + k] = (float)(i * (k + 1) % nk) / nk;
	for (int64_t k = 0; k < nk; k++)
		for (int64_t j = 0; j < ni; j++)
			p->b[k * ni + j] = (float)(k * (j + 2) % ni) / ni;
	for (int64_t i = 0; i < ni; i++)
		for (int64_t j = 0; j < ni; j++) {
			float acc = p->c[i * ni + j] * BETA;

			/* the thread's order, one rounding per step (no FMA) */
			for (int64_t k = 0; k < nk; k++) {
				volatile float aa = ALPHA * p->a[i * nk + k];
				volatile float prod = aa * p->b[k * ni + j];

				acc += prod;
			}
			p->want[i * ni + j] = acc;
		}
}

static int setup_copy(struct device_copy *d, const struct problem *p)
{
	size_t nc = p->ni * p->ni, na = p->ni * p->nk, nb = p->nk * p->ni;
	int ret = loom_bo_alloc(d->dev, (nc + na + nb) * sizeof(float), 0, &d->bo);

	if (ret)
		return ret;
	d->c = loom_bo_map(d->bo);
	d->a = d->c + nc;
	d->b = d->a + na;
	d->va = loom_bo_va(d->bo);
	memcpy(d->a, p->a, na * sizeof(float));
	memcpy(d->b, p->b, nb * sizeof(float));
	return 0;
}

struct run {
	const char *name;
	unsigned n_devs;	/* 0: a plain loom_launch_dense() on core 0 */
	uint64_t cycles;	/* best over the repetitions */
	double wall;
	unsigned parts;
};

/* One launch; C is reset first and checked after, row by row. */
static int run_once(struct run *r, struct device_copy *d,
		    const struct loom_image *img, const struct problem *p)
{
	int64_t ext[2] = { p->ni, p->ni };
	struct loom_device *devs[2] = { d[0].dev, d[1].dev };
	float alpha = ALPHA, beta = BETA;
	uint32_t alpha_bits, beta_bits;
	uint64_t values[7] = {
		0, 0, d[0].va, d[0].va + p->ni * p->ni * sizeof(float),
		d[0].va + (p->ni * p->ni + p->ni * p->nk) * sizeof(float),
		(uint64_t)p->ni, (uint64_t)p->nk,
	};
	struct loom_arg args[7];
	struct loom_launch l = loom_launch_dense_of("gemm", args, 7, ext, 2, NULL, 0, 0);
	struct loom_thread_info info;
	struct loom_hw_counters c;
	struct loom_token *t;
	double t0, wall;
	int ret = loom_image_thread(img, "gemm", &info);

	if (ret)
		return ret;
	if (info.num_args != 7)
		return LOOM_E_ARG_COUNT;
	memcpy(&alpha_bits, &alpha, sizeof(alpha));
	memcpy(&beta_bits, &beta, sizeof(beta));
	values[0] = alpha_bits;
	values[1] = beta_bits;
	for (unsigned k = 0; k < 7; k++)
		args[k] = (struct loom_arg){ info.arg_types[k], values[k] };
	for (unsigned i = 0; i < 2; i++)
		for (int64_t k = 0; k < p->ni * p->ni; k++)
			d[i].c[k] = p->c[k];
	t0 = now_s();
	ret = r->n_devs ? loom_launch_spread(devs, r->n_devs, img, &l, &t) :
			  loom_launch(devs[0], img, &l, &t);
	if (ret)
		return ret;
	ret = loom_token_wait(t, WAIT_NS);
	wall = now_s() - t0;
	if (!r->wall || wall < r->wall)
		r->wall = wall;
	if (!ret)
		ret = loom_token_counters(t, &c);
	if (!ret) {
		r->cycles = !r->cycles || c.cycles < r->cycles ? c.cycles : r->cycles;
		r->parts = loom_token_num_parts(t);
	}
	loom_token_free(t);
	for (int64_t i = 0; !ret && i < p->ni; i++) {
		int64_t pt[2] = { i, 0 };
		struct loom_part at = { 0 };

		if (r->n_devs)
			ret = loom_launch_placement(devs, r->n_devs, ext, 2, pt, &at);
		if (!ret && memcmp(&d[at.device].c[i * p->ni], &p->want[i * p->ni],
				   p->ni * sizeof(float)))
			ret = -EIO;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct problem p = { .ni = 64, .nk = 32 };
	struct run runs[3] = {
		{ .name = "1 core (device 0, core 0)", .n_devs = 0 },
		{ .name = "2 cores (device 0)", .n_devs = 1 },
		{ .name = "4 cores (2 devices x 2)", .n_devs = 2 },
	};
	const char *path = DEFAULT_IMAGE;
	struct device_copy d[2] = { { 0 } };
	struct loom_device *all[4];
	struct loom_image *img;
	int reps = 3, n, ret = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ni") && i + 1 < argc)
			p.ni = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--nk") && i + 1 < argc)
			p.nk = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (argv[i][0] != '-')
			path = argv[i];
		else {
			fprintf(stderr, "usage: spread_bench [--ni N] [--nk K] [--reps R] [gemm.lcb]\n");
			return 2;
		}
	}
	if (p.ni < 1 || p.nk < 1 || reps < 1) {
		fprintf(stderr, "spread_bench: --ni, --nk and --reps must be positive\n");
		return 2;
	}
	n = loom_device_open_all(all, 4);
	if (n < 2) {
		fprintf(stderr, "spread_bench: needs two loom devices (found %d)\n", n < 0 ? 0 : n);
		return 1;
	}
	for (int i = 2; i < n; i++)
		loom_device_close(all[i]);
	p.a = malloc(p.ni * p.nk * sizeof(float));
	p.b = malloc(p.nk * p.ni * sizeof(float));
	p.c = malloc(p.ni * p.ni * sizeof(float));
	p.want = malloc(p.ni * p.ni * sizeof(float));
	if (!p.a || !p.b || !p.c || !p.want)
		return 1;
	make_problem(&p);
	ret = loom_image_load_file(path, &img);
	if (ret) {
		fprintf(stderr, "spread_bench: %s: %s\n", path, loom_strerror(ret));
		return 1;
	}
	for (int i = 0; i < 2 && !ret; i++) {
		d[i].dev = all[i];
		ret = setup_copy(&d[i], &p);
	}
	check(!ret, "buffers allocated");
	/* fresh address spaces: the first BO lands at one VA on both */
	check(!ret && d[0].va == d[1].va, "the copies share one VA");
	if (failed)
		goto out;
	printf("P9: gemm ni = nj = %lld, nk = %lld (%lld instances), best of %d\n",
	       (long long)p.ni, (long long)p.nk, (long long)(p.ni * p.ni), reps);
	for (int rep = 0; rep < reps; rep++)
		for (int k = 0; k < 3; k++) {
			char what[96];

			ret = run_once(&runs[k], d, img, &p);
			snprintf(what, sizeof(what), "%s: C right (%s)", runs[k].name,
				 loom_strerror(ret));
			check(!ret, what);
		}
	printf("%-28s %6s %14s %10s %10s\n", "", "parts", "makespan (cyc)", "speedup", "wall (ms)");
	for (int k = 0; k < 3; k++)
		printf("%-28s %6u %14llu %10.3f %10.1f\n", runs[k].name, runs[k].parts,
		       (unsigned long long)runs[k].cycles,
		       runs[k].cycles ? (double)runs[0].cycles / runs[k].cycles : 0,
		       runs[k].wall * 1e3);
	if (!failed && runs[2].cycles)
		printf("RESULT\tP9\t%.3f\tone dense launch, 1 core / 4 cores (makespan in device cycles)\t"
		       "gemm %lldx%lld, nk %lld: %llu / %llu cycles; 2 cores %.3f; wall clock 1/4 %.3f "
		       "(%.0f / %.0f ms), 1/2 %.3f: 4 cores are QEMU threads on 2 host CPUs\thigher\t3.6\n",
		       (double)runs[0].cycles / runs[2].cycles, (long long)p.ni, (long long)p.ni,
		       (long long)p.nk, (unsigned long long)runs[0].cycles,
		       (unsigned long long)runs[2].cycles,
		       (double)runs[0].cycles / runs[1].cycles, runs[0].wall / runs[2].wall,
		       runs[0].wall * 1e3, runs[2].wall * 1e3, runs[0].wall / runs[1].wall);
out:
	for (int i = 0; i < 2; i++) {
		loom_bo_free(d[i].bo);
		loom_device_close(all[i]);
	}
	loom_image_free(img);
	free(p.a);
	free(p.b);
	free(p.c);
	free(p.want);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
