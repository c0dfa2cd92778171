// SPDX-License-Identifier: MIT
/*
 * DOC: tokens
 *
 * Every launch gets a token, a syncobj that receives the job's done
 * fence, whatever carried it (an ioctl or a ring); token waits and
 * dependencies only ever use that syncobj, and a job's error is the
 * fence's (the driver sets it).  Tokens are reused, syncobj and all: one
 * goes to the device's idle list once neither its caller nor its arena
 * entry (arena.c) holds it, and the next ioctl launch takes it from there,
 * so a launch in a steady stream allocates nothing and creates no syncobj.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "device_internal.h"

/*
 * Idle tokens a device keeps for reuse; more are freed.  More than a
 * device arena holds entries (arena.c), which bounds the tokens a stream
 * of launches whose tokens are freed at once keeps alive.
 */
#define IDLE_TOKENS_MAX		4096

uint64_t loom_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000000ULL + now.tv_nsec;
}

/* @t as a new token of @dev holding @syncobj, one reference: its caller's. */
static void token_init(struct loom_token *t, struct loom_device *dev,
		       uint32_t syncobj)
{
	*t = (struct loom_token){ .dev = dev, .syncobj = syncobj };
	atomic_init(&t->refs, 1);
}

int loom_token_new(struct loom_device *dev, struct loom_token **out)
{
	struct loom_token *t = malloc(sizeof(*t));
	uint32_t syncobj;
	int ret;

	if (!t)
		return -ENOMEM;
	ret = dev->be->syncobj_create(dev, &syncobj);
	if (ret) {
		free(t);
		return ret;
	}
	token_init(t, dev, syncobj);
	*out = t;
	return 0;
}

int loom_token_for_submit(struct loom_device *dev, struct loom_token **out)
{
	struct loom_token *t;

	pthread_mutex_lock(&dev->lock);
	t = dev->idle_tokens;
	if (t) {
		dev->idle_tokens = t->next_idle;
		dev->idle_count--;
	}
	pthread_mutex_unlock(&dev->lock);
	if (!t)
		return loom_token_new(dev, out);
	token_init(t, dev, t->syncobj);
	*out = t;
	return 0;
}

struct loom_token *loom_token_get(struct loom_token *t)
{
	atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
	return t;
}

void loom_token_put(struct loom_token *t)
{
	struct loom_device *dev = t->dev;
	bool idle = false;

	if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (unsigned i = 0; i < t->n_parts; i++)
		loom_token_put(t->parts[i]);
	free(t->parts);
	pthread_mutex_lock(&dev->lock);
	if (dev->idle_count < IDLE_TOKENS_MAX) {
		t->next_idle = dev->idle_tokens;
		dev->idle_tokens = t;
		dev->idle_count++;
		idle = true;
	}
	pthread_mutex_unlock(&dev->lock);
	if (!idle) {
		dev->be->syncobj_destroy(dev, t->syncobj);
		free(t);
	}
}

void loom_token_free(struct loom_token *token)
{
	if (token)
		loom_token_put(token);
}

void loom_token_pool_release(struct loom_device *dev)
{
	while (dev->idle_tokens) {
		struct loom_token *t = dev->idle_tokens;

		dev->idle_tokens = t->next_idle;
		dev->be->syncobj_destroy(dev, t->syncobj);
		free(t);
	}
	dev->idle_count = 0;
}

/* ---------------------------------------------------------- waiting --- */

static int64_t deadline(int64_t timeout_ns)
{
	return timeout_ns < 0 ? INT64_MAX : (int64_t)loom_now_ns() + timeout_ns;
}

/* The token's fence as a sync_file tells it: *@status, *@done_ns. */
static int fence_info(struct loom_token *t, int *status, uint64_t *done_ns)
{
	return t->dev->be->syncobj_status(t->dev, t->syncobj, status, done_ns);
}

/*
 * The error of a signalled token's job from the driver's record of it
 * (JOB_INFO, one ioctl): 1 if the record cannot say.  The uapi defines
 * drm_loom_job_info.error as the errno the job's fence completed with:
 * the driver records a job's outcome before it signals the job's fence
 * and gives the fence the record's error (kernel/loom_job.c: every path
 * that records a job done sets that error on its done fence), so a
 * record that says DONE has the fence's error.  It cannot say when the
 * job's id is not known yet (a ring launch before its CQE), when the
 * record is gone (the file ran LOOM_JOB_RECORDS jobs since), or when the
 * job never reached the device (the driver records those when it frees
 * them, after the fence).  With DRM_LOOM_JOB_INFO_WAIT in @flags the
 * driver first waits for the job until @abs_ns (0 without it).
 */
static int recorded_error(struct loom_token *t, uint32_t flags, int64_t abs_ns)
{
	struct drm_loom_job_info info = {
		.job_id = t->job_id, .flags = flags, .timeout_ns = abs_ns,
	};

	if (!t->job_id || t->dev->be->job_info(t->dev, &info) ||
	    info.state != DRM_LOOM_JOB_DONE)
		return 1;
	return info.error;
}

/* The token's result is @status (an error, or success if not negative). */
static void known(struct loom_token *t, int status)
{
	t->status = status < 0 ? status : 0;
	t->status_known = true;
}

/*
 * A signalled token's result, asked once: its job's recorded error, or
 * where the record cannot say, its fence's status, where the driver puts
 * the job's error (kernel/loom_job.c) -- for every job, by ioctl or
 * io_uring, however long ago it ran.  The record is one ioctl; the
 * fence's status three system calls (a sync_file's export, query and
 * close).
 */
static int wait_until(struct loom_token *t, int64_t abs_ns);

static int settle(struct loom_token *t)
{
	uint64_t done_ns;
	int ret, status;

	if (t->n_parts) {
		/* signalled: so is every part; the first failing one's error */
		status = 0;
		for (unsigned i = 0; i < t->n_parts; i++) {
			ret = wait_until(t->parts[i], INT64_MAX);
			if (ret == -ETIMEDOUT || ret == -EINVAL)
				return ret;
			if (!status)
				status = ret;
		}
		known(t, status);
		return 0;
	}
	status = recorded_error(t, 0, 0);
	if (status > 0) {
		ret = fence_info(t, &status, &done_ns);
		if (ret)
			return ret;
	}
	known(t, status);
	return 0;
}

/*
 * Waits for the job on its record where the driver can
 * (DRM_LOOM_FEATURE_JOB_INFO_WAIT): one JOB_INFO with
 * DRM_LOOM_JOB_INFO_WAIT until @abs_ns both waits and answers with the
 * job's error (a record that says DONE has its fence's error, see
 * recorded_error()), where the fence's wait and then the record are two
 * system calls.  False where it cannot say, and the fence's wait answers
 * as it always did: no job id (a ring launch before its CQE, a collective
 * token), an older driver, the record gone (ENOENT), or any failure --
 * ETIME too, so that the fence alone judges a timeout (a job that never
 * reached the device is recorded when it is freed, after its fence).
 */
static bool wait_recorded(struct loom_token *t, int64_t abs_ns)
{
	int status;

	if (t->n_parts ||
	    !(t->dev->info.features & DRM_LOOM_FEATURE_JOB_INFO_WAIT))
		return false;
	status = recorded_error(t, DRM_LOOM_JOB_INFO_WAIT, abs_ns);
	if (status > 0)
		return false;
	known(t, status);
	return true;
}

static int wait_until(struct loom_token *t, int64_t abs_ns)
{
	int ret;

	if (t->status_known || wait_recorded(t, abs_ns))
		return t->status;
	ret = t->dev->be->syncobj_wait(t->dev, &t->syncobj, 1, abs_ns,
				       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (!ret)
		ret = settle(t);
	return ret ? ret : t->status;
}

int loom_token_wait(struct loom_token *token, int64_t timeout_ns)
{
	if (!token)
		return -EINVAL;
	return wait_until(token, deadline(timeout_ns));
}

/* All-of: every token within one deadline, then the first error in order. */
int loom_token_wait_all(struct loom_token *const *tokens, unsigned n,
			int64_t timeout_ns)
{
	int64_t abs_ns = deadline(timeout_ns);
	int first = 0;

	if (n && !tokens)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		int ret = tokens[i] ? wait_until(tokens[i], abs_ns) : -EINVAL;

		if (ret == -ETIMEDOUT || ret == -EINVAL)
			return ret;
		if (!first)
			first = ret;
	}
	return first;
}

int loom_token_done(struct loom_token *token)
{
	int ret;

	if (!token)
		return -EINVAL;
	if (token->status_known)
		return 1;
	ret = token->dev->be->syncobj_wait(token->dev, &token->syncobj, 1, 0,
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
	if (ret == -ETIME)
		return 0;
	return ret ? ret : 1;
}

uint64_t loom_token_job_id(const struct loom_token *token)
{
	return token->job_id;
}

uint64_t loom_token_occurrence(const struct loom_token *token)
{
	return token->occurrence;
}

void loom_counters_add(struct loom_hw_counters *sum,
		       const struct loom_hw_counters *c)
{
	sum->cycles += c->cycles;
	sum->firings += c->firings;
	sum->stalls += c->stalls;
	sum->instances += c->instances;
	sum->items += c->items;
	sum->spawns += c->spawns;
	sum->mem_reads += c->mem_reads;
	sum->mem_writes += c->mem_writes;
}

/* A collective token's: the parts' sums, but cycles, the longest part's. */
static int collective_counters(struct loom_token *token,
			       struct loom_hw_counters *c)
{
	struct loom_hw_counters sum = { 0 }, part;
	uint64_t longest = 0;

	for (unsigned i = 0; i < token->n_parts; i++) {
		int ret = loom_token_counters(token->parts[i], &part);

		if (ret)
			return ret;
		loom_counters_add(&sum, &part);
		if (part.cycles > longest)
			longest = part.cycles;
	}
	sum.cycles = longest;
	*c = sum;
	return 0;
}

int loom_token_launch(const struct loom_token *token,
		      struct loom_launch_ref *ref)
{
	if (!token || !ref)
		return -EINVAL;
	if (!token->launch.kind)
		return -ENOENT;
	*ref = token->launch;
	return 0;
}

int loom_token_counters(struct loom_token *token,
			struct loom_hw_counters *c)
{
	struct drm_loom_job_info info = { .job_id = token ? token->job_id : 0 };
	int ret;

	if (!token || !c)
		return -EINVAL;
	if (token->n_parts)
		return collective_counters(token, c);
	if (!token->job_id)	/* a ring launch whose CQE was not reaped yet */
		return token->dev->info.features & DRM_LOOM_FEATURE_URING_JOB_ID ?
		       -EBUSY : LOOM_E_NOT_SUPPORTED;
	ret = token->dev->be->job_info(token->dev, &info);
	if (ret)
		return ret == -ENOENT ? LOOM_E_JOB_EXPIRED : ret;
	if (info.state != DRM_LOOM_JOB_DONE)
		return -EBUSY;
	*c = (struct loom_hw_counters){
		info.counters.cycles, info.counters.firings,
		info.counters.stalls, info.counters.instances,
		info.counters.items, info.counters.spawns,
		info.counters.mem_reads, info.counters.mem_writes,
	};
	return 0;
}

int loom_token_times(struct loom_token *token, uint64_t *submit_ns,
		     uint64_t *done_ns)
{
	int ret, status;

	if (!token || !submit_ns || !done_ns)
		return -EINVAL;
	if (token->n_parts) {
		uint64_t first = UINT64_MAX, last = 0, s, d;

		for (unsigned i = 0; i < token->n_parts; i++) {
			ret = loom_token_times(token->parts[i], &s, &d);
			if (ret)
				return ret;
			first = s < first ? s : first;
			last = d > last ? d : last;
		}
		*submit_ns = first;
		*done_ns = last;
		return 0;
	}
	ret = fence_info(token, &status, done_ns);
	if (ret)
		return ret;
	if (!status)
		return -EBUSY;
	*submit_ns = token->submit_ns;
	return 0;
}

unsigned loom_token_num_parts(const struct loom_token *token)
{
	return token && token->n_parts ? token->n_parts : 1;
}

struct loom_token *loom_token_part(struct loom_token *token, unsigned i)
{
	if (!token || i >= loom_token_num_parts(token))
		return NULL;
	return token->n_parts ? token->parts[i] : token;
}
