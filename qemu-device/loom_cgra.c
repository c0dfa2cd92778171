/*
 * loom-cgra: a PCIe spatial-dataflow (CGRA) accelerator.
 *
 * The register file and every constant come from uapi/loom_device.h, shared
 * with the driver; Documentation/device.rst is the programming model.  This
 * file is the QEMU glue only: PCIe endpoint, BAR0 and reset.
 *
 * Usage:
 *   -device loom-cgra
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "loom_device.h"

#define TYPE_LOOM_CGRA "loom-cgra"
OBJECT_DECLARE_SIMPLE_TYPE(LoomCgraState, LOOM_CGRA)

struct LoomCgraState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    uint32_t scratch;
};

static uint64_t loom_cgra_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    LoomCgraState *s = opaque;

    if (size != 4) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "loom-cgra: %u-byte read at 0x%" HWADDR_PRIx
                      " (registers are 32-bit)\n", size, addr);
        return ~0ULL;
    }

    switch (addr) {
    case LOOM_REG_ID:
        return LOOM_ID_MAGIC;
    case LOOM_REG_VERSION:
        return LOOM_VERSION_CURRENT;
    case LOOM_REG_CAPS:
        return LOOM_CAP_SCRATCH;
    case LOOM_REG_SCRATCH:
        return s->scratch;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "loom-cgra: read of unimplemented register 0x%"
                      HWADDR_PRIx "\n", addr);
        return 0xffffffffU;
    }
}

static void loom_cgra_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    LoomCgraState *s = opaque;

    if (size != 4) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "loom-cgra: %u-byte write at 0x%" HWADDR_PRIx
                      " ignored (registers are 32-bit)\n", size, addr);
        return;
    }

    switch (addr) {
    case LOOM_REG_SCRATCH:
        s->scratch = val;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "loom-cgra: write to read-only or unimplemented "
                      "register 0x%" HWADDR_PRIx " ignored\n", addr);
        break;
    }
}

static const MemoryRegionOps loom_cgra_mmio_ops = {
    .read = loom_cgra_mmio_read,
    .write = loom_cgra_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Accept any size so a bad access is logged rather than faulted. */
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

static void loom_cgra_reset(DeviceState *dev)
{
    LoomCgraState *s = LOOM_CGRA(dev);

    s->scratch = 0;
}

static void loom_cgra_realize(PCIDevice *pdev, Error **errp)
{
    LoomCgraState *s = LOOM_CGRA(pdev);

    memory_region_init_io(&s->bar0, OBJECT(s), &loom_cgra_mmio_ops, s,
                          "loom-cgra-regs", LOOM_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    if (pcie_endpoint_cap_init(pdev, 0x80) < 0) {
        error_setg(errp, "loom-cgra: cannot add the PCIe capability");
        return;
    }
}

static void loom_cgra_exit(PCIDevice *pdev)
{
    pcie_cap_exit(pdev);
}

static const VMStateDescription loom_cgra_vmstate = {
    .name = TYPE_LOOM_CGRA,
    .unmigratable = 1,
};

static void loom_cgra_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = loom_cgra_realize;
    k->exit = loom_cgra_exit;
    k->vendor_id = LOOM_PCI_VENDOR_ID;
    k->device_id = LOOM_PCI_DEVICE_ID;
    k->revision = LOOM_PCI_REVISION;
    k->class_id = LOOM_PCI_CLASS;
    dc->desc = "loom spatial-dataflow (CGRA) accelerator";
    dc->reset = loom_cgra_reset;
    dc->vmsd = &loom_cgra_vmstate;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo loom_cgra_info = {
    .name = TYPE_LOOM_CGRA,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(LoomCgraState),
    .class_init = loom_cgra_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void loom_cgra_register_types(void)
{
    type_register_static(&loom_cgra_info);
}

type_init(loom_cgra_register_types)
