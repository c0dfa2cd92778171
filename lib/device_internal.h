/* SPDX-License-Identifier: MIT */
/*
 * What device.c, bo.c, image.c, launch.c and ring.c share and nobody else
 * sees: the object layouts and the internal helpers between the files.
 */
#ifndef LOOM_DEVICE_INTERNAL_H
#define LOOM_DEVICE_INTERNAL_H

#include <pthread.h>

#include "drm/loom_drm.h"

#include "loom/loom.h"
#include "loom_image.h"

/* One thread's configuration uploaded for one image (the launch cache). */
struct loom_config_entry {
	uint64_t image_id;
	unsigned thread;
	struct loom_bo *bo;
	struct loom_config_entry *next;
};

struct loom_device {
	int fd;
	struct loom_device_info info;
	pthread_mutex_t lock;		/* protects configs */
	struct loom_config_entry *configs;
};

struct loom_bo {
	struct loom_device *dev;
	uint32_t handle;
	uint64_t va;
	uint64_t size;
	void *map;
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
	void *bytes;			/* owns every pointer above but threads/patches */
};

struct loom_ring;

struct loom_token {
	struct loom_device *dev;
	uint32_t syncobj;
	uint64_t job_id;		/* 0 for ring launches */
	uint64_t submit_ns;		/* CLOCK_MONOTONIC at submission */
	bool status_known;
	int status;			/* once status_known */
	struct loom_ring *ring;		/* ring launches: where the CQE lands */
	unsigned slot;
};

/* device.c */
int loom_get_param(int fd, uint32_t param, uint64_t *value);

/* image.c */
const struct loom_image_thread *loom_image_find(const struct loom_image *img,
						const char *name);

/* launch.c: everything a submission needs, prepared but not submitted. */
struct loom_prepared {
	struct loom_bo *cmd;		/* must outlive the kernel's lookup */
	uint32_t cmd_size;
	struct drm_loom_bo_ref refs[1];
	uint32_t in_syncobjs[256];
	unsigned n_in;
};

int loom_launch_prepare(struct loom_device *dev, const struct loom_image *img,
			const char *thread, const struct loom_arg *args,
			unsigned n_args, const int64_t *extents,
			unsigned n_extents, struct loom_token *const *deps,
			unsigned n_deps, unsigned queue,
			struct loom_prepared *p);
/* The batch an items launch patches into its template. */
struct loom_items_batch {
	uint32_t count;
	uint64_t payload_va;
	uint64_t result_va;
	uint64_t counters_va;	/* 0, or where WRITE_COUNTERS puts the job's */
};

/* An items launch's checks, without a batch: the adapter checks up front. */
int loom_launch_items_check(struct loom_device *dev,
			    const struct loom_image *img, const char *thread,
			    const struct loom_arg *args, unsigned n_args,
			    unsigned queue, uint32_t *child_capacity);
int loom_launch_prepare_items(struct loom_device *dev,
			      const struct loom_image *img, const char *thread,
			      const struct loom_arg *args, unsigned n_args,
			      const struct loom_items_batch *items,
			      struct loom_token *const *deps, unsigned n_deps,
			      unsigned queue, struct loom_prepared *p);
/* One items batch through a ring (no token, no deps): the device adapter. */
int loom_ring_launch_batch(struct loom_ring *ring,
			   const struct loom_image *img, const char *thread,
			   const struct loom_arg *args, unsigned n_args,
			   const struct loom_items_batch *items,
			   unsigned queue, uint64_t user_data);
uint64_t loom_now_ns(void);
void loom_launch_fill_submit(const struct loom_prepared *p, unsigned queue,
			     uint32_t out_syncobj, struct drm_loom_submit *s);
void loom_prepared_release(struct loom_prepared *p);
int loom_token_new(struct loom_device *dev, struct loom_token **out);

/*
 * ring.c: a ring token's result is its CQE's res, collected by draining
 * the ring (loom_token_wait/_done call these).
 */
int loom_ring_token_wait(struct loom_token *token, int64_t timeout_ns);
int loom_ring_token_poll(struct loom_token *token);
void loom_ring_token_detach(struct loom_ring *ring, unsigned slot);

#endif /* LOOM_DEVICE_INTERNAL_H */
