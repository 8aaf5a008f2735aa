// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_forward.c - properties of the engine's forward pass that the
 * numerical comparison with the reference (tests/ref/run) cannot see:
 * no allocation and no write outside the arena after init, batching,
 * thread count and the chunking of every step never change a bit of the
 * result, chunks are planned within their budget, routing behaves as
 * documented (sampling: test_sample.c), bad batches are refused, yield
 * aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cb_engine_priv.h"
#include "cb_test.h"
#include "cb_testmodel.h"
#include "util/host.h"
#include "colibri_format.h"

/* ---- malloc counting (glibc: the real allocator is __libc_*) ---------- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static volatile long n_allocs;

void *malloc(size_t n)
{
	__atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	__atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	__atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
	return __libc_realloc(p, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	__atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
	return __libc_memalign(a, n);
}

/* ---- a small synthetic model with every feature switched on ----------- */

#define HID 64
#define NH 4
#define NKV 2
#define HD 32
#define FFN 32
#define SFFN 64
#define DFFN 96
#define NEXP 8
#define TOPK 3
#define VOCAB 97
#define NL 3

/* Qwen2-MoE-like (biases, shared expert with gate), plus Qwen3 q/k norm. */
static const struct cb_tm_spec spec_f32 = {
	.name = "f32", .arch = COLIBRI_ARCH_QWEN2_MOE, .vocab = VOCAB, .hidden = HID,
	.n_layers = NL, .n_heads = NH, .n_kv_heads = NKV, .head_dim = HD,
	.ffn = FFN, .n_exp = NEXP, .top_k = TOPK, .norm_topk = 0,
	.shared_ffn = SFFN, .shared_gate = 1, .dense_ffn = DFFN,
	.dense_layer = 1 + 1,	/* layer 1 is dense */
	.qk_norm = CB_QK_NORM_HEAD, .qkv_bias = 1, .dt = CB_DT_F32,
	.scale = 0.2f, .router_scale = 0.3f,
};
static struct cb_tm_spec spec_q8;	/* the same in q8_0: main() */

struct inst {
	struct cb_engine *e;
	char *arena;
	cb_u64 size, guard;
};

#define GUARD 4096
#define MAXB 16
#define NSEQ 3
#define MAXCTX 32

static int make_inst(struct inst *in, struct cb_tm_model *m)
{
	struct cb_engine_params p = { MAXB, NSEQ, MAXCTX, CB_ISA__COUNT - 1, 0 };

	in->size = cb_engine_arena_size(&m->cfg, &p);
	if (!in->size)
		return -1;
	in->arena = __libc_memalign(64, in->size + GUARD);
	memset(in->arena, 0xa5, in->size + GUARD);
	return cb_engine_init(&in->e, &m->cfg, &m->w, &p, in->arena, in->size);
}

static int guard_intact(struct inst *in)
{
	cb_u64 i;

	for (i = 0; i < GUARD; i++)
		if ((unsigned char)in->arena[in->size + i] != 0xa5)
			return 0;
	return 1;
}

/* The three prompts of the tests, each NTOK long. */
#define NTOK 7
static const cb_u32 prompts[NSEQ][NTOK] = {
	{ 1, 5, 9, 33, 2, 96, 40 },
	{ 7, 7, 7, 12, 80, 3, 0 },
	{ 50, 60, 70, 11, 21, 31, 41 },
};

/*
 * Batched schedule: step 1 prefills seq 0 (5 tokens) and seq 1 (3 tokens);
 * step 2 mixes one decode token of seq 0, the rest of seq 1's prefill (2),
 * and seq 2's whole prompt; step 3 finishes everything token by token in
 * one batch.  Logits of every token land in out[seq][pos][vocab].
 */
static int run_batched(struct inst *in, struct cb_exec *ex, float *out)
{
	static const int plan[][NSEQ] = { { 5, 3, 0 }, { 1, 2, NTOK }, { 1, 1, 0 }, { 0, 1, 0 } };
	int done[NSEQ] = { 0 }, st, i, r;

	for (st = 0; st < (int)CB_ARRAY_SIZE(plan); st++) {
		cb_u32 tok[MAXB], seq[MAXB], pos[MAXB], n;
		float lg[MAXB * VOCAB];
		struct cb_batch b = { .tokens = tok, .seq = seq, .pos = pos, .logits = lg };

		n = cb_tm_plan_step(plan[st], NSEQ, prompts[0], NTOK, done, tok, seq, pos);
		b.n_tokens = n;
		r = cb_engine_forward(in->e, ex, &b);
		if (r)
			return r;
		for (i = 0; i < (int)n; i++)
			memcpy(out + ((size_t)seq[i] * NTOK + pos[i]) * VOCAB, lg + i * VOCAB,
			       VOCAB * sizeof(float));
	}
	return 0;
}

/* Each sequence alone, one token per forward call, in slot 0. */
static int run_single(struct inst *in, struct cb_exec *ex, float *out)
{
	int s, i, r;

	for (s = 0; s < NSEQ; s++) {
		cb_engine_seq_reset(in->e, 0);
		for (i = 0; i < NTOK; i++) {
			cb_u32 seq = 0, pos = i;
			struct cb_batch b = {
				.n_tokens = 1, .tokens = &prompts[s][i], .seq = &seq,
				.pos = &pos, .logits = out + ((size_t)s * NTOK + i) * VOCAB,
			};

			r = cb_engine_forward(in->e, ex, &b);
			if (r)
				return r;
		}
	}
	return 0;
}

static struct cb_tm_model model_f32, model_q8;

static void test_no_allocation_after_init(void)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	static float out[NSEQ * NTOK * VOCAB];
	struct inst in;
	long before;
	int r;

	CB_CHECK(make_inst(&in, &model_f32) == 0, "init failed");
	CB_CHECK(cb_engine_arena_used(in.e) <= in.size, "used %llu > size %llu",
		 (unsigned long long)cb_engine_arena_used(in.e), (unsigned long long)in.size);
	before = n_allocs;
	r = run_batched(&in, ex, out);
	CB_CHECK(r == 0, "forward failed %d", r);
	r = run_single(&in, ex, out);
	CB_CHECK(r == 0, "forward failed %d", r);
	CB_CHECK(n_allocs == before, "%ld allocations during forward", n_allocs - before);
	CB_CHECK(cb_engine_arena_used(in.e) <= in.size, "arena high-water mark moved");
	CB_CHECK(guard_intact(&in), "forward wrote past the end of the arena");
	cb_host_exec_destroy(ex);
	free(in.arena);
}

static void batched_equals_single(struct cb_tm_model *m, const char *what)
{
	struct cb_exec *ex = cb_host_exec_create(2);
	static float a[NSEQ * NTOK * VOCAB], b[NSEQ * NTOK * VOCAB];
	struct inst in;
	int r, i;

	CB_CHECK(make_inst(&in, m) == 0, "init failed");
	r = run_batched(&in, ex, a);
	CB_CHECK(r == 0, "batched forward failed %d", r);
	r = run_single(&in, ex, b);
	CB_CHECK(r == 0, "single forward failed %d", r);
	for (i = 0; i < NSEQ * NTOK * VOCAB; i++)
		if (memcmp(&a[i], &b[i], 4)) {
			CB_CHECK(0, "%s: logit %d differs: batched %.9g, alone %.9g", what, i,
				 a[i], b[i]);
			break;
		}
	cb_host_exec_destroy(ex);
	free(in.arena);
}

static void test_batched_equals_one_at_a_time_f32(void)
{
	batched_equals_single(&model_f32, "f32");
}

static void test_batched_equals_one_at_a_time_q8_0(void)
{
	batched_equals_single(&model_q8, "q8_0");
}

static void test_bitwise_equal_across_thread_counts(void)
{
	static float ref[NSEQ * NTOK * VOCAB], got[NSEQ * NTOK * VOCAB];
	struct inst in;
	int t, r;

	for (t = 1; t <= 4; t++) {
		struct cb_exec *ex = cb_host_exec_create(t);

		CB_CHECK(make_inst(&in, &model_q8) == 0, "init failed");
		r = run_batched(&in, ex, t == 1 ? ref : got);
		CB_CHECK(r == 0, "forward failed %d", r);
		if (t > 1)
			CB_CHECK(!memcmp(ref, got, sizeof(ref)),
				 "%d threads differ from 1 thread", t);
		cb_host_exec_destroy(ex);
		free(in.arena);
	}
}

static void test_route_trace(void)
{
	struct cb_exec *ex = cb_host_exec_create(1);
	cb_u32 tr[NTOK * NL * TOPK * 2], seq[NTOK] = { 0 }, pos[NTOK];
	float lg[NTOK * VOCAB];
	struct cb_batch b = {
		.n_tokens = NTOK, .tokens = prompts[0], .seq = seq, .pos = pos,
		.logits = lg, .route_trace = tr,
	};
	struct inst in;
	int t, l, j;

	for (t = 0; t < NTOK; t++)
		pos[t] = t;
	CB_CHECK(make_inst(&in, &model_f32) == 0, "init failed");
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == 0, "forward failed");
	for (t = 0; t < NTOK; t++)
		for (l = 0; l < NL; l++) {
			const cb_u32 *e = tr + ((t * NL + l) * TOPK) * 2;
			float sum = 0, w, prev = 2;

			for (j = 0; j < TOPK; j++) {
				if (l == 1) {
					CB_CHECK(e[2 * j] == CB_TRACE_NONE, "dense layer traced");
					continue;
				}
				memcpy(&w, &e[2 * j + 1], 4);
				CB_CHECK(e[2 * j] < NEXP, "expert id %u", e[2 * j]);
				CB_CHECK(w > 0 && w <= prev, "weights not descending");
				prev = w;
				sum += w;
			}
			/* without renormalisation top-3 of 8 sums to < 1 */
			if (l != 1)
				CB_CHECK(sum > 0.3f && sum < 1.0f, "weight sum %g", sum);
		}
	cb_host_exec_destroy(ex);
	free(in.arena);
}

static void test_topk_matches_sort(void)
{
	const struct cb_isa_ops *ops = cb_isa_select(CB_ISA__COUNT - 1);
	float l[64], v[8];
	cb_u32 id[8];
	int trial, i, j;
	struct timespec t0, t1;
	double ns;

	for (trial = 0; trial < 2000; trial++) {
		for (i = 0; i < 64; i++)	/* coarse values: plenty of ties */
			l[i] = (float)(int)(cb_tm_frand() * 8);
		ops->topk_f32(l, 64, 8, id, v);
		for (j = 0; j < 8; j++) {
			int rank = 0;

			/* id[j] must have exactly j entries ahead of it */
			for (i = 0; i < 64; i++)
				if (l[i] > l[id[j]] || (l[i] == l[id[j]] && i < (int)id[j]))
					rank++;
			CB_CHECK(rank == j && v[j] == l[id[j]], "trial %d rank %d at %d", trial,
				 rank, j);
		}
	}
	{
		static float tab[256][64];

		for (i = 0; i < 256 * 64; i++)
			tab[i / 64][i % 64] = cb_tm_frand();
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (trial = 0; trial < 100000; trial++)
			ops->topk_f32(tab[trial & 255], 64, 8, id, v);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	}
	ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100000.0;
	printf("# top-8 of 64 random logits: %.1f ns per token (timing only, not asserted)\n", ns);
}

static void test_route_renormalised_weights_sum_to_one(void)
{
	float l[16], w[4], s = 0;
	cb_u32 id[4];
	int i;

	for (i = 0; i < 16; i++)
		l[i] = cb_tm_frand() * 3;
	cb_route(cb_isa_select(CB_ISA__COUNT - 1), l, 16, 4, 1, id, w);
	for (i = 0; i < 4; i++)
		s += w[i];
	CB_CHECK(s > 0.999999f && s < 1.000001f, "sum %.9g", s);
}

static void test_bad_batches_refused(void)
{
	struct cb_exec *ex = cb_host_exec_create(1);
	cb_u32 tok[2] = { 1, 2 }, seq[2] = { 0, 0 }, pos[2] = { 0, 1 };
	float lg[2 * VOCAB];
	struct cb_batch b = { .n_tokens = 2, .tokens = tok, .seq = seq, .pos = pos,
			      .logits = lg };
	struct inst in;

	CB_CHECK(make_inst(&in, &model_f32) == 0, "init failed");
	pos[0] = 1;	/* gap: slot is empty */
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == -CB_EINVAL, "gap accepted");
	pos[0] = 0;
	pos[1] = 2;	/* not consecutive inside the batch */
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == -CB_EINVAL, "hole accepted");
	pos[1] = 1;
	tok[1] = VOCAB;
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == -CB_EINVAL, "bad token accepted");
	tok[1] = 2;
	seq[1] = NSEQ;
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == -CB_EINVAL, "bad slot accepted");
	seq[1] = 0;
	b.n_tokens = MAXB + 1;
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == -CB_EINVAL, "oversized batch accepted");
	b.n_tokens = 2;
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == 0, "good batch refused");
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 2, "len %d", cb_engine_seq_len(in.e, 0));
	/* rewind to position 1 is allowed and truncates */
	b.n_tokens = 1;
	b.pos = &pos[1];
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == 0, "rewind refused");
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 2, "len after rewind %d",
		 cb_engine_seq_len(in.e, 0));
	CB_CHECK(cb_engine_init(&in.e, &model_f32.cfg, &model_f32.w,
				&(struct cb_engine_params){ MAXB, NSEQ, MAXCTX, 2, 0 },
				in.arena, in.size - 64) == -CB_ENOMEM, "small arena accepted");
	cb_host_exec_destroy(ex);
	free(in.arena);
}

/* Reorder the rows of every head from NeoX pairs (i, i + d/2) to
 * interleaved pairs (2i, 2i + 1), as GGUF converters do for llama. */
static struct cb_tensor permute_heads(const struct cb_tensor *t, int heads)
{
	/* a matrix permutes its rows; a vector (bias, norm) its elements */
	int vec = t->rows == 1, n = vec ? (int)t->cols : (int)t->rows;
	int width = vec ? 1 : (int)t->cols, hd = n / heads, h, i;
	struct cb_tensor out = *t;
	const float *src = t->data;
	float *dst = __libc_malloc(sizeof(float) * t->rows * t->cols);

	for (h = 0; h < heads; h++)
		for (i = 0; i < hd / 2; i++) {
			memcpy(dst + (cb_size)(h * hd + 2 * i) * width,
			       src + (cb_size)(h * hd + i) * width, sizeof(float) * width);
			memcpy(dst + (cb_size)(h * hd + 2 * i + 1) * width,
			       src + (cb_size)(h * hd + i + hd / 2) * width, sizeof(float) * width);
		}
	out.data = dst;
	return out;
}

static void test_interleaved_rope_equals_neox_with_permuted_weights(void)
{
	static struct cb_tm_model perm;
	struct cb_exec *ex = cb_host_exec_create(1);
	static float a[NSEQ * NTOK * VOCAB], b[NSEQ * NTOK * VOCAB];
	struct inst in1, in2;
	float worst = 0, big = 0;
	int l, i;

	perm = model_f32;
	perm.w.layers = perm.layers;
	perm.cfg.rope_layout = CB_ROPE_INTERLEAVED;
	for (l = 0; l < NL; l++) {
		struct cb_layer_weights *L = &perm.layers[l];

		L->wq = permute_heads(&model_f32.layers[l].wq, NH);
		L->wk = permute_heads(&model_f32.layers[l].wk, NKV);
		L->bq = permute_heads(&model_f32.layers[l].bq, NH);
		L->bk = permute_heads(&model_f32.layers[l].bk, NKV);
		L->q_norm = permute_heads(&model_f32.layers[l].q_norm, 1);
		L->k_norm = permute_heads(&model_f32.layers[l].k_norm, 1);
		if (L->experts)
			L->experts = perm.experts[l];
	}
	CB_CHECK(make_inst(&in1, &model_f32) == 0 && make_inst(&in2, &perm) == 0, "init");
	CB_CHECK(run_batched(&in1, ex, a) == 0 && run_batched(&in2, ex, b) == 0, "forward");
	for (i = 0; i < NSEQ * NTOK * VOCAB; i++) {
		float d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];

		worst = d > worst ? d : worst;
		big = (a[i] > 0 ? a[i] : -a[i]) > big ? (a[i] > 0 ? a[i] : -a[i]) : big;
	}
	/* same math, only the order of the head dimensions (and so of the
	 * additions in q.k) differs */
	CB_CHECK(worst <= 1e-5f * big, "max diff %g of max logit %g", worst, big);
	cb_host_exec_destroy(ex);
	free(in1.arena);
	free(in2.arena);
}

static void test_bad_params_refused(void)
{
	struct cb_engine_params p = { MAXB, NSEQ, MAXCTX, 2, 0 };
	struct cb_engine *e;
	cb_u64 size;
	char *arena;

	size = cb_engine_arena_size(&model_f32.cfg, &p);
	CB_CHECK(size > 0, "valid params sized 0");
	arena = __libc_memalign(64, size + 64);
	CB_CHECK(cb_engine_init(&e, &model_f32.cfg, &model_f32.w, &p, arena + 8, size) ==
		 -CB_EINVAL, "misaligned arena accepted");
	p.max_context = 65;	/* config says 64 */
	CB_CHECK(cb_engine_arena_size(&model_f32.cfg, &p) == 0, "context > config sized");
	p.max_context = MAXCTX;
	p.max_batch_tokens = 0;
	CB_CHECK(cb_engine_arena_size(&model_f32.cfg, &p) == 0, "empty batch sized");
	p.max_batch_tokens = 1u << 20;
	p.n_seqs = 1u << 20;
	p.max_context = 64;
	/* no silent wrap-around: at least the KV cache (K and V, f32) */
	size = cb_engine_arena_size(&model_f32.cfg, &p);
	CB_CHECK(size == 0 || size >= (1ull << 20) * NL * 64 * NKV * HD * 8,
		 "huge instance sized %llu", (unsigned long long)size);
	p.max_batch_tokens = 0xffffffffu;
	CB_CHECK(cb_engine_arena_size(&model_f32.cfg, &p) == 0, "4G-token batch sized");
	free(arena);
}

static int yields_left;

static int yield_count(struct cb_exec *ex)
{
	(void)ex;
	return --yields_left > 0 ? 0 : -4;	/* -EINTR */
}

static void test_yield_aborts(void)
{
	struct cb_exec *ex = cb_host_exec_create(1);
	cb_u32 tok = 3, seq = 0, pos = 0;
	float lg[VOCAB];
	struct cb_batch b = { .n_tokens = 1, .tokens = &tok, .seq = &seq, .pos = &pos,
			      .logits = lg };
	struct inst in;

	CB_CHECK(make_inst(&in, &model_f32) == 0, "init failed");
	ex->yield = yield_count;
	yields_left = 5;
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == -4, "abort not propagated");
	CB_CHECK(cb_engine_seq_len(in.e, 0) == 0, "aborted step committed");
	yields_left = 1000000;
	CB_CHECK(cb_engine_forward(in.e, ex, &b) == 0, "forward failed");
	ex->yield = NULL;
	cb_host_exec_destroy(ex);
	free(in.arena);
}

static void test_bad_model_refused(void)
{
	struct cb_tm_model *m = &model_f32;
	struct cb_tensor save = m->layers[0].wq;

	m->layers[0].wq.rows++;
	CB_CHECK(cb_engine_check_model(&m->cfg, &m->w) == -CB_EINVAL, "bad shape accepted");
	m->layers[0].wq = save;
	m->layers[0].attn_norm.dtype = CB_DT_F16;
	CB_CHECK(cb_engine_check_model(&m->cfg, &m->w) == -CB_EINVAL, "f16 norm accepted");
	m->layers[0].attn_norm.dtype = CB_DT_F32;
	CB_CHECK(cb_engine_check_model(&m->cfg, &m->w) == 0, "good model refused");
}

/* ---- chunking ----------------------------------------------------------- */

/*
 * Wide enough that rows are cut into pieces (two or three 256-column pieces,
 * the last partial), q8_0 activations quantized piece by piece, the whole
 * q/k projection normed (qk_inv first) and clipped, a shared expert, a
 * dense layer; a context past one attention split, so the merge runs.
 */
static const struct cb_tm_spec spec_wide = {
	.name = "wide", .arch = COLIBRI_ARCH_QWEN2_MOE, .vocab = 300, .hidden = 512,
	.n_layers = 2, .n_heads = 8, .n_kv_heads = 2, .head_dim = 64,
	.ffn = 320, .n_exp = 4, .top_k = 2, .norm_topk = 1,
	.shared_ffn = 288, .shared_gate = 1, .dense_ffn = 544, .dense_layer = 2,
	.qk_norm = CB_QK_NORM_FULL, .qkv_bias = 1, .dt = CB_DT_Q8_0,
	.scale = 0.05f, .router_scale = 0.3f,
};
static struct cb_tm_model model_wide;

/*
 * The same with block types reading every activation form, each row cut
 * into 256-column pieces quantized one by one: q8_K (iq4_xs everywhere, q4_K
 * expert gates), q8_1 (q5_1 expert ups), q8_0 (iq4_nl expert downs); the
 * embedding table is iq4_xs too (a row dequantized per token).  Every row
 * is whole super-blocks.
 */
static const struct cb_tm_spec spec_wide_k = {
	.name = "wide_k", .arch = COLIBRI_ARCH_QWEN2_MOE, .vocab = 300, .hidden = 512,
	.n_layers = 2, .n_heads = 8, .n_kv_heads = 2, .head_dim = 64,
	.ffn = 512, .n_exp = 4, .top_k = 2, .norm_topk = 1,
	.shared_ffn = 768, .shared_gate = 1, .dense_ffn = 1024, .dense_layer = 2,
	.qk_norm = CB_QK_NORM_FULL, .qkv_bias = 1, .dt = CB_DT_IQ4_XS,
	.own_expert_dt = 1, .dt_gate = CB_DT_Q4_K, .dt_up = CB_DT_Q5_1,
	.dt_down = CB_DT_IQ4_NL, .scale = 0.05f, .router_scale = 0.3f,
};
static struct cb_tm_model model_wide_k;

#define WIDE_CTX 560
#define WIDE_STEP 80

/* Prefill WIDE_CTX tokens WIDE_STEP at a time, every position's logits. */
static int run_wide(const struct cb_tm_model *m, int level, cb_u32 chunk_ns, int threads,
		    float *out, cb_u32 *trace)
{
	struct cb_engine_params p = { WIDE_STEP, 1, WIDE_CTX, (cb_u32)level, chunk_ns };
	struct cb_exec *ex = cb_host_exec_create(threads);
	struct cb_engine *e;
	cb_u32 tok[WIDE_CTX], seq[WIDE_CTX] = { 0 }, pos[WIDE_CTX];
	cb_u64 size = cb_engine_arena_size(&m->cfg, &p);
	void *arena = size ? __libc_memalign(64, size) : NULL;
	int r = -1, i;

	for (i = 0; i < WIDE_CTX; i++) {
		tok[i] = (cb_u32)(i * 7919 + 13) % 300;
		pos[i] = (cb_u32)i;
	}
	if (ex && arena && !cb_engine_init(&e, &m->cfg, &m->w, &p, arena, size))
		for (i = 0, r = 0; i < WIDE_CTX && !r; i += WIDE_STEP) {
			struct cb_batch b = {
				.n_tokens = WIDE_STEP, .tokens = tok + i, .seq = seq + i,
				.pos = pos + i, .logits = out + (size_t)i * 300,
				.route_trace = trace + (size_t)i * 2 * 2 * 2,
			};

			r = cb_engine_forward(e, ex, &b);
		}
	cb_host_exec_destroy(ex);
	free(arena);
	return r;
}

/*
 * The chunk budget (cb_engine_params.chunk_ns) decides only how each step
 * is cut: with a budget of 1 ns every gemm chunk is one row for one token,
 * every row of SwiGLU, combine and quantization its own 256-column piece,
 * every kv head of RoPE its own chunk, every head of attention its own
 * block, every dimension of the merge its own chunk.  The logits and the
 * routing must be those of the default budget, bit for bit, at every ISA
 * level the CPU has.
 */
static void same_bits_any_budget(const struct cb_tm_model *m)
{
	static float a[WIDE_CTX * 300], b[WIDE_CTX * 300];
	static cb_u32 ta[WIDE_CTX * 8], tb[WIDE_CTX * 8];
	int lvl, r, i;

	for (lvl = 0; lvl < CB_ISA__COUNT; lvl++) {
		if (!cb_isa_get(lvl))
			continue;
		memset(b, 0, sizeof(b));
		r = run_wide(m, lvl, 0, 2, a, ta);
		CB_CHECK(r == 0, "level %d, default budget: forward %d", lvl, r);
		r = run_wide(m, lvl, 1, 2, b, tb);
		CB_CHECK(r == 0, "level %d, 1 ns budget: forward %d", lvl, r);
		for (i = 0; i < WIDE_CTX * 300; i++)
			if (memcmp(&a[i], &b[i], 4)) {
				CB_CHECK(0, "level %d: logit %d (position %d) differs: %.9g, cut %.9g",
					 lvl, i, i / 300, a[i], b[i]);
				break;
			}
		CB_CHECK(!memcmp(ta, tb, sizeof(ta)), "level %d: routing differs", lvl);
	}
}

static void test_any_chunk_budget_same_bits(void)
{
	same_bits_any_budget(&model_wide);
}

static void test_any_chunk_budget_same_bits_block_types(void)
{
	same_bits_any_budget(&model_wide_k);
}

/*
 * A MoE model whose every layer is sparse may still carry a dense_ffn
 * (Qwen1.5-MoE's config has intermediate_size): it must change nothing.
 * A hostile file in the soak had a dense_ffn of 300 (not whole q8_K
 * blocks, and wider than the 256 of its q8_K-read shared expert): the
 * activations the dense and shared MLPs share were sized by it, their q8_K
 * form came out empty, and the pass wrote the shared expert's activations
 * through NULL, in the kernel too.  Now every form of an activation row
 * has room for whole blocks of its widest user.
 */
static const struct cb_tm_spec spec_unused_dense = {
	.name = "unused_dense", .arch = COLIBRI_ARCH_QWEN2_MOE, .vocab = 300, .hidden = 512,
	.n_layers = 2, .n_heads = 8, .n_kv_heads = 2, .head_dim = 64,
	.ffn = 256, .n_exp = 4, .top_k = 2, .norm_topk = 1,
	.shared_ffn = 256, .shared_gate = 1, .dense_ffn = 300,
	.qk_norm = CB_QK_NORM_FULL, .qkv_bias = 1, .dt = CB_DT_Q4_K,
	.scale = 0.05f, .router_scale = 0.3f,
};

static void test_unused_dense_ffn_changes_nothing(void)
{
	static struct cb_tm_model m;
	static float a[WIDE_CTX * 300], b[WIDE_CTX * 300];
	static cb_u32 ta[WIDE_CTX * 8], tb[WIDE_CTX * 8];
	int lvl, r;

	cb_tm_seed(31);
	cb_tm_build(&m, &spec_unused_dense);
	m.cfg.max_context = 0;
	for (lvl = 0; lvl < CB_ISA__COUNT; lvl++) {
		if (!cb_isa_get(lvl))
			continue;
		m.cfg.dense_ffn = spec_unused_dense.dense_ffn;
		r = run_wide(&m, lvl, 0, 2, a, ta);
		CB_CHECK(r == 0, "level %d, dense_ffn 300: forward failed %d", lvl, r);
		m.cfg.dense_ffn = 0;
		r = run_wide(&m, lvl, 0, 2, b, tb);
		CB_CHECK(r == 0, "level %d, dense_ffn 0: forward failed %d", lvl, r);
		CB_CHECK(!memcmp(a, b, sizeof(a)) && !memcmp(ta, tb, sizeof(ta)),
			 "level %d: an unused dense_ffn changed the logits", lvl);
	}
}

/*
 * The planners: every (row, piece) in exactly one chunk; a chunk within
 * the budget unless it is one indivisible unit; gemm chunks as before the
 * budget existed (16-row blocks of ~512K multiply-adds, 32 tokens) where
 * those fit, else smaller, never empty.
 */
static void test_chunk_plans(void)
{
	static const int rows[] = { 1, 3, 32, 100, 4096 };
	static const int pieces[] = { 1, 2, 7, 256 };
	static const cb_u64 piece_ps[] = { 0, 1000, 999999, 30000000, 200000000 };
	unsigned a, b2, c2;
	int bad = 0;

	for (a = 0; a < CB_ARRAY_SIZE(rows); a++)
		for (b2 = 0; b2 < CB_ARRAY_SIZE(pieces); b2++)
			for (c2 = 0; c2 < CB_ARRAY_SIZE(piece_ps); c2++) {
				struct cb_plan pl;
				static unsigned char seen[4096 * 256];
				int c, r0, r1, p0, p1, r, p;
				cb_u64 row_ps = c2 * 7000;

				cb_plan_rows(&pl, rows[a], pieces[b2], row_ps, piece_ps[c2],
					     CB_CHUNK_PS);
				memset(seen, 0, (size_t)rows[a] * pieces[b2]);
				for (c = 0; c < pl.nchunks; c++) {
					cb_plan_chunk(&pl, c, &r0, &r1, &p0, &p1);
					if (r0 >= r1 || p0 >= p1 ||
					    ((cb_u64)(r1 - r0) * (row_ps + (p1 - p0) * piece_ps[c2]) >
					     CB_CHUNK_PS && (r1 - r0 > 1 || p1 - p0 > 1)))
						bad++;
					for (r = r0; r < r1; r++)
						for (p = p0; p < p1; p++)
							seen[r * pieces[b2] + p]++;
				}
				for (r = 0; r < rows[a] * pieces[b2]; r++)
					bad += seen[r] != 1;
			}
	CB_CHECK(bad == 0, "%d bad chunks or (row, piece) not covered exactly once", bad);

	{
		int rb, mb;

		/* within the budget: the old shape */
		cb_gemm_plan(4096, 4096, 32, 40, CB_CHUNK_PS, &rb, &mb);
		CB_CHECK(rb == 16 && mb == 32, "avx2 prefill chunk %d x %d", rb, mb);
		cb_gemm_plan(4096, 4096, 1, 60, CB_CHUNK_PS, &rb, &mb);
		CB_CHECK(rb == 128 && mb == 1, "avx2 decode chunk %d x %d", rb, mb);
		/* scalar: fewer rows, then fewer tokens */
		cb_gemm_plan(4096, 4096, 32, 1200, CB_CHUNK_PS, &rb, &mb);
		CB_CHECK(rb == 1 && mb == 20 && (cb_u64)rb * mb * 4096 * 1200 <= CB_CHUNK_PS,
			 "scalar prefill chunk %d x %d", rb, mb);
		cb_gemm_plan(4096, 65536, 32, 1500, CB_CHUNK_PS, &rb, &mb);
		CB_CHECK(rb == 1 && mb == 1, "k 65536: %d x %d", rb, mb);
		cb_gemm_plan(5, 64, 3, 1200, CB_CHUNK_PS, &rb, &mb);
		CB_CHECK(rb == 5 && mb == 3, "small job in one chunk: %d x %d", rb, mb);
	}
	/* the split depends on the head alone: one head's split within the budget */
	CB_CHECK(cb_att_split(16) == 512 && cb_att_split(64) == 512 && cb_att_split(128) == 256 &&
		 cb_att_split(256) == 128, "splits %d %d %d %d", cb_att_split(16),
		 cb_att_split(64), cb_att_split(128), cb_att_split(256));
}

int main(void)
{
	spec_q8 = spec_f32;
	spec_q8.name = "q8_0";
	spec_q8.dt = CB_DT_Q8_0;
	cb_tm_seed(88172645463325252ull);
	cb_tm_build(&model_f32, &spec_f32);
	cb_tm_build(&model_q8, &spec_q8);
	cb_tm_build(&model_wide, &spec_wide);
	model_wide.cfg.max_context = 0;		/* the context of the test */
	model_wide.cfg.clip_qkv_bits = cb_tm_bits(8.0f);
	cb_tm_build(&model_wide_k, &spec_wide_k);
	model_wide_k.cfg.max_context = 0;
	CB_RUN(test_no_allocation_after_init);
	CB_RUN(test_batched_equals_one_at_a_time_f32);
	CB_RUN(test_batched_equals_one_at_a_time_q8_0);
	CB_RUN(test_bitwise_equal_across_thread_counts);
	CB_RUN(test_route_trace);
	CB_RUN(test_topk_matches_sort);
	CB_RUN(test_route_renormalised_weights_sum_to_one);
	CB_RUN(test_bad_batches_refused);
	CB_RUN(test_yield_aborts);
	CB_RUN(test_bad_model_refused);
	CB_RUN(test_interleaved_rope_equals_neox_with_permuted_weights);
	CB_RUN(test_bad_params_refused);
	CB_RUN(test_chunk_plans);
	CB_RUN(test_any_chunk_budget_same_bits);
	CB_RUN(test_any_chunk_budget_same_bits_block_types);
	CB_RUN(test_unused_dense_ffn_changes_nothing);
	return cb_test_done();
}
