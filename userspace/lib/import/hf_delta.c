// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_delta.c - Qwen3.5/3.6-MoE checkpoints (Qwen3_5MoeForConditionalGeneration):
 * the Gated DeltaNet keys of config.json's text_config (hf_delta.h).  The
 * values its checkpoints store otherwise than the file are hf_values.c's.
 *
 * Tensors of a DeltaNet layer (after "model.language_model.layers.N."):
 *   linear_attn.in_proj_qkv [2 Kd + Vd, hidden], in_proj_z [Vd, hidden],
 *   in_proj_b, in_proj_a [v_heads, hidden], conv1d.weight [conv_dim, 1, K],
 *   A_log, dt_bias [v_heads], norm.weight [v_dim], out_proj [hidden, Vd].
 */
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/hf_delta.h"
#include "import/hf_scored.h"

/* The layer pattern: every interval-th layer full attention, the others linear. */
static int layer_pattern(struct hf_loader *ld, const char *dir, const cJSON *root)
{
	struct cb_model_config *c = &ld->m->cfg;
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(root, "layer_types"), *it;
	const struct hf_u32_key k = { "full_attention_interval", &c->delta.full_interval, 1, 0 };
	cb_u32 l = 0, every = 0;

	if (!lt || cJSON_IsNull(lt))
		return hf_config_u32s(ld, dir, root, &k, 1);
	if (!cJSON_IsArray(lt) || (cb_u32)cJSON_GetArraySize(lt) != c->n_layers)
		return hf_fail(ld, "%s/config.json: layer_types has %d entries, not one for each of "
			       "the %u layers", dir, cJSON_IsArray(lt) ? cJSON_GetArraySize(lt) : -1,
			       c->n_layers);
	cJSON_ArrayForEach(it, lt) {
		const char *s = cJSON_IsString(it) ? it->valuestring : "";
		int full = !strcmp(s, "full_attention");

		if (!full && strcmp(s, "linear_attention"))
			return hf_fail(ld, "%s/config.json: layer_types[%u] is '%s', not "
				       "linear_attention or full_attention", dir, l, s);
		if (full && !every)
			every = l + 1;
		l++;
	}
	for (l = 0; every && l < c->n_layers; l++)
		if (((l + 1) % every == 0) !=
		    !strcmp(cJSON_GetArrayItem(lt, (int)l)->valuestring, "full_attention"))
			break;
	if (!every || l < c->n_layers)
		return hf_fail(ld, "%s/config.json: layer_types is not every %u-th layer full "
			       "attention (layer %u differs), the one pattern supported", dir, every,
			       l);
	c->delta.full_interval = every;
	return 0;
}

int hf_delta_config(struct hf_loader *ld, const char *dir, const cJSON *root)
{
	struct cb_delta_config *d = &ld->m->cfg.delta;
	const struct hf_u32_key k[] = {
		{ "linear_num_key_heads", &d->k_heads, 1, 0 },
		{ "linear_num_value_heads", &d->v_heads, 1, 0 },
		{ "linear_key_head_dim", &d->k_dim, 1, 0 },
		{ "linear_value_head_dim", &d->v_dim, 1, 0 },
		{ "linear_conv_kernel_dim", &d->conv_kernel, 1, 0 },
	};

	if (hf_config_u32s(ld, dir, root, k, sizeof(k) / sizeof(k[0])))
		return -1;
	return layer_pattern(ld, dir, root);
}
