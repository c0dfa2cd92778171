/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine_run.h: compile a source string and run its threads on the host
 * engine through loom_core_run_job: a fake bus with real page tables, the
 * image's template copied into a command buffer and its patches filled
 * the way a loader does.  Host functions run in format/'s interpreter with
 * the engine as its backend.
 */
#ifndef LOOMC_TESTS_ENGINE_RUN_H
#define LOOMC_TESTS_ENGINE_RUN_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../qemu-device/engine/tests/fake_bus.h"
#include "compile.h"
#include "lower.h"

#define ER_CMD_VA	0x10000ULL	/* ER_MAX_CORES pages: one per core */
#define ER_MAX_CORES	4
#define ER_CONFIG_VA	0x20000ULL
#define ER_DATA_VA	0x100000ULL
#define ER_DATA_SIZE	(1ULL << 20)

/**
 * struct er - one compiled source and one core to run it on
 * @img: the image bytes
 * @size: its size
 * @view: the validated image
 * @bus: host memory with page tables
 * @core: the core
 * @done: the last job's completion
 * @errors: compile errors
 */
struct er {
	void *img;
	size_t size;
	struct loom_image_view view;
	struct fake_bus bus;
	struct loom_core core;
	struct loom_hw_completion done;
	unsigned errors;
};

/*
 * Compiles @text for a @w x @h fabric and sets up a core of that size;
 * the diagnostics go to @diag (stderr for er_open()), so a caller can
 * tell why a thread was refused.
 */
static inline int er_open_diag(struct er *e, const char *text, unsigned w,
			       unsigned h, FILE *diag)
{
	struct compile_options o = { .width = w, .height = h };
	struct loom_fabric_params p = {
		.width = w, .height = h,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	struct image_builder b;
	struct loom_source src;
	struct diag d;
	char err[160];

	memset(e, 0, sizeof(*e));
	if (loom_source_from_memory(&src, "test.loom", text, strlen(text)))
		abort();
	diag_init(&d, &src, diag, false);
	image_init(&b, w, h);
	e->errors = compile_source(&d, &o, &b);
	if (!e->errors)
		image_write(&b, &e->img, &e->size);
	image_free(&b);
	diag_free(&d);
	loom_source_free(&src);
	if (e->errors || loom_view_open(&e->view, e->img, e->size, err, sizeof(err)) ||
	    (e->view.sec[LOOM_SEC_HOST] &&
	     loom_view_check_host(&e->view, err, sizeof(err))))
		return -1;
	fake_bus_init(&e->bus, 8 << 20);
	fake_bus_map(&e->bus, ER_CMD_VA, 4096 * ER_MAX_CORES, LOOM_PTE_READ);
	fake_bus_map(&e->bus, ER_CONFIG_VA, 131072, LOOM_PTE_READ);
	fake_bus_map(&e->bus, ER_DATA_VA, ER_DATA_SIZE,
		     LOOM_PTE_READ | LOOM_PTE_WRITE);
	e->core.fabric = loom_fabric_create(&p);
	e->core.bus = &e->bus.bus;
	return e->core.fabric ? 0 : -1;
}

/* Compiles @text for a @w x @h fabric and sets up a core of that size. */
static inline int er_open(struct er *e, const char *text, unsigned w,
			  unsigned h)
{
	return er_open_diag(e, text, w, h, stderr);
}

static inline void er_close(struct er *e)
{
	if (e->core.fabric)
		loom_fabric_destroy(e->core.fabric);
	if (e->bus.mem)
		fake_bus_fini(&e->bus);
	free(e->img);
}

/* The image's thread called @name, or -1. */
static inline int er_thread(struct er *e, const char *name)
{
	return loom_view_find_thread(&e->view, name);
}

/*
 * Thread @name's command buffer for a launch, as a loader fills it, into
 * @cmd (room for 4096 bytes); its configuration copied to ER_CONFIG_VA.
 * Returns its size, or 0.
 */
static inline size_t er_fill(struct er *e, const char *name,
			     const uint64_t *args, const int64_t *extents,
			     uint32_t count, uint64_t payload_va,
			     uint64_t result_va, uint8_t *cmd)
{
	int i = er_thread(e, name);
	struct loom_image_thread t;
	struct loom_image_patch patches[64];

	if (i < 0)
		return 0;
	t = loom_view_thread(&e->view, i);
	if (t.template_size > 4096 - 16)
		return 0;
	memcpy(cmd, e->view.sec[LOOM_SEC_TEMPLATES] + t.template_offset,
	       t.template_size);
	fake_bus_poke(&e->bus, ER_CONFIG_VA,
		      e->view.sec[LOOM_SEC_CONFIGS] + t.config_offset, t.config_size);
	if (t.num_patches > sizeof(patches) / sizeof(patches[0]))
		return -1;
	for (unsigned k = 0; k < t.num_patches; k++)
		patches[k] = loom_view_patch(&e->view, t.patch_first + k);
	loom_template_fill(cmd, &t, patches, &(struct loom_template_values){
		.config_va = ER_CONFIG_VA, .operands = args, .extents = extents,
		.items = count, .payload_va = payload_va, .result_va = result_va,
	});
	return t.template_size;
}

/*
 * Launches thread @name: @args are the launch operands, @extents the
 * dense extents; for dynamic work @count payloads at @payload_va, results
 * at @result_va.  Returns the job's status (e->done has the rest).
 */
static inline int er_launch(struct er *e, const char *name,
			    const uint64_t *args, const int64_t *extents,
			    uint32_t count, uint64_t payload_va,
			    uint64_t result_va)
{
	uint8_t cmd[4096];
	struct loom_hw_job job = { 0 };
	size_t dump_len, size;

	size = er_fill(e, name, args, extents, count, payload_va, result_va,
		       cmd);
	if (!size)
		return -1;
	fake_bus_poke(&e->bus, ER_CMD_VA, cmd, size);
	job.cmd_va = ER_CMD_VA;
	job.cmd_size = size;
	job.pt_root = e->bus.pt_root;
	job.seqno = 1;
	loom_core_run_job(&e->core, &job, &e->done, NULL, 0, &dump_len);
	return (int)e->done.status;
}

/*
 * Makes the DISPATCH_DENSE of the @size bytes of @cmd a block packet of
 * [@begin, @end), as libloom's spread launches do.  The new size, or 0.
 */
static inline size_t er_block(uint8_t *cmd, size_t size, int64_t begin,
			      int64_t end)
{
	for (size_t at = 0; at + 4 <= size;) {
		uint32_t h, dw;

		memcpy(&h, cmd + at, 4);
		dw = LOOM_PKT_DWORDS(h);
		if (!dw || at + dw * 4 > size)
			return 0;
		if (LOOM_PKT_OPCODE(h) == LOOM_PKT_DISPATCH_DENSE) {
			memmove(cmd + at + dw * 4 + 16, cmd + at + dw * 4,
				size - at - dw * 4);
			memcpy(cmd + at + dw * 4, &begin, 8);
			memcpy(cmd + at + dw * 4 + 8, &end, 8);
			h = LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, dw + 4);
			memcpy(cmd + at, &h, 4);
			return size + 16;
		}
		at += dw * 4;
	}
	return 0;
}

struct er_core {
	struct loom_core core;
	struct loom_hw_job job;
	struct loom_hw_completion done;
};

static inline void *er_core_run(void *arg)
{
	struct er_core *c = arg;
	size_t dump_len;

	loom_core_run_job(&c->core, &c->job, &c->done, NULL, 0, &dump_len);
	return NULL;
}

/*
 * Launches dense thread @name split over @cores cores (1..ER_MAX_CORES),
 * each with a fabric of its own and a thread of its own, all at once on
 * one memory, the way libloom's loom_launch_spread() splits a launch over
 * a device's cores: core p runs the instances whose coordinate 0 is in
 * [floor(p e0 / cores), floor((p + 1) e0 / cores)).  Returns the first
 * failing core's status, or LOOM_STATUS_OK.
 */
static inline int er_launch_split(struct er *e, const char *name,
				  const uint64_t *args, const int64_t *extents,
				  unsigned cores)
{
	struct loom_fabric_params p = {
		.width = e->view.info.fabric_width,
		.height = e->view.info.fabric_height,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	struct er_core c[ER_MAX_CORES];
	pthread_t th[ER_MAX_CORES];
	int status = LOOM_STATUS_OK;

	if (cores < 1 || cores > ER_MAX_CORES)
		return -1;
	for (unsigned k = 0; k < cores; k++) {
		uint8_t cmd[4096];
		size_t size = er_fill(e, name, args, extents, 0, 0, 0, cmd);

		size = size ? er_block(cmd, size, k * extents[0] / cores,
				       (k + 1) * extents[0] / cores) : 0;
		if (!size)
			return -1;
		fake_bus_poke(&e->bus, ER_CMD_VA + 4096 * k, cmd, size);
		memset(&c[k], 0, sizeof(c[k]));
		c[k].core.index = k;
		c[k].core.bus = &e->bus.bus;
		c[k].core.fabric = loom_fabric_create(&p);
		c[k].job = (struct loom_hw_job){
			.cmd_va = ER_CMD_VA + 4096 * k, .cmd_size = size,
			.pt_root = e->bus.pt_root, .seqno = k + 1,
		};
		if (!c[k].core.fabric)
			abort();
	}
	for (unsigned k = 0; k < cores; k++)
		if (pthread_create(&th[k], NULL, er_core_run, &c[k]))
			abort();
	for (unsigned k = 0; k < cores; k++) {
		pthread_join(th[k], NULL);
		if (status == LOOM_STATUS_OK)
			status = (int)c[k].done.status;
		loom_fabric_destroy(c[k].core.fabric);
	}
	return status;
}

static inline void er_poke64(struct er *e, uint64_t va, const int64_t *v,
			     size_t n)
{
	fake_bus_poke(&e->bus, va, v, n * 8);
}

static inline void er_peek64(struct er *e, uint64_t va, int64_t *v, size_t n)
{
	fake_bus_peek(&e->bus, va, v, n * 8);
}

/*
 * The file @rel (a path from the repository root, found through this
 * header's own path) as a NUL-terminated string to free, or NULL.
 */
static inline char *er_read_file(const char *rel)
{
	char path[512];
	const char *slash = strrchr(__FILE__, '/');
	struct loom_source src;
	char *text;

	snprintf(path, sizeof(path), "%.*s../../%s",
		 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__, rel);
	if (loom_source_read(&src, path)) {
		printf("#   cannot read %s: run the test from the repository root\n",
		       path);
		return NULL;
	}
	text = malloc(src.len + 1);
	if (text) {
		memcpy(text, src.text, src.len);
		text[src.len] = 0;
	}
	loom_source_free(&src);
	return text;
}

/* ------------------------------------------------------ host programs --- */

/*
 * The engine backend of format/'s interpreter: ALLOC takes zeroed device
 * memory from the top of the data area, launches run synchronously in
 * program order (which honours every wait() token), a dynamic-work launch
 * runs its items breadth first until no child is left, a failed
 * loom.check is counted and reported, and the run goes on.
 */
#define ER_HEAP_VA	(ER_DATA_VA + ER_DATA_SIZE / 2)
#define ER_ITEMS_VA	(ER_DATA_VA + ER_DATA_SIZE / 4)
#define ER_RESULTS_VA	(ER_DATA_VA + ER_DATA_SIZE / 4 + 0x10000)
#define ER_BATCH	256

struct er_host {
	struct er *e;
	uint64_t heap;
	int failed_checks;
};

/* What libloom admits as a payload: an i32 item travels sign-extended. */
static inline bool er_payload_fits(const struct loom_interp_launch *l,
				   uint64_t payload)
{
	return l->desc.arg_types[l->desc.work_item_arg] != LOOM_ARG_I32 ||
	       (uint64_t)(int64_t)(int32_t)(uint32_t)payload == payload;
}

static inline int er_items(struct er *e, const struct loom_interp_launch *l)
{
	uint64_t rec = LOOM_ITEM_RESULT_SIZE(l->desc.child_capacity);
	uint64_t *q = malloc(8 * 65536);
	unsigned n = 1, done = 0;

	if (!q || rec * ER_BATCH > ER_DATA_SIZE / 4 - 0x10000) {
		free(q);
		return -1;
	}
	q[0] = l->args[l->desc.work_item_arg];
	if (!er_payload_fits(l, q[0])) {
		free(q);
		return -1;
	}
	while (done < n) {
		unsigned batch = n - done < ER_BATCH ? n - done : ER_BATCH;

		fake_bus_poke(&e->bus, ER_ITEMS_VA, q + done, 8 * batch);
		if (er_launch(e, l->name, l->args, NULL, batch, ER_ITEMS_VA,
			      ER_RESULTS_VA) != LOOM_STATUS_OK)
			break;
		for (unsigned i = 0; i < batch; i++) {
			uint64_t at = ER_RESULTS_VA + i * rec;
			uint32_t count;

			fake_bus_peek(&e->bus, at, &count, 4);
			if (n + count > 65536)
				goto out;
			fake_bus_peek(&e->bus, at + 8, q + n, 8 * count);
			for (uint32_t c = 0; c < count; c++)
				if (!er_payload_fits(l, q[n + c]))
					goto out;
			n += count;
		}
		done += batch;
	}
out:
	free(q);
	return done == n ? 0 : -1;
}

static inline int er_host_launch(void *ctx, const struct loom_interp_launch *l)
{
	struct er *e = ((struct er_host *)ctx)->e;

	if (l->desc.domain == LOOM_DOMAIN_DYNAMIC_WORK)
		return er_items(e, l);
	return er_launch(e, l->name, l->args, l->extents, 0, 0, 0) ==
	       LOOM_STATUS_OK ? 0 : -1;
}

static inline int er_host_alloc(void *ctx, uint64_t n, unsigned size,
				uint64_t *va)
{
	struct er_host *h = ctx;
	uint64_t bytes = (n * size + 7) & ~7ULL;

	if (h->heap + bytes > ER_DATA_VA + ER_DATA_SIZE)
		return -1;
	*va = h->heap;
	h->heap += bytes;
	return 0;
}

static inline int er_host_load(void *ctx, uint64_t va, unsigned size,
			       uint64_t *v)
{
	fake_bus_peek(&((struct er_host *)ctx)->e->bus, va, v, size);
	return 0;
}

static inline int er_host_store(void *ctx, uint64_t va, unsigned size,
				uint64_t v)
{
	fake_bus_poke(&((struct er_host *)ctx)->e->bus, va, &v, size);
	return 0;
}

static inline int er_host_wait(void *ctx, uint64_t token)
{
	(void)ctx;
	(void)token;	/* every launch has finished already */
	return 0;
}

static inline int er_host_check_failed(void *ctx, int64_t lhs, int64_t rhs)
{
	printf("#   loom.check: %lld != %lld\n", (long long)lhs, (long long)rhs);
	((struct er_host *)ctx)->failed_checks++;
	return 0;
}

/*
 * Runs host function @name of the image the way a loader would.  Returns
 * the number of failed loom.check, or -1 when something went wrong (a job
 * failed, out of memory, a missing function).
 */
static inline int er_run_host(struct er *e, const char *name)
{
	static const struct loom_interp_backend engine_backend = {
		.alloc = er_host_alloc, .load = er_host_load,
		.store = er_host_store, .launch = er_host_launch,
		.wait = er_host_wait, .check_failed = er_host_check_failed,
	};
	struct er_host h = { .e = e, .heap = ER_HEAP_VA };
	int func = loom_view_find_host_func(&e->view, name);

	if (func < 0 || loom_interp_run(&e->view, func, &engine_backend, &h, NULL))
		return -1;
	return h.failed_checks;
}

/*
 * Compiles @text for a 4x4 fabric and runs its @main: er_run_host()'s
 * count of failed loom.checks, or -1 (also when @text does not compile).
 */
static inline int er_host_main(const char *text)
{
	struct er e;
	int r;

	if (er_open(&e, text, 4, 4))
		return -1;
	r = er_run_host(&e, "main");
	er_close(&e);
	return r;
}

/*
 * er_host_main() of @text with @want written in place of its first
 * "WANT": a test passes the right value and a wrong one, to show its
 * loom.check checks.
 */
static inline int er_host_main_want(const char *text, long want)
{
	const char *mark = strstr(text, "WANT");
	size_t size = strlen(text) + 32;
	char *own = malloc(size);
	int r;

	if (!mark || !own) {
		free(own);
		return -1;
	}
	snprintf(own, size, "%.*s%ld%s", (int)(mark - text), text, want, mark + 4);
	r = er_host_main(own);
	free(own);
	return r;
}

#endif /* LOOMC_TESTS_ENGINE_RUN_H */
