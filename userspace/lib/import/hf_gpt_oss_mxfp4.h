/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_gpt_oss_mxfp4.h - GPT-OSS experts in the original MXFP4 layout of a
 * Hugging Face directory (hf_gpt_oss_mxfp4.c), for hf_gpt_oss.c.
 */
#ifndef COLIBRI_HF_GPT_OSS_MXFP4_H
#define COLIBRI_HF_GPT_OSS_MXFP4_H

#include <stddef.h>

#include "core/cb_engine.h"

struct hf_model;

/*
 * hf_gpt_oss_has_mxfp4(): whether @base
 * ("model.layers.N.mlp.experts.gate_up_proj" or "...down_proj") has a
 * "_blocks" or "_scales" tensor.
 * hf_gpt_oss_mxfp4_proj(): layer @l's experts' gate and up (@fused) or down
 * matrices repacked from @base's blocks and scales into mxfp4 (whatever the
 * --quant); 0, or -1 with a message naming the tensor in @err (missing,
 * not U8, a shape that does not match config.json, a scale byte of 255).
 */
int hf_gpt_oss_has_mxfp4(const struct hf_model *m, const char *base);
int hf_gpt_oss_mxfp4_proj(struct hf_model *m, const char *base, cb_u32 l, int fused,
			  char *err, size_t errlen);

#endif /* COLIBRI_HF_GPT_OSS_MXFP4_H */
