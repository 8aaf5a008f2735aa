// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * mxfp4_hf.c - Hugging Face MXFP4 blocks to the engine's mxfp4 layout
 * (see mxfp4_hf.h).
 */
#include "import/mxfp4_hf.h"

void cb_mxfp4_from_hf(struct cb_block_mxfp4 *dst, const uint8_t blocks[16], uint8_t scale)
{
	uint8_t c[CB_QK];
	int k;

	for (k = 0; k < 16; k++) {	/* element 2k low, 2k + 1 high */
		c[2 * k] = blocks[k] & 15;
		c[2 * k + 1] = blocks[k] >> 4;
	}
	dst->e = scale;
	for (k = 0; k < CB_QK / 2; k++)
		dst->qs[k] = (uint8_t)(c[k] | c[k + CB_QK / 2] << 4);
}

ptrdiff_t cb_mxfp4_row_from_hf(void *dst, const uint8_t *blocks, const uint8_t *scales,
			       size_t nblocks)
{
	struct cb_block_mxfp4 *b = dst;
	ptrdiff_t bad = -1;
	size_t i;

	for (i = 0; i < nblocks; i++) {
		cb_mxfp4_from_hf(&b[i], blocks + 16 * i, scales[i]);
		if (scales[i] == CB_MXFP4_E_NAN && bad < 0)
			bad = (ptrdiff_t)i;
	}
	return bad;
}
