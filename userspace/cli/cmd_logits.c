// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri logits - run a model (HF directory, GGUF or .colibri) in-process,
 * or a .colibri through /dev/colibri (--backend kernel), and print logits
 * (or a greedy continuation).
 *
 *   colibri logits --model DIR --tokens "1 2 3" [--quant T] [--threads N]
 *                  [--step] [--greedy N] [--trace]
 *
 * Default output: one line per position, vocab_size values printed with %.9g
 * (round-trips f32).  --threads defaults to one per online CPU.  --greedy N
 * instead prints the N tokens that follow the prompt when the argmax is fed
 * back, on one line.  --step feeds the
 * prompt one token per forward call (exercises the KV cache path).
 * --trace adds, after the logits, one line per position and routed layer:
 * "route POS LAYER EXPERT:WEIGHT ..." in rank order (weights %.9g).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_engine.h"
#include "cbfile.h"
#include "cli.h"
#include "gguf.h"
#include "hfmodel.h"
#include "host.h"
#include "libcolibri.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: colibri logits --model HFDIR|FILE.gguf|FILE.colibri --tokens \"ID ID ...\" "
		"[--quant keep|f32|f16|bf16|q8_0|q4_0] [--threads N] [--step] "
		"[--greedy N] [--trace] [--backend user|kernel]\n");
}

static int parse_tokens(const char *s, cb_u32 **out, int *n)
{
	cb_u32 *t = NULL;
	int cnt = 0, cap = 0;
	char *end;

	for (;;) {
		unsigned long v;

		while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (end == s || errno || v > 0xffffffffu)
			goto bad;
		if (cnt == cap) {
			cb_u32 *nt;

			cap = cap ? 2 * cap : 64;
			nt = realloc(t, cap * sizeof(*t));
			if (!nt)
				goto bad;
			t = nt;
		}
		t[cnt++] = (cb_u32)v;
		s = end;
	}
	*out = t;
	*n = cnt;
	return 0;
bad:
	free(t);
	return -1;
}

static int argmax(const float *l, int n)
{
	int i, b = 0;

	for (i = 1; i < n; i++)
		if (l[i] > l[b])
			b = i;
	return b;
}

/*
 * --backend kernel: the same output through /dev/colibri.  SUBMIT returns
 * the logits of the last token it is given, so the tokens go in one per
 * call; the engine's answer does not depend on how a sequence is split.
 */
static int logits_kernel(const char *path, const cb_u32 *tok, int ntok, int greedy)
{
	struct colibri_submit sub;
	struct colibri_attach at;
	char name[COLIBRI_NAME_LEN], err[256];
	struct cbfile *f = cbfile_open(path, 0, err, sizeof(err));
	float *logits = NULL;
	int fd = -1, s = -1, ret, loaded, i, j;
	cb_u32 t;

	if (!f) {
		fprintf(stderr, "colibri logits: %s (--backend kernel needs a .colibri file)\n", err);
		return 1;
	}
	if (strlen(f->info.name) >= sizeof(name)) {
		fprintf(stderr, "colibri logits: %s: model name longer than %zu bytes\n", path,
			sizeof(name) - 1);
		cbfile_close(f);
		return 1;
	}
	strcpy(name, f->info.name);
	cbfile_close(f);
	fd = colibri_dev_open();
	s = colibri_dev_open();
	ret = fd < 0 ? fd : s < 0 ? s : colibri_dev_ensure_model(fd, path, name, name, &loaded);
	if (!ret)
		ret = colibri_dev_attach(s, name, ntok + greedy, 0, &at);
	if (ret) {
		fprintf(stderr, "colibri logits: %s through %s: %s\n", path, COLIBRI_DEVICE_PATH,
			strerror(-ret));
		goto out;
	}
	logits = calloc(at.vocab_size, sizeof(float));
	ret = logits ? 0 : -ENOMEM;
	for (i = 0; !ret && i < ntok + greedy; i++) {
		t = i < ntok ? tok[i] : (cb_u32)argmax(logits, at.vocab_size);
		if (i >= ntok)
			printf("%s%u", i > ntok ? " " : "", t);
		memset(&sub, 0, sizeof(sub));
		sub.flags = COLIBRI_SUBMIT_LOGITS;
		sub.tokens = (uintptr_t)&t;
		sub.n_tokens = 1;
		sub.logits = (uintptr_t)logits;
		sub.logits_len = at.vocab_size;
		ret = colibri_dev_submit(s, &sub);
		if (ret || greedy)
			continue;
		for (j = 0; j < (int)at.vocab_size; j++)
			printf("%s%.9g", j ? " " : "", logits[j]);
		putchar('\n');
	}
	if (greedy && !ret)
		putchar('\n');
	if (ret)
		fprintf(stderr, "colibri logits: SUBMIT: %s\n", strerror(-ret));
	/*
	 * Leave the kernel as we found it: a model we loaded goes again, but
	 * only once our own session is gone (an UNLOAD that waited for it
	 * would wait for ever), and only if no one else attached meanwhile.
	 */
	close(s);
	s = -1;
	if (loaded)
		colibri_dev_unload(fd, name, 0);
out:
	free(logits);
	if (s >= 0)
		close(s);
	if (fd >= 0)
		close(fd);
	return ret ? 1 : 0;
}

int cmd_logits(int argc, char **argv)
{
	const char *dir = NULL, *toks = NULL, *backend = "user";
	int dtype = HF_DTYPE_KEEP, threads = 0, greedy = 0, step = 0, trace = 0;
	struct hf_model *m = NULL;
	struct gguf_model *gm = NULL;	/* GGUF input (gguf_model.c) */
	struct cbfile *cf = NULL;	/* .colibri input; m then is &cm */
	struct hf_model cm;
	struct cb_exec *ex = NULL;
	struct cb_engine *eng = NULL;
	struct cb_engine_params p = { 0 };
	cb_u32 *tok = NULL, *seq = NULL, *pos = NULL, *tr = NULL;
	float *logits = NULL;
	void *arena = NULL;
	char err[512];
	int ntok = 0, i, j, l, r, rc = 1, V, total, K;
	cb_u64 asz;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--step")) {
			step = 1;
		} else if (!strcmp(a, "--trace")) {
			trace = 1;
		} else if (i + 1 >= argc) {
			usage(stderr);
			return 2;
		} else if (!strcmp(a, "--model")) {
			dir = argv[++i];
		} else if (!strcmp(a, "--tokens")) {
			toks = argv[++i];
		} else if (!strcmp(a, "--quant")) {
			dtype = hf_parse_dtype(argv[++i]);
			if (dtype == -2) {
				fprintf(stderr, "colibri logits: unknown --quant '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "--threads")) {
			threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--greedy")) {
			greedy = atoi(argv[++i]);
		} else if (!strcmp(a, "--backend")) {
			backend = argv[++i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!dir || !toks || greedy < 0 || threads < 0) {
		usage(stderr);
		return 2;
	}
	if (parse_tokens(toks, &tok, &ntok) || !ntok) {
		fprintf(stderr, "colibri logits: --tokens: expected token ids\n");
		return 2;
	}
	if (strcmp(backend, "user")) {
		if (strcmp(backend, "kernel") || trace || step || dtype != HF_DTYPE_KEEP) {
			fprintf(stderr, "colibri logits: --backend is user or kernel; kernel takes no "
				"--trace, --step or --quant\n");
			free(tok);
			return 2;
		}
		rc = logits_kernel(dir, tok, ntok, greedy);
		free(tok);
		return rc;
	}
	/* GGUF input: --model names a .gguf file; m then points into gm */
	if (cbfile_is_colibri(dir)) {
		/* weights used in place, in the validated mapping */
		if (dtype != HF_DTYPE_KEEP) {
			fprintf(stderr, "colibri logits: %s: --quant applies to HF directories "
				"only (use colibri convert --quant)\n", dir);
			goto out;
		}
		cf = cbfile_open(dir, 0, err, sizeof(err));
		memset(&cm, 0, sizeof(cm));
		if (cf) {
			cm.cfg = cf->cfg;
			cm.w = cf->w;
			m = &cm;
		}
	} else if (gguf_is_gguf(dir)) {
		if (dtype != HF_DTYPE_KEEP) {
			fprintf(stderr, "colibri logits: --quant is not supported for GGUF "
				"input (tensors are used as stored)\n");
			goto out;
		}
		gm = gguf_model_load(dir, err, sizeof(err));
		m = gm ? &gm->hf : NULL;
	} else {
		m = hf_model_load(dir, dtype, err, sizeof(err));
	}
	if (!m) {
		fprintf(stderr, "colibri logits: %s\n", err);
		goto out;
	}
	V = (int)m->cfg.vocab_size;
	total = ntok + greedy;
	tok = realloc(tok, total * sizeof(*tok));
	p.max_batch_tokens = ntok;
	p.n_seqs = 1;
	p.max_context = total;
	p.isa_max_level = 2;	/* best available; COLIBRI_ISA caps it */
	if (m->cfg.max_context && p.max_context > m->cfg.max_context) {
		fprintf(stderr, "colibri logits: %d tokens exceed max_position_embeddings %u\n",
			total, m->cfg.max_context);
		goto out;
	}
	asz = cb_engine_arena_size(&m->cfg, &p);
	arena = asz ? aligned_alloc(64, asz) : NULL;
	seq = calloc(total, sizeof(*seq));
	pos = calloc(total, sizeof(*pos));
	logits = malloc((size_t)ntok * V * sizeof(float));
	ex = cb_host_exec_create(threads);
	K = m->cfg.n_experts ? (int)m->cfg.top_k : 0;
	tr = calloc((size_t)ntok * m->cfg.n_layers * K * 2 + 1, sizeof(*tr));
	if (!tok || !arena || !seq || !pos || !logits || !ex || !tr) {
		fprintf(stderr, "colibri logits: out of memory (arena %llu bytes)\n",
			(unsigned long long)asz);
		goto out;
	}
	r = cb_engine_init(&eng, &m->cfg, &m->w, &p, arena, asz);
	if (r) {
		fprintf(stderr, "colibri logits: engine init failed (%d)\n", r);
		goto out;
	}
	for (i = 0; i < total; i++)
		pos[i] = i;

	/* the prompt: one batch, or one forward call per token with --step */
	for (i = 0; i < ntok; i += step ? 1 : ntok) {
		struct cb_batch b = {
			.n_tokens = step ? 1 : ntok, .tokens = tok + i, .seq = seq + i,
			.pos = pos + i, .logits = logits + (size_t)i * V,
			.route_trace = trace && K ? tr + (size_t)i * m->cfg.n_layers * K * 2
						  : NULL,
		};

		r = cb_engine_forward(eng, ex, &b);
		if (r) {
			fprintf(stderr, "colibri logits: forward failed (%d)\n", r);
			goto out;
		}
	}
	if (!greedy) {
		for (i = 0; i < ntok; i++) {
			for (j = 0; j < V; j++)
				printf(j ? " %.9g" : "%.9g", logits[(size_t)i * V + j]);
			putchar('\n');
		}
		for (i = 0; trace && i < ntok; i++)
			for (l = 0; l < (int)m->cfg.n_layers; l++) {
				const cb_u32 *e = tr + ((size_t)i * m->cfg.n_layers + l) * K * 2;

				if (!K || e[0] == CB_TRACE_NONE)
					continue;
				printf("route %d %d", i, l);
				for (j = 0; j < K; j++) {
					float w;

					memcpy(&w, &e[2 * j + 1], 4);
					printf(" %u:%.9g", e[2 * j], w);
				}
				putchar('\n');
			}
		rc = 0;
		goto out;
	}
	/* greedy continuation: feed the argmax back, one decode step at a time */
	tok[ntok] = argmax(logits + (size_t)(ntok - 1) * V, V);
	for (i = ntok; i < total; i++) {
		struct cb_batch b = {
			.n_tokens = 1, .tokens = tok + i, .seq = seq, .pos = pos + i,
			.logits = logits,
		};

		printf(i > ntok ? " %u" : "%u", tok[i]);
		if (i + 1 == total)
			break;
		r = cb_engine_forward(eng, ex, &b);
		if (r) {
			fprintf(stderr, "colibri logits: forward failed (%d)\n", r);
			goto out;
		}
		tok[i + 1] = argmax(logits, V);
	}
	putchar('\n');
	rc = 0;
out:
	cb_host_exec_destroy(ex);
	free(arena);
	free(logits);
	free(seq);
	free(pos);
	free(tok);
	free(tr);
	if (gm)
		gguf_model_free(gm);
	else if (cf)
		cbfile_close(cf);
	else
		hf_model_free(m);
	return rc;
}
