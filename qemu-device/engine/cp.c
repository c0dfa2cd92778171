// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command processor: runs one job from its descriptor to its
 * completion record.  It fetches the command buffer through the job's
 * address space, decodes packets in order, drives the fabric and, when a
 * job ends badly, takes the state dump.  Every malformed input ends the job
 * with a typed status; nothing here trusts a value read from memory.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The largest configuration image a LOAD_CONFIG may name. */
#define CP_MAX_CONFIG_SIZE \
	LOOM_CONFIG_SIZE(LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM * LOOM_PE_SLOTS, \
			 LOOM_MAX_PORTS)

struct cp_job {
	struct loom_core *core;
	const struct loom_hw_job *desc;
	struct loom_hw_completion *done;
	struct loom_mmu *mmu;	/* the core's */
	int inject;		/* LOOM_INJECT_* this job consumed */
	bool inject_dma;	/* the next memory access fails */
	const uint8_t *cmd;	/* the fetched command buffer */
	uint32_t offset;	/* of the packet being executed */
	uint32_t dwords;	/* its length */
	/*
	 * The running items dispatch.  Its items are in flight together, so
	 * each child goes to its item's record as it is spawned, and
	 * child_count[] holds one count per item injected so far (grown as
	 * items are injected: a hostile count allocates nothing up front),
	 * at most LOOM_MAX_ITEMS of them (4 MiB), the packet's limit.
	 */
	bool in_items;
	uint64_t payload_va, result_va;
	uint32_t child_capacity;
	uint32_t *child_count;
	uint32_t counts_alloc;	/* entries in child_count */
	uint32_t item;		/* the item that overflowed */
	/*
	 * A RUN_WORK batch (set while it runs): payloads come from, and
	 * children go to, the batch's buffers instead of job memory.
	 */
	const uint64_t *work_payloads;
	uint64_t *work_children;
	uint32_t *work_counts;
};

static void progress(struct cp_job *j)
{
	__atomic_fetch_add(&j->core->progress, 1, __ATOMIC_RELAXED);
}

static int job_fail(struct cp_job *j, int status, uint32_t detail)
{
	j->done->status = status;
	j->done->detail = detail;
	if (status == LOOM_STATUS_MMU_FAULT) {
		j->done->fault_va = j->mmu->fault_va;
		if (!detail)
			j->done->detail = j->mmu->fault;
	}
	return status;
}

/* Job memory, honouring an injected DMA error on the first access. */
static int job_read(struct cp_job *j, uint64_t va, void *buf, size_t len)
{
	if (j->inject_dma) {
		j->inject_dma = false;
		return LOOM_STATUS_DMA_ERROR;
	}
	return loom_mmu_read(j->mmu, va, buf, len);
}

static int job_write(struct cp_job *j, uint64_t va, const void *buf, size_t len)
{
	if (j->inject_dma) {
		j->inject_dma = false;
		return LOOM_STATUS_DMA_ERROR;
	}
	return loom_mmu_write(j->mmu, va, buf, len);
}

/* ---- the fabric's view of the job ---------------------------------------- */

/*
 * A fabric access within one page takes the TLB's fast path (translate,
 * then the bus); one that spans pages takes loom_mmu_read()/write()'s.
 */
static int fabric_load(void *opaque, uint64_t va, unsigned size, uint64_t *value)
{
	struct cp_job *j = opaque;
	const struct loom_bus *bus = j->core->bus;
	uint64_t addr;
	int ret;

	*value = 0;
	if (j->inject_dma)
		return job_read(j, va, value, size);
	if ((va & (LOOM_PAGE_SIZE - 1)) + size > LOOM_PAGE_SIZE)
		return loom_mmu_read(j->mmu, va, value, size);
	/* one access from translation to data: an invalidation waits for it */
	loom_mmu_access_begin(j->mmu);
	ret = loom_mmu_translate(j->mmu, va, false, &addr);
	if (!ret && bus->read(bus->opaque, addr, value, size))
		ret = LOOM_STATUS_DMA_ERROR;
	loom_mmu_access_end(j->mmu);
	return ret;
}

static int fabric_store(void *opaque, uint64_t va, unsigned size, uint64_t value)
{
	struct cp_job *j = opaque;
	const struct loom_bus *bus = j->core->bus;
	uint64_t addr;
	int ret;

	if (j->inject_dma)
		return job_write(j, va, &value, size);
	if ((va & (LOOM_PAGE_SIZE - 1)) + size > LOOM_PAGE_SIZE)
		return loom_mmu_write(j->mmu, va, &value, size);
	loom_mmu_access_begin(j->mmu);
	ret = loom_mmu_translate(j->mmu, va, true, &addr);
	if (!ret && bus->write(bus->opaque, addr, &value, size))
		ret = LOOM_STATUS_DMA_ERROR;
	loom_mmu_access_end(j->mmu);
	return ret;
}

/*
 * LOOM_OP_ATOMIC: one compare-and-swap loop on the bus.  The bus's
 * cmpxchg is the only indivisible primitive, so the new value is
 * recomputed from whatever another core left there until a swap succeeds.
 * The page must be readable and writable; the access is naturally
 * aligned, so it never spans pages.
 */
static int fabric_atomic(void *opaque, uint64_t va, unsigned size,
			 unsigned kind, unsigned type, uint64_t operand,
			 uint64_t *old)
{
	struct cp_job *j = opaque;
	const struct loom_bus *bus = j->core->bus;
	uint64_t addr, seen = 0;
	int ret, swapped;

	*old = 0;
	if (j->inject_dma) {
		j->inject_dma = false;
		return LOOM_STATUS_DMA_ERROR;
	}
	if (va & (size - 1)) {
		j->mmu->fault_va = va;
		j->mmu->fault = LOOM_MMU_FAULT_ALIGN;
		return LOOM_STATUS_MMU_FAULT;
	}
	loom_mmu_access_begin(j->mmu);
	ret = loom_mmu_translate(j->mmu, va, false, &addr);
	if (!ret)
		ret = loom_mmu_translate(j->mmu, va, true, &addr);
	if (!ret && (!bus->cmpxchg || bus->read(bus->opaque, addr, &seen, size)))
		ret = LOOM_STATUS_DMA_ERROR;
	while (!ret) {
		/* the value as a token: an i32 sign-extended */
		uint64_t token = size == 4 ?
				 ((seen & 0xffffffffULL) ^ 0x80000000ULL) -
				 0x80000000ULL : seen;
		uint64_t desired = loom_atomic_apply(kind, type, token, operand);

		swapped = bus->cmpxchg(bus->opaque, addr, size, &seen, desired);
		if (swapped < 0)
			ret = LOOM_STATUS_DMA_ERROR;
		else if (swapped)
			break;
	}
	loom_mmu_access_end(j->mmu);
	*old = seen;
	return ret;
}

static uint64_t item_record(const struct cp_job *j, uint32_t item)
{
	return j->result_va +
	       (uint64_t)item * LOOM_ITEM_RESULT_SIZE(j->child_capacity);
}

/*
 * Makes child_count[] cover @item (below LOOM_MAX_ITEMS: the packet was
 * checked), doubling; false when out of memory.
 */
static bool grow_counts(struct cp_job *j, uint32_t item)
{
	uint32_t n = j->counts_alloc ? j->counts_alloc : 64;
	uint32_t *c;

	if (item < j->counts_alloc)
		return true;
	if (item >= LOOM_MAX_ITEMS)
		return false;
	while (n <= item)
		n *= 2;
	c = realloc(j->child_count, (size_t)n * sizeof(*c));
	if (!c)
		return false;
	memset(c + j->counts_alloc, 0, (size_t)(n - j->counts_alloc) * sizeof(*c));
	j->child_count = c;
	j->counts_alloc = n;
	return true;
}

/* The fabric injects item @item: its payload, and a count for it. */
static int fabric_payload(void *opaque, uint32_t item, uint64_t *payload)
{
	struct cp_job *j = opaque;

	if (j->work_payloads) {
		*payload = j->work_payloads[item];
		return LOOM_STATUS_OK;
	}
	if (!grow_counts(j, item))
		return LOOM_STATUS_DMA_ERROR;
	return job_read(j, j->payload_va + 8ULL * item, payload, 8);
}

/* A child of item @item of a RUN_WORK batch. */
static int work_spawn(struct cp_job *j, uint64_t payload, uint32_t item)
{
	uint32_t n = j->work_counts[item];

	if (n == j->child_capacity) {
		j->item = item;
		return LOOM_STATUS_CHILD_OVERFLOW;
	}
	j->work_children[(size_t)item * j->child_capacity + n] = payload;
	j->work_counts[item] = n + 1;
	return LOOM_STATUS_OK;
}

/*
 * A child of @item.  Children of one item arrive in its SPAWN firing
 * order whatever other items are in flight: see the uapi's
 * struct loom_pkt_dispatch_items.
 */
static int fabric_spawn(void *opaque, uint64_t payload, uint32_t item)
{
	struct cp_job *j = opaque;
	uint32_t n;
	int ret;

	if (!j->in_items)
		return LOOM_STATUS_SPAWN_OUTSIDE_ITEMS;
	if (j->work_children)
		return work_spawn(j, payload, item);
	n = j->child_count[item];
	if (n == j->child_capacity) {
		j->item = item;
		return LOOM_STATUS_CHILD_OVERFLOW;
	}
	ret = job_write(j, item_record(j, item) + 8 + 8ULL * n, &payload, 8);
	if (ret)
		return ret;
	j->child_count[item] = n + 1;
	return LOOM_STATUS_OK;
}

/* One step of the job's budget (struct loom_core.budget). */
static void spend(struct loom_core *core)
{
	if (core->budget && !--core->budget)
		core->pause(core);
}

static void fabric_pause(void *opaque)
{
	struct cp_job *j = opaque;

	j->core->pause(j->core);
}

static int run_fabric(struct cp_job *j, const struct loom_dispatch *d)
{
	const struct loom_fabric_env env = {
		.opaque = j,
		.load = fabric_load,
		.store = fabric_store,
		.atomic = fabric_atomic,
		.spawn = fabric_spawn,
		.payload = fabric_payload,
		.stop = &j->core->stop,
		.progress = &j->core->progress,
		.budget = &j->core->budget,
		.pause = fabric_pause,
	};

	if (!loom_fabric_configured(j->core->fabric))
		return LOOM_STATUS_NO_CONFIG;
	return loom_fabric_run(j->core->fabric, d, &env, &j->done->counters);
}

/* ---- packets ----------------------------------------------------------------- */

/*
 * A field of the current packet.  Handlers read their fields before they
 * check the packet's size, so a field past the packet's end reads as zero
 * (the size check then fails the packet) instead of past the command
 * buffer: a guest's short last packet must not make the device read
 * beyond what it copied (found by fuzz/cmd_decode_fuzz.c).
 */
static uint32_t pkt_u32(const struct cp_job *j, unsigned byte)
{
	uint32_t v = 0;

	if (byte + sizeof(v) <= j->dwords * 4)
		memcpy(&v, j->cmd + j->offset + byte, sizeof(v));
	return v;
}

static uint64_t pkt_u64(const struct cp_job *j, unsigned byte)
{
	uint64_t v = 0;

	if (byte + sizeof(v) <= j->dwords * 4)
		memcpy(&v, j->cmd + j->offset + byte, sizeof(v));
	return v;
}

static int pkt_load_config(struct cp_job *j)
{
	uint32_t size = pkt_u32(j, 4);
	uint64_t va = pkt_u64(j, 8);
	enum loom_config_error err;
	void *image;
	int ret;

	if (j->dwords != sizeof(struct loom_pkt_load_config) / 4)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
	if (size > CP_MAX_CONFIG_SIZE || (va & 7))
		return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, 0);
	image = malloc(size ? size : 1);
	if (!image)
		return job_fail(j, LOOM_STATUS_DMA_ERROR, 0);
	ret = job_read(j, va, image, size);
	if (ret) {
		job_fail(j, ret, 0);
	} else {
		err = loom_fabric_configure(j->core->fabric, image, size);
		if (err != LOOM_CONFIG_OK)
			ret = job_fail(j, LOOM_STATUS_BAD_CONFIG, err);
	}
	free(image);
	return ret;
}

static int pkt_set_operands(struct cp_job *j)
{
	uint32_t count = pkt_u32(j, 4);

	if (count > LOOM_MAX_OPERANDS)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, 0);
	if (j->dwords != 2 + 2 * count)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
	for (uint32_t i = 0; i < count; i++)
		j->core->operands[i] = pkt_u64(j, 8 + 8 * i);
	j->core->num_operands = count;
	return 0;
}

static int pkt_dispatch_dense(struct cp_job *j)
{
	uint32_t rank = pkt_u32(j, 4);
	int64_t extents[LOOM_MAX_RANK];
	struct loom_dispatch d = {
		.operands = j->core->operands,
		.num_operands = j->core->num_operands,
		.rank = rank,
		.extents = extents,
	};
	int ret;

	if (rank > LOOM_MAX_RANK)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, 0);
	if (j->dwords != 2 + 2 * rank && j->dwords != 2 + 2 * rank + 4)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
	/* A negative extent is rejected before any instance exists. */
	for (uint32_t i = 0; i < rank; i++) {
		extents[i] = (int64_t)pkt_u64(j, 8 + 8 * i);
		if (extents[i] < 0)
			return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, i);
	}
	if (j->dwords == 2 + 2 * rank + 4) {
		d.block = true;
		d.begin = (int64_t)pkt_u64(j, 8 + 8 * rank);
		d.end = (int64_t)pkt_u64(j, 16 + 8 * rank);
		if (!rank || d.begin < 0 || d.begin > d.end || d.end > extents[0])
			return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, rank);
	}
	ret = run_fabric(j, &d);
	return ret ? job_fail(j, ret, 0) : 0;
}

/*
 * Runs @count items pipelined; then, every item being complete, writes
 * each record's header (the children are already in place).
 */
static int run_items(struct cp_job *j, uint32_t count)
{
	struct loom_dispatch d = {
		.operands = j->core->operands,
		.num_operands = j->core->num_operands,
		.items = true,
		.count = count,
	};
	int ret;

	if (!count)
		return 0;	/* nothing runs, whatever the ports */
	ret = run_fabric(j, &d);
	for (uint32_t i = 0; i < count && !ret; i++) {
		uint32_t header[2] = { j->child_count[i], 0 };

		ret = job_write(j, item_record(j, i), header, sizeof(header));
	}
	return ret;
}

/*
 * An item overflowed: the one record header a failed dispatch writes is
 * its, child_count one past the capacity (uapi), so that whoever reads the
 * records can name it without the completion's detail.
 */
static int overflowed(struct cp_job *j)
{
	uint32_t header[2] = { j->child_capacity + 1, 0 };
	int ret = job_write(j, item_record(j, j->item), header, sizeof(header));

	return job_fail(j, ret ? ret : LOOM_STATUS_CHILD_OVERFLOW, j->item);
}

static int pkt_dispatch_items(struct cp_job *j)
{
	uint32_t count = pkt_u32(j, 4);
	uint64_t payload_va = pkt_u64(j, 8);
	uint64_t result_va = pkt_u64(j, 16);
	uint32_t capacity = pkt_u32(j, 24);
	int ret;

	if (j->dwords != sizeof(struct loom_pkt_dispatch_items) / 4)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
	if (pkt_u32(j, 28) || capacity > LOOM_MAX_CHILD_CAPACITY ||
	    count > LOOM_MAX_ITEMS || (payload_va & 7) || (result_va & 7))
		return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, 0);
	if (!loom_fabric_configured(j->core->fabric))
		return job_fail(j, LOOM_STATUS_NO_CONFIG, 0);

	j->payload_va = payload_va;
	j->result_va = result_va;
	j->child_capacity = capacity;
	j->in_items = true;
	ret = run_items(j, count);
	j->in_items = false;
	free(j->child_count);
	j->child_count = NULL;
	j->counts_alloc = 0;
	if (ret == LOOM_STATUS_CHILD_OVERFLOW)
		return overflowed(j);
	return ret ? job_fail(j, ret, 0) : 0;
}

/* ---- RUN_WORK: cp_work.c, over these three calls ---------------------------- */

static int work_read(void *opaque, uint64_t va, void *buf, size_t len)
{
	return job_read(opaque, va, buf, len);
}

static int work_write(void *opaque, uint64_t va, const void *buf, size_t len)
{
	return job_write(opaque, va, buf, len);
}

/*
 * The items of a RUN_WORK batch, pipelined as an items dispatch runs them.
 * Several are in flight at once, so after a failure none is known to have
 * completed: *@done is then 0 (the batch goes back whole), and the item
 * named is the one that overflowed, or the batch's top one.
 */
static int work_run_items(void *opaque, const uint64_t *payloads, uint32_t n,
			  uint64_t *children, uint32_t *counts, uint32_t *done,
			  uint32_t *failed)
{
	struct cp_job *j = opaque;
	struct loom_dispatch d = {
		.operands = j->core->operands,
		.num_operands = j->core->num_operands,
		.items = true,
		.count = n,
	};
	int ret;

	memset(counts, 0, (size_t)n * sizeof(*counts));
	j->work_payloads = payloads;
	j->work_children = children;
	j->work_counts = counts;
	ret = n ? run_fabric(j, &d) : LOOM_STATUS_OK;
	j->work_payloads = NULL;
	j->work_children = NULL;
	j->work_counts = NULL;
	*done = ret ? 0 : n;
	*failed = ret == LOOM_STATUS_CHILD_OVERFLOW ? j->item : *done;
	return ret;
}

static int pkt_run_work(struct cp_job *j)
{
	const struct loom_work_ops ops = {
		.opaque = j,
		.read = work_read,
		.write = work_write,
		.run_items = work_run_items,
		.stop = &j->core->stop,
	};
	struct loom_pkt_run_work pkt = {
		.child_capacity = pkt_u32(j, 4),
		.stack_va = pkt_u64(j, 8),
		.stack_capacity = pkt_u32(j, 16),
		.stack_count = pkt_u32(j, 20),
		.record_va = pkt_u64(j, 24),
		.record_capacity = pkt_u32(j, 32),
		.budget = pkt_u32(j, 36),
		.status_va = pkt_u64(j, 40),
		.flags = pkt_u32(j, 48),
		.reserved = pkt_u32(j, 52),
	};
	uint32_t detail;
	int ret;

	if (j->dwords != sizeof(pkt) / 4)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
	ret = loom_work_check(&pkt, &detail);
	if (ret)
		return job_fail(j, ret, detail);
	if (!loom_fabric_configured(j->core->fabric))
		return job_fail(j, LOOM_STATUS_NO_CONFIG, 0);
	j->child_capacity = pkt.child_capacity;
	j->in_items = true;
	ret = loom_work_run(&ops, &pkt, &detail);
	j->in_items = false;
	return ret ? job_fail(j, ret, detail) : 0;
}

static int pkt_write(struct cp_job *j, bool counters)
{
	uint64_t va = pkt_u64(j, 8);
	const struct loom_hw_counters *c = &j->done->counters;
	int ret;

	if (j->dwords != sizeof(struct loom_pkt_write) / 4)
		return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
	if (pkt_u32(j, 4) || (va & 7))
		return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, 0);
	ret = counters ? job_write(j, va, c, sizeof(*c)) :
			 job_write(j, va, &c->cycles, sizeof(c->cycles));
	return ret ? job_fail(j, ret, 0) : 0;
}

static int run_packet(struct cp_job *j, uint32_t header)
{
	switch (LOOM_PKT_OPCODE(header)) {
	case LOOM_PKT_NOP:
		return 0;
	case LOOM_PKT_LOAD_CONFIG:
		return pkt_load_config(j);
	case LOOM_PKT_SET_OPERANDS:
		return pkt_set_operands(j);
	case LOOM_PKT_DISPATCH_DENSE:
		return pkt_dispatch_dense(j);
	case LOOM_PKT_DISPATCH_ITEMS:
		return pkt_dispatch_items(j);
	case LOOM_PKT_WRITE_TIMESTAMP:
		return pkt_write(j, false);
	case LOOM_PKT_WRITE_COUNTERS:
		return pkt_write(j, true);
	case LOOM_PKT_RUN_WORK:
		return pkt_run_work(j);
	default:
		return job_fail(j, LOOM_STATUS_BAD_OPCODE, LOOM_PKT_OPCODE(header));
	}
}

static int run_packets(struct cp_job *j)
{
	uint32_t size = j->desc->cmd_size;
	int ret;

	for (j->offset = 0; j->offset < size; j->offset += j->dwords * 4) {
		uint32_t header;

		/* size is a multiple of 4 (descriptor_valid): the header is inside */
		memcpy(&header, j->cmd + j->offset, sizeof(header));

		if (__atomic_load_n(&j->core->stop, __ATOMIC_RELAXED))
			return job_fail(j, LOOM_STATUS_STOPPED, 0);
		spend(j->core);
		progress(j);
		j->done->packet_opcode = LOOM_PKT_OPCODE(header);
		j->dwords = LOOM_PKT_DWORDS(header);
		if (!j->dwords || j->dwords > (size - j->offset) / 4)
			return job_fail(j, LOOM_STATUS_BAD_PACKET_SIZE, 0);
		if (LOOM_PKT_RESERVED(header))
			return job_fail(j, LOOM_STATUS_BAD_PACKET_FIELD, 0);
		ret = run_packet(j, header);
		if (ret)
			return ret;
	}
	j->done->packet_opcode = 0;
	return 0;
}

/* ---- jobs -------------------------------------------------------------------- */

static bool descriptor_valid(const struct loom_hw_job *desc)
{
	for (unsigned i = 0; i < sizeof(desc->reserved) / sizeof(desc->reserved[0]); i++)
		if (desc->reserved[i])
			return false;
	return desc->cmd_size <= LOOM_CMD_MAX_SIZE && !(desc->cmd_size & 3) &&
	       !(desc->cmd_va & 7) && !(desc->flags & ~LOOM_JOB_FLAGS_MASK) &&
	       !(desc->pt_root & (LOOM_PAGE_SIZE - 1));
}

/*
 * With @corrupt (LOOM_INJECT_CORRUPT_DUMP) the header claims 255x255 tiles;
 * what is written is still the true dump, truncated to @size.
 */
static void take_dump(struct loom_core *core, const struct loom_hw_job *desc,
		      const struct loom_hw_completion *done, bool corrupt,
		      void *buf, size_t size, size_t *len)
{
	unsigned tiles;
	struct loom_hw_dump *dump;
	size_t need;

	*len = 0;
	if (!buf)
		return;
	/* Build the full dump, then copy what fits: a short buffer truncates. */
	dump = calloc(1, LOOM_DUMP_MAX_SIZE);
	if (!dump)
		return;
	loom_fabric_dump(core->fabric, dump, (struct loom_hw_dump_tile *)(dump + 1));
	tiles = dump->width * dump->height;
	dump->magic = LOOM_DUMP_MAGIC;
	dump->core = core->index;
	dump->seqno = desc->seqno;
	dump->status = done->status;
	dump->packet_offset = done->packet_offset;
	dump->packet_opcode = done->packet_opcode;
	dump->progress = __atomic_load_n(&core->progress, __ATOMIC_RELAXED);
	dump->counters = done->counters;
	need = LOOM_DUMP_SIZE(tiles);
	if (corrupt)
		dump->width = dump->height = 255;
	*len = need < size ? need : size;
	memcpy(buf, dump, *len);
	free(dump);
}

static void start_completion(const struct loom_hw_job *desc,
			     struct loom_hw_completion *done)
{
	memset(done, 0, sizeof(*done));
	done->seqno = desc->seqno;
}

static void run_job(struct cp_job *j)
{
	const struct loom_hw_job *desc = j->desc;
	uint8_t *cmd;
	int ret;

	if (!descriptor_valid(desc)) {
		job_fail(j, LOOM_STATUS_BAD_DESCRIPTOR, 0);
		return;
	}
	if (j->inject == LOOM_INJECT_MMU_FAULT) {
		j->mmu->fault_va = desc->cmd_va;
		job_fail(j, LOOM_STATUS_MMU_FAULT, LOOM_MMU_FAULT_INJECTED);
		return;
	}
	/* A corrupt dump needs a failed job: the same one DMA_ERROR makes. */
	j->inject_dma = j->inject == LOOM_INJECT_DMA_ERROR ||
			j->inject == LOOM_INJECT_CORRUPT_DUMP;

	cmd = malloc(desc->cmd_size ? desc->cmd_size : 1);
	if (!cmd) {
		job_fail(j, LOOM_STATUS_DMA_ERROR, 0);
		return;
	}
	ret = job_read(j, desc->cmd_va, cmd, desc->cmd_size);
	if (ret) {
		job_fail(j, ret, 0);
	} else {
		j->cmd = cmd;
		run_packets(j);
	}
	free(cmd);
}

void loom_core_run_job(struct loom_core *core, const struct loom_hw_job *job,
		       struct loom_hw_completion *done, void *dump,
		       size_t dump_size, size_t *dump_len)
{
	struct cp_job j = {
		.core = core,
		.desc = job,
		.done = done,
		.mmu = &core->mmu,
		.inject = core->inject,
	};

	core->inject = LOOM_INJECT_NONE;
	/* The TLB stays; the address space and the fault are this job's. */
	core->mmu.bus = core->bus;
	core->mmu.pt_root = job->pt_root;
	core->mmu.fault = LOOM_MMU_FAULT_NONE;
	core->mmu.fault_va = 0;
	start_completion(job, done);
	/*
	 * Nothing carries over between jobs: a job that dispatches without
	 * loading a configuration gets NO_CONFIG, never the previous job's
	 * graph or operands, and a job that fails before its first dispatch
	 * dumps an empty fabric, not the tokens the previous job left.
	 */
	loom_fabric_reset(core->fabric);
	core->num_operands = 0;
	run_job(&j);
	done->packet_offset = done->status ? j.offset : job->cmd_size;
	*dump_len = 0;
	if (done->status != LOOM_STATUS_OK)
		take_dump(core, job, done, j.inject == LOOM_INJECT_CORRUPT_DUMP,
			  dump, dump_size, dump_len);
	/* Only the record lies: the dump and the caller keep the true seqno. */
	if (j.inject == LOOM_INJECT_WRONG_SEQNO)
		done->seqno += LOOM_INJECT_SEQNO_SKEW;
}

void loom_core_stopped_job(struct loom_core *core,
			   const struct loom_hw_job *job,
			   struct loom_hw_completion *done, void *dump,
			   size_t dump_size, size_t *dump_len)
{
	start_completion(job, done);
	done->status = LOOM_STATUS_STOPPED;
	take_dump(core, job, done, false, dump, dump_size, dump_len);
}
