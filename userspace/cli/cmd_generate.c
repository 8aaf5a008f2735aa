// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri generate - text from a prompt, through /dev/colibri or in-process.
 *
 * Both backends run the same engine code and draw each token with the same
 * (seed, position) counter, so on the same ISA level they print the same
 * text.  The prompt goes in as one submission; then one token per step.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cbfile.h"
#include "cb_engine.h"
#include "hfmodel.h"
#include "host.h"
#include "colibri_uring.h"
#include "libcolibri.h"
#include "tokenizer.h"

struct gen_opts {
	const char *model;
	const char *prompt;
	const char *tokenizer;
	const char *name;
	const char *backend;
	const char *io;			/* kernel backend: "ioctl" or "uring" */
	unsigned int max_new;
	struct cb_sample_params sp;
	int verbose;
	int threads;
	unsigned int max_context;
};

/* One step: feed @n tokens, get the next one (and the routing trace). */
struct backend {
	const char *name;
	int (*step)(struct backend *b, const uint32_t *toks, uint32_t n, uint32_t *trace,
		    int *token);
	void (*close)(struct backend *b);
	uint32_t n_layers, top_k, max_context;
	const struct gen_opts *o;
	/* kernel */
	int fd;
	struct colibri_ring *ring;	/* --io uring */
	/* user */
	struct cbfile *cf;
	struct hf_model *hf;
	struct cb_engine *eng;
	struct cb_exec *ex;
	void *arena;
	float *logits;
	uint32_t pos;
	uint32_t *seq, *posv;
	uint32_t cap;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- kernel backend ------------------------------------------------------ */

static int kernel_step(struct backend *b, const uint32_t *toks, uint32_t n, uint32_t *trace,
		       int *token)
{
	struct colibri_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.tokens = (uintptr_t)toks;
	s.n_tokens = n;
	s.temperature_milli = b->o->sp.temperature_milli;
	s.top_k = b->o->sp.top_k;
	s.top_p_ppm = b->o->sp.top_p_ppm;
	s.seed = b->o->sp.seed;
	if (trace) {
		s.flags |= COLIBRI_SUBMIT_TRACE;
		s.trace = (uintptr_t)trace;
		s.trace_len = n * b->n_layers * b->top_k * 2;
	}
	ret = b->ring ? colibri_ring_step(b->ring, b->fd, &s) : colibri_dev_submit(b->fd, &s);
	if (ret)
		return ret;
	*token = s.token;
	return 0;
}

static void kernel_close(struct backend *b)
{
	colibri_ring_destroy(b->ring);
	close(b->fd);
}

static int kernel_open(struct backend *b, const struct gen_opts *o, int quiet_missing)
{
	struct colibri_attach at;
	char name[COLIBRI_NAME_LEN] = "";
	struct stat st;
	int fd, ret, loaded;

	fd = colibri_dev_open();
	if (fd < 0) {
		if (!quiet_missing)
			fprintf(stderr, "colibri generate: cannot open %s: %s\n",
				COLIBRI_DEVICE_PATH, strerror(-fd));
		return fd;
	}
	/* MODEL is a loaded model's name, or a .colibri file to load. */
	if (stat(o->model, &st) == 0) {
		char err[256];
		struct cbfile *f = cbfile_open(o->model, 0, err, sizeof(err));

		if (!f) {
			fprintf(stderr, "colibri generate: %s\n", err);
			close(fd);
			return -EINVAL;
		}
		if (strlen(o->name ? o->name : f->info.name) >= sizeof(name)) {
			fprintf(stderr, "colibri generate: the model name '%s' is longer than %zu bytes: give --name\n",
				o->name ? o->name : f->info.name, sizeof(name) - 1);
			cbfile_close(f);
			close(fd);
			return -EINVAL;
		}
		strcpy(name, o->name ? o->name : f->info.name);
		cbfile_close(f);
	} else {
		snprintf(name, sizeof(name), "%s", o->model);
	}
	if (stat(o->model, &st) == 0) {
		ret = colibri_dev_ensure_model(fd, o->model, name, name, &loaded);
		if (ret) {
			fprintf(stderr, "colibri generate: cannot load %s into the kernel: %s\n",
				o->model, strerror(-ret));
			close(fd);
			return ret;
		}
		if (loaded)
			fprintf(stderr, "colibri: loaded %s into the kernel as '%s'\n", o->model,
				name);
	}
	ret = colibri_dev_attach(fd, name, o->max_context, 0, &at);
	if (ret) {
		fprintf(stderr, "colibri generate: cannot attach to '%s': %s\n", name,
			strerror(-ret));
		close(fd);
		return ret;
	}
	if (!strcmp(o->io, "uring")) {
		ret = colibri_ring_create(&b->ring, 4);
		if (ret) {
			fprintf(stderr, "colibri generate: cannot set up an io_uring: %s\n",
				strerror(-ret));
			close(fd);
			return ret;
		}
	}
	b->name = b->ring ? "kernel (/dev/colibri, io_uring)" : "kernel (/dev/colibri)";
	b->fd = fd;
	b->step = kernel_step;
	b->close = kernel_close;
	b->n_layers = at.n_layers;
	b->top_k = at.top_k;
	b->max_context = at.max_context;
	return 0;
}

/* --- in-process backend -------------------------------------------------- */

static int user_step(struct backend *b, const uint32_t *toks, uint32_t n, uint32_t *trace,
		     int *token)
{
	uint8_t mask[64];
	uint32_t done = 0;
	int ret;

	/* The same pieces the kernel runs: at most 64 tokens per pass. */
	while (done < n) {
		uint32_t m = n - done < 64 ? n - done : 64, i;
		struct cb_batch batch = {
			.n_tokens = m,
			.tokens = toks + done,
			.seq = b->seq,
			.pos = b->posv,
			.logits_mask = mask,
			.logits = b->logits,
			.route_trace = trace ? trace + (size_t)done * b->n_layers * b->top_k * 2 :
				       NULL,
		};

		if (b->pos + m > b->max_context)
			return -ENOSPC;
		for (i = 0; i < m; i++) {
			b->posv[i] = b->pos + i;
			mask[i] = done + i == n - 1;
		}
		ret = cb_engine_forward(b->eng, b->ex, &batch);
		if (ret)
			return ret;
		b->pos += m;
		done += m;
	}
	ret = cb_engine_sample_ex(b->eng, b->ex, b->logits, &b->o->sp, b->pos - 1);
	if (ret < 0)
		return ret;
	*token = ret;
	return 0;
}

static void user_close(struct backend *b)
{
	if (b->ex)
		cb_host_exec_destroy(b->ex);
	free(b->arena);
	free(b->logits);
	free(b->seq);
	free(b->posv);
	if (b->cf)
		cbfile_close(b->cf);
	if (b->hf)
		hf_model_free(b->hf);
}

static int user_open(struct backend *b, const struct gen_opts *o)
{
	const struct cb_model_config *cfg;
	const struct cb_model_weights *w;
	struct cb_engine_params p = { .max_batch_tokens = 64, .n_seqs = 1 };
	char err[512];
	struct stat st;
	uint64_t asz;
	int ret;

	if (stat(o->model, &st) == 0 && S_ISDIR(st.st_mode)) {
		b->hf = hf_model_load(o->model, -1, err, sizeof(err));
		if (!b->hf)
			goto err_msg;
		cfg = &b->hf->cfg;
		w = &b->hf->w;
	} else {
		b->cf = cbfile_open(o->model, 0, err, sizeof(err));
		if (!b->cf)
			goto err_msg;
		cfg = &b->cf->cfg;
		w = &b->cf->w;
	}
	p.max_context = o->max_context ? o->max_context : 2048;
	if (cfg->max_context && p.max_context > cfg->max_context)
		p.max_context = cfg->max_context;
	p.isa_max_level = cb_host_isa_cap();
	asz = cb_engine_arena_size(cfg, &p);
	b->arena = asz ? aligned_alloc(64, (asz + 63) & ~63ULL) : NULL;
	b->logits = calloc(cfg->vocab_size, sizeof(float));
	b->seq = calloc(64, sizeof(uint32_t));
	b->posv = calloc(64, sizeof(uint32_t));
	b->ex = cb_host_exec_create(o->threads);
	if (!b->arena || !b->logits || !b->seq || !b->posv || !b->ex) {
		snprintf(err, sizeof(err), "%s: out of memory", o->model);
		goto err_msg;
	}
	ret = cb_engine_init(&b->eng, cfg, w, &p, b->arena, asz);
	if (ret) {
		snprintf(err, sizeof(err), "%s: the engine refused the model (%d)", o->model, ret);
		goto err_msg;
	}
	b->name = "in-process engine";
	b->step = user_step;
	b->close = user_close;
	b->n_layers = cfg->n_layers;
	b->top_k = cfg->n_experts ? cfg->top_k : 0;
	b->max_context = p.max_context;
	return 0;

err_msg:
	fprintf(stderr, "colibri generate: %s\n", err);
	user_close(b);
	return -EINVAL;
}

/* --- the command ----------------------------------------------------------- */

/* The tokenizer a model pinned in the kernel carries (GET_TOKENIZER). */
static struct cb_tokenizer *kernel_tokenizer(const char *name, char *err, size_t errlen)
{
	struct colibri_tokenizer t;
	struct cb_tokenizer *tok;
	void *json;
	size_t len;
	int fd = colibri_dev_open(), ret;

	ret = fd < 0 ? fd : colibri_dev_get_tokenizer(fd, name, &json, &len, &t);
	if (fd >= 0)
		close(fd);
	if (ret) {
		snprintf(err, errlen, "'%s' is neither a file nor a model loaded in the kernel (%s)",
			 name, strerror(-ret));
		return NULL;
	}
	if (!json) {
		snprintf(err, errlen, "model '%s' has no tokenizer: give --tokenizer", name);
		return NULL;
	}
	tok = cb_tok_load(json, len, err, errlen);
	free(json);
	if (tok && t.bos_id >= 0)
		cb_tok_set_bos_id(tok, t.bos_id);
	if (tok && t.eos_id >= 0)
		cb_tok_set_eos_id(tok, t.eos_id);
	return tok;
}

static struct cb_tokenizer *load_tokenizer(const struct gen_opts *o)
{
	char err[512], path[4096];
	struct cb_tokenizer *tok = NULL;
	struct stat st;

	if (o->tokenizer) {
		tok = cb_tok_load_file(o->tokenizer, err, sizeof(err));
	} else if (stat(o->model, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/tokenizer.json", o->model);
		tok = cb_tok_load_file(path, err, sizeof(err));
	} else {
		struct cbfile *f = cbfile_open(o->model, 0, err, sizeof(err));

		if (f) {
			tok = cbfile_load_tokenizer(f, err, sizeof(err));
			if (!tok && !cbfile_tokenizer(f, &(size_t){ 0 }))
				strncat(err, " (give --tokenizer)", sizeof(err) - strlen(err) - 1);
			cbfile_close(f);
		} else if (o->model[0] && !strchr(o->model, '/') && strcmp(o->backend, "user")) {
			tok = kernel_tokenizer(o->model, err, sizeof(err));
		}
	}
	if (!tok)
		fprintf(stderr, "colibri generate: %s\n", err);
	return tok;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: colibri generate --model M --prompt P [--max-new-tokens N]\n"
		"         [--temperature T] [--top-p P] [--top-k K] [--seed S]\n"
		"         [--tokenizer tokenizer.json] [--backend auto|kernel|user]\n"
		"         [--name NAME] [--context N] [--threads N] [--io ioctl|uring]\n"
		"         [--verbose]\n"
		"M is a .colibri file (or, in-process, a Hugging Face directory; for the\n"
		"kernel, also the name of a loaded model).  auto uses /dev/colibri when\n"
		"it is there (loading the model if needed) and the in-process engine\n"
		"otherwise.  --io picks how the kernel backend submits steps: ioctl\n"
		"(the default) or io_uring.  Text goes to stdout as it is made; timing\n"
		"to stderr.\n");
}

static int parse_opts(int argc, char **argv, struct gen_opts *o)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "prompt", required_argument, NULL, 'p' },
		{ "max-new-tokens", required_argument, NULL, 'n' },
		{ "temperature", required_argument, NULL, 't' },
		{ "top-p", required_argument, NULL, 'P' },
		{ "top-k", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "tokenizer", required_argument, NULL, 'T' },
		{ "backend", required_argument, NULL, 'b' },
		{ "io", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'N' },
		{ "context", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	double t;
	int c;

	while ((c = getopt_long(argc, argv, "m:p:n:t:P:k:s:T:b:i:N:c:j:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 'n': o->max_new = strtoul(optarg, NULL, 0); break;
		case 't':
			t = strtod(optarg, NULL);
			if (t < 0 || t > 100)
				goto bad;
			o->sp.temperature_milli = (uint32_t)(t * 1000 + 0.5);
			break;
		case 'P':
			t = strtod(optarg, NULL);
			if (t < 0 || t > 1)
				goto bad;
			o->sp.top_p_ppm = (uint32_t)(t * 1e6 + 0.5);
			break;
		case 'k': o->sp.top_k = strtoul(optarg, NULL, 0); break;
		case 's': o->sp.seed = strtoull(optarg, NULL, 0); break;
		case 'T': o->tokenizer = optarg; break;
		case 'b': o->backend = optarg; break;
		case 'i': o->io = optarg; break;
		case 'N': o->name = optarg; break;
		case 'c': o->max_context = strtoul(optarg, NULL, 0); break;
		case 'j': o->threads = atoi(optarg); break;
		case 'v': o->verbose = 1; break;
		case 'h': usage(stdout); return 1;
		default: goto bad;
		}
	}
	if (!o->model || !o->prompt || optind != argc)
		goto bad;
	if (strcmp(o->backend, "auto") && strcmp(o->backend, "kernel") &&
	    strcmp(o->backend, "user")) {
		fprintf(stderr, "colibri generate: --backend is auto, kernel or user\n");
		return -1;
	}
	if (strcmp(o->io, "ioctl") && strcmp(o->io, "uring")) {
		fprintf(stderr, "colibri generate: --io is ioctl or uring\n");
		return -1;
	}
	return 0;
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

			if (id == CB_TRACE_NONE)
				fprintf(stderr, " dense");
			else
				fprintf(stderr, " e%u:%.2f", id, w.f);
		}
		fputc('\n', stderr);
	}
}

int cmd_generate(int argc, char **argv)
{
	struct gen_opts o = { .backend = "auto", .io = "ioctl", .max_new = 64, .threads = 0 };
	struct backend b = { .fd = -1 };
	struct cb_tokenizer *tok;
	struct cb_tok_stream ts;
	uint32_t *ids = NULL, *trace = NULL, i, generated = 0, n_past = 0;
	int context_full = 0;
	int32_t *ids32 = NULL;
	char *buf = NULL;
	double t0, t_prefill, t_end, t_tok;
	long n, n_prompt;
	int token, ret = 1;

	o.sp.seed = 0;
	if (parse_opts(argc, argv, &o))
		return o.model && o.prompt ? 2 : (argc > 1 && !strcmp(argv[1], "--help") ? 0 : 2);
	if (o.threads <= 0)
		o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);

	tok = load_tokenizer(&o);
	if (!tok)
		return 1;
	n = cb_tok_encode_alloc(tok, o.prompt, strlen(o.prompt), CB_TOK_ADD_SPECIAL, &ids32);
	if (n <= 0) {
		fprintf(stderr, "colibri generate: the prompt encodes to no token\n");
		goto out_tok;
	}

	if (strcmp(o.backend, "user")) {
		ret = kernel_open(&b, &o, !strcmp(o.backend, "auto"));
		if (ret && strcmp(o.backend, "auto")) {
			ret = 1;
			goto out_tok;
		}
		if (ret && ret != -ENOENT)
			fprintf(stderr, "colibri: /dev/colibri unusable here (%s): running in-process\n",
				strerror(-ret));
	} else {
		ret = -1;
	}
	if (ret) {
		if (user_open(&b, &o)) {
			ret = 1;
			goto out_tok;
		}
	}
	b.o = &o;
	fprintf(stderr, "colibri: backend: %s\n", b.name);

	ids = malloc(n * sizeof(*ids));
	buf = malloc(cb_tok_max_token_bytes(tok) + 64);
	if (o.verbose)
		trace = calloc((size_t)n * (b.n_layers * b.top_k * 2 + 1), sizeof(*trace));
	if (!ids || !buf || (o.verbose && !trace)) {
		fprintf(stderr, "colibri generate: out of memory\n");
		ret = 1;
		goto out_b;
	}
	for (i = 0; i < n; i++)
		ids[i] = ids32[i];
	n_prompt = n;

	fputs(o.prompt, stdout);
	fflush(stdout);
	cb_tok_stream_init(&ts, tok, CB_TOK_SKIP_SPECIAL);
	ts.at_start = 0;	/* the prompt was printed already */
	if ((uint32_t)n > b.max_context) {
		fprintf(stderr, "colibri generate: the prompt (%ld tokens) does not fit the context (%u positions)\n",
			n, b.max_context);
		ret = 1;
		goto out_b;
	}
	t0 = now_s();
	ret = b.step(&b, ids, n, trace, &token);
	t_prefill = now_s();
	n_past = n;
	t_tok = t_prefill;
	while (!ret && generated < o.max_new) {
		long len;

		generated++;
		if (token == cb_tok_eos_id(tok))
			break;
		len = cb_tok_stream_feed(&ts, token, buf, cb_tok_max_token_bytes(tok) + 64);
		if (len > 0)
			fwrite(buf, 1, len, stdout);
		fflush(stdout);
		if (o.verbose) {
			double t = now_s();

			fprintf(stderr, "\n[token %d %.2f ms]\n", token, (t - t_tok) * 1e3);
			t_tok = t;
		}
		if (generated == o.max_new)
			break;
		/* The sequence is full: the last token was sampled, never fed. */
		if (n_past == b.max_context) {
			context_full = 1;
			break;
		}
		n_past++;
		ids[0] = token;
		ret = b.step(&b, ids, 1, trace, &token);
		if (!ret && o.verbose)
			print_trace(trace, b.n_layers, b.top_k);
	}
	n = cb_tok_stream_flush(&ts, buf, cb_tok_max_token_bytes(tok) + 64);
	if (n > 0)
		fwrite(buf, 1, n, stdout);
	fputc('\n', stdout);
	t_end = now_s();
	if (ret) {
		fprintf(stderr, "colibri generate: step failed: %s\n", strerror(-ret));
		ret = 1;
		goto out_b;
	}
	if (context_full)
		fprintf(stderr, "colibri generate: stopped at the end of the context (%u positions) after %u tokens\n",
			b.max_context, generated);
	fprintf(stderr, "colibri: prompt %ld tokens in %.3f s (%.1f tok/s); %u tokens generated in %.3f s (%.1f tok/s)\n",
		n_prompt, t_prefill - t0, n_prompt / (t_prefill - t0 + 1e-9), generated,
		t_end - t_prefill, generated > 1 ? (generated - 1) / (t_end - t_prefill) : 0.0);
	ret = 0;
out_b:
	b.close(&b);
out_tok:
	free(ids);
	free(ids32);
	free(buf);
	free(trace);
	cb_tok_free(tok);
	return ret;
}
