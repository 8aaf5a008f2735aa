// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_forward.c - the forward pass over one batch, for every architecture.
 *
 * One code path, parameterised by struct cb_model_config: read
 * cb_forward_run() top to bottom as the model.  Each step is a "phase": a
 * parallel_for over chunks with disjoint outputs (so the result does not
 * depend on which thread ran what), followed by a yield.  The calling thread
 * itself does only integer bookkeeping (validation, grouping tokens by
 * expert).
 *
 * Batch layout: token t of the batch owns row t of every per-token buffer.
 * Routed experts see the batch grouped by expert ("slots"): slot s holds one
 * (token, expert) pair, slots of one expert are contiguous and in token
 * order, so each expert's weights are streamed once for all its tokens.
 *
 * A host with an expert executor (ex->experts_submit) is offered each
 * selected expert as a struct cb_expert_task over those grouped rows; the
 * CPU computes the experts it leaves, then those it gives back, and the
 * combination is the same whoever computed a row.
 */
#include "cb_engine_priv.h"
#include "cb_math.h"

#define ATT_TILE 32		/* positions per score tile (on the stack) */
#define ATT_HEADS 8		/* query heads scored together: 1 KiB of stack */
#define ROW_ALIGN 16		/* rows per chunk rounded to this */
#define TOK_BLOCK 32		/* most tokens per gemm chunk */

/* ---- primitives ------------------------------------------------------- */

/* out = x / rms(x) * w  (HF LlamaRMSNorm, in f32) */
void cb_rmsnorm(float *out, const float *x, const float *w, int n, float eps)
{
	float ss = 0.0f, inv;
	int i;

	for (i = 0; i < n; i++)
		ss += x[i] * x[i];
	inv = 1.0f / cb_sqrtf(ss / (float)n + eps);
	for (i = 0; i < n; i++)
		out[i] = w[i] * (x[i] * inv);
}

/* weight types whose gemm reads q8_0 activations */
static int is_block(cb_u32 dt)
{
	return dt == CB_DT_Q8_0 || dt == CB_DT_Q4_0;
}

/* ---- phases ----------------------------------------------------------- */

/* Number of token-loop chunks: blocks of e->tblk tokens. */
static int tok_chunks(struct cb_engine *e, int n)
{
	return (n + e->tblk - 1) / e->tblk;
}

static int run_phase(struct cb_engine *e, struct cb_exec *ex,
		     void (*fn)(void *, int), int nchunks)
{
	if (nchunks > 0)
		ex->parallel_for(ex, fn, e, nchunks);
	return ex->yield ? ex->yield(ex) : 0;
}

/* Start a list of gemm jobs for the next phase. */
static void jobs_reset(struct cb_engine *e)
{
	e->njobs = 0;
	e->nchunks = 0;
}

/*
 * Queue out = W x for M activation rows.  f32 activations (@xf, stride
 * @xfs bytes) feed f32/f16/bf16 weights, q8_0 ones (@xq, @xqs) feed the
 * block types.  Chunks: ROW_ALIGN-multiple row blocks of about
 * CB_CHUNK_TARGET_FLOPS multiply-adds, times blocks of TOK_BLOCK tokens.
 */
static void job_add(struct cb_engine *e, const struct cb_tensor *t, float *out,
		    cb_size ldo, const float *xf, cb_size xfs, const void *xq,
		    cb_size xqs, int M, const float *bias)
{
	struct cb_gemm_job *j;
	cb_u64 per_row;
	int rblk;

	if (M <= 0)
		return;
	j = &e->jobs[e->njobs++];
	j->out = out;
	j->ldo = ldo;
	j->w = t->data;
	j->dtype = t->dtype;
	j->w_row_bytes = cb_dtype_row_bytes(t->dtype, t->cols);
	if (is_block(t->dtype)) {
		j->act = xq;
		j->act_stride = xqs;
	} else {
		j->act = xf;
		j->act_stride = xfs;
	}
	j->bias = bias;
	j->M = M;
	j->nrows = (int)t->rows;
	j->k = (int)t->cols;
	j->mblk = CB_MIN(M, TOK_BLOCK);
	per_row = (cb_u64)j->k * (cb_u64)j->mblk;
	rblk = (int)CB_MIN((cb_u64)j->nrows, CB_MAX((cb_u64)1,
				CB_CHUNK_TARGET_FLOPS / per_row));
	if (rblk < j->nrows)
		rblk = CB_MIN(j->nrows, CB_ALIGN(rblk, ROW_ALIGN));
	j->rblk = rblk;
	j->nrb = (j->nrows + rblk - 1) / rblk;
	j->nmb = (M + j->mblk - 1) / j->mblk;
	j->nchunks = j->nrb * j->nmb;
	j->first = e->nchunks;
	e->nchunks += j->nchunks;
}

static void gemm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_gemm_job *j;
	int lo = 0, hi = e->njobs - 1, rb, mb, r0, m0, nr, nm, m, r;

	/* binary search for the job holding chunk c */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (e->jobs[mid].first <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	j = &e->jobs[lo];
	c -= j->first;
	/* token blocks inner: consecutive chunks share weight rows (cache) */
	mb = c % j->nmb;
	rb = c / j->nmb;
	r0 = rb * j->rblk;
	m0 = mb * j->mblk;
	nr = CB_MIN(j->rblk, j->nrows - r0);
	nm = CB_MIN(j->mblk, j->M - m0);
	e->ops->gemm[j->dtype](j->out + (cb_size)m0 * j->ldo + r0, j->ldo,
			       (const char *)j->w + (cb_size)r0 * j->w_row_bytes,
			       j->w_row_bytes,
			       (const char *)j->act + (cb_size)m0 * j->act_stride,
			       j->act_stride, nm, nr, j->k);
	if (j->bias)
		for (m = m0; m < m0 + nm; m++)
			for (r = r0; r < r0 + nr; r++)
				j->out[(cb_size)m * j->ldo + r] += j->bias[r];
}

static int run_jobs(struct cb_engine *e, struct cb_exec *ex)
{
	return run_phase(e, ex, gemm_chunk, e->nchunks);
}

/* Quantize row to q8_0 when its length allows (else the q8 copy is unused). */
static void quant_row(struct cb_engine *e, void *dst, const float *x, int n)
{
	if (n % CB_QK == 0)
		e->ops->quantize_q8_0(dst, x, n);
}

/* embedding lookup + RoPE angles of each token's position */
static void embed_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_batch *b = e->b;
	const struct cb_tensor *emb = &e->w->embed;
	cb_size rb = cb_dtype_row_bytes(emb->dtype, emb->cols);
	float theta = cb_f32_from_bits(e->cfg.rope_theta_bits);
	int half = e->hd / 2, t, i;
	int t1 = CB_MIN((int)b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		float *cs = e->rope + (cb_size)t * e->hd;
		float pos = (float)b->pos[t];

		cb_dequantize_row(emb->dtype, e->x + (cb_size)t * e->H,
				  (const char *)emb->data + (cb_size)b->tokens[t] * rb,
				  e->H);
		/* HF: inv_freq = 1 / theta^(2i/d), angle = pos * inv_freq (f32) */
		for (i = 0; i < half; i++) {
			float inv = 1.0f / cb_powf(theta, (float)(2 * i) / (float)e->hd);
			float angle = pos * inv;

			cb_sincosf(angle, &cs[half + i], &cs[i]);
		}
	}
}

/* x -> xn = rmsnorm(x), plus its q8_0 copy; with @add, x += tmp first */
static void norm_rows(struct cb_engine *e, int c, const struct cb_tensor *w, int add)
{
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, i, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		float *x = e->x + (cb_size)t * e->H;

		if (add)
			for (i = 0; i < e->H; i++)
				x[i] += e->tmp[(cb_size)t * e->H + i];
		cb_rmsnorm(e->xn + (cb_size)t * e->H, x, w->data, e->H, eps);
		quant_row(e, (char *)e->xq + t * e->qrow_h, e->xn + (cb_size)t * e->H, e->H);
	}
}

static void attn_norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	norm_rows(e, c, &e->lw->attn_norm, 0);
}

static void ffn_norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;

	norm_rows(e, c, &e->lw->ffn_norm, 1);
}

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
static void qk_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_layer_weights *L = e->lw;
	float eps = cb_f32_from_bits(cf->rms_eps_bits);
	float lim = cb_f32_from_bits(cf->clip_qkv_bits);
	int t, h, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
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
			e->kc[cache + i] = k[i];
			e->vc[cache + i] = v[i];
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
 * unnormalised output) for attn_merge_chunk.  Splitting bounds a chunk at
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
				o[g] = e->att + (cb_size)t * e->qdim + (cb_size)(h0 + g) * hd;
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
						e->kc + base + (cb_size)p0 * e->kvdim, kvrow,
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
					e->ops->axpy_f32(o[g], w, e->vc + base +
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
static void attn_merge_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int nh = (int)e->cfg.n_heads, hd = e->hd, t, h, sp, i;
	int t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		int nsplit = ((int)e->b->pos[t] + CB_ATT_SPLIT) / CB_ATT_SPLIT;

		if (nsplit == 1)
			continue;
		for (h = 0; h < nh; h++) {
			const float *part = e->att_part +
				((cb_size)t * nh + h) * e->att_nsplit * (hd + 2);
			float *o = e->att + (cb_size)t * e->qdim + (cb_size)h * hd;
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

static void att_quant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++)
		quant_row(e, (char *)e->attq + t * e->qrow_q,
			  e->att + (cb_size)t * e->qdim, e->qdim);
}

/* after router / shared / dense gate+up: routing, SwiGLU of the MLP rows */
static void route_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_batch *b = e->b;
	int t, i, j, t1 = CB_MIN((int)b->n_tokens, (c + 1) * e->tblk);
	int has_mlp = !e->is_moe || e->cfg.shared_ffn;
	int ffn = e->is_moe ? (int)e->cfg.shared_ffn : (int)e->cfg.dense_ffn;

	for (t = c * e->tblk; t < t1; t++) {
		if (e->is_moe) {
			cb_u32 *id = e->topid + (cb_size)t * e->K;
			float *w = e->topw + (cb_size)t * e->K;

			cb_route_isa(e->ops, e->rl + (cb_size)t * e->E, e->E, e->K,
				     e->cfg.norm_topk_prob, id, w);
			if (b->route_trace) {
				cb_u32 *tr = b->route_trace +
					((cb_size)t * e->cfg.n_layers + e->layer) * e->K * 2;

				for (j = 0; j < e->K; j++) {
					tr[2 * j] = id[j];
					tr[2 * j + 1] = cb_f32_bits(w[j]);
				}
			}
		} else if (b->route_trace && e->K) {
			cb_u32 *tr = b->route_trace +
				((cb_size)t * e->cfg.n_layers + e->layer) * e->K * 2;

			for (j = 0; j < e->K; j++) {
				tr[2 * j] = CB_TRACE_NONE;
				tr[2 * j + 1] = 0;
			}
		}
		if (has_mlp) {
			float *g = e->mg + (cb_size)t * e->F2;
			const float *u = e->mu + (cb_size)t * e->F2;

			for (i = 0; i < ffn; i++)
				g[i] = cb_siluf(g[i]) * u[i];
			quant_row(e, (char *)e->mq + t * e->qrow_f2, g, ffn);
		}
	}
}

/* copy each slot's token row (f32 and q8_0) into the grouped buffers */
static void gather_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int s, i, s1 = CB_MIN(e->nslots, (c + 1) * e->tblk);

	for (s = c * e->tblk; s < s1; s++) {
		cb_size t = e->slot_tok[s];
		const float *src = e->xn + t * e->H;
		float *dst = e->xg + (cb_size)s * e->H;
		const char *qs = (const char *)e->xq + t * e->qrow_h;
		char *qd = (char *)e->xgq + (cb_size)s * e->qrow_h;

		if (e->gather_f32)
			for (i = 0; i < e->H; i++)
				dst[i] = src[i];
		if (e->gather_q8)
			for (i = 0; i < (int)e->qrow_h; i++)
				qd[i] = qs[i];
	}
}

/* SwiGLU in place on gg, for the slots of the experts the CPU runs now */
static void expert_act_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int s, i, s1 = CB_MIN(e->nslots, (c + 1) * e->tblk);

	for (s = c * e->tblk; s < s1; s++) {
		float *g = e->gg + (cb_size)s * e->F;
		const float *u = e->gu + (cb_size)s * e->F;

		/* other slots: a host's expert (stale gg) or done in round 1 */
		if (!e->run_all && !e->slot_run[s])
			continue;
		for (i = 0; i < e->F; i++)
			g[i] = cb_siluf(g[i]) * u[i];
		quant_row(e, (char *)e->gq + s * e->qrow_f, g, e->F);
	}
}

/*
 * x += sum over the token's experts, in rank order, of weight * expert out,
 * plus the (gated) shared expert; or x += dense MLP out.  The order of the
 * additions is fixed by the routing alone, whatever the batch and threads.
 */
static void combine_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, i, j, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		float *x = e->x + (cb_size)t * e->H;
		float *acc = e->tmp + (cb_size)t * e->H;
		const float *mo = e->mo + (cb_size)t * e->H;

		if (!e->is_moe) {
			for (i = 0; i < e->H; i++)
				x[i] += mo[i];
			continue;
		}
		for (i = 0; i < e->H; i++)
			acc[i] = 0.0f;
		for (j = 0; j < e->K; j++) {
			cb_size s = e->slot_of[(cb_size)t * e->K + j];

			e->ops->axpy_f32(acc, e->topw[(cb_size)t * e->K + j],
					 e->yg + s * e->H, e->H);
		}
		if (e->cfg.shared_ffn) {
			float g = e->cfg.shared_gate ? cb_sigmoidf(e->sgv[t]) : 1.0f;

			for (i = 0; i < e->H; i++)
				acc[i] += g * mo[i];
		}
		for (i = 0; i < e->H; i++)
			x[i] += acc[i];
	}
}

/* final norm of the tokens whose logits are wanted, compacted */
static void final_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int t, t1 = CB_MIN((int)e->b->n_tokens, (c + 1) * e->tblk);

	for (t = c * e->tblk; t < t1; t++) {
		cb_size j = e->out_idx[t];

		if (j == 0xffffffffu)
			continue;
		cb_rmsnorm(e->xn + j * e->H, e->x + (cb_size)t * e->H,
			   e->w->final_norm.data, e->H, eps);
		quant_row(e, (char *)e->xq + j * e->qrow_h, e->xn + j * e->H, e->H);
	}
}

/* ---- bookkeeping (integers only) -------------------------------------- */

static int check_batch(struct cb_engine *e, const struct cb_batch *b)
{
	cb_u32 t, s;

	if (!b || b->flags || !b->n_tokens || b->n_tokens > e->p.max_batch_tokens ||
	    !b->tokens || !b->seq || !b->pos || !b->logits)
		return -CB_EINVAL;
	for (s = 0; s < e->p.n_seqs; s++)
		e->seq_tmp[s] = 0xffffffffu;	/* not seen in this batch */
	for (t = 0; t < b->n_tokens; t++) {
		s = b->seq[t];
		if (s >= e->p.n_seqs || b->tokens[t] >= e->cfg.vocab_size ||
		    b->pos[t] >= e->p.max_context)
			return -CB_EINVAL;
		if (e->seq_tmp[s] == 0xffffffffu ? b->pos[t] > e->seq_len[s]
						 : b->pos[t] != e->seq_tmp[s])
			return -CB_EINVAL;
		e->seq_tmp[s] = b->pos[t] + 1;
	}
	return 0;
}

/* Group (token, rank) pairs by expert: counts, offsets, slots. */
static void group_by_expert(struct cb_engine *e)
{
	int n = (int)e->b->n_tokens, t, j, x;

	for (x = 0; x < e->E; x++)
		e->exp_cnt[x] = 0;
	for (t = 0; t < n * e->K; t++)
		e->exp_cnt[e->topid[t]]++;
	e->exp_off[0] = 0;
	for (x = 0; x < e->E; x++) {
		e->exp_off[x + 1] = e->exp_off[x] + e->exp_cnt[x];
		e->exp_cur[x] = e->exp_off[x];
	}
	for (t = 0; t < n; t++)
		for (j = 0; j < e->K; j++) {
			cb_u32 s = e->exp_cur[e->topid[t * e->K + j]]++;

			e->slot_of[t * e->K + j] = s;
			e->slot_tok[s] = (cb_u32)t;
		}
	e->nslots = n * e->K;
}

/*
 * Queue gate and up of each expert the CPU runs in this round, once for all
 * its tokens: gg, gu = Wg xg, Wu xg.
 */
static void expert_gate_up_jobs(struct cb_engine *e)
{
	const struct cb_layer_weights *L = e->lw;
	cb_size fs = (cb_size)e->H * sizeof(float);
	int x;

	for (x = 0; x < e->E; x++) {
		cb_size o = e->exp_off[x];
		int m = (int)e->exp_cnt[x];

		if (!e->run_all && !e->exp_run[x])
			continue;
		job_add(e, &L->experts[x].gate, e->gg + o * e->F, e->F,
			e->xg + o * e->H, fs,
			(char *)e->xgq + o * e->qrow_h, e->qrow_h, m, CB_NULL);
		job_add(e, &L->experts[x].up, e->gu + o * e->F, e->F,
			e->xg + o * e->H, fs,
			(char *)e->xgq + o * e->qrow_h, e->qrow_h, m, CB_NULL);
	}
}

/* SwiGLU of this round's slots, then their experts' down: yg = Wd gg */
static int expert_act_down(struct cb_engine *e, struct cb_exec *ex, int slot_chunks)
{
	const struct cb_layer_weights *L = e->lw;
	int x, r;

	/* every slot chunk when unfiltered; none when the host took them all */
	r = run_phase(e, ex, expert_act_chunk,
		      e->run_all || e->nrun ? slot_chunks : 0);
	if (r)
		return r;
	jobs_reset(e);
	for (x = 0; x < e->E; x++) {
		cb_size o = e->exp_off[x];

		if (!e->run_all && !e->exp_run[x])
			continue;
		job_add(e, &L->experts[x].down, e->yg + o * e->H, e->H,
			e->gg + o * e->F, (cb_size)e->F * sizeof(float),
			(char *)e->gq + o * e->qrow_f, e->qrow_f,
			(int)e->exp_cnt[x], CB_NULL);
	}
	return run_jobs(e, ex);
}

/* slot_run from exp_run: act_chunk works per slot, not per expert */
static void mark_slots(struct cb_engine *e)
{
	cb_u32 s;
	int x;

	e->nrun = 0;
	for (x = 0; x < e->E; x++) {
		for (s = e->exp_off[x]; s < e->exp_off[x + 1]; s++)
			e->slot_run[s] = e->exp_run[x];
		e->nrun += e->exp_run[x];
	}
}

/*
 * Offer every selected expert of this layer to the host, in expert order,
 * as a task over its grouped rows (xg, yg, slot_tok from exp_off).  The
 * engine keeps its own bookkeeping and reads back only each task's state,
 * so a host that scribbles on other fields cannot mislead it.
 * Return: experts_submit's value; on 0, exp_run holds the CPU's experts.
 */
static int experts_offer(struct cb_engine *e, struct cb_exec *ex)
{
	int x, i = 0, r;

	for (x = 0; x < e->E; x++) {
		struct cb_expert_task *tk = &e->tasks[i];
		cb_size o = e->exp_off[x];

		e->exp_run[x] = 0;
		if (!e->exp_cnt[x])
			continue;
		tk->layer = (cb_u32)e->layer;
		tk->expert = (cb_u32)x;
		tk->n_tokens = e->exp_cnt[x];
		tk->state = CB_TASK_CPU;
		tk->w = &e->lw->experts[x];
		tk->x = e->xg + o * e->H;
		tk->y = e->yg + o * e->H;
		tk->tokens = e->slot_tok + o;
		i++;
	}
	e->ntasks = i;
	e->ntaken = 0;
	r = ex->experts_submit(ex, e->tasks, e->ntasks);
	if (r)
		return r;	/* the host holds nothing after a failed submit */
	for (x = 0, i = 0; x < e->E; x++) {
		if (!e->exp_cnt[x])
			continue;
		/* anything but CPU (TAKEN, or already DONE) is the host's now */
		e->exp_run[x] = e->tasks[i++].state == CB_TASK_CPU;
		e->ntaken += !e->exp_run[x];
	}
	mark_slots(e);
	return 0;
}

/*
 * Wait for the host's experts.  Those not CB_TASK_DONE afterwards (given
 * back, or a host that broke the protocol) become the CPU's second round:
 * exp_run then marks exactly them, and nrun counts them.
 * Return: experts_wait's value.
 */
static int experts_collect(struct cb_engine *e, struct cb_exec *ex)
{
	int x, i = 0, r;

	e->ntaken = 0;
	r = ex->experts_wait(ex, e->tasks, e->ntasks);
	if (r)
		return r;
	for (x = 0; x < e->E; x++) {
		if (!e->exp_cnt[x])
			continue;
		e->exp_run[x] = !e->exp_run[x] && e->tasks[i].state != CB_TASK_DONE;
		i++;
	}
	mark_slots(e);
	return 0;
}

/*
 * An abort (@r) while the host holds tasks: their x and y live in our
 * scratch, so let the host finish or drop them before returning, whatever
 * the wait says; the abort's value wins.
 */
static int experts_abort(struct cb_engine *e, struct cb_exec *ex, int r)
{
	if (e->ntaken) {
		e->ntaken = 0;
		ex->experts_wait(ex, e->tasks, e->ntasks);
	}
	return r;
}

/* ---- the model -------------------------------------------------------- */

int cb_forward_run(struct cb_engine *e, struct cb_exec *ex,
		   const struct cb_batch *b)
{
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_model_weights *W = e->w;
	int n, l, x, tc, s, r, slot_chunks = 0;
	cb_u32 t, n_out = 0;
	int H = e->H;
	cb_size fs = (cb_size)H * sizeof(float);

	if (!ex || !ex->parallel_for || (ex->experts_submit && !ex->experts_wait))
		return -CB_EINVAL;
	r = check_batch(e, b);
	if (r)
		return r;
	e->b = b;
	e->ntaken = 0;
	/* without an expert executor every expert runs here, unfiltered */
	e->run_all = !ex->experts_submit;
	e->nrun = 0;
	n = (int)b->n_tokens;
	/* splits of the longest context in this batch */
	e->att_nsplit = 1;
	for (t = 0; t < b->n_tokens; t++)
		e->att_nsplit = CB_MAX(e->att_nsplit,
				       (int)(b->pos[t] + CB_ATT_SPLIT) / CB_ATT_SPLIT);
	/* token-loop chunks: ~16K elements of per-token work each */
	e->tblk = (int)CB_MAX(1, 16384 / (H + e->qdim + e->F2 + 1));
	tc = tok_chunks(e, n);

	/* embedding: x[t] = embed[token]; RoPE angles per position */
	r = run_phase(e, ex, embed_chunk, tc);
	if (r)
		return r;

	for (l = 0; l < (int)cf->n_layers; l++) {
		const struct cb_layer_weights *L = &W->layers[l];

		e->lw = L;
		e->layer = l;
		e->is_moe = cb_layer_is_moe(cf, l);

		/* attention norm: xn = rmsnorm(x) */
		r = run_phase(e, ex, attn_norm_chunk, tc);
		if (r)
			return r;

		/* q, k, v = W xn (+ bias) */
		jobs_reset(e);
		job_add(e, &L->wq, e->q, e->qdim, e->xn, fs, e->xq, e->qrow_h, n,
			cf->qkv_bias ? L->bq.data : CB_NULL);
		job_add(e, &L->wk, e->k, e->kvdim, e->xn, fs, e->xq, e->qrow_h, n,
			cf->qkv_bias ? L->bk.data : CB_NULL);
		job_add(e, &L->wv, e->v, e->kvdim, e->xn, fs, e->xq, e->qrow_h, n,
			cf->qkv_bias ? L->bv.data : CB_NULL);
		r = run_jobs(e, ex);
		if (r)
			return r;

		/* q/k norm, RoPE, K/V into the cache */
		r = run_phase(e, ex, qk_chunk, tc);
		if (r)
			return r;

		/* attention over the cache: chunks of (token, kv head, split) */
		r = run_phase(e, ex, attn_chunk, n * (int)cf->n_kv_heads * e->att_nsplit);
		if (r)
			return r;
		if (e->att_nsplit > 1) {
			r = run_phase(e, ex, attn_merge_chunk, tc);
			if (r)
				return r;
		}
		r = run_phase(e, ex, att_quant_chunk, tc);
		if (r)
			return r;

		/* output projection: tmp = Wo att */
		jobs_reset(e);
		job_add(e, &L->wo, e->tmp, H, e->att, (cb_size)e->qdim * sizeof(float),
			e->attq, e->qrow_q, n, CB_NULL);
		r = run_jobs(e, ex);
		if (r)
			return r;

		/* residual, then FFN norm: x += tmp; xn = rmsnorm(x) */
		r = run_phase(e, ex, ffn_norm_chunk, tc);
		if (r)
			return r;

		/* router logits, shared expert / dense MLP gate and up */
		jobs_reset(e);
		if (e->is_moe) {
			job_add(e, &L->router, e->rl, e->E, e->xn, fs, e->xq,
				e->qrow_h, n, CB_NULL);
			if (cf->shared_ffn) {
				job_add(e, &L->shared_gate_proj, e->mg, e->F2, e->xn, fs,
					e->xq, e->qrow_h, n, CB_NULL);
				job_add(e, &L->shared_up_proj, e->mu, e->F2, e->xn, fs,
					e->xq, e->qrow_h, n, CB_NULL);
				if (cf->shared_gate)
					job_add(e, &L->shared_expert_gate, e->sgv, 1,
						e->xn, fs, e->xq, e->qrow_h, n, CB_NULL);
			}
		} else {
			job_add(e, &L->mlp_gate, e->mg, e->F2, e->xn, fs, e->xq,
				e->qrow_h, n, CB_NULL);
			job_add(e, &L->mlp_up, e->mu, e->F2, e->xn, fs, e->xq,
				e->qrow_h, n, CB_NULL);
		}
		r = run_jobs(e, ex);
		if (r)
			return r;

		/* routing (softmax, top-k) and SwiGLU of the shared/dense MLP */
		r = run_phase(e, ex, route_chunk, tc);
		if (r)
			return r;

		jobs_reset(e);
		if (e->is_moe) {
			/* group the batch by expert, gather the inputs */
			group_by_expert(e);
			slot_chunks = (e->nslots + e->tblk - 1) / e->tblk;
			/* copy only the activation forms the experts' dtypes read */
			e->gather_f32 = 0;
			e->gather_q8 = 0;
			for (x = 0; x < e->E; x++) {
				cb_u32 dg = L->experts[x].gate.dtype, du = L->experts[x].up.dtype;

				if (!e->exp_cnt[x])
					continue;
				e->gather_q8 |= is_block(dg) || is_block(du);
				e->gather_f32 |= !is_block(dg) || !is_block(du);
			}
			/* tasks carry f32 rows; q8_0 ones stay for a CPU fallback */
			e->gather_f32 |= !e->run_all;
			r = run_phase(e, ex, gather_chunk, slot_chunks);
			if (r)
				return r;
			/* offer the experts to the host; the CPU runs what it leaves */
			if (!e->run_all) {
				r = experts_offer(e, ex);
				if (r)
					return r;
			}
			/* each CPU expert's gate and up, once for all its tokens */
			expert_gate_up_jobs(e);
		}
		/* shared expert / dense MLP down: mo = Wd swiglu */
		if (!e->is_moe || cf->shared_ffn)
			job_add(e, e->is_moe ? &L->shared_down_proj : &L->mlp_down,
				e->mo, H, e->mg, (cb_size)e->F2 * sizeof(float), e->mq,
				e->qrow_f2, n, CB_NULL);
		r = run_jobs(e, ex);
		if (r)
			return experts_abort(e, ex, r);

		if (e->is_moe) {
			/* SwiGLU per slot, then each expert's down projection */
			r = expert_act_down(e, ex, slot_chunks);
			if (r)
				return experts_abort(e, ex, r);
			/* the host's experts; a second CPU round for those it gave back */
			if (e->ntaken) {
				r = experts_collect(e, ex);
				if (r)
					return r;
				if (e->nrun) {
					jobs_reset(e);
					expert_gate_up_jobs(e);
					r = run_jobs(e, ex);
					if (r)
						return r;
					r = expert_act_down(e, ex, slot_chunks);
					if (r)
						return r;
				}
			}
		}

		/* weighted scatter-add of the experts into the residual */
		r = run_phase(e, ex, combine_chunk, tc);
		if (r)
			return r;
	}

	/* final norm of the wanted rows, then logits = lm_head xn */
	for (t = 0; t < b->n_tokens; t++)
		e->out_idx[t] = !b->logits_mask || b->logits_mask[t] ? n_out++ : 0xffffffffu;
	e->n_out = (int)n_out;
	r = run_phase(e, ex, final_chunk, tc);
	if (r)
		return r;
	jobs_reset(e);
	job_add(e, cf->tied_embeddings ? &W->embed : &W->lm_head, b->logits,
		cf->vocab_size, e->xn, fs, e->xq, e->qrow_h, (int)n_out, CB_NULL);
	r = run_jobs(e, ex);
	if (r)
		return r;

	/* commit the new sequence lengths */
	for (s = 0; s < (int)e->p.n_seqs; s++)
		if (e->seq_tmp[s] != 0xffffffffu)
			e->seq_len[s] = e->seq_tmp[s];
	return 0;
}
