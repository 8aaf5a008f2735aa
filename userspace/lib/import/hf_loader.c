// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_loader.c - what the Hugging Face reader builds a model with
 * (hf_loader.h): the struct hf_model it fills and what the model owns,
 * one tensor by name checked and converted to the type its role gets,
 * and a tensor's shape checked against config.json's.  hfmodel.c and the
 * architectures' files (hf_deepseek.c, hf_gpt_oss.c, hf_gpt_oss_mxfp4.c)
 * are above it; gguf_model.c fills the same struct hf_model.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/cb_ops.h"
#include "import/hf_loader.h"
#include "import/hf_values.h"
#include "import/safetensors.h"

int hf_fail(struct hf_loader *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ld->err, ld->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int hf_model_own(struct hf_model *m, void *p)
{
	if (m->nowned == m->capowned) {
		int cap = m->capowned ? 2 * m->capowned : 256;
		void **n = realloc(m->owned, cap * sizeof(*n));

		if (!n)
			return -1;
		m->owned = n;
		m->capowned = cap;
	}
	m->owned[m->nowned++] = p;
	return 0;
}

const struct st_tensor *hf_find_tensor(const struct st_set *st, const char *name, char *err,
					size_t errlen)
{
	const struct st_tensor *t = st_set_find(st, name);

	if (!t) {
		snprintf(err, errlen, "tensor '%s' is missing", name);
		return NULL;
	}
	if (t->dtype == ST_OTHER) {
		snprintf(err, errlen, "tensor '%s': dtype %s is not supported (F32, F16, BF16, "
			 "F8_E4M3, F8_E5M2 are)", name, t->dtype_name);
		return NULL;
	}
	return t;
}

int hf_load_rows(struct hf_loader *ld, struct cb_tensor *out, const struct st_tensor *t,
		 int dt, cb_u32 rows, cb_u32 cols, cb_u32 role,
		 cb_u64 (*row_of)(const void *ctx, cb_u32 r), const void *ctx)
{
	int differ = hf_values_differ(&ld->m->cfg, role);
	cb_u64 rb = cb_dtype_row_bytes(dt, cols), total = CB_ALIGN(rb * rows, 64);
	cb_s64 bad;
	cb_u32 r;
	char *dst;

	dst = aligned_alloc(64, total ? total : 64);
	if (!dst || hf_model_own(ld->m, dst)) {
		free(dst);
		return hf_fail(ld, "tensor '%s': out of memory", t->name);
	}
	if (ld->rowcap < cols) {
		free(ld->row);
		ld->row = malloc(cols * sizeof(float));
		ld->rowcap = ld->row ? cols : 0;
		if (!ld->row)
			return hf_fail(ld, "tensor '%s': out of memory", t->name);
	}
	for (r = 0; r < rows; r++) {
		st_to_f32(ld->row, t, (row_of ? row_of(ctx, r) : r) * cols, cols);
		if (differ)
			hf_values_to_file(&ld->m->cfg, role, ld->row, cols);
		cb_quantize_row(dt, dst + (cb_u64)r * rb, ld->row, (int)cols);
	}
	bad = cb_quant_find_bad_scale((cb_u32)dt, dst, rb * rows / cb_dtype_info(dt)->block_bytes);
	if (bad >= 0)
		return hf_fail(ld, "tensor '%s': quantized to %s, block %lld has a scale that is not "
			       "finite (weights too large for the type)", t->name, cb_dtype_name(dt),
			       (long long)bad);
	out->data = dst;
	out->dtype = (cb_u32)dt;
	out->rows = rows;
	out->cols = cols;
	return 0;
}

int hf_load_tensor(struct hf_loader *ld, struct cb_tensor *out, const char *name,
		   cb_u32 rows, cb_u32 cols, int vector, cb_u32 role, cb_u32 layer)
{
	const struct st_tensor *t = hf_find_tensor(ld->m->st, name, ld->err, ld->errlen);
	int dt, src_dt;

	if (!t)
		return -1;
	if (!hf_shape_ok(role, t, vector ? 1 : rows, cols, vector)) {
		hf_fail(ld, "tensor '%s': shape does not match config.json (want %u x %u)",
			name, rows, cols);
		return -1;
	}
	if (st_check_values(t, ld->err, ld->errlen))
		return -1;
	if (vector)
		rows = 1;
	src_dt = st_keep_dtype(t);
	dt = vector ? CB_DT_F32 :
		      cb_quant_choose(&ld->q, &ld->m->cfg, role, layer, cols, src_dt);
	/* same type, aligned and the file's values: use the mapping in place */
	if (dt == st_cb_dtype(t) && !hf_values_differ(&ld->m->cfg, role) &&
	    !((uintptr_t)t->data % (dt == CB_DT_F32 ? 4 : 2))) {
		out->data = t->data;
		out->dtype = (cb_u32)dt;
		out->rows = rows;
		out->cols = cols;
		return 0;
	}
	return hf_load_rows(ld, out, t, dt, rows, cols, role, NULL, NULL);
}

int hf_check_shape(const struct st_tensor *t, const char *name, int ndim, const uint64_t *shape,
		   char *err, size_t errlen)
{
	char want[96];
	int i, k = 0;

	if (t->ndim == ndim) {
		for (i = 0; i < ndim && t->shape[i] == shape[i]; i++)
			;
		if (i == ndim)
			return 0;
	}
	for (i = 0; i < ndim; i++)
		k += snprintf(want + k, sizeof(want) - k, "%s%llu", i ? " x " : "",
			      (unsigned long long)shape[i]);
	snprintf(err, errlen, "tensor '%s': shape does not match config.json (want %s)", name,
		 want);
	return -1;
}

void hf_model_release(struct hf_model *m)
{
	int i;

	for (i = 0; i < m->nowned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->layers);
	free(m->experts);
}

void hf_model_free(struct hf_model *m)
{
	if (!m)
		return;
	hf_model_release(m);
	st_set_close(m->st);
	free(m);
}
