/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_gpt_oss.h - the GPT-OSS parts of the Hugging Face reader (hfmodel.c):
 * config.json's keys and the fused experts, a layer at a time for a model
 * loaded whole, or a slot at a time for `colibri convert` (hf_slot.h).
 */
#ifndef COLIBRI_HF_GPT_OSS_H
#define COLIBRI_HF_GPT_OSS_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "core/cb_engine.h"

struct hf_model;
struct cb_quant;

/*
 * GptOssConfig's own keys into @c (n_layers and max_context already
 * parsed): sliding_window, layer_types, swiglu_limit.  0, or -1 with a
 * message naming the key in @err.
 */
int hf_gpt_oss_config(const cJSON *root, struct cb_model_config *c, const char *dir,
		      char *err, size_t errlen);

/*
 * Layer @l's experts and their biases from the fused HF tensors into
 * m->experts and m->layers[l].oss, each projection in the dequantized
 * layout (converted as @q says) or the MXFP4 one (kept mxfp4).  0, or -1
 * with a message naming the tensor in @err.
 */
int hf_gpt_oss_experts(struct hf_model *m, const struct cb_quant *q, cb_u32 l,
		       char *err, size_t errlen);

struct cb_format_slot;
struct hf_slot_src;
struct st_set;

/*
 * One slot at a time, for the converter (hf_slot.h): hf_gpt_oss_slot()
 * finds and checks the fused tensor a slot of GPT-OSS's own is cut from
 * (an expert's gate, up or down matrix, dense or MXFP4; the experts'
 * biases); 0, -1 with a message naming the tensor in @err, or 1 for a role
 * that is not cut from fused tensors.  hf_gpt_oss_slot_fill() makes the
 * slot's values (f32, or mxfp4 bytes) into @buf.
 */
int hf_gpt_oss_slot(const struct st_set *st, const struct cb_model_config *c,
		    const struct cb_format_slot *s, struct hf_slot_src *src, char *err,
		    size_t errlen);
int hf_gpt_oss_slot_fill(const struct cb_model_config *c, const struct cb_format_slot *s,
			 const struct hf_slot_src *src, void *buf, char *err, size_t errlen);

#endif /* COLIBRI_HF_GPT_OSS_H */
