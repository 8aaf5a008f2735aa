// SPDX-License-Identifier: GPL-2.0-only
/*
 * textpoke_test - a test of the VM bench itself: the guest kernel patches
 * its own live text while the other vCPU runs the code being patched, and
 * survives.
 *
 * Flipping a static key rewrites every site of the key with text_poke_bp():
 * an int3 first, then the new bytes, with a sync IPI to every CPU between
 * the steps.  Under QEMU's multi-threaded TCG a vCPU that translates a site
 * while the other vCPU writes it can keep a translation of the transient
 * int3 after the patch is done; the next execution of that site is an
 * "Oops: int3" and a panic (6.12) or an int3 storm that hangs the guest
 * (6.1).  scripts/vm-run runs the guest with one TCG thread to rule that
 * out, and this program is the regression test of that choice: it fails,
 * with the guest's oops in the run's output, if it ever regresses.  The
 * mechanism, the rates and the costs are in docs/vm.md.
 *
 * CPU 1 runs a pipe ping-pong between two processes, so the scheduler's
 * schedstats sites run all the time; CPU 0 flips kernel.sched_schedstats.
 * Tracepoints (sched_switch on/off) crash the same way under MTTCG but cost
 * ten times as much per flip here, so they are not used.  Nothing here
 * needs colibri.ko.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

/* The flips take 30-45 s under TCG with a host load of 10: allow far more. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

/*
 * 2 x 600 writes.  MTTCG crashed 6.12 about once per 600 flips of this key,
 * so this catches a regression of the bench about 6 times in 7 on 6.12 (on
 * 6.1 the guest hangs until vm-run's timeout instead); one TCG thread does
 * them in 30-45 s on a host with a load of 10, less on a quiet one.
 */
#define FLIPS 600

#define SCHEDSTATS "/proc/sys/kernel/sched_schedstats"

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* One byte to @path; 0 or -errno. */
static int put(const char *path, char c)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, &c, 1);
	close(fd);
	return n == 1 ? 0 : -EIO;
}

/* The first byte of @path, or -errno. */
static int get(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 ? c : -EIO;
}

/* Two processes on CPU 1 passing a byte back and forth; @trips counts. */
struct pingpong {
	pid_t pid[2];
	unsigned long *trips;
};

static void bounce(int in, int out, unsigned long *trips)
{
	char c = 0;

	for (;;) {
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			_exit(1);
		if (trips)
			__atomic_fetch_add(trips, 1, __ATOMIC_RELAXED);
	}
}

static unsigned long trips(struct pingpong *pp)
{
	return __atomic_load_n(pp->trips, __ATOMIC_RELAXED);
}

static int pingpong_start(struct pingpong *pp)
{
	int ab[2], ba[2], i;

	pp->trips = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pp->trips == MAP_FAILED || pipe(ab) || pipe(ba))
		return -errno;
	for (i = 0; i < 2; i++) {
		pp->pid[i] = fork();
		if (pp->pid[i] < 0)
			return -errno;
		if (!pp->pid[i]) {
			if (pin(1))
				_exit(1);
			if (i == 0 && write(ab[1], "x", 1) != 1)
				_exit(1);
			if (i == 0)
				bounce(ba[0], ab[1], pp->trips);
			bounce(ab[0], ba[1], NULL);
		}
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	return 0;
}

static void pingpong_stop(struct pingpong *pp)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (pp->pid[i] > 0) {
			kill(pp->pid[i], SIGKILL);
			waitpid(pp->pid[i], NULL, 0);
		}
	}
	munmap(pp->trips, 4096);
}

/*
 * Flips the key behind @path @flips times on CPU 0 while CPU 1 runs its
 * sites, and checks that CPU 1 made progress meanwhile (so the patching
 * really raced with execution), then puts @path back as it was.
 */
static void flip_while_running(struct __test_metadata *_metadata, const char *path, int flips)
{
	struct pingpong pp = { 0 };
	unsigned long before, after;
	struct timespec t0, t1;
	int old, i, err = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU: nothing runs while the text is patched");
	old = get(path);
	ASSERT_LE(0, old) TH_LOG("cannot read %s: %s", path, strerror(-old));
	ASSERT_EQ(0, pin(0));
	err = pingpong_start(&pp);
	if (err)
		pingpong_stop(&pp);
	ASSERT_EQ(0, err);
	/* Running before the first flip (a generous bound: TCG on a busy host). */
	for (i = 0; i < 30000 && trips(&pp) < 100; i++)
		usleep(1000);
	before = trips(&pp);
	if (before < 100)
		pingpong_stop(&pp);
	ASSERT_LE(100, before) TH_LOG("the ping-pong on CPU 1 did not start");
	/* No ASSERT until the ping-pong is stopped: it must not outlive us. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < flips && !err; i++) {
		err = put(path, '1');
		if (!err)
			err = put(path, '0');
	}
	after = trips(&pp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pingpong_stop(&pp);
	EXPECT_EQ(0, err) TH_LOG("flip %d of %s: %s", i, path, strerror(-err));
	EXPECT_EQ(0, put(path, old));
	TH_LOG("%d flips of %s in %.1f s, %lu round trips on CPU 1 meanwhile", 2 * flips, path,
	       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9, after - before);
	EXPECT_LT(before, after);
}

TEST(schedstats_key_flips_while_cpu1_schedules)
{
	flip_while_running(_metadata, SCHEDSTATS, FLIPS);
}

TEST_HARNESS_MAIN
