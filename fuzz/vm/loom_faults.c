// SPDX-License-Identifier: GPL-2.0
/*
 * loom_faults: a fault campaign under load, in the test VM.
 *
 *   loom_faults [--faults N] [--seed N]
 *
 * Four load processes run for the whole campaign, two per device when
 * there are two: one submits dense counter jobs on every queue of its
 * device (each job increments a counter of its own and logs the value it
 * saw), one runs dynamic work through libloom (a 300-node tree traversed
 * on the device, every node checked).  Meanwhile the injector, through the
 * device's BAR, makes one core at a time misbehave in one of the device's
 * ways (LOOM_INJECT_*: hang, DMA error, MMU fault, corrupt dump, missing
 * completion, wrong seqno, bogus head, spurious interrupt, lost doorbell),
 * waits until the core consumed it, then measures recovery: a probe job of
 * its own on that core must complete correctly.
 *
 * For every fault kind it reports: injected, detected (the guilty job's
 * submitter got the kind's errno, or, for faults that fail no job, the
 * driver's debugfs counter for it moved), recovered (the probe ran), and
 * the recovery time from the injection to the probe's completion
 * (median, 90th percentile, maximum).  Over the whole campaign: jobs lost
 * (accepted and never completed, or reported done without their effect),
 * jobs duplicated (a counter past 1, a tree node visited twice) and
 * innocent jobs failed (a failure no injection explains).  These three
 * must be 0; the kernel must not WARN or oops (loom-vm fails the run).
 *
 * A load process the driver bans (its jobs hung DRM_LOOM_MAX_HANGS times)
 * checks its accepted jobs, exits, and a new one takes its place.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "loom/loom.h"
#include "loom_format.h"
#include "image_util.h"
#include "vm_client.h"

#define MAX_EVENTS	(1 << 16)
#define N_LOAD		4
#define DENSE_BATCH	16
#define DENSE_DEADLINE	(200 * 1000 * 1000ULL)
#define WAIT_MS		60000
#define DETECT_S	15.0
#define EXIT_BANNED	3
#define TREE_NODES	300
#define TREE_FANOUT	6
#define KINDS		(LOOM_INJECT_MAX + 1)

/* A failed load job as its submitter saw it. */
struct event {
	uint8_t dev, core, claimed;
	int32_t error;
	double t;
};

#define MAX_PER_KIND	4096

struct kind_stats {
	unsigned injected, unconsumed, detected, recovered;
	unsigned n;
	double ms[MAX_PER_KIND];	/* recovery times */
};

struct shared {
	struct kind_stats ks[KINDS];
	uint64_t nevents;
	struct event ev[MAX_EVENTS];
	volatile int stop;
	uint64_t dense_jobs, dyn_runs, dyn_jobs;
	uint64_t lost, duplicated, bans;
	uint64_t findings;
};

static struct shared *sh;
static struct loom_node nodes[LOOM_MAX_NODES];
static int num_nodes;
static unsigned num_cores[LOOM_MAX_NODES];

#define finding(...) do {						\
	fprintf(stderr, "loom_faults: FINDING: " __VA_ARGS__);		\
	__atomic_add_fetch(&sh->findings, 1, __ATOMIC_RELAXED);		\
} while (0)

/* Failures only: successes explain nothing and would fill the log. */
static void event(unsigned dev, unsigned core, int error)
{
	uint64_t i;

	if (!error)
		return;
	i = __atomic_fetch_add(&sh->nevents, 1, __ATOMIC_RELAXED);

	if (i < MAX_EVENTS) {
		sh->ev[i] = (struct event){ dev, core, 0, error, now_s() };
		/* the injector reads t last: write it, then publish */
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
}

/* ---- dense load --------------------------------------------------------------- */

/*
 * Batches of independent counter jobs on random queues: job k bumps its
 * own counter and logs what it saw.  Done with 0: counter 1, log 0.
 * Failed: the counter is 0 or (when the device ran it and then lied) 1.
 */
static int dense_load(unsigned dev, uint64_t seed)
{
	struct rng r = { seed };
	struct vm_client c;
	int banned = 0;

	if (vm_client_open(&c, nodes[dev].path))
		return 1;
	while (!sh->stop && !banned) {
		uint64_t *slot = (uint64_t *)((char *)c.data.map + 32768);
		uint32_t sync[DENSE_BATCH];
		uint64_t id[DENSE_BATCH];
		unsigned queue[DENSE_BATCH], n = 0;

		memset(slot, 0, 16 * DENSE_BATCH);
		for (unsigned k = 0; k < DENSE_BATCH; k++) {
			uint64_t va = c.data.va + 32768 + 16 * k;
			uint32_t size = vm_counter_cmd(&c, k, va, va + 8);
			int err;

			queue[k] = below(&r, num_cores[dev]);
			drmSyncobjCreate(c.fd, 0, &sync[k]);
			err = vm_submit(&c, queue[k], k, size, sync[k], DENSE_DEADLINE, &id[k]);
			if (err) {
				drmSyncobjDestroy(c.fd, sync[k]);
				if (err == -ECANCELED)
					banned = 1;
				else
					finding("dense: SUBMIT refused: %s\n", strerror(-err));
				break;
			}
			n++;
		}
		for (unsigned k = 0; k < n; k++) {
			int err;

			if (loom_syncobj_wait(c.fd, sync[k], WAIT_MS)) {
				finding("dense: job %llu lost: no completion in %d ms\n",
					(unsigned long long)id[k], WAIT_MS);
				__atomic_add_fetch(&sh->lost, 1, __ATOMIC_RELAXED);
				continue;
			}
			err = vm_job_error(&c, id[k]);
			event(dev, queue[k], err);
			if (slot[2 * k] > 1) {
				finding("dense: job ran %llu times (error %d)\n",
					(unsigned long long)slot[2 * k], err);
				__atomic_add_fetch(&sh->duplicated, 1, __ATOMIC_RELAXED);
			} else if (!err && (slot[2 * k] != 1 || slot[2 * k + 1])) {
				finding("dense: job done without its effect\n");
				__atomic_add_fetch(&sh->lost, 1, __ATOMIC_RELAXED);
			}
			drmSyncobjDestroy(c.fd, sync[k]);
		}
		__atomic_add_fetch(&sh->dense_jobs, n, __ATOMIC_RELAXED);
	}
	vm_client_close(&c);
	return banned ? EXIT_BANNED : 0;
}

/* ---- dynamic load (libloom) ------------------------------------------------------ */

static int64_t first_child[TREE_NODES], child_count[TREE_NODES];

static void gen_tree(void)
{
	loom_test_tree_gen(first_child, child_count, TREE_NODES, TREE_FANOUT, 4242);
}

struct visits {
	pthread_mutex_t lock;
	unsigned count[TREE_NODES];
	unsigned dev;
	unsigned cancelled;	/* CQEs with -ECANCELED, and their queues */
	unsigned cancelled_queue[TREE_NODES];
};

static void observe_item(void *ctx, const struct loom_sched_item *item,
			 const uint64_t *children, size_t count)
{
	struct visits *v = ctx;

	(void)children;
	(void)count;
	pthread_mutex_lock(&v->lock);
	if (item->payload < TREE_NODES)
		v->count[item->payload]++;
	pthread_mutex_unlock(&v->lock);
}

/*
 * A job's CQE says -ECANCELED both when the job was cancelled and when its
 * SUBMIT was refused because this process is banned; those wait until
 * the run is over and tell which.
 */
static void observe_job(void *ctx, const struct loom_job_record *job)
{
	struct visits *v = ctx;

	if (job->error == -ECANCELED) {
		pthread_mutex_lock(&v->lock);
		v->cancelled_queue[v->cancelled++ % TREE_NODES] = job->queue;
		pthread_mutex_unlock(&v->lock);
	} else {
		event(v->dev, job->queue, job->error);
	}
	__atomic_add_fetch(&sh->dyn_jobs, 1, __ATOMIC_RELAXED);
}

/* Whether the driver refuses this process's SUBMITs (a ban), raw. */
static int process_banned(unsigned dev)
{
	struct vm_client c;
	int err;

	if (vm_client_open(&c, nodes[dev].path))
		return 0;
	err = vm_submit(&c, 0, 0, vm_vadd_cmd(&c, 0, 1), 0, 0, NULL);
	vm_client_close(&c);
	return err == -ECANCELED;
}

static struct loom_image *tree_image(const struct loom_device_info *info)
{
	static unsigned char cfg[16384];
	static const enum loom_arg_type sig[2] = { LOOM_ARG_MEMREF_I64, LOOM_ARG_I64 };
	struct loom_image_builder *b;
	size_t n = loom_test_config_tree_spawner(cfg, sizeof(cfg), info->fabric_width,
						 info->fabric_height);

	if (!n || loom_builder_new(info->fabric_width, info->fabric_height, &b))
		return NULL;
	return loom_test_load_built(b, !loom_builder_add_dynamic(b, "tree", sig, 2, 1,
								  TREE_FANOUT, cfg, n));
}

static int dynamic_load(unsigned dev)
{
	struct loom_device *d;
	struct loom_bo *table;
	struct loom_image *img;
	struct loom_arg args[2];
	static struct visits v;
	int64_t *t;
	int banned = 0;

	gen_tree();
	if (loom_device_open_nth(dev, &d) ||
	    loom_bo_alloc(d, TREE_NODES * 16, LOOM_BO_DEVICE_READ_ONLY, &table))
		return 1;
	t = loom_bo_map(table);
	for (int n = 0; n < TREE_NODES; n++)
		t[2 * n] = first_child[n], t[2 * n + 1] = child_count[n];
	args[0] = (struct loom_arg){ LOOM_ARG_MEMREF_I64, loom_bo_va(table) };
	args[1] = (struct loom_arg){ LOOM_ARG_I64, 0 };
	img = tree_image(loom_device_info(d));
	if (!img)
		return 1;
	while (!sh->stop && !banned) {
		struct loom_device *devs[1] = { d };
		struct loom_work_device_config c = {
			.root_payload = 0, .image = img, .thread = "tree",
			.args = args, .n_args = 2, .devices = devs, .n_devices = 1,
			.sched.workers = 2, .sched.deque_capacity = TREE_NODES, .sched.max_batch = 8,
			.sched.flags = LOOM_SCHED_NO_TRACE,
			.observe = observe_item, .observe_ctx = &v,
			.observe_job = observe_job, .observe_job_ctx = &v,
		};
		struct loom_work_device_result r;
		enum loom_error err;

		memset(v.count, 0, sizeof(v.count));
		pthread_mutex_init(&v.lock, NULL);
		v.dev = dev;
		v.cancelled = 0;
		err = loom_work_device_run(&c, &r);
		for (int n = 0; n < TREE_NODES; n++) {
			if (v.count[n] > 1) {
				finding("dynamic: node %d visited %u times\n", n, v.count[n]);
				__atomic_add_fetch(&sh->duplicated, 1, __ATOMIC_RELAXED);
			} else if (err == LOOM_OK && !v.count[n]) {
				finding("dynamic: node %d never visited in a run that succeeded\n", n);
				__atomic_add_fetch(&sh->lost, 1, __ATOMIC_RELAXED);
			}
		}
		if (v.cancelled && process_banned(dev))
			banned = 1;	/* refused at SUBMIT */
		else
			for (unsigned i = 0; i < v.cancelled && i < TREE_NODES; i++)
				event(dev, v.cancelled_queue[i], -ECANCELED);
		if (err && err != LOOM_WORK_DEVICE_ERROR)
			finding("dynamic: run failed: %s\n", loom_strerror(err));
		loom_work_device_result_free(&r);
		__atomic_add_fetch(&sh->dyn_runs, 1, __ATOMIC_RELAXED);
	}
	loom_image_free(img);
	loom_bo_free(table);
	loom_device_close(d);
	return banned ? EXIT_BANNED : 0;
}

/* ---- the injector -------------------------------------------------------------------- */

static const char *const kind_name[KINDS] = {
	[LOOM_INJECT_HANG] = "hang",
	[LOOM_INJECT_DMA_ERROR] = "DMA error",
	[LOOM_INJECT_MMU_FAULT] = "MMU fault",
	[LOOM_INJECT_CORRUPT_DUMP] = "corrupt dump",
	[LOOM_INJECT_SKIP_COMPLETION] = "no completion record",
	[LOOM_INJECT_WRONG_SEQNO] = "wrong seqno",
	[LOOM_INJECT_BOGUS_HEAD] = "bogus queue head",
	[LOOM_INJECT_SPURIOUS_IRQ] = "spurious interrupt",
	[LOOM_INJECT_LOST_DOORBELL] = "lost doorbell",
};

/* The errno the guilty job gets, or 0 for kinds that fail no job. */
static const int kind_errno[KINDS] = {
	[LOOM_INJECT_HANG] = -ETIMEDOUT,
	[LOOM_INJECT_DMA_ERROR] = -EIO,
	[LOOM_INJECT_MMU_FAULT] = -EFAULT,
	[LOOM_INJECT_CORRUPT_DUMP] = -EIO,
	[LOOM_INJECT_SKIP_COMPLETION] = -EPROTO,
	[LOOM_INJECT_WRONG_SEQNO] = -EPROTO,
};

/* For the rest: the debugfs counter that moves when the driver notices. */
static const char *const kind_counter[KINDS] = {
	[LOOM_INJECT_BOGUS_HEAD] = "refused from the device: ",
	[LOOM_INJECT_SPURIOUS_IRQ] = "interrupts with nothing to reap: ",
	[LOOM_INJECT_LOST_DOORBELL] = "doorbells rung again: ",
};

/* An unclaimed failure of (dev, core) with @error since @t0: claim it. */
static int claim(unsigned dev, unsigned core, int error, double t0)
{
	uint64_t n = __atomic_load_n(&sh->nevents, __ATOMIC_ACQUIRE);

	if (n > MAX_EVENTS)
		n = MAX_EVENTS;
	for (uint64_t i = n; i-- > 0;) {
		struct event *e = &sh->ev[i];

		if (e->t < t0 - 1.0)
			break;
		if (!e->claimed && e->dev == dev && e->core == core && e->error == error) {
			e->claimed = 1;
			return 1;
		}
	}
	return 0;
}

/* A vector add on (dev, core) from the injector's own file: recovered? */
static int probe(struct vm_client *c, unsigned core)
{
	int64_t *a = c->data.map, *b = a + 1024, *out = a + 2048;
	uint32_t sync;
	uint64_t id;
	int ok = 1;

	for (int i = 0; i < 16; i++)
		a[i] = i, b[i] = 7 * i, out[i] = -1;
	drmSyncobjCreate(c->fd, 0, &sync);
	if (vm_submit(c, core, 0, vm_vadd_cmd(c, 0, 16), sync, 0, &id) ||
	    loom_syncobj_wait(c->fd, sync, WAIT_MS) || vm_job_error(c, id))
		ok = 0;
	for (int i = 0; ok && i < 16; i++)
		ok = out[i] == 8 * i;
	drmSyncobjDestroy(c->fd, sync);
	return ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @p quantile of @k's recovery times (sorted), in ms. */
static double pct(const struct kind_stats *k, double p)
{
	if (!k->n)
		return NAN;
	return k->ms[(size_t)fmin(k->n - 1, floor(p * k->n))];
}

static int inject_campaign(unsigned faults, uint64_t seed)
{
	volatile uint32_t *bar[LOOM_MAX_NODES];
	struct vm_client probes[LOOM_MAX_NODES];
	struct rng r = { seed ^ 0xfa017 };
	double start = now_s();

	for (int d = 0; d < num_nodes; d++) {
		bar[d] = loom_map_bar0_prot(&nodes[d], PROT_READ | PROT_WRITE);
		if (!bar[d] || vm_client_open(&probes[d], nodes[d].path))
			return 1;
	}
	for (unsigned i = 0; i < faults; i++) {
		unsigned kind = 1 + i % LOOM_INJECT_MAX;
		unsigned dev = below(&r, num_nodes), core = below(&r, num_cores[dev]);
		volatile uint32_t *reg = &bar[dev][(LOOM_CORE_BASE(core) + LOOM_CORE_FAULT_INJECT) / 4];
		struct kind_stats *k = &sh->ks[kind];
		long long before = kind_counter[kind] ?
			loom_core_stat(&nodes[dev], core, kind_counter[kind]) : 0;
		double t0 = now_s(), t1, t2, t_probe, deadline;
		int detected = 0;

		*reg = kind;
		/* the load keeps every queue busy: the next job comes soon */
		while (*reg != LOOM_INJECT_NONE && now_s() < t0 + 5)
			usleep(1000);
		if (*reg != LOOM_INJECT_NONE) {
			*reg = LOOM_INJECT_MAX + 1;	/* clears it */
			k->unconsumed++;
			continue;
		}
		k->injected++;
		t1 = now_s();
		if (probe(&probes[dev], core)) {
			k->recovered++;
			k->ms[k->n++] = (now_s() - t0) * 1000;
		} else {
			finding("%s on device %d core %u: the probe job after it failed\n",
				kind_name[kind], dev, core);
		}
		t_probe = now_s();
		/* counters move within a hang check; a submitter may take longer */
		deadline = now_s() + (kind_errno[kind] ? DETECT_S : 1.0);
		while (!detected && now_s() < deadline) {
			if (kind_errno[kind])
				detected = claim(dev, core, kind_errno[kind], t0);
			else
				detected = loom_core_stat(&nodes[dev], core, kind_counter[kind]) > before;
			if (!detected)
				usleep(5000);
		}
		/* later doorbells can announce a "lost" job first: nothing to see */
		if (detected)
			k->detected++;
		t2 = now_s();
		if (t2 - t0 > 10)
			printf("loom_faults: fault %u (%s, device %d core %u) took %.1f s: consumed after %.1f s, "
			       "probe %.1f s, detection %.1f s\n", i, kind_name[kind], dev, core, t2 - t0,
			       t1 - t0, t_probe - t1, t2 - t_probe);
		if ((i + 1) % 100 == 0)
			printf("loom_faults: %u faults injected, %.0f s\n", i + 1, t2 - start);
		fflush(stdout);
	}
	for (int d = 0; d < num_nodes; d++)
		vm_client_close(&probes[d]);
	return 0;
}

/* ---- main ------------------------------------------------------------------------------ */

static pid_t spawn_load(int slot, uint64_t seed)
{
	pid_t pid = fork();

	if (pid == 0) {
		unsigned dev = (slot / 2) % num_nodes;

		_exit(slot % 2 ? dynamic_load(dev) : dense_load(dev, seed));
	}
	return pid;
}

static uint64_t innocent_failures(void)
{
	uint64_t n = sh->nevents < MAX_EVENTS ? sh->nevents : MAX_EVENTS, bad = 0;

	if (sh->nevents > MAX_EVENTS)
		finding("%llu failures, more than the log holds\n",
			(unsigned long long)sh->nevents);

	for (uint64_t i = 0; i < n; i++) {
		if (sh->ev[i].error && !sh->ev[i].claimed) {
			if (bad < 5)
				fprintf(stderr, "loom_faults: device %u core %u: a job failed with %d (%s), no fault explains it\n",
					sh->ev[i].dev, sh->ev[i].core, sh->ev[i].error,
					strerror(-sh->ev[i].error));
			bad++;
		}
	}
	return bad;
}

static void report(unsigned faults, double seconds, unsigned *pass, unsigned *fail)
{
	unsigned injected = 0, detected = 0, recovered = 0, unconsumed = 0;
	uint64_t innocent = innocent_failures();
	int ok;

	printf("loom_faults: %-22s %8s %8s %9s  %s\n", "fault", "injected", "detected",
	       "recovered", "recovery ms: p50 p90 p99 max");
	for (int k = 1; k < KINDS; k++) {
		struct kind_stats *s = &sh->ks[k];

		qsort(s->ms, s->n, sizeof(double), cmp_double);
		printf("loom_faults: %-22s %8u %8u %9u  %.1f %.1f %.1f %.1f\n", kind_name[k],
		       s->injected, s->detected, s->recovered, pct(s, 0.5), pct(s, 0.9),
		       pct(s, 0.99), s->n ? s->ms[s->n - 1] : NAN);
		injected += s->injected;
		detected += s->detected;
		recovered += s->recovered;
		unconsumed += s->unconsumed;
	}
	printf("loom_faults: %u faults injected in %.0f s (%u not consumed within 5 s and cleared), "
	       "%u detected, %u recovered\n", injected, seconds, unconsumed, detected, recovered);
	printf("loom_faults: load: %llu dense jobs, %llu dynamic runs (%llu jobs), %llu processes banned and replaced\n",
	       (unsigned long long)sh->dense_jobs, (unsigned long long)sh->dyn_runs,
	       (unsigned long long)sh->dyn_jobs, (unsigned long long)sh->bans);
	printf("loom_faults: jobs lost %llu, jobs duplicated %llu, innocent jobs failed %llu\n",
	       (unsigned long long)sh->lost, (unsigned long long)sh->duplicated,
	       (unsigned long long)innocent);
#define CHECK(cond, ...) do {						\
	ok = (cond);							\
	printf("%s %u ", ok ? "ok" : "not ok", *pass + *fail + 1);	\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	ok ? (*pass)++ : (*fail)++;					\
} while (0)
	CHECK(injected * 10 >= faults * 9, "at least 90%% of the %u faults injected (%u)", faults, injected);
	CHECK(recovered == injected, "the core recovered from every fault");
	CHECK(!sh->lost, "no job lost");
	CHECK(!sh->duplicated, "no job duplicated");
	CHECK(!innocent, "no innocent job failed");
	CHECK(!sh->findings, "no other finding");
	/*
	 * Lost signals may go unnoticed, harmlessly: a later doorbell can
	 * announce a "lost" job before the hang check looks, and a spurious
	 * interrupt can coalesce with a real one.  The checks above are what
	 * matters for them.
	 */
	for (int k = 1; k < KINDS; k++) {
		struct kind_stats *s = &sh->ks[k];

		if (k != LOOM_INJECT_LOST_DOORBELL && k != LOOM_INJECT_SPURIOUS_IRQ)
			CHECK(s->detected == s->injected, "every %s detected", kind_name[k]);
	}
#undef CHECK
}

int main(int argc, char **argv)
{
	unsigned faults = 1000, pass = 0, fail = 0;
	uint64_t seed = 1;
	pid_t load[N_LOAD], injector;
	double start;
	int running;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--faults"))
			faults = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else
			argc = 0;
	}
	if (argc % 2 == 0) {
		fprintf(stderr, "usage: loom_faults [--faults N] [--seed N]\n");
		return 2;
	}
	num_nodes = vm_find_devices(nodes, num_cores, 2);
	if (num_nodes < 1) {
		printf("loom_faults: no loom device\n");
		return 1;
	}
	if (faults > MAX_PER_KIND * LOOM_INJECT_MAX)
		faults = MAX_PER_KIND * LOOM_INJECT_MAX;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	printf("loom_faults: %u faults, seed %llu, %d load processes (dense and dynamic) on %d devices\n",
	       faults, (unsigned long long)seed, N_LOAD, num_nodes);
	fflush(stdout);
	start = now_s();
	for (int s = 0; s < N_LOAD; s++)
		load[s] = spawn_load(s, seed * 100 + s);
	usleep(200000);		/* let the load reach every queue */
	injector = fork();
	if (injector == 0)
		_exit(inject_campaign(faults, seed));
	for (running = N_LOAD + 1; running;) {
		int status, s;
		pid_t pid = wait(&status);

		if (pid < 0)
			break;
		if (pid == injector) {
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				finding("the injector failed (status %#x)\n", status);
			sh->stop = 1;
			running--;
			continue;
		}
		for (s = 0; s < N_LOAD && load[s] != pid; s++)
			;
		if (s == N_LOAD)
			continue;
		if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_BANNED && !sh->stop) {
			sh->bans++;
			load[s] = spawn_load(s, seed * 100 + s + 10 * sh->bans);
			continue;
		}
		if (!WIFEXITED(status) ||
		    (WEXITSTATUS(status) && WEXITSTATUS(status) != EXIT_BANNED))
			finding("load process %d ended with status %#x\n", s, status);
		running--;
	}
	report(faults, now_s() - start, &pass, &fail);
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:0 error:0\n", pass, fail);
	return fail ? 1 : 0;
}
