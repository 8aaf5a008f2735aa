// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_rope.c - RoPE inverse frequencies: plain, and YaRN-scaled.
 *
 * Plain RoPE (HF "default"): inv_freq[i] = 1 / theta^(2i/d) in f32, d the
 * rotated dimensions.
 *
 * YaRN (HF _compute_yarn_parameters in modeling_rope_utils.py; rope_type
 * "yarn"): the pairs that turn fewer than beta_slow times over the
 * original context are interpolated (inv_freq / factor), those that turn
 * more than beta_fast times are kept (extrapolated), with a linear ramp
 * between:
 *   dim(b)   = d ln(orig / (2 pi b)) / (2 ln theta)   (find_correction_dim)
 *   low      = max(floor(dim(beta_fast)), 0), high = min(ceil(dim(beta_slow)),
 *              d - 1)   (no floor/ceil without CB_ROPE_F_TRUNCATE: GPT-OSS)
 *   ramp[i]  = clamp((i - low) / (high - low), 0, 1)   (high += 0.001 if equal)
 *   ext[i]   = 1 - ramp[i]
 *   inv[i]   = inv_freq[i] / factor * (1 - ext[i]) + inv_freq[i] * ext[i]
 * and cos and sin are multiplied by the attention factor:
 *   HF attention_factor when given (CB_ROPE_F_ATTN_FACTOR), else
 *   m(factor, mscale) / m(factor, mscale_all_dim) when both are non-zero
 *   (DeepSeek-V2/V3), else m(factor, 1) = 0.1 ln(factor) + 1 (GPT-OSS,
 *   Qwen, Llama-family YaRN), with m(s, k) = s <= 1 ? 1 : 0.1 k ln(s) + 1.
 * The range is computed in double (Python floats in HF), the frequencies
 * and the ramp in f32 (torch tensors), the same operations in the same
 * order.
 *
 * Who uses what: Llama, Mixtral, Qwen2/3-MoE, OLMoE and GPT-OSS rotate all
 * of head_dim and use cb_rope_inv_freq() only; DeepSeek-V2/V3 rotate
 * qk_rope_head_dim of each head and also multiply the softmax scale by
 * cb_rope_softmax_mscale() (HF DeepseekV2/V3Attention).
 *
 * Floating point: called inside the engine's FPU sections only.
 */
#include "forward/cb_rope.h"
#include "ops/cb_math.h"

#define CB_PI 3.14159265358979323846

/* m(s, k) of HF's get_mscale / DeepSeek's yarn_get_mscale */
static double yarn_mscale(double scale, double k)
{
	return scale <= 1.0 ? 1.0 : 0.1 * k * cb_log(scale) + 1.0;
}

/* floor and ceil for |x| < 2^51 (cb_round_even's range) */
static double floor_d(double x)
{
	double r = cb_round_even(x);

	return r > x ? r - 1.0 : r;
}

static double ceil_d(double x)
{
	double r = cb_round_even(x);

	return r < x ? r + 1.0 : r;
}

/* HF find_correction_dim: the dimension that turns @rot times over @ctx */
static double correction_dim(double rot, double d, double theta, double ctx)
{
	return d * cb_log(ctx / (rot * 2.0 * CB_PI)) / (2.0 * cb_log(theta));
}

static double clamp_d(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

void cb_rope_prepare(struct cb_rope *r, const struct cb_model_config *c, int rot_dim)
{
	const struct cb_rope_scaling *s = &c->rope_scaling;
	double d = (double)rot_dim, theta, factor, ms, msa, low, high;

	r->theta = cb_f32_from_bits(c->rope_theta_bits);
	r->rot_dim = (float)rot_dim;
	r->factor = 0.0f;
	r->low = 0.0f;
	r->span = 1.0f;
	r->attn = 1.0f;
	if (s->kind != CB_ROPE_SCALING_YARN)
		return;

	theta = (double)r->theta;
	factor = (double)cb_f32_from_bits(s->factor_bits);
	/*
	 * theta > 1 (cb_config_check()), so both are finite and small; clamping
	 * before floor/ceil gives HF's max(floor(x), 0) and min(ceil(x), d - 1)
	 */
	low = clamp_d(correction_dim((double)cb_f32_from_bits(s->beta_fast_bits), d, theta,
				     (double)s->orig_context), 0.0, d - 1.0);
	high = clamp_d(correction_dim((double)cb_f32_from_bits(s->beta_slow_bits), d, theta,
				      (double)s->orig_context), 0.0, d - 1.0);
	if (s->flags & CB_ROPE_F_TRUNCATE) {
		low = floor_d(low);
		high = ceil_d(high);
	}
	if (low == high)
		high += 0.001;		/* HF: prevent the singularity */
	r->factor = (float)factor;
	r->low = (float)low;
	r->span = (float)(high - low);

	ms = (double)cb_f32_from_bits(s->mscale_bits);
	msa = (double)cb_f32_from_bits(s->mscale_all_dim_bits);
	if (s->flags & CB_ROPE_F_ATTN_FACTOR)
		r->attn = (float)ms;
	else if (ms != 0.0 && msa != 0.0)
		r->attn = (float)(yarn_mscale(factor, ms) / yarn_mscale(factor, msa));
	else
		r->attn = (float)yarn_mscale(factor, 1.0);
}

float cb_rope_inv_freq(const struct cb_rope *r, int i)
{
	float pf = cb_powf(r->theta, (float)(2 * i) / r->rot_dim);
	float ext, ramp;

	if (r->factor == 0.0f)
		return 1.0f / pf;
	ramp = ((float)i - r->low) / r->span;
	ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
	ext = 1.0f - ramp;
	return 1.0f / (r->factor * pf) * (1.0f - ext) + 1.0f / pf * ext;
}

float cb_rope_softmax_mscale(const struct cb_model_config *c)
{
	const struct cb_rope_scaling *s = &c->rope_scaling;
	double m, msa;

	if (s->kind != CB_ROPE_SCALING_YARN)
		return 1.0f;
	msa = (double)cb_f32_from_bits(s->mscale_all_dim_bits);
	if (msa == 0.0)
		return 1.0f;
	m = yarn_mscale((double)cb_f32_from_bits(s->factor_bits), msa);
	return (float)(m * m);
}
