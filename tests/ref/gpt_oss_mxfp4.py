# SPDX-License-Identifier: MIT OR GPL-2.0
"""GPT-OSS in OpenAI's original MXFP4 layout, end to end (tests/ref/run
calls checks()).

A random checkpoint (make_checkpoint.py gpt_oss_mxfp4: U8 gate_up_proj_ /
down_proj_ blocks and scales, bf16 everything else, two shards) and the
same weights in the dequantized layout (--dequantized):

 - gpt_oss_mxfp4_convert_Q_experts_repacked_bytewise: `colibri convert
   --quant Q` (keep, f32, q8_0, Q4_K_M) stores every expert matrix as
   mxfp4 whose bytes are the checkpoint's blocks repacked here from the
   layouts alone (gate = even rows of gate_up, up = odd rows; block byte 0
   the scale, qs[j] = code j | code j + 16 << 4, code 2k = the low nibble of
   HF byte k, code 2k + 1 its high one), while the attention matrices take
   Q's type (so --quant still acts on the rest).
 - gpt_oss_mxfp4_dequantized_equals_bf16_layout: the mxfp4 experts of that
   file, dequantized by quants.py, and the bf16 experts `colibri convert
   --quant keep` writes from the dequantized layout are the same values
   bit for bit (-0 read as +0: ggml's table has no -0) and equal the
   reference's own decoding of the HF layout (gpt_oss.mxfp4_decode).
 - gpt_oss_mxfp4_logits_{prefill,token_by_token}: the .colibri's logits
   against reference.py on the decoded weights with the experts' inputs
   rounded to q8_0 as the mxfp4 kernels read them (quants.act_quant):
   max |diff| <= 1e-4 * max |logit| at every position; the HF directory
   run in process gives the .colibri's logits bit for bit.
 - gpt_oss_mxfp4_greedy_48_past_the_window: 48 greedy tokens after the
   24-token prompt (the window is 8: the ring wraps), prefill and token by
   token, identical to the reference's.
 - gpt_oss_mxfp4_refuses_*: blocks or scales of the wrong shape, missing
   scales or blocks, a scale byte of 255, blocks stored as F32, another
   quant_method: `colibri convert` exits non-zero (not a signal), names
   the tensor or key and leaves no output file.
"""
import json
import os
import shutil
import subprocess
import struct

import numpy as np

import gpt_oss
import make_checkpoint
import quants
import reference

PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
ROLE_GATE, ROLE_UP, ROLE_DOWN = 33, 34, 35
ATTN_ROLES = (17, 18, 19, 20)
MXFP4, BF16 = quants.DTYPE_IDS["mxfp4"], quants.DTYPE_IDS["bf16"]
QUANTS = {"keep": BF16, "f32": 0, "q8_0": 3, "Q4_K_M": None}


def entries(path):
    """{(role, layer, expert): (dtype id, rows, cols, bytes)} of a .colibri"""
    with open(path, "rb") as f:
        buf = f.read()
    n, esize = struct.unpack_from("<II", buf, 40)
    dir_off, = struct.unpack_from("<Q", buf, 32)
    data_off, = struct.unpack_from("<Q", buf, 64)
    out = {}
    for i in range(n):
        role, layer, expert, dt, rows, cols, off, size = struct.unpack_from(
            "<6IQQ", buf, dir_off + i * esize)
        out[(role, layer, expert)] = (dt, rows, cols, buf[data_off + off:data_off + off + size])
    return out


def repack(blocks, scales):
    """HF blocks [rows, nb, 16] + scales [rows, nb] -> the .colibri's mxfp4
    bytes of those rows (17 per block)"""
    codes = np.empty(blocks.shape[:-1] + (32,), dtype=np.uint8)
    codes[..., 0::2] = blocks & 15
    codes[..., 1::2] = blocks >> 4
    out = np.empty(blocks.shape[:-1] + (17,), dtype=np.uint8)
    out[..., 0] = scales
    out[..., 1:] = codes[..., :16] | (codes[..., 16:] << 4)
    return out.tobytes()


def hf_tensors(d):
    return reference.load(d)[1]


def expected_experts(w, layer):
    """{(role, layer, expert): mxfp4 bytes} from the HF tensors"""
    p = "model.layers.%d.mlp.experts." % layer
    gb, gs = w[p + "gate_up_proj_blocks"], w[p + "gate_up_proj_scales"]
    db, ds = w[p + "down_proj_blocks"], w[p + "down_proj_scales"]
    out = {}
    for e in range(gb.shape[0]):
        out[(ROLE_GATE, layer, e)] = repack(gb[e, 0::2], gs[e, 0::2])
        out[(ROLE_UP, layer, e)] = repack(gb[e, 1::2], gs[e, 1::2])
        out[(ROLE_DOWN, layer, e)] = repack(db[e], ds[e])
    return out


def convert(bin_, src, dst, quant):
    return subprocess.run([bin_, "convert", src, "-o", dst, "--quant", quant, "--no-tokenizer"],
                          capture_output=True, text=True)


def plus_zero_bits(a):
    return (np.asarray(a, dtype=np.float32) + np.float32(0)).view(np.uint32)


def checks(tap, compare_float, colibri, bin_, out, prompt):
    d = os.path.join(out, "gpt_oss_mxfp4")
    dq = os.path.join(out, "gpt_oss_mxfp4_dequantized")
    mk = os.path.join(HERE, "make_checkpoint.py")
    subprocess.run([PY, mk, "gpt_oss_mxfp4", d, "--dtype", "BF16", "--shards", "2"], check=True)
    subprocess.run([PY, mk, "gpt_oss_mxfp4", dq, "--dtype", "BF16", "--dequantized"], check=True)
    w = hf_tensors(d)
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    L = cfg["num_hidden_layers"]
    want = {}
    for layer in range(L):
        want.update(expected_experts(w, layer))

    files = {}
    for q, attn_dt in QUANTS.items():
        name = "gpt_oss_mxfp4_convert_%s_experts_repacked_bytewise" % q
        f = os.path.join(out, "gpt_oss_mxfp4-%s.colibri" % q)
        r = convert(bin_, d, f, q)
        if r.returncode:
            tap(False, name, "exit %d: %s" % (r.returncode, r.stderr.strip()))
            continue
        files[q] = f
        got = entries(f)
        ex = {k: v for k, v in got.items() if k[0] in (ROLE_GATE, ROLE_UP, ROLE_DOWN)}
        bad = [k for k in want if k not in ex or ex[k][0] != MXFP4 or ex[k][3] != want[k]]
        attn = sorted({v[0] for k, v in got.items() if k[0] in ATTN_ROLES})
        attn_ok = attn_dt is None or attn == [attn_dt]
        tap(len(ex) == len(want) and not bad and attn_ok, name,
            "%d expert matrices, %d differ%s; attention dtypes %s"
            % (len(want), len(bad), (" (first %s)" % (bad[0],)) if bad else "", attn))

    # the dequantized layout, kept as stored (bf16), holds the same values
    name = "gpt_oss_mxfp4_dequantized_equals_bf16_layout"
    fq = os.path.join(out, "gpt_oss_mxfp4_dequantized.colibri")
    r = convert(bin_, dq, fq, "keep")
    if r.returncode or "keep" not in files:
        tap(False, name, r.stderr.strip())
    else:
        a, b = entries(files["keep"]), entries(fq)
        wd = gpt_oss.from_mxfp4(dict(w))
        n_bad = n_ref_bad = n = 0
        for k in want:
            (dta, rows, cols, ra), (dtb, _, _, rb) = a[k], b[k]
            va = quants.dequant("mxfp4", ra, rows * cols) if dta == MXFP4 else None
            vb = quants.dequant("bf16", rb, rows * cols) if dtb == BF16 else None
            if va is None or vb is None:
                n_bad += 1
                continue
            role, layer, e = k
            p = "model.layers.%d.mlp.experts." % layer
            if role == ROLE_DOWN:
                ref = wd[p + "down_proj"][e].T           # [F, H] (in, out) -> [H, F]
            else:
                ref = wd[p + "gate_up_proj"][e].T[(1 if role == ROLE_UP else 0)::2]  # 2j, 2j + 1
            n += 1
            n_bad += not np.array_equal(plus_zero_bits(va), plus_zero_bits(vb))
            n_ref_bad += not np.array_equal(plus_zero_bits(va), plus_zero_bits(ref.reshape(-1)))
        tap(n == len(want) and n_bad == 0 and n_ref_bad == 0, name,
            "%d expert matrices: %d differ from the bf16 layout's, %d from the reference's "
            "decoding" % (len(want), n_bad, n_ref_bad))

    # logits against the reference (experts' inputs rounded to q8_0)
    acts = {"model.layers.%d.mlp.experts.%s" % (layer, p): "q8_0"
            for layer in range(L) for p in ("gate_up_proj", "down_proj")}
    m = reference.Model(d, acts=acts)
    ref = m.forward(prompt)
    fk = files.get("keep", d + ".missing")
    got = compare_float("gpt_oss_mxfp4_logits_prefill", fk, ref, "--threads", "2")
    compare_float("gpt_oss_mxfp4_logits_token_by_token", fk, ref, "--step")
    try:
        hf = colibri(d, "--threads", "2").stdout
        kept = colibri(fk, "--threads", "2").stdout
        tap(hf == kept and got is not None, "gpt_oss_mxfp4_hf_dir_equals_colibri_bitwise")
    except Exception as e:  # noqa: BLE001
        tap(False, "gpt_oss_mxfp4_hf_dir_equals_colibri_bitwise", str(e))
    want_gen = m.greedy(prompt, 48)
    for mode in ([], ["--step"]):
        name = "gpt_oss_mxfp4_greedy_48_past_the_window%s" % ("_token_by_token" if mode else "")
        try:
            gen = [int(t) for t in colibri(fk, "--greedy", "48", *mode).stdout.split()]
        except Exception as e:  # noqa: BLE001
            tap(False, name, str(e))
            continue
        tap(gen == want_gen, name, "colibri   %s" % " ".join(map(str, gen)),
            "reference %s" % " ".join(map(str, want_gen)))

    refusals(tap, bin_, out, d, cfg)


def rewrite(d, edit):
    """Apply @edit(tensors) to every shard of @d, keeping each tensor's dtype
    (U8 stays U8, the rest is written as F32)."""
    with open(os.path.join(d, "model.safetensors.index.json")) as f:
        files = sorted(set(json.load(f)["weight_map"].values()))
    for fn in files:
        path = os.path.join(d, fn)
        t = reference.read_safetensors(path)
        edit(t)
        make_checkpoint.write_safetensors(
            path, {k: v if v.dtype == np.uint8 else v.astype(np.float32) for k, v in t.items()},
            "F32")


def refusals(tap, bin_, out, src, cfg):
    d = os.path.join(out, "gpt_oss_mxfp4_bad")
    o = os.path.join(out, "gpt_oss_mxfp4_bad.colibri")
    e1 = "model.layers.1.mlp.experts."

    def shorten(name):
        def f(t):
            if name in t:
                t[name] = t[name][..., :-1]
        return f

    def drop(name):
        def f(t):
            t.pop(name, None)
        return f

    def nan_scale(t):
        k = e1 + "down_proj_scales"
        if k in t:
            t[k] = t[k].copy()
            t[k][2, 5, 1] = 255

    def as_f32(t):
        k = e1 + "gate_up_proj_blocks"
        if k in t:
            t[k] = t[k].astype(np.float32)

    cases = [  # name, tensor edit, config change, words the message must hold
        ("blocks_wrong_shape", shorten(e1 + "gate_up_proj_blocks"), None,
         ["'%sgate_up_proj_blocks'" % e1, "shape", "want 4 x 128 x 3 x 16"]),
        ("scales_wrong_shape", shorten(e1 + "down_proj_scales"), None,
         ["'%sdown_proj_scales'" % e1, "shape", "want 4 x 96 x 2"]),
        ("missing_scales", drop(e1 + "gate_up_proj_scales"), None,
         ["'%sgate_up_proj_scales' is missing" % e1]),
        ("missing_blocks", drop(e1 + "down_proj_blocks"), None,
         ["'%sdown_proj_blocks' is missing" % e1]),
        ("nan_scale", nan_scale, None,
         ["'%sdown_proj_scales'" % e1, "expert 2, row 5, block 1", "NaN"]),
        ("blocks_not_u8", as_f32, None, ["'%sgate_up_proj_blocks'" % e1, "dtype F32", "U8"]),
        ("other_quant_method", None, {"quant_method": "fp8"}, ["'quantization_config'"]),
    ]
    for name, edit, qc, needles in cases:
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d)
        if edit:
            rewrite(d, edit)
        if qc:
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(dict(cfg, quantization_config=qc), f)
        if os.path.exists(o):
            os.unlink(o)
        r = convert(bin_, d, o, "q8_0")
        tap(0 < r.returncode < 128 and all(n in r.stderr for n in needles) and
            not os.path.exists(o), "gpt_oss_mxfp4_refuses_" + name,
            "exit %d, stderr: %s" % (r.returncode, r.stderr.strip()))
    shutil.rmtree(d, ignore_errors=True)
