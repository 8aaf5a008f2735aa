// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * synth_delta.c - `colibri synth --arch qwen3_5_moe`: the Gated DeltaNet
 * layers' shape.  Defaults are Qwen3.5/3.6-35B-A3B's ratios: as many key
 * heads as attention heads, twice as many value heads, heads of 128, a
 * convolution of 4 taps, every 4th layer full attention (rotating the
 * leading quarter of each head).  The decay rates are -1 (A_log 0) and the
 * gated norms 1 (cmd_synth.c's rows).
 */
#include <stdio.h>

#include "arch/cb_arch.h"
#include "synth.h"

void synth_delta_usage(FILE *f)
{
	fprintf(f,
		"          [--linear-k-heads N --linear-v-heads N --linear-head-dim D\n"
		"          --conv-kernel K --full-interval I (qwen3_5_moe; default\n"
		"          --heads, twice that, 128, 4, 4; --head-dim D of its\n"
		"          attention layers, whose leading quarter RoPE rotates)]\n");
}

const char *synth_delta_config(const struct synth_opts *o, struct cb_model_config *c,
			       char *why, size_t len)
{
	const struct synth_delta_opts *x = &o->delta;
	struct cb_delta_config *d = &c->delta;

	d->k_heads = (cb_u32)synth_pick(x->k_heads, o->heads);
	d->v_heads = (cb_u32)synth_pick(x->v_heads, 2 * (long)d->k_heads);
	d->k_dim = (cb_u32)synth_pick(x->head_dim, 128);
	d->v_dim = d->k_dim;
	d->conv_kernel = (cb_u32)synth_pick(x->conv, 4);
	d->full_interval = (cb_u32)synth_pick(x->interval, 4);
	c->rope_dim = c->head_dim / 4 / 2 * 2;
	if (cb_config_check(c, why, len))
		return why;
	return NULL;
}
