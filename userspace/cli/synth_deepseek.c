// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * synth_deepseek.c - `colibri synth --arch deepseek_v3|deepseek_v2`: the
 * MLA and routing half of the config, defaults from the released models.
 *
 *                     deepseek_v3 (V3/R1)    deepseek_v2 (V2)
 *   q_lora_rank       1536                   1536   (0: q_proj, V2-Lite)
 *   kv_lora_rank      512                    512
 *   qk_nope/rope/v    128 / 64 / 128         128 / 64 / 128
 *   scores            sigmoid, with the      softmax
 *                     selection bias
 *   groups            8, top 4, ranked by    8, top 3, ranked by their
 *                     their best two         best (group_limited_greedy)
 *   weights           renormalised, x 2.5    not renormalised, x 16
 *   shared experts    1                      2    (each of --ffn)
 *   dense layers      first 3                first 1
 *   dense ffn         9 x --ffn (18432)      8 x --ffn (12288)
 *
 * RoPE as HF's DeepSeek code applies it (interleaved pairs), theta 10000,
 * no YaRN; the softmax scale 1 / sqrt(qk_nope + qk_rope).
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

/* MLA's dims where no option gives them, the same for V2 and V3 */
#define MLA_Q_LORA 1536
#define MLA_KV_LORA 512
#define MLA_QK_NOPE 128
#define MLA_QK_ROPE 64
#define MLA_V_HEAD 128
#define MLA_N_GROUP 8

void synth_deepseek_usage(FILE *f)
{
	cb_u32 i;

	fprintf(f, "          defaults: %d %d %d %d %d, %d groups; then per --arch:\n",
		MLA_Q_LORA, MLA_KV_LORA, MLA_QK_NOPE, MLA_QK_ROPE, MLA_V_HEAD, MLA_N_GROUP);
	for (i = 0; i < cb_arch_count; i++) {
		const struct cb_arch_desc *a = cb_archs[i];
		const struct cb_arch_synth *d = &a->synth;

		if (a->attn != CB_ATTN_MLA)
			continue;
		fprintf(f, "          %s: top %u groups, %u shared, %u dense of %u x --ffn,\n"
			"            x %g, %s%s;\n", a->name, d->topk_group, d->shared_experts,
			d->dense_layers, d->dense_ffn_mult, f32_of(d->routed_scale_bits),
			a->scored.score_func == CB_SCORE_SIGMOID ? "sigmoid" : "softmax",
			strcmp(a->scored.hf_topk_method, "noaux_tc") ? "" :
			" scores with a bias");
	}
}

static long pick(long v, long def)
{
	return v >= 0 ? v : def;
}

const char *synth_deepseek_config(const struct synth_opts *o, struct cb_model_config *c,
				  char *why, size_t len)
{
	const struct synth_mla_opts *x = &o->mla;
	struct cb_mla_config *m = &c->mla;
	const struct cb_arch_desc *a = cb_arch_of((cb_u32)o->arch);
	const struct cb_arch_synth *d = &a->synth;
	/* its router's default method: "noaux_tc" has a selection bias and
	 * ranks groups by their best two, as hf_deepseek.c reads it */
	int noaux = !strcmp(a->scored.hf_topk_method, "noaux_tc");
	long dense = pick(x->dense_layers, d->dense_layers);
	long dffn = pick(x->dense_ffn, (long)d->dense_ffn_mult * o->ffn);
	long shared = pick(x->shared_experts, d->shared_experts);
	long n_group = pick(x->n_group, MLA_N_GROUP), topk_group = pick(x->topk_group, d->topk_group);
	double scale = isnan(x->routed_scale) ? f32_of(d->routed_scale_bits) : x->routed_scale;
	uint32_t blk = o->q.preset ? 1 : cb_dtype_block((uint32_t)o->dtype), l;

	m->q_lora_rank = (uint32_t)pick(x->q_lora, MLA_Q_LORA);
	m->kv_lora_rank = (uint32_t)pick(x->kv_lora, MLA_KV_LORA);
	m->qk_nope_dim = (uint32_t)pick(x->qk_nope, MLA_QK_NOPE);
	m->qk_rope_dim = (uint32_t)pick(x->qk_rope, MLA_QK_ROPE);
	m->v_head_dim = (uint32_t)pick(x->v_head, MLA_V_HEAD);
	if (o->kv_heads != o->heads)
		return "MLA has one latent for every head: no --kv-heads";
	if (!m->kv_lora_rank || !m->qk_nope_dim || !m->qk_rope_dim || !m->v_head_dim)
		return "--kv-lora-rank, --qk-nope-dim, --qk-rope-dim and --v-head-dim must be > 0";
	if (dffn <= 0 || (uint64_t)shared * o->ffn > SYNTH_MAX_COLS || dffn > SYNTH_MAX_COLS ||
	    m->kv_lora_rank > SYNTH_MAX_COLS || m->q_lora_rank > SYNTH_MAX_COLS ||
	    (uint64_t)o->heads * m->v_head_dim > SYNTH_MAX_COLS)
		return "--dense-ffn must be > 0; it, --shared-experts x --ffn, the lora ranks "
		       "and --heads x --v-head-dim are limited to 65536 here";
	if (m->kv_lora_rank % blk || m->q_lora_rank % blk || dffn % blk ||
	    o->heads * m->v_head_dim % blk)
		return "a block type needs --kv-lora-rank, --q-lora-rank, --dense-ffn and --heads x "
		       "--v-head-dim to be whole blocks (k_b's rows of --qk-nope-dim fall back)";
	if (!(scale > 0 && scale < 1e30))
		return "--routed-scale must be a positive number";
	c->n_kv_heads = c->n_heads;
	c->head_dim = m->qk_nope_dim + m->qk_rope_dim;
	c->rope_layout = CB_ROPE_INTERLEAVED;
	c->rope_theta_bits = f32_bits(10000.0f);
	c->dense_ffn = (uint32_t)dffn;
	c->shared_ffn = (uint32_t)(shared * o->ffn);
	c->norm_topk_prob = d->norm_topk_prob && c->top_k > 1;
	for (l = 0; l < c->n_layers && l < (uint64_t)dense; l++)
		c->mlp_only_layers[l / 64] |= 1ull << (l % 64);
	m->score_func = a->scored.score_func;
	m->sel_bias = noaux;
	if (n_group > 1) {
		m->n_group = (uint32_t)n_group;
		m->topk_group = (uint32_t)topk_group;
		m->group_top = noaux ? 2 : 1;
	}
	/* V2 scales only the weights it does not renormalise; V3 always */
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
