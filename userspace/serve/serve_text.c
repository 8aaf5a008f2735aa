// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_text.c - a generation's tokens into its answer's text
 * (serve_text.h).
 */
#include <stdlib.h>
#include <string.h>

#include "serve_text.h"

/* @n bytes of content through the stop strings to the sink: 1 to stop. */
static int pass_content(struct gen_text *t, const char *s, size_t n)
{
	int hit;
	size_t k = stop_feed(&t->sm, s, n, t->out, &hit);

	if (k && t->sink->text(t->sink->arg, PART_CONTENT, t->out, k)) {
		t->gone = 1;
		return 1;
	}
	if (hit)
		t->stopped = 1;
	return hit;
}

/* A parser's output: content through the stop strings, the rest as it is. */
static int parts_out(void *arg, enum text_part part, const char *s, size_t n)
{
	struct gen_text *t = arg;

	if (part == PART_CONTENT)
		return pass_content(t, s, n);
	if (t->sink->text(t->sink->arg, part, s, n)) {
		t->gone = 1;
		return 1;
	}
	return 0;
}

int gen_text_init(struct gen_text *t, const struct cb_tokenizer *tok, int format, int at_start,
		  const struct stop_strings *ss, const struct gen_sink *sink)
{
	memset(t, 0, sizeof(*t));
	t->sink = sink;
	t->format = format;
	t->piece_cap = cb_tok_stream_cap(tok);
	t->piece = malloc(t->piece_cap);
	/* content comes a token's text at a time, or a header that was none */
	t->out = malloc(t->piece_cap + HARMONY_HEAD_MAX + STOP_LEN_MAX);
	if (!t->piece || !t->out ||
	    (format == FORMAT_HARMONY && harmony_init(&t->hm, tok, parts_out, t))) {
		gen_text_release(t);
		return -1;
	}
	if (format == FORMAT_HERMES)
		hermes_init(&t->he, parts_out, t);
	cb_tok_stream_init(&t->ts, tok, CB_TOK_SKIP_SPECIAL);
	t->ts.at_start = at_start;
	stop_match_init(&t->sm, ss);
	return 0;
}

void gen_text_release(struct gen_text *t)
{
	if (t->format == FORMAT_HARMONY)
		harmony_release(&t->hm);
	if (t->format == FORMAT_HERMES)
		hermes_release(&t->he);
	free(t->piece);
	free(t->out);
	t->piece = NULL;
	t->out = NULL;
}

int gen_text_feed(struct gen_text *t, int32_t token)
{
	long n;
	int r;

	if (t->format == FORMAT_HARMONY)
		return harmony_feed(&t->hm, token) ? 1 : 0;
	n = cb_tok_stream_feed(&t->ts, token, t->piece, t->piece_cap);
	if (n <= 0)
		return 0;
	if (t->format == FORMAT_HERMES) {
		r = hermes_feed(&t->he, t->piece, (size_t)n);
		if (r < 0)
			t->gone = 1;	/* out of memory: end as if the client left */
		return r ? 1 : 0;
	}
	return pass_content(t, t->piece, (size_t)n);
}

void gen_text_end(struct gen_text *t)
{
	size_t k;
	long n;

	if (t->format == FORMAT_HARMONY) {
		if (harmony_end(&t->hm))
			return;
	} else {
		n = cb_tok_stream_flush(&t->ts, t->piece, t->piece_cap);
		if (t->format == FORMAT_HERMES) {
			if ((n > 0 && hermes_feed(&t->he, t->piece, (size_t)n)) || hermes_end(&t->he))
				return;
		} else if (n > 0 && pass_content(t, t->piece, (size_t)n)) {
			return;
		}
	}
	k = stop_flush(&t->sm, t->out);
	if (k && t->sink->text(t->sink->arg, PART_CONTENT, t->out, k))
		t->gone = 1;
}

const char *gen_text_finish(const struct gen_text *t, const char *finish)
{
	if (t->stopped)
		return "stop";
	if (gen_text_calls(t) && !strcmp(finish, "stop"))
		return "tool_calls";
	return finish;
}
