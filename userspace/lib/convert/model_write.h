/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * model_write.h - a model held in memory (struct hf_model: a GGUF file's
 * tensors in place in its mapping) into a .colibri writer.
 */
#ifndef COLIBRI_MODEL_WRITE_H
#define COLIBRI_MODEL_WRITE_H

#include <stddef.h>

#include "model/cbfile.h"
#include "import/hf_loader.h"

/**
 * hf_model_write() - put every tensor the writer's config requires, each
 *	in the type @m holds it in, and lay the file out.
 * @m: the model.
 * @w: a writer begun with @m's config; the caller finishes or aborts it.
 * @err: one line on failure.
 * @errlen: its size.
 *
 * Return: 0; -1, the writer's error in @err; -2, a tensor @m lacks (or of
 * another shape) named in @err ("no tensor for ROLE (layer L, expert E)").
 */
int hf_model_write(const struct hf_model *m, struct cbfile_writer *w, char *err, size_t errlen);

#endif /* COLIBRI_MODEL_WRITE_H */
