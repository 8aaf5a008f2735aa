// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_delta.c - a Gated DeltaNet layer (Qwen3.5/3.6-MoE, Qwen3-Next), and
 * the gated full attention of the same models.
 *
 * Written from Hugging Face's modeling_qwen3_5_moe.py (Qwen3_5MoeGatedDeltaNet,
 * torch_recurrent_gated_delta_rule, Qwen3_5MoeRMSNormGated,
 * Qwen3_5MoeAttention's gate).  The steps, each a phase:
 *
 *   qkv, z, b, a = the layer's projections of x_norm
 *   conv     each channel of qkv: SiLU of its causal convolution over the
 *            slot's last conv_kernel inputs (the inputs before this batch
 *            come from the slot's committed bank; none before position 0)
 *   state    the slot's last conv_kernel - 1 inputs into the other bank
 *   prep     q, k L2-normalised per head (eps 1e-6), q / sqrt(k_dim);
 *            beta = sigmoid(b); decay = exp(-exp(A_log) softplus(a + dt_bias))
 *   rounds   the delta rule, token after token of each slot: per value
 *            head h and column j of its state S (k_dim x v_dim),
 *              S_j = decay S_j;  d = beta (v_j - S_j . k);
 *              S_j += d k;       o_j = S_j . q
 *            chunks are (slot, head) rows cut into columns, a round covers
 *            dn_tb tokens of every slot, so a long prefill is many rounds
 *   norm     o = rmsnorm(o) * norm * silu(z), per head
 *   out      block_out = out o
 *
 * This is the recurrent form for every token, prefill included.  HF runs a
 * prompt through the chunked form (a triangular solve per 64 tokens), the
 * same recurrence reordered; tests/ref checks the two agree.  On a CPU the
 * recurrence is about 4 k_dim multiply-adds per state column and token
 * (0.06 GFLOP a token for Qwen3.5-35B-A3B against 6 for its projections and
 * experts), each state column is independent (a vector of them at a time:
 * the ISA table's delta_step_f32), and a head's state (64 KiB at 128 x
 * 128) stays in the cache while a round runs through its tokens.
 *
 * Columns never interact, and every column's operations are the same
 * whatever the cut, the round length or the ISA: results never depend on
 * the chunking (kernel == in-process).  The state of a slot that starts at
 * position 0 starts at zero; the committed bank is only read.
 */
#include "core/cb_engine_priv.h"
#include "arch/cb_delta.h"
#include "ops/cb_math.h"

/* a piece of a head's state: columns, a whole number of vectors */
#define PIECE 16
/* pieces a round's chunk should hold at least */
#define MIN_PIECES 4

/* This layer's part of slot @s's bank @bank. */
static float *layer_state(const struct cb_engine *e, cb_u32 s, int bank)
{
	return e->dn_state + ((cb_size)s * 2 + (cb_size)bank) * e->dn_floats + e->dn_loff;
}

/* Does slot @s start over in this batch (its first token at position 0)? */
static int fresh(const struct cb_engine *e, cb_u32 s)
{
	return e->b->pos[e->dn_run[e->dn_start[s]]] == 0;
}

/*
 * The convolution's inputs for the token at index @m of slot @s's run:
 * in[i] = the input at lag K - 1 - i (in[K - 1] the token's own), or NULL
 * for none (before position 0).
 */
static void taps(const struct cb_engine *e, cb_u32 s, int m, const float **in)
{
	int K = (int)e->cfg.delta.conv_kernel, C = e->dn_conv_dim, i, j;
	const cb_u32 *run = e->dn_run + e->dn_start[s];
	const float *old = fresh(e, s) ? CB_NULL : layer_state(e, s, e->dn_bank[s]);

	for (i = 0; i < K; i++) {
		j = K - 1 - i;
		if (j <= m)
			in[i] = e->dn_qkv + (cb_size)run[m - j] * C;
		else
			in[i] = old ? old + (cb_size)(K - 1 - (j - m)) * C : CB_NULL;
	}
}

/* The run index of token @t in its slot. */
static int run_index(const struct cb_engine *e, int t)
{
	cb_u32 s = e->b->seq[t];

	return (int)(e->b->pos[t] - e->b->pos[e->dn_run[e->dn_start[s]]]);
}

/* conv: tokens, or pieces of their channels */
static void conv_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const float *w = e->lw->delta.conv.data;
	const float *in[CB_MAX_CONV_KERNEL];
	int K = (int)e->cfg.delta.conv_kernel, C = e->dn_conv_dim;
	int t, t1, p0, p1, c0, c1, ch, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(C, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		float *out = e->dn_conv + (cb_size)t * C;

		taps(e, e->b->seq[t], run_index(e, t), in);
		for (ch = c0; ch < c1; ch++) {
			float acc = 0.0f;

			for (i = 0; i < K; i++)
				if (in[i])
					acc += w[ch * K + i] * in[i][ch];
			out[ch] = cb_siluf(acc);
		}
	}
}

/* state: the last K - 1 inputs of each slot into its other bank */
static void conv_state_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const float *in[CB_MAX_CONV_KERNEL];
	int K = (int)e->cfg.delta.conv_kernel, C = e->dn_conv_dim;
	int r, r1, p0, p1, c0, c1, ch, i;

	cb_plan_chunk(&e->pl, c, &r, &r1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(C, p1 * CB_ACT_PIECE);
	for (; r < r1; r++) {
		cb_u32 s = e->dn_slots[r];
		float *cs = layer_state(e, s, !e->dn_bank[s]);

		taps(e, s, (int)e->dn_len[s] - 1, in);
		for (i = 0; i < K - 1; i++) {
			float *row = cs + (cb_size)i * C;

			for (ch = c0; ch < c1; ch++)
				row[ch] = in[i + 1] ? in[i + 1][ch] : 0.0f;
		}
	}
}

/* x / sqrt(sum x^2 + 1e-6), as FLA's l2norm */
static void l2norm(float *x, int n)
{
	float ss = 0.0f, inv;
	int i;

	for (i = 0; i < n; i++)
		ss += x[i] * x[i];
	inv = 1.0f / cb_sqrtf(ss + 0.000001f);
	for (i = 0; i < n; i++)
		x[i] *= inv;
}

/* log(1 + e^x), as torch's softplus (x above 20: x) */
static float softplus(float x)
{
	if (x > 20.0f)
		return x;
	if (x < -20.0f)
		return cb_expf(x);
	return cb_logf(1.0f + cb_expf(x));
}

/*
 * prep: tokens, or pieces of their key heads: q and k of those heads
 * normed; the piece of head 0 makes beta and the decay of every value head
 */
static void prep_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_delta_config *d = &e->cfg.delta;
	const struct cb_delta_layer *D = &e->lw->delta;
	const float *decay = D->decay.data, *dt = D->dt_bias.data;
	float scale = 1.0f / cb_sqrtf((float)d->k_dim);
	int nk = (int)d->k_heads, nv = (int)d->v_heads, dk = (int)d->k_dim;
	int t, t1, p0, p1, h, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	for (; t < t1; t++) {
		float *q = e->dn_conv + (cb_size)t * e->dn_conv_dim, *k = q + nk * dk;
		float *beta = e->dn_beta + (cb_size)t * nv, *g = e->dn_g + (cb_size)t * nv;

		for (h = p0; h < p1; h++) {
			l2norm(q + h * dk, dk);
			for (i = 0; i < dk; i++)
				q[h * dk + i] *= scale;
			l2norm(k + h * dk, dk);
		}
		if (p0)
			continue;
		for (h = 0; h < nv; h++) {
			beta[h] = cb_sigmoidf(beta[h]);
			g[h] = cb_expf(decay[h] * softplus(g[h] + dt[h]));
		}
	}
}

/*
 * rounds: (slot, value head) rows, cut into columns of the state (a head's
 * S is k_dim rows of v_dim, a column j of S is the state of v's j-th
 * element): per token, every row decayed and read against k (kv = S^T k),
 * then corrected by the delta and read against q.  A column's sums run
 * over the rows in order whatever the cut.
 */
static void recur_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_delta_config *d = &e->cfg.delta;
	int nv = (int)d->v_heads, dk = (int)d->k_dim, dv = (int)d->v_dim;
	int Kd = (int)(d->k_heads * d->k_dim), grp = (int)(d->v_heads / d->k_heads);
	int tiled = !!(d->flags & CB_DELTA_F_TILED), r, r1, j0, j1, n, j, i, m;
	float kv[CB_MAX_DELTA_HEAD_DIM];

	cb_plan_chunk(&e->pl, c, &r, &r1, &j0, &j1);
	j0 *= PIECE;
	j1 = CB_MIN(dv, j1 * PIECE);
	n = j1 - j0;
	for (; r < r1; r++) {
		/* the key head of value head h: HF's groups, or GGUF's tiles */
		int h = r % nv, hk = tiled ? h % (int)d->k_heads : h / grp;
		cb_u32 s = e->dn_slots[r / nv];
		const cb_u32 *run = e->dn_run + e->dn_start[s];
		int m0 = e->dn_round * e->dn_tb;
		int m1 = CB_MIN((int)e->dn_len[s], m0 + e->dn_tb);
		cb_size st = (cb_size)(d->conv_kernel - 1) * e->dn_conv_dim +
			     (cb_size)h * dk * dv + j0;
		float *S = layer_state(e, s, !e->dn_bank[s]) + st;

		if (m0 >= m1)
			continue;
		if (!m0) {
			/* the round that starts the pass: the committed state, or zero */
			const float *old = fresh(e, s) ? CB_NULL :
					   layer_state(e, s, e->dn_bank[s]) + st;

			for (i = 0; i < dk; i++) {
				cb_size row = (cb_size)i * dv;

				for (j = 0; j < n; j++)
					S[row + j] = old ? old[row + j] : 0.0f;
			}
		}
		for (m = m0; m < m1; m++) {
			cb_u32 t = run[m];
			const float *row = e->dn_conv + (cb_size)t * e->dn_conv_dim;
			const float *q = row + hk * dk, *k = row + Kd + hk * dk;
			const float *v = row + 2 * Kd + h * dv + j0;
			float dec = e->dn_g[(cb_size)t * nv + h];
			float beta = e->dn_beta[(cb_size)t * nv + h];
			float *o = e->dn_o + (cb_size)t * e->dn_vd + h * dv + j0;

			/* decay and read; the delta v adds; correct and read */
			e->ops->delta_step_f32(S, (cb_size)dv, dk, n, k, q, v, dec, beta, o, kv);
		}
	}
}

/* norm: (token, value head) rows: rmsnorm(o) * norm * silu(z) */
static void norm_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_delta_config *d = &e->cfg.delta;
	const float *w = e->lw->delta.norm.data;
	float eps = cb_f32_from_bits(e->cfg.rms_eps_bits);
	int nv = (int)d->v_heads, dv = (int)d->v_dim;
	int r, r1, p0, p1, i;

	cb_plan_chunk(&e->pl, c, &r, &r1, &p0, &p1);
	for (; r < r1; r++) {
		cb_size off = (cb_size)(r / nv) * e->dn_vd + (cb_size)(r % nv) * dv;
		const float *o = e->dn_o + off, *z = e->dn_z + off;
		float *y = e->dn_att.f + off, inv = cb_rms_inv(o, dv, eps);

		for (i = 0; i < dv; i++)
			y[i] = w[i] * (o[i] * inv) * cb_siluf(z[i]);
	}
}

/* the normed rows into the forms delta.out reads */
static void quant_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1, p0, p1;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	for (; t < t1; t++)
		cb_acts_quantize_cols(e, &e->dn_att, t, p0 * CB_ACT_PIECE,
				      CB_MIN(e->dn_vd, p1 * CB_ACT_PIECE));
}

void cb_delta_batch(struct cb_engine *e)
{
	const struct cb_batch *b = e->b;
	cb_u32 off = 0, s;
	int t, i;

	e->dn_nslots = 0;
	e->dn_maxrun = 0;
	for (t = 0; t < e->n; t++)
		e->dn_len[b->seq[t]] = 0;
	for (t = 0; t < e->n; t++)
		if (!e->dn_len[b->seq[t]]++)
			e->dn_slots[e->dn_nslots++] = b->seq[t];
	for (i = 0; i < e->dn_nslots; i++) {
		s = e->dn_slots[i];
		e->dn_start[s] = off;
		off += e->dn_len[s];
		e->dn_maxrun = CB_MAX(e->dn_maxrun, (int)e->dn_len[s]);
		e->dn_len[s] = 0;
	}
	/* a slot's tokens come in position order (check_batch) */
	for (t = 0; t < e->n; t++) {
		s = b->seq[t];
		e->dn_run[e->dn_start[s] + e->dn_len[s]++] = (cb_u32)t;
	}
}

void cb_delta_layer(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_delta_config *d = &cf->delta;
	const struct cb_delta_layer *D = &e->lw->delta;
	int n = e->n, nv = (int)d->v_heads, K = (int)d->conv_kernel;
	/* one token through a piece of a head's state, on this variant */
	cb_u64 piece = (cb_u64)PIECE * d->k_dim * e->ops->delta_ps, per;

	e->dn_loff = cb_delta_layer_offset(cf, (cb_u32)e->layer);

	/* qkv, z, b, a = the projections of x_norm */
	cb_jobs_reset(e);
	cb_job_add(e, &D->qkv, e->dn_qkv, e->dn_conv_dim, &e->x_norm, 0, n, CB_NULL);
	cb_job_add(e, &D->z, e->dn_z, e->dn_vd, &e->x_norm, 0, n, CB_NULL);
	cb_job_add(e, &D->b, e->dn_beta, nv, &e->x_norm, 0, n, CB_NULL);
	cb_job_add(e, &D->a, e->dn_g, nv, &e->x_norm, 0, n, CB_NULL);
	cb_run_jobs(e, ex);

	/* the convolution and SiLU; each slot's last inputs into its other bank */
	cb_run_planned(e, ex, conv_chunk, n, cb_col_pieces(e->dn_conv_dim), 0,
		       CB_ACT_PIECE * ((cb_u64)K * CB_PS_AXPY + CB_PS_EXP));
	cb_run_planned(e, ex, conv_state_chunk, e->dn_nslots, cb_col_pieces(e->dn_conv_dim), 0,
		       CB_ACT_PIECE * (cb_u64)K * CB_PS_COPY);

	/* q, k normed; beta, the decay */
	cb_run_planned(e, ex, prep_chunk, n, (int)d->k_heads, (cb_u64)nv * 4 * CB_PS_EXP,
		       (cb_u64)2 * d->k_dim * CB_PS_NORM);

	/*
	 * the delta rule, dn_tb tokens of each slot a round, a chunk at least
	 * MIN_PIECES pieces of a head for them (the round's own tokens: a
	 * decode step's round is one token)
	 */
	per = e->chunk_ps / (MIN_PIECES * piece);
	e->dn_tb = (int)CB_MAX(per, (cb_u64)1);
	for (e->dn_round = 0; e->dn_round * e->dn_tb < e->dn_maxrun; e->dn_round++) {
		int ntok = CB_MIN(e->dn_tb, e->dn_maxrun - e->dn_round * e->dn_tb);

		cb_run_planned(e, ex, recur_chunk, e->dn_nslots * nv,
			       ((int)d->v_dim + PIECE - 1) / PIECE, 0,
			       (cb_u64)ntok * piece + (cb_u64)PIECE * d->k_dim * CB_PS_COPY);
	}

	/* the gated norm, its forms, and the output projection */
	cb_run_rows(e, ex, norm_chunk, n * nv, (cb_u64)d->v_dim * (CB_PS_NORM + CB_PS_SWIGLU));
	if (cb_acts_nforms(&e->dn_att))
		cb_run_planned(e, ex, quant_chunk, n, cb_col_pieces(e->dn_vd), 0,
			       (cb_u64)CB_ACT_PIECE * CB_PS_QUANT * cb_acts_nforms(&e->dn_att));
	cb_jobs_reset(e);
	cb_job_add(e, &D->out, e->block_out, e->H, &e->dn_att, 0, n, CB_NULL);
	cb_run_jobs(e, ex);
}

/* qg's rows, per head q then its gate, into q and att_gate */
static void q_split_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int hd = e->hd, nh = (int)e->cfg.n_heads, t, t1, p0, p1, h, i;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	for (; t < t1; t++) {
		const float *src = e->qg + (cb_size)t * 2 * e->qdim;
		float *q = e->q + (cb_size)t * e->qdim, *g = e->att_gate + (cb_size)t * e->qdim;

		for (h = 0; h < nh; h++)
			for (i = 0; i < hd; i++) {
				q[h * hd + i] = src[2 * h * hd + i];
				g[h * hd + i] = src[2 * h * hd + hd + i];
			}
	}
}

void cb_gated_q_split(struct cb_engine *e, struct cb_exec *ex)
{
	cb_run_rows(e, ex, q_split_chunk, e->n, (cb_u64)2 * e->qdim * CB_PS_COPY);
}
