/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * tensor_source.h - where a .colibri file's tensors come from, one slot at
 * a time, and the one pipeline that writes them (convert.c):
 *
 *   a Hugging Face checkpoint (hf_convert.c over import/hf_slot.h:
 *   safetensors in F32/F16/BF16/FP8, GPT-OSS's fused and MXFP4 experts,
 *   DeepSeek's kv_b_proj), a model held in memory (model_source.c: a GGUF
 *   file's tensors in its mapping) and `colibri synth`'s random rows.
 *
 * A source says, for each slot, what "keep the source's type" means and
 * whether its bytes are stored as they are (find); may make the slot into
 * a buffer first (begin: the largest made slot is the pipeline's only
 * allocation that grows with the model); and gives its rows as f32 to the
 * quantizers, from any thread (rows).  The pipeline chooses each slot's
 * type (vectors f32; bytes kept as they are; else --quant's choice), lays
 * the file out, then quantizes 4 MiB of rows at a time on every core and
 * writes them at their offsets, with the progress hook.
 */
#ifndef COLIBRI_TENSOR_SOURCE_H
#define COLIBRI_TENSOR_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "format/cb_format.h"
#include "quant/quant_preset.h"

struct cbfile_writer;

/**
 * struct tsrc_slot - what a source said of one slot.
 * @keep_dt: the engine type "keep the source's type" stores.
 * @raw_dt: >= 0: the slot is stored in this type, its bytes as they are
 *	(@bytes, or made by begin): a GGUF file's tensors, GPT-OSS's MXFP4
 *	experts; -1: chosen by --quant and made from rows.
 * @bytes: stored bytes of type @bytes_dt the pipeline may copy when the
 *	slot's type is that (a tensor's data in its mapping); or NULL.
 * @bytes_dt: their type.
 * @made_bytes: begin() makes the slot into a buffer of this size first
 *	(0: it needs none).
 * @name: the source tensor's name, for messages; NULL: the role's.
 * @src: the source's own (tensors).
 * @key: the source's own (a seed).
 */
struct tsrc_slot {
	const char *name;
	int keep_dt;
	int raw_dt;
	const void *bytes;
	int bytes_dt;
	uint64_t made_bytes;
	const void *src[2];
	uint64_t key;
};

/**
 * struct tensor_source - a model's tensors, slot by slot.
 * @cfg: the model's config (the writer's).
 * @ctx: the source's state, passed back to the hooks.
 * @find: check slot @s (the writer's @index-th) and fill @t; reads no
 *	values.  0, or -1 with one line naming the tensor in @err.
 * @begin: before the slot is written: check its values, and make it into
 *	@made (@t->made_bytes) if it asked for a buffer; may point @t->bytes
 *	at @made.  NULL: nothing to do.  0, or -1 with one line in @err.
 * @rows: rows [@first, @first + @n) of the slot as f32 into @dst (@n x
 *	cols); called from the thread pool, several at once.  NULL for a
 *	source whose slots are all raw.
 */
struct tensor_source {
	const struct cb_model_config *cfg;
	void *ctx;
	int (*find)(void *ctx, uint32_t index, const struct cb_format_slot *s,
		    struct tsrc_slot *t, char *err, size_t errlen);
	int (*begin)(void *ctx, const struct cb_format_slot *s, struct tsrc_slot *t, void *made,
		     char *err, size_t errlen);
	void (*rows)(void *ctx, const struct cb_format_slot *s, const struct tsrc_slot *t,
		     const void *made, uint64_t first, uint64_t n, float *dst);
};

/**
 * struct convert_opts - how convert_tensors() writes.
 * @quant: the stored type of each matrix made from rows (quant_preset.h).
 * @threads: quantizing threads; 0: one per core.
 * @progress: called as bytes are written (@done of @total); may be NULL.
 * @progress_arg: its first argument.
 */
struct convert_opts {
	struct cb_quant quant;
	int threads;
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/**
 * convert_tensors() - every tensor of writer @w's config from @ts: types
 *	chosen, the file laid out, each slot written.
 * @ts: the source.
 * @w: a writer begun with @ts->cfg; the caller finishes or aborts it.
 * @o: the options.
 * @total: if not NULL, the tensor bytes written.
 * @err: one line on failure.
 * @errlen: its size.
 *
 * Return: 0; -1, the writer's error (or out of memory) in @err; -2, the
 * source's error in @err (a tensor missing or of another shape, values
 * that are not finite, a quantized scale that is not).
 */
int convert_tensors(const struct tensor_source *ts, struct cbfile_writer *w,
		    const struct convert_opts *o, uint64_t *total, char *err, size_t errlen);

#endif /* COLIBRI_TENSOR_SOURCE_H */
