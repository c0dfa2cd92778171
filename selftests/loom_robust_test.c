// SPDX-License-Identifier: GPL-2.0
/*
 * loom.ko against a hostile client and a misbehaving device: a BO closed
 * under a running job stays the job's until it ends; completions, heads and
 * dumps the device gets wrong fail only their job; limits on jobs in
 * flight, pinned memory and runtime; fdinfo accounting; mmap and bans
 * across files and processes; what a killed process's queued jobs get.
 */
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

/* Submits the command in @slot reading cfg; returns the job id, 0 on error. */
static uint64_t submit_slot(FIXTURE_DATA(job) *self, unsigned slot, uint32_t size,
			    uint32_t out, uint32_t flags)
{
	struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
	struct drm_loom_submit s = submit_args(self, slot, size, refs, 1);

	s.out_syncobj = out;
	s.flags = flags;
	return _test_submit(self->fd, &s) ? 0 : s.job_id;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * What submitting one job costs on this kernel, timed on 64 jobs (and their
 * runs: an upper bound).  The fixture then moves to a new file, whose
 * budget of jobs in flight is whole (the timed jobs give theirs back only
 * when the scheduler frees them).  0 on failure.
 */
static uint64_t submission_ns(FIXTURE_DATA(job) *self)
{
	uint32_t size = vadd_cmd(self, 2, 1), sync;
	int64_t t0 = now_ns();

	if (drmSyncobjCreate(self->fd, 0, &sync))
		return 0;
	for (int i = 0; i < 64; i++)
		if (!submit_slot(self, 2, size, sync, 0))
			return 0;
	if (loom_syncobj_wait(self->fd, sync, 10000 * loom_timeout_factor()))
		return 0;
	drmSyncobjDestroy(self->fd, sync);
	/* the old file stays open until the test's process exits */
	return reopen(self) ? 0 : (now_ns() - t0) / 64;
}

/*
 * Submits on core 0 a job that hangs until its deadline, long enough for
 * @n submissions of @per_ns each twice over, and a second: the jobs submitted behind
 * it stay in flight however slow the kernel is.  Its job id, or 0.
 */
static uint64_t submit_hung(FIXTURE_DATA(job) *self, unsigned int n, uint64_t per_ns,
			    uint32_t out)
{
	struct drm_loom_submit s = submit_args(self, 3, vadd_cmd(self, 3, 1), NULL, 0);

	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	s.deadline_ns = 1000000000ULL + 2ULL * n * per_ns;
	s.out_syncobj = out;
	return _test_submit(self->fd, &s) ? 0 : s.job_id;
}

/* ---- 1. a BO freed under a job ------------------------------------------------ */

/*
 * A job writes a BO it did not list; the BO is closed while the job runs.
 * Its pages must stay the job's until it ends (the job succeeds, nothing
 * faults), and memory handed out afterwards must read as zeros.  The device
 * caches translations: without the deferred free and the invalidation the
 * job keeps storing into pages the kernel reused.
 */
TEST_F(job, closed_bo_stays_the_jobs_until_it_ends)
{
	struct loom_test_bo victim = loom_bo(self->fd, 65536), fresh[64];
	struct drm_gem_close close_args = { 0 };
	uint32_t sync;
	uint64_t id;

	ASSERT_NE(NULL, victim.map);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	id = submit_slot(self, 0, long_cmd(self, 0, victim.va, 1 << 21), sync, 0);
	ASSERT_NE(0, id);
	usleep(200000);
	ASSERT_EQ(-1001, job_error(self, id)) TH_LOG("the job was too short to test");
	munmap(victim.map, victim.size);
	close_args.handle = victim.handle;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_GEM_CLOSE, &close_args));
	/*
	 * New pages come zeroed: take them while the job still runs, so that
	 * stores into the closed BO's old pages would show in them.
	 */
	for (int i = 0; i < 64; i++) {
		fresh[i] = loom_bo(self->fd, 65536);
		ASSERT_NE(NULL, fresh[i].map);
	}
	EXPECT_EQ(-1001, job_error(self, id)) TH_LOG("the job ended too soon to test");

	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 60000));
	EXPECT_EQ(0, job_error(self, id)) TH_LOG("the job lost its memory");
	for (int i = 0; i < 64; i++) {
		const uint64_t *word = fresh[i].map;
		size_t w = 0;

		while (w < 65536 / 8 && !word[w])
			w++;
		EXPECT_EQ(65536 / 8, w) TH_LOG("fresh BO %d is not zero at word %zu", i, w);
	}
}

/* ---- 2. a device that lies ------------------------------------------------------ */

TEST_F(job, corrupt_dump_header_is_refused)
{
	struct drm_loom_job_info info;

	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_CORRUPT_DUMP);
	info = run_vadd(self, _metadata, 0, 0);
	EXPECT_EQ(-EIO, info.error);
	EXPECT_EQ(LOOM_STATUS_DMA_ERROR, info.hw_status);
	EXPECT_EQ(0, info.dump_size) TH_LOG("a 255x255 dump on a 4x4 fabric was kept");
	info = run_vadd(self, _metadata, 0, 0);
	EXPECT_EQ(0, info.error);
}

TEST_F(job, unwritten_completion_is_not_another_jobs_result)
{
	struct drm_loom_job_info info;

	/* The slots hold good records of earlier jobs: none may be reused. */
	for (int i = 0; i < 70; i++)
		EXPECT_EQ(0, run_vadd(self, _metadata, 0, 0).error);
	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_SKIP_COMPLETION);
	info = run_vadd(self, _metadata, 0, 0);
	EXPECT_EQ(-EPROTO, info.error);
	EXPECT_EQ(0, info.hw_status);
	EXPECT_EQ(0, info.counters.cycles);
	EXPECT_EQ(0, run_vadd(self, _metadata, 0, 0).error);
}

TEST_F(job, completion_with_wrong_seqno_fails_its_job)
{
	struct drm_loom_job_info info;

	loom_poke_core(&self->node, 1, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_WRONG_SEQNO);
	info = run_vadd(self, _metadata, 1, 0);
	EXPECT_EQ(-EPROTO, info.error);
	EXPECT_EQ(0, info.counters.cycles);
	EXPECT_EQ(0, run_vadd(self, _metadata, 1, 0).error);
}

/*
 * A long job's completion comes with a head 32 slots ahead, while a second
 * long job and the jobs queued behind it have not run: none of them may be
 * taken as done before the device did it (each record is its own, the log
 * is complete when the last fence signals).
 */
TEST_F(job, bogus_head_completes_nothing_early)
{
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	uint64_t ids[N], first, second;
	uint32_t sync;

	ASSERT_NE(NULL, scratch.map);
	memset(log, 0xff, 8 * (N + 1));
	log[0] = 0;
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_BOGUS_HEAD);
	first = submit_slot(self, 100, long_cmd(self, 100, scratch.va, 1 << 19), 0, 0);
	second = submit_slot(self, 101, long_cmd(self, 101, scratch.va + 64, 1 << 19), 0, 0);
	ASSERT_NE(0, first);
	ASSERT_NE(0, second);
	for (unsigned i = 0; i < N; i++) {
		struct drm_loom_submit s = submit_args(self, i, counter_cmd(self, i, i), refs, 2);

		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		ids[i] = s.job_id;
	}
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 20000));
	EXPECT_EQ(0, job_error(self, first));
	EXPECT_EQ(0, job_error(self, second));
	for (unsigned i = 0; i < N; i++) {
		struct drm_loom_job_info info;

		ASSERT_EQ(0, _test_job_info(self->fd, ids[i], &info));
		EXPECT_EQ(0, info.error) TH_LOG("job %u", i);
		EXPECT_NE(0, info.counters.cycles) TH_LOG("job %u: not its own record", i);
		EXPECT_EQ(i, log[1 + i]);
	}
}

/*
 * A doorbell the device never saw: the job waits unseen on the ring until
 * the hang check notices the device's tail is not the driver's and rings
 * again.  The job must run, not be declared hung after its deadline.
 */
TEST_F(job, a_lost_doorbell_is_rung_again)
{
	long long lost = loom_core_stat(&self->node, 1, "doorbells rung again: ");
	struct drm_loom_job_info info;
	int64_t *d = self->data.map;

	for (int i = 0; i < 8; i++)
		d[i] = i, d[1024 + i] = 100, d[2048 + i] = 0;
	loom_poke_core(&self->node, 1, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_LOST_DOORBELL);
	info = run_vadd(self, _metadata, 1, 300 * 1000 * 1000);
	EXPECT_EQ(0, info.error);
	EXPECT_EQ(LOOM_STATUS_OK, info.hw_status);
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(i + 100, d[2048 + i]);
	EXPECT_LE(0, lost);
	EXPECT_EQ(lost + 1, loom_core_stat(&self->node, 1, "doorbells rung again: "));
	EXPECT_EQ(0, run_vadd(self, _metadata, 1, 0).error);
}

/* An interrupt with nothing completed: nothing is taken as done early. */
TEST_F(job, a_spurious_interrupt_completes_nothing)
{
	long long idle = loom_core_stat(&self->node, 0, "interrupts with nothing to reap: ");
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	uint64_t first;
	uint32_t sync;

	ASSERT_NE(NULL, scratch.map);
	memset(log, 0xff, 16);
	log[0] = 0;
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	/* the interrupt fires as the long job starts; the counter job waits */
	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_SPURIOUS_IRQ);
	first = submit_slot(self, 100, long_cmd(self, 100, scratch.va, 1 << 18), 0, 0);
	ASSERT_NE(0, first);
	{
		struct drm_loom_submit s = submit_args(self, 0, counter_cmd(self, 0, 0), refs, 2);

		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
	}
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 20000));
	EXPECT_EQ(0, job_error(self, first));
	EXPECT_EQ(0, log[1]);		/* the counter job ran, after */
	EXPECT_LE(0, idle);
	EXPECT_LT(idle, loom_core_stat(&self->node, 0, "interrupts with nothing to reap: "));
	drmSyncobjDestroy(self->fd, sync);
}

/* ---- 4. resource limits -------------------------------------------------------- */

/* the hung job's deadline scales with the kernel's speed: allow for it */
TEST_F_TIMEOUT(job, inflight_jobs_are_bounded, 180)
{
	uint64_t per = submission_ns(self);
	uint32_t size;
	unsigned n = 0;

	/* A hung job first: everything after it stays in flight. */
	ASSERT_NE(0, per);
	TH_LOG("a submission takes at most %.3f ms here", per / 1e6);
	ASSERT_NE(0, submit_hung(self, 2 * DRM_LOOM_MAX_INFLIGHT_JOBS, per, 0));
	size = vadd_cmd(self, 1, 1);
	while (n < 2 * DRM_LOOM_MAX_INFLIGHT_JOBS &&
	       submit_slot(self, 1, size, 0, DRM_LOOM_SUBMIT_NONBLOCK))
		n++;
	EXPECT_EQ(DRM_LOOM_MAX_INFLIGHT_JOBS - 1, n);
	{
		struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
		struct drm_loom_submit s = submit_args(self, 1, size, refs, 1);

		s.flags = DRM_LOOM_SUBMIT_NONBLOCK;
		EXPECT_EQ(-EAGAIN, _test_submit(self->fd, &s));
		/* without the flag it waits for room, then goes in */
		s.flags = 0;
		EXPECT_EQ(0, _test_submit(self->fd, &s));
	}
}

/*
 * io_uring issues a command inline holding its ring lock: with the file's
 * budget full the driver must not wait there.  io_uring_submit() returns
 * while the (hung) job that holds the budget is still there; the command
 * completes once there is room.
 */
TEST_F_TIMEOUT(job, uring_submit_never_waits_inline_for_room, 180)
{
	struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
	struct __kernel_timespec ts = { .tv_sec = 60 };
	struct drm_loom_submit s;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	uint64_t per = submission_ns(self);
	uint32_t size, sync;

	ASSERT_NE(0, per);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	ASSERT_NE(0, submit_hung(self, DRM_LOOM_MAX_INFLIGHT_JOBS, per, sync));
	size = vadd_cmd(self, 1, 1);
	for (int i = 1; i < DRM_LOOM_MAX_INFLIGHT_JOBS; i++)
		ASSERT_NE(0, submit_slot(self, 1, size, 0, DRM_LOOM_SUBMIT_NONBLOCK));
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, IORING_SETUP_SQE128));
	sqe = io_uring_get_sqe(&ring);
	s = submit_args(self, 1, size, refs, 1);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	ASSERT_EQ(1, io_uring_submit(&ring));
	/* (its record is long recycled: ask its fence) */
	EXPECT_EQ(-ETIME, loom_syncobj_wait(self->fd, sync, 0))
		TH_LOG("io_uring_submit waited for room");
	ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
}

TEST_F(job, pinned_memory_is_capped_per_file)
{
	struct loom_test_bo bo[40];
	struct drm_gem_close close_args = { 0 };
	int other, n = 0;

	ASSERT_EQ(0, set_param("max_pinned_mb", 16));
	other = open(self->node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	while (n < 40 && !_test_bo_create(other, 1 << 20, 0, &bo[n]))
		n++;
	EXPECT_EQ(16, n);
	EXPECT_EQ(-ENOSPC, _test_bo_create(other, 1 << 20, 0, &bo[n]));
	/* the cap is per file: this one still has room */
	EXPECT_EQ(0, _test_bo_create(self->fd, 1 << 20, 0, &bo[39]));
	close_args.handle = bo[0].handle;
	ASSERT_EQ(0, ioctl(other, DRM_IOCTL_GEM_CLOSE, &close_args));
	EXPECT_EQ(0, _test_bo_create(other, 1 << 20, 0, &bo[0]));
	close(other);
	ASSERT_EQ(0, set_param("max_pinned_mb", 1024));
}

/* MemTotal in MiB, from /proc/meminfo; -1 if unreadable. */
static long long mem_total_mb(void)
{
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f && fscanf(f, "MemTotal: %lld kB", &kb) != 1)
		kb = -1;
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

/*
 * Many files together may not pin more than max_pinned_total_mb, or by
 * default half the RAM: without that cap, opening more files pinned every
 * page and the OOM killer took processes whose RSS did not show the BOs.
 */
TEST_F(job, pinned_memory_is_capped_across_files)
{
	long long ram = mem_total_mb(), mb = 0;
	struct loom_test_bo bo;
	int fds[64], nf, err = 0;

	ASSERT_LT(0, ram);
	/* the default: half the RAM, then ENOSPC, never the OOM killer */
	for (nf = 0; nf < 64; nf++) {
		fds[nf] = open(self->node.path, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[nf]);
		while (!(err = _test_bo_create(fds[nf], 8 << 20, 0, &bo)) && mb < ram)
			mb += 8;
		if (err)
			break;
	}
	EXPECT_EQ(-ENOSPC, err);
	EXPECT_LE(ram / 2 - 16, mb);
	EXPECT_GE(ram / 2, mb);
	for (nf = nf < 64 ? nf : 63; nf >= 0; nf--)
		close(fds[nf]);

	ASSERT_EQ(0, set_param("max_pinned_total_mb", 48));
	for (nf = 0; nf < 3; nf++) {
		fds[nf] = open(self->node.path, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[nf]);
	}
	/* the fixture's BOs count too: about 1.3 MiB */
	mb = 0;
	while (!(err = _test_bo_create(fds[mb % 3], 1 << 20, 0, &bo)))
		mb++;
	EXPECT_EQ(-ENOSPC, err);
	EXPECT_LE(45, mb);
	EXPECT_GE(47, mb);
	close(fds[0]);		/* frees its BOs: room again */
	EXPECT_EQ(0, _test_bo_create(fds[1], 1 << 20, 0, &bo));
	close(fds[1]);
	close(fds[2]);
	ASSERT_EQ(0, set_param("max_pinned_total_mb", 0));
}

/* memory.current of the cgroup v2 group @dir; -1 if unreadable. */
static long long memcg_current(const char *dir)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.current", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Writes @val into the cgroup file @dir/@name; 0 or -1. */
static int cg_write(const char *dir, const char *name, const char *val)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	return fclose(f) ? -1 : ret;
}

/*
 * What a job costs the kernel is charged to the submitter's memory cgroup:
 * 48 jobs listing DRM_LOOM_MAX_BOS BOs each, held in flight behind a hung
 * job, show in memory.current (~18 KiB of BO lists each).  (On a kernel with
 * lockdep, a full job's reservations are also the most it can count.)
 */
/* 2046 BOs and 48 full jobs take a while on a KASAN and lockdep kernel */
TEST_F_TIMEOUT(job, job_memory_is_charged_to_the_submitters_cgroup, 180)
{
	static struct drm_loom_bo_ref refs[DRM_LOOM_MAX_BOS];
	const char *cg = "/sys/fs/cgroup/loom-test";
	long long before, during;
	uint32_t size, sync;
	uint64_t one, deadline;
	char pid[32];

	mkdir("/sys/fs/cgroup", 0755);
	mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	if (cg_write("/sys/fs/cgroup", "cgroup.subtree_control", "+memory"))
		SKIP(return, "no cgroup v2 memory controller");
	mkdir(cg, 0755);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, cg_write(cg, "cgroup.procs", pid));

	for (int i = 0; i < DRM_LOOM_MAX_BOS; i++) {
		struct loom_test_bo bo;

		ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &bo));
		refs[i] = (struct drm_loom_bo_ref){ bo.handle, DRM_LOOM_BO_REF_READ };
	}
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	size = vadd_cmd(self, 1, 1);
	/*
	 * The hung job must outlast the 48 submissions: on a KASAN and lockdep
	 * kernel one takes a large part of a second.  Time one first.
	 */
	{
		struct drm_loom_submit s = submit_args(self, 1, size, refs, DRM_LOOM_MAX_BOS);
		uint64_t t0 = now_ns();

		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 30000 * loom_timeout_factor()));
		one = now_ns() - t0;
		ASSERT_EQ(0, drmSyncobjReset(self->fd, &sync, 1));
	}
	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	{
		struct drm_loom_submit s = submit_args(self, 0, vadd_cmd(self, 0, 1), NULL, 0);

		deadline = 4000000000ULL + 4 * 48 * one;
		TH_LOG("one full submission took %.3f s: the hung job's deadline is %.1f s",
		       one / 1e9, deadline / 1e9);
		s.deadline_ns = deadline;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
	}
	before = memcg_current(cg);
	ASSERT_LT(0, before);
	for (int i = 0; i < 48; i++) {
		struct drm_loom_submit s = submit_args(self, 1, size, refs, DRM_LOOM_MAX_BOS);

		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
	}
	during = memcg_current(cg);
	EXPECT_EQ(-ETIME, loom_syncobj_wait(self->fd, sync, 0)) TH_LOG("the jobs ran too soon");
	/*
	 * At least half of their 8-byte BO pointers: memory.current moves in
	 * per-CPU batches of 64 pages, so a batch charged before may cover
	 * part of them (770048 of 785664 bytes was seen).  Uncharged, it
	 * would not move at all.
	 */
	EXPECT_LE(48LL * DRM_LOOM_MAX_BOS * 8 / 2, during - before)
		TH_LOG("48 jobs of %d BOs added %lld bytes", DRM_LOOM_MAX_BOS, during - before);
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync,
				       deadline / 1000000 + 30000 * loom_timeout_factor()));
}

/* ---- 5. one client holding a core ------------------------------------------------ */

/* A job that keeps progressing is still stopped at the runtime cap. */
TEST_F(job, runtime_is_capped)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
	struct drm_loom_submit s;
	uint32_t sync;
	uint64_t id;

	ASSERT_EQ(0, set_param("max_job_ms", 500));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	id = submit_slot(self, 0, long_cmd(self, 0, self->data.va, 1LL << 30), sync, 0);
	ASSERT_NE(0, id);
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000));
	EXPECT_EQ(-ETIMEDOUT, job_error(self, id));

	/* the same through io_uring: the CQE comes, with the error */
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, IORING_SETUP_SQE128));
	sqe = io_uring_get_sqe(&ring);
	s = submit_args(self, 1, long_cmd(self, 1, self->data.va, 1LL << 30), refs, 1);
	s.queue = 1;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	ASSERT_EQ(1, io_uring_submit(&ring));
	{
		struct __kernel_timespec ts = { .tv_sec = 10 };

		ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	}
	EXPECT_EQ(-ETIMEDOUT, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	ASSERT_EQ(0, set_param("max_job_ms", 60000));
}

/*
 * A ring that goes away with a command pending: where io_uring can cancel
 * commands, the ring lets go of the command (and of the loom file it
 * holds) at once, instead of keeping both until the job ends; the job
 * still runs to its end.  Without cancellation the file stays open, and
 * loom.ko pinned, as long as the job runs.
 */
TEST_F(job, ring_teardown_cancels_pending_commands)
{
	uint64_t features = test_get_param(self->fd, DRM_LOOM_PARAM_FEATURES);
	long refs_before = module_refcnt();
	long long done_before = loom_core_stat(&self->node, 0, "jobs: done ");
	long long done_at_release;
	int status, waited_ms;
	pid_t child;

	if (!(features & DRM_LOOM_FEATURE_URING_CANCEL))
		SKIP(return, "this kernel's io_uring cannot cancel commands: teardown waits");
	ASSERT_LE(1, refs_before);
	ASSERT_LE(0, done_before);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct drm_loom_bo_ref refs[1];
		struct drm_loom_submit s;
		struct io_uring ring;
		struct io_uring_sqe *sqe;

		/* Its own file: the ring's command holds the only reference. */
		if (reopen(self))
			_exit(2);
		refs[0] = (struct drm_loom_bo_ref){ self->cfg.handle, DRM_LOOM_BO_REF_READ };
		s = submit_args(self, 0, long_cmd(self, 0, self->data.va, 1 << 22), refs, 1);
		if (io_uring_queue_init(4, &ring, IORING_SETUP_SQE128))
			_exit(3);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
		sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
		sqe_set_submit(sqe, &s);
		if (io_uring_submit(&ring) != 1)
			_exit(4);
		close(self->fd);
		_exit(0);	/* the ring goes with the process */
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, status);
	/* The ring's teardown runs in a kernel worker: give it a moment. */
	for (waited_ms = 0; waited_ms < 2000 && module_refcnt() != refs_before; waited_ms += 10)
		usleep(10000);
	done_at_release = loom_core_stat(&self->node, 0, "jobs: done ");
	EXPECT_EQ(refs_before, module_refcnt())
		TH_LOG("the child's loom file is still open %d ms after it exited", waited_ms);
	/* Let go before the job ended: the teardown did not wait for it. */
	EXPECT_EQ(done_before, done_at_release);
	/* ... and the job still ran to its end. */
	for (int i = 0; i < 3000 && loom_core_stat(&self->node, 0, "jobs: done ") == done_before; i++)
		usleep(10000);
	EXPECT_EQ(done_before + 1, loom_core_stat(&self->node, 0, "jobs: done "));
}

/* ---- 6. long jobs through many hang checks ---------------------------------- */

/*
 * Long jobs are checked every 100 ms and left alone; the jobs queued behind
 * them on both cores all run, in order, exactly once.
 */
TEST_F(job, long_jobs_and_the_jobs_behind_them_all_complete)
{
	int64_t *log = self->data.map;
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	uint64_t longs[2], ids[N];
	uint32_t sync;

	ASSERT_NE(NULL, scratch.map);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	for (unsigned q = 0; q < 2; q++) {
		struct drm_loom_submit s = submit_args(self, 100 + q,
						       long_cmd(self, 100 + q, scratch.va + 64 * q,
								1 << 20), refs + 1, 1);

		s.queue = q;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		longs[q] = s.job_id;
	}
	memset(log, 0xff, 8 * (N + 1));
	log[0] = 0;
	for (unsigned i = 0; i < N; i++) {
		struct drm_loom_submit s = submit_args(self, i, counter_cmd(self, i, i), refs, 2);

		s.queue = i % 2;
		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		ids[i] = s.job_id;
	}
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 60000));
	for (unsigned q = 0; q < 2; q++)
		EXPECT_EQ(0, job_error(self, longs[q]));
	/* implicit fencing on data orders the log across the two cores */
	for (unsigned i = 0; i < N; i++) {
		EXPECT_EQ(0, job_error(self, ids[i]));
		EXPECT_EQ(i, log[1 + i]);
	}
}

/* Nanoseconds one BO_CREATE of @mb MiB takes (the best of @runs), 0 on error. */
static int64_t bo_create_ns(int fd, uint64_t mb, int runs)
{
	int64_t best = 0;

	for (int r = 0; r < runs; r++) {
		struct drm_gem_close cl = { 0 };
		struct loom_test_bo bo;
		int64_t t0 = now_ns(), t;

		if (_test_bo_create(fd, mb << 20, 0, &bo))
			return 0;
		t = now_ns() - t0;
		cl.handle = bo.handle;
		ioctl(fd, DRM_IOCTL_GEM_CLOSE, &cl);
		if (!best || t < best)
			best = t;
	}
	return best;
}

/*
 * Mapping a BO writes one PTE per page; finding the tables for it must not
 * walk every table of the address space (it once did: quadratic in the
 * size, 2.7e8 steps for 1 GiB, with no reschedule).  The cost per MiB of
 * each size the VM's memory allows (up to 1 GiB; loom-vm's 512M gives 256
 * MiB) must stay within three times that of 32 MiB.  Under TCG allocating
 * and zeroing the pages costs most of it, so this bounds a gross
 * regression; the figures are in Documentation/benchmarks.rst, and
 * loom_observe_test times the page-table writes alone.
 */
TEST_F_TIMEOUT(job, bo_create_maps_in_linear_time, 300)
{
	int64_t per32 = 0;
	uint64_t mb, top = 0;

	ASSERT_EQ(0, set_param("max_pinned_mb", 2048));
	ASSERT_EQ(0, set_param("max_pinned_total_mb", 4096));
	for (mb = 32; mb <= 1024 && mb + 128 <= (uint64_t)mem_available_mb(); mb *= 2) {
		int64_t t = bo_create_ns(self->fd, mb, mb <= 256 ? 3 : 1);

		ASSERT_NE(0, t) TH_LOG("BO_CREATE of %llu MiB failed", (unsigned long long)mb);
		TH_LOG("BO_CREATE %5llu MiB: %8.1f ms, %6.3f ms/MiB", (unsigned long long)mb,
		       t / 1e6, t / 1e6 / mb);
		if (mb == 32)
			per32 = t / 32;
		else
			EXPECT_GT(3 * per32, t / (int64_t)mb)
				TH_LOG("%llu MiB costs %.1fx per MiB what 32 MiB does",
				       (unsigned long long)mb, (double)t / mb / per32);
		top = mb;
	}
	ASSERT_EQ(0, set_param("max_pinned_mb", 1024));
	ASSERT_EQ(0, set_param("max_pinned_total_mb", 0));
	ASSERT_LE(128, top) TH_LOG("too little memory to measure");
}

/* ---- 7. accounting and small things ------------------------------------------------ */

/*
 * A BO_CREATE whose page-table allocation fails after it wrote some PTEs
 * (debugfs fail_pt_alloc injects it): a job of the file could have reached
 * those pages and the device cached the translations, so the driver must
 * invalidate the TLB before letting them go, and free them only once the
 * file's jobs are done.  The ioctl fails with ENOMEM and nothing leaks:
 * the pinned memory goes back once the job running meanwhile ends.
 */
TEST_F(job, failed_bo_create_invalidates_before_freeing)
{
	volatile uint32_t *bar = loom_map_bar0(&self->node);
	char knob[160];
	struct loom_test_bo bo;
	long long total;
	uint32_t before, sync;
	uint64_t id;

	snprintf(knob, sizeof(knob), "%s/fail_pt_alloc", self->node.debugfs);
	if (access(knob, W_OK))
		SKIP(return, "no %s", knob);
	ASSERT_NE(NULL, bar);
	if (!(loom_reg(bar, LOOM_REG_CAPS) & LOOM_CAP_TLB))
		SKIP(return, "the device caches no translations");
	total = fdinfo_value(self->fd, "drm-total-system");
	ASSERT_LT(0, total);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	/* a job runs on the file's address space meanwhile */
	id = submit_slot(self, 0, long_cmd(self, 0, self->data.va + 4096, 1 << 20), sync, 0);
	ASSERT_NE(0, id);
	before = loom_reg(bar, LOOM_REG_MMU_INVALIDATE);
	/* 8 MiB fills the fixture's last table first, then needs new ones */
	ASSERT_EQ(0, loom_write_file(knob, "1"));
	EXPECT_EQ(-ENOMEM, _test_bo_create(self->fd, 8 << 20, 0, &bo));
	EXPECT_NE(before, loom_reg(bar, LOOM_REG_MMU_INVALIDATE))
		TH_LOG("PTEs were cleared without a TLB invalidation");
	ASSERT_EQ(0, loom_write_file(knob, "0"));
	/* held (and counted) while the job that may reach them runs */
	if (job_error(self, id) == -1001) {
		EXPECT_LT(total, fdinfo_value(self->fd, "drm-total-system"))
			TH_LOG("the pages went while a job of the file ran");
	} else {
		TH_LOG("the job ended too soon to see the deferred free");
	}
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 60000));
	EXPECT_EQ(0, job_error(self, id));
	/* the failed BO's pages are gone once the job ended */
	for (int i = 0; i < 100 && fdinfo_value(self->fd, "drm-total-system") != total; i++)
		usleep(10000);
	EXPECT_EQ(total, fdinfo_value(self->fd, "drm-total-system"));
	/* and BO_CREATE works again */
	bo = loom_bo(self->fd, 8 << 20);
	EXPECT_NE(NULL, bo.map);
	munmap((void *)bar, LOOM_BAR0_SIZE);
	drmSyncobjDestroy(self->fd, sync);
}

/* Every job's busy time counts, short ones too. */
TEST_F(job, fdinfo_counts_every_jobs_busy_time)
{
	int64_t extent = 1024, wall = 0, t;
	long long before, after;
	uint32_t sync, size;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	/*
	 * A job of roughly 10 ms on this machine, more on a slow kernel: the
	 * submission and the wait, which no engine counts, must stay small.
	 */
	for (;;) {
		size = long_cmd(self, 0, self->data.va, extent);
		t = now_ns();
		ASSERT_NE(0, submit_slot(self, 0, size, sync, 0));
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000));
		if (now_ns() - t >= 10000000LL * loom_timeout_factor() || extent >= 1 << 24)
			break;
		extent *= 2;
	}
	before = fdinfo_value(self->fd, "drm-engine-core0");
	for (int i = 0; i < 100; i++) {
		t = now_ns();
		ASSERT_NE(0, submit_slot(self, 0, size, sync, 0));
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000));
		wall += now_ns() - t;
	}
	after = fdinfo_value(self->fd, "drm-engine-core0");
	EXPECT_LE(wall / 2, after - before)
		TH_LOG("100 jobs took %lld ns, fdinfo counted %lld", (long long)wall,
		       after - before);
	EXPECT_EQ(1, fdinfo_value(self->fd, "drm-engine-capacity-core0"));
	EXPECT_LE((CMD_BO_SIZE + 8192 + (1 << 20)) / 1024,
		  fdinfo_value(self->fd, "drm-total-system"));
	EXPECT_EQ(fdinfo_value(self->fd, "drm-total-system"),
		  fdinfo_value(self->fd, "drm-resident-system"));
}

/* The mmap offset of one file's BO maps nothing through another file. */
TEST_F(job, mmap_of_another_files_offset_is_refused)
{
	struct drm_loom_bo_mmap_offset off = { .handle = self->data.handle };
	int other = open(self->node.path, O_RDWR | O_CLOEXEC);
	void *p;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, other, off.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	close(other);
}

/*
 * A forked child shares the file; it exits first, with jobs of its own in
 * flight: the parent's file, BOs and jobs go on.
 */
TEST_F(job, child_sharing_the_file_exits_first)
{
	pid_t child = fork();
	int status;

	ASSERT_LE(0, child);
	if (!child) {
		submit_slot(self, 5, long_cmd(self, 5, self->data.va + 4096, 1 << 18), 0, 0);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, run_vadd(self, _metadata, 0, 0).error);
	EXPECT_EQ(0, run_vadd(self, _metadata, 1, 0).error);
}

/*
 * Another user's process, with a file of its own, reaches none of our BOs:
 * our mmap offsets are refused, and the same VAs in its address space are
 * its own BOs.
 */
TEST_F(job, another_user_reaches_nothing)
{
	struct drm_loom_bo_mmap_offset off = { .handle = self->data.handle };
	uint64_t *c = (uint64_t *)((char *)self->data.map + 16384);
	int status;
	pid_t child;

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off));
	for (int i = 0; i < 8; i++)
		c[i] = 0x1234;
	ASSERT_EQ(0, chmod(self->node.path, 0666));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(self->fd);
		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (reopen(self))
			_exit(11);
		if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, off.offset) != MAP_FAILED)
			_exit(12);
		/* writes c = a + b at the same VAs, in its own address space */
		_exit(run_vadd(self, _metadata, 0, 0).error == 0 ? 0 : 13);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	chmod(self->node.path, 0600);
	EXPECT_EQ(0, WEXITSTATUS(status));
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(0x1234, c[i]);
}

/* Sends @fd over @sock. */
static int send_fd(int sock, int fd)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * A job that hangs after its file was closed is recovered like any other,
 * the closed file's jobs behind it are run again, and another file's jobs
 * behind those complete.  On the debug kernel lane kmemleak then checks
 * that nothing of the closed file's jobs is left.
 */
TEST_F(job, hung_job_of_a_closed_file_is_recovered)
{
	long long resets = loom_core_stat(&self->node, 0, "resets ");
	struct loom_test_bo old[3] = { self->cmd, self->cfg, self->data };
	int closed = self->fd;
	uint32_t sync;
	uint64_t id;

	ASSERT_LE(0, resets);
	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	{
		struct drm_loom_submit s = submit_args(self, 0, vadd_cmd(self, 0, 1), NULL, 0);

		s.deadline_ns = 500000000ULL;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
	}
	for (unsigned int i = 1; i <= 2; i++)
		ASSERT_NE(0, submit_slot(self, i, vadd_cmd(self, i, 1), 0, 0));
	ASSERT_EQ(0, reopen(self));
	for (int i = 0; i < 3; i++)
		munmap(old[i].map, old[i].size);
	close(closed);

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	id = submit_slot(self, 0, vadd_cmd(self, 0, 1), sync, 0);
	ASSERT_NE(0, id);
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 20000 * loom_timeout_factor()));
	EXPECT_EQ(0, job_error(self, id));
	EXPECT_EQ(resets + 1, loom_core_stat(&self->node, 0, "resets "));
	drmSyncobjDestroy(self->fd, sync);
}

/* The status of the fence in @syncobj: 1 signalled, 0 not yet, or its -errno. */
static int syncobj_status(int fd, uint32_t syncobj)
{
	struct sync_file_info info = { 0 };
	int f, ret;

	if (drmSyncobjExportSyncFile(fd, syncobj, &f))
		return -1000;
	ret = ioctl(f, SYNC_IOC_FILE_INFO, &info) ? -1001 : info.status;
	close(f);
	return ret;
}

/* Runs a long job of @extent instances on core 0; its wall time in ns, 0 on error. */
static int64_t time_long_job(FIXTURE_DATA(job) *self, int64_t extent)
{
	uint32_t sync;
	int64_t t0;

	if (drmSyncobjCreate(self->fd, 0, &sync))
		return 0;
	t0 = now_ns();
	if (!submit_slot(self, 10, long_cmd(self, 10, self->data.va, extent), sync, 0) ||
	    loom_syncobj_wait(self->fd, sync, 60000))
		return 0;
	drmSyncobjDestroy(self->fd, sync);
	return now_ns() - t0;
}

/*
 * A job the hang check condemns may end on its own before recovery stops
 * the core; the stop then meets the next job on the ring, here another
 * file's.  That job must run again and succeed, and the job that ended
 * must keep its own result: not -ETIMEDOUT, no strike against its owner.
 * debugfs's hang_stop_delay_ms holds recovery between the hang decision
 * and STOP for 6 s, so the job, sized to end one limit after ten
 * deadlines (its runtime limit), ends inside that window.
 */
TEST_F_TIMEOUT(job, a_job_ending_at_its_limit_fails_no_one_else, 300)
{
	const int64_t deadline = 200000000LL, limit = 10 * deadline, delay_ms = 6000;
	FIXTURE_DATA(job) other = *self;
	char knob[160];
	int64_t per, t;
	int64_t extent = 4096;
	int attempt;

	snprintf(knob, sizeof(knob), "%s/hang_stop_delay_ms", self->node.debugfs);
	if (access(knob, W_OK))
		SKIP(return, "no %s", knob);
	ASSERT_EQ(0, reopen(&other));
	/* instances per ns, from a run of at least 150 ms */
	while ((t = time_long_job(self, extent)) > 0 && t < 150000000LL)
		extent *= 2;
	ASSERT_LT(0, t);
	per = t / extent;
	{
		char val[24];

		snprintf(val, sizeof(val), "%lld", (long long)delay_ms);
		ASSERT_EQ(0, loom_write_file(knob, val));
	}
	for (attempt = 0; attempt < 3; attempt++) {
		long long resets = loom_core_stat(&self->node, 0, "resets ");
		/*
		 * ends at 2 limits: after the decision (at 1 limit plus a hang
		 * check or two), before the stop (3 more limits later), at a
		 * device up to twice as slow or fast as when timed
		 */
		int64_t n = 2 * limit / (per ? per : 1);
		struct drm_loom_bo_ref refs[1] = { { other.cfg.handle, DRM_LOOM_BO_REF_READ } };
		struct drm_loom_submit s = submit_args(self, 11, long_cmd(self, 11, self->data.va, n),
						       NULL, 0);
		struct drm_loom_submit si;
		struct drm_loom_job_info info;
		uint32_t sync, isync;

		ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
		ASSERT_EQ(0, drmSyncobjCreate(other.fd, 0, &isync));
		s.deadline_ns = deadline;
		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		/* the innocent job runs about 4 limits: the stop finds it running */
		si = submit_args(&other, 11, long_cmd(&other, 11, other.data.va, 4 * limit / per),
				 refs, 1);
		si.deadline_ns = 5ULL * 1000000000ULL;
		si.out_syncobj = isync;
		ASSERT_EQ(0, _test_submit(other.fd, &si));
		ASSERT_EQ(0, loom_syncobj_wait(other.fd, isync, 120000));
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 1000));
		ASSERT_EQ(0, _test_job_info(self->fd, s.job_id, &info));
		TH_LOG("attempt %d: %lld instances, status %u, instances run %llu, error %d, resets %lld",
		       attempt, (long long)n, info.hw_status, (unsigned long long)info.counters.instances,
		       info.error, loom_core_stat(&self->node, 0, "resets ") - resets);
		/* the innocent job: run again, successfully */
		EXPECT_EQ(1, syncobj_status(other.fd, isync));
		EXPECT_EQ(0, job_error(&other, si.job_id));
		if (info.hw_status == LOOM_STATUS_OK) {
			/* it ended on its own: its result, not a timeout */
			EXPECT_EQ(n, (int64_t)info.counters.instances);
			EXPECT_EQ(0, info.error);
			EXPECT_EQ(1, syncobj_status(self->fd, sync));
		}
		drmSyncobjDestroy(self->fd, sync);
		drmSyncobjDestroy(other.fd, isync);
		if (loom_core_stat(&self->node, 0, "resets ") == resets + 1 &&
		    info.hw_status == LOOM_STATUS_OK)
			break;	/* the window was hit */
		/* calibration missed: too short (no reset) or too long (stopped) */
		if (loom_core_stat(&self->node, 0, "resets ") == resets)
			per = per * 2 / 3;
		else
			per = per * 3 / 2;
	}
	EXPECT_EQ(0, loom_write_file(knob, "0"));
	EXPECT_GT(3, attempt) TH_LOG("the job never ended between the decision and the stop");
}

/*
 * A function-level reset through sysfs (as the DRM subsystem's own
 * device_reset test does) under load: the driver quiesces before it and
 * restores the queues after.  Every job completes, with its result or with
 * EIO if the reset lost it (Documentation/uapi.rst); jobs submitted after
 * the reset succeed; the device is never taken for a liar.
 */
TEST_F_TIMEOUT(job, function_level_reset_under_load, 240)
{
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	struct loom_core_counts before;
	uint64_t ids[N + 2];
	char slot[64], path[160];
	unsigned int lost = 0;
	uint32_t sync;

	ASSERT_NE(NULL, scratch.map);
	ASSERT_EQ(0, loom_node_slot(&self->node, slot, sizeof(slot)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", slot);
	if (access(path, W_OK))
		SKIP(return, "no %s: the device has no reset method", path);
	before = loom_core_counts(&self->node);
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	for (unsigned int q = 0; q < 2; q++) {
		struct drm_loom_submit s = submit_args(self, 100 + q,
						       long_cmd(self, 100 + q, scratch.va + 64 * q,
								1 << 19), refs + 1, 1);

		s.queue = q;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		ids[N + q] = s.job_id;
	}
	for (unsigned int i = 0; i < N; i++) {
		struct drm_loom_submit s = submit_args(self, i, counter_cmd(self, i, i), refs, 2);

		s.queue = i % 2;
		s.out_syncobj = sync;
		ASSERT_EQ(0, _test_submit(self->fd, &s));
		ids[i] = s.job_id;
	}
	usleep(200000);
	ASSERT_EQ(0, loom_write_file(path, "1"));
	ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync, 120000));
	for (unsigned int i = 0; i < N + 2; i++) {
		int err = job_error(self, ids[i]);

		EXPECT_TRUE(err == 0 || err == -EIO) TH_LOG("job %u: error %d", i, err);
		lost += err == -EIO;
	}
	/* at most the job running on each core */
	EXPECT_GE(2, lost);
	for (unsigned int q = 0; q < 2; q++) {
		struct drm_loom_job_info info = run_vadd(self, _metadata, q, 0);
		const int64_t *d = self->data.map;

		EXPECT_EQ(0, info.error);
		EXPECT_EQ(LOOM_STATUS_OK, info.hw_status);
		for (int k = 0; k < 8; k++)
			EXPECT_EQ(d[k] + d[1024 + k], d[2048 + k]);
		EXPECT_EQ(before.refused[q], loom_core_counts(&self->node).refused[q]);
		EXPECT_EQ(before.resets[q], loom_core_counts(&self->node).resets[q])
			TH_LOG("core %u: a hang recovery ran: the driver missed the reset", q);
	}
	drmSyncobjDestroy(self->fd, sync);
}

/*
 * The same reset with a device slow to stop (debugfs quiesce_wait_ms 0:
 * the driver empties its rings without waiting for the stop).  The jobs
 * that were running end, with a record and an interrupt, after the driver
 * let go of them, and the reset then zeroes the queue: none of it is the
 * device lying.  Every job runs again and succeeds.
 */
TEST_F_TIMEOUT(job, function_level_reset_with_a_slow_stop, 240)
{
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	struct loom_core_counts before;
	char slot[64], path[160], knob[160];
	uint64_t ids[LOAD_JOBS];
	uint32_t sync[2];

	ASSERT_NE(NULL, scratch.map);
	ASSERT_EQ(0, loom_node_slot(&self->node, slot, sizeof(slot)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", slot);
	snprintf(knob, sizeof(knob), "%s/quiesce_wait_ms", self->node.debugfs);
	if (access(path, W_OK) || access(knob, W_OK))
		SKIP(return, "no %s or %s", path, knob);
	before = loom_core_counts(&self->node);
	for (unsigned int q = 0; q < 2; q++)
		ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[q]));
	ASSERT_EQ(0, submit_load(self, scratch.va, ids, sync));
	usleep(200000);
	ASSERT_EQ(0, loom_write_file(knob, "0"));
	EXPECT_EQ(0, loom_write_file(path, "1"));
	ASSERT_EQ(0, loom_write_file(knob, "500"));
	for (unsigned int q = 0; q < 2; q++)
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync[q], 120000));
	for (unsigned int i = 0; i < LOAD_JOBS; i++) {
		EXPECT_EQ(0, job_error(self, ids[i])) TH_LOG("job %u", i);
	}
	for (unsigned int q = 0; q < 2; q++) {
		EXPECT_EQ(before.refused[q], loom_core_counts(&self->node).refused[q])
			TH_LOG("core %u: the driver read the device across the reset", q);
		EXPECT_EQ(before.resets[q], loom_core_counts(&self->node).resets[q]);
		drmSyncobjDestroy(self->fd, sync[q]);
	}
}

/*
 * A process killed with jobs still waiting in its queue: they are never
 * run, and their fences say ESRCH (Documentation/uapi.rst).
 */
TEST_F(job, killed_process_queued_jobs_get_esrch)
{
	struct sync_file_info info = { 0 };
	struct pollfd pfd;
	int sv[2], fence, status;
	pid_t child;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
		uint32_t hung, queued;
		struct drm_loom_submit s;
		int fd;

		if (reopen(self) || drmSyncobjCreate(self->fd, 0, &hung) ||
		    drmSyncobjCreate(self->fd, 0, &queued))
			_exit(1);
		loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
		s = submit_args(self, 0, vadd_cmd(self, 0, 1), refs, 1);
		s.out_syncobj = hung;
		s.deadline_ns = 2000000000ULL;
		if (_test_submit(self->fd, &s))
			_exit(2);
		/*
		 * Waits in core 1's queue for the hung job.  (On core 0 it would
		 * not: the scheduler lets a job follow one of its own once that
		 * is merely scheduled, and it would sit on the ring.)
		 */
		s = submit_args(self, 1, vadd_cmd(self, 1, 1), refs, 1);
		s.queue = 1;
		s.in_syncobjs = (uintptr_t)&hung;
		s.in_syncobj_count = 1;
		s.out_syncobj = queued;
		if (_test_submit(self->fd, &s) ||
		    drmSyncobjExportSyncFile(self->fd, queued, &fd) || send_fd(sv[1], fd))
			_exit(3);
		pause();
		_exit(4);
	}
	fence = recv_fd(sv[0]);
	ASSERT_LE(0, fence);
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	pfd = (struct pollfd){ .fd = fence, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	ASSERT_EQ(0, ioctl(fence, SYNC_IOC_FILE_INFO, &info));
	EXPECT_EQ(-ESRCH, info.status);
	close(fence);
}

/*
 * On 6.1 the card node serves the same ioctls and uring_cmd as the render
 * node (none needs DRM_AUTH or master; Documentation/uapi.rst).  An accel
 * device has no card node at all.
 */
TEST(card_node_serves_what_the_render_node_does)
{
	struct loom_node node;
	char path[32];
	int fd = -1;

	ASSERT_LE(1, loom_find_nodes(&node, 1));
	for (int minor = 0; minor < 64 && fd < 0; minor++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && !loom_is_loom_fd(fd)) {
			close(fd);
			fd = -1;
		}
	}
	if (node.accel) {
		EXPECT_EQ(-1, fd) TH_LOG("%s is loom's, beside %s", path, node.path);
		return;
	}
	ASSERT_LE(0, fd);
	EXPECT_EQ(DRM_LOOM_UAPI_VERSION, test_get_param(fd, DRM_LOOM_PARAM_UAPI_VERSION));
	{
		struct loom_test_bo bo = loom_bo(fd, 4096);

		EXPECT_NE(NULL, bo.map);
	}
	close(fd);
}

TEST_HARNESS_MAIN
