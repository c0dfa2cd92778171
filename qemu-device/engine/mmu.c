// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The device MMU: a four-level walk of LOOM_PTE_* tables at bus addresses,
 * translating 48-bit device VAs in 4 KiB pages.  Every access a job makes,
 * command fetch included, goes through here; nothing else in the engine
 * touches job memory.
 */
#include "engine.h"

static int mmu_fault(struct loom_mmu *mmu, uint64_t va,
		     enum loom_mmu_fault fault)
{
	mmu->fault_va = va;
	mmu->fault = fault;
	return LOOM_STATUS_MMU_FAULT;
}

int loom_mmu_translate(struct loom_mmu *mmu, uint64_t va, bool write,
		       uint64_t *bus_addr)
{
	uint64_t table = mmu->pt_root;
	uint64_t pte = 0;

	if (va >> LOOM_VA_BITS)
		return mmu_fault(mmu, va, LOOM_MMU_FAULT_ADDRESS);

	for (unsigned level = 0; level < LOOM_PT_LEVELS; level++) {
		uint64_t entry_addr = table + 8 * LOOM_PT_INDEX(va, level);

		if (mmu->bus->read(mmu->bus->opaque, entry_addr, &pte, 8))
			return mmu_fault(mmu, va, LOOM_MMU_FAULT_TABLE_DMA);
		if (!(pte & LOOM_PTE_VALID))
			return mmu_fault(mmu, va, LOOM_MMU_FAULT_NOT_MAPPED);
		table = pte & LOOM_PTE_ADDR_MASK;
	}

	/* Permissions live in the leaf only. */
	if (write && !(pte & LOOM_PTE_WRITE))
		return mmu_fault(mmu, va, LOOM_MMU_FAULT_WRITE);
	if (!write && !(pte & LOOM_PTE_READ))
		return mmu_fault(mmu, va, LOOM_MMU_FAULT_READ);

	*bus_addr = table | (va & (LOOM_PAGE_SIZE - 1));
	return LOOM_STATUS_OK;
}

/* Bytes from @va to the end of its page, at most @len. */
static size_t page_chunk(uint64_t va, size_t len)
{
	size_t left = LOOM_PAGE_SIZE - (va & (LOOM_PAGE_SIZE - 1));

	return len < left ? len : left;
}

int loom_mmu_read(struct loom_mmu *mmu, uint64_t va, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		size_t n = page_chunk(va, len);
		uint64_t addr;
		int ret = loom_mmu_translate(mmu, va, false, &addr);

		if (ret)
			return ret;
		if (mmu->bus->read(mmu->bus->opaque, addr, p, n))
			return LOOM_STATUS_DMA_ERROR;
		va += n;
		p += n;
		len -= n;
	}
	return LOOM_STATUS_OK;
}

int loom_mmu_write(struct loom_mmu *mmu, uint64_t va, const void *buf,
		   size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		size_t n = page_chunk(va, len);
		uint64_t addr;
		int ret = loom_mmu_translate(mmu, va, true, &addr);

		if (ret)
			return ret;
		if (mmu->bus->write(mmu->bus->opaque, addr, p, n))
			return LOOM_STATUS_DMA_ERROR;
		va += n;
		p += n;
		len -= n;
	}
	return LOOM_STATUS_OK;
}
