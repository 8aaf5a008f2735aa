// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_request.c - the JSON of a chat or text completion request, checked
 * field by field into a struct gen_req (serve.h).
 *
 * The body is untrusted: it must be one JSON object, and every member is
 * looked up in the table below.  A member the table does not name is
 * refused, as OpenAI refuses it ("Unrecognized request argument").  A
 * member OpenAI defines that this server does not implement is accepted
 * at its neutral value only (n = 1, presence_penalty = 0, logprobs off,
 * ...) and refused otherwise, so a client never gets silently something
 * else than it asked for.  null stands for "not given" everywhere, as in
 * OpenAI's API.  Inside a message only the members the chat templates read
 * are kept (role, content, name, tool_calls, tool_call_id,
 * reasoning_content): a message a client got back and appended to its
 * history ("refusal": null, ...) is taken as it is.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "serve.h"
#include "serve_grammar.h"
#include "serve_logprobs.h"

#define KIND_CHAT	(1u << GEN_CHAT)
#define KIND_COMPL	(1u << GEN_COMPLETION)
#define KIND_BOTH	(KIND_CHAT | KIND_COMPL)

/* What a parse collects before it is checked as a whole. */
struct parse {
	struct gen_req *r;
	struct api_error *e;
	uint32_t vocab;
	uint32_t max_tokens, max_completion_tokens;
	double temperature, top_p;
	int has_temperature, has_top_p, has_seed;
	int has_stream_options;
	int tools_none;			/* tool_choice "none" */
	int has_top_logprobs;
};

void api_error_set(struct api_error *e, int status, const char *type, const char *param,
		   const char *code, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	e->type = type;
	e->param = param;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

/* A number in [lo, hi]: 0, or -1 with the error said. */
static int number_in(struct parse *p, const char *name, const cJSON *v, double lo, double hi,
		     double *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi) {
		api_bad(p->e, name, "%s must be a number from %g to %g", name, lo, hi);
		return -1;
	}
	*out = v->valuedouble;
	return 0;
}

/* An integer in [lo, hi] (JSON numbers are doubles: exact up to 2^53). */
static int integer_in(struct parse *p, const char *name, const cJSON *v, double lo, double hi,
		      double *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < lo || v->valuedouble > hi) {
		api_bad(p->e, name, "%s must be an integer from %.0f to %.0f", name, lo, hi);
		return -1;
	}
	*out = v->valuedouble;
	return 0;
}

static int f_model(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsString(v) || !v->valuestring[0] ||
	    strlen(v->valuestring) >= sizeof(p->r->model)) {
		api_bad(p->e, name, "model must be a model id (a string of 1 to %zu bytes)",
			sizeof(p->r->model) - 1);
		return -1;
	}
	snprintf(p->r->model, sizeof(p->r->model), "%s", v->valuestring);
	return 0;
}

static int f_max_tokens(struct parse *p, const char *name, const cJSON *v)
{
	double d;

	if (integer_in(p, name, v, 1, SERVE_MAX_TOKENS, &d))
		return -1;
	if (!strcmp(name, "max_tokens"))
		p->max_tokens = (uint32_t)d;
	else
		p->max_completion_tokens = (uint32_t)d;
	return 0;
}

static int f_temperature(struct parse *p, const char *name, const cJSON *v)
{
	p->has_temperature = 1;
	return number_in(p, name, v, 0, 2, &p->temperature);
}

static int f_top_p(struct parse *p, const char *name, const cJSON *v)
{
	p->has_top_p = 1;
	return number_in(p, name, v, 0, 1, &p->top_p);
}

static int f_top_k(struct parse *p, const char *name, const cJSON *v)
{
	double d;

	if (integer_in(p, name, v, 0, 1u << 30, &d))
		return -1;
	p->r->sp.top_k = (uint32_t)d;
	return 0;
}

static int f_seed(struct parse *p, const char *name, const cJSON *v)
{
	double d;

	if (integer_in(p, name, v, -9007199254740992.0, 9007199254740992.0, &d))
		return -1;
	p->r->sp.seed = (uint64_t)(int64_t)d;
	p->has_seed = 1;
	return 0;
}

static int add_stop(struct parse *p, const cJSON *v)
{
	struct stop_strings *ss = &p->r->stop;
	size_t n;

	n = cJSON_IsString(v) ? strlen(v->valuestring) : 0;
	if (!n || n > STOP_LEN_MAX) {
		api_bad(p->e, "stop", "each stop string must be 1 to %d bytes", STOP_LEN_MAX);
		return -1;
	}
	memcpy(ss->s[ss->n], v->valuestring, n);
	ss->len[ss->n++] = n;
	return 0;
}

static int f_stop(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *it;

	if (cJSON_IsString(v))
		return add_stop(p, v);
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > STOP_MAX) {
		api_bad(p->e, name, "stop must be a string or an array of at most %d strings",
			STOP_MAX);
		return -1;
	}
	cJSON_ArrayForEach(it, v)
		if (add_stop(p, it))
			return -1;
	return 0;
}

static int f_n(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
		api_bad(p->e, name, "only n = 1 is supported");
		return -1;
	}
	return 0;
}

static int f_stream(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsBool(v)) {
		api_bad(p->e, name, "stream must be a boolean");
		return -1;
	}
	p->r->stream = cJSON_IsTrue(v);
	return 0;
}

static int f_stream_options(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *it;

	if (!cJSON_IsObject(v)) {
		api_bad(p->e, name, "stream_options must be an object");
		return -1;
	}
	p->has_stream_options = 1;
	cJSON_ArrayForEach(it, v) {
		if (!cJSON_IsBool(it) || (strcmp(it->string, "include_usage") &&
					  strcmp(it->string, "include_obfuscation"))) {
			api_bad(p->e, name, "stream_options takes include_usage (a boolean), not '%s'",
				it->string);
			return -1;
		}
		if (!strcmp(it->string, "include_usage"))
			p->r->include_usage = cJSON_IsTrue(it);
	}
	return 0;
}

/* A message's content as the template gets it: a string (text parts joined). */
static cJSON *content_of(struct parse *p, int i, const cJSON *v)
{
	const cJSON *part;
	size_t n = 0, k;
	char *s, *q;
	cJSON *out;

	if (cJSON_IsString(v))
		return cJSON_CreateString(v->valuestring);
	if (!cJSON_IsArray(v)) {
		api_bad(p->e, "messages", "messages[%d].content must be a string or an array of text parts",
			i);
		return NULL;
	}
	cJSON_ArrayForEach(part, v) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");

		if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") ||
		    !cJSON_IsString(text)) {
			api_bad(p->e, "messages", "messages[%d].content: only parts {\"type\": \"text\", \"text\": ...} are supported",
				i);
			return NULL;
		}
		n += strlen(text->valuestring) + 1;
	}
	s = malloc(n + 1);
	if (!s)
		goto oom;
	q = s;
	cJSON_ArrayForEach(part, v) {
		const char *t = cJSON_GetObjectItemCaseSensitive(part, "text")->valuestring;

		if (q != s)
			*q++ = '\n';
		k = strlen(t);
		memcpy(q, t, k);
		q += k;
	}
	*q = 0;
	out = cJSON_CreateString(s);
	free(s);
	if (out)
		return out;
oom:
	api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
	return NULL;
}

static const char *const roles[] = { "system", "developer", "user", "assistant", "tool" };

/* One message, as the template gets it. */
static cJSON *message_of(struct parse *p, int i, const cJSON *m)
{
	const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
	static const char *const strings[] = { "name", "tool_call_id", "reasoning_content" };
	const cJSON *v;
	cJSON *out, *c;
	size_t k;

	if (!cJSON_IsObject(m)) {
		api_bad(p->e, "messages", "messages[%d] must be an object", i);
		return NULL;
	}
	for (k = 0; k < sizeof(roles) / sizeof(roles[0]); k++)
		if (cJSON_IsString(role) && !strcmp(role->valuestring, roles[k]))
			break;
	if (k == sizeof(roles) / sizeof(roles[0])) {
		api_bad(p->e, "messages", "messages[%d].role must be system, developer, user, assistant or tool",
			i);
		return NULL;
	}
	out = cJSON_CreateObject();
	/* OpenAI's developer messages are what the templates call system. */
	if (!out || !cJSON_AddStringToObject(out, "role", k == 1 ? "system" : roles[k]))
		goto oom;
	if (!content || cJSON_IsNull(content)) {
		if (strcmp(roles[k], "assistant") ||
		    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))) {
			api_bad(p->e, "messages", "messages[%d].content is missing", i);
			goto err;
		}
		c = cJSON_CreateNull();
	} else {
		c = content_of(p, i, content);
		if (!c)
			goto err;
	}
	if (!cJSON_AddItemToObject(out, "content", c)) {
		cJSON_Delete(c);
		goto oom;
	}
	for (k = 0; k < sizeof(strings) / sizeof(strings[0]); k++) {
		v = cJSON_GetObjectItemCaseSensitive(m, strings[k]);
		if (!v || cJSON_IsNull(v))
			continue;
		if (!cJSON_IsString(v)) {
			api_bad(p->e, "messages", "messages[%d].%s must be a string", i, strings[k]);
			goto err;
		}
		if (!cJSON_AddStringToObject(out, strings[k], v->valuestring))
			goto oom;
	}
	v = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsArray(v)) {
			api_bad(p->e, "messages", "messages[%d].tool_calls must be an array", i);
			goto err;
		}
		c = cJSON_Duplicate(v, 1);
		if (!c || !cJSON_AddItemToObject(out, "tool_calls", c)) {
			cJSON_Delete(c);
			goto oom;
		}
	}
	return out;
oom:
	api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
err:
	cJSON_Delete(out);
	return NULL;
}

static int f_messages(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *m;
	cJSON *one;
	int i = 0;

	if (!cJSON_IsArray(v) || !cJSON_GetArraySize(v)) {
		api_bad(p->e, name, "messages must be a non-empty array");
		return -1;
	}
	cJSON_Delete(p->r->messages);
	p->r->messages = cJSON_CreateArray();
	if (!p->r->messages)
		goto oom;
	cJSON_ArrayForEach(m, v) {
		one = message_of(p, i++, m);
		if (!one)
			return -1;
		if (!cJSON_AddItemToArray(p->r->messages, one)) {
			cJSON_Delete(one);
			goto oom;
		}
	}
	return 0;
oom:
	api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
	return -1;
}

static int f_tools(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *t;

	if (!cJSON_IsArray(v)) {
		api_bad(p->e, name, "tools must be an array of objects");
		return -1;
	}
	cJSON_ArrayForEach(t, v)
		if (!cJSON_IsObject(t)) {
			api_bad(p->e, name, "tools must be an array of objects");
			return -1;
		}
	cJSON_Delete(p->r->tools);
	p->r->tools = cJSON_Duplicate(v, 1);
	if (!p->r->tools) {
		api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	return 0;
}

/* Token ids of a completion prompt: an array of integers in the vocabulary. */
static int prompt_ids(struct parse *p, const cJSON *v)
{
	int n = cJSON_GetArraySize(v), i = 0;
	const cJSON *it;

	p->r->prompt = malloc((n ? n : 1) * sizeof(*p->r->prompt));
	if (!p->r->prompt) {
		api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(it, v) {
		if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
		    it->valuedouble < 0 || it->valuedouble >= p->vocab) {
			api_bad(p->e, "prompt", "prompt[%d] is not a token id (0 to %u)", i,
				p->vocab - 1);
			return -1;
		}
		p->r->prompt[i++] = (uint32_t)it->valuedouble;
	}
	p->r->n_prompt = (uint32_t)n;
	return 0;
}

/* A string, [a string], [token ids] or [[token ids]]: one prompt (n = 1). */
static int f_prompt(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *first = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, 0) : NULL;

	if (cJSON_IsString(v)) {
		p->r->prompt_text = strdup(v->valuestring);
		if (!p->r->prompt_text) {
			api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
			return -1;
		}
		return 0;
	}
	if (!first) {
		api_bad(p->e, name, "prompt must be a string, token ids, or an array of one of those");
		return -1;
	}
	if (cJSON_IsNumber(first))
		return prompt_ids(p, v);
	if (cJSON_GetArraySize(v) != 1) {
		api_bad(p->e, name, "one prompt per request (n = 1), not %d",
			cJSON_GetArraySize(v));
		return -1;
	}
	if (cJSON_IsString(first) || (cJSON_IsArray(first) && cJSON_GetArraySize(first) &&
				      cJSON_IsNumber(cJSON_GetArrayItem(first, 0))))
		return f_prompt(p, name, first);
	api_bad(p->e, name, "prompt must be a string, token ids, or an array of one of those");
	return -1;
}

/* --- members accepted only at their neutral value ------------------------ */

/* presence_penalty, frequency_penalty: -2 to 2, as OpenAI's. */
static int f_penalty(struct parse *p, const char *name, const cJSON *v)
{
	double d;

	if (number_in(p, name, v, -2, 2, &d))
		return -1;
	if (!strcmp(name, "presence_penalty"))
		p->r->lr.presence = (float)d;
	else
		p->r->lr.frequency = (float)d;
	return 0;
}

/* repetition_penalty (vLLM's): more than 0, at most 2; 1 is none. */
static int f_repetition_penalty(struct parse *p, const char *name, const cJSON *v)
{
	double d;

	if (number_in(p, name, v, 0, 2, &d))
		return -1;
	if (d == 0) {
		api_bad(p->e, name, "%s must be more than 0 (1 is none)", name);
		return -1;
	}
	p->r->lr.repetition = (float)d;
	p->r->lr.repeat_last_n = -1;
	return 0;
}

/* min_p (vLLM's, llama.cpp's): 0 to 1; 0 is none. */
static int f_min_p(struct parse *p, const char *name, const cJSON *v)
{
	double d;

	if (number_in(p, name, v, 0, 1, &d))
		return -1;
	p->r->lr.min_p = (float)d;
	return 0;
}

/* {"TOKEN_ID": BIAS}: ids in the vocabulary, biases from -100 to 100. */
static int f_logit_bias(struct parse *p, const char *name, const cJSON *v)
{
	struct logit_rules *lr = &p->r->lr;
	const cJSON *it;
	double b;
	char *end;
	unsigned long id;

	if (!cJSON_IsObject(v)) {
		api_bad(p->e, name, "logit_bias must be an object of token ids and biases");
		return -1;
	}
	lr->n_bias = 0;
	cJSON_ArrayForEach(it, v) {
		id = strtoul(it->string, &end, 10);
		if (!it->string[0] || *end || it->string[0] == '-' || id >= p->vocab) {
			api_bad(p->e, name, "logit_bias: '%.40s' is not a token id of this model "
				"(0 to %u)", it->string, p->vocab - 1);
			return -1;
		}
		if (lr->n_bias == SERVE_MAX_BIAS) {
			api_bad(p->e, name, "logit_bias: at most %u tokens", SERVE_MAX_BIAS);
			return -1;
		}
		if (number_in(p, name, it, -100, 100, &b))
			return -1;
		lr->bias[lr->n_bias].token = (uint32_t)id;
		lr->bias[lr->n_bias++].value = (float)b;
	}
	return 0;
}

static int f_false(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsFalse(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0)) {
		api_bad(p->e, name, "%s is not supported (only false)", name);
		return -1;
	}
	return 0;
}

/* chat: true or false; completions: the likeliest tokens to show with each, 0 to 5. */
static int f_logprobs(struct parse *p, const char *name, const cJSON *v)
{
	if (p->r->kind == GEN_CHAT) {
		if (!cJSON_IsBool(v)) {
			api_bad(p->e, name, "logprobs must be true or false");
			return -1;
		}
		p->r->logprobs = cJSON_IsTrue(v);
		return 0;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > 5) {
		api_bad(p->e, name, "logprobs must be a whole number from 0 to 5");
		return -1;
	}
	p->r->logprobs = 1;
	p->r->top_logprobs = (uint32_t)v->valuedouble;
	return 0;
}

static int f_top_logprobs(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > SERVE_MAX_TOP_LOGPROBS) {
		api_bad(p->e, name, "top_logprobs must be a whole number from 0 to %d",
			SERVE_MAX_TOP_LOGPROBS);
		return -1;
	}
	p->r->top_logprobs = (uint32_t)v->valuedouble;
	p->has_top_logprobs = 1;
	return 0;
}

static int f_one(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
		api_bad(p->e, name, "%s is not supported (only 1)", name);
		return -1;
	}
	return 0;
}

/* "none": the tools stay out of the prompt (the model cannot call what it is not shown). */
/*
 * "none", "auto", "required", or {"type": "function", "function": {"name"}}:
 * the last two are checked against tools once the whole request is read.
 */
static int f_tool_choice(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "type");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, "function");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(f, "name");

	if (cJSON_IsString(v) && (!strcmp(v->valuestring, "none") ||
				  !strcmp(v->valuestring, "auto") ||
				  !strcmp(v->valuestring, "required"))) {
		p->tools_none = !strcmp(v->valuestring, "none");
		p->r->tool_choice = v->valuestring[0] == 'r' ? TOOLS_REQUIRED : TOOLS_AUTO;
		return 0;
	}
	if (!cJSON_IsObject(v) || !cJSON_IsString(t) || strcmp(t->valuestring, "function") ||
	    !cJSON_IsString(n) || !n->valuestring[0] ||
	    strlen(n->valuestring) >= sizeof(p->r->tool_name)) {
		api_bad(p->e, name, "tool_choice must be \"none\", \"auto\", \"required\" or "
			"{\"type\": \"function\", \"function\": {\"name\": ...}}");
		return -1;
	}
	p->r->tool_choice = TOOLS_NAMED;
	snprintf(p->r->tool_name, sizeof(p->r->tool_name), "%s", n->valuestring);
	return 0;
}

/* tool_choice required or named: tools to call, the named one among them. */
static int check_tool_choice(struct parse *p)
{
	const cJSON *t, *n;

	if (p->r->tool_choice == TOOLS_AUTO)
		return 0;
	if (!cJSON_GetArraySize(p->r->tools)) {
		api_bad(p->e, "tool_choice", "tool_choice %s needs tools",
			p->r->tool_choice == TOOLS_REQUIRED ? "required" : "naming a function");
		return -1;
	}
	if (p->r->json != JSON_NONE) {
		api_bad(p->e, "tool_choice", "tool_choice %s and a JSON response_format cannot "
			"both hold the answer", p->r->tool_choice == TOOLS_REQUIRED ? "required" :
			"naming a function");
		return -1;
	}
	if (p->r->tool_choice == TOOLS_REQUIRED)
		return 0;
	cJSON_ArrayForEach(t, p->r->tools) {
		n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "function"),
						     "name");
		if (cJSON_IsString(n) && !strcmp(n->valuestring, p->r->tool_name))
			return 0;
	}
	api_bad(p->e, "tool_choice", "tool_choice names %s, which is not among tools",
		p->r->tool_name);
	return -1;
}

/* A variable for the template; @v copied (taken over from what came before). */
static int tmpl_var(struct parse *p, const char *name, const cJSON *v)
{
	cJSON *copy = cJSON_Duplicate(v, 1);

	if (!p->r->tmpl_vars)
		p->r->tmpl_vars = cJSON_CreateObject();
	if (!copy || !p->r->tmpl_vars) {
		cJSON_Delete(copy);
		api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(p->r->tmpl_vars, name);
	cJSON_AddItemToObject(p->r->tmpl_vars, name, copy);
	return 0;
}

/* "low", "medium", "high" (and "minimal"): the template's reasoning_effort. */
static int f_reasoning_effort(struct parse *p, const char *name, const cJSON *v)
{
	static const char *const ok[] = { "minimal", "low", "medium", "high" };
	size_t i;

	for (i = 0; cJSON_IsString(v) && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(v->valuestring, ok[i]))
			return tmpl_var(p, name, v);
	api_bad(p->e, name, "reasoning_effort must be \"minimal\", \"low\", \"medium\" or \"high\"");
	return -1;
}

/*
 * Variables for the template as they are (enable_thinking: false is how
 * clients turn Qwen3's thinking off); none may stand in for what the
 * request says itself.
 */
static int f_chat_template_kwargs(struct parse *p, const char *name, const cJSON *v)
{
	static const char *const ours[] = { "messages", "tools", "add_generation_prompt" };
	const cJSON *it;
	size_t i;

	if (!cJSON_IsObject(v)) {
		api_bad(p->e, name, "chat_template_kwargs must be an object");
		return -1;
	}
	cJSON_ArrayForEach(it, v) {
		for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			if (!strcmp(it->string, ours[i])) {
				api_bad(p->e, name, "chat_template_kwargs may not set %s", ours[i]);
				return -1;
			}
		if (tmpl_var(p, it->string, it))
			return -1;
	}
	return 0;
}

/*
 * {"type": "text"}, {"type": "json_object"}, or {"type": "json_schema",
 * "json_schema": {"name", "schema", "strict", "description"}}: the schema is
 * compiled by gen_prepare(), which knows the model's answer format.
 */
static int f_response_format(struct parse *p, const char *name, const cJSON *v)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "type"), *js, *sc, *k;

	if (!cJSON_IsObject(v) || !cJSON_IsString(t)) {
		api_bad(p->e, name, "response_format must be an object with a type");
		return -1;
	}
	if (!strcmp(t->valuestring, "text") || !strcmp(t->valuestring, "json_object")) {
		p->r->json = t->valuestring[0] == 't' ? JSON_NONE : JSON_OBJECT;
		return 0;
	}
	if (strcmp(t->valuestring, "json_schema")) {
		api_bad(p->e, name, "response_format type \"%s\" is not one of text, json_object "
			"and json_schema", t->valuestring);
		return -1;
	}
	js = cJSON_GetObjectItemCaseSensitive(v, "json_schema");
	if (!cJSON_IsObject(js)) {
		api_bad(p->e, name, "response_format json_schema needs a json_schema object");
		return -1;
	}
	cJSON_ArrayForEach(k, js)
		if (strcmp(k->string, "name") && strcmp(k->string, "schema") &&
		    strcmp(k->string, "strict") && strcmp(k->string, "description")) {
			api_bad(p->e, name, "response_format json_schema has an unknown member %s",
				k->string);
			return -1;
		}
	sc = cJSON_GetObjectItemCaseSensitive(js, "schema");
	if (!cJSON_IsObject(sc)) {
		api_bad(p->e, name, "response_format json_schema needs a schema object");
		return -1;
	}
	p->r->schema = cJSON_Duplicate(sc, 1);
	if (!p->r->schema) {
		api_error_set(p->e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	p->r->json = JSON_SCHEMA;
	return 0;
}

/* Taken and not used: what the answer does not depend on. */
static int f_string(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsString(v)) {
		api_bad(p->e, name, "%s must be a string", name);
		return -1;
	}
	return 0;
}

static int f_bool(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsBool(v)) {
		api_bad(p->e, name, "%s must be a boolean", name);
		return -1;
	}
	return 0;
}

static int f_object(struct parse *p, const char *name, const cJSON *v)
{
	if (!cJSON_IsObject(v)) {
		api_bad(p->e, name, "%s must be an object", name);
		return -1;
	}
	return 0;
}

struct field {
	const char *name;
	unsigned int kinds;
	int (*take)(struct parse *p, const char *name, const cJSON *v);
};

static const struct field fields[] = {
	{ "model", KIND_BOTH, f_model },
	{ "messages", KIND_CHAT, f_messages },
	{ "prompt", KIND_COMPL, f_prompt },
	{ "max_tokens", KIND_BOTH, f_max_tokens },
	{ "max_completion_tokens", KIND_CHAT, f_max_tokens },
	{ "temperature", KIND_BOTH, f_temperature },
	{ "top_p", KIND_BOTH, f_top_p },
	{ "top_k", KIND_BOTH, f_top_k },
	{ "seed", KIND_BOTH, f_seed },
	{ "stop", KIND_BOTH, f_stop },
	{ "n", KIND_BOTH, f_n },
	{ "stream", KIND_BOTH, f_stream },
	{ "stream_options", KIND_BOTH, f_stream_options },
	{ "tools", KIND_CHAT, f_tools },
	{ "tool_choice", KIND_CHAT, f_tool_choice },
	{ "parallel_tool_calls", KIND_CHAT, f_bool },
	{ "reasoning_effort", KIND_CHAT, f_reasoning_effort },
	{ "chat_template_kwargs", KIND_CHAT, f_chat_template_kwargs },
	{ "frequency_penalty", KIND_BOTH, f_penalty },
	{ "presence_penalty", KIND_BOTH, f_penalty },
	{ "logit_bias", KIND_BOTH, f_logit_bias },
	{ "repetition_penalty", KIND_BOTH, f_repetition_penalty },
	{ "min_p", KIND_BOTH, f_min_p },
	{ "logprobs", KIND_BOTH, f_logprobs },
	{ "top_logprobs", KIND_CHAT, f_top_logprobs },
	{ "echo", KIND_COMPL, f_false },
	{ "best_of", KIND_COMPL, f_one },
	{ "response_format", KIND_BOTH, f_response_format },
	{ "user", KIND_BOTH, f_string },
	{ "service_tier", KIND_BOTH, f_string },
	{ "store", KIND_CHAT, f_bool },
	{ "metadata", KIND_CHAT, f_object },
};

/* The members taken one by one, then what they say together. */
static int take_members(struct parse *p, enum gen_kind kind, const cJSON *root)
{
	const cJSON *it;
	size_t i;

	cJSON_ArrayForEach(it, root) {
		const cJSON *prev;

		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(it->string, fields[i].name))
				break;
		if (i == sizeof(fields) / sizeof(fields[0]) || !(fields[i].kinds & (1u << kind))) {
			api_bad(p->e, NULL, "Unrecognized request argument supplied: %.200s",
				it->string);
			return -1;
		}
		/* Every member before this one is a distinct known one: few to look at. */
		for (prev = root->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string)) {
				api_bad(p->e, fields[i].name, "%s is given twice", fields[i].name);
				return -1;
			}
		if (cJSON_IsNull(it))
			continue;
		if (fields[i].take(p, fields[i].name, it))
			return -1;
	}
	return 0;
}

static int check_whole(struct parse *p, enum gen_kind kind)
{
	struct gen_req *r = p->r;

	if (!r->model[0]) {
		api_bad(p->e, "model", "you must provide a model parameter");
		return -1;
	}
	if (kind == GEN_CHAT && !r->messages) {
		api_bad(p->e, "messages", "messages is required");
		return -1;
	}
	if (kind == GEN_COMPLETION && !r->prompt_text && !r->prompt) {
		api_bad(p->e, "prompt", "prompt is required");
		return -1;
	}
	if (p->has_stream_options && !r->stream) {
		api_bad(p->e, "stream_options", "stream_options is only allowed when stream is true");
		return -1;
	}
	if (p->max_tokens && p->max_completion_tokens &&
	    p->max_tokens != p->max_completion_tokens) {
		api_bad(p->e, "max_tokens", "max_tokens and max_completion_tokens differ: give one");
		return -1;
	}
	r->max_tokens = p->max_completion_tokens ? p->max_completion_tokens : p->max_tokens;
	if (p->tools_none) {
		cJSON_Delete(r->tools);
		r->tools = NULL;
	}
	if (check_tool_choice(p))
		return -1;
	if (p->has_top_logprobs && r->top_logprobs && !r->logprobs) {
		api_bad(p->e, "top_logprobs", "top_logprobs needs \"logprobs\": true");
		return -1;
	}
	/* OpenAI's defaults: temperature 1, top_p 1; top_p 0 keeps the likeliest token. */
	r->sp.temperature_milli = (uint32_t)lround((p->has_temperature ? p->temperature : 1.0) *
						   1000);
	if (p->has_top_p && p->top_p == 0)
		r->sp.temperature_milli = 0;
	else if (p->has_top_p && p->top_p < 1)
		r->sp.top_p_ppm = (uint32_t)lround(p->top_p * 1e6);
	if (!p->has_seed && getrandom(&r->sp.seed, sizeof(r->sp.seed), 0) != sizeof(r->sp.seed))
		r->sp.seed = (uint64_t)time(NULL);
	return 0;
}

/*
 * Whether the body holds a NUL: a raw byte, or the escape \u0000 in a
 * string.  Strings end at a NUL here (a prompt, content, a stop string),
 * so such a request is refused rather than silently cut.  Backslashes
 * occur only inside strings in JSON: each starts an escape, skipped whole.
 */
int json_has_nul(const char *body, size_t len)
{
	size_t i;

	if (memchr(body, 0, len))
		return 1;
	for (i = 0; i + 1 < len; i++) {
		if (body[i] != '\\')
			continue;
		if (body[i + 1] == 'u' && i + 6 <= len && !memcmp(body + i + 2, "0000", 4))
			return 1;
		i++;	/* the escaped character */
	}
	return 0;
}

int gen_req_parse(struct gen_req *r, enum gen_kind kind, const char *body, size_t len,
		  uint32_t vocab_size, struct api_error *e)
{
	struct parse p = { .r = r, .e = e, .vocab = vocab_size };
	cJSON *root;
	int ret;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	if (json_has_nul(body, len)) {
		api_bad(e, NULL, "a string holds a NUL character (\\u0000), which this server "
			"does not take");
		return -1;
	}
	root = cJSON_ParseWithLength(body, len);
	if (!root) {
		api_bad(e, NULL, "the body is not valid JSON");
		return -1;
	}
	if (!cJSON_IsObject(root)) {
		api_bad(e, NULL, "the body must be a JSON object");
		cJSON_Delete(root);
		return -1;
	}
	ret = take_members(&p, kind, root);
	if (!ret)
		ret = check_whole(&p, kind);
	cJSON_Delete(root);
	return ret;
}

void gen_req_release(struct gen_req *r)
{
	cJSON_Delete(r->messages);
	cJSON_Delete(r->tools);
	cJSON_Delete(r->tmpl_vars);
	cJSON_Delete(r->schema);
	if (r->lp) {
		logprobs_release(r->lp);
		free(r->lp);
	}
	if (r->gram) {
		gram_release(r->gram);
		free(r->gram);
	}
	free(r->prompt_text);
	free(r->prompt);
	memset(r, 0, sizeof(*r));
}
