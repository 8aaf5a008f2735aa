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
#include "cb_engine_priv.h"
#include "cb_math.h"

/* after router / shared / dense gate+up: routing, SwiGLU of the MLP rows */
void cb_route_chunk(void *arg, int c)
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
			float *g = e->mg.f + (cb_size)t * e->F2;
			const float *u = e->mu + (cb_size)t * e->F2;

			for (i = 0; i < ffn; i++)
				g[i] = cb_siluf(g[i]) * u[i];
			cb_acts_quantize(e, &e->mg, t);
		}
	}
}

/* copy each slot's token row, in the forms xg.kinds names, into the groups */
void cb_gather_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int s, s1 = CB_MIN(e->nslots, (c + 1) * e->tblk);
	cb_size i;
	cb_u32 k;

	for (s = c * e->tblk; s < s1; s++) {
		cb_size t = e->slot_tok[s];

		for (k = 0; k < CB_ACT__COUNT; k++) {
			cb_size n = e->xg.q_bytes[k];
			const char *src = (const char *)e->xn.q[k] + t * n;
			char *dst = (char *)e->xg.q[k] + (cb_size)s * n;

			if (e->xg.kinds >> k & 1)
				for (i = 0; i < n; i++)
					dst[i] = src[i];
		}
	}
}

/* SwiGLU in place on gg, for the slots of the experts the CPU runs now */
static void expert_act_chunk(void *arg, int c)
{
	struct cb_engine *e = arg;
	int s, i, s1 = CB_MIN(e->nslots, (c + 1) * e->tblk);

	for (s = c * e->tblk; s < s1; s++) {
		float *g = e->gg.f + (cb_size)s * e->F;
		const float *u = e->gu + (cb_size)s * e->F;

		/* other slots: a host's expert (stale gg) or done in round 1 */
		if (!e->run_all && !e->slot_run[s])
			continue;
		for (i = 0; i < e->F; i++)
			g[i] = cb_siluf(g[i]) * u[i];
		cb_acts_quantize(e, &e->gg, s);
	}
}

/*
 * x += sum over the token's experts, in rank order, of weight * expert out,
 * plus the (gated) shared expert; or x += dense MLP out.  The order of the
 * additions is fixed by the routing alone, whatever the batch and threads.
 */
void cb_combine_chunk(void *arg, int c)
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

/* Group (token, rank) pairs by expert: counts, offsets, slots. */
void cb_group_by_expert(struct cb_engine *e)
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
void cb_expert_gate_up_jobs(struct cb_engine *e)
{
	const struct cb_layer_weights *L = e->lw;
	int x;

	for (x = 0; x < e->E; x++) {
		cb_size o = e->exp_off[x];
		int m = (int)e->exp_cnt[x];

		if (!e->run_all && !e->exp_run[x])
			continue;
		cb_job_add(e, &L->experts[x].gate, e->gg.f + o * e->F, e->F, &e->xg, o, m,
			   CB_NULL);
		cb_job_add(e, &L->experts[x].up, e->gu + o * e->F, e->F, &e->xg, o, m,
			   CB_NULL);
	}
}

/* SwiGLU of this round's slots, then their experts' down: yg = Wd gg */
int cb_expert_act_down(struct cb_engine *e, struct cb_exec *ex, int slot_chunks)
{
	const struct cb_layer_weights *L = e->lw;
	int x, r;

	/* every slot chunk when unfiltered; none when the host took them all */
	r = cb_run_phase(e, ex, expert_act_chunk,
		      e->run_all || e->nrun ? slot_chunks : 0);
	if (r)
		return r;
	cb_jobs_reset(e);
	for (x = 0; x < e->E; x++) {
		cb_size o = e->exp_off[x];

		if (!e->run_all && !e->exp_run[x])
			continue;
		cb_job_add(e, &L->experts[x].down, e->yg + o * e->H, e->H, &e->gg, o,
			   (int)e->exp_cnt[x], CB_NULL);
	}
	return cb_run_jobs(e, ex);
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
int cb_experts_offer(struct cb_engine *e, struct cb_exec *ex)
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
		tk->x = e->xg.f + o * e->H;
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
int cb_experts_collect(struct cb_engine *e, struct cb_exec *ex)
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
int cb_experts_abort(struct cb_engine *e, struct cb_exec *ex, int r)
{
	if (e->ntaken) {
		e->ntaken = 0;
		ex->experts_wait(ex, e->tasks, e->ntasks);
	}
	return r;
}
