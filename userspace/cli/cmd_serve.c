// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri serve - an OpenAI-compatible HTTP server over one model
 * (userspace/serve/, docs/serve.md).  This file is the command: its
 * options, the model, the signals; the server is serve/.
 *
 * SIGINT and SIGTERM are blocked before any thread starts (the in-process
 * engine's pool, the daemon's threads inherit the mask) and taken here
 * with sigwait(): no libcolibri call is ever interrupted by them, and the
 * server stops in order: no new connection, running generations
 * cancelled, connections closed, the model closed (and unloaded if this
 * server loaded it into the kernel).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chat/chat_template.h"
#include "cli.h"
#include "cli_opts.h"
#include "colibri_session.h"
#include "serve.h"
#include "serve_live.h"
#include "serve_mask.h"
#include "serve_metrics.h"
#include "serve_prompt.h"
#include "serve_slots.h"
#include "tokenizer.h"

const int cli_has_serve = 1;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: colibri serve --model M [--model M ...] [--name N] [--host 127.0.0.1]\n"
		"         [--port 8080] [--backend auto|kernel|user] [--api-key K]\n"
		"         [--max-sessions N] [--context N] [--request-timeout S]\n"
		"         [--cors ORIGINS] [--threads N] [--isa I] [--io ioctl|uring]\n"
		"An OpenAI-compatible HTTP server (docs/serve.md): GET /v1/models,\n"
		"POST /v1/chat/completions, POST /v1/completions, GET /health, GET /metrics;\n"
		"and Ollama's API: POST /api/chat, /api/generate, /api/show, GET /api/tags,\n"
		"/api/version; and GET /, a page to chat and to watch the experts live\n"
		"(GET /live, its server-sent events).\n"
		"Each request is a session of its own on the model, so the kernel batches\n"
		"concurrent requests (and those of other processes) in its forward passes.\n"
		"  --model M          a .colibri file, or the name of a model loaded in the\n"
		"                     kernel (in-process: also a HF directory or a GGUF file);\n"
		"                     given several times (up to 8), every one is served, each\n"
		"                     chosen by the request's \"model\"\n"
		"  --name N           the model id clients ask for (default: the model's\n"
		"                     name); kernel: also the name to load M under (one\n"
		"                     --model only)\n"
		"  --host H           the address to listen on (default 127.0.0.1)\n"
		"  --port P           the TCP port (default 8080; 0: any free one)\n"
		"  --api-key K        clients must send \"Authorization: Bearer K\" (default:\n"
		"                     $COLIBRI_API_KEY; none: no key asked)\n"
		"  --max-sessions N   requests generating at once (default 8); one more is\n"
		"                     answered 429 at once\n"
		"  --context N        positions of each request's session (default: 2048,\n"
		"                     or the model's own limit if smaller)\n"
		"  --request-timeout S  seconds a new connection has to send a whole\n"
		"                     request, headers and body (default 30; a later one\n"
		"                     on the same connection: 120 from the last answer)\n"
		"  --cors ORIGINS     pages of these origins may call the API from a browser\n"
		"                     (comma separated, exact, e.g. http://localhost:3000;\n"
		"                     * any; default: none)\n"
		CLI_HELP_BACKEND CLI_HELP_IO CLI_HELP_THREADS CLI_HELP_ISA
		"A model this server loaded into the kernel is unloaded when it stops\n"
		"(SIGINT, SIGTERM), unless another process is attached to it then.\n");
}

struct serve_cmd {
	struct cli_common co;
	struct serve_opts o;
	const char *name;
	const char *models[SERVE_MAX_MODELS];
	int n_models;
};

static int parse_opts(int argc, char **argv, struct serve_cmd *sc)
{
	static const struct option opts[] = {
		CLI_OPTION_MODEL, CLI_OPTION_BACKEND, CLI_OPTION_IO, CLI_OPTION_THREADS,
		CLI_OPTION_ISA,
		{ "name", required_argument, NULL, 'N' },
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "api-key", required_argument, NULL, 'k' },
		{ "max-sessions", required_argument, NULL, 'm' },
		{ "context", required_argument, NULL, 'c' },
		{ "request-timeout", required_argument, NULL, 't' },
		{ "cors", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *cmd = "serve";
	uint32_t v;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case CLI_OPT_MODEL:
			if (sc->n_models == SERVE_MAX_MODELS) {
				fprintf(stderr, "colibri serve: at most %d --model\n",
					SERVE_MAX_MODELS);
				return -1;
			}
			sc->models[sc->n_models++] = optarg;
			sc->co.model = optarg;
			break;
		case 'N': sc->name = optarg; break;
		case 'H': sc->o.host = optarg; break;
		case 'p':
			r = cli_u32(cmd, "--port", optarg, 0, 65535, &v);
			sc->o.port = v;
			break;
		case 'k': sc->o.api_key = optarg; break;
		case 'm':
			r = cli_u32(cmd, "--max-sessions", optarg, 1, 1024, &v);
			sc->o.max_sessions = v;
			break;
		case 'c':
			r = cli_u32(cmd, "--context", optarg, 1, 1u << 20, &sc->o.context);
			break;
		case 't':
			r = cli_u32(cmd, "--request-timeout", optarg, 1, 3600, &v);
			sc->o.request_timeout = v;
			break;
		case 'C': sc->o.cors = optarg[0] ? optarg : NULL; break;
		case 'h': usage(stdout); return 1;
		default:
			r = cli_common_opt(cmd, c, optarg, &sc->co);
			if (!r)
				goto bad;
			r = r < 0 ? -1 : 0;
		}
		if (r)
			return -1;
	}
	if (!sc->co.model || optind != argc)
		goto bad;
	if (sc->o.api_key && !sc->o.api_key[0]) {
		fprintf(stderr, "colibri serve: --api-key is empty\n");
		return -1;
	}
	if (sc->name && sc->n_models > 1) {
		fprintf(stderr, "colibri serve: --name names one model; with several --model, "
			"each is served by its own name\n");
		return -1;
	}
	return cli_common_check(cmd, &sc->co);
bad:
	usage(stderr);
	return -1;
}

/* The model's tokenizer, template, and a session's context: what every request needs. */
static int prepare(struct serve *srv)
{
	struct colibri_session_opts so = { .max_context = srv->o.context };
	struct colibri_session *s;
	char err[512];
	int family;

	srv->tok = colibri_model_tokenizer(srv->m, err, sizeof(err));
	if (!srv->tok) {
		fprintf(stderr, "colibri serve: %s (the server needs the model's tokenizer)\n", err);
		return -1;
	}
	srv->chat = colibri_model_chat(srv->m, err, sizeof(err));
	if (!srv->chat) {
		fprintf(stderr, "colibri serve: %s\n", err);
		return -1;
	}
	srv->eos = cb_tok_eos_id(srv->tok);
	srv->n_eot = chat_end_of_turn(srv->chat, srv->tok, srv->eos, srv->eot, CHAT_END_MAX);
	family = call_family_of(srv->chat->tmpl);
	srv->format = chat_is_harmony(srv->chat, srv->tok) ? FORMAT_HARMONY :
		      family >= 0 ? FORMAT_TAGGED + family : FORMAT_PLAIN;
	srv->live = live_create(srv->mi);
	if (!srv->live) {
		fprintf(stderr, "colibri serve: out of memory\n");
		return -1;
	}
	/* the vocabulary sorted for response_format's masks, once */
	srv->vi = malloc(sizeof(*srv->vi));
	if (!srv->vi || vocab_index_build(srv->vi, srv->tok, srv->mi->vocab_size)) {
		free(srv->vi);
		srv->vi = NULL;
		fprintf(stderr, "colibri serve: out of memory\n");
		return -1;
	}
	/* One session now: a context the backend refuses is said at start, not per request. */
	if (colibri_session_open(&s, srv->m, &so, err, sizeof(err))) {
		fprintf(stderr, "colibri serve: %s\n", err);
		return -1;
	}
	srv->max_context = colibri_session_max_context(s);
	colibri_session_close(s);
	return 0;
}

/* What a model is served as: its id, backend, context, template, format. */
static void say_model(const struct serve *srv)
{
	char text[96], eot[256] = "";
	size_t o = 0;
	int i;

	for (i = 0; i < srv->n_eot && o < sizeof(eot); i++) {
		int32_t id = srv->eot[i];
		long n = cb_tok_decode(srv->tok, &id, 1, 0, text, sizeof(text) - 1);
		int k;

		if (n <= 0 || n >= (long)sizeof(text))
			continue;
		text[n] = 0;
		k = snprintf(eot + o, sizeof(eot) - o, "%s%s", o ? " or " : "; an answer ends at ",
			     text);
		if (k > 0)
			o += (size_t)k;
	}
	fprintf(stderr, "colibri serve: model '%s' on %s, %u positions a request, up to %u at once\n",
		srv->name, srv->mi->description, srv->max_context, srv->o.max_sessions);
	fprintf(stderr, "colibri serve: chat template: %s%s%s%s%s\n",
		srv->chat->tmpl ? srv->chat->source : "none, the plain fallback format", eot,
		srv->format == FORMAT_HARMONY ? "; harmony channels" :
		format_tagged(srv->format) ? "; tool calls in the " : "",
		format_tagged(srv->format) ? call_syntax(format_family(srv->format))->name : "",
		srv->format == FORMAT_HARMONY ? " split into content, reasoning, tool calls" :
		format_tagged(srv->format) ? " format, split from reasoning and content" : "");
}

static void say_ready(const struct serve *srv)
{
	int i;

	for (i = 0; i < srv->n_all; i++)
		say_model(&srv->all[i]);
	fprintf(stderr, "colibri serve: listening on http://%s%s%s:%u\n",
		strchr(srv->o.host, ':') ? "[" : "", srv->o.host,
		strchr(srv->o.host, ':') ? "]" : "", serve_http_port(srv));
	if (srv->nd > 1 || strcmp(srv->addr_text[0], srv->o.host)) {
		fprintf(stderr, "colibri serve: %s is", srv->o.host);
		for (i = 0; i < srv->nd; i++)
			fprintf(stderr, "%s %s", i ? (i + 1 == srv->nd ? " and" : ",") : "",
				srv->addr_text[i]);
		fprintf(stderr, "\n");
	}
}

static int run(struct serve *srv, const sigset_t *stop)
{
	char err[512];
	int sig, ret, i;

	srv->metrics = metrics_create();
	ret = slots_create(&srv->slots, srv->o.max_sessions);
	if (!srv->metrics || ret) {
		fprintf(stderr, "colibri serve: cannot start: out of memory or threads\n");
		goto out;
	}
	for (i = 1; i < srv->n_all; i++) {
		srv->all[i].metrics = srv->metrics;
		srv->all[i].slots = srv->slots;
	}
	if (serve_http_start(srv, err, sizeof(err))) {
		fprintf(stderr, "colibri serve: %s\n", err);
		ret = -1;	/* a server that cannot listen has failed to start */
		goto out;
	}
	for (i = 1; i < srv->n_all; i++)
		srv->all[i].deadlines = srv->deadlines;
	say_ready(srv);
	while (sigwait(stop, &sig))
		;
	fprintf(stderr, "colibri serve: %s: stopping\n", strsignal(sig));
	serve_http_stop(srv);
	ret = 0;
out:
	slots_destroy(srv->slots);
	metrics_destroy(srv->metrics);
	return ret ? 1 : 0;
}

/* Model @i of the command line opened into @srv: 0, or -1 (said). */
static int open_model(const struct serve_cmd *sc, int i, struct serve *srv)
{
	struct colibri_model_opts mo;
	char err[512];

	cli_model_opts(&sc->co, &mo);
	mo.name = sc->name;
	mo.flags |= COLIBRI_MODEL_UNLOAD;
	if (colibri_model_open(&srv->m, sc->models[i], &mo, err, sizeof(err))) {
		fprintf(stderr, "colibri serve: %s\n", err);
		return -1;
	}
	srv->o = sc->o;
	srv->mi = colibri_model_info(srv->m);
	srv->created = time(NULL);
	snprintf(srv->name, sizeof(srv->name), "%s", sc->name ? sc->name : srv->mi->name);
	if (srv->mi->loaded)
		fprintf(stderr, "colibri serve: loaded %s into the kernel as '%s'\n", sc->models[i],
			srv->mi->name);
	if (srv->mi->note[0])
		fprintf(stderr, "colibri serve: the kernel cannot run it (%s): running in-process\n",
			srv->mi->note);
	return prepare(srv);
}

static void close_model(struct serve *srv)
{
	if (srv->vi) {
		vocab_index_release(srv->vi);
		free(srv->vi);
	}
	live_destroy(srv->live);
	if (srv->m)
		colibri_model_close(srv->m);
}

int cmd_serve(int argc, char **argv)
{
	struct serve_cmd sc = { .o = { .host = "127.0.0.1", .port = 8080, .max_sessions = 8,
				       .request_timeout = 30 } };
	struct serve *all;
	sigset_t stop;
	int ret = 0, i, j;

	sc.o.api_key = getenv("COLIBRI_API_KEY");
	if (sc.o.api_key && !sc.o.api_key[0])
		sc.o.api_key = NULL;
	cli_common_init(&sc.co, COLIBRI_BACKEND_AUTO);
	ret = parse_opts(argc, argv, &sc);
	if (ret)
		return ret > 0 ? 0 : 2;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	all = calloc(sc.n_models, sizeof(*all));
	if (!all) {
		fprintf(stderr, "colibri serve: out of memory\n");
		return 1;
	}
	for (i = 0; i < sc.n_models && !ret; i++) {
		all[i].all = all;
		all[i].n_all = sc.n_models;
		ret = open_model(&sc, i, &all[i]);
		for (j = 0; j < i && !ret; j++)
			if (!strcmp(all[j].name, all[i].name)) {
				fprintf(stderr, "colibri serve: two models named '%s' (%s and %s)\n",
					all[i].name, sc.models[j], sc.models[i]);
				ret = -1;
			}
	}
	ret = ret ? 1 : run(all, &stop);
	for (i = sc.n_models; i-- > 0;)
		close_model(&all[i]);
	free(all);
	return ret;
}
