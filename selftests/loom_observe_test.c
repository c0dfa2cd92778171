// SPDX-License-Identifier: GPL-2.0
/*
 * What an operator sees of loom.ko from outside: the "loom" tracepoints,
 * recorded through tracefs, follow one job (by ioctl and by io_uring), a
 * hang and its recovery, a reset of the function and a BO's life; fdinfo's
 * drm-cycles and drm-total-cycles pair moves with a job, stays idle
 * without one and agrees with drm-engine.  The function graph tracer
 * times the driver's page-table writes: mapping a BO costs the same
 * beside a full address space as beside an empty one.  The tracing tests
 * skip when the kernel has no tracefs (or no function graph tracer).
 */
#include <liburing.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

static char tracefs[64];

/* tracefs, mounted if need be: 0, or -ENOENT when the kernel has none. */
static int tracefs_find(void)
{
	static const char * const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[96];

	for (unsigned int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace", dirs[i]);
		if (access(path, F_OK) && i == 0)
			mount("tracefs", dirs[0], "tracefs", 0, NULL);
		if (!access(path, F_OK)) {
			snprintf(tracefs, sizeof(tracefs), "%s", dirs[i]);
			return 0;
		}
	}
	return -ENOENT;
}

static int trace_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	return loom_write_file(path, val);
}

/* Empties the trace buffer and records the loom events only. */
static int trace_start(void)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/trace", tracefs);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	close(fd);
	if (trace_write("events/enable", "0") || trace_write("events/loom/enable", "1"))
		return -EIO;
	return trace_write("tracing_on", "1");
}

static void trace_stop(void)
{
	trace_write("events/loom/enable", "0");
}

/* The whole trace buffer as text (malloc'ed), or NULL. */
static char *trace_read(void)
{
	char path[128], *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/trace", tracefs);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n > 0)
			len += n;
	} while (n > 0);
	close(fd);
	if (buf)
		buf[len] = 0;
	return buf;
}

/*
 * The offset in @trace of the first line at or after @from that is event
 * @event and contains @match; -1 if none.  @line receives that line.
 */
static long trace_find(const char *trace, long from, const char *event,
		       const char *match, char *line, size_t size)
{
	const char *p = trace + from;
	char name[64];

	snprintf(name, sizeof(name), " %s: ", event);
	while (*p) {
		const char *end = strchrnul(p, '\n');
		size_t n = end - p;

		if (n < size) {
			memcpy(line, p, n);
			line[n] = 0;
			if (strstr(line, name) && strstr(line, match))
				return p - trace;
		}
		p = *end ? end + 1 : end;
	}
	return -1;
}

/* " client=C job=J ", as every job event of this file's job J shows it. */
static void job_match(char *buf, size_t size, int fd, uint64_t job_id)
{
	snprintf(buf, size, " client=%lld job=%llu ", fdinfo_value(fd, "drm-client-id"),
		 (unsigned long long)job_id);
}

/* Submits a vector add on core 0 and waits for it; returns its id. */
static uint64_t vadd_job(FIXTURE_DATA(job) *self, uint64_t deadline_ns)
{
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_submit s = submit_args(self, 0, vadd_cmd(self, 0, 8), refs, 2);
	uint32_t sync;
	int ret;

	if (drmSyncobjCreate(self->fd, 0, &sync))
		return 0;
	s.deadline_ns = deadline_ns;
	s.out_syncobj = sync;
	ret = _test_submit(self->fd, &s);
	if (!ret)
		ret = loom_syncobj_wait(self->fd, sync, 10000);
	drmSyncobjDestroy(self->fd, sync);
	return ret ? 0 : s.job_id;
}

#define TRACE_OR_SKIP()							\
	do {								\
		if (tracefs_find())					\
			SKIP(return, "no tracefs in this kernel");	\
		ASSERT_EQ(0, trace_start())				\
			TH_LOG("no events/loom in %s", tracefs);	\
	} while (0)

/* A job's submit, run and done events, in that order, with its id. */
TEST_F(job, trace_follows_one_job)
{
	char match[64], line[512], *trace;
	long submit, run, done;
	uint64_t id;

	TRACE_OR_SKIP();
	id = vadd_job(self, 0);
	trace_stop();
	ASSERT_NE(0, id);
	trace = trace_read();
	ASSERT_NE(NULL, trace);
	job_match(match, sizeof(match), self->fd, id);
	submit = trace_find(trace, 0, "loom_job_submit", match, line, sizeof(line));
	ASSERT_LE(0, submit) TH_LOG("no loom_job_submit with%s", match);
	EXPECT_NE(NULL, strstr(line, " core=0 "));
	run = trace_find(trace, submit, "loom_job_run", match, line, sizeof(line));
	ASSERT_LT(submit, run) TH_LOG("no loom_job_run after the submit");
	done = trace_find(trace, run, "loom_job_done", match, line, sizeof(line));
	ASSERT_LT(run, done) TH_LOG("no loom_job_done after the run");
	EXPECT_NE(NULL, strstr(line, " status=0 error=0 cycles="));
	EXPECT_EQ(NULL, strstr(line, " cycles=0")) TH_LOG("%s", line);
	/* nothing of the job after its end */
	EXPECT_EQ(-1, trace_find(trace, done + 1, "loom_job", match, line, sizeof(line)));
	free(trace);
}

/* The same through io_uring, between the command's issue and completion. */
TEST_F(job, trace_follows_a_uring_job)
{
	struct drm_loom_bo_ref refs[1] = { { self->cfg.handle, DRM_LOOM_BO_REF_READ } };
	struct drm_loom_submit s = submit_args(self, 0, vadd_cmd(self, 0, 8), refs, 1);
	struct __kernel_timespec ts = { .tv_sec = 10 };
	char match[64], line[512], *trace;
	long issue, submit, done, complete;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	uint64_t id;

	TRACE_OR_SKIP();
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	EXPECT_EQ(0, cqe->res);
	id = cqe->big_cqe[0];
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	trace_stop();
	ASSERT_NE(0, id);

	trace = trace_read();
	ASSERT_NE(NULL, trace);
	job_match(match, sizeof(match), self->fd, id);
	issue = trace_find(trace, 0, "loom_uring_issue", match, line, sizeof(line));
	ASSERT_LE(0, issue) TH_LOG("no loom_uring_issue with%s", match);
	EXPECT_NE(NULL, strstr(line, " result=0"));
	submit = trace_find(trace, 0, "loom_job_submit", match, line, sizeof(line));
	done = trace_find(trace, 0, "loom_job_done", match, line, sizeof(line));
	complete = trace_find(trace, 0, "loom_uring_complete", match, line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, " result=0"));
	/*
	 * The submit is traced inside the issue, before its event, which
	 * carries the issue's result: a fast job (or a slow kernel, as the
	 * debug lane's) can be done before that event.
	 */
	EXPECT_LT(submit, issue);
	EXPECT_LT(submit, done);
	EXPECT_LT(done, complete);
	free(trace);
}

/* A hung job: hang, the core's stop, the job done with ETIMEDOUT, the reset. */
TEST_F(job, trace_shows_a_hang_and_its_recovery)
{
	char match[64], line[512], *trace;
	long run, hang, stop, done, reset;
	uint64_t id;

	TRACE_OR_SKIP();
	loom_poke_core(&self->node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	id = vadd_job(self, 200 * 1000 * 1000);
	trace_stop();
	ASSERT_NE(0, id);
	EXPECT_EQ(-ETIMEDOUT, job_error(self, id));
	trace = trace_read();
	ASSERT_NE(NULL, trace);
	job_match(match, sizeof(match), self->fd, id);
	run = trace_find(trace, 0, "loom_job_run", match, line, sizeof(line));
	ASSERT_LE(0, run);
	hang = trace_find(trace, run, "loom_job_hang", match, line, sizeof(line));
	ASSERT_LT(run, hang) TH_LOG("no loom_job_hang after the run");
	stop = trace_find(trace, hang, "loom_core_stop", " core=0 ", line, sizeof(line));
	ASSERT_LT(hang, stop);
	done = trace_find(trace, stop, "loom_job_done", match, line, sizeof(line));
	ASSERT_LT(stop, done);
	{
		char want[48];

		snprintf(want, sizeof(want), " status=%d error=%d ", LOOM_STATUS_STOPPED,
			 -ETIMEDOUT);
		EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	}
	reset = trace_find(trace, done, "loom_core_reset", " core=0 hung=1", line, sizeof(line));
	EXPECT_LT(done, reset);
	free(trace);
}

/* A BO's creation with its VA and size, and its free once closed. */
TEST_F(job, trace_follows_a_bo)
{
	char match[96], line[512], *trace;
	struct loom_test_bo bo;
	long create;

	TRACE_OR_SKIP();
	ASSERT_EQ(0, _test_bo_create(self->fd, 3 * 4096, 0, &bo));
	ASSERT_EQ(0, drmCloseBufferHandle(self->fd, bo.handle));
	trace_stop();
	trace = trace_read();
	ASSERT_NE(NULL, trace);
	snprintf(match, sizeof(match), " client=%lld va=0x%llx size=%u",
		 fdinfo_value(self->fd, "drm-client-id"), (unsigned long long)bo.va,
		 3 * 4096);
	create = trace_find(trace, 0, "loom_bo_create", match, line, sizeof(line));
	ASSERT_LE(0, create) TH_LOG("no loom_bo_create with%s", match);
	EXPECT_LT(create, trace_find(trace, create, "loom_bo_free", match, line, sizeof(line)));
	free(trace);
}

/* A reset of the PCI function: its prepare and done events, named by slot. */
TEST_F(job, trace_shows_a_function_reset)
{
	char slot[64], path[160], match[96], line[512], *trace;
	long prepare;

	ASSERT_EQ(0, loom_node_slot(&self->node, slot, sizeof(slot)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", slot);
	if (access(path, W_OK))
		SKIP(return, "no %s: the device has no reset method", path);
	TRACE_OR_SKIP();
	ASSERT_EQ(0, loom_write_file(path, "1"));
	trace_stop();
	trace = trace_read();
	ASSERT_NE(NULL, trace);
	snprintf(match, sizeof(match), "dev=%s done=0 reachable=1", slot);
	prepare = trace_find(trace, 0, "loom_function_reset", match, line, sizeof(line));
	ASSERT_LE(0, prepare) TH_LOG("no loom_function_reset with %s", match);
	snprintf(match, sizeof(match), "dev=%s done=1 ", slot);
	EXPECT_LT(prepare, trace_find(trace, prepare, "loom_function_reset", match, line,
				      sizeof(line)));
	free(trace);
	/* and the device works after it */
	EXPECT_NE(0, vadd_job(self, 0));
}

/* ---- fdinfo ---------------------------------------------------------------- */

struct cycles {
	long long engine, cycles, total, fabric;
};

static struct cycles read_cycles(int fd)
{
	return (struct cycles){
		.engine = fdinfo_value(fd, "drm-engine-core0"),
		.cycles = fdinfo_value(fd, "drm-cycles-core0"),
		.total = fdinfo_value(fd, "drm-total-cycles-core0"),
		.fabric = fdinfo_value(fd, "loom-fabric-cycles-core0"),
	};
}

/*
 * drm-cycles moves by the job's busy time, as drm-engine does, and
 * loom-fabric-cycles by the fabric cycles its completion record counts;
 * drm-total-cycles is a clock: it moves without jobs, by at least the busy
 * time with one, and every file of the device reads the same clock.
 */
TEST_F(job, fdinfo_cycle_pair_moves_with_a_job)
{
	struct drm_loom_job_info info;
	struct cycles a, b, c;
	long long other_total;
	int other;
	uint64_t id;

	a = read_cycles(self->fd);
	ASSERT_LE(0, a.cycles) TH_LOG("no drm-cycles-core0");
	ASSERT_LE(0, a.total) TH_LOG("no drm-total-cycles-core0");
	ASSERT_LE(0, a.fabric) TH_LOG("no loom-fabric-cycles-core0");
	EXPECT_EQ(a.engine, a.cycles);
	EXPECT_LE(a.cycles, a.total);

	usleep(50000);
	b = read_cycles(self->fd);
	EXPECT_EQ(a.cycles, b.cycles) TH_LOG("busy cycles without a job");
	EXPECT_LE(a.total + 50000000LL, b.total) TH_LOG("the total stood still");

	id = vadd_job(self, 0);
	ASSERT_NE(0, id);
	ASSERT_EQ(0, _test_job_info(self->fd, id, &info));
	c = read_cycles(self->fd);
	EXPECT_LT(b.cycles, c.cycles);
	EXPECT_EQ(c.engine, c.cycles);
	EXPECT_LE(c.cycles - b.cycles, c.total - b.total);
	EXPECT_EQ(b.fabric + (long long)info.counters.cycles, c.fabric);
	EXPECT_LT(0, info.counters.cycles);

	other = open(self->node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	other_total = fdinfo_value(other, "drm-total-cycles-core0");
	EXPECT_LE(c.total, other_total);
	EXPECT_GE(fdinfo_value(self->fd, "drm-total-cycles-core0"), other_total);
	EXPECT_EQ(0, fdinfo_value(other, "drm-cycles-core0"));
	close(other);
}

/* ---- the cost of mapping, from the function graph tracer ---------------- */

/* Empties a tracefs file: the buffer, or a filter (then nothing is filtered). */
static int trace_truncate(const char *file)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * Records loom_vm_map_bo() and, of its callees, the page allocation only:
 * tracing the others (a call per page) would cost more than their work.
 * A filter takes one function per write; each write adds one.
 */
static int graph_start(void)
{
	int ret = trace_truncate("set_ftrace_filter");

	/* no function tracer in this kernel (the debug lane's has none) */
	if (ret == -ENOENT)
		return -EOPNOTSUPP;
	if (ret ||
	    trace_write("set_ftrace_filter", "loom_vm_map_bo\n") ||
	    trace_write("set_ftrace_filter", "drm_gem_shmem_get_pages_sgt\n") ||
	    trace_write("set_graph_function", "loom_vm_map_bo\n") ||
	    trace_write("max_graph_depth", "2"))
		return -EIO;
	/* the graph's options exist once it is the tracer */
	if (trace_write("current_tracer", "function_graph"))
		return -EOPNOTSUPP;
	if (trace_write("trace_options", "funcgraph-tail") ||
	    trace_truncate("trace"))
		return -EIO;
	return trace_write("tracing_on", "1");
}

static void graph_stop(void)
{
	trace_write("trace_options", "nofuncgraph-tail");
	trace_write("current_tracer", "nop");
	trace_write("max_graph_depth", "0");
	trace_truncate("set_graph_function");
	trace_truncate("set_ftrace_filter");
}

/* The duration a function graph line shows (" 1) ! 123.456 us | ..."), or -1. */
static double graph_us(const char *line)
{
	const char *p = strchr(line, ')');
	const char *bar = strchr(line, '|');
	char *end;
	double us;

	if (!p || !bar || p > bar)
		return -1;
	p += strspn(p + 1, " +!#*@$") + 1;
	us = strtod(p, &end);
	return end != p && end < bar && !strncmp(end, " us", 3) ? us : -1;
}

/*
 * Microseconds the trace's loom_vm_map_bo() calls spent writing page
 * tables: their time less that of drm_gem_shmem_get_pages_sgt(), which
 * allocates the pages.  -1 if the trace holds no whole call.
 */
static double map_us(const char *trace)
{
	double total = 0, pages = 0;
	int calls = 0;

	for (const char *p = trace; *p;) {
		const char *end = strchrnul(p, '\n');
		char line[256];
		size_t n = end - p < (long)sizeof(line) ? (size_t)(end - p) : sizeof(line) - 1;

		memcpy(line, p, n);
		line[n] = 0;
		if (strstr(line, "drm_gem_shmem_get_pages_sgt") && graph_us(line) >= 0)
			pages += graph_us(line);
		else if (strstr(line, "} /* loom_vm_map_bo") && graph_us(line) >= 0) {
			total += graph_us(line);
			calls++;
		}
		p = *end ? end + 1 : end;
	}
	return calls ? total - pages : -1;
}

/*
 * The least page-table time of @runs BO_CREATEs of @mb MiB; -1 on error,
 * with what went wrong (and the start of the trace) in @why.
 */
static double best_map_us(int fd, uint64_t mb, int runs, char *why, size_t size)
{
	double best = -1;

	for (int r = 0; r < runs; r++) {
		struct drm_gem_close cl = { 0 };
		struct loom_test_bo bo = { 0 };
		char *trace;
		double us;
		int ret = graph_start();

		if (ret) {
			snprintf(why, size, "tracer setup: %s", strerror(-ret));
			return -1;
		}
		ret = _test_bo_create(fd, mb << 20, 0, &bo);
		if (ret) {
			snprintf(why, size, "BO_CREATE of %llu MiB: %s",
				 (unsigned long long)mb, strerror(-ret));
			return -1;
		}
		trace_write("tracing_on", "0");
		cl.handle = bo.handle;
		ioctl(fd, DRM_IOCTL_GEM_CLOSE, &cl);
		trace = trace_read();
		us = trace ? map_us(trace) : -1;
		if (us < 0)
			snprintf(why, size, "no whole loom_vm_map_bo() call in the trace: %.600s",
				 trace ? trace : "(unreadable)");
		free(trace);
		if (us < 0)
			return -1;
		if (best < 0 || us < best)
			best = us;
	}
	return best;
}

/*
 * Finding the tables of a page must not walk every table of the address
 * space (it once did: BO_CREATE was quadratic, 2.7e8 steps to map 1 GiB).
 * Writing the page tables of 8 MiB costs the same beside a BO of 256 MiB
 * (128 more tables; what memory allows, at least 64 MiB) as beside none:
 * within twice, where walking the list of tables costs several times
 * more.  The page allocation is not counted: under TCG it dominates and
 * varies.
 */
TEST_F_TIMEOUT(job, mapping_cost_does_not_grow_with_the_address_space, 300)
{
	long long filler_mb = mem_available_mb() - 160;
	struct drm_gem_close cl = { 0 };
	struct loom_test_bo filler;
	double empty, full;
	char why[800] = "";

	if (tracefs_find())
		SKIP(return, "no tracefs in this kernel");
	if (graph_start() == -EOPNOTSUPP) {
		graph_stop();
		SKIP(return, "no function graph tracer in this kernel");
	}
	if (filler_mb > 256)
		filler_mb = 256;
	/* the debug kernel's VM leaves about 100 MiB: 50 tables still tell */
	if (filler_mb < 64)
		SKIP(return, "too little memory to fill the address space");
	/* by default all files together may pin half the RAM */
	ASSERT_EQ(0, set_param("max_pinned_total_mb", 4096));
	empty = best_map_us(self->fd, 8, 3, why, sizeof(why));
	ASSERT_EQ(0, _test_bo_create(self->fd, (uint64_t)filler_mb << 20, 0, &filler));
	full = empty < 0 ? -1 : best_map_us(self->fd, 8, 3, why, sizeof(why));
	graph_stop();
	cl.handle = filler.handle;
	ioctl(self->fd, DRM_IOCTL_GEM_CLOSE, &cl);
	ASSERT_EQ(0, set_param("max_pinned_total_mb", 0));
	ASSERT_LT(0, empty) TH_LOG("beside no BO: %s", why);
	ASSERT_LT(0, full) TH_LOG("beside %lld MiB: %s", filler_mb, why);
	TH_LOG("page tables of 8 MiB: %.0f us beside no BO, %.0f us beside %lld MiB",
	       empty, full, filler_mb);
	EXPECT_GT(2 * empty, full);
}

TEST_HARNESS_MAIN
