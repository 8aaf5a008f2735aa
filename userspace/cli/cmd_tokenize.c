// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri tokenize - run a model's tokenizer from the command line.
 *
 *   colibri tokenize (--model M | --tokenizer tokenizer.json) --text TEXT
 *   colibri tokenize ... --decode --text "IDS"
 *   colibri tokenize ... --jsonl FILE	(batch mode used by tests/tokenizer)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "cli.h"
#include "cli_opts.h"
#include "tokenizer.h"
#include "import/hf_tiktoken.h"
#include "model/cbfile.h"
#include "import/gguf.h"

static void tokenize_usage(FILE *f)
{
	fprintf(f,
		"usage: colibri tokenize (--model M | --tokenizer FILE) [options]\n"
		"  --tokenizer FILE   a Hugging Face tokenizer.json\n"
		"  --model M          a model directory holding tokenizer.json, a .colibri or a GGUF file\n"
		"                     (and optionally tokenizer_config.json)\n"
		"  --text TEXT        text to encode, or ids to decode; '-' reads stdin\n"
		"                     (verbatim, a final newline included)\n"
		"  --decode           TEXT is space-separated ids: print the text they decode to\n"
		"  --add-special      apply the post-processor (e.g. Llama's leading <s>)\n"
		"  --bos, --eos       add the BOS / EOS id\n"
		"  --skip-special     when decoding, leave out special tokens\n"
		"  --jsonl FILE       batch test mode: each line is a JSON string (or an object\n"
		"                     with \"text\"); prints one JSON object per line with the\n"
		"                     ids, the ids with special tokens, and the full and\n"
		"                     streaming decodes of the ids as hex\n");
}

static char *read_stream(FILE *f, size_t *len)
{
	size_t cap = 65536, n = 0, r;
	char *p = malloc(cap), *q;

	if (!p)
		return NULL;
	while ((r = fread(p + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n - 1 == 0) {
			q = realloc(p, cap * 2);
			if (!q) {
				free(p);
				return NULL;
			}
			p = q;
			cap *= 2;
		}
	}
	p[n] = 0;
	*len = n;
	return p;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p;

	if (!f)
		return NULL;
	p = read_stream(f, len);
	fclose(f);
	return p;
}

static struct cb_tokenizer *open_tokenizer(const char *tokfile, const char *model)
{
	char err[512], path[4096];
	struct cb_tokenizer *tok;
	struct stat sb;

	if (tokfile) {
		tok = cb_tok_load_file(tokfile, err, sizeof(err));
		if (!tok)
			fprintf(stderr, "colibri tokenize: %s\n", err);
		return tok;
	}
	if (stat(model, &sb)) {
		fprintf(stderr, "colibri tokenize: %s: %s\n", model, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (cbfile_is_colibri(model) == 1) {
			struct cbfile *f = cbfile_open(model, 0, err, sizeof(err));

			tok = f ? cbfile_load_tokenizer(f, err, sizeof(err)) : NULL;
			cbfile_close(f);
		} else if (gguf_is_gguf(model) == 1) {
			struct gguf_file *g = gguf_open(model, err, sizeof(err));

			tok = g ? gguf_tokenizer_load(g, err, sizeof(err)) : NULL;
			if (g)
				gguf_close(g);
		} else {
			fprintf(stderr, "colibri tokenize: %s: not a model directory, .colibri or GGUF file\n",
				model);
			return NULL;
		}
		if (!tok)
			fprintf(stderr, "colibri tokenize: %s\n", err);
		return tok;
	}
	tok = hf_tokenizer_load(model, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "colibri tokenize: %s\n", err);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/tokenizer_config.json", model);
	if (!stat(path, &sb)) {
		size_t len;
		char *cfg = read_file(path, &len);

		if (!cfg || cb_tok_apply_config(tok, cfg, len))
			fprintf(stderr, "colibri tokenize: %s: ignored (unreadable or not JSON)\n",
				path);
		free(cfg);
	}
	return tok;
}

static int do_decode(const struct cb_tokenizer *tok, const char *text, unsigned int dflags)
{
	int32_t *ids = NULL;
	size_t n = 0, cap = 0;
	const char *p = text;
	char *end, *out;
	long r;

	for (;;) {
		long v;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
			p++;
		if (!*p)
			break;
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v < 0 || v > INT32_MAX) {
			fprintf(stderr, "colibri tokenize: '%.20s' is not a token id\n", p);
			free(ids);
			return 1;
		}
		if (n == cap) {
			int32_t *q;

			cap = cap ? cap * 2 : 64;
			q = realloc(ids, cap * sizeof(*q));
			if (!q) {
				free(ids);
				return 1;
			}
			ids = q;
		}
		ids[n++] = v;
		p = end;
	}
	r = cb_tok_decode(tok, ids, n, dflags, NULL, 0);
	if (r < 0) {
		fprintf(stderr, "colibri tokenize: cannot decode: an id is outside the vocabulary "
			"(size %zu)\n", cb_tok_vocab_size(tok));
		free(ids);
		return 1;
	}
	out = malloc(r + 1);
	if (!out) {
		free(ids);
		return 1;
	}
	cb_tok_decode(tok, ids, n, dflags, out, r);
	fwrite(out, 1, r, stdout);
	putchar('\n');
	free(out);
	free(ids);
	return 0;
}

static int do_encode(const struct cb_tokenizer *tok, const char *text, size_t len,
		     unsigned int eflags)
{
	int32_t *ids;
	long n = cb_tok_encode_alloc(tok, text, len, eflags, &ids), i;

	if (n < 0) {
		fprintf(stderr, "colibri tokenize: encode failed: %s\n", strerror((int)-n));
		return 1;
	}
	for (i = 0; i < n; i++)
		printf(i ? " %d" : "%d", ids[i]);
	putchar('\n');
	free(ids);
	return 0;
}

static void put_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%02x", (unsigned char)s[i]);
}

static void put_ids(const int32_t *ids, long n)
{
	long i;

	putchar('[');
	for (i = 0; i < n; i++)
		printf(i ? ",%d" : "%d", ids[i]);
	putchar(']');
}

/* One test record: ids, ids with special tokens, full decode, streaming decode. */
static int batch_line(const struct cb_tokenizer *tok, const char *text, size_t len)
{
	int32_t *ids = NULL, *sids = NULL;
	long n, ns, d, r;
	char *dec = NULL, *sdec = NULL;
	size_t sn = 0, chunk = cb_tok_stream_cap(tok), i;
	struct cb_tok_stream st;
	int ret = 1;

	n = cb_tok_encode_alloc(tok, text, len, 0, &ids);
	ns = cb_tok_encode_alloc(tok, text, len, CB_TOK_ADD_SPECIAL, &sids);
	if (n < 0 || ns < 0)
		goto out;
	d = cb_tok_decode(tok, ids, n, 0, NULL, 0);
	if (d < 0 || !(dec = malloc(d + 1)))
		goto out;
	cb_tok_decode(tok, ids, n, 0, dec, d);
	/* every byte may turn into U+FFFD in the streaming output */
	sdec = malloc(3 * (size_t)d + chunk + 1);
	if (!sdec)
		goto out;
	cb_tok_stream_init(&st, tok, 0);
	for (i = 0; i < (size_t)n; i++) {
		r = cb_tok_stream_feed(&st, ids[i], sdec + sn, chunk);
		if (r < 0)
			goto out;
		sn += r;
	}
	r = cb_tok_stream_flush(&st, sdec + sn, chunk);
	if (r < 0)
		goto out;
	sn += r;
	printf("{\"ids\":");
	put_ids(ids, n);
	printf(",\"ids_special\":");
	put_ids(sids, ns);
	printf(",\"dec\":\"");
	put_hex(dec, d);
	printf("\",\"stream\":\"");
	put_hex(sdec, sn);
	printf("\"}\n");
	ret = 0;
out:
	if (ret)
		printf("{\"error\":\"encode/decode failed\"}\n");
	free(ids);
	free(sids);
	free(dec);
	free(sdec);
	return ret;
}

static int do_jsonl(const struct cb_tokenizer *tok, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int bad = 0;

	if (!f) {
		fprintf(stderr, "colibri tokenize: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		cJSON *j = cJSON_ParseWithLength(line, len), *t = j;

		if (cJSON_IsObject(j))
			t = cJSON_GetObjectItemCaseSensitive(j, "text");
		if (!cJSON_IsString(t)) {
			printf("{\"error\":\"line is not a JSON string\"}\n");
			bad = 1;
		} else if (batch_line(tok, t->valuestring, strlen(t->valuestring))) {
			bad = 1;
		}
		cJSON_Delete(j);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return bad;
}

int cmd_tokenize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tokenizer", required_argument, NULL, 't' },
		CLI_OPTION_MODEL,
		{ "text", required_argument, NULL, 'x' },
		{ "decode", no_argument, NULL, 'd' },
		{ "add-special", no_argument, NULL, 's' },
		{ "bos", no_argument, NULL, 'b' },
		{ "eos", no_argument, NULL, 'e' },
		{ "skip-special", no_argument, NULL, 'k' },
		{ "jsonl", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tokfile = NULL, *model = NULL, *text = NULL, *jsonl = NULL;
	unsigned int eflags = 0, dflags = 0;
	bool decode = false;
	struct cb_tokenizer *tok;
	char *buf = NULL;
	size_t len;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': tokfile = optarg; break;
		case CLI_OPT_MODEL: model = optarg; break;
		case 'x': text = optarg; break;
		case 'd': decode = true; break;
		case 's': eflags |= CB_TOK_ADD_SPECIAL; break;
		case 'b': eflags |= CB_TOK_ADD_BOS; break;
		case 'e': eflags |= CB_TOK_ADD_EOS; break;
		case 'k': dflags |= CB_TOK_SKIP_SPECIAL; break;
		case 'j': jsonl = optarg; break;
		case 'h': tokenize_usage(stdout); return 0;
		default: tokenize_usage(stderr); return 2;
		}
	}
	if (optind < argc || !!tokfile == !!model || !!text == !!jsonl) {
		fprintf(stderr, "colibri tokenize: need exactly one of --model/--tokenizer and one "
			"of --text/--jsonl\n");
		tokenize_usage(stderr);
		return 2;
	}
	tok = open_tokenizer(tokfile, model);
	if (!tok)
		return 1;
	if (jsonl) {
		ret = do_jsonl(tok, jsonl);
		cb_tok_free(tok);
		return ret;
	}
	if (!strcmp(text, "-")) {
		buf = read_stream(stdin, &len);
		if (!buf) {
			fprintf(stderr, "colibri tokenize: cannot read stdin\n");
			cb_tok_free(tok);
			return 1;
		}
		text = buf;
	} else {
		len = strlen(text);
	}
	ret = decode ? do_decode(tok, text, dflags) : do_encode(tok, text, len, eflags);
	free(buf);
	cb_tok_free(tok);
	return ret;
}
