// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compile_bench: loomc's compile time and mapping quality over a set of
 * kernels, on 4x4 and 8x8 fabrics, in one table.
 *
 * For every thread of every kernel file and each fabric size: the time to
 * lower and place and route it (the mean of repeated runs, at least
 * 0.3 s of them or 20), the PEs (MOVs the placer added included), ports
 * and route hops used, the slots per PE (1: spatial), the longest path,
 * the II the schedule claims, the II no mapping on that fabric beats
 * ("min"), and the II loomc reports, which it measures on the engine
 * (place_stats' measured: cycles per instance, or per iteration of the
 * innermost loop; compiler/measure.c).  "ideal/II" is min over that II:
 * the compiled throughput over the ideal one (1.00: the mapping runs at
 * the fabric's bound).  Beside it the cycles per instance of this
 * benchmark's own launch (memrefs point at zeroed memory, scalar
 * arguments are 8, the '?' sizes, offsets and strides of memrefs that
 * loomc adds after them 16, extents 256 for rank 1, 16 x 16 for rank 2, ...;
 * dynamic-work threads run 64 items with payloads 0..63).
 *
 * The RESULT lines (--id ID; ID for 4x4, ID-8x8 for 8x8): the mean of
 * ideal/II over the threads that map (higher is better, goal 0.9), with
 * the threads mapped, the worst thread, and the compile time's mean and
 * maximum.
 *
 *   compile_bench [--id ID] kernel.loom...
 *
 * With --versus, pairs of files instead (bench/views: a thread reading
 * through views, then the same thread indexed by hand): each thread's
 * fabric operations (the lowering's PEs, before placement), measured II
 * and cycles per instance on 8x8, and one RESULT line: the hand-written
 * threads' operations over the views' (1.00: a view costs nothing).
 *
 *   compile_bench --id ID --versus view.loom linear.loom...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric_build.h"
#include "lower.h"
#include "place.h"
#include "verifier.h"

#define REPS		20
#define REPS_US		3e5
#define MEM_BASE	0x100000ULL
#define REGION		0x40000ULL

struct summary;
struct cost;

struct bench {
	const char *file;
	unsigned w, h;
	struct diag *d;
	struct summary *sum;
	struct cost *cost;	/* --versus */
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Lowers and places @f; returns 0 and fills @g and @p, or the errors. */
static unsigned map_thread(struct bench *b, struct ir_func *f,
			   struct graph *g, struct placement *p)
{
	unsigned err;

	graph_init(g);
	err = lower_thread(b->d, f, g);
	if (!err)
		err = place_graph(b->d, f->name_loc, g, b->w, b->h, p);
	return err;
}

/* Runs the configuration; returns measured cycles per instance or item. */
static double measure(struct ir_func *f, const struct placement *p)
{
	struct loom_fabric_params fp = {
		.width = p->width, .height = p->height,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	struct loom_fabric *fab = loom_fabric_create(&fp);
	size_t n = place_config_size(p);
	void *cfg = malloc(n);
	uint64_t ops[LOOM_MAX_OPERANDS];
	int64_t ext[LOOM_MAX_RANK];
	struct loom_hw_counters c = { 0 };
	struct loom_dispatch d = { .operands = ops };
	static struct fake_mem mem;
	struct loom_fabric_env env;
	uint64_t units = 0;
	int st = LOOM_STATUS_OK;

	if (!fab || !cfg)
		abort();
	place_config_write(p, cfg);
	fake_mem_init(&mem, MEM_BASE, REGION * (LOOM_MAX_OPERANDS + 1));
	env = fake_env(&mem);
	if (loom_fabric_configure(fab, cfg, n) != LOOM_CONFIG_OK)
		st = -1;
	for (int k = 0; k < f->num_inputs; k++)
		ops[k] = ir_type_arg_type(f->body.args[k].type) >= LOOM_ARG_MEMREF_I32 ?
			 MEM_BASE + REGION * k : 8;
	for (int k = 0; k < f->num_size_operands; k++)
		ops[f->num_inputs + k] = 16;
	d.num_operands = f->num_inputs + f->num_size_operands;
	d.rank = f->dom_kind == LOOM_DOMAIN_DENSE ? f->num_ivs : 0;
	for (unsigned k = 0; k < d.rank; k++)
		ext[k] = d.rank == 1 ? 256 : d.rank == 2 ? 16 : 4;
	d.extents = ext;
	if (f->dom_kind == LOOM_DOMAIN_DENSE) {
		if (!st)
			st = loom_fabric_run(fab, &d, &env, &c);
		units = c.instances;
	} else {
		d.items = true;
		d.count = 1;
		mem.npayloads = 1;
		for (uint64_t i = 0; !st && i < 64; i++) {
			mem.payloads = &i;
			mem.nspawn = 0;
			st = loom_fabric_run(fab, &d, &env, &c);
		}
		units = c.items;
	}
	fake_mem_free(&mem);
	free(cfg);
	loom_fabric_destroy(fab);
	if (st || !units)
		return -1;
	return (double)c.cycles / units;
}

/* Per fabric size, for the summary line: mapped threads and their sums. */
static struct summary {
	unsigned threads, mapped, rated;
	double us, quality, max_us, worst;
	char worst_name[64], slowest_name[64];
} summary[2];

static void bench_thread(struct bench *b, struct ir_func *f)
{
	struct placement *p = malloc(sizeof(*p));
	const char *base = strrchr(b->file, '/');
	struct summary *sum = b->sum;
	char name[64];
	struct graph g;
	double t0, us, meas, ideal;
	unsigned err = 0;
	int reps = 0;

	if (!p)
		abort();
	snprintf(name, sizeof(name), "%s@%s", base ? base + 1 : b->file, f->name);
	t0 = now_us();
	do {
		if (reps)
			graph_free(&g);
		err = map_thread(b, f, &g, p);
		reps++;
	} while (!err && reps < REPS && now_us() - t0 < REPS_US);
	us = (now_us() - t0) / reps;
	sum->threads++;
	printf("%-16s %-12s %3ux%-3u ", base ? base + 1 : b->file, f->name,
	       b->w, b->h);
	if (err) {
		printf("%9s  does not fit or route\n", "-");
		graph_free(&g);
		free(p);
		return;
	}
	meas = measure(f, p);
	sum->mapped++;
	sum->us += us;
	if (us > sum->max_us) {
		sum->max_us = us;
		snprintf(sum->slowest_name, sizeof(sum->slowest_name), "%s", name);
	}
	printf("%9.1f %4d %5d %5d %5d %8d %6d%-5s %5d ", us, p->stats.pes,
	       p->stats.ports, p->stats.hops, p->stats.slots,
	       p->stats.longest_cycles, p->stats.cycles_per_instance,
	       p->stats.loops ? "/iter" : "", p->stats.ii_bound);
	if (p->stats.measured > 0) {
		ideal = p->stats.ii_bound / p->stats.measured;
		printf("%7.2f%-5s %9.2f", p->stats.measured,
		       p->stats.measured_per_iteration ? "/iter" : "", ideal);
		sum->rated++;
		sum->quality += ideal;
		if (sum->rated == 1 || ideal < sum->worst) {
			sum->worst = ideal;
			snprintf(sum->worst_name, sizeof(sum->worst_name), "%s", name);
		}
	} else {
		printf("%12s %9s", "-", "-");
	}
	if (meas < 0)
		printf(" %9s\n", "failed");
	else
		printf(" %9.2f\n", meas);
	graph_free(&g);
	free(p);
}

static void each_unit(struct ir_module *m, void *arg)
{
	for (struct ir_func *f = m->funcs; f; f = f->next)
		if (f->is_thread)
			bench_thread(arg, f);
}

/* A file's first thread, lowered and mapped on 8x8, for --versus. */
struct cost {
	int ops;		/* PEs of the lowering's graph */
	double ii, cycles;	/* measured II, cycles per instance */
};

static void cost_unit(struct ir_module *m, void *arg)
{
	struct bench *b = arg;
	struct cost *c = b->cost;
	struct ir_func *f = m->funcs;
	struct placement *p;
	struct graph g;

	while (f && !f->is_thread)
		f = f->next;
	if (!f || c->ops >= 0)
		return;
	p = malloc(sizeof(*p));
	if (!p)
		abort();
	if (!map_thread(b, f, &g, p)) {
		c->ops = 0;
		for (int i = 0; i < g.num; i++)
			c->ops += g.nodes[i].kind == G_PE;
		c->ii = p->stats.measured;
		c->cycles = measure(f, p);
	}
	graph_free(&g);
	free(p);
}

static int cost_of(const char *file, struct cost *c)
{
	struct bench b = { file, 8, 8, NULL, NULL, c };
	struct loom_source src;
	struct diag d;

	c->ops = -1;
	if (loom_source_read(&src, file)) {
		perror(file);
		return -1;
	}
	diag_init(&d, &src, NULL, false);
	b.d = &d;
	verify_source(&d, cost_unit, &b);
	diag_free(&d);
	loom_source_free(&src);
	return c->ops < 0 ? -1 : 0;
}

/* --versus: what reading through views costs against indexing by hand. */
static int versus(const char *id, int argc, char **argv)
{
	int view_ops = 0, linear_ops = 0;
	char detail[512] = "";
	size_t len = 0;

	if (argc % 2) {
		fprintf(stderr, "compile_bench: --versus takes pairs of files\n");
		return 2;
	}
	printf("%-26s %5s %8s %9s   %-26s %5s %8s %9s\n", "views", "ops",
	       "II(cyc)", "run(cyc)", "by hand", "ops", "II(cyc)", "run(cyc)");
	for (int i = 0; i < argc; i += 2) {
		struct cost v, l;

		if (cost_of(argv[i], &v) || cost_of(argv[i + 1], &l)) {
			fprintf(stderr, "compile_bench: %s or %s does not map on 8x8\n",
				argv[i], argv[i + 1]);
			return 1;
		}
		printf("%-26s %5d %8.2f %9.2f   %-26s %5d %8.2f %9.2f\n",
		       argv[i], v.ops, v.ii, v.cycles, argv[i + 1], l.ops, l.ii,
		       l.cycles);
		view_ops += v.ops;
		linear_ops += l.ops;
		if (len < sizeof(detail))
			len += snprintf(detail + len, sizeof(detail) - len,
					"%s%s %d vs %d ops, II %.2f vs %.2f",
					i ? "; " : "", strrchr(argv[i], '/') ?
					strrchr(argv[i], '/') + 1 : argv[i],
					v.ops, l.ops, v.ii, l.ii);
	}
	printf("RESULT\t%s\t%.3f\tfabric operations by hand / through views, 8x8"
	       "\t%s\thigher\t1.0\n", id, (double)linear_ops / view_ops, detail);
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned sizes[][2] = { { 4, 4 }, { 8, 8 } };
	const char *id = "P6";
	int first = 1;

	if (argc > 2 && !strcmp(argv[1], "--id")) {
		id = argv[2];
		first = 3;
	}
	if (argc > first && !strcmp(argv[first], "--versus"))
		return versus(id, argc - first - 1, argv + first + 1);
	if (argc <= first) {
		fprintf(stderr, "usage: compile_bench [--id ID] kernel.loom...\n");
		return 2;
	}
	printf("%-16s %-12s %-7s %9s %4s %5s %5s %5s %8s %11s %5s %12s %9s %9s\n",
	       "kernel", "thread", "fabric", "map(us)", "PEs", "ports",
	       "hops", "slots", "longest", "sched(cyc)", "min", "II(cyc)",
	       "ideal/II", "run(cyc)");
	for (size_t s = 0; s < 2; s++)
		for (int i = first; i < argc; i++) {
			struct bench b = { argv[i], sizes[s][0], sizes[s][1], NULL,
					   &summary[s], NULL };
			struct loom_source src;
			struct diag d;

			if (loom_source_read(&src, argv[i])) {
				perror(argv[i]);
				return 1;
			}
			diag_init(&d, &src, NULL, false);
			b.d = &d;
			verify_source(&d, each_unit, &b);
			diag_free(&d);
			loom_source_free(&src);
		}
	for (size_t s = 0; s < 2; s++) {
		const struct summary *m = &summary[s];

		if (!m->rated)
			continue;
		printf("RESULT\t%s%s\t%.3f\tcompiled / ideal throughput, %ux%u "
		       "(fabric bound / measured II, mean)\t%u of %u threads mapped; "
		       "worst %s %.2f; compile %.0f ms mean, %.0f ms at most (%s)"
		       "\thigher\t0.9\n",
		       id, s ? "-8x8" : "", m->quality / m->rated, sizes[s][0],
		       sizes[s][1], m->mapped, m->threads, m->worst_name, m->worst,
		       m->us / m->mapped / 1e3, m->max_us / 1e3, m->slowest_name);
	}
	return 0;
}
