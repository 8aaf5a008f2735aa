/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_gpt_oss.h - the GPT-OSS parts of the Hugging Face reader (hfmodel.c):
 * config.json's keys and the fused experts (hf_gpt_oss.c), and `colibri
 * convert` of a GPT-OSS directory (hf_gpt_oss_write.c).
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

struct cbfile_writer;

/*
 * `colibri convert` of a GPT-OSS directory: load it (hf_model_load(), with
 * @q) and put every tensor @w's config requires, in the type the load gave
 * it.  The caller finishes or aborts @w.  0, or -1 with a message in @err.
 */
int hf_gpt_oss_write(const char *dir, const struct cb_quant *q, struct cbfile_writer *w,
		     char *err, size_t errlen);

#endif /* COLIBRI_HF_GPT_OSS_H */
