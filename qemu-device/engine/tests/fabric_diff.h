/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_diff.h: runs one configuration and dispatch on the product's
 * fabric engine (fabric.c) and on the reference engine it replaced
 * (fabric_ref_impl.h, #included here: it is built into the tests only), and
 * says where they differ.  "The same" is bit for bit: the configure
 * result, the status, every loom_hw_counters field, the progress count,
 * the state dump (header and every tile), every slot's firings, every
 * byte of memory, and the sequence of callbacks (loads, stores, spawns,
 * payloads: the order of side effects is part of the cycle semantics).
 *
 * The environment is a byte array at FD_MEM_VA behind the callbacks; an
 * access outside it is LOOM_STATUS_MMU_FAULT.  A run may make the k-th
 * callback fail (DMA_ERROR, CHILD_OVERFLOW for a spawn) or raise the stop
 * flag at the k-th callback, so that the failure paths are compared too.
 *
 * A random graph may circulate tokens forever, so every run is stopped
 * after FD_MAX_WORK cycles with work, deterministically: the stop flag is
 * the upper half of the progress counter, which starts FD_MAX_WORK below
 * 2^32 (both engines count progress alike, or the comparison fails).
 */
#ifndef LOOM_FABRIC_DIFF_H
#define LOOM_FABRIC_DIFF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fabric_ref_impl.h"

#define FD_MEM_VA	0x100000ULL
#define FD_MEM_SIZE	0x4000
#define FD_LOG		4096
#define FD_TILES	(LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM)
#define FD_MAX_WORK	200000ULL
#define FD_PROGRESS0	((1ULL << 32) - FD_MAX_WORK)

/**
 * struct fd_case - one run, the same for both engines
 * @p: the fabric's parameters
 * @image: the configuration image; @size its bytes
 * @d: the dispatch (its operands and extents owned by the caller)
 * @mem: the memory's initial contents, FD_MEM_SIZE bytes
 * @fail_at: the callback (1-based) that fails, 0 for none
 * @stop_at: the callback (1-based) that raises the stop flag, 0 for none
 * @runs: dispatches run back to back on the configured fabric (>= 1)
 */
struct fd_case {
	struct loom_fabric_params p;
	const void *image;
	size_t size;
	struct loom_dispatch d;
	const uint8_t *mem;
	unsigned fail_at;
	unsigned stop_at;
	unsigned runs;
};

/* What one engine did. */
struct fd_side {
	uint8_t mem[FD_MEM_SIZE];
	uint64_t log[FD_LOG][4];	/* kind, address or item, size, value */
	unsigned nlog;
	unsigned calls;
	union {
		uint64_t count;
		int half[2];
	} progress;
	const struct fd_case *c;
	uint64_t progress_run[4];	/* cycles with work, per run */
	int cfg_err;
	int status[4];
	struct loom_hw_counters counters[4];
	struct loom_hw_dump dump[4];
	struct loom_hw_dump_tile tiles[4][FD_TILES];
	uint64_t slot_firings[4][FD_TILES * LOOM_PE_SLOTS];
};

static void fd_note(struct fd_side *s, uint64_t kind, uint64_t a, uint64_t b,
		    uint64_t v)
{
	if (s->nlog < FD_LOG) {
		s->log[s->nlog][0] = kind;
		s->log[s->nlog][1] = a;
		s->log[s->nlog][2] = b;
		s->log[s->nlog][3] = v;
	}
	s->nlog++;
}

/* Counts a callback; true when this one is to fail. */
static bool fd_call(struct fd_side *s)
{
	s->calls++;
	if (s->calls == s->c->stop_at)
		s->progress.count += 1ULL << 32;	/* raises the stop flag */
	return s->calls == s->c->fail_at;
}

static bool fd_in(uint64_t va, unsigned size)
{
	return va >= FD_MEM_VA && va - FD_MEM_VA <= FD_MEM_SIZE - size;
}

static int fd_load(void *opaque, uint64_t va, unsigned size, uint64_t *value)
{
	struct fd_side *s = opaque;

	fd_note(s, 1, va, size, 0);
	if (fd_call(s))
		return LOOM_STATUS_DMA_ERROR;
	if (!fd_in(va, size))
		return LOOM_STATUS_MMU_FAULT;
	*value = 0;
	memcpy(value, s->mem + (va - FD_MEM_VA), size);
	return LOOM_STATUS_OK;
}

static int fd_store(void *opaque, uint64_t va, unsigned size, uint64_t value)
{
	struct fd_side *s = opaque;

	fd_note(s, 2, va, size, value);
	if (fd_call(s))
		return LOOM_STATUS_DMA_ERROR;
	if (!fd_in(va, size))
		return LOOM_STATUS_MMU_FAULT;
	memcpy(s->mem + (va - FD_MEM_VA), &value, size);
	return LOOM_STATUS_OK;
}

static int fd_spawn(void *opaque, uint64_t payload, uint32_t item)
{
	struct fd_side *s = opaque;

	fd_note(s, 3, item, 0, payload);
	return fd_call(s) ? LOOM_STATUS_CHILD_OVERFLOW : LOOM_STATUS_OK;
}

static int fd_payload(void *opaque, uint32_t item, uint64_t *payload)
{
	struct fd_side *s = opaque;

	fd_note(s, 4, item, 0, 0);
	if (fd_call(s))
		return LOOM_STATUS_DMA_ERROR;
	/* payloads that are also addresses in memory now and then */
	*payload = item % 3 ? item * 0x9e37ULL : FD_MEM_VA + 8 * item;
	return LOOM_STATUS_OK;
}

static void fd_begin(struct fd_side *s, const struct fd_case *c,
		     struct loom_fabric_env *env)
{
	const uint64_t one = 1;
	bool little = *(const uint8_t *)&one == 1;

	memset(s, 0, sizeof(*s));
	s->c = c;
	memcpy(s->mem, c->mem, FD_MEM_SIZE);
	*env = (struct loom_fabric_env){
		.opaque = s, .load = fd_load, .store = fd_store,
		.spawn = fd_spawn, .payload = fd_payload,
		.stop = &s->progress.half[little ? 1 : 0],
		.progress = &s->progress.count,
	};
}

/* The product's engine; -1 when it cannot be created. */
static int fd_run_new(const struct fd_case *c, struct fd_side *s)
{
	struct loom_fabric *f = loom_fabric_create(&c->p);
	struct loom_fabric_env env;
	unsigned ntiles = c->p.width * c->p.height;

	fd_begin(s, c, &env);
	if (!f)
		return -1;
	s->cfg_err = loom_fabric_configure(f, c->image, c->size);
	for (unsigned r = 0; r < c->runs && r < 4; r++) {
		s->progress.count = FD_PROGRESS0;
		s->status[r] = loom_fabric_run(f, &c->d, &env, &s->counters[r]);
		s->progress_run[r] = s->progress.count - FD_PROGRESS0;
		loom_fabric_dump(f, &s->dump[r], s->tiles[r]);
		for (unsigned t = 0; t < ntiles; t++)
			for (unsigned k = 0; k < LOOM_PE_SLOTS; k++)
				s->slot_firings[r][t * LOOM_PE_SLOTS + k] =
					loom_fabric_slot_firings(f, t, k);
	}
	loom_fabric_destroy(f);
	return 0;
}

static int fd_run_ref(const struct fd_case *c, struct fd_side *s)
{
	struct ref_fabric *f = ref_fabric_create(&c->p);
	struct loom_fabric_env env;
	unsigned ntiles = c->p.width * c->p.height;

	fd_begin(s, c, &env);
	if (!f)
		return -1;
	s->cfg_err = ref_fabric_configure(f, c->image, c->size);
	for (unsigned r = 0; r < c->runs && r < 4; r++) {
		s->progress.count = FD_PROGRESS0;
		s->status[r] = ref_fabric_run(f, &c->d, &env, &s->counters[r]);
		s->progress_run[r] = s->progress.count - FD_PROGRESS0;
		ref_fabric_dump(f, &s->dump[r], s->tiles[r]);
		for (unsigned t = 0; t < ntiles; t++)
			for (unsigned k = 0; k < LOOM_PE_SLOTS; k++)
				s->slot_firings[r][t * LOOM_PE_SLOTS + k] =
					ref_fabric_slot_firings(f, t, k);
	}
	ref_fabric_destroy(f);
	return 0;
}

static struct fd_side fd_new, fd_ref;

/*
 * Runs @c on both engines.  Returns NULL when they agree, else what
 * differs first (a static string); *@status gets the reference's first
 * status and *@cycles its first cycle count, for the caller's statistics.
 */
static const char *fd_compare(const struct fd_case *c, int *status,
			      uint64_t *cycles)
{
	const struct fd_side *n = &fd_new, *r = &fd_ref;
	unsigned runs = c->runs < 4 ? c->runs : 4;

	if (fd_run_new(c, &fd_new) || fd_run_ref(c, &fd_ref))
		return "create";
	if (status)
		*status = r->status[0];
	if (cycles)
		*cycles = r->counters[0].cycles;
	if (n->cfg_err != r->cfg_err)
		return "configure result";
	for (unsigned i = 0; i < runs; i++) {
		if (n->status[i] != r->status[i])
			return "status";
		if (memcmp(&n->counters[i], &r->counters[i], sizeof(r->counters[i])))
			return "counters";
		if (memcmp(&n->dump[i], &r->dump[i], sizeof(r->dump[i])))
			return "dump header";
		if (memcmp(n->tiles[i], r->tiles[i], sizeof(r->tiles[i])))
			return "dump tiles";
		if (memcmp(n->slot_firings[i], r->slot_firings[i],
			   sizeof(r->slot_firings[i])))
			return "slot firings";
	}
	if (memcmp(n->progress_run, r->progress_run, sizeof(r->progress_run)))
		return "progress";
	if (n->nlog != r->nlog ||
	    memcmp(n->log, r->log, sizeof(r->log[0]) *
				   (r->nlog < FD_LOG ? r->nlog : FD_LOG)))
		return "callbacks";
	if (memcmp(n->mem, r->mem, FD_MEM_SIZE))
		return "memory";
	return NULL;
}

#endif /* LOOM_FABRIC_DIFF_H */
