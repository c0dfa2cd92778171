// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the device's command processor and fabric (the engine
 * QEMU runs) on arbitrary command buffers, on every fabric geometry the
 * device accepts.  The input is the job's command buffer (its size rounded
 * down to a multiple of 4), mapped read-only at CMD_VA; the 0-3 bytes past
 * it choose the core's fabric: width and height, 1 to LOOM_FABRIC_MAX_DIM
 * (as the QEMU property allows; 4 when absent, the default), and the slots
 * per PE of the configuration at EVERY_PORT_VA (4 to LOOM_PE_SLOTS,
 * LOOM_PE_SLOTS when absent).  A vector-add configuration for the fabric
 * sits at CONFIG_VA (fabrics of at least 4x4), one binding every edge link
 * to a port (LOOM_MAX_PORTS of them on 16x16) at EVERY_PORT_VA, zeroed
 * read-write data at DATA_VA, so packets can name real memory as well as
 * unmapped memory.  A LOAD_CONFIG may point into the input itself, which
 * fuzzes the configuration decoder too.  Whatever the
 * bytes, the job must end with a status and a completion record, within
 * bounds (ASan and UBSan watch).  A job that runs on, as a fuzzed dispatch
 * with a huge extent may, is stopped after RUN_LIMIT_MS the way the device's
 * STOP does it; the driver's hang check plays that part on real systems.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "fake_bus.h"
#include "configs.h"

#define CMD_VA		0x100000ULL
#define CMD_MAX		4096
#define CONFIG_VA	0x200000ULL
#define CONFIG_SIZE	(16 << 10)
#define EVERY_PORT_VA	0x280000ULL
/* The largest image: LOOM_PE_SLOTS per PE of the largest fabric, every port. */
#define EVERY_PORT_SIZE	LOOM_CONFIG_SIZE(LOOM_FABRIC_MAX_DIM * \
					 LOOM_FABRIC_MAX_DIM * LOOM_PE_SLOTS, \
					 LOOM_MAX_PORTS)
#define DATA_VA		0x300000ULL
#define DATA_SIZE	(64 << 10)
#define RUN_LIMIT_MS	200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fake_bus bus;
static struct loom_core core;
static atomic_llong run_started_ns;	/* 0: no job running */
/* One fabric per size, made when first used. */
static struct loom_fabric *fabrics[LOOM_FABRIC_MAX_DIM][LOOM_FABRIC_MAX_DIM];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *watchdog(void *arg)
{
	const struct timespec tick = { 0, 10 * 1000000 };

	(void)arg;
	for (;;) {
		long long started = atomic_load(&run_started_ns);

		if (started && now_ns() - started > RUN_LIMIT_MS * 1000000LL)
			__atomic_store_n(&core.stop, 1, __ATOMIC_RELAXED);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

static void setup(void)
{
	pthread_t t;

	fake_bus_init(&bus, 4 << 20);
	fake_bus_map(&bus, CMD_VA, CMD_MAX, LOOM_PTE_READ);
	fake_bus_map(&bus, CONFIG_VA, CONFIG_SIZE, LOOM_PTE_READ);
	fake_bus_map(&bus, EVERY_PORT_VA, EVERY_PORT_SIZE, LOOM_PTE_READ);
	fake_bus_map(&bus, DATA_VA, DATA_SIZE, LOOM_PTE_READ | LOOM_PTE_WRITE);
	core.bus = &bus.bus;
	pthread_create(&t, NULL, watchdog, NULL);
}

/* A tail byte, or @absent when the input has none there. */
static unsigned tail(const uint8_t *data, size_t size, unsigned i,
		     unsigned absent)
{
	size_t at = (size & ~(size_t)3) + i;

	return at < size ? data[at] : absent;
}

/*
 * Gives the core the fabric the input's tail asks for and puts its two
 * configurations in memory (rebuilt only when the geometry changes).
 */
static void set_geometry(const uint8_t *data, size_t size)
{
	static const struct loom_fabric_params defaults = {
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	static uint8_t config[EVERY_PORT_SIZE];
	static unsigned last_w, last_h, last_slots;
	unsigned w = 1 + tail(data, size, 0, 3) % LOOM_FABRIC_MAX_DIM;
	unsigned h = 1 + tail(data, size, 1, 3) % LOOM_FABRIC_MAX_DIM;
	unsigned slots = 4 + tail(data, size, 2, LOOM_PE_SLOTS - 4) %
			     (LOOM_PE_SLOTS - 3);
	struct loom_fabric_params p = defaults;
	size_t n;

	if (!fabrics[w - 1][h - 1]) {
		p.width = w;
		p.height = h;
		fabrics[w - 1][h - 1] = loom_fabric_create(&p);
		if (!fabrics[w - 1][h - 1])
			__builtin_trap();
	}
	core.fabric = fabrics[w - 1][h - 1];
	if (w == last_w && h == last_h && slots == last_slots)
		return;
	memset(config, 0, sizeof(config));
	loom_test_config_vector_add(config, CONFIG_SIZE, w, h);
	fake_bus_poke(&bus, CONFIG_VA, config, CONFIG_SIZE);
	n = loom_test_config_every_port(config, sizeof(config), w, h, slots);
	if (!n)
		__builtin_trap();
	fake_bus_poke(&bus, EVERY_PORT_VA, config, sizeof(config));
	last_w = w;
	last_h = h;
	last_slots = slots;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t zeros[DATA_SIZE], cmd[CMD_MAX], dump[LOOM_DUMP_MAX_SIZE];
	static int ready;
	struct loom_hw_completion done;
	struct loom_hw_job job = { 0 };
	size_t dump_len = 0;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size > CMD_MAX)
		size = CMD_MAX;
	set_geometry(data, size);
	memset(cmd, 0, sizeof(cmd));
	memcpy(cmd, data, size);
	fake_bus_poke(&bus, CMD_VA, cmd, sizeof(cmd));
	fake_bus_poke(&bus, DATA_VA, zeros, sizeof(zeros));
	job.cmd_va = CMD_VA;
	job.cmd_size = size & ~3u;
	job.pt_root = bus.pt_root;
	job.seqno = 1;
	memset(&done, 0xa5, sizeof(done));
	core.stop = 0;
	atomic_store(&run_started_ns, now_ns());
	loom_core_run_job(&core, &job, &done, dump, sizeof(dump), &dump_len);
	atomic_store(&run_started_ns, 0);
	/* the record is the job's, and a dump never outgrows its buffer */
	if (done.seqno != 1 || dump_len > sizeof(dump))
		__builtin_trap();
	return 0;
}
