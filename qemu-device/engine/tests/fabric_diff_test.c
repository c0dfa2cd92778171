// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fabric_diff_test: the event-driven fabric engine (fabric.c) against the
 * engine it replaced (fabric_ref_impl.h) on random configurations: random
 * fabrics, slots, operations, types, immediates, routes and port
 * bindings (made valid the way the validator wants, now and then
 * corrupted), random parameters (FIFO depth, memory ports, LOAD latency),
 * dispatches (dense of rank 0..3 with blocks, items), memory whose words
 * are small numbers or addresses into it, and failing or stopping
 * callbacks.  Everything fabric_diff.h compares must be equal.  The
 * hand-built graphs of configs.h run first, at several sizes.
 *
 *   fabric_diff_test                    the fixed-seed slice make host-test runs
 *   fabric_diff_test --cases N [--seed S]   a longer run
 */
#include <inttypes.h>

#include "check.h"
#include "configs.h"
#include "fabric_build.h"
#include "fabric_diff.h"
#include "splitmix.h"

static unsigned char image[LOOM_CONFIG_SIZE(FB_MAX_TILES * LOOM_PE_SLOTS, LOOM_MAX_PORTS)];
static struct fb fbuf;
static uint8_t mem[FD_MEM_SIZE];
static uint64_t operands[LOOM_MAX_OPERANDS];
static int64_t extents[LOOM_MAX_RANK];

static unsigned long ncases = 3000;
static uint64_t seed0 = 1;

/* A value a token or a memory word holds: small, an address, or anything. */
static uint64_t value(uint64_t *s)
{
	switch (rnd(s, 4)) {
	case 0:
	case 1:
		return rnd(s, 6);
	case 2:
		return FD_MEM_VA + 8 * rnd(s, FD_MEM_SIZE / 8 + 2);
	}
	return rng_next(s);
}

/* The binding at an edge position, or -1. */
static int binding_at(const struct fb *b, unsigned side, unsigned pos)
{
	for (unsigned i = 0; i < b->hdr.num_ports; i++)
		if (b->ports[i].side == side && b->ports[i].pos == pos)
			return (int)i;
	return -1;
}

/* Whether the link of (x, y) in direction @dir leaves the fabric; its edge position. */
static bool on_edge(const struct fb *b, unsigned x, unsigned y, unsigned dir,
		    unsigned *pos)
{
	*pos = (dir == LOOM_DIR_N || dir == LOOM_DIR_S) ? x : y;
	return (dir == LOOM_DIR_N && y == 0) ||
	       (dir == LOOM_DIR_S && y + 1 == b->hdr.height) ||
	       (dir == LOOM_DIR_E && x + 1 == b->hdr.width) ||
	       (dir == LOOM_DIR_W && x == 0);
}

static bool is_completion(const struct fb *b, int i)
{
	return i >= 0 && b->ports[i].kind == LOOM_PORT_COMPLETION;
}

static unsigned random_op(uint64_t *s)
{
	/* the operations graphs are made of, more often than the rest */
	static const uint8_t common[] = {
		LOOM_OP_MOV, LOOM_OP_ADD, LOOM_OP_LOAD, LOOM_OP_STORE,
		LOOM_OP_CONST, LOOM_OP_JOIN, LOOM_OP_STREAM, LOOM_OP_INVARIANT,
		LOOM_OP_REDUCE, LOOM_OP_SINK, LOOM_OP_SPAWN,
	};

	if (chance(s, 60))
		return common[rnd(s, sizeof(common))];
	/* the oracle is the engine before ABI 0.7: no LOOM_OP_ATOMIC */
	return rnd(s, LOOM_OP_ATOMIC);
}

static unsigned random_reduce_op(uint64_t *s)
{
	for (;;) {
		unsigned op = rnd(s, LOOM_OP_ATOMIC);

		if (loom_op_info(op)->reduce)
			return op;
	}
}

/* A random valid (mostly) configuration of @w x @h with @slots per PE. */
static void random_graph(uint64_t *s, struct fb *b, unsigned w, unsigned h,
			 unsigned slots)
{
	unsigned nports = rnd(s, 8), max_src;
	/* item graphs have no COORD port, dense ones no PAYLOAD port */
	unsigned no_kind = chance(s, 25) ? LOOM_PORT_COORD : LOOM_PORT_PAYLOAD;

	fb_init(b, w, h);
	if (slots > 1 || chance(s, 30))
		fb_slots(b, slots);
	max_src = slots > 1 || b->hdr.version != LOOM_CONFIG_VERSION ?
		  LOOM_SRC_SLOT(slots - 1) : LOOM_SRC_PE;
	for (unsigned i = 0; i < nports; i++) {
		unsigned side = rnd(s, 4);
		unsigned pos = rnd(s, side == LOOM_DIR_N || side == LOOM_DIR_S ? w : h);
		unsigned kind = 1 + rnd(s, 5), index = 0;

		if (binding_at(b, side, pos) >= 0 || kind == no_kind)
			continue;
		if (kind == LOOM_PORT_OPERAND)
			index = rnd(s, 4);
		else if (kind == LOOM_PORT_COORD)
			index = rnd(s, 3);
		fb_port(b, side, pos, kind, index);
	}
	for (unsigned y = 0; y < h; y++)
		for (unsigned x = 0; x < w; x++) {
			unsigned links = 0;

			for (unsigned k = 0; k < slots; k++) {
				struct loom_tile_config *t = fb_slot(b, x, y, k);
				unsigned op, type, flags = 0;
				uint64_t imm = rnd(s, 5);

				if (chance(s, 35))
					continue;
				op = random_op(s);
				type = loom_op_f32_only(op) || chance(s, 40) ?
				       LOOM_TYPE_I32 : LOOM_TYPE_I64;
				if (chance(s, 30))
					flags |= LOOM_TILE_IMM_B;
				if (op == LOOM_OP_CONST && chance(s, 30)) {
					flags |= LOOM_TILE_IMM_OPERAND;
					imm = rnd(s, 4);
				} else if (op == LOOM_OP_REDUCE) {
					imm = random_reduce_op(s);
				} else if (chance(s, 20)) {
					imm = value(s);
				}
				fb_slot_pe(b, x, y, k, op, type, flags, imm);
				for (unsigned o = 0; o < LOOM_ROUTE_OUTS; o++) {
					unsigned src, pos;
					int bi;

					if (!chance(s, o >= LOOM_OUT_PE_A ? 75 : 30))
						continue;
					src = 1 + rnd(s, max_src);
					if (o <= LOOM_OUT_W) {
						if (links & (1U << o))
							continue;
						if (on_edge(b, x, y, o, &pos) &&
						    !is_completion(b, binding_at(b, o, pos)))
							continue;
					}
					if (src >= LOOM_SRC_N && src <= LOOM_SRC_W &&
					    on_edge(b, x, y, src - LOOM_SRC_N, &pos)) {
						bi = binding_at(b, src - LOOM_SRC_N, pos);
						if (bi < 0 || is_completion(b, bi))
							continue;
					}
					if (o <= LOOM_OUT_W)
						links |= 1U << o;
					t->route[o] = src;
				}
			}
		}
}

/* A dispatch that fits @b's ports (nearly always). */
static void random_dispatch(uint64_t *s, const struct fb *b,
			    struct loom_dispatch *d)
{
	bool payload = false;
	unsigned rank = 0;

	for (unsigned i = 0; i < b->hdr.num_ports; i++) {
		if (b->ports[i].kind == LOOM_PORT_PAYLOAD)
			payload = true;
		if (b->ports[i].kind == LOOM_PORT_COORD && b->ports[i].index >= rank)
			rank = b->ports[i].index + 1;
	}
	for (unsigned i = 0; i < LOOM_MAX_OPERANDS; i++)
		operands[i] = value(s);
	memset(d, 0, sizeof(*d));
	d->operands = operands;
	d->num_operands = chance(s, 95) ? 4 : rnd(s, 4);
	d->extents = extents;
	if (payload || chance(s, 10)) {
		d->items = true;
		d->count = rnd(s, chance(s, 20) ? 200 : 12);
		return;
	}
	d->rank = rank + (chance(s, 30) ? rnd(s, 2) : 0);
	for (unsigned k = 0; k < d->rank; k++)
		extents[k] = chance(s, 5) ? 0 : 1 + rnd(s, k ? 3 : chance(s, 20) ? 200 : 12);
	if (d->rank && chance(s, 20)) {
		d->block = true;
		d->begin = rnd(s, (unsigned)extents[0] + 1);
		d->end = d->begin + rnd(s, (unsigned)(extents[0] - d->begin) + 1);
	}
}

static unsigned statuses[LOOM_STATUS_COUNT + 1];

/*
 * The oracle predates link channels (ABI 0.8) and refuses version 3: a
 * bit flip that made an image version 3 is undone, the engines would
 * differ by design.  Channels are tested in fabric_test.
 */
static void keep_off_channels(unsigned char *img, const struct fb *b)
{
	struct loom_fabric_config h;

	memcpy(&h, img, sizeof(h));
	if (h.version != LOOM_CONFIG_VERSION_CHANNELS)
		return;
	h.version = b->hdr.version;
	memcpy(img, &h, sizeof(h));
}

/* One random case from @seed; false (and the case printed) when they differ. */
static bool one_case(uint64_t seed)
{
	uint64_t s = seed;
	unsigned w = 1 + rnd(&s, 6), h = 1 + rnd(&s, 6);
	unsigned slots = chance(&s, 70) ? 1 : 2 + rnd(&s, chance(&s, 20) ? 7 : 2);
	struct fd_case c = { .runs = 1 + rnd(&s, 2) };
	const char *diff;
	uint64_t cycles;
	int status;

	if (chance(&s, 5)) {
		w = 1 + rnd(&s, LOOM_FABRIC_MAX_DIM);
		h = 1 + rnd(&s, LOOM_FABRIC_MAX_DIM);
	}
	random_graph(&s, &fbuf, w, h, slots);
	c.size = fb_image(&fbuf, image, sizeof(image));
	if (chance(&s, 3))
		image[rnd(&s, (unsigned)c.size)] ^= 1U << rnd(&s, 8);
	keep_off_channels(image, &fbuf);
	c.image = image;
	c.p = (struct loom_fabric_params){
		.width = w, .height = h,
		.fifo_depth = 1 + rnd(&s, 5),
		.mem_ports = 1 + rnd(&s, 3),
		.load_latency = 1 + rnd(&s, 6),
	};
	for (unsigned i = 0; i < FD_MEM_SIZE; i += 8) {
		uint64_t v = value(&s);

		memcpy(mem + i, &v, 8);
	}
	c.mem = mem;
	random_dispatch(&s, &fbuf, &c.d);
	if (chance(&s, 30))
		c.fail_at = 1 + rnd(&s, chance(&s, 50) ? 20 : 400);
	if (chance(&s, 10))
		c.stop_at = 1 + rnd(&s, 40);
	diff = fd_compare(&c, &status, &cycles);
	if (status >= 0 && status < LOOM_STATUS_COUNT)
		statuses[status]++;
	if (diff)
		printf("#   seed 0x%016" PRIx64 " (%ux%u, %u slots): %s differs\n",
		       seed, w, h, slots, diff);
	return !diff;
}

TEST(random_configurations)
{
	unsigned long failed = 0;

	for (unsigned long i = 0; i < ncases; i++) {
		uint64_t s = seed0 * 0x100000001b3ULL + i;

		if (!one_case(rng_next(&s)) && ++failed >= 5)
			break;
	}
	CHECK_EQ(0, failed);
	printf("# %lu cases, reference statuses:", ncases);
	for (unsigned i = 0; i < LOOM_STATUS_COUNT; i++)
		if (statuses[i])
			printf(" %u:%u", i, statuses[i]);
	printf("\n");
	/* the generator must reach the paths that matter, or it tests little */
	CHECK(statuses[LOOM_STATUS_OK] > ncases / 20);
	CHECK(statuses[LOOM_STATUS_DEADLOCK] > ncases / 20);
}

/* The hand-built graphs, at sizes, parameters and memory that make them run long. */
TEST(configs_h_graphs)
{
	static const unsigned dims[][2] = { { 4, 4 }, { 8, 8 }, { 5, 7 }, { 16, 16 } };
	uint64_t s = 7;

	for (unsigned i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		for (unsigned lat = 1; lat <= 5; lat += 2) {
			struct fd_case c = { .runs = 2, .mem = mem };
			const char *diff;
			uint64_t cycles;
			int status;

			for (unsigned k = 0; k < FD_MEM_SIZE; k += 8) {
				uint64_t v = rnd(&s, 4);

				memcpy(mem + k, &v, 8);
			}
			c.p = (struct loom_fabric_params){
				.width = dims[i][0], .height = dims[i][1],
				.fifo_depth = lat, .mem_ports = 1 + lat % 3,
				.load_latency = lat,
			};
			c.size = loom_test_config_vector_add(image, sizeof(image),
							     dims[i][0], dims[i][1]);
			REQUIRE(c.size);
			c.image = image;
			operands[0] = FD_MEM_VA;
			operands[1] = FD_MEM_VA + FD_MEM_SIZE / 3;
			operands[2] = FD_MEM_VA + 2 * (FD_MEM_SIZE / 3);
			extents[0] = FD_MEM_SIZE / 24;
			c.d = (struct loom_dispatch){
				.operands = operands, .num_operands = 3,
				.rank = 1, .extents = extents,
			};
			diff = fd_compare(&c, &status, &cycles);
			if (diff)
				printf("#   vector add %ux%u latency %u: %s differs\n",
				       dims[i][0], dims[i][1], lat, diff);
			CHECK(!diff);
			CHECK_EQ(LOOM_STATUS_OK, status);
			CHECK(cycles > (uint64_t)extents[0]);
			/* failing in the middle of a cycle, behind stalled PEs */
			for (unsigned k = 0; k < 12; k++) {
				c.fail_at = 40 + 7 * k + lat;
				diff = fd_compare(&c, &status, &cycles);
				if (diff)
					printf("#   vector add %ux%u latency %u failing at %u: %s differs\n",
					       dims[i][0], dims[i][1], lat, c.fail_at, diff);
				CHECK(!diff);
				CHECK_EQ(LOOM_STATUS_DMA_ERROR, status);
			}
			c.fail_at = 0;

			/* the tree spawner over items whose payloads are addresses */
			c.size = loom_test_config_tree_spawner(image, sizeof(image),
							       dims[i][0], dims[i][1]);
			REQUIRE(c.size);
			operands[0] = FD_MEM_VA;
			c.d = (struct loom_dispatch){
				.operands = operands, .num_operands = 1,
				.items = true, .count = 40,
			};
			diff = fd_compare(&c, &status, &cycles);
			if (diff)
				printf("#   tree spawner %ux%u latency %u: %s differs\n",
				       dims[i][0], dims[i][1], lat, diff);
			CHECK(!diff);
		}
	}
}

/*
 * A PE stalled for good (its output goes nowhere) behind a LOAD of lower
 * tile index whose k-th access fails: the stalled PE must count its
 * stalls up to the cycle before the failing one, and not that one.
 */
TEST(stall_behind_failure)
{
	unsigned behind = 0;

	for (unsigned lat = 1; lat <= 4; lat++) {
		for (unsigned k = 1; k <= 12; k++) {
			struct fd_case c = { .runs = 1, .mem = mem, .fail_at = k };
			const char *diff;
			uint64_t cycles;
			int status;

			memset(mem, 0, sizeof(mem));
			fb_init(&fbuf, 2, 2);
			fb_port(&fbuf, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 0);
			fb_port(&fbuf, LOOM_DIR_N, 1, LOOM_PORT_CTRL, 0);
			fb_pe(&fbuf, 0, 0, LOOM_OP_LOAD, LOOM_TYPE_I64, 0, 0);
			fb_route(&fbuf, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
			fb_route(&fbuf, 0, 0, LOOM_OUT_S, LOOM_SRC_PE);
			fb_pe(&fbuf, 0, 1, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
			fb_route(&fbuf, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
			fb_pe(&fbuf, 1, 0, LOOM_OP_MOV, LOOM_TYPE_I64, 0, 0);
			fb_route(&fbuf, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
			c.size = fb_image(&fbuf, image, sizeof(image));
			c.image = image;
			c.p = (struct loom_fabric_params){
				.width = 2, .height = 2, .fifo_depth = 4,
				.mem_ports = 1, .load_latency = lat,
			};
			operands[0] = FD_MEM_VA;
			extents[0] = 20;
			c.d = (struct loom_dispatch){
				.operands = operands, .num_operands = 1,
				.rank = 1, .extents = extents,
			};
			diff = fd_compare(&c, &status, &cycles);
			if (diff)
				printf("#   latency %u failing at %u: %s differs\n",
				       lat, k, diff);
			CHECK(!diff);
			CHECK(status == LOOM_STATUS_DMA_ERROR ||
			      status == LOOM_STATUS_DEADLOCK);
			if (status == LOOM_STATUS_DMA_ERROR &&
			    fd_ref.tiles[0][1].stalls > 1)
				behind++;
		}
	}
	/* the case this is about happened */
	CHECK(behind >= 8);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cases") && i + 1 < argc)
			ncases = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed0 = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--cases N] [--seed S]\n", argv[0]);
			return 2;
		}
	}
	RUN(configs_h_graphs);
	RUN(stall_behind_failure);
	RUN(random_configurations);
	return checks_done();
}
