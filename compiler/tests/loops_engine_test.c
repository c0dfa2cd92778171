// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loops compiled and run on the host engine, every result compared with
 * plain C: in-place loops, which load and store one memref in one scf.for
 * body (each iteration its own elements: a row updated in place and read
 * back, a gemm row updating C, a tile of rows in nested loops, a
 * triangular update under scf.if); dynamic steps; iter_args that are
 * inductions (a carried index, a countdown, a sum over one).
 */
#include "check.h"
#include "engine_run.h"

#define A_VA	(ER_DATA_VA)
#define B_VA	(ER_DATA_VA + 0x20000)
#define C_VA	(ER_DATA_VA + 0x40000)
#define D_VA	(ER_DATA_VA + 0x60000)

/*
 * Row i squared in place, each element read back after its store: the
 * read must see the new value, the sum is of the squares.
 */
static const char square_src[] =
	"dataflow.thread private @sq domain(#dataflow.thread_domain<dense>)(%a: memref<?x8xi64>, %out: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %s = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %v = memref.load %a[%i, %j] : memref<?x8xi64>\n"
	"    %w = arith.muli %v, %v : i64\n"
	"    memref.store %w, %a[%i, %j] : memref<?x8xi64>\n"
	"    %back = memref.load %a[%i, %j] : memref<?x8xi64>\n"
	"    %t = arith.addi %acc, %back : i64\n"
	"    scf.yield %t : i64\n"
	"  }\n"
	"  memref.store %s, %out[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void square_on(unsigned w, unsigned h)
{
	enum { ROWS = 9 };
	int64_t a[ROWS * 8], out[ROWS], want[ROWS * 8];
	uint64_t args[] = { A_VA, B_VA, ROWS };
	int64_t ext[] = { ROWS };
	struct er e;

	REQUIRE(er_open(&e, square_src, w, h) == 0);
	for (int k = 0; k < ROWS * 8; k++) {
		a[k] = (k * 29) % 23 - 11;
		want[k] = a[k] * a[k];
	}
	er_poke64(&e, A_VA, a, ROWS * 8);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "sq", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, a, ROWS * 8);
	er_peek64(&e, B_VA, out, ROWS);
	for (int i = 0; i < ROWS; i++) {
		int64_t sum = 0;

		for (int j = 0; j < 8; j++) {
			CHECK_EQ(want[i * 8 + j], a[i * 8 + j]);
			sum += want[i * 8 + j];
		}
		CHECK_EQ(sum, out[i]);
	}
	er_close(&e);
}

TEST(row_squared_in_place_read_back_4x4_and_8x8)
{
	square_on(4, 4);
	square_on(8, 8);
}

/*
 * gemm, one instance per row of C, the loop over its columns updating C
 * in place: C[i][j] = beta * C[i][j] + sum over k of alpha * A[i][k] *
 * B[k][j], in PolyBench's order, so bit for bit what C computes.
 */
static const char gemm_row_src[] =
	"dataflow.thread private @gemm_row domain(#dataflow.thread_domain<dense>)(%alpha: f32, %beta: f32, %C: memref<?x?xf32>, %A: memref<?x?xf32>, %B: memref<?x?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %nj = memref.dim %C, %c1 : memref<?x?xf32>\n"
	"  %nk = memref.dim %A, %c1 : memref<?x?xf32>\n"
	"  scf.for %j = %c0 to %nj step %c1 {\n"
	"    %c = memref.load %C[%i, %j] : memref<?x?xf32>\n"
	"    %cb = arith.mulf %c, %beta : f32\n"
	"    %s = scf.for %k = %c0 to %nk step %c1 iter_args(%acc = %cb) -> (f32) {\n"
	"      %a = memref.load %A[%i, %k] : memref<?x?xf32>\n"
	"      %b = memref.load %B[%k, %j] : memref<?x?xf32>\n"
	"      %aa = arith.mulf %alpha, %a : f32\n"
	"      %p = arith.mulf %aa, %b : f32\n"
	"      %n = arith.addf %acc, %p : f32\n"
	"      scf.yield %n : f32\n"
	"    }\n"
	"    memref.store %s, %C[%i, %j] : memref<?x?xf32>\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static uint64_t f32_arg(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint64_t)(int64_t)(int32_t)u;
}

TEST(gemm_rows_update_c_in_place_bit_for_bit_8x8)
{
	enum { NI = 7, NJ = 6, NK = 5 };
	float c[NI * NJ], a[NI * NK], b[NK * NJ], want[NI * NJ];
	const float alpha = 1.5f, beta = 1.2f;
	/* C's, A's and B's '?' sizes follow the inputs, in order */
	uint64_t args[] = { f32_arg(alpha), f32_arg(beta), C_VA, A_VA, B_VA,
			    NI, NJ, NI, NK, NK, NJ };
	int64_t ext[] = { NI };
	struct er e;

	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NJ; j++)
			c[i * NJ + j] = (float)((i * j + 1) % NI) / NI;
	for (int i = 0; i < NI; i++)
		for (int k = 0; k < NK; k++)
			a[i * NK + k] = (float)(i * (k + 1) % NK) / NK;
	for (int k = 0; k < NK; k++)
		for (int j = 0; j < NJ; j++)
			b[k * NJ + j] = (float)(k * (j + 2) % NJ) / NJ;
	memcpy(want, c, sizeof(c));
	for (int i = 0; i < NI; i++)
		for (int j = 0; j < NJ; j++) {
			want[i * NJ + j] *= beta;
			for (int k = 0; k < NK; k++)
				want[i * NJ + j] += alpha * a[i * NK + k] *
						    b[k * NJ + j];
		}
	REQUIRE(er_open(&e, gemm_row_src, 8, 8) == 0);
	fake_bus_poke(&e.bus, C_VA, c, sizeof(c));
	fake_bus_poke(&e.bus, A_VA, a, sizeof(a));
	fake_bus_poke(&e.bus, B_VA, b, sizeof(b));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "gemm_row", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, C_VA, c, sizeof(c));
	CHECK(memcmp(c, want, sizeof(c)) == 0);
	er_close(&e);
}

/*
 * One instance per tile of T rows, nested loops over its rows and
 * columns: row it * T + r is an affine.apply of the tile and the row
 * loop's induction variable.  Each element becomes the sum of itself and
 * its left neighbour as it was before the update, read first.
 */
static const char tile_src[] =
	"#row = affine_map<(d0)[s0] -> (s0 * 3 + d0)>\n"
	"dataflow.thread private @tile domain(#dataflow.thread_domain<dense>)(%m: memref<?x5xi32>) ctrl(%ctl: none) iv(%it: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c5 = arith.constant 5 : index\n"
	"  scf.for %r = %c0 to %c3 step %c1 {\n"
	"    %row = affine.apply #row(%r)[%it]\n"
	"    scf.for %j = %c1 to %c5 step %c1 {\n"
	"      %jl = arith.subi %j, %c1 : index\n"
	"      %left = memref.load %m[%row, %jl] : memref<?x5xi32>\n"
	"      %v = memref.load %m[%row, %j] : memref<?x5xi32>\n"
	"      %s = arith.addi %v, %left : i32\n"
	"      memref.store %s, %m[%row, %j] : memref<?x5xi32>\n"
	"    }\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * The left neighbour j - 1 was stored by iteration j - 1 of the column
 * loop: a chain through memory, which the lowering refuses.
 */
TEST(tile_chain_through_memory_is_refused)
{
	FILE *diag = tmpfile();
	char text[1024] = "";
	struct er e;

	REQUIRE(diag);
	CHECK(er_open_diag(&e, tile_src, 8, 8, diag) != 0);
	CHECK(e.errors > 0);
	er_close(&e);
	rewind(diag);
	CHECK(fread(text, 1, sizeof(text) - 1, diag) > 0);
	fclose(diag);
	CHECK(strstr(text, "test.loom:9:5: error: cannot lower scf.for: memref %m is stored and accessed again in the loop body at an element another iteration may access too") != NULL);
}

/*
 * The same tile with the neighbour read from a second memref: the row
 * loop and the column loop each touch their own elements of %m.
 */
static const char tile2_src[] =
	"#row = affine_map<(d0)[s0] -> (s0 * 3 + d0)>\n"
	"dataflow.thread private @tile domain(#dataflow.thread_domain<dense>)(%m: memref<?x5xi32>, %src: memref<?x5xi32>) ctrl(%ctl: none) iv(%it: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c3 = arith.constant 3 : index\n"
	"  %c5 = arith.constant 5 : index\n"
	"  scf.for %r = %c0 to %c3 step %c1 {\n"
	"    %row = affine.apply #row(%r)[%it]\n"
	"    scf.for %j = %c1 to %c5 step %c1 {\n"
	"      %jl = arith.subi %j, %c1 : index\n"
	"      %left = memref.load %src[%row, %jl] : memref<?x5xi32>\n"
	"      %v = memref.load %m[%row, %j] : memref<?x5xi32>\n"
	"      %s = arith.addi %v, %left : i32\n"
	"      memref.store %s, %m[%row, %j] : memref<?x5xi32>\n"
	"      %again = memref.load %m[%row, %j] : memref<?x5xi32>\n"
	"      %twice = arith.addi %again, %again : i32\n"
	"      memref.store %twice, %m[%row, %j] : memref<?x5xi32>\n"
	"    }\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void tile2_on(unsigned w, unsigned h)
{
	enum { TILES = 4, ROWS = 3 * TILES };
	int32_t m[ROWS * 5], src[ROWS * 5], want[ROWS * 5];
	uint64_t args[] = { A_VA, B_VA, ROWS, ROWS };
	int64_t ext[] = { TILES };
	struct er e;

	for (int k = 0; k < ROWS * 5; k++) {
		m[k] = k * 7 - 100;
		src[k] = 1000 - k * k;
	}
	memcpy(want, m, sizeof(m));
	for (int i = 0; i < ROWS; i++)
		for (int j = 1; j < 5; j++)
			want[i * 5 + j] = 2 * (m[i * 5 + j] + src[i * 5 + j - 1]);
	REQUIRE(er_open(&e, tile2_src, w, h) == 0);
	fake_bus_poke(&e.bus, A_VA, m, sizeof(m));
	fake_bus_poke(&e.bus, B_VA, src, sizeof(src));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "tile", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, A_VA, m, sizeof(m));
	for (int k = 0; k < ROWS * 5; k++)
		CHECK_EQ(want[k], m[k]);
	er_close(&e);
}

TEST(tile_rows_nested_loops_in_place_4x4_and_8x8)
{
	tile2_on(4, 4);
	tile2_on(8, 8);
}

/*
 * A lower triangle scaled in place: the column loop runs over the whole
 * row and an scf.if keeps j <= i; elements above the diagonal keep their
 * values.
 */
static const char tri_src[] =
	"dataflow.thread private @tri domain(#dataflow.thread_domain<dense>)(%m: memref<?x6xi64>, %f: i64) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c6 = arith.constant 6 : index\n"
	"  scf.for %j = %c0 to %c6 step %c1 {\n"
	"    %le = arith.cmpi ule, %j, %i : index\n"
	"    scf.if %le {\n"
	"      %v = memref.load %m[%i, %j] : memref<?x6xi64>\n"
	"      %p = arith.muli %v, %f : i64\n"
	"      memref.store %p, %m[%i, %j] : memref<?x6xi64>\n"
	"    }\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(triangle_in_place_under_scf_if_4x4)
{
	enum { N = 6 };
	int64_t m[N * N], want[N * N];
	uint64_t args[] = { A_VA, (uint64_t)-3, N };
	int64_t ext[] = { N };
	struct er e;

	for (int k = 0; k < N * N; k++)
		m[k] = want[k] = k + 1;
	for (int i = 0; i < N; i++)
		for (int j = 0; j <= i; j++)
			want[i * N + j] *= -3;
	REQUIRE(er_open(&e, tri_src, 4, 4) == 0);
	er_poke64(&e, A_VA, m, N * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "tri", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, m, N * N);
	for (int k = 0; k < N * N; k++)
		CHECK_EQ(want[k], m[k]);
	er_close(&e);
}

/*
 * A step that is a launch operand, bounds that depend on the instance:
 * row i stores j * j + i at j = i, i + st, ... below n (none when i >= n,
 * where the count (n - i + st - 1) / st is 0 or negative).
 */
static const char dyn_step_src[] =
	"dataflow.thread private @ds domain(#dataflow.thread_domain<dense>)(%m: memref<?xi64>, %n: index, %st: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %row = arith.muli %i, %n : index\n"
	"  scf.for %j = %i to %n step %st {\n"
	"    %k = arith.addi %row, %j : index\n"
	"    %sq = arith.muli %j, %j : index\n"
	"    %v0 = arith.addi %sq, %i : index\n"
	"    %v = arith.index_cast %v0 : index to i64\n"
	"    memref.store %v, %m[%k] : memref<?xi64>\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void dyn_step_on(unsigned w, unsigned h, int64_t st)
{
	enum { N = 9, ROWS = 14 };	/* rows 12, 13: a count of -1 for st = 2 */
	int64_t m[ROWS * N];
	uint64_t args[] = { A_VA, N, (uint64_t)st };
	int64_t ext[] = { ROWS };
	struct er e;

	for (int k = 0; k < ROWS * N; k++)
		m[k] = -1;
	REQUIRE(er_open(&e, dyn_step_src, w, h) == 0);
	er_poke64(&e, A_VA, m, ROWS * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "ds", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, m, ROWS * N);
	for (int i = 0; i < ROWS; i++)
		for (int j = 0; j < N; j++) {
			bool hit = j >= i && (j - i) % st == 0;

			CHECK_EQ(hit ? j * j + i : -1, m[i * N + j]);
		}
	er_close(&e);
}

TEST(dynamic_step_4x4_and_8x8)
{
	dyn_step_on(4, 4, 3);
	dyn_step_on(8, 8, 2);
	dyn_step_on(8, 8, 20);
}

/*
 * iter_args that are inductions: a carried index %p (p += w, the
 * address of every store), an i32 countdown %q (q -= 3 from near
 * INT32_MIN, so it wraps, its new value used again) and %s, a sum of %q
 * (a reduction over an induction).  Final values stored after the loop.
 */
static const char induction_src[] =
	"dataflow.thread private @ind domain(#dataflow.thread_domain<dense>)(%m: memref<?xi32>, %out: memref<?xi64>, %n: index, %w: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c3 = arith.constant 3 : i32\n"
	"  %lo = arith.constant -2147483640 : i32\n"
	"  %z = arith.constant 0 : i64\n"
	"  %base = arith.muli %i, %n : index\n"
	"  %start = arith.muli %base, %w : index\n"
	"  %ii = arith.index_cast %i : index to i32\n"
	"  %q0 = arith.addi %lo, %ii : i32\n"
	"  %p1, %q1, %s1 = scf.for %j = %c0 to %n step %c1 iter_args(%p = %start, %q = %q0, %s = %z) -> (index, i32, i64) {\n"
	"    %q2 = arith.subi %q, %c3 : i32\n"
	"    %v = arith.xori %q2, %q : i32\n"
	"    memref.store %v, %m[%p] : memref<?xi32>\n"
	"    %p2 = arith.addi %p, %w : index\n"
	"    %qe = arith.extsi %q : i32 to i64\n"
	"    %s2 = arith.addi %s, %qe : i64\n"
	"    scf.yield %p2, %q2, %s2 : index, i32, i64\n"
	"  }\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %o = arith.muli %i, %c4 : index\n"
	"  %o1 = arith.addi %o, %c1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %o2 = arith.addi %o, %c2 : index\n"
	"  %pv = arith.index_cast %p1 : index to i64\n"
	"  %qv = arith.extsi %q1 : i32 to i64\n"
	"  memref.store %pv, %out[%o] : memref<?xi64>\n"
	"  memref.store %qv, %out[%o1] : memref<?xi64>\n"
	"  memref.store %s1, %out[%o2] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void induction_on(unsigned w, unsigned h)
{
	enum { N = 7, W = 2, INST = 5 };
	int32_t m[INST * N * W];
	int64_t out[INST * 4];
	uint64_t args[] = { A_VA, B_VA, N, W };
	int64_t ext[] = { INST };
	struct er e;

	memset(m, 0x55, sizeof(m));
	REQUIRE(er_open(&e, induction_src, w, h) == 0);
	fake_bus_poke(&e.bus, A_VA, m, sizeof(m));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "ind", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, A_VA, m, sizeof(m));
	er_peek64(&e, B_VA, out, INST * 4);
	for (int i = 0; i < INST; i++) {
		int64_t p = (int64_t)i * N * W, s = 0;
		uint32_t q = (uint32_t)(-2147483640 + i);

		for (int j = 0; j < N; j++) {
			uint32_t q2 = q - 3;

			CHECK_EQ((int32_t)(q2 ^ q), m[p]);
			CHECK_EQ(0x55555555, (uint32_t)m[p + 1]);
			s += (int32_t)q;
			p += W;
			q = q2;
		}
		CHECK_EQ(p, out[i * 4]);
		CHECK_EQ((int32_t)q, out[i * 4 + 1]);
		CHECK_EQ(s, out[i * 4 + 2]);
	}
	er_close(&e);
}

TEST(induction_iter_args_4x4_and_8x8)
{
	induction_on(4, 4);
	induction_on(8, 8);
}

int main(void)
{
	RUN(row_squared_in_place_read_back_4x4_and_8x8);
	RUN(gemm_rows_update_c_in_place_bit_for_bit_8x8);
	RUN(tile_chain_through_memory_is_refused);
	RUN(tile_rows_nested_loops_in_place_4x4_and_8x8);
	RUN(triangle_in_place_under_scf_if_4x4);
	RUN(dynamic_step_4x4_and_8x8);
	RUN(induction_iter_args_4x4_and_8x8);
	return checks_done();
}
