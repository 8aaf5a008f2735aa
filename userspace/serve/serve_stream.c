// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_stream.c - "stream": true, as server-sent events.
 *
 * libcolibri's generation pushes tokens (on_token()); libmicrohttpd pulls
 * a response body (a content reader it calls whenever the socket can take
 * more).  Between them, a stream runs the generation on a thread of its
 * own and hands each chunk ("data: {...}\n\n") through a bounded queue to
 * the connection's thread, which blocks in the reader until a chunk or
 * the end comes (blocking there is what the thread-per-connection mode
 * allows).  A client that reads slowly fills the queue and the generation
 * waits for it; one that goes away is seen either by the hang-up watcher
 * (serve_slots.c) or by libmicrohttpd when a write fails (then
 * stream_finish() comes): both mark the stream gone and cancel the
 * session, the generation ends within one forward pass, its thread
 * closes the session at once, and the reader ends the response.
 *
 * Lifetime: the stream belongs to its request; stream_finish(), from the
 * request's completion, waits for the thread and frees it.  The session
 * and the admission slot are the thread's: it closes the session (->s is
 * cleared under ->lock first, so a late cancel never touches a closed
 * session) and puts the slot back (with its watch) as soon as the
 * generation ends, before the last chunks go out.
 */
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_metrics.h"
#include "serve_ollama.h"
#include "serve_slots.h"
#include "util/util.h"

/* Queued bytes past which the generation waits for the client. */
#define QUEUE_MAX	(64u << 10)

struct stream {
	struct serve *srv;
	struct gen_req r;		/* the request, moved in */
	struct resp_head h;
	unsigned int n_calls;		/* tool calls begun */
	int slot;
	pthread_t th;

	pthread_mutex_t lock;		/* protects what follows */
	pthread_cond_t cond;
	struct colibri_session *s;	/* NULL once the thread closed it */
	struct cb_sbuf q;		/* SSE bytes not yet read */
	size_t off;			/* of them, read already */
	int done;			/* the generation ended, all it says is queued */
	int gone;			/* the client left: queue nothing more */
	int shutdown;			/* the server is stopping: end with an error event */
	struct gen_answer calls;	/* Ollama's: the tool calls, sent before the end */
	struct gen_result res;
};

/* Queue @a then @b then @c; -1 when the client is gone (nothing queued). */
static int queue_put(struct stream *st, const char *a, const char *b, const char *c)
{
	size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	while (!st->gone && st->q.n - st->off && st->q.n - st->off + na + nb + nc > QUEUE_MAX)
		pthread_cond_wait(&st->cond, &st->lock);
	if (st->gone) {
		ret = -1;
	} else if (cb_sbuf_add(&st->q, a, na) || cb_sbuf_add(&st->q, b, nb) ||
		   cb_sbuf_add(&st->q, c, nc)) {
		ret = -1;	/* out of memory: end the stream as if the client left */
		st->gone = 1;
	}
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static int queue_event(struct stream *st, char *json)
{
	int ret;

	if (!json)
		return -1;
	ret = queue_put(st, "data: ", json, "\n\n");
	free(json);
	return ret;
}

/* An Ollama stream's line (NDJSON: an object, then a newline). */
static int queue_line(struct stream *st, char *json)
{
	int ret;

	if (!json)
		return -1;
	ret = queue_put(st, "", json, "\n");
	free(json);
	return ret;
}

/* The sink of the generation: each piece of text is a chunk. */
static int stream_text(void *arg, enum text_part part, const char *s, size_t n)
{
	struct stream *st = arg;
	int u = st->r.include_usage ? 0 : -1;
	char id[32];

	if (st->r.api != API_OPENAI) {
		/* Ollama sends a call whole, its arguments an object: held to the end */
		if (part == PART_TOOL_NAME || part == PART_TOOL_ARGS)
			return answer_add(&st->calls, part, s, n) ? -1 : 0;
		return queue_line(st, ollama_chunk(st->srv, &st->r, part, s, n));
	}

	if (part == PART_CONTENT)
		return queue_event(st, resp_chunk(&st->h, st->r.kind, 0, s, n, NULL, u, NULL));
	if (part == PART_TOOL_NAME) {
		resp_call_id(id);
		return queue_event(st, resp_chunk_part(&st->h, part, s, n, st->n_calls++, id, u));
	}
	/* tool-call arguments belong to the last call begun */
	return queue_event(st, resp_chunk_part(&st->h, part, s, n,
					       st->n_calls ? st->n_calls - 1 : 0, NULL, u));
}

/* Ollama's end: the calls, then the last line with the counts; or the error. */
static void queue_end_ollama(struct stream *st)
{
	const struct gen_result *res = &st->res;

	if (res->err == -ECANCELED && !st->shutdown)
		return;	/* the client is gone */
	if (res->err) {
		queue_line(st, ollama_error(res->err == -ECANCELED ? SERVE_CUT_SHORT : res->msg));
		return;
	}
	if (st->calls.n_calls && queue_line(st, ollama_calls_chunk(st->srv, &st->r, &st->calls)))
		return;
	queue_line(st, ollama_done(st->srv, &st->r, res));
}

/* The end: the finish reason, the usage if asked, [DONE]; or the error. */
static void queue_end(struct stream *st)
{
	const struct gen_result *res = &st->res;
	int u = st->r.include_usage ? 0 : -1;
	struct api_error e;

	if (st->r.api != API_OPENAI) {
		queue_end_ollama(st);
		return;
	}

	if (res->err == -ECANCELED && !st->shutdown)
		return;	/* the client is gone */
	if (res->err == -ECANCELED) {
		/* what was generated ends, then why (finish_reason "abort", as vLLM's) */
		api_error_set(&e, 503, "server_error", NULL, "server_shutdown", SERVE_CUT_SHORT);
		if (queue_event(st, resp_chunk(&st->h, st->r.kind, 0,
					       st->r.kind == GEN_CHAT ? NULL : "", 0, "abort",
					       u, res)) ||
		    (st->r.include_usage &&
		     queue_event(st, resp_chunk(&st->h, st->r.kind, 0, NULL, 0, NULL, 1, res))) ||
		    queue_event(st, resp_error(&e)))
			return;
	} else if (res->err) {
		api_error_set(&e, 500, "server_error", NULL, NULL, "%s", res->msg);
		if (queue_event(st, resp_error(&e)))
			return;
	} else {
		if (queue_event(st, resp_chunk(&st->h, st->r.kind, 0,
					       st->r.kind == GEN_CHAT ? NULL : "", 0, res->finish,
					       u, res)))
			return;
		if (st->r.include_usage &&
		    queue_event(st, resp_chunk(&st->h, st->r.kind, 0, NULL, 0, NULL, 1, res)))
			return;
	}
	queue_put(st, "data: [DONE]", "", "\n\n");
}

static void *stream_main(void *arg)
{
	struct stream *st = arg;
	struct gen_sink sink = { .text = stream_text, .arg = st };
	struct colibri_session *s = st->s;

	/* OpenAI's chat streams open with the role. */
	if (st->r.kind == GEN_CHAT && st->r.api == API_OPENAI &&
	    queue_event(st, resp_chunk(&st->h, GEN_CHAT, 1, "", 0, NULL,
				       st->r.include_usage ? 0 : -1, NULL))) {
		st->res.err = -ECANCELED;
		snprintf(st->res.msg, sizeof(st->res.msg), "the client went away");
		st->res.t_end = serve_now();
	} else {
		gen_run(st->srv, s, &st->r, &sink, &st->res);
	}
	pthread_mutex_lock(&st->lock);
	st->s = NULL;
	pthread_mutex_unlock(&st->lock);
	gen_close(st->srv, s);
	/*
	 * The generation is over: its slot is free before the client reads the
	 * end, so that the client's next request finds it free.
	 */
	slots_put(st->srv->slots, st->slot);
	queue_end(st);
	pthread_mutex_lock(&st->lock);
	st->done = 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

/* Stop the generation: the client left, or (@gone 0) the server is stopping. */
static void stream_cancel(struct stream *st, int gone)
{
	pthread_mutex_lock(&st->lock);
	if (gone)
		st->gone = 1;
	else
		st->shutdown = 1;
	if (st->s)
		colibri_session_cancel(st->s);
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

/*
 * The watcher's call: the client hung up, or serve_http_stop() cancels
 * every request; then the client is still there to read how it ended.
 */
static void stream_gone(void *arg)
{
	struct stream *st = arg;

	stream_cancel(st, !__atomic_load_n(&st->srv->stopping, __ATOMIC_ACQUIRE));
}

/* libmicrohttpd's content reader: the next bytes, waiting for them. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	ssize_t ret;
	size_t k;

	pthread_mutex_lock(&st->lock);
	while (!st->gone && st->q.n == st->off && !st->done)
		pthread_cond_wait(&st->cond, &st->lock);
	if (st->gone) {
		ret = MHD_CONTENT_READER_END_WITH_ERROR;
	} else if (st->q.n > st->off) {
		k = st->q.n - st->off < max ? st->q.n - st->off : max;
		memcpy(buf, st->q.p + st->off, k);
		st->off += k;
		if (st->off == st->q.n)
			st->q.n = st->off = 0;
		pthread_cond_broadcast(&st->cond);
		ret = (ssize_t)k;
	} else {
		ret = MHD_CONTENT_READER_END_OF_STREAM;
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}

static void stream_free(struct stream *st)
{
	gen_req_release(&st->r);
	answer_release(&st->calls);
	free(st->q.p);
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

int stream_start(struct serve *srv, struct gen_req *r, struct colibri_session *s, int *slot,
		 int fd, double t_start, struct stream **out, struct MHD_Response **resp,
		 struct api_error *e)
{
	struct stream *st = calloc(1, sizeof(*st));

	*out = NULL;
	*resp = NULL;
	if (!st) {
		gen_close(srv, s);
		api_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
		return -1;
	}
	st->srv = srv;
	st->r = *r;
	memset(r, 0, sizeof(*r));	/* the stream owns its contents now */
	st->s = s;
	st->slot = *slot;
	st->res.t_start = t_start;
	resp_head_init(&st->h, st->r.kind, srv->name);
	st->h.tok = srv->tok;
	st->h.lp = st->r.lp;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->cond, NULL);
	*resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, NULL);
	if (!*resp)
		goto err;
	MHD_add_response_header(*resp, "Content-Type", st->r.api == API_OPENAI ?
				"text/event-stream" : "application/x-ndjson");
	MHD_add_response_header(*resp, "Cache-Control", "no-cache");
	/* A hang-up from now on cancels it (a watch that fails: MHD's write errors still do). */
	slots_watch(srv->slots, st->slot, fd, stream_gone, st);
	if (pthread_create(&st->th, NULL, stream_main, st)) {
		slots_unwatch(srv->slots, st->slot);
		MHD_destroy_response(*resp);
		*resp = NULL;
		goto err;
	}
	*slot = -1;	/* the stream's now: its thread puts it back */
	*out = st;
	return 0;
err:
	gen_close(srv, s);
	stream_free(st);
	api_error_set(e, 500, "server_error", NULL, NULL, "cannot start the stream");
	return -1;
}

void stream_finish(struct stream *st, struct gen_result *res)
{
	/*
	 * The slot (and its watch) is the thread's to put back; once joined,
	 * the watcher holds no pointer to the stream.
	 */
	stream_cancel(st, 1);	/* a no-op for a stream that was read to its end */
	pthread_join(st->th, NULL);
	*res = st->res;
	stream_free(st);
}
