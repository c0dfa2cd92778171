// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * submit_bench: what submitting a job costs, measured inside the test VM
 * (issue 7, P1 and P2).
 *
 * P1  Empty jobs per second, submitted two ways on one core's queue: one
 *     DRM_IOCTL_LOOM_SUBMIT per job, then a wait for the last job's
 *     out-syncobj; and io_uring, batches of --batch IORING_OP_URING_CMD
 *     SQEs per io_uring_submit() with at most the ring's SQ size in flight,
 *     every CQE checked.  An empty job is a command buffer holding one
 *     LOOM_PKT_NOP packet.  Reported: io_uring jobs/s / ioctl jobs/s.
 * P2  The round trip of one empty job (SUBMIT with an out-syncobj, then
 *     drmSyncobjWait) against the cheapest fence round trip the kernel
 *     has: vgem's (FENCE_ATTACH on a dumb BO, FENCE_SIGNAL, poll() on the
 *     BO's dma-buf until the fence shows signalled).  Reported: median loom
 *     round trip / median vgem round trip.
 *
 * The ratios are what to read: both sides of each are measured in the same
 * run of the same (TCG, noisy) VM, interleaved so that both see the same
 * host load.  P1 runs --rounds rounds of --jobs jobs per path, alternating
 * the paths, and keeps each path's best round; P2 alternates one loom trip
 * with one vgem trip, --trips of each, and takes medians.
 *
 * Output: a table, then one line per benchmark
 *	RESULT<TAB>P1|P2<TAB><ratio><TAB><label><TAB><detail>
 *		<TAB><better><TAB><goal>
 * (only for a benchmark whose two measurements both succeeded; P1 higher
 * is better, goal 1.5, P2 lower, goal 2: issue 36), and last
 * "N passed, N failed" over the four measurements.  A failed submit, a job
 * that did not end well or a CQE with res != 0 fails its measurement, and
 * the exit status is then 1.
 *
 * The loom render node and vgem's primary node are found by driver name;
 * vgem is loaded with modprobe if it is not there (it must be in the VM's
 * initramfs: tools/vm/mkinitramfs ... loom.ko vgem).
 *
 * P1 runs again with batches of --big-batch (256; a ring twice that), and
 * each P1 line says how many guest CPUs the VM has (bench/run boots one
 * with 2 for --p1-only).  --p2-only ID: only P2, its RESULT named ID and
 * its label ending in --p2-note's TEXT (bench/run: P2p, the device with
 * poll-us).  --breakdown M: only the latency breakdown below.
 * Usage: submit_bench [--jobs N] [--batch B] [--ring SQ]
 *		       [--rounds R] [--trips M] [--big-batch B | --no-big-batch]
 *		       [--p1-only | --p2-only ID [--p2-note TEXT]]
 *	  submit_bench --breakdown M
 *
 * Built static from the repository root and run in the VM:
 *	gcc -std=gnu11 -O2 -static -Iuapi -I/usr/include/libdrm \
 *	    -o /tmp/submit_bench bench/vm/submit_bench.c -ldrm -luring
 *	tools/loom-vm /tmp/submit_bench
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"

/*
 * vgem's uapi (include/uapi/drm/vgem_drm.h of the kernel).  Neither
 * Debian's linux-libc-dev nor libdrm-dev ships that header, so the two
 * ioctls are restated here exactly as in 6.1.
 */
#define DRM_VGEM_FENCE_ATTACH	0x1
#define DRM_VGEM_FENCE_SIGNAL	0x2

struct drm_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
#define VGEM_FENCE_WRITE	0x1
	__u32 out_fence;
	__u32 pad;
};

struct drm_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};

#define DRM_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_FENCE_ATTACH, struct drm_vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGEM_FENCE_SIGNAL, struct drm_vgem_fence_signal)

#define NOP_CMD_SIZE	4		/* one header-only LOOM_PKT_NOP */
#define QUEUE		0		/* every job goes to core 0's queue */
#define WARMUP_JOBS	64
#define WARMUP_TRIPS	20
#define WAIT_NS		(10LL * 1000000000LL)	/* a stuck job, not a slow VM */
#define JOB_RECORDS	256		/* JOB_INFO keeps the file's last 256 */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct opts {
	unsigned int jobs;		/* P1: jobs per round and path */
	unsigned int batch;		/* P1: SQEs per io_uring_submit() */
	unsigned int ring;		/* P1: SQ entries, also the in-flight limit */
	unsigned int rounds;	/* P1: rounds per path */
	unsigned int trips;		/* P2: round trips timed per side */
	unsigned int breakdown;		/* --breakdown: trips per path, or 0 */
	unsigned int big_batch;		/* P1 again with batches this large, or 0 */
	bool p1_only;			/* --p1-only: no P2 */
	const char *p2_id;		/* --p2-only ID: only P2, named ID */
	const char *p2_note;		/* --p2-note TEXT: appended to P2's label */
};

struct loom {
	int fd;
	char path[32];
	char debugfs[96];	/* its queues file, for the device's job counters */
	bool counters;		/* ...which could be read */
	uint64_t cores;
	uint32_t cmd;		/* BO with the NOP packet at offset 0 */
	uint32_t syncobj;
};

struct vgem {
	int fd;
	char path[32];
	uint32_t handle;	/* a dumb BO the fences are attached to */
	int dmabuf;		/* the same BO as a dma-buf, to poll() */
};

/* One measurement's outcome: a value, or why there is none. */
struct result {
	bool ok;
	double value;		/* P1: jobs/s; P2: median µs */
	double mean;		/* P2: mean µs */
	char note[200];		/* detail, or the failure */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static __attribute__((format(printf, 2, 3))) bool fail(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	r->ok = false;
	return false;
}

/* ---- finding the devices ---------------------------------------------------- */

/* Opens the first node of @pattern (minors @first..@last) whose driver is @name. */
static int open_driver(const char *pattern, int first, int last, const char *name,
		       char *path, size_t len)
{
	for (int minor = first; minor <= last; minor++) {
		drmVersionPtr v;
		int fd, match;

		snprintf(path, len, pattern, minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		match = v && strcmp(v->name, name) == 0;
		drmFreeVersion(v);
		if (match)
			return fd;
		close(fd);
	}
	return -ENODEV;
}

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_loom_get_param args = { .param = param };

	if (drmIoctl(fd, DRM_IOCTL_LOOM_GET_PARAM, &args))
		return -errno;
	*value = args.value;
	return 0;
}

/*
 * The device's count of completed and failed jobs on QUEUE, from debugfs:
 * the only record of every job, as JOB_INFO keeps the last 256 per file.
 * Nothing else uses the device while this runs.
 */
static int device_jobs(const struct loom *lx, long long *done, long long *failed)
{
	char buf[4096], key[16];
	const char *p;
	ssize_t n;
	int fd;

	fd = open(lx->debugfs, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	snprintf(key, sizeof(key), "core %u:", QUEUE);
	p = strstr(buf, key);
	p = p ? strstr(p, "jobs: done") : NULL;
	if (!p || sscanf(p, "jobs: done %lld failed %lld", done, failed) != 2)
		return -EPROTO;
	return 0;
}

static bool loom_open(struct loom *lx, struct result *r)
{
	struct drm_loom_bo_create bo = { .size = 4096 };
	struct drm_loom_bo_mmap_offset off = { 0 };
	const uint64_t need = DRM_LOOM_FEATURE_SUBMIT | DRM_LOOM_FEATURE_URING_CMD |
			      DRM_LOOM_FEATURE_JOB_INFO;
	uint64_t features = 0;
	uint32_t *map;

	/* An accel node on 6.2+ kernels (debugfs by PCI name), else render. */
	lx->fd = open_driver("/dev/accel/accel%d", 0, 63, "loom", lx->path, sizeof(lx->path));
	if (lx->fd >= 0) {
		char sysfs[64], link[256], *pci;
		ssize_t n;

		snprintf(sysfs, sizeof(sysfs), "/sys/class/accel/%s/device", lx->path + 11);
		n = readlink(sysfs, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = 0;
		pci = strrchr(link, '/');
		snprintf(lx->debugfs, sizeof(lx->debugfs), "/sys/kernel/debug/accel/%.40s/queues",
			 pci ? pci + 1 : link);
	} else {
		lx->fd = open_driver("/dev/dri/renderD%d", 128, 191, "loom", lx->path,
				     sizeof(lx->path));
		snprintf(lx->debugfs, sizeof(lx->debugfs), "/sys/kernel/debug/dri/%s/queues",
			 lx->path + strlen("/dev/dri/renderD"));
	}
	if (lx->fd < 0)
		return fail(r, "no loom device node");
	if (get_param(lx->fd, DRM_LOOM_PARAM_NUM_CORES, &lx->cores) ||
	    get_param(lx->fd, DRM_LOOM_PARAM_FEATURES, &features))
		return fail(r, "GET_PARAM: %s", strerror(errno));
	if ((features & need) != need)
		return fail(r, "driver lacks SUBMIT, uring_cmd or JOB_INFO (features 0x%llx)",
			    (unsigned long long)features);

	if (drmIoctl(lx->fd, DRM_IOCTL_LOOM_BO_CREATE, &bo))
		return fail(r, "BO_CREATE: %s", strerror(errno));
	lx->cmd = bo.handle;
	off.handle = bo.handle;
	if (drmIoctl(lx->fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off))
		return fail(r, "BO_MMAP_OFFSET: %s", strerror(errno));
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, lx->fd, off.offset);
	if (map == MAP_FAILED)
		return fail(r, "mmap: %s", strerror(errno));
	/* Header only: the device decodes one packet and does nothing. */
	map[0] = LOOM_PKT_HEADER(LOOM_PKT_NOP, 1);
	munmap(map, 4096);
	if (drmSyncobjCreate(lx->fd, 0, &lx->syncobj))
		return fail(r, "drmSyncobjCreate: %s", strerror(errno));
	lx->counters = device_jobs(lx, &(long long){ 0 }, &(long long){ 0 }) == 0;
	return true;
}

/* /proc/sys/kernel/tainted, as text. */
static void read_taint(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	snprintf(buf, len, "?");
	if (f && fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/* The P2 baseline needs vgem's primary node: dumb BOs are not render-allowed. */
static bool vgem_open(struct vgem *vg, struct result *r)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 1, .bpp = 32 };
	char before[32], after[32];

	vg->fd = open_driver("/dev/dri/card%d", 0, 63, "vgem", vg->path, sizeof(vg->path));
	if (vg->fd < 0) {
		read_taint(before, sizeof(before));
		if (system("modprobe vgem") != 0)
			return fail(r, "vgem is not loaded and modprobe vgem failed");
		/* In-tree and signed: loading it must not taint the kernel. */
		read_taint(after, sizeof(after));
		printf("submit_bench: loaded vgem (kernel taint %s before, %s after)\n",
		       before, after);
		vg->fd = open_driver("/dev/dri/card%d", 0, 63, "vgem", vg->path,
				     sizeof(vg->path));
	}
	if (vg->fd < 0)
		return fail(r, "no vgem device node");
	if (drmIoctl(vg->fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return fail(r, "vgem CREATE_DUMB: %s", strerror(errno));
	vg->handle = dumb.handle;
	if (drmPrimeHandleToFD(vg->fd, vg->handle, DRM_CLOEXEC, &vg->dmabuf))
		return fail(r, "vgem PRIME export: %s", strerror(errno));
	return true;
}

/* ---- jobs -------------------------------------------------------------------- */

static struct drm_loom_submit nop_job(const struct loom *lx)
{
	return (struct drm_loom_submit){
		.queue = QUEUE,
		.cmd_handle = lx->cmd,
		.cmd_size = NOP_CMD_SIZE,
	};
}

static int wait_syncobj(const struct loom *lx)
{
	uint32_t handle = lx->syncobj;

	return drmSyncobjWait(lx->fd, &handle, 1, now_ns() + WAIT_NS, 0, NULL);
}

/* 0 if job @id ended well, else -errno of JOB_INFO or of the job. */
static int job_outcome(const struct loom *lx, uint64_t id)
{
	struct drm_loom_job_info info = { .job_id = id };

	if (drmIoctl(lx->fd, DRM_IOCTL_LOOM_JOB_INFO, &info))
		return -errno;
	if (info.state != DRM_LOOM_JOB_DONE)
		return -EINPROGRESS;
	return info.error;
}

/*
 * Checks that the device completed @n more jobs than at @done0/@failed0
 * and failed none.  The counters move just after the fence signals, so
 * give them a moment.  Returns false (and why in @r) if not.
 */
static bool check_device_jobs(const struct loom *lx, long long done0, long long failed0,
			      unsigned int n, struct result *r)
{
	long long done = 0, failed = 0;

	if (!lx->counters)
		return true;	/* no debugfs: JOB_INFO has checked what it can */
	for (int tries = 0; tries < 100; tries++) {
		if (device_jobs(lx, &done, &failed))
			return fail(r, "%s: cannot read the job counters", lx->debugfs);
		if (failed != failed0)
			return fail(r, "the device failed %lld jobs", failed - failed0);
		if (done - done0 == n)
			return true;
		usleep(10000);
	}
	return fail(r, "the device completed %lld jobs, not %u", done - done0, n);
}

/* ---- P1: jobs per second ------------------------------------------------------ */

static bool p1_ioctl(const struct loom *lx, unsigned int n, double *rate, struct result *r)
{
	uint64_t first = 0, last = 0;
	long long done0 = 0, failed0 = 0;
	int64_t t;
	int ret;

	device_jobs(lx, &done0, &failed0);
	t = now_ns();
	for (unsigned int i = 0; i < n; i++) {
		struct drm_loom_submit s = nop_job(lx);

		/* The queue runs a file's jobs in order: the last one done is all done. */
		if (i == n - 1)
			s.out_syncobj = lx->syncobj;
		if (drmIoctl(lx->fd, DRM_IOCTL_LOOM_SUBMIT, &s))
			return fail(r, "SUBMIT of job %u: %s", i, strerror(errno));
		if (!i)
			first = s.job_id;
		last = s.job_id;
	}
	ret = wait_syncobj(lx);
	t = now_ns() - t;
	if (ret)
		return fail(r, "waiting for the last job: %s", strerror(-ret));
	if (last - first != n - 1)
		return fail(r, "job ids %llu..%llu for %u jobs", (unsigned long long)first,
			    (unsigned long long)last, n);
	/* Every job JOB_INFO still knows must be done and well: in order. */
	for (uint64_t id = last; id >= first && last - id < JOB_RECORDS; id--) {
		ret = job_outcome(lx, id);
		if (ret)
			return fail(r, "job %llu of %llu..%llu: %s", (unsigned long long)id,
				    (unsigned long long)first, (unsigned long long)last,
				    strerror(-ret));
	}
	if (!check_device_jobs(lx, done0, failed0, n, r))
		return false;
	*rate = n * 1e9 / t;
	return true;
}

/*
 * The 80-byte command area of a 128-byte SQE.  liburing declares it as a
 * zero-length array; going through a function keeps the compiler from
 * sizing it at zero.
 */
static __attribute__((noinline)) void sqe_set_submit(struct io_uring_sqe *sqe,
						     const struct drm_loom_submit *s)
{
	char *cmd = (char *)sqe + offsetof(struct io_uring_sqe, cmd);

	memset(cmd, 0, 80);
	memcpy(cmd, s, sizeof(*s));
}

/* Queues @k NOP jobs, user_data the job's index + 1, and submits them at once. */
static int uring_submit_batch(struct io_uring *ring, const struct loom *lx,
			      unsigned int first, unsigned int k)
{
	const struct drm_loom_submit s = nop_job(lx);
	int ret;

	for (unsigned int i = 0; i < k; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			return -EBUSY;
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, lx->fd, NULL, 0, 0);
		sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
		sqe_set_submit(sqe, &s);
		io_uring_sqe_set_data64(sqe, first + i + 1);
	}
	ret = io_uring_submit(ring);
	if (ret < 0)
		return ret;
	return (unsigned int)ret == k ? 0 : -EAGAIN;
}

struct uring_run {
	unsigned int submitted, completed;
	unsigned int errors, out_of_order;
	int first_error;
	unsigned int first_error_job;
	unsigned char *seen;
};

/* Takes every CQE that is there, waiting for at least one. */
static int uring_reap(struct io_uring *ring, struct uring_run *u, unsigned int n)
{
	struct io_uring_cqe *cqes[64], *cqe;
	unsigned int got;
	int ret;

	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	got = io_uring_peek_batch_cqe(ring, cqes, 64);
	for (unsigned int i = 0; i < got; i++) {
		uint64_t job = cqes[i]->user_data - 1;

		if (job >= n || u->seen[job]++) {
			io_uring_cq_advance(ring, got);
			return -EPROTO;
		}
		/*
		 * An observation, not an error: io_uring promises no order, and
		 * 6.1 runs a batch of task work (which posts these) newest first.
		 */
		if (job != u->completed + i)
			u->out_of_order++;
		if (cqes[i]->res && !u->errors++) {
			u->first_error = cqes[i]->res;
			u->first_error_job = job;
		}
	}
	io_uring_cq_advance(ring, got);
	u->completed += got;
	return 0;
}

static bool p1_uring(const struct loom *lx, const struct opts *o, unsigned int *out_of_order,
		     double *rate, struct result *r)
{
	struct uring_run u = { 0 };
	struct io_uring ring;
	long long done0 = 0, failed0 = 0;
	unsigned int n = o->jobs;
	int64_t t;
	int ret;

	u.seen = calloc(n, 1);
	if (!u.seen)
		return fail(r, "out of memory");
	ret = io_uring_queue_init(o->ring, &ring, IORING_SETUP_SQE128);
	if (ret) {
		free(u.seen);
		return fail(r, "io_uring_queue_init: %s", strerror(-ret));
	}
	device_jobs(lx, &done0, &failed0);
	t = now_ns();
	while (u.completed < n && !ret) {
		/* Top up in whole batches while the ring has room for one. */
		while (u.submitted < n) {
			unsigned int k = n - u.submitted < o->batch ? n - u.submitted : o->batch;

			if (u.submitted - u.completed + k > o->ring)
				break;
			ret = uring_submit_batch(&ring, lx, u.submitted, k);
			if (ret)
				break;
			u.submitted += k;
		}
		if (!ret)
			ret = uring_reap(&ring, &u, n);
	}
	t = now_ns() - t;
	io_uring_queue_exit(&ring);
	free(u.seen);
	if (ret)
		return fail(r, "io_uring after %u submitted, %u completed: %s", u.submitted,
			    u.completed, strerror(-ret));
	if (u.errors)
		return fail(r, "%u CQEs failed, the first (job %u): %s", u.errors,
			    u.first_error_job, strerror(-u.first_error));
	if (!check_device_jobs(lx, done0, failed0, n, r))
		return false;
	*out_of_order = u.out_of_order;
	*rate = n * 1e9 / t;
	return true;
}

/* Warms both paths up, then alternates them --rounds times; best round wins. */
static void p1(const struct loom *lx, const struct opts *o, struct result *ioc,
	       struct result *uring)
{
	unsigned int ooo = 0, ooo_total = 0;
	struct opts warm = *o;
	double rate;

	warm.jobs = WARMUP_JOBS;
	ioc->ok = p1_ioctl(lx, WARMUP_JOBS, &rate, ioc);
	uring->ok = p1_uring(lx, &warm, &ooo, &rate, uring);
	for (unsigned int i = 0; i < o->rounds; i++) {
		if (ioc->ok && p1_ioctl(lx, o->jobs, &rate, ioc) && rate > ioc->value)
			ioc->value = rate;
		if (uring->ok && p1_uring(lx, o, &ooo, &rate, uring)) {
			ooo_total += ooo;
			if (rate > uring->value)
				uring->value = rate;
		}
	}
	if (ioc->ok)
		snprintf(ioc->note, sizeof(ioc->note), "%u jobs, best of %u", o->jobs,
			 o->rounds);
	if (uring->ok)
		snprintf(uring->note, sizeof(uring->note),
			 "batch %u, ring %u, %u jobs, best of %u; %u CQEs out of job order",
			 o->batch, o->ring, o->jobs, o->rounds, ooo_total);
}

/* ---- P2: round trips -------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Median and mean of @m samples in ns, as µs. */
static void summarize(int64_t *ns, unsigned int m, struct result *r)
{
	double sum = 0;

	for (unsigned int i = 0; i < m; i++)
		sum += ns[i];
	qsort(ns, m, sizeof(*ns), cmp_i64);
	r->value = (m % 2 ? ns[m / 2] : (ns[m / 2 - 1] + ns[m / 2]) / 2.0) / 1000.0;
	r->mean = sum / m / 1000.0;
	r->ok = true;
	snprintf(r->note, sizeof(r->note), "median of %u, mean %.1f µs, min %.1f, max %.1f",
		 m, r->mean, ns[0] / 1000.0, ns[m - 1] / 1000.0);
}

/*
 * One empty job's round trip in *@ns, and in *@submit_ns when SUBMIT had
 * returned (the scheduler thread it wakes may run the whole job first);
 * false (and why in @r) if it failed.
 */
static bool loom_trip(const struct loom *lx, int64_t *ns, int64_t *submit_ns,
		      struct result *r)
{
	struct drm_loom_submit s = nop_job(lx);
	int64_t t;
	int ret;

	s.out_syncobj = lx->syncobj;
	t = now_ns();
	if (drmIoctl(lx->fd, DRM_IOCTL_LOOM_SUBMIT, &s))
		return fail(r, "SUBMIT: %s", strerror(errno));
	*submit_ns = now_ns() - t;
	ret = wait_syncobj(lx);
	*ns = now_ns() - t;
	if (ret)
		return fail(r, "drmSyncobjWait: %s", strerror(-ret));
	/* Untimed: the job must also have ended well. */
	ret = job_outcome(lx, s.job_id);
	if (ret)
		return fail(r, "job %llu: %s", (unsigned long long)s.job_id, strerror(-ret));
	return true;
}

static int vgem_attach(const struct vgem *vg, uint32_t *fence)
{
	struct drm_vgem_fence_attach a = { .handle = vg->handle, .flags = VGEM_FENCE_WRITE };

	if (drmIoctl(vg->fd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

static int vgem_signal(const struct vgem *vg, uint32_t fence)
{
	struct drm_vgem_fence_signal s = { .fence = fence };

	return drmIoctl(vg->fd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

/* Polls the dma-buf for reading: ready once its write fences have signalled. */
static int vgem_poll(const struct vgem *vg, int timeout_ms)
{
	struct pollfd p = { .fd = vg->dmabuf, .events = POLLIN };
	int ret = poll(&p, 1, timeout_ms);

	if (ret < 0)
		return -errno;
	return ret == 1 && (p.revents & POLLIN);
}

/* The poll must wait for the fence, or the trips would time nothing. */
static bool vgem_check(const struct vgem *vg, struct result *r)
{
	uint32_t fence = 0;
	int ret;

	ret = vgem_attach(vg, &fence);
	if (ret)
		return fail(r, "FENCE_ATTACH: %s", strerror(-ret));
	ret = vgem_poll(vg, 0);
	if (ret)
		return fail(r, "the dma-buf polls %s with its fence unsignalled",
			    ret > 0 ? "ready" : strerror(-ret));
	ret = vgem_signal(vg, fence);
	if (ret)
		return fail(r, "FENCE_SIGNAL: %s", strerror(-ret));
	return true;
}

/* One vgem fence's round trip: attach, signal, see it signalled. */
static bool vgem_trip(const struct vgem *vg, int64_t *ns, struct result *r)
{
	int64_t t = now_ns();
	uint32_t fence = 0;
	int ret;

	ret = vgem_attach(vg, &fence);
	if (ret)
		return fail(r, "FENCE_ATTACH: %s", strerror(-ret));
	ret = vgem_signal(vg, fence);
	if (ret)
		return fail(r, "FENCE_SIGNAL: %s", strerror(-ret));
	ret = vgem_poll(vg, WAIT_NS / 1000000);
	*ns = now_ns() - t;
	if (ret != 1)
		return fail(r, "poll after FENCE_SIGNAL: %s", ret ? strerror(-ret) : "not ready");
	return true;
}

/*
 * Alternates loom and vgem trips, so that both sides of the ratio see the
 * same VM and host weather; either side may be missing (@lx or @vg NULL).
 */
static void p2(const struct loom *lx, const struct vgem *vg, unsigned int m,
	       struct result *lrt, struct result *vrt)
{
	int64_t *lns = calloc(m, sizeof(*lns)), *vns = calloc(m, sizeof(*vns));
	int64_t *sns = calloc(m, sizeof(*sns));
	bool lok = lx, vok = vg && vgem_check(vg, vrt);
	int64_t t, ts;

	if (!lns || !vns || !sns) {
		if (lok)
			fail(lrt, "out of memory");
		if (vok)
			fail(vrt, "out of memory");
		lok = false;
		vok = false;
	}
	for (unsigned int i = 0; i < WARMUP_TRIPS + m && (lok || vok); i++) {
		unsigned int k = i - WARMUP_TRIPS;

		if (lok)
			lok = i < WARMUP_TRIPS ? loom_trip(lx, &t, &ts, lrt) :
						 loom_trip(lx, &lns[k], &sns[k], lrt);
		if (vok)
			vok = vgem_trip(vg, i < WARMUP_TRIPS ? &t : &vns[k], vrt);
	}
	if (lok) {
		struct result sub;
		size_t len;

		summarize(sns, m, &sub);
		summarize(lns, m, lrt);
		len = strlen(lrt->note);
		snprintf(lrt->note + len, sizeof(lrt->note) - len,
			 "; SUBMIT returned at %.1f µs", sub.value);
	}
	if (vok) {
		size_t len;

		summarize(vns, m, vrt);
		len = strlen(vrt->note);
		snprintf(vrt->note + len, sizeof(vrt->note) - len,
			 "; attach, signal, poll the dma-buf");
	}
	free(lns);
	free(vns);
	free(sns);
}

/* ---- latency breakdown (--breakdown M) ----------------------------------------- */

/*
 * Where one empty job's round trip goes, from the kernel's own tracepoints
 * in the same clock as the program's (trace_clock "mono" is
 * CLOCK_MONOTONIC): M trips by ioctl (SUBMIT, drmSyncobjWait) and M by
 * io_uring (one SQE, io_uring_submit_and_wait), alternating.  Each trip's
 * events lie between its start and its end (one job at a time), so each
 * event's time since the trip's start is known; the medians of those, in
 * order, are the breakdown.  The device's own share (doorbell, job start
 * and end, MSI-X) is in QEMU's trace (bench/latency-device).  Tracing costs
 * time itself: the traced round trip is printed beside an untraced one.
 */
#define MAX_STAMPS	16

struct stamp_kind {
	const char *event;	/* as the trace names it, ": event:" */
	const char *what;
};

/* In the order a job meets them; user-space stamps are U*. */
static const struct stamp_kind stamp_kinds[] = {
	{ "loom_uring_issue", "uring_cmd issued (SQE read)" },
	{ "loom_job_submit", "job checked and pushed to drm_sched" },
	{ "drm_run_job", "drm_sched's worker runs it" },
	{ "loom_job_run", "descriptor written, doorbell rung" },
	{ "irq_handler_entry", "MSI-X handler entered" },
	{ "loom_job_done", "completion reaped, fence signalled" },
	{ "sched_wakeup", "the waiting thread woken" },
	{ "loom_uring_complete", "CQE posted" },
};

#define N_KINDS		ARRAY_SIZE(stamp_kinds)
#define K_RETURN	N_KINDS		/* user: SUBMIT returned */
#define K_END		(N_KINDS + 1)	/* user: the wait returned */

struct trip {
	int64_t start, stamp[N_KINDS + 2];	/* ns; 0 = not seen */
	bool uring;
	bool direct;		/* loom.ko's direct path was on */
};

#define DIRECT_PARAM	"/sys/module/loom/parameters/direct_submit"

static char tracefs[64];

static int trace_write(const char *file, const char *val)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

static bool trace_setup(struct result *r)
{
	static const char *const enable[] = {
		"events/loom/loom_job_submit", "events/loom/loom_job_run",
		"events/loom/loom_job_done", "events/loom/loom_uring_issue",
		"events/loom/loom_uring_complete", "events/gpu_scheduler/drm_run_job",
		"events/irq/irq_handler_entry", "events/sched/sched_wakeup",
	};
	char path[128], filter[64];

	snprintf(tracefs, sizeof(tracefs), "/sys/kernel/tracing");
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	if (access(path, F_OK))
		mount("tracefs", tracefs, "tracefs", 0, NULL);
	if (access(path, F_OK))
		return fail(r, "no tracefs");
	if (trace_write("tracing_on", "0") || trace_write("events/enable", "0") ||
	    trace_write("trace_clock", "mono") || trace_write("buffer_size_kb", "8192") ||
	    trace_write("trace", ""))
		return fail(r, "tracefs setup: %s", strerror(errno));
	snprintf(filter, sizeof(filter), "pid == %d", (int)getpid());
	if (trace_write("events/irq/irq_handler_entry/filter", "name == \"loom\"") ||
	    trace_write("events/sched/sched_wakeup/filter", filter))
		return fail(r, "tracefs filters: %s", strerror(errno));
	for (unsigned int i = 0; i < ARRAY_SIZE(enable); i++) {
		snprintf(path, sizeof(path), "%s/enable", enable[i]);
		if (trace_write(path, "1"))
			return fail(r, "cannot enable %s: %s", enable[i], strerror(errno));
	}
	return true;
}

/* "  comm-pid [000] d..1. 123.456789: event: ...": the time and the event. */
static bool trace_line(const char *line, int64_t *ns, unsigned int *kind)
{
	for (unsigned int k = 0; k < N_KINDS; k++) {
		char key[48];
		const char *p, *t;
		unsigned long long s, us;

		snprintf(key, sizeof(key), ": %s:", stamp_kinds[k].event);
		p = strstr(line, key);
		if (!p)
			continue;
		for (t = p; t > line && t[-1] != ' '; t--)
			;
		if (sscanf(t, "%llu.%6llu:", &s, &us) != 2)
			return false;
		*ns = (int64_t)(s * 1000000000ULL + us * 1000ULL);
		*kind = k;
		return true;
	}
	return false;
}

/* Gives each traced event to the trip whose window holds it (its first). */
static bool trace_collect(struct trip *trips, unsigned int n, struct result *r)
{
	char path[128], line[512];
	unsigned int t = 0;
	FILE *f;

	trace_write("tracing_on", "0");
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	f = fopen(path, "r");
	if (!f)
		return fail(r, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned int k;
		int64_t ns;

		if (line[0] == '#' || !trace_line(line, &ns, &k))
			continue;
		while (t < n && ns > trips[t].stamp[K_END])
			t++;
		if (t == n)
			break;
		if (ns >= trips[t].start && !trips[t].stamp[k])
			trips[t].stamp[k] = ns;
	}
	fclose(f);
	trace_write("events/enable", "0");
	return true;
}

static bool trip_ioctl(const struct loom *lx, struct trip *tr, struct result *r)
{
	struct drm_loom_submit s = nop_job(lx);
	int ret;

	s.out_syncobj = lx->syncobj;
	tr->start = now_ns();
	if (drmIoctl(lx->fd, DRM_IOCTL_LOOM_SUBMIT, &s))
		return fail(r, "SUBMIT: %s", strerror(errno));
	tr->stamp[K_RETURN] = now_ns();
	ret = wait_syncobj(lx);
	tr->stamp[K_END] = now_ns();
	if (ret)
		return fail(r, "drmSyncobjWait: %s", strerror(-ret));
	return true;
}

static bool trip_uring(const struct loom *lx, struct io_uring *ring, struct trip *tr,
		       struct result *r)
{
	const struct drm_loom_submit s = nop_job(lx);
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret, res;

	if (!sqe)
		return fail(r, "no SQE");
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, lx->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	tr->start = now_ns();
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret >= 0)
		ret = io_uring_wait_cqe(ring, &cqe);
	tr->stamp[K_END] = now_ns();
	if (ret < 0)
		return fail(r, "io_uring: %s", strerror(-ret));
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (res)
		return fail(r, "CQE res %d", res);
	return true;
}

/* Prints each event's median time since the trip began, in that order. */
static void breakdown_table(const struct trip *trips, unsigned int n, bool uring)
{
	int64_t *v = calloc(n, sizeof(*v));
	double med[N_KINDS + 2];
	unsigned int order[N_KINDS + 2], kinds = 0, seen[N_KINDS + 2];
	double prev = 0;

	if (!v)
		return;
	for (unsigned int k = 0; k < N_KINDS + 2; k++) {
		unsigned int m = 0;

		for (unsigned int i = 0; i < n; i++)
			if (trips[i].uring == uring && trips[i].stamp[k])
				v[m++] = trips[i].stamp[k] - trips[i].start;
		seen[k] = m;
		if (!m)
			continue;
		qsort(v, m, sizeof(*v), cmp_i64);
		med[k] = v[m / 2] / 1000.0;
		order[kinds++] = k;
	}
	free(v);
	/* by median time: the order things happened in on a typical trip */
	for (unsigned int i = 1; i < kinds; i++)
		for (unsigned int j = i; j > 0 && med[order[j]] < med[order[j - 1]]; j--) {
			unsigned int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	printf("\n  %s: median µs since the call began, and since the step before\n",
	       uring ? "io_uring (one SQE, submit_and_wait)" : "ioctl (SUBMIT, drmSyncobjWait)");
	for (unsigned int i = 0; i < kinds; i++) {
		unsigned int k = order[i];
		const char *what = k == K_RETURN ? "SUBMIT returned to user space" :
				   k == K_END ? "the wait returned to user space" :
						stamp_kinds[k].what;

		printf("  %-40s %8.1f %+8.1f  (%u trips)\n", what, med[k], med[k] - prev,
		       seen[k]);
		printf("BREAKDOWN\t%s\t%s\t%.1f\t%.1f\n", uring ? "uring" : "ioctl",
		       k == K_RETURN ? "submit_return" : k == K_END ? "end" : stamp_kinds[k].event,
		       med[k], med[k] - prev);
		prev = med[k];
	}
}

/* Sets loom.ko's direct path on or off; false if the module has no such knob. */
static bool set_direct(bool on)
{
	int fd = open(DIRECT_PARAM, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, on ? "Y" : "N", 1) == 1;
	close(fd);
	return ok;
}

/*
 * Runs @n trips, alternating the paths, and with @toggle the direct path
 * too (off, off, on, on, ...: each path sees both); false (and why in @r)
 * if one failed.
 */
static bool run_trips(const struct loom *lx, struct io_uring *ring, struct trip *trips,
		      unsigned int n, bool toggle, struct result *r)
{
	memset(trips, 0, n * sizeof(*trips));
	for (unsigned int i = 0; i < n; i++) {
		trips[i].uring = i & 1;
		trips[i].direct = toggle ? (i >> 1) & 1 : true;
		if (toggle && !set_direct(trips[i].direct))
			return fail(r, "%s: %s", DIRECT_PARAM, strerror(errno));
		if (!(trips[i].uring ? trip_uring(lx, ring, &trips[i], r) :
				       trip_ioctl(lx, &trips[i], r)))
			return false;
	}
	return !toggle || set_direct(true) || fail(r, "%s: %s", DIRECT_PARAM, strerror(errno));
}

/* The median round trip of the trips of one path and direct setting, in µs. */
static double trip_median(const struct trip *trips, unsigned int n, bool uring, bool direct)
{
	int64_t *v = calloc(n, sizeof(*v));
	unsigned int m = 0;
	double med;

	if (!v)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		if (trips[i].uring == uring && trips[i].direct == direct)
			v[m++] = trips[i].stamp[K_END] - trips[i].start;
	qsort(v, m, sizeof(*v), cmp_i64);
	med = m ? v[m / 2] / 1e3 : 0;
	free(v);
	return med;
}

/* 0 if every trip ran; the tables go to stdout. */
static int breakdown(const struct loom *lx, unsigned int m)
{
	struct trip *trips = calloc(4 * (size_t)m, sizeof(*trips));
	struct result r = { .ok = true };
	double plain[2][2] = { { 0, 0 }, { 0, 0 } };	/* [uring][direct] */
	bool toggle = access(DIRECT_PARAM, W_OK) == 0;
	struct io_uring ring;
	int ret;

	if (!trips)
		return 1;
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128);
	if (ret) {
		fprintf(stderr, "submit_bench: io_uring_queue_init: %s\n", strerror(-ret));
		free(trips);
		return 1;
	}
	/*
	 * Untraced first (after a warm-up): what the tracing itself costs, and
	 * the direct path's worth, both ways in one run.
	 */
	if (run_trips(lx, &ring, trips, 4 * WARMUP_TRIPS, false, &r) &&
	    run_trips(lx, &ring, trips, 4 * m, toggle, &r)) {
		for (int u = 0; u < 2; u++)
			for (int d = 0; d < 2; d++)
				plain[u][d] = trip_median(trips, 4 * m, u, d);
		if (trace_setup(&r)) {
			trace_write("tracing_on", "1");
			if (run_trips(lx, &ring, trips, 2 * m, false, &r))
				trace_collect(trips, 2 * m, &r);
		}
	}
	io_uring_queue_exit(&ring);
	if (!r.ok) {
		fprintf(stderr, "submit_bench: breakdown: %s\n", r.note);
		free(trips);
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("submit_bench: latency breakdown, %u trips each way; untraced medians: "
	       "ioctl %.1f µs, io_uring %.1f µs; traced: %.1f and %.1f µs\n", m, plain[0][1],
	       plain[1][1], trip_median(trips, 2 * m, false, true),
	       trip_median(trips, 2 * m, true, true));
	if (toggle)
		printf("submit_bench: with loom.ko's direct path off (%s=N), the same "
		       "trips take ioctl %.1f µs, io_uring %.1f µs\n", DIRECT_PARAM,
		       plain[0][0], plain[1][0]);
	printf("BREAKDOWN\tioctl\tuntraced\t%.1f\t%.1f\n"
	       "BREAKDOWN\turing\tuntraced\t%.1f\t%.1f\n",
	       plain[0][1], toggle ? plain[0][0] : 0, plain[1][1], toggle ? plain[1][0] : 0);
	breakdown_table(trips, 2 * m, false);
	breakdown_table(trips, 2 * m, true);
	free(trips);
	printf("1 passed, 0 failed\n");
	return 0;
}

/* ---- report ------------------------------------------------------------------ */

static void row(const char *what, const struct result *r, const char *unit)
{
	int width = 7;

	/* printf pads bytes, the terminal shows characters: count µ as one */
	for (const char *c = unit; *c; c++)
		width += (*c & 0xc0) == 0x80;
	if (r->ok)
		printf("  %-34s %10.1f %-*s %s\n", what, r->value, width, unit, r->note);
	else
		printf("  %-34s %10s %-7s %s\n", what, "FAILED", "", r->note);
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--jobs N] [--batch B] [--ring SQ] [--rounds R] [--trips M]\n"
		"              [--big-batch B | --no-big-batch]\n"
		"              [--p1-only | --p2-only ID [--p2-note TEXT]]\n"
		"       %s --breakdown M\n",
		argv0, argv0);
	return 2;
}

static unsigned int parse_uint(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == 0 || *end || v == 0 || v > 1000000) {
		fprintf(stderr, "submit_bench: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct opts o = { .jobs = 4000, .batch = 32, .ring = 128, .rounds = 5, .trips = 2000,
			  .big_batch = 256 };
	struct result ioc = { 0 }, uring = { 0 }, lrt = { 0 }, vrt = { 0 };
	struct result big_ioc = { 0 }, big_uring = { 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct loom lx = { .fd = -1 };
	struct vgem vg = { .fd = -1, .dmabuf = -1 };
	const struct result *all[6];
	bool have_loom, have_vgem;
	unsigned int passed = 0, n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			o.jobs = parse_uint(argv[++i], "--jobs");
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			o.batch = parse_uint(argv[++i], "--batch");
		else if (!strcmp(argv[i], "--ring") && i + 1 < argc)
			o.ring = parse_uint(argv[++i], "--ring");
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			o.rounds = parse_uint(argv[++i], "--rounds");
		else if (!strcmp(argv[i], "--trips") && i + 1 < argc)
			o.trips = parse_uint(argv[++i], "--trips");
		else if (!strcmp(argv[i], "--breakdown") && i + 1 < argc)
			o.breakdown = parse_uint(argv[++i], "--breakdown");
		else if (!strcmp(argv[i], "--big-batch") && i + 1 < argc)
			o.big_batch = parse_uint(argv[++i], "--big-batch");
		else if (!strcmp(argv[i], "--no-big-batch"))
			o.big_batch = 0;
		else if (!strcmp(argv[i], "--p1-only"))
			o.p1_only = true;
		else if (!strcmp(argv[i], "--p2-only") && i + 1 < argc)
			o.p2_id = argv[++i];
		else if (!strcmp(argv[i], "--p2-note") && i + 1 < argc)
			o.p2_note = argv[++i];
		else
			return usage(argv[0]);
	}
	/* A whole batch must fit in the ring, or the loop could never submit. */
	if (o.batch > o.ring) {
		fprintf(stderr, "submit_bench: --batch %u exceeds --ring %u\n", o.batch, o.ring);
		return 2;
	}
	have_loom = loom_open(&lx, &ioc);
	if (o.breakdown) {
		if (!have_loom) {
			fprintf(stderr, "submit_bench: %s\n", ioc.note);
			printf("0 passed, 1 failed\n");
			return 1;
		}
		return breakdown(&lx, o.breakdown);
	}
	if (o.p2_id) {
		o.big_batch = 0;
		if (!have_loom) {
			uring = ioc;
			lrt = ioc;
		}
	} else if (have_loom) {
		printf("submit_bench: loom %s, %llu cores, jobs on core %u; P1 jobs checked %s\n",
		       lx.path, (unsigned long long)lx.cores, QUEUE,
		       lx.counters ? "by the device's counters in debugfs" :
				     "by JOB_INFO on each round's last 256 (no debugfs)");
		fflush(stdout);
		p1(&lx, &o, &ioc, &uring);
		if (o.big_batch) {
			struct opts big = o;

			big.batch = o.big_batch;
			big.ring = 2 * o.big_batch;
			p1(&lx, &big, &big_ioc, &big_uring);
		}
	} else {
		uring = ioc;
		lrt = ioc;
	}
	if (!o.p1_only) {
		have_vgem = vgem_open(&vg, &vrt);
		printf("submit_bench: vgem %s\n\n", vg.fd >= 0 ? vg.path : "missing");
		fflush(stdout);
		p2(have_loom ? &lx : NULL, have_vgem ? &vg : NULL, o.trips, &lrt, &vrt);
	}

	printf("  %-34s %10s %-7s %s\n", "measurement", "value", "unit", "detail");
	if (!o.p2_id) {
		row("P1 one ioctl per job", &ioc, "jobs/s");
		row("P1 io_uring batched", &uring, "jobs/s");
	}
	if (!o.p2_id && ioc.ok && uring.ok)
		printf("  %-34s %10.3f\n", "P1 ratio io_uring / ioctl", uring.value / ioc.value);
	if (o.big_batch) {
		row("P1 one ioctl per job (again)", &big_ioc, "jobs/s");
		row("P1 io_uring, big batches", &big_uring, "jobs/s");
		if (big_ioc.ok && big_uring.ok)
			printf("  %-34s %10.3f\n", "P1 ratio, big batches",
			       big_uring.value / big_ioc.value);
	}
	if (!o.p1_only) {
		row("P2 loom empty job round trip", &lrt, "µs");
		row("P2 vgem fence round trip", &vrt, "µs");
		if (lrt.ok && vrt.ok)
			printf("  %-34s %10.3f\n", "P2 ratio loom / vgem", lrt.value / vrt.value);
	}
	printf("\n");

	/* The headline P1 keeps its first conditions (batch 32, one guest CPU). */
	if (!o.p2_id && ioc.ok && uring.ok)
		printf("RESULT\tP1\t%.3f\tio_uring batches of %u / ioctl per job (jobs/s, "
		       "%ld guest CPU%s)\tio_uring %.0f jobs/s, ioctl %.0f jobs/s, %u jobs"
		       "\thigher\t1.5\n",
		       uring.value / ioc.value, o.batch, cpus, cpus == 1 ? "" : "s",
		       uring.value, ioc.value, o.jobs);
	if (o.big_batch && big_ioc.ok && big_uring.ok)
		printf("RESULT\tP1\t%.3f\tio_uring batches of %u / ioctl per job (jobs/s, "
		       "%ld guest CPU%s)\tio_uring %.0f jobs/s, ioctl %.0f jobs/s, %u jobs"
		       "\thigher\t1.5\n",
		       big_uring.value / big_ioc.value, o.big_batch, cpus, cpus == 1 ? "" : "s",
		       big_uring.value, big_ioc.value, o.jobs);
	if (!o.p1_only && lrt.ok && vrt.ok)
		printf("RESULT\t%s\t%.3f\tloom empty job / vgem fence round trip (median µs%s%s)\t"
		       "loom %.1f µs, vgem %.1f µs, median of %u each\tlower\t2\n",
		       o.p2_id ? o.p2_id : "P2", lrt.value / vrt.value,
		       o.p2_note ? ", " : "", o.p2_note ? o.p2_note : "",
		       lrt.value, vrt.value, o.trips);

	if (!o.p2_id) {
		all[n++] = &ioc;
		all[n++] = &uring;
	}
	if (o.big_batch) {
		all[n++] = &big_ioc;
		all[n++] = &big_uring;
	}
	if (!o.p1_only) {
		all[n++] = &lrt;
		all[n++] = &vrt;
	}
	for (unsigned int i = 0; i < n; i++)
		passed += all[i]->ok;
	printf("%u passed, %u failed\n", passed, n - passed);
	return passed == n ? 0 : 1;
}
