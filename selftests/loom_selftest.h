/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by loom's kselftests: finding loom render nodes, reading
 * the device's registers independently of the driver, and GET_PARAM in the
 * three shapes the tests use (raw result, must succeed, must fail).
 */
#ifndef LOOM_SELFTEST_H
#define LOOM_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"

#define LOOM_MAX_NODES 16

struct loom_node {
	char path[32];		/* /dev/dri/renderD128 */
	char sysfs[64];		/* /sys/class/drm/renderD128/device */
};

static inline int loom_is_loom_fd(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	int ok = v && strcmp(v->name, "loom") == 0;

	drmFreeVersion(v);
	return ok;
}

/* Fills @nodes with every loom render node, in minor order; returns count. */
static inline int loom_find_nodes(struct loom_node *nodes, int max)
{
	int n = 0;

	for (int minor = 128; minor < 192 && n < max; minor++) {
		char path[32];
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (loom_is_loom_fd(fd)) {
			snprintf(nodes[n].path, sizeof(nodes[n].path), "%s", path);
			snprintf(nodes[n].sysfs, sizeof(nodes[n].sysfs),
				 "/sys/class/drm/renderD%d/device", minor);
			n++;
		}
		close(fd);
	}
	return n;
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
static inline volatile uint32_t *loom_map_bar0(const struct loom_node *node)
{
	char path[96];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/resource0", node->sysfs);
	fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, LOOM_BAR0_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
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
