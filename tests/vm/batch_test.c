// SPDX-License-Identifier: GPL-2.0-only
/*
 * batch_test.c - continuous batching: the sessions of a model share one
 * engine and the scheduler runs all their pending requests in one forward
 * pass.  Whatever runs beside a session, its logits and tokens must be
 * exactly those it gets alone (and those of the in-process engine), and
 * the model's counters must show that passes did carry several requests.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "colibri_uring.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define MODEL "b"
#define NS 6		/* concurrent sessions */
#define STEPS 12	/* decode steps after each prompt */
#define MAX_P 130	/* longest prompt */

/* One session's work: a prompt of @plen tokens, then STEPS decode steps. */
struct spec {
	unsigned int plen;
	unsigned int salt;
	int uring;		/* submit through io_uring, else the ioctl */
};

/* Mixed: short and long prompts (split into pieces), ioctl and io_uring. */
static const struct spec specs[NS] = {
	{ 1, 1, 0 }, { 9, 2, 1 }, { 70, 3, 0 }, { MAX_P, 4, 1 }, { 33, 5, 0 }, { 64, 6, 1 },
};

/* What a session saw: STEPS + 1 logits rows and sampled tokens. */
struct result {
	int ret;
	uint32_t tokens[STEPS + 1];
	float rows[];		/* [STEPS + 1][vocab] */
};

static size_t result_size(unsigned int vocab)
{
	return sizeof(struct result) + (size_t)(STEPS + 1) * vocab * sizeof(float);
}

static struct result *result_at(void *base, unsigned int vocab, int i)
{
	return (struct result *)((char *)base + i * result_size(vocab));
}

static int step(int fd, struct colibri_ring *ring, const uint32_t *toks, unsigned int n,
		unsigned int flags, float *logits, unsigned int vocab, uint64_t seed,
		uint32_t *token)
{
	struct colibri_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.flags = flags | COLIBRI_SUBMIT_LOGITS;
	s.tokens = (uintptr_t)toks;
	s.n_tokens = n;
	s.logits = (uintptr_t)logits;
	s.logits_len = vocab;
	/* Each session samples with its own parameters. */
	s.temperature_milli = 700;
	s.top_k = 40;
	s.seed = seed;
	ret = ring ? colibri_ring_step(ring, fd, &s) : colibri_dev_submit(fd, &s);
	if (!ret)
		*token = s.token;
	return ret;
}

/* Runs @sp's prompt and decode steps on the attached @fd into @r. */
static int run_session(int fd, const struct spec *sp, unsigned int vocab, struct result *r)
{
	struct colibri_ring *ring = NULL;
	uint32_t prompt[MAX_P];
	int ret;

	if (sp->uring && colibri_ring_create(&ring, 4))
		return -ENOMEM;
	test_tokens(prompt, sp->plen, vocab, sp->salt);
	ret = step(fd, ring, prompt, sp->plen, COLIBRI_SUBMIT_RESET, r->rows, vocab,
		   sp->salt, &r->tokens[0]);
	for (int j = 1; j <= STEPS && !ret; j++)
		ret = step(fd, ring, &r->tokens[j - 1], 1, 0, r->rows + (size_t)j * vocab,
			   vocab, sp->salt, &r->tokens[j]);
	if (ring)
		colibri_ring_destroy(ring);
	return ret;
}

static int attach(int *fd, unsigned int ctx, struct colibri_attach *a)
{
	*fd = colibri_dev_open();
	if (*fd < 0)
		return *fd;
	return colibri_dev_attach(*fd, MODEL, ctx, 0, a);
}

FIXTURE(batch) {
	int fd;
	char path[4096];
	unsigned int vocab;
	unsigned long long used0;
	void *alone;		/* NS results, each session run alone */
};

FIXTURE_SETUP(batch)
{
	struct colibri_attach a;
	int s, i;

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fixture("mixtral-q8_0", self->path, sizeof(self->path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", self->path);
	/* A test that died in its setup may have left the model behind. */
	colibri_dev_unload(self->fd, MODEL, 1);
	self->used0 = info_now(self->fd).mem_used;
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, MODEL, NULL, NULL));
	/* The in-process engine must run the kernel's ISA level. */
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(self->fd).isa_level), 1);

	/* Each session alone, one after the other: the reference. */
	ASSERT_EQ(0, attach(&s, 256, &a));
	self->vocab = a.vocab_size;
	close(s);
	self->alone = mmap(NULL, NS * result_size(self->vocab), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->alone);
	for (i = 0; i < NS; i++) {
		struct result *r = result_at(self->alone, self->vocab, i);

		ASSERT_EQ(0, attach(&s, 256, NULL));
		ASSERT_EQ(0, run_session(s, &specs[i], self->vocab, r)) TH_LOG("session %d", i);
		close(s);
	}
}

FIXTURE_TEARDOWN(batch)
{
	munmap(self->alone, NS * result_size(self->vocab));
	colibri_dev_unload(self->fd, MODEL, 1);
	close(self->fd);
}

/* The in-process engine agrees with what a session saw alone. */
TEST_F(batch, alone_equals_in_process_engine)
{
	uint32_t seq[MAX_P + STEPS];
	float *ref = calloc(self->vocab, sizeof(float));

	ASSERT_NE(NULL, ref);
	for (int i = 0; i < NS; i++) {
		const struct spec *sp = &specs[i];
		struct result *r = result_at(self->alone, self->vocab, i);

		test_tokens(seq, sp->plen, self->vocab, sp->salt);
		/* The prompt's logits, then those after every decode step. */
		ASSERT_EQ(0, user_logits(self->path, seq, sp->plen, ref, 64));
		EXPECT_EQ(0, memcmp(ref, r->rows, self->vocab * sizeof(float)))
			TH_LOG("session %d prompt", i);
		memcpy(seq + sp->plen, r->tokens, STEPS * sizeof(uint32_t));
		ASSERT_EQ(0, user_logits(self->path, seq, sp->plen + STEPS, ref, 64));
		EXPECT_EQ(0, memcmp(ref, r->rows + (size_t)STEPS * self->vocab,
				    self->vocab * sizeof(float)))
			TH_LOG("session %d after %d steps", i, STEPS);
	}
	free(ref);
}

/*
 * NS processes at once, prefills and decode steps mixed, ioctl and
 * io_uring: every logits row and token equals the session's alone, and
 * fewer forward passes ran than requests were submitted.
 */
TEST_F(batch, concurrent_sessions_equal_alone_and_are_batched)
{
	void *got = mmap(NULL, NS * result_size(self->vocab), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long slots = vm_modparam("batch_slots"), f0, f1, t0, t1, bmax;
	int ready[2], go[2], i, j, st, pieces = 0;
	pid_t pids[NS];

	ASSERT_NE(MAP_FAILED, got);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < NS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			struct result *r = result_at(got, self->vocab, i);
			int s;
			char c;

			close(go[1]);
			r->ret = attach(&s, 256, NULL);
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(2);
			if (!r->ret)
				r->ret = run_session(s, &specs[i], self->vocab, r);
			_exit(r->ret ? 1 : 0);
		}
		pieces += (specs[i].plen + 63) / 64 + STEPS;
	}
	close(go[0]);
	for (i = 0; i < NS; i++) {
		char c;

		ASSERT_EQ(1, read(ready[0], &c, 1));
	}
	/* Everyone attached: one engine for all (when batch_slots allows). */
	EXPECT_EQ(slots < NS ? slots : NS, vm_model_attr(MODEL, "shared_sessions"));
	f0 = vm_model_attr(MODEL, "forwards");
	t0 = vm_model_attr(MODEL, "tokens");
	for (i = 0; i < NS; i++)
		ASSERT_EQ(1, write(go[1], "g", 1));
	for (i = 0; i < NS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("session %d: %d", i,
						     result_at(got, self->vocab, i)->ret);
	}
	f1 = vm_model_attr(MODEL, "forwards");
	t1 = vm_model_attr(MODEL, "tokens");
	bmax = vm_model_attr(MODEL, "batch_max");

	for (i = 0; i < NS; i++) {
		struct result *a = result_at(self->alone, self->vocab, i);
		struct result *b = result_at(got, self->vocab, i);

		EXPECT_EQ(0, memcmp(a->tokens, b->tokens, sizeof(a->tokens)))
			TH_LOG("session %d: tokens differ", i);
		for (j = 0; j <= STEPS; j++) {
			EXPECT_EQ(0, memcmp(a->rows + (size_t)j * self->vocab,
					    b->rows + (size_t)j * self->vocab,
					    self->vocab * sizeof(float)))
				TH_LOG("session %d step %d: logits differ", i, j);
		}
	}
	/* Every token ran exactly once ... */
	{
		long long toks = 0;

		for (i = 0; i < NS; i++)
			toks += specs[i].plen + STEPS;
		EXPECT_EQ(toks, t1 - t0);
	}
	/* ... in fewer passes than requests: passes carried several sessions. */
	TH_LOG("%d requests, %lld forward passes, at most %lld requests in one",
	       pieces, f1 - f0, bmax);
	if (slots >= 2) {
		EXPECT_LT(f1 - f0, pieces);
		EXPECT_LE(2, bmax);
	}
	munmap(got, NS * result_size(self->vocab));
	close(ready[0]);
	close(ready[1]);
	close(go[1]);
}

/*
 * More sessions than slots: the extra one gets an engine of its own (and
 * says so in its bytes), computes the same, and everything is freed.
 */
TEST_F(batch, full_slots_fall_back_to_private_engine)
{
	long long slots = vm_modparam("batch_slots");
	struct colibri_attach a0, a;
	struct result *r = malloc(result_size(self->vocab));
	int fds[66], n;

	ASSERT_NE(NULL, r);
	ASSERT_LE(0, slots);
	ASSERT_GE(64, slots);
	for (n = 0; n <= slots; n++)
		ASSERT_EQ(0, attach(&fds[n], 256, n ? &a : &a0)) TH_LOG("session %d", n);
	EXPECT_EQ(slots, vm_model_attr(MODEL, "shared_sessions"));
	if (slots) {
		EXPECT_LT(0, vm_model_attr(MODEL, "shared_bytes"));
		/*
		 * The shared engine is pinned once, not per session.  A
		 * session's io buffers are unpinned kernel memory: a shared
		 * session pins nothing of its own, and the private one (of
		 * the same shape, so of the same io buffers) its engine.
		 */
		EXPECT_LT(a0.bytes, a.bytes);
		EXPECT_EQ(self->used0 + vm_model_attr(MODEL, "bytes") +
			  vm_model_attr(MODEL, "shared_bytes") + (a.bytes - a0.bytes),
			  info_now(self->fd).mem_used);
	}
	/* The private one, the first shared one: both exact. */
	for (int k = 0; k < 2; k++) {
		int s = k ? fds[slots] : fds[0];
		struct result *want = result_at(self->alone, self->vocab, 3);

		ASSERT_EQ(0, run_session(s, &specs[3], self->vocab, r));
		EXPECT_EQ(0, memcmp(want->tokens, r->tokens, sizeof(r->tokens)));
		EXPECT_EQ(0, memcmp(want->rows, r->rows, (STEPS + 1) * self->vocab * sizeof(float)));
	}
	while (n--)
		close(fds[n]);
	EXPECT_EQ(0, vm_model_attr(MODEL, "shared_sessions"));
	EXPECT_EQ(0, vm_model_attr(MODEL, "shared_bytes"));
	EXPECT_EQ(self->used0 + vm_model_attr(MODEL, "bytes"), info_now(self->fd).mem_used);
	free(r);
}

/*
 * Once a SUBMIT has returned (ioctl) or completed (io_uring), closing the
 * file frees the session there and then: its buffers, its slot, and the
 * shared engine with its last session.  Nothing of it may outlive the
 * close because the scheduler still held the finished request.
 */
TEST_F(batch, session_memory_goes_when_close_returns)
{
	unsigned long long want = self->used0 + vm_model_attr(MODEL, "bytes");
	float *l = calloc(self->vocab, sizeof(float));
	struct colibri_ring *ring = NULL;
	int late = 0, i;

	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, colibri_ring_create(&ring, 4));
	ASSERT_EQ(want, info_now(self->fd).mem_used);
	for (i = 0; i < 200; i++) {
		uint32_t t = i % self->vocab, got;
		int s;

		ASSERT_EQ(0, attach(&s, 256, NULL));
		ASSERT_EQ(0, step(s, i % 2 ? ring : NULL, &t, 1, COLIBRI_SUBMIT_RESET, l,
				  self->vocab, i, &got)) TH_LOG("cycle %d", i);
		close(s);
		if (info_now(self->fd).mem_used != want || info_now(self->fd).nr_sessions) {
			TH_LOG("cycle %d (%s): %llu bytes, %u sessions after close", i,
			       i % 2 ? "io_uring" : "ioctl",
			       (unsigned long long)info_now(self->fd).mem_used - want,
			       info_now(self->fd).nr_sessions);
			late++;
		}
	}
	EXPECT_EQ(0, late);
	colibri_ring_destroy(ring);
	free(l);
}

/* Latencies of a run of SUBMITs. */
struct lat {
	double max, sum;
	int n, ret;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * A session killed mid-prefill, while it shares passes with another: its
 * rows are dropped from the passes it was in, and the other's results stay
 * exact.
 */
TEST_F(batch, killed_neighbour_leaves_a_session_exact)
{
	pid_t victim, runner;
	int st, ready[2];
	char c;

	ASSERT_EQ(0, pipe(ready));
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		uint32_t toks[MAX_P];
		float *l = calloc(self->vocab, sizeof(float));
		uint32_t t;
		int s;

		if (attach(&s, 256, NULL) || write(ready[1], "v", 1) != 1)
			_exit(2);
		test_tokens(toks, MAX_P, self->vocab, 77);
		for (;;)
			step(s, NULL, toks, MAX_P, COLIBRI_SUBMIT_RESET, l, self->vocab, 1, &t);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	runner = fork();
	ASSERT_LE(0, runner);
	if (!runner) {
		struct result *want = result_at(self->alone, self->vocab, 3);
		struct result *r = malloc(result_size(self->vocab));
		int s, bad = 0;

		for (int rep = 0; rep < 4 && !bad; rep++) {
			if (!r || attach(&s, 256, NULL) || run_session(s, &specs[3], self->vocab, r))
				_exit(2);
			bad = memcmp(want->tokens, r->tokens, sizeof(r->tokens)) ||
			      memcmp(want->rows, r->rows, (STEPS + 1) * self->vocab * sizeof(float));
			close(s);
		}
		_exit(bad);
	}
	usleep(20 * 1000);
	kill(victim, SIGKILL);
	ASSERT_EQ(victim, waitpid(victim, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	ASSERT_EQ(runner, waitpid(runner, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(ready[0]);
	close(ready[1]);
	/* The victim's slot and the engine go with its last request. */
	for (int i = 0; i < 200 && vm_model_attr(MODEL, "shared_sessions"); i++)
		usleep(10 * 1000);
	EXPECT_EQ(0, vm_model_attr(MODEL, "shared_sessions"));
	EXPECT_EQ(self->used0 + vm_model_attr(MODEL, "bytes"), info_now(self->fd).mem_used);
}

#define V_ROUNDS 4	/* victim: a 64-token prompt and 3 decode steps, each */
#define V_ROUNDS_MAX 64	/* ... and more while fewer than MIN_ATTACKS landed */
#define MIN_ATTACKS 20
#define DEMO_MODEL "models/shakespeare-moe.colibri"	/* from the work tree */
#define N_ATTACKERS 7	/* with the victim, a shared engine's 8 slots */

/*
 * The victim's work on attached @fd, each SUBMIT timed into @l: V_ROUNDS
 * rounds, and with @attacks (the neighbours' count of interrupted steps)
 * more rounds until MIN_ATTACKS have landed, so that the attack has
 * happened however fast the machine finishes the victim's rounds.
 */
static void victim_rounds(int fd, unsigned int vocab, float *logits, struct lat *l,
			  const int *attacks)
{
	uint32_t prompt[64], t;

	for (int r = 0; (r < V_ROUNDS || (attacks && r < V_ROUNDS_MAX &&
					  __atomic_load_n(attacks, __ATOMIC_RELAXED) < MIN_ATTACKS)) &&
	     !l->ret; r++) {
		test_tokens(prompt, 64, vocab, 40 + r);
		for (int j = 0; j < 4 && !l->ret; j++) {
			double t0 = mono_s(), dt;

			l->ret = j ? step(fd, NULL, &t, 1, 0, logits, vocab, r, &t) :
				     step(fd, NULL, prompt, 64, COLIBRI_SUBMIT_RESET, logits, vocab,
					  r, &t);
			dt = mono_s() - t0;
			l->sum += dt;
			l->n++;
			if (dt > l->max)
				l->max = dt;
		}
	}
}

static void on_alarm(int sig)
{
}

/*
 * Seven neighbours on the victim's shared engine keep interrupting their
 * own 1-token steps, each 0.1-1 s after it was submitted (about a pass of
 * the victim's prefill: so the signal often lands while the step is in a
 * pass, and there is nearly always one queued when a pass starts).  The
 * victim's SUBMITs must still finish, in a time bounded by what they take
 * alone.  A pass once stopped for any abandoned request in it and ran the
 * others again from scratch: with the old code this victim finished none
 * of its 16 SUBMITs in 120 s (issue 12, item 3).  The shipped model,
 * whose 64-token pass takes most of a second under emulation: the
 * fixtures' passes are too short to be hit.
 */
TEST(interrupted_neighbour_does_not_stall_a_session)
{
	struct lat *l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	volatile int *stop = (volatile int *)(l + 2);
	int *attacks = (int *)(l + 2) + 1, *done = attacks + 1;
	int fd = colibri_dev_open(), s, st;
	struct colibri_attach a;
	pid_t attacker[N_ATTACKERS], victim;
	unsigned int vocab;
	useconds_t alarm_lo;
	float *logits;

	ASSERT_NE(MAP_FAILED, l);
	ASSERT_LE(0, fd);
	if (vm_modparam("batch_slots") < N_ATTACKERS + 1)
		SKIP(return, "batch_slots < %d: the neighbours would not share the victim's passes",
		     N_ATTACKERS + 1);
	colibri_dev_unload(fd, "starve", 1);
	ASSERT_EQ(0, colibri_dev_load(fd, DEMO_MODEL, "starve", NULL, NULL));
	/* The victim alone: its own worst case on this machine, now. */
	s = colibri_dev_open();
	ASSERT_EQ(0, colibri_dev_attach(s, "starve", 256, 0, &a));
	vocab = a.vocab_size;
	logits = calloc(vocab, sizeof(float));
	ASSERT_NE(NULL, logits);
	victim_rounds(s, vocab, logits, &l[0], NULL);
	close(s);
	ASSERT_EQ(0, l[0].ret);
	/*
	 * The neighbours' alarms: 0.1 to 1 times the victim's worst SUBMIT
	 * alone (its prefill, two passes), so that they land in a pass on a
	 * fast machine as on a slow one; 0.1 to 1 s was right for a loaded
	 * host and too late on a quiet Zen 5 (16 interrupted, 147 finished).
	 */
	alarm_lo = (useconds_t)(l[0].max * 1e5);
	if (alarm_lo < 2000)
		alarm_lo = 2000;
	if (alarm_lo > 100000)
		alarm_lo = 100000;

	for (int k = 0; k < N_ATTACKERS; k++) {
		attacker[k] = fork();
		ASSERT_LE(0, attacker[k]);
		if (attacker[k])
			continue;
		struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
		uint32_t t = 1, got;
		unsigned int seed = 12 + k;

		sigaction(SIGALRM, &sa, NULL);
		s = colibri_dev_open();
		if (colibri_dev_attach(s, "starve", 256, 0, NULL))
			_exit(2);
		while (!*stop) {
			ualarm(alarm_lo + rand_r(&seed) % (alarm_lo * 9), 0);
			if (step(s, NULL, &t, 1, COLIBRI_SUBMIT_RESET, logits, vocab, 1, &got) == -EINTR)
				__atomic_add_fetch(attacks, 1, __ATOMIC_RELAXED);
			else
				__atomic_add_fetch(done, 1, __ATOMIC_RELAXED);
			ualarm(0, 0);
		}
		_exit(0);
	}
	/* Let the attack get going, then the victim, with a deadline. */
	usleep(200 * 1000);
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		s = colibri_dev_open();
		if (colibri_dev_attach(s, "starve", 256, 0, NULL))
			_exit(2);
		victim_rounds(s, vocab, logits, &l[1], attacks);
		_exit(0);
	}
	for (int i = 0; i < 900 && waitpid(victim, &st, WNOHANG) == 0; i++)
		usleep(100 * 1000);
	if (waitpid(victim, &st, WNOHANG) == 0) {
		kill(victim, SIGKILL);
		waitpid(victim, &st, 0);
		l[1].ret = -ETIMEDOUT;
	}
	*stop = 1;
	for (int k = 0; k < N_ATTACKERS; k++)
		ASSERT_EQ(attacker[k], waitpid(attacker[k], &st, 0));
	TH_LOG("alone: %d SUBMITs, mean %.3f s, worst %.3f s", l[0].n, l[0].sum / l[0].n, l[0].max);
	TH_LOG("attacked: %d SUBMITs, mean %.3f s, worst %.3f s (%s); neighbours: %d interrupted, %d finished",
	       l[1].n, l[1].n ? l[1].sum / l[1].n : 0, l[1].max, strerror(-l[1].ret), *attacks, *done);
	EXPECT_EQ(0, l[1].ret) TH_LOG("the victim did not finish its SUBMITs in 90 s");
	EXPECT_LE(MIN_ATTACKS, *attacks)
		TH_LOG("the neighbours were hardly ever interrupted in %d rounds: no attack",
		       l[1].n / 4);
	/*
	 * Bound: a neighbour's step costs the victim at most a share of the
	 * passes it is in (a token each of the 64-token budget, so a prefill
	 * takes two passes), never a rerun.  Measured under a loaded host
	 * (load 15 on two cores), the attacked worst case was 0.8-4x the
	 * alone worst case on both kernels (0.84-2.4 s against 0.51-1.2 s);
	 * without the fix the victim finished nothing in 120 s.  Allow 8x
	 * plus 5 s.
	 */
	EXPECT_GE(8 * l[0].max + 5.0, l[1].max);
	EXPECT_EQ(0, colibri_dev_unload(fd, "starve", 1));
	close(fd);
	free(logits);
	munmap(l, 4096);
}

TEST_HARNESS_MAIN
