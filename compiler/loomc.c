// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loomc: the loom offline compiler driver.
 *
 *   loomc [--verify-only|--check] [-o out] [--emit=graph|asm|image] [--fabric WxH]
 *         [--no-link-channels] [--strip] [--stats] [-Werror] [--help]
 *         [--version] file.loom
 *   loomc --disasm file.lcb
 *
 * --verify-only lexes, parses and verifies every "// -----" unit of the
 * file and prints GCC-style diagnostics; --check goes on to lower, place
 * and route (everything but writing the output).  Otherwise every thread is
 * lowered, placed and routed and the program image written (-o, default
 * a.lcb), or its graphs (DOT) or configuration listing printed.  The
 * image carries a source map (.loom.srcmap) unless --strip.
 * --disasm validates and prints an image.
 *
 * Exit status: 0 success, 1 diagnostics (or an unreadable or invalid
 * file), 2 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "place.h"
#include "loom_version.h"
#include "verifier.h"

#define LOOM_STR_(x)	#x
#define LOOM_STR(x)	LOOM_STR_(x)

/**
 * struct options - the command line
 * @verify_only: --verify-only
 * @check: --check
 * @output: -o
 * @emit: --emit=
 * @fabric: --fabric
 * @stats: --stats
 * @disasm: --disasm
 * @werror: -Werror
 * @strip: --strip
 * @input: the source file
 */
struct options {
	bool verify_only;
	bool check;
	bool werror;
	bool strip;
	bool stats;
	bool disasm;
	const char *output;
	const char *emit;
	const char *fabric;
	const char *input;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: loomc [--verify-only|--check] [-o out] [--emit=graph|asm|image] [--fabric WxH]\n"
		"             [--no-link-channels] [--strip] [--stats] [-Werror] [--help]\n"
		"             [--version] file.loom\n"
		"       loomc --disasm file.lcb\n"
		"\n"
		"  --verify-only     parse and verify every '// -----' unit, print diagnostics\n"
		"  --check           also lower, place and route every thread (everything but\n"
		"                    writing the output): a program it accepts compiles\n"
		"  -o out            output file (image: default a.lcb; graph, asm: stdout);\n"
		"                    '-o -' writes the image to standard output too\n"
		"  --emit=KIND       image (default), graph (Graphviz DOT) or asm (listing)\n"
		"  --fabric WxH      target fabric size (default 4x4)\n"
		"  --no-link-channels  one value a link, for a device without link channels\n"
		"                    (LOOM_CAP_LINK_CHANNELS, device ABI 0.8)\n"
		"  --strip           leave the source map (.loom.srcmap: the line of each PE\n"
		"                    operation and host instruction) out of the image\n"
		"  --stats           print each thread's mapping statistics\n"
		"  -Werror           make every warning an error\n"
		"  --disasm          validate and print a program image (an error naming the\n"
		"                    file if it is not one)\n"
		"  -h, --help        this text\n"
		"  --version         print loomc's version (the loom project's) and exit\n"
		"\n"
		"A file of '-' reads standard input.  Exit status: 0 success, 1 errors,\n"
		"2 bad usage.\n"
		"See Documentation/compiler.rst.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "loomc: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (loomc --help)\n");
	return 2;
}

/* WxH with both in 1..LOOM_FABRIC_MAX_DIM */
static bool valid_fabric(const char *s)
{
	unsigned w, h;
	char end;

	return sscanf(s, "%ux%u%c", &w, &h, &end) == 2 && w >= 1 &&
	       h >= 1 && w <= LOOM_FABRIC_MAX_DIM && h <= LOOM_FABRIC_MAX_DIM;
}

/* Takes the value of an option: "--opt=value" or "--opt value". */
static const char *option_value(int argc, char **argv, int *i,
				const char *opt)
{
	size_t n = strlen(opt);

	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

/* --emit=KIND */
static int set_emit(struct options *o, const char *v)
{
	if (!v)
		return bad_usage("%s", "missing value after '--emit'");
	if (strcmp(v, "graph") && strcmp(v, "asm") && strcmp(v, "image"))
		return bad_usage("--emit takes graph, asm or image, not '%s'", v);
	o->emit = v;
	return -1;
}

/* --fabric WxH */
static int set_fabric(struct options *o, const char *v)
{
	if (!v)
		return bad_usage("%s", "missing value after '--fabric'");
	if (!valid_fabric(v))
		return bad_usage("--fabric takes WxH with W and H in 1.."
				 LOOM_STR(LOOM_FABRIC_MAX_DIM) ", not '%s'", v);
	o->fabric = v;
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_option(int argc, char **argv, int *i, struct options *o)
{
	const char *a = argv[*i];

	if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(a, "--version") == 0) {
		printf("loomc %s\n", LOOM_PROJECT_VERSION);
		return 0;
	}
	if (strcmp(a, "--verify-only") == 0) {
		o->verify_only = true;
		return -1;
	}
	if (strcmp(a, "--stats") == 0) {
		o->stats = true;
		return -1;
	}
	if (strcmp(a, "--check") == 0) {
		o->check = true;
		return -1;
	}
	if (strcmp(a, "-Werror") == 0) {
		o->werror = true;
		return -1;
	}
	if (strcmp(a, "--no-link-channels") == 0) {
		place_set_link_channels(false);
		return -1;
	}
	if (strcmp(a, "--strip") == 0) {
		o->strip = true;
		return -1;
	}
	if (strcmp(a, "--disasm") == 0) {
		o->disasm = true;
		return -1;
	}
	if (strncmp(a, "-o", 2) == 0) {
		o->output = a[2] ? a + 2 : *i + 1 < argc ? argv[++*i] : NULL;
		return o->output ? -1 : bad_usage("%s", "missing file after '-o'");
	}
	if (strncmp(a, "--emit", 6) == 0 && (a[6] == '=' || !a[6]))
		return set_emit(o, option_value(argc, argv, i, "--emit"));
	if (strncmp(a, "--fabric", 8) == 0 && (a[8] == '=' || !a[8]))
		return set_fabric(o, option_value(argc, argv, i, "--fabric"));
	return bad_usage("unknown option '%s'", a);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		int ret;

		if (argv[i][0] != '-' || strcmp(argv[i], "-") == 0) {
			if (o->input)
				return bad_usage("more than one input file ('%s')",
						 argv[i]);
			o->input = argv[i];
			continue;
		}
		ret = parse_option(argc, argv, &i, o);
		if (ret >= 0)
			return ret;
	}
	if (!o->input)
		return bad_usage("%s", "no input file");
	return -1;
}

/* "N warnings and N errors generated.", as clang counts them. */
static void print_summary(const struct diag *d)
{
	if (d->warnings)
		fprintf(stderr, "%u warning%s%s", d->warnings,
			d->warnings == 1 ? "" : "s", d->errors ? " and " : "");
	if (d->errors)
		fprintf(stderr, "%u error%s", d->errors,
			d->errors == 1 ? "" : "s");
	if (d->warnings || d->errors)
		fprintf(stderr, " generated.\n");
}

static int verify_file(const struct options *o)
{
	const char *path = o->input;
	struct loom_source src;
	struct diag d;
	unsigned errors;

	if (loom_source_read(&src, path)) {
		fprintf(stderr, "loomc: error: %s: %s\n", path, strerror(errno));
		return 1;
	}
	diag_init(&d, &src, stderr, false);
	d.werror = o->werror;
	errors = verify_source(&d, NULL, NULL);
	print_summary(&d);
	diag_free(&d);
	loom_source_free(&src);
	return errors ? 1 : 0;
}

static int disasm_file(const char *path)
{
	struct loom_source src;
	int ret;

	if (loom_source_read(&src, path)) {
		fprintf(stderr, "loomc: error: %s: %s\n", path, strerror(errno));
		return 1;
	}
	ret = image_disasm(stdout, src.name, src.text, src.len) ? 1 : 0;
	loom_source_free(&src);
	return ret;
}

static bool is_stdout(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

/* Writes the image to @path, or standard output for "-". */
static int write_file(const char *path, const void *data, size_t size)
{
	FILE *f;

	if (is_stdout(path)) {
		if (fwrite(data, 1, size, stdout) != size || fflush(stdout)) {
			fprintf(stderr, "loomc: error: standard output: %s\n",
				strerror(errno));
			return 1;
		}
		return 0;
	}
	f = fopen(path, "wb");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		fprintf(stderr, "loomc: error: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	return 0;
}

/* Graph and asm output: -o or stdout. */
static FILE *text_output(const struct options *o)
{
	FILE *f;

	if (!o->output || is_stdout(o->output))
		return stdout;
	f = fopen(o->output, "w");
	if (!f)
		fprintf(stderr, "loomc: error: %s: %s\n", o->output,
			strerror(errno));
	return f;
}

static int compile_file(const struct options *o)
{
	const char *emit = o->emit ? o->emit : "image";
	struct compile_options co = { 4, 4, NULL, NULL, NULL };
	struct image_builder img;
	struct loom_source src;
	struct diag d;
	unsigned errors;
	FILE *text = NULL;
	int ret = 0;

	if (o->fabric)
		sscanf(o->fabric, "%ux%u", &co.width, &co.height);
	if (strcmp(emit, "image") && !o->check) {
		text = text_output(o);
		if (!text)
			return 1;
		*(strcmp(emit, "graph") ? &co.listing : &co.dot) = text;
	}
	if (o->stats)	/* not into an image written to stdout */
		co.stats = !text && is_stdout(o->output) ? stderr : stdout;
	if (loom_source_read(&src, o->input)) {
		fprintf(stderr, "loomc: error: %s: %s\n", o->input, strerror(errno));
		return 1;
	}
	diag_init(&d, &src, stderr, false);
	d.werror = o->werror;
	image_init(&img, co.width, co.height);
	img.strip = o->strip;
	errors = compile_source(&d, &co, &img);
	print_summary(&d);
	if (errors) {
		ret = 1;
	} else if (!text && !o->check) {
		void *data;
		size_t size;

		image_write(&img, &data, &size);
		ret = write_file(o->output ? o->output : "a.lcb", data, size);
		free(data);
	}
	if (text && text != stdout && fclose(text))
		ret = 1;
	image_free(&img);
	diag_free(&d);
	loom_source_free(&src);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	int ret = parse_args(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.disasm)
		return disasm_file(o.input);
	if (o.verify_only)
		return verify_file(&o);
	return compile_file(&o);
}
