// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_rope.c - RoPE scaling: the config check of its fields, and the
 * YaRN frequencies and factors of kmod/engine/forward/cb_rope.c against the HF
 * formulas evaluated here with libm in double.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cb_test.h"
#include "core/cb_engine.h"
#include "ops/cb_math.h"
#include "forward/cb_rope.h"
#include "colibri_format.h"

static struct cb_model_config base_cfg(void)
{
	struct cb_model_config c;

	memset(&c, 0, sizeof(c));
	c.arch = COLIBRI_ARCH_QWEN3_MOE;
	c.vocab_size = 64;
	c.hidden = 32;
	c.n_layers = 1;
	c.n_heads = 2;
	c.n_kv_heads = 1;
	c.head_dim = 64;
	c.expert_ffn = 32;
	c.n_experts = 4;
	c.top_k = 2;
	c.decoder_sparse_step = 1;
	c.rope_theta_bits = cb_f32_bits(1e6f);
	c.rms_eps_bits = cb_f32_bits(1e-6f);
	c.qk_norm = CB_QK_NORM_HEAD;
	c.max_context = 4096;
	return c;
}

static struct cb_model_config yarn_cfg(float factor, cb_u32 orig, cb_u32 flags)
{
	struct cb_model_config c = base_cfg();
	struct cb_rope_scaling *r = &c.rope_scaling;

	r->kind = CB_ROPE_SCALING_YARN;
	r->factor_bits = cb_f32_bits(factor);
	r->orig_context = orig;
	r->beta_fast_bits = cb_f32_bits(32.0f);
	r->beta_slow_bits = cb_f32_bits(1.0f);
	r->mscale_bits = cb_f32_bits(1.0f);
	r->flags = flags;
	return c;
}

struct bad_case {
	const char *name;
	void (*set)(struct cb_model_config *c);
	const char *needle;
};

static void kind_3(struct cb_model_config *c) { c->rope_scaling.kind = 3; }
static void none_with_factor(struct cb_model_config *c)
{
	c->rope_scaling.kind = CB_ROPE_SCALING_NONE;
}
static void flags_4(struct cb_model_config *c) { c->rope_scaling.flags = 4; }
static void factor_half(struct cb_model_config *c)
{
	c->rope_scaling.factor_bits = cb_f32_bits(0.5f);
}
static void factor_nan(struct cb_model_config *c) { c->rope_scaling.factor_bits = 0x7fc00000; }
static void factor_neg(struct cb_model_config *c)
{
	c->rope_scaling.factor_bits = cb_f32_bits(-4.0f);
}
static void orig_0(struct cb_model_config *c) { c->rope_scaling.orig_context = 0; }
static void orig_big(struct cb_model_config *c) { c->rope_scaling.orig_context = 4097; }
static void slow_0(struct cb_model_config *c) { c->rope_scaling.beta_slow_bits = 0; }
static void fast_eq_slow(struct cb_model_config *c)
{
	c->rope_scaling.beta_fast_bits = c->rope_scaling.beta_slow_bits;
}
static void fast_inf(struct cb_model_config *c) { c->rope_scaling.beta_fast_bits = 0x7f800000; }
static void mscale_neg(struct cb_model_config *c)
{
	c->rope_scaling.mscale_bits = cb_f32_bits(-1.0f);
}
static void msa_nan(struct cb_model_config *c)
{
	c->rope_scaling.mscale_all_dim_bits = 0x7fc00001;
}
static void attn_0(struct cb_model_config *c)
{
	c->rope_scaling.flags |= CB_ROPE_F_ATTN_FACTOR;
	c->rope_scaling.mscale_bits = 0;
}
static void theta_1(struct cb_model_config *c) { c->rope_theta_bits = cb_f32_bits(1.0f); }

static const struct bad_case bad[] = {
	{ "kind_3", kind_3, "unknown rope_scaling kind 3" },
	{ "none_with_fields", none_with_factor, "rope_scaling kind none with its fields set" },
	{ "flags_4", flags_4, "rope_scaling flags 4 has unknown bits" },
	{ "factor_0.5", factor_half, "rope_scaling factor" },
	{ "factor_nan", factor_nan, "rope_scaling factor" },
	{ "factor_negative", factor_neg, "rope_scaling factor" },
	{ "orig_0", orig_0, "rope_scaling original context 0 outside 1..max_context 4096" },
	{ "orig_above_max", orig_big, "rope_scaling original context 4097" },
	{ "beta_slow_0", slow_0, "rope_scaling beta_slow" },
	{ "beta_fast_eq_slow", fast_eq_slow, "rope_scaling beta_fast" },
	{ "beta_fast_inf", fast_inf, "rope_scaling beta_fast" },
	{ "mscale_negative", mscale_neg, "rope_scaling mscale is not" },
	{ "mscale_all_dim_nan", msa_nan, "rope_scaling mscale_all_dim" },
	{ "attention_factor_0", attn_0, "rope_scaling attention factor" },
	{ "theta_1", theta_1, "rope_theta is not above 1" },
};

static void test_config_check(void)
{
	struct cb_model_config c = yarn_cfg(4.0f, 32, CB_ROPE_F_TRUNCATE);
	char why[200];
	size_t i;

	why[0] = 0;
	CB_CHECK(cb_config_check(&c, why, sizeof(why)) == 0, "good YaRN config: %s", why);
	c = base_cfg();
	CB_CHECK(cb_config_check(&c, why, sizeof(why)) == 0, "plain config: %s", why);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = yarn_cfg(4.0f, 32, CB_ROPE_F_TRUNCATE);
		bad[i].set(&c);
		why[0] = 0;
		CB_CHECK(cb_config_check(&c, why, sizeof(why)) == -CB_EINVAL &&
			 strstr(why, bad[i].needle), "%s: got '%s', want '%s'", bad[i].name, why,
			 bad[i].needle);
	}
}

/* HF _compute_yarn_parameters in double (libm) */
static double hf_corr_dim(double rot, double d, double base, double ctx)
{
	return d * log(ctx / (rot * 2 * M_PI)) / (2 * log(base));
}

static double hf_mscale(double s, double m)
{
	return s <= 1 ? 1.0 : 0.1 * m * log(s) + 1.0;
}

static void check_yarn(const char *name, double theta, int d, double factor, double orig,
		       int truncate, double ms, double msa, double want_attn)
{
	struct cb_model_config c = yarn_cfg((float)factor, (cb_u32)orig,
					    truncate ? CB_ROPE_F_TRUNCATE : 0);
	double low = hf_corr_dim(32, d, theta, orig), high = hf_corr_dim(1, d, theta, orig);
	double worst = 0, w;
	struct cb_rope r;
	int i, n_interp = 0, n_extrap = 0;

	c.rope_theta_bits = cb_f32_bits((float)theta);
	c.rope_scaling.mscale_bits = cb_f32_bits((float)ms);
	c.rope_scaling.mscale_all_dim_bits = cb_f32_bits((float)msa);
	if (truncate) {
		low = floor(low);
		high = ceil(high);
	}
	low = low < 0 ? 0 : low;
	high = high > d - 1 ? d - 1 : high;
	if (low == high)
		high += 0.001;
	cb_rope_prepare(&r, &c, d);
	for (i = 0; i < d / 2; i++) {
		double inv = 1.0 / pow(theta, 2.0 * i / d);
		double ramp = fmin(fmax((i - low) / (high - low), 0), 1);
		double ext = 1 - ramp, want = inv / factor * (1 - ext) + inv * ext;
		double got = cb_rope_inv_freq(&r, i);

		n_interp += ramp == 1;
		n_extrap += ramp == 0;
		w = fabs(got - want) / want;
		worst = w > worst ? w : worst;
	}
	/* both ends of the ramp occur: the test covers the mix, not one side */
	CB_CHECK(n_interp && n_extrap, "%s: %d interpolated, %d extrapolated pairs", name,
		 n_interp, n_extrap);
	CB_CHECK(worst < 1e-6, "%s: inv_freq relative error %g", name, worst);
	CB_CHECK(fabs(r.attn - want_attn) < 1e-6, "%s: attention factor %.9g, want %.9g", name,
		 r.attn, want_attn);
	printf("# %s: low %.4g high %.4g, inv_freq max rel err %.3g, attention %.7g\n", name,
	       low, high, worst, r.attn);
}

static void test_yarn_frequencies(void)
{
	/* GPT-OSS: theta 150000, 64 dims, factor 32 from 4096, truncate false */
	check_yarn("gpt_oss", 150000, 64, 32, 4096, 0, 1, 0, 0.1 * log(32) + 1);
	/* Qwen-style YaRN: factor 4 from 32768, truncate true */
	check_yarn("qwen3_truncate", 1e6, 128, 4, 32768, 1, 1, 0, 0.1 * log(4) + 1);
	/* the random checkpoint of tests/ref: factor 4 from 32 positions */
	check_yarn("ref_small", 1e6, 64, 4, 32, 1, 1, 0, 0.1 * log(4) + 1);
	/* DeepSeek-V2: mscale = mscale_all_dim = 0.707 gives attention 1 */
	check_yarn("deepseek_v2", 10000, 64, 40, 4096, 1, 0.707, 0.707, 1.0);
	/* mscale without mscale_all_dim: HF ignores it (m(factor, 1)) */
	check_yarn("mscale_alone", 10000, 64, 40, 4096, 1, 0.5, 0, 0.1 * log(40) + 1);
	check_yarn("mscale_ratio", 10000, 64, 40, 4096, 1, 1.0, 0.5,
		   hf_mscale(40, 1.0) / hf_mscale(40, 0.5));
}

static void test_attention_factor_and_softmax(void)
{
	struct cb_model_config c = yarn_cfg(40.0f, 4096, CB_ROPE_F_TRUNCATE);
	struct cb_rope r;
	double m = hf_mscale(40, 1.0);

	c.rope_scaling.flags |= CB_ROPE_F_ATTN_FACTOR;
	c.rope_scaling.mscale_bits = cb_f32_bits(1.25f);
	cb_rope_prepare(&r, &c, 64);
	CB_CHECK(r.attn == 1.25f, "given attention factor: %g", r.attn);
	CB_CHECK(cb_rope_softmax_mscale(&c) == 1.0f, "no mscale_all_dim: %g",
		 cb_rope_softmax_mscale(&c));
	c.rope_scaling.mscale_all_dim_bits = cb_f32_bits(1.0f);
	CB_CHECK(fabs(cb_rope_softmax_mscale(&c) - m * m) < 1e-6, "DeepSeek softmax %g, want %g",
		 cb_rope_softmax_mscale(&c), m * m);
	c = base_cfg();
	CB_CHECK(cb_rope_softmax_mscale(&c) == 1.0f, "plain RoPE softmax multiplier");
}

/* without scaling the frequencies are the old inline ones, bit for bit */
static void test_plain_unchanged(void)
{
	struct cb_model_config c = base_cfg();
	struct cb_rope r;
	int i, d = 64, bad = 0;

	cb_rope_prepare(&r, &c, d);
	for (i = 0; i < d / 2; i++)
		bad += cb_rope_inv_freq(&r, i) != 1.0f / cb_powf(1e6f, (float)(2 * i) / (float)d);
	CB_CHECK(!bad && r.attn == 1.0f, "%d plain frequencies differ", bad);
}

int main(void)
{
	CB_RUN(test_config_check);
	CB_RUN(test_yarn_frequencies);
	CB_RUN(test_attention_factor_and_softmax);
	CB_RUN(test_plain_unchanged);
	return cb_test_done();
}
