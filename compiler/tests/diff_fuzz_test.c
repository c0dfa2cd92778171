// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Differential fuzzing of loomc: random well-typed threads (loads, stores,
 * integer, index and f32 arithmetic, selects, casts, loops with reductions,
 * loops updating their instance's slots in place, scf.if with and without
 * results, spawns), each compiled for several fabrics from 2x2 to 16x16 and run on
 * the host engine; every word of memory (and every item's children) must
 * be what ir_interp.h computes from the IR, and no run may deadlock.
 *
 * A thread and its data come from one 64-bit seed.  Instances never share
 * what they write: each owns S slots of every output memref (its linear
 * coordinate, or its item, times S), reads inputs anywhere and its own
 * slots; so the result does not depend on the order the fabric runs them.
 * Divisors and shift amounts are masked into the defined range.  Patterns
 * the compiler refuses (a reduction whose new value has other uses, a
 * memref stored and accessed again in a loop at an element another
 * iteration may access, a spawn in a loop beside
 * others) are generated too: a refusal ("does not fit", "cannot route",
 * "cannot lower ...: not supported yet") is counted, not a failure.
 *
 *   diff_fuzz_test                      the fixed-seed slice make test runs
 *   diff_fuzz_test --seconds N [--seed S] [--fabrics all] [--out DIR]
 *   diff_fuzz_test --replay FILE [--fabric WxH]
 *   diff_fuzz_test --thread SEED [--fabric WxH]   a long run's thread, printed
 *
 * (or LOOM_FUZZ_SECONDS, LOOM_FUZZ_SEED).  A failure prints the seed, the
 * fabric and the thread, and writes the thread to DIR/diff-fuzz-SEED.loom
 * (default $TMPDIR or /tmp) with a "// diff-fuzz seed=S" first line:
 * --replay regenerates the data from that seed and runs the file's text,
 * edited down by hand or not.  compiler/tests/corpus/fuzz/ keeps such
 * files; every run replays them first.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <time.h>

#include "check.h"
#include "engine_run.h"
#include "front.h"
#include "ir_interp.h"
#include "../../qemu-device/engine/tests/splitmix.h"

/* -------------------------------------------------------- the thread --- */

enum vt { T_I1, T_I32, T_I64, T_IDX, T_F32, T_COUNT };

static const char *const vt_name[T_COUNT] = { "i1", "i32", "i64", "index", "f32" };

#define MAX_IN		10
#define MAX_POOL	512
#define IN_LEN		64	/* elements of an input memref */
#define MAX_INST	24
#define MAX_ITEMS	8

/**
 * struct fcase - one generated thread and its data
 * @text: the source
 * @dynamic: a dynamic-work thread (else dense)
 * @rank: dense: its rank
 * @ext: dense: its extents
 * @items: dynamic: how many items (payloads 0 .. items-1)
 * @ninst: instances
 * @slots: S, an instance's slots per output memref
 * @nin: thread inputs
 * @in_type: per input: T_* of a scalar, or of a memref's element
 * @is_mem: per input: a memref
 * @is_out: per input: an output memref (@slots per instance)
 * @args: per input: the scalar's launch operand
 * @init: per memref input: its initial contents (8 bytes a slot max)
 * @len: per memref input: its length
 * @in_place_loops: loops that store their slot and access it again
 * @inductions: iter_args yielded as acc + x or acc - x (x from outside)
 * @dynamic_steps: loops whose step is a value
 */
struct fcase {
	char *text;
	size_t len_text, cap_text;
	bool dynamic;
	int rank;
	int64_t ext[3];
	unsigned items, ninst, slots;
	int nin;
	enum vt in_type[MAX_IN];
	bool is_mem[MAX_IN], is_out[MAX_IN];
	uint64_t args[MAX_IN];
	uint8_t *init[MAX_IN];
	size_t len[MAX_IN];
	unsigned in_place_loops, inductions, dynamic_steps;
};

struct pval {
	char name[48];		/* as long as any name add() is given */
	enum vt t;
	int depth;
};

/**
 * struct gen - the generator's state while it writes a body
 * @c: the case being written
 * @r: its random stream
 * @pool: values in scope
 * @depth: loop and branch nesting
 * @loops_in: loop nesting alone
 * @next: next value number
 * @ops: lines written
 * @stmts: statements generated
 * @budget: statements to generate
 * @spawn_sites: spawn statements written; @loop_spawn: one is in a loop
 * @loop_acc: per output memref, accessed in the current outermost loop
 * @base: the instance's first slot (an index value's name)
 * @in_place: the current outermost loop accesses its instance's slot
 *	base + @slot_off + its induction variable @slot_iv, as often as it
 *	likes (each iteration its own slot: S is 8, the iv at most 4);
 *	@slot_uses such accesses so far, @slot_stores of them stores
 */
struct gen {
	struct fcase *c;
	uint64_t r;
	struct pval pool[MAX_POOL];
	int np, depth, loops_in, next, ops, stmts, budget;
	unsigned loops;	/* percent of top-level statements that are loops */
	int spawn_sites;
	bool loop_spawn;
	bool loop_acc[MAX_IN];
	char base[16];
	bool in_place;
	int slot_off, slot_uses, slot_stores;
	char slot_iv[16];
};

static void out(struct gen *g, const char *fmt, ...)
{
	struct fcase *c = g->c;
	va_list ap;
	int n;

	for (;;) {
		size_t room = c->cap_text - c->len_text;

		va_start(ap, fmt);
		n = vsnprintf(c->text + c->len_text, room, fmt, ap);
		va_end(ap);
		if ((size_t)n < room)
			break;
		c->cap_text = c->cap_text * 2 + n + 256;
		c->text = realloc(c->text, c->cap_text);
		if (!c->text)
			abort();
	}
	c->len_text += n;
}

static void indent(struct gen *g)
{
	out(g, "%*s", 2 + 2 * g->depth, "");
}

static const char *add(struct gen *g, enum vt t, const char *name)
{
	struct pval *p;

	if (g->np == MAX_POOL)
		g->np--;	/* forget the newest: still well typed */
	p = &g->pool[g->np++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->t = t;
	p->depth = g->depth;
	return p->name;
}

/* A new value's name, entered in the pool; the caller writes its definition. */
static const char *def(struct gen *g, enum vt t)
{
	char n[16];

	snprintf(n, sizeof(n), "%%v%d", g->next++);
	g->ops++;
	indent(g);
	return add(g, t, n);
}

static int64_t interesting(uint64_t *r, enum vt t)
{
	static const int64_t v[] = {
		0, 1, 2, 3, -1, -2, 7, 100, -100, 255, 65536, 2147483647,
		-2147483647 - 1, 4294967295LL, INT64_MAX, INT64_MIN, 12345678901LL,
	};
	int64_t x = chance(r, 70) ? v[rnd(r, sizeof(v) / sizeof(v[0]))] :
				    (int64_t)rng_next(r);

	return t == T_I32 ? (int64_t)(int32_t)x : x;
}

static uint32_t interesting_f32(uint64_t *r)
{
	static const uint32_t v[] = {
		0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000,
		0x40490fdb, 0x7f800000, 0xff800000, 0x7fc00000, 0x00000001,
		0x7f7fffff, 0x4b800001, 0xcf000000, 0x42c80000, 0x3e99999a,
	};
	float f;
	uint32_t u;

	if (chance(r, 50))
		return v[rnd(r, sizeof(v) / sizeof(v[0]))];
	f = (float)((int)rnd(r, 2001) - 1000) / (float)(1 + rnd(r, 64));
	memcpy(&u, &f, 4);
	return u;
}

static const char *constant(struct gen *g, enum vt t)
{
	const char *n;

	if (t == T_I1)
		t = T_I32;	/* callers ask for i1 through cmp() */
	n = def(g, t);
	if (t == T_F32)
		out(g, "%s = arith.constant 0x%08X : f32\n", n, interesting_f32(&g->r));
	else if (t == T_IDX)
		out(g, "%s = arith.constant %d : index\n", n, (int)rnd(&g->r, 9) - 1);
	else
		out(g, "%s = arith.constant %" PRId64 " : %s\n", n,
		    interesting(&g->r, t), vt_name[t]);
	return n;
}

static const char *cmp(struct gen *g);

/* A value of type @t in scope: an existing one mostly, else a new constant. */
static const char *pick(struct gen *g, enum vt t)
{
	int idx[MAX_POOL], n = 0;

	for (int i = 0; i < g->np; i++)
		if (g->pool[i].t == t)
			idx[n++] = i;
	if (t == T_I1 && (!n || chance(&g->r, 30)))
		return cmp(g);
	if (!n || chance(&g->r, 8))
		return t == T_I1 ? cmp(g) : constant(g, t);
	/* the newer values more often: longer chains */
	if (chance(&g->r, 50))
		return g->pool[idx[n - 1 - rnd(&g->r, n < 4 ? n : 4)]].name;
	return g->pool[idx[rnd(&g->r, n)]].name;
}

/* A value of type @t among pool[0, @outer), else a new constant. */
static const char *pick_outer(struct gen *g, enum vt t, int outer)
{
	int idx[MAX_POOL], n = 0;

	for (int i = 0; i < outer && i < g->np; i++)
		if (g->pool[i].t == t)
			idx[n++] = i;
	if (!n || chance(&g->r, 20))
		return constant(g, t);
	return g->pool[idx[rnd(&g->r, n)]].name;
}

static enum vt int_type(struct gen *g)
{
	static const enum vt t[] = { T_I32, T_I64, T_IDX };

	return t[rnd(&g->r, 3)];
}

static const char *cmp(struct gen *g)
{
	static const char *const ip[] = { "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge" };
	static const char *const fp[] = { "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
		"ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true" };
	enum vt t = chance(&g->r, 25) ? T_F32 : int_type(g);
	const char *a = pick(g, t), *b = pick(g, t), *n = def(g, T_I1);

	if (t == T_F32)
		out(g, "%s = arith.cmpf %s, %s, %s : f32\n", n, fp[rnd(&g->r, 16)], a, b);
	else if (t == T_IDX && chance(&g->r, 50))
		out(g, "%s = index.cmp %s(%s, %s)\n", n, ip[rnd(&g->r, 10)], a, b);
	else
		out(g, "%s = arith.cmpi %s, %s, %s : %s\n", n, ip[rnd(&g->r, 10)], a, b,
		    vt_name[t]);
	return n;
}

/* @x masked with @mask (then plus @plus): a defined divisor or shift. */
static const char *masked(struct gen *g, enum vt t, const char *x, int mask,
			  int plus)
{
	const char *m, *n;

	m = def(g, t);
	out(g, "%s = arith.constant %d : %s\n", m, mask, vt_name[t]);
	n = def(g, t);
	out(g, "%s = arith.andi %s, %s : %s\n", n, x, m, vt_name[t]);
	if (!plus)
		return n;
	m = def(g, t);
	out(g, "%s = arith.constant %d : %s\n", m, plus, vt_name[t]);
	x = n;
	n = def(g, t);
	out(g, "%s = arith.addi %s, %s : %s\n", n, x, m, vt_name[t]);
	return n;
}

static const char *int_op(struct gen *g, enum vt t)
{
	static const char *const ops[] = { "addi", "subi", "muli", "andi", "ori", "xori",
		"maxsi", "minsi", "maxui", "minui", "shli", "shrsi", "shrui",
		"divsi", "divui", "remsi", "remui" };
	static const char *const idx[] = { "add", "sub", "mul", "and", "or", "xor",
		"maxs", "mins", "maxu", "minu", "shl", "shrs", "shru",
		"divs", "divu", "rems", "remu" };
	unsigned k = rnd(&g->r, 17);
	const char *a = pick(g, t), *b = pick(g, t), *n;

	if (k >= 13)
		b = masked(g, t, b, 15, 1);
	else if (k >= 10)
		b = masked(g, t, b, t == T_I32 ? 31 : 63, 0);
	n = def(g, t);
	if (t == T_IDX && chance(&g->r, 40))
		out(g, "%s = index.%s %s, %s\n", n, idx[k], a, b);
	else
		out(g, "%s = arith.%s %s, %s : %s\n", n, ops[k], a, b, vt_name[t]);
	return n;
}

static const char *f32_op(struct gen *g)
{
	static const char *const ops[] = { "addf", "subf", "mulf", "divf", "maximumf", "minimumf" };
	unsigned k = rnd(&g->r, 8);
	const char *a = pick(g, T_F32), *b = pick(g, T_F32), *c, *n;

	if (k == 6) {
		n = def(g, T_F32);
		out(g, "%s = arith.negf %s : f32\n", n, a);
	} else if (k == 7) {
		c = pick(g, T_F32);
		n = def(g, T_F32);
		out(g, "%s = math.fma %s, %s, %s : f32\n", n, a, b, c);
	} else {
		n = def(g, T_F32);
		out(g, "%s = arith.%s %s, %s : f32\n", n, ops[k], a, b);
	}
	return n;
}

/*
 * @to from a value of type @from: arith.@op, or, when @other is given,
 * arith.@other instead in 100 - @percent of the cases.  The value is
 * picked before the choice is drawn: a seed gives the same thread.
 */
static const char *convert(struct gen *g, enum vt from, enum vt to, unsigned percent,
			   const char *op, const char *other)
{
	const char *x = pick(g, from), *n = def(g, to);

	if (other && !chance(&g->r, percent))
		op = other;
	out(g, "%s = arith.%s %s : %s to %s\n", n, op, x, vt_name[from], vt_name[to]);
	return n;
}

/* A value of type @to made from another type. */
static const char *cast(struct gen *g, enum vt to)
{
	switch (to) {
	case T_F32:
		if (chance(&g->r, 30))
			return convert(g, T_I32, T_F32, 0, "bitcast", NULL);
		return convert(g, chance(&g->r, 50) ? T_I32 : T_I64, T_F32, 50,
			       "sitofp", "uitofp");
	case T_IDX:
		return convert(g, chance(&g->r, 50) ? T_I32 : T_I64, T_IDX, 70,
			       "index_cast", "index_castui");
	default:
		break;
	}
	switch (rnd(&g->r, 4)) {
	case 0:
		return convert(g, T_IDX, to, 70, "index_cast", "index_castui");
	case 1:
		return convert(g, T_F32, to, 50, "fptosi", "fptoui");
	case 2:
		return convert(g, T_I1, to, 50, "extsi", "extui");
	default:
		if (to == T_I64)
			return convert(g, T_I32, to, 50, "extsi", "extui");
		if (chance(&g->r, 30))
			return convert(g, T_F32, to, 0, "bitcast", NULL);
		return convert(g, T_I64, to, 0, "trunci", NULL);
	}
}

static int mem_of(struct gen *g, bool output, int want_type)
{
	int k[MAX_IN], n = 0;

	for (int i = 0; i < g->c->nin; i++)
		if (g->c->is_mem[i] && g->c->is_out[i] == output &&
		    (want_type < 0 || (int)g->c->in_type[i] == want_type))
			k[n++] = i;
	return n ? k[rnd(&g->r, n)] : -1;
}

/*
 * May the body access output memref @m?  Inside a loop, an output stored
 * there and accessed again is refused by the compiler: mostly once.
 */
static bool may_access(struct gen *g, int m)
{
	if (m < 0 || !g->loops_in)
		return m >= 0;
	if (g->in_place)	/* nested loops: the slot is not theirs */
		return g->loops_in == 1 || chance(&g->r, 10);
	if (g->loop_acc[m] && !chance(&g->r, 10))
		return false;
	g->loop_acc[m] = true;
	return true;
}

/* An index into the instance's own slots: base + (x & (S - 1)). */
static const char *own_slot(struct gen *g)
{
	const char *x, *n;

	if (g->in_place && g->loops_in == 1) {
		/* now and then another offset: iterations overlap, refused */
		int off = chance(&g->r, 5) ? (int)rnd(&g->r, 4) : g->slot_off;
		const char *k = def(g, T_IDX);

		out(g, "%s = arith.constant %d : index\n", k, off);
		x = def(g, T_IDX);
		out(g, "%s = arith.addi %s, %s : index\n", x, g->slot_iv, k);
		n = def(g, T_IDX);
		out(g, "%s = arith.addi %s, %s : index\n", n, g->base, x);
		g->slot_uses++;
		return n;
	}
	x = masked(g, T_IDX, pick(g, T_IDX), (int)g->c->slots - 1, 0);
	n = def(g, T_IDX);

	out(g, "%s = arith.addi %s, %s : index\n", n, g->base, x);
	return n;
}

static const char *load(struct gen *g)
{
	bool own = chance(&g->r, 25);
	int m = mem_of(g, own, -1);
	const char *at, *n;

	if (m < 0 && (m = mem_of(g, !own, -1)) >= 0)
		own = !own;
	if (m < 0 || (own && !may_access(g, m)))
		return NULL;
	at = own ? own_slot(g) : masked(g, T_IDX, pick(g, T_IDX), IN_LEN - 1, 0);
	n = def(g, g->c->in_type[m]);
	out(g, "%s = memref.load %%a%d[%s] : memref<?x%s>\n", n, m, at,
	    vt_name[g->c->in_type[m]]);
	return n;
}

/* Stores @v (of type @t, or a value of an output memref's type if NULL). */
static void store_value(struct gen *g, const char *v, int t)
{
	int m = mem_of(g, true, t);
	const char *at;

	if (!may_access(g, m))
		return;
	if (!v)
		v = pick(g, g->c->in_type[m]);
	g->slot_stores += g->in_place && g->loops_in == 1;
	at = own_slot(g);
	indent(g);
	out(g, "memref.store %s, %%a%d[%s] : memref<?x%s>\n", v, m, at,
	    vt_name[g->c->in_type[m]]);
	g->ops++;
}

static void store(struct gen *g)
{
	store_value(g, NULL, -1);
}

static void spawn(struct gen *g)
{
	const char *v = pick(g, T_I64);

	indent(g);
	out(g, "dataflow.work.spawn %s : i64\n", v);
	g->spawn_sites++;
	g->loop_spawn |= g->loops_in > 0;
	g->ops++;
}

static void body(struct gen *g, int n);

/* The reduction operations of a type, as iter_args fold them. */
static const char *red_op(struct gen *g, enum vt t)
{
	static const char *const i[] = { "addi", "muli", "andi", "ori", "xori" };
	static const char *const f[] = { "addf", "mulf", "maximumf", "minimumf" };

	return t == T_F32 ? f[rnd(&g->r, 4)] : i[rnd(&g->r, 5)];
}

static const char *bound(struct gen *g, int lo, int hi)
{
	const char *n;

	if (chance(&g->r, 25)) {
		/* an index argument: 0 .. 4 at launch */
		for (int k = 0; k < g->c->nin; k++)
			if (!g->c->is_mem[k] && g->c->in_type[k] == T_IDX &&
			    (int64_t)g->c->args[k] <= 4 && (int64_t)g->c->args[k] >= 0) {
				static char name[16];

				snprintf(name, sizeof(name), "%%a%d", k);
				return add(g, T_IDX, name);
			}
	}
	n = def(g, T_IDX);
	out(g, "%s = arith.constant %d : index\n", n, lo + (int)rnd(&g->r, hi - lo + 1));
	return n;
}

static void loop(struct gen *g)
{
	int nacc = chance(&g->r, 30) ? 0 : 1 + (int)rnd(&g->r, 3), mark;
	const char *lb = bound(g, 0, 1), *ub = bound(g, 0, 5), *st;
	const char *init[3], *acc[3], *red[3];
	enum vt t[3];
	bool chain[3], ind[3];
	char names[3][16], res[3][16], redn[3][16];
	const char *iv;
	char ivn[16];
	int outer = g->np;	/* values the loop does not change: pool[0, outer) */

	if (chance(&g->r, 20)) {	/* a step that is a value: 1 or 2 */
		st = masked(g, T_IDX, pick(g, T_IDX), 1, 1);
		g->c->dynamic_steps++;
	} else {
		st = def(g, T_IDX);
		out(g, "%s = arith.constant %d : index\n", st, 1 + (int)rnd(&g->r, 2));
	}
	for (int k = 0; k < nacc; k++) {
		/* folding the new value of the one before: refused, but for an induction's */
		chain[k] = k && chance(&g->r, g->loops ? 15 : 4);
		t[k] = chain[k] ? t[k - 1] : chance(&g->r, 25) ? T_F32 : int_type(g);
		/* acc = acc +- x, x from outside the loop, acc used anywhere */
		ind[k] = !chain[k] && t[k] != T_F32 && chance(&g->r, 30);
		g->c->inductions += ind[k];
		init[k] = pick(g, t[k]);
	}
	indent(g);
	for (int k = 0; k < nacc; k++) {
		snprintf(res[k], sizeof(res[k]), "%%v%d", g->next++);
		out(g, "%s%s", k ? ", " : "", res[k]);
	}
	snprintf(ivn, sizeof(ivn), "%%j%d", g->next++);
	out(g, "%sscf.for %s = %s to %s step %s", nacc ? " = " : "", ivn, lb, ub, st);
	if (nacc) {
		out(g, " iter_args(");
		for (int k = 0; k < nacc; k++) {
			snprintf(names[k], sizeof(names[k]), "%%c%d", g->next++);
			out(g, "%s%s = %s", k ? ", " : "", names[k], init[k]);
		}
		out(g, ") -> (");
		for (int k = 0; k < nacc; k++)
			out(g, "%s%s", k ? ", " : "", vt_name[t[k]]);
		out(g, ")");
	}
	out(g, " {\n");
	g->ops++;
	mark = g->np;
	if (!g->loops_in) {
		memset(g->loop_acc, 0, sizeof(g->loop_acc));
		/* lb <= 1, ub <= 5, so the iv is at most 4: slots 0 .. 7 */
		g->in_place = g->c->slots == 8 && chance(&g->r, 70);
		g->slot_off = (int)rnd(&g->r, 4);
		g->slot_uses = g->slot_stores = 0;
		snprintf(g->slot_iv, sizeof(g->slot_iv), "%s", ivn);
	}
	g->depth++;
	g->loops_in++;
	iv = add(g, T_IDX, ivn);
	(void)iv;
	for (int k = 0; k < nacc; k++)
		if (ind[k])
			add(g, t[k], names[k]);
	body(g, 2 + (int)rnd(&g->r, 6));
	for (int k = 0; k < nacc; k++) {
		const char *x;

		if (ind[k]) {
			x = pick_outer(g, t[k], outer);
			snprintf(redn[k], sizeof(redn[k]), "%s", def(g, t[k]));
			red[k] = redn[k];
			out(g, "%s = arith.%s %s, %s : %s\n", red[k],
			    chance(&g->r, 50) ? "addi" : "subi", names[k], x,
			    vt_name[t[k]]);
			continue;
		}
		x = chain[k] ? red[k - 1] : pick(g, t[k]);
		if (chance(&g->r, 3)) {
			/* acc used beyond its reduction: refused */
			acc[k] = add(g, t[k], names[k]);
			x = pick(g, t[k]);
		}
		acc[k] = names[k];
		snprintf(redn[k], sizeof(redn[k]), "%s", def(g, t[k]));
		red[k] = redn[k];
		g->np--;	/* used by the yield alone (but for chain[]) */
		if (chance(&g->r, 50))
			out(g, "%s = arith.%s %s, %s : %s\n", red[k], red_op(g, t[k]),
			    acc[k], x, vt_name[t[k]]);
		else
			out(g, "%s = arith.%s %s, %s : %s\n", red[k], red_op(g, t[k]),
			    x, acc[k], vt_name[t[k]]);
	}
	if (nacc) {
		indent(g);
		out(g, "scf.yield ");
		for (int k = 0; k < nacc; k++)
			out(g, "%s%s", k ? ", " : "", red[k]);
		out(g, " : ");
		for (int k = 0; k < nacc; k++)
			out(g, "%s%s", k ? ", " : "", vt_name[t[k]]);
		out(g, "\n");
	}
	g->depth--;
	g->loops_in--;
	if (!g->loops_in) {
		g->c->in_place_loops += g->in_place && g->slot_stores &&
					g->slot_uses > 1;
		g->in_place = false;
	}
	g->np = mark;
	indent(g);
	out(g, "}\n");
	for (int k = 0; k < nacc; k++) {
		add(g, t[k], res[k]);
		if (chance(&g->r, 60))
			store_value(g, res[k], t[k]);
	}
}

/* One branch of an scf.if: a short body, then its yield of @n values. */
static void branch(struct gen *g, int n, const enum vt *t)
{
	int mark = g->np;
	const char *y[2];

	g->depth++;
	body(g, 1 + (int)rnd(&g->r, 4));
	for (int k = 0; k < n; k++)
		y[k] = pick(g, t[k]);
	if (n) {
		indent(g);
		out(g, "scf.yield ");
		for (int k = 0; k < n; k++)
			out(g, "%s%s", k ? ", " : "", y[k]);
		out(g, " : ");
		for (int k = 0; k < n; k++)
			out(g, "%s%s", k ? ", " : "", vt_name[t[k]]);
		out(g, "\n");
	}
	g->depth--;
	g->np = mark;	/* a branch's values stay in it */
}

/*
 * scf.if with 0 to 2 results (an else then, else sometimes).  Accesses
 * and spawns in its branches follow the rules of the loop around the if,
 * if any.
 */
static void if_stmt(struct gen *g)
{
	int n = chance(&g->r, 40) ? 0 : 1 + (int)rnd(&g->r, 2);
	const char *c = pick(g, T_I1);
	char res[2][16];
	enum vt t[2] = { T_I64, T_I64 };	/* only the first n are used */

	for (int k = 0; k < n; k++)
		t[k] = chance(&g->r, 25) ? T_F32 : int_type(g);
	indent(g);
	for (int k = 0; k < n; k++) {
		snprintf(res[k], sizeof(res[k]), "%%v%d", g->next++);
		out(g, "%s%s", k ? ", " : "", res[k]);
	}
	out(g, "%sscf.if %s", n ? " = " : "", c);
	if (n) {
		out(g, " -> (");
		for (int k = 0; k < n; k++)
			out(g, "%s%s", k ? ", " : "", vt_name[t[k]]);
		out(g, ")");
	}
	out(g, " {\n");
	g->ops++;
	branch(g, n, t);
	indent(g);
	if (n || chance(&g->r, 50)) {
		out(g, "} else {\n");
		branch(g, n, t);
		indent(g);
	}
	out(g, "}\n");
	for (int k = 0; k < n; k++) {
		add(g, t[k], res[k]);
		if (chance(&g->r, 50))
			store_value(g, res[k], t[k]);
	}
}

/* One statement of some kind. */
static void statement(struct gen *g)
{
	unsigned k = rnd(&g->r, 100);

	if (!g->depth && g->stmts < g->budget && rnd(&g->r, 100) < g->loops)
		loop(g);
	else if (k < 20)
		int_op(g, int_type(g));
	else if (k < 28)
		f32_op(g);
	else if (k < 34)
		cmp(g);
	else if (k < 42) {
		enum vt t = (enum vt)(1 + rnd(&g->r, 4));
		const char *c = pick(g, T_I1), *a = pick(g, t), *b = pick(g, t);
		const char *n = def(g, t);

		out(g, "%s = arith.select %s, %s, %s : %s\n", n, c, a, b, vt_name[t]);
	} else if (k < 50)
		cast(g, (enum vt)(1 + rnd(&g->r, 4)));
	else if (k < 64)
		load(g);
	else if (k < 74)
		store(g);
	else if (k < 84 && g->depth < 2 && g->stmts < g->budget)
		loop(g);
	else if (k < 90 && g->depth < 3 && g->stmts < g->budget)
		if_stmt(g);
	else if (k < 94 && g->c->dynamic &&
		 (chance(&g->r, 3) || !g->loop_spawn) &&
		 (g->loops_in == 0 || (chance(&g->r, 3) || !g->spawn_sites)))
		spawn(g);
	else
		int_op(g, int_type(g));
}

static void body(struct gen *g, int n)
{
	for (int i = 0; i < n && g->stmts < g->budget + 8; i++) {
		g->stmts++;
		statement(g);
	}
}

/* Fills a memref input's initial contents. */
static void fill(uint64_t *r, struct fcase *c, int k)
{
	unsigned size = c->in_type[k] == T_I64 ? 8 : 4;

	c->init[k] = malloc(c->len[k] * size);
	if (!c->init[k])
		abort();
	for (size_t i = 0; i < c->len[k]; i++) {
		uint64_t v = c->in_type[k] == T_F32 ? interesting_f32(r) :
			     (uint64_t)interesting(r, c->in_type[k]);

		memcpy(c->init[k] + i * size, &v, size);
	}
}

static void signature(struct gen *g)
{
	struct fcase *c = g->c;
	uint64_t *r = &g->r;
	int nmem_in = 1 + (int)rnd(r, 3), nmem_out = 1 + (int)rnd(r, 2);
	int nscal = (int)rnd(r, 4);

	c->dynamic = chance(r, 25);
	c->slots = 1u << (1 + rnd(r, 3));
	if (c->dynamic) {
		c->items = 1 + rnd(r, MAX_ITEMS);
		c->ninst = c->items;
		c->in_type[c->nin++] = T_I64;	/* the work item */
	} else {
		c->rank = (int)rnd(r, 4);	/* 0 .. 3 */
		c->ninst = 1;
		for (int d = 0; d < c->rank; d++) {
			c->ext[d] = 1 + rnd(r, c->rank == 1 ? 12 : 4);
			c->ninst *= (unsigned)c->ext[d];
		}
	}
	for (int i = 0; i < nmem_in + nmem_out; i++) {
		int k = c->nin++;
		static const enum vt et[] = { T_I32, T_I64, T_F32 };

		c->is_mem[k] = true;
		c->is_out[k] = i >= nmem_in;
		c->in_type[k] = et[rnd(r, 3)];
		c->len[k] = c->is_out[k] ? c->ninst * c->slots : IN_LEN;
		fill(r, c, k);
	}
	for (int i = 0; i < nscal; i++) {
		int k = c->nin++;

		c->in_type[k] = (enum vt)(1 + rnd(r, 4));
		c->args[k] = c->in_type[k] == T_F32 ? (uint64_t)(int64_t)(int32_t)interesting_f32(r) :
			     c->in_type[k] == T_IDX && chance(r, 60) ? rnd(r, 5) :
			     (uint64_t)interesting(r, c->in_type[k]);
	}
}

static void header(struct gen *g, uint64_t seed)
{
	struct fcase *c = g->c;

	out(g, "// diff-fuzz seed=0x%016" PRIx64 "\n", seed);
	out(g, "dataflow.thread private @t domain(#dataflow.thread_domain<%s>)(",
	    c->dynamic ? "dynamic_work, work_item_arg = 0" : "dense");
	for (int k = 0; k < c->nin; k++) {
		if (c->is_mem[k])
			out(g, "%s%%a%d: memref<?x%s>", k ? ", " : "", k, vt_name[c->in_type[k]]);
		else
			out(g, "%s%%a%d: %s", k ? ", " : "", k, vt_name[c->in_type[k]]);
	}
	out(g, ") ctrl(%%ctl: none)");
	if (!c->dynamic) {
		out(g, " iv(");
		for (int d = 0; d < c->rank; d++)
			out(g, "%s%%i%d: index", d ? ", " : "", d);
		out(g, ")");
	} else if (chance(&g->r, 50)) {
		out(g, " attributes {loom.child_capacity = %u}", 4 + rnd(&g->r, 13));
	}
	out(g, " {\n");
}

/* base = linear instance number * S */
static void instance_base(struct gen *g)
{
	struct fcase *c = g->c;
	const char *lin, *n, *k;

	if (c->dynamic) {
		lin = def(g, T_IDX);
		out(g, "%s = arith.index_cast %%a0 : i64 to index\n", lin);
	} else if (c->rank == 0) {
		lin = def(g, T_IDX);
		out(g, "%s = arith.constant 0 : index\n", lin);
	} else {
		lin = "%i0";
		for (int d = 1; d < c->rank; d++) {
			k = def(g, T_IDX);
			out(g, "%s = arith.constant %" PRId64 " : index\n", k, c->ext[d]);
			n = def(g, T_IDX);
			out(g, "%s = arith.muli %s, %s : index\n", n, lin, k);
			lin = n;
			n = def(g, T_IDX);
			out(g, "%s = arith.addi %s, %%i%d : index\n", n, lin, d);
			lin = n;
		}
	}
	k = def(g, T_IDX);
	out(g, "%s = arith.constant %u : index\n", k, c->slots);
	n = def(g, T_IDX);
	out(g, "%s = arith.muli %s, %s : index\n", n, lin, k);
	snprintf(g->base, sizeof(g->base), "%s", n);
}

static void ref_free(void);

static void fcase_free(struct fcase *c)
{
	ref_free();
	free(c->text);
	for (int k = 0; k < MAX_IN; k++)
		free(c->init[k]);
	memset(c, 0, sizeof(*c));
}

/*
 * The thread and data of @seed; @size scales its statements, @loops is
 * the percentage of top-level ones that are loops (else one in ten).
 */
static void generate(struct fcase *c, uint64_t seed, int size, unsigned loops)
{
	static struct gen g;
	char n[16];

	memset(c, 0, sizeof(*c));
	memset(&g, 0, sizeof(g));
	g.c = c;
	g.r = seed;
	signature(&g);
	g.budget = 4 + (int)rnd(&g.r, size);
	g.loops = loops;
	header(&g, seed);
	for (int k = 0; k < c->nin; k++) {
		if (c->is_mem[k])
			continue;
		snprintf(n, sizeof(n), "%%a%d", k);
		add(&g, c->in_type[k], n);
	}
	if (c->dynamic)
		add(&g, T_I64, "%a0");
	for (int d = 0; d < c->rank; d++) {
		snprintf(n, sizeof(n), "%%i%d", d);
		add(&g, T_IDX, n);
	}
	instance_base(&g);
	body(&g, g.budget);
	store(&g);	/* at least one effect */
	if (c->dynamic && !g.spawn_sites && chance(&g.r, 70))
		spawn(&g);
	out(&g, "  dataflow.thread.yield %%ctl : none\n}\n");
}

/* ------------------------------------------------------------ running --- */

struct stats {
	unsigned long lines, max_lines;
	unsigned threads, compiles, mapped, refused, unfit, unrouted,
		 unsupported, undeadlockable, mismatches, deadlocks, other,
		 no_reference, in_place_mapped, induction_mapped,
		 dynamic_step_mapped, channels_mapped;
	double fab_secs[17][17];
	unsigned fab_n[17][17];
	double fab_max[17][17];
	double slowest;		/* the slowest compile: its time, seed, fabric, verdict */
	uint64_t slowest_seed;
	unsigned slowest_w, slowest_h;
	bool slowest_mapped;
};

static struct stats st;
static const char *out_dir;
static bool dump;	/* --dump: print every thread */

#define MEM_VA(k)	(ER_DATA_VA + (uint64_t)(k) * 0x8000)
#define ITEMS_VA	(ER_DATA_VA + 0x60000)
#define RESULTS_VA	(ER_DATA_VA + 0x70000)

/* Whether the thread of @e's image has a configuration of link channels. */
static bool uses_link_channels(const struct er *e)
{
	struct loom_image_thread t = loom_view_thread(&e->view, 0);
	struct loom_fabric_config h;

	if (t.config_size < sizeof(h))
		return false;
	memcpy(&h, e->view.sec[LOOM_SEC_CONFIGS] + t.config_offset, sizeof(h));
	return h.version == LOOM_CONFIG_VERSION_CHANNELS;
}

static unsigned elem_size(enum vt t)
{
	return t == T_I64 ? 8 : 4;
}

/**
 * struct ref - what the interpreter computed
 * @mem: per memref input, its final contents
 * @nchild: per item, its children
 * @child: per item, the payloads
 */
struct ref {
	uint8_t *mem[MAX_IN];
	unsigned nchild[MAX_ITEMS];
	uint64_t child[MAX_ITEMS][4096];
};

static struct ref ref;

static void ref_free(void)
{
	for (int k = 0; k < MAX_IN; k++) {
		free(ref.mem[k]);
		ref.mem[k] = NULL;
	}
}

/* Runs the interpreter; 0, or -1 with the reason in @why. */
static int reference(struct fcase *c, char *why, size_t n)
{
	struct front f;
	struct ii_buf bufs[MAX_IN] = { 0 };
	static struct ii_run r;
	int ret = 0;

	if (front_verify(&f, c->text)) {
		snprintf(why, n, "does not verify: %s", front_diag(&f, 0)->msg);
		front_close(&f);
		return -1;
	}
	ref_free();
	for (int k = 0; k < c->nin; k++) {
		if (!c->is_mem[k])
			continue;
		ref.mem[k] = malloc(c->len[k] * elem_size(c->in_type[k]));
		memcpy(ref.mem[k], c->init[k], c->len[k] * elem_size(c->in_type[k]));
		bufs[k] = (struct ii_buf){ ref.mem[k], c->len[k] };
	}
	memset(&r, 0, sizeof(r));
	r.f = f.m->funcs;
	r.args = c->args;
	r.bufs = bufs;
	if (!c->dynamic) {
		ret = ii_dense(&r, c->ext);
	} else {
		for (unsigned i = 0; i < c->items && !ret; i++) {
			r.children = ref.child[i];
			r.child_cap = 4096;
			ret = ii_item(&r, i);
			ref.nchild[i] = r.num_children;
		}
	}
	if (ret)
		snprintf(why, n, "%s", r.err);
	front_close(&f);
	return ret;
}

static void report(struct fcase *c, uint64_t seed, unsigned w, unsigned h,
		   const char *what)
{
	char path[512];
	FILE *fp;

	printf("#   FAIL seed 0x%016" PRIx64 " fabric %ux%u: %s\n", seed, w, h, what);
	snprintf(path, sizeof(path), "%s/diff-fuzz-%016" PRIx64 ".loom", out_dir, seed);
	fp = fopen(path, "w");
	if (fp) {
		fputs(c->text, fp);
		fclose(fp);
		printf("#   thread written to %s (replay: diff_fuzz_test --replay %s --fabric %ux%u)\n",
		       path, path, w, h);
	}
	printf("%s", c->text);
}

static bool refusal(const char *msg)
{
	if (strstr(msg, "does not fit")) {
		st.unfit++;
		return true;
	}
	if (strstr(msg, "cannot route") || strstr(msg, "cannot place")) {
		st.unrouted++;
		return true;
	}
	if (strstr(msg, "could deadlock")) {
		st.undeadlockable++;
		return true;
	}
	if (strstr(msg, "not supported yet") ||
	    strstr(msg, "loom.child_capacity must be")) {
		st.unsupported++;
		return true;
	}
	return false;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Compiles and runs @c on a @w x @h fabric; false on a failure. */
static bool run_on(struct fcase *c, uint64_t seed, unsigned w, unsigned h)
{
	uint64_t va_args[MAX_IN];
	char *msg = NULL, what[256];
	size_t msg_len = 0;
	FILE *diag = open_memstream(&msg, &msg_len);
	struct er e;
	double t0 = now(), dt;
	int status, bad = 0;
	bool ok = true, overflow = false;
	unsigned cap = 0;

	st.compiles++;
	status = er_open_diag(&e, c->text, w, h, diag);
	fclose(diag);
	dt = now() - t0;
	st.fab_secs[w][h] += dt;
	st.fab_n[w][h]++;
	if (dt > st.fab_max[w][h])
		st.fab_max[w][h] = dt;
	if (dt > st.slowest) {
		st.slowest = dt;
		st.slowest_seed = seed;
		st.slowest_w = w;
		st.slowest_h = h;
		st.slowest_mapped = !status;
	}
	if (dump)
		printf("# %ux%u: %s in %.2f s\n", w, h, status ? "refused" : "mapped", dt);
	if (status) {
		if (e.errors && refusal(msg)) {
			st.refused++;
			if (dump)
				printf("# %ux%u %.*s\n", w, h, (int)strcspn(msg, "\n"), msg);
		} else {
			st.other++;
			snprintf(what, sizeof(what), "compile failed: %.200s", msg ? msg : "");
			report(c, seed, w, h, what);
			ok = false;
		}
		free(msg);
		er_close(&e);
		return ok;
	}
	free(msg);
	st.mapped++;
	st.in_place_mapped += c->in_place_loops > 0;
	st.induction_mapped += c->inductions > 0;
	st.dynamic_step_mapped += c->dynamic_steps > 0;
	st.channels_mapped += uses_link_channels(&e);
	for (int k = 0; k < c->nin; k++) {
		va_args[k] = c->is_mem[k] ? MEM_VA(k) : c->args[k];
		if (c->is_mem[k])
			fake_bus_poke(&e.bus, MEM_VA(k), c->init[k],
				      c->len[k] * elem_size(c->in_type[k]));
	}
	if (c->dynamic) {
		int64_t items[MAX_ITEMS];

		cap = loom_view_thread(&e.view, 0).child_capacity;
		for (unsigned i = 0; i < c->items; i++) {
			items[i] = i;
			overflow |= ref.nchild[i] > cap;
		}
		er_poke64(&e, ITEMS_VA, items, c->items);
		status = er_launch(&e, "t", va_args, NULL, c->items, ITEMS_VA, RESULTS_VA);
	} else {
		status = er_launch(&e, "t", va_args, c->ext, 0, 0, 0);
	}
	if (status == LOOM_STATUS_DEADLOCK) {
		st.deadlocks++;
		report(c, seed, w, h, "DEADLOCK");
		er_close(&e);
		return false;
	}
	if (overflow) {
		if (status != LOOM_STATUS_CHILD_OVERFLOW) {
			st.mismatches++;
			snprintf(what, sizeof(what), "status %d, expected CHILD_OVERFLOW", status);
			report(c, seed, w, h, what);
			ok = false;
		}
		er_close(&e);
		return ok;
	}
	if (status != LOOM_STATUS_OK) {
		st.other++;
		snprintf(what, sizeof(what), "job status %d", status);
		report(c, seed, w, h, what);
		er_close(&e);
		return false;
	}
	for (int k = 0; k < c->nin && !bad; k++) {
		unsigned sz = elem_size(c->in_type[k]);
		uint8_t *got;

		if (!c->is_mem[k])
			continue;
		got = malloc(c->len[k] * sz);
		fake_bus_peek(&e.bus, MEM_VA(k), got, c->len[k] * sz);
		for (size_t i = 0; i < c->len[k] && !bad; i++) {
			uint64_t a = 0, b = 0;

			memcpy(&a, ref.mem[k] + i * sz, sz);
			memcpy(&b, got + i * sz, sz);
			if (a != b) {
				snprintf(what, sizeof(what),
					 "%%a%d[%zu] = 0x%" PRIx64 ", the IR says 0x%" PRIx64,
					 k, i, b, a);
				bad = 1;
			}
		}
		free(got);
	}
	for (unsigned i = 0; c->dynamic && i < c->items && !bad; i++) {
		uint64_t at = RESULTS_VA + i * LOOM_ITEM_RESULT_SIZE(cap), v;
		uint32_t count;

		fake_bus_peek(&e.bus, at, &count, 4);
		if (count != ref.nchild[i]) {
			snprintf(what, sizeof(what), "item %u: %u children, the IR says %u",
				 i, count, ref.nchild[i]);
			bad = 1;
		}
		for (unsigned j = 0; j < count && !bad; j++) {
			fake_bus_peek(&e.bus, at + 8 + 8 * j, &v, 8);
			if (v != ref.child[i][j]) {
				snprintf(what, sizeof(what),
					 "item %u child %u = 0x%" PRIx64 ", the IR says 0x%" PRIx64,
					 i, j, v, ref.child[i][j]);
				bad = 1;
			}
		}
	}
	if (bad) {
		st.mismatches++;
		report(c, seed, w, h, what);
	}
	er_close(&e);
	return !bad;
}

/* Every fabric from 2x2 to 16x16. */
static void all_fabric(uint64_t *r, unsigned *w, unsigned *h)
{
	*w = 2 + rnd(r, 15);
	*h = 2 + rnd(r, 15);
}

/* make test's slice: square, small and thin fabrics. */
static const unsigned quick[][2] = {
	{ 4, 4 }, { 8, 8 }, { 3, 5 }, { 6, 6 }, { 2, 2 }, { 16, 16 },
	{ 2, 8 }, { 16, 4 },
};

/* One thread on @nfab fabrics; false on a failure. */
static bool one(uint64_t seed, int size, unsigned loops, int nfab, bool all,
		const unsigned (*fixed)[2])
{
	struct fcase c;
	char why[256];
	uint64_t r = seed ^ 0x5bd1e995;
	bool ok = true;

	generate(&c, seed, size, loops);
	st.threads++;
	if (dump)
		printf("%s", c.text);
	{
		unsigned long n = 0;

		for (const char *p = c.text; *p; p++)
			n += *p == '\n';
		st.lines += n;
		if (n > st.max_lines)
			st.max_lines = n;
	}
	if (reference(&c, why, sizeof(why))) {
		if (strncmp(why, "does not verify", 15) == 0) {
			st.other++;
			report(&c, seed, 0, 0, why);
			ok = false;
		} else {
			st.no_reference++;	/* the IR leaves it undefined */
		}
		fcase_free(&c);
		return ok;
	}
	for (int i = 0; i < nfab; i++) {
		unsigned w, h;

		if (fixed) {
			w = fixed[i][0];
			h = fixed[i][1];
		} else if (all) {
			all_fabric(&r, &w, &h);
		} else {
			unsigned q = rnd(&r, sizeof(quick) / sizeof(quick[0]));

			w = quick[q][0];
			h = quick[q][1];
		}
		ok &= run_on(&c, seed, w, h);
	}
	fcase_free(&c);
	return ok;
}

static void summary(double secs)
{
	printf("# %u threads, %u compiles, %u mapped, %u refused (%u do not fit, %u cannot route, %u could deadlock, %u unsupported), "
	       "%u mismatches, %u deadlocks, %u other failures, %u without a reference, %.1f s\n",
	       st.threads, st.compiles, st.mapped, st.refused, st.unfit, st.unrouted,
	       st.undeadlockable, st.unsupported, st.mismatches, st.deadlocks,
	       st.other, st.no_reference, secs);
	if (st.threads)
		printf("# threads of %lu lines on average, %lu at most; mapped with a loop updating its slots in place %u, with an induction iter_arg %u, with a dynamic step %u, with link channels %u\n",
		       st.lines / st.threads, st.max_lines, st.in_place_mapped,
		       st.induction_mapped, st.dynamic_step_mapped,
		       st.channels_mapped);
}

static void fabric_times(void)
{
	if (st.slowest > 0)
		printf("# slowest compile: seed 0x%016" PRIx64 " on %ux%u, %s in %.2f s\n",
		       st.slowest_seed, st.slowest_w, st.slowest_h,
		       st.slowest_mapped ? "mapped" : "refused", st.slowest);
	printf("# place and route per fabric (mean / max s, over compiles), slowest first:\n");
	for (int n = 0; n < 12; n++) {
		double best = 0.05;
		int bw = 0, bh = 0;

		for (int w = 2; w <= 16; w++)
			for (int h = 2; h <= 16; h++)
				if (st.fab_n[w][h] && st.fab_secs[w][h] / st.fab_n[w][h] > best) {
					best = st.fab_secs[w][h] / st.fab_n[w][h];
					bw = w;
					bh = h;
				}
		if (!bw)
			break;
		printf("#   %2dx%-2d %6.2f / %6.2f s over %u\n", bw, bh, best,
		       st.fab_max[bw][bh], st.fab_n[bw][bh]);
		st.fab_secs[bw][bh] = 0;
	}
}

/* ------------------------------------------------------------- modes --- */

static uint64_t seed_of(const char *text)
{
	const char *at = strstr(text, "diff-fuzz seed=");

	return at ? strtoull(at + 15, NULL, 0) : 0;
}

/* Replays @path (the data of its seed) on @w x @h, or on the quick list. */
static bool replay(const char *path, unsigned w, unsigned h)
{
	struct loom_source src;
	struct fcase c;
	char why[256];
	uint64_t seed;
	bool ok = true;

	if (loom_source_read(&src, path)) {
		printf("#   cannot read %s\n", path);
		return false;
	}
	seed = seed_of(src.text);
	generate(&c, seed, 40, 0);
	free(c.text);
	c.text = malloc(src.len + 1);
	memcpy(c.text, src.text, src.len);
	c.text[src.len] = 0;
	loom_source_free(&src);
	if (reference(&c, why, sizeof(why))) {
		printf("#   %s: no reference: %s\n", path, why);
		fcase_free(&c);
		return false;
	}
	for (size_t i = 0; i < sizeof(quick) / sizeof(quick[0]); i++) {
		unsigned fw = w ? w : quick[i][0], fh = h ? h : quick[i][1];

		ok &= run_on(&c, seed, fw, fh);
		if (w)
			break;
	}
	fcase_free(&c);
	return ok;
}

/* compiler/tests/corpus/fuzz/: threads the fuzzer once found wrong. */
TEST(corpus_fuzz_replays)
{
	char base[512], path[1024];
	const char *slash = strrchr(__FILE__, '/');
	struct dirent *de;
	DIR *d;

	snprintf(base, sizeof(base), "%.*scorpus/fuzz",
		 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
	d = opendir(base);
	REQUIRE(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 5 || strcmp(de->d_name + n - 5, ".loom"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, de->d_name);
		CHECK(replay(path, 0, 0));
	}
	closedir(d);
}

/*
 * The fixed-seed slice: small threads on the quick fabrics, then a few
 * large ones (long chains, nested loops) on 8x8 and 16x16.
 */
TEST(fixed_seed_slice)
{
	static const unsigned big[][2] = { { 8, 8 }, { 16, 16 } };
	double t0 = now();
	unsigned fails = 0;

	for (uint64_t i = 0; i < 30; i++)
		fails += !one(0x5eed0000 + i, 8, 0, 2, false, NULL);
	for (uint64_t i = 0; i < 10; i++)
		fails += !one(0x100b5 + i, 6, 50, 1, false, big);
	for (uint64_t i = 0; i < 4; i++)
		fails += !one(0xb16b00b5 + i, 20, 0, 2, false, big);
	summary(now() - t0);
	CHECK_EQ(0, fails);
	CHECK_EQ(0, st.mismatches + st.deadlocks + st.other);
	CHECK(st.mapped >= st.compiles / 2);
	CHECK(st.in_place_mapped > 0);
	CHECK(st.induction_mapped > 0);
	CHECK(st.dynamic_step_mapped > 0);
}

/* The long run's thread sizes and loop share, from each thread's seed. */
#define LONG_SIZE(s)	(4 + (int)((s) % 28))
#define LONG_LOOPS(s)	((s) % 4 ? 0 : 40)

static bool long_run(double seconds, uint64_t seed, bool all)
{
	double t0 = now(), last = t0;
	unsigned fails = 0;
	uint64_t r = seed;

	printf("# diff-fuzz: %.0f s from seed 0x%" PRIx64 ", %s fabrics, failures to %s\n",
	       seconds, seed, all ? "all" : "the quick", out_dir);
	fflush(stdout);
	while (now() - t0 < seconds) {
		uint64_t s = rng_next(&r);

		fails += !one(s, LONG_SIZE(s), LONG_LOOPS(s), 3, all, NULL);
		if (now() - last >= 60) {
			summary(now() - t0);
			fflush(stdout);
			last = now();
		}
	}
	summary(now() - t0);
	fabric_times();
	return fails == 0;
}

int main(int argc, char **argv)
{
	const char *env_s = getenv("LOOM_FUZZ_SECONDS"), *env_seed = getenv("LOOM_FUZZ_SEED");
	double seconds = env_s ? atof(env_s) : 0;
	uint64_t seed = env_seed ? strtoull(env_seed, NULL, 0) : 1;
	const char *replay_path = NULL;
	uint64_t one_seed = 0;
	unsigned fw = 0, fh = 0;
	bool all = false;

	out_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--seconds") && v)
			seconds = atof(argv[++i]);
		else if (!strcmp(a, "--seed") && v)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--out") && v)
			out_dir = argv[++i];
		else if (!strcmp(a, "--replay") && v)
			replay_path = argv[++i];
		else if (!strcmp(a, "--fabric") && v && sscanf(argv[++i], "%ux%u", &fw, &fh) == 2)
			;
		else if (!strcmp(a, "--thread") && v)
			one_seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--dump"))
			dump = true;
		else if (!strcmp(a, "--fabrics") && v)
			all = !strcmp(argv[++i], "all");
		else {
			fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--fabrics all|quick] [--out DIR] [--dump] "
				"| --replay FILE [--fabric WxH] | --thread SEED [--fabric WxH]\n", argv[0]);
			return 2;
		}
	}
	if (one_seed) {
		/* the long run's thread of that seed, printed, on one fabric */
		unsigned fab[1][2] = { { fw ? fw : 8, fh ? fh : 8 } };
		bool ok;

		dump = true;
		ok = one(one_seed, LONG_SIZE(one_seed), LONG_LOOPS(one_seed), 1,
			 false, (const unsigned (*)[2])fab);
		summary(0);
		printf("%d passed, %d failed\n", ok, !ok);
		return ok ? 0 : 1;
	}
	if (replay_path) {
		bool ok = replay(replay_path, fw, fh);

		summary(0);
		printf("%d passed, %d failed\n", ok, !ok);
		return ok ? 0 : 1;
	}
	RUN(corpus_fuzz_replays);
	if (seconds > 0) {
		bool ok = long_run(seconds, seed, all);

		if (ok)
			check_tests_passed++;
		else
			check_tests_failed++;
		printf("%s %d - long run\n", ok ? "ok" : "not ok",
		       check_tests_passed + check_tests_failed);
	} else {
		RUN(fixed_seed_slice);
		fabric_times();
	}
	return checks_done();
}
