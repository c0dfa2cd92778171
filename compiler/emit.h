/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * emit.h: placed threads and compiled host functions into a program image
 * (uapi/loom_image.h) through format/'s writer, and loomc --disasm over
 * format/'s reader.
 */
#ifndef LOOMC_EMIT_H
#define LOOMC_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"
#include "loom_format.h"
#include "place.h"

/**
 * struct host_image - the host program being built (.loom.host)
 * @funcs: one per compiled func.func (names in @names)
 * @insns, @consts, @list: the arrays of uapi struct loom_host_header's
 *	layout
 * @locs: per instruction, the operation it was compiled from (the source
 *	map's LOOM_SRCMAP_HOST entries)
 */
struct host_image {
	struct loom_host_func *funcs;
	char **names;
	int num_funcs, cap_funcs;
	struct loom_host_insn *insns;
	int num_insns, cap_insns;
	struct loom_loc *locs;
	int cap_locs;
	uint64_t *consts;
	int num_consts, cap_consts;
	uint32_t *list;
	int num_list, cap_list;
};

/**
 * struct image_builder - the image being compiled
 * @writer: format/'s builder, which holds the threads
 * @threads: their names, in image order (host launches use the index)
 * @num: how many
 * @host: the host functions compiled so far, written by image_write()
 * @strip: image_write() leaves the source map out (loomc --strip)
 */
struct image_builder {
	struct loom_image_builder *writer;
	struct emit_thread {
		char *name;
	} *threads;
	int num, cap;
	struct host_image host;
	bool strip;
};

void image_init(struct image_builder *b, unsigned width, unsigned height);
void image_free(struct image_builder *b);

/*
 * Adds thread @f, lowered to @g and placed as @p, and its source map
 * entries: its definition, each slot, port and route.
 */
void image_add_thread(struct image_builder *b, const struct ir_func *f,
		      const struct graph *g, const struct placement *p);

/* The ELF file; *@data is malloc'd, free() it. */
void image_write(const struct image_builder *b, void **data, size_t *size);

/*
 * Prints the image readably (loomc --disasm).  Returns -1 if it is not a
 * valid image, after saying why on stderr, naming the file @name.
 */
int image_disasm(FILE *out, const char *name, const void *data, size_t size);

#endif /* LOOMC_EMIT_H */
