/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_live.h - what the page at / shows live (docs/serve.md, "The
 * page"): GET /live, server-sent events twice a second, each a JSON
 * snapshot of the server and its model -- requests, sessions (this
 * server's and, in the kernel, every process's), tokens a second, the
 * kernel's forward passes and their mean batch, memory, and the routing
 * heat: how often each expert of each layer was chosen since the last
 * event, from the routing trace of the passes this server ran.
 *
 * The traces are asked for only while a page watches (live_watched()), so
 * a server nobody looks at pays nothing.
 */
#ifndef COLIBRI_SERVE_LIVE_H
#define COLIBRI_SERVE_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct serve;
struct serve_live;
struct colibri_model_info;
struct MHD_Response;

struct serve_live *live_create(const struct colibri_model_info *mi);
void live_destroy(struct serve_live *lv);
/* 1 while a page watches: generations then hand their routing traces over. */
int live_watched(const struct serve_live *lv);
/*
 * A token generated; with @trace (NULL: none), the routing of the @n
 * tokens of the pass that made it (n_layers * top_k * 2 words each) counted.
 */
void live_token(struct serve_live *lv, const uint32_t *trace, uint32_t n);
/* Words of trace per token (0: a dense model, no trace). */
uint32_t live_trace_words(const struct serve_live *lv);

/* GET /live: the response of server-sent events (NULL: out of memory). */
struct MHD_Response *live_response(struct serve *srv);
/* The page, in the binary (serve_page.c): serve_page_end - serve_page bytes. */
extern const char serve_page[], serve_page_end[];

/* GET /: the page (NULL: out of memory). */
struct MHD_Response *page_response(void);

#endif /* COLIBRI_SERVE_LIVE_H */
