// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_gpt_oss.c - GPT-OSS: attention sinks, sliding-window layers alternating with full
 * ones, a router bias and softmax over the chosen experts, experts with
 * biases and the clamped SwiGLU (struct cb_gpt_oss_config).
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "GptOssForCausalLM", CB_NULL };

/* config.json (then the rest of GPT-OSS's block: hf_gpt_oss.c) */
static const struct cb_arch_hf_key hf_config[] = {
	{ "intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_local_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok|experts_per_token", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

/* llama.cpp's names of its tensors that other architectures call otherwise */
static const struct cb_arch_name gguf_names[] = {
	{ COLIBRI_T_FFN_NORM, "post_attention_norm.weight" },
	{ 0, CB_NULL },
};

/* its HF names: the router is mlp.router */
static const struct cb_arch_name hf_names[] = {
	{ COLIBRI_T_ROUTER, "mlp.router.weight" },
	{ 0, CB_NULL },
};

const struct cb_arch_desc cb_arch_gpt_oss = {
	.id = COLIBRI_ARCH_GPT_OSS,
	.name = "gpt_oss",
	.hf_classes = hf_classes,
	.hf_names = hf_names,
	.hf_config = hf_config,
	.hf_model_type = "gpt_oss",
	.gguf_arch = "gpt-oss",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 0,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.gguf_names = gguf_names,
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_NONE,
	.attn = CB_ATTN_GQA_SINKS,
	.ffn = CB_FFN_MOE,
	.router = CB_ROUTER_TOPK_SOFTMAX,
	.expert = CB_EXPERT_SWIGLU_OSS,
	.synth = {
		.rope_theta_bits = CB_F32_150000,
		.rms_eps_bits = CB_F32_1EM5,
		.norm_topk_prob = 1,
		.qkv_bias = 1,
	},
};
