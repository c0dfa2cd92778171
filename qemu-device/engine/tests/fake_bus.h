/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host-memory stand-in for engine tests: a flat array at bus addresses
 * [FAKE_BUS_BASE, FAKE_BUS_BASE + size), a page allocator, and a builder
 * of LOOM_PTE_* page tables, so tests exercise the real MMU walker.
 * Accesses outside the array fail like a bus error would.
 */
#ifndef LOOM_FAKE_BUS_H
#define LOOM_FAKE_BUS_H

#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define FAKE_BUS_BASE	0x100000ULL

struct fake_bus {
	struct loom_bus bus;
	uint8_t *mem;
	uint64_t size;
	uint64_t next_page;	/* bump allocator, bus address */
	uint64_t pt_root;
	unsigned reads, writes;	/* counted relaxed: cores may share a bus */
	unsigned cmpxchgs;
	int fail_all;		/* every access fails (a dead bus) */
};

static inline int fake_bus_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct fake_bus *fb = opaque;

	__atomic_fetch_add(&fb->reads, 1, __ATOMIC_RELAXED);
	if (fb->fail_all || addr < FAKE_BUS_BASE || addr - FAKE_BUS_BASE > fb->size ||
	    len > fb->size - (addr - FAKE_BUS_BASE))
		return -1;
	memcpy(buf, fb->mem + (addr - FAKE_BUS_BASE), len);
	return 0;
}

static inline int fake_bus_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct fake_bus *fb = opaque;

	__atomic_fetch_add(&fb->writes, 1, __ATOMIC_RELAXED);
	if (fb->fail_all || addr < FAKE_BUS_BASE || addr - FAKE_BUS_BASE > fb->size ||
	    len > fb->size - (addr - FAKE_BUS_BASE))
		return -1;
	memcpy(fb->mem + (addr - FAKE_BUS_BASE), buf, len);
	return 0;
}

/* Host atomics on the array, so that cores in threads may share it. */
static inline int fake_bus_cmpxchg(void *opaque, uint64_t addr, size_t len,
				   uint64_t *expected, uint64_t desired)
{
	struct fake_bus *fb = opaque;
	void *p = fb->mem + (addr - FAKE_BUS_BASE);

	__atomic_fetch_add(&fb->cmpxchgs, 1, __ATOMIC_RELAXED);
	if (fb->fail_all || addr < FAKE_BUS_BASE || addr - FAKE_BUS_BASE > fb->size ||
	    len > fb->size - (addr - FAKE_BUS_BASE) || (addr & (len - 1)))
		return -1;
	return loom_host_cmpxchg(p, len, expected, desired);
}

/* A zeroed page; returns its bus address (aborts when out of memory). */
static inline uint64_t fake_bus_alloc_page(struct fake_bus *fb)
{
	uint64_t addr = fb->next_page;

	if (addr + LOOM_PAGE_SIZE > FAKE_BUS_BASE + fb->size)
		abort();
	fb->next_page += LOOM_PAGE_SIZE;
	memset(fb->mem + (addr - FAKE_BUS_BASE), 0, LOOM_PAGE_SIZE);
	return addr;
}

static inline void fake_bus_init(struct fake_bus *fb, uint64_t size)
{
	memset(fb, 0, sizeof(*fb));
	fb->mem = calloc(1, size);
	if (!fb->mem)
		abort();
	fb->size = size;
	fb->next_page = FAKE_BUS_BASE;
	fb->bus.opaque = fb;
	fb->bus.read = fake_bus_read;
	fb->bus.write = fake_bus_write;
	fb->bus.cmpxchg = fake_bus_cmpxchg;
	fb->pt_root = fake_bus_alloc_page(fb);
}

static inline void fake_bus_fini(struct fake_bus *fb)
{
	free(fb->mem);
}

static inline uint64_t *fake_bus_ptr(struct fake_bus *fb, uint64_t addr)
{
	return (uint64_t *)(fb->mem + (addr - FAKE_BUS_BASE));
}

/* The leaf entry for @va, creating tables on the way. */
static inline uint64_t *fake_bus_leaf(struct fake_bus *fb, uint64_t va)
{
	uint64_t table = fb->pt_root;

	for (unsigned level = 0; level < LOOM_PT_LEVELS - 1; level++) {
		uint64_t *e = fake_bus_ptr(fb, table + 8 * LOOM_PT_INDEX(va, level));

		if (!(*e & LOOM_PTE_VALID))
			*e = fake_bus_alloc_page(fb) | LOOM_PTE_VALID;
		table = *e & LOOM_PTE_ADDR_MASK;
	}
	return fake_bus_ptr(fb, table + 8 * LOOM_PT_INDEX(va, LOOM_PT_LEVELS - 1));
}

/* Maps [va, va + size) to fresh zeroed pages with @perms (LOOM_PTE_*). */
static inline void fake_bus_map(struct fake_bus *fb, uint64_t va, uint64_t size,
				uint64_t perms)
{
	for (uint64_t p = va & ~(LOOM_PAGE_SIZE - 1); p < va + size; p += LOOM_PAGE_SIZE)
		*fake_bus_leaf(fb, p) = fake_bus_alloc_page(fb) | LOOM_PTE_VALID | perms;
}

/* Host pointer to mapped device VA @va (same page only). */
static inline void *fake_bus_va(struct fake_bus *fb, uint64_t va)
{
	uint64_t pte = *fake_bus_leaf(fb, va);

	return fb->mem + ((pte & LOOM_PTE_ADDR_MASK) - FAKE_BUS_BASE) +
	       (va & (LOOM_PAGE_SIZE - 1));
}

/* Copies into mapped device memory, across pages. */
static inline void fake_bus_poke(struct fake_bus *fb, uint64_t va, const void *src, size_t len)
{
	const uint8_t *s = src;

	while (len) {
		size_t n = LOOM_PAGE_SIZE - (va & (LOOM_PAGE_SIZE - 1));

		n = n < len ? n : len;
		memcpy(fake_bus_va(fb, va), s, n);
		va += n;
		s += n;
		len -= n;
	}
}

static inline void fake_bus_peek(struct fake_bus *fb, uint64_t va, void *dst, size_t len)
{
	uint8_t *d = dst;

	while (len) {
		size_t n = LOOM_PAGE_SIZE - (va & (LOOM_PAGE_SIZE - 1));

		n = n < len ? n : len;
		memcpy(d, fake_bus_va(fb, va), n);
		va += n;
		d += n;
		len -= n;
	}
}

#endif /* LOOM_FAKE_BUS_H */
