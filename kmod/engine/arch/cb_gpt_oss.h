/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_gpt_oss.h - GPT-OSS (GptOssForCausalLM): what the architecture adds
 * to the shared config, file and engine.
 *
 * Every layer has q/k/v and o_proj biases, a learned sink logit per query
 * head that joins the softmax denominator, a router with a bias (top-k of
 * the logits, softmax over the k selected: norm_topk_prob), and experts
 * with biases and the clamped SwiGLU.  Layers alternate (HF layer_types)
 * between full attention and attention over the last sliding_window
 * positions; a sliding layer's KV cache is a ring of
 * cb_gpt_oss_ring_rows() rows, so its memory does not grow with the
 * context.
 *
 * The integer-only half (cb_gpt_oss.c: config check, file roles and
 * shapes, tensor checks, ring sizes) is called outside FPU sections; the
 * attention (cb_attention.c, its sinks and windows) and the activation
 * (cb_ffn_oss.c) are FPU code declared in cb_engine_priv.h.
 */
#ifndef CB_GPT_OSS_H
#define CB_GPT_OSS_H

#include "arch/cb_arch.h"
#include "core/cb_engine.h"

/* GPT-OSS tensor roles of one layer, after the shared ones (uapi 64..69). */
#define CB_GPT_OSS_ROLES 6

/* Does layer l attend a sliding window (else: every position)? */
static inline int cb_gpt_oss_sliding(const struct cb_model_config *c, cb_u32 l)
{
	const struct cb_arch_desc *a = cb_arch_of(c->arch);

	return a && a->attn == CB_ATTN_GQA_SINKS && l < CB_MAX_LAYERS &&
	       (c->oss.sliding_layers[l / 32] >> (l % 32) & 1);
}

/*
 * cb_gpt_oss_config_check() - the GPT-OSS part of cb_config_check(): for
 * another architecture every field of c->oss must be zero; for GPT-OSS the
 * conventions the engine implements (MoE on every layer, q/k/v bias, the
 * renormalised top-k, no shared expert, no q/k norm or clip) and the
 * window within the context.  0, or -CB_EINVAL with a reason in @why.
 */
int cb_gpt_oss_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen);

/* The GPT-OSS roles of every layer in canonical order (0 for other archs). */
cb_u32 cb_gpt_oss_roles(const struct cb_model_config *c, cb_u32 *roles);

/* Every GPT-OSS tensor of layer @L present, f32, of its shape: 0 or -CB_EINVAL. */
int cb_gpt_oss_check_layer(const struct cb_model_config *c, const struct cb_layer_weights *L);

/*
 * KV rows a sliding layer keeps per slot: the window plus the positions
 * one batch may add before its first token attends (a prefill's later
 * tokens are stored before the earlier ones read theirs), never more than
 * the context.  0 when the model has no sliding layer.
 */
cb_u32 cb_gpt_oss_ring_rows(const struct cb_model_config *c, cb_u32 max_context,
			    cb_u32 max_batch_tokens);

#endif /* CB_GPT_OSS_H */
