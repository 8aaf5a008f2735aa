/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * attack.h - what the attack suite's programs (fuzz_test.c, storm_test.c)
 * share: one seed for a run, printed so that a failure can be replayed
 * (COLIBRI_ATTACK_SEED=N), each part's own stream derived from it, a time
 * box per part (COLIBRI_ATTACK_SECS, default 20), and the checks every
 * part ends with: the module gives back all it pinned, and the kernel log
 * stays clean.
 */
#ifndef COLIBRI_VM_ATTACK_H
#define COLIBRI_VM_ATTACK_H

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/*
 * For a part's children: signals interrupt system calls (no SA_RESTART),
 * SIGPIPE is ignored, and the child dies with the test process, so that a
 * failed part leaves nothing attached behind it.  Call it again after a
 * change of uid, which clears the parent-death signal.
 */
static inline void attack_signals(void)
{
	struct sigaction sa = { .sa_handler = attack_noop };

	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
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
