// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * place.c: greedy placement, routed annealing, negotiated-congestion
 * routing.
 *
 * PEs are placed in topological order on the free tile closest to their
 * already placed inputs (an input port not yet placed pulls towards the
 * nearest edge); a port goes to the free edge position closest to its
 * first consumer.  Each output then is routed as a tree, PathFinder-style
 * (route_all()): values may share a link while the rounds go on, at a
 * price that grows round by round, until no link carries two values (an
 * output selects exactly one source, so a link carries one value per
 * direction).  When they do not come apart, the graph is placed again
 * with random perturbation, a few times (PLACE_ATTEMPTS).
 *
 * When the graph has more operations than the fabric has tiles, or does
 * not route spatially, operations are packed into groups that share a
 * temporal PE (uapi "Temporal PEs"), at most @cap per group: an operation
 * joins the group of one of its producers (the value then reaches it
 * without a link) or the group whose outside inputs grow least, when it
 * has room and takes few outside values, else opens a group, else joins
 * the least filled (group_pes()).  Groups are placed and routed as single
 * operations were.  When no greedy placement routes, routed annealing
 * searches from the greedy one (routed_anneal()): every state it visits
 * is routed, operations move between tiles (so groups change) and ports
 * between edge positions, and the edge positions left free take copies
 * of the busiest ports.  @cap starts at the initiation interval the graph
 * cannot beat anyway (its memory bound, or operations over tiles) and
 * grows to LOOM_PE_SLOTS until a placement routes; at each @cap a copy of
 * the graph whose operands are CONSTs is tried too (operands_to_consts();
 * first, in a graph with loops).
 * A pipelined mapping then gets MOVs in free slots where a fork's early
 * branch would stall it (buffer_inputs()).  When nothing maps, the mapping
 * of a smaller fabric is embedded (map_smaller()): what maps on 4x4 maps
 * on every larger fabric.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deadlock.h"
#include "loom_image.h"
#include "measure.h"
#include "place.h"

struct pr {
	const struct graph *g;
	struct placement *p;
	unsigned w, h;
	int *where;			/* node: tile, or port binding index */
	int tile_node[PLACE_MAX_TILES];	/* group on each tile, or -1 */
	int *group;			/* PE node: its group */
	int *slot;			/* PE node: its slot in the group */
	int ngroups;
	int *links_in, *links_out;	/* group: outside values in, out */
	int max_inputs;			/* outside values a group may take */
	int strategy;			/* enum group_strategy */
	bool edge_used[4][LOOM_FABRIC_MAX_DIM];
	int *use_at, *uses;		/* node s's consumers: uses[use_at[s]..
					   use_at[s + 1]), as node * 3 + input */
	int *hops;			/* node * 3 + input: route length */
	int *arrive;			/* node * 3 + input: arrival cycle */
	int *occ;			/* link (tile * 4 + dir): values on it */
	int chans;			/* values a link carries: its channels */
	signed char *chan;		/* node * tiles + tile: the channel of
					   the link it arrives by */
	float *hist;			/* link: its overuse in earlier rounds */
	signed char *reached;		/* node * tiles + tile: how its value
					   gets there (ROUTE_*, or the
					   direction of the last link) */
	int *depth;			/* node * tiles + tile: links from the
					   value's origin */
	int bind_node[LOOM_MAX_PORTS];	/* port binding: its port node */
	int nb[4 * PLACE_MAX_TILES];	/* tile * 4 + direction: neighbour */
	int x[PLACE_MAX_TILES], y[PLACE_MAX_TILES];	/* each tile's */
	long pairs;			/* pairs of values sharing a link
					   beyond its channels */
	int nlinks;			/* links the routes use */
	float wire;			/* their cost, 1 + history each */
	bool additive;			/* link_cost(): 1 + history + pres x
					   values (routed annealing's) */
	unsigned seed;
	int attempt;
	const atomic_int *stop;		/* the first search of walk_caps()
					   that mapped, or NULL */
	int task;			/* this search's there */
};


/* Slot @k of tile @t. */
static struct loom_tile_config *slot_cfg(struct placement *p, int t, int k)
{
	return &p->tiles[t * p->slots + k];
}

static unsigned rnd(struct pr *r)
{
	r->seed = r->seed * 1103515245U + 12345U;
	return (r->seed >> 16) & 0x7fff;
}

static int iabs(int v)
{
	return v < 0 ? -v : v;
}

static int dist(struct pr *r, int a, int b)
{
	return iabs(r->x[a] - r->x[b]) + iabs(r->y[a] - r->y[b]);
}

static unsigned side_len(struct pr *r, unsigned side)
{
	return side == LOOM_DIR_N || side == LOOM_DIR_S ? r->w : r->h;
}

/* The tile whose link crosses the edge at (side, pos). */
static int edge_tile(struct pr *r, unsigned side, unsigned pos)
{
	switch (side) {
	case LOOM_DIR_N: return pos;
	case LOOM_DIR_S: return (r->h - 1) * r->w + pos;
	case LOOM_DIR_W: return pos * r->w;
	default: return pos * r->w + r->w - 1;
	}
}

static int to_edge(struct pr *r, int t)
{
	int x = t % r->w, y = t / r->w;
	int d = x < y ? x : y;

	if ((int)r->w - 1 - x < d)
		d = r->w - 1 - x;
	if ((int)r->h - 1 - y < d)
		d = r->h - 1 - y;
	return d;
}

/* ------------------------------------------------------------ place --- */

/* Tile @t's neighbour in direction @dir, or -1 past the edge. */
static int neighbour(struct pr *r, int t, unsigned dir)
{
	return r->nb[t * 4 + dir];
}

static void index_neighbours(struct pr *r)
{
	for (int t = 0; t < (int)(r->w * r->h); t++) {
		int x = t % r->w, y = t / r->w;

		r->x[t] = x;
		r->y[t] = y;
		r->nb[t * 4 + LOOM_DIR_N] = y > 0 ? t - (int)r->w : -1;
		r->nb[t * 4 + LOOM_DIR_S] = y < (int)r->h - 1 ? t + (int)r->w : -1;
		r->nb[t * 4 + LOOM_DIR_W] = x > 0 ? t - 1 : -1;
		r->nb[t * 4 + LOOM_DIR_E] = x < (int)r->w - 1 ? t + 1 : -1;
	}
}

static int input_cost(struct pr *r, const struct g_node *n, int t)
{
	int cost = 0;

	for (int k = 0; k < 3; k++) {
		const struct g_node *src;
		int s = n->in[k];

		if (!(graph_inputs(n) & (1U << k)))
			continue;
		src = &r->g->nodes[s];
		if (src->kind == G_PE && r->where[s] < 0)
			continue;	/* a member of this group, or later */
		if (src->kind == G_PE)
			cost += 2 * dist(r, t, r->where[s]);
		else if (r->where[s] >= 0)
			cost += 2 * dist(r, t, edge_tile(r,
				r->p->ports[r->where[s]].side,
				r->p->ports[r->where[s]].pos)) + 2;
		else
			cost += 2 * to_edge(r, t) + 2;
	}
	return cost;
}

static int degree(struct pr *r, int t)
{
	int n = 0;

	for (unsigned d = 0; d < 4; d++)
		n += neighbour(r, t, d) >= 0;
	return n;
}

/* Cost of putting the group of node @i on tile @t. */
static int tile_cost(struct pr *r, int i, int t)
{
	int gi = r->group[i], deg = degree(r, t), cost = 0;

	/* a corner has two links each way, a tile on the edge three */
	if (r->links_in[gi] > deg)
		cost += 16 * (r->links_in[gi] - deg);
	if (r->links_out[gi] > deg)
		cost += 16 * (r->links_out[gi] - deg);

	for (int j = i; j < r->g->num; j++)
		if (r->g->nodes[j].kind == G_PE && r->group[j] == r->group[i])
			cost += input_cost(r, &r->g->nodes[j], t);
	/* crowded tiles leave no links to route through: spread out */
	for (unsigned d = 0; d < 4; d++) {
		int u = neighbour(r, t, d);

		if (u >= 0 && r->tile_node[u] >= 0)
			cost += r->attempt % 4;
	}
	if (r->attempt)
		cost += rnd(r) % (2 * r->attempt + 1);
	return cost;
}

static void place_port(struct pr *r, int node, int near)
{
	struct loom_port_binding *b;
	int best = -1, bs = 0, bp = 0;

	for (unsigned side = 0; side < 4; side++)
		for (unsigned pos = 0; pos < side_len(r, side); pos++) {
			int c;

			if (r->edge_used[side][pos])
				continue;
			c = 4 * dist(r, edge_tile(r, side, pos), near);
			if (r->attempt)
				c += rnd(r) % (r->attempt + 1);
			if (best < 0 || c < best) {
				best = c;
				bs = side;
				bp = pos;
			}
		}
	r->edge_used[bs][bp] = true;
	b = &r->p->ports[r->p->num_ports];
	b->side = bs;
	b->pos = bp;
	b->kind = r->g->nodes[node].port_kind;
	b->index = r->g->nodes[node].port_index;
	r->bind_node[r->p->num_ports] = node;
	r->where[node] = r->p->num_ports++;
}

/*
 * Later attempts on a roomy fabric leave tiles free between PEs, as
 * channels for the routes: a checkerboard, then one tile in four.
 */
static bool allowed(struct pr *r, int t)
{
	int x = t % r->w, y = t / r->w;
	int pes = r->ngroups;
	int spread = r->attempt % 3;

	if (spread == 2 && (int)(r->w * r->h) >= 4 * pes)
		return x % 2 == 0 && y % 2 == 0;
	if (spread >= 1 && (int)(r->w * r->h) >= 2 * pes)
		return (x + y) % 2 == 0;
	return true;
}

/* Places the group of node @i (its first member) and its input ports. */
static void place_pe(struct pr *r, int i)
{
	int best = -1, bt = 0;

	for (int t = 0; t < (int)(r->w * r->h); t++) {
		int c;

		if (r->tile_node[t] >= 0 || !allowed(r, t))
			continue;
		c = tile_cost(r, i, t);
		if (best < 0 || c < best) {
			best = c;
			bt = t;
		}
	}
	r->tile_node[bt] = r->group[i];
	for (int j = i; j < r->g->num; j++) {
		const struct g_node *n = &r->g->nodes[j];

		if (n->kind != G_PE || r->group[j] != r->group[i])
			continue;
		r->where[j] = bt;
		for (int k = 0; k < 3; k++)
			if ((graph_inputs(n) & (1U << k)) &&
			    r->g->nodes[n->in[k]].kind == G_PORT &&
			    r->where[n->in[k]] < 0)
				place_port(r, n->in[k], bt);
	}
}

static void place_all(struct pr *r)
{
	memset(r->p->tiles, 0, sizeof(r->p->tiles));
	memset(r->edge_used, 0, sizeof(r->edge_used));
	r->p->num_ports = 0;
	for (int t = 0; t < PLACE_MAX_TILES; t++)
		r->tile_node[t] = -1;
	for (int i = 0; i < r->g->num; i++)
		r->where[i] = -1;
	for (int i = 0; i < r->g->num; i++) {
		const struct g_node *n = &r->g->nodes[i];
		struct loom_tile_config *tc;

		if (n->kind != G_PE)
			continue;
		if (r->where[i] < 0)
			place_pe(r, i);
		tc = slot_cfg(r->p, r->where[i], r->slot[i]);
		tc->op = n->op;
		tc->type = n->type;
		tc->flags = (n->imm_b ? LOOM_TILE_IMM_B : 0) |
			    (n->imm_operand ? LOOM_TILE_IMM_OPERAND : 0);
		tc->imm = n->imm;
	}
}

/* ------------------------------------------------------------ route --- */

/*
 * Negotiated congestion (PathFinder): each value is routed as a tree, by
 * A* over the links from every tile it already reaches to each of its
 * consumers in turn (from each of its bindings, for a port bound at
 * several edge positions).  A link may be claimed by several values while
 * routing goes on, at a price: it costs more the more other values use it
 * now (the present factor, which grows round after round) and the more it
 * was overused in earlier rounds (its history).  Every round rips up and
 * reroutes every value, until no link carries two values (an output
 * selects exactly one source), or ROUTE_ROUNDS have passed, or
 * ROUTE_STALL_ROUNDS without fewer overused links than before (the
 * placement is then given up sooner).
 */
#define ROUTE_ROUNDS		80
#define ROUTE_STALL_ROUNDS	20
#define ROUTE_PRES_FIRST	0.5f
#define ROUTE_PRES_GROWTH	1.3f
#define ROUTE_HIST_STEP		1.0f
#define LINK_SHARE_COST		0.25f

/* r->reached[] of a tile a value does not reach; ROUTE_SOURCE: its origin */
#define ROUTE_UNREACHED		(-1)
#define ROUTE_SOURCE		4

/* The switch source through which a link in direction @dir arrives. */
static uint8_t arrives_as(unsigned dir)
{
	return LOOM_SRC_N + (dir + 2) % 4;
}

static int fanout(const struct pr *r, int s)
{
	return r->use_at[s + 1] - r->use_at[s];
}

/* Indexes every node's consumers (r->use_at, r->uses), in node order. */
static void index_uses(struct pr *r)
{
	const struct graph *g = r->g;
	int n = 0;

	for (int s = 0; s < g->num; s++) {
		r->use_at[s] = n;
		for (int i = s + 1; i < g->num; i++)
			for (int k = 0; k < 3; k++)
				if ((graph_inputs(&g->nodes[i]) & (1U << k)) &&
				    g->nodes[i].in[k] == s)
					r->uses[n++] = i * 3 + k;
	}
	r->use_at[g->num] = n;
}

/* The tile where node @s's value enters the fabric, and its source there. */
static int source_tile(struct pr *r, int s, uint8_t *src)
{
	const struct loom_port_binding *b;

	if (r->g->nodes[s].kind == G_PE) {
		*src = r->p->slots == 1 ? LOOM_SRC_PE : LOOM_SRC_SLOT(r->slot[s]);
		return r->where[s];
	}
	b = &r->p->ports[r->where[s]];
	*src = LOOM_SRC_N + b->side;
	return edge_tile(r, b->side, b->pos);
}

/*
 * The binding of port node @s whose edge link enters tile @t, or -1 (a
 * port may be bound at several edge positions: each is a source of it).
 */
static int binding_at(struct pr *r, int s, int t)
{
	for (unsigned b = 0; b < r->p->num_ports; b++)
		if (r->bind_node[b] == s &&
		    edge_tile(r, r->p->ports[b].side, r->p->ports[b].pos) == t)
			return b;
	return -1;
}

/* The switch source of value @s at tile @t, which it reaches. */
static uint8_t source_at(struct pr *r, int s, int t)
{
	signed char how = r->reached[s * (int)(r->w * r->h) + t];
	uint8_t src;

	if (how == ROUTE_SOURCE && r->g->nodes[s].kind == G_PE) {
		source_tile(r, s, &src);
		return src;
	}
	if (how == ROUTE_SOURCE)
		return LOOM_SRC_N + r->p->ports[binding_at(r, s, t)].side;
	if (r->p->channels)
		return LOOM_SRC_CHAN((how + 2) % 4,
				     r->chan[s * (int)(r->w * r->h) + t]);
	return arrives_as(how);
}

/* Marks the tiles where value @s enters the fabric as its tree's roots. */
static void mark_sources(struct pr *r, int s)
{
	int nt = r->w * r->h;
	uint8_t src;

	if (r->g->nodes[s].kind == G_PE) {
		int t = source_tile(r, s, &src);

		r->reached[s * nt + t] = ROUTE_SOURCE;
		r->depth[s * nt + t] = 0;
		return;
	}
	for (unsigned b = 0; b < r->p->num_ports; b++) {
		int t;

		if (r->bind_node[b] != s)
			continue;
		t = edge_tile(r, r->p->ports[b].side, r->p->ports[b].pos);
		r->reached[s * nt + t] = ROUTE_SOURCE;
		r->depth[s * nt + t] = 0;
	}
}

/* A binary min-heap of tiles by cost, for reach_tile()'s A*. */
struct heap {
	int n;
	float key[5 * PLACE_MAX_TILES];
	int tile[5 * PLACE_MAX_TILES];
};

static void heap_push(struct heap *h, float key, int tile)
{
	int i = h->n++;

	while (i > 0 && h->key[(i - 1) / 2] > key) {
		h->key[i] = h->key[(i - 1) / 2];
		h->tile[i] = h->tile[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->key[i] = key;
	h->tile[i] = tile;
}

static int heap_pop(struct heap *h, float *key)
{
	int top = h->tile[0], i = 0;
	float last = h->key[--h->n];
	int last_tile = h->tile[h->n];

	*key = h->key[0];
	for (;;) {
		int c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->key[c + 1] < h->key[c])
			c++;
		if (h->key[c] >= last)
			break;
		h->key[i] = h->key[c];
		h->tile[i] = h->tile[c];
		i = c;
	}
	h->key[i] = last;
	h->tile[i] = last_tile;
	return top;
}

/*
 * The values already on a link of @occ that one more is one too many
 * with: a link of r->chans channels carries that many for free.
 */
static int excess(const struct pr *r, int occ)
{
	return occ >= r->chans ? occ - r->chans + 1 : 0;
}

/* A value takes link @l. */
static void occupy(struct pr *r, int l)
{
	r->pairs += excess(r, r->occ[l]++);
	r->nlinks++;
	r->wire += 1.0f + r->hist[l];
}

/* A value leaves link @l. */
static void vacate(struct pr *r, int l)
{
	r->pairs -= excess(r, --r->occ[l]);
	r->nlinks--;
	r->wire -= 1.0f + r->hist[l];
}

/*
 * What a value pays for link @l (tile * 4 + direction) in this round.  A
 * free channel costs a little for each value on the link already: the
 * link moves one token a cycle for all of them.
 */
static float link_cost(struct pr *r, int l, float pres)
{
	float over = (float)excess(r, r->occ[l]);
	float share = r->chans > 1 ? LINK_SHARE_COST * (float)r->occ[l] : 0.0f;

	if (r->additive)
		return 1.0f + r->hist[l] + pres * over + share;
	return (1.0f + r->hist[l]) * (1.0f + pres * over) + share;
}

/*
 * Extends value @s's tree to tile @dst along the cheapest path from any
 * tile it reaches: A*, the tiles ordered by their cost so far plus their
 * distance to @dst (a link costs at least 1, so the distance never
 * overestimates and the path found is a cheapest one).
 */
static void reach_tile(struct pr *r, int s, int dst, float pres)
{
	int nt = r->w * r->h;
	signed char *reached = &r->reached[s * nt];
	int *depth = &r->depth[s * nt];
	float cost[PLACE_MAX_TILES];
	int prev[PLACE_MAX_TILES], path[PLACE_MAX_TILES], len = 0;
	struct heap h;

	h.n = 0;
	for (int t = 0; t < nt; t++) {
		cost[t] = reached[t] != ROUTE_UNREACHED ? 0.0f : 1e30f;
		prev[t] = -1;
		if (reached[t] != ROUTE_UNREACHED)
			heap_push(&h, (float)dist(r, t, dst), t);
	}
	while (h.n) {
		float d;
		int t = heap_pop(&h, &d);

		if (d > cost[t] + (float)dist(r, t, dst))
			continue;
		if (t == dst)
			break;
		for (unsigned dir = 0; dir < 4; dir++) {
			int u = neighbour(r, t, dir), l = t * 4 + dir;
			float c;

			if (u < 0 || reached[u] != ROUTE_UNREACHED)
				continue;
			c = cost[t] + link_cost(r, l, pres);
			if (c < cost[u]) {
				cost[u] = c;
				prev[u] = l;
				heap_push(&h, c + (float)dist(r, u, dst), u);
			}
		}
	}
	for (int t = dst; reached[t] == ROUTE_UNREACHED; t = prev[t] / 4)
		path[len++] = prev[t];
	while (len--) {
		int l = path[len], t = l / 4, dir = l % 4;
		int u = neighbour(r, t, dir);

		occupy(r, l);
		reached[u] = dir;
		depth[u] = depth[t] + 1;
	}
}

/* The link that arrives at tile @t from direction @how (its r->reached[]). */
static int link_into(struct pr *r, int t, int how)
{
	return neighbour(r, t, (how + 2) % 4) * 4 + how;
}

/* Rips value @s's tree up. */
static void unroute_value(struct pr *r, int s)
{
	int nt = r->w * r->h;
	signed char *reached = &r->reached[s * nt];

	for (int t = 0; t < nt; t++) {
		if (reached[t] >= 0 && reached[t] < 4) {
			vacate(r, link_into(r, t, reached[t]));
		}
		reached[t] = ROUTE_UNREACHED;
	}
}

/* Rips value @s's tree up and routes it again to every consumer. */
static void route_value(struct pr *r, int s, float pres)
{
	int nt = r->w * r->h;
	signed char *reached = &r->reached[s * nt];

	unroute_value(r, s);
	mark_sources(r, s);
	for (int u = r->use_at[s]; u < r->use_at[s + 1]; u++) {
		int t = r->where[r->uses[u] / 3];

		if (reached[t] == ROUTE_UNREACHED)
			reach_tile(r, s, t, pres);
	}
}

static void clear_routes(struct pr *r)
{
	for (unsigned t = 0; t < r->w * r->h * r->p->slots; t++)
		memset(r->p->tiles[t].route, 0, sizeof(r->p->tiles[t].route));
}

/*
 * Gives each value on a link a channel of its own (channel 0 without
 * channels): r->chan[] of the tile it arrives at.
 */
static void assign_channels(struct pr *r)
{
	int nt = r->w * r->h, used[4 * PLACE_MAX_TILES] = { 0 };

	for (int s = 0; s < r->g->num; s++) {
		const signed char *reached = &r->reached[s * nt];

		for (int u = 0; fanout(r, s) && u < nt; u++)
			if (reached[u] >= 0 && reached[u] < 4)
				r->chan[s * nt + u] = r->p->channels ?
					used[link_into(r, u, reached[u])]++ : 0;
	}
}

/*
 * Writes the routed trees into the switches and PE inputs: a link's
 * channel k in slot k of its tile.
 */
static void write_routes(struct pr *r)
{
	int nt = r->w * r->h;

	clear_routes(r);
	assign_channels(r);
	for (int s = 0; s < r->g->num; s++) {
		const signed char *reached = &r->reached[s * nt];

		if (!fanout(r, s))
			continue;
		for (int u = 0; u < nt; u++) {
			int t;

			if (reached[u] < 0 || reached[u] >= 4)
				continue;
			t = neighbour(r, u, (reached[u] + 2) % 4);
			slot_cfg(r->p, t, r->chan[s * nt + u])->route[reached[u]] =
				source_at(r, s, t);
		}
		for (int u = r->use_at[s]; u < r->use_at[s + 1]; u++) {
			int i = r->uses[u] / 3, k = r->uses[u] % 3;
			int t = r->where[i];

			slot_cfg(r->p, t, r->slot[i])->route[LOOM_OUT_PE_A + k] =
				source_at(r, s, t);
			r->hops[i * 3 + k] = r->depth[s * nt + t];
		}
	}
}

/* Routes every value; false if some link still carries two. */
static bool route_all(struct pr *r)
{
	int nt = r->w * r->h;
	float pres = ROUTE_PRES_FIRST;

	memset(r->occ, 0, 4 * nt * sizeof(r->occ[0]));
	r->pairs = 0;
	r->nlinks = 0;
	for (int l = 0; l < 4 * nt; l++)
		r->hist[l] = 0.0f;
	memset(r->reached, ROUTE_UNREACHED, (size_t)r->g->num * nt);
	for (int round = 0, best = -1, stalled = 0;
	     round < ROUTE_ROUNDS && stalled < ROUTE_STALL_ROUNDS; round++) {
		int overused = 0;

		for (int s = 0; s < r->g->num; s++)
			if (fanout(r, s))
				route_value(r, s, pres);
		for (int l = 0; l < 4 * nt; l++)
			if (r->occ[l] > r->chans) {
				overused++;
				r->hist[l] += ROUTE_HIST_STEP;
			}
		if (!overused) {
			write_routes(r);
			return true;
		}
		pres *= ROUTE_PRES_GROWTH;
		if (best < 0 || overused < best) {
			best = overused;
			stalled = 0;
		} else {
			stalled++;
		}
	}
	return false;
}

/* ------------------------------------------------------------ stats --- */

/*
 * Which operations fire once per loop iteration, in @per_iter (every one
 * when the graph has no loop): STREAM, INVARIANT and REDUCE (each token
 * they take or give is a firing) and what takes a value from them, except
 * a REDUCE's result, which comes once per loop.  What fires once per
 * instance costs a loop's iterations nothing: counting it as if it fired
 * every iteration made --stats report gemm's II as 6 where it runs at 4.
 */
static void per_iteration(const struct graph *g, bool *per_iter)
{
	for (int i = 0; i < g->num; i++) {
		const struct g_node *n = &g->nodes[i];

		per_iter[i] = !g->loops;
		if (n->kind != G_PE || per_iter[i])
			continue;
		per_iter[i] = n->op == LOOM_OP_STREAM ||
			      n->op == LOOM_OP_INVARIANT ||
			      n->op == LOOM_OP_REDUCE;
		for (int k = 0; k < 3 && !per_iter[i]; k++) {
			int s = n->in[k];

			per_iter[i] = (graph_inputs(n) & (1U << k)) &&
				      per_iter[s] && g->nodes[s].kind == G_PE &&
				      g->nodes[s].op != LOOM_OP_REDUCE;
		}
	}
}

/*
 * Cycles per instance (per loop iteration) no mapping beats: LOAD holds
 * one load in flight for the load latency; at most PLACE_MEM_PORTS memory
 * operations per cycle.  With @in_loop, only the operations that fire per
 * iteration count in a loop (the statistics); without, every one does
 * (first_cap(): the group size the search starts from, which the
 * mappings found so far were found with).
 */
static int mem_bound(const struct graph *g, bool in_loop)
{
	bool *per_iter = calloc(g->num + 1, sizeof(bool));
	int mem = 0, loads = 0, ii;

	if (!per_iter)
		abort();
	per_iteration(g, per_iter);
	for (int i = 0; i < g->num; i++) {
		const struct g_node *n = &g->nodes[i];

		if (n->kind != G_PE || (in_loop && !per_iter[i]))
			continue;
		mem += loom_op_class(n->op) == LOOM_OPC_MEM;
		loads += n->op == LOOM_OP_LOAD || n->op == LOOM_OP_ATOMIC;
	}
	free(per_iter);
	ii = loads ? PLACE_LOAD_LATENCY : 1;
	if ((mem + PLACE_MEM_PORTS - 1) / PLACE_MEM_PORTS > ii)
		ii = (mem + PLACE_MEM_PORTS - 1) / PLACE_MEM_PORTS;
	return ii;
}

/*
 * A link moves one token a cycle: the values that share it in channels
 * (per iteration, in a loop) bound the cycles per instance too.
 */
static void link_bound(struct pr *r, const bool *per_iter)
{
	int nt = r->w * r->h, load[4 * PLACE_MAX_TILES] = { 0 };

	for (int s = 0; r->p->channels && s < r->g->num; s++) {
		const signed char *reached = &r->reached[s * nt];

		if (!fanout(r, s) || (r->g->loops && !per_iter[s]))
			continue;
		for (int u = 0; u < nt; u++) {
			int l;

			if (reached[u] < 0 || reached[u] >= 4)
				continue;
			l = link_into(r, u, reached[u]);
			if (++load[l] > r->p->stats.cycles_per_instance)
				r->p->stats.cycles_per_instance = load[l];
		}
	}
}

static void stats(struct pr *r)
{
	struct place_stats *st = &r->p->stats;
	int *cyc = calloc(r->g->num + 1, sizeof(int));
	int *hop = calloc(r->g->num + 1, sizeof(int));
	bool *per_iter = calloc(r->g->num + 1, sizeof(bool));
	int ntiles = r->w * r->h, firing = 0;

	if (!cyc || !hop || !per_iter)
		abort();
	st->pes = graph_count(r->g, G_PE);
	st->ports = r->p->num_ports;
	st->hops = 0;
	for (unsigned t = 0; t < r->w * r->h * r->p->slots; t++)
		for (unsigned d = 0; d < 4; d++)
			st->hops += r->p->tiles[t].route[d] != LOOM_SRC_NONE;
	for (int i = 0; i < r->g->num; i++) {
		const struct g_node *n = &r->g->nodes[i];
		int lat = n->op == LOOM_OP_LOAD || n->op == LOOM_OP_ATOMIC ?
			  PLACE_LOAD_LATENCY : 1;

		if (n->kind != G_PE)
			continue;
		for (int k = 0; k < 3; k++) {
			if (!(graph_inputs(n) & (1U << k)))
				continue;
			r->arrive[i * 3 + k] = cyc[n->in[k]] + r->hops[i * 3 + k];
			if (cyc[n->in[k]] + r->hops[i * 3 + k] + lat > cyc[i])
				cyc[i] = cyc[n->in[k]] + r->hops[i * 3 + k] + lat;
			if (hop[n->in[k]] + r->hops[i * 3 + k] > hop[i])
				hop[i] = hop[n->in[k]] + r->hops[i * 3 + k];
		}
		if (cyc[i] > st->longest_cycles)
			st->longest_cycles = cyc[i];
		if (hop[i] > st->longest_hops)
			st->longest_hops = hop[i];
	}
	/*
	 * The PEs must fire the operations of an iteration (of an instance,
	 * without loops) one a cycle each: the ones that fire once per
	 * instance in a loop graph wait in slots the PE skips meanwhile
	 */
	per_iteration(r->g, per_iter);
	for (int i = 0; i < r->g->num; i++)
		firing += r->g->nodes[i].kind == G_PE && per_iter[i];
	st->ii_bound = mem_bound(r->g, true);
	if ((firing + ntiles - 1) / ntiles > st->ii_bound)
		st->ii_bound = (firing + ntiles - 1) / ntiles;
	st->slots = r->p->slots;
	st->cycles_per_instance = mem_bound(r->g, true);
	/* a temporal PE fires one slot a cycle: its fullest, per iteration */
	for (int t = 0; t < ntiles; t++) {
		int used = 0;

		if (!r->g->loops) {
			for (unsigned k = 0; k < r->p->slots; k++)
				used += slot_cfg(r->p, t, k)->op != LOOM_OP_NOP;
		} else {
			for (int i = 0; i < r->g->num; i++)
				used += r->g->nodes[i].kind == G_PE &&
					per_iter[i] && r->where[i] == t;
		}
		if (used > st->cycles_per_instance)
			st->cycles_per_instance = used;
	}
	link_bound(r, per_iter);
	st->loops = r->g->loops;
	free(cyc);
	free(hop);
	free(per_iter);
}

/* ------------------------------------------------------------- main --- */

static bool fits(const struct graph *g, unsigned w, unsigned h)
{
	int pes = graph_count(g, G_PE), ports = graph_count(g, G_PORT);
	int edge = 2 * (int)(w + h);

	return pes <= (int)(w * h) * LOOM_PE_SLOTS && ports <= edge &&
	       ports <= LOOM_MAX_PORTS;
}

/*
 * The smallest square fabric with enough slots and edge ports for @g, or
 * 0 if none up to LOOM_FABRIC_MAX_DIM has.  Capacity only: mapping on
 * every larger size until one routes would cost seconds per thread.
 */
static unsigned smallest_fit(const struct graph *g)
{
	for (unsigned n = 1; n <= LOOM_FABRIC_MAX_DIM; n++)
		if (fits(g, n, n))
			return n;
	return 0;
}

static void does_not_fit(struct diag *d, struct loom_loc loc,
			 const struct graph *g, unsigned w, unsigned h)
{
	int pes = graph_count(g, G_PE), ports = graph_count(g, G_PORT);
	int edge = 2 * (int)(w + h);
	unsigned n = smallest_fit(g);
	char hint[160];

	if (n)
		snprintf(hint, sizeof(hint),
			 "; the smallest square fabric with enough slots and ports is %ux%u (capacity only: whether it routes there is not tried)",
			 n, n);
	else
		snprintf(hint, sizeof(hint),
			 "; no fabric up to %ux%u has enough slots and ports (at most %d ports)",
			 LOOM_FABRIC_MAX_DIM, LOOM_FABRIC_MAX_DIM, LOOM_MAX_PORTS);
	diag_error(d, loc,
		   "graph of %d operations and %d ports does not fit a %ux%u fabric (%u tiles of %d slots, %d edge ports)%s",
		   pes, ports, w, h, w * h, LOOM_PE_SLOTS,
		   edge < LOOM_MAX_PORTS ? edge : LOOM_MAX_PORTS, hint);
}

/*
 * A tile has four incoming links: a group may take at most 3 (then 2)
 * distinct values from outside (ports or other groups), so that links are
 * left for routes passing through.
 */
#define GROUP_MAX_INPUTS	3

/* How pick_group() chooses among the groups with room. */
enum group_strategy {
	JOIN_PRODUCER,		/* a producer's group */
	JOIN_LEAST_GROWTH,	/* the group whose outside values grow least */
	GROUP_STRATEGIES,
};

#define GROUP_TRIES		(2 * GROUP_STRATEGIES)

/* Whether @s is already among the values @list (@n long). */
static bool listed(const int *list, int n, int s)
{
	for (int j = 0; j < n; j++)
		if (list[j] == s)
			return true;
	return false;
}

/*
 * Distinct outside values group @gi (-1: a new one) would take with node
 * @i (-1: none) in it.  Nodes after @i have no group yet.
 */
static int outside_inputs(struct pr *r, int gi, int i)
{
	int list[3 * LOOM_PE_SLOTS + 3], n = 0;

	for (int j = 0; j < r->g->num; j++) {
		const struct g_node *m = &r->g->nodes[j];

		if (m->kind != G_PE || (j != i && (gi < 0 || r->group[j] != gi)))
			continue;
		for (int k = 0; k < 3; k++) {
			int s = m->in[k];

			if (!(graph_inputs(m) & (1U << k)) ||
			    (r->g->nodes[s].kind == G_PE && gi >= 0 &&
			     r->group[s] == gi) ||
			    listed(list, n, s))
				continue;
			list[n++] = s;
		}
	}
	return n;
}

/* Whether group @gi has room for another operation. */
static bool room(int gi, int cap, const int *size)
{
	return size[gi] < cap;
}

/* The group of a producer of node @i with room that takes it, or -1. */
static int producer_group(struct pr *r, int i, int cap, const int *size)
{
	const struct g_node *n = &r->g->nodes[i];

	for (int k = 0; k < 3; k++) {
		int s = n->in[k];

		if ((graph_inputs(n) & (1U << k)) &&
		    r->g->nodes[s].kind == G_PE && r->group[s] >= 0 &&
		    room(r->group[s], cap, size) &&
		    outside_inputs(r, r->group[s], i) <= r->max_inputs)
			return r->group[s];
	}
	return -1;
}

/*
 * The group with room, within max_inputs outside values, whose outside
 * values grow the least, if less than a new group's would (a producer's
 * group, or one that takes the same values), or -1.
 */
static int growth_group(struct pr *r, int i, int cap, const int *size)
{
	int best = -1, best_add = outside_inputs(r, -1, i);

	for (int gi = 0; gi < r->ngroups; gi++) {
		int with, add;

		if (!room(gi, cap, size))
			continue;
		with = outside_inputs(r, gi, i);
		add = with - outside_inputs(r, gi, -1);
		if (with <= r->max_inputs && add < best_add) {
			best = gi;
			best_add = add;
		}
	}
	return best;
}

/*
 * The group node @i joins: a producer's (or the least growing), else a new
 * group, else the least full that takes it, else the least full.  There is
 * always one: map_any() tries no @cap below the PEs over the tiles (worth()),
 * so @cap groups of @max_groups hold every PE.
 */
static int pick_group(struct pr *r, int i, int cap, int max_groups, int *size)
{
	int best = -1;

	if (r->strategy == JOIN_PRODUCER)
		best = producer_group(r, i, cap, size);
	else
		best = growth_group(r, i, cap, size);

	if (best >= 0)
		return best;
	if (r->ngroups < max_groups)
		return r->ngroups++;
	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (int gi = 0; gi < r->ngroups; gi++)
			if (room(gi, cap, size) &&
			    (pass || outside_inputs(r, gi, i) <= r->max_inputs) &&
			    (best < 0 || size[gi] < size[best]))
				best = gi;
	if (best < 0)
		abort();
	return best;
}

/*
 * The one operation that consumes node @i when all of @i's inputs are
 * ports (a CONST of an operand triggered by the ctrl port, an address
 * computed from a coordinate), or -1: such a node is best put in its
 * consumer's group, which its result then reaches without a link.
 */
static int leaf_consumer(const struct graph *g, int i)
{
	const struct g_node *n = &g->nodes[i];
	int consumer = -1;

	for (int k = 0; k < 3; k++)
		if ((graph_inputs(n) & (1U << k)) &&
		    g->nodes[n->in[k]].kind != G_PORT)
			return -1;
	for (int j = i + 1; j < g->num; j++) {
		const struct g_node *m = &g->nodes[j];

		for (int k = 0; k < 3; k++) {
			if (!(graph_inputs(m) & (1U << k)) || m->in[k] != i)
				continue;
			if (consumer >= 0 && consumer != j)
				return -1;
			consumer = j;
		}
	}
	return consumer;
}

static void join_group(struct pr *r, int i, int gi, int *size)
{
	r->group[i] = gi;
	r->slot[i] = size[gi]++;
}

/*
 * Packs the PEs into groups of at most @cap; cap 1 is spatial.  A node
 * whose inputs are all ports waits for its only consumer and joins its
 * group when it has room.
 */
static void group_pes(struct pr *r, int cap)
{
	int max_groups = r->w * r->h;
	int *size = calloc(max_groups + 1, sizeof(int));
	int *leaf = calloc(r->g->num + 1, sizeof(int));

	if (!size || !leaf)
		abort();
	r->ngroups = 0;
	for (int i = 0; i < r->g->num; i++) {
		r->group[i] = -1;
		leaf[i] = cap > 1 && r->g->nodes[i].kind == G_PE ?
			  leaf_consumer(r->g, i) : -1;
	}
	for (int i = 0; i < r->g->num; i++) {
		if (r->g->nodes[i].kind != G_PE || leaf[i] >= 0)
			continue;
		join_group(r, i, cap == 1 ? r->ngroups++ :
			   pick_group(r, i, cap, max_groups, size), size);
		for (int j = 0; j < i; j++) {
			if (leaf[j] != i)
				continue;
			join_group(r, j, size[r->group[i]] < cap ? r->group[i] :
				   pick_group(r, j, cap, max_groups, size), size);
		}
	}
	free(size);
	free(leaf);
}

/* Outside values each group takes and gives, for tile_cost(). */
static void group_links(struct pr *r)
{
	for (int gi = 0; gi < r->ngroups; gi++) {
		r->links_in[gi] = r->ngroups > 1 || r->p->slots == 1 ?
				  outside_inputs(r, gi, -1) : 0;
		r->links_out[gi] = 0;
	}
	for (int s = 0; s < r->g->num; s++) {
		if (r->g->nodes[s].kind != G_PE)
			continue;
		for (int i = s + 1; i < r->g->num; i++) {
			const struct g_node *n = &r->g->nodes[i];
			bool uses = false;

			for (int k = 0; k < 3; k++)
				uses |= (graph_inputs(n) & (1U << k)) &&
					n->in[k] == s;
			if (uses && n->kind == G_PE &&
			    r->group[i] != r->group[s]) {
				r->links_out[r->group[s]]++;
				break;
			}
		}
	}
}

/* Places and routes with groups of at most @cap operations. */
static bool place_route(struct pr *r, int cap)
{
	bool ok = false;

	int attempts = cap == 1 ? PLACE_ATTEMPTS : PLACE_TEMPORAL_ATTEMPTS;

	r->p->slots = cap == 1 ? 1 : LOOM_PE_SLOTS;
	r->seed = 12345;
	group_pes(r, cap);
	group_links(r);
	for (r->attempt = 0; !ok && r->attempt < attempts; r->attempt++) {
		place_all(r);
		ok = route_all(r);
	}
	return ok;
}

/* The smallest group size worth trying: sharing below it costs nothing. */
static int first_cap(const struct graph *g, unsigned w, unsigned h)
{
	int pes = graph_count(g, G_PE), tiles = w * h;
	int cap = (pes + tiles - 1) / tiles;

	if (cap < 2)
		cap = 2;
	if (mem_bound(g, true) > cap)
		cap = mem_bound(g, true);
	return cap < LOOM_PE_SLOTS ? cap : LOOM_PE_SLOTS;
}

/* ---------------------------------------------------------- helpers --- */

/* Adds value @s to the @n values of @list if it has consumers and is new. */
static int list_value(struct pr *r, int *list, int n, int s)
{
	if (s < 0 || !fanout(r, s) || listed(list, n, s))
		return n;
	list[n] = s;
	return n + 1;
}

/* Adds the values node @i makes and takes to the @n of @list. */
static int values_of(struct pr *r, int i, int *list, int n)
{
	const struct g_node *nd = &r->g->nodes[i];

	n = list_value(r, list, n, i);
	if (nd->kind == G_PE)
		for (int k = 0; k < 3; k++)
			if (graph_inputs(nd) & (1U << k))
				n = list_value(r, list, n, nd->in[k]);
	return n;
}

/* A uniform number in [0, 1). */
static float unit(struct pr *r)
{
	return (float)rnd(r) / 32768.0f;
}

/*
 * About exp(-@x) for x >= 0 (the Taylor series of exp(x) to the cube, in
 * the denominator): the acceptance probability needs no libm.
 */
static float exp_neg(float x)
{
	return 1.0f / (1.0f + x * (1.0f + x * (0.5f + x / 6.0f)));
}

/* An operation on tile @t, at random, or -1 if it has none. */
static int pe_on(struct pr *r, const int *pes, int npes, int t, int count)
{
	int k = count ? (int)(rnd(r) % count) : -1;

	for (int j = 0; j < npes && k >= 0; j++)
		if (r->where[pes[j]] == t && k-- == 0)
			return pes[j];
	return -1;
}

/* An edge position, at random: side * LOOM_FABRIC_MAX_DIM + position. */
static int random_edge(struct pr *r, int edges)
{
	int at = rnd(r) % edges;
	unsigned side = 0;

	while (at >= (int)side_len(r, side))
		at -= side_len(r, side++);
	return side * LOOM_FABRIC_MAX_DIM + at;
}

/* -------------------------------------------------- routed annealing --- */

/*
 * Simulated annealing whose every state is routed.  A move takes an
 * operation to another tile (swapped with one there when the tile is
 * full), swaps the operations of two tiles, or takes a port binding to
 * another edge position (swapped with one there); it rips up the values
 * the moved nodes make and take and routes them again, each as a tree
 * from the tiles it reaches (route_value()), a link costing
 * 1 + its history + the weight x the values already on it.  The cost of
 * a state is what its routes cost: the links they use (with their
 * history) plus the weight x the pairs of values sharing a link.  A state
 * without such a pair is a routing, and the search stops there.  So the
 * placement is judged by the router itself, not by an estimate of what
 * routing will need (wire length and link demand, which leave a few links
 * overused once a 4x4 fabric is full), and routing negotiates as
 * PathFinder does: the weight grows as the temperature falls, and the
 * links left shared at a temperature cost more from then on.
 *
 * Half the operation moves go to the tile of an operation the moved one
 * takes a value from or gives one to: what the routes need most is
 * operations that exchange values on one tile, or side by side.
 *
 * The edge positions no port needs take copies of the ports with the
 * most consumers (a port may be bound at several positions: each binding
 * injects the same token per instance), and a value reaches each
 * consumer from the nearest of its bindings; the copies no route uses are
 * dropped at the end.  Fixed seeds: the result is deterministic.
 */
#define RSA_MOVES_PER_NODE	24	/* per temperature */
#define RSA_T_FIRST		2.0f
#define RSA_T_LAST		0.05f
#define RSA_W_FIRST		0.5f	/* the weight of a shared link */
#define RSA_W_GROWTH		1.15f	/* per temperature */
#define RSA_W_MAX		20.0f
#define RSA_HIST_STEP		0.5f
#define RSA_TILE_SWAPS		0.1f	/* of the moves */
#define RSA_NEAR		0.5f	/* of the operation moves */
#define RSA_STARTS		3
#define RSA_HOPELESS		4	/* links shared at the full weight */
#define RSA_RETRY		2	/* at most, at the end, for a retry */
#define RSA_LIST		(8 * LOOM_PE_SLOTS + 8)	/* values a move touches */

struct rsa {
	int cap, nt, edges;
	int count[PLACE_MAX_TILES];	/* operations on each tile */
	int *pes, npes;
	int *vals, nvals;		/* nodes whose values have consumers */
	signed char *save_reached;	/* the trees a move ripped up */
	int *save_depth;
	float w;			/* the weight of a shared link */
};

static float rsa_cost(const struct pr *r, const struct rsa *a)
{
	return r->wire + a->w * (float)r->pairs;
}

/* Whether @m came closer to a routing than @best (the fewer shared links). */
static bool closer(const struct place_miss *m, const struct place_miss *best)
{
	return m->seen && (!best->seen || m->shared < best->shared ||
			   (m->shared == best->shared && m->hops < best->hops));
}

/* Keeps in r->p->miss the closest of the routed annealings that failed. */
static void note_miss(struct pr *r, int nt)
{
	struct place_miss m = { .seen = true, .hops = r->nlinks,
				.chans = r->chans };

	for (int l = 0; l < 4 * nt; l++)
		m.shared += r->occ[l] > r->chans;
	if (closer(&m, &r->p->miss))
		r->p->miss = m;
}

/* Whether a search that runs beside this one made it pointless. */
static bool cancelled(const struct pr *r)
{
	return r->stop && atomic_load(r->stop) < r->task;
}

/* The edge position (side * LOOM_FABRIC_MAX_DIM + pos) of binding @b. */
static int binding_pos(const struct pr *r, int b)
{
	return r->p->ports[b].side * LOOM_FABRIC_MAX_DIM + r->p->ports[b].pos;
}

static int binding_at_pos(struct pr *r, int at)
{
	for (unsigned b = 0; b < r->p->num_ports; b++)
		if (binding_pos(r, b) == at)
			return b;
	return -1;
}

static void set_binding_pos(struct pr *r, int b, int at)
{
	r->p->ports[b].side = at / LOOM_FABRIC_MAX_DIM;
	r->p->ports[b].pos = at % LOOM_FABRIC_MAX_DIM;
}

/*
 * Binds copies of the ports with the most consumers per binding at the
 * edge positions left free, at random, while a port has more consumers
 * than bindings.
 */
static void add_copies(struct pr *r, int edges)
{
	int copies[LOOM_MAX_PORTS] = { 0 }, nb = r->p->num_ports;
	bool used[4][LOOM_FABRIC_MAX_DIM] = { { false } };

	for (int b = 0; b < nb; b++) {
		used[r->p->ports[b].side][r->p->ports[b].pos] = true;
		copies[b] = 1;
	}
	while ((int)r->p->num_ports < edges &&
	       r->p->num_ports < LOOM_MAX_PORTS) {
		int best = -1, at, c = r->p->num_ports;

		for (int b = 0; b < nb; b++) {
			int f = fanout(r, r->bind_node[b]);

			if (copies[b] < f &&
			    (best < 0 || f * copies[best] >
			     fanout(r, r->bind_node[best]) * copies[b]))
				best = b;
		}
		if (best < 0)
			return;
		do
			at = random_edge(r, edges);
		while (used[at / LOOM_FABRIC_MAX_DIM][at % LOOM_FABRIC_MAX_DIM]);
		used[at / LOOM_FABRIC_MAX_DIM][at % LOOM_FABRIC_MAX_DIM] = true;
		r->p->ports[c] = r->p->ports[best];
		r->bind_node[c] = r->bind_node[best];
		set_binding_pos(r, c, at);
		r->p->num_ports++;
		copies[best]++;
	}
}

/*
 * Whether binding @b carries its port's value somewhere: to a consumer on
 * its tile, or over a link of the value's tree that leaves it.  Of two
 * bindings of one port on one tile (a corner), the first is the one
 * source_at() reads.
 */
static bool binding_used(struct pr *r, int b)
{
	int s = r->bind_node[b], nt = r->w * r->h;
	int t = edge_tile(r, r->p->ports[b].side, r->p->ports[b].pos);

	if (binding_at(r, s, t) != b)
		return false;
	for (int u = r->use_at[s]; u < r->use_at[s + 1]; u++)
		if (r->where[r->uses[u] / 3] == t)
			return true;
	for (unsigned dir = 0; dir < 4; dir++) {
		int u = neighbour(r, t, dir);

		if (u >= 0 && r->reached[s * nt + u] == (signed char)dir)
			return true;
	}
	return false;
}

/* Drops the bindings no route uses; a port node's first left is r->where's. */
static void drop_unused_bindings(struct pr *r)
{
	bool keep[LOOM_MAX_PORTS];
	unsigned n = 0;

	for (unsigned b = 0; b < r->p->num_ports; b++)
		keep[b] = binding_used(r, b);
	for (unsigned b = 0; b < r->p->num_ports; b++) {
		if (!keep[b])
			continue;
		r->p->ports[n] = r->p->ports[b];
		r->bind_node[n] = r->bind_node[b];
		n++;
	}
	r->p->num_ports = n;
	for (int b = n - 1; b >= 0; b--)
		r->where[r->bind_node[b]] = b;
}

/* Moves PE @i (binding @i) to @to, swapping with @other there, if any. */
static void rsa_move(struct pr *r, struct rsa *a, bool pe, int i, int other,
		     int from, int to)
{
	if (!pe) {
		set_binding_pos(r, i, to);
		if (other >= 0)
			set_binding_pos(r, other, from);
		return;
	}
	r->where[i] = to;
	if (other >= 0) {
		r->where[other] = from;
	} else {
		a->count[from]--;
		a->count[to]++;
	}
}

/* A tile within @rlim of @from in each direction, other than @from. */
static int rsa_pick_tile(struct pr *r, int from, int rlim)
{
	int x0 = from % (int)r->w, y0 = from / (int)r->w;
	int lo_x = x0 - rlim < 0 ? 0 : x0 - rlim;
	int hi_x = x0 + rlim >= (int)r->w ? (int)r->w - 1 : x0 + rlim;
	int lo_y = y0 - rlim < 0 ? 0 : y0 - rlim;
	int hi_y = y0 + rlim >= (int)r->h ? (int)r->h - 1 : y0 + rlim;

	if (r->w * r->h == 1)
		return from;
	for (;;) {
		int x = lo_x + (int)(rnd(r) % (unsigned)(hi_x - lo_x + 1));
		int y = lo_y + (int)(rnd(r) % (unsigned)(hi_y - lo_y + 1));

		if (x != x0 || y != y0)
			return y * (int)r->w + x;
	}
}

/*
 * The tile of an operation that operation @i takes a value from or gives
 * one to, at random, or -1 if none.
 */
static int rsa_near_tile(struct pr *r, int i)
{
	const struct g_node *n = &r->g->nodes[i];
	int near[3 + 64], c = 0;

	for (int k = 0; k < 3; k++)
		if ((graph_inputs(n) & (1U << k)) &&
		    r->g->nodes[n->in[k]].kind == G_PE)
			near[c++] = r->where[n->in[k]];
	for (int u = r->use_at[i]; u < r->use_at[i + 1] && c < 3 + 64; u++)
		near[c++] = r->where[r->uses[u] / 3];
	return c ? near[rnd(r) % c] : -1;
}

static void rsa_save(struct pr *r, struct rsa *a, const int *list, int n)
{
	int nt = a->nt;

	for (int k = 0; k < n; k++) {
		memcpy(&a->save_reached[k * nt], &r->reached[list[k] * nt], nt);
		memcpy(&a->save_depth[k * nt], &r->depth[list[k] * nt],
		       nt * sizeof(int));
	}
}

static void rsa_restore(struct pr *r, struct rsa *a, const int *list, int n)
{
	int nt = a->nt;

	for (int k = 0; k < n; k++) {
		signed char *reached = &r->reached[list[k] * nt];

		unroute_value(r, list[k]);
		memcpy(reached, &a->save_reached[k * nt], nt);
		memcpy(&r->depth[list[k] * nt], &a->save_depth[k * nt],
		       nt * sizeof(int));
		for (int t = 0; t < nt; t++)
			if (reached[t] >= 0 && reached[t] < 4)
				occupy(r, link_into(r, t, reached[t]));
	}
}

/*
 * Routes the @n values of @list, ripped up, after a move from a state of
 * cost @before: true if the move is taken, else false with the routes of
 * @list as rsa_save() kept them (the caller undoes the move first).
 */
static bool rsa_judge(struct pr *r, struct rsa *a, const int *list, int n,
		      float temp, float before)
{
	float after;

	for (int k = 0; k < n; k++)
		route_value(r, list[k], a->w);
	after = rsa_cost(r, a);
	return after <= before || unit(r) < exp_neg((after - before) / temp);
}

/* Swaps the operations of two tiles within @rlim; whether it was taken. */
static bool rsa_swap_tiles(struct pr *r, struct rsa *a, float temp, int rlim)
{
	int t1 = rnd(r) % a->nt, t2 = rsa_pick_tile(r, t1, rlim);
	int list[RSA_LIST] = { 0 }, n = 0;
	float before = rsa_cost(r, a);
	bool taken = false;

	if (t1 == t2 || (!a->count[t1] && !a->count[t2]))
		return false;
	for (int k = 0; k < a->npes; k++)
		if (r->where[a->pes[k]] == t1 || r->where[a->pes[k]] == t2)
			n = values_of(r, a->pes[k], list, n);
	rsa_save(r, a, list, n);
	for (int k = 0; k < n; k++)
		unroute_value(r, list[k]);
	for (int pass = 0; pass < 2 && !taken; pass++) {
		int c;

		for (int k = 0; k < a->npes; k++) {
			int *at = &r->where[a->pes[k]];

			*at = *at == t1 ? t2 : *at == t2 ? t1 : *at;
		}
		c = a->count[t1];
		a->count[t1] = a->count[t2];
		a->count[t2] = c;
		if (!pass)
			taken = rsa_judge(r, a, list, n, temp, before);
	}
	if (!taken)
		rsa_restore(r, a, list, n);
	return taken;
}

/* One move at temperature @temp within @rlim tiles; whether it was taken. */
static bool rsa_step(struct pr *r, struct rsa *a, float temp, int rlim)
{
	int pick = rnd(r) % (a->npes + r->p->num_ports), list[RSA_LIST] = { 0 };
	int n = 0, i, other, from, to;
	bool pe = pick < a->npes;
	float before = rsa_cost(r, a);

	if (unit(r) < RSA_TILE_SWAPS)
		return rsa_swap_tiles(r, a, temp, rlim);
	if (pe) {
		i = a->pes[pick];
		from = r->where[i];
		to = unit(r) < RSA_NEAR ? rsa_near_tile(r, i) : -1;
		if (to < 0)
			to = rsa_pick_tile(r, from, rlim);
		other = a->count[to] >= a->cap ?
			pe_on(r, a->pes, a->npes, to, a->count[to]) : -1;
		n = values_of(r, i, list, 0);
		if (other >= 0)
			n = values_of(r, other, list, n);
	} else {
		i = pick - a->npes;
		from = binding_pos(r, i);
		to = random_edge(r, a->edges);
		other = binding_at_pos(r, to);
		n = list_value(r, list, 0, r->bind_node[i]);
		if (other >= 0)
			n = list_value(r, list, n, r->bind_node[other]);
	}
	if (to == from)
		return false;
	rsa_save(r, a, list, n);
	for (int k = 0; k < n; k++)
		unroute_value(r, list[k]);
	rsa_move(r, a, pe, i, other, from, to);
	if (rsa_judge(r, a, list, n, temp, before))
		return true;
	rsa_move(r, a, pe, i, other, to, from);
	rsa_restore(r, a, list, n);
	return false;
}

/* Writes the operations into the configuration's slots, in node order. */
static void write_slots(struct pr *r)
{
	int used[PLACE_MAX_TILES] = { 0 };

	memset(r->p->tiles, 0, sizeof(r->p->tiles));
	for (int i = 0; i < r->g->num; i++) {
		const struct g_node *n = &r->g->nodes[i];
		struct loom_tile_config *tc;

		if (n->kind != G_PE)
			continue;
		r->slot[i] = r->p->slots == 1 ? 0 : used[r->where[i]]++;
		tc = slot_cfg(r->p, r->where[i], r->slot[i]);
		tc->op = n->op;
		tc->type = n->type;
		tc->flags = (n->imm_b ? LOOM_TILE_IMM_B : 0) |
			    (n->imm_operand ? LOOM_TILE_IMM_OPERAND : 0);
		tc->imm = n->imm;
	}
}

/*
 * Anneals the placement in r->where and r->p->ports (place_all()'s), at
 * most @cap operations that fire per iteration a tile, every value
 * routed; true, with the routes written, when no link carries two values.
 */
static bool routed_anneal(struct pr *r, int cap)
{
	struct rsa a = { .cap = cap, .nt = r->w * r->h };
	int maxdim = r->w > r->h ? r->w : r->h, moves;
	float rlim = (float)maxdim;
	bool ok;

	a.pes = calloc(r->g->num + 1, sizeof(int));
	a.vals = calloc(r->g->num + 1, sizeof(int));
	a.save_reached = calloc(RSA_LIST * (size_t)a.nt, 1);
	a.save_depth = calloc(RSA_LIST * (size_t)a.nt, sizeof(int));
	if (!a.pes || !a.vals || !a.save_reached || !a.save_depth)
		abort();
	for (unsigned side = 0; side < 4; side++)
		a.edges += side_len(r, side);
	for (int i = 0; i < r->g->num; i++) {
		if (r->g->nodes[i].kind == G_PE) {
			a.pes[a.npes++] = i;
			a.count[r->where[i]]++;
		}
		if (fanout(r, i))
			a.vals[a.nvals++] = i;
	}
	add_copies(r, a.edges);
	moves = RSA_MOVES_PER_NODE * (a.npes + r->p->num_ports) + 50;
	memset(r->occ, 0, 4 * a.nt * sizeof(r->occ[0]));
	memset(r->hist, 0, 4 * a.nt * sizeof(r->hist[0]));
	memset(r->reached, ROUTE_UNREACHED, (size_t)r->g->num * a.nt);
	r->pairs = 0;
	r->nlinks = 0;
	r->wire = 0.0f;
	r->additive = true;
	a.w = RSA_W_FIRST;
	for (int k = 0; k < a.nvals; k++)
		route_value(r, a.vals[k], a.w);
	for (float temp = RSA_T_FIRST; r->pairs && temp > RSA_T_LAST &&
	     !cancelled(r);) {
		int taken = 0;
		float rate;

		for (int m = 0; m < moves && r->pairs; m++)
			taken += rsa_step(r, &a, temp, (int)(rlim + 0.5f));
		/* VPR's schedule, but slow where few moves pass too */
		rate = (float)taken / (float)moves;
		temp *= rate > 0.96f ? 0.5f : rate > 0.8f ? 0.9f : 0.95f;
		rlim *= 1.0f - 0.44f + rate;
		rlim = rlim < 1.0f ? 1.0f : rlim > maxdim ? maxdim : rlim;
		if (a.w < RSA_W_MAX) {
			a.w *= RSA_W_GROWTH;
			/*
			 * Where more links than RSA_HOPELESS are still
			 * shared once sharing costs the most, cooling on
			 * never found a routing: give up
			 */
			if (a.w >= RSA_W_MAX && r->pairs > RSA_HOPELESS)
				break;
		}
		/* the links left shared cost more from now on */
		r->wire = 0.0f;
		for (int l = 0; l < 4 * a.nt; l++) {
			if (r->occ[l] > r->chans)
				r->hist[l] += RSA_HIST_STEP;
			r->wire += (float)r->occ[l] * (1.0f + r->hist[l]);
		}
	}
	r->additive = false;
	ok = r->pairs == 0;
	if (!ok && !cancelled(r))
		note_miss(r, a.nt);
	if (ok) {
		write_slots(r);
		drop_unused_bindings(r);
		write_routes(r);
	}
	free(a.pes);
	free(a.vals);
	free(a.save_reached);
	free(a.save_depth);
	return ok;
}

/*
 * Routed annealing from the greedy placement of the first grouping rule,
 * RSA_STARTS times from other seeds.
 */
static bool rsa_route_all(struct pr *r, int cap)
{
	r->p->slots = cap == 1 ? 1 : LOOM_PE_SLOTS;
	r->strategy = JOIN_PRODUCER;
	r->max_inputs = GROUP_MAX_INPUTS;
	group_pes(r, cap);
	group_links(r);
	for (int start = 0; start < RSA_STARTS && !cancelled(r); start++) {
		r->attempt = 0;
		place_all(r);
		r->seed = 4242 + 7919 * start;
		r->attempt = start + 1;
		if (routed_anneal(r, cap))
			return true;
		/* another seed finds a routing only where this came close */
		if (r->pairs > RSA_RETRY)
			break;
	}
	return false;
}

/* ---------------------------------------------------------- buffers --- */

/*
 * A fork moves a token only when every branch has room, so a branch that
 * reaches its operation early must hold the tokens that wait there for the
 * operation's later inputs, or it stalls the fork (and the ports, which
 * inject an instance only when every port has room).  An input path holds
 * the operation's FIFO, the producer's output buffer (or the port's queue)
 * and a token per link hop; a MOV in a free slot of the operation's PE,
 * put in front of the input, adds its FIFO and its output buffer without
 * changing any route.  The wait is estimated from the routed lengths; an
 * operation's firing and its result's first move take a cycle each, which
 * stats() counts as one: BUFFER_SLACK_SCALE makes up for it.
 */
#define PATH_TOKENS(hops)	(PLACE_FIFO_DEPTH + LOOM_LINK_DEPTH + (hops))
#define MOV_TOKENS		(PLACE_FIFO_DEPTH + LOOM_LINK_DEPTH)
#define BUFFER_SLACK_SCALE	2

/* Pipelined dense threads without loops gain from buffered paths. */
static bool pipelined(const struct graph *g)
{
	return g->domain == LOOM_DOMAIN_DENSE && !g->loops;
}

/* MOVs input @k of node @i needs at one instance per @ii cycles. */
static int movs_needed(struct pr *r, int i, int k, int ii)
{
	const struct g_node *n = &r->g->nodes[i];
	int last = 0, need, have;

	for (int j = 0; j < 3; j++)
		if ((graph_inputs(n) & (1U << j)) && r->arrive[i * 3 + j] > last)
			last = r->arrive[i * 3 + j];
	need = (BUFFER_SLACK_SCALE * (last - r->arrive[i * 3 + k]) + ii - 1) /
	       ii + 1;
	have = PATH_TOKENS(r->hops[i * 3 + k]);
	return need <= have ? 0 : (need - have + MOV_TOKENS - 1) / MOV_TOKENS;
}

/* A spatial placement becomes one of LOOM_PE_SLOTS slots, slot 0 each. */
static void widen_slots(struct placement *p)
{
	int ntiles = p->width * p->height;

	if (p->slots == LOOM_PE_SLOTS)
		return;
	for (int t = ntiles - 1; t >= 0; t--) {
		struct loom_tile_config tc = p->tiles[t];

		memset(&p->tiles[t * LOOM_PE_SLOTS], 0,
		       LOOM_PE_SLOTS * sizeof(tc));
		p->tiles[t * LOOM_PE_SLOTS] = tc;
	}
	p->slots = LOOM_PE_SLOTS;
}

/* Operations on tile @t, and its first free slot in @free_slot (or -1). */
static int tile_ops(struct placement *p, int t, int *free_slot)
{
	int used = 0;

	*free_slot = -1;
	for (unsigned k = 0; k < p->slots; k++) {
		if (slot_cfg(p, t, k)->op != LOOM_OP_NOP)
			used++;
		else if (*free_slot < 0)
			*free_slot = k;
	}
	return used;
}

static struct place_src source_of(const struct g_node *n)
{
	return (struct place_src){ .loc = n->loc, .name = n->name };
}

/* Each slot's and port's node, for the source map. */
static void record_sources(struct pr *r)
{
	memset(r->p->slot_src, 0, sizeof(r->p->slot_src));
	memset(r->p->port_src, 0, sizeof(r->p->port_src));
	for (int i = 0; i < r->g->num; i++) {
		const struct g_node *n = &r->g->nodes[i];

		if (n->kind == G_PE)
			r->p->slot_src[r->where[i] * LOOM_PE_SLOTS + r->slot[i]] =
				source_of(n);
	}
	for (unsigned b = 0; b < r->p->num_ports; b++)
		r->p->port_src[b] = source_of(&r->g->nodes[r->bind_node[b]]);
}

/*
 * Puts a MOV in front of input @k of node @i; false if its PE is full: it
 * keeps a slot of slack below the II (a PE that must fire in every cycle
 * slips; conv3 on 4x4 ran at 0.78 of its II so, 0.82 without).
 */
static bool add_mov(struct pr *r, int i, int k, int ii)
{
	int t = r->where[i], f;
	struct loom_tile_config *mov, *op;

	widen_slots(r->p);
	if (tile_ops(r->p, t, &f) >= ii - 1 || f < 0)
		return false;
	mov = slot_cfg(r->p, t, f);
	op = slot_cfg(r->p, t, r->slot[i]);
	mov->op = LOOM_OP_MOV;
	mov->type = LOOM_TYPE_I64;
	r->p->slot_src[t * LOOM_PE_SLOTS + f] =
		source_of(&r->g->nodes[r->g->nodes[i].in[k]]);
	mov->route[LOOM_OUT_PE_A] = op->route[LOOM_OUT_PE_A + k];
	op->route[LOOM_OUT_PE_A + k] = LOOM_SRC_SLOT(f);
	return true;
}

/*
 * MOVs in free slots, below the II the placement has, for the inputs
 * that would stall a fork; returns how many.  A spatial placement that
 * needs one becomes a temporal one.
 */
static int buffer_inputs(struct pr *r)
{
	int ii = r->p->stats.cycles_per_instance, added = 0;

	if (!pipelined(r->g) || ii < 2)
		return 0;
	for (int i = 0; i < r->g->num; i++) {
		if (r->g->nodes[i].kind != G_PE)
			continue;
		for (int k = 0; k < 3; k++) {
			if (!(graph_inputs(&r->g->nodes[i]) & (1U << k)))
				continue;
			for (int m = movs_needed(r, i, k, ii); m > 0; m--) {
				if (!add_mov(r, i, k, ii))
					break;
				added++;
			}
		}
	}
	return added;
}

/*
 * A temporal placement keeps only the slots some tile uses (at least 2:
 * its routes name slots), so that its image is no larger than it must be.
 */
static void shrink_slots(struct placement *p)
{
	unsigned ntiles = p->width * p->height, used = 2;
	static const uint8_t none[LOOM_ROUTE_OUTS];

	if (p->slots == 1)
		return;
	for (unsigned t = 0; t < ntiles; t++)
		for (unsigned k = used; k < p->slots; k++)
			if (slot_cfg(p, t, k)->op != LOOM_OP_NOP ||
			    memcmp(slot_cfg(p, t, k)->route, none, sizeof(none)))
				used = k + 1;
	for (unsigned t = 0; t < ntiles; t++)
		for (unsigned k = 0; k < used; k++)
			p->tiles[t * used + k] = *slot_cfg(p, t, k);
	memset(&p->tiles[ntiles * used], 0,
	       (size_t)ntiles * (p->slots - used) * sizeof(p->tiles[0]));
	p->slots = used;
}

/*
 * Maps @g into @p with groups of @cap operations at most (1: spatially):
 * the greedy placement with every grouping rule in turn, then routed
 * annealing.  With @channels (and @cap > 1) a link carries up to @cap
 * values, one a channel: a group of @cap fires one operation a cycle, so
 * its values need no more.  A search of walk_caps(), task @task, gives up
 * once @stop names an earlier one that mapped.
 */
static bool map_graph(const struct graph *g, unsigned width, unsigned height,
		      struct placement *p, int cap, bool channels,
		      const atomic_int *stop, int task)
{
	struct pr r = { .g = g, .p = p, .w = width, .h = height,
			.stop = stop, .task = task,
			.chans = channels && cap > 1 ? cap : 1 };
	int nt = width * height;
	bool ok = false;

	memset(p, 0, sizeof(*p));
	p->width = width;
	p->height = height;
	p->slots = 1;
	p->channels = r.chans > 1;
	r.where = calloc(g->num + 1, sizeof(int));
	r.occ = calloc(4 * PLACE_MAX_TILES, sizeof(int));
	r.hist = calloc(4 * PLACE_MAX_TILES, sizeof(float));
	r.reached = calloc((size_t)g->num * nt + 1, 1);
	r.depth = calloc((size_t)g->num * nt + 1, sizeof(int));
	r.chan = calloc((size_t)g->num * nt + 1, 1);
	r.group = calloc(g->num + 1, sizeof(int));
	r.slot = calloc(g->num + 1, sizeof(int));
	r.links_in = calloc(g->num + 1, sizeof(int));
	r.links_out = calloc(g->num + 1, sizeof(int));
	r.hops = calloc(3 * g->num + 3, sizeof(int));
	r.arrive = calloc(3 * g->num + 3, sizeof(int));
	r.use_at = calloc(g->num + 1, sizeof(int));
	r.uses = calloc(3 * g->num + 3, sizeof(int));
	if (!r.where || !r.occ || !r.hist || !r.reached || !r.depth || !r.chan ||
	    !r.group || !r.slot || !r.links_in || !r.links_out || !r.hops ||
	    !r.arrive || !r.use_at || !r.uses)
		abort();
	index_uses(&r);
	index_neighbours(&r);
	if (cap == 1)
		ok = place_route(&r, 1);
	for (int t = 0; cap > 1 && !ok && t < GROUP_TRIES && !cancelled(&r);
	     t++) {
		r.strategy = t % GROUP_STRATEGIES;
		r.max_inputs = GROUP_MAX_INPUTS - t / GROUP_STRATEGIES;
		ok = place_route(&r, cap);
	}
	if (!ok && !cancelled(&r))
		ok = rsa_route_all(&r, cap);
	if (ok) {
		stats(&r);
		record_sources(&r);
		p->stats.attempts = r.attempt;
		p->stats.movs = buffer_inputs(&r);
		if (p->stats.movs) {
			int attempts = p->stats.attempts, movs = p->stats.movs;

			stats(&r);
			p->stats.attempts = attempts;
			p->stats.movs = movs;
			p->stats.pes += movs;
		}
		shrink_slots(p);
		p->stats.slots = p->slots;
	}
	free(r.where);
	free(r.occ);
	free(r.hist);
	free(r.reached);
	free(r.depth);
	free(r.chan);
	free(r.group);
	free(r.slot);
	free(r.links_in);
	free(r.links_out);
	free(r.hops);
	free(r.arrive);
	free(r.use_at);
	free(r.uses);
	return ok;
}

/* ------------------------------------------------------- operands --- */

/*
 * The input of @n to trigger a CONST replacing its operand input @k, or
 * -1: one @n takes as often as input @k, so not REDUCE's C (count values
 * per init).
 */
static int trigger_input(const struct graph *g, const struct g_node *n, int k)
{
	int best = -1;

	for (int j = 0; j < 3; j++) {
		const struct g_node *s;

		if (j == k || !(graph_inputs(n) & (1U << j)) ||
		    (n->op == LOOM_OP_REDUCE && (j == 2 || k == 2)))
			continue;
		s = &g->nodes[n->in[j]];
		if (s->kind == G_PE)
			return j;
		if (s->port_kind != LOOM_PORT_OPERAND && best < 0)
			best = j;
	}
	return best;
}

/*
 * A copy of @g without operand ports: each input an operand fed takes a
 * CONST of that operand (LOOM_TILE_IMM_OPERAND) instead, triggered by
 * another input of the same operation (a PE's result first), else by a
 * control port, one per instance.  Values the whole graph needs then need
 * no edge position and no route across the fabric.  Returns false when
 * @g has no operand port.
 */
static bool operands_to_consts(const struct graph *g, struct graph *out)
{
	int *map = calloc(g->num + 1, sizeof(int));
	int ctrl = -1;
	bool any = false;

	if (!map)
		abort();
	graph_init(out);
	out->thread = g->thread;
	out->domain = g->domain;
	out->rank = g->rank;
	out->child_capacity = g->child_capacity;
	out->loops = g->loops;
	for (int i = 0; i < g->num; i++) {
		const struct g_node *n = &g->nodes[i];

		any |= n->kind == G_PORT && n->port_kind == LOOM_PORT_OPERAND;
		if (n->kind == G_PORT && n->port_kind == LOOM_PORT_CTRL)
			ctrl = i;
	}
	if (!any) {
		free(map);
		return false;
	}
	/*
	 * Ports first: a CONST may need the ctrl port before the node order
	 * reaches it (its map entry would still be 0, the CONST itself).
	 */
	for (int i = 0; i < g->num; i++) {
		const struct g_node *n = &g->nodes[i];

		if (n->kind == G_PORT)
			map[i] = n->port_kind == LOOM_PORT_OPERAND ? -1 :
				 graph_add(out, n);
	}
	for (int i = 0; i < g->num; i++) {
		const struct g_node *n = &g->nodes[i];
		struct g_node c = *n;

		if (n->kind == G_PORT)
			continue;
		for (int k = 0; k < 3; k++) {
			const struct g_node *s;
			int t;

			if (!(graph_inputs(n) & (1U << k)))
				continue;
			s = &g->nodes[n->in[k]];
			if (s->kind != G_PORT || s->port_kind != LOOM_PORT_OPERAND) {
				c.in[k] = map[n->in[k]];
				continue;
			}
			t = trigger_input(g, n, k);
			if (t < 0 && ctrl < 0) {
				struct g_node port = {
					.kind = G_PORT, .port_kind = LOOM_PORT_CTRL,
					.in = { G_NONE, G_NONE, G_NONE },
					.loc = n->loc,
				};

				ctrl = g->num;	/* in out only */
				map[ctrl] = graph_add(out, &port);
			}
			c.in[k] = graph_add(out, &(struct g_node){
				.kind = G_PE, .op = LOOM_OP_CONST,
				.type = LOOM_TYPE_I64, .imm_operand = true,
				.imm = s->port_index, .loc = n->loc,
				.in = { t >= 0 ? map[n->in[t]] : map[ctrl],
					G_NONE, G_NONE },
			});
		}
		map[i] = graph_add(out, &c);
	}
	free(map);
	return true;
}

/*
 * map_graph(), and the configuration proven deadlock-free; a mapping that
 * is not is dropped (its reason kept in @why for the diagnostic).
 */
static bool map_checked(const struct graph *g, unsigned width,
			unsigned height, struct placement *p, int cap,
			bool channels, char *why, size_t n,
			const atomic_int *stop, int task)
{
	if (!map_graph(g, width, height, p, cap, channels, stop, task))
		return false;
	return deadlock_check(p, why, n) == 0;
}

/*
 * Whether groups of @cap are worth a search for @g: from first_cap(), or
 * with @least from the fewest that hold every operation (pick_group()).
 */
static bool worth(const struct graph *g, unsigned width, unsigned height,
		  int cap, bool least)
{
	if (!least)
		return cap >= first_cap(g, width, height);
	return cap * (int)(width * height) >= graph_count(g, G_PE);
}

/*
 * @g (NULL when it does not fit) and its copy @c with CONSTs (or NULL) in
 * the order they are searched: @c first in a loop, where its CONSTs fire
 * once per instance and cost no cycle of the II, and where they spare the
 * routes that take a loop count to every STREAM, INVARIANT and REDUCE.
 */
static void consts_first(const struct graph *g, const struct graph *c,
			 const struct graph **both)
{
	bool swap = c && c->loops;

	both[0] = swap ? c : g;
	both[1] = swap ? g : c;
}

/*
 * A mapping with groups of @cap, of @g (NULL when it does not fit) or of
 * its copy @c with CONSTs, in consts_first() order; @least: also below
 * first_cap().
 */
static bool map_cap(const struct graph *g, const struct graph *c,
		    unsigned width, unsigned height, struct placement *p,
		    int cap, bool least, bool channels, char *why, size_t n)
{
	const struct graph *both[2];
	struct place_miss miss = { .seen = false };

	consts_first(g, c, both);
	for (int k = 0; k < 2; k++) {
		if (!both[k] || !worth(both[k], width, height, cap, least))
			continue;
		if (map_checked(both[k], width, height, p, cap, channels, why,
				n, NULL, 0))
			return true;
		if (closer(&p->miss, &miss))
			miss = p->miss;
	}
	p->miss = miss;
	return false;
}

/* How many threads walk_caps() uses; 0: one a CPU, at most WALK_THREADS. */
#define WALK_THREADS	4
static unsigned walk_threads;

void place_set_threads(unsigned n)
{
	walk_threads = n;
}

static bool link_channels = true;

void place_set_link_channels(bool on)
{
	link_channels = on;
}

/* One search of walk_caps(): @g with groups of @cap. */
struct cap_task {
	const struct graph *g;
	int cap;
	bool channels;
	bool ok;
	char why[160];
	struct placement *p;
};

struct cap_walk {
	unsigned width, height;
	struct cap_task task[4 * LOOM_PE_SLOTS];
	int n;
	atomic_int next;
	atomic_int best;	/* the first task that mapped, @n if none */
};

static void *walk_worker(void *arg)
{
	struct cap_walk *w = arg;

	for (;;) {
		int i = atomic_fetch_add(&w->next, 1), b;
		struct cap_task *t = &w->task[i < w->n ? i : 0];

		if (i >= w->n || i > atomic_load(&w->best))
			return NULL;
		t->p = malloc(sizeof(*t->p));
		if (!t->p)
			abort();
		t->ok = map_checked(t->g, w->width, w->height, t->p, t->cap,
				    t->channels, t->why, sizeof(t->why), &w->best, i);
		b = atomic_load(&w->best);
		while (t->ok && i < b &&
		       !atomic_compare_exchange_weak(&w->best, &b, i))
			;
	}
}

/*
 * The walk up the group sizes: @g (when non-NULL), then @c, then with
 * @channels both again with links of channels, at each size from
 * first_cap() on; the first that maps goes into @p and its size is
 * returned (0: none, @why as the last refusal left it, @miss the closest
 * the searches that failed came); *@tried: the first size searched.  The
 * searches are independent and deterministic, so they run on several
 * threads, later ones speculatively: the result is the sequential walk's,
 * whatever the threads' timing.
 */
static int walk_caps(const struct graph *g, const struct graph *c,
		     unsigned width, unsigned height, bool channels,
		     struct placement *p, int *tried, char *why, size_t n,
		     struct place_miss *miss)
{
	struct cap_walk *w = calloc(1, sizeof(*w));
	pthread_t tid[WALK_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads = walk_threads ? walk_threads :
			   cpus > WALK_THREADS ? WALK_THREADS :
			   cpus > 1 ? (unsigned)cpus : 1;
	unsigned started = 0;
	int found = 0;

	if (!w)
		abort();
	w->width = width;
	w->height = height;
	*tried = 0;
	for (int cap = 2; cap <= LOOM_PE_SLOTS; cap++) {
		const struct graph *both[2];

		consts_first(g, c, both);
		for (int k = 0; k < 4; k++) {
			if ((k >= 2 && !channels) || !both[k % 2] ||
			    !worth(both[k % 2], width, height, cap, false))
				continue;
			w->task[w->n].g = both[k % 2];
			w->task[w->n].channels = k >= 2;
			w->task[w->n++].cap = cap;
			if (!*tried)
				*tried = cap;
		}
	}
	atomic_init(&w->next, 0);
	atomic_init(&w->best, w->n);
	if (threads > WALK_THREADS)
		threads = WALK_THREADS;
	for (; started + 1 < threads; started++)
		if (pthread_create(&tid[started], NULL, walk_worker, w))
			break;
	walk_worker(w);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
	for (int i = 0; i < w->n; i++) {
		struct cap_task *t = &w->task[i];

		if (i == atomic_load(&w->best)) {
			*p = *t->p;
			found = t->cap;
		} else if (i < atomic_load(&w->best) && t->why[0]) {
			snprintf(why, n, "%s", t->why);
		}
		if (i < atomic_load(&w->best) && closer(&t->p->miss, miss))
			*miss = t->p->miss;
		free(t->p);
	}
	free(w);
	return found;
}

/*
 * The walk up the group sizes for @g (NULL when it does not fit) and its
 * copy @c with CONSTs (and with @channels, with links of channels after
 * each size without); when nothing from the first size worth trying up
 * maps and @smaller, smaller groups, which cost no II either, spread over
 * a large fabric where the greedy packing of large ones leaves too few
 * routes between them.  Returns the size found (0: none); *@tried as
 * walk_caps() leaves it.
 */
static int search_caps(const struct graph *g, const struct graph *c,
		       unsigned width, unsigned height, bool channels,
		       bool smaller, struct placement *p, int *tried,
		       char *why, size_t n, struct place_miss *miss)
{
	int found = walk_caps(g, c, width, height, channels, p, tried, why, n,
			      miss);

	for (int k = *tried - 1; !found && smaller && k >= 2; k--) {
		for (int ch = 0; !found && ch <= channels; ch++) {
			if (map_cap(g, c, width, height, p, k, true, ch, why,
				    n))
				found = k;
			else if (closer(&p->miss, miss))
				*miss = p->miss;
		}
	}
	return found;
}

/*
 * Maps @g: spatially if it can, else on temporal PEs, groups growing from
 * first_cap(); at each group size @g itself, then the copy of it whose
 * operands are CONSTs (which needs fewer ports and routes, and has more
 * operations), then both with links of channels
 * (LOOM_CONFIG_VERSION_CHANNELS, which a device runs with
 * LOOM_CAP_LINK_CHANNELS): a graph gets them only at a group size where it
 * does not route with one value a link, and a group size where it routes
 * with them beats a larger one where it routes without (a lower II; the
 * search is shorter too).  When the engine runs the mapping found slower than its
 * bound (measure.c), smaller groups are tried too, while they route, down
 * to the fewest the tiles allow, and the fastest mapping is kept: a group
 * that fills a PE's every cycle slips, and fewer operations a tile leave
 * the handshakes room.
 */
#define MEASURED_SLACK	1.05

static bool map_any(const struct graph *g, unsigned width, unsigned height,
		    struct placement *p, char *why, size_t n)
{
	bool fit = fits(g, width, height);
	bool spatial = fit && graph_count(g, G_PE) <= (int)(width * height);
	int found = 0, tried = 0;
	struct place_miss miss = { .seen = false };
	struct placement *q = malloc(sizeof(*q)), *sp = NULL;
	struct graph c, *cp = NULL;

	if (!q)
		abort();
	/*
	 * Spatially first; a spatial mapping the engine runs slower than its
	 * bound is kept only if no temporal one runs faster.
	 */
	if (spatial &&
	    map_checked(g, width, height, q, 1, false, why, n, NULL, 0)) {
		place_measure(g, q);
		if (q->stats.measured <= MEASURED_SLACK * q->stats.ii_bound) {
			*p = *q;
			free(q);
			return true;
		}
		sp = q;
		q = malloc(sizeof(*q));
		if (!q)
			abort();
	} else if (spatial && closer(&q->miss, &miss)) {
		miss = q->miss;
	}
	if (operands_to_consts(g, &c) && fits(&c, width, height))
		cp = &c;
	found = search_caps(fit ? g : NULL, cp, width, height, link_channels,
			    !sp, p, &tried, why, n, &miss);
	if (found)
		place_measure(g, p);
	/* below the first size tried only: the search is deterministic */
	for (int k = found - 1; found && found == tried && k >= 2 &&
	     p->stats.measured > MEASURED_SLACK * p->stats.ii_bound; k--) {
		if (!map_cap(fit ? g : NULL, cp, width, height, q, k, true,
			     p->channels, why, n))
			break;
		place_measure(g, q);
		if (q->stats.measured > 0 && q->stats.measured < p->stats.measured)
			*p = *q;
	}
	if (sp && (!found || p->stats.measured <= 0 ||
		   (sp->stats.measured > 0 &&
		    sp->stats.measured <= p->stats.measured))) {
		*p = *sp;
		found = 1;
	}
	if (!found)
		p->miss = miss;
	free(sp);
	free(q);
	graph_free(&c);
	return found;
}

/* The diagnostic for @g, which map_any() could not map (@why: its reason). */
static void map_failed(struct diag *d, struct loom_loc loc,
		       const struct graph *g, unsigned width, unsigned height,
		       const char *why, const struct place_miss *miss)
{
	char closest[200] = "";

	/*
	 * How close the search came, and what it is up against: a routing
	 * needs every value on links of its own, and the fabric has
	 * 2 (W - 1) H + 2 W (H - 1) links between tiles
	 */
	if (miss->seen && miss->chans > 1)
		snprintf(closest, sizeof(closest),
			 "; the closest placement left %d links carrying more than %d values, its routes taking %d link hops where the fabric has %u links between tiles of %d channels",
			 miss->shared, miss->chans, miss->hops,
			 2 * ((width - 1) * height + (height - 1) * width),
			 miss->chans);
	else if (miss->seen)
		snprintf(closest, sizeof(closest),
			 "; the closest placement left %d links shared, its routes taking %d link hops where the fabric has %u links between tiles",
			 miss->shared, miss->hops,
			 2 * ((width - 1) * height + (height - 1) * width));
	if (why[0])
		diag_error(d, loc,
			   "refusing the mapping of @%s on a %ux%u fabric: it could deadlock: %s",
			   g->thread ? g->thread : "?", width, height, why);
	else if (!fits(g, width, height))
		does_not_fit(d, loc, g, width, height);
	else
		diag_error(d, loc,
			   "cannot route the graph of @%s (%d operations, %d ports) on a %ux%u fabric after %d greedy placements and %d routed annealings%s",
			   g->thread ? g->thread : "?", graph_count(g, G_PE),
			   graph_count(g, G_PORT), width, height, PLACE_ATTEMPTS,
			   RSA_STARTS, closest);
}

/* ------------------------------------------------------------ embed --- */

#define EMBED_DEFAULT_DIM	4	/* the device's default fabric, 4x4 */

/*
 * @small's mapping, in the north-west corner of the larger @big
 * (@width x @height).  A port on @small's east (south) edge enters @big on
 * the same row (column) and runs west (north) to where it entered before,
 * over tiles the mapping leaves empty; the statistics count those hops,
 * and add the longest such run to the longest path.
 */
static void embed(const struct placement *small, struct placement *big,
		  unsigned width, unsigned height)
{
	unsigned w = small->width, h = small->height, k = small->slots;
	int extra = 0, longest = 0;

	memset(big, 0, sizeof(*big));
	big->width = width;
	big->height = height;
	big->slots = k;
	big->channels = small->channels;
	for (unsigned y = 0; y < h; y++) {
		memcpy(&big->tiles[y * width * k], &small->tiles[y * w * k],
		       w * k * sizeof(small->tiles[0]));
		memcpy(&big->slot_src[y * width * LOOM_PE_SLOTS],
		       &small->slot_src[y * w * LOOM_PE_SLOTS],
		       w * LOOM_PE_SLOTS * sizeof(small->slot_src[0]));
	}
	memcpy(big->port_src, small->port_src, sizeof(big->port_src));
	big->num_ports = small->num_ports;
	memcpy(big->ports, small->ports, sizeof(big->ports));
	for (unsigned i = 0; i < small->num_ports; i++) {
		const struct loom_port_binding *b = &small->ports[i];
		int run = 0;

		if (b->side == LOOM_DIR_E)
			for (unsigned x = w; x < width; x++, run++)
				big->tiles[(b->pos * width + x) * k]
					.route[LOOM_OUT_W] = LOOM_SRC_E;
		if (b->side == LOOM_DIR_S)
			for (unsigned y = h; y < height; y++, run++)
				big->tiles[(y * width + b->pos) * k]
					.route[LOOM_OUT_N] = LOOM_SRC_S;
		extra += run;
		longest = run > longest ? run : longest;
	}
	big->stats = small->stats;
	big->stats.hops += extra;
	big->stats.longest_hops += longest;
	big->stats.longest_cycles += longest;
}

/*
 * A mapping found for a smaller fabric serves a larger one (embed()),
 * proven deadlock-free again: (W-1) x (H-1)'s, then the device's default
 * 4x4's.  So what maps on 4x4 maps on every larger fabric, and what maps
 * on W x H on (W+1) x (H+1), though the search on the larger fabric alone
 * might not find it.
 */
static bool map_smaller(const struct graph *g, unsigned width,
			unsigned height, struct placement *p)
{
	const unsigned sizes[][2] = {
		{ width - 1, height - 1 },
		{ EMBED_DEFAULT_DIM, EMBED_DEFAULT_DIM },
	};
	struct placement *small = malloc(sizeof(*small));
	bool ok = false;

	if (!small)
		abort();
	for (size_t i = 0; !ok && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned w = sizes[i][0], h = sizes[i][1];
		char why[160] = "";

		if (w < 1 || h < 1 || w > width || h > height ||
		    (w == width && h == height) ||
		    (i > 0 && w == sizes[0][0] && h == sizes[0][1]) ||
		    !map_any(g, w, h, small, why, sizeof(why)))
			continue;
		embed(small, p, width, height);
		ok = deadlock_check(p, why, sizeof(why)) == 0;
	}
	free(small);
	return ok;
}

unsigned place_graph(struct diag *d, struct loom_loc loc,
		     const struct graph *g, unsigned width, unsigned height,
		     struct placement *p)
{
	char why[160] = "";
	struct place_miss miss;

	if (map_any(g, width, height, p, why, sizeof(why)))
		goto mapped;
	miss = p->miss;
	if (fits(g, width, height) && map_smaller(g, width, height, p))
		goto mapped;
	map_failed(d, loc, g, width, height, why, &miss);
	memset(p, 0, sizeof(*p));
	p->width = width;
	p->height = height;
	p->slots = 1;
	return 1;
mapped:
	place_measure(g, p);
	return 0;
}

size_t place_config_size(const struct placement *p)
{
	return LOOM_CONFIG_SIZE((size_t)p->width * p->height * p->slots,
				p->num_ports);
}

void place_config_write(const struct placement *p, void *buf)
{
	struct loom_fabric_config hdr = {
		.magic = LOOM_CONFIG_MAGIC, .version = LOOM_CONFIG_VERSION,
		.width = p->width, .height = p->height,
		.num_ports = p->num_ports,
	};
	size_t tiles = (size_t)p->width * p->height * p->slots *
		       sizeof(p->tiles[0]);

	/* spatial configurations stay version 1: any device runs them */
	if (p->slots > 1) {
		hdr.version = p->channels ? LOOM_CONFIG_VERSION_CHANNELS :
			      LOOM_CONFIG_VERSION_SLOTS;
		hdr.slots = p->slots;
	}
	char *b = buf;

	memcpy(b, &hdr, sizeof(hdr));
	memcpy(b + sizeof(hdr), p->tiles, tiles);
	memcpy(b + sizeof(hdr) + tiles, p->ports,
	       p->num_ports * sizeof(p->ports[0]));
}

/* ----------------------------------------------------------- listing --- */

static const char *const dir_name = "NESW";
static const char *const src_names[] = { "-", "N", "E", "S", "W", "PE" };
static const char *const out_names[] = { "N", "E", "S", "W", "A", "B", "C" };

/* Route source @s: a link's channel k is "N.k" (links of channels). */
static void print_src(FILE *out, unsigned s, unsigned slots)
{
	if (s <= LOOM_SRC_PE)
		fprintf(out, "%s", src_names[s]);
	else if (s < LOOM_SRC_SLOT(slots))
		fprintf(out, "S%u", s - LOOM_SRC_SLOT0);
	else if (LOOM_SRC_IS_CHAN(s) && LOOM_SRC_CHAN_INDEX(s) < slots)
		fprintf(out, "%c.%u", dir_name[LOOM_SRC_CHAN_DIR(s)],
			LOOM_SRC_CHAN_INDEX(s));
	else
		fprintf(out, "?");
}

/* Slot @k of tile (x, y); @slots 1 prints no slot number. */
static void print_tile(FILE *out, const struct loom_tile_config *tc,
		       unsigned x, unsigned y, unsigned k, unsigned slots)
{
	bool used = tc->op != LOOM_OP_NOP;

	for (int o = 0; o < LOOM_ROUTE_OUTS; o++)
		used |= tc->route[o] != LOOM_SRC_NONE;
	if (!used)
		return;
	if (slots > 1)
		fprintf(out, "  (%u,%u).%u", x, y, k);
	else
		fprintf(out, "  (%u,%u)", x, y);
	fprintf(out, "  %-9s %s", loom_op_name(tc->op),
		tc->op == LOOM_OP_NOP ? "   " :
		tc->type == LOOM_TYPE_I32 ? "i32" : "i64");
	if (tc->flags & LOOM_TILE_IMM_B)
		fprintf(out, " B=%lld", (long long)tc->imm);
	else if (tc->flags & LOOM_TILE_IMM_OPERAND)
		fprintf(out, " operand=%llu", (unsigned long long)tc->imm);
	else if (tc->op == LOOM_OP_CONST)
		fprintf(out, " imm=%lld", (long long)tc->imm);
	else if (tc->op == LOOM_OP_REDUCE)
		fprintf(out, " fold=%s", loom_op_name((unsigned)tc->imm));
	else if (tc->op == LOOM_OP_ATOMIC && loom_atomic_info(tc->imm)->name)
		fprintf(out, " kind=%s", loom_atomic_info(tc->imm)->name);
	fprintf(out, "  routes:");
	for (int o = 0; o < LOOM_ROUTE_OUTS; o++) {
		if (tc->route[o] == LOOM_SRC_NONE)
			continue;
		fprintf(out, " %s<-", out_names[o]);
		print_src(out, tc->route[o], slots);
	}
	fprintf(out, "\n");
}

int print_config(FILE *out, const void *cfg, size_t size)
{
	struct loom_fabric_config hdr;
	const char *b = cfg;
	size_t ntiles;
	unsigned slots;

	if (size < sizeof(hdr))
		return -1;
	memcpy(&hdr, b, sizeof(hdr));
	slots = LOOM_CONFIG_SLOTS(hdr.version, hdr.slots);
	ntiles = (size_t)hdr.width * hdr.height * slots;
	if (hdr.magic != LOOM_CONFIG_MAGIC || hdr.num_ports > LOOM_MAX_PORTS ||
	    slots < 1 || slots > LOOM_PE_SLOTS ||
	    size != LOOM_CONFIG_SIZE(ntiles, hdr.num_ports))
		return -1;
	fprintf(out, "  fabric %ux%u, %u ports", hdr.width, hdr.height,
		hdr.num_ports);
	if (hdr.version == LOOM_CONFIG_VERSION_SLOTS ||
	    hdr.version == LOOM_CONFIG_VERSION_CHANNELS)
		fprintf(out, ", %u slots per PE", slots);
	if (hdr.version == LOOM_CONFIG_VERSION_CHANNELS)
		fprintf(out, ", links of channels");
	fprintf(out, "\n");
	for (size_t i = 0; i < ntiles; i++) {
		struct loom_tile_config tc;
		size_t t = i / slots;

		memcpy(&tc, b + sizeof(hdr) + i * sizeof(tc), sizeof(tc));
		print_tile(out, &tc, t % hdr.width, t / hdr.width, i % slots,
			   slots);
	}
	for (unsigned i = 0; i < hdr.num_ports; i++) {
		struct loom_port_binding pb;

		memcpy(&pb, b + sizeof(hdr) + ntiles * sizeof(struct loom_tile_config) +
		       i * sizeof(pb), sizeof(pb));
		fprintf(out, "  port %c%u  %s %u\n",
			pb.side < 4 ? dir_name[pb.side] : '?', pb.pos,
			loom_port_kind_name(pb.kind), pb.index);
	}
	return 0;
}

void place_print_stats(FILE *out, const struct place_stats *s)
{
	const char *unit = s->measured_per_iteration ? "loop iteration" :
			   "instance";

	fprintf(out,
		"  stats: %d PEs, %d ports, %d route hops, longest path %d cycles (%d hops), placed in %d attempt%s",
		s->pes, s->ports, s->hops, s->longest_cycles, s->longest_hops,
		s->attempts, s->attempts == 1 ? "" : "s");
	if (s->slots > 1)
		fprintf(out, "; temporal PEs of %d slots", s->slots);
	if (s->measured > 0)
		fprintf(out, "; II %.2f cycles per %s, measured (scheduled %d, bound %d)\n",
			s->measured, unit, s->cycles_per_instance, s->ii_bound);
	else
		fprintf(out, "; II not measured (%s); scheduled %d cycles per %s, bound %d\n",
			place_measure_failure(s), s->cycles_per_instance,
			s->loops ? "loop iteration" : "instance", s->ii_bound);
}
