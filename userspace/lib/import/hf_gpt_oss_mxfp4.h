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
struct st_set;
struct st_tensor;

/*
 * hf_gpt_oss_has_mxfp4(): whether @base
 * ("model.layers.N.mlp.experts.gate_up_proj" or "...down_proj") has a
 * "_blocks" or "_scales" tensor in @st.
 * hf_gpt_oss_mxfp4_find(): @base's blocks and scales, checked (present,
 * U8, the shapes config.json implies: gate_up_proj's when @fused); 0, or
 * -1 with a message naming the tensor in @err.
 * hf_gpt_oss_mxfp4_expert(): expert @x's matrix of @role (EXPERT_GATE, _UP
 * or _DOWN) repacked into mxfp4 rows at @dst (rows x row bytes); 0, or -1
 * naming the scale byte of 255 (NaN) in @err.
 * hf_gpt_oss_mxfp4_proj(): layer @l's experts' gate and up (@fused) or down
 * matrices, each repacked into memory @m owns (whatever the --quant); 0,
 * or -1 with a message naming the tensor in @err.
 */
int hf_gpt_oss_has_mxfp4(const struct st_set *st, const char *base);
int hf_gpt_oss_mxfp4_find(const struct st_set *st, const struct cb_model_config *c,
			  const char *base, int fused, const struct st_tensor **blocks,
			  const struct st_tensor **scales, char *err, size_t errlen);
int hf_gpt_oss_mxfp4_expert(const struct cb_model_config *c, const struct st_tensor *blocks,
			    const struct st_tensor *scales, cb_u32 x, cb_u32 role, void *dst,
			    char *err, size_t errlen);
int hf_gpt_oss_mxfp4_proj(struct hf_model *m, const char *base, cb_u32 l, int fused,
			  char *err, size_t errlen);

#endif /* COLIBRI_HF_GPT_OSS_MXFP4_H */
