// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_deepseek.c - DeepseekV2ForCausalLM / DeepseekV3ForCausalLM checkpoints.
 *
 * config.json (the fields of HF's configuration_deepseek):
 *   q_lora_rank (null: q_proj), kv_lora_rank, qk_nope_head_dim,
 *   qk_rope_head_dim, v_head_dim; n_routed_experts, num_experts_per_tok,
 *   moe_intermediate_size, n_shared_experts, first_k_dense_replace,
 *   moe_layer_freq, topk_method (greedy, group_limited_greedy, noaux_tc),
 *   n_group, topk_group, scoring_func (softmax, sigmoid), norm_topk_prob,
 *   routed_scaling_factor, intermediate_size (dense layers).
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "ops/cb_ops.h"
#include "import/hf_deepseek.h"
#include "import/hf_names.h"
#include "import/safetensors.h"

static int fail(struct hf_loader *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, ld->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static cb_u32 bits_of(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

/*
 * A non-negative integer field below 2^32: 0 and *out, 1 if absent or null
 * (*out = def), -1 if present but not such a number.
 */
static int uint_field(const cJSON *root, const char *key, cb_u32 def, cb_u32 *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	*out = def;
	if (!v || cJSON_IsNull(v))
		return 1;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4294967295.0 ||
	    v->valuedouble != (double)(cb_u64)v->valuedouble)
		return -1;
	*out = (cb_u32)v->valuedouble;
	return 0;
}

static const char *str_field(const cJSON *root, const char *key, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	return cJSON_IsString(v) ? v->valuestring : def;
}

struct ds_fields {
	const char *key;
	cb_u32 *dst;
	int required;
	cb_u32 def;
};

/* Routing: topk_method, scoring_func, groups, weights' normalisation and scale. */
static int routing(struct hf_loader *ld, const char *dir, const cJSON *root, cb_u32 n_group,
		   cb_u32 topk_group)
{
	struct cb_model_config *c = &ld->m->cfg;
	struct cb_mla_config *m = &c->mla;
	const struct cb_arch_scored *d = &cb_arch_of(c->arch)->scored;
	const char *meth = str_field(root, "topk_method", d->hf_topk_method);
	const char *score = str_field(root, "scoring_func",
				      d->score_func == CB_SCORE_SIGMOID ? "sigmoid" : "softmax");
	const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "norm_topk_prob");
	const cJSON *rsf = cJSON_GetObjectItemCaseSensitive(root, "routed_scaling_factor");
	double scale = cJSON_IsNumber(rsf) ? rsf->valuedouble : 1.0;

	if (!strcmp(score, "sigmoid"))
		m->score_func = CB_SCORE_SIGMOID;
	else if (strcmp(score, "softmax"))
		return fail(ld, "%s/config.json: scoring_func '%s' is not supported "
			    "(softmax, sigmoid are)", dir, score);
	if (!strcmp(meth, "group_limited_greedy") || !strcmp(meth, "noaux_tc")) {
		if (topk_group > n_group)
			return fail(ld, "%s/config.json: topk_group %u above n_group %u", dir,
				    topk_group, n_group);
		if (n_group > 1) {
			m->n_group = n_group;
			m->topk_group = topk_group;
			/* V2 ranks a group by its best score, V3 by its best two */
			m->group_top = !strcmp(meth, "noaux_tc") ? 2 : 1;
		}
		m->sel_bias = !strcmp(meth, "noaux_tc");
	} else if (strcmp(meth, "greedy")) {
		return fail(ld, "%s/config.json: topk_method '%s' is not supported "
			    "(greedy, group_limited_greedy, noaux_tc are)", dir, meth);
	}
	/* HF renormalises only with top_k > 1 */
	c->norm_topk_prob = cJSON_IsTrue(norm) && c->top_k > 1;
	if (!(scale > 0.0 && scale < 1e30))
		return fail(ld, "%s/config.json: bad routed_scaling_factor", dir);
	/* V2 scales only the weights it does not renormalise; V3 always */
	if (d->scale_always || !c->norm_topk_prob)
		m->route_scale_bits = scale == 1.0 ? 0 : bits_of((float)scale);
	return 0;
}

int hf_deepseek_config(struct hf_loader *ld, const char *dir, const cJSON *root)
{
	struct cb_model_config *c = &ld->m->cfg;
	struct cb_mla_config *m = &c->mla;
	cb_u32 n_shared, first_dense, freq, n_group, topk_group, l;
	char why[CB_FORMAT_WHY_LEN];
	const struct ds_fields f[] = {
		{ "kv_lora_rank", &m->kv_lora_rank, 1, 0 },
		{ "q_lora_rank", &m->q_lora_rank, 0, 0 },
		{ "qk_nope_head_dim", &m->qk_nope_dim, 1, 0 },
		{ "qk_rope_head_dim", &m->qk_rope_dim, 1, 0 },
		{ "v_head_dim", &m->v_head_dim, 1, 0 },
		{ "intermediate_size", &c->dense_ffn, 1, 0 },
		{ "moe_intermediate_size", &c->expert_ffn, 0, 0 },
		{ "n_routed_experts", &c->n_experts, 0, 0 },
		{ "num_experts_per_tok", &c->top_k, 0, 0 },
		{ "n_shared_experts", &n_shared, 0, 0 },
		{ "first_k_dense_replace", &first_dense, 0, 0 },
		{ "moe_layer_freq", &freq, 0, 1 },
		{ "n_group", &n_group, 0, 1 },
		{ "topk_group", &topk_group, 0, 1 },
	};
	size_t i;
	int r;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		r = uint_field(root, f[i].key, f[i].def, f[i].dst);
		if (r < 0 || (r > 0 && f[i].required))
			return fail(ld, "%s/config.json: missing or bad '%s'", dir, f[i].key);
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "attention_bias")))
		return fail(ld, "%s/config.json: attention_bias is not supported", dir);
	c->qkv_bias = 0;
	/* MLA: every head has its own "kv head"; q and k heads of nope + rope */
	c->n_kv_heads = c->n_heads;
	c->head_dim = m->qk_nope_dim + m->qk_rope_dim;
	c->rope_layout = CB_ROPE_INTERLEAVED;	/* see the top of this file */
	if (!c->n_experts) {
		c->expert_ffn = c->top_k = 0;
	} else {
		if (!freq)
			return fail(ld, "%s/config.json: moe_layer_freq is 0", dir);
		c->shared_ffn = n_shared * c->expert_ffn;
		/* HF: MoE at l >= first_k_dense_replace with l % moe_layer_freq == 0 */
		for (l = 0; l < c->n_layers && l < CB_MAX_LAYERS; l++)
			if (l < first_dense || l % freq)
				c->mlp_only_layers[l / 64] |= 1ull << (l % 64);
		if (routing(ld, dir, root, n_group, topk_group))
			return -1;
	}
	if (cb_config_check(c, why, sizeof(why)))
		return fail(ld, "%s/config.json: %s", dir, why);
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
		return fail(ld, "tensor '%s': out of memory", name);
	}
	for (r = 0; r < rows; r++)
		cb_quantize_row(dt, dst + r * rb, src + r * cols, (int)cols);
	if (cb_quant_find_bad_scale((cb_u32)dt, dst, rb * rows / cb_dtype_info(dt)->block_bytes) >= 0)
		return fail(ld, "tensor '%s': quantized to %s, a block scale is not finite",
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
		return fail(ld, "tensor '%s': shape does not match config.json (want %u x %u)",
			    name, nh * (dn + dv), R);
	kb = malloc((size_t)nh * R * dn * sizeof(float));
	vb = malloc((size_t)nh * dv * R * sizeof(float));
	if (!kb || !vb || hf_deepseek_split(c, COLIBRI_T_MLA_K_B, t, kb) ||
	    hf_deepseek_split(c, COLIBRI_T_MLA_V_B, t, vb)) {
		fail(ld, "tensor '%s': out of memory", name);
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
			return fail(ld, "no Hugging Face name for %s",		\
				    cb_format_role_name(role));			\
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
		return fail(ld, "no Hugging Face name for k_b");
	return split_kv_b(ld, L, l, n);
}
