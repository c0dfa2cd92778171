// SPDX-License-Identifier: GPL-2.0
/*
 * The loom render node and GET_PARAM: the node exists for every device, the
 * driver's answers match the device's own registers, and bad requests get
 * the documented errno without side effects.
 */
#include "kselftest_harness.h"
#include "loom_selftest.h"

TEST(one_node_per_device)
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

/* Every loom device of the VM, each test looping over all of them. */
FIXTURE(loom) {
	struct loom_node node[LOOM_MAX_NODES];
	int fd[LOOM_MAX_NODES];
	volatile uint32_t *bar[LOOM_MAX_NODES];
	int n;
};

FIXTURE_SETUP(loom)
{
	self->n = loom_find_nodes(self->node, LOOM_MAX_NODES);
	ASSERT_LE(1, self->n);
	for (int i = 0; i < self->n; i++) {
		self->fd[i] = open(self->node[i].path, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->fd[i]);
		self->bar[i] = loom_map_bar0(&self->node[i]);
		ASSERT_NE(NULL, self->bar[i]) TH_LOG("mmap of %s/resource0: %s",
						      self->node[i].sysfs,
						      strerror(errno));
	}
}

FIXTURE_TEARDOWN(loom)
{
	for (int i = 0; i < self->n; i++) {
		if (self->bar[i])
			munmap((void *)self->bar[i], LOOM_BAR0_SIZE);
		close(self->fd[i]);
	}
}

/*
 * DEVICE_TEST(name) { ... } runs its body once per loom device, with fd,
 * bar (BAR0 mapped through sysfs) and node in scope.
 */
#define DEVICE_TEST(name)						\
	static void name##_one(struct __test_metadata *_metadata, int fd, \
			       volatile uint32_t *bar,			\
			       const struct loom_node *node);		\
	TEST_F(loom, name)						\
	{								\
		for (int i = 0; i < self->n; i++)			\
			name##_one(_metadata, self->fd[i], self->bar[i], \
				   &self->node[i]);			\
	}								\
	static void name##_one(struct __test_metadata *_metadata,	\
			       int fd __attribute__((unused)),		\
			       volatile uint32_t *bar __attribute__((unused)), \
			       const struct loom_node *node __attribute__((unused)))

/*
 * An accel node (char major 261, /dev/accel) where the kernel has the accel
 * subsystem, else a render node; the ACCEL_NODE feature bit says which.
 */
DEVICE_TEST(is_a_render_or_accel_node)
{
	uint64_t features = test_get_param(fd, DRM_LOOM_PARAM_FEATURES);
	drmVersionPtr v = drmGetVersion(fd);
	struct stat st;

	ASSERT_NE(NULL, v);
	EXPECT_STREQ("loom", v->name);
	drmFreeVersion(v);
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(node->accel, !!(features & DRM_LOOM_FEATURE_ACCEL_NODE));
	if (node->accel) {
		EXPECT_EQ(261, major(st.st_rdev));
		EXPECT_EQ(0, strncmp(node->path, "/dev/accel/accel", 16));
	} else {
		EXPECT_EQ(DRM_NODE_RENDER, drmGetNodeTypeFromFd(fd));
	}
}

DEVICE_TEST(hw_id_matches_register)
{
	uint64_t id = test_get_param(fd, DRM_LOOM_PARAM_HW_ID);

	EXPECT_EQ(loom_reg(bar, LOOM_REG_ID), id);
	EXPECT_EQ(LOOM_ID_MAGIC, id);
}

DEVICE_TEST(hw_version_matches_register)
{
	uint64_t version = test_get_param(fd, DRM_LOOM_PARAM_HW_VERSION);

	EXPECT_EQ(loom_reg(bar, LOOM_REG_VERSION), version);
	EXPECT_EQ(LOOM_VERSION_CURRENT, version);
}

DEVICE_TEST(hw_caps_match_register)
{
	uint64_t caps = test_get_param(fd, DRM_LOOM_PARAM_HW_CAPS);

	EXPECT_EQ(loom_reg(bar, LOOM_REG_CAPS), caps);
	EXPECT_NE(0, caps & LOOM_CAP_SCRATCH);
	EXPECT_NE(0, caps & LOOM_CAP_QUEUES);
	EXPECT_NE(0, caps & LOOM_CAP_MMU);
	EXPECT_NE(0, caps & LOOM_CAP_MSIX);
	EXPECT_NE(0, caps & LOOM_CAP_TLB);	/* ABI 0.3 */
	EXPECT_NE(0, caps & LOOM_CAP_PE_SLOTS);	/* ABI 0.4 */
	EXPECT_NE(0, caps & LOOM_CAP_RUN_WORK);	/* ABI 0.5 */
	EXPECT_NE(0, caps & LOOM_CAP_DENSE_BLOCK);	/* ABI 0.6 */
	EXPECT_NE(0, caps & LOOM_CAP_ATOMIC);	/* ABI 0.7 */
	EXPECT_NE(0, caps & LOOM_CAP_LINK_CHANNELS);	/* ABI 0.8 */
}

DEVICE_TEST(geometry_matches_registers)
{
	uint32_t fabric = loom_reg(bar, LOOM_REG_FABRIC);

	EXPECT_EQ(loom_reg(bar, LOOM_REG_NUM_CORES),
		  test_get_param(fd, DRM_LOOM_PARAM_NUM_CORES));
	EXPECT_EQ(LOOM_FABRIC_WIDTH(fabric),
		  test_get_param(fd, DRM_LOOM_PARAM_FABRIC_WIDTH));
	EXPECT_EQ(LOOM_FABRIC_HEIGHT(fabric),
		  test_get_param(fd, DRM_LOOM_PARAM_FABRIC_HEIGHT));
	EXPECT_EQ(loom_reg(bar, LOOM_REG_LIMITS),
		  test_get_param(fd, DRM_LOOM_PARAM_HW_LIMITS));
	EXPECT_EQ(LOOM_PE_SLOTS, LOOM_FABRIC_SLOTS(fabric));
	EXPECT_EQ(LOOM_FABRIC_SLOTS(fabric),
		  test_get_param(fd, DRM_LOOM_PARAM_PE_SLOTS));
}

/* The -device loom-cgra properties the VM was started with reach the guest. */
DEVICE_TEST(properties_reach_the_guest)
{
	unsigned w = 0, h = 0;
	uint64_t limits;

	ASSERT_EQ(2, sscanf(loom_expected_prop("fabric", "4x4"), "%ux%u", &w, &h));
	EXPECT_EQ(atoi(loom_expected_prop("cores", "2")),
		  test_get_param(fd, DRM_LOOM_PARAM_NUM_CORES));
	EXPECT_EQ(w, test_get_param(fd, DRM_LOOM_PARAM_FABRIC_WIDTH));
	EXPECT_EQ(h, test_get_param(fd, DRM_LOOM_PARAM_FABRIC_HEIGHT));
	limits = test_get_param(fd, DRM_LOOM_PARAM_HW_LIMITS);
	EXPECT_EQ(LOOM_MAX_RANK, LOOM_LIMITS_MAX_RANK(limits));
	EXPECT_LE(1, LOOM_LIMITS_FIFO_DEPTH(limits));
	EXPECT_LE(1, LOOM_LIMITS_MEM_PORTS(limits));
	EXPECT_LE(1, LOOM_LIMITS_LOAD_LATENCY(limits));
}

DEVICE_TEST(uapi_version)
{
	EXPECT_EQ(DRM_LOOM_UAPI_VERSION,
		  test_get_param(fd, DRM_LOOM_PARAM_UAPI_VERSION));
}

DEVICE_TEST(pci_id_matches_config_space)
{
	uint64_t id = test_get_param(fd, DRM_LOOM_PARAM_PCI_ID);

	EXPECT_EQ(loom_sysfs_hex(node, "vendor"), id >> 16);
	EXPECT_EQ(loom_sysfs_hex(node, "device"), id & 0xffff);
	EXPECT_EQ(LOOM_PCI_VENDOR_ID, id >> 16);
	EXPECT_EQ(LOOM_PCI_DEVICE_ID, id & 0xffff);
	EXPECT_EQ(LOOM_PCI_CLASS, loom_sysfs_hex(node, "class") >> 8);
}

DEVICE_TEST(unknown_param_is_einval)
{
	test_err_get_param(EINVAL, fd, DRM_LOOM_PARAM_PE_SLOTS + 1, 0);
	test_err_get_param(EINVAL, fd, 0x7fffffff, 0);
	test_err_get_param(EINVAL, fd, 0xffffffff, 0);
}

DEVICE_TEST(nonzero_pad_is_einval)
{
	test_err_get_param(EINVAL, fd, DRM_LOOM_PARAM_HW_ID, 1);
	test_err_get_param(EINVAL, fd, DRM_LOOM_PARAM_HW_ID, 0x80000000);
}

DEVICE_TEST(bad_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(fd, DRM_IOCTL_LOOM_GET_PARAM, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, DRM_IOCTL_LOOM_GET_PARAM, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

DEVICE_TEST(unknown_ioctl_fails)
{
	struct drm_loom_get_param args = { 0 };
	unsigned long next = DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_GET_PARAM + 1,
				      struct drm_loom_get_param);
	unsigned long last = DRM_IOWR(DRM_COMMAND_END - 1,
				      struct drm_loom_get_param);

	EXPECT_EQ(-1, ioctl(fd, next, &args));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, last, &args));
	EXPECT_EQ(EINVAL, errno);
}

/* A short struct cannot reach past its end: the kernel zero-extends it. */
DEVICE_TEST(short_struct_reads_as_zero_pad)
{
	struct { uint32_t param; } args = { DRM_LOOM_PARAM_HW_ID };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_LOOM_GET_PARAM,
				     args);

	EXPECT_EQ(0, ioctl(fd, cmd, &args));
}

/* The device reaches memory through LOOM_PTE_ADDR_MASK: 52 address bits. */
DEVICE_TEST(dma_mask_is_the_pte_address_width)
{
	char path[96];
	int bits = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dma_mask_bits", node->sysfs);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fscanf(f, "%d", &bits));
	fclose(f);
	EXPECT_EQ(64 - __builtin_clzll(LOOM_PTE_ADDR_MASK), bits);
}

/*
 * JOB_INFO keeps at most DRM_LOOM_DUMP_BYTES_PER_FILE bytes of state dumps
 * per file; later failed jobs report none.  Only reachable when the fabric
 * is large enough that the cap binds before the 256 records recycle (the
 * make test stage with a 16x14 fabric); skipped otherwise.
 */
DEVICE_TEST(state_dumps_are_capped_per_file)
{
	uint32_t tiles = test_get_param(fd, DRM_LOOM_PARAM_FABRIC_WIDTH) *
			 test_get_param(fd, DRM_LOOM_PARAM_FABRIC_HEIGHT);
	uint32_t size = LOOM_DUMP_SIZE(tiles), fit = DRM_LOOM_DUMP_BYTES_PER_FILE / size;
	struct loom_test_bo cmd;
	struct loom_cmd c;
	uint32_t sync;
	int own;

	if (fit + 2 > 256)
		SKIP(return, "%u-byte dumps: the cap binds only past 256 jobs", size);
	/* a file of its own: the cap is per file */
	own = open(node->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, own);
	cmd = loom_bo(own, 4096);
	ASSERT_NE(NULL, cmd.map);
	c = (struct loom_cmd){ cmd.map, 0 };
	/* a dispatch before any configuration: fails, with a dump */
	cmd_dense(&c, 0, NULL);
	ASSERT_EQ(0, drmSyncobjCreate(own, 0, &sync));
	for (uint32_t i = 0; i < fit + 2; i++) {
		struct drm_loom_submit s = {
			.cmd_handle = cmd.handle, .cmd_size = c.len * 4, .out_syncobj = sync,
		};
		struct drm_loom_job_info info;

		ASSERT_EQ(0, _test_submit(own, &s));
		ASSERT_EQ(0, loom_syncobj_wait(own, sync, 10000));
		ASSERT_EQ(0, _test_job_info(own, s.job_id, &info));
		EXPECT_EQ(-EINVAL, info.error);
		EXPECT_EQ(LOOM_STATUS_NO_CONFIG, info.hw_status);
		EXPECT_EQ(i < fit ? size : 0, info.dump_size) TH_LOG("job %u of %u", i, fit);
	}
	close(own);
}

TEST_HARNESS_MAIN
