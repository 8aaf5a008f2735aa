/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_loader.h - the GGUF model loader's state and what it reads a model
 * with (gguf_loader.c), shared by the loader's two files: gguf_model.c
 * (every architecture) and gguf_deepseek.c (deepseek2's MLA).
 */
#ifndef COLIBRI_GGUF_LOADER_H
#define COLIBRI_GGUF_LOADER_H

#include <stddef.h>

#include "core/cb_engine.h"
#include "import/gguf.h"

struct gloader {
	struct gguf_model *m;
	const struct gguf_file *gf;
	const char *arch;		/* general.architecture, NUL-terminated */
	char *err;
	size_t errlen;
};

/*
 * "<arch>.<suffix>" metadata: an unsigned integer that fits u32, or a
 * number; @def when absent (gguf_ld_u32(): a negative @def makes it
 * required).  0, or -1 with the error set.
 */
int gguf_ld_u32(struct gloader *ld, const char *suffix, long long def, cb_u32 *out);
int gguf_ld_f32(struct gloader *ld, const char *suffix, float def, float *out);
/* The error, "<path>: message". */
void gguf_ld_err(struct gloader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The tensor @name as @rows x @cols (or [n_exp][rows][cols] when n_exp > 0:
 * then @out gets n_exp entries, stride @ostride bytes apart).  Vectors
 * (rows == 1 && vector) must end up f32; F16/BF16 vectors are widened.
 * 0, or -1 with the error set.
 */
int gguf_ld_get(struct gloader *ld, struct cb_tensor *out, size_t ostride, const char *name,
		cb_u32 n_exp, cb_u32 rows, cb_u32 cols, int vector);

#endif /* COLIBRI_GGUF_LOADER_H */
