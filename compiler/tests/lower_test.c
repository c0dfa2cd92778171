// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Lowering: the graphs threads become (ports, operations, immediates,
 * loops, spawns, sinks) and the "cannot lower ... not supported yet"
 * diagnostics.
 */
#include "front.h"
#include "lower.h"

#define DENSE "domain(#dataflow.thread_domain<dense>)"
#define ITEMS "domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)"

/**
 * struct lowered - a thread lowered from a string
 * @f: the front end run
 * @g: the graph of its first thread
 * @errors: lowering errors
 */
struct lowered {
	struct front f;
	struct graph g;
	unsigned errors;
};

static int lower_text(struct lowered *l, const char *text)
{
	graph_init(&l->g);
	if (front_verify(&l->f, text))
		return -1;
	l->errors = lower_thread(&l->f.d, l->f.m->funcs, &l->g);
	return 0;
}

static void lowered_close(struct lowered *l)
{
	graph_free(&l->g);
	front_close(&l->f);
}

static int count_op(const struct graph *g, unsigned op)
{
	int n = 0;

	for (int i = 0; i < g->num; i++)
		n += g->nodes[i].kind == G_PE && g->nodes[i].op == op;
	return n;
}

static const struct g_node *find_op(const struct graph *g, unsigned op)
{
	for (int i = 0; i < g->num; i++)
		if (g->nodes[i].kind == G_PE && g->nodes[i].op == op)
			return &g->nodes[i];
	return NULL;
}

/* The device's contract: every produced token has a consumer. */
static bool all_consumed(const struct graph *g)
{
	for (int i = 0; i < g->num; i++) {
		bool used = g->nodes[i].kind == G_PE &&
			    g->nodes[i].op == LOOM_OP_SINK;

		for (int j = i + 1; j < g->num && !used; j++)
			for (int k = 0; k < 3; k++)
				if ((graph_inputs(&g->nodes[j]) & (1U << k)) &&
				    g->nodes[j].in[k] == i)
					used = true;
		if (!used)
			return false;
	}
	return true;
}

/* Inputs always come earlier: the order is topological. */
static bool topological(const struct graph *g)
{
	for (int i = 0; i < g->num; i++)
		for (int k = 0; k < 3; k++)
			if ((graph_inputs(&g->nodes[i]) & (1U << k)) &&
			    (g->nodes[i].in[k] < 0 || g->nodes[i].in[k] >= i))
				return false;
	return true;
}

TEST(vector_add)
{
	struct lowered l;

	REQUIRE(lower_text(&l,
		"dataflow.thread @v " DENSE "(%a: memref<?xi64>, %b: memref<?xi64>, %c: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %x = memref.load %a[%i] : memref<?xi64>\n"
		"  %y = memref.load %b[%i] : memref<?xi64>\n"
		"  %s = arith.addi %x, %y : i64\n"
		"  memref.store %s, %c[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	/* three operands and the coordinate; the ctrl is only yielded */
	CHECK_EQ(4, graph_count(&l.g, G_PORT));
	CHECK_EQ(9, graph_count(&l.g, G_PE));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_SHL));	/* i << 3 shared */
	CHECK_EQ(4, count_op(&l.g, LOOM_OP_ADD));
	CHECK_EQ(2, count_op(&l.g, LOOM_OP_LOAD));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_STORE));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_SINK));	/* the store's done */
	CHECK(find_op(&l.g, LOOM_OP_SHL)->imm_b);
	CHECK_EQ(3, find_op(&l.g, LOOM_OP_SHL)->imm);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	CHECK_EQ(1, l.g.rank);
	lowered_close(&l);
}

TEST(constants_become_immediates)
{
	struct lowered l;
	const struct g_node *n;

	REQUIRE(lower_text(&l,
		"dataflow.thread @k " DENSE "(%m: memref<?xi32>, %x: i32) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %c5 = arith.constant 5 : i32\n"
		"  %lt = arith.cmpi slt, %c5, %x : i32\n"
		"  %d = arith.subi %c5, %x : i32\n"
		"  %s = arith.select %lt, %d, %x : i32\n"
		"  memref.store %s, %m[%i] : memref<?xi32>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	/* 5 < x is x > 5 with B = 5 */
	n = find_op(&l.g, LOOM_OP_GTS);
	REQUIRE(n);
	CHECK(n->imm_b);
	CHECK_EQ(5, n->imm);
	CHECK_EQ(LOOM_TYPE_I32, n->type);
	/* 5 - x does not commute: a CONST, triggered by the ctrl port */
	n = find_op(&l.g, LOOM_OP_CONST);
	REQUIRE(n);
	CHECK_EQ(5, n->imm);
	CHECK_EQ(LOOM_PORT_CTRL, l.g.nodes[n->in[0]].port_kind);
	/* i32 elements: i << 2 */
	CHECK_EQ(2, find_op(&l.g, LOOM_OP_SHL)->imm);
	CHECK_EQ(LOOM_TYPE_I32, find_op(&l.g, LOOM_OP_STORE)->type);
	CHECK(all_consumed(&l.g));
	lowered_close(&l);
}

TEST(dead_code_and_unused_arguments_cost_nothing)
{
	struct lowered l;

	REQUIRE(lower_text(&l,
		"dataflow.thread @d " DENSE "(%m: memref<?xi64>, %x: i64, %y: i64) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %unused = arith.muli %x, %y : i64\n"
		"  %c0 = arith.constant 0 : index\n"
		"  memref.store %x, %m[%c0] : memref<?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(2, graph_count(&l.g, G_PORT));	/* %m and %x only */
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_MUL));
	CHECK_EQ(2, graph_count(&l.g, G_PE));	/* STORE, SINK */
	lowered_close(&l);
}

static const char loop_src[] =
	"dataflow.thread @dot " DENSE "(%x: memref<?xi64>, %out: memref<?xi64>, %lo: index, %hi: index) ctrl(%ctl: none) iv(%p: index) {\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %sum = scf.for %j = %lo to %hi step %c2 iter_args(%acc = %zero) -> (i64) {\n"
	"    %a = memref.load %x[%j] : memref<?xi64>\n"
	"    %next = arith.addi %acc, %a : i64\n"
	"    scf.yield %next : i64\n"
	"  }\n"
	"  memref.store %sum, %out[%p] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * A column walk, b[k * n + j]: the index changes by n a trip, a value from
 * outside the loop.  The load takes its address from a STREAM built
 * before the loop (b + j * 4, by n * 4 bytes), so no INVARIANT carries
 * b, n or j in and no MUL or ADD runs per trip.
 */
TEST(loop_load_address_is_a_stream)
{
	struct lowered l;
	const struct g_node *n;

	REQUIRE(lower_text(&l,
		"dataflow.thread @col " DENSE "(%b: memref<?xf32>, %out: memref<?xf32>, %n: index, %m: index) ctrl(%ctl: none) iv(%j: index) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %zero = arith.constant 0.0 : f32\n"
		"  %s = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %zero) -> (f32) {\n"
		"    %rk = arith.muli %k, %n : index\n"
		"    %kj = arith.addi %rk, %j : index\n"
		"    %v = memref.load %b[%kj] : memref<?xf32>\n"
		"    %next = arith.addf %acc, %v : f32\n"
		"    scf.yield %next : f32\n"
		"  }\n"
		"  memref.store %s, %out[%j] : memref<?xf32>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_INVARIANT));
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_MUL));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_STREAM));
	n = find_op(&l.g, LOOM_OP_STREAM);
	REQUIRE(n && !n->imm_b && n->in[1] >= 0);
	/* the step: n * 4 bytes */
	CHECK_EQ(LOOM_OP_SHL, l.g.nodes[n->in[1]].op);
	CHECK_EQ(2, l.g.nodes[n->in[1]].imm);
	CHECK_EQ(G_PORT, l.g.nodes[l.g.nodes[n->in[1]].in[0]].kind);
	/* the first address: b + (j << 2) */
	CHECK_EQ(LOOM_OP_ADD, l.g.nodes[n->in[0]].op);
	n = find_op(&l.g, LOOM_OP_LOAD);
	REQUIRE(n);
	CHECK_EQ(LOOM_OP_STREAM, l.g.nodes[n->in[0]].op);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

/*
 * The same for a view made outside the loop with constant strides: its
 * load's address is a STREAM from the view's first address (root + the
 * view's offset + the first iteration's indices), 8 bytes a trip; no
 * INVARIANT or index arithmetic runs in the loop for it.
 */
TEST(loop_view_load_address_is_a_stream)
{
	struct lowered l;
	const struct g_node *n;

	REQUIRE(lower_text(&l,
		"dataflow.thread @rows " DENSE "(%a: memref<8x8xi64>, %out: memref<4xi64>, %r: index) ctrl(%ctl: none) iv(%i: index) {\n"
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
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_INVARIANT));
	n = find_op(&l.g, LOOM_OP_LOAD);
	REQUIRE(n);
	n = &l.g.nodes[n->in[0]];
	CHECK_EQ(LOOM_OP_STREAM, n->op);
	CHECK(n->imm_b);
	CHECK_EQ(8, n->imm);
	/* the first address: a + ((r * 8 + i * 8) << 3) */
	CHECK_EQ(LOOM_OP_ADD, l.g.nodes[n->in[0]].op);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

TEST(scf_for_stream_invariant_reduce)
{
	struct lowered l;
	const struct g_node *n;

	REQUIRE(lower_text(&l, loop_src) == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(1, l.g.loops);
	n = find_op(&l.g, LOOM_OP_STREAM);
	REQUIRE(n);
	/* the address of x[j]: x + lo * 8, then 2 elements of 8 bytes a trip */
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_STREAM));
	CHECK(n->imm_b);
	CHECK_EQ(16, n->imm);
	/* count = (hi - lo + 1) / 2 */
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_SUB));
	n = find_op(&l.g, LOOM_OP_DIVS);
	REQUIRE(n);
	CHECK_EQ(2, n->imm);
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_INVARIANT));	/* nothing enters */
	n = find_op(&l.g, LOOM_OP_REDUCE);
	REQUIRE(n);
	CHECK_EQ(LOOM_OP_ADD, n->imm);
	CHECK(!n->imm_b);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

/*
 * Two loops of one constant trip count, one after the other: each takes
 * the outer values through INVARIANTs of its own.  Shared (common
 * subexpressions), the second loop took its iterations from the first's
 * and every mapping was refused as one that could deadlock
 * (corpus/fuzz/same_count_loops.loom).
 */
TEST(sibling_loops_have_their_own_invariants)
{
	struct lowered l;
	int inv_of_a = 0;

	REQUIRE(lower_text(&l,
		"dataflow.thread @s " DENSE "(%m: memref<?xi64>, %a: i64) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %c2 = arith.constant 2 : index\n"
		"  scf.for %j = %c0 to %c2 step %c1 {\n"
		"    memref.store %a, %m[%i] : memref<?xi64>\n"
		"  }\n"
		"  scf.for %k = %c0 to %c2 step %c1 {\n"
		"    memref.store %a, %m[%i] : memref<?xi64>\n"
		"  }\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(2, l.g.loops);
	for (int i = 0; i < l.g.num; i++) {
		const struct g_node *n = &l.g.nodes[i];

		inv_of_a += n->kind == G_PE && n->op == LOOM_OP_INVARIANT &&
			    l.g.nodes[n->in[0]].kind == G_PORT &&
			    l.g.nodes[n->in[0]].port_kind == LOOM_PORT_OPERAND &&
			    l.g.nodes[n->in[0]].port_index == 1;
	}
	CHECK_EQ(2, inv_of_a);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

static void expect_error(const char *text, unsigned line, unsigned col,
			 const char *msg)
{
	struct lowered l;

	REQUIRE(lower_text(&l, text) == 0);
	CHECK(l.errors > 0);
	CHECK(front_diag_is(&l.f, 0, DIAG_ERROR, line, col, msg));
	lowered_close(&l);
}

TEST(unsupported_is_diagnosed)
{
	/* acc = acc - x is no REDUCE operation */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  %z = arith.constant 0 : i64\n"
		     "  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {\n"
		     "    %v = arith.index_cast %j : index to i64\n"
		     "    %s = arith.subi %acc, %v : i64\n"
		     "    scf.yield %s : i64\n"
		     "  }\n"
		     "  memref.store %r, %m[%i] : memref<?xi64>\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     5, 8, "cannot lower scf.for: an iter_arg that is not a reduction");
	/*
	 * Two reductions, the second folding the first's new value: REDUCE
	 * gives only the final sum, %s has no value per iteration (it was
	 * taken for a thread argument: a 4x4 run stored 4194304 for 20).
	 */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  %z = arith.constant 0 : i64\n"
		     "  %r0, %r1 = scf.for %j = %c0 to %n step %c1 iter_args(%a = %z, %b = %z) -> (i64, i64) {\n"
		     "    %x = arith.index_cast %j : index to i64\n"
		     "    %s = arith.addi %a, %x : i64\n"
		     "    %t = arith.addi %b, %s : i64\n"
		     "    scf.yield %s, %t : i64, i64\n"
		     "  }\n"
		     "  memref.store %r1, %m[%i] : memref<?xi64>\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     5, 14, "cannot lower scf.for: an iter_arg that is not a reduction");
	/* a step of 0 */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  scf.for %j = %c0 to %n step %c0 {\n"
		     "    %v = arith.index_cast %j : index to i64\n"
		     "    memref.store %v, %m[%j] : memref<?xi64>\n"
		     "  }\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     3, 3, "a step that is not positive: not supported yet");
	/* a memref stored and loaded in one loop: order across iterations */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  scf.for %j = %c1 to %n step %c1 {\n"
		     "    %p = arith.subi %j, %c1 : index\n"
		     "    %w = memref.load %m[%p] : memref<?xi64>\n"
		     "    memref.store %w, %m[%j] : memref<?xi64>\n"
		     "  }\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     4, 3, "memref %m is stored and accessed again in the loop body");
	/* every iteration updates one element in place: order across them */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  scf.for %j = %c0 to %n step %c1 {\n"
		     "    %v = memref.load %m[%i] : memref<?xi64>\n"
		     "    %w = arith.addi %v, %v : i64\n"
		     "    memref.store %w, %m[%i] : memref<?xi64>\n"
		     "  }\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     4, 3, "at an element another iteration may access too");
	/* rows i and i + 1 of a rank-2 memref: the iterations overlap */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?x4xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  scf.for %r = %c0 to %n step %c1 {\n"
		     "    %r1 = arith.addi %r, %c1 : index\n"
		     "    %v = memref.load %m[%r1, %i] : memref<?x4xi64>\n"
		     "    memref.store %v, %m[%r, %i] : memref<?x4xi64>\n"
		     "  }\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     4, 3, "memref %m is stored and accessed again in the loop body");
	/*
	 * j * 2^62 * 4 wraps to 0 * j: every iteration the same element.
	 * (The coefficients once overflowed a signed multiply: UBSan.)
	 */
	expect_error("dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  scf.for %j = %c0 to %n step %c1 {\n"
		     "    %big = arith.constant 4611686018427387904 : index\n"
		     "    %c4 = arith.constant 4 : index\n"
		     "    %a = arith.muli %j, %big : index\n"
		     "    %b = arith.muli %a, %c4 : index\n"
		     "    %k = arith.addi %b, %i : index\n"
		     "    %v = memref.load %m[%k] : memref<?xi64>\n"
		     "    memref.store %v, %m[%k] : memref<?xi64>\n"
		     "  }\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     4, 3, "at an element another iteration may access too");
	/* two spawns, one in a loop: no order the fabric can keep */
	expect_error("dataflow.thread @s " ITEMS "(%p: i64, %n: index) ctrl(%ctl: none) {\n"
		     "  %c0 = arith.constant 0 : index\n"
		     "  %c1 = arith.constant 1 : index\n"
		     "  dataflow.work.spawn %p : i64\n"
		     "  scf.for %j = %c0 to %n step %c1 {\n"
		     "    dataflow.work.spawn %p : i64\n"
		     "  }\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     1, 17, "several dataflow.work.spawn");
}

TEST(dynamic_work_ports_spawns_capacity)
{
	struct lowered l;

	REQUIRE(lower_text(&l,
		"dataflow.thread @t domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 1>)(%k: i64, %item: i64) ctrl(%ctl: none) {\n"
		"  %a = arith.addi %item, %k : i64\n"
		"  dataflow.work.spawn %a : i64\n"
		"  dataflow.work.spawn %item : i64\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(2, l.g.child_capacity);
	CHECK_EQ(2, count_op(&l.g, LOOM_OP_SPAWN));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_JOIN));	/* second after first */
	for (int i = 0; i < l.g.num; i++)
		if (l.g.nodes[i].kind == G_PORT)
			CHECK(l.g.nodes[i].port_kind == LOOM_PORT_PAYLOAD ||
			      (l.g.nodes[i].port_kind == LOOM_PORT_OPERAND &&
			       l.g.nodes[i].port_index == 0));
	CHECK(all_consumed(&l.g));
	lowered_close(&l);

	/* a spawn in a loop: the attribute, else the default */
	REQUIRE(lower_text(&l,
		"dataflow.thread @t " ITEMS "(%item: i64) ctrl(%ctl: none) attributes {loom.child_capacity = 9} {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %n = arith.index_cast %item : i64 to index\n"
		"  scf.for %j = %c0 to %n step %c1 {\n"
		"    dataflow.work.spawn %item : i64\n"
		"  }\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(9, l.g.child_capacity);
	lowered_close(&l);
	REQUIRE(lower_text(&l,
		"dataflow.thread @t " ITEMS "(%item: i64) ctrl(%ctl: none) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %n = arith.index_cast %item : i64 to index\n"
		"  scf.for %j = %c0 to %n step %c1 {\n"
		"    dataflow.work.spawn %item : i64\n"
		"  }\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(LOWER_DEFAULT_CHILD_CAPACITY, l.g.child_capacity);
	lowered_close(&l);
	expect_error("dataflow.thread @t " ITEMS "(%item: i64) ctrl(%ctl: none) attributes {loom.child_capacity = 1} {\n"
		     "  dataflow.work.spawn %item : i64\n"
		     "  dataflow.work.spawn %item : i64\n"
		     "  dataflow.thread.yield %ctl : none\n"
		     "}\n",
		     1, 148, "loom.child_capacity must be an integer in 2..4096");
}

TEST(casts)
{
	struct lowered l;

	REQUIRE(lower_text(&l,
		"dataflow.thread @c " DENSE "(%m: memref<?xi64>, %x: i32, %y: i64) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %s = arith.extsi %x : i32 to i64\n"
		"  %u = arith.extui %x : i32 to i64\n"
		"  %t = arith.trunci %y : i64 to i32\n"
		"  %w = arith.extsi %t : i32 to i64\n"
		"  %a = arith.addi %s, %u : i64\n"
		"  %b = arith.addi %a, %w : i64\n"
		"  memref.store %b, %m[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	/* sign extension is free, zero extension masks, truncation is MOV.i32 */
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_AND));
	CHECK_EQ(0xffffffffLL, find_op(&l.g, LOOM_OP_AND)->imm);
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_MOV));
	CHECK_EQ(LOOM_TYPE_I32, find_op(&l.g, LOOM_OP_MOV)->type);
	lowered_close(&l);
}

TEST(f32_operations)
{
	struct lowered l;
	const struct g_node *n;

	REQUIRE(lower_text(&l,
		"dataflow.thread @f " DENSE "(%m: memref<?xf32>, %o: memref<?xi64>, %x: f32, %k: i32) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %half = arith.constant 0.5 : f32\n"
		"  %v = memref.load %m[%i] : memref<?xf32>\n"
		"  %a = arith.mulf %half, %v : f32\n"
		"  %lt = arith.cmpf olt, %half, %x : f32\n"
		"  %s = arith.select %lt, %a, %x : f32\n"
		"  %r = math.fma %s, %half, %v : f32\n"
		"  %n = arith.negf %r : f32\n"
		"  %kb = arith.bitcast %k : i32 to f32\n"
		"  %mx = arith.maximumf %n, %kb : f32\n"
		"  %kf = arith.sitofp %k : i32 to f32\n"
		"  %mn = arith.minimumf %mx, %kf : f32\n"
		"  memref.store %mn, %m[%i] : memref<?xf32>\n"
		"  %q = arith.fptosi %mn : f32 to i64\n"
		"  memref.store %q, %o[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	/* f32 elements are 4 bytes: i << 2, LOAD and STORE of I32 */
	CHECK_EQ(LOOM_TYPE_I32, find_op(&l.g, LOOM_OP_LOAD)->type);
	/* 0.5 * v commutes: v * 0.5 with B = 0x3f000000 */
	n = find_op(&l.g, LOOM_OP_FMUL);
	REQUIRE(n);
	CHECK(n->imm_b);
	CHECK_EQ(0x3f000000, n->imm);
	CHECK_EQ(LOOM_TYPE_I32, n->type);
	/* 0.5 < x is x > 0.5 */
	n = find_op(&l.g, LOOM_OP_FOGT);
	REQUIRE(n);
	CHECK(n->imm_b);
	CHECK_EQ(0x3f000000, n->imm);
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_FOLT));
	/* fma with a constant B: A * imm + C */
	n = find_op(&l.g, LOOM_OP_FMA);
	REQUIRE(n);
	CHECK(n->imm_b);
	CHECK(n->in[2] >= 0);
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_FNEG));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_FMAX));
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_FMIN));
	/* the bitcast costs nothing; conversions are typed by the integer */
	CHECK_EQ(LOOM_TYPE_I32, find_op(&l.g, LOOM_OP_SITOF)->type);
	CHECK_EQ(LOOM_TYPE_I64, find_op(&l.g, LOOM_OP_FTOSI)->type);
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_MOV));
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);

	/* f32 iter_args fold in REDUCE; a non-reduction is diagnosed */
	REQUIRE(lower_text(&l,
		"dataflow.thread @r " DENSE "(%m: memref<?xf32>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %z = arith.constant 0.0 : f32\n"
		"  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {\n"
		"    %v = memref.load %m[%j] : memref<?xf32>\n"
		"    %t = arith.addf %acc, %v : f32\n"
		"    scf.yield %t : f32\n"
		"  }\n"
		"  memref.store %s, %m[%i] : memref<?xf32>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	n = NULL;	/* the other REDUCE stands for the loop's accesses */
	for (int i = 0; i < l.g.num; i++)
		if (l.g.nodes[i].kind == G_PE && l.g.nodes[i].op == LOOM_OP_REDUCE &&
		    l.g.nodes[i].imm == LOOM_OP_FADD)
			n = &l.g.nodes[i];
	REQUIRE(n);
	CHECK_EQ(LOOM_TYPE_I32, n->type);
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_FADD));
	lowered_close(&l);

	REQUIRE(lower_text(&l,
		"dataflow.thread @r " DENSE "(%m: memref<?xf32>, %n: index) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %z = arith.constant 0.0 : f32\n"
		"  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {\n"
		"    %v = memref.load %m[%j] : memref<?xf32>\n"
		"    %t = arith.subf %acc, %v : f32\n"
		"    scf.yield %t : f32\n"
		"  }\n"
		"  memref.store %s, %m[%i] : memref<?xf32>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(1, l.errors);
	CHECK(front_diag_is(&l.f, 0, DIAG_ERROR, 5, 8,
			    "iter_arg that is not a reduction (acc = acc op x with op addi, muli, andi, ori, xori, addf, mulf, maximumf or minimumf"));
	lowered_close(&l);
}

/*
 * Loads of a memref are not joined among themselves: a store waits only
 * for the loads its value does not already depend on (issue 30: every
 * third load became a JOIN of the earlier ones, which the store then
 * waited on: 5 JOINs in this 9-point in-place stencil, none needed).
 */
static const char stencil9_src[] =
	"dataflow.thread @s9 " DENSE "(%a: memref<?xi64>, %w: index) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %n = arith.subi %i, %w : index\n"
	"  %s = arith.addi %i, %w : index\n"
	"  %nw = arith.subi %n, %c1 : index\n"
	"  %ne = arith.addi %n, %c1 : index\n"
	"  %sw = arith.subi %s, %c1 : index\n"
	"  %se = arith.addi %s, %c1 : index\n"
	"  %we = arith.subi %i, %c1 : index\n"
	"  %ea = arith.addi %i, %c1 : index\n"
	"  %v0 = memref.load %a[%i] : memref<?xi64>\n"
	"  %v1 = memref.load %a[%n] : memref<?xi64>\n"
	"  %v2 = memref.load %a[%s] : memref<?xi64>\n"
	"  %v3 = memref.load %a[%nw] : memref<?xi64>\n"
	"  %v4 = memref.load %a[%ne] : memref<?xi64>\n"
	"  %v5 = memref.load %a[%sw] : memref<?xi64>\n"
	"  %v6 = memref.load %a[%se] : memref<?xi64>\n"
	"  %v7 = memref.load %a[%we] : memref<?xi64>\n"
	"  %v8 = memref.load %a[%ea] : memref<?xi64>\n"
	"  %t1 = arith.addi %v0, %v1 : i64\n"
	"  %t2 = arith.addi %t1, %v2 : i64\n"
	"  %t3 = arith.addi %t2, %v3 : i64\n"
	"  %t4 = arith.addi %t3, %v4 : i64\n"
	"  %t5 = arith.addi %t4, %v5 : i64\n"
	"  %t6 = arith.addi %t5, %v6 : i64\n"
	"  %t7 = arith.addi %t6, %v7 : i64\n"
	"  %t8 = arith.addi %t7, %v8 : i64\n"
	"  memref.store %t8, %a[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* Three loads, a store of a value that needs only the last one. */
static const char partial_src[] =
	"dataflow.thread @p " DENSE "(%a: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c2 = arith.constant 2 : index\n"
	"  %j = arith.addi %i, %c1 : index\n"
	"  %k = arith.addi %i, %c2 : index\n"
	"  %x = memref.load %a[%i] : memref<?xi64>\n"
	"  %y = memref.load %a[%j] : memref<?xi64>\n"
	"  %z = memref.load %a[%k] : memref<?xi64>\n"
	"  memref.store %z, %a[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(store_waits_only_for_the_loads_it_needs)
{
	struct lowered l;
	const struct g_node *st;

	REQUIRE(lower_text(&l, stencil9_src) == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(9, count_op(&l.g, LOOM_OP_LOAD));
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_JOIN));
	st = find_op(&l.g, LOOM_OP_STORE);
	REQUIRE(st);
	CHECK_EQ(LOOM_OP_ADD, l.g.nodes[st->in[0]].op);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);

	/* x and y are not in the value: the store waits for both, one JOIN */
	REQUIRE(lower_text(&l, partial_src) == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_JOIN));
	st = find_op(&l.g, LOOM_OP_STORE);
	REQUIRE(st);
	REQUIRE(l.g.nodes[st->in[0]].op == LOOM_OP_JOIN);
	{
		const struct g_node *j = &l.g.nodes[st->in[0]];
		int loads = 0;

		for (int k = 1; k < 3; k++)
			loads += j->in[k] != G_NONE &&
				 l.g.nodes[j->in[k]].op == LOOM_OP_LOAD;
		CHECK_EQ(2, loads);
		CHECK(l.g.nodes[j->in[0]].op == LOOM_OP_ADD);
	}
	CHECK(all_consumed(&l.g));
	lowered_close(&l);
}

/*
 * An in-place loop: each iteration loads, updates and stores one element
 * of a row, then reads it back; iterations touch different elements
 * (the index is the row base plus %j), so the order the tokens keep
 * within an iteration is all it needs.  Before, any memref stored and
 * accessed again in a loop was refused.
 */
static const char in_place_src[] =
	"dataflow.thread @ip " DENSE "(%a: memref<?x8xi64>, %out: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %c8 = arith.constant 8 : index\n"
	"  %zero = arith.constant 0 : i64\n"
	"  %s = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i64) {\n"
	"    %v = memref.load %a[%i, %j] : memref<?x8xi64>\n"
	"    %w = arith.muli %v, %v : i64\n"
	"    %jj = affine.apply affine_map<(d0) -> (d0 * 1 + 0)>(%j)\n"
	"    memref.store %w, %a[%i, %jj] : memref<?x8xi64>\n"
	"    %back = memref.load %a[%i, %j] : memref<?x8xi64>\n"
	"    %t = arith.addi %acc, %back : i64\n"
	"    scf.yield %t : i64\n"
	"  }\n"
	"  memref.store %s, %out[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(in_place_loop_orders_each_iteration)
{
	struct lowered l;
	int loads = 0, store = -1, back = -1;

	REQUIRE(lower_text(&l, in_place_src) == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(1, l.g.loops);
	for (int i = 0; i < l.g.num; i++) {
		const struct g_node *n = &l.g.nodes[i];

		if (n->kind != G_PE)
			continue;
		if (n->op == LOOM_OP_LOAD && ++loads == 2)
			back = i;
		if (n->op == LOOM_OP_STORE && store < 0)
			store = i;
	}
	CHECK_EQ(2, loads);
	REQUIRE(store >= 0 && back >= 0);
	/* the read back waits for the store's done: JOIN(address, done) */
	{
		const struct g_node *j = &l.g.nodes[l.g.nodes[back].in[0]];

		REQUIRE(j->op == LOOM_OP_JOIN);
		CHECK_EQ(store, j->in[1]);
	}
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

/* A dynamic step: STREAM's step is the operand, the count a DIVS by it. */
TEST(scf_for_dynamic_step)
{
	struct lowered l;
	const struct g_node *n, *b;
	int step;

	REQUIRE(lower_text(&l,
		"dataflow.thread @s " DENSE "(%m: memref<?xi64>, %n: index, %st: index) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  scf.for %j = %c0 to %n step %st {\n"
		"    %v = arith.index_cast %j : index to i64\n"
		"    memref.store %v, %m[%j] : memref<?xi64>\n"
		"  }\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	n = find_op(&l.g, LOOM_OP_STREAM);
	REQUIRE(n);
	CHECK(!n->imm_b);
	b = &l.g.nodes[n->in[1]];
	CHECK(b->kind == G_PORT && b->port_kind == LOOM_PORT_OPERAND &&
	      b->port_index == 2);
	step = n->in[1];
	n = find_op(&l.g, LOOM_OP_DIVS);
	REQUIRE(n);
	CHECK(!n->imm_b);
	CHECK_EQ(step, n->in[1]);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

/*
 * Inductions: a carried index %p (p += w, used as an address in every
 * iteration) and a countdown %q (q -= 3, its new value used again): each
 * is a STREAM of its own from its init; their final values REDUCE their
 * steps with ADD.  Before, any iter_arg but a reduction was refused.
 */
TEST(scf_for_induction_iter_args)
{
	struct lowered l;
	int streams = 0, reduces = 0, from_w = 0;

	REQUIRE(lower_text(&l,
		"dataflow.thread @s " DENSE "(%m: memref<?xi64>, %out: memref<?xi64>, %n: index, %w: index) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %c3 = arith.constant 3 : i64\n"
		"  %k = arith.constant 100 : i64\n"
		"  %p1, %q1 = scf.for %j = %c0 to %n step %c1 iter_args(%p = %i, %q = %k) -> (index, i64) {\n"
		"    %q2 = arith.subi %q, %c3 : i64\n"
		"    %v = arith.muli %q2, %q : i64\n"
		"    memref.store %v, %m[%p] : memref<?xi64>\n"
		"    %p2 = arith.addi %w, %p : index\n"
		"    scf.yield %p2, %q2 : index, i64\n"
		"  }\n"
		"  %r = arith.index_cast %p1 : index to i64\n"
		"  %s = arith.addi %r, %q1 : i64\n"
		"  memref.store %s, %out[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n") == 0);
	CHECK_EQ(0, l.errors);
	for (int i = 0; i < l.g.num; i++) {
		const struct g_node *n = &l.g.nodes[i];

		if (n->kind != G_PE)
			continue;
		streams += n->op == LOOM_OP_STREAM;
		if (n->op == LOOM_OP_REDUCE) {
			reduces++;
			CHECK_EQ(LOOM_OP_ADD, n->imm);
		}
		if (n->op == LOOM_OP_STREAM && !n->imm_b) {
			const struct g_node *b = &l.g.nodes[n->in[1]];

			from_w += b->kind == G_PORT && b->port_index == 3;
		}
		if (n->op == LOOM_OP_STREAM && n->imm_b && n->imm != 1)
			CHECK_EQ(-3, (int64_t)n->imm);	/* q's */
	}
	CHECK_EQ(3, streams);		/* %j, %p, %q */
	CHECK_EQ(2, reduces);		/* p1, q1 */
	CHECK_EQ(1, from_w);
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

/* Branches without loads, stores or spawns: both computed, one selected. */
TEST(scf_if_pure_is_a_select)
{
	static const char src[] =
		"dataflow.thread @k " DENSE "(%a: i64, %m: memref<?xi64>) ctrl(%c: none) iv(%i: index) {\n"
		"  %z = arith.constant 0 : i64\n"
		"  %p = arith.cmpi slt, %a, %z : i64\n"
		"  %r = scf.if %p -> (i64) {\n"
		"    %n = arith.subi %z, %a : i64\n"
		"    scf.yield %n : i64\n"
		"  } else {\n"
		"    scf.yield %a : i64\n"
		"  }\n"
		"  memref.store %r, %m[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %c : none\n"
		"}\n";
	struct lowered l;

	REQUIRE(lower_text(&l, src) == 0);
	CHECK_EQ(0, l.errors);
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_SELECT));
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_INVARIANT));
	CHECK_EQ(0, count_op(&l.g, LOOM_OP_REDUCE));
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

/*
 * A store in a branch: the branch is a scope of 0 or 1 activations,
 * entered through INVARIANTs counted by the condition; its memref's
 * order leaves through a REDUCE, as after a loop.  The else branch is
 * counted by cond ^ 1.  A load's result leaves through REDUCE(0, OR).
 */
TEST(scf_if_effects_are_gated)
{
	static const char src[] =
		"dataflow.thread @k " DENSE "(%a: i64, %m: memref<?xi64>, %o: memref<?xi64>) ctrl(%c: none) iv(%i: index) {\n"
		"  %z = arith.constant 0 : i64\n"
		"  %p = arith.cmpi slt, %a, %z : i64\n"
		"  %r = scf.if %p -> (i64) {\n"
		"    memref.store %a, %m[%i] : memref<?xi64>\n"
		"    scf.yield %z : i64\n"
		"  } else {\n"
		"    %v = memref.load %m[%i] : memref<?xi64>\n"
		"    scf.yield %v : i64\n"
		"  }\n"
		"  memref.store %r, %o[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %c : none\n"
		"}\n";
	struct lowered l;
	bool or_reduce = false;
	int xor_one = 0;

	REQUIRE(lower_text(&l, src) == 0);
	CHECK_EQ(0, l.errors);
	CHECK(count_op(&l.g, LOOM_OP_INVARIANT) >= 2);
	for (int i = 0; i < l.g.num; i++) {
		const struct g_node *n = &l.g.nodes[i];

		if (n->kind != G_PE)
			continue;
		or_reduce |= n->op == LOOM_OP_REDUCE && n->imm == LOOM_OP_OR;
		xor_one += n->op == LOOM_OP_XOR && n->imm_b && n->imm == 1;
	}
	CHECK(or_reduce);
	CHECK_EQ(1, xor_one);
	CHECK_EQ(1, count_op(&l.g, LOOM_OP_SELECT));
	CHECK(all_consumed(&l.g));
	CHECK(topological(&l.g));
	lowered_close(&l);
}

int main(void)
{
	RUN(vector_add);
	RUN(constants_become_immediates);
	RUN(dead_code_and_unused_arguments_cost_nothing);
	RUN(scf_for_stream_invariant_reduce);
	RUN(loop_load_address_is_a_stream);
	RUN(loop_view_load_address_is_a_stream);
	RUN(sibling_loops_have_their_own_invariants);
	RUN(unsupported_is_diagnosed);
	RUN(dynamic_work_ports_spawns_capacity);
	RUN(casts);
	RUN(f32_operations);
	RUN(store_waits_only_for_the_loads_it_needs);
	RUN(in_place_loop_orders_each_iteration);
	RUN(scf_for_dynamic_step);
	RUN(scf_for_induction_iter_args);
	RUN(scf_if_pure_is_a_select);
	RUN(scf_if_effects_are_gated);
	return checks_done();
}
