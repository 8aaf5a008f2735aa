/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hfmodel.h - load a Hugging Face model directory (config.json +
 * safetensors, single or sharded) into an engine config and tensor table.
 *
 * Supported: MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM,
 * OlmoeForCausalLM, LlamaForCausalLM (dense), GptOssForCausalLM,
 * DeepseekV2ForCausalLM, DeepseekV3ForCausalLM.  Weights stored as F32, F16,
 * BF16, or FP8 (F8_E4M3, F8_E5M2) with the block scales config.json's
 * quantization_config declares (hf_fp8.c, st_fp8.c), and GPT-OSS's experts
 * as U8 MXFP4 blocks and scales, kept mxfp4 (hf_gpt_oss_mxfp4.c); matrices
 * may be converted at load to any weight type or preset mix
 * (quant_preset.h).  Norm weights, biases and router matrices are always
 * kept in f32 (they are small and routing is sensitive to them).
 */
#ifndef COLIBRI_HFMODEL_H
#define COLIBRI_HFMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/cb_engine.h"
#include "import/hf_loader.h"

struct cb_quant;

/*
 * hf_model_load() - read dir/config.json and its safetensors (free the
 * model with hf_model_free(), hf_loader.h).
 * @q: what each matrix becomes (quant_preset.h), or NULL to keep them as
 *	stored.
 * On failure returns NULL and writes one line naming the problem to err.
 */
struct hf_model *hf_model_load(const char *dir, const struct cb_quant *q, char *err,
			       size_t errlen);

/*
 * hf_open_tensors() - dir's safetensors (st_set_open_dir()) with the FP8
 * block scales of config.json's quantization_config attached
 * (st_set_fp8_blocks()).  NULL with one line in @err naming the problem.
 */
struct st_set *hf_open_tensors(const char *dir, char *err, size_t errlen);

/*
 * hf_config_load() - only dir/config.json, into an engine config.
 * @arch_name: receives the HF class name (may be NULL).
 * On failure returns -1 and writes one line naming the problem to err.
 */
int hf_config_load(const char *dir, struct cb_model_config *cfg, char *arch_name,
		   size_t arch_len, char *err, size_t errlen);

#endif /* COLIBRI_HFMODEL_H */
