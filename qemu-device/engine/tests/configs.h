/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * configs.h: hand-built fabric configurations shared by host tests and
 * benchmarks.  Each builder writes an image into @buf and returns its size,
 * or 0 when @size is too small or the fabric is smaller than 4 x 4 (the
 * graphs use the north-west 4 x 4 tiles and ports on the N and W edges
 * only, so any larger fabric works too).
 */
#ifndef LOOM_TEST_CONFIGS_H
#define LOOM_TEST_CONFIGS_H

#include "fabric_build.h"

/*
 * Vector add, c[i] = a[i] + b[i] over i64 elements, for a dense rank-1
 * dispatch over i in [0, n).
 *
 * Ports: operand 0 = a_va (N edge, x = 1), operand 1 = b_va (N, x = 2),
 * operand 2 = c_va (N, x = 3), coordinate 0 = i (W edge, y = 0).
 *
 *   (0,0) SHL imm 3: off = i << 3        -> E
 *   (1,0) ADD a_va + off -> S; forwards off E
 *   (2,0) ADD b_va + off -> S; forwards off E
 *   (3,0) ADD c_va + off -> S
 *   (1,1) LOAD a[i] -> S        (2,1) LOAD b[i] -> S    (3,1) passes S
 *   (1,2) passes a[i] E         (2,2) ADD -> E          (3,2) STORE -> S
 *   (3,3) SINK (the STOREs' done tokens)
 */
static inline size_t loom_test_config_vector_add(void *buf, size_t size,
						 unsigned width,
						 unsigned height)
{
	struct fb *b;
	unsigned x;
	size_t n;

	if (width < 4 || height < 4 || width > LOOM_FABRIC_MAX_DIM ||
	    height > LOOM_FABRIC_MAX_DIM)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return 0;
	fb_init(b, width, height);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_COORD, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 2, LOOM_PORT_OPERAND, 1);
	fb_port(b, LOOM_DIR_N, 3, LOOM_PORT_OPERAND, 2);

	fb_pe(b, 0, 0, LOOM_OP_SHL, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 3);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	for (x = 1; x < 4; x++) {
		fb_pe(b, x, 0, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
		fb_route(b, x, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
		fb_route(b, x, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
		fb_route(b, x, 0, LOOM_OUT_S, LOOM_SRC_PE);
		if (x < 3)
			fb_route(b, x, 0, LOOM_OUT_E, LOOM_SRC_W);
	}
	for (x = 1; x < 3; x++) {
		fb_pe(b, x, 1, LOOM_OP_LOAD, LOOM_TYPE_I64, 0, 0);
		fb_route(b, x, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
		fb_route(b, x, 1, LOOM_OUT_S, LOOM_SRC_PE);
	}
	fb_route(b, 3, 1, LOOM_OUT_S, LOOM_SRC_N);

	fb_route(b, 1, 2, LOOM_OUT_E, LOOM_SRC_N);
	fb_pe(b, 2, 2, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 2, 2, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 2, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 2, 2, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 3, 2, LOOM_OP_STORE, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 3, 2, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 3, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 3, 3, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 3, LOOM_OUT_PE_A, LOOM_SRC_N);

	n = fb_image(b, buf, size);
	free(b);
	return n;
}

/*
 * Tree-child spawner, for an items dispatch: the payload is a node index n;
 * operand 0 = child_table_va, where node n's first child index is the i64
 * at table + n * 16 and its child count the i64 at table + n * 16 + 8.
 * Spawns first_child, first_child + 1, ... (count children) in order: one
 * STREAM feeds one SPAWN PE, which fires in stream order.
 *
 * Ports: payload (N edge, x = 0), operand 0 (N edge, x = 1).
 *
 *   (0,0) SHL imm 4: n * 16 -> E
 *   (1,0) ADD table + n * 16 = p -> S and E
 *   (2,0) ADD p + imm 8 -> S
 *   (1,1) LOAD first -> S       (2,1) LOAD count -> S
 *   (1,2) passes first E        (2,2) STREAM(first, imm 1, count) -> S
 *   (2,3) SPAWN -> E            (3,3) SINK
 */
static inline size_t loom_test_config_tree_spawner(void *buf, size_t size,
						   unsigned width,
						   unsigned height)
{
	struct fb *b;
	unsigned x;
	size_t n;

	if (width < 4 || height < 4 || width > LOOM_FABRIC_MAX_DIM ||
	    height > LOOM_FABRIC_MAX_DIM)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return 0;
	fb_init(b, width, height);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_PAYLOAD, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);

	fb_pe(b, 0, 0, LOOM_OP_SHL, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 4);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 1, 0, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_route(b, 1, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 2, 0, LOOM_OP_ADD, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 8);
	fb_route(b, 2, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 0, LOOM_OUT_S, LOOM_SRC_PE);

	for (x = 1; x < 3; x++) {
		fb_pe(b, x, 1, LOOM_OP_LOAD, LOOM_TYPE_I64, 0, 0);
		fb_route(b, x, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
		fb_route(b, x, 1, LOOM_OUT_S, LOOM_SRC_PE);
	}
	fb_route(b, 1, 2, LOOM_OUT_E, LOOM_SRC_N);
	fb_pe(b, 2, 2, LOOM_OP_STREAM, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 1);
	fb_route(b, 2, 2, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 2, LOOM_OUT_PE_C, LOOM_SRC_N);
	fb_route(b, 2, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 2, 3, LOOM_OP_SPAWN, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 2, 3, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 2, 3, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 3, 3, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 3, LOOM_OUT_PE_A, LOOM_SRC_W);

	n = fb_image(b, buf, size);
	free(b);
	return n;
}

/*
 * Tree marker: the tree-child spawner that also marks each item in a
 * buffer, for an items dispatch.  Operand 0 = child_table_va as for the
 * spawner; operand 2 = out_va (operand 1 is the work item's argument
 * slot): item n stores the i64 out_va + n * 8 -- its cell's own address,
 * as the device running it sees it -- at out_va + n * 8.
 *
 * Ports: payload (N edge, x = 0), operand 0 (N, x = 1), operand 2 (N, x = 3).
 *
 *   (0,0) SHL imm 4: n * 16 -> E; passes n S
 *   (0,1) SHL imm 3: n * 8 -> E, passed E by (1,1) and (2,1)
 *   (3,0) passes out_va S       (3,1) ADD out_va + n * 8 -> S
 *   (3,2) STORE (that address, itself) -> S
 *   (3,3) SINK (the STORE's done)   (1,3) SINK (the SPAWN's, sent W)
 *   the rest as in the spawner.
 */
static inline size_t loom_test_config_tree_marker(void *buf, size_t size,
						  unsigned width,
						  unsigned height)
{
	struct fb *b;
	unsigned x;
	size_t n;

	if (width < 4 || height < 4 || width > LOOM_FABRIC_MAX_DIM ||
	    height > LOOM_FABRIC_MAX_DIM)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return 0;
	fb_init(b, width, height);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_PAYLOAD, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 3, LOOM_PORT_OPERAND, 2);

	fb_pe(b, 0, 0, LOOM_OP_SHL, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 4);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_route(b, 0, 0, LOOM_OUT_S, LOOM_SRC_N);
	fb_pe(b, 0, 1, LOOM_OP_SHL, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 3);
	fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 1, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 1, 0, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_route(b, 1, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 2, 0, LOOM_OP_ADD, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 8);
	fb_route(b, 2, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_route(b, 3, 0, LOOM_OUT_S, LOOM_SRC_N);

	for (x = 1; x < 3; x++) {
		fb_pe(b, x, 1, LOOM_OP_LOAD, LOOM_TYPE_I64, 0, 0);
		fb_route(b, x, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
		fb_route(b, x, 1, LOOM_OUT_S, LOOM_SRC_PE);
		fb_route(b, x, 1, LOOM_OUT_E, LOOM_SRC_W);
	}
	fb_pe(b, 3, 1, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 3, 1, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 3, 1, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 3, 2, LOOM_OP_STORE, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 3, 2, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 3, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 3, 3, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 3, LOOM_OUT_PE_A, LOOM_SRC_N);

	fb_route(b, 1, 2, LOOM_OUT_E, LOOM_SRC_N);
	fb_pe(b, 2, 2, LOOM_OP_STREAM, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 1);
	fb_route(b, 2, 2, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 2, LOOM_OUT_PE_C, LOOM_SRC_N);
	fb_route(b, 2, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 2, 3, LOOM_OP_SPAWN, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 2, 3, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 2, 3, LOOM_OUT_W, LOOM_SRC_PE);
	fb_pe(b, 1, 3, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 3, LOOM_OUT_PE_A, LOOM_SRC_E);

	n = fb_image(b, buf, size);
	free(b);
	return n;
}

/*
 * A job that appends to an ordered log: it loads *counter, stores the old
 * value at its own log slot and stores old + 1 back.  Run in dependency
 * order, job i logs i; any reordering shows.  Operands: 0 = counter VA,
 * 1 = this job's log slot VA.  Rank 0.
 */
static inline size_t loom_test_config_counter(void *buf, size_t size,
					      unsigned width,
					      unsigned height)
{
	struct fb *b;
	size_t n;

	if (width < 4 || height < 4 || width > LOOM_FABRIC_MAX_DIM ||
	    height > LOOM_FABRIC_MAX_DIM)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return 0;
	fb_init(b, width, height);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 2, LOOM_PORT_OPERAND, 1);
	fb_port(b, LOOM_DIR_W, 2, LOOM_PORT_OPERAND, 0);
	/* (1,0) LOAD counter -> S and E */
	fb_pe(b, 1, 0, LOOM_OP_LOAD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_route(b, 1, 0, LOOM_OUT_E, LOOM_SRC_PE);
	/* (2,0) STORE log <- old; done -> (2,1) SINK */
	fb_pe(b, 2, 0, LOOM_OP_STORE, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 2, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 2, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 2, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 2, 1, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 2, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	/* (1,1) ADD 1 -> S */
	fb_pe(b, 1, 1, LOOM_OP_ADD, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 1);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 1, LOOM_OUT_S, LOOM_SRC_PE);
	/* (0,2) forwards the counter VA east; (1,2) STORE counter <- old + 1 */
	fb_route(b, 0, 2, LOOM_OUT_E, LOOM_SRC_W);
	fb_pe(b, 1, 2, LOOM_OP_STORE, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 2, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 2, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 1, 2, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 3, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 3, LOOM_OUT_PE_A, LOOM_SRC_N);
	n = fb_image(b, buf, size);
	free(b);
	return n;
}

/*
 * Atomic counter, dense: every instance adds coordinate 0 + 1 to the i64
 * at operand 0 with one ATOMIC ADDI, so n instances leave n (n + 1) / 2
 * there whatever their order and whichever cores run them.
 *
 * Ports: coordinate 0 (W edge, y = 0), operand 0 (N edge, x = 1).
 *
 *   (0,0) ADD imm 1: i + 1 -> E
 *   (1,0) ATOMIC ADDI A = counter VA, B = i + 1 -> S
 *   (1,1) SINK (the old values)
 */
static inline size_t loom_test_config_atomic_counter(void *buf, size_t size,
						     unsigned width,
						     unsigned height)
{
	struct fb *b;
	size_t n;

	if (width < 4 || height < 4 || width > LOOM_FABRIC_MAX_DIM ||
	    height > LOOM_FABRIC_MAX_DIM)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return 0;
	fb_init(b, width, height);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_COORD, 0);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_pe(b, 0, 0, LOOM_OP_ADD, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 1);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_E, LOOM_SRC_PE);
	fb_pe(b, 1, 0, LOOM_OP_ATOMIC, LOOM_TYPE_I64, 0, LOOM_ATOMIC_ADDI);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 1, 1, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	n = fb_image(b, buf, size);
	free(b);
	return n;
}

/*
 * A tree for loom_test_config_tree_spawner's table: @n nodes numbered
 * breadth-first, node k's children first[k] .. first[k] + count[k] - 1,
 * an irregular fanout of 0..@max_fanout from @seed, every node reachable.
 */
static inline void loom_test_tree_gen(int64_t *first, int64_t *count, int64_t n,
				      unsigned max_fanout, uint32_t seed)
{
	uint32_t x = seed;
	int64_t next = 1;

	for (int64_t k = 0; k < n; k++) {
		int64_t c;

		x = x * 1103515245u + 12345u;
		c = (x >> 16) % (max_fanout + 1);
		if (c == 0 && next == k + 1)
			c = 1;	/* k is the last node numbered: keep going */
		if (c > n - next)
			c = n - next;
		first[k] = c ? next : 0;
		count[k] = c;
		next += c;
	}
}

/*
 * Every edge link an input port: a LOOM_PORT_CTRL binding at each edge
 * position (2 * width + 2 * height of them: LOOM_MAX_PORTS on the largest
 * fabric), each token consumed by a SINK in its edge tile, in slot 0 for
 * the north edge, 1 south, 2 east and 3 west (a corner or a one-tile-wide
 * fabric holds several).  A version-2 image of @slots per PE, 4 to
 * LOOM_PE_SLOTS, any fabric size; 0 when @size is too small.  A dense
 * dispatch of n instances makes 2 * (width + height) * n firings.
 */
static inline size_t loom_test_config_every_port(void *buf, size_t size,
						 unsigned width,
						 unsigned height,
						 unsigned slots)
{
	static const unsigned src[4] = {
		LOOM_SRC_N, LOOM_SRC_E, LOOM_SRC_S, LOOM_SRC_W,
	};
	static const unsigned slot[4] = { 0, 2, 1, 3 };	/* by enum loom_dir */
	struct fb *b;
	size_t n;

	if (width < 1 || height < 1 || width > LOOM_FABRIC_MAX_DIM ||
	    height > LOOM_FABRIC_MAX_DIM || slots < 4 || slots > LOOM_PE_SLOTS)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return 0;
	fb_init(b, width, height);
	fb_slots(b, slots);
	for (unsigned side = LOOM_DIR_N; side <= LOOM_DIR_W; side++) {
		unsigned len = side == LOOM_DIR_N || side == LOOM_DIR_S ?
			       width : height;

		for (unsigned pos = 0; pos < len; pos++) {
			unsigned x = side == LOOM_DIR_E ? width - 1 :
				     side == LOOM_DIR_W ? 0 : pos;
			unsigned y = side == LOOM_DIR_S ? height - 1 :
				     side == LOOM_DIR_N ? 0 : pos;

			fb_port(b, side, pos, LOOM_PORT_CTRL, 0);
			fb_slot_pe(b, x, y, slot[side], LOOM_OP_SINK,
				   LOOM_TYPE_I64, 0, 0);
			fb_slot_route(b, x, y, slot[side], LOOM_OUT_PE_A,
				      src[side]);
		}
	}
	n = fb_image(b, buf, size);
	free(b);
	return n;
}

#endif /* LOOM_TEST_CONFIGS_H */
