// SPDX-License-Identifier: GPL-2.0
/*
 * The loom render node and GET_PARAM: the node exists for every device, the
 * driver's answers match the device's own registers, and bad requests get
 * the documented errno without side effects.
 */
#include "kselftest_harness.h"
#include "loom_selftest.h"

TEST(one_render_node_per_device)
{
	int expected = loom_expected_devices();
	int found = loom_count_nodes();

	/* ASSERT_* expand to a loop: braces keep the else attached. */
	if (expected < 0) {
		ASSERT_LE(1, found);
	} else {
		ASSERT_EQ(expected, found);
	}
}

FIXTURE(loom) {
	struct loom_node node;
	int fd;
	volatile uint32_t *bar;
};

FIXTURE_VARIANT(loom) {
	int index;
};

FIXTURE_VARIANT_ADD(loom, device0) { .index = 0 };
FIXTURE_VARIANT_ADD(loom, device1) { .index = 1 };

FIXTURE_SETUP(loom)
{
	struct loom_node nodes[LOOM_MAX_NODES];
	int n = loom_find_nodes(nodes, LOOM_MAX_NODES);

	self->fd = -1;
	self->bar = NULL;
	if (variant->index >= n)
		SKIP(return, "the VM has %d loom device(s)", n);
	self->node = nodes[variant->index];
	self->fd = open(self->node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->bar = loom_map_bar0(&self->node);
	ASSERT_NE(NULL, self->bar) TH_LOG("mmap of %s/resource0: %s",
					   self->node.sysfs, strerror(errno));
}

FIXTURE_TEARDOWN(loom)
{
	if (self->bar)
		munmap((void *)self->bar, LOOM_BAR0_SIZE);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(loom, is_a_render_node)
{
	drmVersionPtr v = drmGetVersion(self->fd);

	ASSERT_NE(NULL, v);
	EXPECT_STREQ("loom", v->name);
	drmFreeVersion(v);
	EXPECT_EQ(DRM_NODE_RENDER, drmGetNodeTypeFromFd(self->fd));
}

TEST_F(loom, hw_id_matches_register)
{
	uint64_t id = test_get_param(self->fd, DRM_LOOM_PARAM_HW_ID);

	EXPECT_EQ(loom_reg(self->bar, LOOM_REG_ID), id);
	EXPECT_EQ(LOOM_ID_MAGIC, id);
}

TEST_F(loom, hw_version_matches_register)
{
	uint64_t version = test_get_param(self->fd, DRM_LOOM_PARAM_HW_VERSION);

	EXPECT_EQ(loom_reg(self->bar, LOOM_REG_VERSION), version);
	EXPECT_EQ(LOOM_VERSION_CURRENT, version);
}

TEST_F(loom, hw_caps_match_register)
{
	uint64_t caps = test_get_param(self->fd, DRM_LOOM_PARAM_HW_CAPS);

	EXPECT_EQ(loom_reg(self->bar, LOOM_REG_CAPS), caps);
	EXPECT_NE(0, caps & LOOM_CAP_SCRATCH);
}

TEST_F(loom, uapi_version)
{
	EXPECT_EQ(DRM_LOOM_UAPI_VERSION,
		  test_get_param(self->fd, DRM_LOOM_PARAM_UAPI_VERSION));
}

TEST_F(loom, pci_id_matches_config_space)
{
	uint64_t id = test_get_param(self->fd, DRM_LOOM_PARAM_PCI_ID);

	EXPECT_EQ(loom_sysfs_hex(&self->node, "vendor"), id >> 16);
	EXPECT_EQ(loom_sysfs_hex(&self->node, "device"), id & 0xffff);
	EXPECT_EQ(LOOM_PCI_VENDOR_ID, id >> 16);
	EXPECT_EQ(LOOM_PCI_DEVICE_ID, id & 0xffff);
	EXPECT_EQ(LOOM_PCI_CLASS, loom_sysfs_hex(&self->node, "class") >> 8);
}

TEST_F(loom, unknown_param_is_einval)
{
	test_err_get_param(EINVAL, self->fd, DRM_LOOM_PARAM_PCI_ID + 1, 0);
	test_err_get_param(EINVAL, self->fd, 0x7fffffff, 0);
	test_err_get_param(EINVAL, self->fd, 0xffffffff, 0);
}

TEST_F(loom, nonzero_pad_is_einval)
{
	test_err_get_param(EINVAL, self->fd, DRM_LOOM_PARAM_HW_ID, 1);
	test_err_get_param(EINVAL, self->fd, DRM_LOOM_PARAM_HW_ID, 0x80000000);
}

TEST_F(loom, bad_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_GET_PARAM, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_LOOM_GET_PARAM, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(loom, unknown_ioctl_fails)
{
	struct drm_loom_get_param args = { 0 };
	unsigned long next = DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_GET_PARAM + 1,
				      struct drm_loom_get_param);
	unsigned long last = DRM_IOWR(DRM_COMMAND_END - 1,
				      struct drm_loom_get_param);

	EXPECT_EQ(-1, ioctl(self->fd, next, &args));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, last, &args));
	EXPECT_EQ(EINVAL, errno);
}

/* A short struct cannot reach past its end: the kernel zero-extends it. */
TEST_F(loom, short_struct_reads_as_zero_pad)
{
	struct { uint32_t param; } args = { DRM_LOOM_PARAM_HW_ID };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_GET_PARAM,
				     args);

	EXPECT_EQ(0, ioctl(self->fd, cmd, &args));
}

TEST_HARNESS_MAIN
