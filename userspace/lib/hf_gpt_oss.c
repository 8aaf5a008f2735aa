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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "cb_format.h"
#include "cb_gpt_oss.h"
#include "cb_ops.h"
#include "cbfile.h"
#include "hf_gpt_oss.h"
#include "hfmodel.h"
#include "quant_preset.h"
#include "safetensors.h"

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

/* A tensor of the checkpoint with exactly this shape, or an error naming it. */
static const struct st_tensor *find(const struct hf_model *m, const char *name, int ndim,
				    const uint64_t *shape, char *err, size_t errlen)
{
	const struct st_tensor *t = st_set_find(m->st, name);
	char want[96];
	int i, k = 0;

	if (!t) {
		snprintf(err, errlen, "tensor '%s' is missing", name);
		return NULL;
	}
	for (i = 0; i < ndim; i++)
		k += snprintf(want + k, sizeof(want) - k, "%s%llu", i ? " x " : "",
			      (unsigned long long)shape[i]);
	if (t->dtype == ST_OTHER) {
		snprintf(err, errlen, "tensor '%s': dtype %s is not supported (F32, F16, BF16, "
			 "F8_E4M3, F8_E5M2 are)", name, t->dtype_name);
		return NULL;
	}
	if (st_check_values(t, err, errlen))
		return NULL;
	if (t->ndim != ndim)
		goto bad;
	for (i = 0; i < ndim; i++)
		if (t->shape[i] != shape[i])
			goto bad;
	return t;
bad:
	snprintf(err, errlen, "tensor '%s': shape does not match config.json (want %s)", name,
		 want);
	return NULL;
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


int hf_gpt_oss_experts(struct hf_model *m, const struct cb_quant *q, cb_u32 l,
		       char *err, size_t errlen)
{
	const struct cb_model_config *c = &m->cfg;
	struct cb_layer_weights *L = &m->layers[l];
	cb_u32 E = c->n_experts, F = c->expert_ffn, H = c->hidden, x, i, j;
	const struct st_tensor *gu, *gub, *dn, *dnb;
	uint64_t s_gu[3] = { E, H, 2ull * F }, s_gub[2] = { E, 2ull * F };
	uint64_t s_dn[3] = { E, F, H }, s_dnb[2] = { E, H };
	char n[4][160];
	float *slab = NULL, *g = NULL, *u = NULL, *gb, *ub;
	const float *gbsrc;
	int r = -1;

	snprintf(n[0], sizeof(n[0]), "model.layers.%u.mlp.experts.gate_up_proj", l);
	snprintf(n[1], sizeof(n[1]), "model.layers.%u.mlp.experts.gate_up_proj_bias", l);
	snprintf(n[2], sizeof(n[2]), "model.layers.%u.mlp.experts.down_proj", l);
	snprintf(n[3], sizeof(n[3]), "model.layers.%u.mlp.experts.down_proj_bias", l);
	gu = find(m, n[0], 3, s_gu, err, errlen);
	gub = gu ? find(m, n[1], 2, s_gub, err, errlen) : NULL;
	dn = gub ? find(m, n[2], 3, s_dn, err, errlen) : NULL;
	dnb = dn ? find(m, n[3], 2, s_dnb, err, errlen) : NULL;
	if (!dnb)
		return -1;

	/* biases: gate and up de-interleaved into [E, F] each; down as is */
	gb = owned(m, (size_t)E * F * sizeof(float));
	ub = owned(m, (size_t)E * F * sizeof(float));
	slab = malloc((size_t)H * 2 * F * sizeof(float));
	g = malloc((size_t)F * H * sizeof(float));
	u = malloc((size_t)F * H * sizeof(float));
	if (!gb || !ub || !slab || !g || !u || !f32_copy(m, dnb, &L->oss.down_bias, E, H)) {
		snprintf(err, errlen, "%s: out of memory", n[0]);
		goto out;
	}
	st_to_f32(slab, gub, 0, (uint64_t)E * 2 * F);
	gbsrc = slab;
	for (x = 0; x < E; x++)
		for (j = 0; j < F; j++) {
			gb[(size_t)x * F + j] = gbsrc[(size_t)x * 2 * F + 2 * j];
			ub[(size_t)x * F + j] = gbsrc[(size_t)x * 2 * F + 2 * j + 1];
		}
	L->oss.gate_bias = (struct cb_tensor){ gb, CB_DT_F32, E, F, 0 };
	L->oss.up_bias = (struct cb_tensor){ ub, CB_DT_F32, E, F, 0 };

	L->experts = m->experts + (size_t)l * E;
	for (x = 0; x < E; x++) {
		struct cb_expert_weights *ew = &m->experts[(size_t)l * E + x];

		/* [H, 2F] (in, out) -> gate, up [F, H] (out, in) */
		st_to_f32(slab, gu, (uint64_t)x * H * 2 * F, (uint64_t)H * 2 * F);
		for (i = 0; i < H; i++)
			for (j = 0; j < F; j++) {
				g[(size_t)j * H + i] = slab[(size_t)i * 2 * F + 2 * j];
				u[(size_t)j * H + i] = slab[(size_t)i * 2 * F + 2 * j + 1];
			}
		if (matrix(m, q, &ew->gate, g, F, H, COLIBRI_T_EXPERT_GATE, l, st_keep_dtype(gu), n[0],
			   err, errlen) ||
		    matrix(m, q, &ew->up, u, F, H, COLIBRI_T_EXPERT_UP, l, st_keep_dtype(gu), n[0],
			   err, errlen))
			goto out;
		/* [F, H] (in, out) -> down [H, F] */
		st_to_f32(slab, dn, (uint64_t)x * F * H, (uint64_t)F * H);
		for (i = 0; i < F; i++)
			for (j = 0; j < H; j++)
				g[(size_t)j * F + i] = slab[(size_t)i * H + j];
		if (matrix(m, q, &ew->down, g, H, F, COLIBRI_T_EXPERT_DOWN, l, st_keep_dtype(dn), n[2],
			   err, errlen))
			goto out;
	}
	r = 0;
out:
	free(slab);
	free(g);
	free(u);
	return r;
}

/* The tensor of @m a GPT-OSS slot names, or NULL. */
static const struct cb_tensor *slot_tensor(struct hf_model *m, const struct cb_format_slot *s)
{
	struct cb_layer_weights *L;
	const struct cb_tensor *t;

	switch (s->role) {
	case COLIBRI_T_EMBED: return &m->w.embed;
	case COLIBRI_T_FINAL_NORM: return &m->w.final_norm;
	case COLIBRI_T_LM_HEAD: return &m->w.lm_head;
	}
	if (s->layer >= m->cfg.n_layers)
		return NULL;
	L = &m->layers[s->layer];
	t = cb_gpt_oss_tensor(L, s->role);
	if (t)
		return t;
	switch (s->role) {
	case COLIBRI_T_ATTN_NORM: return &L->attn_norm;
	case COLIBRI_T_WQ: return &L->wq;
	case COLIBRI_T_WK: return &L->wk;
	case COLIBRI_T_WV: return &L->wv;
	case COLIBRI_T_WO: return &L->wo;
	case COLIBRI_T_BQ: return &L->bq;
	case COLIBRI_T_BK: return &L->bk;
	case COLIBRI_T_BV: return &L->bv;
	case COLIBRI_T_FFN_NORM: return &L->ffn_norm;
	case COLIBRI_T_ROUTER: return &L->router;
	}
	if (!L->experts || s->expert >= m->cfg.n_experts)
		return NULL;
	switch (s->role) {
	case COLIBRI_T_EXPERT_GATE: return &L->experts[s->expert].gate;
	case COLIBRI_T_EXPERT_UP: return &L->experts[s->expert].up;
	case COLIBRI_T_EXPERT_DOWN: return &L->experts[s->expert].down;
	}
	return NULL;
}

int hf_gpt_oss_write(const char *dir, const struct cb_quant *q, struct cbfile_writer *w,
		     char *err, size_t errlen)
{
	struct hf_model *m = hf_model_load(dir, q, err, errlen);
	const struct cb_tensor *t;
	struct cb_format_slot s;
	uint32_t i, n = cbfile_writer_count(w);
	int r = -1;

	if (!m)
		return -1;
	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(m, &s);
		if (!t || !t->data || t->rows != s.rows || t->cols != s.cols) {
			snprintf(err, errlen, "no tensor for %s (layer %d, expert %d)",
				 cb_format_role_name(s.role), (int)s.layer, (int)s.expert);
			goto out;
		}
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, t->dtype))
			goto werr;
	}
	if (cbfile_writer_layout(w))
		goto werr;
	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(m, &s);
		if (cbfile_writer_put(w, s.role, s.layer, s.expert, t->data,
				      (size_t)cb_dtype_row_bytes(t->dtype, t->cols) * t->rows))
			goto werr;
	}
	r = 0;
	goto out;
werr:
	snprintf(err, errlen, "%s", cbfile_writer_error(w));
out:
	hf_model_free(m);
	return r;
}
