// SPDX-License-Identifier: MIT
/*
 * DOC: devices
 *
 * Opening loom nodes, accel or render (by path, first, n-th, all), and
 * reading what the driver tells about the device once at open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "loom_device.h"
#include "device_internal.h"

/*
 * Where loom's nodes are, in the order they are numbered: a kernel gives
 * loom accel nodes where it has the accel subsystem (6.2+), render nodes
 * before.
 */
static const struct {
	const char *fmt;
	int first, end;
} node_kinds[] = {
	{ "/dev/accel/accel%d", 0, 64 },
	{ "/dev/dri/renderD%d", 128, 192 },
};

/* GET_PARAM through libdrm (drmIoctl restarts on EINTR). */
int loom_get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_loom_get_param p = { .param = param };

	if (drmIoctl(fd, DRM_IOCTL_LOOM_GET_PARAM, &p))
		return -errno;
	*value = p.value;
	return 0;
}

static bool fd_is_loom(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ok = v && v->name && strcmp(v->name, "loom") == 0;

	drmFreeVersion(v);
	return ok;
}

/* Parameters of uapi 2 are required; FEATURES (uapi 3) defaults to SUBMIT. */
static int read_info(int fd, struct loom_device_info *info)
{
	uint64_t v[8] = { 0 };
	static const uint32_t params[] = {
		DRM_LOOM_PARAM_UAPI_VERSION, DRM_LOOM_PARAM_NUM_CORES,
		DRM_LOOM_PARAM_FABRIC_WIDTH, DRM_LOOM_PARAM_FABRIC_HEIGHT,
		DRM_LOOM_PARAM_HW_LIMITS, DRM_LOOM_PARAM_HW_VERSION,
		DRM_LOOM_PARAM_HW_CAPS,
	};
	int ret;

	for (unsigned i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		ret = loom_get_param(fd, params[i], &v[i]);
		if (ret)
			return ret == -EINVAL ? LOOM_E_NOT_SUPPORTED : ret;
	}
	info->uapi_version = v[0];
	info->num_cores = v[1];
	info->fabric_width = v[2];
	info->fabric_height = v[3];
	info->max_rank = LOOM_LIMITS_MAX_RANK((uint32_t)v[4]);
	info->hw_version = v[5];
	info->hw_caps = v[6];
	info->features = DRM_LOOM_FEATURE_SUBMIT;
	info->pe_slots = 1;
	if (info->uapi_version >= 7) {
		ret = loom_get_param(fd, DRM_LOOM_PARAM_PE_SLOTS, &v[7]);
		if (ret)
			return ret;
		info->pe_slots = v[7];
	}
	if (info->uapi_version >= 3)
		return loom_get_param(fd, DRM_LOOM_PARAM_FEATURES, &info->features);
	return 0;
}

/* What every device has, whatever carries its requests. */
static int device_init(struct loom_device *dev)
{
	dev->arenas = calloc(dev->info.num_cores ? dev->info.num_cores : 1,
			     sizeof(*dev->arenas));
	if (!dev->arenas)
		return -ENOMEM;
	for (unsigned q = 0; q < dev->info.num_cores; q++)
		pthread_mutex_init(&dev->arenas[q].lock, NULL);
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->bo_lock, NULL);
	return 0;
}

int loom_device_open_backend(const struct loom_backend *be, void *priv,
			     const struct loom_device_info *info,
			     struct loom_device **out)
{
	struct loom_device *dev = calloc(1, sizeof(*dev));
	int ret;

	if (!dev)
		return -ENOMEM;
	dev->be = be;
	dev->priv = priv;
	dev->fd = -1;
	dev->info = *info;
	ret = device_init(dev);
	if (ret) {
		free(dev);
		return ret;
	}
	*out = dev;
	return 0;
}

int loom_device_open(const char *path, struct loom_device **out)
{
	struct loom_device *dev;
	int ret;

	if (!path || !out || strlen(path) >= sizeof(dev->info.path))
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->be = &loom_drm_backend;
	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = errno == ENOENT ? LOOM_E_NO_DEVICE : -errno;
		goto err_free;
	}
	ret = LOOM_E_NO_DEVICE;
	if (!fd_is_loom(dev->fd))
		goto err_close;
	ret = read_info(dev->fd, &dev->info);
	if (ret)
		goto err_close;
	snprintf(dev->info.path, sizeof(dev->info.path), "%s", path);
	ret = device_init(dev);
	if (ret)
		goto err_close;
	*out = dev;
	return 0;

err_close:
	close(dev->fd);
err_free:
	free(dev);
	return ret;
}

/* The @n-th path of LOOM_DEVICE's comma-separated list. */
static int nth_named_node(const char *list, unsigned n, char *path, size_t size)
{
	size_t len;

	while (n--) {
		list = strchr(list, ',');
		if (!list)
			return LOOM_E_NO_DEVICE;
		list++;
	}
	len = strcspn(list, ",");
	if (len == 0 || len >= size)
		return LOOM_E_NO_DEVICE;
	memcpy(path, list, len);
	path[len] = 0;
	return 0;
}

/*
 * Path of the @n-th loom node: of LOOM_DEVICE's list when it is set, else
 * scanning accel nodes, then render nodes, in minor order.
 */
static int nth_node(unsigned n, char *path, size_t size)
{
	const char *named = getenv("LOOM_DEVICE");

	if (named && *named)
		return nth_named_node(named, n, path, size);
	for (size_t k = 0; k < sizeof(node_kinds) / sizeof(node_kinds[0]); k++) {
		for (int minor = node_kinds[k].first; minor < node_kinds[k].end; minor++) {
			int fd;
			bool loom;

			snprintf(path, size, node_kinds[k].fmt, minor);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			loom = fd_is_loom(fd);
			close(fd);
			if (loom && n-- == 0)
				return 0;
		}
	}
	return LOOM_E_NO_DEVICE;
}

int loom_device_open_nth(unsigned n, struct loom_device **out)
{
	char path[32];
	int ret = nth_node(n, path, sizeof(path));

	return ret ? ret : loom_device_open(path, out);
}

int loom_device_open_first(struct loom_device **out)
{
	return loom_device_open_nth(0, out);
}

int loom_device_open_all(struct loom_device **devs, unsigned max)
{
	unsigned n;
	int ret = 0;

	if (!devs)
		return -EINVAL;
	for (n = 0; n < max; n++) {
		ret = loom_device_open_nth(n, &devs[n]);
		if (ret)
			break;
	}
	if (ret == 0 || ret == LOOM_E_NO_DEVICE)
		return n;
	while (n)
		loom_device_close(devs[--n]);
	return ret;
}

void loom_device_close(struct loom_device *dev)
{
	struct loom_plan *p, *next;

	if (!dev)
		return;
	loom_device_release_launches(dev);
	for (p = dev->configs; p; p = next) {
		next = p->next;
		loom_bo_free(p->config);
		free(p);
	}
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->bo_lock);
	dev->be->close(dev);
	free(dev->bos);
	free(dev);
}

const struct loom_device_info *loom_device_info(const struct loom_device *dev)
{
	return &dev->info;
}

int loom_device_fd(const struct loom_device *dev)
{
	return dev->fd;
}
