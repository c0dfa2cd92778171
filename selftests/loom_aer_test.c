// SPDX-License-Identifier: GPL-2.0
/*
 * PCIe errors (AER) under load: QEMU injects an uncorrectable error into
 * device loom0 (the monitor's pcie_aer_inject_error, through tools/loom-vm
 * --hotplug, which puts each device behind a root port that reports it).
 * The kernel's AER driver calls loom.ko's error handlers: a non-fatal
 * error leaves the registers answering, so every job ends with its result;
 * a fatal one resets the link, and only the job running on each core may
 * be lost (EIO).  Either way every job completes exactly once, the jobs
 * after it run, and nothing the device writes is taken for a lie.
 */
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "loom_selftest.h"
#include "loom_job.h"

/*
 * An AER counter in sysfs: line @key of @file under @dir, or the file's one
 * number when @key is NULL.  -1 if there is none.
 */
static long long aer_count(const char *dir, const char *file, const char *key)
{
	char path[PATH_MAX + 64], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key)
			v = atoll(line);
		else if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ' ')
			v = atoll(line + strlen(key) + 1);
	}
	fclose(f);
	return v;
}

/*
 * Where the error is counted: a non-fatal one on the device, a fatal one
 * (the device's registers are then out of reach) on its root port.
 */
struct aer_counter {
	bool at_root_port;
	const char *file, *key;
};

static void inject_under_load(FIXTURE_DATA(job) *self, struct __test_metadata *_metadata,
			      const char *error, const struct aer_counter *counter,
			      int max_lost_per_core)
{
	struct loom_test_bo scratch = loom_bo(self->fd, 4096);
	struct loom_core_counts before;
	long long errors;
	char slot[64], json[256], dev[96], dir[PATH_MAX];
	int lost[2] = { 0, 0 };
	uint64_t ids[LOAD_JOBS];
	uint32_t sync[2];

	ASSERT_NE(NULL, scratch.map);
	ASSERT_EQ(0, loom_node_slot(&self->node, slot, sizeof(slot)));
	/* loomN sits alone behind its own root port: loom0 on bus 1 */
	if (strcmp(slot, "0000:01:00.0"))
		SKIP(return, "%s: not loom0 behind a root port (tools/loom-vm --hotplug)", slot);
	snprintf(dev, sizeof(dev), "/sys/bus/pci/devices/%s", slot);
	ASSERT_NE(NULL, realpath(dev, dir));
	if (counter->at_root_port)
		*strrchr(dir, '/') = 0;
	errors = aer_count(dir, counter->file, counter->key);
	if (errors < 0)
		SKIP(return, "no AER counter %s (no AER in this kernel?)", counter->file);
	before = loom_core_counts(&self->node);
	for (unsigned int q = 0; q < 2; q++)
		ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sync[q]));
	ASSERT_EQ(0, submit_load(self, scratch.va, ids, sync));
	usleep(200000);
	snprintf(json, sizeof(json),
		 "{\"execute\":\"human-monitor-command\",\"arguments\":"
		 "{\"command-line\":\"pcie_aer_inject_error loom0 %s\"}}", error);
	ASSERT_EQ(0, loom_vm_qmp(json));
	for (unsigned int q = 0; q < 2; q++)
		ASSERT_EQ(0, loom_syncobj_wait(self->fd, sync[q], 120000));
	/* the error did arrive, through the AER driver */
	for (int i = 0; i < 100 && aer_count(dir, counter->file, counter->key) == errors; i++)
		usleep(100000);
	EXPECT_EQ(errors + 1, aer_count(dir, counter->file, counter->key));
	for (unsigned int i = 0; i < LOAD_JOBS; i++) {
		int err = job_error(self, ids[i]);

		EXPECT_TRUE(err == 0 || err == -EIO) TH_LOG("job %u: error %d", i, err);
		lost[i % 2] += err == -EIO;
	}
	for (unsigned int q = 0; q < 2; q++) {
		struct drm_loom_job_info info = run_vadd(self, _metadata, q, 0);
		const int64_t *d = self->data.map;

		EXPECT_GE(max_lost_per_core, lost[q]) TH_LOG("core %u: %d jobs lost", q, lost[q]);
		EXPECT_EQ(0, info.error);
		EXPECT_EQ(LOOM_STATUS_OK, info.hw_status);
		for (int k = 0; k < 8; k++)
			EXPECT_EQ(d[k] + d[1024 + k], d[2048 + k]);
		EXPECT_EQ(before.refused[q], loom_core_counts(&self->node).refused[q])
			TH_LOG("core %u: the driver read the device across the recovery", q);
		EXPECT_EQ(before.resets[q], loom_core_counts(&self->node).resets[q])
			TH_LOG("core %u: a hang recovery ran: the driver missed the error", q);
		drmSyncobjDestroy(self->fd, sync[q]);
	}
}

/* A poisoned TLP: uncorrectable, non-fatal by default; the link stays up. */
TEST_F_TIMEOUT(job, nonfatal_error_under_load_loses_nothing, 240)
{
	static const struct aer_counter counter = {
		false, "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"
	};

	inject_under_load(self, _metadata, "POISON_TLP", &counter, 0);
}

/* A surprise link down: fatal; the root port resets the link below it. */
TEST_F_TIMEOUT(job, fatal_error_under_load_fails_at_most_the_running_jobs, 240)
{
	static const struct aer_counter counter = {
		true, "aer_rootport_total_err_fatal", NULL
	};

	inject_under_load(self, _metadata, "SDN", &counter, 1);
}

TEST_HARNESS_MAIN
