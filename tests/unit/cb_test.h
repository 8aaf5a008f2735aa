/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_test.h - a tiny TAP producer for the native unit tests.
 *
 * Each test binary prints "ok N - name" or "not ok N - name" per test (and
 * "ok N - name # SKIP why" for a skip), then "1..N", and exits non-zero if
 * any test failed.  scripts/run-tests counts these lines for the summary.
 *
 *	static void test_something(void)
 *	{
 *		CB_CHECK(x == 1, "x was %d", x);
 *	}
 *	int main(void)
 *	{
 *		CB_RUN(test_something);
 *		return cb_test_done();
 *	}
 */
#ifndef CB_TEST_H
#define CB_TEST_H

#include <stdio.h>
#include <stdarg.h>

static int cb_test_num, cb_test_failed, cb_test_cur_failed, cb_test_skipped;
static const char *cb_test_skip_why;

static inline void cb_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (cb_test_cur_failed++ < 5) {
		fprintf(stdout, "# %s:%d: ", file, line);
		va_start(ap, fmt);
		vfprintf(stdout, fmt, ap);
		va_end(ap);
		fputc('\n', stdout);
	}
}

/* Fails the current test (and goes on) when cond is false. */
#define CB_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			cb_test_fail(__FILE__, __LINE__, __VA_ARGS__);	\
	} while (0)

/* Marks the current test skipped; the caller should return. */
#define CB_SKIP(why) (cb_test_skip_why = (why))

/* Start and end of one test; CB_RUN() brackets a test function with them. */
static inline void cb_test_begin(void)
{
	cb_test_cur_failed = 0;
	cb_test_skip_why = NULL;
}

static inline void cb_test_end(const char *name)
{
	cb_test_num++;
	if (cb_test_cur_failed) {
		cb_test_failed++;
		printf("not ok %d - %s\n", cb_test_num, name);
	} else if (cb_test_skip_why) {
		cb_test_skipped++;
		printf("ok %d - %s # SKIP %s\n", cb_test_num, name, cb_test_skip_why);
	} else {
		printf("ok %d - %s\n", cb_test_num, name);
	}
	fflush(stdout);
}

#define CB_RUN(fn)							\
	do {								\
		cb_test_begin();					\
		fn();							\
		cb_test_end(#fn);					\
	} while (0)

static inline int cb_test_done(void)
{
	printf("1..%d\n", cb_test_num);
	return cb_test_failed ? 1 : 0;
}

#endif /* CB_TEST_H */
