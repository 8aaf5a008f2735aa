# SPDX-License-Identifier: MIT OR GPL-2.0
"""Read the tensors of a .colibri file (docs/format.md) back as Hugging Face
tensors, dequantized with tests/ref/quants.py: for running the numpy
reference on exactly the weights a quantized file holds.

tensors(path, cfg) -> {HF name: (dtype name, float64 array in HF shape)}
"""
import struct

import numpy as np

import quants

DTYPES = {v: k for k, v in quants.DTYPE_IDS.items()}

# role numbers (uapi/colibri_format.h)
ROLES = {1: "embed", 2: "final_norm", 3: "lm_head", 16: "attn_norm", 17: "wq", 18: "wk",
         19: "wv", 20: "wo", 21: "bq", 22: "bk", 23: "bv", 24: "q_norm", 25: "k_norm",
         26: "ffn_norm", 32: "router", 33: "expert_gate", 34: "expert_up", 35: "expert_down",
         36: "shared_gate", 37: "shared_up", 38: "shared_down", 39: "shared_expert_gate",
         48: "mlp_gate", 49: "mlp_up", 50: "mlp_down"}


def hf_name(cfg, role, layer, expert):
    mixtral = cfg["architectures"][0] == "MixtralForCausalLM"
    glob = {"embed": "model.embed_tokens.weight", "final_norm": "model.norm.weight",
            "lm_head": "lm_head.weight"}
    if role in glob:
        return glob[role]
    p = "model.layers.%d." % layer
    per_layer = {
        "attn_norm": "input_layernorm.weight", "ffn_norm": "post_attention_layernorm.weight",
        "wq": "self_attn.q_proj.weight", "wk": "self_attn.k_proj.weight",
        "wv": "self_attn.v_proj.weight", "wo": "self_attn.o_proj.weight",
        "bq": "self_attn.q_proj.bias", "bk": "self_attn.k_proj.bias",
        "bv": "self_attn.v_proj.bias", "q_norm": "self_attn.q_norm.weight",
        "k_norm": "self_attn.k_norm.weight",
        "router": "block_sparse_moe.gate.weight" if mixtral else "mlp.gate.weight",
        "shared_gate": "mlp.shared_expert.gate_proj.weight",
        "shared_up": "mlp.shared_expert.up_proj.weight",
        "shared_down": "mlp.shared_expert.down_proj.weight",
        "shared_expert_gate": "mlp.shared_expert_gate.weight",
        "mlp_gate": "mlp.gate_proj.weight", "mlp_up": "mlp.up_proj.weight",
        "mlp_down": "mlp.down_proj.weight",
    }
    if role in per_layer:
        return p + per_layer[role]
    part = {"expert_gate": ("w1", "gate_proj"), "expert_up": ("w3", "up_proj"),
            "expert_down": ("w2", "down_proj")}[role]
    if mixtral:
        return p + "block_sparse_moe.experts.%d.%s.weight" % (expert, part[0])
    return p + "mlp.experts.%d.%s.weight" % (expert, part[1])


def directory(path):
    """[(role name, layer, expert, dtype name, rows, cols, file offset, size)]"""
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:8] == b"COLIBRI\0", path
    n, esize = struct.unpack_from("<II", buf, 40)
    dir_off, = struct.unpack_from("<Q", buf, 32)
    data_off, = struct.unpack_from("<Q", buf, 64)
    out = []
    for i in range(n):
        e = dir_off + i * esize
        role, layer, expert, dt, rows, cols = struct.unpack_from("<6I", buf, e)
        off, size = struct.unpack_from("<QQ", buf, e + 24)
        out.append((ROLES[role], layer, expert, DTYPES[dt], rows, cols, data_off + off, size))
    return buf, out


def tensors(path, cfg):
    buf, ents = directory(path)
    res = {}
    for role, layer, expert, dt, rows, cols, off, size in ents:
        a = quants.dequant(dt, buf[off:off + size], rows * cols).astype(np.float64)
        a = a.reshape(rows, cols)
        if rows == 1 and role not in ("shared_expert_gate",):
            a = a.reshape(cols)
        res[hf_name(cfg, role, layer, expert)] = (dt, a)
    return res
