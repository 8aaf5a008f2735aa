// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * model_write.c - a model held in memory into a .colibri writer: the
 * GGUF converter's last step (model_write.h).
 */
#include <stdio.h>

#include "format/cb_format.h"
#include "format/cb_role.h"
#include "convert/model_write.h"

/* The tensor of @m a slot names, or NULL. */
static const struct cb_tensor *slot_tensor(const struct hf_model *m,
					   const struct cb_format_slot *s)
{
	return cb_role_tensor((struct cb_model_weights *)&m->w, m->layers, m->cfg.n_layers,
			      m->cfg.n_experts, s);
}

int hf_model_write(const struct hf_model *m, struct cbfile_writer *w, char *err, size_t errlen)
{
	const struct cb_tensor *t;
	struct cb_format_slot s;
	uint32_t i, n = cbfile_writer_count(w);

	for (i = 0; i < n; i++) {
		if (cbfile_writer_slot(w, i, &s))
			goto werr;
		t = slot_tensor(m, &s);
		if (!t || !t->data || t->rows != s.rows || t->cols != s.cols) {
			snprintf(err, errlen, "no tensor for %s (layer %d, expert %d)",
				 cb_format_role_name(s.role), (int)s.layer, (int)s.expert);
			return -2;
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
		/* the bytes as they are: GGUF's block layouts are the engine's */
		if (cbfile_writer_put(w, s.role, s.layer, s.expert, t->data,
				      (size_t)cb_dtype_row_bytes(t->dtype, t->cols) * t->rows))
			goto werr;
	}
	return 0;
werr:
	snprintf(err, errlen, "%s", cbfile_writer_error(w));
	return -1;
}
