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
 * gives the same values.
 */
#include "cb_engine_priv.h"
#include "cb_math.h"

void cb_gpt_oss_swiglu(const struct cb_engine *e, float *gate, const float *up, int n)
{
	float lim = cb_f32_from_bits(e->cfg.oss.swiglu_limit_bits);
	float alpha = cb_f32_from_bits(e->cfg.oss.swiglu_alpha_bits);
	int i;

	for (i = 0; i < n; i++) {
		float g = gate[i] > lim ? lim : gate[i];
		float u = up[i] > lim ? lim : (up[i] < -lim ? -lim : up[i]);

		gate[i] = (u + 1.0f) * (g * cb_sigmoidf(alpha * g));
	}
}
