// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_ollama.c - the Ollama API (serve_ollama.h): requests translated to
 * OpenAI's, answers written as Ollama writes them, with cJSON.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chat/chat_template.h"
#include "libcolibri.h"
#include "serve_ollama.h"

/* The Ollama API version answered by /api/version: the one this follows. */
#define OLLAMA_API_VERSION "0.12.0"

/* Options that only tune Ollama's own runner: taken, not used. */
static const char *const runner_options[] = {
	"num_ctx", "num_batch", "num_gpu", "main_gpu", "num_thread", "num_keep", "use_mmap",
	"use_mlock", "numa", "low_vram", "vocab_only", "f16_kv", "logits_all",
};

/* Sampling options there are not here: taken at their neutral value only. */
static const struct {
	const char *name;
	double neutral;
} neutral_options[] = {
	{ "typical_p", 1 }, { "tfs_z", 1 }, { "mirostat", 0 },
};

/* Ollama's window of repeat_penalty when repeat_last_n is not given. */
#define OLLAMA_REPEAT_LAST_N 64

static int bad(struct api_error *e, const char *param, const char *msg)
{
	api_bad(e, param, "%s", msg);
	return -1;
}

static int oom(struct api_error *e)
{
	api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
	return -1;
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

/* "options" into OpenAI's members of @o. */
static int take_options(const cJSON *opts, cJSON *o, enum serve_api api, int *last_n,
			struct api_error *e)
{
	static const char *const passed[] = { "temperature", "top_p", "top_k", "seed", "stop",
					      "presence_penalty", "frequency_penalty", "min_p" };
	const cJSON *it;
	size_t i;

	if (opts && !cJSON_IsObject(opts))
		return bad(e, "options", "options must be an object");
	cJSON_ArrayForEach(it, opts) {
		if (in_list(it->string, passed, sizeof(passed) / sizeof(passed[0]))) {
			if (!cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, 1)))
				return oom(e);
			continue;
		}
		if (!strcmp(it->string, "num_predict")) {
			/* -1: no limit, -2: up to the end of the context: both this server's own */
			if (!cJSON_IsNumber(it) || it->valuedouble < -2 || it->valuedouble == 0 ||
			    it->valuedouble != (double)(long long)it->valuedouble)
				return bad(e, "options", "num_predict must be a positive integer, -1 or -2");
			if (it->valuedouble > 0 &&
			    !cJSON_AddNumberToObject(o, "max_tokens", it->valuedouble))
				return oom(e);
			continue;
		}
		if (!strcmp(it->string, "repeat_penalty")) {
			if (!cJSON_AddItemToObject(o, "repetition_penalty", cJSON_Duplicate(it, 1)))
				return oom(e);
			continue;
		}
		if (!strcmp(it->string, "repeat_last_n")) {
			/* -1: the whole context; 0: none */
			if (!cJSON_IsNumber(it) || it->valuedouble < -1 || it->valuedouble > 1e9 ||
			    it->valuedouble != (double)(long long)it->valuedouble)
				return bad(e, "options", "repeat_last_n must be an integer from -1");
			*last_n = (int)it->valuedouble;
			continue;
		}
		if (in_list(it->string, runner_options,
			    sizeof(runner_options) / sizeof(runner_options[0])))
			continue;
		for (i = 0; i < sizeof(neutral_options) / sizeof(neutral_options[0]); i++)
			if (!strcmp(it->string, neutral_options[i].name))
				break;
		if (i < sizeof(neutral_options) / sizeof(neutral_options[0])) {
			if (!cJSON_IsNumber(it) || it->valuedouble != neutral_options[i].neutral) {
				api_bad(e, "options", "option %s is not supported (only %g)",
					it->string, neutral_options[i].neutral);
				return -1;
			}
			continue;
		}
		api_bad(e, "options", "option %.100s is not supported", it->string);
		return -1;
	}
	/* Ollama's completions run to the end unless num_predict says otherwise */
	if (api == API_OLLAMA_GENERATE && !cJSON_GetObjectItemCaseSensitive(o, "max_tokens") &&
	    !cJSON_AddNumberToObject(o, "max_tokens", SERVE_MAX_TOKENS))
		return oom(e);
	return 0;
}

/* A message of Ollama's as OpenAI's. */
static cJSON *message_of(const cJSON *m, unsigned int *n_call, struct api_error *e)
{
	const cJSON *images = cJSON_GetObjectItemCaseSensitive(m, "images");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls"), *c;
	cJSON *o = cJSON_CreateObject(), *oc;
	const char *keep[] = { "role", "content" };
	size_t i;

	if (!o) {
		oom(e);
		return NULL;
	}
	if (!cJSON_IsObject(m)) {
		bad(e, "messages", "each message must be an object");
		goto fail;
	}
	if (images && !(cJSON_IsArray(images) && !cJSON_GetArraySize(images)) &&
	    !cJSON_IsNull(images)) {
		bad(e, "messages", "images are not supported: the models served here read text");
		goto fail;
	}
	for (i = 0; i < 2; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, keep[i]);

		if (v && !cJSON_AddItemToObject(o, keep[i], cJSON_Duplicate(v, 1)))
			goto nomem;
	}
	c = cJSON_GetObjectItemCaseSensitive(m, "thinking");
	if (cJSON_IsString(c) && !cJSON_AddStringToObject(o, "reasoning_content", c->valuestring))
		goto nomem;
	c = cJSON_GetObjectItemCaseSensitive(m, "tool_name");
	if (cJSON_IsString(c) && !cJSON_AddStringToObject(o, "name", c->valuestring))
		goto nomem;
	if (cJSON_IsArray(calls) && cJSON_GetArraySize(calls)) {
		oc = cJSON_AddArrayToObject(o, "tool_calls");
		if (!oc)
			goto nomem;
		cJSON_ArrayForEach(c, calls) {
			const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, "function");
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "arguments");
			cJSON *call = cJSON_CreateObject(), *fn;
			char id[32], *text;

			if (!call || !cJSON_AddItemToArray(oc, call))
				goto nomem;
			if (!cJSON_IsString(name)) {
				bad(e, "messages", "a tool call needs function.name");
				goto fail;
			}
			snprintf(id, sizeof(id), "call_%u", (*n_call)++);
			text = args ? cJSON_PrintUnformatted(args) : strdup("{}");
			fn = cJSON_CreateObject();
			if (!text || !fn || !cJSON_AddStringToObject(call, "id", id) ||
			    !cJSON_AddStringToObject(call, "type", "function") ||
			    !cJSON_AddItemToObject(call, "function", fn) ||
			    !cJSON_AddStringToObject(fn, "name", name->valuestring) ||
			    !cJSON_AddStringToObject(fn, "arguments", text)) {
				free(text);
				goto nomem;
			}
			free(text);
		}
	}
	return o;
nomem:
	oom(e);
fail:
	cJSON_Delete(o);
	return NULL;
}

/* The conversation: /api/chat's messages, or /api/generate's system and prompt. */
static int take_messages(const cJSON *root, cJSON *o, enum serve_api api, struct api_error *e)
{
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages"), *m;
	const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(root, "prompt");
	const cJSON *sys = cJSON_GetObjectItemCaseSensitive(root, "system");
	cJSON *arr, *one;
	unsigned int n_call = 0;

	if (api == API_OLLAMA_GENERATE) {
		if (!cJSON_IsString(prompt))
			return bad(e, "prompt", "prompt must be a string");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "raw"))) {
			if (sys)
				return bad(e, "system", "a raw prompt takes no system prompt");
			return cJSON_AddStringToObject(o, "prompt", prompt->valuestring) ? 0 : oom(e);
		}
		/* through the model's template, as a user's turn (after the system's) */
		arr = cJSON_AddArrayToObject(o, "messages");
		if (!arr)
			return oom(e);
		if (sys && !cJSON_IsString(sys))
			return bad(e, "system", "system must be a string");
		if (sys) {
			one = cJSON_CreateObject();
			if (!one || !cJSON_AddItemToArray(arr, one) ||
			    !cJSON_AddStringToObject(one, "role", "system") ||
			    !cJSON_AddStringToObject(one, "content", sys->valuestring))
				return oom(e);
		}
		one = cJSON_CreateObject();
		if (!one || !cJSON_AddItemToArray(arr, one) ||
		    !cJSON_AddStringToObject(one, "role", "user") ||
		    !cJSON_AddStringToObject(one, "content", prompt->valuestring))
			return oom(e);
		return 0;
	}
	if (!cJSON_IsArray(msgs))
		return bad(e, "messages", "messages must be an array");
	arr = cJSON_AddArrayToObject(o, "messages");
	if (!arr)
		return oom(e);
	cJSON_ArrayForEach(m, msgs) {
		one = message_of(m, &n_call, e);
		if (!one)
			return -1;
		cJSON_AddItemToArray(arr, one);
	}
	return 0;
}

/* What Ollama has and this server does not: refused unless empty. */
static int refuse_unsupported(const cJSON *root, struct api_error *e)
{
	static const char *const members[] = { "images", "template", "context", "suffix" };
	const cJSON *v;
	size_t i;

	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		v = cJSON_GetObjectItemCaseSensitive(root, members[i]);
		if (v && !cJSON_IsNull(v) && !(cJSON_IsString(v) && !v->valuestring[0]) &&
		    !(cJSON_IsArray(v) && !cJSON_GetArraySize(v))) {
			api_bad(e, members[i], "%s is not supported by this server", members[i]);
			return -1;
		}
	}
	return 0;
}

/* @child into @parent as @key (taken: freed if it cannot be added); 0 when it failed. */
static int add_item(cJSON *parent, const char *key, cJSON *child)
{
	if (!child)
		return 0;
	if (key ? !cJSON_AddItemToObject(parent, key, child) : !cJSON_AddItemToArray(parent, child)) {
		cJSON_Delete(child);
		return 0;
	}
	return 1;
}

/* format: "json" or a JSON Schema, as OpenAI's response_format. */
static int take_format(const cJSON *v, cJSON *o, struct api_error *e)
{
	cJSON *rf, *js;

	if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !v->valuestring[0]))
		return 0;
	if (!(cJSON_IsString(v) && !strcmp(v->valuestring, "json")) && !cJSON_IsObject(v))
		return bad(e, "format", "format must be \"json\" or a JSON Schema object");
	rf = cJSON_AddObjectToObject(o, "response_format");
	if (!rf || !cJSON_AddStringToObject(rf, "type", cJSON_IsString(v) ? "json_object" :
					    "json_schema"))
		return oom(e);
	if (cJSON_IsString(v))
		return 0;
	js = cJSON_AddObjectToObject(rf, "json_schema");
	if (!js || !add_item(js, "schema", cJSON_Duplicate(v, 1)))
		return oom(e);
	return 0;
}

int ollama_req_parse(struct gen_req *r, enum serve_api api, const char *body, size_t len,
		     uint32_t vocab_size, struct api_error *e)
{
	cJSON *root, *o = cJSON_CreateObject(), *kw;
	const cJSON *v;
	char *text = NULL;
	int ret = -1, last_n = OLLAMA_REPEAT_LAST_N;

	memset(r, 0, sizeof(*r));
	if (json_has_nul(body, len)) {
		cJSON_Delete(o);
		return bad(e, NULL, "a string holds a NUL character (\\u0000), which this server "
			   "does not take");
	}
	root = cJSON_ParseWithLength(body, len);
	if (!o) {
		oom(e);
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		bad(e, NULL, root ? "the body must be a JSON object" : "the body is not valid JSON");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "model");
	if (!cJSON_IsString(v) || !v->valuestring[0]) {
		bad(e, "model", "model is required");
		goto out;
	}
	if (!cJSON_AddStringToObject(o, "model", v->valuestring)) {
		oom(e);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "stream");
	if (v && !cJSON_IsBool(v)) {
		bad(e, "stream", "stream must be a boolean");
		goto out;
	}
	/* Ollama streams unless told not to */
	if (!cJSON_AddBoolToObject(o, "stream", !cJSON_IsFalse(v))) {
		oom(e);
		goto out;
	}
	if (refuse_unsupported(root, e) || take_messages(root, o, api, e) ||
	    take_format(cJSON_GetObjectItemCaseSensitive(root, "format"), o, e) ||
	    take_options(cJSON_GetObjectItemCaseSensitive(root, "options"), o, api, &last_n, e))
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(root, "tools");
	if (v && !cJSON_IsNull(v) && api == API_OLLAMA_CHAT &&
	    !cJSON_AddItemToObject(o, "tools", cJSON_Duplicate(v, 1))) {
		oom(e);
		goto out;
	}
	/* think: true/false as Qwen3's enable_thinking; "low".."high" as reasoning_effort */
	v = cJSON_GetObjectItemCaseSensitive(root, "think");
	if (cJSON_IsBool(v)) {
		kw = cJSON_AddObjectToObject(o, "chat_template_kwargs");
		if (!kw || !cJSON_AddBoolToObject(kw, "enable_thinking", cJSON_IsTrue(v))) {
			oom(e);
			goto out;
		}
	} else if (cJSON_IsString(v)) {
		if (!cJSON_AddStringToObject(o, "reasoning_effort", v->valuestring)) {
			oom(e);
			goto out;
		}
	} else if (v && !cJSON_IsNull(v)) {
		bad(e, "think", "think must be a boolean or \"low\", \"medium\", \"high\"");
		goto out;
	}
	text = cJSON_PrintUnformatted(o);
	if (!text) {
		oom(e);
		goto out;
	}
	ret = gen_req_parse(r, cJSON_GetObjectItemCaseSensitive(o, "prompt") ? GEN_COMPLETION :
			    GEN_CHAT, text, strlen(text), vocab_size, e);
	r->api = api;
	if (!ret && last_n == 0)
		r->lr.repetition = 1;	/* a window of nothing: no penalty */
	else if (!ret)
		r->lr.repeat_last_n = last_n;
out:
	free(text);
	cJSON_Delete(o);
	cJSON_Delete(root);
	return ret;
}

int ollama_model_is(const struct serve *srv, const char *model)
{
	size_t n = strlen(srv->name);

	return !strncmp(model, srv->name, n) && (!model[n] || !strcmp(model + n, ":latest"));
}

struct serve *serve_model(struct serve *srv, const char *name, int ollama)
{
	int i;

	for (i = 0; i < srv->n_all; i++)
		if (ollama ? ollama_model_is(&srv->all[i], name) : !strcmp(name, srv->all[i].name))
			return &srv->all[i];
	return NULL;
}

static char *print(cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	return s;
}

char *ollama_error(const char *msg)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddStringToObject(o, "error", msg)) {
		cJSON_Delete(o);
		return NULL;
	}
	return print(o);
}

/* "2026-12-07T10:59:00.123456789Z": now, as Ollama's created_at. */
static void now_rfc3339(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char day[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09ldZ", day, ts.tv_nsec);
}

/* {"model", "created_at"}: every answer and line begins so. */
static cJSON *head(const struct serve *srv)
{
	cJSON *o = cJSON_CreateObject();
	char at[48];

	now_rfc3339(at, sizeof(at));
	if (o && (!cJSON_AddStringToObject(o, "model", srv->name) ||
		  !cJSON_AddStringToObject(o, "created_at", at))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static const char *sb(const struct cb_sbuf *b)
{
	return b->p ? b->p : "";
}

/* A tool call's arguments: the object they are, or their text if they are none. */
static cJSON *args_of(const struct cb_sbuf *args)
{
	cJSON *a = args->n ? cJSON_ParseWithLength(args->p, args->n) : cJSON_CreateObject();

	if (cJSON_IsObject(a))
		return a;
	cJSON_Delete(a);
	return cJSON_CreateString(args->p ? args->p : "");
}

/* {"role": "assistant", "content", "thinking"?, "tool_calls"?} */
static cJSON *message(const char *content, size_t n, const char *thinking, size_t tn,
		      const struct gen_answer *calls)
{
	cJSON *m = cJSON_CreateObject(), *arr, *c, *f;
	char *text = malloc(n + 1), *think = malloc(tn + 1);
	unsigned int i;
	int ok = m && text && think;

	if (ok) {
		memcpy(text, content, n);
		text[n] = 0;
		memcpy(think, thinking, tn);
		think[tn] = 0;
		ok = cJSON_AddStringToObject(m, "role", "assistant") &&
		     cJSON_AddStringToObject(m, "content", text) &&
		     (!tn || cJSON_AddStringToObject(m, "thinking", think));
	}
	if (ok && calls && calls->n_calls) {
		arr = cJSON_AddArrayToObject(m, "tool_calls");
		ok = arr != NULL;
		for (i = 0; ok && i < calls->n_calls; i++) {
			c = cJSON_CreateObject();
			ok = add_item(arr, NULL, c) && (f = cJSON_AddObjectToObject(c, "function")) &&
			     cJSON_AddStringToObject(f, "name", sb(&calls->calls[i].name)) &&
			     add_item(f, "arguments", args_of(&calls->calls[i].args));
		}
	}
	free(text);
	free(think);
	if (!ok) {
		cJSON_Delete(m);
		return NULL;
	}
	return m;
}

/* done, done_reason, and the counts and durations (nanoseconds) of a finished answer. */
static int add_done(cJSON *o, const struct gen_result *res)
{
	double first = res->t_first > 0 ? res->t_first : res->t_end;

	return cJSON_AddBoolToObject(o, "done", 1) &&
	       cJSON_AddStringToObject(o, "done_reason",
				       !strcmp(res->finish, "length") ? "length" : "stop") &&
	       cJSON_AddNumberToObject(o, "total_duration",
				       (double)(long long)((res->t_end - res->t_start) * 1e9)) &&
	       cJSON_AddNumberToObject(o, "load_duration", 0) &&
	       cJSON_AddNumberToObject(o, "prompt_eval_count", res->prompt_tokens) &&
	       cJSON_AddNumberToObject(o, "prompt_eval_duration",
				       (double)(long long)((first - res->t_start) * 1e9)) &&
	       cJSON_AddNumberToObject(o, "eval_count", res->completion_tokens) &&
	       cJSON_AddNumberToObject(o, "eval_duration",
				       (double)(long long)((res->t_end - first) * 1e9));
}

char *ollama_answer(const struct serve *srv, const struct gen_req *r,
		    const struct gen_answer *a, const struct gen_result *res)
{
	cJSON *o = head(srv), *m;
	int ok = o != NULL;

	if (ok && r->api == API_OLLAMA_CHAT) {
		m = message(sb(&a->content), a->content.n, sb(&a->reasoning), a->reasoning.n, a);
		ok = add_item(o, "message", m);
	} else if (ok) {
		ok = cJSON_AddStringToObject(o, "response", sb(&a->content)) &&
		     (!a->reasoning.n || cJSON_AddStringToObject(o, "thinking", sb(&a->reasoning)));
	}
	if (!ok || !add_done(o, res)) {
		cJSON_Delete(o);
		return NULL;
	}
	return print(o);
}

char *ollama_chunk(const struct serve *srv, const struct gen_req *r, enum text_part part,
		   const char *s, size_t n)
{
	cJSON *o = head(srv), *m = NULL;
	char *text = malloc(n + 1);
	int ok = o && text, think = part == PART_REASONING;

	if (ok) {
		memcpy(text, s, n);
		text[n] = 0;
	}
	if (ok && r->api == API_OLLAMA_CHAT) {
		m = message(think ? "" : s, think ? 0 : n, think ? s : "", think ? n : 0, NULL);
		ok = add_item(o, "message", m);
	} else if (ok) {
		ok = cJSON_AddStringToObject(o, "response", think ? "" : text) &&
		     (!think || cJSON_AddStringToObject(o, "thinking", text));
	}
	ok = ok && cJSON_AddBoolToObject(o, "done", 0);
	free(text);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return print(o);
}

char *ollama_calls_chunk(const struct serve *srv, const struct gen_req *r,
			 const struct gen_answer *a)
{
	cJSON *o = head(srv);

	if (!o || !add_item(o, "message", message("", 0, "", 0, a)) ||
	    !cJSON_AddBoolToObject(o, "done", 0)) {
		cJSON_Delete(o);
		return NULL;
	}
	return print(o);
}

char *ollama_done(const struct serve *srv, const struct gen_req *r, const struct gen_result *res)
{
	cJSON *o = head(srv), *m;
	int ok = o != NULL;

	if (ok && r->api == API_OLLAMA_CHAT) {
		m = message("", 0, "", 0, NULL);
		ok = add_item(o, "message", m);
	} else if (ok) {
		ok = cJSON_AddStringToObject(o, "response", "") != NULL;
	}
	if (!ok || !add_done(o, res)) {
		cJSON_Delete(o);
		return NULL;
	}
	return print(o);
}

/* "details" of the model, as /api/tags and /api/show give them. */
static cJSON *details(const struct serve *srv)
{
	const char *arch = colibri_arch_name(srv->mi->arch);
	cJSON *d = cJSON_CreateObject(), *fam;

	if (!d || !cJSON_AddStringToObject(d, "parent_model", "") ||
	    !cJSON_AddStringToObject(d, "format", "colibri") ||
	    !cJSON_AddStringToObject(d, "family", arch ? arch : "") ||
	    !(fam = cJSON_AddArrayToObject(d, "families")) ||
	    !add_item(fam, NULL, cJSON_CreateString(arch ? arch : "")) ||
	    !cJSON_AddStringToObject(d, "parameter_size", "") ||
	    !cJSON_AddStringToObject(d, "quantization_level", "")) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

char *ollama_tags(const struct serve *srv)
{
	cJSON *o = cJSON_CreateObject(), *arr, *m;
	const struct serve *one;
	char name[80], at[48];
	struct tm tm;
	int i;

	gmtime_r(&srv->created, &tm);
	strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	arr = o ? cJSON_AddArrayToObject(o, "models") : NULL;
	for (i = 0; i < srv->n_all; i++) {
		one = &srv->all[i];
		snprintf(name, sizeof(name), "%s:latest", one->name);
		m = arr ? cJSON_CreateObject() : NULL;
		if (!add_item(arr, NULL, m) ||
		    !cJSON_AddStringToObject(m, "name", name) ||
		    !cJSON_AddStringToObject(m, "model", name) ||
		    !cJSON_AddStringToObject(m, "modified_at", at) ||
		    !cJSON_AddNumberToObject(m, "size", 0) ||
		    !cJSON_AddStringToObject(m, "digest", "") ||
		    !add_item(m, "details", details(one))) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return print(o);
}

char *ollama_show(const struct serve *srv)
{
	const char *arch = colibri_arch_name(srv->mi->arch);
	cJSON *o = cJSON_CreateObject(), *info, *caps;
	char key[96];

	snprintf(key, sizeof(key), "%s.context_length", arch ? arch : "model");
	info = o ? cJSON_AddObjectToObject(o, "model_info") : NULL;
	caps = o ? cJSON_AddArrayToObject(o, "capabilities") : NULL;
	if (!info || !caps || !cJSON_AddStringToObject(o, "modelfile", "") ||
	    !cJSON_AddStringToObject(o, "parameters", "") ||
	    !cJSON_AddStringToObject(o, "template", srv->chat->tmpl ? srv->chat->tmpl : "") ||
	    !add_item(o, "details", details(srv)) ||
	    !cJSON_AddStringToObject(info, "general.architecture", arch ? arch : "") ||
	    !cJSON_AddNumberToObject(info, key, srv->max_context) ||
	    !add_item(caps, NULL, cJSON_CreateString("completion")) ||
	    (srv->format != FORMAT_PLAIN && !add_item(caps, NULL, cJSON_CreateString("tools"))) ||
	    (srv->format != FORMAT_PLAIN && !add_item(caps, NULL, cJSON_CreateString("thinking")))) {
		cJSON_Delete(o);
		return NULL;
	}
	return print(o);
}

char *ollama_version(void)
{
	return strdup("{\"version\":\"" OLLAMA_API_VERSION "\"}");
}
