/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_quant.h - weight types and quantization blocks, shared by the kernel
 * module, the userspace library and the converters.
 *
 * The block layouts are GGUF's, byte for byte, so GGUF tensors are placed in
 * a .colibri file without requantizing.  All multi-byte fields little-endian.
 */
#ifndef CB_QUANT_H
#define CB_QUANT_H

#include "cb_platform.h"

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
	CB_DT__COUNT
};

/* Elements per quantization block (both q8_0 and q4_0). */
#define CB_QK 32

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
	CB_ACT__COUNT
};

/*
 * Columns of a row that a phase may hand to different chunks: whole blocks
 * of every activation form (so each piece quantizes on its own).
 */
#define CB_ACT_PIECE 256

/**
 * struct cb_block_info - the storage of a row of a weight type or of an
 * activation form.
 * @name: short name ("q8_0").
 * @block: elements per block; a row is a whole number of blocks.
 * @block_bytes: bytes per block.
 * @act: for a weight type, the enum cb_act_kind its gemm reads.
 */
struct cb_block_info {
	const char *name;
	cb_u32 block;
	cb_u32 block_bytes;
	cb_u32 act;
};

/* The storage of weight type dt (enum cb_dtype), or NULL if unknown. */
static inline const struct cb_block_info *cb_dtype_info(cb_u32 dt)
{
	static const struct cb_block_info t[CB_DT__COUNT] = {
		[CB_DT_F32] = { "f32", 1, 4, CB_ACT_F32 },
		[CB_DT_F16] = { "f16", 1, 2, CB_ACT_F32 },
		[CB_DT_BF16] = { "bf16", 1, 2, CB_ACT_F32 },
		[CB_DT_Q8_0] = { "q8_0", CB_QK, sizeof(struct cb_block_q8_0), CB_ACT_Q8_0 },
		[CB_DT_Q4_0] = { "q4_0", CB_QK, sizeof(struct cb_block_q4_0), CB_ACT_Q8_0 },
	};

	return dt < CB_DT__COUNT ? &t[dt] : CB_NULL;
}

/* The storage of activation form k (enum cb_act_kind), or NULL if unknown. */
static inline const struct cb_block_info *cb_act_info(cb_u32 k)
{
	static const struct cb_block_info t[CB_ACT__COUNT] = {
		[CB_ACT_F32] = { "f32", 1, 4, CB_ACT_F32 },
		[CB_ACT_Q8_0] = { "q8_0", CB_QK, sizeof(struct cb_block_q8_0), CB_ACT_Q8_0 },
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

static inline const char *cb_dtype_name(cb_u32 dt)
{
	const struct cb_block_info *b = cb_dtype_info(dt);

	return b ? b->name : "unknown";
}

#endif /* CB_QUANT_H */
