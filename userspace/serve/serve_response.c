// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_response.c - the JSON the server answers with, in OpenAI's shapes:
 * chat.completion and text_completion objects, their stream chunks,
 * errors, the model list.
 *
 * Written by hand rather than through cJSON: generated text may hold any
 * byte a token decodes to, NUL included, which a C string (and so cJSON)
 * would cut; here every string is escaped from its length.  The text is
 * valid UTF-8 (the streaming decoder makes sure of it) and goes through
 * as it is, control characters escaped as \uXXXX.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "serve.h"
#include "util.h"

/* A JSON text being written; @oom once memory ran out (then it is dropped). */
struct jb {
	struct cb_sbuf b;
	int oom;
};

static void jb_add(struct jb *j, const char *s, size_t n)
{
	if (!j->oom && cb_sbuf_add(&j->b, s, n))
		j->oom = 1;
}

static void jb_raw(struct jb *j, const char *s)
{
	jb_add(j, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) jb_printf(struct jb *j, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	if (n > 0)
		jb_add(j, buf, (size_t)n);
}

/* @s[@n] as a JSON string. */
static void jb_str(struct jb *j, const char *s, size_t n)
{
	size_t i, run = 0;
	char esc[8];

	jb_add(j, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = NULL;

		if (c == '"')
			e = "\\\"";
		else if (c == '\\')
			e = "\\\\";
		else if (c == '\n')
			e = "\\n";
		else if (c == '\r')
			e = "\\r";
		else if (c == '\t')
			e = "\\t";
		else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			e = esc;
		}
		if (!e)
			continue;
		jb_add(j, s + run, i - run);
		jb_raw(j, e);
		run = i + 1;
	}
	jb_add(j, s + run, n - run);
	jb_add(j, "\"", 1);
}

static void jb_cstr(struct jb *j, const char *s)
{
	if (s)
		jb_str(j, s, strlen(s));
	else
		jb_raw(j, "null");
}

static char *jb_done(struct jb *j)
{
	if (j->oom || !j->b.p) {
		free(j->b.p);
		return NULL;
	}
	return j->b.p;
}

char *resp_error(const struct api_error *e)
{
	struct jb j = { 0 };

	jb_raw(&j, "{\"error\": {\"message\": ");
	jb_cstr(&j, e->msg);
	jb_raw(&j, ", \"type\": ");
	jb_cstr(&j, e->type);
	jb_raw(&j, ", \"param\": ");
	jb_cstr(&j, e->param);
	jb_raw(&j, ", \"code\": ");
	jb_cstr(&j, e->code);
	jb_raw(&j, "}}\n");
	return jb_done(&j);
}

static void model_object(struct jb *j, const struct serve *srv)
{
	jb_raw(j, "{\"id\": ");
	jb_cstr(j, srv->name);
	jb_printf(j, ", \"object\": \"model\", \"created\": %lld, \"owned_by\": \"colibri\"}",
		  (long long)srv->created);
}

char *resp_model(const struct serve *srv)
{
	struct jb j = { 0 };

	model_object(&j, srv);
	jb_raw(&j, "\n");
	return jb_done(&j);
}

char *resp_models(const struct serve *srv)
{
	struct jb j = { 0 };

	jb_raw(&j, "{\"object\": \"list\", \"data\": [");
	model_object(&j, srv);
	jb_raw(&j, "]}\n");
	return jb_done(&j);
}

void resp_head_init(struct resp_head *h, enum gen_kind kind, const char *model)
{
	static atomic_uint count;
	uint64_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint64_t)time(NULL);
	snprintf(h->id, sizeof(h->id), "%s%016llx%08x", kind == GEN_CHAT ? "chatcmpl-" : "cmpl-",
		 (unsigned long long)r, atomic_fetch_add(&count, 1));
	h->created = time(NULL);
	h->model = model;
}

static void head(struct jb *j, const struct resp_head *h, const char *object)
{
	jb_raw(j, "{\"id\": ");
	jb_cstr(j, h->id);
	jb_printf(j, ", \"object\": \"%s\", \"created\": %lld, \"model\": ", object,
		  (long long)h->created);
	jb_cstr(j, h->model);
}

static void usage(struct jb *j, const struct gen_result *res)
{
	jb_printf(j, "{\"prompt_tokens\": %u, \"completion_tokens\": %u, \"total_tokens\": %u}",
		  res->prompt_tokens, res->completion_tokens,
		  res->prompt_tokens + res->completion_tokens);
}

char *resp_completion(const struct resp_head *h, enum gen_kind kind, const char *text,
		      size_t len, const struct gen_result *res)
{
	struct jb j = { 0 };

	if (kind == GEN_CHAT) {
		head(&j, h, "chat.completion");
		jb_raw(&j, ", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": ");
		jb_str(&j, text ? text : "", len);
		jb_raw(&j, ", \"refusal\": null}, \"logprobs\": null, \"finish_reason\": ");
	} else {
		head(&j, h, "text_completion");
		jb_raw(&j, ", \"choices\": [{\"text\": ");
		jb_str(&j, text ? text : "", len);
		jb_raw(&j, ", \"index\": 0, \"logprobs\": null, \"finish_reason\": ");
	}
	jb_cstr(&j, res->finish);
	jb_raw(&j, "}], \"usage\": ");
	usage(&j, res);
	jb_raw(&j, "}\n");
	return jb_done(&j);
}

char *resp_chunk(const struct resp_head *h, enum gen_kind kind, int first, const char *text,
		 size_t len, const char *finish, int with_usage, const struct gen_result *res)
{
	struct jb j = { 0 };

	head(&j, h, kind == GEN_CHAT ? "chat.completion.chunk" : "text_completion");
	if (with_usage > 0) {
		/* The last chunk of stream_options.include_usage: no choice, the usage. */
		jb_raw(&j, ", \"choices\": [], \"usage\": ");
		usage(&j, res);
		jb_raw(&j, "}");
		return jb_done(&j);
	}
	if (kind == GEN_CHAT) {
		jb_raw(&j, ", \"choices\": [{\"index\": 0, \"delta\": {");
		if (first)
			jb_raw(&j, "\"role\": \"assistant\"");
		if (text) {
			jb_raw(&j, first ? ", \"content\": " : "\"content\": ");
			jb_str(&j, text, len);
		}
		jb_raw(&j, "}, \"logprobs\": null, \"finish_reason\": ");
	} else {
		jb_raw(&j, ", \"choices\": [{\"text\": ");
		jb_str(&j, text ? text : "", text ? len : 0);
		jb_raw(&j, ", \"index\": 0, \"logprobs\": null, \"finish_reason\": ");
	}
	jb_cstr(&j, finish);
	jb_raw(&j, "}]");
	if (!with_usage)
		jb_raw(&j, ", \"usage\": null");
	jb_raw(&j, "}");
	return jb_done(&j);
}
