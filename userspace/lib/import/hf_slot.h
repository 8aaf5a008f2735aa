/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_slot.h - where each tensor of a .colibri file comes from in a Hugging
 * Face checkpoint, one slot at a time (hf_slot.c): the converter's tensor
 * source.
 *
 * Most slots are one safetensors tensor's rows as they are, found by the
 * role's HF name (hf_names.c).  Some are cut from fused tensors: GPT-OSS's
 * experts (one expert of gate_up_proj / down_proj, transposed and
 * de-interleaved, or its MXFP4 blocks repacked; hf_gpt_oss.c) and their
 * biases, DeepSeek's k_b and v_b (from kv_b_proj; hf_deepseek.c),
 * Qwen3-Next's DeltaNet projections (rows of in_proj_qkvz and in_proj_ba;
 * hf_fused.c); and the values stored otherwise (hf_values.c).  Those
 * are "made": hf_slot_fill() makes the one slot's values into a buffer of
 * made_bytes, so a conversion holds at most one slot's values in memory,
 * whatever the model's size.
 */
#ifndef COLIBRI_HF_SLOT_H
#define COLIBRI_HF_SLOT_H

#include <stddef.h>
#include <stdint.h>

#include "format/cb_format.h"

struct st_set;
struct st_tensor;

/**
 * struct hf_slot_src - the source of one slot.
 * @t: the tensor its values are read from (for a made slot, the fused
 *	tensor it is cut from: its name is the one messages give).
 * @scales: an MXFP4 slot's scales (@t holds its blocks); else NULL.
 * @keep_dt: the engine type that "keep the source's type" stores.
 * @raw_dt: >= 0: hf_slot_fill() makes the slot's bytes in this type, to be
 *	stored as they are (GPT-OSS's MXFP4 experts); -1: f32 values.
 * @made: 0: @t's rows as they are; 1: hf_slot_fill() makes the values.
 * @made_bytes: the buffer hf_slot_fill() needs (0 unless @made).
 */
struct hf_slot_src {
	const struct st_tensor *t;
	const struct st_tensor *scales;
	int keep_dt;
	int raw_dt;
	int made;
	uint64_t made_bytes;
};

/*
 * hf_slot_find() - the source of slot @s of a model of config @c in @st,
 * checked: present, a supported dtype, the shape config.json implies.
 * Reads no values.  0, or -1 with one line naming the tensor in @err.
 */
int hf_slot_find(const struct st_set *st, const struct cb_model_config *c,
		 const struct cb_format_slot *s, struct hf_slot_src *src, char *err, size_t errlen);

/*
 * hf_slot_fill() - a made slot's values into @buf (@src->made_bytes): f32
 * [rows][cols], or its bytes in @src->raw_dt.  The fused tensor's stored
 * values are checked (FP8 codes) with its first slot.  0, or -1 with one
 * line naming the tensor in @err.
 */
int hf_slot_fill(const struct cb_model_config *c, const struct cb_format_slot *s,
		 const struct hf_slot_src *src, void *buf, char *err, size_t errlen);

#endif /* COLIBRI_HF_SLOT_H */
