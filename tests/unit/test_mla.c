// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_mla.c - DeepSeek's multi-head latent attention: the absorbed form
 * (cb_mla.c) and the naive form (cb_mla_naive.c) on the same prompts.
 *
 * A small random DeepSeek-V3-shaped model (dense layers, MLA with and
 * without the q LoRA path), a prompt of 600 positions in passes of 300
 * (so contexts of three attention splits, merged), each form forced by
 * the engine's test-only switch:
 * - every position's logits agree within 1e-4 of the largest logit (f32
 *   weights; the two forms only sum in other orders) or 0.1 (q8_0: the
 *   absorbed form quantizes q_nope and the weighted latents to q8_0, the
 *   naive one decompresses from f32 latents);
 * - the automatic choice takes the naive form for a prefill pass and the
 *   absorbed one for a decode step and for a pass of two sequences (bit
 *   for bit equal to the forced forms);
 * - the naive form's bits do not depend on the threads or the chunk size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cb_engine_priv.h"
#include "format/cb_format.h"
#include "cb_test.h"
#include "cb_testmodel.h"
#include "util/host.h"

#define NPOS 600	/* positions of the prompt: 3 splits of 256 */
#define PASS 300	/* tokens per prefill pass */
#define VOCAB 97
#define R 64		/* kv_lora_rank */
#define DN 32		/* qk_nope_head_dim */
#define DR 16		/* qk_rope_head_dim */
#define DV 32		/* v_head_dim */
#define NH 4

static struct cb_tm_spec spec = {
	.name = "deepseek_v3", .arch = COLIBRI_ARCH_DEEPSEEK_V3, .vocab = VOCAB, .hidden = 64,
	.n_layers = 2, .n_heads = NH, .n_kv_heads = NH, .head_dim = DN + DR,
	.dense_ffn = 64, .dt = CB_DT_F32, .scale = 0.3f,
};

static struct cb_tm_model tm;
static cb_u32 toks[NPOS];

/* cb_tm_build()'s dense model, its attention made MLA's */
static void build(cb_u32 dt, cb_u32 q_lora)
{
	int l, H = (int)spec.hidden;

	spec.dt = dt;
	cb_tm_seed(16);
	cb_tm_build(&tm, &spec);
	tm.cfg.max_context = 1024;
	tm.cfg.rope_layout = CB_ROPE_INTERLEAVED;
	tm.cfg.mla.q_lora_rank = q_lora;
	tm.cfg.mla.kv_lora_rank = R;
	tm.cfg.mla.qk_nope_dim = DN;
	tm.cfg.mla.qk_rope_dim = DR;
	tm.cfg.mla.v_head_dim = DV;
	for (l = 0; l < (int)spec.n_layers; l++) {
		struct cb_layer_weights *L = &tm.layers[l];

		memset(&L->wk, 0, sizeof(L->wk));
		memset(&L->wv, 0, sizeof(L->wv));
		if (q_lora) {
			memset(&L->wq, 0, sizeof(L->wq));
			L->q_a = cb_tm_mat(q_lora, H, 0.3f, dt);
			L->q_a_norm = cb_tm_vec(q_lora, 1.0f, 0.1f);
			L->q_b = cb_tm_mat(NH * (DN + DR), q_lora, 0.3f, dt);
		}
		L->kv_a = cb_tm_mat(R + DR, H, 0.3f, dt);
		L->kv_a_norm = cb_tm_vec(R, 1.0f, 0.1f);
		L->k_b = cb_tm_mat(NH * R, DN, 0.3f, dt);
		L->v_b = cb_tm_mat(NH * DV, R, 0.3f, dt);
		L->wo = cb_tm_mat(H, NH * DV, 0.3f, dt);
	}
}

struct inst {
	struct cb_engine *e;
	void *arena;
};

static int inst_new(struct inst *in, cb_u32 max_batch, cb_u32 chunk_ns, int form)
{
	struct cb_engine_params p = { .max_batch_tokens = max_batch, .n_seqs = 2,
				      .max_context = NPOS + 8, .chunk_ns = chunk_ns };
	cb_u64 sz = cb_engine_arena_size(&tm.cfg, &p);
	char why[CB_FORMAT_WHY_LEN] = "";

	if (cb_config_check(&tm.cfg, why, sizeof(why)) || cb_engine_check_model(&tm.cfg, &tm.w))
		printf("# model refused: %s\n", why);
	in->arena = sz ? aligned_alloc(64, CB_ALIGN(sz, (cb_u64)64)) : NULL;
	if (!in->arena || cb_engine_init(&in->e, &tm.cfg, &tm.w, &p, in->arena, sz))
		return -1;
	cb_engine_set_mla_form(in->e, form);
	return 0;
}

/* Positions [from, to) of slot @seq, @step at a time; every row's logits into @out. */
static int run(struct inst *in, struct cb_exec *ex, cb_u32 seq, cb_u32 from, cb_u32 to,
	       cb_u32 step, float *out)
{
	static cb_u32 s[PASS], pos[PASS];
	struct cb_batch b = { 0 };
	cb_u32 i, n;
	int r;

	for (; from < to; from += n) {
		n = CB_MIN(step, to - from);
		for (i = 0; i < n; i++) {
			s[i] = seq;
			pos[i] = from + i;
		}
		b.n_tokens = n;
		b.tokens = toks + from;
		b.seq = s;
		b.pos = pos;
		b.logits = out + (cb_size)from * VOCAB;
		r = cb_engine_forward(in->e, ex, &b);
		if (r)
			return r;
	}
	return 0;
}

/* The worst position's max |a - b| / max |a|. */
static double worst_rel(const float *a, const float *b, int npos)
{
	double worst = 0.0;
	int p, i;

	for (p = 0; p < npos; p++) {
		double mx = 0.0, d = 0.0;

		for (i = 0; i < VOCAB; i++) {
			mx = fmax(mx, fabs(a[p * VOCAB + i]));
			d = fmax(d, fabs(a[p * VOCAB + i] - b[p * VOCAB + i]));
		}
		worst = fmax(worst, d / mx);
	}
	return worst;
}

static float la[NPOS * VOCAB], ln[NPOS * VOCAB], lx[NPOS * VOCAB];

/* The prompt through each form: logits of every position within @tol. */
static void forms_agree(const char *what, double tol)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	struct inst a, n;
	double w;

	CB_CHECK(!inst_new(&a, PASS, 0, CB_MLA_ABSORBED) && !inst_new(&n, PASS, 0, CB_MLA_NAIVE),
		 "%s: engines", what);
	CB_CHECK(n.e->nv_split == 256 && a.e->att_split == 256, "%s: splits %d, %d", what,
		 n.e->nv_split, a.e->att_split);
	CB_CHECK(!run(&a, ex, 0, 0, NPOS, PASS, la), "%s: absorbed run", what);
	CB_CHECK(!run(&n, ex, 0, 0, NPOS, PASS, ln), "%s: naive run", what);
	w = worst_rel(la, ln, NPOS);
	printf("# %s: naive vs absorbed, worst position max|diff|/max|logit| = %.3g\n", what, w);
	CB_CHECK(w <= tol, "%s: the forms differ by %.3g of the largest logit (bound %g)", what,
		 w, tol);
	CB_CHECK(memcmp(la, ln, sizeof(la)), "%s: the forms gave the same bits: one ran twice",
		 what);
	free(a.arena);
	free(n.arena);
	cb_host_exec_destroy(ex);
}

static void test_forms_agree_f32(void)
{
	build(CB_DT_F32, 32);
	forms_agree("f32, q_lora 32", 1e-4);
	build(CB_DT_F32, 0);
	forms_agree("f32, wq", 1e-4);
}

static void test_forms_agree_q8_0(void)
{
	build(CB_DT_Q8_0, 0);
	forms_agree("q8_0, wq", 0.1);
}

/*
 * The rule: a prefill pass takes the naive form, a decode step and a pass
 * of two sequences the absorbed one.  Auto against the forced forms, bit
 * for bit.
 */
static void test_auto_rule(void)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	static const cb_u32 two_seq[2] = { 0, 1 }, two_pos[2] = { 0, 0 };
	struct cb_batch b = { 0 };
	struct inst au, fx;

	build(CB_DT_F32, 32);
	CB_CHECK(!inst_new(&au, PASS, 0, CB_MLA_AUTO) && !inst_new(&fx, PASS, 0, CB_MLA_NAIVE),
		 "engines");
	/* prefill of 590 positions, then 10 decode steps */
	CB_CHECK(!run(&au, ex, 0, 0, NPOS - 10, PASS, la) &&
		 !run(&au, ex, 0, NPOS - 10, NPOS, 1, la), "auto run");
	CB_CHECK(!run(&fx, ex, 0, 0, NPOS - 10, PASS, ln), "naive prefill");
	cb_engine_set_mla_form(fx.e, CB_MLA_ABSORBED);
	CB_CHECK(!run(&fx, ex, 0, NPOS - 10, NPOS, 1, ln), "absorbed decode");
	CB_CHECK(!memcmp(la, ln, sizeof(la)),
		 "auto is not naive for prefill and absorbed for decode");
	free(fx.arena);

	/* two sequences in one pass: absorbed, even when naive is forced */
	CB_CHECK(!inst_new(&fx, PASS, 0, CB_MLA_ABSORBED), "engine");
	b.n_tokens = 2;
	b.tokens = toks;
	b.seq = two_seq;
	b.pos = two_pos;
	b.logits = lx;
	CB_CHECK(!cb_engine_forward(fx.e, ex, &b), "absorbed pass of two");
	cb_engine_set_mla_form(au.e, CB_MLA_NAIVE);
	b.logits = lx + 2 * VOCAB;
	CB_CHECK(!cb_engine_forward(au.e, ex, &b), "pass of two");
	CB_CHECK(!memcmp(lx, lx + 2 * VOCAB, 2 * VOCAB * sizeof(float)),
		 "a pass of two sequences took the naive form");
	free(au.arena);
	free(fx.arena);
	cb_host_exec_destroy(ex);
}

/* The naive form's bits: 1 or 3 threads, the smallest chunks or the default. */
static void test_naive_threads_and_chunks(void)
{
	struct cb_exec *ex1 = cb_host_exec_create(1), *ex3 = cb_host_exec_create(3);
	struct inst a, b;

	build(CB_DT_Q8_0, 32);
	CB_CHECK(!inst_new(&a, PASS, 0, CB_MLA_NAIVE) && !inst_new(&b, PASS, 1, CB_MLA_NAIVE),
		 "engines");
	CB_CHECK(!run(&a, ex1, 1, 0, NPOS, PASS, la), "1 thread, default chunks");
	CB_CHECK(!run(&b, ex3, 1, 0, NPOS, PASS, ln), "3 threads, chunks of 1 ns");
	CB_CHECK(!memcmp(la, ln, sizeof(la)), "the naive form's bits depend on the threads");
	free(a.arena);
	free(b.arena);
	cb_host_exec_destroy(ex1);
	cb_host_exec_destroy(ex3);
}

/*
 * Bench (not a test: MLA_BENCH=1 build/tests/unit/test_mla): one layer of
 * DeepSeek-V3's attention shape (hidden 7168, 128 heads, q_lora 1536,
 * kv_lora 512, nope 128, rope 64, v 128; q8_0 weights), each form timed
 * from q ready to att ready (the phases between prep and Wo, found by the
 * yield hook), median of MLA_BENCH_REPS (default 3) runs.  Cases: T new
 * tokens at the end of a context of L (the cache before them filled with
 * random rows), "T:L" pairs in MLA_BENCH_CASES, default the decode step at
 * 4096, T = 32 at 4096, and prefills of 64 and 512.
 */
#include <time.h>

#define BM_MAXPH 4096
static double bm_t[BM_MAXPH];
static int bm_n;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bm_yield(struct cb_exec *ex)
{
	(void)ex;
	if (bm_n < BM_MAXPH)
		bm_t[bm_n++] = now_s();
	return 0;
}

static struct cb_tensor bm_mat(int rows, int cols, float scale)
{
	struct cb_tensor t = { .dtype = CB_DT_Q8_0, .rows = rows, .cols = cols };
	cb_u64 rb = cb_dtype_row_bytes(CB_DT_Q8_0, cols);
	char *p = malloc(rb * rows);
	float *row = malloc(cols * sizeof(float));
	int r, i;

	for (r = 0; r < rows; r++) {
		for (i = 0; i < cols; i++)
			row[i] = cb_tm_frand() * scale;
		cb_quantize_row(CB_DT_Q8_0, p + r * rb, row, cols);
	}
	free(row);
	t.data = p;
	return t;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void bench(void)
{
	static struct cb_tm_spec bs = {
		.name = "v3_attention", .arch = COLIBRI_ARCH_DEEPSEEK_V3, .vocab = 256,
		.hidden = 64, .n_layers = 1, .n_heads = 1, .n_kv_heads = 1,
		.head_dim = 32, .dense_ffn = 32, .dt = CB_DT_Q8_0, .scale = 0.02f,
	};
	const char *cases = getenv("MLA_BENCH_CASES");
	int reps = getenv("MLA_BENCH_REPS") ? atoi(getenv("MLA_BENCH_REPS")) : 3;
	int threads = getenv("MLA_BENCH_THREADS") ? atoi(getenv("MLA_BENCH_THREADS")) : 2;
	struct cb_exec *ex = cb_host_exec_create(threads);
	struct cb_layer_weights *L = &tm.layers[0];
	int H = 7168, T, Lc, form, rep, off = 0;

	if (!cases)
		cases = "1:4096 32:4096 64:64 512:512";
	cb_tm_seed(3);
	cb_tm_build(&tm, &bs);
	tm.cfg.hidden = H;
	tm.cfg.n_heads = 128;
	tm.cfg.n_kv_heads = 128;
	tm.cfg.head_dim = 192;
	tm.cfg.max_context = 8192;
	tm.cfg.mla = (struct cb_mla_config){ .q_lora_rank = 1536, .kv_lora_rank = 512,
					     .qk_nope_dim = 128, .qk_rope_dim = 64,
					     .v_head_dim = 128 };
	tm.w.embed = bm_mat(256, H, 1.0f);
	tm.w.lm_head = bm_mat(256, H, 0.02f);
	tm.w.final_norm = cb_tm_vec(H, 1.0f, 0.1f);
	L->attn_norm = cb_tm_vec(H, 1.0f, 0.1f);
	L->ffn_norm = cb_tm_vec(H, 1.0f, 0.1f);
	memset(&L->wq, 0, sizeof(L->wq));
	memset(&L->wk, 0, sizeof(L->wk));
	memset(&L->wv, 0, sizeof(L->wv));
	L->q_a = bm_mat(1536, H, 0.02f);
	L->q_a_norm = cb_tm_vec(1536, 1.0f, 0.1f);
	L->q_b = bm_mat(128 * 192, 1536, 0.03f);
	L->kv_a = bm_mat(576, H, 0.02f);
	L->kv_a_norm = cb_tm_vec(512, 1.0f, 0.1f);
	L->k_b = bm_mat(128 * 512, 128, 0.05f);
	L->v_b = bm_mat(128 * 128, 512, 0.05f);
	L->wo = bm_mat(H, 128 * 128, 0.01f);
	L->mlp_gate = bm_mat(32, H, 0.02f);
	L->mlp_up = bm_mat(32, H, 0.02f);
	L->mlp_down = bm_mat(H, 32, 0.02f);
	ex->yield = bm_yield;
	printf("# MLA bench: V3 attention shape, q8_0, %d threads, %d reps, isa %s\n",
	       threads, reps, cb_isa_names[cb_isa_select(99)->level]);
	while (sscanf(cases + off, "%d:%d", &T, &Lc) == 2) {
		static cb_u32 s[512], pos[512];
		struct cb_engine_params p = { .max_batch_tokens = CB_MAX(T, 2), .n_seqs = 1,
					      .max_context = Lc };
		struct cb_batch b = { 0 };
		double ms[2][16];
		float *logits = malloc((cb_size)T * 256 * sizeof(float));
		cb_u64 sz = cb_engine_arena_size(&tm.cfg, &p);
		void *arena = sz ? aligned_alloc(64, CB_ALIGN(sz, (cb_u64)64)) : NULL;
		struct cb_engine *e;
		int i, nph[2] = { 0, 0 }, chosen = -1;

		while (cases[off] && cases[off] != ' ')
			off++;
		while (cases[off] == ' ')
			off++;
		if (!arena || cb_engine_init(&e, &tm.cfg, &tm.w, &p, arena, sz)) {
			printf("# %d:%d: no engine (%llu bytes)\n", T, Lc, (unsigned long long)sz);
			free(arena);
			continue;
		}
		/* the context before the new tokens: random cache rows */
		for (i = 0; i < (Lc - T) * e->mla_row; i++)
			e->lat_cache[i] = cb_tm_frand();
		for (i = 0; i < T; i++) {
			s[i] = 0;
			pos[i] = Lc - T + i;
		}
		b.n_tokens = T;
		b.tokens = toks;
		b.seq = s;
		b.pos = pos;
		b.logits = logits;
		for (form = 0; form < 2; form++) {
			cb_engine_set_mla_form(e, form ? CB_MLA_NAIVE : CB_MLA_ABSORBED);
			for (rep = 0; rep < reps && rep < 16; rep++) {
				e->seq_len[0] = Lc - T;
				e->seq_hi[0] = Lc - T;
				bm_n = 0;
				bm_t[bm_n++] = now_s();
				if (cb_engine_forward(e, ex, &b)) {
					printf("# forward failed\n");
					break;
				}
				/* 6 phases before (embed .. prep), 8 after (Wo .. lm_head) */
				ms[form][rep] = (bm_t[bm_n - 1 - 8] - bm_t[6]) * 1e3;
				nph[form] = bm_n - 1 - 14;
				if (getenv("MLA_BENCH_PHASES"))
					for (i = 1; i < bm_n; i++)
						printf("#  form %d phase %d: %.2f ms\n", form, i,
						       (bm_t[i] - bm_t[i - 1]) * 1e3);
			}
			qsort(ms[form], rep, sizeof(double), cmp_d);
		}
		e->b = &b;
		e->n = T;
		cb_engine_set_mla_form(e, CB_MLA_AUTO);
		chosen = cb_mla_naive_chosen(e);
		printf("T %4d L %5d: absorbed %9.2f ms (%d phases), naive %9.2f ms (%d phases), "
		       "rule: %s\n", T, Lc, ms[0][reps / 2], nph[0], ms[1][reps / 2], nph[1],
		       chosen ? "naive" : "absorbed");
		fflush(stdout);
		free(arena);
		free(logits);
	}
	cb_host_exec_destroy(ex);
}

int main(void)
{
	int i;

	for (i = 0; i < NPOS; i++)
		toks[i] = (i * 37 + 11) % VOCAB;
	if (getenv("MLA_BENCH")) {
		bench();
		return 0;
	}
	CB_RUN(test_forms_agree_f32);
	CB_RUN(test_forms_agree_q8_0);
	CB_RUN(test_auto_rule);
	CB_RUN(test_naive_threads_and_chunks);
	return cb_test_done();
}
