// SPDX-License-Identifier: GPL-2.0
/*
 * loom.ko's lifetime: it unloads and reloads cleanly, refuses to unload
 * while a file is open, and survives its device being unbound under an open
 * file (the file then gets ENODEV, not a crash).
 */
#include <liburing.h>
#include <poll.h>
#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "configs.h"

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

/*
 * Removing the device with jobs on its rings and in its queue: every
 * io_uring command still completes, with an error, and nothing leaks or
 * warns (the harness checks the kernel log).
 */
TEST(unbind_with_jobs_in_flight)
{
	struct loom_node node;
	struct loom_test_bo cmd, cfg;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char link[128], buf[256];
	const char *slot;
	uint32_t words[16];
	struct loom_cmd c = { words, 0 };
	int fd, done = 0;
	ssize_t len;

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	len = readlink(node.sysfs, link, sizeof(link) - 1);
	ASSERT_LT(0, len);
	link[len] = 0;
	slot = strrchr(link, '/') + 1;
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cmd = loom_bo(fd, 4096);
	cfg = loom_bo(fd, 4096);
	ASSERT_NE(NULL, cfg.map);
	cmd_load_config(&c, cfg.va, loom_test_config_vector_add(cfg.map, 4096, 4, 4));
	memcpy(cmd.map, words, c.len * 4);

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128));
	loom_poke_core(&node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	for (int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct drm_loom_submit s = {
			.queue = i % 2, .cmd_handle = cmd.handle, .cmd_size = c.len * 4,
			.deadline_ns = 30000000000ULL,
		};

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
		sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
		sqe_set_submit(sqe, &s);
		sqe->user_data = i;
	}
	ASSERT_EQ(4, io_uring_submit(&ring));
	/* The jobs on core 1 finish; the hung one on core 0 and the one
	 * queued behind it are still pending. */
	usleep(300000);

	snprintf(buf, sizeof(buf), "echo %s > /sys/bus/pci/drivers/loom/unbind", slot);
	ASSERT_EQ(0, run(buf));
	while (done < 4) {
		struct __kernel_timespec ts = { .tv_sec = 10 };

		ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
		if (cqe->user_data % 2) {
			EXPECT_EQ(0, cqe->res) TH_LOG("job %llu", cqe->user_data);
		} else {
			EXPECT_GT(0, cqe->res) TH_LOG("job %llu", cqe->user_data);
		}
		io_uring_cqe_seen(&ring, cqe);
		done++;
	}
	io_uring_queue_exit(&ring);
	close(fd);
	snprintf(buf, sizeof(buf), "echo %s > /sys/bus/pci/drivers/loom/bind", slot);
	ASSERT_EQ(0, run(buf));
	ASSERT_EQ(1, loom_find_nodes(&node, 1));
}

/* The PCI slot of the first loom node, for sysfs bind/unbind. */
static void node_slot(const struct loom_node *node, char *slot, size_t size)
{
	char link[128];
	ssize_t len = readlink(node->sysfs, link, sizeof(link) - 1);

	link[len > 0 ? len : 0] = 0;
	snprintf(slot, size, "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 : "");
}

static int driver_bind(const char *what, const char *slot)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "echo %s > /sys/bus/pci/drivers/loom/%s", slot, what);
	return run(buf);
}

/*
 * Unbind with a hung job on core 0, 100 jobs queued behind it (more than
 * the ring holds), a job on core 1 blocked on the hung one's fence, and
 * io_uring commands queued too: every job completes exactly once, within
 * seconds, and every command's CQE comes.  @hang_ms > 0 unbinds while the
 * hang is being recovered instead.
 */
/* Asks tools/loom-vm (run with --hotplug) to device_del a device. */
static int qmp_device_del(const char *id)
{
	char line[160];
	int n = snprintf(line, sizeof(line),
			 "loom-vm: qmp: {\"execute\":\"device_del\",\"arguments\":{\"id\":\"%s\"}}\n",
			 id);

	/* one write(): the host reads the request off the console whole */
	fflush(stdout);
	return write(STDOUT_FILENO, line, n) == n ? 0 : -1;
}

/* Waits up to 30 s for the PCI function at @slot to disappear. */
static int slot_gone(const char *slot)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", slot);
	for (int i = 0; i < 300; i++) {
		if (access(path, F_OK))
			return 1;
		usleep(100000);
	}
	return 0;
}

enum removal { UNBIND, DEVICE_DEL };

static void remove_under_load(struct __test_metadata *_metadata, int hang_ms,
			      enum removal how, const struct loom_node *target)
{
	struct loom_node node;
	struct loom_test_bo cmd, cfg;
	struct io_uring ring;
	uint32_t words[16], syncs[102];
	int fences[102];
	struct loom_cmd c = { words, 0 };
	char slot[64];
	int fd, done = 0;

	if (target)
		node = *target;
	else
		ASSERT_EQ(1, loom_find_nodes(&node, 1));
	node_slot(&node, slot, sizeof(slot));
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cmd = loom_bo(fd, 4096);
	cfg = loom_bo(fd, 4096);
	ASSERT_NE(NULL, cfg.map);
	cmd_load_config(&c, cfg.va, loom_test_config_vector_add(cfg.map, 4096, 4, 4));
	memcpy(cmd.map, words, c.len * 4);
	ASSERT_EQ(0, io_uring_queue_init(64, &ring, IORING_SETUP_SQE128));

	loom_poke_core(&node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	for (int i = 0; i < 102; i++) {
		struct drm_loom_submit s = {
			.queue = i == 101, .cmd_handle = cmd.handle, .cmd_size = c.len * 4,
			.deadline_ns = hang_ms ? hang_ms * 1000000ULL : 30000000000ULL,
		};

		ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &syncs[i]));
		s.out_syncobj = syncs[i];
		if (i == 101) {
			s.in_syncobjs = (uintptr_t)&syncs[0];
			s.in_syncobj_count = 1;
		}
		ASSERT_EQ(0, _test_submit(fd, &s));
	}
	for (int i = 0; i < 32; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct drm_loom_submit s = {
			.cmd_handle = cmd.handle, .cmd_size = c.len * 4,
		};

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
		sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
		sqe_set_submit(sqe, &s);
		sqe->user_data = 1000 + i;
	}
	ASSERT_EQ(32, io_uring_submit(&ring));
	usleep(hang_ms ? (hang_ms + 50) * 1000 : 200000);

	/* An unplugged device's ioctls fail: wait through sync_files. */
	for (int i = 0; i < 102; i++)
		ASSERT_EQ(0, drmSyncobjExportSyncFile(fd, syncs[i], &fences[i]));
	if (how == UNBIND) {
		ASSERT_EQ(0, driver_bind("unbind", slot));
	} else {
		ASSERT_EQ(0, qmp_device_del("loom1"));
		ASSERT_TRUE(slot_gone(slot));
	}
	for (int i = 0; i < 102; i++) {
		struct pollfd pfd = { .fd = fences[i], .events = POLLIN };
		struct sync_file_info info = { 0 };

		EXPECT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("job %d never completed", i);
		EXPECT_EQ(0, ioctl(fences[i], SYNC_IOC_FILE_INFO, &info));
		/* the hung one and those behind it fail; core 1's may have run */
		if (i < 101)
			EXPECT_GT(0, info.status) TH_LOG("job %d: %d", i, info.status);
		close(fences[i]);
	}
	while (done < 32) {
		struct __kernel_timespec ts = { .tv_sec = 10 };
		struct io_uring_cqe *cqe;

		ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
		EXPECT_LE(1000, cqe->user_data);
		EXPECT_GT(1032, cqe->user_data);
		io_uring_cqe_seen(&ring, cqe);
		done++;
	}
	{
		struct __kernel_timespec ts = { .tv_nsec = 100000000 };
		struct io_uring_cqe *cqe;

		EXPECT_EQ(-ETIME, io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			TH_LOG("a command completed twice");
	}
	io_uring_queue_exit(&ring);
	close(fd);
	if (how == UNBIND) {
		ASSERT_EQ(0, driver_bind("bind", slot));
		ASSERT_EQ(1, loom_find_nodes(&node, 1));
	}
}

TEST(unbind_with_queued_and_blocked_jobs)
{
	remove_under_load(_metadata, 0, UNBIND, NULL);
}

TEST(unbind_during_hang_recovery)
{
	remove_under_load(_metadata, 100, UNBIND, NULL);
}

/*
 * A process that exits with a hung job on the device, then the module is
 * unloaded: the job is cancelled, the file's address space outlives the
 * file until then, and the unload is clean.
 */
TEST(unload_after_exit_with_a_hung_job)
{
	struct loom_node node;
	struct loom_test_bo cmd, cfg;
	uint32_t words[16];
	struct loom_cmd c = { words, 0 };
	struct drm_loom_submit s = { .deadline_ns = 30000000000ULL };
	int fd;

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cmd = loom_bo(fd, 4096);
	cfg = loom_bo(fd, 4096);
	ASSERT_NE(NULL, cfg.map);
	cmd_load_config(&c, cfg.va, loom_test_config_vector_add(cfg.map, 4096, 4, 4));
	memcpy(cmd.map, words, c.len * 4);
	s.cmd_handle = cmd.handle;
	s.cmd_size = c.len * 4;
	loom_poke_core(&node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	ASSERT_EQ(0, _test_submit(fd, &s));
	munmap(cmd.map, 4096);
	munmap(cfg.map, 4096);
	close(fd);

	ASSERT_EQ(0, run("rmmod loom"));
	EXPECT_FALSE(loom_loaded());
	ASSERT_EQ(0, run("modprobe loom"));
	ASSERT_LE(1, loom_count_nodes());
}

/*
 * QEMU unplugs a device (device_del over QMP) under the same load: only in
 * a VM booted by tools/loom-vm --hotplug, where loom1 sits behind its own
 * root port at 0000:02:00.0.  Last: the device does not come back.
 */
TEST(device_del_under_load)
{
	struct loom_node nodes[LOOM_MAX_NODES];
	int n = loom_find_nodes(nodes, LOOM_MAX_NODES), target = -1;

	for (int i = 0; i < n; i++) {
		char slot[64];

		node_slot(&nodes[i], slot, sizeof(slot));
		if (!strcmp(slot, "0000:02:00.0"))
			target = i;
	}
	if (target < 0)
		SKIP(return, "no hot-pluggable loom1 (tools/loom-vm --hotplug)");
	remove_under_load(_metadata, 0, DEVICE_DEL, &nodes[target]);
	EXPECT_EQ(n - 1, loom_count_nodes());
}

TEST_HARNESS_MAIN
