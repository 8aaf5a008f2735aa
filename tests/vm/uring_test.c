// SPDX-License-Identifier: GPL-2.0-only
/*
 * uring_test - COLIBRI_IOC_SUBMIT through io_uring (IORING_OP_URING_CMD):
 * results equal to the ioctl's, many sessions on one ring, ioctl and
 * io_uring callers at once, one step in flight per session, bad payloads,
 * and teardown with steps in flight (async cancel, ring exit, file close,
 * a killed submitter) leaving nothing behind.
 *
 * Runs inside the vm-run guest with colibri.ko loaded; fixtures come from
 * $COLIBRI_BUILD/vm-fixtures/ (tests/vm/make-fixtures).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "colibri.h"
#include "colibri_uring.h"
#include "vm_helpers.h"

#define N_TOK 12
#define N_LONG 96		/* a prefill that runs for seconds under emulation */
#define N_SESS 6

/* Software emulation on a busy host is slow: allow minutes, not seconds. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fill(struct colibri_submit *s, const uint32_t *toks, unsigned int n,
		 unsigned int flags, float *logits, unsigned int logits_len)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->flags = flags;
	s->tokens = (uintptr_t)toks;
	s->n_tokens = n;
	s->logits = (uintptr_t)logits;
	s->logits_len = logits_len;
}

/* An attached session: its fd, or a negative errno. */
static int session(const char *model, unsigned int ctx, unsigned int batch,
		   struct colibri_attach *a)
{
	int fd = colibri_dev_open(), ret;

	if (fd < 0)
		return fd;
	ret = colibri_dev_attach(fd, model, ctx, batch, a);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Queues a raw SUBMIT SQE on a liburing ring. */
static struct io_uring_sqe *queue_cmd(struct io_uring *ring, int fd, struct colibri_submit *s,
				      uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return NULL;
	colibri_uring_prep_submit(sqe, !!(ring->flags & IORING_SETUP_SQE128), fd, s);
	io_uring_sqe_set_data64(sqe, ud);
	return sqe;
}

/* Waits for the next CQE: its res, and its user_data in *ud. */
static int reap(struct io_uring *ring, uint64_t *ud)
{
	struct io_uring_cqe *cqe;
	int ret;

	do
		ret = io_uring_wait_cqe(ring, &cqe);
	while (ret == -EINTR);
	if (ret)
		return ret;
	ret = cqe->res;
	if (ud)
		*ud = cqe->user_data;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* One raw SUBMIT through @ring, waited for: the CQE's res. */
static int uring_submit(struct io_uring *ring, int fd, struct colibri_submit *s)
{
	if (!queue_cmd(ring, fd, s, 7) || io_uring_submit(ring) != 1)
		return -EIO;
	return reap(ring, NULL);
}

/* Waits (up to ~10 s) until the module is back to @used bytes and no session. */
static int settle(int fd, unsigned long long used)
{
	for (int i = 0; i < 500; i++) {
		struct colibri_info info = info_now(fd);

		if (!info.nr_sessions && info.mem_used == used)
			return 0;
		usleep(20 * 1000);
	}
	return -1;
}

/*
 * Submits via ioctl until the session is free of an io_uring step.  The
 * ioctl's interruptible wait also ends with -EINTR when io_uring task work
 * arrives for this task (TIF_NOTIFY_SIGNAL): that is retried too.
 */
static int ioctl_when_free(int fd, struct colibri_submit *s)
{
	int ret;

	for (int i = 0; i < 1000; i++) {
		ret = colibri_dev_submit(fd, s);
		if (ret != -EBUSY && ret != -EINTR)
			return ret;
		usleep(10 * 1000);
	}
	return -EBUSY;
}

FIXTURE(model) {
	int fd;
	char path[4096];
	unsigned long long used;	/* the model alone */
};

FIXTURE_SETUP(model)
{
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fixture("mixtral-f32", self->path, sizeof(self->path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", self->path);
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "m", NULL, NULL));
	self->used = info_now(self->fd).mem_used;
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(self->fd).isa_level), 1);
}

FIXTURE_TEARDOWN(model)
{
	/* Everything any test made must be gone: sessions, their memory. */
	EXPECT_EQ(0, settle(self->fd, self->used))
		TH_LOG("left behind: %u sessions, %llu bytes over the model",
		       info_now(self->fd).nr_sessions,
		       info_now(self->fd).mem_used - self->used);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, "m", 1));
	EXPECT_EQ(0, info_now(self->fd).mem_used);
	close(self->fd);
}

/* Same inputs: same token, same logits bit for bit, same trace, as the ioctl. */
TEST_F(model, token_logits_trace_equal_the_ioctl)
{
	struct colibri_attach a;
	struct colibri_submit si, su;
	struct colibri_ring *r;
	uint32_t toks[N_TOK], *ti, *tu;
	float *li, *lu, *ref;
	int fi, fu, step;
	size_t tlen;

	/* A batch of 5 splits the prompt into 3 pieces: chained in the kernel. */
	fi = session("m", 64, 5, &a);
	fu = session("m", 64, 5, NULL);
	ASSERT_LE(0, fi);
	ASSERT_LE(0, fu);
	ASSERT_EQ(0, colibri_ring_create(&r, 8));
	li = calloc(a.vocab_size, sizeof(float));
	lu = calloc(a.vocab_size, sizeof(float));
	ref = calloc(a.vocab_size, sizeof(float));
	tlen = (size_t)N_TOK * a.n_layers * a.top_k * 2;
	ti = calloc(tlen, 4);
	tu = calloc(tlen, 4);
	ASSERT_TRUE(li && lu && ref && ti && tu);
	test_tokens(toks, N_TOK, a.vocab_size, 1);

	for (step = 0; step < 3; step++) {
		unsigned int n = step ? 1 : N_TOK;
		unsigned int fl = COLIBRI_SUBMIT_LOGITS | COLIBRI_SUBMIT_TRACE;

		fill(&si, toks, n, fl, li, a.vocab_size);
		si.temperature_milli = 800;
		si.seed = 42;
		si.trace = (uintptr_t)ti;
		si.trace_len = tlen;
		su = si;
		su.logits = (uintptr_t)lu;
		su.trace = (uintptr_t)tu;
		memset(tu, 0xa5, tlen * 4);
		ASSERT_EQ(0, colibri_dev_submit(fi, &si));
		ASSERT_EQ(0, colibri_ring_step(r, fu, &su)) TH_LOG("step %d", step);
		EXPECT_EQ(si.token, su.token) TH_LOG("step %d", step);
		EXPECT_EQ(si.n_past, su.n_past);
		EXPECT_EQ(N_TOK + step, su.n_past);
		EXPECT_EQ(0, memcmp(li, lu, a.vocab_size * sizeof(float))) TH_LOG("step %d", step);
		EXPECT_EQ(0, memcmp(ti, tu, (size_t)n * a.n_layers * a.top_k * 2 * 4));
		toks[0] = su.token;
	}
	/* ... and both equal the in-process engine's. */
	test_tokens(toks, N_TOK, a.vocab_size, 1);
	fill(&su, toks, N_TOK, COLIBRI_SUBMIT_LOGITS | COLIBRI_SUBMIT_RESET, lu, a.vocab_size);
	ASSERT_EQ(0, colibri_ring_step(r, fu, &su));
	ASSERT_EQ(0, user_logits(self->path, toks, N_TOK, ref, 64));
	EXPECT_EQ(0, memcmp(ref, lu, a.vocab_size * sizeof(float)));

	colibri_ring_destroy(r);
	close(fi);
	close(fu);
	free(li);
	free(lu);
	free(ref);
	free(ti);
	free(tu);
}

/* Six sessions step together on one ring; each gets its own right answer. */
TEST_F(model, many_sessions_on_one_ring)
{
	struct colibri_attach a;
	struct colibri_ring *r;
	struct colibri_submit s[N_SESS], ref;
	struct colibri_completion c[N_SESS];
	uint32_t toks[N_SESS][N_TOK + 1];
	int want[N_SESS], fds[N_SESS], fref, i, got, round;

	fref = session("m", 64, 0, &a);
	ASSERT_LE(0, fref);
	ASSERT_EQ(0, colibri_ring_create(&r, 16));
	for (i = 0; i < N_SESS; i++) {
		fds[i] = session("m", 64, 0, NULL);
		ASSERT_LE(0, fds[i]);
		test_tokens(toks[i], N_TOK, a.vocab_size, 10 + i);
	}
	EXPECT_EQ(N_SESS + 1, info_now(self->fd).nr_sessions);
	/* Round 0: the prompts; round 1: one decode step each. */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < N_SESS; i++) {
			/* The answer, from the ioctl on a scratch session. */
			fill(&ref, toks[i], N_TOK + round, COLIBRI_SUBMIT_RESET, NULL, 0);
			ASSERT_EQ(0, colibri_dev_submit(fref, &ref));
			want[i] = ref.token;
			if (round)
				fill(&s[i], &toks[i][N_TOK], 1, 0, NULL, 0);
			else
				fill(&s[i], toks[i], N_TOK, 0, NULL, 0);
			ASSERT_EQ(0, colibri_ring_queue(r, fds[i], &s[i], 100 + i));
		}
		ASSERT_EQ(N_SESS, colibri_ring_submit(r));
		for (got = 0; got < N_SESS;) {
			int n = colibri_ring_reap(r, c + got, N_SESS - got, 1);

			ASSERT_LT(0, n);
			got += n;
		}
		EXPECT_EQ(0, colibri_ring_inflight(r));
		for (i = 0; i < N_SESS; i++) {
			unsigned int k = c[i].user_data - 100;

			ASSERT_GT(N_SESS, k);
			EXPECT_EQ(want[k], c[i].res) TH_LOG("round %d session %u", round, k);
			EXPECT_EQ(want[k], s[k].token);
			EXPECT_EQ(N_TOK + round, c[i].n_past);
			EXPECT_EQ(N_TOK + round, s[k].n_past);
			toks[k][N_TOK] = s[k].token;
		}
	}
	colibri_ring_destroy(r);
	for (i = 0; i < N_SESS; i++)
		close(fds[i]);
	close(fref);
}

/* A process on ioctl and one on io_uring, at once, both right. */
TEST_F(model, ioctl_and_uring_callers_at_once)
{
	struct colibri_attach a;
	uint32_t toks[N_TOK];
	struct colibri_submit s;
	int fref, want, i, st;
	pid_t pid[2];

	fref = session("m", 64, 0, &a);
	ASSERT_LE(0, fref);
	test_tokens(toks, N_TOK, a.vocab_size, 77);
	fill(&s, toks, N_TOK, 0, NULL, 0);
	ASSERT_EQ(0, colibri_dev_submit(fref, &s));
	want = s.token;
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			struct colibri_ring *r = NULL;
			int f[2], rep, k, ret;

			if (i && colibri_ring_create(&r, 8))
				_exit(40);
			for (k = 0; k < 2; k++) {
				f[k] = session("m", 64, 0, NULL);
				if (f[k] < 0)
					_exit(41);
			}
			for (rep = 0; rep < 6; rep++) {
				for (k = 0; k < 2; k++) {
					struct colibri_submit x;

					fill(&x, toks, N_TOK, COLIBRI_SUBMIT_RESET, NULL, 0);
					ret = i ? colibri_ring_step(r, f[k], &x) :
						  colibri_dev_submit(f[k], &x);
					if (ret)
						_exit(42);
					if (x.token != want)
						_exit(43);
				}
			}
			colibri_ring_destroy(r);
			_exit(0);
		}
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("%s caller", i ? "io_uring" : "ioctl");
	}
	close(fref);
}

/* One step per session: a second one in flight is -EBUSY, by either path. */
TEST_F(model, second_step_in_flight_is_ebusy)
{
	struct colibri_attach a;
	struct io_uring ring;
	struct colibri_submit s1, s2, s3;
	uint32_t *toks = calloc(N_LONG, 4);
	uint64_t ud;
	int f, i, res[3] = { 1, 1, 1 };

	ASSERT_NE(NULL, toks);
	f = session("m", N_LONG, 0, &a);
	ASSERT_LE(0, f);
	test_tokens(toks, N_LONG, a.vocab_size, 3);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	fill(&s1, toks, N_LONG, 0, NULL, 0);
	fill(&s2, toks, 4, 0, NULL, 0);
	/* Both are issued in one io_uring_enter: the first is surely pending. */
	ASSERT_NE(NULL, queue_cmd(&ring, f, &s1, 0));
	ASSERT_NE(NULL, queue_cmd(&ring, f, &s2, 1));
	ASSERT_EQ(2, io_uring_submit(&ring));
	/* The first runs for a while: an ioctl SUBMIT meanwhile is refused. */
	fill(&s3, toks, 4, 0, NULL, 0);
	EXPECT_EQ(-EBUSY, colibri_dev_submit(f, &s3));
	for (i = 0; i < 2; i++) {
		int r = reap(&ring, &ud);

		ASSERT_GT(2, ud);
		res[ud] = r;
	}
	EXPECT_LE(0, res[0]);
	EXPECT_GT((int)a.vocab_size, res[0]);
	EXPECT_EQ(-EBUSY, res[1]);
	EXPECT_EQ(N_LONG, s1.n_past);
	/* Free again: the next step works, by either path. */
	fill(&s2, toks, 4, COLIBRI_SUBMIT_RESET, NULL, 0);
	EXPECT_EQ(0, colibri_dev_submit(f, &s2));
	EXPECT_EQ(4, s2.n_past);
	fill(&s3, toks, 2, 0, NULL, 0);
	EXPECT_LE(0, uring_submit(&ring, f, &s3));
	EXPECT_EQ(6, s3.n_past);
	io_uring_queue_exit(&ring);
	close(f);
	free(toks);
}

/* Bad payloads, structs and pointers: clear errors, nothing queued. */
TEST_F(model, bad_payloads_are_refused)
{
	struct colibri_attach a;
	struct io_uring ring, ring128;
	struct io_uring_sqe *sqe;
	struct colibri_submit s;
	struct colibri_uring_cmd pl;
	uint32_t toks[4] = { 1, 2, 3, 4 };
	float *logits;
	int f, g;

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	ASSERT_EQ(0, io_uring_queue_init(8, &ring128, IORING_SETUP_SQE128));
	g = colibri_dev_open();
	ASSERT_LE(0, g);
	f = session("m", 8, 0, &a);
	ASSERT_LE(0, f);
	logits = calloc(a.vocab_size, sizeof(float));

	/* Not attached. */
	fill(&s, toks, 4, 0, NULL, 0);
	EXPECT_EQ(-ENOTCONN, uring_submit(&ring, g, &s));
	/* Reserved half of the payload set. */
	sqe = queue_cmd(&ring, f, &s, 1);
	pl.submit = (uintptr_t)&s;
	pl.reserved = 1;
	memcpy(sqe->cmd, &pl, sizeof(pl));
	io_uring_submit(&ring);
	EXPECT_EQ(-EINVAL, reap(&ring, NULL));
	/* No struct, or a wild pointer to it. */
	sqe = queue_cmd(&ring, f, &s, 1);
	memset(sqe->cmd, 0, 16);
	io_uring_submit(&ring);
	EXPECT_EQ(-EFAULT, reap(&ring, NULL));
	sqe = queue_cmd(&ring, f, &s, 1);
	pl.submit = 8;
	pl.reserved = 0;
	memcpy(sqe->cmd, &pl, sizeof(pl));
	io_uring_submit(&ring);
	EXPECT_EQ(-EFAULT, reap(&ring, NULL));
	/* Other commands are not served through io_uring. */
	sqe = queue_cmd(&ring, f, &s, 1);
	sqe->cmd_op = COLIBRI_IOC_ATTACH;
	io_uring_submit(&ring);
	EXPECT_EQ(-EOPNOTSUPP, reap(&ring, NULL));
	sqe = queue_cmd(&ring, f, &s, 1);
	sqe->cmd_op = 0x1234;
	io_uring_submit(&ring);
	EXPECT_EQ(-EOPNOTSUPP, reap(&ring, NULL));
	/* The struct's own rules, as for the ioctl. */
	fill(&s, toks, 4, 0, NULL, 0);
	s.size = 8;
	sqe = queue_cmd(&ring, f, &s, 1);
	s.size = 8;	/* queue_cmd set it: undo */
	io_uring_submit(&ring);
	EXPECT_EQ(-EINVAL, reap(&ring, NULL));
	fill(&s, toks, 4, 1u << 9, NULL, 0);
	EXPECT_EQ(-EINVAL, uring_submit(&ring, f, &s));
	fill(&s, toks, 4, 0, NULL, 0);
	s.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, uring_submit(&ring, f, &s));
	fill(&s, toks, 0, 0, NULL, 0);
	EXPECT_EQ(-EINVAL, uring_submit(&ring, f, &s));
	fill(&s, NULL, 4, 0, NULL, 0);
	EXPECT_EQ(-EFAULT, uring_submit(&ring, f, &s));
	fill(&s, (uint32_t *)8, 4, 0, NULL, 0);
	EXPECT_EQ(-EFAULT, uring_submit(&ring, f, &s));
	fill(&s, toks, 4, COLIBRI_SUBMIT_LOGITS, logits, a.vocab_size - 1);
	EXPECT_EQ(-EINVAL, uring_submit(&ring, f, &s));
	toks[1] = a.vocab_size;
	fill(&s, toks, 4, 0, NULL, 0);
	EXPECT_EQ(-EINVAL, uring_submit(&ring, f, &s));
	toks[1] = 2;
	{
		uint32_t nine[9] = { 0 };

		fill(&s, nine, 9, 0, NULL, 0);
		EXPECT_EQ(-ENOSPC, uring_submit(&ring, f, &s));
	}
	/* Nothing ran: the sequence is still empty, and it works. */
	fill(&s, toks, 4, 0, NULL, 0);
	EXPECT_LE(0, uring_submit(&ring, f, &s));
	EXPECT_EQ(4, s.n_past);
	/* A bad logits pointer shows when the results are copied out. */
	fill(&s, toks, 1, COLIBRI_SUBMIT_LOGITS, (float *)8, a.vocab_size);
	EXPECT_EQ(-EFAULT, uring_submit(&ring, f, &s));
	/* Reset-only completes at once with 0. */
	fill(&s, NULL, 0, COLIBRI_SUBMIT_RESET, NULL, 0);
	s.token = 5;
	EXPECT_EQ(0, uring_submit(&ring, f, &s));
	EXPECT_EQ(-1, s.token);
	EXPECT_EQ(0, s.n_past);
	/* SQE128: the 64 extra bytes of the cmd area must be zero. */
	fill(&s, toks, 2, 0, NULL, 0);
	sqe = queue_cmd(&ring128, f, &s, 1);
	sqe->cmd[40] = 1;
	io_uring_submit(&ring128);
	EXPECT_EQ(-EINVAL, reap(&ring128, NULL));
	EXPECT_LE(0, uring_submit(&ring128, f, &s));
	EXPECT_EQ(2, s.n_past);

	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&ring128);
	free(logits);
	close(f);
	close(g);
}

/* IOSQE_ASYNC issues from an io-wq worker: the same answer. */
TEST_F(model, issue_from_io_wq_worker)
{
	struct colibri_attach a;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct colibri_submit si, su;
	uint32_t toks[N_TOK];
	int fi, fu;

	fi = session("m", 64, 5, &a);
	fu = session("m", 64, 5, NULL);
	ASSERT_LE(0, fi);
	ASSERT_LE(0, fu);
	test_tokens(toks, N_TOK, a.vocab_size, 9);
	fill(&si, toks, N_TOK, 0, NULL, 0);
	ASSERT_EQ(0, colibri_dev_submit(fi, &si));
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	fill(&su, toks, N_TOK, 0, NULL, 0);
	sqe = queue_cmd(&ring, fu, &su, 1);
	sqe->flags |= IOSQE_ASYNC;
	ASSERT_EQ(1, io_uring_submit(&ring));
	EXPECT_EQ(si.token, reap(&ring, NULL));
	EXPECT_EQ(si.token, su.token);
	io_uring_queue_exit(&ring);
	close(fi);
	close(fu);
}

/* A registered (fixed) file works as the fd does. */
TEST_F(model, fixed_file)
{
	struct colibri_attach a;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct colibri_submit si, su;
	uint32_t toks[N_TOK];
	int fi, fu;

	fi = session("m", 64, 0, &a);
	fu = session("m", 64, 0, NULL);
	ASSERT_LE(0, fi);
	ASSERT_LE(0, fu);
	test_tokens(toks, N_TOK, a.vocab_size, 12);
	fill(&si, toks, N_TOK, 0, NULL, 0);
	ASSERT_EQ(0, colibri_dev_submit(fi, &si));
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	ASSERT_EQ(0, io_uring_register_files(&ring, &fu, 1));
	/* The registered file holds the session: closing the fd changes nothing. */
	close(fu);
	fill(&su, toks, N_TOK, 0, NULL, 0);
	sqe = queue_cmd(&ring, 0, &su, 1);
	sqe->flags |= IOSQE_FIXED_FILE;
	ASSERT_EQ(1, io_uring_submit(&ring));
	EXPECT_EQ(si.token, reap(&ring, NULL));
	EXPECT_EQ(si.token, su.token);
	EXPECT_EQ(2, info_now(self->fd).nr_sessions);
	io_uring_queue_exit(&ring);
	close(fi);
}

/*
 * IORING_OP_ASYNC_CANCEL does not reach uring_cmds (6.1 and 6.12 alike):
 * -ENOENT (or -EALREADY), and the step completes normally.
 */
TEST_F(model, async_cancel_leaves_the_step_running)
{
	struct colibri_attach a;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct colibri_submit s;
	uint32_t *toks = calloc(N_LONG, 4);
	int f, i, res[2] = { 1, 1 };
	uint64_t ud;

	f = session("m", N_LONG, 0, &a);
	ASSERT_LE(0, f);
	test_tokens(toks, N_LONG, a.vocab_size, 4);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	fill(&s, toks, N_LONG, 0, NULL, 0);
	ASSERT_NE(NULL, queue_cmd(&ring, f, &s, 0));
	ASSERT_EQ(1, io_uring_submit(&ring));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_cancel64(sqe, 0, 0);
	io_uring_sqe_set_data64(sqe, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	for (i = 0; i < 2; i++) {
		int r = reap(&ring, &ud);

		ASSERT_GT(2, ud);
		res[ud] = r;
	}
	EXPECT_TRUE(res[1] == -ENOENT || res[1] == -EALREADY) TH_LOG("cancel: %d", res[1]);
	EXPECT_LE(0, res[0]) TH_LOG("step: %d", res[0]);
	EXPECT_EQ(N_LONG, s.n_past);
	io_uring_queue_exit(&ring);
	close(f);
	free(toks);
}

/* The ring closes with steps in flight: they end, the sessions are free. */
TEST_F(model, ring_exit_with_steps_in_flight)
{
	struct colibri_attach a;
	struct io_uring ring;
	struct colibri_submit s[2], x;
	uint32_t *toks = calloc(N_LONG, 4);
	int f[2], k;

	for (k = 0; k < 2; k++) {
		f[k] = session("m", N_LONG, 0, &a);
		ASSERT_LE(0, f[k]);
	}
	test_tokens(toks, N_LONG, a.vocab_size, 5);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	for (k = 0; k < 2; k++) {
		fill(&s[k], toks, N_LONG, 0, NULL, 0);
		ASSERT_NE(NULL, queue_cmd(&ring, f[k], &s[k], k));
	}
	ASSERT_EQ(2, io_uring_submit(&ring));
	usleep(20 * 1000);
	io_uring_queue_exit(&ring);
	/* Each session takes the next step once its io_uring step is gone. */
	for (k = 0; k < 2; k++) {
		fill(&x, toks, 3, COLIBRI_SUBMIT_RESET, NULL, 0);
		EXPECT_EQ(0, ioctl_when_free(f[k], &x)) TH_LOG("session %d", k);
		EXPECT_EQ(3, x.n_past);
		close(f[k]);
	}
	EXPECT_EQ(0, settle(self->fd, self->used));
	free(toks);
}

/* The file closes with a step in flight: the step still completes. */
TEST_F(model, file_closed_with_step_in_flight)
{
	struct colibri_attach a;
	struct io_uring ring;
	struct colibri_submit s;
	uint32_t *toks = calloc(N_LONG, 4);
	int f, res;

	f = session("m", N_LONG, 0, &a);
	ASSERT_LE(0, f);
	test_tokens(toks, N_LONG, a.vocab_size, 6);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	fill(&s, toks, N_LONG, 0, NULL, 0);
	ASSERT_NE(NULL, queue_cmd(&ring, f, &s, 0));
	ASSERT_EQ(1, io_uring_submit(&ring));
	close(f);
	/* The pending command keeps the file, and so the session, alive. */
	EXPECT_EQ(1, info_now(self->fd).nr_sessions);
	res = reap(&ring, NULL);
	EXPECT_LE(0, res);
	EXPECT_GT((int)a.vocab_size, res);
	EXPECT_EQ(N_LONG, s.n_past);
	EXPECT_EQ(0, settle(self->fd, self->used));
	io_uring_queue_exit(&ring);
	free(toks);
}

/* Seconds one N_LONG-token prefill takes here (emulation is slow). */
static double long_step_time(void)
{
	struct colibri_attach a;
	struct colibri_submit s;
	uint32_t *toks = calloc(N_LONG, 4);
	int f = session("m", N_LONG, 0, &a);
	double t0, t;

	if (f < 0 || !toks)
		return -1;
	test_tokens(toks, N_LONG, a.vocab_size, 2);
	fill(&s, toks, N_LONG, 0, NULL, 0);
	t0 = now_s();
	t = colibri_dev_submit(f, &s) ? -1 : now_s() - t0;
	close(f);
	free(toks);
	return t;
}

struct thread_arg {
	struct io_uring *ring;
	int fd[2];
	struct colibri_submit s[2];
	uint32_t *toks;
};

static void *submit_and_exit(void *p)
{
	struct thread_arg *ta = p;

	for (int k = 0; k < 2; k++) {
		fill(&ta->s[k], ta->toks, N_LONG, 0, NULL, 0);
		queue_cmd(ta->ring, ta->fd[k], &ta->s[k], k);
	}
	return (void *)(long)io_uring_submit(ta->ring);
}

/*
 * A thread submits two steps and exits: its steps are cancelled (io_uring
 * ties requests to their task), and another thread reaps -ECANCELED.
 */
TEST_F(model, submitting_thread_exit_cancels_its_steps)
{
	struct colibri_attach a;
	struct thread_arg ta = { 0 };
	struct io_uring ring;
	struct colibri_submit x;
	pthread_t th;
	void *ret;
	double ref = long_step_time(), t0, t;
	uint64_t ud;
	int k, res;

	ASSERT_LT(0, ref);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	ta.ring = &ring;
	ta.toks = calloc(N_LONG, 4);
	for (k = 0; k < 2; k++) {
		ta.fd[k] = session("m", N_LONG, 0, &a);
		ASSERT_LE(0, ta.fd[k]);
	}
	test_tokens(ta.toks, N_LONG, a.vocab_size, 11);
	t0 = now_s();
	ASSERT_EQ(0, pthread_create(&th, NULL, submit_and_exit, &ta));
	ASSERT_EQ(0, pthread_join(th, &ret));
	ASSERT_EQ(2, (long)ret);
	for (k = 0; k < 2; k++) {
		res = reap(&ring, &ud);
		EXPECT_EQ(-ECANCELED, res) TH_LOG("step %llu", (unsigned long long)ud);
	}
	t = now_s() - t0;
	TH_LOG("two %d-token steps (%.2f s each) cancelled in %.3f s", N_LONG, ref, t);
	EXPECT_GT(ref, t);
	/* A cancelled step resets its sequence; the session works on. */
	for (k = 0; k < 2; k++) {
		fill(&x, ta.toks, 3, 0, NULL, 0);
		EXPECT_EQ(0, ioctl_when_free(ta.fd[k], &x));
		EXPECT_EQ(3, x.n_past);
		close(ta.fd[k]);
	}
	io_uring_queue_exit(&ring);
	free(ta.toks);
}

/*
 * The submitter dies with steps in flight (kill -9, and a plain exit): it
 * exits promptly (6.1 cancels nothing for it: the module must notice), and
 * everything is freed.
 */
static void die_with_steps_in_flight(struct __test_metadata *_metadata, int fd,
				     unsigned long long used, int by_kill)
{
	double ref = long_step_time(), t0, t1, t2;
	int pfd[2], st;
	pid_t pid;

	ASSERT_LT(0, ref);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct colibri_attach a;
		struct io_uring ring;
		static struct colibri_submit s[4];
		uint32_t *toks = calloc(N_LONG, 4);
		int f[4], k;

		if (io_uring_queue_init(8, &ring, 0))
			_exit(50);
		for (k = 0; k < 4; k++) {
			f[k] = session("m", N_LONG, 0, &a);
			if (f[k] < 0)
				_exit(51);
		}
		test_tokens(toks, N_LONG, a.vocab_size, 8);
		for (k = 0; k < 4; k++) {
			fill(&s[k], toks, N_LONG, 0, NULL, 0);
			if (k == 3)
				break;	/* for libcolibri's ring below */
			queue_cmd(&ring, f[k], &s[k], k);
		}
		if (io_uring_submit(&ring) != 3)
			_exit(52);
		if (!by_kill) {
			/* libcolibri's ring too (DEFER_TASKRUN where there is one). */
			struct colibri_ring *r;

			if (colibri_ring_create(&r, 4) || colibri_ring_queue(r, f[3], &s[3], 9) ||
			    colibri_ring_submit(r) != 1)
				_exit(55);
		}
		if (write(pfd[1], "a", 1) != 1)
			_exit(53);
		if (!by_kill)
			_exit(0);	/* with the rings, the files, four steps */
		reap(&ring, NULL);	/* blocks in io_uring_enter until killed */
		pause();
		_exit(54);
	}
	{
		char c;

		ASSERT_EQ(1, read(pfd[0], &c, 1));
	}
	t0 = now_s();
	close(pfd[0]);
	close(pfd[1]);
	usleep(30 * 1000);
	if (by_kill)
		kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	t1 = now_s();
	if (by_kill) {
		EXPECT_TRUE(WIFSIGNALED(st));
	} else {
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
	EXPECT_EQ(0, settle(fd, used));
	t2 = now_s();
	TH_LOG("%s with 3-4 steps of %d tokens (%.2f s each) in flight: gone in %.3f s, freed in %.3f s",
	       by_kill ? "killed" : "exited", N_LONG, ref, t1 - t0, t2 - t0);
	/* Run to their end, the three would take 3 * ref: they were stopped. */
	EXPECT_GT(ref, t2 - t0);
}

TEST_F(model, submitter_killed_with_steps_in_flight)
{
	die_with_steps_in_flight(_metadata, self->fd, self->used, 1);
}

TEST_F(model, submitter_exits_with_steps_in_flight)
{
	die_with_steps_in_flight(_metadata, self->fd, self->used, 0);
}

TEST_HARNESS_MAIN
