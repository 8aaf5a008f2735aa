#!/usr/bin/python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Qwen3.5-MoE (Qwen3_5MoeForConditionalGeneration, model_type qwen3_5_moe:
its text model) for the numpy reference (reference.py's Model calls these),
written from Hugging Face's modeling_qwen3_5_moe.py (Qwen3_5MoeTextModel,
Qwen3_5MoeDecoderLayer, Qwen3_5MoeAttention, Qwen3_5MoeGatedDeltaNet with
torch_chunk_gated_delta_rule and torch_recurrent_gated_delta_rule,
Qwen3_5MoeRMSNorm, Qwen3_5MoeRMSNormGated, Qwen3_5MoeTopKRouter,
Qwen3_5MoeSparseMoeBlock) and configuration_qwen3_5_moe.py, in float64.

Config: config.json is the multimodal one; the text model's is its
text_config (text_config() below lifts rope_parameters' rope_theta and
partial_rotary_factor, default 0.25, and fills layer_types from
full_attention_interval when absent).  Tensors are under
"model.language_model." (embed_tokens, layers.N, norm), lm_head.weight at
the top; the vision tower (model.visual.*) and the multi-token-prediction
head (mtp.*) are not part of the text forward pass (HF ignores ^mtp.* on
load).

Decoder layer l: x += mixer(norm(x)), x += moe(norm(x)), the mixer by
layer_types[l]; every RMSNorm of the model (input_layernorm,
post_attention_layernorm, the final norm, q_norm, k_norm) is zero-centred:
norm(x) * (1 + w), eps rms_norm_eps.

full_attention: q_proj gives per head head_dim query rows then head_dim
output-gate rows; q and k RMSNormed per head, RoPE (rotate_half) on the
first int(head_dim * partial_rotary_factor) dims of each head (text-only
positions: the three M-RoPE sections carry the same position, so M-RoPE is
plain RoPE), GQA causal softmax attention scaled by head_dim ** -0.5, the
output times sigmoid(gate), o_proj.

linear_attention (Gated DeltaNet): in_proj_qkv, a causal depthwise conv1d
over time (kernel linear_conv_kernel_dim, zeros before the first token, no
bias), SiLU, split into q, k (linear_num_key_heads heads of
linear_key_head_dim) and v (linear_num_value_heads of
linear_value_head_dim); beta = sigmoid(in_proj_b(x)), g = -exp(A_log) *
softplus(in_proj_a(x) + dt_bias) (torch's softplus: x itself above 20);
q and k L2-normalised per head (x * rsqrt(sum x^2 + 1e-6)), q scaled by
dk ** -0.5, each q/k head serving num_v / num_k consecutive value heads;
the gated delta rule from a zero state S [dk, dv] per value head: S *=
exp(g_t); S += k_t (beta_t (v_t - S^T k_t))^T; o_t = S^T q_t.  Prefill uses
the chunked form (chunks of 64, a unit-lower-triangular solve per chunk,
here by forward substitution), the recurrent form is the per-token one;
running this file checks that they agree.  Then RMSNormGated over each
value head (rmsnorm(o) * w * silu(z), z = in_proj_z(x), w an ordinary
weight) and out_proj.

MoE (every layer): softmax over all experts, top num_experts_per_tok (ties
to the lower id), always renormalised to sum 1, SwiGLU experts
(mlp.experts.E.{gate,up,down}_proj), plus the shared expert (a SwiGLU of
shared_expert_intermediate_size) times sigmoid(shared_expert_gate(x)).

usage: qwen3_5_moe.py   (the chunked-versus-recurrent self-check; prints
"N passed, N failed", exits non-zero on a failure)
"""
import sys

import numpy as np

ARCHS = ("Qwen3_5MoeForConditionalGeneration", "Qwen3NextForCausalLM")
PREFIX = "model.language_model."
NEXT = "Qwen3NextForCausalLM"     # the same text stack, a checkpoint of its own


def prefix(arch):
    """where the text model's tensors are: Qwen3.5's language model, or
    Qwen3-Next's "model."""
    return "model." if arch == NEXT else PREFIX


def unfuse_experts(w):
    """Experts saved fused, as transformers 5 writes them (Qwen3_5MoeExperts:
    gate_up_proj [E, 2F, H], gate = the first F rows of an expert; down_proj
    [E, H, F]), as per-expert tensors, in place."""
    for key in [k for k in w if k.endswith("mlp.experts.gate_up_proj")]:
        p = key[:-len("gate_up_proj")]
        gu, down = w.pop(key), w.pop(p + "down_proj")
        F = gu.shape[1] // 2
        for e in range(gu.shape[0]):
            w[f"{p}{e}.gate_proj.weight"] = gu[e, :F]
            w[f"{p}{e}.up_proj.weight"] = gu[e, F:]
            w[f"{p}{e}.down_proj.weight"] = down[e]


def defuse(c, w, pre):
    """Qwen3-Next's fused DeltaNet projections as Qwen3.5's four, in place
    (Qwen3NextGatedDeltaNet.fix_query_key_value_ordering, on the weights'
    rows): in_proj_qkvz is, for each key head g, [q_g, k_g, v_g, z_g] with
    the r = v_heads / k_heads value heads of the group in v_g and z_g;
    in_proj_ba is [b_g, a_g] for each g."""
    nk, nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    r = nv // nk
    for key in [k for k in w if k.startswith(pre) and k.endswith("linear_attn.in_proj_qkvz.weight")]:
        a = key[:-len("in_proj_qkvz.weight")]
        qkvz = w.pop(key)
        H = qkvz.shape[1]
        g4 = qkvz.reshape(nk, 2 * dk + 2 * r * dv, H)
        q, k = g4[:, :dk], g4[:, dk:2 * dk]
        v, z = g4[:, 2 * dk:2 * dk + r * dv], g4[:, 2 * dk + r * dv:]
        w[a + "in_proj_qkv.weight"] = np.concatenate(
            [q.reshape(-1, H), k.reshape(-1, H), v.reshape(-1, H)])
        w[a + "in_proj_z.weight"] = z.reshape(-1, H)
        ba = w.pop(a + "in_proj_ba.weight").reshape(nk, 2 * r, H)
        w[a + "in_proj_b.weight"] = ba[:, :r].reshape(-1, H)
        w[a + "in_proj_a.weight"] = ba[:, r:].reshape(-1, H)
CHUNK = 64          # torch_chunk_gated_delta_rule's chunk_size
L2_EPS = 1e-6       # l2norm's eps (FLA's)


def text_config(cfg):
    """The text model's config of a Qwen3.5-MoE config.json: text_config,
    with architectures, rope_theta, partial_rotary_factor, rope_scaling
    (None for rope_type "default") and layer_types filled in as
    Qwen3_5MoeTextConfig does; tie_word_embeddings the text config's, else
    the top level's."""
    tc = dict(cfg.get("text_config", cfg))
    tc["architectures"] = cfg["architectures"]
    rp = tc.get("rope_parameters") or tc.get("rope_scaling") or {}
    tc["rope_theta"] = rp.get("rope_theta", tc.get("rope_theta", 10000.0))
    tc["partial_rotary_factor"] = rp.get("partial_rotary_factor",
                                         tc.get("partial_rotary_factor", 0.25))
    # M-RoPE ("default", or the older "mrope") is plain RoPE for text
    kind = rp.get("rope_type") or rp.get("type") or "default"
    tc["rope_scaling"] = None if kind in ("default", "mrope") else rp
    if "tie_word_embeddings" not in tc:
        tc["tie_word_embeddings"] = cfg.get("tie_word_embeddings", False)
    if not tc.get("layer_types"):
        n = tc.get("full_attention_interval", 4)
        tc["layer_types"] = ["linear_attention" if (i + 1) % n else "full_attention"
                             for i in range(tc["num_hidden_layers"])]
    return tc


def is_moe(c, l):
    # Qwen3-Next's dense layers (Qwen3.5's have none)
    return (l not in c.get("mlp_only_layers", [])
            and (l + 1) % c.get("decoder_sparse_step", 1) == 0)


def rms(x, w, eps):
    """Qwen3_5MoeRMSNorm: zero-centred, norm(x) * (1 + w)"""
    return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)) * (1.0 + w)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    return x / (1.0 + np.exp(-x))


def softplus(x):
    # torch.nn.functional.softplus (beta 1, threshold 20)
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def attention(m, x, p, pos, rope):
    """Qwen3_5MoeAttention; p ends in "self_attn."."""
    c, w, T = m.cfg, m.w, x.shape[0]
    nh, nkv, hd = m.nh, m.nkv, m.hd

    def proj(name):
        b = w.get(p + name + ".bias") if c.get("attention_bias", False) else None
        return m.lin(x, p + name + ".weight", b)

    qg = proj("q_proj").reshape(T, nh, 2 * hd)
    q, gate = qg[..., :hd], qg[..., hd:].reshape(T, nh * hd)
    k = proj("k_proj").reshape(T, nkv, hd)
    v = proj("v_proj").reshape(T, nkv, hd)
    q = rms(q, w[p + "q_norm.weight"], m.eps)
    k = rms(k, w[p + "k_norm.weight"], m.eps)
    q = rope(q, pos, m.theta, m.rope_scaling, m.max_pos, m.rotary_dim)
    k = rope(k, pos, m.theta, m.rope_scaling, m.max_pos, m.rotary_dim)
    rep = nh // nkv
    k = np.repeat(k, rep, axis=1)   # repeat_kv: head h uses kv head h // rep
    v = np.repeat(v, rep, axis=1)
    scores = np.einsum("thd,shd->hts", q, k) * hd ** -0.5
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    scores = np.where(mask[None], -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    pr = np.exp(scores)
    pr /= pr.sum(axis=-1, keepdims=True)
    o = np.einsum("hts,shd->thd", pr, v).reshape(T, nh * hd)
    o = o * sigmoid(gate)
    b = w.get(p + "o_proj.bias") if c.get("attention_bias", False) else None
    return m.lin(o, p + "o_proj.weight", b)


def causal_conv1d(x, weight):
    """x [T, C], weight [C, 1, K]: out[t, c] = sum_i weight[c, 0, i] *
    x[t - K + 1 + i, c], zeros before t = 0 (nn.Conv1d with groups = C,
    padding K - 1, the first T outputs kept)"""
    T, C = x.shape
    K = weight.shape[-1]
    xp = np.concatenate([np.zeros((K - 1, C)), x], axis=0)
    out = np.zeros((T, C))
    for i in range(K):
        out += weight[:, 0, i] * xp[i:i + T]
    return out


def l2norm(x, eps=L2_EPS):
    return x * (1.0 / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps))


def _heads(q, k, v, g, beta):
    """[T, heads, d] / [T, heads] -> per value head [H, T, d] / [H, T], q and
    k repeated to the value heads (repeat_interleave), L2-normalised, q
    scaled by dk ** -0.5 (use_qk_l2norm_in_kernel)"""
    nv = v.shape[1]
    rep = nv // k.shape[1]
    q = l2norm(np.repeat(q, rep, axis=1))
    k = l2norm(np.repeat(k, rep, axis=1))
    q = q * q.shape[-1] ** -0.5
    return (q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2),
            g.T.copy(), beta.T.copy())


def recurrent_gated_delta_rule(q, k, v, g, beta, state=None):
    """torch_recurrent_gated_delta_rule: q, k [T, nk, dk], v [T, nv, dv],
    g, beta [T, nv]; state [nv, dk, dv] or None (zeros).  Returns the
    output [T, nv, dv] and the final state."""
    q, k, v, g, beta = _heads(q, k, v, g, beta)
    H, T, dk = k.shape
    dv = v.shape[-1]
    S = np.zeros((H, dk, dv)) if state is None else state.copy()
    o = np.zeros((H, T, dv))
    for t in range(T):
        S = S * np.exp(g[:, t])[:, None, None]
        kv = np.einsum("hkv,hk->hv", S, k[:, t])
        delta = (v[:, t] - kv) * beta[:, t, None]
        S = S + k[:, t, :, None] * delta[:, None, :]
        o[:, t] = np.einsum("hkv,hk->hv", S, q[:, t])
    return o.transpose(1, 0, 2), S


def _unit_lower_solve(L, B):
    """X with (I + L) X = B, L strictly lower triangular [..., C, C]
    (solve_triangular(..., upper=False, unitriangular=True): the diagonal
    of the system is taken as 1), by forward substitution"""
    X = B.copy()
    for i in range(1, L.shape[-1]):
        X[..., i, :] -= (L[..., i:i + 1, :i] @ X[..., :i, :])[..., 0, :]
    return X


def chunk_gated_delta_rule(q, k, v, g, beta, state=None, chunk=CHUNK):
    """torch_chunk_gated_delta_rule: same arguments and results as
    recurrent_gated_delta_rule; the sequence zero-padded to whole chunks."""
    q, k, v, g, beta = _heads(q, k, v, g, beta)
    H, T, dk = k.shape
    dv = v.shape[-1]
    pad = (-T) % chunk
    if pad:
        q, k, v = (np.concatenate([a, np.zeros((H, pad, a.shape[-1]))], axis=1) for a in (q, k, v))
        g, beta = (np.concatenate([a, np.zeros((H, pad))], axis=1) for a in (g, beta))
    N = (T + pad) // chunk
    q, k, v = (a.reshape(H, N, chunk, a.shape[-1]) for a in (q, k, v))
    g, beta = g.reshape(H, N, chunk), beta.reshape(H, N, chunk)
    vb = v * beta[..., None]
    kb = k * beta[..., None]
    cum = np.cumsum(g, axis=-1)                         # log decay from the chunk start
    lower = np.tril(np.ones((chunk, chunk), dtype=bool))
    # decay[i, j] = exp(cum_i - cum_j) for j <= i, 0 above the diagonal
    decay = np.exp(np.where(lower, cum[..., :, None] - cum[..., None, :], -np.inf))
    kt = k.swapaxes(-1, -2)
    ut = (kb @ kt) * decay
    intra = (q @ kt) * decay
    L = np.tril(ut, -1)
    u = _unit_lower_solve(L, vb)                        # new_values
    w = _unit_lower_solve(L, kb * np.exp(cum)[..., None])   # k_cumdecay
    qd = q * np.exp(cum)[..., None]
    kd = k * np.exp(cum[..., -1:] - cum)[..., None]
    cd = np.exp(cum[..., -1])                           # [H, N]
    S = np.zeros((H, dk, dv)) if state is None else state.copy()
    out = np.zeros((H, N, chunk, dv))
    for n in range(N):
        vn = u[:, n] - w[:, n] @ S
        out[:, n] = qd[:, n] @ S + intra[:, n] @ vn
        S = S * cd[:, n, None, None] + kd[:, n].swapaxes(-1, -2) @ vn
    out = out.reshape(H, N * chunk, dv)[:, :T]
    return out.transpose(1, 0, 2), S


def gated_deltanet(m, x, p, rule=chunk_gated_delta_rule):
    """Qwen3_5MoeGatedDeltaNet without a cache; p ends in "linear_attn."."""
    c, w, T = m.cfg, m.w, x.shape[0]
    nk, nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    Kd, Vd = nk * dk, nv * dv
    mixed = m.lin(x, p + "in_proj_qkv.weight")
    mixed = silu(causal_conv1d(mixed, w[p + "conv1d.weight"]))
    q = mixed[:, :Kd].reshape(T, nk, dk)
    k = mixed[:, Kd:2 * Kd].reshape(T, nk, dk)
    v = mixed[:, 2 * Kd:].reshape(T, nv, dv)
    z = m.lin(x, p + "in_proj_z.weight").reshape(T, nv, dv)
    beta = sigmoid(m.lin(x, p + "in_proj_b.weight"))
    a = m.lin(x, p + "in_proj_a.weight")
    g = -np.exp(w[p + "A_log"]) * softplus(a + w[p + "dt_bias"])
    o, _ = rule(q, k, v, g, beta)
    # Qwen3_5MoeRMSNormGated: an ordinary weight, then the SiLU gate
    o = o / np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + m.eps)
    o = w[p + "norm.weight"] * o * silu(z)
    return m.lin(o.reshape(T, Vd), p + "out_proj.weight")


def mixer(m, x, p, pos, rope):
    """the token mixer of layer m.layer, p the layer's prefix"""
    if m.cfg["layer_types"][m.layer] == "linear_attention":
        return gated_deltanet(m, x, p + "linear_attn.")
    return attention(m, x, p + "self_attn.", pos, rope)


def moe(m, x, p):
    """Qwen3_5MoeSparseMoeBlock"""
    c = m.cfg
    k = c["num_experts_per_tok"]
    logits = m.lin(x, p + "mlp.gate.weight")
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        sel = np.argsort(-probs[t], kind="stable")[:k]
        wt = probs[t, sel]
        wt = wt / wt.sum()
        m.trace.append((t, m.layer, [int(e) for e in sel], [float(v) for v in wt]))
        for e, we in zip(sel, wt):
            out[t] += we * m.mlp(x[t:t + 1], f"{p}mlp.experts.{e}")[0]
    shared = m.mlp(x, p + "mlp.shared_expert")
    return out + sigmoid(m.lin(x, p + "mlp.shared_expert_gate.weight")) * shared


def self_check():
    """chunked == recurrent on random data; returns (passed, failed)"""
    rng = np.random.default_rng(7)
    passed = failed = 0

    def case(T, nk, nv, dk, dv, split=None, tol=1e-10):
        q = rng.standard_normal((T, nk, dk))
        k = rng.standard_normal((T, nk, dk))
        v = rng.standard_normal((T, nv, dv))
        # decays from ~0.99 to ~0.05 a step, learning rates over (0, 1)
        g = -np.exp(rng.uniform(np.log(0.01), np.log(3.0), (T, nv)))
        beta = sigmoid(rng.standard_normal((T, nv)))
        want, s_want = recurrent_gated_delta_rule(q, k, v, g, beta)
        if split is None:
            got, s_got = chunk_gated_delta_rule(q, k, v, g, beta)
            name = "chunked_equals_recurrent T=%d nk=%d nv=%d dk=%d dv=%d" % (T, nk, nv, dk, dv)
        else:
            # a prefill in two parts, the state carried across
            o1, s1 = chunk_gated_delta_rule(q[:split], k[:split], v[:split], g[:split], beta[:split])
            o2, s_got = chunk_gated_delta_rule(q[split:], k[split:], v[split:], g[split:],
                                               beta[split:], state=s1)
            got = np.concatenate([o1, o2], axis=0)
            name = "chunked_in_two_parts_(%d+%d)_equals_recurrent" % (split, T - split)
        err = max(np.abs(got - want).max(), np.abs(s_got - s_want).max())
        scale = max(np.abs(want).max(), np.abs(s_want).max())
        report(bool(np.isfinite(err) and err <= tol * max(scale, 1.0)), name,
               "max |diff| %.3g (largest value %.3g)" % (err, scale))

    def report(ok, name, detail):
        nonlocal passed, failed
        print("%s %s: %s" % ("ok" if ok else "FAIL", name, detail))
        passed, failed = passed + ok, failed + (not ok)

    case(150, 2, 4, 16, 16)      # the checkpoint's shape, three chunks, the last partial
    case(150, 4, 4, 8, 12)       # one value head per key head, dk != dv
    for T in (1, 63, 64, 65, 128, 200):
        case(T, 1, 2, 16, 8)
    case(150, 2, 4, 16, 16, split=100)
    case(150, 2, 4, 16, 16, split=64)
    # the causal depthwise conv against numpy's convolution, channel by channel
    x, wc = rng.standard_normal((150, 24)), rng.standard_normal((24, 1, 4))
    want = np.stack([np.convolve(x[:, c], wc[c, 0, ::-1])[:150] for c in range(24)], axis=1)
    err = np.abs(causal_conv1d(x, wc) - want).max()
    report(err <= 1e-12, "causal_conv1d_equals_np_convolve", "max |diff| %.3g" % err)
    return passed, failed


def main():
    passed, failed = self_check()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
