// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The MMU: translation, permissions, every fault kind, page spans, and the
 * TLB (kept until invalidated, tagged by address space, direct-mapped).
 */
#include "check.h"
#include "fake_bus.h"

static struct fake_bus fb;
static struct loom_mmu mmu;

static void setup(void)
{
	fake_bus_init(&fb, 4 << 20);
	mmu = (struct loom_mmu){ .bus = &fb.bus, .pt_root = fb.pt_root };
}

TEST(translates_within_page)
{
	uint64_t va = 0x7f0000123000ULL, addr;

	setup();
	fake_bus_map(&fb, va, LOOM_PAGE_SIZE, LOOM_PTE_READ | LOOM_PTE_WRITE);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + 0x456, false, &addr));
	CHECK_EQ((*fake_bus_leaf(&fb, va) & LOOM_PTE_ADDR_MASK) + 0x456, addr);
	CHECK_EQ(LOOM_MMU_FAULT_NONE, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(highest_and_lowest_va)
{
	uint64_t top = (1ULL << LOOM_VA_BITS) - LOOM_PAGE_SIZE, addr;

	setup();
	fake_bus_map(&fb, 0, LOOM_PAGE_SIZE, LOOM_PTE_READ);
	fake_bus_map(&fb, top, LOOM_PAGE_SIZE, LOOM_PTE_READ);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, 0, false, &addr));
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, top + 4095, false, &addr));
	fake_bus_fini(&fb);
}

TEST(unmapped_faults_at_each_level)
{
	uint64_t va = 0x0000123456789000ULL, addr;

	setup();
	/* Nothing mapped: the level-0 entry is invalid. */
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, mmu.fault);
	CHECK_EQ(va, mmu.fault_va);
	/* Tables exist for a neighbour page, but the leaf of va is invalid. */
	fake_bus_map(&fb, va + LOOM_PAGE_SIZE, LOOM_PAGE_SIZE, LOOM_PTE_READ);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, va + 8, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, mmu.fault);
	CHECK_EQ(va + 8, mmu.fault_va);
	fake_bus_fini(&fb);
}

TEST(permissions)
{
	uint64_t ro = 0x10000, wo = 0x20000, none = 0x30000, addr;

	setup();
	fake_bus_map(&fb, ro, LOOM_PAGE_SIZE, LOOM_PTE_READ);
	fake_bus_map(&fb, wo, LOOM_PAGE_SIZE, LOOM_PTE_WRITE);
	fake_bus_map(&fb, none, LOOM_PAGE_SIZE, 0);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, ro, false, &addr));
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, ro, true, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_WRITE, mmu.fault);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, wo, true, &addr));
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, wo, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_READ, mmu.fault);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, none, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_READ, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(va_beyond_48_bits)
{
	uint64_t addr;

	setup();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, 1ULL << 48, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_ADDRESS, mmu.fault);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, ~0ULL, true, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_ADDRESS, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(table_on_a_dead_bus_address)
{
	uint64_t addr;

	setup();
	mmu.pt_root = 0x1000;	/* below the fake memory: the read fails */
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, 0x4000, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_TABLE_DMA, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(read_and_write_span_pages)
{
	uint64_t va = 0x40000;
	uint8_t out[3 * 4096], in[3 * 4096];

	setup();
	fake_bus_map(&fb, va, 3 * LOOM_PAGE_SIZE, LOOM_PTE_READ | LOOM_PTE_WRITE);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_write(&mmu, va + 100, out, sizeof(out) - 200));
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_read(&mmu, va + 100, in, sizeof(out) - 200));
	CHECK(memcmp(in, out, sizeof(out) - 200) == 0);
	/* The pages are distinct host pages, not contiguous ones. */
	fake_bus_peek(&fb, va + 100, in, sizeof(out) - 200);
	CHECK(memcmp(in, out, sizeof(out) - 200) == 0);
	fake_bus_fini(&fb);
}

TEST(fault_in_the_middle_of_a_span)
{
	uint64_t va = 0x80000;
	uint8_t buf[2 * 4096] = { 0 };

	setup();
	fake_bus_map(&fb, va, LOOM_PAGE_SIZE, LOOM_PTE_READ | LOOM_PTE_WRITE);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_read(&mmu, va + 8, buf, 6000));
	CHECK_EQ(va + LOOM_PAGE_SIZE, mmu.fault_va);
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(dma_error_on_the_page)
{
	uint64_t va = 0x90000;
	uint8_t buf[16];

	setup();
	/* A valid leaf pointing outside memory: the walk succeeds, the access fails. */
	*fake_bus_leaf(&fb, va) = 0x7000000000ULL | LOOM_PTE_VALID | LOOM_PTE_READ;
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, loom_mmu_read(&mmu, va, buf, sizeof(buf)));
	fake_bus_fini(&fb);
}

/* ---- the TLB ---------------------------------------------------------------- */

/* Points @va's leaf at a fresh page; returns the page's bus address. */
static uint64_t repoint(uint64_t va, uint64_t perms)
{
	uint64_t page = fake_bus_alloc_page(&fb);

	*fake_bus_leaf(&fb, va) = page | LOOM_PTE_VALID | perms;
	return page;
}

TEST(cached_translation_survives_until_invalidated)
{
	uint64_t va = 0x200000, old_page, new_page, addr;
	uint32_t invalidations = 7;
	unsigned reads;

	setup();
	mmu.invalidations = &invalidations;
	old_page = repoint(va, LOOM_PTE_READ | LOOM_PTE_WRITE);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + 8, false, &addr));
	CHECK_EQ(old_page + 8, addr);
	/* the driver repoints the PTE and does not invalidate */
	new_page = repoint(va, LOOM_PTE_READ | LOOM_PTE_WRITE);
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + 16, true, &addr));
	CHECK_EQ(old_page + 16, addr);
	CHECK_EQ(reads, fb.reads);	/* a hit reads no table */
	/* nor does clearing it make the cached translation go */
	*fake_bus_leaf(&fb, va) = 0;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(old_page, addr);
	*fake_bus_leaf(&fb, va) = new_page | LOOM_PTE_VALID | LOOM_PTE_READ;
	invalidations++;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + 24, false, &addr));
	CHECK_EQ(new_page + 24, addr);
	CHECK_EQ(reads + LOOM_PT_LEVELS, fb.reads);
	fake_bus_fini(&fb);
}

TEST(address_spaces_do_not_alias)
{
	uint64_t va = 0x300000, root_a, root_b, page_a, page_b, addr;

	setup();
	root_a = fb.pt_root;
	page_a = repoint(va, LOOM_PTE_READ);
	root_b = fb.pt_root = fake_bus_alloc_page(&fb);
	page_b = repoint(va, LOOM_PTE_READ);
	for (int round = 0; round < 2; round++) {
		mmu.pt_root = root_a;
		CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
		CHECK_EQ(page_a, addr);
		mmu.pt_root = root_b;
		CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
		CHECK_EQ(page_b, addr);
	}
	/* a VA mapped only in A is not found through B's cached neighbour */
	fb.pt_root = root_a;
	repoint(va + LOOM_PAGE_SIZE, LOOM_PTE_READ);
	mmu.pt_root = root_a;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + LOOM_PAGE_SIZE, false, &addr));
	mmu.pt_root = root_b;
	CHECK_EQ(LOOM_STATUS_MMU_FAULT,
		 loom_mmu_translate(&mmu, va + LOOM_PAGE_SIZE, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(cached_read_only_leaf_faults_on_write)
{
	uint64_t va = 0x400000, page, addr;
	uint32_t invalidations = 0;
	unsigned reads;

	setup();
	mmu.invalidations = &invalidations;
	page = repoint(va, LOOM_PTE_READ);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, va + 0x10, true, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_WRITE, mmu.fault);
	CHECK_EQ(va + 0x10, mmu.fault_va);
	CHECK_EQ(reads, fb.reads);	/* judged on the cached leaf */
	/* the permission the cache holds is the one checked until invalidated */
	*fake_bus_leaf(&fb, va) = page | LOOM_PTE_VALID | LOOM_PTE_READ | LOOM_PTE_WRITE;
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, va, true, &addr));
	invalidations++;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, true, &addr));
	CHECK_EQ(page, addr);
	fake_bus_fini(&fb);
}

TEST(faults_are_not_cached)
{
	uint64_t va = 0x500000, page, addr;

	setup();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, mmu.fault);
	/* mapped afterwards, with no invalidation: found at once */
	page = repoint(va, LOOM_PTE_READ);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(page, addr);
	fake_bus_fini(&fb);
}

TEST(flush_and_invalidation_empty_it)
{
	uint64_t va = 0x600000, addr;
	uint32_t invalidations = 0xffffffff;
	unsigned reads;

	setup();
	mmu.invalidations = &invalidations;
	repoint(va, LOOM_PTE_READ);
	repoint(va + LOOM_PAGE_SIZE, LOOM_PTE_READ);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + LOOM_PAGE_SIZE, false, &addr));
	/* reset: every entry goes */
	loom_mmu_flush(&mmu);
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + LOOM_PAGE_SIZE, false, &addr));
	CHECK_EQ(reads + 2 * LOOM_PT_LEVELS, fb.reads);
	/* an invalidation, here wrapping the count: every entry goes too */
	invalidations++;
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + LOOM_PAGE_SIZE, false, &addr));
	CHECK_EQ(reads + 2 * LOOM_PT_LEVELS, fb.reads);
	/* and a cleared PTE is then seen as cleared */
	*fake_bus_leaf(&fb, va) = 0;
	invalidations++;
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, mmu.fault);
	fake_bus_fini(&fb);
}

TEST(colliding_vas_evict_each_other)
{
	uint64_t va = 0x700000, other = va + LOOM_TLB_ENTRIES * LOOM_PAGE_SIZE;
	uint64_t neighbour = va + LOOM_PAGE_SIZE, page, other_page, addr;
	unsigned reads;

	setup();
	page = repoint(va, LOOM_PTE_READ);
	other_page = repoint(other, LOOM_PTE_READ);
	repoint(neighbour, LOOM_PTE_READ);
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va, false, &addr));
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, neighbour, false, &addr));
	/* same slot: the other VA walks, gets its own page and evicts va */
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, other + 8, false, &addr));
	CHECK_EQ(other_page + 8, addr);
	CHECK_EQ(reads + LOOM_PT_LEVELS, fb.reads);
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, va + 8, false, &addr));
	CHECK_EQ(page + 8, addr);
	CHECK_EQ(reads + LOOM_PT_LEVELS, fb.reads);
	/* the neighbour's slot was untouched */
	reads = fb.reads;
	CHECK_EQ(LOOM_STATUS_OK, loom_mmu_translate(&mmu, neighbour, false, &addr));
	CHECK_EQ(reads, fb.reads);
	fake_bus_fini(&fb);
}

int main(void)
{
	RUN(translates_within_page);
	RUN(highest_and_lowest_va);
	RUN(unmapped_faults_at_each_level);
	RUN(permissions);
	RUN(va_beyond_48_bits);
	RUN(table_on_a_dead_bus_address);
	RUN(read_and_write_span_pages);
	RUN(fault_in_the_middle_of_a_span);
	RUN(dma_error_on_the_page);
	RUN(cached_translation_survives_until_invalidated);
	RUN(address_spaces_do_not_alias);
	RUN(cached_read_only_leaf_faults_on_write);
	RUN(faults_are_not_cached);
	RUN(flush_and_invalidation_empty_it);
	RUN(colliding_vas_evict_each_other);
	return checks_done();
}
