// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_hermes.c - Hermes-format answers split into their parts
 * (serve_hermes.h).
 *
 * The text not yet out is in h->held: in the text of a part, at most the
 * start of a tag (the longest end of it that begins the tag looked for);
 * in a call, its JSON so far.  Each step takes what it can from the front.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "serve_hermes.h"

enum {
	H_START,	/* the answer's start: <think> may open it */
	H_TEXT,		/* content */
	H_THINK,	/* reasoning, up to </think> */
	H_SPACE,	/* after </think> or a call: its whitespace dropped */
	H_CALL,		/* a call's JSON, up to </tool_call> */
};

static const char TAG_THINK[] = "<think>", TAG_THINK_END[] = "</think>";
static const char TAG_CALL[] = "<tool_call>", TAG_CALL_END[] = "</tool_call>";

void hermes_init(struct hermes *h,
		 int (*emit)(void *arg, enum text_part part, const char *s, size_t n), void *arg)
{
	memset(h, 0, sizeof(*h));
	h->emit = emit;
	h->arg = arg;
	h->state = H_START;
}

void hermes_release(struct hermes *h)
{
	free(h->held.p);
	memset(&h->held, 0, sizeof(h->held));
}

static int out(struct hermes *h, enum text_part part, const char *s, size_t n)
{
	return n ? h->emit(h->arg, part, s, n) : 0;
}

/* Drop the first @n bytes held. */
static void take(struct hermes *h, size_t n)
{
	memmove(h->held.p, h->held.p + n, h->held.n - n);
	h->held.n -= n;
	h->held.p[h->held.n] = 0;
}

/* Where @tag starts in @s (@n bytes), or @n. */
static size_t find(const char *s, size_t n, const char *tag)
{
	size_t t = strlen(tag), i;

	for (i = 0; i + t <= n; i++)
		if (s[i] == tag[0] && !memcmp(s + i, tag, t))
			return i;
	return n;
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

/* A string's text, or NULL. */
static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * The JSON of a call (@n bytes at @s): the call made, 1 if it is not one,
 * or what @emit returned (non-zero, negative for out of memory).
 */
static int make_call(struct hermes *h, const char *s, size_t n)
{
	cJSON *o = cJSON_ParseWithLength(s, n), *args;
	const char *name = str_of(o, "name");
	char *text = NULL;
	int r = 1;

	args = cJSON_GetObjectItemCaseSensitive(o, "arguments");
	if (!args)
		args = cJSON_GetObjectItemCaseSensitive(o, "parameters");
	if (!cJSON_IsObject(o) || !name || !name[0] || !args)
		goto out;
	if (cJSON_IsObject(args)) {
		text = cJSON_PrintUnformatted(args);
		if (!text) {
			r = -1;
			goto out;
		}
	} else if (cJSON_IsString(args)) {
		/* arguments already as JSON text (some templates write them so) */
		cJSON *inner = cJSON_Parse(args->valuestring);
		int is_obj = cJSON_IsObject(inner);

		cJSON_Delete(inner);
		if (!is_obj)
			goto out;
		text = strdup(args->valuestring);
		if (!text) {
			r = -1;
			goto out;
		}
	} else {
		goto out;
	}
	h->n_calls++;
	r = out(h, PART_TOOL_NAME, name, strlen(name));
	if (!r)
		r = out(h, PART_TOOL_ARGS, text, strlen(text));
out:
	free(text);
	cJSON_Delete(o);
	return r;
}

/* A call's JSON (@n bytes held) is done: a call, or content with its tags. */
static int end_call(struct hermes *h, size_t n, int closed)
{
	int r = make_call(h, h->held.p, n);

	if (r == 1) {
		r = out(h, PART_CONTENT, TAG_CALL, strlen(TAG_CALL));
		if (!r)
			r = out(h, PART_CONTENT, h->held.p, n);
		if (!r && closed)
			r = out(h, PART_CONTENT, TAG_CALL_END, strlen(TAG_CALL_END));
	}
	return r;
}

/*
 * In a part's text: out up to @tag (then 1: the tag taken), or all but
 * what may be its start (then 0, nothing more to do until more comes).
 */
static int text_until(struct hermes *h, enum text_part part, const char *tag, int *r)
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

/* Take what can be taken: 0, or what @emit returned. */
static int steps(struct hermes *h)
{
	size_t at, i;
	int r = 0;

	while (h->held.n && !r) {
		switch (h->state) {
		case H_START:
			at = strlen(TAG_THINK);
			if (h->held.n < at && !memcmp(h->held.p, TAG_THINK, h->held.n))
				return 0;	/* maybe <think>: wait */
			if (!memcmp(h->held.p, TAG_THINK, at)) {
				take(h, at);
				h->state = H_THINK;
			} else {
				h->state = H_TEXT;
			}
			break;
		case H_THINK:
			if (!text_until(h, PART_REASONING, TAG_THINK_END, &r))
				return r;
			h->state = H_SPACE;
			break;
		case H_SPACE:
			for (i = 0; i < h->held.n && strchr(" \t\r\n", h->held.p[i]); i++)
				;
			take(h, i);
			if (h->held.n)
				h->state = H_TEXT;
			break;
		case H_TEXT:
			if (!text_until(h, PART_CONTENT, TAG_CALL, &r))
				return r;
			h->state = H_CALL;
			break;
		case H_CALL:
			at = find(h->held.p, h->held.n, TAG_CALL_END);
			if (at < h->held.n) {
				r = end_call(h, at, 1);
				take(h, at + strlen(TAG_CALL_END));
				h->state = H_SPACE;
			} else if (h->held.n > HERMES_CALL_MAX) {
				/* too long for a call: what it is, as content */
				r = out(h, PART_CONTENT, TAG_CALL, strlen(TAG_CALL));
				h->state = H_TEXT;
			} else {
				return 0;
			}
			break;
		}
	}
	return r;
}

int hermes_feed(struct hermes *h, const char *s, size_t n)
{
	if (cb_sbuf_add(&h->held, s, n))
		return -1;
	return steps(h);
}

int hermes_end(struct hermes *h)
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
		r = end_call(h, h->held.n, 0);
		break;
	default:
		break;
	}
	h->held.n = 0;
	return r;
}
