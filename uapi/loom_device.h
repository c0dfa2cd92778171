/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * loom-cgra device ABI: PCI identity, the BAR0 register file, hardware
 * queues, job descriptors and completion records, the device MMU, command
 * packets, the fabric configuration and its operation set, typed status
 * codes and the state dump.
 *
 * This header is the single definition of the hardware interface.  The QEMU
 * device model, loom.ko, libloom and loomc all include it; nothing restates
 * these values.  Documentation/device.rst describes the programming model.
 *
 * Conventions: little-endian; registers are 32 bits wide and accessed with
 * 32-bit loads and stores.  Reads of unimplemented offsets return 0xffffffff;
 * writes to read-only or unimplemented registers are ignored (and logged by
 * the device model).  Structures in memory are naturally aligned and contain
 * only fixed-width fields; reserved fields must be zero.
 */
#ifndef LOOM_DEVICE_H
#define LOOM_DEVICE_H

#include <linux/types.h>

/* ------------------------------------------------------------------------
 * PCI identity.  0x1234 is the ID QEMU's own experimental devices use.
 */
#define LOOM_PCI_VENDOR_ID	0x1234
#define LOOM_PCI_DEVICE_ID	0x4c4d	/* "LM" */
#define LOOM_PCI_REVISION	0x01
#define LOOM_PCI_CLASS		0x1200	/* processing accelerator */

/* BAR0: 64-bit memory BAR holding the register file. */
#define LOOM_BAR0_SIZE		0x10000

/* ------------------------------------------------------------------------
 * Global registers.
 */

/* LOOM_REG_ID (RO): reads LOOM_ID_MAGIC, "LOOM" in ASCII. */
#define LOOM_REG_ID		0x0000
#define LOOM_ID_MAGIC		0x4c4f4f4dU

/*
 * LOOM_REG_VERSION (RO): device ABI version.  A driver accepts any device
 * whose major equals the major it was written for; minors only add.
 */
#define LOOM_REG_VERSION	0x0004
#define LOOM_VERSION_MAJOR_SHIFT	16
#define LOOM_VERSION_MINOR_MASK		0xffffU
#define LOOM_VERSION(major, minor)	(((major) << LOOM_VERSION_MAJOR_SHIFT) | (minor))
#define LOOM_VERSION_MAJOR(v)		((v) >> LOOM_VERSION_MAJOR_SHIFT)
#define LOOM_VERSION_MINOR(v)		((v) & LOOM_VERSION_MINOR_MASK)
#define LOOM_VERSION_CURRENT		LOOM_VERSION(0, 8)

/*
 * LOOM_REG_CAPS (RO): capability bits; a set bit promises the feature.
 * Bits not defined here read as zero.
 */
#define LOOM_REG_CAPS		0x0008
#define LOOM_CAP_SCRATCH	(1U << 0)	/* LOOM_REG_SCRATCH */
#define LOOM_CAP_QUEUES		(1U << 1)	/* per-core hardware queues */
#define LOOM_CAP_MMU		(1U << 2)	/* device MMU, LOOM_PTE_* format */
#define LOOM_CAP_MSIX		(1U << 3)	/* MSI-X, LOOM_MSIX_* vectors */
#define LOOM_CAP_ITEMS		(1U << 4)	/* LOOM_PKT_DISPATCH_ITEMS */
#define LOOM_CAP_FAULT_INJECT	(1U << 5)	/* LOOM_CORE_FAULT_INJECT */
#define LOOM_CAP_STATE_DUMP	(1U << 6)	/* LOOM_CORE_DUMP_* */
#define LOOM_CAP_TLB		(1U << 7)	/* TLB, LOOM_REG_MMU_INVALIDATE (0.3) */
#define LOOM_CAP_PE_SLOTS	(1U << 8)	/* temporal PEs: LOOM_FABRIC_SLOTS (0.4) */
#define LOOM_CAP_RUN_WORK	(1U << 9)	/* LOOM_PKT_RUN_WORK (0.5) */
#define LOOM_CAP_DENSE_BLOCK	(1U << 10)	/* DISPATCH_DENSE of a block (0.6) */
#define LOOM_CAP_ATOMIC		(1U << 11)	/* LOOM_OP_ATOMIC (0.7) */
#define LOOM_CAP_LINK_CHANNELS	(1U << 12)	/* LOOM_CONFIG_VERSION_CHANNELS (0.8) */

/*
 * LOOM_REG_SCRATCH (RW): holds the last value written; reset clears it.
 * Drivers use it to prove MMIO round trips.
 */
#define LOOM_REG_SCRATCH	0x000c

/* LOOM_REG_NUM_CORES (RO): independent compute cores, each with a queue. */
#define LOOM_REG_NUM_CORES	0x0010
#define LOOM_MAX_CORES		8

/*
 * LOOM_REG_FABRIC (RO): fabric size of every core, width | height << 8,
 * and (ABI 0.4, LOOM_CAP_PE_SLOTS) the instruction slots of every PE in
 * bits 16-23, 1..LOOM_PE_SLOTS.  Devices without LOOM_CAP_PE_SLOTS read 0
 * there and run one instruction per PE.
 */
#define LOOM_REG_FABRIC		0x0014
#define LOOM_FABRIC_WIDTH(v)	((v) & 0xff)
#define LOOM_FABRIC_HEIGHT(v)	(((v) >> 8) & 0xff)
#define LOOM_FABRIC_SLOTS(v)	(((v) >> 16) & 0xff)
#define LOOM_FABRIC_MAX_DIM	16
#define LOOM_PE_SLOTS		8	/* most instruction slots a PE has */

/*
 * LOOM_REG_LIMITS (RO): max dense rank (bits 0-7), PE input FIFO depth
 * (bits 8-15), memory ports per core (bits 16-23), load latency in cycles
 * (bits 24-31).
 */
#define LOOM_REG_LIMITS		0x0018
#define LOOM_LIMITS_MAX_RANK(v)		((v) & 0xff)
#define LOOM_LIMITS_FIFO_DEPTH(v)	(((v) >> 8) & 0xff)
#define LOOM_LIMITS_MEM_PORTS(v)	(((v) >> 16) & 0xff)
#define LOOM_LIMITS_LOAD_LATENCY(v)	(((v) >> 24) & 0xff)

/*
 * LOOM_REG_DEVICE_RESET (WO): writing LOOM_RESET_MAGIC resets every core
 * as LOOM_CORE_RESET does and clears LOOM_REG_SCRATCH.
 */
#define LOOM_REG_DEVICE_RESET	0x001c
#define LOOM_RESET_MAGIC	0x52535421U	/* "RST!" */

/*
 * LOOM_REG_ERROR_STATUS (RW1C): device-level errors, each raising the
 * error vector (LOOM_MSIX_ERROR_VECTOR).  Job errors are not reported here:
 * they end the job with a status in its completion record.
 */
#define LOOM_REG_ERROR_STATUS	0x0020
#define LOOM_ERROR_RING_DMA	(1U << 0)	/* a descriptor could not be read */
#define LOOM_ERROR_COMPLETION_DMA (1U << 1)	/* a completion could not be written */
#define LOOM_ERROR_BAD_QUEUE	(1U << 2)	/* queue enabled with bad base/size */
#define LOOM_ERROR_CORE_SHIFT	24		/* bits 24-31: core that erred */

/*
 * LOOM_REG_MMU_INVALIDATE (RW, ABI 0.3).  Every core's MMU keeps a TLB of
 * the leaf translations it walked, tagged with the address space's pt_root,
 * and keeps them across jobs.  Only walks that reach a valid leaf are
 * cached; the leaf's permissions are checked on every access.  Writing
 * LOOM_MMU_INVALIDATE_ALL drops every cached translation of every core; a
 * memory access that starts after the write has completed walks the tables
 * again, and the write completes only once the accesses in flight when it
 * arrived have completed.  The driver writes it after it cleared (or repointed, or changed
 * the permissions of) PTEs and before the pages (or table pages) they
 * pointed at are reused.  Other values are ignored.  Reads return the
 * number of invalidations done (wrapping; reset does not clear it), so a
 * read after the write also flushes the posted write.  LOOM_CORE_RESET
 * empties that core's TLB.
 */
#define LOOM_REG_MMU_INVALIDATE	0x0024
#define LOOM_MMU_INVALIDATE_ALL	0x1
#define LOOM_TLB_ENTRIES	64	/* per core, direct-mapped by VA page */

/* ------------------------------------------------------------------------
 * MSI-X: one vector per core, raised when a job of that core's queue
 * completes (successfully or not), and one more for device-level errors.
 * The table and PBA live in BAR0 above the register file.
 */
#define LOOM_MSIX_CORE_VECTOR(core)	(core)
#define LOOM_MSIX_ERROR_VECTOR(cores)	(cores)
#define LOOM_MSIX_TABLE_OFFSET	0x8000
#define LOOM_MSIX_PBA_OFFSET	0xc000

/* ------------------------------------------------------------------------
 * Per-core registers: core c's block starts at LOOM_CORE_BASE(c).
 *
 * Each core owns one hardware queue: a ring of LOOM_QUEUE entries of
 * struct loom_hw_job in host memory, at a bus address.  The driver writes
 * descriptors at its tail and writes LOOM_CORE_Q_TAIL (the doorbell); the
 * core executes jobs in order, writes each job's completion record, advances
 * LOOM_CORE_Q_HEAD and raises its MSI-X vector.
 */
#define LOOM_CORE_BASE(c)	(0x1000 + (c) * 0x100)

#define LOOM_CORE_Q_BASE_LO	0x00	/* RW: ring bus address, 64-byte aligned */
#define LOOM_CORE_Q_BASE_HI	0x04
#define LOOM_CORE_Q_SIZE	0x08	/* RW: entries, power of two, 2..4096 */
#define LOOM_CORE_Q_HEAD	0x0c	/* RO: next entry the core reads, 0..size-1 */
#define LOOM_CORE_Q_TAIL	0x10	/* RW: next entry the driver writes; doorbell */

/*
 * LOOM_CORE_CTRL (RW).  ENABLE starts fetching (base and size are checked
 * then; bad values set LOOM_ERROR_BAD_QUEUE and leave the queue disabled).
 * STOP asks the running job to stop at the next cycle boundary: it
 * completes with LOOM_STATUS_STOPPED and a state dump, and the core fetches
 * nothing more until STOP is cleared.
 */
#define LOOM_CORE_CTRL		0x14
#define LOOM_CTRL_ENABLE	(1U << 0)
#define LOOM_CTRL_STOP		(1U << 1)

/* LOOM_CORE_STATUS (RO). */
#define LOOM_CORE_STATUS	0x18
#define LOOM_CORE_BUSY		(1U << 0)	/* a job is executing */
#define LOOM_CORE_HALTED	(1U << 1)	/* halted by LOOM_CTRL_STOP */
#define LOOM_CORE_DUMP_VALID	(1U << 2)	/* a state dump was written */
#define LOOM_CORE_ENABLED	(1U << 3)	/* the queue is fetching */

/*
 * LOOM_CORE_PROGRESS (RO): counts every cycle in which the core did work
 * (a packet decoded, a token moved, a PE fired).  It never goes backwards
 * except through reset; a job whose counter stands still is stuck, one whose
 * counter moves is merely long.
 */
#define LOOM_CORE_PROGRESS	0x1c

/* LOOM_CORE_COMPLETED (RO): low 32 bits of the last completed seqno. */
#define LOOM_CORE_COMPLETED	0x20

/* LOOM_CORE_RESET (WO): LOOM_RESET_MAGIC aborts the running job without a
 * completion record, disables the queue, zeroes head, tail, progress and
 * status, and empties the core's TLB.  Jobs not yet executed are dropped;
 * the driver resubmits.
 */
#define LOOM_CORE_RESET		0x24

/*
 * LOOM_CORE_FAULT_INJECT (RW): makes the next job this core starts fail in
 * the chosen way, for testing recovery.  Reads back the pending injection;
 * cleared when a job consumes it, by reset, and by writing a value above
 * LOOM_INJECT_MAX.
 */
#define LOOM_CORE_FAULT_INJECT	0x28
#define LOOM_INJECT_NONE	0
#define LOOM_INJECT_HANG	1	/* job makes no progress until stopped or reset */
#define LOOM_INJECT_DMA_ERROR	2	/* first memory access fails: LOOM_STATUS_DMA_ERROR */
#define LOOM_INJECT_MMU_FAULT	3	/* command fetch faults: LOOM_STATUS_MMU_FAULT */
/*
 * Misbehaving-device modes (ABI 0.3): the driver must not trust what the
 * device writes.  Each lets the job run and then lies about it.
 * CORRUPT_DUMP writes no more than the real dump (truncated to the buffer
 * size as usual).  SKIP_COMPLETION leaves the record's memory untouched;
 * COMPLETED still updates.  WRONG_SEQNO skews only the record: COMPLETED
 * and the dump keep the true seqno.  BOGUS_HEAD lies on one read, the first
 * after the job completed (even if later jobs complete first); reset
 * drops a lie not yet told.
 */
#define LOOM_INJECT_CORRUPT_DUMP 4	/* as DMA_ERROR, and the dump header claims 255x255 tiles */
#define LOOM_INJECT_SKIP_COMPLETION 5	/* no completion record; head moves, vector fires */
#define LOOM_INJECT_WRONG_SEQNO	6	/* the record carries seqno + LOOM_INJECT_SEQNO_SKEW */
#define LOOM_INJECT_BOGUS_HEAD	7	/* the next Q_HEAD read returns (head + size / 2) % size */
/*
 * Lost signals (ABI 0.4).  SPURIOUS_IRQ fires the core's vector as the next
 * job starts, with nothing completed; the job then runs as usual.
 * LOST_DOORBELL is consumed by the next Q_TAIL write instead of a job: the
 * write is dropped (Q_TAIL reads back the old tail) and the jobs it would
 * have announced wait for the next one.
 */
#define LOOM_INJECT_SPURIOUS_IRQ 8	/* the vector fires with no completion */
#define LOOM_INJECT_LOST_DOORBELL 9	/* the next Q_TAIL write is dropped */
#define LOOM_INJECT_MAX		LOOM_INJECT_LOST_DOORBELL
#define LOOM_INJECT_SEQNO_SKEW	0x1000

/*
 * State dump buffer (RW): bus address and size of a buffer the core fills
 * with struct loom_hw_dump when a job ends with an error or is stopped.
 * A zero address disables dumps; a dump larger than the size is truncated.
 */
#define LOOM_CORE_DUMP_LO	0x2c
#define LOOM_CORE_DUMP_HI	0x30
#define LOOM_CORE_DUMP_SIZE	0x34

/* ------------------------------------------------------------------------
 * Job descriptors (the queue ring) and completion records.
 */

/**
 * struct loom_hw_job - one entry of a core's ring (64 bytes)
 * @cmd_va: device VA of the command buffer, 8-byte aligned
 * @cmd_size: command buffer size in bytes, a multiple of 4, at most
 *	LOOM_CMD_MAX_SIZE
 * @flags: LOOM_JOB_* flags
 * @pt_root: bus address of the job's level-0 page table (4 KiB aligned)
 * @seqno: driver's identifier, echoed in the completion record
 * @completion: bus address of this job's struct loom_hw_completion
 * @reserved: must be zero
 */
struct loom_hw_job {
	__u64 cmd_va;
	__u32 cmd_size;
	__u32 flags;
	__u64 pt_root;
	__u64 seqno;
	__u64 completion;
	__u64 reserved[3];
};

#define LOOM_CMD_MAX_SIZE	(1U << 20)
#define LOOM_JOB_FLAGS_MASK	0

/**
 * enum loom_hw_status - how a job ended (typed errors)
 * @LOOM_STATUS_OK: every packet executed
 * @LOOM_STATUS_BAD_OPCODE: a packet header names no known packet
 * @LOOM_STATUS_BAD_PACKET_SIZE: a packet's length is wrong for its opcode
 *	or runs past the end of the command buffer
 * @LOOM_STATUS_BAD_PACKET_FIELD: a reserved field is non-zero or a field is
 *	out of range (rank above the limit, negative extent, bad sizes); for
 *	RUN_WORK, @detail is the bad field's byte offset in the packet
 * @LOOM_STATUS_NO_CONFIG: a dispatch came before any LOAD_CONFIG
 * @LOOM_STATUS_BAD_CONFIG: the fabric configuration is malformed (details
 *	in @detail of the completion record: enum loom_config_error)
 * @LOOM_STATUS_MMU_FAULT: a translation failed (@fault_va, @detail: enum
 *	loom_mmu_fault)
 * @LOOM_STATUS_DMA_ERROR: a bus access failed
 * @LOOM_STATUS_CHILD_OVERFLOW: an item spawned more children than its
 *	capacity (@detail: the item's index)
 * @LOOM_STATUS_SPAWN_OUTSIDE_ITEMS: a SPAWN PE fired in a dense dispatch
 * @LOOM_STATUS_DEADLOCK: the fabric can make no progress yet the dispatch
 *	has not finished (tokens wait on inputs that never come)
 * @LOOM_STATUS_STOPPED: stopped by LOOM_CTRL_STOP
 * @LOOM_STATUS_BAD_DESCRIPTOR: the job descriptor itself is invalid
 */
enum loom_hw_status {
	LOOM_STATUS_OK = 0,
	LOOM_STATUS_BAD_OPCODE = 1,
	LOOM_STATUS_BAD_PACKET_SIZE = 2,
	LOOM_STATUS_BAD_PACKET_FIELD = 3,
	LOOM_STATUS_NO_CONFIG = 4,
	LOOM_STATUS_BAD_CONFIG = 5,
	LOOM_STATUS_MMU_FAULT = 6,
	LOOM_STATUS_DMA_ERROR = 7,
	LOOM_STATUS_CHILD_OVERFLOW = 8,
	LOOM_STATUS_SPAWN_OUTSIDE_ITEMS = 9,
	LOOM_STATUS_DEADLOCK = 10,
	LOOM_STATUS_STOPPED = 11,
	LOOM_STATUS_BAD_DESCRIPTOR = 12,
	LOOM_STATUS_COUNT
};

/**
 * struct loom_hw_counters - performance counters of one job (or, written
 * by LOOM_PKT_WRITE_COUNTERS, of the job so far)
 * @cycles: fabric cycles, summed over the job's dispatches
 * @firings: PE firings
 * @stalls: PE-cycles in which a PE had all its operands but no room for its
 *	result (a stalled handshake)
 * @instances: dense instances dispatched
 * @items: work items dispatched
 * @spawns: child payloads written by SPAWN PEs
 * @mem_reads: memory reads (command fetch excluded)
 * @mem_writes: memory writes
 */
struct loom_hw_counters {
	__u64 cycles;
	__u64 firings;
	__u64 stalls;
	__u64 instances;
	__u64 items;
	__u64 spawns;
	__u64 mem_reads;
	__u64 mem_writes;
};

/**
 * struct loom_hw_completion - written by the core when a job ends (128 bytes)
 * @seqno: the descriptor's seqno
 * @status: enum loom_hw_status
 * @detail: status-specific detail (see enum loom_hw_status)
 * @fault_va: the device VA that faulted, for MMU faults
 * @packet_offset: byte offset of the packet being executed when the job
 *	ended (cmd_size when it ended normally)
 * @packet_opcode: that packet's opcode
 * @counters: what the job did
 * @reserved: written as zero
 */
struct loom_hw_completion {
	__u64 seqno;
	__u32 status;
	__u32 detail;
	__u64 fault_va;
	__u32 packet_offset;
	__u32 packet_opcode;
	struct loom_hw_counters counters;
	__u64 reserved[4];
};

/* ------------------------------------------------------------------------
 * The device MMU.  Each job runs in the address space whose level-0 table
 * is at the descriptor's pt_root.  Device VAs are 48 bits; four levels of
 * 512 eight-byte entries translate 4 KiB pages (VA bits 47-39, 38-30, 29-21,
 * 20-12 index levels 0-3).  Tables live at bus addresses.  A table entry
 * (levels 0-2) needs only VALID; a page entry (level 3) grants READ and/or
 * WRITE.  Bits 12-51 hold the bus address of the next table or the page.
 */
#define LOOM_VA_BITS		48
#define LOOM_PAGE_SHIFT		12
#define LOOM_PAGE_SIZE		(1ULL << LOOM_PAGE_SHIFT)
#define LOOM_PT_LEVELS		4
#define LOOM_PT_ENTRIES		512
#define LOOM_PT_INDEX(va, level) \
	(((va) >> (LOOM_PAGE_SHIFT + 9 * (LOOM_PT_LEVELS - 1 - (level)))) & 0x1ff)

#define LOOM_PTE_VALID		(1ULL << 0)
#define LOOM_PTE_READ		(1ULL << 1)
#define LOOM_PTE_WRITE		(1ULL << 2)
#define LOOM_PTE_ADDR_MASK	0x000ffffffffff000ULL

/**
 * enum loom_mmu_fault - why a translation failed (completion @detail)
 * @LOOM_MMU_FAULT_NOT_MAPPED: an entry on the walk is not VALID
 * @LOOM_MMU_FAULT_READ: the page is not READ-able
 * @LOOM_MMU_FAULT_WRITE: the page is not WRITE-able
 * @LOOM_MMU_FAULT_ADDRESS: the VA has bits above LOOM_VA_BITS
 * @LOOM_MMU_FAULT_TABLE_DMA: a page table could not be read
 * @LOOM_MMU_FAULT_INJECTED: LOOM_INJECT_MMU_FAULT
 * @LOOM_MMU_FAULT_ALIGN: an ATOMIC's VA is not a multiple of its size
 *	(ABI 0.7)
 */
enum loom_mmu_fault {
	LOOM_MMU_FAULT_NONE = 0,
	LOOM_MMU_FAULT_NOT_MAPPED = 1,
	LOOM_MMU_FAULT_READ = 2,
	LOOM_MMU_FAULT_WRITE = 3,
	LOOM_MMU_FAULT_ADDRESS = 4,
	LOOM_MMU_FAULT_TABLE_DMA = 5,
	LOOM_MMU_FAULT_INJECTED = 6,
	LOOM_MMU_FAULT_ALIGN = 7,
};

/* ------------------------------------------------------------------------
 * Command packets.  A command buffer is a sequence of packets, each a
 * 32-bit header followed by its body; all fields are dwords or qwords.
 * Header: opcode in bits 0-7, bits 8-15 reserved (zero), total packet
 * length in dwords (header included) in bits 16-31.
 */
#define LOOM_PKT_HEADER(op, dwords)	((__u32)(op) | ((__u32)(dwords) << 16))
#define LOOM_PKT_OPCODE(h)		((h) & 0xff)
#define LOOM_PKT_RESERVED(h)		(((h) >> 8) & 0xff)
#define LOOM_PKT_DWORDS(h)		((h) >> 16)

enum loom_pkt_opcode {
	/* header only; the body, if any, is skipped */
	LOOM_PKT_NOP = 0,
	/* struct loom_pkt_load_config */
	LOOM_PKT_LOAD_CONFIG = 1,
	/* struct loom_pkt_set_operands followed by count __u64 values */
	LOOM_PKT_SET_OPERANDS = 2,
	/* struct loom_pkt_dispatch_dense followed by rank __u64 extents */
	LOOM_PKT_DISPATCH_DENSE = 3,
	/* struct loom_pkt_dispatch_items */
	LOOM_PKT_DISPATCH_ITEMS = 4,
	/* struct loom_pkt_write: the job's cycle count so far, one __u64 */
	LOOM_PKT_WRITE_TIMESTAMP = 5,
	/* struct loom_pkt_write: struct loom_hw_counters so far */
	LOOM_PKT_WRITE_COUNTERS = 6,
	/* struct loom_pkt_run_work (0.5, LOOM_CAP_RUN_WORK) */
	LOOM_PKT_RUN_WORK = 7,
	LOOM_PKT_OPCODE_COUNT
};

/**
 * struct loom_pkt_load_config - load a fabric configuration
 * @header: LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4)
 * @size: bytes of configuration at @va
 * @va: device VA of a struct loom_fabric_config image, 8-byte aligned
 */
struct loom_pkt_load_config {
	__u32 header;
	__u32 size;
	__u64 va;
};

/**
 * struct loom_pkt_set_operands - values of the launch operand ports
 * @header: LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 2 + 2 * count)
 * @count: number of values that follow, at most LOOM_MAX_OPERANDS
 *
 * Operand k feeds every input port bound as LOOM_PORT_OPERAND index k.
 */
struct loom_pkt_set_operands {
	__u32 header;
	__u32 count;
	/* __u64 values[count]; */
};

#define LOOM_MAX_OPERANDS	16

/**
 * struct loom_pkt_dispatch_dense - run the loaded graph over a dense domain
 * @header: LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 2 + 2 * rank), or
 *	2 + 2 * rank + 4 for a block (LOOM_CAP_DENSE_BLOCK)
 * @rank: number of extents that follow, 0..LOOM_MAX_RANK
 *
 * Extents are signed 64-bit; a negative extent is LOOM_STATUS_BAD_PACKET_FIELD
 * before any instance runs.  Every coordinate tuple of
 * [0, e0) x ... x [0, e(rank-1)) is one instance; rank 0 is one instance; a
 * zero extent is an empty domain (no instance, the packet still completes).
 * The order of instances is unspecified; they are pipelined.
 *
 * A block packet has two more signed 64-bit words after the extents,
 * begin and end: only the instances with begin <= c0 < end run, each with
 * its coordinates in the whole domain (a part of one launch split over
 * cores).  rank >= 1 and 0 <= begin <= end <= e0, else
 * LOOM_STATUS_BAD_PACKET_FIELD; begin == end runs nothing.
 */
struct loom_pkt_dispatch_dense {
	__u32 header;
	__u32 rank;
	/* __s64 extents[rank]; */
};

#define LOOM_MAX_RANK		4

/**
 * struct loom_pkt_dispatch_items - run the loaded graph once per work item
 * @header: LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8)
 * @count: number of items, at most LOOM_MAX_ITEMS (else
 *	LOOM_STATUS_BAD_PACKET_FIELD, before any item runs)
 * @payload_va: @count __u64 payloads, 8-byte aligned
 * @result_va: @count records of LOOM_ITEM_RESULT_SIZE(@child_capacity)
 *	bytes (struct loom_item_result), 8-byte aligned
 * @child_capacity: children each item may spawn, at most
 *	LOOM_MAX_CHILD_CAPACITY
 * @reserved: must be zero
 *
 * Items are pipelined (ABI 0.5; before, each ran alone to quiescence):
 * injected one per cycle in index order, like dense instances, several in
 * flight at once, unordered with respect to each other.  Each firing of a
 * SPAWN PE appends its payload to the record of the item its token belongs
 * to, so an item's children are in the order its SPAWN PEs fire; a graph
 * orders several spawns by data dependence (loomc chains them with JOIN),
 * which pipelining keeps.  The (capacity + 1)-th spawn of an item ends the
 * job with LOOM_STATUS_CHILD_OVERFLOW (detail: that item's index); nothing
 * is dropped silently.  Every record is complete when the packet completes;
 * after a failed dispatch the records are unspecified, but for one: after
 * CHILD_OVERFLOW the overflowing item's header is written, its child_count
 * @child_capacity + 1 (the only header written).
 */
struct loom_pkt_dispatch_items {
	__u32 header;
	__u32 count;
	__u64 payload_va;
	__u64 result_va;
	__u32 child_capacity;
	__u32 reserved;
};

#define LOOM_MAX_CHILD_CAPACITY	4096
/*
 * Items of one DISPATCH_ITEMS.  The device keeps a child count per item of
 * the packet until its records are written: this bounds what it holds.
 */
#define LOOM_MAX_ITEMS		(1U << 20)

/**
 * struct loom_item_result - what one item produced
 * @child_count: children spawned, in spawn order
 * @reserved: written as zero
 * @children: child payloads
 */
struct loom_item_result {
	__u32 child_count;
	__u32 reserved;
	__u64 children[];
};

#define LOOM_ITEM_RESULT_SIZE(capacity)	(8 + 8 * (__u64)(capacity))

/**
 * struct loom_pkt_run_work - drain work items through a bounded on-device
 *	work stack (0.5, LOOM_CAP_RUN_WORK)
 * @header: LOOM_PKT_HEADER(LOOM_PKT_RUN_WORK, 14)
 * @child_capacity: children each item may spawn, at most
 *	LOOM_MAX_CHILD_CAPACITY and below @stack_capacity
 * @stack_va: @stack_capacity entries (struct loom_hw_work_entry), 8-byte
 *	aligned; the initial items are entries 0 .. @stack_count - 1
 * @stack_capacity: entries, 1 .. LOOM_MAX_WORK_STACK
 * @stack_count: initial entries, at most @stack_capacity
 * @record_va: @record_capacity records (struct loom_hw_work_record),
 *	8-byte aligned
 * @record_capacity: records, at most LOOM_MAX_WORK_RECORDS
 * @budget: items the packet may run, at least 1
 * @status_va: where the packet's struct loom_hw_work_status goes, 8-byte
 *	aligned
 * @flags: LOOM_RUN_WORK_* (others must be zero)
 * @reserved: must be zero
 *
 * The command processor is the execution-local scheduler of one dynamic
 * work domain's part on this core: it takes items from the top of the
 * stack -- one or several at once, as its bounds allow, pipelined on the
 * fabric as a DISPATCH_ITEMS' items are --
 * writes the next record for each in order from the top (record i: the
 * item's entry, payload, parent and ordinal, and its child count) and
 * replaces their entries with their children: the top item's children
 * topmost, each item's in reverse spawn order, so that child 0 runs next;
 * child k of record i has parent i and ordinal k.  Initial entries are
 * copied into their records unchanged: their parent and ordinal are the
 * host's (it uses LOOM_WORK_NO_PARENT and its own numbering).  The device
 * decides nothing else: the host commits the records as publications and
 * retirements.
 *
 * Before taking items the device checks, in this order, and stops (the
 * packet completes) if the stack is empty (QUIESCENT), @budget items ran
 * (BUDGET), @record_capacity records are written (RECORDS_FULL), or the
 * stack lacks room for @child_capacity children once the top item's own
 * entry is replaced (STACK_FULL: count - 1 + @child_capacity exceeds
 * @stack_capacity); it takes no more items than leave room for all their
 * children.  So nothing is ever dropped, the stack left behind is a valid
 * initial stack for another RUN_WORK, and the entries still on it are
 * children published by records of this packet (or initial entries).
 * A spawn past @child_capacity fails the job with LOOM_STATUS_CHILD_OVERFLOW
 * (detail: the record index that item would have had).  With
 * LOOM_RUN_WORK_CHILDREN_I32, an item that spawned a child whose payload
 * is not a sign-extended 32-bit value gets no record, its children go
 * nowhere and its entry goes back on the stack, above the others' children
 * (the first such item on top); the packet stops (CHILD_WIDTH) once the
 * items taken with it are written back: no item of a payload type the
 * host would refuse ever runs.
 *
 * The status is written when the packet stops, and also when an item
 * fails (stop LOOM_WORK_STOP_FAILED): the items taken with it were in
 * flight together and none is known complete, so the batch goes back on
 * the stack, no record of it written, with the item that overflowed on top
 * (for any other failure, the batch's top item): the item named; the
 * job's status is the failure's.  A
 * malformed packet writes nothing and fails with BAD_PACKET_SIZE or
 * BAD_PACKET_FIELD; the device touches no memory outside the three areas
 * the packet names.
 */
struct loom_pkt_run_work {
	__u32 header;
	__u32 child_capacity;
	__u64 stack_va;
	__u32 stack_capacity;
	__u32 stack_count;
	__u64 record_va;
	__u32 record_capacity;
	__u32 budget;
	__u64 status_va;
	__u32 flags;
	__u32 reserved;
};

/* struct loom_pkt_run_work.flags */
#define LOOM_RUN_WORK_CHILDREN_I32	(1U << 0)
#define LOOM_RUN_WORK_FLAGS_MASK	LOOM_RUN_WORK_CHILDREN_I32

#define LOOM_MAX_WORK_STACK	(1U << 16)
#define LOOM_MAX_WORK_RECORDS	(1U << 20)
#define LOOM_WORK_NO_PARENT	0xffffffffU

/**
 * struct loom_hw_work_entry - an item waiting on a RUN_WORK stack (16 bytes)
 * @payload: its payload
 * @parent: the record index of the item that spawned it, or the host's
 *	value for an initial entry (LOOM_WORK_NO_PARENT by convention)
 * @ordinal: its child ordinal within that parent (initial entries: the
 *	host's)
 */
struct loom_hw_work_entry {
	__u64 payload;
	__u32 parent;
	__u32 ordinal;
};

/**
 * struct loom_hw_work_record - an item a RUN_WORK ran (24 bytes)
 * @entry: the item's stack entry as it was when the item started
 * @child_count: children it spawned (their entries name this record)
 * @reserved: written as zero
 */
struct loom_hw_work_record {
	struct loom_hw_work_entry entry;
	__u32 child_count;
	__u32 reserved;
};

/**
 * enum loom_work_stop - why a RUN_WORK packet stopped
 * @LOOM_WORK_STOP_QUIESCENT: the stack is empty: the part of the domain
 *	given to the packet is done
 * @LOOM_WORK_STOP_BUDGET: @budget items ran
 * @LOOM_WORK_STOP_RECORDS_FULL: the record area is full
 * @LOOM_WORK_STOP_STACK_FULL: the top item's children might not fit
 * @LOOM_WORK_STOP_CHILD_WIDTH: the top item spawned a child outside i32
 *	(LOOM_RUN_WORK_CHILDREN_I32)
 * @LOOM_WORK_STOP_FAILED: an item failed (the job's status says how)
 */
enum loom_work_stop {
	LOOM_WORK_STOP_QUIESCENT = 0,
	LOOM_WORK_STOP_BUDGET = 1,
	LOOM_WORK_STOP_RECORDS_FULL = 2,
	LOOM_WORK_STOP_STACK_FULL = 3,
	LOOM_WORK_STOP_CHILD_WIDTH = 4,
	LOOM_WORK_STOP_FAILED = 5,
};

/**
 * struct loom_hw_work_status - how a RUN_WORK packet ended (16 bytes)
 * @stop: enum loom_work_stop
 * @items_run: records written (records 0 .. @items_run - 1)
 * @stack_count: entries left on the stack (0 .. @stack_count - 1)
 * @reserved: written as zero
 */
struct loom_hw_work_status {
	__u32 stop;
	__u32 items_run;
	__u32 stack_count;
	__u32 reserved;
};

/**
 * struct loom_pkt_write - write a timestamp or counters
 * @header: LOOM_PKT_HEADER(LOOM_PKT_WRITE_TIMESTAMP or _COUNTERS, 4)
 * @reserved: must be zero
 * @va: destination, 8-byte aligned
 */
struct loom_pkt_write {
	__u32 header;
	__u32 reserved;
	__u64 va;
};

/* ------------------------------------------------------------------------
 * The fabric.
 *
 * A core's fabric is a W x H grid of tiles; tile (x, y) has index y * W + x,
 * y = 0 is the north row.  Each tile holds one processing element (PE) and
 * a switch.  Tokens are 64-bit values.  Every cycle:
 *
 *  - each switch output (four links to the neighbours and the PE's three
 *    inputs A, B, C) takes tokens from one configured source (the four
 *    incoming links, or the PE's output); a source may feed several outputs,
 *    and a token moves only when every output it feeds has room (a fork);
 *  - links and PE outputs buffer LOOM_LINK_DEPTH tokens, PE inputs are FIFOs
 *    of LOOM_LIMITS_FIFO_DEPTH tokens; room is judged at the start of the
 *    cycle, so a token moves at most one hop per cycle;
 *  - a PE fires when each input its operation uses has a token and its
 *    output has room; it consumes one token per used input and produces
 *    its result (none for sinks) at the end of the cycle, except LOAD, whose
 *    result appears after the load latency.
 *
 * Temporal PEs (ABI 0.4, configurations of LOOM_CONFIG_VERSION_SLOTS): a
 * PE holds up to LOOM_FABRIC_SLOTS instructions ("slots"), each with its
 * own inputs A, B, C and its own output buffer, and fires at most one of
 * them per cycle: the first slot, in slot order starting after the slot
 * that fired last (round robin; slot 0 first after a dispatch starts),
 * that can fire by the rule above.  A LOAD result that becomes due, or
 * waits for room, is not a firing and does not take the PE's turn; the
 * further tokens of a STREAM, INVARIANT or REDUCE are firings.  The switch
 * is the tile's: a slot's route[] entries for the PE inputs feed that
 * slot's inputs, its entries for the links N, E, S, W are the tile's, and
 * a link output may be set in one slot only.  In slot k's routes,
 * LOOM_SRC_PE is slot k's output and LOOM_SRC_SLOT(j) slot j's output of
 * the same tile (which reaches another slot's input without a link).
 *
 * Link channels (ABI 0.8, LOOM_CAP_LINK_CHANNELS, configurations of
 * LOOM_CONFIG_VERSION_CHANNELS): as LOOM_CONFIG_VERSION_SLOTS, except that
 * a link between two tiles may be set in several slots of its tile: slot
 * k's entry sets the link's channel k, a buffer of LOOM_LINK_DEPTH tokens
 * of its own that the neighbour reads as LOOM_SRC_CHAN(dir, k).  The link
 * itself moves at most one token a cycle: the switch sources that feed a
 * link of two channels or more take turns in a fixed order, rotated by one
 * each cycle, and a source whose token would enter a link that carried a
 * token this cycle waits (uapi doc "Link channels").  LOOM_SRC_N..W read
 * channel 0.  A link on the fabric's edge (a port) has channel 0 only.
 *
 * Links on the fabric's edge connect to ports (struct loom_port_binding):
 * input ports feed one token per instance or item into the edge tile;
 * the completion port counts tokens leaving the fabric.  A configuration
 * whose route reads an edge link with no input port, or writes one with no
 * output port, is rejected.
 */
#define LOOM_LINK_DEPTH		2

/* Switch sources and outputs. */
enum loom_dir {
	LOOM_DIR_N = 0,
	LOOM_DIR_E = 1,
	LOOM_DIR_S = 2,
	LOOM_DIR_W = 3,
};

enum loom_route_src {
	LOOM_SRC_NONE = 0,
	LOOM_SRC_N = 1,		/* incoming link from the north */
	LOOM_SRC_E = 2,
	LOOM_SRC_S = 3,
	LOOM_SRC_W = 4,
	LOOM_SRC_PE = 5,	/* this tile's PE output (this slot's) */
	LOOM_SRC_SLOT0 = 6,	/* slot 0's output (LOOM_CONFIG_VERSION_SLOTS) */
	LOOM_SRC_CHAN0 = 14,	/* channel 0 of the incoming link from the north */
};

/* The output of slot @k of this tile, k < the configuration's slots. */
#define LOOM_SRC_SLOT(k)	(LOOM_SRC_SLOT0 + (k))

/*
 * Channel @k of the incoming link from direction @dir (enum loom_dir), k <
 * the configuration's slots (LOOM_CONFIG_VERSION_CHANNELS only): what the
 * neighbour's slot k sets on its link towards this tile.
 */
#define LOOM_SRC_CHAN(dir, k)	(LOOM_SRC_CHAN0 + (dir) * LOOM_PE_SLOTS + (k))
#define LOOM_SRC_CHAN_LAST	LOOM_SRC_CHAN(LOOM_DIR_W, LOOM_PE_SLOTS - 1)

/* Whether route source @s is a LOOM_SRC_CHAN(); then its dir and k. */
#define LOOM_SRC_IS_CHAN(s) \
	((unsigned int)(s) - LOOM_SRC_CHAN0 < 4U * LOOM_PE_SLOTS)
#define LOOM_SRC_CHAN_DIR(s)	(((s) - LOOM_SRC_CHAN0) / LOOM_PE_SLOTS)
#define LOOM_SRC_CHAN_INDEX(s)	(((s) - LOOM_SRC_CHAN0) % LOOM_PE_SLOTS)

/* Indices of struct loom_tile_config.route[]. */
enum loom_route_out {
	LOOM_OUT_N = 0,		/* outgoing link to the north */
	LOOM_OUT_E = 1,
	LOOM_OUT_S = 2,
	LOOM_OUT_W = 3,
	LOOM_OUT_PE_A = 4,	/* PE input A */
	LOOM_OUT_PE_B = 5,
	LOOM_OUT_PE_C = 6,
	LOOM_ROUTE_OUTS = 7,
};

/**
 * enum loom_op - PE operations
 *
 * Inputs are A, B, C; "imm" is struct loom_tile_config.imm.  With
 * LOOM_TILE_IMM_B, B is not an input and imm takes its place.  For
 * LOOM_TYPE_I32, operands are the low 32 bits and results are
 * sign-extended to 64 bits.  Division never traps: x / 0 is all ones,
 * x % 0 is x, and the signed overflow MIN / -1 is MIN with remainder 0.
 * Shift amounts are taken modulo the width.  Compares produce 1 or 0.
 * NONE tokens (a thread's ctrl, a STORE's done) carry 0.
 */
enum loom_op {
	LOOM_OP_NOP = 0,	/* PE unused */
	LOOM_OP_CONST = 1,	/* A (trigger) -> imm */
	LOOM_OP_MOV = 2,	/* A -> A */
	LOOM_OP_ADD = 3,	/* A, B -> A + B */
	LOOM_OP_SUB = 4,
	LOOM_OP_MUL = 5,
	LOOM_OP_DIVS = 6,
	LOOM_OP_DIVU = 7,
	LOOM_OP_REMS = 8,
	LOOM_OP_REMU = 9,
	LOOM_OP_AND = 10,
	LOOM_OP_OR = 11,
	LOOM_OP_XOR = 12,
	LOOM_OP_SHL = 13,
	LOOM_OP_SHRL = 14,	/* logical */
	LOOM_OP_SHRA = 15,	/* arithmetic */
	LOOM_OP_EQ = 16,
	LOOM_OP_NE = 17,
	LOOM_OP_LTS = 18,
	LOOM_OP_LTU = 19,
	LOOM_OP_LES = 20,
	LOOM_OP_LEU = 21,
	LOOM_OP_GTS = 22,
	LOOM_OP_GTU = 23,
	LOOM_OP_GES = 24,
	LOOM_OP_GEU = 25,
	LOOM_OP_SELECT = 26,	/* A (cond), B, C -> A ? B : C */
	LOOM_OP_LOAD = 27,	/* A (VA) -> the 4 (i32, f32) or 8 (i64) bytes there */
	LOOM_OP_STORE = 28,	/* A (VA), B (value) -> none (done) */
	/*
	 * A (start), B (step), C (count) -> count tokens start + i * step,
	 * one per cycle while the output has room; count <= 0 emits nothing.
	 * The PE accepts no new inputs until the sequence is out.
	 */
	LOOM_OP_STREAM = 29,
	/* A (value), B (count) -> value, count times (repeat per stream token) */
	LOOM_OP_INVARIANT = 30,
	/* A, B [, C] -> A once all are present: sequences tokens */
	LOOM_OP_JOIN = 31,
	/* A (payload) -> appends A to the current item's children; -> none */
	LOOM_OP_SPAWN = 32,
	/*
	 * A (init), B (count), C (values): folds count values of C with the
	 * operation in imm (an enum loom_op among ADD, MUL, AND, OR, XOR,
	 * FADD, FMUL, FMAX, FMIN), in the order they arrive
	 */
	LOOM_OP_REDUCE = 33,
	/* A -> nothing: consumes tokens (e.g. a thread's yield) */
	LOOM_OP_SINK = 34,
	/*
	 * IEEE-754 binary32 (f32) operations.  An f32 value travels as its
	 * 32-bit pattern in the low 32 bits of a token, sign-extended to 64
	 * bits like an i32 (so bitcasts between i32 and f32 cost nothing and
	 * f32 loads and stores are LOAD and STORE of LOOM_TYPE_I32).
	 * Arithmetic rounds to nearest, ties to even; denormals are kept (no
	 * flush to zero); every NaN an arithmetic operation produces is the
	 * canonical quiet NaN 0x7fc00000, whatever NaN went in.  The tile's
	 * type must be LOOM_TYPE_I32 (LOOM_TYPE_I64 is kept for f64), except
	 * for the conversions, where it is the integer side's width.
	 */
	LOOM_OP_FADD = 35,	/* A, B -> A + B */
	LOOM_OP_FSUB = 36,
	LOOM_OP_FMUL = 37,
	LOOM_OP_FDIV = 38,
	/*
	 * MLIR's maximumf / minimumf: a NaN operand gives NaN, and -0 is
	 * below +0.
	 */
	LOOM_OP_FMAX = 39,
	LOOM_OP_FMIN = 40,
	/*
	 * Compares, MLIR's arith.cmpf predicates in its order: 1 or 0.
	 * Ordered (O) ones are false and unordered (U) ones true when an
	 * operand is NaN; -0 equals +0.
	 */
	LOOM_OP_FFALSE = 41,
	LOOM_OP_FOEQ = 42,
	LOOM_OP_FOGT = 43,
	LOOM_OP_FOGE = 44,
	LOOM_OP_FOLT = 45,
	LOOM_OP_FOLE = 46,
	LOOM_OP_FONE = 47,
	LOOM_OP_FORD = 48,	/* neither is NaN */
	LOOM_OP_FUEQ = 49,
	LOOM_OP_FUGT = 50,
	LOOM_OP_FUGE = 51,
	LOOM_OP_FULT = 52,
	LOOM_OP_FULE = 53,
	LOOM_OP_FUNE = 54,
	LOOM_OP_FUNO = 55,	/* either is NaN */
	LOOM_OP_FTRUE = 56,
	LOOM_OP_FMA = 57,	/* A, B, C -> A * B + C, rounded once */
	LOOM_OP_FNEG = 58,	/* A -> A with its sign bit flipped (NaN too) */
	/*
	 * Integer (type's width, signed or unsigned) -> f32, rounded to
	 * nearest even.
	 */
	LOOM_OP_SITOF = 59,
	LOOM_OP_UITOF = 60,
	/*
	 * f32 -> integer of type's width, rounded toward zero and saturated:
	 * NaN gives 0, a value beyond the range its nearest bound (FTOUI:
	 * negative values give 0).  An i32 result is sign-extended.
	 */
	LOOM_OP_FTOSI = 61,
	LOOM_OP_FTOUI = 62,
	/*
	 * ABI 0.7 (LOOM_CAP_ATOMIC): A (VA), B (operand) -> the value that was
	 * at VA, which becomes old <kind> B, as one indivisible
	 * read-modify-write (imm: enum loom_atomic_kind; IMM_B is not
	 * allowed, imm holds the kind).  The access is 4 (LOOM_TYPE_I32, f32
	 * too) or 8 (LOOM_TYPE_I64) bytes; the VA must be a multiple of it
	 * (else LOOM_STATUS_MMU_FAULT, LOOM_MMU_FAULT_ALIGN) and its page
	 * readable and writable.  No other access to those bytes, from any
	 * core of the device, falls between the read and the write.  The
	 * result appears after the load latency, like a LOAD's, and the
	 * firing takes one memory port and counts one mem_read and one
	 * mem_write.
	 */
	LOOM_OP_ATOMIC = 63,
	LOOM_OP_COUNT
};

/**
 * enum loom_atomic_kind - what LOOM_OP_ATOMIC stores (its imm)
 *
 * "old" is the value read, "b" the operand; integer kinds work in the
 * tile type's width, the f32 ones (F) in LOOM_TYPE_I32 only (else
 * LOOM_CONFIG_BAD_OP) with the rules of LOOM_OP_FADD and the others.
 * The names and meanings are MLIR's arith::AtomicRMWKind.
 */
enum loom_atomic_kind {
	LOOM_ATOMIC_ADDI = 0,	/* old + b */
	LOOM_ATOMIC_ADDF = 1,	/* F: old + b (LOOM_OP_FADD) */
	LOOM_ATOMIC_MULI = 2,	/* old * b */
	LOOM_ATOMIC_MULF = 3,	/* F: old * b (LOOM_OP_FMUL) */
	LOOM_ATOMIC_MAXS = 4,	/* the larger, signed */
	LOOM_ATOMIC_MAXU = 5,	/* the larger, unsigned */
	LOOM_ATOMIC_MINS = 6,
	LOOM_ATOMIC_MINU = 7,
	LOOM_ATOMIC_MAXIMUMF = 8, /* F: LOOM_OP_FMAX */
	LOOM_ATOMIC_MINIMUMF = 9, /* F: LOOM_OP_FMIN */
	LOOM_ATOMIC_ANDI = 10,	/* old & b */
	LOOM_ATOMIC_ORI = 11,	/* old | b */
	LOOM_ATOMIC_XORI = 12,	/* old ^ b */
	LOOM_ATOMIC_ASSIGN = 13, /* b: an exchange */
	LOOM_ATOMIC_COUNT
};

/* The f32 NaN every f32 arithmetic operation produces. */
#define LOOM_F32_CANONICAL_NAN	0x7fc00000U

#define LOOM_TYPE_I64		0
#define LOOM_TYPE_I32		1

#define LOOM_TILE_IMM_B		(1U << 0)	/* B is imm, not an input */
/*
 * CONST only (ABI 0.4): the result is the dispatch's operand imm (the
 * SET_OPERANDS value, imm < LOOM_MAX_OPERANDS), not imm itself, so that an
 * operand needs no edge port.  A dispatch with fewer operands than such
 * a CONST names is LOOM_STATUS_BAD_PACKET_FIELD, as for an operand port.
 */
#define LOOM_TILE_IMM_OPERAND	(1U << 1)
#define LOOM_TILE_FLAGS_MASK	(LOOM_TILE_IMM_B | LOOM_TILE_IMM_OPERAND)

/**
 * struct loom_tile_config - one tile (32 bytes)
 * @op: enum loom_op
 * @type: LOOM_TYPE_I64 or LOOM_TYPE_I32
 * @flags: LOOM_TILE_* flags
 * @reserved0: must be zero
 * @route: for each enum loom_route_out, an enum loom_route_src
 * @reserved1: must be zero
 * @imm: immediate operand (CONST value, IMM_B operand, REDUCE operation,
 *	ATOMIC kind)
 * @reserved2: must be zero
 */
struct loom_tile_config {
	__u8 op;
	__u8 type;
	__u8 flags;
	__u8 reserved0;
	__u8 route[LOOM_ROUTE_OUTS];
	__u8 reserved1;
	__u64 imm;
	__u64 reserved2;
};

/* What an edge link is bound to. */
enum loom_port_kind {
	LOOM_PORT_OPERAND = 1,	/* index: operand k, one token per instance */
	LOOM_PORT_COORD = 2,	/* index: coordinate d, one token per instance */
	LOOM_PORT_CTRL = 3,	/* a none token per instance or item */
	LOOM_PORT_PAYLOAD = 4,	/* the item's payload, one per item */
	LOOM_PORT_COMPLETION = 5, /* output: counts tokens leaving the fabric */
};

/**
 * struct loom_port_binding - binds the edge link of one tile to a port
 * @side: enum loom_dir, the fabric edge (N: y = 0, E: x = W - 1, ...)
 * @pos: x for the N and S edges, y for the E and W edges
 * @kind: enum loom_port_kind
 * @index: operand or coordinate index, else zero
 */
struct loom_port_binding {
	__u8 side;
	__u8 pos;
	__u8 kind;
	__u8 index;
};

#define LOOM_CONFIG_MAGIC	0x47464c4cU	/* "LLFG" */
#define LOOM_CONFIG_VERSION	1	/* one instruction per PE */
#define LOOM_CONFIG_VERSION_SLOTS 2	/* @slots per PE (ABI 0.4) */
#define LOOM_CONFIG_VERSION_CHANNELS 3	/* @slots, links of channels (0.8) */
#define LOOM_MAX_PORTS		64

/**
 * struct loom_fabric_config - a fabric configuration image
 * @magic: LOOM_CONFIG_MAGIC
 * @version: LOOM_CONFIG_VERSION, LOOM_CONFIG_VERSION_SLOTS or
 *	LOOM_CONFIG_VERSION_CHANNELS
 * @width: tiles per row; must equal the core's fabric width
 * @height: rows; must equal the core's fabric height
 * @num_ports: port bindings after the tiles, at most LOOM_MAX_PORTS
 * @slots: LOOM_CONFIG_VERSION: must be zero (one slot per PE);
 *	LOOM_CONFIG_VERSION_SLOTS and _CHANNELS: instruction slots per PE, 1
 *	to the core's LOOM_FABRIC_SLOTS (else LOOM_CONFIG_BAD_DIMENSIONS)
 * @reserved: must be zero
 *
 * Followed by width * height * LOOM_CONFIG_SLOTS(version, slots) struct
 * loom_tile_config,
 * slot k of tile t at index t * slots + k, then @num_ports struct
 * loom_port_binding.  The image size is
 * LOOM_CONFIG_SIZE(width * height * LOOM_CONFIG_SLOTS(version, slots),
 * num_ports).
 * An unused slot is all zero (LOOM_OP_NOP) but may carry link routes.
 */
struct loom_fabric_config {
	__u32 magic;
	__u16 version;
	__u8 width;
	__u8 height;
	__u32 num_ports;
	__u16 slots;
	__u16 reserved;
	/* struct loom_tile_config tiles[width * height * slots]; */
	/* struct loom_port_binding ports[num_ports]; */
};

/*
 * Slots per PE of a configuration whose header has @version and @slots:
 * every version from LOOM_CONFIG_VERSION_SLOTS on has @slots (a reader
 * refuses a version it does not know before it asks).
 */
#define LOOM_CONFIG_SLOTS(version, slots) \
	((version) >= LOOM_CONFIG_VERSION_SLOTS ? (slots) : 1U)

#define LOOM_CONFIG_SIZE(tiles, ports) \
	(sizeof(struct loom_fabric_config) + \
	 (tiles) * sizeof(struct loom_tile_config) + \
	 (ports) * sizeof(struct loom_port_binding))

/**
 * enum loom_config_error - why LOAD_CONFIG rejected an image (@detail)
 */
enum loom_config_error {
	LOOM_CONFIG_OK = 0,
	LOOM_CONFIG_BAD_MAGIC = 1,
	LOOM_CONFIG_BAD_VERSION = 2,
	LOOM_CONFIG_BAD_SIZE = 3,	/* size disagrees with the header */
	LOOM_CONFIG_BAD_DIMENSIONS = 4,	/* not this core's fabric size or slots */
	LOOM_CONFIG_BAD_OP = 5,		/* unknown op, type, flag, REDUCE or ATOMIC kind */
	LOOM_CONFIG_BAD_ROUTE = 6,	/* unknown source, or an edge link with no port */
	LOOM_CONFIG_BAD_PORT = 7,	/* bad side, pos, kind or index, or a duplicate */
	LOOM_CONFIG_RESERVED = 8,	/* a reserved field is non-zero */
};

/* ------------------------------------------------------------------------
 * State dump: written to the LOOM_CORE_DUMP_* buffer when a job ends with
 * an error or is stopped, so that a hang or fault can be explained.
 */
#define LOOM_DUMP_MAGIC		0x504d4444U	/* "DDMP" */

/**
 * struct loom_hw_dump_tile - one tile's state (16 bytes)
 * @firings: times the PE fired in this job (low 32 bits)
 * @stalls: cycles the PE was ready but blocked on its output (low 32 bits)
 * @fifo: tokens waiting in PE inputs A, B, C
 * @out: tokens in the PE's output buffer
 *
 * For a temporal PE each field is the sum over its slots; a slot counts a
 * stall when the PE tried it (slots after the one that fired are not tried).
 * @links: tokens in the outgoing links N, E, S, W
 */
struct loom_hw_dump_tile {
	__u32 firings;
	__u32 stalls;
	__u8 fifo[3];
	__u8 out;
	__u8 links[4];
};

/**
 * struct loom_hw_dump - a core's state when a job ended abnormally
 * @magic: LOOM_DUMP_MAGIC
 * @core: the core
 * @seqno: the job's seqno
 * @status: enum loom_hw_status the job ended with
 * @packet_offset: byte offset of the packet being executed
 * @packet_opcode: its opcode
 * @width: fabric width (tiles follow, width * height of them)
 * @height: fabric height
 * @blocked: tiles whose PE had operands but could not fire (stalled
 *	handshakes) at the last cycle
 * @waiting: tiles whose PE had some but not all operands at the last cycle
 * @progress: LOOM_CORE_PROGRESS when the dump was taken
 * @counters: the job's counters so far
 */
struct loom_hw_dump {
	__u32 magic;
	__u32 core;
	__u64 seqno;
	__u32 status;
	__u32 packet_offset;
	__u32 packet_opcode;
	__u8 width;
	__u8 height;
	__u16 reserved;
	__u32 blocked;
	__u32 waiting;
	__u64 progress;
	struct loom_hw_counters counters;
	/* struct loom_hw_dump_tile tiles[width * height]; */
};

#define LOOM_DUMP_SIZE(tiles) \
	(sizeof(struct loom_hw_dump) + (tiles) * sizeof(struct loom_hw_dump_tile))
#define LOOM_DUMP_MAX_SIZE	LOOM_DUMP_SIZE(LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM)

#endif /* LOOM_DEVICE_H */
