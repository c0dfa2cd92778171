// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Emission: the ELF layout of program images, thread descriptors, launch
 * templates and their patches, the reader's validation of corrupt images
 * and host programs and the host-program interpreter (format/), and the
 * disassembler.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "check.h"
#include "compile.h"
#include "loom/loom.h"		/* LOOM_E_BAD_IMAGE */

#define DENSE "domain(#dataflow.thread_domain<dense>)"

static const char src[] =
	"dataflow.thread @vadd " DENSE "(%a: memref<?xi64>, %b: memref<?xi32>, %c: memref<?xi64>) ctrl(%ctl: none) iv(%i: index, %j: index) {\n"
	"  %x = memref.load %a[%i] : memref<?xi64>\n"
	"  %y = memref.load %b[%j] : memref<?xi32>\n"
	"  %w = arith.extsi %y : i32 to i64\n"
	"  %s = arith.addi %x, %w : i64\n"
	"  memref.store %s, %c[%i] : memref<?xi64>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n"
	"func.func @main() {\n"
	"  return\n"
	"}\n"
	"// -----\n"
	"dataflow.thread @kids domain(#dataflow.thread_domain<dynamic_work, work_item_arg = 1>)(%k: i64, %item: i64) ctrl(%ctl: none) {\n"
	"  %a = arith.addi %item, %k : i64\n"
	"  dataflow.work.spawn %a : i64\n"
	"  dataflow.work.spawn %item : i64\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

struct built {
	void *data;
	size_t size;
	struct loom_image_view v;
};

static int build_image_on(struct built *b, const char *text, bool strip,
			  unsigned w, unsigned h)
{
	struct compile_options o = { .width = w, .height = h };
	struct image_builder img;
	struct loom_source s;
	struct diag d;
	unsigned errors;
	char err[160];

	if (loom_source_from_memory(&s, "t.loom", text, strlen(text)))
		abort();
	diag_init(&d, &s, NULL, false);
	image_init(&img, w, h);
	img.strip = strip;
	errors = compile_source(&d, &o, &img);
	if (!errors)
		image_write(&img, &b->data, &b->size);
	image_free(&img);
	diag_free(&d);
	loom_source_free(&s);
	if (errors)
		return -1;
	if (loom_view_open(&b->v, b->data, b->size, err, sizeof(err)) ||
	    (b->v.sec[LOOM_SEC_HOST] &&
	     loom_view_check_host(&b->v, err, sizeof(err)))) {
		free(b->data);
		return -1;
	}
	return 0;
}

static int build_image(struct built *b, const char *text, bool strip)
{
	return build_image_on(b, text, strip, 4, 4);
}

static int build(struct built *b, const char *text)
{
	return build_image(b, text, false);
}

static uint32_t dword(const struct loom_image_view *v,
		      const struct loom_image_thread *t, uint32_t off)
{
	uint32_t x;

	memcpy(&x, v->sec[LOOM_SEC_TEMPLATES] + t->template_offset + off, 4);
	return x;
}

TEST(elf_layout)
{
	struct built b;
	Elf64_Ehdr eh;

	REQUIRE(build(&b, src) == 0);
	memcpy(&eh, b.data, sizeof(eh));
	CHECK(!memcmp(eh.e_ident, ELFMAG, SELFMAG));
	CHECK_EQ(ELFCLASS64, eh.e_ident[EI_CLASS]);
	CHECK_EQ(ELFDATA2LSB, eh.e_ident[EI_DATA]);
	CHECK_EQ(ET_EXEC, eh.e_type);
	CHECK_EQ(EM_NONE, eh.e_machine);
	CHECK_EQ(32, sizeof(struct loom_host_header));
	CHECK_EQ(16, sizeof(struct loom_host_func));
	CHECK_EQ(24, sizeof(struct loom_host_insn));
	CHECK_EQ(11, eh.e_shnum);	/* null, nine .loom.*, .shstrtab */
	REQUIRE(b.v.sec[LOOM_SEC_HOST]);
	CHECK_EQ(1, b.v.host.num_funcs);
	CHECK(!strcmp("main", loom_view_name(&b.v, loom_view_host_func(&b.v, 0).name)));
	CHECK_EQ(LOOM_HOST_RETURN, loom_view_host_insn(&b.v, 0).op);
	CHECK_EQ(LOOM_IMAGE_MAGIC, b.v.info.magic);
	CHECK_EQ(LOOM_IMAGE_VERSION, b.v.info.version);
	CHECK_EQ(2, b.v.info.num_threads);	/* across both units */
	CHECK_EQ(4, b.v.info.fabric_width);
	CHECK_EQ(4, b.v.info.fabric_height);
	for (int s = 0; s < LOOM_SEC_COUNT; s++)
		CHECK_EQ(0, (b.v.sec[s] - (const uint8_t *)b.data) % 8);
	free(b.data);
}

TEST(dense_thread_and_template)
{
	struct built b;
	struct loom_image_thread t;
	struct loom_fabric_config hdr;
	static const struct { uint32_t off; uint16_t kind, index; } want[] = {
		{ 8, LOOM_PATCH_CONFIG_VA, 0 },
		{ 0x18, LOOM_PATCH_OPERAND, 0 }, { 0x20, LOOM_PATCH_OPERAND, 1 },
		{ 0x28, LOOM_PATCH_OPERAND, 2 },
		{ 0x38, LOOM_PATCH_EXTENT, 0 }, { 0x40, LOOM_PATCH_EXTENT, 1 },
	};

	REQUIRE(build(&b, src) == 0);
	t = loom_view_thread(&b.v, 0);
	CHECK(!strcmp("vadd", loom_view_name(&b.v, t.name)));
	CHECK_EQ(LOOM_DOMAIN_DENSE, t.domain);
	CHECK_EQ(2, t.rank);
	CHECK_EQ(3, t.num_args);
	CHECK_EQ(LOOM_IMAGE_NO_WORK_ARG, t.work_item_arg);
	CHECK_EQ(LOOM_ARG_MEMREF_I64, t.arg_types[0]);
	CHECK_EQ(LOOM_ARG_MEMREF_I32, t.arg_types[1]);
	CHECK_EQ(0, t.child_capacity);
	memcpy(&hdr, b.v.sec[LOOM_SEC_CONFIGS] + t.config_offset, sizeof(hdr));
	CHECK_EQ(LOOM_CONFIG_MAGIC, hdr.magic);
	CHECK_EQ(LOOM_CONFIG_SIZE(16, hdr.num_ports), t.config_size);
	CHECK_EQ(5, hdr.num_ports);		/* 3 operands, 2 coordinates */
	/* LOAD_CONFIG, SET_OPERANDS(3), DISPATCH_DENSE(2) */
	CHECK_EQ(16 + 8 + 24 + 8 + 16, t.template_size);
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4), dword(&b.v, &t, 0));
	CHECK_EQ(t.config_size, dword(&b.v, &t, 4));
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 8), dword(&b.v, &t, 16));
	CHECK_EQ(3, dword(&b.v, &t, 20));
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 6), dword(&b.v, &t, 48));
	CHECK_EQ(2, dword(&b.v, &t, 52));
	REQUIRE_EQ(6, t.num_patches);
	for (unsigned k = 0; k < 6; k++) {
		struct loom_image_patch p = loom_view_patch(&b.v, t.patch_first + k);

		CHECK_EQ(want[k].off, p.offset);
		CHECK_EQ(want[k].kind, p.kind);
		CHECK_EQ(want[k].index, p.index);
	}
	free(b.data);
}

TEST(items_thread_and_template)
{
	struct built b;
	struct loom_image_thread t;
	uint32_t base;

	REQUIRE(build(&b, src) == 0);
	t = loom_view_thread(&b.v, 1);
	CHECK(!strcmp("kids", loom_view_name(&b.v, t.name)));
	CHECK_EQ(LOOM_DOMAIN_DYNAMIC_WORK, t.domain);
	CHECK_EQ(0, t.rank);
	CHECK_EQ(1, t.work_item_arg);
	CHECK_EQ(2, t.child_capacity);
	CHECK_EQ(0, t.config_offset % 8);
	base = 16 + 8 + 16;	/* LOAD_CONFIG, SET_OPERANDS(2) */
	CHECK_EQ(base + 32, t.template_size);
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8), dword(&b.v, &t, base));
	CHECK_EQ(2, dword(&b.v, &t, base + 24));	/* capacity baked */
	CHECK_EQ(0, dword(&b.v, &t, base + 28));
	REQUIRE_EQ(6, t.num_patches);
	CHECK_EQ(LOOM_PATCH_ITEM_COUNT, loom_view_patch(&b.v, t.patch_first + 3).kind);
	CHECK_EQ(base + 4, loom_view_patch(&b.v, t.patch_first + 3).offset);
	CHECK_EQ(LOOM_PATCH_PAYLOAD_VA, loom_view_patch(&b.v, t.patch_first + 4).kind);
	CHECK_EQ(base + 8, loom_view_patch(&b.v, t.patch_first + 4).offset);
	CHECK_EQ(LOOM_PATCH_RESULT_VA, loom_view_patch(&b.v, t.patch_first + 5).kind);
	CHECK_EQ(base + 16, loom_view_patch(&b.v, t.patch_first + 5).offset);
	free(b.data);
}

/* Flips one field of a valid image; the reader must refuse it. */
static bool rejects(const struct built *b, size_t off, const void *val,
		    size_t n, size_t size)
{
	uint8_t *copy = malloc(b->size);
	struct loom_image_view v;
	char err[160];
	int ret;

	if (!copy)
		abort();
	memcpy(copy, b->data, b->size);
	if (val)
		memcpy(copy + off, val, n);
	ret = loom_view_open(&v, copy, size, err, sizeof(err));
	if (!ret && v.sec[LOOM_SEC_HOST])
		ret = loom_view_check_host(&v, err, sizeof(err));
	free(copy);
	return ret == LOOM_E_BAD_IMAGE;
}

TEST(corrupt_images_are_rejected)
{
	struct built b;
	size_t threads, info;
	uint32_t big = 0x7fffffff, two = 2;
	uint8_t bad = 9;

	REQUIRE(build(&b, src) == 0);
	threads = b.v.sec[LOOM_SEC_THREADS] - (const uint8_t *)b.data;
	info = b.v.sec[LOOM_SEC_INFO] - (const uint8_t *)b.data;
	CHECK(!rejects(&b, 0, NULL, 0, b.size));
	CHECK(rejects(&b, 0, NULL, 0, 40));			/* truncated */
	CHECK(rejects(&b, 0, NULL, 0, b.size - 8));		/* no shdrs */
	CHECK(rejects(&b, 0, "\177ELG", 4, b.size));		/* not ELF */
	CHECK(rejects(&b, info, &big, 4, b.size));		/* magic */
	CHECK(rejects(&b, info + 4, &two, 4, b.size));		/* version */
	CHECK(rejects(&b, info + 8, &big, 4, b.size));		/* count */
	CHECK(rejects(&b, threads + offsetof(struct loom_image_thread, config_offset),
		      &big, 4, b.size));
	CHECK(rejects(&b, threads + offsetof(struct loom_image_thread, template_size),
		      &big, 4, b.size));
	CHECK(rejects(&b, threads + offsetof(struct loom_image_thread, name),
		      &big, 4, b.size));
	CHECK(rejects(&b, threads + offsetof(struct loom_image_thread, num_patches),
		      &big, 4, b.size));
	CHECK(rejects(&b, threads + offsetof(struct loom_image_thread, arg_types),
		      &bad, 1, b.size));
	CHECK(rejects(&b, b.v.sec[LOOM_SEC_PATCHES] - (const uint8_t *)b.data,
		      &big, 4, b.size));			/* patch offset */
	free(b.data);
}

/*
 * Every packet of a template is checked, as libloom always did: an
 * unknown opcode, or a packet longer than its template, is a bad image.
 */
TEST(template_packets_are_checked)
{
	struct built b;
	struct loom_image_thread t;
	size_t dispatch;
	uint32_t unknown = LOOM_PKT_HEADER(LOOM_PKT_OPCODE_COUNT, 6);
	uint32_t too_long = LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 7);

	REQUIRE(build(&b, src) == 0);
	t = loom_view_thread(&b.v, 0);
	dispatch = b.v.sec[LOOM_SEC_TEMPLATES] - (const uint8_t *)b.data +
		   t.template_offset + 48;	/* vadd's DISPATCH_DENSE */
	CHECK(rejects(&b, dispatch, &unknown, 4, b.size));
	CHECK(rejects(&b, dispatch, &too_long, 4, b.size));
	free(b.data);
}

/*
 * A launch passes exactly as many arguments and extents as its thread
 * has; the host checker rejects any other count (libloom always did,
 * loomc's reader did not).
 */
TEST(host_launch_counts_are_checked)
{
	static const char *const text =
		"dataflow.thread @one " DENSE "(%a: memref<?xi64>) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %v = arith.constant 7 : i64\n"
		"  memref.store %v, %a[%i] : memref<?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n"
		"func.func @main() {\n"
		"  %n = arith.constant 4 : index\n"
		"  %a = memref.alloc(%n) : memref<?xi64>\n"
		"  %t = dataflow.thread.launch @one(%a) grid(%n) : (memref<?xi64>) -> !dataflow.thread_token\n"
		"  dataflow.thread.wait %t : !dataflow.thread_token\n"
		"  return\n"
		"}\n";
	struct built b;
	size_t list;
	uint32_t two = 2, zero = 0;

	REQUIRE(build(&b, text) == 0);
	/* the only launch's list: thread, 1, %a, 0 waits, 1, %n */
	REQUIRE_EQ(6, b.v.host.num_list);
	list = b.v.sec[LOOM_SEC_HOST] - (const uint8_t *)b.data +
	       b.v.len[LOOM_SEC_HOST] - 6 * 4;
	CHECK(!rejects(&b, 0, NULL, 0, b.size));
	CHECK(rejects(&b, list + 4, &zero, 4, b.size));	/* no argument */
	CHECK(rejects(&b, list + 16, &two, 4, b.size));	/* two extents */
	free(b.data);
}

/*
 * A thread without arguments has no SET_OPERANDS: a job starts with none.
 * loomc and libloom's builder share the one writer, so this holds for both
 * (libloom's builder wrote an empty SET_OPERANDS before).
 */
TEST(no_set_operands_without_arguments)
{
	struct loom_image_builder *w;
	struct loom_image_view v;
	struct loom_image_thread t;
	struct built b;
	void *data;
	size_t size;

	REQUIRE(build(&b, src) == 0);
	t = loom_view_thread(&b.v, 0);
	REQUIRE_EQ(0, loom_builder_new(4, 4, &w));
	REQUIRE_EQ(0, loom_builder_add_dense(w, "none", 1, NULL, 0,
		   b.v.sec[LOOM_SEC_CONFIGS] + t.config_offset, t.config_size));
	REQUIRE_EQ(0, loom_builder_finish(w, &data, &size));
	loom_builder_free(w);
	REQUIRE_EQ(0, loom_view_open(&v, data, size, NULL, 0));
	t = loom_view_thread(&v, 0);
	CHECK_EQ(16 + 16, t.template_size);	/* LOAD_CONFIG, DISPATCH_DENSE(1) */
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 4), dword(&v, &t, 16));
	CHECK_EQ(2, t.num_patches);		/* the config VA, one extent */
	free(data);
	free(b.data);
}

TEST(disassembler)
{
	struct built b;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	REQUIRE(build(&b, src) == 0);
	out = open_memstream(&text, &len);
	REQUIRE(out);
	CHECK_EQ(0, image_disasm(out, "test.lcb", b.data, b.size));
	fclose(out);
	CHECK(strstr(text, "image: 2 threads, fabric 4x4"));
	CHECK(strstr(text, "thread @vadd dense rank 2 (memref<?xi64>, memref<?xi32>, memref<?xi64>)"));
	CHECK(strstr(text, "thread @kids dynamic_work (i64, item i64) child_capacity 2"));
	CHECK(strstr(text, "DISPATCH_ITEMS"));
	CHECK(strstr(text, "patch 0040  extent 1"));
	CHECK(strstr(text, "LOAD"));
	free(text);
	free(b.data);
}

/*
 * Each memref input's record (.loom.memrefs): its sizes, strides and
 * offset, constant or the launch operand the ABI passes them in, as the
 * reader gives them back and the listing prints them.
 */
TEST(memref_records)
{
	static const char vsrc[] =
		"dataflow.thread @v " DENSE "(%a: memref<?x?xi64>, %n: index, "
		"%t: memref<4x4xf32, strided<[?, 1], offset: ?>>, %o: memref<?xf32>) "
		"ctrl(%ctl: none) iv(%i: index) {\n"
		"  %x = memref.load %t[%i, %i] : memref<4x4xf32, strided<[?, 1], offset: ?>>\n"
		"  memref.store %x, %o[%i] : memref<?xf32>\n"
		"  %y = memref.load %a[%i, %n] : memref<?x?xi64>\n"
		"  memref.store %y, %a[%n, %i] : memref<?x?xi64>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n";
	struct loom_image_memref m;
	struct built b;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	REQUIRE(build(&b, vsrc) == 0);
	REQUIRE(b.v.sec[LOOM_SEC_MEMREFS]);
	/* operands: a, n, t, o, a's sizes 0 and 1, t's offset and stride 0 */
	REQUIRE(loom_view_memref(&b.v, 0, 0, &m));
	CHECK_EQ(2, m.rank);
	CHECK_EQ(LOOM_LAYOUT_OPERAND, m.sizes[0].source);
	CHECK_EQ(4, m.sizes[0].operand);
	CHECK_EQ(5, m.sizes[1].operand);
	CHECK_EQ(LOOM_LAYOUT_ROW_MAJOR, m.strides[0].source);
	CHECK_EQ(LOOM_LAYOUT_STATIC, m.strides[1].source);
	CHECK_EQ(1, m.strides[1].value);
	CHECK_EQ(LOOM_LAYOUT_STATIC, m.offset.source);
	CHECK_EQ(0, m.offset.value);
	CHECK(!loom_view_memref(&b.v, 0, 1, &m));
	REQUIRE(loom_view_memref(&b.v, 0, 2, &m));
	CHECK_EQ(LOOM_LAYOUT_STATIC, m.sizes[0].source);
	CHECK_EQ(4, m.sizes[1].value);
	CHECK_EQ(LOOM_LAYOUT_OPERAND, m.offset.source);
	CHECK_EQ(6, m.offset.operand);
	CHECK_EQ(LOOM_LAYOUT_OPERAND, m.strides[0].source);
	CHECK_EQ(7, m.strides[0].operand);
	CHECK_EQ(1, m.strides[1].value);
	REQUIRE(loom_view_memref(&b.v, 0, 3, &m));
	CHECK_EQ(1, m.rank);
	CHECK_EQ(LOOM_LAYOUT_NOT_PASSED, m.sizes[0].source);
	CHECK_EQ(1, m.strides[0].value);
	out = open_memstream(&text, &len);
	REQUIRE(out);
	CHECK_EQ(0, image_disasm(out, "test.lcb", b.data, b.size));
	fclose(out);
	CHECK(strstr(text, "memref argument 0: rank 2, sizes [operand 4, operand 5], strides [row-major, 1], offset 0\n"));
	CHECK(strstr(text, "memref argument 2: rank 2, sizes [4, 4], strides [operand 7, 1], offset operand 6\n"));
	CHECK(strstr(text, "memref argument 3: rank 1, sizes [not passed], strides [1], offset 0\n"));
	free(text);
	free(b.data);
}

/* f32 in the listing: argument types, PE names, host instructions. */
TEST(disassembler_f32)
{
	static const char fsrc[] =
		"dataflow.thread @f " DENSE "(%m: memref<?xf32>, %s: f32) ctrl(%ctl: none) iv(%i: index) {\n"
		"  %v = memref.load %m[%i] : memref<?xf32>\n"
		"  %r = math.fma %v, %s, %v : f32\n"
		"  memref.store %r, %m[%i] : memref<?xf32>\n"
		"  dataflow.thread.yield %ctl : none\n"
		"}\n"
		"func.func @main(%x: f32) {\n"
		"  %p = arith.cmpf uno, %x, %x : f32\n"
		"  %k = arith.fptoui %x : f32 to i64\n"
		"  loom.print %x : f32\n"
		"  return\n"
		"}\n";
	struct built b;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	REQUIRE(build(&b, fsrc) == 0);
	out = open_memstream(&text, &len);
	REQUIRE(out);
	CHECK_EQ(0, image_disasm(out, "test.lcb", b.data, b.size));
	fclose(out);
	CHECK(strstr(text, "thread @f dense rank 1 (memref<?xf32>, f32)"));
	CHECK(strstr(text, "FMA"));
	CHECK(strstr(text, "= FUNO.f32 r0, r0"));
	CHECK(strstr(text, "= FTOUI.i64 r0"));
	free(text);
	free(b.data);
}

/*
 * The host checker takes f32 ALU instructions at I32 only, conversions
 * at either width, and no operation past FTOUI.
 */
TEST(host_f32_alu_types_are_checked)
{
	static const char *const text =
		"func.func @main(%x: f32) {\n"
		"  %n = arith.negf %x : f32\n"
		"  %k = arith.fptosi %n : f32 to i32\n"
		"  return\n"
		"}\n";
	struct built b;
	size_t insns;
	uint8_t i64 = LOOM_TYPE_I64, past = LOOM_OP_COUNT;

	REQUIRE(build(&b, text) == 0);
	REQUIRE_EQ(3, b.v.host.num_insns);	/* FNEG, FTOSI, RETURN */
	insns = b.v.sec[LOOM_SEC_HOST] - (const uint8_t *)b.data +
		sizeof(struct loom_host_header) +
		b.v.host.num_funcs * sizeof(struct loom_host_func);
	CHECK_EQ(LOOM_OP_FNEG, loom_view_host_insn(&b.v, 0).aux);
	CHECK(!rejects(&b, 0, NULL, 0, b.size));
	CHECK(rejects(&b, insns + offsetof(struct loom_host_insn, type),
		      &i64, 1, b.size));			/* FNEG.i64 */
	CHECK(!rejects(&b, insns + sizeof(struct loom_host_insn) +
		       offsetof(struct loom_host_insn, type), &i64, 1, b.size));
	CHECK(rejects(&b, insns + offsetof(struct loom_host_insn, aux),
		      &past, 1, b.size));
	free(b.data);
}

/* A backend that records what format/interp.c asks of it. */
struct seen {
	int64_t printed[4];
	int prints, checks;
	int64_t lhs, rhs;
};

static void seen_print(void *ctx, enum loom_arg_type type, int64_t v)
{
	struct seen *s = ctx;

	if (type == LOOM_ARG_I32 && s->prints < 4)
		s->printed[s->prints++] = v;
}

static int seen_check_failed(void *ctx, int64_t lhs, int64_t rhs)
{
	struct seen *s = ctx;

	s->checks++;
	s->lhs = lhs;
	s->rhs = rhs;
	return s->checks == 2 ? -EDOM : 0;	/* the second one ends the run */
}

/*
 * The interpreter: i32 arithmetic is the PE's (sign-extended), a failed
 * CHECK goes to the backend, which may carry on or end the run; the
 * failing instruction is reported.
 */
TEST(interpreter_over_a_backend)
{
	static const char *const text =
		"func.func @main() {\n"
		"  %a = arith.constant 2147483647 : i32\n"
		"  %b = arith.constant 1 : i32\n"
		"  %c = arith.addi %a, %b : i32\n"
		"  loom.print %c : i32\n"
		"  loom.check %c, %b : i32\n"
		"  loom.check %b, %c : i32\n"
		"  loom.print %b : i32\n"
		"  return\n"
		"}\n";
	static const struct loom_interp_backend be = {
		.print = seen_print, .check_failed = seen_check_failed,
	};
	struct loom_interp_stats st;
	struct seen s = { .prints = 0 };
	struct built b;

	REQUIRE(build(&b, text) == 0);
	REQUIRE_EQ(0, loom_view_find_host_func(&b.v, "main"));
	CHECK_EQ(-EDOM, loom_interp_run(&b.v, 0, &be, &s, &st));
	CHECK_EQ(1, s.prints);
	CHECK_EQ(INT32_MIN, s.printed[0]);	/* wrapped, sign-extended */
	CHECK_EQ(2, s.checks);
	CHECK_EQ(1, s.lhs);
	CHECK_EQ(INT32_MIN, s.rhs);
	CHECK(st.failed_insn >= 0);
	CHECK_EQ(LOOM_HOST_CHECK, loom_view_host_insn(&b.v, st.failed_insn).op);
	CHECK_EQ((uint64_t)st.failed_insn + 1, st.insns);	/* from instruction 0 */
	CHECK_EQ(-1, loom_view_find_host_func(&b.v, "nope"));
	free(b.data);
}

/* Without host functions there is no .loom.host. */
TEST(no_host_section_without_host_functions)
{
	struct built b;
	Elf64_Ehdr eh;

	REQUIRE(build(&b, strstr(src, "dataflow.thread @kids")) == 0);
	memcpy(&eh, b.data, sizeof(eh));
	CHECK_EQ(9, eh.e_shnum);	/* the source map, no host program */
	CHECK(!b.v.sec[LOOM_SEC_HOST]);
	free(b.data);
}

/* Loaders find threads by name: a name twice across units is an error. */
TEST(duplicate_thread_names)
{
	char text[2048];
	struct built b;
	const char *one = strstr(src, "func.func");

	snprintf(text, sizeof(text), "%.*s// -----\n%.*s", (int)(one - src),
		 src, (int)(one - src), src);
	CHECK_EQ(-1, build(&b, text));
}

/* ------------------------------------------------------- source map --- */

static int lookup(const struct loom_image_view *v, unsigned kind,
		  unsigned unit, unsigned at, unsigned slot, unsigned out,
		  struct loom_view_loc *loc)
{
	struct loom_srcmap_entry key = { .kind = kind, .unit = unit, .at = at,
					 .slot = slot, .out = out };

	return loom_view_source(v, &key, loc);
}

static const struct loom_tile_config *slot_of(const struct loom_image_view *v,
					      const struct loom_image_thread *t,
					      const struct loom_fabric_config *c,
					      unsigned tile, unsigned k)
{
	unsigned slots = LOOM_CONFIG_SLOTS(c->version, c->slots);

	return (const void *)(v->sec[LOOM_SEC_CONFIGS] + t->config_offset +
			      sizeof(*c) + (tile * slots + k) *
			      sizeof(struct loom_tile_config));
}

/*
 * Every used slot, every port and every switch output that carries a
 * value has its source line; the ones we know are where the source says.
 */
TEST(source_map_locates_slots_ports_routes)
{
	struct built b;
	struct loom_image_thread t;
	struct loom_fabric_config c;
	struct loom_view_loc loc;
	unsigned slots, loads = 0, adds = 0, routes = 0;

	REQUIRE(build(&b, src) == 0);
	REQUIRE(b.v.sec[LOOM_SEC_SRCMAP]);
	t = loom_view_thread(&b.v, 0);
	memcpy(&c, b.v.sec[LOOM_SEC_CONFIGS] + t.config_offset, sizeof(c));
	slots = LOOM_CONFIG_SLOTS(c.version, c.slots);
	REQUIRE_EQ(0, lookup(&b.v, LOOM_SRCMAP_THREAD, 0, 0, 0, 0, &loc));
	CHECK(!strcmp("t.loom", loc.file));
	CHECK_EQ(1, loc.line);
	CHECK_EQ(17, loc.col);		/* "@vadd" */
	for (unsigned tile = 0; tile < 16; tile++)
		for (unsigned k = 0; k < slots; k++) {
			const struct loom_tile_config *tc = slot_of(&b.v, &t, &c, tile, k);

			for (unsigned o = 0; o < LOOM_ROUTE_OUTS; o++)
				if (tc->route[o] != LOOM_SRC_NONE) {
					CHECK_EQ(0, lookup(&b.v, LOOM_SRCMAP_ROUTE, 0, tile, k, o, &loc));
					routes++;
				}
			if (tc->op == LOOM_OP_NOP) {
				CHECK_EQ(-ENOENT, lookup(&b.v, LOOM_SRCMAP_SLOT, 0, tile, k, 0, &loc));
				continue;
			}
			REQUIRE_EQ(0, lookup(&b.v, LOOM_SRCMAP_SLOT, 0, tile, k, 0, &loc));
			if (tc->op == LOOM_OP_LOAD && !strcmp(loc.name, "x")) {
				CHECK_EQ(2, loc.line);
				CHECK_EQ(8, loc.col);
				loads++;
			}
			/* the others compute addresses, at their load or store */
			if (tc->op == LOOM_OP_ADD && !strcmp("s", loc.name)) {
				CHECK_EQ(5, loc.line);
				CHECK_EQ(8, loc.col);
				adds++;
			}
		}
	CHECK_EQ(1, loads);
	CHECK_EQ(1, adds);
	CHECK(routes > 0);
	for (unsigned i = 0; i < c.num_ports; i++)
		CHECK_EQ(0, lookup(&b.v, LOOM_SRCMAP_PORT, 0, i, 0, 0, &loc));
	CHECK_EQ(-ENOENT, lookup(&b.v, LOOM_SRCMAP_PORT, 0, c.num_ports, 0, 0, &loc));
	/* the host program's one instruction: "return" on line 10 */
	REQUIRE_EQ(0, lookup(&b.v, LOOM_SRCMAP_HOST, 0, 0, 0, 0, &loc));
	CHECK_EQ(10, loc.line);
	CHECK_EQ(3, loc.col);
	CHECK(!strcmp("", loc.name));
	CHECK_EQ(-ENOENT, lookup(&b.v, LOOM_SRCMAP_HOST, 1, 0, 0, 0, &loc));
	free(b.data);
}

/* examples/dot.loom's thread, which routes on 2x2 only on link channels */
static const char dot_src[] =
	"dataflow.thread private @partial_dot domain(#dataflow.thread_domain<dense>)(%x: memref<?xf32>, %y: memref<?xf32>, %sums: memref<?xf32>, %maxes: memref<?xf32>, %chunk: index) ctrl(%ctl: none) iv(%p: index) {\n"
	"  %c1 = arith.constant 1 : index\n"
	"  %zero = arith.constant 0.0 : f32\n"
	"  %ninf = arith.constant 0xFF800000 : f32\n"
	"  %lo = arith.muli %p, %chunk : index\n"
	"  %hi = arith.addi %lo, %chunk : index\n"
	"  %sum, %max = scf.for %j = %lo to %hi step %c1 iter_args(%acc = %zero, %m = %ninf) -> (f32, f32) {\n"
	"    %a = memref.load %x[%j] : memref<?xf32>\n"
	"    %b = memref.load %y[%j] : memref<?xf32>\n"
	"    %ab = arith.mulf %a, %b : f32\n"
	"    %next = arith.addf %acc, %ab : f32\n"
	"    %mx = arith.maximumf %m, %ab : f32\n"
	"    scf.yield %next, %mx : f32, f32\n"
	"  }\n"
	"  memref.store %sum, %sums[%p] : memref<?xf32>\n"
	"  memref.store %max, %maxes[%p] : memref<?xf32>\n"
	"  dataflow.thread.yield %ctl : none\n"
	"}\n";

/*
 * With link channels, a route that reads channel k of a link is traced
 * back through slot k of the tile that sets it: every switch output that
 * carries a value has its source line, those of channels included.
 */
TEST(source_map_follows_link_channels)
{
	struct built b;
	struct loom_image_thread t;
	struct loom_fabric_config c;
	struct loom_view_loc loc;
	unsigned slots, chans = 0;

	REQUIRE(build_image_on(&b, dot_src, false, 2, 2) == 0);
	t = loom_view_thread(&b.v, 0);
	memcpy(&c, b.v.sec[LOOM_SEC_CONFIGS] + t.config_offset, sizeof(c));
	CHECK_EQ(LOOM_CONFIG_VERSION_CHANNELS, c.version);
	slots = LOOM_CONFIG_SLOTS(c.version, c.slots);
	for (unsigned tile = 0; tile < 4; tile++)
		for (unsigned k = 0; k < slots; k++) {
			const struct loom_tile_config *tc = slot_of(&b.v, &t, &c, tile, k);

			for (unsigned o = 0; o < LOOM_ROUTE_OUTS; o++) {
				if (tc->route[o] == LOOM_SRC_NONE)
					continue;
				chans += LOOM_SRC_IS_CHAN(tc->route[o]);
				CHECK_EQ(0, lookup(&b.v, LOOM_SRCMAP_ROUTE, 0, tile, k, o, &loc));
				CHECK(loc.line >= 1 && loc.line <= 18);
			}
		}
	CHECK(chans > 0);
	free(b.data);
}

/* A loop's instructions and the check in its body: each its own line. */
TEST(source_map_host_lines)
{
	static const char prog[] =
		"func.func @main() {\n"
		"  %c0 = arith.constant 0 : index\n"
		"  %c1 = arith.constant 1 : index\n"
		"  %n = arith.constant 4 : index\n"
		"  scf.for %i = %c0 to %n step %c1 {\n"
		"    loom.check %i, %i : index\n"
		"  }\n"
		"  return\n"
		"}\n";
	unsigned fors = 0, checks = 0;
	struct loom_view_loc loc;
	struct built b;

	REQUIRE(build(&b, prog) == 0);
	for (unsigned i = 0; i < b.v.host.num_insns; i++) {
		struct loom_host_insn x = loom_view_host_insn(&b.v, i);

		REQUIRE_EQ(0, lookup(&b.v, LOOM_SRCMAP_HOST, i, 0, 0, 0, &loc));
		if (x.op == LOOM_HOST_FOR || x.op == LOOM_HOST_END_FOR) {
			CHECK_EQ(5, loc.line);
			fors++;
		}
		if (x.op == LOOM_HOST_CHECK) {
			CHECK_EQ(6, loc.line);
			CHECK_EQ(5, loc.col);
			checks++;
		}
	}
	CHECK_EQ(2, fors);
	CHECK_EQ(1, checks);
	free(b.data);
}

/*
 * --strip: no .loom.srcmap, and every other section byte for byte the
 * unstripped image's; both images are the same on every build.
 */
TEST(strip_and_determinism)
{
	struct built full, again, stripped;
	struct loom_view_loc loc;
	Elf64_Ehdr eh;

	REQUIRE(build(&full, src) == 0);
	REQUIRE(build(&again, src) == 0);
	REQUIRE(build_image(&stripped, src, true) == 0);
	CHECK_EQ(full.size, again.size);
	CHECK(full.size == again.size && !memcmp(full.data, again.data, full.size));
	CHECK(!stripped.v.sec[LOOM_SEC_SRCMAP]);
	memcpy(&eh, stripped.data, sizeof(eh));
	CHECK_EQ(10, eh.e_shnum);
	CHECK_EQ(-ENOENT, lookup(&stripped.v, LOOM_SRCMAP_THREAD, 0, 0, 0, 0, &loc));
	CHECK(stripped.size < full.size);
	for (int s = 0; s < LOOM_SEC_COUNT; s++) {
		if (s == LOOM_SEC_SRCMAP)
			continue;
		CHECK_EQ(full.v.len[s], stripped.v.len[s]);
		CHECK(!memcmp(full.v.sec[s], stripped.v.sec[s], full.v.len[s]));
	}
	free(full.data);
	free(again.data);
	free(stripped.data);
}

/* A source map that lies is a bad image, like any other section. */
TEST(corrupt_source_maps_are_rejected)
{
	struct built b;
	size_t map, first;
	struct loom_srcmap_header h;
	uint32_t big = 0x7fffffff;
	uint8_t bad = 9;

	REQUIRE(build(&b, src) == 0);
	map = b.v.sec[LOOM_SEC_SRCMAP] - (const uint8_t *)b.data;
	first = map + sizeof(h);
	memcpy(&h, b.v.sec[LOOM_SEC_SRCMAP], sizeof(h));
	REQUIRE(h.num_entries > 2);
	CHECK(!rejects(&b, 0, NULL, 0, b.size));
	CHECK(rejects(&b, map, &big, 4, b.size));		/* magic */
	CHECK(rejects(&b, map + 8, &big, 4, b.size));		/* entries */
	CHECK(rejects(&b, map + 12, &big, 4, b.size));		/* file */
	CHECK(rejects(&b, first, &bad, 1, b.size));		/* kind */
	CHECK(rejects(&b, first + 3, &bad, 1, b.size));	/* reserved */
	CHECK(rejects(&b, first + offsetof(struct loom_srcmap_entry, unit),
		      &big, 4, b.size));			/* thread */
	CHECK(rejects(&b, first + offsetof(struct loom_srcmap_entry, name),
		      &big, 4, b.size));			/* name */
	/* the second entry's key copied over the first: out of order */
	CHECK(rejects(&b, first, b.v.sec[LOOM_SEC_SRCMAP] + sizeof(h) +
		      2 * sizeof(struct loom_srcmap_entry), 12, b.size));
	free(b.data);
}

int main(void)
{
	RUN(elf_layout);
	RUN(dense_thread_and_template);
	RUN(template_packets_are_checked);
	RUN(host_launch_counts_are_checked);
	RUN(no_set_operands_without_arguments);
	RUN(items_thread_and_template);
	RUN(corrupt_images_are_rejected);
	RUN(disassembler);
	RUN(memref_records);
	RUN(disassembler_f32);
	RUN(host_f32_alu_types_are_checked);
	RUN(duplicate_thread_names);
	RUN(no_host_section_without_host_functions);
	RUN(interpreter_over_a_backend);
	RUN(source_map_locates_slots_ports_routes);
	RUN(source_map_follows_link_channels);
	RUN(source_map_host_lines);
	RUN(strip_and_determinism);
	RUN(corrupt_source_maps_are_rejected);
	return checks_done();
}
