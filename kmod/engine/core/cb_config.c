// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_config.c - the one check of a model config, for model setup and the
 * file validator alike.
 *
 * Integer only (no floating point: real numbers are checked as bit
 * patterns), so the kernel calls it outside FPU sections.
 */
#include "core/cb_engine.h"
#include "arch/cb_arch.h"
#include "arch/cb_gpt_oss.h"
#include "arch/cb_mla.h"
#include "arch/cb_delta.h"
#include "core/cb_why.h"

/* An f32 bit pattern that is finite and > 0 (or == 0 when zero_ok). */
static int f32_bits_ok(cb_u32 bits, int zero_ok)
{
	if (bits & 0x80000000u)
		return 0;			/* negative (or -0) */
	if ((bits & 0x7f800000u) == 0x7f800000u)
		return 0;			/* inf or NaN */
	return bits || zero_ok;
}

/* a <= b for f32 bit patterns already known finite and >= 0 */
#define F32_LE(a, b) ((a) <= (b))
#define F32_ONE 0x3f800000u

#define CFG_FAIL(...) cb_why(why, whylen, -CB_EINVAL, "config: " __VA_ARGS__)

/* YaRN's words (kmod/engine/forward/cb_rope.c uses them); integers only. */
static int rope_scaling_check(const struct cb_model_config *c, char *why, cb_u32 whylen)
{
	const struct cb_rope_scaling *r = &c->rope_scaling;
	int attn = !!(r->flags & CB_ROPE_F_ATTN_FACTOR);

	if (r->kind == CB_ROPE_SCALING_NONE) {
		if (r->factor_bits || r->orig_context || r->beta_fast_bits || r->beta_slow_bits ||
		    r->mscale_bits || r->mscale_all_dim_bits || r->flags)
			return CFG_FAIL("rope_scaling kind none with its fields set");
		return 0;
	}
	if (r->kind != CB_ROPE_SCALING_YARN)
		return CFG_FAIL("unknown rope_scaling kind %u", r->kind);
	/* below, YaRN divides by ln(rope_theta) */
	if (c->rope_theta_bits <= F32_ONE)
		return CFG_FAIL("rope_theta is not above 1, which YaRN needs");
	if (r->flags & ~CB_ROPE_F_ALL)
		return CFG_FAIL("rope_scaling flags %u has unknown bits", r->flags);
	if (!f32_bits_ok(r->factor_bits, 0) || !F32_LE(F32_ONE, r->factor_bits))
		return CFG_FAIL("rope_scaling factor is not a finite number >= 1");
	if (!r->orig_context || r->orig_context > c->max_context)
		return CFG_FAIL("rope_scaling original context %u outside 1..max_context %u",
				r->orig_context, c->max_context);
	if (!f32_bits_ok(r->beta_slow_bits, 0))
		return CFG_FAIL("rope_scaling beta_slow is not a finite positive number");
	if (!f32_bits_ok(r->beta_fast_bits, 0) || F32_LE(r->beta_fast_bits, r->beta_slow_bits))
		return CFG_FAIL("rope_scaling beta_fast is not finite and above beta_slow");
	if (attn && !f32_bits_ok(r->mscale_bits, 0))
		return CFG_FAIL("rope_scaling attention factor is not a finite positive number");
	if (!f32_bits_ok(r->mscale_bits, 1))
		return CFG_FAIL("rope_scaling mscale is not finite and >= 0");
	if (!f32_bits_ok(r->mscale_all_dim_bits, 1))
		return CFG_FAIL("rope_scaling mscale_all_dim is not finite and >= 0");
	return 0;
}

/**
 * cb_config_check() - is this a config the engine runs?
 * @c: the config.
 * @why: out: a one-line reason naming the field on failure (may be NULL).
 * @whylen: size of @why.
 *
 * The shapes within cb_limits.h and consistent, the enums known, booleans
 * 0 or 1, the fields that do not apply zero, real numbers finite.  Model
 * setup (cb_engine_init() and cb_engine_arena_size()) and the file
 * validator both call this, so a file the reader accepts is a model the
 * engine runs, and the other way round.
 *
 * Return: 0 or -CB_EINVAL.
 */
int cb_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen)
{
	cb_u32 l, any_dense = 0;

	if (!cb_arch_of(c->arch))
		return CFG_FAIL("unknown architecture %u", c->arch);
	if (!c->vocab_size || c->vocab_size > CB_MAX_VOCAB)
		return CFG_FAIL("vocab_size %u outside 1..%u", c->vocab_size, CB_MAX_VOCAB);
	if (!c->hidden || c->hidden > CB_MAX_HIDDEN)
		return CFG_FAIL("hidden %u outside 1..%u", c->hidden, CB_MAX_HIDDEN);
	if (!c->n_layers || c->n_layers > CB_MAX_LAYERS)
		return CFG_FAIL("n_layers %u outside 1..%u", c->n_layers, CB_MAX_LAYERS);
	if (!c->n_heads || c->n_heads > CB_MAX_HEADS)
		return CFG_FAIL("n_heads %u outside 1..%u", c->n_heads, CB_MAX_HEADS);
	if (!c->n_kv_heads || c->n_heads % c->n_kv_heads)
		return CFG_FAIL("n_kv_heads %u does not divide n_heads %u",
				c->n_kv_heads, c->n_heads);
	/* MLA's head dims first: head_dim is theirs (qk_nope + qk_rope) */
	if (cb_is_mla(c) && cb_mla_config_check(c, why, whylen))
		return -CB_EINVAL;
	if (!c->head_dim || c->head_dim % 2 || c->head_dim > CB_MAX_HEAD_DIM)
		return CFG_FAIL("head_dim %u is not even in 2..%u", c->head_dim,
				CB_MAX_HEAD_DIM);
	/* partial RoPE: the leading rope_dim of each head (GLM-4.5, Qwen3.5) */
	if (c->rope_dim % 2 || c->rope_dim > c->head_dim || (c->rope_dim && cb_is_mla(c)))
		return CFG_FAIL("rope_dim %u is not even and at most head_dim %u%s", c->rope_dim,
				c->head_dim, cb_is_mla(c) ? " (MLA: qk_rope_head_dim says)" : "");
	if ((cb_u64)c->n_heads * c->head_dim > CB_MAX_QDIM)
		return CFG_FAIL("n_heads %u x head_dim %u above %u", c->n_heads, c->head_dim,
				CB_MAX_QDIM);
	if (c->n_experts > CB_MAX_EXPERTS)
		return CFG_FAIL("n_experts %u above %u", c->n_experts, CB_MAX_EXPERTS);
	if (c->n_experts) {
		if (!c->top_k || c->top_k > c->n_experts || c->top_k > CB_MAX_TOP_K)
			return CFG_FAIL("top_k %u outside 1..min(n_experts, %u)",
					c->top_k, CB_MAX_TOP_K);
		if (!c->expert_ffn || c->expert_ffn > CB_MAX_FFN)
			return CFG_FAIL("expert_ffn %u outside 1..%u", c->expert_ffn, CB_MAX_FFN);
		if (c->shared_ffn > CB_MAX_FFN)
			return CFG_FAIL("shared_ffn %u above %u", c->shared_ffn, CB_MAX_FFN);
		if (c->shared_gate > 1 || (c->shared_gate && !c->shared_ffn))
			return CFG_FAIL("shared_gate %u without a shared expert",
					c->shared_gate);
		if (c->norm_topk_prob > 1)
			return CFG_FAIL("norm_topk_prob %u is not 0 or 1", c->norm_topk_prob);
	} else if (c->top_k || c->expert_ffn || c->shared_ffn || c->shared_gate ||
		   c->norm_topk_prob) {
		return CFG_FAIL("dense model (n_experts 0) with expert fields set");
	}
	if (c->dense_ffn > CB_MAX_FFN)
		return CFG_FAIL("dense_ffn %u above %u", c->dense_ffn, CB_MAX_FFN);
	if (!c->decoder_sparse_step || c->decoder_sparse_step > CB_MAX_LAYERS)
		return CFG_FAIL("decoder_sparse_step %u outside 1..%u",
				c->decoder_sparse_step, CB_MAX_LAYERS);
	if (c->rope_layout > CB_ROPE_INTERLEAVED)
		return CFG_FAIL("unknown rope_layout %u", c->rope_layout);
	if (c->qk_norm > CB_QK_NORM_FULL)
		return CFG_FAIL("unknown qk_norm %u", c->qk_norm);
	if (c->qkv_bias > 1 || c->tied_embeddings > 1)
		return CFG_FAIL("qkv_bias %u / tied_embeddings %u not 0 or 1",
				c->qkv_bias, c->tied_embeddings);
	if (!f32_bits_ok(c->rope_theta_bits, 0))
		return CFG_FAIL("rope_theta is not a finite positive number");
	if (!f32_bits_ok(c->rms_eps_bits, 0))
		return CFG_FAIL("rms_eps is not a finite positive number");
	if (!f32_bits_ok(c->clip_qkv_bits, 1))
		return CFG_FAIL("clip_qkv is not finite and >= 0");
	for (l = c->n_layers; l < CB_MAX_LAYERS; l++)
		if (c->mlp_only_layers[l / 64] >> (l % 64) & 1)
			return CFG_FAIL("mlp_only_layers has bit %u at or above n_layers %u",
					l, c->n_layers);
	for (l = 0; l < c->n_layers; l++)
		any_dense |= !cb_layer_is_moe(c, l);
	if (any_dense && !c->dense_ffn)
		return CFG_FAIL("dense layers but dense_ffn is 0");
	if (rope_scaling_check(c, why, whylen))
		return -CB_EINVAL;
	if (cb_gpt_oss_config_check(c, why, whylen) || cb_delta_config_check(c, why, whylen))
		return -CB_EINVAL;
	return cb_mla_config_check(c, why, whylen);
}
