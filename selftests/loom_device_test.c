// SPDX-License-Identifier: GPL-2.0
/*
 * The loom-cgra device model, driven from userspace with no driver bound:
 * the test unbinds loom.ko, maps BAR0 through sysfs, enables bus mastering
 * and builds rings, page tables and command buffers in locked pages whose
 * bus addresses it reads from /proc/self/pagemap (the VM has no IOMMU, so
 * bus address = physical address).  It checks what a driver will rely on:
 * jobs run through the queue and the MMU, completion records, counters, the
 * progress counter, fault injection (including the modes in which the device
 * lies), stop with a state dump, reset, and the TLB with its invalidation.
 */
#include "kselftest_harness.h"
#include "loom_selftest.h"

#include <linux/pci_regs.h>
#include <sys/mman.h>
#include <time.h>

#include "configs.h"	/* the engine's hand-built vector-add configuration */

#define MAX_PAGES	64
#define CMD_VA		0x10000ULL
#define CONFIG_VA	0x20000ULL
#define DATA_VA		0x100000ULL	/* a, b, c: one page each */
#define N		100

struct page {
	void *cpu;
	uint64_t bus;
};

struct raw_dev {
	struct loom_node node;
	char slot[32];
	volatile uint32_t *bar;
	struct page pages[MAX_PAGES];
	unsigned used;
	struct page ring[LOOM_MAX_CORES], done[LOOM_MAX_CORES], dump[LOOM_MAX_CORES];
	uint64_t pt_root;
	uint32_t tail[LOOM_MAX_CORES];
};

static uint64_t bus_address(void *p)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &entry, 8, (uintptr_t)p / 4096 * 8) != 8)
		entry = 0;
	close(fd);
	if (!(entry >> 63))
		return 0;
	return (entry & ((1ULL << 55) - 1)) * 4096;
}

static struct page alloc_page(struct raw_dev *d)
{
	struct page pg = { 0 };

	if (d->used == MAX_PAGES)
		return pg;
	pg.cpu = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED | MAP_POPULATE, -1, 0);
	if (pg.cpu == MAP_FAILED)
		return (struct page){ 0 };
	memset(pg.cpu, 0, 4096);
	pg.bus = bus_address(pg.cpu);
	d->pages[d->used++] = pg;
	return pg;
}

static uint32_t rd(struct raw_dev *d, uint32_t reg)
{
	return d->bar[reg / 4];
}

static void wr(struct raw_dev *d, uint32_t reg, uint32_t val)
{
	d->bar[reg / 4] = val;
}

static uint32_t core_rd(struct raw_dev *d, unsigned c, uint32_t reg)
{
	return rd(d, LOOM_CORE_BASE(c) + reg);
}

static void core_wr(struct raw_dev *d, unsigned c, uint32_t reg, uint32_t val)
{
	wr(d, LOOM_CORE_BASE(c) + reg, val);
}

/* The CPU address of one of our pages, by bus address; NULL if not ours. */
static void *cpu_of(struct raw_dev *d, uint64_t bus)
{
	for (unsigned i = 0; i < d->used; i++)
		if (d->pages[i].bus == bus)
			return d->pages[i].cpu;
	return NULL;
}

/* The leaf PTE of an already mapped @va; NULL if a table is missing. */
static uint64_t *leaf_pte(struct raw_dev *d, uint64_t va)
{
	uint64_t *table = cpu_of(d, d->pt_root);

	for (unsigned level = 0; table && level < LOOM_PT_LEVELS - 1; level++)
		table = cpu_of(d, table[LOOM_PT_INDEX(va, level)] & LOOM_PTE_ADDR_MASK);
	return table ? &table[LOOM_PT_INDEX(va, LOOM_PT_LEVELS - 1)] : NULL;
}

/* The host page behind device VA @va, creating tables; NULL on failure. */
static void *map_va(struct raw_dev *d, uint64_t va, uint64_t perms)
{
	uint64_t *table = NULL;
	struct page pg;

	for (unsigned i = 0; i < d->used; i++)
		if (d->pages[i].bus == d->pt_root)
			table = d->pages[i].cpu;
	for (unsigned level = 0; level < LOOM_PT_LEVELS; level++) {
		uint64_t *e = &table[LOOM_PT_INDEX(va, level)];
		uint64_t next = *e & LOOM_PTE_ADDR_MASK;

		if (!(*e & LOOM_PTE_VALID)) {
			pg = alloc_page(d);
			if (!pg.bus)
				return NULL;
			*e = pg.bus | LOOM_PTE_VALID |
			     (level == LOOM_PT_LEVELS - 1 ? perms : 0);
			next = pg.bus;
		}
		table = NULL;
		for (unsigned i = 0; i < d->used; i++)
			if (d->pages[i].bus == next)
				table = d->pages[i].cpu;
		if (!table)
			return NULL;
	}
	return table;
}

/* Sets bus master and memory enable in the command register. */
static int enable_bus_master(struct raw_dev *d)
{
	char path[128];
	uint16_t cmd;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", d->slot);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	if (pread(fd, &cmd, 2, 4) != 2)
		ret = -EIO;
	cmd |= 0x6;
	if (!ret && pwrite(fd, &cmd, 2, 4) != 2)
		ret = -EIO;
	close(fd);
	return ret;
}

/*
 * Reads the MSI-X Message Control word and, when @set >= 0, writes @set to
 * it; returns the old word or -errno.  Enabled with MASKALL, a vector the
 * device raises becomes its pending bit in the PBA instead of a message:
 * a test sees that it fired with no driver to receive it.
 */
static int msix_control(struct raw_dev *d, int set)
{
	char path[128];
	uint8_t pos = 0, id = 0;
	uint16_t word;
	int fd, ret = -ENOENT;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", d->slot);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	if (pread(fd, &pos, 1, PCI_CAPABILITY_LIST) != 1)
		pos = 0;
	for (int hops = 0; pos && hops < 48; hops++) {
		if (pread(fd, &id, 1, pos) != 1)
			break;
		if (id == PCI_CAP_ID_MSIX) {
			ret = pread(fd, &word, 2, pos + PCI_MSIX_FLAGS) == 2 ? word : -EIO;
			word = (uint16_t)set;
			if (ret >= 0 && set >= 0 &&
			    pwrite(fd, &word, 2, pos + PCI_MSIX_FLAGS) != 2)
				ret = -EIO;
			break;
		}
		if (pread(fd, &pos, 1, pos + 1) != 1)
			break;
	}
	close(fd);
	return ret;
}

static void queue_init(struct raw_dev *d, unsigned c)
{
	core_wr(d, c, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
	core_wr(d, c, LOOM_CORE_Q_BASE_LO, (uint32_t)d->ring[c].bus);
	core_wr(d, c, LOOM_CORE_Q_BASE_HI, d->ring[c].bus >> 32);
	core_wr(d, c, LOOM_CORE_Q_SIZE, 64);
	core_wr(d, c, LOOM_CORE_DUMP_LO, (uint32_t)d->dump[c].bus);
	core_wr(d, c, LOOM_CORE_DUMP_HI, d->dump[c].bus >> 32);
	core_wr(d, c, LOOM_CORE_DUMP_SIZE, 4096);
	core_wr(d, c, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE);
	d->tail[c] = 0;
}

/*
 * Queues a job for command buffer [CMD_VA, +size) on core @c, its record
 * filled with @fill bytes first.
 */
static struct loom_hw_completion *submit_fill(struct raw_dev *d, unsigned c,
					      uint32_t size, uint64_t seqno,
					      int fill)
{
	struct loom_hw_job *ring = d->ring[c].cpu;
	struct loom_hw_completion *done =
		(struct loom_hw_completion *)d->done[c].cpu + d->tail[c] % 32;

	memset(done, fill, sizeof(*done));
	ring[d->tail[c]] = (struct loom_hw_job){
		.cmd_va = CMD_VA,
		.cmd_size = size,
		.pt_root = d->pt_root,
		.seqno = seqno,
		.completion = d->done[c].bus + (d->tail[c] % 32) * sizeof(*done),
	};
	__sync_synchronize();
	d->tail[c] = (d->tail[c] + 1) % 64;
	core_wr(d, c, LOOM_CORE_Q_TAIL, d->tail[c]);
	return done;
}

static struct loom_hw_completion *submit(struct raw_dev *d, unsigned c,
					 uint32_t size, uint64_t seqno)
{
	return submit_fill(d, c, size, seqno, 0);
}

/* Waits up to @ms for core @c's head to reach its tail. */
static bool wait_idle(struct raw_dev *d, unsigned c, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (core_rd(d, c, LOOM_CORE_Q_HEAD) == d->tail[c])
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * Waits up to @ms for core @c to complete @seqno, without reading Q_HEAD
 * (a read an injected BOGUS_HEAD would spend).
 */
static bool wait_completed(struct raw_dev *d, unsigned c, uint64_t seqno, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (core_rd(d, c, LOOM_CORE_COMPLETED) == (uint32_t)seqno)
			return true;
		usleep(1000);
	}
	return false;
}

/* Writes the vector-add job for n elements; returns the command size. */
static uint32_t vector_add_job(struct raw_dev *d, uint64_t n)
{
	uint8_t *cmd = map_va(d, CMD_VA, LOOM_PTE_READ);
	uint8_t *cfg = map_va(d, CONFIG_VA, LOOM_PTE_READ);
	uint32_t words[32], k = 0, size;
	uint64_t ops[3] = { DATA_VA, DATA_VA + 4096, DATA_VA + 8192 };

	size = loom_test_config_vector_add(cfg, 4096, 4, 4);
	words[k++] = LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4);
	words[k++] = size;
	memcpy(&words[k], &(uint64_t){ CONFIG_VA }, 8), k += 2;
	words[k++] = LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 8);
	words[k++] = 3;
	memcpy(&words[k], ops, 24), k += 6;
	words[k++] = LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 4);
	words[k++] = 1;
	memcpy(&words[k], &n, 8), k += 2;
	memcpy(cmd, words, 4 * k);
	return 4 * k;
}

FIXTURE(raw) {
	struct raw_dev d;
	int64_t *a, *b, *c;
};

FIXTURE_SETUP(raw)
{
	struct raw_dev *d = &self->d;
	char path[128];

	memset(d, 0, sizeof(*d));
	ASSERT_EQ(1, loom_find_nodes(&d->node, 1));
	ASSERT_EQ(0, loom_node_slot(&d->node, d->slot, sizeof(d->slot)));
	ASSERT_EQ(0, loom_write_file("/sys/bus/pci/drivers/loom/unbind", d->slot));

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", d->slot);
	{
		int fd = open(path, O_RDWR | O_SYNC);

		ASSERT_LE(0, fd);
		d->bar = mmap(NULL, LOOM_BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, d->bar);
	}
	ASSERT_EQ(0, enable_bus_master(d));
	d->pt_root = alloc_page(d).bus;
	ASSERT_NE(0, d->pt_root) TH_LOG("no bus address from /proc/self/pagemap");
	for (unsigned c = 0; c < 2; c++) {
		d->ring[c] = alloc_page(d);
		d->done[c] = alloc_page(d);
		d->dump[c] = alloc_page(d);
		ASSERT_NE(0, d->dump[c].bus);
		queue_init(d, c);
	}
	self->a = map_va(d, DATA_VA, LOOM_PTE_READ | LOOM_PTE_WRITE);
	self->b = map_va(d, DATA_VA + 4096, LOOM_PTE_READ | LOOM_PTE_WRITE);
	self->c = map_va(d, DATA_VA + 8192, LOOM_PTE_READ | LOOM_PTE_WRITE);
	ASSERT_NE(NULL, self->c);
	for (int i = 0; i < 512; i++) {
		self->a[i] = i * 1000;
		self->b[i] = 7 - i;
		self->c[i] = -1;
	}
}

FIXTURE_TEARDOWN(raw)
{
	struct raw_dev *d = &self->d;

	if (d->bar && d->bar != MAP_FAILED) {
		wr(d, LOOM_REG_DEVICE_RESET, LOOM_RESET_MAGIC);
		munmap((void *)d->bar, LOOM_BAR0_SIZE);
	}
	loom_write_file("/sys/bus/pci/drivers/loom/bind", d->slot);
}

TEST_F(raw, vector_add_through_the_queue)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	uint32_t progress = core_rd(d, 0, LOOM_CORE_PROGRESS);
	struct loom_hw_completion *done = submit(d, 0, size, 1234);

	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(1234, done->seqno);
	EXPECT_EQ(LOOM_STATUS_OK, done->status) TH_LOG("detail %u", done->detail);
	EXPECT_EQ(size, done->packet_offset);
	EXPECT_EQ(N, done->counters.instances);
	EXPECT_LE(N, done->counters.cycles);
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(i * 1000 + 7 - i, self->c[i]) TH_LOG("c[%d]", i);
	}
	EXPECT_EQ(-1, self->c[N]);
	EXPECT_EQ(1234, core_rd(d, 0, LOOM_CORE_COMPLETED));
	EXPECT_LT(progress, core_rd(d, 0, LOOM_CORE_PROGRESS));
	EXPECT_EQ(LOOM_CORE_ENABLED, core_rd(d, 0, LOOM_CORE_STATUS));
}

TEST_F(raw, jobs_complete_in_order_on_two_cores)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, 10);
	struct loom_hw_completion *done[2][8];

	for (int j = 0; j < 8; j++)
		for (unsigned c = 0; c < 2; c++)
			done[c][j] = submit(d, c, size, 100 * c + j);
	for (unsigned c = 0; c < 2; c++) {
		ASSERT_TRUE(wait_idle(d, c, 5000));
		for (int j = 0; j < 8; j++) {
			EXPECT_EQ(100 * c + j, done[c][j]->seqno);
			EXPECT_EQ(LOOM_STATUS_OK, done[c][j]->status);
		}
		EXPECT_EQ(100 * c + 7, core_rd(d, c, LOOM_CORE_COMPLETED));
	}
}

TEST_F(raw, injected_hang_stops_with_a_dump)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	struct loom_hw_completion *done;
	struct loom_hw_dump *dump = d->dump[0].cpu;
	uint32_t progress;

	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	EXPECT_EQ(LOOM_INJECT_HANG, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	done = submit(d, 0, size, 7);
	usleep(50000);
	EXPECT_NE(0, core_rd(d, 0, LOOM_CORE_STATUS) & LOOM_CORE_BUSY);
	progress = core_rd(d, 0, LOOM_CORE_PROGRESS);
	usleep(100000);
	/* stuck, not long: the progress counter stands still */
	EXPECT_EQ(progress, core_rd(d, 0, LOOM_CORE_PROGRESS));
	EXPECT_EQ(0, done->seqno);

	core_wr(d, 0, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE | LOOM_CTRL_STOP);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(7, done->seqno);
	EXPECT_EQ(LOOM_STATUS_STOPPED, done->status);
	EXPECT_NE(0, core_rd(d, 0, LOOM_CORE_STATUS) & LOOM_CORE_HALTED);
	EXPECT_NE(0, core_rd(d, 0, LOOM_CORE_STATUS) & LOOM_CORE_DUMP_VALID);
	EXPECT_EQ(LOOM_DUMP_MAGIC, dump->magic);
	EXPECT_EQ(7, dump->seqno);
	EXPECT_EQ(LOOM_STATUS_STOPPED, dump->status);
	EXPECT_EQ(4, dump->width);

	/* halted: a new job waits until STOP is cleared, then runs */
	done = submit(d, 0, size, 8);
	usleep(50000);
	EXPECT_EQ(0, done->seqno);
	core_wr(d, 0, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_STATUS) & LOOM_CORE_HALTED);
}

TEST_F(raw, injected_faults_reach_the_completion)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	struct loom_hw_completion *done;

	core_wr(d, 1, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_MMU_FAULT);
	done = submit(d, 1, size, 1);
	ASSERT_TRUE(wait_idle(d, 1, 5000));
	EXPECT_EQ(LOOM_STATUS_MMU_FAULT, done->status);
	EXPECT_EQ(LOOM_MMU_FAULT_INJECTED, done->detail);
	EXPECT_EQ(CMD_VA, done->fault_va);

	core_wr(d, 1, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_DMA_ERROR);
	done = submit(d, 1, size, 2);
	ASSERT_TRUE(wait_idle(d, 1, 5000));
	EXPECT_EQ(LOOM_STATUS_DMA_ERROR, done->status);

	/* the other core never noticed; this one recovers */
	done = submit(d, 1, size, 3);
	ASSERT_TRUE(wait_idle(d, 1, 5000));
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_COMPLETED));
}

TEST_F(raw, unmapped_va_faults_with_its_address)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, 2 * 512);	/* c runs off its page */
	struct loom_hw_completion *done = submit(d, 0, size, 5);

	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(LOOM_STATUS_MMU_FAULT, done->status);
	EXPECT_EQ(LOOM_MMU_FAULT_NOT_MAPPED, done->detail);
	EXPECT_EQ(DATA_VA + 3 * 4096, done->fault_va & ~0xfffULL);
}

TEST_F(raw, reset_aborts_without_a_completion)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	struct loom_hw_completion *done;

	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_HANG);
	done = submit(d, 0, size, 9);
	submit(d, 0, size, 10);
	usleep(50000);
	core_wr(d, 0, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_Q_HEAD));
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_Q_TAIL));
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_STATUS));
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_PROGRESS));
	usleep(50000);
	EXPECT_EQ(0, done->seqno) TH_LOG("status %u", done->status);
	/* the queue comes back after being set up again */
	queue_init(d, 0);
	done = submit(d, 0, size, 11);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
}

TEST_F(raw, bad_queue_is_a_device_error)
{
	struct raw_dev *d = &self->d;

	wr(d, LOOM_REG_ERROR_STATUS, ~0U);
	core_wr(d, 1, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
	core_wr(d, 1, LOOM_CORE_Q_SIZE, 3);
	core_wr(d, 1, LOOM_CORE_CTRL, LOOM_CTRL_ENABLE);
	EXPECT_EQ(0, core_rd(d, 1, LOOM_CORE_CTRL) & LOOM_CTRL_ENABLE);
	EXPECT_EQ(LOOM_ERROR_BAD_QUEUE | 1U << LOOM_ERROR_CORE_SHIFT,
		  rd(d, LOOM_REG_ERROR_STATUS));
	wr(d, LOOM_REG_ERROR_STATUS, LOOM_ERROR_BAD_QUEUE);
	EXPECT_EQ(0, rd(d, LOOM_REG_ERROR_STATUS) & LOOM_ERROR_BAD_QUEUE);
	/* an unimplemented register reads as all ones */
	EXPECT_EQ(0xffffffff, rd(d, 0x0ffc));
	EXPECT_EQ(0xffffffff, rd(d, LOOM_CORE_BASE(7)));
}

/* ---- misbehaving-device injections (ABI 0.3) ------------------------------ */

TEST_F(raw, injection_modes_read_back)
{
	struct raw_dev *d = &self->d;

	for (uint32_t mode = LOOM_INJECT_NONE; mode <= LOOM_INJECT_MAX; mode++) {
		core_wr(d, 0, LOOM_CORE_FAULT_INJECT, mode);
		EXPECT_EQ(mode, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	}
	/* an unknown mode clears the pending one */
	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_MAX + 1);
	EXPECT_EQ(LOOM_INJECT_NONE, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
}

TEST_F(raw, corrupt_dump_fails_as_dma_error_with_a_lying_header)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	uint32_t fabric = rd(d, LOOM_REG_FABRIC);
	size_t real = LOOM_DUMP_SIZE(LOOM_FABRIC_WIDTH(fabric) * LOOM_FABRIC_HEIGHT(fabric));
	size_t short_size = sizeof(struct loom_hw_dump) + 8;
	struct loom_hw_dump *dump = d->dump[0].cpu;
	uint8_t *bytes = d->dump[0].cpu;
	struct loom_hw_completion dma, corrupt, *done;
	size_t touched = 0;

	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_DMA_ERROR);
	done = submit(d, 0, size, 20);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	dma = *done;
	ASSERT_EQ(LOOM_STATUS_DMA_ERROR, dma.status);

	memset(bytes, 0xa5, 4096);
	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_CORRUPT_DUMP);
	EXPECT_EQ(LOOM_INJECT_CORRUPT_DUMP, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	done = submit(d, 0, size, 21);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(LOOM_INJECT_NONE, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	corrupt = *done;
	EXPECT_EQ(21, corrupt.seqno);
	/* the record is the one DMA_ERROR gives, seqno aside */
	corrupt.seqno = dma.seqno;
	EXPECT_EQ(0, memcmp(&dma, &corrupt, sizeof(dma)));
	EXPECT_NE(0, core_rd(d, 0, LOOM_CORE_STATUS) & LOOM_CORE_DUMP_VALID);
	EXPECT_EQ(LOOM_DUMP_MAGIC, dump->magic);
	EXPECT_EQ(21, dump->seqno);
	EXPECT_EQ(LOOM_STATUS_DMA_ERROR, dump->status);
	EXPECT_EQ(255, dump->width);
	EXPECT_EQ(255, dump->height);
	/* 255 x 255 tiles claimed, the real ones written, nothing past them */
	for (size_t i = real; i < 4096; i++)
		touched += bytes[i] != 0xa5;
	EXPECT_EQ(0, touched);

	/* a buffer shorter than the dump: nothing past its size either */
	memset(bytes, 0xa5, 4096);
	core_wr(d, 0, LOOM_CORE_DUMP_SIZE, short_size);
	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_CORRUPT_DUMP);
	done = submit(d, 0, size, 22);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(LOOM_STATUS_DMA_ERROR, done->status);
	EXPECT_EQ(LOOM_DUMP_MAGIC, dump->magic);
	EXPECT_EQ(22, dump->seqno);
	EXPECT_EQ(255, dump->width);
	for (size_t i = short_size; i < 4096; i++)
		touched += bytes[i] != 0xa5;
	EXPECT_EQ(0, touched);

	/* consumed: the next job runs */
	done = submit(d, 0, size, 23);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
}

TEST_F(raw, skip_completion_moves_head_without_a_record)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	const uint32_t vector = 1U << LOOM_MSIX_CORE_VECTOR(0);
	struct loom_hw_completion *done;
	const uint8_t *rec;
	uint32_t pending_before, pending_after;
	size_t touched = 0;
	int control = msix_control(d, -1);
	bool idle;

	ASSERT_LE(0, control) TH_LOG("MSI-X capability: %d", control);
	/* Enabled and masked: the core's vector becomes its PBA bit. */
	ASSERT_EQ(control, msix_control(d, control | PCI_MSIX_FLAGS_ENABLE |
					   PCI_MSIX_FLAGS_MASKALL));
	pending_before = rd(d, LOOM_MSIX_PBA_OFFSET) & vector;
	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_SKIP_COMPLETION);
	EXPECT_EQ(LOOM_INJECT_SKIP_COMPLETION, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	done = submit_fill(d, 0, size, 30, 0x5a);
	idle = wait_idle(d, 0, 5000);
	/* The device moves the head, then signals: the vector may trail it. */
	for (int i = 0; i < 1000; i++) {
		pending_after = rd(d, LOOM_MSIX_PBA_OFFSET) & vector;
		if (pending_after)
			break;
		usleep(1000);
	}
	msix_control(d, control);
	ASSERT_TRUE(idle);		/* head moved */
	EXPECT_EQ(0, pending_before);
	EXPECT_EQ(vector, pending_after);	/* the vector fired */
	EXPECT_EQ(30, core_rd(d, 0, LOOM_CORE_COMPLETED));
	rec = (const uint8_t *)done;
	for (size_t i = 0; i < sizeof(*done); i++)
		touched += rec[i] != 0x5a;
	EXPECT_EQ(0, touched) TH_LOG("the record was written: seqno %llu status %u",
				     (unsigned long long)done->seqno, done->status);
	/* the job itself ran */
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(i * 1000 + 7 - i, self->c[i]) TH_LOG("c[%d]", i);
	}
	EXPECT_EQ(LOOM_INJECT_NONE, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));

	/* consumed: the next record is written */
	done = submit_fill(d, 0, size, 31, 0x5a);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(31, done->seqno);
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
}

TEST_F(raw, wrong_seqno_skews_the_record_only)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	struct loom_hw_completion *done;

	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_WRONG_SEQNO);
	EXPECT_EQ(LOOM_INJECT_WRONG_SEQNO, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	done = submit(d, 0, size, 40);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(40 + LOOM_INJECT_SEQNO_SKEW, done->seqno);
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
	EXPECT_EQ(N, done->counters.instances);
	/* the register tells the truth */
	EXPECT_EQ(40, core_rd(d, 0, LOOM_CORE_COMPLETED));
	EXPECT_EQ(LOOM_INJECT_NONE, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));

	done = submit(d, 0, size, 41);
	ASSERT_TRUE(wait_idle(d, 0, 5000));
	EXPECT_EQ(41, done->seqno);
}

TEST_F(raw, bogus_head_lies_once)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	struct loom_hw_completion *done;
	uint32_t first, second;

	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_BOGUS_HEAD);
	EXPECT_EQ(LOOM_INJECT_BOGUS_HEAD, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));
	done = submit(d, 0, size, 50);
	ASSERT_TRUE(wait_completed(d, 0, 50, 5000));
	first = core_rd(d, 0, LOOM_CORE_Q_HEAD);
	second = core_rd(d, 0, LOOM_CORE_Q_HEAD);
	EXPECT_EQ((d->tail[0] + 64 / 2) % 64, first);
	EXPECT_EQ(d->tail[0], second);
	EXPECT_EQ(d->tail[0], core_rd(d, 0, LOOM_CORE_Q_HEAD));
	/* the job completed normally */
	EXPECT_EQ(50, done->seqno);
	EXPECT_EQ(LOOM_STATUS_OK, done->status);
	EXPECT_EQ(LOOM_INJECT_NONE, core_rd(d, 0, LOOM_CORE_FAULT_INJECT));

	/* consumed: the next job's head is true from the first read */
	submit(d, 0, size, 51);
	ASSERT_TRUE(wait_completed(d, 0, 51, 5000));
	EXPECT_EQ(d->tail[0], core_rd(d, 0, LOOM_CORE_Q_HEAD));

	/* a reset drops a lie not yet told */
	core_wr(d, 0, LOOM_CORE_FAULT_INJECT, LOOM_INJECT_BOGUS_HEAD);
	submit(d, 0, size, 52);
	ASSERT_TRUE(wait_completed(d, 0, 52, 5000));
	core_wr(d, 0, LOOM_CORE_RESET, LOOM_RESET_MAGIC);
	EXPECT_EQ(0, core_rd(d, 0, LOOM_CORE_Q_HEAD));
}

/* ---- the TLB (ABI 0.3) ------------------------------------------------------ */

/* Runs the vector-add job on core @c and waits for its completion. */
static struct loom_hw_completion *run_on(struct raw_dev *d, unsigned c,
					 uint32_t size, uint64_t seqno)
{
	struct loom_hw_completion *done = submit(d, c, size, seqno);

	return wait_idle(d, c, 5000) ? done : NULL;
}

TEST_F(raw, tlb_keeps_translations_until_invalidated)
{
	struct raw_dev *d = &self->d;
	uint32_t size = vector_add_job(d, N);
	uint64_t *pte = leaf_pte(d, DATA_VA + 8192);	/* c's */
	uint64_t perms = LOOM_PTE_VALID | LOOM_PTE_READ | LOOM_PTE_WRITE;
	struct page fresh = alloc_page(d);
	int64_t *old_c = self->c, *new_c = fresh.cpu;
	uint64_t old_bus;
	uint32_t count = rd(d, LOOM_REG_MMU_INVALIDATE);
	struct loom_hw_completion *done;

	EXPECT_NE(0, rd(d, LOOM_REG_CAPS) & LOOM_CAP_TLB);
	ASSERT_NE(NULL, pte);
	ASSERT_NE(0, fresh.bus);
	old_bus = *pte & LOOM_PTE_ADDR_MASK;

	/* both cores walk c's PTE and cache it */
	for (unsigned c = 0; c < 2; c++) {
		done = run_on(d, c, size, 60 + c);
		ASSERT_NE(NULL, done);
		ASSERT_EQ(LOOM_STATUS_OK, done->status);
	}
	EXPECT_EQ(7, old_c[0]);

	/* c's PTE now names a fresh page; nobody invalidates */
	*pte = fresh.bus | perms;
	__sync_synchronize();
	for (unsigned c = 0; c < 2; c++) {
		for (int i = 0; i < N; i++)
			old_c[i] = -1;
		done = run_on(d, c, size, 62 + c);
		ASSERT_NE(NULL, done);
		ASSERT_EQ(LOOM_STATUS_OK, done->status);
		/* the cached translation: still the old page */
		for (int i = 0; i < N; i++) {
			ASSERT_EQ(i * 1000 + 7 - i, old_c[i]) TH_LOG("core %u c[%d]", c, i);
			ASSERT_EQ(0, new_c[i]) TH_LOG("core %u new c[%d]", c, i);
		}
	}

	/* one invalidation, for every core */
	wr(d, LOOM_REG_MMU_INVALIDATE, LOOM_MMU_INVALIDATE_ALL);
	EXPECT_EQ(count + 1, rd(d, LOOM_REG_MMU_INVALIDATE));
	for (unsigned c = 0; c < 2; c++) {
		for (int i = 0; i < N; i++)
			old_c[i] = new_c[i] = -1;
		done = run_on(d, c, size, 64 + c);
		ASSERT_NE(NULL, done);
		ASSERT_EQ(LOOM_STATUS_OK, done->status);
		for (int i = 0; i < N; i++) {
			ASSERT_EQ(i * 1000 + 7 - i, new_c[i]) TH_LOG("core %u new c[%d]", c, i);
			ASSERT_EQ(-1, old_c[i]) TH_LOG("core %u c[%d]", c, i);
		}
	}

	/* other values are ignored and not counted */
	wr(d, LOOM_REG_MMU_INVALIDATE, 0);
	wr(d, LOOM_REG_MMU_INVALIDATE, LOOM_MMU_INVALIDATE_ALL << 1);
	EXPECT_EQ(count + 1, rd(d, LOOM_REG_MMU_INVALIDATE));

	/* a core reset empties that core's TLB too */
	*pte = old_bus | perms;
	__sync_synchronize();
	queue_init(d, 0);
	new_c[0] = old_c[0] = -1;
	done = run_on(d, 0, size, 66);
	ASSERT_NE(NULL, done);
	ASSERT_EQ(LOOM_STATUS_OK, done->status);
	EXPECT_EQ(7, old_c[0]);
	EXPECT_EQ(-1, new_c[0]);
	/* and counts nothing */
	EXPECT_EQ(count + 1, rd(d, LOOM_REG_MMU_INVALIDATE));
}

TEST_HARNESS_MAIN
