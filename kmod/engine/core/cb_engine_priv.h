/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_engine_priv.h - engine internals shared by cb_model.c, the forward
 * pass (cb_forward.c, cb_phase.c, cb_attention.c, cb_moe.c), cb_router.c
 * and cb_sample.c.  FPU-side header (uses float): never include
 * it from non-FPU kernel code.
 */
#ifndef CB_ENGINE_PRIV_H
#define CB_ENGINE_PRIV_H

#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "ops/cb_ops.h"

/*
 * Chunk sizes.  In the kernel a chunk runs inside one FPU section with
 * preemption off, and the pool checks fpu_slice_us only between chunks,
 * so no chunk may be long: every chunk of every phase is planned from an
 * estimate of its work to take at most CB_CHUNK_PS on the slowest code
 * that runs it.  The estimates are per element, in picoseconds of the
 * scalar variant (the one max_isa=0 runs) on the reference machine; the
 * gemms take theirs from the running variant's table (ops->gemm_ps).  What
 * cannot be divided (one row of a gemm for one token, the RMSNorm of one
 * row) is bounded by the shape limits (cb_limits.h) instead.
 * docs/kernel.md gives the measured chunk times.
 */
#define CB_CHUNK_PS		100000000ull	/* 100 us */
#define CB_PS_GEMM_MAX		1500	/* the largest gemm_ps of any variant */
#define CB_PS_NORM		2000	/* RMSNorm (two passes) and a residual add */
#define CB_PS_QUANT		5000	/* quantizing into one activation form */
#define CB_PS_SWIGLU		7000	/* silu and a product */
#define CB_PS_AXPY		800	/* y += a x */
#define CB_PS_DEQUANT		3000	/* one weight to f32 (the embedding row) */
#define CB_PS_ANGLE		100000	/* one RoPE pair's angle: powf, sincosf */
#define CB_PS_ROPE		3000	/* q/k norm, clip, rotation, cache store */
#define CB_PS_EXP		7000	/* cb_expf and its bookkeeping */
#define CB_PS_ATT		2800	/* attention: per position and head dimension */
#define CB_PS_ROUTE		8000	/* routing: per expert of a token */
#define CB_PS_COPY		500	/* gathering a row, per element */
#define CB_PS_PACK		1000	/* packing a q8_0 / q8_K row for gemm_pk, per element */

/*
 * A phase over rows (tokens, slots, token-head pairs), where a row may be
 * cut into pieces (ranges of columns, kv heads, head dimensions) when one
 * row is more work than a chunk (@budget ps: e->chunk_ps).  Chunk c is
 * rows [r0, r1), and of each the pieces [p0, p1): several whole rows, or
 * pieces of one row.
 */
struct cb_plan {
	int rows, pieces;	/* of the phase */
	int rows_per;		/* rows per chunk; 1 when rows are cut */
	int pieces_per;		/* pieces per chunk (all of them when whole) */
	int per_row;		/* chunks per row, when cut */
	int nchunks;
};

/*
 * Plan @rows rows of @pieces pieces, a row costing @row_ps plus @piece_ps
 * per piece.  Integer only (model setup plans too, outside FPU sections).
 */
static inline void cb_plan_rows(struct cb_plan *pl, int rows, int pieces, cb_u64 row_ps,
				cb_u64 piece_ps, cb_u64 budget)
{
	cb_u64 whole = row_ps + (cb_u64)pieces * piece_ps, per;

	pl->rows = rows;
	pl->pieces = pieces;
	if (whole <= budget || pieces <= 1) {
		per = whole ? budget / whole : (cb_u64)rows;
		pl->rows_per = (int)CB_MIN((cb_u64)CB_MAX(rows, 1), CB_MAX(per, (cb_u64)1));
		pl->pieces_per = pieces;
		pl->per_row = 1;
		pl->nchunks = (rows + pl->rows_per - 1) / pl->rows_per;
		return;
	}
	per = row_ps < budget ? (budget - row_ps) / CB_MAX(piece_ps, (cb_u64)1) : 1;
	pl->rows_per = 1;
	pl->pieces_per = (int)CB_MIN((cb_u64)pieces, CB_MAX(per, (cb_u64)1));
	pl->per_row = (pieces + pl->pieces_per - 1) / pl->pieces_per;
	pl->nchunks = rows * pl->per_row;
}

/* The rows and pieces of chunk c of @pl. */
static inline void cb_plan_chunk(const struct cb_plan *pl, int c, int *r0, int *r1,
				 int *p0, int *p1)
{
	int q = c % pl->per_row;

	*r0 = c / pl->per_row * pl->rows_per;
	*r1 = CB_MIN(pl->rows, *r0 + pl->rows_per);
	*p0 = q * pl->pieces_per;
	*p1 = CB_MIN(pl->pieces, *p0 + pl->pieces_per);
}

/*
 * A gemm job's chunks: @rblk weight rows times @mblk tokens.  Today's
 * shape (about CB_CHUNK_TARGET_FLOPS multiply-adds, rows rounded up to 16,
 * up to 32 tokens) when that fits @budget at @ps per multiply-add;
 * else fewer rows, then fewer tokens, down to one row for one token (which
 * the shape limits keep within the budget).  A row's result does not
 * depend on the chunking (cb_ops.h): only the time does.
 */
static inline void cb_gemm_plan(int nrows, int k, int M, cb_u32 ps, cb_u64 budget,
				int *rblk, int *mblk)
{
	cb_u64 unit = CB_MAX((cb_u64)k * ps, (cb_u64)1);	/* one row, one token */
	cb_u64 cap = CB_MAX(budget / unit, (cb_u64)1);	/* (row, token) pairs */
	cb_u64 mb = (cb_u64)CB_MIN(M, 32), rb;

	rb = CB_MAX(CB_CHUNK_TARGET_FLOPS / ((cb_u64)CB_MAX(k, 1) * mb), (cb_u64)1);
	if (rb < (cb_u64)nrows)
		rb = CB_ALIGN(rb, (cb_u64)16);
	if (rb * mb > cap) {
		rb = cap / mb;
		if (rb >= 16)
			rb &= ~(cb_u64)15;
		else if (rb >= 4)
			rb &= ~(cb_u64)3;	/* whole register tiles of 4 rows */
		if (!rb) {
			rb = 1;
			mb = cap;
		}
	}
	*rblk = (int)CB_MIN(rb, (cb_u64)nrows);
	*mblk = (int)mb;
}

/*
 * Positions per attention split for a head of @hd: the most, a power of
 * two in 32..512, whose work for one head fits the default chunk budget
 * (512 up to head_dim 64, 256 for 128, 128 for 256).  It depends on the
 * shape alone (never on the batch, the threads, the ISA or
 * cb_engine_params.chunk_ns), because the split points decide how the
 * softmax is summed: so batching never changes a bit, and the kernel
 * equals the in-process engine.
 */
static inline int cb_att_split(int hd)
{
	int s = 512;

	while (s > 32 && (cb_u64)s * ((cb_u64)hd * CB_PS_ATT + CB_PS_EXP) > CB_CHUNK_PS)
		s /= 2;
	return s;
}

/*
 * Activation rows that gemms read: the f32 rows and the same rows in each
 * quantized form (enum cb_act_kind) that a weight reading them needs.
 * cb_acts_quantize() keeps the forms in @kinds up to date with the f32
 * rows; cb_job_add() hands each weight the form its type reads.
 */
struct cb_acts {
	float *f;			/* [rows][n]: the f32 rows */
	void *q[CB_ACT__COUNT];		/* [rows][q_bytes[k]]: form k; q[CB_ACT_F32] == f */
	cb_size q_bytes[CB_ACT__COUNT];	/* bytes per row in form k: whole blocks, n rounded up */
	int n;				/* elements per row */
	cb_u32 kinds;			/* forms kept up to date (1 << k); f32 always */
};

/* One matrix product of a phase, split into (row block, token block) chunks. */
struct cb_gemm_job {
	float *out;		/* out[m * ldo + r] */
	cb_size ldo;
	const void *w;
	cb_size w_row_bytes;
	const void *act;	/* rows in the form the weight dtype reads */
	cb_size act_stride;
	const float *bias;	/* [nrows] added to every output row, or NULL */
	cb_u32 dtype;
	int M, nrows, k;
	int rblk, mblk;		/* rows / tokens per chunk */
	int nrb, nmb;		/* row blocks, token blocks */
	int first;		/* first chunk index of this job */
	int nchunks;
	/*
	 * Packed activations (ops->gemm_pk): the job's rows packed by the
	 * phase before the gemms into pk (a row every pk_stride bytes), or
	 * NULL for the plain gemm.  The job that packs them (pk_own) has the
	 * pack phase's chunks pk_first.. (pk_nch of pk_rows rows); a later job
	 * of the phase on the same rows reads its pk.
	 */
	void *pk;
	cb_size pk_stride;
	int pk_own, pk_first, pk_nch, pk_rows;
};

/* "none" in the engine's u32 tables (a slot not in this batch, no logits row) */
#define CB_NONE 0xffffffffu

struct cb_engine {
	struct cb_model_config cfg;
	const struct cb_arch_desc *arch;	/* cfg.arch's: the kinds the pass runs */
	const struct cb_model_weights *w;
	struct cb_engine_params p;
	const struct cb_isa_ops *ops;
	cb_u64 arena_used;
	cb_u64 chunk_ps;	/* most work per chunk (p.chunk_ns, or CB_CHUNK_PS) */

	/* shapes, from the config */
	int H;			/* hidden */
	int hd;			/* head_dim */
	int qdim;		/* n_heads * head_dim */
	int kvdim;		/* n_kv_heads * head_dim */
	int F;			/* expert_ffn: one routed expert's MLP */
	int F2;			/* max(shared_ffn, dense_ffn): the dense or shared MLP */
	int E, K;		/* routed experts, experts per token (0, 0: dense) */
	int rd;			/* rotated dims: rope_dim or head_dim, or MLA's qk_rope_dim */
	int odim;		/* Wo's input: qdim, or MLA's n_heads * v_head_dim */
	int att_w;		/* values per head of att_part: head_dim, or the latent */

	/*
	 * The KV cache of every slot: [n_seqs][kv_slot_rows][kvdim], layer l
	 * at row kv_off[l] of its slot, kv_rows[l] rows: max_context, or a
	 * ring of ring_rows for a GPT-OSS sliding layer (cb_kv_at()).
	 */
	float *k_cache, *v_cache;
	cb_u64 kv_slot_rows;
	cb_u64 *kv_off;		/* [n_layers] */
	cb_u32 *kv_rows;	/* [n_layers] */
	cb_u32 ring_rows;	/* rows of a sliding layer's ring; 0: none */
	cb_u32 *seq_hi;		/* [n_seqs] most positions filled since reset */
	cb_u32 *seq_len;	/* [n_seqs] positions filled */
	cb_u32 *seq_next;	/* [n_seqs] length after this batch, CB_NONE if absent */

	/*
	 * Per token: row t of each is token t of the batch, T =
	 * max_batch_tokens rows.
	 */
	float *x;		/* [T][H] the residual stream */
	/* [T][H] rmsnorm(x), the input of each block; last, of the logits rows */
	struct cb_acts x_norm;
	float *block_out;	/* [T][H] Wo att; the experts' weighted sum */
	float *q;		/* [T][qdim] */
	float *k, *v;		/* [T][kvdim] */
	float *rope;		/* [T][head_dim] cos of each pair's angle, then sin */
	float *qk_inv;		/* [T][2] 1 / rms of q and of k (qk_norm FULL) */
	struct cb_acts att;	/* [T][qdim] attention output, head after head */
	/* [T][n_heads][splits][2 + head_dim]: each split's max, sum, unnormalised out */
	float *att_part;
	cb_u32 *logit_row;	/* [T] token t's row of logits, or CB_NONE */

	/* the dense MLP, or the shared expert of a MoE layer */
	struct cb_acts mlp_gate;	/* [T][F2] gate projection, then silu(gate) * up */
	float *mlp_up;		/* [T][F2] up projection */
	float *mlp_out;		/* [T][H] down projection */
	float *shared_logit;	/* [T] the shared expert's gate logit */

	/*
	 * MLA (cb_mla.c): the cache holds, per slot, layer and position, the
	 * normed latent and the roped shared key, [n_seqs][n_layers]
	 * [max_context][mla_row]; k_cache and v_cache are not carved.
	 * Per-head buffers are head-major, [n_heads][T][...], so that each
	 * head's rows are one gemm job's contiguous input.
	 */
	int mla_R, mla_row;	/* kv_lora_rank; kv_lora_rank + qk_rope_dim */
	float *lat_cache;
	struct cb_acts q_lat_in;	/* [T][q_lora_rank]: Wq_a x, then its RMSNorm */
	float *kv_lat;		/* [T][mla_row]: Wkv_a x */
	struct cb_acts q_nope;	/* [n_heads][T][qk_nope_dim] */
	float *q_cat;		/* [n_heads][T][mla_row]: W_uk^T q_nope, then roped q_pe */
	struct cb_acts o_lat;	/* [n_heads][T][kv_lora_rank]: attention in latent space */
	/*
	 * The naive form (cb_mla_naive.c), carved when max_batch_tokens > 1:
	 * this layer's W_uk and W_uv in f32, [n_heads*qk_nope_dim][R] then
	 * [n_heads*v_head_dim][R] (rows that decompress a latent), and one
	 * split's decompressed keys and values, [nv_split][n_heads*(nope + v)]
	 * (first the staging of k_b's rows while W_uk is transposed).
	 */
	float *nv_w, *nv_kv;
	int nv_split;		/* positions per naive split (cb_att_split(nope+rope+v)) */
	int nv_round;		/* the split being attended */
	int mla_form;		/* enum cb_mla_form: test-only override, 0 = the rule */

	/*
	 * Gated DeltaNet (cb_delta.c): each slot's state in two banks of
	 * dn_floats (arch/cb_delta.h lays one out), dn_bank[s] the committed
	 * one: a pass reads it and writes the other, and only a pass that
	 * completes flips it.  The batch's tokens grouped by slot: dn_run holds
	 * the batch indices of slot dn_slots[i]'s tokens in position order,
	 * from dn_start[slot], dn_len[slot] of them.
	 */
	float *dn_state;	/* [n_seqs][2][dn_floats] */
	cb_u64 dn_floats;
	cb_u8 *dn_bank;		/* [n_seqs] */
	cb_u32 *dn_run;		/* [T] */
	cb_u32 *dn_slots;	/* [T] the slots of the batch, in order of appearance */
	cb_u32 *dn_start;	/* [n_seqs] */
	cb_u32 *dn_len;		/* [n_seqs] */
	int dn_nslots;		/* slots in the batch */
	int dn_maxrun;		/* the most tokens of one slot */
	int dn_tb;		/* tokens of a slot per round of the recurrence */
	int dn_round;		/* the round running */
	int dn_conv_dim, dn_vd;	/* 2 Kd + Vd; v_heads * v_dim */
	cb_u64 dn_loff;		/* the running layer's part of a bank (floats) */
	float *dn_qkv;		/* [T][conv_dim] the projection before the convolution */
	float *dn_conv;		/* [T][conv_dim] after it and SiLU: q, k (L2-normed), v */
	float *dn_z;		/* [T][Vd] the output gate */
	float *dn_beta;		/* [T][v_heads] b x, then beta */
	float *dn_g;		/* [T][v_heads] a x, then the decay exp(g) */
	float *dn_o;		/* [T][Vd] each head's S^T q */
	struct cb_acts dn_att;	/* [T][Vd] normed and gated: what delta.out reads */
	/* gated attention: wq's rows [T][2 qdim] (q, gate per head), the gates [T][qdim] */
	float *qg, *att_gate;
	int att_gated;		/* att of this layer is times sigmoid(att_gate) */

	/* routing */
	float *router_logits;	/* [T][E] */
	float *route_tmp;	/* [T][2 E + 2 n_group] grouped routing's scores */
	cb_u32 *route_ids;	/* [T][n_group] */
	int route_ng;		/* max(n_group, 1) */
	cb_u32 *top_id;		/* [T][K] the expert of rank j */
	float *top_w;		/* [T][K] its weight */
	cb_u32 *slot_of;	/* [T][K] the slot of (token, rank j) */

	/*
	 * Routed experts see the batch grouped by expert: slot s holds one
	 * (token, expert) pair, the slots of one expert are contiguous and in
	 * token order.  S = T * K slots.
	 */
	cb_u32 *exp_cnt;	/* [E] slots of expert x */
	cb_u32 *exp_off;	/* [E + 1] its first slot */
	cb_u32 *exp_cur;	/* [E] cursor while grouping */
	cb_u32 *slot_tok;	/* [S] the token of slot s */
	struct cb_acts exp_in;	/* [S][H] the x_norm row of each slot's token */
	struct cb_acts exp_gate;	/* [S][F] gate projection, then silu(gate) * up */
	float *exp_up;		/* [S][F] up projection */
	float *exp_out;		/* [S][H] down projection (unweighted) */
	/*
	 * Routed experts offered to the host (ex->experts_submit): one task per
	 * selected expert, and which experts / slots the CPU computes in the
	 * current round.  run_all = no host executor, nothing is filtered.
	 */
	struct cb_expert_task *tasks;	/* [E] */
	cb_u8 *exp_run;			/* [E] */
	cb_u8 *slot_run;		/* [S] */
	int run_all, ntasks, ntaken, nrun;

	struct cb_gemm_job *jobs;
	int njobs, max_jobs, nchunks;
	struct cb_exec *jobs_ex;	/* running the jobs (cb_run_jobs) */
	/* packed activations of the queued jobs (cb_job_add): pk_size bytes, pk_used */
	char *pk_buf;
	cb_u64 pk_size, pk_used;
	int pk_chunks;

	void *sample_scratch;

	/*
	 * State of the running forward call, read by the chunk functions.  err
	 * is sticky: the first failure (a yield or a host hook) is kept, and
	 * every step after it does nothing, so the pass reads as a plain list.
	 */
	const struct cb_batch *b;
	const struct cb_layer_weights *lw;
	int layer, n, n_out, nslots;
	int att_split;		/* positions per attention split (cb_att_split()) */
	int att_nsplit;		/* splits of the longest context in the batch */
	int att_hb;		/* query heads per attention chunk */
	struct cb_plan pl;	/* of the running phase */
	int err;
};

/* Element offset of position @pos of layer @l of slot @seq in the KV cache. */
static inline cb_size cb_kv_at(const struct cb_engine *e, cb_u32 seq, int l, cb_u32 pos)
{
	cb_u32 rows = e->kv_rows[l];

	return ((cb_size)seq * e->kv_slot_rows + e->kv_off[l] +
		(pos < rows ? pos : pos % rows)) * e->kvdim;
}

/*
 * Phases and gemm jobs (cb_phase.c).  A step of the forward pass is a
 * phase: a parallel_for over chunks with disjoint outputs, then a yield.
 * Each of these does nothing once e->err is set, and sets it on failure.
 */
void cb_run_phase(struct cb_engine *e, struct cb_exec *ex,
		  void (*fn)(void *, int), int nchunks);
void cb_jobs_reset(struct cb_engine *e);
void cb_job_add(struct cb_engine *e, const struct cb_tensor *t, float *out,
		cb_size ldo, const struct cb_acts *in, cb_size row0, int M,
		const float *bias);
void cb_run_jobs(struct cb_engine *e, struct cb_exec *ex);

/*
 * Weight bytes at @w, where this thread should read them: its NUMA node's
 * copy when the host keeps one (struct cb_exec.weight_local).  In a chunk.
 */
static inline const void *cb_weight_local(const struct cb_engine *e, const void *w)
{
	struct cb_exec *ex = e->jobs_ex;

	return ex->weight_local ? ex->weight_local(ex, w) : w;
}

void cb_acts_quantize(struct cb_engine *e, const struct cb_acts *a, cb_size r);
/* The forms the weights of @t read, as cb_acts.kinds bits (0 if absent). */
static inline cb_u32 cb_tensor_kinds(const struct cb_tensor *t)
{
	return t->data ? 1u << cb_dtype_act(t->dtype) : 0;
}

/* primitives: rmsnorm() is rms_inv() then rms_apply() */
void cb_rmsnorm(float *out, const float *x, const float *w, int n, float eps);
float cb_rms_inv(const float *x, int n, float eps);
void cb_rms_apply(float *out, const float *x, const float *w, float inv, int n);

/*
 * A phase planned with cb_plan_rows() (its plan in e->pl for the chunks);
 * cb_run_rows() is the one of whole rows (tokens or slots) of @row_ps each.
 */
void cb_run_planned(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int),
		    int rows, int pieces, cb_u64 row_ps, cb_u64 piece_ps);
void cb_run_plan(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int),
		 const struct cb_plan *pl);
void cb_run_rows(struct cb_engine *e, struct cb_exec *ex, void (*fn)(void *, int),
		 int rows, cb_u64 row_ps);
/* The pieces of CB_ACT_PIECE columns of a row of n. */
static inline int cb_col_pieces(int n)
{
	return (n + CB_ACT_PIECE - 1) / CB_ACT_PIECE;
}

/* The attention's output rows (e->att) into the forms Wo reads, a phase. */
void cb_att_quantize(struct cb_engine *e, struct cb_exec *ex);
/* Row r of @a, columns [c0, c1) (whole pieces, or to the end of the row). */
void cb_acts_quantize_cols(struct cb_engine *e, const struct cb_acts *a, cb_size r,
			   int c0, int c1);
/* The quantized forms kept of @a: each costs CB_PS_QUANT per element. */
static inline int cb_acts_nforms(const struct cb_acts *a)
{
	cb_u32 k = a->kinds & ~(1u << CB_ACT_F32);
	int n = 0;

	for (; k; k &= k - 1)	/* no __builtin_popcount: no libgcc in the kernel */
		n++;
	return n;
}

/*
 * Attention (cb_attention.c): causal attention with grouped kv heads over
 * the KV cache of each token's slot.
 *
 * cb_attn_rope_cache(): from q, k, v (the projections of this layer's
 *	x_norm rows): q/k norm, clip_qkv and RoPE in place, then k and v into
 *	the cache at each token's position;
 * cb_attention(): att = softmax(q k^T / sqrt(head_dim)) v over positions
 *	0..pos of each token's slot, head by head, in the forms Wo reads;
 *	for the kind CB_ATTN_GQA_SINKS (GPT-OSS) with each head's sink logit
 *	in the softmax denominator, over the last sliding_window positions
 *	(read from the layer's ring) on a sliding layer.
 *
 * Another kind of attention (a latent cache: cb_mla.c) is another file
 * with entries of this shape.
 */
void cb_attn_rope_cache(struct cb_engine *e, struct cb_exec *ex);
void cb_attention(struct cb_engine *e, struct cb_exec *ex);

/*
 * The online softmax of every attention's tiles (cb_attention.c), one head
 * and split at a time over tiles of @n scores @s, already scaled:
 * cb_att_tile_max() takes the tile's maximum into the running (*m, *l),
 * starting them on the split's @first tile, and rescales the @w outputs at
 * @o when the maximum grows; the caller then adds exp(s[i] - *m) to *l and
 * that weight times the value row to @o.  cb_att_finish() ends the split:
 * o / l when it is the token's only one (@nsplit == 1), else (max, sum)
 * in o[-2], o[-1] for cb_att_merge().  One order of operations for all.
 */
void cb_att_tile_max(const float *s, int n, int first, float *m, float *l, float *o, int w);
void cb_att_finish(float *o, int w, int nsplit, float m, float l);

/*
 * The split-softmax merge of every attention (cb_attention.c): @nsplit
 * parts of (max, sum, @w unnormalised outputs) at @part, one after the
 * other, into o[d0..d1); @sink: a logit in the denominator (GPT-OSS), or
 * NULL.  One order of operations for all, so their bits agree.
 */
void cb_att_merge(const struct cb_engine *e, const float *part, int nsplit, int w,
		  const float *sink, float *o, int d0, int d1);

/*
 * GPT-OSS experts (cb_ffn_oss.c): the clamped SwiGLU in place on @gate
 * (gate = min(gate, limit), up = clamp(up, +-limit),
 * gate = gate * sigmoid(alpha * gate) * (up + 1)), and the bias row of
 * expert @x (NULL for the other architectures).
 */
void cb_gpt_oss_swiglu(const struct cb_engine *e, float *gate, const float *up, int n);
static inline const float *cb_gpt_oss_bias_row(const struct cb_tensor *b, int x)
{
	return b->data ? (const float *)b->data + (cb_size)x * b->cols : CB_NULL;
}

/*
 * Multi-head latent attention (cb_mla.c): from x_norm, att = the heads'
 * outputs (n_heads * v_head_dim per token, in the forms Wo reads), with
 * this layer's latent and RoPE key stored in the cache, in the absorbed
 * form: q projected into the latent space, attention there, out through
 * W_uv.
 */
void cb_mla_attention(struct cb_engine *e, struct cb_exec *ex);

/*
 * A Gated DeltaNet layer (cb_delta.c): from x_norm, block_out = the
 * layer's output projection of its heads' gated outputs, with each slot's
 * convolution inputs and states read from its committed bank (zero for a
 * slot starting at position 0) and written to the other.
 * cb_delta_batch() groups the batch's tokens by slot, once per pass
 * (integers only); cb_gated_q_split() is the gated attention's: wq's rows
 * (qg) into q and the gates.
 */
void cb_delta_batch(struct cb_engine *e);
void cb_delta_layer(struct cb_engine *e, struct cb_exec *ex);
void cb_gated_q_split(struct cb_engine *e, struct cb_exec *ex);

/*
 * The naive form of MLA (cb_mla_naive.c), for prefill: each position's
 * per-head key (W_uk c) and value (W_uv c) decompressed from the cache,
 * then ordinary attention, q_nope . k_nope + q_pe . k_pe.  Which form a
 * pass takes: cb_mla_naive_chosen(), integer only, from the batch's shape
 * (docs/performance.md, "MLA: absorbed or naive").
 */
enum cb_mla_form {
	CB_MLA_AUTO = 0,	/* the rule */
	CB_MLA_ABSORBED = 1,
	CB_MLA_NAIVE = 2,	/* where the scratch is carved (max_batch_tokens > 1) */
};

int cb_mla_naive_chosen(const struct cb_engine *e);
/* from prep_chunk's q_nope and roped q_pe, att = each head's output (f32) */
void cb_mla_naive_attend(struct cb_engine *e, struct cb_exec *ex);
/* Test-only: force a form (the kernel never calls it). */
void cb_engine_set_mla_form(struct cb_engine *e, int form);

/*
 * Grouped / sigmoid / biased routing (cb_route.c) of one token: ids and
 * weights [K] in rank order, with @tmp [2 E + 2 n_group] floats and @gid
 * [n_group] scratch.  Plain softmax top-k stays cb_route().
 */
void cb_route_grouped(const struct cb_isa_ops *ops, const struct cb_model_config *c,
		      const float *logits, const float *bias, float *tmp, cb_u32 *gid,
		      cb_u32 *ids, float *weights);
/* Does this config route with cb_route_grouped()? */
static inline int cb_route_is_grouped(const struct cb_model_config *c)
{
	return c->mla.score_func || c->mla.n_group > 1 || c->mla.sel_bias ||
	       c->mla.route_scale_bits;
}

/*
 * The routed-expert MLP of a MoE layer (cb_moe.c): from x_norm, x += the
 * weighted sum of each token's top_k experts (+ the gated shared expert),
 * with the routing in the batch's trace and the experts offered to the
 * host's executor when it has one.
 */
void cb_moe_layer(struct cb_engine *e, struct cb_exec *ex);

/* The scratch of cb_expert_ffn() (cb_sizes.c): byte offsets of its parts. */
struct cb_expert_layout {
	cb_u64 x[CB_ACT__COUNT];	/* input rows in quantized form k (k >= 1) */
	cb_u64 g, u;			/* gate and up outputs, f32 */
	cb_u64 a[CB_ACT__COUNT];	/* silu(g) * u in quantized form k */
	cb_u64 size;
};

int cb_expert_layout(cb_u32 hidden, cb_u32 ffn, cb_u64 n, struct cb_expert_layout *lo);

/*
 * The sampler's scratch (cb_sample.c), laid out by cb_sample_layout()
 * (cb_sizes.c, integer only, where cb_sample_scratch_size() lives): the
 * call's state, then per-token weights and per-chunk tables, each part
 * 64-byte aligned, at these byte offsets.
 */
#define CB_SMP_CHUNK 4096		/* tokens per chunk: ~35 us of cb_expf */
#define CB_SMP_LEVELS 4			/* radix digits of a weight's key */
#define CB_SMP_BINS 256			/* bins of the widest digit */
#define CB_SMP_HSTRIDE (CB_SMP_BINS + 8)	/* per-chunk histogram: + 8 spare bins */
#define CB_SMP_STATE 192		/* struct smp, 64-byte aligned (asserted) */

struct cb_sample_layout {
	cb_u64 nch;			/* chunks */
	cb_u64 w;			/* [n] f32 weights */
	cb_u64 cmax, carg, cties;	/* [nch] f32, u32, u32 */
	cb_u64 cmass;			/* [nch] f64 */
	cb_u64 hcnt, hmass;		/* [nch][CB_SMP_HSTRIDE] u32, f64 */
	cb_u64 rcnt, rmass;		/* [CB_SMP_LEVELS][CB_SMP_BINS] u32, f64 */
	cb_u64 size;
};

void cb_sample_layout(cb_u32 n, struct cb_sample_layout *lo);

#endif /* CB_ENGINE_PRIV_H */
