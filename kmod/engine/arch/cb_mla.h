/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_mla.h - DeepSeek's multi-head latent attention (MLA) and routing
 * variants: the integer-only side (cb_mla_shape.c), shared by the config
 * check, model validation and the file format.
 *
 * Integer only: non-FPU kernel code includes this.  The FPU side lives in
 * cb_mla.c (attention) and cb_route.c (routing), declared in
 * cb_engine_priv.h.
 */
#ifndef CB_MLA_H
#define CB_MLA_H

#include "core/cb_engine.h"

/*
 * The widest cache row (latent + shared RoPE key): one split of 32
 * positions of one head must fit a chunk (cb_phase.c asserts it).
 * DeepSeek-V2/V3 use 512 + 64.
 */
#define CB_MAX_MLA_ROW		1024u
/* q_lora_rank: one row's RMSNorm and its forms fit a chunk (V3: 1536) */
#define CB_MAX_Q_LORA		4096u

/*
 * cb_mla_config_check() - the MLA and routing fields of a config (called by
 * cb_config_check() after the common fields passed): 0, or -CB_EINVAL with
 * the reason naming the field in @why.
 */
int cb_mla_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen);

/*
 * cb_mla_check_layer() - the attention tensors of an MLA layer (and the
 * router bias of a MoE layer with sel_bias) against the config.
 * Return: 0 or -CB_EINVAL.
 */
int cb_mla_check_layer(const struct cb_model_config *c, const struct cb_layer_weights *L,
		       int moe);

/*
 * cb_mla_attn_roles() - the attention-part roles of an MLA layer, in
 * canonical order (attn_norm .. ffn_norm), into @roles (room for 16).
 * Return: the count.
 */
cb_u32 cb_mla_attn_roles(const struct cb_model_config *c, cb_u32 *roles);

/* The config's MLA fields from the file header's ext_mla words. */
void cb_mla_config_from_words(struct cb_mla_config *m, const cb_u32 *w);

/* Words of ext_mla (uapi struct colibri_file_mla). */
#define CB_MLA_WORDS 12

#endif /* CB_MLA_H */
