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
 * API key, Content-Length against the limit, and for a generation a slot
 * (serve_slots.h); any of those failing is answered at once, before the
 * body is read.  Then the body, in pieces, kept up to SERVE_MAX_BODY.
 * Then the answer.  on_completed() is the one place a request ends, sent
 * or not: it finishes a stream, counts, logs and frees.
 */
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"
#include "serve_metrics.h"
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
};

static const struct route routes[] = {
	{ "/v1/chat/completions", 0, "POST", ROUTE_CHAT, 1, 1, GEN_CHAT },
	{ "/v1/completions", 0, "POST", ROUTE_COMPLETIONS, 1, 1, GEN_COMPLETION },
	{ "/v1/models", 0, "GET", ROUTE_MODELS, 1, 0, 0 },
	{ "/v1/models/", 1, "GET", ROUTE_MODELS, 1, 0, 0 },
	{ "/health", 0, "GET", ROUTE_HEALTH, 0, 0, 0 },
	{ "/metrics", 0, "GET", ROUTE_METRICS, 0, 0, 0 },
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
	MHD_add_response_header(resp, "Content-Type", ctype);
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

/* The checks on the headers alone: 1 answered already, 0 go on, -1 drop. */
static int check_headers(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv;
	struct api_error e;
	const char *auth, *clen;
	unsigned long long n;
	char *end;

	if (!rq->route) {
		api_error_set(&e, 404, "invalid_request_error", NULL, "unknown_url",
			      "Unknown request URL: %s %.100s", rq->method, rq->path);
		goto err;
	}
	if (!rq->method_ok) {
		api_error_set(&e, 405, "invalid_request_error", NULL, "method_not_allowed",
			      "%s %.100s: use %s", rq->method, rq->path, rq->route->method);
		goto err;
	}
	if (rq->route->auth && srv->o.api_key) {
		auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
		if (!auth || strncmp(auth, "Bearer ", 7)) {
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
	if (rq->route->gen) {
		struct slots_miss miss;

		rq->slot = slots_take(srv->slots, connection_fd(c), &miss);
		if (rq->slot < 0) {
			fprintf(stderr, "colibri serve: %s %s: no slot free after %.3f s: %u being "
				"cancelled, %u not generating yet or done\n", rq->method, rq->path,
				miss.waited, miss.leaving, miss.unwatched);
			metrics_rejected(srv->metrics, REJECT_BUSY);
			api_error_set(&e, 429, "rate_limit_error", NULL, "rate_limit_exceeded",
				      "The server is busy: %u requests are generating (--max-sessions); retry later",
				      srv->o.max_sessions);
			goto err;
		}
	}
	return 0;
err:
	return answer_error(rq, c, &e) == MHD_YES ? 1 : -1;
}

static void cancel_session(void *arg)
{
	colibri_session_cancel(arg);
}

static enum MHD_Result generate(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv;
	struct colibri_session *s = NULL;
	struct gen_sink sink;
	struct MHD_Response *resp;
	struct gen_answer ans = { .harmony = srv->harmony && rq->route->kind == GEN_CHAT };
	struct resp_head h;
	struct api_error e;
	enum MHD_Result ret;

	if (gen_req_parse(&rq->g, rq->route->kind, rq->body.p ? rq->body.p : "", rq->body.n,
			  srv->mi->vocab_size, &e))
		return answer_error(rq, c, &e);
	if (strcmp(rq->g.model, srv->name)) {
		api_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
			      "The model '%.100s' does not exist (this server has '%s')",
			      rq->g.model, srv->name);
		return answer_error(rq, c, &e);
	}
	if (gen_prepare(srv, &rq->g, &e) || gen_open(srv, &rq->g, &s, &e))
		return answer_error(rq, c, &e);
	if (rq->g.stream) {
		if (stream_start(srv, &rq->g, s, &rq->slot, connection_fd(c), rq->t0, &rq->st,
				 &resp, &e))
			return answer_error(rq, c, &e);
		ret = MHD_queue_response(c, 200, resp);
		MHD_destroy_response(resp);
		rq->answered = 1;
		rq->status = ret == MHD_YES ? 200 : 0;
		return ret;
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
	const union MHD_DaemonInfo *di =
		MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return di ? di->num_connections : 0;
}

static enum MHD_Result health(struct req *rq, struct MHD_Connection *c)
{
	struct serve *srv = rq->srv;
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "{\"status\": \"ok\", \"model\": \"%s\", \"requests\": %u, \"sessions\": %d, \"max_sessions\": %u, \"connections\": %u}\n",
		 srv->name, slots_in_use(srv->slots), metrics_sessions_now(srv->metrics),
		 srv->o.max_sessions, connections_now(srv));
	return answer_json(rq, c, 200, strdup(buf));
}

static enum MHD_Result models(struct req *rq, struct MHD_Connection *c)
{
	struct api_error e;

	if (!rq->route->prefix)
		return answer_json(rq, c, 200, resp_models(rq->srv));
	if (!strcmp(rq->path + strlen(rq->route->path), rq->srv->name))
		return answer_json(rq, c, 200, resp_model(rq->srv));
	api_error_set(&e, 404, "invalid_request_error", "model", "model_not_found",
		      "The model '%.100s' does not exist", rq->path + strlen(rq->route->path));
	return answer_error(rq, c, &e);
}

/* The body is in: answer. */
static enum MHD_Result respond(struct req *rq, struct MHD_Connection *c)
{
	struct api_error e;
	size_t len;
	char *text;

	if (rq->too_big) {
		api_error_set(&e, 413, "invalid_request_error", NULL, "request_too_large",
			      "The body is larger than %u bytes", SERVE_MAX_BODY);
		return answer_error(rq, c, &e);
	}
	switch (rq->route->id) {
	case ROUTE_CHAT:
	case ROUTE_COMPLETIONS:
		return generate(rq, c);
	case ROUTE_MODELS:
		return models(rq, c);
	case ROUTE_HEALTH:
		return health(rq, c);
	case ROUTE_METRICS:
		text = metrics_render(rq->srv, &len);
		return answer(rq, c, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
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
		res->err == -ECANCELED ? "the client went away" : res->err ? res->msg : res->finish,
		res->t_first > 0 ? res->t_first - res->t_start : 0.0, res->t_end - res->t_start);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve *srv = cls;
	struct req *rq = *con_cls;

	if (!rq)
		return;
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
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static const char *const ours[] = {
		/* a client that went away: our own line says so */
		"Application reported internal error",
		"Closing connection (application error generating response)",
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

int serve_http_start(struct serve *srv, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	unsigned int conns = srv->o.max_sessions * 4 > 64 ? srv->o.max_sessions * 4 : 64;
	struct addrinfo *ai;
	char port[16];
	int r;

	snprintf(port, sizeof(port), "%u", srv->o.port);
	r = getaddrinfo(srv->o.host, port, &hints, &ai);
	if (r) {
		cb_set_err(err, errlen, "--host %s: %s", srv->o.host, gai_strerror(r));
		return -1;
	}
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv->d = MHD_start_daemon(flags, (uint16_t)srv->o.port, NULL, NULL, on_access, srv,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
				  MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				  MHD_OPTION_CONNECTION_LIMIT, conns,
				  MHD_OPTION_CONNECTION_TIMEOUT, 120u,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				  MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!srv->d) {
		cb_set_err(err, errlen, "cannot listen on %s port %u (in use? a privileged port?)",
			   srv->o.host, srv->o.port);
		return -1;
	}
	return 0;
}

unsigned int serve_http_port(const struct serve *srv)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);

	return di ? di->port : srv->o.port;
}

void serve_http_stop(struct serve *srv)
{
	MHD_socket ls;

	if (!srv->d)
		return;
	ls = MHD_quiesce_daemon(srv->d);
	/* Running generations end within a pass; their connections then close. */
	slots_cancel_all(srv->slots);
	MHD_stop_daemon(srv->d);
	srv->d = NULL;
	/* Ours to close, and only now: the daemon's threads are gone. */
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
}
