// SPDX-License-Identifier: GPL-2.0-only
/*
 * accel_test.c - routed experts on an accelerator: colibri.ko's offload
 * interface (kmod/colibri_accel.h) driven by the reference accelerator
 * module, tests/accel/colibri_refaccel.c, which this program loads and
 * unloads itself (finit_module/delete_module).
 *
 * What must hold: whatever the accelerator does (computes, fails, refuses,
 * is too slow, goes away mid-work, comes back), every logit is bit for bit
 * what the CPU path alone gives; and the counters, colibri's per model and
 * per binding and refaccel's own, show that the work really went where it
 * was supposed to.  The reference logits are those of the same sequence
 * run by the same kernel without refaccel loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define PROMPT 20	/* a prefill: experts of several rows */
#define DECODE 5	/* then one-token steps */
#define ROWS (DECODE + 1)
#define NPROC 3		/* decode loops running while refaccel comes and goes */

#define RA_MOD "colibri_refaccel"
#define RA_SYS "/sys/module/" RA_MOD
#define COLIBRI_PARAMS "/sys/module/colibri/parameters/"

/* Every MoE fixture tests/vm/make-fixtures writes. */
static const char *const moe_fixtures[] = {
	"mixtral-f32", "mixtral-f16", "mixtral-bf16", "mixtral-q8_0", "mixtral-q4_0",
	"qwen2_moe-f32", "qwen3_moe-f32", "qwen3_moe-q8_0", "olmoe-f32",
};

/* --- the module ----------------------------------------------------------- */

/* build/kmod/RELEASE/accel/colibri_refaccel.ko, next to colibri.ko. */
static int ra_path(char *path, size_t len)
{
	const char *ko = getenv("COLIBRI_KO"), *b = getenv("COLIBRI_BUILD");
	struct utsname u;

	if (ko && strrchr(ko, '/')) {
		snprintf(path, len, "%.*s/accel/" RA_MOD ".ko", (int)(strrchr(ko, '/') - ko), ko);
	} else {
		uname(&u);
		snprintf(path, len, "%s/kmod/%s/accel/" RA_MOD ".ko", b ? b : "build", u.release);
	}
	return access(path, R_OK) ? -errno : 0;
}

static int ra_loaded(void)
{
	return !access(RA_SYS, F_OK);
}

/* finit_module() with @params; 0 or -errno. */
static int ra_load(const char *params)
{
	char path[4096];
	int fd, ret;

	ret = ra_path(path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* delete_module(): waits inside the kernel for the jobs refaccel holds. */
static int mod_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

static int ra_set(const char *param, long long v)
{
	char path[256], val[32];

	snprintf(path, sizeof(path), RA_SYS "/parameters/%s", param);
	snprintf(val, sizeof(val), "%lld", v);
	return write_str(path, val);
}

static long long ra_get(const char *param)
{
	char path[256];

	snprintf(path, sizeof(path), RA_SYS "/parameters/%s", param);
	return vm_read_num(path);
}

static int set_timeout_ms(long long v)
{
	char val[32];

	snprintf(val, sizeof(val), "%lld", v);
	return write_str(COLIBRI_PARAMS "accel_timeout_ms", val);
}

/* Is @model bound to refaccel (its sysfs directory there)? */
static int bound(const char *model)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/kernel/colibri/models/%s/accel/refaccel", model);
	return !access(path, F_OK);
}

/* --- counters ------------------------------------------------------------- */

struct counts {
	long long cpu, offloaded;			/* the model's */
	long long jobs, failed, timeouts, refused;	/* the binding's */
	long long done, rfailed, rrefused;		/* refaccel's own */
};

static long long acc_attr(const char *model, const char *attr)
{
	char a[128];

	snprintf(a, sizeof(a), "accel/refaccel/%s", attr);
	return vm_model_attr(model, a);
}

static void counts(const char *model, struct counts *c)
{
	c->cpu = vm_model_attr(model, "experts_cpu");
	c->offloaded = vm_model_attr(model, "experts_offloaded");
	c->jobs = acc_attr(model, "jobs");
	c->failed = acc_attr(model, "failed");
	c->timeouts = acc_attr(model, "timeouts");
	c->refused = acc_attr(model, "refused");
	c->done = ra_get("jobs_done");
	c->rfailed = ra_get("jobs_failed");
	c->rrefused = ra_get("jobs_refused");
}

/* Waits (up to @ms) until refaccel holds no job of @model any more. */
static int settle(const char *model, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (acc_attr(model, "inflight") == 0)
			return 0;
		usleep(10 * 1000);
	}
	return -ETIMEDOUT;
}

/* --- runs ----------------------------------------------------------------- */

static int session(const char *model, unsigned int *vocab)
{
	struct colibri_attach a;
	int s = colibri_dev_open(), ret;

	if (s < 0)
		return s;
	ret = colibri_dev_attach(s, model, 64, 0, &a);
	if (ret) {
		close(s);
		return ret;
	}
	if (vocab)
		*vocab = a.vocab_size;
	return s;
}

static int submit(int s, const uint32_t *toks, unsigned int n, unsigned int flags,
		  float *logits, unsigned int vocab)
{
	struct colibri_submit sub;

	memset(&sub, 0, sizeof(sub));
	sub.flags = flags | COLIBRI_SUBMIT_LOGITS;
	sub.tokens = (uintptr_t)toks;
	sub.n_tokens = n;
	sub.logits = (uintptr_t)logits;
	sub.logits_len = vocab;
	return colibri_dev_submit(s, &sub);
}

/* A prefill of PROMPT tokens and DECODE steps: ROWS logits rows. */
static int run_seq(int s, unsigned int vocab, unsigned int salt, float *rows)
{
	uint32_t t[PROMPT + DECODE];
	int ret;

	test_tokens(t, PROMPT + DECODE, vocab, salt);
	ret = submit(s, t, PROMPT, COLIBRI_SUBMIT_RESET, rows, vocab);
	for (int j = 1; j <= DECODE && !ret; j++)
		ret = submit(s, &t[PROMPT + j - 1], 1, 0, rows + (size_t)j * vocab, vocab);
	return ret;
}

/* The first differing row of two runs, or -1. */
static int first_diff(const float *a, const float *b, unsigned int vocab)
{
	for (int j = 0; j < ROWS; j++)
		if (memcmp(a + (size_t)j * vocab, b + (size_t)j * vocab, vocab * sizeof(float)))
			return j;
	return -1;
}

/*
 * The models the tests load, unloaded without waiting: a session left open
 * by a failed test must not hang the cleanup (the model then goes with the
 * test process, or at the latest at program exit, below).
 */
static void unload_models(int fd)
{
	static const char *const names[] = { "acc", "acce", "accf" };

	for (unsigned int i = 0; i < ARRAY_SIZE(names); i++)
		colibri_dev_unload(fd, names[i], 0);
}

/*
 * A test killed by the harness' timeout skips its teardown: the program
 * itself leaves nothing loaded behind it, or colibri could not be unloaded
 * after the run (and the programs after this one would run with bindings).
 */
static pid_t main_pid;

static void __attribute__((constructor)) note_main(void)
{
	main_pid = getpid();
}

static void __attribute__((destructor)) leave_clean(void)
{
	int fd;

	if (getpid() != main_pid)
		return;
	if (ra_loaded() && mod_unload(RA_MOD))
		fprintf(stderr, "# accel_test: cannot unload " RA_MOD ": %s\n", strerror(errno));
	fd = colibri_dev_open();
	if (fd >= 0) {
		unload_models(fd);
		close(fd);
	}
}

/*
 * Waits up to @ms for mem_used to reach @want (with @want 0: to stop
 * changing for 200 ms).  Return: mem_used at the end.
 */
static unsigned long long settle_mem(int fd, unsigned long long want, int ms)
{
	unsigned long long now = info_now(fd).mem_used, last = now;
	int still = 0;

	for (int t = 0; t < ms; t += 20) {
		if (want ? now == want : still >= 200)
			break;
		usleep(20000);
		now = info_now(fd).mem_used;
		still = now == last ? still + 20 : 0;
		last = now;
	}
	return now;
}

/* --- the fixture ---------------------------------------------------------- */

FIXTURE(accel) {
	int fd;
	unsigned long long used0;	/* mem_used before the test */
	long long timeout0;
	unsigned int vocab;
	float *ref, *got;
};

FIXTURE_SETUP(accel)
{
	char path[4096];
	int ret;

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ret = ra_path(path, sizeof(path));
	ASSERT_EQ(0, ret) TH_LOG("%s: %s (run make modules)", path, strerror(-ret));
	/* What a test that died may have left behind. */
	if (ra_loaded())
		ASSERT_EQ(0, mod_unload(RA_MOD));
	unload_models(self->fd);
	/* a previous program's last sessions may still be ending */
	settle_mem(self->fd, 0, 5000);
	self->used0 = info_now(self->fd).mem_used;
	self->timeout0 = vm_modparam("accel_timeout_ms");
	ASSERT_LT(0, self->timeout0) TH_LOG("colibri has no accel_timeout_ms parameter");
	/*
	 * Only timed_out_jobs_run_on_the_cpu is about the deadline, and it sets
	 * its own.  For the others a job must never be late: under TCG, with
	 * the module capped to scalar code on a busy host, one bf16 expert job
	 * of refaccel took more than the default 1 s (refused_jobs_run_on_the_cpu
	 * saw 2 timeouts on 6.12), so give them a deadline no job reaches.
	 */
	ASSERT_EQ(0, set_timeout_ms(120000));
}

FIXTURE_TEARDOWN(accel)
{
	if (ra_loaded())
		EXPECT_EQ(0, mod_unload(RA_MOD));
	if (self->timeout0 > 0)
		set_timeout_ms(self->timeout0);
	unload_models(self->fd);
	/*
	 * Everything the test pinned (models, sessions, staging buffers of
	 * its bindings) is freed, if not at once then as the scheduler lets
	 * go of the last requests of killed children: the next program's
	 * accounting must start from where this one did.
	 */
	EXPECT_EQ(self->used0, settle_mem(self->fd, self->used0, 10000));
	free(self->ref);
	free(self->got);
	close(self->fd);
}

/*
 * Loads fixture @name as model "acc" and runs the sequence without
 * refaccel: self->ref.  Leaves the session open in *@s.
 */
static int reference(FIXTURE_DATA(accel) *self, const char *name, int *s)
{
	char path[4096];

	if (fixture(name, path, sizeof(path)))
		return -ENOENT;
	if (colibri_dev_load(self->fd, path, "acc", NULL, NULL))
		return -EIO;
	*s = session("acc", &self->vocab);
	if (*s < 0)
		return *s;
	free(self->ref);
	free(self->got);
	self->ref = calloc((size_t)ROWS * self->vocab, sizeof(float));
	self->got = calloc((size_t)ROWS * self->vocab, sizeof(float));
	if (!self->ref || !self->got)
		return -ENOMEM;
	return run_seq(*s, self->vocab, 1, self->ref);
}

/*
 * a. Every MoE fixture, every weight type: with refaccel computing, the
 * logits are the CPU path's, every expert went through refaccel (as many
 * as the CPU ran without it), and the three sets of counters agree.
 */
TEST_F(accel, offloaded_logits_equal_cpu_on_every_moe_fixture)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(moe_fixtures); i++) {
		const char *name = moe_fixtures[i];
		struct counts c1, c2;
		long long cpu_ref;
		int s, row;

		ASSERT_FALSE(ra_loaded());
		ASSERT_EQ(0, reference(self, name, &s)) TH_LOG("%s", name);
		/* Without an accelerator, the CPU ran every routed expert. */
		cpu_ref = vm_model_attr("acc", "experts_cpu");
		ASSERT_LT(0, cpu_ref) TH_LOG("%s: experts_cpu %lld", name, cpu_ref);
		EXPECT_EQ(0, vm_model_attr("acc", "experts_offloaded"));

		ASSERT_EQ(0, ra_load(""));
		ASSERT_TRUE(bound("acc")) TH_LOG("%s: loaded before refaccel, not bound", name);
		counts("acc", &c1);
		ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got)) TH_LOG("%s", name);
		ASSERT_EQ(0, settle("acc", 5000));
		counts("acc", &c2);

		row = first_diff(self->ref, self->got, self->vocab);
		EXPECT_EQ(-1, row) TH_LOG("%s: logits row %d differ with refaccel", name, row);
		EXPECT_LT(0, c2.jobs - c1.jobs) TH_LOG("%s: no job went to refaccel", name);
		EXPECT_EQ(c2.jobs - c1.jobs, c2.offloaded - c1.offloaded) TH_LOG("%s", name);
		EXPECT_EQ(c2.jobs - c1.jobs, c2.done - c1.done) TH_LOG("%s", name);
		/* Same routing, so the same number of experts, all offloaded. */
		EXPECT_EQ(cpu_ref, (c2.offloaded - c1.offloaded) + (c2.cpu - c1.cpu))
			TH_LOG("%s", name);
		EXPECT_EQ(0, c2.cpu - c1.cpu) TH_LOG("%s: experts left on the CPU", name);
		EXPECT_EQ(0, c2.failed + c2.timeouts + c2.refused) TH_LOG("%s", name);
		EXPECT_EQ(0, c2.rfailed + c2.rrefused) TH_LOG("%s", name);
		TH_LOG("%s: %lld experts, %lld offloaded", name, cpu_ref,
		       c2.offloaded - c1.offloaded);

		close(s);
		ASSERT_EQ(0, mod_unload(RA_MOD));
		EXPECT_FALSE(bound("acc"));
		ASSERT_EQ(0, colibri_dev_unload(self->fd, "acc", 0));
	}
}

/* b. Every second job fails (with NaN in its rows): the CPU redoes it. */
TEST_F(accel, failed_jobs_run_on_the_cpu)
{
	static const char *const names[] = { "mixtral-q8_0", "mixtral-f32" };

	for (unsigned int i = 0; i < 2; i++) {
		struct counts c1, c2;
		int s, row;

		ASSERT_EQ(0, reference(self, names[i], &s));
		ASSERT_EQ(0, ra_load("fail_every=2"));
		EXPECT_EQ(2, ra_get("fail_every"));
		counts("acc", &c1);
		ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got));
		ASSERT_EQ(0, settle("acc", 5000));
		counts("acc", &c2);
		row = first_diff(self->ref, self->got, self->vocab);
		EXPECT_EQ(-1, row) TH_LOG("%s: logits row %d differ", names[i], row);
		EXPECT_LT(0, c2.failed - c1.failed);
		EXPECT_LT(0, c2.jobs - c1.jobs);
		EXPECT_EQ(c2.failed - c1.failed, c2.rfailed - c1.rfailed);
		EXPECT_EQ(c2.jobs - c1.jobs, c2.done - c1.done);
		EXPECT_EQ(c2.jobs - c1.jobs, c2.offloaded - c1.offloaded);
		EXPECT_LE(c2.failed - c1.failed, c2.cpu - c1.cpu);
		TH_LOG("%s: %lld done, %lld failed, %lld on the CPU", names[i],
		       c2.jobs - c1.jobs, c2.failed - c1.failed, c2.cpu - c1.cpu);
		close(s);
		ASSERT_EQ(0, mod_unload(RA_MOD));
		ASSERT_EQ(0, colibri_dev_unload(self->fd, "acc", 0));
	}
}

/* c. Every second offer refused (set at run time): the CPU takes them. */
TEST_F(accel, refused_jobs_run_on_the_cpu)
{
	struct counts c1, c2;
	int s, row;

	ASSERT_EQ(0, reference(self, "mixtral-bf16", &s));
	ASSERT_EQ(0, ra_load(""));
	ASSERT_EQ(0, ra_set("refuse_every", 2));
	counts("acc", &c1);
	ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got));
	ASSERT_EQ(0, settle("acc", 5000));
	counts("acc", &c2);
	row = first_diff(self->ref, self->got, self->vocab);
	EXPECT_EQ(-1, row) TH_LOG("logits row %d differ", row);
	EXPECT_LT(0, c2.refused - c1.refused);
	EXPECT_EQ(c2.refused - c1.refused, c2.rrefused - c1.rrefused);
	EXPECT_LT(0, c2.jobs - c1.jobs);
	EXPECT_EQ(c2.jobs - c1.jobs, c2.done - c1.done);
	EXPECT_LE(c2.refused - c1.refused, c2.cpu - c1.cpu);
	EXPECT_EQ(0, c2.failed + c2.timeouts);
	TH_LOG("%lld done, %lld refused, %lld on the CPU", c2.jobs - c1.jobs,
	       c2.refused - c1.refused, c2.cpu - c1.cpu);
	close(s);
}

/*
 * d. refaccel slower than accel_timeout_ms: colibri stops waiting and runs
 * the experts on the CPU; the late completions are ignored, and every job
 * refaccel took is accounted for once it finished them all.
 */
TEST_F(accel, timed_out_jobs_run_on_the_cpu)
{
	struct counts c1, c2;
	int s, row;

	ASSERT_EQ(0, reference(self, "mixtral-q8_0", &s));
	ASSERT_EQ(0, set_timeout_ms(50));
	ASSERT_EQ(50, vm_modparam("accel_timeout_ms"));
	ASSERT_EQ(0, ra_load("delay_ms=120"));
	counts("acc", &c1);
	ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got));
	/* Let the backlog drain fast now. */
	ASSERT_EQ(0, ra_set("delay_ms", 0));
	ASSERT_EQ(0, settle("acc", 30000));
	counts("acc", &c2);
	row = first_diff(self->ref, self->got, self->vocab);
	EXPECT_EQ(-1, row) TH_LOG("logits row %d differ", row);
	EXPECT_LT(0, c2.timeouts - c1.timeouts);
	EXPECT_LE(c2.timeouts - c1.timeouts, c2.cpu - c1.cpu);
	/* Every job taken was completed, in time (jobs) or not (timeouts). */
	EXPECT_EQ((c2.jobs - c1.jobs) + (c2.failed - c1.failed) + (c2.timeouts - c1.timeouts),
		  (c2.done - c1.done) + (c2.rfailed - c1.rfailed));
	TH_LOG("%lld in time, %lld timed out, %lld on the CPU", c2.jobs - c1.jobs,
	       c2.timeouts - c1.timeouts, c2.cpu - c1.cpu);

	/*
	 * Slow again, and refaccel unloaded while it still holds timed-out
	 * jobs: unloading waits for them, and the model goes on on the CPU.
	 */
	ASSERT_EQ(0, ra_set("delay_ms", 300));
	ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got));
	EXPECT_LT(0, acc_attr("acc", "inflight"));
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ASSERT_EQ(0, mod_unload(RA_MOD));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		TH_LOG("unloading with jobs in hand took %ld ms",
		       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	}
	EXPECT_FALSE(bound("acc"));
	row = first_diff(self->ref, self->got, self->vocab);
	EXPECT_EQ(-1, row) TH_LOG("slow again: logits row %d differ", row);
	memset(self->got, 0, (size_t)ROWS * self->vocab * sizeof(float));
	ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got));
	row = first_diff(self->ref, self->got, self->vocab);
	EXPECT_EQ(-1, row) TH_LOG("after the unload: logits row %d differ", row);
	close(s);
	ASSERT_EQ(0, set_timeout_ms(self->timeout0));
}

/* What each decode loop of test e saw. */
struct loop_result {
	int ret;		/* first error */
	int bad;		/* runs whose logits differed */
	int runs;
};

/*
 * e. NPROC processes run decode loops while refaccel is unloaded under
 * them, loaded again, and colibri is asked to unload (and refuses): every
 * run of every process equals the reference, and none sees an error.
 */
TEST_F(accel, unload_and_reload_under_load)
{
	char path[4096];
	size_t rsz;
	int *stop;
	struct loop_result *res;
	float *refs;
	pid_t pids[NPROC];
	long long j0, j1, j2;
	int i, st;

	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(self->fd, path, "acce", NULL, NULL));
	/* The references: each process its own sequence, refaccel not loaded. */
	{
		int s = session("acce", &self->vocab);

		ASSERT_LE(0, s);
		rsz = (size_t)ROWS * self->vocab * sizeof(float);
		refs = mmap(NULL, NPROC * rsz + 4096, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, refs);
		for (i = 0; i < NPROC; i++)
			ASSERT_EQ(0, run_seq(s, self->vocab, 10 + i,
					     refs + (size_t)i * ROWS * self->vocab));
		close(s);
	}
	stop = (int *)((char *)refs + NPROC * rsz);
	res = (struct loop_result *)((char *)refs + NPROC * rsz + 64);
	ASSERT_EQ(0, ra_load("delay_ms=2"));
	ASSERT_TRUE(bound("acce"));

	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			float *got = calloc((size_t)ROWS * self->vocab, sizeof(float));
			struct loop_result *r = &res[i];
			int s;

			/* A test that fails stops its loops too. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			s = session("acce", NULL);

			if (s < 0 || !got) {
				r->ret = s < 0 ? s : -ENOMEM;
				_exit(1);
			}
			/* At least three runs each, then until told to stop. */
			while (!r->ret &&
			       (r->runs < 3 || !__atomic_load_n(stop, __ATOMIC_ACQUIRE))) {
				int ret = run_seq(s, self->vocab, 10 + i, got);

				if (!ret && first_diff(refs + (size_t)i * ROWS * self->vocab,
						       got, self->vocab) >= 0)
					r->bad++;
				/* The parent watches these. */
				__atomic_store_n(&r->ret, ret, __ATOMIC_RELEASE);
				__atomic_store_n(&r->runs, r->runs + 1, __ATOMIC_RELEASE);
			}
			_exit(r->ret || r->bad);
		}
	}
	/* Work reaches refaccel ... */
	j0 = acc_attr("acce", "jobs");
	for (i = 0; i < 500 && acc_attr("acce", "jobs") <= j0 + 5; i++)
		usleep(10 * 1000);
	EXPECT_LT(j0 + 5, acc_attr("acce", "jobs"));
	/* ... then it goes away under the running loops, and comes back. */
	EXPECT_EQ(0, mod_unload(RA_MOD));
	EXPECT_FALSE(ra_loaded());
	EXPECT_FALSE(bound("acce"));
	usleep(200 * 1000);
	ASSERT_EQ(0, ra_load(""));
	EXPECT_TRUE(bound("acce"));
	j1 = acc_attr("acce", "jobs");
	for (i = 0; i < 500 && acc_attr("acce", "jobs") <= j1 + 5; i++)
		usleep(10 * 1000);
	j2 = acc_attr("acce", "jobs");
	EXPECT_LT(j1 + 5, j2) TH_LOG("no work reached the reloaded refaccel");

	/* colibri cannot go while refaccel uses it, and says so at once. */
	ASSERT_TRUE(ra_loaded());
	EXPECT_EQ(0, access("/sys/module/colibri/holders/" RA_MOD, F_OK));
	{
		int ret = mod_unload("colibri");

		EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) TH_LOG("delete_module: %d", ret);
	}
	EXPECT_EQ(0, access("/sys/module/colibri", F_OK));
	/* ... and the loops go on: each finishes at least one more run. */
	{
		int runs[NPROC], more = 0;

		for (i = 0; i < NPROC; i++)
			runs[i] = __atomic_load_n(&res[i].runs, __ATOMIC_ACQUIRE);
		for (int k = 0; k < 3000 && more < NPROC; k++) {
			usleep(10 * 1000);
			for (i = 0, more = 0; i < NPROC; i++)
				more += __atomic_load_n(&res[i].runs, __ATOMIC_ACQUIRE) > runs[i] ||
					__atomic_load_n(&res[i].ret, __ATOMIC_ACQUIRE);
		}
		EXPECT_EQ(NPROC, more) TH_LOG("the loops stopped after the colibri unload attempt");
	}

	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("process %d: error %d, %d of %d runs differ", i, res[i].ret,
			       res[i].bad, res[i].runs);
		EXPECT_EQ(0, res[i].ret);
		EXPECT_EQ(0, res[i].bad);
		TH_LOG("process %d: %d runs", i, res[i].runs);
	}
	/* The work after the reload went through refaccel too. */
	EXPECT_LT(0, ra_get("jobs_done"));
	ASSERT_EQ(0, settle("acce", 5000));
	{
		struct counts c;

		/* Module and binding are new since the reload: same origin. */
		counts("acce", &c);
		EXPECT_EQ(c.jobs + c.failed + c.timeouts, c.done + c.rfailed);
	}
	munmap(refs, NPROC * rsz + 4096);
	ASSERT_EQ(0, mod_unload(RA_MOD));
	ASSERT_EQ(0, colibri_dev_unload(self->fd, "acce", 0));
}

/*
 * f. A model loaded while refaccel is registered is bound at once; a bound
 * model unloaded (UNLOAD with WAIT) while a session computes is unbound
 * and its sessions revoked, and refaccel sees nothing of it after.
 */
TEST_F(accel, models_bind_on_load_and_unbind_on_unload)
{
	char path[4096];
	long long d0, d1;
	pid_t unloader;
	int s, row, st, s2, ret;

	/* The reference, then the model goes. */
	ASSERT_EQ(0, reference(self, "mixtral-f32", &s));
	close(s);
	ASSERT_EQ(0, colibri_dev_unload(self->fd, "acc", 0));

	ASSERT_EQ(0, ra_load(""));
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(self->fd, path, "accf", NULL, NULL));
	EXPECT_TRUE(bound("accf")) TH_LOG("a model loaded after refaccel is not bound");
	s = session("accf", NULL);
	ASSERT_LE(0, s);
	s2 = session("accf", NULL);
	ASSERT_LE(0, s2);
	d0 = ra_get("jobs_done");
	ASSERT_EQ(0, run_seq(s, self->vocab, 1, self->got));
	row = first_diff(self->ref, self->got, self->vocab);
	EXPECT_EQ(-1, row) TH_LOG("logits row %d differ", row);
	EXPECT_LT(0, acc_attr("accf", "jobs"));
	EXPECT_LT(d0, ra_get("jobs_done"));

	/*
	 * Unload (revoking the sessions) while one session computes: the
	 * model is unbound and unpublished, the step in flight either ends
	 * first (and is exact) or says -ENODEV, and nothing of the model
	 * reaches refaccel afterwards.
	 */
	unloader = fork();
	ASSERT_LE(0, unloader);
	if (!unloader) {
		usleep(5 * 1000);
		_exit(colibri_dev_unload(self->fd, "accf", 1) ? 1 : 0);
	}
	memset(self->got, 0, (size_t)ROWS * self->vocab * sizeof(float));
	ret = run_seq(s2, self->vocab, 1, self->got);
	EXPECT_TRUE(ret == 0 || ret == -ENODEV) TH_LOG("during unload: %s", strerror(-ret));
	row = first_diff(self->ref, self->got, self->vocab);
	EXPECT_TRUE(ret || row == -1) TH_LOG("during unload: logits row %d differ", row);
	ASSERT_EQ(unloader, waitpid(unloader, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(0, colibri_dev_list(self->fd, NULL, 0)) TH_LOG("model not unpublished");
	EXPECT_FALSE(bound("accf"));

	/* Unpublished, unbound, its sessions revoked. */
	d1 = ra_get("jobs_done");
	EXPECT_EQ(-ENODEV, run_seq(s, self->vocab, 1, self->got));
	EXPECT_EQ(-ENODEV, run_seq(s2, self->vocab, 1, self->got));
	EXPECT_EQ(d1, ra_get("jobs_done")) TH_LOG("refaccel still got jobs after unbind");
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	close(s);
	close(s2);
	ASSERT_EQ(0, mod_unload(RA_MOD));
}

TEST_HARNESS_MAIN
