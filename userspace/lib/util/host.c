// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * host.c - cb_cpu_has() and a pthread struct cb_exec for userspace.
 *
 * Thread pool protocol (see cb_host_exec_create() in host.h):
 *
 * One 64-bit word, ->claim, holds (generation << 32 | next chunk index).
 * parallel_for() writes the job (fn, arg, nchunks), then publishes a new
 * generation with next = 0.  A worker claims a chunk with a compare-and-swap
 * of the word it read, so a claim only succeeds for the generation whose job
 * it read: a worker that is late from the previous call cannot take an index
 * of the new one with the old fn.  (A plain fetch_add could.)  A claim that
 * succeeds with index < nchunks also proves that the job is still the one the
 * worker read, because the caller does not write the next job before every
 * chunk of this one has finished.
 *
 * ->done counts finished chunks; the caller waits for done == nchunks.
 *
 * Sleeping: idle workers spin on ->seq for a while and then futex-wait on
 * it; parallel_for() bumps ->seq and wakes only if someone registered in
 * ->sleepers.  The increments and the checks are sequentially consistent,
 * which is what makes "bump, then look for sleepers" and "register, then
 * futex_wait(seq == old)" lose no wake-up.  The caller waits for ->done the
 * same way (->caller_sleeping), so a worker preempted mid-chunk on a busy
 * machine does not make the caller burn its time slice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cpuid.h>

#include "ops/cb_ops.h"
#include "util/host.h"

/* ------------------------------------------------------------------ */
/* CPU features                                                        */
/* ------------------------------------------------------------------ */

static int isa_cap = -1;		/* CB_ISA_*, -1 until read */
static unsigned int cpu_bits;		/* 1 << CB_CPU_*, valid once cpu_init */
static int cpu_init;

int cb_host_isa_cap(void)
{
	int cap = __atomic_load_n(&isa_cap, __ATOMIC_ACQUIRE);
	const char *s;

	if (cap >= 0)
		return cap;
	cap = CB_ISA__COUNT - 1;
	s = getenv("COLIBRI_ISA");
	if (s && *s) {
		char list[128];
		int level = cb_isa_level_of(s);

		if (level >= 0)
			cap = level;
		else if (!strcmp(s, "avx512novnni"))
			cap = CB_ISA_AVX512;	/* the old name of the same cap */
		else
			fprintf(stderr, "colibri: COLIBRI_ISA=%s unknown (%s); ignored\n", s,
				cb_isa_name_list(list, sizeof(list)));
	}
	__atomic_store_n(&isa_cap, cap, __ATOMIC_RELEASE);
	return cap;
}

static unsigned long long xgetbv0(void)
{
	unsigned int lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (unsigned long long)hi << 32 | lo;
}

static unsigned int cpu_detect(void)
{
	unsigned int a, b, c, d, max;
	unsigned int bits = 0;
	int os_avx = 0, os_avx512 = 0;
	unsigned int ecx1, ebx7 = 0, ecx7 = 0, eax71 = 0;

	if (!__get_cpuid(0, &max, &b, &c, &d))
		return 0;
	__cpuid(1, a, b, ecx1, d);
	/* OSXSAVE and AVX, then XCR0 must enable XMM|YMM state (bits 1, 2). */
	if ((ecx1 & (1u << 27)) && (ecx1 & (1u << 28))) {
		unsigned long long xcr0 = xgetbv0();

		os_avx = (xcr0 & 0x6) == 0x6;
		/* opmask, ZMM_Hi256, Hi16_ZMM (bits 5, 6, 7) too for AVX-512 */
		os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
	}
	if (max >= 7) {
		__cpuid_count(7, 0, a, ebx7, ecx7, d);
		if (a >= 1)
			__cpuid_count(7, 1, eax71, b, c, d);
	}
	if (os_avx) {
		if (ebx7 & (1u << 5))
			bits |= 1u << CB_CPU_AVX2;
		if (ecx1 & (1u << 12))
			bits |= 1u << CB_CPU_FMA;
		if (ecx1 & (1u << 29))
			bits |= 1u << CB_CPU_F16C;
	}
	if (os_avx512) {
		if (ebx7 & (1u << 16))
			bits |= 1u << CB_CPU_AVX512F;
		if (ebx7 & (1u << 30))
			bits |= 1u << CB_CPU_AVX512BW;
		if (ebx7 & (1u << 31))
			bits |= 1u << CB_CPU_AVX512VL;
		if (ecx7 & (1u << 11))
			bits |= 1u << CB_CPU_AVX512VNNI;
		if (eax71 & (1u << 5))
			bits |= 1u << CB_CPU_AVX512BF16;
	}
	return bits;
}

/* Features that the cap level still allows. */
static unsigned int cap_mask(int cap)
{
	unsigned int avx2 = 1u << CB_CPU_AVX2 | 1u << CB_CPU_FMA | 1u << CB_CPU_F16C;

	if (cap <= CB_ISA_SCALAR)
		return 0;
	if (cap == CB_ISA_AVX2)
		return avx2;
	return cap == CB_ISA_AVX512 ? ~(1u << CB_CPU_AVX512VNNI) : ~0u;
}

int cb_cpu_has(enum cb_cpu_feature f)
{
	unsigned int bits;

	if ((unsigned int)f >= CB_CPU__COUNT)
		return 0;
	if (!__atomic_load_n(&cpu_init, __ATOMIC_ACQUIRE)) {
		/* Idempotent: racing first callers compute the same answer. */
		bits = cpu_detect() & cap_mask(cb_host_isa_cap());
		__atomic_store_n(&cpu_bits, bits, __ATOMIC_RELAXED);
		__atomic_store_n(&cpu_init, 1, __ATOMIC_RELEASE);
	}
	bits = __atomic_load_n(&cpu_bits, __ATOMIC_RELAXED);
	return !!(bits & (1u << f));
}

/* ------------------------------------------------------------------ */
/* Thread pool                                                         */
/* ------------------------------------------------------------------ */

/* Pause iterations an idle worker spins before it sleeps (tens of us). */
#define CB_POOL_SPIN 4000
/* Pause iterations the caller spins for stragglers before it sleeps. */
#define CB_POOL_WAIT_SPIN 4000

struct cb_pool {
	struct cb_exec ex;		/* first: container_of by cast */
	int nworkers;
	pthread_t *threads;

	/* The job; written by the caller before ->claim publishes it. */
	void (*fn)(void *arg, int chunk);
	void *arg;
	int nchunks;

	uint64_t claim __attribute__((aligned(64)));	/* gen << 32 | next */
	uint32_t done __attribute__((aligned(64)));	/* finished chunks */
	uint32_t caller_sleeping;
	uint32_t seq __attribute__((aligned(64)));	/* futex: new job/stop */
	uint32_t sleepers;
	uint32_t stop;
};

static long futex(uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

/*
 * Run chunks of the job published as generation gen until none is left.
 * Returns once the claim word has moved past this job.
 */
static void pool_work(struct cb_pool *p, uint64_t word)
{
	uint32_t gen = word >> 32;
	void (*fn)(void *, int) = __atomic_load_n(&p->fn, __ATOMIC_ACQUIRE);
	void *arg = __atomic_load_n(&p->arg, __ATOMIC_ACQUIRE);
	int n = __atomic_load_n(&p->nchunks, __ATOMIC_ACQUIRE);

	for (;;) {
		uint32_t idx = (uint32_t)word;

		if ((uint32_t)(word >> 32) != gen || idx >= (uint32_t)n)
			return;
		if (!__atomic_compare_exchange_n(&p->claim, &word, word + 1, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;	/* word now holds the current value */
		fn(arg, (int)idx);
		if (__atomic_add_fetch(&p->done, 1, __ATOMIC_SEQ_CST) ==
		    (uint32_t)n &&
		    __atomic_load_n(&p->caller_sleeping, __ATOMIC_SEQ_CST))
			futex(&p->done, FUTEX_WAKE_PRIVATE, 1);
		word++;
	}
}

static void *pool_worker(void *data)
{
	struct cb_pool *p = data;
	uint32_t seen = 0;

	for (;;) {
		uint32_t s;
		int i;

		/* Wait for ->seq to move past what this worker has handled. */
		for (i = 0; i < CB_POOL_SPIN; i++) {
			s = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
			if (s != seen)
				break;
			cpu_relax();
		}
		while ((s = __atomic_load_n(&p->seq, __ATOMIC_SEQ_CST)) == seen) {
			__atomic_add_fetch(&p->sleepers, 1, __ATOMIC_SEQ_CST);
			futex(&p->seq, FUTEX_WAIT_PRIVATE, seen);
			__atomic_sub_fetch(&p->sleepers, 1, __ATOMIC_SEQ_CST);
		}
		seen = s;
		if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
			return NULL;
		pool_work(p, __atomic_load_n(&p->claim, __ATOMIC_ACQUIRE));
	}
}

static void pool_parallel_for(struct cb_exec *ex, void (*fn)(void *arg, int chunk),
			      void *arg, int nchunks)
{
	struct cb_pool *p = (struct cb_pool *)ex;
	uint64_t word;
	int i;

	if (nchunks <= 0)
		return;
	if (p->nworkers == 0 || nchunks == 1) {
		for (i = 0; i < nchunks; i++)
			fn(arg, i);
		return;
	}

	/*
	 * Close the previous generation before touching the job fields: a
	 * worker late from it may still hold its claim word (say gen | 3 of 3)
	 * and read the fields afterwards; had the word not moved, its CAS
	 * would then claim "index 3" of the new job with the new fn and bump
	 * ->done once too often (seen as a hang in test_sample: done ended
	 * above nchunks).  Index ~0 makes every claim fail until the new job
	 * is published below.
	 */
	word = ((__atomic_load_n(&p->claim, __ATOMIC_RELAXED) >> 32) + 1) << 32;
	__atomic_store_n(&p->claim, word | 0xffffffffu, __ATOMIC_SEQ_CST);
	/* release: a worker that reads them also sees the claim closed */
	__atomic_store_n(&p->fn, fn, __ATOMIC_RELEASE);
	__atomic_store_n(&p->arg, arg, __ATOMIC_RELEASE);
	__atomic_store_n(&p->nchunks, nchunks, __ATOMIC_RELEASE);
	__atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
	/* Next index 0; releases the job fields above. */
	__atomic_store_n(&p->claim, word, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&p->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST))
		futex(&p->seq, FUTEX_WAKE_PRIVATE, INT32_MAX);

	pool_work(p, word);

	/* All chunks are claimed; wait for the ones still running elsewhere. */
	for (i = 0; i < CB_POOL_WAIT_SPIN; i++) {
		if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE) == (uint32_t)nchunks)
			return;
		cpu_relax();
	}
	for (;;) {
		uint32_t d = __atomic_load_n(&p->done, __ATOMIC_SEQ_CST);

		if (d == (uint32_t)nchunks)
			break;
		__atomic_store_n(&p->caller_sleeping, 1, __ATOMIC_SEQ_CST);
		/* Re-check after announcing: the last worker may have missed it. */
		d = __atomic_load_n(&p->done, __ATOMIC_SEQ_CST);
		if (d != (uint32_t)nchunks)
			futex(&p->done, FUTEX_WAIT_PRIVATE, d);
		__atomic_store_n(&p->caller_sleeping, 0, __ATOMIC_SEQ_CST);
	}
	/*
	 * The chunks' writes are visible here: every worker's increment of
	 * ->done is a release RMW, and the load that saw the final count
	 * acquires the whole release sequence.
	 */
}

struct cb_exec *cb_host_exec_create(int nthreads)
{
	struct cb_pool *p;
	int i, err;

	if (nthreads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		nthreads = n > 0 ? (int)n : 1;
	}
	if (nthreads > 1024)
		nthreads = 1024;
	if (posix_memalign((void **)&p, 64, sizeof(*p)))
		return NULL;
	memset(p, 0, sizeof(*p));
	p->ex.parallel_for = pool_parallel_for;
	p->ex.yield = NULL;
	p->ex.nthreads = nthreads;
	p->ex.host = p;
	p->threads = calloc(nthreads, sizeof(*p->threads));
	if (!p->threads) {
		free(p);
		return NULL;
	}
	for (i = 0; i < nthreads - 1; i++) {
		err = pthread_create(&p->threads[i], NULL, pool_worker, p);
		if (err)
			break;
		p->nworkers++;
	}
	if (p->nworkers != nthreads - 1) {
		cb_host_exec_destroy(&p->ex);
		return NULL;
	}
	return &p->ex;
}

void cb_host_exec_destroy(struct cb_exec *ex)
{
	struct cb_pool *p = (struct cb_pool *)ex;
	int i;

	if (!p)
		return;
	__atomic_store_n(&p->stop, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&p->seq, 1, __ATOMIC_SEQ_CST);
	futex(&p->seq, FUTEX_WAKE_PRIVATE, INT32_MAX);
	for (i = 0; i < p->nworkers; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	free(p);
}
