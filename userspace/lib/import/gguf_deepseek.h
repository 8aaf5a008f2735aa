/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_deepseek.h - GGUF arch "deepseek2" (DeepSeek-V2/V3, llama.cpp's
 * names and keys): the part of the GGUF loader (gguf_model.c) in
 * gguf_deepseek.c, on the loader's state and accessors (gguf_loader.h).
 */
#ifndef COLIBRI_GGUF_DEEPSEEK_H
#define COLIBRI_GGUF_DEEPSEEK_H

#include <stddef.h>

#include "core/cb_engine.h"
#include "import/gguf_loader.h"

/*
 * gguf_deepseek_config() - the MLA keys of a deepseek2 file (after the
 * common ones: heads, experts); sets *head_dim (the q/k head).  0, or -1
 * with the reason.
 */
int gguf_deepseek_config(struct gloader *ld, cb_u32 *head_dim);

/* gguf_deepseek_layer() - layer @l's MLA tensors. */
int gguf_deepseek_layer(struct gloader *ld, cb_u32 l);

#endif /* COLIBRI_GGUF_DEEPSEEK_H */
