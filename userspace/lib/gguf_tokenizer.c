// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_tokenizer.c - a GGUF file's tokenizer (tokenizer.ggml.* metadata, as
 * llama.cpp's converter writes it) as the Hugging Face tokenizer.json and
 * tokenizer_config.json it came from, and loaded as a cb_tokenizer.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "tokenizer.h"

/* llama.cpp token types (tokenizer.ggml.token_type). */
enum {
	TT_NORMAL = 1,
	TT_UNKNOWN = 2,
	TT_CONTROL = 3,
	TT_USER_DEFINED = 4,
	TT_UNUSED = 5,
	TT_BYTE = 6,
};

/*
 * Pre-tokenizer regexes of the tokenizer.ggml.pre values we know, as the
 * matching Hugging Face tokenizer.json files write them.
 */
static const struct {
	const char *pre;
	const char *regex;
	int nfc;		/* NFC normalizer (Qwen2's tokenizer.json has one) */
	int ignore_merges;	/* Llama 3's BPE looks whole words up first */
} pretoks[] = {
	{ "qwen2",
	  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
	  "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 1, 0 },
	{ "llama-bpe",
	  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}"
	  "\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", 0, 1 },
	{ "gpt-2",
	  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	  0, 0 },
	{ "default",
	  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	  0, 0 },
	{ "olmo",
	  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
	  0, 0 },
};

struct sb {
	char *p;
	size_t n, cap;
	int oom;
};

static void sb_add(struct sb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *q;

		while (cap < b->n + n + 1)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_puts(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_printf(struct sb *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A JSON string literal of raw bytes (UTF-8 is passed through). */
static void sb_jstr(struct sb *b, const char *s, size_t n)
{
	size_t i, run = 0;

	sb_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		sb_add(b, s + run, i - run);
		run = i + 1;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };

			sb_add(b, e, 2);
		} else {
			sb_printf(b, "\\u%04x", c);
		}
	}
	sb_add(b, s + run, n - run);
	sb_add(b, "\"", 1);
}

/* String -> first id, open addressing over the token array. */
struct tokmap {
	const struct gguf_str *tok;
	int64_t *slot;
	size_t mask;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static int tokmap_init(struct tokmap *m, const struct gguf_str *tok, uint64_t n)
{
	size_t cap = 16, i;

	while (cap < 2 * n)
		cap *= 2;
	m->tok = tok;
	m->mask = cap - 1;
	m->slot = malloc(cap * sizeof(*m->slot));
	if (!m->slot)
		return -1;
	for (i = 0; i < cap; i++)
		m->slot[i] = -1;
	return 0;
}

static int64_t tokmap_get(const struct tokmap *m, const char *p, size_t n)
{
	size_t h = hash_bytes(p, n) & m->mask;

	for (; m->slot[h] >= 0; h = (h + 1) & m->mask) {
		const struct gguf_str *t = &m->tok[m->slot[h]];

		if (t->n == n && !memcmp(t->p, p, n))
			return m->slot[h];
	}
	return -1;
}

/* Insert id unless its string is already present: 1 if inserted. */
static int tokmap_put(struct tokmap *m, int64_t id)
{
	const struct gguf_str *t = &m->tok[id];
	size_t h = hash_bytes(t->p, t->n) & m->mask;

	for (; m->slot[h] >= 0; h = (h + 1) & m->mask) {
		const struct gguf_str *u = &m->tok[m->slot[h]];

		if (u->n == t->n && !memcmp(u->p, t->p, t->n))
			return 0;
	}
	m->slot[h] = id;
	return 1;
}

struct merge {
	float score;
	uint32_t piece, l, r;
};

static int cmp_merge(const void *a, const void *b)
{
	const struct merge *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;	/* higher score first */
	if (x->piece != y->piece)
		return x->piece < y->piece ? -1 : 1;	/* stable: piece order */
	if (x->l != y->l)
		return x->l < y->l ? -1 : 1;
	return x->r < y->r ? -1 : x->r > y->r;
}

/*
 * SentencePiece BPE -> merges, the way Hugging Face's converter derives them:
 * every split of every piece into two pieces of the vocabulary is a merge,
 * ranked by the score of the piece it makes (highest first), then by the ids
 * of its left and right parts.  Splits fall on code point boundaries.
 */
static int sp_merges(struct sb *b, const struct gguf_str *tok, uint64_t n, const float *score,
		     const struct tokmap *map)
{
	struct merge *mg = NULL, *q;
	size_t nm = 0, cap = 0, i;
	uint64_t id;

	for (id = 0; id < n; id++) {
		const char *p = tok[id].p;
		size_t len = tok[id].n, k;

		for (k = 1; k < len; k++) {
			int64_t l, r;

			if (((unsigned char)p[k] & 0xc0) == 0x80)
				continue;	/* inside a code point */
			l = tokmap_get(map, p, k);
			if (l < 0)
				continue;
			r = tokmap_get(map, p + k, len - k);
			if (r < 0)
				continue;
			if (nm == cap) {
				cap = cap ? 2 * cap : 65536;
				q = realloc(mg, cap * sizeof(*mg));
				if (!q) {
					free(mg);
					return -1;
				}
				mg = q;
			}
			mg[nm++] = (struct merge){ score[id], (uint32_t)id, (uint32_t)l, (uint32_t)r };
		}
	}
	qsort(mg, nm, sizeof(*mg), cmp_merge);
	for (i = 0; i < nm; i++) {
		sb_puts(b, i ? ",[" : "[");
		sb_jstr(b, tok[mg[i].l].p, tok[mg[i].l].n);
		sb_add(b, ",", 1);
		sb_jstr(b, tok[mg[i].r].p, tok[mg[i].r].n);
		sb_add(b, "]", 1);
	}
	free(mg);
	return 0;
}

struct tokmeta {
	struct gguf_str model, pre;
	struct gguf_str *tok;
	uint64_t n;
	int32_t *type;
	float *score;
	const struct gguf_kv *merges;
	int64_t bos, eos, unk;
	int add_bos, add_eos, add_space;
};

static void tokmeta_free(struct tokmeta *t)
{
	free(t->tok);
	free(t->type);
	free(t->score);
}

static int64_t tok_id(const struct gguf_file *f, const char *key, uint64_t n)
{
	uint64_t v;

	if (gguf_get_uint(f, key, &v) || v >= n)
		return -1;
	return (int64_t)v;
}

static int tokmeta_read(const struct gguf_file *f, struct tokmeta *t, char *err, size_t errlen)
{
	const struct gguf_kv *kv;
	uint64_t i;
	int v;

	memset(t, 0, sizeof(*t));
	if (gguf_get_str(f, "tokenizer.ggml.model", &t->model)) {
		snprintf(err, errlen, "%s: no tokenizer (metadata 'tokenizer.ggml.model')", f->path);
		return -1;
	}
	kv = gguf_find_kv(f, "tokenizer.ggml.tokens");
	t->tok = gguf_str_array(kv);
	if (!t->tok) {
		snprintf(err, errlen, "%s: metadata 'tokenizer.ggml.tokens' is missing or not an "
			 "array of strings", f->path);
		return -1;
	}
	t->n = kv->arr_n;
	if (!t->n || t->n > (1u << 24)) {
		snprintf(err, errlen, "%s: tokenizer has %llu tokens", f->path,
			 (unsigned long long)t->n);
		return -1;
	}
	for (i = 0; i < t->n; i++)
		if (!t->tok[i].n || memchr(t->tok[i].p, 0, t->tok[i].n)) {
			snprintf(err, errlen, "%s: token %llu is empty or contains a NUL byte",
				 f->path, (unsigned long long)i);
			return -1;
		}
	t->type = malloc(t->n * sizeof(*t->type));
	t->score = calloc(t->n, sizeof(*t->score));
	if (!t->type || !t->score) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		return -1;
	}
	kv = gguf_find_kv(f, "tokenizer.ggml.token_type");
	if (kv && (kv->type != GGUF_VT_ARRAY || kv->arr_n != t->n ||
		   kv->arr_type == GGUF_VT_STRING || kv->arr_type == GGUF_VT_F32 ||
		   kv->arr_type == GGUF_VT_F64)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.token_type is not an integer array of "
			 "one entry per token", f->path);
		return -1;
	}
	for (i = 0; i < t->n; i++)
		t->type[i] = kv ? (int32_t)gguf_arr_int(kv, i) : TT_NORMAL;
	kv = gguf_find_kv(f, "tokenizer.ggml.scores");
	if (kv && (kv->type != GGUF_VT_ARRAY || kv->arr_n != t->n ||
		   kv->arr_type == GGUF_VT_STRING)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.scores is not a number array of one "
			 "entry per token", f->path);
		return -1;
	}
	for (i = 0; kv && i < t->n; i++)
		t->score[i] = (float)gguf_arr_num(kv, i);
	t->merges = gguf_find_kv(f, "tokenizer.ggml.merges");
	if (t->merges && (t->merges->type != GGUF_VT_ARRAY ||
			  t->merges->arr_type != GGUF_VT_STRING)) {
		snprintf(err, errlen, "%s: tokenizer.ggml.merges is not an array of strings",
			 f->path);
		return -1;
	}
	if (gguf_get_str(f, "tokenizer.ggml.pre", &t->pre))
		t->pre.n = 0;
	t->bos = tok_id(f, "tokenizer.ggml.bos_token_id", t->n);
	t->eos = tok_id(f, "tokenizer.ggml.eos_token_id", t->n);
	t->unk = tok_id(f, "tokenizer.ggml.unknown_token_id", t->n);
	t->add_space = 1;
	t->add_bos = -1;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &v))
		t->add_bos = v;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_eos_token", &v))
		t->add_eos = v;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_space_prefix", &v))
		t->add_space = v;
	return 0;
}

/*
 * llama.cpp's converter fills the ids between the tokenizer's vocabulary and
 * the model's embedding rows with "[PAD<id>]" tokens (typed user-defined by
 * newer versions).  They are not added tokens of the original tokenizer:
 * keep them out of added_tokens so that the text "[PAD123]" is not matched.
 */
static int is_pad_filler(const struct gguf_str *s, uint64_t id)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "[PAD%llu]", (unsigned long long)id);

	return n > 0 && s->n == (uint64_t)n && !memcmp(s->p, buf, (size_t)n);
}

static void special_tmpl(struct sb *b, const struct tokmeta *t)
{
	int first = 1;
	int64_t id[2] = { t->add_bos > 0 ? t->bos : -1, t->add_eos > 0 ? t->eos : -1 };
	int k;

	sb_puts(b, "{\"type\":\"TemplateProcessing\",\"single\":[");
	if (id[0] >= 0) {
		sb_puts(b, "{\"SpecialToken\":{\"id\":");
		sb_jstr(b, t->tok[id[0]].p, t->tok[id[0]].n);
		sb_puts(b, ",\"type_id\":0}},");
	}
	sb_puts(b, "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}");
	if (id[1] >= 0) {
		sb_puts(b, ",{\"SpecialToken\":{\"id\":");
		sb_jstr(b, t->tok[id[1]].p, t->tok[id[1]].n);
		sb_puts(b, ",\"type_id\":0}}");
	}
	sb_puts(b, "],\"pair\":[{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
		"{\"Sequence\":{\"id\":\"B\",\"type_id\":1}}],\"special_tokens\":{");
	for (k = 0; k < 2; k++) {
		if (id[k] < 0 || (k == 1 && id[1] == id[0]))
			continue;
		if (!first)
			sb_add(b, ",", 1);
		first = 0;
		sb_jstr(b, t->tok[id[k]].p, t->tok[id[k]].n);
		sb_puts(b, ":{\"id\":");
		sb_jstr(b, t->tok[id[k]].p, t->tok[id[k]].n);
		sb_printf(b, ",\"ids\":[%lld],\"tokens\":[", (long long)id[k]);
		sb_jstr(b, t->tok[id[k]].p, t->tok[id[k]].n);
		sb_puts(b, "]}");
	}
	sb_puts(b, "}}");
}

char *gguf_tokenizer_json(const struct gguf_file *f, size_t *len, char *err, size_t errlen)
{
	struct tokmeta t;
	struct tokmap map = { 0 };
	struct sb b = { 0 };
	int gpt2, first = 1;
	size_t pi = 0;
	uint64_t i;

	if (tokmeta_read(f, &t, err, errlen))
		goto fail;
	gpt2 = t.model.n == 4 && !memcmp(t.model.p, "gpt2", 4);
	if (!gpt2 && !(t.model.n == 5 && !memcmp(t.model.p, "llama", 5))) {
		snprintf(err, errlen, "%s: tokenizer model '%.*s' is not supported (gpt2 and "
			 "llama are)", f->path, (int)(t.model.n > 32 ? 32 : t.model.n), t.model.p);
		goto fail;
	}
	if (gpt2) {
		if (!t.pre.n) {
			t.pre.p = "default";
			t.pre.n = 7;
		}
		for (pi = 0; pi < sizeof(pretoks) / sizeof(pretoks[0]); pi++)
			if (strlen(pretoks[pi].pre) == t.pre.n &&
			    !memcmp(pretoks[pi].pre, t.pre.p, t.pre.n))
				break;
		if (pi == sizeof(pretoks) / sizeof(pretoks[0])) {
			snprintf(err, errlen, "%s: pre-tokenizer '%.*s' (tokenizer.ggml.pre) is not "
				 "supported (qwen2, llama-bpe, gpt-2, olmo, default are)", f->path,
				 (int)(t.pre.n > 32 ? 32 : t.pre.n), t.pre.p);
			goto fail;
		}
		if (!t.merges) {
			snprintf(err, errlen, "%s: gpt2 tokenizer without tokenizer.ggml.merges",
				 f->path);
			goto fail;
		}
	}
	if (tokmap_init(&map, t.tok, t.n)) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}

	sb_puts(&b, "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[");
	for (i = 0; i < t.n; i++) {
		if (t.type[i] != TT_CONTROL && t.type[i] != TT_USER_DEFINED &&
		    t.type[i] != TT_UNKNOWN)
			continue;
		if (is_pad_filler(&t.tok[i], i))
			continue;
		sb_printf(&b, "%s{\"id\":%llu,\"content\":", first ? "" : ",", (unsigned long long)i);
		first = 0;
		sb_jstr(&b, t.tok[i].p, t.tok[i].n);
		sb_printf(&b, ",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
			  "\"normalized\":false,\"special\":%s}",
			  t.type[i] == TT_USER_DEFINED ? "false" : "true");
	}
	sb_puts(&b, "],");
	if (gpt2) {
		sb_puts(&b, pretoks[pi].nfc ? "\"normalizer\":{\"type\":\"NFC\"}," :
			"\"normalizer\":null,");
		sb_puts(&b, "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
			"{\"type\":\"Split\",\"pattern\":{\"Regex\":");
		sb_jstr(&b, pretoks[pi].regex, strlen(pretoks[pi].regex));
		sb_puts(&b, "},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":"
			"\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,"
			"\"use_regex\":false}]},\"post_processor\":");
		if (t.add_bos > 0 || t.add_eos > 0)
			special_tmpl(&b, &t);
		else
			sb_puts(&b, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
				"\"trim_offsets\":false,\"use_regex\":false}");
		sb_puts(&b, ",\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
			"\"trim_offsets\":false,\"use_regex\":false},\"model\":{\"type\":\"BPE\","
			"\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":\"\","
			"\"end_of_word_suffix\":\"\",\"fuse_unk\":false,\"byte_fallback\":false,");
		sb_printf(&b, "\"ignore_merges\":%s,", pretoks[pi].ignore_merges ? "true" : "false");
	} else {
		if (t.add_bos < 0)
			t.add_bos = 1;	/* llama.cpp's default for SentencePiece */
		sb_puts(&b, "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[");
		if (t.add_space)
			sb_puts(&b, "{\"type\":\"Prepend\",\"prepend\":\"\u2581\"},");
		sb_puts(&b, "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":"
			"\"\u2581\"}]},\"pre_tokenizer\":null,\"post_processor\":");
		special_tmpl(&b, &t);
		sb_puts(&b, ",\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\","
			"\"pattern\":{\"String\":\"\u2581\"},\"content\":\" \"},{\"type\":"
			"\"ByteFallback\"},{\"type\":\"Fuse\"}");
		if (t.add_space)
			sb_puts(&b, ",{\"type\":\"Strip\",\"content\":\" \",\"start\":1,\"stop\":0}");
		sb_puts(&b, "]},\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":");
		if (t.unk >= 0)
			sb_jstr(&b, t.tok[t.unk].p, t.tok[t.unk].n);
		else
			sb_puts(&b, "null");
		sb_puts(&b, ",\"continuing_subword_prefix\":null,\"end_of_word_suffix\":null,"
			"\"fuse_unk\":true,\"byte_fallback\":true,\"ignore_merges\":false,");
	}
	/* the vocabulary: every token, first id wins for duplicate strings */
	sb_puts(&b, "\"vocab\":{");
	first = 1;
	for (i = 0; i < t.n; i++) {
		if (!tokmap_put(&map, (int64_t)i))
			continue;
		if (!first)
			sb_add(&b, ",", 1);
		first = 0;
		sb_jstr(&b, t.tok[i].p, t.tok[i].n);
		sb_printf(&b, ":%llu", (unsigned long long)i);
	}
	sb_puts(&b, "},\"merges\":[");
	if (gpt2) {
		struct gguf_str *mg = gguf_str_array(t.merges);

		if (!mg) {
			snprintf(err, errlen, "%s: out of memory", f->path);
			goto fail;
		}
		for (i = 0; i < t.merges->arr_n; i++) {
			if (i)
				sb_add(&b, ",", 1);
			sb_jstr(&b, mg[i].p, mg[i].n);
		}
		free(mg);
	} else if (sp_merges(&b, t.tok, t.n, t.score, &map)) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}
	sb_puts(&b, "]}}");
	if (b.oom) {
		snprintf(err, errlen, "%s: out of memory", f->path);
		goto fail;
	}
	free(map.slot);
	tokmeta_free(&t);
	*len = b.n;
	return b.p;
fail:
	free(map.slot);
	tokmeta_free(&t);
	free(b.p);
	return NULL;
}

char *gguf_tokenizer_config_json(const struct gguf_file *f, size_t *len, char *err,
				 size_t errlen)
{
	struct tokmeta t;
	struct sb b = { 0 };
	int sp;

	if (tokmeta_read(f, &t, err, errlen)) {
		tokmeta_free(&t);
		return NULL;
	}
	sp = t.model.n == 5 && !memcmp(t.model.p, "llama", 5);
	if (t.add_bos < 0)
		t.add_bos = sp;
	sb_puts(&b, "{");
	if (t.bos >= 0) {
		sb_puts(&b, "\"bos_token\":");
		sb_jstr(&b, t.tok[t.bos].p, t.tok[t.bos].n);
		sb_puts(&b, ",");
	}
	if (t.eos >= 0) {
		sb_puts(&b, "\"eos_token\":");
		sb_jstr(&b, t.tok[t.eos].p, t.tok[t.eos].n);
		sb_puts(&b, ",");
	}
	sb_printf(&b, "\"add_bos_token\":%s,\"add_eos_token\":%s}",
		  t.add_bos > 0 && t.bos >= 0 ? "true" : "false",
		  t.add_eos > 0 && t.eos >= 0 ? "true" : "false");
	tokmeta_free(&t);
	if (b.oom) {
		free(b.p);
		snprintf(err, errlen, "%s: out of memory", f->path);
		return NULL;
	}
	*len = b.n;
	return b.p;
}

struct cb_tokenizer *gguf_tokenizer_load(const struct gguf_file *f, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;
	char *js, *cfg, terr[256];
	size_t n, cn;
	uint64_t id;

	js = gguf_tokenizer_json(f, &n, err, errlen);
	if (!js)
		return NULL;
	cfg = gguf_tokenizer_config_json(f, &cn, err, errlen);
	if (!cfg) {
		free(js);
		return NULL;
	}
	tok = cb_tok_load(js, n, terr, sizeof(terr));
	free(js);
	if (!tok)
		snprintf(err, errlen, "%s: tokenizer from the GGUF metadata: %s", f->path, terr);
	if (tok) {
		cb_tok_apply_config(tok, cfg, cn);
		/* ids, not strings: two tokens may share a string */
		if (!gguf_get_uint(f, "tokenizer.ggml.bos_token_id", &id) &&
		    id < cb_tok_vocab_size(tok))
			cb_tok_set_bos_id(tok, (int32_t)id);
		if (!gguf_get_uint(f, "tokenizer.ggml.eos_token_id", &id) &&
		    id < cb_tok_vocab_size(tok))
			cb_tok_set_eos_id(tok, (int32_t)id);
	}
	free(cfg);
	return tok;
}
