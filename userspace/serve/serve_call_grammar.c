// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_call_grammar.c - the grammar of the calls tool_choice allows, in
 * the model's format (serve_call_grammar.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_call_grammar.h"
#include "serve_call_syntax.h"
#include "serve_grammar.h"
#include "serve_schema.h"
#include "tokenizer.h"

void call_tag(const struct cb_tokenizer *tok, struct grammar *g, uint32_t rule, const char *text)
{
	int32_t t = cb_tok_token_id(tok, text, strlen(text));

	if (t >= 0 && cb_tok_is_special(tok, t))
		gram_add_token(g, rule, (uint32_t)t);
	else
		gram_add_text(g, rule, text, strlen(text));
}

/* The building of one grammar. */
struct cg {
	const struct cb_tokenizer *tok;
	const struct gen_req *r;
	struct grammar *g;
	uint32_t ws;
	char *err;
	size_t errlen;
};

/* The function of tool @t, its name, or NULL. */
static const cJSON *function(const cJSON *t)
{
	return cJSON_GetObjectItemCaseSensitive(t, "function");
}

static const char *tool_name(const cJSON *t)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(function(t), "name");

	return cJSON_IsString(n) && n->valuestring[0] ? n->valuestring : NULL;
}

static const cJSON *tool_params(const cJSON *t)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(function(t), "parameters");

	return cJSON_IsObject(p) ? p : NULL;
}

/* Whether tool_choice allows tool @t. */
static int allowed(const struct cg *c, const cJSON *t)
{
	return tool_name(t) && (c->r->tool_choice != TOOLS_NAMED ||
				!strcmp(tool_name(t), c->r->tool_name));
}

/* Tool @t's arguments as JSON: its parameters' schema (none: any object). */
static uint32_t args_json(struct cg *c, const cJSON *t)
{
	char why[256];
	uint32_t r = schema_rule(c->g, tool_params(t), why, sizeof(why));

	if (r == GRAM_NIL)
		snprintf(c->err, c->errlen, "the parameters of tool %s: %s", tool_name(t), why);
	return r;
}

/* {"name": "N", "KEY": ARGS}, whitespace between the tokens. */
static int json_call(struct cg *c, uint32_t rule, const cJSON *t, const char *key)
{
	struct grammar *g = c->g;
	uint32_t args = args_json(c, t);
	char *name = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(function(t), "name"));
	const char *parts[] = { "{", "\"name\"", ":", NULL, ",", key, ":" };
	size_t i;

	if (args == GRAM_NIL || !name) {
		if (!name)
			snprintf(c->err, c->errlen, "out of memory");
		free(name);
		return -1;
	}
	parts[3] = name;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		gram_add_text(g, rule, parts[i], strlen(parts[i]));
		gram_add_rule(g, rule, c->ws);
	}
	gram_add_rule(g, rule, args);
	gram_add_rule(g, rule, c->ws);
	gram_add_text(g, rule, "}", 1);
	free(name);
	return 0;
}

/* A GLM string argument: printable ASCII but '<', as many as @p bounds. */
static uint32_t glm_string(struct cg *c, const cJSON *p)
{
	const cJSON *lo = cJSON_GetObjectItemCaseSensitive(p, "minLength");
	const cJSON *hi = cJSON_GetObjectItemCaseSensitive(p, "maxLength");
	uint64_t set[4] = { 0 };
	uint32_t ch = gram_rule_new(c->g);
	unsigned int b;

	for (b = 0x20; b < 0x7f; b++)
		if (b != '<')
			set[b >> 6] |= 1ull << (b & 63);
	gram_add_set(c->g, ch, set);
	return gram_repeat(c->g, ch, cJSON_IsNumber(lo) && lo->valuedouble > 0 ?
			   (uint32_t)lo->valuedouble : 0,
			   cJSON_IsNumber(hi) && hi->valuedouble >= 0 && hi->valuedouble < 1e6 ?
			   (uint32_t)hi->valuedouble : GRAM_NIL);
}

/* Whether @p is a plain string schema (no enum, no const: those stay JSON). */
static int plain_string(const cJSON *p)
{
	const cJSON *ty = cJSON_GetObjectItemCaseSensitive(p, "type");

	return cJSON_IsString(ty) && !strcmp(ty->valuestring, "string") &&
	       !cJSON_GetObjectItemCaseSensitive(p, "enum") &&
	       !cJSON_GetObjectItemCaseSensitive(p, "const");
}

/* GLM: <arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n */
static void glm_pair(struct cg *c, uint32_t rule, const char *key, uint32_t value)
{
	call_tag(c->tok, c->g, rule, "<arg_key>");
	if (key)
		gram_add_text(c->g, rule, key, strlen(key));
	else
		gram_add_rule(c->g, rule, glm_string(c, NULL));
	call_tag(c->tok, c->g, rule, "</arg_key>");
	gram_add_text(c->g, rule, "\n", 1);
	call_tag(c->tok, c->g, rule, "<arg_value>");
	gram_add_rule(c->g, rule, value);
	call_tag(c->tok, c->g, rule, "</arg_value>");
	gram_add_text(c->g, rule, "\n", 1);
}

/* GLM: <tool_call>N\n, the pairs of the schema's properties, </tool_call>. */
static int glm_call(struct cg *c, uint32_t rule, const cJSON *t)
{
	const cJSON *params = tool_params(t), *props, *req, *p, *q;
	uint32_t pair, value;
	char why[256];
	int needed;

	call_tag(c->tok, c->g, rule, "<tool_call>");
	gram_add_text(c->g, rule, tool_name(t), strlen(tool_name(t)));
	gram_add_text(c->g, rule, "\n", 1);
	props = cJSON_GetObjectItemCaseSensitive(params, "properties");
	req = cJSON_GetObjectItemCaseSensitive(params, "required");
	if (!cJSON_IsObject(props)) {
		/* any object: any keys, their values as strings */
		pair = gram_rule_new(c->g);
		glm_pair(c, pair, NULL, glm_string(c, NULL));
		gram_add_rule(c->g, rule, gram_star(c->g, pair));
		props = NULL;
	}
	cJSON_ArrayForEach(p, props) {
		if (plain_string(p)) {
			value = glm_string(c, p);
		} else {
			value = schema_rule(c->g, p, why, sizeof(why));
			if (value == GRAM_NIL) {
				snprintf(c->err, c->errlen, "the parameters of tool %s: %s",
					 tool_name(t), why);
				return -1;
			}
		}
		needed = 0;
		cJSON_ArrayForEach(q, req)
			if (cJSON_IsString(q) && !strcmp(q->valuestring, p->string))
				needed = 1;
		pair = gram_rule_new(c->g);
		glm_pair(c, pair, p->string, value);
		gram_add_rule(c->g, rule, needed ? pair : gram_opt(c->g, pair));
	}
	call_tag(c->tok, c->g, rule, "</tool_call>");
	return 0;
}

/*
 * DeepSeek: <｜tool▁call▁begin｜>function<｜tool▁sep｜>N
 * ```json ARGS ```<｜tool▁call▁end｜> (new lines around the arguments)
 */
static int deepseek_call(struct cg *c, uint32_t rule, const cJSON *t)
{
	uint32_t args = args_json(c, t);

	if (args == GRAM_NIL)
		return -1;
	call_tag(c->tok, c->g, rule, DS_CALL_BEGIN);
	gram_add_text(c->g, rule, "function", 8);
	call_tag(c->tok, c->g, rule, DS_SEP);
	gram_add_text(c->g, rule, tool_name(t), strlen(tool_name(t)));
	gram_add_text(c->g, rule, "\n```json\n", 9);
	gram_add_rule(c->g, rule, args);
	gram_add_text(c->g, rule, "\n```", 4);
	call_tag(c->tok, c->g, rule, DS_CALL_END);
	return 0;
}

/*
 * Kimi-K2: <|tool_call_begin|>functions.N:INDEX<|tool_call_argument_begin|>ARGS
 * <|tool_call_end|>
 */
static int kimi_call(struct cg *c, uint32_t rule, const cJSON *t)
{
	uint32_t args = args_json(c, t), digit = gram_rule_new(c->g);

	if (args == GRAM_NIL)
		return -1;
	gram_add_range(c->g, digit, '0', '9');
	call_tag(c->tok, c->g, rule, KIMI_CALL_BEGIN);
	gram_add_text(c->g, rule, "functions.", 10);
	gram_add_text(c->g, rule, tool_name(t), strlen(tool_name(t)));
	gram_add_text(c->g, rule, ":", 1);
	gram_add_rule(c->g, rule, gram_repeat(c->g, digit, 1, 3));
	call_tag(c->tok, c->g, rule, KIMI_ARGS_BEGIN);
	gram_add_rule(c->g, rule, args);
	call_tag(c->tok, c->g, rule, KIMI_CALL_END);
	return 0;
}

/* One call of any tool allowed, as @family writes it: a rule, or GRAM_NIL. */
static uint32_t one_call(struct cg *c, enum call_family family)
{
	uint32_t rule = gram_rule_new(c->g);
	const cJSON *t;
	int n = 0, r;

	cJSON_ArrayForEach(t, c->r->tools) {
		if (!allowed(c, t))
			continue;
		if (n++)
			gram_or(c->g, rule);
		switch (family) {
		case CALLS_GLM:
			r = glm_call(c, rule, t);
			break;
		case CALLS_DEEPSEEK:
			r = deepseek_call(c, rule, t);
			break;
		case CALLS_KIMI:
			r = kimi_call(c, rule, t);
			break;
		case CALLS_LLAMA3:
			r = json_call(c, rule, t, "\"parameters\"");
			break;
		default:
			r = json_call(c, rule, t, "\"arguments\"");
			break;
		}
		if (r)
			return GRAM_NIL;
	}
	if (!n) {
		snprintf(c->err, c->errlen, "no tool has a function name");
		return GRAM_NIL;
	}
	return rule;
}

/* @call, then more of it with @sep before each. */
static uint32_t one_or_more(struct cg *c, uint32_t call, const char *sep)
{
	uint32_t more = gram_rule_new(c->g), rule = gram_rule_new(c->g);

	if (sep)
		gram_add_text(c->g, more, sep, strlen(sep));
	gram_add_rule(c->g, more, c->ws);
	gram_add_rule(c->g, more, call);
	gram_add_rule(c->g, rule, call);
	gram_add_rule(c->g, rule, gram_star(c->g, more));
	return rule;
}

/* harmony: <|channel|>commentary to=functions.N( <|constrain|>json)?<|message|>ARGS<|call|> */
static int harmony_call(struct cg *c, uint32_t root)
{
	struct grammar *g = c->g;
	uint32_t calls = gram_rule_new(g), json = gram_rule_new(g), args;
	const cJSON *t;
	int n = 0;

	gram_add_text(g, json, " ", 1);
	call_tag(c->tok, g, json, "<|constrain|>");
	gram_add_text(g, json, "json", 4);
	cJSON_ArrayForEach(t, c->r->tools) {
		if (!allowed(c, t))
			continue;
		args = args_json(c, t);
		if (args == GRAM_NIL)
			return -1;
		if (n++)
			gram_or(g, calls);
		call_tag(c->tok, g, calls, "<|channel|>");
		gram_add_text(g, calls, "commentary to=functions.", 24);
		gram_add_text(g, calls, tool_name(t), strlen(tool_name(t)));
		gram_add_rule(g, calls, gram_opt(g, json));
		call_tag(c->tok, g, calls, "<|message|>");
		gram_add_rule(g, calls, args);
		call_tag(c->tok, g, calls, "<|call|>");
	}
	if (!n) {
		snprintf(c->err, c->errlen, "no tool has a function name");
		return -1;
	}
	gram_add_rule(g, root, calls);
	return 0;
}

int call_grammar(const struct cb_tokenizer *tok, int format, const struct gen_req *r,
		 struct grammar *g, uint32_t root, char *err, size_t errlen)
{
	struct cg c = { tok, r, g, schema_ws_rule(g), err, errlen };
	enum call_family family = format_family(format);
	uint32_t call;

	if (format == FORMAT_HARMONY)
		return harmony_call(&c, root);
	call = one_call(&c, family);
	if (call == GRAM_NIL)
		return -1;
	switch (family) {
	case CALLS_HERMES: {
		uint32_t block = gram_rule_new(g);

		call_tag(tok, g, block, "<tool_call>");
		gram_add_rule(g, block, c.ws);
		gram_add_rule(g, block, call);
		gram_add_rule(g, block, c.ws);
		call_tag(tok, g, block, "</tool_call>");
		gram_add_rule(g, root, one_or_more(&c, block, NULL));
		break;
	}
	case CALLS_LLAMA3:
		/* an answer that is the call (serve_tagged.c skips the whitespace) */
		gram_add_rule(g, root, c.ws);
		gram_add_rule(g, root, call);
		break;
	case CALLS_MISTRAL:
		call_tag(tok, g, root, "[TOOL_CALLS]");
		gram_add_text(g, root, "[", 1);
		gram_add_rule(g, root, one_or_more(&c, call, ","));
		gram_add_text(g, root, "]", 1);
		break;
	case CALLS_DEEPSEEK:
		call_tag(tok, g, root, DS_CALLS_BEGIN);
		gram_add_rule(g, root, one_or_more(&c, call, NULL));
		call_tag(tok, g, root, DS_CALLS_END);
		break;
	case CALLS_GLM:
		gram_add_rule(g, root, one_or_more(&c, call, NULL));
		break;
	case CALLS_KIMI:
		call_tag(tok, g, root, KIMI_CALLS_BEGIN);
		gram_add_rule(g, root, one_or_more(&c, call, NULL));
		call_tag(tok, g, root, KIMI_CALLS_END);
		break;
	default:
		snprintf(err, errlen, "no tool-call format");
		return -1;
	}
	return 0;
}
