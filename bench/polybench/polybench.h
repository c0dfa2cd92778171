/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * polybench.h: PolyBench/C 4.2's kernels as this directory's .loom files
 * run them, MINI dataset: for each, the published init_array, its launches
 * in the published order, and its arrays compared bit for bit with the
 * published loops in plain C (PolyBench's SCALAR_VAL makes every constant
 * an f32 one; floyd-warshall is i32, PolyBench's int).  Where the launches
 * run is the caller's (struct pb): compiler/tests/polybench_test.c on the
 * host engine, lib/tests/vm/polybench_vm_test.c on the device through
 * libloom.
 */
#ifndef LOOM_POLYBENCH_H
#define LOOM_POLYBENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/**
 * struct pb - where a kernel runs
 * @va: device VAs of its arrays A..G, 0x10000 bytes each
 * @ctx: passed back to the callbacks
 * @poke: writes @size bytes at @va
 * @peek: reads them
 * @launch: launches thread @name of the kernel's image over @extents (as
 *	many as its rank) with @args (its whole signature, memrefs as VAs)
 *	and waits for it; 0, or non-zero after printing why not
 */
struct pb {
	uint64_t va[7];
	void *ctx;
	void (*poke)(void *ctx, uint64_t va, const void *data, size_t size);
	void (*peek)(void *ctx, uint64_t va, void *data, size_t size);
	int (*launch)(void *ctx, const char *name, const uint64_t *args,
		      const int64_t *extents);
};

#define A_VA	(e->va[0])
#define B_VA	(e->va[1])
#define C_VA	(e->va[2])
#define D_VA	(e->va[3])
#define E_VA	(e->va[4])
#define F_VA	(e->va[5])
#define G_VA	(e->va[6])
#define PB_ARRAY_SIZE	0x10000

/* struct kernel's @unmapped: the fabrics it is expected not to map on */
#define ON_4X4	1U
#define ON_8X8	2U

static inline uint64_t f32_arg(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline void put(struct pb *e, uint64_t va, const float *v, size_t n)
{
	e->poke(e->ctx, va, v, n * sizeof(*v));
}

static inline void put_i32(struct pb *e, uint64_t va, const int32_t *v,
			   size_t n)
{
	e->poke(e->ctx, va, v, n * sizeof(*v));
}

/*
 * Whether the @n 4-byte elements at @va are @want's bits; prints the first
 * that is not (as a float, or with @i32 an integer).
 */
static inline bool same_bits(struct pb *e, const char *what, uint64_t va,
			     const void *want, size_t n, bool i32)
{
	uint32_t *got = malloc(n * 4), w;
	bool ok = true;

	if (!got)
		abort();
	e->peek(e->ctx, va, got, n * 4);
	for (size_t k = 0; k < n && ok; k++) {
		memcpy(&w, (const char *)want + 4 * k, 4);
		if (got[k] == w)
			continue;
		if (i32) {
			printf("#   %s[%zu] is %d, not %d\n", what, k,
			       (int32_t)got[k], (int32_t)w);
		} else {
			float g, f;

			memcpy(&g, &got[k], 4);
			memcpy(&f, &w, 4);
			printf("#   %s[%zu] is %a, not %a\n", what, k,
			       (double)g, (double)f);
		}
		ok = false;
	}
	free(got);
	return ok;
}

static inline bool same(struct pb *e, const char *what, uint64_t va,
			const float *want, size_t n)
{
	return same_bits(e, what, va, want, n, false);
}

static inline bool same_i32(struct pb *e, const char *what, uint64_t va,
			    const int32_t *want, size_t n)
{
	return same_bits(e, what, va, want, n, true);
}

/* Launches @name; false (the callback said why) unless it ran. */
static inline bool launch(struct pb *e, const char *name,
			  const uint64_t *args, const int64_t *extents)
{
	return e->launch(e->ctx, name, args, extents) == 0;
}

static const float alpha = 1.5f, beta = 1.2f;

/* ------------------------------------------------------------- gemm --- */

enum { GEMM_NI = 20, GEMM_NJ = 25, GEMM_NK = 30 };

static void gemm_init(float *C, float *A, float *B)
{
	for (int i = 0; i < GEMM_NI; i++)
		for (int j = 0; j < GEMM_NJ; j++)
			C[i * GEMM_NJ + j] = (float)((i * j + 1) % GEMM_NI) / GEMM_NI;
	for (int i = 0; i < GEMM_NI; i++)
		for (int k = 0; k < GEMM_NK; k++)
			A[i * GEMM_NK + k] = (float)(i * (k + 1) % GEMM_NK) / GEMM_NK;
	for (int k = 0; k < GEMM_NK; k++)
		for (int j = 0; j < GEMM_NJ; j++)
			B[k * GEMM_NJ + j] = (float)(k * (j + 2) % GEMM_NJ) / GEMM_NJ;
}

static void gemm_ref(float *C, const float *A, const float *B)
{
	for (int i = 0; i < GEMM_NI; i++) {
		for (int j = 0; j < GEMM_NJ; j++)
			C[i * GEMM_NJ + j] *= beta;
		for (int k = 0; k < GEMM_NK; k++)
			for (int j = 0; j < GEMM_NJ; j++)
				C[i * GEMM_NJ + j] += alpha * A[i * GEMM_NK + k] *
						      B[k * GEMM_NJ + j];
	}
}

/* gemm and gemm_tiled: @tile 1 or 2 elements a side per instance. */
static bool gemm_run(struct pb *e, const char *name, int tile)
{
	float C[GEMM_NI * GEMM_NJ], A[GEMM_NI * GEMM_NK], B[GEMM_NK * GEMM_NJ];
	uint64_t args[] = { f32_arg(alpha), f32_arg(beta), C_VA, A_VA, B_VA,
			    GEMM_NJ, GEMM_NK };
	int64_t ext[] = { (GEMM_NI + tile - 1) / tile, (GEMM_NJ + tile - 1) / tile };

	gemm_init(C, A, B);
	put(e, C_VA, C, GEMM_NI * GEMM_NJ);
	put(e, A_VA, A, GEMM_NI * GEMM_NK);
	put(e, B_VA, B, GEMM_NK * GEMM_NJ);
	if (!launch(e, name, args, ext))
		return false;
	gemm_ref(C, A, B);
	return same(e, "C", C_VA, C, GEMM_NI * GEMM_NJ);
}

static bool gemm(struct pb *e)
{
	return gemm_run(e, "gemm", 1);
}

static bool gemm_tiled(struct pb *e)
{
	return gemm_run(e, "gemm_tiled", 2);
}

/*
 * gemm over rank-2 memrefs: C, A and B as memref<?x?xf32>, each size a
 * launch operand, over the domain @ext (as many extents as the thread has
 * coordinates).
 */
static bool gemm_2d_run(struct pb *e, const char *thread, const int64_t *ext)
{
	float C[GEMM_NI * GEMM_NJ], A[GEMM_NI * GEMM_NK], B[GEMM_NK * GEMM_NJ];
	uint64_t args[] = { f32_arg(alpha), f32_arg(beta), C_VA, A_VA, B_VA,
			    GEMM_NI, GEMM_NJ, GEMM_NI, GEMM_NK, GEMM_NK, GEMM_NJ };

	gemm_init(C, A, B);
	put(e, C_VA, C, GEMM_NI * GEMM_NJ);
	put(e, A_VA, A, GEMM_NI * GEMM_NK);
	put(e, B_VA, B, GEMM_NK * GEMM_NJ);
	if (!launch(e, thread, args, ext))
		return false;
	gemm_ref(C, A, B);
	return same(e, "C", C_VA, C, GEMM_NI * GEMM_NJ);
}

/* gemm_subview: one instance per element of each 5x5 tile of C. */
static bool gemm_subview(struct pb *e)
{
	static const int64_t ext[] = { GEMM_NI / 5, GEMM_NJ / 5, 5, 5 };

	return gemm_2d_run(e, "gemm_subview", ext);
}

/* gemm_in_place: one instance per 5x5 tile of C, updated in place. */
static bool gemm_in_place(struct pb *e)
{
	static const int64_t ext[] = { GEMM_NI / 5, GEMM_NJ / 5 };

	return gemm_2d_run(e, "gemm_in_place", ext);
}

/* ---------------------------------------------------------- gesummv --- */

enum { GESUMMV_N = 40 };

static bool gesummv(struct pb *e)
{
	enum { N = GESUMMV_N };
	static float A[N * N], B[N * N];
	float x[N], tmp[N], y[N];
	uint64_t args[] = { f32_arg(alpha), f32_arg(beta), A_VA, B_VA, C_VA,
			    D_VA, E_VA, N };
	int64_t ext[] = { N };

	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % N) / N;
		for (int j = 0; j < N; j++) {
			A[i * N + j] = (float)((i * j + 1) % N) / N;
			B[i * N + j] = (float)((i * j + 2) % N) / N;
		}
	}
	put(e, A_VA, A, N * N);
	put(e, B_VA, B, N * N);
	put(e, D_VA, x, N);
	if (!launch(e, "gesummv", args, ext))
		return false;
	for (int i = 0; i < N; i++) {
		tmp[i] = 0.0f;
		y[i] = 0.0f;
		for (int j = 0; j < N; j++) {
			tmp[i] = A[i * N + j] * x[j] + tmp[i];
			y[i] = B[i * N + j] * x[j] + y[i];
		}
		y[i] = alpha * tmp[i] + beta * y[i];
	}
	return same(e, "tmp", C_VA, tmp, N) && same(e, "y", E_VA, y, N);
}

/* ------------------------------------------------------------- syrk --- */

static bool syrk_run(struct pb *e, const char *name)
{
	enum { M = 20, N = 30 };
	float A[N * M], C[N * N];
	uint64_t args[] = { f32_arg(alpha), f32_arg(beta), C_VA, A_VA, N, M };
	int64_t ext[] = { N, N };

	for (int i = 0; i < N; i++)
		for (int j = 0; j < M; j++)
			A[i * M + j] = (float)((i * j + 1) % N) / N;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			C[i * N + j] = (float)((i * j + 2) % M) / M;
	put(e, A_VA, A, N * M);
	put(e, C_VA, C, N * N);
	if (!launch(e, name, args, ext))
		return false;
	for (int i = 0; i < N; i++) {
		for (int j = 0; j <= i; j++)
			C[i * N + j] *= beta;
		for (int k = 0; k < M; k++)
			for (int j = 0; j <= i; j++)
				C[i * N + j] += alpha * A[i * M + k] * A[j * M + k];
	}
	return same(e, "C", C_VA, C, N * N);
}

/* syrk selects the old value above the diagonal, syrk_if skips it */
static bool syrk(struct pb *e)
{
	return syrk_run(e, "syrk");
}

static bool syrk_if(struct pb *e)
{
	return syrk_run(e, "syrk_if");
}

/* ------------------------------------------------------------- trmm --- */

/*
 * trmm (rank-1 A and B, then i, m, n) and trmm_if (A and B as
 * memref<?x?xf32>, each with its two sizes, then i): one launch per row.
 */
static bool trmm_run(struct pb *e, const char *thread, bool rank2)
{
	enum { M = 20, N = 30 };
	float A[M * M] = { 0 }, B[M * N];
	int64_t ext[] = { N };

	for (int i = 0; i < M; i++) {
		for (int j = 0; j < i; j++)
			A[i * M + j] = (float)((i + j) % M) / M;
		A[i * M + i] = 1.0f;
		for (int j = 0; j < N; j++)
			B[i * N + j] = (float)((N + (i - j)) % N) / N;
	}
	put(e, A_VA, A, M * M);
	put(e, B_VA, B, M * N);
	for (int i = 0; i < M; i++) {
		uint64_t args[] = { f32_arg(alpha), A_VA, B_VA, i, M, N };
		uint64_t args2[] = { f32_arg(alpha), A_VA, B_VA, i, M, M, M, N };

		if (!launch(e, thread, rank2 ? args2 : args, ext))
			return false;
	}
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			for (int k = i + 1; k < M; k++)
				B[i * N + j] += A[k * M + i] * B[k * N + j];
			B[i * N + j] = alpha * B[i * N + j];
		}
	return same(e, "B", B_VA, B, M * N);
}

static bool trmm(struct pb *e)
{
	return trmm_run(e, "trmm", false);
}

static bool trmm_if(struct pb *e)
{
	return trmm_run(e, "trmm_if", true);
}

/* -------------------------------------------------------- seidel-2d --- */

static bool seidel_2d(struct pb *e)
{
	enum { TSTEPS = 20, N = 40 };
	float A[N * N];

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			A[i * N + j] = ((float)i * (j + 2) + 2) / N;
	put(e, A_VA, A, N * N);
	/* the wavefronts w = 2i + j of the interior, i and j in 1..N-2 */
	for (int t = 0; t < TSTEPS; t++)
		for (int w = 3; w <= 3 * (N - 2); w++) {
			int ilo = (w - (N - 2) + 1) / 2, ihi = (w - 1) / 2;
			uint64_t args[4] = { A_VA, N, w, 0 };
			int64_t ext[1];

			if (ilo < 1)
				ilo = 1;
			if (ihi > N - 2)
				ihi = N - 2;
			args[3] = ilo;
			ext[0] = ihi - ilo + 1;
			if (ext[0] > 0 && !launch(e, "seidel_2d", args, ext))
				return false;
		}
	for (int t = 0; t < TSTEPS; t++)
		for (int i = 1; i <= N - 2; i++)
			for (int j = 1; j <= N - 2; j++)
				A[i * N + j] = (A[(i - 1) * N + j - 1] + A[(i - 1) * N + j] +
						A[(i - 1) * N + j + 1] + A[i * N + j - 1] +
						A[i * N + j] + A[i * N + j + 1] +
						A[(i + 1) * N + j - 1] + A[(i + 1) * N + j] +
						A[(i + 1) * N + j + 1]) / 9.0f;
	return same(e, "A", A_VA, A, N * N);
}

/* ------------------------------------------------------------- atax --- */

static bool atax(struct pb *e)
{
	enum { M = 38, N = 42 };
	float A[M * N], x[N], y[N], tmp[M];
	uint64_t targs[] = { A_VA, B_VA, C_VA, N };
	uint64_t yargs[] = { A_VA, C_VA, D_VA, M, N };
	int64_t text[] = { M }, yext[] = { N };
	float fn = (float)N;

	for (int i = 0; i < N; i++)
		x[i] = 1 + (i / fn);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			A[i * N + j] = (float)((i + j) % N) / (5 * M);
	put(e, A_VA, A, M * N);
	put(e, B_VA, x, N);
	if (!launch(e, "atax_tmp", targs, text) ||
	    !launch(e, "atax_y", yargs, yext))
		return false;
	for (int i = 0; i < N; i++)
		y[i] = 0;
	for (int i = 0; i < M; i++) {
		tmp[i] = 0.0f;
		for (int j = 0; j < N; j++)
			tmp[i] = tmp[i] + A[i * N + j] * x[j];
		for (int j = 0; j < N; j++)
			y[j] = y[j] + A[i * N + j] * tmp[i];
	}
	return same(e, "tmp", C_VA, tmp, M) && same(e, "y", D_VA, y, N);
}

/* ------------------------------------------------------------- bicg --- */

static bool bicg(struct pb *e)
{
	enum { M = 38, N = 42 };
	float A[N * M], p[M], r[N], s[M], q[N];
	uint64_t qargs[] = { A_VA, B_VA, C_VA, M };
	uint64_t sargs[] = { A_VA, D_VA, E_VA, N, M };
	int64_t qext[] = { N }, sext[] = { M };

	for (int i = 0; i < M; i++)
		p[i] = (float)(i % M) / M;
	for (int i = 0; i < N; i++) {
		r[i] = (float)(i % N) / N;
		for (int j = 0; j < M; j++)
			A[i * M + j] = (float)(i * (j + 1) % N) / N;
	}
	put(e, A_VA, A, N * M);
	put(e, B_VA, p, M);
	put(e, D_VA, r, N);
	if (!launch(e, "bicg_q", qargs, qext) ||
	    !launch(e, "bicg_s", sargs, sext))
		return false;
	for (int i = 0; i < M; i++)
		s[i] = 0;
	for (int i = 0; i < N; i++) {
		q[i] = 0.0f;
		for (int j = 0; j < M; j++) {
			s[j] = s[j] + r[i] * A[i * M + j];
			q[i] = q[i] + A[i * M + j] * p[j];
		}
	}
	return same(e, "q", C_VA, q, N) && same(e, "s", E_VA, s, M);
}

/* -------------------------------------------------------------- mvt --- */

static bool mvt(struct pb *e)
{
	enum { N = 40 };
	static float A[N * N];
	float x1[N], x2[N], y1[N], y2[N];
	uint64_t args1[] = { A_VA, B_VA, C_VA, N };
	uint64_t args2[] = { A_VA, D_VA, E_VA, N };
	int64_t ext[] = { N };

	for (int i = 0; i < N; i++) {
		x1[i] = (float)(i % N) / N;
		x2[i] = (float)((i + 1) % N) / N;
		y1[i] = (float)((i + 3) % N) / N;
		y2[i] = (float)((i + 4) % N) / N;
		for (int j = 0; j < N; j++)
			A[i * N + j] = (float)(i * j % N) / N;
	}
	put(e, A_VA, A, N * N);
	put(e, B_VA, y1, N);
	put(e, C_VA, x1, N);
	put(e, D_VA, y2, N);
	put(e, E_VA, x2, N);
	if (!launch(e, "mvt_x1", args1, ext) || !launch(e, "mvt_x2", args2, ext))
		return false;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			x1[i] = x1[i] + A[i * N + j] * y1[j];
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			x2[i] = x2[i] + A[j * N + i] * y2[j];
	return same(e, "x1", C_VA, x1, N) && same(e, "x2", E_VA, x2, N);
}

/* -------------------------------------------------------- jacobi-1d --- */

static bool jacobi_1d(struct pb *e)
{
	enum { TSTEPS = 20, N = 30 };
	float A[N], B[N];
	uint64_t ab[] = { A_VA, B_VA }, ba[] = { B_VA, A_VA };
	int64_t ext[] = { N - 2 };

	for (int i = 0; i < N; i++) {
		A[i] = ((float)i + 2) / N;
		B[i] = ((float)i + 3) / N;
	}
	put(e, A_VA, A, N);
	put(e, B_VA, B, N);
	for (int t = 0; t < TSTEPS; t++)
		if (!launch(e, "jacobi_1d", ab, ext) ||
		    !launch(e, "jacobi_1d", ba, ext))
			return false;
	for (int t = 0; t < TSTEPS; t++) {
		for (int i = 1; i < N - 1; i++)
			B[i] = 0.33333f * (A[i - 1] + A[i] + A[i + 1]);
		for (int i = 1; i < N - 1; i++)
			A[i] = 0.33333f * (B[i - 1] + B[i] + B[i + 1]);
	}
	return same(e, "A", A_VA, A, N) && same(e, "B", B_VA, B, N);
}

/* -------------------------------------------------------- jacobi-2d --- */

enum { JACOBI_2D_N = 30 };

/*
 * jacobi_2d (@ab, @ba: A, B and n, linearised) and jacobi_2d_views (A and
 * B as memref<?x?xf32>, then the sizes of each).
 */
static bool jacobi_2d_run(struct pb *e, const char *name, const uint64_t *ab,
			  const uint64_t *ba)
{
	enum { TSTEPS = 20, N = JACOBI_2D_N };
	float A[N * N], B[N * N];
	int64_t ext[] = { N - 2, N - 2 };

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			A[i * N + j] = ((float)i * (j + 2) + 2) / N;
			B[i * N + j] = ((float)i * (j + 3) + 3) / N;
		}
	put(e, A_VA, A, N * N);
	put(e, B_VA, B, N * N);
	for (int t = 0; t < TSTEPS; t++)
		if (!launch(e, name, ab, ext) || !launch(e, name, ba, ext))
			return false;
	for (int t = 0; t < TSTEPS; t++) {
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				B[i * N + j] = 0.2f * (A[i * N + j] + A[i * N + j - 1] +
						       A[i * N + 1 + j] + A[(1 + i) * N + j] +
						       A[(i - 1) * N + j]);
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				A[i * N + j] = 0.2f * (B[i * N + j] + B[i * N + j - 1] +
						       B[i * N + 1 + j] + B[(1 + i) * N + j] +
						       B[(i - 1) * N + j]);
	}
	return same(e, "A", A_VA, A, N * N) && same(e, "B", B_VA, B, N * N);
}

static bool jacobi_2d(struct pb *e)
{
	uint64_t ab[] = { A_VA, B_VA, JACOBI_2D_N }, ba[] = { B_VA, A_VA, JACOBI_2D_N };

	return jacobi_2d_run(e, "jacobi_2d", ab, ba);
}

static bool jacobi_2d_views(struct pb *e)
{
	enum { N = JACOBI_2D_N };
	uint64_t ab[] = { A_VA, B_VA, N, N, N, N }, ba[] = { B_VA, A_VA, N, N, N, N };

	return jacobi_2d_run(e, "jacobi_2d_views", ab, ba);
}

/* ---------------------------------------------------------- trisolv --- */

static bool trisolv(struct pb *e)
{
	enum { N = 40 };
	float L[N * N] = { 0 }, x[N], b[N];
	int64_t ext[] = { 1 };

	for (int i = 0; i < N; i++) {
		x[i] = -999;
		b[i] = i;
		for (int j = 0; j <= i; j++)
			L[i * N + j] = (float)(i + N - j + 1) * 2 / N;
	}
	put(e, A_VA, L, N * N);
	put(e, B_VA, x, N);
	put(e, C_VA, b, N);
	for (int i = 0; i < N; i++) {
		uint64_t args[] = { A_VA, B_VA, C_VA, i, N };

		if (!launch(e, "trisolv", args, ext))
			return false;
	}
	for (int i = 0; i < N; i++) {
		x[i] = b[i];
		for (int j = 0; j < i; j++)
			x[i] -= L[i * N + j] * x[j];
		x[i] = x[i] / L[i * N + i];
	}
	return same(e, "x", B_VA, x, N);
}

/* -------------------------------------------------------------- 2mm --- */

/* 2mm (a C name cannot start with a digit) */
static bool mm2(struct pb *e)
{
	enum { NI = 16, NJ = 18, NK = 22, NL = 24 };
	float A[NI * NK], B[NK * NJ], C[NJ * NL], D[NI * NL], tmp[NI * NJ];
	uint64_t targs[] = { f32_arg(alpha), E_VA, A_VA, B_VA, NJ, NK };
	uint64_t dargs[] = { f32_arg(beta), D_VA, E_VA, C_VA, NJ, NL };
	int64_t text[] = { NI, NJ }, dext[] = { NI, NL };

	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NK; j++)
			A[i * NK + j] = (float)((i * j + 1) % NI) / NI;
	for (int i = 0; i < NK; i++)
		for (int j = 0; j < NJ; j++)
			B[i * NJ + j] = (float)(i * (j + 1) % NJ) / NJ;
	for (int i = 0; i < NJ; i++)
		for (int j = 0; j < NL; j++)
			C[i * NL + j] = (float)((i * (j + 3) + 1) % NL) / NL;
	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NL; j++)
			D[i * NL + j] = (float)(i * (j + 2) % NK) / NK;
	put(e, A_VA, A, NI * NK);
	put(e, B_VA, B, NK * NJ);
	put(e, C_VA, C, NJ * NL);
	put(e, D_VA, D, NI * NL);
	if (!launch(e, "2mm_tmp", targs, text) ||
	    !launch(e, "2mm_d", dargs, dext))
		return false;
	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NJ; j++) {
			tmp[i * NJ + j] = 0.0f;
			for (int k = 0; k < NK; ++k)
				tmp[i * NJ + j] += alpha * A[i * NK + k] * B[k * NJ + j];
		}
	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NL; j++) {
			D[i * NL + j] *= beta;
			for (int k = 0; k < NJ; ++k)
				D[i * NL + j] += tmp[i * NJ + k] * C[k * NL + j];
		}
	return same(e, "tmp", E_VA, tmp, NI * NJ) && same(e, "D", D_VA, D, NI * NL);
}

/* -------------------------------------------------------------- 3mm --- */

/* 3mm: E = A B, F = C D, G = E F, three launches of one thread */
static bool mm3(struct pb *e)
{
	enum { NI = 16, NJ = 18, NK = 20, NL = 22, NM = 24 };
	float A[NI * NK], B[NK * NJ], C[NJ * NM], D[NM * NL];
	float E[NI * NJ], F[NJ * NL], G[NI * NL];
	uint64_t eargs[] = { E_VA, A_VA, B_VA, NJ, NK };
	uint64_t fargs[] = { F_VA, C_VA, D_VA, NL, NM };
	uint64_t gargs[] = { G_VA, E_VA, F_VA, NL, NJ };
	int64_t eext[] = { NI, NJ }, fext[] = { NJ, NL }, gext[] = { NI, NL };

	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NK; j++)
			A[i * NK + j] = (float)((i * j + 1) % NI) / (5 * NI);
	for (int i = 0; i < NK; i++)
		for (int j = 0; j < NJ; j++)
			B[i * NJ + j] = (float)((i * (j + 1) + 2) % NJ) / (5 * NJ);
	for (int i = 0; i < NJ; i++)
		for (int j = 0; j < NM; j++)
			C[i * NM + j] = (float)(i * (j + 3) % NL) / (5 * NL);
	for (int i = 0; i < NM; i++)
		for (int j = 0; j < NL; j++)
			D[i * NL + j] = (float)((i * (j + 2) + 2) % NK) / (5 * NK);
	put(e, A_VA, A, NI * NK);
	put(e, B_VA, B, NK * NJ);
	put(e, C_VA, C, NJ * NM);
	put(e, D_VA, D, NM * NL);
	if (!launch(e, "3mm", eargs, eext) || !launch(e, "3mm", fargs, fext) ||
	    !launch(e, "3mm", gargs, gext))
		return false;
	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NJ; j++) {
			E[i * NJ + j] = 0.0f;
			for (int k = 0; k < NK; ++k)
				E[i * NJ + j] += A[i * NK + k] * B[k * NJ + j];
		}
	for (int i = 0; i < NJ; i++)
		for (int j = 0; j < NL; j++) {
			F[i * NL + j] = 0.0f;
			for (int k = 0; k < NM; ++k)
				F[i * NL + j] += C[i * NM + k] * D[k * NL + j];
		}
	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NL; j++) {
			G[i * NL + j] = 0.0f;
			for (int k = 0; k < NJ; ++k)
				G[i * NL + j] += E[i * NJ + k] * F[k * NL + j];
		}
	return same(e, "E", E_VA, E, NI * NJ) && same(e, "F", F_VA, F, NJ * NL) &&
	       same(e, "G", G_VA, G, NI * NL);
}

/* ------------------------------------------------------------ syr2k --- */

static bool syr2k(struct pb *e)
{
	enum { M = 20, N = 30 };
	float A[N * M], B[N * M], C[N * N];
	uint64_t args[] = { f32_arg(alpha), f32_arg(beta), C_VA, A_VA, B_VA, N, M };
	int64_t ext[] = { N, N };

	for (int i = 0; i < N; i++)
		for (int j = 0; j < M; j++) {
			A[i * M + j] = (float)((i * j + 1) % N) / N;
			B[i * M + j] = (float)((i * j + 2) % M) / M;
		}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			C[i * N + j] = (float)((i * j + 3) % N) / M;
	put(e, A_VA, A, N * M);
	put(e, B_VA, B, N * M);
	put(e, C_VA, C, N * N);
	if (!launch(e, "syr2k", args, ext))
		return false;
	for (int i = 0; i < N; i++) {
		for (int j = 0; j <= i; j++)
			C[i * N + j] *= beta;
		for (int k = 0; k < M; k++)
			for (int j = 0; j <= i; j++)
				C[i * N + j] += A[j * M + k] * alpha * B[i * M + k] +
						B[j * M + k] * alpha * A[i * M + k];
	}
	return same(e, "C", C_VA, C, N * N);
}

/* ------------------------------------------------------------- symm --- */

static bool symm(struct pb *e)
{
	enum { M = 20, N = 30 };
	float A[M * M], B[M * N], C[M * N];
	uint64_t sargs[] = { f32_arg(alpha), f32_arg(beta), C_VA, A_VA, B_VA, M, N };
	uint64_t aargs[] = { f32_arg(alpha), C_VA, A_VA, B_VA, M, N };
	int64_t ext[] = { M, N };

	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			C[i * N + j] = (float)((i + j) % 100) / M;
			B[i * N + j] = (float)((N + i - j) % 100) / M;
		}
	for (int i = 0; i < M; i++) {
		for (int j = 0; j <= i; j++)
			A[i * M + j] = (float)((i + j) % 100) / M;
		for (int j = i + 1; j < M; j++)
			A[i * M + j] = -999;
	}
	put(e, A_VA, A, M * M);
	put(e, B_VA, B, M * N);
	put(e, C_VA, C, M * N);
	if (!launch(e, "symm_set", sargs, ext) ||
	    !launch(e, "symm_add", aargs, ext))
		return false;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float temp2 = 0;

			for (int k = 0; k < i; k++) {
				C[k * N + j] += alpha * B[i * N + j] * A[i * M + k];
				temp2 += B[k * N + j] * A[i * M + k];
			}
			C[i * N + j] = beta * C[i * N + j] +
				       alpha * B[i * N + j] * A[i * M + i] +
				       alpha * temp2;
		}
	return same(e, "C", C_VA, C, M * N);
}

/* ---------------------------------------------------------- fdtd-2d --- */

static bool fdtd_2d(struct pb *e)
{
	enum { TMAX = 20, NX = 20, NY = 30 };
	float ex[NX * NY], ey[NX * NY], hz[NX * NY], fict[TMAX];
	uint64_t eyargs[] = { B_VA, C_VA, NY }, exargs[] = { A_VA, C_VA, NY };
	uint64_t hzargs[] = { C_VA, A_VA, B_VA, NY };
	int64_t ey0ext[] = { NY }, eyext[] = { NX - 1, NY };
	int64_t exext[] = { NX, NY - 1 }, hzext[] = { NX - 1, NY - 1 };

	for (int i = 0; i < TMAX; i++)
		fict[i] = (float)i;
	for (int i = 0; i < NX; i++)
		for (int j = 0; j < NY; j++) {
			ex[i * NY + j] = ((float)i * (j + 1)) / NX;
			ey[i * NY + j] = ((float)i * (j + 2)) / NY;
			hz[i * NY + j] = ((float)i * (j + 3)) / NX;
		}
	put(e, A_VA, ex, NX * NY);
	put(e, B_VA, ey, NX * NY);
	put(e, C_VA, hz, NX * NY);
	put(e, D_VA, fict, TMAX);
	for (int t = 0; t < TMAX; t++) {
		uint64_t ey0args[] = { B_VA, D_VA, t };

		if (!launch(e, "fdtd_2d_ey0", ey0args, ey0ext) ||
		    !launch(e, "fdtd_2d_ey", eyargs, eyext) ||
		    !launch(e, "fdtd_2d_ex", exargs, exext) ||
		    !launch(e, "fdtd_2d_hz", hzargs, hzext))
			return false;
	}
	for (int t = 0; t < TMAX; t++) {
		for (int j = 0; j < NY; j++)
			ey[j] = fict[t];
		for (int i = 1; i < NX; i++)
			for (int j = 0; j < NY; j++)
				ey[i * NY + j] = ey[i * NY + j] -
						 0.5f * (hz[i * NY + j] - hz[(i - 1) * NY + j]);
		for (int i = 0; i < NX; i++)
			for (int j = 1; j < NY; j++)
				ex[i * NY + j] = ex[i * NY + j] -
						 0.5f * (hz[i * NY + j] - hz[i * NY + j - 1]);
		for (int i = 0; i < NX - 1; i++)
			for (int j = 0; j < NY - 1; j++)
				hz[i * NY + j] = hz[i * NY + j] -
						 0.7f * (ex[i * NY + j + 1] - ex[i * NY + j] +
							 ey[(i + 1) * NY + j] - ey[i * NY + j]);
	}
	return same(e, "ex", A_VA, ex, NX * NY) && same(e, "ey", B_VA, ey, NX * NY) &&
	       same(e, "hz", C_VA, hz, NX * NY);
}

/* ---------------------------------------------------------- heat-3d --- */

enum { HEAT_3D_N = 10 };

/* The published update of point (@i, @j, @k) from @X, n x n x n. */
static float heat_3d_point(const float *X, int i, int j, int k)
{
	enum { N = HEAT_3D_N };
#define X_(i, j, k)	X[((i) * N + (j)) * N + (k)]
	return 0.125f * (X_(i + 1, j, k) - 2.0f * X_(i, j, k) + X_(i - 1, j, k))
	     + 0.125f * (X_(i, j + 1, k) - 2.0f * X_(i, j, k) + X_(i, j - 1, k))
	     + 0.125f * (X_(i, j, k + 1) - 2.0f * X_(i, j, k) + X_(i, j, k - 1))
	     + X_(i, j, k);
#undef X_
}

static bool heat_3d(struct pb *e)
{
	enum { TSTEPS = 20, N = HEAT_3D_N };
	float A[N * N * N], B[N * N * N];
	uint64_t ab[] = { A_VA, B_VA, N }, ba[] = { B_VA, A_VA, N };
	int64_t ext[] = { N - 2, N - 2, N - 2 };

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			for (int k = 0; k < N; k++)
				A[(i * N + j) * N + k] = B[(i * N + j) * N + k] =
					(float)(i + j + (N - k)) * 10 / N;
	put(e, A_VA, A, N * N * N);
	put(e, B_VA, B, N * N * N);
	for (int t = 1; t <= TSTEPS; t++)
		if (!launch(e, "heat_3d", ab, ext) || !launch(e, "heat_3d", ba, ext))
			return false;
	for (int t = 1; t <= TSTEPS; t++) {
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				for (int k = 1; k < N - 1; k++)
					B[(i * N + j) * N + k] = heat_3d_point(A, i, j, k);
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				for (int k = 1; k < N - 1; k++)
					A[(i * N + j) * N + k] = heat_3d_point(B, i, j, k);
	}
	return same(e, "A", A_VA, A, N * N * N) && same(e, "B", B_VA, B, N * N * N);
}

/* --------------------------------------------------- floyd-warshall --- */

static bool floyd_warshall(struct pb *e)
{
	enum { N = 60 };
	static int32_t path[N * N];
	int64_t ext[] = { N, N };

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			path[i * N + j] = i * j % 7 + 1;
			if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0)
				path[i * N + j] = 999;
		}
	put_i32(e, A_VA, path, N * N);
	for (int k = 0; k < N; k++) {
		uint64_t args[] = { A_VA, k, N };

		if (!launch(e, "floyd_warshall", args, ext))
			return false;
	}
	for (int k = 0; k < N; k++)
		for (int i = 0; i < N; i++)
			for (int j = 0; j < N; j++) {
				int32_t via = path[i * N + k] + path[k * N + j];

				path[i * N + j] = path[i * N + j] < via ? path[i * N + j] : via;
			}
	return same_i32(e, "path", A_VA, path, N * N);
}

/* ------------------------------------------------------------ table --- */

/**
 * struct kernel - one PolyBench kernel
 * @name: its file, bench/polybench/@name.loom
 * @run: sets up its arrays, launches its threads and compares
 * @unmapped: the fabrics (ON_4X4, ON_8X8) it is expected not to map on
 */
struct kernel {
	const char *name;
	bool (*run)(struct pb *e);
	unsigned unmapped;
};

static const struct kernel kernels[] = {
	{ "gemm", gemm, 0 },
	{ "gemm_tiled", gemm_tiled, 0 },
	{ "gemm_subview", gemm_subview, 0 },
	{ "gemm_in_place", gemm_in_place, 0 },
	{ "gesummv", gesummv, 0 },
	{ "syrk", syrk, 0 },
	{ "syrk_if", syrk_if, 0 },
	{ "trmm", trmm, 0 },
	{ "trmm_if", trmm_if, 0 },
	{ "seidel_2d", seidel_2d, 0 },
	{ "atax", atax, 0 },
	{ "bicg", bicg, 0 },
	{ "mvt", mvt, 0 },
	{ "jacobi_1d", jacobi_1d, 0 },
	{ "jacobi_2d", jacobi_2d, 0 },
	{ "jacobi_2d_views", jacobi_2d_views, 0 },
	{ "trisolv", trisolv, 0 },
	{ "2mm", mm2, 0 },
	{ "3mm", mm3, 0 },
	{ "syr2k", syr2k, 0 },
	{ "symm", symm, 0 },
	{ "fdtd_2d", fdtd_2d, 0 },
	{ "heat_3d", heat_3d, 0 },
	{ "floyd_warshall", floyd_warshall, 0 },
};

#endif /* LOOM_POLYBENCH_H */
