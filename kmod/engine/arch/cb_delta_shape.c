// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_delta_shape.c - Gated DeltaNet's config check, file roles, tensor
 * checks and state sizes (cb_delta.h).  Integer only.
 */
#include "arch/cb_arch.h"
#include "arch/cb_delta.h"
#include "format/cb_format.h"
#include "format/cb_role.h"
#include "core/cb_why.h"

CB_STATIC_ASSERT(CB_DELTA_F_TILED == COLIBRI_DELTA_F_TILED && CB_DELTA_F_ALL == COLIBRI_DELTA_F_ALL,
		 "the engine's DeltaNet flags are uapi's");

#define DELTA_FAIL(...) cb_why(why, whylen, -CB_EINVAL, "config: " __VA_ARGS__)

int cb_delta_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen)
{
	const struct cb_arch_desc *a = cb_arch_of(c->arch);
	const struct cb_delta_config *d = &c->delta;
	cb_u32 w[CB_DELTA_WORDS], i;

	if (a->attn != CB_ATTN_GATED_DELTA) {
		cb_delta_config_to_words(d, w);
		for (i = 0; i < CB_DELTA_WORDS; i++)
			if (w[i])
				return DELTA_FAIL("Gated DeltaNet word %u set for %s", i, a->name);
		return 0;
	}
	if (d->flags & ~CB_DELTA_F_ALL)
		return DELTA_FAIL("delta flags %u has unknown bits", d->flags);
	if (d->full_interval < 2 || d->full_interval > c->n_layers)
		return DELTA_FAIL("full_attention_interval %u outside 2..n_layers %u",
				  d->full_interval, c->n_layers);
	if (!d->k_heads || d->k_heads > CB_MAX_DELTA_HEADS)
		return DELTA_FAIL("linear_num_key_heads %u outside 1..%u", d->k_heads,
				  CB_MAX_DELTA_HEADS);
	if (!d->v_heads || d->v_heads > CB_MAX_DELTA_HEADS)
		return DELTA_FAIL("linear_num_value_heads %u outside 1..%u", d->v_heads,
				  CB_MAX_DELTA_HEADS);
	if (d->v_heads % d->k_heads)
		return DELTA_FAIL("linear_num_value_heads %u is not a multiple of the %u key heads",
				  d->v_heads, d->k_heads);
	if (!d->k_dim || d->k_dim > CB_MAX_DELTA_HEAD_DIM)
		return DELTA_FAIL("linear_key_head_dim %u outside 1..%u", d->k_dim,
				  CB_MAX_DELTA_HEAD_DIM);
	if (!d->v_dim || d->v_dim > CB_MAX_DELTA_HEAD_DIM)
		return DELTA_FAIL("linear_value_head_dim %u outside 1..%u", d->v_dim,
				  CB_MAX_DELTA_HEAD_DIM);
	if ((cb_u64)d->k_heads * d->k_dim > CB_MAX_QDIM ||
	    (cb_u64)d->v_heads * d->v_dim > CB_MAX_QDIM)
		return DELTA_FAIL("DeltaNet heads of %u x %u keys or %u x %u values above %u",
				  d->k_heads, d->k_dim, d->v_heads, d->v_dim, CB_MAX_QDIM);
	if (d->conv_kernel < 2 || d->conv_kernel > CB_MAX_CONV_KERNEL)
		return DELTA_FAIL("linear_conv_kernel_dim %u outside 2..%u", d->conv_kernel,
				  CB_MAX_CONV_KERNEL);
	if (cb_is_mla(c) || c->qk_norm != CB_QK_NORM_HEAD)
		return DELTA_FAIL("a Gated DeltaNet model attends by GQA with per-head q/k norm");
	/* its wq is q and gate per head: a bias of q's rows would not cover it */
	if (c->qkv_bias)
		return DELTA_FAIL("a Gated DeltaNet model's gated attention has no q/k/v bias");
	return 0;
}

cb_u32 cb_delta_attn_roles(const struct cb_model_config *c, cb_u32 *roles)
{
	cb_u32 n = 0, r;

	(void)c;
	roles[n++] = COLIBRI_T_ATTN_NORM;
	for (r = COLIBRI_T_DELTA_QKV; r <= COLIBRI_T_DELTA_OUT; r++)
		roles[n++] = r;
	roles[n++] = COLIBRI_T_FFN_NORM;
	return n;
}

int cb_delta_check_layer(const struct cb_model_config *c, const struct cb_layer_weights *L)
{
	cb_u32 r, rows, cols, vec;

	for (r = COLIBRI_T_DELTA_QKV; r <= COLIBRI_T_DELTA_OUT; r++) {
		const struct cb_tensor *t = cb_role_layer_tensor((struct cb_layer_weights *)L, r);

		cb_role_shape(c, r, &rows, &cols, &vec);
		if (!t->data || t->rows != rows || t->cols != cols || t->dtype >= CB_DT__COUNT ||
		    (vec && t->dtype != CB_DT_F32) || !cb_dtype_row_bytes(t->dtype, cols))
			return -CB_EINVAL;
	}
	return 0;
}

/* One DeltaNet layer's state, in floats. */
static cb_u64 layer_floats(const struct cb_model_config *c)
{
	const struct cb_delta_config *d = &c->delta;

	return (cb_u64)(d->conv_kernel - 1) * cb_delta_conv_dim(c) +
	       (cb_u64)d->v_heads * d->k_dim * d->v_dim;
}

cb_u64 cb_delta_layer_offset(const struct cb_model_config *c, cb_u32 l)
{
	cb_u64 off = 0;
	cb_u32 i;

	if (!cb_has_delta(c))
		return 0;
	for (i = 0; i < l && i < c->n_layers; i++)
		if (cb_layer_is_delta(c, i))
			off += layer_floats(c);
	return off;
}

cb_u64 cb_delta_state_floats(const struct cb_model_config *c)
{
	return cb_delta_layer_offset(c, c->n_layers);
}

void cb_delta_config_from_words(struct cb_delta_config *d, const cb_u32 *w)
{
	d->k_heads = w[0];
	d->v_heads = w[1];
	d->k_dim = w[2];
	d->v_dim = w[3];
	d->conv_kernel = w[4];
	d->full_interval = w[5];
	d->flags = w[6];
}

void cb_delta_config_to_words(const struct cb_delta_config *d, cb_u32 *w)
{
	w[0] = d->k_heads;
	w[1] = d->v_heads;
	w[2] = d->k_dim;
	w[3] = d->v_dim;
	w[4] = d->conv_kernel;
	w[5] = d->full_interval;
	w[6] = d->flags;
}

void cb_format_delta_to_file(const struct cb_model_config *c, struct colibri_file_delta *f)
{
	cb_u32 w[CB_DELTA_WORDS];

	cb_delta_config_to_words(&c->delta, w);
	f->k_heads = w[0];
	f->v_heads = w[1];
	f->k_head_dim = w[2];
	f->v_head_dim = w[3];
	f->conv_kernel = w[4];
	f->full_interval = w[5];
	f->flags = w[6];
}
