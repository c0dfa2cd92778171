// SPDX-License-Identifier: MIT
/*
 * loom-top: what the loom devices are doing, per device, core and client
 * process, from the DRM fdinfo keys of every loom fd in /proc and the
 * driver's debugfs "queues" file (root).  Two samples -d seconds apart give
 * each figure: busy % per core (drm-cycles over drm-total-cycles), jobs/s,
 * jobs in flight, fabric cycles/s, pinned memory, hang recoveries.
 * Documentation/tracing.rst says what each fdinfo key counts.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loom_version.h"

#define MAX_CORES	8
#define MAX_DEVS	16
#define MAX_CLIENTS	256

struct client {			/* one DRM file (client id) of a device */
	int pid;
	char comm[32];
	char pdev[32];
	unsigned long long id;
	long long cycles[MAX_CORES], total[MAX_CORES], fabric[MAX_CORES];
	long long kib;
};

struct core_stat {
	long long done, failed, resets, inflight;
	bool valid;
};

struct dev {
	char pdev[32];
	int cores;
	struct core_stat core[MAX_CORES];
};

struct sample {
	struct client cl[MAX_CLIENTS];
	int ncl;
	struct dev dev[MAX_DEVS];
	int ndev;
	double t;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct dev *dev_get(struct sample *s, const char *pdev)
{
	for (int i = 0; i < s->ndev; i++)
		if (!strcmp(s->dev[i].pdev, pdev))
			return &s->dev[i];
	if (s->ndev == MAX_DEVS)
		return NULL;
	snprintf(s->dev[s->ndev].pdev, sizeof(s->dev[0].pdev), "%s", pdev);
	return &s->dev[s->ndev++];
}

/* "<prefix><N>:" at @key: core N, or -1. */
static int core_key(const char *key, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(key, prefix, n) || !isdigit((unsigned char)key[n]))
		return -1;
	return atoi(key + n) < MAX_CORES ? atoi(key + n) : -1;
}

/* Parses one fdinfo file; 1 for a loom file, 0 for another. */
static int read_fdinfo(const char *path, struct client *c)
{
	char line[256];
	bool loom = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		long long v;
		int core;

		if (!colon)
			continue;
		*colon = 0;
		v = atoll(colon + 1);
		if (!strcmp(line, "drm-driver"))
			loom = strstr(colon + 1, "loom") != NULL;
		else if (!strcmp(line, "drm-pdev"))
			sscanf(colon + 1, " %31s", c->pdev);
		else if (!strcmp(line, "drm-client-id"))
			c->id = v;
		else if (!strcmp(line, "drm-total-system"))
			c->kib = v;
		else if ((core = core_key(line, "drm-cycles-core")) >= 0)
			c->cycles[core] = v;
		else if ((core = core_key(line, "drm-total-cycles-core")) >= 0)
			c->total[core] = v;
		else if ((core = core_key(line, "loom-fabric-cycles-core")) >= 0)
			c->fabric[core] = v;
	}
	fclose(f);
	return loom && c->pdev[0];
}

static void read_comm(int pid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, size, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

static bool client_seen(const struct sample *s, const struct client *c)
{
	for (int i = 0; i < s->ncl; i++)
		if (s->cl[i].id == c->id && !strcmp(s->cl[i].pdev, c->pdev))
			return true;
	return false;
}

/* Every loom fd of every process (a dup'ed or inherited fd counts once). */
static void scan_pid(struct sample *s, int pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && s->ncl < MAX_CLIENTS) {
		struct client *c = &s->cl[s->ncl];
		char file[320];

		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (!read_fdinfo(file, c) || client_seen(s, c))
			continue;
		c->pid = pid;
		read_comm(pid, c->comm, sizeof(c->comm));
		s->ncl++;
		dev_get(s, c->pdev);
	}
	closedir(d);
}

static void scan_clients(struct sample *s)
{
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			scan_pid(s, atoi(e->d_name));
	closedir(d);
}

/* debugfs "queues": per core, jobs in flight, done, failed, recoveries. */
static void read_queues(struct sample *s, const char *path, const char *pdev)
{
	struct dev *dv = dev_get(s, pdev);
	char line[256];
	int core = -1;
	FILE *f;

	if (!dv)
		return;
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int c, head, tail;
		long long n, a, b, r;

		if (sscanf(line, "core %u: head %u tail %u in-flight %lld", &c, &head,
			   &tail, &n) == 4 && c < MAX_CORES) {
			core = c;
			dv->core[c].inflight = n;
			dv->core[c].valid = true;
			if ((int)c + 1 > dv->cores)
				dv->cores = c + 1;
		} else if (core >= 0 &&
			   sscanf(line, " jobs: done %lld failed %lld resets %lld", &a, &b, &r) == 3) {
			dv->core[core].done = a;
			dv->core[core].failed = b;
			dv->core[core].resets = r;
		}
	}
	fclose(f);
}

/* The device whose debugfs directory @dir is: accel/<pdev> or dri/<minor>. */
static void scan_debugfs(struct sample *s)
{
	static const char * const roots[] = { "/sys/kernel/debug/accel", "/sys/kernel/debug/dri" };

	for (int r = 0; r < 2; r++) {
		struct dirent *e;
		DIR *d = opendir(roots[r]);

		if (!d)
			continue;
		while ((e = readdir(d))) {
			char path[512], name[128] = "", pdev[32] = "";
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/name", roots[r], e->d_name);
			f = fopen(path, "r");
			if (f) {
				if (!fgets(name, sizeof(name), f))
					name[0] = 0;
				fclose(f);
			}
			if (r == 0 && strchr(e->d_name, ':'))
				sscanf(e->d_name, "%31s", pdev);
			else if (!strncmp(name, "loom ", 5) && strstr(name, "dev="))
				sscanf(strstr(name, "dev=") + 4, "%31s", pdev);
			if (!pdev[0])
				continue;
			snprintf(path, sizeof(path), "%s/%s/queues", roots[r], e->d_name);
			if (!access(path, R_OK))
				read_queues(s, path, pdev);
		}
		closedir(d);
	}
}

static void take(struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->t = now_s();
	scan_clients(s);
	scan_debugfs(s);
}

static const struct client *find_client(const struct sample *s, const struct client *c)
{
	for (int i = 0; i < s->ncl; i++)
		if (s->cl[i].id == c->id && !strcmp(s->cl[i].pdev, c->pdev))
			return &s->cl[i];
	return NULL;
}

static const struct dev *find_dev(const struct sample *s, const char *pdev)
{
	for (int i = 0; i < s->ndev; i++)
		if (!strcmp(s->dev[i].pdev, pdev))
			return &s->dev[i];
	return NULL;
}

/* Busy % of core @k for @c between @a (or nothing: new client) and @c. */
static double busy_pct(const struct client *a, const struct client *c, int k)
{
	long long dc = c->cycles[k] - (a ? a->cycles[k] : 0);
	long long dt = c->total[k] - (a ? a->total[k] : c->total[k]);

	if (!a || dt <= 0)
		return 0;
	return dc < 0 ? 0 : 100.0 * dc / dt;
}

struct figures {
	double busy[MAX_CORES], fabric_s[MAX_CORES], total_busy;
};

static struct figures client_figures(const struct sample *a, const struct sample *b,
				     const struct client *c, int cores)
{
	const struct client *o = find_client(a, c);
	struct figures f = { 0 };
	double dt = b->t - a->t;

	for (int k = 0; k < cores; k++) {
		f.busy[k] = busy_pct(o, c, k);
		f.fabric_s[k] = o && dt > 0 ? (c->fabric[k] - o->fabric[k]) / dt : 0;
		f.total_busy += f.busy[k];
	}
	return f;
}

static int dev_cores(const struct sample *b, const struct dev *d)
{
	int n = d->cores;

	for (int i = 0; i < b->ncl; i++)
		if (!strcmp(b->cl[i].pdev, d->pdev))
			for (int k = 0; k < MAX_CORES; k++)
				if (b->cl[i].total[k] && k + 1 > n)
					n = k + 1;
	return n;
}

struct core_fig {
	double busy, jobs_s;
	long long inflight, resets;
	bool debugfs;
};

static struct core_fig core_figures(const struct sample *a, const struct sample *b,
				    const struct dev *d, int k)
{
	const struct dev *o = find_dev(a, d->pdev);
	struct core_fig f = { 0 };
	double dt = b->t - a->t;

	for (int i = 0; i < b->ncl; i++)
		if (!strcmp(b->cl[i].pdev, d->pdev))
			f.busy += busy_pct(find_client(a, &b->cl[i]), &b->cl[i], k);
	if (d->core[k].valid) {
		f.debugfs = true;
		f.inflight = d->core[k].inflight;
		f.resets = d->core[k].resets;
		if (o && o->core[k].valid && dt > 0)
			f.jobs_s = (d->core[k].done + d->core[k].failed -
				    o->core[k].done - o->core[k].failed) / dt;
	}
	return f;
}

static void print_json(const struct sample *a, const struct sample *b)
{
	printf("{\"interval_s\":%.3f,\"devices\":[", b->t - a->t);
	for (int i = 0; i < b->ndev; i++) {
		const struct dev *d = &b->dev[i];
		int cores = dev_cores(b, d), first = 1;

		printf("%s{\"pdev\":\"%s\",\"cores\":[", i ? "," : "", d->pdev);
		for (int k = 0; k < cores; k++) {
			struct core_fig f = core_figures(a, b, d, k);

			printf("%s{\"core\":%d,\"busy_pct\":%.1f", k ? "," : "", k, f.busy);
			if (f.debugfs)
				printf(",\"jobs_per_s\":%.1f,\"in_flight\":%lld,\"resets\":%lld",
				       f.jobs_s, f.inflight, f.resets);
			printf("}");
		}
		printf("],\"clients\":[");
		for (int j = 0; j < b->ncl; j++) {
			const struct client *c = &b->cl[j];
			struct figures f;
			double fab = 0;

			if (strcmp(c->pdev, d->pdev))
				continue;
			f = client_figures(a, b, c, cores);
			printf("%s{\"pid\":%d,\"comm\":\"%s\",\"client_id\":%llu,\"busy_pct\":%.1f,"
			       "\"core_busy_pct\":[", first ? "" : ",", c->pid, c->comm, c->id,
			       f.total_busy);
			for (int k = 0; k < cores; k++) {
				printf("%s%.1f", k ? "," : "", f.busy[k]);
				fab += f.fabric_s[k];
			}
			printf("],\"fabric_cycles_per_s\":%.0f,\"pinned_kib\":%lld}", fab, c->kib);
			first = 0;
		}
		printf("]}");
	}
	printf("]}\n");
}

static void print_text(const struct sample *a, const struct sample *b)
{
	printf("loom-top: %d device(s), %d client file(s), interval %.2f s\n", b->ndev,
	       b->ncl, b->t - a->t);
	for (int i = 0; i < b->ndev; i++) {
		const struct dev *d = &b->dev[i];
		int cores = dev_cores(b, d);

		printf("\ndevice %s\n  core  busy%%   jobs/s  in-flight  resets\n", d->pdev);
		for (int k = 0; k < cores; k++) {
			struct core_fig f = core_figures(a, b, d, k);

			if (f.debugfs)
				printf("  %4d  %5.1f  %7.1f  %9lld  %6lld\n", k, f.busy, f.jobs_s,
				       f.inflight, f.resets);
			else
				printf("  %4d  %5.1f        -          -       -\n", k, f.busy);
		}
		printf("  %7s  %-16s %6s  %10s  %12s  %s\n", "pid", "command", "client",
		       "busy%", "fabric cyc/s", "pinned KiB");
		for (int j = 0; j < b->ncl; j++) {
			const struct client *c = &b->cl[j];
			struct figures f;
			double fab = 0;

			if (strcmp(c->pdev, d->pdev))
				continue;
			f = client_figures(a, b, c, cores);
			for (int k = 0; k < cores; k++)
				fab += f.fabric_s[k];
			printf("  %7d  %-16s %6llu  %10.1f  %12.0f  %lld\n", c->pid, c->comm,
			       c->id, f.total_busy, fab, c->kib);
		}
	}
	if (geteuid())
		printf("\n(not root: other users' processes and debugfs figures are hidden)\n");
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: loom-top [-b] [-n N] [-d SECONDS] [--json] [--help] [--version]\n"
		"Shows per loom device, core and client process: busy %%, jobs/s, jobs in\n"
		"flight, fabric cycles/s, pinned memory and hang recoveries.\n"
		"  -b, --batch         plain output, no screen clearing (for logs and pipes)\n"
		"  -n, --iterations N  stop after N updates (default: run until interrupted)\n"
		"  -d, --delay SECS    seconds between updates, the measuring interval\n"
		"                      (default 1; fractions allowed)\n"
		"  --json              one JSON object per update (implies -b)\n"
		"  -h, --help          this text\n"
		"  --version           print the version and exit\n"
		"Busy %% is drm-cycles over drm-total-cycles from /proc/*/fdinfo; jobs/s,\n"
		"in-flight and resets come from debugfs and need root.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static struct sample s[2];
	bool batch = false, json = false;
	long iterations = -1;
	double delay = 1;
	int opt;

	opterr = 0;	/* one line of our own for a bad option */
	while ((opt = getopt_long(argc, argv, "bn:d:h", opts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'b':
			batch = true;
			break;
		case 'n':
			iterations = strtol(optarg, &end, 10);
			if (*end || iterations < 1) {
				fprintf(stderr, "loom-top: -n wants a count of 1 or more\n");
				return 2;
			}
			break;
		case 'd':
			delay = strtod(optarg, &end);
			if (*end || !(delay > 0 && delay <= 3600)) {
				fprintf(stderr, "loom-top: -d wants seconds, more than 0\n");
				return 2;
			}
			break;
		case 'j':
			json = batch = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("loom-top %s\n", LOOM_PROJECT_VERSION);
			return 0;
		default:
			fprintf(stderr, "loom-top: bad option or missing value: '%s' (loom-top --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "loom-top: unexpected argument '%s' (loom-top --help)\n", argv[optind]);
		return 2;
	}
	take(&s[0]);
	for (long i = 0; iterations < 0 || i < iterations; i++) {
		struct timespec ts = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };
		struct sample *a = &s[i % 2], *b = &s[(i + 1) % 2];

		nanosleep(&ts, NULL);
		take(b);
		if (!batch)
			printf("\033[H\033[2J");
		if (json)
			print_json(a, b);
		else
			print_text(a, b);
		fflush(stdout);
	}
	return 0;
}
