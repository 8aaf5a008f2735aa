/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_deepseek.h - the DeepSeek-V2/V3 part of the Hugging Face loader
 * (hf_deepseek.c), called from hfmodel.c: config.json's MLA fields, and
 * the MLA tensors of a layer (read with hf_loader.h's).
 */
#ifndef COLIBRI_HF_DEEPSEEK_H
#define COLIBRI_HF_DEEPSEEK_H

#include <stddef.h>

#include <cJSON.h>

#include "core/cb_engine.h"
#include "import/hf_loader.h"

/*
 * hf_deepseek_config() - the MLA fields of a DeepSeek config.json, and the
 * head shape they set (the common ones already parsed by hfmodel.c: vocab,
 * hidden, layers, heads, eps, theta, tied embeddings; the MoE block is
 * hf_scored.c's).  0, or -1 with the reason naming the field.
 */
int hf_deepseek_config(struct hf_loader *ld, const char *dir, const cJSON *root);

/*
 * hf_deepseek_attention() - layer @l's MLA tensors, by their HF names
 * (hf_names.c), kv_b_proj split per head into k_b (transposed) and v_b.
 */
int hf_deepseek_attention(struct hf_loader *ld, cb_u32 l);

/*
 * kv_b_proj is stored as two tensors, k_b and v_b (the "split" roles).
 * hf_deepseek_kv_b_ok(): @t has kv_b_proj's shape and a supported dtype;
 * hf_deepseek_split(): fill @dst (the role's [rows][cols], f32) from it.
 * 0, or -1 without memory.
 */
struct st_tensor;
int hf_deepseek_is_split(cb_u32 role);
int hf_deepseek_kv_b_ok(const struct cb_model_config *c, const struct st_tensor *t);
int hf_deepseek_split(const struct cb_model_config *c, cb_u32 role, const struct st_tensor *t,
		      float *dst);

#endif /* COLIBRI_HF_DEEPSEEK_H */
