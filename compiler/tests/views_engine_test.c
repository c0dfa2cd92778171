// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rank-N memrefs compiled and run: threads indexing memref<6x5xi64>,
 * memref<?x8xf32> and memref<2x3x4xi32> with one index per size, on the
 * host engine, against the same kernels written over rank-1 memrefs with
 * hand-linearised indices (bit for bit) and against plain C; what a view
 * costs (fabric operations, II) against the linearised form; and host
 * functions that allocate, fill and launch over rank-2 memrefs.
 */
#include "check.h"
#include "engine_run.h"
#include "front.h"
#include "place.h"

#define A_VA	(ER_DATA_VA)
#define B_VA	(ER_DATA_VA + 0x20000)
#define C_VA	(ER_DATA_VA + 0x40000)
#define D_VA	(ER_DATA_VA + 0x60000)

enum { M = 6, K = 5, N = 7 };

/* gemm C = A B over static rank-2 shapes, one item per element of C. */
static const char gemm2_src[] =
	"dataflow.thread private @gemm domain(#dataflow.thread_domain<dense>)(%a: memref<6x5xi64>, %b: memref<5x7xi64>, %c: memref<6x7xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c5 = arith.constant 5 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %dot = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %aik = memref.load %a[%i, %k] : memref<6x5xi64>\n"
	"    %bkj = memref.load %b[%k, %j] : memref<5x7xi64>\n"
	"    %p = arith.muli %aik, %bkj : i64\n"
	"    %s = arith.addi %acc, %p : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  memref.store %dot, %c[%i, %j] : memref<6x7xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* The same gemm as a user writes it without views: i * N + j by hand. */
static const char gemm1_src[] =
	"dataflow.thread private @gemm domain(#dataflow.thread_domain<dense>)(%a: memref<30xi64>, %b: memref<35xi64>, %c: memref<42xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c5 = arith.constant 5 : index\n"
	"  %c7 = arith.constant 7 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %dot = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %ai = arith.muli %i, %c5 : index\n"
	"    %aat = arith.addi %ai, %k : index\n"
	"    %aik = memref.load %a[%aat] : memref<30xi64>\n"
	"    %bk = arith.muli %k, %c7 : index\n"
	"    %bat = arith.addi %bk, %j : index\n"
	"    %bkj = memref.load %b[%bat] : memref<35xi64>\n"
	"    %p = arith.muli %aik, %bkj : i64\n"
	"    %s = arith.addi %acc, %p : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  %ci = arith.muli %i, %c7 : index\n"
	"  %cat = arith.addi %ci, %j : index\n"
	"  memref.store %dot, %c[%cat] : memref<42xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void gemm_run(const char *src, unsigned w, unsigned h, int64_t *c)
{
	int64_t a[M * K], b[K * N];
	uint64_t args[] = { A_VA, B_VA, C_VA };
	int64_t ext[] = { M, N };
	struct er e;

	REQUIRE(er_open(&e, src, w, h) == 0);
	for (int i = 0; i < M * K; i++)
		a[i] = (i * 37) % 11 - 5;
	for (int i = 0; i < K * N; i++)
		b[i] = i * i % 13 - 6;
	er_poke64(&e, A_VA, a, M * K);
	er_poke64(&e, B_VA, b, K * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "gemm", args, ext, 0, 0, 0));
	er_peek64(&e, C_VA, c, M * N);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			int64_t s = 0;

			for (int k = 0; k < K; k++)
				s += a[i * K + k] * b[k * N + j];
			CHECK_EQ(s, c[i * N + j]);
		}
	er_close(&e);
}

TEST(gemm_rank2_equals_linearised_4x4_and_8x8)
{
	int64_t c2[M * N], c1[M * N];

	gemm_run(gemm2_src, 4, 4, c2);
	gemm_run(gemm1_src, 4, 4, c1);
	CHECK(memcmp(c1, c2, sizeof(c1)) == 0);
	gemm_run(gemm2_src, 8, 8, c2);
	CHECK(memcmp(c1, c2, sizeof(c1)) == 0);
}

/* Constant strides fold into the multiply: a view costs nothing extra. */
TEST(rank2_costs_what_linearised_costs)
{
	int ops2, ops1;
	double ii2, ii1;

	front_cost_on_8x8(gemm2_src, &ops2, &ii2);
	front_cost_on_8x8(gemm1_src, &ops1, &ii1);
	printf("#   gemm rank-2: %d operations, II %.2f; linearised: %d, II %.2f\n",
	       ops2, ii2, ops1, ii1);
	CHECK(ops2 > 0 && ii2 > 0);
	CHECK_EQ(ops1, ops2);
	CHECK(ii2 <= ii1);
}

/*
 * f32 matvec over memref<?x8xf32>: the row count is dynamic, the row
 * length (the stride) static.  Compared bit for bit with the linearised
 * thread: same operations in the same order.
 */
static const char matvec2_src[] =
	"dataflow.thread private @mv domain(#dataflow.thread_domain<dense>)(%a: memref<?x8xf32>, %x: memref<8xf32>, %y: memref<?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %zero = arith.constant 0.0 : f32\n"
	"  %dot = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {\n"
	"    %aij = memref.load %a[%i, %j] : memref<?x8xf32>\n"
	"    %xj = memref.load %x[%j] : memref<8xf32>\n"
	"    %p = arith.mulf %aij, %xj : f32\n"
	"    %s = arith.addf %acc, %p : f32\n"
	"    scf.yield %s : f32\n"
	"  }\n"
	"  memref.store %dot, %y[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static const char matvec1_src[] =
	"dataflow.thread private @mv domain(#dataflow.thread_domain<dense>)(%a: memref<?xf32>, %x: memref<8xf32>, %y: memref<?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %zero = arith.constant 0.0 : f32\n"
	"  %dot = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {\n"
	"    %row = arith.muli %i, %c8 : index\n"
	"    %at = arith.addi %row, %j : index\n"
	"    %aij = memref.load %a[%at] : memref<?xf32>\n"
	"    %xj = memref.load %x[%j] : memref<8xf32>\n"
	"    %p = arith.mulf %aij, %xj : f32\n"
	"    %s = arith.addf %acc, %p : f32\n"
	"    scf.yield %s : f32\n"
	"  }\n"
	"  memref.store %dot, %y[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

enum { ROWS = 13 };

static void matvec_run(const char *src, uint32_t *y)
{
	float a[ROWS * 8], x[8];
	/* memref<?x8xf32>'s '?' is a launch operand after the inputs */
	uint64_t args[] = { A_VA, B_VA, C_VA, ROWS };
	int64_t ext[] = { ROWS };
	struct er e;

	REQUIRE(er_open(&e, src, 8, 8) == 0);
	for (int i = 0; i < ROWS * 8; i++)
		a[i] = (float)((i * 37) % 11 - 5) / 3.0f;
	for (int j = 0; j < 8; j++)
		x[j] = 1.0f / (float)(j + 1);
	fake_bus_poke(&e.bus, A_VA, a, sizeof(a));
	fake_bus_poke(&e.bus, B_VA, x, sizeof(x));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "mv", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, C_VA, y, ROWS * sizeof(*y));
	er_close(&e);
}

TEST(f32_matvec_dynamic_rows_bit_for_bit_8x8)
{
	uint32_t y2[ROWS], y1[ROWS];

	matvec_run(matvec2_src, y2);
	matvec_run(matvec1_src, y1);
	for (int i = 0; i < ROWS; i++)
		CHECK_EQ(y1[i], y2[i]);
	CHECK(y1[0] != 0);
}

/* Rank 3, every index an iv; constant indices fold into one offset. */
static const char rank3_src[] =
	"dataflow.thread private @r3 domain(#dataflow.thread_domain<dense>)(%m: memref<2x3x4xi32>, %corner: memref<2x2xi32>) ctrl(%ctl: none) iv(%i: index, %j: index, %k: index) {\n"
	"  %c100 = arith.constant 100 : index\n"
	"  %c10 = arith.constant 10 : index\n"
	"  %hi = arith.muli %i, %c100 : index\n"
	"  %mid = arith.muli %j, %c10 : index\n"
	"  %s = arith.addi %hi, %mid : index\n"
	"  %t = arith.addi %s, %k : index\n"
	"  %v = arith.index_cast %t : index to i32\n"
	"  memref.store %v, %m[%i, %j, %k] : memref<2x3x4xi32>\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %seven = arith.constant 7 : i32\n"
	"  memref.store %seven, %corner[%c1, %c1] : memref<2x2xi32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(rank3_stores_4x4)
{
	int32_t m[2 * 3 * 4], corner[4] = { 0 };
	uint64_t args[] = { A_VA, B_VA };
	int64_t ext[] = { 2, 3, 4 };
	struct er e;

	REQUIRE(er_open(&e, rank3_src, 4, 4) == 0);
	fake_bus_poke(&e.bus, B_VA, corner, sizeof(corner));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "r3", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, A_VA, m, sizeof(m));
	fake_bus_peek(&e.bus, B_VA, corner, sizeof(corner));
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 4; k++)
				CHECK_EQ(i * 100 + j * 10 + k, m[(i * 3 + j) * 4 + k]);
	CHECK_EQ(0, corner[0]);
	CHECK_EQ(0, corner[2]);
	CHECK_EQ(7, corner[3]);
	er_close(&e);
}

/*
 * A host function allocates rank-2 memrefs, fills one with two-index
 * stores, launches a thread over them and checks with two-index loads.
 */
static const char host_src[] =
	"dataflow.thread private @twice domain(#dataflow.thread_domain<dense>)(%src: memref<3x4xi64>, %dst: memref<?x4xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %v = memref.load %src[%i, %j] : memref<3x4xi64>\n"
	"  %w = arith.addi %v, %v : i64\n"
	"  memref.store %w, %dst[%i, %j] : memref<?x4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %src = memref.alloc() : memref<3x4xi64>\n"
	"  %dst = memref.alloc(%c3) : memref<?x4xi64>\n"
	"  scf.for %i = %c0 to %c3 step %c1 {\n"
	"    scf.for %j = %c0 to %c4 step %c1 {\n"
	"      %t = arith.muli %i, %c4 : index\n"
	"      %u = arith.addi %t, %j : index\n"
	"      %v = arith.index_cast %u : index to i64\n"
	"      memref.store %v, %src[%i, %j] : memref<3x4xi64>\n"
	"    }\n"
	"  }\n"
	"  %tok = dataflow.thread.launch @twice(%src, %dst) grid(%c3, %c4) : (memref<3x4xi64>, memref<?x4xi64>) -> !dataflow.thread_token\n"
	"  dataflow.thread.wait %tok : !dataflow.thread_token\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %x = memref.load %dst[%c2, %c3] : memref<?x4xi64>\n"
	"  %want = arith.constant WANT : i64\n"
	"  loom.check %x, %want : i64\n"
	"  %y = memref.load %dst[%c1, %c0] : memref<?x4xi64>\n"
	"  %eight = arith.constant 8 : i64\n"
	"  loom.check %y, %eight : i64\n"
	"  return\n"
	"}\n";

TEST(host_rank2_alloc_store_launch_load)
{
	CHECK_EQ(0, er_host_main_want(host_src, 2 * (2 * 4 + 3)));
	CHECK_EQ(1, er_host_main_want(host_src, 2 * (2 * 4 + 3) + 1));	/* the checks do check */
}

/*
 * floordivsi and ceildivsi by a variable and by a constant (the constant
 * a memref.dim of a static size), against C over mixed signs.
 */
static const char divs_src[] =
	"dataflow.thread private @divs domain(#dataflow.thread_domain<dense>)(%a: memref<?xi64>, %b: memref<?xi64>, %out: memref<?x4xi64>, %shape: memref<2x8xi32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xi64>\n"
	"  %y = memref.load %b[%i] : memref<?xi64>\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %f = arith.floordivsi %x, %y : i64\n"
	"  memref.store %f, %out[%i, %c0] : memref<?x4xi64>\n"
	"  %c = arith.ceildivsi %x, %y : i64\n"
	"  memref.store %c, %out[%i, %c1] : memref<?x4xi64>\n"
	"  %cols = memref.dim %shape, %c1 : memref<2x8xi32>\n"
	"  %xi = arith.index_cast %x : i64 to index\n"
	"  %f8 = arith.floordivsi %xi, %cols : index\n"
	"  %f8v = arith.index_cast %f8 : index to i64\n"
	"  memref.store %f8v, %out[%i, %c2] : memref<?x4xi64>\n"
	"  %c8 = arith.ceildivsi %xi, %cols : index\n"
	"  %c8v = arith.index_cast %c8 : index to i64\n"
	"  memref.store %c8v, %out[%i, %c3] : memref<?x4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return a % b && (a % b < 0) != (b < 0) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return a % b && (a % b < 0) == (b < 0) ? q + 1 : q;
}

TEST(floordivsi_ceildivsi_4x4_and_8x8)
{
	enum { NI = 40 };
	int64_t a[NI], b[NI], out[NI * 4];
	uint64_t args[] = { A_VA, B_VA, C_VA, D_VA, NI };	/* NI: out's '?' */
	int64_t ext[] = { NI };

	for (int i = 0; i < NI; i++) {
		a[i] = (i * 7) % 23 - 11;
		b[i] = (i % 9) - 4;
		if (b[i] == 0)
			b[i] = 3;
	}
	for (unsigned n = 4; n <= 8; n += 4) {
		struct er e;

		REQUIRE(er_open(&e, divs_src, n, n) == 0);
		er_poke64(&e, A_VA, a, NI);
		er_poke64(&e, B_VA, b, NI);
		CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "divs", args, ext, 0, 0, 0));
		er_peek64(&e, C_VA, out, NI * 4);
		for (int i = 0; i < NI; i++) {
			CHECK_EQ(floor_div(a[i], b[i]), out[i * 4]);
			CHECK_EQ(ceil_div(a[i], b[i]), out[i * 4 + 1]);
			CHECK_EQ(floor_div(a[i], 8), out[i * 4 + 2]);
			CHECK_EQ(ceil_div(a[i], 8), out[i * 4 + 3]);
		}
		er_close(&e);
	}
}

/*
 * The host program: memref.dim of an allocation's %n; divisions computed
 * by its ALU and folded by the verifier.
 */
static const char host_div_src[] =
	"func.func @main() {\n"
	"  %c5 = arith.constant 5 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %m = memref.alloc(%c5) : memref<?x3xi64>\n"
	"  %rows = memref.dim %m, %c0 : memref<?x3xi64>\n"
	"  %cols = memref.dim %m, %c1 : memref<?x3xi64>\n"
	"  %r = arith.index_cast %rows : index to i64\n"
	"  %five = arith.constant 5 : i64\n"
	"  loom.check %r, %five : i64\n"
	"  %neg = arith.constant -7 : index\n"
	"  %f = arith.floordivsi %neg, %cols : index\n"
	"  %c = arith.ceildivsi %neg, %rows : index\n"
	"  %fi = arith.index_cast %f : index to i64\n"
	"  %ci = arith.index_cast %c : index to i64\n"
	"  %m3 = arith.constant -3 : i64\n"
	"  %m1 = arith.constant -1 : i64\n"
	"  loom.check %fi, %m3 : i64\n"
	"  loom.check %ci, %m1 : i64\n"
	"  %two = arith.constant 2 : i64\n"
	"  memref.store %two, %m[%c0, %c1] : memref<?x3xi64>\n"
	"  %x = memref.load %m[%c0, %c1] : memref<?x3xi64>\n"
	"  %seven = arith.constant 7 : i64\n"
	"  %m7 = arith.constant -7 : i64\n"
	"  %q = arith.floordivsi %m7, %x : i64\n"
	"  %p = arith.ceildivsi %seven, %x : i64\n"
	"  %m4 = arith.constant -4 : i64\n"
	"  %four = arith.constant 4 : i64\n"
	"  loom.check %q, %m4 : i64\n"
	"  loom.check %p, %four : i64\n"
	"  %fq = arith.floordivsi %m7, %two : i64\n"
	"  %fp = arith.ceildivsi %seven, %two : i64\n"
	"  loom.check %fq, %m4 : i64\n"
	"  loom.check %fp, %four : i64\n"
	"  return\n"
	"}\n";

TEST(host_dim_and_divisions)
{
	CHECK_EQ(0, er_host_main(host_div_src));
}

/*
 * affine.apply, min and max with aliases and an inline map: sums,
 * products by constants, floordiv, ceildiv and mod of negative values
 * too, a constant result in a max, against C.
 */
static const char affine_src[] =
	"#tile = affine_map<(d0)[s0] -> (d0 * 4 + s0)>\n"
	"#lim = affine_map<(i)[n] -> (i + 4, n)>\n"
	"dataflow.thread private @aff domain(#dataflow.thread_domain<dense>)(%m: memref<?x3xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %t = affine.apply #tile(%i)[%c1]\n"
	"  %u = affine.min #lim(%i)[%n]\n"
	"  %v = affine.max affine_map<(d0) -> (d0 floordiv 3 - 2, d0 mod 5, -d0 ceildiv 2, 2 - d0, 7)>(%t)\n"
	"  %w = affine.apply affine_map<(d0, d1)[s0] -> ((d0 - 20) mod 7 - (d1 - 20) floordiv 6 + d1 * s0)>(%t, %i)[%n]\n"
	"  %xu = arith.index_cast %u : index to i64\n"
	"  %xv = arith.index_cast %v : index to i64\n"
	"  %xw = arith.index_cast %w : index to i64\n"
	"  memref.store %xu, %m[%i, %c0] : memref<?x3xi64>\n"
	"  memref.store %xv, %m[%i, %c1] : memref<?x3xi64>\n"
	"  memref.store %xw, %m[%i, %c2] : memref<?x3xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static int64_t max2(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

TEST(affine_apply_min_max_4x4_and_8x8)
{
	enum { NI = 30, LIMIT = 17 };
	int64_t out[NI * 3];
	uint64_t args[] = { A_VA, LIMIT, NI };	/* NI: m's '?' */
	int64_t ext[] = { NI };

	for (unsigned n = 4; n <= 8; n += 4) {
		struct er e;

		REQUIRE(er_open(&e, affine_src, n, n) == 0);
		CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "aff", args, ext, 0, 0, 0));
		er_peek64(&e, A_VA, out, NI * 3);
		for (int64_t i = 0; i < NI; i++) {
			int64_t t = i * 4 + 1, v;

			v = max2(floor_div(t, 3) - 2, ((t % 5) + 5) % 5);
			v = max2(v, max2(ceil_div(-t, 2), max2(2 - t, 7)));
			CHECK_EQ(i + 4 < LIMIT ? i + 4 : LIMIT, out[i * 3]);
			CHECK_EQ(v, out[i * 3 + 1]);
			CHECK_EQ((((t - 20) % 7) + 7) % 7 - floor_div(i - 20, 6) +
				 i * LIMIT, out[i * 3 + 2]);
		}
		er_close(&e);
	}
}

/* Host functions: an affine.min of a loop's tile, computed and folded. */
static const char host_affine_src[] =
	"#tile_end = affine_map<(d0)[s0] -> (d0 + 4, s0)>\n"
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %c10 = arith.constant 10 : index\n"
	"  %zero = arith.constant 0 : index\n"
	"  %sum = scf.for %i = %c0 to %c10 step %c4 iter_args(%acc = %zero) -> (index) {\n"
	"    %end = affine.min #tile_end(%i)[%c10]\n"
	"    %len = affine.apply affine_map<(d0, d1) -> (d1 - d0)>(%i, %end)\n"
	"    %next = arith.addi %acc, %len : index\n"
	"    scf.yield %next : index\n"
	"  }\n"
	"  %s = arith.index_cast %sum : index to i64\n"
	"  %ten = arith.constant 10 : i64\n"
	"  loom.check %s, %ten : i64\n"
	"  %k = affine.max affine_map<()[s0] -> (s0 ceildiv 4, 2)>()[%c10]\n"
	"  %ki = arith.index_cast %k : index to i64\n"
	"  %three = arith.constant 3 : i64\n"
	"  loom.check %ki, %three : i64\n"
	"  return\n"
	"}\n";

TEST(host_affine_tiles)
{
	CHECK_EQ(0, er_host_main(host_affine_src));
}

/*
 * gemm over memref<?x?xi64>: every size a launch operand after the
 * inputs, the loop bound a memref.dim of one; the same results as the
 * static and linearised forms.
 */
static const char gemm_dyn_src[] =
	"dataflow.thread private @gemm domain(#dataflow.thread_domain<dense>)(%a: memref<?x?xi64>, %b: memref<?x?xi64>, %c: memref<?x?xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %k_end = memref.dim %a, %c1 : memref<?x?xi64>\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %dot = scf.for %k = %c0 to %k_end step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %aik = memref.load %a[%i, %k] : memref<?x?xi64>\n"
	"    %bkj = memref.load %b[%k, %j] : memref<?x?xi64>\n"
	"    %p = arith.muli %aik, %bkj : i64\n"
	"    %s = arith.addi %acc, %p : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  memref.store %dot, %c[%i, %j] : memref<?x?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(gemm_dynamic_sizes_equals_static_4x4_and_8x8)
{
	int64_t a[M * K], b[K * N], c[M * N], want[M * N];
	/* a, b, c, then a's sizes, b's, c's */
	uint64_t args[] = { A_VA, B_VA, C_VA, M, K, K, N, M, N };
	int64_t ext[] = { M, N };

	gemm_run(gemm2_src, 4, 4, want);
	for (int i = 0; i < M * K; i++)
		a[i] = (i * 37) % 11 - 5;
	for (int i = 0; i < K * N; i++)
		b[i] = i * i % 13 - 6;
	for (unsigned n = 4; n <= 8; n += 4) {
		struct er e;

		REQUIRE(er_open(&e, gemm_dyn_src, n, n) == 0);
		CHECK_EQ(9, loom_view_thread(&e.view, 0).num_args);
		er_poke64(&e, A_VA, a, M * K);
		er_poke64(&e, B_VA, b, K * N);
		CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "gemm", args, ext, 0, 0, 0));
		er_peek64(&e, C_VA, c, M * N);
		CHECK(memcmp(c, want, sizeof(c)) == 0);
		er_close(&e);
	}
}

/* A host function allocates memref<?x?xi64>, launches with its sizes. */
static const char host_dyn_src[] =
	"dataflow.thread private @fill domain(#dataflow.thread_domain<dense>)(%m: memref<?x?xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %cols = memref.dim %m, %c1 : memref<?x?xi64>\n"
	"  %t = arith.muli %i, %cols : index\n"
	"  %u = arith.addi %t, %j : index\n"
	"  %v = arith.index_cast %u : index to i64\n"
	"  memref.store %v, %m[%i, %j] : memref<?x?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c5 = arith.constant 5 : index\n"
	"  %m = memref.alloc(%c3, %c5) : memref<?x?xi64>\n"
	"  %rows = memref.dim %m, %c0 : memref<?x?xi64>\n"
	"  %cols = memref.dim %m, %c1 : memref<?x?xi64>\n"
	"  %tok = dataflow.thread.launch @fill(%m) grid(%rows, %cols) : (memref<?x?xi64>) -> !dataflow.thread_token\n"
	"  dataflow.thread.wait %tok : !dataflow.thread_token\n"
	"  %x = memref.load %m[%c2, %c3] : memref<?x?xi64>\n"
	"  %want = arith.constant 13 : i64\n"
	"  loom.check %x, %want : i64\n"
	"  return\n"
	"}\n";

TEST(host_dynamic_rank2_launch)
{
	CHECK_EQ(0, er_host_main(host_dyn_src));
}

int main(void)
{
	RUN(gemm_rank2_equals_linearised_4x4_and_8x8);
	RUN(rank2_costs_what_linearised_costs);
	RUN(f32_matvec_dynamic_rows_bit_for_bit_8x8);
	RUN(rank3_stores_4x4);
	RUN(host_rank2_alloc_store_launch_load);
	RUN(floordivsi_ceildivsi_4x4_and_8x8);
	RUN(host_dim_and_divisions);
	RUN(affine_apply_min_max_4x4_and_8x8);
	RUN(host_affine_tiles);
	RUN(gemm_dynamic_sizes_equals_static_4x4_and_8x8);
	RUN(host_dynamic_rank2_launch);
	return checks_done();
}
