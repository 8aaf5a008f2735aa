// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_host.c - the userspace host layer: CPU feature answers and the
 * pthread parallel_for.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cb_test.h"
#include "ops/cb_ops.h"
#include "util/host.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Feature implications any sane CPU (and our cap) must respect. */
static void test_cpu_features_consistent(void)
{
	int f;

	for (f = 0; f < CB_CPU__COUNT; f++)
		CB_CHECK(cb_cpu_has(f) == 0 || cb_cpu_has(f) == 1,
			 "feature %d answered %d", f, cb_cpu_has(f));
	CB_CHECK(cb_cpu_has(CB_CPU__COUNT) == 0, "out-of-range feature present");
	if (cb_cpu_has(CB_CPU_AVX512BW) || cb_cpu_has(CB_CPU_AVX512VL))
		CB_CHECK(cb_cpu_has(CB_CPU_AVX512F), "BW/VL without F");
	if (cb_host_isa_cap() < CB_ISA_AVX512_VNNI)
		CB_CHECK(!cb_cpu_has(CB_CPU_AVX512VNNI), "VNNI above the cap");
	if (cb_host_isa_cap() < CB_ISA_AVX512)
		CB_CHECK(!cb_cpu_has(CB_CPU_AVX512F), "AVX-512 above the cap");
	if (cb_host_isa_cap() < CB_ISA_AVX2)
		CB_CHECK(!cb_cpu_has(CB_CPU_AVX2), "AVX2 above the cap");
	printf("# cap %d avx2 %d fma %d f16c %d avx512f %d bw %d vl %d vnni %d bf16 %d\n",
	       cb_host_isa_cap(), cb_cpu_has(CB_CPU_AVX2), cb_cpu_has(CB_CPU_FMA),
	       cb_cpu_has(CB_CPU_F16C), cb_cpu_has(CB_CPU_AVX512F),
	       cb_cpu_has(CB_CPU_AVX512BW), cb_cpu_has(CB_CPU_AVX512VL),
	       cb_cpu_has(CB_CPU_AVX512VNNI), cb_cpu_has(CB_CPU_AVX512BF16));
}

struct count_job {
	int *hits;		/* one counter per chunk */
	int round;
};

static void count_chunk(void *arg, int chunk)
{
	struct count_job *j = arg;

	/* Not atomic on purpose: each chunk must run exactly once. */
	j->hits[chunk] += j->round;
}

/* Every chunk runs exactly once per call, for many calls and sizes. */
static void run_exactly_once(int nthreads)
{
	struct cb_exec *ex = cb_host_exec_create(nthreads);
	static int hits[1000];
	struct count_job j = { hits, 0 };
	int round, i, n, bad = 0;

	CB_CHECK(ex, "cb_host_exec_create(%d) failed", nthreads);
	if (!ex)
		return;
	CB_CHECK(ex->nthreads == nthreads, "nthreads %d", ex->nthreads);
	CB_CHECK(ex->yield == NULL, "yield should be NULL");
	for (round = 1; round <= 3000; round++) {
		n = 1 + (round * 7919) % 1000;
		if (round % 5 == 0)
			n = round % 3;	/* 0, 1 and 2 chunks too */
		memset(hits, 0, sizeof(hits));
		j.round = round;
		ex->parallel_for(ex, count_chunk, &j, n);
		for (i = 0; i < 1000; i++)
			if (hits[i] != (i < n ? round : 0))
				bad++;
	}
	CB_CHECK(bad == 0, "%d wrong chunk counts with %d threads", bad, nthreads);
	cb_host_exec_destroy(ex);
}

static void test_parallel_for_1_thread(void) { run_exactly_once(1); }
static void test_parallel_for_2_threads(void) { run_exactly_once(2); }
static void test_parallel_for_5_threads(void) { run_exactly_once(5); }

/* The distinct threads that ran chunks: a pool's threads are made once. */
static struct {
	pthread_mutex_t lock;
	pid_t tid[64];
	int n;
	int overflow;
} seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void tid_chunk(void *arg, int chunk)
{
	volatile double *x = arg;
	pid_t me = gettid();
	int i;

	for (i = 0; i < 2000; i++)
		x[64 * (chunk & 7)] += 1.0;
	pthread_mutex_lock(&seen.lock);
	for (i = 0; i < seen.n && seen.tid[i] != me; i++)
		;
	if (i == seen.n) {
		if (seen.n < 64)
			seen.tid[seen.n++] = me;
		else
			seen.overflow = 1;
	}
	pthread_mutex_unlock(&seen.lock);
}

/*
 * A burst of calls, as in a decode step, reuses the pool's threads: no
 * thread is created per call.  Checked by who ran the chunks, not by a
 * clock (a timed test on a shared 2-core machine fails under load); the
 * time per call is printed for the reader only.
 */
static void test_parallel_for_reuses_its_threads(void)
{
	struct cb_exec *ex = cb_host_exec_create(3);
	static double x[8 * 64];
	double t0;
	int i, n = 2000;

	CB_CHECK(ex, "create failed");
	if (!ex)
		return;
	t0 = now_s();
	for (i = 0; i < n; i++)
		ex->parallel_for(ex, tid_chunk, (void *)x, 8);
	printf("# parallel_for(8 small chunks), 3 threads: %.2f us per call (not checked)\n",
	       (now_s() - t0) / n * 1e6);
	CB_CHECK(!seen.overflow && seen.n <= 3,
		 "%s%d distinct threads ran chunks of a 3-thread pool over %d calls",
		 seen.overflow ? "over " : "", seen.n, n);
	CB_CHECK(seen.n >= 1, "no chunk ran");
	cb_host_exec_destroy(ex);
}

static void test_create_destroy_default(void)
{
	struct cb_exec *ex = cb_host_exec_create(0);

	CB_CHECK(ex && ex->nthreads >= 1, "default thread count");
	cb_host_exec_destroy(ex);
	cb_host_exec_destroy(NULL);
}

int main(void)
{
	CB_RUN(test_cpu_features_consistent);
	CB_RUN(test_parallel_for_1_thread);
	CB_RUN(test_parallel_for_2_threads);
	CB_RUN(test_parallel_for_5_threads);
	CB_RUN(test_parallel_for_reuses_its_threads);
	CB_RUN(test_create_destroy_default);
	return cb_test_done();
}
