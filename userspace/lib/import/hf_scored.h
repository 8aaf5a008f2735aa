/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_scored.h - config.json's MoE block of the architectures whose router
 * is scored (CB_ROUTER_SCORED: DeepSeek-V2/V3, GLM-4.5), read by
 * hf_scored.c for hfmodel.c; and the integer-key reader it shares with
 * hf_deepseek.c.
 */
#ifndef COLIBRI_HF_SCORED_H
#define COLIBRI_HF_SCORED_H

#include <stddef.h>

#include <cJSON.h>

#include "core/cb_engine.h"
#include "import/hf_loader.h"

/* One integer key of config.json and the field it fills. */
struct hf_u32_key {
	const char *key;
	cb_u32 *dst;
	int required;
	cb_u32 def;		/* where it is absent or null (and not required) */
};

/*
 * hf_config_u32s() - @n keys of @root, each an integer in 0..2^32-1, into
 * their fields.  Return: 0, or -1 with "missing or bad 'KEY'" in ld->err.
 */
int hf_config_u32s(struct hf_loader *ld, const char *dir, const cJSON *root,
		   const struct hf_u32_key *k, size_t n);

/*
 * hf_scored_config() - the experts (n_routed_experts, num_experts_per_tok,
 * moe_intermediate_size, n_shared_experts), the dense layers
 * (intermediate_size, first_k_dense_replace, moe_layer_freq) and the
 * routing rule (scoring_func, topk_method, n_group, topk_group,
 * norm_topk_prob, routed_scaling_factor; the arch file's defaults where
 * absent) into ld->m->cfg.  Return: 0, or -1 with the field named.
 */
int hf_scored_config(struct hf_loader *ld, const char *dir, const cJSON *root);

#endif /* COLIBRI_HF_SCORED_H */
