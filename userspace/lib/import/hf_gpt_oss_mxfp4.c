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

#include "format/cb_format.h"
#include "ops/cb_ops.h"
#include "import/hf_gpt_oss_mxfp4.h"
#include "import/hf_loader.h"
#include "import/mxfp4_hf.h"
#include "import/safetensors.h"

/* U8 tensor @name of exactly this shape, or NULL with a message naming it. */
static const struct st_tensor *find_u8(const struct st_set *st, const char *name, int ndim,
				       const uint64_t *shape, const char *missing_why,
				       char *err, size_t errlen)
{
	const struct st_tensor *t = st_set_find(st, name);

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

int hf_gpt_oss_has_mxfp4(const struct st_set *st, const char *base)
{
	char n[192];

	snprintf(n, sizeof(n), "%s_blocks", base);
	if (st_set_find(st, n))
		return 1;
	snprintf(n, sizeof(n), "%s_scales", base);
	return !!st_set_find(st, n);
}

int hf_gpt_oss_mxfp4_find(const struct st_set *st, const struct cb_model_config *c,
			  const char *base, int fused, const struct st_tensor **blocks,
			  const struct st_tensor **scales, char *err, size_t errlen)
{
	cb_u32 E = c->n_experts, H = c->hidden, F = c->expert_ffn;
	/* 64-bit: config.json is range-checked only after the tensors load */
	uint64_t rows = fused ? 2ull * F : H;
	cb_u32 cols = fused ? H : F, nb = cols / 32;
	char bn[192], sn[192], why[224];

	snprintf(bn, sizeof(bn), "%s_blocks", base);
	snprintf(sn, sizeof(sn), "%s_scales", base);
	if (cols % 32) {
		snprintf(err, errlen, "tensor '%s': %s %u is not a multiple of 32 (an MXFP4 "
			 "block)", bn, fused ? "hidden_size" : "intermediate_size", cols);
		return -1;
	}
	snprintf(why, sizeof(why), " (its scales '%s' are there)", sn);
	*blocks = find_u8(st, bn, 4, (uint64_t[]){ E, rows, nb, 16 }, why, err, errlen);
	if (!*blocks)
		return -1;
	snprintf(why, sizeof(why), " (the MXFP4 blocks '%s' need it)", bn);
	*scales = find_u8(st, sn, 3, (uint64_t[]){ E, rows, nb }, why, err, errlen);
	return *scales ? 0 : -1;
}

int hf_gpt_oss_mxfp4_expert(const struct cb_model_config *c, const struct st_tensor *blocks,
			    const struct st_tensor *scales, cb_u32 x, cb_u32 role, void *dst,
			    char *err, size_t errlen)
{
	int fused = role != COLIBRI_T_EXPERT_DOWN, up = role == COLIBRI_T_EXPERT_UP;
	cb_u32 H = c->hidden, F = c->expert_ffn;
	uint64_t rows = fused ? 2ull * F : H, out_rows = fused ? F : H, r;
	cb_u32 nb = (fused ? H : F) / 32;
	size_t rb = (size_t)nb * sizeof(struct cb_block_mxfp4);
	const uint8_t *b = blocks->data, *s = scales->data;

	for (r = 0; r < out_rows; r++) {
		/* gate_up: row 2j the gate's row j, row 2j + 1 the up projection's */
		uint64_t hr = fused ? 2 * r + up : r;
		uint64_t at = ((uint64_t)x * rows + hr) * nb;
		ptrdiff_t bad = cb_mxfp4_row_from_hf((char *)dst + r * rb, b + 16 * at, s + at, nb);

		if (bad >= 0) {
			snprintf(err, errlen, "tensor '%s': expert %u, row %llu, block %td: "
				 "scale 255 is NaN (E8M0)", scales->name, x,
				 (unsigned long long)hr, bad);
			return -1;
		}
	}
	return 0;
}

int hf_gpt_oss_mxfp4_proj(struct hf_model *m, const char *base, cb_u32 l, int fused,
			  char *err, size_t errlen)
{
	const struct cb_model_config *c = &m->cfg;
	cb_u32 E = c->n_experts, H = c->hidden, F = c->expert_ffn, x;
	const struct st_tensor *bt, *sc;
	size_t rb = (size_t)((fused ? H : F) / 32) * sizeof(struct cb_block_mxfp4);
	cb_u32 out_rows = fused ? F : H, cols = fused ? H : F;

	if (hf_gpt_oss_mxfp4_find(m->st, c, base, fused, &bt, &sc, err, errlen))
		return -1;
	m->layers[l].experts = m->experts + (size_t)l * E;
	for (x = 0; x < E; x++) {
		struct cb_expert_weights *ew = &m->experts[(size_t)l * E + x];
		static const cb_u32 gate_up[2] = { COLIBRI_T_EXPERT_GATE, COLIBRI_T_EXPERT_UP };
		struct cb_tensor *out[2] = { fused ? &ew->gate : &ew->down, &ew->up };
		int k;

		for (k = 0; k < (fused ? 2 : 1); k++) {
			cb_u32 role = fused ? gate_up[k] : COLIBRI_T_EXPERT_DOWN;
			char *dst = aligned_alloc(64, CB_ALIGN(rb * out_rows, 64));

			if (!dst || hf_model_own(m, dst)) {
				free(dst);
				snprintf(err, errlen, "tensor '%s_blocks': out of memory", base);
				return -1;
			}
			if (hf_gpt_oss_mxfp4_expert(c, bt, sc, x, role, dst, err, errlen))
				return -1;
			*out[k] = (struct cb_tensor){ dst, CB_DT_MXFP4, out_rows, cols, 0 };
		}
	}
	return 0;
}
