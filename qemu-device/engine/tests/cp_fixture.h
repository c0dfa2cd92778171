/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cp_fixture.h: the command processor's host-test fixture, shared by
 * cp_test.c and cp_work_test.c: a fake bus with a command, a configuration,
 * a data and a read-only window mapped, one core on a 4x4 fabric, and a
 * command buffer to build and run as a job.
 */
#ifndef LOOM_CP_FIXTURE_H
#define LOOM_CP_FIXTURE_H

#include <string.h>

#include "fake_bus.h"

#define CMD_VA		0x10000ULL
#define CONFIG_VA	0x20000ULL
#define DATA_VA		0x100000ULL
#define RO_VA		0x400000ULL
#define CMD_MAX		4096

static struct fake_bus bus;
static struct loom_core core;
static uint32_t cmd[CMD_MAX / 4];
static unsigned cmd_len;	/* dwords */
static uint8_t dump[LOOM_DUMP_MAX_SIZE];
static size_t dump_len;

/* Maps the windows and makes the core; cp_fixture_fini() undoes both. */
static inline void cp_fixture_init(void)
{
	static const struct loom_fabric_params params = {
		.width = 4, .height = 4,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};

	fake_bus_init(&bus, 16 << 20);
	fake_bus_map(&bus, CMD_VA, CMD_MAX, LOOM_PTE_READ);
	fake_bus_map(&bus, CONFIG_VA, 16384, LOOM_PTE_READ);
	fake_bus_map(&bus, DATA_VA, 1 << 20, LOOM_PTE_READ | LOOM_PTE_WRITE);
	fake_bus_map(&bus, RO_VA, LOOM_PAGE_SIZE, LOOM_PTE_READ);
	memset(&core, 0, sizeof(core));
	core.fabric = loom_fabric_create(&params);
	core.bus = &bus.bus;
	cmd_len = 0;
}

static inline void cp_fixture_fini(void)
{
	loom_fabric_destroy(core.fabric);
	fake_bus_fini(&bus);
}

static inline void emit32(uint32_t v)
{
	cmd[cmd_len++] = v;
}

static inline void emit64(uint64_t v)
{
	emit32((uint32_t)v);
	emit32((uint32_t)(v >> 32));
}

/* The descriptor of the command built so far, copied to CMD_VA. */
static inline struct loom_hw_job job_for_cmd(void)
{
	struct loom_hw_job job = {
		.cmd_va = CMD_VA,
		.cmd_size = cmd_len * 4,
		.pt_root = bus.pt_root,
		.seqno = 42,
	};

	fake_bus_poke(&bus, CMD_VA, cmd, cmd_len * 4);
	return job;
}

static inline struct loom_hw_completion run_job(const struct loom_hw_job *job)
{
	struct loom_hw_completion done;

	loom_core_run_job(&core, job, &done, dump, sizeof(dump), &dump_len);
	return done;
}

/* Runs the command built so far as one job. */
static inline struct loom_hw_completion run(void)
{
	struct loom_hw_job job = job_for_cmd();

	return run_job(&job);
}

#endif /* LOOM_CP_FIXTURE_H */
