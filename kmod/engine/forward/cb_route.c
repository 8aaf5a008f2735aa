// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_route.c - DeepSeek's routing variants, as data (struct cb_mla_config):
 *
 *   DeepSeek-V2:  softmax scores; "group_limited_greedy" keeps the
 *                 topk_group groups with the best maximum score
 *                 (group_top 1); weights renormalised if norm_topk_prob,
 *                 else times routed_scaling_factor (the converter folds
 *                 V2's "only when not renormalised" into route_scale).
 *   DeepSeek-V3:  sigmoid scores; e_score_correction_bias added for the
 *                 choice only ("noaux_tc"); groups ranked by the sum of
 *                 their two best biased scores (group_top 2); weights are
 *                 the unbiased scores, renormalised if norm_topk_prob, then
 *                 times routed_scaling_factor.
 *
 * Every selection is the ISA's topk_f32 op (descending, ties to the lower
 * index), so the router stays one op of the variants; the arithmetic
 * around it is scalar and the same for every variant.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"

/* f32 bits of HF's denominator guard, 1e-20 */
#define NORM_GUARD_BITS 0x1e3ce508

/*
 * @tmp: [2 * E + 2 * n_group] floats: the scores, the selection scores,
 * the groups' ranks and their top values; @gid: [n_group].
 */
void cb_route_grouped(const struct cb_isa_ops *ops, const struct cb_model_config *c,
		      const float *logits, const float *bias, float *tmp, cb_u32 *gid,
		      cb_u32 *ids, float *weights)
{
	const struct cb_mla_config *m = &c->mla;
	int E = (int)c->n_experts, K = (int)c->top_k, i, g, j;
	int ng = m->n_group > 1 ? (int)m->n_group : 1, per = E / ng;
	float *score = tmp, *sel = tmp + E, *gsc = tmp + 2 * E, *gv = gsc + ng;
	float sum = 0.0f, mx, ninf = cb_f32_from_bits(0xff800000u);
	float top[CB_MAX_TOP_K];
	cb_u32 topi[CB_MAX_TOP_K];

	/* scores: softmax over all experts, or each one's sigmoid */
	if (m->score_func == CB_SCORE_SIGMOID) {
		for (i = 0; i < E; i++)
			score[i] = cb_sigmoidf(logits[i]);
	} else {
		mx = logits[0];
		for (i = 1; i < E; i++)
			mx = logits[i] > mx ? logits[i] : mx;
		for (i = 0; i < E; i++) {
			score[i] = cb_expf(logits[i] - mx);
			sum += score[i];
		}
		for (i = 0; i < E; i++)
			score[i] /= sum;
	}
	/* the choice uses the biased scores; the weights the unbiased ones */
	for (i = 0; i < E; i++)
		sel[i] = bias ? score[i] + bias[i] : score[i];
	if (ng > 1) {
		/* rank each group by the sum of its group_top best choices */
		for (g = 0; g < ng; g++) {
			ops->topk_f32(sel + g * per, per, (int)m->group_top, topi, top);
			gsc[g] = 0.0f;
			for (j = 0; j < (int)m->group_top; j++)
				gsc[g] += top[j];
		}
		ops->topk_f32(gsc, ng, (int)m->topk_group, gid, gv);
		/* gsc becomes "kept" flags; the other groups' experts drop out */
		for (g = 0; g < ng; g++)
			gsc[g] = 0.0f;
		for (j = 0; j < (int)m->topk_group; j++)
			gsc[gid[j]] = 1.0f;
		for (g = 0; g < ng; g++)
			if (gsc[g] == 0.0f)
				for (i = g * per; i < (g + 1) * per; i++)
					sel[i] = ninf;
	}
	ops->topk_f32(sel, E, K, ids, weights);
	for (j = 0; j < K; j++)
		weights[j] = score[ids[j]];
	if (c->norm_topk_prob) {
		/* HF: topk_weight / (topk_weight.sum() + 1e-20) */
		sum = cb_f32_from_bits(NORM_GUARD_BITS);
		for (j = 0; j < K; j++)
			sum += weights[j];
		for (j = 0; j < K; j++)
			weights[j] /= sum;
	}
	if (m->route_scale_bits) {
		float s = cb_f32_from_bits(m->route_scale_bits);

		for (j = 0; j < K; j++)
			weights[j] *= s;
	}
}
