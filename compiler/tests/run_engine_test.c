// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Compiled programs, run: each thread is compiled by the whole pipeline
 * (lowering, place and route, emission), its image validated and its
 * launch template patched like a loader does, then run on the host engine
 * through loom_core_run_job with concrete inputs; results are compared with
 * plain C.
 */
#include "check.h"
#include "engine_run.h"

#define A_VA	(ER_DATA_VA)
#define B_VA	(ER_DATA_VA + 0x20000)
#define C_VA	(ER_DATA_VA + 0x40000)
#define D_VA	(ER_DATA_VA + 0x60000)
#define E_VA	(ER_DATA_VA + 0x80000)

static const char vadd_src[] =
	"dataflow.thread private @vadd domain(#dataflow.thread_domain<dense>)(%a: memref<?xi64>, %b: memref<?xi64>, %c: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xi64>\n"
	"  %y = memref.load %b[%i] : memref<?xi64>\n"
	"  %s = arith.addi %x, %y : i64\n"
	"  memref.store %s, %c[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(vector_add_4x4)
{
	enum { N = 100 };
	int64_t a[N], b[N], c[N];
	uint64_t args[] = { A_VA, B_VA, C_VA };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, vadd_src, 4, 4) == 0);
	for (int i = 0; i < N; i++) {
		a[i] = i - 7;
		b[i] = (int64_t)i * i * 1000003;
	}
	er_poke64(&e, A_VA, a, N);
	er_poke64(&e, B_VA, b, N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "vadd", args, ext, 0, 0, 0));
	er_peek64(&e, C_VA, c, N);
	for (int i = 0; i < N; i++)
		CHECK_EQ(a[i] + b[i], c[i]);
	CHECK_EQ(N, e.done.counters.instances);
	/* an empty domain runs nothing and still completes */
	memset(c, 0, sizeof(c));
	er_poke64(&e, C_VA, c, N);
	ext[0] = 0;
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "vadd", args, ext, 0, 0, 0));
	er_peek64(&e, C_VA, c, 1);
	CHECK_EQ(0, c[0]);
	er_close(&e);
}

static const char saxpy_src[] =
	"dataflow.thread private @saxpy domain(#dataflow.thread_domain<dense>)(%a: i32, %x: memref<?xi32>, %y: memref<?xi32>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %xi = memref.load %x[%i] : memref<?xi32>\n"
	"  %yi = memref.load %y[%i] : memref<?xi32>\n"
	"  %ax = arith.muli %a, %xi : i32\n"
	"  %r = arith.addi %ax, %yi : i32\n"
	"  memref.store %r, %y[%i] : memref<?xi32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(saxpy_i32_4x4)
{
	enum { N = 257 };
	int32_t x[N], y[N], want[N], got[N];
	uint64_t args[] = { (uint64_t)(int64_t)-3, A_VA, B_VA };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(er_open(&e, saxpy_src, 4, 4) == 0);
	for (int i = 0; i < N; i++) {
		x[i] = i * 1000003 - 5;
		y[i] = 7 - i;
		want[i] = (int32_t)((uint32_t)-3 * (uint32_t)x[i] + (uint32_t)y[i]);
	}
	fake_bus_poke(&e.bus, A_VA, x, sizeof(x));
	fake_bus_poke(&e.bus, B_VA, y, sizeof(y));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "saxpy", args, ext, 0, 0, 0));
	fake_bus_peek(&e.bus, B_VA, got, sizeof(got));
	for (int i = 0; i < N; i++)
		CHECK_EQ(want[i], got[i]);
	er_close(&e);
}

static const char stencil_src[] =
	"dataflow.thread private @stencil domain(#dataflow.thread_domain<dense>)(%in: memref<?xi64>, %out: memref<?xi64>, %width: index, %lo0: index, %st0: index, %lo1: index, %st1: index) ctrl(%ctl: none) iv(%k0: index, %k1: index) {\n"
	"  %s0 = arith.muli %k0, %st0 : index\n"
	"  %row = arith.addi %lo0, %s0 : index\n"
	"  %s1 = arith.muli %k1, %st1 : index\n"
	"  %col = arith.addi %lo1, %s1 : index\n"
	"  %base = arith.muli %row, %width : index\n"
	"  %at = arith.addi %base, %col : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %up = arith.subi %at, %width : index\n"
	"  %down = arith.addi %at, %width : index\n"
	"  %left = arith.subi %at, %c1 : index\n"
	"  %right = arith.addi %at, %c1 : index\n"
	"  %vc = memref.load %in[%at] : memref<?xi64>\n"
	"  %vu = memref.load %in[%up] : memref<?xi64>\n"
	"  %vd = memref.load %in[%down] : memref<?xi64>\n"
	"  %vl = memref.load %in[%left] : memref<?xi64>\n"
	"  %vr = memref.load %in[%right] : memref<?xi64>\n"
	"  %four = arith.constant 4 : i64\n"
	"  %sum0 = arith.addi %vu, %vd : i64\n"
	"  %sum1 = arith.addi %vl, %vr : i64\n"
	"  %sum = arith.addi %sum0, %sum1 : i64\n"
	"  %cc = arith.muli %vc, %four : i64\n"
	"  %lap = arith.subi %sum, %cc : i64\n"
	"  memref.store %lap, %out[%at] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* The corpus's stencil2d: rows 1..H-2 step 1, columns 1..W-2 step 2. */
static void stencil_on(unsigned fw, unsigned fh)
{
	enum { W = 10, H = 8 };
	int64_t in[W * H], out[W * H], want[W * H] = { 0 };
	uint64_t args[] = { A_VA, B_VA, W, 1, 1, 1, 2 };
	int64_t ext[] = { H - 2, (W - 2 + 1) / 2 };
	struct er e;

	REQUIRE(er_open(&e, stencil_src, fw, fh) == 0);
	for (int i = 0; i < W * H; i++)
		in[i] = (int64_t)i * i - 3 * i;
	for (int r = 1; r < H - 1; r++)
		for (int c = 1; c < W - 1; c += 2) {
			int at = r * W + c;

			want[at] = in[at - W] + in[at + W] + in[at - 1] +
				   in[at + 1] - 4 * in[at];
		}
	er_poke64(&e, A_VA, in, W * H);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "stencil", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, W * H);
	for (int i = 0; i < W * H; i++)
		CHECK_EQ(want[i], out[i]);
	er_close(&e);
}

TEST(stencil2d_source_iv_8x8_and_16x16)
{
	stencil_on(8, 8);
	stencil_on(16, 16);
}

static const char matvec_src[] =
	"dataflow.thread private @matvec domain(#dataflow.thread_domain<dense>)(%a: memref<?xi64>, %x: memref<?xi64>, %y: memref<?xi64>, %cols: index) ctrl(%ctl: none) iv(%row: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %base = arith.muli %row, %cols : index\n"
	"  %dot = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %at = arith.addi %base, %j : index\n"
	"    %aij = memref.load %a[%at] : memref<?xi64>\n"
	"    %xj = memref.load %x[%j] : memref<?xi64>\n"
	"    %p = arith.muli %aij, %xj : i64\n"
	"    %s = arith.addi %acc, %p : i64\n"
	"    scf.yield %s : i64\n"
	"  }\n"
	"  memref.store %dot, %y[%row] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static void matvec_cols(struct er *e, int rows, int cols)
{
	int64_t a[64 * 16], x[16], y[64];
	uint64_t args[] = { A_VA, B_VA, C_VA, (uint64_t)cols };
	int64_t ext[] = { rows };

	for (int i = 0; i < rows * cols; i++)
		a[i] = (i * 37) % 11 - 5;
	for (int j = 0; j < cols; j++)
		x[j] = j * j - 3;
	er_poke64(e, A_VA, a, rows * cols);
	er_poke64(e, B_VA, x, cols);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(e, "matvec", args, ext, 0, 0, 0));
	er_peek64(e, C_VA, y, rows);
	for (int r = 0; r < rows; r++) {
		int64_t s = 0;

		for (int j = 0; j < cols; j++)
			s += a[r * cols + j] * x[j];
		CHECK_EQ(s, y[r]);
	}
}

TEST(matvec_scf_for_reduce_8x8)
{
	struct er e;

	REQUIRE(er_open(&e, matvec_src, 8, 8) == 0);
	matvec_cols(&e, 9, 7);
	matvec_cols(&e, 64, 16);
	/* zero columns: REDUCE emits its init, the loop body never runs */
	matvec_cols(&e, 5, 0);
	er_close(&e);
}

static const char dot_src[] =
	"dataflow.thread private @partial_dot domain(#dataflow.thread_domain<dense>)(%x: memref<?xi64>, %y: memref<?xi64>, %partial: memref<?xi64>, %chunk: index) ctrl(%ctl: none) iv(%p: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %lo = arith.muli %p, %chunk : index\n"
	"  %hi = arith.addi %lo, %chunk : index\n"
	"  %sum = scf.for %j = %lo to %hi step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %a = memref.load %x[%j] : memref<?xi64>\n"
	"    %b = memref.load %y[%j] : memref<?xi64>\n"
	"    %ab = arith.muli %a, %b : i64\n"
	"    %next = arith.addi %acc, %ab : i64\n"
	"    scf.yield %next : i64\n"
	"  }\n"
	"  memref.store %sum, %partial[%p] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(dot_reduction_dynamic_bounds_8x8)
{
	enum { PARTS = 8, CHUNK = 128, N = PARTS * CHUNK };
	static int64_t x[N], y[N];
	int64_t part[PARTS], total = 0;
	uint64_t args[] = { A_VA, B_VA, C_VA, CHUNK };
	int64_t ext[] = { PARTS };
	struct er e;

	REQUIRE(er_open(&e, dot_src, 8, 8) == 0);
	for (int i = 0; i < N; i++) {
		x[i] = i;
		y[i] = 2;
	}
	er_poke64(&e, A_VA, x, N);
	er_poke64(&e, B_VA, y, N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "partial_dot", args, ext, 0, 0, 0));
	er_peek64(&e, C_VA, part, PARTS);
	for (int p = 0; p < PARTS; p++)
		total += part[p];
	CHECK_EQ(1047552, total);
	er_close(&e);
}

static const char rank0_src[] =
	"dataflow.thread private @seed domain(#dataflow.thread_domain<dense>)(%cell: memref<1xi64>, %v: i64) ctrl(%ctl: none) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  memref.store %v, %cell[%c0] : memref<1xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"dataflow.thread private @bump domain(#dataflow.thread_domain<dense>)(%cell: memref<1xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %v = memref.load %cell[%c0] : memref<1xi64>\n"
	"  %one = arith.constant 1 : i64\n"
	"  %w = arith.addi %v, %one : i64\n"
	"  memref.store %w, %cell[%c0] : memref<1xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"dataflow.thread private @finish domain(#dataflow.thread_domain<dense>)(%cell: memref<1xi64>, %scale: i64) ctrl(%ctl: none) iv() {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %v = memref.load %cell[%c0] : memref<1xi64>\n"
	"  %w = arith.muli %v, %scale : i64\n"
	"  memref.store %w, %cell[%c0] : memref<1xi64>\n"
	"  dataflow.thread.yield\n"
	"}\n";

/* The corpus's rank0_and_empty host program, as three jobs. */
TEST(rank0_and_empty_domain_4x4)
{
	uint64_t seed[] = { A_VA, 21 }, bump[] = { A_VA }, fin[] = { A_VA, 2 };
	int64_t zero[] = { 0 }, got;
	struct er e;

	REQUIRE(er_open(&e, rank0_src, 4, 4) == 0);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "seed", seed, NULL, 0, 0, 0));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "bump", bump, zero, 0, 0, 0));
	CHECK_EQ(0, e.done.counters.instances);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "finish", fin, NULL, 0, 0, 0));
	er_peek64(&e, A_VA, &got, 1);
	CHECK_EQ(42, got);
	er_close(&e);
}

static const char visit_src[] =
	"dataflow.thread private @visit domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%item: i64, %first: memref<?xi64>, %children: memref<?xi64>, %depth: memref<?xi64>) ctrl(%ctl: none) attributes {loom.child_capacity = 4} {\n"
	"  %c16 = arith.constant 16 : i64\n"
	"  %lowmask = arith.constant 65535 : i64\n"
	"  %one = arith.constant 1 : i64\n"
	"  %node = arith.shrui %item, %c16 : i64\n"
	"  %d = arith.andi %item, %lowmask : i64\n"
	"  %v = arith.index_cast %node : i64 to index\n"
	"  memref.store %d, %depth[%v] : memref<?xi64>\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %vnext = arith.addi %v, %c1 : index\n"
	"  %b = memref.load %first[%v] : memref<?xi64>\n"
	"  %e = memref.load %first[%vnext] : memref<?xi64>\n"
	"  %lo = arith.index_cast %b : i64 to index\n"
	"  %hi = arith.index_cast %e : i64 to index\n"
	"  %dchild = arith.addi %d, %one : i64\n"
	"  scf.for %k = %lo to %hi step %c1 {\n"
	"    %child = memref.load %children[%k] : memref<?xi64>\n"
	"    %packed = arith.shli %child, %c16 : i64\n"
	"    %payload = arith.ori %packed, %dchild : i64\n"
	"    dataflow.work.spawn %payload : i64\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * The corpus's tree_bfs: a host-side worklist runs items level by level;
 * each item's children must be exactly its tree children, in order.
 */
TEST(tree_bfs_items_8x8)
{
	/* 0 -> {1, 2}, 1 -> {3, 4, 5}, 3 -> {6} */
	int64_t first[] = { 0, 2, 5, 5, 6, 6, 6, 6 };
	int64_t children[] = { 1, 2, 3, 4, 5, 6 };
	int64_t want_depth[] = { 0, 1, 1, 2, 2, 2, 3 }, depth[7];
	int64_t items[16] = { 0 }, rec[16 * 5];
	unsigned n = 1, done = 0;
	uint64_t args[] = { 0, A_VA, B_VA, C_VA };
	struct er e;

	REQUIRE(er_open(&e, visit_src, 8, 8) == 0);
	CHECK_EQ(4, loom_view_thread(&e.view, 0).child_capacity);
	er_poke64(&e, A_VA, first, 8);
	er_poke64(&e, B_VA, children, 6);
	while (done < n) {
		unsigned batch = n - done;

		er_poke64(&e, D_VA, items + done, batch);
		REQUIRE(er_launch(&e, "visit", args, NULL, batch, D_VA, E_VA) ==
			LOOM_STATUS_OK);
		er_peek64(&e, E_VA, rec, batch * 5);
		for (unsigned i = 0; i < batch; i++) {
			int64_t node = items[done + i] >> 16;
			int64_t d = items[done + i] & 0xffff;
			uint32_t count = (uint32_t)rec[i * 5];

			CHECK_EQ(first[node + 1] - first[node], count);
			for (uint32_t c = 0; c < count && c < 4; c++) {
				CHECK_EQ((children[first[node] + c] << 16) | (d + 1),
					 rec[i * 5 + 1 + c]);
				items[n++] = rec[i * 5 + 1 + c];
			}
		}
		done += batch;
	}
	CHECK_EQ(7, n);
	er_peek64(&e, C_VA, depth, 7);
	for (int i = 0; i < 7; i++)
		CHECK_EQ(want_depth[i], depth[i]);
	er_close(&e);
}

/* A node with more children than the capacity fails the job visibly. */
TEST(tree_child_overflow_is_reported)
{
	int64_t first[] = { 0, 6 }, children[] = { 1, 2, 3, 4, 5, 6 };
	int64_t item = 0;
	uint64_t args[] = { 0, A_VA, B_VA, C_VA };
	struct er e;

	REQUIRE(er_open(&e, visit_src, 8, 8) == 0);
	er_poke64(&e, A_VA, first, 2);
	er_poke64(&e, B_VA, children, 6);
	er_poke64(&e, D_VA, &item, 1);
	CHECK_EQ(LOOM_STATUS_CHILD_OVERFLOW,
		 er_launch(&e, "visit", args, NULL, 1, D_VA, E_VA));
	CHECK_EQ(0, e.done.detail);
	er_close(&e);
}

static const char uts_src[] =
	"dataflow.thread private @uts domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 2>)(%visits: memref<?xi64>, %slots: i64, %node: i64, %max_depth: i64) ctrl(%ctl: none) {\n"
	"  %c8 = arith.constant 8 : i64\n"
	"  %c33 = arith.constant 33 : i64\n"
	"  %m8 = arith.constant 255 : i64\n"
	"  %four = arith.constant 4 : i64\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %one = arith.constant 1 : i64\n"
	"  %mul = arith.constant 6364136223846793005 : i64\n"
	"  %inc = arith.constant 1442695040888963407 : i64\n"
	"  %hash = arith.shrui %node, %c8 : i64\n"
	"  %depth = arith.andi %node, %m8 : i64\n"
	"  %slot = arith.remui %hash, %slots : i64\n"
	"  %si = arith.index_cast %slot : i64 to index\n"
	"  memref.store %depth, %visits[%si] : memref<?xi64>\n"
	"  %deep = arith.cmpi sge, %depth, %max_depth : i64\n"
	"  %h33 = arith.shrui %hash, %c33 : i64\n"
	"  %fan = arith.remui %h33, %four : i64\n"
	"  %nchild = arith.select %deep, %zero, %fan : i64\n"
	"  %n = arith.index_cast %nchild : i64 to index\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %dnext = arith.addi %depth, %one : i64\n"
	"  scf.for %k = %c0 to %n step %c1 {\n"
	"    %ki = arith.index_cast %k : index to i64\n"
	"    %seed = arith.addi %hash, %ki : i64\n"
	"    %prod = arith.muli %seed, %mul : i64\n"
	"    %h = arith.addi %prod, %inc : i64\n"
	"    %hs = arith.shli %h, %c8 : i64\n"
	"    %payload = arith.ori %hs, %dnext : i64\n"
	"    dataflow.work.spawn %payload : i64\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* Children of one UTS node, in plain C. */
static unsigned uts_children(uint64_t node, uint64_t maxd, uint64_t *out)
{
	uint64_t hash = node >> 8, depth = node & 255;
	unsigned n = depth >= maxd ? 0 : (unsigned)((hash >> 33) % 4);

	for (unsigned k = 0; k < n; k++)
		out[k] = ((hash + k) * 6364136223846793005ULL +
			  1442695040888963407ULL) << 8 | (depth + 1);
	return n;
}

TEST(uts_items_vs_c_8x8)
{
	enum { CAP = LOWER_DEFAULT_CHILD_CAPACITY, REC = 1 + CAP };
	static int64_t items[4096], rec[512 * REC];
	unsigned n = 1, done = 0;
	uint64_t args[] = { A_VA, 4096, 0, 6 };
	struct er e;

	REQUIRE(er_open(&e, uts_src, 8, 8) == 0);
	CHECK_EQ(CAP, loom_view_thread(&e.view, 0).child_capacity);
	items[0] = (int64_t)(((3ULL << 33) | 0x2a) << 8);	/* fan-out 3 */
	while (done < n && n < 3000) {
		unsigned batch = n - done < 512 ? n - done : 512;

		er_poke64(&e, D_VA, items + done, batch);
		REQUIRE(er_launch(&e, "uts", args, NULL, batch, D_VA, E_VA) ==
			LOOM_STATUS_OK);
		er_peek64(&e, E_VA, rec, (size_t)batch * REC);
		for (unsigned i = 0; i < batch; i++) {
			uint64_t want[4];
			unsigned c = uts_children((uint64_t)items[done + i], 6, want);

			CHECK_EQ(c, (uint32_t)rec[i * REC]);
			for (unsigned k = 0; k < c; k++) {
				CHECK_EQ(want[k], rec[i * REC + 1 + k]);
				items[n++] = (int64_t)want[k];
			}
		}
		done += batch;
	}
	CHECK(n > 20);
	er_close(&e);
}


static const char histogram_src[] =
	"dataflow.thread private @count_bin domain(#dataflow.thread_domain<dense>)(%key: memref<?xi32>, %bucket_of: memref<?xi32>, %hist: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%b: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %one = arith.constant 1 : i64\n"
	"  %bin = arith.index_cast %b : index to i32\n"
	"  %count = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %k = memref.load %key[%j] : memref<?xi32>\n"
	"    %ki = arith.index_cast %k : i32 to index\n"
	"    %bk = memref.load %bucket_of[%ki] : memref<?xi32>\n"
	"    %hit = arith.cmpi eq, %bk, %bin : i32\n"
	"    %inc = arith.select %hit, %one, %zero : i64\n"
	"    %next = arith.addi %acc, %inc : i64\n"
	"    scf.yield %next : i64\n"
	"  }\n"
	"  memref.store %count, %hist[%b] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"dataflow.thread private @gather domain(#dataflow.thread_domain<dense>)(%src: memref<?xi64>, %perm: memref<?xi64>, %dst: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %p = memref.load %perm[%i] : memref<?xi64>\n"
	"  %pi = arith.index_cast %p : i64 to index\n"
	"  %v = memref.load %src[%pi] : memref<?xi64>\n"
	"  memref.store %v, %dst[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* Indirect loads, i32 compares and a select inside a loop; then a gather. */
TEST(histogram_and_gather_8x8)
{
	enum { N = 300, KEYS = 64, BINS = 16 };
	int32_t key[N], bucket_of[KEYS];
	int64_t want[BINS] = { 0 }, hist[BINS], perm[BINS], out[BINS];
	uint64_t a1[] = { A_VA, B_VA, C_VA, N }, a2[] = { C_VA, D_VA, E_VA };
	int64_t ext[] = { BINS };
	struct er e;

	REQUIRE(er_open(&e, histogram_src, 8, 8) == 0);
	for (int k = 0; k < KEYS; k++)
		bucket_of[k] = (k * 7 + 3) % BINS;
	for (int j = 0; j < N; j++) {
		key[j] = (j * j + 5) % KEYS;
		want[bucket_of[key[j]]]++;
	}
	for (int i = 0; i < BINS; i++)
		perm[i] = BINS - 1 - i;
	fake_bus_poke(&e.bus, A_VA, key, sizeof(key));
	fake_bus_poke(&e.bus, B_VA, bucket_of, sizeof(bucket_of));
	er_poke64(&e, D_VA, perm, BINS);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "count_bin", a1, ext, 0, 0, 0));
	er_peek64(&e, C_VA, hist, BINS);
	for (int b = 0; b < BINS; b++)
		CHECK_EQ(want[b], hist[b]);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "gather", a2, ext, 0, 0, 0));
	er_peek64(&e, E_VA, out, BINS);
	for (int i = 0; i < BINS; i++)
		CHECK_EQ(want[perm[i]], out[i]);
	er_close(&e);
}

static const char limits_src[] =
	"dataflow.thread @rank4 domain(#dataflow.thread_domain<dense>)(%out: memref<?xi64>, %e0: index, %e1: index, %e2: index) ctrl(%ctl: none) iv(%a: index, %b: index, %c: index, %d: index) {\n"
	"  %t0 = index.mul %a, %e1\n"
	"  %t1 = index.add %t0, %b\n"
	"  %t2 = index.mul %t1, %e2\n"
	"  %t3 = index.add %t2, %c\n"
	"  %c2 = index.constant 2\n"
	"  %t4 = index.mul %t3, %c2\n"
	"  %lin = index.add %t4, %d\n"
	"  %v = arith.index_cast %lin : index to i64\n"
	"  memref.store %v, %out[%lin] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"dataflow.thread @sixteen domain(#dataflow.thread_domain<dense>)(%a0: i64, %a1: i64, %a2: i64, %a3: i64, %a4: i64, %a5: i64, %a6: i64, %a7: i64, %a8: i32, %a9: i32, %a10: i32, %a11: i32, %a12: index, %a13: index, %a14: memref<?xi32>, %out: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %s0 = arith.addi %a0, %a1 : i64\n"
	"  %s1 = arith.addi %s0, %a2 : i64\n"
	"  %s2 = arith.addi %s1, %a3 : i64\n"
	"  %s3 = arith.maxsi %s2, %a4 : i64\n"
	"  %s4 = arith.minsi %s3, %a5 : i64\n"
	"  %s5 = arith.xori %s4, %a6 : i64\n"
	"  %s6 = arith.ori %s5, %a7 : i64\n"
	"  %n0 = arith.addi %a8, %a9 : i32\n"
	"  %n1 = arith.subi %n0, %a10 : i32\n"
	"  %n2 = arith.divsi %n1, %a11 : i32\n"
	"  %w = arith.extsi %n2 : i32 to i64\n"
	"  %u = arith.extui %n2 : i32 to i64\n"
	"  %x = arith.addi %s6, %w : i64\n"
	"  %y = arith.subi %x, %u : i64\n"
	"  %z = arith.trunci %y : i64 to i32\n"
	"  %j = index.add %a12, %a13\n"
	"  %lt = index.cmp ult(%j, %i)\n"
	"  %k = arith.select %lt, %j, %i : index\n"
	"  memref.store %z, %a14[%k] : memref<?xi32>\n"
	"  %zz = arith.extsi %z : i32 to i64\n"
	"  memref.store %zz, %out[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield\n"
	"}\n";

TEST(rank4_8x8)
{
	int64_t out[48], ext[] = { 2, 3, 4, 2 };
	uint64_t args[] = { A_VA, 2, 3, 4 };
	struct er e;

	REQUIRE(er_open(&e, limits_src, 8, 8) == 0);
	memset(out, 0xff, sizeof(out));
	er_poke64(&e, A_VA, out, 48);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "rank4", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, out, 48);
	for (int i = 0; i < 48; i++)
		CHECK_EQ(i, out[i]);
	er_close(&e);
}

/* Sixteen operands, casts, max/min, i32 division, an unsigned compare. */
/*
 * 16 operands and a coordinate: 17 ports on 8x8; on 4x4 (16 edge
 * positions) the placer turns the operands into CONSTs of them.
 */
static void sixteen_on(unsigned w, unsigned h)
{
	enum { N = 40 };
	int64_t av[16] = { 5, -9, 100, 7, 50, 80, 0x55, 0x100, 2000000000,
			   2000000000, -7, 3, 4, 6 };
	uint64_t args[16];
	int64_t out[N], ext[] = { N };
	int32_t a14[N] = { 0 }, want14[N] = { 0 };
	struct er e;

	REQUIRE(er_open(&e, limits_src, w, h) == 0);
	for (int k = 0; k < 14; k++)
		args[k] = (uint64_t)av[k];
	args[14] = B_VA;
	args[15] = A_VA;
	fake_bus_poke(&e.bus, B_VA, a14, sizeof(a14));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "sixteen", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, out, N);
	fake_bus_peek(&e.bus, B_VA, a14, sizeof(a14));
	for (int i = 0; i < N; i++) {
		int64_t s = av[0] + av[1] + av[2] + av[3];
		int32_t n0 = (int32_t)((uint32_t)av[8] + (uint32_t)av[9]);
		int32_t n2 = (n0 - (int32_t)av[10]) / (int32_t)av[11];
		uint64_t j = (uint64_t)(av[12] + av[13]);
		int64_t y;
		int32_t z;

		s = s > av[4] ? s : av[4];
		s = s < av[5] ? s : av[5];
		s = (s ^ av[6]) | av[7];
		y = s + n2 - (int64_t)(uint32_t)n2;
		z = (int32_t)y;
		CHECK_EQ(z, out[i]);
		want14[j < (uint64_t)i ? j : (uint64_t)i] = z;
	}
	for (int i = 0; i < N; i++)
		CHECK_EQ(want14[i], a14[i]);
	er_close(&e);
}

TEST(sixteen_operands_8x8_and_4x4)
{
	sixteen_on(8, 8);
	sixteen_on(4, 4);
}

static const char order_src[] =
	"dataflow.thread private @order domain(#dataflow.thread_domain<dense>)(%m: memref<?xi64>, %v: i64) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %old = memref.load %m[%i] : memref<?xi64>\n"
	"  memref.store %v, %m[%i] : memref<?xi64>\n"
	"  %back = memref.load %m[%i] : memref<?xi64>\n"
	"  %j = arith.addi %i, %c1 : index\n"
	"  %s = arith.addi %old, %back : i64\n"
	"  memref.store %s, %m[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* Within one instance, loads and stores of one memref keep program order. */
TEST(memory_order_within_instance_8x8)
{
	enum { N = 50 };
	int64_t m[N], ext[] = { N };
	uint64_t args[] = { A_VA, 1000 };
	struct er e;

	REQUIRE(er_open(&e, order_src, 8, 8) == 0);
	for (int i = 0; i < N; i++)
		m[i] = i * 3;
	er_poke64(&e, A_VA, m, N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "order", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, m, N);
	for (int i = 0; i < N; i++)
		CHECK_EQ(i * 3 + 1000, m[i]);
	er_close(&e);
}

static const char spawn2_src[] =
	"dataflow.thread private @two domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%item: i64, %k: i64) ctrl(%ctl: none) {\n"
	"  %big = arith.muli %item, %k : i64\n"
	"  %small = arith.addi %item, %k : i64\n"
	"  %third = arith.subi %big, %small : i64\n"
	"  dataflow.work.spawn %big : i64\n"
	"  dataflow.work.spawn %small : i64\n"
	"  dataflow.work.spawn %third : i64\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* Spawns outside loops: capacity = their number, children in program order. */
TEST(sequenced_spawns_4x4)
{
	int64_t items[] = { 3, -4, 10 }, rec[3 * 4];
	uint64_t args[] = { 0, 7 };
	struct er e;

	REQUIRE(er_open(&e, spawn2_src, 4, 4) == 0);
	CHECK_EQ(3, loom_view_thread(&e.view, 0).child_capacity);
	er_poke64(&e, D_VA, items, 3);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "two", args, NULL, 3, D_VA, E_VA));
	er_peek64(&e, E_VA, rec, 12);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(3, (uint32_t)rec[i * 4]);
		CHECK_EQ(items[i] * 7, rec[i * 4 + 1]);
		CHECK_EQ(items[i] + 7, rec[i * 4 + 2]);
		CHECK_EQ(items[i] * 7 - (items[i] + 7), rec[i * 4 + 3]);
	}
	er_close(&e);
}

static const char nest_src[] =
	"dataflow.thread private @nest domain(#dataflow.thread_domain<dense>)(%a: memref<?xi64>, %out: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c4 = arith.constant 4 : index\n"
	"  %z = arith.constant 0 : i64\n"
	"  %base = arith.muli %i, %n : index\n"
	"  scf.for %j = %c0 to %c4 step %c1 {\n"
	"    %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {\n"
	"      %t = arith.addi %base, %k : index\n"
	"      %v = memref.load %a[%t] : memref<?xi64>\n"
	"      %jj = arith.index_cast %j : index to i64\n"
	"      %p = arith.muli %v, %jj : i64\n"
	"      %nx = arith.addi %acc, %p : i64\n"
	"      scf.yield %nx : i64\n"
	"    }\n"
	"    %o1 = arith.muli %i, %c4 : index\n"
	"    %o = arith.addi %o1, %j : index\n"
	"    memref.store %s, %out[%o] : memref<?xi64>\n"
	"  }\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"dataflow.thread private @nothing domain(#dataflow.thread_domain<dense>)() ctrl(%ctl: none) iv(%i: index) {\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * A loop with a constant trip count around one with a dynamic one: values
 * enter through two INVARIANT levels, the inner REDUCE runs per outer
 * iteration.  And a thread with no effect at all: an empty configuration.
 */
TEST(nested_loops_and_empty_thread_8x8)
{
	enum { ROWS = 6, N = 5 };
	int64_t a[ROWS * N], out[ROWS * 4], ext[] = { ROWS };
	uint64_t args[] = { A_VA, B_VA, N };
	struct er e;

	REQUIRE(er_open(&e, nest_src, 8, 8) == 0);
	for (int i = 0; i < ROWS * N; i++)
		a[i] = i * 5 - 17;
	er_poke64(&e, A_VA, a, ROWS * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "nest", args, ext, 0, 0, 0));
	er_peek64(&e, B_VA, out, ROWS * 4);
	for (int i = 0; i < ROWS; i++) {
		int64_t s = 0;

		for (int k = 0; k < N; k++)
			s += a[i * N + k];
		for (int j = 0; j < 4; j++)
			CHECK_EQ(j * s, out[i * 4 + j]);
	}
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "nothing", NULL, ext, 0, 0, 0));
	CHECK_EQ(ROWS, e.done.counters.instances);
	er_close(&e);
}

static const char scopes_src[] =
	"dataflow.thread private @scopes domain(#dataflow.thread_domain<dense>)(%m: memref<?xi64>, %sum: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %z = arith.constant 0 : i64\n"
	"  %base = arith.muli %i, %n : index\n"
	"  %iv = arith.index_cast %i : index to i64\n"
	"  memref.store %iv, %m[%base] : memref<?xi64>\n"
	"  scf.for %j = %c1 to %n step %c1 {\n"
	"    %at = arith.addi %base, %j : index\n"
	"    %jv = arith.index_cast %j : index to i64\n"
	"    memref.store %jv, %m[%at] : memref<?xi64>\n"
	"  }\n"
	"  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {\n"
	"    %at = arith.addi %base, %j : index\n"
	"    %v = memref.load %m[%at] : memref<?xi64>\n"
	"    %nx = arith.addi %acc, %v : i64\n"
	"    scf.yield %nx : i64\n"
	"  }\n"
	"  memref.store %s, %m[%base] : memref<?xi64>\n"
	"  memref.store %s, %sum[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * Memory order across loop boundaries: a store before a loop that stores
 * the same memref, a loop that reads what the previous loop wrote, and a
 * store after it over what the loop read.
 */
TEST(memory_order_across_loops_16x16)
{
	enum { ROWS = 12, N = 9 };
	int64_t m[ROWS * N], sum[ROWS], ext[] = { ROWS };
	uint64_t args[] = { A_VA, B_VA, N };
	struct er e;

	REQUIRE(er_open(&e, scopes_src, 16, 16) == 0);
	memset(m, 0x55, sizeof(m));
	er_poke64(&e, A_VA, m, ROWS * N);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "scopes", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, m, ROWS * N);
	er_peek64(&e, B_VA, sum, ROWS);
	for (int i = 0; i < ROWS; i++) {
		int64_t want = i + N * (N - 1) / 2;

		CHECK_EQ(want, sum[i]);
		CHECK_EQ(want, m[i * N]);
		for (int j = 1; j < N; j++)
			CHECK_EQ(j, m[i * N + j]);
	}
	er_close(&e);
}

/* The corpus file @name. */
static char *corpus(const char *name)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "compiler/tests/corpus/valid/%s", name);
	return er_read_file(rel);
}

/* The corpus programs with an @main, run whole on each fabric size. */
static const char *const corpus_programs[] = {
	"vector_add.loom", "saxpy.loom", "stencil2d.loom",
	"matvec.loom", "dot_reduction.loom", "histogram.loom",
	"rank0_and_empty.loom", "tree_bfs.loom", "tree_i32.loom",
	"work_item_types.loom", "uts_node.loom", "units_and_limits.loom",
	"float_ops.loom", "scf_if.loom", "in_place_loops.loom",
	"loop_state.loom", "host_calls.loom", "view_launch.loom",
};

/* Compiles each for a @w x @h fabric; every loom.check in @main must hold. */
static void run_corpus(unsigned w, unsigned h)
{
	const char *const *files = corpus_programs;
	size_t n = sizeof(corpus_programs) / sizeof(corpus_programs[0]);

	for (size_t i = 0; i < n; i++) {
		char *text = corpus(files[i]);
		struct er e;

		REQUIRE(text);
		if (er_open(&e, text, w, h)) {
			printf("#   %s: does not compile\n", files[i]);
			CHECK(0);
		} else {
			int r = er_run_host(&e, "main");

			if (r)
				printf("#   %s: %d\n", files[i], r);
			CHECK_EQ(0, r);
		}
		er_close(&e);
		free(text);
	}
}

/*
 * Whole corpus programs: threads and @main compiled into one image, the
 * host program interpreted, every loom.check in it must hold.
 */
TEST(corpus_programs_end_to_end_8x8)
{
	run_corpus(8, 8);
}

/* n + 5 operations (with the address, STORE and yield): m[i] = x * x + 3 n. */
static char *chain_src(int n)
{
	size_t cap = 512 + 64 * (size_t)n, len;
	char *s = malloc(cap);

	if (!s)
		abort();
	len = snprintf(s, cap, "dataflow.thread private @chain domain(#dataflow.thread_domain<dense>)(%%m: memref<?xi64>, %%x: i64) ctrl(%%ctl: none) iv(%%i: index) {\n"
		       "  %%c3 = arith.constant 3 : i64\n"
		       "  %%v0 = arith.muli %%x, %%x : i64\n");
	for (int k = 1; k <= n; k++)
		len += snprintf(s + len, cap - len,
				"  %%v%d = arith.addi %%v%d, %%c3 : i64\n", k, k - 1);
	snprintf(s + len, cap - len,
		 "  memref.store %%v%d, %%m[%%i] : memref<?xi64>\n"
		 "  dataflow.thread.yield %%ctl : none\n}\n", n);
	return s;
}

/*
 * 48 operations, three times the 16 PEs of a 4x4 fabric: they share
 * temporal PEs and run correctly.  No instance can take less than 3
 * cycles (48 firings over 16 PEs; place_test checks the II the placer
 * reports).  The measured rate is about 9 cycles: the STORE's address
 * arrives some 60 cycles before its value, and the FIFOs on that short
 * path hold only a few instances (the placer does not balance paths).
 */
TEST(three_times_the_pes_4x4)
{
	enum { N = 300, OPS = 43 };
	char *src = chain_src(OPS);
	int64_t got[N], x = 7;
	uint64_t args[] = { A_VA, (uint64_t)x };
	int64_t ext[] = { N };
	struct er e;

	REQUIRE(src);
	REQUIRE(er_open(&e, src, 4, 4) == 0);
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "chain", args, ext, 0, 0, 0));
	er_peek64(&e, A_VA, got, N);
	for (int i = 0; i < N; i++)
		CHECK_EQ(x * x + 3 * OPS, got[i]);
	CHECK_EQ(N, e.done.counters.instances);
	CHECK_EQ((uint64_t)N * (OPS + 5), e.done.counters.firings);
	CHECK(e.done.counters.cycles >= 3 * N);
	printf("#   %llu cycles for %d instances\n",
	       (unsigned long long)e.done.counters.cycles, N);
	CHECK(e.done.counters.cycles <= 12 * N);
	er_close(&e);
	free(src);
}

/*
 * The corpus programs on the default 4x4 fabric, their larger threads on
 * temporal PEs; units_and_limits' @sixteen (16 operands and a coordinate,
 * where 4x4 has 16 edge positions) with its operands as CONSTs.
 */
TEST(corpus_programs_end_to_end_4x4)
{
	run_corpus(4, 4);
}

/*
 * Small fabrics, where the placer turns operands into CONSTs (also in
 * loops, next to REDUCE and STREAM): the programs still compute what they
 * check.
 */
TEST(operand_consts_on_small_fabrics)
{
	static const struct {
		const char *file;
		unsigned w, h;
	} runs[] = {
		{ "vector_add.loom", 2, 2 },
		{ "dot_reduction.loom", 3, 2 },
		{ "histogram.loom", 3, 3 },
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char *text = corpus(runs[i].file);
		struct er e;

		REQUIRE(text);
		if (er_open(&e, text, runs[i].w, runs[i].h)) {
			printf("#   %s: does not compile\n", runs[i].file);
			CHECK(0);
		} else {
			int r = er_run_host(&e, "main");

			if (r)
				printf("#   %s: %d\n", runs[i].file, r);
			CHECK_EQ(0, r);
		}
		er_close(&e);
		free(text);
	}
}

/*
 * ../shared/repro/syrk_row_deadlocks_on_4x4.loom (issue 30): one row of
 * syrk, C[i][j] = beta * C[i][j] + sum_k alpha * A[i][k] * A[j][k], as a
 * one-instance launch.  On 4x4 and 6x6 its operands became CONSTs, and
 * the two whose operation had no other trigger than the ctrl port took
 * the CONST itself as their trigger (the ctrl port came later in node
 * order): they never fired and the launch ended LOOM_STATUS_DEADLOCK.
 */
static const char syrk_row_src[] =
	"dataflow.thread private @syrk_row domain(#dataflow.thread_domain<dense>)(%alpha: f32, %beta: f32, %C: memref<?xf32>, %A: memref<?xf32>, %i: index, %n: index, %m: index) ctrl(%ctl: none) iv(%j: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %ri = arith.muli %i, %n : index\n"
	"  %ij = arith.addi %ri, %j : index\n"
	"  %old = memref.load %C[%ij] : memref<?xf32>\n"
	"  %init = arith.mulf %old, %beta : f32\n"
	"  %ai = arith.muli %i, %m : index\n"
	"  %aj = arith.muli %j, %m : index\n"
	"  %sum = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %init) -> (f32) {\n"
	"    %ik = arith.addi %ai, %k : index\n"
	"    %jk = arith.addi %aj, %k : index\n"
	"    %a = memref.load %A[%ik] : memref<?xf32>\n"
	"    %b = memref.load %A[%jk] : memref<?xf32>\n"
	"    %aa = arith.mulf %alpha, %a : f32\n"
	"    %p = arith.mulf %aa, %b : f32\n"
	"    %s = arith.addf %acc, %p : f32\n"
	"    scf.yield %s : f32\n"
	"  }\n"
	"  memref.store %sum, %C[%ij] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

static uint64_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Row @i, columns 0..@cols-1 (the repro's launch: row 3, one column). */
static void syrk_row_on(unsigned w, unsigned h, int64_t cols)
{
	enum { N = 30, M = 20 };
	float A[N * M], C[N * N], want[N * N], got[N * N];
	const float alpha = 1.5f, beta = 1.2f;
	const int i = 3;
	uint64_t args[] = { f32_bits(alpha), f32_bits(beta), C_VA, A_VA, i, N, M };
	struct er e;

	if (er_open(&e, syrk_row_src, w, h)) {
		printf("#   syrk_row does not compile for %ux%u\n", w, h);
		CHECK(0);
		er_close(&e);
		return;
	}
	/* PolyBench's init_array for syrk, as floats */
	for (int r = 0; r < N; r++)
		for (int c = 0; c < M; c++)
			A[r * M + c] = (float)((r * c + 1) % N) / N;
	for (int r = 0; r < N; r++)
		for (int c = 0; c < N; c++)
			C[r * N + c] = (float)((r * c + 2) % M) / M;
	memcpy(want, C, sizeof(C));
	for (int j = 0; j < cols; j++) {
		float acc = want[i * N + j] * beta;

		for (int k = 0; k < M; k++)
			acc = acc + alpha * A[i * M + k] * A[j * M + k];
		want[i * N + j] = acc;
	}
	fake_bus_poke(&e.bus, A_VA, A, sizeof(A));
	fake_bus_poke(&e.bus, C_VA, C, sizeof(C));
	CHECK_EQ(LOOM_STATUS_OK, er_launch(&e, "syrk_row", args, &cols, 0, 0, 0));
	fake_bus_peek(&e.bus, C_VA, got, sizeof(got));
	for (int k = 0; k < N * N; k++)
		if (memcmp(&want[k], &got[k], 4)) {
			printf("#   %ux%u: C[%d] is %a, not %a\n", w, h, k,
			       got[k], want[k]);
			CHECK(0);
			break;
		}
	er_close(&e);
}

TEST(syrk_row_maps_and_completes_4x4_to_16x16)
{
	for (unsigned n = 4; n <= 16; n++) {
		syrk_row_on(n, n, 1);
		syrk_row_on(n, n, 30);
	}
}

/* The host interpreter does check: a wrong expectation is caught. */
TEST(wrong_expectation_is_caught)
{
	char *text = corpus("dot_reduction.loom"), *at;
	struct er e;

	REQUIRE(text);
	at = strstr(text, "1047552");
	REQUIRE(at);
	at[6] = '3';
	REQUIRE(er_open(&e, text, 8, 8) == 0);
	CHECK_EQ(1, er_run_host(&e, "main"));
	er_close(&e);
	free(text);
}

int main(void)
{
	RUN(vector_add_4x4);
	RUN(saxpy_i32_4x4);
	RUN(stencil2d_source_iv_8x8_and_16x16);
	RUN(matvec_scf_for_reduce_8x8);
	RUN(dot_reduction_dynamic_bounds_8x8);
	RUN(rank0_and_empty_domain_4x4);
	RUN(tree_bfs_items_8x8);
	RUN(tree_child_overflow_is_reported);
	RUN(uts_items_vs_c_8x8);
	RUN(histogram_and_gather_8x8);
	RUN(rank4_8x8);
	RUN(sixteen_operands_8x8_and_4x4);
	RUN(memory_order_within_instance_8x8);
	RUN(sequenced_spawns_4x4);
	RUN(nested_loops_and_empty_thread_8x8);
	RUN(memory_order_across_loops_16x16);
	RUN(corpus_programs_end_to_end_8x8);
	RUN(three_times_the_pes_4x4);
	RUN(corpus_programs_end_to_end_4x4);
	RUN(operand_consts_on_small_fabrics);
	RUN(wrong_expectation_is_caught);
	RUN(syrk_row_maps_and_completes_4x4_to_16x16);
	return checks_done();
}
