/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_deepseek.h - GGUF arch "deepseek2" (DeepSeek-V2/V3, llama.cpp's
 * names and keys): the part of the GGUF loader (gguf_model.c) in
 * gguf_deepseek.c.
 *
 * struct gloader is gguf_model.c's loading state, shared with that file
 * only, and so are the gguf_ld_*() accessors it exports for it.
 */
#ifndef COLIBRI_GGUF_DEEPSEEK_H
#define COLIBRI_GGUF_DEEPSEEK_H

#include <stddef.h>

#include "cb_engine.h"
#include "gguf.h"

struct gloader {
	struct gguf_model *m;
	const struct gguf_file *gf;
	const char *arch;		/* general.architecture, NUL-terminated */
	char *err;
	size_t errlen;
};

/* gguf_model.c: "<arch>.<suffix>" metadata, errors, one tensor (see there) */
int gguf_ld_u32(struct gloader *ld, const char *suffix, long long def, cb_u32 *out);
int gguf_ld_f32(struct gloader *ld, const char *suffix, float def, float *out);
void gguf_ld_err(struct gloader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int gguf_ld_get(struct gloader *ld, struct cb_tensor *out, size_t ostride, const char *name,
		cb_u32 n_exp, cb_u32 rows, cb_u32 cols, int vector);

/*
 * gguf_deepseek_config() - the MLA and routing keys of a deepseek2 file
 * (after the common ones: heads, experts, gating func @gating); sets
 * *head_dim (the q/k head).  0, or -1 with the reason.
 */
int gguf_deepseek_config(struct gloader *ld, cb_u32 gating, cb_u32 *head_dim);

/* gguf_deepseek_layer() - layer @l's MLA tensors (and router bias). */
int gguf_deepseek_layer(struct gloader *ld, cb_u32 l);

#endif /* COLIBRI_GGUF_DEEPSEEK_H */
