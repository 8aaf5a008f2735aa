// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_pretokenize.c - tokenizer.json pre-tokenizers: Split (regex or
 * literal, every delimiter behaviour, invert), ByteLevel (GPT-2's regex,
 * add_prefix_space), Digits, Metaspace; the Oniguruma-to-PCRE2 regex rewrite.
 */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/*
 * Oniguruma (which Hugging Face's tokenizers use) and PCRE2 disagree on \s:
 * Onig's Unicode \s is Z + U+0009..U+000D + U+0085, PCRE2's UCP \s also takes
 * U+180E.  Rewrite \s and \S (outside classes) and \s inside classes to the
 * Onig set so PCRE2 splits exactly like the reference.
 */
static char *regex_onig_to_pcre(const char *re)
{
	static const char set[] = "\\t-\\r\\x{85}\\p{Z}";
	struct cb_sbuf b = { 0 };
	bool in_class = false;
	size_t i, n = strlen(re);

	for (i = 0; i < n; i++) {
		char c = re[i];

		if (c == '\\' && i + 1 < n) {
			char d = re[i + 1];

			i++;
			if (d == 's') {
				if (in_class) {
					if (cb_sbuf_add(&b, set, sizeof(set) - 1))
						goto oom;
				} else if (cb_sbuf_add(&b, "[", 1) || cb_sbuf_add(&b, set, sizeof(set) - 1) ||
					   cb_sbuf_add(&b, "]", 1)) {
					goto oom;
				}
				continue;
			}
			if (d == 'S' && !in_class) {
				if (cb_sbuf_add(&b, "[^", 2) || cb_sbuf_add(&b, set, sizeof(set) - 1) ||
				    cb_sbuf_add(&b, "]", 1))
					goto oom;
				continue;
			}
			if (cb_sbuf_add(&b, re + i - 1, 2))
				goto oom;
			continue;
		}
		if (!in_class && c == '[') {
			in_class = true;
			if (cb_sbuf_add(&b, "[", 1))
				goto oom;
			/* a ']' right after '[' or '[^' is literal */
			if (i + 1 < n && re[i + 1] == '^') {
				if (cb_sbuf_add(&b, "^", 1))
					goto oom;
				i++;
			}
			if (i + 1 < n && re[i + 1] == ']') {
				if (cb_sbuf_add(&b, "]", 1))
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

				if (cb_sbuf_add(&b, re + i, l))
					goto oom;
				i += l - 1;
				continue;
			}
		}
		if (in_class && c == ']')
			in_class = false;
		if (cb_sbuf_add(&b, &c, 1))
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

int tok_parse_scheme(const cJSON *n, enum prepend_scheme *ps)
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

int tok_load_pretok(struct cb_tokenizer *tok, const cJSON *n, char *err, size_t errlen)
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
			if (tok_load_pretok(tok, it, err, errlen))
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
	} else if (!strcmp(type, "Digits")) {
		/*
		 * Hugging Face splits on char::is_numeric (Nd, Nl, No: \p{N}),
		 * each digit alone or runs of them kept together.  DeepSeek-LLM
		 * and DeepSeek-Coder's tokenizer.json files use it.
		 */
		cJSON *pat = cJSON_CreateObject();
		bool one = jbool(n, "individual_digits", false);

		if (!pat || !cJSON_AddStringToObject(pat, "Regex", one ? "\\p{N}" : "\\p{N}+")) {
			cJSON_Delete(pat);
			return -ENOMEM;
		}
		st.kind = P_SPLIT;
		st.beh = B_ISOLATED;
		st.re = compile_pattern(pat, err, errlen);
		cJSON_Delete(pat);
		if (!st.re)
			return -EINVAL;
	} else if (!strcmp(type, "Metaspace")) {
		const char *r = jstr(n, "replacement");

		st.kind = P_METASPACE;
		if (!r || !*r || strlen(r) >= sizeof(st.rep) || tok_parse_scheme(n, &st.scheme)) {
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
	if (cb_sbuf_add(&l->s, s, n))
		return -ENOMEM;
	l->p[l->n++] = (struct piece){ off, n, first };
	return 0;
}

void tok_plist_free(struct plist *l)
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
			pos = ov[0] + tok_u8_get(s + ov[0], n - ov[0], &cp);
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

int tok_pretokenize(const struct cb_tokenizer *tok, const char *s, size_t n, bool first,
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
					struct cb_sbuf t = { 0 };

					ret = cb_sbuf_add(&t, " ", 1) ?: cb_sbuf_add(&t, ps, pl) ?:
					      plist_add(&nxt, t.p, t.n, pf);
					free(t.p);
				} else {
					ret = plist_add(&nxt, ps, pl, pf);
				}
				break;
			case P_METASPACE: {
				struct cb_sbuf t = { 0 };
				size_t a, j;
				bool pre = (st->scheme == PS_ALWAYS ||
					    (st->scheme == PS_FIRST && pf));

				ret = tok_replace_all(&t, ps, pl, " ", 1, st->rep, st->replen);
				if (!ret && pre && (t.n < st->replen || memcmp(t.p, st->rep, st->replen))) {
					struct cb_sbuf u = { 0 };

					ret = cb_sbuf_add(&u, st->rep, st->replen) ?:
					      cb_sbuf_add(&u, t.p, t.n);
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
	tok_plist_free(res);
	*res = cur;
	cur = (struct plist){ 0 };
out:
	pcre2_match_data_free(md);
	tok_plist_free(&cur);
	tok_plist_free(&nxt);
	return ret;
}
