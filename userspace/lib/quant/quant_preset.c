// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * quant_preset.c - llama.cpp's quantization presets, per tensor.
 *
 * The rules are those of llama-quantize's tensor-type choice (its
 * llama_tensor_get_type(), without an importance matrix and without
 * per-tensor overrides), written here for the roles of a .colibri file:
 *
 *   output (lm_head; the embedding when tied): q8_0 if its rows are not a
 *       whole number of the base type's blocks, else q6_K (q8_0 stays q8_0)
 *   embedding (untied): the base type
 *   attn_v (wv):  Q2_K: q4_K if n_heads / n_kv_heads >= 4, else q3_K;
 *                 Q3_K_M: q5_K for layers 0 and 1, else q4_K; Q3_K_L: q5_K;
 *                 IQ4_NL, IQ4_XS: q5_K if n_heads / n_kv_heads >= 4;
 *                 Q4_K_M, Q5_K_M: q6_K where use_more_bits(layer);
 *                 Q4_K_S: q5_K for layers 0..3;
 *                 then, for any preset, q8_0 if the model has 8 experts
 *   attn_k (wk):  q8_0 if the model has 8 experts
 *   attn_output (wo):
 *                 8 experts: q5_K for Q2_K, Q3_K_S, Q3_K_M, IQ4_NL, Q4_K_S,
 *                 Q4_K_M, IQ4_XS; otherwise Q2_K: q3_K, Q3_K_M: q4_K,
 *                 Q3_K_L: q5_K
 *   ffn_down (mlp, expert and shared expert down, layer i of n):
 *                 Q2_K: q3_K; Q3_K_M: q5_K if i < n/16, else q4_K;
 *                 Q3_K_L: q5_K; Q4_K_M: q6_K where use_more_bits(i);
 *                 IQ4_NL, IQ4_XS: q5_K if i < n/8; Q5_K_M: q6_K where
 *                 use_more_bits(i); Q4_K_S: q5_K if i < n/8
 *   everything else: the base type
 * with use_more_bits(i) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2
 * (n/8 in integers), and the row-length fallback of cb_quant_choose().
 * The router and the shared-expert gate, which llama.cpp does not
 * quantize either, stay f32.
 */
#include <string.h>
#include <strings.h>

#include "colibri_format.h"
#include "quant/quant_preset.h"
#include "format/cb_role.h"

static const struct {
	const char *name;	/* llama.cpp's spelling */
	int base;
} presets[CB_PRESET__COUNT] = {
	[CB_PRESET_NONE] = { "", CB_QUANT_KEEP },
	[CB_PRESET_Q2_K] = { "Q2_K", CB_DT_Q2_K },
	[CB_PRESET_Q3_K_S] = { "Q3_K_S", CB_DT_Q3_K },
	[CB_PRESET_Q3_K_M] = { "Q3_K_M", CB_DT_Q3_K },
	[CB_PRESET_Q3_K_L] = { "Q3_K_L", CB_DT_Q3_K },
	[CB_PRESET_Q4_0] = { "Q4_0", CB_DT_Q4_0 },
	[CB_PRESET_Q4_1] = { "Q4_1", CB_DT_Q4_1 },
	[CB_PRESET_Q4_K_S] = { "Q4_K_S", CB_DT_Q4_K },
	[CB_PRESET_Q4_K_M] = { "Q4_K_M", CB_DT_Q4_K },
	[CB_PRESET_Q5_0] = { "Q5_0", CB_DT_Q5_0 },
	[CB_PRESET_Q5_1] = { "Q5_1", CB_DT_Q5_1 },
	[CB_PRESET_Q5_K_S] = { "Q5_K_S", CB_DT_Q5_K },
	[CB_PRESET_Q5_K_M] = { "Q5_K_M", CB_DT_Q5_K },
	[CB_PRESET_Q6_K] = { "Q6_K", CB_DT_Q6_K },
	[CB_PRESET_Q8_0] = { "Q8_0", CB_DT_Q8_0 },
	[CB_PRESET_IQ4_NL] = { "IQ4_NL", CB_DT_IQ4_NL },
	[CB_PRESET_IQ4_XS] = { "IQ4_XS", CB_DT_IQ4_XS },
};

const char *cb_preset_name(int preset)
{
	return preset > 0 && preset < CB_PRESET__COUNT ? presets[preset].name : "";
}

const char *cb_quant_names(void)
{
	return "keep, f32, f16, bf16, q8_0, q4_0 (every matrix), a preset: q2_k q3_k_s "
	       "q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k iq4_nl iq4_xs q4_1 q5_0 "
	       "q5_1 Q4_0 Q8_0, or TYPE:pure (every matrix TYPE)";
}

/*
 * Preset names, case-insensitive, with llama-quantize's aliases (q4_k is
 * Q4_K_M).  "Q4_0" and "Q8_0" are the presets only in capitals: in lower
 * case they keep their older meaning, every matrix in that type.
 */
static const struct {
	const char *name;
	int preset;
} preset_names[] = {
	{ "q2_k", CB_PRESET_Q2_K }, { "q3_k_s", CB_PRESET_Q3_K_S },
	{ "q3_k_m", CB_PRESET_Q3_K_M }, { "q3_k", CB_PRESET_Q3_K_M },
	{ "q3_k_l", CB_PRESET_Q3_K_L }, { "q4_k_s", CB_PRESET_Q4_K_S },
	{ "q4_k_m", CB_PRESET_Q4_K_M }, { "q4_k", CB_PRESET_Q4_K_M },
	{ "q5_k_s", CB_PRESET_Q5_K_S }, { "q5_k_m", CB_PRESET_Q5_K_M },
	{ "q5_k", CB_PRESET_Q5_K_M }, { "q6_k", CB_PRESET_Q6_K },
	{ "iq4_nl", CB_PRESET_IQ4_NL }, { "iq4_xs", CB_PRESET_IQ4_XS },
	{ "q4_1", CB_PRESET_Q4_1 }, { "q5_0", CB_PRESET_Q5_0 }, { "q5_1", CB_PRESET_Q5_1 },
};

int cb_quant_parse(const char *s, struct cb_quant *q)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	unsigned int i;

	q->preset = CB_PRESET_NONE;
	q->dtype = CB_QUANT_KEEP;
	if (colon) {	/* TYPE:pure, every matrix in one type */
		if (strcmp(colon, ":pure"))
			return -1;
		for (i = 0; i < CB_DT__COUNT; i++)
			if (strlen(cb_dtype_name(i)) == n && !strncasecmp(s, cb_dtype_name(i), n)) {
				q->dtype = (int)i;
				return 0;
			}
		return -1;
	}
	if (!strcmp(s, "keep"))
		return 0;
	if (!strcmp(s, "Q4_0") || !strcmp(s, "Q8_0")) {
		q->preset = s[1] == '4' ? CB_PRESET_Q4_0 : CB_PRESET_Q8_0;
		q->dtype = presets[q->preset].base;
		return 0;
	}
	for (i = 0; i < CB_ARRAY_SIZE(preset_names); i++)
		if (!strcasecmp(s, preset_names[i].name)) {
			q->preset = preset_names[i].preset;
			q->dtype = presets[q->preset].base;
			return 0;
		}
	for (i = CB_DT_F32; i <= CB_DT_Q4_0; i++)	/* the types of the first converter */
		if (!strcmp(s, cb_dtype_name(i))) {
			q->dtype = (int)i;
			return 0;
		}
	return -1;
}

static int use_more_bits(int i, int n)
{
	return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* llama-quantize's choice for one matrix, before the row-length fallback. */
static int preset_type(int p, const struct cb_model_config *cfg, uint32_t role, int i)
{
	int base = presets[p].base, n = (int)cfg->n_layers;
	int gqa = cfg->n_kv_heads ? (int)(cfg->n_heads / cfg->n_kv_heads) : 1;
	int e8 = cfg->n_experts == 8, t = base;

	switch (role) {
	case COLIBRI_T_LM_HEAD:
		return base == CB_DT_Q8_0 ? CB_DT_Q8_0 : CB_DT_Q6_K;
	case COLIBRI_T_EMBED:
		if (cfg->tied_embeddings)
			return base == CB_DT_Q8_0 ? CB_DT_Q8_0 : CB_DT_Q6_K;
		return base;
	case COLIBRI_T_WV:
		if (p == CB_PRESET_Q2_K)
			t = gqa >= 4 ? CB_DT_Q4_K : CB_DT_Q3_K;
		else if (p == CB_PRESET_Q3_K_M)
			t = i < 2 ? CB_DT_Q5_K : CB_DT_Q4_K;
		else if (p == CB_PRESET_Q3_K_L)
			t = CB_DT_Q5_K;
		else if ((p == CB_PRESET_IQ4_NL || p == CB_PRESET_IQ4_XS) && gqa >= 4)
			t = CB_DT_Q5_K;
		else if ((p == CB_PRESET_Q4_K_M || p == CB_PRESET_Q5_K_M) && use_more_bits(i, n))
			t = CB_DT_Q6_K;
		else if (p == CB_PRESET_Q4_K_S && i < 4)
			t = CB_DT_Q5_K;
		return e8 ? CB_DT_Q8_0 : t;
	case COLIBRI_T_WK:
		return e8 ? CB_DT_Q8_0 : base;
	case COLIBRI_T_WO:
		if (e8)
			return p == CB_PRESET_Q2_K || p == CB_PRESET_Q3_K_S ||
			       p == CB_PRESET_Q3_K_M || p == CB_PRESET_IQ4_NL ||
			       p == CB_PRESET_Q4_K_S || p == CB_PRESET_Q4_K_M ||
			       p == CB_PRESET_IQ4_XS ? CB_DT_Q5_K : base;
		return p == CB_PRESET_Q2_K ? CB_DT_Q3_K : p == CB_PRESET_Q3_K_M ? CB_DT_Q4_K :
		       p == CB_PRESET_Q3_K_L ? CB_DT_Q5_K : base;
	case COLIBRI_T_MLP_DOWN:
	case COLIBRI_T_EXPERT_DOWN:
	case COLIBRI_T_SHARED_DOWN:
		if (p == CB_PRESET_Q2_K)
			return CB_DT_Q3_K;
		if (p == CB_PRESET_Q3_K_M)
			return i < n / 16 ? CB_DT_Q5_K : CB_DT_Q4_K;
		if (p == CB_PRESET_Q3_K_L)
			return CB_DT_Q5_K;
		if (p == CB_PRESET_Q4_K_M)
			return use_more_bits(i, n) ? CB_DT_Q6_K : base;
		if (i < n / 8 && (p == CB_PRESET_IQ4_NL || p == CB_PRESET_IQ4_XS))
			return CB_DT_Q5_K;
		if (p == CB_PRESET_Q5_K_M && use_more_bits(i, n))
			return CB_DT_Q6_K;
		if (p == CB_PRESET_Q4_K_S && i < n / 8)
			return CB_DT_Q5_K;
		return base;
	default:
		return base;
	}
}

int cb_quant_choose(const struct cb_quant *q, const struct cb_model_config *cfg,
		    uint32_t role, uint32_t layer, uint32_t cols, int src_dt)
{
	uint32_t rows, rcols, vector;
	int t;

	/* the router, the shared expert's gate and the f32-only roles stay f32 */
	if (role == COLIBRI_T_ROUTER || role == COLIBRI_T_SHARED_EXPERT_GATE ||
	    (cb_role_shape(cfg, role, &rows, &rcols, &vector) && vector))
		return CB_DT_F32;
	if (q->preset == CB_PRESET_NONE) {
		t = q->dtype == CB_QUANT_KEEP ? src_dt : q->dtype;
		return cb_dtype_row_bytes(t, cols) ? t : CB_DT_F32;
	}
	if (role == COLIBRI_T_LM_HEAD || (role == COLIBRI_T_EMBED && cfg->tied_embeddings)) {
		/* the output: q8_0 when the base type's blocks do not fit */
		if (!cb_dtype_row_bytes(q->dtype, cols))
			return cb_dtype_row_bytes(CB_DT_Q8_0, cols) ? CB_DT_Q8_0 : CB_DT_F16;
	}
	t = preset_type(q->preset, cfg, role, (int)layer);
	if (cb_dtype_row_bytes(t, cols))
		return t;
	switch (t) {
	case CB_DT_Q2_K:
	case CB_DT_Q3_K:
	case CB_DT_IQ4_XS:
		t = CB_DT_IQ4_NL;
		break;
	case CB_DT_Q4_K:
		t = CB_DT_Q5_0;
		break;
	case CB_DT_Q5_K:
		t = CB_DT_Q5_1;
		break;
	case CB_DT_Q6_K:
		t = CB_DT_Q8_0;
		break;
	default:
		break;
	}
	return cb_dtype_row_bytes(t, cols) ? t : CB_DT_F16;
}
