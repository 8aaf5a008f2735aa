// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_text.c - text helpers of the interpreter: UTF-8, JavaScript's
 * UTF-16 lengths, its case mapping (refused where it is not one code point
 * for one), its whitespace (\s) and its trim().
 */
#include <stdbool.h>
#include <string.h>

#include <utf8proc.h>

#include "jinja_internal.h"

size_t jj_u8_get(const char *s, size_t n, uint32_t *cp)
{
	utf8proc_int32_t c;
	utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &c);

	if (l <= 0) {
		*cp = 0xfffd;
		return 1;
	}
	*cp = (uint32_t)c;
	return (size_t)l;
}

size_t jj_u8_put(char *o, uint32_t cp)
{
	return (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)o);
}

size_t jj_u16_len(const char *s, size_t n)
{
	size_t i, u = 0;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch & 0xc0) != 0x80)
			u += ch >= 0xf0 ? 2 : 1;
	}
	return u;
}

/* Characters whose JavaScript case mapping is not one code point for one. */
static bool special_casing(uint32_t cp, bool upper)
{
	static const uint32_t up[][2] = {
		{ 0xdf, 0xdf }, { 0x149, 0x149 }, { 0x1f0, 0x1f0 }, { 0x390, 0x390 },
		{ 0x3b0, 0x3b0 }, { 0x587, 0x587 }, { 0x1e96, 0x1e9a }, { 0x1f50, 0x1f56 },
		{ 0x1f80, 0x1faf }, { 0x1fb2, 0x1fb7 }, { 0x1fbc, 0x1fbc }, { 0x1fc2, 0x1fc7 },
		{ 0x1fcc, 0x1fcc }, { 0x1fd2, 0x1fd7 }, { 0x1fe2, 0x1fe7 }, { 0x1ff2, 0x1ff7 },
		{ 0x1ffc, 0x1ffc }, { 0xfb00, 0xfb06 }, { 0xfb13, 0xfb17 },
	};
	size_t i;

	if (!upper)
		return cp == 0x130 || cp == 0x3a3;	/* İ -> i̇, final sigma */
	for (i = 0; i < sizeof(up) / sizeof(up[0]); i++)
		if (cp >= up[i][0] && cp <= up[i][1])
			return true;
	return false;
}

int jj_case_map(struct jj_ctx *c, const char *s, size_t n, bool upper, uint32_t pos,
		struct jj_val *out)
{
	char *d = jj_alloc(c, 4 * n + 1);
	size_t i = 0, o = 0;

	if (!d)
		return -1;
	while (i < n) {
		uint32_t cp;

		if ((unsigned char)s[i] < 0x80) {
			char ch = s[i++];

			if (upper && ch >= 'a' && ch <= 'z')
				ch -= 32;
			else if (!upper && ch >= 'A' && ch <= 'Z')
				ch += 32;
			d[o++] = ch;
			continue;
		}
		i += jj_u8_get(s + i, n - i, &cp);
		if (special_casing(cp, upper))
			return jj_fail(c, pos, "%s of U+%04X (special casing) is not supported",
				       upper ? "upper case" : "lower case", cp);
		cp = upper ? (uint32_t)utf8proc_toupper(cp) : (uint32_t)utf8proc_tolower(cp);
		o += jj_u8_put(d + o, cp);
	}
	*out = jj_str(d, o);
	return 0;
}

/* JavaScript's \s: ASCII \t\n\v\f\r and space, and the Unicode spaces. */
size_t jj_ws_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (!n)
		return 0;
	if (u[0] == ' ' || (u[0] >= 9 && u[0] <= 13))
		return 1;
	if (n >= 2 && u[0] == 0xc2 && u[1] == 0xa0)
		return 2;				/* U+00A0 */
	if (n >= 3 && u[0] == 0xe1 && u[1] == 0x9a && u[2] == 0x80)
		return 3;				/* U+1680 */
	if (n >= 3 && u[0] == 0xe2 && u[1] == 0x80 &&
	    ((u[2] >= 0x80 && u[2] <= 0x8a) || u[2] == 0xa8 || u[2] == 0xa9 || u[2] == 0xaf))
		return 3;				/* U+2000..200A, 2028, 2029, 202F */
	if (n >= 3 && u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f)
		return 3;				/* U+205F */
	if (n >= 3 && u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80)
		return 3;				/* U+3000 */
	if (n >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
		return 3;				/* U+FEFF */
	return 0;
}

void jj_trim(const char **s, size_t *n, bool left, bool right)
{
	size_t l;

	while (left && *n && (l = jj_ws_len(*s, *n))) {
		*s += l;
		*n -= l;
	}
	while (right && *n) {
		size_t k = 1;

		while (k < *n && k < 3 && ((unsigned char)(*s)[*n - k] & 0xc0) == 0x80)
			k++;
		if (jj_ws_len(*s + *n - k, k) != k)
			break;
		*n -= k;
	}
}
