/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: kernel API differences loom builds across
 *
 * Kbuild detects each difference from the installed headers and defines a
 * LOOM_HAVE_* macro; the rest of the driver calls only the wrappers here.
 */
#ifndef LOOM_COMPAT_H
#define LOOM_COMPAT_H

#include <drm/gpu_scheduler.h>

/**
 * struct loom_sched_params - what loom passes to drm_sched_init()
 * @ops: backend operations
 * @credit_limit: jobs the hardware queue holds at once
 * @timeout: job timeout in jiffies
 * @timeout_wq: workqueue for timeout handling, or NULL for system_wq
 * @name: scheduler name shown in traces
 * @dev: device for diagnostics
 */
struct loom_sched_params {
	const struct drm_sched_backend_ops *ops;
	u32 credit_limit;
	long timeout;
	struct workqueue_struct *timeout_wq;
	const char *name;
	struct device *dev;
};

/*
 * 6.1.191+ takes struct drm_sched_init_args; earlier 6.1 takes the
 * positional list.  hang_limit is deprecated in both: loom passes 0 and
 * handles repeat offenders itself.
 */
static inline int loom_sched_init(struct drm_gpu_scheduler *sched,
				  const struct loom_sched_params *p)
{
#ifdef LOOM_HAVE_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = p->ops,
		.timeout_wq = p->timeout_wq,
		.credit_limit = p->credit_limit,
		.hang_limit = 0,
		.timeout = p->timeout,
		.name = p->name,
		.dev = p->dev,
	};

	return drm_sched_init(sched, &args);
#else
	return drm_sched_init(sched, p->ops, p->credit_limit, 0, p->timeout,
			      p->timeout_wq, NULL, p->name, p->dev);
#endif
}

#endif /* LOOM_COMPAT_H */
