// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The device MMU: a four-level walk of LOOM_PTE_* tables at bus addresses,
 * translating 48-bit device VAs in 4 KiB pages, and the core's TLB of leaf
 * translations in front of it.  Every access a job makes, command fetch
 * included, goes through here; nothing else in the engine touches job
 * memory.
 */
#include <sched.h>
#include <string.h>

#include "engine.h"

static int mmu_fault(struct loom_mmu *mmu, uint64_t va,
		     enum loom_mmu_fault fault)
{
	mmu->fault_va = va;
	mmu->fault = fault;
	return LOOM_STATUS_MMU_FAULT;
}

/* Walks the tables to @va's leaf; *@leaf is a VALID level-3 entry. */
static int mmu_walk(struct loom_mmu *mmu, uint64_t va, uint64_t *leaf)
{
	uint64_t table = mmu->pt_root;
	uint64_t pte = 0;

	for (unsigned level = 0; level < LOOM_PT_LEVELS; level++) {
		uint64_t entry_addr = table + 8 * LOOM_PT_INDEX(va, level);

		if (mmu->bus->read(mmu->bus->opaque, entry_addr, &pte, 8))
			return mmu_fault(mmu, va, LOOM_MMU_FAULT_TABLE_DMA);
		if (!(pte & LOOM_PTE_VALID))
			return mmu_fault(mmu, va, LOOM_MMU_FAULT_NOT_MAPPED);
		table = pte & LOOM_PTE_ADDR_MASK;
	}
	*leaf = pte;
	return LOOM_STATUS_OK;
}

void loom_mmu_flush(struct loom_mmu *mmu)
{
	memset(mmu->tlb, 0, sizeof(mmu->tlb));
}

/*
 * The access sequence pairs with the invalidation count as in Dekker's
 * algorithm, both sides sequentially consistent: the core makes its
 * sequence odd, then reads the count (tlb_sync()); the invalidator bumps
 * the count, then reads the sequence.  One of them sees the other's store:
 * either the access walks the tables again, or the invalidator waits for
 * it.
 */
void loom_mmu_access_begin(struct loom_mmu *mmu)
{
	__atomic_fetch_add(&mmu->access_seq, 1, __ATOMIC_SEQ_CST);
}

void loom_mmu_access_end(struct loom_mmu *mmu)
{
	__atomic_fetch_add(&mmu->access_seq, 1, __ATOMIC_RELEASE);
}

void loom_mmu_quiesce(const struct loom_mmu *mmu)
{
	uint32_t seq = __atomic_load_n(&mmu->access_seq, __ATOMIC_SEQ_CST);

	if (!(seq & 1))
		return;		/* nothing in flight */
	/* one bus access to RAM: short, and it never waits for us */
	while (__atomic_load_n(&mmu->access_seq, __ATOMIC_ACQUIRE) == seq)
		sched_yield();
}

/*
 * Empties the TLB if LOOM_REG_MMU_INVALIDATE was written since it was last
 * emptied.  Acquire pairs with the glue's release increment: a new count
 * implies the driver's PTE stores before its register write are visible to
 * the walk that follows.  On the hot path this is one load and a compare.
 * A walk racing with the increment may cache an old leaf, but the next
 * translation sees the new count and drops it: only accesses that started
 * before the write completed can use it, and the write completes only
 * after they have (loom_mmu_quiesce()).
 */
static void tlb_sync(struct loom_mmu *mmu)
{
	uint32_t now;

	if (!mmu->invalidations)
		return;
	/* seq_cst: after loom_mmu_access_begin()'s store (see there) */
	now = __atomic_load_n(mmu->invalidations, __ATOMIC_SEQ_CST);
	if (now != mmu->tlb_generation) {
		loom_mmu_flush(mmu);
		mmu->tlb_generation = now;
	}
}

int loom_mmu_translate(struct loom_mmu *mmu, uint64_t va, bool write,
		       uint64_t *bus_addr)
{
	uint64_t vpn = va >> LOOM_PAGE_SHIFT;
	struct loom_tlb_entry *e = &mmu->tlb[vpn % LOOM_TLB_ENTRIES];
	uint64_t pte;

	if (va >> LOOM_VA_BITS)
		return mmu_fault(mmu, va, LOOM_MMU_FAULT_ADDRESS);

	tlb_sync(mmu);
	if ((e->pte & LOOM_PTE_VALID) && e->vpn == vpn &&
	    e->pt_root == mmu->pt_root) {
		pte = e->pte;
	} else {
		int ret = mmu_walk(mmu, va, &pte);

		if (ret)
			return ret;
		/* The leaf is cached whatever this access needs of it. */
		*e = (struct loom_tlb_entry){
			.pt_root = mmu->pt_root, .vpn = vpn, .pte = pte,
		};
	}

	/* Permissions live in the leaf only. */
	if (write && !(pte & LOOM_PTE_WRITE))
		return mmu_fault(mmu, va, LOOM_MMU_FAULT_WRITE);
	if (!write && !(pte & LOOM_PTE_READ))
		return mmu_fault(mmu, va, LOOM_MMU_FAULT_READ);

	*bus_addr = (pte & LOOM_PTE_ADDR_MASK) | (va & (LOOM_PAGE_SIZE - 1));
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
		int ret;

		loom_mmu_access_begin(mmu);
		ret = loom_mmu_translate(mmu, va, false, &addr);
		if (!ret && mmu->bus->read(mmu->bus->opaque, addr, p, n))
			ret = LOOM_STATUS_DMA_ERROR;
		loom_mmu_access_end(mmu);
		if (ret)
			return ret;
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
		int ret;

		loom_mmu_access_begin(mmu);
		ret = loom_mmu_translate(mmu, va, true, &addr);
		if (!ret && mmu->bus->write(mmu->bus->opaque, addr, p, n))
			ret = LOOM_STATUS_DMA_ERROR;
		loom_mmu_access_end(mmu);
		if (ret)
			return ret;
		va += n;
		p += n;
		len -= n;
	}
	return LOOM_STATUS_OK;
}
