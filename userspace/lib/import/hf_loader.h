/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_loader.h - the model a Hugging Face directory is read into, and what
 * the reader's files (hfmodel.c, hf_deepseek.c, hf_gpt_oss.c,
 * hf_gpt_oss_mxfp4.c) read it with (hf_loader.c).  gguf_model.c builds the
 * same struct hf_model.
 */
#ifndef COLIBRI_HF_LOADER_H
#define COLIBRI_HF_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/cb_engine.h"
#include "quant/quant_preset.h"

struct st_set;
struct st_tensor;

struct hf_model {
	struct cb_model_config cfg;
	struct cb_model_weights w;
	struct cb_layer_weights *layers;	/* [n_layers] */
	struct cb_expert_weights *experts;	/* [n_layers * n_experts] */
	char arch_name[64];
	void **owned;		/* converted tensors, freed with the model */
	int nowned, capowned;
	struct st_set *st;	/* mapped files; unconverted tensors point here */
};

/*
 * For loaders that build a struct hf_model (hfmodel.c, gguf_model.c):
 * hf_model_own() makes @p (malloc'ed tensor data) the model's, freed with
 * it; 0, or -1 without memory (then @p is still the caller's).
 * hf_model_release() frees what the model owns, its layer and expert
 * tables, but neither the struct nor the files it maps; hf_model_free()
 * all of it.
 */
int hf_model_own(struct hf_model *m, void *p);
void hf_model_release(struct hf_model *m);
void hf_model_free(struct hf_model *m);

/* The reader's state while it loads one model (hfmodel.c's hf_model_load()). */
struct hf_loader {
	struct hf_model *m;
	struct cb_quant q;
	char *err;
	size_t errlen;
	float *row;		/* one row of f32, for conversions */
	size_t rowcap;
};

/* hf_fail() - the reason, printf-style, into ld->err; returns -1. */
int hf_fail(struct hf_loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The tensor @name of @st, of a dtype the reader converts (F32, F16, BF16,
 * FP8), or NULL with "tensor '@name' is missing" or "... dtype X is not
 * supported (...)" in @err.
 */
const struct st_tensor *hf_find_tensor(const struct st_set *st, const char *name, char *err,
					size_t errlen);

/*
 * hf_load_rows() - @rows rows of @cols from @t, row r being @t's row
 * row_of(@ctx, r) (r itself when @row_of is NULL: rows cut from a fused
 * tensor otherwise), each as the file holds @role's values
 * (hf_values.c), quantized to @dt into memory the model owns.  0, or -1
 * with the tensor named in ld->err.
 */
int hf_load_rows(struct hf_loader *ld, struct cb_tensor *out, const struct st_tensor *t,
		 int dt, cb_u32 rows, cb_u32 cols, cb_u32 role,
		 cb_u64 (*row_of)(const void *ctx, cb_u32 r), const void *ctx);

/* One tensor by name, vector (f32) or matrix (the type its role gets). */
int hf_load_tensor(struct hf_loader *ld, struct cb_tensor *out, const char *name,
		   cb_u32 rows, cb_u32 cols, int vector, cb_u32 role, cb_u32 layer);

/*
 * 0 if @t has @ndim dimensions of exactly @shape, else -1 with "tensor
 * '@name': shape does not match config.json (want A x B ...)" in @err.
 */
int hf_check_shape(const struct st_tensor *t, const char *name, int ndim, const uint64_t *shape,
		   char *err, size_t errlen);

#endif /* COLIBRI_HF_LOADER_H */
