/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * tok_internal.h - what the tokenizer's files share: the tokenizer itself,
 * its steps as loaded from tokenizer.json, the encoder's scratch, and the
 * helpers one file defines and others call.  Not part of libcolibri's API
 * (that is ../tokenizer.h).
 *
 * The pipeline is the library's: split out added tokens, normalise each
 * remaining segment, pre-tokenize it into pieces, run BPE on each piece,
 * then apply the post-processor template.  Decoding precomputes, per id,
 * the bytes the decoder chain turns that token into, so decode is a copy
 * loop plus the leading-space strip of SentencePiece models.
 *
 *   tok_load.c         tokenizer.json -> struct cb_tokenizer (model, added
 *                      tokens, post-processor), tokenizer_config.json,
 *                      accessors, free
 *   tok_normalize.c    normalizers: loading and running them
 *   tok_pretokenize.c  pre-tokenizers (Split regex, ByteLevel, Metaspace)
 *   tok_bpe.c          the BPE merge loop
 *   tok_vocab.c        the vocabulary and merge hash maps
 *   tok_encode.c       added-token splitting and cb_tok_encode()
 *   tok_decode.c       decoders, cb_tok_decode() and the streaming decoder
 *   tok_utf8.c         UTF-8, the GPT-2 byte map, replace-all
 */
#ifndef COLIBRI_TOK_INTERNAL_H
#define COLIBRI_TOK_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tokenizer.h"
#include "util/util.h"

struct ivec {
	int32_t *p;
	size_t n, cap;
};

static inline int ivec_push(struct ivec *v, int32_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		int32_t *p = realloc(v->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->p = p;
		v->cap = cap;
	}
	v->p[v->n++] = x;
	return 0;
}

/* ------------------------------------------------------------------ */
/* UTF-8 (tok_utf8.c)                                                  */

enum { U8_OK, U8_SHORT, U8_BAD };

int tok_u8_class(const unsigned char *p, size_t n, size_t *len, int32_t *cp);
size_t tok_u8_put(char *o, int32_t c);
/* Decode one character of a string already known to be valid UTF-8. */
size_t tok_u8_get(const char *s, size_t n, int32_t *cp);
/* Rust's char::is_whitespace (Unicode White_Space). */
bool tok_u_is_white(int32_t c);
bool tok_u_is_alnum(int32_t c);
/* Copy @s replacing ill-formed sequences by U+FFFD; NULL if already valid. */
char *tok_u8_sanitize(const char *s, size_t n, size_t *outn);
void tok_bl_init(void);
int tok_bl_unmap(const char *s, size_t n, struct cb_sbuf *out);
int tok_replace_all(struct cb_sbuf *out, const char *s, size_t n, const char *pat, size_t plen,
		    const char *rep, size_t rlen);

/* ------------------------------------------------------------------ */
/* hash maps (tok_vocab.c)                                             */

/* string -> id; keys point into the tokenizer's string arena */
struct smap_ent {
	uint32_t off, len;
	int32_t id;		/* -1: empty slot */
};

struct smap {
	struct smap_ent *e;
	size_t mask, n;
};

/* (left id, right id) -> (rank, merged id) */
struct mmap_ent {
	uint64_t key;		/* UINT64_MAX: empty */
	uint32_t rank;
	int32_t id;
};

struct mmap {
	struct mmap_ent *e;
	size_t mask, n;
};

/* ------------------------------------------------------------------ */
/* the tokenizer                                                       */

enum norm_kind { N_NFC, N_NFD, N_NFKC, N_NFKD, N_PREPEND, N_REPLACE, N_LOWER, N_STRIP };

struct norm_step {
	enum norm_kind kind;
	char *a, *b;		/* prepend text / replace pattern and content */
	size_t alen, blen;
	bool left, right;	/* strip */
};

enum pre_kind { P_SPLIT, P_BYTELEVEL, P_METASPACE };
enum split_beh { B_REMOVED, B_ISOLATED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS };
enum prepend_scheme { PS_ALWAYS, PS_FIRST, PS_NEVER };

struct pre_step {
	enum pre_kind kind;
	pcre2_code *re;		/* split (regex or escaped literal) */
	enum split_beh beh;
	bool invert;
	bool add_prefix_space;	/* bytelevel */
	char rep[8];		/* metaspace replacement (UTF-8) */
	size_t replen;
	enum prepend_scheme scheme;
	bool split;
};

struct added_tok {
	char *content;
	size_t len;
	int32_t id;
	bool special, lstrip, rstrip, single_word, normalized;
};

struct cb_tokenizer {
	bool bytelevel;		/* a ByteLevel pre-tokenizer: BPE over raw bytes */

	size_t n_ids;		/* max id + 1 */
	struct cb_sbuf arena;	/* piece and decode strings */
	uint32_t *piece_off, *piece_len;	/* encode form; len UINT32_MAX = no such id */
	uint32_t *dec_off, *dec_len;	/* bytes the decoder makes of each id */
	unsigned char *is_special;
	size_t max_dec;

	struct smap vocab;	/* encode-form piece -> id (model vocabulary) */
	struct mmap merges;
	int32_t unk_id;
	bool byte_fallback, fuse_unk, ignore_merges;
	int32_t byte_id[256];	/* <0xNN> ids for byte fallback, -1 if absent */

	struct added_tok *added;
	size_t n_added;
	unsigned char added_first[2][256];	/* [normalized] first-byte filter */

	struct norm_step *norm;
	size_t n_norm;
	struct pre_step *pre;
	size_t n_pre;

	/* post-processor: the "single" template, -1 marks the sequence */
	int32_t *tmpl;
	size_t n_tmpl;

	/* decoder strip of the fused output */
	int32_t strip_cp;
	unsigned int strip_start, strip_stop;

	int32_t bos_id, eos_id;
	bool cfg_add_bos, cfg_add_eos;
};

int tok_smap_init(struct smap *m, size_t n);
int32_t tok_smap_get(const struct smap *m, const char *arena, const char *s, size_t n);
void tok_smap_put(struct smap *m, const char *arena, uint32_t off, uint32_t len, int32_t id);
int tok_mmap_init(struct mmap *m, size_t n);
const struct mmap_ent *tok_mmap_get(const struct mmap *m, int32_t a, int32_t b);
void tok_mmap_put(struct mmap *m, int32_t a, int32_t b, uint32_t rank, int32_t id);

/* ------------------------------------------------------------------ */
/* tokenizer.json helpers (tok_load.c and the step loaders)            */

static inline const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline bool jbool(const cJSON *o, const char *key, bool def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return def;
}

static inline char *xstrdup(const char *s, size_t *len)
{
	char *d = strdup(s);

	if (d && len)
		*len = strlen(s);
	return d;
}

/* ------------------------------------------------------------------ */
/* normalizers (tok_normalize.c)                                       */

int tok_load_normalizer(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* pre-tokenizers (tok_pretokenize.c)                                  */

struct piece {
	size_t off, len;	/* into the pieces' string buffer */
	bool first;		/* starts at offset 0 of the original input */
};

struct plist {
	struct piece *p;
	size_t n, cap;
	struct cb_sbuf s;
};

int tok_parse_scheme(const cJSON *n, enum prepend_scheme *ps);
int tok_load_pretok(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen);
int tok_pretokenize(const struct cb_tokenizer *tok, const char *s, size_t n, bool first,
		    struct plist *res);
void tok_plist_free(struct plist *l);

/* ------------------------------------------------------------------ */
/* decoders (tok_decode.c)                                             */

enum dec_kind { D_BYTELEVEL, D_REPLACE, D_BYTEFALLBACK, D_FUSE, D_STRIP, D_METASPACE };

struct dec_step {
	enum dec_kind kind;
	const char *a, *b;	/* replace pattern/content; metaspace replacement */
	int32_t cp;		/* strip content */
	unsigned int start, stop;
	bool fused;		/* strip: after a Fuse, so it acts on the whole text */
};

struct dec_chain {
	struct dec_step s[16];
	size_t n;
};

int tok_load_decoder(struct cb_tokenizer *tok, struct dec_chain *dc, const cJSON *n,
		     bool *fused, char *err, size_t errlen);
/* Run the per-token part of the decoder chain on one token string. */
int tok_decode_piece(const struct dec_chain *dc, const char *s, size_t n, struct cb_sbuf *out);

/* ------------------------------------------------------------------ */
/* encoding: BPE (tok_bpe.c), normalisation (tok_normalize.c)          */

struct sym {
	int32_t id;
	int32_t prev, next;
	bool dead;
};

struct cand {
	uint32_t rank;
	uint32_t pos;
	int32_t id;
};

struct work {
	struct sym *sym;
	size_t sym_cap;
	struct cand *heap;
	size_t heap_n, heap_cap;
	struct cb_sbuf a, b;	/* normaliser scratch */
	struct ivec out;
};

int tok_bpe(const struct cb_tokenizer *tok, struct work *w, const char *s, size_t n);
int tok_normalize(const struct cb_tokenizer *tok, struct work *w, const char *s, size_t n,
		  const char **outp, size_t *outn);

#endif /* COLIBRI_TOK_INTERNAL_H */
