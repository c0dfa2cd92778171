// SPDX-License-Identifier: MIT
/*
 * DOC: host programs
 *
 * loom_host_run() runs the register machine of an image's .loom.host
 * section (uapi/loom_image.h, Documentation/compiler.rst "The host
 * program") on a real device: format/interp.c interprets it, this file is
 * its device backend.  Buffers are BOs, dense launches are
 * loom_launch_dense() jobs ordered by the program's tokens, dynamic-work
 * launches drain their domain through the device adapter.  The program is
 * checked completely (format/reader.c) before its first instruction runs.
 *
 * Every launch is submitted at its LAUNCH and joined at its WAIT (or when
 * the program first needs it), dense and dynamic work alike: a dynamic-work
 * launch drains its domain on a thread of its own, after the launches of
 * its wait list, while the program goes on.  Host loads and stores first
 * wait for every launch made so far: the reference interpreter runs
 * launches synchronously in program order, and this keeps its meaning for
 * programs whose host accesses follow a launch without an explicit wait.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_device.h"
#include "device_internal.h"
#include "failure.h"
#include "loom_format.h"

/* ------------------------------------------------------------- state --- */

struct domain;

struct launch {
	struct loom_token *token;	/* NULL: nothing to wait for */
	const char *thread;
	int64_t insn;			/* its LAUNCH instruction */
	unsigned thread_index;
	bool counted;			/* counters taken */
	struct domain *domain;		/* a dynamic-work launch, until joined */
	int error;			/* a joined domain's outcome */
};

/*
 * A dynamic-work launch in flight: its own thread waits for the launches
 * of its wait list (@after: domains not joined yet, @deps: tokens), then
 * drains the domain through the device adapter.  The program's thread
 * joins it, takes its result and frees it.
 */
struct domain {
	struct run *s;
	pthread_t thread;
	struct loom_launch_ref site;	/* the config's */
	struct loom_work_device_config c;
	struct loom_arg args[LOOM_IMAGE_MAX_ARGS];
	struct loom_token *deps[64];
	unsigned n_deps;
	struct domain *after[64];
	unsigned n_after;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;			/* @ret and @res are final */
	bool ran;			/* the adapter was called: @res is */
	int ret;
	enum loom_error err;
	struct loom_work_device_result res;
};

struct run {
	struct loom_device *dev;
	const struct loom_image *img;
	struct loom_host_options opt;
	struct loom_host_stats *st;
	struct loom_bo **bos;
	size_t n_bos, cap_bos;
	struct launch *launches;
	size_t n_launches, cap_launches, drained;
	const char *func;		/* the host function run: launch sites */
	const struct loom_image_view *view;
	unsigned func_index;
};

static int64_t timeout(const struct run *s)
{
	return s->opt.timeout_ns > 0 ? s->opt.timeout_ns : -1;
}

/* A finished dense job, shown to the observer (once). */
static void observe_dense(struct run *s, struct launch *l, int error,
			  const struct loom_hw_counters *c)
{
	struct loom_job_record rec = {
		.thread = l->thread,
		.worker = LOOM_SCHED_NO_WORKER,
		.occurrence = loom_token_occurrence(l->token),
		.error = error,
	};

	if (!s->opt.observe_job ||
	    loom_token_times(l->token, &rec.submit_ns, &rec.done_ns))
		return;
	if (c)
		rec.counters = *c;
	s->opt.observe_job(s->opt.observe_ctx, &rec);
}

static int join_domain(struct run *s, struct launch *l);

/*
 * The first launch that failed, for loom_host_report(): its LAUNCH and
 * thread, and for a job of its own what the device said of it.
 */
static void launch_failed(struct run *s, const struct launch *l)
{
	if (s->st->failed_launch >= 0)
		return;
	s->st->failed_launch = l->insn;
	s->st->failed_thread = l->thread_index;
	if (l->token && !l->domain)
		loom_job_failure_read(l->token, s->view->info.fabric_width *
				      s->view->info.fabric_height, s->st);
}

static int wait_launch(struct run *s, struct launch *l)
{
	struct loom_hw_counters c;
	int ret;

	if (l->domain)
		return join_domain(s, l);
	if (l->error)
		return l->error;
	if (!l->token || l->counted)
		return l->token ? loom_token_wait(l->token, timeout(s)) : 0;
	ret = loom_token_wait(l->token, timeout(s));
	if (ret)
		launch_failed(s, l);
	if (ret == -ETIMEDOUT)
		return ret;
	l->counted = true;
	if (!ret && !loom_token_counters(l->token, &c)) {
		s->st->cycles += c.cycles;
		s->st->firings += c.firings;
		observe_dense(s, l, 0, &c);
	} else {
		observe_dense(s, l, ret, NULL);
	}
	return ret;
}

/* Waits for every launch made so far. */
static int drain(struct run *s)
{
	for (; s->drained < s->n_launches; s->drained++) {
		int ret = wait_launch(s, &s->launches[s->drained]);

		if (ret)
			return ret;
	}
	return 0;
}

static int add_launch(struct run *s, struct loom_token *token,
		      const struct loom_interp_launch *il, const char *thread,
		      uint64_t *id)
{
	if (s->n_launches == s->cap_launches) {
		size_t cap = s->cap_launches ? 2 * s->cap_launches : 16;
		struct launch *l = realloc(s->launches, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		s->launches = l;
		s->cap_launches = cap;
	}
	s->launches[s->n_launches] = (struct launch){
		.token = token, .thread = thread, .thread_index = il->thread,
		.insn = loom_view_host_launch(s->view, s->func_index, il->ordinal),
	};
	*id = s->n_launches++;
	return 0;
}

/* ------------------------------------------------------- the backend --- */

static int alloc(void *ctx, uint64_t n, unsigned size, uint64_t *va)
{
	struct run *s = ctx;
	struct loom_bo *bo;
	uint64_t bytes;
	int ret;

	if (n > (UINT64_MAX - 8) / size)
		return -ENOMEM;
	bytes = (n * size + 7) & ~7ULL;
	if (s->n_bos == s->cap_bos) {
		size_t cap = s->cap_bos ? 2 * s->cap_bos : 16;
		struct loom_bo **b = realloc(s->bos, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		s->bos = b;
		s->cap_bos = cap;
	}
	ret = loom_bo_alloc(s->dev, bytes ? bytes : 8, 0, &bo);
	if (ret)
		return ret;
	s->bos[s->n_bos++] = bo;
	*va = loom_bo_va(bo);
	return 0;
}

/* The CPU address of @size bytes at device VA @va, or NULL. */
static unsigned char *host_ptr(struct run *s, uint64_t va, unsigned size)
{
	for (size_t i = s->n_bos; i-- > 0;) {
		uint64_t base = loom_bo_va(s->bos[i]);
		uint64_t len = loom_bo_size(s->bos[i]);

		if (va >= base && va - base <= len && size <= len - (va - base))
			return (unsigned char *)loom_bo_map(s->bos[i]) + (va - base);
	}
	return NULL;
}

static int load(void *ctx, uint64_t va, unsigned size, uint64_t *v)
{
	struct run *s = ctx;
	unsigned char *at;
	int ret = drain(s);

	if (ret)
		return ret;
	at = host_ptr(s, va, size);
	if (!at)
		return LOOM_E_HOST_FAULT;
	*v = 0;
	memcpy(v, at, size);	/* little endian: the low bytes */
	return 0;
}

static int store(void *ctx, uint64_t va, unsigned size, uint64_t v)
{
	struct run *s = ctx;
	unsigned char *at;
	int ret = drain(s);

	if (ret)
		return ret;
	at = host_ptr(s, va, size);
	if (!at)
		return LOOM_E_HOST_FAULT;
	memcpy(at, &v, size);	/* little endian: the low bytes */
	return 0;
}

/*
 * An f32 prints with 9 significant digits, enough to tell every float
 * from every other (reading it back gives the same bits): exact and the
 * same on every host, "inf", "-inf", "nan" and "-nan" included.
 */
static void print(void *ctx, enum loom_arg_type type, int64_t v)
{
	struct run *s = ctx;
	uint32_t bits = (uint32_t)v;
	float f;

	if (s->opt.print) {
		s->opt.print(s->opt.print_ctx, type, v);
	} else if (s->opt.out && type == LOOM_ARG_F32) {
		memcpy(&f, &bits, sizeof(f));
		fprintf(s->opt.out, "%.9g\n", (double)f);
	} else if (s->opt.out) {
		fprintf(s->opt.out, "%lld\n", (long long)v);
	}
}

static int check_failed(void *ctx, int64_t lhs, int64_t rhs)
{
	struct run *s = ctx;

	s->st->check_lhs = lhs;
	s->st->check_rhs = rhs;
	return LOOM_E_CHECK_FAILED;
}

/*
 * The tokens of the launches @l waits for.  A dynamic-work launch still
 * running goes into @after if the caller can wait for it (@after), else
 * it is joined here first: a dense launch is submitted to the device, which
 * can only wait for a fence, and a domain has one only once it completed.
 */
static int gather_deps(struct run *s, const struct loom_interp_launch *l,
		       struct loom_token **deps, unsigned *n_deps,
		       struct domain **after, unsigned *n_after, unsigned max)
{
	*n_deps = 0;
	if (n_after)
		*n_after = 0;
	for (unsigned i = 0; i < l->num_waits; i++) {
		struct launch *w = &s->launches[l->waits[i]];
		int ret;

		if (w->domain && after) {
			if (*n_after == max)
				return -EINVAL;
			after[(*n_after)++] = w->domain;
			continue;
		}
		ret = w->domain ? join_domain(s, w) : w->error;
		if (ret)
			return ret;
		if (!w->token)
			continue;
		if (*n_deps == max)
			return -EINVAL;
		deps[(*n_deps)++] = w->token;
	}
	return 0;
}

/*
 * The scheduler of a dynamic-work launch: the options' with their
 * defaults, tracing only for someone who looks (@traced).  No replay
 * occurrence: each launch's domain gets one minted (loom_host_run()
 * refuses options that name one).
 */
static struct loom_sched_config host_sched(const struct loom_sched_config *opt,
					   bool traced)
{
	return (struct loom_sched_config){
		.workers = opt->workers ? opt->workers : 1,
		.deque_capacity = opt->deque_capacity ? opt->deque_capacity :
							65536,
		.max_batch = opt->max_batch ? opt->max_batch : 64,
		.flags = opt->flags | (traced ? 0 : LOOM_SCHED_NO_TRACE),
	};
}

/* Launch @l's ref: loom_launch_site_host()'s. */
static struct loom_launch_ref site_of(const struct run *s,
				      const struct loom_interp_launch *l)
{
	return (struct loom_launch_ref){
		.image = loom_image_digest(s->img), .thread = l->thread,
		.kind = LOOM_SITE_HOST, .ordinal = l->ordinal, .site = s->func,
	};
}

static void observe_launch(struct run *s, const struct loom_launch_ref *ref,
			   uint64_t occurrence)
{
	if (s->opt.observe_launch && occurrence)
		s->opt.observe_launch(s->opt.observe_ctx, ref, occurrence);
}

/* A dense launch on queue 0, its token carrying its launch ref. */
static int launch_dense(struct run *s, const struct loom_interp_launch *l,
			const struct loom_thread_info *ti,
			const struct loom_arg *args, struct loom_token **deps,
			unsigned n_deps, struct loom_token **tok)
{
	struct loom_launch_ref site = site_of(s, l);
	struct loom_launch dl = loom_launch_dense_of(ti->name, args,
						     ti->num_args, l->extents,
						     ti->rank, deps, n_deps, 0);
	int ret;

	dl.site = &site;
	ret = loom_launch(s->dev, s->img, &dl, tok);
	if (ret)
		return ret;
	s->st->jobs++;
	observe_launch(s, &site, loom_token_occurrence(*tok));
	return 0;
}

/* Blocks until @d has run; its outcome. */
static int domain_outcome(struct domain *d)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	while (!d->done)
		pthread_cond_wait(&d->cond, &d->lock);
	ret = d->ret;
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* A domain's thread: after its wait list, the whole run. */
static void *run_domain(void *arg)
{
	struct domain *d = arg;
	int ret = 0;

	for (unsigned i = 0; i < d->n_after && !ret; i++)
		ret = domain_outcome(d->after[i]);
	if (!ret)
		ret = loom_token_wait_all(d->deps, d->n_deps, timeout(d->s));
	if (!ret) {
		d->ran = true;
		d->err = loom_work_device_run(&d->c, &d->res);
		ret = d->err == LOOM_OK ? 0 :
		      d->err == LOOM_WORK_INVALID_ARGUMENT ? -EINVAL :
		      d->res.device_error ? d->res.device_error :
		      d->err == LOOM_WORK_OUT_OF_MEMORY ? -ENOMEM :
		      d->err == LOOM_WORK_OCCURRENCES_EXHAUSTED ? (int)d->err :
		      LOOM_E_WORK_FAILED;
	}
	pthread_mutex_lock(&d->lock);
	d->ret = ret;
	d->done = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void free_domain(struct domain *d)
{
	loom_work_device_result_free(&d->res);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/*
 * Joins @l's domain on the program's thread: its counts go into the
 * stats, the observer sees its result, and its collective token stays as
 * the launch's, for later launches to wait on.
 */
static int join_domain(struct run *s, struct launch *l)
{
	struct domain *d = l->domain;
	int ret;

	pthread_join(d->thread, NULL);
	ret = d->ret;
	if (ret) {
		launch_failed(s, l);
		if (d->ran && d->res.work.failed)
			loom_item_id_format(&d->res.work.failed_item,
					    s->st->failed_item,
					    sizeof(s->st->failed_item));
	}
	l->domain = NULL;
	l->error = ret;
	l->counted = true;
	if (d->ran && d->err != LOOM_WORK_INVALID_ARGUMENT) {
		s->st->items += d->res.work.items_run;
		s->st->steals += d->res.work.steals;
		s->st->jobs += d->res.jobs_submitted;
		s->st->cycles += d->res.counters.cycles;
		s->st->firings += d->res.counters.firings;
		observe_launch(s, &d->site, d->res.work.occurrence);
		if (s->opt.observe_domain)
			s->opt.observe_domain(s->opt.observe_ctx, l->thread,
					      &d->res);
		l->token = d->res.token;
		d->res.token = NULL;
	}
	free_domain(d);
	return ret;
}

/* Starts a dynamic-work launch on its own thread; joined at its WAIT. */
static int start_domain(struct run *s, const struct loom_interp_launch *l,
			const struct loom_thread_info *ti,
			const struct loom_arg *args, struct domain **out)
{
	struct domain *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	ret = gather_deps(s, l, d->deps, &d->n_deps, d->after, &d->n_after, 64);
	if (ret) {
		free(d);
		return ret;
	}
	d->s = s;
	d->site = site_of(s, l);
	memcpy(d->args, args, ti->num_args * sizeof(*args));
	d->c = (struct loom_work_device_config){
		.sched = host_sched(&s->opt.sched, s->opt.observe_domain != NULL),
		.root_payload = args[ti->work_item_arg].value,
		.image = s->img, .thread = ti->name,
		.args = d->args, .n_args = ti->num_args,
		.devices = &s->dev, .n_devices = 1,
		.flags = LOOM_WORK_DEVICE_TOKEN,
		.observe_job = s->opt.observe_job,
		.observe_job_ctx = s->opt.observe_ctx,
		.site = &d->site,
	};
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	ret = -pthread_create(&d->thread, NULL, run_domain, d);
	if (ret) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return ret;
	}
	*out = d;
	return 0;
}

static int launch(void *ctx, const struct loom_interp_launch *l)
{
	struct run *s = ctx;
	struct loom_arg args[LOOM_IMAGE_MAX_ARGS];
	struct loom_token *deps[64], *tok = NULL;
	struct domain *d = NULL;
	struct loom_thread_info ti;
	unsigned n_deps;
	uint64_t id;
	int ret;

	ret = loom_image_thread_at(s->img, l->thread, &ti);
	if (ret)
		return ret;
	for (unsigned i = 0; i < ti.num_args; i++) {
		args[i].type = ti.arg_types[i];
		args[i].value = l->args[i];
	}
	if (ti.domain == LOOM_DOMAIN_DYNAMIC_WORK) {
		ret = start_domain(s, l, &ti, args, &d);
	} else {
		ret = gather_deps(s, l, deps, &n_deps, NULL, NULL, 64);
		if (!ret)
			ret = launch_dense(s, l, &ti, args, deps, n_deps, &tok);
	}
	if (ret)
		return ret;
	/* its number is the interpreter's count of launches: ours too */
	ret = add_launch(s, tok, l, ti.name, &id);
	if (!ret) {
		s->launches[id].domain = d;
		return 0;
	}
	if (tok) {
		loom_token_wait(tok, -1);
		loom_token_free(tok);
	}
	if (d) {
		struct launch gone = { .domain = d, .thread = ti.name,
				       .insn = -1 };

		join_domain(s, &gone);
		loom_token_free(gone.token);
	}
	return ret;
}

static int wait_token(void *ctx, uint64_t token)
{
	struct run *s = ctx;

	return wait_launch(s, &s->launches[token]);
}

static const struct loom_interp_backend device_backend = {
	.alloc = alloc, .load = load, .store = store, .launch = launch,
	.wait = wait_token, .print = print, .check_failed = check_failed,
};

/* ------------------------------------------------------------- a run --- */

int loom_host_run(struct loom_device *dev, const struct loom_image *img,
		  const struct loom_host_options *opt,
		  struct loom_host_stats *stats)
{
	struct loom_host_stats dummy;
	struct loom_interp_stats is;
	struct loom_image_view v;
	struct run s;
	int func, ret, ret2;

	/* occurrences are the runtime's: a run replays none */
	if (!dev || !img || (opt && opt->sched.replay_occurrence))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.st = stats ? stats : &dummy;
	memset(s.st, 0, sizeof(*s.st));
	s.st->failed_insn = -1;
	s.st->failed_launch = -1;
	s.st->failed_thread = -1;
	if (opt)
		s.opt = *opt;
	loom_image_view_of(img, &v);
	if (loom_view_check_host(&v, NULL, 0))
		return LOOM_E_BAD_IMAGE;
	func = loom_view_find_host_func(&v, s.opt.func ? s.opt.func : "main");
	if (func < 0)
		return LOOM_E_NO_HOST_FUNC;
	s.dev = dev;
	s.img = img;
	s.func = loom_view_name(&v, loom_view_host_func(&v, func).name);
	s.view = &v;
	s.func_index = func;
	ret = loom_interp_run(&v, func, &device_backend, &s, &is);
	s.st->insns = is.insns;
	s.st->failed_insn = is.failed_insn;
	/* everything launched finishes before its buffers go */
	for (size_t i = 0; i < s.n_launches; i++) {
		ret2 = wait_launch(&s, &s.launches[i]);
		if (!ret && ret2) {
			ret = ret2;
			s.st->failed_insn = -1;
		}
		loom_token_free(s.launches[i].token);
	}
	for (size_t i = 0; i < s.n_bos; i++)
		loom_bo_free(s.bos[i]);
	free(s.launches);
	free(s.bos);
	return ret;
}
