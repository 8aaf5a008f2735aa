/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_text.h - a generation's tokens into the text of its answer: the
 * streaming decoder, harmony's channels (GPT-OSS, serve_harmony.h) and
 * the stop strings (serve_stop.h), out to a sink piece by piece.
 *
 * A plain answer is all content: each token's text (whole UTF-8
 * characters, special tokens left out) through the stop strings.  With
 * harmony (by token) or the Hermes tags (by text) a parser splits the
 * answer into content, reasoning and tool calls; only the content goes
 * through the stop strings (held bytes of a possible stop string are sent
 * at the end, after any other part).
 */
#ifndef COLIBRI_SERVE_TEXT_H
#define COLIBRI_SERVE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "serve_harmony.h"
#include "serve_tagged.h"
#include "serve_stop.h"
#include "tokenizer.h"

/* How a chat answer is split into parts (a completion's is plain). */
enum answer_format {
	FORMAT_PLAIN,		/* all of it content */
	FORMAT_HARMONY,		/* GPT-OSS's channels, by token (serve_harmony.h) */
	FORMAT_TAGGED,		/* + enum call_family: tags, by text (serve_tagged.h) */
};

static inline int format_tagged(int format)
{
	return format >= FORMAT_TAGGED;
}

static inline enum call_family format_family(int format)
{
	return (enum call_family)(format - FORMAT_TAGGED);
}

/*
 * Where the text goes, piece by piece as it is made (stop strings taken
 * out): non-zero stops the generation (the client went away).  A
 * PART_TOOL_NAME piece begins a new tool call; PART_TOOL_ARGS pieces
 * belong to the last one begun.
 */
struct gen_sink {
	int (*text)(void *arg, enum text_part part, const char *s, size_t n);
	void *arg;
};

/*
 * struct gen_text - one answer's text.
 * @gone: the sink said stop.
 * @stopped: a stop string came (nothing after it was sent).
 */
struct gen_text {
	const struct gen_sink *sink;
	struct cb_tok_stream ts;
	struct stop_match sm;
	struct harmony hm;
	struct tagged tg;
	int format;
	char *piece, *out;
	size_t piece_cap;
	int gone, stopped;
};

/*
 * gen_text_init() - for the answer of @tok's model, split as @format says
 * (enum answer_format); @at_start: the answer starts afresh (a completion
 * continues its prompt: 0); @tools: the request's (tagged formats read
 * GLM's arguments by them), or NULL.  0, or -1 (out of memory, or no
 * harmony vocabulary).
 */
int gen_text_init(struct gen_text *t, const struct cb_tokenizer *tok, int format, int at_start,
		  const cJSON *tools, const struct stop_strings *ss, const struct gen_sink *sink);
/* One more generated token: 1 when the answer must stop (@gone or @stopped). */
int gen_text_feed(struct gen_text *t, int32_t token);
/* The end of the answer (not after a stop): what the decoder and the matcher hold. */
void gen_text_end(struct gen_text *t);
void gen_text_release(struct gen_text *t);
/*
 * gen_text_finish() - the finish_reason of the answer, given the
 * generation's own (@finish: "stop" or "length"): "stop" after a stop
 * string, "tool_calls" when the model called a tool and stopped for its
 * result.
 */
const char *gen_text_finish(const struct gen_text *t, const char *finish);
/* Tool calls begun. */
static inline unsigned int gen_text_calls(const struct gen_text *t)
{
	return t->format == FORMAT_HARMONY ? t->hm.n_calls :
	       format_tagged(t->format) ? t->tg.n_calls : 0;
}

#endif /* COLIBRI_SERVE_TEXT_H */
