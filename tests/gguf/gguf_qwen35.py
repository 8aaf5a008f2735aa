# SPDX-License-Identifier: MIT OR GPL-2.0
"""Qwen3.5/3.6-MoE (Qwen3_5MoeForConditionalGeneration's text model) as
llama.cpp's converter writes it (GGUF arch "qwen35moe"), for write_gguf.py:
written from its conversion/qwen.py (Qwen3NextModel,
_LinearAttentionVReorderBase, _Qwen35MRopeMixin) as read in the code index.

- the text model's keys are config.json's text_config, its tensors under
  "model.language_model." (the vision tower and the MTP head are left out:
  this writer's files carry no nextn block);
- every HF name ending in "norm.weight" but linear_attn.norm.weight gets
  + 1 (HF's RMSNorm multiplies by 1 + w);
- A_log becomes ssm_a = -exp(A_log); dt_bias ssm_dt.bias; conv1d
  [channels, 1, taps] is squeezed to ne {taps, channels};
- where key and value heads differ in number, the value heads go from HF's
  groups (g * r + j, r = v_heads / k_heads) to tiles (j * k_heads + g): the
  v rows of in_proj_qkv and conv1d's v channels, in_proj_z, in_proj_b,
  in_proj_a, A_log, dt_bias and out_proj's columns;
- the full-attention layers' q_proj (q and gate per head) is written as it
  is; the FFN's input norm is post_attention_norm.

Qwen3-Next (Qwen3NextForCausalLM, "qwen3next"): the same, from a flat
config and "model.", no value heads reordered, its fused in_proj_qkvz split
into attn_qkv (all q, all k, all v) and attn_gate (z), in_proj_ba written
as it is (ssm_ba), no rope.dimension_sections.
"""
import numpy as np

# GGUF metadata value types (the spec's numbers, as write_gguf.py's)
U32, I32, ARRAY = 4, 5, 9

HF_ARCH = "Qwen3_5MoeForConditionalGeneration"
HF_NEXT = "Qwen3NextForCausalLM"
PREFIX = "model.language_model."


def prepare(cfg, w):
    """The text config (rope_parameters' theta at the top) and the text
    model's tensors renamed to "model.", norms + 1."""
    tc = dict(cfg.get("text_config", cfg))
    pre = PREFIX if "text_config" in cfg else "model."
    rp = tc.get("rope_parameters") or {}
    tc.setdefault("rope_theta", rp.get("rope_theta", 10000.0))
    tc.setdefault("partial_rotary_factor", rp.get("partial_rotary_factor", 0.25))
    tc["mrope_section"] = rp.get("mrope_section", [11, 11, 10])
    tc["architectures"] = cfg["architectures"]
    out = {}
    for k, v in w.items():
        if not k.startswith(pre) or k.startswith("model.visual."):
            if k != "lm_head.weight":
                continue        # model.visual.*, mtp.*
        k = "model." + k[len(pre):] if k.startswith(pre) else k
        if k.endswith("norm.weight") and not k.endswith("linear_attn.norm.weight"):
            v = v + 1.0
        out[k] = v
    return tc, out


def is_linear(cfg, l):
    lt = cfg.get("layer_types")
    if lt:
        return lt[l] == "linear_attention"
    return (l + 1) % cfg.get("full_attention_interval", 4) != 0


def meta(g, cfg, a):
    """qwen35moe's own keys (the caller writes the common ones)."""
    nk, nv = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    g.add(a + "ssm.conv_kernel", U32, cfg["linear_conv_kernel_dim"])
    g.add(a + "ssm.state_size", U32, cfg["linear_key_head_dim"])
    g.add(a + "ssm.group_count", U32, nk)
    g.add(a + "ssm.time_step_rank", U32, nv)
    g.add(a + "ssm.inner_size", U32, cfg["linear_value_head_dim"] * nv)
    g.add(a + "full_attention_interval", U32, cfg.get("full_attention_interval", 4))
    g.add(a + "rope.dimension_count", U32,
          int(cfg["head_dim"] * cfg.get("partial_rotary_factor", 0.25)))
    if cfg["architectures"][0] != HF_NEXT:
        g.add(a + "rope.dimension_sections", ARRAY, list(cfg["mrope_section"]) + [0], I32)


def tile(a, nk, nv, d):
    """Rows of value heads (d rows each) from HF's groups to llama.cpp's tiles."""
    r = nv // nk
    a = np.asarray(a)
    if nk == nv:
        return a
    sh = a.shape
    return a.reshape((nk, r, d) + sh[1:]).swapaxes(0, 1).reshape(sh)


def next_layer(put, cfg, w, a, b):
    """Qwen3-Next's fused projections as llama.cpp's qwen3next holds them."""
    nk, nv = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
    r = nv // nk
    qkvz = np.asarray(w[a + "in_proj_qkvz.weight"])
    g4 = qkvz.reshape(nk, 2 * dk + 2 * r * dv, -1)
    q, k = g4[:, :dk], g4[:, dk:2 * dk]
    v, z = g4[:, 2 * dk:2 * dk + r * dv], g4[:, 2 * dk + r * dv:]
    H = qkvz.shape[1]
    put(b + "attn_qkv.weight", np.concatenate([q.reshape(-1, H), k.reshape(-1, H),
                                               v.reshape(-1, H)]))
    put(b + "attn_gate.weight", z.reshape(-1, H))
    put(b + "ssm_ba.weight", w[a + "in_proj_ba.weight"])


def delta_layer(put, cfg, w, p, b):
    """One Gated DeltaNet layer's tensors (p: "model.layers.N.", b: "blk.N.")."""
    nk, nv = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
    kd = 2 * nk * dk
    a = p + "linear_attn."
    if cfg["architectures"][0] == HF_NEXT:
        # no reordering: tile() of one group per key head is the identity
        nk = nv
        next_layer(put, cfg, w, a, b)
    else:
        qkv = w[a + "in_proj_qkv.weight"]
        put(b + "attn_qkv.weight", np.concatenate([qkv[:kd], tile(qkv[kd:], nk, nv, dv)]))
        put(b + "attn_gate.weight", tile(w[a + "in_proj_z.weight"], nk, nv, dv))
        put(b + "ssm_beta.weight", tile(w[a + "in_proj_b.weight"], nk, nv, 1))
        put(b + "ssm_alpha.weight", tile(w[a + "in_proj_a.weight"], nk, nv, 1))
    conv = w[a + "conv1d.weight"][:, 0, :]
    put(b + "ssm_conv1d.weight", np.concatenate([conv[:kd], tile(conv[kd:], nk, nv, dv)]),
        "F32")
    put(b + "ssm_a", tile(-np.exp(w[a + "A_log"]), nk, nv, 1))
    put(b + "ssm_dt.bias", tile(w[a + "dt_bias"], nk, nv, 1))
    put(b + "ssm_norm.weight", w[a + "norm.weight"])
    put(b + "ssm_out.weight", tile(w[a + "out_proj.weight"].T, nk, nv, dv).T)
