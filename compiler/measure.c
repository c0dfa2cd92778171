// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * measure.c: the II a configuration runs at, measured on the device's own
 * fabric engine (qemu-device/engine/fabric.c) for a synthetic launch.
 *
 * Why measure and not estimate: the handshakes' finite buffers, forks
 * that move a token only when every branch has room, and the round robin
 * of a temporal PE's slots make the schedule's II optimistic by up to a
 * third (a matrix-vector product scheduled at 4 cycles per iteration runs
 * at 5 on 4x4).  The engine is cycle-exact and deterministic, so running
 * the configuration is both the honest figure and a reproducible one.
 *
 * The launch: every operand 16 (a trip count of 16 where a loop bound is an
 * operand), every load reads 0 and every store is dropped (timing does not
 * depend on values, except where a loaded value bounds a loop or selects
 * a path), dense extents of MEASURE_SMALL and MEASURE_LARGE instances along
 * dimension 0 (work items for a dynamic-work thread, payloads 0).  The II is
 * the difference of the two runs' cycles over the difference of their
 * units, so that filling and draining the pipeline cancel out: instances
 * (items), or for a thread with loops the firings of its busiest STREAM,
 * i.e. the iterations of its innermost loop.  A rank-0 thread has one
 * instance: its figure is that instance's cycles (per loop iteration).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "loom_image.h"
#include "measure.h"

#define MEASURE_SMALL	16
#define MEASURE_LARGE	48
#define MEASURE_OPERAND	16
/* memory accesses and spawns one run may make before it is abandoned */
#define MEASURE_BUDGET	(1U << 19)

struct run_env {
	unsigned calls;
	int stop;
};

static int count_call(struct run_env *e)
{
	if (++e->calls > MEASURE_BUDGET)
		e->stop = 1;
	return LOOM_STATUS_OK;
}

static int zero_load(void *opaque, uint64_t va, unsigned size, uint64_t *v)
{
	(void)va;
	(void)size;
	*v = 0;
	return count_call(opaque);
}

static int drop_store(void *opaque, uint64_t va, unsigned size, uint64_t v)
{
	(void)va;
	(void)size;
	(void)v;
	return count_call(opaque);
}

/* An atomic on memory that holds zeros everywhere, like zero_load's. */
static int zero_atomic(void *opaque, uint64_t va, unsigned size, unsigned kind,
		       unsigned type, uint64_t operand, uint64_t *old)
{
	(void)va;
	(void)size;
	(void)kind;
	(void)type;
	(void)operand;
	*old = 0;
	return count_call(opaque);
}

static int take_spawn(void *opaque, uint64_t payload, uint32_t item)
{
	(void)payload;
	(void)item;
	return count_call(opaque);
}

static int zero_payload(void *opaque, uint32_t item, uint64_t *payload)
{
	(void)opaque;
	(void)item;
	*payload = 0;
	return LOOM_STATUS_OK;
}

/* Operands the configuration reads: one past the highest it names. */
static unsigned operands_used(const struct placement *p)
{
	unsigned n = 0, slots = p->width * p->height * p->slots;

	for (unsigned i = 0; i < p->num_ports; i++)
		if (p->ports[i].kind == LOOM_PORT_OPERAND &&
		    p->ports[i].index >= n)
			n = p->ports[i].index + 1U;
	for (unsigned i = 0; i < slots; i++)
		if ((p->tiles[i].flags & LOOM_TILE_IMM_OPERAND) &&
		    p->tiles[i].imm >= n)
			n = (unsigned)p->tiles[i].imm + 1U;
	return n;
}

/* The most firings of any STREAM slot in the last run. */
static uint64_t busiest_stream(const struct loom_fabric *f,
			       const struct placement *p)
{
	uint64_t most = 0;

	for (unsigned t = 0; t < p->width * p->height; t++)
		for (unsigned k = 0; k < p->slots; k++) {
			uint64_t n;

			if (p->tiles[t * p->slots + k].op != LOOM_OP_STREAM)
				continue;
			n = loom_fabric_slot_firings(f, t, k);
			if (n > most)
				most = n;
		}
	return most;
}

/* One run of @count instances or items; fills its cycles and iterations. */
static int run_once(struct loom_fabric *f, const struct graph *g,
		    const struct placement *p, uint32_t count,
		    uint64_t *cycles, uint64_t *iterations)
{
	uint64_t ops[LOOM_MAX_OPERANDS];
	int64_t ext[LOOM_MAX_RANK];
	struct run_env e = { 0 };
	struct loom_fabric_env env = {
		.opaque = &e, .load = zero_load, .store = drop_store,
		.atomic = zero_atomic, .spawn = take_spawn, .payload = zero_payload, .stop = &e.stop,
	};
	struct loom_dispatch d = {
		.operands = ops, .num_operands = operands_used(p),
		.extents = ext,
	};
	struct loom_hw_counters c = { 0 };
	int st;

	for (unsigned k = 0; k < LOOM_MAX_OPERANDS; k++)
		ops[k] = MEASURE_OPERAND;
	if (g->domain == LOOM_DOMAIN_DYNAMIC_WORK) {
		d.items = true;
		d.count = count;
	} else {
		d.rank = g->rank > 0 ? (unsigned)g->rank : 0;
		for (unsigned k = 0; k < d.rank; k++)
			ext[k] = k ? 1 : count;
	}
	st = loom_fabric_run(f, &d, &env, &c);
	*cycles = c.cycles;
	*iterations = busiest_stream(f, p);
	return st;
}

void place_measure(const struct graph *g, struct placement *p)
{
	struct loom_fabric_params fp = {
		.width = p->width, .height = p->height,
		.fifo_depth = PLACE_FIFO_DEPTH,
		.mem_ports = PLACE_MEM_PORTS,
		.load_latency = PLACE_LOAD_LATENCY,
	};
	struct place_stats *st = &p->stats;
	uint64_t c1, c2, it1, it2, units;
	struct loom_fabric *f;
	size_t n = place_config_size(p);
	void *cfg = malloc(n);
	int s1, s2;

	st->measured = 0;
	st->measured_status = -1;
	st->measured_per_iteration = false;
	f = loom_fabric_create(&fp);
	if (!f || !cfg)
		abort();
	place_config_write(p, cfg);
	if (loom_fabric_configure(f, cfg, n) != LOOM_CONFIG_OK)
		goto out;
	s1 = run_once(f, g, p, MEASURE_SMALL, &c1, &it1);
	if (g->domain != LOOM_DOMAIN_DYNAMIC_WORK && g->rank <= 0) {
		/* one instance: its cycles (per loop iteration) */
		c2 = c1;
		c1 = 0;
		it2 = it1;
		it1 = 0;
		s2 = s1;
	} else {
		s2 = s1 ? s1 : run_once(f, g, p, MEASURE_LARGE, &c2, &it2);
	}
	st->measured_status = s2;
	if (s2 != LOOM_STATUS_OK)
		goto out;
	units = g->rank <= 0 && g->domain != LOOM_DOMAIN_DYNAMIC_WORK ? 1 :
		MEASURE_LARGE - MEASURE_SMALL;
	if (g->loops && it2 > it1) {
		units = it2 - it1;
		st->measured_per_iteration = true;
	}
	st->measured = c2 > c1 ? (double)(c2 - c1) / (double)units : 0;
out:
	loom_fabric_destroy(f);
	free(cfg);
}

const char *place_measure_failure(const struct place_stats *s)
{
	switch (s->measured_status) {
	case -1:
		return "not run";
	case LOOM_STATUS_OK:
		return "no cycles between the two launches";
	case LOOM_STATUS_STOPPED:
		return "the synthetic launch ran past its budget";
	case LOOM_STATUS_DEADLOCK:
		return "the synthetic launch deadlocked";
	default:
		return "the synthetic launch failed";
	}
}
