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
 * as it is, control characters escaped as \uXXXX.  A harmony chat answer's
 * message says "reasoning_content" and "tool_calls" too, its chunks carry
 * them as deltas (docs/serve.md).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "serve.h"
#include "serve_logprobs.h"
#include "tokenizer.h"
#include "util/util.h"

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

/* Bytes @s[@n] as a JSON string, each byte that is not part of valid UTF-8 as U+FFFD. */
static void jb_utf8(struct jb *j, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	char *t = malloc(3 * n + 1);
	size_t i = 0, o = 0, len, k;

	if (!t) {
		j->oom = 1;
		return;
	}
	while (i < n) {
		len = u[i] < 0x80 ? 1 : (u[i] & 0xe0) == 0xc0 && u[i] >= 0xc2 ? 2 :
		      (u[i] & 0xf0) == 0xe0 ? 3 : (u[i] & 0xf8) == 0xf0 && u[i] <= 0xf4 ? 4 : 0;
		for (k = 1; len && k < len; k++)
			if (i + k >= n || (u[i + k] & 0xc0) != 0x80)
				len = 0;
		if (!len) {
			memcpy(t + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(t + o, s + i, len);
		o += len;
		i += len;
	}
	jb_str(j, t, o);
	free(t);
}

/* A log-probability; -inf as OpenAI writes it (-9999.0). */
static void lp_num(struct jb *j, float v)
{
	if (v > -9999.0f)
		jb_printf(j, "%.6g", v);
	else
		jb_raw(j, "-9999.0");
}

/* A token's text, and with @bytes its bytes: "token": "...", "bytes": [...] */
static void lp_token(struct jb *j, const struct cb_tokenizer *tok, int32_t id, int bytes)
{
	size_t n = 0, i;
	const char *p = cb_tok_piece(tok, id, &n);

	jb_raw(j, "\"token\": ");
	jb_utf8(j, p ? p : "", n);
	if (!bytes)
		return;
	jb_raw(j, ", \"bytes\": [");
	for (i = 0; i < n; i++)
		jb_printf(j, "%s%u", i ? ", " : "", (unsigned char)p[i]);
	jb_raw(j, "]");
}

/*
 * The logprobs of the tokens not yet written (h->lp->sent on), marked
 * written: chat's {"content": [...]}, a completion's {"tokens", ...}; null
 * without logprobs.
 */
static void logprobs(struct jb *j, const struct resp_head *h, enum gen_kind kind)
{
	struct gen_logprobs *lp = h->lp;
	size_t i, from;
	uint32_t k;
	int f;

	if (!lp) {
		jb_raw(j, "null");
		return;
	}
	from = lp->sent;
	if (kind == GEN_CHAT) {
		jb_raw(j, "{\"content\": [");
		for (i = from; i < lp->n; i++) {
			jb_raw(j, i > from ? ", {" : "{");
			lp_token(j, h->tok, lp->rec[i].token, 1);
			jb_raw(j, ", \"logprob\": ");
			lp_num(j, lp->rec[i].logprob);
			jb_raw(j, ", \"top_logprobs\": [");
			for (k = 0; k < lp->rec[i].n_top; k++) {
				jb_raw(j, k ? ", {" : "{");
				lp_token(j, h->tok, lp->rec[i].top[k].token, 1);
				jb_raw(j, ", \"logprob\": ");
				lp_num(j, lp->rec[i].top[k].logprob);
				jb_raw(j, "}");
			}
			jb_raw(j, "]}");
		}
		jb_raw(j, "]}");
		lp->sent = lp->n;
		return;
	}
	/* a completion's: four lists side by side */
	for (f = 0; f < 4; f++) {
		static const char *const names[] = {
			"{\"tokens\": [", "], \"token_logprobs\": [", "], \"top_logprobs\": [",
			"], \"text_offset\": [",
		};

		jb_raw(j, names[f]);
		for (i = from; i < lp->n; i++) {
			if (i > from)
				jb_raw(j, ", ");
			if (f == 0) {
				size_t n = 0;
				const char *p = cb_tok_piece(h->tok, lp->rec[i].token, &n);

				jb_utf8(j, p ? p : "", n);
			} else if (f == 1) {
				lp_num(j, lp->rec[i].logprob);
			} else if (f == 2) {
				jb_raw(j, "{");
				for (k = 0; k < lp->rec[i].n_top; k++) {
					size_t n = 0;
					const char *p = cb_tok_piece(h->tok, lp->rec[i].top[k].token, &n);

					if (k)
						jb_raw(j, ", ");
					jb_utf8(j, p ? p : "", n);
					jb_raw(j, ": ");
					lp_num(j, lp->rec[i].top[k].logprob);
				}
				jb_raw(j, "}");
			} else {
				jb_printf(j, "%u", lp->rec[i].offset);
			}
		}
	}
	jb_raw(j, "]}");
	lp->sent = lp->n;
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

	int i;

	jb_raw(&j, "{\"object\": \"list\", \"data\": [");
	for (i = 0; i < srv->n_all; i++) {
		if (i)
			jb_raw(&j, ", ");
		model_object(&j, &srv->all[i]);
	}
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
	h->tok = NULL;
	h->lp = NULL;
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

int answer_add(void *arg, enum text_part part, const char *s, size_t n)
{
	struct gen_answer *a = arg;
	struct gen_call *c;

	if (part == PART_TOOL_NAME) {
		c = realloc(a->calls, (a->n_calls + 1) * sizeof(*c));
		if (!c) {
			a->oom = 1;
			return 1;
		}
		a->calls = c;
		c += a->n_calls++;
		memset(c, 0, sizeof(*c));
		resp_call_id(c->id);
	}
	if (part == PART_CONTENT)
		a->oom |= cb_sbuf_add(&a->content, s, n) != 0;
	else if (part == PART_REASONING)
		a->oom |= cb_sbuf_add(&a->reasoning, s, n) != 0;
	else if (a->n_calls)
		a->oom |= cb_sbuf_add(part == PART_TOOL_NAME ? &a->calls[a->n_calls - 1].name :
				      &a->calls[a->n_calls - 1].args, s, n) != 0;
	return a->oom;
}

void answer_release(struct gen_answer *a)
{
	unsigned int i;

	for (i = 0; i < a->n_calls; i++) {
		free(a->calls[i].name.p);
		free(a->calls[i].args.p);
	}
	free(a->calls);
	free(a->content.p);
	free(a->reasoning.p);
	memset(a, 0, sizeof(*a));
}

void resp_call_id(char id[32])
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)id;
	snprintf(id, 32, "call_%016llx", (unsigned long long)r);
}

static void sbuf_str(struct jb *j, const struct cb_sbuf *b)
{
	jb_str(j, b->p ? b->p : "", b->p ? b->n : 0);
}

/* "tool_calls": [...] of a message. */
static void calls_json(struct jb *j, const struct gen_answer *a)
{
	unsigned int i;

	jb_raw(j, ", \"tool_calls\": [");
	for (i = 0; i < a->n_calls; i++) {
		jb_raw(j, i ? ", {\"id\": " : "{\"id\": ");
		jb_cstr(j, a->calls[i].id);
		jb_raw(j, ", \"type\": \"function\", \"function\": {\"name\": ");
		sbuf_str(j, &a->calls[i].name);
		jb_raw(j, ", \"arguments\": ");
		sbuf_str(j, &a->calls[i].args);
		jb_raw(j, "}}");
	}
	jb_raw(j, "]");
}

char *resp_completion(const struct resp_head *h, enum gen_kind kind, const struct gen_answer *a,
		      const struct gen_result *res)
{
	struct jb j = { 0 };

	if (kind == GEN_CHAT) {
		head(&j, h, "chat.completion");
		jb_raw(&j, ", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": ");
		/* a tool call without words has no content, as OpenAI's */
		if (a->n_calls && !a->content.n)
			jb_raw(&j, "null");
		else
			sbuf_str(&j, &a->content);
		if (a->split) {
			jb_raw(&j, ", \"reasoning_content\": ");
			sbuf_str(&j, &a->reasoning);
		}
		if (a->n_calls)
			calls_json(&j, a);
		jb_raw(&j, ", \"refusal\": null}, \"logprobs\": ");
		logprobs(&j, h, kind);
		jb_raw(&j, ", \"finish_reason\": ");
	} else {
		head(&j, h, "text_completion");
		jb_raw(&j, ", \"choices\": [{\"text\": ");
		sbuf_str(&j, &a->content);
		jb_raw(&j, ", \"index\": 0, \"logprobs\": ");
		logprobs(&j, h, kind);
		jb_raw(&j, ", \"finish_reason\": ");
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
		jb_raw(&j, "}, \"logprobs\": ");
		if (first)
			jb_raw(&j, "null");
		else
			logprobs(&j, h, kind);
		jb_raw(&j, ", \"finish_reason\": ");
	} else {
		jb_raw(&j, ", \"choices\": [{\"text\": ");
		jb_str(&j, text ? text : "", text ? len : 0);
		jb_raw(&j, ", \"index\": 0, \"logprobs\": ");
		logprobs(&j, h, kind);
		jb_raw(&j, ", \"finish_reason\": ");
	}
	jb_cstr(&j, finish);
	jb_raw(&j, "}]");
	if (!with_usage)
		jb_raw(&j, ", \"usage\": null");
	jb_raw(&j, "}");
	return jb_done(&j);
}

char *resp_chunk_part(const struct resp_head *h, enum text_part part, const char *s, size_t n,
		      unsigned int call, const char *id, int with_usage)
{
	struct jb j = { 0 };

	head(&j, h, "chat.completion.chunk");
	jb_raw(&j, ", \"choices\": [{\"index\": 0, \"delta\": {");
	if (part == PART_REASONING || part == PART_CONTENT) {
		jb_raw(&j, part == PART_REASONING ? "\"reasoning_content\": " : "\"content\": ");
		jb_str(&j, s, n);
	} else {
		jb_printf(&j, "\"tool_calls\": [{\"index\": %u, ", call);
		if (part == PART_TOOL_NAME) {
			jb_raw(&j, "\"id\": ");
			jb_cstr(&j, id);
			jb_raw(&j, ", \"type\": \"function\", \"function\": {\"name\": ");
			jb_str(&j, s, n);
			jb_raw(&j, ", \"arguments\": \"\"}}]");
		} else {
			jb_raw(&j, "\"function\": {\"arguments\": ");
			jb_str(&j, s, n);
			jb_raw(&j, "}}]");
		}
	}
	jb_raw(&j, "}, \"logprobs\": null, \"finish_reason\": null}]");
	if (!with_usage)
		jb_raw(&j, ", \"usage\": null");
	jb_raw(&j, "}");
	return jb_done(&j);
}
