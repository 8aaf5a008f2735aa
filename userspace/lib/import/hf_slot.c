// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_slot.c - the source of each .colibri slot in a Hugging Face checkpoint
 * (hf_slot.h): by the role's HF name, or made from fused tensors by the
 * kind that fuses them (GPT-OSS's experts, MLA's kv_b_proj).
 */
#include <stdio.h>

#include "arch/cb_arch.h"
#include "import/hf_deepseek.h"
#include "import/hf_experts.h"
#include "import/hf_fused.h"
#include "import/hf_values.h"
#include "import/hf_gpt_oss.h"
#include "import/hf_loader.h"
#include "import/hf_names.h"
#include "import/hf_slot.h"
#include "format/cb_role.h"
#include "import/safetensors.h"

int hf_slot_find(const struct st_set *st, const struct cb_model_config *c,
		 const struct cb_format_slot *s, struct hf_slot_src *src, char *err, size_t errlen)
{
	const struct st_tensor *t;
	char name[256];
	int r;

	*src = (struct hf_slot_src){ .raw_dt = -1 };
	if (cb_arch_uses_oss(cb_arch_of(c->arch))) {
		r = hf_gpt_oss_slot(st, c, s, src, err, errlen);
		if (r <= 0)
			return r;
	}
	if (hf_tensor_name(c, s->role, s->layer, s->expert, name, sizeof(name))) {
		snprintf(err, errlen, "no Hugging Face name for %s", cb_format_role_name(s->role));
		return -1;
	}
	if (cb_role_scope(s->role) == CB_ROLE_EXPERT && !st_set_find(st, name)) {
		/* the layer's experts saved fused (transformers 5), if they are */
		int bad;

		uint64_t row0;

		t = hf_experts_fused(st, c, s->role, s->layer, s->expert, &row0, &bad, err,
				     errlen);
		if (bad)
			return -1;
		if (t) {
			src->t = t;
			src->keep_dt = st_keep_dtype(t);
			src->made = 1;
			src->made_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
			return 0;
		}
	}
	t = hf_find_tensor(st, name, err, errlen);
	if (!t)
		return -1;
	if (hf_fused_role(c, s->role)) {
		/* Qwen3-Next: rows of in_proj_qkvz or in_proj_ba */
		if (t->ndim != 2 || t->shape[0] != hf_fused_rows(c, s->role) ||
		    t->shape[1] != s->cols) {
			snprintf(err, errlen, "tensor '%s': shape does not match config.json "
				 "(want %u x %u)", name, hf_fused_rows(c, s->role), s->cols);
			return -1;
		}
		src->made = 1;
		src->made_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
	} else if (hf_deepseek_is_split(s->role)) {
		if (!hf_deepseek_kv_b_ok(c, t)) {
			snprintf(err, errlen, "tensor '%s': shape does not match config.json "
				 "(want %u x %u)", name,
				 c->n_heads * (c->mla.qk_nope_dim + c->mla.v_head_dim),
				 c->mla.kv_lora_rank);
			return -1;
		}
		src->made = 1;
		src->made_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
	} else if (!hf_shape_ok(s->role, t, s->rows, s->cols, s->vector)) {
		snprintf(err, errlen,
			 "tensor '%s': shape does not match config.json (want %u x %u)",
			 name, s->rows, s->cols);
		return -1;
	} else if (hf_values_differ(c, s->role)) {
		/* its values otherwise than stored (1 + w, -exp(A_log)) */
		src->made = 1;
		src->made_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
	}
	src->t = t;
	src->keep_dt = st_keep_dtype(t);
	return 0;
}

int hf_slot_fill(const struct cb_model_config *c, const struct cb_format_slot *s,
		 const struct hf_slot_src *src, void *buf, char *err, size_t errlen)
{
	uint64_t row0;

	if (!src->made) {
		snprintf(err, errlen, "tensor '%s' is not a made slot", src->t->name);
		return -1;
	}
	if (cb_role_scope(s->role) == CB_ROLE_EXPERT && !cb_arch_uses_oss(cb_arch_of(c->arch)) &&
	    hf_experts_cut(c, src->t, s->role, s->expert, &row0)) {
		/* an expert of the layer's fused tensors: its rows as they are */
		if (!row0 && st_check_values(src->t, err, errlen))
			return -1;
		st_to_f32(buf, src->t, row0 * s->cols, (uint64_t)s->rows * s->cols);
		return 0;
	}
	if (hf_fused_role(c, s->role)) {
		uint32_t r;

		if (st_check_values(src->t, err, errlen))
			return -1;
		for (r = 0; r < s->rows; r++)
			st_to_f32((float *)buf + (uint64_t)r * s->cols, src->t,
				  (uint64_t)hf_fused_row(c, s->role, r) * s->cols, s->cols);
		return 0;
	}
	if (hf_values_differ(c, s->role)) {
		if (st_check_values(src->t, err, errlen))
			return -1;
		st_to_f32(buf, src->t, 0, (uint64_t)s->rows * s->cols);
		hf_values_to_file(c, s->role, buf, (uint64_t)s->rows * s->cols);
		return 0;
	}
	if (hf_deepseek_is_split(s->role)) {
		if (st_check_values(src->t, err, errlen))
			return -1;
		if (hf_deepseek_split(c, s->role, src->t, buf)) {
			snprintf(err, errlen, "%s: out of memory", src->t->name);
			return -1;
		}
		return 0;
	}
	return hf_gpt_oss_slot_fill(c, s, src, buf, err, errlen);
}
