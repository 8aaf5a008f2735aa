/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_ollama.h - the Ollama API over the same generations
 * (docs/serve.md, "The Ollama API"): /api/chat and /api/generate, their
 * answers whole or as NDJSON lines, /api/tags, /api/show, /api/version.
 *
 * A request is translated into the OpenAI request it means (messages,
 * tools, options as temperature, top_p, top_k, seed, max_tokens, stop)
 * and checked by gen_req_parse(), so both APIs take the same things the
 * same way.  What Ollama has and this server does not (images, "format",
 * a template or raw context, sampling options away from their neutral
 * value) is refused with 400; what only tunes Ollama's own runner
 * (num_ctx, num_thread, keep_alive, ...) is accepted and not used; other
 * unknown members are ignored, as Ollama's JSON decoding does.
 */
#ifndef COLIBRI_SERVE_OLLAMA_H
#define COLIBRI_SERVE_OLLAMA_H

#include <stddef.h>
#include <stdint.h>

#include "serve.h"

/*
 * ollama_req_parse() - @body of a request to /api/chat (@api
 * API_OLLAMA_CHAT) or /api/generate (API_OLLAMA_GENERATE) into @r.
 * 0, or -1 with @e.
 */
int ollama_req_parse(struct gen_req *r, enum serve_api api, const char *body, size_t len,
		     uint32_t vocab_size, struct api_error *e);

/* Whether @model names the served model (NAME, or NAME:latest as Ollama lists it). */
int ollama_model_is(const struct serve *srv, const char *model);

/* {"error": "..."}: Ollama's error body (malloc'ed, or NULL). */
char *ollama_error(const char *msg);

/* The whole answer of a request with "stream": false. */
char *ollama_answer(const struct serve *srv, const struct gen_req *r,
		    const struct gen_answer *a, const struct gen_result *res);
/* One line of a stream: a piece of content or of thinking (a JSON object, no newline). */
char *ollama_chunk(const struct serve *srv, const struct gen_req *r, enum text_part part,
		   const char *s, size_t n);
/* The tool calls of a streamed answer, in a line of their own before the last. */
char *ollama_calls_chunk(const struct serve *srv, const struct gen_req *r,
			 const struct gen_answer *a);
/* The last line of a stream: done, why, the counts and durations. */
char *ollama_done(const struct serve *srv, const struct gen_req *r, const struct gen_result *res);

/* GET /api/tags, POST /api/show (the model's details), GET /api/version. */
char *ollama_tags(const struct serve *srv);
char *ollama_show(const struct serve *srv);
char *ollama_version(void);

#endif /* COLIBRI_SERVE_OLLAMA_H */
