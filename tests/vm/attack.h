/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * attack.h - what the attack suite's programs (fuzz_test.c, storm_test.c)
 * share: one seed for a run, printed so that a failure can be replayed
 * (COLIBRI_ATTACK_SEED=N), each part's own stream derived from it, a time
 * box per part (COLIBRI_ATTACK_SECS, default 20), the processes of a part
 * (attack_fork(), part_begin(), part_end()): all dead and reaped before
 * its checks, and the checks every part ends with: the module gives back
 * all it pinned, and the kernel log stays clean.
 */
#ifndef COLIBRI_VM_ATTACK_H
#define COLIBRI_VM_ATTACK_H

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vm_helpers.h"

#define NOBODY	65534

/* xorshift64*: small, fast, and the same on every run of a seed. */
struct rng {
	uint64_t s;
};

static inline uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t below(struct rng *r, uint32_t n)
{
	return (uint32_t)((rnd(r) >> 32) * n >> 32);
}

static inline struct rng rng_of(uint64_t seed)
{
	struct rng r = { seed * 0x9E3779B97F4A7C15ULL + 1 };

	rnd(&r);
	return r;
}

static inline double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t attack_seed_v;

/*
 * The run's seed: $COLIBRI_ATTACK_SEED, or the clock's; chosen and printed
 * once per program, before the harness forks a child per test.
 */
__attribute__((constructor)) static void attack_seed_init(void)
{
	const char *e = getenv("COLIBRI_ATTACK_SEED");

	attack_seed_v = e && *e ? strtoull(e, NULL, 0) :
			(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	printf("# attack seed %llu (replay: COLIBRI_ATTACK_SEED=%llu)\n",
	       (unsigned long long)attack_seed_v, (unsigned long long)attack_seed_v);
	fflush(stdout);
}

static inline uint64_t attack_seed(void)
{
	return attack_seed_v;
}

/* Part @part's seed, printed with its name. */
static inline uint64_t part_seed(const char *part, unsigned int n)
{
	uint64_t s = attack_seed() + 0x1000003ULL * n;

	printf("# %s: seed %llu\n", part, (unsigned long long)s);
	return s;
}

/* Seconds a part may run. */
static inline double attack_secs(void)
{
	const char *e = getenv("COLIBRI_ATTACK_SECS");
	double v = e && *e ? strtod(e, NULL) : 20;

	return v > 0 ? v : 20;
}

/* Drops to @uid, a member of the device's group: no capability left. */
static inline int drop_to(uid_t uid)
{
	return vm_drop_to_member(uid);
}

static void attack_noop(int sig)
{
}

/* The process that forked this one (attack_fork()); 0 in the test process. */
static pid_t attack_parent;

/*
 * SIGKILL when the parent dies.  fork() and a change of uid clear the
 * parent-death signal, so every forked child sets it, again after
 * drop_to(); and a parent that died before the prctl() sends nothing, so
 * the child checks that it still has the parent it was forked by (an
 * orphan is the test process's by then, the subreaper: see part_begin()).
 */
static inline void attack_die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (attack_parent && getppid() != attack_parent)
		_exit(0);
}

/*
 * fork() for every process of a part, workers and what they fork: the
 * child dies with its parent (attack_die_with_parent()).
 */
static inline pid_t attack_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	if (!pid) {
		attack_parent = parent;
		attack_die_with_parent();
	}
	return pid;
}

/*
 * For a part's children: signals interrupt system calls (no SA_RESTART),
 * SIGPIPE is ignored, and the child dies with its parent, so that a
 * failed part leaves nothing attached behind it.  Call it again after a
 * change of uid, which clears the parent-death signal.
 */
static inline void attack_signals(void)
{
	struct sigaction sa = { .sa_handler = attack_noop };

	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	attack_die_with_parent();
}

/*
 * A part's processes all die with the part, and are all reaped before its
 * final checks: a process still holding a descriptor of the device, or
 * still in a call, makes "no session left" false, and one that outlives
 * the part issues its commands (LOAD of fz as root, say) into the next.
 * The parent-death signal alone does not give that: it kills, but nobody
 * waits, so the checks may run while the killed process still holds its
 * files; and it is one more thing every fork must remember.
 *
 * So the test process (the harness forks one per part) becomes a child
 * subreaper: a descendant whose parent dies (a child a worker forked in
 * the middle of a call, when the worker is killed) is reparented to it
 * instead of to init, and part_end() can kill and wait for every
 * descendant, whatever its depth, without knowing its pid.
 */
static inline void part_begin(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/*
 * SIGKILLs every child of this process (of any of its threads), their pids
 * appended to @list if it is not NULL.
 */
static inline void part_kill_children(char *list, size_t len)
{
	char path[64], pid[32];
	struct dirent *t;
	DIR *d = opendir("/proc/self/task");

	while (d && (t = readdir(d))) {
		FILE *f;

		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", t->d_name);
		f = fopen(path, "re");
		while (f && fscanf(f, "%31s", pid) == 1) {
			kill(atoi(pid), SIGKILL);
			if (list && strlen(list) + strlen(pid) + 2 < len)
				strcat(strcat(list, " "), pid);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/*
 * Kills and reaps every descendant of the part's process: its children,
 * and, through part_begin(), every orphan below them.  A process with a
 * SIGKILL pending forks no more, so the rounds leave fewer each time;
 * "children" may miss a process that comes or goes while it is read, so
 * they go on until wait() says there is none.  One that does not die
 * (stuck in the kernel) keeps the part here, named on stderr after 10 s,
 * until the harness's timeout: a hang to see, not to step over.
 * Return: how many were reaped.
 */
static inline int part_end(void)
{
	double t0 = mono_now();
	int reaped = 0, told = 0;

	for (;;) {
		char left[512] = "";
		pid_t pid;

		part_kill_children(told || mono_now() - t0 < 10 ? NULL : left, sizeof(left));
		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			reaped++;
		if (pid < 0 && errno == ECHILD)
			return reaped;
		if (left[0]) {
			fprintf(stderr, "# %s: not dead 10 s after SIGKILL:%s\n", __func__, left);
			told = 1;
		}
		usleep(10 * 1000);
	}
}

/* Unloads every model, revoking what is left of their sessions. */
static inline void unload_all(int fd)
{
	struct colibri_model_entry e[16];
	int n = colibri_dev_list(fd, e, 16);

	for (int i = 0; i < n && i < 16; i++)
		colibri_dev_unload(fd, e[i].name, 1);
}

/*
 * Waits (up to @ms) until no session is left and mem_used is @want: what
 * killed processes held goes as the scheduler lets go of their requests.
 * Return: mem_used then.
 */
static inline unsigned long long settle_to(int fd, unsigned long long want, int ms)
{
	struct colibri_info i = info_now(fd);

	for (int t = 0; t < ms && (i.nr_sessions || i.mem_used != want); t += 20) {
		usleep(20 * 1000);
		i = info_now(fd);
	}
	return i.mem_used;
}

#endif /* COLIBRI_VM_ATTACK_H */
