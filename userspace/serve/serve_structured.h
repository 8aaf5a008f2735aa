/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_structured.h - the grammar a request's answer is held to: its
 * response_format (JSON, or JSON of a schema) inside the model's answer
 * format, so that the parts the server splits off still come:
 *
 *   plain    the JSON alone (whitespace before it);
 *   Hermes   an optional <think>...</think> first, then the JSON;
 *   harmony  an optional analysis message first, then the final channel's
 *            message, which is the JSON.
 *
 * The answer is the JSON (content), with the reasoning apart.
 *
 * tool_choice "required" or a named function holds the answer to the
 * format's tool calls instead, their arguments to the tool's parameters'
 * schema: Hermes' <tool_call> JSON (one or more), harmony's commentary
 * message to functions.NAME (one: <|call|> ends the turn).
 */
#ifndef COLIBRI_SERVE_STRUCTURED_H
#define COLIBRI_SERVE_STRUCTURED_H

#include <stddef.h>

struct serve;
struct gen_req;
struct grammar;

/* @g (initialised) made and finished for @r: 0, or -1 with why in @err. */
int structured_grammar(const struct serve *srv, const struct gen_req *r, struct grammar *g,
		       char *err, size_t errlen);

#endif /* COLIBRI_SERVE_STRUCTURED_H */
