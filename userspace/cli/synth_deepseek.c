// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * synth_deepseek.c - `colibri synth --arch deepseek_v3|deepseek_v2`: the
 * MLA half of the config, defaults from the released models (the routing
 * half, shared with glm4_moe, is synth_scored.c's).
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
#include <stdio.h>

#include "arch/cb_arch.h"
#include "synth.h"

static uint32_t f32_bits(float f)
{
	union { float f; uint32_t u; } v = { .f = f };

	return v.u;
}

/* MLA's dims where no option gives them, the same for V2 and V3 */
#define MLA_Q_LORA 1536
#define MLA_KV_LORA 512
#define MLA_QK_NOPE 128
#define MLA_QK_ROPE 64
#define MLA_V_HEAD 128

void synth_deepseek_usage(FILE *f)
{
	fprintf(f, "          MLA defaults: %d %d %d %d %d;\n", MLA_Q_LORA, MLA_KV_LORA,
		MLA_QK_NOPE, MLA_QK_ROPE, MLA_V_HEAD);
}

const char *synth_deepseek_config(const struct synth_opts *o, struct cb_model_config *c)
{
	const struct synth_mla_opts *x = &o->mla;
	struct cb_mla_config *m = &c->mla;
	uint32_t blk = o->q.preset ? 1 : cb_dtype_block((uint32_t)o->dtype);

	m->q_lora_rank = (uint32_t)synth_pick(x->q_lora, MLA_Q_LORA);
	m->kv_lora_rank = (uint32_t)synth_pick(x->kv_lora, MLA_KV_LORA);
	m->qk_nope_dim = (uint32_t)synth_pick(x->qk_nope, MLA_QK_NOPE);
	m->qk_rope_dim = (uint32_t)synth_pick(x->qk_rope, MLA_QK_ROPE);
	m->v_head_dim = (uint32_t)synth_pick(x->v_head, MLA_V_HEAD);
	if (o->kv_heads != o->heads)
		return "MLA has one latent for every head: no --kv-heads";
	if (!m->kv_lora_rank || !m->qk_nope_dim || !m->qk_rope_dim || !m->v_head_dim)
		return "--kv-lora-rank, --qk-nope-dim, --qk-rope-dim and --v-head-dim must be > 0";
	if (m->kv_lora_rank > SYNTH_MAX_COLS || m->q_lora_rank > SYNTH_MAX_COLS ||
	    (uint64_t)o->heads * m->v_head_dim > SYNTH_MAX_COLS)
		return "the lora ranks and --heads x --v-head-dim are limited to 65536 here";
	if (m->kv_lora_rank % blk || m->q_lora_rank % blk || o->heads * m->v_head_dim % blk)
		return "a block type needs --kv-lora-rank, --q-lora-rank and --heads x "
		       "--v-head-dim to be whole blocks (k_b's rows of --qk-nope-dim fall back)";
	c->n_kv_heads = c->n_heads;
	c->head_dim = m->qk_nope_dim + m->qk_rope_dim;
	c->rope_layout = CB_ROPE_INTERLEAVED;
	c->rope_theta_bits = f32_bits(10000.0f);
	return NULL;
}
