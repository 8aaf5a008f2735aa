# SPDX-License-Identifier: MIT OR GPL-2.0
"""DeepSeek-V2 / V3 for the numpy reference (reference.py), written from
DeepSeek's modeling_deepseek.py (DeepseekV2Attention / V3, DeepseekV2MoEGate
/ V3's MoEGate, DeepseekV2MoE), in float64, the naive (non-absorbed) form:
every position's per-head keys and values are expanded from the latent.

MLA: q = q_proj(x), or q_b_proj(rmsnorm(q_a_proj(x))); kv_a_proj_with_mqa(x)
= [latent | k_pe]; kv_b_proj(rmsnorm(latent)) = per head [k_nope | v];
RoPE on q_pe and the shared k_pe after HF's de-interleave
(view(d/2, 2).transpose) and rotate_half; softmax scale 1/sqrt(qk_head_dim).
The latent norms are DeepseekV2RMSNorm(rank) with its default eps 1e-6.

Routing: V2 softmax scores, greedy or group_limited_greedy (groups ranked
by their best score, the others masked to 0); V3 sigmoid scores plus
e_score_correction_bias for the choice (noaux_tc: groups ranked by the sum
of their best two), weights from the unbiased scores.  Renormalised when
top_k > 1 and norm_topk_prob (+ 1e-20); V2 multiplies by
routed_scaling_factor only otherwise, V3 always.  n_shared_experts always
added; layer l is MoE if l >= first_k_dense_replace and l % moe_layer_freq
== 0.
"""
import numpy as np

ARCHS = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")
LATENT_EPS = 1e-6


def is_moe(c, l):
    return (c.get("n_routed_experts") is not None and l >= c.get("first_k_dense_replace", 0)
            and l % c.get("moe_layer_freq", 1) == 0)


def _rms(x, w, eps):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def _rope(x, pos, theta):
    # x [T, heads, d]; HF DeepSeek: de-interleave, then rotate_half
    T, nh, d = x.shape
    x = x.reshape(T, nh, d // 2, 2).transpose(0, 1, 3, 2).reshape(T, nh, d)
    inv = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    f = pos[:, None].astype(np.float64) * inv[None, :]
    emb = np.concatenate([f, f], axis=-1)
    cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * cos + rot * sin


def attention(m, x, p, pos):
    c, T = m.cfg, x.shape[0]
    nh, dn, dr, dv = (c["num_attention_heads"], c["qk_nope_head_dim"], c["qk_rope_head_dim"],
                      c["v_head_dim"])
    R, qhd = c["kv_lora_rank"], dn + dr
    if c.get("q_lora_rank") is None:
        q = m.lin(x, p + "q_proj.weight")
    else:
        qa = _rms(m.lin(x, p + "q_a_proj.weight"), m.w[p + "q_a_layernorm.weight"], LATENT_EPS)
        q = m.lin(qa, p + "q_b_proj.weight")
    q = q.reshape(T, nh, qhd)
    q_nope, q_pe = q[..., :dn], q[..., dn:]
    ckv = m.lin(x, p + "kv_a_proj_with_mqa.weight")
    lat, k_pe = ckv[:, :R], ckv[:, R:]
    kv = m.lin(_rms(lat, m.w[p + "kv_a_layernorm.weight"], LATENT_EPS), p + "kv_b_proj.weight")
    kv = kv.reshape(T, nh, dn + dv)
    k_nope, v = kv[..., :dn], kv[..., dn:]
    q_pe = _rope(q_pe, pos, m.theta)
    k_pe = _rope(k_pe[:, None, :], pos, m.theta)
    qf = np.concatenate([q_nope, q_pe], axis=-1)
    kf = np.concatenate([k_nope, np.repeat(k_pe, nh, axis=1)], axis=-1)
    scores = np.einsum("thd,shd->hts", qf, kf) * qhd ** -0.5
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    scores = np.where(mask[None], -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    pr = np.exp(scores)
    pr /= pr.sum(axis=-1, keepdims=True)
    o = np.einsum("hts,shd->thd", pr, v).reshape(T, nh * dv)
    return m.lin(o, p + "o_proj.weight")


def route(c, v3, logits, bias, norm_any_k=False):
    """ids (rank order: best selection score first, ties to the lower id)
    and weights of one token.  norm_any_k: renormalise a lone expert's
    weight too (GLM-4.5's router; DeepSeek's only with top_k > 1)."""
    E, k = c["n_routed_experts"], c["num_experts_per_tok"]
    meth = c.get("topk_method", "noaux_tc" if v3 else "greedy")
    sigmoid = c.get("scoring_func", "sigmoid" if v3 else "softmax") == "sigmoid"
    if sigmoid:
        scores = 1.0 / (1.0 + np.exp(-logits))
    else:
        scores = np.exp(logits - logits.max())
        scores /= scores.sum()
    sel = scores + bias if meth == "noaux_tc" else scores.copy()
    ng, kg = c.get("n_group", 1), c.get("topk_group", 1)
    if meth in ("group_limited_greedy", "noaux_tc") and ng > 1:
        g = sel.reshape(ng, E // ng)
        top = 2 if meth == "noaux_tc" else 1
        gscore = -np.sort(-g, axis=1)[:, :top].sum(axis=1)
        keep = np.argsort(-gscore, kind="stable")[:kg]
        gmask = np.zeros(ng, dtype=bool)
        gmask[keep] = True
        sel = np.where(np.repeat(gmask, E // ng), sel, 0.0)
    ids = np.argsort(-sel, kind="stable")[:k]
    w = scores[ids]
    norm = (k > 1 or norm_any_k) and c.get("norm_topk_prob", False)
    if norm:
        w = w / (w.sum() + 1e-20)
    if v3 or not norm:
        w = w * c.get("routed_scaling_factor", 1.0)
    return ids, w


def moe(m, x, p):
    c = m.cfg
    v3 = m.arch == "DeepseekV3ForCausalLM"
    logits = m.lin(x, p + "mlp.gate.weight")
    bias = m.w.get(p + "mlp.gate.e_score_correction_bias")
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        ids, wt = route(c, v3, logits[t], bias)
        m.trace.append((t, m.layer, [int(e) for e in ids], [float(v) for v in wt]))
        for e, we in zip(ids, wt):
            out[t] += we * m.mlp(x[t:t + 1], f"{p}mlp.experts.{e}")[0]
    if c.get("n_shared_experts"):
        out = out + m.mlp(x, p + "mlp.shared_experts")
    return out
