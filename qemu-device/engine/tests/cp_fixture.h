/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cp_fixture.h: the command processor's host-test fixture, shared by
 * cp_test.c and cp_work_test.c: a fake bus with a command, a configuration,
 * a data and a read-only window mapped, and one core on a 4x4 fabric.
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
}

static inline void cp_fixture_fini(void)
{
	loom_fabric_destroy(core.fabric);
	fake_bus_fini(&bus);
}

#endif /* LOOM_CP_FIXTURE_H */
