// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_load.c - tokenizer.json to struct cb_tokenizer: the BPE model, added
 * tokens, the post-processor template, BOS/EOS; tokenizer_config.json;
 * the accessors and cb_tok_free().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

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
		if (tok_bl_unmap(s, n, &tok->arena))
			return -ENOMEM;
	} else if (cb_sbuf_add(&tok->arena, s, n)) {
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

	if (tok_decode_piece(dc, s, n, &tok->arena))
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
	struct cb_sbuf tmp = { 0 };

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
	    !tok->is_special || tok_smap_init(&tok->vocab, nv))
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
			tok_smap_put(&tok->vocab, tok->arena.p, tok->piece_off[i], tok->piece_len[i], i);

	tok->unk_id = -1;
	if ((s = jstr(model, "unk_token"))) {
		tok->unk_id = tok_smap_get(&tok->vocab, tok->arena.p, s, strlen(s));
		if (tok->unk_id < 0) {
			cb_set_err(err, errlen, "tokenizer.json: unk_token '%s' is not in the vocab", s);
			return -EINVAL;
		}
	}
	for (i = 0; i < 256; i++) {
		char name[8];

		snprintf(name, sizeof(name), "<0x%02X>", (unsigned int)i);
		tok->byte_id[i] = tok->bytelevel ? -1 :
				  tok_smap_get(&tok->vocab, tok->arena.p, name, 6);
	}

	if (tok_mmap_init(&tok->merges, cJSON_GetArraySize(merges)))
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

			if (tok_bl_unmap(a, al, &tmp))
				goto oom;
			mid = tmp.n;
			if (tok_bl_unmap(b, bl, &tmp))
				goto oom;
			ia = tok_smap_get(&tok->vocab, tok->arena.p, tmp.p, mid);
			ib = tok_smap_get(&tok->vocab, tok->arena.p, tmp.p + mid, tmp.n - mid);
		} else {
			if (cb_sbuf_add(&tmp, a, al) || cb_sbuf_add(&tmp, b, bl))
				goto oom;
			ia = tok_smap_get(&tok->vocab, tok->arena.p, a, al);
			ib = tok_smap_get(&tok->vocab, tok->arena.p, b, bl);
		}
		ic = tok_smap_get(&tok->vocab, tok->arena.p, tmp.p, tmp.n);
		if (ia < 0 || ib < 0 || ic < 0) {
			cb_set_err(err, errlen, "tokenizer.json: merge %u ('%.*s' '%.*s') uses a token "
				"outside the vocab", rank, (int)al, a, (int)bl, b);
			free(tmp.p);
			return -EINVAL;
		}
		tok_mmap_put(&tok->merges, ia, ib, rank++, ic);
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

			if (cb_sbuf_add(&tok->arena, a->content, a->len))
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

	tok_bl_init();
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
	if (tok_load_normalizer(tok, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), err, errlen) ||
	    tok_load_pretok(tok, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), err, errlen) ||
	    tok_load_decoder(tok, &dc, cJSON_GetObjectItemCaseSensitive(root, "decoder"), &fused,
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
	struct cb_sbuf b = { 0 };
	char chunk[65536];
	size_t n;
	struct cb_tokenizer *tok;

	if (!f) {
		cb_set_err(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (cb_sbuf_add(&b, chunk, n)) {
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
	return tok_smap_get(&tok->vocab, tok->arena.p, s, len);
}

int cb_tok_is_special(const struct cb_tokenizer *tok, int32_t id)
{
	return id >= 0 && (size_t)id < tok->n_ids && tok->is_special[id];
}
