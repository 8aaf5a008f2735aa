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
 * into the config's DeltaNet fields, with the value heads in llama.cpp's
 * tiled order.  Return: 0, or -1 with the key named.
 */
int gguf_delta_config(struct gloader *ld);

#endif /* COLIBRI_GGUF_DELTA_H */
