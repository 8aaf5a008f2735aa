#!/usr/bin/python3
# SPDX-License-Identifier: MIT OR GPL-2.0
"""A small GGUF writer for tests (numpy only), and HF checkpoint -> GGUF.

Writes GGUF v3 (or v2, same layout) with llama.cpp's tensor names and
metadata keys, so colibri's loader reads these files as it would read a
converted model:
  - llama-family q/k weights are permuted the way llama.cpp's converter does
    (rows of each head reordered so RoPE pairs are (2i, 2i+1)),
  - GPT-OSS becomes arch "gpt-oss" as llama.cpp's converter writes it:
    post_attention_norm, attn_sinks, attn_output.bias, ffn_gate_inp.bias,
    the fused gate_up_proj split into ffn_gate_exps / ffn_up_exps (columns
    0, 2, ... and 1, 3, ...) and transposed to [E, ffn, hidden], down_proj
    to [E, hidden, ffn], their biases ffn_{gate,up,down}_exps.bias,
    attention.sliding_window (the even layers slide),
  - Mixtral becomes arch "llama" with stacked ffn_*_exps tensors
    ([E, rows, cols], ne = {cols, rows, E}) or, with --per-expert, the older
    ffn_*.E tensors,
  - matrices in F32, F16, BF16, Q8_0 or Q4_0 (quantized here with GGUF's
    reference rules, bit for bit), in any other block type (Q4_1, Q5_0,
    Q5_1, IQ4_NL, Q2_K .. Q6_K, IQ4_XS, MXFP4: quantized by the engine's
    quantizers through gguf_tool quant, --tool), or in one of llama.cpp's
    presets (Q4_K_M, Q3_K_S, IQ4_XS, ...): each tensor's type chosen by
    llama-quantize's rules as written out below (preset_type(), by GGUF
    tensor name, independently of userspace/lib/quant/quant_preset.c, which
    tests/quant compares it with); norms, biases and routers stay F32.

usage:
  write_gguf.py model HFDIR OUT.gguf [--type TYPE|PRESET] [--tool GGUF_TOOL]
                [--split-kv-b]           (deepseek2: attn_k_b/attn_v_b)
                [--version 2|3] [--per-expert] [--tokenizer tokenizer.json]
                [--vector-type F32|F16|BF16] [--alignment N]
                [--chat-template FILE]   (tokenizer.chat_template)
  write_gguf.py tokenizer tokenizer.json OUT.gguf [--sp] [--pre NAME]
      (a GGUF holding only the tokenizer of a tokenizer.json: byte-level BPE
       as model "gpt2" with tokenizer.ggml.pre NAME (default qwen2), or with
       --sp SentencePiece-style BPE as "llama" with scores -id)
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ref"))
sys.dont_write_bytecode = True
import reference  # noqa: E402  (reads HF checkpoints)
import gguf_qwen35  # noqa: E402  (Qwen3.5-MoE's qwen35moe)

# metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# ggml tensor types
GT = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8,
      "Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "IQ4_NL": 20,
      "IQ4_XS": 23, "BF16": 30, "MXFP4": 39}
BLOCK = {"Q4_0": 32, "Q4_1": 32, "Q5_0": 32, "Q5_1": 32, "Q8_0": 32, "IQ4_NL": 32,
         "MXFP4": 32, "Q2_K": 256, "Q3_K": 256, "Q4_K": 256, "Q5_K": 256, "Q6_K": 256, "IQ4_XS": 256}
# llama.cpp presets: base type, general.file_type (LLAMA_FTYPE_MOSTLY_*)
PRESETS = {"Q4_0": ("Q4_0", 2), "Q4_1": ("Q4_1", 3), "Q8_0": ("Q8_0", 7),
           "Q5_0": ("Q5_0", 8), "Q5_1": ("Q5_1", 9), "Q2_K": ("Q2_K", 10),
           "Q3_K_S": ("Q3_K", 11), "Q3_K_M": ("Q3_K", 12), "Q3_K_L": ("Q3_K", 13),
           "Q4_K_S": ("Q4_K", 14), "Q4_K_M": ("Q4_K", 15), "Q5_K_S": ("Q5_K", 16),
           "Q5_K_M": ("Q5_K", 17), "Q6_K": ("Q6_K", 18), "IQ4_NL": ("IQ4_NL", 25),
           "IQ4_XS": ("IQ4_XS", 30)}
SCALAR_FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i",
              F32: "<f", BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


class Writer:
    def __init__(self, version=3, alignment=32):
        self.version = version
        self.alignment = alignment
        self.kv = []        # (key, type, value[, elem type])
        self.tensors = []   # (name, ne, ggml type, bytes)

    def add(self, key, vtype, value, etype=None):
        self.kv.append((key, vtype, value, etype))

    def tensor(self, name, ne, gtype, data):
        self.tensors.append((name, list(ne), gtype, data))

    @staticmethod
    def value(vtype, v, etype=None):
        if vtype == STRING:
            return gstr(v)
        if vtype == ARRAY:
            out = struct.pack("<IQ", etype, len(v))
            if etype == STRING:
                return out + b"".join(gstr(x) for x in v)
            return out + np.asarray(v, dtype=np.dtype(SCALAR_FMT[etype])).tobytes()
        return struct.pack(SCALAR_FMT[vtype], v)

    def header(self):
        """Everything before the data section, and the data section."""
        a = self.alignment
        out = [b"GGUF", struct.pack("<I", self.version)]
        if self.version == 1:
            out.append(struct.pack("<II", len(self.tensors), len(self.kv)))
        else:
            out.append(struct.pack("<QQ", len(self.tensors), len(self.kv)))
        for key, vtype, v, etype in self.kv:
            out += [gstr(key), struct.pack("<I", vtype), self.value(vtype, v, etype)]
        data, off = [], 0
        for name, ne, gtype, blob in self.tensors:
            out += [gstr(name), struct.pack("<I", len(ne)),
                    b"".join(struct.pack("<Q", n) for n in ne),
                    struct.pack("<IQ", gtype, off)]
            pad = -len(blob) % a
            data.append(blob + b"\0" * pad)
            off += len(blob) + pad
        head = b"".join(out)
        head += b"\0" * (-len(head) % a)
        return head, b"".join(data)

    def write(self, path):
        head, data = self.header()
        with open(path, "wb") as f:
            f.write(head)
            f.write(data)


# --- GGUF's reference quantizers, step by step in float32 ------------------

def f16_bits(a):
    return np.asarray(a, dtype=np.float32).astype(np.float16).view(np.uint16)


def quant_q8_0(x):
    """rows of float32 (cols % 32 == 0) -> q8_0 bytes."""
    x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(x).max(axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        idv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = (x * idv[:, None]).astype(np.float32)
    # C roundf: halfway away from zero (float64 holds |v| + 0.5 exactly)
    q = (np.sign(v) * np.floor(np.abs(v).astype(np.float64) + 0.5)).astype(np.int8)
    out = np.zeros(x.shape[0], dtype=[("d", "<u2"), ("qs", "i1", 32)])
    out["d"] = f16_bits(d)
    out["qs"] = q
    return out.tobytes()


def quant_q4_0(x):
    x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, 32)
    idx = np.abs(x).argmax(axis=1)          # first maximum, like the C loop
    mx = x[np.arange(x.shape[0]), idx]
    d = (mx / np.float32(-8)).astype(np.float32)
    with np.errstate(divide="ignore"):
        idv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = ((x * idv[:, None]).astype(np.float32) + np.float32(8.5)).astype(np.float32)
    q = np.minimum(np.trunc(v).astype(np.int32), 15).astype(np.uint8)
    out = np.zeros(x.shape[0], dtype=[("d", "<u2"), ("qs", "u1", 16)])
    out["d"] = f16_bits(d)
    out["qs"] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


TOOL = os.environ.get("COLIBRI_GGUF_TOOL")


def encode_tool(a, typ):
    """rows of a in block type typ, by the engine's quantizer (gguf_tool quant)"""
    import subprocess
    import tempfile
    if not TOOL:
        raise RuntimeError("type %s needs --tool (gguf_tool)" % typ)
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.f32"), os.path.join(d, "out.bin")
        a.astype("<f4").tofile(src)
        subprocess.run([TOOL, "quant", typ, str(a.shape[-1]), src, dst], check=True)
        with open(dst, "rb") as f:
            return f.read()


def encode(a, typ):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if typ == "F32":
        return a.astype("<f4").tobytes()
    if typ == "F16":
        return a.astype("<f2").tobytes()
    if typ == "BF16":
        u = a.view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()
    if typ == "Q8_0":
        return quant_q8_0(a)
    if typ == "Q4_0":
        return quant_q4_0(a)
    if typ in BLOCK:
        return encode_tool(a, typ)
    raise ValueError(typ)


# --- llama-quantize's choice of a tensor's type for a preset ----------------

def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


class Quantizer:
    """The per-tensor rules of llama.cpp's llama_tensor_get_type() for its
    presets (no importance matrix, no overrides), applied by GGUF name in
    the order the tensors are written: attn_v tensors are counted as they
    come (i_attention_wv), ffn_down takes its layer from the name."""

    def __init__(self, preset, n_layer, n_head, n_head_kv, n_expert, has_output):
        self.p, self.base = preset, PRESETS[preset][0]
        self.n, self.gqa = n_layer, n_head // n_head_kv
        self.e8, self.has_output = n_expert == 8, has_output
        self.i_wv = 0

    def choose(self, name, cols):
        p, base, n = self.p, self.base, self.n
        if name == "output.weight" or (not self.has_output and name == "token_embd.weight"):
            if cols % BLOCK[base]:
                t = "Q8_0"
            else:
                t = "Q8_0" if base == "Q8_0" else "Q6_K"
        elif name == "token_embd.weight":
            t = base
        elif "attn_v.weight" in name:
            i = self.i_wv
            t = base
            if p == "Q2_K":
                t = "Q4_K" if self.gqa >= 4 else "Q3_K"
            elif p == "Q3_K_M":
                t = "Q5_K" if i < 2 else "Q4_K"
            elif p == "Q3_K_L":
                t = "Q5_K"
            elif p in ("IQ4_NL", "IQ4_XS") and self.gqa >= 4:
                t = "Q5_K"
            elif p in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
                t = "Q6_K"
            elif p == "Q4_K_S" and i < 4:
                t = "Q5_K"
            if self.e8:
                t = "Q8_0"
            self.i_wv += 1
        elif "attn_k.weight" in name:
            t = "Q8_0" if self.e8 else base
        elif "attn_output.weight" in name:
            t = base
            if self.e8:
                if p in ("Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS"):
                    t = "Q5_K"
            else:
                t = {"Q2_K": "Q3_K", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K"}.get(p, base)
        elif "ffn_down" in name:
            i = int(name.split(".")[1])
            t = base
            if p == "Q2_K":
                t = "Q3_K"
            elif p == "Q3_K_M":
                t = "Q5_K" if i < n // 16 else "Q4_K"
            elif p == "Q3_K_L":
                t = "Q5_K"
            elif p == "Q4_K_M":
                t = "Q6_K" if use_more_bits(i, n) else base
            elif i < n // 8 and p in ("IQ4_NL", "IQ4_XS"):
                t = "Q5_K"
            elif p == "Q5_K_M" and use_more_bits(i, n):
                t = "Q6_K"
            elif p == "Q4_K_S" and i < n // 8:
                t = "Q5_K"
        else:
            t = base
        if cols % BLOCK.get(t, 1):
            # llama-quantize's fallback for rows that are not whole blocks
            t = {"Q2_K": "IQ4_NL", "Q3_K": "IQ4_NL", "IQ4_XS": "IQ4_NL", "Q4_K": "Q5_0",
                 "Q5_K": "Q5_1", "Q6_K": "Q8_0"}.get(t, t)
            if cols % BLOCK.get(t, 1):
                t = "F16"
        return t


# --- HF -> GGUF --------------------------------------------------------------

ARCH = {"LlamaForCausalLM": "llama", "MixtralForCausalLM": "llama",
        "Qwen2MoeForCausalLM": "qwen2moe", "Qwen3MoeForCausalLM": "qwen3moe",
        "OlmoeForCausalLM": "olmoe", "GptOssForCausalLM": "gpt-oss",
        "DeepseekV2ForCausalLM": "deepseek2", "DeepseekV3ForCausalLM": "deepseek2",
        "Glm4MoeForCausalLM": "glm4moe", gguf_qwen35.HF_ARCH: "qwen35moe",
        gguf_qwen35.HF_NEXT: "qwen3next"}


def deepseek_meta(g, cfg, split_kv_b):
    """llama.cpp's deepseek2 keys.  split_kv_b: the newer MLA layout
    (attn_k_b / attn_v_b; key/value_length of the latent, the per-head
    sizes in key/value_length_mla, one kv head)."""
    a = "deepseek2."
    nh, dn, dr, dv = (cfg["num_attention_heads"], cfg["qk_nope_head_dim"],
                      cfg["qk_rope_head_dim"], cfg["v_head_dim"])
    R = cfg["kv_lora_rank"]
    v3 = cfg["architectures"][0] == "DeepseekV3ForCausalLM"
    if split_kv_b:
        g.add(a + "attention.head_count_kv", U32, 1)
        g.add(a + "attention.key_length", U32, R + dr)
        g.add(a + "attention.value_length", U32, R)
        g.add(a + "attention.key_length_mla", U32, dn + dr)
        g.add(a + "attention.value_length_mla", U32, dv)
    else:
        g.add(a + "attention.head_count_kv", U32, nh)
        g.add(a + "attention.key_length", U32, dn + dr)
        g.add(a + "attention.value_length", U32, dv)
    g.add(a + "rope.dimension_count", U32, dr)
    if cfg.get("q_lora_rank") is not None:
        g.add(a + "attention.q_lora_rank", U32, cfg["q_lora_rank"])
    g.add(a + "attention.kv_lora_rank", U32, R)
    g.add(a + "leading_dense_block_count", U32, cfg["first_k_dense_replace"])
    g.add(a + "expert_feed_forward_length", U32, cfg["moe_intermediate_size"])
    g.add(a + "expert_shared_count", U32, cfg.get("n_shared_experts") or 0)
    norm = bool(cfg.get("norm_topk_prob")) and cfg["num_experts_per_tok"] > 1
    # llama.cpp renormalises, then always scales: V2 scales only when it
    # does not renormalise
    scale = cfg.get("routed_scaling_factor", 1.0) if (v3 or not norm) else 1.0
    g.add(a + "expert_weights_scale", F32, float(scale))
    g.add(a + "expert_weights_norm", BOOL, norm)
    g.add(a + "expert_gating_func", U32, 2 if cfg.get("scoring_func") == "sigmoid" else 1)
    if cfg.get("topk_method", "greedy") != "greedy" and cfg.get("n_group", 1) > 1:
        g.add(a + "expert_group_count", U32, cfg["n_group"])
        g.add(a + "expert_group_used_count", U32, cfg["topk_group"])


def glm_meta(g, cfg):
    """llama.cpp's glm4moe keys: its convert_hf_to_gguf.py's Glm4MoeModel.
    block_count (written by the caller) counts the nextn (MTP) layers."""
    a = "glm4moe."
    hd = cfg["head_dim"]
    g.add(a + "rope.dimension_count", U32, int(hd * cfg.get("partial_rotary_factor", 0.5)))
    g.add(a + "leading_dense_block_count", U32, cfg["first_k_dense_replace"])
    g.add(a + "expert_feed_forward_length", U32, cfg["moe_intermediate_size"])
    g.add(a + "expert_shared_count", U32, cfg.get("n_shared_experts") or 0)
    g.add(a + "expert_weights_scale", F32, float(cfg.get("routed_scaling_factor", 1.0)))
    g.add(a + "expert_weights_norm", BOOL, bool(cfg.get("norm_topk_prob")))
    g.add(a + "expert_gating_func", U32, 2)
    g.add(a + "nextn_predict_layers", U32, cfg.get("num_nextn_predict_layers", 0))
    if cfg.get("n_group", 1) > 1:
        g.add(a + "expert_group_count", U32, cfg["n_group"])
        g.add(a + "expert_group_used_count", U32, cfg["topk_group"])


def glm_nextn(put, w, p, b):
    """The nextn (MTP) layer's own tensors, as llama.cpp names them."""
    for hf, gg in (("eh_proj.weight", "nextn.eh_proj.weight"), ("enorm.weight", "nextn.enorm.weight"),
                   ("hnorm.weight", "nextn.hnorm.weight"),
                   ("shared_head.norm.weight", "nextn.shared_head_norm.weight")):
        put(b + gg, w[p + hf])


def deepseek_attention(put, cfg, w, p, b, split_kv_b):
    nh, dn, dv, R = (cfg["num_attention_heads"], cfg["qk_nope_head_dim"], cfg["v_head_dim"],
                     cfg["kv_lora_rank"])
    a = p + "self_attn."
    if cfg.get("q_lora_rank") is None:
        put(b + "attn_q.weight", w[a + "q_proj.weight"])
    else:
        put(b + "attn_q_a.weight", w[a + "q_a_proj.weight"])
        put(b + "attn_q_a_norm.weight", w[a + "q_a_layernorm.weight"])
        put(b + "attn_q_b.weight", w[a + "q_b_proj.weight"])
    put(b + "attn_kv_a_mqa.weight", w[a + "kv_a_proj_with_mqa.weight"])
    put(b + "attn_kv_a_norm.weight", w[a + "kv_a_layernorm.weight"])
    kvb = w[a + "kv_b_proj.weight"]
    if split_kv_b:
        # llama.cpp: k_b per head transposed ([nh, R, dn]), v_b per head [nh, dv, R]
        kv = kvb.reshape(nh, dn + dv, R)
        put(b + "attn_k_b.weight", np.ascontiguousarray(kv[:, :dn, :].transpose(0, 2, 1)))
        put(b + "attn_v_b.weight", np.ascontiguousarray(kv[:, dn:, :]))
    else:
        put(b + "attn_kv_b.weight", kvb)
    put(b + "attn_output.weight", w[a + "o_proj.weight"])


def permute(w, n_head):
    """llama.cpp's q/k permutation: within each head, row (j*half + i)
    moves to (2i + j), turning rotate_half pairs into adjacent pairs."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def bytelevel_chars():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def tokenizer_from_json(path, sp=False, pre="qwen2"):
    """tokenizer.ggml.* metadata from a HF tokenizer.json (@pre: the
    tokenizer.ggml.pre llama.cpp's converter writes for it)."""
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    vocab = dict(j["model"]["vocab"])
    special = {}
    for t in j.get("added_tokens", []):
        vocab[t["content"]] = t["id"]
        special[t["id"]] = t.get("special", False)
    n = max(vocab.values()) + 1
    toks = ["[PAD%d]" % i for i in range(n)]
    types = [5] * n
    for s, i in vocab.items():
        toks[i] = s
        types[i] = 1
    for i, sp_ in special.items():
        types[i] = 3 if sp_ else 4
    kv = []
    if sp:
        # SentencePiece scores as the .model file would have them: the
        # piece made by merge r scores -r (earlier merges score higher);
        # pieces no merge makes (single characters) score below all merges
        merges = [m.split(" ") if isinstance(m, str) else m for m in j["model"]["merges"]]
        scores = [0.0] * n
        for i in range(n):
            if types[i] == 1:
                scores[i] = -1e6 - i
        seen = set()
        for r, (a, b) in enumerate(merges):
            i = vocab[a + b]
            if i not in seen:
                seen.add(i)
                scores[i] = float(-r)
        for i in range(n):
            if types[i] == 1 and len(toks[i]) == 6 and toks[i].startswith("<0x") and toks[i].endswith(">"):
                types[i] = 6
                scores[i] = 0.0
        unk = j["model"].get("unk_token")
        if unk is not None:
            types[vocab[unk]] = 2
        kv += [("tokenizer.ggml.model", STRING, "llama"),
               ("tokenizer.ggml.scores", ARRAY, scores, F32)]
        if unk is not None:
            kv.append(("tokenizer.ggml.unknown_token_id", U32, vocab[unk]))
        kv += [("tokenizer.ggml.bos_token_id", U32, vocab.get("<s>", 1)),
               ("tokenizer.ggml.eos_token_id", U32, vocab.get("</s>", 2)),
               ("tokenizer.ggml.add_bos_token", BOOL, True),
               ("tokenizer.ggml.add_eos_token", BOOL, False)]
    else:
        merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
        kv += [("tokenizer.ggml.model", STRING, "gpt2"),
               ("tokenizer.ggml.pre", STRING, pre),
               ("tokenizer.ggml.merges", ARRAY, merges, STRING)]
        eos = vocab.get("<|endoftext|>")
        if eos is not None:
            kv += [("tokenizer.ggml.eos_token_id", U32, eos),
                   ("tokenizer.ggml.padding_token_id", U32, eos),
                   ("tokenizer.ggml.bos_token_id", U32, eos)]
        kv.append(("tokenizer.ggml.add_bos_token", BOOL, False))
    kv += [("tokenizer.ggml.tokens", ARRAY, toks, STRING),
           ("tokenizer.ggml.token_type", ARRAY, types, I32)]
    return kv


def toy_tokenizer(vocab_size):
    """A byte-level BPE of exactly vocab_size tokens: 256 bytes, merges of
    common pairs, and two control tokens at the end."""
    ch = bytelevel_chars()
    toks = [ch[b] for b in range(256)]
    merges = []
    pairs = ["t h", "th e", "Ġ t", "Ġt h", "Ġth e", "i n", "a n", "e r", "o n", "Ġ a"]
    for m in pairs:
        if len(toks) >= vocab_size - 2:
            break
        a, b = m.split(" ")
        merges.append(m)
        toks.append(a + b)
    i = 0
    while len(toks) < vocab_size - 2:
        toks.append("[PAD%d]" % i)
        i += 1
    toks += ["<|endoftext|>", "<|im_start|>"][:vocab_size - len(toks)]
    types = [1] * len(toks)
    types[-2:] = [3, 3]
    return [("tokenizer.ggml.model", STRING, "gpt2"),
            ("tokenizer.ggml.pre", STRING, "qwen2"),
            ("tokenizer.ggml.tokens", ARRAY, toks, STRING),
            ("tokenizer.ggml.token_type", ARRAY, types, I32),
            ("tokenizer.ggml.merges", ARRAY, merges, STRING),
            ("tokenizer.ggml.eos_token_id", U32, len(toks) - 2),
            ("tokenizer.ggml.bos_token_id", U32, len(toks) - 2),
            ("tokenizer.ggml.add_bos_token", BOOL, False)]


def deepseek_ffn(put, w, p, b, E):
    mp = p + "mlp."
    if mp + "gate.weight" not in w:      # dense layer
        for part in ("gate", "up", "down"):
            put(b + "ffn_%s.weight" % part, w[mp + "%s_proj.weight" % part])
        return
    put(b + "ffn_gate_inp.weight", w[mp + "gate.weight"], "F32")
    if mp + "gate.e_score_correction_bias" in w:
        put(b + "exp_probs_b.bias", w[mp + "gate.e_score_correction_bias"])
    for part in ("gate", "up", "down"):
        put(b + "ffn_%s_exps.weight" % part,
            np.stack([w[mp + "experts.%d.%s_proj.weight" % (e, part)] for e in range(E)]))
    if mp + "shared_experts.gate_proj.weight" in w:
        for part in ("gate", "up", "down"):
            put(b + "ffn_%s_shexp.weight" % part, w[mp + "shared_experts.%s_proj.weight" % part])


def model_to_gguf(hfdir, out, typ="F32", version=3, per_expert=False, tokenizer=None,
                  vector_type="F32", alignment=32, chat_template=None, split_kv_b=False):
    cfg, w = reference.load(hfdir)
    hf_arch = cfg["architectures"][0]
    arch = ARCH[hf_arch]
    q35 = arch in ("qwen35moe", "qwen3next")
    if q35:
        cfg, w = gguf_qwen35.prepare(cfg, w)
    H, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim", H // nh)
    E = cfg.get("num_local_experts", cfg.get("num_experts", cfg.get("n_routed_experts", 0)))
    ds = arch == "deepseek2"
    glm = arch == "glm4moe"
    nextn = cfg.get("num_nextn_predict_layers", 0) if glm else 0
    g = Writer(version, alignment)
    g.add("general.architecture", STRING, arch)
    g.add("general.name", STRING, "colibri-test-" + os.path.basename(hfdir.rstrip("/")))
    g.add("general.alignment", U32, alignment)
    g.add(arch + ".context_length", U32, cfg.get("max_position_embeddings", 2048))
    g.add(arch + ".embedding_length", U32, H)
    g.add(arch + ".block_count", U32, L + nextn)
    g.add(arch + ".attention.head_count", U32, nh)
    if ds:
        deepseek_meta(g, cfg, split_kv_b)
    else:
        g.add(arch + ".attention.head_count_kv", U32, nkv)
    if "head_dim" in cfg:
        g.add(arch + ".attention.key_length", U32, hd)
        g.add(arch + ".attention.value_length", U32, hd)
    if glm:
        glm_meta(g, cfg)
    elif q35:
        gguf_qwen35.meta(g, cfg, arch + ".")
    elif not ds:
        g.add(arch + ".rope.dimension_count", U32, hd)
    g.add(arch + ".rope.freq_base", F32, float(cfg.get("rope_theta", 10000.0)))
    g.add(arch + ".attention.layer_norm_rms_epsilon", F32, float(cfg.get("rms_norm_eps", 1e-6)))
    rs = cfg.get("rope_scaling")
    if rs:
        # llama.cpp's keys; it always floors/ceils the YaRN range and has
        # no mscale of its own (deepseek2's yarn_log_multiplier aside)
        if (rs.get("rope_type") or rs.get("type")) != "yarn" or rs.get("truncate", True) is False \
                or rs.get("mscale_all_dim") or rs.get("attention_factor") is not None:
            raise ValueError("rope_scaling %r has no GGUF form here" % (rs,))
        g.add(arch + ".rope.scaling.type", STRING, "yarn")
        g.add(arch + ".rope.scaling.factor", F32, float(rs["factor"]))
        g.add(arch + ".rope.scaling.original_context_length", U32,
              rs.get("original_max_position_embeddings", cfg.get("max_position_embeddings", 2048)))
        if rs.get("beta_fast"):
            g.add(arch + ".rope.scaling.yarn_beta_fast", F32, float(rs["beta_fast"]))
        if rs.get("beta_slow"):
            g.add(arch + ".rope.scaling.yarn_beta_slow", F32, float(rs["beta_slow"]))
    g.add(arch + ".vocab_size", U32, cfg["vocab_size"])
    if hf_arch == "GptOssForCausalLM":
        g.add(arch + ".feed_forward_length", U32, cfg["intermediate_size"])
        g.add(arch + ".expert_feed_forward_length", U32, cfg["intermediate_size"])
        g.add(arch + ".attention.sliding_window", U32, cfg["sliding_window"])
    elif hf_arch == "LlamaForCausalLM":
        g.add(arch + ".feed_forward_length", U32, cfg["intermediate_size"])
    elif hf_arch in ("MixtralForCausalLM", "OlmoeForCausalLM"):
        g.add(arch + ".feed_forward_length", U32, cfg["intermediate_size"])
    elif ds or glm:
        g.add(arch + ".feed_forward_length", U32, cfg["intermediate_size"])
    else:
        if "intermediate_size" in cfg:    # Qwen3.5 has none
            g.add(arch + ".feed_forward_length", U32, cfg["intermediate_size"])
        g.add(arch + ".expert_feed_forward_length", U32, cfg["moe_intermediate_size"])
    if cfg.get("shared_expert_intermediate_size"):
        g.add(arch + ".expert_shared_feed_forward_length", U32, cfg["shared_expert_intermediate_size"])
    if E:
        g.add(arch + ".expert_count", U32, E)
        g.add(arch + ".expert_used_count", U32, cfg["num_experts_per_tok"])
    if hf_arch == "OlmoeForCausalLM" and cfg.get("clip_qkv"):
        g.add(arch + ".attention.clamp_kqv", F32, float(cfg["clip_qkv"]))
    ftypes = {"F32": 0, "F16": 1, "BF16": 32}
    ftypes.update({k: v[1] for k, v in PRESETS.items()})
    ftypes.update({"P4_0": 2, "P8_0": 7})
    g.add("general.file_type", U32, ftypes.get(typ, 0))
    for kv in (tokenizer_from_json(tokenizer) if tokenizer else toy_tokenizer(cfg["vocab_size"])):
        g.add(*kv)
    preset = Quantizer(typ, L, nh, nkv, E, "lm_head.weight" in w) if typ in PRESETS and \
        typ not in ("Q4_0", "Q8_0") else None
    # the bare types Q4_0 / Q8_0 put every matrix in that type (the older
    # behaviour this writer had); "P4_0" / "P8_0" ask for those presets
    if typ in ("P4_0", "P8_0"):
        preset = Quantizer("Q" + typ[1:], L, nh, nkv, E, "lm_head.weight" in w)

    def put(name, a, mtype=None):
        a = np.asarray(a, dtype=np.float32)
        if a.ndim == 1:
            t = vector_type
        elif mtype:
            t = mtype
        elif preset:
            t = preset.choose(name, a.shape[-1])
        else:
            t = typ
        if t in BLOCK and a.shape[-1] % BLOCK[t]:
            t = "F32"
        pending.append((name, a, t))

    pending = []

    llama = arch == "llama"
    put("token_embd.weight", w["model.embed_tokens.weight"])
    for l in range(L + nextn):
        p, b = "model.layers.%d." % l, "blk.%d." % l
        put(b + "attn_norm.weight", w[p + "input_layernorm.weight"])
        if q35 and gguf_qwen35.is_linear(cfg, l):
            gguf_qwen35.delta_layer(put, cfg, w, p, b)
        if ds:
            deepseek_attention(put, cfg, w, p, b, split_kv_b)
            put(b + "ffn_norm.weight", w[p + "post_attention_layernorm.weight"])
            deepseek_ffn(put, w, p, b, E)
            continue
        if p + "self_attn.q_proj.weight" in w:  # not a DeltaNet layer
            q = w[p + "self_attn.q_proj.weight"]
            k = w[p + "self_attn.k_proj.weight"]
            if llama:
                q, k = permute(q, nh), permute(k, nkv)
            put(b + "attn_q.weight", q)
            put(b + "attn_k.weight", k)
            put(b + "attn_v.weight", w[p + "self_attn.v_proj.weight"])
            put(b + "attn_output.weight", w[p + "self_attn.o_proj.weight"])
        for x in "qkv":
            if p + "self_attn.%s_proj.bias" % x in w:
                put(b + "attn_%s.bias" % x, w[p + "self_attn.%s_proj.bias" % x])
        if p + "self_attn.q_norm.weight" in w:
            put(b + "attn_q_norm.weight", w[p + "self_attn.q_norm.weight"])
            put(b + "attn_k_norm.weight", w[p + "self_attn.k_norm.weight"])
        if glm:
            # the FFN's input norm is "post_attention_norm"; the MoE is deepseek2's
            put(b + "post_attention_norm.weight", w[p + "post_attention_layernorm.weight"])
            deepseek_ffn(put, w, p, b, E)
            if l >= L:
                glm_nextn(put, w, p, b)
            continue
        if hf_arch == "GptOssForCausalLM":
            put(b + "post_attention_norm.weight", w[p + "post_attention_layernorm.weight"])
            put(b + "attn_output.bias", w[p + "self_attn.o_proj.bias"])
            put(b + "attn_sinks.weight", w[p + "self_attn.sinks"])
            put(b + "ffn_gate_inp.weight", w[p + "mlp.router.weight"], "F32")
            put(b + "ffn_gate_inp.bias", w[p + "mlp.router.bias"])
            gu = w[p + "mlp.experts.gate_up_proj"]
            gub = w[p + "mlp.experts.gate_up_proj_bias"]
            put(b + "ffn_gate_exps.weight", gu[:, :, 0::2].transpose(0, 2, 1))
            put(b + "ffn_up_exps.weight", gu[:, :, 1::2].transpose(0, 2, 1))
            put(b + "ffn_down_exps.weight", w[p + "mlp.experts.down_proj"].transpose(0, 2, 1))
            put(b + "ffn_gate_exps.bias", gub[:, 0::2], "F32")
            put(b + "ffn_up_exps.bias", gub[:, 1::2], "F32")
            put(b + "ffn_down_exps.bias", w[p + "mlp.experts.down_proj_bias"], "F32")
            continue
        # qwen35moe's FFN input norm is "post_attention_norm"
        put(b + ("post_attention_norm.weight" if q35 else "ffn_norm.weight"),
            w[p + "post_attention_layernorm.weight"])
        if hf_arch == "MixtralForCausalLM":
            mp, names, router = p + "block_sparse_moe.", ("w1", "w3", "w2"), "gate"
        else:
            mp, names, router = p + "mlp.", ("gate_proj", "up_proj", "down_proj"), "gate"
        if mp + router + ".weight" not in w:      # dense layer
            for part, hn in zip(("gate", "up", "down"), ("gate_proj", "up_proj", "down_proj")):
                put(b + "ffn_%s.weight" % part, w[p + "mlp.%s.weight" % hn])
            continue
        put(b + "ffn_gate_inp.weight", w[mp + router + ".weight"], "F32")
        for part, hn in zip(("gate", "up", "down"), names):
            mats = [w[mp + "experts.%d.%s.weight" % (e, hn)] for e in range(E)]
            if per_expert:
                for e in range(E):
                    put(b + "ffn_%s.%d.weight" % (part, e), mats[e])
            else:
                put(b + "ffn_%s_exps.weight" % part, np.stack(mats))
        if mp + "shared_expert.gate_proj.weight" in w:
            for part in ("gate", "up", "down"):
                put(b + "ffn_%s_shexp.weight" % part, w[mp + "shared_expert.%s_proj.weight" % part])
            put(b + "ffn_gate_inp_shexp.weight", w[mp + "shared_expert_gate.weight"][0])
    put("output_norm.weight", w["model.norm.weight"])
    if "lm_head.weight" in w:
        put("output.weight", w["lm_head.weight"])
    if chat_template:
        with open(chat_template, encoding="utf-8") as f:
            g.add("tokenizer.chat_template", STRING, f.read())
    # the engine-quantized types: one gguf_tool call per (type, row length)
    done, groups = {}, {}
    arrays = {name: a for name, a, t in pending}
    for name, a, t in pending:
        if t in BLOCK and t not in ("Q8_0", "Q4_0"):
            groups.setdefault((t, a.shape[-1]), []).append(name)
    for (t, cols), names in groups.items():
        blob = encode_tool(np.concatenate([arrays[n].reshape(-1, cols) for n in names]), t)
        rb = len(blob) // sum(arrays[n].size // cols for n in names)
        off = 0
        for n in names:
            size = arrays[n].size // cols * rb
            done[n] = blob[off:off + size]
            off += size
    for name, a, t in pending:
        g.tensor(name, a.shape[::-1], GT[t], done[name] if name in done else encode(a, t))
    g.write(out)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("hfdir")
    m.add_argument("out")
    m.add_argument("--type", default="F32",
                   choices=["F32", "F16", "BF16", "P4_0", "P8_0"] + sorted(set(GT) | set(PRESETS)))
    m.add_argument("--tool", help="gguf_tool, for the types quantized by the engine")
    m.add_argument("--version", type=int, default=3, choices=[2, 3])
    m.add_argument("--per-expert", action="store_true")
    m.add_argument("--tokenizer")
    m.add_argument("--vector-type", default="F32", choices=["F32", "F16", "BF16"])
    m.add_argument("--alignment", type=int, default=32)
    m.add_argument("--chat-template")
    m.add_argument("--split-kv-b", action="store_true",
                   help="deepseek2: attn_k_b/attn_v_b (newer llama.cpp) instead of attn_kv_b")
    t = sub.add_parser("tokenizer")
    t.add_argument("json")
    t.add_argument("out")
    t.add_argument("--sp", action="store_true")
    t.add_argument("--pre", default="qwen2", help="tokenizer.ggml.pre (byte-level BPE)")
    a = ap.parse_args()
    global TOOL
    if getattr(a, "tool", None):
        TOOL = a.tool
    if a.cmd == "model":
        model_to_gguf(a.hfdir, a.out, a.type, a.version, a.per_expert, a.tokenizer,
                      a.vector_type, a.alignment, a.chat_template, a.split_kv_b)
    else:
        g = Writer()
        g.add("general.architecture", STRING, "llama")
        for kv in tokenizer_from_json(a.json, a.sp, a.pre):
            g.add(*kv)
        g.write(a.out)


if __name__ == "__main__":
    main()
