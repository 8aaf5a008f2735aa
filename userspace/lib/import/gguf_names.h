/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_names.h - the GGUF name of each tensor role: llama.cpp's usual
 * one, or the architecture's own (its arch file's gguf_names).
 */
#ifndef COLIBRI_GGUF_NAMES_H
#define COLIBRI_GGUF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "arch/cb_arch.h"

/*
 * gguf_tensor_name() - the GGUF tensor name of a .colibri tensor role
 * (enum colibri_tensor_role) in layer @layer of a model of architecture
 * @a: "token_embd.weight", "blk.3.attn_q.weight".  A routed expert's
 * roles are named in llama.cpp's stacked form ("blk.3.ffn_gate_exps.weight",
 * all experts in one tensor); the loader also reads the older one tensor
 * per expert (gguf_model.c).
 * Return: 0, or -1 for a role GGUF does not have or a short buffer.
 */
int gguf_tensor_name(const struct cb_arch_desc *a, uint32_t role, uint32_t layer, char *buf,
		     size_t len);

#endif /* COLIBRI_GGUF_NAMES_H */
