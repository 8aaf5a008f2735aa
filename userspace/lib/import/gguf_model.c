// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_model.c - a GGUF file (llama.cpp's names and metadata keys) as an
 * engine config + tensor table (its tokenizer: gguf_tokenizer.c).
 *
 * Tensor names:
 *   token_embd, output_norm, output (absent when tied)
 *   blk.N.attn_norm, attn_q, attn_k, attn_v, attn_output (+ .bias),
 *   attn_q_norm, attn_k_norm, ffn_norm,
 *   dense:   ffn_gate, ffn_up, ffn_down
 *   experts: ffn_gate_inp (router), ffn_{gate,up,down}_exps (stacked
 *            [E, rows, cols]) or ffn_{gate,up,down}.E (older Mixtral files),
 *            ffn_{gate,up,down}_shexp and ffn_gate_inp_shexp (Qwen2-MoE)
 *   gpt-oss: post_attention_norm (for ffn_norm), attn_sinks, attn_output.bias,
 *            ffn_gate_inp.bias, ffn_{gate,up,down}_exps.bias ([E, rows])
 *   glm4moe: post_attention_norm (for ffn_norm), exp_probs_b.bias (the
 *            selection bias, as deepseek2's); blk.N.nextn.* of the
 *            nextn_predict_layers after the last are not read
 * GGUF lists dimensions fastest first: ne = {cols, rows, experts}.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "ops/cb_ops.h"
#include "import/gguf.h"
#include "import/gguf_gpt_oss.h"
#include "import/gguf_deepseek.h"
#include "import/gguf_delta.h"
#include "import/gguf_loader.h"
#include "import/gguf_names.h"
#include "import/gguf_scored.h"
#include "import/rope_scaling.h"

static cb_u32 f32_bits(float f)
{
	cb_u32 u;

	memcpy(&u, &f, 4);
	return u;
}

/* ---- metadata ---------------------------------------------------------- */

/* The GGUF name of @role in layer @l of the model being read, into @buf of @len bytes. */
static const char *rname(struct gloader *ld, cb_u32 role, cb_u32 l, char *buf, size_t len)
{
	if (gguf_tensor_name(cb_arch_of(ld->m->hf.cfg.arch), role, l, buf, len))
		buf[0] = 0;
	return buf;
}

/* The tensor of @role in layer @l, or NULL. */
static const struct gguf_tensor *rfind(struct gloader *ld, cb_u32 role, cb_u32 l)
{
	char name[256];

	return gguf_find_tensor(ld->gf, rname(ld, role, l, name, sizeof(name)));
}

static int parse_config(struct gloader *ld)
{
	struct cb_model_config *c = &ld->m->hf.cfg;
	const struct gguf_file *gf = ld->gf;
	const struct cb_arch_desc *a;
	const struct gguf_tensor *t;
	cb_u32 kl, vl, rd, ctx, gating, nextn;
	float theta, eps, clamp, scale;
	char key[128];
	int r, b;

	/*
	 * The architecture its general.architecture names (llama: dense until
	 * its experts say Mixtral, below; deepseek2: V2 until its gating says
	 * V3, gguf_deepseek.c), with what its files leave unsaid: how q and k
	 * pair RoPE's dimensions (llama.cpp permuted llama's and DeepSeek's to
	 * interleaved pairs), whether the top_k weights are renormalised.
	 */
	a = cb_arch_by_gguf(ld->arch, 0);
	if (!a) {
		char known[256] = "";
		cb_u32 i;

		for (i = 0; i < cb_arch_count; i++)
			if (cb_archs[i]->gguf_arch && !strstr(known, cb_archs[i]->gguf_arch))
				snprintf(known + strlen(known), sizeof(known) - strlen(known),
					 "%s%s", *known ? ", " : "", cb_archs[i]->gguf_arch);
		gguf_ld_err(ld, "architecture '%s' is not supported (%s are)", ld->arch, known);
		return -1;
	}
	c->arch = a->id;
	c->rope_layout = a->gguf_rope;
	c->qk_norm = a->qk_norm;
	c->norm_topk_prob = a->gguf_norm_topk;

	if (gguf_ld_u32(ld, "embedding_length", -1, &c->hidden) ||
	    gguf_ld_u32(ld, "block_count", -1, &c->n_layers) ||
	    gguf_ld_u32(ld, "attention.head_count", -1, &c->n_heads) ||
	    gguf_ld_u32(ld, "attention.head_count_kv", c->n_heads, &c->n_kv_heads) ||
	    gguf_ld_u32(ld, "context_length", 4096, &ctx) ||
	    gguf_ld_u32(ld, "expert_count", 0, &c->n_experts) ||
	    gguf_ld_u32(ld, "expert_used_count", 0, &c->top_k) ||
	    gguf_ld_u32(ld, "nextn_predict_layers", 0, &nextn) ||
	    /* glm4moe's files may leave out its sigmoid: the arch's scores */
	    gguf_ld_u32(ld, "expert_gating_func",
			a->router == CB_ROUTER_SCORED && a->scored.score_func == CB_SCORE_SIGMOID ?
			2 : 1, &gating))
		return -1;
	/* block_count counts the multi-token-prediction layers after the last (not read) */
	if (nextn >= c->n_layers) {
		gguf_ld_err(ld, "%s.nextn_predict_layers %u leaves no layer of block_count %u",
			    ld->arch, nextn, c->n_layers);
		return -1;
	}
	c->n_layers -= nextn;
	if (!c->n_heads || !c->hidden || !c->n_layers) {
		gguf_ld_err(ld, "embedding_length, block_count and attention.head_count must be "
			    "non-zero");
		return -1;
	}
	if (c->n_layers > CB_MAX_LAYERS || c->n_experts > CB_MAX_EXPERTS) {
		gguf_ld_err(ld, "%u layers / %u experts exceed the engine's limits (%d / %d)",
			    c->n_layers, c->n_experts, CB_MAX_LAYERS, CB_MAX_EXPERTS);
		return -1;
	}
	/* the routers of gpt-oss, deepseek2 and glm4moe read their own, below */
	if (gating != 1 && a->router != CB_ROUTER_TOPK_SOFTMAX && a->router != CB_ROUTER_SCORED) {
		gguf_ld_err(ld, "%s.expert_gating_func %u is not supported (only softmax, 1)",
			    ld->arch, gating);
		return -1;
	}
	c->max_context = ctx;
	if (a->attn == CB_ATTN_MLA && gguf_deepseek_config(ld, &kl))
		return -1;
	if (a->router == CB_ROUTER_SCORED && c->n_experts && gguf_scored_config(ld, gating))
		return -1;
	if (a->attn == CB_ATTN_GATED_DELTA && gguf_delta_config(ld))
		return -1;
	if (cb_is_mla(c))
		goto heads;	/* MLA's head dims: gguf_deepseek_config() */
	if (gguf_ld_u32(ld, "attention.key_length", c->hidden / c->n_heads, &kl) ||
	    gguf_ld_u32(ld, "attention.value_length", kl, &vl) ||
	    gguf_ld_u32(ld, "rope.dimension_count", kl, &rd))
		return -1;
	if (vl != kl || !rd || rd > kl || rd % 2) {
		gguf_ld_err(ld, "key_length %u, value_length %u and rope.dimension_count %u: "
			    "asymmetric heads, or RoPE not on an even part of them, are not "
			    "supported", kl, vl, rd);
		return -1;
	}
	/* partial RoPE (glm4moe): the leading rd dimensions of each head */
	c->rope_dim = rd < kl ? rd : 0;
heads:
	c->head_dim = kl;
	/* the engine's limits, checked here so that no product below wraps */
	if (c->n_heads > 1024 || !c->n_kv_heads || c->n_heads % c->n_kv_heads ||
	    !c->head_dim || c->head_dim > 1024 || c->head_dim % 2 || c->hidden > (1u << 20)) {
		gguf_ld_err(ld, "attention shape out of range (embedding_length %u, head_count %u, "
			    "head_count_kv %u, key_length %u)", c->hidden, c->n_heads,
			    c->n_kv_heads, c->head_dim);
		return -1;
	}
	if (gguf_ld_f32(ld, "rope.freq_base", 10000.0f, &theta) ||
	    gguf_ld_f32(ld, "rope.scale_linear", 1.0f, &scale) ||
	    gguf_ld_f32(ld, "attention.layer_norm_rms_epsilon", 1e-5f, &eps) ||
	    gguf_ld_f32(ld, "attention.clamp_kqv", 0.0f, &clamp))
		return -1;
	if (scale != 1.0f) {
		gguf_ld_err(ld, "linear RoPE scaling (%s.rope.scale_linear) is not supported",
			    ld->arch);
		return -1;
	}
	c->rope_theta_bits = f32_bits(theta);
	c->rms_eps_bits = f32_bits(eps);
	if (clamp > 0.0f)
		c->clip_qkv_bits = f32_bits(clamp);
	if (rope_scaling_from_gguf(gf, ld->arch, c->max_context, &c->rope_scaling, key,
				   sizeof(key))) {
		gguf_ld_err(ld, "%s", key);
		return -1;
	}
	if (gguf_find_tensor(gf, "rope_freqs.weight")) {
		gguf_ld_err(ld, "rope_freqs.weight (Llama-3 RoPE frequency factors) is not "
			    "supported");
		return -1;
	}
	snprintf(key, sizeof(key), "%s.expert_weights_norm", ld->arch);
	r = gguf_get_bool(gf, key, &b);
	if (r == -2) {
		gguf_ld_err(ld, "metadata '%s' is not a bool", key);
		return -1;
	}
	if (!r)
		c->norm_topk_prob = (cb_u32)b;
	if (c->n_experts && a->ffn == CB_FFN_DENSE)
		c->arch = cb_arch_by_gguf(ld->arch, 1)->id;	/* llama with experts: Mixtral */
	if (cb_arch_uses_oss(a) && gguf_gpt_oss_config(ld->gf, c, ld->err, ld->errlen))
		return -1;
	if (c->n_experts && (!c->top_k || c->top_k > c->n_experts || c->top_k > CB_MAX_TOP_K)) {
		gguf_ld_err(ld, "expert_used_count %u is out of range (1..%u)", c->top_k,
			    c->n_experts < CB_MAX_TOP_K ? c->n_experts : CB_MAX_TOP_K);
		return -1;
	}
	if (!c->n_experts)
		c->top_k = c->norm_topk_prob = 0;	/* a dense model has no routing */
	c->decoder_sparse_step = 1;
	c->qkv_bias = rfind(ld, COLIBRI_T_BQ, 0) != NULL;
	/* per-head q/k norm where the files have it and the arch does not say (GLM-4.5) */
	if (c->qk_norm == CB_QK_NORM_NONE && !cb_is_mla(c) && rfind(ld, COLIBRI_T_Q_NORM, 0))
		c->qk_norm = CB_QK_NORM_HEAD;
	c->tied_embeddings = !rfind(ld, COLIBRI_T_LM_HEAD, 0);
	t = rfind(ld, COLIBRI_T_EMBED, 0);
	if (!t) {
		gguf_ld_err(ld, "tensor 'token_embd.weight' is missing");
		return -1;
	}
	if (t->n_dims != 2 || t->ne[1] > 0xffffffffu) {
		gguf_ld_err(ld, "tensor 'token_embd.weight' is not a matrix");
		return -1;
	}
	c->vocab_size = (cb_u32)t->ne[1];
	if (c->vocab_size > (1u << 24)) {
		gguf_ld_err(ld, "vocabulary of %u tokens exceeds the engine's limit",
			    c->vocab_size);
		return -1;
	}
	return 0;
}

/* ---- tensors ----------------------------------------------------------- */

static int load_experts(struct gloader *ld, cb_u32 l, struct cb_expert_weights *ew)
{
	const struct cb_model_config *c = &ld->m->hf.cfg;
	static const char *const part[3] = { "gate", "up", "down" };
	static const cb_u32 role[3] = {
		COLIBRI_T_EXPERT_GATE, COLIBRI_T_EXPERT_UP, COLIBRI_T_EXPERT_DOWN
	};
	cb_u32 H = c->hidden, F = c->expert_ffn, x;
	char n[256];
	int p;

	for (p = 0; p < 3; p++) {
		size_t field = p == 0 ? offsetof(struct cb_expert_weights, gate) :
			       p == 1 ? offsetof(struct cb_expert_weights, up) :
					offsetof(struct cb_expert_weights, down);
		cb_u32 rows = p == 2 ? H : F, cols = p == 2 ? F : H;

		if (gguf_find_tensor(ld->gf, rname(ld, role[p], l, n, sizeof(n)))) {
			if (gguf_ld_get(ld, (struct cb_tensor *)((char *)ew + field), sizeof(*ew),
					n, c->n_experts, rows, cols, 0))
				return -1;
			continue;
		}
		/* older Mixtral conversions: one tensor per expert */
		for (x = 0; x < c->n_experts; x++) {
			snprintf(n, sizeof(n), "blk.%u.ffn_%s.%u.weight", l, part[p], x);
			if (!gguf_find_tensor(ld->gf, n)) {
				gguf_ld_err(ld, "tensor 'blk.%u.ffn_%s_exps.weight' (or "
					    "'blk.%u.ffn_%s.%u.weight') is missing", l, part[p], l,
					    part[p], x);
				return -1;
			}
			if (gguf_ld_get(ld, (struct cb_tensor *)((char *)&ew[x] + field), 0, n, 0,
					rows, cols, 0))
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
		gguf_ld_err(ld, "tensor '%s' is missing or not a matrix", name);
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
	char n[256];

	for (l = 0; l < c->n_layers; l++) {
		int moe = rfind(ld, COLIBRI_T_ROUTER, l) != NULL;

		if (moe && !c->n_experts) {
			gguf_ld_err(ld, "blk.%u.ffn_gate_inp.weight present but %s.expert_count "
				    "is 0", l, ld->arch);
			return -1;
		}
		if (!moe) {
			if (c->n_experts)
				c->mlp_only_layers[l / 64] |= 1ull << (l % 64);
			if (!c->dense_ffn) {
				if (ffn_of(ld, rname(ld, COLIBRI_T_MLP_GATE, l, n, sizeof(n)), &c->dense_ffn))
					return -1;
			}
			continue;
		}
		if (!c->expert_ffn) {
			if (!gguf_find_tensor(ld->gf, rname(ld, COLIBRI_T_EXPERT_GATE, l, n, sizeof(n))))
				snprintf(n, sizeof(n), "blk.%u.ffn_gate.0.weight", l);
			if (ffn_of(ld, n, &c->expert_ffn))
				return -1;
		}
		if (!c->shared_ffn && rfind(ld, COLIBRI_T_SHARED_GATE, l)) {
			if (ffn_of(ld, rname(ld, COLIBRI_T_SHARED_GATE, l, n, sizeof(n)), &c->shared_ffn))
				return -1;
			c->shared_gate = rfind(ld, COLIBRI_T_SHARED_EXPERT_GATE, l) != NULL;
		}
	}
	if (c->n_experts && !c->expert_ffn) {
		gguf_ld_err(ld, "%s.expert_count is %u but no layer has experts (ffn_gate_inp)",
			    ld->arch, c->n_experts);
		return -1;
	}
	/* cross-check the sizes the metadata states, where it states them */
	if (c->expert_ffn) {
		const char *k = cb_arch_of(c->arch)->gguf_expert_ffn_key;

		if (gguf_ld_u32(ld, k, c->expert_ffn, &meta))
			return -1;
		if (meta != c->expert_ffn) {
			gguf_ld_err(ld, "%s.%s is %u but the expert tensors have %u rows",
				    ld->arch, k, meta, c->expert_ffn);
			return -1;
		}
	}
	if (c->shared_ffn) {
		if (gguf_ld_u32(ld, "expert_shared_feed_forward_length", c->shared_ffn, &meta))
			return -1;
		if (meta != c->shared_ffn) {
			gguf_ld_err(ld, "%s.expert_shared_feed_forward_length is %u but the shared "
				    "expert tensors have %u rows", ld->arch, meta, c->shared_ffn);
			return -1;
		}
	}
	return 0;
}

static int load_layer(struct gloader *ld, cb_u32 l)
{
	struct hf_model *m = &ld->m->hf;
	const struct cb_model_config *c = &m->cfg;
	const struct cb_arch_desc *a = cb_arch_of(c->arch);
	struct cb_layer_weights *L = &m->layers[l];
	cb_u32 qd = c->n_heads * c->head_dim, kvd = c->n_kv_heads * c->head_dim;
	cb_u32 H = c->hidden;
	char n[256];

#define LD(field, role, rows, cols, vec)					\
	do {									\
		if (gguf_ld_get(ld, &L->field, 0, rname(ld, role, l, n, sizeof(n)), 0, rows, cols, vec)) \
			return -1;						\
	} while (0)
	LD(attn_norm, COLIBRI_T_ATTN_NORM, 1, H, 1);
	LD(ffn_norm, COLIBRI_T_FFN_NORM, 1, H, 1);
	if (cb_is_mla(c)) {
		if (gguf_deepseek_layer(ld, l))
			return -1;
		goto ffn;
	}
	if (cb_layer_is_delta(c, l)) {
		if (gguf_delta_layer(ld, l))
			return -1;
		goto ffn;
	}
	/* a gated attention's attn_q: per head, q then its output gate */
	LD(wq, COLIBRI_T_WQ, c->delta.full_interval ? 2 * qd : qd, H, 0);
	LD(wk, COLIBRI_T_WK, kvd, H, 0);
	LD(wv, COLIBRI_T_WV, kvd, H, 0);
	LD(wo, COLIBRI_T_WO, H, qd, 0);
	if (c->qkv_bias) {
		LD(bq, COLIBRI_T_BQ, 1, qd, 1);
		LD(bk, COLIBRI_T_BK, 1, kvd, 1);
		LD(bv, COLIBRI_T_BV, 1, kvd, 1);
	}
	if (c->qk_norm == CB_QK_NORM_HEAD) {
		LD(q_norm, COLIBRI_T_Q_NORM, 1, c->head_dim, 1);
		LD(k_norm, COLIBRI_T_K_NORM, 1, c->head_dim, 1);
	} else if (c->qk_norm == CB_QK_NORM_FULL) {
		LD(q_norm, COLIBRI_T_Q_NORM, 1, qd, 1);
		LD(k_norm, COLIBRI_T_K_NORM, 1, kvd, 1);
	}
ffn:
	if (!cb_layer_is_moe(c, l)) {
		LD(mlp_gate, COLIBRI_T_MLP_GATE, c->dense_ffn, H, 0);
		LD(mlp_up, COLIBRI_T_MLP_UP, c->dense_ffn, H, 0);
		LD(mlp_down, COLIBRI_T_MLP_DOWN, H, c->dense_ffn, 0);
		return 0;
	}
	LD(router, COLIBRI_T_ROUTER, c->n_experts, H, 0);
	L->experts = m->experts + (size_t)l * c->n_experts;
	if (load_experts(ld, l, m->experts + (size_t)l * c->n_experts))
		return -1;
	if (cb_arch_uses_oss(a)) {
		/* the biases of the router and the experts: f32 [E, n] (ne {n, E}) */
		LD(oss.sinks, COLIBRI_T_ATTN_SINKS, 1, c->n_heads, 1);
		LD(oss.bo, COLIBRI_T_BO, 1, H, 1);
		LD(oss.router_bias, COLIBRI_T_ROUTER_BIAS, 1, c->n_experts, 1);
		LD(oss.gate_bias, COLIBRI_T_EXPERT_GATE_BIAS, c->n_experts, c->expert_ffn, 0);
		LD(oss.up_bias, COLIBRI_T_EXPERT_UP_BIAS, c->n_experts, c->expert_ffn, 0);
		LD(oss.down_bias, COLIBRI_T_EXPERT_DOWN_BIAS, c->n_experts, H, 0);
		if (L->oss.gate_bias.dtype || L->oss.up_bias.dtype || L->oss.down_bias.dtype) {
			gguf_ld_err(ld, "blk.%u.ffn_*_exps.bias: the expert biases must be F32", l);
			return -1;
		}
	}
	if (c->mla.sel_bias)
		LD(router_sel_bias, COLIBRI_T_ROUTER_SEL_BIAS, 1, c->n_experts, 1);
	if (c->shared_ffn) {
		LD(shared_gate_proj, COLIBRI_T_SHARED_GATE, c->shared_ffn, H, 0);
		LD(shared_up_proj, COLIBRI_T_SHARED_UP, c->shared_ffn, H, 0);
		LD(shared_down_proj, COLIBRI_T_SHARED_DOWN, H, c->shared_ffn, 0);
		if (c->shared_gate) {
			const struct gguf_tensor *t;

			/* HF [1, hidden]; GGUF writes it as ne {hidden} or {hidden, 1} */
			t = gguf_find_tensor(ld->gf, rname(ld, COLIBRI_T_SHARED_EXPERT_GATE, l, n, sizeof(n)));
			if (gguf_ld_get(ld, &L->shared_expert_gate, 0, n, 0, 1, H,
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
	char archbuf[64], why[256], n[256];
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
		gguf_ld_err(&ld, "metadata 'general.architecture' is missing or not a short "
			    "string");
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
		gguf_ld_err(&ld, "out of memory");
		goto fail;
	}
	if (gguf_ld_get(&ld, &h->w.embed, 0, rname(&ld, COLIBRI_T_EMBED, 0, n, sizeof(n)), 0,
			h->cfg.vocab_size, h->cfg.hidden, 0) ||
	    gguf_ld_get(&ld, &h->w.final_norm, 0, rname(&ld, COLIBRI_T_FINAL_NORM, 0, n, sizeof(n)), 0, 1,
			h->cfg.hidden, 1))
		goto fail;
	if (!h->cfg.tied_embeddings &&
	    gguf_ld_get(&ld, &h->w.lm_head, 0, rname(&ld, COLIBRI_T_LM_HEAD, 0, n, sizeof(n)), 0,
			h->cfg.vocab_size, h->cfg.hidden, 0))
		goto fail;
	for (l = 0; l < h->cfg.n_layers; l++)
		if (load_layer(&ld, l))
			goto fail;
	h->w.layers = h->layers;
	/* a bad config field is named (rope_scaling's, ...) */
	if (cb_config_check(&h->cfg, why, sizeof(why))) {
		gguf_ld_err(&ld, "%s", why);
		goto fail;
	}
	if (cb_engine_check_model(&h->cfg, &h->w)) {
		gguf_ld_err(&ld, "metadata and tensors are inconsistent or out of the engine's "
			    "range");
		goto fail;
	}
	return m;
fail:
	gguf_model_free(m);
	return NULL;
}
