// SPDX-License-Identifier: GPL-2.0-only
/*
 * lifecycle_test - a model's life against everything that races it: LOAD
 * and UNLOAD of one name in a loop while other threads look the name up
 * (ATTACH, GET_TOKENIZER, EXPORT_DMABUF, LIST), and what UNLOAD does to the
 * sessions of the model it removes.
 *
 * Runs inside the vm-run guest with colibri.ko loaded; fixtures come from
 * $COLIBRI_BUILD/vm-fixtures/ (tests/vm/make-fixtures).  Each race also
 * reads the kernel log it produced, so a refcount warning or an oops fails
 * the test that caused it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "colibri_uring.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- LOAD racing UNLOAD ---------------------------------------------------- */

struct race {
	const char *path;
	double until;
	unsigned long long bytes;	/* what a good LOAD reports */
	int loads, unloads, lookups;
	int bad_load;			/* a LOAD that said 0 with a wrong answer */
	int bad_err;			/* an errno no caller should see */
	char why[160];
};

static void *race_loader(void *p)
{
	struct race *r = p;
	int fd = colibri_dev_open();

	while (fd >= 0 && now_s() < r->until) {
		char name[COLIBRI_NAME_LEN] = "";
		unsigned long long bytes = 0;
		int ret = colibri_dev_load(fd, r->path, "race", name, &bytes);

		if (!ret) {
			__atomic_add_fetch(&r->loads, 1, __ATOMIC_RELAXED);
			if (bytes != r->bytes || strcmp(name, "race")) {
				snprintf(r->why, sizeof(r->why), "LOAD said 0 with %llu bytes, name '%.31s'",
					 bytes, name);
				__atomic_add_fetch(&r->bad_load, 1, __ATOMIC_RELAXED);
			}
		} else if (ret != -EEXIST) {
			snprintf(r->why, sizeof(r->why), "LOAD: %s", strerror(-ret));
			__atomic_add_fetch(&r->bad_err, 1, __ATOMIC_RELAXED);
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *race_unloader(void *p)
{
	struct race *r = p;
	int fd = colibri_dev_open();

	while (fd >= 0 && now_s() < r->until) {
		int ret = colibri_dev_unload(fd, "race", 0);

		if (!ret)
			__atomic_add_fetch(&r->unloads, 1, __ATOMIC_RELAXED);
		else if (ret != -ENOENT && ret != -EBUSY) {
			snprintf(r->why, sizeof(r->why), "UNLOAD: %s", strerror(-ret));
			__atomic_add_fetch(&r->bad_err, 1, __ATOMIC_RELAXED);
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Every path that finds a model by name, on the name being raced. */
static void *race_lookups(void *p)
{
	struct race *r = p;
	int fd = colibri_dev_open();

	while (fd >= 0 && now_s() < r->until) {
		struct colibri_export e = { .size = sizeof(e), .name = "race" };
		struct colibri_model_entry ents[8];
		void *tok = NULL;
		size_t len;
		int s = colibri_dev_open();

		if (s >= 0 && !colibri_dev_attach(s, "race", 16, 1, NULL))
			__atomic_add_fetch(&r->lookups, 1, __ATOMIC_RELAXED);
		if (s >= 0)
			close(s);
		if (!colibri_dev_get_tokenizer(fd, "race", &tok, &len, NULL))
			free(tok);
		if (!ioctl(fd, COLIBRI_IOC_EXPORT_DMABUF, &e))
			close(e.fd);
		colibri_dev_list(fd, ents, 8);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * Two threads load and unload one name as fast as they can while a third
 * looks it up every way there is.  A LOAD that succeeds must report the
 * model it loaded (its name and its bytes), every error must be one the
 * ABI names, and the kernel must log nothing: LOAD once took its caller's
 * reference only after publishing, and an UNLOAD in between freed the
 * model under it ("refcount_t: addition on 0; use-after-free").
 */
TEST(load_racing_unload_of_one_name)
{
	struct race r = { .bytes = 0 };
	char path[4096], first[512];
	pthread_t t[3];
	int fd = colibri_dev_open(), kmsg = kmsg_open();

	ASSERT_LE(0, fd);
	ASSERT_LE(0, kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
	ASSERT_EQ(0, fixture("mixtral-q4_0", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "race", NULL, &r.bytes));
	ASSERT_EQ(0, colibri_dev_unload(fd, "race", 0));
	r.path = path;
	/* The two alone (the tightest loop), then with the lookups. */
	for (int phase = 0; phase < 2; phase++) {
		r.until = now_s() + 4;
		ASSERT_EQ(0, pthread_create(&t[0], NULL, race_loader, &r));
		ASSERT_EQ(0, pthread_create(&t[1], NULL, race_unloader, &r));
		if (phase)
			ASSERT_EQ(0, pthread_create(&t[2], NULL, race_lookups, &r));
		for (int i = 0; i < 2 + phase; i++)
			pthread_join(t[i], NULL);
	}
	colibri_dev_unload(fd, "race", 1);
	TH_LOG("%d loads, %d unloads, %d attaches in 8 s", r.loads, r.unloads, r.lookups);
	EXPECT_EQ(0, r.bad_load) TH_LOG("%s", r.why);
	EXPECT_EQ(0, r.bad_err) TH_LOG("%s", r.why);
	EXPECT_LT(10, r.loads);
	EXPECT_LT(10, r.unloads);
	EXPECT_EQ(0, kmsg_bad(kmsg, first, sizeof(first))) TH_LOG("kernel: %s", first);
	EXPECT_EQ(0, info_now(fd).nr_models);
	EXPECT_EQ(0, info_now(fd).nr_sessions);
	EXPECT_EQ(0, info_now(fd).mem_used);
	close(kmsg);
	close(fd);
}

/* --- UNLOAD and the sessions of its model ----------------------------------- */

static int submit1(int fd, uint32_t tok, unsigned int flags)
{
	struct colibri_submit s;

	memset(&s, 0, sizeof(s));
	s.flags = flags;
	s.tokens = (uintptr_t)&tok;
	s.n_tokens = 1;
	return colibri_dev_submit(fd, &s);
}

/* UNLOAD in a child, so that a hang is seen: 0, -errno, or -ETIMEDOUT. */
static int unload_within(int fd, const char *name, int wait, double secs, double *took)
{
	double t0 = now_s();
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(-colibri_dev_unload(fd, name, wait));
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_s() - t0 > secs) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -ETIMEDOUT;
		}
		usleep(10 * 1000);
	}
	if (took)
		*took = now_s() - t0;
	return WIFEXITED(st) ? -WEXITSTATUS(st) : -ECHILD;
}

FIXTURE(unload) {
	int fd;
	char path[4096];
};

FIXTURE_SETUP(unload)
{
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fixture("mixtral-f32", self->path, sizeof(self->path)));
	colibri_dev_unload(self->fd, "u", 1);
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "u", NULL, NULL));
}

FIXTURE_TEARDOWN(unload)
{
	colibri_dev_unload(self->fd, "u", 1);
	close(self->fd);
}

/*
 * A session holder that does nothing cannot hold off UNLOAD(WAIT): the
 * unload revokes the session, its pinned memory goes at once, and the
 * holder's next SUBMIT says -ENODEV (as the ABI documents) instead of
 * running on a model that is gone.  The file may then attach again.
 */
TEST_F(unload, wait_revokes_an_idle_holder)
{
	int s = colibri_dev_open();
	double took = 0;

	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "u", 64, 0, NULL));
	ASSERT_EQ(0, submit1(s, 1, COLIBRI_SUBMIT_RESET));
	EXPECT_EQ(0, unload_within(self->fd, "u", 1, 20, &took))
		TH_LOG("UNLOAD(WAIT) did not return with a session held open");
	TH_LOG("UNLOAD(WAIT) took %.3f s", took);
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	EXPECT_EQ(0, info_now(self->fd).nr_models);
	EXPECT_EQ(0, info_now(self->fd).mem_used);
	EXPECT_EQ(-ENODEV, submit1(s, 2, 0));
	EXPECT_EQ(-ENODEV, submit1(s, 2, COLIBRI_SUBMIT_RESET));
	/* The revoked file attaches again, to the model loaded again. */
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "u", NULL, NULL));
	EXPECT_EQ(0, colibri_dev_attach(s, "u", 64, 0, NULL));
	EXPECT_EQ(0, submit1(s, 3, COLIBRI_SUBMIT_RESET));
	EXPECT_EQ(-EBUSY, colibri_dev_attach(s, "u", 64, 0, NULL));
	close(s);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, "u", 0));
}

/*
 * Holders busy in SUBMIT loops, by ioctl and by io_uring, with long
 * prefills: UNLOAD(WAIT) stops their steps in flight (which end with
 * -ENODEV), returns, and leaves nothing pinned.  Every SUBMIT after it is
 * -ENODEV too.
 */
TEST_F(unload, wait_stops_busy_holders_with_enodev)
{
	int *res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[4];
	double took = 0;
	int st, ready[2];
	char c;

	ASSERT_NE(MAP_FAILED, res);
	ASSERT_EQ(0, pipe(ready));
	for (int i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i])
			continue;
		struct colibri_ring *ring = NULL;
		struct colibri_attach a;
		uint32_t *toks = calloc(1024, sizeof(*toks));
		int s = colibri_dev_open(), ret = 0, n = 0;

		if (s < 0 || colibri_dev_attach(s, "u", 1024, 0, &a) ||
		    (i % 2 && colibri_ring_create(&ring, 4)))
			_exit(2);
		test_tokens(toks, 1024, a.vocab_size, i);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		/* Until the model is gone; then twice more, to see it stays gone. */
		while (n < 3) {
			struct colibri_submit sub = { .size = sizeof(sub) };

			sub.flags = COLIBRI_SUBMIT_RESET;
			sub.tokens = (uintptr_t)toks;
			sub.n_tokens = 1024;
			ret = ring ? colibri_ring_step(ring, s, &sub) : colibri_dev_submit(s, &sub);
			if (ret) {
				res[i * 4 + n++] = ret;
				if (ret != -ENODEV)
					break;
			}
		}
		_exit(0);
	}
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1));
	usleep(300 * 1000);
	EXPECT_EQ(4, info_now(self->fd).nr_sessions);
	EXPECT_EQ(0, unload_within(self->fd, "u", 1, 60, &took))
		TH_LOG("UNLOAD(WAIT) did not return with busy holders");
	TH_LOG("UNLOAD(WAIT) took %.3f s", took);
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	EXPECT_EQ(0, info_now(self->fd).mem_used);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("holder %d", i);
		for (int n = 0; n < 3; n++) {
			EXPECT_EQ(-ENODEV, res[i * 4 + n])
				TH_LOG("holder %d (%s), SUBMIT %d after the unload: %s", i,
				       i % 2 ? "io_uring" : "ioctl", n, strerror(-res[i * 4 + n]));
		}
	}
	close(ready[0]);
	close(ready[1]);
	munmap(res, 4096);
}

/*
 * A waiting UNLOAD from a file that is itself a session of that model is
 * refused with -EDEADLK (it would revoke the caller's own session under
 * it: a program that unloads the model it still uses, as `colibri logits`
 * once did, and then hung).  From another file it works; without WAIT it
 * is -EBUSY as always.
 */
TEST_F(unload, wait_from_a_session_of_that_model_is_edeadlk)
{
	int s = colibri_dev_open();

	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, "u", 64, 0, NULL));
	EXPECT_EQ(-EDEADLK, unload_within(s, "u", 1, 20, NULL));
	EXPECT_EQ(1, info_now(self->fd).nr_models);
	EXPECT_EQ(0, submit1(s, 1, COLIBRI_SUBMIT_RESET));
	EXPECT_EQ(-EBUSY, unload_within(s, "u", 0, 20, NULL));
	/* Another model's UNLOAD(WAIT) from the same file is fine. */
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "other", NULL, NULL));
	EXPECT_EQ(0, unload_within(s, "other", 1, 20, NULL));
	EXPECT_EQ(0, unload_within(self->fd, "u", 1, 20, NULL));
	EXPECT_EQ(-ENODEV, submit1(s, 1, 0));
	close(s);
}

/*
 * UNLOAD without WAIT that returned 0 means no session of the model
 * exists: an ATTACH racing it either gets its session before (and the
 * UNLOAD says -EBUSY) or fails with -ENOENT, never a session on a model
 * already unloaded.
 */
TEST_F(unload, attach_racing_unload_gets_no_session_of_a_gone_model)
{
	int bad = 0, loads = 0;

	for (int i = 0; i < 150; i++) {
		int s = colibri_dev_open(), a, u;
		pid_t pid = fork();
		int st;

		if (!pid)
			_exit(-colibri_dev_attach(s, "u", 16, 1, NULL));
		u = colibri_dev_unload(self->fd, "u", 0);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		a = -WEXITSTATUS(st);
		/* The child's session is the file's: it lives as long as s. */
		if (!u && !a && info_now(self->fd).nr_sessions) {
			TH_LOG("cycle %d: UNLOAD said 0 and a session of the model exists", i);
			bad++;
		}
		EXPECT_TRUE(u == 0 || u == -EBUSY) TH_LOG("UNLOAD: %s", strerror(-u));
		EXPECT_TRUE(a == 0 || a == ENOENT || a == -ENOENT) TH_LOG("ATTACH: %d", a);
		close(s);
		if (u == -EBUSY)
			ASSERT_EQ(0, colibri_dev_unload(self->fd, "u", 1));
		ASSERT_EQ(0, info_now(self->fd).nr_sessions);
		ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "u", NULL, NULL));
		loads++;
	}
	EXPECT_EQ(0, bad);
	TH_LOG("%d cycles", loads);
}

TEST_HARNESS_MAIN
