// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri logits - run a model (HF directory, GGUF or .colibri) in-process,
 * or through /dev/colibri (--backend kernel: a .colibri file, or the name
 * of a loaded model), and print logits (or a greedy continuation).
 *
 *   colibri logits --model M --tokens "1 2 3" [--quant T] [--threads N]
 *                  [--isa I] [--step] [--greedy N] [--trace]
 *                  [--backend user|kernel|auto] [--io ioctl|uring]
 *
 * Default output: one line per position, vocab_size values printed with %.9g
 * (round-trips f32).  --greedy N instead prints the N tokens that follow
 * the prompt when the argmax is fed back, on one line.  --step feeds the
 * prompt one token per forward pass (exercises the KV cache path); so does
 * a backend that returns only the last position's logits (the kernel).
 * --trace adds, after the logits, one line per position and routed layer:
 * "route POS LAYER EXPERT:WEIGHT ..." in rank order (weights %.9g).
 *
 * A model the kernel did not have is loaded for the run and unloaded after
 * it (libcolibri does it once the session is closed, so it never waits for
 * its own session).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "colibri_session.h"
#include "import/hfmodel.h"
#include "quant/quant_preset.h"

struct logits_opts {
	struct cli_common co;
	const char *tokens;
	struct cb_quant q;
	int step, trace;
	uint32_t greedy;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: colibri logits --model HFDIR|FILE.gguf|FILE.colibri|NAME --tokens \"ID ID ...\"\n"
		"         [--quant T] [--threads N] [--isa I] [--step]\n"
		"         [--greedy N] [--trace] [--backend user|kernel|auto] [--io ioctl|uring]\n");
}

static int parse_tokens(const char *s, uint32_t **out, uint32_t *n)
{
	uint32_t *t = NULL, cnt = 0, cap = 0;
	char *end;

	for (;;) {
		unsigned long v;

		while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (end == s || errno || v > 0xffffffffu || *s == '-' || *s == '+')
			goto bad;
		if (cnt == cap) {
			uint32_t *nt;

			cap = cap ? 2 * cap : 64;
			nt = realloc(t, cap * sizeof(*t));
			if (!nt)
				goto bad;
			t = nt;
		}
		t[cnt++] = (uint32_t)v;
		s = end;
	}
	*out = t;
	*n = cnt;
	return 0;
bad:
	free(t);
	return -1;
}

static int parse_opts(int argc, char **argv, struct logits_opts *o)
{
	static const struct option opts[] = {
		CLI_OPTION_MODEL, CLI_OPTION_THREADS, CLI_OPTION_ISA, CLI_OPTION_BACKEND,
		CLI_OPTION_IO,
		{ "tokens", required_argument, NULL, 't' },
		{ "quant", required_argument, NULL, 'q' },
		{ "greedy", required_argument, NULL, 'g' },
		{ "step", no_argument, NULL, 's' },
		{ "trace", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't': o->tokens = optarg; break;
		case 'q':
			if (cb_quant_parse(optarg, &o->q)) {
				fprintf(stderr, "colibri logits: unknown --quant '%s' (%s)\n", optarg,
					cb_quant_names());
				return -1;
			}
			break;
		case 'g': r = cli_u32("logits", "--greedy", optarg, 0, 1u << 20, &o->greedy); break;
		case 's': o->step = 1; break;
		case 'r': o->trace = 1; break;
		case 'h': usage(stdout); return 1;
		default:
			r = cli_common_opt("logits", c, optarg, &o->co);
			if (!r)
				goto bad;
			r = r < 0 ? -1 : 0;
		}
		if (r)
			return -1;
	}
	if (!o->co.model || !o->tokens || optind != argc)
		goto bad;
	if ((o->q.preset || o->q.dtype != CB_QUANT_KEEP) &&
	    o->co.backend == COLIBRI_BACKEND_KERNEL) {
		fprintf(stderr, "colibri logits: --quant converts a Hugging Face directory for the in-process engine\n");
		return -1;
	}
	return cli_common_check("logits", &o->co);
bad:
	usage(stderr);
	return -1;
}

static void print_row(const float *l, uint32_t V)
{
	uint32_t j;

	for (j = 0; j < V; j++)
		printf(j ? " %.9g" : "%.9g", l[j]);
	putchar('\n');
}

static void print_routes(const uint32_t *tr, uint32_t ntok, uint32_t L, uint32_t K)
{
	uint32_t i, l, j;

	for (i = 0; K && i < ntok; i++)
		for (l = 0; l < L; l++) {
			const uint32_t *e = tr + ((size_t)i * L + l) * K * 2;

			if (e[0] == 0xffffffffu)
				continue;
			printf("route %u %u", i, l);
			for (j = 0; j < K; j++) {
				float w;

				memcpy(&w, &e[2 * j + 1], 4);
				printf(" %u:%.9g", e[2 * j], w);
			}
			putchar('\n');
		}
}

/* The prompt, in one prefill or token by token (@stepwise). */
static int feed_prompt(struct colibri_session *s, const uint32_t *tok, uint32_t ntok, int stepwise,
		       float *logits, uint32_t *trace, uint32_t V, uint32_t tper,
		       struct colibri_step *st)
{
	uint32_t i;
	int ret;

	if (!stepwise) {
		st->logits = logits;
		st->trace = trace;
		st->flags = logits ? COLIBRI_STEP_ALL_LOGITS : 0;
		return colibri_session_prefill(s, tok, ntok, st);
	}
	for (i = 0; i < ntok; i++) {
		st->logits = logits ? logits + (size_t)i * V : NULL;
		st->trace = trace ? trace + (size_t)i * tper : NULL;
		ret = colibri_session_step(s, tok[i], st);
		if (ret)
			return ret;
	}
	return 0;
}

static int run(const struct logits_opts *o, struct colibri_model *m, const uint32_t *tok,
	       uint32_t ntok)
{
	const struct colibri_model_info *mi = colibri_model_info(m);
	const uint32_t V = mi->vocab_size, tper = mi->n_layers * mi->top_k * 2;
	int stepwise = o->step || !(mi->caps & COLIBRI_CAP_ALL_LOGITS);
	struct colibri_session_opts so = {
		.max_context = ntok + o->greedy,
		.max_batch = stepwise ? 0 : ntok,	/* the prompt in one pass */
	};
	struct colibri_step st = { 0 };
	struct colibri_session *s;
	uint32_t *tr = NULL, i;
	float *logits = NULL;
	char err[512];
	int ret;

	if (colibri_session_open(&s, m, &so, err, sizeof(err))) {
		fprintf(stderr, "colibri logits: %s\n", err);
		return 1;
	}
	if (!o->greedy) {
		logits = malloc((size_t)ntok * V * sizeof(float));
		tr = o->trace ? calloc((size_t)ntok * tper + 1, sizeof(*tr)) : NULL;
		if (!logits || (o->trace && !tr)) {
			fprintf(stderr, "colibri logits: out of memory\n");
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = feed_prompt(s, tok, ntok, stepwise, logits, tr, V, tper, &st);
	if (ret)
		goto fail;
	if (!o->greedy) {
		for (i = 0; i < ntok; i++)
			print_row(logits + (size_t)i * V, V);
		if (o->trace)
			print_routes(tr, ntok, mi->n_layers, mi->top_k);
		goto out;
	}
	/* greedy continuation: the argmax fed back, one decode step at a time */
	st.logits = NULL;
	st.trace = NULL;
	st.flags = 0;
	for (i = 0; i < o->greedy; i++) {
		printf(i ? " %d" : "%d", st.token);
		if (i + 1 < o->greedy) {
			ret = colibri_session_step(s, (uint32_t)st.token, &st);
			if (ret)
				goto fail;
		}
	}
	putchar('\n');
	goto out;
fail:
	fprintf(stderr, "colibri logits: %s: %s\n", o->co.model, colibri_session_error(s));
out:
	colibri_session_close(s);
	free(logits);
	free(tr);
	return ret ? 1 : 0;
}

int cmd_logits(int argc, char **argv)
{
	struct logits_opts o = { .q = { CB_PRESET_NONE, CB_QUANT_KEEP } };
	struct colibri_model_opts mo;
	struct colibri_model *m;
	uint32_t *tok = NULL, ntok = 0;
	char err[512];
	int rc;

	cli_common_init(&o.co, COLIBRI_BACKEND_USER);
	rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (parse_tokens(o.tokens, &tok, &ntok) || !ntok) {
		fprintf(stderr, "colibri logits: --tokens: expected token ids\n");
		return 2;
	}
	cli_model_opts(&o.co, &mo);
	mo.dtype = o.q.dtype;
	mo.preset = o.q.preset;
	/* Leave the kernel as it was: a model loaded for this run goes after it. */
	mo.flags = COLIBRI_MODEL_UNLOAD;
	if (colibri_model_open(&m, o.co.model, &mo, err, sizeof(err))) {
		fprintf(stderr, "colibri logits: %s\n", err);
		free(tok);
		return 1;
	}
	rc = run(&o, m, tok, ntok);
	colibri_model_close(m);
	free(tok);
	return rc;
}
