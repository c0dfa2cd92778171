// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memref.atomic_rmw compiled and run on the host engine: scatters written
 * the way a user writes them (bicg's s = A^T r with one instance per row,
 * a histogram, a ticket counter) split over 1, 2 and 4 cores that run at
 * once on one memory (er_launch_split(), as libloom's spread launch
 * splits a launch over a device's cores), every kind against a C fold,
 * and an atomic ordered in program order with the loads and stores of
 * its memref.  Integer results are compared bit for bit; f32 sums use
 * integer values, which every order adds exactly.
 */
#include "check.h"
#include "engine_run.h"

#define A_VA	(ER_DATA_VA)
#define R_VA	(ER_DATA_VA + 0x40000)
#define S_VA	(ER_DATA_VA + 0x50000)
#define T_VA	(ER_DATA_VA + 0x60000)

static const unsigned core_counts[] = { 1, 2, 4 };

/* A small pseudo-random value in [-50, 50]. */
static int32_t small(unsigned k)
{
	return (int32_t)((k * 2654435761U) >> 16) % 101 - 50;
}

/* ------------------------------------------------------- bicg scatter --- */

/*
 * bicg's s = A^T r as a scatter: instance i adds r[i] * A[i][j] into s[j]
 * for every j, with many rows in flight at once.  A format: the element
 * type, then the multiply and the atomic kind.
 */
static const char scatter_fmt[] =
	"dataflow.thread private @scatter domain(#dataflow.thread_domain<dense>)(%%a: memref<?x?x%1$s>, %%r: memref<?x%1$s>, %%s: memref<?x%1$s>) ctrl(%%ctl: none) iv(%%i: index) {\n"
	"  %%c0 = arith.constant 0 : index\n"
	"  %%c1 = arith.constant 1 : index\n"
	"  %%m = memref.dim %%a, %%c1 : memref<?x?x%1$s>\n"
	"  %%ri = memref.load %%r[%%i] : memref<?x%1$s>\n"
	"  scf.for %%j = %%c0 to %%m step %%c1 {\n"
	"    %%aij = memref.load %%a[%%i, %%j] : memref<?x?x%1$s>\n"
	"    %%p = arith.%2$s %%ri, %%aij : %1$s\n"
	"    %%o = memref.atomic_rmw %3$s %%p, %%s[%%j] : (%1$s, memref<?x%1$s>) -> %1$s\n"
	"  }\n"
	"  dataflow.thread.yield %%ctl : none\n"
	"}\n";

static float f32_of(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

static uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static void scatter_on(bool f32, unsigned w, unsigned h)
{
	enum { N = 37, M = 23 };
	uint32_t a[N * M], r[N], s[M], want[M];
	uint64_t args[] = { A_VA, R_VA, S_VA, N, M };
	int64_t ext[] = { N };
	char text[2048];
	struct er e;

	snprintf(text, sizeof(text), scatter_fmt, f32 ? "f32" : "i32",
		 f32 ? "mulf" : "muli", f32 ? "addf" : "addi");

	for (unsigned k = 0; k < N * M; k++)
		a[k] = f32 ? bits_of((float)small(k)) : (uint32_t)small(k);
	for (unsigned i = 0; i < N; i++)
		r[i] = f32 ? bits_of((float)small(1000 + i)) : (uint32_t)small(1000 + i);
	for (unsigned j = 0; j < M; j++) {
		float fs = 0;
		uint32_t is = 0;

		for (unsigned i = 0; i < N; i++) {
			fs += f32_of(r[i]) * f32_of(a[i * M + j]);
			is += r[i] * a[i * M + j];
		}
		want[j] = f32 ? bits_of(fs) : is;
	}
	REQUIRE(er_open(&e, text, w, h) == 0);
	fake_bus_poke(&e.bus, A_VA, a, sizeof(a));
	fake_bus_poke(&e.bus, R_VA, r, sizeof(r));
	for (unsigned c = 0; c < 3; c++) {
		memset(s, 0, sizeof(s));
		fake_bus_poke(&e.bus, S_VA, s, sizeof(s));
		CHECK_EQ(LOOM_STATUS_OK,
			 er_launch_split(&e, "scatter", args, ext, core_counts[c]));
		fake_bus_peek(&e.bus, S_VA, s, sizeof(s));
		for (unsigned j = 0; j < M; j++)
			if (want[j] != s[j]) {
				printf("#   %s %ux%u, %u cores: s[%u]\n",
				       f32 ? "f32" : "i32", w, h, core_counts[c], j);
				CHECK_EQ(want[j], s[j]);
			}
	}
	er_close(&e);
}

TEST(bicg_scatter_i32_on_1_2_4_cores)
{
	scatter_on(false, 4, 4);
	scatter_on(false, 8, 8);
}

TEST(bicg_scatter_f32_on_1_2_4_cores)
{
	scatter_on(true, 4, 4);
	scatter_on(true, 8, 8);
}

/* -------------------------------------------- histogram and tickets --- */

static const char histogram_src[] =
	"dataflow.thread private @histogram domain(#dataflow.thread_domain<dense>)(%key: memref<?xi32>, %hist: memref<?xi64>) ctrl(%ctl: none) iv(%j: index) {\n"
	"  %one = arith.constant 1 : i64\n"
	"  %k = memref.load %key[%j] : memref<?xi32>\n"
	"  %b = arith.index_cast %k : i32 to index\n"
	"  %old = memref.atomic_rmw addi %one, %hist[%b] : (i64, memref<?xi64>) -> i64\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"dataflow.thread private @tickets domain(#dataflow.thread_domain<dense>)(%counter: memref<?xi64>, %out: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %one = arith.constant 1 : i64\n"
	"  %id = arith.index_cast %i : index to i64\n"
	"  %slot = memref.atomic_rmw addi %one, %counter[%c0] : (i64, memref<?xi64>) -> i64\n"
	"  %at = arith.index_cast %slot : i64 to index\n"
	"  memref.store %id, %out[%at] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(histogram_on_1_2_4_cores)
{
	enum { N = 3000, BINS = 13 };
	int32_t key[N];
	int64_t hist[BINS], want[BINS] = { 0 };
	uint64_t args[] = { A_VA, S_VA };
	int64_t ext[] = { N };
	struct er e;

	for (unsigned j = 0; j < N; j++) {
		key[j] = (int32_t)((j * 2654435761U) % BINS);
		want[key[j]]++;
	}
	REQUIRE(er_open(&e, histogram_src, 4, 4) == 0);
	fake_bus_poke(&e.bus, A_VA, key, sizeof(key));
	for (unsigned c = 0; c < 3; c++) {
		memset(hist, 0, sizeof(hist));
		er_poke64(&e, S_VA, hist, BINS);
		CHECK_EQ(LOOM_STATUS_OK,
			 er_launch_split(&e, "histogram", args, ext, core_counts[c]));
		er_peek64(&e, S_VA, hist, BINS);
		for (unsigned b = 0; b < BINS; b++)
			CHECK_EQ(want[b], hist[b]);
	}
	er_close(&e);
}

/*
 * The old value is each instance's own: n instances taking tickets get
 * 0..n-1, each once, whichever core they run on.
 */
TEST(tickets_are_a_permutation_on_1_2_4_cores)
{
	enum { N = 2000 };
	int64_t out[N], counter;
	uint64_t args[] = { S_VA, A_VA };
	int64_t ext[] = { N };
	static bool seen[N];
	struct er e;

	REQUIRE(er_open(&e, histogram_src, 4, 4) == 0);
	for (unsigned c = 0; c < 3; c++) {
		counter = 0;
		er_poke64(&e, S_VA, &counter, 1);
		for (unsigned i = 0; i < N; i++)
			out[i] = -1;
		er_poke64(&e, A_VA, out, N);
		CHECK_EQ(LOOM_STATUS_OK,
			 er_launch_split(&e, "tickets", args, ext, core_counts[c]));
		er_peek64(&e, S_VA, &counter, 1);
		CHECK_EQ(N, counter);
		er_peek64(&e, A_VA, out, N);
		memset(seen, 0, sizeof(seen));
		for (unsigned i = 0; i < N; i++) {
			REQUIRE(out[i] >= 0 && out[i] < N);
			CHECK(!seen[out[i]]);
			seen[out[i]] = true;
		}
	}
	er_close(&e);
}

/*
 * An atomic in an scf.if branch runs only when the branch is taken: odd
 * keys count in their bin, even ones in bin 0 of a second histogram,
 * through the else branch.
 */
static const char branch_src[] =
	"dataflow.thread private @branch domain(#dataflow.thread_domain<dense>)(%key: memref<?xi32>, %odd: memref<?xi32>, %even: memref<?xi32>) ctrl(%ctl: none) iv(%j: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %one = arith.constant 1 : i32\n"
	"  %k = memref.load %key[%j] : memref<?xi32>\n"
	"  %low = arith.andi %k, %one : i32\n"
	"  %is_odd = arith.cmpi eq, %low, %one : i32\n"
	"  scf.if %is_odd {\n"
	"    %b = arith.index_cast %k : i32 to index\n"
	"    %o = memref.atomic_rmw addi %one, %odd[%b] : (i32, memref<?xi32>) -> i32\n"
	"  } else {\n"
	"    %e = memref.atomic_rmw addi %k, %even[%c0] : (i32, memref<?xi32>) -> i32\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(atomics_in_branches_on_1_2_4_cores)
{
	enum { N = 1000, BINS = 11 };
	int32_t key[N], odd[BINS], want[BINS] = { 0 }, even, want_even = 0;
	uint64_t args[] = { A_VA, S_VA, T_VA };
	int64_t ext[] = { N };
	struct er e;

	for (unsigned j = 0; j < N; j++) {
		key[j] = (int32_t)((j * 2654435761U) % BINS);
		if (key[j] & 1)
			want[key[j]]++;
		else
			want_even += key[j];
	}
	REQUIRE(er_open(&e, branch_src, 4, 4) == 0);
	fake_bus_poke(&e.bus, A_VA, key, sizeof(key));
	for (unsigned c = 0; c < 3; c++) {
		memset(odd, 0, sizeof(odd));
		even = 0;
		fake_bus_poke(&e.bus, S_VA, odd, sizeof(odd));
		fake_bus_poke(&e.bus, T_VA, &even, sizeof(even));
		CHECK_EQ(LOOM_STATUS_OK,
			 er_launch_split(&e, "branch", args, ext, core_counts[c]));
		fake_bus_peek(&e.bus, S_VA, odd, sizeof(odd));
		fake_bus_peek(&e.bus, T_VA, &even, sizeof(even));
		for (unsigned b = 0; b < BINS; b++)
			CHECK_EQ(want[b], odd[b]);
		CHECK_EQ(want_even, even);
	}
	er_close(&e);
}

/* ------------------------------------------------------- every kind --- */

/*
 * Every instance folds x[i] into m[0] with @kind in type @type: the
 * result is the C fold of all of them (every kind but assign is
 * commutative and associative).
 */
static void kind_on(const char *kind, const char *type, const int64_t *x,
		    unsigned n, int64_t init, int64_t want)
{
	char src[1024];
	uint64_t args[] = { A_VA, S_VA };
	int64_t ext[] = { n }, got = 0;
	bool i64 = !strcmp(type, "i64");
	struct er e;

	snprintf(src, sizeof(src),
		 "dataflow.thread private @fold domain(#dataflow.thread_domain<dense>)(%%x: memref<?x%s>, %%m: memref<?x%s>) ctrl(%%ctl: none) iv(%%i: index) {\n"
		 "  %%c0 = arith.constant 0 : index\n"
		 "  %%v = memref.load %%x[%%i] : memref<?x%s>\n"
		 "  %%o = memref.atomic_rmw %s %%v, %%m[%%c0] : (%s, memref<?x%s>) -> %s\n"
		 "  dataflow.thread.yield %%ctl : none\n"
		 "}\n", type, type, type, kind, type, type, type);
	REQUIRE(er_open(&e, src, 4, 4) == 0);
	for (unsigned i = 0; i < n; i++)
		fake_bus_poke(&e.bus, A_VA + i * (i64 ? 8 : 4), &x[i], i64 ? 8 : 4);
	fake_bus_poke(&e.bus, S_VA, &init, 8);
	CHECK_EQ(LOOM_STATUS_OK, er_launch_split(&e, "fold", args, ext, 2));
	fake_bus_peek(&e.bus, S_VA, &got, i64 ? 8 : 4);
	if (!i64)
		got = (int64_t)(int32_t)(uint32_t)got;
	if (want != got)
		printf("#   %s %s\n", kind, type);
	CHECK_EQ(want, got);
	er_close(&e);
}

TEST(every_kind_against_c)
{
	enum { N = 40 };
	int64_t x[N], f[N], g[N];
	int64_t sum = 0, prod = 1, maxs = INT64_MIN, mins = INT64_MAX;
	uint64_t maxu = 0, minu = UINT64_MAX, and = ~0ULL, or = 0, xor = 0;
	float fsum = 0.5f, fprod = 1, fmax = -1000, fmin = 1000;

	for (unsigned i = 0; i < N; i++) {
		x[i] = (int64_t)small(i) * 1000003 + (i & 1 ? INT64_MIN / 2 : 0);
		sum = (int64_t)((uint64_t)sum + (uint64_t)x[i]);
		prod = (int64_t)((uint64_t)prod * (uint64_t)x[i]);
		maxs = x[i] > maxs ? x[i] : maxs;
		mins = x[i] < mins ? x[i] : mins;
		maxu = (uint64_t)x[i] > maxu ? (uint64_t)x[i] : maxu;
		minu = (uint64_t)x[i] < minu ? (uint64_t)x[i] : minu;
		and &= (uint64_t)x[i] | 1;
		or |= (uint64_t)x[i];
		xor ^= (uint64_t)x[i];
		f[i] = (int64_t)(int32_t)bits_of((float)(small(i) % 8) + (i % 3 ? 0.5f : 0.25f));
		fsum += f32_of((uint32_t)f[i]);
		/* powers of two: every order multiplies exactly */
		g[i] = (int64_t)(int32_t)bits_of((i % 3 == 0 ? -2.0f : 2.0f) /
						 (float)(1 << (i % 4)));
		fprod *= f32_of((uint32_t)g[i]);
		fmax = f32_of((uint32_t)f[i]) > fmax ? f32_of((uint32_t)f[i]) : fmax;
		fmin = f32_of((uint32_t)f[i]) < fmin ? f32_of((uint32_t)f[i]) : fmin;
	}
	kind_on("addi", "i64", x, N, 0, sum);
	kind_on("muli", "i64", x, N, 1, prod);
	kind_on("maxs", "i64", x, N, INT64_MIN, maxs);
	kind_on("mins", "i64", x, N, INT64_MAX, mins);
	kind_on("maxu", "i64", x, N, 0, (int64_t)maxu);
	kind_on("minu", "i64", x, N, -1, (int64_t)minu);
	kind_on("ori", "i64", x, N, 0, (int64_t)or);
	kind_on("xori", "i64", x, N, 0, (int64_t)xor);
	for (unsigned i = 0; i < N; i++)
		x[i] |= 1;
	kind_on("andi", "i64", x, N, -1, (int64_t)and);
	/* i32: the low 32 bits, wrapping */
	for (unsigned i = 0; i < N; i++)
		x[i] = (int64_t)(int32_t)(uint32_t)x[i];
	sum = 0;
	maxs = INT32_MIN;
	minu = UINT32_MAX;
	for (unsigned i = 0; i < N; i++) {
		sum = (int32_t)(uint32_t)((uint32_t)sum + (uint32_t)x[i]);
		maxs = x[i] > maxs ? x[i] : maxs;
		minu = (uint32_t)x[i] < minu ? (uint32_t)x[i] : minu;
	}
	kind_on("addi", "i32", x, N, 0, sum);
	kind_on("maxs", "i32", x, N, INT32_MIN, maxs);
	kind_on("minu", "i32", x, N, -1, (int64_t)(int32_t)(uint32_t)minu);
	/* f32 on values whose sums are exact in any order */
	kind_on("addf", "f32", f, N, (int64_t)(int32_t)bits_of(0.5f),
		(int64_t)(int32_t)bits_of(fsum));
	kind_on("mulf", "f32", g, N, (int64_t)(int32_t)bits_of(1.0f),
		(int64_t)(int32_t)bits_of(fprod));
	kind_on("maximumf", "f32", f, N, (int64_t)(int32_t)bits_of(-1000.0f),
		(int64_t)(int32_t)bits_of(fmax));
	kind_on("minimumf", "f32", f, N, (int64_t)(int32_t)bits_of(1000.0f),
		(int64_t)(int32_t)bits_of(fmin));
	/* assign: one instance, the value it brings */
	kind_on("assign", "i64", x + 5, 1, 77, x[5]);
}

/* ---------------------------------------------------- program order --- */

/*
 * In one iteration a load before the atomic sees the old element, one
 * after it the new one, and a store after it lands last: instance i owns
 * row i, so only the thread's own order is at stake.
 */
static const char order_src[] =
	"dataflow.thread private @order domain(#dataflow.thread_domain<dense>)(%a: memref<?x8xi64>, %b: memref<?x8xi64>, %c: memref<?x8xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %ten = arith.constant 10 : i64\n"
	"  scf.for %j = %c0 to %c8 step %c1 {\n"
	"    %before = memref.load %a[%i, %j] : memref<?x8xi64>\n"
	"    %old = memref.atomic_rmw addi %ten, %a[%i, %j] : (i64, memref<?x8xi64>) -> i64\n"
	"    %after = memref.load %a[%i, %j] : memref<?x8xi64>\n"
	"    %d = arith.subi %after, %old : i64\n"
	"    memref.store %d, %b[%i, %j] : memref<?x8xi64>\n"
	"    memref.store %before, %c[%i, %j] : memref<?x8xi64>\n"
	"    %twice = arith.addi %after, %after : i64\n"
	"    memref.store %twice, %a[%i, %j] : memref<?x8xi64>\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(atomic_in_program_order_with_loads_and_stores)
{
	enum { N = 9 };
	int64_t a[N * 8], b[N * 8], c[N * 8];
	uint64_t args[] = { A_VA, R_VA, T_VA, N, N, N };	/* and each ? size */
	int64_t ext[] = { N };
	struct er e;

	for (unsigned k = 0; k < N * 8; k++)
		a[k] = small(k);
	REQUIRE(er_open(&e, order_src, 8, 8) == 0);
	er_poke64(&e, A_VA, a, N * 8);
	CHECK_EQ(LOOM_STATUS_OK, er_launch_split(&e, "order", args, ext, 4));
	er_peek64(&e, A_VA, a, N * 8);
	er_peek64(&e, R_VA, b, N * 8);
	er_peek64(&e, T_VA, c, N * 8);
	for (unsigned k = 0; k < N * 8; k++) {
		CHECK_EQ(small(k), c[k]);
		CHECK_EQ(10, b[k]);
		CHECK_EQ(2 * (small(k) + 10), a[k]);
	}
	er_close(&e);
}

int main(void)
{
	RUN(bicg_scatter_i32_on_1_2_4_cores);
	RUN(bicg_scatter_f32_on_1_2_4_cores);
	RUN(histogram_on_1_2_4_cores);
	RUN(tickets_are_a_permutation_on_1_2_4_cores);
	RUN(atomics_in_branches_on_1_2_4_cores);
	RUN(every_kind_against_c);
	RUN(atomic_in_program_order_with_loads_and_stores);
	return checks_done();
}
