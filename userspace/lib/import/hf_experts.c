// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_experts.c - routed experts as transformers 5 saves them (hf_experts.h),
 * written from its Qwen3_5MoeExperts (modeling_qwen3_5_moe.py):
 * "mlp.experts.gate_up_proj" [E, 2 F, hidden], gate the first F rows of
 * each expert and up the next F (linear(x, gate_up_proj[e]).chunk(2)),
 * and "mlp.experts.down_proj" [E, hidden, F].  Each expert's rows are a
 * contiguous run of the tensor's, read as they are.
 */
#include <stdio.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/hf_experts.h"
#include "import/hf_names.h"
#include "import/safetensors.h"
#include "quant/quant_preset.h"

const struct st_tensor *hf_experts_fused(const struct st_set *st,
					 const struct cb_model_config *c, cb_u32 role, cb_u32 l,
					 cb_u32 x, uint64_t *row0, int *bad, char *err,
					 size_t errlen)
{
	const struct st_tensor *t;
	int down = role == COLIBRI_T_EXPERT_DOWN;
	uint64_t d1 = down ? c->hidden : 2ull * c->expert_ffn;
	uint64_t d2 = down ? c->expert_ffn : c->hidden;
	char name[256], *cut;

	*bad = 0;
	/* the layer's router's name, its last part replaced */
	if (hf_tensor_name(c, COLIBRI_T_ROUTER, l, 0, name, sizeof(name)))
		return NULL;
	cut = strstr(name, "mlp.gate.weight");
	if (!cut)
		return NULL;
	snprintf(cut, sizeof(name) - (size_t)(cut - name), "mlp.experts.%s",
		 down ? "down_proj" : "gate_up_proj");
	t = st_set_find(st, name);
	if (!t)
		return NULL;
	if (t->ndim != 3 || t->shape[0] != c->n_experts || t->shape[1] != d1 || t->shape[2] != d2) {
		*bad = 1;
		snprintf(err, errlen, "tensor '%s': shape does not match config.json "
			 "(want %u x %llu x %llu)", name, c->n_experts, (unsigned long long)d1,
			 (unsigned long long)d2);
		return NULL;
	}
	hf_experts_cut(c, t, role, x, row0);
	return t;
}

int hf_experts_cut(const struct cb_model_config *c, const struct st_tensor *t, cb_u32 role,
		   cb_u32 x, uint64_t *row0)
{
	if (t->ndim != 3)
		return 0;
	*row0 = (uint64_t)x * t->shape[1] + (role == COLIBRI_T_EXPERT_UP ? c->expert_ffn : 0);
	return 1;
}

/* hf_load_rows()'s row map: the expert's rows, from its first */
static cb_u64 expert_row_of(const void *ctx, cb_u32 r)
{
	return *(const uint64_t *)ctx + r;
}

int hf_experts_load(struct hf_loader *ld, struct cb_tensor *out, const struct st_tensor *t,
		    uint64_t row0, cb_u32 rows, cb_u32 cols, cb_u32 role, cb_u32 l)
{
	/* the fused tensor's values checked with its first expert */
	if (row0 == 0 && st_check_values(t, ld->err, ld->errlen))
		return -1;
	return hf_load_rows(ld, out, t, cb_quant_choose(&ld->q, &ld->m->cfg, role, l, cols,
							st_keep_dtype(t)),
			    rows, cols, role, expert_row_of, &row0);
}
