/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_engine_priv.h - engine internals shared by cb_model.c, the forward
 * pass (cb_forward.c, cb_phase.c, cb_attention.c, cb_moe.c), cb_router.c
 * and cb_sample.c.  FPU-side header (uses float): never include
 * it from non-FPU kernel code.
 */
#ifndef CB_ENGINE_PRIV_H
#define CB_ENGINE_PRIV_H

#include "cb_engine.h"
#include "cb_ops.h"

/* Positions per attention chunk (see attn_chunk). */
#define CB_ATT_SPLIT 512

/*
 * Activation rows that gemms read: the f32 rows and the same rows in each
 * quantized form (enum cb_act_kind) that a weight reading them needs.
 * cb_acts_quantize() keeps the forms in @kinds up to date with the f32
 * rows; cb_job_add() hands each weight the form its type reads.
 */
struct cb_acts {
	float *f;			/* [rows][n]: the f32 rows */
	void *q[CB_ACT__COUNT];		/* [rows][q_bytes[k]]: form k; q[CB_ACT_F32] == f */
	cb_size q_bytes[CB_ACT__COUNT];	/* bytes per row in form k; 0: n is not whole blocks */
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
};

struct cb_engine {
	struct cb_model_config cfg;
	const struct cb_model_weights *w;
	struct cb_engine_params p;
	const struct cb_isa_ops *ops;
	cb_u64 arena_used;

	/* derived shapes */
	int H, qdim, kvdim, hd, F, F2;
	int E, K;

	/* KV cache: [seq][layer][pos][kvdim] */
	float *kc, *vc;
	cb_u32 *seq_len, *seq_tmp;

	/* per-token scratch, [max_batch][...] */
	float *x, *tmp, *q, *k, *v, *rope, *rl, *topw;
	struct cb_acts xn, att;
	float *att_part;	/* [max_batch][n_heads][max splits][2 + head_dim] */
	cb_u32 *topid, *slot_of, *out_idx;
	/* dense / shared-expert MLP */
	struct cb_acts mg;
	float *mu, *mo, *sgv;
	/* routed experts, grouped by expert: [max_batch * top_k][...] */
	cb_u32 *exp_cnt, *exp_off, *exp_cur, *slot_tok;
	struct cb_acts xg, gg;
	float *gu, *yg;
	/*
	 * Routed experts offered to the host (ex->experts_submit): one task per
	 * selected expert, and which experts / slots the CPU computes in the
	 * current round.  run_all = no host executor, nothing is filtered.
	 */
	struct cb_expert_task *tasks;	/* [n_experts] */
	cb_u8 *exp_run;			/* [n_experts] */
	cb_u8 *slot_run;		/* [max_batch * top_k] */
	int run_all, ntasks, ntaken, nrun;

	struct cb_gemm_job *jobs;
	int njobs, max_jobs, nchunks;

	void *sample_scratch;

	/* state of the running forward call (read by the chunk functions) */
	const struct cb_batch *b;
	const struct cb_layer_weights *lw;
	int layer, tblk, n_out, nslots, att_nsplit;
	int is_moe;
};

/* router: top-k by insertion into a sorted buffer, then softmax weights */
void cb_topk(const float *logits, int n, int k, cb_u32 *ids, float *vals);
void cb_route(const float *logits, int n, int k, int renorm, cb_u32 *ids,
	      float *weights);

/* phases and gemm jobs (cb_phase.c) */
void cb_rmsnorm(float *out, const float *x, const float *w, int n, float eps);
int cb_run_phase(struct cb_engine *e, struct cb_exec *ex,
		 void (*fn)(void *, int), int nchunks);
void cb_jobs_reset(struct cb_engine *e);
void cb_job_add(struct cb_engine *e, const struct cb_tensor *t, float *out,
		cb_size ldo, const struct cb_acts *in, cb_size row0, int M,
		const float *bias);
int cb_run_jobs(struct cb_engine *e, struct cb_exec *ex);
void cb_acts_quantize(struct cb_engine *e, const struct cb_acts *a, cb_size r);
/* The forms the weights of @t read, as cb_acts.kinds bits (0 if absent). */
static inline cb_u32 cb_tensor_kinds(const struct cb_tensor *t)
{
	return t->data ? 1u << cb_dtype_act(t->dtype) : 0;
}

/* attention (cb_attention.c) */
void cb_qk_chunk(void *arg, int c);
void cb_attn_chunk(void *arg, int c);
void cb_attn_merge_chunk(void *arg, int c);
void cb_att_quant_chunk(void *arg, int c);

/* routed experts (cb_moe.c) */
void cb_route_chunk(void *arg, int c);
void cb_gather_chunk(void *arg, int c);
void cb_combine_chunk(void *arg, int c);
void cb_group_by_expert(struct cb_engine *e);
void cb_expert_gate_up_jobs(struct cb_engine *e);
int cb_expert_act_down(struct cb_engine *e, struct cb_exec *ex, int slot_chunks);
int cb_experts_offer(struct cb_engine *e, struct cb_exec *ex);
int cb_experts_collect(struct cb_engine *e, struct cb_exec *ex);
int cb_experts_abort(struct cb_engine *e, struct cb_exec *ex, int r);

int cb_forward_run(struct cb_engine *e, struct cb_exec *ex,
		   const struct cb_batch *b);

/* the engine's limit on hidden and FFN sizes (check_config in cb_model.c) */
#define CB_EXPERT_MAX_DIM 0x100000u	/* 1 << 20 */

/* The scratch of cb_expert_ffn() (cb_sizes.c): byte offsets of its parts. */
struct cb_expert_layout {
	cb_u64 x[CB_ACT__COUNT];	/* input rows in quantized form k (k >= 1) */
	cb_u64 g, u;			/* gate and up outputs, f32 */
	cb_u64 a[CB_ACT__COUNT];	/* silu(g) * u in quantized form k */
	cb_u64 size;
};

int cb_expert_layout(cb_u32 hidden, cb_u32 ffn, cb_u64 n, struct cb_expert_layout *lo);

#endif /* CB_ENGINE_PRIV_H */
