// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_deepseek.c - GGUF arch "deepseek2": DeepSeek-V2/V3 as llama.cpp
 * converts them.
 *
 * Keys (deepseek2.*): attention.q_lora_rank (absent: attn_q, V2-Lite),
 * attention.kv_lora_rank, attention.key_length / value_length (the q/k
 * and v head) and rope.dimension_count (the RoPE part); in the newer MLA
 * layout key_length / value_length describe the latent (kv_lora_rank +
 * rope, kv_lora_rank), head_count_kv is 1 and the per-head sizes are
 * key_length_mla / value_length_mla.  The routing keys are
 * gguf_scored.c's (shared with glm4moe).
 *
 * Tensors (blk.N.): attn_q | attn_q_a, attn_q_a_norm, attn_q_b;
 * attn_kv_a_mqa, attn_kv_a_norm; attn_kv_b, or (newer) attn_k_b
 * ([n_head][kv_lora_rank][qk_nope], W_uk^T per head) and attn_v_b
 * ([n_head][v_head][kv_lora_rank]): exactly the engine's k_b and v_b;
 * attn_output; exp_probs_b.bias (V3's selection bias); ffn_*_exps and
 * ffn_*_shexp as for the other MoE archs.
 *
 * llama.cpp ropes deepseek2 with its "normal" RoPE, consecutive pairs,
 * on the weights as HF stores them: the engine's interleaved layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "ops/cb_ops.h"
#include "import/gguf_deepseek.h"
#include "import/gguf_names.h"
#include "import/hf_loader.h"

int gguf_deepseek_config(struct gloader *ld, cb_u32 *head_dim)
{
	struct cb_model_config *c = &ld->m->hf.cfg;
	struct cb_mla_config *m = &c->mla;
	cb_u32 kl, vl, klm, vlm;

	if (gguf_ld_u32(ld, "attention.q_lora_rank", 0, &m->q_lora_rank) ||
	    gguf_ld_u32(ld, "attention.kv_lora_rank", -1, &m->kv_lora_rank) ||
	    gguf_ld_u32(ld, "attention.key_length", -1, &kl) ||
	    gguf_ld_u32(ld, "attention.value_length", -1, &vl) ||
	    gguf_ld_u32(ld, "attention.key_length_mla", 0, &klm) ||
	    gguf_ld_u32(ld, "attention.value_length_mla", 0, &vlm) ||
	    gguf_ld_u32(ld, "rope.dimension_count", -1, &m->qk_rope_dim))
		return -1;
	if (!m->kv_lora_rank) {
		gguf_ld_err(ld, "deepseek2.attention.kv_lora_rank is 0");
		return -1;
	}
	if (klm || vlm) {
		/* the newer layout: key/value_length are the latent's */
		if (kl != m->kv_lora_rank + m->qk_rope_dim || vl != m->kv_lora_rank ||
		    c->n_kv_heads != 1) {
			gguf_ld_err(ld, "deepseek2 MLA layout: key_length %u, value_length %u, "
				    "head_count_kv %u do not match kv_lora_rank %u + rope %u", kl, vl,
				    c->n_kv_heads, m->kv_lora_rank, m->qk_rope_dim);
			return -1;
		}
		kl = klm;
		vl = vlm;
	} else if (c->n_kv_heads != c->n_heads) {
		gguf_ld_err(ld, "deepseek2.attention.head_count_kv %u is not head_count %u",
			    c->n_kv_heads, c->n_heads);
		return -1;
	}
	if (kl <= m->qk_rope_dim) {
		gguf_ld_err(ld, "deepseek2 key_length %u is not above rope.dimension_count %u",
			    kl, m->qk_rope_dim);
		return -1;
	}
	m->qk_nope_dim = kl - m->qk_rope_dim;
	m->v_head_dim = vl;
	c->n_kv_heads = c->n_heads;
	*head_dim = kl;
	return 0;
}

/* v_b: head h's dv rows of kv_b (after its dn rows of W_uk), byte for byte */
static int v_b_of(struct gloader *ld, const struct cb_tensor *kvb, struct cb_tensor *out)
{
	const struct cb_model_config *c = &ld->m->hf.cfg;
	cb_u32 nh = c->n_heads, dn = c->mla.qk_nope_dim, dv = c->mla.v_head_dim, h;
	cb_u64 rb = cb_dtype_row_bytes(kvb->dtype, kvb->cols);
	char *dst = aligned_alloc(64, CB_ALIGN(rb * nh * dv, 64));

	if (!dst || hf_model_own(&ld->m->hf, dst)) {
		free(dst);
		gguf_ld_err(ld, "out of memory");
		return -1;
	}
	for (h = 0; h < nh; h++)
		memcpy(dst + (size_t)h * dv * rb,
		       (const char *)kvb->data + ((size_t)h * (dn + dv) + dn) * rb, dv * rb);
	*out = *kvb;
	out->data = dst;
	out->rows = nh * dv;
	return 0;
}

/*
 * k_b: head h's W_uk ([dn][R] rows of kv_b) transposed to [R][dn], in
 * kv_b's type when rows of dn fit its blocks, else f32 (a quantized kv_b
 * is dequantized and quantized again: not the bits of a file that stores
 * attn_k_b itself).
 */
static int k_b_of(struct gloader *ld, const struct cb_tensor *kvb, struct cb_tensor *out)
{
	const struct cb_model_config *c = &ld->m->hf.cfg;
	cb_u32 nh = c->n_heads, R = c->mla.kv_lora_rank, dn = c->mla.qk_nope_dim;
	cb_u32 dv = c->mla.v_head_dim, h, i, r, dt;
	cb_u64 rb = cb_dtype_row_bytes(kvb->dtype, R), ob;
	float *w = malloc((size_t)dn * R * sizeof(float)), *t = malloc((size_t)R * dn * sizeof(float));
	char *dst = NULL;
	int ret = -1;

	dt = cb_dtype_row_bytes(kvb->dtype, dn) ? kvb->dtype : CB_DT_F32;
	ob = cb_dtype_row_bytes(dt, dn);
	if (w && t)
		dst = aligned_alloc(64, CB_ALIGN(ob * nh * R, 64));
	if (!dst || hf_model_own(&ld->m->hf, dst)) {
		free(dst);
		gguf_ld_err(ld, "out of memory");
		goto out;
	}
	for (h = 0; h < nh; h++) {
		for (i = 0; i < dn; i++)
			cb_dequantize_row(kvb->dtype, w + (size_t)i * R,
					  (const char *)kvb->data + ((size_t)h * (dn + dv) + i) * rb,
					  (int)R);
		for (r = 0; r < R; r++)
			for (i = 0; i < dn; i++)
				t[(size_t)r * dn + i] = w[(size_t)i * R + r];
		for (r = 0; r < R; r++)
			cb_quantize_row(dt, dst + ((size_t)h * R + r) * ob, t + (size_t)r * dn,
					(int)dn);
	}
	out->data = dst;
	out->dtype = dt;
	out->rows = nh * R;
	out->cols = dn;
	ret = 0;
out:
	free(w);
	free(t);
	return ret;
}

int gguf_deepseek_layer(struct gloader *ld, cb_u32 l)
{
	struct hf_model *m = &ld->m->hf;
	const struct cb_model_config *c = &m->cfg;
	const struct cb_mla_config *a = &c->mla;
	struct cb_layer_weights *L = &m->layers[l];
	cb_u32 H = c->hidden, nh = c->n_heads, qd = nh * c->head_dim, Rq = a->q_lora_rank;
	cb_u32 R = a->kv_lora_rank;
	struct cb_tensor kvb, *heads;
	char n[256];

#define GT(field, role, rows, cols, vec)					\
	do {									\
		if (gguf_tensor_name(cb_arch_of(c->arch), role, l, n, sizeof(n)) ||	\
		    gguf_ld_get(ld, &L->field, 0, n, 0, rows, cols, vec))	\
			return -1;						\
	} while (0)
	if (Rq) {
		GT(q_a, COLIBRI_T_MLA_Q_A, Rq, H, 0);
		GT(q_a_norm, COLIBRI_T_MLA_Q_A_NORM, 1, Rq, 1);
		GT(q_b, COLIBRI_T_MLA_Q_B, qd, Rq, 0);
	} else {
		GT(wq, COLIBRI_T_WQ, qd, H, 0);
	}
	GT(kv_a, COLIBRI_T_MLA_KV_A, R + a->qk_rope_dim, H, 0);
	GT(kv_a_norm, COLIBRI_T_MLA_KV_A_NORM, 1, R, 1);
	GT(wo, COLIBRI_T_WO, H, nh * a->v_head_dim, 0);
#undef GT
	snprintf(n, sizeof(n), "blk.%u.attn_kv_b.weight", l);
	if (gguf_find_tensor(ld->gf, n)) {
		if (gguf_ld_get(ld, &kvb, 0, n, 0, nh * (a->qk_nope_dim + a->v_head_dim), R, 0))
			return -1;
		return k_b_of(ld, &kvb, &L->k_b) || v_b_of(ld, &kvb, &L->v_b) ? -1 : 0;
	}
	/* the newer layout: [n_head][rows][cols], one tensor per head stacked */
	heads = calloc(nh, sizeof(*heads));
	if (!heads) {
		gguf_ld_err(ld, "out of memory");
		return -1;
	}
	if (gguf_tensor_name(cb_arch_of(c->arch), COLIBRI_T_MLA_K_B, l, n, sizeof(n)) ||
	    !gguf_find_tensor(ld->gf, n)) {
		gguf_ld_err(ld, "tensor 'blk.%u.attn_kv_b.weight' (or attn_k_b and attn_v_b) is "
			    "missing", l);
		goto fail;
	}
	if (gguf_ld_get(ld, heads, sizeof(*heads), n, nh, R, a->qk_nope_dim, 0))
		goto fail;
	L->k_b = heads[0];
	L->k_b.rows = nh * R;
	if (gguf_tensor_name(cb_arch_of(c->arch), COLIBRI_T_MLA_V_B, l, n, sizeof(n)) ||
	    gguf_ld_get(ld, heads, sizeof(*heads), n, nh, a->v_head_dim, R, 0))
		goto fail;
	L->v_b = heads[0];
	L->v_b.rows = nh * a->v_head_dim;
	free(heads);
	return 0;
fail:
	free(heads);
	return -1;
}
