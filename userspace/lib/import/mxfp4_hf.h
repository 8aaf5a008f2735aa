/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * mxfp4_hf.h - MXFP4 tensors as Hugging Face checkpoints store them (the
 * GPT-OSS experts' `*_blocks` and `*_scales`) repacked into the engine's
 * mxfp4 blocks (GGUF's layout, struct cb_block_mxfp4), losslessly.
 *
 * A Hugging Face MXFP4 tensor is two uint8 tensors: `X_blocks`
 * [..., rows, n_blocks, 16] and `X_scales` [..., rows, n_blocks].  The 32
 * E2M1 codes of a block are interleaved: element 2k is the low nibble of
 * byte k, element 2k + 1 its high nibble; the scale byte s is E8M0, the
 * block's values are FP4(code) * 2^(s - 127).  The engine's block keeps
 * the same codes and the same exponent byte (2^(e - 128) times the doubled
 * table is the same value), with element j in the low nibble of qs[j] and
 * element j + 16 in its high nibble: only the nibbles move.
 */
#ifndef COLIBRI_MXFP4_HF_H
#define COLIBRI_MXFP4_HF_H

#include <stddef.h>
#include <stdint.h>

#include "quant/cb_quant.h"

/*
 * cb_mxfp4_from_hf() - one Hugging Face MXFP4 block (@blocks: its 16
 * bytes, @scale: its E8M0 byte) into @dst.  Every byte pattern maps to
 * the block of the same 32 values (scale 255, NaN, included: the caller
 * refuses it, see cb_mxfp4_row_from_hf()).
 */
void cb_mxfp4_from_hf(struct cb_block_mxfp4 *dst, const uint8_t blocks[16], uint8_t scale);

/*
 * cb_mxfp4_row_from_hf() - @nblocks consecutive blocks (@blocks: 16 bytes
 * each, @scales: one byte each, as the checkpoint stores a row or a whole
 * expert) into @dst (17 bytes each).
 * Return: -1, or the index of the first block whose scale is 255 (NaN in
 * the OCP format; no .colibri file may hold it) after converting them all.
 */
ptrdiff_t cb_mxfp4_row_from_hf(void *dst, const uint8_t *blocks, const uint8_t *scales,
			       size_t nblocks);

#endif /* COLIBRI_MXFP4_HF_H */
