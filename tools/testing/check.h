/* SPDX-License-Identifier: MIT */
/*
 * check.h: the assertions of loom's host unit tests.
 *
 * A test program is a list of TEST(name) functions run from main() with
 * RUN(name); CHECK* record a failure and go on, REQUIRE* also leave the
 * test.  Output is TAP, one line per test, and the program ends with
 * "N passed, N failed" (checks_done()) and exit status 1 on any failure.
 */
#ifndef LOOM_CHECK_H
#define LOOM_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_tests_passed, check_tests_failed, check_current_failed;

#define TEST(name) static void test_##name(void)

#define RUN(name) do {							\
	check_current_failed = 0;					\
	test_##name();							\
	if (check_current_failed) {					\
		check_tests_failed++;					\
		printf("not ok %d - %s\n", check_tests_passed +	\
		       check_tests_failed, #name);			\
	} else {							\
		check_tests_passed++;					\
		printf("ok %d - %s\n", check_tests_passed +		\
		       check_tests_failed, #name);			\
	}								\
	fflush(stdout);							\
} while (0)

#define CHECK_FAIL_(fmt, ...) do {					\
	printf("#   %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__); \
	check_current_failed = 1;					\
} while (0)

/* CHECK(cond): cond must hold. */
#define CHECK(cond) do {						\
	if (!(cond))							\
		CHECK_FAIL_("CHECK(%s) failed", #cond);			\
} while (0)

/* CHECK_EQ(expected, actual): integers, printed on mismatch. */
#define CHECK_EQ(expected, actual) do {					\
	long long check_e_ = (long long)(expected);			\
	long long check_a_ = (long long)(actual);			\
	if (check_e_ != check_a_)					\
		CHECK_FAIL_("%s == %s: expected %lld (0x%llx), got %lld (0x%llx)", \
			    #expected, #actual, check_e_,		\
			    (unsigned long long)check_e_, check_a_,	\
			    (unsigned long long)check_a_);		\
} while (0)

#define REQUIRE(cond) do {						\
	if (!(cond)) {							\
		CHECK_FAIL_("REQUIRE(%s) failed", #cond);		\
		return;							\
	}								\
} while (0)

#define REQUIRE_EQ(expected, actual) do {				\
	int check_before_ = check_current_failed;			\
	check_current_failed = 0;					\
	CHECK_EQ(expected, actual);					\
	if (check_current_failed)					\
		return;							\
	check_current_failed = check_before_;				\
} while (0)

static inline int checks_done(void)
{
	printf("%d passed, %d failed\n", check_tests_passed, check_tests_failed);
	return check_tests_failed ? 1 : 0;
}

#endif /* LOOM_CHECK_H */
