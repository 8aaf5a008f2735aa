// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_qwen3_5_moe.c - Qwen3.5/3.6-MoE (the text model of
 * Qwen3_5MoeForConditionalGeneration): three Gated DeltaNet layers to each
 * full-attention layer (config.delta, arch/cb_delta.h), the latter with an
 * output gate, per-head q/k RMSNorm and partial RoPE (a quarter of each
 * head); every layer routed experts (softmax, top-k renormalised) plus a
 * shared expert behind a sigmoid gate.  Its RMSNorms are zero-centred
 * (1 + w): the importers store 1 + w.  The keys of the DeltaNet block and
 * the nested text_config are read by hf_delta.c; the vision tower and the
 * multi-token-prediction head are not read.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = {
	"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM", CB_NULL
};

/* config.json's text_config, besides the DeltaNet block (hf_delta.c) */
/* llama.cpp's qwen35moe: the FFN's input norm is "post_attention_norm" */
static const struct cb_arch_name gguf_names[] = {
	{ COLIBRI_T_FFN_NORM, "post_attention_norm.weight" },
	{ 0, CB_NULL },
};

static const struct cb_arch_hf_key hf_config[] = {
	{ "moe_intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	{ "shared_expert_intermediate_size", CB_HF_REQ, CB_HF_FIELD(shared_ffn), 0 },
	/* the router always renormalises; the shared expert is always gated */
	{ CB_NULL, CB_HF_SET, CB_HF_FIELD(norm_topk_prob), 1 },
	{ CB_NULL, CB_HF_SET, CB_HF_FIELD(shared_gate), 1 },
	{ "attention_bias", CB_HF_BOOL, CB_HF_FIELD(qkv_bias), 0 },
	{ CB_NULL, CB_HF_SET, CB_HF_FIELD(qk_norm), CB_QK_NORM_HEAD },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

const struct cb_arch_desc cb_arch_qwen3_5_moe = {
	.id = COLIBRI_ARCH_QWEN3_5_MOE,
	.name = "qwen3_5_moe",
	.hf_classes = hf_classes,
	.hf_config = hf_config,
	.hf_model_type = "qwen3_5_moe",
	.gguf_arch = "qwen35moe",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 1,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.gguf_names = gguf_names,
	.hf_prefix = "model.language_model.",
	.hf_norm_centred = 1,
	.hf_add_bos = 0,
	.qk_norm = CB_QK_NORM_HEAD,
	.attn = CB_ATTN_GATED_DELTA,
	.ffn = CB_FFN_MOE_SHARED_GATED,
	.router = CB_ROUTER_SOFTMAX_TOPK,
	.expert = CB_EXPERT_SWIGLU,
	.synth = {
		.rope_theta_bits = 0x4b189680u,	/* 1e7 */
		.rms_eps_bits = CB_F32_1EM6,
		.norm_topk_prob = 1,
		.qkv_bias = 0,
		.rope_part = 4,
	},
};
