/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_engine_priv.h - engine internals shared by cb_model.c, cb_forward.c,
 * cb_router.c and cb_sample.c.  FPU-side header (uses float): never include
 * it from non-FPU kernel code.
 */
#ifndef CB_ENGINE_PRIV_H
#define CB_ENGINE_PRIV_H

#include "cb_engine.h"
#include "cb_ops.h"

/* Positions per attention chunk (see attn_chunk). */
#define CB_ATT_SPLIT 512

/* One matrix product of a phase, split into (row block, token block) chunks. */
struct cb_gemm_job {
	float *out;		/* out[m * ldo + r] */
	cb_size ldo;
	const void *w;
	cb_size w_row_bytes;
	const void *act;	/* f32 or q8_0 rows, by the weight dtype */
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
	cb_size qrow_h, qrow_q, qrow_f, qrow_f2;	/* q8_0 row bytes, 0 if n % 32 */

	/* KV cache: [seq][layer][pos][kvdim] */
	float *kc, *vc;
	cb_u32 *seq_len, *seq_tmp;

	/* per-token scratch, [max_batch][...] */
	float *x, *xn, *tmp, *q, *k, *v, *att, *rope, *rl, *topw;
	float *att_part;	/* [max_batch][n_heads][max splits][2 + head_dim] */
	void *xq, *attq;
	cb_u32 *topid, *slot_of, *out_idx;
	/* dense / shared-expert MLP */
	float *mg, *mu, *mo, *sgv;
	void *mq;
	/* routed experts, grouped by expert: [max_batch * top_k][...] */
	cb_u32 *exp_cnt, *exp_off, *exp_cur, *slot_tok;
	float *xg, *gg, *gu, *yg;
	void *xgq, *gq;
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
	int gather_f32, gather_q8;	/* activation forms the experts read */
};

/* router: top-k by insertion into a sorted buffer, then softmax weights */
void cb_topk(const float *logits, int n, int k, cb_u32 *ids, float *vals);
void cb_route(const float *logits, int n, int k, int renorm, cb_u32 *ids,
	      float *weights);

/* small primitives (cb_forward.c) */
void cb_rmsnorm(float *out, const float *x, const float *w, int n, float eps);

int cb_forward_run(struct cb_engine *e, struct cb_exec *ex,
		   const struct cb_batch *b);

#endif /* CB_ENGINE_PRIV_H */
