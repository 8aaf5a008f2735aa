/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_values.h - the Hugging Face tensors whose checkpoint values or shape
 * differ from what a .colibri file holds (hf_values.c).  Both HF readers
 * (hf_loader.c in process, hf_slot.c for the converter) ask here.
 */
#ifndef COLIBRI_HF_VALUES_H
#define COLIBRI_HF_VALUES_H

#include <stdint.h>

#include "core/cb_engine.h"

struct st_tensor;

/*
 * Does the checkpoint store @role's values otherwise than the file?  The
 * zero-centred RMSNorms of an architecture that has them (the file holds
 * 1 + w) and the DeltaNet decay (A_log; the file holds -exp(A_log)).
 */
int hf_values_differ(const struct cb_model_config *c, cb_u32 role);

/* The checkpoint's @n values of @role into the file's, in place. */
void hf_values_to_file(const struct cb_model_config *c, cb_u32 role, float *v, uint64_t n);

/*
 * Is @t the checkpoint's shape of @role, @rows x @cols?  [rows, cols],
 * [cols] for a one-row vector, or the convolution's [rows, 1, cols].
 */
int hf_shape_ok(cb_u32 role, const struct st_tensor *t, cb_u32 rows, cb_u32 cols, int vector);

#endif /* COLIBRI_HF_VALUES_H */
