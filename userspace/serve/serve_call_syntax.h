/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_call_syntax.h - how each template family's models write tool
 * calls, what template says which family, and a written call block read
 * back into calls.
 *
 * Every family but harmony (GPT-OSS's channels, serve_harmony.h) writes
 * its calls as text between tags, which serve_tagged.h finds in the
 * answer as it streams:
 *
 *   Hermes     <tool_call>{"name": N, "arguments": {...}}</tool_call>, one
 *              block per call (Qwen2.5/3, QwQ, Hermes 2/3)
 *   Llama 3.x  <|python_tag|>{"name": N, "parameters": {...}} to the end
 *              (or <|eom_id|>), or an answer that is that JSON alone
 *   Mistral    [TOOL_CALLS][{"name": N, "arguments": {...}}, ...] to the
 *              end, or [TOOL_CALLS]N[ARGS]{...} per call (v11 tokenizers)
 *   DeepSeek   <｜tool▁calls▁begin｜> then per call <｜tool▁call▁begin｜>
 *              function<｜tool▁sep｜>N\n```json\n{...}\n```
 *              <｜tool▁call▁end｜> (V3; V3.1 writes N<｜tool▁sep｜>{...}),
 *              then <｜tool▁calls▁end｜>
 *   GLM-4.5    <tool_call>N\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n...</tool_call>,
 *              a string V as it is, any other as JSON
 *   Kimi-K2    <|tool_calls_section_begin|> then per call
 *              <|tool_call_begin|>functions.N:I<|tool_call_argument_begin|>{...}
 *              <|tool_call_end|>, then <|tool_calls_section_end|> (the call's
 *              id names the function: "functions." N ":" its index)
 *
 * Hermes, DeepSeek, GLM and Kimi models may think first, between <think> tags.
 * The tags are special tokens in some vocabularies and text in others:
 * serve_text.c lets a special token through as its text when it is one of
 * its family's marks.
 */
#ifndef COLIBRI_SERVE_CALL_SYNTAX_H
#define COLIBRI_SERVE_CALL_SYNTAX_H

#include <stddef.h>

#include <cJSON.h>

/* DeepSeek's tags: U+FF5C (fullwidth vertical line) and U+2581 (lower one-eighth block). */
#define DS_BAR		"\xef\xbd\x9c"
#define DS_SP		"\xe2\x96\x81"
#define DS_CALLS	DS_BAR "tool" DS_SP "calls" DS_SP
#define DS_CALL		DS_BAR "tool" DS_SP "call" DS_SP
#define DS_CALLS_BEGIN	"<" DS_CALLS "begin" DS_BAR ">"
#define DS_CALLS_END	"<" DS_CALLS "end" DS_BAR ">"
#define DS_CALL_BEGIN	"<" DS_CALL "begin" DS_BAR ">"
#define DS_CALL_END	"<" DS_CALL "end" DS_BAR ">"
#define DS_SEP		"<" DS_BAR "tool" DS_SP "sep" DS_BAR ">"

/* Kimi-K2's tags */
#define KIMI_CALLS_BEGIN	"<|tool_calls_section_begin|>"
#define KIMI_CALLS_END		"<|tool_calls_section_end|>"
#define KIMI_CALL_BEGIN		"<|tool_call_begin|>"
#define KIMI_ARGS_BEGIN		"<|tool_call_argument_begin|>"
#define KIMI_CALL_END		"<|tool_call_end|>"

/* The tool-call families (the tagged ones of enum answer_format). */
enum call_family {
	CALLS_HERMES,
	CALLS_LLAMA3,
	CALLS_MISTRAL,
	CALLS_DEEPSEEK,
	CALLS_GLM,
	CALLS_KIMI,
	CALLS_N,
};

/*
 * struct call_syntax - one family's tags.
 * @name: for logs and errors.
 * @open: what starts a block of calls.
 * @close: what ends it; NULL: the end of the answer does.
 * @marks: every tag of the family (NULL-ended): a special token whose text
 *	is one of them is read as that text.
 * @bare_json: an answer that is a JSON call and nothing else is one.
 * @think: <think> at the start of the answer opens its reasoning.
 */
struct call_syntax {
	const char *name, *open, *close;
	const char *const *marks;
	int bare_json, think;
};

const struct call_syntax *call_syntax(enum call_family f);

/*
 * call_family_of() - the family a chat template writes tool calls in (it
 * shows the model its tags, or writes the calls of earlier turns with
 * them), or -1 when it shows none.
 */
int call_family_of(const char *tmpl);

/* 1 when @n bytes at @s are one of @syn's tags. */
int call_syntax_is_mark(const struct call_syntax *syn, const char *s, size_t n);

/*
 * call_decode() - a block of calls (@n bytes at @s, between @open and
 * @close) read as family @f writes it, into *@calls: an array of
 * {"name": N, "arguments": "JSON text"}.  @tools (the request's, or NULL)
 * tell GLM's string arguments from the rest.  0 with the calls (at least
 * one); 1 when the text is not calls of the family (*@calls NULL); -1 out
 * of memory.
 */
int call_decode(enum call_family f, const char *s, size_t n, const cJSON *tools,
		cJSON **calls);

#endif /* COLIBRI_SERVE_CALL_SYNTAX_H */
