/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve.h - colibri serve: an OpenAI- and Ollama-compatible HTTP server over
 * libcolibri's session API (docs/serve.md).  What its files share.
 *
 *   serve_http.c      the HTTP plumbing on libmicrohttpd: the daemon, routing,
 *                     the API key, bodies and their limit, the answer of each
 *                     endpoint, the end of every request
 *   serve_slots.c     admission (--max-sessions) and the watcher that sees a
 *                     client go away and cancels its generation
 *   serve_deadline.c  the watchdog that closes a connection whose request
 *                     does not arrive whole in time (--request-timeout)
 *   serve_request.c   OpenAI request JSON: every field checked, into a gen_req
 *   serve_response.c  OpenAI response JSON: completions, chunks, errors, models
 *   serve_ollama.c    Ollama's API: its requests as OpenAI's, its answers
 *   serve_gen.c       one generation: the prompt's tokens, the session, text
 *                     out token by token through the stop strings
 *   serve_logits.c    a request's logit rules (bias, penalties, min_p)
 *   serve_logprobs.c  each generated token's log-probability and likeliest
 *   serve_structured.c  a request's response_format (or tool_choice
 *                     required) as a grammar around the model's answer
 *                     format (serve_call_grammar.c: the calls tool_choice
 *                     allows, in the format's syntax); serve_schema.c compiles JSON Schemas (with
 *                     serve_range.c's number ranges), serve_grammar.c
 *                     recognizes grammars, serve_mask.c turns them into the
 *                     tokens allowed next (serve_states.c remembering the
 *                     grammar's steps)
 *   serve_stream.c    server-sent events: the generation on a thread of its
 *                     own, its chunks handed to the connection through a queue
 *   serve_metrics.c   counters and histograms, /metrics in Prometheus text
 *   serve_live.c      the page at / (serve_page.c holds it) and /live, its
 *                     live view in server-sent events
 *   serve_text.c      generated tokens into the answer's text: the decoder,
 *                     an answer format's parser, the stop strings
 *   serve_harmony.c   GPT-OSS's harmony answers split into content,
 *                     reasoning and tool calls, by token
 *   serve_tagged.c    tagged answers (<think>, and Hermes', Llama 3.x's,
 *                     Mistral's, DeepSeek's or GLM's tool calls) split the
 *                     same way, by text
 *   serve_call_syntax.c  each family's tool-call tags, which template says
 *                     which, a block of calls read back into calls
 *   serve_stop.c      stop strings matched across token boundaries
 *   serve_prompt.c    a conversation through the model's chat template into
 *                     tokens (also colibri chat's)
 *
 * Threads: libmicrohttpd runs one thread per connection; a request's
 * generation runs on its connection's thread (a plain answer) or on a
 * thread of its own (a stream), each with a session of its own, so the
 * kernel batches the steps of concurrent requests.  One watcher thread
 * (serve_slots.c) polls the sockets of the running requests for the
 * client's hang-up.
 */
#ifndef COLIBRI_SERVE_H
#define COLIBRI_SERVE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cJSON.h>

#include "colibri_session.h"
#include "serve_prompt.h"
#include "serve_stop.h"
#include "serve_text.h"
#include "util/util.h"

struct MHD_Daemon;
struct cb_tokenizer;
struct cb_chat;
struct serve_slots;
struct serve_metrics;
struct serve_live;
struct vocab_index;
struct grammar;
struct gen_logprobs;

/* Bodies larger than this are refused with 413. */
#define SERVE_MAX_BODY		(2u << 20)
/*
 * Headers larger than this are refused with 431 (an error in JSON).  Each
 * connection's libmicrohttpd memory pool (the request line, the headers,
 * its buffers) is SERVE_CONN_MEMORY, so headers between the two are ours to
 * refuse; past the pool, libmicrohttpd answers 431 itself, in HTML, as it
 * does a request it cannot parse (400, 505): libmicrohttpd 0.9.75 has no way
 * to give those a body of ours.
 */
#define SERVE_MAX_HEADERS	(32u << 10)
#define SERVE_CONN_MEMORY	(128u << 10)
/* Why an answer ended early when the server stopped (SIGINT, SIGTERM). */
#define SERVE_CUT_SHORT "The server is shutting down: the answer was cut short"
/* The most addresses --host may name that are listened on. */
#define SERVE_MAX_LISTEN	4
/* The most a completion may ask for (it stops at the context anyway). */
#define SERVE_MAX_TOKENS	(1u << 20)

/**
 * struct serve_opts - colibri serve's command line, past the model.
 * @host: the address to listen on (a name or a numeric IPv4/IPv6 address).
 * @port: the TCP port; 0: any free one (the listening line says which).
 * @api_key: the key clients must send as "Authorization: Bearer KEY", or
 *	NULL: none is asked.
 * @max_sessions: requests generating at once; one more is answered 429.
 * @context: positions of each request's session (0: the library's default).
 * @request_timeout: seconds a connection has to send its first request
 *	whole, headers and body (serve_deadline.h).
 * @cors: --cors: the origins browsers may call from ("*": any), comma
 *	separated, or NULL: no CORS headers.
 */
struct serve_opts {
	const char *host;
	unsigned int port;
	const char *api_key;
	unsigned int max_sessions;
	uint32_t context;
	unsigned int request_timeout;
	const char *cors;
};

/**
 * struct serve - the server, one for each model it serves (--model given
 * several times), opened at start: the model's own members, and the
 * server's shared ones (@o, @slots, @metrics, @deadlines, the daemons),
 * the same in every one; all[0] holds the daemons.
 * @o: the options.
 * @name: the model id clients name in "model" (--name, or the model's own).
 * @m, @mi: the model and what it is.
 * @tok: its tokenizer (shared by every thread).
 * @chat: its chat template (->tmpl NULL: the fallback format).
 * @eos: the end-of-sequence token, or -1.
 * @eot, @n_eot: chat: the tokens besides @eos that end an answer (serve_prompt.h).
 * @format: how chat answers are split into content, reasoning_content and
 *	tool_calls (enum answer_format: harmony's, chat_is_harmony(); a
 *	family's tags, FORMAT_TAGGED + call_family_of(); or not at all).
 * @max_context: positions of a request's session, as the backend gave them.
 * @vi: the vocabulary as constrained decoding walks it (serve_mask.h).
 * @created: when the server started (the model's "created").
 * @slots: admission and the hang-up watcher.
 * @metrics: what /metrics shows.
 * @live: what /live shows (the page's live view, serve_live.h).
 * @d: the HTTP daemon.
 */
struct serve {
	struct serve_opts o;
	char name[64];
	struct colibri_model *m;
	const struct colibri_model_info *mi;
	struct cb_tokenizer *tok;
	const struct cb_chat *chat;
	int32_t eos, eot[CHAT_END_MAX];
	int n_eot;
	int format;
	uint32_t max_context;
	struct vocab_index *vi;
	time_t created;
	struct serve_slots *slots;
	struct serve_metrics *metrics;
	struct serve_live *live;
	struct deadlines *deadlines;
	struct MHD_Daemon *d[SERVE_MAX_LISTEN];	/* one per address listened on */
	int nd;
	char addr_text[SERVE_MAX_LISTEN][64];	/* their numeric addresses */
	int stopping;			/* serve_http_stop() began (__atomic) */
	unsigned int inflight;		/* requests from headers to completion (__atomic) */
	struct serve *all;		/* every model served: all[0] runs the daemon */
	int n_all;
};

/* The most --model a server takes. */
#define SERVE_MAX_MODELS 8

/*
 * The model a request names, among srv->all: by its id, or (@ollama) also
 * as NAME:latest; NULL when none is.
 */
struct serve *serve_model(struct serve *srv, const char *name, int ollama);

/* An idle connection is closed after this many seconds (serve_deadline.h too). */
#define SERVE_IDLE_TIMEOUT 120

/* serve_http.c: start the daemon (0, or -1 with a message in @err); stop it. */
int serve_http_start(struct serve *srv, char *err, size_t errlen);
void serve_http_stop(struct serve *srv);
/* The port it listens on. */
unsigned int serve_http_port(const struct serve *srv);

/* --- requests (serve_request.c) ------------------------------------------- */

enum gen_kind {
	GEN_CHAT,		/* /v1/chat/completions */
	GEN_COMPLETION,		/* /v1/completions */
};

/* Which API a generation request came by: how its answer is written. */
enum serve_api {
	API_OPENAI,		/* /v1/... */
	API_OLLAMA_CHAT,	/* /api/chat: "message" */
	API_OLLAMA_GENERATE,	/* /api/generate: "response" */
};

/**
 * struct gen_req - one generation request, checked.
 * @kind: which endpoint.
 * @model: the "model" it names.
 * @messages: chat: the conversation as the template gets it (roles,
 *	contents as strings, tool calls); owned.
 * @tools: chat: the tool definitions for the template, or NULL; owned.
 * @prompt_text: completions: the prompt string, or NULL when it came as
 *	token ids (@prompt); owned.
 * @prompt, @n_prompt: the prompt's tokens (completions given as ids, or
 *	set by gen_prepare()); owned.
 * @max_tokens: most tokens to make; 0: none given (chat: up to the
 *	context; completions: 16, as OpenAI's).
 * @sp: sampling.
 * @stop: the stop strings.
 * @stream: answer with server-sent events.
 * @include_usage: stream: a last chunk with the usage.
 * @json: response_format: enum json_mode.
 * @schema: JSON_SCHEMA: the schema; owned.
 * @tool_choice, @tool_name: enum tool_choice, and the function named.
 * @logprobs, @top_logprobs: logprobs asked (chat's "logprobs": true, a
 *	completion's "logprobs": N), and how many likeliest tokens with each.
 * @lp: with @logprobs, the records (gen_prepare(), filled by gen_run());
 *	owned.
 * @gram: with @json or a tool_choice of TOOLS_REQUIRED or TOOLS_NAMED, the
 *	grammar the answer is held to (gen_prepare()); owned.
 */
/* The most entries of a request's logit_bias (OpenAI's limit). */
#define SERVE_MAX_BIAS 300

/**
 * struct logit_rules - what a request changes in the logits before each
 * draw (serve_gen.c, in this order); all at their neutral value, nothing.
 * @bias: logit_bias: @n_bias (token, value) pairs added.
 * @repetition: repetition_penalty (vLLM's, Ollama's repeat_penalty): each
 *	token seen in the last @repeat_last_n positions (-1: all, the prompt
 *	too) has its logit divided by it (when positive) or multiplied by it.
 * @presence, @frequency: OpenAI's penalties over the tokens generated so
 *	far: presence once per token seen, frequency times its count.
 * @min_p: tokens less likely than min_p times the likeliest (at the
 *	request's temperature) are dropped.
 */
struct logit_rules {
	uint32_t n_bias;
	struct {
		uint32_t token;
		float value;
	} bias[SERVE_MAX_BIAS];
	float repetition;
	int32_t repeat_last_n;
	float presence, frequency;
	float min_p;
};

/* Whether any rule changes the logits (then serve_gen.c draws the tokens). */
static inline int logit_rules_any(const struct logit_rules *lr)
{
	return lr->n_bias || (lr->repetition != 0 && lr->repetition != 1) || lr->presence != 0 ||
	       lr->frequency != 0 || lr->min_p != 0;
}

/* What tool_choice asks of an answer. */
enum tool_choice {
	TOOLS_AUTO,		/* "auto" (and "none": no tools in the prompt) */
	TOOLS_REQUIRED,		/* "required": at least one call, of any tool */
	TOOLS_NAMED,		/* {"type": "function", ...}: a call of @tool_name */
};

/* What response_format asks of an answer. */
enum json_mode {
	JSON_NONE,		/* text */
	JSON_OBJECT,		/* json_object: any JSON object */
	JSON_SCHEMA,		/* json_schema: JSON valid against @schema */
};

struct gen_req {
	enum gen_kind kind;
	enum serve_api api;
	char model[128];
	cJSON *messages, *tools;
	cJSON *tmpl_vars;		/* the template's further variables, or NULL */
	char *prompt_text;
	uint32_t *prompt;
	uint32_t n_prompt;
	uint32_t max_tokens;
	struct colibri_sampling sp;
	struct stop_strings stop;
	struct logit_rules lr;
	int stream, include_usage;
	enum json_mode json;
	cJSON *schema;
	enum tool_choice tool_choice;
	char tool_name[128];
	int logprobs;
	uint32_t top_logprobs;
	struct gen_logprobs *lp;
	struct grammar *gram;
};

/**
 * struct api_error - an error as OpenAI's API words it.
 * @status: the HTTP status (400, 401, 404, 405, 413, 429, 500, 503).
 * @type: "invalid_request_error", "rate_limit_error", "server_error".
 * @param: the request field at fault, or NULL.
 * @code: a machine-readable code ("model_not_found", ...), or NULL.
 * @msg: one line for a person.
 */
struct api_error {
	int status;
	const char *type;
	const char *param;
	const char *code;
	char msg[384];
};

void api_error_set(struct api_error *e, int status, const char *type, const char *param,
		   const char *code, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* 400 invalid_request_error about @param. */
#define api_bad(e, param, ...) \
	api_error_set(e, 400, "invalid_request_error", param, NULL, __VA_ARGS__)

/*
 * gen_req_parse() - @body (the request's JSON text, @len bytes) of a
 * request of @kind into @r: every field checked against what OpenAI's API
 * allows and what this server implements.  0, or -1 with @e set.
 * gen_req_release() frees what it holds (also after a failure).
 */
int gen_req_parse(struct gen_req *r, enum gen_kind kind, const char *body, size_t len,
		  uint32_t vocab_size, struct api_error *e);
/* Whether a JSON text holds a NUL (a raw byte, or \u0000 in a string). */
int json_has_nul(const char *body, size_t len);
void gen_req_release(struct gen_req *r);

/* --- responses (serve_response.c) ----------------------------------------- */

/* The error as OpenAI sends it: {"error": {"message", "type", "param", "code"}}. */
char *resp_error(const struct api_error *e);
/* GET /v1/models and GET /v1/models/ID. */
char *resp_models(const struct serve *srv);
char *resp_model(const struct serve *srv);

/* What a finished generation says (serve_gen.c fills it). */
struct gen_result {
	uint32_t prompt_tokens;
	uint32_t completion_tokens;
	const char *finish;		/* "stop", "length" or "tool_calls" */
	double t_start;			/* the request arrived */
	double t_first;			/* its first token was sampled (0: none was) */
	double t_end;
	int err;			/* 0, -ECANCELED (the client left), or another */
	char msg[256];			/* the error's words */
};

/* A response's id ("chatcmpl-..." or "cmpl-...") and creation time. */
/*
 * The head of an answer: its id, time and model; with logprobs, the
 * tokenizer and the generation's records, which each chunk (or the whole
 * answer) writes from @lp->sent on, and marks sent.
 */
struct resp_head {
	char id[48];
	time_t created;
	const char *model;
	const struct cb_tokenizer *tok;
	struct gen_logprobs *lp;
};

void resp_head_init(struct resp_head *h, enum gen_kind kind, const char *model);

/* One tool call of an answer: its id ("call_..."), name and arguments. */
struct gen_call {
	char id[32];
	struct cb_sbuf name, args;
};

/*
 * struct gen_answer - the whole text of a plain answer, by part.
 * @split: the answer was split (a chat of a format with parts): the
 *	message says "reasoning_content" (and "tool_calls" when it has some).
 * @oom: memory ran out on the way.
 */
struct gen_answer {
	int split;
	struct cb_sbuf content, reasoning;
	struct gen_call *calls;
	unsigned int n_calls;
	int oom;
};

/* A gen_sink's text() for a plain answer: @arg is the gen_answer. */
int answer_add(void *arg, enum text_part part, const char *s, size_t n);
void answer_release(struct gen_answer *a);
/* A new tool call's id into @id. */
void resp_call_id(char id[32]);

/* The whole answer of a request without "stream". */
char *resp_completion(const struct resp_head *h, enum gen_kind kind, const struct gen_answer *a,
		      const struct gen_result *res);
/*
 * One chunk of a stream: @text (may be NULL: none) and, at the end,
 * @finish; chat's first chunk carries the role (@first).  @usage: -1 no
 * "usage" member, 0 "usage": null, 1 the usage of @res (and no choice).
 */
char *resp_chunk(const struct resp_head *h, enum gen_kind kind, int first, const char *text,
		 size_t len, const char *finish, int usage, const struct gen_result *res);
/*
 * A chat chunk of a harmony answer's other parts: "reasoning_content" text,
 * a tool call's beginning (@id, its name @s) or more of its arguments, of
 * tool call number @call (from 0).  @usage: -1 or 0, as above.
 */
char *resp_chunk_part(const struct resp_head *h, enum text_part part, const char *s, size_t n,
		      unsigned int call, const char *id, int usage);

/* --- generation (serve_gen.c) ----------------------------------------------- */

/*
 * gen_prepare() - the prompt's tokens (chat: the conversation through the
 * template), checked against the context.  0, or -1 with @e (400).
 */
int gen_prepare(struct serve *srv, struct gen_req *r, struct api_error *e);

/*
 * gen_open() - a session for one request, with its sampling: 0, or -1
 * with @e: 503 when the device has no room (its session or memory limit,
 * this user's share), 500 otherwise.  gen_close() closes it.  Both keep
 * the sessions gauge of /metrics.
 */
int gen_open(struct serve *srv, const struct gen_req *r, struct colibri_session **s,
	     struct api_error *e);
void gen_close(struct serve *srv, struct colibri_session *s);

/*
 * gen_run() - the generation of @r on @s, its text to @sink.  @res->t_start
 * is set by the caller; the rest is filled here.  Returns @res->err.
 */
int gen_run(struct serve *srv, struct colibri_session *s, const struct gen_req *r,
	    const struct gen_sink *sink, struct gen_result *res);

/* --- streaming (serve_stream.c) --------------------------------------------- */

struct stream;
struct MHD_Response;

/*
 * stream_start() - run @r's generation on @s on a thread of its own and
 * make the response whose body is its server-sent events.  Takes @s (the
 * stream closes it when the generation ends) and @r's contents.  *@slot:
 * the admission slot, watched for the client's hang-up on @fd from now
 * on; taken (*@slot = -1) on success, put back by the stream.
 * 0, or -1 with @e (500; @s is closed then too).
 */
int stream_start(struct serve *srv, struct gen_req *r, struct colibri_session *s, int *slot,
		 int fd, double t_start, struct stream **out, struct MHD_Response **resp,
		 struct api_error *e);
/*
 * stream_finish() - the connection is done with the response (sent, or
 * the client went away): stop the generation if it still runs, wait for
 * its thread, and free the stream.  @res receives its result.
 */
void stream_finish(struct stream *st, struct gen_result *res);

#endif /* COLIBRI_SERVE_H */
