// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_stop.c - stop strings matched across token boundaries
 * (serve_stop.h).
 *
 * The text seen so far but not sent is the held bytes plus the new piece.
 * A stop string found in it ends the text where it starts.  Of several,
 * the one completed first wins (the earliest end; of those, the earliest
 * start), as if the text had come byte by byte: generation stops when a
 * stop string is complete, so a longer one that began before it but
 * would end after it never is.  That makes the result the same however
 * the text is cut into tokens.  With none found, everything is sent
 * except its longest suffix that is the beginning of some stop string:
 * no stop string can start earlier, since it would either lie whole in
 * the text (and have been found) or run past its end (and so start a
 * suffix of it that begins a stop string, a longer one than that held).
 */
#include <string.h>

#include "serve_stop.h"

void stop_match_init(struct stop_match *m, const struct stop_strings *ss)
{
	m->ss = ss;
	m->held = 0;
}

/* The longest suffix of @t[@n] that is a proper prefix of a stop string. */
static size_t longest_held(const struct stop_strings *ss, const char *t, size_t n)
{
	size_t best = 0, h;
	unsigned int i;

	for (i = 0; i < ss->n; i++)
		for (h = ss->len[i] - 1 < n ? ss->len[i] - 1 : n; h > best; h--)
			if (!memcmp(t + n - h, ss->s[i], h)) {
				best = h;
				break;
			}
	return best;
}

size_t stop_feed(struct stop_match *m, const char *s, size_t n, char *out, int *hit)
{
	const struct stop_strings *ss = m->ss;
	size_t total = m->held + n, cut = 0, end = 0, keep;
	unsigned int i;

	*hit = 0;
	memcpy(out, m->hold, m->held);
	memcpy(out + m->held, s, n);
	for (i = 0; i < ss->n; i++) {
		const char *p = memmem(out, total, ss->s[i], ss->len[i]);
		size_t at = p ? (size_t)(p - out) : 0;

		if (p && (!*hit || at + ss->len[i] < end || (at + ss->len[i] == end && at < cut))) {
			cut = at;
			end = at + ss->len[i];
			*hit = 1;
		}
	}
	if (*hit) {
		m->held = 0;
		return cut;
	}
	keep = longest_held(ss, out, total);
	memcpy(m->hold, out + total - keep, keep);
	m->held = keep;
	return total - keep;
}

size_t stop_flush(struct stop_match *m, char *out)
{
	size_t n = m->held;

	memcpy(out, m->hold, n);
	m->held = 0;
	return n;
}
