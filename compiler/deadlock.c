// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * deadlock.c: the proof that a configuration cannot deadlock.
 *
 * It reads the configuration back, as the device will, into values: a
 * value is a slot's output or an input port, and each PE input a slot
 * consumes is traced through the switches to the one value feeding it.
 * Then, with every buffer holding at least one token:
 *
 *  1. Routes: every consumed input is fed, nothing feeds an input its
 *     operation does not consume, every link written is read (or leaves
 *     through the completion port), every slot output and input port is
 *     read, and a link is set in one slot only (with link channels: a
 *     link between tiles may be set in several, channel k in slot k, each
 *     channel its own buffer).  Otherwise tokens pile up
 *     where no one takes them.
 *  2. The values form an acyclic graph.
 *  3. Rates: a port gives one token per instance (context 0).  STREAM and
 *     INVARIANT turn tokens of context c into tokens of the loop context
 *     (c, count), where count names the value of their count (the same
 *     node, immediate, operand, or port kind and index: the bindings of
 *     one port at several edge positions give the same tokens); REDUCE
 *     takes init and count in c and folds values of (c, count); every
 *     other operation takes all its inputs in one context and gives its
 *     result in it.  So each input of a firing belongs to the same
 *     instance and iteration.
 *  4. No loop waits on itself: the values of one loop context that meet
 *     at some operation form a loop (two loops of one count, one after
 *     the other, are two), and nothing its STREAMs, INVARIANTs or REDUCEs
 *     take before they run (their inputs, REDUCE's init and count)
 *     depends on one of its REDUCEs.
 *
 * Why that suffices: order the events (a firing for one instance and
 * iteration) by instance, then by a topological order that puts each
 * loop's inputs before its reductions (4 makes one exist), then by
 * iteration.  Each PE handles its events in that order, and every token
 * goes from an event to a later one (3).  Take the first event that has
 * not happened: its producers' events have, so its input tokens exist;
 * every token ahead of them on their paths, and every token in the other
 * branches of their forks, was made earlier and is consumed by an event
 * earlier still, which has happened: those buffers are empty, the tokens
 * can move and the PE's output has room.  So some event can always
 * happen until all have; a temporal PE fires one of its ready slots each
 * cycle, memory ports are granted to some ready PE, and a link of
 * channels moves a token of one of the ready sources that share it, which
 * take turns (uapi "Link channels"), so the engine cannot stop either.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadlock.h"

#define NO_VALUE	(-1)

/* Count identities: what a loop's count is. */
enum count_kind {
	COUNT_IMM = 1,		/* an immediate (IMM_B or a CONST) */
	COUNT_OPERAND,		/* a launch operand (port or CONST of it) */
	COUNT_VALUE,		/* a value, by number */
	COUNT_PORT,		/* another input port, by kind and index */
};

struct loop_ctx {
	int parent;
	int kind;
	uint64_t val;
};

struct dl {
	const struct placement *p;
	int ntiles, nslots;		/* nslots: tiles * slots */
	int nvalues;			/* slots, then ports */
	int (*src)[3];			/* slot input k: value, or NO_VALUE */
	bool *read;			/* value: some route reads it */
	int *ctx;			/* value: its rate context, -1 unknown */
	int *order;			/* slots in topological order */
	struct loop_ctx *ctxs;
	int nctx;
	char *why;
	size_t n;
};

static int fail(struct dl *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, d->n, fmt, ap);
	va_end(ap);
	return -1;
}

static const struct loom_tile_config *cfg(const struct dl *d, int s)
{
	return &d->p->tiles[s];
}

static int tile_x(const struct dl *d, int s)
{
	return s / d->p->slots % d->p->width;
}

static int tile_y(const struct dl *d, int s)
{
	return s / d->p->slots / d->p->width;
}

#define AT(d, s)	tile_x(d, s), tile_y(d, s), (s) % (d)->p->slots

/* Inputs @tc's operation consumes, as a mask; REDUCE's C and JOIN's C too. */
static unsigned consumed(const struct loom_tile_config *tc)
{
	unsigned m = (1U << loom_op_inputs(tc->op)) - 1;

	if (tc->op == LOOM_OP_JOIN && tc->route[LOOM_OUT_PE_C] != LOOM_SRC_NONE)
		m = 7;
	if (tc->flags & LOOM_TILE_IMM_B)
		m &= ~2U;
	return m;
}

static bool produces(unsigned op)
{
	return op != LOOM_OP_NOP && op != LOOM_OP_SINK;
}

/* The neighbour of tile @t in direction @dir, or -1 past the edge. */
static int neighbour(const struct dl *d, int t, unsigned dir)
{
	int w = d->p->width, h = d->p->height, x = t % w, y = t / w;

	switch (dir) {
	case LOOM_DIR_N: return y > 0 ? t - w : -1;
	case LOOM_DIR_S: return y < h - 1 ? t + w : -1;
	case LOOM_DIR_W: return x > 0 ? t - 1 : -1;
	default: return x < w - 1 ? t + 1 : -1;
	}
}

/* The port bound where tile @t's link in direction @dir crosses the edge. */
static int edge_port(const struct dl *d, int t, unsigned dir)
{
	unsigned pos = dir == LOOM_DIR_N || dir == LOOM_DIR_S ?
		       t % d->p->width : t / d->p->width;

	for (unsigned i = 0; i < d->p->num_ports; i++)
		if (d->p->ports[i].side == dir && d->p->ports[i].pos == pos)
			return i;
	return -1;
}

/* The slot of tile @t that sets its link output @dir, or -1 (-2: two do). */
static int link_slot(const struct dl *d, int t, unsigned dir)
{
	int found = -1;

	for (unsigned k = 0; k < d->p->slots; k++) {
		if (cfg(d, t * d->p->slots + k)->route[dir] == LOOM_SRC_NONE)
			continue;
		if (found >= 0)
			return -2;
		found = k;
	}
	return found;
}

/*
 * The incoming link route source @src reads, as its direction in *@from
 * and channel in *@ch; false if @src is no link (or a channel the
 * configuration does not have).  LOOM_SRC_N..W are channel 0.
 */
static bool link_src(const struct dl *d, unsigned src, unsigned *from,
		     unsigned *ch)
{
	if (src >= LOOM_SRC_N && src <= LOOM_SRC_W) {
		*from = src - LOOM_SRC_N;
		*ch = 0;
		return true;
	}
	if (!d->p->channels || !LOOM_SRC_IS_CHAN(src) ||
	    LOOM_SRC_CHAN_INDEX(src) >= d->p->slots)
		return false;
	*from = LOOM_SRC_CHAN_DIR(src);
	*ch = LOOM_SRC_CHAN_INDEX(src);
	return true;
}

/*
 * The slot of tile @t that sets channel @ch of its link @dir: slot @ch
 * with link channels, else the one slot that sets it; -1 if none (-2: two
 * slots set a link of one channel).
 */
static int feeding_slot(const struct dl *d, int t, unsigned dir, unsigned ch)
{
	if (!d->p->channels)
		return link_slot(d, t, dir);
	return cfg(d, t * d->p->slots + ch)->route[dir] == LOOM_SRC_NONE ?
	       -1 : (int)ch;
}

/*
 * The value route source @src of slot @k of tile @t carries, following
 * links back; marks what it reads.  NO_VALUE with d->why set if none.
 */
static int trace(struct dl *d, int t, unsigned k, unsigned src)
{
	for (int hops = 0; hops <= d->ntiles * 4 * LOOM_PE_SLOTS; hops++) {
		unsigned from, ch;
		int u, j;

		if (src == LOOM_SRC_PE)
			return t * d->p->slots + k;
		if (src >= LOOM_SRC_SLOT0 && d->p->slots > 1 &&
		    src < LOOM_SRC_SLOT(d->p->slots))
			return t * d->p->slots + (src - LOOM_SRC_SLOT0);
		if (!link_src(d, src, &from, &ch)) {
			fail(d, "tile (%d,%d) slot %u reads source %u, which does not exist",
			     t % d->p->width, t / d->p->width, k, src);
			return NO_VALUE;
		}
		u = neighbour(d, t, from);
		if (u < 0) {
			j = edge_port(d, t, from);
			if (ch) {
				fail(d, "tile (%d,%d) reads channel %u of the edge %c, where a port has channel 0 only",
				     t % d->p->width, t / d->p->width, ch,
				     "NESW"[from]);
				return NO_VALUE;
			}
			if (j < 0 || d->p->ports[j].kind == LOOM_PORT_COMPLETION) {
				fail(d, "tile (%d,%d) reads the edge %c, where no input port is bound",
				     t % d->p->width, t / d->p->width, "NESW"[from]);
				return NO_VALUE;
			}
			return d->nslots + j;
		}
		j = feeding_slot(d, u, (from + 2) % 4, ch);
		if (j < 0) {
			fail(d, "tile (%d,%d) reads its %c link, which tile (%d,%d) %s",
			     t % d->p->width, t / d->p->width, "NESW"[from],
			     u % d->p->width, u / d->p->width,
			     j == -1 ? "does not feed" : "sets in two slots");
			return NO_VALUE;
		}
		t = u;
		k = j;
		src = cfg(d, t * d->p->slots + k)->route[(from + 2) % 4];
	}
	fail(d, "a route loops through the links");
	return NO_VALUE;
}

/* The flag of link @dir of tile @t, channel @ch, in check_routes(). */
#define LINK_READ(t, dir, ch)	(((t) * 4 + (dir)) * LOOM_PE_SLOTS + (ch))

/* Marks the value or link a route entry reads. */
static void mark_read(struct dl *d, bool *link_read, int t, unsigned k,
		      unsigned src)
{
	unsigned from, ch;

	if (src == LOOM_SRC_PE)
		d->read[t * d->p->slots + k] = true;
	else if (src >= LOOM_SRC_SLOT0 && src < LOOM_SRC_SLOT(d->p->slots))
		d->read[t * d->p->slots + (src - LOOM_SRC_SLOT0)] = true;
	else if (link_src(d, src, &from, &ch)) {
		int u = neighbour(d, t, from), j;

		if (u >= 0)
			link_read[LINK_READ(u, (from + 2) % 4, ch)] = true;
		else if (!ch && (j = edge_port(d, t, from)) >= 0)
			d->read[d->nslots + j] = true;
	}
}

/*
 * Whether what tile @t writes on its link @dir is taken: read by the
 * neighbour (each channel that is set), or by the completion port.
 */
static int check_link_written(struct dl *d, const bool *link_read, int t,
			      unsigned dir)
{
	int j = link_slot(d, t, dir), port;
	bool edge = neighbour(d, t, dir) < 0;

	if (j == -2 && (!d->p->channels || edge))
		return fail(d, "tile (%d,%d): link %c is set in two slots",
			    t % d->p->width, t / d->p->width, "NESW"[dir]);
	port = edge ? edge_port(d, t, dir) : -1;
	if (j == -1 || (port >= 0 &&
			d->p->ports[port].kind == LOOM_PORT_COMPLETION))
		return 0;
	for (unsigned k = 0; k < d->p->slots; k++) {
		unsigned ch = d->p->channels ? k : 0;

		if (cfg(d, t * d->p->slots + k)->route[dir] == LOOM_SRC_NONE ||
		    (!edge && link_read[LINK_READ(t, dir, ch)]))
			continue;
		return fail(d, "tile (%d,%d): link %c%s is written and never read",
			    t % d->p->width, t / d->p->width, "NESW"[dir],
			    d->p->channels ? " (a channel)" : "");
	}
	return 0;
}

/* 1: routes: inputs fed and consumed, links and values read. */
static int check_routes(struct dl *d)
{
	bool *link_read = calloc(d->ntiles * 4 * LOOM_PE_SLOTS + 1,
				 sizeof(bool));
	int rc = 0;

	if (!link_read)
		abort();
	for (int s = 0; s < d->nslots; s++)
		for (int o = 0; o < LOOM_ROUTE_OUTS; o++)
			if (cfg(d, s)->route[o] != LOOM_SRC_NONE)
				mark_read(d, link_read, s / d->p->slots,
					  s % d->p->slots, cfg(d, s)->route[o]);
	for (int s = 0; s < d->nslots && !rc; s++) {
		const struct loom_tile_config *tc = cfg(d, s);
		unsigned need = consumed(tc);

		for (int k = 0; k < 3 && !rc; k++) {
			unsigned r = tc->route[LOOM_OUT_PE_A + k];

			d->src[s][k] = NO_VALUE;
			if (!(need & (1U << k)) && r != LOOM_SRC_NONE)
				rc = fail(d, "(%d,%d).%d %s: input %c is fed but never consumed",
					  AT(d, s), loom_op_name(tc->op), "ABC"[k]);
			else if ((need & (1U << k)) && r == LOOM_SRC_NONE)
				rc = fail(d, "(%d,%d).%d %s: input %c is never fed",
					  AT(d, s), loom_op_name(tc->op), "ABC"[k]);
			else if (need & (1U << k)) {
				d->src[s][k] = trace(d, s / d->p->slots,
						     s % d->p->slots, r);
				if (d->src[s][k] == NO_VALUE)
					rc = -1;
			}
		}
		if (!rc && produces(tc->op) && !d->read[s])
			rc = fail(d, "(%d,%d).%d %s: its results are never read",
				  AT(d, s), loom_op_name(tc->op));
	}
	for (int t = 0; t < d->ntiles && !rc; t++)
		for (unsigned dir = 0; dir < 4 && !rc; dir++)
			rc = check_link_written(d, link_read, t, dir);
	for (unsigned i = 0; i < d->p->num_ports && !rc; i++)
		if (d->p->ports[i].kind != LOOM_PORT_COMPLETION &&
		    !d->read[d->nslots + i])
			rc = fail(d, "port %c%u (%s %u) is never read",
				  "NESW"[d->p->ports[i].side % 4], d->p->ports[i].pos,
				  loom_port_kind_name(d->p->ports[i].kind),
				  d->p->ports[i].index);
	free(link_read);
	return rc;
}

/* 2: the slots in topological order of their values; -1 on a cycle. */
static int sort_slots(struct dl *d)
{
	int *pending = calloc(d->nslots + 1, sizeof(int)), n = 0, done = 0;

	if (!pending)
		abort();
	for (int s = 0; s < d->nslots; s++)
		for (int k = 0; k < 3; k++)
			pending[s] += d->src[s][k] >= 0 && d->src[s][k] < d->nslots;
	for (int s = 0; s < d->nslots; s++)
		if (cfg(d, s)->op != LOOM_OP_NOP && !pending[s])
			d->order[n++] = s;
	while (done < n) {
		int v = d->order[done++];

		for (int s = 0; s < d->nslots; s++)
			for (int k = 0; k < 3; k++)
				if (d->src[s][k] == v && --pending[s] == 0)
					d->order[n++] = s;
	}
	free(pending);
	return n;
}

/* The identity of the count value @v (MOVs looked through). */
static void count_id(const struct dl *d, int v, int *kind, uint64_t *val)
{
	while (v < d->nslots && cfg(d, v)->op == LOOM_OP_MOV &&
	       cfg(d, v)->type == LOOM_TYPE_I64)
		v = d->src[v][0];
	if (v >= d->nslots) {
		const struct loom_port_binding *b = &d->p->ports[v - d->nslots];

		/*
		 * A port may be bound at several edge positions: each
		 * binding of one kind and index gives the same tokens.
		 */
		*kind = b->kind == LOOM_PORT_OPERAND ? COUNT_OPERAND : COUNT_PORT;
		*val = b->kind == LOOM_PORT_OPERAND ? 2 * (uint64_t)b->index :
		       (uint64_t)b->kind << 8 | b->index;
		return;
	}
	if (cfg(d, v)->op == LOOM_OP_CONST) {
		const struct loom_tile_config *tc = cfg(d, v);
		bool i32 = tc->type == LOOM_TYPE_I32;

		if (tc->flags & LOOM_TILE_IMM_OPERAND) {
			*kind = COUNT_OPERAND;
			*val = 2 * tc->imm + i32;
		} else {
			*kind = COUNT_IMM;
			*val = i32 ? (uint64_t)(int64_t)(int32_t)tc->imm : tc->imm;
		}
		return;
	}
	*kind = COUNT_VALUE;
	*val = (uint64_t)v;
}

/* The loop context inside @parent whose count is (@kind, @val). */
static int loop_ctx(struct dl *d, int parent, int kind, uint64_t val)
{
	for (int c = 1; c < d->nctx; c++)
		if (d->ctxs[c].parent == parent && d->ctxs[c].kind == kind &&
		    d->ctxs[c].val == val)
			return c;
	d->ctxs[d->nctx] = (struct loop_ctx){ parent, kind, val };
	return d->nctx++;
}

/* The loop context slot @s's count makes of its inputs' context @c. */
static int count_ctx(struct dl *d, int s, int c)
{
	const struct loom_tile_config *tc = cfg(d, s);
	int kind;
	uint64_t val;

	if (tc->op != LOOM_OP_STREAM && (tc->flags & LOOM_TILE_IMM_B)) {
		kind = COUNT_IMM;
		val = tc->imm;
	} else {
		count_id(d, d->src[s][tc->op == LOOM_OP_STREAM ? 2 : 1], &kind,
			 &val);
	}
	return loop_ctx(d, c, kind, val);
}

/* 3: every value's context; the first disagreement fails. */
static int check_rates(struct dl *d, int n)
{
	for (int v = d->nslots; v < d->nvalues; v++)
		d->ctx[v] = 0;
	for (int i = 0; i < n; i++) {
		int s = d->order[i], c = -1, cc = -1;
		const struct loom_tile_config *tc = cfg(d, s);

		for (int k = 0; k < 3; k++) {
			int in = d->src[s][k];

			if (in == NO_VALUE)
				continue;
			if (tc->op == LOOM_OP_REDUCE && k == 2) {
				cc = d->ctx[in];
				continue;
			}
			if (c >= 0 && d->ctx[in] != c)
				return fail(d, "(%d,%d).%d %s: its inputs come at different rates (input %c)",
					    AT(d, s), loom_op_name(tc->op), "ABC"[k]);
			c = d->ctx[in];
		}
		if (c < 0)
			c = 0;		/* a STREAM/INVARIANT of immediates only */
		switch (tc->op) {
		case LOOM_OP_STREAM:
		case LOOM_OP_INVARIANT:
			d->ctx[s] = count_ctx(d, s, c);
			break;
		case LOOM_OP_REDUCE:
			if (cc != count_ctx(d, s, c))
				return fail(d, "(%d,%d).%d REDUCE: folds values of another loop than its count's",
					    AT(d, s));
			d->ctx[s] = c;
			break;
		default:
			d->ctx[s] = c;
		}
	}
	return 0;
}

/* Marks what depends on value @v. */
static void descend(const struct dl *d, int v, bool *below)
{
	if (below[v])
		return;
	below[v] = true;
	for (int s = 0; s < d->nslots; s++)
		for (int k = 0; k < 3; k++)
			if (d->src[s][k] == v)
				descend(d, s, below);
}

/* Whether slot @s waits before it runs for a value marked in @below. */
static bool waits_on(const struct dl *d, int s, const bool *below)
{
	const struct loom_tile_config *tc = cfg(d, s);

	for (int k = 0; k < 3; k++)
		if (d->src[s][k] != NO_VALUE &&
		    !(tc->op == LOOM_OP_REDUCE && k == 2) &&
		    below[d->src[s][k]])
			return true;
	return false;
}

static int find(int *uf, int v)
{
	while (uf[v] != v)
		v = uf[v] = uf[uf[v]];
	return v;
}

/*
 * Loops: the values of one loop context that meet at some operation, with
 * the STREAMs and INVARIANTs they come from, are one loop (two loops of
 * the same count one after the other are two).  @uf: each slot's loop.
 */
static void group_loops(const struct dl *d, int *uf)
{
	for (int v = 0; v < d->nvalues; v++)
		uf[v] = v;
	for (int s = 0; s < d->nslots; s++) {
		unsigned op = cfg(d, s)->op;

		if (op == LOOM_OP_NOP || op == LOOM_OP_STREAM ||
		    op == LOOM_OP_INVARIANT || d->ctx[s] == 0)
			continue;
		for (int k = 0; k < (op == LOOM_OP_REDUCE ? 2 : 3); k++)
			if (d->src[s][k] != NO_VALUE)
				uf[find(uf, d->src[s][k])] = find(uf, s);
	}
}

/* The loop whose values REDUCE slot @s folds, or -1 if not a REDUCE. */
static int folds(const struct dl *d, int *uf, int s)
{
	return cfg(d, s)->op == LOOM_OP_REDUCE ? find(uf, d->src[s][2]) : -1;
}

/*
 * 4: no loop waits on its own reductions: what its STREAMs and
 * INVARIANTs take, and its REDUCEs' init and count, depend on none of
 * them.
 */
static int check_loops(struct dl *d)
{
	bool *below = calloc(d->nvalues + 1, sizeof(bool));
	int *uf = calloc(d->nvalues + 1, sizeof(int));
	int rc = 0;

	if (!below || !uf)
		abort();
	group_loops(d, uf);
	for (int r = 0; r < d->nslots && !rc; r++) {
		int loop = folds(d, uf, r);

		if (loop < 0)
			continue;
		memset(below, 0, (d->nvalues + 1) * sizeof(bool));
		for (int s = 0; s < d->nslots; s++)
			if (folds(d, uf, s) == loop)
				descend(d, s, below);
		for (int s = 0; s < d->nslots && !rc; s++) {
			unsigned op = cfg(d, s)->op;
			bool gen = op == LOOM_OP_STREAM || op == LOOM_OP_INVARIANT;

			if (((gen && find(uf, s) == loop) ||
			     folds(d, uf, s) == loop) && waits_on(d, s, below))
				rc = fail(d, "(%d,%d).%d %s: waits on a reduction of its own loop",
					  AT(d, s), loom_op_name(op));
		}
	}
	free(below);
	free(uf);
	return rc;
}

int deadlock_check(const struct placement *p, char *why, size_t n)
{
	struct dl d = { .p = p, .why = why, .n = n };
	int rc, sorted, active = 0;

	d.ntiles = p->width * p->height;
	d.nslots = d.ntiles * p->slots;
	d.nvalues = d.nslots + p->num_ports;
	d.src = calloc(d.nslots + 1, sizeof(*d.src));
	d.read = calloc(d.nvalues + 1, sizeof(bool));
	d.ctx = calloc(d.nvalues + 1, sizeof(int));
	d.order = calloc(d.nslots + 1, sizeof(int));
	d.ctxs = calloc(d.nslots + 2, sizeof(*d.ctxs));
	if (!d.src || !d.read || !d.ctx || !d.order || !d.ctxs)
		abort();
	d.nctx = 1;
	if (n)
		why[0] = 0;
	rc = check_routes(&d);
	if (!rc) {
		for (int s = 0; s < d.nslots; s++)
			active += p->tiles[s].op != LOOM_OP_NOP;
		sorted = sort_slots(&d);
		if (sorted < active)
			rc = fail(&d, "its values form a cycle (%d of %d operations wait on themselves)",
				  active - sorted, active);
	}
	if (!rc)
		rc = check_rates(&d, active);
	if (!rc)
		rc = check_loops(&d);
	free(d.src);
	free(d.read);
	free(d.ctx);
	free(d.order);
	free(d.ctxs);
	return rc;
}
