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

/*
 * A file on @node whose command BO holds one packet, LOAD_CONFIG of a
 * vector add: the shortest valid job, and one a hang injection can stop.
 */
struct config_job {
	int fd;
	struct loom_test_bo cmd, cfg;
	uint32_t cmd_size;
};

static int config_job_open(const struct loom_node *node, struct config_job *j)
{
	uint32_t words[16];
	struct loom_cmd c = { words, 0 };

	j->fd = open(node->path, O_RDWR | O_CLOEXEC);
	if (j->fd < 0)
		return -errno;
	j->cmd = loom_bo(j->fd, 4096);
	j->cfg = loom_bo(j->fd, 4096);
	if (!j->cmd.map || !j->cfg.map)
		return -ENOMEM;
	cmd_load_config(&c, j->cfg.va, loom_test_config_vector_add(j->cfg.map, 4096, 4, 4));
	memcpy(j->cmd.map, words, c.len * 4);
	j->cmd_size = c.len * 4;
	return 0;
}

static int driver_bind(const char *what, const char *slot)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "echo %s > /sys/bus/pci/drivers/loom/%s", slot, what);
	return run(buf);
}

TEST(unbind_under_open_file)
{
	struct loom_node node;
	char slot[64];
	uint64_t v = 0;
	int fd;

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	loom_node_slot(&node, slot, sizeof(slot));
	ASSERT_NE(0, slot[0]);

	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);

	ASSERT_EQ(0, driver_bind("unbind", slot));
	EXPECT_EQ(-ENODEV, _test_get_param(fd, DRM_LOOM_PARAM_HW_ID, 0, &v));
	close(fd);

	ASSERT_EQ(0, driver_bind("bind", slot));
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
	struct config_job j;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char slot[64];
	int done = 0;

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	loom_node_slot(&node, slot, sizeof(slot));
	ASSERT_EQ(0, config_job_open(&node, &j));

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128));
	loom_poke_core(&node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	for (int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct drm_loom_submit s = {
			.queue = i % 2, .cmd_handle = j.cmd.handle, .cmd_size = j.cmd_size,
			.deadline_ns = 30000000000ULL,
		};

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, j.fd, NULL, 0, 0);
		sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
		sqe_set_submit(sqe, &s);
		sqe->user_data = i;
	}
	ASSERT_EQ(4, io_uring_submit(&ring));
	/* The jobs on core 1 finish; the hung one on core 0 and the one
	 * queued behind it are still pending. */
	usleep(300000);

	ASSERT_EQ(0, driver_bind("unbind", slot));
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
	close(j.fd);
	ASSERT_EQ(0, driver_bind("bind", slot));
	ASSERT_EQ(1, loom_find_nodes(&node, 1));
}

/* Asks tools/loom-vm (run with --hotplug) to device_del a device. */
static int qmp_device_del(const char *id)
{
	char json[160];

	snprintf(json, sizeof(json),
		 "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"%s\"}}", id);
	return loom_vm_qmp(json);
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
	struct config_job j;
	struct io_uring ring;
	uint32_t syncs[102];
	int fences[102];
	char slot[64];
	int fd, done = 0;

	if (target)
		node = *target;
	else
		ASSERT_EQ(1, loom_find_nodes(&node, 1));
	loom_node_slot(&node, slot, sizeof(slot));
	ASSERT_EQ(0, config_job_open(&node, &j));
	fd = j.fd;
	ASSERT_EQ(0, io_uring_queue_init(64, &ring, IORING_SETUP_SQE128));

	loom_poke_core(&node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	for (int i = 0; i < 102; i++) {
		struct drm_loom_submit s = {
			.queue = i == 101, .cmd_handle = j.cmd.handle, .cmd_size = j.cmd_size,
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
			.cmd_handle = j.cmd.handle, .cmd_size = j.cmd_size,
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
		/*
		 * The hung one fails.  Those behind it fail, or ran if the
		 * recovery finished before the unbind (a slow kernel's case);
		 * either way each completed once.  Core 1's may have run.
		 */
		if (i == 0) {
			EXPECT_GT(0, info.status) TH_LOG("the hung job: %d", info.status);
		} else {
			EXPECT_NE(0, info.status) TH_LOG("job %d still pending", i);
		}
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
 * A job whose in-fence belongs to another device's job that ends seconds
 * after this device is unbound: the job still completes, with ENODEV, and
 * so does an io_uring command waiting on the same fence (the schedulers
 * outlive the unbind; they used to stop with it, stranding both).
 */
TEST(unbind_with_a_job_waiting_on_another_devices_fence)
{
	struct loom_node nodes[2];
	struct config_job a, b;
	struct drm_loom_submit s = { 0 };
	struct sync_file_info info = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct __kernel_timespec ts = { .tv_sec = 15 };
	struct pollfd pfd;
	uint32_t b_done, a_in, a_done;
	int b_fence, a_fence;
	char slot[64];

	ASSERT_EQ(2, loom_find_nodes(nodes, 2));
	loom_node_slot(&nodes[0], slot, sizeof(slot));
	ASSERT_EQ(0, config_job_open(&nodes[0], &a));
	ASSERT_EQ(0, config_job_open(&nodes[1], &b));

	/* b's job hangs and is stopped 3 s later */
	loom_poke_core(&nodes[1], 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	ASSERT_EQ(0, drmSyncobjCreate(b.fd, 0, &b_done));
	s.cmd_handle = b.cmd.handle;
	s.cmd_size = b.cmd_size;
	s.deadline_ns = 3000000000ULL;
	s.out_syncobj = b_done;
	ASSERT_EQ(0, _test_submit(b.fd, &s));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(b.fd, b_done, &b_fence));

	/* a's job and command wait for it */
	ASSERT_EQ(0, drmSyncobjCreate(a.fd, 0, &a_in));
	ASSERT_EQ(0, drmSyncobjImportSyncFile(a.fd, a_in, b_fence));
	ASSERT_EQ(0, drmSyncobjCreate(a.fd, 0, &a_done));
	s = (struct drm_loom_submit){
		.cmd_handle = a.cmd.handle, .cmd_size = a.cmd_size,
		.in_syncobjs = (uintptr_t)&a_in, .in_syncobj_count = 1,
	};
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, IORING_SETUP_SQE128));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, a.fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	ASSERT_EQ(1, io_uring_submit(&ring));
	s.out_syncobj = a_done;
	ASSERT_EQ(0, _test_submit(a.fd, &s));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(a.fd, a_done, &a_fence));

	ASSERT_EQ(0, driver_bind("unbind", slot));
	pfd = (struct pollfd){ .fd = a_fence, .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, 15000)) TH_LOG("the waiting job never completed");
	EXPECT_EQ(0, ioctl(a_fence, SYNC_IOC_FILE_INFO, &info));
	EXPECT_EQ(-ENODEV, info.status);
	ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
		TH_LOG("the waiting command never completed");
	EXPECT_EQ(-ENODEV, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	close(a_fence);
	close(b_fence);
	close(a.fd);
	close(b.fd);
	ASSERT_EQ(0, driver_bind("bind", slot));
	ASSERT_EQ(2, loom_count_nodes());
}

/*
 * A process that exits with a hung job on the device, then the module is
 * unloaded: the job is cancelled, the file's address space outlives the
 * file until then, and the unload is clean.
 */
TEST(unload_after_exit_with_a_hung_job)
{
	struct loom_node node;
	struct config_job j;
	struct drm_loom_submit s = { .deadline_ns = 30000000000ULL };

	ASSERT_EQ(1, loom_find_nodes(&node, 1));
	ASSERT_EQ(0, config_job_open(&node, &j));
	s.cmd_handle = j.cmd.handle;
	s.cmd_size = j.cmd_size;
	loom_poke_core(&node, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	ASSERT_EQ(0, _test_submit(j.fd, &s));
	munmap(j.cmd.map, 4096);
	munmap(j.cfg.map, 4096);
	close(j.fd);

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

		loom_node_slot(&nodes[i], slot, sizeof(slot));
		if (!strcmp(slot, "0000:02:00.0"))
			target = i;
	}
	if (target < 0)
		SKIP(return, "no hot-pluggable loom1 (tools/loom-vm --hotplug)");
	remove_under_load(_metadata, 0, DEVICE_DEL, &nodes[target]);
	EXPECT_EQ(n - 1, loom_count_nodes());
}

TEST_HARNESS_MAIN
