/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_delta.h - the Gated DeltaNet keys of llama.cpp's qwen35moe files,
 * read by gguf_delta.c for the GGUF loader (gguf_model.c).
 */
#ifndef COLIBRI_GGUF_DELTA_H
#define COLIBRI_GGUF_DELTA_H

#include "core/cb_engine.h"
#include "import/gguf_loader.h"

/*
 * gguf_delta_config() - ssm.group_count (key heads), ssm.time_step_rank
 * (value heads), ssm.state_size (a key head), ssm.inner_size (all value
 * heads), ssm.conv_kernel and full_attention_interval (4 when absent)
 * into the config's DeltaNet fields, qwen35moe's value heads in
 * llama.cpp's tiled order (qwen3next's in HF's).  Return: 0, or -1 with
 * the key named.
 */
int gguf_delta_config(struct gloader *ld);

/*
 * gguf_delta_layer() - layer @l's DeltaNet tensors (attn_qkv, attn_gate,
 * ssm_*), b and a cut from qwen3next's ssm_ba.  0, or -1 with the tensor
 * named.
 */
int gguf_delta_layer(struct gloader *ld, cb_u32 l);

#endif /* COLIBRI_GGUF_DELTA_H */
