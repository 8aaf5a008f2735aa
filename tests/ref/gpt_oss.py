# SPDX-License-Identifier: MIT OR GPL-2.0
"""GPT-OSS for the numpy reference (reference.py's Model calls these).

Written from transformers' modeling_gpt_oss.py, not from the C engine:
eager attention with q/k/v/o biases and a learned sink logit per head
appended to every row of scores (softmax over [scores, sink], the sink
column dropped), a causal mask that on "sliding_attention" layers also
hides positions j <= i - sliding_window, rotate_half RoPE (YaRN-scaled with
rope_scaling, as reference.rope does it); a router with a
bias, torch.topk of its logits and a softmax over the k selected; experts
x @ gate_up_proj[e] + bias with gate = [..., ::2], up = [..., 1::2],
gate clamped above at swiglu_limit, up clamped to +-limit,
glu = gate * sigmoid(1.702 gate), out = ((up + 1) * glu) @ down_proj[e] + bias.
"""
import numpy as np

ALPHA = 1.702


def attention(m, x, p, pos, layer, rope):
    w, T, c = m.w, x.shape[0], m.cfg
    q = x @ w[p + "q_proj.weight"].T + w[p + "q_proj.bias"]
    k = x @ w[p + "k_proj.weight"].T + w[p + "k_proj.bias"]
    v = x @ w[p + "v_proj.weight"].T + w[p + "v_proj.bias"]
    q = rope(q.reshape(T, m.nh, m.hd), pos, m.theta, m.rope_scaling, m.max_pos)
    k = rope(k.reshape(T, m.nkv, m.hd), pos, m.theta, m.rope_scaling, m.max_pos)
    v = v.reshape(T, m.nkv, m.hd)
    rep = m.nh // m.nkv
    k = np.repeat(k, rep, axis=1)
    v = np.repeat(v, rep, axis=1)
    scores = np.einsum("thd,shd->hts", q, k) * m.hd ** -0.5
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    hidden = j > i
    if c["layer_types"][layer] == "sliding_attention":
        hidden |= j <= i - c["sliding_window"]
    scores = np.where(hidden[None], -np.inf, scores)
    sinks = np.broadcast_to(w[p + "sinks"][:, None, None], (m.nh, T, 1))
    comb = np.concatenate([scores, sinks], axis=-1)
    comb = comb - comb.max(axis=-1, keepdims=True)
    pr = np.exp(comb)
    pr = pr / pr.sum(axis=-1, keepdims=True)
    o = np.einsum("hts,shd->thd", pr[..., :-1], v).reshape(T, m.nh * m.hd)
    return o @ w[p + "o_proj.weight"].T + w[p + "o_proj.bias"]


def moe(m, x, p):
    w, c = m.w, m.cfg
    k = c.get("num_experts_per_tok") or c["experts_per_token"]
    lim = c["swiglu_limit"]
    logits = x @ w[p + "mlp.router.weight"].T + w[p + "mlp.router.bias"]
    gu_w, gu_b = w[p + "mlp.experts.gate_up_proj"], w[p + "mlp.experts.gate_up_proj_bias"]
    dn_w, dn_b = w[p + "mlp.experts.down_proj"], w[p + "mlp.experts.down_proj_bias"]
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        sel = np.argsort(-logits[t], kind="stable")[:k]
        top = logits[t, sel]
        wt = np.exp(top - top.max())
        wt = wt / wt.sum()
        m.trace.append((t, m.layer, [int(e) for e in sel], [float(v) for v in wt]))
        for e, we in zip(sel, wt):
            gu = x[t] @ gu_w[e] + gu_b[e]
            gate = np.minimum(gu[::2], lim)
            up = np.clip(gu[1::2], -lim, lim)
            glu = gate / (1.0 + np.exp(-ALPHA * gate))
            out[t] += we * (((up + 1.0) * glu) @ dn_w[e] + dn_b[e])
    return out
