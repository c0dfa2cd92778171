/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * emit.h: program images (uapi/loom_image.h): building one from placed
 * threads, and reading one back (validation, disassembly, loaders in
 * tests).
 */
#ifndef LOOMC_EMIT_H
#define LOOMC_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"
#include "place.h"

/**
 * struct emit_thread - one compiled thread, owned by the builder
 * @desc: its .loom.threads entry (offsets are filled by image_write())
 * @name: its name
 * @config: its configuration image
 * @config_size: bytes
 */
struct emit_thread {
	struct loom_image_thread desc;
	char *name;
	void *config;
	size_t config_size;
};

/**
 * struct host_image - the host program being built (.loom.host)
 * @funcs: one per compiled func.func (names in @names)
 * @insns, @consts, @list: the arrays of uapi struct loom_host_header's
 *	layout
 */
struct host_image {
	struct loom_host_func *funcs;
	char **names;
	int num_funcs, cap_funcs;
	struct loom_host_insn *insns;
	int num_insns, cap_insns;
	uint64_t *consts;
	int num_consts, cap_consts;
	uint32_t *list;
	int num_list, cap_list;
};

struct image_builder {
	struct emit_thread *threads;
	int num, cap;
	unsigned width, height;
	struct host_image host;
};

void image_init(struct image_builder *b, unsigned width, unsigned height);
void image_free(struct image_builder *b);

/* Adds thread @f, lowered to @g and placed as @p. */
void image_add_thread(struct image_builder *b, const struct ir_func *f,
		      const struct graph *g, const struct placement *p);

/* The ELF file; *@data is malloc'd, free() it. */
void image_write(const struct image_builder *b, void **data, size_t *size);

/**
 * struct image_view - a validated image in memory
 * @data: the file
 * @size: its size
 * @info: .loom.info
 * @sec: per section below, its bytes in @data (.loom.host: NULL when the
 *	image has none)
 * @len: and its size
 * @host: .loom.host's header when present
 */
enum image_sec {
	SEC_INFO, SEC_THREADS, SEC_CONFIGS, SEC_TEMPLATES, SEC_PATCHES,
	SEC_STRTAB, SEC_HOST, SEC_COUNT
};

struct image_view {
	const uint8_t *data;
	size_t size;
	struct loom_image_info info;
	const uint8_t *sec[SEC_COUNT];
	size_t len[SEC_COUNT];
	struct loom_host_header host;
};

/*
 * Checks every header, section, offset and size of an image; returns 0,
 * or -1 with a reason in @err.
 */
int image_open(struct image_view *v, const void *data, size_t size,
	       char *err, size_t errlen);

/* Thread @i (copied out, so unaligned data is fine). */
struct loom_image_thread image_thread(const struct image_view *v, unsigned i);
struct loom_image_patch image_patch(const struct image_view *v, unsigned i);
const char *image_name(const struct image_view *v, uint32_t offset);

/* .loom.host's parts (only when v->sec[SEC_HOST]). */
struct loom_host_func image_host_func(const struct image_view *v, unsigned i);
struct loom_host_insn image_host_insn(const struct image_view *v, unsigned i);
uint64_t image_host_const(const struct image_view *v, unsigned i);
uint32_t image_host_list(const struct image_view *v, unsigned i);

/* Prints the image readably (loomc --disasm); -1 if it is invalid. */
int image_disasm(FILE *out, const void *data, size_t size);

#endif /* LOOMC_EMIT_H */
