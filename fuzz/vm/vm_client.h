/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What loom_fuzz and loom_faults share: a seeded random source, the clock,
 * and a client file with a command BO, a configuration BO (vector add at
 * 0, the counter log at 4096) and a data BO, with helpers that write a
 * vector add or a counter job into a slot of the command BO.
 */
#ifndef LOOM_VM_CLIENT_H
#define LOOM_VM_CLIENT_H

#include "loom_selftest.h"
#include "configs.h"

#define CLIENT_CMD_BO	65536
#define CLIENT_CFG_BO	8192
#define CLIENT_DATA_BO	65536
#define CLIENT_SLOT	128	/* bytes per command buffer in the cmd BO */

struct rng {
	uint64_t s;
};

static inline uint64_t rnd(struct rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static inline uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static inline int chance(struct rng *r, unsigned percent)
{
	return below(r, 100) < percent;
}

static inline double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Finds up to @max loom devices and their queue counts; the number found,
 * or -1 if one cannot be asked.
 */
static inline int vm_find_devices(struct loom_node *nodes, unsigned *cores, int max)
{
	int n = loom_find_nodes(nodes, max);

	for (int d = 0; d < n; d++) {
		int fd = open(nodes[d].path, O_RDWR | O_CLOEXEC);
		uint64_t v = 0;

		if (fd < 0 || _test_get_param(fd, DRM_LOOM_PARAM_NUM_CORES, 0, &v))
			return -1;
		cores[d] = v;
		close(fd);
	}
	return n;
}

struct vm_client {
	int fd;
	struct loom_test_bo cmd, cfg, data;
	uint32_t vadd_size, counter_size;
};

static inline void vm_unmap(struct loom_test_bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->size);
	bo->map = NULL;
}

/* Opens @path with the three BOs mapped; 0 or -errno. */
static inline int vm_client_open(struct vm_client *c, const char *path)
{
	c->fd = open(path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	c->cmd = loom_bo(c->fd, CLIENT_CMD_BO);
	c->cfg = loom_bo(c->fd, CLIENT_CFG_BO);
	c->data = loom_bo(c->fd, CLIENT_DATA_BO);
	if (!c->cmd.map || !c->cfg.map || !c->data.map)
		return -ENOMEM;
	c->vadd_size = loom_test_config_vector_add(c->cfg.map, 4096, 4, 4);
	c->counter_size = loom_test_config_counter((char *)c->cfg.map + 4096, 4096, 4, 4);
	return 0;
}

static inline void vm_client_close(struct vm_client *c)
{
	vm_unmap(&c->cmd);
	vm_unmap(&c->cfg);
	vm_unmap(&c->data);
	close(c->fd);
	c->fd = -1;
}

static inline uint32_t vm_put_cmd(struct vm_client *c, unsigned slot, const struct loom_cmd *cmd)
{
	memcpy((char *)c->cmd.map + slot * CLIENT_SLOT, cmd->words, cmd->len * 4);
	return cmd->len * 4;
}

/* c[i] = a[i] + b[i] for i < @n, with a, b, c at data + 0, 8K, 16K. */
static inline uint32_t vm_vadd_cmd(struct vm_client *c, unsigned slot, int64_t n)
{
	uint32_t words[32];
	struct loom_cmd cmd = { words, 0 };
	uint64_t va = c->data.va;

	cmd_load_config(&cmd, c->cfg.va, c->vadd_size);
	cmd_operands(&cmd, 3, (uint64_t[]){ va, va + 8192, va + 16384 });
	cmd_dense(&cmd, 1, &n);
	return vm_put_cmd(c, slot, &cmd);
}

/* *log_va = *counter_va; *counter_va += 1 (one instance). */
static inline uint32_t vm_counter_cmd(struct vm_client *c, unsigned slot,
				      uint64_t counter_va, uint64_t log_va)
{
	uint32_t words[32];
	struct loom_cmd cmd = { words, 0 };

	cmd_load_config(&cmd, c->cfg.va + 4096, c->counter_size);
	cmd_operands(&cmd, 2, (uint64_t[]){ counter_va, log_va });
	cmd_dense(&cmd, 0, NULL);
	return vm_put_cmd(c, slot, &cmd);
}

/* A SUBMIT of the command at @slot writing the data BO; 0 or -errno. */
static inline int vm_submit(struct vm_client *c, unsigned queue, unsigned slot,
			    uint32_t size, uint32_t out_syncobj, uint64_t deadline_ns,
			    uint64_t *job_id)
{
	struct drm_loom_bo_ref refs[2] = {
		{ c->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ c->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_submit s = {
		.queue = queue, .cmd_handle = c->cmd.handle,
		.cmd_offset = slot * CLIENT_SLOT, .cmd_size = size,
		.bo_count = 2, .bos = (uintptr_t)refs,
		.out_syncobj = out_syncobj, .deadline_ns = deadline_ns,
	};
	int ret = _test_submit(c->fd, &s);

	if (!ret && job_id)
		*job_id = s.job_id;
	return ret;
}

/* The error a finished job ended with, or -1000 if JOB_INFO has none. */
static inline int vm_job_error(struct vm_client *c, uint64_t job_id)
{
	struct drm_loom_job_info info;

	if (_test_job_info(c->fd, job_id, &info) || info.state != DRM_LOOM_JOB_DONE)
		return -1000;
	return info.error;
}

#endif /* LOOM_VM_CLIENT_H */
