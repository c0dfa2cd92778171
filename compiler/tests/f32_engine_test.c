// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * f32_engine_test: f32 programs compiled by the whole pipeline and run on
 * the host engine, every result compared with plain C on the host.
 *
 * Each thread applies every f32 operation to pairs (and triples) of edge
 * values: ±0, ±inf, NaNs of both signs and kinds, denormals, FLT_MIN,
 * FLT_MAX, rounding ties.  The C side is written out here from the rules
 * of Documentation/compiler.rst (round to nearest even, canonical NaN
 * results, maximumf/minimumf as MLIR's, saturating conversions with NaN to
 * 0), not taken from the ALU.  A reduction checks that REDUCE folds in
 * iteration order, and host programs check that @main computes what the
 * fabric does.
 */
#include <math.h>

#include "check.h"
#include "engine_run.h"

#define VA(k)	(ER_DATA_VA + (uint64_t)(k) * 0x4000)
#define CNAN	0x7fc00000U

static const uint32_t edges[] = {
	0x00000000, 0x80000000, 0x7f800000, 0xff800000,	/* ±0, ±inf */
	0x7fc00000, 0xffc00000, 0x7fa00001, 0x7fffffff,	/* NaNs */
	0x00000001, 0x80000001, 0x007fffff,		/* denormals */
	0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,	/* FLT_MIN, FLT_MAX */
	0x3f800000, 0xbf800000, 0x3f800001, 0x33800000,	/* ±1, 1 + ulp, 2^-24 */
	0x4b800000, 0x4b800001, 0x40490fdb, 0x3eaaaaab,	/* 2^24, pi, 1/3 */
	0x4f000000, 0xcf000000, 0x5f000000, 0xdf000000,	/* ±2^31, ±2^63 */
	0x4f800000, 0x5f800000, 0x3f000000, 0xbfc00000,	/* 2^32, 2^64, 0.5, -1.5 */
	0x40200000, 0xc0200000, 0x4effffff, 0x3f7fffff,	/* ±2.5, below 2^31, below 1 */
};
#define NE	(sizeof(edges) / sizeof(edges[0]))
#define NPAIRS	(NE * NE)

static float flt(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint32_t bits(float f)
{
	uint32_t u;

	if (isnan(f))
		return CNAN;
	memcpy(&u, &f, sizeof(u));
	return u;
}

/* maximumf / minimumf per MLIR: NaN propagates, -0 < +0. */
static float c_maximum(float a, float b, bool max)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return (signbit(a) != 0) == max ? b : a;
	return (a > b) == max ? a : b;
}

static void pair(unsigned i, uint32_t *a, uint32_t *b, uint32_t *c)
{
	*a = edges[i % NE];
	*b = edges[i / NE];
	*c = edges[(i * 7 + 3) % NE];
}

static const char arith_src[] =
	"dataflow.thread private @farith domain(#dataflow.thread_domain<dense>)(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %o0: memref<?xf32>, %o1: memref<?xf32>, %o2: memref<?xf32>, %o3: memref<?xf32>, %o4: memref<?xf32>, %o5: memref<?xf32>, %o6: memref<?xf32>, %o7: memref<?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xf32>\n"
	"  %y = memref.load %b[%i] : memref<?xf32>\n"
	"  %z = memref.load %c[%i] : memref<?xf32>\n"
	"  %r0 = arith.addf %x, %y : f32\n"
	"  %r1 = arith.subf %x, %y : f32\n"
	"  %r2 = arith.mulf %x, %y : f32\n"
	"  %r3 = arith.divf %x, %y : f32\n"
	"  %r4 = arith.maximumf %x, %y : f32\n"
	"  %r5 = arith.minimumf %x, %y : f32\n"
	"  %r6 = math.fma %x, %y, %z : f32\n"
	"  %r7 = arith.negf %x : f32\n"
	"  memref.store %r0, %o0[%i] : memref<?xf32>\n"
	"  memref.store %r1, %o1[%i] : memref<?xf32>\n"
	"  memref.store %r2, %o2[%i] : memref<?xf32>\n"
	"  memref.store %r3, %o3[%i] : memref<?xf32>\n"
	"  memref.store %r4, %o4[%i] : memref<?xf32>\n"
	"  memref.store %r5, %o5[%i] : memref<?xf32>\n"
	"  memref.store %r6, %o6[%i] : memref<?xf32>\n"
	"  memref.store %r7, %o7[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(arithmetic_vs_c_16x16)
{
	static uint32_t a[NPAIRS], b[NPAIRS], c[NPAIRS], got[8][NPAIRS];
	uint64_t args[11];
	int64_t ext[] = { NPAIRS };
	struct er e;

	REQUIRE(er_open(&e, arith_src, 16, 16) == 0);
	for (unsigned i = 0; i < NPAIRS; i++)
		pair(i, &a[i], &b[i], &c[i]);
	for (unsigned k = 0; k < 11; k++)
		args[k] = VA(k);
	fake_bus_poke(&e.bus, VA(0), a, sizeof(a));
	fake_bus_poke(&e.bus, VA(1), b, sizeof(b));
	fake_bus_poke(&e.bus, VA(2), c, sizeof(c));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "farith", args, ext, 0, 0, 0));
	for (unsigned k = 0; k < 8; k++)
		fake_bus_peek(&e.bus, VA(3 + k), got[k], sizeof(got[k]));
	for (unsigned i = 0; i < NPAIRS; i++) {
		float x = flt(a[i]), y = flt(b[i]), z = flt(c[i]);

		CHECK_EQ(bits(x + y), got[0][i]);
		CHECK_EQ(bits(x - y), got[1][i]);
		CHECK_EQ(bits(x * y), got[2][i]);
		CHECK_EQ(bits(x / y), got[3][i]);
		CHECK_EQ(bits(c_maximum(x, y, true)), got[4][i]);
		CHECK_EQ(bits(c_maximum(x, y, false)), got[5][i]);
		CHECK_EQ(bits(fmaf(x, y, z)), got[6][i]);
		CHECK_EQ(a[i] ^ 0x80000000U, got[7][i]);	/* NaN's sign too */
	}
	er_close(&e);
}

/*
 * All sixteen predicates of a pair, bit k for predicate k (MLIR's order):
 * the source, written out by cmp_source().
 */
static const char *const fpreds[16] = {
	"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
	"uge", "ult", "ule", "une", "uno", "true",
};

static char *cmp_source(void)
{
	size_t cap = 8192, n = 0;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	n += snprintf(t + n, cap - n,
		"dataflow.thread private @fcmp domain(#dataflow.thread_domain<dense>)(%%a: memref<?xf32>, %%b: memref<?xf32>, %%o: memref<?xi32>) ctrl(%%ctl: none) iv(%%i: index) {\n"
		"  %%x = memref.load %%a[%%i] : memref<?xf32>\n"
		"  %%y = memref.load %%b[%%i] : memref<?xf32>\n"
		"  %%m0 = arith.constant 0 : i32\n");
	for (int k = 0; k < 16; k++)
		n += snprintf(t + n, cap - n,
			"  %%p%d = arith.cmpf %s, %%x, %%y : f32\n"
			"  %%e%d = arith.extui %%p%d : i1 to i32\n"
			"  %%k%d = arith.constant %d : i32\n"
			"  %%s%d = arith.shli %%e%d, %%k%d : i32\n"
			"  %%m%d = arith.ori %%m%d, %%s%d : i32\n",
			k, fpreds[k], k, k, k, k, k, k, k, k + 1, k, k);
	snprintf(t + n, cap - n,
		"  memref.store %%m16, %%o[%%i] : memref<?xi32>\n"
		"  dataflow.thread.yield %%ctl : none\n"
		"}\n");
	return t;
}

static bool c_cmp(unsigned k, float a, float b)
{
	bool u = isnan(a) || isnan(b);
	bool r[16] = {
		false, !u && a == b, !u && a > b, !u && a >= b, !u && a < b,
		!u && a <= b, !u && a != b, !u, u || a == b, u || a > b,
		u || a >= b, u || a < b, u || a <= b, u || a != b, u, true,
	};

	return r[k];
}

TEST(compares_vs_c_16x16)
{
	static uint32_t a[NPAIRS], b[NPAIRS], c[NPAIRS], got[NPAIRS];
	uint64_t args[] = { VA(0), VA(1), VA(2) };
	int64_t ext[] = { NPAIRS };
	char *src = cmp_source();
	struct er e;

	REQUIRE(src);
	REQUIRE(er_open(&e, src, 16, 16) == 0);
	free(src);
	for (unsigned i = 0; i < NPAIRS; i++)
		pair(i, &a[i], &b[i], &c[i]);
	fake_bus_poke(&e.bus, VA(0), a, sizeof(a));
	fake_bus_poke(&e.bus, VA(1), b, sizeof(b));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "fcmp", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, VA(2), got, sizeof(got));
	for (unsigned i = 0; i < NPAIRS; i++) {
		uint32_t want = 0;

		for (unsigned k = 0; k < 16; k++)
			want |= (uint32_t)c_cmp(k, flt(a[i]), flt(b[i])) << k;
		CHECK_EQ(want, got[i]);
	}
	er_close(&e);
}

static const char conv_src[] =
	"dataflow.thread private @fconv domain(#dataflow.thread_domain<dense>)(%f: memref<?xf32>, %w: memref<?xi32>, %l: memref<?xi64>, %o0: memref<?xf32>, %o1: memref<?xf32>, %o2: memref<?xf32>, %o3: memref<?xf32>, %o4: memref<?xi32>, %o5: memref<?xi32>, %o6: memref<?xi64>, %o7: memref<?xi64>, %o8: memref<?xi32>, %o9: memref<?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %f[%i] : memref<?xf32>\n"
	"  %n = memref.load %w[%i] : memref<?xi32>\n"
	"  %m = memref.load %l[%i] : memref<?xi64>\n"
	"  %r0 = arith.sitofp %n : i32 to f32\n"
	"  %r1 = arith.uitofp %n : i32 to f32\n"
	"  %r2 = arith.sitofp %m : i64 to f32\n"
	"  %r3 = arith.uitofp %m : i64 to f32\n"
	"  %r4 = arith.fptosi %x : f32 to i32\n"
	"  %r5 = arith.fptoui %x : f32 to i32\n"
	"  %r6 = arith.fptosi %x : f32 to i64\n"
	"  %r7 = arith.fptoui %x : f32 to i64\n"
	"  %xb = arith.bitcast %x : f32 to i32\n"
	"  %one = arith.constant 1 : i32\n"
	"  %r8 = arith.addi %xb, %one : i32\n"
	"  %r9 = arith.bitcast %n : i32 to f32\n"
	"  memref.store %r0, %o0[%i] : memref<?xf32>\n"
	"  memref.store %r1, %o1[%i] : memref<?xf32>\n"
	"  memref.store %r2, %o2[%i] : memref<?xf32>\n"
	"  memref.store %r3, %o3[%i] : memref<?xf32>\n"
	"  memref.store %r4, %o4[%i] : memref<?xi32>\n"
	"  memref.store %r5, %o5[%i] : memref<?xi32>\n"
	"  memref.store %r6, %o6[%i] : memref<?xi64>\n"
	"  memref.store %r7, %o7[%i] : memref<?xi64>\n"
	"  memref.store %r8, %o8[%i] : memref<?xi32>\n"
	"  memref.store %r9, %o9[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* f32 -> integer of @w bits, toward zero, saturating, NaN to 0. */
static int64_t c_ftosi(float f, unsigned w)
{
	double lim = ldexp(1.0, (int)w - 1);

	if (isnan(f))
		return 0;
	if (f >= lim)
		return w == 64 ? INT64_MAX : INT32_MAX;
	if (f <= -lim)
		return w == 64 ? INT64_MIN : INT32_MIN;
	return (int64_t)f;
}

static uint64_t c_ftoui(float f, unsigned w)
{
	double lim = ldexp(1.0, (int)w);

	if (isnan(f) || f <= 0)
		return 0;
	if (f >= lim)
		return w == 64 ? UINT64_MAX : UINT32_MAX;
	return (uint64_t)f;
}

static const int64_t ints[] = {
	0, 1, -1, 7, 16777217, 16777219, -16777217, INT32_MAX, INT32_MIN,
	INT64_MAX, INT64_MIN, 0x123456789abcdefLL, -0x123456789abcdefLL,
	0x20000010000001LL, 0x7fffff8000000001LL, 0x3f800000, 0xff800000LL,
};
#define NI	(sizeof(ints) / sizeof(ints[0]))

TEST(conversions_vs_c_16x16)
{
	enum { N = NE * NI };
	static uint32_t f[N], o0[N], o1[N], o2[N], o3[N], o4[N], o5[N], o8[N],
		o9[N];
	static int32_t w[N];
	static int64_t l[N], o6[N], o7[N];
	uint64_t args[13];
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, conv_src, 16, 16) == 0);
	for (unsigned i = 0; i < N; i++) {
		f[i] = edges[i % NE];
		l[i] = ints[i / NE];
		w[i] = (int32_t)(uint32_t)(uint64_t)l[i];
	}
	for (unsigned k = 0; k < 13; k++)
		args[k] = VA(k);
	fake_bus_poke(&e.bus, VA(0), f, sizeof(f));
	fake_bus_poke(&e.bus, VA(1), w, sizeof(w));
	fake_bus_poke(&e.bus, VA(2), l, sizeof(l));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "fconv", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, VA(3), o0, sizeof(o0));
	fake_bus_peek(&e.bus, VA(4), o1, sizeof(o1));
	fake_bus_peek(&e.bus, VA(5), o2, sizeof(o2));
	fake_bus_peek(&e.bus, VA(6), o3, sizeof(o3));
	fake_bus_peek(&e.bus, VA(7), o4, sizeof(o4));
	fake_bus_peek(&e.bus, VA(8), o5, sizeof(o5));
	fake_bus_peek(&e.bus, VA(9), o6, sizeof(o6));
	fake_bus_peek(&e.bus, VA(10), o7, sizeof(o7));
	fake_bus_peek(&e.bus, VA(11), o8, sizeof(o8));
	fake_bus_peek(&e.bus, VA(12), o9, sizeof(o9));
	for (unsigned i = 0; i < N; i++) {
		float x = flt(f[i]);

		CHECK_EQ(bits((float)w[i]), o0[i]);
		CHECK_EQ(bits((float)(uint32_t)w[i]), o1[i]);
		CHECK_EQ(bits((float)l[i]), o2[i]);
		CHECK_EQ(bits((float)(uint64_t)l[i]), o3[i]);
		CHECK_EQ((uint32_t)c_ftosi(x, 32), o4[i]);
		CHECK_EQ((uint32_t)c_ftoui(x, 32), o5[i]);
		CHECK_EQ(c_ftosi(x, 64), o6[i]);
		CHECK_EQ((int64_t)c_ftoui(x, 64), o7[i]);
		CHECK_EQ(f[i] + 1, o8[i]);	/* the bits, as an integer */
		CHECK_EQ((uint32_t)w[i], o9[i]);	/* NaN bits kept as they are */
	}
	er_close(&e);
}

/*
 * A dot product carried in an iter_arg (REDUCE with FADD) and a running
 * maximum (FMAX): float addition is not associative, so the values below
 * give a different sum in any order but the loop's.
 */
static const char dot_src[] =
	"dataflow.thread private @fdot domain(#dataflow.thread_domain<dense>)(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>, %chunk: index) ctrl(%ctl: none) iv(%p: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %zero = arith.constant 0.0 : f32\n"
	"  %ninf = arith.constant 0xFF800000 : f32\n"
	"  %lo = arith.muli %p, %chunk : index\n"
	"  %hi = arith.addi %lo, %chunk : index\n"
	"  %sum, %max = scf.for %j = %lo to %hi step %c1 iter_args(%acc = %zero, %m = %ninf) -> (f32, f32) {\n"
	"    %a = memref.load %x[%j] : memref<?xf32>\n"
	"    %b = memref.load %y[%j] : memref<?xf32>\n"
	"    %ab = arith.mulf %a, %b : f32\n"
	"    %next = arith.addf %acc, %ab : f32\n"
	"    %mx = arith.maximumf %m, %ab : f32\n"
	"    scf.yield %next, %mx : f32, f32\n"
	"  }\n"
	"  %two = arith.constant 2 : index\n"
	"  %at = arith.muli %p, %two : index\n"
	"  %at1 = arith.addi %at, %c1 : index\n"
	"  memref.store %sum, %out[%at] : memref<?xf32>\n"
	"  memref.store %max, %out[%at1] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(reduction_in_order_8x8)
{
	enum { PARTS = 4, CHUNK = 97, N = PARTS * CHUNK };
	static float x[N], y[N], got[2 * PARTS];
	uint64_t args[] = { VA(0), VA(1), VA(2), CHUNK };
	int64_t ext[] = { PARTS };
	struct er e;

	REQUIRE(er_open(&e, dot_src, 8, 8) == 0);
	for (int i = 0; i < N; i++) {
		x[i] = 1.0f / (float)(i % CHUNK + 1);
		y[i] = i % 3 == 0 ? -1.7f : 3.3f + (float)i / 7.0f;
	}
	fake_bus_poke(&e.bus, VA(0), x, sizeof(x));
	fake_bus_poke(&e.bus, VA(1), y, sizeof(y));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "fdot", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, VA(2), got, sizeof(got));
	for (int p = 0; p < PARTS; p++) {
		float sum = 0.0f, rev = 0.0f, max = -INFINITY;

		for (int j = p * CHUNK; j < (p + 1) * CHUNK; j++) {
			sum += x[j] * y[j];
			max = c_maximum(max, x[j] * y[j], true);
		}
		for (int j = (p + 1) * CHUNK - 1; j >= p * CHUNK; j--)
			rev += x[j] * y[j];
		CHECK(bits(sum) != bits(rev));	/* the order shows */
		CHECK_EQ(bits(sum), bits(got[2 * p]));
		CHECK_EQ(bits(max), bits(got[2 * p + 1]));
	}
	er_close(&e);
}

/*
 * Host programs: @main computes each operation itself and on the fabric
 * (a thread per operation kind), and loom.check compares the bits.
 */
static const char host_src[] =
	"dataflow.thread private @k domain(#dataflow.thread_domain<dense>)(%a: memref<?xf32>, %b: memref<?xf32>, %o: memref<?xf32>, %s: f32) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xf32>\n"
	"  %y = memref.load %b[%i] : memref<?xf32>\n"
	"  %m = math.fma %x, %y, %s : f32\n"
	"  %d = arith.divf %m, %y : f32\n"
	"  %n = arith.negf %d : f32\n"
	"  %c = arith.cmpf ult, %n, %x : f32\n"
	"  %r = arith.select %c, %n, %x : f32\n"
	"  memref.store %r, %o[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %n = arith.constant 200 : index\n"
	"  %s = arith.constant -1.5e-3 : f32\n"
	"  %a = memref.alloc(%n) : memref<?xf32>\n"
	"  %b = memref.alloc(%n) : memref<?xf32>\n"
	"  %o = memref.alloc(%n) : memref<?xf32>\n"
	"  %third = arith.constant 0.333333343 : f32\n"
	"  %big = arith.constant 0x7F7FFFFF : f32\n"
	"  scf.for %i = %c0 to %n step %c1 {\n"
	"    %v = arith.index_cast %i : index to i32\n"
	"    %f = arith.sitofp %v : i32 to f32\n"
	"    %g = arith.mulf %f, %third : f32\n"
	"    %seven = arith.constant 7 : i32\n"
	"    %r = arith.remsi %v, %seven : i32\n"
	"    %z = arith.constant 0 : i32\n"
	"    %isz = arith.cmpi eq, %r, %z : i32\n"
	"    %h = arith.select %isz, %big, %g : f32\n"
	"    %k = arith.subf %h, %f : f32\n"
	"    memref.store %g, %a[%i] : memref<?xf32>\n"
	"    memref.store %k, %b[%i] : memref<?xf32>\n"
	"  }\n"
	"  %t = dataflow.thread.launch @k(%a, %b, %o, %s) grid(%n) : (memref<?xf32>, memref<?xf32>, memref<?xf32>, f32) -> !dataflow.thread_token\n"
	"  dataflow.thread.wait %t : !dataflow.thread_token\n"
	"  scf.for %i = %c0 to %n step %c1 {\n"
	"    %x = memref.load %a[%i] : memref<?xf32>\n"
	"    %y = memref.load %b[%i] : memref<?xf32>\n"
	"    %m = math.fma %x, %y, %s : f32\n"
	"    %d = arith.divf %m, %y : f32\n"
	"    %nn = arith.negf %d : f32\n"
	"    %c = arith.cmpf ult, %nn, %x : f32\n"
	"    %want = arith.select %c, %nn, %x : f32\n"
	"    %got = memref.load %o[%i] : memref<?xf32>\n"
	"    loom.check %got, %want : f32\n"
	"  }\n"
	"  return\n"
	"}\n";

TEST(host_program_agrees_with_fabric_8x8)
{
	struct er e;

	REQUIRE(er_open(&e, host_src, 8, 8) == 0);
	CHECK_EQ(0, er_run_host(&e, "main"));
	er_close(&e);
}

/* And a wrong expectation in f32 is caught (loom.check compares bits). */
TEST(host_program_check_catches_f32_8x8)
{
	char *text = strdup(host_src), *at;
	struct er e;

	REQUIRE(text);
	at = strstr(text, "%want = arith.select %c, %nn, %x");
	REQUIRE(at);
	memcpy(at, "%want = arith.select %c, %x, %nn", 32);
	at = strstr(text, "arith.constant 200 : index");	/* 3 instances: quiet */
	REQUIRE(at);
	memcpy(at, "arith.constant   3 : index", 26);
	REQUIRE(er_open(&e, text, 8, 8) == 0);
	CHECK(er_run_host(&e, "main") > 0);
	er_close(&e);
	free(text);
}

/*
 * The examples: @main on the engine prints what NAME.expected holds.  The
 * engine backend's context, with what PRINT wrote after it.
 */
struct capture {
	struct er_host h;	/* first: the er_host_* callbacks' context */
	char text[1024];
	size_t len;
};

/* As libloom prints an f32 (lib/host.c): 9 significant digits. */
static void capture_print(void *ctx, enum loom_arg_type type, int64_t v)
{
	struct capture *c = ctx;
	uint32_t u = (uint32_t)v;
	int n;

	if (type == LOOM_ARG_F32)
		n = snprintf(c->text + c->len, sizeof(c->text) - c->len,
			     "%.9g\n", (double)flt(u));
	else
		n = snprintf(c->text + c->len, sizeof(c->text) - c->len,
			     "%lld\n", (long long)v);
	if (n > 0 && (size_t)n < sizeof(c->text) - c->len)
		c->len += (size_t)n;
}

TEST(examples_print_their_expected_output_8x8)
{
	static const char *const names[] = { "saxpy", "dot" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		static const struct loom_interp_backend be = {
			.alloc = er_host_alloc, .load = er_host_load,
			.store = er_host_store, .launch = er_host_launch,
			.wait = er_host_wait, .check_failed = er_host_check_failed,
			.print = capture_print,
		};
		char path[64];
		struct capture cap = { .len = 0 };
		char *src, *want;
		struct er e;

		snprintf(path, sizeof(path), "examples/%s.loom", names[i]);
		src = er_read_file(path);
		snprintf(path, sizeof(path), "examples/%s.expected", names[i]);
		want = er_read_file(path);
		REQUIRE(src && want);
		REQUIRE(er_open(&e, src, 8, 8) == 0);
		cap.h = (struct er_host){ .e = &e, .heap = ER_HEAP_VA };
		CHECK_EQ(0, loom_interp_run(&e.view,
					    loom_view_find_host_func(&e.view, "main"),
					    &be, &cap, NULL));
		CHECK_EQ(0, cap.h.failed_checks);
		cap.text[cap.len] = 0;
		if (strcmp(cap.text, want)) {
			printf("#   %s printed:\n%s#   expected:\n%s", names[i],
			       cap.text, want);
			CHECK(0);
		}
		er_close(&e);
		free(src);
		free(want);
	}
}

int main(void)
{
	RUN(arithmetic_vs_c_16x16);
	RUN(compares_vs_c_16x16);
	RUN(conversions_vs_c_16x16);
	RUN(reduction_in_order_8x8);
	RUN(host_program_agrees_with_fabric_8x8);
	RUN(host_program_check_catches_f32_8x8);
	RUN(examples_print_their_expected_output_8x8);
	return checks_done();
}
