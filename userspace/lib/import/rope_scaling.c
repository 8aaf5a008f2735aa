// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * rope_scaling.c - RoPE scaling from HF config.json and from GGUF metadata.
 *
 * HF (transformers' modeling_rope_utils.py, rope_type "yarn"): factor;
 * original_max_position_embeddings (default max_position_embeddings);
 * beta_fast 32 and beta_slow 1 (HF's "or" defaults: 0 means the default);
 * mscale 1, mscale_all_dim 0; truncate true; attention_factor when given
 * replaces the computed factor.  The factor is used as written: when
 * original_max_position_embeddings is given, recent transformers versions
 * substitute max_position_embeddings / original for it; the two agree for
 * the published YaRN models (GPT-OSS 131072 / 4096 = 32, DeepSeek-V3
 * 163840 / 4096 = 40), and vLLM, llama.cpp and DeepSeek's own code use
 * the factor.
 *
 * GGUF (llama.cpp): rope.scaling.type "yarn", rope.scaling.factor,
 * rope.scaling.original_context_length (default context_length),
 * rope.scaling.yarn_beta_fast / yarn_beta_slow (32 / 1), and
 * rope.scaling.yarn_log_multiplier, which llama.cpp's deepseek2 converter
 * writes as 0.1 * mscale_all_dim (its configs have mscale ==
 * mscale_all_dim): both are taken as multiplier / 0.1, which gives a cos/sin
 * factor of 1 and the softmax multiplier m(factor, mscale_all_dim)^2, as
 * llama.cpp computes.  llama.cpp always floors/ceils the correction range,
 * so GGUF models get "truncate".
 */
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "import/gguf.h"
#include "import/rope_scaling.h"

static cb_u32 bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

static void yarn_defaults(struct cb_rope_scaling *r, cb_u32 max_context)
{
	memset(r, 0, sizeof(*r));
	r->kind = CB_ROPE_SCALING_YARN;
	r->orig_context = max_context;
	r->beta_fast_bits = bits(32.0f);
	r->beta_slow_bits = bits(1.0f);
	r->mscale_bits = bits(1.0f);
	r->flags = CB_ROPE_F_TRUNCATE;
}

/* rs[key] as a number: 1 and *out when given, 0 when absent or null, -1 if not a number */
static int hf_num(const cJSON *rs, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(rs, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return -1;
	*out = v->valuedouble;
	return 1;
}

#define HF_ERR(...) (snprintf(err, errlen, "config.json: rope_scaling: " __VA_ARGS__), -1)

int rope_scaling_from_hf(const struct cJSON *rs, cb_u32 max_context,
			 struct cb_rope_scaling *out, char *err, size_t errlen)
{
	const cJSON *type, *tr;
	double x;
	int r;

	memset(out, 0, sizeof(*out));
	if (!rs || cJSON_IsNull(rs))
		return 0;
	if (!cJSON_IsObject(rs))
		return HF_ERR("not an object");
	type = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
	if (!type || cJSON_IsNull(type))
		type = cJSON_GetObjectItemCaseSensitive(rs, "type");
	if (!cJSON_IsString(type))
		return HF_ERR("no \"rope_type\" (or \"type\") string");
	if (!strcmp(type->valuestring, "default"))
		return 0;		/* HF: plain RoPE */
	if (strcmp(type->valuestring, "yarn"))
		return HF_ERR("type '%.40s' is not supported (yarn is)", type->valuestring);

	yarn_defaults(out, max_context);
	if (hf_num(rs, "factor", &x) != 1)
		return HF_ERR("yarn needs a numeric \"factor\"");
	out->factor_bits = bits((float)x);
	r = hf_num(rs, "original_max_position_embeddings", &x);
	if (r < 0 || (r && (x < 1 || x > 4294967295.0 || x != (double)(cb_u32)x)))
		return HF_ERR("original_max_position_embeddings is not a positive integer");
	if (r)
		out->orig_context = (cb_u32)x;
	/* HF: config.get("beta_fast") or 32: 0 (or null) is the default too */
	r = hf_num(rs, "beta_fast", &x);
	if (r < 0)
		return HF_ERR("beta_fast is not a number");
	if (r && x != 0)
		out->beta_fast_bits = bits((float)x);
	r = hf_num(rs, "beta_slow", &x);
	if (r < 0)
		return HF_ERR("beta_slow is not a number");
	if (r && x != 0)
		out->beta_slow_bits = bits((float)x);
	r = hf_num(rs, "mscale", &x);
	if (r < 0)
		return HF_ERR("mscale is not a number");
	if (r)
		out->mscale_bits = bits((float)x);
	r = hf_num(rs, "mscale_all_dim", &x);
	if (r < 0)
		return HF_ERR("mscale_all_dim is not a number");
	if (r)
		out->mscale_all_dim_bits = bits((float)x);
	r = hf_num(rs, "attention_factor", &x);
	if (r < 0)
		return HF_ERR("attention_factor is not a number");
	if (r) {
		out->mscale_bits = bits((float)x);
		out->flags |= CB_ROPE_F_ATTN_FACTOR;
	}
	tr = cJSON_GetObjectItemCaseSensitive(rs, "truncate");
	if (tr && !cJSON_IsNull(tr)) {
		if (!cJSON_IsBool(tr))
			return HF_ERR("truncate is not a boolean");
		if (cJSON_IsFalse(tr))
			out->flags &= ~CB_ROPE_F_TRUNCATE;
	}
	return 0;
}

#define GG_ERR(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* ARCH.rope.scaling.SUFFIX as f32: 1 given, 0 absent, -1 (message) otherwise */
static int gg_f32(const struct gguf_file *gf, const char *arch, const char *suffix, float *out,
		  char *err, size_t errlen)
{
	char key[160];
	int r;

	snprintf(key, sizeof(key), "%s.rope.scaling.%s", arch, suffix);
	r = gguf_get_f32(gf, key, out);
	if (r == -1)
		return 0;
	if (r || *out != *out)
		return GG_ERR("metadata '%s' is not a number", key);
	return 1;
}

int rope_scaling_from_gguf(const struct gguf_file *gf, const char *arch, cb_u32 max_context,
			   struct cb_rope_scaling *out, char *err, size_t errlen)
{
	struct gguf_str s;
	char key[160];
	uint64_t v;
	float f;
	int r;

	memset(out, 0, sizeof(*out));
	snprintf(key, sizeof(key), "%s.rope.scaling.type", arch);
	if (gguf_get_str(gf, key, &s) || (s.n == 4 && !memcmp(s.p, "none", 4)))
		return 0;
	if (!(s.n == 4 && !memcmp(s.p, "yarn", 4)))
		return GG_ERR("RoPE scaling '%.*s' (%s) is not supported (yarn is)",
			      (int)(s.n > 32 ? 32 : s.n), s.p, key);
	yarn_defaults(out, max_context);
	r = gg_f32(gf, arch, "factor", &f, err, errlen);
	if (r <= 0)
		return r ? r : GG_ERR("YaRN without %s.rope.scaling.factor", arch);
	out->factor_bits = bits(f);
	snprintf(key, sizeof(key), "%s.rope.scaling.original_context_length", arch);
	r = gguf_get_uint(gf, key, &v);
	if (r != -1) {
		if (r || !v || v > 0xffffffffu)
			return GG_ERR("metadata '%s' is not a positive integer in range", key);
		out->orig_context = (cb_u32)v;
	}
	r = gg_f32(gf, arch, "yarn_beta_fast", &f, err, errlen);
	if (r < 0)
		return r;
	if (r)
		out->beta_fast_bits = bits(f);
	r = gg_f32(gf, arch, "yarn_beta_slow", &f, err, errlen);
	if (r < 0)
		return r;
	if (r)
		out->beta_slow_bits = bits(f);
	r = gg_f32(gf, arch, "yarn_log_multiplier", &f, err, errlen);
	if (r < 0)
		return r;
	if (r && f != 0.0f) {
		out->mscale_bits = bits((float)((double)f / 0.1));
		out->mscale_all_dim_bits = out->mscale_bits;
	}
	return 0;
}
