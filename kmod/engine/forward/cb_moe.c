// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_moe.c - the routed-expert MLP: routing, grouping the batch by expert,
 * offering experts to the host, the experts' gemms and the combination.
 *
 * Routed experts see the batch grouped by expert ("slots"): slot s holds
 * one (token, expert) pair, slots of one expert are contiguous and in token
 * order, so each expert's weights are streamed once for all its tokens.
 *
 * A host with an expert executor (ex->experts_submit) is offered each
 * selected expert as a struct cb_expert_task over those grouped rows; the
 * CPU computes the experts it leaves, then those it gives back, and the
 * combination is the same whoever computed a row.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"

/*
 * Top-k experts of each token, into the trace; SwiGLU of the shared expert.
 * A chunk is tokens, or pieces of columns of one token's shared expert:
 * the chunk of the first piece routes that token.
 */
static void route_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	const struct cb_batch *b = e->b;
	int t, t1, p0, p1, j, c0, c1;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN((int)e->cfg.shared_ffn, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		cb_u32 *id = e->top_id + (cb_size)t * e->K;
		float *w = e->top_w + (cb_size)t * e->K;

		if (e->cfg.shared_ffn) {
			e->ops->swiglu_f32(e->mlp_gate.f + (cb_size)t * e->F2 + c0,
					   e->mlp_up + (cb_size)t * e->F2 + c0, c1 - c0);
			cb_acts_quantize_cols(e, &e->mlp_gate, t, c0, c1);
		}
		if (p0)
			continue;

		if (cb_route_is_grouped(&e->cfg))
			cb_route_grouped(e->ops, &e->cfg, e->router_logits + (cb_size)t * e->E,
					 e->lw->router_sel_bias.data,
					 e->route_tmp + (cb_size)t * 2 * (e->E + e->route_ng),
					 e->route_ids + (cb_size)t * e->route_ng, id, w);
		else
			cb_route(e->ops, e->router_logits + (cb_size)t * e->E, e->E, e->K,
				 e->cfg.norm_topk_prob, id, w);
		if (b->route_trace) {
			cb_u32 *tr = b->route_trace +
				((cb_size)t * e->cfg.n_layers + e->layer) * e->K * 2;

			for (j = 0; j < e->K; j++) {
				tr[2 * j] = id[j];
				tr[2 * j + 1] = cb_f32_bits(w[j]);
			}
		}
	}
}

/* copy each slot's token row, in the forms exp_in.kinds names, into the groups */
static void gather_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int s, s1, p0, p1;
	cb_size i;
	cb_u32 k;

	cb_plan_chunk(&e->pl, c, &s, &s1, &p0, &p1);
	for (; s < s1; s++) {
		cb_size t = e->slot_tok[s];

		for (k = 0; k < CB_ACT__COUNT; k++) {
			cb_size n = e->exp_in.q_bytes[k];
			const char *src = (const char *)e->x_norm.q[k] + t * n;
			char *dst = (char *)e->exp_in.q[k] + (cb_size)s * n;

			if (e->exp_in.kinds >> k & 1)
				for (i = 0; i < n; i++)
					dst[i] = src[i];
		}
	}
}

/*
 * SwiGLU in place on exp_gate, for the slots of the experts the CPU runs
 * now: by slots, or by pieces of columns of one slot.
 */
static void expert_act_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int s, s1, p0, p1, c0, c1;

	cb_plan_chunk(&e->pl, c, &s, &s1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(e->F, p1 * CB_ACT_PIECE);
	for (; s < s1; s++) {
		/* other slots: a host's expert (stale exp_gate) or done in round 1 */
		if (!e->run_all && !e->slot_run[s])
			continue;
		if (e->arch->expert == CB_EXPERT_SWIGLU_OSS)
			cb_gpt_oss_swiglu(e, e->exp_gate.f + (cb_size)s * e->F + c0,
					  e->exp_up + (cb_size)s * e->F + c0, c1 - c0);
		else
			e->ops->swiglu_f32(e->exp_gate.f + (cb_size)s * e->F + c0,
					   e->exp_up + (cb_size)s * e->F + c0, c1 - c0);
		cb_acts_quantize_cols(e, &e->exp_gate, s, c0, c1);
	}
}

/*
 * x += sum over the token's experts, in rank order, of weight * expert out,
 * plus the (gated) shared expert.  The order of the additions is fixed by
 * the routing alone, whatever the batch, the threads and the chunks (by
 * tokens, or by pieces of columns of one token: element by element).
 */
static void combine_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int t, t1, p0, p1, c0, c1, i, j;

	cb_plan_chunk(&e->pl, c, &t, &t1, &p0, &p1);
	c0 = p0 * CB_ACT_PIECE;
	c1 = CB_MIN(e->H, p1 * CB_ACT_PIECE);
	for (; t < t1; t++) {
		float *x = e->x + (cb_size)t * e->H;
		float *acc = e->block_out + (cb_size)t * e->H;
		const float *mo = e->mlp_out + (cb_size)t * e->H;

		for (i = c0; i < c1; i++)
			acc[i] = 0.0f;
		for (j = 0; j < e->K; j++) {
			cb_size s = e->slot_of[(cb_size)t * e->K + j];

			e->ops->axpy_f32(acc + c0, e->top_w[(cb_size)t * e->K + j],
					 e->exp_out + s * e->H + c0, c1 - c0);
		}
		if (e->cfg.shared_ffn) {
			float g = e->cfg.shared_gate ? cb_sigmoidf(e->shared_logit[t]) : 1.0f;

			for (i = c0; i < c1; i++)
				acc[i] += g * mo[i];
		}
		for (i = c0; i < c1; i++)
			x[i] += acc[i];
	}
}

/* Group (token, rank) pairs by expert: counts, offsets, slots. */
static void group_by_expert(struct cb_engine *e)
{
	int n = e->n, t, j, x;

	for (x = 0; x < e->E; x++)
		e->exp_cnt[x] = 0;
	for (t = 0; t < n * e->K; t++)
		e->exp_cnt[e->top_id[t]]++;
	e->exp_off[0] = 0;
	for (x = 0; x < e->E; x++) {
		e->exp_off[x + 1] = e->exp_off[x] + e->exp_cnt[x];
		e->exp_cur[x] = e->exp_off[x];
	}
	for (t = 0; t < n; t++)
		for (j = 0; j < e->K; j++) {
			cb_u32 s = e->exp_cur[e->top_id[t * e->K + j]]++;

			e->slot_of[t * e->K + j] = s;
			e->slot_tok[s] = (cb_u32)t;
		}
	e->nslots = n * e->K;
}

/*
 * Queue gate and up of each expert the CPU runs in this round, once for all
 * its tokens: exp_gate, exp_up = Wg exp_in, Wu exp_in.
 */
static void expert_gate_up_jobs(struct cb_engine *e)
{
	const struct cb_layer_weights *L = e->lw;
	int x;

	for (x = 0; x < e->E; x++) {
		cb_size o = e->exp_off[x];
		int m = (int)e->exp_cnt[x];

		if (!e->run_all && !e->exp_run[x])
			continue;
		/* gate, up: [expert_ffn, hidden] (+ GPT-OSS's biases) */
		cb_job_add(e, &L->experts[x].gate, e->exp_gate.f + o * e->F, e->F,
			   &e->exp_in, o, m, cb_gpt_oss_bias_row(&L->oss.gate_bias, x));
		cb_job_add(e, &L->experts[x].up, e->exp_up + o * e->F, e->F, &e->exp_in,
			   o, m, cb_gpt_oss_bias_row(&L->oss.up_bias, x));
	}
}

/* SwiGLU of this round's slots, then their experts' down: exp_out = Wd exp_gate */
static void expert_act_down(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_layer_weights *L = e->lw;
	int x;

	/* every slot when unfiltered; none when the host took them all */
	cb_run_planned(e, ex, expert_act_chunk, e->run_all || e->nrun ? e->nslots : 0,
		       cb_col_pieces(e->F), 0,
		       CB_ACT_PIECE * (CB_PS_SWIGLU + (cb_u64)CB_PS_QUANT *
				       cb_acts_nforms(&e->exp_gate)));
	cb_jobs_reset(e);
	for (x = 0; x < e->E; x++) {
		cb_size o = e->exp_off[x];

		if (!e->run_all && !e->exp_run[x])
			continue;
		/* down: [hidden, expert_ffn] (+ GPT-OSS's bias) */
		cb_job_add(e, &L->experts[x].down, e->exp_out + o * e->H, e->H, &e->exp_gate,
			   o, (int)e->exp_cnt[x], cb_gpt_oss_bias_row(&L->oss.down_bias, x));
	}
	cb_run_jobs(e, ex);
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
 * as a task over its grouped rows (exp_in, exp_out, slot_tok from exp_off).
 * The engine keeps its own bookkeeping and reads back only each task's
 * state, so a host that scribbles on other fields cannot mislead it.  On
 * success exp_run holds the CPU's experts; a failure is e->err.
 */
static void experts_offer(struct cb_engine *e, struct cb_exec *ex)
{
	int x, i = 0;

	if (e->err)
		return;
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
		tk->x = e->exp_in.f + o * e->H;
		tk->y = e->exp_out + o * e->H;
		tk->tokens = e->slot_tok + o;
		i++;
	}
	e->ntasks = i;
	e->ntaken = 0;
	e->err = ex->experts_submit(ex, e->tasks, e->ntasks);
	if (e->err)
		return;		/* the host holds nothing after a failed submit */
	for (x = 0, i = 0; x < e->E; x++) {
		if (!e->exp_cnt[x])
			continue;
		/* anything but CPU (TAKEN, or already DONE) is the host's now */
		e->exp_run[x] = e->tasks[i++].state == CB_TASK_CPU;
		e->ntaken += !e->exp_run[x];
	}
	mark_slots(e);
}

/*
 * Wait for the host's experts.  Those not CB_TASK_DONE afterwards (given
 * back, or a host that broke the protocol) become the CPU's second round:
 * exp_run then marks exactly them, and nrun counts them.  A failed wait is
 * e->err (and the host holds nothing after it).
 */
static void experts_collect(struct cb_engine *e, struct cb_exec *ex)
{
	int x, i = 0;

	if (e->err)
		return;
	e->ntaken = 0;
	e->err = ex->experts_wait(ex, e->tasks, e->ntasks);
	if (e->err)
		return;
	for (x = 0; x < e->E; x++) {
		if (!e->exp_cnt[x])
			continue;
		e->exp_run[x] = !e->exp_run[x] && e->tasks[i].state != CB_TASK_DONE;
		i++;
	}
	mark_slots(e);
}

/*
 * A failure while the host holds tasks: their x and y live in our scratch,
 * so let the host finish or drop them before the pass ends, whatever the
 * wait says; the first failure stays e->err.
 */
static void experts_abort(struct cb_engine *e, struct cb_exec *ex)
{
	if (e->err && e->ntaken) {
		e->ntaken = 0;
		ex->experts_wait(ex, e->tasks, e->ntasks);
	}
}

/* The forms the selected experts' gate and up read: the rows to gather. */
static void gather_kinds(struct cb_engine *e)
{
	const struct cb_layer_weights *L = e->lw;
	int x;

	e->exp_in.kinds = 0;
	for (x = 0; x < e->E; x++)
		if (e->exp_cnt[x])
			e->exp_in.kinds |= cb_tensor_kinds(&L->experts[x].gate) |
					   cb_tensor_kinds(&L->experts[x].up);
	/* tasks carry f32 rows; the others stay for a CPU fallback */
	if (!e->run_all)
		e->exp_in.kinds |= 1u << CB_ACT_F32;
}

void cb_moe_layer(struct cb_engine *e, struct cb_exec *ex)
{
	const struct cb_model_config *cf = &e->cfg;
	const struct cb_layer_weights *L = e->lw;
	int n = e->n;

	/* router logits; the shared expert's gate, up and gate logit */
	cb_jobs_reset(e);
	cb_job_add(e, &L->router, e->router_logits, e->E, &e->x_norm, 0, n,
		   L->oss.router_bias.data);	/* router: [n_experts, hidden] */
	if (cf->shared_ffn) {
		cb_job_add(e, &L->shared_gate_proj, e->mlp_gate.f, e->F2, &e->x_norm, 0, n,
			   CB_NULL);		/* [shared_ffn, hidden] */
		cb_job_add(e, &L->shared_up_proj, e->mlp_up, e->F2, &e->x_norm, 0, n,
			   CB_NULL);		/* [shared_ffn, hidden] */
	}
	if (cf->shared_ffn && cf->shared_gate)
		cb_job_add(e, &L->shared_expert_gate, e->shared_logit, 1, &e->x_norm, 0, n,
			   CB_NULL);		/* [1, hidden] */
	cb_run_jobs(e, ex);

	/* routing: softmax, top-k (into the trace); the shared expert's SwiGLU */
	cb_run_planned(e, ex, route_chunk, n, cf->shared_ffn ? cb_col_pieces(cf->shared_ffn) : 1,
		       (cb_u64)e->E * CB_PS_ROUTE,
		       cf->shared_ffn ? CB_ACT_PIECE * (CB_PS_SWIGLU + (cb_u64)CB_PS_QUANT *
							cb_acts_nforms(&e->mlp_gate)) : 0);
	if (e->err)
		return;		/* the grouping would read top_id not written */

	/* group the batch by expert, gather the inputs in the forms they read */
	group_by_expert(e);
	gather_kinds(e);
	cb_run_rows(e, ex, gather_chunk, e->nslots, (cb_u64)e->H * CB_PS_COPY);

	/* offer the experts to the host; the CPU runs what it leaves */
	if (!e->run_all)
		experts_offer(e, ex);

	/* each CPU expert's gate and up, once for all its tokens; shared down */
	cb_jobs_reset(e);
	expert_gate_up_jobs(e);
	if (cf->shared_ffn)
		cb_job_add(e, &L->shared_down_proj, e->mlp_out, e->H, &e->mlp_gate, 0, n,
			   CB_NULL);		/* [hidden, shared_ffn] */
	cb_run_jobs(e, ex);

	/* SwiGLU per slot, then each expert's down projection */
	expert_act_down(e, ex);

	/* the host's experts; a second CPU round for those it gave back */
	if (e->ntaken) {
		experts_collect(e, ex);
		if (e->nrun) {
			cb_jobs_reset(e);
			expert_gate_up_jobs(e);
			cb_run_jobs(e, ex);
			expert_act_down(e, ex);
		}
	}
	experts_abort(e, ex);

	/* x += the experts' weighted sum and the gated shared expert */
	cb_run_planned(e, ex, combine_chunk, n, cb_col_pieces(e->H), 0,
		       (cb_u64)CB_ACT_PIECE * (e->K + 2) * CB_PS_AXPY);
}
