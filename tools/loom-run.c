// SPDX-License-Identifier: MIT
/*
 * loom-run: run a compiled program's host function (@main) on a loom
 * device through libloom (loom_host_run).
 *
 * Usage: loom-run [--device PATH] [--workers N] [--stats] prog.lcb
 * Prints what the program prints (one value a line); --stats adds its
 * jobs, device cycles, dynamic-work items and steals on stderr.
 * Exit status: 0 on success, 1 when the program (or the device, or the
 * image) fails, with loom_strerror's message on stderr, 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: loom-run [--device PATH] [--workers N] [--stats] "
		   "prog.lcb\n");
}

int main(int argc, char **argv)
{
	struct loom_host_options opt = { .out = stdout };
	struct loom_host_stats st;
	const char *path = NULL, *file = NULL;
	struct loom_device *dev = NULL;
	struct loom_image *img = NULL;
	bool stats = false;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "--workers") && i + 1 < argc) {
			char *end;
			unsigned long n = strtoul(argv[++i], &end, 10);

			if (*end || !*argv[i] || n == 0 || n > 1024) {
				fprintf(stderr, "loom-run: bad --workers '%s'\n",
					argv[i]);
				return 2;
			}
			opt.workers = n;
		} else if (!strcmp(argv[i], "--stats")) {
			stats = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' || file) {
			usage(stderr);
			return 2;
		} else {
			file = argv[i];
		}
	}
	if (!file) {
		usage(stderr);
		return 2;
	}
	ret = loom_image_load_file(file, &img);
	if (ret) {
		fprintf(stderr, "loom-run: %s: %s\n", file, loom_strerror(ret));
		return 1;
	}
	ret = path ? loom_device_open(path, &dev) : loom_device_open_first(&dev);
	if (ret) {
		fprintf(stderr, "loom-run: %s: %s\n", path ? path : "device",
			loom_strerror(ret));
		loom_image_free(img);
		return 1;
	}
	ret = loom_host_run(dev, img, &opt, &st);
	fflush(stdout);
	if (ret) {
		fprintf(stderr, "loom-run: %s: %s", file, loom_strerror(ret));
		if (st.failed_insn >= 0)
			fprintf(stderr, " (host instruction %lld)",
				(long long)st.failed_insn);
		if (ret == LOOM_E_CHECK_FAILED)
			fprintf(stderr, ": %lld != %lld", (long long)st.check_lhs,
				(long long)st.check_rhs);
		fputc('\n', stderr);
	}
	if (stats)
		fprintf(stderr, "jobs %llu cycles %llu items %llu steals %llu\n",
			(unsigned long long)st.jobs,
			(unsigned long long)st.cycles,
			(unsigned long long)st.items,
			(unsigned long long)st.steals);
	loom_device_close(dev);
	loom_image_free(img);
	return ret ? 1 : 0;
}
