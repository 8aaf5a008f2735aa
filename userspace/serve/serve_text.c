// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_text.c - a generation's tokens into its answer's text
 * (serve_text.h).
 */
#include <stdlib.h>
#include <string.h>

#include "serve_text.h"

/*
 * @n bytes of content through the stop strings to the sink: 1 to stop.
 * In pieces that @out holds: a parser may give a whole block it did not
 * read as calls (up to TAGGED_CALL_MAX) at once.
 */
static int pass_content(struct gen_text *t, const char *s, size_t n)
{
	size_t k, step;
	int hit = 0;

	while (n && !hit) {
		step = n < t->piece_cap ? n : t->piece_cap;
		k = stop_feed(&t->sm, s, step, t->out, &hit);
		if (k && t->sink->text(t->sink->arg, PART_CONTENT, t->out, k)) {
			t->gone = 1;
			return 1;
		}
		s += step;
		n -= step;
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
		  const cJSON *tools, const struct stop_strings *ss, const struct gen_sink *sink)
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
	if (format_tagged(format))
		tagged_init(&t->tg, format_family(format), tools, parts_out, t);
	cb_tok_stream_init(&t->ts, tok, CB_TOK_SKIP_SPECIAL);
	t->ts.at_start = at_start;
	stop_match_init(&t->sm, ss);
	return 0;
}

void gen_text_release(struct gen_text *t)
{
	if (t->format == FORMAT_HARMONY)
		harmony_release(&t->hm);
	if (format_tagged(t->format))
		tagged_release(&t->tg);
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
	if (format_tagged(t->format)) {
		r = tagged_feed_token(&t->tg, &t->ts, token, t->piece, t->piece_cap);
		if (r < 0)
			t->gone = 1;	/* out of memory: end as if the client left */
		return r ? 1 : 0;
	}
	n = cb_tok_stream_feed(&t->ts, token, t->piece, t->piece_cap);
	if (n <= 0)
		return 0;
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
		if (format_tagged(t->format)) {
			if ((n > 0 && tagged_feed(&t->tg, t->piece, (size_t)n)) ||
			    tagged_end(&t->tg))
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
