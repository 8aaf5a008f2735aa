// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_decode.c - tokenizer.json decoders (ByteLevel, Replace, ByteFallback,
 * Fuse, Strip, Metaspace), cb_tok_decode() and the streaming decoder that
 * never hands out a partial UTF-8 character.
 */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

int tok_load_decoder(struct cb_tokenizer *tok, struct dec_chain *dc, const cJSON *n,
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
			if (tok_load_decoder(tok, dc, it, fused, err, errlen))
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
		tok_u8_get(c, strlen(c), &st.cp);
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
		if (!st.a || !*st.a || tok_parse_scheme(n, &ps))
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
int tok_decode_piece(const struct dec_chain *dc, const char *s, size_t n, struct cb_sbuf *out)
{
	struct cb_sbuf a = { 0 }, b = { 0 };
	size_t i;
	int ret = -ENOMEM;

	if (cb_sbuf_add(&a, s, n))
		goto out;
	for (i = 0; i < dc->n; i++) {
		const struct dec_step *st = &dc->s[i];
		struct cb_sbuf t;
		int v;

		b.n = 0;
		switch (st->kind) {
		case D_BYTELEVEL:
			if (tok_bl_unmap(a.p, a.n, &b))
				goto out;
			break;
		case D_REPLACE:
		case D_METASPACE:
			if (tok_replace_all(&b, a.p, a.n, st->a, strlen(st->a),
					    st->kind == D_REPLACE ? st->b : " ",
					    st->kind == D_REPLACE ? strlen(st->b) : 1))
				goto out;
			break;
		case D_BYTEFALLBACK:
			v = byte_token(a.p, a.n);
			if (v >= 0) {
				unsigned char c = v;

				if (cb_sbuf_add(&b, &c, 1))
					goto out;
			} else if (cb_sbuf_add(&b, a.p, a.n)) {
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
				size_t l = tok_u8_get(a.p + lo, hi - lo, &c);

				if (c != st->cp)
					break;
				lo += l;
			}
			for (k = 0; k < st->stop && hi > lo; k++) {
				size_t l = 1;

				while (l < hi - lo && ((unsigned char)a.p[hi - l] & 0xc0) == 0x80)
					l++;
				tok_u8_get(a.p + hi - l, l, &c);
				if (c != st->cp)
					break;
				hi -= l;
			}
			if (cb_sbuf_add(&b, a.p + lo, hi - lo))
				goto out;
			break;
		}
		}
		t = a;
		a = b;
		b = t;
	}
	ret = cb_sbuf_add(out, a.p, a.n);
out:
	free(a.p);
	free(b.p);
	return ret;
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
	struct cb_sbuf b = { 0 };
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
		if (cb_sbuf_add(&b, tok->arena.p + tok->dec_off[ids[i]], tok->dec_len[ids[i]])) {
			free(b.p);
			return -ENOMEM;
		}
	}
	hi = b.n;
	/* the fused Strip decoder (SentencePiece's leading space) */
	for (k = 0; k < tok->strip_start && lo < hi; k++) {
		int32_t c;
		size_t l = tok_u8_get(b.p + lo, hi - lo, &c);

		if (c != tok->strip_cp)
			break;
		lo += l;
	}
	for (k = 0; k < tok->strip_stop && hi > lo; k++) {
		size_t l = 1;
		int32_t c;

		while (l < hi - lo && ((unsigned char)b.p[hi - l] & 0xc0) == 0x80)
			l++;
		tok_u8_get(b.p + hi - l, l, &c);
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
		k = tok_u8_class(c, m, &len, NULL);
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
			size_t l = tok_u8_get(s, n, &c);

			if (c != tok->strip_cp)
				break;
			s += l;
			n -= l;
		}
		st->at_start = 0;
	}
	return stream_push(st, s, n, out, cap, false);
}

const char *cb_tok_piece(const struct cb_tokenizer *tok, int32_t id, size_t *len)
{
	*len = 0;
	if (!id_ok(tok, id))
		return NULL;
	*len = tok->dec_len[id];
	return tok->arena.p + tok->dec_off[id];
}

size_t cb_tok_stream_cap(const struct cb_tokenizer *tok)
{
	return 3 * (tok->max_dec + sizeof(((struct cb_tok_stream *)0)->pend));
}

long cb_tok_stream_flush(struct cb_tok_stream *st, char *out, size_t cap)
{
	return stream_push(st, "", 0, out, cap, true);
}
