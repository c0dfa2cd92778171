// SPDX-License-Identifier: MIT
/*
 * The uapi is an ABI: once released, a struct's layout, an ioctl's number,
 * a register's offset and an encoding never change.  This test pins them,
 * so an accidental change fails here rather than in a user's program or a
 * driver built against an older header.  Adding is fine: extend the lists.
 */
#include <stddef.h>

#include "check.h"
#include "drm/loom_drm.h"
#include "loom_device.h"
#include "loom_image.h"

TEST(pci_identity_and_global_registers)
{
	CHECK_EQ(0x1234, LOOM_PCI_VENDOR_ID);
	CHECK_EQ(0x4c4d, LOOM_PCI_DEVICE_ID);
	CHECK_EQ(0x10000, LOOM_BAR0_SIZE);
	CHECK_EQ(0x0000, LOOM_REG_ID);
	CHECK_EQ(0x4c4f4f4d, LOOM_ID_MAGIC);
	CHECK_EQ(0x0004, LOOM_REG_VERSION);
	CHECK_EQ(0x0008, LOOM_REG_CAPS);
	CHECK_EQ(0x000c, LOOM_REG_SCRATCH);
	CHECK_EQ(0x0010, LOOM_REG_NUM_CORES);
	CHECK_EQ(0x0014, LOOM_REG_FABRIC);
	CHECK_EQ(0x0018, LOOM_REG_LIMITS);
	CHECK_EQ(0x001c, LOOM_REG_DEVICE_RESET);
	CHECK_EQ(0x0020, LOOM_REG_ERROR_STATUS);
	CHECK_EQ(3, LOOM_VERSION_MAJOR(LOOM_VERSION(3, 7)));
	CHECK_EQ(7, LOOM_VERSION_MINOR(LOOM_VERSION(3, 7)));
	/* 0.5: pipelined items, the on-device work stack (LOOM_CAP_RUN_WORK) */
	CHECK_EQ(1U << 9, LOOM_CAP_RUN_WORK);
	/* 0.6: DISPATCH_DENSE over a block of dimension 0 */
	CHECK_EQ(1U << 10, LOOM_CAP_DENSE_BLOCK);
	/* 0.7: LOOM_OP_ATOMIC */
	CHECK_EQ(1U << 11, LOOM_CAP_ATOMIC);
	/* 0.8: links of several channels */
	CHECK_EQ(0x00000008, LOOM_VERSION_CURRENT);
	CHECK_EQ(1U << 12, LOOM_CAP_LINK_CHANNELS);
	CHECK_EQ(0x00080003, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 2 + 2 * 1 + 4));
}

TEST(temporal_pes)
{
	CHECK_EQ(1U << 8, LOOM_CAP_PE_SLOTS);
	CHECK_EQ(8, LOOM_PE_SLOTS);
	CHECK_EQ(4, LOOM_FABRIC_SLOTS(0x00040808));
	CHECK_EQ(8, LOOM_FABRIC_WIDTH(0x00040808));
	CHECK_EQ(5, LOOM_SRC_PE);
	CHECK_EQ(6, LOOM_SRC_SLOT(0));
	CHECK_EQ(9, LOOM_SRC_SLOT(3));
	CHECK_EQ(13, LOOM_SRC_SLOT(LOOM_PE_SLOTS - 1));
	CHECK_EQ(1, LOOM_CONFIG_VERSION);
	CHECK_EQ(2, LOOM_CONFIG_VERSION_SLOTS);
	CHECK_EQ(1U << 1, LOOM_TILE_IMM_OPERAND);
	CHECK_EQ(3, LOOM_TILE_FLAGS_MASK);
	{
		struct loom_fabric_config h = { .version = 1, .slots = 3 };

		CHECK_EQ(1, LOOM_CONFIG_SLOTS(h.version, h.slots));
		h.version = LOOM_CONFIG_VERSION_SLOTS;
		CHECK_EQ(3, LOOM_CONFIG_SLOTS(h.version, h.slots));
		h.version = LOOM_CONFIG_VERSION_CHANNELS;
		CHECK_EQ(3, LOOM_CONFIG_SLOTS(h.version, h.slots));
	}
	CHECK_EQ(3, LOOM_CONFIG_VERSION_CHANNELS);
	CHECK_EQ(14, LOOM_SRC_CHAN0);
	CHECK_EQ(14, LOOM_SRC_CHAN(LOOM_DIR_N, 0));
	CHECK_EQ(14 + 8 + 3, LOOM_SRC_CHAN(LOOM_DIR_E, 3));
	CHECK_EQ(45, LOOM_SRC_CHAN_LAST);
	CHECK_EQ(LOOM_SRC_SLOT(LOOM_PE_SLOTS), LOOM_SRC_CHAN0);
	CHECK(!LOOM_SRC_IS_CHAN(LOOM_SRC_CHAN0 - 1));
	CHECK(LOOM_SRC_IS_CHAN(LOOM_SRC_CHAN0));
	CHECK(LOOM_SRC_IS_CHAN(LOOM_SRC_CHAN_LAST));
	CHECK(!LOOM_SRC_IS_CHAN(LOOM_SRC_CHAN_LAST + 1));
	CHECK(!LOOM_SRC_IS_CHAN(LOOM_SRC_N));
	CHECK_EQ(LOOM_DIR_E, LOOM_SRC_CHAN_DIR(LOOM_SRC_CHAN(LOOM_DIR_E, 3)));
	CHECK_EQ(3, LOOM_SRC_CHAN_INDEX(LOOM_SRC_CHAN(LOOM_DIR_E, 3)));
	CHECK_EQ(0x8000, LOOM_MSIX_TABLE_OFFSET);
	CHECK_EQ(0xc000, LOOM_MSIX_PBA_OFFSET);
}

TEST(core_registers)
{
	CHECK_EQ(0x1000, LOOM_CORE_BASE(0));
	CHECK_EQ(0x1100, LOOM_CORE_BASE(1));
	CHECK_EQ(0x00, LOOM_CORE_Q_BASE_LO);
	CHECK_EQ(0x10, LOOM_CORE_Q_TAIL);
	CHECK_EQ(0x14, LOOM_CORE_CTRL);
	CHECK_EQ(0x18, LOOM_CORE_STATUS);
	CHECK_EQ(0x1c, LOOM_CORE_PROGRESS);
	CHECK_EQ(0x24, LOOM_CORE_RESET);
	CHECK_EQ(0x28, LOOM_CORE_FAULT_INJECT);
	CHECK_EQ(0x34, LOOM_CORE_DUMP_SIZE);
	/* every core block fits below the MSI-X table */
	CHECK(LOOM_CORE_BASE(LOOM_MAX_CORES) <= LOOM_MSIX_TABLE_OFFSET);
}

TEST(memory_structures)
{
	CHECK_EQ(64, sizeof(struct loom_hw_job));
	CHECK_EQ(16, offsetof(struct loom_hw_job, pt_root));
	CHECK_EQ(32, offsetof(struct loom_hw_job, completion));
	CHECK_EQ(128, sizeof(struct loom_hw_completion));
	CHECK_EQ(32, offsetof(struct loom_hw_completion, counters));
	CHECK_EQ(64, sizeof(struct loom_hw_counters));
	CHECK_EQ(32, sizeof(struct loom_tile_config));
	CHECK_EQ(16, offsetof(struct loom_tile_config, imm));
	CHECK_EQ(4, sizeof(struct loom_port_binding));
	CHECK_EQ(16, sizeof(struct loom_fabric_config));
	CHECK_EQ(16 + 2 * 32 + 3 * 4, LOOM_CONFIG_SIZE(2, 3));
	CHECK_EQ(12, offsetof(struct loom_fabric_config, slots));
	CHECK_EQ(14, offsetof(struct loom_fabric_config, reserved));
	CHECK_EQ(16, sizeof(struct loom_hw_dump_tile));
	CHECK_EQ(112, sizeof(struct loom_hw_dump));
	CHECK_EQ(8, sizeof(struct loom_item_result));
	CHECK_EQ(8 + 8 * 5, LOOM_ITEM_RESULT_SIZE(5));
}

TEST(packets)
{
	CHECK_EQ(0x00040001, LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	CHECK_EQ(16, sizeof(struct loom_pkt_load_config));
	CHECK_EQ(8, sizeof(struct loom_pkt_set_operands));
	CHECK_EQ(8, sizeof(struct loom_pkt_dispatch_dense));
	CHECK_EQ(32, sizeof(struct loom_pkt_dispatch_items));
	CHECK_EQ(16, sizeof(struct loom_pkt_write));
	CHECK_EQ(6, LOOM_PKT_WRITE_COUNTERS);
	CHECK_EQ(7, LOOM_PKT_RUN_WORK);
	CHECK_EQ(56, sizeof(struct loom_pkt_run_work));
	CHECK_EQ(40, offsetof(struct loom_pkt_run_work, status_va));
	CHECK_EQ(48, offsetof(struct loom_pkt_run_work, flags));
	CHECK_EQ(16, sizeof(struct loom_hw_work_entry));
	CHECK_EQ(24, sizeof(struct loom_hw_work_record));
	CHECK_EQ(16, sizeof(struct loom_hw_work_status));
	CHECK_EQ(12, LOOM_STATUS_BAD_DESCRIPTOR);
	CHECK_EQ(34, LOOM_OP_SINK);
	CHECK_EQ(35, LOOM_OP_FADD);
	CHECK_EQ(41, LOOM_OP_FFALSE);
	CHECK_EQ(56, LOOM_OP_FTRUE);
	CHECK_EQ(62, LOOM_OP_FTOUI);
	CHECK_EQ(63, LOOM_OP_ATOMIC);
	CHECK_EQ(64, LOOM_OP_COUNT);
	CHECK_EQ(0x7fc00000, LOOM_F32_CANONICAL_NAN);
	CHECK_EQ(6, LOOM_ARG_F32);
	CHECK_EQ(7, LOOM_ARG_MEMREF_F32);
}

TEST(atomic_kinds)
{
	CHECK_EQ(0, LOOM_ATOMIC_ADDI);
	CHECK_EQ(1, LOOM_ATOMIC_ADDF);
	CHECK_EQ(2, LOOM_ATOMIC_MULI);
	CHECK_EQ(3, LOOM_ATOMIC_MULF);
	CHECK_EQ(4, LOOM_ATOMIC_MAXS);
	CHECK_EQ(5, LOOM_ATOMIC_MAXU);
	CHECK_EQ(6, LOOM_ATOMIC_MINS);
	CHECK_EQ(7, LOOM_ATOMIC_MINU);
	CHECK_EQ(8, LOOM_ATOMIC_MAXIMUMF);
	CHECK_EQ(9, LOOM_ATOMIC_MINIMUMF);
	CHECK_EQ(10, LOOM_ATOMIC_ANDI);
	CHECK_EQ(11, LOOM_ATOMIC_ORI);
	CHECK_EQ(12, LOOM_ATOMIC_XORI);
	CHECK_EQ(13, LOOM_ATOMIC_ASSIGN);
	CHECK_EQ(14, LOOM_ATOMIC_COUNT);
	CHECK_EQ(7, LOOM_MMU_FAULT_ALIGN);
}

TEST(mmu_format)
{
	CHECK_EQ(0x1ff, LOOM_PT_INDEX(0xff8000000000ULL, 0));
	CHECK_EQ(1, LOOM_PT_INDEX(0x40000000ULL, 1));
	CHECK_EQ(1, LOOM_PT_INDEX(0x200000ULL, 2));
	CHECK_EQ(1, LOOM_PT_INDEX(0x1000ULL, 3));
	CHECK_EQ(1, LOOM_PTE_VALID);
	CHECK_EQ(2, LOOM_PTE_READ);
	CHECK_EQ(4, LOOM_PTE_WRITE);
}

TEST(drm_interface)
{
	CHECK_EQ(16, sizeof(struct drm_loom_get_param));
	CHECK_EQ(0, offsetof(struct drm_loom_get_param, param));
	CHECK_EQ(4, offsetof(struct drm_loom_get_param, pad));
	CHECK_EQ(8, offsetof(struct drm_loom_get_param, value));
	CHECK_EQ(0xc0106440, DRM_IOCTL_LOOM_GET_PARAM);
	CHECK_EQ(0, DRM_LOOM_PARAM_HW_ID);
	CHECK_EQ(1, DRM_LOOM_PARAM_HW_VERSION);
	CHECK_EQ(2, DRM_LOOM_PARAM_HW_CAPS);
	CHECK_EQ(3, DRM_LOOM_PARAM_UAPI_VERSION);
	CHECK_EQ(4, DRM_LOOM_PARAM_PCI_ID);
	CHECK_EQ(5, DRM_LOOM_PARAM_NUM_CORES);
	CHECK_EQ(6, DRM_LOOM_PARAM_FABRIC_WIDTH);
	CHECK_EQ(7, DRM_LOOM_PARAM_FABRIC_HEIGHT);
	CHECK_EQ(8, DRM_LOOM_PARAM_HW_LIMITS);
	CHECK_EQ(9, DRM_LOOM_PARAM_FEATURES);
	CHECK_EQ(11, DRM_LOOM_PARAM_VA_END);
	CHECK_EQ(12, DRM_LOOM_PARAM_PE_SLOTS);
	CHECK_EQ(10, DRM_LOOM_UAPI_VERSION);
	CHECK(DRM_LOOM_UAPI_VERSION >= 3);
	CHECK_EQ(24, sizeof(struct drm_loom_bo_create));
	CHECK_EQ(16, sizeof(struct drm_loom_bo_mmap_offset));
	CHECK_EQ(16, sizeof(struct drm_loom_bo_wait));
	CHECK_EQ(8, sizeof(struct drm_loom_bo_ref));
	CHECK_EQ(72, sizeof(struct drm_loom_submit));
	CHECK_EQ(64, offsetof(struct drm_loom_submit, job_id));
	/* uapi 8 named the pad before job_id; nothing moved */
	CHECK_EQ(56, offsetof(struct drm_loom_submit, out_point));
	CHECK_EQ(16, sizeof(struct drm_loom_syncobj_point));
	CHECK_EQ(8, offsetof(struct drm_loom_syncobj_point, point));
	CHECK_EQ(2, DRM_LOOM_SUBMIT_TIMELINE);
	CHECK_EQ(1ULL << 9, DRM_LOOM_FEATURE_TIMELINE);
	/* uapi 9: BO_INFO, PRIME between loom devices */
	CHECK_EQ(0x06, DRM_LOOM_BO_INFO);
	CHECK_EQ(24, sizeof(struct drm_loom_bo_info));
	CHECK_EQ(8, offsetof(struct drm_loom_bo_info, va));
	CHECK_EQ(1ULL << 10, DRM_LOOM_FEATURE_PRIME);
	CHECK_EQ(128, sizeof(struct drm_loom_job_info));
	/* JOB_INFO's counters: the device's struct, where they always were */
	CHECK_EQ(56, offsetof(struct drm_loom_job_info, counters));
	/* uapi 10: JOB_INFO waits; flags was the pad, timeout_ns appended */
	CHECK_EQ(52, offsetof(struct drm_loom_job_info, flags));
	CHECK_EQ(120, offsetof(struct drm_loom_job_info, timeout_ns));
	CHECK_EQ(1, DRM_LOOM_JOB_INFO_WAIT);
	CHECK_EQ(DRM_LOOM_JOB_INFO_WAIT, DRM_LOOM_JOB_INFO_FLAGS);
	CHECK_EQ(1ULL << 11, DRM_LOOM_FEATURE_JOB_INFO_WAIT);
	/* the number the DRM core matches; the size changed with uapi 10 */
	CHECK_EQ(0x05, DRM_LOOM_JOB_INFO);
	CHECK_EQ(0xc0806445, DRM_IOCTL_LOOM_JOB_INFO);
	CHECK_EQ(0xc0186441, DRM_IOCTL_LOOM_BO_CREATE);
	CHECK_EQ(0xc0486444, DRM_IOCTL_LOOM_SUBMIT);
	CHECK_EQ(0x4c01, DRM_LOOM_URING_CMD_SUBMIT);
	/* the submit fits the 80-byte command area of a 128-byte SQE */
	CHECK(sizeof(struct drm_loom_submit) <= 80);
}

TEST(program_image)
{
	CHECK_EQ(0x42434c4c, LOOM_IMAGE_MAGIC);
	CHECK_EQ(32, sizeof(struct loom_image_info));
	CHECK_EQ(64, sizeof(struct loom_image_thread));
	CHECK_EQ(8, offsetof(struct loom_image_thread, arg_types));
	CHECK_EQ(24, offsetof(struct loom_image_thread, config_offset));
	CHECK_EQ(8, sizeof(struct loom_image_patch));
	CHECK_EQ(1, LOOM_DOMAIN_DENSE);
	CHECK_EQ(2, LOOM_DOMAIN_DYNAMIC_WORK);
	CHECK_EQ(5, LOOM_ARG_MEMREF_I64);
	CHECK_EQ(6, LOOM_PATCH_RESULT_VA);
	CHECK_EQ(0x4d534c4c, LOOM_SRCMAP_MAGIC);
	CHECK_EQ(32, sizeof(struct loom_srcmap_header));
	CHECK_EQ(24, sizeof(struct loom_srcmap_entry));
	CHECK_EQ(4, offsetof(struct loom_srcmap_entry, unit));
	CHECK_EQ(20, offsetof(struct loom_srcmap_entry, name));
	CHECK_EQ(5, LOOM_SRCMAP_HOST);
	CHECK_EQ(0x524d4c4c, LOOM_MEMREFS_MAGIC);
	CHECK_EQ(1, LOOM_MEMREFS_VERSION);
	CHECK_EQ(16, sizeof(struct loom_memref_header));
	CHECK_EQ(16, sizeof(struct loom_layout_entry));
	CHECK_EQ(8, offsetof(struct loom_layout_entry, value));
	CHECK_EQ(160, sizeof(struct loom_image_memref));
	CHECK_EQ(4, offsetof(struct loom_image_memref, arg));
	CHECK_EQ(5, offsetof(struct loom_image_memref, rank));
	CHECK_EQ(16, offsetof(struct loom_image_memref, offset));
	CHECK_EQ(32, offsetof(struct loom_image_memref, sizes));
	CHECK_EQ(96, offsetof(struct loom_image_memref, strides));
	CHECK_EQ(LOOM_MAX_RANK, LOOM_MEMREF_MAX_RANK);
	CHECK_EQ(4, LOOM_LAYOUT_ROW_MAJOR);
}

/* The errno every device status gives a job, as uapi.rst's table says. */
TEST(status_errnos)
{
	CHECK_EQ(0, drm_loom_status_errno(LOOM_STATUS_OK));
	CHECK_EQ(-EFAULT, drm_loom_status_errno(LOOM_STATUS_MMU_FAULT));
	CHECK_EQ(-EIO, drm_loom_status_errno(LOOM_STATUS_DMA_ERROR));
	CHECK_EQ(-ETIMEDOUT, drm_loom_status_errno(LOOM_STATUS_STOPPED));
	CHECK_EQ(-EDEADLK, drm_loom_status_errno(LOOM_STATUS_DEADLOCK));
	CHECK_EQ(-ENOSPC, drm_loom_status_errno(LOOM_STATUS_CHILD_OVERFLOW));
	CHECK_EQ(-EINVAL, drm_loom_status_errno(LOOM_STATUS_BAD_OPCODE));
	CHECK_EQ(-EINVAL, drm_loom_status_errno(0xffffffffu));
}

int main(void)
{
	RUN(pci_identity_and_global_registers);
	RUN(temporal_pes);
	RUN(core_registers);
	RUN(memory_structures);
	RUN(packets);
	RUN(atomic_kinds);
	RUN(mmu_format);
	RUN(drm_interface);
	RUN(program_image);
	RUN(status_errnos);
	return checks_done();
}
