// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cmd_bench.c - "colibri bench": prefill and decode speed of a model, as a
 * fraction of the machine's memory read bandwidth measured in the same run.
 *
 * Decode of an MoE model is bound by the weight bytes each step must read:
 * attention, router, the experts the batch actually selected (counted from
 * the routing trace, distinct experts per layer and step), the embedding
 * rows and the lm_head.  roofline_ratio = those bytes per second / the read
 * bandwidth of a buffer well above the last-level cache, read by the same
 * number of threads: 1.0 would be a decode that does nothing but stream its
 * weights once.  DESIGN.md: ratios measured in one run, never a bare time.
 *
 * Backends:
 *   user    the in-process engine; a batch of B is one engine with B
 *           sequence slots and one forward call per step carrying B tokens.
 *   kernel  /dev/colibri; a batch of B (--sessions B) is B sessions, one
 *           thread each, each SUBMITting one token per step (ioctl, or
 *           io_uring with --io uring).  The module batches the pending
 *           requests of a model's sessions into one forward pass, so the
 *           aggregate tok/s of B sessions over that of one is its gain.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cbfile.h"
#include "cb_engine.h"
#include "cb_engine_priv.h"
#include "cli.h"
#include "host.h"
#include "libcolibri.h"
#include "colibri_uring.h"
#include "membw.h"

struct bench_opts {
	const char *model, *backend, *name, *io;
	int threads, batch, prompt, gen, reps, json, hugepages;
	double bw_gib;
	/* --router */
	int router, experts, k, rows;
	long iters;
};

struct bench_result {
	const char *isa;
	int threads;
	double prefill_s;		/* median of the prefill passes */
	double decode_s;		/* wall time of the timed decode steps */
	double step_med_s;		/* median step (user) / request (kernel) */
	long decode_tokens;		/* tokens decoded in decode_s */
	double bytes;			/* weight bytes read by those steps */
	long steps;			/* forward calls in decode_s */
	double model_bytes;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: excludes time other tasks had the core. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

/* --- weight bytes ---------------------------------------------------------- */

static double tbytes(const struct cb_tensor *t)
{
	return t->data ? (double)t->rows * cb_dtype_row_bytes(t->dtype, t->cols) : 0;
}

static double expert_bytes(const struct cb_expert_weights *x)
{
	return tbytes(&x->gate) + tbytes(&x->up) + tbytes(&x->down);
}

/* The per-layer tensors other than the routed experts. */
static double layer_bytes(const struct cb_layer_weights *L)
{
	const struct cb_tensor *t[] = {
		&L->attn_norm, &L->wq, &L->wk, &L->wv, &L->wo, &L->bq, &L->bk, &L->bv,
		&L->q_norm, &L->k_norm, &L->ffn_norm, &L->router, &L->shared_gate_proj,
		&L->shared_up_proj, &L->shared_down_proj, &L->shared_expert_gate,
		&L->mlp_gate, &L->mlp_up, &L->mlp_down,
	};
	double b = 0;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		b += tbytes(t[i]);
	return b;
}

/* Every byte of the model, for the report. */
static double model_bytes(const struct cb_model_config *c, const struct cb_model_weights *w)
{
	double b = tbytes(&w->embed) + tbytes(&w->final_norm) + tbytes(&w->lm_head);
	uint32_t l, e;

	for (l = 0; l < c->n_layers; l++) {
		const struct cb_layer_weights *L = &w->layers[l];

		b += layer_bytes(L);
		if (cb_layer_is_moe(c, l))
			for (e = 0; e < c->n_experts; e++)
				b += expert_bytes(&L->experts[e]);
	}
	return b;
}

/*
 * Weight bytes one forward call over @n tokens reads, from its routing
 * trace ([n][n_layers][top_k][2]): each tensor once, each distinct
 * selected expert of a layer once, one embedding row per token.
 */
static double step_bytes(const struct cb_model_config *c, const struct cb_model_weights *w,
			 const uint32_t *trace, uint32_t n)
{
	const struct cb_tensor *head = c->tied_embeddings ? &w->embed : &w->lm_head;
	double b = tbytes(head) + tbytes(&w->final_norm);
	uint32_t l, t, i, k = c->n_experts ? c->top_k : 0;

	b += n * (w->embed.rows ? tbytes(&w->embed) / w->embed.rows : 0);
	for (l = 0; l < c->n_layers; l++) {
		const struct cb_layer_weights *L = &w->layers[l];
		uint64_t seen[CB_MAX_EXPERTS / 64] = { 0 };

		b += layer_bytes(L);
		if (!cb_layer_is_moe(c, l))
			continue;
		for (t = 0; t < n; t++)
			for (i = 0; i < k; i++) {
				uint32_t e = trace[(((size_t)t * c->n_layers + l) * k + i) * 2];

				if (e >= c->n_experts || (seen[e / 64] >> (e % 64) & 1))
					continue;
				seen[e / 64] |= 1ull << (e % 64);
				b += expert_bytes(&L->experts[e]);
			}
	}
	return b;
}

/* Deterministic token ids, spread over the vocabulary. */
static uint32_t tok_at(uint32_t vocab, uint32_t seq, uint32_t i)
{
	uint64_t x = ((uint64_t)seq << 32 | i) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)((x >> 33) % vocab);
}

/* --- in-process backend ------------------------------------------------------ */

static int bench_user(const struct bench_opts *o, const struct cb_model_config *c,
		      const struct cb_model_weights *w, struct bench_result *r)
{
	const struct cb_sample_params greedy = { 0 };
	uint32_t B = (uint32_t)o->batch, P = (uint32_t)o->prompt, G = (uint32_t)o->gen;
	struct cb_engine_params p = {
		.max_batch_tokens = P > B ? P : B,
		.n_seqs = B,
		.max_context = P + G + 1,
		.isa_max_level = (cb_u32)cb_host_isa_cap(),
	};
	uint32_t *tok = NULL, *seq = NULL, *pos = NULL, *trace = NULL, *last = NULL;
	uint32_t tper = c->n_layers * (c->n_experts ? c->top_k : 0) * 2;
	double *t_pre = NULL, *t_step = NULL;
	struct cb_exec *ex = NULL;
	struct cb_engine *e;
	uint8_t *mask = NULL;
	float *logits = NULL;
	void *arena = NULL;
	uint64_t asz;
	uint32_t i, s, rep;
	int ret = -ENOMEM;

	asz = cb_engine_arena_size(c, &p);
	if (!asz) {
		fprintf(stderr, "colibri bench: %s: the engine refuses this batch/context\n",
			o->model);
		return -EINVAL;
	}
	arena = aligned_alloc(64, (asz + 63) & ~63ull);
	tok = calloc(p.max_batch_tokens, 4);
	seq = calloc(p.max_batch_tokens, 4);
	pos = calloc(p.max_batch_tokens, 4);
	last = calloc(B, 4);
	mask = calloc(p.max_batch_tokens, 1);
	trace = calloc((size_t)p.max_batch_tokens * (tper ? tper : 1), 4);
	logits = calloc((size_t)B * c->vocab_size, 4);
	t_pre = calloc(o->reps, sizeof(double));
	t_step = calloc(G, sizeof(double));
	ex = cb_host_exec_create(o->threads);
	if (!arena || !tok || !seq || !pos || !last || !mask || !trace || !logits || !t_pre ||
	    !t_step || !ex) {
		fprintf(stderr, "colibri bench: out of memory\n");
		goto out;
	}
	ret = cb_engine_init(&e, c, w, &p, arena, asz);
	if (ret) {
		fprintf(stderr, "colibri bench: %s: the engine refused the model (%d)\n",
			o->model, ret);
		goto out;
	}
	r->isa = cb_engine_isa_name(e);
	r->threads = ex->nthreads;

	/* Prefill: P tokens of slot s in one pass; slot 0 is timed o->reps times. */
	for (s = 0; s < B; s++) {
		for (rep = 0; rep < (s ? 1u : (uint32_t)o->reps); rep++) {
			struct cb_batch b = {
				.n_tokens = P, .tokens = tok, .seq = seq, .pos = pos,
				.logits_mask = mask, .logits = logits,
			};
			double t0;

			for (i = 0; i < P; i++) {
				tok[i] = tok_at(c->vocab_size, s, i);
				seq[i] = s;
				pos[i] = i;
				mask[i] = i == P - 1;
			}
			t0 = now_s();
			ret = cb_engine_forward(e, ex, &b);
			if (!s)
				t_pre[rep] = now_s() - t0;
			if (ret)
				goto fail;
			ret = cb_engine_sample_ex(e, ex, logits, &greedy, P - 1);
			if (ret < 0)
				goto fail;
			last[s] = (uint32_t)ret;
		}
	}
	r->prefill_s = median(t_pre, o->reps);

	/* Decode: G steps of B tokens, one per slot; step 0 is a warm-up. */
	for (s = 0; s < G; s++) {
		struct cb_batch b = {
			.n_tokens = B, .tokens = tok, .seq = seq, .pos = pos,
			.logits = logits, .route_trace = tper ? trace : NULL,
		};
		double t0 = now_s(), t;

		for (i = 0; i < B; i++) {
			tok[i] = last[i];
			seq[i] = i;
			pos[i] = P + s;
		}
		ret = cb_engine_forward(e, ex, &b);
		if (ret)
			goto fail;
		for (i = 0; i < B; i++) {
			ret = cb_engine_sample_ex(e, ex, logits + (size_t)i * c->vocab_size,
						  &greedy, P + s);
			if (ret < 0)
				goto fail;
			last[i] = (uint32_t)ret;
		}
		t = now_s() - t0;
		t_step[s] = t;
		if (s == 0)
			continue;
		r->decode_s += t;
		r->decode_tokens += B;
		r->steps++;
		r->bytes += step_bytes(c, w, trace, B);
	}
	r->step_med_s = median(t_step + 1, (int)G - 1);
	ret = 0;
	goto out;
fail:
	fprintf(stderr, "colibri bench: forward failed: %d\n", ret);
	if (ret >= 0)
		ret = -EIO;
out:
	cb_host_exec_destroy(ex);
	free(arena);
	free(tok);
	free(seq);
	free(pos);
	free(last);
	free(mask);
	free(trace);
	free(logits);
	free(t_pre);
	free(t_step);
	return ret;
}

/* --- kernel backend ------------------------------------------------------------ */

struct ksess {
	const struct bench_opts *o;
	const struct cb_model_config *c;
	const struct cb_model_weights *w;
	pthread_barrier_t *bar;
	struct colibri_ring *ring;	/* --io uring: the decode thread's */
	int fd, idx, ret;
	uint32_t last, tper;
	uint32_t *trace;
	double *t_req;
	double bytes;
};

static int ksubmit(struct ksess *k, const uint32_t *toks, uint32_t n, uint32_t flags)
{
	struct colibri_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.flags = flags;
	s.tokens = (uintptr_t)toks;
	s.n_tokens = n;
	if (k->tper && (flags & COLIBRI_SUBMIT_TRACE)) {
		s.trace = (uintptr_t)k->trace;
		s.trace_len = n * k->tper;
	} else {
		s.flags &= ~COLIBRI_SUBMIT_TRACE;
	}
	ret = k->ring ? colibri_ring_step(k->ring, k->fd, &s) : colibri_dev_submit(k->fd, &s);
	if (!ret)
		k->last = (uint32_t)s.token;
	return ret;
}

/* One session's decode: G requests of one token, the first a warm-up. */
static void *ksess_decode(void *arg)
{
	struct ksess *k = arg;
	uint32_t s;

	/* A ring serves the thread that made it (IORING_SETUP_SINGLE_ISSUER). */
	if (!strcmp(k->o->io, "uring"))
		k->ret = colibri_ring_create(&k->ring, 4);
	pthread_barrier_wait(k->bar);
	for (s = 0; s < (uint32_t)k->o->gen && !k->ret; s++) {
		uint32_t t = k->last;
		double t0 = now_s();

		k->ret = ksubmit(k, &t, 1, COLIBRI_SUBMIT_TRACE);
		k->t_req[s] = now_s() - t0;
		if (k->ret)
			break;
		if (s)
			k->bytes += step_bytes(k->c, k->w, k->trace, 1);
		if (s == 0)
			pthread_barrier_wait(k->bar);	/* all warm: start the clock */
	}
	if (k->ret && s == 0)
		pthread_barrier_wait(k->bar);	/* the main thread still counts on it */
	if (k->ring)
		colibri_ring_destroy(k->ring);
	k->ring = NULL;
	return NULL;
}

static int bench_kernel(const struct bench_opts *o, struct cbfile *f, struct bench_result *r)
{
	uint32_t B = (uint32_t)o->batch, P = (uint32_t)o->prompt, i, rep;
	struct colibri_model_entry ents[64];
	struct colibri_info info;
	struct ksess *ks = NULL;
	pthread_t *th = NULL;
	pthread_barrier_t bar;
	char name[COLIBRI_NAME_LEN];
	uint32_t *ptok = NULL;
	double *t_pre = NULL, *all = NULL, t0;
	int fd, n, found = 0, ret;

	fd = colibri_dev_open();
	if (fd < 0) {
		fprintf(stderr, "colibri bench: cannot open %s: %s\n", COLIBRI_DEVICE_PATH,
			strerror(-fd));
		return fd;
	}
	if (strlen(o->name ? o->name : f->info.name) >= sizeof(name)) {
		fprintf(stderr, "colibri bench: the model name '%s' is longer than %zu bytes: "
			"give --name\n", o->name ? o->name : f->info.name, sizeof(name) - 1);
		close(fd);
		return -EINVAL;
	}
	memcpy(name, o->name ? o->name : f->info.name,
	       strlen(o->name ? o->name : f->info.name) + 1);
	n = colibri_dev_list(fd, ents, 64);
	for (i = 0; n > 0 && i < (uint32_t)n && i < 64; i++)
		if (!strcmp(ents[i].name, name))
			found = 1;
	if (!found) {
		ret = colibri_dev_load(fd, o->model, name, NULL, NULL);
		if (ret) {
			fprintf(stderr, "colibri bench: cannot load %s into the kernel: %s\n",
				o->model, strerror(-ret));
			close(fd);
			return ret;
		}
	}
	ret = colibri_dev_get_info(fd, &info);
	close(fd);
	if (ret) {
		fprintf(stderr, "colibri bench: GET_INFO failed: %s\n", strerror(-ret));
		return ret;
	}
	r->isa = colibri_isa_name(info.isa_level);
	r->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);	/* the module's worker pool */

	ks = calloc(B, sizeof(*ks));
	th = calloc(B, sizeof(*th));
	ptok = calloc(P, 4);
	t_pre = calloc(o->reps, sizeof(double));
	all = calloc((size_t)B * o->gen, sizeof(double));
	if (!ks || !th || !ptok || !t_pre || !all) {
		ret = -ENOMEM;
		goto out;
	}
	pthread_barrier_init(&bar, NULL, B + 1);
	for (i = 0; i < B; i++) {
		struct ksess *k = &ks[i];
		struct colibri_attach at;

		k->o = o;
		k->c = &f->cfg;
		k->w = &f->w;
		k->bar = &bar;
		k->idx = (int)i;
		k->tper = f->cfg.n_layers * (f->cfg.n_experts ? f->cfg.top_k : 0) * 2;
		k->trace = calloc((size_t)P * (k->tper ? k->tper : 1), 4);
		k->t_req = calloc(o->gen, sizeof(double));
		k->fd = colibri_dev_open();
		if (!k->trace || !k->t_req || k->fd < 0) {
			ret = k->fd < 0 ? k->fd : -ENOMEM;
			goto out;
		}
		/* Pieces of at most 64 tokens: the sessions share the model's engine. */
		ret = colibri_dev_attach(k->fd, name, P + o->gen + 1, P < 64 ? P : 64, &at);
		if (ret) {
			fprintf(stderr, "colibri bench: cannot attach to '%s': %s\n", name,
				strerror(-ret));
			goto out;
		}
		/* Prefill: P tokens in one SUBMIT; session 0 is timed o->reps times. */
		for (rep = 0; rep < (i ? 1u : (uint32_t)o->reps); rep++) {
			uint32_t j;

			for (j = 0; j < P; j++)
				ptok[j] = tok_at(f->cfg.vocab_size, i, j);
			t0 = now_s();
			ret = ksubmit(k, ptok, P, COLIBRI_SUBMIT_RESET);
			if (!i)
				t_pre[rep] = now_s() - t0;
			if (ret) {
				fprintf(stderr, "colibri bench: prefill SUBMIT failed: %s\n",
					strerror(-ret));
				goto out;
			}
		}
	}
	r->prefill_s = median(t_pre, o->reps);

	for (i = 0; i < B; i++)
		pthread_create(&th[i], NULL, ksess_decode, &ks[i]);
	pthread_barrier_wait(&bar);	/* go */
	pthread_barrier_wait(&bar);	/* every session did its warm-up request */
	t0 = now_s();
	for (i = 0; i < B; i++)
		pthread_join(th[i], NULL);
	r->decode_s = now_s() - t0;
	ret = 0;
	for (i = 0; i < B; i++) {
		if (ks[i].ret && !ret) {
			ret = ks[i].ret;
			fprintf(stderr, "colibri bench: decode SUBMIT failed: %s\n",
				strerror(-ret));
		}
		r->bytes += ks[i].bytes;
		memcpy(all + (size_t)i * (o->gen - 1), ks[i].t_req + 1,
		       sizeof(double) * (o->gen - 1));
	}
	r->decode_tokens = (long)B * (o->gen - 1);
	r->steps = r->decode_tokens;
	r->step_med_s = median(all, (int)(B * (o->gen - 1)));
	pthread_barrier_destroy(&bar);
out:
	for (i = 0; ks && i < B; i++) {
		if (ks[i].fd > 0)
			close(ks[i].fd);
		free(ks[i].trace);
		free(ks[i].t_req);
	}
	free(ks);
	free(th);
	free(ptok);
	free(t_pre);
	free(all);
	return ret;
}

/* --- router micro-benchmark ------------------------------------------------------ */

static int bench_router(const struct bench_opts *o)
{
	int n = o->experts, k = o->k, rows = o->rows, rep, i;
	double t[7], tc[7], tr[7], ns, ns_min, ns_cpu, ns_route;
	uint64_t s = 0x1234567, sink = 0;
	cb_u32 ids[CB_MAX_TOP_K];
	float vals[CB_MAX_TOP_K];
	float *lg;
	long it;

	if (n < 1 || n > CB_MAX_EXPERTS || k < 1 || k > n || k > CB_MAX_TOP_K || rows < 1 ||
	    o->iters < 1) {
		fprintf(stderr, "colibri bench --router: need 1 <= k <= min(experts, %d), experts <= %d\n",
			CB_MAX_TOP_K, CB_MAX_EXPERTS);
		return 2;
	}
	lg = aligned_alloc(64, ((size_t)rows * n * 4 + 63) & ~(size_t)63);
	if (!lg)
		return 1;
	/* router logits look roughly normal: sum of 4 uniforms, std ~1.2 */
	for (i = 0; i < rows * n; i++) {
		float v = 0;
		int j;

		for (j = 0; j < 4; j++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			v += (float)(s >> 40) / (float)(1 << 24) - 0.5f;
		}
		lg[i] = v * 2.0f;
	}
	/* warm: code, branch predictors, the rows in cache */
	for (i = 0; i < rows; i++) {
		cb_topk(lg + (size_t)i * n, n, k, ids, vals);
		sink += ids[0];
	}
	for (rep = 0; rep < 7; rep++) {
		double t0 = now_s(), c0 = cpu_s();

		for (it = 0; it < o->iters; it++)
			for (i = 0; i < rows; i++) {
				cb_topk(lg + (size_t)i * n, n, k, ids, vals);
				sink += ids[k - 1];
			}
		t[rep] = (now_s() - t0) * 1e9 / ((double)o->iters * rows);
		tc[rep] = (cpu_s() - c0) * 1e9 / ((double)o->iters * rows);
		c0 = cpu_s();
		for (it = 0; it < o->iters; it++)
			for (i = 0; i < rows; i++) {
				cb_route(lg + (size_t)i * n, n, k, 1, ids, vals);
				sink += ids[0];
			}
		tr[rep] = (cpu_s() - c0) * 1e9 / ((double)o->iters * rows);
	}
	ns = median(t, 7);
	ns_min = t[0];
	ns_cpu = median(tc, 7);
	ns_route = median(tr, 7);
	if (o->json)
		printf("{\"bench\": \"router_topk\", \"experts\": %d, \"k\": %d, \"rows\": %d, "
		       "\"calls\": %ld, \"topk_ns_per_token\": %.2f, \"topk_ns_min\": %.2f, "
		       "\"topk_cpu_ns_per_token\": %.2f, \"route_cpu_ns_per_token\": %.2f, "
		       "\"target_ns\": 50, \"met\": %s, \"sink\": %llu}\n",
		       n, k, rows, o->iters * rows * 7, ns, ns_min, ns_cpu, ns_route,
		       ns_cpu <= 50 ? "true" : "false", (unsigned long long)(sink & 1));
	else
		printf("router top-k, %d experts, k = %d: %.1f ns/token wall, %.1f ns/token CPU time "
		       "(median of 7 x %ld calls; best wall %.1f); full route (top-k + softmax "
		       "weights) %.1f ns/token CPU time\n", n, k, ns, ns_cpu, o->iters * rows, ns_min,
		       ns_route);
	free(lg);
	return 0;
}

/* --- the command ------------------------------------------------------------------- */

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: colibri bench --model M [--backend user|kernel] [--threads N]\n"
		"         [--batch B | --sessions B] [--io ioctl|uring] [--prompt-tokens P]\n"
		"         [--gen-tokens G] [--reps R] [--bw-gib GIB] [--name NAME]\n"
		"         [--hugepages] [--json]\n"
		"       colibri bench --router [--experts 64] [--k 8] [--rows 4096]\n"
		"         [--iters 200] [--json]\n"
		"Prefill: P tokens in one pass (median of R).  Decode: B sequences of\n"
		"G tokens each (the first step is a warm-up).  user: one engine with B\n"
		"slots, one forward per step carrying B tokens.  kernel: B sessions on\n"
		"B threads, each SUBMITting 1 token per step through the ioctl or\n"
		"io_uring (--io); the module batches the sessions' pending requests into\n"
		"one forward pass.  The read bandwidth is measured in the same run\n"
		"with the same thread count over max(1 GiB, 4 x L3) unless --bw-gib.\n"
		"--hugepages (user): run from a copy of the weights in anonymous memory\n"
		"with transparent huge pages, as the kernel's pinned copy is mapped,\n"
		"instead of the file's page-cache mapping (4 KiB pages).\n");
}

static int bench_parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ "threads", required_argument, NULL, 'j' },
		{ "batch", required_argument, NULL, 'B' },
		{ "sessions", required_argument, NULL, 'B' },
		{ "io", required_argument, NULL, 'I' },
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
	int c;

	while ((c = getopt_long(argc, argv, "m:b:j:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'b': o->backend = optarg; break;
		case 'j': o->threads = atoi(optarg); break;
		case 'B': o->batch = atoi(optarg); break;
		case 'P': o->prompt = atoi(optarg); break;
		case 'G': o->gen = atoi(optarg); break;
		case 'R': o->reps = atoi(optarg); break;
		case 'W': o->bw_gib = atof(optarg); break;
		case 'N': o->name = optarg; break;
		case 'I': o->io = optarg; break;
		case 'J': o->json = 1; break;
		case 'U': o->hugepages = 1; break;
		case 'r': o->router = 1; break;
		case 'E': o->experts = atoi(optarg); break;
		case 'k': o->k = atoi(optarg); break;
		case 'w': o->rows = atoi(optarg); break;
		case 'i': o->iters = atol(optarg); break;
		case 'h': bench_usage(stdout); return 1;
		default: bench_usage(stderr); return -1;
		}
	}
	if (optind != argc || (!o->router && !o->model)) {
		bench_usage(stderr);
		return -1;
	}
	if (strcmp(o->backend, "user") && strcmp(o->backend, "kernel")) {
		fprintf(stderr, "colibri bench: --backend is user or kernel\n");
		return -1;
	}
	if (strcmp(o->io, "ioctl") && strcmp(o->io, "uring")) {
		fprintf(stderr, "colibri bench: --io is ioctl or uring\n");
		return -1;
	}
	if (o->batch < 1 || o->batch > 256 || o->prompt < 1 || o->prompt > 4096 ||
	    o->gen < 2 || o->gen > 100000 || o->reps < 1 || o->reps > 100 ||
	    o->bw_gib < 0 || o->bw_gib > 64) {
		fprintf(stderr, "colibri bench: need 1 <= batch <= 256, 1 <= prompt-tokens <= 4096, "
			"gen-tokens >= 2, 1 <= reps <= 100\n");
		return -1;
	}
	return 0;
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

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {
		.backend = "user", .io = "ioctl", .batch = 1, .prompt = 64, .gen = 32, .reps = 3,
		.experts = 64, .k = 8, .rows = 4096, .iters = 200,
	};
	struct bench_result r = { 0 };
	const struct cb_model_config *cfg;
	const struct cb_model_weights *w;
	struct cb_model_config hp_cfg;
	struct cb_model_weights hp_w;
	void *hp_data = NULL, *hp_bind = NULL;
	double la[3] = { 0 }, bw, bw_before, bw_after, bw_bytes, tok_s, pre_tok_s, bpt, ratio;
	char err[512];
	struct cbfile *f;
	int ret, rc = 1;

	ret = bench_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (o.router)
		return bench_router(&o);

	f = cbfile_open(o.model, 0, err, sizeof(err));
	if (!f) {
		fprintf(stderr, "colibri bench: %s\n", err);
		return 1;
	}
	if (o.prompt + o.gen + 1 > (int)(f->cfg.max_context ? f->cfg.max_context : 1u << 30)) {
		fprintf(stderr, "colibri bench: prompt + gen tokens exceed the model's context %u\n",
			f->cfg.max_context);
		rc = 2;
		goto out_f;
	}
	cfg = &f->cfg;
	w = &f->w;
	if (o.hugepages && strcmp(o.backend, "user") == 0) {
		size_t dsz = (f->info.data_size + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
		uint64_t bsz = cb_format_bind_size(&f->info);
		char why[CB_FORMAT_WHY_LEN];

		hp_data = aligned_alloc(2u << 20, dsz ? dsz : (2u << 20));
		hp_bind = aligned_alloc(64, (bsz + 63) & ~63ull);
		if (!hp_data || !hp_bind) {
			fprintf(stderr, "colibri bench: out of memory for a copy of the weights\n");
			goto out_f;
		}
		madvise(hp_data, dsz, MADV_HUGEPAGE);
		memcpy(hp_data, f->map + f->info.data_offset, f->info.data_size);
		if (cb_format_bind(&f->info, f->map, hp_data, f->info.data_size, hp_bind, bsz,
				   &hp_cfg, &hp_w, why, sizeof(why))) {
			fprintf(stderr, "colibri bench: %s: %s\n", o.model, why);
			goto out_f;
		}
		cfg = &hp_cfg;
		w = &hp_w;
	}
	r.model_bytes = model_bytes(cfg, w);

	/*
	 * The yardstick first, with the same thread count, model not yet
	 * touched: over max(1 GiB, 4 x L3), or half the memory available
	 * if that is less (cb_read_bw_fit()), or --bw-gib.
	 */
	bw_bytes = o.bw_gib > 0 ? o.bw_gib * (1u << 30) : (double)cb_read_bw_default();
	bw = cb_measure_read_bw(o.threads, (size_t)bw_bytes);
	if (bw <= 0) {
		fprintf(stderr, "colibri bench: cannot measure the read bandwidth over %.0f MiB: %s%s\n",
			bw_bytes / (1 << 20), strerror((int)-bw),
			o.bw_gib > 0 ? " (give a smaller --bw-gib)" : " (give --bw-gib)");
		goto out_f;
	}

	if (!strcmp(o.backend, "user"))
		ret = bench_user(&o, cfg, w, &r);
	else
		ret = bench_kernel(&o, f, &r);
	if (ret)
		goto out_f;
	/*
	 * Once more after the run: on a shared machine the bandwidth moves
	 * with other tenants' load; the larger of the two is the yardstick
	 * (the conservative ratio), both are reported.
	 */
	bw_after = cb_measure_read_bw(o.threads, (size_t)bw_bytes);
	bw_before = bw;
	if (bw_after > bw)
		bw = bw_after;
	getloadavg(la, 3);

	pre_tok_s = o.prompt / r.prefill_s;
	tok_s = r.decode_tokens / r.decode_s;
	bpt = r.bytes / r.decode_tokens;
	ratio = r.bytes / r.decode_s / bw;
	if (o.json) {
		printf("{\"model\": ");
		json_str(o.model);
		printf(", \"backend\": \"%s\", \"decode_mode\": \"%s\", \"isa\": ", o.backend,
		       !strcmp(o.backend, "user") ? "one forward per step carrying the batch" :
		       !strcmp(o.io, "uring") ?
		       "one session per sequence, one io_uring SUBMIT of 1 token each" :
		       "one session per sequence, one SUBMIT of 1 token each");
		json_str(r.isa ? r.isa : "?");
		printf(", \"threads\": %d, \"batch\": %d, \"prompt_tokens\": %d, \"gen_tokens\": %d, "
		       "\"model_bytes\": %.0f, \"prefill_tok_s\": %.3f, \"decode_tok_s\": %.3f, "
		       "\"decode_step_us\": %.2f, \"weight_bytes_per_token\": %.0f, "
		       "\"weight_bytes_per_step\": %.0f, \"mem_read_gbs\": %.3f, "
		       "\"mem_read_gbs_before\": %.3f, \"mem_read_gbs_after\": %.3f, "
		       "\"mem_read_buffer_mib\": %.0f, \"roofline_ratio\": %.4f, "
		       "\"hugepages\": %s, \"load_avg\": [%.2f, %.2f, %.2f]}\n",
		       r.threads, o.batch, o.prompt, o.gen, r.model_bytes, pre_tok_s, tok_s,
		       r.step_med_s * 1e6, bpt, r.bytes / r.steps, bw / 1e9, bw_before / 1e9,
		       bw_after / 1e9, bw_bytes / (1 << 20), ratio,
		       hp_data ? "true" : "false", la[0], la[1], la[2]);
	} else {
		printf("model %s: %.3f GiB of weights; backend %s, isa %s, %d threads\n",
		       o.model, r.model_bytes / (1u << 30), o.backend, r.isa ? r.isa : "?",
		       r.threads);
		printf("read bandwidth: %.2f GB/s (before %.2f, after the run %.2f; %.0f MiB "
		       "buffer)\n", bw / 1e9, bw_before / 1e9, bw_after / 1e9,
		       bw_bytes / (1 << 20));
		printf("prefill: %d tokens in %.2f ms = %.1f tok/s\n", o.prompt,
		       r.prefill_s * 1e3, pre_tok_s);
		printf("decode: batch %d, %ld tokens in %.3f s = %.2f tok/s (median %s %.2f ms)\n",
		       o.batch, r.decode_tokens, r.decode_s, tok_s,
		       !strcmp(o.backend, "user") ? "step" : "request", r.step_med_s * 1e3);
		printf("weights read: %.1f MiB per step, %.1f MiB per token; %.2f GB/s = "
		       "roofline ratio %.3f\n", r.bytes / r.steps / (1 << 20), bpt / (1 << 20),
		       r.bytes / r.decode_s / 1e9, ratio);
		printf("load average: %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	}
	rc = 0;
out_f:
	cbfile_close(f);
	free(hp_data);
	free(hp_bind);
	return rc;
}
