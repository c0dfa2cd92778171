// SPDX-License-Identifier: MIT
/*
 * point_test: launch sites and logical thread points (spec §2.3) without
 * a device -- image digests, registered and host launch sites (and that
 * the host interpreter numbers its LAUNCHes the same way), ref and point
 * equality, their documented text, snprintf truncation and the errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loom_device.h"
#include "device_internal.h"
#include "loom_format.h"

#define W 4
#define H 4

static unsigned char cfg_dense[8192], cfg_tree[8192];
static size_t dense_size, tree_size;

static size_t make_config(void *buf, unsigned ports)
{
	struct loom_fabric_config c = { .magic = LOOM_CONFIG_MAGIC,
		.version = LOOM_CONFIG_VERSION, .width = W, .height = H,
		.num_ports = ports };
	size_t n = LOOM_CONFIG_SIZE((size_t)W * H, ports);

	memset(buf, 0, n);
	memcpy(buf, &c, sizeof(c));
	return n;
}

static const enum loom_arg_type vadd_types[1] = { LOOM_ARG_MEMREF_I64 };
static const enum loom_arg_type tree_types[2] = {
	LOOM_ARG_MEMREF_I64, LOOM_ARG_I64,
};

/*
 * The host program: "main" launches vadd (rank 1, extent r2) then tree,
 * then returns; "aux" computes, then launches lin2 (rank 2).  Registers:
 * r0 a memref, r1 a payload, r2 and r3 extents, r4.. tokens.
 */
static const uint32_t host_list[] = {
	/* 0: vadd(r0), no waits, extents (r2) */
	0, 1, 0, 0, 1, 2,
	/* 6: tree(r0, r1), no waits, no extents */
	2, 2, 0, 1, 0, 0,
	/* 12: lin2(r0), waits for nothing, extents (r2, r3) */
	1, 1, 0, 0, 2, 2, 3,
};

static const struct loom_host_insn host_insns[] = {
	/* main: 0..2 */
	{ .op = LOOM_HOST_LAUNCH, .dst = 4, .a = 0 },
	{ .op = LOOM_HOST_LAUNCH, .dst = 5, .a = 6 },
	{ .op = LOOM_HOST_RETURN },
	/* aux: 3..5 */
	{ .op = LOOM_HOST_CONST, .dst = 2, .a = 0 },
	{ .op = LOOM_HOST_LAUNCH, .dst = 4, .a = 12 },
	{ .op = LOOM_HOST_RETURN },
};

static const struct loom_host_func host_funcs[] = {
	{ .first = 0, .count = 3, .num_regs = 6 },
	{ .first = 3, .count = 3, .num_regs = 6 },
};

static const char *const host_names[] = { "main", "aux" };
static const uint64_t host_consts[] = { 3 };

/* A valid image: vadd (rank 1), lin2 (rank 2), tree; @host: a host program. */
static void *make_image(const char *dense_name, bool host, size_t *size)
{
	const struct loom_host_program prog = {
		.funcs = host_funcs, .names = host_names, .num_funcs = 2,
		.insns = host_insns, .num_insns = 6,
		.consts = host_consts, .num_consts = 1,
		.list = host_list, .num_list = sizeof(host_list) / 4,
	};
	struct loom_image_builder *b;
	void *bytes = NULL;

	if (loom_builder_new(W, H, &b))
		return NULL;
	if (loom_builder_add_dense(b, dense_name, 1, vadd_types, 1, cfg_dense, dense_size) ||
	    loom_builder_add_dense(b, "lin2", 2, vadd_types, 1, cfg_dense, dense_size) ||
	    loom_builder_add_dynamic(b, "tree", tree_types, 2, 1, 8, cfg_tree, tree_size) ||
	    (host && loom_builder_set_host(b, &prog)) ||
	    loom_builder_finish(b, &bytes, size))
		bytes = NULL;
	loom_builder_free(b);
	return bytes;
}

static struct loom_image *load(const char *dense_name, bool host)
{
	struct loom_image *img = NULL;
	size_t size;
	void *bytes = make_image(dense_name, host, &size);

	if (bytes && loom_image_load(bytes, size, &img))
		img = NULL;
	free(bytes);
	return img;
}

/* A host ref by hand. */
static struct loom_launch_ref host_ref(uint64_t image, uint32_t thread,
				       const char *func, uint32_t ordinal)
{
	return (struct loom_launch_ref){ .image = image, .thread = thread,
		.kind = LOOM_SITE_HOST, .ordinal = ordinal, .site = func };
}

static bool text_is(const char *want, int len, const char *got)
{
	return len == (int)strlen(want) && !strcmp(want, got);
}

/* -------------------------------------------------------------- tests --- */

TEST(digest_is_of_the_bytes)
{
	struct loom_image *a = load("vadd", true), *b = load("vadd", true);
	struct loom_image *c = load("vadx", true), *d = load("vadd", false);

	REQUIRE(a && b && c && d);
	CHECK(loom_image_digest(a) != 0);
	/* two loads of the same bytes: the same digest, not the load id */
	CHECK_EQ(loom_image_digest(a), loom_image_digest(b));
	CHECK(a->id != b->id);
	CHECK(loom_image_digest(a) != loom_image_digest(c));
	CHECK(loom_image_digest(a) != loom_image_digest(d));
	CHECK_EQ(0, loom_image_digest(NULL));
	loom_image_free(a);
	loom_image_free(b);
	loom_image_free(c);
	loom_image_free(d);
}

TEST(register_site)
{
	struct loom_image *img = load("vadd", false);
	struct loom_launch_ref ref, ref2, untouched = { .thread = 77 };
	char name[] = "bfs.root-1";

	REQUIRE(img);
	REQUIRE_EQ(0, loom_launch_site_register(img, "tree", name, &ref));
	CHECK_EQ(loom_image_digest(img), ref.image);
	CHECK_EQ(2, ref.thread);
	CHECK_EQ(LOOM_SITE_API, ref.kind);
	CHECK_EQ(0, ref.ordinal);
	/* the image keeps its own copy of the name */
	CHECK(ref.site != name);
	name[0] = 'X';
	CHECK(!strcmp(ref.site, "bfs.root-1"));
	/* once per name, whatever the thread */
	ref2 = untouched;
	CHECK_EQ(LOOM_E_SITE_EXISTS,
		 loom_launch_site_register(img, "tree", "bfs.root-1", &ref2));
	CHECK_EQ(LOOM_E_SITE_EXISTS,
		 loom_launch_site_register(img, "vadd", "bfs.root-1", &ref2));
	CHECK_EQ(77, ref2.thread);	/* out parameter untouched */
	/* a second site of the same thread is another ref */
	REQUIRE_EQ(0, loom_launch_site_register(img, "tree", "bfs2", &ref2));
	CHECK(!loom_launch_ref_equal(&ref, &ref2));
	CHECK(!strcmp(ref.site, "bfs.root-1"));	/* still valid after growth */
	loom_image_free(img);
}

TEST(register_rejects)
{
	struct loom_image *img = load("vadd", false);
	struct loom_launch_ref ref = { .thread = 77 };
	char longest[LOOM_SITE_NAME_MAX + 2];

	REQUIRE(img);
	CHECK_EQ(-EINVAL, loom_launch_site_register(NULL, "vadd", "s", &ref));
	CHECK_EQ(-EINVAL, loom_launch_site_register(img, NULL, "s", &ref));
	CHECK_EQ(-EINVAL, loom_launch_site_register(img, "vadd", NULL, &ref));
	CHECK_EQ(-EINVAL, loom_launch_site_register(img, "vadd", "s", NULL));
	CHECK_EQ(LOOM_E_NO_THREAD, loom_launch_site_register(img, "nope", "s", &ref));
	CHECK_EQ(LOOM_E_SITE_NAME, loom_launch_site_register(img, "vadd", "", &ref));
	CHECK_EQ(LOOM_E_SITE_NAME, loom_launch_site_register(img, "vadd", "a b", &ref));
	CHECK_EQ(LOOM_E_SITE_NAME, loom_launch_site_register(img, "vadd", "a/b", &ref));
	CHECK_EQ(LOOM_E_SITE_NAME, loom_launch_site_register(img, "vadd", "a:b", &ref));
	CHECK_EQ(LOOM_E_SITE_NAME, loom_launch_site_register(img, "vadd", "\xc3\xa9", &ref));
	memset(longest, 'n', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';	/* one too long */
	CHECK_EQ(LOOM_E_SITE_NAME, loom_launch_site_register(img, "vadd", longest, &ref));
	CHECK_EQ(77, ref.thread);
	/* nothing failed registered: the names are still free */
	CHECK_EQ(0, loom_launch_site_register(img, "vadd", "s", &ref));
	longest[LOOM_SITE_NAME_MAX] = '\0';	/* the longest */
	CHECK_EQ(0, loom_launch_site_register(img, "vadd", longest, &ref));
	CHECK_EQ((int)strlen(longest), (int)strlen(ref.site));
	loom_image_free(img);
}

TEST(host_sites)
{
	struct loom_image *img = load("vadd", true), *bare = load("vadd", false);
	struct loom_launch_ref ref = { .thread = 77 };
	uint64_t dg;

	REQUIRE(img && bare);
	dg = loom_image_digest(img);
	REQUIRE_EQ(0, loom_launch_site_host(img, "main", 0, &ref));
	CHECK(ref.image == dg && ref.thread == 0 && ref.kind == LOOM_SITE_HOST &&
	      ref.ordinal == 0 && !strcmp(ref.site, "main"));
	REQUIRE_EQ(0, loom_launch_site_host(img, "main", 1, &ref));
	CHECK(ref.thread == 2 && ref.ordinal == 1);
	/* ordinals count LAUNCHes only, per function */
	REQUIRE_EQ(0, loom_launch_site_host(img, "aux", 0, &ref));
	CHECK(ref.thread == 1 && ref.ordinal == 0 && !strcmp(ref.site, "aux"));
	ref.thread = 77;
	CHECK_EQ(LOOM_E_NO_LAUNCH_SITE, loom_launch_site_host(img, "main", 2, &ref));
	CHECK_EQ(LOOM_E_NO_LAUNCH_SITE, loom_launch_site_host(img, "aux", 1, &ref));
	CHECK_EQ(LOOM_E_NO_LAUNCH_SITE, loom_launch_site_host(img, "main", ~0u, &ref));
	CHECK_EQ(LOOM_E_NO_HOST_FUNC, loom_launch_site_host(img, "nope", 0, &ref));
	CHECK_EQ(LOOM_E_BAD_IMAGE, loom_launch_site_host(bare, "main", 0, &ref));
	CHECK_EQ(-EINVAL, loom_launch_site_host(NULL, "main", 0, &ref));
	CHECK_EQ(-EINVAL, loom_launch_site_host(img, NULL, 0, &ref));
	CHECK_EQ(-EINVAL, loom_launch_site_host(img, "main", 0, NULL));
	CHECK_EQ(77, ref.thread);
	loom_image_free(img);
	loom_image_free(bare);
}

/* What the interpreter tells its backend about each launch. */
struct seen {
	unsigned n;
	unsigned thread[8];
	uint32_t ordinal[8];
};

static int seen_launch(void *ctx, const struct loom_interp_launch *l)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->thread[s->n] = l->thread;
		s->ordinal[s->n] = l->ordinal;
	}
	s->n++;
	return 0;
}

/* loom_host_run()'s launches carry the refs loom_launch_site_host() gives. */
TEST(interpreter_numbers_sites_alike)
{
	static const struct loom_interp_backend be = { .launch = seen_launch };
	struct loom_image *img = load("vadd", true);
	struct loom_launch_ref ref;
	struct loom_image_view v;
	const char *funcs[2] = { "main", "aux" };

	REQUIRE(img);
	loom_image_view_of(img, &v);
	REQUIRE_EQ(0, loom_view_check_host(&v, NULL, 0));
	for (int f = 0; f < 2; f++) {
		struct seen s = { 0 };

		REQUIRE_EQ(0, loom_interp_run(&v, f, &be, &s, NULL));
		CHECK_EQ(f ? 1 : 2, s.n);
		for (unsigned i = 0; i < s.n && i < 8; i++) {
			REQUIRE_EQ(0, loom_launch_site_host(img, funcs[f],
							    s.ordinal[i], &ref));
			CHECK_EQ(i, s.ordinal[i]);
			CHECK_EQ(ref.thread, s.thread[i]);
		}
	}
	loom_image_free(img);
}

TEST(ref_equality)
{
	char main2[] = "main";
	struct loom_launch_ref a = host_ref(0x1234, 1, "main", 2), b;

	b = host_ref(0x1234, 1, main2, 2);
	CHECK(loom_launch_ref_equal(&a, &a));
	CHECK(loom_launch_ref_equal(&a, &b));		/* by text, not address */
	b.image = 0x1235;
	CHECK(!loom_launch_ref_equal(&a, &b));		/* another image */
	b = host_ref(0x1234, 2, "main", 2);
	CHECK(!loom_launch_ref_equal(&a, &b));		/* another thread */
	b = host_ref(0x1234, 1, "main", 3);
	CHECK(!loom_launch_ref_equal(&a, &b));		/* another LAUNCH */
	b = host_ref(0x1234, 1, "mainx", 2);
	CHECK(!loom_launch_ref_equal(&a, &b));		/* another function */
	b = host_ref(0x1234, 1, "main", 2);
	b.kind = LOOM_SITE_API;
	CHECK(!loom_launch_ref_equal(&a, &b));		/* api "main" is not host main */
	b = host_ref(0x1234, 1, NULL, 2);
	CHECK(!loom_launch_ref_equal(&a, &b));
	CHECK(!loom_launch_ref_equal(&a, NULL));
	CHECK(!loom_launch_ref_equal(NULL, &a));
}

TEST(ref_text)
{
	struct loom_launch_ref h = host_ref(0x9e3779b97f4a7c15ULL, 0, "main", 2);
	struct loom_launch_ref api = { .image = 0x2a, .thread = 3,
		.kind = LOOM_SITE_API, .site = "bfs" };
	char buf[128];
	int n;

	n = loom_launch_ref_format(&h, buf, sizeof(buf));
	CHECK(text_is("9e3779b97f4a7c15/0/host:main#2", n, buf));
	n = loom_launch_ref_format(&api, buf, sizeof(buf));
	CHECK(text_is("000000000000002a/3/api:bfs", n, buf));
	/* like snprintf: the whole length, what fits, a NUL */
	CHECK_EQ(26, loom_launch_ref_format(&api, NULL, 0));
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(26, loom_launch_ref_format(&api, buf, 0));
	CHECK_EQ('x', buf[0]);
	CHECK_EQ(26, loom_launch_ref_format(&api, buf, 1));
	CHECK_EQ('\0', buf[0]);
	CHECK_EQ(26, loom_launch_ref_format(&api, buf, 5));
	CHECK(!strcmp(buf, "0000"));
	CHECK_EQ(26, loom_launch_ref_format(&api, buf, 26));
	CHECK(!strcmp(buf, "000000000000002a/3/api:bf"));
	CHECK_EQ('x', buf[26]);
}

TEST(ref_text_rejects)
{
	struct loom_launch_ref r = host_ref(1, 0, "main", 0);
	char buf[16];

	CHECK_EQ(-EINVAL, loom_launch_ref_format(NULL, buf, sizeof(buf)));
	CHECK_EQ('\0', buf[0]);
	CHECK_EQ(-EINVAL, loom_launch_ref_format(&r, NULL, 4));
	r.kind = 0;
	strcpy(buf, "old");
	CHECK_EQ(-EINVAL, loom_launch_ref_format(&r, buf, sizeof(buf)));
	CHECK_EQ('\0', buf[0]);
	r.kind = 3;
	CHECK_EQ(-EINVAL, loom_launch_ref_format(&r, buf, sizeof(buf)));
	r = host_ref(1, 0, NULL, 0);
	CHECK_EQ(-EINVAL, loom_launch_ref_format(&r, buf, sizeof(buf)));
	CHECK_EQ(-EINVAL, loom_launch_ref_format(&r, NULL, 0));
}

TEST(dense_points)
{
	struct loom_launch_ref ref = host_ref(0x9e3779b97f4a7c15ULL, 0, "main", 2);
	struct loom_launch_ref other = host_ref(0x9e3779b97f4a7c15ULL, 0, "main", 1);
	const int64_t ext[4] = { 4, 1, 3, 2 };
	const int64_t c[4] = { 3, 0, 2, 1 };
	struct loom_thread_point p, q, untouched = { .rank = 9 };
	char buf[128];
	int n;

	REQUIRE_EQ(0, loom_thread_point_dense(&ref, c, ext, 3, &p));
	CHECK(p.kind == LOOM_POINT_DENSE && p.rank == 3 && p.coords[3] == 0);
	n = loom_thread_point_format(&p, buf, sizeof(buf));
	CHECK(text_is("9e3779b97f4a7c15/0/host:main#2[3,0,2]", n, buf));
	CHECK(loom_thread_point_equal(&p, &p));
	REQUIRE_EQ(0, loom_thread_point_dense(&ref, c, ext, 3, &q));
	CHECK(loom_thread_point_equal(&p, &q));
	/* another coordinate, rank or launch is another point */
	q.coords[2] = 1;
	CHECK(!loom_thread_point_equal(&p, &q));
	REQUIRE_EQ(0, loom_thread_point_dense(&ref, c, ext, 4, &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	n = loom_thread_point_format(&q, buf, sizeof(buf));
	CHECK(text_is("9e3779b97f4a7c15/0/host:main#2[3,0,2,1]", n, buf));
	REQUIRE_EQ(0, loom_thread_point_dense(&other, c, ext, 3, &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	CHECK(!loom_thread_point_equal(&p, NULL));
	CHECK(!loom_thread_point_equal(NULL, &p));
	/* rank 0: the one point, "[]" */
	REQUIRE_EQ(0, loom_thread_point_dense(&ref, NULL, NULL, 0, &q));
	n = loom_thread_point_format(&q, buf, sizeof(buf));
	CHECK(text_is("9e3779b97f4a7c15/0/host:main#2[]", n, buf));
	CHECK(!loom_thread_point_equal(&p, &q));
	/* coordinates the domain does not have; bad arguments */
	q = untouched;
	CHECK_EQ(LOOM_E_POINT_OUTSIDE, loom_thread_point_dense(&ref, (int64_t[]){ 4 }, ext, 1, &q));
	CHECK_EQ(LOOM_E_POINT_OUTSIDE, loom_thread_point_dense(&ref, (int64_t[]){ -1 }, ext, 1, &q));
	CHECK_EQ(LOOM_E_POINT_OUTSIDE, loom_thread_point_dense(&ref, (int64_t[]){ 0, 1 }, ext, 2, &q));
	CHECK_EQ(LOOM_E_POINT_OUTSIDE, loom_thread_point_dense(&ref, (int64_t[]){ 0 }, (int64_t[]){ 0 }, 1, &q));
	CHECK_EQ(LOOM_E_POINT_OUTSIDE, loom_thread_point_dense(&ref, (int64_t[]){ 0 }, (int64_t[]){ -2 }, 1, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dense(&ref, c, ext, LOOM_MAX_RANK + 1, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dense(&ref, NULL, ext, 1, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dense(&ref, c, NULL, 1, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dense(NULL, c, ext, 1, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dense(&ref, c, ext, 1, NULL));
	other.kind = 0;
	CHECK_EQ(-EINVAL, loom_thread_point_dense(&other, c, ext, 1, &q));
	CHECK_EQ(9, q.rank);
}

TEST(dynamic_points)
{
	struct loom_launch_ref ref = { .image = 0x9e3779b97f4a7c15ULL,
		.thread = 2, .kind = LOOM_SITE_API, .site = "bfs" };
	struct loom_launch_ref other = ref;
	struct loom_work_domain *d1, *d2, *d3;
	struct loom_work_resp root1, root2, root3, kids1[2], kids2[2];
	struct loom_item_id r1, r2, r3, k1[2], k2[2];
	struct loom_thread_point p, q, dense;
	const struct loom_item_id zero = { 0 };
	char buf[128];
	int n;

	REQUIRE_EQ(LOOM_OK, loom_work_domain_create_with_occurrence(7, &d1));
	REQUIRE_EQ(LOOM_OK, loom_work_domain_create_with_occurrence(7, &d2));
	REQUIRE_EQ(LOOM_OK, loom_work_domain_create_with_occurrence(8, &d3));
	REQUIRE_EQ(LOOM_OK, loom_work_admit(d1, &root1, &r1));
	REQUIRE_EQ(LOOM_OK, loom_work_admit(d2, &root2, &r2));
	REQUIRE_EQ(LOOM_OK, loom_work_admit(d3, &root3, &r3));
	REQUIRE_EQ(LOOM_OK, loom_work_spawn_group(d1, root1, 2, kids1, k1));
	REQUIRE_EQ(LOOM_OK, loom_work_spawn_group(d2, root2, 2, kids2, k2));

	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &k1[1], &p));
	CHECK(p.kind == LOOM_POINT_DYNAMIC && p.rank == 0);
	n = loom_thread_point_format(&p, buf, sizeof(buf));
	CHECK(text_is("9e3779b97f4a7c15/2/api:bfs{7:root/1}", n, buf));
	/* the same path of the same occurrence, from another domain: equal */
	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &k2[1], &q));
	CHECK(loom_thread_point_equal(&p, &q));
	/* another ordinal, depth, occurrence or launch: another point */
	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &k2[0], &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &r2, &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	n = loom_thread_point_format(&q, buf, sizeof(buf));
	CHECK(text_is("9e3779b97f4a7c15/2/api:bfs{7:root}", n, buf));
	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &r1, &p));
	CHECK(loom_thread_point_equal(&p, &q));
	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &r3, &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	other.site = "bfs2";
	REQUIRE_EQ(0, loom_thread_point_dynamic(&other, &r1, &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	other = ref;
	other.thread = 1;
	REQUIRE_EQ(0, loom_thread_point_dynamic(&other, &r1, &q));
	CHECK(!loom_thread_point_equal(&p, &q));
	/* a dense point is never a dynamic one */
	REQUIRE_EQ(0, loom_thread_point_dense(&ref, NULL, NULL, 0, &dense));
	CHECK(!loom_thread_point_equal(&p, &dense));
	CHECK(!loom_thread_point_equal(&dense, &p));
	/* bad arguments */
	CHECK_EQ(-EINVAL, loom_thread_point_dynamic(&ref, &zero, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dynamic(&ref, NULL, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dynamic(NULL, &r1, &q));
	CHECK_EQ(-EINVAL, loom_thread_point_dynamic(&ref, &r1, NULL));
	other.site = NULL;
	CHECK_EQ(-EINVAL, loom_thread_point_dynamic(&other, &r1, &q));
	loom_work_domain_destroy(d1);
	loom_work_domain_destroy(d2);
	loom_work_domain_destroy(d3);
}

/* At every size, a point's text is a prefix of the whole, NUL-terminated. */
static void check_truncation(const struct loom_thread_point *p)
{
	int whole = loom_thread_point_format(p, NULL, 0);
	char *full, *buf;

	REQUIRE(whole > 0);
	full = malloc(whole + 1);
	buf = malloc(whole + 2);
	REQUIRE(full && buf);
	CHECK_EQ(whole, loom_thread_point_format(p, full, whole + 1));
	CHECK_EQ(whole, (int)strlen(full));
	for (int size = 0; size <= whole + 1; size++) {
		int kept = size ? size - 1 : 0;

		memset(buf, 'x', whole + 2);
		CHECK_EQ(whole, loom_thread_point_format(p, buf, size));
		if (size)
			CHECK(!memcmp(buf, full, kept) && buf[kept] == '\0');
		CHECK_EQ('x', buf[size]);	/* nothing past @size */
	}
	free(full);
	free(buf);
}

TEST(point_text_truncates_like_snprintf)
{
	struct loom_launch_ref ref = host_ref(0xfeedULL, 1, "main", 0);
	const int64_t ext[2] = { 1000, 1LL << 40 };
	const int64_t c[2] = { 999, (1LL << 40) - 1 };
	struct loom_work_domain *d;
	struct loom_work_resp r;
	struct loom_item_id id;
	struct loom_thread_point p;

	REQUIRE_EQ(0, loom_thread_point_dense(&ref, c, ext, 2, &p));
	check_truncation(&p);
	/* an item deep enough that its text is long */
	REQUIRE_EQ(LOOM_OK, loom_work_domain_create_with_occurrence(123456789, &d));
	REQUIRE_EQ(LOOM_OK, loom_work_admit(d, &r, &id));
	for (int depth = 0; depth < 100; depth++)
		REQUIRE_EQ(LOOM_OK, loom_work_spawn(d, r, &r, &id));
	REQUIRE_EQ(0, loom_thread_point_dynamic(&ref, &id, &p));
	CHECK(loom_thread_point_format(&p, NULL, 0) > 200);
	check_truncation(&p);
	loom_work_domain_destroy(d);
}

TEST(point_text_rejects)
{
	struct loom_launch_ref ref = host_ref(1, 0, "main", 0);
	struct loom_thread_point p;
	char buf[64];

	REQUIRE_EQ(0, loom_thread_point_dense(&ref, NULL, NULL, 0, &p));
	CHECK_EQ(-EINVAL, loom_thread_point_format(&p, NULL, 8));
	CHECK_EQ(-EINVAL, loom_thread_point_format(NULL, buf, sizeof(buf)));
	CHECK_EQ('\0', buf[0]);
	p.kind = 0;
	CHECK_EQ(-EINVAL, loom_thread_point_format(&p, buf, sizeof(buf)));
	p.kind = LOOM_POINT_DENSE;
	p.rank = LOOM_MAX_RANK + 1;
	CHECK_EQ(-EINVAL, loom_thread_point_format(&p, buf, sizeof(buf)));
	CHECK(!loom_thread_point_equal(&p, &p));
	p.rank = 0;
	p.launch.site = NULL;
	CHECK_EQ(-EINVAL, loom_thread_point_format(&p, buf, sizeof(buf)));
}

TEST(error_strings)
{
	const int errs[] = { LOOM_E_SITE_NAME, LOOM_E_SITE_EXISTS,
			     LOOM_E_NO_LAUNCH_SITE, LOOM_E_POINT_OUTSIDE,
			     LOOM_E_SITE_MISMATCH };

	for (unsigned i = 0; i < 5; i++) {
		CHECK(strcmp(loom_strerror(errs[i]), "unknown error"));
		for (unsigned j = 0; j < i; j++)
			CHECK(strcmp(loom_strerror(errs[i]), loom_strerror(errs[j])));
	}
}

int main(void)
{
	dense_size = make_config(cfg_dense, 4);
	tree_size = make_config(cfg_tree, 2);
	RUN(digest_is_of_the_bytes);
	RUN(register_site);
	RUN(register_rejects);
	RUN(host_sites);
	RUN(interpreter_numbers_sites_alike);
	RUN(ref_equality);
	RUN(ref_text);
	RUN(ref_text_rejects);
	RUN(dense_points);
	RUN(dynamic_points);
	RUN(point_text_truncates_like_snprintf);
	RUN(point_text_rejects);
	RUN(error_strings);
	return checks_done();
}
