// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tokenizer.c - tokenizer.json tokenizers (byte-level BPE and SentencePiece
 * style BPE) with Hugging Face "tokenizers" semantics.
 *
 * The pipeline is the library's: split out added tokens, normalise each
 * remaining segment, pre-tokenize it into pieces, run BPE on each piece,
 * then apply the post-processor template.  Decoding precomputes, per id,
 * the bytes the decoder chain turns that token into, so decode is a copy
 * loop plus the leading-space strip of SentencePiece models.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include "tokenizer.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* small growable buffers                                              */

struct sbuf {
	char *p;
	size_t n, cap;
};

static int sbuf_reserve(struct sbuf *b, size_t extra)
{
	size_t want = b->n + extra + 1, cap;
	char *p;

	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int sbuf_add(struct sbuf *b, const void *s, size_t n)
{
	if (sbuf_reserve(b, n))
		return -ENOMEM;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
	return 0;
}

struct ivec {
	int32_t *p;
	size_t n, cap;
};

static int ivec_push(struct ivec *v, int32_t x)
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
/* UTF-8                                                               */

enum { U8_OK, U8_SHORT, U8_BAD };

/*
 * Classify the bytes at @p: a complete valid character (*len = its length),
 * a valid but unfinished prefix (all @n bytes), or an invalid sequence whose
 * maximal ill-formed subpart is *len bytes (one U+FFFD replaces it, as the
 * WHATWG decoder and Rust's from_utf8_lossy do).
 */
static int u8_class(const unsigned char *p, size_t n, size_t *len, int32_t *cp)
{
	unsigned char c = p[0];
	size_t need, i;
	unsigned char lo = 0x80, hi = 0xbf;
	int32_t v;

	if (c < 0x80) {
		*len = 1;
		if (cp)
			*cp = c;
		return U8_OK;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		*len = 1;
		return U8_BAD;
	}
	for (i = 1; i < need; i++) {
		if (i >= n) {
			*len = n;
			return U8_SHORT;
		}
		if (p[i] < lo || p[i] > hi) {
			*len = i;
			return U8_BAD;
		}
		lo = 0x80;
		hi = 0xbf;
		v = (v << 6) | (p[i] & 0x3f);
	}
	*len = need;
	if (cp)
		*cp = v;
	return U8_OK;
}

static size_t u8_put(char *o, int32_t c)
{
	unsigned char *u = (unsigned char *)o;

	if (c < 0x80) {
		u[0] = c;
		return 1;
	}
	if (c < 0x800) {
		u[0] = 0xc0 | (c >> 6);
		u[1] = 0x80 | (c & 0x3f);
		return 2;
	}
	if (c < 0x10000) {
		u[0] = 0xe0 | (c >> 12);
		u[1] = 0x80 | ((c >> 6) & 0x3f);
		u[2] = 0x80 | (c & 0x3f);
		return 3;
	}
	u[0] = 0xf0 | (c >> 18);
	u[1] = 0x80 | ((c >> 12) & 0x3f);
	u[2] = 0x80 | ((c >> 6) & 0x3f);
	u[3] = 0x80 | (c & 0x3f);
	return 4;
}

/* Decode one character of a string already known to be valid UTF-8. */
static size_t u8_get(const char *s, size_t n, int32_t *cp)
{
	size_t len;

	if (u8_class((const unsigned char *)s, n, &len, cp) != U8_OK) {
		*cp = 0xfffd;
		return len ? len : 1;
	}
	return len;
}

/* Rust's char::is_whitespace (Unicode White_Space). */
static bool u_is_white(int32_t c)
{
	return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000;
}

static bool u_is_alnum(int32_t c)
{
	utf8proc_category_t k = utf8proc_category(c);

	return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) ||
	       (k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO);
}

/* Copy @s replacing ill-formed sequences by U+FFFD; NULL if already valid. */
static char *u8_sanitize(const char *s, size_t n, size_t *outn)
{
	size_t i = 0, len;
	struct sbuf b = { 0 };
	bool bad = false;

	while (i < n) {
		if (u8_class((const unsigned char *)s + i, n - i, &len, NULL) != U8_OK) {
			bad = true;
			break;
		}
		i += len;
	}
	if (!bad)
		return NULL;
	for (i = 0; i < n; i += len) {
		int k = u8_class((const unsigned char *)s + i, n - i, &len, NULL);

		if (k == U8_OK) {
			if (sbuf_add(&b, s + i, len))
				goto oom;
		} else if (sbuf_add(&b, "\xef\xbf\xbd", 3)) {
			goto oom;
		}
	}
	*outn = b.n;
	return b.p ? b.p : strdup("");
oom:
	free(b.p);
	*outn = (size_t)-1;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* GPT-2 byte <-> printable character map                              */

static int32_t bl_byte2cp[256];
static int16_t bl_cp2byte[324];	/* every mapped code point is < 324 */

static void bl_init(void)
{
	int b, n = 0;

	if (bl_byte2cp['!'])
		return;
	for (b = 0; b < 324; b++)
		bl_cp2byte[b] = -1;
	for (b = 0; b < 256; b++) {
		bool keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);

		bl_byte2cp[b] = keep ? b : 256 + n++;
		bl_cp2byte[bl_byte2cp[b]] = b;
	}
}

/*
 * Map a byte-level string back to bytes.  Like the ByteLevel decoder, a
 * string holding any character outside the map is kept as it is.
 */
static int bl_unmap(const char *s, size_t n, struct sbuf *out)
{
	size_t i = 0, start = out->n;
	int32_t c;

	while (i < n) {
		unsigned char byte;

		i += u8_get(s + i, n - i, &c);
		if (c >= 324 || bl_cp2byte[c] < 0) {
			out->n = start;
			return sbuf_add(out, s, n);
		}
		byte = bl_cp2byte[c];
		if (sbuf_add(out, &byte, 1))
			return -ENOMEM;
	}
	return sbuf_reserve(out, 0);
}

/* ------------------------------------------------------------------ */
/* hash maps                                                           */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

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
	struct sbuf arena;	/* piece and decode strings */
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

static int smap_init(struct smap *m, size_t n)
{
	size_t cap = 16, i;

	while (cap < n * 2)
		cap *= 2;
	m->e = malloc(cap * sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		m->e[i].id = -1;
	m->mask = cap - 1;
	m->n = 0;
	return 0;
}

static int32_t smap_get(const struct smap *m, const char *arena, const char *s, size_t n)
{
	size_t i = hash_bytes(s, n) & m->mask;

	if (!m->e)
		return -1;
	for (;; i = (i + 1) & m->mask) {
		const struct smap_ent *e = &m->e[i];

		if (e->id < 0)
			return -1;
		if (e->len == n && !memcmp(arena + e->off, s, n))
			return e->id;
	}
}

/* Insert; an existing key keeps its first id (as a JSON object would not repeat). */
static void smap_put(struct smap *m, const char *arena, uint32_t off, uint32_t len, int32_t id)
{
	size_t i = hash_bytes(arena + off, len) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		struct smap_ent *e = &m->e[i];

		if (e->id < 0) {
			e->off = off;
			e->len = len;
			e->id = id;
			m->n++;
			return;
		}
		if (e->len == len && !memcmp(arena + e->off, arena + off, len))
			return;
	}
}

static int mmap_init(struct mmap *m, size_t n)
{
	size_t cap = 16, i;

	while (cap < n * 2)
		cap *= 2;
	m->e = malloc(cap * sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		m->e[i].key = UINT64_MAX;
	m->mask = cap - 1;
	m->n = 0;
	return 0;
}

static const struct mmap_ent *mmap_get(const struct mmap *m, int32_t a, int32_t b)
{
	uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	size_t i = hash_u64(key) & m->mask;

	if (!m->e)
		return NULL;
	for (;; i = (i + 1) & m->mask) {
		if (m->e[i].key == key)
			return &m->e[i];
		if (m->e[i].key == UINT64_MAX)
			return NULL;
	}
}

/* First merge of a pair wins, as in the HF loader (later duplicates are shadowed). */
static void mmap_put(struct mmap *m, int32_t a, int32_t b, uint32_t rank, int32_t id)
{
	uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	size_t i = hash_u64(key) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		if (m->e[i].key == key)
			return;
		if (m->e[i].key == UINT64_MAX) {
			m->e[i].key = key;
			m->e[i].rank = rank;
			m->e[i].id = id;
			m->n++;
			return;
		}
	}
}

void cb_tok_free(struct cb_tokenizer *tok)
{
	size_t i;

	if (!tok)
		return;
	free(tok->arena.p);
	free(tok->piece_off);
	free(tok->piece_len);
	free(tok->dec_off);
	free(tok->dec_len);
	free(tok->is_special);
	free(tok->vocab.e);
	free(tok->merges.e);
	for (i = 0; i < tok->n_added; i++)
		free(tok->added[i].content);
	free(tok->added);
	for (i = 0; i < tok->n_norm; i++) {
		free(tok->norm[i].a);
		free(tok->norm[i].b);
	}
	free(tok->norm);
	for (i = 0; i < tok->n_pre; i++)
		pcre2_code_free(tok->pre[i].re);
	free(tok->pre);
	free(tok->tmpl);
	free(tok);
}

/* ------------------------------------------------------------------ */
/* loading                                                             */

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool jbool(const cJSON *o, const char *key, bool def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return def;
}

static char *xstrdup(const char *s, size_t *len)
{
	char *d = strdup(s);

	if (d && len)
		*len = strlen(s);
	return d;
}

/*
 * Oniguruma (which Hugging Face's tokenizers use) and PCRE2 disagree on \s:
 * Onig's Unicode \s is Z + U+0009..U+000D + U+0085, PCRE2's UCP \s also takes
 * U+180E.  Rewrite \s and \S (outside classes) and \s inside classes to the
 * Onig set so PCRE2 splits exactly like the reference.
 */
static char *regex_onig_to_pcre(const char *re)
{
	static const char set[] = "\\t-\\r\\x{85}\\p{Z}";
	struct sbuf b = { 0 };
	bool in_class = false;
	size_t i, n = strlen(re);

	for (i = 0; i < n; i++) {
		char c = re[i];

		if (c == '\\' && i + 1 < n) {
			char d = re[i + 1];

			i++;
			if (d == 's') {
				if (in_class) {
					if (sbuf_add(&b, set, sizeof(set) - 1))
						goto oom;
				} else if (sbuf_add(&b, "[", 1) || sbuf_add(&b, set, sizeof(set) - 1) ||
					   sbuf_add(&b, "]", 1)) {
					goto oom;
				}
				continue;
			}
			if (d == 'S' && !in_class) {
				if (sbuf_add(&b, "[^", 2) || sbuf_add(&b, set, sizeof(set) - 1) ||
				    sbuf_add(&b, "]", 1))
					goto oom;
				continue;
			}
			if (sbuf_add(&b, re + i - 1, 2))
				goto oom;
			continue;
		}
		if (!in_class && c == '[') {
			in_class = true;
			if (sbuf_add(&b, "[", 1))
				goto oom;
			/* a ']' right after '[' or '[^' is literal */
			if (i + 1 < n && re[i + 1] == '^') {
				if (sbuf_add(&b, "^", 1))
					goto oom;
				i++;
			}
			if (i + 1 < n && re[i + 1] == ']') {
				if (sbuf_add(&b, "]", 1))
					goto oom;
				i++;
			}
			continue;
		}
		if (in_class && c == '[' && i + 1 < n && re[i + 1] == ':') {
			/* POSIX class [:name:] inside a class */
			const char *e = strstr(re + i + 2, ":]");

			if (e) {
				size_t l = e + 2 - (re + i);

				if (sbuf_add(&b, re + i, l))
					goto oom;
				i += l - 1;
				continue;
			}
		}
		if (in_class && c == ']')
			in_class = false;
		if (sbuf_add(&b, &c, 1))
			goto oom;
	}
	if (!b.p)
		return strdup("");
	return b.p;
oom:
	free(b.p);
	return NULL;
}

static pcre2_code *compile_pattern(const cJSON *pat, char *err, size_t errlen)
{
	const char *s;
	char *src;
	pcre2_code *re;
	int ec;
	PCRE2_SIZE eo;
	uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK;

	if ((s = jstr(pat, "Regex"))) {
		src = regex_onig_to_pcre(s);
	} else if ((s = jstr(pat, "String"))) {
		src = strdup(s);
		opts |= PCRE2_LITERAL;
	} else {
		cb_set_err(err, errlen, "tokenizer.json: pattern is neither Regex nor String");
		return NULL;
	}
	if (!src) {
		cb_set_err(err, errlen, "out of memory");
		return NULL;
	}
	re = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
	if (!re) {
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(ec, msg, sizeof(msg));
		cb_set_err(err, errlen, "tokenizer.json: regex '%s' does not compile at %zu: %s",
			s, (size_t)eo, (char *)msg);
	} else {
		pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);	/* optional speed-up */
	}
	free(src);
	return re;
}

static int load_normalizer(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen)
{
	const char *type;
	struct norm_step st = { 0 }, *p;

	if (!n || cJSON_IsNull(n))
		return 0;
	type = jstr(n, "type");
	if (!type) {
		cb_set_err(err, errlen, "tokenizer.json: normalizer without a type");
		return -EINVAL;
	}
	if (!strcmp(type, "Sequence")) {
		const cJSON *it, *arr = cJSON_GetObjectItemCaseSensitive(n, "normalizers");

		cJSON_ArrayForEach(it, arr)
			if (load_normalizer(tok, it, err, errlen))
				return -EINVAL;
		return 0;
	}
	if (!strcmp(type, "NFC")) {
		st.kind = N_NFC;
	} else if (!strcmp(type, "NFD")) {
		st.kind = N_NFD;
	} else if (!strcmp(type, "NFKC")) {
		st.kind = N_NFKC;
	} else if (!strcmp(type, "NFKD")) {
		st.kind = N_NFKD;
	} else if (!strcmp(type, "Lowercase")) {
		st.kind = N_LOWER;
	} else if (!strcmp(type, "Strip")) {
		st.kind = N_STRIP;
		st.left = jbool(n, "strip_left", true);
		st.right = jbool(n, "strip_right", true);
	} else if (!strcmp(type, "Prepend")) {
		const char *s = jstr(n, "prepend");

		st.kind = N_PREPEND;
		if (!s || !(st.a = xstrdup(s, &st.alen)))
			goto bad;
	} else if (!strcmp(type, "Replace")) {
		const cJSON *pat = cJSON_GetObjectItemCaseSensitive(n, "pattern");
		const char *s = jstr(pat, "String"), *c = jstr(n, "content");

		st.kind = N_REPLACE;
		if (!s || !c) {
			cb_set_err(err, errlen,
				"tokenizer.json: only String patterns are supported in Replace normalizers");
			return -EINVAL;
		}
		st.a = xstrdup(s, &st.alen);
		st.b = xstrdup(c, &st.blen);
		if (!st.a || !st.b || !st.alen)
			goto bad;
	} else {
		cb_set_err(err, errlen, "tokenizer.json: unsupported normalizer type '%s'", type);
		return -EINVAL;
	}
	p = realloc(tok->norm, (tok->n_norm + 1) * sizeof(*p));
	if (!p)
		goto bad;
	tok->norm = p;
	tok->norm[tok->n_norm++] = st;
	return 0;
bad:
	free(st.a);
	free(st.b);
	cb_set_err(err, errlen, "tokenizer.json: bad %s normalizer", type);
	return -EINVAL;
}

static int add_pre(struct cb_tokenizer *tok, struct pre_step *st)
{
	struct pre_step *p = realloc(tok->pre, (tok->n_pre + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	tok->pre = p;
	tok->pre[tok->n_pre++] = *st;
	return 0;
}

/* GPT-2's pattern, used by ByteLevel pre-tokenizers with use_regex. */
static const char gpt2_regex[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static int parse_scheme(const cJSON *n, enum prepend_scheme *ps)
{
	const char *s = jstr(n, "prepend_scheme");

	if (!s) {	/* older files: add_prefix_space */
		*ps = jbool(n, "add_prefix_space", true) ? PS_ALWAYS : PS_NEVER;
		return 0;
	}
	if (!strcmp(s, "always"))
		*ps = PS_ALWAYS;
	else if (!strcmp(s, "first"))
		*ps = PS_FIRST;
	else if (!strcmp(s, "never"))
		*ps = PS_NEVER;
	else
		return -EINVAL;
	return 0;
}

static int load_pretok(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen)
{
	const char *type;
	struct pre_step st = { 0 };

	if (!n || cJSON_IsNull(n))
		return 0;
	type = jstr(n, "type");
	if (!type) {
		cb_set_err(err, errlen, "tokenizer.json: pre_tokenizer without a type");
		return -EINVAL;
	}
	if (!strcmp(type, "Sequence")) {
		const cJSON *it, *arr = cJSON_GetObjectItemCaseSensitive(n, "pretokenizers");

		cJSON_ArrayForEach(it, arr)
			if (load_pretok(tok, it, err, errlen))
				return -EINVAL;
		return 0;
	}
	if (!strcmp(type, "Split")) {
		const char *beh = jstr(n, "behavior");

		st.kind = P_SPLIT;
		st.invert = jbool(n, "invert", false);
		if (!beh || !strcmp(beh, "Isolated"))
			st.beh = B_ISOLATED;
		else if (!strcmp(beh, "Removed"))
			st.beh = B_REMOVED;
		else if (!strcmp(beh, "MergedWithPrevious"))
			st.beh = B_MERGED_PREV;
		else if (!strcmp(beh, "MergedWithNext"))
			st.beh = B_MERGED_NEXT;
		else if (!strcmp(beh, "Contiguous"))
			st.beh = B_CONTIGUOUS;
		else {
			cb_set_err(err, errlen, "tokenizer.json: unknown Split behavior '%s'", beh);
			return -EINVAL;
		}
		st.re = compile_pattern(cJSON_GetObjectItemCaseSensitive(n, "pattern"), err, errlen);
		if (!st.re)
			return -EINVAL;
	} else if (!strcmp(type, "ByteLevel")) {
		tok->bytelevel = true;
		if (jbool(n, "use_regex", true)) {
			cJSON *pat = cJSON_CreateObject();

			if (!pat || !cJSON_AddStringToObject(pat, "Regex", gpt2_regex)) {
				cJSON_Delete(pat);
				return -ENOMEM;
			}
			st.kind = P_SPLIT;
			st.beh = B_ISOLATED;
			st.re = compile_pattern(pat, err, errlen);
			cJSON_Delete(pat);
			if (!st.re)
				return -EINVAL;
		}
		/* the prefix space comes before the regex split */
		if (jbool(n, "add_prefix_space", false)) {
			struct pre_step ps = { .kind = P_BYTELEVEL, .add_prefix_space = true };

			if (add_pre(tok, &ps))
				goto oom;
		}
		if (!st.re)
			return 0;
	} else if (!strcmp(type, "Metaspace")) {
		const char *r = jstr(n, "replacement");

		st.kind = P_METASPACE;
		if (!r || !*r || strlen(r) >= sizeof(st.rep) || parse_scheme(n, &st.scheme)) {
			cb_set_err(err, errlen, "tokenizer.json: bad Metaspace pre-tokenizer");
			return -EINVAL;
		}
		strcpy(st.rep, r);
		st.replen = strlen(r);
		st.split = jbool(n, "split", true);
	} else {
		cb_set_err(err, errlen, "tokenizer.json: unsupported pre_tokenizer type '%s'", type);
		return -EINVAL;
	}
	if (add_pre(tok, &st))
		goto oom;
	return 0;
oom:
	pcre2_code_free(st.re);
	cb_set_err(err, errlen, "out of memory");
	return -ENOMEM;
}

/* ---- decoder: what each token turns into ---- */

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

static int load_decoder(struct cb_tokenizer *tok, struct dec_chain *dc, const cJSON *n,
			bool *fused, char *err, size_t errlen)
{
	const char *type;
	struct dec_step st = { 0 };

	if (!n || cJSON_IsNull(n))
		return 0;
	type = jstr(n, "type");
	if (!type)
		goto bad;
	if (!strcmp(type, "Sequence")) {
		const cJSON *it, *arr = cJSON_GetObjectItemCaseSensitive(n, "decoders");

		cJSON_ArrayForEach(it, arr)
			if (load_decoder(tok, dc, it, fused, err, errlen))
				return -EINVAL;
		return 0;
	}
	if (dc->n == sizeof(dc->s) / sizeof(dc->s[0]))
		goto bad;
	if (!strcmp(type, "ByteLevel")) {
		st.kind = D_BYTELEVEL;
	} else if (!strcmp(type, "Replace")) {
		st.kind = D_REPLACE;
		st.a = jstr(cJSON_GetObjectItemCaseSensitive(n, "pattern"), "String");
		st.b = jstr(n, "content");
		if (!st.a || !st.b || !*st.a) {
			cb_set_err(err, errlen, "tokenizer.json: only String patterns are supported in Replace decoders");
			return -EINVAL;
		}
	} else if (!strcmp(type, "ByteFallback")) {
		st.kind = D_BYTEFALLBACK;
	} else if (!strcmp(type, "Fuse")) {
		st.kind = D_FUSE;
		*fused = true;
	} else if (!strcmp(type, "Strip")) {
		const char *c = jstr(n, "content");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(n, "start");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(n, "stop");

		st.kind = D_STRIP;
		if (!c || !*c)
			goto bad;
		u8_get(c, strlen(c), &st.cp);
		st.start = cJSON_IsNumber(a) ? a->valueint : 0;
		st.stop = cJSON_IsNumber(b) ? b->valueint : 0;
		st.fused = *fused;
		if (st.fused) {
			/* acts on the whole output: applied at decode time */
			tok->strip_cp = st.cp;
			tok->strip_start = st.start;
			tok->strip_stop = st.stop;
			return 0;
		}
	} else if (!strcmp(type, "Metaspace")) {
		enum prepend_scheme ps;

		st.kind = D_METASPACE;
		st.a = jstr(n, "replacement");
		if (!st.a || !*st.a || parse_scheme(n, &ps))
			goto bad;
		/* HF strips the first token's leading space unless the scheme is never */
		if (ps != PS_NEVER) {
			tok->strip_cp = ' ';
			tok->strip_start = 1;
		}
	} else {
		cb_set_err(err, errlen, "tokenizer.json: unsupported decoder type '%s'", type);
		return -EINVAL;
	}
	dc->s[dc->n++] = st;
	return 0;
bad:
	cb_set_err(err, errlen, "tokenizer.json: bad decoder%s%s", type ? " " : "", type ? type : "");
	return -EINVAL;
}

static int replace_all(struct sbuf *out, const char *s, size_t n, const char *pat, size_t plen,
		       const char *rep, size_t rlen)
{
	size_t i = 0;

	while (i < n) {
		const char *hit = plen <= n - i ? memmem(s + i, n - i, pat, plen) : NULL;
		size_t upto = hit ? (size_t)(hit - s) : n;

		if (sbuf_add(out, s + i, upto - i))
			return -ENOMEM;
		if (!hit)
			break;
		if (sbuf_add(out, rep, rlen))
			return -ENOMEM;
		i = upto + plen;
	}
	return sbuf_reserve(out, 0);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "<0xNN>" -> NN, else -1 */
static int byte_token(const char *s, size_t n)
{
	int h, l;

	if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>')
		return -1;
	h = hexval(s[3]);
	l = hexval(s[4]);
	if (h < 0 || l < 0)
		return -1;
	return h * 16 + l;
}

/* Run the per-token part of the decoder chain on one token string. */
static int decode_piece(const struct dec_chain *dc, const char *s, size_t n, struct sbuf *out)
{
	struct sbuf a = { 0 }, b = { 0 };
	size_t i;
	int ret = -ENOMEM;

	if (sbuf_add(&a, s, n))
		goto out;
	for (i = 0; i < dc->n; i++) {
		const struct dec_step *st = &dc->s[i];
		struct sbuf t;
		int v;

		b.n = 0;
		switch (st->kind) {
		case D_BYTELEVEL:
			if (bl_unmap(a.p, a.n, &b))
				goto out;
			break;
		case D_REPLACE:
		case D_METASPACE:
			if (replace_all(&b, a.p, a.n, st->a, strlen(st->a),
					st->kind == D_REPLACE ? st->b : " ",
					st->kind == D_REPLACE ? strlen(st->b) : 1))
				goto out;
			break;
		case D_BYTEFALLBACK:
			v = byte_token(a.p, a.n);
			if (v >= 0) {
				unsigned char c = v;

				if (sbuf_add(&b, &c, 1))
					goto out;
			} else if (sbuf_add(&b, a.p, a.n)) {
				goto out;
			}
			break;
		case D_FUSE:
			continue;
		case D_STRIP: {
			/* per-token strip (no Fuse before it) */
			size_t lo = 0, hi = a.n, k;
			int32_t c;

			for (k = 0; k < st->start && lo < hi; k++) {
				size_t l = u8_get(a.p + lo, hi - lo, &c);

				if (c != st->cp)
					break;
				lo += l;
			}
			for (k = 0; k < st->stop && hi > lo; k++) {
				size_t l = 1;

				while (l < hi - lo && ((unsigned char)a.p[hi - l] & 0xc0) == 0x80)
					l++;
				u8_get(a.p + hi - l, l, &c);
				if (c != st->cp)
					break;
				hi -= l;
			}
			if (sbuf_add(&b, a.p + lo, hi - lo))
				goto out;
			break;
		}
		}
		t = a;
		a = b;
		b = t;
	}
	ret = sbuf_add(out, a.p, a.n);
out:
	free(a.p);
	free(b.p);
	return ret;
}

static int load_postproc(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen)
{
	const char *type;

	if (!n || cJSON_IsNull(n))
		return 0;
	type = jstr(n, "type");
	if (!type)
		goto bad;
	if (!strcmp(type, "Sequence")) {
		const cJSON *it, *arr = cJSON_GetObjectItemCaseSensitive(n, "processors");

		cJSON_ArrayForEach(it, arr)
			if (load_postproc(tok, it, err, errlen))
				return -EINVAL;
		return 0;
	}
	if (!strcmp(type, "ByteLevel"))
		return 0;	/* offsets only */
	if (!strcmp(type, "TemplateProcessing")) {
		const cJSON *single = cJSON_GetObjectItemCaseSensitive(n, "single");
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(n, "special_tokens");
		const cJSON *it;

		cJSON_ArrayForEach(it, single) {
			const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "SpecialToken");
			const cJSON *id, *ids, *x;
			int32_t *p;

			if (cJSON_GetObjectItemCaseSensitive(it, "Sequence")) {
				p = realloc(tok->tmpl, (tok->n_tmpl + 1) * sizeof(*p));
				if (!p)
					goto bad;
				tok->tmpl = p;
				tok->tmpl[tok->n_tmpl++] = -1;
				continue;
			}
			id = cJSON_GetObjectItemCaseSensitive(st, "id");
			if (!cJSON_IsString(id))
				goto bad;
			ids = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(sp, id->valuestring), "ids");
			if (!cJSON_IsArray(ids))
				goto bad;
			cJSON_ArrayForEach(x, ids) {
				if (!cJSON_IsNumber(x) || x->valueint < 0)
					goto bad;
				p = realloc(tok->tmpl, (tok->n_tmpl + 1) * sizeof(*p));
				if (!p)
					goto bad;
				tok->tmpl = p;
				tok->tmpl[tok->n_tmpl++] = x->valueint;
			}
		}
		return 0;
	}
	if (!strcmp(type, "BertProcessing") || !strcmp(type, "RobertaProcessing")) {
		const cJSON *cls = cJSON_GetObjectItemCaseSensitive(n, "cls");
		const cJSON *sep = cJSON_GetObjectItemCaseSensitive(n, "sep");
		const cJSON *c1 = cJSON_GetArrayItem(cls, 1), *s1 = cJSON_GetArrayItem(sep, 1);

		if (!cJSON_IsNumber(c1) || !cJSON_IsNumber(s1))
			goto bad;
		free(tok->tmpl);
		tok->tmpl = malloc(3 * sizeof(*tok->tmpl));
		if (!tok->tmpl)
			goto bad;
		tok->tmpl[0] = c1->valueint;
		tok->tmpl[1] = -1;
		tok->tmpl[2] = s1->valueint;
		tok->n_tmpl = 3;
		return 0;
	}
	cb_set_err(err, errlen, "tokenizer.json: unsupported post_processor type '%s'", type);
	return -EINVAL;
bad:
	cb_set_err(err, errlen, "tokenizer.json: bad post_processor%s%s", type ? " " : "",
		type ? type : "");
	return -EINVAL;
}

/* Store @s in the arena (as the bytes the encoder looks for) for @id. */
static int set_piece(struct cb_tokenizer *tok, int32_t id, const char *s, size_t n)
{
	size_t off = tok->arena.n;

	if (tok->bytelevel) {
		if (bl_unmap(s, n, &tok->arena))
			return -ENOMEM;
	} else if (sbuf_add(&tok->arena, s, n)) {
		return -ENOMEM;
	}
	tok->piece_off[id] = off;
	tok->piece_len[id] = tok->arena.n - off;
	return 0;
}

static int set_dec(struct cb_tokenizer *tok, const struct dec_chain *dc, int32_t id,
		   const char *s, size_t n)
{
	size_t off = tok->arena.n;

	if (decode_piece(dc, s, n, &tok->arena))
		return -ENOMEM;
	tok->dec_off[id] = off;
	tok->dec_len[id] = tok->arena.n - off;
	if (tok->dec_len[id] > tok->max_dec)
		tok->max_dec = tok->dec_len[id];
	return 0;
}

static int32_t added_id(const struct cb_tokenizer *tok, const char *s)
{
	size_t i;

	for (i = 0; i < tok->n_added; i++)
		if (!strcmp(tok->added[i].content, s))
			return tok->added[i].id;
	return -1;
}

static void pick_bos_eos(struct cb_tokenizer *tok)
{
	static const char *const bos[] = { "<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>" };
	static const char *const eos[] = { "</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>",
					   "<|im_end|>" };
	size_t i;

	tok->bos_id = tok->eos_id = -1;
	if (tok->n_tmpl > 1 && tok->tmpl[0] >= 0)
		tok->bos_id = tok->tmpl[0];
	for (i = 0; tok->bos_id < 0 && i < sizeof(bos) / sizeof(bos[0]); i++)
		tok->bos_id = added_id(tok, bos[i]);
	for (i = 0; tok->eos_id < 0 && i < sizeof(eos) / sizeof(eos[0]); i++)
		tok->eos_id = added_id(tok, eos[i]);
}

static int load_model(struct cb_tokenizer *tok, const cJSON *model, const cJSON *added,
		      const struct dec_chain *dc, char *err, size_t errlen)
{
	const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
	const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
	const char *type = jstr(model, "type"), *s;
	const cJSON *it;
	size_t i, nv = 0;
	int32_t maxid = -1;
	uint32_t rank = 0;
	struct sbuf tmp = { 0 };

	if (!type || strcmp(type, "BPE")) {
		cb_set_err(err, errlen, "tokenizer.json: model type '%s' is not supported (only BPE)",
			type ? type : "?");
		return -EINVAL;
	}
	if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges)) {
		cb_set_err(err, errlen, "tokenizer.json: BPE model without vocab or merges");
		return -EINVAL;
	}
	if (((s = jstr(model, "continuing_subword_prefix")) && *s) ||
	    ((s = jstr(model, "end_of_word_suffix")) && *s)) {
		cb_set_err(err, errlen, "tokenizer.json: BPE subword prefix/suffix is not supported");
		return -EINVAL;
	}
	tok->byte_fallback = jbool(model, "byte_fallback", false);
	tok->fuse_unk = jbool(model, "fuse_unk", false);
	tok->ignore_merges = jbool(model, "ignore_merges", false);

	cJSON_ArrayForEach(it, vocab) {
		if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > 0x7fffffff) {
			cb_set_err(err, errlen, "tokenizer.json: bad id for vocab entry '%s'", it->string);
			return -EINVAL;
		}
		if (it->valueint > maxid)
			maxid = it->valueint;
		nv++;
	}
	cJSON_ArrayForEach(it, added) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");

		if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 0x7fffffff ||
		    !jstr(it, "content")) {
			cb_set_err(err, errlen, "tokenizer.json: bad added_tokens entry");
			return -EINVAL;
		}
		if (id->valueint > maxid)
			maxid = id->valueint;
	}
	tok->n_ids = (size_t)maxid + 1;
	tok->piece_off = calloc(tok->n_ids, sizeof(uint32_t));
	tok->piece_len = malloc(tok->n_ids * sizeof(uint32_t));
	tok->dec_off = calloc(tok->n_ids, sizeof(uint32_t));
	tok->dec_len = malloc(tok->n_ids * sizeof(uint32_t));
	tok->is_special = calloc(tok->n_ids, 1);
	if (!tok->piece_off || !tok->piece_len || !tok->dec_off || !tok->dec_len ||
	    !tok->is_special || smap_init(&tok->vocab, nv))
		goto oom;
	memset(tok->piece_len, 0xff, tok->n_ids * sizeof(uint32_t));
	memset(tok->dec_len, 0xff, tok->n_ids * sizeof(uint32_t));

	cJSON_ArrayForEach(it, vocab) {
		size_t n = strlen(it->string);

		if (set_piece(tok, it->valueint, it->string, n) ||
		    set_dec(tok, dc, it->valueint, it->string, n))
			goto oom;
	}
	/* index after filling: the arena may move while it grows */
	for (i = 0; i < tok->n_ids; i++)
		if (tok->piece_len[i] != UINT32_MAX)
			smap_put(&tok->vocab, tok->arena.p, tok->piece_off[i], tok->piece_len[i], i);

	tok->unk_id = -1;
	if ((s = jstr(model, "unk_token"))) {
		tok->unk_id = smap_get(&tok->vocab, tok->arena.p, s, strlen(s));
		if (tok->unk_id < 0) {
			cb_set_err(err, errlen, "tokenizer.json: unk_token '%s' is not in the vocab", s);
			return -EINVAL;
		}
	}
	for (i = 0; i < 256; i++) {
		char name[8];

		snprintf(name, sizeof(name), "<0x%02X>", (unsigned int)i);
		tok->byte_id[i] = tok->bytelevel ? -1 :
				  smap_get(&tok->vocab, tok->arena.p, name, 6);
	}

	if (mmap_init(&tok->merges, cJSON_GetArraySize(merges)))
		goto oom;
	cJSON_ArrayForEach(it, merges) {
		const char *a, *b;
		size_t al, bl;
		int32_t ia, ib, ic;
		const char *sp;

		if (cJSON_IsString(it)) {
			a = it->valuestring;
			sp = strchr(a, ' ');
			if (!sp || strchr(sp + 1, ' '))
				goto badmerge;
			al = sp - a;
			b = sp + 1;
			bl = strlen(b);
		} else if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 2 &&
			   cJSON_IsString(cJSON_GetArrayItem(it, 0)) &&
			   cJSON_IsString(cJSON_GetArrayItem(it, 1))) {
			a = cJSON_GetArrayItem(it, 0)->valuestring;
			b = cJSON_GetArrayItem(it, 1)->valuestring;
			al = strlen(a);
			bl = strlen(b);
		} else {
			goto badmerge;
		}
		tmp.n = 0;
		if (tok->bytelevel) {
			size_t mid;

			if (bl_unmap(a, al, &tmp))
				goto oom;
			mid = tmp.n;
			if (bl_unmap(b, bl, &tmp))
				goto oom;
			ia = smap_get(&tok->vocab, tok->arena.p, tmp.p, mid);
			ib = smap_get(&tok->vocab, tok->arena.p, tmp.p + mid, tmp.n - mid);
		} else {
			if (sbuf_add(&tmp, a, al) || sbuf_add(&tmp, b, bl))
				goto oom;
			ia = smap_get(&tok->vocab, tok->arena.p, a, al);
			ib = smap_get(&tok->vocab, tok->arena.p, b, bl);
		}
		ic = smap_get(&tok->vocab, tok->arena.p, tmp.p, tmp.n);
		if (ia < 0 || ib < 0 || ic < 0) {
			cb_set_err(err, errlen, "tokenizer.json: merge %u ('%.*s' '%.*s') uses a token "
				"outside the vocab", rank, (int)al, a, (int)bl, b);
			free(tmp.p);
			return -EINVAL;
		}
		mmap_put(&tok->merges, ia, ib, rank++, ic);
	}
	free(tmp.p);
	return 0;
badmerge:
	cb_set_err(err, errlen, "tokenizer.json: merge %u is neither \"a b\" nor [\"a\", \"b\"]", rank);
	free(tmp.p);
	return -EINVAL;
oom:
	free(tmp.p);
	cb_set_err(err, errlen, "out of memory");
	return -ENOMEM;
}

static int load_added(struct cb_tokenizer *tok, const cJSON *added, const struct dec_chain *dc,
		      char *err, size_t errlen)
{
	const cJSON *it;
	size_t n = cJSON_GetArraySize(added);

	if (!n)
		return 0;
	tok->added = calloc(n, sizeof(*tok->added));
	if (!tok->added)
		goto oom;
	cJSON_ArrayForEach(it, added) {
		struct added_tok *a = &tok->added[tok->n_added];
		const char *c = jstr(it, "content");

		a->id = cJSON_GetObjectItemCaseSensitive(it, "id")->valueint;
		a->content = xstrdup(c, &a->len);
		if (!a->content)
			goto oom;
		tok->n_added++;
		a->special = jbool(it, "special", false);
		a->lstrip = jbool(it, "lstrip", false);
		a->rstrip = jbool(it, "rstrip", false);
		a->single_word = jbool(it, "single_word", false);
		/* HF: "normalized" defaults to the opposite of "special" */
		a->normalized = jbool(it, "normalized", !a->special);
		if (!a->len)
			continue;	/* an empty token can never match */
		tok->added_first[a->normalized][(unsigned char)a->content[0]] = 1;
		tok->is_special[a->id] = a->special;
		if (set_dec(tok, dc, a->id, a->content, a->len))
			goto oom;
		/* an added token outside the model vocab still has a text form */
		if (tok->piece_len[a->id] == UINT32_MAX) {
			size_t off = tok->arena.n;

			if (sbuf_add(&tok->arena, a->content, a->len))
				goto oom;
			tok->piece_off[a->id] = off;
			tok->piece_len[a->id] = a->len;
		}
	}
	return 0;
oom:
	cb_set_err(err, errlen, "out of memory");
	return -ENOMEM;
}

struct cb_tokenizer *cb_tok_load(const char *json, size_t len, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;
	cJSON *root;
	const cJSON *model, *added;
	struct dec_chain dc = { .n = 0 };
	bool fused = false;

	bl_init();
	if (err && errlen)
		err[0] = 0;
	root = cJSON_ParseWithLength(json, len);
	if (!root) {
		cb_set_err(err, errlen, "tokenizer.json: not valid JSON");
		return NULL;
	}
	tok = calloc(1, sizeof(*tok));
	if (!tok) {
		cb_set_err(err, errlen, "out of memory");
		goto fail;
	}
	model = cJSON_GetObjectItemCaseSensitive(root, "model");
	added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
	if (!model) {
		cb_set_err(err, errlen, "tokenizer.json: no model");
		goto fail;
	}
	/* pre-tokenizer first: it decides whether pieces are byte-level */
	if (load_normalizer(tok, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), err, errlen) ||
	    load_pretok(tok, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), err, errlen) ||
	    load_decoder(tok, &dc, cJSON_GetObjectItemCaseSensitive(root, "decoder"), &fused,
			 err, errlen) ||
	    load_model(tok, model, added, &dc, err, errlen) ||
	    load_added(tok, added, &dc, err, errlen) ||
	    load_postproc(tok, cJSON_GetObjectItemCaseSensitive(root, "post_processor"), err,
			  errlen))
		goto fail;
	/* the decoder chain's strings point into the JSON tree: it is not needed now */
	pick_bos_eos(tok);
	cJSON_Delete(root);
	return tok;
fail:
	cJSON_Delete(root);
	cb_tok_free(tok);
	return NULL;
}

struct cb_tokenizer *cb_tok_load_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	struct sbuf b = { 0 };
	char chunk[65536];
	size_t n;
	struct cb_tokenizer *tok;

	if (!f) {
		cb_set_err(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (sbuf_add(&b, chunk, n)) {
			fclose(f);
			free(b.p);
			cb_set_err(err, errlen, "%s: out of memory", path);
			return NULL;
		}
	}
	if (ferror(f)) {
		cb_set_err(err, errlen, "%s: read error", path);
		fclose(f);
		free(b.p);
		return NULL;
	}
	fclose(f);
	tok = cb_tok_load(b.p ? b.p : "", b.n, err, errlen);
	free(b.p);
	if (!tok && err && errlen) {
		/* name the file instead of the generic "tokenizer.json" */
		char *msg = strdup(strncmp(err, "tokenizer.json: ", 16) ? err : err + 16);

		if (msg)
			cb_set_err(err, errlen, "%s: %s", path, msg);
		free(msg);
	}
	return tok;
}

int cb_tok_apply_config(struct cb_tokenizer *tok, const char *json, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *v;
	int32_t id;

	if (!root)
		return -EINVAL;
	/* bos_token/eos_token are a string or an AddedToken-like object */
	v = cJSON_GetObjectItemCaseSensitive(root, "bos_token");
	if (cJSON_IsObject(v))
		v = cJSON_GetObjectItemCaseSensitive(v, "content");
	if (cJSON_IsString(v) && (id = cb_tok_token_id(tok, v->valuestring,
						       strlen(v->valuestring))) >= 0)
		tok->bos_id = id;
	v = cJSON_GetObjectItemCaseSensitive(root, "eos_token");
	if (cJSON_IsObject(v))
		v = cJSON_GetObjectItemCaseSensitive(v, "content");
	if (cJSON_IsString(v) && (id = cb_tok_token_id(tok, v->valuestring,
						       strlen(v->valuestring))) >= 0)
		tok->eos_id = id;
	tok->cfg_add_bos = jbool(root, "add_bos_token", false);
	tok->cfg_add_eos = jbool(root, "add_eos_token", false);
	cJSON_Delete(root);
	return 0;
}

/* ------------------------------------------------------------------ */
/* BPE                                                                 */

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
	struct sbuf a, b;	/* normaliser scratch */
	struct ivec out;
};

static bool cand_less(const struct cand *x, const struct cand *y)
{
	return x->rank < y->rank || (x->rank == y->rank && x->pos < y->pos);
}

static int heap_push(struct work *w, struct cand c)
{
	size_t i;

	if (w->heap_n == w->heap_cap) {
		size_t cap = w->heap_cap ? w->heap_cap * 2 : 64;
		struct cand *p = realloc(w->heap, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->heap = p;
		w->heap_cap = cap;
	}
	i = w->heap_n++;
	while (i) {
		size_t up = (i - 1) / 2;

		if (!cand_less(&c, &w->heap[up]))
			break;
		w->heap[i] = w->heap[up];
		i = up;
	}
	w->heap[i] = c;
	return 0;
}

static struct cand heap_pop(struct work *w)
{
	struct cand top = w->heap[0], last = w->heap[--w->heap_n];
	size_t i = 0, n = w->heap_n;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && cand_less(&w->heap[c + 1], &w->heap[c]))
			c++;
		if (!cand_less(&w->heap[c], &last))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (n)
		w->heap[i] = last;
	return top;
}

static int sym_add(struct work *w, size_t *n, int32_t id)
{
	if (*n == w->sym_cap) {
		size_t cap = w->sym_cap ? w->sym_cap * 2 : 64;
		struct sym *p = realloc(w->sym, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->sym = p;
		w->sym_cap = cap;
	}
	w->sym[*n].id = id;
	w->sym[*n].prev = (int32_t)*n - 1;
	w->sym[*n].next = (int32_t)*n + 1;
	w->sym[*n].dead = false;
	(*n)++;
	return 0;
}

static int push_pair(const struct cb_tokenizer *tok, struct work *w, int32_t pos)
{
	const struct mmap_ent *m;
	int32_t nx = w->sym[pos].next;

	m = mmap_get(&tok->merges, w->sym[pos].id, w->sym[nx].id);
	if (!m)
		return 0;
	return heap_push(w, (struct cand){ m->rank, (uint32_t)pos, m->id });
}

/*
 * BPE on one piece, the way HF's Word::merge_all does it: a heap of
 * candidate merges ordered by (rank, position), each checked against the
 * current symbols when popped.  O(n log n) in the piece length.
 */
static int bpe(const struct cb_tokenizer *tok, struct work *w, const char *s, size_t n)
{
	size_t nsym = 0, i;
	int32_t unk = -1, k;
	int ret;

	if (!n)
		return 0;
	if (tok->ignore_merges) {
		int32_t id = smap_get(&tok->vocab, tok->arena.p, s, n);

		if (id >= 0)
			return ivec_push(&w->out, id);
	}
	/* initial symbols: bytes (byte-level) or characters */
	for (i = 0; i < n;) {
		size_t l = 1;
		int32_t id, cp;

		if (!tok->bytelevel)
			l = u8_get(s + i, n - i, &cp);
		id = smap_get(&tok->vocab, tok->arena.p, s + i, l);
		if (id >= 0) {
			if (unk >= 0 && (ret = sym_add(w, &nsym, unk)))
				return ret;
			unk = -1;
			if ((ret = sym_add(w, &nsym, id)))
				return ret;
		} else {
			size_t j;
			bool all = tok->byte_fallback;

			for (j = 0; all && j < l; j++)
				all = tok->byte_id[(unsigned char)s[i + j]] >= 0;
			if (all) {
				/* HF adds byte tokens without flushing a pending unk */
				for (j = 0; j < l; j++)
					if ((ret = sym_add(w, &nsym,
							   tok->byte_id[(unsigned char)s[i + j]])))
						return ret;
			} else if (tok->unk_id >= 0) {
				if (unk >= 0 && !tok->fuse_unk && (ret = sym_add(w, &nsym, unk)))
					return ret;
				unk = tok->unk_id;
			}
			/* no unk token: the character is dropped, as in HF */
		}
		i += l;
	}
	if (unk >= 0 && (ret = sym_add(w, &nsym, unk)))
		return ret;
	if (!nsym)
		return 0;
	w->sym[nsym - 1].next = -1;

	w->heap_n = 0;
	for (k = 0; k + 1 < (int32_t)nsym; k++)
		if ((ret = push_pair(tok, w, k)))
			return ret;
	while (w->heap_n) {
		struct cand c = heap_pop(w);
		struct sym *a = &w->sym[c.pos];
		const struct mmap_ent *m;
		int32_t nx;

		if (a->dead || a->next < 0)
			continue;
		nx = a->next;
		m = mmap_get(&tok->merges, a->id, w->sym[nx].id);
		if (!m || m->id != c.id)
			continue;	/* stale: the pair changed since it was queued */
		a->id = c.id;
		a->next = w->sym[nx].next;
		w->sym[nx].dead = true;
		if (a->next >= 0)
			w->sym[a->next].prev = c.pos;
		if (a->prev >= 0 && (ret = push_pair(tok, w, a->prev)))
			return ret;
		if (a->next >= 0 && (ret = push_pair(tok, w, c.pos)))
			return ret;
	}
	for (k = 0; k >= 0; k = w->sym[k].next)
		if ((ret = ivec_push(&w->out, w->sym[k].id)))
			return ret;
	return 0;
}

/* ------------------------------------------------------------------ */
/* pre-tokenization                                                    */

struct piece {
	size_t off, len;	/* into the pieces' string buffer */
	bool first;		/* starts at offset 0 of the original input */
};

struct plist {
	struct piece *p;
	size_t n, cap;
	struct sbuf s;
};

static int plist_add(struct plist *l, const char *s, size_t n, bool first)
{
	size_t off = l->s.n;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct piece *p = realloc(l->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->p = p;
		l->cap = cap;
	}
	if (sbuf_add(&l->s, s, n))
		return -ENOMEM;
	l->p[l->n++] = (struct piece){ off, n, first };
	return 0;
}

static void plist_free(struct plist *l)
{
	free(l->p);
	free(l->s.p);
}

/* Split one piece on a regex with the given delimiter behaviour. */
static int split_piece(const struct pre_step *st, const char *s, size_t n, bool first,
		       struct plist *out, pcre2_match_data *md)
{
	size_t pos = 0, last = 0;
	int ret;

	struct seg {
		size_t a, b;
		bool m;
	} *segs = NULL;
	size_t nseg = 0, cap = 0, i;

#define PUSH_SEG(A, B, M) do {							\
	if ((B) > (A)) {							\
		if (nseg == cap) {						\
			struct seg *np;						\
			cap = cap ? cap * 2 : 16;				\
			np = realloc(segs, cap * sizeof(*np));			\
			if (!np) { free(segs); return -ENOMEM; }		\
			segs = np;						\
		}								\
		segs[nseg++] = (struct seg){ (A), (B), (M) };			\
	}									\
} while (0)

	while (pos <= n) {
		int rc = pcre2_match(st->re, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK, md, NULL);
		PCRE2_SIZE *ov;

		if (rc < 0)
			break;
		ov = pcre2_get_ovector_pointer(md);
		if (ov[1] == ov[0]) {
			/* empty match: nothing to split here, step one character */
			int32_t cp;

			if (ov[0] >= n)
				break;
			pos = ov[0] + u8_get(s + ov[0], n - ov[0], &cp);
			continue;
		}
		PUSH_SEG(last, ov[0], false);
		PUSH_SEG(ov[0], ov[1], true);
		last = pos = ov[1];
	}
	PUSH_SEG(last, n, false);
#undef PUSH_SEG

	/* segs alternate; "m" marks a delimiter unless the split is inverted */
	for (i = 0; i < nseg; i++) {
		bool delim = segs[i].m != st->invert;
		size_t a = segs[i].a, b = segs[i].b;

		switch (st->beh) {
		case B_REMOVED:
			if (delim)
				continue;
			break;
		case B_ISOLATED:
			break;
		case B_MERGED_PREV:
			/* a delimiter joins the piece before it */
			if (!delim && i + 1 < nseg && (segs[i + 1].m != st->invert)) {
				b = segs[i + 1].b;
				i++;
			}
			break;
		case B_MERGED_NEXT:
			if (delim && i + 1 < nseg && (segs[i + 1].m == st->invert)) {
				b = segs[i + 1].b;
				i++;
			}
			break;
		case B_CONTIGUOUS:
			while (i + 1 < nseg && (segs[i + 1].m != st->invert) == delim) {
				b = segs[i + 1].b;
				i++;
			}
			break;
		}
		if ((ret = plist_add(out, s + a, b - a, first && a == 0))) {
			free(segs);
			return ret;
		}
	}
	free(segs);
	return 0;
}

static int pretokenize(const struct cb_tokenizer *tok, const char *s, size_t n, bool first,
		       struct plist *res)
{
	struct plist cur = { 0 }, nxt = { 0 };
	pcre2_match_data *md = NULL;
	size_t k, i;
	int ret;

	if ((ret = plist_add(&cur, s, n, first)))
		goto out;
	for (k = 0; k < tok->n_pre; k++) {
		const struct pre_step *st = &tok->pre[k];

		nxt.n = 0;
		nxt.s.n = 0;
		for (i = 0; i < cur.n; i++) {
			const char *ps = cur.s.p + cur.p[i].off;
			size_t pl = cur.p[i].len;
			bool pf = cur.p[i].first;

			switch (st->kind) {
			case P_SPLIT:
				if (!md && !(md = pcre2_match_data_create(4, NULL))) {
					ret = -ENOMEM;
					goto out;
				}
				ret = split_piece(st, ps, pl, pf, &nxt, md);
				break;
			case P_BYTELEVEL:
				/* HF prepends per piece, unless it already starts with a space */
				if (st->add_prefix_space && (pl == 0 || ps[0] != ' ')) {
					struct sbuf t = { 0 };

					ret = sbuf_add(&t, " ", 1) ?: sbuf_add(&t, ps, pl) ?:
					      plist_add(&nxt, t.p, t.n, pf);
					free(t.p);
				} else {
					ret = plist_add(&nxt, ps, pl, pf);
				}
				break;
			case P_METASPACE: {
				struct sbuf t = { 0 };
				size_t a, j;
				bool pre = (st->scheme == PS_ALWAYS ||
					    (st->scheme == PS_FIRST && pf));

				ret = replace_all(&t, ps, pl, " ", 1, st->rep, st->replen);
				if (!ret && pre && (t.n < st->replen || memcmp(t.p, st->rep, st->replen))) {
					struct sbuf u = { 0 };

					ret = sbuf_add(&u, st->rep, st->replen) ?:
					      sbuf_add(&u, t.p, t.n);
					free(t.p);
					t = u;
				}
				if (ret) {
					free(t.p);
					break;
				}
				if (!st->split) {
					ret = plist_add(&nxt, t.p ? t.p : "", t.n, pf);
					free(t.p);
					break;
				}
				/* split with MergedWithNext: every replacement starts a piece */
				for (a = 0, j = 0; j <= t.n && !ret; j++) {
					if (j == t.n || (j > a && j + st->replen <= t.n &&
							 !memcmp(t.p + j, st->rep, st->replen))) {
						if (j > a)
							ret = plist_add(&nxt, t.p + a, j - a, pf && a == 0);
						a = j;
					}
				}
				free(t.p);
				break;
			}
			}
			if (ret)
				goto out;
		}
		{
			struct plist t = cur;

			cur = nxt;
			nxt = t;
		}
	}
	plist_free(res);
	*res = cur;
	cur = (struct plist){ 0 };
out:
	pcre2_match_data_free(md);
	plist_free(&cur);
	plist_free(&nxt);
	return ret;
}

/* ------------------------------------------------------------------ */
/* normalisation                                                       */

static int normalize(const struct cb_tokenizer *tok, struct work *w, const char *s, size_t n,
		     const char **outp, size_t *outn)
{
	size_t k;

	w->a.n = 0;
	if (sbuf_add(&w->a, s, n))
		return -ENOMEM;
	for (k = 0; k < tok->n_norm; k++) {
		const struct norm_step *st = &tok->norm[k];
		struct sbuf t;
		size_t i;
		int32_t c;

		w->b.n = 0;
		switch (st->kind) {
		case N_NFC:
		case N_NFD:
		case N_NFKC:
		case N_NFKD: {
			utf8proc_option_t o = UTF8PROC_STABLE;
			utf8proc_uint8_t *dst = NULL;
			utf8proc_ssize_t r;

			if (st->kind == N_NFC || st->kind == N_NFKC)
				o |= UTF8PROC_COMPOSE;
			else
				o |= UTF8PROC_DECOMPOSE;
			if (st->kind == N_NFKC || st->kind == N_NFKD)
				o |= UTF8PROC_COMPAT;
			if (!w->a.n)
				break;
			r = utf8proc_map((const utf8proc_uint8_t *)w->a.p, w->a.n, &dst, o);
			if (r < 0)
				return r == UTF8PROC_ERROR_NOMEM ? -ENOMEM : -EINVAL;
			r = sbuf_add(&w->b, dst, r);
			free(dst);
			if (r)
				return -ENOMEM;
			break;
		}
		case N_PREPEND:
			/* HF prepends only to a non-empty string */
			if (w->a.n && sbuf_add(&w->b, st->a, st->alen))
				return -ENOMEM;
			if (sbuf_add(&w->b, w->a.p, w->a.n))
				return -ENOMEM;
			break;
		case N_REPLACE:
			if (replace_all(&w->b, w->a.p, w->a.n, st->a, st->alen, st->b, st->blen))
				return -ENOMEM;
			break;
		case N_LOWER:
			for (i = 0; i < w->a.n;) {
				char u[4];

				i += u8_get(w->a.p + i, w->a.n - i, &c);
				if (sbuf_add(&w->b, u, u8_put(u, utf8proc_tolower(c))))
					return -ENOMEM;
			}
			break;
		case N_STRIP: {
			size_t lo = 0, hi = w->a.n;

			while (st->left && lo < hi) {
				size_t l = u8_get(w->a.p + lo, hi - lo, &c);

				if (!u_is_white(c))
					break;
				lo += l;
			}
			while (st->right && hi > lo) {
				size_t l = 1;

				while (l < hi - lo && ((unsigned char)w->a.p[hi - l] & 0xc0) == 0x80)
					l++;
				u8_get(w->a.p + hi - l, l, &c);
				if (!u_is_white(c))
					break;
				hi -= l;
			}
			if (sbuf_add(&w->b, w->a.p + lo, hi - lo))
				return -ENOMEM;
			break;
		}
		}
		t = w->a;
		w->a = w->b;
		w->b = t;
	}
	*outp = w->a.p;
	*outn = w->a.n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* added tokens                                                        */

struct seg {
	size_t a, b;		/* text range, or the added token's span */
	int32_t id;		/* -1 for text */
};

struct seglist {
	struct seg *p;
	size_t n, cap;
};

static int seg_add(struct seglist *l, size_t a, size_t b, int32_t id)
{
	if (id < 0 && b <= a)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct seg *p = realloc(l->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->p = p;
		l->cap = cap;
	}
	l->p[l->n++] = (struct seg){ a, b, id };
	return 0;
}

static bool ends_with_word(const char *s, size_t n)
{
	size_t l = 1;
	int32_t c;

	if (!n)
		return false;
	while (l < n && ((unsigned char)s[n - l] & 0xc0) == 0x80)
		l++;
	u8_get(s + n - l, l, &c);
	return u_is_alnum(c);
}

static bool starts_with_word(const char *s, size_t n)
{
	int32_t c;

	if (!n)
		return false;
	u8_get(s, n, &c);
	return u_is_alnum(c);
}

/*
 * Split @s on the added tokens whose "normalized" flag equals @norm, as HF's
 * AddedVocabulary does: leftmost-longest, non-overlapping matches; a
 * single_word token only counts between non-word characters (a rejected
 * match still consumes its text); lstrip/rstrip swallow the whitespace
 * around the token.
 */
static int split_added(const struct cb_tokenizer *tok, const char *s, size_t n, bool norm,
		       struct seglist *out)
{
	size_t i = 0, start_off = 0, k;
	int ret;

	while (i < n) {
		const struct added_tok *best = NULL;

		if (tok->added_first[norm][(unsigned char)s[i]]) {
			for (k = 0; k < tok->n_added; k++) {
				const struct added_tok *a = &tok->added[k];

				if (a->normalized != norm || !a->len || a->len > n - i ||
				    memcmp(s + i, a->content, a->len))
					continue;
				if (!best || a->len > best->len)
					best = a;
			}
		}
		if (!best) {
			i++;
			continue;
		}
		{
			size_t a = i, b = i + best->len;

			if (best->single_word && (ends_with_word(s, a) ||
						  starts_with_word(s + b, n - b))) {
				i = b;
				continue;
			}
			if (best->lstrip) {
				while (a > start_off) {
					size_t l = 1;
					int32_t c;

					while (l < a - start_off &&
					       ((unsigned char)s[a - l] & 0xc0) == 0x80)
						l++;
					u8_get(s + a - l, l, &c);
					if (!u_is_white(c))
						break;
					a -= l;
				}
			}
			if (best->rstrip) {
				while (b < n) {
					int32_t c;
					size_t l = u8_get(s + b, n - b, &c);

					if (!u_is_white(c))
						break;
					b += l;
				}
			}
			if ((ret = seg_add(out, start_off, a, -1)) ||
			    (ret = seg_add(out, a, b, best->id)))
				return ret;
			start_off = i = b;
		}
	}
	return seg_add(out, start_off, n, -1);
}

/* Normalise, split on normalised added tokens, pre-tokenize and BPE one text segment. */
static int encode_segment(const struct cb_tokenizer *tok, struct work *w, const char *s,
			  size_t n, bool first)
{
	const char *ns;
	size_t nn, i, j;
	struct seglist sl = { 0 };
	struct plist pl = { 0 };
	char *copy = NULL;
	int ret;

	if ((ret = normalize(tok, w, s, n, &ns, &nn)))
		return ret;
	if (!nn)
		return 0;
	copy = malloc(nn);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, ns, nn);	/* w->a is scratch reused below */
	if ((ret = split_added(tok, copy, nn, true, &sl)))
		goto out;
	for (i = 0; i < sl.n; i++) {
		if (sl.p[i].id >= 0) {
			if ((ret = ivec_push(&w->out, sl.p[i].id)))
				goto out;
			continue;
		}
		if ((ret = pretokenize(tok, copy + sl.p[i].a, sl.p[i].b - sl.p[i].a,
				       first && sl.p[i].a == 0, &pl)))
			goto out;
		for (j = 0; j < pl.n; j++)
			if ((ret = bpe(tok, w, pl.s.p + pl.p[j].off, pl.p[j].len)))
				goto out;
	}
out:
	plist_free(&pl);
	free(sl.p);
	free(copy);
	return ret;
}

static long encode_vec(const struct cb_tokenizer *tok, const char *text, size_t len,
		       unsigned int flags, struct work *w)
{
	struct seglist sl = { 0 };
	char *clean;
	size_t cn = 0, i;
	int ret = 0;

	if (flags & ~CB_TOK_ENCODE_ALL)
		return -EINVAL;
	/* tokenizer_config.json's add_bos_token/add_eos_token extend the template */
	if ((flags & CB_TOK_ADD_SPECIAL) && tok->cfg_add_bos)
		flags |= CB_TOK_ADD_BOS;
	if ((flags & CB_TOK_ADD_SPECIAL) && tok->cfg_add_eos)
		flags |= CB_TOK_ADD_EOS;
	clean = u8_sanitize(text, len, &cn);
	if (!clean && cn == (size_t)-1)
		return -ENOMEM;
	if (clean) {
		text = clean;
		len = cn;
	}
	if (flags & CB_TOK_ADD_SPECIAL) {
		for (i = 0; i < tok->n_tmpl && tok->tmpl[i] >= 0; i++)
			if ((ret = ivec_push(&w->out, tok->tmpl[i])))
				goto out;
	}
	if ((flags & CB_TOK_ADD_BOS) && tok->bos_id >= 0 &&
	    !(w->out.n && w->out.p[0] == tok->bos_id))
		if ((ret = ivec_push(&w->out, tok->bos_id)))
			goto out;
	if ((ret = split_added(tok, text, len, false, &sl)))
		goto out;
	for (i = 0; i < sl.n; i++) {
		if (sl.p[i].id >= 0)
			ret = ivec_push(&w->out, sl.p[i].id);
		else
			ret = encode_segment(tok, w, text + sl.p[i].a, sl.p[i].b - sl.p[i].a,
					     sl.p[i].a == 0);
		if (ret)
			goto out;
	}
	if (flags & CB_TOK_ADD_SPECIAL) {
		for (i = 0; i < tok->n_tmpl && tok->tmpl[i] >= 0; i++)
			;
		for (i++; i < tok->n_tmpl; i++)
			if ((ret = ivec_push(&w->out, tok->tmpl[i])))
				goto out;
	}
	if ((flags & CB_TOK_ADD_EOS) && tok->eos_id >= 0 &&
	    !(w->out.n && w->out.p[w->out.n - 1] == tok->eos_id))
		ret = ivec_push(&w->out, tok->eos_id);
out:
	free(sl.p);
	free(clean);
	return ret ? ret : (long)w->out.n;
}

static void work_free(struct work *w)
{
	free(w->sym);
	free(w->heap);
	free(w->a.p);
	free(w->b.p);
	free(w->out.p);
}

long cb_tok_encode_alloc(const struct cb_tokenizer *tok, const char *text, size_t len,
			 unsigned int flags, int32_t **out)
{
	struct work w = { 0 };
	long r = encode_vec(tok, text, len, flags, &w);

	*out = NULL;
	if (r > 0) {
		*out = w.out.p;
		w.out.p = NULL;
	}
	work_free(&w);
	return r;
}

long cb_tok_encode(const struct cb_tokenizer *tok, const char *text, size_t len,
		   unsigned int flags, int32_t *ids, size_t cap)
{
	struct work w = { 0 };
	long r = encode_vec(tok, text, len, flags, &w);

	if (r > 0 && cap)
		memcpy(ids, w.out.p, ((size_t)r < cap ? (size_t)r : cap) * sizeof(*ids));
	work_free(&w);
	return r;
}

/* ------------------------------------------------------------------ */
/* decoding                                                            */

static bool id_ok(const struct cb_tokenizer *tok, int32_t id)
{
	return id >= 0 && (size_t)id < tok->n_ids && tok->dec_len[id] != UINT32_MAX;
}

long cb_tok_decode(const struct cb_tokenizer *tok, const int32_t *ids, size_t n,
		   unsigned int flags, char *out, size_t cap)
{
	struct sbuf b = { 0 };
	size_t i, lo = 0, hi, k;
	long ret;

	if (flags & ~CB_TOK_DECODE_ALL)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!id_ok(tok, ids[i])) {
			free(b.p);
			return -EINVAL;
		}
		if ((flags & CB_TOK_SKIP_SPECIAL) && tok->is_special[ids[i]])
			continue;
		if (sbuf_add(&b, tok->arena.p + tok->dec_off[ids[i]], tok->dec_len[ids[i]])) {
			free(b.p);
			return -ENOMEM;
		}
	}
	hi = b.n;
	/* the fused Strip decoder (SentencePiece's leading space) */
	for (k = 0; k < tok->strip_start && lo < hi; k++) {
		int32_t c;
		size_t l = u8_get(b.p + lo, hi - lo, &c);

		if (c != tok->strip_cp)
			break;
		lo += l;
	}
	for (k = 0; k < tok->strip_stop && hi > lo; k++) {
		size_t l = 1;
		int32_t c;

		while (l < hi - lo && ((unsigned char)b.p[hi - l] & 0xc0) == 0x80)
			l++;
		u8_get(b.p + hi - l, l, &c);
		if (c != tok->strip_cp)
			break;
		hi -= l;
	}
	if (cap)
		memcpy(out, b.p + lo, hi - lo < cap ? hi - lo : cap);
	ret = hi - lo;
	free(b.p);
	return ret;
}

void cb_tok_stream_init(struct cb_tok_stream *st, const struct cb_tokenizer *tok,
			unsigned int flags)
{
	memset(st, 0, sizeof(*st));
	st->tok = tok;
	st->flags = flags;
	st->at_start = 1;
}

/* Emit the complete characters of pend+bytes, keep an unfinished tail. */
static long stream_push(struct cb_tok_stream *st, const char *s, size_t n, char *out, size_t cap,
			bool final)
{
	unsigned char tmp[4];
	size_t np = st->npend, o = 0, i = 0, total = np + n, len;
	const unsigned char *u = (const unsigned char *)s;

	/* worst case: every byte becomes U+FFFD */
	if (cap < 3 * total)
		return -ENOSPC;
	memcpy(tmp, st->pend, np);
	st->npend = 0;
	/* view held bytes and new bytes as one sequence */
#define AT(k) ((k) < np ? tmp[k] : u[(k) - np])
	while (i < total) {
		unsigned char c[4];
		size_t m = total - i < 4 ? total - i : 4, j;
		int k;

		for (j = 0; j < m; j++)
			c[j] = AT(i + j);
		k = u8_class(c, m, &len, NULL);
		if (k == U8_OK) {
			memcpy(out + o, c, len);
			o += len;
			i += len;
		} else if (k == U8_SHORT && !final) {
			memcpy(st->pend, c, m);
			st->npend = m;
			break;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += len ? len : 1;
		}
	}
#undef AT
	return o;
}

long cb_tok_stream_feed(struct cb_tok_stream *st, int32_t id, char *out, size_t cap)
{
	const struct cb_tokenizer *tok = st->tok;
	const char *s;
	size_t n, k;

	if (!id_ok(tok, id))
		return -EINVAL;
	if ((st->flags & CB_TOK_SKIP_SPECIAL) && tok->is_special[id])
		return 0;
	s = tok->arena.p + tok->dec_off[id];
	n = tok->dec_len[id];
	if (cap < 3 * (n + st->npend))
		return -ENOSPC;
	if (st->at_start && n) {
		for (k = 0; k < tok->strip_start && n; k++) {
			int32_t c;
			size_t l = u8_get(s, n, &c);

			if (c != tok->strip_cp)
				break;
			s += l;
			n -= l;
		}
		st->at_start = 0;
	}
	return stream_push(st, s, n, out, cap, false);
}

long cb_tok_stream_flush(struct cb_tok_stream *st, char *out, size_t cap)
{
	return stream_push(st, "", 0, out, cap, true);
}

/* ------------------------------------------------------------------ */
/* accessors                                                           */

size_t cb_tok_vocab_size(const struct cb_tokenizer *tok)
{
	return tok->n_ids;
}

size_t cb_tok_max_token_bytes(const struct cb_tokenizer *tok)
{
	return tok->max_dec;
}

int32_t cb_tok_bos_id(const struct cb_tokenizer *tok)
{
	return tok->bos_id;
}

int32_t cb_tok_eos_id(const struct cb_tokenizer *tok)
{
	return tok->eos_id;
}

void cb_tok_set_bos_id(struct cb_tokenizer *tok, int32_t id)
{
	tok->bos_id = id;
}

void cb_tok_set_eos_id(struct cb_tokenizer *tok, int32_t id)
{
	tok->eos_id = id;
}

int32_t cb_tok_token_id(const struct cb_tokenizer *tok, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < tok->n_added; i++)
		if (tok->added[i].len == len && !memcmp(tok->added[i].content, s, len))
			return tok->added[i].id;
	return smap_get(&tok->vocab, tok->arena.p, s, len);
}

int cb_tok_is_special(const struct cb_tokenizer *tok, int32_t id)
{
	return id >= 0 && (size_t)id < tok->n_ids && tok->is_special[id];
}
