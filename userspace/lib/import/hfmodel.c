// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hfmodel.c - Hugging Face config.json and tensor names -> engine model.
 *
 * Tensor names are hf_names.c's (the usual ones, and each architecture's
 * own from its arch file); the config.json keys past the shared ones are
 * the arch file's too (struct cb_arch_hf_key).  GPT-OSS's fused experts:
 * hf_gpt_oss.c; MLA's attention: hf_deepseek.c; the scored routers' MoE
 * block (DeepSeek's, GLM's): hf_scored.c.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/hf_gpt_oss.h"
#include "ops/cb_ops.h"
#include "import/hf_deepseek.h"
#include "import/hf_delta.h"
#include "import/hf_experts.h"
#include "import/hf_fused.h"
#include "import/hf_names.h"
#include "import/hf_scored.h"
#include "import/hfmodel.h"
#include "quant/quant_preset.h"
#include "import/rope_scaling.h"
#include "import/safetensors.h"
#include "util/util.h"

static void seterr(struct hf_loader *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, ld->errlen, fmt, ap);
	va_end(ap);
}

static cb_u32 f32_bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

/* ---- config.json ------------------------------------------------------ */

static int jint(const cJSON *root, const char *key, long long def, long long *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	if (!v || cJSON_IsNull(v)) {
		*out = def;
		return def < 0 ? -1 : 0;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4294967295.0 ||
	    v->valuedouble != (double)(long long)v->valuedouble)
		return -1;
	*out = (long long)v->valuedouble;
	return 0;
}

static double jnum(const cJSON *root, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static int jbool(const cJSON *root, const char *key, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return def;
}

#define REQ(key, field)							\
	do {								\
		if (jint(root, key, -1, &v)) {				\
			seterr(ld, "%s/config.json: missing or bad '%s'", dir, key); \
			return -1;					\
		}							\
		c->field = (cb_u32)v;					\
	} while (0)
#define OPT(key, def, field)						\
	do {								\
		if (jint(root, key, def, &v)) {				\
			seterr(ld, "%s/config.json: bad '%s'", dir, key); \
			return -1;					\
		}							\
		c->field = (cb_u32)v;					\
	} while (0)

/*
 * The keys of @root an architecture lists (struct cb_arch_hf_key, its arch
 * file), in order, into the config.  Return: 0, or -1 with the key named.
 */
static int config_keys(struct hf_loader *ld, const char *dir, const cJSON *root,
		       const struct cb_arch_hf_key *k)
{
	struct cb_model_config *c = &ld->m->cfg;
	char first[64];
	long long v;

	for (; k->how != CB_HF_END; k++) {
		cb_u32 *f = (cb_u32 *)((char *)c + k->field);
		const char *key = k->key, *alt = key ? strchr(key, '|') : NULL;
		const cJSON *j, *it;

		if (alt) {
			/* "a|b": a where it is a good integer, else b */
			snprintf(first, sizeof(first), "%.*s", (int)(alt - key), key);
			if (!jint(root, first, -1, &v)) {
				*f = (cb_u32)v;
				continue;
			}
			key = alt + 1;
		}
		switch (k->how) {
		case CB_HF_REQ:
		case CB_HF_OPT:
			if (jint(root, key, k->how == CB_HF_REQ ? -1 : (long long)k->def, &v)) {
				seterr(ld, "%s/config.json: %sbad '%s'", dir,
				       k->how == CB_HF_REQ ? "missing or " : "", key);
				return -1;
			}
			*f = (cb_u32)v;
			break;
		case CB_HF_BOOL:
			*f = (cb_u32)jbool(root, key, (int)k->def);
			break;
		case CB_HF_F32:
			j = cJSON_GetObjectItemCaseSensitive(root, key);
			if (cJSON_IsNumber(j))
				*f = f32_bits((float)j->valuedouble);
			break;
		case CB_HF_SET:
			*f = k->def;
			break;
		case CB_HF_LAYERS:
			j = cJSON_GetObjectItemCaseSensitive(root, key);
			if (!cJSON_IsArray(j))
				break;
			cJSON_ArrayForEach(it, j) {
				cb_u64 *bits = (cb_u64 *)((char *)c + k->field);

				if (!cJSON_IsNumber(it) || it->valuedouble < 0 ||
				    it->valuedouble >= CB_MAX_LAYERS) {
					seterr(ld, "%s/config.json: bad %s", dir, key);
					return -1;
				}
				bits[it->valueint / 64] |= 1ull << (it->valueint % 64);
			}
			break;
		}
	}
	return 0;
}

/*
 * config.json's partial_rotary_factor (HF: rotary dim = int(head_dim *
 * factor), the leading dims of each head): c->rope_dim, left 0 (the whole
 * head) for a factor of 1 or none.
 */
static int partial_rope(struct hf_loader *ld, const char *dir, const cJSON *root,
			const cJSON *rp)
{
	struct cb_model_config *c = &ld->m->cfg;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "partial_rotary_factor");
	double rd;

	if (!v && rp)	/* transformers 5's rope_parameters */
		v = cJSON_GetObjectItemCaseSensitive(rp, "partial_rotary_factor");
	if (!v || cJSON_IsNull(v))
		return 0;
	rd = cJSON_IsNumber(v) ? v->valuedouble * c->head_dim : -1.0;
	if (!(rd >= 2.0 && rd <= c->head_dim) || (cb_u32)rd % 2) {
		seterr(ld, "%s/config.json: partial_rotary_factor gives %g rotated dimensions "
		       "of head_dim %u (want an even number, 2..head_dim)", dir, rd, c->head_dim);
		return -1;
	}
	c->rope_dim = (cb_u32)rd == c->head_dim ? 0 : (cb_u32)rd;
	return 0;
}

static int parse_config(struct hf_loader *ld, const char *dir, const cJSON *root)
{
	struct cb_model_config *c = &ld->m->cfg;
	const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
	const struct cb_arch_desc *desc;
	const cJSON *v2, *rp, *rt;
	const char *a;
	char why[200];
	long long v;

	arch = cJSON_IsArray(arch) ? cJSON_GetArrayItem(arch, 0) : NULL;
	if (!cJSON_IsString(arch)) {
		seterr(ld, "%s/config.json: no 'architectures' list", dir);
		return -1;
	}
	a = arch->valuestring;
	snprintf(ld->m->arch_name, sizeof(ld->m->arch_name), "%s", a);
	if (!cb_arch_by_hf_class(a)) {
		char known[512] = "";
		cb_u32 i;

		for (i = 0; i < cb_arch_count; i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 i ? ", " : "", cb_archs[i]->hf_classes[0]);
		seterr(ld, "%s/config.json: architecture '%s' is not supported (%s are)", dir, a,
		       known);
		return -1;
	}
	desc = cb_arch_by_hf_class(a);
	c->arch = desc->id;
	c->qk_norm = desc->qk_norm;
	/* a multimodal checkpoint: the text model's keys are its text_config */
	v2 = cJSON_GetObjectItemCaseSensitive(root, "text_config");
	if (cJSON_IsObject(v2))
		root = v2;
	/* transformers 5 keeps RoPE's keys in rope_parameters */
	rp = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
	rp = cJSON_IsObject(rp) ? rp : NULL;

	REQ("vocab_size", vocab_size);
	REQ("hidden_size", hidden);
	REQ("num_hidden_layers", n_layers);
	REQ("num_attention_heads", n_heads);
	OPT("num_key_value_heads", c->n_heads, n_kv_heads);
	if (!c->n_heads) {
		seterr(ld, "%s/config.json: num_attention_heads is 0", dir);
		return -1;
	}
	OPT("head_dim", c->hidden / c->n_heads, head_dim);
	OPT("max_position_embeddings", 4096, max_context);
	c->rope_theta_bits = f32_bits((float)jnum(root, "rope_theta",
						  rp ? jnum(rp, "rope_theta", 10000.0) : 10000.0));
	c->rms_eps_bits = f32_bits((float)jnum(root, "rms_norm_eps", 1e-6));
	c->tied_embeddings = jbool(root, "tie_word_embeddings", 0);
	c->rope_layout = CB_ROPE_NEOX;	/* HF checkpoints: rotate_half */
	c->decoder_sparse_step = 1;
	c->qkv_bias = jbool(root, "attention_bias", 0);

	v2 = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
	/* rope_parameters of a scaled kind (not "default") are rope_scaling's */
	rt = rp ? cJSON_GetObjectItemCaseSensitive(rp, "rope_type") : NULL;
	if ((!v2 || cJSON_IsNull(v2)) && cJSON_IsString(rt) && strcmp(rt->valuestring, "default"))
		v2 = rp;
	if (rope_scaling_from_hf(v2, c->max_context, &c->rope_scaling, why, sizeof(why))) {
		seterr(ld, "%s/%s", dir, why);
		return -1;
	}
	/* partial RoPE: the leading partial_rotary_factor of each head */
	if (partial_rope(ld, dir, root, rp))
		return -1;
	if (jbool(root, "mlp_bias", 0)) {
		seterr(ld, "%s/config.json: mlp_bias is not supported", dir);
		return -1;
	}

	/* its own keys, then the blocks of its kinds */
	if (config_keys(ld, dir, root, desc->hf_config))
		return -1;
	if (desc->ffn == CB_FFN_MOE_SHARED_GATED)
		c->shared_gate = c->shared_ffn != 0;
	if (cb_arch_uses_oss(desc))
		return hf_gpt_oss_config(root, c, dir, ld->err, ld->errlen);
	if (desc->attn == CB_ATTN_GATED_DELTA && hf_delta_config(ld, dir, root))
		return -1;
	if (desc->attn == CB_ATTN_MLA && hf_deepseek_config(ld, dir, root))
		return -1;
	if (desc->router != CB_ROUTER_SCORED && desc->attn != CB_ATTN_GATED_DELTA)
		return 0;
	/* DeepSeek's MoE keys (GLM's too); the block's fields checked together */
	if (desc->router == CB_ROUTER_SCORED && hf_scored_config(ld, dir, root))
		return -1;
	/* before any tensor: a DeltaNet size out of range is named as its key */
	if (cb_config_check(c, why, sizeof(why))) {
		seterr(ld, "%s/config.json: %s", dir, why);
		return -1;
	}
	return 0;
}

/* ---- tensors ---------------------------------------------------------- */

enum kind {
	K_VECTOR,	/* f32, shape [n] */
	K_MATRIX,	/* matrix in the type cb_quant_choose() gives its role */
};

static int load(struct hf_loader *ld, struct cb_tensor *out, const char *name,
		cb_u32 rows, cb_u32 cols, enum kind kind, cb_u32 role, cb_u32 layer)
{
	return hf_load_tensor(ld, out, name, rows, cols, kind == K_VECTOR, role, layer);
}

/* A Qwen3-Next DeltaNet layer's projections, cut from its fused tensors. */
static int fused_layer(struct hf_loader *ld, cb_u32 l)
{
	const struct cb_model_config *c = &ld->m->cfg;
	const struct cb_delta_config *d = &c->delta;
	struct cb_delta_layer *D = &ld->m->layers[l].delta;
	struct cb_tensor *out[4] = { &D->qkv, &D->z, &D->b, &D->a };
	static const cb_u32 role[4] = {
		COLIBRI_T_DELTA_QKV, COLIBRI_T_DELTA_Z, COLIBRI_T_DELTA_B, COLIBRI_T_DELTA_A
	};
	cb_u32 vd = d->v_heads * d->v_dim;
	cb_u32 rows[4] = { 2 * d->k_heads * d->k_dim + vd, vd, d->v_heads, d->v_heads };
	char n[256];
	int k;

	for (k = 0; k < 4; k++)
		if (hf_tensor_name(c, role[k], l, 0, n, sizeof(n)) ||
		    hf_fused_load(ld, out[k], n, rows[k], c->hidden, role[k], l))
			return -1;
	return 0;
}

static int load_layer(struct hf_loader *ld, cb_u32 l)
{
	struct hf_model *m = ld->m;
	const struct cb_model_config *c = &m->cfg;
	struct cb_layer_weights *L = &m->layers[l];
	cb_u32 qd = c->n_heads * c->head_dim, kvd = c->n_kv_heads * c->head_dim, x;
	cb_u32 H = c->hidden;
	char n[256];

	/* the layer's tensor of @role, by its HF name (hf_names.c) */
#define LD(field, rows, cols, kind, role)					\
	do {									\
		if (hf_tensor_name(c, role, l, 0, n, sizeof(n))) {		\
			seterr(ld, "no Hugging Face name for %s", cb_format_role_name(role)); \
			return -1;						\
		}								\
		if (load(ld, &L->field, n, rows, cols, kind, role, l))		\
			return -1;						\
	} while (0)
	LD(attn_norm, 1, H, K_VECTOR, COLIBRI_T_ATTN_NORM);
	LD(ffn_norm, 1, H, K_VECTOR, COLIBRI_T_FFN_NORM);
	if (cb_is_mla(c)) {
		if (hf_deepseek_attention(ld, l))
			return -1;
		goto mlp;
	}
	if (cb_layer_is_delta(c, l)) {
		const struct cb_delta_config *d = &c->delta;
		cb_u32 vd = d->v_heads * d->v_dim;

		if (hf_fused_role(c, COLIBRI_T_DELTA_QKV)) {
			/* Qwen3-Next: cut from in_proj_qkvz and in_proj_ba */
			if (fused_layer(ld, l))
				return -1;
			goto conv;
		}
		LD(delta.qkv, 2 * d->k_heads * d->k_dim + vd, H, K_MATRIX, COLIBRI_T_DELTA_QKV);
		LD(delta.z, vd, H, K_MATRIX, COLIBRI_T_DELTA_Z);
		LD(delta.b, d->v_heads, H, K_MATRIX, COLIBRI_T_DELTA_B);
		LD(delta.a, d->v_heads, H, K_MATRIX, COLIBRI_T_DELTA_A);
conv:
		LD(delta.conv, 2 * d->k_heads * d->k_dim + vd, d->conv_kernel, K_MATRIX,
		   COLIBRI_T_DELTA_CONV);
		LD(delta.decay, 1, d->v_heads, K_VECTOR, COLIBRI_T_DELTA_DECAY);
		LD(delta.dt_bias, 1, d->v_heads, K_VECTOR, COLIBRI_T_DELTA_DT_BIAS);
		LD(delta.norm, 1, d->v_dim, K_VECTOR, COLIBRI_T_DELTA_NORM);
		LD(delta.out, H, vd, K_MATRIX, COLIBRI_T_DELTA_OUT);
		goto mlp;
	}
	/* a gated attention's wq: per head, q then its output gate */
	LD(wq, c->delta.full_interval ? 2 * qd : qd, H, K_MATRIX, COLIBRI_T_WQ);
	LD(wk, kvd, H, K_MATRIX, COLIBRI_T_WK);
	LD(wv, kvd, H, K_MATRIX, COLIBRI_T_WV);
	LD(wo, H, qd, K_MATRIX, COLIBRI_T_WO);
	if (c->qkv_bias) {
		LD(bq, 1, qd, K_VECTOR, COLIBRI_T_BQ);
		LD(bk, 1, kvd, K_VECTOR, COLIBRI_T_BK);
		LD(bv, 1, kvd, K_VECTOR, COLIBRI_T_BV);
	}
	if (c->qk_norm == CB_QK_NORM_HEAD) {
		LD(q_norm, 1, c->head_dim, K_VECTOR, COLIBRI_T_Q_NORM);
		LD(k_norm, 1, c->head_dim, K_VECTOR, COLIBRI_T_K_NORM);
	} else if (c->qk_norm == CB_QK_NORM_FULL) {
		LD(q_norm, 1, qd, K_VECTOR, COLIBRI_T_Q_NORM);
		LD(k_norm, 1, kvd, K_VECTOR, COLIBRI_T_K_NORM);
	}
	if (cb_arch_uses_oss(cb_arch_of(c->arch))) {
		LD(oss.sinks, 1, c->n_heads, K_VECTOR, COLIBRI_T_ATTN_SINKS);
		LD(oss.bo, 1, H, K_VECTOR, COLIBRI_T_BO);
		LD(router, c->n_experts, H, K_MATRIX, COLIBRI_T_ROUTER);
		LD(oss.router_bias, 1, c->n_experts, K_VECTOR, COLIBRI_T_ROUTER_BIAS);
		return hf_gpt_oss_experts(m, &ld->q, l, ld->err, ld->errlen);
	}
mlp:
	if (!cb_layer_is_moe(c, l)) {
		LD(mlp_gate, c->dense_ffn, H, K_MATRIX, COLIBRI_T_MLP_GATE);
		LD(mlp_up, c->dense_ffn, H, K_MATRIX, COLIBRI_T_MLP_UP);
		LD(mlp_down, H, c->dense_ffn, K_MATRIX, COLIBRI_T_MLP_DOWN);
		return 0;
	}
	LD(router, c->n_experts, H, K_MATRIX, COLIBRI_T_ROUTER);
	L->experts = m->experts + (size_t)l * c->n_experts;
	for (x = 0; x < c->n_experts; x++) {
		struct cb_expert_weights *ew = &m->experts[(size_t)l * c->n_experts + x];
		static const cb_u32 role[3] = {
			COLIBRI_T_EXPERT_GATE, COLIBRI_T_EXPERT_UP, COLIBRI_T_EXPERT_DOWN
		};
		struct cb_tensor *t[3] = { &ew->gate, &ew->up, &ew->down };
		int k;

		for (k = 0; k < 3; k++) {
			const struct st_tensor *ft;
			cb_u32 rows = k == 2 ? H : c->expert_ffn, cols = k == 2 ? c->expert_ffn : H;
			uint64_t row0;
			int bad;

			if (hf_tensor_name(c, role[k], l, x, n, sizeof(n))) {
				seterr(ld, "no Hugging Face name for %s", cb_format_role_name(role[k]));
				return -1;
			}
			/* the layer's experts saved fused (transformers 5), if they are */
			ft = st_set_find(m->st, n) ? NULL :
			     hf_experts_fused(m->st, c, role[k], l, x, &row0, &bad, ld->err,
					      ld->errlen);
			if (!ft && !st_set_find(m->st, n) && bad)
				return -1;
			if (ft ? hf_experts_load(ld, t[k], ft, row0, rows, cols, role[k], l) :
				 load(ld, t[k], n, rows, cols, K_MATRIX, role[k], l))
				return -1;
		}
	}
	if (c->mla.sel_bias)
		LD(router_sel_bias, 1, c->n_experts, K_VECTOR, COLIBRI_T_ROUTER_SEL_BIAS);
	if (c->shared_ffn) {
		LD(shared_gate_proj, c->shared_ffn, H, K_MATRIX, COLIBRI_T_SHARED_GATE);
		LD(shared_up_proj, c->shared_ffn, H, K_MATRIX, COLIBRI_T_SHARED_UP);
		LD(shared_down_proj, H, c->shared_ffn, K_MATRIX, COLIBRI_T_SHARED_DOWN);
		if (c->shared_gate)
			LD(shared_expert_gate, 1, H, K_MATRIX, COLIBRI_T_SHARED_EXPERT_GATE);
	}
#undef LD
	return 0;
}

struct hf_model *hf_model_load(const char *dir, const struct cb_quant *q, char *err,
			       size_t errlen)
{
	struct hf_loader ld = { .q = { CB_PRESET_NONE, CB_QUANT_KEEP }, .err = err, .errlen = errlen };
	struct hf_model *m = calloc(1, sizeof(*m));
	char path[PATH_MAX], why[256], name[256];
	cJSON *root = NULL;
	char *txt;
	cb_u32 l;
	int r;

	if (!m) {
		snprintf(err, errlen, "%s: out of memory", dir);
		return NULL;
	}
	ld.m = m;
	if (q)
		ld.q = *q;
	if (ld.q.dtype != CB_QUANT_KEEP && (ld.q.dtype < 0 || ld.q.dtype >= CB_DT__COUNT)) {
		seterr(&ld, "bad target dtype %d", ld.q.dtype);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/config.json", dir);
	txt = cb_read_file(path, (16u << 20) - 1, NULL);
	if (!txt) {
		seterr(&ld, "%s: cannot read", path);
		goto fail;
	}
	root = cJSON_Parse(txt);
	free(txt);
	if (!cJSON_IsObject(root)) {
		seterr(&ld, "%s: not a JSON object", path);
		goto fail;
	}
	if (parse_config(&ld, dir, root))
		goto fail;
	cJSON_Delete(root);
	root = NULL;

	m->st = hf_open_tensors(dir, err, errlen);
	if (!m->st)
		goto fail;
	if (m->cfg.n_layers > CB_MAX_LAYERS || m->cfg.n_experts > CB_MAX_EXPERTS) {
		seterr(&ld, "%s: too many layers or experts", dir);
		goto fail;
	}
	m->layers = calloc(m->cfg.n_layers ? m->cfg.n_layers : 1, sizeof(*m->layers));
	m->experts = calloc((size_t)m->cfg.n_layers * m->cfg.n_experts + 1,
			    sizeof(*m->experts));
	if (!m->layers || !m->experts) {
		seterr(&ld, "%s: out of memory", dir);
		goto fail;
	}
	if (hf_tensor_name(&m->cfg, COLIBRI_T_EMBED, 0, 0, name, sizeof(name)) ||
	    load(&ld, &m->w.embed, name, m->cfg.vocab_size, m->cfg.hidden, K_MATRIX,
		 COLIBRI_T_EMBED, 0) ||
	    hf_tensor_name(&m->cfg, COLIBRI_T_FINAL_NORM, 0, 0, name, sizeof(name)) ||
	    load(&ld, &m->w.final_norm, name, 1, m->cfg.hidden, K_VECTOR,
		 COLIBRI_T_FINAL_NORM, 0))
		goto fail;
	if (!m->cfg.tied_embeddings &&
	    load(&ld, &m->w.lm_head, "lm_head.weight", m->cfg.vocab_size, m->cfg.hidden,
		 K_MATRIX, COLIBRI_T_LM_HEAD, 0))
		goto fail;
	for (l = 0; l < m->cfg.n_layers; l++)
		if (load_layer(&ld, l))
			goto fail;
	m->w.layers = m->layers;
	/* a bad config field is named (rope_scaling's, ...) */
	if (cb_config_check(&m->cfg, why, sizeof(why))) {
		seterr(&ld, "%s/config.json: %s", dir, why);
		goto fail;
	}
	r = cb_engine_check_model(&m->cfg, &m->w);
	if (r) {
		seterr(&ld, "%s: config.json and tensors are inconsistent or out of range",
		       dir);
		goto fail;
	}
	free(ld.row);
	return m;
fail:
	cJSON_Delete(root);
	free(ld.row);
	hf_model_free(m);
	return NULL;
}

int hf_config_load(const char *dir, struct cb_model_config *cfg, char *arch_name,
		   size_t arch_len, char *err, size_t errlen)
{
	struct hf_model *m = calloc(1, sizeof(*m));
	struct hf_loader ld = { .m = m, .err = err, .errlen = errlen };
	char path[PATH_MAX];
	cJSON *root;
	char *txt;
	int r = -1;

	if (!m) {
		snprintf(err, errlen, "%s: out of memory", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/config.json", dir);
	txt = cb_read_file(path, (16u << 20) - 1, NULL);
	if (!txt) {
		seterr(&ld, "%s: cannot read", path);
		goto out;
	}
	root = cJSON_Parse(txt);
	free(txt);
	if (!cJSON_IsObject(root)) {
		seterr(&ld, "%s: not a JSON object", path);
	} else if (!parse_config(&ld, dir, root)) {
		*cfg = m->cfg;
		if (arch_name && arch_len)
			snprintf(arch_name, arch_len, "%s", m->arch_name);
		r = 0;
	}
	cJSON_Delete(root);
out:
	free(m);
	return r;
}
