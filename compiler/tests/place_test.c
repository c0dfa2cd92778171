// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Place and route: configurations the engine accepts, one PE per tile,
 * routes that respect one source per switch output, statistics, and the
 * "does not fit" and "cannot route" diagnostics.
 */
#include <stdlib.h>

#include "deadlock.h"
#include "engine.h"
#include "engine_run.h"
#include "front.h"
#include "lower.h"
#include "place.h"

#define DENSE "domain(#dataflow.thread_domain<dense>)"

static const char vadd_src[] =
	"dataflow.thread @vadd " DENSE "(%a: memref<?xi64>, %b: memref<?xi64>, %c: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xi64>\n"
	"  %y = memref.load %b[%i] : memref<?xi64>\n"
	"  %s = arith.addi %x, %y : i64\n"
	"  memref.store %s, %c[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/* A chain of @n additions of an operand: n + 3 PEs, 2 ports. */
static char *chain_src(int n)
{
	size_t cap = 512 + 64 * (size_t)n, len;
	char *s = malloc(cap);

	if (!s)
		abort();
	len = snprintf(s, cap, "dataflow.thread @chain " DENSE "(%%m: memref<?xi64>, %%x: i64) ctrl(%%ctl: none) iv(%%i: index) {\n"
		       "  %%v0 = arith.muli %%x, %%x : i64\n");
	for (int k = 1; k <= n; k++)
		len += snprintf(s + len, cap - len,
				"  %%v%d = arith.addi %%v%d, %%x : i64\n", k, k - 1);
	snprintf(s + len, cap - len,
		 "  memref.store %%v%d, %%m[%%i] : memref<?xi64>\n"
		 "  dataflow.thread.yield %%ctl : none\n}\n", n);
	return s;
}

/**
 * struct placed - a thread lowered and placed
 */
struct placed {
	struct front f;
	struct graph g;
	struct placement p;
	unsigned errors;
};

static int place_text(struct placed *x, const char *text, unsigned w,
		      unsigned h)
{
	graph_init(&x->g);
	if (front_verify(&x->f, text) ||
	    lower_thread(&x->f.d, x->f.m->funcs, &x->g))
		return -1;
	x->errors = place_graph(&x->f.d, x->f.m->funcs->name_loc, &x->g, w,
				h, &x->p);
	return 0;
}

static void placed_close(struct placed *x)
{
	graph_free(&x->g);
	front_close(&x->f);
}

/* LOAD_CONFIG on an engine fabric of the same size. */
static enum loom_config_error engine_accepts(const struct placement *p)
{
	struct loom_fabric_params fp = {
		.width = p->width, .height = p->height,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	struct loom_fabric *f = loom_fabric_create(&fp);
	size_t n = place_config_size(p);
	void *buf = malloc(n);
	enum loom_config_error err;

	if (!f || !buf)
		abort();
	place_config_write(p, buf);
	err = loom_fabric_configure(f, buf, n);
	free(buf);
	loom_fabric_destroy(f);
	return err;
}

static int used_tiles(const struct placement *p)
{
	int n = 0;

	for (unsigned t = 0; t < p->width * p->height * p->slots; t++)
		n += p->tiles[t].op != LOOM_OP_NOP;
	return n;
}

/* Each PE input the op uses is routed, and nothing else is. */
static bool inputs_routed(const struct placement *p)
{
	for (unsigned t = 0; t < p->width * p->height * p->slots; t++) {
		const struct loom_tile_config *tc = &p->tiles[t];
		unsigned need = tc->op == LOOM_OP_NOP ? 0 : loom_op_inputs(tc->op);

		if (tc->flags & LOOM_TILE_IMM_B)
			need = need > 1 ? need : 2;
		for (unsigned k = 0; k < 3; k++) {
			bool want = k < need &&
				    !(k == 1 && (tc->flags & LOOM_TILE_IMM_B));
			bool has = tc->route[LOOM_OUT_PE_A + k] != LOOM_SRC_NONE;

			if (tc->op == LOOM_OP_JOIN && k == 2)
				continue;	/* C optional */
			if (want != has)
				return false;
		}
	}
	return true;
}

TEST(vector_add_4x4)
{
	struct placed x;

	REQUIRE(place_text(&x, vadd_src, 4, 4) == 0);
	CHECK_EQ(0, x.errors);
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x.p));
	CHECK_EQ(9, used_tiles(&x.p));
	CHECK_EQ(4, x.p.num_ports);
	CHECK(inputs_routed(&x.p));
	CHECK_EQ(9, x.p.stats.pes);
	CHECK_EQ(4, x.p.stats.ports);
	CHECK(x.p.stats.hops > 0);
	/* a LOAD holds one load in flight: at best one instance per latency */
	CHECK_EQ(LOOM_DEFAULT_LOAD_LATENCY, x.p.stats.cycles_per_instance);
	CHECK(x.p.stats.longest_cycles >= 2 * LOOM_DEFAULT_LOAD_LATENCY / 2 + 3);
	placed_close(&x);
}

TEST(deterministic)
{
	struct placed a, b;

	REQUIRE(place_text(&a, vadd_src, 5, 3) == 0);
	REQUIRE(place_text(&b, vadd_src, 5, 3) == 0);
	CHECK_EQ(0, a.errors);
	CHECK(!memcmp(a.p.tiles, b.p.tiles, sizeof(a.p.tiles)));
	CHECK(!memcmp(a.p.ports, b.p.ports, sizeof(a.p.ports)));
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&a.p));
	placed_close(&a);
	placed_close(&b);
}

TEST(sizes_from_1x1_to_16x16)
{
	static const unsigned sizes[][2] = {
		{ 3, 3 }, { 4, 4 }, { 8, 2 }, { 2, 8 }, { 8, 8 }, { 16, 16 },
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct placed x;

		REQUIRE(place_text(&x, vadd_src, sizes[i][0], sizes[i][1]) == 0);
		CHECK_EQ(0, x.errors);
		if (!x.errors) {
			CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x.p));
			CHECK(inputs_routed(&x.p));
		}
		placed_close(&x);
	}
}

TEST(does_not_fit)
{
	struct placed x;
	char *s = chain_src(125);

	/* 130 operations: more than 16 PEs of LOOM_PE_SLOTS (8) slots */
	REQUIRE(place_text(&x, s, 4, 4) == 0);
	CHECK_EQ(1, x.errors);
	CHECK(front_diag_is(&x.f, 0, DIAG_ERROR, 1, 17,
			    "graph of 130 operations and 3 ports does not fit a 4x4 fabric (16 tiles of 8 slots"));
	placed_close(&x);
	REQUIRE(place_text(&x, vadd_src, 1, 1) == 0);
	CHECK(front_diag_is(&x.f, 0, DIAG_ERROR, 1, 17,
			    "graph of 9 operations and 4 ports does not fit a 1x1 fabric"));
	placed_close(&x);
	free(s);
}

/*
 * Enough slots, too few links: a 5-point stencil of 31 operations on a
 * 2x2 fabric of 32 slots and 8 links.  (vadd in a 1 x 9 strip, the case
 * before, routes since the router negotiates congestion.)
 */
static const char stencil5_src[] =
	"dataflow.thread private @jacobi_2d " DENSE "(%src: memref<?xf32>, %dst: memref<?xf32>, %n: index) ctrl(%ctl: none) iv(%a: index, %b: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %fifth = arith.constant 0.2 : f32\n"
	"  %i = arith.addi %a, %c1 : index\n"
	"  %j = arith.addi %b, %c1 : index\n"
	"  %ri = arith.muli %i, %n : index\n"
	"  %c = arith.addi %ri, %j : index\n"
	"  %w = arith.subi %c, %c1 : index\n"
	"  %e = arith.addi %c, %c1 : index\n"
	"  %s = arith.addi %c, %n : index\n"
	"  %no = arith.subi %c, %n : index\n"
	"  %vc = memref.load %src[%c] : memref<?xf32>\n"
	"  %vw = memref.load %src[%w] : memref<?xf32>\n"
	"  %ve = memref.load %src[%e] : memref<?xf32>\n"
	"  %vs = memref.load %src[%s] : memref<?xf32>\n"
	"  %vn = memref.load %src[%no] : memref<?xf32>\n"
	"  %s1 = arith.addf %vc, %vw : f32\n"
	"  %s2 = arith.addf %s1, %ve : f32\n"
	"  %s3 = arith.addf %s2, %vs : f32\n"
	"  %s4 = arith.addf %s3, %vn : f32\n"
	"  %v = arith.mulf %fifth, %s4 : f32\n"
	"  memref.store %v, %dst[%c] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * A 5-point stencil on 2x2: 31 operations fit its 32 slots, but with one
 * value a link (--no-link-channels) they do not route; links of channels
 * carry them.
 */
TEST(cannot_route)
{
	struct placed x;

	place_set_link_channels(false);
	REQUIRE(place_text(&x, stencil5_src, 2, 2) == 0);
	place_set_link_channels(true);
	CHECK_EQ(1, x.errors);
	CHECK(front_diag_is(&x.f, 0, DIAG_ERROR, 1, 25,
			    "cannot route the graph of @jacobi_2d (31 operations, 5 ports) on a 2x2 fabric"));
	placed_close(&x);
	REQUIRE(place_text(&x, stencil5_src, 2, 2) == 0);
	CHECK_EQ(0, x.errors);
	CHECK(x.p.channels);
	placed_close(&x);
}

/*
 * The refusal says how close the search came and what it is up against:
 * the links the closest placement left shared, the link hops its routes
 * took, and the links between tiles a 2x2 fabric has (8).
 */
TEST(cannot_route_says_how_close)
{
	const char *msg, *at;
	struct placed x;
	int shared = -1, hops = -1;

	place_set_link_channels(false);
	REQUIRE(place_text(&x, stencil5_src, 2, 2) == 0);
	place_set_link_channels(true);
	REQUIRE(x.errors == 1);
	msg = front_diag(&x.f, 0)->msg;
	at = strstr(msg, "; the closest placement left ");
	CHECK(at != NULL);
	if (at)
		CHECK_EQ(2, sscanf(at, "; the closest placement left %d links shared, its routes taking %d link hops",
				   &shared, &hops));
	CHECK(shared >= 1);
	CHECK(hops > shared);
	CHECK(strstr(msg, "link hops where the fabric has 8 links between tiles") != NULL);
	placed_close(&x);
}

TEST(long_chain_routes_on_8x8)
{
	struct placed x;
	char *s = chain_src(40);

	REQUIRE(place_text(&x, s, 8, 8) == 0);
	CHECK_EQ(0, x.errors);
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x.p));
	CHECK_EQ(45, x.p.stats.pes);
	CHECK(inputs_routed(&x.p));
	placed_close(&x);
	free(s);
}

/*
 * 48 operations on 16 tiles: spatially impossible, so they share temporal
 * PEs; the configuration loads, every input is routed, and the II the
 * placer reports is no better than the bound and within the slots.
 */
TEST(three_times_the_pes_on_temporal_pes)
{
	struct placed x;
	char *s = chain_src(43);

	REQUIRE(place_text(&x, s, 4, 4) == 0);
	CHECK_EQ(0, x.errors);
	CHECK_EQ(48, x.p.stats.pes);
	CHECK_EQ(48, used_tiles(&x.p));
	CHECK(x.p.slots >= 3 && x.p.slots <= LOOM_PE_SLOTS);
	CHECK_EQ(x.p.slots, x.p.stats.slots);
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x.p));
	CHECK(inputs_routed(&x.p));
	CHECK_EQ(3, x.p.stats.ii_bound);	/* 48 operations over 16 PEs */
	CHECK(x.p.stats.cycles_per_instance >= x.p.stats.ii_bound);
	CHECK(x.p.stats.cycles_per_instance <= (int)x.p.slots);
	placed_close(&x);
	/* what fits spatially stays spatial: a version 1 image */
	REQUIRE(place_text(&x, vadd_src, 4, 4) == 0);
	CHECK_EQ(1, x.p.slots);
	CHECK_EQ(1, x.p.stats.slots);
	CHECK_EQ(LOOM_CONFIG_SIZE(16, x.p.num_ports), place_config_size(&x.p));
	placed_close(&x);
	free(s);
}

/* The listing and the statistics of a temporal configuration. */
TEST(temporal_listing)
{
	struct placed x;
	char *text = NULL, *s = chain_src(30);
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	void *cfg;

	REQUIRE(out);
	REQUIRE(place_text(&x, s, 4, 4) == 0);
	REQUIRE(x.errors == 0);
	cfg = malloc(place_config_size(&x.p));
	REQUIRE(cfg);
	place_config_write(&x.p, cfg);
	CHECK_EQ(0, print_config(out, cfg, place_config_size(&x.p)));
	place_print_stats(out, &x.p.stats);
	fclose(out);
	CHECK(strstr(text, "3 slots per PE"));
	CHECK(strstr(text, ").2  "));
	CHECK(strstr(text, "<-S"));
	CHECK(strstr(text, "temporal PEs of 3 slots; II "));
	CHECK(strstr(text, " cycles per instance, measured (scheduled 3, bound 3)"));
	/*
	 * measured: %x feeds 31 operations at depths 1 to 31, so the short
	 * paths' buffers fill and the chain runs far below its schedule
	 */
	CHECK(x.p.stats.measured >= 3 * 0.95);
	free(text);
	free(cfg);
	placed_close(&x);
	free(s);
}

/*
 * 15 i64 operands summed and stored through a 16th: 16 operand ports and
 * a coordinate, where 4x4 has 16 edge positions.  The placer turns the
 * operands into CONSTs of them (LOOM_TILE_IMM_OPERAND), which the engine
 * accepts, and the listing names them.
 */
TEST(operands_become_consts_when_ports_run_out)
{
	struct placed x;
	char src[4096], *text = NULL;
	size_t len = 0, n;
	FILE *out;
	void *cfg;
	int consts = 0;

	n = snprintf(src, sizeof(src), "dataflow.thread @many " DENSE "(");
	for (int k = 0; k < 15; k++)
		n += snprintf(src + n, sizeof(src) - n, "%%a%d: i64, ", k);
	n += snprintf(src + n, sizeof(src) - n,
		      "%%m: memref<?xi64>) ctrl(%%ctl: none) iv(%%i: index) {\n"
		      "  %%s0 = arith.addi %%a0, %%a1 : i64\n");
	for (int k = 2; k < 15; k++)
		n += snprintf(src + n, sizeof(src) - n,
			      "  %%s%d = arith.addi %%s%d, %%a%d : i64\n",
			      k - 1, k - 2, k);
	snprintf(src + n, sizeof(src) - n,
		 "  memref.store %%s13, %%m[%%i] : memref<?xi64>\n"
		 "  dataflow.thread.yield %%ctl : none\n}\n");
	REQUIRE(place_text(&x, src, 4, 4) == 0);
	CHECK_EQ(0, x.errors);
	CHECK(x.p.num_ports <= 16);
	for (unsigned t = 0; t < 16 * x.p.slots; t++)
		consts += x.p.tiles[t].op == LOOM_OP_CONST &&
			  (x.p.tiles[t].flags & LOOM_TILE_IMM_OPERAND);
	CHECK(consts >= 15);
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x.p));
	CHECK(inputs_routed(&x.p));
	out = open_memstream(&text, &len);
	REQUIRE(out);
	cfg = malloc(place_config_size(&x.p));
	REQUIRE(cfg);
	place_config_write(&x.p, cfg);
	CHECK_EQ(0, print_config(out, cfg, place_config_size(&x.p)));
	fclose(out);
	CHECK(strstr(text, "CONST     i64 operand=14"));
	free(text);
	free(cfg);
	placed_close(&x);
	/* on 8x8 the 17 ports fit: the graph stays as it is */
	REQUIRE(place_text(&x, src, 8, 8) == 0);
	CHECK_EQ(0, x.errors);
	CHECK_EQ(17, (int)x.p.num_ports);
	placed_close(&x);
}

/* loomc's timing estimates assume the engine's default model. */
TEST(estimates_use_the_engine_defaults)
{
	CHECK_EQ(LOOM_DEFAULT_LOAD_LATENCY, PLACE_LOAD_LATENCY);
	CHECK_EQ(LOOM_DEFAULT_MEM_PORTS, PLACE_MEM_PORTS);
	CHECK_EQ(LOOM_DEFAULT_FIFO_DEPTH, PLACE_FIFO_DEPTH);
}

TEST(listing)
{
	struct placed x;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	void *cfg;

	REQUIRE(out);
	REQUIRE(place_text(&x, vadd_src, 4, 4) == 0);
	cfg = malloc(place_config_size(&x.p));
	REQUIRE(cfg);
	place_config_write(&x.p, cfg);
	CHECK_EQ(0, print_config(out, cfg, place_config_size(&x.p)));
	CHECK_EQ(-1, print_config(out, cfg, place_config_size(&x.p) - 1));
	place_print_stats(out, &x.p.stats);
	fclose(out);
	CHECK(strstr(text, "fabric 4x4, 4 ports"));
	CHECK(strstr(text, "SHL       i64 B=3"));
	CHECK(strstr(text, "STORE"));
	CHECK(strstr(text, "coord 0"));
	CHECK(strstr(text, "9 PEs, 4 ports"));
	free(text);
	free(cfg);
	placed_close(&x);
}

/*
 * The walk over group sizes runs on several threads, later sizes
 * speculatively (and given up once an earlier one maps): the mapping must
 * be the one-thread walk's, bit for bit.  syrk has several sizes and both
 * its graphs in flight on 4x4.
 */
TEST(threads_do_not_change_the_mapping)
{
	char *text = er_read_file("bench/polybench/syrk.loom");
	struct placed *one = calloc(1, sizeof(*one));
	struct placed *four = calloc(1, sizeof(*four));

	REQUIRE(text && one && four);
	place_set_threads(1);
	REQUIRE(place_text(one, text, 4, 4) == 0);
	place_set_threads(4);
	REQUIRE(place_text(four, text, 4, 4) == 0);
	place_set_threads(0);
	CHECK_EQ(0, one->errors);
	CHECK_EQ(0, four->errors);
	CHECK(one->p.slots > 1);
	CHECK_EQ(place_config_size(&one->p), place_config_size(&four->p));
	CHECK(!memcmp(one->p.tiles, four->p.tiles, sizeof(one->p.tiles)));
	CHECK(!memcmp(one->p.ports, four->p.ports, sizeof(one->p.ports)));
	CHECK(one->p.stats.measured == four->p.stats.measured);
	placed_close(one);
	placed_close(four);
	free(one);
	free(four);
	free(text);
}

/*
 * PolyBench's symm (@symm_set, 43 operations and 10 ports) maps on 4x4
 * only with its busiest ports bound at more than one edge position (its
 * loop count, coordinate 0, has 12 consumers): each binding is a value of
 * its own for the deadlock proof, one loop count for the rates.
 */
TEST(ports_bound_at_several_edge_positions)
{
	char *text = er_read_file("bench/polybench/symm.loom");
	struct placed *x = calloc(1, sizeof(*x));
	char why[160];
	int twice = 0;

	REQUIRE(text && x);
	REQUIRE(place_text(x, text, 4, 4) == 0);
	CHECK_EQ(0, x->errors);
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x->p));
	CHECK(inputs_routed(&x->p));
	CHECK_EQ(0, deadlock_check(&x->p, why, sizeof(why)));
	for (unsigned i = 0; i < x->p.num_ports; i++)
		for (unsigned j = i + 1; j < x->p.num_ports; j++)
			twice += x->p.ports[i].kind == x->p.ports[j].kind &&
				 x->p.ports[i].index == x->p.ports[j].index;
	CHECK(twice > 0);
	placed_close(x);
	free(x);
	free(text);
}

/* Values that link @dir of tile @t carries: the slots that set it. */
static int link_values(const struct placement *p, unsigned t, unsigned dir)
{
	int n = 0;

	for (unsigned k = 0; k < p->slots; k++)
		n += p->tiles[t * p->slots + k].route[dir] != LOOM_SRC_NONE;
	return n;
}

/*
 * examples/dot.loom's thread on 2x2 (8 links between tiles) routes only
 * when links carry several values, one a channel
 * (LOOM_CONFIG_VERSION_CHANNELS): it maps, the proof accepts it, the
 * engine loads and runs it, the listing names channels and no link
 * carries more values than the II the statistics schedule.  What routes
 * without channels keeps a version 2 image.
 */
TEST(links_of_channels_only_when_needed)
{
	struct placed x;
	char why[160], *text = NULL;
	size_t len = 0, n;
	FILE *out = open_memstream(&text, &len);
	struct loom_fabric_config hdr;
	/* its first function is the thread: 22 operations */
	char *dot_src = er_read_file("examples/dot.loom");
	void *cfg;
	int most = 0;

	REQUIRE(out);
	REQUIRE(dot_src);
	REQUIRE(place_text(&x, dot_src, 2, 2) == 0);
	REQUIRE(x.errors == 0);
	CHECK(x.p.channels);
	CHECK_EQ(0, deadlock_check(&x.p, why, sizeof(why)));
	CHECK_EQ(LOOM_CONFIG_OK, engine_accepts(&x.p));
	CHECK_EQ(LOOM_STATUS_OK, x.p.stats.measured_status);
	for (unsigned t = 0; t < 4; t++)
		for (unsigned d = 0; d < 4; d++)
			if (link_values(&x.p, t, d) > most)
				most = link_values(&x.p, t, d);
	CHECK(most >= 2);
	CHECK(most <= x.p.stats.cycles_per_instance);
	n = place_config_size(&x.p);
	cfg = malloc(n);
	REQUIRE(cfg);
	place_config_write(&x.p, cfg);
	memcpy(&hdr, cfg, sizeof(hdr));
	CHECK_EQ(LOOM_CONFIG_VERSION_CHANNELS, hdr.version);
	CHECK_EQ(0, print_config(out, cfg, n));
	fclose(out);
	CHECK(strstr(text, ", links of channels"));
	CHECK(strstr(text, "<-N.") || strstr(text, "<-E.") ||
	      strstr(text, "<-S.") || strstr(text, "<-W."));
	free(text);
	free(cfg);
	placed_close(&x);
	/* 3x3 routes it with a value a link */
	REQUIRE(place_text(&x, dot_src, 3, 3) == 0);
	REQUIRE(x.errors == 0);
	CHECK(!x.p.channels);
	cfg = malloc(place_config_size(&x.p));
	REQUIRE(cfg);
	place_config_write(&x.p, cfg);
	memcpy(&hdr, cfg, sizeof(hdr));
	CHECK_EQ(LOOM_CONFIG_VERSION_SLOTS, hdr.version);
	free(cfg);
	placed_close(&x);
	free(dot_src);
}

int main(void)
{
	RUN(vector_add_4x4);
	RUN(deterministic);
	RUN(sizes_from_1x1_to_16x16);
	RUN(does_not_fit);
	RUN(cannot_route);
	RUN(cannot_route_says_how_close);
	RUN(long_chain_routes_on_8x8);
	RUN(three_times_the_pes_on_temporal_pes);
	RUN(temporal_listing);
	RUN(operands_become_consts_when_ports_run_out);
	RUN(estimates_use_the_engine_defaults);
	RUN(listing);
	RUN(threads_do_not_change_the_mapping);
	RUN(ports_bound_at_several_edge_positions);
	RUN(links_of_channels_only_when_needed);
	return checks_done();
}
