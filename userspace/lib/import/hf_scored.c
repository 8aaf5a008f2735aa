// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_scored.c - config.json's MoE block of DeepSeek-V2/V3 and GLM-4.5,
 * which share its keys and its router (cb_route.c: softmax or sigmoid
 * scores, a selection bias, expert groups, a routed scale):
 *
 *   n_routed_experts, num_experts_per_tok, moe_intermediate_size,
 *   n_shared_experts (one fused MLP of n times the expert's size),
 *   intermediate_size (the dense layers), first_k_dense_replace,
 *   moe_layer_freq (MoE at l >= first_k_dense_replace with l % freq == 0),
 *   topk_method (greedy, group_limited_greedy, noaux_tc), scoring_func
 *   (softmax, sigmoid), n_group, topk_group, norm_topk_prob,
 *   routed_scaling_factor.
 *
 * What a family's files leave unsaid is its arch file's .scored.
 */
#include <stdio.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "import/hf_scored.h"

int hf_config_u32s(struct hf_loader *ld, const char *dir, const cJSON *root,
		   const struct hf_u32_key *k, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, k[i].key);

		int absent = !v || cJSON_IsNull(v);

		*k[i].dst = k[i].def;
		if (absent && !k[i].required)
			continue;
		if (absent || !cJSON_IsNumber(v) || v->valuedouble < 0 ||
		    v->valuedouble > 4294967295.0 ||
		    v->valuedouble != (double)(cb_u64)v->valuedouble)
			return hf_fail(ld, "%s/config.json: missing or bad '%s'", dir, k[i].key);
		*k[i].dst = (cb_u32)v->valuedouble;
	}
	return 0;
}

static const char *str_field(const cJSON *root, const char *key, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	return cJSON_IsString(v) ? v->valuestring : def;
}

static cb_u32 bits_of(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

/* Routing: topk_method, scoring_func, groups, weights' normalisation and scale. */
static int routing(struct hf_loader *ld, const char *dir, const cJSON *root, cb_u32 n_group,
		   cb_u32 topk_group)
{
	struct cb_model_config *c = &ld->m->cfg;
	struct cb_mla_config *m = &c->mla;
	const struct cb_arch_scored *d = &cb_arch_of(c->arch)->scored;
	const char *meth = str_field(root, "topk_method", d->hf_topk_method);
	const char *score = str_field(root, "scoring_func",
				      d->score_func == CB_SCORE_SIGMOID ? "sigmoid" : "softmax");
	const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "norm_topk_prob");
	const cJSON *rsf = cJSON_GetObjectItemCaseSensitive(root, "routed_scaling_factor");
	double scale = cJSON_IsNumber(rsf) ? rsf->valuedouble : 1.0;

	if (!strcmp(score, "sigmoid"))
		m->score_func = CB_SCORE_SIGMOID;
	else if (strcmp(score, "softmax"))
		return hf_fail(ld, "%s/config.json: scoring_func '%s' is not supported "
			       "(softmax, sigmoid are)", dir, score);
	if (!strcmp(meth, "group_limited_greedy") || !strcmp(meth, "noaux_tc")) {
		if (topk_group > n_group)
			return hf_fail(ld, "%s/config.json: topk_group %u above n_group %u", dir,
				       topk_group, n_group);
		if (n_group > 1) {
			m->n_group = n_group;
			m->topk_group = topk_group;
			/* V2 ranks a group by its best score, V3 by its best two */
			m->group_top = !strcmp(meth, "noaux_tc") ? 2 : 1;
		}
		m->sel_bias = !strcmp(meth, "noaux_tc");
	} else if (strcmp(meth, "greedy")) {
		return hf_fail(ld, "%s/config.json: topk_method '%s' is not supported "
			       "(greedy, group_limited_greedy, noaux_tc are)", dir, meth);
	}
	/* DeepSeek renormalises only with top_k > 1, GLM always */
	c->norm_topk_prob = cJSON_IsTrue(norm) && (c->top_k > 1 || d->norm_any_k);
	if (!(scale > 0.0 && scale < 1e30))
		return hf_fail(ld, "%s/config.json: bad routed_scaling_factor", dir);
	/* V2 scales only the weights it does not renormalise; V3 and GLM always */
	if (d->scale_always || !c->norm_topk_prob)
		m->route_scale_bits = scale == 1.0 ? 0 : bits_of((float)scale);
	return 0;
}

int hf_scored_config(struct hf_loader *ld, const char *dir, const cJSON *root)
{
	struct cb_model_config *c = &ld->m->cfg;
	cb_u32 n_shared, first_dense, freq, n_group, topk_group, l;
	const struct hf_u32_key k[] = {
		{ "intermediate_size", &c->dense_ffn, 1, 0 },
		{ "moe_intermediate_size", &c->expert_ffn, 0, 0 },
		{ "n_routed_experts", &c->n_experts, 0, 0 },
		{ "num_experts_per_tok", &c->top_k, 0, 0 },
		{ "n_shared_experts", &n_shared, 0, 0 },
		{ "first_k_dense_replace", &first_dense, 0, 0 },
		{ "moe_layer_freq", &freq, 0, 1 },
		{ "n_group", &n_group, 0, 1 },
		{ "topk_group", &topk_group, 0, 1 },
	};

	if (hf_config_u32s(ld, dir, root, k, sizeof(k) / sizeof(k[0])))
		return -1;
	if (!c->n_experts) {
		c->expert_ffn = c->top_k = 0;
		return 0;
	}
	if (!c->top_k || !c->expert_ffn)
		return hf_fail(ld, "%s/config.json: n_routed_experts %u without '%s'", dir,
			       c->n_experts,
			       c->top_k ? "moe_intermediate_size" : "num_experts_per_tok");
	if (!freq)
		return hf_fail(ld, "%s/config.json: moe_layer_freq is 0", dir);
	c->shared_ffn = n_shared * c->expert_ffn;
	/* MoE at l >= first_k_dense_replace with l % moe_layer_freq == 0 */
	for (l = 0; l < c->n_layers && l < CB_MAX_LAYERS; l++)
		if (l < first_dense || l % freq)
			c->mlp_only_layers[l / 64] |= 1ull << (l % 64);
	return routing(ld, dir, root, n_group, topk_group);
}
