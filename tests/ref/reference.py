#!/usr/bin/python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""Independent numpy reference of the supported HF architectures.

Written from the semantics of the Hugging Face modeling files
(modeling_llama / mixtral / qwen2_moe / qwen3_moe / olmoe / gpt_oss /
glm4_moe / qwen3_5_moe: gpt_oss.py, glm4_moe.py and qwen3_5_moe.py hold the
latter three's own parts, and DeepSeek's modeling_deepseek for V2 and V3:
deepseek.py), not from the C engine: float64 throughout, full-sequence (no
KV cache), explicit causal mask, HF's rotate_half RoPE (partial, over the
first int(head_dim * partial_rotary_factor) dims of each head, when the
config has that factor: GLM-4.5, Qwen3.5), softmax -> top-k (->
renormalise) routing (GLM and DeepSeek-V3: sigmoid, biased group-limited
choice).  Qwen3.5-MoE (Qwen3_5MoeForConditionalGeneration): the text model
of the multimodal checkpoint (config.json's text_config, tensors under
model.language_model.), Gated DeltaNet and gated full-attention layers,
zero-centred RMSNorms.

usage: reference.py MODELDIR --tokens "1 2 3" [--greedy N]
prints the logits of every position (one line each), or with --greedy the N
argmax tokens that follow.
"""
import argparse
import json
import math
import os
import struct

import numpy as np

import gpt_oss  # tests/ref/gpt_oss.py: GptOssForCausalLM's attention and experts
import deepseek  # tests/ref/deepseek.py: MLA and DeepSeek's routing
import glm4_moe  # tests/ref/glm4_moe.py: GLM-4.5's routing and shared experts
import qwen3_5_moe  # tests/ref/qwen3_5_moe.py: Qwen3.5-MoE's layers and routing
import quants  # tests/ref/quants.py: the activation forms (Model's acts)


def read_safetensors(path):
    out = {}
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    base = 8 + n
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        b, e = meta["data_offsets"]
        raw = buf[base + b:base + e]
        dt = meta["dtype"]
        if dt == "F32":
            a = np.frombuffer(raw, "<f4")
        elif dt == "F16":
            a = np.frombuffer(raw, "<f2")
        elif dt == "BF16":
            a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt == "U8":    # MXFP4 blocks and scales (gpt_oss.from_mxfp4), kept as bytes
            out[name] = np.frombuffer(raw, np.uint8).reshape(meta["shape"])
            continue
        else:
            raise ValueError(dt)
        out[name] = a.astype(np.float64).reshape(meta["shape"])
    return out


def load(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    idx = os.path.join(model_dir, "model.safetensors.index.json")
    w = {}
    if os.path.exists(idx):
        with open(idx) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
        for fn in files:
            w.update(read_safetensors(os.path.join(model_dir, fn)))
    else:
        w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    return cfg, w


def rms_norm(x, weight, eps):
    var = np.mean(x * x, axis=-1, keepdims=True)
    return weight * (x / np.sqrt(var + eps))


def silu(x):
    return x / (1.0 + np.exp(-x))


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def yarn_params(rs, dim, theta, max_pos):
    """HF _compute_yarn_parameters (modeling_rope_utils.py) for rope_type
    "yarn": (inv_freq [dim/2], attention_factor).  The factor is used as
    written (see userspace/lib/import/rope_scaling.c)."""
    factor = rs["factor"]
    orig = rs.get("original_max_position_embeddings") or max_pos
    mscale, mscale_all_dim = rs.get("mscale"), rs.get("mscale_all_dim")
    attention_factor = rs.get("attention_factor")

    def get_mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1

    def correction_dim(rot):
        return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(theta))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    pos_freqs = theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    extrap = 1.0 - ramp
    inv = (1.0 / (factor * pos_freqs)) * (1 - extrap) + (1.0 / pos_freqs) * extrap
    return inv, attention_factor


def rope(x, positions, theta, scaling=None, max_pos=None, rotary_dim=None):
    # x: [T, heads, hd]; HF: inv_freq = 1 / theta^(arange(0, d, 2) / d),
    # emb = cat(freqs, freqs), x * cos + rotate_half(x) * sin; YaRN changes
    # inv_freq and scales cos and sin by its attention factor.  rotary_dim
    # d < hd (partial_rotary_factor): only x[..., :d] is rotated, with d in
    # inv_freq and rotate_half over those d dims; the rest passes through
    hd = x.shape[-1]
    if rotary_dim is not None and rotary_dim < hd:
        return np.concatenate([rope(x[..., :rotary_dim], positions, theta, scaling, max_pos),
                               x[..., rotary_dim:]], axis=-1)
    inv = 1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    attn = 1.0
    if scaling is not None:
        kind = scaling.get("rope_type") or scaling.get("type")
        if kind == "yarn":
            inv, attn = yarn_params(scaling, hd, theta, max_pos)
        elif kind != "default":
            raise ValueError("rope_scaling %r" % kind)
    freqs = positions[:, None].astype(np.float64) * inv[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb)[:, None, :] * attn, np.sin(emb)[:, None, :] * attn
    return x * cos + rotate_half(x) * sin


def linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


class Model:
    """acts: optional {HF weight name: activation form} ("q8_0", "q8_1",
    "q8_K"; tests/ref/quants.py): the rows multiplied by that weight are
    first rounded the way the engine quantizes them for an integer dot
    product.  weights: optional {HF name: array} replacing the checkpoint's
    (e.g. the dequantized tensors of a quantized file)."""

    def __init__(self, model_dir, acts=None, weights=None):
        self.cfg, self.w = load(model_dir)
        if weights:
            self.w.update(weights)
        gpt_oss.from_mxfp4(self.w)
        self.acts = acts or {}
        self.arch = self.cfg["architectures"][0]
        # where the decoder's tensors are: model.embed_tokens, model.layers.N,
        # model.norm, or the language model's of a multimodal checkpoint
        self.prefix = "model."
        # RMSNorms as norm(x) * (1 + w) (Qwen3.5's zero-centred weights)
        self.zero_centred = False
        if self.arch in qwen3_5_moe.ARCHS:
            self.cfg = qwen3_5_moe.text_config(self.cfg)
            self.prefix = qwen3_5_moe.prefix(self.arch)
            self.zero_centred = True
            qwen3_5_moe.defuse(self.cfg, self.w, self.prefix)
            qwen3_5_moe.unfuse_experts(self.w)
        c = self.cfg
        self.H = c["hidden_size"]
        self.nh = c["num_attention_heads"]
        self.nkv = c.get("num_key_value_heads") or self.nh
        self.hd = c.get("head_dim") or self.H // self.nh
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.theta = c.get("rope_theta", 10000.0)
        self.rope_scaling = c.get("rope_scaling")
        self.max_pos = c.get("max_position_embeddings", 4096)
        # HF's default RoPE: dim = int(head_dim * partial_rotary_factor)
        self.rotary_dim = int(self.hd * c.get("partial_rotary_factor", 1.0))
        # RMSNorm of q and k per head (over head_dim), before RoPE
        self.qk_norm_per_head = (self.arch == "Qwen3MoeForCausalLM"
                                 or (self.arch in glm4_moe.ARCHS and c.get("use_qk_norm", False)))

    def is_moe(self, l):
        c = self.cfg
        if self.arch in deepseek.ARCHS:
            return deepseek.is_moe(c, l)
        if self.arch in glm4_moe.ARCHS:
            return glm4_moe.is_moe(c, l)
        if self.arch in qwen3_5_moe.ARCHS:
            return qwen3_5_moe.is_moe(c, l)
        if self.arch == "LlamaForCausalLM":
            return False
        if self.arch in ("MixtralForCausalLM", "OlmoeForCausalLM", "GptOssForCausalLM"):
            return True
        return (l not in c.get("mlp_only_layers", []) and c["num_experts"] > 0
                and (l + 1) % c.get("decoder_sparse_step", 1) == 0)

    def lin(self, x, name, b=None):
        form = self.acts.get(name, "f32")
        if form != "f32":
            x = quants.act_quant(form, x)
        return linear(x, self.w[name], b)

    def attention(self, x, p, pos):
        if self.arch == "GptOssForCausalLM":
            return gpt_oss.attention(self, x, p, pos, self.layer, rope)
        if self.arch in deepseek.ARCHS:
            return deepseek.attention(self, x, p, pos)
        w, T = self.w, x.shape[0]
        bias = self.arch == "Qwen2MoeForCausalLM" or self.cfg.get("attention_bias", False)
        q = self.lin(x, p + "q_proj.weight", w.get(p + "q_proj.bias") if bias else None)
        k = self.lin(x, p + "k_proj.weight", w.get(p + "k_proj.bias") if bias else None)
        v = self.lin(x, p + "v_proj.weight", w.get(p + "v_proj.bias") if bias else None)
        if self.arch == "OlmoeForCausalLM":
            # OLMoE: RMSNorm over the whole projection, then optional clamp
            q = rms_norm(q, w[p + "q_norm.weight"], self.eps)
            k = rms_norm(k, w[p + "k_norm.weight"], self.eps)
            clip = self.cfg.get("clip_qkv")
            if clip is not None:
                q, k, v = (np.clip(a, -clip, clip) for a in (q, k, v))
        q = q.reshape(T, self.nh, self.hd)
        k = k.reshape(T, self.nkv, self.hd)
        v = v.reshape(T, self.nkv, self.hd)
        if self.qk_norm_per_head:
            # Qwen3, GLM-4.5 (use_qk_norm): RMSNorm per head (over head_dim)
            q = rms_norm(q, w[p + "q_norm.weight"], self.eps)
            k = rms_norm(k, w[p + "k_norm.weight"], self.eps)
        q = rope(q, pos, self.theta, self.rope_scaling, self.max_pos, self.rotary_dim)
        k = rope(k, pos, self.theta, self.rope_scaling, self.max_pos, self.rotary_dim)
        rep = self.nh // self.nkv
        k = np.repeat(k, rep, axis=1)   # repeat_kv: head h uses kv head h // rep
        v = np.repeat(v, rep, axis=1)
        scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(self.hd)
        mask = np.triu(np.ones((T, T), dtype=bool), 1)
        scores = np.where(mask[None], -np.inf, scores)
        scores = scores - scores.max(axis=-1, keepdims=True)
        pr = np.exp(scores)
        pr /= pr.sum(axis=-1, keepdims=True)
        o = np.einsum("hts,shd->thd", pr, v).reshape(T, self.nh * self.hd)
        return self.lin(o, p + "o_proj.weight")

    def mlp(self, x, p, names=("gate_proj", "up_proj", "down_proj")):
        g = self.lin(x, f"{p}.{names[0]}.weight")
        u = self.lin(x, f"{p}.{names[1]}.weight")
        return self.lin(silu(g) * u, f"{p}.{names[2]}.weight")

    def moe(self, x, p):
        c, w = self.cfg, self.w
        if self.arch == "GptOssForCausalLM":
            return gpt_oss.moe(self, x, p)
        if self.arch in deepseek.ARCHS:
            return deepseek.moe(self, x, p)
        if self.arch in glm4_moe.ARCHS:
            return glm4_moe.moe(self, x, p)
        if self.arch in qwen3_5_moe.ARCHS:
            return qwen3_5_moe.moe(self, x, p)
        if self.arch == "MixtralForCausalLM":
            gate, ex, names = p + "block_sparse_moe.gate.weight", p + "block_sparse_moe.experts", ("w1", "w3", "w2")
            E, renorm = c["num_local_experts"], True
        else:
            gate, ex, names = p + "mlp.gate.weight", p + "mlp.experts", ("gate_proj", "up_proj", "down_proj")
            E, renorm = c["num_experts"], c.get("norm_topk_prob", False)
        k = c["num_experts_per_tok"]
        logits = self.lin(x, gate)
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probs /= probs.sum(axis=-1, keepdims=True)
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            sel = np.argsort(-probs[t], kind="stable")[:k]
            wt = probs[t, sel]
            if renorm:
                wt = wt / wt.sum()
            self.trace.append((t, self.layer, [int(e) for e in sel], [float(v) for v in wt]))
            for e, we in zip(sel, wt):
                out[t] += we * self.mlp(x[t:t + 1], f"{ex}.{e}", names)[0]
        if self.arch == "Qwen2MoeForCausalLM" and c.get("shared_expert_intermediate_size"):
            sh = self.mlp(x, p + "mlp.shared_expert")
            g = self.lin(x, p + "mlp.shared_expert_gate.weight")
            out = out + sh / (1.0 + np.exp(-g))
        return out

    def norm(self, x, name):
        wt = self.w[name]
        return rms_norm(x, 1.0 + wt if self.zero_centred else wt, self.eps)

    def mixer(self, x, p, pos):
        """the token mixer of layer self.layer; p: the layer's prefix"""
        if self.arch in qwen3_5_moe.ARCHS:
            return qwen3_5_moe.mixer(self, x, p, pos, rope)
        return self.attention(x, p + "self_attn.", pos)

    def forward(self, tokens):
        c, w, P = self.cfg, self.w, self.prefix
        tokens = np.asarray(tokens)
        pos = np.arange(len(tokens))
        x = w[P + "embed_tokens.weight"][tokens]
        self.trace = []     # (position, layer, expert ids by rank, weights)
        # only the decoder layers: a checkpoint's MTP layers (GLM-4.5's
        # model.layers.{num_hidden_layers}..., Qwen3.5's mtp.*) are left
        # out, as in HF
        for l in range(c["num_hidden_layers"]):
            p = f"{P}layers.{l}."
            self.layer = l
            h = self.norm(x, p + "input_layernorm.weight")
            x = x + self.mixer(h, p, pos)
            h = self.norm(x, p + "post_attention_layernorm.weight")
            x = x + (self.moe(h, p) if self.is_moe(l) else self.mlp(h, p + "mlp"))
        x = self.norm(x, P + "norm.weight")
        head = P + "embed_tokens.weight" if c.get("tie_word_embeddings", False) else "lm_head.weight"
        return self.lin(x, head)

    def greedy(self, tokens, n):
        toks, out = list(tokens), []
        for _ in range(n):
            nxt = int(np.argmax(self.forward(toks)[-1]))
            out.append(nxt)
            toks.append(nxt)
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--greedy", type=int, default=0)
    a = ap.parse_args()
    m = Model(a.model)
    toks = [int(t) for t in a.tokens.split()]
    if a.greedy:
        print(" ".join(str(t) for t in m.greedy(toks, a.greedy)))
        return
    for row in m.forward(toks):
        print(" ".join("%.9g" % v for v in row))


if __name__ == "__main__":
    main()
