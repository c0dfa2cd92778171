// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_test: libloom on loom_sim_open()'s device, through libloom's public
 * API as an application would use it (one test asks the backend's JOB_INFO
 * itself, which the API does not show): the vector add of the engine
 * tests (configs.h) launched by ioctl-style launches and by a ring, an
 * access outside every BO faulting as on the device (EFAULT, JOB_INFO's
 * device going on), a job past max_job_ms stopped (ETIMEDOUT), a device closed
 * with a job running, a launch spread over two simulated devices, an
 * atomic counter updated by every core at once, what the simulated
 * device refuses, and token waits on the job's record (JOB_INFO's wait).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "device_internal.h"	/* the backend, for JOB_INFO's own checks */
#include "vadd_image.h"
#include "loom/loom.h"
#include "loom/sim.h"

struct vadd {
	struct loom_device *dev;
	struct loom_image *img;
	struct loom_bo *a, *b, *c;
	int64_t n;
};

static int vadd_open(struct vadd *v, const struct loom_sim_config *cfg,
		     int64_t n)
{
	int ret;

	*v = (struct vadd){ .n = n };
	ret = loom_sim_open(cfg, &v->dev);
	if (ret)
		return ret;
	v->img = loom_test_vadd_image(loom_device_info(v->dev)->fabric_width,
				      loom_device_info(v->dev)->fabric_height);
	if (!v->img)
		return -ENOMEM;
	ret = loom_bo_alloc(v->dev, n * 8, 0, &v->a) ?:
	      loom_bo_alloc(v->dev, n * 8, 0, &v->b) ?:
	      loom_bo_alloc(v->dev, n * 8, 0, &v->c);
	if (ret)
		return ret;
	for (int64_t i = 0; i < n; i++) {
		((int64_t *)loom_bo_map(v->a))[i] = i;
		((int64_t *)loom_bo_map(v->b))[i] = 1000 * i;
	}
	return 0;
}

static void vadd_close(struct vadd *v)
{
	loom_bo_free(v->a);
	loom_bo_free(v->b);
	loom_bo_free(v->c);
	loom_image_free(v->img);
	loom_device_close(v->dev);
}

static int vadd_launch(struct vadd *v, uint64_t c_va, struct loom_token **t)
{
	struct loom_arg args[3] = {
		{ LOOM_ARG_MEMREF_I64, loom_bo_va(v->a) },
		{ LOOM_ARG_MEMREF_I64, loom_bo_va(v->b) },
		{ LOOM_ARG_MEMREF_I64, c_va },
	};

	return loom_launch_dense(v->dev, v->img, "vadd", args, 3, &v->n, 1,
				 NULL, 0, 0, t);
}

static bool vadd_right(const struct vadd *v)
{
	for (int64_t i = 0; i < v->n; i++)
		if (((int64_t *)loom_bo_map(v->c))[i] != 1001 * i)
			return false;
	return true;
}

TEST(vector_add_runs_and_counts_device_cycles)
{
	struct loom_hw_counters hc;
	struct loom_token *t = NULL;
	struct vadd v;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 1000));
	CHECK(loom_device_is_sim(v.dev));
	CHECK_EQ(-1, loom_device_fd(v.dev));
	CHECK_EQ(0, strcmp(loom_device_info(v.dev)->path, "sim"));
	CHECK_EQ(2, loom_device_info(v.dev)->num_cores);
	/* what the QEMU device has: link channels (ABI 0.8) */
	CHECK(loom_device_info(v.dev)->hw_caps & LOOM_CAP_LINK_CHANNELS);
	CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.c), &t));
	CHECK_EQ(0, loom_token_wait(t, -1));
	CHECK(vadd_right(&v));
	CHECK_EQ(0, loom_token_counters(t, &hc));
	CHECK_EQ(1000, hc.instances);
	CHECK(hc.cycles >= 1000);
	CHECK_EQ(2000, hc.mem_reads);
	CHECK_EQ(1000, hc.mem_writes);
	loom_token_free(t);
	vadd_close(&v);
}

/* Nothing is mapped below the first BO: a store one element before it faults. */
TEST(an_access_outside_every_bo_faults_as_on_the_device)
{
	struct loom_token *t = NULL;
	struct vadd v;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 16));
	CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.a) - 8, &t));
	CHECK_EQ(-EFAULT, loom_token_wait(t, -1));
	loom_token_free(t);
	/* the device goes on: the next job is right */
	CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.c), &t));
	CHECK_EQ(0, loom_token_wait(t, -1));
	CHECK(vadd_right(&v));
	loom_token_free(t);
	vadd_close(&v);
}

/* A freed BO's pages leave the address space with it. */
TEST(a_freed_bo_is_unmapped)
{
	struct loom_token *t = NULL;
	uint64_t va;
	struct vadd v;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 16));
	va = loom_bo_va(v.c);
	loom_bo_free(v.c);
	v.c = NULL;
	CHECK_EQ(0, vadd_launch(&v, va, &t));
	CHECK_EQ(-EFAULT, loom_token_wait(t, -1));
	loom_token_free(t);
	vadd_close(&v);
}

TEST(a_job_past_max_job_ms_is_stopped)
{
	struct loom_sim_config c = { .max_job_ms = 20 };
	struct loom_token *t = NULL;
	struct vadd v;

	/* 2^20 instances: seconds of engine time, far past 20 ms */
	REQUIRE_EQ(0, vadd_open(&v, &c, 1 << 20));
	CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.c), &t));
	CHECK_EQ(-ETIMEDOUT, loom_token_wait(t, -1));
	loom_token_free(t);
	vadd_close(&v);
}

/* Closing stops the running job and cancels the queued ones: no hang. */
TEST(closing_with_jobs_in_flight_returns)
{
	struct loom_token *t[3] = { NULL };
	struct vadd v;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 1 << 20));
	for (int i = 0; i < 3; i++)
		CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.c), &t[i]));
	for (int i = 0; i < 3; i++)
		loom_token_free(t[i]);
	vadd_close(&v);
}

TEST(a_ring_completes_each_launch_once)
{
	struct loom_completion done[8];
	struct loom_ring *ring = NULL;
	uint64_t seen = 0;
	struct vadd v;
	struct loom_arg args[3];
	int n = 0;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 64));
	args[0] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(v.a) };
	args[1] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(v.b) };
	args[2] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(v.c) };
	REQUIRE_EQ(0, loom_ring_create(v.dev, 8, &ring));
	for (unsigned i = 0; i < 5; i++)
		CHECK_EQ(0, loom_ring_launch_dense(ring, v.img, "vadd", args, 3,
						   &v.n, 1, NULL, 0, i % 2,
						   100 + i, NULL));
	while (loom_ring_in_flight(ring)) {
		int k = loom_ring_reap(ring, done, 8, true);

		REQUIRE(k > 0);
		for (int i = 0; i < k; i++) {
			CHECK_EQ(0, done[i].res);
			CHECK(done[i].user_data >= 100 && done[i].user_data < 105);
			CHECK(!(seen & (1ull << done[i].user_data % 64)));
			seen |= 1ull << done[i].user_data % 64;
			n++;
		}
	}
	CHECK_EQ(5, n);
	CHECK(vadd_right(&v));
	loom_ring_destroy(ring);
	vadd_close(&v);
}

/*
 * A spread launch over the two cores of a simulated device: its parts'
 * fences merged into the collective token's.  No PRIME between simulated
 * devices.
 */
TEST(a_launch_spreads_over_the_cores)
{
	struct loom_device *other = NULL;
	struct loom_token *t = NULL;
	struct loom_bo *shared = NULL;
	struct loom_arg args[3];
	struct loom_launch l;
	struct vadd v;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 256));
	args[0] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(v.a) };
	args[1] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(v.b) };
	args[2] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(v.c) };
	l = loom_launch_dense_of("vadd", args, 3, &v.n, 1, NULL, 0, 0);
	CHECK_EQ(0, loom_launch_spread(&v.dev, 1, v.img, &l, &t));
	CHECK_EQ(0, loom_token_wait(t, -1));
	CHECK_EQ(2, loom_token_num_parts(t));
	CHECK(vadd_right(&v));
	loom_token_free(t);
	REQUIRE_EQ(0, loom_sim_open(NULL, &other));
	CHECK_EQ(LOOM_E_NOT_SUPPORTED, loom_bo_share(v.a, other, &shared));
	loom_device_close(other);
	vadd_close(&v);
}

/*
 * configs.h's atomic counter (every instance adds coordinate 0 + 1 with
 * one LOOM_OP_ATOMIC) as an image of one dense thread, "counter".
 */
static struct loom_image *counter_image(unsigned w, unsigned h)
{
	static const enum loom_arg_type types[1] = { LOOM_ARG_MEMREF_I64 };
	static unsigned char cfg[65536];
	struct loom_image_builder *b;
	struct loom_image *img = NULL;
	size_t n = loom_test_config_atomic_counter(cfg, sizeof(cfg), w, h), size;
	void *bytes = NULL;

	if (!n || loom_builder_new(w, h, &b))
		return NULL;
	if (!loom_builder_add_dense(b, "counter", 1, types, 1, cfg, n) &&
	    !loom_builder_finish(b, &bytes, &size))
		loom_image_load(bytes, size, &img);
	loom_builder_free(b);
	free(bytes);
	return img;
}

/*
 * LOOM_OP_ATOMIC on a simulated device of 1, 2 and 4 cores, whose threads
 * run at once: one launch spread over every core, then one whole launch
 * on every queue at the same time, all adding into one counter.  The
 * simulated device has LOOM_CAP_ATOMIC, as the QEMU device does.
 */
TEST(an_atomic_counter_is_right_on_1_2_4_cores)
{
	static const unsigned cores[] = { 1, 2, 4 };
	const int64_t n = 30000;
	const uint64_t sum = (uint64_t)n * (n + 1) / 2;

	for (unsigned c = 0; c < 3; c++) {
		struct loom_sim_config cfg = { .cores = cores[c] };
		struct loom_token *t[4] = { NULL }, *spread = NULL;
		struct loom_device *dev;
		struct loom_image *img;
		struct loom_bo *bo;
		struct loom_arg arg;
		struct loom_launch l;
		volatile uint64_t *counter;

		REQUIRE_EQ(0, loom_sim_open(&cfg, &dev));
		CHECK(loom_device_info(dev)->hw_caps & LOOM_CAP_ATOMIC);
		REQUIRE(img = counter_image(loom_device_info(dev)->fabric_width,
					    loom_device_info(dev)->fabric_height));
		REQUIRE_EQ(0, loom_bo_alloc(dev, 4096, 0, &bo));
		counter = loom_bo_map(bo);
		*counter = 0;
		arg = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(bo) };
		l = loom_launch_dense_of("counter", &arg, 1, &n, 1, NULL, 0, 0);
		CHECK_EQ(0, loom_launch_spread(&dev, 1, img, &l, &spread));
		CHECK_EQ(0, loom_token_wait(spread, -1));
		CHECK_EQ(cores[c], loom_token_num_parts(spread));
		CHECK_EQ(sum, *counter);
		for (unsigned q = 0; q < cores[c]; q++) {
			l.queue = q;
			CHECK_EQ(0, loom_launch(dev, img, &l, &t[q]));
		}
		for (unsigned q = 0; q < cores[c]; q++) {
			CHECK_EQ(0, loom_token_wait(t[q], -1));
			loom_token_free(t[q]);
		}
		CHECK_EQ(sum * (1 + cores[c]), *counter);
		loom_token_free(spread);
		loom_bo_free(bo);
		loom_image_free(img);
		loom_device_close(dev);
	}
}

TEST(a_config_out_of_range_is_refused)
{
	struct loom_sim_config c = { .fabric_width = LOOM_FABRIC_MAX_DIM + 1 };
	struct loom_device *dev = NULL;

	CHECK_EQ(-EINVAL, loom_sim_open(&c, &dev));
	c = (struct loom_sim_config){ .cores = 65 };
	CHECK_EQ(-EINVAL, loom_sim_open(&c, &dev));
	c = (struct loom_sim_config){ .reserved = { 1 } };
	CHECK_EQ(-EINVAL, loom_sim_open(&c, &dev));
	CHECK_EQ(-EINVAL, loom_sim_open(NULL, NULL));
	CHECK(!dev);
	CHECK(!loom_device_is_sim(NULL));
}

/*
 * loom_token_wait() waits on the job's record (one JOB_INFO with
 * DRM_LOOM_JOB_INFO_WAIT, which the simulated driver offers as loom.ko
 * does): a deadline that passes is -ETIMEDOUT, at once for 0 and after it
 * for 20 ms, and the job is not done for it.
 */
TEST(a_token_wait_on_the_record_times_out)
{
	struct loom_token *t = NULL;
	uint64_t t0, waited;
	struct vadd v;

	/* 2^20 instances: seconds of engine time */
	REQUIRE_EQ(0, vadd_open(&v, NULL, 1 << 20));
	CHECK(loom_device_info(v.dev)->features & DRM_LOOM_FEATURE_JOB_INFO_WAIT);
	CHECK_EQ(DRM_LOOM_UAPI_VERSION, loom_device_info(v.dev)->uapi_version);
	CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.c), &t));
	CHECK_EQ(-ETIMEDOUT, loom_token_wait(t, 0));
	t0 = loom_now_ns();
	CHECK_EQ(-ETIMEDOUT, loom_token_wait(t, 20 * 1000 * 1000));
	waited = loom_now_ns() - t0;
	CHECK(waited >= 20 * 1000 * 1000);
	CHECK(waited < 2000ULL * 1000 * 1000);
	CHECK_EQ(0, loom_token_done(t));
	loom_token_free(t);
	vadd_close(&v);
}

/*
 * The simulated JOB_INFO checks and waits as loom.ko's (reached through
 * the backend, which libloom's API does not show): the flag's bad input,
 * ETIME with a pending job's fields, ENOENT, then the job's end in one
 * call, and at once for a job done already.
 */
TEST(the_simulated_job_info_waits_as_loom_ko)
{
	struct drm_loom_job_info info;
	struct loom_token *t = NULL;
	uint64_t id, t0;
	struct vadd v;

	REQUIRE_EQ(0, vadd_open(&v, NULL, 1 << 18));
	CHECK_EQ(0, vadd_launch(&v, loom_bo_va(v.c), &t));
	id = loom_token_job_id(t);
	REQUIRE(id != 0);
	info = (struct drm_loom_job_info){ .job_id = id, .flags = 1U << 1 };
	CHECK_EQ(-EINVAL, v.dev->be->job_info(v.dev, &info));
	info = (struct drm_loom_job_info){ .job_id = id, .timeout_ns = 1 };
	CHECK_EQ(-EINVAL, v.dev->be->job_info(v.dev, &info));
	info = (struct drm_loom_job_info){ .flags = DRM_LOOM_JOB_INFO_WAIT };
	CHECK_EQ(-EINVAL, v.dev->be->job_info(v.dev, &info));
	info = (struct drm_loom_job_info){ .job_id = id + 1000,
					   .flags = DRM_LOOM_JOB_INFO_WAIT,
					   .timeout_ns = INT64_MAX };
	CHECK_EQ(-ENOENT, v.dev->be->job_info(v.dev, &info));

	info = (struct drm_loom_job_info){ .job_id = id,
					   .flags = DRM_LOOM_JOB_INFO_WAIT };
	CHECK_EQ(-ETIME, v.dev->be->job_info(v.dev, &info));
	CHECK_EQ(DRM_LOOM_JOB_PENDING, info.state);
	CHECK_EQ(0, info.error);
	CHECK_EQ(0, info.counters.instances);
	CHECK_EQ(DRM_LOOM_JOB_INFO_WAIT, info.flags);
	t0 = loom_now_ns();
	info = (struct drm_loom_job_info){ .job_id = id,
					   .flags = DRM_LOOM_JOB_INFO_WAIT,
					   .timeout_ns = t0 + 5 * 1000 * 1000 };
	CHECK_EQ(-ETIME, v.dev->be->job_info(v.dev, &info));
	CHECK(loom_now_ns() >= t0 + 5 * 1000 * 1000);
	CHECK_EQ(DRM_LOOM_JOB_PENDING, info.state);

	info = (struct drm_loom_job_info){ .job_id = id,
					   .flags = DRM_LOOM_JOB_INFO_WAIT,
					   .timeout_ns = INT64_MAX };
	CHECK_EQ(0, v.dev->be->job_info(v.dev, &info));
	CHECK_EQ(DRM_LOOM_JOB_DONE, info.state);
	CHECK_EQ(0, info.error);
	CHECK_EQ(LOOM_STATUS_OK, info.hw_status);
	CHECK_EQ(1 << 18, info.counters.instances);
	CHECK(vadd_right(&v));
	info = (struct drm_loom_job_info){ .job_id = id,
					   .flags = DRM_LOOM_JOB_INFO_WAIT };
	CHECK_EQ(0, v.dev->be->job_info(v.dev, &info));
	CHECK_EQ(DRM_LOOM_JOB_DONE, info.state);
	CHECK_EQ(0, loom_token_wait(t, 0));
	loom_token_free(t);
	vadd_close(&v);
}

int main(void)
{
	RUN(vector_add_runs_and_counts_device_cycles);
	RUN(an_access_outside_every_bo_faults_as_on_the_device);
	RUN(a_freed_bo_is_unmapped);
	RUN(a_job_past_max_job_ms_is_stopped);
	RUN(closing_with_jobs_in_flight_returns);
	RUN(a_ring_completes_each_launch_once);
	RUN(a_launch_spreads_over_the_cores);
	RUN(an_atomic_counter_is_right_on_1_2_4_cores);
	RUN(a_config_out_of_range_is_refused);
	RUN(a_token_wait_on_the_record_times_out);
	RUN(the_simulated_job_info_waits_as_loom_ko);
	return checks_done();
}
