// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scf.if compiled and run: threads whose branches store, load, spawn or
 * only compute, on the host engine, and host functions whose branches
 * run in format/'s interpreter; every result is compared with plain C.
 * A branch not taken must leave no trace in memory (its stores) and give
 * no child (its spawns).
 */
#include "check.h"
#include "engine_run.h"

#define A_VA	(ER_DATA_VA)
#define B_VA	(ER_DATA_VA + 0x20000)
#define C_VA	(ER_DATA_VA + 0x40000)
#define D_VA	(ER_DATA_VA + 0x60000)
#define E_VA	(ER_DATA_VA + 0x80000)

#define UNTOUCHED	(-7)	/* what memory a branch not taken keeps */

/* syrk's and trmm's domain: only j <= i is written. */
static const char tri_src[] =
	"dataflow.thread private @tri domain(#dataflow.thread_domain<dense>)(%n: index, %c: memref<?xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %le = arith.cmpi ule, %j, %i : index\n"
	"  scf.if %le {\n"
	"    %row = arith.muli %i, %n : index\n"
	"    %k = arith.addi %row, %j : index\n"
	"    %p = arith.muli %i, %j : index\n"
	"    %v = arith.index_cast %p : index to i64\n"
	"    memref.store %v, %c[%k] : memref<?xi64>\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void tri_on(unsigned w, unsigned h)
{
	enum { N = 11 };
	int64_t c[N * N];
	uint64_t args[] = { N, A_VA };
	int64_t ext[] = { N, N };
	struct er e;

	REQUIRE(er_open(&e, tri_src, w, h) == 0);
	for (int k = 0; k < N * N; k++)
		c[k] = UNTOUCHED;
	er_poke64(&e, A_VA, c, N * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "tri", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, c, N * N);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			CHECK_EQ(j <= i ? i * j : UNTOUCHED, c[i * N + j]);
	er_close(&e);
}

TEST(triangular_store_4x4_and_8x8)
{
	tri_on(4, 4);
	tri_on(8, 8);
}

/* Each branch stores to its own memref: exactly one of them per item. */
static const char split_src[] =
	"dataflow.thread private @split domain(#dataflow.thread_domain<dense>)(%x: memref<?xi64>, %even: memref<?xi64>, %odd: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %v = memref.load %x[%i] : memref<?xi64>\n"
	"  %one = arith.constant 1 : i64\n"
	"  %low = arith.andi %v, %one : i64\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %is_even = arith.cmpi eq, %low, %zero : i64\n"
	"  scf.if %is_even {\n"
	"    memref.store %v, %even[%i] : memref<?xi64>\n"
	"  } else {\n"
	"    %n = arith.subi %zero, %v : i64\n"
	"    memref.store %n, %odd[%i] : memref<?xi64>\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(then_and_else_store_8x8)
{
	enum { N = 50 };
	int64_t x[N], even[N], odd[N];
	uint64_t args[] = { A_VA, B_VA, C_VA };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, split_src, 8, 8) == 0);
	for (int i = 0; i < N; i++) {
		x[i] = i * 7 - 20;
		even[i] = odd[i] = UNTOUCHED;
	}
	er_poke64(&e, A_VA, x, N);
	er_poke64(&e, B_VA, even, N);
	er_poke64(&e, C_VA, odd, N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "split", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, even, N);
	er_peek64(&e, C_VA, odd, N);
	for (int i = 0; i < N; i++) {
		bool is_even = (x[i] & 1) == 0;

		CHECK_EQ(is_even ? x[i] : UNTOUCHED, even[i]);
		CHECK_EQ(is_even ? UNTOUCHED : -x[i], odd[i]);
	}
	er_close(&e);
}

/*
 * Both branches store to one memref and a load after the if reads it
 * back: the load must wait for whichever store ran.
 */
static const char same_src[] =
	"dataflow.thread private @same domain(#dataflow.thread_domain<dense>)(%x: memref<?xi64>, %m: memref<?xi64>, %y: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %v = memref.load %x[%i] : memref<?xi64>\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %neg = arith.cmpi slt, %v, %zero : i64\n"
	"  scf.if %neg {\n"
	"    %a = arith.subi %zero, %v : i64\n"
	"    memref.store %a, %m[%i] : memref<?xi64>\n"
	"  } else {\n"
	"    %b = arith.addi %v, %v : i64\n"
	"    memref.store %b, %m[%i] : memref<?xi64>\n"
	"  }\n"
	"  %back = memref.load %m[%i] : memref<?xi64>\n"
	"  %r = arith.addi %back, %v : i64\n"
	"  memref.store %r, %y[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(both_branches_store_then_load_4x4)
{
	enum { N = 33 };
	int64_t x[N], m[N], y[N];
	uint64_t args[] = { A_VA, B_VA, C_VA };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, same_src, 4, 4) == 0);
	for (int i = 0; i < N; i++) {
		x[i] = (i * 13) % 17 - 8;
		m[i] = UNTOUCHED;
	}
	er_poke64(&e, A_VA, x, N);
	er_poke64(&e, B_VA, m, N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "same", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, m, N);
	er_peek64(&e, C_VA, y, N);
	for (int i = 0; i < N; i++) {
		int64_t want = x[i] < 0 ? -x[i] : 2 * x[i];

		CHECK_EQ(want, m[i]);
		CHECK_EQ(want + x[i], y[i]);
	}
	er_close(&e);
}

/*
 * In a loop: a guarded load (j < lim; x beyond lim is not read) as a
 * result feeding the reduction, and a guarded store of each positive
 * element.
 */
static const char loop_src[] =
	"dataflow.thread private @guarded domain(#dataflow.thread_domain<dense>)(%x: memref<?xi64>, %pos: memref<?xi64>, %sum: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%r: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %in = arith.cmpi sle, %j, %r : index\n"
	"    %v = scf.if %in -> (i64) {\n"
	"      %xj = memref.load %x[%j] : memref<?xi64>\n"
	"      scf.yield %xj : i64\n"
	"    } else {\n"
	"      scf.yield %zero : i64\n"
	"    }\n"
	"    %next = arith.addi %acc, %v : i64\n"
	"    scf.yield %next : i64\n"
	"  }\n"
	"  memref.store %s, %sum[%r] : memref<?xi64>\n"
	"  %row = arith.muli %r, %n : index\n"
	"  scf.for %j = %c0 to %n step %c1 {\n"
	"    %xj = memref.load %x[%j] : memref<?xi64>\n"
	"    %p = arith.cmpi sgt, %xj, %zero : i64\n"
	"    scf.if %p {\n"
	"      %k = arith.addi %row, %j : index\n"
	"      memref.store %xj, %pos[%k] : memref<?xi64>\n"
	"    }\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(if_in_loops_8x8)
{
	enum { N = 9 };
	int64_t x[N], pos[N * N], sum[N];
	uint64_t args[] = { A_VA, B_VA, C_VA, N };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, loop_src, 8, 8) == 0);
	for (int j = 0; j < N; j++)
		x[j] = (j * 5) % 7 - 3;
	for (int k = 0; k < N * N; k++)
		pos[k] = UNTOUCHED;
	er_poke64(&e, A_VA, x, N);
	er_poke64(&e, B_VA, pos, N * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "guarded", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, pos, N * N);
	er_peek64(&e, C_VA, sum, N);
	for (int r = 0; r < N; r++) {
		int64_t s = 0;

		for (int j = 0; j <= r; j++)
			s += x[j];
		CHECK_EQ(s, sum[r]);
		for (int j = 0; j < N; j++)
			CHECK_EQ(x[j] > 0 ? x[j] : UNTOUCHED, pos[r * N + j]);
	}
	er_close(&e);
}

/*
 * Pure branches (computed both, then selected), nested, with an f32
 * result from a gated load.
 */
static const char nest_src[] =
	"dataflow.thread private @nest domain(#dataflow.thread_domain<dense>)(%x: memref<?xi64>, %f: memref<?xf32>, %y: memref<?xi64>, %g: memref<?xf32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %v = memref.load %x[%i] : memref<?xi64>\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %ten = arith.constant 10 : i64\n"
	"  %neg = arith.cmpi slt, %v, %zero : i64\n"
	"  %r = scf.if %neg -> (i64) {\n"
	"    %a = arith.subi %zero, %v : i64\n"
	"    scf.yield %a : i64\n"
	"  } else {\n"
	"    %big = arith.cmpi sgt, %v, %ten : i64\n"
	"    %b = scf.if %big -> (i64) {\n"
	"      %q = arith.divsi %v, %ten : i64\n"
	"      scf.yield %q : i64\n"
	"    } else {\n"
	"      %m = arith.muli %v, %ten : i64\n"
	"      scf.yield %m : i64\n"
	"    }\n"
	"    scf.yield %b : i64\n"
	"  }\n"
	"  memref.store %r, %y[%i] : memref<?xi64>\n"
	"  %half = arith.constant 0.5 : f32\n"
	"  %h = scf.if %neg -> (f32) {\n"
	"    %fi = memref.load %f[%i] : memref<?xf32>\n"
	"    scf.yield %fi : f32\n"
	"  } else {\n"
	"    scf.yield %half : f32\n"
	"  }\n"
	"  memref.store %h, %g[%i] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(nested_pure_and_f32_results_8x8)
{
	enum { N = 40 };
	int64_t x[N], y[N];
	float f[N], g[N];
	uint64_t args[] = { A_VA, B_VA, C_VA, D_VA };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, nest_src, 8, 8) == 0);
	for (int i = 0; i < N; i++) {
		x[i] = i * 3 - 50;
		f[i] = -1.25f * (float)i;
	}
	er_poke64(&e, A_VA, x, N);
	fake_bus_poke(&e.bus, B_VA, f, sizeof(f));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "nest", args, ext, 0, 0, 0));
	er_peek64(&e, C_VA, y, N);
	fake_bus_peek(&e.bus, D_VA, g, sizeof(g));
	for (int i = 0; i < N; i++) {
		int64_t v = x[i];
		float want = v < 0 ? f[i] : 0.5f;

		CHECK_EQ(v < 0 ? -v : v > 10 ? v / 10 : v * 10, y[i]);
		CHECK(memcmp(&want, &g[i], 4) == 0);
	}
	er_close(&e);
}

/* A search that spawns only where it must: odd items have a child. */
static const char spawn_src[] =
	"dataflow.thread private @odd_child domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%item: i64) ctrl(%ctl: none) attributes {loom.child_capacity = 1} {\n"
	"  %one = arith.constant 1 : i64\n"
	"  %low = arith.andi %item, %one : i64\n"
	"  %odd = arith.cmpi eq, %low, %one : i64\n"
	"  scf.if %odd {\n"
	"    %c = arith.muli %item, %item : i64\n"
	"    dataflow.work.spawn %c : i64\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(conditional_spawn_4x4)
{
	enum { N = 12 };
	int64_t items[N], rec[N * 2];
	uint64_t args[] = { 0 };
	struct er e;

	REQUIRE(er_open(&e, spawn_src, 4, 4) == 0);
	CHECK_EQ(1, loom_view_thread(&e.view, 0).child_capacity);
	for (int i = 0; i < N; i++)
		items[i] = i + 3;
	er_poke64(&e, D_VA, items, N);
	CHECK_EQ(LOOM_STATUS_OK,
		 er_launch(&e, "odd_child", args, NULL, N, D_VA, E_VA));
	er_peek64(&e, E_VA, rec, N * 2);
	for (int i = 0; i < N; i++) {
		bool odd = items[i] & 1;

		CHECK_EQ(odd ? 1 : 0, (uint32_t)rec[i * 2]);
		if (odd)
			CHECK_EQ(items[i] * items[i], rec[i * 2 + 1]);
	}
	er_close(&e);
}

/*
 * Spawns in branches and between them: the children an item gets are
 * those of the spawns it executes, in program order.
 */
static const char spawns_src[] =
	"dataflow.thread private @some domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%item: i64) ctrl(%ctl: none) {\n"
	"  %one = arith.constant 1 : i64\n"
	"  %two = arith.constant 2 : i64\n"
	"  %ten = arith.constant 10 : i64\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %base = arith.muli %item, %ten : i64\n"
	"  %b0 = arith.andi %item, %one : i64\n"
	"  %odd = arith.cmpi ne, %b0, %zero : i64\n"
	"  scf.if %odd {\n"
	"    %c1 = arith.addi %base, %one : i64\n"
	"    dataflow.work.spawn %c1 : i64\n"
	"  }\n"
	"  %c2 = arith.addi %base, %two : i64\n"
	"  dataflow.work.spawn %c2 : i64\n"
	"  %b1 = arith.andi %item, %two : i64\n"
	"  %bit1 = arith.cmpi ne, %b1, %zero : i64\n"
	"  scf.if %bit1 {\n"
	"    %three = arith.constant 3 : i64\n"
	"    %c3 = arith.addi %base, %three : i64\n"
	"    dataflow.work.spawn %c3 : i64\n"
	"    scf.if %odd {\n"
	"      %five = arith.constant 5 : i64\n"
	"      %c5 = arith.addi %base, %five : i64\n"
	"      dataflow.work.spawn %c5 : i64\n"
	"    }\n"
	"  } else {\n"
	"    %four = arith.constant 4 : i64\n"
	"    %c4 = arith.addi %base, %four : i64\n"
	"    dataflow.work.spawn %c4 : i64\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(spawns_in_branches_keep_program_order_8x8)
{
	enum { N = 8, CAP = 5 };
	int64_t items[N], rec[N * (CAP + 1)];
	uint64_t args[] = { 0 };
	struct er e;

	REQUIRE(er_open(&e, spawns_src, 8, 8) == 0);
	/* one per spawn outside loops: a bound on the children */
	CHECK_EQ(CAP, loom_view_thread(&e.view, 0).child_capacity);
	for (int i = 0; i < N; i++)
		items[i] = i;
	er_poke64(&e, D_VA, items, N);
	CHECK_EQ(LOOM_STATUS_OK,
		 er_launch(&e, "some", args, NULL, N, D_VA, E_VA));
	er_peek64(&e, E_VA, rec, N * (CAP + 1));
	for (int i = 0; i < N; i++) {
		int64_t want[CAP], b = items[i] * 10;
		unsigned n = 0;

		if (items[i] & 1)
			want[n++] = b + 1;
		want[n++] = b + 2;
		if (items[i] & 2) {
			want[n++] = b + 3;
			if (items[i] & 1)
				want[n++] = b + 5;
		} else {
			want[n++] = b + 4;
		}
		CHECK_EQ(n, (uint32_t)rec[i * (CAP + 1)]);
		for (unsigned k = 0; k < n; k++)
			CHECK_EQ(want[k], rec[i * (CAP + 1) + 1 + k]);
	}
	er_close(&e);
}

/* Host functions: branches are loops run once or not at all. */
static const char host_src[] =
	"func.func @main() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %n = arith.constant 10 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %three = arith.constant 3 : i64\n"
	"  %m = memref.alloc(%n) : memref<?xi64>\n"
	"  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %v = arith.index_cast %i : index to i64\n"
	"    %r = arith.remsi %v, %three : i64\n"
	"    %is0 = arith.cmpi eq, %r, %zero : i64\n"
	"    scf.if %is0 {\n"
	"      memref.store %v, %m[%i] : memref<?xi64>\n"
	"    }\n"
	"    %w = scf.if %is0 -> (i64) {\n"
	"      scf.yield %v : i64\n"
	"    } else {\n"
	"      %nv = arith.subi %zero, %v : i64\n"
	"      scf.yield %nv : i64\n"
	"    }\n"
	"    %next = arith.addi %acc, %w : i64\n"
	"    scf.yield %next : i64\n"
	"  }\n"
	"  %want = arith.constant WANT : i64\n"
	"  loom.check %s, %want : i64\n"
	"  %c6 = arith.constant 6 : index\n"
	"  %c7 = arith.constant 7 : index\n"
	"  %six = memref.load %m[%c6] : memref<?xi64>\n"
	"  %seven = memref.load %m[%c7] : memref<?xi64>\n"
	"  %e6 = arith.constant 6 : i64\n"
	"  loom.check %six, %e6 : i64\n"
	"  loom.check %seven, %zero : i64\n"
	"  return\n"
	"}\n";

TEST(host_if_with_and_without_results)
{
	long want = 0;

	for (int i = 0; i < 10; i++)
		want += i % 3 == 0 ? i : -i;
	CHECK_EQ(0, er_host_main_want(host_src, want));
	CHECK_EQ(1, er_host_main_want(host_src, want + 1));	/* the checks do check */
}

int main(void)
{
	RUN(triangular_store_4x4_and_8x8);
	RUN(then_and_else_store_8x8);
	RUN(both_branches_store_then_load_4x4);
	RUN(if_in_loops_8x8);
	RUN(nested_pure_and_f32_results_8x8);
	RUN(conditional_spawn_4x4);
	RUN(spawns_in_branches_keep_program_order_8x8);
	RUN(host_if_with_and_without_results);
	return checks_done();
}
