/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_slots.h - admission and hang-up watching for colibri serve.
 *
 * A slot is one request allowed to generate: --max-sessions of them, taken
 * when a generation request arrives (none free: 429 at once, nothing is
 * queued) and put back when the request is done.
 *
 * While a slot's generation runs, its client's socket is watched by one
 * thread (epoll, EPOLLRDHUP): when the client closes the connection or it
 * breaks, the slot's gone() is called, once, on the watcher thread, and
 * cancels the generation, which then ends within one forward pass and
 * closes its session.  gone() runs under the slots' lock: it must not
 * call back into this file, and it may take locks that are never held
 * around a call into it.
 */
#ifndef COLIBRI_SERVE_SLOTS_H
#define COLIBRI_SERVE_SLOTS_H

struct serve_slots;

/* @n slots and the watcher thread: 0, or -errno. */
int slots_create(struct serve_slots **out, unsigned int n);
/* Stops the watcher; every slot must have been put back. */
void slots_destroy(struct serve_slots *sl);

/*
 * The longest slots_take() waits for a slot whose client hung up.  Its
 * generation ends within one forward pass, but how long that is depends on
 * the machine: in a guest emulated on a busy host, with 8 sessions of the
 * demo model, a first token has taken 18 s, and a 10 s bound here turned
 * a client that abandoned a stream and at once asked again away with a
 * 429 (make check, 2026-12-07).  So the wait lasts while the asker's
 * client is there, and this bounds only a generation that never ends.
 */
#define SLOTS_LEAVE_WAIT_S	120

/**
 * struct slots_miss - why slots_take() found no slot, for the server's log.
 * @waited: seconds it waited for slots being cancelled.
 * @leaving: slots still being cancelled when it gave up.
 * @unwatched: slots taken by requests not generating yet (reading their
 *	body, opening their session) or done and not yet put back.
 */
struct slots_miss {
	double waited;
	unsigned int leaving;
	unsigned int unwatched;
};

/*
 * A free slot's index, or -1 when all are taken by requests whose clients
 * are still there (at once: it waits only for one being cancelled, and
 * only while the peer of @fd, the asking connection, has not hung up; -1:
 * no such check); then @miss (if not NULL) says what it saw.
 */
int slots_take(struct serve_slots *sl, int fd, struct slots_miss *miss);
void slots_put(struct serve_slots *sl, int i);
/* Slots taken now: requests generating, or on their way to (reading their body). */
unsigned int slots_in_use(struct serve_slots *sl);

/*
 * Watch @fd for slot @i: gone(@arg) when its peer hangs up.  A peer that
 * has already hung up is seen at once.  0, or -errno (not watched).
 */
int slots_watch(struct serve_slots *sl, int i, int fd, void (*gone)(void *arg), void *arg);
/* No more watching for slot @i: when it returns, gone() is not running and never will. */
void slots_unwatch(struct serve_slots *sl, int i);
/* gone() of every slot being watched, and of every watch from now on (the server is stopping). */
void slots_cancel_all(struct serve_slots *sl);

#endif /* COLIBRI_SERVE_SLOTS_H */
