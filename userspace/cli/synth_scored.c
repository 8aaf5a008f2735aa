// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * synth_scored.c - `colibri synth` for the architectures with a scored
 * router (deepseek_v3, deepseek_v2, glm4_moe): dense leading layers, shared
 * experts and the routing rule, defaults from the arch file's .synth and
 * .scored (the released models'):
 *
 *                     deepseek_v3        deepseek_v2         glm4_moe (4.5-Air)
 *   scores            sigmoid + bias     softmax             sigmoid + bias
 *   groups            8, top 4, by       8, top 3, by        none (--n-group 1)
 *                     their best two     their best
 *   weights           renormalised x 2.5 not renormalised x 16  renormalised x 2.5
 *   shared experts    1                  2                   1    (each of --ffn)
 *   dense layers      first 3            first 1             first 1
 *   dense ffn         9 x --ffn          8 x --ffn           8 x --ffn
 *
 * GLM's heads rotate their leading half (partial RoPE), with q/k/v biases.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "synth.h"

static uint32_t f32_bits(float f)
{
	union { float f; uint32_t u; } v = { .f = f };

	return v.u;
}

static float f32_of(uint32_t u)
{
	union { uint32_t u; float f; } v = { .u = u };

	return v.f;
}

/* groups where --n-group does not say: DeepSeek's 8; GLM's 1 (none) */
static long default_groups(const struct cb_arch_desc *a)
{
	return a->attn == CB_ATTN_MLA ? 8 : 1;
}

void synth_scored_usage(FILE *f)
{
	cb_u32 i;

	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];
		const struct cb_arch_synth *d = &a->synth;
		char groups[48] = "no groups";

		if (a->router != CB_ROUTER_SCORED)
			continue;
		if (default_groups(a) > 1)
			snprintf(groups, sizeof(groups), "%ld groups, top %u", default_groups(a),
				 d->topk_group);
		fprintf(f, "          %s: %s, %u shared, %u dense of %u x --ffn,\n"
			"            x %g, %s%s;\n", a->name, groups, d->shared_experts,
			d->dense_layers, d->dense_ffn_mult,
			f32_of(d->routed_scale_bits),
			a->scored.score_func == CB_SCORE_SIGMOID ? "sigmoid" : "softmax",
			strcmp(a->scored.hf_topk_method, "noaux_tc") ? "" :
			" scores with a bias");
	}
}

const char *synth_scored_config(const struct synth_opts *o, struct cb_model_config *c,
				char *why, size_t len)
{
	const struct synth_mla_opts *x = &o->mla;
	struct cb_mla_config *m = &c->mla;
	const struct cb_arch_desc *a = cb_arch_of((cb_u32)o->arch);
	const struct cb_arch_synth *d = &a->synth;
	/*
	 * its router's default method: "noaux_tc" has a selection bias and
	 * ranks groups by their best two, as hf_scored.c reads it
	 */
	int noaux = !strcmp(a->scored.hf_topk_method, "noaux_tc");
	long dense = synth_pick(x->dense_layers, d->dense_layers);
	long dffn = synth_pick(x->dense_ffn, (long)d->dense_ffn_mult * o->ffn);
	long shared = synth_pick(x->shared_experts, d->shared_experts);
	long n_group = synth_pick(x->n_group, default_groups(a));
	long topk_group = synth_pick(x->topk_group, d->topk_group);
	double scale = isnan(x->routed_scale) ? f32_of(d->routed_scale_bits) : x->routed_scale;
	uint32_t blk = o->q.preset ? 1 : cb_dtype_block((uint32_t)o->dtype), l;

	if (dffn <= 0 || (uint64_t)shared * o->ffn > SYNTH_MAX_COLS || dffn > SYNTH_MAX_COLS)
		return "--dense-ffn must be > 0; it and --shared-experts x --ffn are limited to "
		       "65536 here";
	if (dffn % blk)
		return "a block type needs --dense-ffn to be whole blocks";
	if (!(scale > 0 && scale < 1e30))
		return "--routed-scale must be a positive number";
	if (d->rope_part > 1)
		c->rope_dim = c->head_dim / d->rope_part & ~1u;
	c->dense_ffn = (uint32_t)dffn;
	c->shared_ffn = (uint32_t)(shared * o->ffn);
	c->norm_topk_prob = d->norm_topk_prob && (c->top_k > 1 || a->scored.norm_any_k);
	for (l = 0; l < c->n_layers && l < (uint64_t)dense; l++)
		c->mlp_only_layers[l / 64] |= 1ull << (l % 64);
	m->score_func = a->scored.score_func;
	m->sel_bias = noaux;
	if (n_group > 1) {
		m->n_group = (uint32_t)n_group;
		m->topk_group = (uint32_t)topk_group;
		m->group_top = noaux ? 2 : 1;
	}
	/* V2 scales only the weights it does not renormalise; V3 and GLM always */
	if (scale != 1.0 && (a->scored.scale_always || !c->norm_topk_prob))
		m->route_scale_bits = f32_bits((float)scale);
	if (cb_config_check(c, why, (cb_u32)len)) {
		size_t n = strlen(why);

		if (strstr(why, "group") && n + 48 < len)
			snprintf(why + n, len - n, " (--n-group, --topk-group; 1 group: none)");
		return why;
	}
	return NULL;
}
