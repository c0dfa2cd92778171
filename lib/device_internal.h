/* SPDX-License-Identifier: MIT */
/*
 * DOC: the device runtime's private header
 *
 * What device.c, bo.c, image.c, launch.c, token.c, arena.c and ring.c
 * share and nobody else sees: the object layouts and the internal helpers
 * between the files.
 */
#ifndef LOOM_DEVICE_INTERNAL_H
#define LOOM_DEVICE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "drm/loom_drm.h"

#include "loom/loom.h"
#include "loom_image.h"

/*
 * A launch plan: one thread of one image, checked once against one device
 * (fabric, rank, features) and its configuration uploaded.  Keyed by the
 * image's load id and the thread's index, never by name or address.  Only
 * a launch that passed every check makes one.
 */
struct loom_plan {
	uint64_t image_id;
	unsigned thread;
	struct loom_bo *config;
	struct loom_plan *next;
};

/* One command buffer in an arena, from its launch until its job is done. */
struct loom_arena_entry {
	uint32_t offset, size;
	struct loom_token *token;	/* a reference: its syncobj says "done" */
	bool done;			/* ring arenas: the CQE arrived */
};

/*
 * A command arena: one BO the command buffers of many launches are
 * written into (drm_loom_submit.cmd_offset), a byte ring whose entries
 * are reused in submission order once their jobs are done (arena.c).
 */
struct loom_arena {
	pthread_mutex_t lock;		/* the device's arenas: launches of any thread */
	struct loom_bo *bo;		/* NULL until the first launch */
	uint32_t head;			/* where the next command goes */
	struct loom_arena_entry *fifo;	/* in-flight entries, oldest first */
	unsigned cap, first, count;
	uint64_t first_seq;		/* sequence number of fifo[first] */
};

struct loom_uring;
struct loom_cqe;

/*
 * What carries a device's requests: the driver (drm.c: ioctls on the
 * node, io_uring) or an engine in the process (libloom-sim's sim/).
 * Every request has the driver's own meaning and arguments (uapi
 * loom_drm.h, the syncobj ioctls of drm.h): the rest of libloom cannot
 * tell them apart.  Returns are 0 or a negative errno, as the ioctls'.
 */
struct loom_backend {
	const char *name;
	void (*close)(struct loom_device *dev);
	/* BO_CREATE: c->handle and c->va out; then the CPU mapping */
	int (*bo_create)(struct loom_device *dev, struct drm_loom_bo_create *c,
			 void **map);
	void (*bo_destroy)(struct loom_device *dev, uint32_t handle, void *map,
			   uint64_t size);
	/* SUBMIT, s->job_id out */
	int (*submit)(struct loom_device *dev, struct drm_loom_submit *s);
	int (*job_info)(struct loom_device *dev, struct drm_loom_job_info *info);
	int (*syncobj_create)(struct loom_device *dev, uint32_t *h);
	void (*syncobj_destroy)(struct loom_device *dev, uint32_t h);
	/* DRM_SYNCOBJ_WAIT_FLAGS_*; 0, -ETIME, or -EINVAL: a syncobj without
	   a fence and no WAIT_FOR_SUBMIT */
	int (*syncobj_wait)(struct loom_device *dev, const uint32_t *h,
			    unsigned n, int64_t abs_ns, uint32_t flags);
	int (*syncobj_signal)(struct loom_device *dev, uint32_t h);
	/*
	 * The fence a syncobj holds, as a sync_file tells it: *@status 1
	 * signalled, 0 active, negative its error; *@done_ns when signalled.
	 */
	int (*syncobj_status)(struct loom_device *dev, uint32_t h, int *status,
			      uint64_t *done_ns);
	/* A new syncobj of @to holding the fence of @from's syncobj @h. */
	int (*syncobj_transfer)(struct loom_device *from, uint32_t h,
				struct loom_device *to, uint32_t *out);
	/* Syncobj @out of @dev now holds the merge of the parts' fences. */
	int (*syncobj_merge)(struct loom_device *dev, uint32_t out,
			     struct loom_token *const *parts, unsigned n);
	/* PRIME: @bo's pages as a BO of @other, its handle, VA and map in @s */
	int (*bo_import)(struct loom_bo *bo, struct loom_device *other,
			 struct loom_bo *s);
	/* the io_uring transport (ring.c); URING_CMD devices only */
	int (*uring_init)(struct loom_uring *u, unsigned entries, bool job_id);
	void (*uring_exit)(struct loom_uring *u);
	int (*uring_submit)(struct loom_uring *u,
			    const struct drm_loom_submit *s, uint64_t user_data);
	int (*uring_next)(struct loom_uring *u, bool wait, struct loom_cqe *cqe);
};

extern const struct loom_backend loom_drm_backend;

struct loom_device {
	const struct loom_backend *be;
	void *priv;			/* the backend's */
	int fd;				/* the node, -1 where there is none */
	struct loom_device_info info;
	pthread_mutex_t lock;		/* protects configs, idle_tokens, shared */
	struct loom_plan *configs;	/* the plans, each with its configuration */
	/*
	 * Tokens no one holds, each with its syncobj, reused by ioctl
	 * launches: a launch neither allocates a token nor creates a syncobj
	 * once the list has them (token.c).  Linked by next_idle.
	 */
	struct loom_token *idle_tokens;
	unsigned idle_count;
	struct loom_arena *arenas;	/* one per hardware queue */
	struct loom_bo *shared;		/* BOs of share groups, under lock */
	/*
	 * Every BO of the device (its own and those shared into it), by VA,
	 * under bo_lock: what a launch finds a memref operand's BO in (bo.c).
	 * A lock of its own: a plan's configuration BO is made under @lock.
	 */
	pthread_mutex_t bo_lock;
	struct loom_bo **bos;
	size_t num_bos, cap_bos;
};

/*
 * The BO of @dev whose VA range holds @va, or NULL; under dev->bo_lock
 * (bo.c).
 */
struct loom_bo *loom_bo_holding_locked(const struct loom_device *dev,
				       uint64_t va);

struct loom_bo {
	struct loom_device *dev;
	uint32_t handle;
	uint64_t va;
	uint64_t size;
	void *map;
	/*
	 * 0, or the id of the group of BOs, at most one per device, that are
	 * one memory (loom_bo_share()); then the BO is on its device's
	 * shared list.
	 */
	uint64_t share_group;
	struct loom_bo *share_prev, *share_next;
};

struct loom_image {
	uint64_t id;			/* unique per load: the cache key */
	struct loom_image_info info;
	struct loom_image_thread *threads;	/* copies, aligned */
	struct loom_image_patch *patches;
	uint32_t num_patches;
	unsigned char *configs;
	uint32_t configs_size;
	unsigned char *templates;
	uint32_t templates_size;
	char *strtab;
	uint32_t strtab_size;
	void *host;			/* .loom.host copy, aligned; NULL if none */
	uint64_t host_size;
	unsigned char *srcmap;		/* .loom.srcmap in @bytes; NULL if none */
	uint64_t srcmap_size;
	/*
	 * .loom.memrefs' records, copied aligned (NULL if none); thread i's
	 * are [memref_first[i], memref_first[i + 1]) (num_threads + 1 of them)
	 */
	struct loom_image_memref *memrefs;
	uint32_t num_memrefs;
	uint32_t *memref_first;
	void *bytes;			/* owns every pointer above but threads/patches */
	uint64_t digest;		/* FNV-1a of the loaded bytes (loom_image_digest) */
	struct loom_image_site *sites;	/* registered launch sites (point.c) */
	size_t n_sites, cap_sites;
};

/* One launch site the program registered (loom_launch_site_register()). */
struct loom_image_site {
	char *name;			/* the image's copy: refs point at it */
	uint32_t thread;
};

/*
 * Whether @site is a launch site of thread @thread of @img: its digest
 * and thread, and for LOOM_SITE_API a name registered with it (point.c).
 */
bool loom_launch_site_of(const struct loom_image *img, uint32_t thread,
			 const struct loom_launch_ref *site);

struct loom_image_view;
/* A view of @img's own (aligned) sections, for format/'s readers. */
void loom_image_view_of(const struct loom_image *img,
			struct loom_image_view *v);

/*
 * A launch's completion, whatever carried the launch: its out-syncobj.
 * Referenced by its caller and by the arena entry of its command buffer,
 * whichever lets go last gives the syncobj back to the device's pool.
 */
struct loom_token {
	struct loom_device *dev;
	uint32_t syncobj;
	atomic_uint refs;
	uint64_t job_id;		/* 0 until known (a ring's CQE brings it) */
	uint64_t submit_ns;		/* CLOCK_MONOTONIC at submission */
	uint64_t occurrence;		/* its dispatch occurrence; set once, before
					   the token is handed out */
	struct loom_launch_ref launch;	/* its launch site; kind 0: none.  Set
					   with the occurrence */
	bool status_known;
	int status;			/* once status_known */
	/*
	 * A spread launch's collective token (spread.c): its syncobj holds
	 * the merge of its parts' fences; each part is a token of its own.
	 */
	struct loom_token **parts;
	unsigned n_parts;
	struct loom_token *next_idle;	/* on the device's idle_tokens */
};

/* token.c */
/* Adds @c to @sum, every counter. */
void loom_counters_add(struct loom_hw_counters *sum,
		       const struct loom_hw_counters *c);

/* bo.c */
/*
 * The VA on @to of the byte at @va on @from: @va itself when the devices
 * are one, else the same offset in @to's BO of the share group of the BO
 * of @from that holds @va; LOOM_E_CAPTURE_NOT_SHARED when there is none.
 */
int loom_bo_translate_va(struct loom_device *from, uint64_t va,
			 struct loom_device *to, uint64_t *out);

/* device.c */
int loom_get_param(int fd, uint32_t param, uint64_t *value);
/*
 * A device whose requests @be carries (@priv its state), as @info
 * describes it: what libloom-sim opens.  @be->close runs at
 * loom_device_close(), after libloom let go of everything.
 */
int loom_device_open_backend(const struct loom_backend *be, void *priv,
			     const struct loom_device_info *info,
			     struct loom_device **out);
/* Gives every arena's BO and syncobj back: the device is closing. */
void loom_device_release_launches(struct loom_device *dev);

/* image.c */
const struct loom_image_thread *loom_image_find(const struct loom_image *img,
						const char *name);

/* launch.c */
/*
 * Everything loom_launch() checks, without submitting: the device adapter
 * checks each device once before a run (items count and VAs are not
 * checked: @l's may be placeholders).
 */
int loom_launch_check(struct loom_device *dev, const struct loom_image *img,
		      const struct loom_launch *l);
/*
 * The command buffer @l would run, written to @buf (at most @size bytes):
 * *@cmd_size its size, *@config the configuration BO handle it reads.
 * The benchmarks submit it raw to measure what the library adds.
 */
int loom_launch_encode(struct loom_device *dev, const struct loom_image *img,
		       const struct loom_launch *l, void *buf, uint32_t size,
		       uint32_t *cmd_size, uint32_t *config);

/* A launch, checked and planned: its thread, its plan, its command's size. */
struct loom_checked_launch {
	const struct loom_image_thread *t;
	const struct loom_plan *plan;
	uint32_t cmd_size;
	const struct loom_pkt_run_work *work;	/* replaces DISPATCH_ITEMS */
	bool block;			/* DISPATCH_DENSE of [begin, end) of dim 0 */
	int64_t begin, end;
};

/*
 * Every check of loom_launch(), in its documented order, and the plan
 * made; with @work (an items launch through a ring), what replacing the
 * DISPATCH_ITEMS by it needs too.
 */
int loom_launch_prepare(struct loom_device *dev, const struct loom_image *img,
			const struct loom_launch *l,
			const struct loom_pkt_run_work *work,
			struct loom_checked_launch *c);
/* Writes @l's command (@c->cmd_size bytes) at @p. */
void loom_launch_write(unsigned char *p, const struct loom_image *img,
		       const struct loom_checked_launch *c,
		       const struct loom_launch *l);
/*
 * The SUBMIT of @l's command, written at @off of arena @a: @ref its BO
 * reference, @in its @l->n_deps in-syncobjs, @out its out-syncobj (or 0).
 */
void loom_launch_submit_args(struct drm_loom_submit *s,
			     const struct loom_launch *l,
			     const struct loom_checked_launch *c,
			     const struct loom_arena *a, uint32_t off,
			     const struct drm_loom_bo_ref *ref,
			     const uint32_t *in, uint32_t out);

/*
 * One part of a spread launch (spread.c): @l's checks on @dev but its
 * dependencies, which the caller gives as @n_in in-syncobjs @in of @dev;
 * with @block, a dispatch of the block [@begin, @end) of dimension 0 of
 * a dense launch, on a device with LOOM_CAP_DENSE_BLOCK, as dispatch
 * occurrence @occurrence (every part of a launch shares one).  @l->deps
 * unused.
 */
int loom_launch_part(struct loom_device *dev, const struct loom_image *img,
		     const struct loom_launch *l, bool block, int64_t begin,
		     int64_t end, const uint32_t *in, unsigned n_in,
		     uint64_t occurrence, struct loom_token **token);

/* The room a command of @size bytes takes in an arena: 8-byte aligned. */
static inline uint32_t loom_cmd_room(uint32_t size)
{
	return (size + 7) & ~7u;
}

/* token.c */
uint64_t loom_now_ns(void);
/* A token with a fresh (unsignalled, fenceless) syncobj. */
int loom_token_new(struct loom_device *dev, struct loom_token **out);
/*
 * A token for an ioctl launch: an idle one of the device's if there is
 * one, syncobj and all, as SUBMIT replaces whatever fence its syncobj held
 * before anyone can wait on it.
 */
int loom_token_for_submit(struct loom_device *dev, struct loom_token **out);
struct loom_token *loom_token_get(struct loom_token *t);
/* Drops a reference; the last one puts the token on the idle list. */
void loom_token_put(struct loom_token *t);
/* Frees the idle tokens and destroys their syncobjs: the device is closing. */
void loom_token_pool_release(struct loom_device *dev);

/* arena.c */
/*
 * Room for @size bytes at *@off in @a, whose BO is at least @min bytes,
 * and for one more entry, so that recording it cannot fail: @wait(@ctx,
 * all) waits until some (all: every) in-flight entry is done and popped.
 * A device arena's lock is held.
 */
int loom_arena_room(struct loom_device *dev, struct loom_arena *a,
		    uint32_t min, uint32_t size, uint32_t *off,
		    int (*wait)(void *ctx, bool all), void *ctx);
/* loom_arena_room() of a device arena, waiting on its entries' tokens. */
int loom_device_arena_room(struct loom_device *dev, struct loom_arena *a,
			   uint32_t size, uint32_t *off);
/*
 * Records the command at @off (after loom_arena_room()); the arena holds
 * a reference to @token.  Returns the entry's sequence number.
 */
uint64_t loom_arena_push(struct loom_arena *a, uint32_t off, uint32_t size,
			 struct loom_token *token);
/* Takes back the newest entry, at @off: its command never reached the kernel. */
void loom_arena_unpush(struct loom_arena *a, uint32_t off);
/* Entry @seq's job is done (a ring's CQE): done entries at the front go. */
void loom_arena_done(struct loom_arena *a, uint64_t seq);
void loom_arena_fini(struct loom_arena *a);

/* ring.c: the ring object */
/*
 * loom_ring_launch() of the items launch @l, without a token, as a job of
 * the domain of dispatch @occurrence (non-zero): the device adapter's
 * items dispatches and work-stack jobs are no dispatches of their own and
 * mint nothing.  With @work, @l's DISPATCH_ITEMS is replaced by @work
 * (header ignored): LOOM_E_NO_DYNAMIC_WORK without LOOM_CAP_RUN_WORK.  @l's
 * items count and VAs are checked as usual (the device adapter passes the
 * stack's).
 */
int loom_ring_launch_for(struct loom_ring *r, const struct loom_image *img,
			 const struct loom_launch *l,
			 const struct loom_pkt_run_work *work,
			 uint64_t occurrence, uint64_t user_data);

/* ring.c: the io_uring transport underneath, SQEs in and CQEs out. */
#include <liburing.h>

struct loom_uring {
	struct loom_device *dev;
	struct io_uring ring;		/* the driver's */
	void *priv;			/* another backend's */
	int fd;
	bool cqe32;			/* CQEs carry the job id */
};

struct loom_cqe {
	uint64_t user_data;
	int res;
	uint64_t job_id;		/* 0 if the driver gave none */
};

int loom_uring_init(struct loom_uring *u, struct loom_device *dev,
		    unsigned entries, bool job_id);
void loom_uring_exit(struct loom_uring *u);
/* One DRM_LOOM_URING_CMD_SUBMIT SQE, submitted to the kernel at once. */
int loom_uring_submit(struct loom_uring *u, const struct drm_loom_submit *s,
		      uint64_t user_data);
/*
 * The next CQE into *@cqe: 0, -EAGAIN if none is there and @wait is
 * false, or an error of the wait.
 */
int loom_uring_next(struct loom_uring *u, bool wait, struct loom_cqe *cqe);

#endif /* LOOM_DEVICE_INTERNAL_H */
