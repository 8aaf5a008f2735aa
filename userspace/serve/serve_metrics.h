/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_metrics.h - what colibri serve counts, and /metrics, the counts in
 * Prometheus' text format (docs/serve.md lists them).  Every function may
 * be called from any thread.
 */
#ifndef COLIBRI_SERVE_METRICS_H
#define COLIBRI_SERVE_METRICS_H

#include <stddef.h>

struct serve;
struct serve_metrics;
struct gen_result;

/* The endpoints requests are counted by. */
enum serve_route {
	ROUTE_CHAT,		/* POST /v1/chat/completions */
	ROUTE_COMPLETIONS,	/* POST /v1/completions */
	ROUTE_MODELS,		/* GET /v1/models, /v1/models/ID */
	ROUTE_HEALTH,		/* GET /health */
	ROUTE_METRICS,		/* GET /metrics */
	ROUTE_OLLAMA_CHAT,	/* POST /api/chat */
	ROUTE_OLLAMA_GENERATE,	/* POST /api/generate */
	ROUTE_OLLAMA_INFO,	/* GET /api/tags, /api/version, POST /api/show */
	ROUTE_PAGE,		/* GET / */
	ROUTE_LIVE,		/* GET /live */
	ROUTE_OTHER,		/* anything else (404, 405) */
	ROUTE_COUNT,
};

/* Why a request was turned away: a generation at once, or a slow one's connection. */
enum serve_reject {
	REJECT_BUSY,		/* --max-sessions requests were generating: 429 */
	REJECT_DEVICE,		/* the device had no room for a session: 503 */
	REJECT_SLOW,		/* not in whole by its deadline: connection closed */
	REJECT_COUNT,
};

/* Monotonic seconds. */
double serve_now(void);

struct serve_metrics *metrics_create(void);
void metrics_destroy(struct serve_metrics *mt);

/* A request answered with HTTP @status (0: dropped, no answer sent). */
void metrics_request(struct serve_metrics *mt, enum serve_route route, int status);
/* A generation that ran: tokens, time to first token, decode speed, why it ended. */
void metrics_generation(struct serve_metrics *mt, const struct gen_result *res);
void metrics_rejected(struct serve_metrics *mt, enum serve_reject why);
/* A constrained generation's steps: checks and whole masks, and their time. */
void metrics_constrained(struct serve_metrics *mt, unsigned long long checked,
			 unsigned long long ns_checked, unsigned long long masked,
			 unsigned long long ns_masked);
/* Sessions opened (+1) and closed (-1). */
void metrics_sessions(struct serve_metrics *mt, int delta);
/* Sessions open now. */
int metrics_sessions_now(struct serve_metrics *mt);
/* The process's resident memory (-1: unknown) and what malloc has handed out. */
void metrics_memory(long long *resident, size_t *heap);
/* Where the kernel shows a model's counters (NAME/sessions, ...). */
#define SYSFS_MODELS "/sys/kernel/colibri/models"
/* A number in DIR/FILE (sysfs), or -1. */
long long metrics_sysfs_num(const char *dir, const char *file);

/*
 * The text of /metrics (malloc'ed, *@len bytes): the server's counts, and
 * for a model in the kernel the model's counters in sysfs
 * (/sys/kernel/colibri/models/NAME/: tokens, forward passes, the largest
 * batch, sessions of every process, expert jobs on the CPU and on each
 * accelerator).  NULL when memory runs out.
 */
char *metrics_render(const struct serve *srv, size_t *len);

#endif /* COLIBRI_SERVE_METRICS_H */
