// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * weight_bytes.c - how many weight bytes a model has, and how many one
 * forward pass reads (colibri_model_weight_bytes(), _pass_bytes()).
 *
 * Decode of an MoE model is bound by the weight bytes each pass must read:
 * attention, router, shared experts and dense MLPs, the experts the batch
 * actually selected (counted from the routing trace, distinct experts per
 * layer), one embedding row per token, the final norm and the lm_head.
 * `colibri bench` divides those bytes per second by the machine's read
 * bandwidth (docs/performance.md).
 */
#include "core/cb_engine.h"
#include "session/session_priv.h"

static double tbytes(const struct cb_tensor *t)
{
	return t->data ? (double)t->rows * cb_dtype_row_bytes(t->dtype, t->cols) : 0;
}

static double expert_bytes(const struct cb_expert_weights *x)
{
	return tbytes(&x->gate) + tbytes(&x->up) + tbytes(&x->down);
}

/* The per-layer tensors other than the routed experts. */
static double layer_bytes(const struct cb_layer_weights *L)
{
	const struct cb_tensor *t[] = {
		&L->attn_norm, &L->wq, &L->wk, &L->wv, &L->wo, &L->bq, &L->bk, &L->bv,
		&L->q_norm, &L->k_norm, &L->ffn_norm, &L->router, &L->shared_gate_proj,
		&L->shared_up_proj, &L->shared_down_proj, &L->shared_expert_gate,
		&L->mlp_gate, &L->mlp_up, &L->mlp_down,
	};
	double b = 0;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		b += tbytes(t[i]);
	return b;
}

double cb_weight_bytes(const struct cb_model_config *c, const struct cb_model_weights *w)
{
	double b = tbytes(&w->embed) + tbytes(&w->final_norm) + tbytes(&w->lm_head);
	uint32_t l, e;

	for (l = 0; l < c->n_layers; l++) {
		const struct cb_layer_weights *L = &w->layers[l];

		b += layer_bytes(L);
		if (cb_layer_is_moe(c, l))
			for (e = 0; e < c->n_experts; e++)
				b += expert_bytes(&L->experts[e]);
	}
	return b;
}

double cb_pass_bytes(const struct cb_model_config *c, const struct cb_model_weights *w,
		     const uint32_t *trace, uint32_t n)
{
	const struct cb_tensor *head = c->tied_embeddings ? &w->embed : &w->lm_head;
	double b = tbytes(head) + tbytes(&w->final_norm);
	uint32_t l, t, i, k = c->n_experts ? c->top_k : 0;

	b += n * (w->embed.rows ? tbytes(&w->embed) / w->embed.rows : 0);
	for (l = 0; l < c->n_layers; l++) {
		const struct cb_layer_weights *L = &w->layers[l];
		uint64_t seen[CB_MAX_EXPERTS / 64] = { 0 };

		b += layer_bytes(L);
		if (!cb_layer_is_moe(c, l))
			continue;
		for (t = 0; t < n; t++)
			for (i = 0; i < k; i++) {
				uint32_t e = trace[(((size_t)t * c->n_layers + l) * k + i) * 2];

				if (e >= c->n_experts || (seen[e / 64] >> (e % 64) & 1))
					continue;
				seen[e / 64] |= 1ull << (e % 64);
				b += expert_bytes(&L->experts[e]);
			}
	}
	return b;
}
