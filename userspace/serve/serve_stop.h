/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_stop.h - stop strings, matched in generated text across token
 * boundaries.  The text before the first stop string is sent, the stop
 * string and everything after it never are.
 *
 *	struct stop_match m;
 *	stop_match_init(&m, &stops);
 *	for each piece of text:
 *		n = stop_feed(&m, piece, len, out, &hit);  // send out[0..n)
 *		if (hit) break;                             // a stop string came
 *	n = stop_flush(&m, out);                            // the end: send the rest
 *
 * A piece may end inside a stop string: the bytes that could be its start
 * are held back until the next piece says whether it is one.  The text
 * ends at the first stop string to be completed, however the text is cut
 * into pieces.  Text is
 * held only while it is a prefix of a stop string, and the first byte of
 * a stop string starts a UTF-8 character, so what is sent is always whole
 * characters when the pieces are.
 */
#ifndef COLIBRI_SERVE_STOP_H
#define COLIBRI_SERVE_STOP_H

#include <stddef.h>

/* OpenAI's limit: up to four stop strings. */
#define STOP_MAX	4
/* The longest stop string, in bytes. */
#define STOP_LEN_MAX	256

struct stop_strings {
	unsigned int n;
	size_t len[STOP_MAX];
	char s[STOP_MAX][STOP_LEN_MAX];
};

struct stop_match {
	const struct stop_strings *ss;
	size_t held;
	char hold[STOP_LEN_MAX];	/* a prefix of a stop string, never a whole one */
};

void stop_match_init(struct stop_match *m, const struct stop_strings *ss);

/*
 * stop_feed() - @n more bytes of text.  Writes to @out (room for
 * STOP_LEN_MAX + @n bytes) the text that can be sent now and returns its
 * length; *@hit is 1 when a stop string was completed (@out ends just
 * before it; nothing more may be fed), else 0.
 */
size_t stop_feed(struct stop_match *m, const char *s, size_t n, char *out, int *hit);

/* The end of the text, no stop string came: the held bytes into @out. */
size_t stop_flush(struct stop_match *m, char *out);

#endif /* COLIBRI_SERVE_STOP_H */
