/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: loom device state shared by the driver's files
 */
#ifndef LOOM_DRV_H
#define LOOM_DRV_H

#include <linux/io.h>
#include <linux/pci.h>
#include <drm/drm_device.h>

#include "loom_device.h"

/**
 * struct loom_device - one loom-cgra PCI function
 * @drm: the DRM device; its lifetime (devm/drmm) bounds everything below
 * @pdev: the PCI function
 * @regs: BAR0, mapped for the device's lifetime by pcim
 * @hw_version: LOOM_REG_VERSION read at probe
 * @hw_caps: LOOM_REG_CAPS read at probe
 * @num_cores: LOOM_REG_NUM_CORES read at probe
 * @fabric: LOOM_REG_FABRIC read at probe
 * @limits: LOOM_REG_LIMITS read at probe
 */
struct loom_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 hw_version;
	u32 hw_caps;
	u32 num_cores;
	u32 fabric;
	u32 limits;
};

static inline struct loom_device *to_loom_device(struct drm_device *drm)
{
	return container_of(drm, struct loom_device, drm);
}

static inline u32 loom_read(struct loom_device *ldev, u32 reg)
{
	return readl(ldev->regs + reg);
}

static inline void loom_write(struct loom_device *ldev, u32 reg, u32 val)
{
	writel(val, ldev->regs + reg);
}

#endif /* LOOM_DRV_H */
