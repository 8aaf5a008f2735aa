// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_utf8.c - UTF-8 classification and repair, the GPT-2 byte-level map,
 * and the replace-all the normalizers, pre-tokenizers and decoders share.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tok_internal.h"

/*
 * Classify the bytes at @p: a complete valid character (*len = its length),
 * a valid but unfinished prefix (all @n bytes), or an invalid sequence whose
 * maximal ill-formed subpart is *len bytes (one U+FFFD replaces it, as the
 * WHATWG decoder and Rust's from_utf8_lossy do).
 */
int tok_u8_class(const unsigned char *p, size_t n, size_t *len, int32_t *cp)
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

size_t tok_u8_put(char *o, int32_t c)
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
size_t tok_u8_get(const char *s, size_t n, int32_t *cp)
{
	size_t len;

	if (tok_u8_class((const unsigned char *)s, n, &len, cp) != U8_OK) {
		*cp = 0xfffd;
		return len ? len : 1;
	}
	return len;
}

/* Rust's char::is_whitespace (Unicode White_Space). */
bool tok_u_is_white(int32_t c)
{
	return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000;
}

bool tok_u_is_alnum(int32_t c)
{
	utf8proc_category_t k = utf8proc_category(c);

	return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) ||
	       (k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO);
}

/* Copy @s replacing ill-formed sequences by U+FFFD; NULL if already valid. */
char *tok_u8_sanitize(const char *s, size_t n, size_t *outn)
{
	size_t i = 0, len;
	struct cb_sbuf b = { 0 };
	bool bad = false;

	while (i < n) {
		if (tok_u8_class((const unsigned char *)s + i, n - i, &len, NULL) != U8_OK) {
			bad = true;
			break;
		}
		i += len;
	}
	if (!bad)
		return NULL;
	for (i = 0; i < n; i += len) {
		int k = tok_u8_class((const unsigned char *)s + i, n - i, &len, NULL);

		if (k == U8_OK) {
			if (cb_sbuf_add(&b, s + i, len))
				goto oom;
		} else if (cb_sbuf_add(&b, "\xef\xbf\xbd", 3)) {
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

void tok_bl_init(void)
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
int tok_bl_unmap(const char *s, size_t n, struct cb_sbuf *out)
{
	size_t i = 0, start = out->n;
	int32_t c;

	while (i < n) {
		unsigned char byte;

		i += tok_u8_get(s + i, n - i, &c);
		if (c >= 324 || bl_cp2byte[c] < 0) {
			out->n = start;
			return cb_sbuf_add(out, s, n);
		}
		byte = bl_cp2byte[c];
		if (cb_sbuf_add(out, &byte, 1))
			return -ENOMEM;
	}
	return cb_sbuf_reserve(out, 0);
}

int tok_replace_all(struct cb_sbuf *out, const char *s, size_t n, const char *pat, size_t plen,
		    const char *rep, size_t rlen)
{
	size_t i = 0;

	while (i < n) {
		const char *hit = plen <= n - i ? memmem(s + i, n - i, pat, plen) : NULL;
		size_t upto = hit ? (size_t)(hit - s) : n;

		if (cb_sbuf_add(out, s + i, upto - i))
			return -ENOMEM;
		if (!hit)
			break;
		if (cb_sbuf_add(out, rep, rlen))
			return -ENOMEM;
		i = upto + plen;
	}
	return cb_sbuf_reserve(out, 0);
}
