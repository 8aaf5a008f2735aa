// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_structured.c - a request's response_format as a grammar around the
 * model's answer format (serve_structured.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_grammar.h"
#include "serve_schema.h"
#include "serve_structured.h"
#include "tokenizer.h"

/*
 * Any bytes up to the first @end, then @end; @end's first byte must not
 * come again in it (as "</think>"): a mismatch then goes back to the
 * start, or to one byte in when it is that first byte.
 */
static uint32_t until(struct grammar *g, const char *end)
{
	size_t n = strlen(end), k;
	uint32_t body = gram_rule_new(g), after[16], next;
	uint64_t other[4];
	unsigned int b;

	if (n < 2 || n > 16)
		return GRAM_NIL;
	for (k = 1; k < n; k++)
		after[k] = gram_rule_new(g);
	/* body: [^e0] body | e0 after1 */
	memset(other, 0xff, sizeof(other));
	other[(uint8_t)end[0] >> 6] &= ~(1ull << ((uint8_t)end[0] & 63));
	gram_add_set(g, body, other);
	gram_add_rule(g, body, body);
	gram_or(g, body);
	gram_add_byte(g, body, (uint8_t)end[0]);
	gram_add_rule(g, body, after[1]);
	/* after_k: ek after_k+1 | e0 after1 | [^ek e0] body */
	for (k = 1; k < n; k++) {
		next = k + 1 < n ? after[k + 1] : GRAM_NIL;
		gram_add_byte(g, after[k], (uint8_t)end[k]);
		if (next != GRAM_NIL)
			gram_add_rule(g, after[k], next);
		gram_or(g, after[k]);
		gram_add_byte(g, after[k], (uint8_t)end[0]);
		gram_add_rule(g, after[k], after[1]);
		gram_or(g, after[k]);
		memset(other, 0xff, sizeof(other));
		for (b = 0; b < 2; b++) {
			uint8_t x = (uint8_t)(b ? end[0] : end[k]);

			other[x >> 6] &= ~(1ull << (x & 63));
		}
		gram_add_set(g, after[k], other);
		gram_add_rule(g, after[k], body);
	}
	return body;
}

/* A special token of the model's vocabulary, by its text: 0, or -1 with why in @err. */
static int special(const struct serve *srv, const char *text, uint32_t *id, char *err,
		   size_t errlen)
{
	int32_t t = cb_tok_token_id(srv->tok, text, strlen(text));

	if (t < 0) {
		snprintf(err, errlen, "the model's vocabulary has no %s token", text);
		return -1;
	}
	*id = (uint32_t)t;
	return 0;
}

static int finish(struct grammar *g, char *err, size_t errlen)
{
	if (!gram_finish(g))
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

/*
 * harmony: (<|channel|>analysis<|message|>...<|end|><|start|>assistant)?,
 * then unless @tools, <|channel|>final<|message|>
 */
static int harmony_head(const struct serve *srv, struct grammar *g, uint32_t root, int tools,
			char *err, size_t errlen)
{
	uint32_t channel, message, end, start, analysis, any, text;
	uint64_t all[4];

	if (special(srv, "<|channel|>", &channel, err, errlen) ||
	    special(srv, "<|message|>", &message, err, errlen) ||
	    special(srv, "<|end|>", &end, err, errlen) ||
	    special(srv, "<|start|>", &start, err, errlen))
		return -1;
	memset(all, 0xff, sizeof(all));
	any = gram_rule_new(g);
	gram_add_set(g, any, all);
	text = gram_star(g, any);
	analysis = gram_rule_new(g);
	gram_add_token(g, analysis, channel);
	gram_add_text(g, analysis, "analysis", 8);
	gram_add_token(g, analysis, message);
	gram_add_rule(g, analysis, text);
	gram_add_token(g, analysis, end);
	gram_add_token(g, analysis, start);
	gram_add_text(g, analysis, "assistant", 9);
	gram_add_rule(g, root, gram_opt(g, analysis));
	if (tools)
		return 0;
	gram_add_token(g, root, channel);
	gram_add_text(g, root, "final", 5);
	gram_add_token(g, root, message);
	return 0;
}

/* The name of tool @t (its "function"'s), or NULL. */
static const char *tool_name(const cJSON *t)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t,
								"function"), "name");

	return cJSON_IsString(n) && n->valuestring[0] ? n->valuestring : NULL;
}

/* Tool @t's arguments: its parameters' schema (none: any object). */
static uint32_t tool_args(struct grammar *g, const cJSON *t, char *err, size_t errlen)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t,
								"function"), "parameters");
	char why[256];
	uint32_t r;

	r = schema_rule(g, cJSON_IsObject(p) ? p : NULL, why, sizeof(why));
	if (r == GRAM_NIL)
		snprintf(err, errlen, "the parameters of tool %s: %s", tool_name(t), why);
	return r;
}

/*
 * Hermes: one call or more, each <tool_call>{"name": "NAME", "arguments":
 * ARGS}</tool_call>, of the tools tool_choice allows.
 */
static int hermes_calls(const struct gen_req *r, struct grammar *g, uint32_t root, char *err,
			size_t errlen)
{
	uint32_t call = gram_rule_new(g), json = gram_rule_new(g), ws = schema_ws_rule(g);
	uint32_t more, args;
	const cJSON *t, *fn;
	char *name;
	int n = 0;

	cJSON_ArrayForEach(t, r->tools) {
		if (!tool_name(t) || (r->tool_choice == TOOLS_NAMED &&
				      strcmp(tool_name(t), r->tool_name)))
			continue;
		args = tool_args(g, t, err, errlen);
		fn = cJSON_GetObjectItemCaseSensitive(t, "function");
		name = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(fn, "name"));
		if (args == GRAM_NIL || !name) {
			free(name);
			return -1;
		}
		if (n++)
			gram_or(g, json);
		gram_add_text(g, json, "{", 1);
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, "\"name\"", 6);
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, ":", 1);
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, name, strlen(name));
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, ",", 1);
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, "\"arguments\"", 11);
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, ":", 1);
		gram_add_rule(g, json, ws);
		gram_add_rule(g, json, args);
		gram_add_rule(g, json, ws);
		gram_add_text(g, json, "}", 1);
		free(name);
	}
	if (!n) {
		snprintf(err, errlen, "no tool has a function name");
		return -1;
	}
	gram_add_text(g, call, "<tool_call>", 11);
	gram_add_rule(g, call, ws);
	gram_add_rule(g, call, json);
	gram_add_rule(g, call, ws);
	gram_add_text(g, call, "</tool_call>", 12);
	more = gram_rule_new(g);
	gram_add_rule(g, more, ws);
	gram_add_rule(g, more, call);
	gram_add_rule(g, root, ws);
	gram_add_rule(g, root, call);
	gram_add_rule(g, root, gram_star(g, more));
	return 0;
}

/*
 * harmony: one call, <|channel|>commentary to=functions.NAME
 * (<|constrain|>json)?<|message|>ARGS<|call|>, of the tools tool_choice
 * allows.
 */
static int harmony_call(const struct serve *srv, const struct gen_req *r, struct grammar *g,
			uint32_t root, char *err, size_t errlen)
{
	uint32_t channel, message, constrain, call, calls = gram_rule_new(g), json, args;
	const cJSON *t;
	int n = 0;

	if (special(srv, "<|channel|>", &channel, err, errlen) ||
	    special(srv, "<|message|>", &message, err, errlen) ||
	    special(srv, "<|constrain|>", &constrain, err, errlen) ||
	    special(srv, "<|call|>", &call, err, errlen))
		return -1;
	json = gram_rule_new(g);
	gram_add_text(g, json, " ", 1);
	gram_add_token(g, json, constrain);
	gram_add_text(g, json, "json", 4);
	cJSON_ArrayForEach(t, r->tools) {
		if (!tool_name(t) || (r->tool_choice == TOOLS_NAMED &&
				      strcmp(tool_name(t), r->tool_name)))
			continue;
		args = tool_args(g, t, err, errlen);
		if (args == GRAM_NIL)
			return -1;
		if (n++)
			gram_or(g, calls);
		gram_add_token(g, calls, channel);
		gram_add_text(g, calls, "commentary to=functions.", 24);
		gram_add_text(g, calls, tool_name(t), strlen(tool_name(t)));
		gram_add_rule(g, calls, gram_opt(g, json));
		gram_add_token(g, calls, message);
		gram_add_rule(g, calls, args);
		gram_add_token(g, calls, call);
	}
	if (!n) {
		snprintf(err, errlen, "no tool has a function name");
		return -1;
	}
	gram_add_rule(g, root, calls);
	return 0;
}

int structured_grammar(const struct serve *srv, const struct gen_req *r, struct grammar *g,
		       char *err, size_t errlen)
{
	uint32_t root, think, value;

	gram_init(g);
	root = gram_rule_new(g);
	if (r->tool_choice != TOOLS_AUTO && (r->kind != GEN_CHAT || srv->format == FORMAT_PLAIN)) {
		snprintf(err, errlen, "this model's answers have no tool-call format this server "
			 "knows (harmony's, Hermes')");
		return -1;
	}
	if (r->kind == GEN_CHAT && srv->format == FORMAT_HARMONY) {
		if (harmony_head(srv, g, root, r->tool_choice != TOOLS_AUTO, err, errlen))
			return -1;
		if (r->tool_choice != TOOLS_AUTO)
			return harmony_call(srv, r, g, root, err, errlen) ? -1 :
			       finish(g, err, errlen);
	} else if (r->kind == GEN_CHAT && srv->format == FORMAT_HERMES) {
		think = gram_rule_new(g);
		gram_add_text(g, think, "<think>", 7);
		gram_add_rule(g, think, until(g, "</think>"));
		gram_add_rule(g, root, gram_opt(g, think));
		if (r->tool_choice != TOOLS_AUTO)
			return hermes_calls(r, g, root, err, errlen) ? -1 :
			       finish(g, err, errlen);
	}
	gram_add_rule(g, root, schema_ws_rule(g));
	value = schema_rule(g, r->json == JSON_SCHEMA ? r->schema : NULL, err, errlen);
	if (value == GRAM_NIL)
		return -1;
	gram_add_rule(g, root, value);
	return finish(g, err, errlen);
}
