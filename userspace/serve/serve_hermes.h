/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_hermes.h - answers in the Hermes format (Qwen2.5, Qwen3, QwQ,
 * Hermes 2/3 and the templates that copy them) split into reasoning,
 * content and tool calls, piece by piece as their text comes.
 *
 * The model writes a tool call as a JSON object between tags, and Qwen3
 * and QwQ think first between <think> tags:
 *
 *	<think>
 *	THINKING
 *	</think>
 *
 *	ANSWER<tool_call>
 *	{"name": "NAME", "arguments": {...}}
 *	</tool_call>
 *
 * The tags are recognised in the decoded text (they are plain added
 * tokens in these vocabularies, or several ordinary ones), wherever the
 * tokens split them.  <think> counts only at the start of the answer;
 * its text is PART_REASONING.  A call's JSON is held until </tool_call>;
 * an object with a string "name" and "arguments" (an object, or a string
 * holding one) becomes PART_TOOL_NAME then PART_TOOL_ARGS (the arguments
 * as JSON text); anything else between the tags goes out as content, tags
 * and all: no text is lost.  A call still open at the end of the answer
 * counts if its JSON is whole.  Whitespace right after </think> or a call
 * is dropped (the model's layout, not the answer).
 */
#ifndef COLIBRI_SERVE_HERMES_H
#define COLIBRI_SERVE_HERMES_H

#include <stddef.h>

#include "serve_harmony.h"
#include "util/util.h"

/* A call's JSON past this many bytes is not a call (it goes out as content). */
#define HERMES_CALL_MAX		(64u << 10)

/*
 * struct hermes - the parser of one answer.
 * @emit: where the text goes; non-zero stops the parser (returned).
 * @n_calls: tool calls made so far.
 */
struct hermes {
	int (*emit)(void *arg, enum text_part part, const char *s, size_t n);
	void *arg;
	int state;
	struct cb_sbuf held;
	unsigned int n_calls;
};

void hermes_init(struct hermes *h,
		 int (*emit)(void *arg, enum text_part part, const char *s, size_t n), void *arg);
/* @n more bytes of the answer: 0, what @emit returned, or -1 (out of memory). */
int hermes_feed(struct hermes *h, const char *s, size_t n);
/* The end of the answer: what is held goes out. */
int hermes_end(struct hermes *h);
void hermes_release(struct hermes *h);

#endif /* COLIBRI_SERVE_HERMES_H */
