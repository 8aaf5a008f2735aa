// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_router.c - MoE routing: softmax over all experts, then top-k, with or
 * without renormalising the k weights (Mixtral always renormalises; Qwen2-MoE,
 * Qwen3-MoE and OLMoE follow norm_topk_prob).
 *
 * Selection works on the logits (softmax is monotonic) and is an op of
 * the ISA variants, topk_f32: the insertion reference cb_topk_ref() and the
 * SSE2 baseline cb_topk_base() live in cb_ops_scalar.c (so that every module
 * linking the ops tables has them), the AVX2 and AVX-512 ops in their
 * variants.  The caller names the variant (the engine passes its own ops);
 * here: the weights.
 */
#include "ops/cb_math.h"
#include "ops/cb_ops.h"

/**
 * cb_route() - expert ids and weights for one token.
 * @ops: the ISA variant whose topk_f32 selects: the engine's own, so that
 *	max_isa caps the router as it caps everything else.
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
void cb_route(const struct cb_isa_ops *ops, const float *logits, int n, int k,
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
