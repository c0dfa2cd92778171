// SPDX-License-Identifier: MIT
/*
 * DOC: io_uring completions
 *
 * A struct loom_ring submits launches as DRM_LOOM_URING_CMD_SUBMIT; the
 * driver posts each CQE when the job is done.  The SQE's user_data is the
 * index of a slot that keeps the caller's user_data, the prepared
 * submission (the kernel may read its command BO and user pointers after
 * io_uring_submit() returns, if the command is punted to a worker) and the
 * token, which learns its result from the CQE.  CQEs drained on behalf of a
 * token wait stay queued in the ring until loom_ring_reap() hands them out,
 * so each completion reaches the caller exactly once.
 */
#include <errno.h>
#include <liburing.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "drm/loom_drm.h"
#include "device_internal.h"

struct ring_slot {
	bool busy;			/* submitted, not yet handed out */
	bool done;			/* its CQE arrived */
	uint64_t user_data;
	int res;
	struct loom_prepared *prep;	/* freed when the CQE arrives */
	struct loom_token *token;	/* NULL once freed */
};

struct loom_ring {
	struct loom_device *dev;
	struct io_uring uring;
	struct ring_slot *slots;
	unsigned nslots;
	unsigned in_flight;		/* busy slots */
	unsigned *doneq;		/* slots whose CQE arrived, in order */
	unsigned done_head, done_count;	/* FIFO over doneq[nslots] */
};

int loom_ring_create(struct loom_device *dev, unsigned entries,
		     struct loom_ring **out)
{
	struct loom_ring *r;
	int ret;

	if (!dev || !out || entries == 0)
		return -EINVAL;
	if (!(dev->info.features & DRM_LOOM_FEATURE_URING_CMD))
		return LOOM_E_NOT_SUPPORTED;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = io_uring_queue_init(entries, &r->uring, IORING_SETUP_SQE128);
	if (ret) {
		free(r);
		return ret;
	}
	r->dev = dev;
	*out = r;
	return 0;
}

/* Makes room for one more slot; slot indices stay valid across growth. */
static int grow(struct loom_ring *r)
{
	unsigned n = r->nslots ? r->nslots * 2 : 16;
	struct ring_slot *s = realloc(r->slots, n * sizeof(*s));
	unsigned *q;

	if (!s)
		return -ENOMEM;
	r->slots = s;
	memset(s + r->nslots, 0, (n - r->nslots) * sizeof(*s));
	q = malloc(n * sizeof(*q));
	if (!q)
		return -ENOMEM;
	/* unroll the FIFO into the bigger array */
	for (unsigned i = 0; i < r->done_count; i++)
		q[i] = r->doneq[(r->done_head + i) % r->nslots];
	free(r->doneq);
	r->doneq = q;
	r->done_head = 0;
	r->nslots = n;
	return 0;
}

static int slot_get(struct loom_ring *r, unsigned *index)
{
	unsigned i;

	for (i = 0; i < r->nslots; i++)
		if (!r->slots[i].busy)
			break;
	if (i == r->nslots && grow(r))
		return -ENOMEM;
	memset(&r->slots[i], 0, sizeof(r->slots[i]));
	r->slots[i].busy = true;
	*index = i;
	return 0;
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

/* Records one CQE: the slot's result, its token's, and the FIFO. */
static void complete(struct loom_ring *r, const struct io_uring_cqe *cqe)
{
	struct ring_slot *s = &r->slots[cqe->user_data];

	s->done = true;
	s->res = cqe->res;
	if (s->prep) {
		loom_prepared_release(s->prep);
		free(s->prep);
		s->prep = NULL;
	}
	if (s->token) {
		s->token->status = cqe->res;
		s->token->status_known = true;
	}
	r->doneq[(r->done_head + r->done_count++) % r->nslots] = cqe->user_data;
}

static void drain(struct loom_ring *r)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&r->uring, &cqe) == 0) {
		complete(r, cqe);
		io_uring_cqe_seen(&r->uring, cqe);
	}
}

/* Blocks for one CQE; @timeout_ns < 0 waits forever. */
static int wait_one(struct loom_ring *r, int64_t timeout_ns)
{
	struct __kernel_timespec ts = { timeout_ns / 1000000000,
					timeout_ns % 1000000000 };
	struct io_uring_cqe *cqe;
	int ret;

	if (timeout_ns < 0)
		ret = io_uring_wait_cqe(&r->uring, &cqe);
	else
		ret = io_uring_wait_cqe_timeout(&r->uring, &cqe, &ts);
	if (ret)
		return ret == -ETIME ? -ETIMEDOUT : ret;
	complete(r, cqe);
	io_uring_cqe_seen(&r->uring, cqe);
	return 0;
}

static int submit(struct loom_ring *r, unsigned slot, unsigned queue,
		  uint32_t out_syncobj)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->uring);
	struct drm_loom_submit s;
	int ret;

	if (!sqe)
		return -EBUSY;
	loom_launch_fill_submit(r->slots[slot].prep, queue, out_syncobj, &s);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, r->dev->fd, NULL, 0, 0);
	sqe->cmd_op = DRM_LOOM_URING_CMD_SUBMIT;
	sqe_set_submit(sqe, &s);
	sqe->user_data = slot;
	/* one SQE per enter: the driver resolves syncobjs at submit */
	ret = io_uring_submit(&r->uring);
	return ret == 1 ? 0 : ret < 0 ? ret : -EIO;
}

static void slot_abort(struct loom_ring *r, unsigned slot)
{
	struct ring_slot *s = &r->slots[slot];

	if (s->prep) {
		loom_prepared_release(s->prep);
		free(s->prep);
	}
	memset(s, 0, sizeof(*s));
}

/*
 * Submits the launch @prep describes through the ring, which keeps a copy
 * of it until the CQE; @prep is consumed either way.
 */
static int ring_submit(struct loom_ring *r, struct loom_prepared *prep,
		       unsigned queue, uint64_t user_data,
		       struct loom_token **token)
{
	struct loom_prepared *p = malloc(sizeof(*p));
	struct loom_token *t = NULL;
	unsigned slot;
	int ret;

	ret = p ? 0 : -ENOMEM;
	if (!ret && token)
		ret = loom_token_new(r->dev, &t);
	if (!ret)
		ret = slot_get(r, &slot);
	if (ret) {
		loom_token_free(t);
		loom_prepared_release(prep);
		free(p);
		return ret;
	}
	*p = *prep;
	r->slots[slot].prep = p;
	r->slots[slot].user_data = user_data;
	if (t)
		t->submit_ns = loom_now_ns();
	ret = submit(r, slot, queue, t ? t->syncobj : 0);
	if (ret) {
		slot_abort(r, slot);
		loom_token_free(t);
		return ret;
	}
	r->in_flight++;
	if (t) {
		t->ring = r;
		t->slot = slot;
		r->slots[slot].token = t;
		*token = t;
	}
	return 0;
}

int loom_ring_launch_dense(struct loom_ring *r, const struct loom_image *img,
			   const char *thread, const struct loom_arg *args,
			   unsigned n_args, const int64_t *extents,
			   unsigned n_extents, struct loom_token *const *deps,
			   unsigned n_deps, unsigned queue, uint64_t user_data,
			   struct loom_token **token)
{
	struct loom_prepared p;
	int ret;

	if (!r)
		return -EINVAL;
	ret = loom_launch_prepare(r->dev, img, thread, args, n_args, extents,
				  n_extents, deps, n_deps, queue, &p);
	return ret ? ret : ring_submit(r, &p, queue, user_data, token);
}

static int ring_launch_items(struct loom_ring *r, const struct loom_image *img,
			     const char *thread, const struct loom_arg *args,
			     unsigned n_args,
			     const struct loom_items_batch *items,
			     struct loom_token *const *deps, unsigned n_deps,
			     unsigned queue, uint64_t user_data,
			     struct loom_token **token)
{
	struct loom_prepared p;
	int ret;

	if (!r)
		return -EINVAL;
	ret = loom_launch_prepare_items(r->dev, img, thread, args, n_args,
					items, deps, n_deps, queue, &p);
	return ret ? ret : ring_submit(r, &p, queue, user_data, token);
}

int loom_ring_launch_items(struct loom_ring *r, const struct loom_image *img,
			   const char *thread, const struct loom_arg *args,
			   unsigned n_args, uint32_t count, uint64_t payload_va,
			   uint64_t result_va, struct loom_token *const *deps,
			   unsigned n_deps, unsigned queue, uint64_t user_data,
			   struct loom_token **token)
{
	struct loom_items_batch items = { count, payload_va, result_va, 0 };

	return ring_launch_items(r, img, thread, args, n_args, &items, deps,
				 n_deps, queue, user_data, token);
}

int loom_ring_launch_batch(struct loom_ring *r, const struct loom_image *img,
			   const char *thread, const struct loom_arg *args,
			   unsigned n_args, const struct loom_items_batch *items,
			   unsigned queue, uint64_t user_data)
{
	return ring_launch_items(r, img, thread, args, n_args, items, NULL, 0,
				 queue, user_data, NULL);
}

unsigned loom_ring_in_flight(const struct loom_ring *r)
{
	return r->in_flight;
}

int loom_ring_reap(struct loom_ring *r, struct loom_completion *out,
		   unsigned max, bool wait)
{
	unsigned n = 0;

	if (!r || (max && !out))
		return -EINVAL;
	drain(r);
	if (wait && max && !r->done_count && r->in_flight) {
		int ret = wait_one(r, -1);

		if (ret)
			return ret;
	}
	while (n < max && r->done_count) {
		unsigned i = r->doneq[r->done_head];
		struct ring_slot *s = &r->slots[i];

		r->done_head = (r->done_head + 1) % r->nslots;
		r->done_count--;
		out[n++] = (struct loom_completion){ s->user_data, s->res };
		/* a live token keeps its result; the slot is free again */
		if (s->token)
			s->token->ring = NULL;
		memset(s, 0, sizeof(*s));
		r->in_flight--;
	}
	return n;
}

int loom_ring_token_wait(struct loom_token *t, int64_t timeout_ns)
{
	while (!t->status_known) {
		int ret = wait_one(t->ring, timeout_ns);

		if (ret)
			return ret;
	}
	return t->status;
}

int loom_ring_token_poll(struct loom_token *t)
{
	drain(t->ring);
	return t->status_known ? 0 : -ETIMEDOUT;
}

void loom_ring_token_detach(struct loom_ring *r, unsigned slot)
{
	r->slots[slot].token = NULL;
}

void loom_ring_destroy(struct loom_ring *r)
{
	if (!r)
		return;
	/* the kernel may still read slot memory: wait for every CQE */
	for (unsigned i = 0; i < r->nslots; i++) {
		while (r->slots[i].busy && !r->slots[i].done)
			if (wait_one(r, -1))
				break;
		if (r->slots[i].token)
			r->slots[i].token->ring = NULL;
		if (r->slots[i].prep)
			slot_abort(r, i);
	}
	io_uring_queue_exit(&r->uring);
	free(r->slots);
	free(r->doneq);
	free(r);
}
