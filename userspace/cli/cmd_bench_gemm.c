// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cmd_bench_gemm.c - "colibri bench-gemm": how close each ISA variant's
 * gemm comes to the machine's memory read bandwidth.
 *
 * One run measures the read bandwidth (membw.c) and then streams a weight
 * matrix of the same size through every valid variant with the host
 * thread pool, chunked by rows as the forward pass does; it reports the
 * achieved weight bytes per second as a fraction of that bandwidth (and
 * the arithmetic rate), never a bare time.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cb_ops.h"
#include "cli.h"
#include "host.h"
#include "membw.h"

struct bench_job {
	const struct cb_isa_ops *ops;
	int dt, M, k, nrows, rows_per_chunk;
	float *out;
	const char *w;
	size_t wrb, as;
	const void *act;
};

static void bench_chunk(void *arg, int c)
{
	struct bench_job *j = arg;
	int r0 = c * j->rows_per_chunk;
	int n = CB_MIN(j->rows_per_chunk, j->nrows - r0);

	j->ops->gemm[j->dt](j->out + r0, j->nrows, j->w + (size_t)r0 * j->wrb, j->wrb,
			    j->act, j->as, j->M, n, j->k);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: colibri bench-gemm [-t THREADS] [-d DTYPE] [-m TOKENS] [-k K] [-g GIB]\n"
		"  -t  threads, the caller included (default: one per CPU)\n"
		"  -d  weight type: f32 f16 bf16 q8_0 q4_0 (default q8_0)\n"
		"  -m  activation rows M (default 1: decode)\n"
		"  -k  row length (default 4096)\n"
		"  -g  weight matrix size in GiB, well above the last-level cache (default:\n"
		"      max(1 GiB, 4 x L3), at most half the memory available)\n");
}

int cmd_bench_gemm(int argc, char **argv)
{
	int nthreads = 0, dt = CB_DT_Q8_0, M = 1, k = 4096, opt, lvl, rc = 1;
	double gib = 0, bw;	/* 0: cb_read_bw_default() */
	struct bench_job j;
	struct cb_exec *ex = NULL;
	char *w = NULL, *act = NULL;
	float *out = NULL, *x = NULL;
	size_t total;
	int r, m, i;

	while ((opt = getopt(argc, argv, "t:d:m:k:g:h")) != -1) {
		switch (opt) {
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'd':
			for (dt = 0; dt < CB_DT__COUNT; dt++)
				if (!strcmp(optarg, cb_dtype_name(dt)))
					break;
			if (dt == CB_DT__COUNT) {
				fprintf(stderr, "bench-gemm: unknown dtype '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			M = atoi(optarg);
			break;
		case 'k':
			k = atoi(optarg);
			break;
		case 'g':
			gib = atof(optarg);
			break;
		case 'h':
			bench_usage(stdout);
			return 0;
		default:
			bench_usage(stderr);
			return 2;
		}
	}
	if (M < 1 || M > 4096 || k < 32 || k > (1 << 20) || gib < 0 || gib > 64 ||
	    !cb_dtype_row_bytes(dt, k)) {
		fprintf(stderr, "bench-gemm: bad shape (M=%d, k=%d for %s, %.2f GiB)\n",
			M, k, cb_dtype_name(dt), gib);
		return 2;
	}
	total = gib > 0 ? (size_t)(gib * (1ull << 30)) : cb_read_bw_default();

	bw = cb_measure_read_bw(nthreads, total);
	if (bw <= 0) {
		fprintf(stderr, "bench-gemm: cannot measure bandwidth over %zu bytes\n", total);
		return 1;
	}

	memset(&j, 0, sizeof(j));
	j.dt = dt;
	j.M = M;
	j.k = k;
	j.wrb = cb_dtype_row_bytes(dt, k);
	j.nrows = (int)(total / j.wrb);
	j.rows_per_chunk = 64;
	j.as = dt >= CB_DT_Q8_0 ? cb_dtype_row_bytes(CB_DT_Q8_0, k) : 4 * (size_t)k;
	if (posix_memalign((void **)&w, 2u << 20, (size_t)j.nrows * j.wrb))
		w = NULL;
	act = malloc(j.as * M);
	out = malloc(sizeof(float) * (size_t)j.nrows * M);
	x = malloc(sizeof(float) * k);
	ex = cb_host_exec_create(nthreads);
	if (!w || !act || !out || !x || !ex) {
		fprintf(stderr, "bench-gemm: out of memory for a %.2f GiB matrix\n", gib);
		goto out;
	}
	madvise(w, (size_t)j.nrows * j.wrb, MADV_HUGEPAGE);
	/* 64 distinct random rows, repeated: every byte is still read */
	srand(1);
	for (r = 0; r < j.nrows; r++) {
		if (r < 64) {
			for (i = 0; i < k; i++)
				x[i] = (float)rand() / RAND_MAX - 0.5f;
			cb_quantize_row(dt, w + (size_t)r * j.wrb, x, k);
		} else {
			memcpy(w + (size_t)r * j.wrb, w + (size_t)(r % 64) * j.wrb, j.wrb);
		}
	}
	for (m = 0; m < M; m++) {
		for (i = 0; i < k; i++)
			x[i] = (float)rand() / RAND_MAX - 0.5f;
		if (dt >= CB_DT_Q8_0)
			cb_quantize_row_q8_0_ref(act + m * j.as, x, k);
		else
			memcpy(act + m * j.as, x, sizeof(float) * k);
	}
	j.w = w;
	j.act = act;
	j.out = out;

	printf("read bandwidth: %.2f GB/s with %d threads over %.2f GiB\n", bw / 1e9,
	       ex->nthreads, gib);
	printf("gemm %s, k=%d, M=%d, %d rows (%.2f GiB of weights):\n", cb_dtype_name(dt),
	       k, M, j.nrows, (double)j.nrows * j.wrb / (1ull << 30));
	for (lvl = CB_ISA_SCALAR; lvl < CB_ISA__COUNT; lvl++) {
		const struct cb_isa_ops *ops = cb_isa_get(lvl);
		int nch = (j.nrows + j.rows_per_chunk - 1) / j.rows_per_chunk;
		double best = 1e30;
		int pass;

		if (!ops)
			continue;
		j.ops = ops;
		/* best of 3 (scalar: 1, it is slow); first pass also warms up */
		for (pass = 0; pass < (lvl == CB_ISA_SCALAR ? 1 : 3); pass++) {
			double t0 = now_s(), t;

			ex->parallel_for(ex, bench_chunk, &j, nch);
			t = now_s() - t0;
			if (t < best)
				best = t;
		}
		printf("  %-7s %6.2f GB/s of weights = %5.1f%% of read bandwidth, %6.1f Gop/s\n",
		       ops->name, (double)j.nrows * j.wrb / best / 1e9,
		       100.0 * j.nrows * j.wrb / best / bw, 2.0 * j.nrows * k * M / best / 1e9);
	}
	rc = 0;
out:
	cb_host_exec_destroy(ex);
	free(w);
	free(act);
	free(out);
	free(x);
	return rc;
}
