/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_fused.h - Qwen3-Next's fused DeltaNet projections (hf_fused.c): which
 * roles are cut from in_proj_qkvz and in_proj_ba, and from which rows.
 */
#ifndef COLIBRI_HF_FUSED_H
#define COLIBRI_HF_FUSED_H

#include <stdint.h>

#include "core/cb_engine.h"
#include "import/hf_loader.h"

/* Is @role cut from a fused tensor of this model's checkpoint? */
int hf_fused_role(const struct cb_model_config *c, cb_u32 role);

/* The fused tensor's rows (its columns are hidden's). */
cb_u32 hf_fused_rows(const struct cb_model_config *c, cb_u32 role);

/* The fused tensor's row that row @r of @role is. */
cb_u32 hf_fused_row(const struct cb_model_config *c, cb_u32 role, cb_u32 r);

/*
 * hf_fused_load() - @role of layer @layer, @rows x @cols, cut from the
 * fused tensor @name into the type cb_quant_choose() gives the role, owned
 * by the model.  0, or -1 with the tensor named in ld->err.
 */
int hf_fused_load(struct hf_loader *ld, struct cb_tensor *out, const char *name,
		  cb_u32 rows, cb_u32 cols, cb_u32 role, cb_u32 layer);

#endif /* COLIBRI_HF_FUSED_H */
