// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * launch_bench: what libloom adds to a launch, measured inside the test VM
 * (issue 13, P7 and P8).
 *
 * P7  Dense launches per second of @empty (bench/vm/work_bench.loom: rank
 *     0, no operation), two ways on one core's queue: loom_launch() with a
 *     token each (every token but the last freed at once, the last one
 *     waited for), and raw DRM_IOCTL_LOOM_SUBMITs of the very command
 *     buffer libloom writes for it (loom_launch_encode()), prebuilt in a BO
 *     of its own, the last one with an out-syncobj to wait for.  Both sides
 *     run the same job on the device; what differs is the library: its
 *     checks, plan lookup, command arena, token and syncobj handling.
 *     Reported: libloom launches/s / raw SUBMITs/s.
 * P8  One empty launch's round trip, the same two ways: loom_launch(),
 *     loom_token_wait() (with the job's status), loom_token_free(); and
 *     SUBMIT with an out-syncobj, drmSyncobjWait().  Reported: median
 *     libloom round trip / median raw round trip.
 *
 * Both sides of each ratio are measured in the same run, interleaved: P7
 * alternates --rounds rounds of --jobs launches per side and keeps each
 * side's best (and, for context, the median of the rounds' own ratios: on
 * a loaded host one round's rate spans 3-9x, and the two sides' best
 * rounds need not come from alike moments); P8 alternates one trip of
 * each, --trips times, and takes medians.  Every libloom job's token,
 * and the raw side's last job (by JOB_INFO), must end well.
 *
 * Usage: launch_bench [--jobs N] [--rounds R] [--trips M] [--side S] [image.lcb]
 * (default image: /data/work_bench.lcb, loomc --fabric 8x8 of
 * bench/vm/work_bench.loom).  Prints a table, RESULT lines as bench/run
 * reads them (P7 higher is better, goal 0.9; P8 lower, goal 1.1: issue
 * 36), and "N passed, N failed"; exits 1 if a measurement failed.
 * --side raw|each|lib runs only that side of P7, --rounds times, and
 * prints each round's rate: one side alone, to trace or time it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom/loom.h"
#include "loom_device.h"
#include "device_internal.h"

#define QUEUE		0
#define THREAD		"empty"
#define WAIT_NS		(10LL * 1000000000LL)
#define WARMUP_TRIPS	20
#define DEFAULT_IMAGE	"/data/work_bench.lcb"

struct side {
	bool ok;
	double value;		/* P7: launches/s; P8: median µs */
	char note[160];
};

struct raw {
	int fd;
	struct loom_bo *cmd;	/* the prebuilt command buffer */
	uint32_t cmd_size;
	struct drm_loom_bo_ref ref;
	uint32_t syncobj;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool fail(struct side *s, const char *what, int err)
{
	s->ok = false;
	snprintf(s->note, sizeof(s->note), "%s: %s", what, loom_strerror(err));
	return false;
}

static struct loom_launch empty_launch(void)
{
	return (struct loom_launch){ .kind = LOOM_LAUNCH_DENSE, .thread = THREAD,
				     .queue = QUEUE };
}

static int raw_setup(struct loom_device *dev, const struct loom_image *img,
		     struct raw *r)
{
	struct loom_launch l = empty_launch();
	unsigned char buf[4096];
	uint32_t config;
	int ret;

	r->fd = loom_device_fd(dev);
	ret = loom_launch_encode(dev, img, &l, buf, sizeof(buf), &r->cmd_size,
				 &config);
	if (!ret)
		ret = loom_bo_alloc(dev, r->cmd_size, LOOM_BO_DEVICE_READ_ONLY,
				    &r->cmd);
	if (ret)
		return ret;
	memcpy(loom_bo_map(r->cmd), buf, r->cmd_size);
	r->ref = (struct drm_loom_bo_ref){ config, DRM_LOOM_BO_REF_READ };
	ret = drmSyncobjCreate(r->fd, 0, &r->syncobj);
	return ret < 0 ? ret : ret ? -EIO : 0;
}

static int raw_submit(const struct raw *r, bool last, uint64_t *job_id)
{
	struct drm_loom_submit s = {
		.queue = QUEUE,
		.cmd_handle = loom_bo_handle(r->cmd),
		.cmd_size = r->cmd_size,
		.bo_count = 1,
		.bos = (uintptr_t)&r->ref,
		.out_syncobj = last ? r->syncobj : 0,
	};

	if (drmIoctl(r->fd, DRM_IOCTL_LOOM_SUBMIT, &s))
		return -errno;
	*job_id = s.job_id;
	return 0;
}

static int raw_wait(const struct raw *r, uint64_t job_id)
{
	struct drm_loom_job_info info = { .job_id = job_id };
	uint32_t h = r->syncobj;
	int ret = drmSyncobjWait(r->fd, &h, 1, now_ns() + WAIT_NS, 0, NULL);

	if (ret)
		return ret;
	if (drmIoctl(r->fd, DRM_IOCTL_LOOM_JOB_INFO, &info))
		return -errno;
	return info.state == DRM_LOOM_JOB_DONE ? info.error : -EINPROGRESS;
}

/* ---- P7 ------------------------------------------------------------------- */

/* @each: every SUBMIT with the out-syncobj, as every libloom launch has. */
static bool p7_raw(const struct raw *r, unsigned n, bool each, double *rate,
		   struct side *s)
{
	int64_t t = now_ns();
	uint64_t id = 0;
	int ret;

	for (unsigned i = 0; i < n; i++) {
		ret = raw_submit(r, each || i == n - 1, &id);
		if (ret)
			return fail(s, "SUBMIT", ret);
	}
	ret = raw_wait(r, id);
	t = now_ns() - t;
	if (ret)
		return fail(s, "the last raw job", ret);
	*rate = n * 1e9 / t;
	return true;
}

static bool p7_lib(struct loom_device *dev, const struct loom_image *img,
		   unsigned n, double *rate, struct side *s)
{
	struct loom_launch l = empty_launch();
	struct loom_token *tok = NULL, *prev = NULL;
	int64_t t = now_ns();
	int ret;

	for (unsigned i = 0; i < n; i++) {
		ret = loom_launch(dev, img, &l, &tok);
		if (ret) {
			loom_token_free(prev);
			return fail(s, "loom_launch", ret);
		}
		loom_token_free(prev);
		prev = tok;
	}
	ret = loom_token_wait(tok, WAIT_NS);
	t = now_ns() - t;
	loom_token_free(tok);
	if (ret)
		return fail(s, "the last libloom launch", ret);
	*rate = n * 1e9 / t;
	return true;
}

/*
 * Context for P7: libloom's own work per launch, without the ioctl --
 * loom_launch_encode() checks the launch, finds its plan and writes the
 * command, as loom_launch() does before its SUBMIT.  ns per launch.
 */
static double p7_encode_ns(struct loom_device *dev, const struct loom_image *img,
			   unsigned n)
{
	struct loom_launch l = empty_launch();
	unsigned char buf[4096];
	uint32_t size, config;
	int64_t t = now_ns();

	for (unsigned i = 0; i < n; i++)
		if (loom_launch_encode(dev, img, &l, buf, sizeof(buf), &size, &config))
			return -1;
	return (double)(now_ns() - t) / n;
}

/* ---- P8 ------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_us(int64_t *ns, unsigned m)
{
	qsort(ns, m, sizeof(*ns), cmp_i64);
	return (m % 2 ? ns[m / 2] : (ns[m / 2 - 1] + ns[m / 2]) / 2.0) / 1000.0;
}

static bool trip_raw(const struct raw *r, int64_t *ns, struct side *s)
{
	int64_t t = now_ns();
	uint64_t id;
	uint32_t h = r->syncobj;
	int ret = raw_submit(r, true, &id);

	if (!ret)
		ret = drmSyncobjWait(r->fd, &h, 1, now_ns() + WAIT_NS, 0, NULL);
	*ns = now_ns() - t;
	if (!ret)	/* untimed: the job must have ended well */
		ret = raw_wait(r, id);
	return ret ? fail(s, "raw trip", ret) : true;
}

static bool trip_lib(struct loom_device *dev, const struct loom_image *img,
		     int64_t *ns, struct side *s)
{
	struct loom_launch l = empty_launch();
	struct loom_token *tok;
	int64_t t = now_ns();
	int ret = loom_launch(dev, img, &l, &tok);

	if (!ret) {
		ret = loom_token_wait(tok, WAIT_NS);
		loom_token_free(tok);
	}
	*ns = now_ns() - t;
	return ret ? fail(s, "libloom trip", ret) : true;
}

/* --side: one side of P7 alone, each round's rate on a line of its own. */
static int p7_side(const char *side, struct loom_device *dev,
		   const struct loom_image *img, const struct raw *r,
		   unsigned jobs, unsigned rounds)
{
	struct side s = { .ok = true };

	for (unsigned k = 0; k < rounds && s.ok; k++) {
		double rate = 0;
		bool ok;

		if (!strcmp(side, "lib"))
			ok = p7_lib(dev, img, jobs, &rate, &s);
		else
			ok = p7_raw(r, jobs, !strcmp(side, "each"), &rate, &s);
		if (ok)
			printf("P7 %s round %u: %.1f jobs/s\n", side, k, rate);
	}
	if (!s.ok)
		printf("P7 %s: FAILED %s\n", side, s.note);
	printf("%d passed, %d failed\n", s.ok, !s.ok);
	return s.ok ? 0 : 1;
}

/* ---- main ----------------------------------------------------------------- */

static unsigned parse_uint(const char *v, const char *what)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || !n || n > 1000000) {
		fprintf(stderr, "launch_bench: bad %s: %s\n", what, v);
		exit(2);
	}
	return n;
}

static void row(const char *what, const struct side *s, const char *unit)
{
	if (s->ok)
		printf("  %-36s %10.1f %-10s %s\n", what, s->value, unit, s->note);
	else
		printf("  %-36s %10s %-10s %s\n", what, "FAILED", "", s->note);
}

int main(int argc, char **argv)
{
	unsigned jobs = 2000, rounds = 9, trips = 200, passed = 0;
	const char *path = DEFAULT_IMAGE, *side = NULL;
	struct side p7l = { .ok = true }, p7r = { .ok = true }, p7s = { .ok = true };
	struct side p8l = { .ok = true }, p8r = { .ok = true };
	struct loom_device *dev;
	struct loom_image *img;
	struct raw raw = { 0 };
	int64_t *lns, *rns;
	double *ratios, paired = 0;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			jobs = parse_uint(argv[++i], "--jobs");
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = parse_uint(argv[++i], "--rounds");
		else if (!strcmp(argv[i], "--trips") && i + 1 < argc)
			trips = parse_uint(argv[++i], "--trips");
		else if (!strcmp(argv[i], "--side") && i + 1 < argc &&
			 (!strcmp(argv[i + 1], "raw") || !strcmp(argv[i + 1], "each") ||
			  !strcmp(argv[i + 1], "lib")))
			side = argv[++i];
		else if (argv[i][0] != '-')
			path = argv[i];
		else {
			fprintf(stderr, "usage: %s [--jobs N] [--rounds R] [--trips M] "
				"[--side raw|each|lib] [image.lcb]\n", argv[0]);
			return 2;
		}
	}
	ret = loom_image_load_file(path, &img);
	if (ret) {
		printf("launch_bench: %s: %s\n5 failed\n", path, loom_strerror(ret));
		return 1;
	}
	ret = loom_device_open_first(&dev);
	if (!ret)
		ret = raw_setup(dev, img, &raw);
	if (ret) {
		printf("launch_bench: device: %s\n0 passed, 5 failed\n", loom_strerror(ret));
		return 1;
	}
	printf("launch_bench: %s, @%s (%u-byte command), queue %u\n\n",
	       loom_device_info(dev)->path, THREAD, raw.cmd_size, QUEUE);
	if (side)
		return p7_side(side, dev, img, &raw, jobs, rounds);
	printf("  libloom's checks, plan and command per launch: %.2f µs\n",
	       p7_encode_ns(dev, img, 20000) / 1000);

	/* P7: rounds alternate the sides, each keeps its best */
	p7l.value = p7r.value = p7s.value = 0;
	ratios = calloc(rounds, sizeof(*ratios));
	if (!ratios) {
		printf("launch_bench: out of memory\n0 passed, 5 failed\n");
		return 1;
	}
	for (unsigned k = 0; k < rounds && p7l.ok && p7r.ok && p7s.ok; k++) {
		double rl = 0, rr = 0, rs = 0;

		if (p7_raw(&raw, jobs, false, &rr, &p7r) && rr > p7r.value)
			p7r.value = rr;
		if (p7_raw(&raw, jobs, true, &rs, &p7s) && rs > p7s.value)
			p7s.value = rs;
		if (p7_lib(dev, img, jobs, &rl, &p7l) && rl > p7l.value)
			p7l.value = rl;
		printf("  P7 round %2u: raw %8.0f  each %8.0f  libloom %8.0f jobs/s\n",
		       k, rr, rs, rl);
		ratios[k] = rr > 0 ? rl / rr : 0;
	}
	/* context: the median of the rounds' own ratios (sides back to back) */
	if (p7l.ok && p7r.ok && p7s.ok) {
		qsort(ratios, rounds, sizeof(*ratios), cmp_double);
		paired = ratios[rounds / 2];
	}
	free(ratios);
	if (p7r.ok)
		snprintf(p7r.note, sizeof(p7r.note), "%u jobs, best of %u", jobs, rounds);
	if (p7s.ok)
		snprintf(p7s.note, sizeof(p7s.note), "%u jobs, best of %u (context)", jobs,
			 rounds);
	if (p7l.ok)
		snprintf(p7l.note, sizeof(p7l.note), "%u jobs, best of %u", jobs, rounds);

	/* P8: one trip of each side in turn */
	lns = calloc(trips, sizeof(*lns));
	rns = calloc(trips, sizeof(*rns));
	if (!lns || !rns) {
		fail(&p8l, "memory", -ENOMEM);
		fail(&p8r, "memory", -ENOMEM);
	}
	for (unsigned i = 0; i < WARMUP_TRIPS + trips && p8l.ok && p8r.ok; i++) {
		int64_t t, *rt = i < WARMUP_TRIPS ? &t : &rns[i - WARMUP_TRIPS];
		int64_t *lt = i < WARMUP_TRIPS ? &t : &lns[i - WARMUP_TRIPS];

		if (trip_raw(&raw, rt, &p8r))
			trip_lib(dev, img, lt, &p8l);
	}
	if (p8l.ok && p8r.ok) {
		p8r.value = median_us(rns, trips);
		p8l.value = median_us(lns, trips);
		snprintf(p8r.note, sizeof(p8r.note), "median of %u; SUBMIT, syncobj wait", trips);
		snprintf(p8l.note, sizeof(p8l.note),
			 "median of %u; loom_launch, loom_token_wait, _free", trips);
	}
	free(lns);
	free(rns);

	printf("  %-36s %10s %-10s %s\n", "measurement", "value", "unit", "detail");
	row("P7 libloom empty dense launches", &p7l, "launches/s");
	row("P7 raw SUBMIT, prebuilt command", &p7r, "jobs/s");
	row("P7 raw SUBMIT, out-syncobj each", &p7s, "jobs/s");
	if (p7l.ok && p7r.ok)
		printf("  %-36s %10.3f (median of the rounds' own: %.3f)\n",
		       "P7 ratio libloom / raw", p7l.value / p7r.value, paired);
	row("P8 libloom empty launch round trip", &p8l, "µs");
	row("P8 raw SUBMIT round trip", &p8r, "µs");
	if (p8l.ok && p8r.ok)
		printf("  %-36s %10.3f\n", "P8 ratio libloom / raw", p8l.value / p8r.value);
	printf("\n");
	if (p7l.ok && p7r.ok)
		printf("RESULT\tP7\t%.3f\tlibloom dense launches / raw SUBMITs of its command (per s)\t"
		       "%.0f launches/s vs %.0f jobs/s of an empty thread (%.0f with an "
		       "out-syncobj each), %u jobs, best of %u; median of the rounds' own "
		       "ratios %.3f\thigher\t0.9\n",
		       p7l.value / p7r.value, p7l.value, p7r.value, p7s.value, jobs, rounds,
		       paired);
	if (p8l.ok && p8r.ok)
		printf("RESULT\tP8\t%.3f\tlibloom empty launch / raw SUBMIT round trip (median µs)\t"
		       "%.1f µs vs %.1f µs, median of %u trips each\tlower\t1.1\n",
		       p8l.value / p8r.value, p8l.value, p8r.value, trips);
	passed = p7l.ok + p7r.ok + p7s.ok + p8l.ok + p8r.ok;
	printf("%u passed, %u failed\n", passed, 5 - passed);
	drmSyncobjDestroy(raw.fd, raw.syncobj);
	loom_bo_free(raw.cmd);
	loom_image_free(img);
	loom_device_close(dev);
	return passed == 5 ? 0 : 1;
}
