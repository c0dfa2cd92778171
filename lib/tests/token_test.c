// SPDX-License-Identifier: MIT
/*
 * token_test: what loom_token_wait() asks the driver, on a fake backend
 * that counts the requests and answers as scripted.  With
 * DRM_LOOM_FEATURE_JOB_INFO_WAIT a wait is one JOB_INFO with
 * DRM_LOOM_JOB_INFO_WAIT and the wait's deadline; the fence's wait (then
 * the record, then the fence's status) takes over where that cannot
 * answer -- a deadline passed, the record gone, no job id, an older
 * driver -- and the results are the ones that path always gave.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "device_internal.h"

static struct {
	/* scripted */
	int wait_info_ret;	/* JOB_INFO with DRM_LOOM_JOB_INFO_WAIT */
	int plain_info_ret;	/* JOB_INFO without */
	int record_error;	/* a DONE record's error */
	int syncobj_wait_ret;
	int fence_status;	/* the fence's, as a sync_file tells it */
	/* seen */
	int job_infos, waiting_job_infos, syncobj_waits, fence_statuses;
	int64_t job_info_deadline, syncobj_deadline;
	uint64_t job_info_id;
} fake;

static int fake_job_info(struct loom_device *dev, struct drm_loom_job_info *info)
{
	bool wait = info->flags & DRM_LOOM_JOB_INFO_WAIT;
	int ret = wait ? fake.wait_info_ret : fake.plain_info_ret;

	(void)dev;
	fake.job_infos++;
	fake.job_info_id = info->job_id;
	if (wait) {
		fake.waiting_job_infos++;
		fake.job_info_deadline = info->timeout_ns;
	} else if (info->timeout_ns) {
		return -EINVAL;		/* as the driver */
	}
	if (!ret || ret == -ETIME)
		info->state = ret ? DRM_LOOM_JOB_PENDING : DRM_LOOM_JOB_DONE;
	if (!ret)
		info->error = fake.record_error;
	return ret;
}

static int fake_syncobj_wait(struct loom_device *dev, const uint32_t *h,
			     unsigned n, int64_t abs_ns, uint32_t flags)
{
	(void)dev;
	(void)h;
	(void)n;
	(void)flags;
	fake.syncobj_waits++;
	fake.syncobj_deadline = abs_ns;
	return fake.syncobj_wait_ret;
}

static int fake_syncobj_status(struct loom_device *dev, uint32_t h, int *status,
			       uint64_t *done_ns)
{
	(void)dev;
	(void)h;
	fake.fence_statuses++;
	*status = fake.fence_status;
	*done_ns = 1;
	return 0;
}

static const struct loom_backend fake_backend = {
	.name = "fake",
	.job_info = fake_job_info,
	.syncobj_wait = fake_syncobj_wait,
	.syncobj_status = fake_syncobj_status,
};

static struct loom_device dev;
static struct loom_token tok;

/* A token of job 7 on a device with @features; the script reset. */
static struct loom_token *setup(uint64_t features, uint64_t job_id)
{
	memset(&fake, 0, sizeof(fake));
	fake.fence_status = 1;
	memset(&dev, 0, sizeof(dev));
	dev.be = &fake_backend;
	dev.fd = -1;
	dev.info.features = features;
	tok = (struct loom_token){ .dev = &dev, .syncobj = 1, .job_id = job_id };
	atomic_init(&tok.refs, 1);
	return &tok;
}

#define WAITING	(DRM_LOOM_FEATURE_JOB_INFO | DRM_LOOM_FEATURE_JOB_INFO_WAIT)

TEST(a_wait_is_one_job_info_that_waits)
{
	struct loom_token *t = setup(WAITING, 7);
	uint64_t before = loom_now_ns();

	fake.record_error = -EIO;
	CHECK_EQ(-EIO, loom_token_wait(t, 1000000000));
	CHECK_EQ(1, fake.job_infos);
	CHECK_EQ(1, fake.waiting_job_infos);
	CHECK_EQ(7, fake.job_info_id);
	CHECK_EQ(0, fake.syncobj_waits);
	CHECK_EQ(0, fake.fence_statuses);
	/* the wait's absolute deadline, on CLOCK_MONOTONIC */
	CHECK(fake.job_info_deadline >= (int64_t)before + 1000000000);
	CHECK(fake.job_info_deadline <= (int64_t)loom_now_ns() + 1000000000);
	/* asked once: a second wait asks nothing */
	CHECK_EQ(-EIO, loom_token_wait(t, 0));
	CHECK_EQ(1, fake.job_infos);

	t = setup(WAITING, 7);
	CHECK_EQ(0, loom_token_wait(t, -1));
	CHECK_EQ(INT64_MAX, fake.job_info_deadline);
	CHECK_EQ(1, fake.job_infos);
	CHECK_EQ(0, fake.syncobj_waits);
}

/* A deadline passed: the fence decides, with the same deadline. */
TEST(a_passed_deadline_is_the_fences_to_judge)
{
	struct loom_token *t = setup(WAITING, 7);

	fake.wait_info_ret = -ETIME;
	fake.syncobj_wait_ret = -ETIME;
	CHECK_EQ(-ETIMEDOUT, loom_token_wait(t, 0));
	CHECK_EQ(1, fake.waiting_job_infos);
	CHECK_EQ(1, fake.syncobj_waits);
	CHECK_EQ(fake.job_info_deadline, fake.syncobj_deadline);
	CHECK(!t->status_known);

	/* the fence signalled meanwhile (a job recorded when it is freed) */
	fake.syncobj_wait_ret = 0;
	fake.plain_info_ret = -ENOENT;
	fake.fence_status = -ECANCELED;
	CHECK_EQ(-ECANCELED, loom_token_wait(t, 0));
	CHECK_EQ(2, fake.syncobj_waits);
	CHECK_EQ(1, fake.fence_statuses);
}

/* The record gone: the fence's wait, then its status, as before. */
TEST(a_record_gone_falls_back_to_the_fence)
{
	struct loom_token *t = setup(WAITING, 7);

	fake.wait_info_ret = -ENOENT;
	fake.plain_info_ret = -ENOENT;
	fake.fence_status = -EFAULT;
	CHECK_EQ(-EFAULT, loom_token_wait(t, -1));
	CHECK_EQ(2, fake.job_infos);
	CHECK_EQ(1, fake.waiting_job_infos);
	CHECK_EQ(1, fake.syncobj_waits);
	CHECK_EQ(INT64_MAX, fake.syncobj_deadline);
	CHECK_EQ(1, fake.fence_statuses);

	/* any other failure too: the fence's wait says what it says */
	t = setup(WAITING, 7);
	fake.wait_info_ret = -ENODEV;
	fake.syncobj_wait_ret = -ENODEV;
	CHECK_EQ(-ENODEV, loom_token_wait(t, -1));
	CHECK_EQ(1, fake.syncobj_waits);
}

/* An older driver, or no job id: the fence's wait, then the record. */
TEST(without_the_feature_or_a_job_id_the_fence_waits)
{
	struct loom_token *t = setup(DRM_LOOM_FEATURE_JOB_INFO, 7);

	fake.record_error = -EDEADLK;
	CHECK_EQ(-EDEADLK, loom_token_wait(t, -1));
	CHECK_EQ(1, fake.syncobj_waits);
	CHECK_EQ(1, fake.job_infos);
	CHECK_EQ(0, fake.waiting_job_infos);

	t = setup(WAITING, 0);
	fake.fence_status = 1;
	CHECK_EQ(0, loom_token_wait(t, -1));
	CHECK_EQ(0, fake.job_infos);
	CHECK_EQ(1, fake.syncobj_waits);
	CHECK_EQ(1, fake.fence_statuses);
}

int main(void)
{
	RUN(a_wait_is_one_job_info_that_waits);
	RUN(a_passed_deadline_is_the_fences_to_judge);
	RUN(a_record_gone_falls_back_to_the_fence);
	RUN(without_the_feature_or_a_job_id_the_fence_waits);
	return checks_done();
}
