/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * rope_scaling.h - a model's RoPE scaling (YaRN) from HF config.json's
 * rope_scaling or from GGUF's <arch>.rope.scaling.* keys, into
 * struct cb_rope_scaling.  Any other scaling type is refused, by name: run
 * without it, the logits would be wrong.
 */
#ifndef COLIBRI_ROPE_SCALING_H
#define COLIBRI_ROPE_SCALING_H

#include <stddef.h>

#include "core/cb_engine.h"

struct cJSON;
struct gguf_file;

/*
 * rope_scaling_from_hf() - @rs: config.json's "rope_scaling" (NULL or JSON
 * null: none); @max_context: max_position_embeddings (the default original
 * context).  Return: 0, or -1 with a message naming the field in @err.
 */
int rope_scaling_from_hf(const struct cJSON *rs, cb_u32 max_context,
			 struct cb_rope_scaling *out, char *err, size_t errlen);

/*
 * rope_scaling_from_gguf() - the keys of @arch in @gf; @max_context: its
 * context_length.  Return: 0, or -1 with a message in @err.
 */
int rope_scaling_from_gguf(const struct gguf_file *gf, const char *arch, cb_u32 max_context,
			   struct cb_rope_scaling *out, char *err, size_t errlen);

#endif /* COLIBRI_ROPE_SCALING_H */
