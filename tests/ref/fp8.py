# SPDX-License-Identifier: MIT OR GPL-2.0
"""FP8 checkpoints with 128 x 128 block scales (DeepSeek-V3/R1's layout),
end to end, called from tests/ref/run.

decode(codes, fmt) is written here from the definitions of float8_e4m3fn
(bias 7, no infinities, S.1111.111 NaN) and float8_e5m2 (bias 15, IEEE
infinities and NaNs), independently of userspace/lib/import/st_fp8.c; Debian 12's
torch has no float8 types to compare with.

checks():
  every e4m3 and e5m2 code: a Llama checkpoint whose q_proj (e4m3) and
      k_proj (e5m2) hold every finite code, scale 1, converted with
      --quant f32: the stored f32 bits are decode()'s, -0 included;
  DeepSeek-V3 in FP8: every linear weight of the attention and the MLPs
      stored as codes times a random f32 factor per 128 x 128 block (hidden
      160, rows of 136, 192, 224: partial blocks in both directions), the
      router, embeddings, head and norms as F32, as DeepSeek ships them.
      The same weights dequantized (code * factor in f32) are written as
      an F32 checkpoint.  The FP8 checkpoint converted with --quant f32 is
      byte for byte the F32 checkpoint's conversion; its logits (in-process
      and converted) are within the F32 bound of the reference on the
      dequantized weights, with the same greedy continuation; the default
      conversion stores its FP8 matrices as bf16;
  refusals naming the tensor or field: NaN and infinite codes, a missing,
      misshaped, infinite or overflowing scale, FP8 without (or with a bad)
      quantization_config.
"""
import json
import os
import shutil
import struct
import subprocess

import numpy as np

import colibri_file
import make_checkpoint
import reference

FMT = {"F8_E4M3": (4, 3), "F8_E5M2": (5, 2)}
QCONF = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
         "weight_block_size": [128, 128]}
BLOCK = 128


def decode(codes, dtype):
    """float32 values of uint8 codes; NaN/inf where the format has them."""
    eb, mb = FMT[dtype]
    c = np.asarray(codes, dtype=np.int64)
    bias = (1 << (eb - 1)) - 1
    s = c >> 7
    e = (c >> mb) & ((1 << eb) - 1)
    m = c & ((1 << mb) - 1)
    v = np.where(e > 0, np.ldexp(1.0 + m / float(1 << mb), e - bias),
                 np.ldexp(m / float(1 << mb), 1 - bias))
    if eb == 4:
        v = np.where((e == 15) & (m == 7), np.nan, v)
    else:
        v = np.where(e == 31, np.where(m == 0, np.inf, np.nan), v)
    return np.where(s == 1, -v, v).astype(np.float32)


def finite_codes(dtype):
    c = np.arange(256)
    return c[np.isfinite(decode(c, dtype))]


def encode(x):
    """Nearest e4m3 code of each value (|x| <= 448); negatives that round
    to zero become -0 (0x80)."""
    pos = np.arange(0x7F)                       # 0x00..0x7e: 0 .. 448
    vals = decode(pos, "F8_E4M3").astype(np.float64)
    a = np.abs(x)
    i = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)
    i = np.where(a - vals[i - 1] <= vals[i] - a, i - 1, i)
    return (i | np.where(x < 0, 0x80, 0)).astype(np.uint8)


def quantize(w, rng):
    """w [R, C] -> (codes, scale_inv [ceil(R/128), ceil(C/128)] f32,
    dequantized f32): a block's factor is its amax / 448 times a random
    factor in [1, 1.5) (so not every block reaches 448)."""
    R, C = w.shape
    br, bc = -(-R // BLOCK), -(-C // BLOCK)
    s = np.zeros((br, bc), np.float32)
    codes = np.zeros((R, C), np.uint8)
    for i in range(br):
        for j in range(bc):
            blk = w[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK].astype(np.float64)
            f = np.float32(np.abs(blk).max() / 448.0 * rng.uniform(1.0, 1.5))
            s[i, j] = f
            codes[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK] = encode(blk / float(f))
    full = np.repeat(np.repeat(s, BLOCK, 0), BLOCK, 1)[:R, :C]
    return codes, s, decode(codes, "F8_E4M3") * full   # one f32 multiplication


def write(path, tensors):
    """tensors: name -> (dtype, array); F8_* arrays are uint8 codes."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        dt, a = tensors[name]
        b = (np.ascontiguousarray(a, np.uint8) if dt in FMT else
             np.ascontiguousarray(a, "<f4")).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_dir(d, cfg, tensors):
    os.makedirs(d, exist_ok=True)
    for fn in os.listdir(d):
        os.unlink(os.path.join(d, fn))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write(os.path.join(d, "model.safetensors"), tensors)


def is_fp8_weight(name, a):
    """DeepSeek-V3's FP8 tensors: the linear weights of attention and MLPs;
    not the embeddings, the head, the router or any vector."""
    return (a.ndim == 2 and name.startswith("model.layers.") and name.endswith("_proj.weight"))


def run(bin_, *args):
    return subprocess.run([bin_] + list(args), capture_output=True, text=True)


def checks(tap, colibri, logits_of, out, bin_, f_tol, bf16_bounds, greedy_n, prompt):
    every_code(tap, out, bin_)
    fp8, f32dir, t_fp8 = deepseek_fp8(tap, colibri, logits_of, out, bin_, f_tol, bf16_bounds,
                                      greedy_n, prompt)
    refusals(tap, colibri, out, bin_, fp8, t_fp8)
    shutil.rmtree(f32dir, ignore_errors=True)


def every_code(tap, out, bin_):
    d = os.path.join(out, "fp8_codes")
    cfg = dict(make_checkpoint.CONFIGS["llama"], quantization_config=QCONF)
    w = make_checkpoint.make_tensors(cfg, np.random.default_rng(3))
    t = {k: ("F32", v) for k, v in w.items()}
    want = {}
    for proj, dt in (("q_proj", "F8_E4M3"), ("k_proj", "F8_E5M2")):
        name = "model.layers.0.self_attn.%s.weight" % proj
        shape = w[name].shape
        codes = np.resize(finite_codes(dt), shape).astype(np.uint8)
        t[name] = (dt, codes)
        t[name + "_scale_inv"] = ("F32", np.ones((-(-shape[0] // BLOCK), -(-shape[1] // BLOCK)),
                                                 np.float32))
        want[proj] = decode(codes, dt)
    write_dir(d, cfg, t)
    col = os.path.join(out, "fp8_codes.colibri")
    r = run(bin_, "convert", d, "-o", col, "--quant", "f32", "--no-tokenizer")
    if r.returncode:
        tap(False, "fp8_every_code_converts", r.stderr.strip())
        return
    buf, ents = colibri_file.directory(col)
    for role, lay, _, dt, rows, cols, off, size in ents:
        proj = {"wq": "q_proj", "wk": "k_proj"}.get(role)
        if proj is None or lay != 0:
            continue
        got = np.frombuffer(buf[off:off + size], "<f4").reshape(rows, cols)
        ok = dt == "f32" and got.shape == want[proj].shape and \
            np.array_equal(got.view(np.uint32), want[proj].view(np.uint32))
        n = len(finite_codes("F8_E4M3" if proj == "q_proj" else "F8_E5M2"))
        tap(ok, "fp8_%s_every_finite_code_decodes_bit_exact" % ("e4m3" if proj == "q_proj" else "e5m2"),
            "%d codes (-0 included) in a %dx%d %s matrix" % (n, rows, cols, proj))
    # the decoder itself: a few values from the formats' definitions
    anchors = decode([0x7E, 0x38, 0x01, 0x80, 0xFE], "F8_E4M3").tolist() + \
        decode([0x7B, 0x3C, 0x01, 0x7C], "F8_E5M2").tolist()
    tap(anchors[:3] + anchors[4:7] == [448.0, 1.0, 2.0 ** -9, -448.0, 57344.0, 1.0] and
        anchors[7] == 2.0 ** -16 and np.signbit(anchors[3]) and np.isinf(anchors[8]) and
        np.isnan(decode([0x7F, 0xFF], "F8_E4M3")).all(), "fp8_reference_decoder_anchors")
    # NaN codes (e4m3 0x7f and 0xff) and e5m2's infinity are refused by name
    for proj, dt, code, what in (("q_proj", "F8_E4M3", 0x7F, "NaN"), ("q_proj", "F8_E4M3", 0xFF, "NaN"),
                                 ("k_proj", "F8_E5M2", 0xFC, "infinite")):
        name = "model.layers.0.self_attn.%s.weight" % proj
        bad = dict(t)
        codes = t[name][1].copy()
        codes[3, 5] = code
        bad[name] = (dt, codes)
        write_dir(d, cfg, bad)
        r = run(bin_, "convert", d, "-o", col, "--quant", "f32", "--no-tokenizer")
        tap(r.returncode == 1 and "'%s'" % name in r.stderr and "[3, 5]" in r.stderr and
            what in r.stderr and "0x%02x" % code in r.stderr,
            "fp8_refuses_%s_code_0x%02x" % (dt.lower(), code), "exit %d: %s" % (r.returncode, r.stderr.strip()))
    shutil.rmtree(d, ignore_errors=True)
    os.unlink(col)


DS_CFG = dict(make_checkpoint.CONFIGS["deepseek_v3"], hidden_size=160, intermediate_size=136,
              quantization_config=QCONF)


def deepseek_fp8(tap, colibri, logits_of, out, bin_, f_tol, bf16_bounds, greedy_n, prompt):
    rng = np.random.default_rng(11)
    w = make_checkpoint.make_tensors(DS_CFG, rng)
    t_fp8, t_f32 = {}, {}
    for name, a in w.items():
        if is_fp8_weight(name, a):
            codes, s, deq = quantize(a, rng)
            t_fp8[name] = ("F8_E4M3", codes)
            t_fp8[name + "_scale_inv"] = ("F32", s)
            t_f32[name] = ("F32", deq)
        else:
            t_fp8[name] = t_f32[name] = ("F32", a)
    fp8 = os.path.join(out, "deepseek_v3_fp8")
    f32dir = os.path.join(out, "deepseek_v3_fp8_dequantized")
    write_dir(fp8, DS_CFG, t_fp8)
    write_dir(f32dir, dict(DS_CFG, quantization_config=None), t_f32)
    n8 = sum(1 for v in t_fp8.values() if v[0] == "F8_E4M3")
    edges = sum(1 for v in t_fp8.values() if v[0] == "F8_E4M3" and (v[1].shape[0] % BLOCK or v[1].shape[1] % BLOCK))

    # --quant f32: the same bytes as the dequantized F32 checkpoint's
    a, b = os.path.join(out, "ds_fp8.colibri"), os.path.join(out, "ds_f32.colibri")
    ra = run(bin_, "convert", fp8, "-o", a, "--quant", "f32", "--no-tokenizer", "--name", "m")
    rb = run(bin_, "convert", f32dir, "-o", b, "--no-tokenizer", "--name", "m", "--threads", "1")
    same = not ra.returncode and not rb.returncode and open(a, "rb").read() == open(b, "rb").read()
    tap(same, "fp8_deepseek_v3_f32_conversion_equals_the_dequantized_f32_checkpoints_bitwise",
        "%d FP8 matrices, %d with partial 128-blocks" % (n8, edges), ra.stderr.strip(), rb.stderr.strip())

    m = reference.Model(f32dir)
    ref = m.forward(prompt)
    scale = np.abs(ref).max()
    for name, model, args in (("in_process", fp8, ["--quant", "f32"]), ("converted", a, [])):
        try:
            got = logits_of(colibri(model, *args, "--threads", "2").stdout)
            err = np.abs(got - ref).max()
            tap(got.shape == ref.shape and bool(err <= f_tol * scale),
                "fp8_deepseek_v3_%s_f32_logits_match_reference_on_dequantized_weights" % name,
                "max|diff| %.3g = %.3g of max|logit|" % (err, err / scale))
        except Exception as e:  # noqa: BLE001
            tap(False, "fp8_deepseek_v3_%s_f32_logits_match_reference_on_dequantized_weights" % name, str(e))
    want = m.greedy(prompt, greedy_n)
    try:
        gen = [int(x) for x in colibri(a, "--greedy", str(greedy_n)).stdout.split()]
    except Exception as e:  # noqa: BLE001
        gen = str(e)
    tap(gen == want, "fp8_deepseek_v3_greedy_%d" % greedy_n, "colibri   %s" % gen, "reference %s" % want)

    # default (keep): FP8 matrices become bf16, within the bf16 bounds
    c = os.path.join(out, "ds_fp8_default.colibri")
    r = run(bin_, "convert", fp8, "-o", c, "--no-tokenizer")
    info = run(bin_, "info", c, "--json")
    try:
        dts = json.loads(info.stdout)["dtypes"]
        ok = not r.returncode and set(dts) == {"f32", "bf16"}
        agree_min, med_max, worst_max = bf16_bounds
        got = logits_of(colibri(c, "--threads", "2").stdout)
        per_pos = np.abs(got - ref).max(axis=1) / scale
        agree = float((got.argmax(1) == ref.argmax(1)).mean())
        tap(ok and agree >= agree_min and np.median(per_pos) <= med_max and per_pos.max() <= worst_max,
            "fp8_deepseek_v3_default_conversion_is_bf16_within_its_bounds",
            "dtypes %s; top-1 %.3f, median %.4f, worst %.4f" % (dts, agree, np.median(per_pos), per_pos.max()))
    except Exception as e:  # noqa: BLE001
        tap(False, "fp8_deepseek_v3_default_conversion_is_bf16_within_its_bounds",
            "%s %s %s" % (e, r.stderr.strip(), info.stdout[:300]))
    for f in (a, b, c):
        if os.path.exists(f):
            os.unlink(f)
    return fp8, f32dir, t_fp8


def refusals(tap, colibri, out, bin_, src, t_fp8):
    """Each damaged variant is refused by colibri logits (in-process load)
    and colibri convert, naming the tensor or the field."""
    d = os.path.join(out, "deepseek_v3_fp8_bad")
    kvb = "model.layers.1.self_attn.kv_b_proj.weight"     # cut per head (the split path)
    o = "model.layers.0.mlp.gate_proj.weight"     # [136, 160]: 2 x 2 blocks, both partial
    ex = "model.layers.2.mlp.experts.3.down_proj.weight"

    def nan_code(t):
        codes = t[kvb][1].copy()
        codes[130, 7] = 0x7F
        t[kvb] = ("F8_E4M3", codes)

    def scale(name, v):
        def f(t):
            s = t[name + "_scale_inv"][1].copy()
            s.flat[-1] = v
            t[name + "_scale_inv"] = ("F32", s)
        return f

    def shape(t):
        s = t[o + "_scale_inv"][1]
        t[o + "_scale_inv"] = ("F32", s[:, :1].copy())

    def drop(t):
        del t[ex + "_scale_inv"]

    cases = [
        ("nan_code_in_kv_b", nan_code, None, ["'%s'" % kvb, "[130, 7]", "NaN"]),
        ("missing_scale", drop, None, ["'%s'" % ex, "'%s_scale_inv' is missing" % ex]),
        ("scale_shape", shape, None, ["'%s'" % o, "must be F32 [2, 2]", "not F32 [2, 1]"]),
        ("infinite_scale", scale(o, np.inf), None, ["'%s'" % o, "[1, 1] is inf: not finite"]),
        ("nan_scale", scale(ex, np.nan), None, ["'%s'" % ex, "is nan: not finite"]),
        ("overflowing_scale", scale(kvb, 1e37), None, ["'%s'" % kvb, "would overflow f32"]),
        ("no_quantization_config", None, {"quantization_config": None},
         ["is F8_E4M3", "does not declare fp8 block scales"]),
        ("other_quant_method", None, {"quantization_config": dict(QCONF, quant_method="bitsandbytes")},
         ["is F8_E4M3", "does not declare fp8 block scales"]),
        ("bad_block_size", None, {"quantization_config": dict(QCONF, weight_block_size=[128])},
         ["'weight_block_size' must be two integers"]),
        ("per_tensor_fp8", None, {"quantization_config": dict(QCONF, weight_block_size=None)},
         ["without 'weight_block_size'"]),
        ("bad_fmt", None, {"quantization_config": dict(QCONF, fmt="e3m4")}, ["'fmt'"]),
    ]
    col = os.path.join(out, "bad_fp8.colibri")
    for name, edit, cfg_change, needles in cases:
        t = dict(t_fp8)
        if edit:
            edit(t)
        write_dir(d, dict(DS_CFG, **(cfg_change or {})), t)
        for how, r in (("logits", colibri(d, "--quant", "f32", check=False)),
                       ("convert", run(bin_, "convert", d, "-o", col, "--no-tokenizer"))):
            tap(0 < r.returncode < 128 and all(n in r.stderr for n in needles) and
                not os.path.exists(col), "fp8_%s_refuses_%s" % (how, name),
                "exit %d: %s" % (r.returncode, r.stderr.strip()))
    shutil.rmtree(d, ignore_errors=True)
