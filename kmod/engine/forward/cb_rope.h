/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_rope.h - RoPE inverse frequencies, plain and YaRN-scaled.
 *
 * FPU-side header: only engine objects running in an FPU section call
 * these (the config they read is checked by cb_config_check()).
 */
#ifndef CB_ROPE_H
#define CB_ROPE_H

#include "core/cb_engine.h"

/*
 * cb_rope_rotate() - rotate the first @n dimensions (even) of a head in
 * place by one token's angles @cs (n/2 cosines, then n/2 sines): NeoX
 * pairs (i, i + n/2), interleaved pairs (2i, 2i + 1); @layout is enum
 * cb_rope_layout.  The one rotation of every attention kind.
 */
static inline void cb_rope_rotate(float *h, const float *cs, int n, int layout)
{
	int half = n / 2, i;

	for (i = 0; i < half; i++) {
		float co = cs[i], si = cs[half + i];
		int a = layout == CB_ROPE_NEOX ? i : 2 * i;
		int b = layout == CB_ROPE_NEOX ? i + half : 2 * i + 1;
		float x0 = h[a], x1 = h[b];

		h[a] = x0 * co - x1 * si;
		h[b] = x1 * co + x0 * si;
	}
}

/*
 * The per-model constants of the frequencies over @rot_dim rotated
 * dimensions, computed once by cb_rope_prepare() (a few logs), then read
 * per dimension by cb_rope_inv_freq().
 */
struct cb_rope {
	float theta;		/* rope_theta */
	float rot_dim;		/* the rotated dimensions, as float */
	float factor;		/* YaRN factor; 0: plain RoPE */
	float low, span;	/* YaRN ramp: (i - low) / span, clamped to [0, 1] */
	float attn;		/* scales cos and sin; 1 for plain RoPE */
};

/*
 * cb_rope_prepare() - the constants for @rot_dim (even) rotated dimensions
 * of each head: head_dim for every model but DeepSeek, which rotates only
 * qk_rope_head_dim of each head.
 */
void cb_rope_prepare(struct cb_rope *r, const struct cb_model_config *c, int rot_dim);

/* cb_rope_inv_freq() - inverse frequency of pair @i, 0 <= i < rot_dim / 2 */
float cb_rope_inv_freq(const struct cb_rope *r, int i);

/*
 * cb_rope_softmax_mscale() - DeepSeek-V2/V3's multiplier of the softmax
 * scale: yarn_get_mscale(factor, mscale_all_dim)^2 when mscale_all_dim is
 * set, else 1.  Other models do not call it.
 */
float cb_rope_softmax_mscale(const struct cb_model_config *c);

#endif /* CB_ROPE_H */
