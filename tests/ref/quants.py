# SPDX-License-Identifier: MIT OR GPL-2.0
"""GGUF block types in numpy, written from the layouts (docs/format.md),
independently of the C engine.

dequant(name, raw, n) decodes n weights (a whole number of blocks) to
float32, computing each value in float32 in the order GGUF's dequantizers
use (q4_K: (d * sc) * q - (dmin * m)), so that the result is bit-identical
with the engine's cb_dequantize_row().  act_quant(form, x) rounds
activation rows the way the engine quantizes them before an integer dot
product (q8_0, q8_1: round half away from zero of x / (amax / 127) with the
scale stored as a half; q8_K: round half to even of x * (-127 / m) with an
f32 scale), returning the dequantized values the kernels effectively use.

Names are the engine's (cb_dtype_name): q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl
q2_K q3_K q4_K q5_K q6_K iq4_xs mxfp4, plus f32 f16 bf16.

mxfp4 (OCP MX FP4, GGUF's MXFP4): byte 0 an E8M0 exponent e, then q4_0's
nibble layout of E2M1 codes; a weight is E2M1(code) * 2^(e - 127), computed
here as in the engine, the doubled table value times 2^(e - 128) in float32
(exact unless it overflows to infinity); e = 255 decodes to NaN.
"""
import numpy as np

F32 = np.float32

IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                 dtype=np.int32)
# E2M1 (OCP): magnitudes of codes 0..7, bit 3 the sign
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])

# name: (elements per block, bytes per block, activation form)
TYPES = {
    "f32": (1, 4, "f32"), "f16": (1, 2, "f32"), "bf16": (1, 2, "f32"),
    "q8_0": (32, 34, "q8_0"), "q4_0": (32, 18, "q8_0"), "q4_1": (32, 20, "q8_1"),
    "q5_0": (32, 22, "q8_0"), "q5_1": (32, 24, "q8_1"), "iq4_nl": (32, 18, "q8_0"),
    "q2_K": (256, 84, "q8_K"), "q3_K": (256, 110, "q8_K"), "q4_K": (256, 144, "q8_K"),
    "q5_K": (256, 176, "q8_K"), "q6_K": (256, 210, "q8_K"), "iq4_xs": (256, 136, "q8_K"),
    "mxfp4": (32, 17, "q8_0"),
}
# the engine's dtype numbers (the .colibri directory's dtype field)
DTYPE_IDS = {"f32": 0, "f16": 1, "bf16": 2, "q8_0": 3, "q4_0": 4, "q4_1": 5, "q5_0": 6,
             "q5_1": 7, "iq4_nl": 8, "q2_K": 9, "q3_K": 10, "q4_K": 11, "q5_K": 12,
             "q6_K": 13, "iq4_xs": 14, "mxfp4": 15}
# ggml's type numbers (GGUF tensor infos)
GGML_IDS = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8,
            "q2_K": 10, "q3_K": 11, "q4_K": 12, "q5_K": 13, "q6_K": 14, "iq4_nl": 20,
            "iq4_xs": 23, "bf16": 30, "mxfp4": 39}


def row_bytes(name, n):
    blk, size, _ = TYPES[name]
    assert n % blk == 0, (name, n)
    return n // blk * size


def _half(u16):
    """little-endian half bits (uint16 array) -> float32"""
    return np.asarray(u16, dtype="<u2").view(np.float16).astype(F32)


def _blocks(raw, n, name):
    blk, size, _ = TYPES[name]
    b = np.frombuffer(raw, dtype=np.uint8)
    assert b.size == n // blk * size, (name, b.size, n)
    return b.reshape(-1, size)


def _u16(b, off):
    return b[:, off].astype(np.uint16) | (b[:, off + 1].astype(np.uint16) << 8)


def _nibbles32(qs):
    """[nb, 16] bytes -> [nb, 32] quants: byte j low nibble = weight j, high = j + 16"""
    return np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int32)


def _fifth32(qh):
    """[nb, 4] bytes (little-endian word) -> [nb, 32]: bit i = weight i's fifth bit"""
    h = (qh[:, 0].astype(np.uint32) | qh[:, 1].astype(np.uint32) << 8 |
         qh[:, 2].astype(np.uint32) << 16 | qh[:, 3].astype(np.uint32) << 24)
    return ((h[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int32)


def _q2planes(qs):
    """[nb, 64] bytes -> [nb, 256]: weight 128h + 32p + l = bits 2p of qs[32h + l]"""
    nb = qs.shape[0]
    out = np.zeros((nb, 256), dtype=np.int32)
    for h in range(2):
        for p in range(4):
            out[:, 128 * h + 32 * p:128 * h + 32 * p + 32] = (qs[:, 32 * h:32 * h + 32] >> (2 * p)) & 3
    return out


def _k4_scales(s):
    """[nb, 12] bytes -> sc [nb, 8], m [nb, 8] (q4_K / q5_K packing)"""
    s = s.astype(np.int32)
    sc = np.zeros((s.shape[0], 8), dtype=np.int32)
    m = np.zeros_like(sc)
    for j in range(4):
        sc[:, j] = s[:, j] & 63
        m[:, j] = s[:, j + 4] & 63
    for j in range(4, 8):
        sc[:, j] = (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4)
        m[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
    return sc, m


def _q3_scales(s):
    """[nb, 12] bytes -> 16 six-bit scales (unsigned 0..63)"""
    s = s.astype(np.int32)
    out = np.zeros((s.shape[0], 16), dtype=np.int32)
    for j in range(16):
        lo = s[:, j] & 15 if j < 8 else s[:, j - 8] >> 4
        out[:, j] = lo | (((s[:, 8 + j % 4] >> (2 * (j // 4))) & 3) << 4)
    return out


def dequant(name, raw, n):
    """n weights of type name from the bytes raw -> float32[n]"""
    if name == "f32":
        return np.frombuffer(raw, dtype="<f4").astype(F32).copy()
    if name == "f16":
        return np.frombuffer(raw, dtype="<f2").astype(F32)
    if name == "bf16":
        return (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(F32)
    b = _blocks(raw, n, name)
    with np.errstate(invalid="ignore", over="ignore"):
        return _DEQ[name](b).reshape(-1)


def _dq_q8_0(b):
    return _half(_u16(b, 0))[:, None] * b[:, 2:34].view(np.int8).astype(F32)


def _dq_q4_0(b):
    return (_nibbles32(b[:, 2:18]) - 8).astype(F32) * _half(_u16(b, 0))[:, None]


def _dq_q4_1(b):
    d, m = _half(_u16(b, 0))[:, None], _half(_u16(b, 2))[:, None]
    return _nibbles32(b[:, 4:20]).astype(F32) * d + m


def _dq_q5_0(b):
    q = _nibbles32(b[:, 6:22]) | (_fifth32(b[:, 2:6]) << 4)
    return (q - 16).astype(F32) * _half(_u16(b, 0))[:, None]


def _dq_q5_1(b):
    d, m = _half(_u16(b, 0))[:, None], _half(_u16(b, 2))[:, None]
    q = _nibbles32(b[:, 8:24]) | (_fifth32(b[:, 4:8]) << 4)
    return q.astype(F32) * d + m


def _dq_iq4_nl(b):
    return _half(_u16(b, 0))[:, None] * IQ4NL[_nibbles32(b[:, 2:18])].astype(F32)


def _dq_q2_K(b):
    sc = b[:, 0:16].astype(np.int32)
    q = _q2planes(b[:, 16:80]).reshape(-1, 16, 16)
    d, dmin = _half(_u16(b, 80))[:, None], _half(_u16(b, 82))[:, None]
    dl = (d * (sc & 15).astype(F32))[:, :, None]
    ml = (dmin * (sc >> 4).astype(F32))[:, :, None]
    return dl * q.astype(F32) - ml


def _dq_q3_K(b):
    hm, qs, sc = b[:, 0:32], b[:, 32:96], _q3_scales(b[:, 96:108])
    e = np.arange(256)
    hbit = (hm[:, e % 32] >> (e // 32)) & 1
    q = (_q2planes(qs) | (hbit.astype(np.int32) << 2)) - 4
    dl = (_half(_u16(b, 108))[:, None] * (sc - 32).astype(F32))[:, :, None]
    return dl * q.reshape(-1, 16, 16).astype(F32)


def _dq_k45(b, five):
    d, dmin = _half(_u16(b, 0))[:, None], _half(_u16(b, 2))[:, None]
    sc, m = _k4_scales(b[:, 4:16])
    qs = b[:, 48:176] if five else b[:, 16:144]
    nb = b.shape[0]
    q = np.zeros((nb, 8, 32), dtype=np.int32)
    for c in range(4):
        chunk = qs[:, 32 * c:32 * c + 32].astype(np.int32)
        q[:, 2 * c] = chunk & 15
        q[:, 2 * c + 1] = chunk >> 4
        if five:
            qh = b[:, 16:48].astype(np.int32)
            q[:, 2 * c] |= ((qh >> (2 * c)) & 1) << 4
            q[:, 2 * c + 1] |= ((qh >> (2 * c + 1)) & 1) << 4
    dl = (d * sc.astype(F32))[:, :, None]
    ml = (dmin * m.astype(F32))[:, :, None]
    return dl * q.astype(F32) - ml


def _dq_q6_K(b):
    ql, qh = b[:, 0:128].astype(np.int32), b[:, 128:192].astype(np.int32)
    sc = b[:, 192:208].view(np.int8).astype(F32)
    d = _half(_u16(b, 208))[:, None]
    nb = b.shape[0]
    q = np.zeros((nb, 256), dtype=np.int32)
    for h in range(2):
        L, H = ql[:, 64 * h:64 * h + 64], qh[:, 32 * h:32 * h + 32]
        o = 128 * h
        q[:, o:o + 32] = (L[:, :32] & 15) | ((H & 3) << 4)
        q[:, o + 32:o + 64] = (L[:, 32:] & 15) | (((H >> 2) & 3) << 4)
        q[:, o + 64:o + 96] = (L[:, :32] >> 4) | (((H >> 4) & 3) << 4)
        q[:, o + 96:o + 128] = (L[:, 32:] >> 4) | ((H >> 6) << 4)
    dl = (d * sc)[:, :, None]            # d * sc first, as the C loop
    return dl * (q - 32).reshape(-1, 16, 16).astype(F32)


def _dq_iq4_xs(b):
    d = _half(_u16(b, 0))[:, None]
    sh = _u16(b, 2).astype(np.int32)
    sl = b[:, 4:8].astype(np.int32)
    j = np.arange(8)
    ls = ((sl[:, j // 2] >> (4 * (j % 2))) & 15) | (((sh[:, None] >> (2 * j)) & 3) << 4)
    qs = b[:, 8:136].reshape(-1, 8, 16).astype(np.int32)
    idx = np.concatenate([qs & 15, qs >> 4], axis=2)      # [nb, 8, 32]
    dl = (d * (ls - 32).astype(F32))[:, :, None]
    return dl * IQ4NL[idx].astype(F32)


def _dq_mxfp4(b):
    e = b[:, 0].astype(np.int64)
    # half the scale, 2^(e - 128), exactly in float32 (e = 0: 2^-128, a subnormal)
    d = np.ldexp(np.float64(1), e - 128).astype(F32)
    d[e == 255] = np.nan
    doubled = (2 * E2M1).astype(F32)   # 0 1 2 3 4 6 8 12, signed; -0 is 0 in ggml's table
    doubled[8] = F32(0)
    with np.errstate(over="ignore", invalid="ignore"):
        return d[:, None] * doubled[_nibbles32(b[:, 1:17])]


_DEQ = {"q8_0": _dq_q8_0, "q4_0": _dq_q4_0, "q4_1": _dq_q4_1, "q5_0": _dq_q5_0,
        "q5_1": _dq_q5_1, "iq4_nl": _dq_iq4_nl, "q2_K": _dq_q2_K, "q3_K": _dq_q3_K,
        "q4_K": lambda b: _dq_k45(b, False), "q5_K": lambda b: _dq_k45(b, True),
        "q6_K": _dq_q6_K, "iq4_xs": _dq_iq4_xs, "mxfp4": _dq_mxfp4}


# --- activations -------------------------------------------------------------

def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v).astype(np.float64) + 0.5)


def act_quant(form, x):
    """rows x (float, last axis a whole number of blocks) as the kernels see
    them after quantization to form (f32: unchanged), as float64"""
    x = np.asarray(x, dtype=F32)
    if form == "f32":
        return x.astype(np.float64)
    shape = x.shape
    if form in ("q8_0", "q8_1"):
        b = x.reshape(-1, 32)
        amax = np.abs(b).max(axis=1)
        d = (amax / F32(127)).astype(F32)
        with np.errstate(divide="ignore"):
            idv = np.where(d != 0, F32(1) / d, F32(0)).astype(F32)
        q = np.clip(_round_away((b * idv[:, None]).astype(F32)), -127, 127)
        dh = d.astype(np.float16).astype(np.float64)
        return (q * dh[:, None]).reshape(shape)
    assert form == "q8_K", form
    b = x.reshape(-1, 256)
    idx = np.abs(b).argmax(axis=1)
    mx = b[np.arange(b.shape[0]), idx]
    out = np.zeros(b.shape, dtype=np.float64)
    nz = mx != 0
    iscale = (F32(-127) / mx[nz]).astype(F32)
    q = np.clip(np.rint((b[nz] * iscale[:, None]).astype(F32)), -127, 127)   # rint: half to even
    d = (F32(1) / iscale).astype(F32).astype(np.float64)
    out[nz] = q * d[:, None]
    return out.reshape(shape)
