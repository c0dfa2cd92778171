// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * diag.c: reading source files and printing diagnostics the way GCC does:
 * "file:line:col: error: message", the source line, and a caret under the
 * column with '~' under the rest of the token.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* ------------------------------------------------------------ sources --- */

static int read_stream(struct loom_source *src, FILE *f)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);

	errno = 0;
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (n == 0)
			break;
		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	if (ferror(f)) {
		int err = errno ? errno : EIO;

		free(buf);
		errno = err;
		return -1;
	}
	src->text = buf;
	src->len = len;
	return 0;
}

int loom_source_read(struct loom_source *src, const char *path)
{
	FILE *f;
	int ret;

	memset(src, 0, sizeof(*src));
	if (strcmp(path, "-") == 0) {
		src->name = "<stdin>";
		return read_stream(src, stdin);
	}
	src->name = path;
	f = fopen(path, "rb");
	if (!f)
		return -1;
	ret = read_stream(src, f);
	fclose(f);
	return ret;
}

int loom_source_from_memory(struct loom_source *src, const char *name,
			    const char *text, size_t len)
{
	src->name = name;
	src->len = len;
	src->text = malloc(len ? len : 1);
	if (!src->text)
		return -1;
	memcpy(src->text, text, len);
	return 0;
}

void loom_source_free(struct loom_source *src)
{
	free(src->text);
	src->text = NULL;
	src->len = 0;
}

/* -------------------------------------------------------- diagnostics --- */

void diag_init(struct diag *d, const struct loom_source *src, FILE *out,
	       bool record)
{
	memset(d, 0, sizeof(*d));
	d->src = src;
	d->out = out;
	d->record = record;
}

void diag_free(struct diag *d)
{
	for (size_t i = 0; i < d->num_recs; i++)
		free(d->recs[i].msg);
	free(d->recs);
	d->recs = NULL;
	d->num_recs = d->cap_recs = 0;
}

const char *diag_kind_name(enum diag_kind kind)
{
	switch (kind) {
	case DIAG_ERROR:	return "error";
	case DIAG_WARNING:	return "warning";
	case DIAG_NOTE:		return "note";
	}
	return "?";
}

/* Keeps a copy of the diagnostic; silently drops it when memory runs out. */
static void record(struct diag *d, enum diag_kind kind, struct loom_loc loc,
		   const char *msg)
{
	struct diag_record *r;

	if (d->num_recs == d->cap_recs) {
		size_t cap = d->cap_recs ? d->cap_recs * 2 : 16;

		r = realloc(d->recs, cap * sizeof(*r));
		if (!r)
			return;
		d->recs = r;
		d->cap_recs = cap;
	}
	r = &d->recs[d->num_recs];
	r->msg = strdup(msg);
	if (!r->msg)
		return;
	r->kind = kind;
	r->loc = loc;
	d->num_recs++;
}

/* Prints the line holding @loc, then the caret line under it. */
static void print_source_line(struct diag *d, struct loom_loc loc)
{
	const char *text = d->src->text;
	size_t end = d->src->len, start = loc.offset, i;

	if (loc.offset > end)
		return;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	for (i = start; i < end && text[i] != '\n'; i++) {
		unsigned char c = (unsigned char)text[i];

		fputc(c == '\t' || c >= 0x80 || (c >= 0x20 && c != 0x7f) ?
		      c : '?', d->out);
	}
	fputc('\n', d->out);
	for (i = start; i < loc.offset; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\t')
			fputc('\t', d->out);
		else if (c < 0x80 || c >= 0xc0)	/* one per UTF-8 character */
			fputc(' ', d->out);
	}
	fputc('^', d->out);
	for (i = loc.offset + 1; i < (size_t)loc.offset + loc.len && i < end &&
	     text[i] != '\n'; i++)
		fputc('~', d->out);
	fputc('\n', d->out);
}

static void report(struct diag *d, enum diag_kind kind, struct loom_loc loc,
		   const char *fmt, va_list ap)
{
	char small[512], *msg = small;
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		msg = malloc((size_t)n + 1);
		if (msg)
			vsnprintf(msg, (size_t)n + 1, fmt, ap2);
		else
			msg = small;	/* truncated rather than lost */
	}
	va_end(ap2);

	if (kind == DIAG_ERROR)
		d->errors++;
	else if (kind == DIAG_WARNING)
		d->warnings++;
	else
		d->notes++;
	if (d->record)
		record(d, kind, loc, msg);
	if (d->out) {
		if (loc.line)
			fprintf(d->out, "%s:%u:%u: %s: %s\n", d->src->name,
				loc.line, loc.col, diag_kind_name(kind), msg);
		else
			fprintf(d->out, "%s: %s: %s\n", d->src->name,
				diag_kind_name(kind), msg);
		if (loc.line)
			print_source_line(d, loc);
	}
	if (msg != small)
		free(msg);
}

void diag_error(struct diag *d, struct loom_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(d, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
}

void diag_warning(struct diag *d, struct loom_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(d, DIAG_WARNING, loc, fmt, ap);
	va_end(ap);
}

void diag_note(struct diag *d, struct loom_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(d, DIAG_NOTE, loc, fmt, ap);
	va_end(ap);
}
