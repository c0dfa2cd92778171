// SPDX-License-Identifier: GPL-2.0
/*
 * loom.ko's buffers and jobs: every ioctl's success path and bad-input
 * matrix, a vector add through mmap -> job -> mmap, 1000 dependent jobs by
 * ioctl and by io_uring, timeline syncobj points (order, waiting for a
 * point's submission), JOB_INFO's waits (deadlines, signals, the struct's
 * old size), the job id in a CQE32 ring's CQEs, isolation between files,
 * and recovery from an injected hang, DMA error and MMU fault.
 */
#include <liburing.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

/* ---- buffers ------------------------------------------------------------ */

TEST_F(job, bo_create_and_its_errors)
{
	struct loom_test_bo bo;
	struct drm_loom_bo_create c;
	uint64_t start = 0, end = 0;

	ASSERT_EQ(0, _test_get_param(self->fd, DRM_LOOM_PARAM_VA_START, 0, &start));
	ASSERT_EQ(0, _test_get_param(self->fd, DRM_LOOM_PARAM_VA_END, 0, &end));
	ASSERT_EQ(0, _test_bo_create(self->fd, 1, 0, &bo));
	EXPECT_NE(0, bo.handle);
	EXPECT_EQ(0, bo.va % 4096);
	EXPECT_LE(start, bo.va);
	EXPECT_GT(end, bo.va);
	EXPECT_NE(self->data.va, bo.va);
	EXPECT_EQ(0, _test_bo_create(self->fd, 5 * 4096 + 1, DRM_LOOM_BO_DEVICE_READ_ONLY, &bo));
	EXPECT_EQ(-EINVAL, _test_bo_create(self->fd, 0, 0, &bo));
	EXPECT_EQ(-EINVAL, _test_bo_create(self->fd, DRM_LOOM_BO_MAX_SIZE + 1, 0, &bo));
	EXPECT_EQ(-EINVAL, _test_bo_create(self->fd, ~0ULL, 0, &bo));
	EXPECT_EQ(-EINVAL, _test_bo_create(self->fd, 4096, 0x80, &bo));
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_BO_CREATE, NULL));
	EXPECT_EQ(EFAULT, errno);
	c = (struct drm_loom_bo_create){ .size = 4096 };
	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_BO_CREATE, &c));
}

TEST_F(job, mmap_offset_and_wait_errors)
{
	struct drm_loom_bo_mmap_offset off = { .handle = self->data.handle };
	struct drm_loom_bo_wait w = { .handle = self->data.handle };

	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off));
	EXPECT_NE(0, off.offset);
	off.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off));
	EXPECT_EQ(EINVAL, errno);
	off = (struct drm_loom_bo_mmap_offset){ .handle = 0xdead };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off));
	EXPECT_EQ(ENOENT, errno);

	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_BO_WAIT, &w));
	w.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_BO_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w = (struct drm_loom_bo_wait){ .handle = 0xdead };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_BO_WAIT, &w));
	EXPECT_EQ(ENOENT, errno);
}

/* ---- SUBMIT's bad-input matrix -------------------------------------------------- */

TEST_F(job, submit_rejects_bad_input)
{
	uint32_t size = vadd_cmd(self, 0, 1);
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_submit s;
	uint32_t syncobj, unsignalled;
	uint64_t cores = 0;

	ASSERT_EQ(0, _test_get_param(self->fd, DRM_LOOM_PARAM_NUM_CORES, 0, &cores));
#define BAD(err, field, value) do {				\
	s = submit_args(self, 0, size, refs, 2);			\
	s.field = value;						\
	EXPECT_EQ(-(err), _test_submit(self->fd, &s)) TH_LOG(#field " = " #value); \
} while (0)
	BAD(EINVAL, flags, ~DRM_LOOM_SUBMIT_FLAGS);
	BAD(EINVAL, out_point, 1);			/* without DRM_LOOM_SUBMIT_TIMELINE */
	BAD(EINVAL, queue, cores);
	BAD(EINVAL, queue, ~0U);
	BAD(ENOENT, cmd_handle, 0xdead);
	BAD(EINVAL, cmd_size, 0);
	BAD(EINVAL, cmd_size, 6);
	BAD(EINVAL, cmd_size, LOOM_CMD_MAX_SIZE + 4);
	BAD(EINVAL, cmd_offset, 4);
	BAD(EINVAL, cmd_offset, CMD_BO_SIZE);		/* past the BO */
	BAD(EINVAL, cmd_offset, 0xfffffff8);		/* offset + size overflows */
	BAD(EINVAL, bo_count, DRM_LOOM_MAX_BOS + 1);
	BAD(EINVAL, bo_count, ~0U);
	BAD(EFAULT, bos, 0);
	BAD(EFAULT, bos, 8);
	BAD(EINVAL, in_syncobj_count, DRM_LOOM_MAX_IN_SYNCOBJS + 1);
	BAD(EFAULT, in_syncobj_count, 1);		/* in_syncobjs is NULL */
	BAD(ENOENT, out_syncobj, 0xdead);
	BAD(EINVAL, deadline_ns, DRM_LOOM_MAX_DEADLINE_NS + 1);
#undef BAD
	refs[1].flags = 0;
	s = submit_args(self, 0, size, refs, 2);
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));
	refs[1].flags = 4;
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));
	refs[1] = refs[0];				/* a BO twice */
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));
	refs[1] = (struct drm_loom_bo_ref){ 0xdead, DRM_LOOM_BO_REF_READ };
	EXPECT_EQ(-ENOENT, _test_submit(self->fd, &s));
	refs[1] = (struct drm_loom_bo_ref){ self->cfg.handle, DRM_LOOM_BO_REF_READ };

	/* in-syncobjs: unknown handle, and one with no fence */
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &unsignalled));
	s = submit_args(self, 0, size, refs, 2);
	syncobj = 0xdead;
	s.in_syncobjs = (uintptr_t)&syncobj;
	s.in_syncobj_count = 1;
	EXPECT_EQ(-ENOENT, _test_submit(self->fd, &s));
	s.in_syncobjs = (uintptr_t)&unsignalled;
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));

	/* and nothing was lost: a good submit still works */
	s = submit_args(self, 0, size, refs, 2);
	s.out_syncobj = unsignalled;
	EXPECT_EQ(0, _test_submit(self->fd, &s));
	EXPECT_EQ(0, loom_syncobj_wait(self->fd, unsignalled, 5000));
}

/*
 * A job's BO list up to a few entries lives in the job (no allocation),
 * longer ones are allocated: lists on both sides of the line run, and
 * refuse a BO listed twice and a BO that is not there.
 */
TEST_F(job, bo_lists_short_and_long)
{
	static const unsigned int counts[] = { 4, 5, 6, 40 };
	struct drm_loom_bo_ref refs[40];
	struct loom_test_bo extra[38];
	int64_t *log = self->data.map;
	uint32_t sync;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	for (unsigned int i = 0; i < 38; i++) {
		extra[i] = loom_bo(self->fd, 4096);
		ASSERT_NE(NULL, extra[i].map);
	}
	memset(log, 0xff, 8 * 5);
	log[0] = 0;
	for (unsigned int c = 0; c < 4; c++) {
		unsigned int n = counts[c];
		struct drm_loom_submit s;

		/* the data BO (written), the configurations, then others read */
		refs[0] = (struct drm_loom_bo_ref){ self->data.handle,
			DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE };
		refs[1] = (struct drm_loom_bo_ref){ self->cfg.handle, DRM_LOOM_BO_REF_READ };
		for (unsigned int i = 2; i < n; i++)
			refs[i] = (struct drm_loom_bo_ref){ extra[i - 2].handle,
							    DRM_LOOM_BO_REF_READ };
		s = submit_args(self, c, counter_cmd(self, c, c), refs, n);
		refs[n - 1].handle = refs[1].handle;	/* listed twice */
		EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s)) TH_LOG("%u BOs", n);
		refs[n - 1].handle = 0xdead;
		EXPECT_EQ(-ENOENT, _test_submit(self->fd, &s)) TH_LOG("%u BOs", n);
		refs[n - 1].handle = n > 2 ? extra[n - 3].handle : self->cfg.handle;
		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s)) TH_LOG("%u BOs", n);
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 20000));
		EXPECT_EQ(c, log[1 + c]) TH_LOG("%u BOs", n);
	}
	EXPECT_EQ(4, log[0]);
}

/* ---- doing work --------------------------------------------------------------- */

TEST_F(job, vector_add_mmap_job_mmap)
{
	int64_t *a = self->data.map, *b = a + 1024, *c = a + 2048;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_job_info info;
	struct drm_loom_submit s;
	struct drm_loom_bo_wait w = { .handle = self->data.handle, .timeout_ns = 5000000000LL };

	for (int i = 0; i < N + 1; i++) {
		a[i] = 3 * i;
		b[i] = 1000 - i * i;
		c[i] = -1;
	}
	s = submit_args(self, 0, vadd_cmd(self, 0, N), refs, 2);
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	EXPECT_NE(0, s.job_id);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_BO_WAIT, &w));
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(3 * i + 1000 - i * i, c[i]) TH_LOG("c[%d]", i);
	}
	EXPECT_EQ(-1, c[N]);

	ASSERT_EQ(0, _test_job_info(self->fd, s.job_id, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(LOOM_STATUS_OK, info.hw_status);
	EXPECT_EQ(N, info.counters.instances);
	EXPECT_LE(N, info.counters.cycles);
	EXPECT_EQ(2 * N, info.counters.mem_reads);
	EXPECT_EQ(0, info.dump_size);
	EXPECT_EQ(-ENOENT, _test_job_info(self->fd, s.job_id + 1000, &info));
	EXPECT_EQ(-EINVAL, _test_job_info(self->fd, 0, &info));
}

TEST_F(job, thousand_jobs_in_dependency_order)
{
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	uint32_t sync[2];
	uint64_t cores = 1;

	_test_get_param(self->fd, DRM_LOOM_PARAM_NUM_CORES, 0, &cores);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[0]));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[1]));
	memset(log, 0xff, 8 * 1001);
	log[0] = 0;
	/*
	 * Job i waits for job i - 1 through a syncobj and alternates cores;
	 * the BO list is read-only so implicit fencing cannot order them.
	 */
	refs[0].flags = DRM_LOOM_BO_REF_READ;
	for (unsigned i = 0; i < 1000; i++) {
		struct drm_loom_submit s = submit_args(self, i, counter_cmd(self, i, i),
						       refs, 2);

		s.queue = i % cores;
		s.out_syncobj = sync[i % 2];
		if (i) {
			s.in_syncobjs = (uintptr_t)&sync[(i - 1) % 2];
			s.in_syncobj_count = 1;
		}
		ASSERT_EQ(0, _test_submit(self->fd, &s)) TH_LOG("job %u", i);
	}
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync[999 % 2], 60000));
	EXPECT_EQ(1000, log[0]);
	for (unsigned i = 0; i < 1000; i++) {
		ASSERT_EQ(i, log[1 + i]) TH_LOG("job %u logged %lld", i, (long long)log[1 + i]);
	}
}

TEST_F(job, thousand_jobs_through_io_uring)
{
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	static unsigned char seen[1000];
	struct io_uring ring;
	uint32_t sync[2];
	unsigned submitted = 0, completed = 0;

	ASSERT_EQ(0, io_uring_queue_init(64, &ring, IORING_SETUP_SQE128));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[0]));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[1]));
	memset(log, 0xff, 8 * 1001);
	log[0] = 0;
	memset(seen, 0, sizeof(seen));
	/* the command BO holds 1000 distinct command buffers */
	for (unsigned i = 0; i < 1000; i++)
		counter_cmd(self, i, i);

	while (completed < 1000) {
		struct io_uring_cqe *cqe;

		/* Keep up to 32 in flight; each waits for the previous one. */
		while (submitted < 1000 && submitted - completed < 32) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct drm_loom_submit s = submit_args(self, submitted, 0, refs, 2);

			ASSERT_NE(NULL, sqe);
			s.cmd_size = counter_cmd(self, submitted, submitted);
			s.out_syncobj = sync[submitted % 2];
			if (submitted) {
				s.in_syncobjs = (uintptr_t)&sync[(submitted - 1) % 2];
				s.in_syncobj_count = 1;
			}
			io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
			sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
			sqe_set_submit(sqe, &s);
			sqe->user_data = 0x10000 + submitted;
			submitted++;
			/* syncobjs are resolved at submit: one SQE per enter */
			ASSERT_EQ(1, io_uring_submit(&ring));
		}
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		ASSERT_LE(0x10000, cqe->user_data);
		ASSERT_GT(0x10000 + 1000, cqe->user_data);
		EXPECT_EQ(0, cqe->res) TH_LOG("job %llu", (unsigned long long)cqe->user_data - 0x10000);
		EXPECT_EQ(0, seen[cqe->user_data - 0x10000]++);
		io_uring_cqe_seen(&ring, cqe);
		completed++;
	}
	for (unsigned i = 0; i < 1000; i++) {
		ASSERT_EQ(1, seen[i]);
		ASSERT_EQ(i, log[1 + i]);
	}
	io_uring_queue_exit(&ring);
}

/*
 * The direct path puts a job on the ring at SUBMIT only when nothing ahead
 * of it in its queue is pending.  Job A waits for a long job on core 1;
 * job B, behind A on core 0, waits for nothing of its own but must not run
 * before A.  Then, with core 0 idle, a job takes the direct path (the
 * debugfs count moves), and none does with the module parameter off.
 */
TEST_F(job, a_job_never_overtakes_one_waiting_for_a_fence)
{
	const char *param = "/sys/module/loom/parameters/direct_submit";
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	struct drm_loom_submit l, a, b, c;
	uint32_t gate, last;
	uint64_t cores = 1;
	long long direct;

	_test_get_param(self->fd, DRM_LOOM_PARAM_NUM_CORES, 0, &cores);
	if (cores < 2)
		SKIP(return, "one core: nothing to wait for on another");
	ASSERT_NE(NULL, scratch.map);
	ASSERT_EQ(0, loom_write_file(param, "Y"));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &gate));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &last));
	memset(log, 0xff, 8 * 4);
	log[0] = 0;
	l = submit_args(self, 10, long_cmd(self, 10, scratch.va, 1 << 22), NULL, 0);
	l.queue = 1;
	l.deadline_ns = LONG_JOB_DEADLINE_NS;
	l.out_syncobj = gate;
	a = submit_args(self, 0, counter_cmd(self, 0, 0), refs, 2);
	a.in_syncobjs = (uintptr_t)&gate;
	a.in_syncobj_count = 1;
	b = submit_args(self, 1, counter_cmd(self, 1, 1), refs, 2);
	b.out_syncobj = last;
	ASSERT_EQ(0, _test_submit(self->fd, &l));
	ASSERT_EQ(0, _test_submit(self->fd, &a));
	ASSERT_EQ(0, _test_submit(self->fd, &b));
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, last, 60000));
	EXPECT_EQ(2, log[0]);
	EXPECT_EQ(0, log[1]);		/* A first */
	EXPECT_EQ(1, log[2]);		/* then B */

	direct = loom_core_stat(&self->node, 0, "put on the ring at SUBMIT: ");
	ASSERT_LE(0, direct);
	c = submit_args(self, 2, counter_cmd(self, 2, 2), refs, 2);
	c.out_syncobj = last;
	ASSERT_EQ(0, _test_submit(self->fd, &c));
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, last, 20000));
	EXPECT_EQ(2, log[3]);
	EXPECT_EQ(direct + 1, loom_core_stat(&self->node, 0, "put on the ring at SUBMIT: "));

	ASSERT_EQ(0, loom_write_file(param, "N"));
	direct = loom_core_stat(&self->node, 0, "put on the ring at SUBMIT: ");
	ASSERT_EQ(0, _test_submit(self->fd, &c));
	EXPECT_EQ(0, loom_syncobj_wait(self->fd, last, 20000));
	EXPECT_EQ(direct, loom_core_stat(&self->node, 0, "put on the ring at SUBMIT: "));
	EXPECT_EQ(0, loom_write_file(param, "Y"));
	EXPECT_EQ(4, log[0]);
	EXPECT_EQ(3, log[3]);		/* C's second run */
}

/* ---- timeline syncobjs (uapi 8) ------------------------------------------ */

static int64_t abs_ms(int64_t ms)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000000LL + now.tv_nsec + ms * 1000000LL;
}

/* A counter-log job that waits for @wait (if set) and signals @out_point. */
static struct drm_loom_submit timeline_job(FIXTURE_DATA(job) *self, unsigned i,
					   struct drm_loom_bo_ref *refs,
					   struct drm_loom_syncobj_point *wait,
					   uint32_t timeline, uint64_t out_point)
{
	struct drm_loom_submit s = submit_args(self, i, counter_cmd(self, i, i), refs, 2);

	s.flags = DRM_LOOM_SUBMIT_TIMELINE;
	s.out_syncobj = timeline;
	s.out_point = out_point;
	if (wait) {
		s.in_syncobjs = (uintptr_t)wait;
		s.in_syncobj_count = 1;
	}
	return s;
}

TEST_F(job, timeline_rejects_bad_points)
{
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_syncobj_point p = { 0 };
	struct drm_loom_submit s;
	uint64_t features = 0, point = 0;
	uint32_t tl;

	ASSERT_EQ(0, _test_get_param(self->fd, DRM_LOOM_PARAM_FEATURES, 0, &features));
	ASSERT_TRUE(features & DRM_LOOM_FEATURE_TIMELINE);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	p.handle = tl;
	s = timeline_job(self, 0, refs, NULL, 0, 1);		/* a point, no syncobj */
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));
	p.flags = ~DRM_LOOM_SYNC_FLAGS;
	s = timeline_job(self, 0, refs, &p, tl, 1);
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));
	p.flags = 0;
	p.handle = 0xdead;
	EXPECT_EQ(-ENOENT, _test_submit(self->fd, &s));
	/* a point nobody submitted: EINVAL, or EAGAIN when asked to wait but not block */
	p.handle = tl;
	p.point = 7;
	EXPECT_EQ(-EINVAL, _test_submit(self->fd, &s));
	p.flags = DRM_LOOM_SYNC_WAIT_FOR_SUBMIT;
	s.flags |= DRM_LOOM_SUBMIT_NONBLOCK;
	EXPECT_EQ(-EAGAIN, _test_submit(self->fd, &s));
	s.in_syncobjs = 0;				/* EFAULT on the 16-byte entries */
	EXPECT_EQ(-EFAULT, _test_submit(self->fd, &s));
	/* nothing was lost: the timeline is where it was, a good point works */
	EXPECT_EQ(0, drmSyncobjQuery(self->fd, &tl, &point, 1));
	EXPECT_EQ(0, point);
	s = timeline_job(self, 0, refs, NULL, tl, 1);
	EXPECT_EQ(0, _test_submit(self->fd, &s));
	EXPECT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &(uint64_t){ 1 }, 1, abs_ms(5000), 0, NULL));
	drmSyncobjDestroy(self->fd, tl);
}

/* 200 jobs on alternating cores, each waiting for its predecessor's point. */
TEST_F(job, timeline_points_order_jobs)
{
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ },	/* no implicit order */
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	uint64_t cores = 1, point = 0, last = 200;
	uint32_t tl;

	_test_get_param(self->fd, DRM_LOOM_PARAM_NUM_CORES, 0, &cores);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	memset(log, 0xff, 8 * 201);
	log[0] = 0;
	for (unsigned i = 0; i < 200; i++) {
		struct drm_loom_syncobj_point wait = { .handle = tl, .point = i };
		struct drm_loom_submit s = timeline_job(self, i, refs, i ? &wait : NULL, tl, i + 1);

		s.queue = i % cores;
		ASSERT_EQ(0, _test_submit(self->fd, &s)) TH_LOG("job %u", i);
	}
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &last, 1, abs_ms(60000), 0, NULL));
	EXPECT_EQ(0, drmSyncobjQuery(self->fd, &tl, &point, 1));
	EXPECT_EQ(200, point);
	EXPECT_EQ(200, log[0]);
	for (unsigned i = 0; i < 200; i++) {
		ASSERT_EQ(i, log[1 + i]) TH_LOG("job %u logged %lld", i, (long long)log[1 + i]);
	}
	drmSyncobjDestroy(self->fd, tl);
}

/*
 * A later point signals only after the earlier ones: a long job at point 1
 * on one core, a short one at point 2 on another; waiting for point 2 finds
 * both done.
 */
TEST_F(job, timeline_points_signal_in_order)
{
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_job_info info;
	struct drm_loom_submit slow, fast;
	uint64_t cores = 1, two = 2, point = 0;
	uint32_t tl;

	_test_get_param(self->fd, DRM_LOOM_PARAM_NUM_CORES, 0, &cores);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	/*
	 * 60000 overlapping additions: many device cycles, no writes outside
	 * data.  Both jobs list data read-only, so no implicit fence orders them.
	 */
	slow = submit_args(self, 0, vadd_cmd(self, 0, 60000), refs, 2);
	slow.flags = DRM_LOOM_SUBMIT_TIMELINE;
	slow.out_syncobj = tl;
	slow.out_point = 1;
	ASSERT_EQ(0, _test_submit(self->fd, &slow));
	fast = timeline_job(self, 1, refs, NULL, tl, 2);
	fast.queue = cores > 1;
	ASSERT_EQ(0, _test_submit(self->fd, &fast));
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &two, 1, abs_ms(60000), 0, NULL));
	EXPECT_EQ(0, _test_job_info(self->fd, slow.job_id, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(0, drmSyncobjQuery(self->fd, &tl, &point, 1));
	EXPECT_EQ(2, point);
	drmSyncobjDestroy(self->fd, tl);
}

/*
 * Waiting for a point not submitted yet: through io_uring (the wait happens
 * in io_uring's worker), through the ioctl in a child, and for a point the
 * host signals with the DRM core's timeline ioctl.
 */
TEST_F(job, timeline_wait_for_submit)
{
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_syncobj_point wait1 = { 0, DRM_LOOM_SYNC_WAIT_FOR_SUBMIT, 1 };
	struct drm_loom_syncobj_point wait3 = { 0, DRM_LOOM_SYNC_WAIT_FOR_SUBMIT, 3 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct drm_loom_submit s;
	struct io_uring ring;
	uint64_t four = 4, five = 5;
	int status = -1;
	uint32_t tl;
	pid_t child;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	wait1.handle = wait3.handle = tl;
	memset(log, 0xff, 8 * 8);
	log[0] = 0;
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128));

	/* job 1 (io_uring) waits for point 1, which job 0 (ioctl) adds later */
	s = timeline_job(self, 1, refs, &wait1, tl, 2);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	sqe->user_data = 1;
	ASSERT_EQ(1, io_uring_submit(&ring));
	usleep(100 * 1000);
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&ring, &cqe));	/* still waiting */
	s = timeline_job(self, 0, refs, NULL, tl, 1);
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(1, cqe->user_data);
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);

	/* job 3 (a child's ioctl) waits for point 3, which job 2 adds later */
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		s = timeline_job(self, 3, refs, &wait3, tl, 4);
		_exit(_test_submit(self->fd, &s) ? 1 : 0);
	}
	usleep(100 * 1000);
	s = timeline_job(self, 2, refs, NULL, tl, 3);
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &four, 1, abs_ms(10000), 0, NULL));
	for (unsigned i = 0; i < 4; i++) {
		EXPECT_EQ(i, log[1 + i]) TH_LOG("job %u logged %lld", i, (long long)log[1 + i]);
	}

	/* job 4 waits for point 5 of a second timeline that the host signals */
	{
		uint32_t host;
		struct drm_loom_syncobj_point wait5 = { 0, 0, 5 };

		ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &host));
		wait5.handle = host;
		ASSERT_EQ(0, drmSyncobjTimelineSignal(self->fd, &host, &five, 1));
		s = timeline_job(self, 4, refs, &wait5, tl, 5);
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &five, 1, abs_ms(10000), 0, NULL));
		EXPECT_EQ(4, log[5]);
		drmSyncobjDestroy(self->fd, host);
	}
	io_uring_queue_exit(&ring);
	drmSyncobjDestroy(self->fd, tl);
}

/* ---- JOB_INFO's waits (uapi 10) ----------------------------------------- */

/* JOB_INFO with DRM_LOOM_JOB_INFO_WAIT until @abs_ns; 0 or -errno. */
static int job_info_wait(int fd, uint64_t job_id, int64_t abs_ns,
			 struct drm_loom_job_info *info)
{
	memset(info, 0, sizeof(*info));
	info->job_id = job_id;
	info->flags = DRM_LOOM_JOB_INFO_WAIT;
	info->timeout_ns = abs_ns;
	return ioctl(fd, DRM_IOCTL_LOOM_JOB_INFO, info) ? -errno : 0;
}

/*
 * libloom's round trip: SUBMIT, then one JOB_INFO that sleeps until the job
 * is done and answers with its outcome, the device's writes in place.  A
 * job done already is answered at once, also past the deadline.
 */
TEST_F(job, job_info_waits_for_the_job)
{
	int64_t *a = self->data.map, *b = a + 1024, *c = a + 2048;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_job_info info;
	struct drm_loom_submit s;

	ASSERT_TRUE(test_get_param(self->fd, DRM_LOOM_PARAM_FEATURES) &
		    DRM_LOOM_FEATURE_JOB_INFO_WAIT);
	ASSERT_LE(10ULL, test_get_param(self->fd, DRM_LOOM_PARAM_UAPI_VERSION));
	for (int i = 0; i < N; i++) {
		a[i] = i;
		b[i] = 2 * i;
		c[i] = -1;
	}
	s = submit_args(self, 0, vadd_cmd(self, 0, N), refs, 2);
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	ASSERT_EQ(0, job_info_wait(self->fd, s.job_id,
				   abs_ms(10000LL * loom_timeout_factor()), &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(LOOM_STATUS_OK, info.hw_status);
	EXPECT_EQ(N, info.counters.instances);
	EXPECT_EQ(0, info.dump_size);
	/* the inputs are left as they were */
	EXPECT_EQ(DRM_LOOM_JOB_INFO_WAIT, info.flags);
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(3 * i, c[i]) TH_LOG("c[%d]", i);
	}

	/* done already: answered without sleeping, whatever the deadline */
	EXPECT_EQ(0, job_info_wait(self->fd, s.job_id, 0, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(N, info.counters.instances);
	EXPECT_EQ(0, job_info_wait(self->fd, s.job_id, 1, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(0, job_info_wait(self->fd, s.job_id, INT64_MAX, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	/* a job the file does not have: at once, as without the flag */
	EXPECT_EQ(-ENOENT, job_info_wait(self->fd, s.job_id + 1000, abs_ms(10000), &info));
}

static void job_info_on_alarm(int sig)
{
	(void)sig;
}

/*
 * A job held back by its in-fence (a long job's): a deadline of 0, or one
 * that has passed, is answered at once and one 100 ms away after 100 ms,
 * ETIME with the fields of a pending job; a signal ends the wait with
 * EINTR, or under SA_RESTART the call goes on to its (absolute) deadline
 * and sees the job done.
 */
TEST_F(job, job_info_wait_deadline_and_signal)
{
	int64_t *log = self->data.map;
	int64_t factor = loom_timeout_factor(), t0, waited;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	struct itimerval tick = { .it_value = { .tv_usec = 100 * 1000 } };
	struct sigaction sa = { .sa_handler = job_info_on_alarm }, old;
	struct drm_loom_job_info info;
	struct drm_loom_submit l, a;
	uint32_t gate;

	ASSERT_NE(NULL, scratch.map);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &gate));
	memset(log, 0xff, 8 * 4);
	log[0] = 0;
	l = submit_args(self, 10, long_cmd(self, 10, scratch.va, 1 << 22), NULL, 0);
	l.deadline_ns = LONG_JOB_DEADLINE_NS;
	l.out_syncobj = gate;
	a = submit_args(self, 0, counter_cmd(self, 0, 0), refs, 2);
	a.in_syncobjs = (uintptr_t)&gate;
	a.in_syncobj_count = 1;
	ASSERT_EQ(0, _test_submit(self->fd, &l));
	ASSERT_EQ(0, _test_submit(self->fd, &a));

	/* no sleep: no deadline, or one that has passed */
	EXPECT_EQ(-ETIME, job_info_wait(self->fd, a.job_id, 0, &info));
	EXPECT_EQ(DRM_LOOM_JOB_PENDING, info.state);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(0, info.hw_status);
	EXPECT_EQ(0, info.counters.cycles);
	EXPECT_EQ(0, info.dump_size);
	EXPECT_EQ(-ETIME, job_info_wait(self->fd, a.job_id, abs_ms(-1000), &info));
	EXPECT_EQ(-ETIME, job_info_wait(self->fd, a.job_id, -1, &info));

	/* 100 ms: slept for them (a jiffy's rounding aside), not much longer */
	t0 = abs_ms(0);
	EXPECT_EQ(-ETIME, job_info_wait(self->fd, a.job_id, t0 + 100000000, &info));
	waited = abs_ms(0) - t0;
	EXPECT_EQ(DRM_LOOM_JOB_PENDING, info.state);
	EXPECT_LE(90000000, waited);
	EXPECT_GT(5000000000LL * factor, waited);

	/* a signal: EINTR without SA_RESTART */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, &old));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &tick, NULL));
	t0 = abs_ms(0);
	EXPECT_EQ(-EINTR, job_info_wait(self->fd, a.job_id, abs_ms(30000), &info));
	waited = abs_ms(0) - t0;
	EXPECT_GT(5000000000LL * factor, waited);

	/* with SA_RESTART the wait goes on, to the job's end */
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &tick, NULL));
	EXPECT_EQ(0, job_info_wait(self->fd, a.job_id, abs_ms(60000 * factor), &info));
	EXPECT_EQ(0, sigaction(SIGALRM, &old, NULL));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(1, log[0]);
	EXPECT_EQ(0, log[1]);
	/* the gate had signalled before the job it held back ran */
	EXPECT_EQ(0, loom_syncobj_wait(self->fd, gate, 0));
	drmSyncobjDestroy(self->fd, gate);
}

TEST_F(job, job_info_rejects_bad_flags)
{
	uint64_t id = run_vadd(self, _metadata, 0, 0).job_id;
	struct drm_loom_job_info info;

	ASSERT_NE(0, id);
	info = (struct drm_loom_job_info){ .job_id = id, .flags = 1U << 1 };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	info = (struct drm_loom_job_info){ .job_id = id, .flags = ~0U };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	/* a deadline without the flag */
	info = (struct drm_loom_job_info){ .job_id = id, .timeout_ns = 1 };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	info = (struct drm_loom_job_info){ .flags = DRM_LOOM_JOB_INFO_WAIT };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	info = (struct drm_loom_job_info){ .job_id = id };
	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
}

/*
 * A binary built before uapi 10 passes the struct without timeout_ns (its
 * ioctl number says 120 bytes): the DRM core reads those and gives the
 * driver zero for the rest, and writes back no more than them.
 */
#define JOB_INFO_UAPI9_SIZE	offsetof(struct drm_loom_job_info, timeout_ns)
#define DRM_IOCTL_LOOM_JOB_INFO_UAPI9 \
	_IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, \
	     DRM_COMMAND_BASE + DRM_LOOM_JOB_INFO, JOB_INFO_UAPI9_SIZE)

TEST_F(job, job_info_of_the_old_size_is_answered)
{
	uint64_t id = run_vadd(self, _metadata, 0, 0).job_id;
	struct drm_loom_job_info info;

	ASSERT_NE(0, id);
	ASSERT_EQ(120, JOB_INFO_UAPI9_SIZE);
	/* beyond the old size: bytes the kernel must neither read nor write */
	memset(&info, 0xa5, sizeof(info));
	memset(&info, 0, JOB_INFO_UAPI9_SIZE);
	info.job_id = id;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO_UAPI9, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(8, info.counters.instances);
	EXPECT_EQ((int64_t)0xa5a5a5a5a5a5a5a5ULL, info.timeout_ns);
	/* WAIT from such a caller: its deadline reads 0, no sleep */
	info.flags = DRM_LOOM_JOB_INFO_WAIT;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO_UAPI9, &info));
	EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
	EXPECT_EQ((int64_t)0xa5a5a5a5a5a5a5a5ULL, info.timeout_ns);
}

/* A CQE32 ring's CQE carries the job id JOB_INFO knows (uapi 6). */
TEST_F(job, uring_cqe32_carries_the_job_id)
{
	struct drm_loom_job_info info;
	struct drm_loom_submit s;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	uint64_t id, job = 0, next;

	ASSERT_NE(0, test_get_param(self->fd, DRM_LOOM_PARAM_FEATURES) &
		  DRM_LOOM_FEATURE_URING_JOB_ID);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	for (int refused = 0; refused < 2; refused++) {
		s = submit_args(self, 0, vadd_cmd(self, 0, 4), NULL, 0);
		if (refused)
			s.queue = 99;
		sqe = io_uring_get_sqe(&ring);
		ASSERT_NE(NULL, sqe);
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
		sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
		sqe_set_submit(sqe, &s);
		sqe->user_data = 40 + refused;
		ASSERT_EQ(1, io_uring_submit(&ring));
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(40 + refused, cqe->user_data);
		EXPECT_EQ(refused ? -EINVAL : 0, cqe->res);
		id = cqe->big_cqe[0];
		io_uring_cqe_seen(&ring, cqe);
		if (refused) {
			EXPECT_EQ(0, id);
			continue;
		}
		ASSERT_NE(0, id);
		job = id;
		info = (struct drm_loom_job_info){ .job_id = id };
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
		EXPECT_EQ(DRM_LOOM_JOB_DONE, info.state);
		EXPECT_EQ(0, info.error);
		EXPECT_EQ(4, info.counters.instances);
	}
	/* the file's own numbering: the refused one took none, SUBMIT the next */
	s = submit_args(self, 0, vadd_cmd(self, 0, 4), NULL, 0);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_SUBMIT, &s));
	next = s.job_id;
	EXPECT_EQ(job + 1, next);
	io_uring_queue_exit(&ring);
}

TEST_F(job, uring_cmd_errors)
{
	struct io_uring ring, small;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct drm_loom_submit s = submit_args(self, 0, vadd_cmd(self, 0, 1), NULL, 0);

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128));
	s.queue = 99;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	sqe->user_data = 7;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(7, cqe->user_data);
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);

	/* a job that faults: the CQE carries the job's error */
	{
		uint32_t words[8];
		struct loom_cmd c = { words, 0 };

		cmd_load_config(&c, 0x7000000000ULL, self->vadd_size);
		s = submit_args(self, 1, put_cmd(&self->cmd, 1, &c), NULL, 0);
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	sqe->user_data = 10;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(10, cqe->user_data);
	EXPECT_EQ(-EFAULT, cqe->res);
	io_uring_cqe_seen(&ring, cqe);

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = 0x1234;			/* unknown command */
	sqe->user_data = 8;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);

	/* a 64-byte SQE cannot carry the submit */
	ASSERT_EQ(0, io_uring_queue_init(8, &small, 0));
	sqe = io_uring_get_sqe(&small);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe->user_data = 9;
	ASSERT_EQ(1, io_uring_submit(&small));
	ASSERT_EQ(0, io_uring_wait_cqe(&small, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&small, cqe);
	io_uring_queue_exit(&small);
}

/* ---- isolation and recovery ------------------------------------------------------- */

TEST_F(job, another_files_va_faults_and_is_untouched)
{
	int other = open(self->node.path, O_RDWR | O_CLOEXEC);
	struct loom_test_bo theirs;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	uint32_t words[32];
	struct loom_cmd c = { words, 0 };
	struct drm_loom_job_info info;
	struct drm_loom_submit s;
	uint32_t sync;
	int64_t n = 4;

	ASSERT_LE(0, other);
	/* Put their BO above every VA this file has mapped. */
	ASSERT_EQ(0, _test_bo_create(other, 64 << 20, 0, &theirs));
	theirs = loom_bo(other, 1 << 20);
	ASSERT_NE(NULL, theirs.map);
	memset(theirs.map, 0x5a, 1 << 20);
	/* our vector add, writing c at the other file's BO VA */
	cmd_load_config(&c, self->vadd_va, self->vadd_size);
	cmd_operands(&c, 3, (uint64_t[]){ self->data.va, self->data.va, theirs.va });
	cmd_dense(&c, 1, &n);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	s = submit_args(self, 0, put_cmd(&self->cmd, 0, &c), refs, 2);
	s.out_syncobj = sync;
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 5000));
	ASSERT_EQ(0, _test_job_info(self->fd, s.job_id, &info));
	EXPECT_EQ(-EFAULT, info.error);
	EXPECT_EQ(LOOM_STATUS_MMU_FAULT, info.hw_status);
	/* their BO may share our VA numerically but is not in our tables */
	for (int i = 0; i < (1 << 20); i++) {
		ASSERT_EQ(0x5a, ((unsigned char *)theirs.map)[i]);
	}
	close(other);
}

TEST_F(job, injected_faults_are_reported_and_the_core_recovers)
{
	struct drm_loom_job_info info;

	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	info = run_vadd(self, _metadata, 0, 200 * 1000 * 1000);
	EXPECT_EQ(-ETIMEDOUT, info.error);
	EXPECT_EQ(LOOM_STATUS_STOPPED, info.hw_status);
	EXPECT_EQ(LOOM_DUMP_SIZE(16), info.dump_size);
	info = run_vadd(self, _metadata, 0, 0);
	EXPECT_EQ(0, info.error) TH_LOG("the job after a hang");

	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_DMA_ERROR);
	info = run_vadd(self, _metadata, 0, 0);
	EXPECT_EQ(-EIO, info.error);
	EXPECT_EQ(LOOM_STATUS_DMA_ERROR, info.hw_status);

	loom_poke_core(&self->node, 1, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_MMU_FAULT);
	info = run_vadd(self, _metadata, 1, 0);
	EXPECT_EQ(-EFAULT, info.error);
	EXPECT_EQ(LOOM_STATUS_MMU_FAULT, info.hw_status);
	EXPECT_EQ(LOOM_MMU_FAULT_INJECTED, info.detail);
	EXPECT_NE(0, info.fault_va);

	info = run_vadd(self, _metadata, 1, 0);
	EXPECT_EQ(0, info.error);
}

TEST_F(job, hang_dump_reaches_job_info)
{
	static unsigned char dump[LOOM_DUMP_MAX_SIZE];
	struct loom_hw_dump *hdr = (struct loom_hw_dump *)dump;
	struct drm_loom_bo_ref refs[1] = {
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_job_info info = { 0 };
	struct drm_loom_submit s = submit_args(self, 0, vadd_cmd(self, 0, 8), refs, 1);
	uint32_t sync;

	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	s.deadline_ns = 200 * 1000 * 1000;
	s.out_syncobj = sync;
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000));
	info.job_id = s.job_id;
	info.dump = (uintptr_t)dump;
	info.dump_size = sizeof(dump);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info));
	EXPECT_EQ(-ETIMEDOUT, info.error);
	ASSERT_EQ(LOOM_DUMP_SIZE(16), info.dump_size);
	EXPECT_EQ(LOOM_DUMP_MAGIC, hdr->magic);
	EXPECT_EQ(LOOM_STATUS_STOPPED, hdr->status);
	EXPECT_EQ(4, hdr->width);
}

/*
 * Bans follow the process that opened the file: reopening the node does
 * not lift them, and another process is not punished.
 */
TEST_F(job, a_process_that_keeps_hanging_is_banned)
{
	struct drm_loom_submit s;
	struct drm_loom_job_info info;
	int first = self->fd, status;
	pid_t child;

	/* Another process hangs first: it is banned, we are not. */
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		if (reopen(self))
			_exit(3);
		for (int i = 0; i < DRM_LOOM_MAX_HANGS; i++) {
			loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
			info = run_vadd(self, _metadata, 0, 100 * 1000 * 1000);
			if (info.error != -ETIMEDOUT)
				_exit(1);
		}
		s = submit_args(self, 0, vadd_cmd(self, 0, 1), NULL, 0);
		_exit(_test_submit(self->fd, &s) == -ECANCELED ? 0 : 2);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("the other process was not banned");
	info = run_vadd(self, _metadata, 0, 0);
	EXPECT_EQ(0, info.error) TH_LOG("another process's ban reached us");

	for (int i = 0; i < DRM_LOOM_MAX_HANGS; i++) {
		loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
		info = run_vadd(self, _metadata, 0, 100 * 1000 * 1000);
		EXPECT_EQ(-ETIMEDOUT, info.error);
	}
	s = submit_args(self, 0, vadd_cmd(self, 0, 1), NULL, 0);
	EXPECT_EQ(-ECANCELED, _test_submit(self->fd, &s));
	/* Closing every file and opening a new one does not lift it. */
	close(first);
	ASSERT_EQ(0, reopen(self));
	s = submit_args(self, 0, vadd_cmd(self, 0, 1), NULL, 0);
	EXPECT_EQ(-ECANCELED, _test_submit(self->fd, &s));
}

/* A hang on one device leaves the other device's jobs alone. */
TEST(the_other_device_is_unaffected)
{
	struct loom_node nodes[2];
	struct {
		int fd;
		struct loom_test_bo cmd, cfg, data;
		uint32_t sync;
	} d[2];
	struct drm_loom_bo_ref refs[2];
	struct drm_loom_submit s;
	uint32_t words[32];
	int64_t n = 16;

	if (loom_find_nodes(nodes, 2) < 2)
		SKIP(return, "needs two loom devices");
	for (int i = 0; i < 2; i++) {
		struct loom_cmd c = { words, 0 };

		d[i].fd = open(nodes[i].path, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, d[i].fd);
		d[i].cmd = loom_bo(d[i].fd, 4096);
		d[i].cfg = loom_bo(d[i].fd, 4096);
		d[i].data = loom_bo(d[i].fd, 65536);
		ASSERT_NE(NULL, d[i].data.map);
		cmd_load_config(&c, d[i].cfg.va,
				loom_test_config_vector_add(d[i].cfg.map, 4096, 4, 4));
		cmd_operands(&c, 3, (uint64_t[]){ d[i].data.va, d[i].data.va,
						   d[i].data.va + 32768 });
		cmd_dense(&c, 1, &n);
		memcpy(d[i].cmd.map, words, c.len * 4);
		refs[0] = (struct drm_loom_bo_ref){ d[i].data.handle, DRM_LOOM_BO_REF_WRITE };
		refs[1] = (struct drm_loom_bo_ref){ d[i].cfg.handle, DRM_LOOM_BO_REF_READ };
		ASSERT_EQ(0, drmSyncobjCreate(d[i].fd, 0, &d[i].sync));
		s = (struct drm_loom_submit){
			.cmd_handle = d[i].cmd.handle, .cmd_size = c.len * 4,
			.bo_count = 2, .bos = (uintptr_t)refs,
			.out_syncobj = d[i].sync, .deadline_ns = 2000000000ULL,
		};
		if (i == 0)
			loom_poke_core(&nodes[0], 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
		ASSERT_EQ(0, _test_submit(d[i].fd, &s));
	}
	/* device 1 finishes while device 0 is still hung (2 s deadline) */
	EXPECT_EQ(0, loom_syncobj_wait(d[1].fd, d[1].sync, 1000));
	EXPECT_EQ(-ETIME, loom_syncobj_wait(d[0].fd, d[0].sync, 0));
	EXPECT_EQ(0, loom_syncobj_wait(d[0].fd, d[0].sync, 10000));
	for (int i = 0; i < 2; i++)
		close(d[i].fd);
}

/* ---- PRIME between devices (uapi 9) ------------------------------------------------ */

static int _test_bo_info(int fd, uint32_t handle, uint32_t pad, struct drm_loom_bo_info *info)
{
	*info = (struct drm_loom_bo_info){ .handle = handle, .pad = pad };
	return ioctl(fd, DRM_IOCTL_LOOM_BO_INFO, info) ? -errno : 0;
}

/*
 * A BO of device 0 exported as a dma-buf and imported by a file of device
 * 1 is mapped in that file's address space: a job of device 1 writes
 * through its VA into the memory device 0's CPU mapping shows.  A
 * device-read-only BO is not exported; another file of the same device
 * cannot import it.
 */
TEST(prime_import_maps_a_bo_of_another_device)
{
	struct loom_node nodes[2];
	struct loom_test_bo cmd, cfg, shared, ro = { 0 };
	struct drm_loom_bo_mmap_offset off = { 0 };
	struct drm_loom_bo_info info;
	struct drm_loom_bo_ref refs[3];
	struct drm_loom_submit s;
	struct drm_loom_job_info ji;
	uint32_t words[32], h1, h, sync;
	struct loom_cmd c = { words, 0 };
	int fd0, fd1, other, dmafd, rofd;
	int64_t n = 512, *a, *via1;

	if (loom_find_nodes(nodes, 2) < 2)
		SKIP(return, "needs two loom devices");
	fd0 = open(nodes[0].path, O_RDWR | O_CLOEXEC);
	fd1 = open(nodes[1].path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd0);
	ASSERT_LE(0, fd1);
	EXPECT_LE(9, test_get_param(fd1, DRM_LOOM_PARAM_UAPI_VERSION));
	EXPECT_TRUE(test_get_param(fd1, DRM_LOOM_PARAM_FEATURES) & DRM_LOOM_FEATURE_PRIME);
	shared = loom_bo(fd0, 65536);
	ASSERT_NE(NULL, shared.map);
	a = shared.map;
	for (int i = 0; i < 8192; i++)
		a[i] = i < 4096 ? i : -1;
	ASSERT_EQ(0, drmPrimeHandleToFD(fd0, shared.handle, DRM_CLOEXEC | DRM_RDWR, &dmafd));
	ASSERT_EQ(0, drmPrimeFDToHandle(fd1, dmafd, &h1));
	ASSERT_EQ(0, _test_bo_info(fd1, h1, 0, &info));
	EXPECT_EQ(65536, info.size);
	EXPECT_NE(0, info.va);
	EXPECT_EQ(-EINVAL, _test_bo_info(fd1, h1, 1, &info));
	EXPECT_EQ(-ENOENT, _test_bo_info(fd1, h1 + 100, 0, &info));
	/* importing it again gives the same handle */
	ASSERT_EQ(0, drmPrimeFDToHandle(fd1, dmafd, &h));
	EXPECT_EQ(h1, h);

	/* c = a + a on device 1, through the imported BO's VA */
	cmd = loom_bo(fd1, 4096);
	cfg = loom_bo(fd1, 4096);
	ASSERT_NE(NULL, cfg.map);
	ASSERT_EQ(0, _test_bo_info(fd1, h1, 0, &info));
	cmd_load_config(&c, cfg.va, loom_test_config_vector_add(cfg.map, 4096, 4, 4));
	cmd_operands(&c, 3, (uint64_t[]){ info.va, info.va, info.va + 32768 });
	cmd_dense(&c, 1, &n);
	memcpy(cmd.map, words, c.len * 4);
	refs[0] = (struct drm_loom_bo_ref){ h1, DRM_LOOM_BO_REF_WRITE };
	refs[1] = (struct drm_loom_bo_ref){ cfg.handle, DRM_LOOM_BO_REF_READ };
	ASSERT_EQ(0, drmSyncobjCreate(fd1, 0, &sync));
	s = (struct drm_loom_submit){
		.cmd_handle = cmd.handle, .cmd_size = c.len * 4,
		.bo_count = 2, .bos = (uintptr_t)refs, .out_syncobj = sync,
	};
	ASSERT_EQ(0, _test_submit(fd1, &s));
	ASSERT_EQ(0, loom_syncobj_wait(fd1, sync, 10000));
	ASSERT_EQ(0, _test_job_info(fd1, s.job_id, &ji));
	EXPECT_EQ(0, ji.error);
	for (int i = 0; i < 4096; i++) {
		int64_t want = i < n ? 2 * i : -1;

		ASSERT_EQ(want, a[4096 + i]);
	}
	/* the importer maps the same pages for the CPU */
	off.handle = h1;
	ASSERT_EQ(0, ioctl(fd1, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off));
	via1 = mmap(NULL, 65536, PROT_READ, MAP_SHARED, fd1, off.offset);
	ASSERT_NE(MAP_FAILED, via1);
	EXPECT_EQ(2 * 100, via1[4096 + 100]);
	munmap(via1, 65536);

	/* another file of device 0 cannot take device 0's own BO */
	other = open(nodes[0].path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	EXPECT_EQ(-EINVAL, drmPrimeFDToHandle(other, dmafd, &h) ? -errno : 0);
	close(other);
	/* a device-read-only BO is not exported */
	ASSERT_EQ(0, _test_bo_create(fd0, 4096, DRM_LOOM_BO_DEVICE_READ_ONLY, &ro));
	EXPECT_EQ(-EINVAL, drmPrimeHandleToFD(fd0, ro.handle, DRM_CLOEXEC, &rofd) ?
			   -errno : 0);

	/* the exporter's handle and file go first: the import keeps the pages */
	close(dmafd);
	close(fd0);
	refs[0] = (struct drm_loom_bo_ref){ h1, DRM_LOOM_BO_REF_WRITE };
	s.out_syncobj = sync;
	s.job_id = 0;
	ASSERT_EQ(0, _test_submit(fd1, &s));
	ASSERT_EQ(0, loom_syncobj_wait(fd1, sync, 10000));
	ASSERT_EQ(0, _test_job_info(fd1, s.job_id, &ji));
	EXPECT_EQ(0, ji.error);
	close(fd1);
}

TEST(fdinfo_keys)
{
	struct loom_node node;
	char path[64], buf[4096];
	struct loom_test_bo bo;
	ssize_t n;
	int fd, f;

	ASSERT_LE(1, loom_find_nodes(&node, 1));
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	bo = loom_bo(fd, 3 << 20);
	ASSERT_NE(NULL, bo.map);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	n = read(f, buf, sizeof(buf) - 1);
	ASSERT_LT(0, n);
	buf[n] = 0;
	close(f);
	EXPECT_NE(NULL, strstr(buf, "drm-driver:\tloom"));
	EXPECT_NE(NULL, strstr(buf, "drm-client-id:\t"));
	EXPECT_NE(NULL, strstr(buf, "drm-engine-core0:\t"));
	EXPECT_NE(NULL, strstr(buf, "drm-memory-system:\t3072 KiB"));
	close(fd);
}

TEST(debugfs_queues)
{
	struct loom_node node;
	char path[160], buf[4096];
	ssize_t n;
	int f;

	ASSERT_LE(1, loom_find_nodes(&node, 1));
	snprintf(path, sizeof(path), "%s/queues", node.debugfs);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f) TH_LOG("%s: %s", path, strerror(errno));
	n = read(f, buf, sizeof(buf) - 1);
	ASSERT_LT(0, n);
	buf[n] = 0;
	close(f);
	EXPECT_NE(NULL, strstr(buf, "core 0: head"));
	EXPECT_NE(NULL, strstr(buf, "jobs: done"));
	EXPECT_NE(NULL, strstr(buf, "put on the ring at SUBMIT: "));
}

TEST_HARNESS_MAIN
