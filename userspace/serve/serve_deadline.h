/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_deadline.h - a deadline on each request's arrival, so that a client
 * sending its headers or body a byte at a time cannot hold a connection
 * (and the thread libmicrohttpd gives it) for ever.  libmicrohttpd's own
 * timeout is an idle one: every byte restarts it.
 *
 * A connection must deliver a whole request (headers and body):
 *   - the first within @first seconds of its accept (--request-timeout);
 *   - each later one (keep-alive) within @idle seconds of the previous
 *     answer's end (the idle timeout, counted from the answer rather than
 *     from the last byte).
 * Once a request is in, its answer takes as long as it takes (a stream may
 * run for minutes).  A connection past its deadline is shut down
 * (shutdown(2)): its thread sees the end of the stream and closes it as
 * for any client that went away.  One watchdog thread checks every 250 ms.
 * Every function may be called from any thread.
 */
#ifndef COLIBRI_SERVE_DEADLINE_H
#define COLIBRI_SERVE_DEADLINE_H

struct deadlines;
struct deadline_conn;

/*
 * deadlines_create() - the watchdog; @on_expired (may be NULL) is called
 * with @arg, from its thread, for each connection it shuts down.
 * Return: 0, or -1 (out of memory or threads).
 */
int deadlines_create(struct deadlines **out, double first, double idle,
		     void (*on_expired)(void *arg), void *arg);
/* Stops the watchdog; every connection must be closed already. */
void deadlines_destroy(struct deadlines *d);

/* A connection accepted on socket @fd: NULL when memory runs out (no deadline). */
struct deadline_conn *deadlines_open(struct deadlines *d, int fd);
/* Its socket is about to be closed: forget it (@c may be NULL). */
void deadlines_close(struct deadlines *d, struct deadline_conn *c);
/* Its request is all in: no deadline while the answer is made and sent. */
void deadlines_arrived(struct deadlines *d, struct deadline_conn *c);
/* Its request ended: the next one on the connection is due within @idle. */
void deadlines_next(struct deadlines *d, struct deadline_conn *c);

#endif /* COLIBRI_SERVE_DEADLINE_H */
