// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fabric_bench: how fast the engine simulates the fabric.
 *
 * Runs the hand-built vector-add job (qemu-device/engine/tests/configs.h)
 * through the command processor, MMU and fabric on the host, and prints
 * fabric cycles per second, PE firings per second and the time per firing,
 * and a RESULT line for bench/run: cycles/s over issue 3's target of 1M
 * (higher is better, goal 50: issue 36).
 * With --cycles-only it runs once and prints the cycle count, for
 * `valgrind --tool=callgrind` to divide instructions by (bench/run-fabric).
 *
 * Usage: fabric_bench [--n N] [--fabric WxH] [--cycles-only]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "configs.h"
#include "fake_bus.h"

#define CMD_VA		0x10000ULL
#define CONFIG_VA	0x20000ULL
#define A_VA		0x1000000ULL

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void put32(struct fake_bus *bus, uint64_t *va, uint32_t v)
{
	fake_bus_poke(bus, *va, &v, 4);
	*va += 4;
}

static void put64(struct fake_bus *bus, uint64_t *va, uint64_t v)
{
	fake_bus_poke(bus, *va, &v, 8);
	*va += 8;
}

/* Writes the vector-add command buffer; returns its size. */
static uint32_t build_job(struct fake_bus *bus, int64_t n, unsigned w, unsigned h)
{
	static uint8_t image[LOOM_CONFIG_SIZE(256, LOOM_MAX_PORTS)];
	size_t size = loom_test_config_vector_add(image, sizeof(image), w, h);
	uint64_t b_va = A_VA + 8 * n, c_va = A_VA + 16 * n;
	uint64_t va = CMD_VA;

	fake_bus_poke(bus, CONFIG_VA, image, size);
	put32(bus, &va, LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	put32(bus, &va, (uint32_t)size);
	put64(bus, &va, CONFIG_VA);
	put32(bus, &va, LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 8));
	put32(bus, &va, 3);
	put64(bus, &va, A_VA);
	put64(bus, &va, b_va);
	put64(bus, &va, c_va);
	put32(bus, &va, LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 4));
	put32(bus, &va, 1);
	put64(bus, &va, (uint64_t)n);
	return (uint32_t)(va - CMD_VA);
}

int main(int argc, char **argv)
{
	int64_t n = 100000;
	unsigned w = 4, h = 4, reps = 5;
	int cycles_only = 0;
	struct fake_bus bus;
	struct loom_core core = { 0 };
	struct loom_hw_completion done;
	struct loom_hw_job job = { .cmd_va = CMD_VA, .seqno = 1 };
	double best = 1e30;
	size_t dump_len;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--fabric") && i + 1 < argc)
			sscanf(argv[++i], "%ux%u", &w, &h);
		else if (!strcmp(argv[i], "--cycles-only"))
			cycles_only = 1;
		else {
			fprintf(stderr, "usage: %s [--n N] [--fabric WxH] [--cycles-only]\n", argv[0]);
			return 2;
		}
	}

	fake_bus_init(&bus, 64ULL << 20);
	fake_bus_map(&bus, CMD_VA, 4096, LOOM_PTE_READ);
	fake_bus_map(&bus, CONFIG_VA, 16384, LOOM_PTE_READ);
	fake_bus_map(&bus, A_VA, 24 * n, LOOM_PTE_READ | LOOM_PTE_WRITE);
	core.fabric = loom_fabric_create(&(struct loom_fabric_params){
		.width = w, .height = h,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	});
	core.bus = &bus.bus;
	if (!core.fabric) {
		fprintf(stderr, "fabric_bench: cannot create a %ux%u fabric\n", w, h);
		return 1;
	}
	job.pt_root = bus.pt_root;
	job.cmd_size = build_job(&bus, n, w, h);

	for (unsigned r = 0; r < (cycles_only ? 1 : reps); r++) {
		double t = now();

		loom_core_run_job(&core, &job, &done, NULL, 0, &dump_len);
		t = now() - t;
		if (done.status != LOOM_STATUS_OK) {
			fprintf(stderr, "fabric_bench: job failed with status %u\n", done.status);
			return 1;
		}
		if (t < best)
			best = t;
	}
	if (cycles_only) {
		printf("%llu\n", (unsigned long long)done.counters.cycles);
		return 0;
	}
	printf("fabric %ux%u, vector add n=%lld: %llu cycles, %llu firings (best of %u)\n",
	       w, h, (long long)n, (unsigned long long)done.counters.cycles,
	       (unsigned long long)done.counters.firings, reps);
	printf("cycles/s        %.3g\n", done.counters.cycles / best);
	printf("firings/s       %.3g\n", done.counters.firings / best);
	printf("ns per firing   %.1f\n", best * 1e9 / done.counters.firings);
	printf("vs 1M cycles/s  %.2fx\n", done.counters.cycles / best / 1e6);
	printf("RESULT\tP5\t%.3f\tfabric simulator cycles/s / 1M target "
	       "(%ux%u vector add)\t%.3g cycles/s, %.3g PE firings/s, "
	       "best of %u\thigher\t50\n",
	       done.counters.cycles / best / 1e6, w, h,
	       done.counters.cycles / best, done.counters.firings / best, reps);
	loom_fabric_destroy(core.fabric);
	fake_bus_fini(&bus);
	return 0;
}
