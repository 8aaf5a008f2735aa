// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * generate_example - the smallest whole program on libcolibri's session
 * API (docs/libcolibri.md): open a model, encode a prompt with the model's
 * own tokenizer, stream the greedy continuation, close.  It includes only
 * libcolibri's public headers and links only libcolibri (and the system
 * libraries libcolibri itself needs).
 *
 *   generate_example MODEL PROMPT N [auto|kernel|kernel-uring|user]
 *
 * MODEL is a .colibri file or, for the kernel, the name of a loaded model.
 * tests/libcolibri/run runs it in-process and tests/vm/libcolibri_test.c
 * through the kernel; both compare what it prints with the continuation
 * recorded in tests/demo/expected.txt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colibri_session.h"
#include "tokenizer.h"

/* The text decoder and its room: cb_tok_stream_cap() holds any token. */
struct out {
	struct cb_tok_stream ts;
	char *buf;
	size_t cap;
};

/* Each new token, as text, as soon as it is sampled. */
static int print_token(void *arg, int32_t token, const struct colibri_step *st)
{
	struct out *o = arg;
	long n = cb_tok_stream_feed(&o->ts, token, o->buf, o->cap);

	(void)st;
	if (n > 0)
		fwrite(o->buf, 1, (size_t)n, stdout);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct colibri_model_opts mo = { .backend = COLIBRI_BACKEND_AUTO, .isa = -1, .dtype = -1 };
	struct colibri_generation g = { .on_token = print_token };
	struct colibri_model *m = NULL;
	struct colibri_session *s = NULL;
	struct cb_tokenizer *tok;
	struct out o = { .buf = NULL };
	int32_t *ids = NULL;
	uint32_t *prompt = NULL;
	char err[512];
	long n, i;
	int ret = 1;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: %s MODEL PROMPT N [auto|kernel|kernel-uring|user]\n", argv[0]);
		return 2;
	}
	if (argc == 5 && !strcmp(argv[4], "user"))
		mo.backend = COLIBRI_BACKEND_USER;
	else if (argc == 5 && !strncmp(argv[4], "kernel", 6))
		mo.backend = COLIBRI_BACKEND_KERNEL;
	mo.io = argc == 5 && !strcmp(argv[4], "kernel-uring") ? COLIBRI_IO_URING : COLIBRI_IO_IOCTL;
	g.max_new = (uint32_t)strtoul(argv[3], NULL, 10);

	/* The model, and the tokenizer it carries. */
	if (colibri_model_open(&m, argv[1], &mo, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	tok = colibri_model_tokenizer(m, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	n = cb_tok_encode_alloc(tok, argv[2], strlen(argv[2]), CB_TOK_ADD_SPECIAL, &ids);
	prompt = n > 0 ? malloc((size_t)n * sizeof(*prompt)) : NULL;
	if (!prompt) {
		fprintf(stderr, "the prompt encodes to no token\n");
		goto out;
	}
	for (i = 0; i < n; i++)
		prompt[i] = (uint32_t)ids[i];

	/* One session: one sequence.  Sampling starts greedy. */
	if (colibri_session_open(&s, m, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	o.cap = cb_tok_stream_cap(tok);
	o.buf = malloc(o.cap);
	if (!o.buf) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	fputs(argv[2], stdout);
	cb_tok_stream_init(&o.ts, tok, CB_TOK_SKIP_SPECIAL);
	o.ts.at_start = 0;
	g.eos = cb_tok_eos_id(tok);
	g.arg = &o;
	if (colibri_session_generate(s, prompt, (uint32_t)n, &g)) {
		fprintf(stderr, "\n%s\n", colibri_session_error(s));
		goto out;
	}
	n = cb_tok_stream_flush(&o.ts, o.buf, o.cap);
	if (n > 0)
		fwrite(o.buf, 1, (size_t)n, stdout);
	putchar('\n');
	fprintf(stderr, "%u tokens from %s (%s)%s\n", g.n_new, colibri_model_info(m)->description,
		colibri_model_info(m)->name,
		g.stop == COLIBRI_STOP_CONTEXT ? ", stopped at the end of the context" : "");
	ret = 0;
out:
	colibri_session_close(s);
	colibri_model_close(m);
	free(o.buf);
	free(prompt);
	free(ids);
	return ret;
}
