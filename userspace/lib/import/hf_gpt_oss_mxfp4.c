// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_gpt_oss_mxfp4.c - GPT-OSS experts in the original MXFP4 layout of a
 * Hugging Face directory (what OpenAI ships; config.json has
 * "quantization_config": {"quant_method": "mxfp4", ...}).
 *
 * For each layer N and each fused projection P (gate_up_proj, down_proj):
 *   model.layers.N.mlp.experts.P_blocks  U8 [E, rows, cols / 32, 16]
 *   model.layers.N.mlp.experts.P_scales  U8 [E, rows, cols / 32]
 * gate_up_proj: rows 2 * ffn, cols hidden; down_proj: rows hidden, cols
 * ffn.  Unlike the dequantized layout (x @ W, [E, in, out]) a row here is
 * one output of the projection over its inputs, as the engine's Linear
 * rows are: transformers' dequantizer decodes [E, rows, cols] and then
 * transposes to [E, cols, rows].  So gate_up's row 2j is the gate's row j
 * and row 2j + 1 the up projection's (the interleave by output column of
 * the dequantized layout), and down's rows are the engine's down rows.
 * Each block's 16 bytes and scale are repacked into an mxfp4 block
 * (mxfp4_hf.h): the same 32 codes and exponent, never requantized, so the
 * experts stay mxfp4 whatever --quant says for the other matrices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cb_ops.h"
#include "import/hf_gpt_oss_mxfp4.h"
#include "import/hf_loader.h"
#include "import/mxfp4_hf.h"
#include "import/safetensors.h"

/* U8 tensor @name of exactly this shape, or NULL with a message naming it. */
static const struct st_tensor *find_u8(const struct hf_model *m, const char *name, int ndim,
				       const uint64_t *shape, const char *missing_why,
				       char *err, size_t errlen)
{
	const struct st_tensor *t = st_set_find(m->st, name);

	if (!t) {
		snprintf(err, errlen, "tensor '%s' is missing%s", name, missing_why);
		return NULL;
	}
	if (strcmp(t->dtype_name, "U8")) {
		snprintf(err, errlen, "tensor '%s': dtype %s, MXFP4 blocks and scales are U8",
			 name, t->dtype_name);
		return NULL;
	}
	return hf_check_shape(t, name, ndim, shape, err, errlen) ? NULL : t;
}

int hf_gpt_oss_has_mxfp4(const struct hf_model *m, const char *base)
{
	char n[192];

	snprintf(n, sizeof(n), "%s_blocks", base);
	if (st_set_find(m->st, n))
		return 1;
	snprintf(n, sizeof(n), "%s_scales", base);
	return !!st_set_find(m->st, n);
}

int hf_gpt_oss_mxfp4_proj(struct hf_model *m, const char *base, cb_u32 l, int fused,
			  char *err, size_t errlen)
{
	const struct cb_model_config *c = &m->cfg;
	cb_u32 E = c->n_experts, H = c->hidden, F = c->expert_ffn, x;
	/* 64-bit: config.json is range-checked only after the tensors load */
	uint64_t rows = fused ? 2ull * F : H, r;
	cb_u32 cols = fused ? H : F, nb = cols / 32;
	const struct st_tensor *bt, *st;
	const uint8_t *blocks, *scales;
	char bn[192], sn[192], why[224];
	size_t rb = (size_t)nb * sizeof(struct cb_block_mxfp4);

	snprintf(bn, sizeof(bn), "%s_blocks", base);
	snprintf(sn, sizeof(sn), "%s_scales", base);
	if (cols % 32) {
		snprintf(err, errlen, "tensor '%s': %s %u is not a multiple of 32 (an MXFP4 "
			 "block)", bn, fused ? "hidden_size" : "intermediate_size", cols);
		return -1;
	}
	snprintf(why, sizeof(why), " (its scales '%s' are there)", sn);
	bt = find_u8(m, bn, 4, (uint64_t[]){ E, rows, nb, 16 }, why, err, errlen);
	if (!bt)
		return -1;
	snprintf(why, sizeof(why), " (the MXFP4 blocks '%s' need it)", bn);
	st = find_u8(m, sn, 3, (uint64_t[]){ E, rows, nb }, why, err, errlen);
	if (!st)
		return -1;

	m->layers[l].experts = m->experts + (size_t)l * E;
	blocks = bt->data;
	scales = st->data;
	for (x = 0; x < E; x++) {
		struct cb_expert_weights *ew = &m->experts[(size_t)l * E + x];
		cb_u32 out_rows = fused ? F : H;
		char *dst[2] = { NULL, NULL };
		int k;

		for (k = 0; k < (fused ? 2 : 1); k++) {
			dst[k] = aligned_alloc(64, CB_ALIGN(rb * out_rows, 64));
			if (!dst[k] || hf_model_own(m, dst[k])) {
				free(dst[k]);
				snprintf(err, errlen, "tensor '%s': out of memory", bn);
				return -1;
			}
		}
		for (r = 0; r < rows; r++) {
			uint64_t at = ((uint64_t)x * rows + r) * nb;
			/* gate_up: even rows the gate's, odd rows the up projection's */
			char *row = fused ? dst[r & 1] + (r / 2) * rb : dst[0] + r * rb;
			ptrdiff_t bad;

			bad = cb_mxfp4_row_from_hf(row, blocks + 16 * at, scales + at, nb);
			if (bad >= 0) {
				snprintf(err, errlen,
					 "tensor '%s': expert %u, row %llu, block %td: "
					 "scale 255 is NaN (E8M0)", sn, x,
					 (unsigned long long)r, bad);
				return -1;
			}
		}
		if (fused) {
			ew->gate = (struct cb_tensor){ dst[0], CB_DT_MXFP4, F, H, 0 };
			ew->up = (struct cb_tensor){ dst[1], CB_DT_MXFP4, F, H, 0 };
		} else {
			ew->down = (struct cb_tensor){ dst[0], CB_DT_MXFP4, H, F, 0 };
		}
	}
	return 0;
}
