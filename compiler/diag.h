/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * diag.h: source files, locations and GCC-style diagnostics.
 *
 * Every stage of loomc reports through one struct diag, which prints
 *
 *	file:line:col: error: message
 *	<the source line>
 *	<spaces>^~~~
 *
 * and optionally records each diagnostic (kind, location, text) so unit
 * tests can inspect them.  Lines and columns are 1-based; a column counts
 * bytes from the start of the line (a tab is one column; the caret line
 * repeats the tabs so it still lines up).
 */
#ifndef LOOMC_DIAG_H
#define LOOMC_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/**
 * struct loom_source - one input file, read whole
 * @name: as given on the command line ("<stdin>" for -)
 * @text: its bytes (not NUL-terminated as far as the lexer cares; a NUL
 *	byte is just an unexpected character)
 * @len: number of bytes in @text
 */
struct loom_source {
	const char *name;
	char *text;
	size_t len;
};

/*
 * Reads @path ("-" is standard input) into @src.  Returns 0, or -1 with
 * errno set.  loom_source_free() releases it.
 */
int loom_source_read(struct loom_source *src, const char *path);

/* Wraps @len bytes of @text (copied) as a source named @name. */
int loom_source_from_memory(struct loom_source *src, const char *name,
			    const char *text, size_t len);

void loom_source_free(struct loom_source *src);

/**
 * struct loom_loc - a position in the source
 * @line: 1-based line; 0 means "no location" (no source line is printed)
 * @col: 1-based byte column
 * @offset: byte offset of the position in the file
 * @len: length in bytes of the token there (the caret is underlined)
 */
struct loom_loc {
	uint32_t line;
	uint32_t col;
	uint32_t offset;
	uint32_t len;
};

enum diag_kind {
	DIAG_ERROR,
	DIAG_WARNING,
	DIAG_NOTE,
};

/**
 * struct diag_record - one recorded diagnostic
 * @kind: error, warning or note
 * @loc: where
 * @msg: the message, without "file:line:col: error: "
 */
struct diag_record {
	enum diag_kind kind;
	struct loom_loc loc;
	char *msg;
};

/**
 * struct diag - where diagnostics go
 * @src: the file the locations refer to
 * @out: printed there when non-NULL
 * @record: keep every diagnostic in @recs
 * @werror: report warnings as errors ("... [-Werror]")
 * @hold: warnings wait in @held until diag_release_warnings()
 * @held: those warnings
 * @num_held: how many
 * @cap_held: allocated entries
 * @recs: the recorded diagnostics, in order
 * @num_recs: how many
 * @cap_recs: allocated entries
 * @errors: errors reported so far
 * @warnings: warnings reported so far
 * @notes: notes reported so far
 */
struct diag {
	const struct loom_source *src;
	FILE *out;
	bool record;
	bool werror;
	bool hold;
	struct diag_record *held;
	size_t num_held;
	size_t cap_held;
	struct diag_record *recs;
	size_t num_recs;
	size_t cap_recs;
	unsigned errors;
	unsigned warnings;
	unsigned notes;
};

void diag_init(struct diag *d, const struct loom_source *src, FILE *out,
	       bool record);
void diag_free(struct diag *d);

void diag_error(struct diag *d, struct loom_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(struct diag *d, struct loom_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_note(struct diag *d, struct loom_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * struct diag_suggest - "did you mean": the candidates closest to a name
 * @want: the unknown name
 * @len: its length
 * @best: the closest candidates so far (at most two at one distance)
 * @num: how many are at that distance (more than two: no suggestion)
 * @dist: that distance (edit distance; an anagram counts one less)
 */
struct diag_suggest {
	const char *want;
	size_t len;
	const char *best[2];
	int num;
	unsigned dist;
};

void diag_suggest_init(struct diag_suggest *s, const char *want, size_t len);

/* Considers candidate @name (NUL-terminated). */
void diag_suggest_add(struct diag_suggest *s, const char *name);

/*
 * "; did you mean '<sigil>x'?" (or "'x' or 'y'") when a candidate is close
 * (at most 2 edits, and at most a third of the name's length), else "".
 * Writes into @buf.
 */
const char *diag_suggest_str(const struct diag_suggest *s, const char *sigil,
			     char *buf, size_t size);

/*
 * Warnings are a file's without errors: loomc holds them back while it
 * verifies and compiles, then reports them (@report) or drops them.
 */
void diag_hold_warnings(struct diag *d);
void diag_release_warnings(struct diag *d, bool report);

/* The name GCC prints for @kind: "error", "warning", "note". */
const char *diag_kind_name(enum diag_kind kind);

#endif /* LOOMC_DIAG_H */
