/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * quant_preset.h - what `--quant T` stores each tensor as.
 *
 * T is "keep" (every matrix in its source type), one of llama.cpp's
 * quantization presets ("q4_k_m", "q6_k", "iq4_xs", "Q4_0", ...; see
 * cb_quant_parse()), which give most matrices a base type and some more
 * bits, by role and layer, as llama-quantize does (docs/format.md,
 * "Quantization presets"), or one type for every matrix: "f32", "f16",
 * "bf16", "q8_0", "q4_0" (the converter's first types) or "TYPE:pure" for
 * any type ("q4_K:pure").  Whatever T says, norms and biases are f32 and
 * the router and the shared-expert gate stay f32; a matrix whose rows are
 * not a whole number of the chosen type's blocks falls back to a type that
 * fits (see cb_quant_choose()).
 */
#ifndef COLIBRI_QUANT_PRESET_H
#define COLIBRI_QUANT_PRESET_H

#include <stdint.h>

#include "core/cb_engine.h"

/* llama.cpp's presets (LLAMA_FTYPE_MOSTLY_*) that Colibri can write. */
enum cb_preset {
	CB_PRESET_NONE = 0,	/* a single type (or keep) */
	CB_PRESET_Q2_K,
	CB_PRESET_Q3_K_S,
	CB_PRESET_Q3_K_M,
	CB_PRESET_Q3_K_L,
	CB_PRESET_Q4_0,
	CB_PRESET_Q4_1,
	CB_PRESET_Q4_K_S,
	CB_PRESET_Q4_K_M,
	CB_PRESET_Q5_0,
	CB_PRESET_Q5_1,
	CB_PRESET_Q5_K_S,
	CB_PRESET_Q5_K_M,
	CB_PRESET_Q6_K,
	CB_PRESET_Q8_0,
	CB_PRESET_IQ4_NL,
	CB_PRESET_IQ4_XS,
	CB_PRESET__COUNT
};

/* Keep each matrix in the type it has in the source. */
#define CB_QUANT_KEEP (-1)

/**
 * struct cb_quant - a parsed --quant.
 * @preset: enum cb_preset, or CB_PRESET_NONE for a single type.
 * @dtype: the single type (enum cb_dtype) or CB_QUANT_KEEP; for a preset,
 *	its base type.
 */
struct cb_quant {
	int preset;
	int dtype;
};

/*
 * cb_quant_parse() - "keep"; a preset: q2_k q3_k_s q3_k_m (alias q3_k)
 * q3_k_l q4_k_s q4_k_m (q4_k) q5_k_s q5_k_m (q5_k) q6_k iq4_nl iq4_xs
 * q4_1 q5_0 q5_1 in any case, "Q4_0" and "Q8_0" in capitals; the single
 * types "f32" "f16" "bf16" "q8_0" "q4_0" (lower case); "TYPE:pure" for any
 * type name in any case.
 * Return: 0, or -1 if @s is none of them.
 */
int cb_quant_parse(const char *s, struct cb_quant *q);

/* The preset's name in llama.cpp's spelling ("Q4_K_M"), "" for none. */
const char *cb_preset_name(int preset);

/* The list of accepted names, for usage lines. */
const char *cb_quant_names(void);

/**
 * cb_quant_choose() - the stored type of one matrix.
 * @q: the parsed --quant.
 * @cfg: the model.
 * @role: enum colibri_tensor_role of the matrix.
 * @layer: its layer (ignored for global tensors).
 * @cols: its row length.
 * @src_dt: the source type (what "keep" stores).
 *
 * Vectors are not passed here (they are always f32).  For a preset:
 * llama-quantize's choice for the tensor, then, if the rows do not hold a
 * whole number of that type's blocks, its fallback (q2_K, q3_K, iq4_xs ->
 * iq4_nl; q4_K -> q5_0; q5_K -> q5_1; q6_K -> q8_0; and f16 if that does
 * not fit either).  For a single type whose blocks do not fit: f32.
 * Return: enum cb_dtype.
 */
int cb_quant_choose(const struct cb_quant *q, const struct cb_model_config *cfg,
		    uint32_t role, uint32_t layer, uint32_t cols, int src_dt);

#endif /* COLIBRI_QUANT_PRESET_H */
