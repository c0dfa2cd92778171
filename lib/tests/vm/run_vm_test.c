// SPDX-License-Identifier: GPL-2.0
/*
 * run_vm_test: loom_host_run() against the real driver and device.
 *
 * The programs are loomc images copied into the guest's /data
 * (tools/loom-vm --file x.lcb ...): every *.lcb there but the bad_*.lcb
 * must run to success (their loom.check instructions validate the
 * results); bad_check.lcb (lib/tests/vm/bad_check.loom) must fail with
 * LOOM_E_CHECK_FAILED (4 != 5) and print 4 first, bad_fault.lcb with an
 * MMU fault, bad_overflow.lcb with a child overflow, bad_cap.lcb past the
 * runtime cap, injected_hang.lcb with a hang injected and, its
 * configuration broken, deadlocked, each reported
 * (loom_host_report()) at its source line.  Images built for
 * another fabric than the device's are skipped (logged); without any
 * image in /data the corpus tests skip.  Images without a host program
 * and a missing host function are checked with a builder image.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "loom/loom.h"
#include "loom_format.h"
#include "loom_device.h"
#include "loom_selftest.h"	/* BAR0 pokes and sysfs writes, as root */

#define DATA_DIR	"/data"
#define BAD_CHECK	"bad_check.lcb"
#define BAD_FAULT	"bad_fault.lcb"
#define BAD_OVERFLOW	"bad_overflow.lcb"
#define BAD_CAP		"bad_cap.lcb"
#define INJECTED_HANG	"injected_hang.lcb"
#define MAX_JOB_MS	"/sys/module/loom/parameters/max_job_ms"
#define STOPPED_REPORT	" made no progress, or ran past the runtime cap, and was stopped\n"

static int lcb_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".lcb");
}

struct printed {
	int64_t values[16];
	unsigned n;
};

static void record(void *ctx, enum loom_arg_type type, int64_t value)
{
	struct printed *p = ctx;

	(void)type;
	if (p->n < 16)
		p->values[p->n++] = value;
}

/* Loads /data/@name; LOOM_E_FABRIC_MISMATCH if it is not for @dev. */
static int load(struct loom_device *dev, const char *name,
		struct loom_image **img)
{
	const struct loom_device_info *info = loom_device_info(dev);
	char path[512];
	unsigned w, h;
	int ret;

	snprintf(path, sizeof(path), DATA_DIR "/%s", name);
	ret = loom_image_load_file(path, img);
	if (ret)
		return ret;
	loom_image_fabric(*img, &w, &h);
	if (w != info->fabric_width || h != info->fabric_height) {
		loom_image_free(*img);
		return LOOM_E_FABRIC_MISMATCH;
	}
	return 0;
}

FIXTURE(dev) {
	struct loom_device *dev;
	struct dirent **names;
	int n_names;
};

FIXTURE_SETUP(dev)
{
	int ret = loom_device_open_first(&self->dev);

	ASSERT_EQ(0, ret) {
		TH_LOG("no loom device: %s", loom_strerror(ret));
	}
	self->n_names = scandir(DATA_DIR, &self->names, lcb_filter, alphasort);
	if (self->n_names < 0) {
		self->names = NULL;
		self->n_names = 0;
	}
}

FIXTURE_TEARDOWN(dev)
{
	for (int i = 0; i < self->n_names; i++)
		free(self->names[i]);
	free(self->names);
	loom_device_close(self->dev);
}

TEST_F(dev, corpus_programs_pass_their_checks)
{
	unsigned ran = 0, failed = 0;

	for (int i = 0; i < self->n_names; i++) {
		const char *name = self->names[i]->d_name;
		struct loom_host_options opt = { .sched.workers = 2 };
		struct loom_host_stats st;
		struct loom_image *img;
		int ret;

		if (!strncmp(name, "bad_", 4))	/* they fail: tests below */
			continue;
		ret = load(self->dev, name, &img);
		if (ret == LOOM_E_FABRIC_MISMATCH) {
			TH_LOG("%s: skipped, built for another fabric", name);
			continue;
		}
		EXPECT_EQ(0, ret) {
			TH_LOG("%s: %s", name, loom_strerror(ret));
		}
		if (ret) {
			failed++;
			continue;
		}
		ret = loom_host_run(self->dev, img, &opt, &st);
		EXPECT_EQ(0, ret) {
			TH_LOG("%s: %s at host instruction %lld (%lld vs %lld)",
			       name, loom_strerror(ret),
			       (long long)st.failed_insn,
			       (long long)st.check_lhs,
			       (long long)st.check_rhs);
		}
		if (!ret) {
			EXPECT_EQ(-1, st.failed_insn);
			EXPECT_LT(0, st.insns);
			TH_LOG("%s: ok: %llu jobs, %llu cycles, %llu items, "
			       "%llu steals", name,
			       (unsigned long long)st.jobs,
			       (unsigned long long)st.cycles,
			       (unsigned long long)st.items,
			       (unsigned long long)st.steals);
		}
		ran++;
		failed += ret != 0;
		loom_image_free(img);
	}
	if (!ran)
		SKIP(return, "no program image for this device in " DATA_DIR);
	EXPECT_EQ(0, failed);
}

/*
 * Whether loom_host_report() of the run is @want after the source file's
 * directories (the path loomc was given).
 */
static bool reported(const struct loom_image *img, int err,
		     const struct loom_host_stats *st, const char *want)
{
	char text[2048];
	const char *at;

	loom_host_report(img, err, st, text, sizeof(text));
	at = strstr(text, want);
	if (!at || strcmp(at, want) || (at != text && at[-1] != '/')) {
		fprintf(stderr, "# report:\n%s# wanted (after the path):\n%s", text, want);
		return false;
	}
	return true;
}

/* Loads /data/@name, or says why the test cannot run. */
static int load_bad(struct loom_device *dev, const char *name,
		    struct loom_image **img)
{
	int ret = load(dev, name, img);

	if (ret == -ENOENT || ret == LOOM_E_FABRIC_MISMATCH)
		return 1;
	return ret;
}

/* A load far past its buffer: the launch's line, a note at the load. */
TEST_F(dev, mmu_fault_names_the_launch_and_the_load)
{
	struct loom_host_stats st;
	struct loom_image *img;
	int ret = load_bad(self->dev, BAD_FAULT, &img);

	if (ret == 1)
		SKIP(return, DATA_DIR "/" BAD_FAULT " missing or not for this device");
	ASSERT_EQ(0, ret);
	ret = loom_host_run(self->dev, img, NULL, &st);
	EXPECT_EQ(-EFAULT, ret);
	EXPECT_LE(0, st.failed_launch);
	EXPECT_EQ(0, st.failed_thread);
	EXPECT_EQ(LOOM_STATUS_MMU_FAULT, st.job_status);
	EXPECT_STREQ("", st.failed_item);	/* a dense launch */
	{
		char text[2048];

		loom_host_report(img, ret, &st, text, sizeof(text));
		EXPECT_TRUE(strstr(text, "bad_fault.loom:18:8: error: @far accessed device address 0x") != NULL) {
			TH_LOG("report:\n%s", text);
		}
		EXPECT_TRUE(strstr(text, "bad_fault.loom:9:8: note: '%x' accesses memory here\n") != NULL) {
			TH_LOG("report:\n%s", text);
		}
		EXPECT_TRUE(strstr(text, "(not mapped)\n") != NULL) {
			TH_LOG("report:\n%s", text);
		}
	}
	loom_image_free(img);
}

/* Three children where the thread has room for two: the item, the cap. */
TEST_F(dev, child_overflow_names_the_item_and_capacity)
{
	struct loom_host_stats st;
	struct loom_image *img;
	char text[2048];
	int ret = load_bad(self->dev, BAD_OVERFLOW, &img);

	if (ret == 1)
		SKIP(return, DATA_DIR "/" BAD_OVERFLOW " missing or not for this device");
	ASSERT_EQ(0, ret);
	ret = loom_host_run(self->dev, img, NULL, &st);
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_EQ(0, st.failed_thread);
	loom_host_report(img, ret, &st, text, sizeof(text));
	EXPECT_TRUE(strstr(text, "bad_overflow.loom:20:8: error: work item ") != NULL) {
		TH_LOG("report:\n%s", text);
	}
	EXPECT_TRUE(strstr(text, ":root of @fan spawned more children than its capacity (2)\n") != NULL) {
		TH_LOG("report:\n%s", text);
	}
	loom_image_free(img);
}

/* Whether loom_host_report() of the run has the line @want (notes may follow). */
static bool report_has(const struct loom_image *img, int err,
		       const struct loom_host_stats *st, const char *want)
{
	char text[4096];

	loom_host_report(img, err, st, text, sizeof(text));
	if (strstr(text, want))
		return true;
	fprintf(stderr, "# report:\n%s# wanted a line:\n%s", text, want);
	return false;
}

/*
 * 2^40 instances under a runtime cap (loom.ko's max_job_ms) lowered to
 * 300 ms: stopped, reported at the launch's line.
 */
TEST_F(dev, runtime_cap_names_the_launch)
{
	struct loom_host_stats st;
	struct loom_image *img;
	char old[32] = "";
	FILE *f;
	int ret = load_bad(self->dev, BAD_CAP, &img);

	if (ret == 1)
		SKIP(return, DATA_DIR "/" BAD_CAP " missing or not for this device");
	ASSERT_EQ(0, ret);
	f = fopen(MAX_JOB_MS, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(old, sizeof(old), f));
	fclose(f);
	ASSERT_EQ(0, loom_write_file(MAX_JOB_MS, "300"));
	ret = loom_host_run(self->dev, img, NULL, &st);
	EXPECT_EQ(0, loom_write_file(MAX_JOB_MS, old));
	EXPECT_EQ(-ETIMEDOUT, ret);
	EXPECT_EQ(LOOM_STATUS_STOPPED, st.job_status);
	EXPECT_TRUE(report_has(img, ret, &st, "bad_cap.loom:18:8: error: @spin" STOPPED_REPORT));
	loom_image_free(img);
}

/*
 * A job that makes no progress (LOOM_INJECT_HANG pending on every core):
 * the driver's hang check stops it after its deadline; reported at the
 * launch's line.
 */
TEST_F(dev, hang_names_the_launch)
{
	unsigned cores = loom_device_info(self->dev)->num_cores;
	struct loom_node nodes[1];
	struct loom_host_stats st;
	struct loom_image *img;
	int ret = load_bad(self->dev, INJECTED_HANG, &img);

	if (ret == 1)
		SKIP(return, DATA_DIR "/" INJECTED_HANG " missing or not for this device");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, loom_find_nodes(nodes, 1));
	for (unsigned c = 0; c < cores; c++)
		loom_poke_core(&nodes[0], c, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	ret = loom_host_run(self->dev, img, NULL, &st);
	/* the cores the program did not use still have theirs pending */
	for (unsigned c = 0; c < cores; c++)
		loom_poke_core(&nodes[0], c, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_NONE);
	EXPECT_EQ(-ETIMEDOUT, ret);
	EXPECT_EQ(LOOM_STATUS_STOPPED, st.job_status);
	EXPECT_TRUE(report_has(img, ret, &st,
			       "injected_hang.loom:17:8: error: @touch" STOPPED_REPORT));
	loom_image_free(img);
}

/*
 * /data/@name with its first thread's configuration broken where the
 * compiler never breaks one: the first PE whose operand B is an immediate
 * now waits for a B input nothing routes to it.  Returns the image, or
 * NULL.
 */
static struct loom_image *stalled_image(const char *name)
{
	struct loom_image *img = NULL;
	struct loom_image_view v;
	struct loom_image_thread t;
	struct loom_fabric_config c;
	struct loom_tile_config tile;
	unsigned char *bytes, *cfg;
	char path[512];
	size_t size;
	FILE *f;

	snprintf(path, sizeof(path), DATA_DIR "/%s", name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	bytes = malloc(1 << 20);
	size = bytes ? fread(bytes, 1, 1 << 20, f) : 0;
	fclose(f);
	if (!size || loom_view_open(&v, bytes, size, NULL, 0)) {
		free(bytes);
		return NULL;
	}
	t = loom_view_thread(&v, 0);
	cfg = bytes + (v.sec[LOOM_SEC_CONFIGS] - v.data) + t.config_offset;
	memcpy(&c, cfg, sizeof(c));
	for (unsigned i = 0; i < c.width * c.height * (c.slots ? c.slots : 1); i++) {
		unsigned char *at = cfg + sizeof(c) + i * sizeof(tile);

		memcpy(&tile, at, sizeof(tile));
		if (tile.op && (tile.flags & LOOM_TILE_IMM_B)) {
			tile.flags &= ~LOOM_TILE_IMM_B;
			memcpy(at, &tile, sizeof(tile));
			loom_image_load(bytes, size, &img);
			break;
		}
	}
	free(bytes);
	return img;
}

/*
 * A configuration that deadlocks (a PE waiting for an input that never
 * comes): the device's deadlock, reported at the launch's line with a
 * note at the operation that waits.
 */
TEST_F(dev, deadlock_names_the_launch_and_the_waiting_operation)
{
	struct loom_host_stats st;
	struct loom_image *img = stalled_image(INJECTED_HANG);
	unsigned w, h;
	int ret;

	if (!img)
		SKIP(return, DATA_DIR "/" INJECTED_HANG " missing");
	loom_image_fabric(img, &w, &h);
	if (w != loom_device_info(self->dev)->fabric_width ||
	    h != loom_device_info(self->dev)->fabric_height) {
		loom_image_free(img);
		SKIP(return, INJECTED_HANG " is not for this device");
	}
	ret = loom_host_run(self->dev, img, NULL, &st);
	EXPECT_EQ(-EDEADLK, ret);
	EXPECT_EQ(LOOM_STATUS_DEADLOCK, st.job_status);
	EXPECT_TRUE(report_has(img, ret, &st, "injected_hang.loom:17:8: error: the fabric "
			       "deadlocked running @touch: its operations wait for tokens "
			       "that never come\n"));
	EXPECT_TRUE(report_has(img, ret, &st, "injected_hang.loom:10:3: note: this operation "
			       "waits here for tokens on its inputs\n"));
	loom_image_free(img);
}

TEST_F(dev, wrong_check_fails_typed)
{
	struct printed out = { .n = 0 };
	struct loom_host_options opt = { .print = record, .print_ctx = &out };
	struct loom_host_stats st;
	struct loom_image *img;
	int ret;

	ret = load(self->dev, BAD_CHECK, &img);
	if (ret == -ENOENT || ret == LOOM_E_FABRIC_MISMATCH)
		SKIP(return, DATA_DIR "/" BAD_CHECK " missing or not for this device");
	ASSERT_EQ(0, ret);
	ret = loom_host_run(self->dev, img, &opt, &st);
	EXPECT_EQ(LOOM_E_CHECK_FAILED, ret);
	EXPECT_LE(0, st.failed_insn);
	EXPECT_EQ(4, st.check_lhs);
	EXPECT_EQ(5, st.check_rhs);
	ASSERT_EQ(1, out.n);
	EXPECT_EQ(4, out.values[0]);
	EXPECT_EQ(1, st.jobs);
	EXPECT_STREQ("a loom.check of the host program failed",
		     loom_strerror(ret));
	/* the last loom.check's line, not a host instruction */
	EXPECT_TRUE(reported(img, ret, &st,
			     "bad_check.loom:33:3: error: loom.check failed: 4 != 5\n"));
	/* a function that is not there */
	opt.func = "nosuch";
	EXPECT_EQ(LOOM_E_NO_HOST_FUNC, loom_host_run(self->dev, img, &opt, &st));
	loom_image_free(img);
}

/* The jobs of one host run, as its job observer saw them. */
struct jobs_seen {
	pthread_mutex_t lock;
	struct loom_job_record jobs[4096];
	unsigned n;
};

static void seen_job(void *ctx, const struct loom_job_record *job)
{
	struct jobs_seen *seen = ctx;

	pthread_mutex_lock(&seen->lock);
	if (seen->n < sizeof(seen->jobs) / sizeof(seen->jobs[0]))
		seen->jobs[seen->n++] = *job;
	pthread_mutex_unlock(&seen->lock);
}

/*
 * A dynamic-work launch is submitted at its LAUNCH and joined at its WAIT,
 * as a dense one is: in async_launch.lcb, @paint, launched after the first
 * @tree without waiting for it, is submitted before that domain's last job
 * has finished; the program's own checks see that the waits still order
 * fill -> tree -> double -> tree.
 */
TEST_F(dev, dynamic_work_launches_run_while_the_program_goes_on)
{
	static struct jobs_seen seen = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct loom_host_options opt = {
		.sched.workers = 2, .observe_job = seen_job, .observe_ctx = &seen,
	};
	uint64_t first_tree = UINT64_MAX, tree_done = 0, paint_submit = 0;
	unsigned trees = 0, paints = 0;
	struct loom_host_stats st;
	struct loom_image *img;
	int ret;

	ret = load(self->dev, "async_launch.lcb", &img);
	if (ret == -ENOENT || ret == LOOM_E_FABRIC_MISMATCH)
		SKIP(return, DATA_DIR "/async_launch.lcb missing or not for this device");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, loom_host_run(self->dev, img, &opt, &st));
	EXPECT_EQ(2 * 255, st.items);
	/* the first domain is the smaller occurrence */
	for (unsigned i = 0; i < seen.n; i++)
		if (!strcmp(seen.jobs[i].thread, "tree") &&
		    seen.jobs[i].occurrence < first_tree)
			first_tree = seen.jobs[i].occurrence;
	for (unsigned i = 0; i < seen.n; i++) {
		const struct loom_job_record *j = &seen.jobs[i];

		EXPECT_EQ(0, j->error);
		if (!strcmp(j->thread, "paint")) {
			paint_submit = j->submit_ns;
			paints++;
		} else if (!strcmp(j->thread, "tree") && j->occurrence == first_tree) {
			tree_done = j->done_ns > tree_done ? j->done_ns : tree_done;
			trees++;
		}
	}
	ASSERT_EQ(1, paints);
	ASSERT_LT(0, trees);
	EXPECT_LT(paint_submit, tree_done) {
		TH_LOG("@paint submitted %llu ns after the first @tree's last job finished",
		       (unsigned long long)(paint_submit - tree_done));
	}
	loom_image_free(img);
}

TEST_F(dev, image_without_host_program)
{
	const struct loom_device_info *info = loom_device_info(self->dev);
	struct loom_image_builder *b;
	struct loom_image *img;
	struct loom_host_stats st;
	size_t size;
	void *bytes;

	ASSERT_EQ(0, loom_builder_new(info->fabric_width, info->fabric_height, &b));
	ASSERT_EQ(0, loom_builder_finish(b, &bytes, &size));
	loom_builder_free(b);
	ASSERT_EQ(0, loom_image_load(bytes, size, &img));
	free(bytes);
	EXPECT_EQ(NULL, loom_image_host_section(img, &size));
	EXPECT_EQ(0, size);
	EXPECT_EQ(LOOM_E_BAD_IMAGE, loom_host_run(self->dev, img, NULL, &st));
	EXPECT_EQ(0, st.jobs);
	loom_image_free(img);
}

TEST_HARNESS_MAIN
