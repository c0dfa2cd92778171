/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by loom's kselftests: finding loom's device nodes (accel
 * nodes on 6.2+ kernels, render nodes on 6.1), reading
 * the device's registers independently of the driver, and GET_PARAM in the
 * three shapes the tests use (raw result, must succeed, must fail).
 */
#ifndef LOOM_SELFTEST_H
#define LOOM_SELFTEST_H

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"

#define LOOM_MAX_NODES 16

struct loom_node {
	char path[32];		/* /dev/accel/accel0 or /dev/dri/renderD128 */
	char sysfs[64];		/* /sys/class/accel/accel0/device, ... */
	char debugfs[96];	/* the DRM device's debugfs directory */
	int accel;		/* an accel node (DRM_LOOM_FEATURE_ACCEL_NODE) */
};

static inline int loom_is_loom_fd(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	int ok = v && strcmp(v->name, "loom") == 0;

	drmFreeVersion(v);
	return ok;
}

/*
 * How much slower than a Debian kernel this one is (loom-vm exports
 * LOOM_VM_TIMEOUT_FACTOR: 4 on the debug lane's KASAN and lockdep kernel).
 */
static inline int loom_timeout_factor(void)
{
	const char *f = getenv("LOOM_VM_TIMEOUT_FACTOR");
	int n = f ? atoi(f) : 1;

	return n > 0 ? n : 1;
}

/* Writes @val to the sysfs or procfs file @path, whole; 0 or -errno. */
static inline int loom_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	ret = n < 0 ? -errno : n == (ssize_t)strlen(val) ? 0 : -EIO;
	close(fd);
	return ret;
}

/* The PCI slot of @node ("0000:01:00.0"), for sysfs bind/unbind; -errno. */
/*
 * Asks tools/loom-vm (run with --hotplug) to send QEMU the QMP command
 * @json, one JSON object: the host reads it off the console as one line.
 */
static inline int loom_vm_qmp(const char *json)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "loom-vm: qmp: %s\n", json);

	if (n < 0 || n >= (int)sizeof(line))
		return -1;
	fflush(stdout);
	/* one write(): a line split by other output would not be a request */
	return write(STDOUT_FILENO, line, n) == n ? 0 : -1;
}

static inline int loom_node_slot(const struct loom_node *node, char *slot, size_t size)
{
	char link[256];
	ssize_t len = readlink(node->sysfs, link, sizeof(link) - 1);
	const char *base;

	if (size)
		slot[0] = 0;
	if (len <= 0)
		return len < 0 ? -errno : -ENOENT;
	link[len] = 0;
	base = strrchr(link, '/');
	snprintf(slot, size, "%.*s", (int)size - 1, base ? base + 1 : link);
	return 0;
}

/*
 * debugfs names a DRM device's directory by minor (6.1's dri/128) or by
 * the device's name (accel/0000:01:00.0 on 6.12): the first that exists.
 */
static inline void loom_node_debugfs(struct loom_node *node, const char *kind,
				     int minor)
{
	char pci[64];

	snprintf(node->debugfs, sizeof(node->debugfs), "/sys/kernel/debug/%s/%d", kind, minor);
	if (access(node->debugfs, F_OK) != 0 && loom_node_slot(node, pci, sizeof(pci)) == 0)
		snprintf(node->debugfs, sizeof(node->debugfs), "/sys/kernel/debug/%s/%s",
			 kind, pci);
}

/* Adds the loom nodes among /dev/<dir>/<name><first..end-1> to @nodes. */
static inline int loom_scan_nodes(struct loom_node *nodes, int n, int max,
				  const char *dir, const char *name, int first, int end)
{
	for (int minor = first; minor < end && n < max; minor++) {
		char path[32];
		int fd;

		snprintf(path, sizeof(path), "/dev/%s/%s%d", dir, name, minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (loom_is_loom_fd(fd)) {
			struct loom_node *node = &nodes[n++];

			node->accel = !strcmp(dir, "accel");
			snprintf(node->path, sizeof(node->path), "%s", path);
			snprintf(node->sysfs, sizeof(node->sysfs), "/sys/class/%s/%s%d/device",
				 node->accel ? "accel" : "drm", name, minor);
			loom_node_debugfs(node, node->accel ? "accel" : "dri", minor);
		}
		close(fd);
	}
	return n;
}

/*
 * Fills @nodes with every loom node, in minor order; returns the count.
 * A kernel gives loom one kind of node: accel where it has the accel
 * subsystem, render before.
 */
static inline int loom_find_nodes(struct loom_node *nodes, int max)
{
	int n = loom_scan_nodes(nodes, 0, max, "accel", "accel", 0, 64);

	return loom_scan_nodes(nodes, n, max, "dri", "renderD", 128, 192);
}

static inline int loom_count_nodes(void)
{
	struct loom_node nodes[LOOM_MAX_NODES];

	return loom_find_nodes(nodes, LOOM_MAX_NODES);
}

/* The value of @key=... on the kernel command line, or NULL. */
static inline const char *loom_cmdline(const char *key)
{
	static char buf[2048];
	FILE *f = fopen("/proc/cmdline", "r");
	char *p;

	if (!f)
		return NULL;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		if (strncmp(p, key, strlen(key)) == 0 && p[strlen(key)] == '=')
			return p + strlen(key) + 1;
	return NULL;
}

/* Devices the VM was started with (loom_vm.devices=N), or -1 if unknown. */
static inline int loom_expected_devices(void)
{
	const char *v = loom_cmdline("loom_vm.devices");

	return v ? atoi(v) : -1;
}

/*
 * A loom-cgra property the VM's devices were given (tools/loom-vm
 * --device-opts ",cores=3" puts loom_vm.device_opts=,cores=3 on the
 * command line), or @fallback: the device's default.
 */
static inline const char *loom_expected_prop(const char *prop, const char *fallback)
{
	static char val[64];
	const char *opts = loom_cmdline("loom_vm.device_opts");
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), ",%s=", prop);
	p = opts ? strstr(opts, key) : NULL;
	if (!p)
		return fallback;
	snprintf(val, sizeof(val), "%s", p + strlen(key));
	val[strcspn(val, ",")] = 0;
	return val;
}

/*
 * Maps the device's BAR0 through sysfs so tests can compare what the driver
 * reports with the registers themselves (the VM boots with iomem=relaxed).
 */
static inline volatile uint32_t *loom_map_bar0_prot(const struct loom_node *node, int prot)
{
	char path[96];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/resource0", node->sysfs);
	fd = open(path, (prot & PROT_WRITE ? O_RDWR : O_RDONLY) | O_SYNC | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, LOOM_BAR0_SIZE, prot, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static inline volatile uint32_t *loom_map_bar0(const struct loom_node *node)
{
	return loom_map_bar0_prot(node, PROT_READ);
}

static inline uint32_t loom_reg(volatile uint32_t *bar, uint32_t reg)
{
	return bar[reg / 4];
}

/* Reads a hex sysfs attribute such as "vendor"; returns -1 on failure. */
static inline long loom_sysfs_hex(const struct loom_node *node, const char *attr)
{
	char path[96], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", node->sysfs, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtol(buf, NULL, 16);
}

/* GET_PARAM returning 0 or -errno, leaving *value as the kernel left it. */
static inline int _test_get_param(int fd, uint32_t param, uint32_t pad,
				  uint64_t *value)
{
	struct drm_loom_get_param args = {
		.param = param, .pad = pad, .value = *value,
	};
	int ret = ioctl(fd, DRM_IOCTL_LOOM_GET_PARAM, &args);

	*value = args.value;
	return ret ? -errno : 0;
}

#define test_get_param(fd, param) ({					\
	uint64_t __v = 0;						\
	ASSERT_EQ(0, _test_get_param(fd, param, 0, &__v));		\
	__v;								\
})

#define test_err_get_param(expected_errno, fd, param, pad) ({		\
	uint64_t __v = 0x5a5a5a5a5a5a5a5aULL;				\
	EXPECT_EQ(-(expected_errno), _test_get_param(fd, param, pad, &__v)); \
	/* a rejected call leaves the output untouched */		\
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, __v);				\
})

#endif /* LOOM_SELFTEST_H */

/* ---- buffers, jobs and syncobjs -------------------------------------------- */

#include <xf86drm.h>

struct loom_test_bo {
	uint32_t handle;
	uint64_t va;
	uint64_t size;
	void *map;
};

static inline int _test_bo_create(int fd, uint64_t size, uint32_t flags,
				  struct loom_test_bo *bo)
{
	struct drm_loom_bo_create args = { .size = size, .flags = flags };

	if (ioctl(fd, DRM_IOCTL_LOOM_BO_CREATE, &args))
		return -errno;
	bo->handle = args.handle;
	bo->va = args.va;
	bo->size = size;
	bo->map = NULL;
	return 0;
}

/* Creates and maps a BO; NULL map on failure. */
static inline struct loom_test_bo loom_bo(int fd, uint64_t size)
{
	struct loom_test_bo bo = { 0 };
	struct drm_loom_bo_mmap_offset off = { 0 };
	void *p;

	if (_test_bo_create(fd, size, 0, &bo))
		return bo;
	off.handle = bo.handle;
	if (ioctl(fd, DRM_IOCTL_LOOM_BO_MMAP_OFFSET, &off))
		return bo;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off.offset);
	bo.map = p == MAP_FAILED ? NULL : p;
	return bo;
}

/* A command buffer being written into a BO. */
struct loom_cmd {
	uint32_t *words;
	uint32_t len;		/* dwords */
};

static inline void cmd_emit32(struct loom_cmd *c, uint32_t v)
{
	c->words[c->len++] = v;
}

static inline void cmd_emit64(struct loom_cmd *c, uint64_t v)
{
	cmd_emit32(c, (uint32_t)v);
	cmd_emit32(c, (uint32_t)(v >> 32));
}

static inline void cmd_load_config(struct loom_cmd *c, uint64_t va, uint32_t size)
{
	cmd_emit32(c, LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	cmd_emit32(c, size);
	cmd_emit64(c, va);
}

static inline void cmd_operands(struct loom_cmd *c, unsigned n, const uint64_t *v)
{
	cmd_emit32(c, LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 2 + 2 * n));
	cmd_emit32(c, n);
	for (unsigned i = 0; i < n; i++)
		cmd_emit64(c, v[i]);
}

static inline void cmd_dense(struct loom_cmd *c, unsigned rank, const int64_t *ext)
{
	cmd_emit32(c, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 2 + 2 * rank));
	cmd_emit32(c, rank);
	for (unsigned i = 0; i < rank; i++)
		cmd_emit64(c, (uint64_t)ext[i]);
}

static inline int _test_submit(int fd, struct drm_loom_submit *s)
{
	return ioctl(fd, DRM_IOCTL_LOOM_SUBMIT, s) ? -errno : 0;
}

static inline int _test_job_info(int fd, uint64_t job_id, struct drm_loom_job_info *info)
{
	memset(info, 0, sizeof(*info));
	info->job_id = job_id;
	return ioctl(fd, DRM_IOCTL_LOOM_JOB_INFO, info) ? -errno : 0;
}

/* Waits for a syncobj with a timeout; 0 or -errno. */
static inline int loom_syncobj_wait(int fd, uint32_t syncobj, int64_t timeout_ms)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return drmSyncobjWait(fd, &syncobj, 1,
			      now.tv_sec * 1000000000LL + now.tv_nsec + timeout_ms * 1000000LL,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
}

/*
 * The 80-byte command area of a 128-byte SQE.  liburing declares it as a
 * zero-length array; going through a function keeps the compiler from
 * sizing it at zero.  (Needs <liburing.h> before this header.)
 */
#ifdef LIB_URING_H
static __attribute__((noinline, unused)) void
sqe_set_submit(struct io_uring_sqe *sqe, const struct drm_loom_submit *s)
{
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), s, sizeof(*s));
}
#endif

/*
 * A number of core @core's block in the driver's debugfs "queues" file: the
 * one after @key (e.g. "jobs: done "); -1 if unreadable.
 */
static inline long long loom_core_stat(const struct loom_node *node, unsigned core,
				       const char *key)
{
	char path[128], buf[8192], head[24], *p;
	long long v = -1;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "%s/queues", node->debugfs);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	snprintf(head, sizeof(head), "core %u:", core);
	p = strstr(buf, head);
	p = p ? strstr(p, key) : NULL;
	if (!p || sscanf(p + strlen(key), "%lld", &v) != 1)
		return -1;
	return v;
}

/*
 * The counts a recovery test compares before and after, for cores 0 and 1:
 * the hang recoveries and the records refused from the device.
 */
struct loom_core_counts {
	long long resets[2], refused[2];
};

static inline struct loom_core_counts loom_core_counts(const struct loom_node *node)
{
	struct loom_core_counts c;

	for (unsigned int q = 0; q < 2; q++) {
		c.resets[q] = loom_core_stat(node, q, "resets ");
		c.refused[q] = loom_core_stat(node, q, "refused from the device: ");
	}
	return c;
}

/*
 * Waits until no core of @node has a job on its ring (the jobs of a closed
 * file run on), at most a minute on this kernel's clock; whether they are.
 */
static inline bool loom_wait_cores_idle(const struct loom_node *node)
{
	for (int tries = 6000 * loom_timeout_factor(); tries > 0; tries--) {
		long long busy = 0, n;

		for (unsigned int core = 0; (n = loom_core_stat(node, core, "in-flight ")) >= 0;
		     core++)
			busy += n;
		if (!busy)
			return true;
		usleep(10000);
	}
	return false;
}

/* Core @core's register @reg of the device behind @node, through sysfs. */
static inline void loom_poke_core(const struct loom_node *node, unsigned core,
				  uint32_t reg, uint32_t val)
{
	volatile uint32_t *bar = loom_map_bar0_prot(node, PROT_READ | PROT_WRITE);

	if (!bar)
		return;
	bar[(LOOM_CORE_BASE(core) + reg) / 4] = val;
	munmap((void *)bar, LOOM_BAR0_SIZE);
}
