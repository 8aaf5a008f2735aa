// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_live.c - GET /live, the page's live view in server-sent events,
 * and GET /, the page itself (serve_live.h).
 *
 * Each /live connection is a libmicrohttpd response read by callback on
 * its connection's thread: the callback sleeps to the next tick (in
 * steps, so that a stopping server ends it at once), then writes one
 * event.  The routing heat is counted by generations into one table of
 * atomic counters; each connection keeps the counts it last sent and
 * sends the difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "colibri_session.h"
#include "serve.h"
#include "serve_live.h"
#include "serve_metrics.h"
#include "serve_slots.h"
#include "util/util.h"

/* Between two events, and the step a waiting reader looks at the server in. */
#define LIVE_TICK_MS 500
#define LIVE_STEP_MS 50

struct serve_live {
	uint32_t n_layers, n_experts, top_k;
	uint64_t *heat;			/* [layer][expert], __atomic */
	uint64_t tokens;		/* generated, __atomic */
	int watchers;			/* /live connections, __atomic */
};

struct serve_live *live_create(const struct colibri_model_info *mi)
{
	struct serve_live *lv = calloc(1, sizeof(*lv));
	size_t n = (size_t)mi->n_layers * mi->n_experts;

	if (!lv)
		return NULL;
	lv->n_layers = mi->n_layers;
	lv->n_experts = mi->top_k ? mi->n_experts : 0;
	lv->top_k = mi->top_k;
	lv->heat = calloc(n ? n : 1, sizeof(*lv->heat));
	if (!lv->heat) {
		free(lv);
		return NULL;
	}
	return lv;
}

void live_destroy(struct serve_live *lv)
{
	if (!lv)
		return;
	free(lv->heat);
	free(lv);
}

int live_watched(const struct serve_live *lv)
{
	return __atomic_load_n(&lv->watchers, __ATOMIC_RELAXED) > 0;
}

uint32_t live_trace_words(const struct serve_live *lv)
{
	return lv->n_layers * lv->top_k * 2;
}

void live_token(struct serve_live *lv, const uint32_t *trace, uint32_t n)
{
	uint32_t t, l, k, e;
	const uint32_t *w;

	__atomic_add_fetch(&lv->tokens, 1, __ATOMIC_RELAXED);
	if (!trace || !lv->top_k)
		return;
	for (t = 0; t < n; t++)
		for (l = 0; l < lv->n_layers; l++) {
			uint64_t *row = lv->heat + (size_t)l * lv->n_experts;

			w = trace + ((size_t)t * lv->n_layers + l) * lv->top_k * 2;
			for (k = 0; k < lv->top_k; k++) {
				e = w[2 * k];
				if (e < lv->n_experts)	/* a dense layer says 0xffffffff */
					__atomic_add_fetch(&row[e], 1, __ATOMIC_RELAXED);
			}
		}
}

/* One /live connection. */
struct live_conn {
	struct serve *srv;
	uint64_t *sent;			/* the heat counts the last event had */
	uint64_t tokens;
	long long forwards, ktokens;	/* the kernel's, at the last event */
	double t_last;
	int first;
	char *ev;			/* the event being written */
	size_t n, off;
};

/* @j's member @key, a number. */
static void num(cJSON *j, const char *key, double v)
{
	cJSON_AddNumberToObject(j, key, v);
}

/* The next event: "data: {...}\n\n" in lc->ev. */
/*
 * The processes with sessions of the model whose sysfs directory is @dir,
 * from its session_owners ("ID PID UID COMM" a session): a session count
 * per process into @arr, as {"pid", "uid", "name", "sessions"}.
 */
static void add_processes(cJSON *arr, const char *dir)
{
	char path[320], line[128], name[64];
	unsigned long long id;
	const cJSON *p;
	cJSON *q, *o;
	unsigned int uid;
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/session_owners", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %d %u %63[^\n]", &id, &pid, &uid, name) != 4)
			continue;	/* "+N more": past a page */
		o = NULL;
		cJSON_ArrayForEach(q, arr) {
			p = cJSON_GetObjectItemCaseSensitive(q, "pid");
			if (p && p->valuedouble == pid)
				o = q;
		}
		if (o) {
			q = cJSON_GetObjectItemCaseSensitive(o, "sessions");
			cJSON_SetNumberValue(q, q->valuedouble + 1);
			continue;
		}
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			break;
		}
		num(o, "pid", pid);
		num(o, "uid", uid);
		cJSON_AddStringToObject(o, "name", name);
		num(o, "sessions", 1);
	}
	fclose(f);
}

static int snapshot(struct live_conn *lc)
{
	struct serve *srv = lc->srv;
	struct serve_live *lv = srv->live;
	double now = serve_now(), dt = lc->first ? 0 : now - lc->t_last;
	uint64_t tokens = __atomic_load_n(&lv->tokens, __ATOMIC_RELAXED), h;
	cJSON *j = cJSON_CreateObject(), *heat, *row, *k;
	long long rss, fw, kt;
	char dir[256], *text;
	size_t heap;
	uint32_t l, e;

	if (!j)
		return -1;
	cJSON_AddStringToObject(j, "model", srv->name);
	k = cJSON_AddArrayToObject(j, "models");
	for (l = 0; k && l < (uint32_t)srv->n_all; l++)
		cJSON_AddItemToArray(k, cJSON_CreateString(srv->all[l].name));
	cJSON_AddStringToObject(j, "backend", srv->mi->backend == COLIBRI_BACKEND_KERNEL ?
				"kernel" : "user");
	num(j, "layers", lv->n_layers);
	num(j, "experts", lv->n_experts);
	num(j, "top_k", lv->top_k);
	num(j, "requests", slots_in_use(srv->slots));
	num(j, "sessions", metrics_sessions_now(srv->metrics));
	num(j, "max_sessions", srv->o.max_sessions);
	num(j, "tokens", (double)tokens);
	num(j, "tokens_per_s", dt > 0 ? (double)(tokens - lc->tokens) / dt : 0);
	metrics_memory(&rss, &heap);
	num(j, "resident_bytes", (double)rss);
	num(j, "heap_bytes", (double)heap);
	if (srv->mi->backend == COLIBRI_BACKEND_KERNEL) {
		snprintf(dir, sizeof(dir), "%s/%s", SYSFS_MODELS, srv->mi->name);
		k = cJSON_AddObjectToObject(j, "kernel");
		fw = metrics_sysfs_num(dir, "forwards");
		kt = metrics_sysfs_num(dir, "tokens");
		num(k, "sessions", (double)metrics_sysfs_num(dir, "sessions"));
		num(k, "forwards", (double)fw);
		num(k, "tokens", (double)kt);
		num(k, "batch_max", (double)metrics_sysfs_num(dir, "batch_max"));
		add_processes(cJSON_AddArrayToObject(k, "processes"), dir);
		/* the mean batch of the passes since the last event */
		num(k, "batch_mean", !lc->first && fw > lc->forwards ?
		    (double)(kt - lc->ktokens) / (double)(fw - lc->forwards) : 0);
		lc->forwards = fw;
		lc->ktokens = kt;
	}
	heat = cJSON_AddArrayToObject(j, "heat");
	for (l = 0; l < lv->n_layers && lv->n_experts; l++) {
		const uint64_t *now_l = lv->heat + (size_t)l * lv->n_experts;
		uint64_t *sent_l = lc->sent + (size_t)l * lv->n_experts;

		row = cJSON_CreateArray();
		cJSON_AddItemToArray(heat, row);
		for (e = 0; e < lv->n_experts; e++) {
			h = __atomic_load_n(&now_l[e], __ATOMIC_RELAXED);
			cJSON_AddItemToArray(row, cJSON_CreateNumber(lc->first ? 0 :
								     (double)(h - sent_l[e])));
			sent_l[e] = h;
		}
	}
	lc->tokens = tokens;
	lc->t_last = now;
	lc->first = 0;
	text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!text)
		return -1;
	free(lc->ev);
	lc->n = strlen(text) + 8;
	lc->ev = malloc(lc->n + 1);
	if (lc->ev)
		snprintf(lc->ev, lc->n + 1, "data: %s\n\n", text);
	free(text);
	lc->off = 0;
	return lc->ev ? 0 : -1;
}

static ssize_t live_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct live_conn *lc = cls;
	struct timespec ts = { 0, LIVE_STEP_MS * 1000000L };
	size_t n;
	int i;

	(void)pos;
	if (lc->off == lc->n) {
		/* the first event at once, the others a tick apart */
		for (i = 0; !lc->first && i < LIVE_TICK_MS / LIVE_STEP_MS; i++) {
			if (__atomic_load_n(&lc->srv->stopping, __ATOMIC_ACQUIRE))
				return MHD_CONTENT_READER_END_OF_STREAM;
			nanosleep(&ts, NULL);
		}
		if (__atomic_load_n(&lc->srv->stopping, __ATOMIC_ACQUIRE) || snapshot(lc))
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = lc->n - lc->off < max ? lc->n - lc->off : max;
	memcpy(buf, lc->ev + lc->off, n);
	lc->off += n;
	return (ssize_t)n;
}

static void live_free(void *cls)
{
	struct live_conn *lc = cls;

	__atomic_sub_fetch(&lc->srv->live->watchers, 1, __ATOMIC_RELAXED);
	free(lc->sent);
	free(lc->ev);
	free(lc);
}

struct MHD_Response *live_response(struct serve *srv)
{
	struct serve_live *lv = srv->live;
	struct live_conn *lc = calloc(1, sizeof(*lc));
	struct MHD_Response *r;

	if (!lc)
		return NULL;
	lc->srv = srv;
	lc->first = 1;
	lc->sent = calloc((size_t)lv->n_layers * lv->n_experts + 1, sizeof(*lc->sent));
	if (!lc->sent) {
		free(lc);
		return NULL;
	}
	__atomic_add_fetch(&lv->watchers, 1, __ATOMIC_RELAXED);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, live_read, lc, live_free);
	if (!r) {
		live_free(lc);
		return NULL;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	return r;
}

struct MHD_Response *page_response(void)
{
	struct MHD_Response *r;

	r = MHD_create_response_from_buffer((size_t)(serve_page_end - serve_page),
					    (void *)serve_page, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return NULL;
	MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	return r;
}
