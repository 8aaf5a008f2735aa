// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_call_syntax.c - the template families' tool-call tags, and call
 * blocks read back into calls (serve_call_syntax.h).
 */
#include <stdlib.h>
#include <string.h>

#include "serve_call_syntax.h"

static const char *const hermes_marks[] = {
	"<tool_call>", "</tool_call>", "<think>", "</think>", NULL
};

static const char *const llama3_marks[] = { "<|python_tag|>", "<|eom_id|>", NULL };

static const char *const mistral_marks[] = { "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", NULL };

static const char *const deepseek_marks[] = {
	DS_CALLS_BEGIN, DS_CALLS_END, DS_CALL_BEGIN, DS_CALL_END, DS_SEP,
	"<think>", "</think>", NULL
};

static const char *const glm_marks[] = {
	"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
	"<think>", "</think>", NULL
};

static const char *const kimi_marks[] = {
	KIMI_CALLS_BEGIN, KIMI_CALLS_END, KIMI_CALL_BEGIN, KIMI_ARGS_BEGIN, KIMI_CALL_END,
	"<think>", "</think>", NULL
};

static const struct call_syntax syntaxes[CALLS_N] = {
	[CALLS_HERMES] = { "Hermes", "<tool_call>", "</tool_call>", hermes_marks, 0, 1 },
	[CALLS_LLAMA3] = { "Llama 3.x", "<|python_tag|>", "<|eom_id|>", llama3_marks, 1, 0 },
	[CALLS_MISTRAL] = { "Mistral", "[TOOL_CALLS]", NULL, mistral_marks, 0, 0 },
	[CALLS_DEEPSEEK] = { "DeepSeek", DS_CALLS_BEGIN, DS_CALLS_END, deepseek_marks, 0, 1 },
	[CALLS_GLM] = { "GLM", "<tool_call>", "</tool_call>", glm_marks, 0, 1 },
	[CALLS_KIMI] = { "Kimi-K2", KIMI_CALLS_BEGIN, KIMI_CALLS_END, kimi_marks, 0, 1 },
};

const struct call_syntax *call_syntax(enum call_family f)
{
	return f < CALLS_N ? &syntaxes[f] : NULL;
}

int call_family_of(const char *t)
{
	if (!t)
		return -1;
	/* the most particular tags first: GLM's and DeepSeek's blocks hold others' */
	if (strstr(t, KIMI_CALLS_BEGIN))
		return CALLS_KIMI;
	if (strstr(t, DS_CALLS_BEGIN))
		return CALLS_DEEPSEEK;
	if (strstr(t, "<arg_key>"))
		return CALLS_GLM;
	if (strstr(t, "[TOOL_CALLS]"))
		return CALLS_MISTRAL;
	if (strstr(t, "<|python_tag|>") ||
	    (strstr(t, "<|start_header_id|>") && strstr(t, "ipython")))
		return CALLS_LLAMA3;
	if ((strstr(t, "<tool_call>") && strstr(t, "</tool_call>")) ||
	    (strstr(t, "<think>") && strstr(t, "</think>")))
		return CALLS_HERMES;
	return -1;
}

int call_syntax_is_mark(const struct call_syntax *syn, const char *s, size_t n)
{
	const char *const *m;

	for (m = syn->marks; *m; m++)
		if (strlen(*m) == n && !memcmp(*m, s, n))
			return 1;
	return 0;
}

/* --- reading calls back ------------------------------------------------------------------- */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* @s (@n bytes) without the whitespace around it. */
static void trim(const char **s, size_t *n)
{
	while (*n && is_space(**s))
		(*s)++, (*n)--;
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
}

/* Where @tag starts in @s (@n bytes), or NULL. */
static const char *find(const char *s, size_t n, const char *tag)
{
	return memmem(s, n, tag, strlen(tag));
}

/*
 * A call into @calls: @name (@nn bytes) and @args, an object or a string
 * holding one.  0, 1 (not a call: empty name, arguments of another kind)
 * or -1.
 */
static int add_call(cJSON *calls, const char *name, size_t nn, const cJSON *args)
{
	cJSON *c, *inner;
	char *text, *nm;
	int r;

	if (!nn || memchr(name, 0, nn))
		return 1;
	if (cJSON_IsObject(args)) {
		text = cJSON_PrintUnformatted(args);
	} else if (cJSON_IsString(args)) {
		/* arguments already as JSON text (some templates write them so) */
		inner = cJSON_Parse(args->valuestring);
		if (!cJSON_IsObject(inner)) {
			cJSON_Delete(inner);
			return 1;
		}
		cJSON_Delete(inner);
		text = strdup(args->valuestring);
	} else {
		return 1;
	}
	nm = strndup(name, nn);
	c = cJSON_CreateObject();
	r = text && nm && c && cJSON_AddStringToObject(c, "name", nm) &&
	    cJSON_AddStringToObject(c, "arguments", text) ? 0 : -1;
	if (!r && !cJSON_AddItemToArray(calls, c))
		r = -1;
	if (r)
		cJSON_Delete(c);
	free(text);
	free(nm);
	return r;
}

/* A call of @name (@nn bytes) whose arguments are the JSON text @a (@an bytes, trimmed here). */
static int add_text_call(cJSON *calls, const char *name, size_t nn, const char *a, size_t an)
{
	cJSON *args;
	int r;

	trim(&a, &an);
	args = cJSON_ParseWithLength(a, an);
	r = args ? add_call(calls, name, nn, args) : 1;
	cJSON_Delete(args);
	return r;
}

/* A call as JSON: {"name": N, "arguments" or "parameters": ...}. */
static int add_json_call(cJSON *calls, const cJSON *o)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "arguments");

	if (!args)
		args = cJSON_GetObjectItemCaseSensitive(o, "parameters");
	if (!cJSON_IsObject(o) || !cJSON_IsString(name) || !args)
		return 1;
	return add_call(calls, name->valuestring, strlen(name->valuestring), args);
}

/*
 * JSON calls: objects, or arrays of them, one after the other (whitespace,
 * ';' or ',' between).
 */
static int json_calls(const char *s, size_t n, cJSON *calls)
{
	const char *end;
	cJSON *v, *e;
	size_t i = 0;
	int r;

	for (;;) {
		while (i < n && (is_space(s[i]) || s[i] == ';' || s[i] == ','))
			i++;
		if (i == n)
			return cJSON_GetArraySize(calls) ? 0 : 1;
		if (s[i] != '{' && s[i] != '[')
			return 1;
		v = cJSON_ParseWithLengthOpts(s + i, n - i, &end, 0);
		if (!v)
			return 1;
		r = 0;
		if (cJSON_IsArray(v)) {
			cJSON_ArrayForEach(e, v) {
				r = add_json_call(calls, e);
				if (r)
					break;
			}
			if (!cJSON_GetArraySize(v))
				r = 1;
		} else {
			r = add_json_call(calls, v);
		}
		cJSON_Delete(v);
		if (r)
			return r;
		i = (size_t)(end - s);
	}
}

/*
 * Mistral: a JSON array (or objects), or NAME[ARGS]{...} calls, each
 * after the first one led by its own [TOOL_CALLS] ([CALL_ID]ID may come
 * before [ARGS]).
 */
static int mistral_calls(const char *s, size_t n, cJSON *calls)
{
	const char *name, *a, *id, *next, *end = s + n;
	size_t nn;
	int r;

	trim(&s, &n);
	if (n && (s[0] == '[' || s[0] == '{'))
		return json_calls(s, n, calls);
	while (s < end) {
		next = find(s, (size_t)(end - s), "[TOOL_CALLS]");
		if (!next)
			next = end;
		a = find(s, (size_t)(next - s), "[ARGS]");
		if (!a)
			return 1;
		name = s;
		id = find(s, (size_t)(a - s), "[CALL_ID]");
		nn = (size_t)((id ? id : a) - s);
		trim(&name, &nn);
		a += strlen("[ARGS]");
		r = add_text_call(calls, name, nn, a, (size_t)(next - a));
		if (r)
			return r;
		s = next == end ? end : next + strlen("[TOOL_CALLS]");
	}
	return cJSON_GetArraySize(calls) ? 0 : 1;
}

/* One DeepSeek call (between its begin and end tags). */
static int deepseek_call(const char *s, size_t n, cJSON *calls)
{
	const char *sep = find(s, n, DS_SEP), *name, *a, *fence;
	size_t nn, an;

	if (!sep)
		return 1;
	a = sep + strlen(DS_SEP);
	an = (size_t)(s + n - a);
	fence = find(a, an, "```json");
	if (fence) {
		/* V3: TYPE<sep>NAME\n```json\nARGS\n``` */
		name = a;
		nn = (size_t)(fence - a);
		a = fence + strlen("```json");
		an = (size_t)(s + n - a);
		trim(&a, &an);
		if (an < 3 || memcmp(a + an - 3, "```", 3))
			return 1;
		an -= 3;
	} else {
		/* V3.1: NAME<sep>ARGS */
		name = s;
		nn = (size_t)(sep - s);
	}
	trim(&name, &nn);
	return add_text_call(calls, name, nn, a, an);
}

static int deepseek_calls(const char *s, size_t n, cJSON *calls)
{
	const char *b, *e, *end = s + n;
	int r;

	for (;;) {
		trim(&s, &n);
		if (!n)
			return cJSON_GetArraySize(calls) ? 0 : 1;
		if (n < strlen(DS_CALL_BEGIN) || memcmp(s, DS_CALL_BEGIN, strlen(DS_CALL_BEGIN)))
			return 1;
		b = s + strlen(DS_CALL_BEGIN);
		e = find(b, (size_t)(end - b), DS_CALL_END);
		if (!e)
			return 1;
		r = deepseek_call(b, (size_t)(e - b), calls);
		if (r)
			return r;
		s = e + strlen(DS_CALL_END);
		n = (size_t)(end - s);
	}
}

/* Whether tool @name's parameter @key is a string (by the request's tools). */
static int string_param(const cJSON *tools, const char *name, const char *key)
{
	const cJSON *t, *fn, *nm, *p, *ty;

	cJSON_ArrayForEach(t, tools) {
		fn = cJSON_GetObjectItemCaseSensitive(t, "function");
		nm = cJSON_GetObjectItemCaseSensitive(fn, "name");
		if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name))
			continue;
		p = cJSON_GetObjectItemCaseSensitive(fn, "parameters");
		p = cJSON_GetObjectItemCaseSensitive(p, "properties");
		p = cJSON_GetObjectItemCaseSensitive(p, key);
		ty = cJSON_GetObjectItemCaseSensitive(p, "type");
		return cJSON_IsString(ty) && !strcmp(ty->valuestring, "string");
	}
	return 0;
}

/* Take tag @tag (whitespace before it skipped) at *@s: 1 when there. */
static int take_tag(const char **s, const char *end, const char *tag)
{
	size_t t = strlen(tag);

	while (*s < end && is_space(**s))
		(*s)++;
	if ((size_t)(end - *s) < t || memcmp(*s, tag, t))
		return 0;
	*s += t;
	return 1;
}

/*
 * GLM: NAME, then <arg_key>K</arg_key><arg_value>V</arg_value> pairs; V
 * a string as it is when the tool says so (or when it is not JSON), else
 * JSON.
 */
static int glm_call(const char *s, size_t n, const cJSON *tools, cJSON *calls)
{
	const char *end = s + n, *name = s, *k, *ke, *v, *ve;
	cJSON *args = cJSON_CreateObject(), *val;
	char *key = NULL, *nm = NULL;
	size_t nn;
	int r = 1;

	k = find(s, n, "<arg_key>");
	nn = (size_t)((k ? k : end) - s);
	trim(&name, &nn);
	nm = strndup(name, nn);
	if (!args || !nm) {
		r = -1;
		goto out;
	}
	s = k ? k : end;
	while (take_tag(&s, end, "<arg_key>")) {
		ke = find(s, (size_t)(end - s), "</arg_key>");
		if (!ke)
			goto out;
		k = s;
		s = ke + strlen("</arg_key>");
		if (!take_tag(&s, end, "<arg_value>"))
			goto out;
		v = s;
		ve = find(s, (size_t)(end - s), "</arg_value>");
		if (!ve)
			goto out;
		s = ve + strlen("</arg_value>");
		free(key);
		key = strndup(k, (size_t)(ke - k));
		if (!key) {
			r = -1;
			goto out;
		}
		val = NULL;
		if (!string_param(tools, nm, key))
			val = cJSON_ParseWithLength(v, (size_t)(ve - v));
		if (!val) {
			char *str = strndup(v, (size_t)(ve - v));

			val = str ? cJSON_CreateString(str) : NULL;
			free(str);
		}
		if (!val || !cJSON_AddItemToObject(args, key, val)) {
			cJSON_Delete(val);
			r = -1;
			goto out;
		}
	}
	while (s < end && is_space(*s))
		s++;
	if (s == end)
		r = add_call(calls, name, nn, args);
out:
	free(key);
	free(nm);
	cJSON_Delete(args);
	return r;
}

/*
 * Kimi-K2: per call <|tool_call_begin|>ID<|tool_call_argument_begin|>ARGS
 * <|tool_call_end|>, ID "functions.NAME:INDEX" (the name alone is taken
 * too).
 */
static int kimi_calls(const char *s, size_t n, cJSON *calls)
{
	const char *end = s + n, *id, *a, *e, *colon;
	size_t idn;
	int r;

	for (;;) {
		if (!take_tag(&s, end, KIMI_CALL_BEGIN)) {
			while (s < end && is_space(*s))
				s++;
			return s == end && cJSON_GetArraySize(calls) ? 0 : 1;
		}
		a = find(s, (size_t)(end - s), KIMI_ARGS_BEGIN);
		e = a ? find(a, (size_t)(end - a), KIMI_CALL_END) : NULL;
		if (!e)
			return 1;
		id = s;
		idn = (size_t)(a - s);
		trim(&id, &idn);
		if (idn > 10 && !memcmp(id, "functions.", 10))
			id += 10, idn -= 10;
		/* ":INDEX" off the end */
		for (colon = id + idn; colon > id && colon[-1] >= '0' && colon[-1] <= '9'; colon--)
			;
		if (colon > id && colon < id + idn && colon[-1] == ':')
			idn = (size_t)(colon - 1 - id);
		a += strlen(KIMI_ARGS_BEGIN);
		r = add_text_call(calls, id, idn, a, (size_t)(e - a));
		if (r)
			return r;
		s = e + strlen(KIMI_CALL_END);
	}
}

int call_decode(enum call_family f, const char *s, size_t n, const cJSON *tools,
		cJSON **calls)
{
	int r;

	*calls = cJSON_CreateArray();
	if (!*calls)
		return -1;
	switch (f) {
	case CALLS_HERMES:
	case CALLS_LLAMA3:
		r = json_calls(s, n, *calls);
		break;
	case CALLS_MISTRAL:
		r = mistral_calls(s, n, *calls);
		break;
	case CALLS_DEEPSEEK:
		r = deepseek_calls(s, n, *calls);
		break;
	case CALLS_GLM:
		r = glm_call(s, n, tools, *calls);
		break;
	case CALLS_KIMI:
		r = kimi_calls(s, n, *calls);
		break;
	default:
		r = 1;
		break;
	}
	if (r) {
		cJSON_Delete(*calls);
		*calls = NULL;
	}
	return r;
}
