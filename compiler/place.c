// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * place.c: greedy placement, maze routing, rip-up and retry.
 *
 * PEs are placed in topological order on the free tile closest to their
 * already placed inputs (an input port not yet placed pulls towards the
 * nearest edge); a port goes to the free edge position closest to its
 * first consumer.  Each output then is routed as a tree: for every
 * destination a breadth-first search from every tile the value already
 * reaches, over switch outputs no other value uses (an output selects
 * exactly one source, so a link carries one value per direction).  When a
 * destination cannot be reached the whole routing is dropped and the graph
 * placed again with random perturbation, PLACE_ATTEMPTS times.
 */
#include <stdlib.h>
#include <string.h>

#include "place.h"

struct pr {
	const struct graph *g;
	struct placement *p;
	unsigned w, h;
	int *where;			/* node: tile, or port binding index */
	int tile_node[PLACE_MAX_TILES];	/* node on each tile, or -1 */
	bool edge_used[4][LOOM_FABRIC_MAX_DIM];
	int *hops;			/* node * 3 + slot: route length */
	int *order;			/* routing order of the outputs */
	unsigned seed;
	int attempt;
};

#define ROUTE_ROUNDS	8

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
	return iabs(a % (int)r->w - b % (int)r->w) +
	       iabs(a / (int)r->w - b / (int)r->w);
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

static int neighbour(struct pr *r, int t, unsigned dir)
{
	int x = t % r->w, y = t / r->w;

	switch (dir) {
	case LOOM_DIR_N: return y > 0 ? t - (int)r->w : -1;
	case LOOM_DIR_S: return y < (int)r->h - 1 ? t + (int)r->w : -1;
	case LOOM_DIR_W: return x > 0 ? t - 1 : -1;
	default: return x < (int)r->w - 1 ? t + 1 : -1;
	}
}

static int tile_cost(struct pr *r, const struct g_node *n, int t)
{
	int cost = 0;

	for (int k = 0; k < 3; k++) {
		const struct g_node *src;
		int s = n->in[k];

		if (!(graph_inputs(n) & (1U << k)))
			continue;
		src = &r->g->nodes[s];
		if (src->kind == G_PE)
			cost += 2 * dist(r, t, r->where[s]);
		else if (r->where[s] >= 0)
			cost += 2 * dist(r, t, edge_tile(r,
				r->p->ports[r->where[s]].side,
				r->p->ports[r->where[s]].pos)) + 2;
		else
			cost += 2 * to_edge(r, t) + 2;
	}
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
	r->where[node] = r->p->num_ports++;
}

/*
 * Later attempts on a roomy fabric leave tiles free between PEs, as
 * channels for the routes: a checkerboard, then one tile in four.
 */
static bool allowed(struct pr *r, int t)
{
	int x = t % r->w, y = t / r->w;
	int pes = graph_count(r->g, G_PE);
	int spread = r->attempt % 3;

	if (spread == 2 && (int)(r->w * r->h) >= 4 * pes)
		return x % 2 == 0 && y % 2 == 0;
	if (spread >= 1 && (int)(r->w * r->h) >= 2 * pes)
		return (x + y) % 2 == 0;
	return true;
}

static void place_pe(struct pr *r, int i)
{
	const struct g_node *n = &r->g->nodes[i];
	int best = -1, bt = 0;

	for (int t = 0; t < (int)(r->w * r->h); t++) {
		int c;

		if (r->tile_node[t] >= 0 || !allowed(r, t))
			continue;
		c = tile_cost(r, n, t);
		if (best < 0 || c < best) {
			best = c;
			bt = t;
		}
	}
	r->tile_node[bt] = i;
	r->where[i] = bt;
	for (int k = 0; k < 3; k++)
		if ((graph_inputs(n) & (1U << k)) &&
		    r->g->nodes[n->in[k]].kind == G_PORT &&
		    r->where[n->in[k]] < 0)
			place_port(r, n->in[k], bt);
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
		place_pe(r, i);
		tc = &r->p->tiles[r->where[i]];
		tc->op = n->op;
		tc->type = n->type;
		tc->flags = n->imm_b ? LOOM_TILE_IMM_B : 0;
		tc->imm = n->imm;
	}
}

/* ------------------------------------------------------------ route --- */

/* The switch source through which a link in direction @dir arrives. */
static uint8_t arrives_as(unsigned dir)
{
	return LOOM_SRC_N + (dir + 2) % 4;
}

/* Extends the value's tree (@avail, @depth) to tile @dst; false if stuck. */
static bool reach(struct pr *r, uint8_t *avail, int *depth, int dst)
{
	int n = r->w * r->h, head = 0, tail = 0;
	int queue[PLACE_MAX_TILES], from[PLACE_MAX_TILES];
	int path[PLACE_MAX_TILES], len = 0;

	for (int t = 0; t < PLACE_MAX_TILES; t++)
		from[t] = -2;
	for (int t = 0; t < n; t++) {
		if (avail[t]) {
			from[t] = -1;
			queue[tail++] = t;
		}
	}
	while (head < tail && from[dst] == -2) {
		int t = queue[head++];

		for (unsigned d = 0; d < 4; d++) {
			int u = neighbour(r, t, d);

			if (u < 0 || from[u] != -2 ||
			    r->p->tiles[t].route[d] != LOOM_SRC_NONE)
				continue;
			from[u] = t * 4 + d;
			queue[tail++] = u;
		}
	}
	if (from[dst] == -2)
		return false;
	for (int t = dst; from[t] >= 0; t = from[t] / 4)
		path[len++] = from[t];
	while (len--) {
		int t = path[len] / 4, d = path[len] % 4;
		int u = neighbour(r, t, d);

		r->p->tiles[t].route[d] = avail[t];
		avail[u] = arrives_as(d);
		depth[u] = depth[t] + 1;
	}
	return true;
}

/* Routes node @s's output to every input it feeds. */
static bool route_net(struct pr *r, int s)
{
	uint8_t avail[PLACE_MAX_TILES] = { 0 };
	int depth[PLACE_MAX_TILES] = { 0 };
	const struct g_node *src = &r->g->nodes[s];

	if (src->kind == G_PE) {
		avail[r->where[s]] = LOOM_SRC_PE;
	} else {
		const struct loom_port_binding *b = &r->p->ports[r->where[s]];

		avail[edge_tile(r, b->side, b->pos)] = LOOM_SRC_N + b->side;
	}
	for (int i = s + 1; i < r->g->num; i++) {
		const struct g_node *n = &r->g->nodes[i];

		for (int k = 0; k < 3; k++) {
			int t = r->where[i];

			if (!(graph_inputs(n) & (1U << k)) || n->in[k] != s)
				continue;
			if (!avail[t] && !reach(r, avail, depth, t))
				return false;
			r->p->tiles[t].route[LOOM_OUT_PE_A + k] = avail[t];
			r->hops[i * 3 + k] = depth[t];
		}
	}
	return true;
}

static void clear_routes(struct pr *r)
{
	for (unsigned t = 0; t < r->w * r->h; t++)
		memset(r->p->tiles[t].route, 0, sizeof(r->p->tiles[t].route));
}

/*
 * Routes every output, in r->order.  A value that cannot be routed moves
 * to the front of the order and routing starts over (rip-up and reroute),
 * a few times before the placement is given up.
 */
static int fanout(const struct graph *g, int s)
{
	int n = 0;

	for (int i = s + 1; i < g->num; i++)
		for (int k = 0; k < 3; k++)
			n += (graph_inputs(&g->nodes[i]) & (1U << k)) &&
			     g->nodes[i].in[k] == s;
	return n;
}

/* Point-to-point values first: a wide fork can detour more easily. */
static void initial_order(struct pr *r)
{
	int *fan = r->hops;	/* scratch: overwritten by routing */

	for (int i = 0; i < r->g->num; i++) {
		int j = i;

		fan[i] = fanout(r->g, i);
		for (; j > 0 && fan[r->order[j - 1]] > fan[i]; j--)
			r->order[j] = r->order[j - 1];
		r->order[j] = i;
	}
}

static bool route_all(struct pr *r)
{
	initial_order(r);
	for (int round = 0; round < ROUTE_ROUNDS; round++) {
		int i, failed;

		clear_routes(r);
		for (i = 0; i < r->g->num; i++)
			if (!route_net(r, r->order[i]))
				break;
		if (i == r->g->num)
			return true;
		failed = r->order[i];

		memmove(&r->order[1], &r->order[0], i * sizeof(int));
		r->order[0] = failed;
	}
	return false;
}

/* ------------------------------------------------------------ stats --- */

static void stats(struct pr *r)
{
	struct place_stats *st = &r->p->stats;
	int *cyc = calloc(r->g->num + 1, sizeof(int));
	int *hop = calloc(r->g->num + 1, sizeof(int));
	int mem = 0, loads = 0;

	if (!cyc || !hop)
		abort();
	st->pes = graph_count(r->g, G_PE);
	st->ports = r->p->num_ports;
	st->hops = 0;
	for (unsigned t = 0; t < r->w * r->h; t++)
		for (unsigned d = 0; d < 4; d++)
			st->hops += r->p->tiles[t].route[d] != LOOM_SRC_NONE;
	for (int i = 0; i < r->g->num; i++) {
		const struct g_node *n = &r->g->nodes[i];
		int lat = n->op == LOOM_OP_LOAD ? PLACE_LOAD_LATENCY : 1;

		if (n->kind != G_PE)
			continue;
		for (int k = 0; k < 3; k++) {
			if (!(graph_inputs(n) & (1U << k)))
				continue;
			if (cyc[n->in[k]] + r->hops[i * 3 + k] + lat > cyc[i])
				cyc[i] = cyc[n->in[k]] + r->hops[i * 3 + k] + lat;
			if (hop[n->in[k]] + r->hops[i * 3 + k] > hop[i])
				hop[i] = hop[n->in[k]] + r->hops[i * 3 + k];
		}
		mem += n->op == LOOM_OP_LOAD || n->op == LOOM_OP_STORE;
		loads += n->op == LOOM_OP_LOAD;
		if (cyc[i] > st->longest_cycles)
			st->longest_cycles = cyc[i];
		if (hop[i] > st->longest_hops)
			st->longest_hops = hop[i];
	}
	st->cycles_per_instance = loads ? PLACE_LOAD_LATENCY : 1;
	if ((mem + PLACE_MEM_PORTS - 1) / PLACE_MEM_PORTS >
	    st->cycles_per_instance)
		st->cycles_per_instance =
			(mem + PLACE_MEM_PORTS - 1) / PLACE_MEM_PORTS;
	st->loops = r->g->loops;
	free(cyc);
	free(hop);
}

/* ------------------------------------------------------------- main --- */

static bool fits(struct diag *d, struct loom_loc loc, const struct graph *g,
		 unsigned w, unsigned h)
{
	int pes = graph_count(g, G_PE), ports = graph_count(g, G_PORT);
	int edge = 2 * (int)(w + h);

	if (pes <= (int)(w * h) && ports <= edge && ports <= LOOM_MAX_PORTS)
		return true;
	diag_error(d, loc,
		   "graph of %d operations and %d ports does not fit a %ux%u fabric (%u tiles, %d edge ports)",
		   pes, ports, w, h, w * h, edge < LOOM_MAX_PORTS ? edge : LOOM_MAX_PORTS);
	return false;
}

unsigned place_graph(struct diag *d, struct loom_loc loc,
		     const struct graph *g, unsigned width, unsigned height,
		     struct placement *p)
{
	struct pr r = { .g = g, .p = p, .w = width, .h = height,
			.seed = 12345 };
	bool ok = false;

	memset(p, 0, sizeof(*p));
	p->width = width;
	p->height = height;
	if (!fits(d, loc, g, width, height))
		return 1;
	r.where = calloc(g->num + 1, sizeof(int));
	r.hops = calloc(3 * g->num + 3, sizeof(int));
	r.order = calloc(g->num + 1, sizeof(int));
	if (!r.where || !r.hops || !r.order)
		abort();
	for (r.attempt = 0; !ok && r.attempt < PLACE_ATTEMPTS; r.attempt++) {
		place_all(&r);
		ok = route_all(&r);
	}
	if (ok) {
		stats(&r);
		p->stats.attempts = r.attempt;
	} else {
		diag_error(d, loc,
			   "cannot route the graph of @%s (%d operations, %d ports) on a %ux%u fabric after %d placements",
			   g->thread ? g->thread : "?", graph_count(g, G_PE),
			   graph_count(g, G_PORT), width, height,
			   PLACE_ATTEMPTS);
	}
	free(r.where);
	free(r.hops);
	free(r.order);
	return ok ? 0 : 1;
}

size_t place_config_size(const struct placement *p)
{
	return LOOM_CONFIG_SIZE((size_t)p->width * p->height, p->num_ports);
}

void place_config_write(const struct placement *p, void *buf)
{
	struct loom_fabric_config hdr = {
		.magic = LOOM_CONFIG_MAGIC, .version = LOOM_CONFIG_VERSION,
		.width = p->width, .height = p->height,
		.num_ports = p->num_ports,
	};
	size_t tiles = (size_t)p->width * p->height * sizeof(p->tiles[0]);
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

static void print_tile(FILE *out, const struct loom_tile_config *tc,
		       unsigned x, unsigned y)
{
	bool used = tc->op != LOOM_OP_NOP;

	for (int o = 0; o < LOOM_ROUTE_OUTS; o++)
		used |= tc->route[o] != LOOM_SRC_NONE;
	if (!used)
		return;
	fprintf(out, "  (%u,%u)  %-9s %s", x, y, loom_op_name(tc->op),
		tc->op == LOOM_OP_NOP ? "   " :
		tc->type == LOOM_TYPE_I32 ? "i32" : "i64");
	if (tc->flags & LOOM_TILE_IMM_B)
		fprintf(out, " B=%lld", (long long)tc->imm);
	else if (tc->op == LOOM_OP_CONST)
		fprintf(out, " imm=%lld", (long long)tc->imm);
	else if (tc->op == LOOM_OP_REDUCE)
		fprintf(out, " fold=%s", loom_op_name((unsigned)tc->imm));
	fprintf(out, "  routes:");
	for (int o = 0; o < LOOM_ROUTE_OUTS; o++)
		if (tc->route[o] != LOOM_SRC_NONE)
			fprintf(out, " %s<-%s", out_names[o],
				tc->route[o] <= LOOM_SRC_PE ?
					src_names[tc->route[o]] : "?");
	fprintf(out, "\n");
}

int print_config(FILE *out, const void *cfg, size_t size)
{
	struct loom_fabric_config hdr;
	const char *b = cfg;
	size_t ntiles;

	if (size < sizeof(hdr))
		return -1;
	memcpy(&hdr, b, sizeof(hdr));
	ntiles = (size_t)hdr.width * hdr.height;
	if (hdr.magic != LOOM_CONFIG_MAGIC || hdr.num_ports > LOOM_MAX_PORTS ||
	    size != LOOM_CONFIG_SIZE(ntiles, hdr.num_ports))
		return -1;
	fprintf(out, "  fabric %ux%u, %u ports\n", hdr.width, hdr.height,
		hdr.num_ports);
	for (size_t t = 0; t < ntiles; t++) {
		struct loom_tile_config tc;

		memcpy(&tc, b + sizeof(hdr) + t * sizeof(tc), sizeof(tc));
		print_tile(out, &tc, t % hdr.width, t / hdr.width);
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
	fprintf(out,
		"  stats: %d PEs, %d ports, %d route hops, longest path %d cycles (%d hops), throughput bound 1 %s per %d cycle%s, placed in %d attempt%s\n",
		s->pes, s->ports, s->hops, s->longest_cycles, s->longest_hops,
		s->loops ? "loop iteration" : "instance",
		s->cycles_per_instance, s->cycles_per_instance == 1 ? "" : "s",
		s->attempts, s->attempts == 1 ? "" : "s");
}
