// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_model.c - a GGUF file (llama.cpp's names and metadata keys) as an
 * engine config + tensor table, and its tokenizer as a tokenizer.json.
 *
 * Tensor names:
 *   token_embd, output_norm, output (absent when tied)
 *   blk.N.attn_norm, attn_q, attn_k, attn_v, attn_output (+ .bias),
 *   attn_q_norm, attn_k_norm, ffn_norm,
 *   dense:   ffn_gate, ffn_up, ffn_down
 *   experts: ffn_gate_inp (router), ffn_{gate,up,down}_exps (stacked
 *            [E, rows, cols]) or ffn_{gate,up,down}.E (older Mixtral files),
 *            ffn_{gate,up,down}_shexp and ffn_gate_inp_shexp (Qwen2-MoE)
 * GGUF lists dimensions fastest first: ne = {cols, rows, experts}.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cb_ops.h"
#include "gguf.h"
#include "tokenizer.h"

struct gloader {
	struct gguf_model *m;
	const struct gguf_file *gf;
	const char *arch;		/* general.architecture, NUL-terminated */
	char *err;
	size_t errlen;
};

static void seterr(struct gloader *ld, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(ld->err, ld->errlen, "%s: ", ld->gf->path);
	if (n < 0 || (size_t)n >= ld->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(ld->err + n, ld->errlen - n, fmt, ap);
	va_end(ap);
}

static cb_u32 f32_bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

/* ---- metadata ---------------------------------------------------------- */

/* ARCH.suffix as an unsigned integer that fits u32; def when absent. */
static int meta_u32(struct gloader *ld, const char *suffix, long long def, cb_u32 *out)
{
	char key[128];
	uint64_t v;
	int r;

	snprintf(key, sizeof(key), "%s.%s", ld->arch, suffix);
	r = gguf_get_uint(ld->gf, key, &v);
	if (r == -1) {
		if (def < 0) {
			seterr(ld, "metadata '%s' is missing", key);
			return -1;
		}
		*out = (cb_u32)def;
		return 0;
	}
	if (r || v > 0xffffffffu) {
		seterr(ld, "metadata '%s' is not an integer in range", key);
		return -1;
	}
	*out = (cb_u32)v;
	return 0;
}

static int meta_f32(struct gloader *ld, const char *suffix, float def, float *out)
{
	char key[128];
	int r;

	snprintf(key, sizeof(key), "%s.%s", ld->arch, suffix);
	r = gguf_get_f32(ld->gf, key, out);
	if (r == -1) {
		*out = def;
		return 0;
	}
	if (r || !(*out == *out)) {
		seterr(ld, "metadata '%s' is not a number", key);
		return -1;
	}
	return 0;
}

static const struct gguf_tensor *tfind(struct gloader *ld, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return gguf_find_tensor(ld->gf, name);
}

static int parse_config(struct gloader *ld)
{
	struct cb_model_config *c = &ld->m->hf.cfg;
	const struct gguf_file *gf = ld->gf;
	const struct gguf_tensor *t;
	struct gguf_str s;
	cb_u32 kl, vl, rd, ctx, gating;
	float theta, eps, clamp, scale;
	char key[128];
	int r, b;

	if (!strcmp(ld->arch, "llama")) {
		c->arch = CB_ARCH_LLAMA;
		c->rope_layout = CB_ROPE_INTERLEAVED;	/* q/k were permuted */
		c->norm_topk_prob = 1;			/* Mixtral */
	} else if (!strcmp(ld->arch, "qwen2moe")) {
		c->arch = CB_ARCH_QWEN2_MOE;
		c->rope_layout = CB_ROPE_NEOX;
	} else if (!strcmp(ld->arch, "qwen3moe")) {
		c->arch = CB_ARCH_QWEN3_MOE;
		c->rope_layout = CB_ROPE_NEOX;
		c->qk_norm = CB_QK_NORM_HEAD;
		c->norm_topk_prob = 1;
	} else if (!strcmp(ld->arch, "olmoe")) {
		c->arch = CB_ARCH_OLMOE;
		c->rope_layout = CB_ROPE_NEOX;
		c->qk_norm = CB_QK_NORM_FULL;
	} else {
		seterr(ld, "architecture '%s' is not supported (llama, qwen2moe, qwen3moe and "
		       "olmoe are)", ld->arch);
		return -1;
	}

	if (meta_u32(ld, "embedding_length", -1, &c->hidden) ||
	    meta_u32(ld, "block_count", -1, &c->n_layers) ||
	    meta_u32(ld, "attention.head_count", -1, &c->n_heads) ||
	    meta_u32(ld, "attention.head_count_kv", c->n_heads, &c->n_kv_heads) ||
	    meta_u32(ld, "context_length", 4096, &ctx) ||
	    meta_u32(ld, "expert_count", 0, &c->n_experts) ||
	    meta_u32(ld, "expert_used_count", 0, &c->top_k) ||
	    meta_u32(ld, "expert_gating_func", 1, &gating))
		return -1;
	if (!c->n_heads || !c->hidden || !c->n_layers) {
		seterr(ld, "embedding_length, block_count and attention.head_count must be "
		       "non-zero");
		return -1;
	}
	if (c->n_layers > CB_MAX_LAYERS || c->n_experts > CB_MAX_EXPERTS) {
		seterr(ld, "%u layers / %u experts exceed the engine's limits (%d / %d)",
		       c->n_layers, c->n_experts, CB_MAX_LAYERS, CB_MAX_EXPERTS);
		return -1;
	}
	if (gating != 1) {
		seterr(ld, "%s.expert_gating_func %u is not supported (only softmax, 1)",
		       ld->arch, gating);
		return -1;
	}
	c->max_context = ctx;
	if (meta_u32(ld, "attention.key_length", c->hidden / c->n_heads, &kl) ||
	    meta_u32(ld, "attention.value_length", kl, &vl) ||
	    meta_u32(ld, "rope.dimension_count", kl, &rd))
		return -1;
	if (vl != kl || rd != kl) {
		seterr(ld, "key_length %u, value_length %u and rope.dimension_count %u differ "
		       "(partial rotary or asymmetric heads are not supported)", kl, vl, rd);
		return -1;
	}
	c->head_dim = kl;
	/* the engine's limits, checked here so that no product below wraps */
	if (c->n_heads > 1024 || !c->n_kv_heads || c->n_heads % c->n_kv_heads ||
	    !c->head_dim || c->head_dim > 1024 || c->head_dim % 2 || c->hidden > (1u << 20)) {
		seterr(ld, "attention shape out of range (embedding_length %u, head_count %u, "
		       "head_count_kv %u, key_length %u)", c->hidden, c->n_heads, c->n_kv_heads,
		       c->head_dim);
		return -1;
	}
	if (meta_f32(ld, "rope.freq_base", 10000.0f, &theta) ||
	    meta_f32(ld, "rope.scale_linear", 1.0f, &scale) ||
	    meta_f32(ld, "attention.layer_norm_rms_epsilon", 1e-5f, &eps) ||
	    meta_f32(ld, "attention.clamp_kqv", 0.0f, &clamp))
		return -1;
	if (scale != 1.0f) {
		seterr(ld, "linear RoPE scaling (%s.rope.scale_linear) is not supported", ld->arch);
		return -1;
	}
	c->rope_theta_bits = f32_bits(theta);
	c->rms_eps_bits = f32_bits(eps);
	if (clamp > 0.0f)
		c->clip_qkv_bits = f32_bits(clamp);
	snprintf(key, sizeof(key), "%s.rope.scaling.type", ld->arch);
	if (!gguf_get_str(gf, key, &s) && !(s.n == 4 && !memcmp(s.p, "none", 4))) {
		seterr(ld, "RoPE scaling '%.*s' is not supported", (int)(s.n > 32 ? 32 : s.n),
		       s.p);
		return -1;
	}
	if (gguf_find_tensor(gf, "rope_freqs.weight")) {
		seterr(ld, "rope_freqs.weight (Llama-3 RoPE frequency factors) is not supported");
		return -1;
	}
	snprintf(key, sizeof(key), "%s.expert_weights_norm", ld->arch);
	r = gguf_get_bool(gf, key, &b);
	if (r == -2) {
		seterr(ld, "metadata '%s' is not a bool", key);
		return -1;
	}
	if (!r)
		c->norm_topk_prob = (cb_u32)b;
	if (c->arch == CB_ARCH_LLAMA && c->n_experts)
		c->arch = CB_ARCH_MIXTRAL;
	if (c->n_experts && (!c->top_k || c->top_k > c->n_experts || c->top_k > CB_MAX_TOP_K)) {
		seterr(ld, "expert_used_count %u is out of range (1..%u)", c->top_k,
		       c->n_experts < CB_MAX_TOP_K ? c->n_experts : CB_MAX_TOP_K);
		return -1;
	}
	if (!c->n_experts)
		c->top_k = c->norm_topk_prob = 0;	/* a dense model has no routing */
	c->decoder_sparse_step = 1;
	c->qkv_bias = tfind(ld, "blk.0.attn_q.bias") != NULL;
	c->tied_embeddings = !gguf_find_tensor(gf, "output.weight");
	t = gguf_find_tensor(gf, "token_embd.weight");
	if (!t) {
		seterr(ld, "tensor 'token_embd.weight' is missing");
		return -1;
	}
	if (t->n_dims != 2 || t->ne[1] > 0xffffffffu) {
		seterr(ld, "tensor 'token_embd.weight' is not a matrix");
		return -1;
	}
	c->vocab_size = (cb_u32)t->ne[1];
	if (c->vocab_size > (1u << 24)) {
		seterr(ld, "vocabulary of %u tokens exceeds the engine's limit", c->vocab_size);
		return -1;
	}
	return 0;
}

/* ---- tensors ----------------------------------------------------------- */

static int ggml_to_cb(uint32_t type)
{
	switch (type) {
	case GGUF_TT_F32: return CB_DT_F32;
	case GGUF_TT_F16: return CB_DT_F16;
	case GGUF_TT_BF16: return CB_DT_BF16;
	case GGUF_TT_Q8_0: return CB_DT_Q8_0;
	case GGUF_TT_Q4_0: return CB_DT_Q4_0;
	default: return -1;
	}
}

static void shape_str(char *buf, size_t n, const struct gguf_tensor *t)
{
	int k, o = 0;

	for (k = 0; k < (int)t->n_dims && o >= 0 && (size_t)o < n; k++)
		o += snprintf(buf + o, n - o, k ? ", %llu" : "%llu", (unsigned long long)t->ne[k]);
}

/*
 * The tensor @name as @rows x @cols (or [n_exp][rows][cols] when n_exp > 0:
 * then @out gets n_exp entries, stride @ostride bytes apart).  Vectors
 * (rows == 1 && vector) must end up f32; F16/BF16 vectors are widened.
 */
static int get(struct gloader *ld, struct cb_tensor *out, size_t ostride, const char *name,
	       cb_u32 n_exp, cb_u32 rows, cb_u32 cols, int vector)
{
	const struct gguf_tensor *t = gguf_find_tensor(ld->gf, name);
	cb_u64 want[GGUF_MAX_DIMS] = { cols, rows, n_exp ? n_exp : 1, 1 };
	cb_u64 rb, i;
	int dt, k, ok = 1;
	char sh[96];

	if (!t) {
		seterr(ld, "tensor '%s' is missing", name);
		return -1;
	}
	dt = ggml_to_cb(t->type);
	if (dt < 0) {
		seterr(ld, "%s: tensor type %s is not supported (supported: F32, F16, BF16, "
		       "Q8_0, Q4_0)", name, gguf_type_name(t->type));
		return -1;
	}
	for (k = 0; k < GGUF_MAX_DIMS; k++)
		ok &= t->ne[k] == want[k];
	if (!ok) {
		shape_str(sh, sizeof(sh), t);
		if (n_exp)
			seterr(ld, "tensor '%s': shape [%s] (GGUF order), expected [%u, %u, %u] "
			       "from the metadata", name, sh, cols, rows, n_exp);
		else
			seterr(ld, "tensor '%s': shape [%s] (GGUF order), expected [%u, %u] from "
			       "the metadata", name, sh, cols, rows);
		return -1;
	}
	rb = cb_dtype_row_bytes(dt, cols);
	if (!rb || t->nbytes != rb * rows * (n_exp ? n_exp : 1)) {
		seterr(ld, "tensor '%s': size does not match its shape", name);
		return -1;
	}
	if (vector && dt != CB_DT_F32) {
		float *v;

		if (dt != CB_DT_F16 && dt != CB_DT_BF16) {
			seterr(ld, "%s: a norm or bias stored as %s is not supported", name,
			       gguf_type_name(t->type));
			return -1;
		}
		v = malloc((size_t)cols * sizeof(float));
		if (!v || hf_model_own(&ld->m->hf, v)) {
			free(v);
			seterr(ld, "out of memory");
			return -1;
		}
		for (i = 0; i < cols; i++) {
			cb_u16 h;

			memcpy(&h, (const char *)t->data + 2 * i, 2);
			v[i] = dt == CB_DT_F16 ? cb_f16_to_f32(h) : cb_bf16_to_f32(h);
		}
		out->data = v;
		out->dtype = CB_DT_F32;
		out->rows = 1;
		out->cols = cols;
		return 0;
	}
	/* the mapping is page aligned and offsets are multiples of general.alignment */
	if ((uintptr_t)t->data % (dt == CB_DT_F32 ? 4 : 2)) {
		seterr(ld, "tensor '%s': data is not aligned to its element size "
		       "(general.alignment %u)", name, ld->gf->alignment);
		return -1;
	}
	for (i = 0; i < (n_exp ? n_exp : 1); i++) {
		struct cb_tensor *o = (struct cb_tensor *)((char *)out + i * ostride);

		o->data = (const char *)t->data + i * rows * rb;	/* expert i in place */
		o->dtype = dt;
		o->rows = rows;
		o->cols = cols;
	}
	return 0;
}

static int load_experts(struct gloader *ld, cb_u32 l, struct cb_expert_weights *ew)
{
	const struct cb_model_config *c = &ld->m->hf.cfg;
	static const char *const part[3] = { "gate", "up", "down" };
	cb_u32 H = c->hidden, F = c->expert_ffn, x;
	char n[256];
	int p;

	for (p = 0; p < 3; p++) {
		size_t field = p == 0 ? offsetof(struct cb_expert_weights, gate) :
			       p == 1 ? offsetof(struct cb_expert_weights, up) :
					offsetof(struct cb_expert_weights, down);
		cb_u32 rows = p == 2 ? H : F, cols = p == 2 ? F : H;

		snprintf(n, sizeof(n), "blk.%u.ffn_%s_exps.weight", l, part[p]);
		if (gguf_find_tensor(ld->gf, n)) {
			if (get(ld, (struct cb_tensor *)((char *)ew + field), sizeof(*ew), n,
				c->n_experts, rows, cols, 0))
				return -1;
			continue;
		}
		/* older Mixtral conversions: one tensor per expert */
		for (x = 0; x < c->n_experts; x++) {
			snprintf(n, sizeof(n), "blk.%u.ffn_%s.%u.weight", l, part[p], x);
			if (!gguf_find_tensor(ld->gf, n)) {
				seterr(ld, "tensor 'blk.%u.ffn_%s_exps.weight' (or "
				       "'blk.%u.ffn_%s.%u.weight') is missing", l, part[p], l,
				       part[p], x);
				return -1;
			}
			if (get(ld, (struct cb_tensor *)((char *)&ew[x] + field), 0, n, 0, rows,
				cols, 0))
				return -1;
		}
	}
	return 0;
}

/* Size of an expert/dense FFN from a gate tensor's shape (ne[1]). */
static int ffn_of(struct gloader *ld, const char *name, cb_u32 *out)
{
	const struct gguf_tensor *t = gguf_find_tensor(ld->gf, name);

	if (!t || t->n_dims < 2 || t->ne[1] > (1u << 20)) {
		seterr(ld, "tensor '%s' is missing or not a matrix", name);
		return -1;
	}
	*out = (cb_u32)t->ne[1];
	return 0;
}

/* Which layers route to experts, and the FFN sizes, from the tensors. */
static int scan_layers(struct gloader *ld)
{
	struct cb_model_config *c = &ld->m->hf.cfg;
	cb_u32 l, meta;
	char n[128];

	for (l = 0; l < c->n_layers; l++) {
		int moe = tfind(ld, "blk.%u.ffn_gate_inp.weight", l) != NULL;

		if (moe && !c->n_experts) {
			seterr(ld, "blk.%u.ffn_gate_inp.weight present but %s.expert_count is 0",
			       l, ld->arch);
			return -1;
		}
		if (!moe) {
			if (c->n_experts)
				c->mlp_only_layers[l / 64] |= 1ull << (l % 64);
			if (!c->dense_ffn) {
				snprintf(n, sizeof(n), "blk.%u.ffn_gate.weight", l);
				if (ffn_of(ld, n, &c->dense_ffn))
					return -1;
			}
			continue;
		}
		if (!c->expert_ffn) {
			snprintf(n, sizeof(n), "blk.%u.ffn_gate_exps.weight", l);
			if (!gguf_find_tensor(ld->gf, n))
				snprintf(n, sizeof(n), "blk.%u.ffn_gate.0.weight", l);
			if (ffn_of(ld, n, &c->expert_ffn))
				return -1;
		}
		if (!c->shared_ffn && tfind(ld, "blk.%u.ffn_gate_shexp.weight", l)) {
			snprintf(n, sizeof(n), "blk.%u.ffn_gate_shexp.weight", l);
			if (ffn_of(ld, n, &c->shared_ffn))
				return -1;
			c->shared_gate = tfind(ld, "blk.%u.ffn_gate_inp_shexp.weight", l) != NULL;
		}
	}
	if (c->n_experts && !c->expert_ffn) {
		seterr(ld, "%s.expert_count is %u but no layer has experts (ffn_gate_inp)",
		       ld->arch, c->n_experts);
		return -1;
	}
	/* cross-check the sizes the metadata states, where it states them */
	if (c->expert_ffn) {
		const char *k = c->arch == CB_ARCH_QWEN2_MOE || c->arch == CB_ARCH_QWEN3_MOE ?
				"expert_feed_forward_length" : "feed_forward_length";

		if (meta_u32(ld, k, c->expert_ffn, &meta))
			return -1;
		if (meta != c->expert_ffn) {
			seterr(ld, "%s.%s is %u but the expert tensors have %u rows", ld->arch, k,
			       meta, c->expert_ffn);
			return -1;
		}
	}
	if (c->shared_ffn) {
		if (meta_u32(ld, "expert_shared_feed_forward_length", c->shared_ffn, &meta))
			return -1;
		if (meta != c->shared_ffn) {
			seterr(ld, "%s.expert_shared_feed_forward_length is %u but the shared expert "
			       "tensors have %u rows", ld->arch, meta, c->shared_ffn);
			return -1;
		}
	}
	return 0;
}

static int load_layer(struct gloader *ld, cb_u32 l)
{
	struct hf_model *m = &ld->m->hf;
	const struct cb_model_config *c = &m->cfg;
	struct cb_layer_weights *L = &m->layers[l];
	cb_u32 qd = c->n_heads * c->head_dim, kvd = c->n_kv_heads * c->head_dim;
	cb_u32 H = c->hidden;
	char n[256];

#define LD(field, suffix, rows, cols, vec)				\
	do {								\
		snprintf(n, sizeof(n), "blk.%u.%s", l, suffix);		\
		if (get(ld, &L->field, 0, n, 0, rows, cols, vec))	\
			return -1;					\
	} while (0)
	LD(attn_norm, "attn_norm.weight", 1, H, 1);
	LD(ffn_norm, "ffn_norm.weight", 1, H, 1);
	LD(wq, "attn_q.weight", qd, H, 0);
	LD(wk, "attn_k.weight", kvd, H, 0);
	LD(wv, "attn_v.weight", kvd, H, 0);
	LD(wo, "attn_output.weight", H, qd, 0);
	if (c->qkv_bias) {
		LD(bq, "attn_q.bias", 1, qd, 1);
		LD(bk, "attn_k.bias", 1, kvd, 1);
		LD(bv, "attn_v.bias", 1, kvd, 1);
	}
	if (c->qk_norm == CB_QK_NORM_HEAD) {
		LD(q_norm, "attn_q_norm.weight", 1, c->head_dim, 1);
		LD(k_norm, "attn_k_norm.weight", 1, c->head_dim, 1);
	} else if (c->qk_norm == CB_QK_NORM_FULL) {
		LD(q_norm, "attn_q_norm.weight", 1, qd, 1);
		LD(k_norm, "attn_k_norm.weight", 1, kvd, 1);
	}
	if (!cb_layer_is_moe(c, l)) {
		LD(mlp_gate, "ffn_gate.weight", c->dense_ffn, H, 0);
		LD(mlp_up, "ffn_up.weight", c->dense_ffn, H, 0);
		LD(mlp_down, "ffn_down.weight", H, c->dense_ffn, 0);
		return 0;
	}
	LD(router, "ffn_gate_inp.weight", c->n_experts, H, 0);
	L->experts = m->experts + (size_t)l * c->n_experts;
	if (load_experts(ld, l, m->experts + (size_t)l * c->n_experts))
		return -1;
	if (c->shared_ffn) {
		LD(shared_gate_proj, "ffn_gate_shexp.weight", c->shared_ffn, H, 0);
		LD(shared_up_proj, "ffn_up_shexp.weight", c->shared_ffn, H, 0);
		LD(shared_down_proj, "ffn_down_shexp.weight", H, c->shared_ffn, 0);
		if (c->shared_gate) {
			const struct gguf_tensor *t;

			/* HF [1, hidden]; GGUF writes it as ne {hidden} or {hidden, 1} */
			snprintf(n, sizeof(n), "blk.%u.ffn_gate_inp_shexp.weight", l);
			t = gguf_find_tensor(ld->gf, n);
			if (get(ld, &L->shared_expert_gate, 0, n, 0, 1, H,
				t && t->type != GGUF_TT_F32 && t->type != GGUF_TT_F16 &&
				t->type != GGUF_TT_BF16 ? 0 : 1))
				return -1;
		}
	}
#undef LD
	return 0;
}

void gguf_model_free(struct gguf_model *m)
{
	if (!m)
		return;
	hf_model_release(&m->hf);
	gguf_close(m->gf);
	free(m);
}

struct gguf_model *gguf_model_load(const char *path, char *err, size_t errlen)
{
	struct gguf_model *m = calloc(1, sizeof(*m));
	struct gloader ld = { .m = m, .err = err, .errlen = errlen };
	struct hf_model *h;
	char archbuf[64];
	struct gguf_str s;
	cb_u32 l;

	if (!m) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	h = &m->hf;
	m->gf = gguf_open(path, err, errlen);
	if (!m->gf)
		goto fail;
	ld.gf = m->gf;
	if (gguf_get_str(m->gf, "general.architecture", &s) || !s.n || s.n >= sizeof(archbuf) ||
	    memchr(s.p, 0, s.n)) {
		seterr(&ld, "metadata 'general.architecture' is missing or not a short string");
		goto fail;
	}
	memcpy(archbuf, s.p, s.n);
	archbuf[s.n] = 0;
	ld.arch = archbuf;
	snprintf(h->arch_name, sizeof(h->arch_name), "%s", archbuf);
	if (parse_config(&ld) || scan_layers(&ld))
		goto fail;
	h->layers = calloc(h->cfg.n_layers, sizeof(*h->layers));
	h->experts = calloc((size_t)h->cfg.n_layers * h->cfg.n_experts + 1, sizeof(*h->experts));
	if (!h->layers || !h->experts) {
		seterr(&ld, "out of memory");
		goto fail;
	}
	if (get(&ld, &h->w.embed, 0, "token_embd.weight", 0, h->cfg.vocab_size, h->cfg.hidden,
		0) ||
	    get(&ld, &h->w.final_norm, 0, "output_norm.weight", 0, 1, h->cfg.hidden, 1))
		goto fail;
	if (!h->cfg.tied_embeddings &&
	    get(&ld, &h->w.lm_head, 0, "output.weight", 0, h->cfg.vocab_size, h->cfg.hidden, 0))
		goto fail;
	for (l = 0; l < h->cfg.n_layers; l++)
		if (load_layer(&ld, l))
			goto fail;
	h->w.layers = h->layers;
	if (cb_engine_check_model(&h->cfg, &h->w)) {
		seterr(&ld, "metadata and tensors are inconsistent or out of the engine's range");
		goto fail;
	}
	return m;
fail:
	gguf_model_free(m);
	return NULL;
}

/* ---- tokenizer ----------------------------------------------------------- */

/* llama.cpp token types (tokenizer.ggml.token_type). */
enum {
	TT_NORMAL = 1,
	TT_UNKNOWN = 2,
	TT_CONTROL = 3,
	TT_USER_DEFINED = 4,
	TT_UNUSED = 5,
	TT_BYTE = 6,
};

/*
 * Pre-tokenizer regexes of the tokenizer.ggml.pre values we know, as the
 * matching Hugging Face tokenizer.json files write them.
 */
static const struct {
	const char *pre;
	const char *regex;
	int nfc;		/* NFC normalizer (Qwen2's tokenizer.json has one) */
	int ignore_merges;	/* Llama 3's BPE looks whole words up first */
} pretoks[] = {
	{ "qwen2",
	  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
	  "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 1, 0 },
	{ "llama-bpe",
	  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}"
	  "\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 0, 1 },
	{ "gpt-2",
	  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	  0, 0 },
	{ "default",
	  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	  0, 0 },
	{ "olmo",
	  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	  0, 0 },
};

struct sb {
	char *p;
	size_t n, cap;
	int oom;
};

static void sb_add(struct sb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *q;

		while (cap < b->n + n + 1)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_puts(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_printf(struct sb *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A JSON string literal of raw bytes (UTF-8 is passed through). */
static void sb_jstr(struct sb *b, const char *s, size_t n)
{
	size_t i, run = 0;

	sb_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		sb_add(b, s + run, i - run);
		run = i + 1;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };

			sb_add(b, e, 2);
		} else {
			sb_printf(b, "\\u%04x", c);
		}
	}
	sb_add(b, s + run, n - run);
	sb_add(b, "\"", 1);
}

/* String -> first id, open addressing over the token array. */
struct tokmap {
	const struct gguf_str *tok;
	int64_t *slot;
	size_t mask;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static int tokmap_init(struct tokmap *m, const struct gguf_str *tok, uint64_t n)
{
	size_t cap = 16, i;

	while (cap < 2 * n)
		cap *= 2;
	m->tok = tok;
	m->mask = cap - 1;
	m->slot = malloc(cap * sizeof(*m->slot));
	if (!m->slot)
		return -1;
	for (i = 0; i < cap; i++)
		m->slot[i] = -1;
	return 0;
}

static int64_t tokmap_get(const struct tokmap *m, const char *p, size_t n)
{
	size_t h = hash_bytes(p, n) & m->mask;

	for (; m->slot[h] >= 0; h = (h + 1) & m->mask) {
		const struct gguf_str *t = &m->tok[m->slot[h]];

		if (t->n == n && !memcmp(t->p, p, n))
			return m->slot[h];
	}
	return -1;
}

/* Insert id unless its string is already present: 1 if inserted. */
static int tokmap_put(struct tokmap *m, int64_t id)
{
	const struct gguf_str *t = &m->tok[id];
	size_t h = hash_bytes(t->p, t->n) & m->mask;

	for (; m->slot[h] >= 0; h = (h + 1) & m->mask) {
		const struct gguf_str *u = &m->tok[m->slot[h]];

		if (u->n == t->n && !memcmp(u->p, t->p, t->n))
			return 0;
	}
	m->slot[h] = id;
	return 1;
}

struct merge {
	float score;
	uint32_t piece, l, r;
};

static int cmp_merge(const void *a, const void *b)
{
	const struct merge *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;	/* higher score first */
	if (x->piece != y->piece)
		return x->piece < y->piece ? -1 : 1;	/* stable: piece order */
	if (x->l != y->l)
		return x->l < y->l ? -1 : 1;
	return x->r < y->r ? -1 : x->r > y->r;
}

/*
 * SentencePiece BPE -> merges, the way Hugging Face's converter derives them:
 * every split of every piece into two pieces of the vocabulary is a merge,
 * ranked by the score of the piece it makes (highest first), then by the ids
 * of its left and right parts.  Splits fall on code point boundaries.
 */
static int sp_merges(struct sb *b, const struct gguf_str *tok, uint64_t n, const float *score,
		     const struct tokmap *map)
{
	struct merge *mg = NULL, *q;
	size_t nm = 0, cap = 0, i;
	uint64_t id;

	for (id = 0; id < n; id++) {
		const char *p = tok[id].p;
		size_t len = tok[id].n, k;

		for (k = 1; k < len; k++) {
			int64_t l, r;

			if (((unsigned char)p[k] & 0xc0) == 0x80)
				continue;	/* inside a code point */
			l = tokmap_get(map, p, k);
			if (l < 0)
				continue;
			r = tokmap_get(map, p + k, len - k);
			if (r < 0)
				continue;
			if (nm == cap) {
				cap = cap ? 2 * cap : 65536;
				q = realloc(mg, cap * sizeof(*mg));
				if (!q) {
					free(mg);
					return -1;
				}
				mg = q;
			}
			mg[nm++] = (struct merge){ score[id], (uint32_t)id, (uint32_t)l, (uint32_t)r };
		}
	}
	qsort(mg, nm, sizeof(*mg), cmp_merge);
	for (i = 0; i < nm; i++) {
		sb_puts(b, i ? ",[" : "[");
		sb_jstr(b, tok[mg[i].l].p, tok[mg[i].l].n);
		sb_add(b, ",", 1);
		sb_jstr(b, tok[mg[i].r].p, tok[mg[i].r].n);
		sb_add(b, "]", 1);
	}
	free(mg);
	return 0;
}

struct tokmeta {
	struct gguf_str model, pre;
	struct gguf_str *tok;
	uint64_t n;
	int32_t *type;
	float *score;
	const struct gguf_kv *merges;
	int64_t bos, eos, unk;
	int add_bos, add_eos, add_space;
};

static void tokmeta_free(struct tokmeta *t)
{
	free(t->tok);
	free(t->type);
	free(t->score);
}

static int64_t tok_id(const struct gguf_file *f, const char *key, uint64_t n)
{
	uint64_t v;

	if (gguf_get_uint(f, key, &v) || v >= n)
		return -1;
	return (int64_t)v;
}

static int tokmeta_read(const struct gguf_file *f, struct tokmeta *t, char *err, size_t errlen)
{
	const struct gguf_kv *kv;
	uint64_t i;
	int v;

	memset(t, 0, sizeof(*t));
	if (gguf_get_str(f, "tokenizer.ggml.model", &t->model)) {
		snprintf(err, errlen, "%s: no tokenizer (metadata 'tokenizer.ggml.model')", f->path);
		return -1;
	}
	kv = gguf_find_kv(f, "tokenizer.ggml.tokens");
	t->tok = gguf_str_array(kv);
	if (!t->tok) {
		snprintf(err, errlen, "%s: metadata 'tokenizer.ggml.tokens' is missing or not an "
			 "array of strings", f->path);
		return -1;
	}
	t->n = kv->arr_n;
	if (!t->n || t->n > (1u << 24)) {
		snprintf(err, errlen, "%s: tokenizer has %llu tokens", f->path,
			 (unsigned long long)t->n);
		return -1;
	}
	for (i = 0; i < t->n; i++)
		if (!t->tok[i].n || memchr(t->tok[i].p, 0, t->tok[i].n)) {
			snprintf(err, errlen, "%s: token %llu is empty or contains a NUL byte",
				 f->path, (unsigned long long)i);
			return -1;
		}
	t->type = malloc(t->n * sizeof(*t->type));
	t->score = calloc(t->n, sizeof(*t->score));
	if (!t->type || !t->score) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		return -1;
	}
	kv = gguf_find_kv(f, "tokenizer.ggml.token_type");
	if (kv && (kv->type != GGUF_VT_ARRAY || kv->arr_n != t->n ||
		   kv->arr_type == GGUF_VT_STRING || kv->arr_type == GGUF_VT_F32 ||
		   kv->arr_type == GGUF_VT_F64)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.token_type is not an integer array of "
			 "one entry per token", f->path);
		return -1;
	}
	for (i = 0; i < t->n; i++)
		t->type[i] = kv ? (int32_t)gguf_arr_int(kv, i) : TT_NORMAL;
	kv = gguf_find_kv(f, "tokenizer.ggml.scores");
	if (kv && (kv->type != GGUF_VT_ARRAY || kv->arr_n != t->n ||
		   kv->arr_type == GGUF_VT_STRING)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.scores is not a number array of one "
			 "entry per token", f->path);
		return -1;
	}
	for (i = 0; kv && i < t->n; i++)
		t->score[i] = (float)gguf_arr_num(kv, i);
	t->merges = gguf_find_kv(f, "tokenizer.ggml.merges");
	if (t->merges && (t->merges->type != GGUF_VT_ARRAY ||
			  t->merges->arr_type != GGUF_VT_STRING)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.merges is not an array of strings",
			 f->path);
		return -1;
	}
	if (gguf_get_str(f, "tokenizer.ggml.pre", &t->pre))
		t->pre.n = 0;
	t->bos = tok_id(f, "tokenizer.ggml.bos_token_id", t->n);
	t->eos = tok_id(f, "tokenizer.ggml.eos_token_id", t->n);
	t->unk = tok_id(f, "tokenizer.ggml.unknown_token_id", t->n);
	t->add_space = 1;
	t->add_bos = -1;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &v))
		t->add_bos = v;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_eos_token", &v))
		t->add_eos = v;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_space_prefix", &v))
		t->add_space = v;
	return 0;
}

/*
 * llama.cpp's converter fills the ids between the tokenizer's vocabulary and
 * the model's embedding rows with "[PAD<id>]" tokens (typed user-defined by
 * newer versions).  They are not added tokens of the original tokenizer:
 * keep them out of added_tokens so that the text "[PAD123]" is not matched.
 */
static int is_pad_filler(const struct gguf_str *s, uint64_t id)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "[PAD%llu]", (unsigned long long)id);

	return n > 0 && s->n == (uint64_t)n && !memcmp(s->p, buf, (size_t)n);
}

static void special_tmpl(struct sb *b, const struct tokmeta *t)
{
	int first = 1;
	int64_t id[2] = { t->add_bos > 0 ? t->bos : -1, t->add_eos > 0 ? t->eos : -1 };
	int k;

	sb_puts(b, "{\"type\":\"TemplateProcessing\",\"single\":[");
	if (id[0] >= 0) {
		sb_puts(b, "{\"SpecialToken\":{\"id\":");
		sb_jstr(b, t->tok[id[0]].p, t->tok[id[0]].n);
		sb_puts(b, ",\"type_id\":0}},");
	}
	sb_puts(b, "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}");
	if (id[1] >= 0) {
		sb_puts(b, ",{\"SpecialToken\":{\"id\":");
		sb_jstr(b, t->tok[id[1]].p, t->tok[id[1]].n);
		sb_puts(b, ",\"type_id\":0}}");
	}
	sb_puts(b, "],\"pair\":[{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
		"{\"Sequence\":{\"id\":\"B\",\"type_id\":1}}],\"special_tokens\":{");
	for (k = 0; k < 2; k++) {
		if (id[k] < 0 || (k == 1 && id[1] == id[0]))
			continue;
		if (!first)
			sb_add(b, ",", 1);
		first = 0;
		sb_jstr(b, t->tok[id[k]].p, t->tok[id[k]].n);
		sb_puts(b, ":{\"id\":");
		sb_jstr(b, t->tok[id[k]].p, t->tok[id[k]].n);
		sb_printf(b, ",\"ids\":[%lld],\"tokens\":[", (long long)id[k]);
		sb_jstr(b, t->tok[id[k]].p, t->tok[id[k]].n);
		sb_puts(b, "]}");
	}
	sb_puts(b, "}}");
}

char *gguf_tokenizer_json(const struct gguf_file *f, size_t *len, char *err, size_t errlen)
{
	struct tokmeta t;
	struct tokmap map = { 0 };
	struct sb b = { 0 };
	int gpt2, first = 1;
	size_t pi = 0;
	uint64_t i;

	if (tokmeta_read(f, &t, err, errlen))
		goto fail;
	gpt2 = t.model.n == 4 && !memcmp(t.model.p, "gpt2", 4);
	if (!gpt2 && !(t.model.n == 5 && !memcmp(t.model.p, "llama", 5))) {
		snprintf(err, errlen, "%s: tokenizer model '%.*s' is not supported (gpt2 and "
			 "llama are)", f->path, (int)(t.model.n > 32 ? 32 : t.model.n), t.model.p);
		goto fail;
	}
	if (gpt2) {
		if (!t.pre.n) {
			t.pre.p = "default";
			t.pre.n = 7;
		}
		for (pi = 0; pi < sizeof(pretoks) / sizeof(pretoks[0]); pi++)
			if (strlen(pretoks[pi].pre) == t.pre.n &&
			    !memcmp(pretoks[pi].pre, t.pre.p, t.pre.n))
				break;
		if (pi == sizeof(pretoks) / sizeof(pretoks[0])) {
			snprintf(err, errlen, "%s: pre-tokenizer '%.*s' (tokenizer.ggml.pre) is not "
				 "supported (qwen2, llama-bpe, gpt-2, olmo, default are)", f->path,
				 (int)(t.pre.n > 32 ? 32 : t.pre.n), t.pre.p);
			goto fail;
		}
		if (!t.merges) {
			snprintf(err, errlen, "%s: gpt2 tokenizer without tokenizer.ggml.merges",
				 f->path);
			goto fail;
		}
	}
	if (tokmap_init(&map, t.tok, t.n)) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}

	sb_puts(&b, "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[");
	for (i = 0; i < t.n; i++) {
		if (t.type[i] != TT_CONTROL && t.type[i] != TT_USER_DEFINED &&
		    t.type[i] != TT_UNKNOWN)
			continue;
		if (is_pad_filler(&t.tok[i], i))
			continue;
		sb_printf(&b, "%s{\"id\":%llu,\"content\":", first ? "" : ",", (unsigned long long)i);
		first = 0;
		sb_jstr(&b, t.tok[i].p, t.tok[i].n);
		sb_printf(&b, ",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
			  "\"normalized\":false,\"special\":%s}",
			  t.type[i] == TT_USER_DEFINED ? "false" : "true");
	}
	sb_puts(&b, "],");
	if (gpt2) {
		sb_puts(&b, pretoks[pi].nfc ? "\"normalizer\":{\"type\":\"NFC\"}," :
			"\"normalizer\":null,");
		sb_puts(&b, "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
			"{\"type\":\"Split\",\"pattern\":{\"Regex\":");
		sb_jstr(&b, pretoks[pi].regex, strlen(pretoks[pi].regex));
		sb_puts(&b, "},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":"
			"\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,"
			"\"use_regex\":false}]},\"post_processor\":");
		if (t.add_bos > 0 || t.add_eos > 0)
			special_tmpl(&b, &t);
		else
			sb_puts(&b, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
				"\"trim_offsets\":false,\"use_regex\":false}");
		sb_puts(&b, ",\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
			"\"trim_offsets\":false,\"use_regex\":false},\"model\":{\"type\":\"BPE\","
			"\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":\"\","
			"\"end_of_word_suffix\":\"\",\"fuse_unk\":false,\"byte_fallback\":false,");
		sb_printf(&b, "\"ignore_merges\":%s,", pretoks[pi].ignore_merges ? "true" : "false");
	} else {
		if (t.add_bos < 0)
			t.add_bos = 1;	/* llama.cpp's default for SentencePiece */
		sb_puts(&b, "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[");
		if (t.add_space)
			sb_puts(&b, "{\"type\":\"Prepend\",\"prepend\":\"\u2581\"},");
		sb_puts(&b, "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":"
			"\"\u2581\"}]},\"pre_tokenizer\":null,\"post_processor\":");
		special_tmpl(&b, &t);
		sb_puts(&b, ",\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\","
			"\"pattern\":{\"String\":\"\u2581\"},\"content\":\" \"},{\"type\":"
			"\"ByteFallback\"},{\"type\":\"Fuse\"}");
		if (t.add_space)
			sb_puts(&b, ",{\"type\":\"Strip\",\"content\":\" \",\"start\":1,\"stop\":0}");
		sb_puts(&b, "]},\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":");
		if (t.unk >= 0)
			sb_jstr(&b, t.tok[t.unk].p, t.tok[t.unk].n);
		else
			sb_puts(&b, "null");
		sb_puts(&b, ",\"continuing_subword_prefix\":null,\"end_of_word_suffix\":null,"
			"\"fuse_unk\":true,\"byte_fallback\":true,\"ignore_merges\":false,");
	}
	/* the vocabulary: every token, first id wins for duplicate strings */
	sb_puts(&b, "\"vocab\":{");
	first = 1;
	for (i = 0; i < t.n; i++) {
		if (!tokmap_put(&map, (int64_t)i))
			continue;
		if (!first)
			sb_add(&b, ",", 1);
		first = 0;
		sb_jstr(&b, t.tok[i].p, t.tok[i].n);
		sb_printf(&b, ":%llu", (unsigned long long)i);
	}
	sb_puts(&b, "},\"merges\":[");
	if (gpt2) {
		struct gguf_str *mg = gguf_str_array(t.merges);

		if (!mg) {
			snprintf(err, errlen, "%s: out of memory", f->path);
			goto fail;
		}
		for (i = 0; i < t.merges->arr_n; i++) {
			if (i)
				sb_add(&b, ",", 1);
			sb_jstr(&b, mg[i].p, mg[i].n);
		}
		free(mg);
	} else if (sp_merges(&b, t.tok, t.n, t.score, &map)) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}
	sb_puts(&b, "]}}");
	if (b.oom) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}
	free(map.slot);
	tokmeta_free(&t);
	*len = b.n;
	return b.p;
fail:
	free(map.slot);
	tokmeta_free(&t);
	free(b.p);
	return NULL;
}

char *gguf_tokenizer_config_json(const struct gguf_file *f, size_t *len, char *err,
				 size_t errlen)
{
	struct tokmeta t;
	struct sb b = { 0 };
	int sp;

	if (tokmeta_read(f, &t, err, errlen)) {
		tokmeta_free(&t);
		return NULL;
	}
	sp = t.model.n == 5 && !memcmp(t.model.p, "llama", 5);
	if (t.add_bos < 0)
		t.add_bos = sp;
	sb_puts(&b, "{");
	if (t.bos >= 0) {
		sb_puts(&b, "\"bos_token\":");
		sb_jstr(&b, t.tok[t.bos].p, t.tok[t.bos].n);
		sb_puts(&b, ",");
	}
	if (t.eos >= 0) {
		sb_puts(&b, "\"eos_token\":");
		sb_jstr(&b, t.tok[t.eos].p, t.tok[t.eos].n);
		sb_puts(&b, ",");
	}
	sb_printf(&b, "\"add_bos_token\":%s,\"add_eos_token\":%s}",
		  t.add_bos > 0 && t.bos >= 0 ? "true" : "false",
		  t.add_eos > 0 && t.eos >= 0 ? "true" : "false");
	tokmeta_free(&t);
	if (b.oom) {
		free(b.p);
		snprintf(err, errlen, "%s: out of memory", f->path);
		return NULL;
	}
	*len = b.n;
	return b.p;
}

struct cb_tokenizer *gguf_tokenizer_load(const struct gguf_file *f, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;
	char *js, *cfg, terr[256];
	size_t n, cn;
	uint64_t id;

	js = gguf_tokenizer_json(f, &n, err, errlen);
	if (!js)
		return NULL;
	cfg = gguf_tokenizer_config_json(f, &cn, err, errlen);
	if (!cfg) {
		free(js);
		return NULL;
	}
	tok = cb_tok_load(js, n, terr, sizeof(terr));
	free(js);
	if (!tok)
		snprintf(err, errlen, "%s: tokenizer from the GGUF metadata: %s", f->path, terr);
	if (tok) {
		cb_tok_apply_config(tok, cfg, cn);
		/* ids, not strings: two tokens may share a string */
		if (!gguf_get_uint(f, "tokenizer.ggml.bos_token_id", &id) &&
		    id < cb_tok_vocab_size(tok))
			cb_tok_set_bos_id(tok, (int32_t)id);
		if (!gguf_get_uint(f, "tokenizer.ggml.eos_token_id", &id) &&
		    id < cb_tok_vocab_size(tok))
			cb_tok_set_eos_id(tok, (int32_t)id);
	}
	free(cfg);
	return tok;
}
