// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_deadline.c - the watchdog of serve_deadline.h.
 *
 * The connections are a list under one lock.  A shutdown(2) is issued
 * under that lock, and a connection leaves the list (deadlines_close(),
 * from libmicrohttpd's notification that it is closing) before its socket
 * is closed: the watchdog never shuts down a descriptor number that has
 * been reused by a newer connection.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "serve_deadline.h"
#include "serve_metrics.h"

struct deadline_conn {
	struct deadline_conn *prev, *next;
	int fd;
	double due;		/* serve_now() by which a request must be in; 0: none */
};

struct deadlines {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int stop;
	double first, idle;
	void (*on_expired)(void *arg);
	void *arg;
	struct deadline_conn head;	/* the list's sentinel */
};

#define DEADLINE_TICK_NS 250000000L

static void *watchdog(void *arg)
{
	struct deadlines *d = arg;
	struct deadline_conn *c;
	struct timespec ts;
	double now;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		now = serve_now();
		for (c = d->head.next; c != &d->head; c = c->next) {
			if (!c->due || c->due > now)
				continue;
			c->due = 0;
			shutdown(c->fd, SHUT_RDWR);
			if (d->on_expired)
				d->on_expired(d->arg);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += DEADLINE_TICK_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->wake, &d->lock, &ts);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int deadlines_create(struct deadlines **out, double first, double idle,
		     void (*on_expired)(void *arg), void *arg)
{
	struct deadlines *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -1;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	d->first = first;
	d->idle = idle;
	d->on_expired = on_expired;
	d->arg = arg;
	d->head.next = d->head.prev = &d->head;
	if (pthread_create(&d->thread, NULL, watchdog, d)) {
		pthread_cond_destroy(&d->wake);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

void deadlines_destroy(struct deadlines *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

struct deadline_conn *deadlines_open(struct deadlines *d, int fd)
{
	struct deadline_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	pthread_mutex_lock(&d->lock);
	c->due = serve_now() + d->first;
	c->next = &d->head;
	c->prev = d->head.prev;
	d->head.prev->next = c;
	d->head.prev = c;
	pthread_mutex_unlock(&d->lock);
	return c;
}

void deadlines_close(struct deadlines *d, struct deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	c->prev->next = c->next;
	c->next->prev = c->prev;
	pthread_mutex_unlock(&d->lock);
	free(c);
}

static void set_due(struct deadlines *d, struct deadline_conn *c, double due)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	c->due = due;
	pthread_mutex_unlock(&d->lock);
}

void deadlines_arrived(struct deadlines *d, struct deadline_conn *c)
{
	set_due(d, c, 0);
}

void deadlines_next(struct deadlines *d, struct deadline_conn *c)
{
	set_due(d, c, serve_now() + d->idle);
}
