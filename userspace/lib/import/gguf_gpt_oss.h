/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_gpt_oss.h - the GPT-OSS metadata of a GGUF file (arch "gpt-oss").
 */
#ifndef COLIBRI_GGUF_GPT_OSS_H
#define COLIBRI_GGUF_GPT_OSS_H

#include <stddef.h>

#include "core/cb_engine.h"

struct gguf_file;

/*
 * gpt-oss.attention.sliding_window into @c, the even layers sliding (as
 * llama.cpp lays GPT-OSS out), and the SwiGLU limit and alpha llama.cpp
 * fixes for the architecture (7.0, 1.702); the routing is the softmax
 * over the top-k.  0, or -1 with a message naming the key in @err.
 */
int gguf_gpt_oss_config(const struct gguf_file *gf, struct cb_model_config *c, char *err,
			size_t errlen);

#endif /* COLIBRI_GGUF_GPT_OSS_H */
