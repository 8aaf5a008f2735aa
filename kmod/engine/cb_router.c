// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_router.c - MoE routing: softmax over all experts, then top-k, with or
 * without renormalising the k weights (Mixtral always renormalises; Qwen2-MoE,
 * Qwen3-MoE and OLMoE follow norm_topk_prob).
 *
 * Selection works on the logits (softmax is monotonic) and is an op of
 * the ISA variants, topk_f32: the insertion reference cb_topk_ref() and the
 * SSE2 baseline cb_topk_base() live in cb_ops_scalar.c (so that every module
 * linking the ops tables has them), the AVX-512 op in cb_ops_avx512.c.
 * Here: which variant routes, and the weights.
 */
#include "cb_engine_priv.h"
#include "cb_math.h"

/*
 * The variant cb_topk() and cb_route() use: the best this CPU runs, chosen
 * on first use.  Racing first callers store the same pointer; relaxed
 * atomics (plain moves on x86) say so to the compiler.
 */
static const struct cb_isa_ops *router_ops_cache;

static const struct cb_isa_ops *router_ops(void)
{
	const struct cb_isa_ops *ops = __atomic_load_n(&router_ops_cache, __ATOMIC_RELAXED);

	if (!ops) {
		ops = cb_isa_select(CB_ISA__COUNT - 1);
		__atomic_store_n(&router_ops_cache, ops, __ATOMIC_RELAXED);
	}
	return ops;
}

/**
 * cb_topk() - the k largest of logits[0..n), in descending order.
 * @logits: the values to choose from, [n].
 * @n: number of values.
 * @k: how many to choose, 1 <= k <= n.
 * @ids: out, [k], indices of the chosen values in rank order.
 * @vals: out, [k], the chosen values.
 *
 * Ties keep the lower index first, so the choice is deterministic.  NaN
 * counts as -infinity.  Runs the topk_f32 op of the best ISA variant of
 * this CPU; all of them give the results of cb_topk_ref() (the unit tests
 * compare them).  For 64 experts, k = 8 the AVX-512 op is about 4x faster
 * than the SSE2 baseline (docs/performance.md).
 */
void cb_topk(const float *logits, int n, int k, cb_u32 *ids, float *vals)
{
	router_ops()->topk_f32(logits, n, k, ids, vals);
}

/**
 * cb_route_isa() - expert ids and weights for one token, with a given variant.
 * @ops: the ISA variant whose topk_f32 selects (the engine's own).
 * @logits: router logits [n].
 * @n: number of experts.
 * @k: experts per token (top_k).
 * @renorm: divide the k softmax probabilities by their sum.
 * @ids: out, [k], expert ids in rank order.
 * @weights: out, [k], their routing weights.
 *
 * The result does not depend on @ops: every variant selects alike and the
 * weights are computed here, in scalar code.
 */
void cb_route_isa(const struct cb_isa_ops *ops, const float *logits, int n, int k,
		  int renorm, cb_u32 *ids, float *weights)
{
	float mx, sum = 0.0f, inv;
	int i;

	ops->topk_f32(logits, n, k, ids, weights);
	mx = weights[0];
	if (renorm) {
		for (i = 0; i < k; i++) {
			weights[i] = cb_expf(weights[i] - mx);
			sum += weights[i];
		}
	} else {
		for (i = 0; i < n; i++)
			sum += cb_expf(logits[i] - mx);
		for (i = 0; i < k; i++)
			weights[i] = cb_expf(weights[i] - mx);
	}
	inv = 1.0f / sum;
	for (i = 0; i < k; i++)
		weights[i] *= inv;
}

/**
 * cb_route() - expert ids and weights for one token.
 * @logits: router logits [n].
 * @n: number of experts.
 * @k: experts per token (top_k).
 * @renorm: divide the k softmax probabilities by their sum.
 * @ids: out, [k], expert ids in rank order.
 * @weights: out, [k], their routing weights.
 *
 * cb_route_isa() with the best variant of this CPU.
 */
void cb_route(const float *logits, int n, int k, int renorm, cb_u32 *ids,
	      float *weights)
{
	cb_route_isa(router_ops(), logits, n, k, renorm, ids, weights);
}
