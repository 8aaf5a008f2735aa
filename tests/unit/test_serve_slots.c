// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_slots - colibri serve's admission slots (serve_slots.h), with
 * socketpairs for the clients: a full server whose clients are all there
 * says no at once; a client that hung up has its generation cancelled
 * once, and the next asker waits for its slot rather than being told no,
 * however long its last forward pass takes (longer than the 10 s the
 * wait was once bounded by: a 429 that make check saw); an asker that
 * hangs up itself stops waiting.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cb_test.h"
#include "serve_slots.h"

#define N 3

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* One client: fd[0] the server's end (watched), fd[1] the client's. */
struct client {
	int fd[2];
	atomic_int gone;
};

static void on_gone(void *arg)
{
	struct client *c = arg;

	atomic_fetch_add(&c->gone, 1);
}

/* All @N slots taken, each watched on a client of its own. */
static int fill(struct serve_slots *sl, struct client *c)
{
	int i, got;

	for (i = 0; i < N; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, c[i].fd))
			return -1;
		atomic_init(&c[i].gone, 0);
		got = slots_take(sl, -1, NULL);
		if (got < 0 || slots_watch(sl, got, c[i].fd[0], on_gone, &c[i]))
			return -1;
	}
	return 0;
}

static void close_all(struct client *c)
{
	int i;

	for (i = 0; i < N; i++) {
		close(c[i].fd[0]);
		if (c[i].fd[1] >= 0)
			close(c[i].fd[1]);
	}
}

/* A generation that ends @secs after its cancel: then its slot is put back. */
struct ender {
	struct serve_slots *sl;
	struct client *c;
	int slot;
	double secs;
};

static void *end_later(void *arg)
{
	struct ender *e = arg;

	while (!atomic_load(&e->c->gone))
		usleep(1000);
	usleep((useconds_t)(e->secs * 1e6));
	slots_put(e->sl, e->slot);
	return NULL;
}

static void test_full_with_every_client_there_is_no_at_once(void)
{
	struct serve_slots *sl;
	struct client c[N];
	struct slots_miss miss;
	double t0;
	int got;

	CB_CHECK(!slots_create(&sl, N), "slots_create");
	CB_CHECK(!fill(sl, c), "three slots taken and watched");
	t0 = now_s();
	got = slots_take(sl, -1, &miss);
	CB_CHECK(got == -1 && now_s() - t0 < 0.5, "got %d after %.3f s", got, now_s() - t0);
	CB_CHECK(miss.leaving == 0 && miss.unwatched == 0, "leaving %u, unwatched %u",
		 miss.leaving, miss.unwatched);
	slots_cancel_all(sl);
	for (got = 0; got < N; got++)
		slots_put(sl, got);
	slots_destroy(sl);
	close_all(c);
}

/*
 * The client of slot 1 hangs up; its generation's last pass takes @secs.
 * The next asker gets that slot, after about @secs, and the hang-up was
 * seen once.
 */
static void asker_waits_for_a_leaving_slot(double secs)
{
	struct serve_slots *sl;
	struct client c[N];
	struct ender e;
	pthread_t th;
	double t0, took;
	int got, i;

	CB_CHECK(!slots_create(&sl, N), "slots_create");
	CB_CHECK(!fill(sl, c), "three slots taken and watched");
	e = (struct ender){ .sl = sl, .c = &c[1], .slot = 1, .secs = secs };
	CB_CHECK(!pthread_create(&th, NULL, end_later, &e), "pthread_create");
	t0 = now_s();
	close(c[1].fd[1]);
	c[1].fd[1] = -1;
	got = slots_take(sl, -1, NULL);
	took = now_s() - t0;
	pthread_join(th, NULL);
	CB_CHECK(got == 1, "the asker got slot %d (1 was leaving)", got);
	CB_CHECK(took >= secs && took < secs + 2, "after %.2f s (its last pass took %.1f)", took, secs);
	CB_CHECK(atomic_load(&c[1].gone) == 1, "the hang-up was seen %d times",
		 atomic_load(&c[1].gone));
	CB_CHECK(!atomic_load(&c[0].gone) && !atomic_load(&c[2].gone), "no other slot cancelled");
	slots_cancel_all(sl);
	for (i = 0; i < N; i++)
		slots_put(sl, i);
	slots_destroy(sl);
	close_all(c);
}

static void test_the_asker_gets_a_slot_whose_client_hung_up(void)
{
	asker_waits_for_a_leaving_slot(0.2);
}

static void test_the_asker_waits_out_a_slow_last_pass(void)
{
	asker_waits_for_a_leaving_slot(11.0);
}

/* A slot leaving for ever, and the asker hangs up too: it stops waiting. */
static void test_an_asker_that_hangs_up_stops_waiting(void)
{
	struct serve_slots *sl;
	struct client c[N];
	struct slots_miss miss;
	int asker[2], got, i;
	double t0;

	CB_CHECK(!slots_create(&sl, N), "slots_create");
	CB_CHECK(!fill(sl, c), "three slots taken and watched");
	CB_CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, asker), "socketpair");
	close(c[0].fd[1]);
	c[0].fd[1] = -1;
	close(asker[1]);
	t0 = now_s();
	got = slots_take(sl, asker[0], &miss);
	CB_CHECK(got == -1 && now_s() - t0 < 2, "got %d after %.2f s", got, now_s() - t0);
	CB_CHECK(miss.leaving == 1, "%u slots leaving", miss.leaving);
	CB_CHECK(atomic_load(&c[0].gone) == 1, "the hang-up was seen %d times",
		 atomic_load(&c[0].gone));
	close(asker[0]);
	slots_cancel_all(sl);
	for (i = 0; i < N; i++)
		slots_put(sl, i);
	slots_destroy(sl);
	close_all(c);
}

int main(void)
{
	CB_RUN(test_full_with_every_client_there_is_no_at_once);
	CB_RUN(test_the_asker_gets_a_slot_whose_client_hung_up);
	CB_RUN(test_an_asker_that_hangs_up_stops_waiting);
	CB_RUN(test_the_asker_waits_out_a_slow_last_pass);
	return cb_test_done();
}
