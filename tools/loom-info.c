// SPDX-License-Identifier: MIT
/*
 * loom-info: list the loom devices this system has and what they report.
 *
 * Usage: loom-info [--help] [--version] [/dev/accel/accelN | /dev/dri/renderDN]
 *        loom-info --reset core N | --reset device [NODE]
 * Exit status: 0 when at least one loom device answered (the reset was
 * done), 1 otherwise, 2 on a usage error.
 *
 * A reset writes the driver's sysfs controls under the device's PCI
 * directory (loom/reset_core, loom/reset_device; kernel/loom_sysfs.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"
#include "loom_version.h"

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_loom_get_param args = { .param = param };

	if (ioctl(fd, DRM_IOCTL_LOOM_GET_PARAM, &args))
		return -errno;
	*value = args.value;
	return 0;
}

static int show(const char *path)
{
	uint64_t id = 0, version = 0, caps = 0, uapi = 0, pci = 0;
	uint64_t cores = 0, width = 0, height = 0, slots = 1;
	drmVersionPtr v;
	drmDevicePtr dev = NULL;
	char bus[32] = "?";
	int fd, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	v = drmGetVersion(fd);
	if (!v || strcmp(v->name, "loom") != 0) {
		drmFreeVersion(v);
		close(fd);
		return -ENODEV;
	}
	ret = get_param(fd, DRM_LOOM_PARAM_HW_ID, &id);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_HW_VERSION, &version);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_HW_CAPS, &caps);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_UAPI_VERSION, &uapi);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_PCI_ID, &pci);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_NUM_CORES, &cores);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_FABRIC_WIDTH, &width);
	ret = ret ?: get_param(fd, DRM_LOOM_PARAM_FABRIC_HEIGHT, &height);
	/* uapi 7 answers the temporal PEs' slots; before, one per PE */
	if (!ret && uapi >= 7)
		ret = get_param(fd, DRM_LOOM_PARAM_PE_SLOTS, &slots);
	if (drmGetDevice2(fd, 0, &dev) == 0 && dev->bustype == DRM_BUS_PCI)
		snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%u",
			 dev->businfo.pci->domain, dev->businfo.pci->bus,
			 dev->businfo.pci->dev, dev->businfo.pci->func);
	drmFreeDevice(&dev);
	if (!ret) {
		printf("%s: loom driver %d.%d.%d, uapi %llu\n", path,
		       v->version_major, v->version_minor,
		       v->version_patchlevel, (unsigned long long)uapi);
		printf("  device   %04llx:%04llx (%s), id 0x%08llx%s\n",
		       (unsigned long long)(pci >> 16),
		       (unsigned long long)(pci & 0xffff), bus,
		       (unsigned long long)id,
		       id == LOOM_ID_MAGIC ? " \"LOOM\"" : " (unexpected)");
		printf("  abi      %llu.%llu\n",
		       (unsigned long long)LOOM_VERSION_MAJOR(version),
		       (unsigned long long)LOOM_VERSION_MINOR(version));
		printf("  cores    %llu, each a %llux%llu fabric of %llu-slot PEs\n",
		       (unsigned long long)cores, (unsigned long long)width,
		       (unsigned long long)height, (unsigned long long)slots);
		printf("  caps     0x%08llx\n", (unsigned long long)caps);
	}
	drmFreeVersion(v);
	close(fd);
	return ret;
}

/* The device nodes to look at: accel nodes (6.2+), then render nodes (6.1). */
static void node_path(int minor, char *path, size_t size)
{
	if (minor < 64)
		snprintf(path, size, "/dev/accel/accel%d", minor);
	else
		snprintf(path, size, "/dev/dri/renderD%d", minor + 64);
}

/* Whether @path is a loom device node. */
static bool is_loom(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	drmVersionPtr v;
	bool loom;

	if (fd < 0)
		return false;
	v = drmGetVersion(fd);
	loom = v && !strcmp(v->name, "loom");
	drmFreeVersion(v);
	close(fd);
	return loom;
}

/* The one loom device node of this system into @path; -ENODEV, -EEXIST. */
static int only_node(char *path, size_t size)
{
	char candidate[32];
	int found = 0;

	for (int minor = 0; minor < 64 + 64; minor++) {
		node_path(minor, candidate, sizeof(candidate));
		if (is_loom(candidate) && !found++)
			snprintf(path, size, "%s", candidate);
	}
	return !found ? -ENODEV : found > 1 ? -EEXIST : 0;
}

/* Writes @value to the driver's control @name of the device behind @node. */
static int write_control(const char *node, const char *name, const char *value)
{
	char path[96];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(node, &st))
		return -errno;
	if (!S_ISCHR(st.st_mode) || !is_loom(node))
		return -ENODEV;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/loom/%s",
		 major(st.st_rdev), minor(st.st_rdev), name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * --reset core N | --reset device: @argv holds what follows "--reset",
 * @argc entries.  Returns the exit status.
 */
static int reset(int argc, char **argv)
{
	const char *control, *node;
	char value[24], only[32];
	int ret, args;

	if (argc >= 2 && !strcmp(argv[0], "core")) {
		char *end;
		unsigned long core = strtoul(argv[1], &end, 10);

		if (!*argv[1] || *end || argv[1][0] == '-') {
			fprintf(stderr, "loom-info: --reset core: '%s' is not a core number\n",
				argv[1]);
			return 2;
		}
		control = "reset_core";
		snprintf(value, sizeof(value), "%lu", core);
		args = 2;
	} else if (argc >= 1 && !strcmp(argv[0], "device")) {
		control = "reset_device";
		snprintf(value, sizeof(value), "1");
		args = 1;
	} else {
		fprintf(stderr, "loom-info: --reset takes 'core N' or 'device' (loom-info --help)\n");
		return 2;
	}
	if (argc > args + 1) {
		fprintf(stderr, "loom-info: one device node at most (loom-info --help)\n");
		return 2;
	}
	node = argc > args ? argv[args] : NULL;
	if (!node) {
		ret = only_node(only, sizeof(only));
		if (ret) {
			fprintf(stderr, "loom-info: %s\n", ret == -EEXIST ?
				"several loom devices: name the one to reset" :
				"no loom device found");
			return ret == -EEXIST ? 2 : 1;
		}
		node = only;
	}
	ret = write_control(node, control, value);
	if (ret) {
		fprintf(stderr, "loom-info: %s: reset %s: %s%s\n", node, value, strerror(-ret),
			ret == -EACCES || ret == -EPERM ? " (resets need root)" :
			ret == -EINVAL ? " (no such core?)" : "");
		return 1;
	}
	if (args == 2)
		printf("%s: core %s reset\n", node, value);
	else
		printf("%s: every core reset\n", node);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: loom-info [NODE]\n"
		"       loom-info --reset core N [NODE]\n"
		"       loom-info --reset device [NODE]\n"
		"Lists the loom devices and what each reports: driver and uapi versions,\n"
		"hardware ID and version, capabilities, cores, fabric size, PE slots, PCI ID.\n"
		"  NODE            one device node (/dev/accel/accelN, /dev/dri/renderDN);\n"
		"                  default: every accel node, then every render node\n"
		"  --reset core N  reset core N of the device (root only): the job it is\n"
		"                  running fails with ECANCELED, the jobs queued behind it run\n"
		"  --reset device  reset every core of the device so (root only); NODE may be\n"
		"                  left out when the system has one loom device\n"
		"  -h, --help      this text\n"
		"  --version       print the version and exit\n"
		"Exit status: 0 when a loom device answered (the reset was done), 1 otherwise,\n"
		"2 bad usage.\n");
}

int main(int argc, char **argv)
{
	int found = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("loom-info %s\n", LOOM_PROJECT_VERSION);
			return 0;
		}
		if (!strcmp(argv[i], "--reset") && i == 1)
			return reset(argc - 2, argv + 2);
		if (argv[i][0] == '-') {
			fprintf(stderr, "loom-info: unknown option '%s' (loom-info --help)\n", argv[i]);
			return 2;
		}
	}
	if (argc > 2) {
		fprintf(stderr, "loom-info: one device node at most (loom-info --help)\n");
		return 2;
	}
	if (argc > 1) {
		int ret = show(argv[1]);

		if (ret)
			fprintf(stderr, "loom-info: %s: %s\n", argv[1], strerror(-ret));
		return ret ? 1 : 0;
	}
	for (int minor = 0; minor < 64 + 64; minor++) {
		char path[32];

		node_path(minor, path, sizeof(path));
		if (show(path) == 0)
			found++;
	}
	if (!found) {
		fprintf(stderr, "loom-info: no loom device found\n");
		return 1;
	}
	printf("%d loom device(s)\n", found);
	return 0;
}
