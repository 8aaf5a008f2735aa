// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf_tokenizer.c - a GGUF file's tokenizer (tokenizer.ggml.* metadata, as
 * llama.cpp's converter writes it) as the Hugging Face tokenizer.json and
 * tokenizer_config.json it came from, and loaded as a cb_tokenizer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "colibri_format.h"
#include "import/gguf.h"
#include "import/gguf_pretok.h"
#include "tokenizer.h"
#include "util/util.h"

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
 * The JSON is built as a cJSON tree and printed once.  Errors (only out of
 * memory) are sticky in struct jb, so the builders read as a plain list and
 * the caller checks once at the end.  GGUF strings are not NUL-terminated:
 * @tmp makes a terminated copy for cJSON.
 */
struct jb {
	struct cb_sbuf tmp;
	int oom;
};

/* Put @v under @key of object @o (or append it to array @o when @key is NULL). */
static cJSON *jb_put(struct jb *b, cJSON *o, const char *key, cJSON *v)
{
	if (!v || !o || !(key ? cJSON_AddItemToObject(o, key, v) : cJSON_AddItemToArray(o, v))) {
		cJSON_Delete(v);
		b->oom = 1;
		return NULL;
	}
	return v;
}

static cJSON *jb_strn(struct jb *b, const char *s, size_t n)
{
	b->tmp.n = 0;
	if (cb_sbuf_add(&b->tmp, s, n)) {
		b->oom = 1;
		return NULL;
	}
	return cJSON_CreateString(b->tmp.p);
}

static cJSON *jb_tok(struct jb *b, const struct gguf_str *s)
{
	return jb_strn(b, s->p, s->n);
}

/* @o[@key] = the JSON value written as text in @json (a constant). */
static void jb_raw(struct jb *b, cJSON *o, const char *key, const char *json)
{
	jb_put(b, o, key, cJSON_Parse(json));
}

/* String -> first id, open addressing over the token array. */
struct tokmap {
	const struct gguf_str *tok;
	int64_t *slot;
	size_t mask;
};

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
	size_t h = cb_hash_bytes(p, n) & m->mask;

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
	size_t h = cb_hash_bytes(t->p, t->n) & m->mask;

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
static int sp_merges(struct jb *b, cJSON *out, const struct gguf_str *tok, uint64_t n,
		     const float *score, const struct tokmap *map)
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
	for (i = 0; i < nm && !b->oom; i++) {
		cJSON *pair = jb_put(b, out, NULL, cJSON_CreateArray());

		jb_put(b, pair, NULL, jb_tok(b, &tok[mg[i].l]));
		jb_put(b, pair, NULL, jb_tok(b, &tok[mg[i].r]));
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

static cJSON *special_tmpl(struct jb *b, const struct tokmeta *t)
{
	int64_t id[2] = { t->add_bos > 0 ? t->bos : -1, t->add_eos > 0 ? t->eos : -1 };
	cJSON *pp = cJSON_CreateObject(), *single, *sp, *tk, *o;
	int k;

	jb_put(b, pp, "type", cJSON_CreateString("TemplateProcessing"));
	single = jb_put(b, pp, "single", cJSON_CreateArray());
	for (k = 0; k < 2; k++) {
		if (k == 1)
			jb_raw(b, single, NULL, "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}");
		if (id[k] < 0)
			continue;
		o = jb_put(b, jb_put(b, single, NULL, cJSON_CreateObject()), "SpecialToken",
			   cJSON_CreateObject());
		jb_put(b, o, "id", jb_tok(b, &t->tok[id[k]]));
		jb_put(b, o, "type_id", cJSON_CreateNumber(0));
	}
	jb_raw(b, pp, "pair", "[{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
	       "{\"Sequence\":{\"id\":\"B\",\"type_id\":1}}]");
	sp = jb_put(b, pp, "special_tokens", cJSON_CreateObject());
	for (k = 0; k < 2; k++) {
		if (id[k] < 0 || (k == 1 && id[1] == id[0]))
			continue;
		tk = jb_tok(b, &t->tok[id[k]]);
		o = jb_put(b, sp, tk ? tk->valuestring : NULL, cJSON_CreateObject());
		cJSON_Delete(tk);
		jb_put(b, o, "id", jb_tok(b, &t->tok[id[k]]));
		jb_put(b, jb_put(b, o, "ids", cJSON_CreateArray()), NULL,
		       cJSON_CreateNumber((double)id[k]));
		jb_put(b, jb_put(b, o, "tokens", cJSON_CreateArray()), NULL,
		       jb_tok(b, &t->tok[id[k]]));
	}
	return pp;
}

/* The fixed parts of the two tokenizer kinds, as the HF files write them. */
static const char bytelevel_json[] =
	"{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,"
	"\"use_regex\":false}";
static const char sp_normalizer_json[] =
	"{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"\u2581\"},"
	"{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\u2581\"}]}";
static const char sp_normalizer_nospace_json[] =
	"{\"type\":\"Sequence\",\"normalizers\":["
	"{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\u2581\"}]}";
static const char sp_decoder_json[] =
	"{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":"
	"\"\u2581\"},\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},"
	"{\"type\":\"Strip\",\"content\":\" \",\"start\":1,\"stop\":0}]}";
static const char sp_decoder_nospace_json[] =
	"{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":"
	"\"\u2581\"},\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"}]}";

/* added_tokens: control, user-defined and unknown tokens, not the [PAD] fillers. */
static void added_tokens(struct jb *b, cJSON *root, const struct tokmeta *t)
{
	cJSON *arr = jb_put(b, root, "added_tokens", cJSON_CreateArray()), *o;
	uint64_t i;

	for (i = 0; i < t->n && !b->oom; i++) {
		if (t->type[i] != TT_CONTROL && t->type[i] != TT_USER_DEFINED &&
		    t->type[i] != TT_UNKNOWN)
			continue;
		if (is_pad_filler(&t->tok[i], i))
			continue;
		o = jb_put(b, arr, NULL, cJSON_CreateObject());
		jb_put(b, o, "id", cJSON_CreateNumber((double)i));
		jb_put(b, o, "content", jb_tok(b, &t->tok[i]));
		jb_put(b, o, "single_word", cJSON_CreateFalse());
		jb_put(b, o, "lstrip", cJSON_CreateFalse());
		jb_put(b, o, "rstrip", cJSON_CreateFalse());
		jb_put(b, o, "normalized", cJSON_CreateFalse());
		jb_put(b, o, "special", cJSON_CreateBool(t->type[i] != TT_USER_DEFINED));
	}
}

/* gpt2: byte-level BPE with the split regexes of tokenizer.ggml.pre. */
static void gpt2_parts(struct jb *b, cJSON *root, cJSON *model, const struct tokmeta *t,
		       const struct gguf_pretok *pt)
{
	cJSON *seq, *arr, *split;
	size_t k;

	jb_put(b, root, "normalizer", pt->nfc ? cJSON_Parse("{\"type\":\"NFC\"}") :
	       cJSON_CreateNull());
	seq = jb_put(b, root, "pre_tokenizer", cJSON_CreateObject());
	jb_put(b, seq, "type", cJSON_CreateString("Sequence"));
	arr = jb_put(b, seq, "pretokenizers", cJSON_CreateArray());
	for (k = 0; pt->regex[k]; k++) {
		split = jb_put(b, arr, NULL, cJSON_CreateObject());
		jb_put(b, split, "type", cJSON_CreateString("Split"));
		jb_put(b, jb_put(b, split, "pattern", cJSON_CreateObject()), "Regex",
		       cJSON_CreateString(pt->regex[k]));
		jb_put(b, split, "behavior", cJSON_CreateString("Isolated"));
		jb_put(b, split, "invert", cJSON_CreateFalse());
	}
	jb_raw(b, arr, NULL, bytelevel_json);
	if (t->add_bos > 0 || t->add_eos > 0)
		jb_put(b, root, "post_processor", special_tmpl(b, t));
	else
		jb_raw(b, root, "post_processor", bytelevel_json);
	jb_raw(b, root, "decoder", bytelevel_json);
	jb_put(b, model, "unk_token", cJSON_CreateNull());
	jb_put(b, model, "continuing_subword_prefix", cJSON_CreateString(""));
	jb_put(b, model, "end_of_word_suffix", cJSON_CreateString(""));
	jb_put(b, model, "fuse_unk", cJSON_CreateFalse());
	jb_put(b, model, "byte_fallback", cJSON_CreateFalse());
	jb_put(b, model, "ignore_merges", cJSON_CreateBool(pt->ignore_merges));
}

/* llama (SentencePiece): BPE with byte fallback, ▁ for spaces. */
static void sp_parts(struct jb *b, cJSON *root, cJSON *model, struct tokmeta *t)
{
	if (t->add_bos < 0)
		t->add_bos = 1;	/* llama.cpp's default for SentencePiece */
	jb_raw(b, root, "normalizer", t->add_space ? sp_normalizer_json :
	       sp_normalizer_nospace_json);
	jb_put(b, root, "pre_tokenizer", cJSON_CreateNull());
	jb_put(b, root, "post_processor", special_tmpl(b, t));
	jb_raw(b, root, "decoder", t->add_space ? sp_decoder_json : sp_decoder_nospace_json);
	jb_put(b, model, "unk_token", t->unk >= 0 ? jb_tok(b, &t->tok[t->unk]) :
	       cJSON_CreateNull());
	jb_put(b, model, "continuing_subword_prefix", cJSON_CreateNull());
	jb_put(b, model, "end_of_word_suffix", cJSON_CreateNull());
	jb_put(b, model, "fuse_unk", cJSON_CreateTrue());
	jb_put(b, model, "byte_fallback", cJSON_CreateTrue());
	jb_put(b, model, "ignore_merges", cJSON_CreateFalse());
}

/* The vocabulary: every token, first id wins for duplicate strings. */
static void vocab(struct jb *b, cJSON *model, const struct tokmeta *t, struct tokmap *map)
{
	cJSON *v = jb_put(b, model, "vocab", cJSON_CreateObject());
	uint64_t i;

	for (i = 0; i < t->n && !b->oom; i++) {
		if (!tokmap_put(map, (int64_t)i))
			continue;
		b->tmp.n = 0;
		if (cb_sbuf_add(&b->tmp, t->tok[i].p, t->tok[i].n)) {
			b->oom = 1;
			break;
		}
		jb_put(b, v, b->tmp.p, cJSON_CreateNumber((double)i));
	}
}

/* The pre-tokenizer of tokenizer.ggml.pre, or NULL with the reason in err. */
static const struct gguf_pretok *find_pre(const struct gguf_file *f, struct tokmeta *t,
					  char *err, size_t errlen)
{
	const struct gguf_pretok *pt;
	char names[256];

	if (!t->pre.n) {
		t->pre.p = "default";
		t->pre.n = 7;
	}
	pt = gguf_pretok_find(t->pre.p, t->pre.n);
	if (pt)
		return pt;
	gguf_pretok_names(names, sizeof(names));
	snprintf(err, errlen, "%s: pre-tokenizer '%.*s' (tokenizer.ggml.pre) is not "
		 "supported (%s are)", f->path, (int)(t->pre.n > 32 ? 32 : t->pre.n), t->pre.p,
		 names);
	return NULL;
}

/* Print @root (and free it) as the caller's result; NULL when out of memory. */
static char *print_json(struct jb *b, cJSON *root, size_t *len)
{
	char *s = b->oom ? NULL : cJSON_PrintUnformatted(root);

	cJSON_Delete(root);
	free(b->tmp.p);
	if (s)
		*len = strlen(s);
	return s;
}

char *gguf_tokenizer_json(const struct gguf_file *f, size_t *len, char *err, size_t errlen)
{
	struct tokmeta t;
	struct tokmap map = { 0 };
	struct jb b = { 0 };
	cJSON *root = NULL, *model, *merges;
	const struct gguf_pretok *pt = NULL;
	char *out;
	int gpt2;
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
		pt = find_pre(f, &t, err, errlen);
		if (!pt)
			goto fail;
		if (!t.merges) {
			snprintf(err, errlen, "%s: gpt2 tokenizer without tokenizer.ggml.merges",
				 f->path);
			goto fail;
		}
	}
	if (tokmap_init(&map, t.tok, t.n))
		goto oom;

	root = cJSON_CreateObject();
	jb_put(&b, root, "version", cJSON_CreateString("1.0"));
	jb_put(&b, root, "truncation", cJSON_CreateNull());
	jb_put(&b, root, "padding", cJSON_CreateNull());
	added_tokens(&b, root, &t);
	/* the model object goes last; its type first, as HF writes it */
	model = cJSON_CreateObject();
	jb_put(&b, model, "type", cJSON_CreateString("BPE"));
	jb_put(&b, model, "dropout", cJSON_CreateNull());
	if (gpt2)
		gpt2_parts(&b, root, model, &t, pt);
	else
		sp_parts(&b, root, model, &t);
	jb_put(&b, root, "model", model);
	vocab(&b, model, &t, &map);
	merges = jb_put(&b, model, "merges", cJSON_CreateArray());
	if (gpt2) {
		struct gguf_str *mg = gguf_str_array(t.merges);

		if (!mg)
			goto oom;
		for (i = 0; i < t.merges->arr_n && !b.oom; i++)
			jb_put(&b, merges, NULL, jb_tok(&b, &mg[i]));
		free(mg);
	} else if (sp_merges(&b, merges, t.tok, t.n, t.score, &map)) {
		goto oom;
	}
	out = print_json(&b, root, len);
	root = NULL;
	if (!out)
		goto oom;
	free(map.slot);
	tokmeta_free(&t);
	return out;
oom:
	snprintf(err, errlen, "%s: out of memory", f->path);
fail:
	cJSON_Delete(root);
	free(b.tmp.p);
	free(map.slot);
	tokmeta_free(&t);
	return NULL;
}

char *gguf_tokenizer_config_json(const struct gguf_file *f, size_t *len, char *err,
				 size_t errlen)
{
	struct tokmeta t;
	struct jb b = { 0 };
	struct gguf_str tmpl;
	cJSON *root;
	char *out;
	int sp;

	if (tokmeta_read(f, &t, err, errlen)) {
		tokmeta_free(&t);
		return NULL;
	}
	sp = t.model.n == 5 && !memcmp(t.model.p, "llama", 5);
	if (t.add_bos < 0)
		t.add_bos = sp;
	root = cJSON_CreateObject();
	if (t.bos >= 0)
		jb_put(&b, root, "bos_token", jb_tok(&b, &t.tok[t.bos]));
	if (t.eos >= 0)
		jb_put(&b, root, "eos_token", jb_tok(&b, &t.tok[t.eos]));
	jb_put(&b, root, "add_bos_token", cJSON_CreateBool(t.add_bos > 0 && t.bos >= 0));
	jb_put(&b, root, "add_eos_token", cJSON_CreateBool(t.add_eos > 0 && t.eos >= 0));
	/* a template with a NUL byte cannot be a JSON string: left out */
	if (!gguf_get_str(f, "tokenizer.chat_template", &tmpl) && tmpl.n &&
	    !memchr(tmpl.p, 0, tmpl.n))
		jb_put(&b, root, "chat_template", jb_strn(&b, tmpl.p, tmpl.n));
	tokmeta_free(&t);
	out = print_json(&b, root, len);
	if (!out)
		snprintf(err, errlen, "%s: out of memory", f->path);
	return out;
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

static int32_t meta_id(const struct gguf_file *f, const char *key)
{
	uint64_t v;

	return !gguf_get_uint(f, key, &v) && v < INT32_MAX ? (int32_t)v : -1;
}

void gguf_tokenizer_ids(const struct gguf_file *f, struct gguf_tok_ids *ids)
{
	struct gguf_str gs;
	int add;

	ids->bos = meta_id(f, "tokenizer.ggml.bos_token_id");
	ids->eos = meta_id(f, "tokenizer.ggml.eos_token_id");
	ids->pad = meta_id(f, "tokenizer.ggml.padding_token_id");
	ids->flags = 0;
	/* no add_bos_token key: llama.cpp adds BOS for SentencePiece vocabularies */
	if (gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &add))
		add = !gguf_get_str(f, "tokenizer.ggml.model", &gs) && gs.n == 5 &&
		      !memcmp(gs.p, "llama", 5);
	if (add && ids->bos >= 0)
		ids->flags |= COLIBRI_TOK_F_ADD_BOS;
	if (!gguf_get_bool(f, "tokenizer.ggml.add_eos_token", &add) && add && ids->eos >= 0)
		ids->flags |= COLIBRI_TOK_F_ADD_EOS;
}
