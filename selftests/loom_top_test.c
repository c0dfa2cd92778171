// SPDX-License-Identifier: GPL-2.0
/*
 * loom-top (/data/loom-top, tools/loom-vm --file) against two clients with
 * known loads: one keeps core 0 busy back to back, the other runs jobs on
 * core 1 half the time.  Each measures its own busy time (submit to
 * completion) over the run; loom-top's busy figure for each process, taken
 * inside the run, must be within 10% of it.  Also its text and JSON
 * output, --help and a bad option.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

#define TOP		"/data/loom-top"
#define RUN_S		6

struct load {
	volatile int ready;
	volatile long long busy_ns, wall_ns;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A counter job of @extent instances in @slot on @queue. */
static uint32_t load_cmd(FIXTURE_DATA(job) *self, unsigned int slot, int64_t extent)
{
	uint32_t words[32];
	struct loom_cmd c = { words, 0 };
	uint64_t ops[2] = { self->data.va, self->data.va + 8 };

	cmd_load_config(&c, self->counter_va, self->counter_size);
	cmd_operands(&c, 2, ops);
	cmd_dense(&c, 1, &extent);
	return put_cmd(&self->cmd, slot, &c);
}

/* Runs one job on @queue and waits; its wall time in ns, or -1. */
static long long run_job(FIXTURE_DATA(job) *self, unsigned int queue, int64_t extent,
			 uint32_t sync)
{
	struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
	struct drm_loom_submit s = submit_args(self, queue, load_cmd(self, queue, extent),
					       refs, 1);
	long long t = now_ns();

	s.queue = queue;
	s.out_syncobj = sync;
	if (_test_submit(self->fd, &s) || loom_syncobj_wait(self->fd, sync, 10000))
		return -1;
	return now_ns() - t;
}

/* A client: jobs on @queue for RUN_S seconds, idle as long as busy if @half. */
static void client(FIXTURE_DATA(job) *self, struct load *ld, unsigned int queue,
		   int64_t extent, bool half)
{
	long long start, t;
	uint32_t sync;

	if (reopen(self) || drmSyncobjCreate(self->fd, 0, &sync))
		_exit(1);
	ld->ready = 1;
	start = now_ns();
	while (now_ns() - start < RUN_S * 1000000000LL) {
		t = run_job(self, queue, extent, sync);
		if (t < 0)
			_exit(2);
		ld->busy_ns += t;
		if (half)
			usleep(t / 1000);
		ld->wall_ns = now_ns() - start;
	}
	_exit(0);
}

/* Runs loom-top with @args; its output (malloc'ed) and exit status. */
static char *top(const char *args, int *status)
{
	char cmd[256], *buf = malloc(1 << 16);
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), TOP " %s 2>&1", args);
	p = popen(cmd, "r");
	if (!p || !buf) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, (1 << 16) - 1, p);
	buf[n] = 0;
	*status = pclose(p);
	return buf;
}

/* loom-top's busy_pct of process @pid in @json, or -1. */
static double client_busy(const char *json, int pid)
{
	char key[32];
	const char *p;
	double v = -1;

	snprintf(key, sizeof(key), "{\"pid\":%d,", pid);
	p = strstr(json, key);
	if (p)
		p = strstr(p, "\"busy_pct\":");
	if (p)
		sscanf(p, "\"busy_pct\":%lf", &v);
	return v;
}

TEST_F_TIMEOUT(job, busy_figures_match_known_loads, 120)
{
	struct load *ld = mmap(NULL, 2 * sizeof(*ld), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int64_t extent = 1024;
	double known[2], seen[2];
	pid_t pid[2];
	uint32_t sync;
	char *out;
	int status;

	ASSERT_EQ(0, access(TOP, X_OK)) TH_LOG("no %s (loom-vm --file)", TOP);
	ASSERT_NE(MAP_FAILED, ld);
	memset(ld, 0, 2 * sizeof(*ld));
	/* jobs of about 20 ms: the submission and wait stay small beside them */
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	while (run_job(self, 0, extent, sync) < 20000000LL * loom_timeout_factor() &&
	       extent < 1 << 26)
		extent *= 2;

	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			client(self, &ld[i], i, extent, i == 1);
	}
	while (!ld[0].ready || !ld[1].ready)
		usleep(10000);
	usleep(1000000);
	out = top("--json -n 1 -d 3", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status));
		known[i] = 100.0 * ld[i].busy_ns / ld[i].wall_ns;
		seen[i] = client_busy(out, pid[i]);
		TH_LOG("client %d: known busy %.1f%%, loom-top %.1f%%", i, known[i], seen[i]);
		EXPECT_LE(known[i] * 0.9, seen[i]);
		EXPECT_GE(known[i] * 1.1, seen[i]);
	}
	EXPECT_LT(70, known[0]);
	EXPECT_GT(70, known[1]);
	EXPECT_NE(NULL, strstr(out, "\"jobs_per_s\":")) TH_LOG("%s", out);
	free(out);
}

TEST(text_help_and_bad_options)
{
	int status;
	char *out = top("-b -n 2 -d 0.2", &status);

	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "loom-top: ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "device 0000:")) TH_LOG("root sees the devices in debugfs");
	free(out);
	out = top("--help", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "--json"));
	free(out);
	out = top("-n 0", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(2, WEXITSTATUS(status));
	free(out);
}

TEST_HARNESS_MAIN
