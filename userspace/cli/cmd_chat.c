// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri chat - a conversation with a model in the terminal, through the
 * model's own chat template, the answer streamed as it is made.
 *
 *   > Who art thou?
 *   (the answer)
 *   > /system Answer in one line.     start over with this system prompt
 *   > /reset                          a new conversation, same system prompt
 *   > /quit                           (or Ctrl-D)
 *
 * Ctrl-C stops the answer being made (what came of it stays in the
 * conversation) and not the program.  SIGINT is blocked in every thread
 * before any starts and taken by one thread of its own with sigwait(),
 * which cancels the running session (colibri_session_cancel() may be
 * called from any thread): no libcolibri call is interrupted by the
 * signal, the generation ends within one forward pass.
 *
 * Each turn renders the whole conversation and keeps the session's
 * sequence when the new prompt begins with what the session holds (the
 * usual case: the earlier turns tokenize as they did), so only the new
 * turn is prefilled; otherwise the session starts over.
 *
 * A harmony model's answer (GPT-OSS) is split into its channels as
 * colibri serve splits it (serve_harmony.c): the final answer goes to
 * stdout and into the conversation; the reasoning goes to stderr (dim on
 * a terminal), and so does a tool call, which nothing here can answer.
 * The template then renders the earlier answers without their reasoning,
 * as GPT-OSS was trained, so such a turn starts the session over.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "chat/chat_template.h"
#include "cli.h"
#include "cli_opts.h"
#include "colibri_session.h"
#include "serve_harmony.h"
#include "serve_tagged.h"
#include "serve_prompt.h"
#include "tokenizer.h"
#include "util/util.h"

struct chat_opts {
	struct cli_common co;
	const char *name;
	const char *system;
	uint32_t max_tokens;
	uint32_t context;
	struct colibri_sampling sp;
};

/* The conversation and its session. */
struct chat {
	struct colibri_model *m;
	struct cb_tokenizer *tok;
	const struct cb_chat *tmpl;
	struct colibri_session *s;
	int32_t eos, eot[CHAT_END_MAX];
	int n_eot;
	int harmony;			/* answers split into channels */
	int calls;			/* answers with tagged tool calls: enum call_family, or -1 */
	int dim;			/* stderr is a terminal */
	uint32_t max_tokens;
	char *system;
	cJSON *messages;
	uint32_t *held;			/* the tokens the session holds, in order */
	uint32_t n_held;
};

/* What the Ctrl-C thread and the conversation share. */
static struct {
	pthread_mutex_t lock;
	struct colibri_session *running;	/* the session generating now, or NULL */
} sig = { PTHREAD_MUTEX_INITIALIZER, NULL };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: colibri chat --model M [--system TEXT] [--max-tokens N]\n"
		"         [--temperature T] [--top-p P] [--top-k K] [--seed S] [--context N]\n"
		"         [--name NAME] [--backend auto|kernel|user] [--threads N] [--isa I]\n"
		"         [--io ioctl|uring]\n"
		"A conversation with M through its chat template (the plain fallback\n"
		"format for a model without one), each answer streamed to stdout.  Lines\n"
		"read from stdin are the user's turns; /system TEXT starts over with that\n"
		"system prompt, /reset starts a new conversation (the system prompt\n"
		"stays), /quit or Ctrl-D leaves.  Ctrl-C stops the answer being made,\n"
		"not the program.  Sampling is greedy unless\n"
		"--temperature is given.  A harmony model's (GPT-OSS's) reasoning and\n"
		"tool calls go to stderr, its final answer to stdout.\n"
		"  --max-tokens N     most tokens of one answer (default: until the model\n"
		"                     ends its turn or the context is full)\n"
		"  --context N        positions of the conversation (default: 2048, or the\n"
		"                     model's own limit if smaller)\n"
		"  --name NAME        kernel: the name to load M under (default: its own)\n"
		CLI_HELP_BACKEND CLI_HELP_IO CLI_HELP_THREADS CLI_HELP_ISA);
}

static int parse_opts(int argc, char **argv, struct chat_opts *o)
{
	static const struct option opts[] = {
		CLI_OPTION_MODEL, CLI_OPTION_BACKEND, CLI_OPTION_IO, CLI_OPTION_THREADS,
		CLI_OPTION_ISA, CLI_OPTION_SAMPLING,
		{ "system", required_argument, NULL, 'S' },
		{ "max-tokens", required_argument, NULL, 'n' },
		{ "context", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *cmd = "chat";
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'S': o->system = optarg; break;
		case 'n': r = cli_u32(cmd, "--max-tokens", optarg, 1, 1u << 20, &o->max_tokens); break;
		case 'c': r = cli_u32(cmd, "--context", optarg, 1, 1u << 20, &o->context); break;
		case 'N': o->name = optarg; break;
		case 'h': usage(stdout); return 1;
		default:
			r = cli_sampling_opt(cmd, c, optarg, &o->sp) ?:
			    cli_common_opt(cmd, c, optarg, &o->co);
			if (!r)
				goto bad;
			r = r < 0 ? -1 : 0;
		}
		if (r)
			return -1;
	}
	if (!o->co.model || optind != argc)
		goto bad;
	return cli_common_check(cmd, &o->co);
bad:
	usage(stderr);
	return -1;
}

/* The Ctrl-C thread: stop the answer, or tell how to leave. */
static void *sigint_thread(void *arg)
{
	static const char hint[] = "\n(/quit or Ctrl-D leaves)\n";
	const sigset_t *set = arg;
	ssize_t w;
	int s;

	for (;;) {
		if (sigwait(set, &s))
			continue;
		pthread_mutex_lock(&sig.lock);
		if (sig.running)
			colibri_session_cancel(sig.running);
		else
			w = write(STDERR_FILENO, hint, sizeof(hint) - 1);	/* or nowhere */
		pthread_mutex_unlock(&sig.lock);
		(void)w;
	}
	return NULL;
}

/* A new conversation: the system prompt only, an empty session. */
static int start_over(struct chat *ch)
{
	cJSON *sys;

	cJSON_Delete(ch->messages);
	ch->messages = cJSON_CreateArray();
	if (!ch->messages)
		return -1;
	if (ch->system) {
		sys = cJSON_CreateObject();
		if (!sys || !cJSON_AddItemToArray(ch->messages, sys) ||
		    !cJSON_AddStringToObject(sys, "role", "system") ||
		    !cJSON_AddStringToObject(sys, "content", ch->system))
			return -1;
	}
	colibri_session_reset(ch->s);
	ch->n_held = 0;
	return 0;
}

static int add_message(struct chat *ch, const char *role, const char *content)
{
	cJSON *m = cJSON_CreateObject();

	if (!m || !cJSON_AddItemToArray(ch->messages, m)) {
		cJSON_Delete(m);
		return -1;
	}
	return cJSON_AddStringToObject(m, "role", role) &&
	       cJSON_AddStringToObject(m, "content", content) ? 0 : -1;
}

/* One answer as it is made. */
struct answer {
	struct chat *ch;
	struct cb_tok_stream ts;
	struct harmony hm;		/* when ch->harmony */
	struct tagged tg;		/* when ch->calls >= 0 */
	char *piece;
	size_t cap;
	struct cb_sbuf text;		/* what was printed to stdout: the answer */
	enum text_part last;		/* the part stderr had last */
	int on_err;			/* stderr's line is open (no newline yet) */
	uint32_t *toks;			/* the tokens handed out */
	uint32_t n_toks;
	int oom;
};

/* The answer's own text: stdout and the conversation. */
static void say(struct answer *a, const char *s, size_t n)
{
	fwrite(s, 1, n, stdout);
	fflush(stdout);
	if (cb_sbuf_add(&a->text, s, n))
		a->oom = 1;
}

/* Close stderr's open part: end its dimming and its line. */
static void aside_end(struct answer *a)
{
	if (!a->on_err)
		return;
	fputs(a->ch->dim ? "\033[22m\n" : "\n", stderr);
	a->on_err = 0;
}

/* A parser's output (harmony's, Hermes'): the answer, or an aside on stderr. */
static int harmony_out(void *arg, enum text_part part, const char *s, size_t n)
{
	struct answer *a = arg;

	if (part == PART_CONTENT) {
		aside_end(a);
		say(a, s, n);
		return 0;
	}
	if (a->on_err && part != a->last && part != PART_TOOL_ARGS)
		aside_end(a);
	if (!a->on_err) {
		if (a->ch->dim)
			fputs("\033[2m", stderr);
		if (part == PART_TOOL_NAME)
			fputs("(a tool call, which colibri chat cannot answer) ", stderr);
		a->on_err = 1;
	}
	fwrite(s, 1, n, stderr);
	if (part == PART_TOOL_NAME)
		fputc(' ', stderr);
	fflush(stderr);
	a->last = part;
	return 0;
}

static int on_token(void *arg, int32_t token, const struct colibri_step *st)
{
	struct answer *a = arg;
	long n;
	int i;

	a->toks[a->n_toks++] = (uint32_t)token;
	for (i = 0; i < a->ch->n_eot; i++)
		if (token == a->ch->eot[i]) {
			/* harmony's parser sees the end too: <|call|> ends a call */
			if (a->ch->harmony)
				harmony_feed(&a->hm, token);
			return 1;
		}
	if (a->ch->harmony)
		return harmony_feed(&a->hm, token);
	if (a->ch->calls >= 0)
		return tagged_feed_token(&a->tg, &a->ts, token, a->piece, a->cap) < 0 ?
		       (a->oom = 1) : 0;
	n = cb_tok_stream_feed(&a->ts, token, a->piece, a->cap);
	if (n > 0)
		say(a, a->piece, (size_t)n);
	return 0;
}

/*
 * What the session holds after a generation: the prompt and the tokens
 * handed out, as far as they were fed (n_past says how far).
 */
static void remember(struct chat *ch, const uint32_t *ids, uint32_t n, const struct answer *a)
{
	uint32_t past = colibri_session_n_past(ch->s), i;

	ch->n_held = 0;
	if (past > n + a->n_toks)
		return;		/* cannot happen: then hold nothing, the next turn starts over */
	for (i = 0; i < past; i++)
		ch->held[i] = i < n ? ids[i] : a->toks[i - n];
	ch->n_held = past;
}

/* The model's answer to the conversation so far; 0, or -1 (said). */
static int answer(struct chat *ch)
{
	uint32_t ctx = colibri_session_max_context(ch->s), *ids = NULL, from = 0;
	struct answer a = { .ch = ch };
	struct colibri_generation g = {
		.max_new = ch->max_tokens ? ch->max_tokens : ctx, .eos = ch->eos,
		.on_token = on_token, .arg = &a,
	};
	char err[512];
	long n, k;
	int ret = -1;

	n = chat_prompt(ch->tmpl, ch->tok, ch->messages, NULL, NULL, &ids, err, sizeof(err));
	if (n <= 0) {
		fprintf(stderr, "colibri chat: %s\n", n < 0 ? err : "the prompt is empty");
		goto out;
	}
	if ((uint64_t)n >= ctx) {
		fprintf(stderr, "colibri chat: the conversation (%ld tokens) no longer fits the context (%u positions): /reset starts over\n",
			n, ctx);
		goto out;
	}
	/* Keep what the session holds if the prompt goes on from it. */
	if (ch->n_held && ch->n_held < (uint32_t)n &&
	    !memcmp(ids, ch->held, ch->n_held * sizeof(*ids)))
		from = ch->n_held;
	else
		colibri_session_reset(ch->s);
	a.cap = cb_tok_stream_cap(ch->tok);
	a.piece = malloc(a.cap);
	a.toks = malloc((ctx + 1) * sizeof(*a.toks));
	if (!a.piece || !a.toks) {
		fprintf(stderr, "colibri chat: out of memory\n");
		goto out;
	}
	cb_tok_stream_init(&a.ts, ch->tok, CB_TOK_SKIP_SPECIAL);
	if (ch->harmony && harmony_init(&a.hm, ch->tok, harmony_out, &a)) {
		fprintf(stderr, "colibri chat: out of memory\n");
		goto out;
	}
	if (ch->calls >= 0)
		tagged_init(&a.tg, ch->calls, NULL, harmony_out, &a);
	pthread_mutex_lock(&sig.lock);
	sig.running = ch->s;
	pthread_mutex_unlock(&sig.lock);
	ret = colibri_session_generate(ch->s, ids + from, (uint32_t)(n - from), &g);
	pthread_mutex_lock(&sig.lock);
	sig.running = NULL;
	pthread_mutex_unlock(&sig.lock);
	if (ch->harmony) {
		harmony_end(&a.hm);
		harmony_release(&a.hm);
		aside_end(&a);
	} else if (ch->calls >= 0) {
		k = cb_tok_stream_flush(&a.ts, a.piece, a.cap);
		if ((k > 0 && tagged_feed(&a.tg, a.piece, (size_t)k) < 0) || tagged_end(&a.tg) < 0)
			a.oom = 1;
		tagged_release(&a.tg);
		aside_end(&a);
	} else {
		k = cb_tok_stream_flush(&a.ts, a.piece, a.cap);
		if (k > 0)
			say(&a, a.piece, (size_t)k);
	}
	fputc('\n', stdout);
	fflush(stdout);
	if (ret == -ECANCELED)
		fprintf(stderr, "(stopped)\n");
	else if (ret)
		fprintf(stderr, "colibri chat: %s\n", colibri_session_error(ch->s));
	else if (g.stop == COLIBRI_STOP_CONTEXT)
		fprintf(stderr, "(the context is full: /reset starts over)\n");
	/* What was said stays said, a stopped answer too. */
	if (a.oom || add_message(ch, "assistant", a.text.p ? a.text.p : "")) {
		fprintf(stderr, "colibri chat: out of memory\n");
		ret = -1;
		goto out;
	}
	remember(ch, ids, (uint32_t)n, &a);
	ret = 0;
out:
	free(ids);
	free(a.piece);
	free(a.toks);
	free(a.text.p);
	return ret;
}

/* One line of input: a turn or a command.  1: leave. */
static int line(struct chat *ch, char *s)
{
	if (!strcmp(s, "/quit") || !strcmp(s, "/exit"))
		return 1;
	if (!strcmp(s, "/reset")) {
		if (start_over(ch))
			return -1;
		fprintf(stderr, "(a new conversation)\n");
		return 0;
	}
	if (!strncmp(s, "/system", 7) && (!s[7] || s[7] == ' ')) {
		free(ch->system);
		ch->system = s[7] && s[8] ? strdup(s + 8) : NULL;
		if (start_over(ch))
			return -1;
		fprintf(stderr, "(a new conversation%s)\n", ch->system ? " with that system prompt" : "");
		return 0;
	}
	if (s[0] == '/') {
		fprintf(stderr, "(commands: /system TEXT, /reset, /quit)\n");
		return 0;
	}
	if (add_message(ch, "user", s))
		return -1;
	if (answer(ch)) {
		/* Not answered: the turn is taken back. */
		cJSON_DeleteItemFromArray(ch->messages, cJSON_GetArraySize(ch->messages) - 1);
	}
	return 0;
}

static int converse(struct chat *ch)
{
	int tty = isatty(STDIN_FILENO), r = 0;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (start_over(ch))
		return -1;
	for (;;) {
		if (tty)
			fputs("> ", stderr);
		n = getline(&buf, &cap, stdin);
		if (n < 0)
			break;
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = 0;
		if (!n)
			continue;
		r = line(ch, buf);
		if (r)
			break;
	}
	free(buf);
	return r < 0 ? -1 : 0;
}

static int setup(struct chat *ch, const struct chat_opts *o)
{
	struct colibri_session_opts so = { .max_context = o->context };
	char err[512];

	ch->tok = colibri_model_tokenizer(ch->m, err, sizeof(err));
	ch->tmpl = ch->tok ? colibri_model_chat(ch->m, err, sizeof(err)) : NULL;
	if (!ch->tmpl || colibri_session_open(&ch->s, ch->m, &so, err, sizeof(err))) {
		fprintf(stderr, "colibri chat: %s\n", err);
		return -1;
	}
	colibri_session_set_sampling(ch->s, &o->sp);
	ch->eos = cb_tok_eos_id(ch->tok);
	ch->n_eot = chat_end_of_turn(ch->tmpl, ch->tok, ch->eos, ch->eot, CHAT_END_MAX);
	ch->harmony = chat_is_harmony(ch->tmpl, ch->tok);
	ch->calls = ch->harmony ? -1 : call_family_of(ch->tmpl->tmpl);
	ch->dim = isatty(STDERR_FILENO);
	ch->max_tokens = o->max_tokens;
	ch->held = malloc((colibri_session_max_context(ch->s) + 1) * sizeof(*ch->held));
	ch->system = o->system ? strdup(o->system) : NULL;
	if (!ch->held || (o->system && !ch->system)) {
		fprintf(stderr, "colibri chat: out of memory\n");
		return -1;
	}
	fprintf(stderr, "colibri chat: %s on %s; chat template: %s%s%s\n",
		colibri_model_info(ch->m)->name, colibri_model_info(ch->m)->description,
		ch->tmpl->tmpl ? ch->tmpl->source : "none, the plain fallback format",
		ch->harmony ? "; harmony: reasoning on stderr" :
		ch->calls >= 0 ? "; thinking and tool calls on stderr, in the format of " : "",
		ch->calls >= 0 ? call_syntax(ch->calls)->name : "");
	return 0;
}

int cmd_chat(int argc, char **argv)
{
	struct chat_opts o = { 0 };
	struct colibri_model_opts mo;
	struct chat ch = { 0 };
	static sigset_t set;
	char err[512];
	pthread_t th;
	int ret;

	cli_common_init(&o.co, COLIBRI_BACKEND_AUTO);
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	/* Before any thread starts, so that only sigint_thread() takes it. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&th, NULL, sigint_thread, &set)) {
		fprintf(stderr, "colibri chat: cannot start a thread\n");
		return 1;
	}
	pthread_detach(th);
	cli_model_opts(&o.co, &mo);
	mo.name = o.name;
	mo.flags |= COLIBRI_MODEL_UNLOAD;
	if (colibri_model_open(&ch.m, o.co.model, &mo, err, sizeof(err))) {
		fprintf(stderr, "colibri chat: %s\n", err);
		return 1;
	}
	ret = setup(&ch, &o) || converse(&ch) ? 1 : 0;
	colibri_session_close(ch.s);
	colibri_model_close(ch.m);
	cJSON_Delete(ch.messages);
	free(ch.held);
	free(ch.system);
	return ret;
}
