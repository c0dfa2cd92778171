// SPDX-License-Identifier: GPL-2.0
/*
 * loom-doctor in the VM: a healthy machine passes, and each kind of
 * failure it knows is made real here (kernel too old, headers missing,
 * module not loaded or not installed, device not bound, node not open to
 * the user, driver uapi too old, io_uring disabled) and must be reported
 * with its fix and a non-zero exit.  The doctor comes in as
 * /data/loom-doctor (tools/loom-vm --file).
 */
#include <errno.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"

#define DOCTOR	"/data/loom-doctor"
#define USER_ID	1000

struct doctor_run {
	uid_t uid;		/* run as this user (0: root) */
	gid_t group;		/* ... with this extra group, if not 0 */
	bool uname26;		/* report a 2.6 kernel (personality UNAME26) */
	const char *args[3];	/* extra arguments, NULL-terminated */
	char out[8192];
	int status;		/* exit status */
};

static void doctor(struct doctor_run *r)
{
	int pipefd[2];
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	int st;

	r->status = -1;
	r->out[0] = 0;
	if (pipe(pipefd))
		return;
	pid = fork();
	if (pid == 0) {
		gid_t groups[1] = { r->group };

		dup2(pipefd[1], 1);
		close(pipefd[0]);
		if (r->uname26 && personality(PER_LINUX | UNAME26) < 0)
			_exit(100);
		if (r->uid && (setgroups(r->group ? 1 : 0, groups) || setgid(USER_ID) ||
			       setuid(r->uid)))
			_exit(101);
		execl(DOCTOR, DOCTOR, r->args[0], r->args[1], (char *)NULL);
		_exit(102);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], r->out + len, sizeof(r->out) - 1 - len)) > 0)
		len += n;
	r->out[len] = 0;
	close(pipefd[0]);
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		r->status = WEXITSTATUS(st);
}

/* Whether the doctor printed @text (e.g. "FAIL  module"). */
static bool has(const struct doctor_run *r, const char *text)
{
	return strstr(r->out, text) != NULL;
}

TEST(healthy)
{
	struct doctor_run r = { 0 };
	struct loom_node node;
	char loaded[64];
	drmVersionPtr v;
	int fd;

	ASSERT_EQ(0, access(DOCTOR, X_OK)) TH_LOG("%s: run with tools/loom-vm --file", DOCTOR);
	ASSERT_LE(1, loom_find_nodes(&node, 1));
	fd = open(node.path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	v = drmGetVersion(fd);
	ASSERT_NE(NULL, v);
	/* MODULE_VERSION is the DRM driver version: the project's, VERSION */
	snprintf(loaded, sizeof(loaded), "ok    module    loom.ko loaded (%d.%d.%d)",
		 v->version_major, v->version_minor, v->version_patchlevel);
	drmFreeVersion(v);
	close(fd);

	doctor(&r);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "ok    kernel"));
	EXPECT_TRUE(has(&r, node.accel ? "accel subsystem: loom is /dev/accel/accelN" :
				   "no accel subsystem: loom is a render node"));
	EXPECT_TRUE(has(&r, loaded)) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "ok    device"));
	EXPECT_TRUE(has(&r, "ok    access"));
	EXPECT_TRUE(has(&r, "ok    uapi"));
	EXPECT_TRUE(has(&r, "ok    io_uring"));
	EXPECT_FALSE(has(&r, "FAIL"));
	EXPECT_TRUE(has(&r, "loom is ready to use"));
}

/* The VM has no kernel headers: a warning with its fix, still usable. */
TEST(headers_missing_is_a_warning_with_its_fix)
{
	struct doctor_run r = { 0 };
	struct utsname u;
	char build[300], fix[300];

	ASSERT_EQ(0, uname(&u));
	snprintf(build, sizeof(build), "/lib/modules/%s/build", u.release);
	snprintf(fix, sizeof(fix), "fix: sudo apt install linux-headers-%s", u.release);
	ASSERT_NE(0, access(build, F_OK));
	doctor(&r);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "warn  headers"));
	EXPECT_TRUE(has(&r, fix)) TH_LOG("%s", r.out);

	ASSERT_EQ(0, mkdir(build, 0755));
	doctor(&r);
	rmdir(build);
	EXPECT_TRUE(has(&r, "ok    headers")) TH_LOG("%s", r.out);
}

TEST(kernel_too_old)
{
	struct doctor_run r = { .uname26 = true };

	doctor(&r);
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "FAIL  kernel")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "needs Linux 6.1 or newer"));
	EXPECT_TRUE(has(&r, "fix: boot Linux 6.1 or newer"));
}

TEST(module_not_loaded_then_not_installed)
{
	struct doctor_run r = { 0 };
	struct utsname u;
	char dep[300];

	ASSERT_EQ(0, system("rmmod loom"));
	doctor(&r);
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "FAIL  module    loom.ko is installed for")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "fix: sudo modprobe loom"));

	/* An empty modules.dep over the real one: loom.ko is not installed. */
	ASSERT_EQ(0, uname(&u));
	snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", u.release);
	close(open("/tmp/empty.dep", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
	ASSERT_EQ(0, mount("/tmp/empty.dep", dep, NULL, MS_BIND, NULL));
	doctor(&r);
	umount(dep);
	EXPECT_EQ(1, r.status);
	EXPECT_TRUE(has(&r, "FAIL  module    loom.ko is not installed")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "fix: sudo make dkms-install"));

	ASSERT_EQ(0, system("modprobe loom"));
	doctor(&r);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
}

TEST(device_not_bound)
{
	struct loom_node nodes[LOOM_MAX_NODES];
	char slots[LOOM_MAX_NODES][64];
	struct doctor_run r = { 0 };
	int n = loom_find_nodes(nodes, LOOM_MAX_NODES);

	ASSERT_LE(1, n);
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(0, loom_node_slot(&nodes[i], slots[i], sizeof(slots[i])));
		ASSERT_EQ(0, loom_write_file("/sys/bus/pci/drivers/loom/unbind", slots[i]));
	}
	doctor(&r);
	for (int i = 0; i < n; i++)
		EXPECT_EQ(0, loom_write_file("/sys/bus/pci/drivers/loom/bind", slots[i]));
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "FAIL  device")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "is not bound to loom.ko"));
	EXPECT_TRUE(has(&r, "/sys/bus/pci/drivers/loom/bind"));
	EXPECT_EQ(n, loom_count_nodes());
}

/* A node only root opens, then one of a group the user is not in. */
TEST(node_not_open_to_the_user)
{
	struct loom_node nodes[LOOM_MAX_NODES];
	struct doctor_run r = { .uid = USER_ID };
	int n = loom_find_nodes(nodes, LOOM_MAX_NODES);
	struct stat st;

	ASSERT_LE(1, n);
	ASSERT_EQ(0, stat(nodes[0].path, &st));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, chmod(nodes[i].path, 0600));
	doctor(&r);
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "FAIL  access")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "only root can open it"));
	EXPECT_TRUE(has(&r, "fix: sudo install -m 644 tools/udev/70-loom.rules"));

	for (int i = 0; i < n; i++) {
		ASSERT_EQ(0, chown(nodes[i].path, 0, 1234));
		ASSERT_EQ(0, chmod(nodes[i].path, 0660));
	}
	doctor(&r);
	EXPECT_EQ(1, r.status);
	EXPECT_TRUE(has(&r, "you (uid 1000) are not in its group")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "fix: sudo usermod -aG"));

	/* In the group: usable, as that user. */
	r.group = 1234;
	doctor(&r);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "ok    access"));

	for (int i = 0; i < n; i++) {
		chown(nodes[i].path, st.st_uid, st.st_gid);
		chmod(nodes[i].path, st.st_mode & 07777);
	}
}

TEST(driver_uapi_too_old_for_the_application)
{
	struct doctor_run r = { .args = { "--min-uapi" } };

	doctor(&r);
	EXPECT_EQ(2, r.status) TH_LOG("a flag without its value is a usage error: %s", r.out);
	r.args[1] = "99";
	doctor(&r);
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "FAIL  uapi")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "this needs 99"));
	EXPECT_TRUE(has(&r, "fix: install a loom.ko with uapi 99 or later"));
}

TEST(io_uring_disabled)
{
	const char *sysctl = "/proc/sys/kernel/io_uring_disabled";
	struct doctor_run r = { 0 };

	if (access(sysctl, W_OK))
		SKIP(return, "no kernel.io_uring_disabled (before 6.6)");
	ASSERT_EQ(0, loom_write_file(sysctl, "2"));
	doctor(&r);
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "FAIL  io_uring")) TH_LOG("%s", r.out);
	EXPECT_TRUE(has(&r, "fix: sudo sysctl -w kernel.io_uring_disabled=0"));

	/* 1: root still may, other users not. */
	ASSERT_EQ(0, loom_write_file(sysctl, "1"));
	doctor(&r);
	EXPECT_FALSE(has(&r, "FAIL  io_uring")) TH_LOG("%s", r.out);
	r.uid = USER_ID;
	doctor(&r);
	EXPECT_TRUE(has(&r, "FAIL  io_uring  io_uring is limited")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, loom_write_file(sysctl, "0"));
}

TEST_HARNESS_MAIN
