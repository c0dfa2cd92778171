// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine_diff_test: the fabric engine (qemu-device/engine/fabric.c) against
 * its reference copy (qemu-device/engine/tests/fabric_ref_impl.h) on every
 * configuration loomc makes of the corpus: compiler/tests/corpus/valid,
 * corpus/fuzz and examples/, each compiled for a 4x4 and an 8x8 fabric,
 * and bench/polybench for a 4x4 one.  Every thread's launch template is filled the way a
 * loader does (memref arguments point into fabric_diff.h's memory, scalars
 * are small) and its SET_OPERANDS and dispatch packets are run on both
 * engines with two sets of parameters (the device's defaults, and FIFOs of
 * 2, one memory port and a LOAD latency of 1).  Everything fabric_diff.h
 * compares must be equal: status, counters, progress, the dump, slot
 * firings, memory and the sequence of loads, stores and spawns.
 *
 * It lives with the compiler's tests because it needs loomc; the engine's
 * own differential test on random configurations is
 * qemu-device/engine/tests/fabric_diff_test.c.
 */
#include <dirent.h>

#include "check.h"
#include "engine_run.h"
#include "../../qemu-device/engine/tests/fabric_diff.h"

static uint8_t mem[FD_MEM_SIZE];
static unsigned nthreads, nok, nfail, nrefused, nnewer;
static uint64_t total_cycles;

/* A launch argument of type @type, the @k-th. */
static uint64_t arg_value(unsigned type, unsigned k)
{
	switch (type) {
	case LOOM_ARG_MEMREF_I32:
	case LOOM_ARG_MEMREF_I64:
	case LOOM_ARG_MEMREF_F32:
		return FD_MEM_VA + (k % 8) * (FD_MEM_SIZE / 8);
	case LOOM_ARG_F32:
		return 0x3fc00000;	/* 1.5f */
	}
	return 3 + k % 5;
}

/*
 * The dispatch of a filled template: its last SET_OPERANDS and its first
 * dispatch packet.  False when it has none the fabric runs directly.
 */
static bool parse_template(const uint8_t *cmd, size_t size, uint64_t *ops,
			   unsigned *nops, int64_t *ext, struct loom_dispatch *d)
{
	size_t off = 0;

	memset(d, 0, sizeof(*d));
	*nops = 0;
	while (off + 4 <= size) {
		uint32_t h, n, dw;

		memcpy(&h, cmd + off, 4);
		dw = LOOM_PKT_DWORDS(h);
		if (!dw || off + 4 * (size_t)dw > size)
			return false;
		switch (LOOM_PKT_OPCODE(h)) {
		case LOOM_PKT_SET_OPERANDS:
			memcpy(&n, cmd + off + 4, 4);
			if (n > LOOM_MAX_OPERANDS)
				return false;
			memcpy(ops, cmd + off + 8, 8 * (size_t)n);
			*nops = n;
			break;
		case LOOM_PKT_DISPATCH_DENSE:
			memcpy(&n, cmd + off + 4, 4);
			if (n > LOOM_MAX_RANK)
				return false;
			memcpy(ext, cmd + off + 8, 8 * (size_t)n);
			d->rank = n;
			d->extents = ext;
			return true;
		case LOOM_PKT_DISPATCH_ITEMS:
			memcpy(&n, cmd + off + 4, 4);
			d->items = true;
			d->count = n;
			return true;
		case LOOM_PKT_RUN_WORK:
			d->items = true;
			d->count = 24;
			return true;
		}
		off += 4 * (size_t)dw;
	}
	return false;
}

/*
 * Does configuration image @cfg use an operation the reference predates?
 * It is the engine before device ABI 0.7: no LOOM_OP_ATOMIC
 * (atomics_engine_test checks those threads against C instead), and no
 * links of channels (LOOM_CONFIG_VERSION_CHANNELS, 0.8).
 */
static bool newer_than_reference(const uint8_t *cfg, size_t size)
{
	struct loom_fabric_config h;
	struct loom_tile_config t;
	size_t n;

	memcpy(&h, cfg, sizeof(h));
	if (h.version == LOOM_CONFIG_VERSION_CHANNELS)
		return true;	/* ABI 0.8: polybench_test checks them */
	n = (size_t)h.width * h.height * LOOM_CONFIG_SLOTS(h.version, h.slots);
	for (size_t k = 0; k < n && sizeof(h) + (k + 1) * sizeof(t) <= size; k++) {
		memcpy(&t, cfg + sizeof(h) + k * sizeof(t), sizeof(t));
		if (t.op == LOOM_OP_ATOMIC)
			return true;
	}
	return false;
}

/* Every thread of @text compiled for @w x @h, on both engines. */
static void run_program(const char *name, const char *text, unsigned w,
			unsigned h)
{
	static const struct loom_fabric_params variant[2] = {
		{ .fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		  .mem_ports = LOOM_DEFAULT_MEM_PORTS,
		  .load_latency = LOOM_DEFAULT_LOAD_LATENCY },
		{ .fifo_depth = 2, .mem_ports = 1, .load_latency = 1 },
	};
	FILE *devnull = fopen("/dev/null", "w");
	struct er e;

	if (!devnull || er_open_diag(&e, text, w, h, devnull)) {
		nrefused++;
		if (devnull)
			fclose(devnull);
		er_close(&e);
		return;
	}
	fclose(devnull);
	for (unsigned i = 0; i < e.view.info.num_threads; i++) {
		struct loom_image_thread t = loom_view_thread(&e.view, i);
		struct loom_image_patch patches[64];
		uint64_t args[LOOM_IMAGE_MAX_ARGS], ops[LOOM_MAX_OPERANDS];
		int64_t extents[LOOM_MAX_RANK] = { 37, 5, 3, 2 }, ext[LOOM_MAX_RANK];
		static uint8_t cmd[65536];
		struct fd_case c = { .runs = 2, .mem = mem };
		unsigned nops;

		if (t.template_size > sizeof(cmd) || t.num_patches > 64)
			continue;
		for (unsigned k = 0; k < t.num_args && k < LOOM_IMAGE_MAX_ARGS; k++)
			args[k] = arg_value(t.arg_types[k], k);
		memcpy(cmd, e.view.sec[LOOM_SEC_TEMPLATES] + t.template_offset,
		       t.template_size);
		for (unsigned k = 0; k < t.num_patches; k++)
			patches[k] = loom_view_patch(&e.view, t.patch_first + k);
		loom_template_fill(cmd, &t, patches, &(struct loom_template_values){
			.config_va = ER_CONFIG_VA, .operands = args,
			.extents = extents, .items = 24,
			.payload_va = FD_MEM_VA, .result_va = FD_MEM_VA + FD_MEM_SIZE / 2,
		});
		if (!parse_template(cmd, t.template_size, ops, &nops, ext, &c.d))
			continue;
		c.d.operands = ops;
		c.d.num_operands = nops;
		c.image = e.view.sec[LOOM_SEC_CONFIGS] + t.config_offset;
		c.size = t.config_size;
		if (newer_than_reference(c.image, c.size)) {
			nnewer++;
			continue;
		}
		for (unsigned v = 0; v < 2; v++) {
			const char *diff;
			uint64_t cycles;
			int status;

			c.p = variant[v];
			c.p.width = w;
			c.p.height = h;
			diff = fd_compare(&c, &status, &cycles);
			nthreads++;
			total_cycles += cycles;
			if (status == LOOM_STATUS_OK)
				nok++;
			if (diff) {
				nfail++;
				printf("#   %s %ux%u thread %u, parameters %u: %s differs\n",
				       name, w, h, i, v, diff);
			}
		}
	}
	er_close(&e);
}

/*
 * Every .loom file of directory @dir (from the repository root), for a 4x4
 * fabric and, with @big, an 8x8 one.
 */
static void run_dir(const char *dir, bool big)
{
	char path[512];
	const char *slash = strrchr(__FILE__, '/');
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%.*s../../%s",
		 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__, dir);
	d = opendir(path);
	if (!d) {
		printf("#   cannot open %s\n", path);
		nfail++;
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char rel[256];
		char *text;

		if (len < 6 || len > 200 || strcmp(de->d_name + len - 5, ".loom"))
			continue;
		snprintf(rel, sizeof(rel), "%.40s/%.200s", dir, de->d_name);
		text = er_read_file(rel);
		if (!text) {
			nfail++;
			continue;
		}
		run_program(rel, text, 4, 4);
		if (big)
			run_program(rel, text, 8, 8);
		free(text);
	}
	closedir(d);
}

TEST(corpus)
{
	/* small numbers: indices and counts that stay inside the memory */
	for (unsigned i = 0; i < FD_MEM_SIZE; i += 8) {
		uint64_t v = (i / 8) % 7;

		memcpy(mem + i, &v, 8);
	}
	run_dir("compiler/tests/corpus/valid", true);
	run_dir("compiler/tests/corpus/fuzz", true);
	run_dir("examples", true);
	/* 8x8 place and route of these takes most of a minute: 4x4 only */
	run_dir("bench/polybench", false);
	printf("# %u thread runs (%u completed, %llu cycles), %u compiles refused, %u threads newer than the reference\n",
	       nthreads, nok, (unsigned long long)total_cycles, nrefused,
	       nnewer);
	CHECK_EQ(0, nfail);
	/* the corpus was found and most of it runs to completion */
	CHECK(nthreads >= 100);
	CHECK(nok >= nthreads / 4);
}

int main(void)
{
	RUN(corpus);
	return checks_done();
}
