// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_harmony.c - a harmony answer split into its channels as it is
 * generated (serve_harmony.h).
 *
 * Two states: in a header (its text held in ->head, ->chan_at marking
 * where <|channel|> came) or in a body (its text through a streaming
 * decoder to ->emit).  An answer starts in a header: the prompt ended with
 * <|start|>assistant.
 */
#include <stdlib.h>
#include <string.h>

#include "serve_harmony.h"
#include "tokenizer.h"

/* In a held header, where <|channel|> or <|constrain|> came: a word ends. */
#define HEAD_SEP	((char)1)

static int32_t id_of(const struct cb_tokenizer *tok, const char *s)
{
	int32_t id = cb_tok_token_id(tok, s, strlen(s));

	return id >= 0 && cb_tok_is_special(tok, id) ? id : -1;
}

int harmony_ids(const struct cb_tokenizer *tok, struct harmony_ids *id)
{
	id->start = id_of(tok, "<|start|>");
	id->channel = id_of(tok, "<|channel|>");
	id->message = id_of(tok, "<|message|>");
	id->end = id_of(tok, "<|end|>");
	id->ret = id_of(tok, "<|return|>");
	id->call = id_of(tok, "<|call|>");
	id->constrain = id_of(tok, "<|constrain|>");
	return id->start < 0 || id->channel < 0 || id->message < 0 || id->end < 0 ||
	       id->ret < 0 || id->call < 0 ? -1 : 0;
}

static void new_header(struct harmony *h)
{
	h->in_body = 0;
	h->n_head = 0;
	h->chan_at = -1;
	cb_tok_stream_init(&h->ts, h->tok, CB_TOK_SKIP_SPECIAL);
}

static void begin_body(struct harmony *h, enum text_part part)
{
	h->in_body = 1;
	h->part = part;
	cb_tok_stream_init(&h->ts, h->tok, CB_TOK_SKIP_SPECIAL);
}

/* The decoder's held bytes (of an unfinished character) out as @part. */
static int flush_decoder(struct harmony *h, enum text_part part)
{
	long n = cb_tok_stream_flush(&h->ts, h->piece, h->cap);

	return n > 0 ? h->emit(h->arg, part, h->piece, (size_t)n) : 0;
}

/* The held header text as content, without the separators it holds for harmony's tokens. */
static int emit_head(struct harmony *h)
{
	size_t i, k = 0;

	for (i = 0; i < h->n_head; i++)
		if (h->head[i] != HEAD_SEP)
			h->head[k++] = h->head[i];
	h->n_head = 0;
	return k ? h->emit(h->arg, PART_CONTENT, h->head, k) : 0;
}

/* The held header text was no header: it is content; a header comes next. */
static int head_as_content(struct harmony *h)
{
	int ret = emit_head(h);

	ret = ret ? ret : flush_decoder(h, PART_CONTENT);
	new_header(h);
	return ret;
}

/* The body ends: the decoder's held bytes out; a header comes next. */
static int end_body(struct harmony *h)
{
	int ret = flush_decoder(h, h->part);

	new_header(h);
	return ret;
}

static int is_space(char c)
{
	return c == HEAD_SEP || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The first word of @s[@n] that does (@to) or does not
 * start with "to=": its start, its length in *@len; NULL when none.
 */
static const char *word(const char *s, size_t n, int to, size_t *len)
{
	size_t i = 0, j;

	for (;;) {
		while (i < n && is_space(s[i]))
			i++;
		if (i == n)
			return NULL;
		for (j = i; j < n && !is_space(s[j]); j++)
			;
		if ((j - i > 3 && !memcmp(s + i, "to=", 3)) == !!to) {
			*len = j - i;
			return s + i;
		}
		i = j;
	}
}

/* <|message|>: what the header says the body is. */
static int end_header(struct harmony *h)
{
	size_t nc = 0, nr = 0, c0 = h->chan_at < 0 ? h->n_head : (size_t)h->chan_at;
	const char *chan = NULL, *to = word(h->head, h->n_head, 1, &nr);

	if (h->chan_at >= 0)
		chan = word(h->head + c0, h->n_head - c0, 0, &nc);
	new_header(h);
	if (to) {
		to += 3;
		nr -= 3;
		if (nr > 10 && !memcmp(to, "functions.", 10)) {
			to += 10;
			nr -= 10;
		}
		begin_body(h, PART_TOOL_ARGS);
		h->n_calls++;
		return h->emit(h->arg, PART_TOOL_NAME, to, nr);
	}
	begin_body(h, chan && nc == 8 && !memcmp(chan, "analysis", 8) ? PART_REASONING :
		   PART_CONTENT);
	return 0;
}

/* Text in a header: held (@s NULL: a separator, for <|channel|> and <|constrain|>). */
static int head_add(struct harmony *h, const char *s, size_t n)
{
	int ret;

	if (!s) {
		s = "\x01";
		n = 1;
	}
	if (h->n_head + n > HARMONY_HEAD_MAX) {
		/* no header is that long: it was content, and so is the rest */
		ret = emit_head(h);
		h->in_body = 1;		/* the decoder goes on */
		h->part = PART_CONTENT;
		return ret || *s == HEAD_SEP ? ret : h->emit(h->arg, PART_CONTENT, s, n);
	}
	memcpy(h->head + h->n_head, s, n);
	h->n_head += n;
	return 0;
}

static int feed_header(struct harmony *h, int32_t t)
{
	long n;

	if (t == h->id.message)
		return end_header(h);
	if (t == h->id.channel) {
		if (h->chan_at < 0)
			h->chan_at = (long)h->n_head;
		return head_add(h, NULL, 0);
	}
	if (t == h->id.constrain)
		return head_add(h, NULL, 0);
	if (t == h->id.start || t == h->id.end || t == h->id.ret || t == h->id.call)
		return head_as_content(h);
	n = cb_tok_stream_feed(&h->ts, t, h->piece, h->cap);
	return n > 0 ? head_add(h, h->piece, (size_t)n) : 0;
}

static int feed_body(struct harmony *h, int32_t t)
{
	int ret;
	long n;

	if (t == h->id.end || t == h->id.ret || t == h->id.call || t == h->id.start)
		return end_body(h);
	if (t == h->id.channel) {
		/* a new message whose <|end|><|start|>assistant was left out */
		ret = end_body(h);
		h->chan_at = 0;
		return ret ? ret : head_add(h, NULL, 0);
	}
	if (t == h->id.message || t == h->id.constrain)
		return 0;
	n = cb_tok_stream_feed(&h->ts, t, h->piece, h->cap);
	return n > 0 ? h->emit(h->arg, h->part, h->piece, (size_t)n) : 0;
}

int harmony_feed(struct harmony *h, int32_t token)
{
	return h->in_body ? feed_body(h, token) : feed_header(h, token);
}

int harmony_end(struct harmony *h)
{
	return h->in_body ? end_body(h) : head_as_content(h);
}

int harmony_init(struct harmony *h, const struct cb_tokenizer *tok,
		 int (*emit)(void *arg, enum text_part part, const char *s, size_t n), void *arg)
{
	memset(h, 0, sizeof(*h));
	h->tok = tok;
	h->emit = emit;
	h->arg = arg;
	if (harmony_ids(tok, &h->id))
		return -1;
	h->cap = cb_tok_stream_cap(tok);
	h->piece = malloc(h->cap);
	if (!h->piece)
		return -1;
	new_header(h);
	return 0;
}

void harmony_release(struct harmony *h)
{
	free(h->piece);
	h->piece = NULL;
}
