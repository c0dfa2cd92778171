/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The job fixture shared by the kselftests that submit work: a file with a
 * command BO, a configuration BO (vector add and an ordered counter log)
 * and a data BO, and helpers that write command buffers into slots of the
 * command BO and submit them.  Include after kselftest_harness.h.
 */
#ifndef LOOM_JOB_H
#define LOOM_JOB_H

#include "configs.h"	/* the engine's hand-built configurations */

#define CMD_BO_SIZE	(256 * 1024)

#define CMD_SLOT	128		/* bytes per command buffer in the cmd BO */
#define N		64

FIXTURE(job) {
	struct loom_node node;
	int fd;
	struct loom_test_bo cmd, cfg, data;
	uint32_t vadd_size, counter_size;	/* config images in cfg */
	uint64_t vadd_va, counter_va;
};

FIXTURE_SETUP(job)
{
	ASSERT_LE(1, loom_find_nodes(&self->node, 1));
	self->fd = open(self->node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->cmd = loom_bo(self->fd, CMD_BO_SIZE);
	self->cfg = loom_bo(self->fd, 8192);
	self->data = loom_bo(self->fd, 1 << 20);
	ASSERT_NE(NULL, self->cmd.map);
	ASSERT_NE(NULL, self->cfg.map);
	ASSERT_NE(NULL, self->data.map);
	self->vadd_size = loom_test_config_vector_add(self->cfg.map, 4096, 4, 4);
	self->counter_size = loom_test_config_counter((char *)self->cfg.map + 4096, 4096, 4, 4);
	ASSERT_NE(0, self->vadd_size);
	ASSERT_NE(0, self->counter_size);
	self->vadd_va = self->cfg.va;
	self->counter_va = self->cfg.va + 4096;
}

FIXTURE_TEARDOWN(job)
{
	close(self->fd);
	/* The next test's injected fault must meet its own job, not one of ours. */
	loom_wait_cores_idle(&self->node);
}

/* Writes a command buffer into slot @slot of the cmd BO; returns its size. */
static inline uint32_t put_cmd(struct loom_test_bo *cmd_bo, unsigned slot,
			const struct loom_cmd *c)
{
	memcpy((char *)cmd_bo->map + slot * CMD_SLOT, c->words, c->len * 4);
	return c->len * 4;
}

static inline struct drm_loom_submit submit_args(FIXTURE_DATA(job) *self, unsigned slot,
					  uint32_t size, struct drm_loom_bo_ref *refs,
					  unsigned nrefs)
{
	return (struct drm_loom_submit){
		.cmd_handle = self->cmd.handle,
		.cmd_offset = slot * CMD_SLOT,
		.cmd_size = size,
		.bo_count = nrefs,
		.bos = (uintptr_t)refs,
	};
}

/* A vector-add job over N elements of data (a, b, c at 0, 8K, 16K). */
static inline uint32_t vadd_cmd(FIXTURE_DATA(job) *self, unsigned slot, int64_t n)
{
	uint32_t words[32];
	struct loom_cmd c = { words, 0 };
	uint64_t ops[3] = { self->data.va, self->data.va + 8192, self->data.va + 16384 };

	cmd_load_config(&c, self->vadd_va, self->vadd_size);
	cmd_operands(&c, 3, ops);
	cmd_dense(&c, 1, &n);
	return put_cmd(&self->cmd, slot, &c);
}

/* A counter-log job writing log slot @i. */
static inline uint32_t counter_cmd(FIXTURE_DATA(job) *self, unsigned slot, unsigned i)
{
	uint32_t words[32];
	struct loom_cmd c = { words, 0 };
	uint64_t ops[2] = { self->data.va, self->data.va + 8 + 8 * i };

	cmd_load_config(&c, self->counter_va, self->counter_size);
	cmd_operands(&c, 2, ops);
	cmd_dense(&c, 0, NULL);
	return put_cmd(&self->cmd, slot, &c);
}

/*
 * A long job: @extent instances of the counter log, all hammering the
 * counter at @va and the log slot after it (a BO the job need not list).
 */
static inline uint32_t long_cmd(FIXTURE_DATA(job) *self, unsigned slot, uint64_t va,
				int64_t extent)
{
	uint32_t words[32];
	struct loom_cmd c = { words, 0 };
	uint64_t ops[2] = { va, va + 8 };

	cmd_load_config(&c, self->counter_va, self->counter_size);
	cmd_operands(&c, 2, ops);
	cmd_dense(&c, 1, &extent);
	return put_cmd(&self->cmd, slot, &c);
}

/*
 * Loads both cores: on each a long job of @extent instances (its counter
 * at @scratch_va + 64 * core) and eight jobs waiting on the ring behind
 * it, the last of which signals @sync[core].  @ids gets the job ids (the
 * long jobs are 0 and 1).  Returns 0, -1 if a SUBMIT failed.
 *
 * The long jobs must end on their own: they get LONG_JOB_DEADLINE_NS, so
 * the hang check's ten deadlines are the module's runtime cap (max_job_ms,
 * 60 s) rather than 20 s, which a loaded host's engine can need for 1 << 24
 * instances (loom_reset_test's core 1 job failed ETIMEDOUT so).
 */
#define LONG_JOB_DEADLINE_NS	(6ULL * 1000000000ULL)
#define LOAD_JOBS	18
static inline int submit_load_of(FIXTURE_DATA(job) *self, uint64_t scratch_va,
				 uint64_t ids[LOAD_JOBS], const uint32_t sync[2],
				 int64_t extent)
{
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};

	for (unsigned int i = 0; i < LOAD_JOBS; i++) {
		unsigned int q = i % 2;
		struct drm_loom_submit s = i < 2 ?
			submit_args(self, i, long_cmd(self, i, scratch_va + 64 * q, extent),
				    refs + 1, 1) :
			submit_args(self, i, counter_cmd(self, i, i), refs, 2);

		s.queue = q;
		s.deadline_ns = i < 2 ? LONG_JOB_DEADLINE_NS : 0;
		s.out_syncobj = i >= LOAD_JOBS - 2 ? sync[q] : 0;
		if (_test_submit(self->fd, &s))
			return -1;
		ids[i] = s.job_id;
	}
	return 0;
}

static inline int submit_load(FIXTURE_DATA(job) *self, uint64_t scratch_va,
			      uint64_t ids[LOAD_JOBS], const uint32_t sync[2])
{
	return submit_load_of(self, scratch_va, ids, sync, 1 << 19);
}

/* loom.ko's module reference count, -1 if unreadable. */
static inline long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/loom/refcnt", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Submits a vector add with @deadline_ns; returns its JOB_INFO. */
static inline struct drm_loom_job_info run_vadd(FIXTURE_DATA(job) *self,
					 struct __test_metadata *_metadata,
					 unsigned queue, uint64_t deadline_ns)
{
	struct drm_loom_bo_ref refs[2] = {
		{ self->data.handle, DRM_LOOM_BO_REF_READ | DRM_LOOM_BO_REF_WRITE },
		{ self->cfg.handle, DRM_LOOM_BO_REF_READ },
	};
	struct drm_loom_job_info info = { 0 };
	struct drm_loom_submit s = submit_args(self, queue, vadd_cmd(self, queue, 8), refs, 2);
	uint32_t sync;

	EXPECT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync));
	s.queue = queue;
	s.deadline_ns = deadline_ns;
	s.out_syncobj = sync;
	EXPECT_EQ(0, _test_submit(self->fd, &s));
	EXPECT_EQ(0, loom_syncobj_wait(self->fd, sync, 10000));
	EXPECT_EQ(0, _test_job_info(self->fd, s.job_id, &info));
	drmSyncobjDestroy(self->fd, sync);
	return info;
}

/* Points the fixture at a new file of the node, with its own BOs. */
static inline int reopen(FIXTURE_DATA(job) *self)
{
	int fd = open(self->node.path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	self->fd = fd;
	self->cmd = loom_bo(fd, CMD_BO_SIZE);
	self->cfg = loom_bo(fd, 8192);
	self->data = loom_bo(fd, 1 << 20);
	if (!self->cmd.map || !self->cfg.map || !self->data.map)
		return -ENOMEM;
	self->vadd_size = loom_test_config_vector_add(self->cfg.map, 4096, 4, 4);
	self->counter_size = loom_test_config_counter((char *)self->cfg.map + 4096, 4096, 4, 4);
	self->vadd_va = self->cfg.va;
	self->counter_va = self->cfg.va + 4096;
	return 0;
}

/* Writes a module parameter of loom; returns 0 or -errno. */
/* The guest's MemAvailable in MiB, -1 if unknown. */
static inline long long mem_available_mb(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

static inline int set_param(const char *name, unsigned int value)
{
	char path[96], val[16];

	snprintf(path, sizeof(path), "/sys/module/loom/parameters/%s", name);
	snprintf(val, sizeof(val), "%u\n", value);
	return loom_write_file(path, val);
}

/* The value of this process's fdinfo key @key of @fd, or -1. */
static inline long long fdinfo_value(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atoll(line + strlen(key) + 1);
	fclose(f);
	return v;
}

/* A job's fence error; -1000 if JOB_INFO fails, -1001 if it is not done. */
static inline int job_error(FIXTURE_DATA(job) *self, uint64_t job_id)
{
	struct drm_loom_job_info info;

	if (_test_job_info(self->fd, job_id, &info))
		return -1000;
	return info.state == DRM_LOOM_JOB_DONE ? info.error : -1001;
}

#endif /* LOOM_JOB_H */
