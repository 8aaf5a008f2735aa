// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_deepseek.c - DeepseekV2ForCausalLM / DeepseekV3ForCausalLM checkpoints.
 *
 * config.json (the fields of HF's configuration_deepseek):
 *   q_lora_rank (null: q_proj), kv_lora_rank, qk_nope_head_dim,
 *   qk_rope_head_dim, v_head_dim; the MoE and routing keys are
 *   hf_scored.c's, shared with GLM-4.5.
 * Tensors of a layer, besides the norms and MLPs hfmodel.c loads:
 *   self_attn.q_proj | self_attn.q_a_proj, q_a_layernorm, q_b_proj;
 *   self_attn.kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj;
 *   mlp.gate.weight, mlp.gate.e_score_correction_bias (noaux_tc),
 *   mlp.experts.E.{gate,up,down}_proj, mlp.shared_experts.{gate,up,down}_proj.
 *
 * kv_b_proj ([n_heads * (qk_nope + v_head), kv_lora_rank]) is split per
 * head at load: k_b[h] = W_uk[h]^T ([kv_lora_rank, qk_nope]) and v_b[h] =
 * W_uv[h], the two matrices the absorbed attention multiplies by
 * (kmod/engine/forward/cb_mla.c).  HF's DeepSeek RoPE de-interleaves q_pe and k_pe
 * before rotate_half: it rotates the pairs (2i, 2i + 1), the engine's
 * interleaved layout, on the weights as stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "ops/cb_ops.h"
#include "import/hf_deepseek.h"
#include "import/hf_scored.h"
#include "import/hf_names.h"
#include "import/safetensors.h"

int hf_deepseek_config(struct hf_loader *ld, const char *dir, const cJSON *root)
{
	struct cb_model_config *c = &ld->m->cfg;
	struct cb_mla_config *m = &c->mla;
	const struct hf_u32_key k[] = {
		{ "kv_lora_rank", &m->kv_lora_rank, 1, 0 },
		{ "q_lora_rank", &m->q_lora_rank, 0, 0 },
		{ "qk_nope_head_dim", &m->qk_nope_dim, 1, 0 },
		{ "qk_rope_head_dim", &m->qk_rope_dim, 1, 0 },
		{ "v_head_dim", &m->v_head_dim, 1, 0 },
	};

	if (hf_config_u32s(ld, dir, root, k, sizeof(k) / sizeof(k[0])))
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "attention_bias")))
		return hf_fail(ld, "%s/config.json: attention_bias is not supported", dir);
	c->qkv_bias = 0;
	/* MLA: every head has its own "kv head"; q and k heads of nope + rope */
	c->n_kv_heads = c->n_heads;
	c->head_dim = m->qk_nope_dim + m->qk_rope_dim;
	c->rope_layout = CB_ROPE_INTERLEAVED;	/* see the top of this file */
	return 0;
}

/* One f32 matrix into the type chosen for its role, owned by the model. */
static int store(struct hf_loader *ld, struct cb_tensor *out, const float *src, cb_u32 rows,
		 cb_u32 cols, cb_u32 role, cb_u32 layer, const char *name)
{
	int dt = cb_quant_choose(&ld->q, &ld->m->cfg, role, layer, cols, CB_DT_F32);
	cb_u64 rb = cb_dtype_row_bytes(dt, cols), r;
	char *dst = aligned_alloc(64, CB_ALIGN(rb * rows, 64) ? CB_ALIGN(rb * rows, 64) : 64);

	if (!dst || hf_model_own(ld->m, dst)) {
		free(dst);
		return hf_fail(ld, "tensor '%s': out of memory", name);
	}
	for (r = 0; r < rows; r++)
		cb_quantize_row(dt, dst + r * rb, src + r * cols, (int)cols);
	if (cb_quant_find_bad_scale((cb_u32)dt, dst, rb * rows / cb_dtype_info(dt)->block_bytes) >= 0)
		return hf_fail(ld, "tensor '%s': quantized to %s, a block scale is not finite",
			       name, cb_dtype_name(dt));
	out->data = dst;
	out->dtype = (cb_u32)dt;
	out->rows = rows;
	out->cols = cols;
	return 0;
}

int hf_deepseek_is_split(cb_u32 role)
{
	return role == COLIBRI_T_MLA_K_B || role == COLIBRI_T_MLA_V_B;
}

int hf_deepseek_kv_b_ok(const struct cb_model_config *c, const struct st_tensor *t)
{
	cb_u64 rows = (cb_u64)c->n_heads * (c->mla.qk_nope_dim + c->mla.v_head_dim);

	return t->dtype != ST_OTHER && t->ndim == 2 && t->shape[0] == rows &&
	       t->shape[1] == c->mla.kv_lora_rank;
}

int hf_deepseek_split(const struct cb_model_config *c, cb_u32 role, const struct st_tensor *t,
		      float *dst)
{
	cb_u32 nh = c->n_heads, R = c->mla.kv_lora_rank, dn = c->mla.qk_nope_dim;
	cb_u32 dv = c->mla.v_head_dim, hr = dn + dv, h, i, r;
	float *w = malloc((size_t)hr * R * sizeof(float));

	if (!w)
		return -1;
	for (h = 0; h < nh; h++) {
		/* head h's rows of kv_b_proj: dn of W_uk, then dv of W_uv */
		st_to_f32(w, t, (cb_u64)h * hr * R, (cb_u64)hr * R);
		if (role == COLIBRI_T_MLA_K_B) {
			for (i = 0; i < dn; i++)
				for (r = 0; r < R; r++)
					dst[((size_t)h * R + r) * dn + i] = w[(size_t)i * R + r];
		} else {
			memcpy(dst + (size_t)h * dv * R, w + (size_t)dn * R,
			       (size_t)dv * R * sizeof(float));
		}
	}
	free(w);
	return 0;
}

/* kv_b_proj -> k_b (per head transposed W_uk) and v_b (per head W_uv) */
static int split_kv_b(struct hf_loader *ld, struct cb_layer_weights *L, cb_u32 l,
		      const char *name)
{
	const struct cb_model_config *c = &ld->m->cfg;
	cb_u32 nh = c->n_heads, R = c->mla.kv_lora_rank, dn = c->mla.qk_nope_dim;
	cb_u32 dv = c->mla.v_head_dim;
	const struct st_tensor *t = hf_find_tensor(ld->m->st, name, ld->err, ld->errlen);
	float *kb = NULL, *vb = NULL;
	int ret = -1;

	if (!t || st_check_values(t, ld->err, ld->errlen))
		return -1;
	if (!hf_deepseek_kv_b_ok(c, t))
		return hf_fail(ld, "tensor '%s': shape does not match config.json (want %u x %u)",
			       name, nh * (dn + dv), R);
	kb = malloc((size_t)nh * R * dn * sizeof(float));
	vb = malloc((size_t)nh * dv * R * sizeof(float));
	if (!kb || !vb || hf_deepseek_split(c, COLIBRI_T_MLA_K_B, t, kb) ||
	    hf_deepseek_split(c, COLIBRI_T_MLA_V_B, t, vb)) {
		hf_fail(ld, "tensor '%s': out of memory", name);
		goto out;
	}
	if (store(ld, &L->k_b, kb, nh * R, dn, COLIBRI_T_MLA_K_B, l, name) ||
	    store(ld, &L->v_b, vb, nh * dv, R, COLIBRI_T_MLA_V_B, l, name))
		goto out;
	ret = 0;
out:
	free(kb);
	free(vb);
	return ret;
}

int hf_deepseek_attention(struct hf_loader *ld, cb_u32 l)
{
	const struct cb_model_config *c = &ld->m->cfg;
	const struct cb_mla_config *m = &c->mla;
	struct cb_layer_weights *L = &ld->m->layers[l];
	cb_u32 H = c->hidden, qd = c->n_heads * c->head_dim, Rq = m->q_lora_rank;
	char n[256];

#define DS(field, rows, cols, vec, role)					\
	do {									\
		if (hf_tensor_name(c, role, l, 0, n, sizeof(n)))		\
			return hf_fail(ld, "no Hugging Face name for %s",	\
				       cb_format_role_name(role));		\
		if (hf_load_tensor(ld, &L->field, n, rows, cols, vec, role, l))	\
			return -1;						\
	} while (0)
	if (Rq) {
		DS(q_a, Rq, H, 0, COLIBRI_T_MLA_Q_A);
		DS(q_a_norm, 1, Rq, 1, COLIBRI_T_MLA_Q_A_NORM);
		DS(q_b, qd, Rq, 0, COLIBRI_T_MLA_Q_B);
	} else {
		DS(wq, qd, H, 0, COLIBRI_T_WQ);
	}
	DS(kv_a, m->kv_lora_rank + m->qk_rope_dim, H, 0, COLIBRI_T_MLA_KV_A);
	DS(kv_a_norm, 1, m->kv_lora_rank, 1, COLIBRI_T_MLA_KV_A_NORM);
	DS(wo, H, c->n_heads * m->v_head_dim, 0, COLIBRI_T_WO);
#undef DS
	/* k_b and v_b: both cut from kv_b_proj */
	if (hf_tensor_name(c, COLIBRI_T_MLA_K_B, l, 0, n, sizeof(n)))
		return hf_fail(ld, "no Hugging Face name for k_b");
	return split_kv_b(ld, L, l, n);
}
