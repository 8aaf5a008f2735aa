/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_names.h - the Hugging Face name of each tensor role: the usual one,
 * or the architecture's own (its arch file's hf_names).
 */
#ifndef COLIBRI_HF_NAMES_H
#define COLIBRI_HF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "core/cb_engine.h"

/*
 * hf_tensor_name() - the HF tensor name of a .colibri tensor role
 * (enum colibri_tensor_role) in layer @layer, expert @expert.
 * Return: 0, or -1 for a role HF does not have or a short buffer.
 */
int hf_tensor_name(const struct cb_model_config *cfg, uint32_t role, uint32_t layer,
		   uint32_t expert, char *buf, size_t len);

#endif /* COLIBRI_HF_NAMES_H */
