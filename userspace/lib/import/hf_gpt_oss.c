// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_gpt_oss.c - GptOssForCausalLM from a Hugging Face directory.
 *
 * config.json (transformers' GptOssConfig): num_local_experts,
 * num_experts_per_tok (or experts_per_token), intermediate_size (per
 * expert), sliding_window, layer_types ("sliding_attention" /
 * "full_attention", one per layer), swiglu_limit; attention_bias is
 * always on.  The sigmoid's alpha, 1.702, is a constant of the modeling
 * code.
 *
 * Tensors, the dequantized BF16 layout (what transformers saves):
 *   model.layers.N.self_attn.{q,k,v,o}_proj.{weight,bias}, self_attn.sinks
 *   model.layers.N.mlp.router.{weight,bias}
 *   model.layers.N.mlp.experts.gate_up_proj       [E, hidden, 2 * ffn]
 *   model.layers.N.mlp.experts.gate_up_proj_bias  [E, 2 * ffn]
 *   model.layers.N.mlp.experts.down_proj          [E, ffn, hidden]
 *   model.layers.N.mlp.experts.down_proj_bias     [E, hidden]
 * gate_up_proj is x @ W (in, out), gate and up interleaved by output
 * column (gate = [..., ::2], up = [..., 1::2]); the engine wants Linear
 * rows (out, in), so each expert is transposed and de-interleaved here
 * into its gate, up and down matrices, and the biases split alike.
 *
 * The original MXFP4 layout (OpenAI's checkpoints) has gate_up_proj_blocks
 * / _scales and down_proj_blocks / _scales instead of the two matrices,
 * already in (out, in) rows; a projection that has them is read by
 * hf_gpt_oss_mxfp4.c and kept mxfp4, one without them as above.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "format/cb_format.h"
#include "format/cb_role.h"
#include "ops/cb_ops.h"
#include "import/hf_gpt_oss.h"
#include "import/hf_gpt_oss_mxfp4.h"
#include "import/hf_loader.h"
#include "import/hf_slot.h"
#include "quant/quant_preset.h"
#include "import/safetensors.h"

static cb_u32 bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

int hf_gpt_oss_config(const cJSON *root, struct cb_model_config *c, const char *dir,
		      char *err, size_t errlen)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
	const cJSON *v, *it;
	cb_u32 l = 0, n;

	c->qkv_bias = 1;	/* GptOssAttention: bias=config.attention_bias, always true */
	c->norm_topk_prob = 1;	/* softmax over the top-k router logits */
	v = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > CB_MAX_CONTEXT ||
	    v->valuedouble != (double)(cb_u32)v->valuedouble) {
		snprintf(err, errlen, "%s/config.json: missing or bad 'sliding_window'", dir);
		return -1;
	}
	c->oss.sliding_window = (cb_u32)v->valuedouble;
	if (c->max_context && c->oss.sliding_window > c->max_context) {
		snprintf(err, errlen, "%s/config.json: 'sliding_window' %u is larger than the "
			 "context ('max_position_embeddings' %u)", dir, c->oss.sliding_window,
			 c->max_context);
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "swiglu_limit");
	if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e30) {
		snprintf(err, errlen, "%s/config.json: missing or bad 'swiglu_limit'", dir);
		return -1;
	}
	c->oss.swiglu_limit_bits = bits((float)v->valuedouble);
	c->oss.swiglu_alpha_bits = bits(1.702f);
	/* OpenAI's checkpoints: the experts' *_blocks / *_scales (mxfp4) */
	v = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
	if (v && !cJSON_IsNull(v)) {
		it = cJSON_GetObjectItemCaseSensitive(v, "quant_method");
		if (!cJSON_IsString(it) || strcmp(it->valuestring, "mxfp4")) {
			snprintf(err, errlen, "%s/config.json: 'quantization_config' is not "
				 "GPT-OSS's (quant_method \"mxfp4\" is the one read)", dir);
			return -1;
		}
	}
	if (!cJSON_IsArray(lt)) {
		snprintf(err, errlen, "%s/config.json: missing 'layer_types' (one of "
			 "\"sliding_attention\", \"full_attention\" per layer)", dir);
		return -1;
	}
	n = (cb_u32)cJSON_GetArraySize(lt);
	if (n != c->n_layers) {
		snprintf(err, errlen, "%s/config.json: 'layer_types' has %u entries, "
			 "'num_hidden_layers' is %u", dir, n, c->n_layers);
		return -1;
	}
	cJSON_ArrayForEach(it, lt) {
		if (cJSON_IsString(it) && !strcmp(it->valuestring, "sliding_attention")) {
			c->oss.sliding_layers[l / 32] |= 1u << (l % 32);
		} else if (!cJSON_IsString(it) || strcmp(it->valuestring, "full_attention")) {
			snprintf(err, errlen, "%s/config.json: 'layer_types'[%u] is neither "
				 "\"sliding_attention\" nor \"full_attention\"", dir, l);
			return -1;
		}
		l++;
	}
	return 0;
}

/* A tensor of @st with exactly this shape, or an error naming it. */
static const struct st_tensor *find_in(const struct st_set *st, const char *name, int ndim,
				       const uint64_t *shape, char *err, size_t errlen)
{
	const struct st_tensor *t = hf_find_tensor(st, name, err, errlen);

	return t && !hf_check_shape(t, name, ndim, shape, err, errlen) ? t : NULL;
}

/* The same, its stored values checked (FP8 codes). */
static const struct st_tensor *find(const struct hf_model *m, const char *name, int ndim,
				    const uint64_t *shape, char *err, size_t errlen)
{
	const struct st_tensor *t = find_in(m->st, name, ndim, shape, err, errlen);

	return t && !st_check_values(t, err, errlen) ? t : NULL;
}

/* Memory the model frees with itself. */
static void *owned(struct hf_model *m, size_t n)
{
	size_t sz = n ? (n + 63) / 64 * 64 : 64;
	void *p = aligned_alloc(64, sz);

	if (p && hf_model_own(m, p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* An f32 [rows, cols] tensor of @src (rows * cols values) in the type its role gets. */
static int matrix(struct hf_model *m, const struct cb_quant *q, struct cb_tensor *out,
		  const float *src, cb_u32 rows, cb_u32 cols, cb_u32 role, cb_u32 layer,
		  int src_dt, const char *name, char *err, size_t errlen)
{
	int dt = cb_quant_choose(q, &m->cfg, role, layer, cols, src_dt);
	cb_u64 rb = cb_dtype_row_bytes(dt, cols), r;
	char *dst = owned(m, rb * rows);
	cb_s64 bad;

	if (!dst) {
		snprintf(err, errlen, "tensor '%s': out of memory", name);
		return -1;
	}
	for (r = 0; r < rows; r++)
		cb_quantize_row(dt, dst + r * rb, src + r * cols, (int)cols);
	bad = cb_quant_find_bad_scale((cb_u32)dt, dst, rb * rows / cb_dtype_info(dt)->block_bytes);
	if (bad >= 0) {
		snprintf(err, errlen, "tensor '%s': quantized to %s, block %lld has a scale that "
			 "is not finite (weights too large for the type)", name, cb_dtype_name(dt),
			 (long long)bad);
		return -1;
	}
	out->data = dst;
	out->dtype = (cb_u32)dt;
	out->rows = rows;
	out->cols = cols;
	return 0;
}

static float *f32_copy(struct hf_model *m, const struct st_tensor *t, struct cb_tensor *out,
		       cb_u32 rows, cb_u32 cols)
{
	float *p = owned(m, (size_t)rows * cols * sizeof(float));

	if (!p)
		return NULL;
	st_to_f32(p, t, 0, (uint64_t)rows * cols);
	out->data = p;
	out->dtype = CB_DT_F32;
	out->rows = rows;
	out->cols = cols;
	return p;
}

/*
 * Expert @x's matrix of @role (EXPERT_GATE, _UP, _DOWN) from the
 * dequantized layout of its fused projection @t, [E, in, out] (x @ W):
 * transposed to Linear rows (out, in) and, for gate and up, de-interleaved
 * by output column (gate = [..., ::2], up = [..., 1::2]), as f32 into
 * @dst.  Reads one row of @t at a time.  0, or -1 without memory.
 */
static int expert_dense(const struct cb_model_config *c, const struct st_tensor *t, cb_u32 x,
			cb_u32 role, float *dst)
{
	int fused = role != COLIBRI_T_EXPERT_DOWN, up = role == COLIBRI_T_EXPERT_UP;
	cb_u32 F = c->expert_ffn, H = c->hidden, i, j;
	size_t in = fused ? H : F, out = fused ? 2 * (size_t)F : H;
	float *row = malloc(out * sizeof(float));

	if (!row)
		return -1;
	for (i = 0; i < in; i++) {
		st_to_f32(row, t, ((uint64_t)x * in + i) * out, out);
		if (fused)	/* [H, 2F] -> [F, H] */
			for (j = 0; j < F; j++)
				dst[(size_t)j * H + i] = row[2 * (size_t)j + up];
		else		/* [F, H] -> down [H, F] */
			for (j = 0; j < H; j++)
				dst[(size_t)j * F + i] = row[j];
	}
	free(row);
	return 0;
}

/* Layer @l's experts' matrices of one fused projection @t (@fused: gate_up_proj). */
static int dense_proj(struct hf_model *m, const struct cb_quant *q, cb_u32 l, int fused,
		      const struct st_tensor *t, const char *name, char *err, size_t errlen)
{
	static const cb_u32 gate_up[2] = { COLIBRI_T_EXPERT_GATE, COLIBRI_T_EXPERT_UP };
	const struct cb_model_config *c = &m->cfg;
	cb_u32 E = c->n_experts, F = c->expert_ffn, H = c->hidden, x;
	float *g = malloc((size_t)F * H * sizeof(float));
	int r = -1, k;

	if (!g) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	m->layers[l].experts = m->experts + (size_t)l * E;
	for (x = 0; x < E; x++) {
		struct cb_expert_weights *ew = &m->experts[(size_t)l * E + x];
		struct cb_tensor *out[2] = { fused ? &ew->gate : &ew->down, &ew->up };

		for (k = 0; k < (fused ? 2 : 1); k++) {
			cb_u32 role = fused ? gate_up[k] : COLIBRI_T_EXPERT_DOWN;

			if (expert_dense(c, t, x, role, g)) {
				snprintf(err, errlen, "%s: out of memory", name);
				goto out;
			}
			if (matrix(m, q, out[k], g, fused ? F : H, fused ? H : F, role, l,
				   st_keep_dtype(t), name, err, errlen))
				goto out;
		}
	}
	r = 0;
out:
	free(g);
	return r;
}

/* One fused projection in whichever layout the checkpoint has it. */
static int proj(struct hf_model *m, const struct cb_quant *q, cb_u32 l, int fused,
		char *err, size_t errlen)
{
	const struct cb_model_config *c = &m->cfg;
	cb_u32 F = c->expert_ffn, H = c->hidden;
	uint64_t shape[3] = { c->n_experts, fused ? H : F, fused ? 2ull * F : H };
	const struct st_tensor *t;
	char n[160];

	snprintf(n, sizeof(n), "model.layers.%u.mlp.experts.%s", l,
		 fused ? "gate_up_proj" : "down_proj");
	if (hf_gpt_oss_has_mxfp4(m->st, n))
		return hf_gpt_oss_mxfp4_proj(m, n, l, fused, err, errlen);
	if (!st_set_find(m->st, n)) {
		snprintf(err, errlen, "tensor '%s' is missing (and so are its MXFP4 '%s_blocks' "
			 "and '%s_scales')", n, n, n);
		return -1;
	}
	t = find(m, n, 3, shape, err, errlen);
	return t ? dense_proj(m, q, l, fused, t, n, err, errlen) : -1;
}

int hf_gpt_oss_experts(struct hf_model *m, const struct cb_quant *q, cb_u32 l,
		       char *err, size_t errlen)
{
	const struct cb_model_config *c = &m->cfg;
	struct cb_layer_weights *L = &m->layers[l];
	cb_u32 E = c->n_experts, F = c->expert_ffn, H = c->hidden, x, j;
	const struct st_tensor *gub, *dnb;
	uint64_t s_gub[2] = { E, 2ull * F }, s_dnb[2] = { E, H };
	char n[2][160];
	float *slab, *gb, *ub;

	/* the biases, bf16 or f32 in both layouts */
	snprintf(n[0], sizeof(n[0]), "model.layers.%u.mlp.experts.gate_up_proj_bias", l);
	snprintf(n[1], sizeof(n[1]), "model.layers.%u.mlp.experts.down_proj_bias", l);
	gub = find(m, n[0], 2, s_gub, err, errlen);
	dnb = gub ? find(m, n[1], 2, s_dnb, err, errlen) : NULL;
	if (!dnb)
		return -1;

	/* gate and up de-interleaved into [E, F] each; down as is */
	gb = owned(m, (size_t)E * F * sizeof(float));
	ub = owned(m, (size_t)E * F * sizeof(float));
	slab = malloc((size_t)E * 2 * F * sizeof(float));
	if (!gb || !ub || !slab || !f32_copy(m, dnb, &L->oss.down_bias, E, H)) {
		free(slab);
		snprintf(err, errlen, "%s: out of memory", n[0]);
		return -1;
	}
	st_to_f32(slab, gub, 0, (uint64_t)E * 2 * F);
	for (x = 0; x < E; x++)
		for (j = 0; j < F; j++) {
			gb[(size_t)x * F + j] = slab[(size_t)x * 2 * F + 2 * j];
			ub[(size_t)x * F + j] = slab[(size_t)x * 2 * F + 2 * j + 1];
		}
	free(slab);
	L->oss.gate_bias = (struct cb_tensor){ gb, CB_DT_F32, E, F, 0 };
	L->oss.up_bias = (struct cb_tensor){ ub, CB_DT_F32, E, F, 0 };

	return proj(m, q, l, 1, err, errlen) || proj(m, q, l, 0, err, errlen) ? -1 : 0;
}

/* ---- one slot at a time (hf_slot.h), for the converter ------------------ */

/* The fused projection a matrix role is cut from: gate_up_proj or down_proj. */
static void proj_name(char *n, size_t len, cb_u32 layer, cb_u32 role)
{
	snprintf(n, len, "model.layers.%u.mlp.experts.%s", layer,
		 role == COLIBRI_T_EXPERT_DOWN || role == COLIBRI_T_EXPERT_DOWN_BIAS ?
		 "down_proj" : "gate_up_proj");
}

int hf_gpt_oss_slot(const struct st_set *st, const struct cb_model_config *c,
		    const struct cb_format_slot *s, struct hf_slot_src *src, char *err,
		    size_t errlen)
{
	cb_u32 E = c->n_experts, F = c->expert_ffn, H = c->hidden;
	int down = s->role == COLIBRI_T_EXPERT_DOWN || s->role == COLIBRI_T_EXPERT_DOWN_BIAS;
	uint64_t shape[3];
	char n[192], b[200];

	proj_name(n, sizeof(n), s->layer, s->role);
	switch (s->role) {
	case COLIBRI_T_EXPERT_GATE_BIAS:
	case COLIBRI_T_EXPERT_UP_BIAS:
	case COLIBRI_T_EXPERT_DOWN_BIAS:
		/* [E, 2F] (gate and up interleaved) or [E, H] */
		shape[0] = E;
		shape[1] = down ? H : 2ull * F;
		snprintf(b, sizeof(b), "%s_bias", n);
		src->t = find_in(st, b, 2, shape, err, errlen);
		src->keep_dt = CB_DT_F32;
		break;
	case COLIBRI_T_EXPERT_GATE:
	case COLIBRI_T_EXPERT_UP:
	case COLIBRI_T_EXPERT_DOWN:
		if (hf_gpt_oss_has_mxfp4(st, n)) {
			if (hf_gpt_oss_mxfp4_find(st, c, n, !down, &src->t, &src->scales,
						  err, errlen))
				return -1;
			src->raw_dt = CB_DT_MXFP4;
			src->made = 1;
			src->made_bytes = cb_dtype_row_bytes(CB_DT_MXFP4, s->cols) * s->rows;
			return 0;
		}
		if (!st_set_find(st, n)) {
			snprintf(err, errlen, "tensor '%s' is missing (and so are its MXFP4 "
				 "'%s_blocks' and '%s_scales')", n, n, n);
			return -1;
		}
		/* [E, in, out]: x @ W */
		shape[0] = E;
		shape[1] = down ? F : H;
		shape[2] = down ? H : 2ull * F;
		src->t = find_in(st, n, 3, shape, err, errlen);
		if (src->t)
			src->keep_dt = st_keep_dtype(src->t);
		break;
	default:
		return 1;
	}
	if (!src->t)
		return -1;
	src->made = 1;
	src->made_bytes = (uint64_t)s->rows * s->cols * sizeof(float);
	return 0;
}

int hf_gpt_oss_slot_fill(const struct cb_model_config *c, const struct cb_format_slot *s,
			 const struct hf_slot_src *src, void *buf, char *err, size_t errlen)
{
	cb_u32 E = c->n_experts, F = c->expert_ffn, x, j;
	int up = s->role == COLIBRI_T_EXPERT_UP_BIAS;
	float *dst = buf, *row;

	if (src->raw_dt == CB_DT_MXFP4)
		return hf_gpt_oss_mxfp4_expert(c, src->t, src->scales, s->expert, s->role, buf,
					       err, errlen);
	/*
	 * the fused tensor's values, checked once: with its first expert's
	 * slot, or with the biases' own (a layer's, one slot each)
	 */
	if ((s->expert == 0 || cb_role_scope(s->role) != CB_ROLE_EXPERT) &&
	    st_check_values(src->t, err, errlen))
		return -1;
	switch (s->role) {
	case COLIBRI_T_EXPERT_GATE_BIAS:
	case COLIBRI_T_EXPERT_UP_BIAS:
		row = malloc(2 * (size_t)F * sizeof(float));
		if (!row)
			break;
		for (x = 0; x < E; x++) {
			st_to_f32(row, src->t, (uint64_t)x * 2 * F, 2ull * F);
			for (j = 0; j < F; j++)
				dst[(size_t)x * F + j] = row[2 * (size_t)j + up];
		}
		free(row);
		return 0;
	case COLIBRI_T_EXPERT_DOWN_BIAS:
		st_to_f32(dst, src->t, 0, (uint64_t)s->rows * s->cols);
		return 0;
	default:
		if (!expert_dense(c, src->t, s->expert, s->role, dst))
			return 0;
	}
	snprintf(err, errlen, "%s: out of memory", src->t->name);
	return -1;
}
