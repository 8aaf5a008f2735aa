// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_encode.c - text to ids: added tokens split out first (leftmost-longest,
 * lstrip/rstrip/single_word/normalized), then normalise, pre-tokenize and
 * BPE each segment, then the post-processor template and BOS/EOS.
 */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

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
	tok_u8_get(s + n - l, l, &c);
	return tok_u_is_alnum(c);
}

static bool starts_with_word(const char *s, size_t n)
{
	int32_t c;

	if (!n)
		return false;
	tok_u8_get(s, n, &c);
	return tok_u_is_alnum(c);
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
					tok_u8_get(s + a - l, l, &c);
					if (!tok_u_is_white(c))
						break;
					a -= l;
				}
			}
			if (best->rstrip) {
				while (b < n) {
					int32_t c;
					size_t l = tok_u8_get(s + b, n - b, &c);

					if (!tok_u_is_white(c))
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

	if ((ret = tok_normalize(tok, w, s, n, &ns, &nn)))
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
		if ((ret = tok_pretokenize(tok, copy + sl.p[i].a, sl.p[i].b - sl.p[i].a,
					   first && sl.p[i].a == 0, &pl)))
			goto out;
		for (j = 0; j < pl.n; j++)
			if ((ret = tok_bpe(tok, w, pl.s.p + pl.p[j].off, pl.p[j].len)))
				goto out;
	}
out:
	tok_plist_free(&pl);
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
	clean = tok_u8_sanitize(text, len, &cn);
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
