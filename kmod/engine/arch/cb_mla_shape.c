// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_mla_shape.c - the shapes of DeepSeek-V2/V3: the config check of the
 * MLA and routing fields, the tensors of an MLA layer, and their place in
 * a .colibri file.
 *
 * Integer only (Kbuild's cb-int-only-dirs): the kernel validates files and
 * configs outside FPU sections.
 */
#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "arch/cb_mla.h"
#include "core/cb_why.h"

CB_STATIC_ASSERT(sizeof(struct cb_mla_config) == CB_MLA_WORDS * 4, "cb_mla_config");
CB_STATIC_ASSERT(sizeof(struct colibri_file_mla) == CB_MLA_WORDS * 4, "colibri_file_mla");
CB_STATIC_ASSERT(CB_SCORE_SOFTMAX == COLIBRI_SCORE_SOFTMAX, "score softmax");
CB_STATIC_ASSERT(CB_SCORE_SIGMOID == COLIBRI_SCORE_SIGMOID, "score sigmoid");

#define MFAIL(...) cb_why(why, whylen, -CB_EINVAL, "config: " __VA_ARGS__)

/* An f32 bit pattern that is finite and > 0, or 0 (= the default). */
static int f32_ok_or_zero(cb_u32 bits)
{
	return !(bits & 0x80000000u) && (bits & 0x7f800000u) != 0x7f800000u;
}

static int check_routing(const struct cb_model_config *c, char *why, cb_u32 whylen)
{
	const struct cb_mla_config *m = &c->mla;
	cb_u32 per;

	if (!c->n_experts) {
		if (m->score_func || m->n_group || m->topk_group || m->group_top ||
		    m->sel_bias || m->route_scale_bits)
			return MFAIL("dense model (n_experts 0) with routing fields set");
		return 0;
	}
	if (m->score_func > CB_SCORE_SIGMOID)
		return MFAIL("unknown score_func %u", m->score_func);
	if (m->sel_bias > 1)
		return MFAIL("sel_bias %u is not 0 or 1", m->sel_bias);
	if (!f32_ok_or_zero(m->route_scale_bits))
		return MFAIL("routed_scaling_factor is not a finite positive number");
	if (m->n_group <= 1) {
		if (m->topk_group > m->n_group || m->group_top)
			return MFAIL("topk_group %u / group_top %u without groups (n_group %u)",
				     m->topk_group, m->group_top, m->n_group);
		return 0;
	}
	if (c->n_experts % m->n_group)
		return MFAIL("n_group %u does not divide n_experts %u", m->n_group,
			     c->n_experts);
	if (!m->topk_group || m->topk_group > m->n_group)
		return MFAIL("topk_group %u outside 1..n_group %u", m->topk_group, m->n_group);
	per = c->n_experts / m->n_group;
	if (!m->group_top || m->group_top > CB_MIN(per, (cb_u32)CB_MAX_TOP_K))
		return MFAIL("group_top %u outside 1..%u (experts per group, at most %u)",
			     m->group_top, per, CB_MAX_TOP_K);
	if (c->top_k > m->topk_group * per)
		return MFAIL("top_k %u above the %u experts of topk_group %u groups",
			     c->top_k, m->topk_group * per, m->topk_group);
	return 0;
}

int cb_mla_config_check(const struct cb_model_config *c, char *why, cb_u32 whylen)
{
	const struct cb_mla_config *m = &c->mla;
	const struct cb_arch_desc *a = cb_arch_of(c->arch);
	int ds = a && a->attn == CB_ATTN_MLA;
	int r = check_routing(c, why, whylen);

	if (r)
		return r;
	if (!cb_is_mla(c)) {
		if (ds)
			return MFAIL("DeepSeek architecture without kv_lora_rank");
		if (m->q_lora_rank || m->qk_nope_dim || m->qk_rope_dim || m->v_head_dim ||
		    m->attn_scale_bits)
			return MFAIL("MLA fields set but kv_lora_rank is 0");
		return 0;
	}
	if (!ds)
		return MFAIL("kv_lora_rank %u on an architecture without MLA (%u)",
			     m->kv_lora_rank, c->arch);
	if (!m->qk_rope_dim || m->qk_rope_dim % 2)
		return MFAIL("qk_rope_head_dim %u is not even and > 0", m->qk_rope_dim);
	if ((cb_u64)m->kv_lora_rank + m->qk_rope_dim > CB_MAX_MLA_ROW)
		return MFAIL("kv_lora_rank %u + qk_rope_head_dim %u above %u",
			     m->kv_lora_rank, m->qk_rope_dim, CB_MAX_MLA_ROW);
	if (!m->qk_nope_dim || (cb_u64)m->qk_nope_dim + m->qk_rope_dim != c->head_dim)
		return MFAIL("qk_nope_head_dim %u + qk_rope_head_dim %u is not head_dim %u",
			     m->qk_nope_dim, m->qk_rope_dim, c->head_dim);
	if (!m->v_head_dim || m->v_head_dim > CB_MAX_HEAD_DIM ||
	    (cb_u64)m->v_head_dim * c->n_heads > CB_MAX_QDIM)
		return MFAIL("v_head_dim %u outside 1..%u (and n_heads x v_head_dim <= %u)",
			     m->v_head_dim, CB_MAX_HEAD_DIM, CB_MAX_QDIM);
	if (m->q_lora_rank > CB_MAX_Q_LORA)
		return MFAIL("q_lora_rank %u above %u", m->q_lora_rank, CB_MAX_Q_LORA);
	if (c->n_kv_heads != c->n_heads)
		return MFAIL("MLA needs n_kv_heads (%u) == n_heads (%u)", c->n_kv_heads,
			     c->n_heads);
	if (c->qkv_bias || c->qk_norm || c->clip_qkv_bits)
		return MFAIL("MLA with qkv_bias, qk_norm or clip_qkv");
	if (!f32_ok_or_zero(m->attn_scale_bits))
		return MFAIL("attention scale is not a finite positive number");
	return 0;
}

/* A tensor of this shape is there (vectors f32, rows of whole blocks). */
static int bad(const struct cb_tensor *t, cb_u32 rows, cb_u32 cols, int vector)
{
	return !t->data || t->rows != rows || t->cols != cols || t->dtype >= CB_DT__COUNT ||
	       (vector && t->dtype != CB_DT_F32) || !cb_dtype_row_bytes(t->dtype, cols);
}

int cb_mla_check_layer(const struct cb_model_config *c, const struct cb_layer_weights *L,
		       int moe)
{
	const struct cb_mla_config *m = &c->mla;
	cb_u32 H = c->hidden, nh = c->n_heads, qd = nh * c->head_dim;

	if (moe && m->sel_bias && bad(&L->router_sel_bias, 1, c->n_experts, 1))
		return -CB_EINVAL;
	if (!cb_is_mla(c))
		return 0;
	if (m->q_lora_rank && (bad(&L->q_a, m->q_lora_rank, H, 0) ||
			       bad(&L->q_a_norm, 1, m->q_lora_rank, 1) ||
			       bad(&L->q_b, qd, m->q_lora_rank, 0)))
		return -CB_EINVAL;
	if (!m->q_lora_rank && bad(&L->wq, qd, H, 0))
		return -CB_EINVAL;
	if (bad(&L->kv_a, m->kv_lora_rank + m->qk_rope_dim, H, 0) ||
	    bad(&L->kv_a_norm, 1, m->kv_lora_rank, 1) ||
	    bad(&L->k_b, nh * m->kv_lora_rank, m->qk_nope_dim, 0) ||
	    bad(&L->v_b, nh * m->v_head_dim, m->kv_lora_rank, 0) ||
	    bad(&L->wo, H, nh * m->v_head_dim, 0))
		return -CB_EINVAL;
	return 0;
}

cb_u32 cb_mla_attn_roles(const struct cb_model_config *c, cb_u32 *roles)
{
	cb_u32 n = 0;

	roles[n++] = COLIBRI_T_ATTN_NORM;
	if (c->mla.q_lora_rank) {
		roles[n++] = COLIBRI_T_MLA_Q_A;
		roles[n++] = COLIBRI_T_MLA_Q_A_NORM;
		roles[n++] = COLIBRI_T_MLA_Q_B;
	} else {
		roles[n++] = COLIBRI_T_WQ;
	}
	roles[n++] = COLIBRI_T_MLA_KV_A;
	roles[n++] = COLIBRI_T_MLA_KV_A_NORM;
	roles[n++] = COLIBRI_T_MLA_K_B;
	roles[n++] = COLIBRI_T_MLA_V_B;
	roles[n++] = COLIBRI_T_WO;
	roles[n++] = COLIBRI_T_FFN_NORM;
	return n;
}

void cb_format_mla_to_file(const struct cb_model_config *c, struct colibri_file_mla *f)
{
	f->q_lora_rank = c->mla.q_lora_rank;
	f->kv_lora_rank = c->mla.kv_lora_rank;
	f->qk_nope_dim = c->mla.qk_nope_dim;
	f->qk_rope_dim = c->mla.qk_rope_dim;
	f->v_head_dim = c->mla.v_head_dim;
	f->attn_scale_bits = c->mla.attn_scale_bits;
	f->score_func = c->mla.score_func;
	f->n_group = c->mla.n_group;
	f->topk_group = c->mla.topk_group;
	f->group_top = c->mla.group_top;
	f->sel_bias = c->mla.sel_bias;
	f->route_scale_bits = c->mla.route_scale_bits;
}

void cb_mla_config_from_words(struct cb_mla_config *m, const cb_u32 *w)
{
	m->q_lora_rank = w[0];
	m->kv_lora_rank = w[1];
	m->qk_nope_dim = w[2];
	m->qk_rope_dim = w[3];
	m->v_head_dim = w[4];
	m->attn_scale_bits = w[5];
	m->score_func = w[6];
	m->n_group = w[7];
	m->topk_group = w[8];
	m->group_top = w[9];
	m->sel_bias = w[10];
	m->route_scale_bits = w[11];
}
