// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fabric_test: the cycle-level fabric model against hand-built graphs:
 * configuration checks, routing latency, forks, backpressure, dense and
 * item dispatches, memory ports, LOAD latency, sequences and reductions,
 * deadlock, stop, state dumps, temporal PEs, link channels and their
 * bandwidth, and two reusable graphs (configs.h).
 */
#include "check.h"
#include "configs.h"
#include "engine.h"
#include "fabric_build.h"

#define I64	LOOM_TYPE_I64
#define I32	LOOM_TYPE_I32
#define IMM_B	LOOM_TILE_IMM_B

#define MEM_VA		0x100000ULL
#define MEM_SIZE	0x10000

static unsigned char image[LOOM_CONFIG_SIZE(FB_MAX_TILES * LOOM_PE_SLOTS, LOOM_MAX_PORTS)];
static struct fb fbuf;		/* the graph being built */

struct dump {
	struct loom_hw_dump h;
	struct loom_hw_dump_tile t[FB_MAX_TILES];
};

static struct loom_fabric *fabric(unsigned w, unsigned h, unsigned mem_ports,
				  unsigned load_latency)
{
	struct loom_fabric_params p = {
		.width = w, .height = h,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = mem_ports, .load_latency = load_latency,
	};

	return loom_fabric_create(&p);
}

static struct loom_fabric *fabric4(void)
{
	return fabric(4, 4, LOOM_DEFAULT_MEM_PORTS, LOOM_DEFAULT_LOAD_LATENCY);
}

static enum loom_config_error configure(struct loom_fabric *f,
					const struct fb *b)
{
	return loom_fabric_configure(f, image, fb_image(b, image, sizeof(image)));
}

static struct fake_mem *new_mem(void)
{
	struct fake_mem *m = malloc(sizeof(*m));

	fake_mem_init(m, MEM_VA, MEM_SIZE);
	return m;
}

static void free_mem(struct fake_mem *m)
{
	fake_mem_free(m);
	free(m);
}

static int run_dense(struct loom_fabric *f, struct fake_mem *m,
		     const uint64_t *ops, unsigned nops, unsigned rank,
		     const int64_t *ext, struct loom_hw_counters *c)
{
	struct loom_dispatch d = {
		.operands = ops, .num_operands = nops,
		.rank = rank, .extents = ext,
	};
	struct loom_fabric_env env = fake_env(m);

	memset(c, 0, sizeof(*c));
	return loom_fabric_run(f, &d, &env, c);
}

static int run_item(struct loom_fabric *f, struct fake_mem *m,
		    const uint64_t *ops, unsigned nops, uint64_t payload,
		    struct loom_hw_counters *c)
{
	struct loom_dispatch d = {
		.operands = ops, .num_operands = nops,
		.items = true, .count = 1,
	};
	struct loom_fabric_env env = fake_env(m);

	m->payloads = &payload;
	m->npayloads = 1;
	return loom_fabric_run(f, &d, &env, c);
}

static void take_dump(struct loom_fabric *f, struct dump *d)
{
	memset(d, 0xee, sizeof(*d));
	loom_fabric_dump(f, &d->h, d->t);
}

static struct loom_hw_dump_tile *tile(struct dump *d, unsigned x, unsigned y)
{
	return &d->t[y * d->h.width + x];
}

/* ------------------------------------------------- configuration --- */

TEST(create_params)
{
	struct loom_fabric *f;

	CHECK(!fabric(0, 4, 1, 1));
	CHECK(!fabric(4, 17, 1, 1));
	CHECK(!fabric(4, 4, 0, 1));
	CHECK(!fabric(4, 4, 1, 0));
	f = fabric(16, 16, 1, 1);
	CHECK(f != NULL);
	loom_fabric_destroy(f);
	loom_fabric_destroy(NULL);
}

TEST(run_without_config)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c;

	CHECK(!loom_fabric_configured(f));
	CHECK_EQ(LOOM_STATUS_NO_CONFIG, run_dense(f, m, NULL, 0, 0, NULL, &c));
	CHECK_EQ(0, c.cycles);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* Configures a copy of the vector-add graph after @mutate changed it. */
static enum loom_config_error mutated(struct loom_fabric *f,
				      void (*mutate)(struct fb *b))
{
	/* rebuild the graph as an fb from its image */
	size_t n = loom_test_config_vector_add(image, sizeof(image), 4, 4);
	const unsigned char *p = image + sizeof(fbuf.hdr);

	fb_init(&fbuf, 4, 4);
	memcpy(&fbuf.hdr, image, sizeof(fbuf.hdr));
	memcpy(fbuf.tiles, p, 16 * sizeof(fbuf.tiles[0]));
	memcpy(fbuf.ports, p + 16 * sizeof(fbuf.tiles[0]),
	       fbuf.hdr.num_ports * sizeof(fbuf.ports[0]));
	CHECK_EQ(n, fb_size(&fbuf));
	mutate(&fbuf);
	return configure(f, &fbuf);
}

#define MUTATION(name, body) \
	static void mut_##name(struct fb *b) { body; }

MUTATION(none, (void)b)
MUTATION(version, b->hdr.version = 4)
MUTATION(version3_slots0, b->hdr.version = LOOM_CONFIG_VERSION_CHANNELS)
MUTATION(version2_slots0, b->hdr.version = LOOM_CONFIG_VERSION_SLOTS)
MUTATION(version1_slots1, b->hdr.slots = 1)
MUTATION(version0, b->hdr.version = 0)
MUTATION(width, b->hdr.width = 3)
MUTATION(height, b->hdr.height = 5)
MUTATION(hdr_reserved, b->hdr.reserved = 1)
MUTATION(reserved0, b->tiles[5].reserved0 = 1)
MUTATION(reserved1, b->tiles[15].reserved1 = 0x80)
MUTATION(reserved2, b->tiles[0].reserved2 = 1ULL << 63)
MUTATION(op, b->tiles[3].op = LOOM_OP_COUNT)
MUTATION(op255, b->tiles[3].op = 255)
MUTATION(type, b->tiles[3].type = 2)
MUTATION(flags, b->tiles[3].flags = 4)
MUTATION(operand_not_const,
	 fb_pe(b, 0, 3, LOOM_OP_MOV, I64, LOOM_TILE_IMM_OPERAND, 1))
MUTATION(operand_const16,
	 fb_pe(b, 0, 3, LOOM_OP_CONST, I64, LOOM_TILE_IMM_OPERAND, 16))
MUTATION(operand_const15,
	 fb_pe(b, 0, 3, LOOM_OP_CONST, I64, LOOM_TILE_IMM_OPERAND, 15))
MUTATION(reduce_sub, fb_pe(b, 0, 3, LOOM_OP_REDUCE, I64, 0, LOOM_OP_SUB))
MUTATION(reduce_nop, fb_pe(b, 0, 3, LOOM_OP_REDUCE, I64, 0, LOOM_OP_NOP))
MUTATION(reduce_xor, fb_pe(b, 0, 3, LOOM_OP_REDUCE, I64, 0, LOOM_OP_XOR))
MUTATION(reduce_fadd, fb_pe(b, 0, 3, LOOM_OP_REDUCE, I32, 0, LOOM_OP_FADD))
MUTATION(reduce_fmin, fb_pe(b, 0, 3, LOOM_OP_REDUCE, I32, 0, LOOM_OP_FMIN))
MUTATION(reduce_fsub, fb_pe(b, 0, 3, LOOM_OP_REDUCE, I32, 0, LOOM_OP_FSUB))
MUTATION(atomic_addi, fb_pe(b, 0, 3, LOOM_OP_ATOMIC, I64, 0, LOOM_ATOMIC_ADDI))
MUTATION(atomic_assign, fb_pe(b, 0, 3, LOOM_OP_ATOMIC, I32, 0, LOOM_ATOMIC_ASSIGN))
MUTATION(atomic_addf_i32, fb_pe(b, 0, 3, LOOM_OP_ATOMIC, I32, 0, LOOM_ATOMIC_ADDF))
MUTATION(atomic_addf_i64, fb_pe(b, 0, 3, LOOM_OP_ATOMIC, I64, 0, LOOM_ATOMIC_ADDF))
MUTATION(atomic_kind_count,
	 fb_pe(b, 0, 3, LOOM_OP_ATOMIC, I64, 0, LOOM_ATOMIC_COUNT))
MUTATION(atomic_imm_b, fb_pe(b, 0, 3, LOOM_OP_ATOMIC, I64, IMM_B, LOOM_ATOMIC_ADDI))
MUTATION(f32_i32, b->tiles[3].op = LOOM_OP_FMUL; b->tiles[3].type = I32)
MUTATION(f32_i64, b->tiles[3].op = LOOM_OP_FMUL; b->tiles[3].type = I64)
MUTATION(fneg_i64, b->tiles[3].op = LOOM_OP_FNEG; b->tiles[3].type = I64)
MUTATION(ftosi_i64, b->tiles[3].op = LOOM_OP_FTOSI; b->tiles[3].type = I64)
MUTATION(route_value, fb_route(b, 2, 2, LOOM_OUT_N, LOOM_SRC_PE + 1))
MUTATION(route_255, fb_route(b, 2, 2, LOOM_OUT_PE_C, 255))
/* W edge at y = 1 has no port */
MUTATION(read_unbound, fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_W))
/* E edge at y = 0 is a completion port: nothing comes in */
MUTATION(read_completion,
	 fb_port(b, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	 fb_route(b, 3, 0, LOOM_OUT_PE_C, LOOM_SRC_E))
MUTATION(write_unbound, fb_route(b, 3, 3, LOOM_OUT_S, LOOM_SRC_PE))
/* N edge at x = 1 is operand 0, an input */
MUTATION(write_input, fb_route(b, 1, 0, LOOM_OUT_N, LOOM_SRC_PE))
MUTATION(write_completion,
	 fb_port(b, LOOM_DIR_S, 3, LOOM_PORT_COMPLETION, 0);
	 fb_route(b, 3, 3, LOOM_OUT_S, LOOM_SRC_PE))
MUTATION(side, fb_port(b, 4, 0, LOOM_PORT_CTRL, 0))
MUTATION(pos_ns, fb_port(b, LOOM_DIR_S, 4, LOOM_PORT_CTRL, 0))
MUTATION(pos_ew, fb_port(b, LOOM_DIR_E, 4, LOOM_PORT_CTRL, 0))
MUTATION(kind0, fb_port(b, LOOM_DIR_S, 0, 0, 0))
MUTATION(kind6, fb_port(b, LOOM_DIR_S, 0, 6, 0))
MUTATION(operand15, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_OPERAND, 15))
MUTATION(operand16, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_OPERAND, 16))
MUTATION(coord3, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_COORD, 3))
MUTATION(coord4, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_COORD, 4))
MUTATION(ctrl1, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_CTRL, 1))
MUTATION(payload1, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_PAYLOAD, 1))
MUTATION(completion1, fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_COMPLETION, 1))
MUTATION(duplicate, fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_CTRL, 0))

TEST(configure_errors)
{
	static const struct {
		void (*mutate)(struct fb *b);
		enum loom_config_error err;
	} cases[] = {
		{ mut_none, LOOM_CONFIG_OK },
		{ mut_version, LOOM_CONFIG_BAD_VERSION },
		{ mut_version3_slots0, LOOM_CONFIG_BAD_DIMENSIONS },
		{ mut_version2_slots0, LOOM_CONFIG_BAD_DIMENSIONS },
		{ mut_version1_slots1, LOOM_CONFIG_RESERVED },
		{ mut_version0, LOOM_CONFIG_BAD_VERSION },
		{ mut_width, LOOM_CONFIG_BAD_DIMENSIONS },
		{ mut_height, LOOM_CONFIG_BAD_DIMENSIONS },
		{ mut_hdr_reserved, LOOM_CONFIG_RESERVED },
		{ mut_reserved0, LOOM_CONFIG_RESERVED },
		{ mut_reserved1, LOOM_CONFIG_RESERVED },
		{ mut_reserved2, LOOM_CONFIG_RESERVED },
		{ mut_op, LOOM_CONFIG_BAD_OP },
		{ mut_op255, LOOM_CONFIG_BAD_OP },
		{ mut_type, LOOM_CONFIG_BAD_OP },
		{ mut_flags, LOOM_CONFIG_BAD_OP },
		{ mut_operand_not_const, LOOM_CONFIG_BAD_OP },
		{ mut_operand_const16, LOOM_CONFIG_BAD_OP },
		{ mut_operand_const15, LOOM_CONFIG_OK },
		{ mut_reduce_sub, LOOM_CONFIG_BAD_OP },
		{ mut_reduce_nop, LOOM_CONFIG_BAD_OP },
		{ mut_reduce_xor, LOOM_CONFIG_OK },
		{ mut_reduce_fadd, LOOM_CONFIG_OK },
		{ mut_reduce_fmin, LOOM_CONFIG_OK },
		{ mut_reduce_fsub, LOOM_CONFIG_BAD_OP },
		{ mut_atomic_addi, LOOM_CONFIG_OK },
		{ mut_atomic_assign, LOOM_CONFIG_OK },
		{ mut_atomic_addf_i32, LOOM_CONFIG_OK },
		{ mut_atomic_addf_i64, LOOM_CONFIG_BAD_OP },
		{ mut_atomic_kind_count, LOOM_CONFIG_BAD_OP },
		{ mut_atomic_imm_b, LOOM_CONFIG_BAD_OP },
		{ mut_f32_i32, LOOM_CONFIG_OK },
		{ mut_f32_i64, LOOM_CONFIG_BAD_OP },
		{ mut_fneg_i64, LOOM_CONFIG_BAD_OP },
		{ mut_ftosi_i64, LOOM_CONFIG_OK },
		{ mut_route_value, LOOM_CONFIG_BAD_ROUTE },
		{ mut_route_255, LOOM_CONFIG_BAD_ROUTE },
		{ mut_read_unbound, LOOM_CONFIG_BAD_ROUTE },
		{ mut_read_completion, LOOM_CONFIG_BAD_ROUTE },
		{ mut_write_unbound, LOOM_CONFIG_BAD_ROUTE },
		{ mut_write_input, LOOM_CONFIG_BAD_ROUTE },
		{ mut_write_completion, LOOM_CONFIG_OK },
		{ mut_side, LOOM_CONFIG_BAD_PORT },
		{ mut_pos_ns, LOOM_CONFIG_BAD_PORT },
		{ mut_pos_ew, LOOM_CONFIG_BAD_PORT },
		{ mut_kind0, LOOM_CONFIG_BAD_PORT },
		{ mut_kind6, LOOM_CONFIG_BAD_PORT },
		{ mut_operand15, LOOM_CONFIG_OK },
		{ mut_operand16, LOOM_CONFIG_BAD_PORT },
		{ mut_coord3, LOOM_CONFIG_OK },
		{ mut_coord4, LOOM_CONFIG_BAD_PORT },
		{ mut_ctrl1, LOOM_CONFIG_BAD_PORT },
		{ mut_payload1, LOOM_CONFIG_BAD_PORT },
		{ mut_completion1, LOOM_CONFIG_BAD_PORT },
		{ mut_duplicate, LOOM_CONFIG_BAD_PORT },
	};
	struct loom_fabric *f = fabric4();
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum loom_config_error err = mutated(f, cases[i].mutate);

		if (err != cases[i].err)
			printf("#   case %u\n", i);
		CHECK_EQ(cases[i].err, err);
		CHECK_EQ(err == LOOM_CONFIG_OK, loom_fabric_configured(f));
	}
	loom_fabric_destroy(f);
}

TEST(configure_header_errors)
{
	struct loom_fabric *f = fabric4();
	size_t n = loom_test_config_vector_add(image, sizeof(image), 4, 4);
	struct loom_fabric_config hdr;
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c;

	REQUIRE(n == LOOM_CONFIG_SIZE(16, 4));
	CHECK_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, n));
	CHECK(loom_fabric_configured(f));
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE, loom_fabric_configure(f, image, n - 1));
	/* a failed configure unloads the previous configuration */
	CHECK(!loom_fabric_configured(f));
	CHECK_EQ(LOOM_STATUS_NO_CONFIG, run_dense(f, m, NULL, 0, 0, NULL, &c));
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE, loom_fabric_configure(f, image, n + 1));
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE, loom_fabric_configure(f, image, 8));
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE, loom_fabric_configure(f, image, 0));
	CHECK_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, n));

	memcpy(&hdr, image, sizeof(hdr));
	hdr.magic ^= 1;
	memcpy(image, &hdr, sizeof(hdr));
	CHECK_EQ(LOOM_CONFIG_BAD_MAGIC, loom_fabric_configure(f, image, n));
	CHECK(!loom_fabric_configured(f));
	hdr.magic ^= 1;
	/* more ports than the ABI allows, even with a matching size */
	hdr.num_ports = LOOM_MAX_PORTS + 1;
	memcpy(image, &hdr, sizeof(hdr));
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE,
		 loom_fabric_configure(f, image, LOOM_CONFIG_SIZE(16, LOOM_MAX_PORTS + 1)));
	/* num_ports disagreeing with the size */
	hdr.num_ports = 3;
	memcpy(image, &hdr, sizeof(hdr));
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE, loom_fabric_configure(f, image, n));
	/* an image that starts at an odd address is fine */
	n = loom_test_config_vector_add(image + 1, sizeof(image) - 1, 4, 4);
	CHECK_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image + 1, n));
	/* configs.h refuses fabrics too small for its graphs */
	CHECK_EQ(0, loom_test_config_vector_add(image, sizeof(image), 3, 4));
	CHECK_EQ(0, loom_test_config_tree_spawner(image, 100, 4, 4));
	free_mem(m);
	loom_fabric_destroy(f);
}

/* ----------------------------------------------------- routing --- */

/*
 * A VA token snakes S, S, E, N, E from the W port into a STORE (imm value)
 * at (2,1), whose done token goes W, N, N to a completion port.
 */
static void build_snake_slots(struct fb *b, unsigned slots)
{
	fb_init(b, 4, 4);
	if (slots)
		fb_slots(b, slots);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_COMPLETION, 0);
	fb_route(b, 0, 0, LOOM_OUT_S, LOOM_SRC_W);
	fb_route(b, 0, 1, LOOM_OUT_S, LOOM_SRC_N);
	fb_route(b, 0, 2, LOOM_OUT_E, LOOM_SRC_N);
	fb_route(b, 1, 2, LOOM_OUT_N, LOOM_SRC_W);
	fb_route(b, 1, 1, LOOM_OUT_E, LOOM_SRC_S);
	fb_pe(b, 2, 1, LOOM_OP_STORE, I64, IMM_B, 0x1234);
	fb_route(b, 2, 1, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 1, LOOM_OUT_W, LOOM_SRC_PE);
	fb_route(b, 1, 1, LOOM_OUT_N, LOOM_SRC_E);
	fb_route(b, 1, 0, LOOM_OUT_N, LOOM_SRC_S);
}

static void build_snake(struct fb *b)
{
	build_snake_slots(b, 0);
}

TEST(multi_hop_latency)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t va = MEM_VA + 64;
	int64_t n = 5;
	struct loom_hw_counters c;

	build_snake(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 0, NULL, &c));
	/*
	 * 1 injection, 5 hops to (2,1)'s FIFO A, 1 firing, 3 hops out: the
	 * token moves one hop per cycle.
	 */
	CHECK_EQ(11, c.cycles);
	CHECK_EQ(11, m->progress);
	CHECK_EQ(1, c.instances);
	CHECK_EQ(1, c.firings);
	CHECK_EQ(1, c.mem_writes);
	CHECK_EQ(0, c.stalls);
	CHECK_EQ(0x1234, fake_get64(m, va));
	CHECK_EQ(1, fake_writes(m, va));
	CHECK_EQ(8, fake_bytes_written(m));

	/* pipelined: each further instance adds one cycle */
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c));
	CHECK_EQ(11 + 4, c.cycles);
	CHECK_EQ(5, c.instances);
	CHECK_EQ(6, fake_writes(m, va));
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * A VA token forks three ways at (0,0): its STORE (0x11 at VA), east to
 * ADD 8 -> STORE 0x22 at (1,1), south to ADD 16 -> STORE 0x33 at (0,2).
 * The stores' tile indices (0, 5, 8) grow with their addresses.
 */
static void build_fork(struct fb *b)
{
	fb_init(b, 4, 4);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_COMPLETION, 0);
	fb_port(b, LOOM_DIR_W, 2, LOOM_PORT_COMPLETION, 0);
	fb_pe(b, 0, 0, LOOM_OP_STORE, I64, IMM_B, 0x11);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_S, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_N, LOOM_SRC_PE);

	fb_pe(b, 1, 0, LOOM_OP_ADD, I64, IMM_B, 8);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 1, LOOM_OP_STORE, I64, IMM_B, 0x22);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 1, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 2, 1, LOOM_OP_SINK, I64, 0, 0);
	fb_route(b, 2, 1, LOOM_OUT_PE_A, LOOM_SRC_W);

	fb_pe(b, 0, 1, LOOM_OP_ADD, I64, IMM_B, 16);
	fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 1, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 0, 2, LOOM_OP_STORE, I64, IMM_B, 0x33);
	fb_route(b, 0, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 2, LOOM_OUT_W, LOOM_SRC_PE);
}

/* Runs the fork graph over 20 instances with @mem_ports; checks results. */
static void run_fork(unsigned mem_ports, struct loom_hw_counters *c,
		     unsigned *max_per_cycle)
{
	struct loom_fabric *f = fabric(4, 4, mem_ports, 1);
	struct fake_mem *m = new_mem();
	uint64_t va = MEM_VA;
	int64_t n = 20;
	unsigned i, run = 0;

	build_fork(&fbuf);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, c));
	CHECK_EQ(0x11, fake_get64(m, va));
	CHECK_EQ(0x22, fake_get64(m, va + 8));
	CHECK_EQ(0x33, fake_get64(m, va + 16));
	for (i = 0; i < 24; i++)
		CHECK_EQ(20, fake_writes(m, va + i));
	CHECK_EQ(24, fake_bytes_written(m));
	CHECK_EQ(60, c->mem_writes);
	CHECK_EQ(20 * 6, c->firings);	/* 3 STOREs, 2 ADDs, a SINK */
	/* stores of one cycle share a progress value; tile order inside */
	*max_per_cycle = 0;
	for (i = 0; i < m->nlog; i++) {
		if (i && m->log[i].progress == m->log[i - 1].progress) {
			run++;
			CHECK(m->log[i].va > m->log[i - 1].va);
		} else {
			run = 1;
		}
		if (run > *max_per_cycle)
			*max_per_cycle = run;
	}
	CHECK_EQ(60, m->nlog);
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(fork)
{
	struct loom_hw_counters c;
	unsigned max;

	run_fork(3, &c, &max);
	CHECK_EQ(3, max);		/* all three stores fire together */
	CHECK_EQ(0, c.stalls);
}

TEST(mem_port_limit)
{
	struct loom_hw_counters c1, c2, c3;
	unsigned max;

	run_fork(3, &c3, &max);
	run_fork(2, &c2, &max);
	CHECK_EQ(2, max);
	CHECK(c2.stalls > 0);
	CHECK(c2.cycles > c3.cycles);
	run_fork(1, &c1, &max);
	CHECK_EQ(1, max);
	CHECK(c1.stalls > c2.stalls);
	CHECK(c1.cycles >= 60);		/* one store per cycle */
}

/*
 * A 1 x 1 fabric with FIFOs of depth 1: operand 0 -> MOV -> completion.
 * The FIFO is full at the start of every cycle in which the MOV fires, so
 * it can take the next token only in the cycle after: one instance every
 * two cycles.  (Judging room after the pop would give one per cycle.)
 */
TEST(room_is_judged_at_cycle_start)
{
	struct loom_fabric_params p = {
		.width = 1, .height = 1, .fifo_depth = 1,
		.mem_ports = 1, .load_latency = 1,
	};
	struct loom_fabric *f = loom_fabric_create(&p);
	struct fake_mem *m = new_mem();
	uint64_t v = 5;
	int64_t n = 10;
	struct loom_hw_counters c;
	struct dump d;

	fb_init(&fbuf, 1, 1);
	fb_port(&fbuf, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_port(&fbuf, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_pe(&fbuf, 0, 0, LOOM_OP_MOV, I64, 0, 0);
	fb_route(&fbuf, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(&fbuf, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &v, 1, 1, &n, &c));
	/* MOV fires in cycles 3, 5, ..., 2n + 1; the last token leaves next */
	CHECK_EQ(2 * n + 2, c.cycles);
	CHECK_EQ(n, c.firings);
	take_dump(f, &d);
	CHECK_EQ(1, d.h.width);
	CHECK_EQ(n, d.t[0].firings);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * A fork to a fast consumer (a SINK east) and a slow one (a LOAD, latency
 * 8, at (0,0)): the fork moves only when both have room, so both branches
 * receive the same tokens and no FIFO overflows.  Checked mid-run.
 */
TEST(fork_all_or_nothing)
{
	struct loom_fabric *f = fabric(4, 4, 2, 8);
	struct fake_mem *m = new_mem();
	uint64_t va = MEM_VA;
	int64_t n = 12;
	struct loom_hw_counters c;
	struct dump d;
	struct loom_hw_dump_tile *ld, *sk;

	fb_init(&fbuf, 4, 4);
	fb_port(&fbuf, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_pe(&fbuf, 0, 0, LOOM_OP_LOAD, I64, 0, 0);
	fb_route(&fbuf, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	fb_route(&fbuf, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(&fbuf, 0, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(&fbuf, 0, 1, LOOM_OP_SINK, I64, 0, 0);
	fb_route(&fbuf, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_pe(&fbuf, 1, 0, LOOM_OP_SINK, I64, 0, 0);
	fb_route(&fbuf, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	m->stop_after = 5;
	CHECK_EQ(LOOM_STATUS_STOPPED, run_dense(f, m, &va, 1, 1, &n, &c));
	take_dump(f, &d);
	ld = tile(&d, 0, 0);
	sk = tile(&d, 1, 0);
	CHECK(ld->fifo[0] <= LOOM_DEFAULT_FIFO_DEPTH);
	/* the slow side was full; the 5th LOAD just popped it */
	CHECK_EQ(LOOM_DEFAULT_FIFO_DEPTH - 1, ld->fifo[0]);
	/* tokens sent east == tokens sent to the LOAD */
	CHECK_EQ(ld->firings + ld->fifo[0],
		 sk->firings + sk->fifo[0] + ld->links[LOOM_DIR_E]);
	CHECK(c.instances < 12);
	m->stop_after = 0;
	m->stop = 0;
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c));
	CHECK_EQ(12 * 3, c.firings);
	CHECK(c.cycles >= 12 * 8);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* -------------------------------------- sequences and reductions --- */

/*
 * gen (STREAM with imm step, or INVARIANT) -> mid (LOAD or MOV) -> REDUCE
 * -> STORE.  Operands: 0 start/value (N, x = 0), 1 generator count (N,
 * x = 1), 2 REDUCE init (E, y = 2), 3 result VA (S, x = 2), 4 REDUCE count
 * (N, x = 2).
 *
 *   (1,1) gen -> S      (1,2) mid -> E    (2,2) REDUCE -> S
 *   (2,3) STORE -> E    (3,3) SINK
 */
static void build_gen_reduce(struct fb *b, unsigned gen, uint64_t step,
			     unsigned mid, unsigned red_op, unsigned red_type)
{
	fb_init(b, 4, 4);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 1);
	fb_port(b, LOOM_DIR_E, 2, LOOM_PORT_OPERAND, 2);
	fb_port(b, LOOM_DIR_S, 2, LOOM_PORT_OPERAND, 3);
	fb_port(b, LOOM_DIR_N, 2, LOOM_PORT_OPERAND, 4);
	fb_route(b, 0, 0, LOOM_OUT_S, LOOM_SRC_N);
	fb_route(b, 0, 1, LOOM_OUT_E, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_N);
	if (gen == LOOM_OP_STREAM) {
		fb_pe(b, 1, 1, gen, I64, IMM_B, step);
		fb_route(b, 1, 1, LOOM_OUT_PE_C, LOOM_SRC_N);
	} else {
		fb_pe(b, 1, 1, gen, I64, 0, 0);
		fb_route(b, 1, 1, LOOM_OUT_PE_B, LOOM_SRC_N);
	}
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 1, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 2, mid, I64, 0, 0);
	fb_route(b, 1, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 2, LOOM_OUT_E, LOOM_SRC_PE);

	fb_route(b, 2, 0, LOOM_OUT_S, LOOM_SRC_N);
	fb_route(b, 2, 1, LOOM_OUT_S, LOOM_SRC_N);
	fb_route(b, 3, 2, LOOM_OUT_W, LOOM_SRC_E);
	fb_pe(b, 2, 2, LOOM_OP_REDUCE, red_type, 0, red_op);
	fb_route(b, 2, 2, LOOM_OUT_PE_A, LOOM_SRC_E);
	fb_route(b, 2, 2, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 2, 2, LOOM_OUT_PE_C, LOOM_SRC_W);
	fb_route(b, 2, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 2, 3, LOOM_OP_STORE, I64, 0, 0);
	fb_route(b, 2, 3, LOOM_OUT_PE_A, LOOM_SRC_S);
	fb_route(b, 2, 3, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 2, 3, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 3, 3, LOOM_OP_SINK, I64, 0, 0);
	fb_route(b, 3, 3, LOOM_OUT_PE_A, LOOM_SRC_W);
}

#define RESULT_VA	(MEM_VA + 0x8000)

TEST(stream_load_reduce_backpressure)
{
	struct loom_fabric *f = fabric(4, 4, 2, 6);	/* a slow LOAD */
	struct fake_mem *m = new_mem();
	uint64_t ops[5] = { MEM_VA, 20, 100, RESULT_VA, 20 };
	uint64_t sum = 100;
	struct loom_hw_counters c;
	struct dump d;
	unsigned i;

	for (i = 0; i < 20; i++) {
		fake_put64(m, MEM_VA + 8 * i, (uint64_t)i * i * 1000003 + 7);
		sum += (uint64_t)i * i * 1000003 + 7;
	}
	build_gen_reduce(&fbuf, LOOM_OP_STREAM, 8, LOOM_OP_LOAD, LOOM_OP_ADD, I64);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 5, 0, NULL, &c));
	CHECK_EQ(sum, fake_get64(m, RESULT_VA));
	CHECK_EQ(8, fake_bytes_written(m));
	/* every element loaded once, in order: nothing lost or duplicated */
	CHECK_EQ(21, m->nlog);
	for (i = 0; i < 20; i++) {
		CHECK_EQ(MEM_VA + 8 * i, m->log[i].va);
		CHECK(!m->log[i].write);
	}
	CHECK_EQ(20, c.mem_reads);
	CHECK_EQ(1, c.mem_writes);
	CHECK_EQ(20 + 20 + 21 + 1 + 1, c.firings);
	CHECK(c.stalls > 0);
	CHECK(c.cycles >= 20 * 6);	/* the LOAD is the bottleneck */
	take_dump(f, &d);
	CHECK_EQ(20, tile(&d, 1, 1)->firings);	/* STREAM */
	CHECK(tile(&d, 1, 1)->stalls > 0);	/* backpressured */
	CHECK_EQ(c.stalls, tile(&d, 1, 1)->stalls + tile(&d, 1, 2)->stalls +
		 tile(&d, 2, 2)->stalls + tile(&d, 2, 3)->stalls);
	CHECK_EQ(20, tile(&d, 1, 2)->firings);	/* LOAD */
	CHECK_EQ(21, tile(&d, 2, 2)->firings);	/* REDUCE */
	CHECK_EQ(1, tile(&d, 2, 3)->firings);
	CHECK_EQ(0, d.h.blocked);
	CHECK_EQ(0, d.h.waiting);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* Runs the gen/reduce graph once; returns the stored result. */
static uint64_t gen_reduce(unsigned gen, unsigned red_op, unsigned red_type,
			   uint64_t value, int64_t count, uint64_t init,
			   struct loom_hw_counters *c)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[5] = { value, (uint64_t)count, init, RESULT_VA,
			    (uint64_t)count };
	uint64_t res;

	build_gen_reduce(&fbuf, gen, 3, LOOM_OP_MOV, red_op, red_type);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 5, 0, NULL, c));
	CHECK_EQ(1, fake_writes(m, RESULT_VA));
	res = fake_get64(m, RESULT_VA);
	free_mem(m);
	loom_fabric_destroy(f);
	return res;
}

TEST(invariant_stream_reduce)
{
	struct loom_hw_counters c;

	/* 7^5 */
	CHECK_EQ(16807, gen_reduce(LOOM_OP_INVARIANT, LOOM_OP_MUL, I64, 7, 5, 1, &c));
	CHECK_EQ(5 + 5 + 6 + 1 + 1, c.firings);
	CHECK_EQ(0x55 ^ 0xff, gen_reduce(LOOM_OP_INVARIANT, LOOM_OP_XOR, I64,
					 0xff, 3, 0x55, &c));
	CHECK_EQ(0xf0, gen_reduce(LOOM_OP_INVARIANT, LOOM_OP_AND, I64,
				  0xf0, 4, 0xfff, &c));
	CHECK_EQ(0xf0f, gen_reduce(LOOM_OP_INVARIANT, LOOM_OP_OR, I64,
				   0xf00, 2, 0xf, &c));
	/* STREAM 10, 13, 16, 19 with imm step 3 */
	CHECK_EQ(58, gen_reduce(LOOM_OP_STREAM, LOOM_OP_ADD, I64, 10, 4, 0, &c));
	/* negative steps and wrap-around stay in 64 bits */
	/* -6, -3, 0 (step 3): wraps past zero in 64 bits; + 3 */
	CHECK_EQ(0xfffffffffffffffaULL,
		 gen_reduce(LOOM_OP_STREAM, LOOM_OP_ADD, I64,
			    0xfffffffffffffffaULL, 3, 3, &c));
	/* i32 REDUCE: 0x7fffffff + 0x7fffffff wraps to -2 */
	CHECK_EQ(0xfffffffffffffffeULL,
		 gen_reduce(LOOM_OP_INVARIANT, LOOM_OP_ADD, I32,
			    0x7fffffff, 2, 0, &c));
}

TEST(empty_sequences_emit_init)
{
	struct loom_hw_counters c;

	/* count 0: nothing streamed, REDUCE emits its init at once */
	CHECK_EQ(42, gen_reduce(LOOM_OP_STREAM, LOOM_OP_ADD, I64, 10, 0, 42, &c));
	CHECK_EQ(4, c.firings);	/* STREAM, REDUCE, STORE, SINK */
	CHECK_EQ(42, gen_reduce(LOOM_OP_INVARIANT, LOOM_OP_MUL, I64, 10, -3, 42, &c));
	CHECK_EQ(43, gen_reduce(LOOM_OP_STREAM, LOOM_OP_ADD, I64, 10,
				INT64_MIN, 43, &c));
}

TEST(deadlock_dump)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	/* 3 tokens streamed, REDUCE waits for 5 */
	uint64_t ops[5] = { 1, 3, 0, RESULT_VA, 5 };
	struct loom_hw_counters c;
	struct dump d;

	build_gen_reduce(&fbuf, LOOM_OP_INVARIANT, 0, LOOM_OP_MOV, LOOM_OP_ADD, I64);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run_dense(f, m, ops, 5, 0, NULL, &c));
	CHECK(c.cycles > 0);
	CHECK_EQ(0, fake_bytes_written(m));
	take_dump(f, &d);
	CHECK_EQ(4, d.h.width);
	CHECK_EQ(4, d.h.height);
	CHECK_EQ(0, d.h.blocked);
	CHECK_EQ(2, d.h.waiting);		/* REDUCE and STORE */
	CHECK_EQ(4, tile(&d, 2, 2)->firings);	/* init/count + 3 folds */
	CHECK_EQ(1, tile(&d, 2, 3)->fifo[0]);	/* the stuck VA token */
	CHECK_EQ(0, tile(&d, 2, 3)->fifo[1]);
	CHECK_EQ(0, tile(&d, 2, 3)->firings);
	CHECK_EQ(3, tile(&d, 1, 1)->firings);
	CHECK_EQ(0xeeee, d.h.reserved);		/* left alone */
	CHECK_EQ(0xeeeeeeeeU, d.h.magic);
	/* the next run starts from empty buffers */
	ops[4] = 3;
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 5, 0, NULL, &c));
	CHECK_EQ(3, fake_get64(m, RESULT_VA));
	take_dump(f, &d);
	CHECK_EQ(0, tile(&d, 2, 3)->fifo[0]);
	CHECK_EQ(0, d.h.waiting);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* Vector add with its SINK removed: done tokens pile up, the STORE blocks. */
TEST(deadlock_blocked_output)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[3] = { MEM_VA, MEM_VA + 0x1000, MEM_VA + 0x2000 };
	int64_t n = 16;
	struct loom_hw_counters c;
	struct dump d;
	size_t len = loom_test_config_vector_add(image, sizeof(image), 4, 4);
	struct loom_tile_config sink;
	size_t off = sizeof(struct loom_fabric_config) + 15 * sizeof(sink);

	memcpy(&sink, image + off, sizeof(sink));
	REQUIRE_EQ(LOOM_OP_SINK, sink.op);
	sink.op = LOOM_OP_NOP;
	memcpy(image + off, &sink, sizeof(sink));
	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run_dense(f, m, ops, 3, 1, &n, &c));
	take_dump(f, &d);
	CHECK(d.h.blocked >= 1);
	CHECK_EQ(2, tile(&d, 3, 2)->out);
	CHECK_EQ(2, tile(&d, 3, 2)->links[LOOM_DIR_S]);
	CHECK_EQ(4, tile(&d, 3, 3)->fifo[0]);
	/* 4 in the NOP's FIFO, 2 in the link, 2 in out */
	CHECK_EQ(8, tile(&d, 3, 2)->firings);
	CHECK(tile(&d, 3, 2)->stalls > 0);
	CHECK_EQ(8, c.mem_writes);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* --------------------------------------------------- LOAD latency --- */

/* LOAD (type @type) at operand 0 -> STORE i64 at operand 1 -> SINK. */
static void build_copy(struct fb *b, unsigned type)
{
	fb_init(b, 4, 4);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 1);
	fb_pe(b, 0, 0, LOOM_OP_LOAD, type, 0, 0);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 1, 0, LOOM_OP_STORE, I64, 0, 0);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 1, LOOM_OP_SINK, I64, 0, 0);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
}

static uint64_t copy_cycles(unsigned latency, int64_t n)
{
	struct loom_fabric *f = fabric(4, 4, 2, latency);
	struct fake_mem *m = new_mem();
	uint64_t ops[2] = { MEM_VA, MEM_VA + 8 };
	struct loom_hw_counters c;

	fake_put64(m, MEM_VA, 0x0123456789abcdefULL);
	build_copy(&fbuf, I64);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 2, 1, &n, &c));
	CHECK_EQ(0x0123456789abcdefULL, fake_get64(m, MEM_VA + 8));
	CHECK_EQ(n, c.mem_reads);
	free_mem(m);
	loom_fabric_destroy(f);
	return c.cycles;
}

TEST(load_latency)
{
	/*
	 * inject, to FIFO, LOAD fires, its result after L cycles, to the link,
	 * to FIFO B, STORE, to the link, to FIFO, SINK: 8 + L cycles.
	 */
	CHECK_EQ(8 + 1, copy_cycles(1, 1));
	CHECK_EQ(8 + 4, copy_cycles(4, 1));
	CHECK_EQ(8 + 9, copy_cycles(9, 1));
	/* one LOAD in flight per PE: each further instance costs L cycles */
	CHECK_EQ(8 + 4 + 4 * 4, copy_cycles(4, 5));
	CHECK_EQ(8 + 7 + 2 * 7, copy_cycles(7, 3));
	/* at latency 1 the injection (one per cycle) is the limit */
	CHECK_EQ(8 + 1 + 4, copy_cycles(1, 5));
}

TEST(i32_load_sign_extends)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[2] = { MEM_VA, MEM_VA + 16 };
	struct loom_hw_counters c;

	fake_put64(m, MEM_VA, 0x5555555580000001ULL);
	build_copy(&fbuf, I32);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 2, 0, NULL, &c));
	CHECK_EQ(0xffffffff80000001ULL, fake_get64(m, MEM_VA + 16));
	fake_put64(m, MEM_VA, 0xffffffff7ffffffeULL);
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 2, 0, NULL, &c));
	CHECK_EQ(0x7ffffffe, fake_get64(m, MEM_VA + 16));
	/* a 4-byte load at the last 4 bytes of memory is in range */
	ops[0] = MEM_VA + MEM_SIZE - 4;
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 2, 0, NULL, &c));
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(callback_error_ends_run)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[2] = { MEM_VA, MEM_VA + MEM_SIZE };	/* store faults */
	struct loom_hw_counters c;
	struct loom_fabric_env env;
	struct loom_dispatch d = { .operands = ops, .num_operands = 2 };
	struct dump dd;

	build_copy(&fbuf, I64);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, run_dense(f, m, ops, 2, 0, NULL, &c));
	CHECK_EQ(0, c.mem_writes);
	CHECK_EQ(1, c.mem_reads);
	take_dump(f, &dd);
	CHECK_EQ(1, tile(&dd, 1, 0)->fifo[0]);	/* the faulting VA stays */
	CHECK_EQ(1, tile(&dd, 1, 0)->fifo[1]);
	CHECK_EQ(0, tile(&dd, 1, 0)->firings);
	/* no callbacks: a DMA error */
	env = fake_env(m);
	env.load = NULL;
	ops[1] = MEM_VA + 8;
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, loom_fabric_run(f, &d, &env, &c));
	free_mem(m);
	loom_fabric_destroy(f);
}

/* ------------------------------------------------ single operations --- */

/*
 * One PE at (1,0) with A = operand 0 (N), B = operand 1 (from W), C =
 * operand 2 (from (2,0)) as @inputs says; its result is stored at operand
 * 3 by (1,1); (1,2) sinks the done token.
 */
static void build_op(struct fb *b, unsigned op, unsigned type, unsigned flags,
		     uint64_t imm, unsigned inputs)
{
	fb_init(b, 4, 4);
	fb_pe(b, 1, 0, op, type, flags, imm);
	if (inputs & 1) {
		fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
		fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	}
	if (inputs & 2) {
		fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 1);
		fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
		fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	}
	if (inputs & 4) {
		fb_port(b, LOOM_DIR_N, 2, LOOM_PORT_OPERAND, 2);
		fb_route(b, 2, 0, LOOM_OUT_W, LOOM_SRC_N);
	}
	if (inputs & 12)	/* 8: C routed, nothing fed */
		fb_route(b, 1, 0, LOOM_OUT_PE_C, LOOM_SRC_E);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_port(b, LOOM_DIR_W, 1, LOOM_PORT_OPERAND, 3);
	fb_route(b, 0, 1, LOOM_OUT_E, LOOM_SRC_W);
	fb_pe(b, 1, 1, LOOM_OP_STORE, I64, 0, 0);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 1, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 1, 1, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 2, LOOM_OP_SINK, I64, 0, 0);
	fb_route(b, 1, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
}

static int op_status;

static uint64_t run_op(unsigned op, unsigned type, unsigned flags,
		       uint64_t imm, unsigned inputs, uint64_t a, uint64_t b,
		       uint64_t c)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[4] = { a, b, c, RESULT_VA }, res;
	struct loom_hw_counters cnt;

	build_op(&fbuf, op, type, flags, imm, inputs);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	op_status = run_dense(f, m, ops, 4, 0, NULL, &cnt);
	res = fake_get64(m, RESULT_VA);
	free_mem(m);
	loom_fabric_destroy(f);
	return res;
}

TEST(single_ops)
{
	CHECK_EQ(12, run_op(LOOM_OP_ADD, I64, 0, 0, 3, 5, 7, 0));
	CHECK_EQ(LOOM_STATUS_OK, op_status);
	CHECK_EQ(105, run_op(LOOM_OP_ADD, I64, IMM_B, 100, 1, 5, 0, 0));
	CHECK_EQ(0xfffffffffffffffeULL, run_op(LOOM_OP_SUB, I32, 0, 0, 3,
					       0x100000005ULL, 7, 0));
	CHECK_EQ(0xffffffffffffffffULL, run_op(LOOM_OP_DIVU, I64, 0, 0, 3, 9, 0, 0));
	CHECK_EQ(99, run_op(LOOM_OP_CONST, I64, 0, 99, 1, 12345, 0, 0));
	CHECK_EQ(0xffffffff80000000ULL,
		 run_op(LOOM_OP_CONST, I32, 0, 0x80000000ULL, 1, 0, 0, 0));
	CHECK_EQ(0x1ffffffffULL,
		 run_op(LOOM_OP_MOV, I64, 0, 0, 1, 0x1ffffffffULL, 0, 0));
	CHECK_EQ(0xffffffffffffffffULL,
		 run_op(LOOM_OP_MOV, I32, 0, 0, 1, 0x1ffffffffULL, 0, 0));
	CHECK_EQ(30, run_op(LOOM_OP_SELECT, I64, 0, 0, 7, 0, 20, 30));
	CHECK_EQ(20, run_op(LOOM_OP_SELECT, I64, 0, 0, 7, 2, 20, 30));
	CHECK_EQ(1, run_op(LOOM_OP_LTS, I64, 0, 0, 3, (uint64_t)-1, 1, 0));
	CHECK_EQ(0, run_op(LOOM_OP_LTU, I64, 0, 0, 3, (uint64_t)-1, 1, 0));
	CHECK_EQ(0x8000000000000000ULL,
		 run_op(LOOM_OP_SHL, I64, IMM_B, 127, 1, 1, 0, 0));
	/* JOIN forwards A once all its inputs are there */
	CHECK_EQ(11, run_op(LOOM_OP_JOIN, I64, 0, 0, 3, 11, 22, 0));
	CHECK_EQ(11, run_op(LOOM_OP_JOIN, I64, 0, 0, 7, 11, 22, 33));
	CHECK_EQ(11, run_op(LOOM_OP_JOIN, I64, IMM_B, 5, 1, 11, 0, 0));
	CHECK_EQ(LOOM_STATUS_OK, op_status);
	/* a routed C is an input of JOIN: with none coming, it waits */
	CHECK_EQ(0, run_op(LOOM_OP_JOIN, I64, 0, 0, 3 | 8, 11, 22, 0));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, op_status);
	/* an ADD whose B is routed from nowhere waits forever */
	CHECK_EQ(0, run_op(LOOM_OP_ADD, I64, 0, 0, 1, 11, 22, 0));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, op_status);
}

/* ---------------------------------------------------------- ATOMIC --- */

#define ATOMIC_VA	(MEM_VA + 0x100)

/*
 * build_op()'s graph with an ATOMIC of @kind at (1,0): A = operand 0 (the
 * VA), B = operand 1, the old value stored at operand 3.  The word at the
 * VA starts as @init; *@now is it after @n instances.
 */
static uint64_t run_atomic_n(unsigned kind, unsigned type, uint64_t init,
			     uint64_t b, int64_t n, uint64_t *now,
			     struct loom_hw_counters *cnt)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[4] = { ATOMIC_VA, b, 0, RESULT_VA }, old;

	fake_put64(m, ATOMIC_VA, init);
	build_op(&fbuf, LOOM_OP_ATOMIC, type, 0, kind, 3);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	op_status = run_dense(f, m, ops, 4, 1, &n, cnt);
	old = fake_get64(m, RESULT_VA);
	*now = fake_get64(m, ATOMIC_VA);
	free_mem(m);
	loom_fabric_destroy(f);
	return old;
}

static uint64_t run_atomic(unsigned kind, unsigned type, uint64_t init,
			   uint64_t b, uint64_t *now)
{
	struct loom_hw_counters cnt;

	return run_atomic_n(kind, type, init, b, 1, now, &cnt);
}

TEST(atomic_kinds)
{
	uint64_t now;

	/* the result is the old value, the memory the new one */
	CHECK_EQ(40, run_atomic(LOOM_ATOMIC_ADDI, I64, 40, 2, &now));
	CHECK_EQ(LOOM_STATUS_OK, op_status);
	CHECK_EQ(42, now);
	/* i32: 4 bytes change, the old value comes back sign-extended */
	CHECK_EQ(0xffffffffffffffffULL,
		 run_atomic(LOOM_ATOMIC_ADDI, I32, 0x55555555ffffffffULL, 1, &now));
	CHECK_EQ(0x5555555500000000ULL, now);
	CHECK_EQ(6, run_atomic(LOOM_ATOMIC_MULI, I64, 6, 7, &now));
	CHECK_EQ(42, now);
	/* signed and unsigned extremes differ on negative values */
	run_atomic(LOOM_ATOMIC_MAXS, I64, (uint64_t)-5, 3, &now);
	CHECK_EQ(3, now);
	run_atomic(LOOM_ATOMIC_MAXU, I64, (uint64_t)-5, 3, &now);
	CHECK_EQ((uint64_t)-5, now);
	run_atomic(LOOM_ATOMIC_MINS, I32, 0xfffffffbULL, 3, &now);
	CHECK_EQ(0xfffffffbULL, now);
	run_atomic(LOOM_ATOMIC_MINU, I32, 0xfffffffbULL, 3, &now);
	CHECK_EQ(3, now);
	run_atomic(LOOM_ATOMIC_ANDI, I64, 0xff00, 0x0ff0, &now);
	CHECK_EQ(0x0f00, now);
	run_atomic(LOOM_ATOMIC_ORI, I64, 0xff00, 0x0ff0, &now);
	CHECK_EQ(0xfff0, now);
	run_atomic(LOOM_ATOMIC_XORI, I64, 0xff00, 0x0ff0, &now);
	CHECK_EQ(0xf0f0, now);
	CHECK_EQ(9, run_atomic(LOOM_ATOMIC_ASSIGN, I64, 9, 77, &now));
	CHECK_EQ(77, now);
	/* f32: 1.5 + 2.25 = 3.75; max(-0, +0) = +0; 2 * 3 = 6 */
	CHECK_EQ(0x3fc00000, run_atomic(LOOM_ATOMIC_ADDF, I32, 0x3fc00000,
					0x40100000, &now));
	CHECK_EQ(0x40700000, now);
	run_atomic(LOOM_ATOMIC_MAXIMUMF, I32, 0x80000000ULL, 0, &now);
	CHECK_EQ(0, now);
	run_atomic(LOOM_ATOMIC_MINIMUMF, I32, 0, 0x80000000ULL, &now);
	CHECK_EQ(0x80000000ULL, now);
	run_atomic(LOOM_ATOMIC_MULF, I32, 0x40000000, 0x40400000, &now);
	CHECK_EQ(0x40c00000, now);
}

TEST(atomic_instances_in_flight)
{
	struct loom_hw_counters c;
	uint64_t now, old;

	/* 100 instances add 3 to one word: none is lost */
	old = run_atomic_n(LOOM_ATOMIC_ADDI, I64, 1000, 3, 100, &now, &c);
	CHECK_EQ(LOOM_STATUS_OK, op_status);
	CHECK_EQ(1300, now);
	CHECK_EQ(1297, old);	/* the last instance's view */
	/* each firing is a read and a write, the old values' stores writes */
	CHECK_EQ(100, c.mem_reads);
	CHECK_EQ(200, c.mem_writes);
}

TEST(atomic_faults)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[4] = { ATOMIC_VA + 2, 1, 0, RESULT_VA };
	struct loom_hw_counters c;
	struct loom_fabric_env env;
	struct loom_dispatch d = { .operands = ops, .num_operands = 4 };
	struct dump dd;

	build_op(&fbuf, LOOM_OP_ATOMIC, I32, 0, LOOM_ATOMIC_ADDI, 3);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* misaligned: the callback's fault ends the run, inputs stay */
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, run_dense(f, m, ops, 4, 0, NULL, &c));
	CHECK_EQ(0, c.mem_reads);
	CHECK_EQ(0, fake_bytes_written(m));
	take_dump(f, &dd);
	CHECK_EQ(1, tile(&dd, 1, 0)->fifo[0]);
	CHECK_EQ(1, tile(&dd, 1, 0)->fifo[1]);
	CHECK_EQ(0, tile(&dd, 1, 0)->firings);
	/* no atomic callback: a DMA error */
	env = fake_env(m);
	env.atomic = NULL;
	ops[0] = ATOMIC_VA;
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, loom_fabric_run(f, &d, &env, &c));
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(atomic_waits_for_both_inputs)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[4] = { ATOMIC_VA, 1, 0, RESULT_VA };
	struct loom_hw_counters c;
	struct dump dd;

	/* B routed but never fed: the ATOMIC holds A and waits */
	build_op(&fbuf, LOOM_OP_ATOMIC, I64, 0, LOOM_ATOMIC_ADDI, 1);
	fb_route(&fbuf, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run_dense(f, m, ops, 4, 0, NULL, &c));
	CHECK_EQ(0, c.mem_reads);
	take_dump(f, &dd);
	CHECK_EQ(1, tile(&dd, 1, 0)->fifo[0]);
	CHECK(dd.h.waiting >= 1);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* --------------------------------------------------- dense domains --- */

/*
 * 6 x 2 fabric.  Row 0 computes the row-major index
 * L = (i * e1 + j) * e2 + k and the address base + 8 L, row 1 the value
 * i << 16 | j << 8 | k; (5,1) stores it.  Coordinates d >= rank are CTRL
 * ports (0 per instance) and their extents are 1.  Ports: coordinates on
 * the N edge at x = 0, 1, 3; operand 0 = base at x = 5; the done tokens
 * leave through a completion port on the E edge.
 */
static void build_dense(struct fb *b, unsigned rank, const int64_t *ext)
{
	static const unsigned coord_x[3] = { 0, 1, 3 };
	uint64_t e1 = rank > 1 ? (uint64_t)ext[1] : 1;
	uint64_t e2 = rank > 2 ? (uint64_t)ext[2] : 1;
	unsigned d;

	fb_init(b, 6, 2);
	for (d = 0; d < 3; d++) {
		if (d < rank)
			fb_port(b, LOOM_DIR_N, coord_x[d], LOOM_PORT_COORD, d);
		else
			fb_port(b, LOOM_DIR_N, coord_x[d], LOOM_PORT_CTRL, 0);
		fb_route(b, coord_x[d], 0, LOOM_OUT_S, LOOM_SRC_N);
	}
	fb_port(b, LOOM_DIR_N, 5, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_E, 1, LOOM_PORT_COMPLETION, 0);

	fb_pe(b, 0, 0, LOOM_OP_MUL, I64, IMM_B, e1);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_pe(b, 1, 0, LOOM_OP_ADD, I64, 0, 0);
	fb_pe(b, 2, 0, LOOM_OP_MUL, I64, IMM_B, e2);
	fb_pe(b, 3, 0, LOOM_OP_ADD, I64, 0, 0);
	fb_pe(b, 4, 0, LOOM_OP_SHL, I64, IMM_B, 3);
	fb_pe(b, 5, 0, LOOM_OP_ADD, I64, 0, 0);
	for (d = 1; d < 6; d++)
		fb_route(b, d, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 3, 0, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 5, 0, LOOM_OUT_PE_B, LOOM_SRC_N);
	for (d = 0; d < 5; d++)
		fb_route(b, d, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_route(b, 5, 0, LOOM_OUT_S, LOOM_SRC_PE);

	fb_pe(b, 0, 1, LOOM_OP_SHL, I64, IMM_B, 8);
	fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_pe(b, 1, 1, LOOM_OP_OR, I64, 0, 0);
	fb_pe(b, 2, 1, LOOM_OP_SHL, I64, IMM_B, 8);
	fb_pe(b, 3, 1, LOOM_OP_OR, I64, 0, 0);
	for (d = 1; d < 4; d++)
		fb_route(b, d, 1, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 1, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 3, 1, LOOM_OUT_PE_B, LOOM_SRC_N);
	for (d = 0; d < 4; d++)
		fb_route(b, d, 1, LOOM_OUT_E, LOOM_SRC_PE);
	fb_route(b, 4, 1, LOOM_OUT_E, LOOM_SRC_W);
	fb_pe(b, 5, 1, LOOM_OP_STORE, I64, 0, 0);
	fb_route(b, 5, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 5, 1, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 5, 1, LOOM_OUT_E, LOOM_SRC_PE);
}

/* Runs build_dense over @ext; checks each cell is written once, rightly. */
static void check_dense(unsigned rank, const int64_t *ext,
			struct loom_hw_counters *c, struct fake_mem *m)
{
	struct loom_fabric *f = fabric(6, 2, 2, 4);
	uint64_t base = MEM_VA;
	int64_t e[3] = { 1, 1, 1 }, total = 1;
	int64_t i, j, k;
	unsigned d;

	for (d = 0; d < rank; d++) {
		e[d] = ext[d];
		total *= ext[d];
	}
	build_dense(&fbuf, rank, ext);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &base, 1, rank, ext, c));
	CHECK_EQ(total, c->instances);
	CHECK_EQ(total, c->mem_writes);
	CHECK_EQ(0, c->items);
	CHECK_EQ(8 * total, fake_bytes_written(m));
	for (i = 0; i < e[0]; i++)
		for (j = 0; j < e[1]; j++)
			for (k = 0; k < e[2]; k++) {
				uint64_t va = base + 8 * ((i * e[1] + j) * e[2] + k);

				CHECK_EQ(1, fake_writes(m, va));
				CHECK_EQ(i << 16 | j << 8 | k, fake_get64(m, va));
			}
	loom_fabric_destroy(f);
}

TEST(dense_ranks)
{
	static const int64_t e1[1] = { 5 }, e2[2] = { 3, 4 }, e3[3] = { 2, 3, 4 };
	struct fake_mem *m;
	struct loom_hw_counters c;

	m = new_mem();
	check_dense(0, NULL, &c, m);	/* exactly one instance */
	CHECK_EQ(1, c.instances);
	free_mem(m);
	m = new_mem();
	check_dense(1, e1, &c, m);
	free_mem(m);
	m = new_mem();
	check_dense(2, e2, &c, m);
	free_mem(m);
	m = new_mem();
	check_dense(3, e3, &c, m);
	CHECK_EQ(24, c.instances);
	CHECK_EQ(24 * 11, c.firings);
	free_mem(m);
}

TEST(dense_zero_extents)
{
	static const int64_t z3[3] = { 3, 0, 4 }, z1[1] = { 0 }, z3b[3] = { 0, 2, 2 };
	struct loom_fabric *f = fabric(6, 2, 2, 4);
	struct fake_mem *m = new_mem();
	uint64_t base = MEM_VA;
	struct loom_hw_counters c;

	build_dense(&fbuf, 3, z3);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &base, 1, 3, z3, &c));
	CHECK_EQ(0, c.instances);
	CHECK_EQ(0, c.cycles);
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &base, 1, 3, z3b, &c));
	CHECK_EQ(0, c.instances);
	build_dense(&fbuf, 1, z1);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &base, 1, 1, z1, &c));
	CHECK_EQ(0, c.instances);
	CHECK_EQ(0, c.mem_writes);
	CHECK_EQ(0, fake_bytes_written(m));
	CHECK_EQ(0, m->nlog);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * Blocks of dimension 0 that partition [0, e0) run every instance of the
 * domain exactly once, with its coordinates in the whole domain: the
 * parts of one launch split over cores write what the launch writes.
 */
TEST(dense_blocks_partition_the_domain)
{
	static const int64_t e3[3] = { 5, 3, 4 };
	static const int64_t cuts[][2] = { { 0, 2 }, { 2, 2 }, { 2, 3 }, { 3, 5 } };
	struct loom_fabric *f = fabric(6, 2, 2, 4);
	struct fake_mem *m = new_mem();
	uint64_t base = MEM_VA, total = 0;
	struct loom_hw_counters c;

	build_dense(&fbuf, 3, e3);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	for (unsigned p = 0; p < 4; p++) {
		struct loom_dispatch d = {
			.operands = &base, .num_operands = 1, .rank = 3,
			.extents = e3, .block = true,
			.begin = cuts[p][0], .end = cuts[p][1],
		};
		struct loom_fabric_env env = fake_env(m);

		memset(&c, 0, sizeof(c));
		CHECK_EQ(LOOM_STATUS_OK, loom_fabric_run(f, &d, &env, &c));
		CHECK_EQ((cuts[p][1] - cuts[p][0]) * 12, c.instances);
		if (cuts[p][0] == cuts[p][1])
			CHECK_EQ(0, c.cycles);
		total += c.instances;
	}
	CHECK_EQ(60, total);
	CHECK_EQ(8 * 60, fake_bytes_written(m));
	for (int64_t i = 0; i < 5; i++)
		for (int64_t j = 0; j < 3; j++)
			for (int64_t k = 0; k < 4; k++) {
				uint64_t va = base + 8 * ((i * 3 + j) * 4 + k);

				CHECK_EQ(1, fake_writes(m, va));
				CHECK_EQ(i << 16 | j << 8 | k, fake_get64(m, va));
			}
	free_mem(m);
	loom_fabric_destroy(f);
}

/* A block outside [0, e0], reversed, or of a rank-0 domain runs nothing. */
TEST(dense_bad_blocks_are_refused)
{
	static const int64_t e1[1] = { 5 };
	static const int64_t bad[][2] = {
		{ -1, 2 }, { 3, 2 }, { 0, 6 }, { 6, 6 }, { INT64_MIN, 0 },
	};
	struct loom_fabric *f = fabric(6, 2, 2, 4);
	struct fake_mem *m = new_mem();
	uint64_t base = MEM_VA;
	struct loom_hw_counters c;

	build_dense(&fbuf, 1, e1);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	for (unsigned p = 0; p < 5; p++) {
		struct loom_dispatch d = {
			.operands = &base, .num_operands = 1, .rank = 1,
			.extents = e1, .block = true,
			.begin = bad[p][0], .end = bad[p][1],
		};
		struct loom_fabric_env env = fake_env(m);

		memset(&c, 0, sizeof(c));
		CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD,
			 loom_fabric_run(f, &d, &env, &c));
		CHECK_EQ(0, c.instances);
	}
	build_dense(&fbuf, 0, NULL);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	{
		struct loom_dispatch d = {
			.operands = &base, .num_operands = 1, .block = true,
		};
		struct loom_fabric_env env = fake_env(m);

		CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD,
			 loom_fabric_run(f, &d, &env, &c));
	}
	CHECK_EQ(0, fake_bytes_written(m));
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(determinism)
{
	static const int64_t e3[3] = { 3, 5, 2 };
	struct fake_mem *m1 = new_mem(), *m2 = new_mem();
	struct loom_hw_counters c1, c2;
	unsigned i;

	check_dense(3, e3, &c1, m1);
	check_dense(3, e3, &c2, m2);
	CHECK(!memcmp(&c1, &c2, sizeof(c1)));
	CHECK(!memcmp(m1->bytes, m2->bytes, MEM_SIZE));
	CHECK_EQ(m1->progress, m2->progress);
	REQUIRE_EQ(m1->nlog, m2->nlog);
	for (i = 0; i < m1->nlog; i++) {
		CHECK_EQ(m1->log[i].va, m2->log[i].va);
		CHECK_EQ(m1->log[i].progress, m2->log[i].progress);
	}
	free_mem(m1);
	free_mem(m2);
}

/* Same fabric, same dispatch, twice in a row: the second run starts clean. */
TEST(determinism_same_fabric)
{
	static const int64_t n = 37;
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[3] = { MEM_VA, MEM_VA + 0x1000, MEM_VA + 0x2000 };
	struct loom_hw_counters c1, c2;
	struct dump d1, d2;
	size_t len = loom_test_config_vector_add(image, sizeof(image), 4, 4);

	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 3, 1, &n, &c1));
	take_dump(f, &d1);
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 3, 1, &n, &c2));
	take_dump(f, &d2);
	CHECK(!memcmp(&c1, &c2, sizeof(c1)));
	CHECK(!memcmp(d1.t, d2.t, 16 * sizeof(d1.t[0])));
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(port_dispatch_mismatch)
{
	static const int64_t n = 4;
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[3] = { MEM_VA, MEM_VA + 0x1000, MEM_VA + 0x2000 };
	struct loom_hw_counters c;
	size_t len = loom_test_config_vector_add(image, sizeof(image), 4, 4);

	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	/* operand 2 has a port but only 2 operands are given */
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, run_dense(f, m, ops, 2, 1, &n, &c));
	/* coordinate 0 has a port: rank 0 has none */
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, run_dense(f, m, ops, 3, 0, NULL, &c));
	/* a COORD port in an item */
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, run_item(f, m, ops, 3, 0, &c));
	/* too many operands or too high a rank */
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD,
		 run_dense(f, m, ops, LOOM_MAX_OPERANDS + 1, 1, &n, &c));
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD,
		 run_dense(f, m, ops, 3, LOOM_MAX_RANK + 1, &n, &c));
	CHECK_EQ(0, c.cycles);
	CHECK_EQ(0, c.instances);
	/* a PAYLOAD port in a dense dispatch */
	len = loom_test_config_tree_spawner(image, sizeof(image), 4, 4);
	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, run_dense(f, m, ops, 1, 0, NULL, &c));
	/* operand 0 missing in an item */
	memset(&c, 0, sizeof(c));
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, run_item(f, m, ops, 0, 0, &c));
	CHECK_EQ(0, c.items);
	CHECK_EQ(0, m->nlog);
	CHECK_EQ(0, m->progress);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* ----------------------------------------------------------- items --- */

/*
 * An item with payload p spawns p + 1, p + 2, p + 3 from three SPAWN PEs;
 * JOINs make each spawn wait for the previous one's done token, although
 * p + 3 has the shortest path.
 *
 *   (0,0) ADD 1 -> S     (1,0) ADD 2 -> S      (2,0) ADD 3 -> S
 *   (0,1) SPAWN -> E     (1,1) JOIN -> S       (2,1) passes S
 *                        (1,2) SPAWN -> E      (2,2) JOIN -> S
 *                                              (2,3) SPAWN -> E  (3,3) SINK
 */
static void build_spawn3(struct fb *b)
{
	unsigned x;

	fb_init(b, 4, 4);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_PAYLOAD, 0);
	for (x = 0; x < 3; x++) {
		fb_pe(b, x, 0, LOOM_OP_ADD, I64, IMM_B, x + 1);
		fb_route(b, x, 0, LOOM_OUT_PE_A, x ? LOOM_SRC_W : LOOM_SRC_N);
		fb_route(b, x, 0, LOOM_OUT_S, LOOM_SRC_PE);
		if (x < 2)
			fb_route(b, x, 0, LOOM_OUT_E,
				 x ? LOOM_SRC_W : LOOM_SRC_N);
	}
	fb_pe(b, 0, 1, LOOM_OP_SPAWN, I64, 0, 0);
	fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 1, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 1, 1, LOOM_OP_JOIN, I64, 0, 0);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 1, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 1, 1, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 2, LOOM_OP_SPAWN, I64, 0, 0);
	fb_route(b, 1, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 2, LOOM_OUT_E, LOOM_SRC_PE);
	fb_route(b, 2, 1, LOOM_OUT_S, LOOM_SRC_N);
	fb_pe(b, 2, 2, LOOM_OP_JOIN, I64, 0, 0);
	fb_route(b, 2, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 2, 2, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 2, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 2, 3, LOOM_OP_SPAWN, I64, 0, 0);
	fb_route(b, 2, 3, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 2, 3, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 3, 3, LOOM_OP_SINK, I64, 0, 0);
	fb_route(b, 3, 3, LOOM_OUT_PE_A, LOOM_SRC_W);
}

TEST(item_spawn_order)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c = { 0 };

	build_spawn3(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_item(f, m, NULL, 0, 100, &c));
	REQUIRE_EQ(3, m->nspawn);
	CHECK_EQ(101, m->spawned[0]);
	CHECK_EQ(102, m->spawned[1]);
	CHECK_EQ(103, m->spawned[2]);
	CHECK_EQ(3, c.spawns);
	CHECK_EQ(1, c.items);
	CHECK_EQ(0, c.instances);
	/* counters add up over items */
	CHECK_EQ(LOOM_STATUS_OK, run_item(f, m, NULL, 0, 200, &c));
	CHECK_EQ(2, c.items);
	CHECK_EQ(6, c.spawns);
	CHECK_EQ(203, m->spawned[5]);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * Items of one dispatch are pipelined: each spawn reports the item its
 * token belongs to, each item's spawns come in its program order (the
 * JOIN chain), and the dispatch takes far fewer cycles than the items one
 * at a time.
 */
TEST(items_pipelined_spawns_carry_their_item)
{
	static const uint64_t payloads[8] = { 100, 200, 300, 400,
					      500, 600, 700, 800 };
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c = { 0 }, one = { 0 };
	struct loom_dispatch d = { .items = true, .count = 8 };
	struct loom_fabric_env env = fake_env(m);
	unsigned next[8] = { 0 };

	build_spawn3(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	REQUIRE_EQ(LOOM_STATUS_OK, run_item(f, m, NULL, 0, 100, &one));
	m->nspawn = 0;
	m->payloads = payloads;
	m->npayloads = 8;
	REQUIRE_EQ(LOOM_STATUS_OK, loom_fabric_run(f, &d, &env, &c));
	CHECK_EQ(8, c.items);
	CHECK_EQ(24, c.spawns);
	REQUIRE_EQ(24, m->nspawn);
	for (unsigned k = 0; k < m->nspawn; k++) {
		uint32_t i = m->spawned_item[k];

		REQUIRE(i < 8);
		CHECK_EQ(payloads[i] + 1 + next[i], m->spawned[k]);
		next[i]++;
	}
	/* items overlap: the second item spawns before the first is done */
	CHECK(m->spawned_item[2] != 0);
	CHECK(c.cycles < 8 * one.cycles / 2);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* A hostile count ends at the first payload that cannot be read. */
TEST(items_payload_fault_ends_the_dispatch)
{
	static const uint64_t payloads[3] = { 1, 2, 3 };
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c = { 0 };
	struct loom_dispatch d = { .items = true, .count = UINT32_MAX };
	struct loom_fabric_env env = fake_env(m);

	build_spawn3(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	m->payloads = payloads;
	m->npayloads = 3;
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_fabric_run(f, &d, &env, &c));
	CHECK_EQ(3, c.items);
	/* no payload callback: the first item cannot be read */
	env.payload = NULL;
	memset(&c, 0, sizeof(c));
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, loom_fabric_run(f, &d, &env, &c));
	CHECK_EQ(0, c.items);
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(child_overflow)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c = { 0 };
	struct loom_fabric_env env;
	struct loom_dispatch d = { .items = true, .count = 1 };
	uint64_t one = 1;

	build_spawn3(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	m->spawn_cap = 2;
	CHECK_EQ(LOOM_STATUS_CHILD_OVERFLOW, run_item(f, m, NULL, 0, 100, &c));
	CHECK_EQ(2, m->nspawn);
	CHECK_EQ(2, c.spawns);
	/* without a spawn callback, a SPAWN is outside items */
	env = fake_env(m);
	env.spawn = NULL;
	m->payloads = &one;
	m->npayloads = 1;
	CHECK_EQ(LOOM_STATUS_SPAWN_OUTSIDE_ITEMS, loom_fabric_run(f, &d, &env, &c));
	free_mem(m);
	loom_fabric_destroy(f);
}

/* ------------------------------------------------------------ stop --- */

TEST(stopped)
{
	static const int64_t n = 64;
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t ops[3] = { MEM_VA, MEM_VA + 0x1000, MEM_VA + 0x2000 };
	struct loom_hw_counters c;
	size_t len = loom_test_config_vector_add(image, sizeof(image), 4, 4);
	struct dump d;
	unsigned i;

	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	m->stop = 1;
	CHECK_EQ(LOOM_STATUS_STOPPED, run_dense(f, m, ops, 3, 1, &n, &c));
	CHECK_EQ(0, c.cycles);
	CHECK_EQ(0, m->nlog);
	/* stopped from a callback, mid-run */
	m->stop = 0;
	m->stop_after = 30;
	CHECK_EQ(LOOM_STATUS_STOPPED, run_dense(f, m, ops, 3, 1, &n, &c));
	CHECK(m->nlog >= 30 && m->nlog < 30 + LOOM_DEFAULT_MEM_PORTS);
	CHECK(c.cycles > 0);
	CHECK(m->progress > 0);
	CHECK(c.instances < 64);
	take_dump(f, &d);
	CHECK(d.t[0].firings > 0);
	/* and runs again, from scratch, once the stop is cleared */
	m->stop = 0;
	m->stop_after = 0;
	memset(m->writes, 0, MEM_SIZE);
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 3, 1, &n, &c));
	CHECK_EQ(64, c.instances);
	for (i = 0; i < 64; i++)
		CHECK_EQ(1, fake_writes(m, MEM_VA + 0x2000 + 8 * i));
	free_mem(m);
	loom_fabric_destroy(f);
}

/* ---------------------------------------------- the shared configs --- */

static void vector_add(unsigned w, unsigned h, int64_t n)
{
	struct loom_fabric *f = fabric(w, h, LOOM_DEFAULT_MEM_PORTS,
				       LOOM_DEFAULT_LOAD_LATENCY);
	struct fake_mem *m = new_mem();
	uint64_t a = MEM_VA, b = MEM_VA + 0x1000, cv = MEM_VA + 0x2000;
	uint64_t ops[3] = { a, b, cv };
	struct loom_hw_counters c;
	size_t len = loom_test_config_vector_add(image, sizeof(image), w, h);
	int64_t i;

	for (i = 0; i < n; i++) {
		fake_put64(m, a + 8 * i, (uint64_t)(i * 3 - 1000));
		fake_put64(m, b + 8 * i, (uint64_t)(i ^ 0x55) << 33);
	}
	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 3, 1, &n, &c));
	for (i = 0; i < n; i++) {
		uint64_t want = (uint64_t)(i * 3 - 1000) + ((uint64_t)(i ^ 0x55) << 33);

		CHECK_EQ(want, fake_get64(m, cv + 8 * i));
		CHECK_EQ(1, fake_writes(m, cv + 8 * i));
	}
	CHECK_EQ(8 * n, fake_bytes_written(m));
	CHECK_EQ(n, c.instances);
	CHECK_EQ(2 * n, c.mem_reads);
	CHECK_EQ(n, c.mem_writes);
	CHECK_EQ(9 * n, c.firings);
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(vector_add)
{
	vector_add(4, 4, 1);
	vector_add(4, 4, 7);
	vector_add(4, 4, 64);
	vector_add(4, 4, 0);
	vector_add(5, 7, 7);	/* the graph fits larger fabrics too */
}

#define TREE_NODES	30

TEST(tree_spawner_bfs)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t table = MEM_VA + 0x4000;
	int64_t first[TREE_NODES], count[TREE_NODES];
	unsigned queue[TREE_NODES], head = 0, tail = 0, next = 1, n, k;
	struct loom_hw_counters c = { 0 };
	size_t len = loom_test_config_tree_spawner(image, sizeof(image), 4, 4);

	/* nodes numbered in BFS order: children of n are contiguous */
	for (n = 0; n < TREE_NODES; n++) {
		unsigned kids = (n * 7 + 3) % 5;

		if (next + kids > TREE_NODES)
			kids = TREE_NODES - next;
		first[n] = next;
		count[n] = kids;
		next += kids;
		fake_put64(m, table + 16 * n, (uint64_t)first[n]);
		fake_put64(m, table + 16 * n + 8, (uint64_t)count[n]);
	}
	REQUIRE_EQ(TREE_NODES, next);
	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	queue[tail++] = 0;
	while (head < tail) {
		n = queue[head++];
		m->nspawn = 0;
		REQUIRE_EQ(LOOM_STATUS_OK, run_item(f, m, &table, 1, n, &c));
		CHECK_EQ(count[n], m->nspawn);
		for (k = 0; k < m->nspawn && k < count[n]; k++) {
			CHECK_EQ(first[n] + k, m->spawned[k]);
			REQUIRE(tail < TREE_NODES);
			queue[tail++] = m->spawned[k];
		}
	}
	CHECK_EQ(TREE_NODES, tail);
	for (k = 0; k < TREE_NODES; k++)
		CHECK_EQ(k, queue[k]);	/* BFS order is the numbering */
	CHECK_EQ(TREE_NODES, c.items);
	CHECK_EQ(TREE_NODES - 1, c.spawns);
	CHECK_EQ(2 * TREE_NODES, c.mem_reads);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* ------------------------------------------------- temporal PEs --- */

/*
 * One tile of four slots computes mem[base + 8 i] = 3 i for coordinate i:
 * slot 0 SHL i, 3; slot 1 ADD base; slot 2 MUL i, 3; slot 3 STORE.  The
 * coordinate forks from the W link to slots 0 and 2; slot results reach
 * other slots without a link.
 */
static void build_slot_chain(struct fb *b)
{
	fb_init(b, 1, 1);
	fb_slots(b, 4);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_COORD, 0);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_slot_pe(b, 0, 0, 0, LOOM_OP_SHL, I64, IMM_B, 3);
	fb_slot_route(b, 0, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_slot_pe(b, 0, 0, 1, LOOM_OP_ADD, I64, 0, 0);
	fb_slot_route(b, 0, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_SLOT(0));
	fb_slot_route(b, 0, 0, 1, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_slot_pe(b, 0, 0, 2, LOOM_OP_MUL, I64, IMM_B, 3);
	fb_slot_route(b, 0, 0, 2, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_slot_pe(b, 0, 0, 3, LOOM_OP_STORE, I64, 0, 0);
	fb_slot_route(b, 0, 0, 3, LOOM_OUT_PE_A, LOOM_SRC_SLOT(1));
	fb_slot_route(b, 0, 0, 3, LOOM_OUT_PE_B, LOOM_SRC_SLOT(2));
	/* the link route may sit in any one slot: slot 3's own output */
	fb_slot_route(b, 0, 0, 3, LOOM_OUT_E, LOOM_SRC_PE);
}

TEST(slots_share_one_pe)
{
	struct loom_fabric *f = fabric(1, 1, LOOM_DEFAULT_MEM_PORTS,
				       LOOM_DEFAULT_LOAD_LATENCY);
	struct fake_mem *m = new_mem();
	uint64_t base = MEM_VA;
	int64_t n = 40, i;
	struct loom_hw_counters c;
	struct dump d;

	build_slot_chain(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &base, 1, 1, &n, &c));
	for (i = 0; i < n; i++) {
		CHECK_EQ(3 * i, fake_get64(m, base + 8 * i));
		CHECK_EQ(1, fake_writes(m, base + 8 * i));
	}
	CHECK_EQ(4 * n, c.firings);
	CHECK_EQ(n, c.mem_writes);
	/* one firing per cycle: the PE's four slots give an II of 4 */
	CHECK(c.cycles >= (uint64_t)(4 * n));
	CHECK(c.cycles <= (uint64_t)(4 * n + 8));
	take_dump(f, &d);
	CHECK_EQ(4 * n, d.t[0].firings);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * Two STOREs in slots 0 and 1 of one tile, both always ready: they fire
 * in turn, slot 0 first, never in the same cycle.
 */
TEST(slots_fire_round_robin)
{
	struct loom_fabric *f = fabric(1, 1, 2, 1);
	struct fake_mem *m = new_mem();
	uint64_t va[2] = { MEM_VA, MEM_VA + 64 };
	int64_t n = 6;
	struct loom_hw_counters c;
	unsigned i;

	fb_init(&fbuf, 1, 1);
	fb_slots(&fbuf, 2);
	fb_port(&fbuf, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_port(&fbuf, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 1);
	fb_port(&fbuf, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_port(&fbuf, LOOM_DIR_S, 0, LOOM_PORT_COMPLETION, 0);
	fb_slot_pe(&fbuf, 0, 0, 0, LOOM_OP_STORE, I64, IMM_B, 0x11);
	fb_slot_route(&fbuf, 0, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_slot_route(&fbuf, 0, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_slot_pe(&fbuf, 0, 0, 1, LOOM_OP_STORE, I64, IMM_B, 0x22);
	fb_slot_route(&fbuf, 0, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_slot_route(&fbuf, 0, 0, 1, LOOM_OUT_S, LOOM_SRC_PE);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, va, 2, 1, &n, &c));
	CHECK_EQ(0x11, fake_get64(m, va[0]));
	CHECK_EQ(0x22, fake_get64(m, va[1]));
	REQUIRE_EQ(2 * n, m->nlog);
	for (i = 0; i < m->nlog; i++) {
		CHECK_EQ(va[i % 2], m->log[i].va);
		if (i)
			CHECK(m->log[i].progress > m->log[i - 1].progress);
	}
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * The buffers follow the loaded configuration's slots: a 4-slot image, a
 * 1-slot one and a 4-slot one again on the same fabric, each loaded after
 * a stopped run left tokens behind, each run as the first did.
 */
TEST(reconfigure_between_slot_layouts)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t va = MEM_VA + 64;
	int64_t n = 5, many = 100;
	struct loom_hw_counters c[3], stopped;
	unsigned slots[3] = { 4, 0, 4 };

	for (unsigned i = 0; i < 3; i++) {
		build_snake_slots(&fbuf, slots[i]);
		REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
		CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c[i]));
		CHECK_EQ(c[0].cycles, c[i].cycles);
		CHECK_EQ(5, c[i].firings);
		m->stop_after = 3;
		CHECK_EQ(LOOM_STATUS_STOPPED,
			 run_dense(f, m, &va, 1, 1, &many, &stopped));
		m->stop_after = 0;
		m->stop = 0;
	}
	free_mem(m);
	loom_fabric_destroy(f);
}

/* A slotted image with one slot per PE runs as the spatial one does. */
TEST(one_slot_runs_as_spatial)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t va = MEM_VA + 64;
	int64_t n = 5;
	struct loom_hw_counters c1, c2;

	build_snake(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c1));
	fbuf.hdr.version = LOOM_CONFIG_VERSION_SLOTS;
	fbuf.hdr.slots = 1;
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c2));
	CHECK_EQ(c1.cycles, c2.cycles);
	CHECK_EQ(c1.firings, c2.firings);
	CHECK_EQ(10, fake_writes(m, va));
	free_mem(m);
	loom_fabric_destroy(f);
}

TEST(slot_configure_errors)
{
	struct loom_fabric *f = fabric(1, 1, 1, 1);

	build_slot_chain(&fbuf);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* a link output set in two slots */
	fb_slot_route(&fbuf, 0, 0, 2, LOOM_OUT_E, LOOM_SRC_PE);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	CHECK(!loom_fabric_configured(f));
	fb_slot_route(&fbuf, 0, 0, 2, LOOM_OUT_E, LOOM_SRC_NONE);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* the output of a slot the image does not have */
	fb_slot_route(&fbuf, 0, 0, 3, LOOM_OUT_PE_C, LOOM_SRC_SLOT(4));
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 0, 0, 3, LOOM_OUT_PE_C, LOOM_SRC_NONE);
	/* more slots than the device has */
	fbuf.hdr.slots = LOOM_PE_SLOTS + 1;
	CHECK_EQ(LOOM_CONFIG_BAD_DIMENSIONS, configure(f, &fbuf));
	fbuf.hdr.slots = 4;
	fbuf.hdr.reserved = 1;
	CHECK_EQ(LOOM_CONFIG_RESERVED, configure(f, &fbuf));
	loom_fabric_destroy(f);
}

/* ------------------------------------------------- link channels --- */

#define CHAN(dir, k)	LOOM_SRC_CHAN(LOOM_DIR_##dir, k)

/*
 * A 2x1 fabric of four slots per PE computes mem[base + 8 i] = i + c: the
 * coordinate i (W port) and the operand c (N port of (0,0)) cross the one
 * link (0,0) -> (1,0) as its channels 0 and 1.  (1,0): slot 0 SHL i, 3;
 * slot 1 ADD base (N port); slot 2 ADD i, c; slot 3 STORE, done token E.
 * Channel 0 is read both as LOOM_SRC_W and as CHAN(W, 0).
 */
static void build_two_channels(struct fb *b)
{
	fb_init(b, 2, 1);
	fb_slots(b, 4);
	b->hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_COORD, 0);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 1);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_slot_route(b, 0, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	fb_slot_route(b, 0, 0, 1, LOOM_OUT_E, LOOM_SRC_N);
	fb_slot_pe(b, 1, 0, 0, LOOM_OP_SHL, I64, IMM_B, 3);
	fb_slot_route(b, 1, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_slot_pe(b, 1, 0, 1, LOOM_OP_ADD, I64, 0, 0);
	fb_slot_route(b, 1, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_SLOT(0));
	fb_slot_route(b, 1, 0, 1, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_slot_pe(b, 1, 0, 2, LOOM_OP_ADD, I64, 0, 0);
	fb_slot_route(b, 1, 0, 2, LOOM_OUT_PE_A, CHAN(W, 0));
	fb_slot_route(b, 1, 0, 2, LOOM_OUT_PE_B, CHAN(W, 1));
	fb_slot_pe(b, 1, 0, 3, LOOM_OP_STORE, I64, 0, 0);
	fb_slot_route(b, 1, 0, 3, LOOM_OUT_PE_A, LOOM_SRC_SLOT(1));
	fb_slot_route(b, 1, 0, 3, LOOM_OUT_PE_B, LOOM_SRC_SLOT(2));
	fb_slot_route(b, 1, 0, 3, LOOM_OUT_E, LOOM_SRC_PE);
}

TEST(channels_configure_errors)
{
	struct loom_fabric *f = fabric(2, 1, 1, 1);

	build_two_channels(&fbuf);
	/* an interior link set in two slots: channels 0 and 1 */
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* the same image as LOOM_CONFIG_VERSION_SLOTS: no CHAN sources */
	fbuf.hdr.version = LOOM_CONFIG_VERSION_SLOTS;
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	CHECK(!loom_fabric_configured(f));
	/* ... nor, without them, a link set in two slots */
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, LOOM_SRC_W);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 0, 0, 1, LOOM_OUT_E, LOOM_SRC_NONE);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* a CHAN source alone in a version 2 image */
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_A, CHAN(W, 0));
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));

	build_two_channels(&fbuf);
	/* channel k needs k < slots */
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, CHAN(W, 4));
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, CHAN(W, 3));
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf)); /* nobody sets it */
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, LOOM_SRC_CHAN_LAST);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, LOOM_SRC_CHAN_LAST + 1);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	/* between the slots and the channels */
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, LOOM_SRC_SLOT(4));
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, LOOM_SRC_CHAN0 - 1);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_PE_B, CHAN(W, 1));
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));

	/* an edge link (a port) has channel 0 only */
	fb_slot_route(&fbuf, 0, 0, 0, LOOM_OUT_E, CHAN(W, 1));
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 0, 0, 0, LOOM_OUT_E, CHAN(W, 0));
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* ... and is set in one slot, any one */
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_E, LOOM_SRC_PE);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_E, LOOM_SRC_NONE);
	fb_slot_route(&fbuf, 1, 0, 3, LOOM_OUT_E, LOOM_SRC_NONE);
	fb_slot_route(&fbuf, 1, 0, 2, LOOM_OUT_E, LOOM_SRC_SLOT(3));
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	/* an unbound edge is no more writable in slot 1 than in slot 0 */
	fb_slot_route(&fbuf, 1, 0, 1, LOOM_OUT_S, LOOM_SRC_PE);
	CHECK_EQ(LOOM_CONFIG_BAD_ROUTE, configure(f, &fbuf));
	loom_fabric_destroy(f);
}

TEST(channels_carry_two_values_over_one_link)
{
	struct loom_fabric *f = fabric(2, 1, 1, 1);
	struct fake_mem *m = new_mem();
	uint64_t ops[2] = { MEM_VA, 1000 };
	int64_t n = 24, i;
	struct loom_hw_counters c;

	build_two_channels(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 2, 1, &n, &c));
	for (i = 0; i < n; i++) {
		CHECK_EQ(1000 + i, fake_get64(m, MEM_VA + 8 * i));
		CHECK_EQ(1, fake_writes(m, MEM_VA + 8 * i));
	}
	CHECK_EQ(8 * n, fake_bytes_written(m));
	CHECK_EQ(4 * n, c.firings);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * Two streams of one token per instance, from the W and N ports of (0,0)
 * of a 2x2 fabric, to completion ports.  @shared: both cross the link
 * (0,0) -> (1,0), as channels 0 and 1, then leave E and S of (1,0) (the
 * latter through (1,1)); otherwise the N stream goes S through (0,1).
 * @sink: (1,0) reads neither channel (the tokens pile up).
 */
static void build_two_streams(struct fb *b, bool shared, bool sink)
{
	fb_init(b, 2, 2);
	fb_slots(b, 2);
	b->hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_CTRL, 0);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_CTRL, 0);
	fb_port(b, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_port(b, LOOM_DIR_S, 1, LOOM_PORT_COMPLETION, 0);
	fb_port(b, LOOM_DIR_S, 0, LOOM_PORT_COMPLETION, 0);
	fb_slot_route(b, 0, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	if (shared) {
		fb_slot_route(b, 0, 0, 1, LOOM_OUT_E, LOOM_SRC_N);
		if (!sink) {
			fb_slot_route(b, 1, 0, 0, LOOM_OUT_E, CHAN(W, 0));
			fb_slot_route(b, 1, 0, 1, LOOM_OUT_S, CHAN(W, 1));
		}
		fb_slot_route(b, 1, 1, 0, LOOM_OUT_S, CHAN(N, 1));
	} else {
		fb_slot_route(b, 0, 0, 1, LOOM_OUT_S, LOOM_SRC_N);
		fb_slot_route(b, 1, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
		fb_slot_route(b, 0, 1, 0, LOOM_OUT_S, CHAN(N, 1));
	}
}

static uint64_t two_streams_cycles(bool shared, int64_t n)
{
	struct loom_fabric *f = fabric(2, 2, 1, 1);
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c;

	build_two_streams(&fbuf, shared, false);
	CHECK_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, NULL, 0, 1, &n, &c));
	CHECK_EQ(n, c.instances);
	free_mem(m);
	loom_fabric_destroy(f);
	return c.cycles;
}

/* A link moves one token a cycle, whatever its channels. */
TEST(channels_share_the_link_bandwidth)
{
	int64_t n = 50;
	uint64_t shared = two_streams_cycles(true, n);
	uint64_t apart = two_streams_cycles(false, n);

	/* 2n tokens over one link */
	CHECK(shared >= (uint64_t)(2 * n));
	CHECK(shared <= (uint64_t)(2 * n + 8));
	/* n tokens over each of two links: one instance a cycle */
	CHECK(apart >= (uint64_t)n);
	CHECK(apart <= (uint64_t)(n + 8));
}

/* A link's count in the dump is the sum over its channels. */
TEST(channels_dump_sums_a_link)
{
	struct loom_fabric *f = fabric(2, 2, 1, 1);
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c;
	int64_t n = 10;
	struct dump d;

	build_two_streams(&fbuf, true, true);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run_dense(f, m, NULL, 0, 1, &n, &c));
	take_dump(f, &d);
	CHECK_EQ(2 * LOOM_LINK_DEPTH, tile(&d, 0, 0)->links[LOOM_DIR_E]);
	CHECK_EQ(0, tile(&d, 0, 0)->links[LOOM_DIR_S]);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * A fork over two shared links: on (0,0) of a 2x2 fabric, source A (the
 * item's payload, a VA, from W) feeds channel 0 of the E link L1 and of
 * the S link L2; source B (operand x from N) feeds channel 1 of L1 and
 * slot 2's CONST, whose output C feeds channel 2 of L2.  (1,0) stores x
 * at the VA; (0,1) adds 0x1000 to the VA and sends it on with K, as the
 * channels 0 and 1 of its E link, to (1,1), which stores K there.  Each
 * PE fires once per item, each link takes one token a cycle: an item's
 * two crossings of each link need 2 cycles.
 */
#define FORK_K		0x4b4b

static void build_channel_fork(struct fb *b)
{
	fb_init(b, 2, 2);
	fb_slots(b, 3);
	b->hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_PAYLOAD, 0);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_port(b, LOOM_DIR_E, 1, LOOM_PORT_COMPLETION, 0);
	fb_slot_route(b, 0, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	fb_slot_route(b, 0, 0, 0, LOOM_OUT_S, LOOM_SRC_W);
	fb_slot_route(b, 0, 0, 1, LOOM_OUT_E, LOOM_SRC_N);
	fb_slot_pe(b, 0, 0, 2, LOOM_OP_CONST, I64, 0, FORK_K);
	fb_slot_route(b, 0, 0, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_slot_route(b, 0, 0, 2, LOOM_OUT_S, LOOM_SRC_PE);

	fb_slot_pe(b, 1, 0, 0, LOOM_OP_STORE, I64, 0, 0);
	fb_slot_route(b, 1, 0, 0, LOOM_OUT_PE_A, CHAN(W, 0));
	fb_slot_route(b, 1, 0, 0, LOOM_OUT_PE_B, CHAN(W, 1));
	fb_slot_route(b, 1, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);

	fb_slot_pe(b, 0, 1, 0, LOOM_OP_ADD, I64, IMM_B, 0x1000);
	fb_slot_route(b, 0, 1, 0, LOOM_OUT_PE_A, CHAN(N, 0));
	fb_slot_route(b, 0, 1, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_slot_route(b, 0, 1, 1, LOOM_OUT_E, CHAN(N, 2));

	fb_slot_pe(b, 1, 1, 0, LOOM_OP_STORE, I64, 0, 0);
	fb_slot_route(b, 1, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_slot_route(b, 1, 1, 0, LOOM_OUT_PE_B, CHAN(W, 1));
	fb_slot_route(b, 1, 1, 0, LOOM_OUT_E, LOOM_SRC_PE);
}

TEST(channels_fork_over_shared_links)
{
	struct loom_fabric *f = fabric(2, 2, 2, 1);
	struct fake_mem *m = new_mem();
	uint64_t x = 0x5151, payloads[64];
	struct loom_dispatch d = {
		.operands = &x, .num_operands = 1,
		.items = true, .count = 64,
	};
	struct loom_fabric_env env = fake_env(m);
	struct loom_hw_counters c = { 0 };
	unsigned i;

	for (i = 0; i < d.count; i++)
		payloads[i] = MEM_VA + 8 * i;
	m->payloads = payloads;
	m->npayloads = d.count;
	build_channel_fork(&fbuf);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, loom_fabric_run(f, &d, &env, &c));
	for (i = 0; i < d.count; i++) {
		CHECK_EQ(x, fake_get64(m, payloads[i]));
		CHECK_EQ(1, fake_writes(m, payloads[i]));
		CHECK_EQ(FORK_K, fake_get64(m, payloads[i] + 0x1000));
		CHECK_EQ(1, fake_writes(m, payloads[i] + 0x1000));
	}
	CHECK_EQ(2 * 8 * d.count, fake_bytes_written(m));
	CHECK_EQ(d.count, c.items);
	/* two tokens per item over each link, and the turns keep it near */
	CHECK(c.cycles >= 2 * d.count);
	CHECK(c.cycles <= 2 * d.count + 16);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * A hog and a late comer on one link: on a 3x1 fabric, (0,0) repeats the
 * W operand 200 times into (1,0), which passes it on as channel 0 of its
 * E link to the completion port E of (2,0); (1,0)'s slot 1 repeats the N
 * operand (a VA) 5 times as channel 1 of the same link, which (2,0)
 * stores to.  The hog is ready every cycle and comes first in the source
 * order; the turns rotate, so the late comer's tokens get through within
 * a few cycles rather than after the hog's 200.
 */
TEST(channels_turns_are_fair)
{
	struct loom_fabric *f = fabric(3, 1, 1, 1);
	struct fake_mem *m = new_mem();
	uint64_t ops[2] = { 7, MEM_VA };
	struct loom_hw_counters c;
	unsigned i;

	fb_init(&fbuf, 3, 1);
	fb_slots(&fbuf, 2);
	fbuf.hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	fb_port(&fbuf, LOOM_DIR_W, 0, LOOM_PORT_OPERAND, 0);
	fb_port(&fbuf, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 1);
	fb_port(&fbuf, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_port(&fbuf, LOOM_DIR_S, 2, LOOM_PORT_COMPLETION, 0);
	fb_pe(&fbuf, 0, 0, LOOM_OP_INVARIANT, I64, IMM_B, 200);
	fb_route(&fbuf, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(&fbuf, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_slot_route(&fbuf, 1, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	fb_slot_pe(&fbuf, 1, 0, 1, LOOM_OP_INVARIANT, I64, IMM_B, 5);
	fb_slot_route(&fbuf, 1, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_slot_route(&fbuf, 1, 0, 1, LOOM_OUT_E, LOOM_SRC_PE);
	fb_slot_route(&fbuf, 2, 0, 0, LOOM_OUT_E, LOOM_SRC_W);
	fb_slot_pe(&fbuf, 2, 0, 1, LOOM_OP_STORE, I64, IMM_B, 0x99);
	fb_slot_route(&fbuf, 2, 0, 1, LOOM_OUT_PE_A, CHAN(W, 1));
	fb_slot_route(&fbuf, 2, 0, 1, LOOM_OUT_S, LOOM_SRC_PE);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 2, 0, NULL, &c));
	CHECK(c.cycles >= 205);
	CHECK_EQ(0x99, fake_get64(m, MEM_VA));
	REQUIRE_EQ(5, m->nlog);
	for (i = 0; i < m->nlog; i++)
		CHECK(m->log[i].progress < 30);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * The snake of multi_hop_latency with 4 slots, its links set in slots 3,
 * 2 and 1: version 2 reads them as LOOM_SRC_*, version 3 as the channels
 * of those numbers.  Every link has one channel: the same cycles.
 */
static void build_snake_channels(struct fb *b, bool channels)
{
	build_snake_slots(b, 4);
	fb_slot_route(b, 0, 1, 0, LOOM_OUT_S, LOOM_SRC_NONE);
	fb_slot_route(b, 0, 1, 3, LOOM_OUT_S, LOOM_SRC_N);
	fb_slot_route(b, 1, 2, 0, LOOM_OUT_N, LOOM_SRC_NONE);
	fb_slot_route(b, 1, 2, 2, LOOM_OUT_N, LOOM_SRC_W);
	fb_slot_route(b, 2, 1, 0, LOOM_OUT_W, LOOM_SRC_NONE);
	fb_slot_route(b, 2, 1, 1, LOOM_OUT_W, LOOM_SRC_SLOT(0));
	if (!channels)
		return;
	b->hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	fb_route(b, 0, 2, LOOM_OUT_E, CHAN(N, 3));
	fb_route(b, 1, 1, LOOM_OUT_E, CHAN(S, 2));
	fb_route(b, 1, 1, LOOM_OUT_N, CHAN(E, 1));
}

TEST(channels_one_per_link_run_as_version2)
{
	struct loom_fabric *f = fabric4();
	struct fake_mem *m = new_mem();
	uint64_t va = MEM_VA + 64;
	int64_t n = 7;
	struct loom_hw_counters c2, c3;
	struct dump d2, d3;

	build_snake_channels(&fbuf, false);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c2));
	m->nlog = 0;
	m->stop_after = 3;
	CHECK_EQ(LOOM_STATUS_STOPPED, run_dense(f, m, &va, 1, 1, &n, &c2));
	take_dump(f, &d2);
	m->stop_after = 0;
	m->stop = 0;
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c2));

	build_snake_channels(&fbuf, true);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	m->nlog = 0;
	m->stop_after = 3;
	CHECK_EQ(LOOM_STATUS_STOPPED, run_dense(f, m, &va, 1, 1, &n, &c3));
	take_dump(f, &d3);
	m->stop_after = 0;
	m->stop = 0;
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, &va, 1, 1, &n, &c3));
	CHECK_EQ(c2.cycles, c3.cycles);
	CHECK_EQ(n, c3.firings);
	CHECK_EQ(0x1234, fake_get64(m, va));
	CHECK_EQ(3 * n + 2 * 3, fake_writes(m, va));
	CHECK(!memcmp(d2.t, d3.t, 16 * sizeof(d2.t[0])));
	/* the version-2 image read with channels wired apart: nothing arrives */
	build_snake_channels(&fbuf, false);
	fbuf.hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run_dense(f, m, &va, 1, 1, &n, &c3));
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * The largest layout: 16x16 tiles of LOOM_PE_SLOTS slots, and the last
 * tile's W link in every slot, each channel read by a SINK of (14,15).
 * ASan watches the buffers at the end of the pool.
 */
TEST(channels_largest_layout)
{
	const unsigned d = LOOM_FABRIC_MAX_DIM;
	struct loom_fabric *f = fabric(d, d, 1, 1);
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c;
	int64_t n = 9;
	unsigned k;

	REQUIRE(f);
	fb_init(&fbuf, d, d);
	fb_slots(&fbuf, LOOM_PE_SLOTS);
	fbuf.hdr.version = LOOM_CONFIG_VERSION_CHANNELS;
	fb_port(&fbuf, LOOM_DIR_E, d - 1, LOOM_PORT_CTRL, 0);
	for (k = 0; k < LOOM_PE_SLOTS; k++) {
		fb_slot_route(&fbuf, d - 1, d - 1, k, LOOM_OUT_W, LOOM_SRC_E);
		fb_slot_pe(&fbuf, d - 2, d - 1, k, LOOM_OP_SINK, I64, 0, 0);
		fb_slot_route(&fbuf, d - 2, d - 1, k, LOOM_OUT_PE_A,
			      LOOM_SRC_CHAN(LOOM_DIR_E, k));
	}
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, NULL, 0, 1, &n, &c));
	CHECK_EQ(LOOM_PE_SLOTS * n, c.firings);
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * A CONST with LOOM_TILE_IMM_OPERAND yields the dispatch's operand imm:
 * (0,0) CONST operand 2, triggered by the coordinate from W, feeds the
 * value of (1,0)'s STORE, whose VA is operand 0 from N.
 */
TEST(const_reads_an_operand)
{
	struct loom_fabric *f = fabric(2, 1, 1, 1);
	struct fake_mem *m = new_mem();
	uint64_t ops[3] = { MEM_VA, 0, 0xfeedf00d12345678ULL };
	int64_t n = 3;
	struct loom_hw_counters c;

	fb_init(&fbuf, 2, 1);
	fb_port(&fbuf, LOOM_DIR_W, 0, LOOM_PORT_COORD, 0);
	fb_port(&fbuf, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_port(&fbuf, LOOM_DIR_E, 0, LOOM_PORT_COMPLETION, 0);
	fb_pe(&fbuf, 0, 0, LOOM_OP_CONST, I64, LOOM_TILE_IMM_OPERAND, 2);
	fb_route(&fbuf, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(&fbuf, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(&fbuf, 1, 0, LOOM_OP_STORE, I64, 0, 0);
	fb_route(&fbuf, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(&fbuf, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(&fbuf, 1, 0, LOOM_OUT_E, LOOM_SRC_PE);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 3, 1, &n, &c));
	CHECK_EQ(0xfeedf00d12345678ULL, fake_get64(m, MEM_VA));
	CHECK_EQ(3, fake_writes(m, MEM_VA));
	/* an i32 CONST sign-extends the operand's low 32 bits */
	fb_pe(&fbuf, 0, 0, LOOM_OP_CONST, I32, LOOM_TILE_IMM_OPERAND, 2);
	REQUIRE_EQ(LOOM_CONFIG_OK, configure(f, &fbuf));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, ops, 3, 1, &n, &c));
	CHECK_EQ(0x12345678, fake_get64(m, MEM_VA));
	/* operand 2 not supplied: refused before anything runs */
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, run_dense(f, m, ops, 2, 1, &n, &c));
	CHECK_EQ(0, c.cycles);
	CHECK_EQ(6, fake_writes(m, MEM_VA));
	free_mem(m);
	loom_fabric_destroy(f);
}

/*
 * The largest geometry the device accepts: a 16x16 fabric, a configuration
 * of LOOM_PE_SLOTS slots per PE and LOOM_MAX_PORTS port bindings
 * (configs.h).  Every port queue, the last binding's included, must lie
 * inside the fabric's buffer pool: ASan watches the injections.
 */
TEST(largest_geometry_every_port)
{
	const unsigned d = LOOM_FABRIC_MAX_DIM;
	struct loom_fabric *f = fabric(d, d, LOOM_DEFAULT_MEM_PORTS,
				       LOOM_DEFAULT_LOAD_LATENCY);
	size_t len = loom_test_config_every_port(image, sizeof(image), d, d,
						 LOOM_PE_SLOTS);
	struct fake_mem *m = new_mem();
	struct dump *dp = malloc(sizeof(*dp));
	struct loom_hw_counters c;
	int64_t n = 9;

	REQUIRE(f && dp);
	REQUIRE_EQ(LOOM_CONFIG_SIZE(d * d * LOOM_PE_SLOTS, LOOM_MAX_PORTS), len);
	REQUIRE_EQ(LOOM_CONFIG_OK, loom_fabric_configure(f, image, len));
	CHECK_EQ(LOOM_STATUS_OK, run_dense(f, m, NULL, 0, 1, &n, &c));
	CHECK_EQ(n, c.instances);
	CHECK_EQ(LOOM_MAX_PORTS * n, c.firings);
	take_dump(f, dp);
	CHECK_EQ(d, dp->h.width);
	CHECK_EQ(d, dp->h.height);
	CHECK_EQ(2 * n, tile(dp, d - 1, d - 1)->firings);	/* S and E */
	free(dp);
	free_mem(m);
	loom_fabric_destroy(f);
}

/* Every fabric size the device accepts, every edge link a port. */
TEST(every_geometry_every_port)
{
	struct fake_mem *m = new_mem();
	struct loom_hw_counters c;
	int64_t n = 3;

	for (unsigned w = 1; w <= LOOM_FABRIC_MAX_DIM; w++) {
		for (unsigned h = 1; h <= LOOM_FABRIC_MAX_DIM; h++) {
			struct loom_fabric *f = fabric(w, h, 1, 1);
			size_t len = loom_test_config_every_port(image,
					sizeof(image), w, h, 4 + (w + h) % 5);

			REQUIRE(f && len);
			CHECK_EQ(LOOM_CONFIG_OK,
				 loom_fabric_configure(f, image, len));
			CHECK_EQ(LOOM_STATUS_OK,
				 run_dense(f, m, NULL, 0, 1, &n, &c));
			CHECK_EQ(2 * (w + h) * n, c.firings);
			loom_fabric_destroy(f);
		}
	}
	free_mem(m);
}

int main(void)
{
	RUN(create_params);
	RUN(run_without_config);
	RUN(configure_errors);
	RUN(configure_header_errors);
	RUN(multi_hop_latency);
	RUN(fork);
	RUN(mem_port_limit);
	RUN(room_is_judged_at_cycle_start);
	RUN(fork_all_or_nothing);
	RUN(stream_load_reduce_backpressure);
	RUN(invariant_stream_reduce);
	RUN(empty_sequences_emit_init);
	RUN(deadlock_dump);
	RUN(deadlock_blocked_output);
	RUN(load_latency);
	RUN(i32_load_sign_extends);
	RUN(callback_error_ends_run);
	RUN(single_ops);
	RUN(atomic_kinds);
	RUN(atomic_instances_in_flight);
	RUN(atomic_faults);
	RUN(atomic_waits_for_both_inputs);
	RUN(dense_ranks);
	RUN(dense_zero_extents);
	RUN(dense_blocks_partition_the_domain);
	RUN(dense_bad_blocks_are_refused);
	RUN(determinism);
	RUN(determinism_same_fabric);
	RUN(port_dispatch_mismatch);
	RUN(item_spawn_order);
	RUN(items_pipelined_spawns_carry_their_item);
	RUN(items_payload_fault_ends_the_dispatch);
	RUN(child_overflow);
	RUN(stopped);
	RUN(vector_add);
	RUN(tree_spawner_bfs);
	RUN(slots_share_one_pe);
	RUN(slots_fire_round_robin);
	RUN(one_slot_runs_as_spatial);
	RUN(reconfigure_between_slot_layouts);
	RUN(slot_configure_errors);
	RUN(channels_configure_errors);
	RUN(channels_carry_two_values_over_one_link);
	RUN(channels_share_the_link_bandwidth);
	RUN(channels_dump_sums_a_link);
	RUN(channels_fork_over_shared_links);
	RUN(channels_turns_are_fair);
	RUN(channels_one_per_link_run_as_version2);
	RUN(channels_largest_layout);
	RUN(const_reads_an_operand);
	RUN(largest_geometry_every_port);
	RUN(every_geometry_every_port);
	return checks_done();
}
