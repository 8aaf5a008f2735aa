/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_tagged.h - answers whose tool calls are tagged text (every
 * family of serve_call_syntax.h: Hermes, Llama 3.x, Mistral, DeepSeek,
 * GLM) split into reasoning, content and tool calls, piece by piece as
 * their text comes.
 *
 * For example a Hermes answer (Qwen3 thinks first, between <think> tags):
 *
 *	<think>
 *	THINKING
 *	</think>
 *
 *	ANSWER<tool_call>
 *	{"name": "NAME", "arguments": {...}}
 *	</tool_call>
 *
 * The tags are recognised in the decoded text wherever the tokens split
 * them.  <think> counts only at the start of the answer; its text is
 * PART_REASONING.  A block of calls is held until its family's closing
 * tag (or the end of the answer, for the families that have none) and
 * read by call_decode(): calls become PART_TOOL_NAME then PART_TOOL_ARGS
 * (the arguments as JSON text) each; anything else goes out as content,
 * tags and all: no text is lost.  A block still open at the end of the
 * answer counts if it reads whole.  Llama 3.x's answer that is a JSON call
 * alone is held whole when the request has tools, and is a call if it
 * reads as one.  Whitespace right
 * after </think> or a block is dropped (the model's layout, not the
 * answer).
 */
#ifndef COLIBRI_SERVE_TAGGED_H
#define COLIBRI_SERVE_TAGGED_H

#include <stddef.h>

#include <cJSON.h>

#include "serve_call_syntax.h"
#include "serve_harmony.h"
#include "tokenizer.h"
#include "util/util.h"

/* A block of calls past this many bytes is not one (it goes out as content). */
#define TAGGED_CALL_MAX		(64u << 10)

/*
 * struct tagged - the parser of one answer.
 * @emit: where the text goes; non-zero stops the parser (returned).
 * @n_calls: tool calls made so far.
 */
struct tagged {
	int (*emit)(void *arg, enum text_part part, const char *s, size_t n);
	void *arg;
	enum call_family family;
	const struct call_syntax *syn;
	const cJSON *tools;
	int state;
	struct cb_sbuf held;
	unsigned int n_calls;
};

/* For @family's answers; @tools: the request's (GLM's string arguments), or NULL. */
void tagged_init(struct tagged *h, enum call_family family, const cJSON *tools,
		 int (*emit)(void *arg, enum text_part part, const char *s, size_t n), void *arg);
/* @n more bytes of the answer: 0, what @emit returned, or -1 (out of memory). */
int tagged_feed(struct tagged *h, const char *s, size_t n);
/*
 * tagged_feed_token() - one more token of the answer, decoded by @ts into
 * @piece (@cap bytes, cb_tok_stream_cap()); a special token that is one
 * of the family's tags goes in as its text.  As tagged_feed().
 */
int tagged_feed_token(struct tagged *h, struct cb_tok_stream *ts, int32_t token, char *piece,
		      size_t cap);
/* The end of the answer: what is held goes out. */
int tagged_end(struct tagged *h);
void tagged_release(struct tagged *h);

#endif /* COLIBRI_SERVE_TAGGED_H */
