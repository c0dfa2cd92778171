/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_build.h: helpers for host tests of the fabric model.
 *
 *  - struct fb builds a struct loom_fabric_config image in memory: set a
 *    tile's operation, its routes, bind edge ports, then fb_image().
 *    fb_slots() right after fb_init() makes it a temporal configuration;
 *    fb_pe() and fb_route() then set slot 0, fb_slot_*() any slot.
 *  - struct fake_mem is a byte array addressed by device VA behind the
 *    load/store/spawn callbacks of struct loom_fabric_env; it remembers how
 *    often each byte was written and logs every access and spawn.
 */
#ifndef LOOM_FABRIC_BUILD_H
#define LOOM_FABRIC_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define FB_MAX_TILES	(LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM)

struct fb {
	struct loom_fabric_config hdr;
	struct loom_tile_config tiles[FB_MAX_TILES * LOOM_PE_SLOTS];
	struct loom_port_binding ports[LOOM_MAX_PORTS];
};

static inline void fb_init(struct fb *b, unsigned width, unsigned height)
{
	memset(b, 0, sizeof(*b));
	b->hdr.magic = LOOM_CONFIG_MAGIC;
	b->hdr.version = LOOM_CONFIG_VERSION;
	b->hdr.width = width;
	b->hdr.height = height;
}

/* A LOOM_CONFIG_VERSION_SLOTS image of @slots per PE. */
static inline void fb_slots(struct fb *b, unsigned slots)
{
	b->hdr.version = LOOM_CONFIG_VERSION_SLOTS;
	b->hdr.slots = slots;
}

static inline unsigned fb_nslots(const struct fb *b)
{
	return LOOM_CONFIG_SLOTS(b->hdr.version, b->hdr.slots);
}

static inline struct loom_tile_config *fb_slot(struct fb *b, unsigned x,
					       unsigned y, unsigned k)
{
	return &b->tiles[(y * b->hdr.width + x) * fb_nslots(b) + k];
}

static inline struct loom_tile_config *fb_tile(struct fb *b, unsigned x,
					       unsigned y)
{
	return fb_slot(b, x, y, 0);
}

/* Sets slot @k of tile (x, y): enum loom_op, LOOM_TYPE_*, LOOM_TILE_*, imm. */
static inline void fb_slot_pe(struct fb *b, unsigned x, unsigned y,
			      unsigned k, unsigned op, unsigned type,
			      unsigned flags, uint64_t imm)
{
	struct loom_tile_config *t = fb_slot(b, x, y, k);

	t->op = op;
	t->type = type;
	t->flags = flags;
	t->imm = imm;
}

static inline void fb_pe(struct fb *b, unsigned x, unsigned y, unsigned op,
			 unsigned type, unsigned flags, uint64_t imm)
{
	fb_slot_pe(b, x, y, 0, op, type, flags, imm);
}

/* Output @out (enum loom_route_out) of slot @k of (x, y) takes from @src. */
static inline void fb_slot_route(struct fb *b, unsigned x, unsigned y,
				 unsigned k, unsigned out, unsigned src)
{
	fb_slot(b, x, y, k)->route[out] = src;
}

static inline void fb_route(struct fb *b, unsigned x, unsigned y, unsigned out,
			    unsigned src)
{
	fb_slot_route(b, x, y, 0, out, src);
}

/* Binds the edge link at (@side, @pos) to a port; returns its index. */
static inline unsigned fb_port(struct fb *b, unsigned side, unsigned pos,
			       unsigned kind, unsigned index)
{
	struct loom_port_binding *p = &b->ports[b->hdr.num_ports];

	p->side = side;
	p->pos = pos;
	p->kind = kind;
	p->index = index;
	return b->hdr.num_ports++;
}

/* Size of the image fb_image() writes. */
static inline size_t fb_size(const struct fb *b)
{
	return LOOM_CONFIG_SIZE((size_t)b->hdr.width * b->hdr.height *
				fb_nslots(b), b->hdr.num_ports);
}

/* Writes the image into @buf; returns its size, 0 if @size is too small. */
static inline size_t fb_image(const struct fb *b, void *buf, size_t size)
{
	size_t ntiles = (size_t)b->hdr.width * b->hdr.height * fb_nslots(b);
	size_t tiles = ntiles * sizeof(struct loom_tile_config);
	unsigned char *p = buf;

	if (size < fb_size(b))
		return 0;
	memcpy(p, &b->hdr, sizeof(b->hdr));
	memcpy(p + sizeof(b->hdr), b->tiles, tiles);
	memcpy(p + sizeof(b->hdr) + tiles, b->ports,
	       b->hdr.num_ports * sizeof(struct loom_port_binding));
	return fb_size(b);
}

/* ------------------------------------------------------------ memory --- */

#define FAKE_LOG	4096

struct fake_access {
	uint64_t va;
	uint64_t progress;	/* *env->progress when it happened */
	bool write;
};

struct fake_mem {
	uint64_t base;		/* VA of bytes[0] */
	size_t size;
	uint8_t *bytes;
	uint8_t *writes;	/* stores that touched each byte */
	/* every load and store, in callback order */
	struct fake_access log[FAKE_LOG];
	unsigned nlog;
	uint64_t progress;	/* env->progress points here */
	int stop;		/* env->stop points here */
	unsigned stop_after;	/* set stop at this many loads+stores (0: never) */
	/* spawned payloads and their items; CHILD_OVERFLOW beyond spawn_cap */
	uint64_t spawned[FAKE_LOG];
	uint32_t spawned_item[FAKE_LOG];
	unsigned nspawn, spawn_cap;
	/* item payloads; reading past npayloads is an MMU fault */
	const uint64_t *payloads;
	uint32_t npayloads;
};

static inline void fake_mem_init(struct fake_mem *m, uint64_t base, size_t size)
{
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->size = size;
	m->bytes = calloc(size, 1);
	m->writes = calloc(size, 1);
	m->spawn_cap = FAKE_LOG;
}

static inline void fake_mem_free(struct fake_mem *m)
{
	free(m->bytes);
	free(m->writes);
}

static inline bool fake_in_range(const struct fake_mem *m, uint64_t va,
				 size_t len)
{
	return va >= m->base && va - m->base <= m->size &&
	       len <= m->size - (va - m->base);
}

static inline uint8_t *fake_ptr(struct fake_mem *m, uint64_t va)
{
	return m->bytes + (va - m->base);
}

static inline uint64_t fake_get64(struct fake_mem *m, uint64_t va)
{
	uint64_t v;

	memcpy(&v, fake_ptr(m, va), 8);
	return v;
}

static inline void fake_put64(struct fake_mem *m, uint64_t va, uint64_t v)
{
	memcpy(fake_ptr(m, va), &v, 8);
}

static inline unsigned fake_writes(struct fake_mem *m, uint64_t va)
{
	return m->writes[va - m->base];
}

/* Bytes written at all, anywhere. */
static inline size_t fake_bytes_written(const struct fake_mem *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->size; i++)
		n += m->writes[i] != 0;
	return n;
}

static inline void fake_log(struct fake_mem *m, uint64_t va, bool write)
{
	if (m->nlog < FAKE_LOG) {
		m->log[m->nlog].va = va;
		m->log[m->nlog].progress = m->progress;
		m->log[m->nlog].write = write;
		m->nlog++;
	}
	if (m->stop_after && m->nlog >= m->stop_after)
		__atomic_store_n(&m->stop, 1, __ATOMIC_RELAXED);
}

static inline int fake_load(void *opaque, uint64_t va, unsigned size,
			    uint64_t *value)
{
	struct fake_mem *m = opaque;

	if (!fake_in_range(m, va, size))
		return LOOM_STATUS_MMU_FAULT;
	*value = 0;
	memcpy(value, fake_ptr(m, va), size);	/* little-endian host */
	fake_log(m, va, false);
	return LOOM_STATUS_OK;
}

static inline int fake_store(void *opaque, uint64_t va, unsigned size,
			     uint64_t value)
{
	struct fake_mem *m = opaque;
	unsigned i;

	if (!fake_in_range(m, va, size))
		return LOOM_STATUS_MMU_FAULT;
	memcpy(fake_ptr(m, va), &value, size);
	for (i = 0; i < size; i++)
		m->writes[va - m->base + i]++;
	fake_log(m, va, true);
	return LOOM_STATUS_OK;
}

/* One thread: a read, loom_atomic_apply() and a write are indivisible. */
static inline int fake_atomic(void *opaque, uint64_t va, unsigned size,
			      unsigned kind, unsigned type, uint64_t operand,
			      uint64_t *old)
{
	struct fake_mem *m = opaque;
	uint64_t token, next;
	unsigned i;

	*old = 0;
	if (!fake_in_range(m, va, size) || (va & (size - 1)))
		return LOOM_STATUS_MMU_FAULT;
	memcpy(old, fake_ptr(m, va), size);	/* little-endian host */
	token = size == 4 ? ((*old ^ 0x80000000ULL) - 0x80000000ULL) : *old;
	next = loom_atomic_apply(kind, type, token, operand);
	memcpy(fake_ptr(m, va), &next, size);
	for (i = 0; i < size; i++)
		m->writes[va - m->base + i]++;
	fake_log(m, va, true);
	return LOOM_STATUS_OK;
}

static inline int fake_spawn(void *opaque, uint64_t payload, uint32_t item)
{
	struct fake_mem *m = opaque;

	if (m->nspawn >= m->spawn_cap)
		return LOOM_STATUS_CHILD_OVERFLOW;
	m->spawned_item[m->nspawn] = item;
	m->spawned[m->nspawn++] = payload;
	return LOOM_STATUS_OK;
}

static inline int fake_payload(void *opaque, uint32_t item, uint64_t *payload)
{
	struct fake_mem *m = opaque;

	if (item >= m->npayloads)
		return LOOM_STATUS_MMU_FAULT;
	*payload = m->payloads[item];
	return LOOM_STATUS_OK;
}

static inline struct loom_fabric_env fake_env(struct fake_mem *m)
{
	struct loom_fabric_env env = {
		.opaque = m,
		.load = fake_load,
		.store = fake_store,
		.atomic = fake_atomic,
		.spawn = fake_spawn,
		.payload = fake_payload,
		.stop = &m->stop,
		.progress = &m->progress,
	};

	return env;
}

#endif /* LOOM_FABRIC_BUILD_H */
