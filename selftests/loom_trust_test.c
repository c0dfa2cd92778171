// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 29, "Trust": what one hostile client must not be able to do to the
 * driver or to everyone else.  io_uring commands issued from io-wq racing
 * their ring's teardown; BO frees deferred past an endless job starving
 * every core's hang check; removal waiting for callers asleep in the
 * driver; device error interrupts flooding the log.  Runs with two devices
 * (it unbinds the first and binds it again) and two vCPUs: the io_uring
 * races need a teardown and an issue running at once.
 */
#include <liburing.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

/*
 * Writes into slot @slot of the command BO a job of @extent instances of
 * the counter log, hammering the scratch words at the start of the data
 * BO, and returns its SUBMIT arguments for @queue (reading cfg: @ref).
 */
static struct drm_loom_submit counter_job(FIXTURE_DATA(job) *self, unsigned int slot,
					  unsigned int queue, int64_t extent,
					  struct drm_loom_bo_ref *ref)
{
	uint32_t words[32];
	struct loom_cmd c = { words, 0 };
	uint64_t ops[2] = { self->data.va, self->data.va + 8 };
	struct drm_loom_submit s;

	cmd_load_config(&c, self->counter_va, self->counter_size);
	cmd_operands(&c, 2, ops);
	cmd_dense(&c, 1, &extent);
	*ref = (struct drm_loom_bo_ref){ self->cfg.handle, DRM_LOOM_BO_REF_READ };
	s = submit_args(self, slot, put_cmd(&self->cmd, slot, &c), ref, 1);
	s.queue = queue;
	return s;
}

/* ---- uring_cmd from io-wq against the ring's teardown --------------------- */

/*
 * Four jobs for the io_uring tests, written before any is submitted (a
 * command buffer must not change under a job): short and long on each
 * core; kind @i is short unless @i & 2.
 */
static struct drm_loom_bo_ref mix_ref;
static struct drm_loom_submit mix[4];

static void mix_prepare(FIXTURE_DATA(job) *self, int64_t long_extent)
{
	for (int i = 0; i < 4; i++)
		mix[i] = counter_job(self, 4 + i, i % 2, i & 2 ? long_extent : 1, &mix_ref);
}

static void prep_mix_cmd(struct io_uring_sqe *sqe, int fd, int kind, bool async,
			 uint64_t user_data)
{
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &mix[kind]);
	if (async)
		sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = user_data;
}

#define PREEMPT_CTL "/sys/kernel/debug/sched/preempt"

/*
 * Switches the kernel to full preemption where it can (PREEMPT_DYNAMIC),
 * so that a teardown can run inside a command's issue; fills @old with the
 * model to restore ("" if none).
 */
static void preempt_full(char *old, size_t size)
{
	char buf[128] = "", *open_paren, *close_paren;
	FILE *f = fopen(PREEMPT_CTL, "r");

	old[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	open_paren = strchr(buf, '(');
	close_paren = open_paren ? strchr(open_paren, ')') : NULL;
	if (!close_paren)
		return;
	snprintf(old, size, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	if (loom_write_file(PREEMPT_CTL, "full"))
		old[0] = 0;
}

#define TEARDOWN_ROUNDS	60
#define TEARDOWN_CMDS	32

/*
 * One round in a child: TEARDOWN_CMDS commands issued from io-wq
 * (IOSQE_ASYNC), short and long jobs on both cores, then the ring goes at
 * once: closed (@close_ring) or with the process.
 */
static void teardown_round(FIXTURE_DATA(job) *self, int round, bool close_ring)
{
	struct io_uring ring;

	if (io_uring_queue_init(TEARDOWN_CMDS, &ring, IORING_SETUP_SQE128))
		_exit(2);
	for (int i = 0; i < TEARDOWN_CMDS; i++)
		prep_mix_cmd(io_uring_get_sqe(&ring), self->fd, (i + round) % 4, true, i);
	if (io_uring_submit(&ring) != TEARDOWN_CMDS)
		_exit(3);
	if (close_ring)
		io_uring_queue_exit(&ring);
	_exit(0);
}

/*
 * Commands issued from io-wq race their ring's teardown (a close, the
 * process's exit).  Where io_uring cancels commands (6.7+), the teardown
 * may cancel a command while its issue still runs: it must find the fence
 * callback armed (it used to find it zeroed: a NULL dereference under the
 * fence lock, or list corruption), and exactly one of cancel and fence
 * completes it.  Everything lets go of the file and the jobs all end.
 * With two CPUs the old order (cancelable first, callback after) oopsed
 * within a run or two; on one it cannot race.
 */
TEST_F_TIMEOUT(job, async_commands_race_ring_teardown, 240)
{
	long refs_before = module_refcnt();
	char old_preempt[32];
	int waited_ms;

	ASSERT_LE(1, refs_before);
	mix_prepare(self, 1 << 14);
	preempt_full(old_preempt, sizeof(old_preempt));
	for (int round = 0; round < TEARDOWN_ROUNDS; round++) {
		pid_t child = fork();
		int status;

		ASSERT_LE(0, child);
		if (child == 0)
			teardown_round(self, round, round % 2);
		ASSERT_EQ(child, waitpid(child, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("round %d: child status 0x%x", round, status);
	}
	if (old_preempt[0])
		loom_write_file(PREEMPT_CTL, old_preempt);
	/* every command completed: the rings, and the files they held, are gone */
	for (waited_ms = 0; waited_ms < 30000 && module_refcnt() != refs_before; waited_ms += 10)
		usleep(10000);
	EXPECT_EQ(refs_before, module_refcnt())
		TH_LOG("commands still hold the file %d ms after the last ring went", waited_ms);
	EXPECT_TRUE(loom_wait_cores_idle(&self->node));
}

/*
 * The same commands on a ring that stays: every one gets exactly one CQE,
 * with its job's result, whether its job ended before its issue did or
 * after.
 */
TEST_F_TIMEOUT(job, async_commands_complete_exactly_once, 120)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int seen[TEARDOWN_CMDS] = { 0 };

	mix_prepare(self, 1 << 12);
	ASSERT_EQ(0, io_uring_queue_init(TEARDOWN_CMDS, &ring, IORING_SETUP_SQE128));
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < TEARDOWN_CMDS; i++)
			prep_mix_cmd(io_uring_get_sqe(&ring), self->fd, i % 4, i % 2, i);
		ASSERT_EQ(TEARDOWN_CMDS, io_uring_submit(&ring));
		for (int i = 0; i < TEARDOWN_CMDS; i++) {
			struct __kernel_timespec ts = { .tv_sec = 20 };

			ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
			ASSERT_GT(TEARDOWN_CMDS, cqe->user_data);
			EXPECT_EQ(0, cqe->res);
			seen[cqe->user_data]++;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	for (int i = 0; i < TEARDOWN_CMDS; i++) {
		EXPECT_EQ(8, seen[i]) TH_LOG("command %d", i);
	}
	{
		struct __kernel_timespec ts = { .tv_nsec = 200000000 };

		EXPECT_EQ(-ETIME, io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			TH_LOG("a command completed twice");
	}
	io_uring_queue_exit(&ring);
}

/* ---- deferred BO frees and the hang check ---------------------------------- */

#define CLOSED_BOS	300

/*
 * BOs closed under a job of their address space are freed once it ends.
 * More of them than the driver's workqueue runs at once (256) used to
 * sleep there on the job, and every core's hang check, queued behind
 * them, never ran: an endless job was never stopped.  Now the job is
 * stopped at the runtime cap as if nothing had been closed, and the BOs go
 * after it.
 */
TEST_F_TIMEOUT(job, closed_bos_do_not_delay_the_runtime_cap, 120)
{
	uint32_t handles[CLOSED_BOS], sync;
	long long kib_before, kib;
	struct drm_loom_bo_ref ref;
	struct drm_loom_submit s;
	int waited_ms;

	kib_before = fdinfo_value(self->fd, "drm-memory-system");
	ASSERT_LE(0, kib_before);
	for (int i = 0; i < CLOSED_BOS; i++) {
		struct loom_test_bo bo;

		ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &bo));
		handles[i] = bo.handle;
	}
	ASSERT_EQ(0, set_param("max_job_ms", 1000));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	s = counter_job(self, 0, 0, 1LL << 30, &ref);
	s.out_syncobj = sync;
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	for (int i = 0; i < CLOSED_BOS; i++) {
		struct drm_gem_close close_args = { .handle = handles[i] };

		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_GEM_CLOSE, &close_args));
	}
	EXPECT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000 * loom_timeout_factor()))
		TH_LOG("the endless job was not stopped at its cap");
	EXPECT_EQ(-ETIMEDOUT, job_error(self, s.job_id));
	EXPECT_EQ(0, set_param("max_job_ms", 60000));
	/* ... and the BOs closed under it are freed */
	for (waited_ms = 0; waited_ms < 10000; waited_ms += 10) {
		kib = fdinfo_value(self->fd, "drm-memory-system");
		if (kib == kib_before)
			break;
		usleep(10000);
	}
	EXPECT_EQ(kib_before, kib) TH_LOG("closed BOs still pinned %d ms after the job", waited_ms);
}

/* ---- removal with callers asleep in the driver ------------------------------- */

FIXTURE(removal) {
	struct loom_node node;
	char slot[64];
	int fd;
	struct loom_test_bo cmd, cfg;
	uint32_t cmd_size;
};

/* A file on the first device, its command BO holding one LOAD_CONFIG. */
FIXTURE_SETUP(removal)
{
	uint32_t words[16];
	struct loom_cmd c = { words, 0 };

	ASSERT_LE(1, loom_find_nodes(&self->node, 1));
	ASSERT_EQ(0, loom_node_slot(&self->node, self->slot, sizeof(self->slot)));
	self->fd = open(self->node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->cmd = loom_bo(self->fd, 4096);
	self->cfg = loom_bo(self->fd, 4096);
	ASSERT_NE(NULL, self->cmd.map);
	ASSERT_NE(NULL, self->cfg.map);
	cmd_load_config(&c, self->cfg.va,
			loom_test_config_vector_add(self->cfg.map, 4096, 4, 4));
	memcpy(self->cmd.map, words, c.len * 4);
	self->cmd_size = c.len * 4;
}

FIXTURE_TEARDOWN(removal)
{
	char path[128];

	if (self->fd >= 0)
		close(self->fd);
	/* bound again for the tests after this one */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", self->slot);
	if (access(path, F_OK))
		loom_write_file("/sys/bus/pci/drivers/loom/bind", self->slot);
}

/* Runs @fn in a child whose exit status is 0 or the errno it ended with. */
static pid_t spawn(int (*fn)(FIXTURE_DATA(removal) *), FIXTURE_DATA(removal) *self)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(-fn(self));
	return pid;
}

static int blocking_submit(FIXTURE_DATA(removal) *self)
{
	struct drm_loom_submit s = {
		.cmd_handle = self->cmd.handle, .cmd_size = self->cmd_size,
	};

	return _test_submit(self->fd, &s);
}

/* Waits without a timeout on the command BO, which the hung job reads. */
static int blocking_bo_wait(FIXTURE_DATA(removal) *self)
{
	struct drm_loom_bo_wait w = { .handle = self->cmd.handle, .timeout_ns = -1 };

	return ioctl(self->fd, DRM_IOCTL_LOOM_BO_WAIT, &w) ? -errno : 0;
}

/*
 * JOB_INFO waiting without a deadline for the job @waited_job (uapi 10),
 * one of the last LOOM_JOB_RECORDS the file submitted, behind the hung one.
 */
static uint64_t waited_job;

static int blocking_job_info(FIXTURE_DATA(removal) *self)
{
	struct drm_loom_job_info info = {
		.job_id = waited_job, .flags = DRM_LOOM_JOB_INFO_WAIT,
		.timeout_ns = INT64_MAX,
	};

	return ioctl(self->fd, DRM_IOCTL_LOOM_JOB_INFO, &info) ? -errno : 0;
}

static int unbind(FIXTURE_DATA(removal) *self)
{
	return loom_write_file("/sys/bus/pci/drivers/loom/unbind", self->slot);
}

/* waitpid() for at most @ms; whether @pid ended (its status in *@status). */
static bool reaped(pid_t pid, int *status, int ms)
{
	for (int waited = 0; waited <= ms; waited += 10) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Unbind with a hung job, a SUBMIT waiting for room in the full in-flight
 * budget behind it, and a BO_WAIT without timeout on it.  Removal used to
 * wait for both callers to leave the driver while they waited for the job,
 * which nothing stopped any more: the unbind hung until they were killed.
 * Now both return ENODEV and the unbind completes.  So does a JOB_INFO
 * waiting without a deadline for the hung job (uapi 10).
 */
TEST_F_TIMEOUT(removal, unbind_with_a_blocked_submit_and_bo_wait, 180)
{
	struct drm_loom_submit s = {
		.cmd_handle = self->cmd.handle, .cmd_size = self->cmd_size,
		.deadline_ns = 60000000000ULL,
	};
	int nodes = loom_count_nodes(), status, unbind_status = -1;
	pid_t submitter, waiter, job_waiter, unbinder;
	bool unbound;

	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	s.deadline_ns = 0;
	s.flags = DRM_LOOM_SUBMIT_NONBLOCK;
	for (int i = 1; i < DRM_LOOM_MAX_INFLIGHT_JOBS; i++) {
		ASSERT_EQ(0, _test_submit(self->fd, &s)) TH_LOG("job %d", i);
	}
	/* the newest: its record is kept (the hung one's is long gone) */
	waited_job = s.job_id;
	ASSERT_EQ(-EAGAIN, _test_submit(self->fd, &s));

	submitter = spawn(blocking_submit, self);
	waiter = spawn(blocking_bo_wait, self);
	job_waiter = spawn(blocking_job_info, self);
	ASSERT_LT(0, submitter);
	ASSERT_LT(0, waiter);
	ASSERT_LT(0, job_waiter);
	usleep(300000);
	ASSERT_FALSE(reaped(submitter, &status, 0)) TH_LOG("SUBMIT did not wait: %d", status);
	ASSERT_FALSE(reaped(waiter, &status, 0)) TH_LOG("BO_WAIT did not wait: %d", status);
	ASSERT_FALSE(reaped(job_waiter, &status, 0)) TH_LOG("JOB_INFO did not wait: %d", status);

	unbinder = fork();
	ASSERT_LE(0, unbinder);
	if (unbinder == 0)
		_exit(-unbind(self));
	unbound = reaped(unbinder, &unbind_status, 20000);
	EXPECT_TRUE(unbound) TH_LOG("unbind still waits for the callers after 20 s");
	if (!unbound) {
		/* let the unbind finish, for the tests after this one */
		kill(submitter, SIGKILL);
		kill(waiter, SIGKILL);
		kill(job_waiter, SIGKILL);
		waitpid(unbinder, &unbind_status, 0);
	}
	EXPECT_TRUE(WIFEXITED(unbind_status) && WEXITSTATUS(unbind_status) == 0);
	ASSERT_EQ(submitter, waitpid(submitter, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == ENODEV)
		TH_LOG("SUBMIT: status 0x%x", status);
	ASSERT_EQ(waiter, waitpid(waiter, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == ENODEV)
		TH_LOG("BO_WAIT: status 0x%x", status);
	ASSERT_EQ(job_waiter, waitpid(job_waiter, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == ENODEV)
		TH_LOG("JOB_INFO: status 0x%x", status);

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, loom_write_file("/sys/bus/pci/drivers/loom/bind", self->slot));
	ASSERT_EQ(nodes, loom_count_nodes());
}

/* ---- device errors in the log --------------------------------------------- */

/* Log records since @kmsg was opened that contain @what. */
static int kmsg_count(int kmsg, const char *what)
{
	char rec[2048];
	int n = 0;
	ssize_t len;

	while ((len = read(kmsg, rec, sizeof(rec) - 1)) > 0 || (len < 0 && errno == EPIPE)) {
		if (len <= 0)
			continue;
		rec[len] = 0;
		n += strstr(rec, what) != NULL;
	}
	return n;
}

/*
 * Every device error interrupt used to be logged: a device (or a client
 * that can make it err) could flood the log.  100 errors in a row leave a
 * rate-limited handful of lines.  The errors: enabling core 0's queue with
 * a bad size, which the device refuses (the queue stays as it was).
 */
TEST_F(removal, device_errors_are_logged_rate_limited)
{
	volatile uint32_t *bar = loom_map_bar0_prot(&self->node, PROT_READ | PROT_WRITE);
	struct drm_loom_submit s = {
		.cmd_handle = self->cmd.handle, .cmd_size = self->cmd_size,
	};
	int kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	uint32_t size, sync, reg = LOOM_CORE_BASE(0);
	int lines;

	ASSERT_NE(NULL, bar);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	size = bar[(reg + LOOM_CORE_Q_SIZE) / 4];
	bar[(reg + LOOM_CORE_CTRL) / 4] = 0;
	bar[(reg + LOOM_CORE_Q_SIZE) / 4] = 3;
	for (int i = 0; i < 100; i++) {
		bar[(reg + LOOM_CORE_CTRL) / 4] = LOOM_CTRL_ENABLE;
		usleep(1000);
	}
	bar[(reg + LOOM_CORE_Q_SIZE) / 4] = size;
	bar[(reg + LOOM_CORE_CTRL) / 4] = LOOM_CTRL_ENABLE;
	munmap((void *)bar, LOOM_BAR0_SIZE);
	usleep(100000);
	lines = kmsg_count(kmsg, "device error");
	close(kmsg);
	EXPECT_LE(1, lines);
	EXPECT_GE(20, lines) TH_LOG("100 device errors logged %d lines", lines);

	/* the core still works */
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	s.out_syncobj = sync;
	ASSERT_EQ(0, _test_submit(self->fd, &s));
	EXPECT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000));
}

TEST_HARNESS_MAIN
