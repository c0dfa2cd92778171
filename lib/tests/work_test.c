// SPDX-License-Identifier: MIT
/*
 * work_test: the responsibility kernel and item identity, one rule per
 * test: root admission, per-parent ordinals, acquire-before-publish,
 * group spawn, exactly-once retirement and completion, the typed
 * rejections (each leaving the domain unchanged), and structural identity.
 */
#include "work_util.h"
#include "work_internal.h"

#define OCC	7

/*
 * Identity is checked by its text and across domains of one occurrence,
 * so these domains name theirs (the replay entry point);
 * occurrence_test checks the minted ones.
 */
static struct loom_work_domain *new_domain(uint64_t occurrence)
{
	struct loom_work_domain *d = NULL;

	if (loom_work_domain_create_with_occurrence(occurrence, &d))
		return NULL;
	return d;
}

/* A domain with its root admitted. */
static struct loom_work_domain *admitted(struct loom_work_resp *root)
{
	struct loom_work_domain *d = new_domain(OCC);

	if (d && loom_work_admit(d, root, NULL)) {
		loom_work_domain_destroy(d);
		return NULL;
	}
	return d;
}

TEST(admit_acquires_root_and_closes_source)
{
	struct loom_work_domain *d = new_domain(OCC);
	struct loom_work_resp root;
	struct loom_item_id id;

	REQUIRE(d);
	CHECK_EQ(LOOM_WORK_AWAITING_ROOT, loom_work_domain_status(d));
	CHECK_EQ(0, loom_work_active_count(d));
	CHECK_OK(loom_work_admit(d, &root, &id));
	CHECK_EQ(1, loom_work_active_count(d));
	CHECK_EQ(LOOM_WORK_ACTIVE, loom_work_domain_status(d));
	CHECK(!loom_work_resp_is_none(root));
	CHECK_STR("7:root", id_text(&id));
	loom_work_domain_destroy(d);
}

TEST(second_admit_fails_root_source_closed)
{
	struct loom_work_resp root, again = { 0, 0 };
	struct loom_work_domain *d = admitted(&root);
	enum loom_work_status st;

	REQUIRE(d);
	CHECK_EQ(LOOM_WORK_ROOT_CLOSED, loom_work_admit(d, &again, NULL));
	CHECK(loom_work_resp_is_none(again));
	CHECK_EQ(1, loom_work_active_count(d));
	/* Still closed after the root retired and the domain completed. */
	CHECK_OK(loom_work_retire(d, root, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_EQ(LOOM_WORK_ROOT_CLOSED, loom_work_admit(d, &again, NULL));
	CHECK_EQ(LOOM_WORK_COMPLETED, loom_work_domain_status(d));
	loom_work_domain_destroy(d);
}

TEST(root_identity_is_occurrence_root_zero)
{
	struct loom_work_resp root;
	struct loom_work_domain *d = new_domain(3);
	struct loom_item_id id, parent, looked_up;

	REQUIRE(d);
	CHECK_OK(loom_work_admit(d, &root, &id));
	CHECK_EQ(3, id.occurrence);
	CHECK(id.parent == NULL);
	CHECK(loom_item_id_is_root(&id));
	CHECK_EQ(0, id.ordinal);
	CHECK_EQ(0, loom_item_id_depth(&id));
	CHECK(!loom_item_id_parent(&id, &parent));
	CHECK_OK(loom_work_item_id(d, root, &looked_up));
	CHECK(loom_item_id_equal(&id, &looked_up));
	loom_work_domain_destroy(d);
}

TEST(spawn_ordinals_count_per_parent_from_zero)
{
	struct loom_work_resp root, a, b, c, a0, a1, b0;
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id ia, ib, ic, ia0, ia1, ib0;

	REQUIRE(d);
	/* Interleaved spawns from different parents: each counts its own. */
	CHECK_OK(loom_work_spawn(d, root, &a, &ia));
	CHECK_OK(loom_work_spawn(d, a, &a0, &ia0));
	CHECK_OK(loom_work_spawn(d, root, &b, &ib));
	CHECK_OK(loom_work_spawn(d, b, &b0, &ib0));
	CHECK_OK(loom_work_spawn(d, a, &a1, &ia1));
	CHECK_OK(loom_work_spawn(d, root, &c, &ic));
	CHECK_STR("7:root/0", id_text(&ia));
	CHECK_STR("7:root/1", id_text(&ib));
	CHECK_STR("7:root/2", id_text(&ic));
	CHECK_STR("7:root/0/0", id_text(&ia0));
	CHECK_STR("7:root/0/1", id_text(&ia1));
	CHECK_STR("7:root/1/0", id_text(&ib0));
	CHECK_EQ(7, loom_work_active_count(d));
	loom_work_domain_destroy(d);
}

TEST(spawn_acquires_child_before_parent_retires)
{
	struct loom_work_resp root, child;
	struct loom_work_domain *d = admitted(&root);
	enum loom_work_status st;

	REQUIRE(d);
	CHECK_OK(loom_work_spawn(d, root, &child, NULL));
	/* The child's responsibility exists as soon as spawn returns... */
	CHECK_EQ(2, loom_work_active_count(d));
	/* ...so the parent's retirement cannot see a transient zero. */
	CHECK_OK(loom_work_retire(d, root, &st));
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	CHECK_EQ(LOOM_WORK_ACTIVE, loom_work_domain_status(d));
	CHECK_OK(loom_work_retire(d, child, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	loom_work_domain_destroy(d);
}

TEST(group_spawn_is_all_or_nothing)
{
	struct loom_work_resp root, kids[3], one;
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id ids[3], id;

	REQUIRE(d);
	CHECK_OK(loom_work_spawn_group(d, root, 3, kids, ids));
	CHECK_STR("7:root/0", id_text(&ids[0]));
	CHECK_STR("7:root/1", id_text(&ids[1]));
	CHECK_STR("7:root/2", id_text(&ids[2]));
	CHECK_EQ(4, loom_work_active_count(d));
	/* Only two ordinals left: a group of three acquires nothing. */
	CHECK_OK(loom_work_set_next_ordinal_for_test(d, root, UINT64_MAX - 1));
	CHECK_EQ(LOOM_WORK_ORDINALS_EXHAUSTED,
		 loom_work_spawn_group(d, root, 3, kids, ids));
	CHECK_EQ(4, loom_work_active_count(d));
	/* ...and used no ordinal: the next spawn gets UINT64_MAX - 1. */
	CHECK_OK(loom_work_spawn(d, root, &one, &id));
	CHECK_EQ(UINT64_MAX - 1, id.ordinal);
	CHECK_EQ(5, loom_work_active_count(d));
	/* A group of zero is a successful no-op. */
	CHECK_OK(loom_work_spawn_group(d, root, 0, NULL, NULL));
	CHECK_EQ(5, loom_work_active_count(d));
	loom_work_domain_destroy(d);
}

TEST(retire_consumes_responsibility_exactly_once)
{
	struct loom_work_resp root, child;
	struct loom_work_domain *d = admitted(&root);
	enum loom_work_status st = LOOM_WORK_AWAITING_ROOT;

	REQUIRE(d);
	CHECK_OK(loom_work_spawn(d, root, &child, NULL));
	CHECK_OK(loom_work_retire(d, child, &st));
	CHECK_EQ(LOOM_WORK_ACTIVE, st);
	st = LOOM_WORK_AWAITING_ROOT;
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_work_retire(d, child, &st));
	CHECK_EQ(LOOM_WORK_AWAITING_ROOT, st);	/* untouched on failure */
	CHECK_EQ(1, loom_work_active_count(d));
	CHECK_OK(loom_work_retire(d, root, &st));
	CHECK_EQ(LOOM_WORK_COMPLETED, st);
	CHECK_EQ(LOOM_WORK_RESP_USED, loom_work_retire(d, root, &st));
	CHECK_EQ(0, loom_work_active_count(d));
	loom_work_domain_destroy(d);
}

/* Retires a 3-level tree in the order @order (indices into its items). */
static int completions_in_order(const int order[13])
{
	struct loom_work_resp items[13];
	struct loom_work_domain *d = admitted(&items[0]);
	int completions = 0;

	if (!d)
		return -1;
	/* Items 1..3 are the root's children, 4..12 theirs, 3 each. */
	loom_work_spawn_group(d, items[0], 3, &items[1], NULL);
	for (int i = 0; i < 3; i++)
		loom_work_spawn_group(d, items[1 + i], 3, &items[4 + 3 * i], NULL);
	for (int i = 0; i < 13; i++) {
		enum loom_work_status st;

		if (loom_work_retire(d, items[order[i]], &st))
			completions = -100;
		completions += st == LOOM_WORK_COMPLETED;
	}
	if (loom_work_domain_status(d) != LOOM_WORK_COMPLETED)
		completions = -1000;
	loom_work_domain_destroy(d);
	return completions;
}

TEST(exactly_one_retirement_reports_completion)
{
	static const int orders[][13] = {
		{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
		{ 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 },
		{ 4, 0, 5, 1, 6, 7, 2, 12, 8, 3, 9, 11, 10 },
	};

	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++)
		CHECK_EQ(1, completions_in_order(orders[i]));
}

TEST(no_completion_before_root_admission)
{
	struct loom_work_domain *d = new_domain(OCC);

	REQUIRE(d);
	/* An empty set is not completion while the root source is open. */
	CHECK_EQ(0, loom_work_active_count(d));
	CHECK_EQ(LOOM_WORK_AWAITING_ROOT, loom_work_domain_status(d));
	loom_work_domain_destroy(d);
}

TEST(foreign_domain_rejected)
{
	struct loom_work_resp root, other_root, child;
	struct loom_work_domain *d = admitted(&root);
	struct loom_work_domain *other = admitted(&other_root);
	struct loom_item_id id;

	REQUIRE(d && other);
	/* Same serial, different domain: the handles are not interchangeable. */
	CHECK_EQ(root.serial, other_root.serial);
	CHECK_EQ(LOOM_WORK_FOREIGN_DOMAIN,
		 loom_work_spawn(d, other_root, &child, NULL));
	CHECK_EQ(LOOM_WORK_FOREIGN_DOMAIN, loom_work_retire(d, other_root, NULL));
	CHECK_EQ(LOOM_WORK_FOREIGN_DOMAIN, loom_work_item_id(d, other_root, &id));
	CHECK_EQ(1, loom_work_active_count(d));
	CHECK_EQ(1, loom_work_active_count(other));
	loom_work_domain_destroy(other);
	loom_work_domain_destroy(d);
}

TEST(invalid_responsibility_rejected)
{
	struct loom_work_resp root, child;
	struct loom_work_domain *d = admitted(&root);
	struct loom_work_resp none = { 0, 0 };
	struct loom_work_resp unissued = { root.domain_key, root.serial + 1 };
	struct loom_item_id id;

	REQUIRE(d);
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_work_spawn(d, none, &child, NULL));
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_work_retire(d, none, NULL));
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_work_spawn(d, unissued, &child, NULL));
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_work_retire(d, unissued, NULL));
	CHECK_EQ(LOOM_WORK_RESP_INVALID, loom_work_item_id(d, unissued, &id));
	CHECK_EQ(1, loom_work_active_count(d));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_retire(NULL, root, NULL));
	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT, loom_work_admit(d, NULL, NULL));
	loom_work_domain_destroy(d);
}

/*
 * A dead domain's chunks go to a pool and come back to the next domain
 * without being cleared (work_internal.h): none of the records the dead
 * domain issued there may read as issued in the new one.
 */
TEST(reused_records_are_not_issued_in_the_next_domain)
{
	const size_t n = LOOM_WORK_CHUNK_RECORDS + 100;
	struct loom_work_resp root, child, *kids = calloc(n, sizeof(*kids));
	struct loom_work_domain *d = admitted(&root);
	uint64_t stale = 0, again = 0;
	struct loom_item_id id;

	REQUIRE(kids && d);
	CHECK_OK(loom_work_spawn_group(d, root, n, kids, NULL));
	for (size_t i = 0; i < n; i += 2)
		CHECK_OK(loom_work_retire(d, kids[i], NULL));
	loom_work_domain_destroy(d);
	d = admitted(&root);
	REQUIRE(d);
	for (uint64_t serial = 2; serial <= n + 1; serial++) {
		struct loom_work_resp r = { root.domain_key, serial };

		stale += loom_work_retire(d, r, NULL) != LOOM_WORK_RESP_INVALID;
		stale += loom_work_item_id(d, r, &id) != LOOM_WORK_RESP_INVALID;
		stale += loom_work_spawn(d, r, &child, NULL) !=
			 LOOM_WORK_RESP_INVALID;
	}
	CHECK_EQ(0, stale);
	CHECK_EQ(1, loom_work_active_count(d));
	/* What it issues there is its own, live once. */
	CHECK_OK(loom_work_spawn_group(d, root, 3, kids, NULL));
	for (size_t i = 0; i < 3; i++) {
		CHECK_OK(loom_work_item_id(d, kids[i], &id));
		CHECK_EQ(i, id.ordinal);
		CHECK_OK(loom_work_retire(d, kids[i], NULL));
		again += loom_work_retire(d, kids[i], NULL) == LOOM_WORK_RESP_USED;
	}
	CHECK_EQ(3, again);
	CHECK_EQ(1, loom_work_active_count(d));
	loom_work_domain_destroy(d);
	free(kids);
}

TEST(retired_parent_cannot_spawn)
{
	struct loom_work_resp root, child, grandchild = { 0, 0 };
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id id;

	REQUIRE(d);
	CHECK_OK(loom_work_spawn(d, root, &child, NULL));
	CHECK_OK(loom_work_retire(d, child, NULL));
	CHECK_EQ(LOOM_WORK_PARENT_RETIRED,
		 loom_work_spawn(d, child, &grandchild, NULL));
	CHECK_EQ(LOOM_WORK_PARENT_RETIRED,
		 loom_work_spawn_group(d, child, 0, NULL, NULL));
	CHECK(loom_work_resp_is_none(grandchild));
	CHECK_EQ(1, loom_work_active_count(d));
	/* A retired item keeps its identity. */
	CHECK_OK(loom_work_item_id(d, child, &id));
	CHECK_STR("7:root/0", id_text(&id));
	loom_work_domain_destroy(d);
}

TEST(ordinal_space_ends_at_uint64_max)
{
	struct loom_work_resp root, last, more = { 0, 0 };
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id id;
	char text[64];

	REQUIRE(d);
	CHECK_OK(loom_work_set_next_ordinal_for_test(d, root, UINT64_MAX));
	CHECK_OK(loom_work_spawn(d, root, &last, &id));
	CHECK_EQ(UINT64_MAX, id.ordinal);
	loom_item_id_format(&id, text, sizeof(text));
	CHECK_STR("7:root/18446744073709551615", text);
	CHECK_EQ(LOOM_WORK_ORDINALS_EXHAUSTED, loom_work_spawn(d, root, &more, NULL));
	CHECK(loom_work_resp_is_none(more));
	CHECK_EQ(2, loom_work_active_count(d));
	/* Only that parent is exhausted. */
	CHECK_OK(loom_work_spawn(d, last, &more, &id));
	CHECK_STR("7:root/18446744073709551615/0", id_text(&id));
	loom_work_domain_destroy(d);
}

TEST(spawn_after_completion_rejected)
{
	struct loom_work_resp root, child;
	struct loom_work_domain *d = admitted(&root);

	REQUIRE(d);
	CHECK_OK(loom_work_retire(d, root, NULL));
	CHECK_EQ(LOOM_WORK_COMPLETED, loom_work_domain_status(d));
	CHECK_EQ(LOOM_WORK_PARENT_RETIRED, loom_work_spawn(d, root, &child, NULL));
	CHECK_EQ(LOOM_WORK_COMPLETED, loom_work_domain_status(d));
	CHECK_EQ(0, loom_work_active_count(d));
	loom_work_domain_destroy(d);
}

/*
 * Builds root/1/0 in a domain of @occurrence, after @skew other items (so
 * storage, serials and addresses differ, but not the path).
 */
static struct loom_work_domain *build_path(uint64_t occurrence, int skew,
					   struct loom_item_id *out)
{
	struct loom_work_domain *d = new_domain(occurrence);
	struct loom_work_resp root, kids[2], other, leaf;

	if (!d || loom_work_admit(d, &root, NULL))
		return NULL;
	loom_work_spawn_group(d, root, 2, kids, NULL);
	for (int i = 0; i < skew; i++)
		loom_work_spawn(d, kids[0], &other, NULL);
	loom_work_spawn(d, kids[1], &leaf, out);
	return d;
}

TEST(id_equality_is_structural_not_address)
{
	struct loom_item_id a, b, c;
	struct loom_work_domain *da = build_path(OCC, 0, &a);
	struct loom_work_domain *db = build_path(OCC, 5, &b);
	struct loom_work_domain *dc = build_path(OCC + 1, 0, &c);

	REQUIRE(da && db && dc);
	CHECK(a.parent != b.parent);	/* different storage... */
	CHECK(loom_item_id_equal(&a, &b));	/* ...same identity */
	CHECK_EQ(0, loom_item_id_compare(&a, &b));
	CHECK_EQ(loom_item_id_hash(&a), loom_item_id_hash(&b));
	CHECK_STR(id_text(&a), id_text(&b));
	/* Another occurrence is another item. */
	CHECK(!loom_item_id_equal(&a, &c));
	CHECK(loom_item_id_compare(&a, &c) < 0);
	loom_work_domain_destroy(da);
	loom_work_domain_destroy(db);
	loom_work_domain_destroy(dc);
}

TEST(id_order_is_occurrence_then_preorder)
{
	struct loom_work_resp root, k[3], g[2];
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id r, kid[3], gk[2], sorted[6];

	REQUIRE(d);
	loom_work_item_id(d, root, &r);
	loom_work_spawn_group(d, root, 3, k, kid);
	loom_work_spawn_group(d, k[1], 2, g, gk);
	/* root < root/0 < root/1 < root/1/0 < root/1/1 < root/2 */
	sorted[0] = r, sorted[1] = kid[0], sorted[2] = kid[1];
	sorted[3] = gk[0], sorted[4] = gk[1], sorted[5] = kid[2];
	for (int i = 0; i < 6; i++) {
		for (int j = 0; j < 6; j++) {
			int c = loom_item_id_compare(&sorted[i], &sorted[j]);

			if ((i < j && c >= 0) || (i == j && c) || (i > j && c <= 0))
				CHECK_FAIL_("compare(%s, %s) = %d",
					    id_text(&sorted[i]),
					    id_text(&sorted[j]), c);
			CHECK_EQ(i == j, loom_item_id_equal(&sorted[i], &sorted[j]));
		}
	}
	loom_work_domain_destroy(d);
}

TEST(id_hash_depends_on_every_component)
{
	struct loom_work_resp root, k[2], g;
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id r, kid[2], gk, other_occ;

	REQUIRE(d);
	loom_work_item_id(d, root, &r);
	loom_work_spawn_group(d, root, 2, k, kid);
	loom_work_spawn(d, k[0], &g, &gk);
	other_occ = kid[0];
	other_occ.occurrence++;
	/* root/0 vs root/1 (ordinal), root/0 vs root/0/0 (parent), occurrence */
	CHECK(loom_item_id_hash(&kid[0]) != loom_item_id_hash(&kid[1]));
	CHECK(loom_item_id_hash(&kid[0]) != loom_item_id_hash(&gk));
	CHECK(loom_item_id_hash(&r) != loom_item_id_hash(&kid[0]));
	CHECK(loom_item_id_hash(&kid[0]) != loom_item_id_hash(&other_occ));
	loom_work_domain_destroy(d);
}

/*
 * A chain root/0/0/.../0 of @depth items below the root; @ids[k] is the
 * item at depth k (ids[0] the root).
 */
static struct loom_work_domain *build_chain(size_t depth,
					    struct loom_item_id *ids)
{
	struct loom_work_resp at;
	struct loom_work_domain *d = admitted(&at);

	if (!d || loom_work_item_id(d, at, &ids[0]))
		return NULL;
	for (size_t k = 1; k <= depth; k++)
		if (loom_work_spawn(d, at, &at, &ids[k]))
			return NULL;
	return d;
}

/*
 * Hashes are computed when first needed and cached along the path, in
 * pieces when the uncached part is long (more than 256 items, and more than
 * 256 * 256 here): whatever was hashed before, every id hashes the same.
 */
TEST(id_hash_is_the_same_however_the_path_was_hashed)
{
	enum { DEPTH = 70000 };
	static struct loom_item_id top_down[DEPTH + 1], leaf_first[DEPTH + 1],
		middle_first[DEPTH + 1];
	struct loom_work_domain *a = build_chain(DEPTH, top_down);
	struct loom_work_domain *b = build_chain(DEPTH, leaf_first);
	struct loom_work_domain *c = build_chain(DEPTH, middle_first);
	static uint64_t expect[DEPTH + 1];
	size_t wrong = 0;

	REQUIRE(a && b && c);
	/* One item at a time from the root: every step hashes one node. */
	for (size_t k = 0; k <= DEPTH; k++)
		expect[k] = loom_item_id_hash(&top_down[k]);
	CHECK_EQ(expect[DEPTH], loom_item_id_hash(&leaf_first[DEPTH]));
	CHECK_EQ(expect[DEPTH / 2], loom_item_id_hash(&middle_first[DEPTH / 2]));
	CHECK_EQ(expect[300], loom_item_id_hash(&middle_first[300]));
	CHECK_EQ(expect[DEPTH - 1], loom_item_id_hash(&middle_first[DEPTH - 1]));
	for (size_t k = 0; k <= DEPTH; k++) {
		wrong += loom_item_id_hash(&leaf_first[k]) != expect[k];
		wrong += loom_item_id_hash(&middle_first[k]) != expect[k];
	}
	CHECK_EQ(0, wrong);
	CHECK(loom_item_id_equal(&leaf_first[DEPTH], &top_down[DEPTH]));
	CHECK(!loom_item_id_equal(&leaf_first[DEPTH], &top_down[DEPTH - 1]));
	loom_work_domain_destroy(a);
	loom_work_domain_destroy(b);
	loom_work_domain_destroy(c);
}

TEST(id_format_like_snprintf)
{
	struct loom_work_resp root, k[3], g;
	struct loom_work_domain *d = new_domain(12);
	struct loom_item_id kid[3], gk;
	char small[8], one[1] = { 'x' };

	REQUIRE(d);
	loom_work_admit(d, &root, NULL);
	loom_work_spawn_group(d, root, 3, k, kid);
	loom_work_spawn(d, k[2], &g, &gk);
	CHECK_STR("12:root/2/0", id_text(&gk));
	CHECK_EQ(strlen("12:root/2/0"), loom_item_id_format(&gk, NULL, 0));
	CHECK_EQ(11, loom_item_id_format(&gk, small, sizeof(small)));
	CHECK_STR("12:root", small);
	CHECK_EQ(11, loom_item_id_format(&gk, one, sizeof(one)));
	CHECK_EQ('\0', one[0]);
	loom_work_domain_destroy(d);
}

TEST(id_parent_and_depth)
{
	struct loom_work_resp root, k, g;
	struct loom_work_domain *d = admitted(&root);
	struct loom_item_id r, kid, gk, p;

	REQUIRE(d);
	loom_work_item_id(d, root, &r);
	loom_work_spawn(d, root, &k, &kid);
	loom_work_spawn(d, k, &g, &gk);
	CHECK_EQ(2, loom_item_id_depth(&gk));
	CHECK(loom_item_id_parent(&gk, &p));
	CHECK(loom_item_id_equal(&p, &kid));
	CHECK(loom_item_id_parent(&p, &p));
	CHECK(loom_item_id_equal(&p, &r));
	CHECK(loom_item_id_is_root(&p));
	loom_work_domain_destroy(d);
}

/*
 * Every typed error of both ranges has its own sentence; 0 is success.
 * The first code past each range has none: a code added without its
 * sentence, or without moving the range here, fails.
 */
TEST(strerror_names_every_error)
{
	static const int ranges[][2] = {
		{ LOOM_WORK_OCCURRENCES_EXHAUSTED, LOOM_WORK_INVALID_ARGUMENT },
		{ LOOM_E_VIEW_OUTSIDE, LOOM_E_EXTENT_COUNT },
	};

	CHECK_STR("success", loom_strerror(LOOM_OK));
	for (int r = 0; r < 2; r++) {
		for (int e = ranges[r][0]; e <= ranges[r][1]; e++) {
			const char *text = loom_strerror(e);

			CHECK(text && *text);
			CHECK(strcmp(text, "unknown error"));
			for (int f = e + 1; f <= ranges[r][1]; f++)
				CHECK(strcmp(text, loom_strerror(f)));
		}
	}
	CHECK(strcmp(loom_strerror(LOOM_WORK_DEVICE_ERROR), loom_strerror(LOOM_E_WORK_FAILED)));
	CHECK_STR("unknown error", loom_strerror(1000));
	for (int r = 0; r < 2; r++)
		CHECK_STR("unknown error", loom_strerror(ranges[r][0] - 1));
	CHECK_STR("Invalid argument", loom_strerror(-22));
}

/*
 * Per-worker state comes from loom_lines_alloc(): whole cache lines, so
 * two workers' state never shares one (every item writes it).
 */
TEST(lines_alloc_gives_whole_zeroed_lines)
{
	static const size_t sizes[][2] = { { 1, 16 }, { 3, 24 }, { 2, 64 },
					   { 5, 72 }, { 0, 8 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i][0], size = sizes[i][1];
		size_t bytes = (n * size + LOOM_CACHE_LINE - 1) /
			       LOOM_CACHE_LINE * LOOM_CACHE_LINE;
		unsigned char *a = loom_lines_alloc(n, size);
		unsigned char *b = loom_lines_alloc(n, size);

		REQUIRE(a && b);
		CHECK_EQ(0, (uintptr_t)a % LOOM_CACHE_LINE);
		CHECK_EQ(0, (uintptr_t)b % LOOM_CACHE_LINE);
		/* zeroed, and the padding is the allocation's own */
		for (size_t k = 0; k < bytes; k++)
			CHECK_EQ(0, a[k]);
		memset(a, 0xa5, bytes);
		free(a);
		free(b);
	}
	CHECK(!loom_lines_alloc(SIZE_MAX / 8, 16));
}

int main(void)
{
	RUN(admit_acquires_root_and_closes_source);
	RUN(second_admit_fails_root_source_closed);
	RUN(root_identity_is_occurrence_root_zero);
	RUN(spawn_ordinals_count_per_parent_from_zero);
	RUN(spawn_acquires_child_before_parent_retires);
	RUN(group_spawn_is_all_or_nothing);
	RUN(retire_consumes_responsibility_exactly_once);
	RUN(exactly_one_retirement_reports_completion);
	RUN(no_completion_before_root_admission);
	RUN(foreign_domain_rejected);
	RUN(invalid_responsibility_rejected);
	RUN(reused_records_are_not_issued_in_the_next_domain);
	RUN(retired_parent_cannot_spawn);
	RUN(ordinal_space_ends_at_uint64_max);
	RUN(spawn_after_completion_rejected);
	RUN(id_equality_is_structural_not_address);
	RUN(id_order_is_occurrence_then_preorder);
	RUN(id_hash_depends_on_every_component);
	RUN(id_hash_is_the_same_however_the_path_was_hashed);
	RUN(id_format_like_snprintf);
	RUN(id_parent_and_depth);
	RUN(strerror_names_every_error);
	RUN(lines_alloc_gives_whole_zeroed_lines);
	return checks_done();
}
