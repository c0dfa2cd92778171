// SPDX-License-Identifier: MIT
/*
 * interp.c: the host-program interpreter (uapi/loom_image.h's register
 * machine, Documentation/compiler.rst "The host program").
 *
 * It owns the registers, the control flow, the arithmetic and the launch
 * numbering; everything that touches memory, devices or output is the
 * backend's.  The program was checked by loom_view_check_host(), so every
 * register, constant, list entry and jump target it reads exists.
 */
#include <errno.h>
#include <stdlib.h>

#include "loom_alu.h"
#include "loom_format.h"

/*
 * Host arithmetic is the PE arithmetic.  MOV is not an ALU operation
 * there: it is an ADD of zero, which sign-extends an i32 as a MOV must.
 */
static uint64_t alu(unsigned op, unsigned type, uint64_t a, uint64_t b,
		    uint64_t c)
{
	if (op == LOOM_OP_MOV)
		return loom_alu(LOOM_OP_ADD, type, a, 0, 0);
	return loom_alu(op, type, a, b, c);
}

/* Loops compare signed, as scf.for does. */
static bool lts(uint64_t a, uint64_t b)
{
	return loom_alu(LOOM_OP_LTS, LOOM_TYPE_I64, a, b, 0);
}

struct run {
	const struct loom_image_view *v;
	const struct loom_interp_backend *be;
	void *ctx;
	uint64_t *r;
	uint64_t *waits;		/* a launch's wait list, read */
	uint32_t *ordinal;		/* each instruction's LAUNCH ordinal */
	uint32_t first;			/* the function's first instruction */
	uint64_t launches;
};

/* LAUNCH @insn with its list at @at: registers read, waits checked. */
static int launch(struct run *s, uint32_t insn, uint32_t at)
{
	const struct loom_image_view *v = s->v;
	struct loom_interp_launch l = { .waits = s->waits };
	uint32_t n;

	l.thread = loom_view_host_list(v, at++);
	l.desc = loom_view_thread(v, l.thread);
	l.name = loom_view_name(v, l.desc.name);
	n = loom_view_host_list(v, at++);	/* == num_args: checked */
	for (uint32_t i = 0; i < n; i++)
		l.args[i] = s->r[loom_view_host_list(v, at++)];
	l.num_waits = loom_view_host_list(v, at++);
	for (uint32_t i = 0; i < l.num_waits; i++) {
		s->waits[i] = s->r[loom_view_host_list(v, at++)];
		if (s->waits[i] >= s->launches)
			return -EINVAL;
	}
	n = loom_view_host_list(v, at++);	/* == rank: checked */
	for (uint32_t i = 0; i < n; i++)
		l.extents[i] = (int64_t)s->r[loom_view_host_list(v, at++)];
	l.number = s->launches;
	l.ordinal = s->ordinal[insn - s->first];
	return s->be->launch(s->ctx, &l);
}

static int load(struct run *s, uint64_t va, unsigned size, uint64_t *out)
{
	uint64_t v = 0;
	int ret = s->be->load(s->ctx, va, size, &v);

	if (!ret)
		*out = alu(LOOM_OP_MOV, size == 4 ? LOOM_TYPE_I32 : LOOM_TYPE_I64, v, 0, 0);
	return ret;
}

/* One instruction at *@pc (advanced, or moved by a loop). */
static int step(struct run *s, const struct loom_host_func *f, uint32_t *pc)
{
	struct loom_host_insn x = loom_view_host_insn(s->v, (*pc)++), h;
	uint64_t *r = s->r;
	int ret = 0;

	switch (x.op) {
	case LOOM_HOST_CONST:
		r[x.dst] = loom_view_host_const(s->v, x.a);
		break;
	case LOOM_HOST_ALU:
		r[x.dst] = alu(x.aux, x.type, r[x.a], r[x.b], r[x.c]);
		break;
	case LOOM_HOST_ALLOC:
		ret = s->be->alloc(s->ctx, r[x.a], x.aux, &r[x.dst]);
		break;
	case LOOM_HOST_LOAD:
		ret = load(s, r[x.a] + r[x.b] * x.aux, x.aux, &r[x.dst]);
		break;
	case LOOM_HOST_STORE:
		ret = s->be->store(s->ctx, r[x.b] + r[x.c] * x.aux, x.aux, r[x.a]);
		break;
	case LOOM_HOST_FOR:
		r[x.dst] = r[x.a];
		if (!lts(r[x.dst], r[x.b]))
			*pc = x.d + 1;
		break;
	case LOOM_HOST_END_FOR:
		h = loom_view_host_insn(s->v, x.a);
		r[h.dst] += r[h.c];
		if (lts(r[h.dst], r[h.b]))
			*pc = x.a + 1;
		break;
	case LOOM_HOST_LAUNCH:
		ret = launch(s, *pc - 1, x.a);
		if (!ret)
			r[x.dst] = s->launches++;
		break;
	case LOOM_HOST_WAIT:
		ret = r[x.a] < s->launches ? s->be->wait(s->ctx, r[x.a]) : -EINVAL;
		break;
	case LOOM_HOST_PRINT:
		if (s->be->print)
			s->be->print(s->ctx, (enum loom_arg_type)x.type, (int64_t)r[x.a]);
		break;
	case LOOM_HOST_CHECK:
		if (r[x.a] != r[x.b])
			ret = s->be->check_failed(s->ctx, (int64_t)r[x.a],
						  (int64_t)r[x.b]);
		break;
	case LOOM_HOST_RETURN:
		*pc = f->first + f->count;
		break;
	}
	return ret;
}

int loom_interp_run(const struct loom_image_view *v, unsigned func,
		    const struct loom_interp_backend *be, void *ctx,
		    struct loom_interp_stats *stats)
{
	struct loom_interp_stats dummy;
	struct loom_host_func f;
	struct run s = { .v = v, .be = be, .ctx = ctx };
	uint32_t pc, end;
	int ret = 0;

	if (!stats)
		stats = &dummy;
	*stats = (struct loom_interp_stats){ .failed_insn = -1 };
	if (!v->sec[LOOM_SEC_HOST] || func >= v->host.num_funcs)
		return -EINVAL;
	f = loom_view_host_func(v, func);
	/* a wait list is no longer than the list holding it */
	s.r = calloc((size_t)f.num_regs + 1, sizeof(*s.r));
	s.waits = calloc((size_t)v->host.num_list + 1, sizeof(*s.waits));
	s.ordinal = calloc((size_t)f.count + 1, sizeof(*s.ordinal));
	if (!s.r || !s.waits || !s.ordinal) {
		ret = -ENOMEM;
		goto out;
	}
	end = f.first + f.count;
	s.first = f.first;
	/* launch sites: the same numbering as loom_view_host_launch() */
	for (uint32_t i = f.first, n = 0; i < end; i++)
		if (loom_view_host_insn(v, i).op == LOOM_HOST_LAUNCH)
			s.ordinal[i - f.first] = n++;
	for (pc = f.first; pc < end && !ret;) {
		stats->failed_insn = pc;
		stats->insns++;
		ret = step(&s, &f, &pc);
	}
	if (!ret)
		stats->failed_insn = -1;
	stats->launches = s.launches;
out:
	free(s.r);
	free(s.waits);
	free(s.ordinal);
	return ret;
}
