// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DOC: libloom-sim: a loom device in the process
 *
 * A struct loom_backend (lib/device_internal.h) that is device and driver
 * at once: BOs are anonymous mappings of the process, each in pages of its
 * own, mapped into one device address space whose LOOM_PTE_* tables live
 * in the process too (bus addresses are the process's addresses); SUBMIT
 * queues the job on its core, whose thread waits for the job's
 * in-fences, runs it with the engine's command processor
 * (loom_core_run_job(), what the QEMU device runs) and completes it as
 * loom.ko does: the fence's error from the device status, the job's
 * record for JOB_INFO, a ring's CQE.  A job the driver's hang check would
 * stop (no progress for 2 s, or running past 20 s or max_job_ms) is
 * stopped: ETIMEDOUT.
 *
 * Locking: one mutex (fence_lock) for every fence, syncobj table and ring
 * of every simulated device, with one condition variable their waiters
 * share; each device's own lock for its BOs, queues and records.  Fences
 * are taken before a device lock, never the other way round.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "engine.h"
#include "device_internal.h"
#include "loom/sim.h"

/* The driver's BO VA range starts here (loom.ko: LOOM_VA_START). */
#define SIM_VA_START		0x100000ULL
#define SIM_VA_END		(1ULL << (LOOM_VA_BITS - 1))
/* Jobs whose record JOB_INFO keeps, as the driver does per file. */
#define SIM_RECORDS		256
#define SIM_DEFAULT_DIM		4
#define SIM_DEFAULT_CORES	2
#define SIM_MAX_CORES		64
#define SIM_DEFAULT_JOB_MS	60000
/*
 * loom.ko's hang check: a job whose core's progress counter has not moved
 * for its deadline (2 s: a submission without deadline_ns), or that ran ten
 * deadlines or past max_job_ms, is stopped.
 */
#define SIM_DEADLINE_MS		2000
#define SIM_WATCHDOG_MS		10
#define PT_ENTRIES		(LOOM_PAGE_SIZE / sizeof(uint64_t))

/* ------------------------------------------------------------- fences --- */

static pthread_mutex_t fence_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fence_cond;
static pthread_once_t fence_once = PTHREAD_ONCE_INIT;

/*
 * A job's done fence, an already signalled one, or the merge of others
 * (signalled when all are, with the first part's error).  Under
 * fence_lock.
 */
struct sim_fence {
	unsigned refs;
	bool signalled;
	int error;
	uint64_t done_ns;
	struct sim_fence **parts;
	unsigned n_parts;
};

static void fence_init_cond(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&fence_cond, &a);
	pthread_condattr_destroy(&a);
}

static struct sim_fence *fence_new(void)
{
	struct sim_fence *f = calloc(1, sizeof(*f));

	if (f)
		f->refs = 1;
	return f;
}

static struct sim_fence *fence_get_locked(struct sim_fence *f)
{
	if (f)
		f->refs++;
	return f;
}

static void fence_put_locked(struct sim_fence *f)
{
	if (!f || --f->refs)
		return;
	for (unsigned i = 0; i < f->n_parts; i++)
		fence_put_locked(f->parts[i]);
	free(f->parts);
	free(f);
}

/* Whether @f is signalled; then *@error and *@done_ns (may be NULL). */
static bool fence_done_locked(const struct sim_fence *f, int *error,
			      uint64_t *done_ns)
{
	int err = 0, e;
	uint64_t last = 0, t;

	if (!f->n_parts) {
		if (f->signalled && error)
			*error = f->error;
		if (f->signalled && done_ns)
			*done_ns = f->done_ns;
		return f->signalled;
	}
	for (unsigned i = 0; i < f->n_parts; i++) {
		if (!fence_done_locked(f->parts[i], &e, &t))
			return false;
		if (!err)
			err = e;
		last = t > last ? t : last;
	}
	if (error)
		*error = err;
	if (done_ns)
		*done_ns = last;
	return true;
}

static void fence_signal(struct sim_fence *f, int error)
{
	pthread_mutex_lock(&fence_lock);
	f->error = error;
	f->done_ns = loom_now_ns();
	f->signalled = true;
	pthread_cond_broadcast(&fence_cond);
	pthread_mutex_unlock(&fence_lock);
}

/* Waits on fence_cond until @abs_ns: false once it has passed. */
static bool wait_locked(int64_t abs_ns)
{
	struct timespec ts;

	if (abs_ns != INT64_MAX && (int64_t)loom_now_ns() >= abs_ns)
		return false;
	if (abs_ns == INT64_MAX) {
		pthread_cond_wait(&fence_cond, &fence_lock);
		return true;
	}
	ts.tv_sec = abs_ns / 1000000000;
	ts.tv_nsec = abs_ns % 1000000000;
	pthread_cond_timedwait(&fence_cond, &fence_lock, &ts);
	return true;
}

/* ------------------------------------------------------------ devices --- */

struct sim_dev;

/* A BO: its pages, its VA; references: its handle and the jobs using it. */
struct sim_bo {
	uint32_t handle;
	uint64_t va;
	uint64_t size;			/* whole pages */
	void *map;
	bool read_only;
	unsigned refs;
	struct sim_bo *next;		/* the device's BOs by VA */
};

/* A ring's completion queue (struct loom_uring.priv). */
struct sim_ring {
	unsigned refs;			/* the ring's and its jobs'; fence_lock */
	bool dead;
	struct loom_cqe *cqes;
	unsigned cap, head, count;
};

struct sim_job {
	uint64_t id;
	struct loom_hw_job hw;
	struct sim_bo **bos;		/* references */
	unsigned n_bos;
	struct sim_fence **in;		/* references */
	unsigned n_in;
	struct sim_fence *done;		/* a reference */
	struct sim_ring *ring;		/* a reference, or NULL */
	uint64_t user_data;
	struct sim_job *next;
};

struct sim_core {
	struct sim_dev *sd;
	unsigned index;
	struct loom_core engine;
	pthread_t thread;
	pthread_cond_t cond;
	struct sim_job *head, *tail;	/* its queue, under sd->lock */
	uint64_t started_ns;		/* the running job's start, 0: none */
	uint64_t progress_ns;		/* when engine.progress last moved */
	uint64_t progress_seen;		/* engine.progress then */
	void *dump;
};

struct sim_record {
	uint64_t job_id;
	struct drm_loom_job_info info;
	void *dump;
};

struct sim_syncobj {
	bool used;
	struct sim_fence *fence;	/* NULL: none yet */
};

struct sim_dev {
	struct loom_sim_config cfg;
	pthread_mutex_t lock;
	bool quit;
	struct loom_bus bus;
	uint64_t *pt_root;
	uint32_t invalidations;
	struct sim_bo *bos;
	uint32_t next_handle;
	struct sim_syncobj *syncobjs;	/* handle h at h - 1; fence_lock */
	unsigned n_syncobjs;
	struct sim_core *cores;
	uint64_t next_job_id;
	struct sim_record records[SIM_RECORDS];
	_Atomic uint64_t records_done;	/* records written DONE (JOB_INFO_WAIT) */
	pthread_t watchdog;
	pthread_cond_t watchdog_cond;
};

static const struct loom_backend sim_backend;

static struct sim_dev *sim_of(const struct loom_device *dev)
{
	return dev->priv;
}

/* Bus addresses are the process's: the MMU only reaches what we mapped. */
static int bus_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	(void)opaque;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static int bus_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	(void)opaque;
	memcpy((void *)(uintptr_t)addr, buf, len);
	return 0;
}

/*
 * LOOM_OP_ATOMIC's primitive: the host's own compare-and-swap on the
 * process's memory, so cores in threads (and the application itself)
 * see each read-modify-write as one access.  @addr is a multiple of @len.
 */
static int bus_cmpxchg(void *opaque, uint64_t addr, size_t len,
		       uint64_t *expected, uint64_t desired)
{
	(void)opaque;
	return loom_host_cmpxchg((void *)(uintptr_t)addr, len, expected,
				 desired);
}

/* ------------------------------------------------------- address space --- */

static uint64_t *table_new(void)
{
	uint64_t *t = aligned_alloc(LOOM_PAGE_SIZE, LOOM_PAGE_SIZE);

	if (t)
		memset(t, 0, LOOM_PAGE_SIZE);
	return t;
}

/* The level-3 entry of @va, its tables made on the way when @make. */
static uint64_t *pte_of(struct sim_dev *sd, uint64_t va, bool make)
{
	uint64_t *t = sd->pt_root;

	for (int level = 0; level < 3; level++) {
		unsigned shift = LOOM_PAGE_SHIFT + 9 * (3 - level);
		uint64_t *e = &t[(va >> shift) % PT_ENTRIES];

		if (!(*e & LOOM_PTE_VALID)) {
			uint64_t *next = make ? table_new() : NULL;

			if (!next)
				return NULL;
			*e = (uint64_t)(uintptr_t)next | LOOM_PTE_VALID;
		}
		t = (uint64_t *)(uintptr_t)(*e & LOOM_PTE_ADDR_MASK);
	}
	return &t[(va >> LOOM_PAGE_SHIFT) % PT_ENTRIES];
}

static void tables_free(uint64_t *t, int level)
{
	if (level < 3)
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			if (t[i] & LOOM_PTE_VALID)
				tables_free((uint64_t *)(uintptr_t)(t[i] & LOOM_PTE_ADDR_MASK),
					    level + 1);
	free(t);
}

/* Maps @bo's pages at its VA; sd->lock held. */
static int map_bo_locked(struct sim_dev *sd, struct sim_bo *bo)
{
	uint64_t perm = LOOM_PTE_VALID | LOOM_PTE_READ |
			(bo->read_only ? 0 : LOOM_PTE_WRITE);

	for (uint64_t off = 0; off < bo->size; off += LOOM_PAGE_SIZE) {
		uint64_t *pte = pte_of(sd, bo->va + off, true);

		if (!pte)
			return -ENOMEM;
		*pte = (uint64_t)(uintptr_t)((char *)bo->map + off) | perm;
	}
	return 0;
}

/*
 * Unmaps @bo, then waits until no core's access can still use a stale
 * translation of it: afterwards its pages may go.  sd->lock held.
 */
static void unmap_bo_locked(struct sim_dev *sd, struct sim_bo *bo)
{
	for (uint64_t off = 0; off < bo->size; off += LOOM_PAGE_SIZE) {
		uint64_t *pte = pte_of(sd, bo->va + off, false);

		if (pte)
			*pte = 0;
	}
	__atomic_fetch_add(&sd->invalidations, 1, __ATOMIC_SEQ_CST);
	for (unsigned c = 0; c < sd->cfg.cores; c++)
		loom_mmu_quiesce(&sd->cores[c].engine.mmu);
}

/*
 * The lowest VA of the smallest hole that fits @size bytes, as the
 * driver's allocator (drm_mm best fit) picks; sd->lock held.
 */
static int va_alloc_locked(struct sim_dev *sd, uint64_t size, uint64_t *va,
			   struct sim_bo ***link)
{
	uint64_t best_len = UINT64_MAX, start = SIM_VA_START;
	struct sim_bo **at = &sd->bos;
	bool found = false;

	for (;;) {
		uint64_t end = *at ? (*at)->va : SIM_VA_END;

		if (end - start >= size && end - start < best_len) {
			best_len = end - start;
			*va = start;
			*link = at;
			found = true;
		}
		if (!*at)
			break;
		start = (*at)->va + (*at)->size;
		at = &(*at)->next;
	}
	return found ? 0 : -ENOSPC;
}

static struct sim_bo *bo_find_locked(struct sim_dev *sd, uint32_t handle)
{
	for (struct sim_bo *b = sd->bos; b; b = b->next)
		if (b->handle == handle)
			return b;
	return NULL;
}

static void bo_put_locked(struct sim_dev *sd, struct sim_bo *bo)
{
	struct sim_bo **at;

	if (--bo->refs)
		return;
	unmap_bo_locked(sd, bo);
	for (at = &sd->bos; *at != bo; at = &(*at)->next)
		;
	*at = bo->next;
	munmap(bo->map, bo->size);
	free(bo);
}

static int sim_bo_create(struct loom_device *dev, struct drm_loom_bo_create *c,
			 void **map)
{
	struct sim_dev *sd = sim_of(dev);
	uint64_t size = (c->size + LOOM_PAGE_SIZE - 1) & ~(LOOM_PAGE_SIZE - 1);
	struct sim_bo *bo, **link;
	int ret;

	if (!c->size || size < c->size ||
	    (c->flags & ~DRM_LOOM_BO_DEVICE_READ_ONLY))
		return -EINVAL;
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bo->map == MAP_FAILED) {
		free(bo);
		return -ENOMEM;
	}
	bo->size = size;
	bo->read_only = c->flags & DRM_LOOM_BO_DEVICE_READ_ONLY;
	bo->refs = 1;
	pthread_mutex_lock(&sd->lock);
	ret = va_alloc_locked(sd, size, &bo->va, &link);
	if (!ret) {
		bo->handle = ++sd->next_handle;
		bo->next = *link;
		*link = bo;
		ret = map_bo_locked(sd, bo);
		if (ret)
			bo_put_locked(sd, bo);
	}
	pthread_mutex_unlock(&sd->lock);
	if (ret) {
		if (ret == -ENOSPC) {
			munmap(bo->map, size);
			free(bo);
		}
		return ret;
	}
	c->handle = bo->handle;
	c->va = bo->va;
	*map = bo->map;
	return 0;
}

/* The pages go with the last job that uses them, as GEM's do. */
static void sim_bo_destroy(struct loom_device *dev, uint32_t handle, void *map,
			   uint64_t size)
{
	struct sim_dev *sd = sim_of(dev);
	struct sim_bo *bo;

	(void)map;
	(void)size;
	pthread_mutex_lock(&sd->lock);
	bo = bo_find_locked(sd, handle);
	if (bo)
		bo_put_locked(sd, bo);
	pthread_mutex_unlock(&sd->lock);
}

static int sim_bo_import(struct loom_bo *bo, struct loom_device *other,
			 struct loom_bo *s)
{
	(void)bo;
	(void)other;
	(void)s;
	return LOOM_E_NOT_SUPPORTED;
}

/* ------------------------------------------------------------ syncobjs --- */

static struct sim_syncobj *syncobj_locked(struct loom_device *dev, uint32_t h)
{
	struct sim_dev *sd = sim_of(dev);

	if (!h || h > sd->n_syncobjs || !sd->syncobjs[h - 1].used)
		return NULL;
	return &sd->syncobjs[h - 1];
}

static int sim_syncobj_create(struct loom_device *dev, uint32_t *h)
{
	struct sim_dev *sd = sim_of(dev);
	unsigned i;

	pthread_mutex_lock(&fence_lock);
	for (i = 0; i < sd->n_syncobjs && sd->syncobjs[i].used; i++)
		;
	if (i == sd->n_syncobjs) {
		unsigned n = sd->n_syncobjs ? 2 * sd->n_syncobjs : 64;
		struct sim_syncobj *s = realloc(sd->syncobjs, n * sizeof(*s));

		if (!s) {
			pthread_mutex_unlock(&fence_lock);
			return -ENOMEM;
		}
		memset(s + sd->n_syncobjs, 0, (n - sd->n_syncobjs) * sizeof(*s));
		sd->syncobjs = s;
		sd->n_syncobjs = n;
	}
	sd->syncobjs[i].used = true;
	pthread_mutex_unlock(&fence_lock);
	*h = i + 1;
	return 0;
}

static void sim_syncobj_destroy(struct loom_device *dev, uint32_t h)
{
	struct sim_syncobj *s;

	pthread_mutex_lock(&fence_lock);
	s = syncobj_locked(dev, h);
	if (s) {
		fence_put_locked(s->fence);
		*s = (struct sim_syncobj){ 0 };
	}
	pthread_mutex_unlock(&fence_lock);
}

/* Replaces the fence @h holds by @f (a new reference); fence_lock held. */
static int syncobj_replace_locked(struct loom_device *dev, uint32_t h,
				  struct sim_fence *f)
{
	struct sim_syncobj *s = syncobj_locked(dev, h);

	if (!s)
		return -ENOENT;
	fence_put_locked(s->fence);
	s->fence = fence_get_locked(f);
	pthread_cond_broadcast(&fence_cond);	/* WAIT_FOR_SUBMIT waiters */
	return 0;
}

/* 1 ready, 0 not yet, or -EINVAL / -ENOENT; fence_lock held. */
static int syncobj_ready_locked(struct loom_device *dev, uint32_t h,
				uint32_t flags)
{
	struct sim_syncobj *s = syncobj_locked(dev, h);

	if (!s)
		return -ENOENT;
	if (!s->fence)
		return flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT ? 0 : -EINVAL;
	return fence_done_locked(s->fence, NULL, NULL);
}

static int sim_syncobj_wait(struct loom_device *dev, const uint32_t *h,
			    unsigned n, int64_t abs_ns, uint32_t flags)
{
	bool all = flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	int ret;

	pthread_mutex_lock(&fence_lock);
	for (;;) {
		unsigned ready = 0;

		ret = 0;
		for (unsigned i = 0; i < n && ret >= 0; i++) {
			ret = syncobj_ready_locked(dev, h[i], flags);
			ready += ret > 0;
		}
		if (ret < 0)
			break;
		ret = 0;
		if (n && (all ? ready == n : ready > 0))
			break;
		ret = -ETIME;
		if (!wait_locked(abs_ns))
			break;
	}
	pthread_mutex_unlock(&fence_lock);
	return ret;
}

static int sim_syncobj_signal(struct loom_device *dev, uint32_t h)
{
	struct sim_fence *f = fence_new();
	int ret;

	if (!f)
		return -ENOMEM;
	f->signalled = true;
	f->done_ns = loom_now_ns();
	pthread_mutex_lock(&fence_lock);
	ret = syncobj_replace_locked(dev, h, f);
	fence_put_locked(f);
	pthread_mutex_unlock(&fence_lock);
	return ret;
}

static int sim_syncobj_status(struct loom_device *dev, uint32_t h, int *status,
			      uint64_t *done_ns)
{
	struct sim_syncobj *s;
	int ret = 0, error = 0;

	pthread_mutex_lock(&fence_lock);
	s = syncobj_locked(dev, h);
	if (!s || !s->fence) {
		ret = s ? -EINVAL : -ENOENT;
	} else if (fence_done_locked(s->fence, &error, done_ns)) {
		*status = error < 0 ? error : 1;
	} else {
		*status = 0;
		*done_ns = 0;
	}
	pthread_mutex_unlock(&fence_lock);
	return ret;
}

static int sim_syncobj_transfer(struct loom_device *from, uint32_t h,
				struct loom_device *to, uint32_t *out)
{
	struct sim_syncobj *s;
	uint32_t n;
	int ret;

	if (to->be != &sim_backend)
		return LOOM_E_NOT_SUPPORTED;
	ret = sim_syncobj_create(to, &n);
	if (ret)
		return ret;
	pthread_mutex_lock(&fence_lock);
	s = syncobj_locked(from, h);
	ret = !s ? -ENOENT : !s->fence ? -EINVAL :
	      syncobj_replace_locked(to, n, s->fence);
	pthread_mutex_unlock(&fence_lock);
	if (ret)
		sim_syncobj_destroy(to, n);
	else
		*out = n;
	return ret;
}

static int sim_syncobj_merge(struct loom_device *dev, uint32_t out,
			     struct loom_token *const *parts, unsigned n)
{
	struct sim_fence *m = fence_new();
	int ret = 0;

	if (!m || !(m->parts = calloc(n ? n : 1, sizeof(*m->parts)))) {
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_lock(&fence_lock);
	for (unsigned i = 0; i < n && !ret; i++) {
		struct sim_syncobj *s = parts[i]->dev->be == &sim_backend ?
			syncobj_locked(parts[i]->dev, parts[i]->syncobj) : NULL;

		if (!s || !s->fence)
			ret = s ? -EINVAL : LOOM_E_NOT_SUPPORTED;
		else
			m->parts[m->n_parts++] = fence_get_locked(s->fence);
	}
	if (!ret)
		ret = syncobj_replace_locked(dev, out, m);
	fence_put_locked(m);
	pthread_mutex_unlock(&fence_lock);
	return ret;
}

/* ---------------------------------------------------------------- jobs --- */

static void ring_post_locked(struct sim_ring *r, uint64_t user_data, int res,
			     uint64_t job_id);

static void job_free(struct sim_dev *sd, struct sim_job *job)
{
	pthread_mutex_lock(&fence_lock);
	for (unsigned i = 0; i < job->n_in; i++)
		fence_put_locked(job->in[i]);
	fence_put_locked(job->done);
	pthread_mutex_unlock(&fence_lock);
	pthread_mutex_lock(&sd->lock);
	for (unsigned i = 0; i < job->n_bos; i++)
		bo_put_locked(sd, job->bos[i]);
	pthread_mutex_unlock(&sd->lock);
	free(job->in);
	free(job->bos);
	free(job);
}

/* The job's end: its record, its fence, its CQE, in the driver's order. */
static void job_complete(struct sim_core *c, struct sim_job *job,
			 const struct loom_hw_completion *done, size_t dump_len,
			 int error)
{
	struct sim_dev *sd = c->sd;
	struct sim_record *rec = &sd->records[job->id % SIM_RECORDS];

	pthread_mutex_lock(&sd->lock);
	if (rec->job_id == job->id) {
		rec->info = (struct drm_loom_job_info){
			.job_id = job->id,
			.state = DRM_LOOM_JOB_DONE,
			.error = error,
			.hw_status = done->status,
			.detail = done->detail,
			.packet_offset = done->packet_offset,
			.fault_va = done->fault_va,
			.packet_opcode = done->packet_opcode,
			.counters = done->counters,
		};
		if (dump_len) {
			rec->dump = malloc(dump_len);
			if (rec->dump) {
				memcpy(rec->dump, c->dump, dump_len);
				rec->info.dump_size = dump_len;
			}
		}
	}
	pthread_mutex_unlock(&sd->lock);
	atomic_fetch_add(&sd->records_done, 1);
	fence_signal(job->done, error);
	if (job->ring) {
		pthread_mutex_lock(&fence_lock);
		ring_post_locked(job->ring, job->user_data, error, job->id);
		pthread_mutex_unlock(&fence_lock);
	}
	job_free(sd, job);
}

/* Waits for every in-fence of @job, or until the device closes. */
static bool job_ready(struct sim_dev *sd, struct sim_job *job)
{
	bool ok = true;

	pthread_mutex_lock(&fence_lock);
	for (unsigned i = 0; i < job->n_in; i++) {
		while (!fence_done_locked(job->in[i], NULL, NULL) &&
		       !__atomic_load_n(&sd->quit, __ATOMIC_RELAXED))
			wait_locked(INT64_MAX);
	}
	ok = !__atomic_load_n(&sd->quit, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fence_lock);
	return ok;
}

static void *core_thread(void *arg)
{
	struct sim_core *c = arg;
	struct sim_dev *sd = c->sd;

	pthread_mutex_lock(&sd->lock);
	for (;;) {
		struct loom_hw_completion done = { 0 };
		struct sim_job *job = c->head;
		size_t dump_len = 0;
		int error = -ECANCELED;

		if (!job) {
			if (sd->quit)
				break;
			pthread_cond_wait(&c->cond, &sd->lock);
			continue;
		}
		c->head = job->next;
		if (!c->head)
			c->tail = NULL;
		pthread_mutex_unlock(&sd->lock);
		if (job_ready(sd, job)) {
			__atomic_store_n(&c->engine.stop, 0, __ATOMIC_RELAXED);
			pthread_mutex_lock(&sd->lock);
			c->started_ns = c->progress_ns = loom_now_ns();
			c->progress_seen = __atomic_load_n(&c->engine.progress,
							   __ATOMIC_RELAXED);
			pthread_mutex_unlock(&sd->lock);
			loom_core_run_job(&c->engine, &job->hw, &done, c->dump,
					  LOOM_DUMP_MAX_SIZE, &dump_len);
			pthread_mutex_lock(&sd->lock);
			c->started_ns = 0;
			pthread_mutex_unlock(&sd->lock);
			error = drm_loom_status_errno(done.status);
		}
		/* else the device closes: the job is cancelled, not run */
		job_complete(c, job, &done, dump_len, error);
		pthread_mutex_lock(&sd->lock);
	}
	pthread_mutex_unlock(&sd->lock);
	return NULL;
}

/*
 * Whether core @c's job is hung at @now, as loom.ko's hang check judges:
 * no progress for a deadline, or running past ten deadlines or
 * max_job_ms.  sd->lock held.
 */
static bool job_hung_locked(struct sim_core *c, uint64_t now, uint64_t cap)
{
	uint64_t progress = __atomic_load_n(&c->engine.progress, __ATOMIC_RELAXED);
	uint64_t deadline = SIM_DEADLINE_MS * 1000000ULL;

	if (progress != c->progress_seen) {
		c->progress_seen = progress;
		c->progress_ns = now;
	}
	return now - c->progress_ns >= deadline ||
	       now - c->started_ns >= (cap < 10 * deadline ? cap : 10 * deadline);
}

/* Stops the jobs loom.ko's hang check would stop. */
static void *watchdog_thread(void *arg)
{
	struct sim_dev *sd = arg;
	uint64_t limit = sd->cfg.max_job_ms * 1000000ULL;

	pthread_mutex_lock(&sd->lock);
	while (!sd->quit) {
		struct timespec ts;
		uint64_t now = loom_now_ns(), at = now + SIM_WATCHDOG_MS * 1000000ULL;

		for (unsigned i = 0; i < sd->cfg.cores; i++) {
			struct sim_core *c = &sd->cores[i];

			if (c->started_ns && job_hung_locked(c, now, limit))
				__atomic_store_n(&c->engine.stop, 1, __ATOMIC_RELAXED);
		}
		ts.tv_sec = at / 1000000000;
		ts.tv_nsec = at % 1000000000;
		pthread_cond_timedwait(&sd->watchdog_cond, &sd->lock, &ts);
	}
	pthread_mutex_unlock(&sd->lock);
	return NULL;
}

/* The in-fences of @s, referenced into @job; fence_lock taken. */
static int job_take_fences(struct loom_device *dev, struct sim_job *job,
			   const struct drm_loom_submit *s)
{
	const uint32_t *in = (const uint32_t *)(uintptr_t)s->in_syncobjs;
	int ret = 0;

	job->in = calloc(s->in_syncobj_count ? s->in_syncobj_count : 1,
			 sizeof(*job->in));
	if (!job->in)
		return -ENOMEM;
	pthread_mutex_lock(&fence_lock);
	for (unsigned i = 0; i < s->in_syncobj_count && !ret; i++) {
		struct sim_syncobj *o = syncobj_locked(dev, in[i]);

		if (!o)
			ret = -ENOENT;
		else if (!o->fence)
			ret = -EINVAL;	/* the driver: a syncobj with no fence */
		else
			job->in[job->n_in++] = fence_get_locked(o->fence);
	}
	if (!ret && s->out_syncobj && !syncobj_locked(dev, s->out_syncobj))
		ret = -ENOENT;
	pthread_mutex_unlock(&fence_lock);
	return ret;
}

/* The BOs of @s, checked and referenced into @job; sd->lock held. */
static int job_take_bos_locked(struct sim_dev *sd, struct sim_job *job,
			       const struct drm_loom_submit *s,
			       struct sim_bo **cmd)
{
	const struct drm_loom_bo_ref *refs =
		(const struct drm_loom_bo_ref *)(uintptr_t)s->bos;

	*cmd = bo_find_locked(sd, s->cmd_handle);
	if (!*cmd)
		return -ENOENT;
	if (s->cmd_offset > (*cmd)->size ||
	    s->cmd_size > (*cmd)->size - s->cmd_offset)
		return -EINVAL;
	job->bos = calloc(s->bo_count + 1, sizeof(*job->bos));
	if (!job->bos)
		return -ENOMEM;
	for (unsigned i = 0; i < s->bo_count; i++) {
		struct sim_bo *b = bo_find_locked(sd, refs[i].handle);

		uint32_t flags = refs[i].flags;

		if (!flags ||
		    (flags & ~(DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE)))
			return -EINVAL;
		if (!b)
			return -ENOENT;
		job->bos[job->n_bos++] = b;
		b->refs++;
	}
	job->bos[job->n_bos++] = *cmd;
	(*cmd)->refs++;
	return 0;
}

/* Queues the job of @s; a ring's (@r) gets its CQE at the end. */
static int submit_job(struct loom_device *dev, struct drm_loom_submit *s,
		      struct sim_ring *r, uint64_t user_data)
{
	struct sim_dev *sd = sim_of(dev);
	struct sim_job *job;
	struct sim_bo *cmd;
	struct sim_core *c;
	int ret;

	if (s->queue >= sd->cfg.cores || s->flags || s->out_point || s->bo_count > DRM_LOOM_MAX_BOS ||
	    s->in_syncobj_count > DRM_LOOM_MAX_IN_SYNCOBJS || !s->cmd_size ||
	    s->cmd_size > LOOM_CMD_MAX_SIZE || s->cmd_size % 4 ||
	    s->cmd_offset % 8 || s->deadline_ns > DRM_LOOM_MAX_DEADLINE_NS)
		return -EINVAL;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->done = fence_new();
	ret = job->done ? job_take_fences(dev, job, s) : -ENOMEM;
	pthread_mutex_lock(&sd->lock);
	if (!ret)
		ret = sd->quit ? -ENODEV : job_take_bos_locked(sd, job, s, &cmd);
	if (ret) {
		pthread_mutex_unlock(&sd->lock);
		job_free(sd, job);
		return ret;
	}
	job->id = ++sd->next_job_id;
	job->hw = (struct loom_hw_job){
		.cmd_va = cmd->va + s->cmd_offset,
		.cmd_size = s->cmd_size,
		.pt_root = (uint64_t)(uintptr_t)sd->pt_root,
		.seqno = job->id,
	};
	free(sd->records[job->id % SIM_RECORDS].dump);
	sd->records[job->id % SIM_RECORDS] = (struct sim_record){
		.job_id = job->id,
		.info = { .job_id = job->id, .state = DRM_LOOM_JOB_PENDING },
	};
	if (r) {
		pthread_mutex_lock(&fence_lock);
		job->ring = r;
		r->refs++;
		pthread_mutex_unlock(&fence_lock);
		job->user_data = user_data;
	}
	c = &sd->cores[s->queue];
	if (c->tail)
		c->tail->next = job;
	else
		c->head = job;
	c->tail = job;
	s->job_id = job->id;
	/* the out-syncobj takes the fence before anyone can wait for it */
	pthread_mutex_lock(&fence_lock);
	if (s->out_syncobj)
		syncobj_replace_locked(dev, s->out_syncobj, job->done);
	pthread_mutex_unlock(&fence_lock);
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&sd->lock);
	return 0;
}

static int sim_submit(struct loom_device *dev, struct drm_loom_submit *s)
{
	return submit_job(dev, s, NULL, 0);
}

/*
 * DRM_LOOM_JOB_INFO_WAIT: until the job's record says DONE (or is gone)
 * or @abs_ns passes.  job_complete() writes a record, counts it in
 * records_done, then signals the job's fence, which broadcasts fence_cond
 * under fence_lock.  A waiter reads the count before it looks at the
 * record (under the device lock, which submit_job() holds while it takes
 * fence_lock: never fence_lock first) and sleeps only if the count has
 * not moved when it holds fence_lock: no wake-up is lost.
 */
static void job_info_wait(struct sim_dev *sd, uint64_t job_id, int64_t abs_ns)
{
	for (;;) {
		struct sim_record *rec = &sd->records[job_id % SIM_RECORDS];
		uint64_t seen = atomic_load(&sd->records_done);
		bool settled, more = true;

		pthread_mutex_lock(&sd->lock);
		settled = rec->job_id != job_id ||
			  rec->info.state == DRM_LOOM_JOB_DONE;
		pthread_mutex_unlock(&sd->lock);
		if (settled)
			return;
		pthread_mutex_lock(&fence_lock);
		if (atomic_load(&sd->records_done) == seen)
			more = wait_locked(abs_ns);
		pthread_mutex_unlock(&fence_lock);
		if (!more)
			return;
	}
}

static int sim_job_info(struct loom_device *dev, struct drm_loom_job_info *info)
{
	struct sim_dev *sd = sim_of(dev);
	struct sim_record *rec;
	uint32_t avail = info->dump_size;
	uint32_t flags = info->flags;
	int ret = 0;

	/* as loom.ko checks them */
	if ((flags & ~DRM_LOOM_JOB_INFO_FLAGS) || !info->job_id ||
	    (!(flags & DRM_LOOM_JOB_INFO_WAIT) && info->timeout_ns))
		return -EINVAL;
	if (flags & DRM_LOOM_JOB_INFO_WAIT)
		job_info_wait(sd, info->job_id, info->timeout_ns);
	pthread_mutex_lock(&sd->lock);
	rec = &sd->records[info->job_id % SIM_RECORDS];
	if (rec->job_id != info->job_id) {
		ret = -ENOENT;
	} else {
		uint64_t dump = info->dump;
		int64_t timeout_ns = info->timeout_ns;

		*info = rec->info;
		info->dump = dump;
		info->flags = flags;
		info->timeout_ns = timeout_ns;
		if (rec->dump && dump && avail)
			memcpy((void *)(uintptr_t)dump, rec->dump,
			       avail < rec->info.dump_size ? avail :
			       rec->info.dump_size);
		if ((flags & DRM_LOOM_JOB_INFO_WAIT) &&
		    rec->info.state != DRM_LOOM_JOB_DONE)
			ret = -ETIME;
	}
	pthread_mutex_unlock(&sd->lock);
	return ret;
}

/* ---------------------------------------------------------------- rings --- */

static void ring_put_locked(struct sim_ring *r)
{
	if (--r->refs)
		return;
	free(r->cqes);
	free(r);
}

static void ring_post_locked(struct sim_ring *r, uint64_t user_data, int res,
			     uint64_t job_id)
{
	if (!r->dead) {
		if (r->count == r->cap) {
			unsigned n = 2 * r->cap;
			struct loom_cqe *q = malloc(n * sizeof(*q));

			if (!q)
				abort();	/* a CQE is never dropped */
			for (unsigned i = 0; i < r->count; i++)
				q[i] = r->cqes[(r->head + i) % r->cap];
			free(r->cqes);
			r->cqes = q;
			r->cap = n;
			r->head = 0;
		}
		r->cqes[(r->head + r->count++) % r->cap] = (struct loom_cqe){
			.user_data = user_data, .res = res, .job_id = job_id,
		};
		pthread_cond_broadcast(&fence_cond);
	}
	ring_put_locked(r);
}

static int sim_uring_init(struct loom_uring *u, unsigned entries, bool job_id)
{
	struct sim_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->cap = entries < 8 ? 16 : 2 * entries;
	r->cqes = calloc(r->cap, sizeof(*r->cqes));
	if (!r->cqes) {
		free(r);
		return -ENOMEM;
	}
	r->refs = 1;
	u->priv = r;
	u->fd = -1;
	u->cqe32 = job_id;
	return 0;
}

/* Jobs still running keep the queue until they end; their CQEs go. */
static void sim_uring_exit(struct loom_uring *u)
{
	struct sim_ring *r = u->priv;

	pthread_mutex_lock(&fence_lock);
	r->dead = true;
	ring_put_locked(r);
	pthread_mutex_unlock(&fence_lock);
}

static int sim_uring_submit(struct loom_uring *u,
			    const struct drm_loom_submit *s, uint64_t user_data)
{
	struct drm_loom_submit own = *s;
	struct sim_ring *r = u->priv;
	int ret;

	pthread_mutex_lock(&fence_lock);
	r->refs++;
	pthread_mutex_unlock(&fence_lock);
	ret = submit_job(u->dev, &own, r, user_data);
	pthread_mutex_lock(&fence_lock);
	if (ret)	/* refused: its CQE says so at once, as the driver's */
		ring_post_locked(r, user_data, ret, 0);
	else
		ring_put_locked(r);
	pthread_mutex_unlock(&fence_lock);
	return 0;
}

static int sim_uring_next(struct loom_uring *u, bool wait, struct loom_cqe *cqe)
{
	struct sim_ring *r = u->priv;
	int ret = 0;

	pthread_mutex_lock(&fence_lock);
	while (!r->count && wait)
		wait_locked(INT64_MAX);
	if (r->count) {
		*cqe = r->cqes[r->head];
		r->head = (r->head + 1) % r->cap;
		r->count--;
		if (!u->cqe32)
			cqe->job_id = 0;
	} else {
		ret = -EAGAIN;
	}
	pthread_mutex_unlock(&fence_lock);
	return ret;
}

/* ------------------------------------------------------------ the device --- */

static void sim_free(struct sim_dev *sd)
{
	for (unsigned i = 0; sd->cores && i < sd->cfg.cores; i++) {
		loom_fabric_destroy(sd->cores[i].engine.fabric);
		free(sd->cores[i].dump);
		pthread_cond_destroy(&sd->cores[i].cond);
	}
	free(sd->cores);
	for (unsigned i = 0; i < SIM_RECORDS; i++)
		free(sd->records[i].dump);
	while (sd->bos) {
		struct sim_bo *b = sd->bos;

		sd->bos = b->next;
		munmap(b->map, b->size);
		free(b);
	}
	pthread_mutex_lock(&fence_lock);
	for (unsigned i = 0; i < sd->n_syncobjs; i++)
		fence_put_locked(sd->syncobjs[i].fence);
	pthread_mutex_unlock(&fence_lock);
	free(sd->syncobjs);
	if (sd->pt_root)
		tables_free(sd->pt_root, 0);
	pthread_cond_destroy(&sd->watchdog_cond);
	pthread_mutex_destroy(&sd->lock);
	free(sd);
}

/* The threads end: queued jobs are cancelled, the running one stopped. */
static void sim_stop(struct sim_dev *sd, unsigned started, bool watchdog)
{
	pthread_mutex_lock(&sd->lock);
	sd->quit = true;
	for (unsigned i = 0; i < started; i++) {
		__atomic_store_n(&sd->cores[i].engine.stop, 1, __ATOMIC_RELAXED);
		pthread_cond_signal(&sd->cores[i].cond);
	}
	pthread_cond_signal(&sd->watchdog_cond);
	pthread_mutex_unlock(&sd->lock);
	pthread_mutex_lock(&fence_lock);
	pthread_cond_broadcast(&fence_cond);
	pthread_mutex_unlock(&fence_lock);
	for (unsigned i = 0; i < started; i++)
		pthread_join(sd->cores[i].thread, NULL);
	if (watchdog)
		pthread_join(sd->watchdog, NULL);
}

static void sim_close(struct loom_device *dev)
{
	struct sim_dev *sd = sim_of(dev);

	sim_stop(sd, sd->cfg.cores, true);
	sim_free(sd);
}

static const struct loom_backend sim_backend = {
	.name = "sim",
	.close = sim_close,
	.bo_create = sim_bo_create,
	.bo_destroy = sim_bo_destroy,
	.bo_import = sim_bo_import,
	.submit = sim_submit,
	.job_info = sim_job_info,
	.syncobj_create = sim_syncobj_create,
	.syncobj_destroy = sim_syncobj_destroy,
	.syncobj_wait = sim_syncobj_wait,
	.syncobj_signal = sim_syncobj_signal,
	.syncobj_status = sim_syncobj_status,
	.syncobj_transfer = sim_syncobj_transfer,
	.syncobj_merge = sim_syncobj_merge,
	.uring_init = sim_uring_init,
	.uring_exit = sim_uring_exit,
	.uring_submit = sim_uring_submit,
	.uring_next = sim_uring_next,
};

static int config_of(const struct loom_sim_config *in,
		     struct loom_sim_config *c)
{
	*c = in ? *in : (struct loom_sim_config){ 0 };
	for (unsigned i = 0; i < sizeof(c->reserved) / sizeof(c->reserved[0]); i++)
		if (c->reserved[i])
			return -EINVAL;
	c->fabric_width = c->fabric_width ? c->fabric_width : SIM_DEFAULT_DIM;
	c->fabric_height = c->fabric_height ? c->fabric_height : SIM_DEFAULT_DIM;
	c->cores = c->cores ? c->cores : SIM_DEFAULT_CORES;
	c->max_job_ms = c->max_job_ms ? c->max_job_ms : SIM_DEFAULT_JOB_MS;
	if (c->fabric_width > LOOM_FABRIC_MAX_DIM ||
	    c->fabric_height > LOOM_FABRIC_MAX_DIM || c->cores > SIM_MAX_CORES)
		return -EINVAL;
	return 0;
}

/* What the QEMU device reports of itself, and loom.ko of the driver. */
static void info_of(const struct loom_sim_config *c,
		    struct loom_device_info *info)
{
	*info = (struct loom_device_info){
		.path = "sim",
		.uapi_version = DRM_LOOM_UAPI_VERSION,
		.num_cores = c->cores,
		.fabric_width = c->fabric_width,
		.fabric_height = c->fabric_height,
		.max_rank = LOOM_MAX_RANK,
		.hw_version = LOOM_VERSION_CURRENT,
		.hw_caps = LOOM_CAP_QUEUES | LOOM_CAP_MMU | LOOM_CAP_ITEMS |
			   LOOM_CAP_STATE_DUMP | LOOM_CAP_TLB |
			   LOOM_CAP_PE_SLOTS | LOOM_CAP_RUN_WORK |
			   LOOM_CAP_DENSE_BLOCK | LOOM_CAP_ATOMIC |
			   LOOM_CAP_LINK_CHANNELS,
		.features = DRM_LOOM_FEATURE_SUBMIT | DRM_LOOM_FEATURE_URING_CMD |
			    DRM_LOOM_FEATURE_JOB_INFO |
			    DRM_LOOM_FEATURE_URING_CANCEL |
			    DRM_LOOM_FEATURE_URING_JOB_ID |
			    DRM_LOOM_FEATURE_JOB_INFO_WAIT,
		.pe_slots = LOOM_PE_SLOTS,
	};
}

static int cores_start(struct sim_dev *sd)
{
	const struct loom_fabric_params params = {
		.width = sd->cfg.fabric_width,
		.height = sd->cfg.fabric_height,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	unsigned i;

	sd->cores = calloc(sd->cfg.cores, sizeof(*sd->cores));
	if (!sd->cores)
		return -ENOMEM;
	for (i = 0; i < sd->cfg.cores; i++) {
		struct sim_core *c = &sd->cores[i];

		c->sd = sd;
		c->index = i;
		pthread_cond_init(&c->cond, NULL);
		c->engine.index = i;
		c->engine.bus = &sd->bus;
		c->engine.mmu.invalidations = &sd->invalidations;
		c->engine.fabric = loom_fabric_create(&params);
		c->dump = calloc(1, LOOM_DUMP_MAX_SIZE);
		if (!c->engine.fabric || !c->dump)
			return -ENOMEM;
	}
	for (i = 0; i < sd->cfg.cores; i++)
		if (pthread_create(&sd->cores[i].thread, NULL, core_thread,
				   &sd->cores[i]))
			break;
	if (i == sd->cfg.cores &&
	    !pthread_create(&sd->watchdog, NULL, watchdog_thread, sd))
		return 0;
	sim_stop(sd, i, false);
	return -EAGAIN;
}

int loom_sim_open(const struct loom_sim_config *config,
		  struct loom_device **out)
{
	struct loom_device_info info;
	struct sim_dev *sd;
	int ret;

	if (!out)
		return -EINVAL;
	pthread_once(&fence_once, fence_init_cond);
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	ret = config_of(config, &sd->cfg);
	if (ret) {
		free(sd);
		return ret;
	}
	pthread_mutex_init(&sd->lock, NULL);
	pthread_cond_init(&sd->watchdog_cond, NULL);
	sd->bus = (struct loom_bus){ .opaque = sd, .read = bus_read,
				     .write = bus_write,
				     .cmpxchg = bus_cmpxchg };
	sd->pt_root = table_new();
	ret = sd->pt_root ? cores_start(sd) : -ENOMEM;
	if (ret) {
		sim_free(sd);
		return ret;
	}
	info_of(&sd->cfg, &info);
	ret = loom_device_open_backend(&sim_backend, sd, &info, out);
	if (ret) {
		sim_stop(sd, sd->cfg.cores, true);
		sim_free(sd);
	}
	return ret;
}

int loom_device_is_sim(const struct loom_device *dev)
{
	return dev && dev->be == &sim_backend;
}
