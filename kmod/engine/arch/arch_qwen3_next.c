// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * arch_qwen3_next.c - Qwen3-Next (Qwen3NextForCausalLM): Qwen3.5-MoE's text
 * stack (arch_qwen3_5_moe.c: Gated DeltaNet layers, every few a gated
 * full-attention one, zero-centred norms, routed experts and a gated
 * shared expert), in a checkpoint of its own layout: the config flat, the
 * tensors under "model.", and each DeltaNet layer's projections fused per
 * key head, in_proj_qkvz (q, k, v and z of the head's group) and
 * in_proj_ba (b and a), cut apart by hf_fused.c.  Dense layers where the
 * config says (mlp_only_layers, decoder_sparse_step).  llama.cpp's
 * qwen3next GGUF splits in_proj_qkvz (attn_qkv, attn_gate) and keeps
 * in_proj_ba (ssm_ba): gguf_delta.c.
 */
#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "format/cb_format.h"

static const char *const hf_classes[] = { "Qwen3NextForCausalLM", CB_NULL };

/* its DeltaNet layers' HF names that are not Qwen3.5's: the fused tensors */
static const struct cb_arch_name hf_names[] = {
	{ COLIBRI_T_DELTA_QKV, "linear_attn.in_proj_qkvz.weight" },
	{ COLIBRI_T_DELTA_Z, "linear_attn.in_proj_qkvz.weight" },
	{ COLIBRI_T_DELTA_B, "linear_attn.in_proj_ba.weight" },
	{ COLIBRI_T_DELTA_A, "linear_attn.in_proj_ba.weight" },
	{ 0, CB_NULL },
};

/* llama.cpp's qwen3next: post_attention_norm for the FFN's; b and a in ssm_ba */
static const struct cb_arch_name gguf_names[] = {
	{ COLIBRI_T_FFN_NORM, "post_attention_norm.weight" },
	{ COLIBRI_T_DELTA_B, "ssm_ba.weight" },
	{ COLIBRI_T_DELTA_A, "ssm_ba.weight" },
	{ 0, CB_NULL },
};

/* config.json, besides the DeltaNet block (hf_delta.c) */
static const struct cb_arch_hf_key hf_config[] = {
	{ "moe_intermediate_size", CB_HF_REQ, CB_HF_FIELD(expert_ffn), 0 },
	{ "num_experts", CB_HF_REQ, CB_HF_FIELD(n_experts), 0 },
	{ "num_experts_per_tok", CB_HF_REQ, CB_HF_FIELD(top_k), 0 },
	{ "shared_expert_intermediate_size", CB_HF_REQ, CB_HF_FIELD(shared_ffn), 0 },
	{ "intermediate_size", CB_HF_OPT, CB_HF_FIELD(dense_ffn), 0 },
	{ "norm_topk_prob", CB_HF_BOOL, CB_HF_FIELD(norm_topk_prob), 1 },
	{ "decoder_sparse_step", CB_HF_OPT, CB_HF_FIELD(decoder_sparse_step), 1 },
	{ "mlp_only_layers", CB_HF_LAYERS, CB_HF_FIELD(mlp_only_layers), 0 },
	{ CB_NULL, CB_HF_SET, CB_HF_FIELD(shared_gate), 1 },
	{ "attention_bias", CB_HF_BOOL, CB_HF_FIELD(qkv_bias), 0 },
	{ CB_NULL, CB_HF_SET, CB_HF_FIELD(qk_norm), CB_QK_NORM_HEAD },
	{ CB_NULL, CB_HF_END, 0, 0 },
};

const struct cb_arch_desc cb_arch_qwen3_next = {
	.id = COLIBRI_ARCH_QWEN3_NEXT,
	.name = "qwen3_next",
	.hf_classes = hf_classes,
	.hf_names = hf_names,
	.hf_config = hf_config,
	.hf_model_type = "qwen3_next",
	.gguf_arch = "qwen3next",
	.gguf_rope = CB_ROPE_NEOX,
	.gguf_norm_topk = 1,
	.gguf_expert_ffn_key = "expert_feed_forward_length",
	.gguf_names = gguf_names,
	.hf_norm_centred = 1,
	.hf_delta_fused = 1,
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
