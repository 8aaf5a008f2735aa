// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_values.c - the checkpoint tensors a .colibri file holds otherwise
 * (hf_values.h): zero-centred RMSNorms (Qwen3.5's input_layernorm,
 * post_attention_layernorm, the model's norm, q_norm and k_norm multiply
 * by 1 + w; not linear_attn.norm) become 1 + w, as llama.cpp's GGUF holds
 * them; a DeltaNet's A_log becomes its decay rate -exp(A_log); its
 * conv1d's [channels, 1, taps] is read as [channels, taps].
 */
#include <math.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/hf_values.h"
#include "import/safetensors.h"

static int centred_norm(const struct cb_model_config *c, cb_u32 role)
{
	const struct cb_arch_desc *a = cb_arch_of(c->arch);

	if (!a || !a->hf_norm_centred)
		return 0;
	return role == COLIBRI_T_ATTN_NORM || role == COLIBRI_T_FFN_NORM ||
	       role == COLIBRI_T_FINAL_NORM || role == COLIBRI_T_Q_NORM ||
	       role == COLIBRI_T_K_NORM;
}

int hf_values_differ(const struct cb_model_config *c, cb_u32 role)
{
	return centred_norm(c, role) || role == COLIBRI_T_DELTA_DECAY;
}

void hf_values_to_file(const struct cb_model_config *c, cb_u32 role, float *v, uint64_t n)
{
	uint64_t i;

	if (centred_norm(c, role))
		for (i = 0; i < n; i++)
			v[i] = 1.0f + v[i];
	else if (role == COLIBRI_T_DELTA_DECAY)
		for (i = 0; i < n; i++)
			v[i] = -expf(v[i]);
}

int hf_shape_ok(cb_u32 role, const struct st_tensor *t, cb_u32 rows, cb_u32 cols, int vector)
{
	if (role == COLIBRI_T_DELTA_CONV)
		return t->ndim == 3 && t->shape[0] == rows && t->shape[1] == 1 &&
		       t->shape[2] == cols;
	if (vector && rows == 1)
		return t->ndim == 1 && t->shape[0] == cols;
	return t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols;
}
