// SPDX-License-Identifier: GPL-2.0
/*
 * loom.ko's lifetime: it unloads and reloads cleanly, refuses to unload
 * while a file is open, and survives its device being unbound under an open
 * file (the file then gets ENODEV, not a crash).
 */
#include "kselftest_harness.h"
#include "loom_selftest.h"

static int run(const char *cmd)
{
	int status = system(cmd);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int loom_loaded(void)
{
	return access("/sys/module/loom", F_OK) == 0;
}

TEST(unload_and_reload)
{
	int before = loom_count_nodes();

	ASSERT_LE(1, before);
	ASSERT_EQ(0, run("rmmod loom"));
	EXPECT_FALSE(loom_loaded());
	EXPECT_EQ(0, loom_count_nodes());

	ASSERT_EQ(0, run("modprobe loom"));
	EXPECT_TRUE(loom_loaded());
	ASSERT_EQ(before, loom_count_nodes());
}

TEST(reload_gives_working_nodes)
{
	struct loom_node nodes[LOOM_MAX_NODES];
	int n, i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, run("rmmod loom"));
		ASSERT_EQ(0, run("modprobe loom"));
	}
	n = loom_find_nodes(nodes, LOOM_MAX_NODES);
	ASSERT_LE(1, n);
	for (i = 0; i < n; i++) {
		int fd = open(nodes[i].path, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd);
		EXPECT_EQ(LOOM_ID_MAGIC, test_get_param(fd, DRM_LOOM_PARAM_HW_ID));
		close(fd);
	}
}

TEST(unload_refused_while_open)
{
	struct loom_node node;
	int fd;

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);

	EXPECT_NE(0, run("rmmod loom 2>/dev/null"));
	EXPECT_TRUE(loom_loaded());
	EXPECT_EQ(LOOM_ID_MAGIC, test_get_param(fd, DRM_LOOM_PARAM_HW_ID));

	close(fd);
	EXPECT_EQ(0, run("rmmod loom"));
	EXPECT_EQ(0, run("modprobe loom"));
}

TEST(unbind_under_open_file)
{
	struct loom_node node;
	char link[128], cmd[256];
	const char *slot;
	ssize_t len;
	uint64_t v = 0;
	int fd;

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	len = readlink(node.sysfs, link, sizeof(link) - 1);
	ASSERT_LT(0, len);
	link[len] = 0;
	slot = strrchr(link, '/') + 1;

	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);

	snprintf(cmd, sizeof(cmd), "echo %s > /sys/bus/pci/drivers/loom/unbind", slot);
	ASSERT_EQ(0, run(cmd));
	EXPECT_EQ(-ENODEV, _test_get_param(fd, DRM_LOOM_PARAM_HW_ID, 0, &v));
	close(fd);

	snprintf(cmd, sizeof(cmd), "echo %s > /sys/bus/pci/drivers/loom/bind", slot);
	ASSERT_EQ(0, run(cmd));
	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(LOOM_ID_MAGIC, test_get_param(fd, DRM_LOOM_PARAM_HW_ID));
	close(fd);
}

TEST_HARNESS_MAIN
