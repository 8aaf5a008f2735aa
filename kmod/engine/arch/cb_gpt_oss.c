// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_gpt_oss.c - GPT-OSS's config, file roles and tensor checks, and the
 * size of its sliding layers' KV ring.
 *
 * Integer only (the kernel calls these outside FPU sections, with the
 * validator and model setup).
 */
#include "format/cb_format.h"
#include "arch/cb_gpt_oss.h"
#include "format/cb_role.h"
#include "core/cb_why.h"

/* An f32 bit pattern that is finite and > 0. */
static int pos_bits(cb_u32 bits)
{
	return bits && !(bits & 0x80000000u) && (bits & 0x7f800000u) != 0x7f800000u;
}

#define OSS_FAIL(...) cb_why(why, whylen, -CB_EINVAL, "config: " __VA_ARGS__)

int cb_gpt_oss_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen)
{
	const struct cb_gpt_oss_config *o = &c->oss;
	cb_u32 l, i;

	if (!cb_arch_uses_oss(cb_arch_of(c->arch))) {
		const cb_u32 *w = (const cb_u32 *)o;

		for (i = 0; i < sizeof(*o) / 4; i++)
			if (w[i])
				return OSS_FAIL("GPT-OSS word %u set for another arch", i);
		return 0;
	}
	if (o->reserved)
		return OSS_FAIL("gpt_oss reserved is not zero");
	if (!c->n_experts)
		return OSS_FAIL("GPT-OSS needs n_experts > 0");
	if (!c->qkv_bias || !c->norm_topk_prob)
		return OSS_FAIL("GPT-OSS needs qkv_bias and norm_topk_prob (%u %u)",
				c->qkv_bias, c->norm_topk_prob);
	if (c->shared_ffn || c->dense_ffn || c->decoder_sparse_step != 1 ||
	    c->qk_norm || c->clip_qkv_bits)
		return OSS_FAIL("GPT-OSS has no shared or dense MLP, q/k norm or clip_qkv");
	for (i = 0; i < CB_ARRAY_SIZE(c->mlp_only_layers); i++)
		if (c->mlp_only_layers[i])
			return OSS_FAIL("GPT-OSS has no mlp_only_layers");
	if (!o->sliding_window)
		return OSS_FAIL("sliding_window is 0");
	if (c->max_context && o->sliding_window > c->max_context)
		return OSS_FAIL("sliding_window %u larger than the context (max_context %u)",
				o->sliding_window, c->max_context);
	if (!pos_bits(o->swiglu_limit_bits))
		return OSS_FAIL("swiglu_limit is not a finite positive number");
	if (!pos_bits(o->swiglu_alpha_bits))
		return OSS_FAIL("swiglu_alpha is not a finite positive number");
	for (l = c->n_layers; l < CB_MAX_LAYERS; l++)
		if (o->sliding_layers[l / 32] >> (l % 32) & 1)
			return OSS_FAIL("sliding_layers has bit %u at or above n_layers %u",
					l, c->n_layers);
	return 0;
}

cb_u32 cb_gpt_oss_roles(const struct cb_model_config *c, cb_u32 *roles)
{
	cb_u32 i;

	if (!cb_arch_uses_oss(cb_arch_of(c->arch)))
		return 0;
	for (i = 0; i < CB_GPT_OSS_ROLES; i++)
		roles[i] = COLIBRI_T_ATTN_SINKS + i;
	return CB_GPT_OSS_ROLES;
}

int cb_gpt_oss_check_layer(const struct cb_model_config *c, const struct cb_layer_weights *L)
{
	cb_u32 roles[CB_GPT_OSS_ROLES], n = cb_gpt_oss_roles(c, roles), i, rows, cols, vec;

	for (i = 0; i < n; i++) {
		const struct cb_tensor *t = cb_role_layer_tensor((struct cb_layer_weights *)L,
								 roles[i]);

		cb_role_shape(c, roles[i], &rows, &cols, &vec);
		if (!t->data || t->dtype != CB_DT_F32 || t->rows != rows || t->cols != cols)
			return -CB_EINVAL;
	}
	return 0;
}

cb_u32 cb_gpt_oss_ring_rows(const struct cb_model_config *c, cb_u32 max_context,
			    cb_u32 max_batch_tokens)
{
	cb_u64 r;
	cb_u32 i, any = 0;

	if (!cb_arch_uses_oss(cb_arch_of(c->arch)))
		return 0;
	for (i = 0; i < CB_ARRAY_SIZE(c->oss.sliding_layers); i++)
		any |= c->oss.sliding_layers[i];
	if (!any)
		return 0;
	r = (cb_u64)c->oss.sliding_window + max_batch_tokens - 1;
	return (cb_u32)CB_MIN(r, (cb_u64)max_context);
}

/* cb_format.h: the GPT-OSS words of the header (ext_gpt_oss), from the config */
void cb_format_ext_to_file(const struct cb_model_config *c, struct colibri_file_header *h)
{
	const cb_u32 *o = (const cb_u32 *)&c->oss;
	cb_u32 i;

	for (i = 0; i < sizeof(c->oss) / 4; i++)
		((cb_u32 *)&h->ext_gpt_oss)[i] = o[i];
}
