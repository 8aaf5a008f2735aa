/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_harmony.h - GPT-OSS's harmony answers split into their channels,
 * token by token, as they are generated.
 *
 * An answer in harmony, after the prompt's <|start|>assistant, is one or
 * more messages, each a header, <|message|>, a body and its end:
 *
 *	<|channel|>analysis<|message|>THINKING<|end|>
 *	<|start|>assistant<|channel|>final<|message|>ANSWER<|return|>
 *	<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json
 *		<|message|>ARGS<|call|>
 *
 * (the recipient to=... may stand in the role part of the header too:
 * <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>).
 * Harmony's tokens are recognised by id; the text of the others is
 * decoded.  A header is held until its <|message|>, then the body's text
 * goes out as it comes, as a part:
 *
 *   a recipient (to=R)       a tool call: PART_TOOL_NAME (R without
 *                            "functions."), then PART_TOOL_ARGS
 *   channel analysis         PART_REASONING
 *   final, commentary, other PART_CONTENT (commentary without a recipient
 *                            is a preamble meant for the user)
 *
 * Malformed answers lose no text and show no marker: text where a header
 * should be that never reaches its <|message|> (an end, a <|start|>, more
 * than HARMONY_HEAD_MAX bytes, the end of the answer) is content; a
 * <|start|> or <|channel|> inside a body ends that message; a <|message|>
 * or <|constrain|> inside a body, and other special tokens anywhere, are
 * dropped.
 */
#ifndef COLIBRI_SERVE_HARMONY_H
#define COLIBRI_SERVE_HARMONY_H

#include <stddef.h>
#include <stdint.h>

#include "tokenizer.h"

struct cb_tokenizer;

/* What a piece of an answer's text is. */
enum text_part {
	PART_CONTENT,		/* the answer ("content") */
	PART_REASONING,		/* the chain of thought ("reasoning_content") */
	PART_TOOL_NAME,		/* a tool call begins: the function's name */
	PART_TOOL_ARGS,		/* more of its arguments */
};

/* Header bytes past which text is not a header. */
#define HARMONY_HEAD_MAX	256

/* Harmony's token ids in a vocabulary (-1: absent). */
struct harmony_ids {
	int32_t start, channel, message, end, ret, call, constrain;
};

/*
 * harmony_ids() - @tok's harmony tokens into @id: 0, or -1 when one of
 * <|start|> <|channel|> <|message|> <|end|> <|return|> <|call|> is missing
 * (<|constrain|> may be).
 */
int harmony_ids(const struct cb_tokenizer *tok, struct harmony_ids *id);

/*
 * struct harmony - the parser of one answer.
 * @emit: where the text goes; non-zero stops the parser (harmony_feed()
 *	returns it).
 * @n_calls: tool calls begun so far.
 */
struct harmony {
	const struct cb_tokenizer *tok;
	struct harmony_ids id;
	int (*emit)(void *arg, enum text_part part, const char *s, size_t n);
	void *arg;
	int in_body;			/* else in a header */
	enum text_part part;		/* of the body */
	struct cb_tok_stream ts;	/* the body's text */
	size_t n_head;
	long chan_at;			/* where the channel part of the header begins, or -1 */
	char head[HARMONY_HEAD_MAX + 8];
	char *piece;
	size_t cap;
	unsigned int n_calls;
};

/* 0, or -1 (no harmony vocabulary, or out of memory). */
int harmony_init(struct harmony *h, const struct cb_tokenizer *tok,
		 int (*emit)(void *arg, enum text_part part, const char *s, size_t n), void *arg);
/* One more generated token: 0, or what @emit returned when not 0. */
int harmony_feed(struct harmony *h, int32_t token);
/* The end of the answer: held text out (a header never closed is content). */
int harmony_end(struct harmony *h);
void harmony_release(struct harmony *h);

#endif /* COLIBRI_SERVE_HARMONY_H */
