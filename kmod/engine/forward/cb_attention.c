// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_attention.c - causal multi-head attention with grouped kv heads
 * (GQA), over a cache of every position's k and v: the attention of
 * Llama, Mixtral, Qwen2/3-MoE and OLMoE; and, with its two parameters,
 * GPT-OSS's (the attention kind CB_ATTN_GQA_SINKS).
 *
 * Two entries (cb_engine_priv.h): cb_attn_rope_cache() readies this
 * layer's q, k and v (q/k norm, clip, RoPE) and stores k and v in the
 * cache; cb_attention() attends each token's query heads over the
 * positions its slot's cache holds for it and leaves att in the forms Wo
 * reads.
 *
 * GPT-OSS's parameters, after modeling_gpt_oss.py (eager_attention_forward):
 * - the sink, a learned logit per query head in the softmax denominator:
 *   p_j = exp(s_j - m) / (sum_i exp(s_i - m) + exp(sink - m)), m the
 *   maximum over the scores and the sink; it joins when a head's result
 *   is finalised (after its one split, or in the merge);
 * - the sliding window of its sliding layers: positions j with
 *   pos - window < j <= pos, read from the layer's ring (cb_kv_at():
 *   position p at row p % rows); a split starts at the token's first
 *   visible position.
 * Split and tile points depend on the position alone (a tile that crosses
 * the ring's end is scored in two products), so neither batching nor the
 * ring's size changes a bit; without the parameters (first position 0, a
 * cache of max_context rows, no sink) the steps are plain GQA's.
 */
#include "core/cb_engine_priv.h"
#include "arch/cb_gpt_oss.h"
#include "ops/cb_math.h"
#include "forward/cb_rope.h"

#define ATT_TILE 32		/* positions per score tile (on the stack) */
#define ATT_HEADS 8		/* query heads scored together: 1 KiB of stack */

static void clip(float *x, int n, float lim)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] = x[i] > lim ? lim : (x[i] < -lim ? -lim : x[i]);
}

/* qk_norm FULL: 1 / rms of each token's whole q and k, before any is normed */
static void qk_inv_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, t1, p0, p1;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	for (; t < t1; t++) {
		e->qk_inv[2 * t] = cb_rms_inv(e->q + (cb_size)t * e->qdim, e->qdim, eps);
		e->qk_inv[2 * t + 1] = cb_rms_inv(e->k + (cb_size)t * e->kvdim, e->kvdim, eps);
	}
}

/*
 * q/k norm, clip_qkv, RoPE, then k and v into the slot's cache, for kv
 * heads [p0, p1) of each token: each kv head with the query heads of its
 * group.  Every element's steps are the same however the heads are cut
 * (the FULL norm's 1 / rms comes from qk_inv_chunk, computed first).
 */
static void rope_cache_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_layer_weights *L = e->lw;
	float eps = cb_f32_from_bits(cf->rms_eps_bits);
	float lim = cb_f32_from_bits(cf->clip_qkv_bits);
	int grp = (int)(cf->n_heads / cf->n_kv_heads), hd = e->hd;
	int t, t1, g0, g1, h, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &g0, &g1);
	for (; t < t1; t++) {
		/* the query heads of kv heads [g0, g1), and those kv heads */
		float *q = e->q + (cb_size)t * e->qdim + (cb_size)g0 * grp * hd;
		float *k = e->k + (cb_size)t * e->kvdim + (cb_size)g0 * hd;
		float *v = e->v + (cb_size)t * e->kvdim + (cb_size)g0 * hd;
		int nq = (g1 - g0) * grp * hd, nk = (g1 - g0) * hd;
		const float *cs = e->rope + (cb_size)t * hd;
		cb_size cache = cb_kv_at(e, e->b->seq[t], e->layer, e->b->pos[t]) +
				(cb_size)g0 * hd;

		if (cf->qk_norm == CB_QK_NORM_HEAD) {
			for (h = 0; h < nq; h += hd)
				cb_rmsnorm(q + h, q + h, L->q_norm.data, hd, eps);
			for (h = 0; h < nk; h += hd)
				cb_rmsnorm(k + h, k + h, L->k_norm.data, hd, eps);
		} else if (cf->qk_norm == CB_QK_NORM_FULL) {
			cb_rms_apply(q, q, (const float *)L->q_norm.data + (cb_size)g0 * grp * hd,
				     e->qk_inv[2 * t], nq);
			cb_rms_apply(k, k, (const float *)L->k_norm.data + (cb_size)g0 * hd,
				     e->qk_inv[2 * t + 1], nk);
		}
		if (cf->clip_qkv_bits) {
			clip(q, nq, lim);
			clip(k, nk, lim);
			clip(v, nk, lim);
		}
		/* the leading e->rd dimensions of each head (partial RoPE) */
		for (h = 0; h < nq; h += hd)
			cb_rope_rotate(q + h, cs, e->rd, cf->rope_layout);
		for (h = 0; h < nk; h += hd)
			cb_rope_rotate(k + h, cs, e->rd, cf->rope_layout);
		for (i = 0; i < nk; i++) {
			e->k_cache[cache + i] = k[i];
			e->v_cache[cache + i] = v[i];
		}
	}
}

/* The first position token t sees in this layer: past the window of a sliding one. */
static int first_pos(const struct cb_engine *e, int t)
{
	cb_u32 pos = e->b->pos[t], w = e->cfg.oss.sliding_window;

	if (!cb_gpt_oss_sliding(&e->cfg, (cb_u32)e->layer) || pos < w)
		return 0;
	return (int)(pos - w + 1);
}

/* The sinks of this layer's query heads, or NULL. */
static const float *layer_sinks(const struct cb_engine *e)
{
	return e->arch->attn == CB_ATTN_GQA_SINKS ? e->lw->oss.sinks.data : CB_NULL;
}

/* o = o * r / (l * r + exp(sink - m')), m' = max(m, sink), r = exp(m - m') */
static void finish_with_sink(float *o, int hd, float m, float l, float sink)
{
	float mm = sink > m ? sink : m, r = cb_expf(m - mm);
	float inv = r / (l * r + cb_expf(sink - mm));
	int i;

	for (i = 0; i < hd; i++)
		o[i] *= inv;
}

/*
 * Causal attention of one token, for a block of the query heads that share
 * one kv head (GQA), over one split of the positions it sees (e->att_split
 * of them, from first_pos()) in its slot's cache.  Heads go ATT_HEADS at a
 * time; per tile of ATT_TILE positions the scores of all of them come from
 * one f32 gemm over the K rows (each K row read once for those heads; two
 * products where the tile crosses a ring's end), then an online softmax in
 * f32 with max subtraction: a new tile maximum rescales what was
 * accumulated.  With one split the result is final (with the sink, if
 * any); otherwise the split leaves (max, sum, unnormalised output) for
 * merge_chunk.
 *
 * A chunk is (token, kv head, block of e->att_hb heads, split).  The split
 * bounds its work however long the context, and the split points depend
 * only on the shape and the position (cb_att_split()), so batching never
 * changes a bit; the heads per block only change the time (each head's
 * result is computed alone).
 */
static void attn_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const float *sinks = layer_sinks(e);
	int nh = (int)cf->n_heads, nkv = (int)cf->n_kv_heads, grp = nh / nkv;
	int nhb = (grp + e->att_hb - 1) / e->att_hb, S = e->att_split;
	int sp = c % e->att_nsplit, hb = c / e->att_nsplit % nhb;
	int kvh = c / e->att_nsplit / nhb % nkv, t = c / e->att_nsplit / nhb / nkv;
	int hd = e->hd, i, g, g0, ng, p0, gend = CB_MIN(grp, (hb + 1) * e->att_hb);
	int lo = first_pos(e, t), end = (int)e->b->pos[t] + 1;
	int nsplit = (end - lo + S - 1) / S, pbeg = lo + sp * S, pend = CB_MIN(end, pbeg + S);
	int rows = (int)e->kv_rows[e->layer];
	cb_size base = cb_kv_at(e, e->b->seq[t], e->layer, 0) + (cb_size)kvh * hd;
	cb_size kvrow = (cb_size)e->kvdim * sizeof(float);
	float scale = 1.0f / cb_sqrtf((float)hd);
	float s[ATT_HEADS][ATT_TILE], m[ATT_HEADS], l[ATT_HEADS];
	float *o[ATT_HEADS];
	cb_size ldo;

	if (pbeg >= end)
		return;		/* this token has fewer splits */
	for (g0 = hb * e->att_hb; g0 < gend; g0 += ATT_HEADS) {
		int h0 = kvh * grp + g0;

		ng = CB_MIN(ATT_HEADS, gend - g0);
		/* the heads' outputs are rows of one stride (pv_f32 takes o[0]) */
		ldo = nsplit == 1 ? (cb_size)hd : (cb_size)e->att_nsplit * (hd + 2);
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
			int n = CB_MIN(ATT_TILE, pend - p0), row = p0 % rows;
			int n1 = CB_MIN(n, rows - row);	/* the tile's rows before a ring's end */
			const float *qt = e->q + (cb_size)t * e->qdim + (cb_size)h0 * hd;

			/* s[g][i] = q_(h0+g) . k_(p0+i), all heads of the block at once */
			e->ops->gemm[CB_DT_F32](&s[0][0], ATT_TILE,
						e->k_cache + base + (cb_size)row * e->kvdim,
						kvrow, qt, (cb_size)hd * sizeof(float), ng, n1, hd);
			if (n1 < n)
				e->ops->gemm[CB_DT_F32](&s[0][n1], ATT_TILE, e->k_cache + base,
							kvrow, qt, (cb_size)hd * sizeof(float), ng,
							n - n1, hd);
			for (g = 0; g < ng; g++) {
				for (i = 0; i < n; i++)
					s[g][i] *= scale;
				cb_att_tile_max(s[g], n, p0 == pbeg, &m[g], &l[g], o[g], hd);
				e->ops->expf_sub_f32(s[g], m[g], n);
				for (i = 0; i < n; i++)
					l[g] += s[g][i];
			}
			/*
			 * o_g += sum_i s[g][i] v_(p0+i) in position order: the
			 * rows before a ring's end, then those from its start
			 */
			e->ops->pv_f32(o[0], ldo, &s[0][0], ATT_TILE,
				       e->v_cache + base + (cb_size)row * e->kvdim, e->kvdim,
				       ng, n1, hd);
			if (n1 < n)
				e->ops->pv_f32(o[0], ldo, &s[0][n1], ATT_TILE, e->v_cache + base,
					       e->kvdim, ng, n - n1, hd);
		}
		for (g = 0; g < ng; g++) {
			if (sinks && nsplit == 1)
				finish_with_sink(o[g], hd, m[g], l[g], sinks[h0 + g]);
			else
				cb_att_finish(o[g], hd, nsplit, m[g], l[g]);
		}
	}
}

void cb_att_tile_max(const float *s, int n, int first, float *m, float *l, float *o, int w)
{
	float mt = s[0];
	int i;

	for (i = 1; i < n; i++)
		mt = s[i] > mt ? s[i] : mt;
	if (first) {
		*m = mt;
		*l = 0.0f;
	} else if (mt > *m) {
		float r = cb_expf(*m - mt);

		for (i = 0; i < w; i++)
			o[i] *= r;
		*l *= r;
		*m = mt;
	}
}

void cb_att_finish(float *o, int w, int nsplit, float m, float l)
{
	float inv;
	int i;

	if (nsplit > 1) {
		o[-2] = m;
		o[-1] = l;
		return;
	}
	inv = 1.0f / l;
	for (i = 0; i < w; i++)
		o[i] *= inv;
}

/*
 * cb_att_merge() - one (token, head) row's splits combined, dimensions
 * [d0, d1) of it: the largest split maximum (and @sink's logit, if any),
 * each split's weight exp(max_sp - m), the sum of the weighted sums (with
 * the sink's exp(sink - m) first), o = the weighted outputs / that sum.
 * Every chunk that holds a piece of a row recomputes the weights and the
 * sum in the same order, so the row's bits do not depend on the cut.
 */
void cb_att_merge(const struct cb_engine *e, const float *part, int nsplit, int w,
		  const float *sink, float *o, int d0, int d1)
{
	int st = w + 2, sp = sink ? 0 : 1, i;
	float m = sink ? *sink : part[0], l;

	for (; sp < nsplit; sp++)
		m = part[sp * st] > m ? part[sp * st] : m;
	l = sink ? cb_expf(*sink - m) : 0.0f;
	for (i = d0; i < d1; i++)
		o[i] = 0.0f;
	for (sp = 0; sp < nsplit; sp++) {
		const float *ps = part + sp * st;
		float wt = cb_expf(ps[0] - m);

		l += wt * ps[1];
		e->ops->axpy_f32(o + d0, wt, ps + 2 + d0, d1 - d0);
	}
	l = 1.0f / l;
	for (i = d0; i < d1; i++)
		o[i] *= l;
}

/*
 * Combine the splits of tokens whose context needed more than one: rows
 * are (token, head) pairs, pieces the head's dimensions, so a long context
 * cuts a head's dimensions across chunks (cb_att_merge()).
 */
static void merge_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const float *sinks = layer_sinks(e);
	int nh = (int)e->cfg.n_heads, hd = e->hd, S = e->att_split;
	int r, r1, d0, d1;

	cb_plan_chunk(&e->pl, c, &r, &r1, &d0, &d1);
	for (; r < r1; r++) {
		int t = r / nh, h = r % nh;
		int nsplit = ((int)e->b->pos[t] + 1 - first_pos(e, t) + S - 1) / S;

		if (nsplit == 1)
			continue;
		cb_att_merge(e, e->att_part + (cb_size)r * e->att_nsplit * (hd + 2), nsplit, hd,
			     sinks ? &sinks[h] : CB_NULL,
			     e->att.f + (cb_size)t * e->qdim + (cb_size)h * hd, d0, d1);
	}
}

void cb_attn_rope_cache(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	int grp = (int)(cf->n_heads / cf->n_kv_heads);

	/* the whole-projection norm needs each row's rms before any head is normed */
	if (cf->qk_norm == CB_QK_NORM_FULL)
		cb_run_rows(e, ex, qk_inv_chunk, e->n,
			    (cb_u64)(e->qdim + e->kvdim) * CB_PS_NORM / 2);
	/* chunks of tokens, or of kv heads (each with its query heads) of a token */
	cb_run_planned(e, ex, rope_cache_chunk, e->n, (int)cf->n_kv_heads, 0,
		       (cb_u64)(grp + 2) * e->hd * CB_PS_ROPE);
}

void cb_attention(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	int nh = (int)cf->n_heads, grp = nh / (int)cf->n_kv_heads, S = e->att_split;
	int t, longest = 1;
	cb_u64 head_ps;

	/* splits of the longest visible range in this batch */
	for (t = 0; t < e->n; t++)
		longest = CB_MAX(longest, (int)e->b->pos[t] + 1 - first_pos(e, t));
	e->att_nsplit = (longest + S - 1) / S;
	/* heads per chunk: as many as one split of the longest context allows */
	head_ps = (cb_u64)CB_MIN(longest, S) * ((cb_u64)e->hd * CB_PS_ATT + CB_PS_EXP);
	e->att_hb = (int)CB_MAX((cb_u64)1, CB_MIN((cb_u64)grp, e->chunk_ps / head_ps));

	/* chunks of (token, kv head, block of heads, split) */
	cb_run_phase(e, ex, attn_chunk, e->n * (int)cf->n_kv_heads *
		     ((grp + e->att_hb - 1) / e->att_hb) * e->att_nsplit);
	if (e->att_nsplit > 1)
		cb_run_planned(e, ex, merge_chunk, e->n * nh, e->hd,
			       (cb_u64)e->att_nsplit * CB_PS_EXP,
			       (cb_u64)e->att_nsplit * CB_PS_AXPY);
	cb_att_quantize(e, ex);
}
