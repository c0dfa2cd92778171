// SPDX-License-Identifier: MIT
/*
 * DOC: io_uring transport
 *
 * SQEs in, CQEs out: one DRM_LOOM_URING_CMD_SUBMIT per 128-byte SQE, one
 * io_uring_enter per SQE (the driver resolves syncobjs when it issues the
 * command), and each CQE handed out once with its res and, on a ring set
 * up with IORING_SETUP_CQE32 where the driver offers
 * DRM_LOOM_FEATURE_URING_JOB_ID, the job id.  What a submission means
 * (its command buffer, its token, its caller's user_data) is launch.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "drm/loom_drm.h"
#include "device_internal.h"

int loom_uring_init(struct loom_uring *u, int fd, unsigned entries,
		    bool job_id)
{
	unsigned flags = IORING_SETUP_SQE128 | (job_id ? IORING_SETUP_CQE32 : 0);
	int ret = io_uring_queue_init(entries, &u->ring, flags);

	if (ret)
		return ret;
	u->fd = fd;
	u->cqe32 = job_id;
	return 0;
}

void loom_uring_exit(struct loom_uring *u)
{
	io_uring_queue_exit(&u->ring);
}

/*
 * liburing declares the command area as a zero-length array; copying
 * through a function keeps the compiler from sizing it at zero.
 */
static __attribute__((noinline)) void sqe_set_submit(struct io_uring_sqe *sqe,
						     const struct drm_loom_submit *s)
{
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), s, sizeof(*s));
}

int loom_uring_submit(struct loom_uring *u, const struct drm_loom_submit *s,
		      uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, u->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, s);
	sqe->user_data = user_data;
	ret = io_uring_submit(&u->ring);
	return ret == 1 ? 0 : ret < 0 ? ret : -EIO;
}

int loom_uring_next(struct loom_uring *u, bool wait, struct loom_cqe *out)
{
	struct io_uring_cqe *cqe;
	int ret = wait ? io_uring_wait_cqe(&u->ring, &cqe) :
			 io_uring_peek_cqe(&u->ring, &cqe);

	if (ret)
		return ret;
	*out = (struct loom_cqe){
		.user_data = cqe->user_data,
		.res = cqe->res,
		.job_id = u->cqe32 ? cqe->big_cqe[0] : 0,
	};
	io_uring_cqe_seen(&u->ring, cqe);
	return 0;
}
