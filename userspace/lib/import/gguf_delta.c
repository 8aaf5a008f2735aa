// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_delta.c - llama.cpp's qwen35moe (Qwen3.5/3.6-MoE) DeltaNet keys.
 *
 * Its converter (conversion/qwen.py, Qwen3NextModel and
 * _LinearAttentionVReorderBase) writes a DeltaNet layer as attn_qkv,
 * attn_gate (z), ssm_beta, ssm_alpha, ssm_conv1d ({taps, channels}),
 * ssm_a (-exp(A_log), no ".weight"), ssm_dt.bias, ssm_norm and ssm_out;
 * the norms it stores are HF's plus 1 (what the engine multiplies by);
 * and, where key and value heads differ in number, it reorders the value
 * heads from HF's groups to tiles (value head h then uses key head
 * h % k_heads): CB_DELTA_F_TILED.  The full-attention layers' attn_q
 * keeps HF's q and gate per head; the FFN's input norm is
 * post_attention_norm.  The multi-token-prediction block after the last
 * layer (nextn_predict_layers) and rope.dimension_sections (the same
 * position in every section for text) are not read.
 */
#include "import/gguf_delta.h"

int gguf_delta_config(struct gloader *ld)
{
	struct cb_model_config *c = &ld->m->hf.cfg;
	struct cb_delta_config *d = &c->delta;
	cb_u32 inner;

	if (gguf_ld_u32(ld, "ssm.group_count", -1, &d->k_heads) ||
	    gguf_ld_u32(ld, "ssm.time_step_rank", -1, &d->v_heads) ||
	    gguf_ld_u32(ld, "ssm.state_size", -1, &d->k_dim) ||
	    gguf_ld_u32(ld, "ssm.inner_size", -1, &inner) ||
	    gguf_ld_u32(ld, "ssm.conv_kernel", -1, &d->conv_kernel) ||
	    gguf_ld_u32(ld, "full_attention_interval", 4, &d->full_interval))
		return -1;
	if (!d->v_heads || inner % d->v_heads) {
		gguf_ld_err(ld, "%s.ssm.inner_size %u is not a multiple of ssm.time_step_rank %u",
			    ld->arch, inner, d->v_heads);
		return -1;
	}
	d->v_dim = inner / d->v_heads;
	d->flags = CB_DELTA_F_TILED;
	return 0;
}
