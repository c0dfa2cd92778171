// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loom_qtest: the loom-cgra device in a real QEMU, driven through QEMU's
 * qtest protocol (-accel qtest -qtest stdio: the test plays the CPU, one
 * command a line, "OK [value]" back), with no guest kernel: PCI
 * configuration through ports 0xcf8/0xcfc, guest RAM and the BAR with
 * qtest's read/write commands.
 *
 * What it checks is what a guest kernel could not check safely: a job
 * whose completion record, state dump or ring lies on the device's own
 * registers.  Such a DMA used to run the device's own MMIO handler on the
 * core thread, which held the core's lock (a self-deadlock on Q_BASE, on
 * LOOM_CORE_RESET a wait for itself), freezing QEMU.  Now the device
 * refuses every access that is not to RAM as a DMA error, and every
 * check ends within its timeout.
 *
 * A core that polls its doorbell after a job (poll-us) still runs every
 * job rung while it polls, and a reset while it polls returns.
 *
 * It checks LOOM_OP_ATOMIC in the device itself: two cores adding into
 * one counter at once lose no update (the host compare-and-swap on guest
 * RAM), a misaligned one faults with LOOM_MMU_FAULT_ALIGN, and one whose
 * page is the device's own BAR is refused as a DMA error (atomics reach
 * RAM only).
 *
 * A doorbell that finds its core idle runs the job itself, within a budget
 * of steps (inline-steps), and hands a longer one to the core thread,
 * which finishes it; a reset then still returns.
 *
 * It also checks the device's trace events (-trace 'loom_*', the log
 * backend writing to a file): a job's doorbell, start, MMU fault,
 * completion and interrupt appear, in that order, and a guest error too.
 *
 *   loom_qtest QEMU_BINARY
 *
 * One TAP line per test, then "N passed, N failed".
 */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/pci_regs.h>

#include "loom_device.h"

#define PCI_CONFIG_ADDRESS	0xcf8
#define PCI_CONFIG_DATA		0xcfc
#define LOOM_SLOT		4		/* -device loom-cgra,addr=4.0 */
#define BAR0			0xe0000000ULL	/* in q35's 32-bit PCI hole */
#define RING			0x100000ULL	/* guest RAM */
#define RECORD			0x101000ULL
#define REPLY_TIMEOUT_MS	5000

static const char *qemu_binary;
static pid_t qemu_pid;
static FILE *to_qemu;
static int from_qemu = -1;
static char reply[512];
static bool hung;		/* QEMU stopped answering */
static char trace_path[64];	/* QEMU's -trace file=, when not empty */
static const char *device_opts = "";	/* more ",prop=value" for the device */
static int passed, failed, current_failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: CHECK(%s) failed\n", __FILE__,	\
		       __LINE__, #cond);				\
		current_failed = 1;					\
	}								\
} while (0)

/* ---- the qtest connection ------------------------------------------------ */

static bool qemu_start(void)
{
	int in[2], out[2];

	if (pipe(in) || pipe(out))
		return false;
	qemu_pid = fork();
	if (qemu_pid < 0)
		return false;
	if (!qemu_pid) {
		char dev[128], trace[128];

		snprintf(dev, sizeof(dev), "loom-cgra,addr=%d.0%s", LOOM_SLOT, device_opts);
		snprintf(trace, sizeof(trace), "enable=loom_*,file=%s", trace_path);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(qemu_binary, qemu_binary, "-machine", "q35", "-accel",
		      "qtest", "-qtest", "stdio", "-qtest-log", "/dev/null",
		      "-display", "none",
		      "-nodefaults", "-m", "128", "-L", "/usr/share/qemu",
		      "-L", "/usr/share/seabios", "-device", dev,
		      trace_path[0] ? "-trace" : (char *)NULL, trace, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_qemu = fdopen(in[1], "w");
	from_qemu = out[0];
	hung = false;
	return to_qemu != NULL;
}

static void qemu_stop(void)
{
	if (to_qemu)
		fclose(to_qemu);
	to_qemu = NULL;
	if (from_qemu >= 0)
		close(from_qemu);
	from_qemu = -1;
	if (qemu_pid > 0) {
		kill(qemu_pid, SIGKILL);
		waitpid(qemu_pid, NULL, 0);
	}
	qemu_pid = 0;
}

/* Reads one line of QEMU's answer into reply[]; false after the timeout. */
static bool read_line(void)
{
	size_t n = 0;

	while (n < sizeof(reply) - 1) {
		struct pollfd p = { .fd = from_qemu, .events = POLLIN };
		char ch;

		if (poll(&p, 1, REPLY_TIMEOUT_MS) <= 0 ||
		    read(from_qemu, &ch, 1) != 1)
			return false;
		if (ch == '\n')
			break;
		reply[n++] = ch;
	}
	reply[n] = 0;
	return true;
}

/*
 * Sends one command and waits for its "OK"; the value after it, if any.
 * Once QEMU has not answered in time, every later command fails at once.
 */
static uint64_t cmd(const char *fmt, ...)
{
	va_list ap;

	if (hung)
		return ~0ULL;
	va_start(ap, fmt);
	vfprintf(to_qemu, fmt, ap);
	va_end(ap);
	fputc('\n', to_qemu);
	fflush(to_qemu);
	do {
		if (!read_line()) {
			printf("#   QEMU did not answer within %d ms: hung\n",
			       REPLY_TIMEOUT_MS);
			hung = true;
			current_failed = 1;
			return ~0ULL;
		}
	} while (strncmp(reply, "OK", 2));	/* skip asynchronous lines */
	return strtoull(reply + 2, NULL, 0);
}

static uint32_t reg_read(uint32_t reg)
{
	return (uint32_t)cmd("readl 0x%" PRIx64, BAR0 + reg);
}

static void reg_write(uint32_t reg, uint32_t val)
{
	cmd("writel 0x%" PRIx64 " 0x%x", BAR0 + reg, val);
}

static void mem_write(uint64_t addr, const void *buf, size_t len)
{
	char hex[2 * 256 + 1];
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", p[i]);
	cmd("write 0x%" PRIx64 " 0x%zx 0x%s", addr, len, hex);
}

static void config_write(unsigned reg, uint32_t val)
{
	cmd("outl 0x%x 0x%x", PCI_CONFIG_ADDRESS,
	    0x80000000U | LOOM_SLOT << 11 | reg);
	cmd("outl 0x%x 0x%x", PCI_CONFIG_DATA, val);
}

static uint32_t config_read(unsigned reg)
{
	cmd("outl 0x%x 0x%x", PCI_CONFIG_ADDRESS,
	    0x80000000U | LOOM_SLOT << 11 | reg);
	return (uint32_t)cmd("inl 0x%x", PCI_CONFIG_DATA);
}

/* ---- the device ---------------------------------------------------------- */

/* A QEMU with the device's BAR0 at BAR0, memory and bus mastering on. */
static bool device_up(void)
{
	if (!qemu_start())
		return false;
	if (config_read(PCI_VENDOR_ID) !=
	    (LOOM_PCI_VENDOR_ID | LOOM_PCI_DEVICE_ID << 16))
		return false;
	config_write(PCI_BASE_ADDRESS_0, (uint32_t)BAR0);
	config_write(PCI_BASE_ADDRESS_1, (uint32_t)(BAR0 >> 32));
	config_write(PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	return reg_read(LOOM_REG_ID) == LOOM_ID_MAGIC;
}

/* Core 0's register @reg. */
static uint32_t core_reg(uint32_t reg)
{
	return LOOM_CORE_BASE(0) + reg;
}

/* Brings core 0's two-entry ring at @ring up and submits @job at entry 0. */
static void submit(uint64_t ring, const struct loom_hw_job *job)
{
	mem_write(RING, job, sizeof(*job));
	reg_write(core_reg(LOOM_CORE_Q_BASE_LO), (uint32_t)ring);
	reg_write(core_reg(LOOM_CORE_Q_BASE_HI), (uint32_t)(ring >> 32));
	reg_write(core_reg(LOOM_CORE_Q_SIZE), 2);
	reg_write(core_reg(LOOM_CORE_CTRL), LOOM_CTRL_ENABLE);
	reg_write(core_reg(LOOM_CORE_Q_TAIL), 1);
}

/* Waits (polling, QEMU answering) until @reg & @mask; false on a timeout. */
static bool wait_for(uint32_t reg, uint32_t mask)
{
	for (int i = 0; i < 2000 && !hung; i++) {
		if (reg_read(reg) & mask)
			return true;
		usleep(1000);
	}
	return false;
}

/* ---- tests ----------------------------------------------------------------- */

/*
 * An empty job (no packet: no memory access of its own) whose completion
 * record names @target in the BAR: the record is refused as a DMA error
 * and the queue goes on.
 */
static void record_into_bar(uint32_t target, uint64_t seqno)
{
	struct loom_hw_job job = {
		.seqno = seqno,
		.completion = BAR0 + target,
	};

	CHECK(device_up());
	submit(RING, &job);
	CHECK(wait_for(core_reg(LOOM_CORE_Q_HEAD), 1));
	CHECK(reg_read(LOOM_REG_ERROR_STATUS) & LOOM_ERROR_COMPLETION_DMA);
	/* nothing of the record landed in the registers */
	CHECK(reg_read(core_reg(LOOM_CORE_Q_BASE_LO)) == (uint32_t)RING);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_BASE_HI)) == 0);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_SIZE)) == 2);
	CHECK(reg_read(core_reg(LOOM_CORE_CTRL)) == LOOM_CTRL_ENABLE);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == (uint32_t)seqno);
	/* and QEMU still answers: a reset of the core returns */
	reg_write(core_reg(LOOM_CORE_RESET), LOOM_RESET_MAGIC);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 0);
	qemu_stop();
}

/*
 * The record over the core's queue registers from Q_BASE_HI on (its first
 * access, 4-byte aligned only, is a 32-bit register write, which takes the
 * core's lock: a self-deadlock before).
 */
static void test_record_onto_queue_registers(void)
{
	record_into_bar(core_reg(LOOM_CORE_Q_BASE_HI), 7);
}

/* The record's seqno onto LOOM_CORE_RESET (a reset waiting for itself). */
static void test_record_onto_core_reset(void)
{
	record_into_bar(core_reg(LOOM_CORE_RESET), LOOM_RESET_MAGIC);
}

/*
 * A job that faults (its command fetch walks a zeroed page table), with
 * the state dump buffer on the core's registers from Q_BASE_HI on (a
 * self-deadlock before, as for the record): the dump is refused, the
 * record (in RAM) is written, DUMP_VALID stays clear.
 */
static void test_dump_onto_registers(void)
{
	struct loom_hw_job job = {
		.cmd_size = 4,
		.pt_root = RECORD + 0x1000,	/* zeroed RAM: nothing mapped */
		.seqno = 9,
		.completion = RECORD,
	};
	const uint64_t dump = BAR0 + core_reg(LOOM_CORE_Q_BASE_HI);

	CHECK(device_up());
	reg_write(core_reg(LOOM_CORE_DUMP_LO), (uint32_t)dump);
	reg_write(core_reg(LOOM_CORE_DUMP_HI), (uint32_t)(dump >> 32));
	reg_write(core_reg(LOOM_CORE_DUMP_SIZE), LOOM_DUMP_MAX_SIZE);
	submit(RING, &job);
	CHECK(wait_for(core_reg(LOOM_CORE_Q_HEAD), 1));
	CHECK(cmd("readl 0x%" PRIx64, RECORD +
		  offsetof(struct loom_hw_completion, status)) ==
	      LOOM_STATUS_MMU_FAULT);
	CHECK(!(reg_read(core_reg(LOOM_CORE_STATUS)) & LOOM_CORE_DUMP_VALID));
	CHECK(!(reg_read(LOOM_REG_ERROR_STATUS) & LOOM_ERROR_COMPLETION_DMA));
	CHECK(reg_read(core_reg(LOOM_CORE_Q_BASE_HI)) == 0);
	qemu_stop();
}

/* A ring in the BAR: the descriptor read is refused (RING_DMA). */
static void test_ring_in_bar(void)
{
	const uint64_t ring = BAR0 + LOOM_CORE_BASE(LOOM_MAX_CORES);

	CHECK(device_up());
	reg_write(core_reg(LOOM_CORE_Q_BASE_LO), (uint32_t)ring);
	reg_write(core_reg(LOOM_CORE_Q_BASE_HI), (uint32_t)(ring >> 32));
	reg_write(core_reg(LOOM_CORE_Q_SIZE), 2);
	reg_write(core_reg(LOOM_CORE_CTRL), LOOM_CTRL_ENABLE);
	reg_write(core_reg(LOOM_CORE_Q_TAIL), 1);
	CHECK(wait_for(LOOM_REG_ERROR_STATUS, LOOM_ERROR_RING_DMA));
	CHECK(!(reg_read(core_reg(LOOM_CORE_CTRL)) & LOOM_CTRL_ENABLE));
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 0);
	qemu_stop();
}

/* ---- atomics --------------------------------------------------------------- */

/*
 * Guest RAM for the atomic jobs: four page tables, then the pages they map
 * at the same address (VA = PA): one command buffer per core, the
 * configuration, the data.  ATOMIC_MMIO_VA maps BAR0's first page.
 */
#define PT_L0		0x200000ULL
#define ATOMIC_CMD(core) (0x300000ULL + 0x800ULL * (core))
#define ATOMIC_CONFIG	0x301000ULL
#define ATOMIC_DATA	0x302000ULL
#define ATOMIC_MMIO_VA	0x303000ULL
#define ATOMIC_RECORD(core) (RECORD + 0x100ULL * (core))

static void mem_write_u64(uint64_t addr, uint64_t v)
{
	cmd("writeq 0x%" PRIx64 " 0x%" PRIx64, addr, v);
}

/* mem_write() of any length, 256 bytes a command. */
static void mem_write_big(uint64_t addr, const void *buf, size_t len)
{
	for (size_t at = 0; at < len; at += 256)
		mem_write(addr + at, (const uint8_t *)buf + at,
			  len - at < 256 ? len - at : 256);
}

/* The four-level tables at PT_L0: the pages above, and the BAR page. */
static void atomic_page_tables(void)
{
	const uint64_t rw = LOOM_PTE_VALID | LOOM_PTE_READ | LOOM_PTE_WRITE;
	uint64_t va;

	for (unsigned l = 0; l < LOOM_PT_LEVELS - 1; l++)
		mem_write_u64(PT_L0 + l * 0x1000 + 8 * LOOM_PT_INDEX(ATOMIC_CMD(0), l),
			      (PT_L0 + (l + 1) * 0x1000) | LOOM_PTE_VALID);
	for (va = ATOMIC_CMD(0); va < ATOMIC_MMIO_VA; va += 0x1000)
		mem_write_u64(PT_L0 + 3 * 0x1000 + 8 * LOOM_PT_INDEX(va, 3), va | rw);
	mem_write_u64(PT_L0 + 3 * 0x1000 + 8 * LOOM_PT_INDEX(ATOMIC_MMIO_VA, 3),
		      BAR0 | rw);
}

/*
 * The default 4x4 fabric: every instance adds coordinate 0 + 1 to the i64
 * at operand 0 (engine tests' configs.h atomic counter, by hand: this test
 * includes the uapi only).  (0,0) ADD imm 1 -> E, (1,0) ATOMIC ADDI -> S,
 * (1,1) SINK; coordinate 0 on the W edge at y = 0, operand 0 on the N
 * edge at x = 1.
 */
static void atomic_config(void)
{
	struct {
		struct loom_fabric_config h;
		struct loom_tile_config t[16];
		struct loom_port_binding p[2];
	} __attribute__((packed)) c;

	memset(&c, 0, sizeof(c));
	c.h = (struct loom_fabric_config){
		.magic = LOOM_CONFIG_MAGIC, .version = LOOM_CONFIG_VERSION,
		.width = 4, .height = 4, .num_ports = 2,
	};
	c.t[0].op = LOOM_OP_ADD;
	c.t[0].flags = LOOM_TILE_IMM_B;
	c.t[0].imm = 1;
	c.t[0].route[LOOM_OUT_PE_A] = LOOM_SRC_W;
	c.t[0].route[LOOM_OUT_E] = LOOM_SRC_PE;
	c.t[1].op = LOOM_OP_ATOMIC;
	c.t[1].imm = LOOM_ATOMIC_ADDI;
	c.t[1].route[LOOM_OUT_PE_A] = LOOM_SRC_N;
	c.t[1].route[LOOM_OUT_PE_B] = LOOM_SRC_W;
	c.t[1].route[LOOM_OUT_S] = LOOM_SRC_PE;
	c.t[5].op = LOOM_OP_SINK;
	c.t[5].route[LOOM_OUT_PE_A] = LOOM_SRC_N;
	c.p[0] = (struct loom_port_binding){ LOOM_DIR_W, 0, LOOM_PORT_COORD, 0 };
	c.p[1] = (struct loom_port_binding){ LOOM_DIR_N, 1, LOOM_PORT_OPERAND, 0 };
	mem_write_big(ATOMIC_CONFIG, &c, sizeof(c));
}

/*
 * Core @core's job: LOAD_CONFIG, SET_OPERANDS(counter VA), a dense
 * dispatch of n instances of which it runs [begin, end), on its own ring.
 */
static void atomic_job(unsigned core, uint64_t counter_va, int64_t n,
		       int64_t begin, int64_t end)
{
	const uint32_t base = LOOM_CORE_BASE(core);
	const uint64_t ring = RING + 0x100 * core;
	uint32_t c[16] = {
		LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4),
		sizeof(struct loom_fabric_config) + 16 * sizeof(struct loom_tile_config) +
		2 * sizeof(struct loom_port_binding),
		(uint32_t)ATOMIC_CONFIG, 0,
		LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 4), 1,
		(uint32_t)counter_va, (uint32_t)(counter_va >> 32),
		LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 8), 1,
		(uint32_t)n, (uint32_t)((uint64_t)n >> 32),
		(uint32_t)begin, (uint32_t)((uint64_t)begin >> 32),
		(uint32_t)end, (uint32_t)((uint64_t)end >> 32),
	};
	struct loom_hw_job job = {
		.cmd_va = ATOMIC_CMD(core), .cmd_size = sizeof(c),
		.pt_root = PT_L0, .seqno = 100 + core,
		.completion = ATOMIC_RECORD(core),
	};

	mem_write(ATOMIC_CMD(core), c, sizeof(c));
	mem_write(ring, &job, sizeof(job));
	reg_write(base + LOOM_CORE_Q_BASE_LO, (uint32_t)ring);
	reg_write(base + LOOM_CORE_Q_BASE_HI, (uint32_t)(ring >> 32));
	reg_write(base + LOOM_CORE_Q_SIZE, 2);
	reg_write(base + LOOM_CORE_CTRL, LOOM_CTRL_ENABLE);
	reg_write(base + LOOM_CORE_Q_TAIL, 1);
}

static uint64_t record_field(unsigned core, size_t offset, bool wide)
{
	return cmd("%s 0x%" PRIx64, wide ? "readq" : "readl",
		   ATOMIC_RECORD(core) + offset);
}

/*
 * Two cores run halves of one launch at once, each instance adding to one
 * counter: n (n + 1) / 2 arrives whole.
 */
static void test_atomic_counter_on_two_cores(void)
{
	const int64_t n = 400000;

	CHECK(device_up());
	CHECK(reg_read(LOOM_REG_CAPS) & LOOM_CAP_ATOMIC);
	CHECK(reg_read(LOOM_REG_NUM_CORES) >= 2);
	atomic_page_tables();
	atomic_config();
	mem_write_u64(ATOMIC_DATA, 5);
	atomic_job(0, ATOMIC_DATA, n, 0, n / 2);
	atomic_job(1, ATOMIC_DATA, n, n / 2, n);
	for (unsigned core = 0; core < 2; core++) {
		for (int i = 0; i < 30 && !(reg_read(LOOM_CORE_BASE(core) +
						  LOOM_CORE_Q_HEAD) & 1); i++)
			wait_for(LOOM_CORE_BASE(core) + LOOM_CORE_Q_HEAD, 1);
		CHECK(reg_read(LOOM_CORE_BASE(core) + LOOM_CORE_Q_HEAD) == 1);
		CHECK(record_field(core, offsetof(struct loom_hw_completion, status),
				   false) == LOOM_STATUS_OK);
	}
	CHECK(cmd("readq 0x%" PRIx64, ATOMIC_DATA) ==
	      5 + (uint64_t)n * (n + 1) / 2);
	qemu_stop();
}

/* A job of one atomic at @va on core 0: its completion's status, detail. */
static void one_atomic(uint64_t va, uint32_t *status, uint32_t *detail,
		       uint64_t *fault_va)
{
	CHECK(device_up());
	atomic_page_tables();
	atomic_config();
	atomic_job(0, va, 1, 0, 1);
	CHECK(wait_for(core_reg(LOOM_CORE_Q_HEAD), 1));
	*status = (uint32_t)record_field(0, offsetof(struct loom_hw_completion,
						     status), false);
	*detail = (uint32_t)record_field(0, offsetof(struct loom_hw_completion,
						     detail), false);
	*fault_va = record_field(0, offsetof(struct loom_hw_completion, fault_va),
				 true);
	qemu_stop();
}

static void test_atomic_faults(void)
{
	uint32_t status, detail;
	uint64_t fault_va;

	/* an 8-byte atomic at an address that is not a multiple of 8 */
	one_atomic(ATOMIC_DATA + 4, &status, &detail, &fault_va);
	CHECK(status == LOOM_STATUS_MMU_FAULT);
	CHECK(detail == LOOM_MMU_FAULT_ALIGN);
	CHECK(fault_va == ATOMIC_DATA + 4);
	/* a page mapped onto the device's own registers: RAM only */
	one_atomic(ATOMIC_MMIO_VA + LOOM_REG_SCRATCH - 4, &status, &detail,
		   &fault_va);
	CHECK(status == LOOM_STATUS_DMA_ERROR);
}

/*
 * poll-us=4000000: after its first job core 0 watches for a doorbell for
 * four seconds instead of sleeping.  A job rung meanwhile runs within one
 * (the polling thread sees the doorbell itself); a core reset
 * meanwhile returns at once (reset waits for nothing the poll holds) and
 * a job after it runs too.
 */
static void test_polling_core_runs_what_it_is_rung_for(void)
{
	struct loom_hw_job job = { .seqno = 21, .completion = RECORD };

	device_opts = ",poll-us=4000000";
	CHECK(device_up());
	submit(RING, &job);
	CHECK(wait_for(core_reg(LOOM_CORE_Q_HEAD), 1));
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 21);
	/* slot 1 of the two-entry ring, rung while the core polls */
	job.seqno = 22;
	mem_write(RING + sizeof(job), &job, sizeof(job));
	reg_write(core_reg(LOOM_CORE_Q_TAIL), 0);
	for (int i = 0; i < 1000 && !hung &&
	     reg_read(core_reg(LOOM_CORE_COMPLETED)) != 22; i++)
		usleep(1000);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 22);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 0);
	/* a reset while it polls, then a job from a fresh ring */
	reg_write(core_reg(LOOM_CORE_RESET), LOOM_RESET_MAGIC);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 0);
	job.seqno = 23;
	submit(RING, &job);
	CHECK(wait_for(core_reg(LOOM_CORE_Q_HEAD), 1));
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 23);
	qemu_stop();
	device_opts = "";
}

/*
 * inline-steps: a doorbell that finds its core idle runs the job on the
 * ringing thread (here qtest's, as a vCPU's in a VM) until it has taken
 * that many steps, then hands it to the core thread.  With a budget larger
 * than the job, the counting job (200000 instances, tens of milliseconds
 * on the core thread) is complete when the Q_TAIL write returns.
 */
static void test_job_within_its_budget_runs_in_the_doorbell(void)
{
	const int64_t n = 200000;

	device_opts = ",inline-steps=100000000";
	CHECK(device_up());
	atomic_page_tables();
	atomic_config();
	mem_write_u64(ATOMIC_DATA, 0);
	atomic_job(0, ATOMIC_DATA, n, 0, n);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 1);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 100);
	CHECK(record_field(0, offsetof(struct loom_hw_completion, status),
			   false) == LOOM_STATUS_OK);
	CHECK(cmd("readq 0x%" PRIx64, ATOMIC_DATA) == (uint64_t)n * (n + 1) / 2);
	qemu_stop();
	device_opts = "";
}

/*
 * With the default budget the same job runs out of steps in its doorbell
 * and the core thread finishes it: the write returns first, the result
 * is whole.  A reset while the core thread has it returns, and the next
 * job, an empty one, runs within its doorbell.
 */
static void test_long_job_is_handed_to_the_core_thread(void)
{
	const int64_t n = 200000;
	struct loom_hw_job job = { .seqno = 31, .completion = RECORD };

	CHECK(device_up());
	atomic_page_tables();
	atomic_config();
	mem_write_u64(ATOMIC_DATA, 0);
	atomic_job(0, ATOMIC_DATA, n, 0, n);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 0);
	for (int i = 0; i < 30 && !(reg_read(core_reg(LOOM_CORE_Q_HEAD)) & 1); i++)
		wait_for(core_reg(LOOM_CORE_Q_HEAD), 1);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 100);
	CHECK(cmd("readq 0x%" PRIx64, ATOMIC_DATA) == (uint64_t)n * (n + 1) / 2);

	/* a longer one from a fresh ring, reset while the core thread runs it */
	reg_write(core_reg(LOOM_CORE_RESET), LOOM_RESET_MAGIC);
	atomic_job(0, ATOMIC_DATA, 100 * n, 0, 100 * n);
	CHECK(reg_read(core_reg(LOOM_CORE_STATUS)) & LOOM_CORE_BUSY);
	reg_write(core_reg(LOOM_CORE_RESET), LOOM_RESET_MAGIC);
	CHECK(!(reg_read(core_reg(LOOM_CORE_STATUS)) & LOOM_CORE_BUSY));
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 0);
	submit(RING, &job);
	CHECK(reg_read(core_reg(LOOM_CORE_Q_HEAD)) == 1);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 31);
	qemu_stop();
}

/*
 * A job run within its doorbell leaves no budget behind: the next job the
 * core thread runs (here one with an injection armed, which never runs in
 * a doorbell) is not paused after the rest of it (it used to be, and QEMU
 * aborted: a coroutine yield outside a coroutine).
 */
static void test_core_thread_job_after_a_doorbell_job(void)
{
	const int64_t n = 200000;
	struct loom_hw_job job = { .seqno = 41, .completion = RECORD };

	CHECK(device_up());
	submit(RING, &job);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 41);
	reg_write(core_reg(LOOM_CORE_RESET), LOOM_RESET_MAGIC);
	atomic_page_tables();
	atomic_config();
	mem_write_u64(ATOMIC_DATA, 0);
	reg_write(core_reg(LOOM_CORE_FAULT_INJECT), LOOM_INJECT_SPURIOUS_IRQ);
	atomic_job(0, ATOMIC_DATA, n, 0, n);
	for (int i = 0; i < 30 && !hung && !(reg_read(core_reg(LOOM_CORE_Q_HEAD)) & 1); i++)
		wait_for(core_reg(LOOM_CORE_Q_HEAD), 1);
	CHECK(!hung);
	CHECK(reg_read(core_reg(LOOM_CORE_COMPLETED)) == 100);
	CHECK(cmd("readq 0x%" PRIx64, ATOMIC_DATA) == (uint64_t)n * (n + 1) / 2);
	qemu_stop();
}

/*
 * Where @event (with @args in its text, if not NULL) is in the trace at
 * or after line @from: its line number, or -1.
 */
static int trace_find(const char *event, const char *args, int from)
{
	FILE *f = fopen(trace_path, "r");
	char line[256], name[64];
	int n = 0, at = -1;

	if (!f)
		return -1;
	/* "loom_x args", or "pid@time:loom_x args" with -msg timestamp=on */
	snprintf(name, sizeof(name), "%s ", event);
	while (at < 0 && fgets(line, sizeof(line), f)) {
		if (n >= from && strstr(line, name) &&
		    (!args || strstr(line, args)))
			at = n;
		n++;
	}
	fclose(f);
	return at;
}

/*
 * A job that faults (as in dump_onto_registers, its dump in RAM), run with
 * -trace 'loom_*': its events appear in the order the device goes through
 * them, and a 2-byte register read (a guest error) has its own event.
 */
static void test_trace_events_in_order(void)
{
	struct loom_hw_job job = {
		.cmd_size = 4,
		.pt_root = RECORD + 0x1000,	/* zeroed RAM: nothing mapped */
		.seqno = 5,
		.completion = RECORD,
	};
	char status[32];
	int fd, at = 0;

	strcpy(trace_path, "/tmp/loom_qtest_trace.XXXXXX");
	fd = mkstemp(trace_path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	CHECK(device_up());
	submit(RING, &job);
	CHECK(wait_for(core_reg(LOOM_CORE_Q_HEAD), 1));
	cmd("readw 0x%" PRIx64, BAR0 + LOOM_REG_SCRATCH);
	/* the interrupt is raised from the main loop, a little later */
	for (int i = 0; i < 2000 && trace_find("loom_irq", NULL, 0) < 0; i++)
		usleep(1000);
	snprintf(status, sizeof(status), "seqno 5 status %u", LOOM_STATUS_MMU_FAULT);
	at = trace_find("loom_doorbell", "core 0 Q_TAIL 1", at);
	CHECK(at >= 0);
	at = trace_find("loom_job_start", "core 0 job seqno 5 slot 0", at);
	CHECK(at >= 0);
	at = trace_find("loom_mmu_fault", "core 0 job seqno 5", at);
	CHECK(at >= 0);
	at = trace_find("loom_job_complete", status, at);
	CHECK(at >= 0);
	at = trace_find("loom_irq", "core 0", at);
	CHECK(at >= 0);
	CHECK(trace_find("loom_err_access", "read of 2 bytes", 0) >= 0);
	qemu_stop();
	if (current_failed)
		printf("#   trace left in %s\n", trace_path);
	else
		unlink(trace_path);
	trace_path[0] = 0;
}

#define RUN(name) do {							\
	current_failed = 0;						\
	test_##name();							\
	if (current_failed)						\
		failed++;						\
	else								\
		passed++;						\
	printf("%s %d - %s\n", current_failed ? "not ok" : "ok",	\
	       passed + failed, #name);					\
	fflush(stdout);							\
} while (0)

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: loom_qtest QEMU_BINARY\n");
		return 2;
	}
	qemu_binary = argv[1];
	signal(SIGPIPE, SIG_IGN);	/* a hung or dead QEMU fails the test */
	RUN(record_onto_queue_registers);
	RUN(record_onto_core_reset);
	RUN(dump_onto_registers);
	RUN(ring_in_bar);
	RUN(trace_events_in_order);
	RUN(polling_core_runs_what_it_is_rung_for);
	RUN(atomic_counter_on_two_cores);
	RUN(atomic_faults);
	RUN(job_within_its_budget_runs_in_the_doorbell);
	RUN(long_job_is_handed_to_the_core_thread);
	RUN(core_thread_job_after_a_doorbell_job);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
