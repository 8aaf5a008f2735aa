// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * hf_tiktoken.c - a Hugging Face directory's tokenizer.json, or the one its
 * tiktoken BPE file stands for.
 *
 * Kimi-K2 ships no tokenizer.json: tiktoken.model (one line per token,
 * "BASE64-BYTES RANK", ranks 0..n-1), tokenizer_config.json (its
 * tokenizer_class TikTokenTokenizer, the added_tokens_decoder naming some of
 * the 256 special ids after the ranks) and tokenization_kimi.py, whose
 * split regex is the table's "kimi-k2" (gguf_pretok.c).  tiktoken merges,
 * within a piece, the adjacent pair whose concatenation has the lowest
 * rank (the leftmost of equals), after looking the whole piece up.  As a
 * tokenizer.json: byte-level BPE with ignore_merges, the ranks as ids, and
 * as merges every split of every token into two tokens, in the order of
 * the token's rank: the merge loop (tok_bpe.c) then picks the pairs
 * tiktoken picks.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "colibri_format.h"
#include "import/gguf_pretok.h"
#include "import/hf_tiktoken.h"
#include "tokenizer.h"
#include "util/util.h"

/* what tokenization_kimi.py's TikTokenTokenizer reserves after the ranks */
#define KIMI_RESERVED 256

struct tt_tok {
	const unsigned char *p;
	uint32_t n;
};

/* The tokens of tiktoken.model, by rank, and bytes -> rank. */
struct tt {
	struct tt_tok *tok;
	uint32_t n;
	unsigned char *bytes;	/* every token's bytes, back to back */
	int32_t *slot;		/* open addressing: rank, or -1 */
	uint32_t mask;
};

/* The rank of the @n bytes at @p, or -1. */
static int32_t tt_rank(const struct tt *t, const unsigned char *p, uint32_t n)
{
	uint32_t i = (uint32_t)cb_hash_bytes((const char *)p, n) & t->mask;

	for (; t->slot[i] >= 0; i = (i + 1) & t->mask) {
		const struct tt_tok *k = &t->tok[t->slot[i]];

		if (k->n == n && !memcmp(k->p, p, n))
			return t->slot[i];
	}
	return -1;
}

static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 with padding: the byte count, or -1. */
static long b64_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i, o = 0;
	uint32_t acc = 0;
	int bits = 0, pad = 0, v;

	for (i = 0; i < n; i++) {
		if (s[i] == '=') {
			pad++;
			continue;
		}
		v = b64_val((unsigned char)s[i]);
		if (v < 0 || pad)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return (n % 4 || pad > 2) ? -1 : (long)o;
}

/* tiktoken.model: every line "BASE64 RANK", the ranks 0..n-1 in order. */
static int tt_read(struct tt *t, const char *path, char *err, size_t errlen)
{
	size_t len, pos = 0, line = 0, used = 0, cap;
	char *txt;
	uint32_t i;

	errno = 0;
	txt = cb_read_file(path, COLIBRI_FILE_MAX_TOKENIZER, &len);
	if (!txt) {
		cb_set_err(err, errlen, "%s: %s", path, errno ? strerror(errno) : "cannot read");
		return -1;
	}
	for (i = 0; i < len; i++)
		line += txt[i] == '\n';
	cap = line + 1;
	t->tok = calloc(cap, sizeof(*t->tok));
	t->bytes = malloc(len ? len : 1);	/* decoded bytes are fewer than the text */
	if (!t->tok || !t->bytes)
		goto oom;
	for (line = 1; pos < len; line++) {
		char *nl = memchr(txt + pos, '\n', len - pos), *sp, *end;
		size_t e = nl ? (size_t)(nl - txt) : len;
		unsigned long rank;
		long nb;

		if (e == pos) {
			pos = e + 1;
			continue;
		}
		sp = memchr(txt + pos, ' ', e - pos);
		if (!sp)
			goto bad;
		*sp = 0;
		txt[e] = 0;
		errno = 0;
		rank = strtoul(sp + 1, &end, 10);
		nb = b64_decode(txt + pos, (size_t)(sp - (txt + pos)), t->bytes + used);
		if (errno || *end || end == sp + 1 || nb <= 0 || rank != t->n || t->n >= cap)
			goto bad;
		t->tok[t->n].p = t->bytes + used;
		t->tok[t->n].n = (uint32_t)nb;
		t->n++;
		used += (size_t)nb;
		pos = e + 1;
	}
	free(txt);
	if (!t->n || t->n > (1u << 24) - KIMI_RESERVED) {
		cb_set_err(err, errlen, "%s: %u tokens (want 1..%u)", path, t->n,
			   (1u << 24) - KIMI_RESERVED);
		return -1;
	}
	for (t->mask = 1; t->mask < 2 * t->n; t->mask <<= 1)
		;
	t->slot = malloc(t->mask * sizeof(*t->slot));
	if (!t->slot)
		goto oom_done;
	memset(t->slot, 0xff, t->mask * sizeof(*t->slot));
	t->mask--;
	for (i = 0; i < t->n; i++) {
		uint32_t h;

		if (tt_rank(t, t->tok[i].p, t->tok[i].n) >= 0) {
			cb_set_err(err, errlen, "%s: rank %u repeats the bytes of rank %d", path, i,
				   tt_rank(t, t->tok[i].p, t->tok[i].n));
			return -1;
		}
		for (h = (uint32_t)cb_hash_bytes((const char *)t->tok[i].p, t->tok[i].n) & t->mask;
		     t->slot[h] >= 0;
		     h = (h + 1) & t->mask)
			;
		t->slot[h] = (int32_t)i;
	}
	return 0;
bad:
	cb_set_err(err, errlen, "%s: line %zu is not \"BASE64 RANK\" with rank %u", path, line,
		   t->n);
	free(txt);
	return -1;
oom:
	free(txt);
oom_done:
	cb_set_err(err, errlen, "%s: out of memory", path);
	return -1;
}

static void tt_free(struct tt *t)
{
	free(t->tok);
	free(t->bytes);
	free(t->slot);
}

/* A constant string. */
static int put_lit(struct cb_sbuf *o, const char *s)
{
	return cb_sbuf_add(o, s, strlen(s));
}

/* GPT-2's byte-level alphabet: byte @b as the code point tokenizer.json spells it. */
static unsigned int bytelevel_cp(unsigned char b)
{
	unsigned int k = 0, c;

	if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)
		return b;
	for (c = 0; c < b; c++)
		k += !((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174);
	return 256 + k;
}

/* A JSON string of the bytes @p, each as its byte-level code point. */
static int put_bytelevel(struct cb_sbuf *o, const unsigned char *p, uint32_t n)
{
	uint32_t i;

	if (put_lit(o, "\""))
		return -1;
	for (i = 0; i < n; i++) {
		unsigned int cp = bytelevel_cp(p[i]);
		char u[2] = { (char)(0xc0 | (cp >> 6)), (char)(0x80 | (cp & 0x3f)) };

		if (cp == '"' || cp == '\\') {
			if (put_lit(o, "\\") || cb_sbuf_add(o, (const char *)&p[i], 1))
				return -1;
		} else if (cp < 0x80 ? cb_sbuf_add(o, (const char *)&p[i], 1) :
			   cb_sbuf_add(o, u, 2)) {
			return -1;
		}
	}
	return put_lit(o, "\"");
}

/* A JSON string of @s (cJSON's escaping). */
static int put_string(struct cb_sbuf *o, const char *s)
{
	cJSON *j = cJSON_CreateString(s);
	char *p = j ? cJSON_PrintUnformatted(j) : NULL;
	int r = p ? cb_sbuf_add(o, p, strlen(p)) : -1;

	free(p);
	cJSON_Delete(j);
	return r;
}

/* The 256 special tokens after the ranks: tokenizer_config.json's names, else reserved. */
static int put_added(struct cb_sbuf *o, const struct tt *t, const cJSON *decoder)
{
	char id[16], name[48];
	uint32_t i;
	int r = put_lit(o, "\"added_tokens\":[");

	for (i = 0; i < KIMI_RESERVED && !r; i++) {
		const cJSON *e, *c;
		uint32_t k = t->n + i;

		snprintf(id, sizeof(id), "%u", k);
		e = cJSON_GetObjectItemCaseSensitive(decoder, id);
		c = cJSON_GetObjectItemCaseSensitive(e, "content");
		snprintf(name, sizeof(name), "<|reserved_token_%u|>", k);
		r = put_lit(o, i ? ",{\"id\":" : "{\"id\":") ||
		    cb_sbuf_add(o, id, strlen(id)) || put_lit(o, ",\"content\":") ||
		    put_string(o, cJSON_IsString(c) ? c->valuestring : name);
		r = r || put_lit(o, ",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
				 "\"normalized\":false,\"special\":true}");
	}
	return r || put_lit(o, "],");
}

static int put_pre_tokenizer(struct cb_sbuf *o, const struct gguf_pretok *pt)
{
	static const char bl[] = "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
				 "\"trim_offsets\":false,\"use_regex\":false}";
	size_t k;
	int r = put_lit(o, "\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"Sequence\","
			"\"pretokenizers\":[");

	for (k = 0; pt->regex[k] && !r; k++)
		r = put_lit(o, "{\"type\":\"Split\",\"pattern\":{\"Regex\":") ||
		    put_string(o, pt->regex[k]) ||
		    put_lit(o, "},\"behavior\":\"Isolated\",\"invert\":false},");
	return r || cb_sbuf_add(o, bl, sizeof(bl) - 1) || put_lit(o, "]},") ||
	       put_lit(o, "\"post_processor\":null,\"decoder\":") ||
	       cb_sbuf_add(o, bl, sizeof(bl) - 1) || put_lit(o, ",");
}

/* vocab: ranks as ids; merges: each token's splits into two tokens, by its rank. */
static int put_model(struct cb_sbuf *o, const struct tt *t)
{
	static const char head[] = "\"model\":{\"type\":\"BPE\",\"dropout\":null,"
				   "\"unk_token\":null,\"continuing_subword_prefix\":\"\","
				   "\"end_of_word_suffix\":\"\",\"fuse_unk\":false,"
				   "\"byte_fallback\":false,\"ignore_merges\":true,\"vocab\":{";
	char num[16];
	uint32_t i, k;
	int r = cb_sbuf_add(o, head, sizeof(head) - 1), first = 1;

	for (i = 0; i < t->n && !r; i++) {
		snprintf(num, sizeof(num), ":%u", i);
		r = (i && put_lit(o, ",")) || put_bytelevel(o, t->tok[i].p, t->tok[i].n) ||
		    cb_sbuf_add(o, num, strlen(num));
	}
	r = r || put_lit(o, "},\"merges\":[");
	for (i = 0; i < t->n && !r; i++) {
		const struct tt_tok *w = &t->tok[i];

		for (k = 1; k < w->n && !r; k++) {
			if (tt_rank(t, w->p, k) < 0 || tt_rank(t, w->p + k, w->n - k) < 0)
				continue;
			r = put_lit(o, first ? "[" : ",[") ||
			    put_bytelevel(o, w->p, k) || put_lit(o, ",") ||
			    put_bytelevel(o, w->p + k, w->n - k) || put_lit(o, "]");
			first = 0;
		}
	}
	return r || put_lit(o, "]}}");
}

/* tiktoken.model and tokenizer_config.json as a tokenizer.json. */
static char *tiktoken_json(const char *dir, size_t *len, char *err, size_t errlen)
{
	char path[PATH_MAX], *cfg;
	const struct gguf_pretok *pt = gguf_pretok_find("kimi-k2", 7);
	const cJSON *cls;
	struct cb_sbuf o = { 0 };
	struct tt t = { 0 };
	cJSON *root = NULL;
	size_t n;

	snprintf(path, sizeof(path), "%s/tokenizer_config.json", dir);
	cfg = cb_read_file(path, COLIBRI_FILE_MAX_TOKENIZER, &n);
	root = cfg ? cJSON_ParseWithLength(cfg, n) : NULL;
	free(cfg);
	cls = cJSON_GetObjectItemCaseSensitive(root, "tokenizer_class");
	if (!cJSON_IsString(cls) || strcmp(cls->valuestring, "TikTokenTokenizer") || !pt) {
		cb_set_err(err, errlen, "%s: tiktoken.model without tokenizer.json, and "
			   "tokenizer_config.json's tokenizer_class is %s%s%s: its split is "
			   "unknown (TikTokenTokenizer, Kimi-K2's, is known)", dir,
			   cJSON_IsString(cls) ? "'" : "", cJSON_IsString(cls) ? cls->valuestring :
			   "not given", cJSON_IsString(cls) ? "'" : "");
		cJSON_Delete(root);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/tiktoken.model", dir);
	if (tt_read(&t, path, err, errlen))
		goto fail;
	if (put_lit(&o, "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,") ||
	    put_added(&o, &t, cJSON_GetObjectItemCaseSensitive(root, "added_tokens_decoder")) ||
	    put_pre_tokenizer(&o, pt) || put_model(&o, &t) || put_lit(&o, "}")) {
		cb_set_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (o.n > COLIBRI_FILE_MAX_TOKENIZER) {
		cb_set_err(err, errlen, "%s: the tokenizer.json it makes is above %u bytes", path,
			   COLIBRI_FILE_MAX_TOKENIZER);
		goto fail;
	}
	tt_free(&t);
	cJSON_Delete(root);
	*len = o.n;
	return o.p;
fail:
	tt_free(&t);
	cJSON_Delete(root);
	free(o.p);
	return NULL;
}

char *hf_tokenizer_json(const char *dir, size_t *len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *txt;

	snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
	errno = 0;
	txt = cb_read_file(path, COLIBRI_FILE_MAX_TOKENIZER, len);
	if (txt || errno != ENOENT) {
		if (!txt)
			cb_set_err(err, errlen, "%s: %s", path,
				   errno ? strerror(errno) : "cannot read");
		return txt;
	}
	snprintf(path, sizeof(path), "%s/tiktoken.model", dir);
	if (access(path, F_OK)) {
		cb_set_err(err, errlen, "%s/tokenizer.json: no such file (nor a tiktoken.model)",
			   dir);
		errno = ENOENT;
		return NULL;
	}
	return tiktoken_json(dir, len, err, errlen);
}

struct cb_tokenizer *hf_tokenizer_load(const char *dir, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;
	char terr[256];
	size_t len;
	char *txt = hf_tokenizer_json(dir, &len, err, errlen);

	if (!txt)
		return NULL;
	tok = cb_tok_load(txt, len, terr, sizeof(terr));
	if (!tok)
		cb_set_err(err, errlen, "%s: tokenizer: %s", dir, terr);
	free(txt);
	return tok;
}
