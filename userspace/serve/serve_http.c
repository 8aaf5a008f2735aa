// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_http.c - colibri serve's HTTP side, on libmicrohttpd.
 *
 * Threading: one thread per connection (MHD_USE_THREAD_PER_CONNECTION).
 * libcolibri's calls block (a prefill, a kernel SUBMIT, a turn on the
 * in-process pool), and every running generation needs a thread of its
 * own for the kernel to batch it with the others; with a thread per
 * connection the request's own thread is that thread for a plain answer,
 * and a streamed answer's content reader may simply wait for its next
 * chunk.  The alternative, one polling thread that suspends connections
 * and resumes them when a chunk is ready, would need the same generation
 * threads plus the bookkeeping of suspended connections, and libmicrohttpd
 * does not watch a suspended connection for a hang-up either.  The number
 * of threads is bounded: connections by MHD_OPTION_CONNECTION_LIMIT,
 * generations by --max-sessions.
 *
 * A request goes: the headers (first call of on_access()): the route, the
 * API key, Content-Length against the limit; any of those failing is
 * answered at once, before the body is read.  Then the body, in pieces,
 * kept up to SERVE_MAX_BODY.  Then, for a generation, a slot
 * (serve_slots.h): only a request that has arrived whole holds one, so
 * clients slow to send cannot lock the others out, and the watchdog of
 * serve_deadline.h closes them.  Then the answer.  on_completed() is the
 * one place a request ends, sent or not: it finishes a stream, counts,
 * logs and frees.
 */
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"
#include "serve_deadline.h"
#include "serve_live.h"
#include "serve_metrics.h"
#include "serve_ollama.h"
#include "serve_slots.h"
#include "util/util.h"

struct route {
	const char *path;
	int prefix;			/* path is a prefix (/v1/models/ID) */
	const char *method;		/* GET also answers HEAD */
	enum serve_route id;
	int auth;			/* needs the API key */
	int gen;			/* a generation, of @kind */
	enum gen_kind kind;
	enum serve_api api;		/* whose API: how its answers and errors are written */
};

static const struct route routes[] = {
	{ "/v1/chat/completions", 0, "POST", ROUTE_CHAT, 1, 1, GEN_CHAT, API_OPENAI },
	{ "/v1/completions", 0, "POST", ROUTE_COMPLETIONS, 1, 1, GEN_COMPLETION, API_OPENAI },
	{ "/v1/models", 0, "GET", ROUTE_MODELS, 1, 0, 0, API_OPENAI },
	{ "/v1/models/", 1, "GET", ROUTE_MODELS, 1, 0, 0, API_OPENAI },
	{ "/health", 0, "GET", ROUTE_HEALTH, 0, 0, 0, API_OPENAI },
	{ "/metrics", 0, "GET", ROUTE_METRICS, 0, 0, 0, API_OPENAI },
	/* Ollama's (serve_ollama.h); its API has no key, this server's may */
	{ "/api/chat", 0, "POST", ROUTE_OLLAMA_CHAT, 1, 1, GEN_CHAT, API_OLLAMA_CHAT },
	{ "/api/generate", 0, "POST", ROUTE_OLLAMA_GENERATE, 1, 1, GEN_CHAT, API_OLLAMA_GENERATE },
	{ "/api/tags", 0, "GET", ROUTE_OLLAMA_INFO, 1, 0, 0, API_OLLAMA_CHAT },
	{ "/api/show", 0, "POST", ROUTE_OLLAMA_INFO, 1, 0, 0, API_OLLAMA_CHAT },
	{ "/api/version", 0, "GET", ROUTE_OLLAMA_INFO, 0, 0, 0, API_OLLAMA_CHAT },
	/* the page and its live view (serve_live.h): the page asks for the key itself */
	{ "/", 0, "GET", ROUTE_PAGE, 0, 0, 0, API_OPENAI },
	{ "/live", 0, "GET", ROUTE_LIVE, 0, 0, 0, API_OPENAI },
};

/* One request, from its headers to on_completed(). */
struct req {
	struct serve *srv;
	const struct route *route;	/* NULL: no such path */
	char path[128], method[16];
	int method_ok;
	int slot;			/* admission slot of a generation, or -1 */
	int answered;			/* an answer is queued (maybe before the body) */
	int status;			/* the answer's HTTP status; 0: none sent */
	char why[160];			/* an error answer's message, for the log */
	double t0;
	struct cb_sbuf body;
	int too_big;
	struct gen_req g;
	struct stream *st;		/* a streamed answer */
	int ran;			/* a generation ran: @res says how */
	struct gen_result res;
};

/*
 * Whether @origin is one of --cors's (exact, comma-separated; "*" any):
 * the value of Access-Control-Allow-Origin, or NULL.
 */
static const char *cors_allow(const struct serve *srv, const char *origin)
{
	const char *p = srv->o.cors, *end;
	size_t n;

	if (!p || !origin)
		return NULL;
	if (!strcmp(p, "*"))
		return "*";
	n = strlen(origin);
	for (; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) == n && !strncmp(p, origin, n))
			return origin;
	}
	return NULL;
}

/* A browser's page of an allowed origin may read the answer (CORS). */
static void add_cors(struct req *rq, struct MHD_Connection *c, struct MHD_Response *resp)
{
	const char *allow = cors_allow(rq->srv, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									    "Origin"));

	if (rq->srv->o.cors && strcmp(rq->srv->o.cors, "*"))
		MHD_add_response_header(resp, "Vary", "Origin");
	if (allow)
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", allow);
}

/* Queue @resp (taken), a 200 whose body comes later (a stream, /live, the page). */
static enum MHD_Result queue_200(struct req *rq, struct MHD_Connection *c,
				 struct MHD_Response *resp)
{
	enum MHD_Result ret;

	add_cors(rq, c, resp);
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	rq->answered = 1;
	rq->status = ret == MHD_YES ? 200 : 0;
	return ret;
}

/* Queue an answer whose body @body (malloc'ed, taken; NULL: out of memory). */
static enum MHD_Result answer(struct req *rq, struct MHD_Connection *c, int status,
			      const char *ctype, char *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	/* Free before the client reads the answer, so that its next request finds it free. */
	if (rq->slot >= 0) {
		slots_put(rq->srv->slots, rq->slot);
		rq->slot = -1;
	}
	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	if (ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	add_cors(rq, c, resp);
	if (status == 429 || status == 503)
		MHD_add_response_header(resp, "Retry-After", "1");
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	if (status == 405 && rq->route)
		MHD_add_response_header(resp, "Allow", !strcmp(rq->route->method, "GET") ?
					"GET, HEAD" : rq->route->method);
	ret = MHD_queue_response(c, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	if (ret == MHD_YES) {
		rq->answered = 1;
		rq->status = status;
	}
	return ret;
}

static enum MHD_Result answer_json(struct req *rq, struct MHD_Connection *c, int status,
				   char *json)
{
	return answer(rq, c, status, "application/json", json, json ? strlen(json) : 0);
}

static enum MHD_Result answer_error(struct req *rq, struct MHD_Connection *c,
				    const struct api_error *e)
{
	snprintf(rq->why, sizeof(rq->why), "%.159s", e->msg);
	if (rq->route && rq->route->api != API_OPENAI)
		return answer_json(rq, c, e->status, ollama_error(e->msg));
	return answer_json(rq, c, e->status, resp_error(e));
}

static const struct route *find_route(const char *path)
{
	size_t i, n;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		n = strlen(routes[i].path);
		if (routes[i].prefix ? !strncmp(path, routes[i].path, n) : !strcmp(path, routes[i].path))
			return &routes[i];
	}
	return NULL;
}

/* Compared in constant time: how long a wrong key took says nothing. */
static int key_matches(const char *got, const char *want)
{
	size_t ng = strlen(got), nw = strlen(want), i;
	unsigned char d = ng != nw;

	for (i = 0; i < nw; i++)
		d |= (unsigned char)(want[i] ^ (i < ng ? got[i] : 0));
	return !d;
}

static int connection_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

/*
 * OPTIONS on a known path: what it allows, and for a browser's preflight
 * from an allowed origin (--cors) the methods and headers it may send.
 * No key is asked: a preflight never carries one.
 */
static enum MHD_Result preflight(struct req *rq, struct MHD_Connection *c)
{
	const char *allow = !strcmp(rq->route->method, "GET") ? "GET, HEAD, OPTIONS" :
			    "POST, OPTIONS";
	const char *hdrs = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       "Access-Control-Request-Headers");
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, "",
								    MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Allow", allow);
	add_cors(rq, c, resp);
	if (cors_allow(rq->srv, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"))) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods", allow);
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					hdrs ? hdrs : "Authorization, Content-Type");
		MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
	}
	ret = MHD_queue_response(c, 204, resp);
	MHD_destroy_response(resp);
	if (ret == MHD_YES) {
		rq->answered = 1;
		rq->status = 204;
	}
	return ret;
}

static enum MHD_Result add_header_len(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	size_t *n = cls;

	*n += strlen(key) + (value ? strlen(value) : 0) + 4;	/* ": ", CRLF */
	return MHD_YES;
}

/* The checks on the headers alone: 1 answered already, 0 go on, -1 drop. */
static int check_headers(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv;
	struct api_error e;
	const char *auth, *clen;
	unsigned long long n;
	size_t hbytes = 0;
	char *end;

	MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_len, &hbytes);
	if (hbytes > SERVE_MAX_HEADERS) {
		api_error_set(&e, 431, "invalid_request_error", NULL, "headers_too_large",
			      "The request's headers are larger than %u bytes", SERVE_MAX_HEADERS);
		goto err;
	}
	if (__atomic_load_n(&srv->stopping, __ATOMIC_ACQUIRE)) {
		api_error_set(&e, 503, "server_error", NULL, "server_shutdown",
			      "The server is shutting down");
		goto err;
	}
	if (!rq->route) {
		api_error_set(&e, 404, "invalid_request_error", NULL, "unknown_url",
			      "Unknown request URL: %s %.100s", rq->method, rq->path);
		goto err;
	}
	if (!strcmp(rq->method, "OPTIONS"))
		return preflight(rq, c) == MHD_YES ? 1 : -1;
	if (!rq->method_ok) {
		api_error_set(&e, 405, "invalid_request_error", NULL, "method_not_allowed",
			      "%s %.100s: use %s", rq->method, rq->path, rq->route->method);
		goto err;
	}
	if (rq->route->auth && srv->o.api_key) {
		auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
		/* the scheme is case-insensitive (RFC 9110 11.1), the key is not */
		if (!auth || strncasecmp(auth, "Bearer ", 7)) {
			api_error_set(&e, 401, "invalid_request_error", NULL, NULL,
				      "You didn't provide an API key: send it as \"Authorization: Bearer KEY\"");
			goto err;
		}
		if (!key_matches(auth + 7, srv->o.api_key)) {
			api_error_set(&e, 401, "invalid_request_error", NULL, "invalid_api_key",
				      "Incorrect API key provided");
			goto err;
		}
	}
	clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	if (clen) {
		errno = 0;
		n = strtoull(clen, &end, 10);
		if (errno || end == clen || n > SERVE_MAX_BODY) {
			api_error_set(&e, 413, "invalid_request_error", NULL, "request_too_large",
				      "The body is larger than %u bytes", SERVE_MAX_BODY);
			goto err;
		}
	}
	return 0;
err:
	return answer_error(rq, c, &e) == MHD_YES ? 1 : -1;
}

/* A generation's slot, for a request that is in whole: 0, or answered 429. */
static int take_slot(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv;
	struct slots_miss miss;
	struct api_error e;

	rq->slot = slots_take(srv->slots, connection_fd(c), &miss);
	if (rq->slot >= 0)
		return 0;
	fprintf(stderr, "colibri serve: %s %s: no slot free after %.3f s: %u being "
		"cancelled, %u not generating yet or done\n", rq->method, rq->path,
		miss.waited, miss.leaving, miss.unwatched);
	metrics_rejected(srv->metrics, REJECT_BUSY);
	api_error_set(&e, 429, "rate_limit_error", NULL, "rate_limit_exceeded",
		      "The server is busy: %u requests are generating (--max-sessions); retry later",
		      srv->o.max_sessions);
	answer_error(rq, c, &e);
	return -1;
}

/* The connection's deadline (serve_deadline.h), or NULL. */
static struct deadline_conn *conn_deadline(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void cancel_session(void *arg)
{
	colibri_session_cancel(arg);
}

/*
 * The model the body names ("model"), among those served; when it names
 * none (or no string), the first: the request's own check says what is
 * wrong.
 */
static struct serve *model_of(struct req *rq)
{
	cJSON *body = cJSON_ParseWithLength(rq->body.p ? rq->body.p : "", rq->body.n);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(body, "model");
	struct serve *srv = cJSON_IsString(m) ? serve_model(rq->srv, m->valuestring,
							    rq->route->api != API_OPENAI) : NULL;

	cJSON_Delete(body);
	return srv ? srv : rq->srv;
}

/* "'a', 'b'": the ids served, for a message. */
static void served(const struct serve *srv, char *out, size_t cap)
{
	size_t o = 0;
	int i, k;

	out[0] = 0;
	for (i = 0; i < srv->n_all && o < cap; i++) {
		k = snprintf(out + o, cap - o, "%s'%s'", i ? ", " : "", srv->all[i].name);
		if (k > 0)
			o += (size_t)k;
	}
}

static enum MHD_Result generate(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv = model_of(rq);
	struct colibri_session *s = NULL;
	struct gen_sink sink;
	struct MHD_Response *resp;
	struct gen_answer ans = { 0 };
	struct resp_head h;
	struct api_error e;
	enum MHD_Result ret;

	if (rq->route->api == API_OPENAI ?
	    gen_req_parse(&rq->g, rq->route->kind, rq->body.p ? rq->body.p : "", rq->body.n,
			  srv->mi->vocab_size, &e) :
	    ollama_req_parse(&rq->g, rq->route->api, rq->body.p ? rq->body.p : "", rq->body.n,
			     srv->mi->vocab_size, &e))
		return answer_error(rq, c, &e);
	if (rq->route->api != API_OPENAI && ollama_model_is(srv, rq->g.model)) {
		/* NAME:latest, as Ollama lists it */
	} else if (strcmp(rq->g.model, srv->name)) {
		char names[256];

		served(srv, names, sizeof(names));
		api_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
			      "The model '%.100s' does not exist (this server has %s)",
			      rq->g.model, names);
		return answer_error(rq, c, &e);
	}
	/* /api/generate's kind is its request's: raw, a completion; else a chat */
	ans.split = srv->format != FORMAT_PLAIN && rq->g.kind == GEN_CHAT;
	if (gen_prepare(srv, &rq->g, &e) || gen_open(srv, &rq->g, &s, &e))
		return answer_error(rq, c, &e);
	if (rq->g.stream) {
		if (stream_start(srv, &rq->g, s, &rq->slot, connection_fd(c), rq->t0, &rq->st,
				 &resp, &e))
			return answer_error(rq, c, &e);
		return queue_200(rq, c, resp);
	}
	/* A plain answer runs here, on the connection's thread. */
	/* all the text in one gen_answer */
	sink.text = answer_add;
	sink.arg = &ans;
	rq->res.t_start = rq->t0;
	slots_watch(srv->slots, rq->slot, connection_fd(c), cancel_session, s);
	gen_run(srv, s, &rq->g, &sink, &rq->res);
	/* No cancel may reach the session once it is closed: unwatch first. */
	slots_unwatch(srv->slots, rq->slot);
	gen_close(srv, s);
	slots_put(srv->slots, rq->slot);
	rq->slot = -1;
	rq->ran = 1;
	if (rq->res.err == -ECANCELED && __atomic_load_n(&srv->stopping, __ATOMIC_ACQUIRE)) {
		answer_release(&ans);
		api_error_set(&e, 503, "server_error", NULL, "server_shutdown",
			      SERVE_CUT_SHORT);
		return answer_error(rq, c, &e);
	}
	if (rq->res.err == -ECANCELED) {
		answer_release(&ans);
		return MHD_NO;	/* the client is gone (or memory ran out): nobody to answer */
	}
	if (rq->res.err) {
		answer_release(&ans);
		api_error_set(&e, 500, "server_error", NULL, NULL, "%s", rq->res.msg);
		return answer_error(rq, c, &e);
	}
	resp_head_init(&h, rq->g.kind, srv->name);
	h.tok = srv->tok;
	h.lp = rq->g.lp;
	if (rq->g.api != API_OPENAI)
		ret = answer_json(rq, c, 200, ollama_answer(srv, &rq->g, &ans, &rq->res));
	else
		ret = answer_json(rq, c, 200, resp_completion(&h, rq->g.kind, &ans, &rq->res));
	answer_release(&ans);
	return ret;
}

/*
 * Connections open now, this one included: each holds libmicrohttpd's
 * memory pool, so a heap measured at idle is comparable only at the same
 * count (tests/serve/load.mjs waits for the clients' idle ones to close).
 */
static unsigned int connections_now(struct serve *srv)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < srv->nd; i++) {
		const union MHD_DaemonInfo *di =
			MHD_get_daemon_info(srv->d[i], MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

		n += di ? di->num_connections : 0;
	}
	return n;
}

static enum MHD_Result health(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv;
	char buf[1024];
	int o, i;

	o = snprintf(buf, sizeof(buf),
		     "{\"status\": \"ok\", \"model\": \"%s\", \"models\": [", srv->name);
	for (i = 0; i < srv->n_all && o > 0 && (size_t)o < sizeof(buf); i++)
		o += snprintf(buf + o, sizeof(buf) - o, "%s\"%s\"", i ? ", " : "", srv->all[i].name);
	if (o > 0 && (size_t)o < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - o,
			 "], \"requests\": %u, \"sessions\": %d, \"max_sessions\": %u, \"connections\": %u}\n",
			 slots_in_use(srv->slots), metrics_sessions_now(srv->metrics),
			 srv->o.max_sessions, connections_now(srv));
	return answer_json(rq, c, 200, strdup(buf));
}

static enum MHD_Result models(struct req *rq, struct MHD_Connection *c)
{
	struct api_error e;

	struct serve *one = serve_model(rq->srv, rq->path + strlen(rq->route->path), 0);

	if (!rq->route->prefix)
		return answer_json(rq, c, 200, resp_models(rq->srv));
	if (one)
		return answer_json(rq, c, 200, resp_model(one));
	api_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
		      "The model '%.100s' does not exist", rq->path + strlen(rq->route->path));
	return answer_error(rq, c, &e);
}

/* /api/tags, /api/version, /api/show (whose body names the model). */
static enum MHD_Result ollama_info(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv, *one;
	const cJSON *m;
	struct api_error e;
	cJSON *body;

	if (!strcmp(rq->path, "/api/tags"))
		return answer_json(rq, c, 200, ollama_tags(srv));
	if (!strcmp(rq->path, "/api/version"))
		return answer_json(rq, c, 200, ollama_version());
	body = cJSON_ParseWithLength(rq->body.p ? rq->body.p : "", rq->body.n);
	m = cJSON_GetObjectItemCaseSensitive(body, "model");
	if (!cJSON_IsString(m))
		m = cJSON_GetObjectItemCaseSensitive(body, "name");	/* the older spelling */
	if (!cJSON_IsString(m)) {
		cJSON_Delete(body);
		api_bad(&e, "model", "model is required");
		return answer_error(rq, c, &e);
	}
	one = serve_model(srv, m->valuestring, 1);
	if (!one)
		api_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
			      "model '%.100s' not found", m->valuestring);
	cJSON_Delete(body);
	return one ? answer_json(rq, c, 200, ollama_show(one)) : answer_error(rq, c, &e);
}

/* GET / (the page) and GET /live (its events, for as long as the client reads). */
static enum MHD_Result page_or_live(struct req *rq, struct MHD_Connection *c)
{
	const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "model");
	struct serve *one = name ? serve_model(rq->srv, name, 0) : rq->srv;
	struct MHD_Response *resp;
	struct api_error e;

	if (!one) {
		api_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
			      "The model '%.100s' does not exist", name);
		return answer_error(rq, c, &e);
	}
	resp = rq->route->id == ROUTE_PAGE ? page_response() : live_response(one);
	return resp ? queue_200(rq, c, resp) : MHD_NO;
}

/* The body is in: answer. */
static enum MHD_Result respond(struct req *rq, struct MHD_Connection *c)
{
	struct api_error e;
	size_t len;
	char *text;

	deadlines_arrived(rq->srv->deadlines, conn_deadline(c));
	if (rq->too_big) {
		api_error_set(&e, 413, "invalid_request_error", NULL, "request_too_large",
			      "The body is larger than %u bytes", SERVE_MAX_BODY);
		return answer_error(rq, c, &e);
	}
	if (rq->route->gen) {	/* OpenAI's and Ollama's generations alike */
		if (take_slot(rq, c))
			return rq->answered ? MHD_YES : MHD_NO;
		return generate(rq, c);
	}
	switch (rq->route->id) {
	case ROUTE_MODELS:
		return models(rq, c);
	case ROUTE_HEALTH:
		return health(rq, c);
	case ROUTE_METRICS:
		text = metrics_render(rq->srv, &len);
		return answer(rq, c, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
	case ROUTE_OLLAMA_INFO:
		return ollama_info(rq, c);
	case ROUTE_PAGE:
	case ROUTE_LIVE:
		return page_or_live(rq, c);
	default:
		return MHD_NO;
	}
}

/* @s for the log and the messages: control characters (a decoded %0a) as '?'. */
static void printable(char *out, size_t cap, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < cap; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = 0;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *data,
				 size_t *size, void **con_cls)
{
	struct req *rq = *con_cls;
	int r;

	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		rq->srv = cls;
		rq->slot = -1;
		__atomic_add_fetch(&rq->srv->inflight, 1, __ATOMIC_ACQ_REL);
		rq->t0 = serve_now();
		printable(rq->path, sizeof(rq->path), url);
		printable(rq->method, sizeof(rq->method), method);
		rq->route = strlen(url) < sizeof(rq->path) ? find_route(url) : NULL;
		rq->method_ok = rq->route && (!strcmp(method, rq->route->method) ||
					      (!strcmp(rq->route->method, "GET") &&
					       !strcmp(method, "HEAD")));
		r = check_headers(rq, c);
		return r < 0 ? MHD_NO : MHD_YES;
	}
	if (*size) {
		/* Past the limit (a chunked body has no Content-Length): keep nothing more. */
		if (!rq->answered && !rq->too_big) {
			if (rq->body.n + *size > SERVE_MAX_BODY ||
			    cb_sbuf_add(&rq->body, data, *size)) {
				rq->too_big = 1;
				free(rq->body.p);
				memset(&rq->body, 0, sizeof(rq->body));
			}
		}
		*size = 0;
		return MHD_YES;
	}
	if (rq->answered)
		return MHD_YES;
	return respond(rq, c);
}

static void log_request(const struct req *rq)
{
	const struct gen_result *res = &rq->res;

	if (!rq->ran && rq->status == 200 && rq->route && !rq->route->gen)
		return;	/* health checks and scrapes would drown the rest */
	if (!rq->ran) {
		fprintf(stderr, "colibri serve: %s %s %d%s%s\n", rq->method, rq->path, rq->status,
			rq->why[0] ? ": " : "", rq->why);
		return;
	}
	fprintf(stderr, "colibri serve: %s %s %d: %u+%u tokens, %s, first token %.3f s, %.3f s in all\n",
		rq->method, rq->path, rq->status, res->prompt_tokens, res->completion_tokens,
		res->err == -ECANCELED ? (__atomic_load_n(&rq->srv->stopping, __ATOMIC_ACQUIRE) ?
					  "cut short: the server is stopping" :
					  "the client went away") :
		res->err ? res->msg : res->finish,
		res->t_first > 0 ? res->t_first - res->t_start : 0.0, res->t_end - res->t_start);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve *srv = cls;
	struct req *rq = *con_cls;

	if (!rq)
		return;
	deadlines_next(srv->deadlines, conn_deadline(c));
	if (rq->st) {
		stream_finish(rq->st, &rq->res);
		rq->ran = 1;
	}
	if (rq->ran)
		metrics_generation(srv->metrics, &rq->res);
	metrics_request(srv->metrics, rq->route ? rq->route->id : ROUTE_OTHER, rq->status);
	log_request(rq);
	if (rq->slot >= 0)
		slots_put(srv->slots, rq->slot);
	gen_req_release(&rq->g);
	free(rq->body.p);
	free(rq);
	*con_cls = NULL;
	__atomic_sub_fetch(&srv->inflight, 1, __ATOMIC_ACQ_REL);
}

/* A connection accepted (its deadline starts), or closing (forgotten). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct serve *srv = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = deadlines_open(srv->deadlines, connection_fd(c));
	} else {
		deadlines_close(srv->deadlines, *socket_context);
		*socket_context = NULL;
	}
}

/* The watchdog closed a connection that was too slow to send its request. */
static void on_expired(void *arg)
{
	struct serve *srv = arg;

	metrics_rejected(srv->metrics, REJECT_SLOW);
	fprintf(stderr, "colibri serve: a request not in whole within its deadline "
		"(--request-timeout %u s, or %u s after the previous answer): connection closed\n",
		srv->o.request_timeout, SERVE_IDLE_TIMEOUT);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static const char *const ours[] = {
		/* a client that went away: our own line says so */
		"Application reported internal error",
		"Closing connection (application error generating response)",
		/* a connection the deadline closed: on_expired() said so */
		"Connection socket is closed when reading request due to the error",
	};
	char buf[512];
	size_t i;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strncmp(buf, ours[i], strlen(ours[i])))
			return;
	fprintf(stderr, "colibri serve: httpd: %s%s", buf,
		buf[0] && buf[strlen(buf) - 1] == '\n' ? "" : "\n");
}

/*
 * A listening socket on @a, port @port: the descriptor, or -1 with errno
 * (and what failed in @what).  IPv6 sockets take IPv6 only: "localhost"
 * gets a socket of each family, and "::" does not take IPv4 (give
 * 0.0.0.0 for that), as before when libmicrohttpd made the socket.
 */
static int listen_on(const struct addrinfo *a, unsigned int port, const char **what)
{
	struct sockaddr_storage sa;
	int fd, one = 1, e;

	memcpy(&sa, a->ai_addr, a->ai_addrlen);
	if (a->ai_family == AF_INET6)
		((struct sockaddr_in6 *)&sa)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)&sa)->sin_port = htons((uint16_t)port);
	*what = "socket";
	fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	*what = "bind";
	if (bind(fd, (struct sockaddr *)&sa, a->ai_addrlen))
		goto fail;
	*what = "listen";
	if (listen(fd, 128))
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static void addr_text(const struct addrinfo *a, char *buf, size_t len)
{
	if (getnameinfo(a->ai_addr, a->ai_addrlen, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
		snprintf(buf, len, "?");
}

/* One daemon on listening socket @fd (taken); 0, or -1. */
static int start_daemon(struct serve *srv, int fd, int family)
{
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	unsigned int conns = srv->o.max_sessions * 4 > 64 ? srv->o.max_sessions * 4 : 64;
	struct MHD_Daemon *d;

	if (family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, srv,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, conns,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_CONN_MEMORY,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)SERVE_IDLE_TIMEOUT,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
			     MHD_OPTION_END);
	if (!d) {
		close(fd);
		return -1;
	}
	srv->d[srv->nd++] = d;
	return 0;
}

/* Listen on every address of @name not listened on yet: 0, or -1 with @err. */
static int listen_name(struct serve *srv, const char *name, int last, unsigned int *port,
		       char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai, *a;
	const char *what;
	char text[64];
	int r, fd, i, dup;

	r = getaddrinfo(name, "0", &hints, &ai);
	if (r) {
		cb_set_err(err, errlen, "--host %s: %s", srv->o.host, gai_strerror(r));
		return -1;
	}
	for (a = ai; a; a = a->ai_next) {
		/* an address listened on already (getaddrinfo may name one twice) */
		addr_text(a, text, sizeof(text));
		for (i = 0, dup = 0; i < srv->nd; i++)
			dup |= !strcmp(srv->addr_text[i], text);
		if (dup || srv->nd == SERVE_MAX_LISTEN ||
		    (a->ai_family != AF_INET && a->ai_family != AF_INET6))
			continue;
		fd = listen_on(a, *port, &what);
		if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL) &&
		    (srv->nd || a->ai_next || !last)) {
			fprintf(stderr, "colibri serve: not listening on %s (%s: %s)\n", text, what,
				strerror(errno));
			continue;
		}
		if (fd < 0) {
			cb_set_err(err, errlen, "cannot listen on %s port %u: %s: %s%s", text, *port,
				   what, strerror(errno),
				   errno == EADDRINUSE ? " (another server on it?)" :
				   errno == EACCES ? " (a privileged port?)" : "");
			break;
		}
		if (start_daemon(srv, fd, a->ai_family)) {
			cb_set_err(err, errlen, "cannot serve on %s port %u (out of memory or threads)",
				   text, *port);
			break;
		}
		snprintf(srv->addr_text[srv->nd - 1], sizeof(srv->addr_text[0]), "%s", text);
		*port = serve_http_port(srv);	/* --port 0: the others take the first's */
	}
	freeaddrinfo(ai);
	return a ? -1 : 0;
}

/*
 * Every address --host names, one daemon each, on one port (the first
 * one's when --port is 0).  "localhost" is the loopback of both families,
 * ::1 and 127.0.0.1, whatever /etc/hosts says (RFC 6761, 6.3).  An address
 * of a family this host lacks is skipped while another listens; any other
 * failure fails.
 */
int serve_http_start(struct serve *srv, char *err, size_t errlen)
{
	static const char *const loopback[] = { "::1", "127.0.0.1" };
	int local = !strcasecmp(srv->o.host, "localhost"), n = local ? 2 : 1, i;
	unsigned int port = srv->o.port;

	if (deadlines_create(&srv->deadlines, srv->o.request_timeout ? srv->o.request_timeout : 30,
			     SERVE_IDLE_TIMEOUT, on_expired, srv)) {
		cb_set_err(err, errlen, "cannot start: out of memory or threads");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (listen_name(srv, local ? loopback[i] : srv->o.host, i + 1 == n, &port, err,
				errlen))
			goto fail;
	if (!srv->nd) {
		cb_set_err(err, errlen, "--host %s: no address to listen on", srv->o.host);
		goto fail;
	}
	return 0;
fail:
	serve_http_stop(srv);
	return -1;
}

unsigned int serve_http_port(const struct serve *srv)
{
	const union MHD_DaemonInfo *di =
		srv->nd ? MHD_get_daemon_info(srv->d[0], MHD_DAEMON_INFO_BIND_PORT) : NULL;

	return di ? di->port : srv->o.port;
}

/* Seconds serve_http_stop() gives running requests to be answered. */
#define STOP_GRACE_S 10

void serve_http_stop(struct serve *srv)
{
	MHD_socket ls[SERVE_MAX_LISTEN];
	int i;

	if (!srv->nd) {
		deadlines_destroy(srv->deadlines);
		srv->deadlines = NULL;
		return;
	}
	for (i = 0; i < srv->nd; i++)
		ls[i] = MHD_quiesce_daemon(srv->d[i]);
	/*
	 * Running generations end within a pass, each answered how it ended (a
	 * stream's last events, a 503); new requests on open connections get a
	 * 503.  The daemons are stopped (which shuts every socket) once those
	 * answers are out, or after STOP_GRACE_S.
	 */
	for (i = 0; i < srv->n_all; i++)
		__atomic_store_n(&srv->all[i].stopping, 1, __ATOMIC_RELEASE);
	slots_cancel_all(srv->slots);
	for (i = 0; i < STOP_GRACE_S * 100 && __atomic_load_n(&srv->inflight, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	for (i = 0; i < srv->nd; i++) {
		MHD_stop_daemon(srv->d[i]);
		srv->d[i] = NULL;
		/* Ours to close, and only now: the daemon's threads are gone. */
		if (ls[i] != MHD_INVALID_SOCKET)
			close(ls[i]);
	}
	srv->nd = 0;
	deadlines_destroy(srv->deadlines);
	srv->deadlines = NULL;
}
