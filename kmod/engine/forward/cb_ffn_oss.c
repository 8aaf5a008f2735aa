// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_ffn_oss.c - GPT-OSS's expert activation, the clamped SwiGLU of
 * modeling_gpt_oss.py (GptOssExperts):
 *
 *   gate = min(gate, limit)            (clamped above only)
 *   up   = clamp(up, -limit, limit)
 *   out  = (up + 1) * gate * sigmoid(alpha * gate)
 *
 * gate and up are the de-interleaved halves of HF's fused gate_up_proj
 * (columns 0, 2, 4... and 1, 3, 5...), each with its bias (added by the
 * gemm, cb_moe.c).  Element by element, so any cut of a row into chunks
 * gives the same values.  The loop is cb_swiglu_oss() (cb_math.c), or the
 * ISA variant's vector copy of it (swiglu_oss_f32), bit for bit the same.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"

void cb_gpt_oss_swiglu(const struct cb_engine *e, float *gate, const float *up, int n)
{
	e->ops->swiglu_oss_f32(gate, up, n, cb_f32_from_bits(e->cfg.oss.swiglu_limit_bits),
			       cb_f32_from_bits(e->cfg.oss.swiglu_alpha_bits));
}
