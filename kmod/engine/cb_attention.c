// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_attention.c - causal multi-head attention with grouped kv heads
 * (GQA), over a cache of every position's k and v: the attention of
 * Llama, Mixtral, Qwen2/3-MoE and OLMoE.
 *
 * Two entries (cb_engine_priv.h): cb_attn_rope_cache() readies this
 * layer's q, k and v (q/k norm, clip, RoPE) and stores k and v in the
 * cache; cb_attention() attends each token's query heads over the
 * positions 0..pos of its slot and leaves att in the forms Wo reads.
 */
#include "cb_engine_priv.h"
#include "cb_math.h"

#define ATT_TILE 32		/* positions per score tile (on the stack) */
#define ATT_HEADS 8		/* query heads scored together: 1 KiB of stack */

/* Rotate one head in place by the token's angles. */
static void rope_head(float *h, const float *cs, int hd, int layout)
{
	int half = hd / 2, i;

	for (i = 0; i < half; i++) {
		float co = cs[i], si = cs[half + i];
		/* NeoX pairs (i, i + d/2); interleaved pairs (2i, 2i + 1) */
		int a = layout == CB_ROPE_NEOX ? i : 2 * i;
		int b = layout == CB_ROPE_NEOX ? i + half : 2 * i + 1;
		float x0 = h[a], x1 = h[b];

		h[a] = x0 * co - x1 * si;
		h[b] = x1 * co + x0 * si;
	}
}

static void clip(float *x, int n, float lim)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] = x[i] > lim ? lim : (x[i] < -lim ? -lim : x[i]);
}

/* q/k norm, clip_qkv, RoPE, then store k and v in the slot's cache */
static void rope_cache_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_layer_weights *L = e->lw;
	float eps = cb_f32_from_bits(cf->rms_eps_bits);
	float lim = cb_f32_from_bits(cf->clip_qkv_bits);
	int t, t1, h;

	cb_tok_range(e, c, &t, &t1);
	for (; t < t1; t++) {
		float *q = e->q + (cb_size)t * e->qdim;
		float *k = e->k + (cb_size)t * e->kvdim;
		float *v = e->v + (cb_size)t * e->kvdim;
		const float *cs = e->rope + (cb_size)t * e->hd;
		cb_size cache = (((cb_size)e->b->seq[t] * cf->n_layers + e->layer) *
				 e->p.max_context + e->b->pos[t]) * e->kvdim;
		int i;

		if (cf->qk_norm == CB_QK_NORM_HEAD) {
			for (h = 0; h < (int)cf->n_heads; h++)
				cb_rmsnorm(q + h * e->hd, q + h * e->hd,
					   L->q_norm.data, e->hd, eps);
			for (h = 0; h < (int)cf->n_kv_heads; h++)
				cb_rmsnorm(k + h * e->hd, k + h * e->hd,
					   L->k_norm.data, e->hd, eps);
		} else if (cf->qk_norm == CB_QK_NORM_FULL) {
			cb_rmsnorm(q, q, L->q_norm.data, e->qdim, eps);
			cb_rmsnorm(k, k, L->k_norm.data, e->kvdim, eps);
		}
		if (cf->clip_qkv_bits) {
			clip(q, e->qdim, lim);
			clip(k, e->kvdim, lim);
			clip(v, e->kvdim, lim);
		}
		for (h = 0; h < (int)cf->n_heads; h++)
			rope_head(q + h * e->hd, cs, e->hd, cf->rope_layout);
		for (h = 0; h < (int)cf->n_kv_heads; h++)
			rope_head(k + h * e->hd, cs, e->hd, cf->rope_layout);
		for (i = 0; i < e->kvdim; i++) {
			e->k_cache[cache + i] = k[i];
			e->v_cache[cache + i] = v[i];
		}
	}
}

/*
 * Causal attention of one token, for the query heads that share one kv head
 * (GQA), over one split of positions (CB_ATT_SPLIT of them) of its slot's
 * cache.  Heads go ATT_HEADS at a time; per tile of ATT_TILE positions the
 * scores of all of them come from one f32 gemm over the K rows (each K row
 * read once for the group), then an online softmax in f32 with max
 * subtraction: a new tile maximum rescales what was accumulated.  With one
 * split the result is final; otherwise the split leaves (max, sum,
 * unnormalised output) for merge_chunk.  Splitting bounds a chunk at
 * ~group * CB_ATT_SPLIT * head_dim * 4 flops however long the context, and
 * split points depend only on the position, so batching never changes a bit.
 */
static void attn_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	int nh = (int)cf->n_heads, nkv = (int)cf->n_kv_heads, grp = nh / nkv;
	int sp = c % e->att_nsplit, kvh = (c / e->att_nsplit) % nkv;
	int t = c / e->att_nsplit / nkv, hd = e->hd, i, g, g0, ng, p0;
	int npos = (int)e->b->pos[t] + 1, nsplit = (npos + CB_ATT_SPLIT - 1) / CB_ATT_SPLIT;
	int pbeg = sp * CB_ATT_SPLIT, pend = CB_MIN(npos, pbeg + CB_ATT_SPLIT);
	cb_size base = ((cb_size)e->b->seq[t] * cf->n_layers + e->layer) *
		       e->p.max_context * e->kvdim + (cb_size)kvh * hd;
	cb_size kvrow = (cb_size)e->kvdim * sizeof(float);
	float scale = 1.0f / cb_sqrtf((float)hd);
	float s[ATT_HEADS][ATT_TILE], m[ATT_HEADS], l[ATT_HEADS];
	float *o[ATT_HEADS];

	if (pbeg >= npos)
		return;		/* this token has fewer splits */
	for (g0 = 0; g0 < grp; g0 += ATT_HEADS) {
		int h0 = kvh * grp + g0;

		ng = CB_MIN(ATT_HEADS, grp - g0);
		for (g = 0; g < ng; g++) {
			if (nsplit == 1)
				o[g] = e->att.f + (cb_size)t * e->qdim + (cb_size)(h0 + g) * hd;
			else
				o[g] = e->att_part + 2 + (((cb_size)t * nh + h0 + g) *
							  e->att_nsplit + sp) * (hd + 2);
			for (i = 0; i < hd; i++)
				o[g][i] = 0.0f;
		}
		for (p0 = pbeg; p0 < pend; p0 += ATT_TILE) {
			int n = CB_MIN(ATT_TILE, pend - p0);

			/* s[g][i] = q_(h0+g) . k_(p0+i), all heads of the batch at once */
			e->ops->gemm[CB_DT_F32](&s[0][0], ATT_TILE,
						e->k_cache + base + (cb_size)p0 * e->kvdim,
						kvrow,
						e->q + (cb_size)t * e->qdim + (cb_size)h0 * hd,
						(cb_size)hd * sizeof(float), ng, n, hd);
			for (g = 0; g < ng; g++) {
				float mt = s[g][0] * scale;

				for (i = 0; i < n; i++) {
					s[g][i] *= scale;
					mt = s[g][i] > mt ? s[g][i] : mt;
				}
				if (p0 == pbeg) {
					m[g] = mt;
					l[g] = 0.0f;
				} else if (mt > m[g]) {
					float r = cb_expf(m[g] - mt);

					for (i = 0; i < hd; i++)
						o[g][i] *= r;
					l[g] *= r;
					m[g] = mt;
				}
				for (i = 0; i < n; i++) {
					float w = cb_expf(s[g][i] - m[g]);

					l[g] += w;
					e->ops->axpy_f32(o[g], w, e->v_cache + base +
							 (cb_size)(p0 + i) * e->kvdim, hd);
				}
			}
		}
		for (g = 0; g < ng; g++) {
			if (nsplit == 1) {
				float inv = 1.0f / l[g];

				for (i = 0; i < hd; i++)
					o[g][i] *= inv;
			} else {
				o[g][-2] = m[g];
				o[g][-1] = l[g];
			}
		}
	}
}

/* Combine the splits of tokens whose context needed more than one. */
static void merge_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int nh = (int)e->cfg.n_heads, hd = e->hd, t, t1, h, sp, i;

	cb_tok_range(e, c, &t, &t1);
	for (; t < t1; t++) {
		int nsplit = ((int)e->b->pos[t] + CB_ATT_SPLIT) / CB_ATT_SPLIT;

		if (nsplit == 1)
			continue;
		for (h = 0; h < nh; h++) {
			const float *part = e->att_part +
				((cb_size)t * nh + h) * e->att_nsplit * (hd + 2);
			float *o = e->att.f + (cb_size)t * e->qdim + (cb_size)h * hd;
			float m = part[0], l = 0.0f;

			for (sp = 1; sp < nsplit; sp++)
				m = part[sp * (hd + 2)] > m ? part[sp * (hd + 2)] : m;
			for (i = 0; i < hd; i++)
				o[i] = 0.0f;
			for (sp = 0; sp < nsplit; sp++) {
				const float *ps = part + sp * (hd + 2);
				float r = cb_expf(ps[0] - m);

				l += r * ps[1];
				e->ops->axpy_f32(o, r, ps + 2, hd);
			}
			l = 1.0f / l;
			for (i = 0; i < hd; i++)
				o[i] *= l;
		}
	}
}

/* att rows into the forms Wo reads */
static void att_quant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1;

	cb_tok_range(e, c, &t, &t1);
	for (; t < t1; t++)
		cb_acts_quantize(e, &e->att, t);
}

void cb_attn_rope_cache(struct cb_engine *e, struct cb_exec *ex)
{
	cb_run_phase(e, ex, rope_cache_chunk, e->tchunks);
}

void cb_attention(struct cb_engine *e, struct cb_exec *ex)
{
	int t;

	/* splits of the longest context in this batch */
	e->att_nsplit = 1;
	for (t = 0; t < e->n; t++)
		e->att_nsplit = CB_MAX(e->att_nsplit,
				       (int)(e->b->pos[t] + CB_ATT_SPLIT) / CB_ATT_SPLIT);
	/* chunks of (token, kv head, split) */
	cb_run_phase(e, ex, attn_chunk, e->n * (int)e->cfg.n_kv_heads * e->att_nsplit);
	if (e->att_nsplit > 1)
		cb_run_phase(e, ex, merge_chunk, e->tchunks);
	cb_run_phase(e, ex, att_quant_chunk, e->tchunks);
}
