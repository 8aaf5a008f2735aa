// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_lex.c - template text to tokens, as @huggingface/jinja does it.
 *
 * First the text is preprocessed the way transformers configures Jinja: one
 * trailing newline dropped, lstrip_blocks (spaces and tabs before a {% or
 * {# at the start of a line removed), trim_blocks (the newline after %} or
 * #} removed), and transformers' {% generation %} tags removed.  The
 * preprocessed text keeps, per byte, its offset in the original, so errors
 * point into the template as written.  Then the tokenizer: text outside
 * tags, {%- -%} / {{- -}} / {#- -#} stripping whitespace, and inside tags
 * JavaScript-like tokens (a '-' or '+' that cannot end a binary operand
 * starts a signed number or is unary).
 */
#include <stdlib.h>
#include <string.h>

#include "jinja_internal.h"

/* JavaScript line terminators, for lstrip_blocks' ^: \n \r U+2028 U+2029. */
static size_t eol_len(const char *s, size_t n)
{
	if (n && (s[0] == '\n' || s[0] == '\r'))
		return 1;
	if (n >= 3 && !memcmp(s, "\xe2\x80", 2) && (s[2] == '\xa8' || s[2] == '\xa9'))
		return 3;
	return 0;
}

/* Text with the original offset of each byte. */
struct ptext {
	char *s;
	uint32_t *pos;
	size_t n;
};

static int pt_push(struct ptext *d, const struct ptext *src, size_t i)
{
	d->s[d->n] = src->s[i];
	d->pos[d->n] = src->pos[i];
	d->n++;
	return 0;
}

static int pt_alloc(struct jj_ctx *c, struct ptext *d, size_t n)
{
	d->s = jj_alloc(c, n + 1);
	d->pos = jj_alloc(c, (n + 1) * sizeof(*d->pos));
	d->n = 0;
	return d->s && d->pos ? 0 : -1;
}

/* lstrip_blocks: ^[ \t]*({[#%-]) -> $1, at every line start. */
static int lstrip_blocks(struct jj_ctx *c, const struct ptext *in, struct ptext *o)
{
	size_t i = 0, j, l;
	bool bol = true;

	if (pt_alloc(c, o, in->n))
		return -1;
	while (i < in->n) {
		if (bol) {
			for (j = i; j < in->n && (in->s[j] == ' ' || in->s[j] == '\t'); j++)
				;
			if (j + 1 < in->n && in->s[j] == '{' &&
			    (in->s[j + 1] == '#' || in->s[j + 1] == '%' || in->s[j + 1] == '-'))
				i = j;
			bol = false;
			continue;
		}
		l = eol_len(in->s + i, in->n - i);
		if (l) {
			while (l--)
				pt_push(o, in, i++);
			bol = true;
			continue;
		}
		pt_push(o, in, i++);
	}
	return 0;
}

/* trim_blocks: ([#%-]})\n -> $1. */
static int trim_blocks(struct jj_ctx *c, const struct ptext *in, struct ptext *o)
{
	size_t i = 0;

	if (pt_alloc(c, o, in->n))
		return -1;
	while (i < in->n) {
		if (i + 2 < in->n && (in->s[i] == '#' || in->s[i] == '%' || in->s[i] == '-') &&
		    in->s[i + 1] == '}' && in->s[i + 2] == '\n') {
			pt_push(o, in, i);
			pt_push(o, in, i + 1);
			i += 3;
			continue;
		}
		pt_push(o, in, i++);
	}
	return 0;
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	size_t l;

	while (i < n && (l = jj_ws_len(s + i, n - i)))
		i += l;
	return i;
}

/*
 * transformers' {% generation %} / {% endgeneration %} marks:
 * (\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*) -> (lstrip ? "" : $1) +
 * (rstrip ? "" : $4).  Returns the end of a tag starting at @i, or 0.
 */
static size_t generation_tag(const char *s, size_t i, size_t n, bool *ls, bool *rs)
{
	size_t j = i + 2;

	if (j > n || memcmp(s + i, "{%", 2))
		return 0;
	*ls = j < n && s[j] == '-';
	j = skip_ws(s, j + *ls, n);
	if (j + 3 <= n && !memcmp(s + j, "end", 3) && j + 13 <= n &&
	    !memcmp(s + j + 3, "generation", 10))
		j += 3;
	if (j + 10 > n || memcmp(s + j, "generation", 10))
		return 0;
	j = skip_ws(s, j + 10, n);
	*rs = j < n && s[j] == '-';
	j += *rs;
	if (j + 2 > n || memcmp(s + j, "%}", 2))
		return 0;
	return j + 2;
}

static int generation_tags(struct jj_ctx *c, const struct ptext *in, struct ptext *o)
{
	size_t i = 0, ws_start = 0, end, a, l;
	bool ls, rs;

	if (pt_alloc(c, o, in->n))
		return -1;
	/*
	 * ws_start: where the whitespace at the end of the output begins; a
	 * tag's leading \s* cannot reach back into an earlier match.
	 */
	while (i < in->n) {
		end = in->s[i] == '{' ? generation_tag(in->s, i, in->n, &ls, &rs) : 0;
		if (end) {
			if (ls)
				o->n = ws_start;
			a = skip_ws(in->s, end, in->n);
			if (!rs)
				for (i = end; i < a; i++)
					pt_push(o, in, i);
			i = a;
			ws_start = o->n;
			continue;
		}
		l = jj_ws_len(in->s + i, in->n - i);
		if (l) {
			while (l--)
				pt_push(o, in, i++);
			continue;
		}
		pt_push(o, in, i++);
		ws_start = o->n;
	}
	return 0;
}

/* ---- the tokenizer ------------------------------------------------------ */

struct lexer {
	struct jj_ctx *c;
	const struct ptext *t;
	size_t i;
	struct jj_tok *tok;
	size_t n, cap;
	int curly;		/* depth of { } inside an expression */
};

static int push(struct lexer *L, enum jj_tok_kind k, const char *s, size_t n, size_t at)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 256;
		struct jj_tok *p = jj_alloc(L->c, cap * sizeof(*p));

		if (!p)
			return -1;
		if (L->n)
			memcpy(p, L->tok, L->n * sizeof(*p));
		L->tok = p;
		L->cap = cap;
	}
	L->tok[L->n++] = (struct jj_tok){ k, s, n, L->t->pos[at] };
	return 0;
}

static int last_kind(const struct lexer *L)
{
	return L->n ? (int)L->tok[L->n - 1].k : -1;
}

static bool at(const struct lexer *L, const char *s)
{
	size_t n = strlen(s);

	return L->i + n <= L->t->n && !memcmp(L->t->s + L->i, s, n);
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_word(char ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

/* {%- / {{- / {#-: trimEnd() the text before, dropping it if nothing is left. */
static void strip_trailing(struct lexer *L)
{
	struct jj_tok *t;

	if (!L->n || L->tok[L->n - 1].k != JT_TEXT)
		return;
	t = &L->tok[L->n - 1];
	jj_trim(&t->s, &t->n, false, true);
	if (!t->n)
		L->n--;
}

static void skip_leading_ws(struct lexer *L)
{
	L->i = skip_ws(L->t->s, L->i, L->t->n);
}

static uint32_t here(const struct lexer *L)
{
	return L->i < L->t->n ? L->t->pos[L->i] : (uint32_t)L->c->srclen;
}

static int hexv(char ch)
{
	if (is_digit(ch))
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A quoted string's body, escapes decoded; L->i is after the opening quote. */
static int lex_string(struct lexer *L, char quote, size_t start)
{
	const struct ptext *t = L->t;
	struct cb_sbuf b = { 0 };
	uint32_t hi = 0;	/* a pending high surrogate from \uD8xx */
	char u[4];
	char *s;

	for (;;) {
		char ch;

		if (L->i >= t->n)
			goto eof;
		ch = t->s[L->i];
		if (ch == quote)
			break;
		if (ch == '\\') {
			char e;
			uint32_t v = 0;
			int k, len;

			if (++L->i >= t->n)
				goto eof;
			e = t->s[L->i++];
			if (e == 'x' || e == 'u') {
				len = e == 'x' ? 2 : 4;
				for (k = 0; k < len; k++) {
					if (L->i >= t->n || hexv(t->s[L->i]) < 0) {
						free(b.p);
						return jj_fail(L->c, here(L),
							       "invalid \\%c escape in a string", e);
					}
					v = v * 16 + hexv(t->s[L->i++]);
				}
				if (hi && v >= 0xdc00 && v <= 0xdfff) {
					v = 0x10000 + ((hi - 0xd800) << 10) + (v - 0xdc00);
					hi = 0;
				} else if (hi) {
					break;
				} else if (v >= 0xd800 && v <= 0xdbff) {
					hi = v;
					continue;
				} else if (v >= 0xdc00 && v <= 0xdfff) {
					break;
				}
				if (cb_sbuf_add(&b, u, jj_u8_put(u, v)))
					goto oom;
				continue;
			}
			if (hi)
				break;
			switch (e) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'v': ch = '\v'; break;
			case '\'': case '"': case '\\': ch = e; break;
			default:
				free(b.p);
				return jj_fail(L->c, here(L) - 1,
					       "unexpected escaped character '%c' in a string", e);
			}
			if (cb_sbuf_add(&b, &ch, 1))
				goto oom;
			continue;
		}
		if (hi)
			break;
		if (cb_sbuf_add(&b, &ch, 1))
			goto oom;
		L->i++;
	}
	if (hi) {
		free(b.p);
		return jj_fail(L->c, here(L), "a \\u escape leaves a lone UTF-16 surrogate");
	}
	L->i++;		/* closing quote */
	s = jj_strdup(L->c, b.p ? b.p : "", b.n);
	free(b.p);
	return s ? push(L, JT_STR, s, b.n, start) : -1;
eof:
	free(b.p);
	return jj_fail(L->c, t->pos[start], "unterminated string");
oom:
	free(b.p);
	return jj_fail(L->c, here(L), "out of memory");
}

static const struct {
	const char *s;
	enum jj_tok_kind k;
} table[] = {
	{ "{%", JT_OPEN_STMT }, { "%}", JT_CLOSE_STMT }, { "{{", JT_OPEN_EXPR },
	{ "}}", JT_CLOSE_EXPR }, { "(", JT_LPAREN }, { ")", JT_RPAREN },
	{ "{", JT_LBRACE }, { "}", JT_RBRACE }, { "[", JT_LBRACKET }, { "]", JT_RBRACKET },
	{ ",", JT_COMMA }, { ".", JT_DOT }, { ":", JT_COLON }, { "|", JT_PIPE },
	{ "<=", JT_CMP }, { ">=", JT_CMP }, { "==", JT_CMP }, { "!=", JT_CMP },
	{ "<", JT_CMP }, { ">", JT_CMP }, { "+", JT_ADD }, { "-", JT_ADD }, { "~", JT_ADD },
	{ "**", JT_POW }, { "*", JT_MUL }, { "//", JT_MUL }, { "/", JT_MUL }, { "%", JT_MUL },
	{ "=", JT_EQUALS },
};

/* One token inside {% %} or {{ }}. */
static int lex_tag_token(struct lexer *L)
{
	const struct ptext *t = L->t;
	size_t start, k;
	char ch;
	int last;

	/* whitespace inside tags is skipped; running into the end is an error */
	start = skip_ws(t->s, L->i, t->n);
	if (start >= t->n && start > L->i)
		return jj_fail(L->c, (uint32_t)L->c->srclen, "unexpected end of template");
	L->i = start;
	if (at(L, "-%}")) {
		if (push(L, JT_CLOSE_STMT, "%}", 2, L->i))
			return -1;
		L->i += 3;
		skip_leading_ws(L);
		return 0;
	}
	if (at(L, "-}}")) {
		if (push(L, JT_CLOSE_EXPR, "}}", 2, L->i))
			return -1;
		L->i += 3;
		skip_leading_ws(L);
		return 0;
	}
	ch = t->s[L->i];
	last = last_kind(L);
	if (ch == '-' || ch == '+') {
		if (last == JT_TEXT || last < 0)
			return jj_fail(L->c, here(L), "unexpected character '%c'", ch);
		if (last != JT_IDENT && last != JT_NUM && last != JT_STR && last != JT_RPAREN &&
		    last != JT_RBRACKET) {
			/* a sign: part of a number, or unary */
			start = L->i++;
			while (L->i < t->n && is_digit(t->s[L->i]))
				L->i++;
			if (L->i > start + 1 && L->i + 1 < t->n && t->s[L->i] == '.' &&
			    is_digit(t->s[L->i + 1])) {
				L->i++;
				while (L->i < t->n && is_digit(t->s[L->i]))
					L->i++;
			}
			if (L->i >= t->n && L->i > start + 1)
				return jj_fail(L->c, (uint32_t)L->c->srclen,
					       "unexpected end of template");
			return push(L, L->i > start + 1 ? JT_NUM : JT_UNARY, t->s + start,
				    L->i - start, start);
		}
	}
	for (k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
		size_t n = strlen(table[k].s);

		if (table[k].k == JT_CLOSE_EXPR && L->curly > 0)
			continue;
		if (!at(L, table[k].s))
			continue;
		if (push(L, table[k].k, table[k].s, n, L->i))
			return -1;
		if (table[k].k == JT_OPEN_EXPR)
			L->curly = 0;
		else if (table[k].k == JT_LBRACE)
			L->curly++;
		else if (table[k].k == JT_RBRACE)
			L->curly--;
		L->i += n;
		return 0;
	}
	if (ch == '\'' || ch == '"') {
		start = L->i++;
		return lex_string(L, ch, start);
	}
	if (is_digit(ch)) {
		start = L->i;
		while (L->i < t->n && is_digit(t->s[L->i]))
			L->i++;
		if (last != JT_DOT && L->i + 1 < t->n && t->s[L->i] == '.' &&
		    is_digit(t->s[L->i + 1])) {
			L->i++;
			while (L->i < t->n && is_digit(t->s[L->i]))
				L->i++;
		}
		if (L->i >= t->n)
			return jj_fail(L->c, (uint32_t)L->c->srclen, "unexpected end of template");
		return push(L, JT_NUM, t->s + start, L->i - start, start);
	}
	if (is_word(ch)) {
		start = L->i;
		while (L->i < t->n && is_word(t->s[L->i]))
			L->i++;
		if (L->i >= t->n)
			return jj_fail(L->c, (uint32_t)L->c->srclen, "unexpected end of template");
		return push(L, JT_IDENT, t->s + start, L->i - start, start);
	}
	if ((unsigned char)ch >= 0x80) {
		uint32_t cp;

		jj_u8_get(t->s + L->i, t->n - L->i, &cp);
		return jj_fail(L->c, here(L), "unexpected character U+%04X", cp);
	}
	return jj_fail(L->c, here(L), "unexpected character '%c'", ch);
}

static int lex_comment(struct lexer *L)
{
	const struct ptext *t = L->t;
	size_t start = L->i, cs, ce;
	bool strip_before, strip_after;

	L->i += 2;
	strip_before = L->i < t->n && t->s[L->i] == '-';
	L->i += strip_before;
	cs = L->i;
	while (L->i >= t->n || t->s[L->i] != '#' || L->i + 1 >= t->n || t->s[L->i + 1] != '}') {
		if (L->i + 2 >= t->n)
			return jj_fail(L->c, t->pos[start], "comment is not closed (missing #})");
		L->i++;
	}
	ce = L->i;
	strip_after = ce > cs && t->s[ce - 1] == '-';
	if (strip_before)
		strip_trailing(L);
	if (push(L, JT_COMMENT, t->s + cs, ce - cs - strip_after, start))
		return -1;
	L->i += 2;
	if (strip_after)
		skip_leading_ws(L);
	return 0;
}

int jj_lex(struct jj_ctx *c, struct jj_tok **toks, size_t *ntoks)
{
	struct ptext raw, a, b, pp;
	struct lexer L = { .c = c };
	size_t i;

	if (c->srclen > UINT32_MAX - 1)
		return jj_fail(c, 0, "template too large");
	if (pt_alloc(c, &raw, c->srclen))
		return -1;
	for (i = 0; i < c->srclen; i++) {
		raw.s[i] = c->src[i];
		raw.pos[i] = (uint32_t)i;
	}
	raw.n = c->srclen;
	if (raw.n && raw.s[raw.n - 1] == '\n')
		raw.n--;
	if (lstrip_blocks(c, &raw, &a) || trim_blocks(c, &a, &b) || generation_tags(c, &b, &pp))
		return -1;
	pp.s[pp.n] = 0;
	pp.pos[pp.n] = (uint32_t)c->srclen;
	L.t = &pp;

	while (L.i < pp.n) {
		int last = last_kind(&L);

		if (last < 0 || last == JT_CLOSE_STMT || last == JT_CLOSE_EXPR || last == JT_COMMENT) {
			size_t start = L.i;

			while (L.i < pp.n && !(pp.s[L.i] == '{' && L.i + 1 < pp.n &&
					       (pp.s[L.i + 1] == '%' || pp.s[L.i + 1] == '{' ||
						pp.s[L.i + 1] == '#')))
				L.i++;
			if (L.i > start) {
				if (push(&L, JT_TEXT, pp.s + start, L.i - start, start))
					return -1;
				continue;
			}
		}
		if (at(&L, "{#")) {
			if (lex_comment(&L))
				return -1;
			continue;
		}
		if (at(&L, "{%-") || at(&L, "{{-")) {
			bool stmt = pp.s[L.i + 1] == '%';

			strip_trailing(&L);
			if (push(&L, stmt ? JT_OPEN_STMT : JT_OPEN_EXPR, stmt ? "{%" : "{{", 2, L.i))
				return -1;
			if (!stmt)
				L.curly = 0;
			L.i += 3;
			continue;
		}
		if (lex_tag_token(&L))
			return -1;
	}
	*toks = L.tok;
	*ntoks = L.n;
	return 0;
}
