# SPDX-License-Identifier: MIT OR GPL-2.0
"""GLM-4.5 / 4.6 MoE (Glm4MoeForCausalLM) for the numpy reference
(reference.py), written from Hugging Face's modeling_glm4_moe.py
(Glm4MoeTopkRouter, Glm4MoeMoE.route_tokens_to_experts, Glm4MoeDecoderLayer),
in float64.

The attention is reference.py's Model.attention: q/k/v biases when
attention_bias, per-head RMSNorm of q and k over head_dim (q_norm / k_norm,
eps rms_norm_eps) before RoPE when use_qk_norm, and partial RoPE: only the
first int(head_dim * partial_rotary_factor) dims of each head are rotated
(rotate_half over those dims), the rest pass through.

Routing (DeepSeek-V3's noaux_tc): sigmoid scores; the choice on scores +
e_score_correction_bias, restricted to the topk_group groups whose best two
biased scores sum highest (the others' scores masked to 0.0); weights from
the unbiased scores, renormalised when norm_topk_prob (+ 1e-20, even for
top_k == 1, unlike DeepSeek), then always times routed_scaling_factor.  The
shared experts (a plain SwiGLU MLP of moe_intermediate_size *
n_shared_experts) are always added.  Layer l is MoE if l >=
first_k_dense_replace.  The checkpoint's next-token-prediction layers
(model.layers.{num_hidden_layers}..., num_nextn_predict_layers of them) are
not part of the forward pass: HF ignores them on load.
"""
import numpy as np

import deepseek  # tests/ref/deepseek.py: the scored router GLM shares

ARCHS = ("Glm4MoeForCausalLM",)


def is_moe(c, l):
    return l >= c.get("first_k_dense_replace", 0)


def moe(m, x, p):
    c = m.cfg
    logits = m.lin(x, p + "mlp.gate.weight")
    bias = m.w.get(p + "mlp.gate.e_score_correction_bias")
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        # DeepSeek-V3's router (sigmoid, noaux_tc, scaled), renormalising any top_k
        ids, wt = deepseek.route(c, True, logits[t], bias, norm_any_k=True)
        m.trace.append((t, m.layer, [int(e) for e in ids], [float(v) for v in wt]))
        for e, we in zip(ids, wt):
            out[t] += we * m.mlp(x[t:t + 1], f"{p}mlp.experts.{e}")[0]
    return out + m.mlp(x, p + "mlp.shared_experts")
