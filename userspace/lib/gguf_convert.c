// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_convert.c - GGUF -> .colibri for `colibri convert`.  Kept apart from
 * gguf_model.c so that programs which only run GGUF files do not link the
 * .colibri writer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cb_format.h"
#include "cbfile.h"
#include "cb_gpt_oss.h"
#include "gguf.h"
#include "tokenizer.h"

/* The tensor of the table that a .colibri directory slot stands for. */
static const struct cb_tensor *slot_tensor(const struct hf_model *m,
					   const struct cb_format_slot *s)
{
	const struct cb_layer_weights *L;
	const struct cb_expert_weights *e;

	switch (s->role) {
	case COLIBRI_T_EMBED: return &m->w.embed;
	case COLIBRI_T_FINAL_NORM: return &m->w.final_norm;
	case COLIBRI_T_LM_HEAD: return &m->w.lm_head;
	}
	if (s->layer >= m->cfg.n_layers)
		return NULL;
	L = &m->layers[s->layer];
	if (cb_gpt_oss_tensor((struct cb_layer_weights *)L, s->role))	/* roles 64.. */
		return cb_gpt_oss_tensor((struct cb_layer_weights *)L, s->role);
	switch (s->role) {
	case COLIBRI_T_ATTN_NORM: return &L->attn_norm;
	case COLIBRI_T_WQ: return &L->wq;
	case COLIBRI_T_WK: return &L->wk;
	case COLIBRI_T_WV: return &L->wv;
	case COLIBRI_T_WO: return &L->wo;
	case COLIBRI_T_BQ: return &L->bq;
	case COLIBRI_T_BK: return &L->bk;
	case COLIBRI_T_BV: return &L->bv;
	case COLIBRI_T_Q_NORM: return &L->q_norm;
	case COLIBRI_T_K_NORM: return &L->k_norm;
	case COLIBRI_T_FFN_NORM: return &L->ffn_norm;
	case COLIBRI_T_ROUTER: return &L->router;
	case COLIBRI_T_SHARED_GATE: return &L->shared_gate_proj;
	case COLIBRI_T_SHARED_UP: return &L->shared_up_proj;
	case COLIBRI_T_SHARED_DOWN: return &L->shared_down_proj;
	case COLIBRI_T_SHARED_EXPERT_GATE: return &L->shared_expert_gate;
	case COLIBRI_T_MLP_GATE: return &L->mlp_gate;
	case COLIBRI_T_MLP_UP: return &L->mlp_up;
	case COLIBRI_T_MLP_DOWN: return &L->mlp_down;
	case COLIBRI_T_MLA_Q_A: return &L->q_a;
	case COLIBRI_T_MLA_Q_A_NORM: return &L->q_a_norm;
	case COLIBRI_T_MLA_Q_B: return &L->q_b;
	case COLIBRI_T_MLA_KV_A: return &L->kv_a;
	case COLIBRI_T_MLA_KV_A_NORM: return &L->kv_a_norm;
	case COLIBRI_T_MLA_K_B: return &L->k_b;
	case COLIBRI_T_MLA_V_B: return &L->v_b;
	case COLIBRI_T_ROUTER_SEL_BIAS: return &L->router_sel_bias;
	}
	if (!L->experts || s->expert >= m->cfg.n_experts)
		return NULL;
	e = &L->experts[s->expert];
	switch (s->role) {
	case COLIBRI_T_EXPERT_GATE: return &e->gate;
	case COLIBRI_T_EXPERT_UP: return &e->up;
	case COLIBRI_T_EXPERT_DOWN: return &e->down;
	}
	return NULL;
}

int gguf_convert(const char *src, const char *out, const char *name, int no_tokenizer,
		 char *err, size_t errlen)
{
	struct gguf_model *m = gguf_model_load(src, err, errlen);
	struct cbfile_meta meta = { .bos_id = -1, .eos_id = -1, .pad_id = -1 };
	struct cbfile_writer *w = NULL;
	const struct cb_tensor *t;
	struct cb_format_slot s;
	char *tj = NULL, gname[COLIBRI_FILE_NAME_LEN];
	struct gguf_tok_ids ids;
	struct gguf_str gs;
	uint32_t i, n;
	size_t tl = 0, k;
	int r = -1;

	if (!m)
		return -1;
	/* the tokenizer is optional; a present but unusable one is an error */
	if (!no_tokenizer && gguf_find_kv(m->gf, "tokenizer.ggml.model")) {
		struct cb_tokenizer *tok;

		tj = gguf_tokenizer_json(m->gf, &tl, err, errlen);
		if (!tj)
			goto out;
		/* store only what the reader will be able to load */
		tok = gguf_tokenizer_load(m->gf, err, errlen);
		if (!tok)
			goto out;
		cb_tok_free(tok);
		meta.tokenizer_json = tj;
		meta.tokenizer_len = tl;
		gguf_tokenizer_ids(m->gf, &ids);
		meta.bos_id = ids.bos;
		meta.eos_id = ids.eos;
		meta.pad_id = ids.pad;
		meta.tok_flags = ids.flags;
	}
	/* the chat template, verbatim (it stays mapped until the writer is done) */
	if (!gguf_get_str(m->gf, "tokenizer.chat_template", &gs) && gs.n) {
		meta.chat_template = gs.p;
		meta.chat_template_len = (size_t)gs.n;
	}
	if (!name && !gguf_get_str(m->gf, "general.name", &gs)) {
		/* printable ASCII only, truncated: the header's name rules */
		for (k = 0; k < gs.n && k < sizeof(gname) - 1; k++)
			gname[k] = gs.p[k] >= 0x20 && gs.p[k] < 0x7f ? gs.p[k] : '_';
		gname[k] = 0;
		name = k ? gname : NULL;
	}
	meta.name = name;
	w = cbfile_writer_begin(out, &m->hf.cfg, &meta, err, errlen);
	if (!w)
		goto out;
	n = cbfile_writer_count(w);
	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(&m->hf, &s);
		if (!t || !t->data || t->rows != s.rows || t->cols != s.cols) {
			snprintf(err, errlen, "%s: no tensor for %s (layer %d, expert %d)", src,
				 cb_format_role_name(s.role), (int)s.layer, (int)s.expert);
			goto abort;
		}
		if (cbfile_writer_set_dtype(w, s.role, s.layer, s.expert, t->dtype))
			goto werr;
	}
	if (cbfile_writer_layout(w))
		goto werr;
	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(&m->hf, &s);
		/* GGUF bytes as they are: the block layouts are the same */
		if (cbfile_writer_put(w, s.role, s.layer, s.expert, t->data,
				      (size_t)cb_dtype_row_bytes(t->dtype, t->cols) * t->rows))
			goto werr;
	}
	r = cbfile_writer_finish(w, err, errlen);
	w = NULL;
	goto out;
werr:
	snprintf(err, errlen, "%s: %s", out, cbfile_writer_error(w));
abort:
	cbfile_writer_abort(w);
out:
	free(tj);
	gguf_model_free(m);
	return r;
}
