// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_attn_oss.c - GPT-OSS attention: causal GQA whose softmax denominator
 * also holds a learned logit per query head (the "sink"), and which on
 * the sliding layers attends only the last sliding_window positions.
 *
 * modeling_gpt_oss.py (eager_attention_forward) appends sinks[h] to each
 * row of scores, subtracts the row maximum, softmaxes and drops the sink
 * column: p_j = exp(s_j - m) / (sum_i exp(s_i - m) + exp(sink - m)), m the
 * maximum over the scores and the sink.  Its sliding mask keeps positions
 * j with pos - window < j <= pos.
 *
 * The structure is cb_attention.c's: chunks of (token, kv head, block of
 * heads, split of positions), an online softmax per split, a merge of the
 * splits; here a split starts at the token's first visible position, and
 * the sink joins when the result is finalised (after one split, or in the
 * merge).  A sliding layer reads its ring (cb_kv_at()): position p at row
 * p % rows.  Split and tile points depend on the position alone (a tile
 * that crosses the ring's end is scored in two products), so neither
 * batching nor the ring's size changes a bit.
 */
#include "cb_engine_priv.h"
#include "cb_gpt_oss.h"
#include "cb_math.h"

#define ATT_TILE 32		/* positions per score tile (on the stack) */
#define ATT_HEADS 8		/* query heads scored together */

/* The first position token t sees in this layer. */
static int first_pos(const struct cb_engine *e, int t)
{
	cb_u32 pos = e->b->pos[t], w = e->cfg.oss.sliding_window;

	if (!cb_gpt_oss_sliding(&e->cfg, (cb_u32)e->layer) || pos < w)
		return 0;
	return (int)(pos - w + 1);
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

static void attn_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const float *sinks = e->lw->oss.sinks.data;
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
			int n1 = CB_MIN(n, rows - row);	/* the tile's rows before the wrap */
			const float *qt = e->q + (cb_size)t * e->qdim + (cb_size)h0 * hd;

			/*
			 * The tile is the same whatever the ring's size (its
			 * scores in two products when it wraps, each score alone
			 * the same), so the softmax sums alike: the same bits.
			 */
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
			 * o_g += sum_i s[g][i] v_(p0+i) in position order, the
			 * rows before the ring's end, then those from its start
			 */
			e->ops->pv_f32(o[0], ldo, &s[0][0], ATT_TILE,
				       e->v_cache + base + (cb_size)row * e->kvdim, e->kvdim,
				       ng, n1, hd);
			if (n1 < n)
				e->ops->pv_f32(o[0], ldo, &s[0][n1], ATT_TILE, e->v_cache + base,
					       e->kvdim, ng, n - n1, hd);
		}
		for (g = 0; g < ng; g++) {
			if (nsplit == 1) {
				finish_with_sink(o[g], hd, m[g], l[g], sinks[h0 + g]);
			} else {
				o[g][-2] = m[g];
				o[g][-1] = l[g];
			}
		}
	}
}

/*
 * Combine the splits, with the sink: rows are (token, head) pairs, pieces
 * the head's dimensions (each chunk recomputes the weights and the sum in
 * the same order: the same bits).
 */
static void merge_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const float *sinks = e->lw->oss.sinks.data;
	int nh = (int)e->cfg.n_heads, hd = e->hd, S = e->att_split;
	int r, r1, d0, d1;

	cb_plan_chunk(&e->pl, c, &r, &r1, &d0, &d1);
	for (; r < r1; r++) {
		int t = r / nh, h = r % nh;
		int nsplit = ((int)e->b->pos[t] + 1 - first_pos(e, t) + S - 1) / S;

		if (nsplit == 1)
			continue;
		cb_att_merge(e, e->att_part + (cb_size)r * e->att_nsplit * (hd + 2), nsplit, hd,
			     &sinks[h], e->att.f + (cb_size)t * e->qdim + (cb_size)h * hd, d0, d1);
	}
}

/* att rows into the forms Wo reads, by tokens or pieces of columns */
static void att_quant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1, p0, p1;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	for (; t < t1; t++)
		cb_acts_quantize_cols(e, &e->att, t, p0 * CB_ACT_PIECE,
				      CB_MIN(e->qdim, p1 * CB_ACT_PIECE));
}

void cb_attention_oss(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	int nh = (int)cf->n_heads, grp = nh / (int)cf->n_kv_heads, S = e->att_split;
	int t, longest = 1;
	cb_u64 head_ps;

	/* splits of the longest visible range in this batch */
	for (t = 0; t < e->n; t++)
		longest = CB_MAX(longest, (int)e->b->pos[t] + 1 - first_pos(e, t));
	e->att_nsplit = (longest + S - 1) / S;
	head_ps = (cb_u64)CB_MIN(longest, S) * ((cb_u64)e->hd * CB_PS_ATT + CB_PS_EXP);
	e->att_hb = (int)CB_MAX((cb_u64)1, CB_MIN((cb_u64)grp, e->chunk_ps / head_ps));

	cb_run_phase(e, ex, attn_chunk, e->n * (int)cf->n_kv_heads *
		     ((grp + e->att_hb - 1) / e->att_hb) * e->att_nsplit);
	if (e->att_nsplit > 1)
		cb_run_planned(e, ex, merge_chunk, e->n * nh, e->hd,
			       (cb_u64)e->att_nsplit * CB_PS_EXP,
			       (cb_u64)e->att_nsplit * CB_PS_AXPY);
	if (cb_acts_nforms(&e->att))
		cb_run_planned(e, ex, att_quant_chunk, e->n, cb_col_pieces(e->qdim), 0,
			       (cb_u64)CB_ACT_PIECE * CB_PS_QUANT * cb_acts_nforms(&e->att));
}
