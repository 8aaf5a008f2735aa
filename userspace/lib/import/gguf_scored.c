// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_scored.c - the routing of GGUF's deepseek2 and glm4moe, as llama.cpp
 * converts them: expert_gating_func (1 softmax, 2 sigmoid; glm4moe's files
 * may leave it out, sigmoid), expert_weights_norm (read by gguf_model.c),
 * expert_weights_scale, expert_group_count / expert_group_used_count and
 * the layers' exp_probs_b.bias (the selection bias).
 *
 * llama.cpp renormalises (expert_weights_norm) and then always scales by
 * expert_weights_scale, which is the engine's rule.  What was not verified
 * against llama.cpp itself: how it ranks groups for softmax gating (taken
 * here as DeepSeek-V2's group maximum; sigmoid: the sum of the best two,
 * V3's and GLM's noaux_tc).
 */
#include <stdio.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/gguf.h"
#include "import/gguf_names.h"
#include "import/gguf_scored.h"

static cb_u32 bits_of(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

int gguf_scored_config(struct gloader *ld, cb_u32 gating)
{
	struct cb_model_config *c = &ld->m->hf.cfg;
	struct cb_mla_config *m = &c->mla;
	cb_u32 ng, nu, l;
	float scale;

	if (gguf_ld_u32(ld, "expert_group_count", 0, &ng) ||
	    gguf_ld_u32(ld, "expert_group_used_count", 0, &nu) ||
	    gguf_ld_f32(ld, "expert_weights_scale", 1.0f, &scale))
		return -1;
	if (gating != 1 && gating != 2) {
		gguf_ld_err(ld, "%s.expert_gating_func %u is not supported (1 softmax, "
			    "2 sigmoid)", ld->arch, gating);
		return -1;
	}
	m->score_func = gating == 2 ? CB_SCORE_SIGMOID : CB_SCORE_SOFTMAX;
	if (ng > 1) {
		m->n_group = ng;
		m->topk_group = nu;
		m->group_top = gating == 2 ? 2 : 1;
	}
	if (!(scale > 0.0f && scale < 1e30f)) {
		gguf_ld_err(ld, "%s.expert_weights_scale is not a positive number", ld->arch);
		return -1;
	}
	m->route_scale_bits = scale == 1.0f ? 0 : bits_of(scale);
	for (l = 0; l < c->n_layers; l++) {
		char n[64];

		if (!gguf_tensor_name(cb_arch_of(c->arch), COLIBRI_T_ROUTER_SEL_BIAS, l, n,
				      sizeof(n)) && gguf_find_tensor(ld->gf, n))
			m->sel_bias = 1;
	}
	/* sigmoid scores or a selection bias: the sigmoid architecture of this name */
	if (gating == 2 || m->sel_bias) {
		const struct cb_arch_desc *a =
			cb_arch_by_gguf_scores(cb_arch_of(c->arch)->gguf_arch, CB_SCORE_SIGMOID);

		if (!a) {
			gguf_ld_err(ld, "no architecture of this GGUF name has sigmoid gating");
			return -1;
		}
		c->arch = a->id;
	}
	return 0;
}
