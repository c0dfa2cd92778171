// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The deadlock proof: configurations built by hand, each run on the
 * engine as well, so that what the check refuses does deadlock there (the
 * rules are not vacuous) and what it accepts completes.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "deadlock.h"
#include "engine.h"

/* A 2x1 fabric of 8 slots, the ctrl port on tile 0's west edge. */
static void cfg_init(struct placement *p)
{
	memset(p, 0, sizeof(*p));
	p->width = 2;
	p->height = 1;
	p->slots = LOOM_PE_SLOTS;
	p->ports[0] = (struct loom_port_binding){
		.side = LOOM_DIR_W, .pos = 0, .kind = LOOM_PORT_CTRL,
	};
	p->num_ports = 1;
}

static struct loom_tile_config *slot(struct placement *p, int t, int k)
{
	return &p->tiles[t * p->slots + k];
}

static void op(struct placement *p, int k, unsigned o, uint64_t imm,
	       uint8_t a, uint8_t b, uint8_t c)
{
	struct loom_tile_config *tc = slot(p, 0, k);

	tc->op = o;
	tc->type = LOOM_TYPE_I64;
	tc->imm = imm;
	tc->route[LOOM_OUT_PE_A] = a;
	tc->route[LOOM_OUT_PE_B] = b;
	tc->route[LOOM_OUT_PE_C] = c;
}

#define S(k)	LOOM_SRC_SLOT(k)
#define NONE	LOOM_SRC_NONE

/*
 * A loop of @n iterations: s0 CONST 0, s1 CONST n, s2 STREAM(s0, 1, s1),
 * s3 REDUCE ADD(s0, s1, s2), s4 SINK(s3).
 */
static void loop_cfg(struct placement *p, uint64_t n)
{
	cfg_init(p);
	op(p, 0, LOOM_OP_CONST, 0, LOOM_SRC_W, NONE, NONE);
	op(p, 1, LOOM_OP_CONST, n, LOOM_SRC_W, NONE, NONE);
	op(p, 2, LOOM_OP_STREAM, 1, S(0), NONE, S(1));
	slot(p, 0, 2)->flags = LOOM_TILE_IMM_B;
	op(p, 3, LOOM_OP_REDUCE, LOOM_OP_ADD, S(0), S(1), S(2));
	op(p, 4, LOOM_OP_SINK, 0, S(3), NONE, NONE);
}

/* Runs @p for @instances instances on the engine: its status. */
static int run(const struct placement *p, int64_t instances)
{
	struct loom_fabric_params fp = {
		.width = p->width, .height = p->height,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	struct loom_fabric *f = loom_fabric_create(&fp);
	struct loom_fabric_env env = { 0 };
	struct loom_dispatch d = { .rank = 1, .extents = &instances };
	size_t size = place_config_size(p);
	void *img = malloc(size);
	int st = -1;

	if (!f || !img)
		abort();
	place_config_write(p, img);
	if (loom_fabric_configure(f, img, size) == LOOM_CONFIG_OK)
		st = loom_fabric_run(f, &d, &env, NULL);
	free(img);
	loom_fabric_destroy(f);
	return st;
}

static int check(const struct placement *p, const char *want)
{
	char why[160];
	int rc = deadlock_check(p, why, sizeof(why));

	if (rc && (!want || !strstr(why, want))) {
		printf("#   refused: %s\n", why);
		return -2;	/* for another reason than the one wanted */
	}
	if (!rc && want)
		printf("#   accepted, wanted a refusal: %s\n", want);
	return rc;
}

TEST(loop_with_reduce_is_accepted_and_completes)
{
	struct placement p;

	loop_cfg(&p, 20);
	CHECK_EQ(0, check(&p, NULL));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 1));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 7));
	/* an empty loop: REDUCE gives its init, the STREAM nothing */
	loop_cfg(&p, 0);
	CHECK_EQ(0, check(&p, NULL));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 3));
}

/* The syrk_row repro's bug: a CONST that triggers itself. */
TEST(self_triggered_const_is_refused)
{
	struct placement p;

	loop_cfg(&p, 20);
	slot(&p, 0, 1)->route[LOOM_OUT_PE_A] = S(1);
	CHECK_EQ(-1, check(&p, "its values form a cycle"));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run(&p, 1));
	/* and an input left unfed */
	loop_cfg(&p, 20);
	slot(&p, 0, 1)->route[LOOM_OUT_PE_A] = NONE;
	CHECK_EQ(-1, check(&p, "input A is never fed"));
}

/* A second REDUCE of the same loop whose init is the first's result. */
TEST(reduce_waiting_on_its_own_loop_is_refused)
{
	struct placement p;

	loop_cfg(&p, 20);
	op(&p, 5, LOOM_OP_REDUCE, LOOM_OP_ADD, S(3), S(1), S(2));
	slot(&p, 0, 4)->route[LOOM_OUT_PE_A] = S(5);
	CHECK_EQ(-1, check(&p, "waits on a reduction of its own loop"));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run(&p, 1));
	/* the same with 3 iterations fits the buffers: the check is
	   conservative, it does not count on buffer depths */
	loop_cfg(&p, 3);
	op(&p, 5, LOOM_OP_REDUCE, LOOM_OP_ADD, S(3), S(1), S(2));
	slot(&p, 0, 4)->route[LOOM_OUT_PE_A] = S(5);
	CHECK_EQ(-1, check(&p, "waits on a reduction"));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 1));
}

/* Two loops of the same count, one after the other, are two loops. */
TEST(sequential_loops_of_one_count_are_accepted)
{
	struct placement p;

	loop_cfg(&p, 20);
	/* s5 STREAM(s3, 1, s1): the second loop starts from the sum */
	op(&p, 5, LOOM_OP_STREAM, 1, S(3), NONE, S(1));
	slot(&p, 0, 5)->flags = LOOM_TILE_IMM_B;
	op(&p, 6, LOOM_OP_REDUCE, LOOM_OP_ADD, S(3), S(1), S(5));
	slot(&p, 0, 4)->route[LOOM_OUT_PE_A] = S(6);
	CHECK_EQ(0, check(&p, NULL));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 2));
	/* but a value of the first loop meeting one of the second is not */
	op(&p, 7, LOOM_OP_ADD, 0, S(2), S(5), NONE);
	op(&p, 6, LOOM_OP_REDUCE, LOOM_OP_ADD, S(3), S(1), S(7));
	CHECK_EQ(-1, check(&p, "waits on a reduction of its own loop"));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run(&p, 1));
}

TEST(rates_that_differ_are_refused)
{
	struct placement p;

	loop_cfg(&p, 20);
	/* the sum, once per instance, added to the stream, per iteration */
	op(&p, 5, LOOM_OP_ADD, 0, S(2), S(0), NONE);
	op(&p, 6, LOOM_OP_SINK, 0, S(5), NONE, NONE);
	CHECK_EQ(-1, check(&p, "different rates"));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run(&p, 1));
	/* a REDUCE folding a loop whose count is not its own */
	loop_cfg(&p, 20);
	op(&p, 5, LOOM_OP_CONST, 19, LOOM_SRC_W, NONE, NONE);
	slot(&p, 0, 3)->route[LOOM_OUT_PE_B] = S(5);
	CHECK_EQ(-1, check(&p, "another loop"));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run(&p, 1));
}

TEST(tokens_nobody_takes_are_refused)
{
	struct placement p;

	loop_cfg(&p, 4);
	slot(&p, 0, 4)->op = LOOM_OP_NOP;
	slot(&p, 0, 4)->route[LOOM_OUT_PE_A] = NONE;
	CHECK_EQ(-1, check(&p, "never read"));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, run(&p, 1));
	/* an input routed to an operation that does not take it */
	loop_cfg(&p, 4);
	slot(&p, 0, 4)->route[LOOM_OUT_PE_B] = S(0);
	CHECK_EQ(-1, check(&p, "fed but never consumed"));
	/* a link nobody reads */
	loop_cfg(&p, 4);
	slot(&p, 0, 0)->route[LOOM_OUT_E] = S(1);
	CHECK_EQ(-1, check(&p, "written and never read"));
	/* the link read on the next tile: accepted, and it completes */
	op(&p, 5, LOOM_OP_NOP, 0, NONE, NONE, NONE);
	slot(&p, 1, 0)->op = LOOM_OP_SINK;
	slot(&p, 1, 0)->route[LOOM_OUT_PE_A] = LOOM_SRC_W;
	CHECK_EQ(0, check(&p, NULL));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 2));
}

TEST(routes_that_loop_are_refused)
{
	struct placement p;

	loop_cfg(&p, 4);
	/* tile 0's east link from tile 1's west one, and back */
	slot(&p, 0, 0)->route[LOOM_OUT_E] = LOOM_SRC_E;
	slot(&p, 1, 0)->route[LOOM_OUT_W] = LOOM_SRC_W;
	slot(&p, 0, 4)->route[LOOM_OUT_PE_A] = LOOM_SRC_E;
	op(&p, 5, LOOM_OP_SINK, 0, S(3), NONE, NONE);
	CHECK_EQ(-1, check(&p, "loops through the links"));
}

/*
 * Links of channels: tile 0 sends the loop's sum and its CONST 0 east on
 * channels 0 and 1 of one link, tile 1 adds them.  Accepted (and it
 * completes) with channels; the same link set in two slots without them,
 * a channel nobody sets or reads, a channel of an edge link and a channel
 * source in a configuration without channels are refused.
 */
static void channels_cfg(struct placement *p)
{
	loop_cfg(p, 4);
	p->channels = true;
	op(p, 4, LOOM_OP_NOP, 0, NONE, NONE, NONE);
	slot(p, 0, 0)->route[LOOM_OUT_E] = S(3);
	slot(p, 0, 1)->route[LOOM_OUT_E] = S(0);
	slot(p, 1, 0)->op = LOOM_OP_ADD;
	slot(p, 1, 0)->route[LOOM_OUT_PE_A] = LOOM_SRC_CHAN(LOOM_DIR_W, 0);
	slot(p, 1, 0)->route[LOOM_OUT_PE_B] = LOOM_SRC_CHAN(LOOM_DIR_W, 1);
	slot(p, 1, 1)->op = LOOM_OP_SINK;
	slot(p, 1, 1)->route[LOOM_OUT_PE_A] = S(0);
}

TEST(link_channels_are_traced)
{
	struct placement p;

	channels_cfg(&p);
	CHECK_EQ(0, check(&p, NULL));
	CHECK_EQ(LOOM_STATUS_OK, run(&p, 3));
	/* a link of one channel set in two slots */
	p.channels = false;
	slot(&p, 1, 0)->route[LOOM_OUT_PE_A] = LOOM_SRC_W;
	slot(&p, 1, 0)->route[LOOM_OUT_PE_B] = LOOM_SRC_W;
	CHECK_EQ(-1, check(&p, "in two slots"));
	/* a channel source without channels */
	channels_cfg(&p);
	p.channels = false;
	slot(&p, 0, 1)->route[LOOM_OUT_E] = NONE;
	CHECK_EQ(-1, check(&p, "does not exist"));
	/* a channel nobody sets */
	channels_cfg(&p);
	slot(&p, 1, 0)->route[LOOM_OUT_PE_B] = LOOM_SRC_CHAN(LOOM_DIR_W, 2);
	CHECK_EQ(-1, check(&p, "does not feed"));
	/* a channel nobody reads */
	channels_cfg(&p);
	slot(&p, 1, 0)->route[LOOM_OUT_PE_B] = LOOM_SRC_CHAN(LOOM_DIR_W, 0);
	CHECK_EQ(-1, check(&p, "written and never read"));
	/* channel 1 of the edge, where the ctrl port has channel 0 only */
	channels_cfg(&p);
	slot(&p, 0, 0)->route[LOOM_OUT_PE_A] = LOOM_SRC_CHAN(LOOM_DIR_W, 1);
	CHECK_EQ(-1, check(&p, "channel 0 only"));
}

int main(void)
{
	RUN(loop_with_reduce_is_accepted_and_completes);
	RUN(self_triggered_const_is_refused);
	RUN(reduce_waiting_on_its_own_loop_is_refused);
	RUN(sequential_loops_of_one_count_are_accepted);
	RUN(rates_that_differ_are_refused);
	RUN(tokens_nobody_takes_are_refused);
	RUN(routes_that_loop_are_refused);
	RUN(link_channels_are_traced);
	return checks_done();
}
