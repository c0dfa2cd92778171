// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * parser_test: the IR each construct parses to (operands, written types,
 * results, segments, regions, attributes, locations), printing and
 * re-parsing to the same text, located syntax errors, and robustness:
 * every prefix of a program, and nesting beyond the limit, fail cleanly.
 */
#include "front.h"

static const char vadd[] =
	"dataflow.thread private @vadd domain(#dataflow.thread_domain<dense>)"
	"(%a: memref<?xi64>, %b: memref<?xi64>, %c: memref<16xi32>) "
	"ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

TEST(thread_signature)
{
	struct front f;
	struct ir_func *t;
	struct ir_value *args;

	REQUIRE(front_parse(&f, vadd));
	REQUIRE_EQ(1, f.m->num_funcs);
	t = f.m->funcs;
	CHECK(t->is_thread);
	CHECK(strcmp(t->name, "vadd") == 0);
	CHECK(strcmp(t->visibility, "private") == 0);
	CHECK_EQ(1, t->name_loc.line);
	CHECK_EQ(25, t->name_loc.col);
	CHECK_EQ(IR_ATTR_DIALECT, t->domain->kind);
	CHECK(strcmp(t->domain->str, "#dataflow.thread_domain") == 0);
	REQUIRE_EQ(1, t->domain->num_elems);
	CHECK_EQ(IR_ATTR_KEYWORD, t->domain->elems[0].kind);
	CHECK(strcmp(t->domain->elems[0].str, "dense") == 0);
	CHECK_EQ(3, t->num_inputs);
	CHECK_EQ(1, t->num_ctrl);
	CHECK_EQ(2, t->num_ivs);
	CHECK(t->has_ctrl && t->has_iv && !t->iv_before_ctrl);
	REQUIRE_EQ(6, t->body.num_args);
	args = t->body.args;
	CHECK(strcmp(args[0].name, "a") == 0);
	CHECK_EQ(IR_TYPE_MEMREF, args[0].type->kind);
	CHECK_EQ(IR_DYNAMIC, args[0].type->dims[0]);
	CHECK_EQ(IR_TYPE_I64, args[0].type->elem->kind);
	CHECK_EQ(16, args[2].type->dims[0]);
	CHECK_EQ(IR_TYPE_I32, args[2].type->elem->kind);
	CHECK(ir_func_ctrl(t) == &args[3]);
	CHECK_EQ(IR_TYPE_NONE, args[3].type->kind);
	CHECK(ir_func_ivs(t) == &args[4]);
	CHECK(strcmp(args[5].name, "j") == 0);
	CHECK_EQ(IR_TYPE_INDEX, args[5].type->kind);
	for (int i = 0; i < 6; i++) {
		CHECK(args[i].region == &t->body);
		CHECK_EQ(i, args[i].index);
		CHECK(!args[i].def);
	}
	CHECK(t->body.parent_func == t);
	CHECK_EQ(2, t->body.num_ops);
	CHECK_EQ(4, t->body.end.line);
	front_close(&f);
}

TEST(dynamic_work_thread_and_host_function)
{
	struct front f;
	struct ir_func *t, *h;
	struct ir_attr *wia;

	REQUIRE(front_parse(&f,
		"dataflow.thread @bfs domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 1>)"
		"(%tree: memref<?xi64>, %node: i64) ctrl(%c: none) {\n"
		"  dataflow.work.spawn %node : i64\n"
		"  dataflow.thread.yield\n"
		"}\n"
		"func.func @main(%n: index) attributes {note = \"host\"} {\n"
		"  return\n"
		"}\n"));
	t = f.m->funcs;
	h = t->next;
	CHECK(!t->visibility);
	REQUIRE_EQ(2, t->domain->num_elems);
	wia = &t->domain->elems[1];
	CHECK(strcmp(wia->name, "work_item_arg") == 0);
	CHECK_EQ(IR_ATTR_INT, wia->kind);
	CHECK_EQ(1, wia->ival);
	CHECK(!t->has_iv);
	CHECK_EQ(0, t->num_ivs);
	CHECK_EQ(-1, t->work_item_arg);	/* set by the verifier */
	REQUIRE(h);
	CHECK(!h->is_thread);
	CHECK(strcmp(h->name, "main") == 0);
	CHECK_EQ(1, h->num_inputs);
	REQUIRE_EQ(1, h->num_attrs);
	CHECK(strcmp(h->attrs[0].name, "note") == 0);
	CHECK(strcmp(h->attrs[0].str, "host") == 0);
	CHECK(!h->next);
	CHECK(ir_module_find(f.m, "main") == h);
	CHECK(ir_module_find(f.m, "nope") == NULL);
	front_close(&f);
}

/* Parses "func.func @f(args) { body return }" and returns its first op. */
static struct ir_op *host_op(struct front *f, const char *args,
			     const char *body)
{
	char text[2048];

	snprintf(text, sizeof(text), "func.func @f(%s) {\n%s\n  return\n}\n",
		 args, body);
	if (!front_parse(f, text))
		return NULL;
	return f->m->funcs->body.first;
}

static bool use_is(const struct ir_op *op, int i, const char *name,
		   const struct ir_type *t)
{
	return i < op->num_operands &&
	       strcmp(op->operands[i].name, name) == 0 &&
	       ((!t && !op->operand_types[i]) ||
		(t && op->operand_types[i] &&
		 ir_type_equal(op->operand_types[i], t)));
}

TEST(arith_operations)
{
	struct front f;
	struct ir_op *op;

	REQUIRE((op = host_op(&f, "", "  %c = arith.constant -5 : i32")));
	CHECK_EQ(IR_OP_ARITH_CONSTANT, op->code);
	CHECK(op->lit_neg);
	CHECK_EQ(5, op->lit_mag);
	CHECK_EQ(-5, op->imm);
	CHECK_EQ(0, op->num_operands);
	REQUIRE_EQ(1, op->num_results);
	CHECK(strcmp(op->results[0].name, "c") == 0);
	CHECK(op->results[0].def == op);
	CHECK_EQ(IR_TYPE_I32, op->results[0].type->kind);
	CHECK_EQ(2, op->loc.line);
	CHECK_EQ(8, op->loc.col);
	front_close(&f);

	REQUIRE((op = host_op(&f, "", "  %c = arith.constant 0xffffffff : i32")));
	CHECK_EQ(-1, op->imm);
	front_close(&f);

	REQUIRE((op = host_op(&f, "", "  %t = arith.constant true")));
	CHECK_EQ(IR_TYPE_I1, op->type->kind);
	CHECK_EQ(-1, op->imm);
	front_close(&f);

	REQUIRE((op = host_op(&f, "%a: i64, %b: i64", "  %s = arith.addi %a, %b : i64")));
	CHECK_EQ(IR_OP_ARITH_ADDI, op->code);
	CHECK(use_is(op, 0, "a", &ir_i64));
	CHECK(use_is(op, 1, "b", &ir_i64));
	CHECK_EQ(2, op->operands[1].loc.line);
	CHECK_EQ(23, op->operands[1].loc.col);
	CHECK(!op->operands[0].value);	/* resolved by the verifier */
	front_close(&f);

	REQUIRE((op = host_op(&f, "%a: index, %b: index", "  %p = arith.cmpi uge, %a, %b : index")));
	CHECK_EQ(IR_PRED_UGE, op->pred);
	CHECK(use_is(op, 1, "b", &ir_index));
	CHECK_EQ(IR_TYPE_I1, op->results[0].type->kind);
	front_close(&f);

	REQUIRE((op = host_op(&f, "%p: i1, %a: i32, %b: i32", "  %r = arith.select %p, %a, %b : i32")));
	CHECK(use_is(op, 0, "p", &ir_i1));
	CHECK(use_is(op, 2, "b", &ir_i32));
	CHECK_EQ(IR_TYPE_I32, op->results[0].type->kind);
	front_close(&f);

	REQUIRE((op = host_op(&f, "%x: i64", "  %i = arith.index_cast %x : i64 to index")));
	CHECK(use_is(op, 0, "x", &ir_i64));
	CHECK_EQ(IR_TYPE_I64, op->type->kind);
	CHECK_EQ(IR_TYPE_INDEX, op->to_type->kind);
	CHECK_EQ(IR_TYPE_INDEX, op->results[0].type->kind);
	front_close(&f);
}

TEST(float_operations)
{
	struct front f;
	struct ir_op *op;

	/* decimal literals round to nearest even; the sign is separate */
	REQUIRE((op = host_op(&f, "", "  %c = arith.constant -1.5 : f32")));
	CHECK(op->lit_float && op->lit_neg && !op->lit_hex && !op->lit_range);
	CHECK_EQ(0x3fc00000, op->lit_mag);
	CHECK_EQ((int64_t)(int32_t)0xbfc00000, op->imm);
	CHECK_EQ(IR_TYPE_F32, op->results[0].type->kind);
	front_close(&f);
	REQUIRE((op = host_op(&f, "", "  %c = arith.constant 16777217.0 : f32")));
	CHECK_EQ(0x4b800000, op->imm);	/* 2^24 + 1 ties to 2^24 */
	front_close(&f);
	REQUIRE((op = host_op(&f, "", "  %c = arith.constant 1.e-45 : f32")));
	CHECK_EQ(1, op->imm);		/* the smallest denormal */
	front_close(&f);
	REQUIRE((op = host_op(&f, "", "  %c = arith.constant 3.5e+38 : f32")));
	CHECK(op->lit_range);
	front_close(&f);
	/* hex is the bit pattern */
	REQUIRE((op = host_op(&f, "", "  %c = arith.constant 0xFFC00000 : f32")));
	CHECK(op->lit_hex && !op->lit_float);
	CHECK_EQ((int64_t)(int32_t)0xffc00000, op->imm);
	front_close(&f);

	REQUIRE((op = host_op(&f, "%a: f32, %b: f32", "  %p = arith.cmpf uno, %a, %b : f32")));
	CHECK_EQ(IR_OP_ARITH_CMPF, op->code);
	CHECK_EQ(IR_FPRED_UNO, op->fpred);
	CHECK(use_is(op, 1, "b", &ir_f32));
	CHECK_EQ(IR_TYPE_I1, op->results[0].type->kind);
	front_close(&f);
	REQUIRE((op = host_op(&f, "%a: f32", "  %n = arith.negf %a : f32")));
	CHECK_EQ(1, op->num_operands);
	CHECK(use_is(op, 0, "a", &ir_f32));
	front_close(&f);
	REQUIRE((op = host_op(&f, "%a: f32, %b: f32, %c: f32", "  %r = math.fma %a, %b, %c : f32")));
	CHECK_EQ(3, op->num_operands);
	CHECK(use_is(op, 2, "c", &ir_f32));
	CHECK_EQ(IR_TYPE_F32, op->results[0].type->kind);
	front_close(&f);
	REQUIRE((op = host_op(&f, "%m: memref<?xf32>", "  %c = arith.constant 0 : index\n  %v = memref.load %m[%c] : memref<?xf32>")));
	REQUIRE(op->next);
	CHECK_EQ(IR_TYPE_F32, op->next->results[0].type->kind);
	front_close(&f);
}

TEST(index_dialect)
{
	struct front f;
	struct ir_op *op;

	REQUIRE((op = host_op(&f, "%a: index", "  %c = index.constant -7\n"
			      "  %s = index.shru %a, %c\n"
			      "  %p = index.cmp sle(%s, %a)\n"
			      "  %w = index.casts %s : index to i32")));
	CHECK_EQ(IR_OP_INDEX_CONSTANT, op->code);
	CHECK_EQ(-7, op->imm);
	CHECK_EQ(IR_TYPE_INDEX, op->results[0].type->kind);
	op = op->next;
	CHECK_EQ(IR_OP_INDEX_SHRU, op->code);
	CHECK_EQ(ALU_SHRU, ir_opinfo[op->code].alu);
	CHECK(use_is(op, 1, "c", &ir_index));
	op = op->next;
	CHECK_EQ(IR_OP_INDEX_CMP, op->code);
	CHECK_EQ(IR_PRED_SLE, op->pred);
	CHECK(use_is(op, 0, "s", &ir_index));
	CHECK_EQ(IR_TYPE_I1, op->results[0].type->kind);
	op = op->next;
	CHECK_EQ(IR_OP_INDEX_CASTS, op->code);
	CHECK_EQ(IR_TYPE_I32, op->results[0].type->kind);
	front_close(&f);
}

TEST(memref_operations)
{
	struct front f;
	struct ir_op *op;
	struct ir_type m64 = { .kind = IR_TYPE_MEMREF, .rank = 1, .dims = { IR_DYNAMIC },
			       .elem = &ir_i64 };

	REQUIRE((op = host_op(&f, "%n: index, %i: index",
			      "  %m = memref.alloc(%n) : memref<?xi64>\n"
			      "  %v = memref.load %m[%i] : memref<?xi64>\n"
			      "  memref.store %v, %m[%i] : memref<?xi64>\n"
			      "  %s = memref.alloc() : memref<4xi32>")));
	CHECK_EQ(IR_OP_MEMREF_ALLOC, op->code);
	CHECK(use_is(op, 0, "n", &ir_index));
	CHECK(ir_type_equal(op->results[0].type, &m64));
	op = op->next;
	CHECK(use_is(op, 0, "m", &m64));
	CHECK(use_is(op, 1, "i", &ir_index));
	CHECK_EQ(IR_TYPE_I64, op->results[0].type->kind);
	op = op->next;
	CHECK_EQ(IR_OP_MEMREF_STORE, op->code);
	CHECK_EQ(0, op->num_results);
	CHECK(use_is(op, 0, "v", &ir_i64));
	CHECK(use_is(op, 1, "m", &m64));
	CHECK(use_is(op, 2, "i", &ir_index));
	op = op->next;
	CHECK_EQ(0, op->num_operands);
	CHECK_EQ(1, op->type->rank);
	CHECK_EQ(4, op->type->dims[0]);
	front_close(&f);
	REQUIRE((op = host_op(&f, "%m: memref<?x8xi64>, %i: index",
			      "  %v = memref.load %m[%i, %i] : memref<?x8xi64>\n"
			      "  %s = memref.alloc() : memref<2x3x4xi32>")));
	CHECK_EQ(3, op->num_operands);
	CHECK_EQ(2, op->type->rank);
	CHECK_EQ(IR_DYNAMIC, op->type->dims[0]);
	CHECK_EQ(8, op->type->dims[1]);
	CHECK(use_is(op, 2, "i", &ir_index));
	op = op->next;
	CHECK_EQ(3, op->type->rank);
	CHECK_EQ(24, ir_memref_elems(op->type));
	CHECK_EQ(4, ir_memref_stride(op->type, 1));
	front_close(&f);
}

TEST(atomic_rmw)
{
	struct front f;
	struct ir_op *op;
	struct ir_type m2 = { .kind = IR_TYPE_MEMREF, .rank = 2,
			      .dims = { IR_DYNAMIC, 8 }, .elem = &ir_f32 };

	REQUIRE((op = host_op(&f, "%m: memref<?x8xf32>, %v: f32, %i: index",
			      "  %o = memref.atomic_rmw addf %v, %m[%i, %i] : (f32, memref<?x8xf32>) -> f32\n"
			      "  %p = memref.atomic_rmw maximumf %o, %m[%i, %i] {k} : (f32, memref<?x8xf32>) -> i32")));
	CHECK_EQ(IR_OP_MEMREF_ATOMIC_RMW, op->code);
	CHECK_EQ(LOOM_ATOMIC_ADDF, op->atomic_kind);
	CHECK_EQ(4, op->num_operands);
	CHECK(use_is(op, 0, "v", &ir_f32));
	CHECK(use_is(op, 1, "m", &m2));
	CHECK(use_is(op, 2, "i", &ir_index));
	CHECK(use_is(op, 3, "i", &ir_index));
	CHECK(ir_type_equal(op->type, &m2));
	CHECK_EQ(1, op->num_results);
	CHECK(ir_type_equal(op->results[0].type, &ir_f32));
	op = op->next;
	CHECK_EQ(LOOM_ATOMIC_MAXIMUMF, op->atomic_kind);
	CHECK_EQ(1, op->num_attrs);
	/* the result type is the one written: the verifier judges it */
	CHECK(ir_type_equal(op->results[0].type, &ir_i32));
	front_close(&f);
}

TEST(scf_for)
{
	struct front f;
	struct ir_op *op, *y;
	struct ir_region *b;

	REQUIRE((op = host_op(&f, "%lb: i64, %ub: i64, %s: i64, %z: i64, %w: i32",
			      "  %r, %q = scf.for %i = %lb to %ub step %s "
			      "iter_args(%acc = %z, %acc2 = %w) -> (i64, i32) : i64 {\n"
			      "    scf.yield %acc, %acc2 : i64, i32\n"
			      "  } {note}")));
	CHECK_EQ(IR_OP_SCF_FOR, op->code);
	CHECK_EQ(IR_TYPE_I64, op->type->kind);
	REQUIRE_EQ(5, op->num_operands);
	CHECK_EQ(2, op->num_iter_args);
	CHECK(use_is(op, 0, "lb", &ir_i64));
	CHECK(use_is(op, 2, "s", &ir_i64));
	CHECK(use_is(op, 3, "z", &ir_i64));
	CHECK(use_is(op, 4, "w", &ir_i32));
	REQUIRE_EQ(2, op->num_results);
	CHECK(strcmp(op->results[1].name, "q") == 0);
	CHECK_EQ(IR_TYPE_I32, op->results[1].type->kind);
	b = op->body;
	REQUIRE(b);
	CHECK(b->parent_op == op);
	CHECK(b->parent_func == f.m->funcs);
	REQUIRE_EQ(3, b->num_args);
	CHECK(strcmp(b->args[0].name, "i") == 0);
	CHECK_EQ(IR_TYPE_I64, b->args[0].type->kind);
	CHECK(strcmp(b->args[2].name, "acc2") == 0);
	CHECK_EQ(IR_TYPE_I32, b->args[2].type->kind);
	y = b->first;
	CHECK_EQ(IR_OP_SCF_YIELD, y->code);
	CHECK(y->region == b);
	CHECK(use_is(y, 1, "acc2", &ir_i32));
	REQUIRE_EQ(1, op->num_attrs);
	CHECK_EQ(IR_ATTR_UNIT, op->attrs[0].kind);
	front_close(&f);

	/* no iter_args: index induction variable, no results */
	REQUIRE((op = host_op(&f, "%n: index", "  scf.for %i = %n to %n step %n {\n  }")));
	CHECK_EQ(IR_TYPE_INDEX, op->body->args[0].type->kind);
	CHECK_EQ(0, op->num_results);
	CHECK_EQ(0, op->body->num_ops);
	front_close(&f);
}

TEST(scf_if)
{
	struct front f;
	struct ir_op *op, *y;

	REQUIRE((op = host_op(&f, "%p: i1, %a: i64, %b: i64",
			      "  %r = scf.if %p -> (i64) {\n"
			      "    scf.yield %a : i64\n"
			      "  } else {\n"
			      "    scf.yield %b : i64\n"
			      "  } {note}")));
	CHECK_EQ(IR_OP_SCF_IF, op->code);
	REQUIRE_EQ(1, op->num_operands);
	CHECK(use_is(op, 0, "p", &ir_i1));
	REQUIRE_EQ(1, op->num_results);
	CHECK(strcmp(op->results[0].name, "r") == 0);
	CHECK_EQ(IR_TYPE_I64, op->results[0].type->kind);
	REQUIRE(op->body && op->else_body);
	CHECK(op->body->parent_op == op && op->else_body->parent_op == op);
	CHECK(op->else_body->parent_func == f.m->funcs);
	CHECK_EQ(0, op->body->num_args);
	y = op->else_body->first;
	CHECK_EQ(IR_OP_SCF_YIELD, y->code);
	CHECK(y->region == op->else_body);
	CHECK(use_is(y, 0, "b", &ir_i64));
	REQUIRE_EQ(1, op->num_attrs);
	front_close(&f);

	/* no results, no else, an empty then region */
	REQUIRE((op = host_op(&f, "%p: i1", "  scf.if %p {\n  }")));
	CHECK_EQ(0, op->num_results);
	CHECK_EQ(0, op->body->num_ops);
	CHECK(!op->else_body);
	front_close(&f);
}

TEST(launch_and_wait)
{
	struct front f;
	struct ir_op *op;

	REQUIRE((op = host_op(&f, "%a: i64, %t0: !dataflow.thread_token, %n: index",
			      "  %t = dataflow.thread.launch @k(%a, %a) grid(%n, %n, %n) "
			      "wait(%t0) {why = \"x\"} : (i64, i64) -> !dataflow.thread_token\n"
			      "  dataflow.thread.wait %t, %t0 : !dataflow.thread_token, !dataflow.thread_token")));
	CHECK_EQ(IR_OP_THREAD_LAUNCH, op->code);
	CHECK(strcmp(op->callee, "k") == 0);
	CHECK_EQ(31, op->callee_loc.col);
	CHECK_EQ(2, op->num_args);
	CHECK_EQ(1, op->num_waits);
	CHECK_EQ(3, op->num_extents);
	CHECK(op->has_grid && op->has_wait);
	CHECK_EQ(42, op->grid_loc.col);
	REQUIRE_EQ(6, op->num_operands);
	CHECK(use_is(op, 1, "a", &ir_i64));
	CHECK(use_is(op, 2, "t0", NULL));	/* waits come first */
	CHECK(strcmp(ir_launch_waits(op)[0].name, "t0") == 0);
	CHECK(use_is(op, 3, "n", NULL));
	CHECK(ir_launch_extents(op) == &op->operands[3]);
	CHECK_EQ(1, op->num_results);
	CHECK_EQ(IR_TYPE_TOKEN, op->results[0].type->kind);
	CHECK_EQ(1, op->num_attrs);
	op = op->next;
	CHECK_EQ(IR_OP_THREAD_WAIT, op->code);
	CHECK(use_is(op, 1, "t0", &ir_token));
	front_close(&f);

	/* rank 0: no grid at all, or an empty one */
	REQUIRE((op = host_op(&f, "", "  %t = dataflow.thread.launch @k() grid() : () -> !dataflow.thread_token")));
	CHECK(op->has_grid && !op->has_wait);
	CHECK_EQ(0, op->num_operands);
	front_close(&f);
}

TEST(body_operations)
{
	struct front f;
	struct ir_op *op;

	REQUIRE(front_parse(&f,
		"dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)"
		"(%x: i64) ctrl(%c: none) {\n"
		"  dataflow.work.spawn %x : i64\n"
		"  dataflow.thread.yield %c, %c : none, none\n"
		"}\n"
		"func.func @main() {\n"
		"  %v = arith.constant 3 : i64\n"
		"  loom.print %v : i64\n"
		"  loom.check %v, %v : i64\n"
		"  func.return\n"
		"}\n"));
	op = f.m->funcs->body.first;
	CHECK_EQ(IR_OP_WORK_SPAWN, op->code);
	CHECK(use_is(op, 0, "x", &ir_i64));
	op = op->next;
	CHECK_EQ(IR_OP_THREAD_YIELD, op->code);
	CHECK(use_is(op, 1, "c", &ir_none));
	op = front_op(&f.m->funcs->next->body, 1);
	CHECK_EQ(IR_OP_LOOM_PRINT, op->code);
	CHECK(use_is(op, 0, "v", &ir_i64));
	op = op->next;
	CHECK_EQ(IR_OP_LOOM_CHECK, op->code);
	CHECK(use_is(op, 1, "v", &ir_i64));
	op = op->next;
	CHECK_EQ(IR_OP_RETURN, op->code);
	CHECK_EQ(0, op->num_operands);
	front_close(&f);
}

TEST(per_operand_types)
{
	struct front f;
	struct ir_op *op;

	REQUIRE(front_parse(&f,
		"dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
		"  dataflow.thread.yield %c : none, %c : none {why}\n"
		"}\n"));
	op = f.m->funcs->body.first;
	REQUIRE_EQ(2, op->num_operands);
	CHECK(use_is(op, 1, "c", &ir_none));
	CHECK_EQ(1, op->num_attrs);
	front_close(&f);
}

TEST(yield_without_frontier_before_next_op)
{
	struct front f;

	/* "%a = ..." after a bare yield starts a new operation */
	REQUIRE(front_parse(&f,
		"dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
		"  dataflow.thread.yield\n"
		"  %a = arith.constant 1 : i64\n"
		"}\n"));
	CHECK_EQ(2, f.m->funcs->body.num_ops);
	CHECK_EQ(0, f.m->funcs->body.first->num_operands);
	front_close(&f);
}

TEST(attributes)
{
	struct front f;
	struct ir_attr *a;

	REQUIRE(front_parse(&f,
		"func.func @f() attributes {a = 1 : i64, b = -2, c = \"s\", d = @sym, "
		"e = [1, [x, i32]], f = #foo.bar<1x2, <a>>, g = memref<?xi32>, h, "
		"i = #plain} {\n  return\n}\n"));
	a = f.m->funcs->attrs;
	REQUIRE_EQ(9, f.m->funcs->num_attrs);
	CHECK_EQ(IR_ATTR_INT, a[0].kind);
	CHECK_EQ(1, a[0].ival);
	CHECK_EQ(IR_TYPE_I64, a[0].type->kind);
	CHECK_EQ(-2, a[1].ival);
	CHECK(strcmp(a[2].str, "s") == 0);
	CHECK_EQ(IR_ATTR_SYMBOL, a[3].kind);
	CHECK(strcmp(a[3].str, "sym") == 0);
	CHECK_EQ(IR_ATTR_ARRAY, a[4].kind);
	REQUIRE_EQ(2, a[4].num_elems);
	CHECK_EQ(IR_ATTR_ARRAY, a[4].elems[1].kind);
	CHECK_EQ(IR_ATTR_KEYWORD, a[4].elems[1].elems[0].kind);
	CHECK_EQ(IR_ATTR_TYPE, a[4].elems[1].elems[1].kind);
	CHECK_EQ(IR_ATTR_DIALECT, a[5].kind);
	CHECK(strcmp(a[5].str, "#foo.bar") == 0);
	CHECK(strcmp(a[5].body, "1x2, <a>") == 0);
	CHECK_EQ(IR_ATTR_TYPE, a[6].kind);
	CHECK_EQ(IR_ATTR_UNIT, a[7].kind);
	CHECK(!a[8].body);
	CHECK_EQ(1, a[0].loc.line);
	CHECK_EQ(28, a[0].loc.col);
	front_close(&f);
}

/* Prints @m into a malloc'd string. */
static char *print(struct ir_module *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	ir_print_module(out, m);
	fclose(out);
	return buf;
}

static const char *const programs[] = {
	vadd,
	"func.func @branches(%p: i1, %m: memref<?xi64>) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  scf.if %p {\n"
	"  }\n"
	"  scf.if %p {\n"
	"    %z = arith.constant 0 : i64\n"
	"    memref.store %z, %m[%c0] : memref<?xi64>\n"
	"  } else {\n"
	"    %one = arith.constant 1 : i64\n"
	"    memref.store %one, %m[%c0] : memref<?xi64>\n"
	"  } {note}\n"
	"  %r, %q = scf.if %p -> (i64, f32) {\n"
	"    %a = arith.constant 2 : i64\n"
	"    %f = arith.constant 1.5 : f32\n"
	"    scf.yield %a, %f : i64, f32\n"
	"  } else {\n"
	"    %b = scf.if %p -> i64 {\n"
	"      %c = arith.constant 3 : i64\n"
	"      scf.yield %c : i64\n"
	"    } else {\n"
	"      %d = arith.constant 4 : i64\n"
	"      scf.yield %d : i64\n"
	"    }\n"
	"    %g = arith.constant 2.5 : f32\n"
	"    scf.yield %b, %g : i64, f32\n"
	"  }\n"
	"  return\n"
	"}\n",
	"dataflow.thread @bfs domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)"
	"(%n: i64, %t: memref<?xi64>) ctrl(%c: none) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %lo = arith.index_cast %n : i64 to index\n"
	"  scf.for %k = %lo to %c1 step %c1 {\n"
	"    %ch = memref.load %t[%k] : memref<?xi64>\n"
	"    dataflow.work.spawn %ch : i64\n"
	"  }\n"
	"  dataflow.thread.yield %c : none\n"
	"}\n"
	"func.func @main(%t: memref<?xi64>) attributes {x = [1, \"y\"]} {\n"
	"  %r = arith.constant 0 : i64\n"
	"  %b = arith.constant false\n"
	"  %n = index.constant 3\n"
	"  %s = index.add %n, %n {k}\n"
	"  %p = index.cmp slt(%s, %n)\n"
	"  %tok = dataflow.thread.launch @bfs(%r, %t) wait() : (i64, memref<?xi64>) -> !dataflow.thread_token\n"
	"  dataflow.thread.wait %tok : !dataflow.thread_token\n"
	"  %z, %w = scf.for %i = %n to %s step %n iter_args(%a = %r, %b2 = %r) -> (i64, i64) {\n"
	"    scf.yield %a, %b2 : i64, i64\n"
	"  }\n"
	"  loom.check %z, %w : i64\n"
	"  return\n"
	"}\n",
	"#m = affine_map<(i, j)[n] -> (i * 4 + j - n, -(i mod 3), (j floordiv 2) ceildiv 5)>\n"
	"func.func @affine(%i: index, %j: index, %n: index) {\n"
	"  %a = affine.apply affine_map<(d0)[s0] -> (d0 * 4 + s0 * -2 - 7)>(%i)[%n] {k}\n"
	"  %b = affine.min #m(%i, %j)[%n]\n"
	"  %c = affine.max affine_map<() -> (3, 2 * 5)>()[]\n"
	"  return\n"
	"}\n",
	"func.func @views(%m: memref<4x8xi64>, %d: memref<?x3x2xf32>, %i: index) {\n"
	"  %v = memref.load %m[%i, %i] : memref<4x8xi64>\n"
	"  memref.store %v, %m[%i, %i] {k} : memref<4x8xi64>\n"
	"  %f = memref.load %d[%i, %i, %i] : memref<?x3x2xf32>\n"
	"  %a = memref.alloc(%i) : memref<?x1x1x7xi32>\n"
	"  %n = memref.dim %a, %i {k} : memref<?x1x1x7xi32>\n"
	"  %q = arith.floordivsi %n, %i : index\n"
	"  %r = arith.ceildivsi %q, %n : index\n"
	"  return\n"
	"}\n",
	"func.func @subviews(%m: memref<8x?xi64>, %i: index) {\n"
	"  %v = memref.subview %m[%i, 2][4, %i][1, 3] {k} : memref<8x?xi64> to memref<4x?xi64, strided<[?, ?], offset: ?>>\n"
	"  %w = memref.subview %v[0, 0][1, 2][1, 1] : memref<4x?xi64, strided<[?, ?], offset: ?>> to memref<2xi64, strided<[?], offset: ?>>\n"
	"  %x = memref.load %w[%i] : memref<2xi64, strided<[?], offset: ?>>\n"
	"  %s = memref.subview %m[1, 0][2, 2][1, 1] : memref<8x?xi64> to memref<2x2xi64, strided<[7, 1], offset: 7>>\n"
	"  %t = memref.subview %m[0, 0][2, 2][1, 1] : memref<8x?xi64> to memref<2x2xi64, strided<[7, 1]>>\n"
	"  %c = memref.cast %m {k} : memref<8x?xi64> to memref<?x?xi64>\n"
	"  %r = memref.reinterpret_cast %m to offset: [%i], sizes: [4, %i], strides: [%i, 1] {k} : memref<8x?xi64> to memref<4x?xi64, strided<[?, 1], offset: ?>>\n"
	"  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [2, 4, %i] {k} : memref<8x?xi64> into memref<2x4x?xi64>\n"
	"  %f = memref.expand_shape %t [[0], [1, 2]] : memref<2x2xi64, strided<[7, 1]>> into memref<2x1x2xi64, strided<[7, 2, 1]>>\n"
	"  %g = memref.collapse_shape %e [[0, 1, 2]] {k} : memref<2x4x?xi64> into memref<?xi64>\n"
	"  return\n"
	"}\n",
	"dataflow.thread @scatter domain(#dataflow.thread_domain<dense>)"
	"(%s: memref<?x4xi32>, %h: memref<?xf32>) ctrl(%c: none) iv(%i: index) {\n"
	"  %one = arith.constant 1 : i32\n"
	"  %o = memref.atomic_rmw addi %one, %s[%i, %i] : (i32, memref<?x4xi32>) -> i32\n"
	"  %p = memref.atomic_rmw maxs %o, %s[%i, %i] {k} : (i32, memref<?x4xi32>) -> i32\n"
	"  %x = arith.constant 2.5 : f32\n"
	"  %q = memref.atomic_rmw minimumf %x, %h[%i] : (f32, memref<?xf32>) -> f32\n"
	"  %r = memref.atomic_rmw assign %q, %h[%i] : (f32, memref<?xf32>) -> f32\n"
	"  dataflow.thread.yield %c : none\n"
	"}\n",
	"func.func @f(%a: f32, %m: memref<?xf32>, %i: i32) {\n"
	"  %c = arith.constant 2.5e-1 : f32\n"
	"  %h = arith.constant 0x7FC00000 : f32\n"
	"  %s = arith.addf %a, %c : f32\n"
	"  %x = arith.maximumf %s, %h : f32\n"
	"  %n = arith.negf %x : f32\n"
	"  %r = math.fma %a, %n, %c : f32\n"
	"  %p = arith.cmpf one, %r, %a : f32\n"
	"  %q = arith.select %p, %r, %a : f32\n"
	"  %j = arith.fptosi %q : f32 to i32\n"
	"  %u = arith.uitofp %j : i32 to f32\n"
	"  %b = arith.bitcast %i : i32 to f32\n"
	"  loom.print %u : f32\n"
	"  loom.check %b, %q : f32\n"
	"  return\n"
	"}\n",
	"func.func @g(%a: i64, %m: memref<?xi64>) {\n"
	"  return\n"
	"}\n"
	"func.func @calls(%a: i64, %m: memref<?xi64>) {\n"
	"  func.call @g(%a, %m) {k} : (i64, memref<?xi64>) -> ()\n"
	"  %r = func.call @h(%a) : (i64) -> i64\n"
	"  %s, %t = func.call @h2() : () -> (i64, i32)\n"
	"  return\n"
	"}\n",
	"dataflow.thread @k domain(#dataflow.thread_domain<dense, odd = #x.y<1 2>>)() iv(%i: i64) "
	"ctrl(%c: none, %d: index) attributes {tile = 1} {\n"
	"  %x = arith.constant 5 : !dataflow.channel<!dataflow.channel<i32>>\n"
	"}\n",
};

/* func.call prints as MLIR spells it: callee, operands, signature. */
TEST(call_prints_as_written)
{
	static const char text[] =
		"func.func @f(%a: i64) {\n"
		"  func.call @g(%a, %a) {k} : (i64, i64) -> ()\n"
		"  %r = func.call @h() : () -> i64\n"
		"  return\n"
		"}\n";
	struct front f;
	char *out;

	REQUIRE(front_parse(&f, text));
	out = print(f.m);
	REQUIRE(out);
	CHECK(strstr(out, "  func.call @g(%a, %a) {k} : (i64, i64) -> ()\n"));
	CHECK(strstr(out, "  %r = func.call @h() : () -> i64\n"));
	free(out);
	front_close(&f);
}

TEST(print_round_trip)
{
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		struct front f1, f2;
		char *once, *twice;

		REQUIRE(front_parse(&f1, programs[i]));
		once = print(f1.m);
		REQUIRE(once);
		if (!front_parse(&f2, once)) {
			printf("#   printed text does not parse:\n%s", once);
			CHECK(0);
		} else {
			twice = print(f2.m);
			CHECK(twice && strcmp(once, twice) == 0);
			if (twice && strcmp(once, twice))
				printf("#   once:\n%s#   twice:\n%s", once, twice);
			free(twice);
		}
		CHECK_EQ(f1.m->num_funcs, f2.m ? f2.m->num_funcs : -1);
		free(once);
		front_close(&f2);
		front_close(&f1);
	}
}

TEST(syntax_errors_are_located)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ "%x = arith.constant 1 : i64", 1, 1,
		  "expected 'dataflow.thread' or 'func.func', found '%x'" },
		{ "func.func main() {}", 1, 11, "expected a symbol name ('@name'), found 'main'" },
		{ "func.func @f() {\n  %a = arith.frob 1\n}", 2, 8, "unknown operation 'arith.frob'" },
		{ "func.func @f() {\n  %a = arith.constant 1 : foo\n}", 2, 27, "expected a type, found 'foo'" },
		{ "func.func @f(%m: memref<i64>) {}", 1, 25, "rank-0 memrefs are not supported" },
		{ "func.func @f() {\n  %o = memref.atomic_rmw add %v, %m[%i] : (i64, memref<?xi64>) -> i64\n}", 2, 26,
		  "unknown atomic kind 'add' (one of addi, addf," },
		{ "func.func @f() {\n  %o = memref.atomic_rmw addi %v, %m[%i] : i64\n}", 2, 44, "expected '(', found 'i64'" },
		{ "func.func @f() {\n  %o = memref.atomic_rmw addi %v, %m[%i] : (i64, i64) -> i64\n}", 2, 50,
		  "expected a memref type" },
		{ "func.func @f() {\n  %o = memref.atomic_rmw addi %v, %m[%i] : (i64, memref<?xi64>)\n}", 3, 1,
		  "expected '->', found '}'" },
		{ "func.func @f(%m: memref<1x2x3x4x5xi64>) {}", 1, 33, "memref rank above 4" },
		{ "func.func @f(%m: memref<4x4y8xi64>) {}", 1, 28, "expected 'x' after a memref size" },
		{ "func.func @f(%m: memref<4xi64, strided<[1, 1]>>) {}", 1, 44,
		  "a strided layout of a rank-1 memref takes 1 stride, not more" },
		{ "func.func @f(%m: memref<4xi64, strided<[1], size: 2>>) {}", 1, 45, "expected 'offset'" },
		{ "func.func @f(%m: memref<4xi64, 3>) {}", 1, 32, "expected 'strided'" },
		{ "func.func @f() {\n  %v = memref.subview %m[%i][x][1] : memref<4xi64> to memref<4xi64>\n}", 2, 30,
		  "expected a value ('%name') or a non-negative integer, found 'x'" },
		{ "func.func @f() {\n  %v = memref.subview %m[0, 0, 0, 0, 0][1][1] : memref<4xi64> to memref<4xi64>\n}", 2, 38,
		  "more than 4 entries in a view's list" },
		{ "func.func @f() {\n  %v = memref.subview %m[0][1][1] : memref<4xi64> into memref<4xi64>\n}", 2, 51,
		  "expected 'to', found 'into'" },
		{ "func.func @f() {\n  %v = memref.collapse_shape %m [[0, 1]] : memref<4x2xi64> to memref<8xi64>\n}", 2, 60,
		  "expected 'into', found 'to'" },
		{ "func.func @f() {\n  %v = memref.collapse_shape %m [[1]] : memref<4x2xi64> into memref<8xi64>\n}", 2, 35,
		  "reassociation lists size 0 where size 1 is" },
		{ "func.func @f() {\n  %v = memref.reinterpret_cast %m to offset: [0], strides: [1] : memref<4xi64> to memref<4xi64>\n}", 2, 51,
		  "expected 'sizes', found 'strides'" },
		{ "func.func @f() {\n  %v = memref.collapse_shape %m [[0, 1]] output_shape [8] : memref<4x2xi64> into memref<8xi64>\n}", 2, 42,
		  "expected ':', found 'output_shape'" },
		{ "func.func @f() {\n  %a, %b = arith.constant 1 : i64\n}", 2, 12,
		  "'arith.constant' has 1 result but 2 names are bound" },
		{ "func.func @f() {\n  %a = arith.constant 1 : i64\n", 2, 30, "expected '}', found end of input" },
		{ "func.func @f() {\n  %t = dataflow.thread.launch @k() grid() grid() : () -> i64\n}", 2, 43,
		  "duplicate 'grid' clause" },
		{ "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) ctrl(%d: none) {}",
		  1, 76, "duplicate 'ctrl' clause" },
		{ "func.func @f() {\n  %s = scf.for %i = %a to %b step %c iter_args(%x = %y) -> (i64, i64) {\n  }\n}",
		  2, 57, "scf.for has 1 iter_args but 2 result types" },
		{ "func.func @f() {\n  dataflow.thread.wait %t : !dataflow.thread_token, i64\n}", 2, 27, "1 operands but 2 types" },
		{ "func.func @f() {\n  dataflow.thread.wait\n}", 3, 1, "expected a token ('%name'), found '}'" },
		{ "func.func @f() -> i64 {}", 1, 16, "host functions return no values" },
		{ "func.func @f() attributes {a = #x<1 {} {\n}", 2, 2, "unbalanced '<' in attribute" },
		{ "func.func @f() attributes {a = 99999999999999999999} {}", 1, 32, "integer literal too large" },
		{ "func.func @f() attributes {a = 9223372036854775808} {}", 1, 32, "integer attribute out of range" },
		{ "func.func @f() {\n  %v = memref.load %m[%i %j] : memref<?xi64>\n}", 2, 26,
		  "expected ']'" },
		{ "func.func @f() {\n  %v = memref.load %m[%i] : i64\n}", 2, 29, "expected a memref type, found 'i64'" },
		{ "func.func @f() {\n  %v = affine.apply #nope(%i)\n}", 2, 21, "unknown affine map alias '#nope'" },
		{ "#a = affine_map<(d0) -> (d0)>\n#a = affine_map<(d0) -> (d0)>", 2, 1,
		  "affine map alias '#a' is defined twice" },
		{ "#a = affine_map<(d0, d1) -> (d0 * d1)>", 1, 33,
		  "'*' of two expressions of dimensions is not affine" },
		{ "#a = affine_map<(d0)[s0] -> (d0 * (s0 + d0))>", 1, 33,
		  "'*' of two expressions of dimensions is not affine" },
		{ "#a = affine_map<(d0)[s0] -> (d0 mod s0)>", 1, 33,
		  "the right side of 'mod' must be a positive constant" },
		{ "#a = affine_map<(d0) -> (d0 floordiv 0)>", 1, 29,
		  "the right side of 'floordiv' must be a positive constant" },
		{ "#a = affine_map<(d0) -> (d0 + d1)>", 1, 31,
		  "'d1' is not a dimension or symbol of this affine map" },
		{ "#a = affine_map<(d0, d0) -> (d0)>", 1, 22, "'d0' is named twice" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct front f;

		CHECK(!front_parse(&f, cases[i].text));
		CHECK_EQ(1, f.d.errors);
		if (!front_diag_is(&f, 0, DIAG_ERROR, cases[i].line,
				   cases[i].col, cases[i].msg)) {
			printf("#   case %zu\n", i);
			CHECK(0);
		}
		front_close(&f);
	}
}

/*
 * An unsupported type is reported where it is written, and parsing goes
 * on with a stand-in type that prints as written, so the verifier can
 * still diagnose what uses it.
 */
TEST(unsupported_types_are_reported_and_kept)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
		const char *spelled;	/* the first input's type, printed */
	} cases[] = {
		{ "func.func @f(%a: i8) {\n  return\n}", 1, 18,
		  "unsupported type 'i8'", "i8" },
		{ "func.func @f(%a: f64) {\n  return\n}", 1, 18,
		  "unsupported type 'f64'", "f64" },
		{ "func.func @f(%m: memref<?xindex>) {\n  return\n}", 1, 26,
		  "memref element type must be i32, i64 or f32, not 'index'",
		  "memref<?xindex>" },
		{ "func.func @f(%m: memref<8xf16>) {\n  return\n}", 1, 26,
		  "memref element type must be i32, i64 or f32, not 'f16'",
		  "memref<8xf16>" },
		{ "func.func @f(%c: !dataflow.channel<i8>) {\n  return\n}", 1, 36,
		  "unsupported type 'i8'", "!dataflow.channel<i8>" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[IR_TYPE_STR_MAX];
		struct front f;

		REQUIRE(front_parse(&f, cases[i].text));
		CHECK_EQ(1, f.d.errors);
		CHECK(ir_type_has_unsupported(f.m->funcs->body.args[0].type));
		CHECK(strcmp(cases[i].spelled,
			     ir_type_str(f.m->funcs->body.args[0].type, buf,
					 sizeof(buf))) == 0);
		if (!front_diag_is(&f, 0, DIAG_ERROR, cases[i].line,
				   cases[i].col, cases[i].msg)) {
			printf("#   case %zu\n", i);
			CHECK(0);
		}
		front_close(&f);
	}
}

/* Is @r the report of an unsupported type (which does not stop parsing)? */
static bool is_unsupported_type_report(const struct diag_record *r)
{
	return strncmp(r->msg, "unsupported type", 16) == 0 ||
	       strncmp(r->msg, "memref element type must be", 27) == 0;
}

/*
 * Every prefix of every program either parses or reports exactly one
 * located syntax error (after any unsupported types, "i6" cut from "i64",
 * which are reported as they are met; a missing '}' adds its note);
 * nothing crashes or leaks (ASan watches).
 */
TEST(every_prefix_fails_cleanly)
{
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		size_t len = strlen(programs[i]);

		for (size_t n = 0; n < len; n++) {
			char *text = strndup(programs[i], n);
			struct front f;

			REQUIRE(text);
			if (!front_parse(&f, text)) {
				size_t syntax = 0;

				CHECK(f.d.num_recs >= 1);
				for (size_t r = 0; r < f.d.num_recs; r++) {
					CHECK(f.d.recs[r].kind != DIAG_WARNING &&
					      f.d.recs[r].loc.line >= 1);
					if (f.d.recs[r].kind == DIAG_ERROR &&
					    !is_unsupported_type_report(&f.d.recs[r]))
						syntax++;
				}
				CHECK_EQ(1, syntax);
				/* last: the syntax error, or the note of a missing '}' */
				CHECK(!is_unsupported_type_report(
					&f.d.recs[f.d.num_recs - 1]));
			} else {
				verify_module(&f.d, f.m);
			}
			front_close(&f);
			free(text);
		}
	}
}

static char *repeat(const char *head, const char *piece, int n,
		    const char *tail)
{
	size_t len = strlen(head) + strlen(piece) * (size_t)n + strlen(tail);
	char *s = malloc(len + 1), *p = s;

	if (!s)
		return NULL;
	p = stpcpy(p, head);
	for (int i = 0; i < n; i++)
		p = stpcpy(p, piece);
	strcpy(p, tail);
	return s;
}

TEST(nesting_is_limited)
{
	static const struct { const char *head, *piece, *tail; } deep[] = {
		{ "func.func @f(%n: index) {\n", "scf.for %i = %n to %n step %n {\n", "" },
		{ "func.func @f() attributes {a = ", "[", "" },
		{ "func.func @f(%c: ", "!dataflow.channel<", "i64" },
	};

	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
		char *text = repeat(deep[i].head, deep[i].piece, 100000,
				    deep[i].tail);
		struct front f;

		REQUIRE(text);
		CHECK(!front_parse(&f, text));
		CHECK_EQ(1, f.d.errors);
		CHECK(strstr(front_diag(&f, 0)->msg, "nesting deeper than 64 levels"));
		front_close(&f);
		free(text);
	}
}

TEST(opcode_table)
{
	CHECK_EQ(IR_OP_ARITH_ADDI, ir_op_lookup("arith.addi", 10));
	CHECK_EQ(IR_OP_RETURN, ir_op_lookup("func.return", 11));
	CHECK_EQ(IR_OP_COUNT, ir_op_lookup("arith.add", 9));
	for (int i = 0; i < IR_OP_COUNT; i++) {
		CHECK(ir_opinfo[i].name != NULL);
		CHECK_EQ(i, ir_op_lookup(ir_opinfo[i].name,
					 strlen(ir_opinfo[i].name)));
	}
}

int main(void)
{
	RUN(thread_signature);
	RUN(dynamic_work_thread_and_host_function);
	RUN(arith_operations);
	RUN(float_operations);
	RUN(index_dialect);
	RUN(memref_operations);
	RUN(scf_for);
	RUN(scf_if);
	RUN(launch_and_wait);
	RUN(body_operations);
	RUN(per_operand_types);
	RUN(yield_without_frontier_before_next_op);
	RUN(attributes);
	RUN(print_round_trip);
	RUN(atomic_rmw);
	RUN(call_prints_as_written);
	RUN(syntax_errors_are_located);
	RUN(unsupported_types_are_reported_and_kept);
	RUN(every_prefix_fails_cleanly);
	RUN(nesting_is_limited);
	RUN(opcode_table);
	return checks_done();
}
