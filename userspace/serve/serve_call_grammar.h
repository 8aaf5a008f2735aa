/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_call_grammar.h - tool_choice "required" or a named function as a
 * grammar: the calls of the tools it allows, written as the model's format
 * writes them (serve_call_syntax.h, and harmony's), their arguments held
 * to each tool's parameters' schema (serve_schema.h):
 *
 *   harmony    <|channel|>commentary to=functions.N <|constrain|>json<|message|>ARGS<|call|>
 *              (one call: <|call|> ends the turn)
 *   Hermes     <tool_call>{"name": N, "arguments": ARGS}</tool_call>, one or more
 *   Llama 3.x  {"name": N, "parameters": ARGS} (one: JSON-based tool calling)
 *   Mistral    [TOOL_CALLS][{"name": N, "arguments": ARGS}, ...]
 *   DeepSeek   <｜tool▁calls▁begin｜>, per call <｜tool▁call▁begin｜>
 *              function<｜tool▁sep｜>N ```json ARGS ```<｜tool▁call▁end｜>,
 *              then <｜tool▁calls▁end｜>
 *   GLM        per call <tool_call>N <arg_key>K</arg_key> <arg_value>V</arg_value>...</tool_call>,
 *              the keys the schema's properties in its order (the optional
 *              ones may be left out); a string V printable ASCII without '<'
 *              (its length as the schema bounds it), any other V JSON.
 *
 * A tag is the special token of that text when the vocabulary has one, or
 * the text.
 */
#ifndef COLIBRI_SERVE_CALL_GRAMMAR_H
#define COLIBRI_SERVE_CALL_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

struct cb_tokenizer;
struct gen_req;
struct grammar;

/*
 * call_grammar() - @r's calls (tool_choice required or named) in @format
 * (enum answer_format, not plain) into @root of @g.  0, or -1 with why in
 * @err.
 */
int call_grammar(const struct cb_tokenizer *tok, int format, const struct gen_req *r,
		 struct grammar *g, uint32_t root, char *err, size_t errlen);

/* @text into @rule: the special token of that text, or the text. */
void call_tag(const struct cb_tokenizer *tok, struct grammar *g, uint32_t rule, const char *text);

#endif /* COLIBRI_SERVE_CALL_GRAMMAR_H */
