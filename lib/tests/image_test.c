// SPDX-License-Identifier: MIT
/*
 * image_test: program images without a device -- builder -> loader round
 * trip, every malformed-image case the loader must reject, thread lookup,
 * the builder's own rejections, the launch checks that run before any
 * submission (on a fake device whose fd is invalid; a dynamic-work launch
 * and a device-adapter run on one without LOOM_CAP_ITEMS), error strings and
 * loom_source_iv().
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loom_device.h"
#include "device_internal.h"
#include "loom_format.h"

#define W 4
#define H 4

static unsigned char cfg_vadd[8192], cfg_tree[8192];
static size_t vadd_size, tree_size;

/*
 * A configuration image the loader accepts: header, idle tiles and
 * @ports port bindings (the device would judge the graph; images only
 * carry it).  Built here so host tests need nothing from the engine.
 */
static size_t make_config(void *buf, unsigned w, unsigned h, unsigned ports)
{
	struct loom_fabric_config c = { .magic = LOOM_CONFIG_MAGIC,
		.version = LOOM_CONFIG_VERSION, .width = w, .height = h,
		.num_ports = ports };
	size_t n = LOOM_CONFIG_SIZE((size_t)w * h, ports);

	memset(buf, 0, n);
	memcpy(buf, &c, sizeof(c));
	return n;
}

static const enum loom_arg_type vadd_types[3] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64, LOOM_ARG_MEMREF_I64,
};
static const enum loom_arg_type lin_types[3] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_INDEX, LOOM_ARG_I32,
};
static const enum loom_arg_type tree_types[2] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_I64,
};

/* A valid image: vadd (rank 1), lin3 (rank 3), tree (dynamic work). */
static void *good_image(size_t *size)
{
	struct loom_image_builder *b;
	void *bytes = NULL;

	if (loom_builder_new(W, H, &b))
		return NULL;
	if (loom_builder_add_dense(b, "vadd", 1, vadd_types, 3, cfg_vadd, vadd_size) ||
	    loom_builder_add_dense(b, "lin3", 3, lin_types, 3, cfg_vadd, vadd_size) ||
	    loom_builder_add_dynamic(b, "tree", tree_types, 2, 1, 8, cfg_tree, tree_size) ||
	    loom_builder_finish(b, &bytes, size))
		bytes = NULL;
	loom_builder_free(b);
	return bytes;
}

/* Offset and size of section @name in an image, or -1. */
static long section(const unsigned char *img, const char *name, size_t *size)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, str;

	memcpy(&eh, img, sizeof(eh));
	memcpy(&str, img + eh.e_shoff + eh.e_shstrndx * sizeof(sh), sizeof(sh));
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, img + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (!strcmp((const char *)img + str.sh_offset + sh.sh_name, name)) {
			if (size)
				*size = sh.sh_size;
			return sh.sh_offset;
		}
	}
	return -1;
}

/* Byte offset of field @off of thread @i in .loom.threads. */
static long thread_field(const unsigned char *img, unsigned i, size_t off)
{
	return section(img, LOOM_IMAGE_SECTION_THREADS, NULL) +
	       i * sizeof(struct loom_image_thread) + off;
}

static int load(const void *bytes, size_t size)
{
	struct loom_image *img = NULL;
	int ret = loom_image_load(bytes, size, &img);

	loom_image_free(img);
	return ret;
}

TEST(round_trip)
{
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;
	struct loom_thread_info ti;
	unsigned w, h;

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	CHECK_EQ(3, loom_image_num_threads(img));
	loom_image_fabric(img, &w, &h);
	CHECK_EQ(W, w);
	CHECK_EQ(H, h);

	REQUIRE_EQ(0, loom_image_thread(img, "vadd", &ti));
	CHECK(!strcmp(ti.name, "vadd"));
	CHECK_EQ(0, ti.index);
	CHECK_EQ(LOOM_DOMAIN_DENSE, ti.domain);
	CHECK_EQ(1, ti.rank);
	CHECK_EQ(3, ti.num_args);
	CHECK_EQ(LOOM_ARG_MEMREF_I64, ti.arg_types[2]);
	CHECK_EQ(-1, ti.work_item_arg);

	REQUIRE_EQ(0, loom_image_thread(img, "lin3", &ti));
	CHECK_EQ(3, ti.rank);
	CHECK_EQ(LOOM_ARG_INDEX, ti.arg_types[1]);
	CHECK_EQ(LOOM_ARG_I32, ti.arg_types[2]);

	REQUIRE_EQ(0, loom_image_thread(img, "tree", &ti));
	CHECK_EQ(LOOM_DOMAIN_DYNAMIC_WORK, ti.domain);
	CHECK_EQ(0, ti.rank);
	CHECK_EQ(1, ti.work_item_arg);
	CHECK_EQ(8, ti.child_capacity);

	CHECK_EQ(LOOM_E_NO_THREAD, loom_image_thread(img, "nope", &ti));
	CHECK_EQ(LOOM_E_NO_THREAD, loom_image_thread(img, "", &ti));
	CHECK_EQ(0, loom_image_thread_at(img, 2, &ti));
	CHECK(!strcmp(ti.name, "tree"));
	CHECK_EQ(-EINVAL, loom_image_thread_at(img, 3, &ti));
	loom_image_free(img);
	free(bytes);
}

/* The templates: lin3 is LOAD_CONFIG, SET_OPERANDS(3), DISPATCH_DENSE(3). */
TEST(template_and_patches)
{
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;
	const struct loom_image_thread *t;
	uint32_t hdr[3];

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	t = loom_image_find(img, "lin3");
	REQUIRE(t);
	CHECK_EQ(4 * (4 + 8 + 8), t->template_size);
	CHECK_EQ(1 + 3 + 3, t->num_patches);
	memcpy(&hdr[0], img->templates + t->template_offset, 4);
	memcpy(&hdr[1], img->templates + t->template_offset + 16, 4);
	memcpy(&hdr[2], img->templates + t->template_offset + 48, 4);
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4), hdr[0]);
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 8), hdr[1]);
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 8), hdr[2]);
	CHECK_EQ(LOOM_PATCH_CONFIG_VA, img->patches[t->patch_first].kind);
	CHECK_EQ(LOOM_PATCH_EXTENT, img->patches[t->patch_first + 6].kind);
	CHECK_EQ(2, img->patches[t->patch_first + 6].index);
	CHECK_EQ(72, img->patches[t->patch_first + 6].offset);

	t = loom_image_find(img, "tree");
	REQUIRE(t);
	/* LOAD_CONFIG (16 bytes), SET_OPERANDS with two operands (24) */
	memcpy(&hdr[0], img->templates + t->template_offset + 40, 4);
	CHECK_EQ(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8), hdr[0]);
	CHECK_EQ(1 + 2 + 3, t->num_patches);
	loom_image_free(img);
	free(bytes);
}

TEST(every_truncation_rejected)
{
	size_t size;
	unsigned char *bytes = good_image(&size);

	REQUIRE(bytes);
	for (size_t n = 0; n < size; n++)
		if (load(bytes, n) != LOOM_E_BAD_IMAGE) {
			CHECK_EQ(LOOM_E_BAD_IMAGE, load(bytes, n));
			break;
		}
	CHECK_EQ(0, load(bytes, size));
	free(bytes);
}

/* Applies one corruption to a fresh good image; must be LOOM_E_BAD_IMAGE. */
struct corruption {
	const char *what;
	void (*apply)(unsigned char *img, size_t size);
};

static void put32(unsigned char *img, long off, uint32_t v) { memcpy(img + off, &v, 4); }
static void put16(unsigned char *img, long off, uint16_t v) { memcpy(img + off, &v, 2); }
static void put64v(unsigned char *img, long off, uint64_t v) { memcpy(img + off, &v, 8); }

#define EH(field) offsetof(Elf64_Ehdr, field)
#define TH(i, field) thread_field(img, i, offsetof(struct loom_image_thread, field))
#define INFO(field) (section(img, LOOM_IMAGE_SECTION_INFO, NULL) + \
		     (long)offsetof(struct loom_image_info, field))

/* Section header @i's field at @off. */
static long shdr_field(const unsigned char *img, const char *name, size_t off)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, str;

	memcpy(&eh, img, sizeof(eh));
	memcpy(&str, img + eh.e_shoff + eh.e_shstrndx * sizeof(sh), sizeof(sh));
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, img + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (!strcmp((const char *)img + str.sh_offset + sh.sh_name, name))
			return eh.e_shoff + i * sizeof(sh) + off;
	}
	return 0;
}

static long patch_at(const unsigned char *img, unsigned i, size_t off)
{
	return section(img, LOOM_IMAGE_SECTION_PATCHES, NULL) +
	       i * sizeof(struct loom_image_patch) + off;
}

static void c_magic(unsigned char *img, size_t s) { (void)s; img[1] = 'X'; }
static void c_class(unsigned char *img, size_t s) { (void)s; img[EI_CLASS] = ELFCLASS32; }
static void c_endian(unsigned char *img, size_t s) { (void)s; img[EI_DATA] = ELFDATA2MSB; }
static void c_type(unsigned char *img, size_t s) { (void)s; put16(img, EH(e_type), ET_REL); }
static void c_machine(unsigned char *img, size_t s) { (void)s; put16(img, EH(e_machine), EM_X86_64); }
static void c_shentsize(unsigned char *img, size_t s) { (void)s; put16(img, EH(e_shentsize), 40); }
static void c_shstrndx(unsigned char *img, size_t s) { (void)s; put16(img, EH(e_shstrndx), 99); }
static void c_shoff(unsigned char *img, size_t s) { put64v(img, EH(e_shoff), s - 8); }
static void c_shoff_wrap(unsigned char *img, size_t s) { (void)s; put64v(img, EH(e_shoff), ~0ULL - 16); }
static void c_sec_offset(unsigned char *img, size_t s)
{
	put64v(img, shdr_field(img, LOOM_IMAGE_SECTION_CONFIGS, offsetof(Elf64_Shdr, sh_offset)), s);
}
static void c_sec_size(unsigned char *img, size_t s)
{
	put64v(img, shdr_field(img, LOOM_IMAGE_SECTION_TEMPLATES, offsetof(Elf64_Shdr, sh_size)), s);
}
static void c_sec_name(unsigned char *img, size_t s)
{
	(void)s;
	put32(img, shdr_field(img, LOOM_IMAGE_SECTION_INFO, offsetof(Elf64_Shdr, sh_name)), 0x10000);
}
static void c_missing(unsigned char *img, size_t s)
{
	long off = shdr_field(img, LOOM_IMAGE_SECTION_PATCHES, offsetof(Elf64_Shdr, sh_name));
	Elf64_Ehdr eh;
	Elf64_Shdr str;
	uint32_t name;

	(void)s;
	memcpy(&eh, img, sizeof(eh));
	memcpy(&str, img + eh.e_shoff + eh.e_shstrndx * sizeof(str), sizeof(str));
	memcpy(&name, img + off, 4);
	img[str.sh_offset + name + 8] = 'X';	/* .loom.paXches */
}
static void c_duplicate(unsigned char *img, size_t s)
{
	uint32_t name;

	(void)s;
	memcpy(&name, img + shdr_field(img, LOOM_IMAGE_SECTION_CONFIGS, offsetof(Elf64_Shdr, sh_name)), 4);
	put32(img, shdr_field(img, LOOM_IMAGE_SECTION_TEMPLATES, offsetof(Elf64_Shdr, sh_name)), name);
}
static void c_info_magic(unsigned char *img, size_t s) { (void)s; put32(img, INFO(magic), 0x12345678); }
static void c_info_version(unsigned char *img, size_t s) { (void)s; put32(img, INFO(version), 2); }
static void c_info_threads(unsigned char *img, size_t s) { (void)s; put32(img, INFO(num_threads), 4); }
static void c_info_fabric(unsigned char *img, size_t s) { (void)s; img[INFO(fabric_width)] = 0; }
static void c_info_fabric_big(unsigned char *img, size_t s) { (void)s; img[INFO(fabric_height)] = 17; }
static void c_info_reserved(unsigned char *img, size_t s) { (void)s; img[INFO(reserved) + 3] = 1; }
static void c_name(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, name), 0x7fffffff); }
static void c_name_empty(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, name), 0); }
static void c_name_dup(unsigned char *img, size_t s)
{
	uint32_t n;

	(void)s;
	memcpy(&n, img + TH(0, name), 4);
	put32(img, TH(1, name), n);
}
static void c_domain(unsigned char *img, size_t s) { (void)s; img[TH(0, domain)] = 7; }
static void c_rank(unsigned char *img, size_t s) { (void)s; img[TH(1, rank)] = LOOM_MAX_RANK + 1; }
static void c_dyn_rank(unsigned char *img, size_t s) { (void)s; img[TH(2, rank)] = 1; }
static void c_nargs(unsigned char *img, size_t s) { (void)s; img[TH(0, num_args)] = 17; }
static void c_argtype(unsigned char *img, size_t s) { (void)s; img[TH(0, arg_types) + 1] = 9; }
static void c_argtype_tail(unsigned char *img, size_t s) { (void)s; img[TH(0, arg_types) + 5] = 1; }
static void c_work_arg(unsigned char *img, size_t s) { (void)s; img[TH(0, work_item_arg)] = 0; }
static void c_dyn_work_arg(unsigned char *img, size_t s) { (void)s; img[TH(2, work_item_arg)] = 2; }
static void c_capacity(unsigned char *img, size_t s) { (void)s; put32(img, TH(2, child_capacity), LOOM_MAX_CHILD_CAPACITY + 1); }
static void c_dense_capacity(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, child_capacity), 1); }
static void c_cfg_off(unsigned char *img, size_t s) { (void)s; put32(img, TH(1, config_offset), 0xfffffff8); }
static void c_cfg_unaligned(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, config_offset), 4); }
static void c_cfg_size(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, config_size), 64); }
static void c_cfg_magic(unsigned char *img, size_t s)
{
	(void)s;
	img[section(img, LOOM_IMAGE_SECTION_CONFIGS, NULL)] ^= 1;
}
static void c_tpl_off(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, template_offset), 0x10000); }
static void c_tpl_size(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, template_size), 6); }
static void c_tpl_zero(unsigned char *img, size_t s) { (void)s; put32(img, TH(0, template_size), 0); }
static void c_tpl_packet(unsigned char *img, size_t s)
{
	(void)s;	/* the first packet claims 200 dwords */
	put32(img, section(img, LOOM_IMAGE_SECTION_TEMPLATES, NULL),
	      LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 200));
}
static void c_patch_first(unsigned char *img, size_t s) { (void)s; put32(img, TH(2, patch_first), 1000); }
static void c_patch_count(unsigned char *img, size_t s) { (void)s; put32(img, TH(2, num_patches), 0xffffffff); }
static void c_patch_kind(unsigned char *img, size_t s) { (void)s; put16(img, patch_at(img, 1, 4), 9); }
static void c_patch_offset(unsigned char *img, size_t s) { (void)s; put32(img, patch_at(img, 1, 0), 0x1000); }
static void c_patch_unaligned(unsigned char *img, size_t s) { (void)s; put32(img, patch_at(img, 1, 0), 2); }
static void c_patch_operand(unsigned char *img, size_t s) { (void)s; put16(img, patch_at(img, 1, 6), 3); }
static void c_patch_twice(unsigned char *img, size_t s) { (void)s; put16(img, patch_at(img, 2, 6), 0); }
static void c_patch_extent(unsigned char *img, size_t s) { (void)s; put16(img, patch_at(img, 4, 6), 1); }
static void c_patch_items_dense(unsigned char *img, size_t s) { (void)s; put16(img, patch_at(img, 4, 4), LOOM_PATCH_ITEM_COUNT); }
static void c_thread_reserved(unsigned char *img, size_t s) { (void)s; img[TH(1, reserved) + 2] = 1; }
static void c_strtab_nul(unsigned char *img, size_t s)
{
	size_t n;
	long off = section(img, LOOM_IMAGE_SECTION_STRTAB, &n);

	(void)s;
	img[off + n - 1] = 'x';
}
static void c_threads_size(unsigned char *img, size_t s)
{
	(void)s;
	put64v(img, shdr_field(img, LOOM_IMAGE_SECTION_THREADS, offsetof(Elf64_Shdr, sh_size)), 64 * 2);
}
static void c_nobits(unsigned char *img, size_t s)
{
	(void)s;
	put32(img, shdr_field(img, LOOM_IMAGE_SECTION_CONFIGS, offsetof(Elf64_Shdr, sh_type)), SHT_NOBITS);
}

static const struct corruption corruptions[] = {
	{ "ELF magic", c_magic }, { "ELF class", c_class },
	{ "big-endian", c_endian }, { "ET_REL", c_type },
	{ "machine", c_machine }, { "shentsize", c_shentsize },
	{ "shstrndx", c_shstrndx }, { "shoff past end", c_shoff },
	{ "shoff wraps", c_shoff_wrap }, { "section past end", c_sec_offset },
	{ "section too long", c_sec_size }, { "section name", c_sec_name },
	{ "missing section", c_missing }, { "duplicate section", c_duplicate },
	{ "info magic", c_info_magic }, { "info version", c_info_version },
	{ "num_threads", c_info_threads }, { "fabric 0", c_info_fabric },
	{ "fabric 17", c_info_fabric_big }, { "info reserved", c_info_reserved },
	{ "name outside strtab", c_name }, { "empty name", c_name_empty },
	{ "duplicate thread", c_name_dup }, { "domain", c_domain },
	{ "rank", c_rank }, { "dynamic rank", c_dyn_rank },
	{ "num_args", c_nargs }, { "arg type", c_argtype },
	{ "arg type past num_args", c_argtype_tail },
	{ "dense work arg", c_work_arg }, { "work arg range", c_dyn_work_arg },
	{ "child capacity", c_capacity }, { "dense capacity", c_dense_capacity },
	{ "config offset", c_cfg_off }, { "config unaligned", c_cfg_unaligned },
	{ "config size", c_cfg_size }, { "config magic", c_cfg_magic },
	{ "template offset", c_tpl_off }, { "template size", c_tpl_size },
	{ "template empty", c_tpl_zero }, { "packet past template", c_tpl_packet },
	{ "patch_first", c_patch_first }, { "num_patches", c_patch_count },
	{ "patch kind", c_patch_kind }, { "patch offset", c_patch_offset },
	{ "patch unaligned", c_patch_unaligned },
	{ "operand index", c_patch_operand }, { "operand twice", c_patch_twice },
	{ "extent index", c_patch_extent },
	{ "item patch in dense", c_patch_items_dense },
	{ "thread reserved", c_thread_reserved },
	{ "strtab not NUL-ended", c_strtab_nul },
	{ "threads size", c_threads_size }, { "NOBITS section", c_nobits },
};

TEST(malformed_images_rejected)
{
	size_t size;
	unsigned char *good = good_image(&size);
	unsigned char *img = malloc(size);

	REQUIRE(good && img);
	for (size_t i = 0; i < sizeof(corruptions) / sizeof(corruptions[0]); i++) {
		memcpy(img, good, size);
		corruptions[i].apply(img, size);
		if (load(img, size) != LOOM_E_BAD_IMAGE)
			CHECK_FAIL_("%s: accepted (%d)", corruptions[i].what, load(img, size));
	}
	CHECK_EQ(0, load(good, size));
	CHECK_EQ(-EINVAL, loom_image_load(NULL, 0, (struct loom_image **)&img));
	free(img);
	free(good);
}

/* A one-thread image whose dynamic-work payload (argument 1) is @type. */
static void *payload_image(enum loom_arg_type type, size_t *size)
{
	const enum loom_arg_type types[2] = { LOOM_ARG_MEMREF_I64, type };
	struct loom_image_builder *b;
	void *bytes = NULL;

	if (loom_builder_new(W, H, &b))
		return NULL;
	if (loom_builder_add_dynamic(b, "t", types, 2, 1, 8, cfg_tree, tree_size) ||
	    loom_builder_finish(b, &bytes, size))
		bytes = NULL;
	loom_builder_free(b);
	return bytes;
}

/*
 * Spec §7: the runtime carries i32, i64 and index payloads; any other is
 * a well-formed image it cannot run, a capability error at load.
 */
TEST(payload_types_at_load)
{
	static const enum loom_arg_type carried[] = {
		LOOM_ARG_I32, LOOM_ARG_I64, LOOM_ARG_INDEX,
	};
	static const enum loom_arg_type refused[] = {
		LOOM_ARG_MEMREF_I32, LOOM_ARG_MEMREF_I64, LOOM_ARG_F32,
		LOOM_ARG_MEMREF_F32,
	};
	struct loom_image_view v;
	size_t size;
	void *bytes;

	for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++) {
		bytes = payload_image(carried[i], &size);
		REQUIRE(bytes);
		CHECK_EQ(0, load(bytes, size));
		free(bytes);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		bytes = payload_image(refused[i], &size);
		REQUIRE(bytes);
		/* well formed: the reader (and the disassembler) take it */
		CHECK_EQ(0, loom_view_open(&v, bytes, size, NULL, 0));
		CHECK_EQ(LOOM_E_UNSUPPORTED_PAYLOAD, load(bytes, size));
		free(bytes);
	}
	/* a dense thread's i32 or memref arguments are no payloads */
	bytes = good_image(&size);
	REQUIRE(bytes);
	CHECK_EQ(0, load(bytes, size));
	free(bytes);
}

TEST(load_file)
{
	char path[] = "/tmp/loom_image_testXXXXXX";
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;
	int fd = mkstemp(path);

	REQUIRE(bytes && fd >= 0);
	REQUIRE_EQ((long)size, write(fd, bytes, size));
	close(fd);
	CHECK_EQ(0, loom_image_load_file(path, &img));
	if (img)
		CHECK_EQ(3, loom_image_num_threads(img));
	loom_image_free(img);
	unlink(path);
	CHECK_EQ(-ENOENT, loom_image_load_file(path, &img));
	free(bytes);
}

TEST(builder_rejections)
{
	struct loom_image_builder *b;
	unsigned char small[8192];
	size_t n = make_config(small, 5, 4, 4);
	enum loom_arg_type bad = 42;

	CHECK_EQ(-EINVAL, loom_builder_new(0, 4, &b));
	CHECK_EQ(-EINVAL, loom_builder_new(4, 17, &b));
	REQUIRE_EQ(0, loom_builder_new(W, H, &b));
	CHECK_EQ(LOOM_E_BAD_CONFIG, loom_builder_add_dense(b, "x", 1, vadd_types, 3, small, n));
	CHECK_EQ(LOOM_E_BAD_CONFIG, loom_builder_add_dense(b, "x", 1, vadd_types, 3, cfg_vadd, vadd_size - 1));
	CHECK_EQ(-EINVAL, loom_builder_add_dense(b, "x", 5, vadd_types, 3, cfg_vadd, vadd_size));
	CHECK_EQ(-EINVAL, loom_builder_add_dense(b, "x", 1, &bad, 1, cfg_vadd, vadd_size));
	CHECK_EQ(-EINVAL, loom_builder_add_dense(b, "", 1, vadd_types, 3, cfg_vadd, vadd_size));
	CHECK_EQ(-EINVAL, loom_builder_add_dense(b, "x", 1, vadd_types, 17, cfg_vadd, vadd_size));
	CHECK_EQ(-EINVAL, loom_builder_add_dynamic(b, "t", tree_types, 2, 2, 1, cfg_tree, tree_size));
	CHECK_EQ(-EINVAL, loom_builder_add_dynamic(b, "t", tree_types, 2, 0, LOOM_MAX_CHILD_CAPACITY + 1, cfg_tree, tree_size));
	CHECK_EQ(0, loom_builder_add_dense(b, "x", 0, NULL, 0, cfg_vadd, vadd_size));
	CHECK_EQ(LOOM_E_DUPLICATE_THREAD, loom_builder_add_dense(b, "x", 1, vadd_types, 3, cfg_vadd, vadd_size));
	loom_builder_free(b);
}

/*
 * Configurations of temporal PEs (LOOM_CONFIG_VERSION_SLOTS) go into
 * images when their size matches their slots; slots outside
 * 1..LOOM_PE_SLOTS, or a version-1 size for them, are refused.
 */
TEST(slotted_configurations)
{
	static unsigned char cfg[LOOM_CONFIG_SIZE(W * H * LOOM_PE_SLOTS, 4)];
	struct loom_fabric_config c = { .magic = LOOM_CONFIG_MAGIC,
		.version = LOOM_CONFIG_VERSION_SLOTS, .width = W, .height = H,
		.num_ports = 4, .slots = LOOM_PE_SLOTS };
	size_t n = LOOM_CONFIG_SIZE(W * H * LOOM_PE_SLOTS, 4);
	struct loom_image_builder *b;
	struct loom_image_view v;
	void *bytes = NULL;
	size_t size;
	char err[160];

	memset(cfg, 0, sizeof(cfg));
	memcpy(cfg, &c, sizeof(c));
	CHECK(loom_config_fits(cfg, n, W, H));
	CHECK(!loom_config_fits(cfg, LOOM_CONFIG_SIZE(W * H, 4), W, H));
	c.slots = 0;
	memcpy(cfg, &c, sizeof(c));
	CHECK(!loom_config_fits(cfg, LOOM_CONFIG_SIZE(0, 4), W, H));
	c.slots = LOOM_PE_SLOTS + 1;
	memcpy(cfg, &c, sizeof(c));
	CHECK(!loom_config_fits(cfg, LOOM_CONFIG_SIZE(W * H * (LOOM_PE_SLOTS + 1), 4),
				W, H));
	c.slots = 2;
	memcpy(cfg, &c, sizeof(c));
	n = LOOM_CONFIG_SIZE(W * H * 2, 4);
	CHECK(loom_config_fits(cfg, n, W, H));
	REQUIRE_EQ(0, loom_builder_new(W, H, &b));
	CHECK_EQ(0, loom_builder_add_dense(b, "t", 1, vadd_types, 3, cfg, n));
	CHECK_EQ(0, loom_builder_finish(b, &bytes, &size));
	loom_builder_free(b);
	REQUIRE(bytes != NULL);
	CHECK_EQ(0, loom_view_open(&v, bytes, size, err, sizeof(err)));
	free(bytes);
}


/* An image with no thread at all is still valid. */
TEST(empty_image)
{
	struct loom_image_builder *b;
	struct loom_image *img;
	void *bytes;
	size_t size;

	REQUIRE_EQ(0, loom_builder_new(16, 16, &b));
	REQUIRE_EQ(0, loom_builder_finish(b, &bytes, &size));
	loom_builder_free(b);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	CHECK_EQ(0, loom_image_num_threads(img));
	loom_image_free(img);
	free(bytes);
}

/*
 * A device whose fd is invalid: every check happens before the first
 * ioctl, so a typed error proves nothing was submitted and -EBADF proves
 * a launch that passes the checks goes on to the driver.
 */
static void fake_device(struct loom_device *dev)
{
	memset(dev, 0, sizeof(*dev));
	dev->be = &loom_drm_backend;
	dev->fd = -1;
	dev->info = (struct loom_device_info){ .num_cores = 2, .fabric_width = W,
		.fabric_height = H, .max_rank = 4, .features = 1, .pe_slots = 1 };
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->bo_lock, NULL);
}

/*
 * A thread whose configuration has a LOOM_OP_ATOMIC tile
 * (memref.atomic_rmw) needs LOOM_CAP_ATOMIC (device ABI 0.7): an older
 * device would refuse the configuration, so nothing is submitted.
 */
TEST(atomics_need_the_atomic_capability)
{
	static unsigned char cfg[8192];
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_MEMREF_I64, 0x2000 },
				    { LOOM_ARG_MEMREF_I64, 0x3000 } };
	size_t n = make_config(cfg, W, H, 2), size;
	struct loom_tile_config t = { .op = LOOM_OP_ATOMIC };
	struct loom_image_builder *b;
	struct loom_token *tok = NULL;
	struct loom_image *img;
	struct loom_device dev;
	int64_t ext = 4;
	void *bytes = NULL;

	/* the last tile's slot: a scan that stops early misses it */
	memcpy(cfg + sizeof(struct loom_fabric_config) + (W * H - 1) * sizeof(t),
	       &t, sizeof(t));
	REQUIRE_EQ(0, loom_builder_new(W, H, &b));
	REQUIRE_EQ(0, loom_builder_add_dense(b, "scatter", 1, vadd_types, 3, cfg, n));
	REQUIRE_EQ(0, loom_builder_add_dense(b, "vadd", 1, vadd_types, 3, cfg_vadd,
					     vadd_size));
	REQUIRE_EQ(0, loom_builder_finish(b, &bytes, &size));
	loom_builder_free(b);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	fake_device(&dev);
	CHECK_EQ(LOOM_E_NOT_SUPPORTED, loom_launch_dense(&dev, img, "scatter", args,
							 3, &ext, 1, NULL, 0, 0, &tok));
	/* a thread without atomics is not concerned: the fake fd fails it */
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "vadd", args, 3, &ext, 1,
					   NULL, 0, 0, &tok));
	dev.info.hw_caps = LOOM_CAP_ATOMIC;
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "scatter", args, 3, &ext, 1,
					   NULL, 0, 0, &tok));
	CHECK(tok == NULL);
	loom_image_free(img);
	pthread_mutex_destroy(&dev.lock);
	free(bytes);
}

TEST(launch_checks_before_submission)
{
	struct loom_device dev, other;
	struct loom_token foreign = { .dev = &other };
	struct loom_token *dep = &foreign, *tok = NULL;
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_INDEX, 4 }, { LOOM_ARG_I32, 2 } };
	struct loom_arg bad_type[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
					{ LOOM_ARG_I64, 4 }, { LOOM_ARG_I32, 2 } };
	int64_t ext[3] = { 2, 3, 4 }, neg[3] = { 2, -1, 4 }, zero[3] = { 2, 0, 4 };
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	fake_device(&dev);
	fake_device(&other);
	CHECK_EQ(LOOM_E_NO_THREAD, loom_launch_dense(&dev, img, "x", args, 3, ext, 3, NULL, 0, 0, &tok));
	CHECK_EQ(LOOM_E_DOMAIN_KIND, loom_launch_dense(&dev, img, "tree", args, 2, NULL, 0, NULL, 0, 0, &tok));
	CHECK_EQ(LOOM_E_EXTENT_COUNT, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 2, NULL, 0, 0, &tok));
	CHECK_EQ(LOOM_E_EXTENT_COUNT, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 4, NULL, 0, 0, &tok));
	CHECK_EQ(LOOM_E_NEGATIVE_EXTENT, loom_launch_dense(&dev, img, "lin3", args, 3, neg, 3, NULL, 0, 0, &tok));
	/* extents are checked before args */
	CHECK_EQ(LOOM_E_NEGATIVE_EXTENT, loom_launch_dense(&dev, img, "lin3", args, 1, neg, 3, NULL, 0, 0, &tok));
	CHECK_EQ(LOOM_E_ARG_COUNT, loom_launch_dense(&dev, img, "lin3", args, 2, ext, 3, NULL, 0, 0, &tok));
	CHECK_EQ(LOOM_E_ARG_TYPE, loom_launch_dense(&dev, img, "lin3", bad_type, 3, ext, 3, NULL, 0, 0, &tok));
	CHECK_EQ(-EINVAL, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 3, NULL, 0, 2, &tok));
	CHECK_EQ(LOOM_E_FOREIGN_TOKEN, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 3, &dep, 1, 0, &tok));
	dev.info.max_rank = 2;
	CHECK_EQ(LOOM_E_RANK_LIMIT, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 3, NULL, 0, 0, &tok));
	dev.info.max_rank = 4;
	dev.info.fabric_width = 5;
	CHECK_EQ(LOOM_E_FABRIC_MISMATCH, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 3, NULL, 0, 0, &tok));
	dev.info.fabric_width = W;
	/* checks pass (a zero extent is fine): the launch reaches the fd */
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "lin3", args, 3, zero, 3, NULL, 0, 0, &tok));
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "lin3", args, 3, ext, 3, NULL, 0, 1, &tok));
	CHECK(tok == NULL);
	CHECK(dev.configs == NULL);
	loom_image_free(img);
	free(bytes);
}

/* ------------------------------------------------------------ views --- */

static struct loom_layout_entry op(unsigned operand)
{
	return (struct loom_layout_entry){ LOOM_LAYOUT_OPERAND, operand, 0 };
}

static struct loom_layout_entry fixed(int64_t value)
{
	return (struct loom_layout_entry){ LOOM_LAYOUT_STATIC, 0, value };
}

/*
 * Threads whose memref views the image describes (.loom.memrefs):
 *   @v   memref<?x?xi64, strided<[?, ?], offset: ?>>: operands base, size
 *        0, size 1, offset, stride 0, stride 1
 *   @rm  memref<?x?xi64>: base, size 0, size 1 (row-major strides)
 *   @st  memref<4x8xf32> and a rank-1 memref<?xi32> (its size not passed)
 * With @records false, the same threads without the section (an image
 * from before it).
 */
static void *view_image(bool records, size_t *size)
{
	static const enum loom_arg_type v_types[6] = {
		LOOM_ARG_MEMREF_I64, LOOM_ARG_INDEX, LOOM_ARG_INDEX,
		LOOM_ARG_INDEX, LOOM_ARG_INDEX, LOOM_ARG_INDEX,
	};
	static const enum loom_arg_type st_types[2] = {
		LOOM_ARG_MEMREF_F32, LOOM_ARG_MEMREF_I32,
	};
	struct loom_image_memref v = {
		.thread = 0, .arg = 0, .rank = 2, .offset = op(3),
		.sizes = { op(1), op(2) }, .strides = { op(4), op(5) },
	};
	struct loom_image_memref rm = {
		.thread = 1, .arg = 0, .rank = 2, .offset = fixed(0),
		.sizes = { op(1), op(2) },
		.strides = { { LOOM_LAYOUT_ROW_MAJOR, 0, 0 }, fixed(1) },
	};
	struct loom_image_memref st = {
		.thread = 2, .arg = 0, .rank = 2, .offset = fixed(0),
		.sizes = { fixed(4), fixed(8) }, .strides = { fixed(8), fixed(1) },
	};
	struct loom_image_memref r1 = {
		.thread = 2, .arg = 1, .rank = 1, .offset = fixed(0),
		.sizes = { { LOOM_LAYOUT_NOT_PASSED, 0, 0 } },
		.strides = { fixed(1) },
	};
	struct loom_image_builder *b;
	void *bytes = NULL;

	if (loom_builder_new(W, H, &b))
		return NULL;
	if (loom_builder_add_dense(b, "v", 1, v_types, 6, cfg_vadd, vadd_size) ||
	    loom_builder_add_dense(b, "rm", 1, v_types, 3, cfg_vadd, vadd_size) ||
	    loom_builder_add_dense(b, "st", 1, st_types, 2, cfg_vadd, vadd_size) ||
	    /* added out of order: the section is written in (thread, arg) order */
	    (records && (loom_builder_add_memref(b, &r1) ||
			 loom_builder_add_memref(b, &st) ||
			 loom_builder_add_memref(b, &rm) ||
			 loom_builder_add_memref(b, &v))) ||
	    loom_builder_finish(b, &bytes, size))
		bytes = NULL;
	loom_builder_free(b);
	return bytes;
}

/* One launch of @v: base VA, sizes, offset, strides. */
static int launch_v(struct loom_device *dev, const struct loom_image *img,
		    uint64_t base, int64_t s0, int64_t s1, int64_t offset,
		    int64_t t0, int64_t t1)
{
	struct loom_arg a[6] = {
		{ LOOM_ARG_MEMREF_I64, base }, { LOOM_ARG_INDEX, s0 },
		{ LOOM_ARG_INDEX, s1 }, { LOOM_ARG_INDEX, offset },
		{ LOOM_ARG_INDEX, t0 }, { LOOM_ARG_INDEX, t1 },
	};
	struct loom_token *tok = NULL;
	int64_t n = 1;

	return loom_launch_dense(dev, img, "v", a, 6, &n, 1, NULL, 0, 0, &tok);
}

/*
 * A fake device's two adjacent BOs of 32 i64 each, at 0x10000 and
 * 0x10100: entered in its table as loom_bo_alloc() would.
 */
static struct loom_bo view_bos[2];
static struct loom_bo *view_table[2] = { &view_bos[0], &view_bos[1] };

static void view_device(struct loom_device *dev)
{
	fake_device(dev);
	view_bos[0] = (struct loom_bo){ .dev = dev, .va = 0x10000, .size = 256 };
	view_bos[1] = (struct loom_bo){ .dev = dev, .va = 0x10100, .size = 256 };
	dev->bos = view_table;
	dev->num_bos = dev->cap_bos = 2;
}

/*
 * Every element a view can address lies in the BO it starts in, or the
 * launch is a typed error and nothing is submitted (-EBADF: the checks
 * passed and the launch reached the fake device's fd).
 */
TEST(views_are_checked_against_their_bo)
{
	const uint64_t bo = 0x10000, next = 0x10100;
	struct loom_device dev;
	struct loom_image *img;
	size_t size;
	void *bytes = view_image(true, &size);

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	view_device(&dev);
	/* 4x8 row-major fills the BO exactly: its last byte is the BO's */
	CHECK_EQ(-EBADF, launch_v(&dev, img, bo, 4, 8, 0, 8, 1));
	/* one element further is the next BO's first: outside */
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo, 4, 8, 1, 8, 1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo, 4, 9, 0, 8, 1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo + 8, 4, 8, 0, 8, 1));
	/* a view of the second BO, by its own base or the first's */
	CHECK_EQ(-EBADF, launch_v(&dev, img, next, 4, 8, 0, 8, 1));
	CHECK_EQ(-EBADF, launch_v(&dev, img, bo, 2, 2, 32, 8, 1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo, 2, 2, 31, 8, 1));
	/* a column, a tile, a transposed (stride 1, 8) view inside */
	CHECK_EQ(-EBADF, launch_v(&dev, img, bo, 4, 1, 7, 8, 1));
	CHECK_EQ(-EBADF, launch_v(&dev, img, bo, 2, 2, 27, 2, 1));
	CHECK_EQ(-EBADF, launch_v(&dev, img, bo, 8, 4, 0, 1, 8));
	/* negative strides: the lowest element counts (31 - 3*8 - 7 = 0) */
	CHECK_EQ(-EBADF, launch_v(&dev, img, bo, 4, 8, 31, -8, -1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo, 4, 8, 30, -8, -1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo, 1, 1, -1, 8, 1));
	/* nothing mapped there, or a base VA past the address space */
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, 0x1000, 1, 1, 0, 1, 1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, UINT64_MAX - 7, 1, 2, 0, 1, 1));
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, launch_v(&dev, img, bo, 2, 1, 0, INT64_C(1) << 40, 1));
	/* a negative size, an extent beyond 64 bits */
	CHECK_EQ(LOOM_E_BAD_VIEW, launch_v(&dev, img, bo, -1, 8, 0, 8, 1));
	CHECK_EQ(LOOM_E_BAD_VIEW, launch_v(&dev, img, bo, 3, 1, 0, INT64_C(1) << 62, 1));
	CHECK_EQ(LOOM_E_BAD_VIEW, launch_v(&dev, img, bo, 2, 1, 0, INT64_MAX, 1));
	CHECK_EQ(LOOM_E_BAD_VIEW, launch_v(&dev, img, bo, 2, 1, 0, INT64_C(1) << 60, 1));
	CHECK_EQ(LOOM_E_BAD_VIEW, launch_v(&dev, img, bo, 2, 2, INT64_MAX, 1, 1));
	/* an empty view addresses nothing, whatever its base */
	CHECK_EQ(-EBADF, launch_v(&dev, img, 0, 0, 8, 0, 8, 1));
	CHECK_EQ(-EBADF, launch_v(&dev, img, 0x1000, 4, 0, -5, 8, 1));
	CHECK(dev.configs == NULL);
	loom_image_free(img);
	free(bytes);
}

/* Row-major strides from the launch's sizes; static sizes; a rank-1 ?. */
TEST(views_of_every_layout_source)
{
	struct loom_arg rm[3] = { { LOOM_ARG_MEMREF_I64, 0x10000 },
				  { LOOM_ARG_INDEX, 4 }, { LOOM_ARG_INDEX, 8 } };
	struct loom_arg st[2] = { { LOOM_ARG_MEMREF_F32, 0x10080 },
				  { LOOM_ARG_MEMREF_I32, 0x0 } };
	struct loom_token *tok = NULL;
	struct loom_device dev;
	struct loom_image *img;
	int64_t n = 1;
	size_t size;
	void *bytes = view_image(true, &size);

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	view_device(&dev);
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "rm", rm, 3, &n, 1, NULL, 0, 0, &tok));
	rm[2].value = 9;	/* stride 0 is now 9: 36 elements */
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, loom_launch_dense(&dev, img, "rm", rm, 3, &n, 1, NULL, 0, 0, &tok));
	rm[1].value = (uint64_t)1 << 62;	/* 2^62 * 9 elements */
	CHECK_EQ(LOOM_E_BAD_VIEW, loom_launch_dense(&dev, img, "rm", rm, 3, &n, 1, NULL, 0, 0, &tok));
	/* 4x8 f32 (128 bytes) ends at the BO's end; the rank-1 is unbounded */
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "st", st, 2, &n, 1, NULL, 0, 0, &tok));
	st[0].value += 4;
	CHECK_EQ(LOOM_E_VIEW_OUTSIDE, loom_launch_dense(&dev, img, "st", st, 2, &n, 1, NULL, 0, 0, &tok));
	loom_image_free(img);
	free(bytes);
	/* an image without .loom.memrefs loads, and its views are not checked */
	bytes = view_image(false, &size);
	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	CHECK_EQ(-EBADF, launch_v(&dev, img, 0x1000, -1, 8, 0, 8, 1));
	loom_image_free(img);
	free(bytes);
}

/* The record a corruption changes: record @i's field at @off. */
static long memref_field(const unsigned char *img, unsigned i, size_t off)
{
	return section(img, LOOM_IMAGE_SECTION_MEMREFS, NULL) +
	       sizeof(struct loom_memref_header) +
	       i * sizeof(struct loom_image_memref) + off;
}

#define MR(i, f) memref_field(img, i, offsetof(struct loom_image_memref, f))

TEST(malformed_memref_records_rejected)
{
	size_t size, len;
	unsigned char *good = view_image(true, &size), *img = malloc(size);
	struct loom_image_memref m;
	struct loom_image_view v;
	long at;
	int32_t x;

	REQUIRE(good && img);
	CHECK_EQ(0, load(good, size));
	REQUIRE_EQ(0, loom_view_open(&v, good, size, NULL, 0));
	/* in (thread, arg) order whatever the order added */
	REQUIRE(loom_view_memref(&v, 2, 1, &m));
	CHECK_EQ(LOOM_LAYOUT_NOT_PASSED, m.sizes[0].source);
	CHECK(!loom_view_memref(&v, 0, 1, &m));
	at = section(good, LOOM_IMAGE_SECTION_MEMREFS, &len);
	REQUIRE(at > 0);
	CHECK_EQ(16 + 4 * 160, len);
	memcpy(&x, good + memref_field(good, 3, offsetof(struct loom_image_memref, thread)), 4);
	CHECK_EQ(2, x);
#define CORRUPT(what, stmt) do {					\
		memcpy(img, good, size);				\
		stmt;							\
		if (load(img, size) != LOOM_E_BAD_IMAGE)		\
			CHECK_FAIL_("%s: accepted", what);		\
	} while (0)
	CORRUPT("magic", img[at] ^= 1);
	CORRUPT("version", img[at + 4] = 2);
	CORRUPT("count", img[at + 8] = 3);
	CORRUPT("reserved", img[at + 12] = 1);
	CORRUPT("thread", img[MR(0, thread)] = 3);
	CORRUPT("order", img[MR(0, thread)] = 1);
	CORRUPT("twice", img[MR(3, arg)] = 0);
	CORRUPT("argument not a memref", img[MR(0, arg)] = 1);
	CORRUPT("argument past num_args", img[MR(3, arg)] = 2);
	CORRUPT("rank 0", img[MR(0, rank)] = 0);
	CORRUPT("rank 5", img[MR(0, rank)] = 5);
	CORRUPT("record reserved", img[MR(1, reserved) + 7] = 1);
	CORRUPT("source", img[MR(0, sizes[0].source)] = 9);
	CORRUPT("operand past num_args", img[MR(0, sizes[0].operand)] = 6);
	CORRUPT("operand not an index", img[MR(0, sizes[0].operand)] = 0);
	CORRUPT("operand with a value", img[MR(0, sizes[0].value)] = 1);
	CORRUPT("negative static size", img[MR(2, sizes[1].value) + 7] = 0x80);
	CORRUPT("offset not passed", img[MR(2, offset.source)] = LOOM_LAYOUT_NOT_PASSED);
	CORRUPT("size row-major", img[MR(2, sizes[0].source)] = LOOM_LAYOUT_ROW_MAJOR);
	CORRUPT("stride not passed", img[MR(2, strides[0].source)] = LOOM_LAYOUT_NOT_PASSED);
	CORRUPT("entry past the rank", img[MR(3, sizes[1].source)] = LOOM_LAYOUT_STATIC);
#undef CORRUPT
	free(img);
	free(good);
}

/* The builder takes only records it could write. */
TEST(builder_memref_rejections)
{
	struct loom_image_builder *b;
	static const enum loom_arg_type types[2] = { LOOM_ARG_MEMREF_I32, LOOM_ARG_I64 };
	struct loom_image_memref m = { .thread = 0, .arg = 0, .rank = 1,
				       .offset = { LOOM_LAYOUT_STATIC, 0, 0 },
				       .sizes = { { LOOM_LAYOUT_STATIC, 0, 4 } },
				       .strides = { { LOOM_LAYOUT_STATIC, 0, 1 } } };
	void *bytes;
	size_t size;

	REQUIRE_EQ(0, loom_builder_new(W, H, &b));
	CHECK_EQ(-EINVAL, loom_builder_add_memref(b, &m));	/* no thread yet */
	REQUIRE_EQ(0, loom_builder_add_dense(b, "t", 1, types, 2, cfg_vadd, vadd_size));
	CHECK_EQ(-EINVAL, loom_builder_add_memref(NULL, &m));
	CHECK_EQ(-EINVAL, loom_builder_add_memref(b, NULL));
	m.arg = 1;
	CHECK_EQ(-EINVAL, loom_builder_add_memref(b, &m));	/* an i64 */
	m.arg = 0;
	m.sizes[0].operand = 1;
	CHECK_EQ(-EINVAL, loom_builder_add_memref(b, &m));	/* static with an operand */
	m.sizes[0] = (struct loom_layout_entry){ LOOM_LAYOUT_OPERAND, 1, 0 };
	CHECK_EQ(-EINVAL, loom_builder_add_memref(b, &m));	/* operand 1 is no index */
	m.sizes[0] = (struct loom_layout_entry){ LOOM_LAYOUT_STATIC, 0, 4 };
	CHECK_EQ(0, loom_builder_add_memref(b, &m));
	CHECK_EQ(-EEXIST, loom_builder_add_memref(b, &m));
	/* a thread whose memref has no record: the reader refuses the image */
	REQUIRE_EQ(0, loom_builder_add_dense(b, "u", 1, types, 2, cfg_vadd, vadd_size));
	REQUIRE_EQ(0, loom_builder_finish(b, &bytes, &size));
	CHECK_EQ(LOOM_E_BAD_IMAGE, load(bytes, size));
	free(bytes);
	loom_builder_free(b);
}

/*
 * A launch's site must be one of its image and thread (checked right
 * after the thread, before anything is submitted); its token keeps it.
 */
TEST(launch_site_checked_before_submission)
{
	struct loom_device dev;
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_INDEX, 4 }, { LOOM_ARG_I32, 2 } };
	int64_t ext[3] = { 2, 3, 4 };
	struct loom_launch l = loom_launch_dense_of("lin3", args, 3, ext, 3,
						    NULL, 0, 0);
	struct loom_launch_ref site, vadd_site, forged, got = { .thread = 77 };
	struct loom_token *tok = NULL, t = { 0 };
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	REQUIRE_EQ(0, loom_launch_site_register(img, "lin3", "stencil", &site));
	REQUIRE_EQ(0, loom_launch_site_register(img, "vadd", "add", &vadd_site));
	fake_device(&dev);
	/* its own site: every check passes, the launch reaches the fd */
	l.site = &site;
	CHECK_EQ(-EBADF, loom_launch(&dev, img, &l, &tok));
	/* another thread's, another image's, an unregistered or odd one */
	l.site = &vadd_site;
	CHECK_EQ(LOOM_E_SITE_MISMATCH, loom_launch(&dev, img, &l, &tok));
	forged = site;
	forged.image ^= 1;
	l.site = &forged;
	CHECK_EQ(LOOM_E_SITE_MISMATCH, loom_launch(&dev, img, &l, &tok));
	forged = site;
	forged.site = "other";
	CHECK_EQ(LOOM_E_SITE_MISMATCH, loom_launch(&dev, img, &l, &tok));
	forged = site;
	forged.ordinal = 1;
	CHECK_EQ(LOOM_E_SITE_MISMATCH, loom_launch(&dev, img, &l, &tok));
	forged = site;
	forged.kind = 0;
	CHECK_EQ(LOOM_E_SITE_MISMATCH, loom_launch(&dev, img, &l, &tok));
	/* a host program's site of this image and thread is one */
	forged = (struct loom_launch_ref){ .image = loom_image_digest(img),
		.thread = 1, .kind = LOOM_SITE_HOST, .ordinal = 3, .site = "main" };
	CHECK_EQ(-EBADF, loom_launch(&dev, img, &l, &tok));
	/* the order: the thread first, the site before the domain kind */
	l.thread = "x";
	CHECK_EQ(LOOM_E_NO_THREAD, loom_launch(&dev, img, &l, &tok));
	l.thread = "tree";
	l.site = &site;
	CHECK_EQ(LOOM_E_SITE_MISMATCH, loom_launch(&dev, img, &l, &tok));
	CHECK(tok == NULL);
	/* what a token tells */
	CHECK_EQ(-ENOENT, loom_token_launch(&t, &got));
	CHECK_EQ(77, got.thread);
	t.launch = site;
	CHECK_EQ(0, loom_token_launch(&t, &got));
	CHECK(loom_launch_ref_equal(&site, &got));
	CHECK_EQ(-EINVAL, loom_token_launch(NULL, &got));
	CHECK_EQ(-EINVAL, loom_token_launch(&t, NULL));
	loom_image_free(img);
	pthread_mutex_destroy(&dev.lock);
	free(bytes);
}

/*
 * A dynamic-work thread needs the device's items capability: without it
 * the launch, and a device-adapter run, fail with their own typed reason,
 * not with the driver's missing feature (LOOM_E_NOT_SUPPORTED).
 */
TEST(dynamic_work_needs_the_items_capability)
{
	struct loom_arg args[2] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_I64, 0 } };
	struct loom_token *tok = NULL;
	struct loom_device dev, *devs[1] = { &dev };
	struct loom_work_device_config c = {
		.sched = { .workers = 1, .deque_capacity = 4 },
		.thread = "tree", .args = args, .n_args = 2,
		.devices = devs, .n_devices = 1,
	};
	struct loom_work_device_result r;
	struct loom_launch_ref site, other;
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	c.image = img;
	fake_device(&dev);
	CHECK_EQ(LOOM_E_NO_DYNAMIC_WORK, loom_launch_items(&dev, img, "tree", args, 2, 1, 0x2000, 0x3000, NULL, 0, 0, &tok));
	/* a site of another thread is refused first; the result keeps the run's */
	REQUIRE_EQ(0, loom_launch_site_register(img, "vadd", "add", &other));
	REQUIRE_EQ(0, loom_launch_site_register(img, "tree", "walk", &site));
	c.site = &other;
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_SITE_MISMATCH, r.device_error);
	CHECK(loom_launch_ref_equal(&other, &r.launch));
	loom_work_device_result_free(&r);
	c.site = &site;
	/* the run checks every device first: nothing ran, the reason is kept */
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_NO_DYNAMIC_WORK, r.device_error);
	CHECK(loom_launch_ref_equal(&site, &r.launch));
	CHECK(!r.work.failed);
	CHECK_EQ(0, r.work.items_run);
	loom_work_device_result_free(&r);
	/* a driver without SUBMIT still lacks a feature, whatever the device */
	dev.info.features = 0;
	CHECK_EQ(LOOM_E_NOT_SUPPORTED, loom_launch_items(&dev, img, "tree", args, 2, 1, 0x2000, 0x3000, NULL, 0, 0, &tok));
	dev.info.features = 1;
	dev.info.hw_caps = LOOM_CAP_ITEMS;
	CHECK_EQ(-EBADF, loom_launch_items(&dev, img, "tree", args, 2, 1, 0x2000, 0x3000, NULL, 0, 0, &tok));
	CHECK(tok == NULL);
	loom_image_free(img);
	pthread_mutex_destroy(&dev.lock);
	free(bytes);
}

/*
 * A run on two devices takes one capture list: a memref capture reaches
 * the second device as the same offset of its BO of the capture's share
 * group, and one in no group shared with it is refused, typed, before any
 * device is touched.  Deprecated per-device lists (device_args) must be
 * that one list seen from each device.  Here the checks pass on to the
 * device checks, which this fake device fails (no LOOM_CAP_ITEMS).
 */
TEST(captures_are_one_list_across_devices)
{
	static const enum loom_arg_type types[3] = {
		LOOM_ARG_MEMREF_I64, LOOM_ARG_I64, LOOM_ARG_I32,
	};
	struct loom_device a, b, *devs[2] = { &a, &b };
	struct loom_bo on_a = { .dev = &a, .va = 0x10000, .size = 0x3000, .share_group = 7 };
	struct loom_bo on_b = { .dev = &b, .va = 0x40000, .size = 0x3000, .share_group = 7 };
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x11008 },
				    { LOOM_ARG_I64, 0 }, { LOOM_ARG_I32, 3 } };
	struct loom_arg args_b[3] = { { LOOM_ARG_MEMREF_I64, 0x41008 },
				      { LOOM_ARG_I64, 99 }, { LOOM_ARG_I32, 3 } };
	const struct loom_arg *dargs[2] = { args, args_b };
	struct loom_work_device_config c = {
		.sched = { .workers = 2, .deque_capacity = 4 },
		.thread = "cap", .args = args, .n_args = 3,
		.devices = devs, .n_devices = 2,
	};
	struct loom_work_device_result r;
	struct loom_image_builder *bld;
	struct loom_image *img;
	void *bytes = NULL;
	size_t size;
	uint64_t va;

	REQUIRE_EQ(0, loom_builder_new(W, H, &bld));
	REQUIRE_EQ(0, loom_builder_add_dynamic(bld, "cap", types, 3, 1, 8, cfg_tree, tree_size));
	REQUIRE_EQ(0, loom_builder_finish(bld, &bytes, &size));
	loom_builder_free(bld);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	c.image = img;
	fake_device(&a);
	fake_device(&b);

	/* no share group: refused, nothing ran */
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_CAPTURE_NOT_SHARED, r.device_error);
	CHECK(!r.work.failed);
	CHECK_EQ(0, r.work.items_run);
	loom_work_device_result_free(&r);
	/* one device (or the same one twice) needs none */
	c.n_devices = 1;
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_NO_DYNAMIC_WORK, r.device_error);
	loom_work_device_result_free(&r);
	c.n_devices = 2;

	/* a shares its BO with b */
	a.shared = &on_a;
	b.shared = &on_b;
	CHECK_EQ(0, loom_bo_translate_va(&a, 0x11008, &b, &va));
	CHECK_EQ(0x41008, va);
	CHECK_EQ(0, loom_bo_translate_va(&b, 0x40000, &a, &va));
	CHECK_EQ(0x10000, va);
	CHECK_EQ(0, loom_bo_translate_va(&a, 0x5, &a, &va));
	CHECK_EQ(0x5, va);
	CHECK_EQ(LOOM_E_CAPTURE_NOT_SHARED, loom_bo_translate_va(&a, 0x13000, &b, &va));
	CHECK_EQ(LOOM_E_CAPTURE_NOT_SHARED, loom_bo_translate_va(&a, 0xfff8, &b, &va));
	on_b.share_group = 8;	/* b's BO is another memory */
	CHECK_EQ(LOOM_E_CAPTURE_NOT_SHARED, loom_bo_translate_va(&a, 0x11008, &b, &va));
	on_b.share_group = 7;
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_NO_DYNAMIC_WORK, r.device_error);
	loom_work_device_result_free(&r);

	/* device_args: b's list is a's seen from b (the work item aside) */
	c.device_args = dargs;
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_NO_DYNAMIC_WORK, r.device_error);
	loom_work_device_result_free(&r);
	args_b[2].value = 4;	/* a scalar capture that differs */
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_CAPTURE_MISMATCH, r.device_error);
	loom_work_device_result_free(&r);
	args_b[2].value = 3;
	args_b[0].value = 0x41000;	/* the shared BO, another offset */
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_CAPTURE_MISMATCH, r.device_error);
	loom_work_device_result_free(&r);
	args_b[0].value = 0x41008;
	args[0].value = 0x20000;	/* in no BO of a */
	CHECK_EQ(LOOM_WORK_DEVICE_ERROR, loom_work_device_run(&c, &r));
	CHECK_EQ(LOOM_E_CAPTURE_NOT_SHARED, r.device_error);
	loom_work_device_result_free(&r);

	loom_image_free(img);
	pthread_mutex_destroy(&a.lock);
	pthread_mutex_destroy(&b.lock);
	free(bytes);
}

/* A thread on temporal PEs launches only on a device with as many slots. */
TEST(launch_needs_the_slots)
{
	static unsigned char cfg[LOOM_CONFIG_SIZE(W * H * 3, 0)];
	struct loom_fabric_config c = { .magic = LOOM_CONFIG_MAGIC,
		.version = LOOM_CONFIG_VERSION_SLOTS, .width = W, .height = H,
		.slots = 3 };
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_MEMREF_I64, 0x2000 },
				    { LOOM_ARG_MEMREF_I64, 0x3000 } };
	int64_t ext[1] = { 4 };
	struct loom_image_builder *b;
	struct loom_token *tok = NULL;
	struct loom_device dev;
	struct loom_image *img;
	void *bytes = NULL;
	size_t size;

	memcpy(cfg, &c, sizeof(c));
	REQUIRE_EQ(0, loom_builder_new(W, H, &b));
	REQUIRE_EQ(0, loom_builder_add_dense(b, "t", 1, vadd_types, 3, cfg, sizeof(cfg)));
	REQUIRE_EQ(0, loom_builder_finish(b, &bytes, &size));
	loom_builder_free(b);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	fake_device(&dev);
	dev.info.pe_slots = 2;
	CHECK_EQ(LOOM_E_FABRIC_MISMATCH, loom_launch_dense(&dev, img, "t", args, 3, ext, 1, NULL, 0, 0, &tok));
	dev.info.pe_slots = 3;
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "t", args, 3, ext, 1, NULL, 0, 0, &tok));
	CHECK(tok == NULL);
	loom_image_free(img);
	pthread_mutex_destroy(&dev.lock);
	free(bytes);
}

/*
 * A configuration of link channels (LOOM_CONFIG_VERSION_CHANNELS, device
 * ABI 0.8) goes into images like a slotted one, and its thread needs
 * LOOM_CAP_LINK_CHANNELS: an older device would refuse the version, so
 * nothing is submitted.
 */
TEST(link_channels_need_the_capability)
{
	static unsigned char cfg[LOOM_CONFIG_SIZE(W * H * 2, 0)];
	struct loom_fabric_config c = { .magic = LOOM_CONFIG_MAGIC,
		.version = LOOM_CONFIG_VERSION_CHANNELS, .width = W, .height = H,
		.slots = 2 };
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_MEMREF_I64, 0x2000 },
				    { LOOM_ARG_MEMREF_I64, 0x3000 } };
	int64_t ext[1] = { 4 };
	struct loom_image_builder *b;
	struct loom_token *tok = NULL;
	struct loom_device dev;
	struct loom_image *img;
	void *bytes = NULL;
	size_t size;

	memcpy(cfg, &c, sizeof(c));
	CHECK(loom_config_fits(cfg, sizeof(cfg), W, H));
	CHECK(!loom_config_fits(cfg, LOOM_CONFIG_SIZE(W * H, 0), W, H));
	c.slots = 0;
	memcpy(cfg, &c, sizeof(c));
	CHECK(!loom_config_fits(cfg, LOOM_CONFIG_SIZE(0, 0), W, H));
	c.slots = 2;
	c.version = LOOM_CONFIG_VERSION_CHANNELS + 1;
	memcpy(cfg, &c, sizeof(c));
	CHECK(!loom_config_fits(cfg, sizeof(cfg), W, H));
	c.version = LOOM_CONFIG_VERSION_CHANNELS;
	memcpy(cfg, &c, sizeof(c));
	REQUIRE_EQ(0, loom_builder_new(W, H, &b));
	REQUIRE_EQ(0, loom_builder_add_dense(b, "chan", 1, vadd_types, 3, cfg, sizeof(cfg)));
	REQUIRE_EQ(0, loom_builder_add_dense(b, "vadd", 1, vadd_types, 3, cfg_vadd,
					     vadd_size));
	REQUIRE_EQ(0, loom_builder_finish(b, &bytes, &size));
	loom_builder_free(b);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	fake_device(&dev);
	dev.info.pe_slots = 2;
	dev.info.hw_caps = LOOM_CAP_ATOMIC | LOOM_CAP_PE_SLOTS;
	CHECK_EQ(LOOM_E_NOT_SUPPORTED, loom_launch_dense(&dev, img, "chan", args, 3, ext, 1, NULL, 0, 0, &tok));
	/* a thread of an older version is not concerned: the fake fd fails it */
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "vadd", args, 3, ext, 1, NULL, 0, 0, &tok));
	dev.info.hw_caps |= LOOM_CAP_LINK_CHANNELS;
	CHECK_EQ(-EBADF, loom_launch_dense(&dev, img, "chan", args, 3, ext, 1, NULL, 0, 0, &tok));
	CHECK(tok == NULL);
	loom_image_free(img);
	pthread_mutex_destroy(&dev.lock);
	free(bytes);
}

/*
 * B_thread: on every device-set shape, every point of the domain is placed
 * in exactly one part, the parts' blocks tile [0, e0) in part order (device
 * by device, core by core) and differ by at most one row, and asking twice
 * gives the same answer.
 */
TEST(placement_partitions_the_domain)
{
	static const unsigned shapes[][3] = {
		{ 1, 0, 0 }, { 2, 0, 0 }, { 2, 2, 0 }, { 1, 2, 4 }, { 4, 4, 4 },
	};
	static const int64_t e0s[] = { 1, 2, 3, 5, 7, 12, 13, 100 };
	struct loom_device devs[3];
	struct loom_device *ptrs[3] = { &devs[0], &devs[1], &devs[2] };

	for (unsigned d = 0; d < 3; d++)
		fake_device(&devs[d]);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		unsigned n_devs = 0, n_parts = 0;

		for (unsigned d = 0; d < 3 && shapes[s][d]; d++) {
			devs[d].info.num_cores = shapes[s][d];
			n_parts += shapes[s][d];
			n_devs++;
		}
		for (size_t e = 0; e < sizeof(e0s) / sizeof(e0s[0]); e++) {
			int64_t ext[2] = { e0s[e], 3 }, expect_begin = 0;
			unsigned last_dev = 0, last_queue = 0, seen = 0;
			int64_t min_rows = INT64_MAX, max_rows = 0;
			bool first = true;

			for (int64_t c = 0; c < ext[0]; c++) {
				for (int64_t c1 = 0; c1 < ext[1]; c1++) {
					int64_t pt[2] = { c, c1 };
					struct loom_part p, again;

					REQUIRE_EQ(0, loom_launch_placement(ptrs, n_devs, ext, 2, pt, &p));
					REQUIRE_EQ(0, loom_launch_placement(ptrs, n_devs, ext, 2, pt, &again));
					CHECK(!memcmp(&p, &again, sizeof(p)));
					CHECK(p.begin <= c && c < p.end);
					CHECK(p.device < n_devs);
					CHECK(p.queue < devs[p.device].info.num_cores);
					if (c1 || (!first && p.begin != expect_begin))
						continue;
					/* a new block: it starts where the last one ended, on a later part */
					CHECK_EQ(expect_begin, p.begin);
					if (!first)
						CHECK(p.device > last_dev ||
						      (p.device == last_dev && p.queue > last_queue));
					first = false;
					last_dev = p.device;
					last_queue = p.queue;
					expect_begin = p.end;
					min_rows = p.end - p.begin < min_rows ? p.end - p.begin : min_rows;
					max_rows = p.end - p.begin > max_rows ? p.end - p.begin : max_rows;
					seen++;
				}
			}
			CHECK_EQ(ext[0], expect_begin);
			CHECK_EQ(ext[0] < (int64_t)n_parts ? (unsigned)ext[0] : n_parts, seen);
			CHECK(max_rows - min_rows <= 1);
		}
	}
	for (unsigned d = 0; d < 3; d++)
		pthread_mutex_destroy(&devs[d].lock);
}

TEST(placement_edges)
{
	struct loom_device a, b;
	struct loom_device *devs[2] = { &a, &b }, *none[1] = { NULL };
	int64_t ext[3] = { 8, 2, 2 }, zero[2] = { 4, 0 }, neg[2] = { 4, -1 };
	int64_t pt[3] = { 5, 1, 1 }, out_of[3] = { 8, 0, 0 }, minus[3] = { -1, 0, 0 };
	struct loom_part p;

	fake_device(&a);
	fake_device(&b);
	/* 2 devices x 2 cores: rows 0-1, 2-3 on device 0, 4-5, 6-7 on device 1 */
	REQUIRE_EQ(0, loom_launch_placement(devs, 2, ext, 3, pt, &p));
	CHECK_EQ(1u, p.device);
	CHECK_EQ(0u, p.queue);
	CHECK_EQ(4, p.begin);
	CHECK_EQ(6, p.end);
	/* rank 0: one instance, device 0's core 0 */
	REQUIRE_EQ(0, loom_launch_placement(devs, 2, NULL, 0, NULL, &p));
	CHECK(p.device == 0 && p.queue == 0 && p.begin == 0 && p.end == 1);
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 2, ext, 3, out_of, &p));
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 2, ext, 3, minus, &p));
	/* an empty domain has no point */
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 2, zero, 2, pt, &p));
	CHECK_EQ(LOOM_E_NEGATIVE_EXTENT, loom_launch_placement(devs, 2, neg, 2, pt, &p));
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 0, ext, 3, pt, &p));
	CHECK_EQ(-EINVAL, loom_launch_placement(none, 1, ext, 3, pt, &p));
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, LOOM_SPREAD_MAX_DEVICES + 1, ext, 3, pt, &p));
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 2, ext, LOOM_MAX_RANK + 1, pt, &p));
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 2, ext, 3, pt, NULL));
	b.info.num_cores = 0;
	CHECK_EQ(-EINVAL, loom_launch_placement(devs, 2, ext, 3, pt, &p));
	pthread_mutex_destroy(&a.lock);
	pthread_mutex_destroy(&b.lock);
}

/*
 * A spread launch is checked on every device before any part is
 * submitted: a refusal by the second device submits nothing on the first
 * (-EBADF would mean a part reached the driver).
 */
TEST(spread_checks_every_device_first)
{
	struct loom_device a, b;
	struct loom_device *devs[2] = { &a, &b };
	struct loom_arg args[3] = { { LOOM_ARG_MEMREF_I64, 0x1000 },
				    { LOOM_ARG_INDEX, 4 }, { LOOM_ARG_I32, 2 } };
	int64_t ext[3] = { 4, 3, 2 }, zero[3] = { 4, 0, 2 };
	struct loom_launch l = loom_launch_dense_of("lin3", args, 3, ext, 3, NULL, 0, 0);
	struct loom_token *tok = NULL;
	size_t size;
	void *bytes = good_image(&size);
	struct loom_image *img;

	REQUIRE(bytes);
	REQUIRE_EQ(0, loom_image_load(bytes, size, &img));
	fake_device(&a);
	fake_device(&b);
	a.info.hw_caps = b.info.hw_caps = LOOM_CAP_DENSE_BLOCK;
	b.info.fabric_width = 5;
	CHECK_EQ(LOOM_E_FABRIC_MISMATCH, loom_launch_spread(devs, 2, img, &l, &tok));
	b.info.fabric_width = W;
	b.info.max_rank = 2;
	CHECK_EQ(LOOM_E_RANK_LIMIT, loom_launch_spread(devs, 2, img, &l, &tok));
	b.info.max_rank = 4;
	/* splitting needs the block form of DISPATCH_DENSE on every device */
	b.info.hw_caps = 0;
	CHECK_EQ(LOOM_E_NOT_SUPPORTED, loom_launch_spread(devs, 2, img, &l, &tok));
	/* ... an empty domain is not split: device 0 runs it whole */
	l.extents = zero;
	CHECK_EQ(-EBADF, loom_launch_spread(devs, 2, img, &l, &tok));
	l.extents = ext;
	b.info.hw_caps = LOOM_CAP_DENSE_BLOCK;
	l.counters_va = 0x2000;
	CHECK_EQ(-EINVAL, loom_launch_spread(devs, 2, img, &l, &tok));
	l.counters_va = 0;
	l.kind = LOOM_LAUNCH_ITEMS;
	CHECK_EQ(-EINVAL, loom_launch_spread(devs, 2, img, &l, &tok));
	l.kind = LOOM_LAUNCH_DENSE;
	l.thread = "tree";
	CHECK_EQ(LOOM_E_DOMAIN_KIND, loom_launch_spread(devs, 2, img, &l, &tok));
	l.thread = "lin3";
	CHECK_EQ(-EINVAL, loom_launch_spread(devs, 0, img, &l, &tok));
	/* every check passes: the first part reaches the (invalid) fd */
	CHECK_EQ(-EBADF, loom_launch_spread(devs, 2, img, &l, &tok));
	CHECK(tok == NULL);
	loom_image_free(img);
	pthread_mutex_destroy(&a.lock);
	pthread_mutex_destroy(&b.lock);
	free(bytes);
}

TEST(no_device_on_host_paths)
{
	struct loom_device *dev = NULL;

	CHECK_EQ(LOOM_E_NO_DEVICE, loom_device_open("/nonexistent/renderD128", &dev));
	CHECK_EQ(LOOM_E_NO_DEVICE, loom_device_open("/dev/null", &dev));
	CHECK_EQ(LOOM_E_NO_DEVICE, loom_device_open_nth(64, &dev));
	CHECK_EQ(-EINVAL, loom_device_open(NULL, &dev));
	CHECK(dev == NULL);
}

TEST(error_strings)
{
	static const int errs[] = {
		LOOM_E_EXTENT_COUNT, LOOM_E_NEGATIVE_EXTENT, LOOM_E_ARG_COUNT,
		LOOM_E_ARG_TYPE, LOOM_E_DOMAIN_KIND, LOOM_E_NO_THREAD,
		LOOM_E_BAD_IMAGE, LOOM_E_FABRIC_MISMATCH, LOOM_E_NO_DEVICE,
		LOOM_E_RANK_LIMIT, LOOM_E_NOT_SUPPORTED, LOOM_E_FOREIGN_TOKEN,
		LOOM_E_JOB_EXPIRED, LOOM_E_BAD_CONFIG, LOOM_E_DUPLICATE_THREAD,
		LOOM_E_NO_DYNAMIC_WORK, LOOM_E_BAD_VIEW, LOOM_E_VIEW_OUTSIDE,
	};
	size_t n = sizeof(errs) / sizeof(errs[0]);

	CHECK_EQ(-4097, LOOM_E_EXTENT_COUNT);
	for (size_t i = 0; i < n; i++) {
		CHECK(errs[i] < -4096);
		CHECK(strcmp(loom_strerror(errs[i]), "unknown error"));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(loom_strerror(errs[i]), loom_strerror(errs[j])));
	}
	CHECK(!strcmp(loom_strerror(0), "success"));
	CHECK(!strcmp(loom_strerror(-EINVAL), "Invalid argument"));
	CHECK(!strcmp(loom_strerror(-EFAULT), "Bad address"));
	CHECK(!strcmp(loom_strerror(-4096), "unknown error"));
	CHECK(!strcmp(loom_strerror(-5000), "unknown error"));
	CHECK(!strcmp(loom_strerror(7), "unknown error"));
}

TEST(source_iv)
{
	CHECK_EQ(0, loom_source_iv(0, 0, 1));
	CHECK_EQ(10 + 3 * 4, loom_source_iv(10, 3, 4));
	CHECK_EQ(-5 - 2 * 7, loom_source_iv(-5, 2, -7));
	CHECK_EQ(100, loom_source_iv(100, 99, 0));
	/* wraps like the device: (2^63 - 1) + 1 * 1 = -2^63 */
	CHECK_EQ(INT64_MIN, loom_source_iv(INT64_MAX, 1, 1));
	CHECK_EQ(INT64_MIN + 2, loom_source_iv(INT64_MAX, 3, 1));
	CHECK_EQ(0, loom_source_iv(0, INT64_MIN, 2));
}

/* ------------------------------------------------ source map, reports --- */

/* vadd (thread 0) with a LOAD on tile 5 and a STORE on tile 6, tree. */
static void *mapped_image(size_t *size, bool with_sources)
{
	static const struct loom_srcmap_entry entries[] = {
		{ .kind = LOOM_SRCMAP_THREAD, .unit = 0, .line = 1, .col = 19 },
		{ .kind = LOOM_SRCMAP_SLOT, .unit = 0, .at = 5, .line = 2, .col = 8 },
		{ .kind = LOOM_SRCMAP_SLOT, .unit = 0, .at = 6, .line = 4, .col = 3 },
		{ .kind = LOOM_SRCMAP_HOST, .unit = 7, .line = 12, .col = 8 },
		{ .kind = LOOM_SRCMAP_HOST, .unit = 9, .line = 15, .col = 3 },
	};
	static const char *const names[] = { NULL, "x", NULL, "t", NULL };
	unsigned char cfg[8192];
	struct loom_tile_config tc = { .op = LOOM_OP_LOAD };
	size_t n = make_config(cfg, W, H, 0);
	struct loom_image_builder *b;
	void *bytes = NULL;
	int ret = 0;

	memcpy(cfg + sizeof(struct loom_fabric_config) + 5 * sizeof(tc), &tc, sizeof(tc));
	tc.op = LOOM_OP_STORE;
	memcpy(cfg + sizeof(struct loom_fabric_config) + 6 * sizeof(tc), &tc, sizeof(tc));
	if (loom_builder_new(W, H, &b))
		return NULL;
	ret = loom_builder_add_dense(b, "vadd", 1, vadd_types, 3, cfg, n) ||
	      loom_builder_add_dense(b, "lin3", 3, lin_types, 3, cfg_vadd, vadd_size) ||
	      loom_builder_add_dynamic(b, "tree", tree_types, 2, 1, 8, cfg_tree, tree_size);
	/* added out of order: the writer sorts */
	for (int i = 4; with_sources && !ret && i >= 0; i--)
		ret = loom_builder_add_source(b, &entries[i], names[i]);
	if (!ret && with_sources)
		ret = loom_builder_set_source_file(b, "prog.loom");
	if (ret || loom_builder_finish(b, &bytes, size))
		bytes = NULL;
	loom_builder_free(b);
	return bytes;
}

static struct loom_image *load_mapped(bool with_sources)
{
	struct loom_image *img = NULL;
	size_t size;
	void *bytes = mapped_image(&size, with_sources);

	if (!bytes || loom_image_load(bytes, size, &img))
		img = NULL;
	free(bytes);
	return img;
}

TEST(source_of)
{
	struct loom_image *img = load_mapped(true), *bare = load_mapped(false);
	struct loom_source_loc loc;

	REQUIRE(img && bare);
	REQUIRE_EQ(0, loom_image_source_of(img, LOOM_SRCMAP_SLOT, 0, 5, 0, 0, &loc));
	CHECK(!strcmp("prog.loom", loc.file));
	CHECK_EQ(2, loc.line);
	CHECK_EQ(8, loc.col);
	CHECK(!strcmp("x", loc.name));
	REQUIRE_EQ(0, loom_image_source_of(img, LOOM_SRCMAP_SLOT, 0, 6, 0, 0, &loc));
	CHECK(!strcmp("", loc.name));
	REQUIRE_EQ(0, loom_image_source_of(img, LOOM_SRCMAP_HOST, 9, 0, 0, 0, &loc));
	CHECK_EQ(15, loc.line);
	CHECK_EQ(0, loom_image_source_of(img, LOOM_SRCMAP_THREAD, 0, 0, 0, 0, &loc));
	CHECK_EQ(-ENOENT, loom_image_source_of(img, LOOM_SRCMAP_SLOT, 0, 5, 1, 0, &loc));
	CHECK_EQ(-ENOENT, loom_image_source_of(img, LOOM_SRCMAP_HOST, 8, 0, 0, 0, &loc));
	CHECK_EQ(-ENOENT, loom_image_source_of(bare, LOOM_SRCMAP_SLOT, 0, 5, 0, 0, &loc));
	CHECK_EQ(-EINVAL, loom_image_source_of(NULL, LOOM_SRCMAP_SLOT, 0, 5, 0, 0, &loc));
	CHECK_EQ(-EINVAL, loom_image_source_of(img, LOOM_SRCMAP_SLOT, 0, 5, 0, 0, NULL));
	loom_image_free(img);
	loom_image_free(bare);
}

static struct loom_host_stats failed_stats(void)
{
	struct loom_host_stats st = { .failed_insn = -1, .failed_launch = -1,
				      .failed_thread = -1 };

	return st;
}

/* Each failure class as a diagnostic at its line, with its notes. */
TEST(host_reports)
{
	struct loom_image *img = load_mapped(true), *bare = load_mapped(false);
	struct loom_host_stats st = failed_stats();
	char text[1024];
	int n;

	REQUIRE(img && bare);
	st.failed_insn = 9;
	st.check_lhs = 4;
	st.check_rhs = 5;
	n = loom_host_report(img, LOOM_E_CHECK_FAILED, &st, text, sizeof(text));
	CHECK_EQ((int)strlen(text), n);
	CHECK(!strcmp("prog.loom:15:3: error: loom.check failed: 4 != 5\n", text));
	/* without a source map: the host instruction */
	loom_host_report(bare, LOOM_E_CHECK_FAILED, &st, text, sizeof(text));
	CHECK(!strcmp("error: loom.check failed: 4 != 5 (host instruction 9)\n", text));

	st = failed_stats();
	st.failed_insn = 3;		/* a later WAIT: the launch is named */
	st.failed_launch = 7;
	st.failed_thread = 0;
	st.job_status = LOOM_STATUS_MMU_FAULT;
	st.job_detail = LOOM_MMU_FAULT_NOT_MAPPED;
	st.fault_va = 0x1ff8;
	loom_host_report(img, -EFAULT, &st, text, sizeof(text));
	CHECK(!strcmp("prog.loom:12:8: error: @vadd accessed device address 0x1ff8 (not mapped)\n"
		      "prog.loom:2:8: note: '%x' accesses memory here\n"
		      "prog.loom:4:3: note: this operation accesses memory here\n", text));
	st.job_detail = LOOM_MMU_FAULT_ALIGN;
	loom_host_report(img, -EFAULT, &st, text, sizeof(text));
	CHECK(!strncmp("prog.loom:12:8: error: @vadd accessed device address 0x1ff8 "
		       "(an atomic not aligned to its size)\n", text,
		       strlen("prog.loom:12:8: error: @vadd accessed device address 0x1ff8 "
			      "(an atomic not aligned to its size)\n")));
	st.job_detail = LOOM_MMU_FAULT_NOT_MAPPED;

	st.job_status = LOOM_STATUS_DEADLOCK;
	st.waiting_tiles[0] = 1ULL << 5;
	st.blocked_tiles[0] = 1ULL << 6;
	loom_host_report(img, -EDEADLK, &st, text, sizeof(text));
	CHECK(!strcmp("prog.loom:12:8: error: the fabric deadlocked running @vadd: its operations wait for tokens that never come\n"
		      "prog.loom:4:3: note: this operation is blocked here: its output has no room\n"
		      "prog.loom:2:8: note: '%x' waits here for tokens on its inputs\n", text));

	st = failed_stats();
	st.failed_launch = 7;
	st.failed_thread = 2;
	strcpy(st.failed_item, "3:root/0/2");
	loom_host_report(img, -ENOSPC, &st, text, sizeof(text));
	CHECK(!strcmp("prog.loom:12:8: error: work item 3:root/0/2 of @tree spawned more children than its capacity (8)\n",
		      text));
	st.job_status = LOOM_STATUS_STOPPED;
	loom_host_report(img, -ETIMEDOUT, &st, text, sizeof(text));
	CHECK(!strcmp("prog.loom:12:8: error: @tree made no progress, or ran past the runtime cap, and was stopped\n",
		      text));
	/* like snprintf: cut short, the whole length returned */
	n = loom_host_report(img, -ETIMEDOUT, &st, text, 10);
	CHECK_EQ(9, (int)strlen(text));
	CHECK(n > 60);
	CHECK_EQ(-EINVAL, loom_host_report(img, 0, &st, text, sizeof(text)));
	loom_image_free(img);
	loom_image_free(bare);
}

int main(void)
{
	vadd_size = make_config(cfg_vadd, W, H, 4);
	tree_size = make_config(cfg_tree, W, H, 2);
	RUN(round_trip);
	RUN(template_and_patches);
	RUN(every_truncation_rejected);
	RUN(malformed_images_rejected);
	RUN(payload_types_at_load);
	RUN(load_file);
	RUN(builder_rejections);
	RUN(slotted_configurations);
	RUN(launch_needs_the_slots);
	RUN(empty_image);
	RUN(launch_checks_before_submission);
	RUN(atomics_need_the_atomic_capability);
	RUN(link_channels_need_the_capability);
	RUN(launch_site_checked_before_submission);
	RUN(views_are_checked_against_their_bo);
	RUN(views_of_every_layout_source);
	RUN(malformed_memref_records_rejected);
	RUN(builder_memref_rejections);
	RUN(dynamic_work_needs_the_items_capability);
	RUN(captures_are_one_list_across_devices);
	RUN(placement_partitions_the_domain);
	RUN(placement_edges);
	RUN(spread_checks_every_device_first);
	RUN(no_device_on_host_paths);
	RUN(error_strings);
	RUN(source_iv);
	RUN(source_of);
	RUN(host_reports);
	return checks_done();
}
