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
#include <stdlib.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "ops/cb_ops.h"
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

int hf_fused_load(struct hf_loader *ld, struct cb_tensor *out, const char *name,
		  cb_u32 rows, cb_u32 cols, cb_u32 role, cb_u32 layer)
{
	const struct cb_model_config *c = &ld->m->cfg;
	const struct st_tensor *t = hf_find_tensor(ld->m->st, name, ld->err, ld->errlen);
	cb_u64 rb, r, total;
	char *dst;
	int dt;

	if (!t)
		return -1;
	if (t->ndim != 2 || t->shape[0] != hf_fused_rows(c, role) || t->shape[1] != cols)
		return hf_fail(ld, "tensor '%s': shape does not match config.json (want %u x %u)",
			       name, hf_fused_rows(c, role), cols);
	if (st_check_values(t, ld->err, ld->errlen))
		return -1;
	dt = cb_quant_choose(&ld->q, c, role, layer, cols, st_keep_dtype(t));
	rb = cb_dtype_row_bytes(dt, cols);
	total = CB_ALIGN(rb * rows, 64);
	dst = aligned_alloc(64, total ? total : 64);
	if (!dst || hf_model_own(ld->m, dst)) {
		free(dst);
		return hf_fail(ld, "tensor '%s': out of memory", name);
	}
	if (ld->rowcap < cols) {
		free(ld->row);
		ld->row = malloc(cols * sizeof(float));
		ld->rowcap = ld->row ? cols : 0;
		if (!ld->row)
			return hf_fail(ld, "tensor '%s': out of memory", name);
	}
	for (r = 0; r < rows; r++) {
		st_to_f32(ld->row, t, (cb_u64)hf_fused_row(c, role, (cb_u32)r) * cols, cols);
		cb_quantize_row(dt, dst + r * rb, ld->row, (int)cols);
	}
	if (cb_quant_find_bad_scale((cb_u32)dt, dst,
				    rb * rows / cb_dtype_info(dt)->block_bytes) >= 0)
		return hf_fail(ld, "tensor '%s': quantized to %s, a block scale is not finite",
			       name, cb_dtype_name(dt));
	out->data = dst;
	out->dtype = (cb_u32)dt;
	out->rows = rows;
	out->cols = cols;
	return 0;
}
