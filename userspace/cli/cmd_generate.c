// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri generate - text from a prompt, through /dev/colibri or in-process
 * (libcolibri's session API, colibri_session.h).
 *
 * Both backends run the same engine code and draw each token with the same
 * (seed, position) counter, so on the same ISA level they print the same
 * text.  The prompt goes in as one prefill; then one token per step, until
 * --max-new-tokens, the end-of-sequence token or the end of the context
 * (the last token sampled there is printed, not fed; exit status 0).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "colibri_session.h"
#include "tokenizer.h"

struct gen_opts {
	struct cli_common co;
	const char *prompt;
	const char *tokenizer;
	const char *name;
	uint32_t max_new;
	uint32_t max_context;
	struct colibri_sampling sp;
	int verbose;
};

/* What the per-token callback needs. */
struct gen_out {
	struct cb_tokenizer *tok;
	struct cb_tok_stream ts;
	char *buf;
	size_t cap;
	int verbose, first;
	uint32_t n_layers, top_k;
	double t_prefill, t_tok;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: colibri generate --model M --prompt P [--max-new-tokens N]\n"
		"         [--temperature T] [--top-p P] [--top-k K] [--seed S]\n"
		"         [--tokenizer tokenizer.json] [--backend auto|kernel|user]\n"
		"         [--name NAME] [--context N] [--threads N] [--isa I]\n"
		"         [--io ioctl|uring] [--verbose]\n"
		"M is a .colibri file (or, in-process, a Hugging Face directory or a GGUF\n"
		"file; for the kernel, also the name of a loaded model, whose tokenizer the kernel\n"
		"keeps).  Text goes to stdout as it is made; timing to stderr.  It stops\n"
		"after N tokens (default 64), at the end-of-sequence token, or at the end\n"
		"of the context (then it says so; the exit status is 0 in every case).\n"
		CLI_HELP_BACKEND CLI_HELP_IO CLI_HELP_THREADS CLI_HELP_ISA
		"  --name NAME        kernel: the name to load M under (default: its own)\n"
		"  --context N        positions of the session (default: 2048, or the\n"
		"                     model's own limit if smaller)\n"
		"  --verbose          the experts each token was routed to, and its time\n");
}

static int parse_opts(int argc, char **argv, struct gen_opts *o)
{
	static const struct option opts[] = {
		CLI_OPTION_MODEL, CLI_OPTION_BACKEND, CLI_OPTION_IO, CLI_OPTION_THREADS,
		CLI_OPTION_ISA, CLI_OPTION_SAMPLING,
		{ "prompt", required_argument, NULL, 'p' },
		{ "max-new-tokens", required_argument, NULL, 'n' },
		{ "tokenizer", required_argument, NULL, 'T' },
		{ "name", required_argument, NULL, 'N' },
		{ "context", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *cmd = "generate";
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->prompt = optarg; break;
		case 'n':
			r = cli_u32(cmd, "--max-new-tokens", optarg, 0, 1u << 30, &o->max_new);
			break;
		case 'T': o->tokenizer = optarg; break;
		case 'N': o->name = optarg; break;
		case 'c':
			r = cli_u32(cmd, "--context", optarg, 1, 1u << 20, &o->max_context);
			break;
		case 'v': o->verbose = 1; break;
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
	if (!o->co.model || !o->prompt || optind != argc)
		goto bad;
	return cli_common_check(cmd, &o->co);
bad:
	usage(stderr);
	return -1;
}

static void print_trace(const uint32_t *tr, uint32_t layers, uint32_t k)
{
	uint32_t l, i;

	for (l = 0; l < layers; l++) {
		fprintf(stderr, "  L%-2u", l);
		for (i = 0; i < k; i++) {
			uint32_t id = tr[(l * k + i) * 2];
			union { uint32_t u; float f; } w = { .u = tr[(l * k + i) * 2 + 1] };

			if (id == 0xffffffffu)
				fprintf(stderr, " dense");
			else
				fprintf(stderr, " e%u:%.2f", id, w.f);
		}
		fputc('\n', stderr);
	}
}

/* Each new token: the routing of the one fed before it, then its text. */
static int on_token(void *arg, int32_t token, const struct colibri_step *st)
{
	struct gen_out *g = arg;
	long len;

	if (g->first) {
		g->first = 0;
		g->t_prefill = now_s();
		g->t_tok = g->t_prefill;
	} else if (g->verbose) {
		print_trace(st->trace, g->n_layers, g->top_k);
	}
	len = cb_tok_stream_feed(&g->ts, token, g->buf, g->cap);
	if (len > 0)
		fwrite(g->buf, 1, len, stdout);
	fflush(stdout);
	if (g->verbose) {
		double t = now_s();

		fprintf(stderr, "\n[token %d %.2f ms]\n", token, (t - g->t_tok) * 1e3);
		g->t_tok = t;
	}
	return 0;
}

/* The model's tokenizer, or --tokenizer's; @own: the caller frees it. */
static struct cb_tokenizer *get_tokenizer(const struct gen_opts *o, struct colibri_model *m,
					  int *own)
{
	struct cb_tokenizer *tok;
	char err[512];

	*own = !!o->tokenizer;
	tok = o->tokenizer ? cb_tok_load_file(o->tokenizer, err, sizeof(err)) :
	      colibri_model_tokenizer(m, err, sizeof(err));
	if (!tok)
		fprintf(stderr, "colibri generate: %s%s\n", err, o->tokenizer ? "" :
			" (give --tokenizer)");
	return tok;
}

static int run(const struct gen_opts *o, struct colibri_model *m, struct cb_tokenizer *tok)
{
	const struct colibri_model_info *mi = colibri_model_info(m);
	struct colibri_session_opts so = { .max_context = o->max_context };
	struct gen_out out = { .tok = tok, .verbose = o->verbose, .first = 1,
			       .n_layers = mi->n_layers, .top_k = mi->top_k };
	struct colibri_generation g = { .max_new = o->max_new, .eos = cb_tok_eos_id(tok),
					.on_token = on_token, .arg = &out };
	struct colibri_session *s = NULL;
	uint32_t *ids = NULL;
	int32_t *ids32 = NULL;
	double t0, t_end;
	char err[512];
	long n, i, n_prompt;
	int ret = 1;

	n = cb_tok_encode_alloc(tok, o->prompt, strlen(o->prompt), CB_TOK_ADD_SPECIAL, &ids32);
	if (n <= 0) {
		fprintf(stderr, "colibri generate: the prompt encodes to no token\n");
		goto out;
	}
	if (colibri_session_open(&s, m, &so, err, sizeof(err))) {
		fprintf(stderr, "colibri generate: %s\n", err);
		goto out;
	}
	if ((uint64_t)n > colibri_session_max_context(s)) {
		fprintf(stderr, "colibri generate: the prompt (%ld tokens) does not fit the context (%u positions)\n",
			n, colibri_session_max_context(s));
		goto out;
	}
	colibri_session_set_sampling(s, &o->sp);
	out.cap = cb_tok_stream_cap(tok);
	ids = malloc(n * sizeof(*ids));
	out.buf = malloc(out.cap);
	if (o->verbose)
		g.step.trace = calloc((size_t)n * (mi->n_layers * mi->top_k * 2) + 1, 4);
	if (!ids || !out.buf || (o->verbose && !g.step.trace)) {
		fprintf(stderr, "colibri generate: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)ids32[i];
	n_prompt = n;

	fputs(o->prompt, stdout);
	fflush(stdout);
	cb_tok_stream_init(&out.ts, tok, CB_TOK_SKIP_SPECIAL);
	out.ts.at_start = 0;	/* the prompt was printed already */
	t0 = now_s();
	ret = colibri_session_generate(s, ids, (uint32_t)n, &g);
	if (out.first)
		out.t_prefill = now_s();
	n = cb_tok_stream_flush(&out.ts, out.buf, out.cap);
	if (n > 0)
		fwrite(out.buf, 1, n, stdout);
	fputc('\n', stdout);
	t_end = now_s();
	if (ret) {
		fprintf(stderr, "colibri generate: step failed: %s\n", colibri_session_error(s));
		ret = 1;
		goto out;
	}
	if (g.stop == COLIBRI_STOP_CONTEXT)
		fprintf(stderr, "colibri generate: stopped at the end of the context (%u positions) after %u tokens\n",
			colibri_session_max_context(s), g.n_new);
	fprintf(stderr, "colibri: prompt %u tokens in %.3f s (%.1f tok/s); %u tokens generated in %.3f s (%.1f tok/s)\n",
		(unsigned int)n_prompt, out.t_prefill - t0, n_prompt / (out.t_prefill - t0 + 1e-9),
		g.n_new,
		t_end - out.t_prefill,
		g.n_new > 1 ? (g.n_new - 1) / (t_end - out.t_prefill) : 0.0);
	ret = 0;
out:
	colibri_session_close(s);
	free(ids);
	free(ids32);
	free(out.buf);
	free(g.step.trace);
	return ret;
}

int cmd_generate(int argc, char **argv)
{
	struct gen_opts o = { .max_new = 64 };
	struct colibri_model_opts mo;
	const struct colibri_model_info *mi;
	struct colibri_model *m;
	struct cb_tokenizer *tok;
	char err[512];
	int ret, own;

	cli_common_init(&o.co, COLIBRI_BACKEND_AUTO);
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	cli_model_opts(&o.co, &mo);
	mo.name = o.name;
	if (colibri_model_open(&m, o.co.model, &mo, err, sizeof(err))) {
		fprintf(stderr, "colibri generate: %s\n", err);
		return 1;
	}
	mi = colibri_model_info(m);
	if (mi->loaded)
		fprintf(stderr, "colibri: loaded %s into the kernel as '%s'\n", o.co.model,
			mi->name);
	if (mi->note[0])
		fprintf(stderr, "colibri: the kernel cannot run it (%s): running in-process\n",
			mi->note);
	fprintf(stderr, "colibri: backend: %s\n", mi->description);
	tok = get_tokenizer(&o, m, &own);
	ret = tok ? run(&o, m, tok) : 1;
	if (own && tok)
		cb_tok_free(tok);
	colibri_model_close(m);
	return ret;
}
