// SPDX-License-Identifier: GPL-2.0
/*
 * loom_fuzz: random but structured DRM ioctls and io_uring commands on the
 * loom nodes, from several processes and threads at once, in the test VM.
 *
 *   loom_fuzz [--seed N] [--seconds N] [--procs N] [--threads N]
 *
 * Fuzzer processes (--procs, each with --threads threads, each thread with
 * its own file) issue every loom ioctl and the DRM core ioctls a render or
 * accel node allows, valid and corrupted: random fields, flags, pads and
 * sizes, handles of this file and of others, pointers into unmapped,
 * read-only and edge-of-page memory; command buffers of valid and mutated
 * packets; uring_cmd SUBMITs on rings torn down with commands in flight;
 * closes and reopens, and forks sharing the file.  A process the driver
 * bans (its jobs hung DRM_LOOM_MAX_HANGS times) is replaced by a new one.
 *
 * Invariants, checked as it goes and at the end:
 *   - every SUBMIT the kernel accepted with an out-syncobj signals, within
 *     a bound; every uring_cmd a ring accepted gets exactly one CQE;
 *   - a ledger process per device, which never misbehaves, runs chains of
 *     counter jobs by ioctl and io_uring between the fuzzers' jobs: each
 *     completes exactly once, without error, in order (job i logs i);
 *   - BOs of files no job uses (canaries, one per thread) never change;
 *   - afterwards every queue of every device still runs a vector add, and
 *     loom.ko's reference count returns to what it was (nothing leaked
 *     files or jobs).
 * A kernel WARN, oops, taint or hang fails the run through loom-vm.
 *
 * Output: a line of totals (calls, calls/s, jobs and commands accepted and
 * completed, bans, findings), then kselftest totals.  The same seed makes
 * the same choices; interleavings vary, as they do on hardware.
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "vm_client.h"

#define MAX_THREADS	8
#define MAX_PROCS	16
#define MAX_HANDLES	32
#define MAX_PENDING	32
#define CMD_BO		CLIENT_CMD_BO
#define CANARY_BO	16384
#define WAIT_MS		30000	/* an accepted job not done by then is lost */
#define JOB_CAP_MS	"1000"	/* max_job_ms while fuzzing: long jobs end fast */
#define EXIT_BANNED	3

/* Counters one process shares with the parent (MAP_SHARED). */
struct fz_stats {
	uint64_t calls;
	uint64_t jobs_accepted, jobs_done;
	uint64_t cmds_accepted, cmds_done, cmds_abandoned;
	uint64_t ledger_jobs;
	uint64_t findings;
};

static struct fz_stats *stats_base;	/* [MAX_PROCS + 2] */
static struct loom_node nodes[LOOM_MAX_NODES];
static int num_nodes;
static unsigned num_cores[LOOM_MAX_NODES];
static double deadline;
static volatile int banned;	/* this process's SUBMITs get ECANCELED */

#define finding(st, ...) do {						\
	fprintf(stderr, "loom_fuzz: FINDING: " __VA_ARGS__);		\
	__atomic_add_fetch(&(st)->findings, 1, __ATOMIC_RELAXED);	\
} while (0)

/* ---- hostile pointers ------------------------------------------------------ */

/*
 * Memory to point the kernel at: a page followed by an inaccessible one
 * (a struct placed at its end runs off the edge), a read-only page (the
 * kernel's write-back faults) and an address that was unmapped.
 */
static char *edge_page, *ro_page, *gone_page;

static void hostile_memory_init(void)
{
	edge_page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(edge_page + 4096, 4096, PROT_NONE);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone_page, 4096);
}

/* @valid, or (one time in @bad_pct) a pointer the kernel must refuse. */
static void *fuzz_ptr(struct rng *r, void *valid, size_t len, unsigned bad_pct)
{
	if (!chance(r, bad_pct))
		return valid;
	switch (below(r, 7)) {
	case 0: return NULL;
	case 1: return ro_page;
	case 2: return gone_page;
	case 3: return (void *)0xffff888000000000ULL;	/* the kernel's */
	case 4: return (void *)(uintptr_t)rnd(r);
	case 5: /* the struct's tail in the inaccessible page */
		return edge_page + 4096 - (len > 1 ? 1 + below(r, len - 1) : 0);
	default: /* valid bytes right up to the edge */
		if (len && len <= 4096) {
			memcpy(edge_page + 4096 - len, valid, len);
			return edge_page + 4096 - len;
		}
		return valid;
	}
}

/* Replaces one field-sized piece of @p with a random value. */
static void corrupt(struct rng *r, void *p, size_t len)
{
	size_t off = below(r, len);
	uint64_t v = chance(r, 50) ? rnd(r) : (uint64_t)-(int64_t)below(r, 4);

	switch (below(r, 3)) {
	case 0:
		((uint8_t *)p)[off] ^= 1u << below(r, 8);
		break;
	case 1:
		off &= ~(size_t)3;
		if (off + 4 <= len)
			memcpy((char *)p + off, &v, 4);
		break;
	default:
		off &= ~(size_t)7;
		if (off + 8 <= len)
			memcpy((char *)p + off, &v, 8);
	}
}

/* ---- one thread's files ---------------------------------------------------- */

struct fz_thread {
	struct rng r;
	struct fz_stats *st;
	int node;
	struct vm_client c;		/* the file it fuzzes */
	uint32_t handles[MAX_HANDLES];	/* BOs it created besides those */
	unsigned nhandles;
	uint32_t pending[MAX_PENDING];	/* out-syncobjs of accepted jobs */
	unsigned npending;
	int canary_fd;			/* a file no job ever uses */
	struct loom_test_bo canary;
	uint64_t canary_tag;
	struct io_uring ring;
	int ring_ok;
	uint64_t next_user_data;
	uint64_t inflight[MAX_PENDING];	/* user_data of commands not reaped */
	unsigned ninflight;
	struct fz_thread *peer;		/* another thread: its handles are foreign */
};

static void canary_fill(struct fz_thread *t)
{
	uint64_t *p = t->canary.map;

	for (size_t i = 0; i < CANARY_BO / 8; i++)
		p[i] = t->canary_tag ^ (i * 0x9e3779b97f4a7c15ULL);
}

static void canary_check(struct fz_thread *t)
{
	const uint64_t *p = t->canary.map;

	for (size_t i = 0; i < CANARY_BO / 8; i++) {
		if (p[i] != (t->canary_tag ^ (i * 0x9e3779b97f4a7c15ULL))) {
			finding(t->st, "a BO of a file no job uses changed at +%zu\n", i * 8);
			canary_fill(t);
			return;
		}
	}
}

static int fixture_open(struct fz_thread *t)
{
	t->nhandles = 0;
	t->npending = 0;
	return vm_client_open(&t->c, nodes[t->node].path);
}

/* Waits for every accepted job of the file: each must signal. */
static void pending_drain(struct fz_thread *t)
{
	for (unsigned i = 0; i < t->npending; i++) {
		int err = loom_syncobj_wait(t->c.fd, t->pending[i], WAIT_MS);

		if (err)
			finding(t->st, "an accepted job's syncobj %u: %s\n", t->pending[i],
				strerror(-err));
		else
			__atomic_add_fetch(&t->st->jobs_done, 1, __ATOMIC_RELAXED);
		drmSyncobjDestroy(t->c.fd, t->pending[i]);
	}
	t->npending = 0;
}

/* Closes the file, sometimes with its jobs still in flight. */
static void fixture_close(struct fz_thread *t, int drain)
{
	if (drain)
		pending_drain(t);
	else
		t->npending = 0;	/* they run on without the file */
	vm_client_close(&t->c);
}

/* ---- command buffers ------------------------------------------------------- */

/* A vector add over @n elements, or a counter job logging slot @n. */
static uint32_t valid_cmd(struct fz_thread *t, unsigned slot, int vadd, int64_t n)
{
	uint64_t ctr = t->c.data.va + 32768;

	if (vadd)
		return vm_vadd_cmd(&t->c, slot, n);
	return vm_counter_cmd(&t->c, slot, ctr, ctr + 8 + 8 * (n & 1023));
}

/*
 * A command buffer of valid packets mutated: fields flipped, packets cut,
 * random packets appended, VAs pointed at other BOs, other files' VAs or
 * nothing; or plain random words.
 */
static uint32_t mutated_cmd(struct fz_thread *t, unsigned slot)
{
	uint32_t *w = (uint32_t *)((char *)t->c.cmd.map + slot * 128);
	uint32_t len = valid_cmd(t, slot, chance(&t->r, 50), below(&t->r, 64)) / 4;
	unsigned k;

	if (chance(&t->r, 10)) {
		len = 1 + below(&t->r, 32);
		for (k = 0; k < len; k++)
			w[k] = rnd(&t->r);
		return len * 4;
	}
	for (k = 1 + below(&t->r, 3); k; k--) {
		switch (below(&t->r, 5)) {
		case 0: /* a field */
			w[below(&t->r, len)] = rnd(&t->r);
			break;
		case 1: /* a small or boundary value */
			w[below(&t->r, len)] = (uint32_t)((int32_t)below(&t->r, 9) - 4);
			break;
		case 2: /* cut */
			len = 1 + below(&t->r, len);
			break;
		case 3: /* a random packet header after it */
			if (len < 30) {
				w[len++] = LOOM_PKT_HEADER(below(&t->r, 16), below(&t->r, 8));
				w[len++] = rnd(&t->r);
			}
			break;
		default: /* a VA into the config or cmd BO, or unmapped */
			if (len > 5) {
				uint64_t va = chance(&t->r, 50) ? t->c.cfg.va :
					      chance(&t->r, 50) ? t->c.cmd.va : rnd(&t->r);

				w[len - 2] = va;
				w[len - 1] = va >> 32;
			}
		}
	}
	return len * 4;
}

/* ---- the operations -------------------------------------------------------- */

static int fz_ioctl(struct fz_thread *t, unsigned long req, void *arg)
{
	__atomic_add_fetch(&t->st->calls, 1, __ATOMIC_RELAXED);
	return ioctl(t->c.fd, req, arg) ? -errno : 0;
}

static uint32_t any_handle(struct fz_thread *t)
{
	struct fz_thread *p = t->peer;

	switch (below(&t->r, 6)) {
	case 0: return t->c.cmd.handle;
	case 1: return t->c.data.handle;
	case 2: return t->nhandles ? t->handles[below(&t->r, t->nhandles)] : 0;
	case 3: return p && p->nhandles ? p->handles[below(&t->r, p->nhandles)] : 1;
	case 4: return below(&t->r, 64);
	default: return rnd(&t->r);
	}
}

static void op_get_param(struct fz_thread *t)
{
	struct drm_loom_get_param a = {
		.param = chance(&t->r, 80) ? below(&t->r, 14) : rnd(&t->r),
		.pad = chance(&t->r, 90) ? 0 : rnd(&t->r),
	};

	fz_ioctl(t, DRM_IOCTL_LOOM_GET_PARAM, fuzz_ptr(&t->r, &a, sizeof(a), 10));
}

static void op_bo_create(struct fz_thread *t)
{
	static const uint64_t sizes[] = { 1, 4095, 4096, 4097, 65536, 1 << 20,
					  DRM_LOOM_BO_MAX_SIZE, DRM_LOOM_BO_MAX_SIZE + 1, 0 };
	struct drm_loom_bo_create a = {
		.size = chance(&t->r, 70) ? 1 + below(&t->r, 65536) :
			chance(&t->r, 80) ? sizes[below(&t->r, 9)] : rnd(&t->r),
		.flags = chance(&t->r, 80) ? below(&t->r, 2) : rnd(&t->r),
		.handle = chance(&t->r, 90) ? 0 : rnd(&t->r),
		.va = chance(&t->r, 90) ? 0 : rnd(&t->r),
	};
	void *arg = fuzz_ptr(&t->r, &a, sizeof(a), 10);

	if (fz_ioctl(t, DRM_IOCTL_LOOM_BO_CREATE, arg) || arg != &a)
		return;
	if (t->nhandles == MAX_HANDLES) {
		struct drm_gem_close c = { .handle = t->handles[0] };

		fz_ioctl(t, DRM_IOCTL_GEM_CLOSE, &c);
		t->handles[0] = t->handles[--t->nhandles];
	}
	t->handles[t->nhandles++] = a.handle;
}

static void op_bo_mmap(struct fz_thread *t)
{
	struct drm_loom_bo_mmap_offset a = {
		.handle = any_handle(t),
		.pad = chance(&t->r, 90) ? 0 : rnd(&t->r),
	};
	size_t len = 4096 * (1 + below(&t->r, 4));
	void *arg = fuzz_ptr(&t->r, &a, sizeof(a), 10), *p;

	if (fz_ioctl(t, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, arg) || arg != &a)
		return;
	/* Maybe larger than the BO, maybe at an offset inside it: SIGBUS-free? */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, t->c.fd,
		 a.offset + (chance(&t->r, 10) ? 4096 * below(&t->r, 3) : 0));
	if (p != MAP_FAILED)
		munmap(p, len);
}

static void op_bo_wait(struct fz_thread *t)
{
	struct drm_loom_bo_wait a = {
		.handle = any_handle(t),
		.flags = chance(&t->r, 90) ? 0 : rnd(&t->r),
		.timeout_ns = chance(&t->r, 80) ? (int64_t)below(&t->r, 2000000) :
			      -(int64_t)below(&t->r, 3),
	};

	fz_ioctl(t, DRM_IOCTL_LOOM_BO_WAIT, fuzz_ptr(&t->r, &a, sizeof(a), 10));
}

static void op_job_info(struct fz_thread *t)
{
	static __thread uint8_t dump[8192];
	struct drm_loom_job_info a = {
		.job_id = below(&t->r, 300),
		.dump_size = chance(&t->r, 50) ? 0 : below(&t->r, 8192),
		.dump = (uintptr_t)fuzz_ptr(&t->r, dump, sizeof(dump), 20),
		.flags = chance(&t->r, 90) ? 0 : rnd(&t->r),
	};

	if (chance(&t->r, 5))
		a.job_id = rnd(&t->r);
	/* a wait (uapi 10): up to 2 ms, none, or a deadline passed */
	if (chance(&t->r, 10)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		a.flags = DRM_LOOM_JOB_INFO_WAIT;
		a.timeout_ns = chance(&t->r, 80) ?
			ts.tv_sec * 1000000000LL + ts.tv_nsec + (int64_t)below(&t->r, 2000000) :
			-(int64_t)below(&t->r, 3);
	}
	fz_ioctl(t, DRM_IOCTL_LOOM_JOB_INFO, fuzz_ptr(&t->r, &a, sizeof(a), 10));
}

/* A SUBMIT: a valid job, one with a mutated command buffer, or bad args. */
static void op_submit(struct fz_thread *t, int valid)
{
	struct drm_loom_bo_ref refs[4] = {
		{ t->c.data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ t->c.cfg.handle, DRM_LOOM_BO_REF_READ },
		{ any_handle(t), DRM_LOOM_BO_REF_READ },
		{ any_handle(t), below(&t->r, 4) },
	};
	uint32_t in[2] = { 0, 0 }, sync = 0;
	unsigned slot = below(&t->r, CMD_BO / 128);
	struct drm_loom_submit s = {
		.queue = below(&t->r, num_cores[t->node]),
		.cmd_handle = t->c.cmd.handle,
		.cmd_offset = slot * 128,
		.bo_count = 2,
		.bos = (uintptr_t)refs,
		.deadline_ns = 20000000 + below(&t->r, 30000000),
		.flags = chance(&t->r, 20) ? DRM_LOOM_SUBMIT_NONBLOCK : 0,
	};
	void *arg = &s;

	s.cmd_size = valid ? valid_cmd(t, slot, chance(&t->r, 50), 1 + below(&t->r, 64))
			   : mutated_cmd(t, slot);
	if (t->npending && chance(&t->r, 30)) {
		in[0] = t->pending[below(&t->r, t->npending)];
		s.in_syncobjs = (uintptr_t)in;
		s.in_syncobj_count = 1;
	}
	if (!valid) {
		if (chance(&t->r, 30))
			s.bo_count = below(&t->r, 5);
		for (unsigned k = below(&t->r, 3); k; k--)
			corrupt(&t->r, &s, sizeof(s));
		if (chance(&t->r, 10))
			s.bos = (uintptr_t)fuzz_ptr(&t->r, refs, sizeof(refs), 100);
		if (chance(&t->r, 10))
			s.in_syncobjs = (uintptr_t)fuzz_ptr(&t->r, in, sizeof(in), 100);
		if (chance(&t->r, 5))
			s.deadline_ns = 0;	/* the driver's default */
		arg = fuzz_ptr(&t->r, &s, sizeof(s), 5);
	}
	if (t->npending < MAX_PENDING && chance(&t->r, 70) &&
	    !drmSyncobjCreate(t->c.fd, 0, &sync))
		s.out_syncobj = sync;
	if (!valid && chance(&t->r, 5))
		s.out_syncobj = any_handle(t);
	if (fz_ioctl(t, DRM_IOCTL_LOOM_SUBMIT, arg)) {
		if (valid && errno == ECANCELED)
			banned = 1;	/* a fresh process takes over */
		if (sync)
			drmSyncobjDestroy(t->c.fd, sync);
		return;
	}
	__atomic_add_fetch(&t->st->jobs_accepted, 1, __ATOMIC_RELAXED);
	if (sync && s.out_syncobj == sync && arg == &s)
		t->pending[t->npending++] = sync;
	else if (sync)
		drmSyncobjDestroy(t->c.fd, sync);
	if (t->npending == MAX_PENDING)
		pending_drain(t);
}

/* The DRM core's ioctls a render or accel node allows, valid and not. */
static void op_drm_core(struct fz_thread *t)
{
	switch (below(&t->r, 6)) {
	case 0: {
		struct drm_gem_close c = { .handle = any_handle(t),
					   .pad = chance(&t->r, 90) ? 0 : rnd(&t->r) };

		/* never the fixture's own: the rest of the run needs them */
		if (c.handle != t->c.cmd.handle && c.handle != t->c.cfg.handle &&
		    c.handle != t->c.data.handle && !fz_ioctl(t, DRM_IOCTL_GEM_CLOSE, &c)) {
			for (unsigned i = 0; i < t->nhandles; i++)
				if (t->handles[i] == c.handle)
					t->handles[i] = t->handles[--t->nhandles];
		}
		break;
	}
	case 1: { /* export a BO as a dma-buf and import it into the peer's file */
		struct drm_prime_handle p = { .handle = any_handle(t),
					      .flags = DRM_CLOEXEC | (chance(&t->r, 10) ? rnd(&t->r) : 0) };
		int peer = t->peer && t->peer->c.fd >= 0 ? t->peer->c.fd : t->c.fd;

		if (fz_ioctl(t, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
			break;
		__atomic_add_fetch(&t->st->calls, 1, __ATOMIC_RELAXED);
		p.handle = 0;
		ioctl(peer, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
		close(p.fd);
		break;
	}
	case 2: {
		struct drm_syncobj_create c = { .flags = below(&t->r, 3) };
		struct drm_syncobj_destroy d = { 0 };

		if (fz_ioctl(t, DRM_IOCTL_SYNCOBJ_CREATE, &c))
			break;
		d.handle = chance(&t->r, 90) ? c.handle : any_handle(t);
		for (unsigned i = 0; i < t->npending; i++)
			if (t->pending[i] == d.handle)
				d.handle = c.handle;	/* those are waited for */
		d.pad = chance(&t->r, 95) ? 0 : rnd(&t->r);
		fz_ioctl(t, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		break;
	}
	case 3: { /* bounded waits on this file's syncobjs and on nonsense */
		uint32_t h[2] = { t->npending ? t->pending[below(&t->r, t->npending)] : 1,
				  any_handle(t) };
		struct timespec ts;
		struct drm_syncobj_wait w = {
			.handles = (uintptr_t)fuzz_ptr(&t->r, h, sizeof(h), 10),
			.count_handles = 1 + below(&t->r, 2),
			.flags = below(&t->r, 4),
		};

		clock_gettime(CLOCK_MONOTONIC, &ts);
		w.timeout_nsec = ts.tv_sec * 1000000000LL + ts.tv_nsec + below(&t->r, 1000000);
		fz_ioctl(t, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		break;
	}
	case 4: {
		struct drm_get_cap c = { .capability = below(&t->r, 0x20) };

		fz_ioctl(t, DRM_IOCTL_GET_CAP, fuzz_ptr(&t->r, &c, sizeof(c), 10));
		break;
	}
	default: { /* the driver's ioctl numbers with any size, direction and bytes */
		uint8_t buf[256];
		unsigned nr = DRM_COMMAND_BASE + below(&t->r, 8);
		unsigned size = chance(&t->r, 50) ? below(&t->r, 80) : below(&t->r, 256);

		for (unsigned i = 0; i < sizeof(buf); i++)
			buf[i] = chance(&t->r, 70) ? 0 : rnd(&t->r);
		fz_ioctl(t, _IOC(below(&t->r, 4), DRM_IOCTL_BASE, nr, size),
			 fuzz_ptr(&t->r, buf, size, 10));
	}
	}
}

/* ---- io_uring --------------------------------------------------------------- */

static void ring_init(struct fz_thread *t)
{
	unsigned flags = IORING_SETUP_SQE128 | (chance(&t->r, 50) ? IORING_SETUP_CQE32 : 0);

	t->ring_ok = !io_uring_queue_init(MAX_PENDING, &t->ring, flags);
	t->ninflight = 0;
}

static void ring_reap(struct fz_thread *t, int wait)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { .tv_sec = WAIT_MS / 1000 };

	while (t->ninflight) {
		unsigned i;

		if (wait ? io_uring_wait_cqe_timeout(&t->ring, &cqe, &ts)
			 : io_uring_peek_cqe(&t->ring, &cqe)) {
			if (wait)
				finding(t->st, "%u uring_cmds without a CQE after %d ms\n",
					t->ninflight, WAIT_MS);
			return;
		}
		for (i = 0; i < t->ninflight; i++)
			if (t->inflight[i] == cqe->user_data)
				break;
		if (i == t->ninflight)
			finding(t->st, "a CQE for no command in flight (user_data %llu)\n",
				(unsigned long long)cqe->user_data);
		else
			t->inflight[i] = t->inflight[--t->ninflight];
		__atomic_add_fetch(&t->st->cmds_done, 1, __ATOMIC_RELAXED);
		io_uring_cqe_seen(&t->ring, cqe);
	}
}

static void op_uring(struct fz_thread *t)
{
	struct drm_loom_bo_ref refs[2] = {
		{ t->c.data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ t->c.cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	static __thread struct drm_loom_bo_ref ring_refs[MAX_PENDING][2];
	unsigned slot = below(&t->r, CMD_BO / 128), n;
	struct drm_loom_submit s = {
		.queue = below(&t->r, num_cores[t->node]),
		.cmd_handle = t->c.cmd.handle,
		.cmd_offset = slot * 128,
		.bo_count = 2,
		.deadline_ns = 20000000 + below(&t->r, 30000000),
	};
	struct io_uring_sqe *sqe;

	if (!t->ring_ok)
		return;
	if (t->ninflight == MAX_PENDING)
		ring_reap(t, 1);
	sqe = io_uring_get_sqe(&t->ring);
	if (!sqe)
		return;
	/* The refs must stay put until the kernel copies them: per slot. */
	n = t->next_user_data % MAX_PENDING;
	memcpy(ring_refs[n], refs, sizeof(refs));
	s.bos = (uintptr_t)ring_refs[n];
	s.cmd_size = chance(&t->r, 60) ? valid_cmd(t, slot, 1, 1 + below(&t->r, 64))
				       : mutated_cmd(t, slot);
	if (chance(&t->r, 30))
		corrupt(&t->r, &s, sizeof(s));
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, t->c.fd, NULL, 0, 0);
	sqe->cmd_op = chance(&t->r, 95) ? DRM_LOOM_URING_CMD_SUBMIT : rnd(&t->r);
	if (chance(&t->r, 3))
		sqe->len = rnd(&t->r);
	sqe_set_submit(sqe, &s);
	sqe->user_data = ++t->next_user_data;
	__atomic_add_fetch(&t->st->calls, 1, __ATOMIC_RELAXED);
	if (io_uring_submit(&t->ring) != 1) {
		finding(t->st, "io_uring_submit refused a prepared uring_cmd\n");
		return;
	}
	t->inflight[t->ninflight++] = sqe->user_data;
	__atomic_add_fetch(&t->st->cmds_accepted, 1, __ATOMIC_RELAXED);
	ring_reap(t, 0);
}

/* Ring teardown: after its commands completed, or with them in flight. */
static void op_ring_teardown(struct fz_thread *t)
{
	if (!t->ring_ok)
		return;
	if (chance(&t->r, 50))
		ring_reap(t, 1);
	else	/* their CQEs go nowhere; the jobs still run and complete */
		__atomic_add_fetch(&t->st->cmds_abandoned, t->ninflight, __ATOMIC_RELAXED);
	io_uring_queue_exit(&t->ring);
	ring_init(t);
}

/* A child sharing the file makes a few calls and exits, maybe mid-job. */
static void op_fork(struct fz_thread *t)
{
	pid_t pid = fork();

	if (pid == 0) {
		t->npending = 0;	/* the parent's syncobjs, in the same file */
		for (unsigned i = 0; i < 8; i++) {
			if (chance(&t->r, 50))
				op_submit(t, chance(&t->r, 50));
			else
				op_bo_create(t);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void op_reopen(struct fz_thread *t)
{
	fixture_close(t, chance(&t->r, 50));
	if (fixture_open(t))
		finding(t->st, "reopening %s failed\n", nodes[t->node].path);
}

static void fuzz_step(struct fz_thread *t)
{
	unsigned pick = below(&t->r, 1000);

	if (pick < 120)
		op_get_param(t);
	else if (pick < 240)
		op_bo_create(t);
	else if (pick < 320)
		op_bo_mmap(t);
	else if (pick < 400)
		op_bo_wait(t);
	else if (pick < 470)
		op_job_info(t);
	else if (pick < 560)
		op_submit(t, 1);
	else if (pick < 650)
		op_submit(t, 0);
	else if (pick < 800)
		op_drm_core(t);
	else if (pick < 990)
		op_uring(t);
	else if (pick < 994)
		op_ring_teardown(t);
	else if (pick < 997)
		op_reopen(t);
	else
		op_fork(t);
}

static void *fuzz_thread(void *arg)
{
	struct fz_thread *t = arg;
	unsigned long steps = 0;

	if (fixture_open(t)) {
		finding(t->st, "cannot set up a file on %s\n", nodes[t->node].path);
		return NULL;
	}
	t->canary_fd = open(nodes[t->node].path, O_RDWR | O_CLOEXEC);
	t->canary = loom_bo(t->canary_fd, CANARY_BO);
	if (!t->canary.map) {
		finding(t->st, "cannot map a canary BO\n");
		return NULL;
	}
	canary_fill(t);
	ring_init(t);
	while (now_s() < deadline && !banned) {
		fuzz_step(t);
		if (++steps % 512 == 0)
			canary_check(t);
	}
	ring_reap(t, 1);
	if (t->ring_ok)
		io_uring_queue_exit(&t->ring);
	fixture_close(t, 1);
	canary_check(t);
	return NULL;
}

static int fuzz_process(uint64_t seed, struct fz_stats *st, unsigned nthreads)
{
	static struct fz_thread threads[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	unsigned i;

	hostile_memory_init();
	for (i = 0; i < nthreads; i++) {
		threads[i] = (struct fz_thread){
			.r.s = seed * 0x100000001b3ULL + i + 1,
			.st = st, .c.fd = -1, .canary_fd = -1,
			.canary_tag = seed ^ ((uint64_t)i << 56),
			.peer = &threads[(i + 1) % nthreads],
		};
		threads[i].node = below(&threads[i].r, num_nodes);
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&tid[i], NULL, fuzz_thread, &threads[i]);
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	return banned ? EXIT_BANNED : 0;
}

/* ---- the ledger: a well-behaved client among the fuzzers ----------------- */

/*
 * Chains of counter jobs, each after the previous (an in-syncobj), half by
 * ioctl and half by io_uring, on random queues: job i must log i, the
 * counter must end at the number of jobs, and none may fail.
 */
static int ledger_process(int node, uint64_t seed, struct fz_stats *st)
{
	struct fz_thread t = { .r.s = seed, .st = st, .node = node };
	uint64_t *counter, *log, done = 0;
	struct io_uring ring;

	if (fixture_open(&t) || io_uring_queue_init(16, &ring, IORING_SETUP_SQE128)) {
		finding(st, "ledger: no file or ring\n");
		return 1;
	}
	counter = (uint64_t *)((char *)t.c.data.map + 32768);
	log = counter + 1;
	while (now_s() < deadline) {
		uint32_t sync[8] = { 0 };
		uint64_t job_id[8] = { 0 };
		unsigned n = 8, i;

		*counter = 0;
		memset(log, 0, 8 * 1024);
		for (i = 0; i < n; i++) {
			struct drm_loom_bo_ref refs[2] = {
				{ t.c.data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
				{ t.c.cfg.handle, DRM_LOOM_BO_REF_READ },
			};
			struct drm_loom_submit s = {
				.queue = below(&t.r, num_cores[node]),
				.cmd_handle = t.c.cmd.handle, .cmd_offset = i * 128,
				.cmd_size = valid_cmd(&t, i, 0, i),
				.bo_count = 2, .bos = (uintptr_t)refs,
				.in_syncobjs = i ? (uintptr_t)&sync[i - 1] : 0,
				.in_syncobj_count = i > 0,
			};

			drmSyncobjCreate(t.c.fd, 0, &sync[i]);
			s.out_syncobj = sync[i];
			if (i % 2) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
				struct io_uring_cqe *cqe;

				io_uring_prep_rw(IORING_OP_URING_CMD, sqe, t.c.fd, NULL, 0, 0);
				sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
				sqe_set_submit(sqe, &s);
				sqe->user_data = i;
				io_uring_submit(&ring);
				/* the CQE comes when the job is done: its result */
				if (io_uring_wait_cqe(&ring, &cqe) || cqe->res || cqe->user_data != i)
					finding(st, "ledger: uring job %u of a chain: res %d\n",
						i, cqe ? cqe->res : 0);
				io_uring_cqe_seen(&ring, cqe);
				if (io_uring_peek_cqe(&ring, &cqe) == 0)
					finding(st, "ledger: a second CQE for one command\n");
			} else if (_test_submit(t.c.fd, &s)) {
				finding(st, "ledger: SUBMIT refused: %s\n", strerror(errno));
				n = i;
				break;
			} else {
				job_id[i] = s.job_id;
			}
		}
		if (n && loom_syncobj_wait(t.c.fd, sync[n - 1], WAIT_MS))
			finding(st, "ledger: a chain did not complete in %d ms\n", WAIT_MS);
		for (i = 0; i < n; i++) {
			struct drm_loom_job_info info;

			if (log[i] != i)
				finding(st, "ledger: job %u logged %llu (ran twice, never, or out of order)\n",
					i, (unsigned long long)log[i]);
			if (job_id[i] && (_test_job_info(t.c.fd, job_id[i], &info) ||
					  info.state != DRM_LOOM_JOB_DONE || info.error))
				finding(st, "ledger: job %u: state %u error %d\n", i,
					info.state, info.error);
			drmSyncobjDestroy(t.c.fd, sync[i]);
		}
		if (*counter != n)
			finding(st, "ledger: %u jobs ran the counter to %llu\n", n,
				(unsigned long long)*counter);
		done += n;
		__atomic_store_n(&st->ledger_jobs, done, __ATOMIC_RELAXED);
		usleep(2000);	/* a steady trickle; the fuzzers get the CPU */
	}
	io_uring_queue_exit(&ring);
	fixture_close(&t, 1);
	return 0;
}

/* ---- after the run ----------------------------------------------------------- */

static long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/loom/refcnt", "r");
	long n = -1;

	if (f && fscanf(f, "%ld", &n) != 1)
		n = -1;
	if (f)
		fclose(f);
	return n;
}

/* Every queue of every device still computes a vector add. */
static int devices_healthy(void)
{
	int bad = 0;

	for (int d = 0; d < num_nodes; d++) {
		struct fz_stats st = { 0 };
		struct fz_thread t = { .st = &st, .node = d };
		struct drm_loom_bo_ref refs[2];

		if (fixture_open(&t))
			return 0;
		refs[0] = (struct drm_loom_bo_ref){ t.c.data.handle,
			DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE };
		refs[1] = (struct drm_loom_bo_ref){ t.c.cfg.handle, DRM_LOOM_BO_REF_READ };
		for (unsigned q = 0; q < num_cores[d]; q++) {
			int64_t *a = t.c.data.map, *b = a + 1024, *c = a + 2048;
			struct drm_loom_submit s = {
				.queue = q, .cmd_handle = t.c.cmd.handle,
				.cmd_size = valid_cmd(&t, 0, 1, 16),
				.bo_count = 2, .bos = (uintptr_t)refs,
			};
			uint32_t sync;

			for (int i = 0; i < 16; i++)
				a[i] = i * (q + 3), b[i] = 1000 + d, c[i] = 0;
			drmSyncobjCreate(t.c.fd, 0, &sync);
			s.out_syncobj = sync;
			if (_test_submit(t.c.fd, &s) || loom_syncobj_wait(t.c.fd, sync, WAIT_MS)) {
				fprintf(stderr, "loom_fuzz: %s queue %u: no vector add\n",
					nodes[d].path, q);
				bad = 1;
			}
			for (int i = 0; i < 16 && !bad; i++) {
				if (c[i] != a[i] + b[i]) {
					fprintf(stderr, "loom_fuzz: %s queue %u: c[%d] = %lld\n",
						nodes[d].path, q, i, (long long)c[i]);
					bad = 1;
				}
			}
			drmSyncobjDestroy(t.c.fd, sync);
		}
		fixture_close(&t, 1);
	}
	return !bad;
}

/* ---- main -------------------------------------------------------------------- */

/* Where a fuzzing process itself crashed (a bug here, not in the kernel). */
static void on_fatal_signal(int sig, siginfo_t *si, void *ctx)
{
	char msg[128];
	int n = snprintf(msg, sizeof(msg), "loom_fuzz: signal %d at %p, ip %#llx\n", sig,
			 si->si_addr, (unsigned long long)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP]);

	if (write(2, msg, n) < 0)
		_exit(128 + sig);
	_exit(128 + sig);
}

static void usage(void)
{
	fprintf(stderr, "usage: loom_fuzz [--seed N] [--seconds N] [--procs N] [--threads N]\n");
	exit(2);
}

static pid_t spawn(int slot, uint64_t seed, unsigned nthreads)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct fz_stats *st = &stats_base[slot];

		if (slot < num_nodes)
			_exit(ledger_process(slot, seed, st));
		_exit(fuzz_process(seed, st, nthreads));
	}
	return pid;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, seconds = 60;
	unsigned procs = 3, nthreads = 2, bans = 0, pass = 0, fail = 0;
	pid_t pids[MAX_PROCS + LOOM_MAX_NODES];
	struct fz_stats total = { 0 };
	long refcnt;
	double start;
	int slots, running;

	for (int i = 1; i + 1 < argc; i += 2) {
		uint64_t v = strtoull(argv[i + 1], NULL, 0);

		if (!strcmp(argv[i], "--seed"))
			seed = v;
		else if (!strcmp(argv[i], "--seconds"))
			seconds = v;
		else if (!strcmp(argv[i], "--procs") && v && v <= MAX_PROCS)
			procs = v;
		else if (!strcmp(argv[i], "--threads") && v && v <= MAX_THREADS)
			nthreads = v;
		else
			usage();
	}
	if (argc % 2 == 0)
		usage();
	num_nodes = vm_find_devices(nodes, num_cores, 2);
	if (num_nodes < 1) {
		printf("loom_fuzz: no loom device\n1..0\n");
		return 1;
	}
	{
		struct sigaction sa = { .sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	refcnt = module_refcnt();
	loom_write_file("/sys/module/loom/parameters/max_job_ms", JOB_CAP_MS);
	stats_base = mmap(NULL, sizeof(*stats_base) * (MAX_PROCS + LOOM_MAX_NODES),
			  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	printf("loom_fuzz: seed %llu, %llu s, %u fuzzing processes x %u threads and %d ledgers on %d devices\n",
	       (unsigned long long)seed, (unsigned long long)seconds, procs, nthreads,
	       num_nodes, num_nodes);
	fflush(stdout);
	start = now_s();
	deadline = start + seconds;
	slots = num_nodes + procs;
	for (int s = 0; s < slots; s++)
		pids[s] = spawn(s, seed * 1000 + s, nthreads);
	for (running = slots; running;) {
		int status, s;
		pid_t pid = wait(&status);

		if (pid < 0)
			break;
		for (s = 0; s < slots && pids[s] != pid; s++)
			;
		if (s == slots)
			continue;	/* a fork op's child */
		if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_BANNED && now_s() < deadline) {
			bans++;
			pids[s] = spawn(s, seed * 1000 + s + 100 * bans, nthreads);
			continue;
		}
		if (!WIFEXITED(status) || (WEXITSTATUS(status) && WEXITSTATUS(status) != EXIT_BANNED)) {
			fprintf(stderr, "loom_fuzz: process %d ended with status %#x\n", s, status);
			total.findings++;
		}
		running--;
	}
	for (int s = 0; s < slots; s++) {
		total.calls += stats_base[s].calls;
		total.jobs_accepted += stats_base[s].jobs_accepted;
		total.jobs_done += stats_base[s].jobs_done;
		total.cmds_accepted += stats_base[s].cmds_accepted;
		total.cmds_done += stats_base[s].cmds_done;
		total.cmds_abandoned += stats_base[s].cmds_abandoned;
		total.ledger_jobs += stats_base[s].ledger_jobs;
		total.findings += stats_base[s].findings;
	}
	printf("loom_fuzz: %llu calls in %.1f s (%.0f/s)\n"
	       "loom_fuzz: jobs accepted %llu, of them waited for and done %llu; uring_cmds accepted %llu, "
	       "CQEs %llu, left on torn-down rings %llu; ledger jobs %llu; processes banned and replaced %u; "
	       "findings %llu\n",
	       (unsigned long long)total.calls, now_s() - start, total.calls / (now_s() - start),
	       (unsigned long long)total.jobs_accepted, (unsigned long long)total.jobs_done,
	       (unsigned long long)total.cmds_accepted, (unsigned long long)total.cmds_done,
	       (unsigned long long)total.cmds_abandoned,
	       (unsigned long long)total.ledger_jobs, bans, (unsigned long long)total.findings);

	printf("%s 1 no findings in %llu calls\n", total.findings ? "not ok" : "ok",
	       (unsigned long long)total.calls);
	total.findings ? fail++ : pass++;
	printf("%s 2 the ledgers ran jobs between the fuzzers'\n", total.ledger_jobs ? "ok" : "not ok");
	total.ledger_jobs ? pass++ : fail++;
	{
		int healthy = devices_healthy();

		printf("%s 3 every queue of every device computes afterwards\n", healthy ? "ok" : "not ok");
		healthy ? pass++ : fail++;
	}
	/* Jobs of exited processes may still be finishing: they hold the module. */
	for (int i = 0; i < 300 && module_refcnt() != refcnt; i++)
		usleep(100000);
	printf("%s 4 loom.ko's reference count is back to %ld (now %ld)\n",
	       module_refcnt() == refcnt ? "ok" : "not ok", refcnt, module_refcnt());
	module_refcnt() == refcnt ? pass++ : fail++;
	loom_write_file("/sys/module/loom/parameters/max_job_ms", "60000");
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:0 error:0\n", pass, fail);
	return fail ? 1 : 0;
}
