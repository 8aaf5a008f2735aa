/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_convert.h - a Hugging Face model directory to a .colibri file.
 */
#ifndef COLIBRI_HF_CONVERT_H
#define COLIBRI_HF_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "quant/quant_preset.h"

/**
 * struct hf_convert_opts - how hf_convert() converts.
 * @name: the model's name in the header; NULL: the directory's last
 *	component.
 * @no_tokenizer: leave the tokenizer out.
 * @quant: the stored type of each matrix (quant_preset.h); CB_QUANT_KEEP
 *	keeps the source type.
 * @threads: quantizing threads; 0: one per core.
 * @progress: called as bytes are written (@done of @total); may be NULL.
 * @progress_arg: its first argument.
 */
struct hf_convert_opts {
	const char *name;
	int no_tokenizer;
	struct cb_quant quant;
	int threads;
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/**
 * hf_convert() - write the model of HF directory @src as the .colibri @out.
 * @src: the directory (config.json, safetensors, tokenizer files).
 * @out: the file, replaced atomically: it is written as OUT.tmp.PID
 *	(removed on error; a caller that may be killed removes it on its
 *	signals) and renamed when complete.
 * @o: the options.
 * @err: one line on failure, naming the source file where there is one.
 * @errlen: its size.
 *
 * Return: 0, or -1.
 */
int hf_convert(const char *src, const char *out, const struct hf_convert_opts *o,
	       char *err, size_t errlen);

#endif /* COLIBRI_HF_CONVERT_H */
