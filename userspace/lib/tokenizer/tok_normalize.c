// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_normalize.c - tokenizer.json normalizers: NFC/NFD/NFKC/NFKD,
 * Prepend, Replace (String patterns), Lowercase, Strip, and Sequences of them.
 */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tok_internal.h"

int tok_load_normalizer(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen)
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
			if (tok_load_normalizer(tok, it, err, errlen))
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

int tok_normalize(const struct cb_tokenizer *tok, struct work *w, const char *s, size_t n,
		  const char **outp, size_t *outn)
{
	size_t k;

	w->a.n = 0;
	if (cb_sbuf_add(&w->a, s, n))
		return -ENOMEM;
	for (k = 0; k < tok->n_norm; k++) {
		const struct norm_step *st = &tok->norm[k];
		struct cb_sbuf t;
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
			r = cb_sbuf_add(&w->b, dst, r);
			free(dst);
			if (r)
				return -ENOMEM;
			break;
		}
		case N_PREPEND:
			/* HF prepends only to a non-empty string */
			if (w->a.n && cb_sbuf_add(&w->b, st->a, st->alen))
				return -ENOMEM;
			if (cb_sbuf_add(&w->b, w->a.p, w->a.n))
				return -ENOMEM;
			break;
		case N_REPLACE:
			if (tok_replace_all(&w->b, w->a.p, w->a.n, st->a, st->alen, st->b, st->blen))
				return -ENOMEM;
			break;
		case N_LOWER:
			for (i = 0; i < w->a.n;) {
				char u[4];

				i += tok_u8_get(w->a.p + i, w->a.n - i, &c);
				if (cb_sbuf_add(&w->b, u, tok_u8_put(u, utf8proc_tolower(c))))
					return -ENOMEM;
			}
			break;
		case N_STRIP: {
			size_t lo = 0, hi = w->a.n;

			while (st->left && lo < hi) {
				size_t l = tok_u8_get(w->a.p + lo, hi - lo, &c);

				if (!tok_u_is_white(c))
					break;
				lo += l;
			}
			while (st->right && hi > lo) {
				size_t l = 1;

				while (l < hi - lo && ((unsigned char)w->a.p[hi - l] & 0xc0) == 0x80)
					l++;
				tok_u8_get(w->a.p + hi - l, l, &c);
				if (!tok_u_is_white(c))
					break;
				hi -= l;
			}
			if (cb_sbuf_add(&w->b, w->a.p + lo, hi - lo))
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
