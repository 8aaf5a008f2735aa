/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * gguf_pretok.h - the pre-tokenizers named by a GGUF's tokenizer.ggml.pre,
 * as the lists of split regexes the matching Hugging Face tokenizer.json
 * files apply.
 */
#ifndef COLIBRI_GGUF_PRETOK_H
#define COLIBRI_GGUF_PRETOK_H

#include <stddef.h>

#define GGUF_PRETOK_MAX_SPLITS 6

struct gguf_pretok {
	const char *pre;	/* the tokenizer.ggml.pre value */
	/*
	 * Split regexes (Isolated), applied in turn: each one splits the
	 * pieces the previous one made, as a tokenizer.json Sequence of
	 * Split pre-tokenizers does.  NULL-terminated.
	 */
	const char *regex[GGUF_PRETOK_MAX_SPLITS + 1];
	int nfc;		/* NFC normalizer (Qwen2's tokenizer.json has one) */
	int ignore_merges;	/* the BPE looks whole pieces up first (Llama 3, o200k) */
};

/* The entry for the @n bytes at @name, or NULL when unknown. */
const struct gguf_pretok *gguf_pretok_find(const char *name, size_t n);

/* The known names, comma-separated, for error messages (truncated to @len). */
void gguf_pretok_names(char *buf, size_t len);

#endif
