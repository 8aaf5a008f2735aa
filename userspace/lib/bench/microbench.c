// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * microbench.c - benchmarks of single engine kernels (microbench.h): a
 * big gemm per ISA variant, against the read bandwidth, and the router's
 * top-k selection.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "core/cb_engine.h"
#include "ops/cb_ops.h"
#include "util/host.h"
#include "bench/microbench.h"

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: excludes time other tasks had the core. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process, every thread's (the engine's pool included). */
static double proc_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- gemm ------------------------------------------------------------------- */

struct cb_gemm_bench {
	const struct cb_isa_ops *ops;	/* the variant being timed */
	int dt, M, k, nrows, rows_per_chunk;
	float *out;
	char *w;
	size_t wrb, as;
	char *act;
	char *pk;	/* the activations packed for ops->gemm_pk, or NULL */
	size_t ps;
	float *x;
	struct cb_exec *ex;
};

static void gemm_chunk(void *arg, int c)
{
	struct cb_gemm_bench *j = arg;
	int r0 = c * j->rows_per_chunk;
	int n = CB_MIN(j->rows_per_chunk, j->nrows - r0);

	if (j->pk)
		j->ops->gemm_pk[j->dt](j->out + r0, j->nrows, j->w + (size_t)r0 * j->wrb, j->wrb,
				       j->pk, j->ps, j->M, n, j->k);
	else
		j->ops->gemm[j->dt](j->out + r0, j->nrows, j->w + (size_t)r0 * j->wrb, j->wrb,
				    j->act, j->as, j->M, n, j->k);
}

/*
 * The engine's route for a call of M tokens: packed activations when the
 * variant takes them at this M (cb_pk_takes(), as cb_job_add()), unless
 * COLIBRI_GEMM_PACK=0 (to compare).
 */
static int use_pack(const struct cb_gemm_bench *b)
{
	const char *env = getenv("COLIBRI_GEMM_PACK");

	return cb_pk_takes(b->ops, (cb_u32)b->dt, b->M) && !(env && !strcmp(env, "0"));
}

void cb_gemm_bench_free(struct cb_gemm_bench *b)
{
	if (!b)
		return;
	cb_host_exec_destroy(b->ex);
	free(b->w);
	free(b->act);
	free(b->pk);
	free(b->out);
	free(b->x);
	free(b);
}

int cb_gemm_bench_new(struct cb_gemm_bench **out, int dtype, int M, int k, size_t bytes,
		      int threads)
{
	struct cb_gemm_bench *j;
	int r, m, i;

	*out = NULL;
	if (dtype < 0 || dtype >= CB_DT__COUNT || M < 1 || M > 4096 || k < 32 || k > (1 << 20) ||
	    !cb_dtype_row_bytes(dtype, k) || bytes < cb_dtype_row_bytes(dtype, k) * 64)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->dt = dtype;
	j->M = M;
	j->k = k;
	j->wrb = cb_dtype_row_bytes(dtype, k);
	j->nrows = (int)(bytes / j->wrb);
	j->rows_per_chunk = 64;
	j->as = cb_act_row_bytes(cb_dtype_act(dtype), k);
	if (posix_memalign((void **)&j->w, 2u << 20, (size_t)j->nrows * j->wrb))
		j->w = NULL;
	j->act = malloc(j->as * M);
	j->out = malloc(sizeof(float) * (size_t)j->nrows * M);
	j->x = malloc(sizeof(float) * k);
	j->ex = cb_host_exec_create(threads);
	if (!j->w || !j->act || !j->out || !j->x || !j->ex) {
		cb_gemm_bench_free(j);
		return -ENOMEM;
	}
	madvise(j->w, (size_t)j->nrows * j->wrb, MADV_HUGEPAGE);
	/* 64 distinct random rows, repeated: every byte is still read */
	srand(1);
	for (r = 0; r < j->nrows; r++) {
		if (r < 64) {
			for (i = 0; i < k; i++)
				j->x[i] = (float)rand() / RAND_MAX - 0.5f;
			cb_quantize_row(dtype, j->w + (size_t)r * j->wrb, j->x, k);
		} else {
			memcpy(j->w + (size_t)r * j->wrb, j->w + (size_t)(r % 64) * j->wrb, j->wrb);
		}
	}
	for (m = 0; m < M; m++) {
		for (i = 0; i < k; i++)
			j->x[i] = (float)rand() / RAND_MAX - 0.5f;
		if (cb_dtype_act(dtype) != CB_ACT_F32)	/* the form the type's gemm reads */
			cb_isa_scalar.quantize_act[cb_dtype_act(dtype)](j->act + m * j->as, j->x, k);
		else
			memcpy(j->act + m * j->as, j->x, sizeof(float) * k);
	}
	*out = j;
	return 0;
}

int cb_gemm_bench_threads(const struct cb_gemm_bench *b)
{
	return b->ex->nthreads;
}

int cb_gemm_bench_rows(const struct cb_gemm_bench *b)
{
	return b->nrows;
}

int cb_gemm_bench_run(struct cb_gemm_bench *b, int level, struct cb_gemm_result *r)
{
	int nch = (b->nrows + b->rows_per_chunk - 1) / b->rows_per_chunk, pass;
	cb_pack_fn pack;
	double best = 1e30, best_cpu = 1e30;

	b->ops = cb_isa_get(level);
	if (!b->ops)
		return -ENODEV;
	pack = cb_pk_pack_fn(b->ops, cb_dtype_act(b->dt));
	free(b->pk);
	b->pk = NULL;
	if (use_pack(b)) {
		b->ps = cb_pk_act_row_bytes(cb_dtype_act(b->dt), b->k);
		b->pk = aligned_alloc(64, b->ps * b->M);
		if (!b->pk)
			return -ENOMEM;
	}
	/* best of 3 (scalar: 1, it is slow); the first pass also warms up */
	for (pass = 0; pass < (level == CB_ISA_SCALAR ? 1 : 3); pass++) {
		double t0 = wall_s(), c0 = proc_cpu_s(), t, c;
		int m;

		/* packed once per call, as the engine does, inside the time */
		for (m = 0; b->pk && m < b->M; m++)
			pack(b->pk + m * b->ps, b->act + m * b->as, b->k);
		b->ex->parallel_for(b->ex, gemm_chunk, b, nch);
		t = wall_s() - t0;
		c = proc_cpu_s() - c0;
		if (t < best)
			best = t;
		if (c < best_cpu)
			best_cpu = c;
	}
	memset(r, 0, sizeof(*r));
	strncpy(r->variant, cb_isa_names[b->ops->level], sizeof(r->variant) - 1);
	r->seconds = best;
	r->cpu_seconds = best_cpu;
	r->weight_bytes = (double)b->nrows * b->wrb;
	r->ops = 2.0 * b->nrows * b->k * b->M;
	return 0;
}

/* ---- router top-k ---------------------------------------------------------- */

int cb_router_bench(int experts, int k, int rows, long iters, struct cb_router_result *res)
{
	const struct cb_isa_ops *ops = cb_isa_select(cb_host_isa_cap());
	int n = experts, rep, i;
	double t[7], tc[7], tr[7];
	uint64_t s = 0x1234567, sink = 0;
	cb_u32 ids[CB_MAX_TOP_K];
	float vals[CB_MAX_TOP_K];
	float *lg;
	long it;

	if (n < 1 || n > CB_MAX_EXPERTS || k < 1 || k > n || k > CB_MAX_TOP_K || rows < 1 ||
	    iters < 1)
		return -EINVAL;
	lg = aligned_alloc(64, ((size_t)rows * n * 4 + 63) & ~(size_t)63);
	if (!lg)
		return -ENOMEM;
	/* router logits look roughly normal: sum of 4 uniforms, std ~1.2 */
	for (i = 0; i < rows * n; i++) {
		float v = 0;
		int j;

		for (j = 0; j < 4; j++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			v += (float)(s >> 40) / (float)(1 << 24) - 0.5f;
		}
		lg[i] = v * 2.0f;
	}
	/* warm: code, branch predictors, the rows in cache */
	for (i = 0; i < rows; i++) {
		ops->topk_f32(lg + (size_t)i * n, n, k, ids, vals);
		sink += ids[0];
	}
	for (rep = 0; rep < 7; rep++) {
		double t0 = wall_s(), c0 = cpu_s();

		for (it = 0; it < iters; it++)
			for (i = 0; i < rows; i++) {
				ops->topk_f32(lg + (size_t)i * n, n, k, ids, vals);
				sink += ids[k - 1];
			}
		t[rep] = (wall_s() - t0) * 1e9 / ((double)iters * rows);
		tc[rep] = (cpu_s() - c0) * 1e9 / ((double)iters * rows);
		c0 = cpu_s();
		for (it = 0; it < iters; it++)
			for (i = 0; i < rows; i++) {
				cb_route(ops, lg + (size_t)i * n, n, k, 1, ids, vals);
				sink += ids[0];
			}
		tr[rep] = (cpu_s() - c0) * 1e9 / ((double)iters * rows);
	}
	res->topk_ns = median(t, 7);
	res->topk_ns_min = t[0];
	res->topk_cpu_ns = median(tc, 7);
	res->route_cpu_ns = median(tr, 7);
	res->sink = sink;
	free(lg);
	return 0;
}
