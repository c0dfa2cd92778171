// SPDX-License-Identifier: GPL-2.0
/*
 * launch_vm_test: libloom's device side against the real driver and
 * device.  Images are built with the builder from hand-built
 * configurations; dense launches of rank 0..3 are checked cell by cell,
 * an empty domain is ordered after its dependency and touches nothing, a
 * negative extent never reaches the driver, typed errors, all-of waits,
 * io_uring completions, and two devices at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "configs.h"
#include "drm/loom_drm.h"
#include "loom/loom.h"
#include "loom_format.h"
#include "image_util.h"
#include "loom_device.h"

#define SEC	1000000000LL

/*
 * Rank 0: *out = value.  Operand 0 = out VA (N edge, x = 1), operand 1 =
 * value (N, x = 2).  (1,0) STORE A = N, B = E; (2,0) passes N west;
 * (1,1) SINK.
 */
static size_t store_config(void *buf, size_t size, unsigned w, unsigned h)
{
	struct fb *b = malloc(sizeof(*b));
	size_t n;

	if (!b)
		return 0;
	fb_init(b, w, h);
	fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0);
	fb_port(b, LOOM_DIR_N, 2, LOOM_PORT_OPERAND, 1);
	fb_pe(b, 1, 0, LOOM_OP_STORE, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 1, 0, LOOM_OUT_PE_B, LOOM_SRC_E);
	fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_route(b, 2, 0, LOOM_OUT_W, LOOM_SRC_N);
	fb_pe(b, 1, 1, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 1, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	n = fb_image(b, buf, size);
	free(b);
	return n;
}

/*
 * Rank 2 or 3: out[lin] = lin with lin = (c0 * e1 + c1) [* e2 + c2].
 * Coordinates on the W edge (c0 y = 0, c1 y = 1, c2 y = 3); operands on
 * the N edge: 0 = out VA (x = 2), 1 = e1 (x = 0), 2 = e2 (x = 1, rank 3).
 *
 *   (0,0) MUL c0 * e1 -> S         (0,1) ADD + c1 -> S
 *   (0,2) rank 3: MUL * e2 (e2 comes down column 1, then W) -> S
 *   (0,3) rank 3: ADD + c2 -> E; rank 2: passes N to E
 *   (1,3) SHL 3 -> E, and lin N  (1,2) lin E   (2,2) lin E  (3,2) lin S, SINK
 *   (2,3) ADD out + off -> E     (3,3) STORE -> N
 */
static size_t lin_config(void *buf, size_t size, unsigned w, unsigned h,
			 unsigned rank)
{
	struct fb *b = malloc(sizeof(*b));
	size_t n;

	if (!b)
		return 0;
	fb_init(b, w, h);
	fb_port(b, LOOM_DIR_W, 0, LOOM_PORT_COORD, 0);
	fb_port(b, LOOM_DIR_W, 1, LOOM_PORT_COORD, 1);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_OPERAND, 1);
	fb_port(b, LOOM_DIR_N, 2, LOOM_PORT_OPERAND, 0);
	fb_pe(b, 0, 0, LOOM_OP_MUL, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 0, 0, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 0, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 0, 1, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 1, LOOM_OUT_PE_B, LOOM_SRC_W);
	fb_route(b, 0, 1, LOOM_OUT_S, LOOM_SRC_PE);
	if (rank == 3) {
		fb_port(b, LOOM_DIR_W, 3, LOOM_PORT_COORD, 2);
		fb_port(b, LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 2);
		fb_route(b, 1, 0, LOOM_OUT_S, LOOM_SRC_N);
		fb_route(b, 1, 1, LOOM_OUT_S, LOOM_SRC_N);
		fb_route(b, 1, 2, LOOM_OUT_W, LOOM_SRC_N);
		fb_pe(b, 0, 2, LOOM_OP_MUL, LOOM_TYPE_I64, 0, 0);
		fb_route(b, 0, 2, LOOM_OUT_PE_A, LOOM_SRC_N);
		fb_route(b, 0, 2, LOOM_OUT_PE_B, LOOM_SRC_E);
		fb_route(b, 0, 2, LOOM_OUT_S, LOOM_SRC_PE);
		fb_pe(b, 0, 3, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
		fb_route(b, 0, 3, LOOM_OUT_PE_A, LOOM_SRC_N);
		fb_route(b, 0, 3, LOOM_OUT_PE_B, LOOM_SRC_W);
		fb_route(b, 0, 3, LOOM_OUT_E, LOOM_SRC_PE);
	} else {
		fb_route(b, 0, 2, LOOM_OUT_S, LOOM_SRC_N);
		fb_route(b, 0, 3, LOOM_OUT_E, LOOM_SRC_N);
	}
	fb_pe(b, 1, 3, LOOM_OP_SHL, LOOM_TYPE_I64, LOOM_TILE_IMM_B, 3);
	fb_route(b, 1, 3, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 1, 3, LOOM_OUT_N, LOOM_SRC_W);
	fb_route(b, 1, 3, LOOM_OUT_E, LOOM_SRC_PE);
	fb_route(b, 1, 2, LOOM_OUT_E, LOOM_SRC_S);
	fb_route(b, 2, 2, LOOM_OUT_E, LOOM_SRC_W);
	fb_route(b, 2, 0, LOOM_OUT_S, LOOM_SRC_N);
	fb_route(b, 2, 1, LOOM_OUT_S, LOOM_SRC_N);
	fb_route(b, 2, 2, LOOM_OUT_S, LOOM_SRC_N);
	fb_pe(b, 2, 3, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 2, 3, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 2, 3, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 2, 3, LOOM_OUT_E, LOOM_SRC_PE);
	fb_route(b, 3, 2, LOOM_OUT_S, LOOM_SRC_W);
	fb_pe(b, 3, 2, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 2, LOOM_OUT_PE_A, LOOM_SRC_S);
	fb_pe(b, 3, 3, LOOM_OP_STORE, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 3, 3, LOOM_OUT_PE_A, LOOM_SRC_W);
	fb_route(b, 3, 3, LOOM_OUT_PE_B, LOOM_SRC_N);
	fb_route(b, 3, 3, LOOM_OUT_N, LOOM_SRC_PE);
	n = fb_image(b, buf, size);
	free(b);
	return n;
}

static const enum loom_arg_type vadd_sig[3] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64 };
static const enum loom_arg_type store_sig[2] = { LOOM_ARG_MEMREF_I64, LOOM_ARG_I64 };
static const enum loom_arg_type lin2_sig[2] = { LOOM_ARG_MEMREF_I64, LOOM_ARG_INDEX };
static const enum loom_arg_type lin3_sig[3] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_INDEX, LOOM_ARG_INDEX };

/* The test image for a device's fabric: vadd, store, lin2, lin3. */
static struct loom_image *test_image(const struct loom_device_info *info)
{
	static unsigned char cfg[4][16384];
	size_t n[4];
	struct loom_image_builder *b;
	unsigned w = info->fabric_width, h = info->fabric_height;

	n[0] = loom_test_config_vector_add(cfg[0], sizeof(cfg[0]), w, h);
	n[1] = store_config(cfg[1], sizeof(cfg[1]), w, h);
	n[2] = lin_config(cfg[2], sizeof(cfg[2]), w, h, 2);
	n[3] = lin_config(cfg[3], sizeof(cfg[3]), w, h, 3);
	if (loom_builder_new(w, h, &b))
		return NULL;
	return loom_test_load_built(b,
		!loom_builder_add_dense(b, "vadd", 1, vadd_sig, 3, cfg[0], n[0]) &&
		!loom_builder_add_dense(b, "store", 0, store_sig, 2, cfg[1], n[1]) &&
		!loom_builder_add_dense(b, "lin2", 2, lin2_sig, 2, cfg[2], n[2]) &&
		!loom_builder_add_dense(b, "lin3", 3, lin3_sig, 3, cfg[3], n[3]));
}

FIXTURE(dev) {
	struct loom_device *dev;
	struct loom_image *img;
	struct loom_bo *data;
	int64_t *mem;
	uint64_t va;
};

#define DATA_SIZE	(4 << 20)

FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, loom_device_open_first(&self->dev));
	self->img = test_image(loom_device_info(self->dev));
	ASSERT_NE(NULL, self->img);
	ASSERT_EQ(0, loom_bo_alloc(self->dev, DATA_SIZE, 0, &self->data));
	self->mem = loom_bo_map(self->data);
	self->va = loom_bo_va(self->data);
	memset(self->mem, 0xff, DATA_SIZE);
}

FIXTURE_TEARDOWN(dev)
{
	loom_bo_free(self->data);
	loom_image_free(self->img);
	loom_device_close(self->dev);
}

#define ARG(t, v) ((struct loom_arg){ LOOM_ARG_##t, (uint64_t)(v) })

/* vadd over n: a at word 0, b at word A_B, c at word A_C. */
#define A_B	(1 << 17)
#define A_C	(2 << 17)

static void vadd_args(FIXTURE_DATA(dev) *self, struct loom_arg *a, uint64_t c_off)
{
	a[0] = ARG(MEMREF_I64, self->va);
	a[1] = ARG(MEMREF_I64, self->va + A_B * 8);
	a[2] = ARG(MEMREF_I64, self->va + c_off * 8);
}

TEST_F(dev, info_is_sane)
{
	const struct loom_device_info *i = loom_device_info(self->dev);

	EXPECT_LE(3, i->uapi_version);
	EXPECT_LE(1, i->num_cores);
	EXPECT_LE(4, i->fabric_width);
	EXPECT_LE(3, i->max_rank);
	EXPECT_NE(0, i->features & 1);
	EXPECT_LE(0, loom_device_fd(self->dev));
	EXPECT_EQ(0, strncmp(i->path, i->features & DRM_LOOM_FEATURE_ACCEL_NODE ?
			     "/dev/accel/accel" : "/dev/dri/renderD", 16));
}

TEST_F(dev, rank0_one_instance)
{
	struct loom_arg a[2] = { ARG(MEMREF_I64, self->va + 8), ARG(I64, 0x1234) };
	struct loom_token *t;
	struct loom_hw_counters c;

	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", a, 2, NULL, 0, NULL, 0, 0, &t));
	ASSERT_EQ(0, loom_token_wait(t, 10 * SEC));
	EXPECT_EQ(0x1234, self->mem[1]);
	EXPECT_EQ(-1, self->mem[0]);
	EXPECT_EQ(-1, self->mem[2]);
	ASSERT_EQ(0, loom_token_counters(t, &c));
	EXPECT_EQ(1, c.instances);
	EXPECT_EQ(1, loom_token_done(t));
	loom_token_free(t);
}

TEST_F(dev, rank1_vector_add)
{
	struct loom_arg a[3];
	int64_t n = 100;
	struct loom_token *t;
	uint64_t sub, done;
	struct timespec now;

	for (int i = 0; i < n; i++) {
		self->mem[i] = i;
		self->mem[A_B + i] = 1000 * i;
	}
	vadd_args(self, a, A_C);
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "vadd", a, 3, &n, 1, NULL, 0, 1, &t));
	ASSERT_EQ(0, loom_token_wait(t, 10 * SEC));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(1001 * i, self->mem[A_C + i]);
	EXPECT_EQ(-1, self->mem[A_C + n]);
	/* submitted, then signalled: both CLOCK_MONOTONIC, in order */
	ASSERT_EQ(0, loom_token_times(t, &sub, &done));
	clock_gettime(CLOCK_MONOTONIC, &now);
	EXPECT_LT(0, sub);
	EXPECT_LE(sub, done);
	EXPECT_GE(now.tv_sec * 1000000000ULL + now.tv_nsec, done);
	EXPECT_EQ(-EINVAL, loom_token_times(t, NULL, &done));
	loom_token_free(t);
}

/* Every cell of [0, e0) x ... written with its own linear index, once. */
static void check_lin(struct __test_metadata *_metadata, FIXTURE_DATA(dev) *self,
		      struct loom_token *t, int64_t total)
{
	struct loom_hw_counters c;

	ASSERT_EQ(0, loom_token_wait(t, 20 * SEC));
	for (int64_t i = 0; i < total; i++)
		ASSERT_EQ(i, self->mem[i]);
	EXPECT_EQ(-1, self->mem[total]);
	ASSERT_EQ(0, loom_token_counters(t, &c));
	EXPECT_EQ(total, c.instances);
	EXPECT_EQ(total, c.mem_writes);
}

TEST_F(dev, rank2_every_cell_once)
{
	int64_t e[2] = { 5, 7 };
	struct loom_arg a[2] = { ARG(MEMREF_I64, self->va), ARG(INDEX, e[1]) };
	struct loom_token *t;

	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "lin2", a, 2, e, 2, NULL, 0, 0, &t));
	check_lin(_metadata, self, t, 35);
	loom_token_free(t);
}

TEST_F(dev, rank3_every_cell_once)
{
	int64_t e[3] = { 3, 4, 5 };
	struct loom_arg a[3] = { ARG(MEMREF_I64, self->va), ARG(INDEX, e[1]), ARG(INDEX, e[2]) };
	struct loom_token *t;

	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "lin3", a, 3, e, 3, NULL, 0, 0, &t));
	check_lin(_metadata, self, t, 60);
	loom_token_free(t);
}

/*
 * Every launch is a dispatch with an occurrence libloom minted (spec §2.3):
 * non-zero, growing in launch order, by ioctl and through a ring, also for
 * an empty domain and for two launches of the same thread with the same
 * arguments.
 */
TEST_F(dev, every_launch_mints_its_occurrence)
{
	struct loom_arg a[2] = { ARG(MEMREF_I64, self->va + 8), ARG(I64, 7) };
	struct loom_arg va[3];
	int64_t zero = 0;
	struct loom_token *t[5];
	struct loom_ring *ring;

	vadd_args(self, va, A_C);
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", a, 2, NULL, 0, NULL, 0, 0, &t[0]));
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", a, 2, NULL, 0, NULL, 0, 0, &t[1]));
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "vadd", va, 3, &zero, 1, NULL, 0, 0, &t[2]));
	ASSERT_EQ(0, loom_ring_create(self->dev, 4, &ring));
	ASSERT_EQ(0, loom_ring_launch_dense(ring, self->img, "store", a, 2, NULL, 0, NULL, 0, 0, 1, &t[3]));
	EXPECT_NE(0, loom_token_occurrence(t[0]));
	for (int i = 1; i < 4; i++)
		EXPECT_LT(loom_token_occurrence(t[i - 1]), loom_token_occurrence(t[i]));
	/* a rejected launch mints nothing: the next one is the next value */
	EXPECT_EQ(LOOM_E_NEGATIVE_EXTENT, loom_launch_dense(self->dev, self->img, "vadd", va, 3,
			(int64_t[]){ -1 }, 1, NULL, 0, 0, &t[4]));
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", a, 2, NULL, 0, NULL, 0, 0, &t[4]));
	EXPECT_EQ(loom_token_occurrence(t[3]) + 1, loom_token_occurrence(t[4]));
	ASSERT_EQ(0, loom_token_wait_all(t, 5, 10 * SEC));
	EXPECT_EQ(7, self->mem[1]);
	loom_ring_destroy(ring);
	for (int i = 0; i < 5; i++)
		loom_token_free(t[i]);
}

/*
 * B_thread on one device: one rank-3 launch over every core, each core
 * running its block of dimension 0; every cell written once, each part's
 * counters the cells of the block loom_launch_placement() names, and the
 * collective counters their sum with the longest part's cycles.
 */
TEST_F(dev, spread_over_the_cores_every_cell_once)
{
	int64_t e[3] = { 7, 4, 5 };
	struct loom_arg a[3] = { ARG(MEMREF_I64, self->va), ARG(INDEX, e[1]), ARG(INDEX, e[2]) };
	struct loom_launch l = loom_launch_dense_of("lin3", a, 3, e, 3, NULL, 0, 0);
	struct loom_device *devs[1] = { self->dev };
	unsigned cores = loom_device_info(self->dev)->num_cores;
	struct loom_hw_counters c, pc;
	uint64_t max_cycles = 0, sum = 0;
	struct loom_token *t;

	ASSERT_EQ(0, loom_launch_spread(devs, 1, self->img, &l, &t));
	check_lin(_metadata, self, t, 7 * 4 * 5);
	ASSERT_EQ(cores < 7 ? cores : 7, loom_token_num_parts(t));
	EXPECT_EQ(NULL, loom_token_part(t, loom_token_num_parts(t)));
	for (unsigned i = 0; i < loom_token_num_parts(t); i++) {
		struct loom_token *p = loom_token_part(t, i);
		int64_t pt[3] = { 0, 3, 4 };
		struct loom_part where;

		ASSERT_NE(NULL, p);
		ASSERT_EQ(1, loom_token_done(p));
		/* one dispatch: every part is of the launch's one occurrence */
		EXPECT_EQ(loom_token_occurrence(t), loom_token_occurrence(p));
		ASSERT_EQ(0, loom_token_counters(p, &pc));
		/* the block's first row is this part's */
		pt[0] = (int64_t)(i * 7 / cores);
		ASSERT_EQ(0, loom_launch_placement(devs, 1, e, 3, pt, &where));
		EXPECT_EQ(0, where.device);
		EXPECT_EQ(i, where.queue);
		EXPECT_EQ((where.end - where.begin) * 20, pc.instances);
		sum += pc.instances;
		max_cycles = pc.cycles > max_cycles ? pc.cycles : max_cycles;
	}
	EXPECT_EQ(140, sum);
	EXPECT_NE(0, loom_token_occurrence(t));
	ASSERT_EQ(0, loom_token_counters(t, &c));
	EXPECT_EQ(max_cycles, c.cycles);
	if (loom_token_num_parts(t) > 1)
		EXPECT_EQ(0, loom_token_job_id(t));
	loom_token_free(t);
}

/* Rank 0 and empty domains are one part, device 0's core 0, as before. */
TEST_F(dev, spread_of_one_instance_and_of_none)
{
	struct loom_arg a[2] = { ARG(MEMREF_I64, self->va + 8), ARG(I64, 0x77) };
	struct loom_launch one = loom_launch_dense_of("store", a, 2, NULL, 0, NULL, 0, 0);
	int64_t e[2] = { 6, 0 };
	struct loom_arg b[2] = { ARG(MEMREF_I64, self->va), ARG(INDEX, 0) };
	struct loom_launch none = loom_launch_dense_of("lin2", b, 2, e, 2, NULL, 0, 0);
	struct loom_device *devs[1] = { self->dev };
	struct loom_hw_counters c;
	struct loom_token *t;

	ASSERT_EQ(0, loom_launch_spread(devs, 1, self->img, &one, &t));
	ASSERT_EQ(0, loom_token_wait(t, 10 * SEC));
	EXPECT_EQ(1, loom_token_num_parts(t));
	EXPECT_EQ(t, loom_token_part(t, 0));
	ASSERT_EQ(0, loom_token_counters(t, &c));
	EXPECT_EQ(1, c.instances);
	EXPECT_EQ(0x77, self->mem[1]);
	EXPECT_EQ(-1, self->mem[0]);
	loom_token_free(t);

	ASSERT_EQ(0, loom_launch_spread(devs, 1, self->img, &none, &t));
	ASSERT_EQ(0, loom_token_wait(t, 10 * SEC));
	ASSERT_EQ(0, loom_token_counters(t, &c));
	EXPECT_EQ(0, c.instances);
	EXPECT_EQ(-1, self->mem[0]);
	loom_token_free(t);
	/* a negative extent is refused before anything runs */
	e[1] = -1;
	EXPECT_EQ(LOOM_E_NEGATIVE_EXTENT, loom_launch_spread(devs, 1, self->img, &none, &t));
}

/*
 * A launch made from a registered site (spec §2.3) carries its ref on
 * its token, by ioctl and through a ring; one made without has none.
 */
TEST_F(dev, launch_site_rides_the_token)
{
	struct loom_arg a[2] = { ARG(MEMREF_I64, self->va + 8), ARG(I64, 9) };
	struct loom_launch l = loom_launch_dense_of("store", a, 2, NULL, 0,
						    NULL, 0, 0);
	struct loom_launch_ref site, got;
	struct loom_token *t[3];
	struct loom_ring *ring;

	ASSERT_EQ(0, loom_launch_site_register(self->img, "store", "vm.store", &site));
	l.site = &site;
	ASSERT_EQ(0, loom_launch(self->dev, self->img, &l, &t[0]));
	ASSERT_EQ(0, loom_ring_create(self->dev, 4, &ring));
	ASSERT_EQ(0, loom_ring_launch(ring, self->img, &l, 1, &t[1]));
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", a, 2, NULL, 0, NULL, 0, 0, &t[2]));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, loom_token_launch(t[i], &got));
		EXPECT_TRUE(loom_launch_ref_equal(&site, &got));
	}
	EXPECT_EQ(-ENOENT, loom_token_launch(t[2], &got));
	ASSERT_EQ(0, loom_token_wait_all(t, 3, 10 * SEC));
	EXPECT_EQ(9, self->mem[1]);
	loom_ring_destroy(ring);
	for (int i = 0; i < 3; i++)
		loom_token_free(t[i]);
}

/*
 * A (a long vector add) then empty B depending on A: B is never done
 * while A is not, and B writes nothing.
 */
TEST_F(dev, empty_domain_waits_for_its_dependency)
{
	struct loom_arg a[3], b[3] = { ARG(MEMREF_I64, self->va + 8 * 100),
				       ARG(MEMREF_I64, self->va + 8 * 100),
				       ARG(MEMREF_I64, self->va + 8 * 100) };
	int64_t n = 20000, e[3] = { 4, 0, 4 };
	struct loom_token *ta, *tb;
	struct loom_hw_counters c;

	vadd_args(self, a, A_C);
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "vadd", a, 3, &n, 1, NULL, 0, 0, &ta));
	/* on the other queue, so only the dependency orders it */
	b[1] = ARG(INDEX, 4);
	b[2] = ARG(INDEX, 4);
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "lin3", b, 3, e, 3, &ta, 1, 1, &tb));
	/* B read first: A may finish between the two reads, never B before A */
	for (int i = 0; i < 1000; i++) {
		int b_done = loom_token_done(tb);

		if (b_done)
			ASSERT_EQ(1, loom_token_done(ta));
		if (b_done)
			break;
	}
	ASSERT_EQ(0, loom_token_wait(tb, 30 * SEC));
	EXPECT_EQ(1, loom_token_done(ta));
	EXPECT_EQ(0, loom_token_wait(ta, 0));
	EXPECT_EQ(-1, self->mem[100]);
	ASSERT_EQ(0, loom_token_counters(tb, &c));
	EXPECT_EQ(0, c.instances);
	EXPECT_EQ(0, c.mem_writes);
	loom_token_free(tb);
	loom_token_free(ta);
}

/* Writes core @core's register @reg of @dev's PCI function (sysfs BAR0). */
static int poke_core(struct loom_device *dev, unsigned core, uint32_t reg, uint32_t val)
{
	const struct loom_device_info *info = loom_device_info(dev);
	const char *node = strrchr(info->path, '/') + 1;
	volatile uint32_t *bar;
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/sys/class/%s/%s/device/resource0",
		 info->features & DRM_LOOM_FEATURE_ACCEL_NODE ? "accel" : "drm", node);
	fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	bar = mmap(NULL, LOOM_BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (bar == MAP_FAILED)
		return -errno;
	bar[(LOOM_CORE_BASE(core) + reg) / 4] = val;
	munmap((void *)bar, LOOM_BAR0_SIZE);
	return 0;
}

/*
 * The same ordering, made certain: A hangs (an injected device hang) until
 * the driver's hang recovery fails it after its deadline, so B provably
 * waits while A is unfinished, and completes afterwards without running.
 */
TEST_F(dev, empty_domain_waits_for_a_hung_dependency)
{
	struct loom_arg a[3], b[3] = { ARG(MEMREF_I64, self->va + 8 * 100),
				       ARG(INDEX, 4), ARG(INDEX, 4) };
	int64_t n = 8, e[3] = { 0, 4, 4 };
	struct loom_token *ta, *tb;
	struct loom_hw_counters c;

	vadd_args(self, a, A_C);
	ASSERT_EQ(0, poke_core(self->dev, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG));
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "vadd", a, 3, &n, 1, NULL, 0, 0, &ta));
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "lin3", b, 3, e, 3, &ta, 1, 1, &tb));
	usleep(500 * 1000);
	EXPECT_EQ(0, loom_token_done(ta));
	EXPECT_EQ(0, loom_token_done(tb));
	EXPECT_EQ(0, loom_token_wait(tb, 30 * SEC));
	EXPECT_EQ(-ETIMEDOUT, loom_token_wait(ta, 0));
	EXPECT_EQ(-1, self->mem[100]);
	ASSERT_EQ(0, loom_token_counters(tb, &c));
	EXPECT_EQ(0, c.instances);
	EXPECT_EQ(0, c.mem_writes);
	loom_token_free(tb);
	loom_token_free(ta);
}

/* Rejected launches: typed errors, no job was created, nothing written. */
TEST_F(dev, rejections_submit_nothing)
{
	struct loom_arg a[3] = { ARG(MEMREF_I64, self->va), ARG(INDEX, 4), ARG(INDEX, 4) };
	struct loom_arg wrong[3] = { ARG(MEMREF_I64, self->va), ARG(I32, 4), ARG(INDEX, 4) };
	int64_t neg[3] = { 2, -3, 2 }, ok[3] = { 1, 1, 1 };
	struct loom_token *t0, *t = NULL;
	uint64_t first;

	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "lin3", a, 3, ok, 3, NULL, 0, 0, &t0));
	ASSERT_EQ(0, loom_token_wait(t0, 10 * SEC));
	first = loom_token_job_id(t0);
	self->mem[0] = -1;
	EXPECT_EQ(LOOM_E_NEGATIVE_EXTENT, loom_launch_dense(self->dev, self->img, "lin3", a, 3, neg, 3, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_EXTENT_COUNT, loom_launch_dense(self->dev, self->img, "lin3", a, 3, ok, 2, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_ARG_TYPE, loom_launch_dense(self->dev, self->img, "lin3", wrong, 3, ok, 3, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_ARG_COUNT, loom_launch_dense(self->dev, self->img, "lin3", a, 2, ok, 3, NULL, 0, 0, &t));
	EXPECT_EQ(LOOM_E_NO_THREAD, loom_launch_dense(self->dev, self->img, "nope", a, 3, ok, 3, NULL, 0, 0, &t));
	EXPECT_EQ(-EINVAL, loom_launch_dense(self->dev, self->img, "lin3", a, 3, ok, 3, NULL, 0, 99, &t));
	EXPECT_EQ(NULL, t);
	/* the next accepted launch is the very next job: nothing was queued */
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "lin3", a, 3, ok, 3, NULL, 0, 0, &t));
	EXPECT_EQ(first + 1, loom_token_job_id(t));
	ASSERT_EQ(0, loom_token_wait(t, 10 * SEC));
	EXPECT_EQ(0, self->mem[0]);
	EXPECT_EQ(-1, self->mem[1]);
	loom_token_free(t);
	loom_token_free(t0);
}

/* all-of: several tokens, and the first error in order wins */
TEST_F(dev, wait_all_and_job_errors)
{
	struct loom_token *t[4];
	struct loom_arg s[2];
	struct loom_arg bad[2] = { ARG(MEMREF_I64, 0x7000000000ULL), ARG(I64, 1) };

	for (int i = 0; i < 3; i++) {
		s[0] = ARG(MEMREF_I64, self->va + 8 * i);
		s[1] = ARG(I64, 10 + i);
		ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", s, 2, NULL, 0,
					       i ? &t[i - 1] : NULL, i ? 1 : 0, i % 2, &t[i]));
	}
	ASSERT_EQ(0, loom_token_wait_all(t, 3, 10 * SEC));
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(10 + i, self->mem[i]);
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", bad, 2, NULL, 0, NULL, 0, 0, &t[3]));
	EXPECT_EQ(-EFAULT, loom_token_wait_all(t, 4, 10 * SEC));
	EXPECT_EQ(-EFAULT, loom_token_wait(t[3], 0));
	for (int i = 0; i < 4; i++)
		loom_token_free(t[i]);
}

/*
 * More jobs than the driver keeps records of (LOOM_JOB_RECORDS, 256 per
 * file): a token waited for after its job's record was reused.
 */
#define PAST_RECORDS	300

/*
 * A job's error reaches its token whether the driver still has the job's
 * record (JOB_INFO: the token's wait reads it there) or not (then from
 * the job's fence): a failing job's token reports -EFAULT both ways, a
 * good job's 0.
 */
TEST_F(dev, job_error_with_and_without_its_record)
{
	struct loom_arg bad[2] = { ARG(MEMREF_I64, 0x7000000000ULL), ARG(I64, 1) }, good[2];
	struct loom_token *failed_now, *failed_long_ago, *good_long_ago, *last = NULL, *tok;
	struct loom_hw_counters c;

	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", bad, 2, NULL, 0, NULL, 0, 0,
				       &failed_now));
	EXPECT_EQ(-EFAULT, loom_token_wait(failed_now, 10 * SEC));
	/* read from the record, which JOB_INFO still has */
	EXPECT_EQ(0, loom_token_counters(failed_now, &c));

	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", bad, 2, NULL, 0, NULL, 0, 0,
				       &failed_long_ago));
	good[0] = ARG(MEMREF_I64, self->va);
	good[1] = ARG(I64, 0);
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", good, 2, NULL, 0, NULL, 0, 0,
				       &good_long_ago));
	for (unsigned i = 1; i <= PAST_RECORDS; i++) {
		good[0] = ARG(MEMREF_I64, self->va + 8 * i);
		good[1] = ARG(I64, i);
		ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store", good, 2, NULL, 0, NULL,
					       0, 0, &tok)) TH_LOG("launch %u", i);
		loom_token_free(last);
		last = tok;
	}
	ASSERT_EQ(0, loom_token_wait(last, 30 * SEC));
	/* the driver no longer knows these jobs: their fences tell */
	ASSERT_EQ(LOOM_E_JOB_EXPIRED, loom_token_counters(failed_long_ago, &c));
	ASSERT_EQ(LOOM_E_JOB_EXPIRED, loom_token_counters(good_long_ago, &c));
	EXPECT_EQ(-EFAULT, loom_token_wait(failed_long_ago, 10 * SEC));
	EXPECT_EQ(-EFAULT, loom_token_wait(failed_long_ago, 0));
	EXPECT_EQ(0, loom_token_wait(good_long_ago, 10 * SEC));
	EXPECT_EQ(0, self->mem[0]);
	EXPECT_EQ(PAST_RECORDS, self->mem[PAST_RECORDS]);
	loom_token_free(last);
	loom_token_free(good_long_ago);
	loom_token_free(failed_long_ago);
	loom_token_free(failed_now);
}

TEST_F(dev, io_uring_completions)
{
	struct loom_ring *ring;
	struct loom_token *tok[4] = { NULL };
	struct loom_completion c[8];
	int64_t e2[2] = { 2, 3 }, e1 = 16;
	struct loom_arg st[2] = { ARG(MEMREF_I64, self->va + 8 * 1000), ARG(I64, 77) };
	struct loom_arg l2[2] = { ARG(MEMREF_I64, self->va), ARG(INDEX, 3) };
	struct loom_arg va[3], bad[2] = { ARG(MEMREF_I64, 0x7000000000ULL), ARG(I64, 1) };
	unsigned seen = 0, got = 0;

	ASSERT_EQ(0, loom_ring_create(self->dev, 16, &ring));
	vadd_args(self, va, A_C);
	for (int i = 0; i < 16; i++) {
		self->mem[i] = i;
		self->mem[A_B + i] = i;
	}
	ASSERT_EQ(0, loom_ring_launch_dense(ring, self->img, "store", st, 2, NULL, 0, NULL, 0, 0, 100, &tok[0]));
	ASSERT_EQ(0, loom_ring_launch_dense(ring, self->img, "lin2", l2, 2, e2, 2, &tok[0], 1, 1, 101, &tok[1]));
	ASSERT_EQ(0, loom_ring_launch_dense(ring, self->img, "vadd", va, 3, &e1, 1, NULL, 0, 0, 102, NULL));
	ASSERT_EQ(0, loom_ring_launch_dense(ring, self->img, "store", bad, 2, NULL, 0, NULL, 0, 1, 103, &tok[2]));
	EXPECT_EQ(LOOM_E_NEGATIVE_EXTENT, loom_ring_launch_dense(ring, self->img, "vadd", va, 3,
			(int64_t[]){ -1 }, 1, NULL, 0, 0, 104, NULL));
	EXPECT_EQ(4, loom_ring_in_flight(ring));
	/* a ring token is a dependency of an ioctl launch, too */
	ASSERT_EQ(0, loom_launch_dense(self->dev, self->img, "store",
		(struct loom_arg[]){ ARG(MEMREF_I64, self->va + 8 * 1001), ARG(I64, 5) }, 2,
		NULL, 0, &tok[1], 1, 0, &tok[3]));
	/* a ring token is a syncobj: waiting on it reaps nothing */
	EXPECT_EQ(0, loom_token_wait(tok[1], 10 * SEC));
	while (got < 4) {
		int n = loom_ring_reap(ring, c, 8, true);

		ASSERT_LT(0, n);
		for (int i = 0; i < n; i++) {
			ASSERT_LE(100, c[i].user_data);
			ASSERT_GE(103, c[i].user_data);
			EXPECT_EQ(0, seen & (1u << (c[i].user_data - 100)));
			seen |= 1u << (c[i].user_data - 100);
			EXPECT_EQ(c[i].user_data == 103 ? -EFAULT : 0, c[i].res);
		}
		got += n;
	}
	EXPECT_EQ(0xf, seen);
	EXPECT_EQ(0, loom_ring_in_flight(ring));
	EXPECT_EQ(0, loom_ring_reap(ring, c, 8, true));
	EXPECT_EQ(0, loom_token_wait(tok[0], 0));
	EXPECT_EQ(-EFAULT, loom_token_wait(tok[2], 0));
	/* reaped, a ring launch has its job id: counters have one path */
	if (loom_device_info(self->dev)->features & DRM_LOOM_FEATURE_URING_JOB_ID) {
		struct loom_hw_counters cnt;

		EXPECT_NE(0, loom_token_job_id(tok[1]));
		ASSERT_EQ(0, loom_token_counters(tok[1], &cnt));
		EXPECT_EQ(6, cnt.instances);
	}
	EXPECT_EQ(0, loom_token_wait(tok[3], 10 * SEC));
	EXPECT_EQ(77, self->mem[1000]);
	EXPECT_EQ(5, self->mem[1001]);
	for (int i = 0; i < 6; i++)
		EXPECT_EQ(i, self->mem[i]);
	for (int i = 0; i < 16; i++)
		EXPECT_EQ(2 * i, self->mem[A_C + i]);
	for (int i = 0; i < 4; i++)
		loom_token_free(tok[i]);
	loom_ring_destroy(ring);
}

/*
 * Thousands of launches, each writing its own index through its own
 * command buffer: the command arenas wrap and reuse their entries many
 * times, and no job may run a command that a later launch overwrote.
 * By ioctl on both queues (every token freed at once: the arena keeps
 * what it needs), then through a ring with a token every 64th launch.
 */
#define MANY	3000

/*
 * 6000 launches: a few seconds on Debian's kernels, more than the harness's
 * default 30 s on the debug lane's (KASAN, lockdep) under TCG.
 */
TEST_F_TIMEOUT(dev, command_arenas_are_reused_safely, 180)
{
	unsigned queues = loom_device_info(self->dev)->num_cores > 1 ? 2 : 1;
	struct loom_token *last[2] = { NULL, NULL }, *tok;
	struct loom_completion c[64];
	struct loom_ring *ring;
	unsigned got = 0;

	for (unsigned i = 0; i < MANY; i++) {
		struct loom_arg a[2] = { ARG(MEMREF_I64, self->va + 8 * i), ARG(I64, i) };
		struct loom_launch l = { .kind = LOOM_LAUNCH_DENSE, .thread = "store",
					 .args = a, .n_args = 2, .queue = i % queues };

		ASSERT_EQ(0, loom_launch(self->dev, self->img, &l, &tok)) TH_LOG("launch %u", i);
		loom_token_free(last[i % queues]);
		last[i % queues] = tok;
	}
	for (unsigned q = 0; q < queues; q++) {
		ASSERT_EQ(0, loom_token_wait(last[q], 30 * SEC));
		loom_token_free(last[q]);
	}
	for (unsigned i = 0; i < MANY; i++) {
		ASSERT_EQ(i, self->mem[i]) TH_LOG("slot %u", i);
	}

	ASSERT_EQ(0, loom_ring_create(self->dev, 16, &ring));
	for (unsigned i = 0; i < MANY; i++) {
		struct loom_arg a[2] = { ARG(MEMREF_I64, self->va + 8 * (MANY + i)),
					 ARG(I64, 2 * i) };
		struct loom_launch l = { .kind = LOOM_LAUNCH_DENSE, .thread = "store",
					 .args = a, .n_args = 2, .queue = i % queues };

		tok = NULL;
		ASSERT_EQ(0, loom_ring_launch(ring, self->img, &l, i, i % 64 ? NULL : &tok));
		if (tok) {
			EXPECT_EQ(0, loom_token_wait(tok, 30 * SEC));
			loom_token_free(tok);
		}
		/* reap now and then: completions wait in the ring meanwhile */
		if (i % 128 == 127 || i == MANY - 1) {
			while (loom_ring_in_flight(ring) > (i == MANY - 1 ? 0 : 32)) {
				int n = loom_ring_reap(ring, c, 64, true);

				ASSERT_LT(0, n);
				for (int k = 0; k < n; k++)
					EXPECT_EQ(0, c[k].res);
				got += n;
			}
		}
	}
	EXPECT_EQ(MANY, got);
	loom_ring_destroy(ring);
	for (unsigned i = 0; i < MANY; i++) {
		ASSERT_EQ(2 * i, self->mem[MANY + i]) TH_LOG("ring slot %u", i);
	}
}

/* LOOM_DEVICE names the devices: only those, in its order. */
TEST(loom_device_names_the_devices)
{
	struct loom_device *d[4];
	char second[32], list[80];
	int n = loom_device_open_all(d, 4);

	if (n < 2) {
		for (int i = 0; i < n; i++)
			loom_device_close(d[i]);
		SKIP(return, "needs two loom devices (got %d)", n);
	}
	snprintf(second, sizeof(second), "%s", loom_device_info(d[1])->path);
	snprintf(list, sizeof(list), "%s,%s", second, loom_device_info(d[0])->path);
	for (int i = 0; i < n; i++)
		loom_device_close(d[i]);

	ASSERT_EQ(0, setenv("LOOM_DEVICE", second, 1));
	ASSERT_EQ(1, loom_device_open_all(d, 4));
	EXPECT_STREQ(second, loom_device_info(d[0])->path);
	loom_device_close(d[0]);
	EXPECT_EQ(LOOM_E_NO_DEVICE, loom_device_open_nth(1, &d[0]));

	ASSERT_EQ(0, setenv("LOOM_DEVICE", list, 1));
	ASSERT_EQ(2, loom_device_open_all(d, 4));
	EXPECT_STREQ(second, loom_device_info(d[0])->path);
	loom_device_close(d[0]);
	loom_device_close(d[1]);

	/* A path that is not a loom node is no device, not some other one. */
	ASSERT_EQ(0, setenv("LOOM_DEVICE", "/dev/null", 1));
	EXPECT_EQ(LOOM_E_NO_DEVICE, loom_device_open_first(&d[0]));
	unsetenv("LOOM_DEVICE");
}

/* Two devices at once: the same image launched on both. */
TEST(two_devices)
{
	struct loom_device *d[4];
	struct loom_image *img[2];
	struct loom_bo *bo[2];
	struct loom_token *t[2];
	int n = loom_device_open_all(d, 4);
	int64_t e = 8;

	if (n < 2) {
		for (int i = 0; i < n; i++)
			loom_device_close(d[i]);
		SKIP(return, "needs two loom devices (got %d)", n);
	}
	EXPECT_NE(0, strcmp(loom_device_info(d[0])->path, loom_device_info(d[1])->path));
	for (int i = 0; i < 2; i++) {
		int64_t *m;
		struct loom_arg a[3];

		img[i] = test_image(loom_device_info(d[i]));
		ASSERT_NE(NULL, img[i]);
		ASSERT_EQ(0, loom_bo_alloc(d[i], 3 * 4096, 0, &bo[i]));
		m = loom_bo_map(bo[i]);
		for (int k = 0; k < 8; k++) {
			m[k] = k * (i + 1);
			m[512 + k] = 100;
		}
		a[0] = ARG(MEMREF_I64, loom_bo_va(bo[i]));
		a[1] = ARG(MEMREF_I64, loom_bo_va(bo[i]) + 4096);
		a[2] = ARG(MEMREF_I64, loom_bo_va(bo[i]) + 8192);
		ASSERT_EQ(0, loom_launch_dense(d[i], img[i], "vadd", a, 3, &e, 1, NULL, 0, 0, &t[i]));
	}
	/* a token of one device cannot order a launch on the other */
	EXPECT_EQ(LOOM_E_FOREIGN_TOKEN, loom_launch_dense(d[1], img[1], "vadd",
		(struct loom_arg[]){ ARG(MEMREF_I64, 0), ARG(MEMREF_I64, 0), ARG(MEMREF_I64, 0) }, 3,
		&e, 1, &t[0], 1, 0, &t[1]));
	EXPECT_EQ(0, loom_token_wait_all(t, 2, 10 * SEC));
	for (int i = 0; i < 2; i++) {
		int64_t *m = loom_bo_map(bo[i]);

		for (int k = 0; k < 8; k++)
			EXPECT_EQ(k * (i + 1) + 100, m[1024 + k]);
		loom_token_free(t[i]);
		loom_bo_free(bo[i]);
		loom_image_free(img[i]);
	}
	for (int i = 0; i < n; i++)
		loom_device_close(d[i]);
}

/*
 * B_thread over two devices: one rank-2 launch over both devices' cores,
 * after a dependency that runs on the second device.  Each device's
 * buffer (the same VA on both) holds exactly the rows
 * loom_launch_placement() gives its cores, every row on exactly one
 * device, and the collective token completes after the dependency.
 */
TEST(spread_over_two_devices)
{
	struct loom_device *d[4];
	struct loom_image *img[2];
	struct loom_bo *bo[2], *vbo;
	struct loom_token *dep, *t;
	int n = loom_device_open_all(d, 4);
	int64_t e[2] = { 11, 6 }, big = 50000;
	struct loom_hw_counters c;
	unsigned parts = 0;

	if (n < 2) {
		for (int i = 0; i < n; i++)
			loom_device_close(d[i]);
		SKIP(return, "needs two loom devices (got %d)", n);
	}
	for (int i = 0; i < 2; i++) {
		img[i] = test_image(loom_device_info(d[i]));
		ASSERT_NE(NULL, img[i]);
		ASSERT_EQ(0, loom_bo_alloc(d[i], 4096, 0, &bo[i]));
		memset(loom_bo_map(bo[i]), 0xff, 4096);
		parts += loom_device_info(d[i])->num_cores;
	}
	/* fresh address spaces allocate alike: one VA names both buffers */
	ASSERT_EQ(loom_bo_va(bo[0]), loom_bo_va(bo[1]));
	/* the dependency: a long vector add on device 1 */
	ASSERT_EQ(0, loom_bo_alloc(d[1], 3 * big * 8, 0, &vbo));
	{
		uint64_t va = loom_bo_va(vbo);
		struct loom_arg a[3] = { ARG(MEMREF_I64, va), ARG(MEMREF_I64, va + big * 8),
					 ARG(MEMREF_I64, va + 2 * big * 8) };

		ASSERT_EQ(0, loom_launch_dense(d[1], img[1], "vadd", a, 3, &big, 1, NULL, 0, 0, &dep));
	}
	{
		struct loom_arg a[2] = { ARG(MEMREF_I64, loom_bo_va(bo[0])), ARG(INDEX, e[1]) };
		struct loom_launch l = loom_launch_dense_of("lin2", a, 2, e, 2, &dep, 1, 0);

		ASSERT_EQ(0, loom_launch_spread(d, 2, img[0], &l, &t));
	}
	ASSERT_EQ(0, loom_token_wait(t, 30 * SEC));
	EXPECT_EQ(1, loom_token_done(dep));
	EXPECT_EQ(parts < 11 ? parts : 11, loom_token_num_parts(t));
	ASSERT_EQ(0, loom_token_counters(t, &c));
	EXPECT_EQ(66, c.instances);
	for (int64_t r = 0; r < e[0]; r++) {
		int64_t pt[2] = { r, 0 };
		struct loom_part where;

		ASSERT_EQ(0, loom_launch_placement(d, 2, e, 2, pt, &where));
		for (int i = 0; i < 2; i++) {
			int64_t *m = loom_bo_map(bo[i]);

			for (int64_t k = 0; k < e[1]; k++)
				EXPECT_EQ(where.device == (unsigned)i ? r * e[1] + k : -1,
					  m[r * e[1] + k]);
		}
	}
	/* the spread's token orders a launch on either device */
	{
		struct loom_arg a[2] = { ARG(MEMREF_I64, loom_bo_va(bo[0]) + 1024), ARG(I64, 5) };
		struct loom_token *after;

		ASSERT_EQ(0, loom_launch_dense(d[0], img[0], "store", a, 2, NULL, 0, &t, 1, 0, &after));
		ASSERT_EQ(0, loom_token_wait(after, 10 * SEC));
		EXPECT_EQ(5, ((int64_t *)loom_bo_map(bo[0]))[128]);
		EXPECT_EQ(-1, ((int64_t *)loom_bo_map(bo[1]))[128]);
		loom_token_free(after);
	}
	loom_token_free(t);
	loom_token_free(dep);
	loom_bo_free(vbo);
	for (int i = 0; i < 2; i++) {
		loom_bo_free(bo[i]);
		loom_image_free(img[i]);
	}
	for (int i = 0; i < n; i++)
		loom_device_close(d[i]);
}

TEST(open_paths)
{
	struct loom_device *d = NULL;

	EXPECT_EQ(LOOM_E_NO_DEVICE, loom_device_open("/dev/null", &d));
	EXPECT_EQ(LOOM_E_NO_DEVICE, loom_device_open_nth(60, &d));
	ASSERT_EQ(0, loom_device_open_nth(0, &d));
	loom_device_close(d);
}

TEST_HARNESS_MAIN
