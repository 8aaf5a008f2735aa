// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_fused.c - Qwen3-Next's fused DeltaNet projections, written from HF's
 * modeling_qwen3_next.py (Qwen3NextGatedDeltaNet.fix_query_key_value_ordering):
 * in_proj_qkvz holds, for each key head g in turn, q_g (k_dim rows), k_g
 * (k_dim), then v and z of its r = v_heads / k_heads value heads (r v_dim
 * rows each); in_proj_ba holds b then a of those r heads.  The file's
 * delta_qkv (all q, all k, all v), delta_z, delta_b and delta_a are
 * those rows gathered, the value heads in HF's grouped order.
 */
#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/hf_fused.h"
#include "import/safetensors.h"
#include "quant/quant_preset.h"

int hf_fused_role(const struct cb_model_config *c, cb_u32 role)
{
	const struct cb_arch_desc *a = cb_arch_of(c->arch);

	return a && a->hf_delta_fused &&
	       (role == COLIBRI_T_DELTA_QKV || role == COLIBRI_T_DELTA_Z ||
		role == COLIBRI_T_DELTA_B || role == COLIBRI_T_DELTA_A);
}

cb_u32 hf_fused_rows(const struct cb_model_config *c, cb_u32 role)
{
	const struct cb_delta_config *d = &c->delta;

	if (role == COLIBRI_T_DELTA_B || role == COLIBRI_T_DELTA_A)
		return 2 * d->v_heads;
	return 2 * d->k_heads * d->k_dim + 2 * d->v_heads * d->v_dim;
}

cb_u32 hf_fused_row(const struct cb_model_config *c, cb_u32 role, cb_u32 r)
{
	const struct cb_delta_config *d = &c->delta;
	cb_u32 grp = d->v_heads / d->k_heads, gv = grp * d->v_dim;
	cb_u32 w = 2 * d->k_dim + 2 * gv, kd = d->k_heads * d->k_dim;

	switch (role) {
	case COLIBRI_T_DELTA_B:		/* b of head r: group r / grp, first half */
		return r / grp * 2 * grp + r % grp;
	case COLIBRI_T_DELTA_A:
		return r / grp * 2 * grp + grp + r % grp;
	case COLIBRI_T_DELTA_Z:		/* z of group r / gv */
		return r / gv * w + 2 * d->k_dim + gv + r % gv;
	default:			/* delta_qkv: q, k, then v */
		if (r < 2 * kd)
			return r % kd / d->k_dim * w + (r >= kd) * d->k_dim + r % d->k_dim;
		r -= 2 * kd;
		return r / gv * w + 2 * d->k_dim + r % gv;
	}
}

/* hf_load_rows()'s row map: the fused row of row r of the role */
struct fused_cut {
	const struct cb_model_config *c;
	cb_u32 role;
};

static cb_u64 fused_row_of(const void *ctx, cb_u32 r)
{
	const struct fused_cut *f = ctx;

	return hf_fused_row(f->c, f->role, r);
}

int hf_fused_load(struct hf_loader *ld, struct cb_tensor *out, const char *name,
		  cb_u32 rows, cb_u32 cols, cb_u32 role, cb_u32 layer)
{
	const struct cb_model_config *c = &ld->m->cfg;
	const struct st_tensor *t = hf_find_tensor(ld->m->st, name, ld->err, ld->errlen);
	struct fused_cut f = { c, role };

	if (!t)
		return -1;
	if (t->ndim != 2 || t->shape[0] != hf_fused_rows(c, role) || t->shape[1] != cols)
		return hf_fail(ld, "tensor '%s': shape does not match config.json (want %u x %u)",
			       name, hf_fused_rows(c, role), cols);
	/* each fused tensor's values checked with its first role */
	if ((role == COLIBRI_T_DELTA_QKV || role == COLIBRI_T_DELTA_B) &&
	    st_check_values(t, ld->err, ld->errlen))
		return -1;
	return hf_load_rows(ld, out, t, cb_quant_choose(&ld->q, c, role, layer, cols,
							st_keep_dtype(t)),
			    rows, cols, role, fused_row_of, &f);
}
