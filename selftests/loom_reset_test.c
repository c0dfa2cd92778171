// SPDX-License-Identifier: GPL-2.0
/*
 * Recovery an operator drives: the PCI device's sysfs group "loom" resets
 * one core (reset_core) or every core (reset_device), root only.  The job
 * a reset interrupts fails with ECANCELED, exactly once; the jobs queued
 * behind it, and the other cores' jobs, run and succeed; the interrupted
 * job's process is not blamed (Documentation/uapi.rst, "Resets").
 * loom-info --reset drives the same files (/data/loom-info, tools/loom-vm
 * --file).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

#define LOOM_INFO	"/data/loom-info"

/* Long enough to be running still when the test resets its core. */
#define LONG_EXTENT	(1 << 24)

static void control_path(const struct loom_node *node, const char *name, char *path,
			 size_t size)
{
	snprintf(path, size, "%s/loom/%s", node->sysfs, name);
}

/* Waits until core @core runs a job: its progress counter moves. */
static bool core_running(const struct loom_node *node, unsigned int core)
{
	for (int tries = 500 * loom_timeout_factor(); tries > 0; tries--) {
		long long before = loom_core_stat(node, core, "progress ");

		usleep(20000);
		if (loom_core_stat(node, core, "in-flight ") > 0 &&
		    loom_core_stat(node, core, "progress ") != before)
			return true;
	}
	return false;
}

/*
 * Loads both cores (a long job on each, eight jobs behind each), waits for
 * the long jobs to run, writes @value to the control @name, and waits for
 * every job.  @ids gets the job ids.
 */
static void reset_under_load(FIXTURE_DATA(job) *self, struct __test_metadata *_metadata,
			     const char *name, const char *value, uint64_t ids[LOAD_JOBS])
{
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	char path[192];
	uint32_t sync[2];

	ASSERT_NE(NULL, scratch.map);
	control_path(&self->node, name, path, sizeof(path));
	for (unsigned int q = 0; q < 2; q++)
		ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[q]));
	ASSERT_EQ(0, submit_load_of(self, scratch.va, ids, sync, LONG_EXTENT));
	for (unsigned int q = 0; q < 2; q++)
		ASSERT_TRUE(core_running(&self->node, q));
	ASSERT_EQ(0, loom_write_file(path, value));
	for (unsigned int q = 0; q < 2; q++) {
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync[q], 120000));
		drmSyncobjDestroy(self->fd, sync[q]);
	}
}

TEST_F(job, controls_are_root_only)
{
	static const char *const names[] = { "reset_core", "reset_device" };

	for (unsigned int i = 0; i < 2; i++) {
		char path[192];
		struct stat st;

		control_path(&self->node, names[i], path, sizeof(path));
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s: %s", path, strerror(errno));
		EXPECT_EQ(S_IFREG | 0200, st.st_mode) TH_LOG("%s: mode %o", path, st.st_mode);
		EXPECT_EQ(0u, st.st_uid);
	}
}

TEST_F(job, bad_requests_are_refused_and_reset_nothing)
{
	struct loom_core_counts before = loom_core_counts(&self->node), after;
	uint64_t cores = test_get_param(self->fd, DRM_LOOM_PARAM_NUM_CORES);
	char core[192], device[192];

	control_path(&self->node, "reset_core", core, sizeof(core));
	control_path(&self->node, "reset_device", device, sizeof(device));
	{
		char past[16];

		snprintf(past, sizeof(past), "%llu", (unsigned long long)cores);
		EXPECT_EQ(-EINVAL, loom_write_file(core, past));
	}
	EXPECT_EQ(-EINVAL, loom_write_file(core, "-1"));
	EXPECT_EQ(-EINVAL, loom_write_file(core, "zero"));
	EXPECT_EQ(-EINVAL, loom_write_file(device, "0"));
	EXPECT_EQ(-EINVAL, loom_write_file(device, "maybe"));
	after = loom_core_counts(&self->node);
	for (unsigned int q = 0; q < 2; q++)
		EXPECT_EQ(before.resets[q], after.resets[q]);
}

/*
 * Core 0 reset under load, DRM_LOOM_MAX_HANGS + 1 times: a blamed process
 * would be refused by then.
 */
TEST_F_TIMEOUT(job, reset_core_fails_its_running_job_only, 300)
{
	struct loom_core_counts before = loom_core_counts(&self->node), after;
	const int rounds = DRM_LOOM_MAX_HANGS + 1;
	uint64_t ids[LOAD_JOBS];

	for (int round = 0; round < rounds; round++) {
		struct drm_loom_job_info info;

		reset_under_load(self, _metadata, "reset_core", "0", ids);
		ASSERT_EQ(0, _test_job_info(self->fd, ids[0], &info));
		EXPECT_EQ(-ECANCELED, info.error);
		EXPECT_EQ(LOOM_STATUS_STOPPED, info.hw_status);
		EXPECT_GT((uint64_t)LONG_EXTENT, info.counters.instances);
		for (unsigned int i = 1; i < LOAD_JOBS; i++) {
			EXPECT_EQ(0, job_error(self, ids[i])) TH_LOG("round %d, job %u", round, i);
		}
	}
	after = loom_core_counts(&self->node);
	EXPECT_EQ(before.resets[0] + rounds, after.resets[0]);
	EXPECT_EQ(before.resets[1], after.resets[1]);
	for (unsigned int q = 0; q < 2; q++)
		EXPECT_EQ(before.refused[q], after.refused[q]);
	/* not blamed: the file still submits */
	EXPECT_EQ(0, run_vadd(self, _metadata, 0, 0).error);
}

TEST_F_TIMEOUT(job, reset_device_fails_each_cores_running_job, 300)
{
	struct loom_core_counts before = loom_core_counts(&self->node), after;
	uint64_t ids[LOAD_JOBS];

	reset_under_load(self, _metadata, "reset_device", "1", ids);
	for (unsigned int i = 0; i < LOAD_JOBS; i++) {
		EXPECT_EQ(i < 2 ? -ECANCELED : 0, job_error(self, ids[i])) TH_LOG("job %u", i);
	}
	after = loom_core_counts(&self->node);
	for (unsigned int q = 0; q < 2; q++) {
		EXPECT_EQ(before.resets[q] + 1, after.resets[q]);
		EXPECT_EQ(before.refused[q], after.refused[q]);
		EXPECT_EQ(0, run_vadd(self, _metadata, q, 0).error);
	}
}

/* An idle core resets too, and runs what comes next. */
TEST_F(job, reset_of_an_idle_core)
{
	struct loom_core_counts before = loom_core_counts(&self->node);
	char path[192];

	control_path(&self->node, "reset_core", path, sizeof(path));
	ASSERT_EQ(0, loom_write_file(path, "1"));
	EXPECT_EQ(before.resets[1] + 1, loom_core_counts(&self->node).resets[1]);
	EXPECT_EQ(0, run_vadd(self, _metadata, 1, 0).error);
}

/* Runs loom-info with @args (NULL-terminated after the tool's name); its status. */
static int loom_info(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execv(LOOM_INFO, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F_TIMEOUT(job, loom_info_resets_a_core, 120)
{
	struct loom_core_counts before = loom_core_counts(&self->node);
	char *reset[] = { "loom-info", "--reset", "core", "1", self->node.path, NULL };
	char *past[] = { "loom-info", "--reset", "core", "99", self->node.path, NULL };
	char *what[] = { "loom-info", "--reset", "cores", self->node.path, NULL };

	if (access(LOOM_INFO, X_OK))
		SKIP(return, "no %s (tools/loom-vm --file)", LOOM_INFO);
	EXPECT_EQ(0, loom_info(reset));
	EXPECT_EQ(before.resets[1] + 1, loom_core_counts(&self->node).resets[1]);
	EXPECT_EQ(1, loom_info(past));
	EXPECT_EQ(2, loom_info(what));
	EXPECT_EQ(before.resets[1] + 1, loom_core_counts(&self->node).resets[1]);
}

TEST_HARNESS_MAIN
