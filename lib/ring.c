// SPDX-License-Identifier: MIT
/*
 * DOC: rings: the loom_ring object and its io_uring transport
 *
 * A struct loom_ring launches through io_uring: each launch is checked and
 * encoded as loom_launch() does (launch.c), its command written into the
 * ring's own arena (arena.c), and its submission recorded until its CQE
 * is reaped.
 *
 * The transport underneath, SQEs in, CQEs out: one DRM_LOOM_URING_CMD_SUBMIT per 128-byte SQE, one
 * io_uring_enter per SQE (the driver resolves syncobjs when it issues the
 * command), and each CQE handed out once with its res and, on a ring set
 * up with IORING_SETUP_CQE32 where the driver offers
 * DRM_LOOM_FEATURE_URING_JOB_ID, the job id.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "drm/loom_drm.h"
#include "device_internal.h"
#include "occurrence.h"

/* A ring's arena size: its launches wait for their CQEs anyway. */
#define RING_ARENA_SIZE		(16u * 1024)

int loom_uring_init(struct loom_uring *u, struct loom_device *dev,
		    unsigned entries, bool job_id)
{
	u->dev = dev;
	return dev->be->uring_init(u, entries, job_id);
}

void loom_uring_exit(struct loom_uring *u)
{
	u->dev->be->uring_exit(u);
}

int loom_uring_submit(struct loom_uring *u, const struct drm_loom_submit *s,
		      uint64_t user_data)
{
	return u->dev->be->uring_submit(u, s, user_data);
}

int loom_uring_next(struct loom_uring *u, bool wait, struct loom_cqe *cqe)
{
	return u->dev->be->uring_next(u, wait, cqe);
}

/* ------------------------------------------------- the loom_ring object --- */

/*
 * A ring launch in flight: what the kernel may still read after
 * io_uring_submit() returned (an issue punted to a worker reads the BO
 * reference and the in-syncobjs then), the references that keep its
 * dependencies' syncobjs alive until then, and its token.  Records are
 * reused, their arrays only ever grow: no allocation per launch.
 */
struct ring_rec {
	bool busy;			/* submitted, not yet reaped */
	bool done;			/* its CQE arrived */
	uint64_t user_data;
	int res;
	uint64_t seq;			/* its arena entry */
	struct drm_loom_bo_ref ref;
	uint32_t *in;
	struct loom_token **deps;	/* references */
	unsigned n_deps, deps_cap;
	struct loom_token *token;	/* a reference, or NULL */
};

struct loom_ring {
	struct loom_device *dev;
	struct loom_uring u;
	struct loom_arena arena;
	struct ring_rec *recs;
	unsigned nrecs;
	unsigned in_flight;		/* busy records */
	unsigned pending;		/* busy records without their CQE */
	unsigned *doneq;		/* records whose CQE arrived, in order */
	unsigned done_head, done_count;	/* FIFO over doneq[nrecs] */
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
	ret = loom_uring_init(&r->u, dev, entries,
			      dev->info.features & DRM_LOOM_FEATURE_URING_JOB_ID);
	if (ret) {
		free(r);
		return ret;
	}
	r->dev = dev;
	*out = r;
	return 0;
}

/* Makes room for more records; indices stay valid across growth. */
static int recs_grow(struct loom_ring *r)
{
	unsigned n = r->nrecs ? r->nrecs * 2 : 16;
	struct ring_rec *s = realloc(r->recs, n * sizeof(*s));
	unsigned *q;

	if (!s)
		return -ENOMEM;
	r->recs = s;
	memset(s + r->nrecs, 0, (n - r->nrecs) * sizeof(*s));
	q = malloc(n * sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (unsigned i = 0; i < r->done_count; i++)
		q[i] = r->doneq[(r->done_head + i) % r->nrecs];
	free(r->doneq);
	r->doneq = q;
	r->done_head = 0;
	r->nrecs = n;
	return 0;
}

/* A free record with room for @n_deps dependencies. */
static int rec_get(struct loom_ring *r, unsigned n_deps, unsigned *index)
{
	struct ring_rec *s;
	unsigned i;

	for (i = 0; i < r->nrecs; i++)
		if (!r->recs[i].busy)
			break;
	if (i == r->nrecs && recs_grow(r))
		return -ENOMEM;
	s = &r->recs[i];
	if (n_deps > s->deps_cap) {
		uint32_t *in = realloc(s->in, n_deps * sizeof(*in));
		struct loom_token **d;

		if (!in)
			return -ENOMEM;
		s->in = in;
		d = realloc(s->deps, n_deps * sizeof(*d));
		if (!d)
			return -ENOMEM;
		s->deps = d;
		s->deps_cap = n_deps;
	}
	*index = i;
	return 0;
}

/* Lets go of what a record holds; it is free again. */
static void rec_release(struct ring_rec *s)
{
	for (unsigned i = 0; i < s->n_deps; i++)
		loom_token_put(s->deps[i]);
	if (s->token)
		loom_token_put(s->token);
	s->n_deps = 0;
	s->token = NULL;
	s->busy = false;
	s->done = false;
}

/*
 * Records one CQE.  A submission the driver refused after
 * io_uring_submit() returned never got its fence: the token's syncobj is
 * signalled so nothing waits for it forever, and keeps the refusal.
 */
static void ring_complete(struct loom_ring *r, const struct loom_cqe *cqe)
{
	struct ring_rec *s = &r->recs[cqe->user_data];
	struct loom_token *t = s->token;

	s->done = true;
	s->res = cqe->res;
	if (t && cqe->job_id)
		t->job_id = cqe->job_id;
	if (t && cqe->res &&
	    r->dev->be->syncobj_wait(r->dev, &t->syncobj, 1, 0, 0) == -EINVAL) {
		t->status = cqe->res;
		t->status_known = true;
		r->dev->be->syncobj_signal(r->dev, t->syncobj);
	}
	for (unsigned i = 0; i < s->n_deps; i++)
		loom_token_put(s->deps[i]);
	s->n_deps = 0;
	loom_arena_done(&r->arena, s->seq);
	r->pending--;
	r->doneq[(r->done_head + r->done_count++) % r->nrecs] = cqe->user_data;
}

/* Takes every CQE there is, or waits for one (@wait, if any is pending). */
static int ring_drain(struct loom_ring *r, bool wait)
{
	struct loom_cqe cqe;
	int ret;

	if (wait && r->pending) {
		ret = loom_uring_next(&r->u, true, &cqe);
		if (ret)
			return ret;
		ring_complete(r, &cqe);
	}
	while (loom_uring_next(&r->u, false, &cqe) == 0)
		ring_complete(r, &cqe);
	return 0;
}

/* Waits for a CQE, for loom_arena_room(): the ring's arena entries are done
 * when their CQEs arrive, whether or not all of them are wanted. */
static int ring_arena_wait(void *ring, bool all)
{
	(void)all;
	return ring_drain(ring, true);
}

/* A launch through @r, of dispatch @occurrence (0: mint one). */
static int ring_launch(struct loom_ring *r, const struct loom_image *img,
		       const struct loom_launch *l,
		       const struct loom_pkt_run_work *work,
		       uint64_t occurrence, uint64_t user_data,
		       struct loom_token **token)
{
	struct drm_loom_submit s;
	struct loom_token *t = NULL;
	struct ring_rec *rec;
	struct loom_checked_launch c;
	unsigned index;
	uint32_t off;
	int ret;

	if (!r)
		return -EINVAL;
	ret = loom_launch_prepare(r->dev, img, l, work, &c);
	if (!ret && !occurrence)
		ret = loom_occurrence_mint(&occurrence);
	if (ret)
		return ret;
	/* fresh: a punted issue attaches the fence after we return */
	if (token)
		ret = loom_token_new(r->dev, &t);
	if (t) {
		t->occurrence = occurrence;
		if (l->site)
			t->launch = *l->site;
	}
	if (!ret)
		ret = loom_arena_room(r->dev, &r->arena, RING_ARENA_SIZE,
				      loom_cmd_room(c.cmd_size), &off,
				      ring_arena_wait, r);
	if (!ret)
		ret = rec_get(r, l->n_deps, &index);
	if (ret)
		goto err_token;
	rec = &r->recs[index];
	loom_launch_write((unsigned char *)r->arena.bo->map + off, img, &c, l);
	rec->ref = (struct drm_loom_bo_ref){ c.plan->config->handle,
					     DRM_LOOM_BO_REF_READ };
	for (unsigned i = 0; i < l->n_deps; i++) {
		rec->in[i] = l->deps[i]->syncobj;
		rec->deps[i] = loom_token_get(l->deps[i]);
	}
	rec->n_deps = l->n_deps;
	rec->user_data = user_data;
	rec->busy = true;
	rec->token = t ? loom_token_get(t) : NULL;
	rec->seq = loom_arena_push(&r->arena, off, loom_cmd_room(c.cmd_size),
				   NULL);
	loom_launch_submit_args(&s, l, &c, &r->arena, off, &rec->ref, rec->in,
				t ? t->syncobj : 0);
	if (t)
		t->submit_ns = loom_now_ns();
	ret = loom_uring_submit(&r->u, &s, index);
	if (ret) {
		/* never reached the kernel: the newest entry goes again */
		loom_arena_unpush(&r->arena, off);
		rec_release(rec);
		goto err_token;
	}
	r->in_flight++;
	r->pending++;
	if (t)
		*token = t;
	return 0;

err_token:
	if (t)
		loom_token_put(t);
	return ret;
}

int loom_ring_launch(struct loom_ring *r, const struct loom_image *img,
		     const struct loom_launch *l, uint64_t user_data,
		     struct loom_token **token)
{
	return ring_launch(r, img, l, NULL, 0, user_data, token);
}

int loom_ring_launch_for(struct loom_ring *r, const struct loom_image *img,
			 const struct loom_launch *l,
			 const struct loom_pkt_run_work *work,
			 uint64_t occurrence, uint64_t user_data)
{
	if (!occurrence)
		return -EINVAL;
	return ring_launch(r, img, l, work, occurrence, user_data, NULL);
}

unsigned loom_ring_in_flight(const struct loom_ring *r)
{
	return r->in_flight;
}

int loom_ring_reap(struct loom_ring *r, struct loom_completion *out,
		   unsigned max, bool wait)
{
	unsigned n = 0;
	int ret;

	if (!r || (max && !out))
		return -EINVAL;
	ret = ring_drain(r, wait && max && !r->done_count);
	if (ret)
		return ret;
	while (n < max && r->done_count) {
		unsigned i = r->doneq[r->done_head];
		struct ring_rec *s = &r->recs[i];

		r->done_head = (r->done_head + 1) % r->nrecs;
		r->done_count--;
		out[n++] = (struct loom_completion){ s->user_data, s->res };
		rec_release(s);
		r->in_flight--;
	}
	return n;
}

void loom_ring_destroy(struct loom_ring *r)
{
	if (!r)
		return;
	/* the kernel may still read records and the arena: every CQE first */
	while (r->pending)
		if (ring_drain(r, true))
			break;
	for (unsigned i = 0; i < r->nrecs; i++) {
		if (r->recs[i].busy)
			rec_release(&r->recs[i]);
		free(r->recs[i].in);
		free(r->recs[i].deps);
	}
	loom_uring_exit(&r->u);
	loom_arena_fini(&r->arena);
	free(r->recs);
	free(r->doneq);
	free(r);
}
