// SPDX-License-Identifier: MIT
/*
 * DOC: host programs
 *
 * loom_host_run() interprets the register machine of an image's .loom.host
 * section (uapi/loom_image.h, Documentation/compiler.rst "The host
 * program") on a real device: buffers are BOs, dense launches are
 * loom_launch_dense() jobs ordered by the program's tokens, dynamic-work
 * launches drain their domain through the device adapter.  The function is
 * validated completely before its first instruction runs, so the
 * interpreter only reads registers, constants and lists that exist.
 *
 * Host loads and stores (and dynamic-work launches, which run
 * synchronously) first wait for every launch made so far: the reference
 * interpreter runs launches synchronously in program order, and this keeps
 * its meaning for programs whose host accesses follow a launch without an
 * explicit wait.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_device.h"
#include "device_internal.h"
#include "loom_alu.h"		/* format/alu.c: the PE arithmetic */

#define SIGN64	(1ULL << 63)

/* ------------------------------------------------------------- ALU --- */

static uint64_t sext32(uint64_t v)
{
	return ((v & 0xffffffffULL) ^ (1ULL << 31)) - (1ULL << 31);
}

static bool lts(uint64_t a, uint64_t b)
{
	return (a ^ SIGN64) < (b ^ SIGN64);
}

/*
 * Host arithmetic is the PE arithmetic: one implementation, format/alu.c,
 * which the device's engine compiles too.  MOV is not an ALU operation
 * there.
 */
static uint64_t alu(unsigned op, unsigned type, uint64_t a, uint64_t b,
		    uint64_t c)
{
	if (op == LOOM_OP_MOV)
		return type == LOOM_TYPE_I32 ? sext32(a) : a;
	return loom_alu(op, type, a, b, c);
}

/* ------------------------------------------------------ the program --- */

struct prog {
	struct loom_host_header h;
	const struct loom_host_func *funcs;
	const struct loom_host_insn *insns;
	const uint64_t *consts;
	const uint32_t *list;
};

static int open_prog(const struct loom_image *img, struct prog *p)
{
	const unsigned char *b = img->host;
	uint64_t need;

	if (!b || img->host_size < sizeof(p->h))
		return LOOM_E_BAD_IMAGE;
	memcpy(&p->h, b, sizeof(p->h));
	need = sizeof(p->h) + (uint64_t)p->h.num_funcs * sizeof(*p->funcs) +
	       (uint64_t)p->h.num_insns * sizeof(*p->insns) +
	       (uint64_t)p->h.num_consts * 8 + (uint64_t)p->h.num_list * 4;
	if (p->h.magic != LOOM_HOST_MAGIC || p->h.version != LOOM_HOST_VERSION ||
	    need > img->host_size)
		return LOOM_E_BAD_IMAGE;
	/* img->host is malloc()ed and every part's offset is 8-aligned */
	p->funcs = (const void *)(b + sizeof(p->h));
	p->insns = (const void *)(p->funcs + p->h.num_funcs);
	p->consts = (const void *)(p->insns + p->h.num_insns);
	p->list = (const void *)(p->consts + p->h.num_consts);
	return 0;
}

/* The list entry at *@at (advanced), or -1 past the end. */
static int64_t list_next(const struct prog *p, uint32_t *at)
{
	if (*at >= p->h.num_list)
		return -1;
	return p->list[(*at)++];
}

static int check_launch(const struct loom_image *img, const struct prog *p,
			uint32_t at, uint32_t nregs)
{
	int64_t t = list_next(p, &at), n;
	struct loom_thread_info ti;

	if (t < 0 || loom_image_thread_at(img, (unsigned)t, &ti))
		return LOOM_E_BAD_IMAGE;
	for (int part = 0; part < 3; part++) {
		n = list_next(p, &at);
		if (n < 0 || (part == 0 && n != ti.num_args) ||
		    (part == 2 && n != ti.rank) || n > p->h.num_list)
			return LOOM_E_BAD_IMAGE;
		for (int64_t i = 0; i < n; i++) {
			int64_t r = list_next(p, &at);

			if (r < 0 || r >= nregs)
				return LOOM_E_BAD_IMAGE;
		}
	}
	return 0;
}

static int check_func(const struct loom_image *img, const struct prog *p,
		      const struct loom_host_func *f)
{
	uint32_t end = f->first + f->count, nr = f->num_regs;

	for (uint32_t pc = f->first; pc < end; pc++) {
		const struct loom_host_insn *x = &p->insns[pc];
		bool dst = true, a = false, b = false, c = false;

		if (x->reserved)
			return LOOM_E_BAD_IMAGE;
		switch (x->op) {
		case LOOM_HOST_CONST:
			if (x->a >= p->h.num_consts)
				return LOOM_E_BAD_IMAGE;
			break;
		case LOOM_HOST_ALU:
			if ((x->aux != LOOM_OP_MOV &&
			     (x->aux < LOOM_OP_ADD || x->aux > LOOM_OP_SELECT)) ||
			    (x->type != LOOM_TYPE_I32 && x->type != LOOM_TYPE_I64))
				return LOOM_E_BAD_IMAGE;
			a = true;
			b = c = x->aux != LOOM_OP_MOV;
			c = x->aux == LOOM_OP_SELECT;
			break;
		case LOOM_HOST_ALLOC:
		case LOOM_HOST_LOAD:
		case LOOM_HOST_STORE:
			if (x->aux != 4 && x->aux != 8)
				return LOOM_E_BAD_IMAGE;
			a = true;
			b = x->op != LOOM_HOST_ALLOC;
			c = x->op == LOOM_HOST_STORE;
			dst = x->op != LOOM_HOST_STORE;
			break;
		case LOOM_HOST_FOR:
			if (x->d <= pc || x->d >= end ||
			    p->insns[x->d].op != LOOM_HOST_END_FOR ||
			    p->insns[x->d].a != pc)
				return LOOM_E_BAD_IMAGE;
			a = b = c = true;
			break;
		case LOOM_HOST_END_FOR:
			if (x->a < f->first || x->a >= pc ||
			    p->insns[x->a].op != LOOM_HOST_FOR ||
			    p->insns[x->a].d != pc)
				return LOOM_E_BAD_IMAGE;
			dst = false;
			break;
		case LOOM_HOST_LAUNCH:
			if (check_launch(img, p, x->a, nr))
				return LOOM_E_BAD_IMAGE;
			break;
		case LOOM_HOST_WAIT:
		case LOOM_HOST_PRINT:
			dst = false;
			a = true;
			break;
		case LOOM_HOST_CHECK:
			dst = false;
			a = b = true;
			break;
		case LOOM_HOST_RETURN:
			dst = false;
			break;
		default:
			return LOOM_E_BAD_IMAGE;
		}
		if ((dst && x->dst >= nr) || (a && x->a >= nr) ||
		    (b && x->b >= nr) || (c && x->c >= nr))
			return LOOM_E_BAD_IMAGE;
	}
	return 0;
}

/* ------------------------------------------------------------- state --- */

struct launch {
	struct loom_token *token;	/* NULL: nothing to wait for */
	const char *thread;
	bool counted;			/* counters taken */
};

struct run {
	struct loom_device *dev;
	const struct loom_image *img;
	const struct prog *p;
	struct loom_host_options opt;
	struct loom_host_stats *st;
	uint64_t *r;
	struct loom_bo **bos;
	size_t n_bos, cap_bos;
	struct launch *launches;
	size_t n_launches, cap_launches, drained;
};

static int64_t timeout(const struct run *s)
{
	return s->opt.timeout_ns > 0 ? s->opt.timeout_ns : -1;
}

/* A finished dense job, shown to the observer (once). */
static void observe_dense(struct run *s, struct launch *l, int error,
			  const struct loom_job_counters *c)
{
	struct loom_job_record rec = {
		.thread = l->thread,
		.worker = LOOM_SCHED_NO_WORKER,
		.error = error,
	};

	if (!s->opt.observe_job ||
	    loom_token_times(l->token, &rec.submit_ns, &rec.done_ns))
		return;
	if (c)
		rec.counters = *c;
	s->opt.observe_job(s->opt.observe_ctx, &rec);
}

static int wait_launch(struct run *s, struct launch *l)
{
	struct loom_job_counters c;
	int ret;

	if (!l->token || l->counted)
		return l->token ? loom_token_wait(l->token, timeout(s)) : 0;
	ret = loom_token_wait(l->token, timeout(s));
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
		      const char *thread, uint64_t *id)
{
	if (s->n_launches == s->cap_launches) {
		size_t cap = s->cap_launches ? 2 * s->cap_launches : 16;
		struct launch *l = realloc(s->launches, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		s->launches = l;
		s->cap_launches = cap;
	}
	s->launches[s->n_launches] = (struct launch){ token, thread, false };
	*id = s->n_launches++;
	return 0;
}

static int alloc(struct run *s, uint64_t n, unsigned size, uint64_t *va)
{
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

static int load(struct run *s, uint64_t va, unsigned size, uint64_t *v)
{
	unsigned char *at;
	int ret = drain(s);

	if (ret)
		return ret;
	at = host_ptr(s, va, size);
	if (!at)
		return LOOM_E_HOST_FAULT;
	*v = 0;
	memcpy(v, at, size);
	if (size == 4)
		*v = sext32(*v);
	return 0;
}

static int store(struct run *s, uint64_t va, unsigned size, uint64_t v)
{
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

static void print(struct run *s, unsigned type, uint64_t v)
{
	if (s->opt.print)
		s->opt.print(s->opt.print_ctx, (enum loom_arg_type)type,
			     (int64_t)v);
	else if (s->opt.out)
		fprintf(s->opt.out, "%lld\n", (long long)v);
}

/* The launch's tokens to wait for, from its list at *@at (advanced). */
static int gather_deps(struct run *s, uint32_t *at, struct loom_token **deps,
		       unsigned *n_deps, unsigned max)
{
	uint32_t n = s->p->list[(*at)++];

	*n_deps = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = s->r[s->p->list[(*at)++]];

		if (id >= s->n_launches)
			return -EINVAL;
		if (!s->launches[id].token)
			continue;
		if (*n_deps == max)
			return -EINVAL;
		deps[(*n_deps)++] = s->launches[id].token;
	}
	return 0;
}

static int run_items(struct run *s, const struct loom_thread_info *ti,
		     const struct loom_arg *args, struct loom_token **deps,
		     unsigned n_deps)
{
	struct loom_work_device_config c = {
		.occurrence = s->n_launches + 1,
		.root_payload = args[ti->work_item_arg].value,
		.image = s->img, .thread = ti->name,
		.args = args, .n_args = ti->num_args,
		.devices = &s->dev, .n_devices = 1,
		.workers = s->opt.workers ? s->opt.workers : 1,
		.deque_capacity = s->opt.deque_capacity ?
				  s->opt.deque_capacity : 65536,
		.max_batch = s->opt.max_batch ? s->opt.max_batch : 64,
		.flags = s->opt.observe_domain ? 0 : LOOM_WORK_DEVICE_NO_TRACE,
		.observe_job = s->opt.observe_job,
		.observe_job_ctx = s->opt.observe_ctx,
	};
	struct loom_work_device_result res;
	enum loom_work_error err;
	int ret;

	/* it runs now and to the end: everything before it first */
	ret = loom_token_wait_all(deps, n_deps, timeout(s));
	if (!ret)
		ret = drain(s);
	if (ret)
		return ret;
	err = loom_work_device_run(&c, &res);
	if (err == LOOM_WORK_INVALID_ARGUMENT)
		return -EINVAL;
	s->st->items += res.work.items_run;
	s->st->steals += res.work.steals;
	s->st->jobs += res.jobs_submitted;
	s->st->cycles += res.counters.cycles;
	s->st->firings += res.counters.firings;
	if (s->opt.observe_domain)
		s->opt.observe_domain(s->opt.observe_ctx, ti->name, &res);
	ret = 0;
	if (err != LOOM_WORK_OK)
		ret = res.device_error ? res.device_error :
		      err == LOOM_WORK_OUT_OF_MEMORY ? -ENOMEM : LOOM_E_WORK_FAILED;
	loom_work_device_result_free(&res);
	return ret;
}

static int launch(struct run *s, uint32_t at, uint64_t *id)
{
	struct loom_arg args[LOOM_IMAGE_MAX_ARGS];
	int64_t ext[LOOM_MAX_RANK > 0 ? LOOM_MAX_RANK : 1];
	struct loom_token *deps[64], *tok = NULL;
	struct loom_thread_info ti;
	unsigned n_deps;
	uint32_t n;
	int ret;

	ret = loom_image_thread_at(s->img, s->p->list[at++], &ti);
	if (ret)
		return ret;
	n = s->p->list[at++];
	for (uint32_t i = 0; i < n; i++) {
		args[i].type = ti.arg_types[i];
		args[i].value = s->r[s->p->list[at++]];
	}
	ret = gather_deps(s, &at, deps, &n_deps, 64);
	if (ret)
		return ret;
	n = s->p->list[at++];
	if (n > LOOM_MAX_RANK)
		return LOOM_E_RANK_LIMIT;
	for (uint32_t i = 0; i < n; i++)
		ext[i] = (int64_t)s->r[s->p->list[at++]];
	if (ti.domain == LOOM_DOMAIN_DYNAMIC_WORK) {
		ret = run_items(s, &ti, args, deps, n_deps);
	} else {
		ret = loom_launch_dense(s->dev, s->img, ti.name, args,
					ti.num_args, ext, n, deps, n_deps, 0,
					&tok);
		if (!ret)
			s->st->jobs++;
	}
	if (ret)
		return ret;
	ret = add_launch(s, tok, ti.name, id);
	if (ret && tok) {
		loom_token_wait(tok, -1);
		loom_token_free(tok);
	}
	return ret;
}

static int exec(struct run *s, const struct loom_host_func *f)
{
	const struct prog *p = s->p;
	uint64_t *r = s->r;
	uint32_t end = f->first + f->count;
	int ret = 0;

	for (uint32_t pc = f->first; pc < end && !ret;) {
		const struct loom_host_insn *x = &p->insns[pc];
		const struct loom_host_insn *h;

		s->st->failed_insn = pc++;
		s->st->insns++;
		switch (x->op) {
		case LOOM_HOST_CONST:
			r[x->dst] = p->consts[x->a];
			break;
		case LOOM_HOST_ALU:
			r[x->dst] = alu(x->aux, x->type, r[x->a], r[x->b], r[x->c]);
			break;
		case LOOM_HOST_ALLOC:
			ret = alloc(s, r[x->a], x->aux, &r[x->dst]);
			break;
		case LOOM_HOST_LOAD:
			ret = load(s, r[x->a] + r[x->b] * x->aux, x->aux, &r[x->dst]);
			break;
		case LOOM_HOST_STORE:
			ret = store(s, r[x->b] + r[x->c] * x->aux, x->aux, r[x->a]);
			break;
		case LOOM_HOST_FOR:
			r[x->dst] = r[x->a];
			if (!lts(r[x->dst], r[x->b]))
				pc = x->d + 1;
			break;
		case LOOM_HOST_END_FOR:
			h = &p->insns[x->a];
			r[h->dst] += r[h->c];
			if (lts(r[h->dst], r[h->b]))
				pc = x->a + 1;
			break;
		case LOOM_HOST_LAUNCH:
			ret = launch(s, x->a, &r[x->dst]);
			break;
		case LOOM_HOST_WAIT:
			if (r[x->a] >= s->n_launches)
				ret = -EINVAL;
			else
				ret = wait_launch(s, &s->launches[r[x->a]]);
			break;
		case LOOM_HOST_PRINT:
			print(s, x->type, r[x->a]);
			break;
		case LOOM_HOST_CHECK:
			if (r[x->a] != r[x->b]) {
				s->st->check_lhs = (int64_t)r[x->a];
				s->st->check_rhs = (int64_t)r[x->b];
				ret = LOOM_E_CHECK_FAILED;
			}
			break;
		case LOOM_HOST_RETURN:
			pc = end;
			break;
		}
	}
	if (!ret)
		s->st->failed_insn = -1;
	return ret;
}

int loom_host_run(struct loom_device *dev, const struct loom_image *img,
		  const struct loom_host_options *opt,
		  struct loom_host_stats *stats)
{
	struct loom_host_stats dummy;
	const struct loom_host_func *f = NULL;
	const char *name;
	struct prog p;
	struct run s;
	int ret, ret2;

	if (!dev || !img)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.st = stats ? stats : &dummy;
	memset(s.st, 0, sizeof(*s.st));
	s.st->failed_insn = -1;
	if (opt)
		s.opt = *opt;
	name = s.opt.func ? s.opt.func : "main";
	ret = open_prog(img, &p);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < p.h.num_funcs; i++) {
		const struct loom_host_func *g = &p.funcs[i];

		if (g->name >= img->strtab_size ||
		    g->first > p.h.num_insns || g->count > p.h.num_insns - g->first)
			return LOOM_E_BAD_IMAGE;
		if (!strcmp(img->strtab + g->name, name))
			f = g;
	}
	if (!f)
		return LOOM_E_NO_HOST_FUNC;
	ret = check_func(img, &p, f);
	if (ret)
		return ret;
	s.dev = dev;
	s.img = img;
	s.p = &p;
	s.r = calloc((size_t)f->num_regs + 1, sizeof(*s.r));
	if (!s.r)
		return -ENOMEM;
	ret = exec(&s, f);
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
	free(s.r);
	return ret;
}
