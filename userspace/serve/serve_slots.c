// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_slots.c - admission slots, and the thread that sees clients hang
 * up (serve_slots.h).
 *
 * Why a watcher: a request's thread is inside libcolibri while its
 * generation runs (a prefill, a kernel SUBMIT, its turn on the in-process
 * pool), and libmicrohttpd only notices a closed connection when it next
 * writes to it: never, for a plain answer, until it is all made.  So the
 * sockets of running generations sit in one epoll set, waiting for
 * EPOLLRDHUP (the client closed its side: curl's Ctrl-C, a client's
 * abort(), a timeout) and EPOLLHUP/EPOLLERR (a reset), without EPOLLIN:
 * pipelined requests that the client may send meanwhile do not wake it.
 *
 * An event carries the slot and the generation of its watch, so an event
 * of a watch that ended (the slot was unwatched, and maybe reused, between
 * epoll_wait() and the lock) is recognised and dropped.
 *
 * A client that abandons a request and at once sends another (a new
 * connection) must not find the server full of its own abandoned request:
 * when no slot is free, slots_take() looks at the watched sockets itself
 * (the watcher thread may not have run yet), cancels those whose client
 * hung up, and waits for such a "leaving" slot to be put back (one forward
 * pass) rather than answer 429, for as long as its own client is there
 * (SLOTS_LEAVE_WAIT_S at most).  With no slot leaving, 429 comes at once.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "serve_slots.h"

struct slot {
	int used;
	int leaving;			/* its client hung up; it is being cancelled */
	uint32_t gen;			/* of the current watch */
	int fd;				/* watched, or -1 */
	void (*gone)(void *arg);	/* NULL: not watched, or already called */
	void *arg;
};

struct serve_slots {
	pthread_mutex_t lock;		/* protects everything below */
	pthread_cond_t freed;		/* a slot was put back */
	struct slot *v;
	unsigned int n;
	int epfd, stopfd;
	int stopping;			/* slots_cancel_all() came: cancel new watches at once */
	pthread_t th;
};

#define STOP_KEY UINT64_MAX

static void unwatch_locked(struct serve_slots *sl, struct slot *s)
{
	/* The fd may be closed already (epoll then dropped it itself). */
	if (s->fd >= 0)
		epoll_ctl(sl->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	s->fd = -1;
	s->gone = NULL;
	s->arg = NULL;
}

static void fire_locked(struct serve_slots *sl, struct slot *s)
{
	void (*gone)(void *arg) = s->gone;
	void *arg = s->arg;

	unwatch_locked(sl, s);
	if (gone) {
		s->leaving = 1;
		gone(arg);
	}
}

static void *watcher(void *arg)
{
	struct serve_slots *sl = arg;
	struct epoll_event ev[32];
	int n, i, stop = 0;

	while (!stop) {
		n = epoll_wait(sl->epfd, ev, 32, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		pthread_mutex_lock(&sl->lock);
		for (i = 0; i < n; i++) {
			uint64_t key = ev[i].data.u64;
			uint32_t idx = (uint32_t)key, gen = (uint32_t)(key >> 32);

			if (key == STOP_KEY) {
				stop = 1;
				continue;
			}
			if (idx < sl->n && sl->v[idx].used && sl->v[idx].gen == gen &&
			    sl->v[idx].gone)
				fire_locked(sl, &sl->v[idx]);
		}
		pthread_mutex_unlock(&sl->lock);
	}
	return NULL;
}

int slots_create(struct serve_slots **out, unsigned int n)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = STOP_KEY };
	struct serve_slots *sl = calloc(1, sizeof(*sl));
	unsigned int i;
	int ret = -ENOMEM;

	*out = NULL;
	if (!sl)
		return -ENOMEM;
	sl->v = calloc(n, sizeof(*sl->v));
	sl->n = n;
	sl->epfd = epoll_create1(EPOLL_CLOEXEC);
	sl->stopfd = eventfd(0, EFD_CLOEXEC);
	if (!sl->v)
		goto err;
	if (sl->epfd < 0 || sl->stopfd < 0 || epoll_ctl(sl->epfd, EPOLL_CTL_ADD, sl->stopfd, &ev)) {
		ret = -errno;
		goto err;
	}
	for (i = 0; i < n; i++)
		sl->v[i].fd = -1;
	pthread_mutex_init(&sl->lock, NULL);
	pthread_cond_init(&sl->freed, NULL);
	ret = -pthread_create(&sl->th, NULL, watcher, sl);
	if (ret) {
		pthread_cond_destroy(&sl->freed);
		pthread_mutex_destroy(&sl->lock);
		goto err;
	}
	*out = sl;
	return 0;
err:
	if (sl->epfd >= 0)
		close(sl->epfd);
	if (sl->stopfd >= 0)
		close(sl->stopfd);
	free(sl->v);
	free(sl);
	return ret;
}

void slots_destroy(struct serve_slots *sl)
{
	uint64_t one = 1;

	if (!sl)
		return;
	if (write(sl->stopfd, &one, sizeof(one)) == sizeof(one))
		pthread_join(sl->th, NULL);
	close(sl->epfd);
	close(sl->stopfd);
	pthread_cond_destroy(&sl->freed);
	pthread_mutex_destroy(&sl->lock);
	free(sl->v);
	free(sl);
}

/* The peer of @fd (>= 0) has hung up. */
static int hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return fd >= 0 && poll(&p, 1, 0) == 1 && p.revents & (POLLRDHUP | POLLHUP | POLLERR);
}

/* Slots whose client hung up and the watcher has not seen yet: cancel them now. */
static void reap_locked(struct serve_slots *sl)
{
	unsigned int i;

	for (i = 0; i < sl->n; i++)
		if (sl->v[i].used && sl->v[i].gone && hung_up(sl->v[i].fd))
			fire_locked(sl, &sl->v[i]);
}

int slots_take(struct serve_slots *sl, int fd, struct slots_miss *miss)
{
	struct timespec t0, now, slice;
	unsigned int i;
	int got = -1, leaving;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&sl->lock);
	for (;;) {
		for (i = 0; i < sl->n && got < 0; i++)
			if (!sl->v[i].used) {
				sl->v[i].used = 1;
				got = (int)i;
			}
		if (got >= 0)
			break;
		reap_locked(sl);
		for (i = 0, leaving = 0; i < sl->n; i++)
			leaving |= sl->v[i].used && sl->v[i].leaving;
		if (!leaving || hung_up(fd))
			break;
		/* a second at a time: the asker may hang up meanwhile */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= SLOTS_LEAVE_WAIT_S)
			break;
		clock_gettime(CLOCK_REALTIME, &slice);	/* the condition's clock */
		slice.tv_sec++;
		pthread_cond_timedwait(&sl->freed, &sl->lock, &slice);
	}
	if (got < 0 && miss) {
		memset(miss, 0, sizeof(*miss));
		for (i = 0; i < sl->n; i++) {
			miss->leaving += sl->v[i].used && sl->v[i].leaving;
			miss->unwatched += sl->v[i].used && !sl->v[i].leaving && !sl->v[i].gone;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		miss->waited = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
	}
	pthread_mutex_unlock(&sl->lock);
	return got;
}

unsigned int slots_in_use(struct serve_slots *sl)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&sl->lock);
	for (i = 0; i < sl->n; i++)
		n += !!sl->v[i].used;
	pthread_mutex_unlock(&sl->lock);
	return n;
}

void slots_put(struct serve_slots *sl, int i)
{
	pthread_mutex_lock(&sl->lock);
	unwatch_locked(sl, &sl->v[i]);
	sl->v[i].used = 0;
	sl->v[i].leaving = 0;
	pthread_cond_broadcast(&sl->freed);
	pthread_mutex_unlock(&sl->lock);
}

int slots_watch(struct serve_slots *sl, int i, int fd, void (*gone)(void *arg), void *arg)
{
	struct epoll_event ev = { .events = EPOLLRDHUP };
	struct slot *s = &sl->v[i];
	int ret = 0;

	pthread_mutex_lock(&sl->lock);
	unwatch_locked(sl, s);
	if (sl->stopping) {
		gone(arg);
		pthread_mutex_unlock(&sl->lock);
		return 0;
	}
	s->gen++;
	ev.data.u64 = (uint64_t)s->gen << 32 | (uint32_t)i;
	if (epoll_ctl(sl->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -errno;
	} else {
		s->fd = fd;
		s->gone = gone;
		s->arg = arg;
	}
	pthread_mutex_unlock(&sl->lock);
	return ret;
}

void slots_unwatch(struct serve_slots *sl, int i)
{
	pthread_mutex_lock(&sl->lock);
	unwatch_locked(sl, &sl->v[i]);
	pthread_mutex_unlock(&sl->lock);
}

void slots_cancel_all(struct serve_slots *sl)
{
	unsigned int i;

	pthread_mutex_lock(&sl->lock);
	sl->stopping = 1;
	for (i = 0; i < sl->n; i++)
		if (sl->v[i].used && sl->v[i].gone)
			fire_locked(sl, &sl->v[i]);
	pthread_mutex_unlock(&sl->lock);
}
