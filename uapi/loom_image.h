/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * loom program images (.lcb): what loomc writes and libloom loads.
 *
 * An image is an ELF64 little-endian file (ET_EXEC, EM_NONE, so readelf and
 * objdump -h read it) whose content lives in named sections:
 *
 *   .loom.info       struct loom_image_info, exactly one
 *   .loom.threads    struct loom_image_thread[info.num_threads]
 *   .loom.configs    fabric configuration images (struct loom_fabric_config
 *                    + tiles + ports), 8-byte aligned, referenced by threads
 *   .loom.templates  command-buffer templates: packets (uapi/loom_device.h)
 *                    that launch one thread, with holes the loader fills
 *   .loom.patches    struct loom_image_patch[], the holes, per thread
 *   .loom.host       the host program (loomc's host functions; format in
 *                    Documentation/compiler.rst), optional
 *   .loom.strtab     NUL-terminated names, referenced by offset
 *   .loom.srcmap     the source map (debug information, below), optional
 *   .loom.memrefs    each memref argument's rank and layout (below),
 *                    optional: an image without it (or from before it)
 *                    loads, its views unchecked
 *   .shstrtab        section names
 *
 * Offsets and sizes inside the structs are relative to the start of the
 * section they point into.  All fields are little-endian; reserved fields
 * are zero.  Loaders reject an image whose version they do not know, whose
 * sections are missing or overlap the file's end, or whose references point
 * outside their sections.  Sections of other names are skipped, so a
 * loader that predates an optional section (.loom.srcmap) loads the image
 * as if it had none.
 */
#ifndef LOOM_IMAGE_H
#define LOOM_IMAGE_H

#include <linux/types.h>

#define LOOM_IMAGE_MAGIC	0x42434c4cU	/* "LLCB" */
#define LOOM_IMAGE_VERSION	1

#define LOOM_IMAGE_SECTION_INFO		".loom.info"
#define LOOM_IMAGE_SECTION_THREADS	".loom.threads"
#define LOOM_IMAGE_SECTION_CONFIGS	".loom.configs"
#define LOOM_IMAGE_SECTION_TEMPLATES	".loom.templates"
#define LOOM_IMAGE_SECTION_PATCHES	".loom.patches"
#define LOOM_IMAGE_SECTION_HOST		".loom.host"
#define LOOM_IMAGE_SECTION_STRTAB	".loom.strtab"
#define LOOM_IMAGE_SECTION_SRCMAP	".loom.srcmap"
#define LOOM_IMAGE_SECTION_MEMREFS	".loom.memrefs"

/**
 * struct loom_image_info - the image as a whole
 * @magic: LOOM_IMAGE_MAGIC
 * @version: LOOM_IMAGE_VERSION
 * @num_threads: entries in .loom.threads
 * @fabric_width: fabric the configurations were placed and routed for; a
 *	device whose fabric differs cannot run them
 * @fabric_height: likewise
 * @reserved: must be zero
 */
struct loom_image_info {
	__u32 magic;
	__u32 version;
	__u32 num_threads;
	__u8 fabric_width;
	__u8 fabric_height;
	__u16 reserved0;
	__u64 reserved[2];
};

/* A thread definition's closed domain kind (spec §2). */
enum loom_domain_kind {
	LOOM_DOMAIN_DENSE = 1,		/* #dataflow.thread_domain<dense> */
	LOOM_DOMAIN_DYNAMIC_WORK = 2,	/* <dynamic_work, work_item_arg = N> */
};

/* Types of a thread's ordinary arguments, as the launch ABI sees them. */
enum loom_arg_type {
	LOOM_ARG_I32 = 1,
	LOOM_ARG_I64 = 2,
	LOOM_ARG_INDEX = 3,		/* 64-bit, signed */
	LOOM_ARG_MEMREF_I32 = 4,	/* a device VA of i32 elements */
	LOOM_ARG_MEMREF_I64 = 5,	/* a device VA of i64 elements */
	LOOM_ARG_F32 = 6,		/* IEEE-754 binary32: its bits, as an i32 */
	LOOM_ARG_MEMREF_F32 = 7,	/* a device VA of f32 elements */
};

#define LOOM_IMAGE_MAX_ARGS	16
#define LOOM_IMAGE_NO_WORK_ARG	0xff

/**
 * struct loom_image_thread - one dataflow.thread definition (64 bytes)
 * @name: offset of its name (without '@') in .loom.strtab
 * @domain: enum loom_domain_kind
 * @rank: coordinate rank K of a dense thread (0..LOOM_MAX_RANK); 0 for
 *	dynamic work
 * @num_args: ordinary arguments (the launch operands), at most
 *	LOOM_IMAGE_MAX_ARGS
 * @work_item_arg: index of the work-item payload argument of a
 *	dynamic-work thread; LOOM_IMAGE_NO_WORK_ARG for dense
 * @arg_types: enum loom_arg_type of each ordinary argument
 * @config_offset: its fabric configuration in .loom.configs
 * @config_size: its size
 * @template_offset: its launch command template in .loom.templates
 * @template_size: its size, a multiple of 4
 * @patch_first: index of its first struct loom_image_patch
 * @num_patches: how many
 * @child_capacity: dynamic work: the most children one item may spawn
 *	(the compiler's bound on the body's spawns); 0 for dense
 * @reserved: must be zero
 */
struct loom_image_thread {
	__u32 name;
	__u8 domain;
	__u8 rank;
	__u8 num_args;
	__u8 work_item_arg;
	__u8 arg_types[LOOM_IMAGE_MAX_ARGS];
	__u32 config_offset;
	__u32 config_size;
	__u32 template_offset;
	__u32 template_size;
	__u32 patch_first;
	__u32 num_patches;
	__u32 child_capacity;
	__u32 reserved[3];
};

/* What a template hole receives; each is filled at launch by the loader. */
enum loom_patch_kind {
	LOOM_PATCH_CONFIG_VA = 1,	/* u64: device VA of the loaded config */
	LOOM_PATCH_OPERAND = 2,		/* u64: launch operand @index */
	LOOM_PATCH_EXTENT = 3,		/* u64: dense extent @index */
	LOOM_PATCH_ITEM_COUNT = 4,	/* u32: items in this batch */
	LOOM_PATCH_PAYLOAD_VA = 5,	/* u64: the batch's payload array */
	LOOM_PATCH_RESULT_VA = 6,	/* u64: the batch's result records */
};

/**
 * struct loom_image_patch - one hole in a thread's command template
 * @offset: byte offset in the thread's template
 * @kind: enum loom_patch_kind
 * @index: operand or extent index, else zero
 */
struct loom_image_patch {
	__u32 offset;
	__u16 kind;
	__u16 index;
};

/* ------------------------------------------------------------------------
 * The host program (.loom.host): loomc's compilation of func.func bodies,
 * a register machine a loader interprets.  Documentation/compiler.rst
 * ("The host program") gives each instruction's meaning.
 *
 * Layout: struct loom_host_header, then num_funcs struct loom_host_func,
 * num_insns struct loom_host_insn, num_consts __u64 constants and num_list
 * __u32 operand-list entries (launches).  Registers hold 64-bit values
 * (i32 and f32 bits sign-extended, i1 as 0 or 1, memrefs as device VAs,
 * tokens as launch numbers).
 */
#define LOOM_HOST_MAGIC		0x50484c4cU	/* "LLHP" */
#define LOOM_HOST_VERSION	1

struct loom_host_header {
	__u32 magic;
	__u32 version;
	__u32 num_funcs;
	__u32 num_insns;
	__u32 num_consts;
	__u32 num_list;
	__u64 reserved;
};

/**
 * struct loom_host_func - one func.func
 * @name: offset of its name in .loom.strtab
 * @first: index of its first instruction
 * @count: its instructions
 * @num_regs: registers it uses, 0 .. num_regs - 1
 */
struct loom_host_func {
	__u32 name;
	__u32 first;
	__u32 count;
	__u32 num_regs;
};

enum loom_host_op {
	LOOM_HOST_CONST = 1,	/* dst = consts[a] */
	/*
	 * dst = aux (enum loom_op ADD..SELECT or FADD..FTOUI, or MOV) of a,
	 * b, c; the f32 operations but conversions at LOOM_TYPE_I32 only
	 */
	LOOM_HOST_ALU = 2,
	/* dst = VA of a new zeroed buffer of a elements of aux bytes */
	LOOM_HOST_ALLOC = 3,
	LOOM_HOST_LOAD = 4,	/* dst = aux bytes at a + b * aux */
	LOOM_HOST_STORE = 5,	/* aux bytes of a to b + c * aux */
	/* dst = a; while dst < b (signed): body; dst += c.  d: its END_FOR */
	LOOM_HOST_FOR = 6,
	LOOM_HOST_END_FOR = 7,	/* a: its FOR */
	LOOM_HOST_LAUNCH = 8,	/* dst = token of a launch; a: list offset (below) */
	LOOM_HOST_WAIT = 9,	/* waits for token a */
	LOOM_HOST_PRINT = 10,	/* prints a, of enum loom_arg_type type */
	LOOM_HOST_CHECK = 11,	/* a == b, else the program fails */
	LOOM_HOST_RETURN = 12,
};

/**
 * struct loom_host_insn - one instruction (24 bytes)
 * @op: enum loom_host_op
 * @type: LOOM_TYPE_I64 or LOOM_TYPE_I32 for ALU; enum loom_arg_type for
 *	PRINT
 * @aux: ALU operation, or element size in bytes (4 or 8)
 * @reserved: must be zero
 * @dst: destination register
 * @a: operand register (or index, see enum loom_host_op)
 * @b: operand register
 * @c: operand register
 * @d: FOR: index of its END_FOR
 *
 * LAUNCH's list, at list[a]: thread index (in .loom.threads), n, n
 * argument registers, w, w token registers to wait for, k, k extent
 * registers.  A dynamic-work launch's token retires once every item
 * descended from the root payload (its work-item argument) has run.
 */
struct loom_host_insn {
	__u8 op;
	__u8 type;
	__u8 aux;
	__u8 reserved;
	__u32 dst;
	__u32 a;
	__u32 b;
	__u32 c;
	__u32 d;
};

/* ------------------------------------------------------------------------
 * The source map (.loom.srcmap): where in the source each PE slot, port
 * and route of a thread's configuration and each host instruction comes
 * from, so that a failed job can be reported at a source line.  Debug
 * information only: nothing a device runs reads it, loomc --strip leaves
 * it out, and loaders that predate it skip it.
 *
 * Layout: struct loom_srcmap_header, num_entries struct loom_srcmap_entry
 * in ascending (kind, unit, at, slot, out) order with no key twice, then
 * strings_size bytes of NUL-terminated strings referenced by offset from
 * their start (offset 0 is the empty string).
 */
#define LOOM_SRCMAP_MAGIC	0x4d534c4cU	/* "LLSM" */
#define LOOM_SRCMAP_VERSION	1

/**
 * struct loom_srcmap_header - the source map's header (32 bytes)
 * @magic: LOOM_SRCMAP_MAGIC
 * @version: LOOM_SRCMAP_VERSION
 * @num_entries: entries after the header
 * @file: the source file's name (as the compiler was given it) in the
 *	strings
 * @strings_size: bytes of strings after the entries; at least 1, the last
 *	one a NUL
 * @reserved: must be zero
 */
struct loom_srcmap_header {
	__u32 magic;
	__u32 version;
	__u32 num_entries;
	__u32 file;
	__u32 strings_size;
	__u32 reserved[3];
};

/**
 * enum loom_srcmap_kind - what a source map entry locates
 * @LOOM_SRCMAP_THREAD: @unit: a thread: its definition
 * @LOOM_SRCMAP_SLOT: @unit: thread, @at: tile, @slot: its operation (the PE
 *	of a spatial configuration is slot 0)
 * @LOOM_SRCMAP_PORT: @unit: thread, @at: port binding index: the argument,
 *	coordinate or ctrl it feeds
 * @LOOM_SRCMAP_ROUTE: @unit: thread, @at: tile, @slot, @out: enum
 *	loom_route_out: the value the switch output carries
 * @LOOM_SRCMAP_HOST: @unit: host instruction (its index in .loom.host):
 *	the operation compiled into it
 */
enum loom_srcmap_kind {
	LOOM_SRCMAP_THREAD = 1,
	LOOM_SRCMAP_SLOT = 2,
	LOOM_SRCMAP_PORT = 3,
	LOOM_SRCMAP_ROUTE = 4,
	LOOM_SRCMAP_HOST = 5,
};

/**
 * struct loom_srcmap_entry - one location (24 bytes)
 * @kind: enum loom_srcmap_kind
 * @slot: LOOM_SRCMAP_SLOT and _ROUTE: the slot; else zero
 * @out: LOOM_SRCMAP_ROUTE: the route output; else zero
 * @reserved: must be zero
 * @unit: thread index or host instruction index (see the kind)
 * @at: tile index (y * width + x) or port binding index; else zero
 * @line: 1-based source line
 * @col: 1-based byte column
 * @name: the SSA value the operation computes, without '%', in the
 *	strings; 0 when it has none (a store, a yield)
 */
struct loom_srcmap_entry {
	__u8 kind;
	__u8 slot;
	__u8 out;
	__u8 reserved;
	__u32 unit;
	__u32 at;
	__u32 line;
	__u32 col;
	__u32 name;
};

/* ------------------------------------------------------------------------
 * Memref arguments (.loom.memrefs): what a launch's operands describe.  A
 * memref argument crosses a launch as its base VA (LOOM_ARG_MEMREF_*) and
 * the LOOM_ARG_INDEX operands loomc adds after a thread's inputs for the
 * '?' entries of its type (Documentation/compiler.rst, "Dynamic memref
 * sizes"); a record says, for one such argument, its rank and where each
 * size, stride and its offset comes from, so that a loader can check,
 * before anything is submitted, that every element the view can address
 * lies inside the buffer object its base VA lies in.  Optional, and of its
 * own version: loaders that predate it skip it.
 *
 * Layout: struct loom_memref_header, then num_memrefs struct
 * loom_image_memref in ascending (thread, arg) order, exactly one for each
 * argument of a LOOM_ARG_MEMREF_* type of every thread.
 */
#define LOOM_MEMREFS_MAGIC	0x524d4c4cU	/* "LLMR" */
#define LOOM_MEMREFS_VERSION	1

/**
 * struct loom_memref_header - .loom.memrefs' header (16 bytes)
 * @magic: LOOM_MEMREFS_MAGIC
 * @version: LOOM_MEMREFS_VERSION
 * @num_memrefs: records after the header
 * @reserved: must be zero
 */
struct loom_memref_header {
	__u32 magic;
	__u32 version;
	__u32 num_memrefs;
	__u32 reserved;
};

/**
 * enum loom_layout_source - where one entry of a memref's layout comes from
 * @LOOM_LAYOUT_STATIC: the record's @value: a constant of the type
 * @LOOM_LAYOUT_OPERAND: launch operand @operand, a LOOM_ARG_INDEX one
 *	after the thread's inputs (its value, signed)
 * @LOOM_LAYOUT_NOT_PASSED: a '?' size no operand carries (a rank-1
 *	memref<?xT>: its base VA alone crosses); the view cannot be bounded
 * @LOOM_LAYOUT_ROW_MAJOR: a stride only: the product of the sizes after it
 *	(the identity layout's, which a '?' size after it leaves unknown
 *	until the launch)
 */
enum loom_layout_source {
	LOOM_LAYOUT_STATIC = 1,
	LOOM_LAYOUT_OPERAND = 2,
	LOOM_LAYOUT_NOT_PASSED = 3,
	LOOM_LAYOUT_ROW_MAJOR = 4,
};

/**
 * struct loom_layout_entry - one size, stride or offset (16 bytes)
 * @source: enum loom_layout_source; 0 in the entries beyond the rank
 * @operand: LOOM_LAYOUT_OPERAND: the launch operand; else zero
 * @value: LOOM_LAYOUT_STATIC: the value, in elements (a size at least 0);
 *	else zero
 */
struct loom_layout_entry {
	__u32 source;
	__u32 operand;
	__s64 value;
};

/* Highest rank a record describes: the device's coordinate limit. */
#define LOOM_MEMREF_MAX_RANK	4

/**
 * struct loom_image_memref - one memref argument of one thread (160 bytes)
 * @thread: index in .loom.threads
 * @arg: the argument (a LOOM_ARG_MEMREF_* one); its element type and so its
 *	element size is the argument's type
 * @rank: 1..LOOM_MEMREF_MAX_RANK
 * @reserved: must be zero
 * @offset: the first element's offset from the base VA, in elements
 * @sizes: each size, rank of them
 * @strides: each size's stride, in elements (row-major for a memref
 *	without a layout: the product of the sizes after it)
 *
 * Element [i0, ..., ik] of the view is the element at base VA + (offset +
 * sum of i_j * strides[j]) * element size.
 */
struct loom_image_memref {
	__u32 thread;
	__u8 arg;
	__u8 rank;
	__u16 reserved0;
	__u64 reserved;
	struct loom_layout_entry offset;
	struct loom_layout_entry sizes[LOOM_MEMREF_MAX_RANK];
	struct loom_layout_entry strides[LOOM_MEMREF_MAX_RANK];
};

#endif /* LOOM_IMAGE_H */
