/* SPDX-License-Identifier: MIT */
/*
 * loom_format.h: the one implementation of the program image format
 * (uapi/loom_image.h), shared by libloom and loomc.
 *
 *   writer.c  the image builder: threads with their configurations, each
 *             given its launch template and patches, a host program, all
 *             written out as the ELF file
 *   reader.c  the reader and validator: every header, section, offset and
 *             size checked before anything looks inside, with a sentence
 *             saying what is wrong (loomc --disasm prints it); the host
 *             program's checker
 *   interp.c  the host-program interpreter, over a backend's callbacks
 *             (libloom's device backend, the compiler tests' engine one)
 *   template.c  a launch template's holes filled with a launch's values
 *   alu.c     the PE operations' arithmetic (loom_alu.h), which host
 *             programs and the device's engine share
 *   loom_ops.h  the PE operations described once (inputs, class, mirror,
 *             what is pure, host-computable, a REDUCE fold), for the
 *             engine, the reader and the compiler
 *
 * MIT, like libloom, so that both libloom and the GPL engine and compiler
 * can link it.  Functions return 0 or a negative value: -errno or a
 * LOOM_FORMAT_* below; they never print.
 */
#ifndef LOOM_FORMAT_H
#define LOOM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom_device.h"

/*
 * format/'s typed errors.  Their values are libloom's LOOM_E_* of the same
 * names (lib/error.c asserts so), so libloom and loomc pass them on as
 * they are, and the format layer needs nothing of lib/.
 */
enum loom_format_error {
	LOOM_FORMAT_BAD_IMAGE = -4103,		/* the image is malformed */
	LOOM_FORMAT_BAD_CONFIG = -4110,		/* a fabric configuration is malformed */
	LOOM_FORMAT_DUPLICATE_THREAD = -4111,	/* a thread name is already used */
};
#include "loom_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* =========================================================================
 * Rules the writer and the reader share (reader.c)
 * ========================================================================= */

/* @type is an enum loom_arg_type. */
bool loom_arg_type_valid(unsigned type);
/* @type is a LOOM_ARG_MEMREF_* type; its element size, else 0. */
unsigned loom_arg_memref_elem_size(unsigned type);
/*
 * @m is a well-formed record (uapi .loom.memrefs) of argument @m->arg of
 * thread @t: a memref argument, its rank, each entry's source, operand
 * (an index argument of @t, not its work-item argument) and value, the
 * reserved fields and the entries beyond the rank zero.
 */
bool loom_memref_record_ok(const struct loom_image_thread *t,
			   const struct loom_image_memref *m);
/*
 * @config (@size bytes) is a struct loom_fabric_config for a @width x
 * @height fabric whose size matches its header.
 */
bool loom_config_fits(const void *config, uint64_t size, unsigned width,
		      unsigned height);

/* =========================================================================
 * The image builder (writer.c)
 * =========================================================================
 *
 * Every thread gets the same launch template: LOAD_CONFIG (size baked in,
 * VA patched), SET_OPERANDS when it has arguments (each patched, so
 * operand k is argument k; a job starts with no operands, so a thread
 * without arguments needs none), then DISPATCH_DENSE (extents patched) or
 * DISPATCH_ITEMS (count, payload and result VAs patched, the child
 * capacity baked in).
 */
struct loom_image_builder;

/* -EINVAL for a fabric dimension of 0 or above LOOM_FABRIC_MAX_DIM. */
int loom_builder_new(unsigned fabric_width, unsigned fabric_height,
		     struct loom_image_builder **out);
void loom_builder_free(struct loom_image_builder *b);
/*
 * A dense thread of rank @rank; @config is a struct loom_fabric_config
 * image for the builder's fabric (LOOM_FORMAT_BAD_CONFIG otherwise), a name
 * already used is LOOM_FORMAT_DUPLICATE_THREAD, anything else invalid -EINVAL.
 */
int loom_builder_add_dense(struct loom_image_builder *b, const char *name,
			   unsigned rank, const enum loom_arg_type *arg_types,
			   unsigned num_args, const void *config,
			   size_t config_size);
/* A dynamic-work thread whose argument @work_item_arg is the item payload. */
int loom_builder_add_dynamic(struct loom_image_builder *b, const char *name,
			     const enum loom_arg_type *arg_types,
			     unsigned num_args, unsigned work_item_arg,
			     uint32_t child_capacity, const void *config,
			     size_t config_size);
/*
 * Either of the above from a thread record: @sig's domain, rank,
 * num_args, arg_types, work_item_arg and child_capacity (every other field
 * is the builder's).
 */
int loom_builder_add_thread(struct loom_image_builder *b, const char *name,
			    const struct loom_image_thread *sig,
			    const void *config, size_t config_size);

/**
 * struct loom_host_program - a host program to write (.loom.host)
 * @funcs: @num_funcs functions; their @name fields are the builder's
 * @names: each function's name
 * @insns, @consts, @list: the arrays of struct loom_host_header's layout
 *
 * Written only when it has a function; checked by the reader, not here.
 */
struct loom_host_program {
	const struct loom_host_func *funcs;
	const char *const *names;
	uint32_t num_funcs;
	const struct loom_host_insn *insns;
	uint32_t num_insns;
	const uint64_t *consts;
	uint32_t num_consts;
	const uint32_t *list;
	uint32_t num_list;
};

/* The image's host program (copied); replaces any earlier one. */
int loom_builder_set_host(struct loom_image_builder *b,
			  const struct loom_host_program *host);
/*
 * The source map (.loom.srcmap, uapi/loom_image.h): written when a source
 * file is set or an entry added, in key order whatever the order added.
 * @e's kind, unit, at, slot, out, line and col are taken, @name (NULL: none)
 * copied; a key added twice keeps its first entry.  -EINVAL for an unknown
 * kind or a field beyond its range, -ENOMEM.
 */
int loom_builder_set_source_file(struct loom_image_builder *b,
				 const char *file);
int loom_builder_add_source(struct loom_image_builder *b,
			    const struct loom_srcmap_entry *e,
			    const char *name);
/*
 * The record of a memref argument (uapi .loom.memrefs): @m->thread must be
 * a thread added already and @m well formed for it
 * (loom_memref_record_ok()), else -EINVAL; a second record of one
 * argument is -EEXIST.  Written, in (thread, arg) order, when any is
 * added; an image with a record must have one for every memref argument
 * of every thread, which the reader checks.
 */
int loom_builder_add_memref(struct loom_image_builder *b,
			    const struct loom_image_memref *m);
/* Forgets the source map: the image is written without one (--strip). */
void loom_builder_drop_sources(struct loom_image_builder *b);
/* The image bytes in a malloc()ed buffer the caller free()s. */
int loom_builder_finish(struct loom_image_builder *b, void **bytes,
			size_t *size);

/* =========================================================================
 * Launch templates (template.c)
 * ========================================================================= */

/**
 * struct loom_template_values - what a launch puts in its template's holes
 * @config_va: the device VA of the thread's configuration
 * @operands: the launch operands, by argument index (the work-item
 *	argument's is not read: the device feeds each item's payload)
 * @extents: dense extents, by coordinate
 * @items: dynamic work: the dispatch's item count
 * @payload_va, @result_va: dynamic work: its payload and result arrays
 */
struct loom_template_values {
	uint64_t config_va;
	const uint64_t *operands;
	const int64_t *extents;
	uint32_t items;
	uint64_t payload_va;
	uint64_t result_va;
};

/*
 * Fills the holes of thread @t's template, already copied to @cmd, from
 * @v; @patch is the thread's t->num_patches patches, which a validated
 * image keeps inside its template.
 */
void loom_template_fill(void *cmd, const struct loom_image_thread *t,
			const struct loom_image_patch *patch,
			const struct loom_template_values *v);

/* =========================================================================
 * The reader (reader.c)
 * ========================================================================= */

enum loom_image_sec {
	LOOM_SEC_INFO, LOOM_SEC_THREADS, LOOM_SEC_CONFIGS, LOOM_SEC_TEMPLATES,
	LOOM_SEC_PATCHES, LOOM_SEC_STRTAB, LOOM_SEC_HOST, LOOM_SEC_SRCMAP,
	LOOM_SEC_MEMREFS, LOOM_SEC_COUNT
};

/* Section names, in enum loom_image_sec order (the order written). */
extern const char *const loom_image_sec_names[LOOM_SEC_COUNT];

/**
 * struct loom_image_view - a validated image in memory (not copied)
 * @data: the file, or NULL for a view made of sections held elsewhere
 * @size: its size
 * @info: .loom.info
 * @sec: each section's bytes (.loom.host, .loom.srcmap, .loom.memrefs:
 *	NULL when the image has none)
 * @len: and its size
 * @host: .loom.host's header, once loom_view_check_host() accepted it
 */
struct loom_image_view {
	const uint8_t *data;
	size_t size;
	struct loom_image_info info;
	const uint8_t *sec[LOOM_SEC_COUNT];
	uint64_t len[LOOM_SEC_COUNT];
	struct loom_host_header host;
};

/*
 * Checks the ELF file, every section and every thread (its signature,
 * configuration, template packets and patches) and the source map, not
 * the host program.
 * Returns 0 or LOOM_FORMAT_BAD_IMAGE with a sentence in @why (may be NULL).
 */
int loom_view_open(struct loom_image_view *v, const void *data, size_t size,
		   char *why, size_t whylen);
/*
 * Checks @v's host program (LOOM_FORMAT_BAD_IMAGE when there is none): its
 * header and size, every function, every instruction's registers and
 * references, and that each launch passes as many arguments and extents
 * as its thread has.  @v's threads must have passed loom_view_open().
 */
int loom_view_check_host(struct loom_image_view *v, char *why, size_t whylen);

/* Copied out, so unaligned sections are fine; indices are not checked. */
struct loom_image_thread loom_view_thread(const struct loom_image_view *v,
					  unsigned i);
struct loom_image_patch loom_view_patch(const struct loom_image_view *v,
					unsigned i);
const char *loom_view_name(const struct loom_image_view *v, uint32_t offset);
/*
 * The .loom.memrefs record of argument @arg of thread @thread into *@m;
 * false when the image has no such section or @arg is no memref.
 */
bool loom_view_memref(const struct loom_image_view *v, unsigned thread,
		      unsigned arg, struct loom_image_memref *m);
/* The thread called @name, or -1. */
int loom_view_find_thread(const struct loom_image_view *v, const char *name);
struct loom_host_func loom_view_host_func(const struct loom_image_view *v,
					  unsigned i);
struct loom_host_insn loom_view_host_insn(const struct loom_image_view *v,
					  unsigned i);
uint64_t loom_view_host_const(const struct loom_image_view *v, unsigned i);
uint32_t loom_view_host_list(const struct loom_image_view *v, unsigned i);
/* The host function called @name, or -1. */
int loom_view_find_host_func(const struct loom_image_view *v,
			     const char *name);
/*
 * The index of the @ordinal-th (from 0) LAUNCH instruction of host
 * function @func, in instruction order, or -1 when it has no such one.
 */
int64_t loom_view_host_launch(const struct loom_image_view *v, unsigned func,
			      unsigned ordinal);

/**
 * struct loom_view_loc - where something of an image comes from
 * @file: the source file, as the compiler was given it
 * @line: 1-based line
 * @col: 1-based byte column
 * @name: the SSA value its operation computes (without '%'), or ""
 */
struct loom_view_loc {
	const char *file;
	uint32_t line;
	uint32_t col;
	const char *name;
};

/*
 * The source map's entry of @key's kind, unit, at, slot and out (its other
 * fields are not read) into *@loc, pointing into @v.  -ENOENT when the
 * image has no source map (--strip) or no such entry.
 */
int loom_view_source(const struct loom_image_view *v,
		     const struct loom_srcmap_entry *key,
		     struct loom_view_loc *loc);

/* =========================================================================
 * The host-program interpreter (interp.c)
 * ========================================================================= */

/**
 * struct loom_interp_launch - one LAUNCH, its registers read
 * @thread: index in .loom.threads
 * @desc: that thread's record
 * @name: its name
 * @args: the launch operands, @desc.num_args of them
 * @waits: launch numbers (tokens) to wait for first, each already made
 * @num_waits: how many
 * @extents: @desc.rank dense extents
 * @number: this launch's own number (its token)
 * @ordinal: the LAUNCH's ordinal among its function's LAUNCH instructions,
 *	in instruction order (its launch site, loom_view_host_launch())
 */
struct loom_interp_launch {
	unsigned thread;
	struct loom_image_thread desc;
	const char *name;
	uint64_t args[LOOM_IMAGE_MAX_ARGS];
	const uint64_t *waits;
	unsigned num_waits;
	int64_t extents[LOOM_MAX_RANK > 0 ? LOOM_MAX_RANK : 1];
	uint64_t number;
	uint32_t ordinal;
};

/**
 * struct loom_interp_backend - what the instructions do outside registers
 * @alloc: a zeroed buffer of @count elements of @size bytes; its VA
 * @load: @size (4 or 8) bytes at @va, zero-extended (the interpreter
 *	sign-extends i32)
 * @store: the low @size bytes of @value at @va
 * @launch: start (or run) a launch
 * @wait: wait for launch number @token (always one already made)
 * @print: one PRINT of enum loom_arg_type @type; NULL: ignored
 * @check_failed: a CHECK whose sides differ; 0 carries on, anything else
 *	ends the run with that value
 *
 * Each returns 0 or a negative error, which ends the run.
 */
struct loom_interp_backend {
	int (*alloc)(void *ctx, uint64_t count, unsigned size, uint64_t *va);
	int (*load)(void *ctx, uint64_t va, unsigned size, uint64_t *value);
	int (*store)(void *ctx, uint64_t va, unsigned size, uint64_t value);
	int (*launch)(void *ctx, const struct loom_interp_launch *l);
	int (*wait)(void *ctx, uint64_t token);
	void (*print)(void *ctx, enum loom_arg_type type, int64_t value);
	int (*check_failed)(void *ctx, int64_t lhs, int64_t rhs);
};

/**
 * struct loom_interp_stats - what a run did
 * @insns: instructions executed
 * @launches: LAUNCHes made
 * @failed_insn: the instruction that ended the run with an error, or -1
 */
struct loom_interp_stats {
	uint64_t insns;
	uint64_t launches;
	int64_t failed_insn;
};

/*
 * Runs host function @func of @v, whose host program
 * loom_view_check_host() accepted, with @be.  Returns 0, what a callback
 * returned, -EINVAL for a WAIT or launch wait on something that is not a
 * launch made so far, or -ENOMEM.  @stats may be NULL.
 */
int loom_interp_run(const struct loom_image_view *v, unsigned func,
		    const struct loom_interp_backend *be, void *ctx,
		    struct loom_interp_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_FORMAT_H */
