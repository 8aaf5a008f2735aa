// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cmd_bench.c - "colibri bench": prefill and decode speed of a model, as a
 * fraction of the machine's memory read bandwidth measured in the same run.
 *
 * Decode of an MoE model is bound by the weight bytes each step must read
 * (colibri_model_pass_bytes(): attention, router, the experts the batch
 * actually selected, counted from the routing trace, the embedding rows and
 * the lm_head).  roofline_ratio = those bytes per second / the read
 * bandwidth of a buffer well above the last-level cache, read by the same
 * number of threads: 1.0 would be a decode that does nothing but stream its
 * weights once.  DESIGN.md: ratios measured in one run, never a bare time.
 *
 * Backends, both through libcolibri's sessions (colibri_session.h):
 *   user    the in-process engine; a batch of B is a group of B sessions,
 *           the slots of one engine, and one forward pass per step
 *           carrying B tokens.
 *   kernel  /dev/colibri; a batch of B (--sessions B) is B sessions, one
 *           thread each, each stepping one token at a time (ioctl, or
 *           io_uring with --io uring).  The module batches the pending
 *           requests of a model's sessions into one forward pass, so the
 *           aggregate tok/s of B sessions over that of one is its gain.
 * A prefill of P tokens goes in pieces of the session's max_batch (64) on
 * both.
 *
 * `colibri bench --router` times the router's top-k selection alone.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "colibri_session.h"
#include "bench/membw.h"
#include "bench/microbench.h"

struct bench_opts {
	struct cli_common co;
	const char *name;
	uint32_t batch, prompt, gen, reps;
	int json, hugepages;
	double bw_gib;
	/* --router */
	int router;
	uint32_t experts, k, rows, iters;
};

struct bench_result {
	double prefill_s;		/* median of the prefill passes */
	double decode_s;		/* wall time of the timed decode steps */
	double step_med_s;		/* median step (user) / request (kernel) */
	long decode_tokens;		/* tokens decoded in decode_s */
	double bytes;			/* weight bytes read by those steps */
	long steps;			/* forward passes in decode_s */
	double model_bytes;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Deterministic token ids, spread over the vocabulary. */
static uint32_t tok_at(uint32_t vocab, uint32_t seq, uint32_t i)
{
	uint64_t x = ((uint64_t)seq << 32 | i) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)((x >> 33) % vocab);
}

/*
 * The prompt of sequence @seq into @s, from empty; the seconds it took in
 * *@t, the token it sampled in *@next.
 */
static int prefill(struct colibri_session *s, uint32_t vocab, uint32_t seq, uint32_t P,
		   uint32_t *ptok, double *t, uint32_t *next)
{
	struct colibri_step st = { 0 };
	double t0;
	uint32_t j;
	int ret;

	for (j = 0; j < P; j++)
		ptok[j] = tok_at(vocab, seq, j);
	colibri_session_reset(s);
	t0 = now_s();
	ret = colibri_session_prefill(s, ptok, P, &st);
	*t = now_s() - t0;
	*next = (uint32_t)st.token;
	if (ret)
		fprintf(stderr, "colibri bench: prefill: %s\n", colibri_session_error(s));
	return ret;
}

/*
 * B sessions (@group: one group), each prefilled (session 0 o->reps times,
 * timed); @next[i] gets the token session i sampled.
 */
static int open_and_prefill(struct colibri_model *m, const struct bench_opts *o, int group,
			    struct colibri_session **ss, struct bench_result *r, uint32_t *next)
{
	const struct colibri_model_info *mi = colibri_model_info(m);
	struct colibri_session_opts so = { .max_context = o->prompt + o->gen + 1 };
	double *t_pre = calloc(o->reps, sizeof(double));
	uint32_t *ptok = calloc(o->prompt, 4), i, rep;
	char err[512];
	int ret = -ENOMEM;

	if (!t_pre || !ptok)
		goto out;
	ret = group ? colibri_session_open_group(ss, o->batch, m, &so, err, sizeof(err)) : 0;
	for (i = 0; !group && !ret && i < o->batch; i++)
		ret = colibri_session_open(&ss[i], m, &so, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "colibri bench: %s\n", err);
		goto out;
	}
	for (i = 0; i < o->batch && !ret; i++)
		for (rep = 0; rep < (i ? 1u : o->reps) && !ret; rep++)
			ret = prefill(ss[i], mi->vocab_size, i, o->prompt, ptok,
				      i ? &(double){ 0 } : &t_pre[rep], &next[i]);
	r->prefill_s = median(t_pre, (int)o->reps);
out:
	free(t_pre);
	free(ptok);
	return ret;
}

/* --- in-process: G steps of the whole group, step 0 a warm-up --------------- */

static int bench_user(struct colibri_model *m, const struct bench_opts *o,
		      struct bench_result *r)
{
	const struct colibri_model_info *mi = colibri_model_info(m);
	uint32_t B = o->batch, G = o->gen, tper = mi->n_layers * mi->top_k * 2, i, s;
	struct colibri_session **ss = calloc(B, sizeof(*ss));
	struct colibri_step *st = calloc(B, sizeof(*st));
	uint32_t *trace = calloc((size_t)B * (tper ? tper : 1), 4), *tok = calloc(B, 4);
	double *t_step = calloc(G, sizeof(double));
	int ret = -ENOMEM;

	if (!ss || !st || !trace || !tok || !t_step)
		goto out;
	ret = open_and_prefill(m, o, 1, ss, r, tok);
	if (ret)
		goto out;
	for (i = 0; i < B; i++)
		st[i].trace = tper ? trace + (size_t)i * tper : NULL;
	for (s = 0; s < G; s++) {
		double t0 = now_s(), t, bytes;

		ret = colibri_session_step_group(ss, B, tok, st);
		if (ret) {
			fprintf(stderr, "colibri bench: step: %s\n", colibri_session_error(ss[0]));
			goto out;
		}
		t = now_s() - t0;
		for (i = 0; i < B; i++)
			tok[i] = (uint32_t)st[i].token;
		t_step[s] = t;
		if (s == 0)
			continue;
		colibri_model_pass_bytes(m, trace, B, &bytes);
		r->decode_s += t;
		r->decode_tokens += B;
		r->steps++;
		r->bytes += bytes;
	}
	r->step_med_s = median(t_step + 1, (int)G - 1);
out:
	for (i = 0; ss && i < B; i++)
		colibri_session_close(ss[i]);
	free(ss);
	free(st);
	free(trace);
	free(tok);
	free(t_step);
	return ret;
}

/* --- kernel: one thread per session ----------------------------------------- */

struct ksess {
	const struct bench_opts *o;
	struct colibri_model *m;
	struct colibri_session *s;
	pthread_barrier_t *bar;
	int ret;
	uint32_t next;			/* the token its prefill sampled */
	uint32_t *trace;
	double *t_req;
	double bytes;
};

/* One session's decode: G steps of one token, the first a warm-up. */
static void *ksess_decode(void *arg)
{
	struct ksess *k = arg;
	struct colibri_step st = { .trace = k->trace, .token = (int32_t)k->next };
	uint32_t s;
	double bytes;

	pthread_barrier_wait(k->bar);
	for (s = 0; s < k->o->gen; s++) {
		double t0 = now_s();

		k->ret = colibri_session_step(k->s, (uint32_t)st.token, &st);
		k->t_req[s] = now_s() - t0;
		if (k->ret)
			break;
		if (s) {
			colibri_model_pass_bytes(k->m, k->trace, 1, &bytes);
			k->bytes += bytes;
		} else {
			pthread_barrier_wait(k->bar);	/* all warm: start the clock */
		}
	}
	if (k->ret && s == 0)
		pthread_barrier_wait(k->bar);	/* the main thread still counts on it */
	return NULL;
}

static int bench_kernel(struct colibri_model *m, const struct bench_opts *o,
			struct bench_result *r)
{
	const struct colibri_model_info *mi = colibri_model_info(m);
	uint32_t B = o->batch, tper = mi->n_layers * mi->top_k * 2, i;
	struct colibri_session **ss = calloc(B, sizeof(*ss));
	struct ksess *ks = calloc(B, sizeof(*ks));
	pthread_t *th = calloc(B, sizeof(*th));
	double *all = calloc((size_t)B * o->gen, sizeof(double)), t0;
	uint32_t *next = calloc(B, 4);
	pthread_barrier_t bar;
	int ret = -ENOMEM;

	if (!ss || !ks || !th || !all || !next)
		goto out;
	for (i = 0; i < B; i++) {
		ks[i].trace = calloc(tper ? tper : 1, 4);
		ks[i].t_req = calloc(o->gen, sizeof(double));
		if (!ks[i].trace || !ks[i].t_req)
			goto out;
	}
	ret = open_and_prefill(m, o, 0, ss, r, next);
	if (ret)
		goto out;
	pthread_barrier_init(&bar, NULL, B + 1);
	for (i = 0; i < B; i++) {
		ks[i].next = next[i];
		ks[i].o = o;
		ks[i].m = m;
		ks[i].s = ss[i];
		ks[i].bar = &bar;
		pthread_create(&th[i], NULL, ksess_decode, &ks[i]);
	}
	pthread_barrier_wait(&bar);	/* go */
	pthread_barrier_wait(&bar);	/* every session did its warm-up request */
	t0 = now_s();
	for (i = 0; i < B; i++)
		pthread_join(th[i], NULL);
	r->decode_s = now_s() - t0;
	pthread_barrier_destroy(&bar);
	for (i = 0; i < B; i++) {
		if (ks[i].ret && !ret) {
			ret = ks[i].ret;
			fprintf(stderr, "colibri bench: step: %s\n", colibri_session_error(ss[i]));
		}
		r->bytes += ks[i].bytes;
		memcpy(all + (size_t)i * (o->gen - 1), ks[i].t_req + 1,
		       sizeof(double) * (o->gen - 1));
	}
	r->decode_tokens = (long)B * (o->gen - 1);
	r->steps = r->decode_tokens;
	r->step_med_s = median(all, (int)(B * (o->gen - 1)));
out:
	for (i = 0; ks && i < B; i++) {
		colibri_session_close(ss ? ss[i] : NULL);
		free(ks[i].trace);
		free(ks[i].t_req);
	}
	free(ss);
	free(ks);
	free(th);
	free(all);
	free(next);
	return ret;
}

/* --- router micro-benchmark ------------------------------------------------------ */

static int bench_router(const struct bench_opts *o)
{
	struct cb_router_result r;
	int ret = cb_router_bench((int)o->experts, (int)o->k, (int)o->rows, o->iters, &r);

	if (ret == -EINVAL) {
		fprintf(stderr, "colibri bench --router: need 1 <= k <= experts <= 256, k <= 16\n");
		return 2;
	}
	if (ret) {
		fprintf(stderr, "colibri bench --router: %s\n", strerror(-ret));
		return 1;
	}
	if (o->json)
		printf("{\"bench\": \"router_topk\", \"experts\": %u, \"k\": %u, \"rows\": %u, "
		       "\"calls\": %llu, \"topk_ns_per_token\": %.2f, \"topk_ns_min\": %.2f, "
		       "\"topk_cpu_ns_per_token\": %.2f, \"route_cpu_ns_per_token\": %.2f, "
		       "\"target_ns\": 50, \"met\": %s, \"sink\": %llu}\n",
		       o->experts, o->k, o->rows, (unsigned long long)o->iters * o->rows * 7,
		       r.topk_ns, r.topk_ns_min, r.topk_cpu_ns, r.route_cpu_ns,
		       r.topk_cpu_ns <= 50 ? "true" : "false", r.sink & 1);
	else
		printf("router top-k, %u experts, k = %u: %.1f ns/token wall, %.1f ns/token CPU time "
		       "(median of 7 x %llu calls; best wall %.1f); full route (top-k + softmax "
		       "weights) %.1f ns/token CPU time\n", o->experts, o->k, r.topk_ns,
		       r.topk_cpu_ns, (unsigned long long)o->iters * o->rows, r.topk_ns_min,
		       r.route_cpu_ns);
	return 0;
}

/* --- the command ------------------------------------------------------------------- */

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: colibri bench --model M [--backend user|kernel] [--threads N] [--isa I]\n"
		"         [--batch B | --sessions B] [--io ioctl|uring] [--prompt-tokens P]\n"
		"         [--gen-tokens G] [--reps R] [--bw-gib GIB] [--name NAME]\n"
		"         [--hugepages] [--json]\n"
		"       colibri bench --router [--experts 64] [--k 8] [--rows 4096]\n"
		"         [--iters 200] [--json]\n"
		"Prefill: P tokens (median of R).  Decode: B sequences of G tokens each\n"
		"(the first step is a warm-up).  user: one engine with B slots, one\n"
		"forward pass per step carrying B tokens.  kernel: B sessions on B\n"
		"threads, each stepping 1 token at a time through the ioctl or io_uring\n"
		"(--io); the module batches the sessions' pending requests into one\n"
		"forward pass.  The read bandwidth is measured in the same run with the\n"
		"same thread count over max(1 GiB, 4 x L3), at most half the memory\n"
		"available, unless --bw-gib.  --hugepages (user): run from a copy of the\n"
		"weights in anonymous memory with transparent huge pages, as the kernel's\n"
		"pinned copy is mapped, instead of the file's page-cache mapping.  M: a\n"
		".colibri file or a loaded model's name (in-process also a GGUF file).\n");
}

static int bench_parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		CLI_OPTION_MODEL, CLI_OPTION_BACKEND, CLI_OPTION_THREADS, CLI_OPTION_ISA,
		CLI_OPTION_IO,
		{ "batch", required_argument, NULL, 'B' },
		{ "sessions", required_argument, NULL, 'B' },
		{ "prompt-tokens", required_argument, NULL, 'P' },
		{ "gen-tokens", required_argument, NULL, 'G' },
		{ "reps", required_argument, NULL, 'R' },
		{ "bw-gib", required_argument, NULL, 'W' },
		{ "name", required_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'J' },
		{ "hugepages", no_argument, NULL, 'U' },
		{ "router", no_argument, NULL, 'r' },
		{ "experts", required_argument, NULL, 'E' },
		{ "k", required_argument, NULL, 'k' },
		{ "rows", required_argument, NULL, 'w' },
		{ "iters", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *cmd = "bench";
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'B': r = cli_u32(cmd, "--batch", optarg, 1, 256, &o->batch); break;
		case 'P': r = cli_u32(cmd, "--prompt-tokens", optarg, 1, 4096, &o->prompt); break;
		case 'G': r = cli_u32(cmd, "--gen-tokens", optarg, 2, 100000, &o->gen); break;
		case 'R': r = cli_u32(cmd, "--reps", optarg, 1, 100, &o->reps); break;
		case 'W': r = cli_double(cmd, "--bw-gib", optarg, 0, 64, &o->bw_gib); break;
		case 'N': o->name = optarg; break;
		case 'J': o->json = 1; break;
		case 'U': o->hugepages = 1; break;
		case 'r': o->router = 1; break;
		case 'E': r = cli_u32(cmd, "--experts", optarg, 1, 256, &o->experts); break;
		case 'k': r = cli_u32(cmd, "--k", optarg, 1, 16, &o->k); break;
		case 'w': r = cli_u32(cmd, "--rows", optarg, 1, 1u << 20, &o->rows); break;
		case 'i': r = cli_u32(cmd, "--iters", optarg, 1, 1u << 30, &o->iters); break;
		case 'h': bench_usage(stdout); return 1;
		default:
			r = cli_common_opt(cmd, c, optarg, &o->co);
			if (!r) {
				bench_usage(stderr);
				return -1;
			}
			r = r < 0 ? -1 : 0;
		}
		if (r)
			return -1;
	}
	if (optind != argc || (!o->router && !o->co.model)) {
		bench_usage(stderr);
		return -1;
	}
	if (o->co.backend == COLIBRI_BACKEND_AUTO) {
		fprintf(stderr, "colibri bench: --backend is user or kernel\n");
		return -1;
	}
	if (o->hugepages && o->co.backend != COLIBRI_BACKEND_USER) {
		fprintf(stderr, "colibri bench: --hugepages is for --backend user (the kernel's copy is pinned already)\n");
		return -1;
	}
	return cli_common_check(cmd, &o->co);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void report(const struct bench_opts *o, const struct colibri_model_info *mi,
		   const struct bench_result *r, double bw, double bw_before, double bw_after,
		   double bw_bytes)
{
	const char *backend = o->co.backend == COLIBRI_BACKEND_USER ? "user" : "kernel";
	double la[3] = { 0 }, pre_tok_s, tok_s, bpt, ratio;

	getloadavg(la, 3);
	pre_tok_s = o->prompt / r->prefill_s;
	tok_s = r->decode_tokens / r->decode_s;
	bpt = r->bytes / r->decode_tokens;
	ratio = r->bytes / r->decode_s / bw;
	if (o->json) {
		printf("{\"model\": ");
		json_str(o->co.model);
		printf(", \"backend\": \"%s\", \"decode_mode\": \"%s\", \"isa\": ", backend,
		       mi->backend == COLIBRI_BACKEND_USER ?
		       "one forward per step carrying the batch" :
		       mi->io == COLIBRI_IO_URING ?
		       "one session per sequence, one io_uring SUBMIT of 1 token each" :
		       "one session per sequence, one SUBMIT of 1 token each");
		json_str(mi->isa);
		printf(", \"threads\": %d, \"batch\": %u, \"prompt_tokens\": %u, \"gen_tokens\": %u, "
		       "\"model_bytes\": %.0f, \"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f, "
		       "\"decode_step_us\": %.2f, \"weight_bytes_per_token\": %.0f, "
		       "\"weight_bytes_per_step\": %.0f, \"mem_read_gbs\": %.3f, "
		       "\"mem_read_gbs_before\": %.3f, \"mem_read_gbs_after\": %.3f, "
		       "\"mem_read_buffer_mib\": %.0f, \"roofline_ratio\": %.4f, "
		       "\"hugepages\": %s, \"load_avg\": [%.2f, %.2f, %.2f]}\n",
		       mi->threads, o->batch, o->prompt, o->gen, r->model_bytes, pre_tok_s, tok_s,
		       r->step_med_s * 1e6, bpt, r->bytes / r->steps, bw / 1e9, bw_before / 1e9,
		       bw_after / 1e9, bw_bytes / (1 << 20), ratio,
		       o->hugepages ? "true" : "false", la[0], la[1], la[2]);
		return;
	}
	printf("model %s: %.3f GiB of weights; backend %s, isa %s, %d threads\n",
	       o->co.model, r->model_bytes / (1u << 30), backend, mi->isa, mi->threads);
	printf("read bandwidth: %.2f GB/s (before %.2f, after the run %.2f; %.0f MiB buffer)\n",
	       bw / 1e9, bw_before / 1e9, bw_after / 1e9, bw_bytes / (1 << 20));
	printf("prefill: %u tokens in %.2f ms = %.1f tok/s\n", o->prompt, r->prefill_s * 1e3,
	       pre_tok_s);
	printf("decode: batch %u, %ld tokens in %.3f s = %.2f tok/s (median %s %.2f ms)\n",
	       o->batch, r->decode_tokens, r->decode_s, tok_s,
	       mi->backend == COLIBRI_BACKEND_USER ? "step" : "request", r->step_med_s * 1e3);
	printf("weights read: %.1f MiB per step, %.1f MiB per token; %.2f GB/s = "
	       "roofline ratio %.3f\n", r->bytes / r->steps / (1 << 20), bpt / (1 << 20),
	       r->bytes / r->decode_s / 1e9, ratio);
	printf("load average: %.2f %.2f %.2f\n", la[0], la[1], la[2]);
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {
		.batch = 1, .prompt = 64, .gen = 32, .reps = 3,
		.experts = 64, .k = 8, .rows = 4096, .iters = 200,
	};
	struct bench_result r = { 0 };
	const struct colibri_model_info *mi;
	struct colibri_model_opts mo;
	struct colibri_model *m;
	double bw, bw_before, bw_after, bw_bytes;
	char err[512];
	int ret, rc = 1;

	cli_common_init(&o.co, COLIBRI_BACKEND_USER);
	ret = bench_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (o.router)
		return bench_router(&o);

	cli_model_opts(&o.co, &mo);
	mo.name = o.name;
	mo.flags = o.hugepages ? COLIBRI_MODEL_HUGEPAGES : 0;
	if (colibri_model_open(&m, o.co.model, &mo, err, sizeof(err))) {
		fprintf(stderr, "colibri bench: %s\n", err);
		return 1;
	}
	mi = colibri_model_info(m);
	if (mi->max_context && o.prompt + o.gen + 1 > mi->max_context) {
		fprintf(stderr, "colibri bench: prompt + gen tokens exceed the model's context %u\n",
			mi->max_context);
		rc = 2;
		goto out;
	}
	if (colibri_model_weight_bytes(m, &r.model_bytes)) {
		fprintf(stderr, "colibri bench: %s: give the model's file, whose weights it counts\n",
			o.co.model);
		goto out;
	}

	/*
	 * The yardstick first, with the same thread count, model not yet
	 * touched: over max(1 GiB, 4 x L3), or half the memory available
	 * if that is less (cb_read_bw_fit()), or --bw-gib.
	 */
	bw_bytes = o.bw_gib > 0 ? o.bw_gib * (1u << 30) : (double)cb_read_bw_default();
	bw = cb_measure_read_bw(o.co.threads, (size_t)bw_bytes);
	if (bw <= 0) {
		fprintf(stderr, "colibri bench: cannot measure the read bandwidth over %.0f MiB: %s%s\n",
			bw_bytes / (1 << 20), strerror((int)-bw),
			o.bw_gib > 0 ? " (give a smaller --bw-gib)" : " (give --bw-gib)");
		goto out;
	}
	ret = mi->backend == COLIBRI_BACKEND_USER ? bench_user(m, &o, &r) : bench_kernel(m, &o, &r);
	if (ret)
		goto out;
	/*
	 * Once more after the run: on a shared machine the bandwidth moves
	 * with other tenants' load; the larger of the two is the yardstick
	 * (the conservative ratio), both are reported.
	 */
	bw_after = cb_measure_read_bw(o.co.threads, (size_t)bw_bytes);
	bw_before = bw;
	if (bw_after > bw)
		bw = bw_after;
	report(&o, mi, &r, bw, bw_before, bw_after, bw_bytes);
	rc = 0;
out:
	colibri_model_close(m);
	return rc;
}
