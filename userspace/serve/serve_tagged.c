// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_tagged.c - answers with tagged tool calls split into their parts
 * (serve_tagged.h).
 *
 * The text not yet out is in h->held: in the text of a part, at most the
 * start of a tag (the longest end of it that begins the tag looked for);
 * in a block of calls, the block so far.  Each step takes what it can
 * from the front.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_tagged.h"

enum {
	H_START,	/* the answer's start: <think> may open it */
	H_TEXT,		/* content */
	H_THINK,	/* reasoning, up to </think> */
	H_SPACE,	/* after </think> or a block: its whitespace dropped */
	H_CALL,		/* a block of calls, up to its closing tag */
	H_BARE,		/* an answer that may be a JSON call alone: all held */
};

static const char TAG_THINK[] = "<think>", TAG_THINK_END[] = "</think>";

void tagged_init(struct tagged *h, enum call_family family, const cJSON *tools,
		 int (*emit)(void *arg, enum text_part part, const char *s, size_t n), void *arg)
{
	memset(h, 0, sizeof(*h));
	h->emit = emit;
	h->arg = arg;
	h->family = family;
	h->syn = call_syntax(family);
	h->tools = tools;
	h->state = H_START;
}

void tagged_release(struct tagged *h)
{
	free(h->held.p);
	memset(&h->held, 0, sizeof(h->held));
}

static int out(struct tagged *h, enum text_part part, const char *s, size_t n)
{
	return n ? h->emit(h->arg, part, s, n) : 0;
}

/* Drop the first @n bytes held. */
static void take(struct tagged *h, size_t n)
{
	memmove(h->held.p, h->held.p + n, h->held.n - n);
	h->held.n -= n;
	h->held.p[h->held.n] = 0;
}

/* Where @tag starts in @s (@n bytes), or @n. */
static size_t find(const char *s, size_t n, const char *tag)
{
	const char *at = memmem(s, n, tag, strlen(tag));

	return at ? (size_t)(at - s) : n;
}

/* How many of the bytes held lead with whitespace (strchr's: a NUL too). */
static size_t leading_space(const struct tagged *h)
{
	size_t i;

	for (i = 0; i < h->held.n && strchr(" \t\r\n", h->held.p[i]); i++)
		;
	return i;
}

/* The longest end of @s (@n bytes) that is the start of @tag (shorter than it). */
static size_t tag_start_at_end(const char *s, size_t n, const char *tag)
{
	size_t k = strlen(tag) - 1;

	for (k = k < n ? k : n; k; k--)
		if (!memcmp(s + n - k, tag, k))
			return k;
	return 0;
}

/* @n bytes at @s as content, between @open and @close (either may be NULL). */
static int as_content(struct tagged *h, const char *open, const char *s, size_t n,
		      const char *close)
{
	int r = open ? out(h, PART_CONTENT, open, strlen(open)) : 0;

	if (!r)
		r = out(h, PART_CONTENT, s, n);
	if (!r && close)
		r = out(h, PART_CONTENT, close, strlen(close));
	return r;
}

/*
 * A block of calls (@n bytes held) is done: its calls out, or the block as
 * content with its tags (@open, and @close when it came).
 */
static int end_block(struct tagged *h, size_t n, const char *open, const char *close)
{
	cJSON *calls, *c;
	const char *name, *args;
	int r = call_decode(h->family, h->held.p, n, h->tools, &calls);

	if (r < 0)
		return -1;
	if (r)
		return as_content(h, open, h->held.p, n, close);
	cJSON_ArrayForEach(c, calls) {
		name = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
		args = cJSON_GetObjectItemCaseSensitive(c, "arguments")->valuestring;
		h->n_calls++;
		r = out(h, PART_TOOL_NAME, name, strlen(name));
		if (!r)
			r = out(h, PART_TOOL_ARGS, args, strlen(args));
		if (r)
			break;
	}
	cJSON_Delete(calls);
	return r;
}

/*
 * In a part's text: out up to @tag (then 1: the tag taken), or all but
 * what may be its start (then 0, nothing more to do until more comes).
 */
static int text_until(struct tagged *h, enum text_part part, const char *tag, int *r)
{
	size_t at = find(h->held.p, h->held.n, tag), keep;

	if (at < h->held.n) {
		*r = out(h, part, h->held.p, at);
		take(h, at + strlen(tag));
		return 1;
	}
	keep = tag_start_at_end(h->held.p, h->held.n, tag);
	*r = out(h, part, h->held.p, h->held.n - keep);
	take(h, h->held.n - keep);
	return 0;
}

/* At the answer's start: 1 when what is held may still begin <think> or a bare call. */
static int start(struct tagged *h)
{
	size_t at = strlen(TAG_THINK), i;

	if (h->syn->think) {
		if (h->held.n < at && !memcmp(h->held.p, TAG_THINK, h->held.n))
			return 1;	/* maybe <think>: wait */
		if (!memcmp(h->held.p, TAG_THINK, at)) {
			take(h, at);
			h->state = H_THINK;
			return 0;
		}
	}
	if (h->syn->bare_json && cJSON_GetArraySize(h->tools) > 0) {
		i = leading_space(h);
		if (i == h->held.n)
			return 1;	/* only whitespace yet: wait */
		if (h->held.p[i] == '{') {
			h->state = H_BARE;
			return 1;
		}
	}
	h->state = H_TEXT;
	return 0;
}

/* Take what can be taken: 0, or what @emit returned. */
static int steps(struct tagged *h)
{
	const struct call_syntax *syn = h->syn;
	size_t at;
	int r = 0;

	while (h->held.n && !r) {
		switch (h->state) {
		case H_START:
			if (start(h))
				return 0;
			break;
		case H_THINK:
			if (!text_until(h, PART_REASONING, TAG_THINK_END, &r))
				return r;
			h->state = H_SPACE;
			break;
		case H_SPACE:
			take(h, leading_space(h));
			if (h->held.n)
				h->state = H_TEXT;
			break;
		case H_TEXT:
			if (!text_until(h, PART_CONTENT, syn->open, &r))
				return r;
			h->state = H_CALL;
			break;
		case H_CALL:
			at = syn->close ? find(h->held.p, h->held.n, syn->close) : h->held.n;
			if (at < h->held.n) {
				r = end_block(h, at, syn->open, syn->close);
				take(h, at + strlen(syn->close));
				h->state = H_SPACE;
			} else if (h->held.n > TAGGED_CALL_MAX) {
				/* too long for calls: what it is, as content */
				r = out(h, PART_CONTENT, syn->open, strlen(syn->open));
				h->state = H_TEXT;
			} else {
				return 0;
			}
			break;
		case H_BARE:
			if (h->held.n > TAGGED_CALL_MAX)
				h->state = H_TEXT;
			else
				return 0;
			break;
		}
	}
	return r;
}

int tagged_feed(struct tagged *h, const char *s, size_t n)
{
	if (cb_sbuf_add(&h->held, s, n))
		return -1;
	return steps(h);
}

int tagged_feed_token(struct tagged *h, struct cb_tok_stream *ts, int32_t token, char *piece,
		      size_t cap)
{
	const char *mark;
	size_t len;
	long n;
	int r;

	if (cb_tok_is_special(ts->tok, token)) {
		mark = cb_tok_piece(ts->tok, token, &len);
		if (mark && call_syntax_is_mark(h->syn, mark, len)) {
			n = cb_tok_stream_flush(ts, piece, cap);
			r = n > 0 ? tagged_feed(h, piece, (size_t)n) : 0;
			return r ? r : tagged_feed(h, mark, len);
		}
	}
	n = cb_tok_stream_feed(ts, token, piece, cap);
	return n > 0 ? tagged_feed(h, piece, (size_t)n) : 0;
}

int tagged_end(struct tagged *h)
{
	int r = 0;

	switch (h->state) {
	case H_START:
	case H_TEXT:
		r = out(h, PART_CONTENT, h->held.p, h->held.n);
		break;
	case H_THINK:
		r = out(h, PART_REASONING, h->held.p, h->held.n);
		break;
	case H_CALL:
		r = end_block(h, h->held.n, h->syn->open, NULL);
		break;
	case H_BARE:
		r = end_block(h, h->held.n, NULL, NULL);
		break;
	default:
		break;
	}
	h->held.n = 0;
	return r;
}
