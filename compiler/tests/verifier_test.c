// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verifier_test: name resolution, constant folding, every verifier rule
 * with its exact diagnostic and location (and its notes), no cascades,
 * whole files of "// -----" units, and the printed GCC form.
 */
#include "front.h"

#define DENSE_K2							\
	"dataflow.thread private @k domain(#dataflow.thread_domain<dense>)" \
	"(%m: memref<?xi64>, %x: i64) ctrl(%c: none) iv(%i: index, %j: index) {\n" \
	"  dataflow.thread.yield %c : none\n"				\
	"}\n"
#define BFS								\
	"dataflow.thread private @bfs domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)" \
	"(%node: i64, %tree: memref<?xi64>) ctrl(%c: none) {\n"		\
	"  dataflow.thread.yield %c : none\n"				\
	"}\n"

static const char program[] =
	"dataflow.thread @dot domain(#dataflow.thread_domain<dense>)"
	"(%x: memref<?xi64>, %out: memref<?xi64>, %n: index) ctrl(%c: none) iv(%p: index) {\n"
	"  %c0 = arith.constant 0 : index\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %z = arith.constant 0 : i64\n"
	"  %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (i64) {\n"
	"    %v = memref.load %x[%j] : memref<?xi64>\n"
	"    %t = arith.addi %acc, %v : i64\n"
	"    scf.yield %t : i64\n"
	"  }\n"
	"  memref.store %s, %out[%p] : memref<?xi64>\n"
	"  dataflow.thread.yield %c : none\n"
	"}\n"
	BFS
	"func.func @main() {\n"
	"  %n = arith.constant 8 : index\n"
	"  %x = memref.alloc(%n) : memref<?xi64>\n"
	"  %t = dataflow.thread.launch @dot(%x, %x, %n) grid(%n) : (memref<?xi64>, memref<?xi64>, index) -> !dataflow.thread_token\n"
	"  %r = arith.constant 0 : i64\n"
	"  %u = dataflow.thread.launch @bfs(%r, %x) wait(%t) : (i64, memref<?xi64>) -> !dataflow.thread_token\n"
	"  dataflow.thread.wait %u : !dataflow.thread_token\n"
	"  return\n"
	"}\n";

/* Every use in @r is resolved to a value of its name. */
static bool all_resolved(struct ir_region *r)
{
	for (struct ir_op *op = r->first; op; op = op->next) {
		for (int i = 0; i < op->num_operands; i++) {
			struct ir_use *u = &op->operands[i];

			if (!u->value || strcmp(u->value->name, u->name))
				return false;
		}
		if (op->body && !all_resolved(op->body))
			return false;
	}
	return true;
}

TEST(valid_program_is_linked)
{
	struct front f;
	struct ir_func *dot, *bfs, *main_fn;
	struct ir_op *loop, *add;

	CHECK_EQ(0, front_verify(&f, program));
	REQUIRE(f.m);
	CHECK_EQ(0, f.d.num_recs);
	dot = f.m->funcs;
	bfs = dot->next;
	main_fn = bfs->next;
	CHECK_EQ(LOOM_DOMAIN_DENSE, dot->dom_kind);
	CHECK_EQ(-1, dot->work_item_arg);
	CHECK_EQ(LOOM_DOMAIN_DYNAMIC_WORK, bfs->dom_kind);
	CHECK_EQ(0, bfs->work_item_arg);
	for (struct ir_func *fn = f.m->funcs; fn; fn = fn->next)
		CHECK(all_resolved(&fn->body));
	loop = front_op(&dot->body, 3);
	REQUIRE(loop && loop->code == IR_OP_SCF_FOR);
	add = front_op(loop->body, 1);
	CHECK(add->operands[0].value == &loop->body->args[1]);	/* %acc */
	CHECK(add->operands[1].value == &loop->body->first->results[0]);
	CHECK(front_op(&dot->body, 4)->operands[0].value == &loop->results[0]);
	CHECK(front_op(&dot->body, 4)->operands[2].value == &dot->body.args[4]);
	CHECK(front_op(&main_fn->body, 4)->operands[2].value ==
	      &front_op(&main_fn->body, 2)->results[0]);
	front_close(&f);
}

/* The folded value of the result named @name in the host function. */
static bool folded(struct ir_region *r, const char *name, long long want)
{
	for (struct ir_op *op = r->first; op; op = op->next)
		for (int i = 0; i < op->num_results; i++)
			if (strcmp(op->results[i].name, name) == 0) {
				if (op->results[i].is_const &&
				    op->results[i].const_val == want)
					return true;
				printf("#   %%%s: const %d value %lld, wanted %lld\n",
				       name, op->results[i].is_const,
				       (long long)op->results[i].const_val, want);
				return false;
			}
	printf("#   %%%s not found\n", name);
	return false;
}

static bool not_folded(struct ir_region *r, const char *name)
{
	for (struct ir_op *op = r->first; op; op = op->next)
		for (int i = 0; i < op->num_results; i++)
			if (strcmp(op->results[i].name, name) == 0)
				return !op->results[i].is_const;
	return false;
}

TEST(constant_folding)
{
	struct front f;
	struct ir_region *r;

	CHECK_EQ(0, front_verify(&f,
		"func.func @main(%arg: index) {\n"
		"  %a = arith.constant 7 : index\n"
		"  %b = arith.constant -3 : index\n"
		"  %add = arith.addi %a, %b : index\n"
		"  %mul = arith.muli %a, %b : index\n"
		"  %div = arith.divsi %a, %b : index\n"
		"  %rem = arith.remsi %a, %b : index\n"
		"  %divu = arith.divui %b, %a : index\n"
		"  %big = arith.constant 2147483647 : i32\n"
		"  %one = arith.constant 1 : i32\n"
		"  %wrap = arith.addi %big, %one : i32\n"
		"  %ext = arith.extui %wrap : i32 to i64\n"
		"  %exs = arith.extsi %wrap : i32 to i64\n"
		"  %tr = arith.trunci %ext : i64 to i32\n"
		"  %sh = arith.shli %one, %one : i32\n"
		"  %shr = arith.shrsi %wrap, %one : i32\n"
		"  %shu = arith.shrui %wrap, %one : i32\n"
		"  %p = arith.cmpi ult, %b, %a : index\n"
		"  %q = arith.cmpi slt, %b, %a : index\n"
		"  %sel = arith.select %q, %b, %a : index\n"
		"  %max = arith.maxsi %a, %b : index\n"
		"  %minu = arith.minui %a, %b : index\n"
		"  %ic = arith.index_cast %wrap : i32 to index\n"
		"  %icu = arith.index_castui %wrap : i32 to index\n"
		"  %ix = index.sub %a, %ic\n"
		"  %zero = arith.constant 0 : index\n"
		"  %dz = arith.divsi %a, %zero : index\n"
		"  %c64 = arith.constant 64 : index\n"
		"  %sbig = arith.shli %a, %c64 : index\n"
		"  %dyn = arith.addi %arg, %a : index\n"
		"  return\n"
		"}\n"));
	REQUIRE(f.m);
	r = &f.m->funcs->body;
	CHECK(folded(r, "add", 4));
	CHECK(folded(r, "mul", -21));
	CHECK(folded(r, "div", -2));
	CHECK(folded(r, "rem", 1));
	CHECK(folded(r, "divu", (long long)(0xfffffffffffffffdULL / 7)));
	CHECK(folded(r, "wrap", -2147483648LL));
	CHECK(folded(r, "ext", 2147483648LL));
	CHECK(folded(r, "exs", -2147483648LL));
	CHECK(folded(r, "tr", -2147483648LL));
	CHECK(folded(r, "sh", 2));
	CHECK(folded(r, "shr", -1073741824LL));
	CHECK(folded(r, "shu", 1073741824LL));
	CHECK(folded(r, "p", 0));
	CHECK(folded(r, "q", -1));	/* i1 true, sign-extended */
	CHECK(folded(r, "sel", -3));
	CHECK(folded(r, "max", 7));
	CHECK(folded(r, "minu", 7));
	CHECK(folded(r, "ic", -2147483648LL));
	CHECK(folded(r, "icu", 2147483648LL));
	CHECK(folded(r, "ix", 2147483655LL));
	CHECK(not_folded(r, "dz"));	/* division by zero: undefined */
	CHECK(not_folded(r, "sbig"));	/* shift by the width: undefined */
	CHECK(not_folded(r, "dyn"));
	front_close(&f);
}

/**
 * struct want - one expected diagnostic
 * @kind: error or note
 * @line: its line
 * @col: its column
 * @msg: a substring of its message
 */
struct want {
	enum diag_kind kind;
	unsigned line, col;
	const char *msg;
};

#define E(l, c, m)	{ DIAG_ERROR, l, c, m }
#define N(l, c, m)	{ DIAG_NOTE, l, c, m }

/**
 * struct rule - a program breaking one rule, and what it must report
 * @name: the rule
 * @text: the program
 * @want: the diagnostics, in order, exactly
 */
struct rule {
	const char *name;
	const char *text;
	struct want want[8];
};

static const struct rule rules[] = {
	{ "extent count = coordinate rank", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i64, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%n) : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 42, "launch supplies 1 extent but @k has coordinate rank 2"),
	    N(1, 25, "@k is defined here with coordinate rank 2") } },
	{ "extent count without grid()", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i64) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 31, "launch supplies 0 extents but @k has coordinate rank 2"),
	    N(1, 25, "@k is defined here") } },
	{ "negative extent after folding", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i64) {\n"
	  "  %a = index.constant 2\n"
	  "  %b = arith.constant 5 : index\n"
	  "  %p = arith.cmpi slt, %a, %b : index\n"
	  "  %d = index.sub %a, %b\n"
	  "  %e = arith.select %p, %d, %a : index\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%a, %e) : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(10, 51, "launch extent '%e' is negative (-3 after constant folding)"),
	    N(9, 3, "'%e' is defined here") } },
	{ "extent type", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i64) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%x, %x) : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 47, "launch extent '%x' has type i64; extents are index"),
	    N(4, 36, "'%x' is defined here"),
	    E(5, 51, "launch extent '%x' has type i64; extents are index"),
	    N(4, 36, "'%x' is defined here") } },
	{ "operand types = inputs", DENSE_K2
	  "func.func @main(%m: memref<?xi32>, %x: i64, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%n, %n) : (memref<?xi32>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 34, "launch operand #0 has type memref<?xi32> but @k input '%m' has type memref<?xi64>"),
	    N(1, 67, "'%m' is declared here") } },
	{ "operand types = inputs: index is not i64", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %n) grid(%n, %n) : (memref<?xi64>, index) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 38, "launch operand #1 has type index but @k input '%x' has type i64"),
	    N(1, 86, "'%x' is declared here") } },
	{ "operand types = inputs: a memref is not a scalar", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %m) grid(%n, %n) : (memref<?xi64>, memref<?xi64>) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 38, "launch operand #1 has type memref<?xi64> but @k input '%x' has type i64"),
	    N(1, 86, "'%x' is declared here") } },
	{ "operand types = inputs, the input's type unsupported",
	  "dataflow.thread private @k domain(#dataflow.thread_domain<dense>)"
	  "(%x: f64) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield %c : none\n"
	  "}\n"
	  "func.func @main(%y: i32) {\n"
	  "  %t = dataflow.thread.launch @k(%y) : (i32) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(1, 71, "unsupported type 'f64'"),
	    E(5, 34, "launch operand #0 has type i32 but @k input '%x' has type f64"),
	    N(1, 67, "'%x' is declared here") } },
	{ "operand types = inputs, the operand's type unsupported", DENSE_K2
	  "func.func @main(%m: memref<?xf64>, %x: i64, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%n, %n) : (memref<?xf64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(4, 29, "memref element type must be i32, i64 or f32, not 'f64'"),
	    E(5, 66, "memref element type must be i32, i64 or f32, not 'f64'"),
	    E(5, 34, "launch operand #0 has type memref<?xf64> but @k input '%m' has type memref<?xi64>"),
	    N(1, 67, "'%m' is declared here") } },
	{ "an unsupported type is reported once, where it is written",
	  "func.func @main() {\n"
	  "  %a = arith.constant 1 : f64\n"
	  "  %b = arith.addi %a, %a : f64\n"
	  "  %c = arith.extsi %a : f64 to i64\n"
	  "  return\n}\n",
	  { E(2, 27, "unsupported type 'f64'"),
	    E(3, 28, "unsupported type 'f64'"),
	    E(4, 25, "unsupported type 'f64'") } },
	{ "operand types = inputs, for f32 and memrefs of f32",
	  "dataflow.thread private @k domain(#dataflow.thread_domain<dense>)"
	  "(%x: f32, %y: i32, %m: memref<?xf32>, %w: memref<?xi32>) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield %c : none\n"
	  "}\n"
	  "func.func @main(%f: f32, %i: i32, %mf: memref<?xf32>, %mi: memref<?xi32>) {\n"
	  "  %t = dataflow.thread.launch @k(%i, %f, %mi, %mf) : (i32, f32, memref<?xi32>, memref<?xf32>) -> !dataflow.thread_token\n"
	  "  %u = dataflow.thread.launch @k(%f, %i, %mf, %mi) : (f32, i32, memref<?xf32>, memref<?xi32>) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 34, "launch operand #0 has type i32 but @k input '%x' has type f32"),
	    N(1, 67, "'%x' is declared here"),
	    E(5, 38, "launch operand #1 has type f32 but @k input '%y' has type i32"),
	    N(1, 76, "'%y' is declared here"),
	    E(5, 42, "launch operand #2 has type memref<?xi32> but @k input '%m' has type memref<?xf32>"),
	    N(1, 85, "'%m' is declared here"),
	    E(5, 47, "launch operand #3 has type memref<?xf32> but @k input '%w' has type memref<?xi32>"),
	    N(1, 104, "'%w' is declared here") } },
	{ "f32 operations need f32, integer ones integers",
	  "func.func @main(%f: f32, %i: i32) {\n"
	  "  %a = arith.addf %i, %i : i32\n"
	  "  %b = arith.addi %f, %f : f32\n"
	  "  %c = arith.cmpi slt, %f, %f : f32\n"
	  "  %d = arith.cmpf olt, %i, %i : i32\n"
	  "  %e = arith.negf %i : i32\n"
	  "  %g = math.fma %i, %i, %i : i32\n"
	  "  %h = arith.maximumf %f, %i : f32\n"
	  "  return\n}\n",
	  { E(2, 8, "'arith.addf' needs a float type (f32), not i32"),
	    E(3, 8, "'arith.addi' needs an integer or index type, not f32"),
	    E(4, 8, "'arith.cmpi' needs an integer or index type, not f32"),
	    E(5, 8, "'arith.cmpf' needs a float type (f32), not i32"),
	    E(6, 8, "'arith.negf' needs a float type (f32), not i32"),
	    E(7, 8, "'math.fma' needs a float type (f32), not i32"),
	    E(8, 27, "'%i' has type i32 but 'arith.maximumf' expects f32"),
	    N(1, 26, "'%i' is defined here") } },
	{ "f32 constants: float literals or hex bits",
	  "func.func @main() {\n"
	  "  %a = arith.constant 1 : f32\n"
	  "  %b = arith.constant -0x3F800000 : f32\n"
	  "  %c = arith.constant 0x1FFFFFFFF : f32\n"
	  "  %d = arith.constant 3.5e38 : f32\n"
	  "  %e = arith.constant 1.5 : i32\n"
	  "  %f = arith.constant -3.4028234e38 : f32\n"
	  "  %g = arith.constant 0xFF800000 : f32\n"
	  "  return\n}\n",
	  { E(2, 8, "f32 constant 1 is an integer literal"),
	    E(3, 8, "f32 constant -0x3F800000 is a hexadecimal bit pattern, which takes no '-'"),
	    E(4, 8, "f32 constant 0x1FFFFFFFF has more than 32 bits"),
	    E(5, 8, "float literal is out of range for f32 (it rounds to infinity"),
	    E(6, 8, "a float literal needs type f32, not i32") } },
	{ "float conversions and bitcasts",
	  "func.func @main(%f: f32, %i: i32, %x: index, %b: i1, %l: i64) {\n"
	  "  %a = arith.sitofp %x : index to f32\n"
	  "  %c = arith.uitofp %b : i1 to f32\n"
	  "  %d = arith.fptosi %f : f32 to index\n"
	  "  %e = arith.fptoui %i : i32 to i64\n"
	  "  %g = arith.bitcast %l : i64 to f32\n"
	  "  %h = arith.extsi %f : f32 to i64\n"
	  "  %k = arith.sitofp %l : i64 to f32\n"
	  "  %m = arith.fptoui %f : f32 to i64\n"
	  "  %n = arith.bitcast %f : f32 to i32\n"
	  "  return\n}\n",
	  { E(2, 8, "'arith.sitofp' converts i32 or i64 to f32, not index to f32"),
	    E(3, 8, "'arith.uitofp' converts i32 or i64 to f32, not i1 to f32"),
	    E(4, 8, "'arith.fptosi' converts f32 to i32 or i64, not f32 to index"),
	    E(5, 8, "'arith.fptoui' converts f32 to i32 or i64, not i32 to i64"),
	    E(6, 8, "'arith.bitcast' reinterprets the bits of i32 or f32 as i32 or f32, not i64 to f32"),
	    E(7, 8, "'arith.extsi' casts between integer types, not f32 to i64") } },
	{ "operand vs signature", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i32, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%n, %n) : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 38, "'%x' has type i32 but 'dataflow.thread.launch' expects i64"),
	    N(4, 36, "'%x' is defined here") } },
	{ "operand count", DENSE_K2
	  "func.func @main(%n: index) {\n"
	  "  %t = dataflow.thread.launch @k() grid(%n, %n) : () -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 31, "launch supplies 0 operands but @k takes 2 inputs"),
	    N(1, 25, "@k is defined here") } },
	{ "one token result",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n}\n"
	  "func.func @main() {\n"
	  "  dataflow.thread.launch @k() : () -> ()\n"
	  "  return\n}\n",
	  { E(5, 3, "'dataflow.thread.launch' must return exactly one !dataflow.thread_token") } },
	{ "unknown callee",
	  "func.func @main() {\n"
	  "  %t = dataflow.thread.launch @k() : () -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(2, 31, "launch of unknown thread @k") } },
	{ "ctrl missing",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() iv(%i: index) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 17, "@k has no ctrl slot: its entry block is (inputs..., ctrl(%c: none), iv(%i: index, ...))") } },
	{ "ctrl type",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: index) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 66, "ctrl slot '%c' of @k has type index; it must be none") } },
	{ "ctrl arity",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl() {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 61, "the ctrl slot of @k takes exactly one argument, not 0") } },
	{ "ctrl before iv",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() iv() ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 66, "the ctrl slot of @k must come right after the inputs, before iv(...)") } },
	{ "iv type",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) iv(%i: i32) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 79, "coordinate '%i' of @k has type i32; coordinates are index") } },
	{ "rank limit",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) "
	  "iv(%a: index, %b: index, %d: index, %e: index, %f: index) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 76, "@k has coordinate rank 5, above LOOM_MAX_RANK (4)") } },
	{ "ABI input type, channel in a dense thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%ch: !dataflow.channel<i32>) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 59, "input '%ch' of @k has type !dataflow.channel<i32>, which a launch cannot pass") } },
	{ "work_item_arg out of range",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = -1>)(%x: i64) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 81, "work_item_arg = -1 names no input of @w, which has 1 input") } },
	{ "work_item_arg not an integer",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = x>)(%x: i64) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 81, "work_item_arg must be an integer"),
	    E(1, 27, "a dynamic_work domain needs work_item_arg = N") } },
	{ "work_item_arg twice",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0, work_item_arg = 0>)(%x: i64) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 84, "duplicate work_item_arg") } },
	{ "dynamic-work: no iv, even empty",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: i64) ctrl(%c: none) iv() {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 109, "dynamic-work thread @w has no coordinates: it takes no iv(...)") } },
	{ "dynamic-work launch: no grid", BFS
	  "func.func @main(%t: memref<?xi64>, %r: i64) {\n"
	  "  %u = dataflow.thread.launch @bfs(%r, %t) grid() : (i64, memref<?xi64>) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 44, "dynamic-work thread @bfs is launched without grid(): it has no coordinates"),
	    N(1, 37, "@bfs has a dynamic_work domain") } },
	{ "dynamic-work launch: one root payload", BFS
	  "func.func @main() {\n"
	  "  %u = dataflow.thread.launch @bfs() : () -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 31, "launch of dynamic-work thread @bfs supplies 0 operands; it takes exactly one root payload and 1 capture"),
	    N(1, 25, "@bfs is defined here") } },
	{ "spawn in a host function",
	  "func.func @main(%x: i64) {\n  dataflow.work.spawn %x : i64\n  return\n}\n",
	  { E(2, 3, "'dataflow.work.spawn' is only allowed in a dynamic-work thread") } },
	{ "spawn type",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: index) ctrl(%c: none) {\n"
	  "  %y = arith.index_cast %x : index to i64\n"
	  "  dataflow.work.spawn %y : i64\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(3, 23, "spawned payload has type i64 but the work item of @w has type index"),
	    N(1, 85, "'%x' is the work item (work_item_arg = 0)") } },
	{ "spawn operand vs its type",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: index) ctrl(%c: none) {\n"
	  "  dataflow.work.spawn %x : i64\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(2, 23, "'%x' has type index but 'dataflow.work.spawn' expects i64"),
	    N(1, 85, "'%x' is defined here"),
	    E(2, 23, "spawned payload has type i64 but the work item of @w has type index"),
	    N(1, 85, "'%x' is the work item") } },
	{ "no channel in the ctrl slot of a dynamic-work thread",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: i64) ctrl(%c: !dataflow.channel<i64>) {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 99, "ctrl slot '%c' of @w has type !dataflow.channel<i64>; it must be none"),
	    E(1, 99, "dynamic-work thread @w cannot use channel type !dataflow.channel<i64>") } },
	{ "no channel in scf.for of a dynamic-work thread",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: index) ctrl(%c: none) {\n"
	  "  %r = scf.for %i = %x to %x step %x iter_args(%a = %x) -> (!dataflow.channel<index>) {\n"
	  "    scf.yield %a : !dataflow.channel<index>\n"
	  "  }\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(2, 8, "dynamic-work thread @w cannot use channel type !dataflow.channel<index>"),
	    E(3, 5, "dynamic-work thread @w cannot use channel type !dataflow.channel<index>") } },
	{ "no wait in a thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%t: i64) ctrl(%c: none) {\n"
	  "  dataflow.thread.wait %c : none\n  dataflow.thread.yield\n}\n",
	  { E(2, 3, "'dataflow.thread.wait' is not allowed inside a thread body") } },
	{ "no launch in a nested region of a thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%n: index) ctrl(%c: none) {\n"
	  "  scf.for %i = %n to %n step %n {\n"
	  "    %t = dataflow.thread.launch @k(%n) : (index) -> !dataflow.thread_token\n"
	  "  }\n  dataflow.thread.yield\n}\n",
	  { E(3, 10, "'dataflow.thread.launch' is not allowed inside a thread body") } },
	{ "frontier type",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%n: index) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield %c, %n : none, index\n}\n",
	  { E(2, 29, "yield frontier '%n' has type index; frontiers are none") } },
	{ "physical attribute on an operation",
	  "func.func @main() {\n  %a = arith.constant 1 {core = 0, pipeline} : i64\n  return\n}\n",
	  { E(2, 26, "attribute 'core' is not one loomc defines on 'arith.constant': it takes none"),
	    E(2, 36, "attribute 'pipeline' is not one loomc defines on 'arith.constant'") } },
	{ "physical dialect attribute as the domain",
	  "dataflow.thread @k domain(#fabric.pe<0, 0>)() ctrl(%c: none) {\n  dataflow.thread.yield\n}\n",
	  { E(1, 27, "thread domain must be #dataflow.thread_domain<dense> or") } },
	{ "physical attribute nested in an array",
	  "func.func @main() attributes {hint = [1, [#loom.tile_x<3>]]} {\n  return\n}\n",
	  { E(1, 31, "attribute 'hint' is not one loomc defines on a host function: it takes none"),
	    E(1, 43, "attribute '#loom.tile_x' is not one loomc defines: its only dialect attribute is #dataflow.thread_domain") } },
	{ "attributes loomc does not define, on a thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) iv(%i: index) "
	  "attributes {staticGrid, SpatialMapping, loom.rank = 1, thread_axis = [0], dataflow.partition_domain} {\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(1, 102, "attribute 'staticGrid' is not one loomc defines on a dataflow.thread: the only one is loom.child_capacity, for a dynamic-work thread"),
	    E(1, 114, "attribute 'SpatialMapping' is not one loomc defines on a dataflow.thread"),
	    E(1, 130, "attribute 'loom.rank' is not one loomc defines on a dataflow.thread"),
	    E(1, 145, "attribute 'thread_axis' is not one loomc defines on a dataflow.thread"),
	    E(1, 164, "attribute 'dataflow.partition_domain' is not one loomc defines on a dataflow.thread") } },
	{ "attributes loomc does not define, on a launch", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i64, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%n, %n) {loom.accCore = 1, dataflow.map_info, B_thread} : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 56, "attribute 'loom.accCore' is not one loomc defines on 'dataflow.thread.launch': it takes none"),
	    E(5, 74, "attribute 'dataflow.map_info' is not one loomc defines on 'dataflow.thread.launch'"),
	    E(5, 93, "attribute 'B_thread' is not one loomc defines on 'dataflow.thread.launch'") } },
	{ "a dialect attribute loomc does not define", DENSE_K2
	  "func.func @main(%m: memref<?xi64>, %x: i64, %n: index) {\n"
	  "  %t = dataflow.thread.launch @k(%m, %x) grid(%n, %n) {view = #dataflow.distributed_view<block, 4>} : (memref<?xi64>, i64) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 56, "attribute 'view' is not one loomc defines on 'dataflow.thread.launch'"),
	    E(5, 63, "attribute '#dataflow.distributed_view' is not one loomc defines: its only dialect attribute is #dataflow.thread_domain, a thread's domain(...)") } },
	{ "#dataflow.thread_domain is only a domain",
	  "func.func @main() {\n  %a = arith.constant 1 {d = [#dataflow.thread_domain<dense>]} : i64\n  return\n}\n",
	  { E(2, 26, "attribute 'd' is not one loomc defines on 'arith.constant'"),
	    E(2, 31, "attribute '#dataflow.thread_domain' is only allowed as a thread's domain(...)") } },
	{ "an attribute loomc does not define, on a spawn",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: i64) ctrl(%c: none) {\n"
	  "  dataflow.work.spawn %x {loom.reservation} : i64\n"
	  "  dataflow.thread.yield\n}\n",
	  { E(2, 27, "attribute 'loom.reservation' is not one loomc defines on 'dataflow.work.spawn': it takes none") } },
	{ "loom.child_capacity on a dense thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) iv(%i: index) "
	  "attributes {loom.child_capacity = 4} {\n  dataflow.thread.yield\n}\n",
	  { E(1, 102, "'loom.child_capacity' is only allowed on a dynamic-work thread"),
	    N(1, 27, "@k has a dense domain") } },
	{ "loom.child_capacity on a host function",
	  "func.func @main() attributes {loom.child_capacity = 4} {\n  return\n}\n",
	  { E(1, 31, "attribute 'loom.child_capacity' is not one loomc defines on a host function") } },
	{ "loom.child_capacity on a launch", BFS
	  "func.func @main(%r: i64, %m: memref<?xi64>) {\n"
	  "  %t = dataflow.thread.launch @bfs(%r, %m) {loom.child_capacity = 4} : (i64, memref<?xi64>) -> !dataflow.thread_token\n"
	  "  return\n}\n",
	  { E(5, 45, "attribute 'loom.child_capacity' is not one loomc defines on 'dataflow.thread.launch'") } },
	{ "loom.child_capacity once",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: i64) ctrl(%c: none) "
	  "attributes {loom.child_capacity = 4, loom.child_capacity = 8} {\n  dataflow.thread.yield\n}\n",
	  { E(1, 146, "duplicate attribute 'loom.child_capacity'"),
	    N(1, 121, "the first 'loom.child_capacity' is here") } },
	{ "loom.child_capacity is an integer",
	  "dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)(%x: i64) ctrl(%c: none) "
	  "attributes {loom.child_capacity = \"4\"} {\n  dataflow.thread.yield\n}\n",
	  { E(1, 143, "loom.child_capacity must be an integer") } },
	{ "undefined value, and no cascade",
	  "func.func @main() {\n  %a = arith.addi %b, %b : i64\n  %c = arith.muli %a, %a : i64\n  return\n}\n",
	  { E(2, 19, "use of undefined value '%b'"), E(2, 23, "use of undefined value '%b'") } },
	{ "values do not escape their region",
	  "func.func @main(%n: index) {\n"
	  "  scf.for %i = %n to %n step %n {\n"
	  "    %v = arith.addi %i, %i : index\n"
	  "  }\n"
	  "  %w = arith.addi %v, %i : index\n  return\n}\n",
	  { E(5, 19, "use of undefined value '%v'"), E(5, 23, "use of undefined value '%i'") } },
	{ "threads do not see host values",
	  "func.func @main(%n: index) {\n  return\n}\n"
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
	  "  %x = arith.addi %n, %n : index\n  dataflow.thread.yield\n}\n",
	  { E(5, 19, "use of undefined value '%n'"), E(5, 23, "use of undefined value '%n'") } },
	{ "redefinition of an argument",
	  "func.func @main(%n: index, %n: i64) {\n  return\n}\n",
	  { E(1, 28, "redefinition of value '%n'"), N(1, 17, "previous definition of '%n' is here") } },
	{ "duplicate symbol across kinds",
	  "func.func @k() {\n  return\n}\n"
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n  dataflow.thread.yield\n}\n",
	  { E(4, 17, "redefinition of symbol @k"), N(1, 11, "previous definition of @k is here") } },
	{ "arith operand type",
	  "func.func @main(%a: i64, %b: index) {\n  %p = arith.cmpi eq, %a, %b : i64\n  return\n}\n",
	  { E(2, 27, "'%b' has type index but 'arith.cmpi' expects i64"), N(1, 26, "'%b' is defined here") } },
	{ "index dialect operand type",
	  "func.func @main(%a: i64) {\n  %p = index.add %a, %a\n  return\n}\n",
	  { E(2, 18, "'%a' has type i64 but 'index.add' expects index"), N(1, 17, "'%a' is defined here"),
	    E(2, 22, "'%a' has type i64 but 'index.add' expects index"), N(1, 17, "'%a' is defined here") } },
	{ "store value type",
	  "func.func @main(%m: memref<?xi32>, %i: index, %v: i64) {\n"
	  "  memref.store %v, %m[%i] : memref<?xi32>\n  return\n}\n",
	  { E(2, 16, "'%v' has type i64 but 'memref.store' expects i32"), N(1, 47, "'%v' is defined here") } },
	{ "scf.for bounds type",
	  "func.func @main(%a: i64, %n: index) {\n  scf.for %i = %n to %a step %n {\n  }\n  return\n}\n",
	  { E(2, 22, "'%a' has type i64 but 'scf.for' expects index"), N(1, 17, "'%a' is defined here") } },
	{ "select on a non-integer",
	  "func.func @main(%p: i1, %t: !dataflow.thread_token) {\n"
	  "  %r = arith.select %p, %t, %t : !dataflow.thread_token\n  return\n}\n",
	  { E(2, 8, "'arith.select' needs an integer, index or f32 type, not !dataflow.thread_token") } },
	{ "print of a memref",
	  "func.func @main(%m: memref<?xi64>) {\n  loom.print %m : memref<?xi64>\n  return\n}\n",
	  { E(2, 3, "'loom.print' needs an integer, index or f32 type, not memref<?xi64>") } },
	{ "cast between index and index",
	  "func.func @main(%a: index) {\n  %b = index.castu %a : index to index\n  return\n}\n",
	  { E(2, 8, "'index.castu' casts between index and an integer type, not index to index") } },
	{ "extui to index",
	  "func.func @main(%a: i32) {\n  %b = arith.extui %a : i32 to index\n  return\n}\n",
	  { E(2, 8, "'arith.extui' widens an integer type to a wider one, not i32 to index") } },
	{ "constant range i64 negative",
	  "func.func @main() {\n  %a = arith.constant -9223372036854775809 : i64\n  return\n}\n",
	  { E(2, 8, "constant -9223372036854775809 does not fit in i64") } },
	{ "wait on a non-token",
	  "func.func @main(%t: !dataflow.thread_token) {\n"
	  "  dataflow.thread.wait %t : i64\n  return\n}\n",
	  { E(2, 24, "'%t' has type i64 but wait operands must be !dataflow.thread_token"),
	    N(1, 17, "'%t' is defined here") } },
	{ "alloc in a thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
	  "  %m = memref.alloc() : memref<4xi64>\n  dataflow.thread.yield\n}\n",
	  { E(2, 8, "'memref.alloc' is only allowed in host functions") } },
	{ "check in a thread",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%x: i64) ctrl(%c: none) {\n"
	  "  loom.check %x, %x : i64\n  dataflow.thread.yield\n}\n",
	  { E(2, 3, "'loom.check' is only allowed in host functions") } },
	{ "thread yield in a host function",
	  "func.func @main() {\n  dataflow.thread.yield\n}\n",
	  { E(2, 3, "'dataflow.thread.yield' must be the last operation of a dataflow.thread body") } },
	{ "thread yield in a nested region",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%n: index) ctrl(%c: none) {\n"
	  "  scf.for %i = %n to %n step %n {\n    dataflow.thread.yield\n  }\n  dataflow.thread.yield\n}\n",
	  { E(3, 5, "'dataflow.thread.yield' must be the last operation of a dataflow.thread body") } },
	{ "yield not last",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(%x: i64) ctrl(%c: none) {\n"
	  "  dataflow.thread.yield\n  %y = arith.addi %x, %x : i64\n}\n",
	  { E(2, 3, "'dataflow.thread.yield' must be the last operation of a dataflow.thread body") } },
	{ "empty thread body",
	  "dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n}\n",
	  { E(2, 1, "a dataflow.thread body must end with 'dataflow.thread.yield'") } },
	{ "scf.yield count",
	  "func.func @main(%n: index) {\n  scf.for %i = %n to %n step %n {\n    scf.yield %n : index\n  }\n  return\n}\n",
	  { E(3, 5, "'scf.yield' yields 1 value but the scf.for has 0 iter_args"), N(2, 3, "the scf.for is here") } },
	{ "scf.if condition type",
	  "func.func @main(%a: i64) {\n  scf.if %a {\n  }\n  return\n}\n",
	  { E(2, 10, "'%a' has type i64 but 'scf.if' expects i1"), N(1, 17, "'%a' is defined here") } },
	{ "scf.if yield count",
	  "func.func @main(%p: i1, %a: i64) {\n  %r = scf.if %p -> (i64) {\n    scf.yield %a : i64\n"
	  "  } else {\n    scf.yield %a, %a : i64, i64\n  }\n  loom.print %r : i64\n  return\n}\n",
	  { E(5, 5, "'scf.yield' yields 2 values but the scf.if has 1 result"), N(2, 8, "the scf.if is here") } },
	{ "scf.if results without else",
	  "func.func @main(%p: i1, %a: i64) {\n  %r = scf.if %p -> (i64) {\n    scf.yield %a : i64\n  }\n"
	  "  loom.print %r : i64\n  return\n}\n",
	  { E(2, 8, "an scf.if with results needs an 'else' region"), N(4, 3, "the then region ends here") } },
	{ "a then value is not seen in the else region",
	  "func.func @main(%p: i1, %a: i64) {\n  scf.if %p {\n    %x = arith.addi %a, %a : i64\n"
	  "    loom.print %x : i64\n  } else {\n    loom.print %x : i64\n  }\n  return\n}\n",
	  { E(6, 16, "use of undefined value '%x'") } },
	{ "launch of a thread with an invalid domain reports only the domain",
	  "dataflow.thread @k domain(#dataflow.thread_domain<weird>)() ctrl(%c: none) {\n  dataflow.thread.yield\n}\n"
	  "func.func @main(%n: index) {\n"
	  "  %t = dataflow.thread.launch @k() grid(%n, %n) : () -> !dataflow.thread_token\n  return\n}\n",
	  { E(1, 51, "unknown thread domain kind 'weird'") } },
};

TEST(each_rule_reports_exactly_its_diagnostics)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		struct front f;
		size_t n = 0;
		bool ok = true;

		front_verify(&f, r->text);
		while (n < (int)(sizeof(r->want) / sizeof(r->want[0])) && r->want[n].msg)
			n++;
		for (size_t k = 0; k < n; k++)
			ok &= front_diag_is(&f, k, r->want[k].kind,
					    r->want[k].line, r->want[k].col,
					    r->want[k].msg);
		if (f.d.num_recs != n) {
			printf("#   %zu diagnostics, wanted %zu\n",
			       f.d.num_recs, n);
			for (size_t k = 0; k < f.d.num_recs; k++)
				printf("#     %u:%u %s\n", f.d.recs[k].loc.line,
				       f.d.recs[k].loc.col, f.d.recs[k].msg);
			ok = false;
		}
		if (!ok) {
			printf("#   rule: %s\n", r->name);
			CHECK(0);
		}
		front_close(&f);
	}
}

TEST(rank_zero_empty_and_limits_are_valid)
{
	struct front f;
	char text[4096];
	int n;

	CHECK_EQ(0, front_verify(&f,
		"dataflow.thread @r0 domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
		"  dataflow.thread.yield\n}\n"
		"dataflow.thread @r4 domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) "
		"iv(%a: index, %b: index, %d: index, %e: index) {\n"
		"  dataflow.thread.yield %c : none\n}\n"
		"func.func @main() {\n"
		"  %z = arith.constant 0 : index\n"
		"  %t0 = dataflow.thread.launch @r0() : () -> !dataflow.thread_token\n"
		"  %t1 = dataflow.thread.launch @r0() grid() : () -> !dataflow.thread_token\n"
		"  %t2 = dataflow.thread.launch @r4() wait(%t0, %t1) grid(%z, %z, %z, %z) : () -> !dataflow.thread_token\n"
		"  dataflow.thread.wait %t2 : !dataflow.thread_token\n"
		"  return\n}\n"));
	front_close(&f);

	n = snprintf(text, sizeof(text),
		     "dataflow.thread @k domain(#dataflow.thread_domain<dense>)(");
	for (int i = 0; i < LOOM_IMAGE_MAX_ARGS; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%%a%d: i64",
			      i ? ", " : "", i);
	snprintf(text + n, sizeof(text) - (size_t)n,
		 ") ctrl(%%c: none) {\n  dataflow.thread.yield\n}\n");
	CHECK_EQ(0, front_verify(&f, text));
	front_close(&f);
}

/* The attribute loomc defines, where it is defined, verifies and is kept. */
TEST(child_capacity_is_defined)
{
	struct front f;
	struct ir_func *t;

	CHECK_EQ(0, front_verify(&f,
		"dataflow.thread @w domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)"
		"(%x: i64) ctrl(%c: none) attributes {loom.child_capacity = 9} {\n"
		"  dataflow.work.spawn %x : i64\n"
		"  dataflow.thread.yield\n}\n"
		"dataflow.thread @v domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 0>)"
		"(%x: i64) ctrl(%c: none) attributes {loom.child_capacity = 2 : i64} {\n"
		"  dataflow.thread.yield\n}\n"));
	CHECK_EQ(0, f.d.num_recs);
	t = f.m ? f.m->funcs : NULL;
	REQUIRE(t);
	REQUIRE_EQ(1, t->num_attrs);
	CHECK(strcmp(t->attrs[0].name, "loom.child_capacity") == 0);
	CHECK_EQ(IR_ATTR_INT, t->attrs[0].kind);
	CHECK_EQ(9, t->attrs[0].ival);
	front_close(&f);
}

/* Counts the units verify_source() hands over. */
static void count_unit(struct ir_module *m, void *arg)
{
	*(int *)arg += m->num_funcs;
}

TEST(whole_file_units)
{
	static const char text[] =
		"func.func @a() {\n  return\n}\n"
		"// -----\n"
		"func.func @a() {\n  %x = arith.addi %y, %y : i64\n  return\n}\n"
		"// -----\n"
		"func.func @a() {\n  return\n}\n"
		"func.func @b() {\n  return\n}\n"
		"// -----\n"
		"func.func @a( {\n"
		"// -----\n"
		"dataflow.thread @k domain(#dataflow.thread_domain<dense>)() ctrl(%c: none) {\n"
		"  dataflow.thread.yield\n}\n";
	struct loom_source src;
	struct diag d;
	int funcs = 0;

	REQUIRE(loom_source_from_memory(&src, "f.loom", text, strlen(text)) == 0);
	diag_init(&d, &src, NULL, true);
	CHECK_EQ(3, verify_source(&d, count_unit, &funcs));
	CHECK_EQ(4, funcs);	/* units 1, 3 (two functions) and 5 */
	REQUIRE_EQ(3, d.num_recs);
	CHECK_EQ(6, d.recs[0].loc.line);	/* lines of the whole file */
	CHECK_EQ(19, d.recs[0].loc.col);
	CHECK_EQ(6, d.recs[1].loc.line);
	CHECK_EQ(17, d.recs[2].loc.line);
	CHECK(strstr(d.recs[2].msg, "expected an argument"));
	diag_free(&d);
	loom_source_free(&src);
}

TEST(printed_like_gcc)
{
	static const char text[] =
		"func.func @main() {\n\t%x = arith.addi %nope, %nope : i64\n  return\n}\n";
	struct loom_source src;
	struct diag d;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	REQUIRE(out);
	REQUIRE(loom_source_from_memory(&src, "p.loom", text, strlen(text)) == 0);
	diag_init(&d, &src, out, false);
	CHECK_EQ(2, verify_source(&d, NULL, NULL));
	fclose(out);
	CHECK(buf && strcmp(buf,
		"p.loom:2:18: error: use of undefined value '%nope'\n"
		"\t%x = arith.addi %nope, %nope : i64\n"
		"\t                ^~~~~\n"
		"p.loom:2:25: error: use of undefined value '%nope'\n"
		"\t%x = arith.addi %nope, %nope : i64\n"
		"\t                       ^~~~~\n") == 0);
	if (buf && !strstr(buf, "p.loom:2:18"))
		printf("#   printed:\n%s", buf);
	CHECK_EQ(0, d.num_recs);
	free(buf);
	diag_free(&d);
	loom_source_free(&src);
}

TEST(notes_and_locationless_diagnostics)
{
	struct loom_source src;
	struct diag d;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	REQUIRE(out);
	REQUIRE(loom_source_from_memory(&src, "n.loom", "abc", 3) == 0);
	diag_init(&d, &src, out, true);
	diag_note(&d, (struct loom_loc){ .line = 1, .col = 3, .offset = 2, .len = 9 },
		  "see %s", "here");
	diag_warning(&d, (struct loom_loc){ 0 }, "whole file");
	fclose(out);
	CHECK(buf && strcmp(buf, "n.loom:1:3: note: see here\nabc\n  ^\n"
			    "n.loom: warning: whole file\n") == 0);
	CHECK_EQ(1, d.notes);
	CHECK_EQ(1, d.warnings);
	CHECK_EQ(0, d.errors);
	CHECK_EQ(2, d.num_recs);
	free(buf);
	diag_free(&d);
	loom_source_free(&src);
}

int main(void)
{
	RUN(valid_program_is_linked);
	RUN(constant_folding);
	RUN(each_rule_reports_exactly_its_diagnostics);
	RUN(rank_zero_empty_and_limits_are_valid);
	RUN(child_capacity_is_defined);
	RUN(whole_file_units);
	RUN(printed_like_gcc);
	RUN(notes_and_locationless_diagnostics);
	return checks_done();
}
