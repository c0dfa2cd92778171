// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Views compiled and run on the host engine: memref.subview tiles at
 * constant and dynamic offsets, strided and rank-reducing views, views of
 * views and of memrefs with '?' sizes, each checked against plain C and
 * against the same thread written with hand-linearised indices (bit for
 * bit); memref.cast, reinterpret_cast, expand_shape and collapse_shape;
 * what a view costs on the fabric; views in host functions.
 */
#include "check.h"
#include "engine_run.h"
#include "front.h"
#include "place.h"

#define A_VA	(ER_DATA_VA)
#define B_VA	(ER_DATA_VA + 0x20000)

/*
 * Over an 8x8 %a: a 4x4 tile at (%r, %c), its row 1 as a rank-1 view, and
 * a stride-2 view at (0, 1); out[i][j] = tile[i][j] + 10 * row[j] + 100 *
 * every_other[i][j].
 */
static const char tile_src[] =
	"dataflow.thread private @tile domain(#dataflow.thread_domain<dense>)(%a: memref<8x8xi64>, %out: memref<4x4xi64>, %r: index, %c: index) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %t = memref.subview %a[%r, %c][4, 4][1, 1] : memref<8x8xi64> to memref<4x4xi64, strided<[8, 1], offset: ?>>\n"
	"  %row = memref.subview %t[1, 0][1, 4][1, 1] : memref<4x4xi64, strided<[8, 1], offset: ?>> to memref<4xi64, strided<[1], offset: ?>>\n"
	"  %odd = memref.subview %a[0, 1][4, 4][2, 2] : memref<8x8xi64> to memref<4x4xi64, strided<[16, 2], offset: 1>>\n"
	"  %x = memref.load %t[%i, %j] : memref<4x4xi64, strided<[8, 1], offset: ?>>\n"
	"  %y = memref.load %row[%j] : memref<4xi64, strided<[1], offset: ?>>\n"
	"  %z = memref.load %odd[%i, %j] : memref<4x4xi64, strided<[16, 2], offset: 1>>\n"
	"  %ten = arith.constant 10 : i64\n"
	"  %hundred = arith.constant 100 : i64\n"
	"  %y10 = arith.muli %y, %ten : i64\n"
	"  %z100 = arith.muli %z, %hundred : i64\n"
	"  %s = arith.addi %x, %y10 : i64\n"
	"  %v = arith.addi %s, %z100 : i64\n"
	"  memref.store %v, %out[%i, %j] : memref<4x4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* The same, linearised by hand over rank-1 memrefs. */
static const char tile_linear_src[] =
	"dataflow.thread private @tile domain(#dataflow.thread_domain<dense>)(%a: memref<64xi64>, %out: memref<16xi64>, %r: index, %c: index) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %ri = arith.addi %r, %i : index\n"
	"  %cj = arith.addi %c, %j : index\n"
	"  %ri8 = arith.muli %ri, %c8 : index\n"
	"  %xa = arith.addi %ri8, %cj : index\n"
	"  %x = memref.load %a[%xa] : memref<64xi64>\n"
	"  %r1 = arith.addi %r, %c1 : index\n"
	"  %r18 = arith.muli %r1, %c8 : index\n"
	"  %ya = arith.addi %r18, %cj : index\n"
	"  %y = memref.load %a[%ya] : memref<64xi64>\n"
	"  %i2 = arith.muli %i, %c2 : index\n"
	"  %i28 = arith.muli %i2, %c8 : index\n"
	"  %j2 = arith.muli %j, %c2 : index\n"
	"  %j21 = arith.addi %j2, %c1 : index\n"
	"  %za = arith.addi %i28, %j21 : index\n"
	"  %z = memref.load %a[%za] : memref<64xi64>\n"
	"  %ten = arith.constant 10 : i64\n"
	"  %hundred = arith.constant 100 : i64\n"
	"  %y10 = arith.muli %y, %ten : i64\n"
	"  %z100 = arith.muli %z, %hundred : i64\n"
	"  %s = arith.addi %x, %y10 : i64\n"
	"  %v = arith.addi %s, %z100 : i64\n"
	"  %i4 = arith.muli %i, %c4 : index\n"
	"  %oa = arith.addi %i4, %j : index\n"
	"  memref.store %v, %out[%oa] : memref<16xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void tile_run(const char *src, int64_t r, int64_t c, int64_t *out)
{
	int64_t a[64];
	uint64_t args[] = { A_VA, B_VA, (uint64_t)r, (uint64_t)c };
	int64_t ext[] = { 4, 4 };
	struct er e;

	REQUIRE(er_open(&e, src, 8, 8) == 0);
	for (int i = 0; i < 64; i++)
		a[i] = (i * 37) % 23 - 11;
	er_poke64(&e, A_VA, a, 64);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "tile", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, 16);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			CHECK_EQ(a[(r + i) * 8 + c + j] +
				 10 * a[(r + 1) * 8 + c + j] +
				 100 * a[2 * i * 8 + 2 * j + 1],
				 out[i * 4 + j]);
	er_close(&e);
}

TEST(tiles_strided_and_rank_reduced_equal_linearised_8x8)
{
	int64_t v[16], l[16];

	tile_run(tile_src, 0, 0, v);
	tile_run(tile_linear_src, 0, 0, l);
	CHECK(memcmp(v, l, sizeof(v)) == 0);
	tile_run(tile_src, 3, 4, v);
	tile_run(tile_linear_src, 3, 4, l);
	CHECK(memcmp(v, l, sizeof(v)) == 0);
}

/*
 * A view of a view of memref<?x?xf32>: every size, offset and stride a
 * value; memref.dim of the view gives its loop bound.
 * out[i] = sum over k < size 1 of w of w[i][k], w = (a[o0.., o1..] by
 * stride (s0, s1)) then its [1.., 0..] part.
 */
static const char dyn_src[] =
	"dataflow.thread private @rows domain(#dataflow.thread_domain<dense>)(%a: memref<?x?xf32>, %out: memref<?xf32>, %o0: index, %o1: index, %n0: index, %n1: index, %s0: index, %s1: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %v = memref.subview %a[%o0, %o1][%n0, %n1][%s0, %s1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>\n"
	"  %w = memref.subview %v[1, 0][%n0, %n1][1, 1] : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>\n"
	"  %cols = memref.dim %w, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>\n"
	"  %zero = arith.constant 0.0 : f32\n"
	"  %sum = scf.for %k = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {\n"
	"    %x = memref.load %w[%i, %k] : memref<?x?xf32, strided<[?, ?], offset: ?>>\n"
	"    %s = arith.addf %acc, %x : f32\n"
	"    scf.yield %s : f32\n"
	"  }\n"
	"  memref.store %sum, %out[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(dynamic_view_of_view_and_its_dim_8x8)
{
	enum { R = 9, C = 11, O0 = 1, O1 = 2, N0 = 3, N1 = 4, S0 = 2, S1 = 2 };
	float a[R * C], out[N0];
	/* a, out, the index inputs, then a's two '?' sizes */
	uint64_t args[] = { A_VA, B_VA, O0, O1, N0, N1, S0, S1, R, C };
	int64_t ext[] = { N0 };
	struct er e;

	REQUIRE(er_open(&e, dyn_src, 8, 8) == 0);
	for (int i = 0; i < R * C; i++)
		a[i] = (float)((i * 37) % 23 - 11) / 7.0f;
	fake_bus_poke(&e.bus, A_VA, a, sizeof(a));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "rows", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, B_VA, out, sizeof(out));
	for (int i = 0; i < N0; i++) {
		float s = 0.0f;

		for (int k = 0; k < N1; k++)
			s += a[(O0 + (1 + i) * S0) * C + O1 + k * S1];
		CHECK(memcmp(&s, &out[i], sizeof(s)) == 0);
	}
	er_close(&e);
}

/* A load through a tile at a constant offset, and the same by hand. */
static const char const_view_src[] =
	"dataflow.thread private @k domain(#dataflow.thread_domain<dense>)(%a: memref<8x8xi64>, %out: memref<4x4xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %t = memref.subview %a[2, 3][4, 4][1, 1] : memref<8x8xi64> to memref<4x4xi64, strided<[8, 1], offset: 19>>\n"
	"  %x = memref.load %t[%i, %j] : memref<4x4xi64, strided<[8, 1], offset: 19>>\n"
	"  memref.store %x, %out[%i, %j] : memref<4x4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static const char const_linear_src[] =
	"dataflow.thread private @k domain(#dataflow.thread_domain<dense>)(%a: memref<64xi64>, %out: memref<4x4xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %c19 = arith.constant 19 : index\n"
	"  %i8 = arith.muli %i, %c8 : index\n"
	"  %ij = arith.addi %i8, %j : index\n"
	"  %at = arith.addi %ij, %c19 : index\n"
	"  %x = memref.load %a[%at] : memref<64xi64>\n"
	"  memref.store %x, %out[%i, %j] : memref<4x4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * A constant offset joins the ADD immediate every address has and a
 * constant stride is a MUL immediate: the view costs no operation the
 * hand-linearised load does not (it saves one: the offset's ADD).
 */
TEST(constant_view_costs_nothing_extra)
{
	int opsv, opsl, opsd;
	double iiv, iil, iid;

	front_cost_on_8x8(const_view_src, &opsv, &iiv);
	front_cost_on_8x8(const_linear_src, &opsl, &iil);
	front_cost_on_8x8(tile_src, &opsd, &iid);
	printf("#   constant tile: %d operations, II %.2f; linearised: %d, II %.2f; dynamic tiles: %d, II %.2f\n",
	       opsv, iiv, opsl, iil, opsd, iid);
	CHECK(opsv > 0 && iiv > 0 && opsd > 0);
	CHECK(opsv <= opsl);
	CHECK(iiv <= iil);
}

/*
 * Row sums over a panel of rows taken as a view at a dynamic offset, and
 * the same by hand: (r + i) * 8 computed before the loop, + k inside.
 */
static const char panel_src[] =
	"dataflow.thread private @rows domain(#dataflow.thread_domain<dense>)(%a: memref<8x8xi64>, %out: memref<4xi64>, %r: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %p = memref.subview %a[%r, 0][4, 8][1, 1] : memref<8x8xi64> to memref<4x8xi64, strided<[8, 1], offset: ?>>\n"
	"  %sum = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %x = memref.load %p[%i, %k] : memref<4x8xi64, strided<[8, 1], offset: ?>>\n"
	"    %s = arith.addi %acc, %x : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  memref.store %sum, %out[%i] : memref<4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static const char panel_linear_src[] =
	"dataflow.thread private @rows domain(#dataflow.thread_domain<dense>)(%a: memref<64xi64>, %out: memref<4xi64>, %r: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %ri = arith.addi %r, %i : index\n"
	"  %row = arith.muli %ri, %c8 : index\n"
	"  %sum = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %at = arith.addi %row, %k : index\n"
	"    %x = memref.load %a[%at] : memref<64xi64>\n"
	"    %s = arith.addi %acc, %x : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  memref.store %sum, %out[%i] : memref<4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * In a loop, a view made outside it with constant strides is as linear in
 * the induction variable as the hand-linearised index: both loads take
 * their address from a STREAM built before the loop (lower.c,
 * stream_address()), the same II and the same sums; the view's first
 * address costs one operation more (r * 8 + i * 8 against (r + i) * 8:
 * 14 against 13; 17 before views had the STREAM).
 */
TEST(view_address_in_a_loop_is_hoisted)
{
	int opsv, opsl;
	double iiv, iil;
	int64_t a[64], out[4];
	uint64_t args[] = { A_VA, B_VA, 3 };
	int64_t ext[] = { 4 };
	struct er e;

	front_cost_on_8x8(panel_src, &opsv, &iiv);
	front_cost_on_8x8(panel_linear_src, &opsl, &iil);
	printf("#   panel rows: %d operations, II %.2f; linearised: %d, II %.2f\n",
	       opsv, iiv, opsl, iil);
	CHECK(opsv > 0 && opsl > 0);
	CHECK(opsv <= opsl + 1);
	CHECK(iiv <= iil);
	REQUIRE(er_open(&e, panel_src, 8, 8) == 0);
	for (int i = 0; i < 64; i++)
		a[i] = i * i - 7;
	er_poke64(&e, A_VA, a, 64);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "rows", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, 4);
	for (int i = 0; i < 4; i++) {
		int64_t sum = 0;

		for (int k = 0; k < 8; k++)
			sum += a[(3 + i) * 8 + k];
		CHECK_EQ(sum, out[i]);
	}
	er_close(&e);
}

/*
 * Views made inside a loop body and inside an scf.if branch: out[i] is
 * a[5][i + 1] for i < 2, else the sum over k < 4 of row k's element i.
 */
static const char scoped_src[] =
	"dataflow.thread private @scoped domain(#dataflow.thread_domain<dense>)(%a: memref<8x8xi64>, %out: memref<8xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %row = memref.subview %a[%k, 0][1, 8][1, 1] : memref<8x8xi64> to memref<8xi64, strided<[1], offset: ?>>\n"
	"    %x = memref.load %row[%i] : memref<8xi64, strided<[1], offset: ?>>\n"
	"    %s = arith.addi %acc, %x : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  %low = arith.cmpi slt, %i, %c2 : index\n"
	"  %v = scf.if %low -> (i64) {\n"
	"    %t = memref.subview %a[4, %i][2, 2][1, 1] : memref<8x8xi64> to memref<2x2xi64, strided<[8, 1], offset: ?>>\n"
	"    %y = memref.load %t[%c1, %c1] : memref<2x2xi64, strided<[8, 1], offset: ?>>\n"
	"    scf.yield %y : i64\n"
	"  } else {\n"
	"    scf.yield %sum : i64\n"
	"  }\n"
	"  memref.store %v, %out[%i] : memref<8xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(views_in_loops_and_branches_8x8)
{
	int64_t a[64], out[8];
	uint64_t args[] = { A_VA, B_VA };
	int64_t ext[] = { 8 };
	struct er e;

	REQUIRE(er_open(&e, scoped_src, 8, 8) == 0);
	for (int i = 0; i < 64; i++)
		a[i] = i * 5 % 17 - 3;
	er_poke64(&e, A_VA, a, 64);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "scoped", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, 8);
	for (int i = 0; i < 8; i++) {
		int64_t want = 0;

		for (int k = 0; k < 4; k++)
			want += a[k * 8 + i];
		if (i < 2)
			want = a[5 * 8 + i + 1];
		CHECK_EQ(want, out[i]);
	}
	er_close(&e);
}

/* Views in a host function: a tile's loads and stores, its memref.dim. */
static const char host_src[] =
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c6 = arith.constant 6 : index\n"
	"  %m = memref.alloc(%c6) : memref<?x5xi64>\n"
	"  scf.for %i = %c0 to %c6 step %c1 {\n"
	"    scf.for %j = %c0 to %c3 step %c1 {\n"
	"      %t = arith.muli %i, %c6 : index\n"
	"      %u = arith.addi %t, %j : index\n"
	"      %v = arith.index_cast %u : index to i64\n"
	"      memref.store %v, %m[%i, %j] : memref<?x5xi64>\n"
	"    }\n"
	"  }\n"
	"  %w = memref.subview %m[1, %c1][%c3, 2][2, 1] : memref<?x5xi64> to memref<?x2xi64, strided<[10, 1], offset: ?>>\n"
	"  %x = memref.load %w[%c2, %c1] : memref<?x2xi64, strided<[10, 1], offset: ?>>\n"
	"  %want = arith.constant WANT : i64\n"
	"  loom.check %x, %want : i64\n"
	"  %rows = memref.dim %w, %c0 : memref<?x2xi64, strided<[10, 1], offset: ?>>\n"
	"  loom.check %rows, %c3 : index\n"
	"  %col = memref.subview %w[0, 1][3, 1][1, 1] : memref<?x2xi64, strided<[10, 1], offset: ?>> to memref<3xi64, strided<[10], offset: ?>>\n"
	"  %nine = arith.constant 9 : i64\n"
	"  memref.store %nine, %col[%c1] : memref<3xi64, strided<[10], offset: ?>>\n"
	"  %y = memref.load %m[%c3, %c2] : memref<?x5xi64>\n"
	"  loom.check %y, %nine : i64\n"
	"  return\n"
	"}\n";

TEST(host_views)
{
	CHECK_EQ(0, er_host_main_want(host_src, 32));
	CHECK_EQ(1, er_host_main_want(host_src, 31));	/* the checks do check */
}

/*
 * Every other view operation, in one thread over i in [0, 24):
 * out[i] = flat[i] + 10 * cube[i / 12][i / 4 % 3][i % 4]
 *	  + 100 * re[i % 18 / 3][i % 3] + 1000 * cast[i / 6][i % 6]
 *	  + 10000 * rows[i / 6][i % 6]
 * with flat and cube %a collapsed and expanded, re %a reinterpreted from
 * element 1 with strides (4, 1), cast %b (memref<?x?xi64>) cast to
 * 4x6, rows %b collapsed then expanded back with a '?' row count.
 */
static const char shapes_src[] =
	"dataflow.thread private @shapes domain(#dataflow.thread_domain<dense>)(%a: memref<4x6xi64>, %out: memref<24xi64>, %b: memref<?x?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %c6 = arith.constant 6 : index\n"
	"  %c12 = arith.constant 12 : index\n"
	"  %c18 = arith.constant 18 : index\n"
	"  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x6xi64> into memref<24xi64>\n"
	"  %cube = memref.expand_shape %flat [[0, 1, 2]] output_shape [2, 3, 4] : memref<24xi64> into memref<2x3x4xi64>\n"
	"  %re = memref.reinterpret_cast %a to offset: [1], sizes: [6, 3], strides: [4, 1] : memref<4x6xi64> to memref<6x3xi64, strided<[4, 1], offset: 1>>\n"
	"  %cast = memref.cast %b : memref<?x?xi64> to memref<4x6xi64>\n"
	"  %fb = memref.collapse_shape %b [[0, 1]] : memref<?x?xi64> into memref<?xi64>\n"
	"  %nb = memref.dim %fb, %c0 : memref<?xi64>\n"
	"  %nrows = arith.divui %nb, %c6 : index\n"
	"  %rows = memref.expand_shape %fb [[0, 1]] output_shape [%nrows, 6] : memref<?xi64> into memref<?x6xi64>\n"
	"  %x = memref.load %flat[%i] : memref<24xi64>\n"
	"  %i12 = arith.divui %i, %c12 : index\n"
	"  %i4 = arith.divui %i, %c4 : index\n"
	"  %i43 = arith.remui %i4, %c3 : index\n"
	"  %im4 = arith.remui %i, %c4 : index\n"
	"  %e = memref.load %cube[%i12, %i43, %im4] : memref<2x3x4xi64>\n"
	"  %i18 = arith.remui %i, %c18 : index\n"
	"  %i183 = arith.divui %i18, %c3 : index\n"
	"  %im3 = arith.remui %i, %c3 : index\n"
	"  %r = memref.load %re[%i183, %im3] : memref<6x3xi64, strided<[4, 1], offset: 1>>\n"
	"  %i6 = arith.divui %i, %c6 : index\n"
	"  %im6 = arith.remui %i, %c6 : index\n"
	"  %k = memref.load %cast[%i6, %im6] : memref<4x6xi64>\n"
	"  %w = memref.load %rows[%i6, %im6] : memref<?x6xi64>\n"
	"  %t10 = arith.constant 10 : i64\n"
	"  %t100 = arith.constant 100 : i64\n"
	"  %t1000 = arith.constant 1000 : i64\n"
	"  %t10000 = arith.constant 10000 : i64\n"
	"  %e10 = arith.muli %e, %t10 : i64\n"
	"  %r100 = arith.muli %r, %t100 : i64\n"
	"  %k1000 = arith.muli %k, %t1000 : i64\n"
	"  %w10000 = arith.muli %w, %t10000 : i64\n"
	"  %s1 = arith.addi %x, %e10 : i64\n"
	"  %s2 = arith.addi %s1, %r100 : i64\n"
	"  %s3 = arith.addi %s2, %k1000 : i64\n"
	"  %s4 = arith.addi %s3, %w10000 : i64\n"
	"  memref.store %s4, %out[%i] : memref<24xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(cast_reinterpret_expand_collapse_8x8)
{
	int64_t a[24], b[24], out[24];
	/* a, out, b, then b's two '?' sizes */
	uint64_t args[] = { A_VA, B_VA, B_VA + 0x1000, 4, 6 };
	int64_t ext[] = { 24 };
	struct er e;

	REQUIRE(er_open(&e, shapes_src, 8, 8) == 0);
	for (int i = 0; i < 24; i++) {
		a[i] = (i * 7) % 10;
		b[i] = (i * 5 + 3) % 10;
	}
	er_poke64(&e, A_VA, a, 24);
	er_poke64(&e, B_VA + 0x1000, b, 24);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "shapes", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, 24);
	for (int i = 0; i < 24; i++)
		CHECK_EQ(a[i] + 10 * a[i] + 100 * a[1 + i % 18 / 3 * 4 + i % 3] +
			 1000 * b[i] + 10000 * b[i], out[i]);
	er_close(&e);
}

/* The same operations in a host function over an allocation. */
static const char host_shapes_src[] =
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c6 = arith.constant 6 : index\n"
	"  %m = memref.alloc(%c2) : memref<?x6xi64>\n"
	"  scf.for %i = %c0 to %c2 step %c1 {\n"
	"    scf.for %j = %c0 to %c6 step %c1 {\n"
	"      %t = arith.muli %i, %c6 : index\n"
	"      %u = arith.addi %t, %j : index\n"
	"      %v = arith.index_cast %u : index to i64\n"
	"      memref.store %v, %m[%i, %j] : memref<?x6xi64>\n"
	"    }\n"
	"  }\n"
	"  %flat = memref.collapse_shape %m [[0, 1]] : memref<?x6xi64> into memref<?xi64>\n"
	"  %n = memref.dim %flat, %c0 : memref<?xi64>\n"
	"  %twelve = arith.constant 12 : index\n"
	"  loom.check %n, %twelve : index\n"
	"  %sq = memref.expand_shape %flat [[0, 1]] output_shape [%c3, 4] : memref<?xi64> into memref<?x4xi64>\n"
	"  %x = memref.load %sq[%c2, %c3] : memref<?x4xi64>\n"
	"  %want = arith.constant WANT : i64\n"
	"  loom.check %x, %want : i64\n"
	"  %st = memref.cast %m : memref<?x6xi64> to memref<2x6xi64>\n"
	"  %y = memref.load %st[%c1, %c2] : memref<2x6xi64>\n"
	"  %eight = arith.constant 8 : i64\n"
	"  loom.check %y, %eight : i64\n"
	"  %re = memref.reinterpret_cast %m to offset: [%c1], sizes: [3, 2], strides: [4, %c2] : memref<?x6xi64> to memref<3x2xi64, strided<[4, ?], offset: ?>>\n"
	"  %z = memref.load %re[%c2, %c1] : memref<3x2xi64, strided<[4, ?], offset: ?>>\n"
	"  %eleven = arith.constant 11 : i64\n"
	"  loom.check %z, %eleven : i64\n"
	"  return\n"
	"}\n";

TEST(host_cast_reinterpret_expand_collapse)
{
	CHECK_EQ(0, er_host_main_want(host_shapes_src, 11));
	CHECK_EQ(1, er_host_main_want(host_shapes_src, 10));	/* the checks do check */
}

/*
 * A strided memref as a thread input: its '?' offset and strides are
 * index operands after the inputs (here the offset, then stride 0).
 */
static const char strided_arg_src[] =
	"dataflow.thread private @copy domain(#dataflow.thread_domain<dense>)(%t: memref<4x4xi64, strided<[?, 1], offset: ?>>, %out: memref<4x4xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %x = memref.load %t[%i, %j] : memref<4x4xi64, strided<[?, 1], offset: ?>>\n"
	"  memref.store %x, %out[%i, %j] : memref<4x4xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(strided_thread_input_8x8)
{
	int64_t a[64], out[16];
	uint64_t args[] = { A_VA, B_VA, 19, 8 };	/* tile (2, 3) of 8x8 */
	int64_t ext[] = { 4, 4 };
	struct er e;

	REQUIRE(er_open(&e, strided_arg_src, 8, 8) == 0);
	CHECK_EQ(4, loom_view_thread(&e.view, 0).num_args);
	CHECK_EQ(LOOM_ARG_MEMREF_I64, loom_view_thread(&e.view, 0).arg_types[0]);
	CHECK_EQ(LOOM_ARG_INDEX, loom_view_thread(&e.view, 0).arg_types[3]);
	for (int i = 0; i < 64; i++)
		a[i] = i * 3 - 50;
	er_poke64(&e, A_VA, a, 64);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "copy", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, 16);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			CHECK_EQ(a[(2 + i) * 8 + 3 + j], out[i * 4 + j]);
	er_close(&e);
}

/*
 * A rank-1 strided input keeps rank 1's ABI for its size (not passed) but
 * passes its '?' offset and stride: every third element from element 2.
 */
static const char strided_rank1_src[] =
	"dataflow.thread private @pick domain(#dataflow.thread_domain<dense>)(%v: memref<?xf32, strided<[?], offset: ?>>, %out: memref<?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %v[%i] : memref<?xf32, strided<[?], offset: ?>>\n"
	"  memref.store %x, %out[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(strided_rank1_thread_input_4x4)
{
	float a[32], out[8];
	uint64_t args[] = { A_VA, B_VA, 2, 3 };	/* offset 2, stride 3 */
	int64_t ext[] = { 8 };
	struct er e;

	REQUIRE(er_open(&e, strided_rank1_src, 4, 4) == 0);
	CHECK_EQ(4, loom_view_thread(&e.view, 0).num_args);
	for (int i = 0; i < 32; i++)
		a[i] = (float)i / 3.0f;
	fake_bus_poke(&e.bus, A_VA, a, sizeof(a));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "pick", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, B_VA, out, sizeof(out));
	for (int i = 0; i < 8; i++)
		CHECK(memcmp(&a[2 + 3 * i], &out[i], sizeof(float)) == 0);
	er_close(&e);
}

/*
 * A host function launches over views: a tile at a dynamic offset (its
 * offset a launch operand), and a cast of a constant one to a type
 * whose offset and stride 0 are '?' (both launch operands).
 */
static const char host_launch_src[] =
	"dataflow.thread private @sum domain(#dataflow.thread_domain<dense>)(%t: memref<2x2xi64, strided<[6, 1], offset: ?>>, %u: memref<2x2xi64, strided<[?, 1], offset: ?>>, %out: memref<2x2xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %x = memref.load %t[%i, %j] : memref<2x2xi64, strided<[6, 1], offset: ?>>\n"
	"  %y = memref.load %u[%i, %j] : memref<2x2xi64, strided<[?, 1], offset: ?>>\n"
	"  %hundred = arith.constant 100 : i64\n"
	"  %y100 = arith.muli %y, %hundred : i64\n"
	"  %s = arith.addi %x, %y100 : i64\n"
	"  memref.store %s, %out[%i, %j] : memref<2x2xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %c6 = arith.constant 6 : index\n"
	"  %m = memref.alloc() : memref<4x6xi64>\n"
	"  scf.for %i = %c0 to %c4 step %c1 {\n"
	"    scf.for %j = %c0 to %c6 step %c1 {\n"
	"      %t = arith.muli %i, %c6 : index\n"
	"      %u = arith.addi %t, %j : index\n"
	"      %v = arith.index_cast %u : index to i64\n"
	"      memref.store %v, %m[%i, %j] : memref<4x6xi64>\n"
	"    }\n"
	"  }\n"
	"  %a = memref.subview %m[%c1, %c3][2, 2][1, 1] : memref<4x6xi64> to memref<2x2xi64, strided<[6, 1], offset: ?>>\n"
	"  %b0 = memref.subview %m[2, 0][2, 2][1, 1] : memref<4x6xi64> to memref<2x2xi64, strided<[6, 1], offset: 12>>\n"
	"  %b = memref.cast %b0 : memref<2x2xi64, strided<[6, 1], offset: 12>> to memref<2x2xi64, strided<[?, 1], offset: ?>>\n"
	"  %out = memref.alloc() : memref<2x2xi64>\n"
	"  %tok = dataflow.thread.launch @sum(%a, %b, %out) grid(%c2, %c2) : (memref<2x2xi64, strided<[6, 1], offset: ?>>, memref<2x2xi64, strided<[?, 1], offset: ?>>, memref<2x2xi64>) -> !dataflow.thread_token\n"
	"  dataflow.thread.wait %tok : !dataflow.thread_token\n"
	"  %x = memref.load %out[%c1, %c0] : memref<2x2xi64>\n"
	"  %want = arith.constant WANT : i64\n"
	"  loom.check %x, %want : i64\n"
	"  return\n"
	"}\n";

TEST(host_launches_views)
{
	/* out[1][0] = m[2][3] + 100 * m[3][0] = 15 + 1800 */
	CHECK_EQ(0, er_host_main_want(host_launch_src, 1815));
	CHECK_EQ(1, er_host_main_want(host_launch_src, 1814));	/* the checks do check */
}

int main(void)
{
	RUN(tiles_strided_and_rank_reduced_equal_linearised_8x8);
	RUN(dynamic_view_of_view_and_its_dim_8x8);
	RUN(constant_view_costs_nothing_extra);
	RUN(view_address_in_a_loop_is_hoisted);
	RUN(views_in_loops_and_branches_8x8);
	RUN(host_views);
	RUN(cast_reinterpret_expand_collapse_8x8);
	RUN(host_cast_reinterpret_expand_collapse);
	RUN(strided_thread_input_8x8);
	RUN(strided_rank1_thread_input_4x4);
	RUN(host_launches_views);
	return checks_done();
}
