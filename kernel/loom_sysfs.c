// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: sysfs, the operator's controls
 *
 * The PCI device's directory gets a group "loom" (the driver's dev_groups:
 * created after probe, removed before remove()):
 *
 * reset_core (0200)
 *	Write a core index: the core is stopped and reset, the job it was
 *	running fails with ECANCELED, and the jobs queued behind it run.
 * reset_device (0200)
 *	Write 1: every core is reset so, at once.  (The PCI core's own
 *	"reset" file resets the function instead, and runs the interrupted
 *	jobs again.)
 *
 * A write returns once the reset is done, EBUSY while a reset of the
 * function is under way, ENODEV after the device went away.
 */

#include <linux/pci.h>
#include <linux/sysfs.h>
#include <drm/drm_drv.h>

#include "loom_drv.h"

static struct loom_device *dev_to_loom(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t reset_core_store(struct device *dev, struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct loom_device *ldev = dev_to_loom(dev);
	unsigned int index;
	int ret, idx;

	ret = kstrtouint(buf, 0, &index);
	if (ret)
		return ret;
	if (index >= ldev->num_cores)
		return -EINVAL;
	if (!drm_dev_enter(&ldev->drm, &idx))
		return -ENODEV;
	ret = loom_core_reset(&ldev->cores[index]);
	drm_dev_exit(idx);
	return ret ? ret : count;
}
static DEVICE_ATTR_WO(reset_core);

static ssize_t reset_device_store(struct device *dev, struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct loom_device *ldev = dev_to_loom(dev);
	bool reset;
	int ret, idx;

	ret = kstrtobool(buf, &reset);
	if (ret)
		return ret;
	if (!reset)
		return -EINVAL;
	if (!drm_dev_enter(&ldev->drm, &idx))
		return -ENODEV;
	ret = loom_device_reset(ldev);
	drm_dev_exit(idx);
	return ret ? ret : count;
}
static DEVICE_ATTR_WO(reset_device);

static struct attribute *loom_sysfs_attrs[] = {
	&dev_attr_reset_core.attr,
	&dev_attr_reset_device.attr,
	NULL,
};

static const struct attribute_group loom_sysfs_group = {
	.name = "loom",
	.attrs = loom_sysfs_attrs,
};

const struct attribute_group *loom_sysfs_groups[] = {
	&loom_sysfs_group,
	NULL,
};
