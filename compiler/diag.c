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
	diag_release_warnings(d, false);
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

/* Appends a copy to @recs; silently drops it when memory runs out. */
static void append(struct diag_record **recs, size_t *num, size_t *cap,
		   enum diag_kind kind, struct loom_loc loc, const char *msg)
{
	struct diag_record *r;

	if (*num == *cap) {
		size_t n = *cap ? *cap * 2 : 16;

		r = realloc(*recs, n * sizeof(*r));
		if (!r)
			return;
		*recs = r;
		*cap = n;
	}
	r = &(*recs)[*num];
	r->msg = strdup(msg);
	if (!r->msg)
		return;
	r->kind = kind;
	r->loc = loc;
	(*num)++;
}

/* Keeps a copy of the diagnostic. */
static void record(struct diag *d, enum diag_kind kind, struct loom_loc loc,
		   const char *msg)
{
	append(&d->recs, &d->num_recs, &d->cap_recs, kind, loc, msg);
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
	const char *suffix = "";
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

	if (kind == DIAG_WARNING && d->hold) {
		append(&d->held, &d->num_held, &d->cap_held, kind, loc, msg);
		goto out;
	}
	if (kind == DIAG_WARNING && d->werror) {
		kind = DIAG_ERROR;
		suffix = " [-Werror]";
	}
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
			fprintf(d->out, "%s:%u:%u: %s: %s%s\n", d->src->name,
				loc.line, loc.col, diag_kind_name(kind), msg,
				suffix);
		else
			fprintf(d->out, "%s: %s: %s%s\n", d->src->name,
				diag_kind_name(kind), msg, suffix);
		if (loc.line)
			print_source_line(d, loc);
	}
out:
	if (msg != small)
		free(msg);
}

void diag_hold_warnings(struct diag *d)
{
	d->hold = true;
}

void diag_release_warnings(struct diag *d, bool report)
{
	d->hold = false;
	for (size_t i = 0; i < d->num_held; i++) {
		if (report)
			diag_warning(d, d->held[i].loc, "%s", d->held[i].msg);
		free(d->held[i].msg);
	}
	free(d->held);
	d->held = NULL;
	d->num_held = d->cap_held = 0;
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

/* -------------------------------------------------------- did you mean --- */

#define SUGGEST_MAX_LEN	64

/* Same bytes in another order? */
static bool anagram(const char *a, const char *b, size_t n)
{
	int count[256] = { 0 };

	for (size_t i = 0; i < n; i++) {
		count[(unsigned char)a[i]]++;
		count[(unsigned char)b[i]]--;
	}
	for (int i = 0; i < 256; i++)
		if (count[i])
			return false;
	return true;
}

/*
 * Edit distance (insert, delete, substitute, swap two neighbours) of short
 * names; an anagram (arith.fadd for arith.addf) counts one less.
 */
static unsigned distance(const char *a, size_t n, const char *b, size_t m)
{
	unsigned row[3][SUGGEST_MAX_LEN + 1], d;

	for (size_t j = 0; j <= m; j++)
		row[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		unsigned *cur = row[i % 3], *prev = row[(i - 1) % 3];
		unsigned *prev2 = row[(i + 1) % 3];	/* row i - 2 */

		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			unsigned c = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < c)
				c = prev2[j - 2] + 1;
			cur[j] = c;
		}
	}
	d = row[n % 3][m];
	if (d > 1 && n == m && anagram(a, b, n))
		d--;
	return d;
}

void diag_suggest_init(struct diag_suggest *s, const char *want, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->want = want;
	s->len = len;
	s->dist = ~0u;
}

void diag_suggest_add(struct diag_suggest *s, const char *name)
{
	size_t m = strlen(name);
	unsigned d;

	if (s->len > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN ||
	    m + 2 < s->len || s->len + 2 < m ||
	    (m == s->len && !memcmp(name, s->want, m)))
		return;
	d = distance(s->want, s->len, name, m);
	if (d > s->dist)
		return;
	if (d < s->dist) {
		s->dist = d;
		s->num = 0;
	}
	for (int i = 0; i < s->num && i < 2; i++)
		if (!strcmp(s->best[i], name))
			return;
	if (s->num < 2)
		s->best[s->num] = name;
	s->num++;
}

const char *diag_suggest_str(const struct diag_suggest *s, const char *sigil,
			     char *buf, size_t size)
{
	if (!s->num || s->num > 2 || s->dist > 2 || 3 * s->dist > s->len + 1)
		return "";
	if (s->num == 1)
		snprintf(buf, size, "; did you mean '%s%s'?", sigil, s->best[0]);
	else
		snprintf(buf, size, "; did you mean '%s%s' or '%s%s'?", sigil,
			 s->best[0], sigil, s->best[1]);
	return buf;
}
