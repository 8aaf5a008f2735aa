// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_metrics.c - colibri serve's counters and histograms, and their
 * text for /metrics in Prometheus' exposition format 0.0.4.
 *
 * One lock guards every count: a request touches it a handful of times,
 * a scrape once.  The model's own counters (a model in the kernel) are
 * read from sysfs at each scrape, as `colibri stats` reads them, so they
 * count the work of every process on the model, not only this server's.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "serve_metrics.h"
#include "util/util.h"


/* Upper bounds of the time-to-first-token buckets, seconds. */
static const double ttft_le[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30 };
#define N_TTFT (sizeof(ttft_le) / sizeof(ttft_le[0]))

/* The statuses counted by name; the rest as "other".  0: dropped unanswered. */
static const int codes[] = { 200, 400, 401, 404, 405, 413, 429, 500, 503, 0 };
#define N_CODES (sizeof(codes) / sizeof(codes[0]))

static const char *const route_names[ROUTE_COUNT] = {
	"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics",
	"/api/chat", "/api/generate", "/api/info", "/", "/live", "other",
};

struct serve_metrics {
	pthread_mutex_t lock;
	unsigned long long requests[ROUTE_COUNT][N_CODES + 1];
	unsigned long long prompt_tokens, completion_tokens;
	unsigned long long decode_tokens;
	double decode_seconds;
	unsigned long long ttft[N_TTFT + 1];	/* per bucket, not cumulative; [N_TTFT]: +Inf */
	unsigned long long ttft_count;
	double ttft_sum;
	unsigned long long finished_stop, finished_length, cancelled, failed;
	unsigned long long rejected[REJECT_COUNT];
	unsigned long long checked, masked;	/* constrained decoding's steps */
	double checked_seconds, masked_seconds;
	int sessions;
};

double serve_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct serve_metrics *metrics_create(void)
{
	struct serve_metrics *mt = calloc(1, sizeof(*mt));

	if (mt)
		pthread_mutex_init(&mt->lock, NULL);
	return mt;
}

void metrics_destroy(struct serve_metrics *mt)
{
	if (!mt)
		return;
	pthread_mutex_destroy(&mt->lock);
	free(mt);
}

void metrics_request(struct serve_metrics *mt, enum serve_route route, int status)
{
	size_t i;

	for (i = 0; i < N_CODES && codes[i] != status; i++)
		;
	pthread_mutex_lock(&mt->lock);
	mt->requests[route][i]++;
	pthread_mutex_unlock(&mt->lock);
}

void metrics_generation(struct serve_metrics *mt, const struct gen_result *res)
{
	double ttft = res->t_first - res->t_start;
	size_t b;

	pthread_mutex_lock(&mt->lock);
	mt->prompt_tokens += res->prompt_tokens;
	mt->completion_tokens += res->completion_tokens;
	if (res->t_first > 0) {
		for (b = 0; b < N_TTFT && ttft > ttft_le[b]; b++)
			;
		mt->ttft[b]++;
		mt->ttft_count++;
		mt->ttft_sum += ttft;
	}
	/* Decode: the tokens after the first, over the time after it. */
	if (res->completion_tokens > 1 && res->t_end > res->t_first) {
		mt->decode_tokens += res->completion_tokens - 1;
		mt->decode_seconds += res->t_end - res->t_first;
	}
	if (res->err == -ECANCELED)
		mt->cancelled++;
	else if (res->err)
		mt->failed++;
	else if (res->finish && !strcmp(res->finish, "length"))
		mt->finished_length++;
	else
		mt->finished_stop++;
	pthread_mutex_unlock(&mt->lock);
}

void metrics_rejected(struct serve_metrics *mt, enum serve_reject why)
{
	pthread_mutex_lock(&mt->lock);
	mt->rejected[why]++;
	pthread_mutex_unlock(&mt->lock);
}

void metrics_constrained(struct serve_metrics *mt, unsigned long long checked,
			 unsigned long long ns_checked, unsigned long long masked,
			 unsigned long long ns_masked)
{
	pthread_mutex_lock(&mt->lock);
	mt->checked += checked;
	mt->checked_seconds += ns_checked * 1e-9;
	mt->masked += masked;
	mt->masked_seconds += ns_masked * 1e-9;
	pthread_mutex_unlock(&mt->lock);
}

void metrics_sessions(struct serve_metrics *mt, int delta)
{
	pthread_mutex_lock(&mt->lock);
	mt->sessions += delta;
	pthread_mutex_unlock(&mt->lock);
}

int metrics_sessions_now(struct serve_metrics *mt)
{
	int n;

	pthread_mutex_lock(&mt->lock);
	n = mt->sessions;
	pthread_mutex_unlock(&mt->lock);
	return n;
}

/* --- the text ------------------------------------------------------------- */

struct out {
	struct cb_sbuf b;
	int oom;
};

static void __attribute__((format(printf, 2, 3))) put(struct out *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	if (n > 0 && !o->oom && cb_sbuf_add(&o->b, buf, (size_t)n))
		o->oom = 1;
}

static void family(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: sysfs names are plain, but quote what the format wants quoted. */
static const char *label(const char *s, char *buf, size_t cap)
{
	size_t i = 0;

	for (; *s && i + 2 < cap; s++) {
		if (*s == '"' || *s == '\\')
			buf[i++] = '\\';
		buf[i++] = *s == '\n' ? ' ' : *s;
	}
	buf[i] = 0;
	return buf;
}

/* A number in DIR/FILE, or -1. */
long long metrics_sysfs_num(const char *dir, const char *file)
{
	char path[512], line[64], *end;
	long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	errno = 0;
	v = strtoll(line, &end, 10);
	return errno || end == line ? -1 : v;
}

static void sysfs_counter(struct out *o, const char *dir, const char *file, const char *name,
			  const char *type, const char *help, const char *model)
{
	long long v = metrics_sysfs_num(dir, file);

	if (v < 0)
		return;
	family(o, name, type, help);
	put(o, "%s{model=\"%s\"} %lld\n", name, model, v);
}

/* The model's counters in sysfs (a model in the kernel). */
static void render_kernel(struct out *o, const char *name)
{
	static const char *const fails[] = { "failed", "timeouts", "refused" };
	char dir[256], adir[320], sub[640], m[128], a[128];
	long long cpu, off;
	struct dirent *de;
	size_t i;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", SYSFS_MODELS, name);
	label(name, m, sizeof(m));
	sysfs_counter(o, dir, "sessions", "colibri_model_sessions", "gauge",
		      "Sessions attached to the model, of every process.", m);
	sysfs_counter(o, dir, "tokens", "colibri_model_tokens_total", "counter",
		      "Tokens the kernel ran through the model, of every process.", m);
	sysfs_counter(o, dir, "forwards", "colibri_model_forwards_total", "counter",
		      "Forward passes the kernel ran.", m);
	sysfs_counter(o, dir, "batch_max", "colibri_model_batch_max", "gauge",
		      "Most requests one forward pass carried.", m);
	cpu = metrics_sysfs_num(dir, "experts_cpu");
	off = metrics_sysfs_num(dir, "experts_offloaded");
	if (cpu < 0)
		return;
	family(o, "colibri_model_expert_jobs_total", "counter",
	       "Routed-expert jobs completed, by where they ran.");
	put(o, "colibri_model_expert_jobs_total{model=\"%s\",where=\"cpu\"} %lld\n", m, cpu);
	snprintf(adir, sizeof(adir), "%s/accel", dir);
	d = opendir(adir);
	if (!d) {
		if (off >= 0)
			put(o, "colibri_model_expert_jobs_total{model=\"%s\",where=\"offloaded\"} %lld\n",
			    m, off);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", adir, de->d_name);
		label(de->d_name, a, sizeof(a));
		put(o, "colibri_model_expert_jobs_total{model=\"%s\",where=\"%s\"} %lld\n", m, a,
		    metrics_sysfs_num(sub, "jobs"));
		for (i = 0; i < sizeof(fails) / sizeof(fails[0]); i++)
			put(o, "colibri_model_expert_job_problems_total{model=\"%s\",accel=\"%s\",kind=\"%s\"} %lld\n",
			    m, a, fails[i], metrics_sysfs_num(sub, fails[i]));
	}
	closedir(d);
}

static void render_requests(struct out *o, const struct serve_metrics *mt)
{
	size_t r, c;

	family(o, "colibri_serve_requests_total", "counter",
	       "HTTP requests answered, by endpoint and status (0: dropped unanswered).");
	for (r = 0; r < ROUTE_COUNT; r++)
		for (c = 0; c <= N_CODES; c++) {
			if (!mt->requests[r][c])
				continue;
			if (c == N_CODES)
				put(o, "colibri_serve_requests_total{endpoint=\"%s\",code=\"other\"} %llu\n",
				    route_names[r], mt->requests[r][c]);
			else
				put(o, "colibri_serve_requests_total{endpoint=\"%s\",code=\"%d\"} %llu\n",
				    route_names[r], codes[c], mt->requests[r][c]);
		}
}

static void render_generations(struct out *o, const struct serve_metrics *mt)
{
	unsigned long long cum = 0;
	size_t b;

	family(o, "colibri_serve_prompt_tokens_total", "counter", "Prompt tokens of generations.");
	put(o, "colibri_serve_prompt_tokens_total %llu\n", mt->prompt_tokens);
	family(o, "colibri_serve_completion_tokens_total", "counter", "Tokens generated.");
	put(o, "colibri_serve_completion_tokens_total %llu\n", mt->completion_tokens);
	family(o, "colibri_serve_generations_total", "counter",
	       "Generations by how they ended: stop (end of sequence or turn, a stop string), length (max_tokens, the context), cancelled (the client went away), failed.");
	put(o, "colibri_serve_generations_total{finish=\"stop\"} %llu\n", mt->finished_stop);
	put(o, "colibri_serve_generations_total{finish=\"length\"} %llu\n", mt->finished_length);
	put(o, "colibri_serve_generations_total{finish=\"cancelled\"} %llu\n", mt->cancelled);
	put(o, "colibri_serve_generations_total{finish=\"failed\"} %llu\n", mt->failed);
	family(o, "colibri_serve_time_to_first_token_seconds", "histogram",
	       "From the request's arrival to its first token.");
	for (b = 0; b < N_TTFT; b++) {
		cum += mt->ttft[b];
		put(o, "colibri_serve_time_to_first_token_seconds_bucket{le=\"%g\"} %llu\n",
		    ttft_le[b], cum);
	}
	put(o, "colibri_serve_time_to_first_token_seconds_bucket{le=\"+Inf\"} %llu\n",
	    mt->ttft_count);
	put(o, "colibri_serve_time_to_first_token_seconds_sum %.6f\n", mt->ttft_sum);
	put(o, "colibri_serve_time_to_first_token_seconds_count %llu\n", mt->ttft_count);
	family(o, "colibri_serve_decode_tokens_total", "counter",
	       "Tokens generated after each generation's first.");
	put(o, "colibri_serve_decode_tokens_total %llu\n", mt->decode_tokens);
	family(o, "colibri_serve_decode_seconds_total", "counter",
	       "Time spent generating them (per generation, summed).");
	put(o, "colibri_serve_decode_seconds_total %.6f\n", mt->decode_seconds);
	family(o, "colibri_serve_decode_tokens_per_second", "gauge",
	       "Decode speed of one generation, averaged over all so far.");
	put(o, "colibri_serve_decode_tokens_per_second %.3f\n",
	    mt->decode_seconds > 0 ? mt->decode_tokens / mt->decode_seconds : 0.0);
}

void metrics_memory(long long *resident, size_t *heap)
{
	struct mallinfo2 mi = mallinfo2();
	long long pages = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%*s %lld", &pages) != 1)
			pages = -1;
		fclose(f);
	}
	*resident = pages >= 0 ? pages * sysconf(_SC_PAGESIZE) : -1;
	*heap = mi.uordblks + mi.hblkhd;
}

/* The process's memory: resident, and what malloc has handed out (a leak grows it). */
static void render_memory(struct out *o)
{
	long long resident;
	size_t heap;

	metrics_memory(&resident, &heap);
	if (resident >= 0) {
		family(o, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
		put(o, "process_resident_memory_bytes %lld\n", resident);
	}
	family(o, "colibri_serve_heap_bytes", "gauge",
	       "Bytes malloc has handed out and not had back (mallinfo2 uordblks + hblkhd).");
	put(o, "colibri_serve_heap_bytes %zu\n", heap);
}

char *metrics_render(const struct serve *srv, size_t *len)
{
	struct serve_metrics snap, *mt = srv->metrics;
	struct out o = { 0 };
	int i;

	pthread_mutex_lock(&mt->lock);
	snap = *mt;
	pthread_mutex_unlock(&mt->lock);
	render_requests(&o, &snap);
	render_generations(&o, &snap);
	family(&o, "colibri_serve_rejected_total", "counter",
	       "Generation requests turned away at once: busy (429, --max-sessions), device (503, no room in the device).");
	put(&o, "colibri_serve_rejected_total{reason=\"busy\"} %llu\n", snap.rejected[REJECT_BUSY]);
	put(&o, "colibri_serve_rejected_total{reason=\"device\"} %llu\n",
	    snap.rejected[REJECT_DEVICE]);
	family(&o, "colibri_serve_slow_requests_total", "counter",
	       "Connections closed because a request did not arrive whole by its deadline (--request-timeout).");
	put(&o, "colibri_serve_slow_requests_total %llu\n", snap.rejected[REJECT_SLOW]);
	family(&o, "colibri_serve_constrained_checks_total", "counter",
	       "Constrained steps (response_format) whose drawn token the grammar was asked about.");
	put(&o, "colibri_serve_constrained_checks_total %llu\n", snap.checked);
	family(&o, "colibri_serve_constrained_check_seconds_total", "counter",
	       "Time those questions took.");
	put(&o, "colibri_serve_constrained_check_seconds_total %.6f\n", snap.checked_seconds);
	family(&o, "colibri_serve_constrained_masks_total", "counter",
	       "Constrained steps that masked the whole vocabulary (the drawn token was refused).");
	put(&o, "colibri_serve_constrained_masks_total %llu\n", snap.masked);
	family(&o, "colibri_serve_constrained_mask_seconds_total", "counter",
	       "Time those masks took.");
	put(&o, "colibri_serve_constrained_mask_seconds_total %.6f\n", snap.masked_seconds);
	family(&o, "colibri_serve_sessions", "gauge", "Sessions this server has open now.");
	put(&o, "colibri_serve_sessions %d\n", snap.sessions);
	family(&o, "colibri_serve_sessions_max", "gauge", "--max-sessions.");
	put(&o, "colibri_serve_sessions_max %u\n", srv->o.max_sessions);
	render_memory(&o);
	for (i = 0; i < srv->n_all; i++)
		if (srv->all[i].mi->backend == COLIBRI_BACKEND_KERNEL)
			render_kernel(&o, srv->all[i].mi->name);
	if (o.oom) {
		free(o.b.p);
		return NULL;
	}
	*len = o.b.n;
	return o.b.p;
}
