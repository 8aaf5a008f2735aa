// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * model_source.c - a model held in memory as a tensor source
 * (model_source.h): every slot's tensor stored as it is, in the type the
 * model holds it in (a GGUF file's tensors, in its mapping).
 */
#include <stdio.h>

#include "format/cb_format.h"
#include "format/cb_role.h"
#include "convert/model_source.h"

static int model_find(void *ctx, uint32_t index, const struct cb_format_slot *s,
		      struct tsrc_slot *t, char *err, size_t errlen)
{
	const struct hf_model *m = ctx;
	const struct cb_tensor *x;

	x = cb_role_tensor((struct cb_model_weights *)&m->w, m->layers, m->cfg.n_layers,
			   m->cfg.n_experts, s);
	if (!x || !x->data || x->rows != s->rows || x->cols != s->cols) {
		snprintf(err, errlen, "no tensor for %s (layer %d, expert %d)",
			 cb_format_role_name(s->role), (int)s->layer, (int)s->expert);
		return -1;
	}
	/* the bytes as they are: GGUF's block layouts are the engine's */
	t->keep_dt = (int)x->dtype;
	t->raw_dt = (int)x->dtype;
	t->bytes = x->data;
	t->bytes_dt = (int)x->dtype;
	return 0;
}

void model_source(struct tensor_source *ts, const struct hf_model *m)
{
	*ts = (struct tensor_source){ .cfg = &m->cfg, .ctx = (void *)m, .find = model_find };
}
