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
 *
 * qwen3next (Qwen3-Next) is written alike but for two things: its value
 * heads keep HF's grouped order, and b and a stay fused in ssm_ba (for each
 * key head, b then a of its value heads), cut apart here by the rows
 * HF's in_proj_ba has (hf_fused.c).  Its oldest files' ssm_in (the raw
 * in_proj_qkvz) is refused: llama.cpp's converter has written attn_qkv
 * and attn_gate since.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/cb_arch.h"
#include "format/cb_format.h"
#include "import/gguf.h"
#include "import/gguf_delta.h"
#include "import/gguf_names.h"
#include "import/hf_fused.h"

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
	d->flags = c->arch == COLIBRI_ARCH_QWEN3_5_MOE ? CB_DELTA_F_TILED : 0;
	return 0;
}

/* b or a (@role) of layer @l: the rows of ssm_ba HF's in_proj_ba has them at. */
static int cut_ba(struct gloader *ld, cb_u32 l, cb_u32 role, struct cb_tensor *out)
{
	const struct cb_model_config *c = &ld->m->hf.cfg;
	struct cb_tensor ba;
	cb_u64 rb, r;
	char n[256], *dst;

	snprintf(n, sizeof(n), "blk.%u.ssm_ba.weight", l);
	if (gguf_ld_get(ld, &ba, 0, n, 0, 2 * c->delta.v_heads, c->hidden, 0))
		return -1;
	rb = cb_dtype_row_bytes(ba.dtype, ba.cols);
	dst = aligned_alloc(64, CB_ALIGN(rb * c->delta.v_heads, (cb_u64)64));
	if (!dst || hf_model_own(&ld->m->hf, dst)) {
		free(dst);
		gguf_ld_err(ld, "tensor '%s': out of memory", n);
		return -1;
	}
	for (r = 0; r < c->delta.v_heads; r++)
		memcpy(dst + r * rb, (const char *)ba.data +
		       (cb_u64)hf_fused_row(c, role, (cb_u32)r) * rb, rb);
	*out = ba;
	out->data = dst;
	out->rows = c->delta.v_heads;
	return 0;
}

int gguf_delta_layer(struct gloader *ld, cb_u32 l)
{
	const struct cb_model_config *c = &ld->m->hf.cfg;
	const struct cb_arch_desc *a = cb_arch_of(c->arch);
	const struct cb_delta_config *d = &c->delta;
	struct cb_delta_layer *D = &ld->m->hf.layers[l].delta;
	cb_u32 vd = d->v_heads * d->v_dim, cd = 2 * d->k_heads * d->k_dim + vd, H = c->hidden;
	char n[256];

#define LD(field, role, rows, cols, vec)						\
	do {										\
		if (gguf_tensor_name(a, role, l, n, sizeof(n)) ||			\
		    gguf_ld_get(ld, &D->field, 0, n, 0, rows, cols, vec))		\
			return -1;							\
	} while (0)
	snprintf(n, sizeof(n), "blk.%u.ssm_in.weight", l);
	if (gguf_find_tensor(ld->gf, n)) {
		gguf_ld_err(ld, "tensor '%s': the fused in_proj_qkvz of older qwen3next files is "
			    "not read (llama.cpp's converter now writes attn_qkv and attn_gate)", n);
		return -1;
	}
	LD(qkv, COLIBRI_T_DELTA_QKV, cd, H, 0);
	LD(z, COLIBRI_T_DELTA_Z, vd, H, 0);
	if (hf_fused_role(c, COLIBRI_T_DELTA_B)) {
		if (cut_ba(ld, l, COLIBRI_T_DELTA_B, &D->b) ||
		    cut_ba(ld, l, COLIBRI_T_DELTA_A, &D->a))
			return -1;
	} else {
		LD(b, COLIBRI_T_DELTA_B, d->v_heads, H, 0);
		LD(a, COLIBRI_T_DELTA_A, d->v_heads, H, 0);
	}
	LD(conv, COLIBRI_T_DELTA_CONV, cd, d->conv_kernel, 0);
	LD(decay, COLIBRI_T_DELTA_DECAY, 1, d->v_heads, 1);
	LD(dt_bias, COLIBRI_T_DELTA_DT_BIAS, 1, d->v_heads, 1);
	LD(norm, COLIBRI_T_DELTA_NORM, 1, d->v_dim, 1);
	LD(out, COLIBRI_T_DELTA_OUT, H, vd, 0);
#undef LD
	return 0;
}
