#!/usr/bin/python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Write small random Hugging Face checkpoints (config.json + safetensors).

The layout and tensor names are those of the real HF models, so the loader
under test reads them exactly as it would read a downloaded checkpoint.
safetensors is written by hand: 8-byte little-endian header length, JSON
header (padded with spaces to a multiple of 8), then the raw data.

usage: make_checkpoint.py ARCH OUTDIR [--dtype F32|F16|BF16] [--shards N]
                          [--seed S] [--dequantized]
ARCH: mixtral qwen2_moe qwen3_moe olmoe llama gpt_oss deepseek_v2_lite
deepseek_v2 deepseek_v3 glm4_moe qwen3_5_moe (and mixtral_k, qwen2_moe_k,
qwen3_moe_k: shapes for the k-quants; qwen3_moe_yarn, qwen3_moe_yarn_notrunc,
olmoe_yarn, llama_yarn, gpt_oss_yarn: YaRN RoPE scaling; gpt_oss_mxfp4: the
experts in OpenAI's MXFP4 layout, U8 blocks and scales, or with
--dequantized the same weights in the dequantized layout; glm4_moe_air:
GLM-4.5 without qk norm, with expert groups; both GLMs carry the MTP layer
of real checkpoints; qwen3_5_moe: Qwen3_5MoeForConditionalGeneration's
multimodal config.json with the text model in text_config, its tensors
under model.language_model., Gated DeltaNet and gated full-attention
layers, the MTP head and a stub of the vision tower as real checkpoints
have them; qwen3_5_moe_vm: the same with 4 layers, for the VM fixtures)
"""
import argparse
import copy
import json
import os
import struct

import numpy as np

CONFIGS = {
    "mixtral": {
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
        "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
        "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_local_experts": 4,
        "num_experts_per_tok": 2, "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-5, "max_position_embeddings": 2048,
        "tie_word_embeddings": False, "sliding_window": None,
        "hidden_act": "silu", "torch_dtype": "float32",
    },
    "qwen2_moe": {
        "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
        "vocab_size": 300, "hidden_size": 64, "intermediate_size": 128,
        "moe_intermediate_size": 64, "shared_expert_intermediate_size": 96,
        "num_hidden_layers": 3, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2,
        "decoder_sparse_step": 2, "mlp_only_layers": [],
        "norm_topk_prob": False, "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6, "max_position_embeddings": 2048,
        "tie_word_embeddings": False, "use_sliding_window": False,
        "hidden_act": "silu", "torch_dtype": "bfloat16",
    },
    "qwen3_moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
        "vocab_size": 300, "hidden_size": 64, "intermediate_size": 128,
        "moe_intermediate_size": 64, "head_dim": 32,
        "num_hidden_layers": 3, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2,
        "decoder_sparse_step": 1, "mlp_only_layers": [0],
        "norm_topk_prob": True, "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6, "max_position_embeddings": 2048,
        "tie_word_embeddings": True, "attention_bias": False,
        "hidden_act": "silu", "torch_dtype": "float16",
    },
    "olmoe": {
        "architectures": ["OlmoeForCausalLM"], "model_type": "olmoe",
        "vocab_size": 300, "hidden_size": 64, "intermediate_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2,
        "norm_topk_prob": False, "clip_qkv": 3.0, "rope_theta": 10000.0,
        "rms_norm_eps": 1e-5, "max_position_embeddings": 2048,
        "tie_word_embeddings": False, "attention_bias": False,
        "hidden_act": "silu", "torch_dtype": "float32",
    },
    "llama": {
        # multi-query: 16 query heads share one kv head (more than the
        # engine scores at once), head_dim 8
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": 300, "hidden_size": 128, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 16,
        "num_key_value_heads": 1, "rope_theta": 10000.0,
        "rms_norm_eps": 1e-5, "max_position_embeddings": 2048,
        "tie_word_embeddings": False, "attention_bias": False,
        "mlp_bias": False, "rope_scaling": None,
        "hidden_act": "silu", "torch_dtype": "float32",
    },
}

# GPT-OSS: head_dim 64 with n_heads * head_dim != hidden, a window of 8 so
# that short prompts wrap the sliding layers' ring, and a low swiglu_limit
# so that the clamps act on random weights.
CONFIGS["gpt_oss"] = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
    "vocab_size": 300, "hidden_size": 96, "intermediate_size": 64,
    "head_dim": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_local_experts": 4, "num_experts_per_tok": 2,
    "experts_per_token": 2, "sliding_window": 8,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
    "swiglu_limit": 2.0, "rope_theta": 150000.0, "rms_norm_eps": 1e-5,
    "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": True, "rope_scaling": None, "hidden_act": "silu",
    "torch_dtype": "bfloat16",
}

# llama.cpp fixes GPT-OSS's swiglu_limit at 7 (GGUF has no key for it)
CONFIGS["gpt_oss_l7"] = dict(CONFIGS["gpt_oss"], swiglu_limit=7.0)
# GPT-OSS's own YaRN (factor 32 over 4096 positions, beta 32 / 1, no
# truncation), in its 131072-position context
CONFIGS["gpt_oss_yarn"] = dict(CONFIGS["gpt_oss"], max_position_embeddings=131072, rope_scaling={
    "rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
    "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False})
# the same without a sliding layer: its KV cache is what the ring saves
CONFIGS["gpt_oss_full"] = dict(CONFIGS["gpt_oss"], layer_types=["full_attention"] * 3)
# OpenAI's original layout: the experts as MXFP4 blocks and scales (with
# --dequantized, the same weights in the dequantized layout)
CONFIGS["gpt_oss_mxfp4"] = dict(CONFIGS["gpt_oss"], quantization_config={
    "quant_method": "mxfp4",
    "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                               "model.embed_tokens", "lm_head"]})

# DeepSeek (MLA): V2-Lite's shape (q_proj, greedy softmax routing, shared
# experts, a dense first layer); V2 (q LoRA, group-limited greedy, scaled
# weights, MoE every other layer); V3 (sigmoid, selection bias, groups
# ranked by their best two, renormalised and scaled).  Value heads differ
# from the nope heads so that a mixed-up dimension cannot pass.
_DS = {
    "model_type": "deepseek_v2", "vocab_size": 300, "hidden_size": 64,
    "intermediate_size": 96, "moe_intermediate_size": 32,
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4,
    "q_lora_rank": None, "kv_lora_rank": 64, "qk_nope_head_dim": 32,
    "qk_rope_head_dim": 16, "v_head_dim": 24, "n_routed_experts": 8,
    "num_experts_per_tok": 2, "n_shared_experts": 2, "first_k_dense_replace": 1,
    "moe_layer_freq": 1, "topk_method": "greedy", "n_group": 1, "topk_group": 1,
    "scoring_func": "softmax", "norm_topk_prob": False, "routed_scaling_factor": 1.0,
    "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 2048,
    "tie_word_embeddings": False, "attention_bias": False, "rope_scaling": None,
    "hidden_act": "silu", "torch_dtype": "float32",
}
CONFIGS["deepseek_v2_lite"] = dict(_DS, architectures=["DeepseekV2ForCausalLM"])
CONFIGS["deepseek_v2"] = dict(_DS, architectures=["DeepseekV2ForCausalLM"], q_lora_rank=48,
                              num_hidden_layers=4, moe_layer_freq=2,
                              topk_method="group_limited_greedy", n_group=4, topk_group=2,
                              num_experts_per_tok=3, routed_scaling_factor=2.5,
                              n_shared_experts=1)
CONFIGS["deepseek_v3"] = dict(_DS, architectures=["DeepseekV3ForCausalLM"],
                              model_type="deepseek_v3", q_lora_rank=48,
                              n_routed_experts=16, num_experts_per_tok=4, n_shared_experts=1,
                              topk_method="noaux_tc", n_group=4, topk_group=2,
                              scoring_func="sigmoid", norm_topk_prob=True,
                              routed_scaling_factor=2.5)
DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")

# GLM-4.5 / 4.6 (Glm4MoeForCausalLM): q/k/v biases, per-head qk norm, RoPE on
# half of each head, DeepSeek-V3's sigmoid routing with a selection bias,
# renormalised and scaled, one shared expert, a dense first layer, and the
# next-token-prediction layer real checkpoints ship (ignored by the forward
# pass).  glm4_moe_air: no qk norm, experts in 4 groups of which 2 are kept.
CONFIGS["glm4_moe"] = {
    "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe",
    "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
    "moe_intermediate_size": 32, "head_dim": 32, "num_hidden_layers": 3,
    "num_attention_heads": 4, "num_key_value_heads": 2, "partial_rotary_factor": 0.5,
    "n_routed_experts": 16, "num_experts_per_tok": 4, "n_shared_experts": 1,
    "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "norm_topk_prob": True,
    "routed_scaling_factor": 2.5, "use_qk_norm": True, "attention_bias": True,
    "rope_theta": 10000.0, "rms_norm_eps": 1e-5, "max_position_embeddings": 2048,
    "tie_word_embeddings": False, "rope_scaling": None, "num_nextn_predict_layers": 1,
    "hidden_act": "silu", "torch_dtype": "float32",
}
CONFIGS["glm4_moe_air"] = dict(CONFIGS["glm4_moe"], use_qk_norm=False, n_group=4, topk_group=2,
                               first_k_dense_replace=1, partial_rotary_factor=0.5)
GLM4_MOE = "Glm4MoeForCausalLM"

# Shapes whose rows hold whole 256-weight super-blocks, for the k-quants
# (tests/quant): Mixtral with 8 experts (llama.cpp's 8-expert rules), Qwen2-MoE
# with expert rows of 320 (not whole super-blocks: the presets' fallbacks)
# and 4 kv groups, Qwen3-MoE with tied embeddings and a dense layer.
CONFIGS["mixtral_k"] = dict(CONFIGS["mixtral"], hidden_size=256, intermediate_size=512,
                            num_hidden_layers=4, num_local_experts=8)
CONFIGS["qwen2_moe_k"] = dict(CONFIGS["qwen2_moe"], hidden_size=256, intermediate_size=512,
                              moe_intermediate_size=320, shared_expert_intermediate_size=256,
                              num_attention_heads=8, num_key_value_heads=2, num_experts=4,
                              decoder_sparse_step=1, num_hidden_layers=3)
# smaller still, for the VM fixtures (QEMU emulates every instruction)
CONFIGS["mixtral_vmk"] = dict(CONFIGS["mixtral"], hidden_size=256, intermediate_size=256)
CONFIGS["qwen2_moe_vmk"] = dict(CONFIGS["qwen2_moe_k"], num_hidden_layers=2)
# YaRN (HF rope_scaling): factor 4 from an original context of 32, so the
# prompts and continuations of tests/ref/run run past it
CONFIGS["qwen3_moe_yarn"] = dict(CONFIGS["qwen3_moe"], rope_scaling={
    "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32})
CONFIGS["qwen3_moe_yarn_notrunc"] = dict(CONFIGS["qwen3_moe"], rope_theta=10000.0, rope_scaling={
    "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
    "beta_fast": 4.0, "beta_slow": 0.25, "truncate": False})
# the older "type" key, DeepSeek's mscale ratio
CONFIGS["olmoe_yarn"] = dict(CONFIGS["olmoe"], rope_scaling={
    "type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64,
    "beta_fast": 8, "beta_slow": 0.5, "mscale": 1.0, "mscale_all_dim": 0.5})
# attention_factor given: it replaces the computed one
CONFIGS["llama_yarn"] = dict(CONFIGS["llama"], rope_scaling={
    "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 16,
    "attention_factor": 1.25})
CONFIGS["qwen3_moe_k"] = dict(CONFIGS["qwen3_moe"], hidden_size=256, intermediate_size=512,
                              moe_intermediate_size=256, head_dim=64, num_experts=4,
                              num_hidden_layers=2)

# Qwen3.5-MoE (Qwen3_5MoeForConditionalGeneration), written as the real
# multimodal config.json: the language model's config in text_config, a
# (small) vision_config.  Three Gated DeltaNet (linear attention) layers to
# a gated full-attention one, RoPE on a quarter of each head (the M-RoPE
# sections are those of the real models: text-only positions make them
# plain RoPE), two value heads per key head in the DeltaNet layers, every
# layer MoE with a gated shared expert, the MTP head real checkpoints ship
# (mtp.*, not used by the text forward pass), zero-centred RMSNorms.
# rms_norm_eps is 1e-2, not the real 1e-6: a DeltaNet head's gated RMSNorm
# normalises S^T q, near zero where a random model's q and k are unaligned,
# and at 1e-6 this small checkpoint is chaotic (0.4 % noise on the
# embedding moves the reference's logits by a median 0.075 of the largest,
# 0.020 at 1e-2, against 0.010 for glm4_moe's).  qwen3_5_moe_eqheads: as
# many value heads as key heads (GGUF keeps HF's head order: its quantized
# files are bitwise HF's, tests/gguf).
_QWEN35_TEXT = {
    "model_type": "qwen3_5_moe_text", "vocab_size": 300, "hidden_size": 64,
    "num_hidden_layers": 8,
    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 2,
    "full_attention_interval": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 32, "attention_bias": False, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2,
    "linear_num_value_heads": 4, "num_experts": 8, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "rms_norm_eps": 1e-2, "max_position_embeddings": 2048, "hidden_act": "silu",
    "tie_word_embeddings": False, "mtp_num_hidden_layers": 1,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0,
                        "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10],
                        "mrope_interleaved": True},
}
CONFIGS["qwen3_5_moe"] = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
    "tie_word_embeddings": False, "text_config": _QWEN35_TEXT,
    # the real checkpoints' vision_config says "qwen3_5_moe" (HF reads it
    # as qwen3_5_moe_vision); the tower here is a stub the text model
    # does not use
    "vision_config": {"model_type": "qwen3_5_moe", "depth": 1, "hidden_size": 16,
                      "hidden_act": "gelu_pytorch_tanh", "intermediate_size": 32,
                      "num_heads": 2, "in_channels": 3, "patch_size": 2,
                      "spatial_merge_size": 2, "temporal_patch_size": 2,
                      "out_hidden_size": 64, "num_position_embeddings": 16},
    "image_token_id": 299, "video_token_id": 298,
    "vision_start_token_id": 296, "vision_end_token_id": 297,
}
# smaller, for the VM fixtures: three DeltaNet layers and one full attention
CONFIGS["qwen3_5_moe_vm"] = dict(CONFIGS["qwen3_5_moe"], text_config=dict(
    _QWEN35_TEXT, num_hidden_layers=4,
    layer_types=["linear_attention"] * 3 + ["full_attention"]))
CONFIGS["qwen3_5_moe_eqheads"] = dict(CONFIGS["qwen3_5_moe"], text_config=dict(
    _QWEN35_TEXT, linear_num_key_heads=4, linear_num_value_heads=4))
# Qwen3-Next (Qwen3NextForCausalLM): the same text stack in a flat config,
# RoPE's keys at the top, tensors under "model.", each DeltaNet layer's
# projections fused per key head (in_proj_qkvz, in_proj_ba), no vision
# tower or MTP head
CONFIGS["qwen3_next"] = dict(
    {k: v for k, v in _QWEN35_TEXT.items() if k not in ("rope_parameters", "model_type")},
    architectures=["Qwen3NextForCausalLM"], model_type="qwen3_next", rope_theta=10000000.0,
    partial_rotary_factor=0.25, decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True)
QWEN3_NEXT = "Qwen3NextForCausalLM"
QWEN3_5_MOE = "Qwen3_5MoeForConditionalGeneration"


def text_config(cfg):
    """the language model's config: config.json itself, or its text_config
    (a multimodal checkpoint's, Qwen3.5-MoE)"""
    return cfg.get("text_config", cfg)


def is_moe_layer(cfg, l):
    arch = cfg["architectures"][0]
    if arch in DEEPSEEK:
        return (cfg.get("n_routed_experts") is not None and l >= cfg["first_k_dense_replace"]
                and l % cfg["moe_layer_freq"] == 0)
    if arch == GLM4_MOE:
        return l >= cfg["first_k_dense_replace"]
    if arch == "LlamaForCausalLM":
        return False
    if arch in ("MixtralForCausalLM", "OlmoeForCausalLM", "GptOssForCausalLM"):
        return True
    return (l not in cfg.get("mlp_only_layers", []) and cfg["num_experts"] > 0
            and (l + 1) % cfg.get("decoder_sparse_step", 1) == 0)


def make_tensors(cfg, rng):
    """name -> float32 array, in HF names and shapes ([out, in] for Linear)."""
    arch = cfg["architectures"][0]
    if arch == QWEN3_5_MOE:
        return qwen3_5_moe_tensors(cfg, rng)
    if arch == QWEN3_NEXT:
        return qwen3_next_tensors(cfg, rng)
    H = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim", H // nh)
    V = cfg["vocab_size"]
    t = {}

    def lin(out, inp, gain=1.0):
        return (rng.standard_normal((out, inp)) * gain / np.sqrt(inp)).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    def mlp(prefix, ffn, names=("gate_proj", "up_proj", "down_proj")):
        t[f"{prefix}.{names[0]}.weight"] = lin(ffn, H)
        t[f"{prefix}.{names[1]}.weight"] = lin(ffn, H)
        t[f"{prefix}.{names[2]}.weight"] = lin(H, ffn)

    # tied heads score a token's own embedding, still in the residual, by
    # |e|^2: keep embeddings small there so the layers decide the argmax
    emb_std = 0.15 if cfg.get("tie_word_embeddings", False) else 1.0
    t["model.embed_tokens.weight"] = (emb_std * rng.standard_normal((V, H))).astype(np.float32)
    n_layers = cfg["num_hidden_layers"]
    if arch == GLM4_MOE:
        n_layers += cfg.get("num_nextn_predict_layers", 0)
    for l in range(n_layers):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"] = norm(H)
        t[p + "post_attention_layernorm.weight"] = norm(H)
        if arch in DEEPSEEK:
            deepseek_layer(cfg, l, p, t, lin, norm, mlp, rng)
            continue
        if arch == GLM4_MOE:
            glm4_moe_layer(cfg, l, p, t, lin, norm, mlp, rng)
            continue
        t[p + "self_attn.q_proj.weight"] = lin(nh * hd, H)
        t[p + "self_attn.k_proj.weight"] = lin(nkv * hd, H)
        t[p + "self_attn.v_proj.weight"] = lin(nkv * hd, H)
        t[p + "self_attn.o_proj.weight"] = lin(H, nh * hd)
        if arch == "Qwen2MoeForCausalLM":
            for x, n in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd)):
                t[p + f"self_attn.{x}_proj.bias"] = (0.1 * rng.standard_normal(n)).astype(np.float32)
        if arch == "Qwen3MoeForCausalLM":
            t[p + "self_attn.q_norm.weight"] = norm(hd)
            t[p + "self_attn.k_norm.weight"] = norm(hd)
        if arch == "OlmoeForCausalLM":
            t[p + "self_attn.q_norm.weight"] = norm(nh * hd)
            t[p + "self_attn.k_norm.weight"] = norm(nkv * hd)
        if arch == "GptOssForCausalLM":
            gpt_oss_layer(t, p, cfg, lin, rng)
        elif not is_moe_layer(cfg, l):
            mlp(p + "mlp", cfg["intermediate_size"])
        elif arch == "MixtralForCausalLM":
            E = cfg["num_local_experts"]
            t[p + "block_sparse_moe.gate.weight"] = lin(E, H, 2.0)
            for e in range(E):
                mlp(p + f"block_sparse_moe.experts.{e}", cfg["intermediate_size"],
                    ("w1", "w3", "w2"))
        else:
            E = cfg["num_experts"]
            ffn = cfg.get("moe_intermediate_size", cfg["intermediate_size"])
            t[p + "mlp.gate.weight"] = lin(E, H, 2.0)
            for e in range(E):
                mlp(p + f"mlp.experts.{e}", ffn)
            if cfg.get("shared_expert_intermediate_size"):
                mlp(p + "mlp.shared_expert", cfg["shared_expert_intermediate_size"])
                t[p + "mlp.shared_expert_gate.weight"] = lin(1, H)
    t["model.norm.weight"] = norm(H)
    if not cfg.get("tie_word_embeddings", False):
        t["lm_head.weight"] = lin(V, H, 3.0)
    return t


def gpt_oss_layer(t, p, cfg, lin, rng):
    """GPT-OSS's own tensors, in the dequantized HF layout: gate_up_proj is
    [E, hidden, 2 * ffn] (x @ W, gate and up interleaved by column),
    down_proj [E, ffn, hidden].  With a quantization_config the experts are
    MXFP4 (gpt_oss_mxfp4_experts)."""
    H, F, E = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_local_experts"]
    nh = cfg["num_attention_heads"]
    nkv, hd = cfg["num_key_value_heads"], cfg["head_dim"]

    def vec(*shape, s=0.1):
        return (s * rng.standard_normal(shape)).astype(np.float32)

    for x, n in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd), ("o", H)):
        t[p + f"self_attn.{x}_proj.bias"] = vec(n)
    t[p + "self_attn.sinks"] = vec(nh, s=1.0)
    t[p + "mlp.router.weight"] = lin(E, H, 2.0)
    t[p + "mlp.router.bias"] = vec(E, s=0.5)
    if cfg.get("quantization_config"):
        gpt_oss_mxfp4_experts(t, p, cfg, rng)
    else:
        t[p + "mlp.experts.gate_up_proj"] = np.stack([lin(H, 2 * F, np.sqrt(2 * F / H)).reshape(H, 2 * F)
                                                      for _ in range(E)]).astype(np.float32)
        t[p + "mlp.experts.down_proj"] = np.stack([lin(F, H, np.sqrt(H / F))
                                                   for _ in range(E)]).astype(np.float32)
    t[p + "mlp.experts.gate_up_proj_bias"] = vec(E, 2 * F)
    t[p + "mlp.experts.down_proj_bias"] = vec(E, H)


def gpt_oss_mxfp4_experts(t, p, cfg, rng):
    """The original MXFP4 layout, as OpenAI ships it (transformers'
    Mxfp4GptOssExperts): X_blocks [E, rows, cols / 32, 16] of random bytes
    (two E2M1 codes each) and X_scales [E, rows, cols / 32] of E8M0
    exponents 121..123 (weights up to 6 * 2^-4, rms about 0.09, near the
    dequantized layout's 1 / sqrt(in)); rows are the outputs: 2 * ffn
    interleaved gate/up rows, or hidden for down_proj.  Both uint8: written
    as U8 whatever --dtype says."""
    H, F, E = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_local_experts"]
    for name, rows, cols in (("gate_up_proj", 2 * F, H), ("down_proj", H, F)):
        t[p + "mlp.experts.%s_blocks" % name] = rng.integers(0, 256, (E, rows, cols // 32, 16),
                                                             dtype=np.uint8)
        t[p + "mlp.experts.%s_scales" % name] = rng.integers(121, 124, (E, rows, cols // 32),
                                                             dtype=np.uint8)


def dequantize_mxfp4(cfg, tensors):
    """--dequantized: the MXFP4 experts in the dequantized layout (every
    value exact in bf16), as transformers saves them; no quantization_config."""
    import sys
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import gpt_oss  # tests/ref/gpt_oss.py: the reference's decoder
    gpt_oss.from_mxfp4(tensors)
    for n in list(tensors):
        if n.endswith("gate_up_proj") or n.endswith("down_proj"):
            tensors[n] = tensors[n].astype(np.float32)
    del cfg["quantization_config"]


def deepseek_layer(cfg, l, p, t, lin, norm, mlp, rng):
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    dn, dr, dv = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    R, Rq = cfg["kv_lora_rank"], cfg["q_lora_rank"]
    a = p + "self_attn."
    if Rq is None:
        t[a + "q_proj.weight"] = lin(nh * (dn + dr), H)
    else:
        t[a + "q_a_proj.weight"] = lin(Rq, H)
        t[a + "q_a_layernorm.weight"] = norm(Rq)
        t[a + "q_b_proj.weight"] = lin(nh * (dn + dr), Rq)
    t[a + "kv_a_proj_with_mqa.weight"] = lin(R + dr, H)
    t[a + "kv_a_layernorm.weight"] = norm(R)
    t[a + "kv_b_proj.weight"] = lin(nh * (dn + dv), R)
    t[a + "o_proj.weight"] = lin(H, nh * dv)
    if not is_moe_layer(cfg, l):
        mlp(p + "mlp", cfg["intermediate_size"])
        return
    E, ffn = cfg["n_routed_experts"], cfg["moe_intermediate_size"]
    # sigmoid saturates: a gain of 1 keeps its scores apart (near 1 they
    # would tie, and any rounding would flip the choice)
    t[p + "mlp.gate.weight"] = lin(E, H, 1.0 if cfg["scoring_func"] == "sigmoid" else 2.0)
    if cfg["topk_method"] == "noaux_tc":
        # positive, of the order of the score gaps: it changes choices, and
        # biased scores stay > 0 (HF masks dropped groups to 0.0)
        t[p + "mlp.gate.e_score_correction_bias"] = rng.uniform(0.0, 0.1, E).astype(np.float32)
    for e in range(E):
        mlp(p + f"mlp.experts.{e}", ffn)
    if cfg.get("n_shared_experts"):
        mlp(p + "mlp.shared_experts", ffn * cfg["n_shared_experts"])


def glm4_moe_layer(cfg, l, p, t, lin, norm, mlp, rng):
    """A Glm4MoeDecoderLayer's tensors; layers from num_hidden_layers on are
    the next-token-prediction layers of the real checkpoints: a MoE layer
    plus eh_proj ([H, 2H]), enorm, hnorm and shared_head.norm."""
    H, nh, nkv, hd = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
                      cfg["head_dim"])
    a = p + "self_attn."
    t[a + "q_proj.weight"] = lin(nh * hd, H)
    t[a + "k_proj.weight"] = lin(nkv * hd, H)
    t[a + "v_proj.weight"] = lin(nkv * hd, H)
    t[a + "o_proj.weight"] = lin(H, nh * hd)
    if cfg.get("attention_bias"):
        for x, n in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd)):
            t[a + f"{x}_proj.bias"] = (0.1 * rng.standard_normal(n)).astype(np.float32)
    if cfg.get("use_qk_norm"):
        t[a + "q_norm.weight"] = norm(hd)
        t[a + "k_norm.weight"] = norm(hd)
    if not is_moe_layer(cfg, l):
        mlp(p + "mlp", cfg["intermediate_size"])
    else:
        E, ffn = cfg["n_routed_experts"], cfg["moe_intermediate_size"]
        # sigmoid scoring: gain 1 and a small positive selection bias, as
        # for DeepSeek-V3 (deepseek_layer)
        t[p + "mlp.gate.weight"] = lin(E, H, 1.0)
        t[p + "mlp.gate.e_score_correction_bias"] = rng.uniform(0.0, 0.1, E).astype(np.float32)
        for e in range(E):
            mlp(p + f"mlp.experts.{e}", ffn)
        mlp(p + "mlp.shared_experts", ffn * cfg["n_shared_experts"])
    if l >= cfg["num_hidden_layers"]:
        t[p + "eh_proj.weight"] = lin(H, 2 * H)
        t[p + "enorm.weight"] = norm(H)
        t[p + "hnorm.weight"] = norm(H)
        t[p + "shared_head.norm.weight"] = norm(H)


def qwen3_5_moe_tensors(cfg, rng):
    """Qwen3.5-MoE's tensors (Qwen3_5MoeForConditionalGeneration), under the
    real checkpoints' names: the language model under model.language_model.,
    lm_head at the top, the MTP head under mtp., a stub of the vision tower
    under model.visual..  The model's RMSNorms are zero-centred (norm(x) *
    (1 + w), HF initialises w to 0): their weights are 0.1 * randn; the
    DeltaNet's gated norm (linear_attn.norm) has an ordinary weight."""
    tc = text_config(cfg)
    H, V = tc["hidden_size"], tc["vocab_size"]
    E = tc["num_experts"]
    P = "model.language_model."
    t = {}

    def lin(out, inp, gain=1.0):
        return (rng.standard_normal((out, inp)) * gain / np.sqrt(inp)).astype(np.float32)

    def vec(n, s=0.1, mean=0.0):
        return (mean + s * rng.standard_normal(n)).astype(np.float32)

    def mlp(prefix, ffn):
        t[prefix + ".gate_proj.weight"] = lin(ffn, H)
        t[prefix + ".up_proj.weight"] = lin(ffn, H)
        t[prefix + ".down_proj.weight"] = lin(H, ffn)

    def layer(p, kind):
        t[p + "input_layernorm.weight"] = vec(H)
        t[p + "post_attention_layernorm.weight"] = vec(H)
        if kind == "linear_attention":
            qwen3_5_moe_deltanet(tc, p + "linear_attn.", t, lin, vec, rng)
        else:
            nh, nkv, hd = tc["num_attention_heads"], tc["num_key_value_heads"], tc["head_dim"]
            a = p + "self_attn."
            t[a + "q_proj.weight"] = lin(nh * hd * 2, H)   # per head: hd query rows, hd gate rows
            t[a + "k_proj.weight"] = lin(nkv * hd, H)
            t[a + "v_proj.weight"] = lin(nkv * hd, H)
            t[a + "o_proj.weight"] = lin(H, nh * hd)
            t[a + "q_norm.weight"] = vec(hd)
            t[a + "k_norm.weight"] = vec(hd)
        t[p + "mlp.gate.weight"] = lin(E, H, 2.0)
        for e in range(E):
            mlp(p + f"mlp.experts.{e}", tc["moe_intermediate_size"])
        mlp(p + "mlp.shared_expert", tc["shared_expert_intermediate_size"])
        t[p + "mlp.shared_expert_gate.weight"] = lin(1, H)

    t[P + "embed_tokens.weight"] = rng.standard_normal((V, H)).astype(np.float32)
    for l in range(tc["num_hidden_layers"]):
        layer(f"{P}layers.{l}.", tc["layer_types"][l])
    t[P + "norm.weight"] = vec(H)
    t["lm_head.weight"] = lin(V, H, 3.0)
    # the MTP head (ignored by the text model): fc over [embedding | hidden],
    # its norms and full-attention MoE layers
    t["mtp.fc.weight"] = lin(H, 2 * H)
    for n in ("norm", "pre_fc_norm_embedding", "pre_fc_norm_hidden"):
        t[f"mtp.{n}.weight"] = vec(H)
    for l in range(tc.get("mtp_num_hidden_layers", 1)):
        layer(f"mtp.layers.{l}.", "full_attention")
    # a stub of the vision tower (ignored by the text model)
    vc = cfg["vision_config"]
    vh, ps, tps = vc["hidden_size"], vc["patch_size"], vc["temporal_patch_size"]
    t["model.visual.patch_embed.proj.weight"] = (
        0.1 * rng.standard_normal((vh, vc["in_channels"], tps, ps, ps))).astype(np.float32)
    merged = vh * vc["spatial_merge_size"] ** 2
    t["model.visual.merger.linear_fc1.weight"] = lin(merged, merged)
    return t


def qwen3_next_tensors(cfg, rng):
    """Qwen3-Next's tensors: Qwen3.5's text model (drawn alike), under
    "model.", its DeltaNet projections fused as Qwen3NextGatedDeltaNet
    holds them: in_proj_qkvz, for each key head g, q_g, k_g, then v and z
    of its r = v_heads / k_heads value heads; in_proj_ba b then a of them."""
    tc = dict(cfg)
    q35 = {"architectures": [QWEN3_5_MOE], "text_config": dict(
        tc, rope_parameters={"rope_theta": tc["rope_theta"],
                             "partial_rotary_factor": tc["partial_rotary_factor"]}),
           "vision_config": CONFIGS["qwen3_5_moe"]["vision_config"]}
    nk, nv = tc["linear_num_key_heads"], tc["linear_num_value_heads"]
    dk, dv = tc["linear_key_head_dim"], tc["linear_value_head_dim"]
    r, H = nv // nk, tc["hidden_size"]
    t = {}
    for k, v in qwen3_5_moe_tensors(q35, rng).items():
        if k.startswith("model.language_model."):
            t["model." + k[len("model.language_model."):]] = v
        elif k == "lm_head.weight":
            t[k] = v
    for a in [k[:-len("in_proj_qkv.weight")] for k in t if k.endswith("in_proj_qkv.weight")]:
        qkv, z = t.pop(a + "in_proj_qkv.weight"), t.pop(a + "in_proj_z.weight")
        b, al = t.pop(a + "in_proj_b.weight"), t.pop(a + "in_proj_a.weight")
        q, k, v = qkv[:nk * dk], qkv[nk * dk:2 * nk * dk], qkv[2 * nk * dk:]
        t[a + "in_proj_qkvz.weight"] = np.concatenate(
            [np.concatenate([q[g * dk:(g + 1) * dk], k[g * dk:(g + 1) * dk],
                             v[g * r * dv:(g + 1) * r * dv], z[g * r * dv:(g + 1) * r * dv]])
             for g in range(nk)]).reshape(-1, H)
        t[a + "in_proj_ba.weight"] = np.concatenate(
            [np.concatenate([b[g * r:(g + 1) * r], al[g * r:(g + 1) * r]])
             for g in range(nk)]).reshape(-1, H)
    return t


def qwen3_5_moe_deltanet(tc, a, t, lin, vec, rng):
    """a Gated DeltaNet layer's tensors (Qwen3_5MoeGatedDeltaNet): in_proj_qkv
    rows q, k, v; conv1d [conv_dim, 1, kernel]; A_log = log(uniform(0.5, 4))
    and dt_bias uniform(-4, 0), so that g = -exp(A_log) * softplus(a +
    dt_bias) spreads from per-token decays near 1 (a state that lasts tens
    of tokens, across chunks) to near 0"""
    H = tc["hidden_size"]
    nk, nv = tc["linear_num_key_heads"], tc["linear_num_value_heads"]
    dk, dv, K = tc["linear_key_head_dim"], tc["linear_value_head_dim"], tc["linear_conv_kernel_dim"]
    conv_dim = 2 * nk * dk + nv * dv
    t[a + "in_proj_qkv.weight"] = lin(conv_dim, H)
    t[a + "in_proj_z.weight"] = lin(nv * dv, H)
    t[a + "in_proj_b.weight"] = lin(nv, H)
    t[a + "in_proj_a.weight"] = lin(nv, H)
    t[a + "conv1d.weight"] = (rng.standard_normal((conv_dim, 1, K)) / np.sqrt(K)).astype(np.float32)
    t[a + "dt_bias"] = rng.uniform(-4.0, 0.0, nv).astype(np.float32)
    t[a + "A_log"] = np.log(rng.uniform(0.5, 4.0, nv)).astype(np.float32)
    t[a + "norm.weight"] = vec(dv, mean=1.0)
    t[a + "out_proj.weight"] = lin(H, nv * dv)


def encode(a, dtype):
    if dtype == "U8":
        return np.ascontiguousarray(a, dtype=np.uint8).tobytes()
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    if dtype == "BF16":
        u = a.view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16   # round to nearest even
        return u.astype("<u2").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        dt = "U8" if tensors[name].dtype == np.uint8 else dtype
        b = encode(tensors[name], dt)
        header[name] = {"dtype": dt, "shape": list(tensors[name].shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def fuse_experts(t):
    """Per-expert tensors as transformers 5's Qwen3_5MoeExperts holds them:
    gate_up_proj [E, 2F, H] (gate's rows, then up's), down_proj [E, H, F]."""
    pre = sorted({k[:k.index("experts.") + len("experts.")] for k in t
                  if ".mlp.experts." in k and k.endswith(".gate_proj.weight")})
    for p in pre:
        E = len([k for k in t if k.startswith(p) and k.endswith(".gate_proj.weight")])
        t[p + "gate_up_proj"] = np.stack(
            [np.concatenate([t.pop(f"{p}{e}.gate_proj.weight"), t.pop(f"{p}{e}.up_proj.weight")])
             for e in range(E)])
        t[p + "down_proj"] = np.stack([t.pop(f"{p}{e}.down_proj.weight") for e in range(E)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("arch", choices=sorted(CONFIGS))
    ap.add_argument("out")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dequantized", action="store_true",
                    help="gpt_oss_mxfp4: write the experts in the dequantized layout")
    ap.add_argument("--fused-experts", action="store_true",
                    help="each layer's experts in two 3-D tensors, as transformers 5 saves "
                         "them (mlp.experts.gate_up_proj, mlp.experts.down_proj)")
    a = ap.parse_args()

    cfg = copy.deepcopy(CONFIGS[a.arch])
    cfg["torch_dtype"] = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[a.dtype]
    text_config(cfg)["torch_dtype"] = cfg["torch_dtype"]
    rng = np.random.default_rng(a.seed)
    tensors = make_tensors(cfg, rng)
    if a.dequantized:
        dequantize_mxfp4(cfg, tensors)
    if a.fused_experts:
        fuse_experts(tensors)
    os.makedirs(a.out, exist_ok=True)
    for f in os.listdir(a.out):
        if f.startswith("model") and (f.endswith(".safetensors") or f.endswith(".json")):
            os.unlink(os.path.join(a.out, f))
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if a.shards <= 1:
        write_safetensors(os.path.join(a.out, "model.safetensors"), tensors, a.dtype)
        return
    names = sorted(tensors)
    wmap = {}
    for i in range(a.shards):
        fn = f"model-{i + 1:05d}-of-{a.shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[i::a.shards]}
        write_safetensors(os.path.join(a.out, fn), part, a.dtype)
        wmap.update({n: fn for n in part})
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": wmap}, f, indent=2)


if __name__ == "__main__":
    main()
