// SPDX-License-Identifier: MIT
/*
 * loom-doctor ("loom doctor"): can this machine, and this user, use a loom
 * device?  Checks, in order, and prints for each failure the command that
 * fixes it:
 *
 *   kernel     Linux 6.1 or newer; whether it has the accel subsystem
 *   headers    /lib/modules/$(uname -r)/build, for building the module
 *              with DKMS (a warning: a built module does not need them)
 *   module     loom.ko loaded (installed but not loaded, or not installed)
 *   device     a loom-cgra PCI function bound to loom.ko, and its node
 *   access     the node opens read-write for the calling user
 *   uapi       the driver's uapi is one this libloom works with
 *   io_uring   rings can be created (kernel.io_uring_disabled, 6.6+)
 *
 * Usage: loom-doctor [--min-uapi N] [--quiet] [--help] [--version]
 *   --min-uapi N  also require driver uapi N (what an application needs)
 *   --quiet       print failures and warnings only
 * Exit status: 0 when the device is usable (warnings allowed), 1 when a
 * check failed, 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "drm/loom_drm.h"
#include "loom/loom.h"
#include "loom_device.h"
#include "loom_version.h"

#define MAX_NODES 16

static bool quiet;
static int failures;

static void report(const char *tag, const char *check, const char *fix, const char *fmt, ...)
{
	va_list ap;

	if (quiet && !strcmp(tag, "ok"))
		return;
	printf("%-5s %-9s ", tag, check);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (fix)
		printf("      %-9s fix: %s\n", "", fix);
	if (!strcmp(tag, "FAIL"))
		failures++;
}

#define ok(check, ...)		report("ok", check, NULL, __VA_ARGS__)
#define warn(check, fix, ...)	report("warn", check, fix, __VA_ARGS__)
#define fail(check, fix, ...)	report("FAIL", check, fix, __VA_ARGS__)

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Reads the first line of @path into @buf; false if it cannot. */
static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	bool got;

	if (!f)
		return false;
	got = fgets(buf, size, f) != NULL;
	fclose(f);
	if (got)
		buf[strcspn(buf, "\n")] = 0;
	return got;
}

/* The accel class exists once drm.ko is loaded; before, the config says. */
static bool has_accel(const struct utsname *u)
{
	char path[300], line[128];
	bool accel = false;
	FILE *f;

	if (exists("/sys/class/accel"))
		return true;
	snprintf(path, sizeof(path), "/boot/config-%s", u->release);
	f = fopen(path, "r");
	while (f && !accel && fgets(line, sizeof(line), f))
		accel = !strcmp(line, "CONFIG_DRM_ACCEL=y\n");
	if (f)
		fclose(f);
	return accel;
}

static void check_kernel(const struct utsname *u)
{
	unsigned major = 0, minor = 0;

	sscanf(u->release, "%u.%u", &major, &minor);
	if (major < 6 || (major == 6 && minor < 1)) {
		fail("kernel", "boot Linux 6.1 or newer (Debian 12's kernel, or 6.12 from bookworm-security)",
		     "%s: loom.ko needs Linux 6.1 or newer", u->release);
		return;
	}
	ok("kernel", "%s (%s)", u->release,
	   has_accel(u) ? "accel subsystem: loom is /dev/accel/accelN" :
			  "no accel subsystem: loom is a render node");
}

static void check_headers(const struct utsname *u)
{
	char path[300], fix[300];

	snprintf(path, sizeof(path), "/lib/modules/%s/build", u->release);
	if (exists(path)) {
		ok("headers", "%s", path);
		return;
	}
	snprintf(fix, sizeof(fix), "sudo apt install linux-headers-%s", u->release);
	warn("headers", fix, "%s missing: DKMS cannot build loom.ko for this kernel", path);
}

/* Whether modules.dep of the running kernel knows a loom module. */
static bool module_installed(const struct utsname *u)
{
	char path[300], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u->release);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *base;

		if (!colon)
			continue;
		*colon = 0;
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		found = !strncmp(base, "loom.ko", 7);
	}
	fclose(f);
	return found;
}

static bool check_module(const struct utsname *u)
{
	char version[64] = "";

	if (exists("/sys/module/loom")) {
		if (!read_line("/sys/module/loom/version", version, sizeof(version)))
			read_line("/sys/module/loom/srcversion", version, sizeof(version));
		ok("module", "loom.ko loaded (%s)", version[0] ? version : "no version");
		return true;
	}
	if (module_installed(u))
		fail("module", "sudo modprobe loom", "loom.ko is installed for %s but not loaded",
		     u->release);
	else
		fail("module", "sudo make dkms-install (in the loom source tree), then sudo modprobe loom",
		     "loom.ko is not installed for %s", u->release);
	return false;
}

struct node {
	char dev[64];		/* /dev/accel/accel0 */
	char pci[32];		/* 0000:01:00.0 */
};

/* loom's nodes, from sysfs: every accel or render node whose driver is loom. */
static int find_nodes(struct node *nodes, int max)
{
	static const struct { const char *class, *prefix, *dev; } kinds[] = {
		{ "/sys/class/accel", "accel", "/dev/accel" },
		{ "/sys/class/drm", "renderD", "/dev/dri" },
	};
	int n = 0;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		DIR *d = opendir(kinds[k].class);
		struct dirent *e;

		while (d && (e = readdir(d)) && n < max) {
			char path[300], link[300], *base;
			ssize_t len;

			if (strncmp(e->d_name, kinds[k].prefix, strlen(kinds[k].prefix)))
				continue;
			snprintf(path, sizeof(path), "%s/%s/device/driver", kinds[k].class, e->d_name);
			len = readlink(path, link, sizeof(link) - 1);
			if (len <= 0)
				continue;
			link[len] = 0;
			base = strrchr(link, '/');
			if (strcmp(base ? base + 1 : link, "loom"))
				continue;
			snprintf(nodes[n].dev, sizeof(nodes[n].dev), "%s/%.40s", kinds[k].dev, e->d_name);
			snprintf(path, sizeof(path), "%s/%s/device", kinds[k].class, e->d_name);
			len = readlink(path, link, sizeof(link) - 1);
			link[len > 0 ? len : 0] = 0;
			base = strrchr(link, '/');
			snprintf(nodes[n].pci, sizeof(nodes[n].pci), "%.31s", base ? base + 1 : link);
			n++;
		}
		if (d)
			closedir(d);
	}
	return n;
}

/* PCI functions that are loom-cgra devices but have no driver bound. */
static int unbound_devices(char *first, size_t size)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], v[16], id[16];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (!read_line(path, v, sizeof(v)) || strtol(v, NULL, 16) != LOOM_PCI_VENDOR_ID)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", e->d_name);
		if (!read_line(path, id, sizeof(id)) || strtol(id, NULL, 16) != LOOM_PCI_DEVICE_ID)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", e->d_name);
		if (exists(path))
			continue;
		if (n++ == 0)
			snprintf(first, size, "%.40s", e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

static int check_devices(struct node *nodes)
{
	char slot[64], fix[200];
	int n = find_nodes(nodes, MAX_NODES);

	if (n > 0) {
		for (int i = 0; i < n; i++)
			ok("device", "%s (PCI %s)", nodes[i].dev, nodes[i].pci);
		return n;
	}
	if (unbound_devices(slot, sizeof(slot))) {
		snprintf(fix, sizeof(fix), "echo %s | sudo tee /sys/bus/pci/drivers/loom/bind", slot);
		fail("device", fix, "loom-cgra device %s is not bound to loom.ko", slot);
	} else {
		fail("device", "add one to the VM: -device loom-cgra (tools/loom-vm does)",
		     "no loom-cgra PCI device (vendor %04x device %04x)",
		     LOOM_PCI_VENDOR_ID, LOOM_PCI_DEVICE_ID);
	}
	return 0;
}

/*
 * The name of group @gid from /etc/group, or its number: read directly, as
 * getgrgid() would pull NSS into the static build that runs in the VM.
 */
static void group_name(gid_t gid, char *name, size_t size)
{
	FILE *f = fopen("/etc/group", "r");
	char line[512];

	snprintf(name, size, "%u", (unsigned)gid);
	while (f && fgets(line, sizeof(line), f)) {
		char *n = strtok(line, ":"), *x = strtok(NULL, ":"), *g = strtok(NULL, ":");

		if (n && x && g && (gid_t)strtoul(g, NULL, 10) == gid) {
			snprintf(name, size, "%s", n);
			break;
		}
	}
	if (f)
		fclose(f);
}

static bool in_group(gid_t gid)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	if (getegid() == gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static bool check_access(const struct node *node)
{
	struct stat st;
	char owner[160], fix[400], group[64];

	if (access(node->dev, R_OK | W_OK) == 0) {
		ok("access", "%s opens read-write for you", node->dev);
		return true;
	}
	if (stat(node->dev, &st)) {
		fail("access", "sudo udevadm trigger (or re-load loom.ko)",
		     "%s: %s", node->dev, strerror(errno));
		return false;
	}
	group_name(st.st_gid, group, sizeof(group));
	snprintf(owner, sizeof(owner), "%u:%s %04o", (unsigned)st.st_uid, group,
		 (unsigned)(st.st_mode & 07777));
	if (st.st_gid != 0 && (st.st_mode & 0060) == 0060 && !in_group(st.st_gid)) {
		snprintf(fix, sizeof(fix), "sudo usermod -aG %s $USER, then log in again", group);
		fail("access", fix, "%s is %s and you (uid %u) are not in its group",
		     node->dev, owner, (unsigned)getuid());
	} else {
		fail("access",
		     "sudo install -m 644 tools/udev/70-loom.rules /etc/udev/rules.d/ && "
		     "sudo udevadm control --reload && sudo udevadm trigger, "
		     "then sudo usermod -aG render $USER",
		     "%s is %s: only root can open it", node->dev, owner);
	}
	return false;
}

static void check_uapi(const struct node *node, unsigned min_uapi)
{
	struct loom_device *dev;
	const struct loom_device_info *info;
	int ret = loom_device_open(node->dev, &dev);

	if (ret) {
		fail("uapi", "update loom.ko (dkms install loom/<version>) or libloom to match",
		     "%s: %s", node->dev, loom_strerror(ret));
		return;
	}
	info = loom_device_info(dev);
	if (info->uapi_version < min_uapi) {
		char fix[160];

		snprintf(fix, sizeof(fix), "install a loom.ko with uapi %u or later "
			 "(sudo make dkms-install from a newer tree)", min_uapi);
		fail("uapi", fix, "%s: driver uapi %u, this needs %u", node->dev,
		     info->uapi_version, min_uapi);
	} else {
		ok("uapi", "%s: driver uapi %u (libloom built for %u), %s node%s", node->dev,
		   info->uapi_version, DRM_LOOM_UAPI_VERSION,
		   info->features & DRM_LOOM_FEATURE_ACCEL_NODE ? "accel" : "render",
		   info->features & DRM_LOOM_FEATURE_URING_CANCEL ? ", cancelable io_uring commands" : "");
	}
	loom_device_close(dev);
}

static void check_io_uring(void)
{
	struct io_uring ring;
	char disabled[16] = "0", fix[200];
	int ret = io_uring_queue_init(4, &ring, IORING_SETUP_SQE128);

	read_line("/proc/sys/kernel/io_uring_disabled", disabled, sizeof(disabled));
	if (ret == 0) {
		io_uring_queue_exit(&ring);
		ok("io_uring", "rings with 128-byte SQEs work");
		return;
	}
	if (ret == -ENOSYS) {
		fail("io_uring", "boot a kernel built with CONFIG_IO_URING=y (Debian's are)",
		     "this kernel has no io_uring");
	} else if (atoi(disabled) == 2) {
		fail("io_uring", "sudo sysctl -w kernel.io_uring_disabled=0",
		     "io_uring is disabled for everyone (kernel.io_uring_disabled=2)");
	} else if (atoi(disabled) == 1) {
		char gid[16] = "-1";

		read_line("/proc/sys/kernel/io_uring_group", gid, sizeof(gid));
		snprintf(fix, sizeof(fix), "sudo sysctl -w kernel.io_uring_disabled=0, or join "
			 "group %s (kernel.io_uring_group)", gid);
		fail("io_uring", fix, "io_uring is limited to privileged users and group %s "
		     "(kernel.io_uring_disabled=1)", gid);
	} else {
		fail("io_uring", "check ulimit -l (io_uring rings lock memory) and seccomp filters",
		     "io_uring_queue_init: %s", strerror(-ret));
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: loom-doctor [--min-uapi N] [--quiet]\n"
		"Checks whether this machine and user can use a loom device: the kernel,\n"
		"its headers, loom.ko, the device and its node, access to it, the uapi,\n"
		"io_uring; prints the command that fixes each failure.\n"
		"  --min-uapi N    also require driver uapi N (what an application needs;\n"
		"                  default 3, what libloom needs)\n"
		"  --quiet         print failures and warnings only\n"
		"  -h, --help      this text\n"
		"  --version       print the version and exit\n"
		"Exit status: 0 usable (warnings allowed), 1 a check failed, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
	struct node nodes[MAX_NODES];
	unsigned min_uapi = 3;	/* libloom needs SUBMIT and FEATURES (uapi 3) */
	struct utsname u;
	int n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min-uapi") && i + 1 < argc) {
			char *end;

			min_uapi = strtoul(argv[++i], &end, 0);
			if (*end || !*argv[i]) {
				fprintf(stderr, "loom-doctor: --min-uapi wants a number, not '%s'\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("loom-doctor %s\n", LOOM_PROJECT_VERSION);
			return 0;
		} else {
			fprintf(stderr, "loom-doctor: unknown option '%s' (loom-doctor --help)\n",
				argv[i]);
			return 2;
		}
	}
	uname(&u);
	check_kernel(&u);
	check_headers(&u);
	if (check_module(&u) && (n = check_devices(nodes)) > 0) {
		for (int i = 0; i < n; i++)
			if (check_access(&nodes[i]))
				check_uapi(&nodes[i], min_uapi);
	}
	check_io_uring();
	printf("%s\n", failures ? "loom is not usable here: fix the FAIL lines above" :
				  "loom is ready to use");
	return failures ? 1 : 0;
}
