// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_gpt_oss_write.c - `colibri convert` of a GPT-OSS directory: the model
 * is loaded whole (hf_model_load(): its fused experts are rebuilt in
 * memory, hf_gpt_oss.c), and every tensor the .colibri file's config
 * requires is put in the type the load gave it.
 */
#include <stdio.h>

#include "cb_format.h"
#include "cb_gpt_oss.h"
#include "cb_ops.h"
#include "cbfile.h"
#include "hf_gpt_oss.h"
#include "hfmodel.h"

/* The tensor of @m a GPT-OSS slot names, or NULL. */
static const struct cb_tensor *slot_tensor(struct hf_model *m, const struct cb_format_slot *s)
{
	struct cb_layer_weights *L;
	const struct cb_tensor *t;

	switch (s->role) {
	case COLIBRI_T_EMBED: return &m->w.embed;
	case COLIBRI_T_FINAL_NORM: return &m->w.final_norm;
	case COLIBRI_T_LM_HEAD: return &m->w.lm_head;
	}
	if (s->layer >= m->cfg.n_layers)
		return NULL;
	L = &m->layers[s->layer];
	t = cb_gpt_oss_tensor(L, s->role);
	if (t)
		return t;
	switch (s->role) {
	case COLIBRI_T_ATTN_NORM: return &L->attn_norm;
	case COLIBRI_T_WQ: return &L->wq;
	case COLIBRI_T_WK: return &L->wk;
	case COLIBRI_T_WV: return &L->wv;
	case COLIBRI_T_WO: return &L->wo;
	case COLIBRI_T_BQ: return &L->bq;
	case COLIBRI_T_BK: return &L->bk;
	case COLIBRI_T_BV: return &L->bv;
	case COLIBRI_T_FFN_NORM: return &L->ffn_norm;
	case COLIBRI_T_ROUTER: return &L->router;
	}
	if (!L->experts || s->expert >= m->cfg.n_experts)
		return NULL;
	switch (s->role) {
	case COLIBRI_T_EXPERT_GATE: return &L->experts[s->expert].gate;
	case COLIBRI_T_EXPERT_UP: return &L->experts[s->expert].up;
	case COLIBRI_T_EXPERT_DOWN: return &L->experts[s->expert].down;
	}
	return NULL;
}

int hf_gpt_oss_write(const char *dir, const struct cb_quant *q, struct cbfile_writer *w,
		     char *err, size_t errlen)
{
	struct hf_model *m = hf_model_load(dir, q, err, errlen);
	const struct cb_tensor *t;
	struct cb_format_slot s;
	uint32_t i, n = cbfile_writer_count(w);
	int r = -1;

	if (!m)
		return -1;
	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(m, &s);
		if (!t || !t->data || t->rows != s.rows || t->cols != s.cols) {
			snprintf(err, errlen, "no tensor for %s (layer %d, expert %d)",
				 cb_format_role_name(s.role), (int)s.layer, (int)s.expert);
			goto out;
		}
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, t->dtype))
			goto werr;
	}
	if (cbfile_writer_layout(w))
		goto werr;
	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(m, &s);
		if (cbfile_writer_put(w, s.role, s.layer, s.expert, t->data,
				      (size_t)cb_dtype_row_bytes(t->dtype, t->cols) * t->rows))
			goto werr;
	}
	r = 0;
	goto out;
werr:
	snprintf(err, errlen, "%s", cbfile_writer_error(w));
out:
	hf_model_free(m);
	return r;
}
