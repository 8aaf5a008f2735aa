/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_quant.h - weight types and quantization blocks, shared by the kernel
 * module, the userspace library and the converters.
 *
 * The block layouts are GGUF's, byte for byte, so GGUF tensors are placed in
 * a .colibri file without requantizing.  All multi-byte fields are
 * little-endian; every scale ("d", "dmin", "m") is an IEEE half.  For each
 * type: the formula of a weight, the bits per weight, the role of every
 * byte, and a size assertion.  docs/format.md has the same in prose, and
 * tests/ref/quants.py decodes every layout independently in numpy.
 *
 * Weights are read by the gemm kernels against activations quantized per
 * row into one of four forms (enum cb_act_kind): f32 for the float types, q8_0
 * or q8_1 32-blocks for the legacy block types, q8_K 256-blocks for the
 * k-quants and IQ4_XS.  Which form a type reads is in its descriptor.
 * MXFP4 is the one type whose scale is not a half (an E8M0 exponent byte).
 */
#ifndef CB_QUANT_H
#define CB_QUANT_H

#include "core/cb_platform.h"

/*
 * Weight types.  The numbers are ABI, uapi's COLIBRI_DT_* (they appear in
 * .colibri files; cb_format.c asserts they are equal).
 */
enum cb_dtype {
	CB_DT_F32 = 0,
	CB_DT_F16 = 1,
	CB_DT_BF16 = 2,
	CB_DT_Q8_0 = 3,
	CB_DT_Q4_0 = 4,
	CB_DT_Q4_1 = 5,
	CB_DT_Q5_0 = 6,
	CB_DT_Q5_1 = 7,
	CB_DT_IQ4_NL = 8,
	CB_DT_Q2_K = 9,
	CB_DT_Q3_K = 10,
	CB_DT_Q4_K = 11,
	CB_DT_Q5_K = 12,
	CB_DT_Q6_K = 13,
	CB_DT_IQ4_XS = 14,
	CB_DT_MXFP4 = 15,
	CB_DT__COUNT
};

/*
 * Activation forms: how the gemm of a weight type wants the rows it
 * multiplies.  The float weight types read f32 rows; the block types read
 * rows quantized to blocks of their own kind, so that their dot products
 * run in integers (each variant's quantize_act op writes them).  A new
 * weight type names its form in cb_dtype_info(); a new form is a row here
 * and an op in every variant (cb_ops.h), not a branch in the forward pass.
 */
enum cb_act_kind {
	CB_ACT_F32 = 0,		/* f32 rows, as computed */
	CB_ACT_Q8_0 = 1,	/* q8_0 blocks of 32 (struct cb_block_q8_0) */
	CB_ACT_Q8_1 = 2,	/* q8_1 blocks of 32 (struct cb_block_q8_1) */
	CB_ACT_Q8_K = 3,	/* q8_K blocks of 256 (struct cb_block_q8_K) */
	CB_ACT__COUNT
};

/*
 * Columns of a row that a phase may hand to different chunks: whole blocks
 * of every activation form (one q8_K super-block, eight 32-blocks), so each
 * piece quantizes on its own.
 */
#define CB_ACT_PIECE 256

/* Elements per legacy block (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, mxfp4). */
#define CB_QK 32
/* Elements per k-quant super-block (q2_K ... q6_K, iq4_xs). */
#define CB_QK_K 256

/* ---- legacy 32-weight blocks ------------------------------------------ */

/*
 * q8_0: 32 weights share one scale.  w[i] = d * qs[i].
 * d is an IEEE half; qs are signed bytes.  34 bytes per 32 weights:
 * 8.5 bits per weight.  Also used for activations (quantized per row, per
 * 32-block, d = max|x| / 127) so that dot products run in integers.
 */
struct cb_block_q8_0 {
	cb_u16 d;		/* scale, f16 bits */
	cb_s8 qs[CB_QK];	/* quants */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q8_0) == 34, "q8_0 block is 34 bytes");

/*
 * q4_0: 32 weights share one scale.  Byte j of qs holds weight j in its low
 * nibble and weight j + 16 in its high nibble; w = d * (nibble - 8).
 * d is an IEEE half.  18 bytes per 32 weights: 4.5 bits per weight.
 */
struct cb_block_q4_0 {
	cb_u16 d;		/* scale, f16 bits */
	cb_u8 qs[CB_QK / 2];	/* nibbles */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q4_0) == 18, "q4_0 block is 18 bytes");

/*
 * q4_1: 32 weights share a scale and an offset.  Nibbles as in q4_0 (weight
 * j low nibble of byte j, weight j + 16 high nibble); w = d * nibble + m.
 * 20 bytes per 32 weights: 5 bits per weight.
 */
struct cb_block_q4_1 {
	cb_u16 d;		/* scale, f16 bits */
	cb_u16 m;		/* offset (the block's minimum), f16 bits */
	cb_u8 qs[CB_QK / 2];	/* nibbles */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q4_1) == 20, "q4_1 block is 20 bytes");

/*
 * q5_0: 5-bit quants q = nibble | fifth bit << 4, w = d * (q - 16).  Byte j
 * of qs: low nibble weight j, high nibble weight j + 16; bit i of the
 * little-endian 32-bit qh is the fifth bit of weight i.
 * 22 bytes per 32 weights: 5.5 bits per weight.
 */
struct cb_block_q5_0 {
	cb_u16 d;		/* scale, f16 bits */
	cb_u8 qh[4];		/* fifth bits, weight i at bit i */
	cb_u8 qs[CB_QK / 2];	/* low four bits, as q4_0 */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q5_0) == 22, "q5_0 block is 22 bytes");

/*
 * q5_1: q5_0's quants with an offset: w = d * q + m (q in 0..31).
 * 24 bytes per 32 weights: 6 bits per weight.
 */
struct cb_block_q5_1 {
	cb_u16 d;		/* scale, f16 bits */
	cb_u16 m;		/* offset, f16 bits */
	cb_u8 qh[4];		/* fifth bits */
	cb_u8 qs[CB_QK / 2];	/* low four bits */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q5_1) == 24, "q5_1 block is 24 bytes");

/*
 * iq4_nl: q4_0's nibbles index a fixed non-uniform table:
 * w = d * CB_IQ4NL_VALUES[nibble].  18 bytes per 32 weights: 4.5 bits per
 * weight.
 */
struct cb_block_iq4_nl {
	cb_u16 d;		/* scale, f16 bits */
	cb_u8 qs[CB_QK / 2];	/* table indices, as q4_0's nibbles */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_iq4_nl) == 18, "iq4_nl block is 18 bytes");

/* The 16 levels of iq4_nl and iq4_xs (GGUF's kvalues_iq4nl), an initializer. */
#define CB_IQ4NL_VALUES \
	{ -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 }

/*
 * mxfp4: the OCP microscaling FP4 format as GGUF stores it (GGML_TYPE_MXFP4).
 * 32 weights share one E8M0 exponent e (a biased power of two, no sign, no
 * mantissa); each weight is an E2M1 code (sign bit 3, values 0, 0.5, 1,
 * 1.5, 2, 3, 4, 6), placed as q4_0's nibbles: weight j in the low nibble of
 * qs[j], weight j + 16 in the high nibble.  The table is kept doubled as
 * integers (CB_MXFP4_VALUES) and the scale halved, which is exact:
 *   w = CB_MXFP4_VALUES[nibble] * 2^(e - 128)  (= E2M1 value * 2^(e - 127)).
 * e = 255 is NaN in the OCP format: no file may carry it (the loaders refuse
 * it as they refuse a non-finite half scale; cb_quant_find_bad_scale()).
 * e >= 253 with the largest codes exceeds f32 and gives infinity.
 * 17 bytes per 32 weights: 4.25 bits per weight.
 */
struct cb_block_mxfp4 {
	cb_u8 e;		/* shared exponent, E8M0 (bias 127) */
	cb_u8 qs[CB_QK / 2];	/* E2M1 codes, as q4_0's nibbles */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_mxfp4) == 17, "mxfp4 block is 17 bytes");

/* Twice the 16 E2M1 values (code bit 3 the sign), an initializer. */
#define CB_MXFP4_VALUES \
	{ 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 }

/* The E8M0 exponent byte that means NaN. */
#define CB_MXFP4_E_NAN 255

/*
 * The f32 bits of 2^(e - 128), half an E8M0 scale, exactly (integer only):
 * e >= 2 is a normal float with exponent field e - 1; e = 1 and e = 0 are
 * the subnormals 2^-127 and 2^-128; e = 255 gives a quiet NaN.
 */
static inline cb_u32 cb_e8m0_half_bits(cb_u8 e)
{
	if (e == CB_MXFP4_E_NAN)
		return 0x7fc00000u;
	if (e < 2)
		return 0x00200000u << e;
	return (cb_u32)(e - 1) << 23;
}

/* ---- k-quants: 256-weight super-blocks -------------------------------- */

/*
 * q2_K: 16 sub-blocks of 16 weights.  Byte s of scales holds sub-block s's
 * 4-bit scale (low nibble) and 4-bit min (high nibble):
 *   w = d * sc_s * q - dmin * m_s,  q in 0..3.
 * The 2-bit quants: for half h (weights 128h .. 128h + 127) and shift
 * position p (0..3), bits 2p..2p+1 of qs[32h + l] (l in 0..31) are weight
 * 128h + 32p + l.  84 bytes per 256 weights: 2.625 bits per weight.
 */
struct cb_block_q2_K {
	cb_u8 scales[CB_QK_K / 16];	/* sc | m << 4 per sub-block */
	cb_u8 qs[CB_QK_K / 4];		/* 2-bit quants */
	cb_u16 d;			/* scale of the scales, f16 bits */
	cb_u16 dmin;			/* scale of the mins, f16 bits */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q2_K) == 84, "q2_K block is 84 bytes");

/*
 * q3_K: 16 sub-blocks of 16 weights with 6-bit signed scales:
 *   w = d * (sc_s - 32) * (q - 4),  q in 0..7.
 * q's low two bits are packed like q2_K's (qs[32h + l] bits 2p..2p+1 for
 * weight 128h + 32p + l); its third bit is bit (w / 32) of hmask[w % 32].
 * sc_s, 6 bits: low four from scales[s] (s < 8) or scales[s - 8] >> 4
 * (s >= 8); high two are bits 2(s / 4)..2(s / 4)+1 of scales[8 + s % 4].
 * 110 bytes per 256 weights: 3.4375 bits per weight.
 */
struct cb_block_q3_K {
	cb_u8 hmask[CB_QK_K / 8];	/* third bits */
	cb_u8 qs[CB_QK_K / 4];		/* low two bits */
	cb_u8 scales[12];		/* 16 6-bit scales, packed */
	cb_u16 d;			/* scale of the scales, f16 bits */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q3_K) == 110, "q3_K block is 110 bytes");

/*
 * q4_K: 8 sub-blocks of 32 weights with 6-bit scales and mins:
 *   w = d * sc_j * q - dmin * m_j,  q in 0..15.
 * qs[32c + l] (chunk c in 0..3, l in 0..31): low nibble weight 64c + l
 * (sub-block 2c), high nibble weight 64c + 32 + l (sub-block 2c + 1).
 * scales (12 bytes) holds sc_j and m_j (CB_K4_SCALE_MIN below): for j < 4
 * sc_j = scales[j] & 63, m_j = scales[j + 4] & 63; for j >= 4
 * sc_j = (scales[j + 4] & 15) | (scales[j - 4] >> 6) << 4,
 * m_j = (scales[j + 4] >> 4) | (scales[j] >> 6) << 4.
 * 144 bytes per 256 weights: 4.5 bits per weight.
 */
struct cb_block_q4_K {
	cb_u16 d;			/* scale of the scales, f16 bits */
	cb_u16 dmin;			/* scale of the mins, f16 bits */
	cb_u8 scales[12];		/* 8 scales and 8 mins, 6 bits each */
	cb_u8 qs[CB_QK_K / 2];		/* nibbles */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q4_K) == 144, "q4_K block is 144 bytes");

/*
 * q5_K: q4_K with a fifth bit: q = nibble | h << 4 (q in 0..31),
 *   w = d * sc_j * q - dmin * m_j.
 * Nibbles and scales as in q4_K; the fifth bit of weight 64c + l is bit 2c
 * of qh[l], of weight 64c + 32 + l bit 2c + 1 of qh[l].
 * 176 bytes per 256 weights: 5.5 bits per weight.
 */
struct cb_block_q5_K {
	cb_u16 d;			/* scale of the scales, f16 bits */
	cb_u16 dmin;			/* scale of the mins, f16 bits */
	cb_u8 scales[12];		/* as q4_K */
	cb_u8 qh[CB_QK_K / 8];		/* fifth bits */
	cb_u8 qs[CB_QK_K / 2];		/* low four bits */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q5_K) == 176, "q5_K block is 176 bytes");

/*
 * q6_K: 16 sub-blocks of 16 weights with signed 8-bit scales:
 *   w = d * sc_s * (q - 32),  q in 0..63.
 * For half h (weights 128h ..) and l in 0..31, with L = ql + 64h and
 * H = qh[32h + l]:
 *   weight 128h + l      = L[l] & 15      | (H & 3) << 4
 *   weight 128h + 32 + l = L[l + 32] & 15 | (H >> 2 & 3) << 4
 *   weight 128h + 64 + l = L[l] >> 4      | (H >> 4 & 3) << 4
 *   weight 128h + 96 + l = L[l + 32] >> 4 | (H >> 6) << 4
 * Sub-block s is weights 16s .. 16s + 15.
 * 210 bytes per 256 weights: 6.5625 bits per weight.
 */
struct cb_block_q6_K {
	cb_u8 ql[CB_QK_K / 2];		/* low four bits */
	cb_u8 qh[CB_QK_K / 4];		/* high two bits */
	cb_s8 scales[CB_QK_K / 16];	/* signed sub-block scales */
	cb_u16 d;			/* scale of the scales, f16 bits */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q6_K) == 210, "q6_K block is 210 bytes");

/*
 * iq4_xs: 8 sub-blocks of 32 weights, iq4_nl's table with 6-bit scales:
 *   w = d * (ls_j - 32) * CB_IQ4NL_VALUES[nibble].
 * ls_j: low four bits (scales_l[j / 2] >> 4 (j % 2)) & 15, high two bits
 * (scales_h >> 2j) & 3.  Sub-block j's nibbles are qs[16j .. 16j + 15]:
 * weight 32j + l in the low nibble of qs[16j + l], 32j + 16 + l in the high.
 * 136 bytes per 256 weights: 4.25 bits per weight.
 */
struct cb_block_iq4_xs {
	cb_u16 d;			/* scale of the scales, f16 bits */
	cb_u16 scales_h;		/* high two bits of each scale */
	cb_u8 scales_l[CB_QK_K / 64];	/* low four bits of each scale */
	cb_u8 qs[CB_QK_K / 2];		/* table indices */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_iq4_xs) == 136, "iq4_xs block is 136 bytes");

/* ---- activation blocks (engine-internal, never in files) ------------- */

/*
 * q8_1: q8_0 plus the exact sum of its quants, for the weight types with an
 * offset (q4_1, q5_1): sum_i (d_w q_i + m) d_x x_i needs sum_i x_i.  (GGUF's
 * block_q8_1 stores d * sum as a half; the integer keeps it exact.)
 */
struct cb_block_q8_1 {
	cb_u16 d;		/* scale, f16 bits */
	cb_s16 sum;		/* sum of qs */
	cb_s8 qs[CB_QK];	/* quants */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q8_1) == 36, "q8_1 block is 36 bytes");

/*
 * q8_K: 256 activations with an f32 scale (GGUF's block_q8_K):
 * x[i] = d * qs[i], d = max / -127 for the x of largest magnitude, and the
 * sums of qs over each 16, which the k-quants' mins and offsets use.  The
 * scale is kept as its f32 bits so that non-FPU code may include this.
 */
struct cb_block_q8_K {
	cb_u32 d_bits;			/* scale, f32 bits */
	cb_s8 qs[CB_QK_K];		/* quants, |q| <= 127 */
	cb_s16 bsums[CB_QK_K / 16];	/* sum of qs[16s .. 16s + 15] */
};
CB_STATIC_ASSERT(sizeof(struct cb_block_q8_K) == 292, "q8_K block is 292 bytes");

/* ---- the type tables ------------------------------------------------- */

/**
 * struct cb_block_info - the storage of a row of a weight type or of an
 * activation form.
 * @name: short name ("q4_K"), as the tools print it.
 * @block: elements per block; a row is a whole number of blocks.
 * @block_bytes: bytes per block.
 * @act: for a weight type, the enum cb_act_kind its gemm reads.
 * @nscale: f16 scale fields per block (checked finite at load).
 * @scale_off: their byte offsets in the block.
 */
struct cb_block_info {
	const char *name;
	cb_u32 block;
	cb_u32 block_bytes;
	cb_u32 act;
	cb_u8 nscale;
	cb_u8 scale_off[2];
};

/* One entry of the tables below: name, block, bytes, form, scales and where. */
#define CB_BI(n, b, bb, a, ns, s0, s1)						\
	{ .name = (n), .block = (b), .block_bytes = (bb), .act = (a),		\
	  .nscale = (ns), .scale_off[0] = (s0), .scale_off[1] = (s1) }

/* The storage of weight type dt (enum cb_dtype), or NULL if unknown. */
static inline const struct cb_block_info *cb_dtype_info(cb_u32 dt)
{
	static const struct cb_block_info t[CB_DT__COUNT] = {
		[CB_DT_F32] = CB_BI("f32", 1, 4, CB_ACT_F32, 0, 0, 0),
		[CB_DT_F16] = CB_BI("f16", 1, 2, CB_ACT_F32, 0, 0, 0),
		[CB_DT_BF16] = CB_BI("bf16", 1, 2, CB_ACT_F32, 0, 0, 0),
		[CB_DT_Q8_0] = CB_BI("q8_0", CB_QK, 34, CB_ACT_Q8_0, 1, 0, 0),
		[CB_DT_Q4_0] = CB_BI("q4_0", CB_QK, 18, CB_ACT_Q8_0, 1, 0, 0),
		[CB_DT_Q4_1] = CB_BI("q4_1", CB_QK, 20, CB_ACT_Q8_1, 2, 0, 2),
		[CB_DT_Q5_0] = CB_BI("q5_0", CB_QK, 22, CB_ACT_Q8_0, 1, 0, 0),
		[CB_DT_Q5_1] = CB_BI("q5_1", CB_QK, 24, CB_ACT_Q8_1, 2, 0, 2),
		[CB_DT_IQ4_NL] = CB_BI("iq4_nl", CB_QK, 18, CB_ACT_Q8_0, 1, 0, 0),
		[CB_DT_Q2_K] = CB_BI("q2_K", CB_QK_K, 84, CB_ACT_Q8_K, 2, 80, 82),
		[CB_DT_Q3_K] = CB_BI("q3_K", CB_QK_K, 110, CB_ACT_Q8_K, 1, 108, 0),
		[CB_DT_Q4_K] = CB_BI("q4_K", CB_QK_K, 144, CB_ACT_Q8_K, 2, 0, 2),
		[CB_DT_Q5_K] = CB_BI("q5_K", CB_QK_K, 176, CB_ACT_Q8_K, 2, 0, 2),
		[CB_DT_Q6_K] = CB_BI("q6_K", CB_QK_K, 210, CB_ACT_Q8_K, 1, 208, 0),
		[CB_DT_IQ4_XS] = CB_BI("iq4_xs", CB_QK_K, 136, CB_ACT_Q8_K, 1, 0, 0),
		/* no half scale: its E8M0 byte is checked by the loaders */
		[CB_DT_MXFP4] = CB_BI("mxfp4", CB_QK, 17, CB_ACT_Q8_0, 0, 0, 0),
	};

	return dt < CB_DT__COUNT ? &t[dt] : CB_NULL;
}

/* The storage of activation form k (enum cb_act_kind), or NULL if unknown. */
static inline const struct cb_block_info *cb_act_info(cb_u32 k)
{
	static const struct cb_block_info t[CB_ACT__COUNT] = {
		[CB_ACT_F32] = CB_BI("f32", 1, 4, CB_ACT_F32, 0, 0, 0),
		[CB_ACT_Q8_0] = CB_BI("q8_0", CB_QK, 34, CB_ACT_Q8_0, 0, 0, 0),
		[CB_ACT_Q8_1] = CB_BI("q8_1", CB_QK, 36, CB_ACT_Q8_1, 0, 0, 0),
		[CB_ACT_Q8_K] = CB_BI("q8_K", CB_QK_K, 292, CB_ACT_Q8_K, 0, 0, 0),
	};

	return k < CB_ACT__COUNT ? &t[k] : CB_NULL;
}

/* Bytes of a row of n elements stored as @b, or 0 if n is not whole blocks. */
static inline cb_u64 cb_block_row_bytes(const struct cb_block_info *b, cb_u64 n)
{
	if (!b || n % b->block)
		return 0;
	return n / b->block * b->block_bytes;
}

/*
 * Bytes for one row of n elements of type dt (n a multiple of the type's
 * block), or 0 if dt is unknown or n is not a valid row length.
 */
static inline cb_u64 cb_dtype_row_bytes(cb_u32 dt, cb_u64 n)
{
	return cb_block_row_bytes(cb_dtype_info(dt), n);
}

/* Bytes for one row of n elements in activation form k, or 0. */
static inline cb_u64 cb_act_row_bytes(cb_u32 k, cb_u64 n)
{
	return cb_block_row_bytes(cb_act_info(k), n);
}

/* The activation form weight type dt reads (CB_ACT_F32 if unknown). */
static inline cb_u32 cb_dtype_act(cb_u32 dt)
{
	const struct cb_block_info *b = cb_dtype_info(dt);

	return b ? b->act : CB_ACT_F32;
}

/* Elements per block of weight type dt (1 for float types, 0 if unknown). */
static inline cb_u32 cb_dtype_block(cb_u32 dt)
{
	const struct cb_block_info *b = cb_dtype_info(dt);

	return b ? b->block : 0;
}

static inline const char *cb_dtype_name(cb_u32 dt)
{
	const struct cb_block_info *b = cb_dtype_info(dt);

	return b ? b->name : "unknown";
}

/**
 * cb_quant_find_bad_scale() - the first block of a tensor whose scale is not
 * finite.
 * @dt: enum cb_dtype.
 * @data: the tensor's bytes.
 * @nblocks: blocks in it (size / bytes per block).
 *
 * Integer only (the f16 exponent all ones is infinity or NaN; mxfp4's
 * E8M0 byte 255 is NaN), so non-FPU kernel code may call it.  Float types
 * have no scales.
 * Return: the block index, or -1 if every scale is finite.
 */
static inline cb_s64 cb_quant_find_bad_scale(cb_u32 dt, const void *data, cb_u64 nblocks)
{
	const struct cb_block_info *d = cb_dtype_info(dt);
	const cb_u8 *p = data;
	cb_u64 b;
	cb_u32 s;

	if (dt == CB_DT_MXFP4) {
		for (b = 0; b < nblocks; b++, p += d->block_bytes)
			if (p[0] == CB_MXFP4_E_NAN)
				return (cb_s64)b;
		return -1;
	}
	if (!d || !d->nscale)
		return -1;
	for (b = 0; b < nblocks; b++, p += d->block_bytes)
		for (s = 0; s < d->nscale; s++) {
			cb_u16 h = (cb_u16)(p[d->scale_off[s]] | p[d->scale_off[s] + 1] << 8);

			if ((h & 0x7c00) == 0x7c00)
				return (cb_s64)b;
		}
	return -1;
}

#endif /* CB_QUANT_H */
