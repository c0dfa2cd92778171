// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the device's command processor and fabric (the engine
 * QEMU runs) on arbitrary command buffers.  The input is the job's command
 * buffer, mapped read-only at CMD_VA; a vector-add configuration sits at
 * CONFIG_VA, zeroed read-write data at DATA_VA, so packets can name real
 * memory as well as unmapped memory.  A LOAD_CONFIG may point into the
 * input itself, which fuzzes the configuration decoder too.  Whatever the
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
#define DATA_VA		0x300000ULL
#define DATA_SIZE	(64 << 10)
#define RUN_LIMIT_MS	200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fake_bus bus;
static struct loom_core core;
static atomic_llong run_started_ns;	/* 0: no job running */

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
	static const struct loom_fabric_params params = {
		.width = 4, .height = 4,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	static uint8_t config[16384];
	size_t config_size;
	pthread_t t;

	fake_bus_init(&bus, 4 << 20);
	fake_bus_map(&bus, CMD_VA, CMD_MAX, LOOM_PTE_READ);
	fake_bus_map(&bus, CONFIG_VA, sizeof(config), LOOM_PTE_READ);
	fake_bus_map(&bus, DATA_VA, DATA_SIZE, LOOM_PTE_READ | LOOM_PTE_WRITE);
	config_size = loom_test_config_vector_add(config, sizeof(config), 4, 4);
	fake_bus_poke(&bus, CONFIG_VA, config, config_size);
	core.fabric = loom_fabric_create(&params);
	core.bus = &bus.bus;
	pthread_create(&t, NULL, watchdog, NULL);
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
