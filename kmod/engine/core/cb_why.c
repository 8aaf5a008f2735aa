// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_why.c - a minimal formatter for the reason line of a refusal: no
 * libc, no kernel, integers only (see cb_why.h).
 */
#include "core/cb_why.h"

struct why_buf {
	char *p;
	cb_u32 len;
	cb_u32 pos;
};

static void why_putc(struct why_buf *b, char c)
{
	if (b->pos + 1 < b->len)
		b->p[b->pos++] = c;
}

static void why_putu(struct why_buf *b, cb_u64 v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		why_putc(b, tmp[--n]);
}

int cb_why(char *why, cb_u32 whylen, int err, const char *fmt, ...)
{
	struct why_buf b = { why, whylen, 0 };
	__builtin_va_list ap;
	const char *s;
	int d;

	if (!why || !whylen)
		return err;
	__builtin_va_start(ap, fmt);
	for (; *fmt; fmt++) {
		if (*fmt != '%' || !fmt[1]) {
			why_putc(&b, *fmt);
			continue;
		}
		switch (*++fmt) {
		case 's':
			for (s = __builtin_va_arg(ap, const char *); s && *s; s++)
				why_putc(&b, *s);
			break;
		case 'u':
			why_putu(&b, __builtin_va_arg(ap, cb_u32));
			break;
		case 'L':
			why_putu(&b, __builtin_va_arg(ap, cb_u64));
			break;
		case 'd':
			d = __builtin_va_arg(ap, int);
			if (d < 0) {
				why_putc(&b, '-');
				why_putu(&b, -(cb_s64)d);
			} else {
				why_putu(&b, (cb_u64)d);
			}
			break;
		default:
			why_putc(&b, *fmt);
		}
	}
	__builtin_va_end(ap);
	b.p[b.pos] = 0;
	return err;
}
