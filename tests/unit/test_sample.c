// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_sample.c - token sampling (cb_sample_ex): the draws follow exactly
 * w_i / kept mass over the documented kept set (temperature, top-k, top-p,
 * both, ties at the boundary, NaN and inf), greedy is the argmax, the token
 * never depends on the thread count, the scratch bound holds; and how long
 * the sampler and its longest chunk take on a 151,936-token vocabulary.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cb_engine.h"
#include "ops/cb_math.h"
#include "cb_test.h"
#include "util/host.h"

#define BIG 151936

static cb_u64 rng_state = 0x2545f4914f6cdd1dull;

/* uniform in [0, 1) */
static double urand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static void *scratch_for(cb_u32 n)
{
	void *s = aligned_alloc(64, (cb_sample_scratch_size(n) + 63) & ~(cb_u64)63);

	if (!s) {
		perror("aligned_alloc");
		exit(2);
	}
	return s;
}

static struct cb_sample_params sp(cb_u32 temp_milli, cb_u32 k, cb_u32 p_ppm, cb_u64 seed)
{
	struct cb_sample_params p = { temp_milli, k, p_ppm, 0, seed };

	return p;
}

/* ---- reference: the documented distribution, by sorting ----------------- */

static const float *sort_w;

static int by_order(const void *a, const void *b)
{
	cb_u32 x = *(const cb_u32 *)a, y = *(const cb_u32 *)b;

	if (sort_w[x] != sort_w[y])
		return sort_w[x] > sort_w[y] ? -1 : 1;
	return x < y ? -1 : 1;
}

/*
 * prob[i] = w_i / kept mass for the kept tokens, 0 for the others, with
 * the same float weights the sampler uses (same cb_expf, same expression).
 * Return: the number of kept tokens.
 */
static cb_u32 reference(const float *l, cb_u32 n, const struct cb_sample_params *p,
			double *prob)
{
	float *w = malloc(n * sizeof(*w)), mx = -INFINITY;
	cb_u32 *ord = malloc(n * sizeof(*ord)), i, k, kept;
	float invt = 1000.0f / (float)p->temperature_milli;
	double mass = 0.0, acc;
	int any = 0;

	for (i = 0; i < n; i++)
		if (!isnan(l[i]) && (!any || l[i] > mx)) {
			mx = l[i];
			any = 1;
		}
	for (i = 0; i < n; i++) {
		if (isnan(l[i]))
			w[i] = 0.0f;
		else if (l[i] == mx)
			w[i] = 1.0f;
		else
			w[i] = cb_expf((l[i] - mx) * invt);
		ord[i] = i;
	}
	sort_w = w;
	qsort(ord, n, sizeof(*ord), by_order);
	k = p->top_k && p->top_k < n ? p->top_k : n;
	for (i = 0; i < k; i++)
		mass += w[ord[i]];
	kept = k;
	if (p->top_p_ppm && p->top_p_ppm < 1000000) {
		double target = (double)p->top_p_ppm / 1000000.0 * mass;

		for (i = 0, acc = 0.0; i < k; i++) {
			acc += w[ord[i]];
			if (acc >= target) {
				kept = i + 1;
				break;
			}
		}
	}
	memset(prob, 0, n * sizeof(*prob));
	for (i = 0, mass = 0.0; i < kept; i++)
		mass += w[ord[i]];
	for (i = 0; i < kept; i++)
		prob[ord[i]] = w[ord[i]] / mass;
	free(w);
	free(ord);
	return kept;
}

/*
 * Draws @draws tokens (counters 0..) and checks them against reference():
 * no token outside the kept set, and a chi-square over the kept tokens
 * (expected counts below 5 pooled) under df + 6 sd + 6 (a false alarm is
 * far below 1e-6; the draws are deterministic anyway).
 */
static void check_distribution(struct cb_exec *ex, const float *l, cb_u32 n,
			       const struct cb_sample_params *p, int draws, const char *what)
{
	double *prob = malloc(n * sizeof(*prob)), chi = 0.0, pool_e = 0.0;
	long *hits = calloc(n, sizeof(*hits)), pool_o = 0;
	void *s = scratch_for(n);
	int i, bad = 0, bins = 0;

	reference(l, n, p, prob);
	for (i = 0; i < draws; i++) {
		int t = cb_sample_ex(ex, l, n, p, (cb_u64)i, s);

		if (t < 0 || (cb_u32)t >= n) {
			bad++;
			continue;
		}
		hits[t]++;
	}
	CB_CHECK(!bad, "%s: %d draws out of range", what, bad);
	for (i = 0; i < (int)n; i++) {
		double e = prob[i] * draws;

		if (prob[i] == 0.0) {
			CB_CHECK(!hits[i], "%s: token %d outside the kept set drawn %ld times",
				 what, i, hits[i]);
			continue;
		}
		if (e < 5.0) {
			pool_e += e;
			pool_o += hits[i];
			continue;
		}
		chi += (hits[i] - e) * (hits[i] - e) / e;
		bins++;
	}
	if (pool_e > 0.0) {
		chi += (pool_o - pool_e) * (pool_o - pool_e) / (pool_e > 1.0 ? pool_e : 1.0);
		bins++;
	}
	if (bins > 1) {
		double df = bins - 1;

		CB_CHECK(chi <= df + 6.0 * sqrt(2.0 * df) + 6.0,
			 "%s: chi-square %.1f over %d bins", what, chi, bins);
	}
	free(prob);
	free(hits);
	free(s);
}

static void fill_uniform(float *l, cb_u32 n, float lo, float hi)
{
	cb_u32 i;

	for (i = 0; i < n; i++)
		l[i] = lo + (float)urand() * (hi - lo);
}

/* ---- tests ------------------------------------------------------------------ */

static struct cb_exec *ex1, *ex4;

static void test_greedy_is_argmax_lowest_id(void)
{
	static const cb_u32 sizes[] = { 1, 2, 31, 2048, 4097, BIG };
	float *l = malloc(BIG * sizeof(*l));
	void *s = scratch_for(BIG);
	struct cb_sample_params g = sp(0, 0, 0, 1), k1 = sp(900, 1, 500000, 2);
	unsigned int z;
	int trial;

	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		cb_u32 n = sizes[z];

		for (trial = 0; trial < 4; trial++) {
			cb_u32 i, a = (cb_u32)(urand() * n), b = (cb_u32)(urand() * n), best;

			fill_uniform(l, n, -5.0f, 5.0f);
			if (trial & 1) {		/* a tie for the max */
				l[a] = 6.0f;
				l[b] = 6.0f;
			}
			if (trial == 3)
				l[n - 1] = 7.0f;	/* the max in the last chunk */
			for (i = 1, best = 0; i < n; i++)
				if (l[i] > l[best])
					best = i;
			CB_CHECK(cb_sample_ex(NULL, l, n, &g, 0, s) == (int)best,
				 "n %u: greedy != argmax %u", n, best);
			CB_CHECK(cb_sample_ex(ex4, l, n, &g, 0, s) == (int)best,
				 "n %u: greedy on 4 threads != argmax %u", n, best);
			CB_CHECK(cb_sample(l, n, &k1, 3, s) == (int)best,
				 "n %u: top_k 1 != argmax %u", n, best);
		}
	}
	free(l);
	free(s);
}

static void test_temperature_distribution(void)
{
	float l[2048];

	l[0] = 0.0f;
	l[1] = logf(3.0f);
	check_distribution(ex1, l, 2, &(struct cb_sample_params){ 1000, 0, 0, 0, 5 }, 20000,
			   "n 2, T 1");
	fill_uniform(l, 31, -2.0f, 2.0f);
	check_distribution(ex1, l, 31, &(struct cb_sample_params){ 1000, 0, 0, 0, 42 }, 20000,
			   "n 31, T 1");
	check_distribution(ex1, l, 31, &(struct cb_sample_params){ 600, 0, 0, 0, 43 }, 20000,
			   "n 31, T 0.6");
	fill_uniform(l, 2048, 0.0f, 6.0f);
	check_distribution(ex4, l, 2048, &(struct cb_sample_params){ 1700, 0, 0, 0, 44 }, 20000,
			   "n 2048, T 1.7");
}

static void test_top_k_distribution(void)
{
	float l[2048];

	fill_uniform(l, 31, -2.0f, 2.0f);
	check_distribution(ex1, l, 31, &(struct cb_sample_params){ 800, 5, 0, 0, 7 }, 20000,
			   "n 31, top_k 5");
	fill_uniform(l, 2048, 0.0f, 4.0f);
	check_distribution(ex1, l, 2048, &(struct cb_sample_params){ 1000, 40, 0, 0, 8 }, 10000,
			   "n 2048, top_k 40");
	check_distribution(ex1, l, 2048, &(struct cb_sample_params){ 1000, 2047, 0, 0, 8 }, 10000,
			   "n 2048, top_k 2047");
}

static void test_top_p_distribution(void)
{
	float l[2048];

	l[0] = 0.0f;
	l[1] = logf(3.0f);
	/* mass 0.75 of token 1 alone reaches 0.5: only it */
	check_distribution(ex1, l, 2, &(struct cb_sample_params){ 1000, 0, 500000, 0, 5 }, 2000,
			   "n 2, top_p 0.5");
	fill_uniform(l, 31, -2.0f, 2.0f);
	check_distribution(ex1, l, 31, &(struct cb_sample_params){ 1000, 0, 800000, 0, 9 }, 20000,
			   "n 31, top_p 0.8");
	fill_uniform(l, 2048, 0.0f, 8.0f);
	check_distribution(ex1, l, 2048, &(struct cb_sample_params){ 1000, 0, 900000, 0, 10 },
			   10000, "n 2048, top_p 0.9");
	/* 1 ppm: the argmax alone */
	check_distribution(ex4, l, 2048, &(struct cb_sample_params){ 1000, 0, 1, 0, 11 }, 200,
			   "n 2048, top_p 1e-6");
}

static void test_top_k_and_top_p_distribution(void)
{
	float l[2048];

	fill_uniform(l, 31, -2.0f, 2.0f);
	check_distribution(ex1, l, 31, &(struct cb_sample_params){ 1300, 10, 700000, 0, 12 },
			   20000, "n 31, T 1.3 top_k 10 top_p 0.7");
	fill_uniform(l, 2048, 0.0f, 5.0f);
	check_distribution(ex1, l, 2048, &(struct cb_sample_params){ 2000, 300, 900000, 0, 13 },
			   10000, "n 2048, T 2 top_k 300 top_p 0.9");
	check_distribution(ex4, l, 2048, &(struct cb_sample_params){ 700, 40, 950000, 0, 14 },
			   5000, "n 2048, T 0.7 top_k 40 top_p 0.95");
}

/* Equal logits at the boundary: the lower ids are kept. */
static void test_ties_at_the_boundary_keep_lower_ids(void)
{
	float l[10000];
	void *s = scratch_for(10000);
	int i, t, hi;

	/* top_k 3 over 2, 2, 2, 2, 1, ..., 3: ids 30, 0, 1 (30 after the ties) */
	for (i = 0; i < 31; i++)
		l[i] = i == 30 ? 3.0f : i < 4 ? 2.0f : 1.0f;
	check_distribution(ex1, l, 31, &(struct cb_sample_params){ 1000, 3, 0, 0, 15 }, 20000,
			   "ties at top_k 3");
	/* top_p on four equal tokens and a better one: 0.5 -> it and 1 tie */
	for (i = 0; i < 5; i++)
		l[i] = i == 4 ? 1.0f : 0.0f;
	check_distribution(ex1, l, 5, &(struct cb_sample_params){ 1000, 0, 500000, 0, 16 }, 20000,
			   "ties at top_p 0.5");
	/* four equal tokens: 0.5 -> 2 of them, 0.6 -> 3 */
	for (i = 0; i < 4; i++)
		l[i] = 0.5f;
	check_distribution(ex1, l, 4, &(struct cb_sample_params){ 1000, 0, 500000, 0, 16 }, 20000,
			   "ties at top_p 0.5, flat");
	check_distribution(ex1, l, 4, &(struct cb_sample_params){ 1000, 0, 600000, 0, 17 }, 20000,
			   "ties at top_p 0.6, flat");
	/*
	 * A flat 10000 tokens: the boundary crosses a chunk (4096 tokens);
	 * with a better token in the last chunk, that chunk keeps no tie.
	 */
	for (i = 0; i < 10000; i++)
		l[i] = 1.0f;
	for (t = 0, hi = 0; t < 1000; t++) {
		struct cb_sample_params a = sp(1000, 5000, 0, 18), b = sp(1000, 0, 500000, 19);
		struct cb_sample_params c = sp(1000, 4500, 500000, 20), d = sp(200, 5001, 0, 21);
		int x = cb_sample_ex(ex4, l, 10000, &a, (cb_u64)t, s);
		int y = cb_sample_ex(ex1, l, 10000, &b, (cb_u64)t, s);
		int z = cb_sample_ex(ex1, l, 10000, &c, (cb_u64)t, s);

		CB_CHECK(x >= 0 && x < 5000, "flat, top_k 5000: token %d", x);
		CB_CHECK(y >= 0 && y < 5000, "flat, top_p 0.5: token %d", y);
		CB_CHECK(z >= 0 && z < 2250, "flat, top_k 4500 top_p 0.5: token %d", z);
		hi += x >= 4096;
		l[9000] = 1.01f;	/* weight 1 against e^-0.05 at T 0.2 */
		x = cb_sample_ex(ex1, l, 10000, &d, (cb_u64)t, s);
		CB_CHECK((x >= 0 && x < 5000) || x == 9000, "top_k 5001 and 9000: token %d", x);
		l[9000] = 1.0f;
	}
	/* ids 4096..4999 are 904 of 5000: expect ~181 of 1000 (sd 12) */
	CB_CHECK(hi > 120 && hi < 245, "flat, top_k 5000: %d draws in the second chunk", hi);
	free(s);
}

static void test_nan_and_inf_logits(void)
{
	float l[2048];
	void *s = scratch_for(2048);
	struct cb_sample_params g = sp(0, 0, 0, 0), t1 = sp(1000, 0, 0, 21);
	int i, t, a = 0, b = 0, bad = 0;

	/* NaN is never drawn, not even by greedy at index 0 */
	fill_uniform(l, 2048, 0.0f, 3.0f);
	for (i = 0; i < 2048; i += 3)
		l[i] = NAN;
	l[1] = 5.0f;
	CB_CHECK(cb_sample_ex(ex1, l, 2048, &g, 0, s) == 1, "greedy with NaN at 0");
	check_distribution(ex4, l, 2048, &t1, 5000, "NaN logits");
	check_distribution(ex4, l, 2048, &(struct cb_sample_params){ 1000, 50, 800000, 0, 22 },
			   5000, "NaN logits, top_k 50 top_p 0.8");
	/* all NaN: token 0 */
	for (i = 0; i < 31; i++)
		l[i] = NAN;
	CB_CHECK(cb_sample_ex(ex1, l, 31, &t1, 0, s) == 0, "all NaN");
	CB_CHECK(cb_sample_ex(ex1, l, 31, &g, 0, s) == 0, "all NaN, greedy");
	/* +inf tokens share the draw equally; -inf is never drawn */
	fill_uniform(l, 2048, 0.0f, 3.0f);
	l[7] = INFINITY;
	l[1500] = INFINITY;
	l[8] = -INFINITY;
	for (t = 0; t < 4000; t++) {
		int x = cb_sample_ex(ex4, l, 2048, &t1, (cb_u64)t, s);

		a += x == 7;
		b += x == 1500;
		bad += x != 7 && x != 1500;
	}
	CB_CHECK(!bad && a > 1800 && b > 1800, "+inf: %d, %d, %d others", a, b, bad);
	CB_CHECK(cb_sample_ex(ex1, l, 2048, &g, 0, s) == 7, "greedy with +inf");
	/* -inf everywhere: every token has weight 1 (x == max), all kept */
	for (i = 0; i < 31; i++)
		l[i] = -INFINITY;
	check_distribution(ex1, l, 31, &t1, 3100, "all -inf");
	free(s);
}

/* The same token for (seed, counter, logits) on any executor. */
static void test_same_token_on_any_thread_count(void)
{
	static const struct cb_sample_params cases[] = {
		{ 1000, 0, 900000, 0, 1 }, { 1000, 0, 0, 0, 2 }, { 1000, 40, 0, 0, 3 },
		{ 1000, 40, 950000, 0, 4 }, { 2000, 0, 990000, 0, 5 }, { 0, 0, 0, 0, 6 },
	};
	static const cb_u32 sizes[] = { 1, 2, 31, 2048, 9000, BIG };
	float *l = malloc(BIG * sizeof(*l));
	void *s = scratch_for(BIG);
	unsigned int z, c;
	int i;

	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		cb_u32 n = sizes[z];

		fill_uniform(l, n, 0.0f, 4.0f);
		for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			for (i = 0; i < (n == BIG ? 6 : 40); i++) {
				int a = cb_sample(l, n, &cases[c], (cb_u64)i, s);
				int b = cb_sample_ex(ex1, l, n, &cases[c], (cb_u64)i, s);
				int d = cb_sample_ex(ex4, l, n, &cases[c], (cb_u64)i, s);
				int e = cb_sample_ex(ex4, l, n, &cases[c], (cb_u64)i, s);

				CB_CHECK(a >= 0 && (cb_u32)a < n, "n %u case %u: token %d",
					 n, c, a);
				CB_CHECK(a == b && a == d && a == e,
					 "n %u case %u counter %d: %d / %d / %d / %d", n, c, i,
					 a, b, d, e);
				if (n == 1)
					CB_CHECK(a == 0, "n 1: token %d", a);
			}
		}
	}
	free(l);
	free(s);
}

/* The big vocabulary: only kept tokens come out (top-k rank, nucleus). */
static void test_big_vocabulary_kept_set(void)
{
	float *l = malloc(BIG * sizeof(*l));
	double *prob = malloc(BIG * sizeof(*prob));
	void *s = scratch_for(BIG);
	struct cb_sample_params k40 = sp(1000, 40, 0, 30), both = sp(1000, 40, 950000, 31);
	struct cb_sample_params p9 = sp(1000, 0, 900000, 32);
	int t, bad = 0;

	fill_uniform(l, BIG, 0.0f, 4.0f);
	reference(l, BIG, &k40, prob);
	for (t = 0; t < 40; t++)
		bad += prob[cb_sample_ex(ex4, l, BIG, &k40, (cb_u64)t, s)] == 0.0;
	reference(l, BIG, &both, prob);
	for (t = 0; t < 40; t++)
		bad += prob[cb_sample_ex(ex4, l, BIG, &both, (cb_u64)t, s)] == 0.0;
	CB_CHECK(!bad, "%d tokens outside top_k 40", bad);
	/* peaked: the nucleus is a few hundred tokens */
	for (t = 0; t < (int)BIG; t++)
		l[t] = (float)(urand() * urand() * urand()) * 20.0f;
	reference(l, BIG, &p9, prob);
	for (t = 0, bad = 0; t < 40; t++)
		bad += prob[cb_sample_ex(ex4, l, BIG, &p9, (cb_u64)t, s)] == 0.0;
	CB_CHECK(!bad, "%d tokens outside the nucleus", bad);
	free(l);
	free(prob);
	free(s);
}

static void test_scratch_bound_and_bad_args(void)
{
	static const cb_u32 sizes[] = { 1, 31, 4096, 4097, 9000 };
	struct cb_sample_params both = sp(1000, 7, 900000, 1);
	float l[9000];
	unsigned int z;

	fill_uniform(l, 9000, -1.0f, 1.0f);
	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		cb_u64 sz = cb_sample_scratch_size(sizes[z]);
		unsigned char *s = aligned_alloc(64, (sz + 64 + 63) & ~(cb_u64)63);
		int i, t, over = 0;

		memset(s + sz, 0xa5, 64);
		t = cb_sample_ex(ex4, l, sizes[z], &both, 1, s);
		CB_CHECK(t >= 0 && (cb_u32)t < sizes[z], "n %u: token %d", sizes[z], t);
		for (i = 0; i < 64; i++)
			over += s[sz + i] != 0xa5;
		CB_CHECK(!over, "n %u: wrote past the scratch size", sizes[z]);
		free(s);
	}
	CB_CHECK(cb_sample(NULL, 4, &both, 0, l) == -CB_EINVAL, "NULL logits");
	CB_CHECK(cb_sample(l, 0, &both, 0, l) == -CB_EINVAL, "n 0");
	CB_CHECK(cb_sample(l, 4, NULL, 0, l) == -CB_EINVAL, "NULL params");
	CB_CHECK(cb_sample(l, 4, &both, 0, NULL) == -CB_EINVAL, "NULL scratch");
}

/* ---- timing (printed, not asserted) ---------------------------------------- */

/* A serial executor that times every chunk and the serial work between. */
struct timing_exec {
	struct cb_exec ex;
	double max_chunk_us, max_gap_us, last_end;
	int phases, chunks;
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void timing_for(struct cb_exec *ex, void (*fn)(void *arg, int chunk), void *arg,
		       int nchunks)
{
	struct timing_exec *te = (struct timing_exec *)ex;
	double t0 = now_us(), t1;
	int i;

	if (te->last_end > 0 && t0 - te->last_end > te->max_gap_us)
		te->max_gap_us = t0 - te->last_end;
	for (i = 0; i < nchunks; i++, t0 = t1) {
		fn(arg, i);
		t1 = now_us();
		if (t1 - t0 > te->max_chunk_us)
			te->max_chunk_us = t1 - t0;
	}
	te->phases++;
	te->chunks += nchunks;
	te->last_end = now_us();
}

static void test_timing_big_vocabulary(void)
{
	static const struct {
		struct cb_sample_params p;
		int flat;
		const char *name;
	} cases[] = {
		{ { 1000, 0, 900000, 0, 1 }, 0, "T 1, top_p 0.9" },
		{ { 1000, 0, 0, 0, 1 }, 0, "T 1" },
		{ { 1000, 40, 950000, 0, 1 }, 0, "T 1, top_k 40, top_p 0.95" },
		{ { 2000, 0, 990000, 0, 1 }, 0, "T 2, top_p 0.99" },
		{ { 1000, 40, 0, 0, 1 }, 0, "T 1, top_k 40" },
		{ { 0, 0, 0, 0, 1 }, 0, "greedy" },
		/* every radix level, both searches: the most phases */
		{ { 1000, 40, 950000, 0, 1 }, 1, "all equal, top_k 40 top_p .95" },
	};
	float *l = malloc(BIG * sizeof(*l));
	void *s = scratch_for(BIG);
	unsigned int c;
	int r, i;

	/* the flat distribution of the lead's bench: uniform logits in [0, 4) */
	srand(1);
	for (i = 0; i < BIG; i++)
		l[i] = (rand() / (float)RAND_MAX) * 4.0f;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct timing_exec te = { .ex = { .parallel_for = timing_for, .nthreads = 1 } };

		if (cases[c].flat)
			for (i = 0; i < BIG; i++)
				l[i] = 1.0f;
		double best = 1e18, best4 = 1e18, chunk = 1e18, gap = 1e18, t0;

		for (r = 0; r < 5; r++) {
			t0 = now_us();
			CB_CHECK(cb_sample(l, BIG, &cases[c].p, (cb_u64)r, s) >= 0, "failed");
			t0 = now_us() - t0;
			best = t0 < best ? t0 : best;
			t0 = now_us();
			CB_CHECK(cb_sample_ex(ex4, l, BIG, &cases[c].p, (cb_u64)r, s) >= 0,
				 "failed");
			t0 = now_us() - t0;
			best4 = t0 < best4 ? t0 : best4;
			/* the least disturbed run tells the work per chunk */
			te.last_end = 0;
			te.max_chunk_us = 0;
			te.max_gap_us = 0;
			te.phases = 0;
			CB_CHECK(cb_sample_ex(&te.ex, l, BIG, &cases[c].p, (cb_u64)r, s) >= 0,
				 "failed");
			chunk = te.max_chunk_us < chunk ? te.max_chunk_us : chunk;
			gap = te.max_gap_us < gap ? te.max_gap_us : gap;
		}
		printf("# %-29s 1 thread %5.0f us, 4 threads %5.0f us; %2d parallel_for, "
		       "longest chunk %3.0f us, longest serial step %2.0f us\n",
		       cases[c].name, best, best4, te.phases, chunk, gap);
	}
	free(l);
	free(s);
}

int main(void)
{
	ex1 = cb_host_exec_create(1);
	ex4 = cb_host_exec_create(4);
	if (!ex1 || !ex4) {
		fprintf(stderr, "test_sample: no executor\n");
		return 2;
	}
	CB_RUN(test_greedy_is_argmax_lowest_id);
	CB_RUN(test_temperature_distribution);
	CB_RUN(test_top_k_distribution);
	CB_RUN(test_top_p_distribution);
	CB_RUN(test_top_k_and_top_p_distribution);
	CB_RUN(test_ties_at_the_boundary_keep_lower_ids);
	CB_RUN(test_nan_and_inf_logits);
	CB_RUN(test_same_token_on_any_thread_count);
	CB_RUN(test_big_vocabulary_kept_set);
	CB_RUN(test_scratch_bound_and_bad_args);
	CB_RUN(test_timing_big_vocabulary);
	cb_host_exec_destroy(ex1);
	cb_host_exec_destroy(ex4);
	return cb_test_done();
}
