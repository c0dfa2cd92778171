// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fabric.c: the cycle-level model of one core's fabric (uapi "The fabric").
 *
 * Every buffer of the fabric (PE input FIFOs, PE outputs, outgoing links,
 * input port queues) is a ring in one flat pool, addressed by a small
 * integer.  Configuring turns the image into flat tables: the active PEs in
 * tile-index order and, per switch source, the list of buffers it feeds.
 * A cycle then is:
 *
 *   1. snapshot every buffer's occupancy (the start-of-cycle state);
 *   2. let each PE fire, in tile-index order (memory ports are granted and
 *      memory side effects happen in that order); a temporal PE tries its
 *      slots round robin and fires the first that can (uapi "Temporal
 *      PEs");
 *   3. move each source's head token to all of its destinations when every
 *      one of them had room (a fork is all-or-nothing); the sources that
 *      feed a link of several channels then take turns for it (uapi "Link
 *      channels");
 *   4. inject the next instance (or work item) when every input port queue
 *      had room.
 *
 * Steps 2-4 decide from the snapshot only and apply to the live state, so
 * the order between them does not matter: a token moves at most one hop
 * per cycle and a buffer may be popped and pushed in the same cycle.
 *
 * Resolved ambiguities (the uapi and the engine contract leave these open):
 *  - A step needs room in the PE output only when it pushes a token in that
 *    cycle.  So SINK never stalls, a STREAM/INVARIANT with count <= 0 and a
 *    REDUCE taking init/count > 0 or folding a value other than the last
 *    one fire even when the output is full, and LOAD fires regardless: its
 *    result waits for room when due.
 *  - STREAM/INVARIANT emit their first token in the cycle they consume
 *    their inputs (one firing), then one token per cycle (one firing each);
 *    a sequence of count tokens takes count firings.  REDUCE: one firing
 *    consumes init and count, then one per folded value, the last of which
 *    also emits the result.
 *  - A LOAD fired in cycle t pushes its result at the end of cycle
 *    t + load_latency - 1, i.e. it is visible load_latency cycles after
 *    the firing, so a latency of 1 behaves like any other operation.  A due
 *    result that finds the output full counts a stall per cycle it waits.
 *  - Types: I32 makes CONST and MOV sign-extend their result, REDUCE fold
 *    (and emit init) as i32, LOAD/STORE access 4 bytes.  STREAM and
 *    INVARIANT always use 64-bit arithmetic; JOIN forwards A unchanged.
 *  - IMM_B applies to every operation that has a B input: STORE's value,
 *    STREAM's step, INVARIANT's and REDUCE's count, JOIN's B.
 *  - A failing load/store/spawn callback ends the run in the middle of the
 *    cycle: PEs of lower tile index have fired, the failing PE keeps its
 *    inputs (the dump shows the token that failed), later PEs, moves and
 *    injection of that cycle do not happen.  The cycle is counted.  A NULL
 *    load/store callback is LOOM_STATUS_DMA_ERROR, a NULL spawn callback
 *    LOOM_STATUS_SPAWN_OUTSIDE_ITEMS.
 *  - A failing payload callback ends the run in step 4 of its cycle: the
 *    item is not injected and not counted in loom_hw_counters.items.
 *  - The cycle that detects a deadlock (nothing happened) is counted.
 *  - A REDUCE that has taken init and count and waits for C counts as
 *    "waiting" in the dump: it holds part of its operands.
 *  - Dense instances are injected in row-major order (last coordinate
 *    fastest), the work items of a DISPATCH_ITEMS in index order, one per
 *    cycle like instances: items are pipelined.
 *  - Every token carries a tag, the index of the item it belongs to (0 in
 *    a dense dispatch), beside its value in f->pool.  A firing's result takes
 *    the tag of its A input (CONST's trigger included), a STREAM's or
 *    INVARIANT's tokens the tag of the A they consumed, REDUCE's result
 *    the tag of its init (A), a LOAD's result the tag of its address.  In
 *    a well-formed graph every input of a firing belongs to one instance or
 *    item (what makes pipelining dense instances correct), so A's tag is
 *    the firing's.  The spawn callback gets the SPAWN token's tag: the item
 *    whose record the child goes to.  Tokens sent to a completion port are counted in
 *    f->completions (not a loom_hw_counters field).
 *  - params->fifo_depth must be at most 255 (it is an 8-bit LIMITS field
 *    and an 8-bit dump field).
 *  - ATOMIC is a LOAD that needs A and B (B may not be IMM_B: imm is its
 *    kind): it fires when both are present and a memory port is free,
 *    performs its read-modify-write through the atomic callback in the
 *    firing cycle, and delivers the old value like a LOAD's result.  A PE
 *    with one of the two counts as waiting.
 *  - Every core has LOOM_PE_SLOTS slots per PE.  A slot "fires" in a cycle
 *    when its firing count moves; a slot that stalls or delivers a due
 *    LOAD result does not end the PE's turn, the next slot is tried.
 *  - Link channels (LOOM_CONFIG_VERSION_CHANNELS): a route that reads a
 *    channel no slot of the neighbour sets is valid and never gets a token
 *    (as a link nobody sets in the older versions).  Such a source still
 *    counts among the contending ones when it feeds a shared link.  The
 *    "cycle c" of the arbitration counts from 0 at the run's first cycle,
 *    for every run; a run that ends on a callback error does not matter.
 *    An edge link written in slot k > 0 is the completion port's one path,
 *    not a channel k; an edge link read as LOOM_SRC_CHAN(dir, k > 0) is
 *    LOOM_CONFIG_BAD_ROUTE, and so is an edge link set in two slots.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/*
 * The buffers of tile t are t * f->tile_bufs + one of these; slot k's are
 * BUF_SLOT(k) + BUF_A.. BUF_OUT.  A tile has buffers for the slots of the
 * loaded configuration only (the pool is sized for MAX_TILE_BUFS), so that
 * a one-slot configuration snapshots no more state per cycle than before.
 *
 * Link channels: channel 0 of an outgoing link is BUF_LINK + dir.  Only a
 * configuration with a link of two channels or more (f->chans > 1, then
 * the configuration's slots) has the further channels 1 .. chans - 1 of
 * each link, after the slots: BUF_SLOT(slots) + dir * (chans - 1) + k - 1
 * (link_buf()).  Otherwise every link has one channel, whatever its
 * number, and that is BUF_LINK + dir: such a configuration snapshots and
 * moves exactly what a LOOM_CONFIG_VERSION_SLOTS one does.
 */
enum {
	BUF_LINK = 0,		/* outgoing links N, E, S, W (+ enum loom_dir) */
	BUF_SLOT0 = 4,
	BUF_A = 0,		/* PE input FIFOs A, B, C (+ slot base) */
	BUF_OUT = 3,		/* PE output (+ slot base) */
	SLOT_BUFS = 4,
	MAX_TILE_BUFS = BUF_SLOT0 + SLOT_BUFS * LOOM_PE_SLOTS +
			4 * (LOOM_PE_SLOTS - 1),
};

#define BUF_SLOT(k)	(BUF_SLOT0 + SLOT_BUFS * (k))

/*
 * Sources of one tile: the four incoming links (each channel of them in
 * LOOM_CONFIG_VERSION_CHANNELS), then each slot's output.
 */
#define TILE_SRCS	(4 * LOOM_PE_SLOTS + LOOM_PE_SLOTS)

#define IN_A		(1U << 0)
#define IN_B		(1U << 1)
#define IN_C		(1U << 2)

/* How a PE behaves each cycle. */
enum pe_class {
	PE_SIMPLE,		/* fire when inputs present: one result or none */
	PE_LOAD,
	PE_GEN,			/* STREAM, INVARIANT */
	PE_REDUCE,
};

struct fab_pe {
	uint16_t tile;
	uint16_t fifo;		/* buffer of its input A */
	uint8_t op, type, flags;
	uint8_t cls;		/* enum pe_class */
	uint8_t need;		/* IN_* consumed when idle */
	bool out;		/* PE_SIMPLE: produces a token */
	bool mem;		/* PE_SIMPLE: takes a memory port (STORE) */
	uint64_t imm;
	/* run state */
	bool busy;		/* generating, folding or a LOAD in flight */
	uint64_t val;		/* next value, accumulator or loaded value */
	uint64_t step;
	uint64_t left;		/* tokens still to emit or fold */
	uint64_t due;		/* LOAD: cycle at whose end it may deliver */
	uint32_t tag;		/* item of @val: the inputs it consumed */
	uint64_t firings, stalls;
};

/* The active slots of one tile: pe[first .. first + n - 1]. */
struct fab_group {
	uint16_t tile;
	uint16_t first;
	uint8_t n;
	uint8_t next;		/* round robin: the slot tried first */
};

/* One switch source and the buffers it feeds (all from one tile). */
struct fab_src {
	uint16_t buf;
	uint16_t ndst;
	uint32_t first;		/* its buffers: f->dsts[first .. first + ndst) */
};

/*
 * A source that feeds a link of several channels (f->src[f->nfree + i] is
 * described by f->cont[i]): its tile and the mask of that tile's outgoing
 * links of several channels it feeds.
 */
struct fab_cont {
	uint16_t tile;
	uint8_t links;
};

/* One bound input port and its queue. */
struct fab_port {
	uint16_t buf;
	uint8_t kind, index;
};

struct loom_fabric {
	struct loom_fabric_params p;
	unsigned ntiles;
	bool configured;
	unsigned slots;		/* per PE in the buffer layout */
	unsigned tile_bufs;	/* buffers per tile: BUF_SLOT(slots) + more chans */

	/* buffers: tiles, then the completion drop, then port queues */
	unsigned nbuf;		/* in use by the loaded configuration */
	unsigned drop;
	uint8_t *cnt;		/* live occupancy */
	uint8_t *cnt0;		/* occupancy at the start of the cycle */
	uint8_t *head;
	uint8_t *cap;
	uint8_t *mask;		/* its ring: a power of two >= cap, minus 1 */
	uint32_t *base;		/* first slot in pool */
	struct fab_tok *pool;

	struct fab_pe *pe;	/* active slots, tile-index then slot order */
	unsigned npe;
	struct fab_group *group; /* tiles with active slots, in tile order */
	unsigned ngroup;
	int16_t *group_of_tile;	/* index in group[], or -1 */
	/* sources: f->nfree free ones, then f->ncont contending (f->cont) */
	struct fab_src *src;
	uint16_t *dsts;		/* destination buffers of all sources */
	unsigned nsrc;
	struct fab_port port[LOOM_MAX_PORTS];
	unsigned nport;

	/* run state */
	uint64_t cycle;
	uint64_t tokens;	/* tokens in all buffers */
	unsigned busy;		/* PEs with a sequence or LOAD in progress */
	uint64_t completions;
	unsigned last_blocked, last_waiting;

	/* link channels (kept last: the hot fields above keep their places) */
	unsigned chans;		/* buffers per link: 1, or slots (link_buf()) */
	unsigned nfree;
	unsigned ncont;
	unsigned turn;		/* the contending source considered first */
	struct fab_cont *cont;
	uint8_t *taken;		/* per tile: links of f->cont that moved a token */
};

/*
 * A token and its tag (the item it belongs to), side by side: a push or a
 * pop touches one place in f->pool, not two arrays.
 */
struct fab_tok {
	uint64_t v;
	uint32_t tag;
};

/* What happened in one cycle, and the run's totals. */
struct fab_cycle {
	unsigned mem_used;
	unsigned blocked, waiting;
	bool work;		/* a token moved, a PE fired, an injection */
	bool counting;		/* a LOAD is counting down */
};

struct fab_run {
	const struct loom_dispatch *d;
	const struct loom_fabric_env *env;
	struct loom_hw_counters c;
	uint64_t coord[LOOM_MAX_RANK];
	uint32_t item;		/* items: the next to inject */
	uint64_t payload;	/* items: its payload, once read */
	bool injected;		/* every instance is in */
};

/* ------------------------------------------------------------ buffers --- */

/*
 * These run for every token that moves.  At -O2 GCC keeps some of their
 * calls out of line in the run loop, where the calls were a quarter of the
 * engine's instructions per item (bench/items_bench under callgrind).
 */
#define BUF_FN static inline __attribute__((always_inline))

BUF_FN uint64_t buf_peek(const struct loom_fabric *f, unsigned b)
{
	return f->pool[f->base[b] + f->head[b]].v;
}

BUF_FN uint32_t buf_tag(const struct loom_fabric *f, unsigned b)
{
	return f->pool[f->base[b] + f->head[b]].tag;
}

BUF_FN uint64_t buf_pop(struct loom_fabric *f, unsigned b)
{
	uint64_t v = buf_peek(f, b);

	f->head[b] = (f->head[b] + 1) & f->mask[b];
	f->cnt[b]--;
	f->tokens--;
	return v;
}

/* The caller checked room in the snapshot; a pop may have made more. */
BUF_FN void buf_push(struct loom_fabric *f, unsigned b, uint64_t v,
		     uint32_t tag)
{
	struct fab_tok *t = &f->pool[f->base[b] +
				     ((f->head[b] + f->cnt[b]) & f->mask[b])];

	t->v = v;
	t->tag = tag;
	f->cnt[b]++;
	f->tokens++;
}

BUF_FN bool had_room(const struct loom_fabric *f, unsigned b)
{
	return f->cnt0[b] < f->cap[b];
}

/* ----------------------------------------------------------- create --- */

static bool params_ok(const struct loom_fabric_params *p)
{
	return p->width >= 1 && p->width <= LOOM_FABRIC_MAX_DIM &&
	       p->height >= 1 && p->height <= LOOM_FABRIC_MAX_DIM &&
	       p->fifo_depth >= 1 && p->fifo_depth <= 255 &&
	       p->mem_ports >= 1 && p->load_latency >= 1;
}

/*
 * Gives every buffer of a layout of @slots per PE and @chans per link its
 * capacity and its place in the pool, all empty.  Returns the pool entries
 * the layout uses: loom_fabric_create() sizes the pool with the largest
 * layout, so that every buffer, the drop and the last port queue
 * included, is inside it whatever a configuration asks for.
 */
static size_t layout_buffers(struct loom_fabric *f, unsigned slots,
			     unsigned chans)
{
	unsigned b, total;
	uint32_t slot = 0;

	f->slots = slots;
	f->chans = chans;
	f->tile_bufs = BUF_SLOT(slots) + 4 * (chans - 1);
	total = f->ntiles * f->tile_bufs + 1 + LOOM_MAX_PORTS;
	for (b = 0; b < total; b++) {
		unsigned in_tile = b % f->tile_bufs;
		bool fifo = b < f->ntiles * f->tile_bufs && in_tile >= BUF_SLOT0 &&
			    in_tile < BUF_SLOT(slots) &&
			    (in_tile - BUF_SLOT0) % SLOT_BUFS < BUF_OUT;
		unsigned ring = 1;

		/* a ring of a power of two wraps with a mask, not a branch */
		f->cap[b] = fifo ? f->p.fifo_depth : LOOM_LINK_DEPTH;
		while (ring < f->cap[b])
			ring *= 2;
		f->mask[b] = ring - 1;
		f->base[b] = slot;
		slot += ring;
	}
	memset(f->cnt, 0, total);
	memset(f->head, 0, total);
	f->drop = f->ntiles * f->tile_bufs;
	f->cap[f->drop] = 255;	/* never full: its count stays 0 */
	return slot;
}

struct loom_fabric *loom_fabric_create(const struct loom_fabric_params *p)
{
	struct loom_fabric *f;
	unsigned ntiles, nb;
	size_t npool;

	if (!p || !params_ok(p))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->p = *p;
	ntiles = p->width * p->height;
	f->ntiles = ntiles;
	nb = ntiles * MAX_TILE_BUFS + 1 + LOOM_MAX_PORTS;
	f->cnt = calloc(nb, 1);
	f->cnt0 = calloc(nb, 1);
	f->head = calloc(nb, 1);
	f->cap = calloc(nb, 1);
	f->mask = calloc(nb, 1);
	f->base = calloc(nb, sizeof(*f->base));
	if (f->cnt && f->head && f->cap && f->mask && f->base) {
		npool = layout_buffers(f, LOOM_PE_SLOTS, LOOM_PE_SLOTS);
		f->pool = calloc(npool, sizeof(*f->pool));
	}
	f->pe = calloc((size_t)ntiles * LOOM_PE_SLOTS, sizeof(*f->pe));
	f->group = calloc(ntiles, sizeof(*f->group));
	f->group_of_tile = calloc(ntiles, sizeof(*f->group_of_tile));
	f->src = calloc((size_t)ntiles * TILE_SRCS, sizeof(*f->src));
	f->dsts = calloc((size_t)ntiles * LOOM_PE_SLOTS * LOOM_ROUTE_OUTS,
			 sizeof(*f->dsts));
	f->cont = calloc((size_t)ntiles * TILE_SRCS, sizeof(*f->cont));
	f->taken = calloc(ntiles, 1);
	if (!f->cnt || !f->cnt0 || !f->head || !f->cap || !f->mask ||
	    !f->base || !f->pool || !f->pe || !f->group || !f->group_of_tile || !f->src ||
	    !f->dsts || !f->cont || !f->taken) {
		loom_fabric_destroy(f);
		return NULL;
	}
	layout_buffers(f, 1, 1);
	return f;
}

void loom_fabric_destroy(struct loom_fabric *f)
{
	if (!f)
		return;
	free(f->cnt);
	free(f->cnt0);
	free(f->head);
	free(f->cap);
	free(f->mask);
	free(f->base);
	free(f->pool);
	free(f->pe);
	free(f->group);
	free(f->group_of_tile);
	free(f->src);
	free(f->dsts);
	free(f->cont);
	free(f->taken);
	free(f);
}

bool loom_fabric_configured(const struct loom_fabric *f)
{
	return f->configured;
}

/* -------------------------------------------------------- validation --- */

/* The image as validated: the header and copies of tiles and ports. */
struct cfg {
	struct loom_fabric_config hdr;
	unsigned slots;		/* per PE: LOOM_CONFIG_SLOTS() */
	const unsigned char *tiles;	/* unaligned: read with memcpy */
	const unsigned char *ports;
	/* binding index + 1 at each edge position, 0 when unbound */
	uint8_t at[4][LOOM_FABRIC_MAX_DIM];
	/* per tile and outgoing link: the slots that set it (its channels) */
	uint8_t set[LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM][4];
	bool multi;		/* a link has two channels or more */
};

/* Slot @k of tile @t. */
static struct loom_tile_config cfg_tile(const struct cfg *c, unsigned t,
					unsigned k)
{
	struct loom_tile_config tc;

	memcpy(&tc, c->tiles + ((size_t)t * c->slots + k) * sizeof(tc),
	       sizeof(tc));
	return tc;
}

static struct loom_port_binding cfg_port(const struct cfg *c, unsigned i)
{
	struct loom_port_binding pb;

	memcpy(&pb, c->ports + (size_t)i * sizeof(pb), sizeof(pb));
	return pb;
}

static enum loom_config_error check_header(const struct loom_fabric *f,
					   struct cfg *c, const void *image,
					   size_t size)
{
	const struct loom_fabric_config *h = &c->hdr;

	if (size < sizeof(*h))
		return LOOM_CONFIG_BAD_SIZE;
	memcpy(&c->hdr, image, sizeof(*h));
	if (h->magic != LOOM_CONFIG_MAGIC)
		return LOOM_CONFIG_BAD_MAGIC;
	if (h->version != LOOM_CONFIG_VERSION &&
	    h->version != LOOM_CONFIG_VERSION_SLOTS &&
	    h->version != LOOM_CONFIG_VERSION_CHANNELS)
		return LOOM_CONFIG_BAD_VERSION;
	if (h->reserved || (h->version == LOOM_CONFIG_VERSION && h->slots))
		return LOOM_CONFIG_RESERVED;
	c->slots = LOOM_CONFIG_SLOTS(h->version, h->slots);
	if (h->width != f->p.width || h->height != f->p.height ||
	    c->slots < 1 || c->slots > LOOM_PE_SLOTS)
		return LOOM_CONFIG_BAD_DIMENSIONS;
	if (h->num_ports > LOOM_MAX_PORTS ||
	    size != LOOM_CONFIG_SIZE(f->ntiles * c->slots, h->num_ports))
		return LOOM_CONFIG_BAD_SIZE;
	c->tiles = (const unsigned char *)image + sizeof(*h);
	c->ports = c->tiles + f->ntiles * c->slots *
			      sizeof(struct loom_tile_config);
	return LOOM_CONFIG_OK;
}

static bool is_channels(const struct cfg *c)
{
	return c->hdr.version == LOOM_CONFIG_VERSION_CHANNELS;
}

/*
 * Whether @s is a link source: LOOM_SRC_N..W (channel 0) or a
 * LOOM_SRC_CHAN(); then its direction and channel.
 */
static bool link_src(unsigned s, unsigned *dir, unsigned *k)
{
	if (s >= LOOM_SRC_N && s <= LOOM_SRC_W) {
		*dir = s - LOOM_SRC_N;
		*k = 0;
		return true;
	}
	if (!LOOM_SRC_IS_CHAN(s))
		return false;
	*dir = LOOM_SRC_CHAN_DIR(s);
	*k = LOOM_SRC_CHAN_INDEX(s);
	return true;
}

/* A route source the configuration's version and slots allow. */
static bool src_ok(const struct cfg *c, unsigned s)
{
	unsigned dir, k;

	if (c->hdr.version == LOOM_CONFIG_VERSION)
		return s <= LOOM_SRC_PE;
	if (s < LOOM_SRC_SLOT(c->slots))
		return true;
	return is_channels(c) && LOOM_SRC_IS_CHAN(s) && link_src(s, &dir, &k) &&
	       k < c->slots;
}

/* The checks one slot needs on its own, in a fixed order. */
static enum loom_config_error check_tile(const struct cfg *c,
					 const struct loom_tile_config *t)
{
	unsigned o;

	if (t->reserved0 || t->reserved1 || t->reserved2)
		return LOOM_CONFIG_RESERVED;
	if (t->op >= LOOM_OP_COUNT ||
	    (t->type != LOOM_TYPE_I64 && t->type != LOOM_TYPE_I32) ||
	    (t->flags & ~LOOM_TILE_FLAGS_MASK) ||
	    (loom_op_f32_only(t->op) && t->type != LOOM_TYPE_I32) ||
	    (t->op == LOOM_OP_REDUCE && !loom_op_info(t->imm)->reduce) ||
	    (t->op == LOOM_OP_ATOMIC &&
	     ((t->flags & LOOM_TILE_IMM_B) ||
	      !loom_atomic_kind_ok(t->imm, t->type))) ||
	    ((t->flags & LOOM_TILE_IMM_OPERAND) &&
	     (t->op != LOOM_OP_CONST || t->imm >= LOOM_MAX_OPERANDS)))
		return LOOM_CONFIG_BAD_OP;
	for (o = 0; o < LOOM_ROUTE_OUTS; o++)
		if (!src_ok(c, t->route[o]))
			return LOOM_CONFIG_BAD_ROUTE;
	return LOOM_CONFIG_OK;
}

/* Whether the link of tile @t in direction @dir crosses the fabric's edge. */
static bool on_edge(const struct loom_fabric *f, unsigned t, unsigned dir)
{
	unsigned x = t % f->p.width, y = t / f->p.width;

	return (dir == LOOM_DIR_N && y == 0) ||
	       (dir == LOOM_DIR_S && y == f->p.height - 1) ||
	       (dir == LOOM_DIR_E && x == f->p.width - 1) ||
	       (dir == LOOM_DIR_W && x == 0);
}

/*
 * A link output of a tile is set in one of its slots at most, except that
 * with link channels a link between two tiles may be set in several (one
 * channel each).  Notes in c->set which slots set each link.
 */
static enum loom_config_error check_links(const struct loom_fabric *f,
					  struct cfg *c)
{
	unsigned t, k, o;

	c->multi = false;
	for (t = 0; t < f->ntiles; t++) {
		for (o = 0; o <= LOOM_OUT_W; o++)
			c->set[t][o] = 0;
		for (k = 0; k < c->slots; k++) {
			struct loom_tile_config tc = cfg_tile(c, t, k);

			for (o = 0; o <= LOOM_OUT_W; o++) {
				if (tc.route[o] == LOOM_SRC_NONE)
					continue;
				if (c->set[t][o] &&
				    (!is_channels(c) || on_edge(f, t, o)))
					return LOOM_CONFIG_BAD_ROUTE;
				c->set[t][o] |= 1U << k;
			}
		}
		for (o = 0; o <= LOOM_OUT_W; o++)
			if (c->set[t][o] & (c->set[t][o] - 1))
				c->multi = true;
	}
	return LOOM_CONFIG_OK;
}

static bool port_ok(const struct loom_fabric *f,
		    const struct loom_port_binding *pb)
{
	unsigned edge = (pb->side == LOOM_DIR_N || pb->side == LOOM_DIR_S) ?
			f->p.width : f->p.height;

	if (pb->side > LOOM_DIR_W || pb->pos >= edge)
		return false;
	switch (pb->kind) {
	case LOOM_PORT_OPERAND:
		return pb->index < LOOM_MAX_OPERANDS;
	case LOOM_PORT_COORD:
		return pb->index < LOOM_MAX_RANK;
	case LOOM_PORT_CTRL:
	case LOOM_PORT_PAYLOAD:
	case LOOM_PORT_COMPLETION:
		return pb->index == 0;
	}
	return false;
}

static enum loom_config_error check_ports(const struct loom_fabric *f,
					  struct cfg *c)
{
	unsigned i;

	memset(c->at, 0, sizeof(c->at));
	for (i = 0; i < c->hdr.num_ports; i++) {
		struct loom_port_binding pb = cfg_port(c, i);

		if (!port_ok(f, &pb) || c->at[pb.side][pb.pos])
			return LOOM_CONFIG_BAD_PORT;
		c->at[pb.side][pb.pos] = i + 1;
	}
	return LOOM_CONFIG_OK;
}

/*
 * The binding on the edge that the link of tile (x, y) in direction @dir
 * crosses, or -1 when that link stays inside the fabric, -2 when it
 * crosses the edge unbound.
 */
static int edge_binding(const struct loom_fabric *f, const struct cfg *c,
			unsigned x, unsigned y, unsigned dir)
{
	unsigned pos = (dir == LOOM_DIR_N || dir == LOOM_DIR_S) ? x : y;

	if (!on_edge(f, y * f->p.width + x, dir))
		return -1;
	return c->at[dir][pos] ? c->at[dir][pos] - 1 : -2;
}

/*
 * Edge links must be read only from input ports (channel 0), written only
 * to completion.
 */
static enum loom_config_error check_routes(const struct loom_fabric *f,
					   const struct cfg *c)
{
	unsigned i, o;

	for (i = 0; i < f->ntiles * c->slots; i++) {
		unsigned t = i / c->slots;
		struct loom_tile_config tc = cfg_tile(c, t, i % c->slots);
		unsigned x = t % f->p.width, y = t / f->p.width;

		for (o = 0; o < LOOM_ROUTE_OUTS; o++) {
			unsigned s = tc.route[o], dir, k;
			int b;

			if (o <= LOOM_OUT_W) {
				b = edge_binding(f, c, x, y, o);
				if (tc.route[o] != LOOM_SRC_NONE && b != -1 &&
				    (b < 0 || cfg_port(c, b).kind !=
					      LOOM_PORT_COMPLETION))
					return LOOM_CONFIG_BAD_ROUTE;
			}
			if (!link_src(s, &dir, &k))
				continue;
			b = edge_binding(f, c, x, y, dir);
			if (b == -2 || (b >= 0 && (k || cfg_port(c, b).kind ==
							LOOM_PORT_COMPLETION)))
				return LOOM_CONFIG_BAD_ROUTE;
		}
	}
	return LOOM_CONFIG_OK;
}

static enum loom_config_error validate(const struct loom_fabric *f,
				       struct cfg *c, const void *image,
				       size_t size)
{
	enum loom_config_error err;
	unsigned i;

	err = check_header(f, c, image, size);
	for (i = 0; !err && i < f->ntiles * c->slots; i++) {
		struct loom_tile_config tc = cfg_tile(c, i / c->slots,
						      i % c->slots);

		err = check_tile(c, &tc);
	}
	if (!err)
		err = check_links(f, c);
	if (!err)
		err = check_ports(f, c);
	if (!err)
		err = check_routes(f, c);
	return err;
}

/* ------------------------------------------------------------- build --- */

/* Channel @k of the outgoing link of tile @t in direction @dir. */
static unsigned link_buf(const struct loom_fabric *f, unsigned t,
			 unsigned dir, unsigned k)
{
	if (f->chans == 1 || k == 0)
		return t * f->tile_bufs + BUF_LINK + dir;
	return t * f->tile_bufs + BUF_SLOT(f->slots) + dir * (f->chans - 1) +
	       k - 1;
}

/*
 * The buffer a route source of tile (x, y) reads; @s is a link source or
 * LOOM_SRC_SLOT(k) (LOOM_SRC_PE resolved to its slot by the caller).
 */
static unsigned src_buf(const struct loom_fabric *f, const struct cfg *c,
			unsigned x, unsigned y, unsigned s)
{
	static const int dx[4] = { 0, 1, 0, -1 }, dy[4] = { -1, 0, 1, 0 };
	unsigned w = f->p.width, dir, k, n;
	int b;

	if (!link_src(s, &dir, &k))
		return (y * w + x) * f->tile_bufs +
		       BUF_SLOT(s - LOOM_SRC_SLOT0) + BUF_OUT;
	b = edge_binding(f, c, x, y, dir);
	if (b >= 0)
		return f->drop + 1 + b;
	/* The neighbour's outgoing link that points back at us (dir ^ 2). */
	n = (y + dy[dir]) * w + x + dx[dir];
	/* a channel no slot sets stays empty: the drop never holds a token */
	if (is_channels(c) && !(c->set[n][dir ^ 2] & (1U << k)))
		return f->drop;
	return link_buf(f, n, dir ^ 2, k);
}

/* The buffer route output @o of slot @k of tile (x, y) writes. */
static unsigned dst_buf(const struct loom_fabric *f, const struct cfg *c,
			unsigned x, unsigned y, unsigned k, unsigned o)
{
	unsigned t = y * f->p.width + x;

	if (o >= LOOM_OUT_PE_A)
		return t * f->tile_bufs + BUF_SLOT(k) + BUF_A + (o - LOOM_OUT_PE_A);
	if (edge_binding(f, c, x, y, o) >= 0)
		return f->drop;		/* validated: a completion port */
	return link_buf(f, t, o, is_channels(c) ? k : 0);
}

/*
 * Slot @k's route source @s as a link source or LOOM_SRC_SLOT(j); with
 * link channels, LOOM_SRC_N..W as the LOOM_SRC_CHAN() of channel 0.
 */
static unsigned resolve_src(const struct cfg *c, unsigned k, unsigned s)
{
	if (s == LOOM_SRC_PE)
		return LOOM_SRC_SLOT(k);
	if (is_channels(c) && s >= LOOM_SRC_N && s <= LOOM_SRC_W)
		return LOOM_SRC_CHAN(s - LOOM_SRC_N, 0);
	return s;
}

/*
 * The sources of a tile in order: the incoming links N, E, S, W (channel
 * by channel with link channels), then the slots' outputs.
 */
static unsigned tile_nsrcs(const struct cfg *c)
{
	return (is_channels(c) ? 4 * c->slots : 4) + c->slots;
}

static unsigned tile_src(const struct cfg *c, unsigned i)
{
	unsigned nlink = tile_nsrcs(c) - c->slots;

	if (i >= nlink)
		return LOOM_SRC_SLOT(i - nlink);
	if (!is_channels(c))
		return LOOM_SRC_N + i;
	return LOOM_SRC_CHAN(i / c->slots, i % c->slots);
}

/*
 * Adds the sources of the fabric, in tile then tile_src() order, that
 * feed a link of several channels (@contending) or that do not.
 */
static void add_sources(struct loom_fabric *f, const struct cfg *c,
			bool contending, unsigned *ndsts)
{
	unsigned t, i, o, k;

	for (t = 0; t < f->ntiles; t++) {
		unsigned x = t % f->p.width, y = t / f->p.width;

		for (i = 0; i < tile_nsrcs(c); i++) {
			struct fab_src *fs = &f->src[f->nsrc];
			unsigned s = tile_src(c, i), links = 0;

			fs->ndst = 0;
			fs->first = *ndsts;
			for (k = 0; k < c->slots; k++) {
				struct loom_tile_config tc = cfg_tile(c, t, k);

				for (o = 0; o < LOOM_ROUTE_OUTS; o++) {
					if (tc.route[o] == LOOM_SRC_NONE ||
					    resolve_src(c, k, tc.route[o]) != s)
						continue;
					f->dsts[fs->first + fs->ndst++] =
						dst_buf(f, c, x, y, k, o);
					if (o <= LOOM_OUT_W &&
					    (c->set[t][o] & (c->set[t][o] - 1)))
						links |= 1U << o;
				}
			}
			if (!fs->ndst || (links != 0) != contending)
				continue;
			*ndsts += fs->ndst;
			fs->buf = src_buf(f, c, x, y, s);
			if (contending) {
				f->cont[f->ncont].tile = t;
				f->cont[f->ncont].links = links;
				f->ncont++;
			}
			f->nsrc++;
		}
	}
}

/* The free sources, then the contending ones (none without link channels). */
static void build_sources(struct loom_fabric *f, const struct cfg *c)
{
	unsigned ndsts = 0;

	f->nsrc = 0;
	f->ncont = 0;
	add_sources(f, c, false, &ndsts);
	f->nfree = f->nsrc;
	if (c->multi)
		add_sources(f, c, true, &ndsts);
}

static enum pe_class pe_class_of(unsigned op)
{
	switch (op) {
	case LOOM_OP_LOAD:
	case LOOM_OP_ATOMIC:
		return PE_LOAD;
	case LOOM_OP_STREAM:
	case LOOM_OP_INVARIANT:
		return PE_GEN;
	case LOOM_OP_REDUCE:
		return PE_REDUCE;
	}
	return PE_SIMPLE;
}

/* The inputs a PE consumes when idle (REDUCE takes C only while folding). */
static uint8_t pe_need(const struct loom_tile_config *tc)
{
	static const uint8_t mask[4] = { 0, IN_A, IN_A | IN_B, IN_A | IN_B | IN_C };
	uint8_t need = mask[loom_op_inputs(tc->op)];

	if (tc->op == LOOM_OP_JOIN && tc->route[LOOM_OUT_PE_C] != LOOM_SRC_NONE)
		need |= IN_C;
	if (tc->op == LOOM_OP_REDUCE)
		need &= ~IN_C;
	if (tc->flags & LOOM_TILE_IMM_B)
		need &= ~IN_B;
	return need;
}

static void build_pe(struct fab_pe *pe, const struct loom_tile_config *tc,
		     unsigned t, unsigned k, unsigned tile_bufs)
{
	memset(pe, 0, sizeof(*pe));
	pe->tile = t;
	pe->fifo = t * tile_bufs + BUF_SLOT(k) + BUF_A;
	pe->op = tc->op;
	pe->type = tc->type;
	pe->flags = tc->flags;
	pe->imm = tc->imm;
	pe->cls = pe_class_of(tc->op);
	pe->need = pe_need(tc);
	pe->out = tc->op != LOOM_OP_SINK;
	pe->mem = tc->op == LOOM_OP_STORE;
}

static void build_pes(struct loom_fabric *f, const struct cfg *c)
{
	unsigned t, k;

	f->npe = 0;
	f->ngroup = 0;
	for (t = 0; t < f->ntiles; t++) {
		struct fab_group *g = &f->group[f->ngroup];

		f->group_of_tile[t] = -1;
		g->tile = t;
		g->first = f->npe;
		g->n = 0;
		g->next = 0;
		for (k = 0; k < c->slots; k++) {
			struct loom_tile_config tc = cfg_tile(c, t, k);

			if (tc.op == LOOM_OP_NOP)
				continue;
			build_pe(&f->pe[f->npe++], &tc, t, k, f->tile_bufs);
			g->n++;
		}
		if (g->n)
			f->group_of_tile[t] = f->ngroup++;
	}
}

static void build_ports(struct loom_fabric *f, const struct cfg *c)
{
	unsigned i;

	f->nport = 0;
	for (i = 0; i < c->hdr.num_ports; i++) {
		struct loom_port_binding pb = cfg_port(c, i);

		if (pb.kind == LOOM_PORT_COMPLETION)
			continue;
		f->port[f->nport].buf = f->drop + 1 + i;
		f->port[f->nport].kind = pb.kind;
		f->port[f->nport].index = pb.index;
		f->nport++;
	}
	f->nbuf = f->drop + 1 + c->hdr.num_ports;
}

enum loom_config_error loom_fabric_configure(struct loom_fabric *f,
					     const void *image, size_t size)
{
	enum loom_config_error err;
	struct cfg c;

	f->configured = false;
	err = validate(f, &c, image, size);
	if (err)
		return err;
	layout_buffers(f, c.slots, c.multi ? c.slots : 1);
	build_sources(f, &c);
	build_pes(f, &c);
	build_ports(f, &c);
	f->configured = true;
	return LOOM_CONFIG_OK;
}

/* --------------------------------------------------------------- PEs --- */

static uint64_t sext32(uint64_t v)
{
	return ((v & 0xffffffffULL) ^ (1ULL << 31)) - (1ULL << 31);
}

static uint64_t typed(const struct fab_pe *pe, uint64_t v)
{
	return pe->type == LOOM_TYPE_I32 ? sext32(v) : v;
}

/* A count operand as a signed 64-bit value is <= 0. */
static bool count_empty(uint64_t n)
{
	return n == 0 || (n >> 63);
}

static unsigned access_size(const struct fab_pe *pe)
{
	return pe->type == LOOM_TYPE_I32 ? 4 : 8;
}

/* Input FIFOs holding a token at the start of the cycle, as IN_* bits. */
static unsigned inputs_present(const struct loom_fabric *f, unsigned fifo)
{
	return (f->cnt0[fifo] != 0) | (f->cnt0[fifo + 1] != 0) << 1 |
	       (f->cnt0[fifo + 2] != 0) << 2;
}

static void stall(struct fab_pe *pe, struct fab_cycle *cy)
{
	pe->stalls++;
	cy->blocked++;
}

static void fired(struct fab_pe *pe, struct fab_cycle *cy)
{
	pe->firings++;
	cy->work = true;
}

/* Once per firing: GCC left it out of line, 6% of a vector-add cycle. */
BUF_FN void pop_inputs(struct loom_fabric *f, unsigned fifo, unsigned need)
{
	if (need & IN_A)
		buf_pop(f, fifo);
	if (need & IN_B)
		buf_pop(f, fifo + 1);
	if (need & IN_C)
		buf_pop(f, fifo + 2);
}

/* Operand B: imm with IMM_B, else the FIFO head if B is an input. */
static uint64_t operand_b(const struct loom_fabric *f, const struct fab_pe *pe,
			  unsigned fifo)
{
	if (pe->flags & LOOM_TILE_IMM_B)
		return pe->imm;
	return (pe->need & IN_B) ? buf_peek(f, fifo + 1) : 0;
}

/* The side effect and result of a PE_SIMPLE operation. */
static int simple_result(struct fab_pe *pe, const struct fab_run *r,
			 uint64_t a, uint64_t b, uint64_t c, uint32_t tag,
			 uint64_t *res)
{
	const struct loom_fabric_env *env = r->env;
	int st;

	switch (pe->op) {
	case LOOM_OP_CONST:
		*res = typed(pe, (pe->flags & LOOM_TILE_IMM_OPERAND) ?
				 r->d->operands[pe->imm] : pe->imm);
		return LOOM_STATUS_OK;
	case LOOM_OP_MOV:
		*res = typed(pe, a);
		return LOOM_STATUS_OK;
	case LOOM_OP_JOIN:
	case LOOM_OP_SINK:
		*res = a;
		return LOOM_STATUS_OK;
	case LOOM_OP_STORE:
		st = env->store ? env->store(env->opaque, a, access_size(pe), b) :
				  LOOM_STATUS_DMA_ERROR;
		*res = 0;
		return st;
	case LOOM_OP_SPAWN:
		st = env->spawn ? env->spawn(env->opaque, a, tag) :
				  LOOM_STATUS_SPAWN_OUTSIDE_ITEMS;
		*res = 0;
		return st;
	}
	*res = loom_alu(pe->op, pe->type, a, b, c);
	return LOOM_STATUS_OK;
}

static inline int step_simple(struct loom_fabric *f, struct fab_pe *pe,
		       struct fab_run *r, struct fab_cycle *cy, unsigned fifo)
{
	unsigned have = inputs_present(f, fifo) & pe->need;
	uint64_t a, b, c, res;
	uint32_t tag;
	int st;

	if (have != pe->need) {
		if (have)
			cy->waiting++;
		return LOOM_STATUS_OK;
	}
	if ((pe->out && !had_room(f, fifo + BUF_OUT)) ||
	    (pe->mem && cy->mem_used >= f->p.mem_ports)) {
		stall(pe, cy);
		return LOOM_STATUS_OK;
	}
	a = (pe->need & IN_A) ? buf_peek(f, fifo) : 0;
	b = operand_b(f, pe, fifo);
	c = (pe->need & IN_C) ? buf_peek(f, fifo + 2) : 0;
	tag = (pe->need & IN_A) ? buf_tag(f, fifo) : 0;
	if (pe->mem)
		cy->mem_used++;
	st = simple_result(pe, r, a, b, c, tag, &res);
	if (st)
		return st;	/* inputs stay: the dump shows them */
	if (pe->op == LOOM_OP_STORE)
		r->c.mem_writes++;
	if (pe->op == LOOM_OP_SPAWN)
		r->c.spawns++;
	pop_inputs(f, fifo, pe->need);
	if (pe->out)
		buf_push(f, fifo + BUF_OUT, res, tag);
	fired(pe, cy);
	return LOOM_STATUS_OK;
}

static void set_busy(struct loom_fabric *f, struct fab_pe *pe, bool busy)
{
	if (pe->busy == busy)
		return;
	if (busy)
		f->busy++;
	else
		f->busy--;
	pe->busy = busy;
}

/* A LOAD in flight: count down, then deliver when the output has room. */
static void load_deliver(struct loom_fabric *f, struct fab_pe *pe,
			 struct fab_cycle *cy, unsigned fifo, bool just_fired)
{
	if (f->cycle < pe->due) {
		cy->counting = true;
		return;
	}
	if (!had_room(f, fifo + BUF_OUT)) {
		if (!just_fired)
			stall(pe, cy);
		return;
	}
	buf_push(f, fifo + BUF_OUT, pe->val, pe->tag);
	set_busy(f, pe, false);
	cy->work = true;
}

/* The memory access of a LOAD or ATOMIC firing: *@v the value read. */
static int load_access(const struct loom_fabric *f, const struct fab_pe *pe,
		       struct fab_run *r, unsigned fifo, uint64_t *v)
{
	const struct loom_fabric_env *env = r->env;
	uint64_t va = buf_peek(f, fifo);
	int st;

	if (pe->op == LOOM_OP_LOAD) {
		st = env->load ? env->load(env->opaque, va, access_size(pe), v) :
				 LOOM_STATUS_DMA_ERROR;
		if (!st)
			r->c.mem_reads++;
		return st;
	}
	st = env->atomic ? env->atomic(env->opaque, va, access_size(pe),
				       pe->imm, pe->type,
				       buf_peek(f, fifo + 1), v) :
			   LOOM_STATUS_DMA_ERROR;
	if (!st) {
		r->c.mem_reads++;
		r->c.mem_writes++;
	}
	return st;
}

static int step_load(struct loom_fabric *f, struct fab_pe *pe,
		     struct fab_run *r, struct fab_cycle *cy, unsigned fifo)
{
	unsigned have;
	uint64_t v = 0;
	int st;

	if (pe->busy) {
		load_deliver(f, pe, cy, fifo, false);
		return LOOM_STATUS_OK;
	}
	/* a LOAD's one input alone: the hot path reads one occupancy */
	have = pe->need == IN_A ? (f->cnt0[fifo] != 0) * IN_A :
				  inputs_present(f, fifo) & pe->need;
	if (have != pe->need) {
		if (have)
			cy->waiting++;
		return LOOM_STATUS_OK;
	}
	if (cy->mem_used >= f->p.mem_ports) {
		stall(pe, cy);
		return LOOM_STATUS_OK;
	}
	cy->mem_used++;
	st = load_access(f, pe, r, fifo, &v);
	if (st)
		return st;	/* inputs stay: the dump shows them */
	pe->tag = buf_tag(f, fifo);
	buf_pop(f, fifo);
	if (pe->need & IN_B)	/* ATOMIC's operand */
		buf_pop(f, fifo + 1);
	fired(pe, cy);
	pe->val = typed(pe, v);
	pe->due = f->cycle + f->p.load_latency - 1;
	set_busy(f, pe, true);
	load_deliver(f, pe, cy, fifo, true);
	return LOOM_STATUS_OK;
}

/* STREAM and INVARIANT: emit the next token of the sequence. */
static void gen_emit(struct loom_fabric *f, struct fab_pe *pe,
		     struct fab_cycle *cy, unsigned fifo)
{
	if (!had_room(f, fifo + BUF_OUT)) {
		stall(pe, cy);
		return;
	}
	buf_push(f, fifo + BUF_OUT, pe->val, pe->tag);
	pe->val += pe->step;
	set_busy(f, pe, --pe->left != 0);
	fired(pe, cy);
}

static void step_gen(struct loom_fabric *f, struct fab_pe *pe,
		     struct fab_cycle *cy, unsigned fifo)
{
	unsigned have = inputs_present(f, fifo) & pe->need;
	bool stream = pe->op == LOOM_OP_STREAM;
	uint64_t b, count;

	if (pe->busy) {
		gen_emit(f, pe, cy, fifo);
		return;
	}
	if (have != pe->need) {
		if (have)
			cy->waiting++;
		return;
	}
	b = operand_b(f, pe, fifo);
	count = stream ? buf_peek(f, fifo + 2) : b;
	if (!count_empty(count) && !had_room(f, fifo + BUF_OUT)) {
		stall(pe, cy);
		return;
	}
	pe->val = buf_peek(f, fifo);
	pe->tag = buf_tag(f, fifo);
	pe->step = stream ? b : 0;
	pe->left = count;
	pop_inputs(f, fifo, pe->need);
	if (count_empty(count))
		fired(pe, cy);
	else
		gen_emit(f, pe, cy, fifo);
}

/* REDUCE while folding: one value of C per cycle, the last emits. */
static void reduce_fold(struct loom_fabric *f, struct fab_pe *pe,
			struct fab_cycle *cy, unsigned fifo)
{
	if (!(inputs_present(f, fifo) & IN_C)) {
		cy->waiting++;
		return;
	}
	if (pe->left == 1 && !had_room(f, fifo + BUF_OUT)) {
		stall(pe, cy);
		return;
	}
	pe->val = loom_alu(pe->imm, pe->type, pe->val, buf_pop(f, fifo + 2), 0);
	fired(pe, cy);
	if (--pe->left)
		return;
	buf_push(f, fifo + BUF_OUT, pe->val, pe->tag);
	set_busy(f, pe, false);
}

static void step_reduce(struct loom_fabric *f, struct fab_pe *pe,
			struct fab_cycle *cy, unsigned fifo)
{
	unsigned have = inputs_present(f, fifo) & pe->need;
	uint64_t count;

	if (pe->busy) {
		reduce_fold(f, pe, cy, fifo);
		return;
	}
	if (have != pe->need) {
		if (have)
			cy->waiting++;
		return;
	}
	count = operand_b(f, pe, fifo);
	if (count_empty(count) && !had_room(f, fifo + BUF_OUT)) {
		stall(pe, cy);
		return;
	}
	pe->val = typed(pe, buf_peek(f, fifo));
	pe->tag = buf_tag(f, fifo);
	pe->left = count;
	pop_inputs(f, fifo, pe->need);
	fired(pe, cy);
	if (count_empty(count))
		buf_push(f, fifo + BUF_OUT, pe->val, pe->tag);
	else
		set_busy(f, pe, true);
}

static inline int step_slot(struct loom_fabric *f, struct fab_pe *pe,
		     struct fab_run *r, struct fab_cycle *cy)
{
	switch (pe->cls) {
	case PE_SIMPLE:
		return step_simple(f, pe, r, cy, pe->fifo);
	case PE_LOAD:
		return step_load(f, pe, r, cy, pe->fifo);
	case PE_GEN:
		step_gen(f, pe, cy, pe->fifo);
		break;
	default:
		step_reduce(f, pe, cy, pe->fifo);
		break;
	}
	return LOOM_STATUS_OK;
}

/* One PE's cycle: its slots in round-robin order until one fires. */
static int step_group(struct loom_fabric *f, struct fab_group *g,
		      struct fab_run *r, struct fab_cycle *cy)
{
	unsigned j;

	if (g->n == 1)
		return step_slot(f, &f->pe[g->first], r, cy);
	for (j = 0; j < g->n; j++) {
		unsigned k = (g->next + j) % g->n;
		struct fab_pe *pe = &f->pe[g->first + k];
		uint64_t before = pe->firings;
		int st = step_slot(f, pe, r, cy);

		if (st)
			return st;
		if (pe->firings != before) {
			g->next = (k + 1) % g->n;
			break;
		}
	}
	return LOOM_STATUS_OK;
}

static int step_pes(struct loom_fabric *f, struct fab_run *r,
		    struct fab_cycle *cy)
{
	unsigned i;
	int st = LOOM_STATUS_OK;

	for (i = 0; i < f->ngroup && !st; i++)
		st = step_group(f, &f->group[i], r, cy);
	return st;
}

/* ----------------------------------------------------------- switches --- */

static bool dsts_have_room(const struct loom_fabric *f,
			   const struct fab_src *s)
{
	const uint16_t *dst = f->dsts + s->first;
	unsigned i;

	for (i = 0; i < s->ndst; i++)
		if (!had_room(f, dst[i]))
			return false;
	return true;
}

/* Whether source @s may move: a token, and room in all it feeds. */
BUF_FN bool src_ready(const struct loom_fabric *f, const struct fab_src *s)
{
	return f->cnt0[s->buf] && dsts_have_room(f, s);
}

BUF_FN void move_one(struct loom_fabric *f, const struct fab_src *s)
{
	uint32_t tag = buf_tag(f, s->buf);
	uint64_t v = buf_pop(f, s->buf);
	unsigned j;

	for (j = 0; j < s->ndst; j++) {
		unsigned d = f->dsts[s->first + j];

		if (d == f->drop)
			f->completions++;
		else
			buf_push(f, d, v, tag);
	}
}

/*
 * The sources that feed links of several channels, each physical link
 * moving one token a cycle: considered from f->turn on, wrapping around,
 * a ready source moves unless one of its shared links moved a token
 * already this cycle (uapi "Link channels").  f->turn advances by one a
 * cycle, so each ready source comes first within f->ncont cycles.  Out
 * of line: the run loop of a configuration without channels stays as it
 * was (10 instructions a cycle more when inlined).
 */
static __attribute__((noinline)) bool move_contending(struct loom_fabric *f)
{
	const struct fab_src *src = f->src + f->nfree;
	unsigned n = f->ncont, i, j;
	bool moved = false;

	for (i = 0; i < n; i++)
		f->taken[f->cont[i].tile] = 0;
	for (j = 0, i = f->turn; j < n; j++, i = i + 1 == n ? 0 : i + 1) {
		const struct fab_cont *fc = &f->cont[i];

		if (!src_ready(f, &src[i]) || (f->taken[fc->tile] & fc->links))
			continue;
		f->taken[fc->tile] |= fc->links;
		move_one(f, &src[i]);
		moved = true;
	}
	f->turn = f->turn + 1 == n ? 0 : f->turn + 1;
	return moved;
}

/*
 * The free sources' loop is written out, not made of src_ready() and
 * move_one(): GCC then compiles the whole run loop better (bench/
 * fabric_bench under callgrind: 25 instructions a cycle fewer).
 */
static bool move_tokens(struct loom_fabric *f)
{
	bool moved = false;
	unsigned i, j;

	for (i = 0; i < f->nfree; i++) {
		const struct fab_src *s = &f->src[i];
		uint32_t tag;
		uint64_t v;

		if (!f->cnt0[s->buf] || !dsts_have_room(f, s))
			continue;
		tag = buf_tag(f, s->buf);
		v = buf_pop(f, s->buf);
		for (j = 0; j < s->ndst; j++) {
			unsigned d = f->dsts[s->first + j];

			if (d == f->drop)
				f->completions++;
			else
				buf_push(f, d, v, tag);
		}
		moved = true;
	}
	if (f->ncont)
		moved |= move_contending(f);
	return moved;
}

/* ---------------------------------------------------------- injection --- */

static uint64_t port_value(const struct fab_port *p, const struct fab_run *r)
{
	switch (p->kind) {
	case LOOM_PORT_OPERAND:
		return r->d->operands[p->index];
	case LOOM_PORT_COORD:
		return r->coord[p->index];
	case LOOM_PORT_PAYLOAD:
		return r->payload;
	}
	return 0;	/* CTRL: a none token */
}

/* Coordinate 0 runs over [dim0_begin, dim0_end): the block, or all of it. */
static uint64_t dim0_begin(const struct loom_dispatch *d)
{
	return d->block ? (uint64_t)d->begin : 0;
}

static uint64_t dim0_end(const struct loom_dispatch *d)
{
	return (uint64_t)(d->block ? d->end : d->extents[0]);
}

/*
 * Steps the row-major odometer, or to the next item; false once every
 * instance or item is out.
 */
static bool next_instance(struct fab_run *r)
{
	const struct loom_dispatch *d = r->d;
	unsigned k;

	if (d->items)
		return ++r->item < d->count;
	for (k = d->rank; k-- > 1;) {
		if (++r->coord[k] < (uint64_t)d->extents[k])
			return true;
		r->coord[k] = 0;
	}
	return d->rank && ++r->coord[0] < dim0_end(d);
}

/*
 * An item's payload is read when the item is injected, not before the run:
 * a hostile count ends the run at the first payload that cannot be read
 * and costs nothing up front.
 */
static int read_payload(struct fab_run *r)
{
	const struct loom_fabric_env *env = r->env;

	if (!env->payload)
		return LOOM_STATUS_DMA_ERROR;
	return env->payload(env->opaque, r->item, &r->payload);
}

/* Injects the next instance or item; *@work when it did. */
static int inject(struct loom_fabric *f, struct fab_run *r, bool *work)
{
	uint32_t tag = r->d->items ? r->item : 0;
	unsigned i;
	int st;

	if (r->injected)
		return LOOM_STATUS_OK;
	for (i = 0; i < f->nport; i++)
		if (!had_room(f, f->port[i].buf))
			return LOOM_STATUS_OK;
	if (r->d->items) {
		st = read_payload(r);
		if (st)
			return st;
		r->c.items++;
	} else {
		r->c.instances++;
	}
	for (i = 0; i < f->nport; i++)
		buf_push(f, f->port[i].buf, port_value(&f->port[i], r), tag);
	r->injected = !next_instance(r);
	*work = true;
	return LOOM_STATUS_OK;
}

/* --------------------------------------------------------------- run --- */

/* The ports must match what the dispatch provides (struct loom_dispatch). */
static bool dispatch_ok(const struct loom_fabric *f,
			const struct loom_dispatch *d)
{
	unsigned i;

	if (d->num_operands > LOOM_MAX_OPERANDS || d->rank > LOOM_MAX_RANK ||
	    (d->num_operands && !d->operands) ||
	    (!d->items && d->rank && !d->extents))
		return false;
	for (i = 0; !d->items && i < d->rank; i++)
		if (d->extents[i] < 0)
			return false;
	if (d->block && (d->items || !d->rank || d->begin < 0 ||
			 d->begin > d->end || d->end > d->extents[0]))
		return false;
	for (i = 0; i < f->npe; i++)
		if ((f->pe[i].flags & LOOM_TILE_IMM_OPERAND) &&
		    f->pe[i].imm >= d->num_operands)
			return false;
	for (i = 0; i < f->nport; i++) {
		const struct fab_port *p = &f->port[i];

		if ((p->kind == LOOM_PORT_OPERAND && p->index >= d->num_operands) ||
		    (p->kind == LOOM_PORT_COORD &&
		     (d->items || p->index >= d->rank)) ||
		    (p->kind == LOOM_PORT_PAYLOAD && !d->items))
			return false;
	}
	return true;
}

static void reset_state(struct loom_fabric *f)
{
	unsigned i, nb = f->drop + 1 + LOOM_MAX_PORTS;

	memset(f->cnt, 0, nb);
	memset(f->head, 0, nb);
	for (i = 0; i < f->npe; i++) {
		struct fab_pe *pe = &f->pe[i];

		pe->busy = false;
		pe->firings = 0;
		pe->stalls = 0;
	}
	for (i = 0; i < f->ngroup; i++)
		f->group[i].next = 0;
	f->cycle = 0;
	f->turn = 0;
	f->tokens = 0;
	f->busy = 0;
	f->completions = 0;
	f->last_blocked = 0;
	f->last_waiting = 0;
}

void loom_fabric_reset(struct loom_fabric *f)
{
	f->configured = false;
	reset_state(f);
}

static bool empty_domain(const struct loom_dispatch *d)
{
	unsigned k;

	if (d->items)
		return d->count == 0;
	for (k = 0; k < d->rank; k++)
		if (d->extents[k] == 0)
			return true;
	return d->block && d->begin == d->end;
}

/* One cycle; LOOM_STATUS_OK when the run goes on. */
static int run_cycle(struct loom_fabric *f, struct fab_run *r)
{
	struct fab_cycle cy = { 0 };
	int st;

	memcpy(f->cnt0, f->cnt, f->nbuf);
	f->cycle++;
	r->c.cycles++;
	st = step_pes(f, r, &cy);
	if (st)
		return st;
	f->last_blocked = cy.blocked;
	f->last_waiting = cy.waiting;
	cy.work |= move_tokens(f);
	st = inject(f, r, &cy.work);
	if (st)
		return st;
	if (cy.work && r->env->progress)
		__atomic_fetch_add(r->env->progress, 1, __ATOMIC_RELAXED);
	if (!cy.work && !cy.counting)
		return LOOM_STATUS_DEADLOCK;	/* the state cannot change */
	return LOOM_STATUS_OK;
}

/* Firings and stalls are kept per PE (the dump needs them): sum them. */
static void pe_totals(const struct loom_fabric *f, struct loom_hw_counters *c)
{
	unsigned i;

	for (i = 0; i < f->npe; i++) {
		c->firings += f->pe[i].firings;
		c->stalls += f->pe[i].stalls;
	}
}

static void add_counters(struct loom_hw_counters *to,
			 const struct loom_hw_counters *c)
{
	to->cycles += c->cycles;
	to->firings += c->firings;
	to->stalls += c->stalls;
	to->instances += c->instances;
	to->items += c->items;
	to->spawns += c->spawns;
	to->mem_reads += c->mem_reads;
	to->mem_writes += c->mem_writes;
}

int loom_fabric_run(struct loom_fabric *f, const struct loom_dispatch *d,
		    const struct loom_fabric_env *env,
		    struct loom_hw_counters *counters)
{
	struct fab_run r = { .d = d, .env = env };
	int st = LOOM_STATUS_OK;

	reset_state(f);
	if (!f->configured)
		return LOOM_STATUS_NO_CONFIG;
	if (!dispatch_ok(f, d))
		return LOOM_STATUS_BAD_PACKET_FIELD;
	r.injected = empty_domain(d);
	if (!d->items && d->rank)
		r.coord[0] = dim0_begin(d);
	for (;;) {
		if (r.injected && !f->tokens && !f->busy)
			break;
		if (env->stop && __atomic_load_n(env->stop, __ATOMIC_RELAXED)) {
			st = LOOM_STATUS_STOPPED;
			break;
		}
		if (env->budget && *env->budget && !--*env->budget)
			env->pause(env->opaque);
		st = run_cycle(f, &r);
		if (st)
			break;
	}
	pe_totals(f, &r.c);
	if (counters)
		add_counters(counters, &r.c);
	return st;
}

/* ------------------------------------------------------------- dump --- */

static uint8_t sat8(unsigned v)
{
	return v > 255 ? 255 : v;
}

void loom_fabric_dump(const struct loom_fabric *f, struct loom_hw_dump *dump,
		      struct loom_hw_dump_tile *tiles)
{
	unsigned t, k;

	dump->width = f->p.width;
	dump->height = f->p.height;
	dump->blocked = f->last_blocked;
	dump->waiting = f->last_waiting;
	for (t = 0; t < f->ntiles; t++) {
		struct loom_hw_dump_tile *dt = &tiles[t];
		const uint8_t *cnt = &f->cnt[t * f->tile_bufs];
		int i = f->group_of_tile[t];
		unsigned s;

		memset(dt, 0, sizeof(*dt));
		for (s = 0; f->configured && i >= 0 && s < f->group[i].n; s++) {
			const struct fab_pe *pe = &f->pe[f->group[i].first + s];

			dt->firings += (uint32_t)pe->firings;
			dt->stalls += (uint32_t)pe->stalls;
		}
		/* sums over slots stay below 4 * 255: saturate the u8s */
		for (s = 0; s < f->slots; s++) {
			for (k = 0; k < 3; k++)
				dt->fifo[k] = sat8(dt->fifo[k] +
						   cnt[BUF_SLOT(s) + BUF_A + k]);
			dt->out = sat8(dt->out + cnt[BUF_SLOT(s) + BUF_OUT]);
		}
		/* a link's count is the sum over its channels */
		for (k = 0; k < 4; k++) {
			unsigned ch, sum = 0;

			for (ch = 0; ch < f->chans; ch++)
				sum += f->cnt[link_buf(f, t, k, ch)];
			dt->links[k] = sat8(sum);
		}
	}
}

uint64_t loom_fabric_slot_firings(const struct loom_fabric *f, unsigned tile,
				  unsigned slot)
{
	int i = tile < f->ntiles ? f->group_of_tile[tile] : -1;
	unsigned fifo = tile * f->tile_bufs + BUF_SLOT(slot) + BUF_A;
	unsigned s;

	for (s = 0; f->configured && i >= 0 && s < f->group[i].n; s++)
		if (f->pe[f->group[i].first + s].fifo == fifo)
			return f->pe[f->group[i].first + s].firings;
	return 0;
}
