/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * microbench.h - benchmarks of single engine kernels, for `colibri
 * bench-gemm` and `colibri bench --router`: they reach into the engine's
 * ISA variants, which only libcolibri sees (the CLI stays on the public
 * headers).  Every function returns 0 or a negative errno value and prints
 * nothing.
 */
#ifndef COLIBRI_MICROBENCH_H
#define COLIBRI_MICROBENCH_H

#include <stddef.h>

/* ---- one big gemm per ISA variant ------------------------------------------- */

struct cb_gemm_bench;

/* One variant's figures; the bytes and operations are of one pass. */
struct cb_gemm_result {
	char variant[16];	/* "scalar", "avx2", ... */
	double seconds;		/* best pass */
	/*
	 * The least CPU time of a pass, all threads: on a shared machine,
	 * ops / cpu_seconds is the kernel's speed per core while it ran.
	 */
	double cpu_seconds;
	double weight_bytes;	/* rows * row bytes */
	double ops;		/* 2 * rows * k * M */
};

/*
 * cb_gemm_bench_new() - a weight matrix of about @bytes of weight type
 * @dtype (enum cb_dtype), rows of @k, and @M activation rows, on a pool of
 * @threads (<= 0: one per CPU).  Rows are 64 random rows repeated (every
 * byte is still read), chunked by 64 rows as the forward pass does.
 */
int cb_gemm_bench_new(struct cb_gemm_bench **out, int dtype, int M, int k, size_t bytes,
		      int threads);
void cb_gemm_bench_free(struct cb_gemm_bench *b);
int cb_gemm_bench_threads(const struct cb_gemm_bench *b);
int cb_gemm_bench_rows(const struct cb_gemm_bench *b);

/*
 * cb_gemm_bench_run() - time the variant of ISA @level (COLIBRI_ISA_*):
 * best of 3 passes (scalar: 1).  -ENODEV when this CPU lacks it.
 */
int cb_gemm_bench_run(struct cb_gemm_bench *b, int level, struct cb_gemm_result *r);

/* ---- the router's top-k -------------------------------------------------- */

/* Nanoseconds per token (one row of router logits), medians of 7 runs. */
struct cb_router_result {
	double topk_ns;		/* top-k, wall time */
	double topk_ns_min;	/* top-k, wall time, best run */
	double topk_cpu_ns;	/* top-k, this thread's CPU time */
	double route_cpu_ns;	/* top-k and softmax weights, CPU time */
	unsigned long long sink;	/* depends on every result (keeps the calls) */
};

/*
 * cb_router_bench() - the best top-k variant of this CPU over @rows rows of
 * @experts random, roughly normal router logits, @iters times per run.
 * -EINVAL unless 1 <= k <= min(experts, CB_MAX_TOP_K), experts <=
 * CB_MAX_EXPERTS, rows and iters >= 1.
 */
int cb_router_bench(int experts, int k, int rows, long iters, struct cb_router_result *r);

#endif /* COLIBRI_MICROBENCH_H */
