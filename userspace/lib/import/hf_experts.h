/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_experts.h - routed experts saved fused, as transformers 5 writes
 * them (Qwen3.5's checkpoints): one layer's experts in two 3-D tensors
 * (hf_experts.c).  Both HF readers ask here when a layer has no
 * per-expert tensors.
 */
#ifndef COLIBRI_HF_EXPERTS_H
#define COLIBRI_HF_EXPERTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/cb_engine.h"
#include "import/hf_loader.h"

struct st_set;
struct st_tensor;

/*
 * hf_experts_fused() - the fused tensor that expert @x's @role (gate, up
 * or down) of layer @l is in, checked against the config, and the first
 * of its rows there (each expert's rows are contiguous); NULL when the
 * layer has none (then the per-expert names apply), or NULL with the
 * mismatch in @err (@bad set).
 */
const struct st_tensor *hf_experts_fused(const struct st_set *st,
					 const struct cb_model_config *c, cb_u32 role, cb_u32 l,
					 cb_u32 x, uint64_t *row0, int *bad, char *err,
					 size_t errlen);

/* Is @t a layer's fused experts (3-D), and expert @x's @role's first row in it? */
int hf_experts_cut(const struct cb_model_config *c, const struct st_tensor *t, cb_u32 role,
		   cb_u32 x, uint64_t *row0);

/*
 * hf_experts_load() - expert @x's @role of layer @l from the fused tensor
 * @t (hf_experts_fused()'s, rows from @row0) into the type
 * cb_quant_choose() gives it, owned by the model.  0, or -1 in ld->err.
 */
int hf_experts_load(struct hf_loader *ld, struct cb_tensor *out, const struct st_tensor *t,
		    uint64_t row0, cb_u32 rows, cb_u32 cols, cb_u32 role, cb_u32 l);

#endif /* COLIBRI_HF_EXPERTS_H */
