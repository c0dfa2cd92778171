/* SPDX-License-Identifier: MIT */
/*
 * DOC: the device runtime (public)
 *
 * libloom: the loom runtime library.  This header is the device runtime;
 * it includes <loom/work.h>, the dynamic-work core, which needs no device.
 *
 * Conventions, for every section:
 *   - functions never set errno and never print; each section says how it
 *     reports failure (dynamic work: a typed enum, 0 is success);
 *   - out parameters are written only on success unless documented;
 *   - opaque objects are created by *_create() and released by
 *     *_destroy() / *_free().
 *
 * Sections (dynamic work and errors are in work.h):
 *   Devices        devices, buffers, program images (the loader; images
 *                  are written by loomc through format/), dense and items launch, tokens, io_uring
 *                  completions, the device adapter for dynamic work
 *                  (lib/device.c, bo.c, image.c, launch.c, ring.c,
 *                  adapter_device.c)
 *   Launch sites   launch refs and logical thread points, spec §2.3
 *                  (lib/point.c)
 */
#ifndef LOOM_LOOM_H
#define LOOM_LOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom_device.h"		/* struct loom_hw_counters: a job's counters */
#include "loom_image.h"		/* enum loom_arg_type, enum loom_domain_kind */
#include "work.h"		/* the dynamic-work core */

#ifdef __cplusplus
extern "C" {
#endif


/* =========================================================================
 * Devices, buffers, program images, dense launch, tokens, io_uring
 * =========================================================================
 *
 * Functions return 0 (or a count) on success and a negative value on
 * failure: -errno (from the driver or libc) or one of the typed LOOM_E_*
 * errors, which lie below -4096 so they are never mistaken for an errno;
 * loom_strerror() names both.  Out parameters are written only on success.
 *
 * Thread safety: a struct loom_device may be shared by threads (its
 * launch plans, idle tokens and command arenas are locked).  Tokens and
 * images are not locked: one thread at a time per object.  A struct loom_ring and the
 * tokens it returned belong to one thread.
 */

/* Errors: enum loom_error and loom_strerror() are in <loom/error.h>. */

/* =========================================================================
 * Devices
 * ========================================================================= */

struct loom_device;

struct loom_device_info {
	char path[32];			/* /dev/accel/accel0, /dev/dri/renderD128 */
	uint32_t uapi_version;		/* DRM_LOOM_PARAM_UAPI_VERSION */
	uint32_t num_cores;		/* hardware queues: launch queue < this */
	uint32_t fabric_width;
	uint32_t fabric_height;
	uint32_t max_rank;		/* from DRM_LOOM_PARAM_HW_LIMITS */
	uint32_t hw_version;
	uint32_t hw_caps;		/* LOOM_CAP_* */
	uint64_t features;		/* DRM_LOOM_FEATURE_* (ACCEL_NODE: an accel node) */
	uint32_t pe_slots;		/* instruction slots per PE (temporal PEs;
					   DRM_LOOM_PARAM_PE_SLOTS, 1 before uapi 7) */
};

/*
 * loom's device nodes are compute accelerator nodes (/dev/accel/accelN) on
 * kernels with the accel subsystem (6.2+) and render nodes
 * (/dev/dri/renderDN) on 6.1.  The numbered opens below scan accel nodes,
 * then render nodes, in minor order; when the environment variable
 * LOOM_DEVICE is set, its comma-separated paths are the devices instead,
 * in that order (LOOM_DEVICE=/dev/accel/accel1 uses only that one).
 */

/* Opens @path; LOOM_E_NO_DEVICE if it is not a loom node. */
int loom_device_open(const char *path, struct loom_device **out);
/* Opens the @n-th loom node (0-based). */
int loom_device_open_nth(unsigned n, struct loom_device **out);
/* Opens the first loom node. */
int loom_device_open_first(struct loom_device **out);
/*
 * Opens every loom node, at most @max; returns how many were opened
 * into @devs (0 if there are none) or a negative error (nothing left open).
 */
int loom_device_open_all(struct loom_device **devs, unsigned max);
/* Closes @dev (NULL is fine); BOs and tokens of it must be freed first. */
void loom_device_close(struct loom_device *dev);
const struct loom_device_info *loom_device_info(const struct loom_device *dev);
int loom_device_fd(const struct loom_device *dev);

/* =========================================================================
 * Buffer objects
 * ========================================================================= */

struct loom_bo;

#define LOOM_BO_DEVICE_READ_ONLY	(1u << 0)	/* jobs may not write it */

/* A zero-filled BO of @size bytes, mapped for the CPU and the device. */
int loom_bo_alloc(struct loom_device *dev, uint64_t size, uint32_t flags,
		  struct loom_bo **out);
void *loom_bo_map(const struct loom_bo *bo);
uint64_t loom_bo_va(const struct loom_bo *bo);	/* device VA */
uint64_t loom_bo_size(const struct loom_bo *bo);
uint32_t loom_bo_handle(const struct loom_bo *bo);
/*
 * Frees @bo (NULL is fine).  A job keeps only the BOs in its submission
 * (libloom's own command and configuration BOs), not those its operands
 * point at: free a data BO after the tokens of the jobs using it.
 */
void loom_bo_free(struct loom_bo *bo);
/*
 * Shares @bo's memory with @other, another loom device (a dma-buf exported
 * by @bo's device and imported by @other's, DRM_LOOM_FEATURE_PRIME): *@out
 * is a BO of @other, mapped for the CPU and at its own VA in @other's
 * address space, whose pages are @bo's; jobs of either device read and
 * write the same memory.  @bo and its shares form one group, at most one
 * BO per device: sharing a share shares the same memory.  The group lets
 * a dynamic-work run on several devices take one capture list
 * (struct loom_work_device_config).  Free the share with loom_bo_free(),
 * in any order with @bo.  -EINVAL for NULL arguments, @other being @bo's
 * device or a LOOM_BO_DEVICE_READ_ONLY BO (the driver does not export
 * it), -EEXIST if the group already has a BO on @other,
 * LOOM_E_NOT_SUPPORTED if a driver lacks PRIME (uapi 9).
 */
int loom_bo_share(struct loom_bo *bo, struct loom_device *other,
		  struct loom_bo **out);

/* =========================================================================
 * Program images (uapi/loom_image.h)
 * ========================================================================= */

struct loom_image;

struct loom_thread_info {
	const char *name;		/* valid while the image lives */
	unsigned index;
	enum loom_domain_kind domain;
	unsigned rank;			/* dense: K; dynamic work: 0 */
	unsigned num_args;
	enum loom_arg_type arg_types[LOOM_IMAGE_MAX_ARGS];
	int work_item_arg;		/* dynamic work: its index; dense: -1 */
	uint32_t child_capacity;	/* dynamic work only */
};

/*
 * Validates and copies an image; LOOM_E_BAD_IMAGE for anything malformed
 * (ELF header, missing/duplicate/out-of-file sections, unknown version,
 * any reference outside its section, bad thread or patch fields);
 * LOOM_E_UNSUPPORTED_PAYLOAD when a dynamic-work thread's work-item
 * payload is of a type the runtime cannot carry (it carries i32, i64
 * and index; spec §7).
 */
int loom_image_load(const void *data, size_t size, struct loom_image **out);
int loom_image_load_file(const char *path, struct loom_image **out);
void loom_image_free(struct loom_image *img);
unsigned loom_image_num_threads(const struct loom_image *img);
void loom_image_fabric(const struct loom_image *img, unsigned *width,
		       unsigned *height);
/*
 * The image's .loom.host section (struct loom_host_header ...), 8-byte
 * aligned and valid while the image lives, its size in *@size; NULL (and
 * 0) when the image has no host program.  Not validated by the loader:
 * loom_host_run() checks it before running anything.
 */
const void *loom_image_host_section(const struct loom_image *img,
				    size_t *size);
/* LOOM_E_NO_THREAD if there is no thread @name. */
int loom_image_thread(const struct loom_image *img, const char *name,
		      struct loom_thread_info *info);
/* -EINVAL if @index >= loom_image_num_threads(). */
int loom_image_thread_at(const struct loom_image *img, unsigned index,
			 struct loom_thread_info *info);

/**
 * struct loom_source_loc - where in a program's source part of its image
 *	comes from
 * @file: the source file, as loomc was given it
 * @line: 1-based line
 * @col: 1-based byte column
 * @name: the SSA value the operation computes, without '%', or "" (a
 *	store, a host instruction)
 *
 * The strings live as long as the image.
 */
struct loom_source_loc {
	const char *file;
	unsigned line;
	unsigned col;
	const char *name;
};

/*
 * Looks up the image's source map (uapi/loom_image.h, .loom.srcmap): the
 * source of one thing of @kind (enum loom_srcmap_kind) into *@loc.
 * LOOM_SRCMAP_THREAD: thread @unit's definition; LOOM_SRCMAP_SLOT: the
 * operation in slot @slot of tile @at (y * width + x) of thread @unit's
 * configuration; LOOM_SRCMAP_PORT: what its port binding @at feeds;
 * LOOM_SRCMAP_ROUTE: the value switch output @out (enum loom_route_out)
 * of slot @slot of tile @at carries; LOOM_SRCMAP_HOST: the operation host
 * instruction @unit was compiled from (struct loom_host_stats.failed_insn
 * names one).  Returns 0, -ENOENT when the image has no source map (loomc
 * --strip) or no entry there, -EINVAL for a NULL @img or @loc.
 */
int loom_image_source_of(const struct loom_image *img,
			 enum loom_srcmap_kind kind, unsigned unit,
			 unsigned at, unsigned slot, unsigned out,
			 struct loom_source_loc *loc);

/*
 * Images are written by loomc; the writer (format/loom_format.h) is shared
 * with libloom's own tests but is not part of libloom's interface.
 */

/* =========================================================================
 * Launch sites and logical thread points (spec §2.3)
 * =========================================================================
 *
 * A struct loom_launch_ref is the spec's RootThreadLaunchRef: which static
 * root launch of a program an instance belongs to.  It is the image (by
 * the digest of its bytes), the launched thread (by its index in the
 * image) and the launch site: for a host program, the host function and
 * the ordinal of the LAUNCH in it; for a program that calls the launch
 * API itself, a name it registers once per image.  Nothing transient
 * enters it (no dispatch occurrence, address, device, queue or time), so
 * the same launch of the same image has the same ref in every run.
 *
 * A struct loom_thread_point is the spec's LogicalThreadPoint: a ref with
 * either a dense coordinate tuple (DensePoint) or a WorkItemId
 * (DynamicPoint, struct loom_item_id).  Points are plain values: compare
 * them with loom_thread_point_equal(), keep them beyond the image (or,
 * for a dynamic point, beyond its domain) as their text.
 *
 * Text forms (loom_launch_ref_format(), loom_thread_point_format()):
 *
 *   ref      <digest>/<thread>/host:<function>#<ordinal>
 *            <digest>/<thread>/api:<name>
 *   dense    <ref>[<c0>,<c1>,...]      ("<ref>[]" for rank 0)
 *   dynamic  <ref>{<item id>}          (loom_item_id_format()'s text)
 *
 * <digest> is 16 lowercase hexadecimal digits, <thread>, <ordinal> and
 * the coordinates are decimal, <function> is the host function's name as
 * the image spells it, e.g. "9e3779b97f4a7c15/0/host:main#2[3,0]" or
 * "9e3779b97f4a7c15/2/api:bfs{7:root/0/1}".
 *
 * These functions need no device and make no system call.  Errors are
 * -EINVAL (a NULL pointer, a ref or point of no known kind) and the typed
 * LOOM_E_* below.
 */

/* Where a root launch is written. */
enum loom_launch_site_kind {
	LOOM_SITE_HOST = 1,	/* a LAUNCH of a host function (.loom.host) */
	LOOM_SITE_API = 2,	/* a site the program registered by name */
};

/* A registered name's longest length, its NUL excluded. */
#define LOOM_SITE_NAME_MAX	63

/**
 * struct loom_launch_ref - RootThreadLaunchRef: one static root launch
 * @image: the image's digest (loom_image_digest())
 * @thread: the launched thread's index in the image
 * @kind: enum loom_launch_site_kind
 * @ordinal: LOOM_SITE_HOST: the LAUNCH's zero-based ordinal among the
 *	LAUNCH instructions of its host function, in the order the image
 *	lists them; LOOM_SITE_API: 0
 * @site: LOOM_SITE_HOST: the host function's name; LOOM_SITE_API: the
 *	registered name.  Points into the image: valid while it lives
 *
 * Two refs are equal when every field is (@site by its text).
 */
struct loom_launch_ref {
	uint64_t image;
	uint32_t thread;
	enum loom_launch_site_kind kind;
	uint32_t ordinal;
	const char *site;
};

/*
 * The digest of @img: the 64-bit FNV-1a hash of the bytes it was loaded
 * from, the same in every process that loads them; 0 for NULL.
 */
uint64_t loom_image_digest(const struct loom_image *img);

/*
 * Registers the launch site @name for launches of thread @thread of @img
 * and writes its ref to *@ref.  Call it once per site, e.g. after loading
 * the image; the image keeps a copy of @name.  @name has 1 to
 * LOOM_SITE_NAME_MAX characters of [A-Za-z0-9_.-].  Returns 0, -EINVAL
 * (a NULL argument), LOOM_E_NO_THREAD, LOOM_E_SITE_NAME, LOOM_E_SITE_EXISTS
 * (@img already has a site @name, for any thread: registering again is an
 * error, not a lookup) or -ENOMEM.
 */
int loom_launch_site_register(struct loom_image *img, const char *thread,
			      const char *name, struct loom_launch_ref *ref);

/*
 * The ref of the @ordinal-th LAUNCH (from 0) of host function @func of
 * @img: the one loom_host_run() reports for it.  Returns 0, -EINVAL (a
 * NULL argument), LOOM_E_BAD_IMAGE (no host program, or one that does
 * not validate), LOOM_E_NO_HOST_FUNC or LOOM_E_NO_LAUNCH_SITE (@func has
 * @ordinal or fewer LAUNCHes).
 */
int loom_launch_site_host(const struct loom_image *img, const char *func,
			  unsigned ordinal, struct loom_launch_ref *ref);

/* Field by field; false if either is NULL. */
bool loom_launch_ref_equal(const struct loom_launch_ref *a,
			   const struct loom_launch_ref *b);

/*
 * Writes @ref's text (see above) like snprintf: at most @size - 1
 * characters and a NUL (nothing if @size is 0), and returns the length of
 * the whole text; -EINVAL (and an empty string if @size allows) for a NULL
 * @ref, a NULL @buf with a non-zero @size, a NULL @site or an unknown
 * @kind; -EOVERFLOW for a text longer than INT_MAX.
 */
int loom_launch_ref_format(const struct loom_launch_ref *ref, char *buf,
			   size_t size);

/* Which variant a struct loom_thread_point is. */
enum loom_point_kind {
	LOOM_POINT_DENSE = 1,	/* DensePoint: a coordinate tuple */
	LOOM_POINT_DYNAMIC = 2,	/* DynamicPoint: a WorkItemId */
};

/**
 * struct loom_thread_point - LogicalThreadPoint: one instance of a launch
 * @kind: enum loom_point_kind
 * @launch: its root launch
 * @rank: dense: the coordinate rank, the launch's number of extents
 *	(0..LOOM_MAX_RANK); dynamic: 0
 * @coords: dense: coords[0 .. @rank), each in [0, its extent); the rest 0
 * @item: dynamic: the item's WorkItemId (valid while its domain's
 *	storage is, see struct loom_item_id)
 *
 * Build one with loom_thread_point_dense() or loom_thread_point_dynamic().
 * The coordinate tuple is never flattened; a dense point and a dynamic one
 * are never equal.
 */
struct loom_thread_point {
	enum loom_point_kind kind;
	struct loom_launch_ref launch;
	unsigned rank;
	int64_t coords[LOOM_MAX_RANK];
	struct loom_item_id item;
};

/*
 * DensePoint(@ref, @coords): the point @coords[0 .. @rank) of the domain
 * [0, extents[0]) x ... x [0, extents[rank - 1]).  @coords and @extents
 * may be NULL when @rank is 0 (the one point of a rank-zero domain).
 * Returns 0, -EINVAL (a NULL argument, a ref of no known kind or with no
 * @site, @rank above LOOM_MAX_RANK) or LOOM_E_POINT_OUTSIDE (a coordinate
 * below 0 or not below its extent: an empty domain has no point).
 */
int loom_thread_point_dense(const struct loom_launch_ref *ref,
			    const int64_t *coords, const int64_t *extents,
			    unsigned rank, struct loom_thread_point *point);

/*
 * DynamicPoint(@ref, @item).  Returns 0 or -EINVAL (a NULL argument, a ref
 * of no known kind or with no @site, an item of occurrence 0: occurrences
 * are never 0).
 */
int loom_thread_point_dynamic(const struct loom_launch_ref *ref,
			      const struct loom_item_id *item,
			      struct loom_thread_point *point);

/*
 * Equal kinds, equal refs and, dense, equal ranks and coordinates or,
 * dynamic, equal items (loom_item_id_equal()); false if either is NULL.
 */
bool loom_thread_point_equal(const struct loom_thread_point *a,
			     const struct loom_thread_point *b);

/*
 * Writes @point's text (see above) like loom_launch_ref_format(), whose
 * errors it shares; also -EINVAL for an unknown @kind or a rank above
 * LOOM_MAX_RANK.
 */
int loom_thread_point_format(const struct loom_thread_point *point, char *buf,
			     size_t size);

/* =========================================================================
 * Dense launch and tokens
 * ========================================================================= */

/* One launch operand; @value holds a VA, or an integer (i32: low 32 bits). */
struct loom_arg {
	enum loom_arg_type type;
	uint64_t value;
};

/*
 * A launch's completion: a DRM syncobj (plus the job id and the launch's
 * dispatch occurrence).  It can be waited on and passed as a dependency
 * of later launches on the same device; free it with loom_token_free().
 */
struct loom_token;

/* What a struct loom_launch runs: a dense dispatch or an items dispatch. */
enum loom_launch_kind {
	LOOM_LAUNCH_DENSE = 0,
	LOOM_LAUNCH_ITEMS = 1,
};

/**
 * struct loom_launch - one launch of one thread, by ioctl or through a ring
 * @kind: LOOM_LAUNCH_DENSE or LOOM_LAUNCH_ITEMS
 * @thread: the thread's name in the image
 * @args: its whole signature (see loom_launch_items() for the work-item
 *	argument of a dynamic-work thread)
 * @n_args: entries of @args
 * @extents: dense: the domain [0, extents[0]) x ..., the thread's rank of them
 * @n_extents: entries of @extents
 * @items: items: how many items the dispatch runs, at least 1
 * @payload_va: items: item i's payload is the u64 at @payload_va + 8 * i
 * @result_va: items: item i's result record is at @result_va + i *
 *	LOOM_ITEM_RESULT_SIZE(child capacity)
 * @counters_va: 0, or a device VA (8-byte aligned) where a
 *	LOOM_PKT_WRITE_COUNTERS after the dispatch writes its struct
 *	loom_hw_counters
 * @deps: tokens (of the same device) the job waits for
 * @n_deps: entries of @deps, at most DRM_LOOM_MAX_IN_SYNCOBJS
 * @queue: the hardware queue (core), below num_cores
 * @site: NULL, or the launch site the program launches from (spec §2.3):
 *	a ref of @img naming @thread, from loom_launch_site_register() (a
 *	name registered with @img) or loom_launch_site_host(); its token
 *	keeps a copy (loom_token_launch())
 */
struct loom_launch {
	enum loom_launch_kind kind;
	const char *thread;
	const struct loom_arg *args;
	unsigned n_args;
	const int64_t *extents;
	unsigned n_extents;
	uint32_t items;
	uint64_t payload_va;
	uint64_t result_va;
	uint64_t counters_va;
	struct loom_token *const *deps;
	unsigned n_deps;
	unsigned queue;
	const struct loom_launch_ref *site;
};

/*
 * Launches @l on @dev by ioctl and returns its token.  Checked before
 * anything is submitted, as loom_launch_dense() and loom_launch_items()
 * list (those two are this with @kind set and no @site), but with
 * LOOM_E_SITE_MISMATCH right after LOOM_E_NO_THREAD for a @site that is
 * not of @img and @l->thread (or, LOOM_SITE_API, not registered with
 * @img); -EINVAL for a NULL @dev, @img, @l or @token, or an unknown
 * @kind.  A launch that passed its checks is
 * one concrete dispatch: libloom mints its occurrence (as for a
 * dynamic-work domain, see loom_work_domain_create(); the token carries
 * it, loom_token_occurrence()), or fails with
 * LOOM_WORK_OCCURRENCES_EXHAUSTED before submitting anything.  What depends only on the device and
 * the thread is checked once per (device, image, thread) and remembered;
 * the command buffer goes into the device's command arena for @queue, not
 * a BO of its own.
 */
int loom_launch(struct loom_device *dev, const struct loom_image *img,
		const struct loom_launch *l, struct loom_token **token);

/* The struct loom_launch of loom_launch_dense()'s arguments. */
static inline struct loom_launch
loom_launch_dense_of(const char *thread, const struct loom_arg *args,
		     unsigned n_args, const int64_t *extents,
		     unsigned n_extents, struct loom_token *const *deps,
		     unsigned n_deps, unsigned queue)
{
	return (struct loom_launch){
		.kind = LOOM_LAUNCH_DENSE, .thread = thread,
		.args = args, .n_args = n_args,
		.extents = extents, .n_extents = n_extents,
		.deps = deps, .n_deps = n_deps, .queue = queue,
	};
}

/*
 * Launches dense thread @thread of @img over [0, extents[0]) x ... on core
 * @queue, after every token of @deps.  Checked before anything is
 * submitted, in this order: LOOM_E_NO_THREAD, LOOM_E_DOMAIN_KIND,
 * LOOM_E_EXTENT_COUNT, LOOM_E_NEGATIVE_EXTENT, LOOM_E_ARG_COUNT,
 * LOOM_E_ARG_TYPE, LOOM_E_BAD_VIEW and LOOM_E_VIEW_OUTSIDE (a memref
 * operand's view, as the image describes it, leaves its BO:
 * Documentation/runtime.rst "Memref views"), LOOM_E_FABRIC_MISMATCH,
 * LOOM_E_RANK_LIMIT, LOOM_E_NOT_SUPPORTED (no SUBMIT feature, a thread
 * using memref.atomic_rmw on a device without LOOM_CAP_ATOMIC, or one whose
 * configuration has link channels, LOOM_CONFIG_VERSION_CHANNELS, on a
 * device without LOOM_CAP_LINK_CHANNELS), then -EINVAL
 * (queue, too many deps) and LOOM_E_FOREIGN_TOKEN; then its occurrence
 * is minted (LOOM_WORK_OCCURRENCES_EXHAUSTED).  Rank 0 is one instance;
 * a zero extent is an empty domain, still a dispatch with an occurrence:
 * nothing runs, and the token still completes only after @deps.
 */
static inline int
loom_launch_dense(struct loom_device *dev, const struct loom_image *img,
		  const char *thread, const struct loom_arg *args,
		  unsigned n_args, const int64_t *extents, unsigned n_extents,
		  struct loom_token *const *deps, unsigned n_deps,
		  unsigned queue, struct loom_token **token)
{
	struct loom_launch l = loom_launch_dense_of(thread, args, n_args,
						    extents, n_extents, deps,
						    n_deps, queue);

	return loom_launch(dev, img, &l, token);
}

/* The struct loom_launch of loom_launch_items()'s arguments. */
static inline struct loom_launch
loom_launch_items_of(const char *thread, const struct loom_arg *args,
		     unsigned n_args, uint32_t count, uint64_t payload_va,
		     uint64_t result_va, struct loom_token *const *deps,
		     unsigned n_deps, unsigned queue)
{
	return (struct loom_launch){
		.kind = LOOM_LAUNCH_ITEMS, .thread = thread,
		.args = args, .n_args = n_args,
		.items = count, .payload_va = payload_va, .result_va = result_va,
		.deps = deps, .n_deps = n_deps, .queue = queue,
	};
}

/*
 * One items dispatch of dynamic-work thread @thread (LOOM_PKT_DISPATCH_ITEMS):
 * runs @count items, pipelined, on core @queue, item i's payload
 * read from the u64 at @payload_va + 8 * i, its result record (struct
 * loom_item_result: child_count, then the children's payloads in spawn
 * order) written at @result_va + i * LOOM_ITEM_RESULT_SIZE(capacity),
 * capacity being the thread's child_capacity.  @args are the thread's
 * whole signature: the work-item argument's entry must have its type, its
 * value is ignored (each item's payload feeds the payload port).  An item
 * spawning more than the capacity fails the job with -ENOSPC.  Checked
 * before anything is submitted, in this order: LOOM_E_NO_THREAD,
 * LOOM_E_DOMAIN_KIND, LOOM_E_ARG_COUNT, LOOM_E_ARG_TYPE, LOOM_E_BAD_VIEW,
 * LOOM_E_VIEW_OUTSIDE, LOOM_E_FABRIC_MISMATCH, LOOM_E_NOT_SUPPORTED (no
 * SUBMIT feature, or link channels without LOOM_CAP_LINK_CHANNELS),
 * LOOM_E_NO_DYNAMIC_WORK (no LOOM_CAP_ITEMS: the device cannot run
 * dynamic work), -EINVAL (queue, deps, @count 0, a VA not 8-byte
 * aligned), LOOM_E_FOREIGN_TOKEN, then LOOM_WORK_OCCURRENCES_EXHAUSTED
 * (one standalone items dispatch is one dispatch, with an occurrence of
 * its own).  The payload and result BOs must outlive the job.
 */
static inline int
loom_launch_items(struct loom_device *dev, const struct loom_image *img,
		  const char *thread, const struct loom_arg *args,
		  unsigned n_args, uint32_t count, uint64_t payload_va,
		  uint64_t result_va, struct loom_token *const *deps,
		  unsigned n_deps, unsigned queue, struct loom_token **token)
{
	struct loom_launch l = loom_launch_items_of(thread, args, n_args, count,
						    payload_va, result_va, deps,
						    n_deps, queue);

	return loom_launch(dev, img, &l, token);
}

/*
 * Waits for @token; @timeout_ns relative, negative = forever.  Returns 0,
 * the job's error (negative errno, e.g. -EFAULT for an MMU fault),
 * -ETIMEDOUT, or LOOM_E_JOB_EXPIRED.
 */
int loom_token_wait(struct loom_token *token, int64_t timeout_ns);
/*
 * Waits for all @n tokens (any devices) within one @timeout_ns; returns 0
 * or the first failing token's error, in array order.
 */
int loom_token_wait_all(struct loom_token *const *tokens, unsigned n,
			int64_t timeout_ns);
/* 1 if done, 0 if not yet; never blocks (negative on error). */
int loom_token_done(struct loom_token *token);
/*
 * The driver's job id; for a ring launch, 0 until its completion is reaped
 * (and always 0 where the driver lacks DRM_LOOM_FEATURE_URING_JOB_ID).
 */
uint64_t loom_token_job_id(const struct loom_token *token);

/*
 * The dispatch occurrence of the launch the token completes (spec §2.3):
 * minted by libloom, non-zero, larger than any minted before in the
 * process, shared with no other launch or domain.  A dynamic-work run's
 * collective token carries its domain's (loom_work_sync_result.occurrence).
 */
uint64_t loom_token_occurrence(const struct loom_token *token);

/*
 * The launch ref the launch was made with (struct loom_launch.site, which
 * loom_host_run() sets for its launches) into *@ref: 0, or -ENOENT for a
 * launch made without one, -EINVAL for NULL.  @ref->site is valid while
 * the launch's image lives.
 */
int loom_token_launch(const struct loom_token *token,
		      struct loom_launch_ref *ref);

/*
 * What a finished job did (JOB_INFO); -EBUSY while it runs (a ring
 * launch's: until its completion is reaped); LOOM_E_NOT_SUPPORTED for a
 * ring launch where the driver gives no job id through io_uring.
 */
int loom_token_counters(struct loom_token *token,
			struct loom_hw_counters *counters);
/*
 * When a finished job was submitted and when its fence signalled (the
 * kernel's timestamp), both CLOCK_MONOTONIC nanoseconds; -EBUSY while it
 * runs.  A queue runs its jobs in order, so a job started at the later of
 * its submission and the previous job's end on the same queue.
 */
int loom_token_times(struct loom_token *token, uint64_t *submit_ns,
		     uint64_t *done_ns);

/**
 * struct loom_job_record - one finished job, as a run's job observer sees it
 * @thread: the thread it launched
 * @device: index of its device among the run's devices
 * @queue: the hardware queue (core) it ran on
 * @worker: for an items dispatch, the scheduler worker that ran it; else
 *	LOOM_SCHED_NO_WORKER
 * @occurrence: the dispatch occurrence it belongs to: a dense launch's
 *	own (its token's), a device run's job its domain's
 * @items: items in an items dispatch; 0 for a dense launch
 * @submit_ns: CLOCK_MONOTONIC when the library submitted it
 * @done_ns: when it completed: the fence's timestamp for a dense launch,
 *	when its completion was reaped for an items dispatch
 * @error: 0, or the job's error (its @counters are then zero)
 * @counters: what the device counted for it
 */
struct loom_job_record {
	const char *thread;
	unsigned device;
	unsigned queue;
	uint32_t worker;
	uint64_t occurrence;
	uint32_t items;
	uint64_t submit_ns;
	uint64_t done_ns;
	int error;
	struct loom_hw_counters counters;
};

/* Watches finished jobs; may be called from several threads at once. */
typedef void (*loom_job_observe_fn)(void *ctx,
				    const struct loom_job_record *job);
void loom_token_free(struct loom_token *token);

/* =========================================================================
 * Spread launches: one dense launch over several cores and devices (B_thread)
 * ========================================================================= */

/* Devices one spread launch may use. */
#define LOOM_SPREAD_MAX_DEVICES	8

/**
 * struct loom_part - where a part of a spread launch runs, and what
 * @device: index of its device in the launch's device array
 * @queue: the core (hardware queue) of that device
 * @begin: the first coordinate 0 of its block
 * @end: one past the last (a domain of rank 0: 0 and 1)
 */
struct loom_part {
	unsigned device;
	unsigned queue;
	int64_t begin;
	int64_t end;
};

/*
 * B_thread, libloom's placement of a dense domain on the cores of @devs
 * (spec §5): the P cores, device by device and core by core, are parts
 * 0..P-1, and part p runs the instances whose coordinate 0 lies in
 * [floor(p * e0 / P), floor((p + 1) * e0 / P)).  A function of @extents
 * and of how many cores each device has, nothing else: the same on every
 * execution.  Rank 0 and empty domains are one part, device 0's core 0.
 * Writes the part that runs @point (@rank coordinates) into *@out;
 * LOOM_E_NEGATIVE_EXTENT, or -EINVAL for a point outside the domain, a
 * NULL or empty device array (at most LOOM_SPREAD_MAX_DEVICES).
 */
int loom_launch_placement(struct loom_device *const *devs, unsigned n_devs,
			  const int64_t *extents, unsigned rank,
			  const int64_t *point, struct loom_part *out);

/*
 * One dense launch @l over every core of the @n_devs devices @devs, each
 * core running its part of the domain as loom_launch_placement() places
 * it (@l->queue is not used); parts with an empty block submit nothing.
 * Every check of loom_launch_dense() is made on every device before
 * anything is submitted; splitting needs LOOM_CAP_DENSE_BLOCK on each
 * (LOOM_E_NOT_SUPPORTED); @l->counters_va must be 0 (-EINVAL: read the
 * token's counters).  @l->args go to every part unchanged, so a memref
 * argument must be valid on every device: with more than one device, use
 * scalars and buffers each device can reach at the same VA.  @l->deps may
 * be tokens of any of @devs; every part waits for all of them.
 *
 * *@token is one collective token, of devs[0]: it completes when every
 * part has, with the first failing part's error (in part order); it can
 * be waited on and passed as a dependency like any token.
 * loom_token_counters() gives the parts' counters added up, but @cycles,
 * the longest part's (the launch's makespan in device cycles);
 * loom_token_times() the first submission and the last completion;
 * loom_token_job_id() 0 (no one job): loom_token_part() names the parts.
 * If a submission fails after some parts went, those are waited for and
 * the error returned.
 */
int loom_launch_spread(struct loom_device *const *devs, unsigned n_devs,
		       const struct loom_image *img,
		       const struct loom_launch *l, struct loom_token **token);

/* How many jobs a token stands for: a spread launch's parts, else 1. */
unsigned loom_token_num_parts(const struct loom_token *token);
/*
 * Part @i's own token (borrowed: valid while @token is), in part order;
 * for an ordinary token, @token itself for i = 0.  NULL past the end.
 */
struct loom_token *loom_token_part(struct loom_token *token, unsigned i);

/* =========================================================================
 * io_uring completions
 * ========================================================================= */

struct loom_ring;

struct loom_completion {
	uint64_t user_data;
	int res;		/* 0, or the job's (or the submit's) -errno */
};

/* A ring (IORING_SETUP_SQE128) for @dev; LOOM_E_NOT_SUPPORTED without
 * DRM_LOOM_FEATURE_URING_CMD. */
int loom_ring_create(struct loom_device *dev, unsigned entries,
		     struct loom_ring **out);
/* Waits for every launch still in flight, then frees the ring. */
void loom_ring_destroy(struct loom_ring *ring);
/*
 * loom_launch() through the ring: same checks, a minted occurrence (the
 * token's), then one DRM_LOOM_URING_CMD_SUBMIT whose completion carries
 * @user_data; @token may be NULL.  The command buffer goes into the ring's own command arena,
 * reused as the ring's completions arrive.
 */
int loom_ring_launch(struct loom_ring *ring, const struct loom_image *img,
		     const struct loom_launch *l, uint64_t user_data,
		     struct loom_token **token);

/*
 * loom_launch_dense() through the ring: same checks, then one
 * DRM_LOOM_URING_CMD_SUBMIT whose completion carries @user_data.  @token
 * may be NULL; a token returned is a syncobj like any other: it serves as
 * a dependency and can be waited on without reaping the ring.
 */
static inline int
loom_ring_launch_dense(struct loom_ring *ring, const struct loom_image *img,
		       const char *thread, const struct loom_arg *args,
		       unsigned n_args, const int64_t *extents,
		       unsigned n_extents, struct loom_token *const *deps,
		       unsigned n_deps, unsigned queue, uint64_t user_data,
		       struct loom_token **token)
{
	struct loom_launch l = loom_launch_dense_of(thread, args, n_args,
						    extents, n_extents, deps,
						    n_deps, queue);

	return loom_ring_launch(ring, img, &l, user_data, token);
}

/* loom_launch_items() through the ring, like loom_ring_launch_dense(). */
static inline int
loom_ring_launch_items(struct loom_ring *ring, const struct loom_image *img,
		       const char *thread, const struct loom_arg *args,
		       unsigned n_args, uint32_t count, uint64_t payload_va,
		       uint64_t result_va, struct loom_token *const *deps,
		       unsigned n_deps, unsigned queue, uint64_t user_data,
		       struct loom_token **token)
{
	struct loom_launch l = loom_launch_items_of(thread, args, n_args, count,
						    payload_va, result_va, deps,
						    n_deps, queue);

	return loom_ring_launch(ring, img, &l, user_data, token);
}

/* Launches whose completion has not been reaped yet. */
unsigned loom_ring_in_flight(const struct loom_ring *ring);
/*
 * Reaps up to @max completions into @out; with @wait, blocks until at
 * least one is available (if any is in flight).  Returns the count.
 */
int loom_ring_reap(struct loom_ring *ring, struct loom_completion *out,
		   unsigned max, bool wait);

/* =========================================================================
 * The device adapter: a dynamic-work thread on the device
 * =========================================================================
 *
 * Drains one DynamicWork domain (see "Dynamic work" above) through the
 * bounded scheduler, running the items on devices: worker w is bound to
 * device w % n_devices and core (w / n_devices) % num_cores of it, and owns
 * one io_uring (struct loom_ring) and its own payload and result BOs of
 * max_batch items.  Each worker runs on its own thread (worker 0 on the
 * caller's): it acquires a batch of ready items (loom_sched_acquire_batch),
 * writes their payloads, launches one items dispatch through its ring,
 * reaps the CQE, then for each item in batch order publishes the children
 * the device reported (one group, in spawn = ordinal order) and completes
 * it.  Identities are the scheduler's, so a run is comparable item for item
 * with loom_work_sync_run() over the same tree.
 */

/* struct loom_work_device_config.flags */
/* (bit 0, the trace, is @sched.flags' LOOM_SCHED_NO_TRACE) */
#define LOOM_WORK_DEVICE_TOKEN		(1u << 1)	/* return a collective token */
/* items dispatches only, even on a device with LOOM_CAP_RUN_WORK */
#define LOOM_WORK_DEVICE_ITEMS_ONLY	(1u << 2)

/*
 * Watches one item whose dispatch succeeded, from its worker's thread,
 * before its children are published: @children[0 .. @count) are the
 * payloads the device reported, in spawn order.  Optional; it must not
 * call back into the run.
 */
typedef void (*loom_work_device_observe_fn)(void *ctx,
					    const struct loom_sched_item *item,
					    const uint64_t *children,
					    size_t count);

/**
 * struct loom_work_device_config - one device run
 * @sched: the scheduler's shape: workers (at least 1), deque capacity
 *	(at least 1), max_batch (items per dispatch -- on a device's work
 *	stack: initial items per job, 8192 at most there -- at most; 0 means
 *	1) and flags (LOOM_SCHED_NO_TRACE: record no replay trace);
 *	@sched.replay_occurrence is 0 (the run's occurrence is minted)
 *	unless it replays a recorded one
 * @root_payload: the launch's one root payload
 * @image: the program image
 * @thread: a dynamic-work thread of @image
 * @args: its whole signature, as for loom_launch_items() (the work-item
 *	entry's value is ignored): the launch's one capture list, memref
 *	VAs of @devices[0].  On another device a memref capture becomes the
 *	same offset in that device's BO of the share group (loom_bo_share())
 *	of the BO holding it: every item of the run, on any device, reads
 *	and writes the same memory.  A memref in no BO shared with a device
 *	of the run is LOOM_E_CAPTURE_NOT_SHARED before anything runs.
 * @n_args: entries of @args
 * @device_args: deprecated: NULL, or one argument array per device (n_args
 *	entries each) used instead of @args.  They must be one capture list
 *	seen from each device: @device_args[0] translated as @args is
 *	(LOOM_E_CAPTURE_NOT_SHARED), and every other device's equal to the
 *	translation (LOOM_E_CAPTURE_MISMATCH otherwise)
 * @devices: the devices, at least one; every one must fit the image
 * @n_devices: entries of @devices
 * @flags: LOOM_WORK_DEVICE_*: without LOOM_WORK_DEVICE_ITEMS_ONLY, a device
 *	with LOOM_CAP_RUN_WORK runs whole subtrees per job on its own work
 *	stack (LOOM_PKT_RUN_WORK); the same ids, payloads, counts and trace
 *	events as items dispatches
 * @observe: NULL, or called once per item that ran successfully
 * @observe_ctx: its first argument
 * @observe_job: NULL, or called once per job (items dispatch or work
 *	stack), from the thread of the worker that ran it, after its
 *	completion was reaped
 * @observe_job_ctx: its first argument
 * @site: NULL, or the launch's site (spec §2.3), as struct
 *	loom_launch.site: checked with the devices (LOOM_E_SITE_MISMATCH),
 *	kept by @result->launch and the collective token
 */
struct loom_work_device_config {
	struct loom_sched_config sched;
	uint64_t root_payload;
	const struct loom_image *image;
	const char *thread;
	const struct loom_arg *args;
	unsigned n_args;
	const struct loom_arg *const *device_args;
	struct loom_device *const *devices;
	unsigned n_devices;
	uint32_t flags;
	loom_work_device_observe_fn observe;
	void *observe_ctx;
	loom_job_observe_fn observe_job;
	void *observe_job_ctx;
	const struct loom_launch_ref *site;
};

/**
 * struct loom_work_device_result - what a device run did
 * @work: as for the synchronous adapter; items_run counts items that
 *	were in a dispatch whose CQE was reaped (on a work stack: that the
 *	device reports it ran), @work.failed_item names the failing item
 * @jobs_submitted: jobs submitted (items dispatches or work stack runs)
 * @counters: the device's counters, summed over the jobs that succeeded
 *	(each job ends with a LOOM_PKT_WRITE_COUNTERS)
 * @device_error: with LOOM_WORK_DEVICE_ERROR, the launch's or job's error
 *	(a LOOM_E_* or negative errno; -ENOSPC: the item spawned more than
 *	the thread's child capacity); else 0
 * @token: with LOOM_WORK_DEVICE_TOKEN and a run that succeeded, a token of
 *	devices[0] (a syncobj the library signals once the domain has
 *	completed): wait on it, or pass it as a dependency of later launches
 *	on that device.  loom_work_device_result_free() frees it unless the
 *	caller took it (set it to NULL and free it with loom_token_free()).
 * @launch: @config->site's ref (kind 0 without one): with @work.trace,
 *	each event's logical thread point is DynamicPoint(@launch, its
 *	item) (loom_thread_point_dynamic())
 */
struct loom_work_device_result {
	struct loom_work_sync_result work;
	uint64_t jobs_submitted;
	struct loom_hw_counters counters;
	int device_error;
	struct loom_token *token;
	struct loom_launch_ref launch;
};

/*
 * Admits @config->root_payload and drains the whole domain on the devices.
 * Returns:
 *   LOOM_OK: every item ran on a device and completed;
 *   LOOM_WORK_DEVICE_ERROR with @result->work.failed: a launch or a job
 *	failed (@result->device_error says how); the failing item is the
 *	first of its dispatch whose result record the device did not write,
 *	or the one the device's work stack failed on (-EIO: a work stack
 *	whose records do not account for every child exactly once);
 *   LOOM_WORK_QUEUE_CAPACITY, LOOM_WORK_CHILD_OVERFLOW, or any error
 *	publication answered: as for loom_work_sync_run();
 *	after each of these the domain was cancelled and drained to
 *	completion: every item is retired, none hangs;
 *   LOOM_WORK_DEVICE_ERROR without @result->work.failed: the launch does
 *	not fit a device (@result->device_error: LOOM_E_NO_THREAD,
 *	LOOM_E_DOMAIN_KIND, LOOM_E_ARG_COUNT, LOOM_E_ARG_TYPE,
 *	LOOM_E_FABRIC_MISMATCH, LOOM_E_NOT_SUPPORTED, LOOM_E_NO_DYNAMIC_WORK,
 *	...) or a ring or BO
 *	could not be set up: nothing ran;
 *   LOOM_WORK_PAYLOAD_WIDTH with @result->work.failed: the device reported
 *	a child that is not a value of the thread's payload type (an i32
 *	thread's children are int32 sign-extended); the domain was cancelled
 *	and drained likewise, none of the item's children was published;
 *   LOOM_WORK_PAYLOAD_WIDTH without @result->work.failed: the root payload
 *	is not a value of the thread's payload type; nothing ran;
 *   LOOM_WORK_INVALID_ARGUMENT: nothing ran and @result is untouched;
 *   LOOM_WORK_OUT_OF_MEMORY without @result->work.failed: as for
 *	loom_work_sync_run();
 *   LOOM_WORK_OCCURRENCES_EXHAUSTED: no occurrence was left to mint;
 *	nothing ran.
 * On every return but LOOM_WORK_INVALID_ARGUMENT, @result is filled and
 * must be released with loom_work_device_result_free().
 */
enum loom_error loom_work_device_run(const struct loom_work_device_config *config,
					  struct loom_work_device_result *result);

void loom_work_device_result_free(struct loom_work_device_result *result);

/* =========================================================================
 * Host programs (.loom.host, Documentation/compiler.rst)
 * =========================================================================
 *
 * loom_host_run() interprets an image's host function on one device:
 * ALLOC takes a zeroed BO, LOAD and STORE go through its CPU mapping (after
 * every launch made so far has completed, so host accesses see launches in
 * program order, as in the reference interpreter), a dense LAUNCH is a
 * loom_launch_dense() on queue 0 after the tokens of its wait list, a
 * dynamic-work LAUNCH starts draining its domain with loom_work_device_run()
 * on a thread of its own (after its wait list) and the program goes on;
 * WAIT joins a launch: its token, or its domain (whose collective token
 * then orders later launches like a dense one's).  A dense launch that
 * waits for a domain still draining is submitted once that domain is
 * done, since the device can wait only for a fence.  A dynamic-work
 * launch's error is reported where it is joined, as a dense launch's is.
 * The library prints nothing itself: PRINT goes to @print or @out.
 */

/* Receives one PRINT: @value of enum loom_arg_type @type. */
typedef void (*loom_host_print_fn)(void *ctx, enum loom_arg_type type,
				   int64_t value);

/**
 * struct loom_host_options - how to run a host program (NULL: defaults)
 * @func: the host function; NULL means "main"
 * @print: NULL, or called for each PRINT (takes precedence over @out)
 * @print_ctx: its first argument
 * @out: NULL (PRINT is silent), or where PRINT writes "<value>\n": an
 *	integer in decimal, an f32 as printf's "%.9g" (which reads back to
 *	the same bits; a NaN is "nan" or "-nan" by its sign bit)
 * @sched: each dynamic-work launch's scheduler: workers (0 means 1),
 *	deque_capacity (0 means 65536), max_batch (items per dispatch; 0
 *	means 64); the trace is recorded only for @observe_domain;
 *	@sched.replay_occurrence must be 0: each launch's occurrence is
 *	minted
 * @timeout_ns: for each token wait; 0 or negative means forever
 * @observe_job: NULL, or called for every job once it is known to have
 *	finished (dense launches: when the run first waits for them;
 *	items dispatches: as loom_work_device_config.observe_job, so from
 *	a domain's threads while the program runs: it must be thread-safe)
 * @observe_domain: NULL, or called, on the program's thread, when a
 *	dynamic-work launch is joined, with its thread and result; the
 *	result then carries the scheduler's replay trace
 *	(@result->work.trace), valid during the call
 * @observe_ctx: the first argument of all three
 * @observe_launch: NULL, or called once for each launch the run made,
 *	on the program's thread, with its launch ref (LOOM_SITE_HOST: @func
 *	and the LAUNCH's ordinal, as loom_launch_site_host() gives it) and
 *	its dispatch occurrence: a dense launch's once it is submitted, a
 *	dynamic-work launch's when it is joined (before @observe_domain
 *	sees it).  Not called for a launch that failed before it had an
 *	occurrence.  @ref is valid during the call, its @site while the
 *	image lives
 */
struct loom_host_options {
	const char *func;
	loom_host_print_fn print;
	void *print_ctx;
	FILE *out;
	struct loom_sched_config sched;
	int64_t timeout_ns;
	loom_job_observe_fn observe_job;
	void (*observe_domain)(void *ctx, const char *thread,
			       const struct loom_work_device_result *result);
	void *observe_ctx;
	void (*observe_launch)(void *ctx, const struct loom_launch_ref *ref,
			       uint64_t occurrence);
};

/**
 * struct loom_host_stats - what a run did (filled on success and failure)
 * @jobs: jobs submitted (dense launches plus items dispatches)
 * @cycles: device cycles, summed over every job
 * @firings: PE firings, likewise
 * @items: dynamic-work items run
 * @steals: dynamic-work acquisitions that stole
 * @insns: host instructions executed
 * @failed_insn: index (in the host section) of the instruction that
 *	failed, or -1
 * @check_lhs: for LOOM_E_CHECK_FAILED, the two values compared
 * @check_rhs: likewise
 * @failed_launch: when the run failed because a launch did (its job, its
 *	dynamic-work run): the LAUNCH instruction that made it, else -1
 * @failed_thread: that launch's thread (index in the image), or -1
 * @job_status: the failed job's enum loom_hw_status as the device
 *	reported it (JOB_INFO), LOOM_STATUS_OK when not known (a
 *	dynamic-work launch's job, a wait that timed out)
 * @job_detail: its detail (an MMU fault's enum loom_mmu_fault, ...)
 * @fault_va: an MMU fault's device VA
 * @failed_item: a dynamic-work launch's failing item
 *	(loom_item_id_format()'s text, e.g. "3:root/0/2"), else ""
 * @waiting_tiles: from the device's state dump of the failed job, the
 *	tiles (bit y * width + x) whose PE held tokens at its inputs
 * @blocked_tiles: and those whose PE output held tokens it could not send
 *
 * loom_host_report() turns the failure fields into a diagnostic.
 */
struct loom_host_stats {
	uint64_t jobs;
	uint64_t cycles;
	uint64_t firings;
	uint64_t items;
	uint64_t steals;
	uint64_t insns;
	int64_t failed_insn;
	int64_t check_lhs, check_rhs;
	int64_t failed_launch;
	int32_t failed_thread;
	uint32_t job_status;
	uint32_t job_detail;
	uint64_t fault_va;
	char failed_item[64];
	uint64_t waiting_tiles[LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM / 64];
	uint64_t blocked_tiles[LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM / 64];
};

/*
 * Runs @opt->func of @img on @dev, and waits for everything it launched.
 * Returns 0, or the first error: LOOM_E_BAD_IMAGE (no host program, or one
 * that does not validate; nothing ran), LOOM_E_NO_HOST_FUNC,
 * LOOM_E_CHECK_FAILED (a loom.check did not hold), LOOM_E_HOST_FAULT,
 * LOOM_E_WORK_FAILED, LOOM_WORK_OCCURRENCES_EXHAUSTED, -ENOMEM, or any
 * error of the launches, waits and BO allocations it made (a dynamic-work
 * launch on a device without LOOM_CAP_ITEMS: LOOM_E_NO_DYNAMIC_WORK);
 * -EINVAL (and nothing ran) for a NULL @dev or @img or a non-zero
 * @opt->sched.replay_occurrence.  @stats may be NULL.
 */
int loom_host_run(struct loom_device *dev, const struct loom_image *img,
		  const struct loom_host_options *opt,
		  struct loom_host_stats *stats);

/*
 * The failure @err of loom_host_run() on @img, with its @stats, as a
 * compiler diagnostic in @buf: "FILE:LINE:COL: error: MESSAGE" at the
 * source of the host instruction that failed (the loom.check that did not
 * hold; the launch whose job failed), then a "FILE:LINE:COL: note: ..."
 * line for each operation the device's state dump shows waiting for
 * inputs or blocked on its output, or for each memory operation of a
 * thread whose job took an MMU fault.  MESSAGE names what happened: a
 * loom.check's two values, "work item 3:root/0/2 of @t spawned more
 * children than its capacity (4)", a fabric deadlock, a hang or the
 * runtime cap, the faulting address; other errors loom_strerror()'s
 * sentence.  Without a source map (loomc --strip) the error line names
 * the host instruction instead and there are no notes.  Every line ends
 * in '\n'.  Like snprintf: at most @size - 1 characters and a NUL, and
 * returns the length of the whole text; -EINVAL for a NULL @img or
 * @stats, or @err 0.
 */
int loom_host_report(const struct loom_image *img, int err,
		     const struct loom_host_stats *stats, char *buf,
		     size_t size);

/* =========================================================================
 * Source induction variables (spec §3)
 * ========================================================================= */

/* lower + coord * step, wrapping modulo 2^64 like the device. */
static inline int64_t loom_source_iv(int64_t lower, int64_t coord, int64_t step)
{
	return (int64_t)((uint64_t)lower + (uint64_t)coord * (uint64_t)step);
}

#ifdef __cplusplus
}
#endif

#endif /* LOOM_LOOM_H */
