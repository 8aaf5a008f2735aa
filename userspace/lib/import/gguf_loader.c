// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_loader.c - what the GGUF model loader is built on (gguf_loader.h):
 * its errors (the file's path first), "<arch>.<suffix>" metadata, and one
 * tensor checked against the shape the metadata gives and placed in the
 * model (in the mapping, or widened to f32 for a vector).  gguf_model.c
 * and gguf_deepseek.c, above it, read a whole model with them.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cb_ops.h"
#include "import/gguf.h"
#include "import/gguf_loader.h"

void gguf_ld_err(struct gloader *ld, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(ld->err, ld->errlen, "%s: ", ld->gf->path);
	if (n < 0 || (size_t)n >= ld->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(ld->err + n, ld->errlen - n, fmt, ap);
	va_end(ap);
}

/* ARCH.suffix as an unsigned integer that fits u32; def when absent. */
int gguf_ld_u32(struct gloader *ld, const char *suffix, long long def, cb_u32 *out)
{
	char key[128];
	uint64_t v;
	int r;

	snprintf(key, sizeof(key), "%s.%s", ld->arch, suffix);
	r = gguf_get_uint(ld->gf, key, &v);
	if (r == -1) {
		if (def < 0) {
			gguf_ld_err(ld, "metadata '%s' is missing", key);
			return -1;
		}
		*out = (cb_u32)def;
		return 0;
	}
	if (r || v > 0xffffffffu) {
		gguf_ld_err(ld, "metadata '%s' is not an integer in range", key);
		return -1;
	}
	*out = (cb_u32)v;
	return 0;
}

int gguf_ld_f32(struct gloader *ld, const char *suffix, float def, float *out)
{
	char key[128];
	int r;

	snprintf(key, sizeof(key), "%s.%s", ld->arch, suffix);
	r = gguf_get_f32(ld->gf, key, out);
	if (r == -1) {
		*out = def;
		return 0;
	}
	if (r || !(*out == *out)) {
		gguf_ld_err(ld, "metadata '%s' is not a number", key);
		return -1;
	}
	return 0;
}

static void shape_str(char *buf, size_t n, const struct gguf_tensor *t)
{
	int k, o = 0;

	for (k = 0; k < (int)t->n_dims && o >= 0 && (size_t)o < n; k++)
		o += snprintf(buf + o, n - o, k ? ", %llu" : "%llu", (unsigned long long)t->ne[k]);
}

/*
 * The tensor @name as @rows x @cols (or [n_exp][rows][cols] when n_exp > 0:
 * then @out gets n_exp entries, stride @ostride bytes apart).  Vectors
 * (rows == 1 && vector) must end up f32; F16/BF16 vectors are widened.
 */
int gguf_ld_get(struct gloader *ld, struct cb_tensor *out, size_t ostride, const char *name,
		cb_u32 n_exp, cb_u32 rows, cb_u32 cols, int vector)
{
	const struct gguf_tensor *t = gguf_find_tensor(ld->gf, name);
	cb_u64 want[GGUF_MAX_DIMS] = { cols, rows, n_exp ? n_exp : 1, 1 };
	cb_u64 rb, i;
	cb_s64 bad;
	int dt, k, ok = 1;
	char sh[96];

	if (!t) {
		gguf_ld_err(ld, "tensor '%s' is missing", name);
		return -1;
	}
	dt = gguf_type_to_cb(t->type);
	if (dt < 0) {
		char list[256];

		gguf_ld_err(ld, "tensor '%s': type %s is not supported (supported: %s)", name,
			    gguf_type_name(t->type), gguf_supported_types(list, sizeof(list)));
		return -1;
	}
	for (k = 0; k < GGUF_MAX_DIMS; k++)
		ok &= t->ne[k] == want[k];
	if (!ok) {
		shape_str(sh, sizeof(sh), t);
		if (n_exp)
			gguf_ld_err(ld, "tensor '%s': shape [%s] (GGUF order), expected "
				    "[%u, %u, %u] from the metadata", name, sh, cols, rows, n_exp);
		else
			gguf_ld_err(ld, "tensor '%s': shape [%s] (GGUF order), expected "
				    "[%u, %u] from the metadata", name, sh, cols, rows);
		return -1;
	}
	rb = cb_dtype_row_bytes(dt, cols);
	if (!rb) {
		gguf_ld_err(ld, "tensor '%s': rows of %u elements are not a whole number of %s "
			    "blocks (%u)", name, cols, gguf_type_name(t->type), cb_dtype_block(dt));
		return -1;
	}
	if (t->nbytes != rb * rows * (n_exp ? n_exp : 1)) {
		gguf_ld_err(ld, "tensor '%s': %llu bytes of %s do not match its shape", name,
			    (unsigned long long)t->nbytes, gguf_type_name(t->type));
		return -1;
	}
	bad = cb_quant_find_bad_scale((cb_u32)dt, t->data,
				      t->nbytes / cb_dtype_info(dt)->block_bytes);
	if (bad >= 0) {
		gguf_ld_err(ld, "tensor '%s': %s block %lld has a scale that is not finite", name,
			    gguf_type_name(t->type), (long long)bad);
		return -1;
	}
	if (vector && dt != CB_DT_F32) {
		float *v;

		if (dt != CB_DT_F16 && dt != CB_DT_BF16) {
			gguf_ld_err(ld, "%s: a norm or bias stored as %s is not supported", name,
				    gguf_type_name(t->type));
			return -1;
		}
		v = malloc((size_t)cols * sizeof(float));
		if (!v || hf_model_own(&ld->m->hf, v)) {
			free(v);
			gguf_ld_err(ld, "out of memory");
			return -1;
		}
		for (i = 0; i < cols; i++) {
			cb_u16 h;

			memcpy(&h, (const char *)t->data + 2 * i, 2);
			v[i] = dt == CB_DT_F16 ? cb_f16_to_f32(h) : cb_bf16_to_f32(h);
		}
		out->data = v;
		out->dtype = CB_DT_F32;
		out->rows = 1;
		out->cols = cols;
		return 0;
	}
	/* the mapping is page aligned and offsets are multiples of general.alignment */
	if ((uintptr_t)t->data % (dt == CB_DT_F32 ? 4 : 2)) {
		gguf_ld_err(ld, "tensor '%s': data is not aligned to its element size "
			    "(general.alignment %u)", name, ld->gf->alignment);
		return -1;
	}
	for (i = 0; i < (n_exp ? n_exp : 1); i++) {
		struct cb_tensor *o = (struct cb_tensor *)((char *)out + i * ostride);

		o->data = (const char *)t->data + i * rows * rb;	/* expert i in place */
		o->dtype = dt;
		o->rows = rows;
		o->cols = cols;
	}
	return 0;
}
