// SPDX-License-Identifier: MIT
/*
 * loom-run: run a compiled program's host function (@main) on a loom
 * device through libloom (loom_host_run).
 *
 * Usage: loom-run [--device PATH] [--workers N] [--stats] [--trace FILE]
 *                 [--progress] prog.lcb
 * Prints what the program prints (one value a line).  --stats adds its
 * jobs, device cycles, PE firings, dynamic-work items, steals and wall
 * time on stderr.  --trace writes a Chrome/Perfetto JSON trace: every job as a
 * span on its hardware queue, and each dynamic-work domain's replay trace
 * (the scheduler's transitions, in order, one per microsecond of a
 * logical clock) on its workers; every job and domain names its dispatch
 * occurrence (its items' ids begin with it) and its launch ref (spec §2.3:
 * "launch", loom_launch_ref_format()'s text), written once per domain on
 * its admit event, so each event's logical thread point is
 * "<launch>{<item>}".  A progress line (items, jobs, seconds)
 * is kept on stderr during long runs when stderr is a terminal, or with
 * --progress.
 * Exit status: 0 on success, 1 when the program (or the device, or the
 * image) fails, with a diagnostic on stderr ("prog.loom:LINE:COL: error:
 * ..." and notes, loom_host_report()), 2 on a usage error.
 *
 * Built with LOOM_SIM defined and linked with libloom-sim, this is
 * loom-sim: the same runner on a device simulated in the process
 * (loom_sim_open()), --fabric WxH and --cores N in place of --device.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom.h"
#include "loom_version.h"
#ifdef LOOM_SIM
#include "loom/sim.h"
#define PROG		"loom-sim"
#else
#define PROG		"loom-run"
#endif

#define PROGRESS_NS	250000000ULL	/* redraw the progress line this often */

/* The launch ref of one dispatch occurrence, as JSON string text. */
struct launch_name {
	uint64_t occurrence;
	char *ref;
};

struct run_log {
	pthread_mutex_t lock;
	struct launch_name *launches;	/* by occurrence, ascending */
	size_t n_launches, cap_launches;
	struct loom_job_record *jobs;
	size_t n_jobs, cap_jobs;
	FILE *trace;			/* NULL: no trace */
	bool trace_events_written;
	uint64_t logical_us;		/* replay events written so far */
	int domains;			/* dynamic-work domains traced */
	bool progress;
	bool progress_shown;
	uint64_t start_ns, last_progress_ns;
	uint64_t items, n_done;
	int error;			/* first failure to record */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static void show_progress(struct run_log *log, uint64_t now)
{
	fprintf(stderr, "\r" PROG ": %llu items, %llu jobs, %.1f s ",
		(unsigned long long)log->items,
		(unsigned long long)log->n_done,
		(now - log->start_ns) / 1e9);
	log->progress_shown = true;
	log->last_progress_ns = now;
}

static void keep_job(struct run_log *log, const struct loom_job_record *job)
{
	if (log->n_jobs == log->cap_jobs) {
		size_t cap = log->cap_jobs ? 2 * log->cap_jobs : 256;
		struct loom_job_record *j = realloc(log->jobs, cap * sizeof(*j));

		if (!j) {
			log->error = -ENOMEM;
			return;
		}
		log->jobs = j;
		log->cap_jobs = cap;
	}
	log->jobs[log->n_jobs++] = *job;
}

/* libloom calls this from its worker threads, so everything is locked. */
static void observe_job(void *ctx, const struct loom_job_record *job)
{
	struct run_log *log = ctx;
	uint64_t now;

	pthread_mutex_lock(&log->lock);
	log->items += job->items;
	log->n_done++;
	if (log->trace && !log->error)
		keep_job(log, job);
	now = now_ns();
	if (log->progress && now - log->last_progress_ns >= PROGRESS_NS)
		show_progress(log, now);
	pthread_mutex_unlock(&log->lock);
}

/* ------------------------------------------------------------ trace --- */

/* @in as the inside of a JSON string, in a malloc()ed buffer. */
static char *json_text(const char *in)
{
	char *out = malloc(6 * strlen(in) + 1), *o = out;

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		if (*p == '"' || *p == '\\')
			o += sprintf(o, "\\%c", *p);
		else if (*p < 0x20)
			o += sprintf(o, "\\u%04x", *p);
		else
			*o++ = *p;
	}
	*o = '\0';
	return out;
}

/*
 * libloom reports each launch's ref with its occurrence, in launch order;
 * occurrences only grow, so the table stays sorted.
 */
static void observe_launch(void *ctx, const struct loom_launch_ref *ref,
			   uint64_t occurrence)
{
	struct run_log *log = ctx;
	char text[512], *big = NULL;
	int n = loom_launch_ref_format(ref, text, sizeof(text));
	struct launch_name *l;

	if (n >= (int)sizeof(text)) {
		big = malloc(n + 1);
		if (big)
			loom_launch_ref_format(ref, big, n + 1);
	}
	pthread_mutex_lock(&log->lock);
	if (n < 0 || (n >= (int)sizeof(text) && !big)) {
		log->error = n < 0 ? n : -ENOMEM;
		goto out;
	}
	if (log->n_launches == log->cap_launches) {
		size_t cap = log->cap_launches ? 2 * log->cap_launches : 64;

		l = realloc(log->launches, cap * sizeof(*l));
		if (!l) {
			log->error = -ENOMEM;
			goto out;
		}
		log->launches = l;
		log->cap_launches = cap;
	}
	l = &log->launches[log->n_launches];
	l->occurrence = occurrence;
	l->ref = json_text(big ? big : text);
	if (!l->ref)
		log->error = -ENOMEM;
	else
		log->n_launches++;
out:
	pthread_mutex_unlock(&log->lock);
	free(big);
}

/* The launch ref text of @occurrence; "" if it was never reported. */
static const char *launch_of(const struct run_log *log, uint64_t occurrence)
{
	size_t lo = 0, hi = log->n_launches;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->launches[mid].occurrence < occurrence)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < log->n_launches && log->launches[lo].occurrence == occurrence)
		return log->launches[lo].ref;
	return "";
}

static void trace_event(struct run_log *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace_event(struct run_log *log, const char *fmt, ...)
{
	va_list ap;

	fputs(log->trace_events_written ? ",\n" : "\n", log->trace);
	log->trace_events_written = true;
	va_start(ap, fmt);
	vfprintf(log->trace, fmt, ap);
	va_end(ap);
}

static void trace_name(struct run_log *log, const char *what, int pid,
		       int tid, const char *name)
{
	trace_event(log, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
		    "\"args\":{\"name\":\"%s\"}}", what, pid, tid, name);
}

static int by_done(const void *a, const void *b)
{
	const struct loom_job_record *x = a, *y = b;

	return (x->done_ns > y->done_ns) - (x->done_ns < y->done_ns);
}

/* Process 1 + device: one track per hardware queue. */
static void trace_jobs(struct run_log *log)
{
	uint64_t t0 = UINT64_MAX, busy_until[64] = { 0 };
	bool named[64] = { false };

	qsort(log->jobs, log->n_jobs, sizeof(*log->jobs), by_done);
	for (size_t i = 0; i < log->n_jobs; i++)
		if (log->jobs[i].submit_ns < t0)
			t0 = log->jobs[i].submit_ns;
	for (size_t i = 0; i < log->n_jobs; i++) {
		const struct loom_job_record *j = &log->jobs[i];
		unsigned q = j->queue % 64;
		/* a queue runs its jobs in order: one starts when both it
		 * is submitted and the previous one has ended */
		uint64_t start = j->submit_ns > busy_until[q] ?
				 j->submit_ns : busy_until[q];
		char name[32];

		if (start > j->done_ns)
			start = j->done_ns;
		busy_until[q] = j->done_ns;
		if (!named[q]) {
			snprintf(name, sizeof(name), "queue %u", j->queue);
			trace_name(log, "thread_name", 1 + (int)j->device,
				   (int)j->queue, name);
			named[q] = true;
		}
		trace_event(log, "{\"ph\":\"X\",\"cat\":\"job\",\"name\":\"%s\","
			    "\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
			    "\"args\":{\"occurrence\":%llu,\"launch\":\"%s\","
			    "\"items\":%u,"
			    "\"cycles\":%llu,\"firings\":%llu,\"error\":%d}}",
			    j->thread, 1 + j->device, j->queue,
			    (start - t0) / 1e3, (j->done_ns - start) / 1e3,
			    (unsigned long long)j->occurrence,
			    launch_of(log, j->occurrence),
			    j->items, (unsigned long long)j->counters.cycles,
			    (unsigned long long)j->counters.firings, j->error);
	}
}

/*
 * Process 100 + n: dynamic-work domain n's replay trace.  Its events carry
 * no time, only their order, so they sit one microsecond apart.
 */
static void observe_domain(void *ctx, const char *thread,
			   const struct loom_work_device_result *res)
{
	struct run_log *log = ctx;
	const struct loom_sched_event *ev;
	char name[160], id[256];
	size_t n;
	int pid;

	if (!log->trace || !res->work.trace)
		return;
	n = loom_sched_trace_count(res->work.trace);
	ev = loom_sched_trace_events(res->work.trace);
	pthread_mutex_lock(&log->lock);
	pid = 100 + log->domains++;
	snprintf(name, sizeof(name), "%s, occurrence %llu: replay trace (logical time)",
		 thread, (unsigned long long)res->work.occurrence);
	trace_name(log, "process_name", pid, 0, name);
	for (size_t i = 0; i < n; i++) {
		loom_item_id_format(&ev[i].item, id, sizeof(id));
		/* the domain's launch once, on its admit: its root's point */
		trace_event(log, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sched\","
			    "\"name\":\"%s\",\"pid\":%d,\"tid\":%u,\"ts\":%llu,"
			    "\"args\":{%s%s%s\"item\":\"%s\",\"other_worker\":%d,"
			    "\"completes_domain\":%s}}",
			    loom_sched_event_name(ev[i].kind), pid, ev[i].worker,
			    (unsigned long long)log->logical_us++,
			    i ? "" : "\"launch\":\"",
			    i ? "" : launch_of(log, res->work.occurrence),
			    i ? "" : "\",", id,
			    ev[i].other_worker == LOOM_SCHED_NO_WORKER ? -1 :
			    (int)ev[i].other_worker,
			    ev[i].completes_domain ? "true" : "false");
	}
	pthread_mutex_unlock(&log->lock);
}

static int trace_open(struct run_log *log, const char *path)
{
	log->trace = fopen(path, "w");
	if (!log->trace)
		return -errno;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", log->trace);
	return 0;
}

static int trace_close(struct run_log *log, const char *path)
{
	int ret = 0;

	trace_name(log, "process_name", 1, 0, "loom device: jobs per queue");
	trace_jobs(log);
	fputs("\n]}\n", log->trace);
	if (ferror(log->trace))
		ret = -EIO;
	if (fclose(log->trace) && !ret)
		ret = -errno;
	if (!ret && log->error)
		ret = log->error;
	if (ret)
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(-ret));
	return ret;
}

/* ------------------------------------------------------------- main --- */

static void usage(FILE *f)
{
#ifdef LOOM_SIM
	fprintf(f,
		"usage: loom-sim [--fabric WxH] [--cores N] [--max-job-ms MS] [--func NAME]\n"
		"                [--workers N] [--stats] [--trace FILE] [--progress] prog.lcb\n"
		"Runs a loomc-compiled program's @main through libloom on a loom device\n"
		"simulated in this process: the QEMU device's engine, no kernel, no VM.\n"
		"  --fabric WxH    the fabric (default 4x4, the device's default)\n"
		"  --cores N       compute cores, one hardware queue each (default 2)\n"
		"  --max-job-ms MS stop a job running longer (default 60000, as loom.ko)\n");
#else
	fprintf(f,
		"usage: loom-run [--device PATH] [--func NAME] [--workers N] [--stats]\n"
		"                [--trace FILE] [--progress] prog.lcb\n"
		"Runs a loomc-compiled program's @main on a loom device through libloom.\n"
		"  --device PATH   the device node (default: the first loom device, or\n"
		"                  $LOOM_DEVICE)\n");
#endif
	fprintf(f,
		"  --func NAME     run host function @NAME instead of @main (no parameters)\n"
		"  --workers N     host worker threads for dynamic work (1..1024)\n"
		"  --stats         print jobs, device cycles, PE firings, dynamic-work\n"
		"                  items, steals and wall time on stderr\n"
		"  --trace FILE    write a Chrome/Perfetto JSON trace: the jobs on each\n"
		"                  hardware queue, each dynamic-work domain's scheduling\n"
		"  --progress      keep a progress line (items, jobs, seconds) on stderr\n"
		"                  (the default when stderr is a terminal)\n"
		"  -h, --help      this text\n"
		"  --version       print the version and exit\n"
		"Exit status: 0 success, 1 the program or the device failed, 2 bad usage.\n");
}

/*
 * The failure as a compiler diagnostic (loom_host_report()): at the
 * source line when the image has a source map, else naming the image and
 * the host instruction.
 */
static void report_failure(const char *file, const struct loom_image *img,
			   int ret, const struct loom_host_stats *st)
{
	char small[1024], *text = small;
	int n = loom_host_report(img, ret, st, small, sizeof(small));

	if (n >= (int)sizeof(small)) {
		text = malloc(n + 1);
		if (text)
			loom_host_report(img, ret, st, text, n + 1);
		else
			text = small;	/* cut short, still a report */
	}
	if (n < 0)
		fprintf(stderr, PROG ": %s: %s\n", file, loom_strerror(ret));
	else if (!strncmp(text, "error: ", 7))	/* no source line to name */
		fprintf(stderr, PROG ": %s: %s", file, text);
	else
		fputs(text, stderr);
	if (text != small)
		free(text);
}

struct args {
	const char *device, *file, *trace, *func;
	unsigned workers;
	bool stats, progress;
	bool sim;			/* loom-sim: --cores and --fabric */
	unsigned cores, fabric_width, fabric_height, max_job_ms;
};

/* A decimal number in [@min, @max] into *@out, else a usage error. */
static int parse_uint(const char *opt, const char *s, unsigned long min,
		      unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (*end || !*s || errno || n < min || n > max || s[0] == '-') {
		fprintf(stderr, PROG ": bad %s '%s' (%lu..%lu)\n", opt, s, min, max);
		return 2;
	}
	*out = n;
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		bool has_value = i + 1 < argc;

		if (!a->sim && !strcmp(arg, "--device") && has_value) {
			a->device = argv[++i];
		} else if (!strcmp(arg, "--trace") && has_value) {
			a->trace = argv[++i];
		} else if (!strcmp(arg, "--func") && has_value) {
			a->func = argv[++i];
		} else if (!strcmp(arg, "--workers") && has_value) {
			unsigned long n;

			if (parse_uint(arg, argv[++i], 1, 1024, &n))
				return 2;
			a->workers = n;
		} else if (a->sim && !strcmp(arg, "--cores") && has_value) {
			unsigned long n;

			if (parse_uint(arg, argv[++i], 1, 64, &n))
				return 2;
			a->cores = n;
		} else if (a->sim && !strcmp(arg, "--max-job-ms") && has_value) {
			unsigned long n;

			if (parse_uint(arg, argv[++i], 1, 3600000, &n))
				return 2;
			a->max_job_ms = n;
		} else if (a->sim && !strcmp(arg, "--fabric") && has_value) {
			unsigned w, h;
			char x, end;

			i++;
			if (sscanf(argv[i], "%u%c%u%c", &w, &x, &h, &end) != 3 ||
			    x != 'x' || !w || !h || w > LOOM_FABRIC_MAX_DIM ||
			    h > LOOM_FABRIC_MAX_DIM) {
				fprintf(stderr, PROG ": bad --fabric '%s' (WxH, "
					"1x1..%ux%u)\n", argv[i],
					LOOM_FABRIC_MAX_DIM, LOOM_FABRIC_MAX_DIM);
				return 2;
			}
			a->fabric_width = w;
			a->fabric_height = h;
		} else if (!strcmp(arg, "--stats")) {
			a->stats = true;
		} else if (!strcmp(arg, "--progress")) {
			a->progress = true;
		} else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(arg, "--version")) {
			printf(PROG " %s\n", LOOM_PROJECT_VERSION);
			exit(0);
		} else if ((!a->sim && !strcmp(arg, "--device")) ||
			   !strcmp(arg, "--trace") || !strcmp(arg, "--workers") ||
			   !strcmp(arg, "--func") ||
			   (a->sim && (!strcmp(arg, "--cores") ||
				       !strcmp(arg, "--fabric") ||
				       !strcmp(arg, "--max-job-ms")))) {
			fprintf(stderr, PROG ": %s needs a value (" PROG " --help)\n", arg);
			return 2;
		} else if (arg[0] == '-') {
			fprintf(stderr, PROG ": unknown option '%s' (" PROG " --help)\n", arg);
			return 2;
		} else if (a->file) {
			fprintf(stderr, PROG ": one program only, not '%s' too (" PROG " --help)\n", arg);
			return 2;
		} else {
			a->file = arg;
		}
	}
	if (!a->file) {
		usage(stderr);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct run_log log = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct loom_host_options opt = {
		.out = stdout,
		.observe_job = observe_job,
		.observe_domain = observe_domain,
		.observe_ctx = &log,
		.observe_launch = observe_launch,
	};
	struct loom_host_stats st;
	struct loom_device *dev = NULL;
	struct loom_image *img = NULL;
	struct args a = { 0 };
	int ret;
#ifdef LOOM_SIM
	a.sim = true;
#endif
	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret;
	opt.sched.workers = a.workers;
	opt.func = a.func;
	log.progress = a.progress || isatty(STDERR_FILENO);
	if (!a.trace) {
		opt.observe_domain = NULL;	/* no replay trace to record */
		opt.observe_launch = NULL;
	}
	ret = loom_image_load_file(a.file, &img);
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n", a.file, loom_strerror(ret));
		return 1;
	}
#ifdef LOOM_SIM
	ret = loom_sim_open(&(struct loom_sim_config){
				    .fabric_width = a.fabric_width,
				    .fabric_height = a.fabric_height,
				    .cores = a.cores,
				    .max_job_ms = a.max_job_ms,
			    }, &dev);
#else
	ret = a.device ? loom_device_open(a.device, &dev) :
			 loom_device_open_first(&dev);
#endif
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n",
			a.device ? a.device : "device", loom_strerror(ret));
		loom_image_free(img);
		return 1;
	}
	if (a.trace && trace_open(&log, a.trace)) {
		fprintf(stderr, PROG ": %s: %s\n", a.trace, strerror(errno));
		ret = 1;
		goto out;
	}
	log.start_ns = log.last_progress_ns = now_ns();
	ret = loom_host_run(dev, img, &opt, &st);
	fflush(stdout);
	if (log.progress_shown) {
		show_progress(&log, now_ns());
		fputc('\n', stderr);
	}
	if (ret)
		report_failure(a.file, img, ret, &st);
	if (a.stats)
		fprintf(stderr, "jobs %llu cycles %llu firings %llu items %llu "
			"steals %llu time %.1f ms\n",
			(unsigned long long)st.jobs,
			(unsigned long long)st.cycles,
			(unsigned long long)st.firings,
			(unsigned long long)st.items,
			(unsigned long long)st.steals,
			(now_ns() - log.start_ns) / 1e6);
	if (a.trace && trace_close(&log, a.trace) && !ret)
		ret = 1;
out:
	for (size_t i = 0; i < log.n_launches; i++)
		free(log.launches[i].ref);
	free(log.launches);
	free(log.jobs);
	loom_device_close(dev);
	loom_image_free(img);
	return ret ? 1 : 0;
}
