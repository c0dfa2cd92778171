/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loom-cgra engine: everything the device does, in plain C with no QEMU
 * headers, so that host unit tests, the compiler's tests and benchmarks run
 * it directly.  The QEMU glue (../loom_cgra.c) supplies bus access, threads
 * and interrupts.
 *
 * Parts, one file each:
 *   mmu.c     the device MMU: walker (uapi LOOM_PTE_* format) and TLB
 *   alu.c     the PE operations' arithmetic (enum loom_op): format/alu.c,
 *             MIT, shared with libloom's host programs
 *   fabric.c  the cycle-level fabric simulator
 *   cp.c      the command processor: one job's packets, start to end
 *   cp_work.c RUN_WORK: the bounded on-device work stack, over cp.c's
 *             memory access and one item run
 *
 * Every value and encoding comes from uapi/loom_device.h.
 */
#ifndef LOOM_ENGINE_H
#define LOOM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom_alu.h"		/* format/alu.c's loom_alu() */
#include "loom_device.h"
#include "loom_ops.h"		/* format/'s table of the operations */

/* ---------------------------------------------------------------- bus --- */

/**
 * struct loom_bus - how the engine reaches host memory (bus addresses)
 * @opaque: passed back to the callbacks
 * @read: copy @len bytes at @addr into @buf; 0 or a negative value on
 *	failure (the access then ends the job with LOOM_STATUS_DMA_ERROR)
 * @write: copy @len bytes from @buf to @addr; 0 or negative
 * @cmpxchg: LOOM_OP_ATOMIC's primitive: atomically with respect to every
 *	other access of the device (every core's thread), when the @len (4
 *	or 8) bytes at @addr, a multiple of @len, equal the low @len bytes
 *	of *@expected, replace them with @desired's; either way *@expected
 *	becomes the value that was there (zero-extended).  1 when it
 *	swapped, 0 when it did not, negative on failure (DMA_ERROR).  NULL:
 *	every atomic is LOOM_STATUS_DMA_ERROR.
 */
struct loom_bus {
	void *opaque;
	int (*read)(void *opaque, uint64_t addr, void *buf, size_t len);
	int (*write)(void *opaque, uint64_t addr, const void *buf, size_t len);
	int (*cmpxchg)(void *opaque, uint64_t addr, size_t len,
		       uint64_t *expected, uint64_t desired);
};

/*
 * The host's compare-and-swap of the @len (4 or 8) bytes at @p, aligned to
 * @len, as struct loom_bus.cmpxchg describes it: what a bus whose memory
 * the host addresses does once it has found the bytes.
 */
static inline int loom_host_cmpxchg(void *p, size_t len, uint64_t *expected,
				    uint64_t desired)
{
	uint32_t e = (uint32_t)*expected;
	bool swapped;

	if (len != 4)
		return __atomic_compare_exchange_n((uint64_t *)p, expected,
						   desired, false,
						   __ATOMIC_SEQ_CST,
						   __ATOMIC_SEQ_CST);
	swapped = __atomic_compare_exchange_n((uint32_t *)p, &e,
					      (uint32_t)desired, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	*expected = e;
	return swapped;
}

/* ---------------------------------------------------------------- mmu.c --- */

/**
 * struct loom_tlb_entry - one cached leaf translation
 * @pt_root: tag: the address space it was walked in
 * @vpn: tag: the virtual page number, va >> LOOM_PAGE_SHIFT
 * @pte: the leaf entry as walked (page bus address, LOOM_PTE_* bits); an
 *	entry without LOOM_PTE_VALID is empty
 */
struct loom_tlb_entry {
	uint64_t pt_root;
	uint64_t vpn;
	uint64_t pte;
};

/**
 * struct loom_mmu - a core's MMU: the running job's address space and the
 *	core's TLB
 * @bus: where the page tables and pages are
 * @pt_root: bus address of the running job's level-0 table
 * @fault_va: set by a failed access: the VA that faulted
 * @fault: set by a failed access: enum loom_mmu_fault
 * @invalidations: the device's invalidation count (LOOM_REG_MMU_INVALIDATE),
 *	bumped atomically by another thread; NULL when nothing invalidates
 * @tlb_generation: *@invalidations when @tlb was last emptied
 * @access_seq: odd while an access (a translation and the bus access it
 *	names) is in flight; bumped (seq_cst) as each starts and ends, so
 *	that an invalidator can wait for the accesses that may have used a
 *	stale translation (loom_mmu_quiesce())
 * @tlb: LOOM_TLB_ENTRIES leaf translations, direct-mapped by VA page
 *
 * The TLB outlives jobs, as a real one does: a PTE changed without an
 * invalidation may still be used (uapi: LOOM_REG_MMU_INVALIDATE).  Only
 * walks that reach a valid leaf are cached; every access checks the cached
 * leaf's permissions.  A zeroed TLB is empty.
 */
struct loom_mmu {
	const struct loom_bus *bus;
	uint64_t pt_root;
	uint64_t fault_va;
	enum loom_mmu_fault fault;
	const uint32_t *invalidations;
	uint32_t tlb_generation;
	uint32_t access_seq;
	struct loom_tlb_entry tlb[LOOM_TLB_ENTRIES];
};

/*
 * Translates @va for a read or a write.  Returns LOOM_STATUS_OK and the
 * bus address, or LOOM_STATUS_MMU_FAULT with mmu->fault and mmu->fault_va
 * set.  No side effects beyond those two fields and the TLB.
 */
int loom_mmu_translate(struct loom_mmu *mmu, uint64_t va, bool write,
		       uint64_t *bus_addr);

/* Empties the TLB (core reset); the owner of @mmu calls it. */
void loom_mmu_flush(struct loom_mmu *mmu);

/*
 * An access through the MMU: loom_mmu_access_begin() before its
 * translation, loom_mmu_access_end() once the bus access it translated
 * for has completed.  loom_mmu_read() and loom_mmu_write() do it; a caller
 * that translates and then uses the bus itself (cp.c's fabric loads and
 * stores) brackets the two.
 */
void loom_mmu_access_begin(struct loom_mmu *mmu);
void loom_mmu_access_end(struct loom_mmu *mmu);

/*
 * The invalidator's half (LOOM_REG_MMU_INVALIDATE), from another thread,
 * after it bumped *@mmu->invalidations: returns once the access @mmu had
 * in flight, if any, has completed.  An access that starts later sees the
 * new count and walks the tables again; so once this returns for every
 * core, no access uses a translation from before the invalidation.  It
 * waits only for the bus access itself, which must not wait for the
 * caller.
 */
void loom_mmu_quiesce(const struct loom_mmu *mmu);

/*
 * Copies between device VAs and a buffer, page by page.  Returns
 * LOOM_STATUS_OK, LOOM_STATUS_MMU_FAULT (mmu->fault_va is the first VA that
 * failed) or LOOM_STATUS_DMA_ERROR.  A failed write may have written the
 * pages before the faulting one.
 */
int loom_mmu_read(struct loom_mmu *mmu, uint64_t va, void *buf, size_t len);
int loom_mmu_write(struct loom_mmu *mmu, uint64_t va, const void *buf,
		   size_t len);

/* ---------------------------------------------------------------- alu.c --- */

/*
 * alu.c is format/alu.c (MIT, shared with libloom's host programs; tools/
 * build-qemu copies it here): loom_alu(), declared in loom_alu.h.
 */

/*
 * loom_op_inputs(), loom_op_f32_only() and the rest of what the engine asks
 * about an operation are in loom_ops.h, format/'s table of the operations.
 */

/* ------------------------------------------------------------- fabric.c --- */

/* The model's parameters; LOOM_REG_LIMITS reports them to drivers. */
#define LOOM_DEFAULT_FIFO_DEPTH		4
#define LOOM_DEFAULT_MEM_PORTS		2
#define LOOM_DEFAULT_LOAD_LATENCY	4

struct loom_fabric_params {
	unsigned width;		/* 1..LOOM_FABRIC_MAX_DIM */
	unsigned height;	/* 1..LOOM_FABRIC_MAX_DIM */
	unsigned fifo_depth;	/* PE input FIFO depth, >= 1 */
	unsigned mem_ports;	/* LOAD/STORE/ATOMIC firings per cycle, >= 1 */
	unsigned load_latency;	/* cycles from LOAD or ATOMIC firing to its result, >= 1 */
};

/**
 * struct loom_fabric_env - what a dispatch needs from its job
 * @opaque: passed back to the callbacks
 * @load: read @size (4 or 8) bytes at device VA @va into *@value
 *	(zero-extended); returns LOOM_STATUS_OK or the status that ends the
 *	dispatch (MMU_FAULT, DMA_ERROR)
 * @store: write the low @size bytes of @value at @va; same returns
 * @atomic: LOOM_OP_ATOMIC: one indivisible read-modify-write of @size (4
 *	or 8) bytes at @va, storing loom_atomic_apply(@kind, @type, old,
 *	@operand); *@old the value read (zero-extended); same returns
 *	(MMU_FAULT with LOOM_MMU_FAULT_ALIGN for a misaligned @va).  NULL is
 *	LOOM_STATUS_DMA_ERROR.
 * @spawn: a SPAWN PE fired with @payload for item @item (the index of the
 *	item its token belongs to; items are pipelined, so the children of
 *	several items interleave); returns LOOM_STATUS_OK,
 *	LOOM_STATUS_CHILD_OVERFLOW or LOOM_STATUS_SPAWN_OUTSIDE_ITEMS
 * @payload: item dispatches: store item @item's payload (LOOM_PORT_PAYLOAD)
 *	in *@payload; called once per item, in index order, as the item is
 *	injected; returns LOOM_STATUS_OK or the status that ends the dispatch.
 *	NULL is LOOM_STATUS_DMA_ERROR at the first item.
 * @stop: when non-NULL and *@stop is non-zero (read relaxed, every cycle)
 *	the dispatch ends with LOOM_STATUS_STOPPED
 * @progress: when non-NULL, incremented (relaxed atomic) for every cycle in
 *	which a token moved or a PE fired
 * @budget: when non-NULL and *@budget is non-zero, decremented every
 *	cycle; in the cycle it reaches zero @pause(@opaque) is called, and the
 *	dispatch goes on when it returns (the caller may move the job to
 *	another thread meanwhile: see struct loom_core.budget)
 */
struct loom_fabric_env {
	void *opaque;
	int (*load)(void *opaque, uint64_t va, unsigned size, uint64_t *value);
	int (*store)(void *opaque, uint64_t va, unsigned size, uint64_t value);
	int (*atomic)(void *opaque, uint64_t va, unsigned size, unsigned kind,
		      unsigned type, uint64_t operand, uint64_t *old);
	int (*spawn)(void *opaque, uint64_t payload, uint32_t item);
	int (*payload)(void *opaque, uint32_t item, uint64_t *payload);
	const int *stop;
	uint64_t *progress;
	uint64_t *budget;
	void (*pause)(void *opaque);
};

/**
 * struct loom_dispatch - one dense dispatch or the work items of one
 *	DISPATCH_ITEMS
 * @operands: values of LOOM_PORT_OPERAND ports
 * @num_operands: how many; a port whose index is not below it is
 *	LOOM_STATUS_BAD_PACKET_FIELD
 * @items: false: dense dispatch over @extents; true: @count work items,
 *	their payloads from loom_fabric_env.payload
 * @rank: dense rank, 0..LOOM_MAX_RANK; a LOOM_PORT_COORD port whose index
 *	is not below it is LOOM_STATUS_BAD_PACKET_FIELD
 * @extents: @rank extents, each >= 0 (the caller has rejected negatives)
 * @count: items: how many (0 runs nothing); a PAYLOAD port in a dense
 *	dispatch, or a COORD port in an item dispatch, is BAD_PACKET_FIELD
 * @block: dense: run only the instances whose coordinate 0 lies in
 *	[@begin, @end), the rest of the domain unchanged (a part of a launch
 *	split over cores); 0 <= @begin <= @end <= extents[0] and rank >= 1,
 *	else BAD_PACKET_FIELD
 * @begin: first coordinate 0 of the block
 * @end: one past its last
 */
struct loom_dispatch {
	const uint64_t *operands;
	unsigned num_operands;
	bool items;
	unsigned rank;
	const int64_t *extents;
	uint32_t count;
	bool block;
	int64_t begin;
	int64_t end;
};

struct loom_fabric;

/* NULL on allocation failure or invalid parameters. */
struct loom_fabric *loom_fabric_create(const struct loom_fabric_params *p);
void loom_fabric_destroy(struct loom_fabric *f);

/*
 * Validates a struct loom_fabric_config image of @size bytes and makes it
 * the loaded configuration.  On error nothing is loaded (a later dispatch
 * gets LOOM_STATUS_NO_CONFIG) and the enum loom_config_error says why.
 */
enum loom_config_error loom_fabric_configure(struct loom_fabric *f,
					     const void *image, size_t size);
bool loom_fabric_configured(const struct loom_fabric *f);

/*
 * Unloads the configuration and empties the fabric: no token, occupancy,
 * firing or blocked/waiting count of an earlier run is left for
 * loom_fabric_dump().  Every job starts with it (uapi: nothing carries
 * over between jobs).
 */
void loom_fabric_reset(struct loom_fabric *f);

/*
 * Runs @d to completion: every instance or item injected and the fabric
 * quiescent.  Instances and items alike are injected back to back
 * (pipelined), each token tagged with its item.  Returns an enum loom_hw_status: OK, STOPPED, DEADLOCK
 * (nothing can move yet the dispatch is not finished), BAD_PACKET_FIELD
 * (ports disagree with @d), NO_CONFIG, or what a callback returned.  Adds
 * to @counters (cycles, firings, stalls, instances or items injected,
 * mem_reads, mem_writes, spawns).  After an error the fabric state is left as it was
 * for loom_fabric_dump(); the next run starts from empty buffers.
 */
int loom_fabric_run(struct loom_fabric *f, const struct loom_dispatch *d,
		    const struct loom_fabric_env *env,
		    struct loom_hw_counters *counters);

/*
 * Describes the fabric's current state: fills @dump's width, height,
 * blocked and waiting fields and @tiles[width * height].
 */
void loom_fabric_dump(const struct loom_fabric *f, struct loom_hw_dump *dump,
		      struct loom_hw_dump_tile *tiles);

/*
 * Times slot @slot of tile @tile fired in the last run (0 for an unused
 * slot): what loom_fabric_dump() sums per tile, one slot at a time.
 * loomc measures the II of what it compiled with it.
 */
uint64_t loom_fabric_slot_firings(const struct loom_fabric *f, unsigned tile,
				  unsigned slot);

/* ----------------------------------------------------------------- cp.c --- */

/**
 * struct loom_core - one compute core's engine state
 * @index: the core's number
 * @fabric: its fabric
 * @bus: host memory
 * @mmu: its MMU; the TLB lives across jobs, each job sets the address
 *	space.  The caller may set @mmu.invalidations once and empties the TLB
 *	with loom_mmu_flush() on reset, never while a job runs.
 * @inject: pending LOOM_INJECT_* for the next job (consumed by it).  The
 *	engine acts on the modes that change what the job does or reports:
 *	DMA_ERROR, MMU_FAULT, CORRUPT_DUMP and WRONG_SEQNO.  HANG,
 *	SKIP_COMPLETION and BOGUS_HEAD concern the queue: the caller's.
 * @stop: set (relaxed) to stop the running job
 * @progress: LOOM_CORE_PROGRESS
 * @budget: 0, or the steps (packets begun, fabric cycles) the running job
 *	may take before it calls @pause; the job's owner sets it and it is
 *	not shared.  The device runs a job on the thread that rang its
 *	doorbell while the job stays within a budget, and hands it to the
 *	core's own thread when it calls @pause (qemu-device/loom_cgra.c)
 * @pause: called with the core, from the running job, when @budget runs
 *	out; may be NULL when @budget stays 0
 * @operands: values from the last SET_OPERANDS of the running job
 * @num_operands: how many
 */
struct loom_core {
	unsigned index;
	struct loom_fabric *fabric;
	const struct loom_bus *bus;
	struct loom_mmu mmu;
	int inject;
	int stop;
	uint64_t progress;
	uint64_t budget;
	void (*pause)(struct loom_core *core);
	uint64_t operands[LOOM_MAX_OPERANDS];
	unsigned num_operands;
};

/*
 * Executes one job: decodes its command buffer through its address space
 * and runs every packet.  Fills @done (the completion record to write) and,
 * when the job ends with an error or is stopped and @dump is non-NULL,
 * the state dump (@dump_size bytes available; *@dump_len the bytes used,
 * 0 when no dump was taken).  Consumes core->inject.  LOOM_INJECT_HANG is
 * not handled here: the caller waits for a stop or reset instead of running
 * the job; nor are SKIP_COMPLETION and BOGUS_HEAD, which change what the
 * caller does with @done and the queue, not the job.
 */
void loom_core_run_job(struct loom_core *core, const struct loom_hw_job *job,
		       struct loom_hw_completion *done, void *dump,
		       size_t dump_size, size_t *dump_len);

/* Fills @done and @dump for a job that was stopped before it ran. */
void loom_core_stopped_job(struct loom_core *core,
			   const struct loom_hw_job *job,
			   struct loom_hw_completion *done, void *dump,
			   size_t dump_size, size_t *dump_len);

/* ------------------------------------------------------------ cp_work.c --- */

/**
 * struct loom_work_ops - what RUN_WORK needs from the command processor
 * @opaque: passed back
 * @read: job memory, as a packet reads it: a LOOM_STATUS_* value
 * @write: likewise
 * @run_items: runs the @n items of @payloads (at most 64) to quiescence,
 *	item i's children, in spawn order, into @children + i *
 *	child_capacity, their number into @counts[i].  LOOM_STATUS_OK with
 *	every item run, or a failure's status with *@done the items (from
 *	the first) that completed and *@failed (at least *@done) the one
 *	that failed, when known, else *@done; every other item counts as not
 *	run.  cp.c pipelines the batch, so on a failure it reports *@done 0
 *	(none is known complete) and *@failed the item that overflowed.
 * @stop: set (relaxed) to stop the job between batches
 */
struct loom_work_ops {
	void *opaque;
	int (*read)(void *opaque, uint64_t va, void *buf, size_t len);
	int (*write)(void *opaque, uint64_t va, const void *buf, size_t len);
	int (*run_items)(void *opaque, const uint64_t *payloads, uint32_t n,
			 uint64_t *children, uint32_t *counts, uint32_t *done,
			 uint32_t *failed);
	const int *stop;
};

/*
 * Validates a RUN_WORK packet's fields (@pkt, header excluded from the
 * checks): LOOM_STATUS_OK or LOOM_STATUS_BAD_PACKET_FIELD, *@field the
 * byte offset of the first bad field.
 */
int loom_work_check(const struct loom_pkt_run_work *pkt, uint32_t *field);

/*
 * Runs a validated RUN_WORK packet: LOOM_STATUS_OK when it stopped (its
 * status written), or the failure, *@detail its completion detail.
 */
int loom_work_run(const struct loom_work_ops *ops,
		  const struct loom_pkt_run_work *pkt, uint32_t *detail);

#endif /* LOOM_ENGINE_H */
