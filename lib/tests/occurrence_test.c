// SPDX-License-Identifier: MIT
/*
 * occurrence_test: dispatch occurrences belong to the runtime (spec
 * "Logical Domains And Data Views" §2.3).  A domain, scheduler or run whose
 * caller names no occurrence gets one libloom minted: non-zero, larger
 * than every earlier one, different from every other live one (also for
 * two domains of the same root launch), unique when minted from several
 * threads at once; exhaustion is a typed error; a replay names its own.
 */
#include <pthread.h>

#include "work_util.h"
#include "occurrence.h"

static struct loom_sched *new_sched(void)
{
	struct loom_sched_config config = {
		.workers = 1, .deque_capacity = 4,
	};
	struct loom_sched *s = NULL;

	if (loom_sched_create(&config, &s))
		return NULL;
	return s;
}

static uint64_t sched_occurrence(const struct loom_sched *s)
{
	return loom_work_domain_occurrence(loom_sched_domain(s));
}

TEST(two_live_schedulers_get_different_nonzero_occurrences)
{
	struct loom_sched *a = new_sched(), *b = new_sched();

	REQUIRE(a && b);
	CHECK(sched_occurrence(a) != 0);
	CHECK(sched_occurrence(b) != 0);
	CHECK(sched_occurrence(a) != sched_occurrence(b));
	loom_sched_destroy(a);
	loom_sched_destroy(b);
}

static enum loom_work_sync_verdict leaf(void *ctx,
					const struct loom_sched_item *item,
					uint64_t *children, size_t capacity,
					size_t *count)
{
	(void)ctx, (void)item, (void)children, (void)capacity, (void)count;
	return LOOM_WORK_SYNC_CHILDREN;
}

/* Two runs of one root launch, both results (and their ids) alive. */
TEST(two_runs_of_one_launch_name_different_roots)
{
	struct loom_work_sync_config c = {
		.sched.workers = 1, .sched.deque_capacity = 4,
		.root_payload = 82, .child_capacity = 1,
	};
	struct loom_work_sync_result a, b;
	const struct loom_sched_event *ea, *eb;

	CHECK_OK(loom_work_sync_run(&c, leaf, NULL, &a));
	CHECK_OK(loom_work_sync_run(&c, leaf, NULL, &b));
	REQUIRE(loom_sched_trace_count(a.trace) && loom_sched_trace_count(b.trace));
	ea = loom_sched_trace_events(a.trace);
	eb = loom_sched_trace_events(b.trace);
	CHECK(ea[0].item.occurrence != 0);
	CHECK(strcmp(id_text(&ea[0].item), id_text(&eb[0].item)) != 0);
	CHECK(!loom_item_id_equal(&ea[0].item, &eb[0].item));
	/* the result and the trace name the occurrence of every event */
	CHECK(b.occurrence > a.occurrence);
	CHECK_EQ(a.occurrence, loom_sched_trace_occurrence(a.trace));
	CHECK_EQ(b.occurrence, loom_sched_trace_occurrence(b.trace));
	for (size_t i = 0; i < loom_sched_trace_count(b.trace); i++)
		CHECK_EQ(b.occurrence, eb[i].item.occurrence);
	loom_work_sync_result_free(&a);
	loom_work_sync_result_free(&b);
}

TEST(minted_domains_grow_and_name_their_roots)
{
	struct loom_work_domain *a = NULL, *b = NULL;
	struct loom_work_resp root;
	struct loom_item_id id;
	char text[32];

	CHECK_OK(loom_work_domain_create(&a));
	CHECK_OK(loom_work_domain_create(&b));
	REQUIRE(a && b);
	CHECK(loom_work_domain_occurrence(a) != 0);
	CHECK(loom_work_domain_occurrence(b) > loom_work_domain_occurrence(a));
	CHECK_OK(loom_work_admit(b, &root, &id));
	CHECK_EQ(loom_work_domain_occurrence(b), id.occurrence);
	snprintf(text, sizeof(text), "%" PRIu64 ":root",
		 loom_work_domain_occurrence(b));
	CHECK_STR(text, id_text(&id));
	loom_work_domain_destroy(a);
	loom_work_domain_destroy(b);
}

TEST(untraced_run_still_names_its_occurrence)
{
	struct loom_work_sync_config c = {
		.sched.workers = 1, .sched.deque_capacity = 4,
		.sched.flags = LOOM_SCHED_NO_TRACE, .child_capacity = 1,
	};
	struct loom_work_sync_result r;

	CHECK_OK(loom_work_sync_run(&c, leaf, NULL, &r));
	CHECK(r.occurrence != 0);
	CHECK_EQ(0, loom_sched_trace_count(r.trace));
	CHECK_EQ(r.occurrence, loom_sched_trace_occurrence(r.trace));
	CHECK_EQ(0, loom_sched_trace_occurrence(NULL));
	loom_work_sync_result_free(&r);
}

/* The replay entry points take the caller's occurrence and mint none. */
TEST(replay_names_its_own_occurrence)
{
	struct loom_sched_config config = {
		.replay_occurrence = 82, .workers = 1, .deque_capacity = 4,
	};
	struct loom_work_domain *d = NULL, *before = NULL, *after = NULL;
	struct loom_sched *s = NULL;

	CHECK_EQ(LOOM_WORK_INVALID_ARGUMENT,
		 loom_work_domain_create_with_occurrence(0, &d));
	CHECK(!d);
	CHECK_OK(loom_work_domain_create(&before));
	CHECK_OK(loom_work_domain_create_with_occurrence(82, &d));
	CHECK_OK(loom_sched_create(&config, &s));
	CHECK_OK(loom_work_domain_create(&after));
	REQUIRE(d && s && before && after);
	CHECK_EQ(82, loom_work_domain_occurrence(d));
	CHECK_EQ(82, sched_occurrence(s));
	/* nothing was minted in between */
	CHECK_EQ(loom_work_domain_occurrence(before) + 1,
		 loom_work_domain_occurrence(after));
	loom_work_domain_destroy(d);
	loom_work_domain_destroy(before);
	loom_work_domain_destroy(after);
	loom_sched_destroy(s);
}

#define MINT_THREADS	4
#define MINTS		20000

struct minter {
	pthread_barrier_t *start;
	uint64_t got[MINTS];
	int errors;
	int not_increasing;
};

static void *mint_many(void *arg)
{
	struct minter *m = arg;

	pthread_barrier_wait(m->start);
	for (int i = 0; i < MINTS; i++) {
		if (loom_occurrence_mint(&m->got[i]) != LOOM_OK)
			m->errors++;
		else if (i && m->got[i] <= m->got[i - 1])
			m->not_increasing++;
		/* every so often a whole domain, as a launch would */
		if (i % 1000 == 0) {
			struct loom_work_domain *d = NULL;

			if (loom_work_domain_create(&d))
				m->errors++;
			else if (loom_work_domain_occurrence(d) <= m->got[i])
				m->not_increasing++;
			loom_work_domain_destroy(d);
		}
	}
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

TEST(threads_mint_unique_occurrences)
{
	static struct minter m[MINT_THREADS];
	static uint64_t all[MINT_THREADS * MINTS];
	pthread_t th[MINT_THREADS];
	pthread_barrier_t start;
	size_t dups = 0, zeros = 0;

	REQUIRE(!pthread_barrier_init(&start, NULL, MINT_THREADS));
	for (int t = 0; t < MINT_THREADS; t++) {
		m[t] = (struct minter){ .start = &start };
		REQUIRE(!pthread_create(&th[t], NULL, mint_many, &m[t]));
	}
	for (int t = 0; t < MINT_THREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&start);
	for (int t = 0; t < MINT_THREADS; t++) {
		CHECK_EQ(0, m[t].errors);
		CHECK_EQ(0, m[t].not_increasing);
		memcpy(all + (size_t)t * MINTS, m[t].got, sizeof(m[t].got));
	}
	qsort(all, MINT_THREADS * MINTS, sizeof(all[0]), by_value);
	for (size_t i = 0; i < MINT_THREADS * MINTS; i++) {
		zeros += all[i] == 0;
		dups += i && all[i] == all[i - 1];
	}
	CHECK_EQ(0, zeros);
	CHECK_EQ(0, dups);
}

static enum loom_work_sync_verdict never(void *ctx,
					 const struct loom_sched_item *item,
					 uint64_t *children, size_t capacity,
					 size_t *count)
{
	(void)item, (void)children, (void)capacity, (void)count;
	(*(int *)ctx)++;
	return LOOM_WORK_SYNC_CHILDREN;
}

TEST(exhaustion_is_a_typed_error_and_never_wraps)
{
	struct loom_sched_config config = { .workers = 1, .deque_capacity = 4 };
	struct loom_work_sync_config c = {
		.sched = config, .child_capacity = 1,
	};
	struct loom_work_domain *d = NULL;
	struct loom_work_sync_result r;
	struct loom_sched *s = NULL;
	uint64_t occ = 0, saved;
	int calls = 0;

	saved = loom_occurrence_set_last_for_test(UINT64_MAX - 1);
	CHECK_OK(loom_occurrence_mint(&occ));
	CHECK(occ == UINT64_MAX);		/* the last one is minted */
	occ = 1;
	CHECK_EQ(LOOM_WORK_OCCURRENCES_EXHAUSTED, loom_occurrence_mint(&occ));
	CHECK_EQ(1, occ);			/* untouched */
	CHECK_EQ(LOOM_WORK_OCCURRENCES_EXHAUSTED, loom_work_domain_create(&d));
	CHECK(!d);
	CHECK_EQ(LOOM_WORK_OCCURRENCES_EXHAUSTED, loom_sched_create(&config, &s));
	CHECK(!s);
	CHECK_EQ(LOOM_WORK_OCCURRENCES_EXHAUSTED,
		 loom_work_sync_run(&c, never, &calls, &r));
	CHECK_EQ(0, calls);
	CHECK_EQ(0, r.occurrence);
	loom_work_sync_result_free(&r);
	/* still exhausted: nothing wrapped to 0 or 1 */
	CHECK_EQ(LOOM_WORK_OCCURRENCES_EXHAUSTED, loom_occurrence_mint(&occ));
	/* a replay mints nothing, so it still works */
	CHECK_OK(loom_work_domain_create_with_occurrence(5, &d));
	loom_work_domain_destroy(d);
	CHECK(strcmp(loom_strerror(LOOM_WORK_OCCURRENCES_EXHAUSTED),
		     "unknown error"));
	loom_occurrence_set_last_for_test(saved);
	CHECK_OK(loom_occurrence_mint(&occ));
	CHECK_EQ(saved + 1, occ);
}

int main(void)
{
	RUN(two_live_schedulers_get_different_nonzero_occurrences);
	RUN(two_runs_of_one_launch_name_different_roots);
	RUN(minted_domains_grow_and_name_their_roots);
	RUN(untraced_run_still_names_its_occurrence);
	RUN(replay_names_its_own_occurrence);
	RUN(threads_mint_unique_occurrences);
	RUN(exhaustion_is_a_typed_error_and_never_wraps);
	return checks_done();
}
