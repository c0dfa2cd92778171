/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * loom-cgra device ABI: PCI identity and the BAR0 register file.
 *
 * This header is the single definition of the hardware interface.  The QEMU
 * device model, loom.ko, libloom and loomc all include it; nothing restates
 * these values.  Documentation/device.rst describes the programming model.
 *
 * All registers are little-endian and 32 bits wide unless stated otherwise.
 * Reads of unimplemented offsets return 0xffffffff; writes to read-only or
 * unimplemented registers are ignored (and logged by the device model).
 */
#ifndef LOOM_DEVICE_H
#define LOOM_DEVICE_H

/* PCI identity.  0x1234 is the ID QEMU's own experimental devices use. */
#define LOOM_PCI_VENDOR_ID	0x1234
#define LOOM_PCI_DEVICE_ID	0x4c4d	/* "LM" */
#define LOOM_PCI_REVISION	0x01
#define LOOM_PCI_CLASS		0x1200	/* processing accelerator */

/* BAR0: 64-bit memory BAR holding the register file. */
#define LOOM_BAR0_SIZE		0x10000

/* LOOM_REG_ID (RO): reads LOOM_ID_MAGIC, "LOOM" in ASCII. */
#define LOOM_REG_ID		0x0000
#define LOOM_ID_MAGIC		0x4c4f4f4dU

/*
 * LOOM_REG_VERSION (RO): device ABI version.  A driver accepts any device
 * whose major equals the major it was written for; minors only add.
 */
#define LOOM_REG_VERSION	0x0004
#define LOOM_VERSION_MAJOR_SHIFT	16
#define LOOM_VERSION_MINOR_MASK		0xffffU
#define LOOM_VERSION(major, minor)	(((major) << LOOM_VERSION_MAJOR_SHIFT) | (minor))
#define LOOM_VERSION_MAJOR(v)		((v) >> LOOM_VERSION_MAJOR_SHIFT)
#define LOOM_VERSION_MINOR(v)		((v) & LOOM_VERSION_MINOR_MASK)
#define LOOM_VERSION_CURRENT		LOOM_VERSION(0, 1)

/*
 * LOOM_REG_CAPS (RO): capability bits; a set bit promises the feature.
 * Bits not defined here read as zero.
 */
#define LOOM_REG_CAPS		0x0008
#define LOOM_CAP_SCRATCH	(1U << 0)	/* LOOM_REG_SCRATCH is implemented */

/*
 * LOOM_REG_SCRATCH (RW): holds the last value written; reset clears it.
 * Drivers use it to prove MMIO round trips.
 */
#define LOOM_REG_SCRATCH	0x000c

#endif /* LOOM_DEVICE_H */
