/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * hf_tiktoken.h - the tokenizer.json of a Hugging Face directory: the file
 * itself, or the one a tiktoken BPE file stands for (Kimi-K2's
 * tiktoken.model, read by its TikTokenTokenizer), built by hf_tiktoken.c.
 */
#ifndef COLIBRI_HF_TIKTOKEN_H
#define COLIBRI_HF_TIKTOKEN_H

#include <stddef.h>

/*
 * hf_tokenizer_json() - @dir's tokenizer.json text: the file, or without
 * one, the tokenizer.json of its tiktoken.model (ranks as ids, every split
 * of a token into two tokens a merge of the token's rank, so that BPE
 * merges as tiktoken does; the split regex and the reserved special
 * tokens of the tokenizer_class tokenizer_config.json names).
 * Return: malloc'ed text (*@len bytes, NUL-terminated), or NULL with the
 * reason in @err (errno ENOENT when @dir has neither file).
 */
char *hf_tokenizer_json(const char *dir, size_t *len, char *err, size_t errlen);

struct cb_tokenizer;

/* hf_tokenizer_load() - cb_tok_load() of hf_tokenizer_json(); NULL with the reason. */
struct cb_tokenizer *hf_tokenizer_load(const char *dir, char *err, size_t errlen);

#endif /* COLIBRI_HF_TIKTOKEN_H */
