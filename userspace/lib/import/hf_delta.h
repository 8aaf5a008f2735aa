/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_delta.h - config.json's block of the Gated DeltaNet kind
 * (Qwen3.5/3.6-MoE), read by hf_delta.c for hfmodel.c.
 */
#ifndef COLIBRI_HF_DELTA_H
#define COLIBRI_HF_DELTA_H

#include <stddef.h>

#include <cJSON.h>

#include "core/cb_engine.h"
#include "import/hf_loader.h"

/*
 * hf_delta_config() - linear_num_key_heads, linear_num_value_heads,
 * linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim and
 * the layer pattern (layer_types, one per layer, every full_attention_interval-th
 * "full_attention"; or full_attention_interval alone) into
 * ld->m->cfg.delta.  Return: 0, or -1 with the key named in ld->err.
 */
int hf_delta_config(struct hf_loader *ld, const char *dir, const cJSON *root);

#endif /* COLIBRI_HF_DELTA_H */
