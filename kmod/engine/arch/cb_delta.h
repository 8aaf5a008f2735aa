/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_delta.h - Gated DeltaNet layers (Qwen3.5/3.6-MoE, Qwen3-Next): the
 * integer-only side (cb_delta_shape.c), shared by the config check, model
 * validation, the file format and the arena's layout.
 *
 * A DeltaNet layer projects x into q, k, v (one tensor, before a causal
 * depthwise convolution of conv_kernel taps and SiLU), an output gate z,
 * beta's logits b and the decay's input a; q and k are L2-normalised per
 * head; each value head h keeps a k_dim x v_dim state S that every token
 * decays by exp(g), g = -exp(A_log) softplus(a + dt_bias), and corrects
 * by the delta rule, S += k (beta (v - S^T k))^T, before reading
 * o = S^T q / sqrt(k_dim); o is RMS-normed per head, times silu(z), and
 * projected back.  The state of a slot is its convolution's last
 * conv_kernel - 1 inputs and every S: fixed in size whatever the context,
 * in two banks, so that a pass that fails leaves the committed one intact
 * (forward/cb_delta.c).
 *
 * Integer only: non-FPU kernel code includes this.
 */
#ifndef CB_DELTA_H
#define CB_DELTA_H

#include "core/cb_engine.h"

/*
 * The largest head (k_dim, v_dim) and convolution.  Qwen3.5/3.6 and
 * Qwen3-Next use heads of 128 and 4 taps; one token of one state column
 * (4 k_dim multiply-adds) and one token's gated norm of one head must fit
 * a chunk.
 */
#define CB_MAX_DELTA_HEAD_DIM	256u
#define CB_MAX_DELTA_HEADS	256u
#define CB_MAX_CONV_KERNEL	8u

/* Words of ext_delta (uapi struct colibri_file_delta). */
#define CB_DELTA_WORDS 7

/* Attention-part roles of a DeltaNet layer (attn_norm .. ffn_norm). */
#define CB_DELTA_ROLES 11

/* Does this config have DeltaNet layers (and gated full attention)? */
static inline int cb_has_delta(const struct cb_model_config *c)
{
	return c->delta.full_interval != 0;
}

/* The convolution's channels: q, k and v of all heads. */
static inline cb_u32 cb_delta_conv_dim(const struct cb_model_config *c)
{
	return 2 * c->delta.k_heads * c->delta.k_dim + c->delta.v_heads * c->delta.v_dim;
}

/*
 * cb_delta_config_check() - the DeltaNet fields of a config (called by
 * cb_config_check() after the common fields passed): zero for an
 * architecture without the kind, else sizes within the limits above and
 * consistent.  0, or -CB_EINVAL with the reason naming the field in @why.
 */
int cb_delta_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen);

/* The attention-part roles of DeltaNet layer @l (CB_DELTA_ROLES) into @roles. */
cb_u32 cb_delta_attn_roles(const struct cb_model_config *c, cb_u32 *roles);

/* Every DeltaNet tensor of layer @L present and of its shape: 0 or -CB_EINVAL. */
int cb_delta_check_layer(const struct cb_model_config *c, const struct cb_layer_weights *L);

/*
 * Floats of one slot's state in one bank, and the offset of layer @l's
 * part in it (its convolution's (conv_kernel - 1) x conv_dim inputs, then
 * v_heads states of k_dim rows of v_dim).
 * 0 for a model without DeltaNet layers.
 */
cb_u64 cb_delta_state_floats(const struct cb_model_config *c);
cb_u64 cb_delta_layer_offset(const struct cb_model_config *c, cb_u32 l);

/* The config's DeltaNet fields from, and into, the header's ext_delta words. */
void cb_delta_config_from_words(struct cb_delta_config *d, const cb_u32 *w);
void cb_delta_config_to_words(const struct cb_delta_config *d, cb_u32 *w);

#endif /* CB_DELTA_H */
