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

The original MXFP4 layout (OpenAI's checkpoints, transformers'
integrations/mxfp4.py) is decoded here from its description: X_blocks
[E, rows, cols / 32, 16] and X_scales [E, rows, cols / 32], both uint8; the
32 values of block b of a row are E2M1 codes, value 2k the low nibble of
byte k and 2k + 1 its high nibble, times 2^(scale - 127); the decoded
[E, rows, cols] is transposed to the dequantized layout's [E, cols, rows]
(gate_up: rows = 2 * ffn outputs, interleaved; down: rows = hidden).
The experts' inputs are rounded to an activation form when m.acts names
one for "...experts.gate_up_proj" / "...experts.down_proj" (quants.py).
"""
import numpy as np

import quants

ALPHA = 1.702
# E2M1 codes 0..15: magnitudes 0 0.5 1 1.5 2 3 4 6, bit 3 the sign
FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def mxfp4_decode(blocks, scales):
    """[..., rows, nb, 16] codes and [..., rows, nb] exponents -> float64
    [..., rows, nb * 32]"""
    blocks = np.asarray(blocks, dtype=np.uint8)
    scales = np.asarray(scales, dtype=np.int64)
    assert blocks.shape[:-1] == scales.shape and blocks.shape[-1] == 16
    codes = np.empty(blocks.shape[:-1] + (32,), dtype=np.int64)
    codes[..., 0::2] = blocks & 15
    codes[..., 1::2] = blocks >> 4
    vals = FP4[codes] * np.ldexp(1.0, scales - 127)[..., None]
    return vals.reshape(blocks.shape[:-2] + (blocks.shape[-2] * 32,))


def from_mxfp4(w):
    """Replace every X_blocks / X_scales pair of @w by X in the dequantized
    layout, [E, cols, rows]."""
    for name in [n for n in w if n.endswith("_blocks")]:
        base = name[:-len("_blocks")]
        dense = mxfp4_decode(w.pop(name), w.pop(base + "_scales"))
        w[base] = np.ascontiguousarray(np.swapaxes(dense, 1, 2))
    return w


def _act(m, name, x):
    form = m.acts.get(name, "f32")
    return x if form == "f32" else quants.act_quant(form, x)


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
    gu, dn = p + "mlp.experts.gate_up_proj", p + "mlp.experts.down_proj"
    gu_w, gu_b = w[gu], w[gu + "_bias"]
    dn_w, dn_b = w[dn], w[dn + "_bias"]
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        sel = np.argsort(-logits[t], kind="stable")[:k]
        top = logits[t, sel]
        wt = np.exp(top - top.max())
        wt = wt / wt.sum()
        m.trace.append((t, m.layer, [int(e) for e in sel], [float(v) for v in wt]))
        for e, we in zip(sel, wt):
            h = _act(m, gu, x[t]) @ gu_w[e] + gu_b[e]
            gate = np.minimum(h[::2], lim)
            up = np.clip(h[1::2], -lim, lim)
            glu = gate / (1.0 + np.exp(-ALPHA * gate))
            out[t] += we * (_act(m, dn, (up + 1.0) * glu) @ dn_w[e] + dn_b[e])
    return out
