// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_gpt_oss_write.c - `colibri convert` of a GPT-OSS directory: the model
 * is loaded whole (hf_model_load(): its fused experts are rebuilt in
 * memory, hf_gpt_oss.c), and every tensor the .colibri file's config
 * requires is put in the type the load gave it.
 */
#include <stdio.h>

#include "cb_format.h"
#include "cb_role.h"
#include "cb_ops.h"
#include "cbfile.h"
#include "hf_gpt_oss.h"
#include "hfmodel.h"

/* The tensor of @m a GPT-OSS slot names, or NULL. */
static const struct cb_tensor *slot_tensor(struct hf_model *m, const struct cb_format_slot *s)
{
	return cb_role_tensor(&m->w, m->layers, m->cfg.n_layers, m->cfg.n_experts, s);
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
