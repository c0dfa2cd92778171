/* SPDX-License-Identifier: MIT */
/*
 * work_util.h: helpers shared by libloom's dynamic-work tests.
 */
#ifndef LOOM_WORK_UTIL_H
#define LOOM_WORK_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loom/work.h"

/* An id's text, in one of a few rotating buffers (for CHECKs). */
static inline const char *id_text(const struct loom_item_id *id)
{
	static char bufs[8][128];
	static unsigned int next;
	char *buf = bufs[next++ % 8];

	loom_item_id_format(id, buf, sizeof(bufs[0]));
	return buf;
}

/* CHECK_STR(expected, actual): strings, printed on mismatch. */
#define CHECK_STR(expected, actual) do {				\
	const char *check_se_ = (expected), *check_sa_ = (actual);	\
	if (strcmp(check_se_, check_sa_))				\
		CHECK_FAIL_("%s == %s: expected \"%s\", got \"%s\"",	\
			    #expected, #actual, check_se_, check_sa_);	\
} while (0)

#define CHECK_OK(call)	CHECK_EQ(LOOM_OK, (call))

/*
 * Whether @a and @b name the same ordinal path, whatever their dispatch
 * occurrences: how items of two runs (two minted occurrences) correspond.
 */
static inline bool same_path(const struct loom_item_id *a,
			     const struct loom_item_id *b)
{
	struct loom_item_id b_as_a = *b;

	b_as_a.occurrence = a->occurrence;
	return loom_item_id_equal(a, &b_as_a);
}

/* A trace event as text: "kind worker[<-other] id[ completes]". */
static inline const char *event_text(const struct loom_sched_event *ev)
{
	static char bufs[4][192];
	static unsigned int next;
	char *buf = bufs[next++ % 4];
	char other[16] = "";

	if (ev->other_worker != LOOM_SCHED_NO_WORKER)
		snprintf(other, sizeof(other), "<-%u", ev->other_worker);
	snprintf(buf, sizeof(bufs[0]), "%s %u%s %s%s",
		 loom_sched_event_name(ev->kind), ev->worker, other,
		 id_text(&ev->item), ev->completes_domain ? " completes" : "");
	return buf;
}

/*
 * Checks a trace event by event against @expected (NULL-terminated texts in
 * event_text() form).  Reports the first difference.
 */
#define CHECK_TRACE(trace, ...) do {					\
	const char *check_exp_[] = { __VA_ARGS__, NULL };		\
	const struct loom_sched_event *check_ev_ =			\
		loom_sched_trace_events(trace);				\
	size_t check_n_ = loom_sched_trace_count(trace), check_i_;	\
	int check_bad_ = 0;						\
	for (check_i_ = 0; check_exp_[check_i_] && check_i_ < check_n_; \
	     check_i_++) {						\
		const char *check_got_ = event_text(&check_ev_[check_i_]); \
		if (strcmp(check_exp_[check_i_], check_got_)) {		\
			CHECK_FAIL_("trace event %zu: expected \"%s\", got \"%s\"", \
				    check_i_, check_exp_[check_i_], check_got_); \
			check_bad_ = 1;					\
			break;						\
		}							\
	}								\
	if (!check_bad_) {						\
		size_t check_want_ = 0;					\
		while (check_exp_[check_want_])				\
			check_want_++;					\
		CHECK_EQ(check_want_, check_n_);			\
	}								\
} while (0)

#endif /* LOOM_WORK_UTIL_H */
