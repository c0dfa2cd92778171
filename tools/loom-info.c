// SPDX-License-Identifier: MIT
/*
 * loom-info: list the loom devices this system has and what they report.
 *
 * Usage: loom-info [--help] [--version] [/dev/accel/accelN | /dev/dri/renderDN]
 * Exit status: 0 when at least one loom device answered, 1 otherwise, 2 on
 * a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
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

static void usage(FILE *out)
{
	fprintf(out,
		"usage: loom-info [NODE]\n"
		"Lists the loom devices and what each reports: driver and uapi versions,\n"
		"hardware ID and version, capabilities, cores, fabric size, PE slots, PCI ID.\n"
		"  NODE            one device node (/dev/accel/accelN, /dev/dri/renderDN);\n"
		"                  default: every accel node, then every render node\n"
		"  -h, --help      this text\n"
		"  --version       print the version and exit\n"
		"Exit status: 0 when a loom device answered, 1 otherwise, 2 bad usage.\n");
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
	/* Accel nodes on 6.2+ kernels, render nodes on 6.1. */
	for (int minor = 0; minor < 64 + 64; minor++) {
		char path[32];

		if (minor < 64)
			snprintf(path, sizeof(path), "/dev/accel/accel%d", minor);
		else
			snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor + 64);
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
