/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_scored.h - the routing keys of the GGUF archs whose router is scored
 * (deepseek2, glm4moe: llama.cpp's names), read by gguf_scored.c for the
 * GGUF loader (gguf_model.c).
 */
#ifndef COLIBRI_GGUF_SCORED_H
#define COLIBRI_GGUF_SCORED_H

#include "core/cb_engine.h"
#include "import/gguf_loader.h"

/*
 * gguf_scored_config() - expert_gating_func @gating (1 softmax, 2 sigmoid),
 * expert_group_count / expert_group_used_count, expert_weights_scale and
 * whether the layers have a selection bias (exp_probs_b.bias) into the
 * config's routing fields; of two architectures with one GGUF name, the
 * one whose scores the file's are (deepseek2: V2 or V3).
 * Return: 0, or -1 with the key named.
 */
int gguf_scored_config(struct gloader *ld, cb_u32 gating);

#endif /* COLIBRI_GGUF_SCORED_H */
