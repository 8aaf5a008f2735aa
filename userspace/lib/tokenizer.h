/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * tokenizer.h - Hugging Face tokenizer.json tokenizers for colibri (userspace).
 *
 * Two model families are supported, both with the semantics of the Hugging
 * Face "tokenizers" library:
 *
 *  - GPT-2 style byte-level BPE (Qwen2/Qwen3, GPT-2): NFC normalisation when
 *    the normalizer asks for it, the pre-tokenizer's Split regex (PCRE2 with
 *    UTF+UCP, \s rewritten to Oniguruma's definition), ByteLevel byte mapping.
 *  - SentencePiece style BPE (Llama-2, Mistral, Mixtral): Prepend/Replace
 *    normalizers or a Metaspace pre-tokenizer, byte fallback to <0xNN> tokens,
 *    unknown-token fusing, and the matching decoder rules.
 *
 * Added tokens are split out of the input before anything else, with
 * leftmost-longest matching and the lstrip/rstrip/single_word/normalized
 * flags honoured.  Decoding turns ids into raw bytes; the streaming decoder
 * never hands out a partial UTF-8 character.
 */
#ifndef COLIBRI_TOKENIZER_H
#define COLIBRI_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

struct cb_tokenizer;

/* Flags for cb_tok_encode(). */
/* Apply the post-processor template (e.g. Llama's leading <s>). */
#define CB_TOK_ADD_SPECIAL	(1u << 0)
/* Prepend the BOS id even if the post-processor would not. */
#define CB_TOK_ADD_BOS		(1u << 1)
/* Append the EOS id. */
#define CB_TOK_ADD_EOS		(1u << 2)
#define CB_TOK_ENCODE_ALL	(CB_TOK_ADD_SPECIAL | CB_TOK_ADD_BOS | CB_TOK_ADD_EOS)

/* Flags for cb_tok_decode() and the streaming decoder. */
/* Leave out tokens whose added_tokens entry says "special": true. */
#define CB_TOK_SKIP_SPECIAL	(1u << 0)
#define CB_TOK_DECODE_ALL	(CB_TOK_SKIP_SPECIAL)

/**
 * cb_tok_load() - build a tokenizer from the text of a tokenizer.json.
 * @json:   the file's contents (need not be NUL-terminated)
 * @len:    its length in bytes
 * @err:    buffer for a one-line reason on failure (may be NULL)
 * @errlen: size of @err
 *
 * Return: the tokenizer, or NULL with @err filled in.
 */
struct cb_tokenizer *cb_tok_load(const char *json, size_t len, char *err, size_t errlen);

/**
 * cb_tok_load_file() - cb_tok_load() on a file's contents.
 */
struct cb_tokenizer *cb_tok_load_file(const char *path, char *err, size_t errlen);

/**
 * cb_tok_apply_config() - take BOS/EOS choices from a tokenizer_config.json.
 * @tok:  the tokenizer
 * @json: text of tokenizer_config.json; @len its length
 *
 * Reads bos_token, eos_token, add_bos_token and add_eos_token.  Without this
 * call the BOS id comes from the post-processor template and the EOS id from
 * the conventional token names (</s>, <|endoftext|>, ...).  When the config
 * says add_bos_token/add_eos_token is true, CB_TOK_ADD_SPECIAL also adds the
 * BOS/EOS id (a false value does not remove what the template adds).
 *
 * Return: 0 or -EINVAL when the JSON does not parse.
 */
int cb_tok_apply_config(struct cb_tokenizer *tok, const char *json, size_t len);

void cb_tok_free(struct cb_tokenizer *tok);

/**
 * cb_tok_encode() - turn UTF-8 text into token ids.
 * @tok:   the tokenizer
 * @text:  UTF-8 input (invalid sequences are replaced by U+FFFD first)
 * @len:   length of @text in bytes
 * @flags: CB_TOK_ADD_* flags
 * @ids:   output array (may be NULL when @cap is 0)
 * @cap:   capacity of @ids
 *
 * Return: the number of ids the text encodes to (which may exceed @cap, in
 * which case only the first @cap were stored: call again with a bigger
 * array), or a negative errno (-EINVAL for unknown flags, -ENOMEM).
 */
long cb_tok_encode(const struct cb_tokenizer *tok, const char *text, size_t len,
		   unsigned int flags, int32_t *ids, size_t cap);

/**
 * cb_tok_encode_alloc() - cb_tok_encode() into a malloc'ed array.
 * @out: set to the array (free() it); NULL when the result is empty.
 *
 * Return: the number of ids or a negative errno.
 */
long cb_tok_encode_alloc(const struct cb_tokenizer *tok, const char *text, size_t len,
			 unsigned int flags, int32_t **out);

/**
 * cb_tok_decode() - turn ids into bytes.
 * @tok:   the tokenizer
 * @ids:   the ids; @n how many
 * @flags: CB_TOK_SKIP_SPECIAL or 0
 * @out:   output buffer (may be NULL when @cap is 0); not NUL-terminated
 * @cap:   its capacity
 *
 * The bytes are those of the token pieces after the decoder rules (byte-level
 * unmapping, '▁' to space, byte fallback, leading-space strip).  A byte
 * fallback sequence that is not valid UTF-8 is passed through as raw bytes;
 * Hugging Face would print U+FFFD for each such byte.
 *
 * Return: the total number of bytes (may exceed @cap), or -EINVAL for an id
 * outside the vocabulary.
 */
long cb_tok_decode(const struct cb_tokenizer *tok, const int32_t *ids, size_t n,
		   unsigned int flags, char *out, size_t cap);

/**
 * struct cb_tok_stream - state of a streaming decoder.
 *
 * Initialise with cb_tok_stream_init(); feed ids one at a time with
 * cb_tok_stream_feed(); finish with cb_tok_stream_flush().  The output is
 * always valid UTF-8: bytes of an unfinished character are held back until
 * the character is complete, and bytes that can never form a character are
 * replaced by U+FFFD.
 */
struct cb_tok_stream {
	const struct cb_tokenizer *tok;
	unsigned int flags;
	int at_start;		/* nothing emitted yet (for leading-space strip) */
	unsigned int npend;	/* held bytes of an incomplete character */
	unsigned char pend[4];
};

void cb_tok_stream_init(struct cb_tok_stream *st, const struct cb_tokenizer *tok,
			unsigned int flags);

/**
 * cb_tok_stream_feed() - decode one more id.
 * @out: room for the worst case: 3 bytes for each byte of the token and of
 *       those held back (any of them may become U+FFFD);
 *       cb_tok_stream_cap() always suffices.
 *
 * Return: bytes written to @out (0 when everything is held back), -EINVAL
 * for an unknown id, -ENOSPC when @cap is too small (state unchanged).
 */
long cb_tok_stream_feed(struct cb_tok_stream *st, int32_t id, char *out, size_t cap);

/* Return: bytes written (held bytes become U+FFFD each), or -ENOSPC. */
long cb_tok_stream_flush(struct cb_tok_stream *st, char *out, size_t cap);

/* The @cap with which no id of @tok makes feed or flush return -ENOSPC. */
size_t cb_tok_stream_cap(const struct cb_tokenizer *tok);

size_t cb_tok_vocab_size(const struct cb_tokenizer *tok);
/*
 * The bytes token @id decodes to in the middle of a text (no leading-space
 * strip, no UTF-8 repair): a constrained decoder's view of it.  NULL for
 * an unknown id; *@len 0 for a token that decodes to nothing.
 */
const char *cb_tok_piece(const struct cb_tokenizer *tok, int32_t id, size_t *len);
size_t cb_tok_max_token_bytes(const struct cb_tokenizer *tok);
int32_t cb_tok_bos_id(const struct cb_tokenizer *tok);	/* -1 if none */
int32_t cb_tok_eos_id(const struct cb_tokenizer *tok);	/* -1 if none */
void cb_tok_set_bos_id(struct cb_tokenizer *tok, int32_t id);
void cb_tok_set_eos_id(struct cb_tokenizer *tok, int32_t id);

/* Id of a token given by its text (vocabulary or added token), or -1. */
int32_t cb_tok_token_id(const struct cb_tokenizer *tok, const char *s, size_t len);

/* 1 if @id is an added token flagged "special", 0 otherwise. */
int cb_tok_is_special(const struct cb_tokenizer *tok, int32_t id);

#endif /* COLIBRI_TOKENIZER_H */
