/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * model_source.h - a model held in memory (struct hf_model: a GGUF file's
 * tensors in place in its mapping) as a tensor source for the pipeline
 * (tensor_source.h): each slot stored as it is.
 */
#ifndef COLIBRI_MODEL_SOURCE_H
#define COLIBRI_MODEL_SOURCE_H

#include "convert/tensor_source.h"
#include "import/hf_loader.h"

/*
 * model_source() - @ts reads @m (which must outlive it).  A slot @m has no
 * tensor for, or one of another shape, is the source's error: "no tensor
 * for ROLE (layer L, expert E)".
 */
void model_source(struct tensor_source *ts, const struct hf_model *m);

#endif /* COLIBRI_MODEL_SOURCE_H */
