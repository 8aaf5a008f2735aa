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

/* Weight types.  The numbers are ABI: they appear in .colibri files. */
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
 * Bytes for one row of n elements of type dt (n a multiple of CB_QK for the
 * block types), or 0 if dt is unknown or n is not a valid row length.
 */
static inline cb_u64 cb_dtype_row_bytes(cb_u32 dt, cb_u64 n)
{
	switch (dt) {
	case CB_DT_F32:
		return n * 4;
	case CB_DT_F16:
	case CB_DT_BF16:
		return n * 2;
	case CB_DT_Q8_0:
		return n % CB_QK ? 0 : n / CB_QK * sizeof(struct cb_block_q8_0);
	case CB_DT_Q4_0:
		return n % CB_QK ? 0 : n / CB_QK * sizeof(struct cb_block_q4_0);
	default:
		return 0;
	}
}

static inline const char *cb_dtype_name(cb_u32 dt)
{
	static const char *const names[CB_DT__COUNT] = {
		"f32", "f16", "bf16", "q8_0", "q4_0"
	};

	return dt < CB_DT__COUNT ? names[dt] : "unknown";
}

#endif /* CB_QUANT_H */
