// SPDX-License-Identifier: GPL-2.0-only
/*
 * acct_test - what an unprivileged user may pin: per-user session and byte
 * limits (-EDQUOT, one user at its limit leaves others their share),
 * RLIMIT_MEMLOCK (-ENOMEM, CAP_IPC_LOCK exempt), the memory cgroup of the
 * attaching task, an ATTACH's context capped at its model's, and no way
 * for a user with default limits to pin more than they allow.
 *
 * Tests run as root in the guest and drop to uids 65534/65533 in forked
 * children, after opening the device (so that they work whether the node
 * is 0666 or root-only).  Runs inside the vm-run guest with colibri.ko
 * loaded; fixtures come from $COLIBRI_BUILD/vm-fixtures/.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define NOBODY	65534
#define OTHER	65533
#define MAXFD	64

/* Drops to @uid, a member of the device's group: no capability left. */
static int drop_to(uid_t uid)
{
	return vm_drop_to_member(uid);
}

static int set_param(const char *name, long long v)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/colibri/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%lld\n", v) > 0 ? 0 : -EIO;
	return fclose(f) ? -errno : ret;
}

static int set_memlock(rlim_t bytes)
{
	struct rlimit r = { bytes, bytes };

	return setrlimit(RLIMIT_MEMLOCK, &r) ? -errno : 0;
}

/*
 * A private-engine session (max_batch above max_batch_tokens, so it does
 * not fit the model's shared engine): what a user pins most per ATTACH.
 */
#define PRIVATE_BATCH 65
/* One of several MiB: well above memcg's charge batching (CHARGE_SLACK). */
#define BIG_BATCH 1024
#define CHARGE_SLACK (64LL * 4096 * sysconf(_SC_NPROCESSORS_ONLN))

/*
 * In a child: opens @n files as root, drops to @uid (with RLIMIT_MEMLOCK
 * @memlock unless 0) and attaches them until one fails.  Reports through
 * @out: out[0] how many attached, out[1] the first error, out[2] the bytes
 * held.  Keeps them attached until @hold is readable, then exits.
 */
static pid_t attach_as(uid_t uid, rlim_t memlock, int n, unsigned int ctx, unsigned int batch,
		       long long *out, int go[2], int hold[2])
{
	pid_t pid = fork();
	int fds[MAXFD];
	char c;

	if (pid)
		return pid;
	for (int i = 0; i < n; i++)
		fds[i] = colibri_dev_open();
	if ((memlock && set_memlock(memlock)) || drop_to(uid))
		_exit(2);
	out[0] = 0;
	out[1] = 0;
	out[2] = 0;
	for (int i = 0; i < n; i++) {
		struct colibri_attach a;
		int ret = colibri_dev_attach(fds[i], "acct", ctx, batch, &a);

		if (ret) {
			out[1] = ret;
			break;
		}
		out[0]++;
		out[2] += a.bytes;
	}
	if (write(go[1], "a", 1) != 1 || read(hold[0], &c, 1) < 0)
		_exit(3);
	_exit(0);
}

FIXTURE(acct) {
	int fd;
	long long sess0, mem0;
	/*
	 * A child reports on go and waits on its own hold pipe: with one
	 * pipe for two children, the byte meant to release one may be read
	 * by the other (the one that reaches read() first takes it), and
	 * then the parent waits for a child that never got its byte.
	 */
	int go[2], hold[2], hold_b[2];
	long long *out;		/* shared with the children: [2][4] */
};

FIXTURE_SETUP(acct)
{
	char path[4096];

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	/* Restored by the teardown (the per-user tests change them). */
	self->sess0 = vm_modparam("max_sessions_per_user");
	self->mem0 = vm_modparam("mem_limit_per_user_mb");
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	colibri_dev_unload(self->fd, "acct", 1);
	ASSERT_EQ(0, colibri_dev_load(self->fd, path, "acct", NULL, NULL));
	ASSERT_EQ(0, pipe(self->go));
	ASSERT_EQ(0, pipe(self->hold));
	ASSERT_EQ(0, pipe(self->hold_b));
	self->out = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->out);
}

FIXTURE_TEARDOWN(acct)
{
	if (self->sess0 > 0)
		set_param("max_sessions_per_user", self->sess0);
	if (self->mem0 > 0)
		set_param("mem_limit_per_user_mb", self->mem0);
	colibri_dev_unload(self->fd, "acct", 1);
	close(self->fd);
}

/* Waits for a child of attach_as() to report. */
static void reported(FIXTURE_DATA(acct) *self)
{
	char c;

	if (read(self->go[0], &c, 1) != 1)
		self->out[7] = -1;
}

/* Lets the child @pid of attach_as(), waiting on @hold, go; its status. */
static int release(pid_t pid, int hold[2])
{
	int st;

	if (write(hold[1], "r", 1) != 1)
		return -1;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether the kernel logged a refusal naming @uid since @kmsg was opened. */
static int logged_uid(int kmsg, unsigned int uid)
{
	char rec[2048], want[32];
	int found = 0;
	ssize_t r;

	snprintf(want, sizeof(want), "uid %u:", uid);
	while ((r = read(kmsg, rec, sizeof(rec) - 1)) != 0) {
		if (r < 0) {
			if (errno == EPIPE)
				continue;
			break;
		}
		rec[r] = 0;
		found |= !!strstr(rec, want);
	}
	return found;
}

/*
 * max_sessions_per_user caps one user's sessions with -EDQUOT and a line
 * in the kernel log naming the uid; another user attaches meanwhile.
 */
TEST_F(acct, per_user_session_limit_is_edquot_and_spares_other_users)
{
	int kmsg = kmsg_open();
	pid_t a, b;

	ASSERT_LE(0, kmsg);
	ASSERT_LT(0, self->sess0) TH_LOG("no max_sessions_per_user parameter");
	ASSERT_EQ(0, set_param("max_sessions_per_user", 3));
	a = attach_as(NOBODY, 0, 5, 16, 1, self->out, self->go, self->hold);
	ASSERT_LE(0, a);
	reported(self);
	EXPECT_EQ(3, self->out[0]);
	EXPECT_EQ(-EDQUOT, self->out[1]);
	b = attach_as(OTHER, 0, 2, 16, 1, self->out + 4, self->go, self->hold_b);
	ASSERT_LE(0, b);
	reported(self);
	EXPECT_EQ(2, self->out[4]) TH_LOG("uid %d's sessions kept uid %d out: %s", NOBODY, OTHER,
					  strerror(-self->out[5]));
	EXPECT_EQ(5, info_now(self->fd).nr_sessions);
	EXPECT_TRUE(logged_uid(kmsg, NOBODY)) TH_LOG("no kernel log line names uid %d", NOBODY);
	EXPECT_EQ(0, release(a, self->hold));
	EXPECT_EQ(0, release(b, self->hold_b));
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	close(kmsg);
}

/*
 * How many lines of the model's session_owners are "ID PID UID COMM" with
 * @pid, @uid and @comm; -1 when it cannot be read.
 */
static int owner_lines(pid_t pid, unsigned int uid, const char *comm)
{
	FILE *f = fopen("/sys/kernel/colibri/models/acct/session_owners", "r");
	char line[256], name[64];
	unsigned long long id;
	unsigned int u;
	int p, n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llu %d %u %63[^\n]", &id, &p, &u, name) == 4 && p == pid &&
		    u == uid && !strcmp(name, comm))
			n++;
	fclose(f);
	return n;
}

/*
 * session_owners names, per session, the process that attached it: its
 * pid, its uid, its name; a session's line goes with it.
 */
TEST_F(acct, session_owners_names_the_process_of_each_session)
{
	struct colibri_attach at;
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	int mine = colibri_dev_open();
	pid_t a;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	ASSERT_LE(0, mine);
	ASSERT_EQ(0, colibri_dev_attach(mine, "acct", 16, 1, &at));
	a = attach_as(NOBODY, 0, 2, 16, 1, self->out, self->go, self->hold);
	ASSERT_LE(0, a);
	reported(self);
	ASSERT_EQ(2, self->out[0]);
	EXPECT_EQ(1, owner_lines(getpid(), 0, comm));
	EXPECT_EQ(2, owner_lines(a, NOBODY, comm));
	EXPECT_EQ(3, vm_model_attr("acct", "sessions"));
	EXPECT_EQ(0, release(a, self->hold));
	EXPECT_EQ(0, owner_lines(a, NOBODY, comm));
	EXPECT_EQ(1, owner_lines(getpid(), 0, comm));
	close(mine);
	EXPECT_EQ(0, owner_lines(getpid(), 0, comm));
}

/* mem_limit_per_user_mb caps one user's pinned bytes the same way. */
TEST_F(acct, per_user_byte_limit_is_edquot_and_spares_other_users)
{
	int kmsg = kmsg_open();
	struct colibri_attach big;
	pid_t a, b;
	int s = colibri_dev_open();

	ASSERT_LE(0, kmsg);
	ASSERT_LT(0, self->mem0) TH_LOG("no mem_limit_per_user_mb parameter");
	ASSERT_EQ(0, colibri_dev_attach(s, "acct", 256, PRIVATE_BATCH, &big));
	close(s);
	TH_LOG("a private session pins %llu bytes", (unsigned long long)big.bytes);
	/* Room for two and a bit; RLIMIT_MEMLOCK out of the way. */
	ASSERT_EQ(0, set_param("mem_limit_per_user_mb", (2 * big.bytes + big.bytes / 2 + (1 << 20) - 1) >> 20));
	a = attach_as(NOBODY, RLIM_INFINITY, 40, 256, PRIVATE_BATCH, self->out, self->go, self->hold);
	ASSERT_LE(0, a);
	reported(self);
	EXPECT_EQ(-EDQUOT, self->out[1]) TH_LOG("%lld sessions, %lld bytes, then %s", self->out[0],
						self->out[2], strerror(-self->out[1]));
	EXPECT_GE(vm_modparam("mem_limit_per_user_mb") << 20, self->out[2]);
	EXPECT_LE(2, self->out[0]);
	b = attach_as(OTHER, RLIM_INFINITY, 2, 256, PRIVATE_BATCH, self->out + 4, self->go, self->hold_b);
	ASSERT_LE(0, b);
	reported(self);
	EXPECT_EQ(2, self->out[4]) TH_LOG("uid %d's bytes kept uid %d out: %s", NOBODY, OTHER,
					  strerror(-self->out[5]));
	EXPECT_TRUE(logged_uid(kmsg, NOBODY));
	EXPECT_EQ(0, release(a, self->hold));
	EXPECT_EQ(0, release(b, self->hold_b));
	close(kmsg);
}

/*
 * Session memory counts against the attaching user's RLIMIT_MEMLOCK
 * (-ENOMEM beyond, as mlock() says), is given back at close, and a task
 * with CAP_IPC_LOCK is not held to it.
 */
TEST_F(acct, memlock_limits_an_unprivileged_attach)
{
	struct colibri_attach big;
	rlim_t lim;
	pid_t a;
	int s = colibri_dev_open();

	ASSERT_EQ(0, colibri_dev_attach(s, "acct", 256, PRIVATE_BATCH, &big));
	close(s);
	lim = 2 * big.bytes + big.bytes / 2;
	a = attach_as(NOBODY, lim, 6, 256, PRIVATE_BATCH, self->out, self->go, self->hold);
	ASSERT_LE(0, a);
	reported(self);
	EXPECT_EQ(2, self->out[0]) TH_LOG("RLIMIT_MEMLOCK %llu, %llu per session",
					  (unsigned long long)lim, (unsigned long long)big.bytes);
	EXPECT_EQ(-ENOMEM, self->out[1]);
	EXPECT_EQ(0, release(a, self->hold));
	/* Given back: the same user gets the same again. */
	a = attach_as(NOBODY, lim, 6, 256, PRIVATE_BATCH, self->out, self->go, self->hold);
	ASSERT_LE(0, a);
	reported(self);
	EXPECT_EQ(2, self->out[0]);
	EXPECT_EQ(0, release(a, self->hold));
	/* Root (CAP_IPC_LOCK) under the same rlimit is not held to it. */
	{
		int fds[4], n = 0;

		a = fork();
		ASSERT_LE(0, a);
		if (!a) {
			if (set_memlock(lim))
				_exit(2);
			for (n = 0; n < 4; n++) {
				fds[n] = colibri_dev_open();
				if (colibri_dev_attach(fds[n], "acct", 256, PRIVATE_BATCH, NULL))
					_exit(10 + n);
			}
			_exit(0);
		}
		ASSERT_EQ(a, waitpid(a, &n, 0));
		EXPECT_EQ(0, WEXITSTATUS(n));
	}
}

/* The cgroup2 hierarchy, mounted if it is not; 0 or -errno. */
static int cgroup2(void)
{
	if (!access("/sys/fs/cgroup/cgroup.controllers", R_OK))
		return 0;
	return mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL) ? -errno : 0;
}

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -errno;
	close(fd);
	return ret;
}

/*
 * A session's pages are charged to the memory cgroup of the task that
 * attached it (__GFP_ACCOUNT): memory.current grows by its bytes, and a
 * cgroup at memory.max gets -ENOMEM instead of the memory.
 */
TEST_F(acct, session_memory_is_charged_to_its_memory_cgroup)
{
	const char *cg = "/sys/fs/cgroup/colibri-acct";
	char buf[64];
	pid_t pid;
	int st, ret;

	ret = cgroup2();
	if (ret)
		SKIP(return, "no cgroup2: %s", strerror(-ret));
	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	ASSERT_EQ(0, access("/sys/fs/cgroup/colibri-acct/memory.current", R_OK))
		TH_LOG("no memory controller");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct colibri_attach a;
		long long before, after;
		int s = colibri_dev_open(), t = colibri_dev_open();

		snprintf(buf, sizeof(buf), "%d", getpid());
		if (write_str("/sys/fs/cgroup/colibri-acct/cgroup.procs", buf))
			_exit(2);
		before = vm_read_num("/sys/fs/cgroup/colibri-acct/memory.current");
		if (colibri_dev_attach(s, "acct", 256, BIG_BATCH, &a))
			_exit(3);
		after = vm_read_num("/sys/fs/cgroup/colibri-acct/memory.current");
		printf("# memory.current %lld -> %lld for a session of %llu bytes\n", before, after,
		       (unsigned long long)a.bytes);
		/*
		 * memcg charges its counter in per-CPU batches of 64 pages, so
		 * it may be ahead of the pages by that much per CPU, either way
		 * round the attach.
		 */
		if (after - before < (long long)a.bytes - CHARGE_SLACK ||
		    after - before > (long long)a.bytes + CHARGE_SLACK + (1 << 20))
			_exit(4);
		/* Full: the next one is refused, not taken from elsewhere. */
		snprintf(buf, sizeof(buf), "%lld", after + 65536);
		if (write_str("/sys/fs/cgroup/colibri-acct/memory.max", buf))
			_exit(5);
		ret = colibri_dev_attach(t, "acct", 256, BIG_BATCH, NULL);
		printf("# at memory.max: %s\n", strerror(-ret));
		_exit(ret == -ENOMEM ? 0 : 6);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	for (int i = 0; i < 100 && rmdir(cg); i++)
		usleep(20 * 1000);
}

/*
 * An ATTACH never gets more context than its model has; a model file that
 * leaves max_context unspecified (0) has default_context.  Such a file
 * once let any user ask for 2^20 positions of KV cache.
 */
TEST_F(acct, context_is_capped_at_the_model_context)
{
	struct cb_model_config c = vm_tiny_config();
	const char *path = "/tmp/acct-noctx.colibri";
	long long dctx = vm_modparam("default_context");
	struct colibri_attach a;
	int s = colibri_dev_open();

	ASSERT_LT(0, dctx);
	c.max_context = 0;
	ASSERT_EQ(0, vm_write_model(path, &c, 3));
	ASSERT_EQ(0, colibri_dev_load(self->fd, path, "noctx", NULL, NULL));
	ASSERT_EQ(0, colibri_dev_attach(s, "noctx", 0, 0, &a));
	EXPECT_EQ(dctx, a.max_context);
	close(s);
	s = colibri_dev_open();
	EXPECT_EQ(-EINVAL, colibri_dev_attach(s, "noctx", dctx + 1, 0, NULL));
	EXPECT_EQ(-EINVAL, colibri_dev_attach(s, "noctx", 1u << 20, 0, NULL));
	EXPECT_EQ(0, colibri_dev_attach(s, "noctx", dctx, 0, NULL));
	close(s);
	/* And a model that says its context: not a position more. */
	s = colibri_dev_open();
	EXPECT_EQ(-EINVAL, colibri_dev_attach(s, "acct", vm_model_attr("acct", "max_context") + 1,
					      0, NULL));
	close(s);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, "noctx", 0));
	unlink(path);
}

/*
 * A user with the default limits attaches private-engine sessions until
 * it is refused: the refusal is -ENOMEM or -EDQUOT, and what it
 * pinned is within its RLIMIT_MEMLOCK.  (With mem_limit the only bound,
 * uid 65534 once pinned all of it and took a 1 GiB guest down.)  The loop
 * stops at 64 MiB so that a kernel without the limits fails this test
 * instead of the machine.
 */
TEST_F(acct, an_unprivileged_user_cannot_pin_past_its_limits)
{
	struct rlimit r;
	pid_t pid;

	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &r));
	TH_LOG("RLIMIT_MEMLOCK %llu, mem_limit_per_user_mb %lld, mem_limit_mb %lld",
	       (unsigned long long)r.rlim_cur, vm_modparam("mem_limit_per_user_mb"),
	       vm_modparam("mem_limit_mb"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fds[MAXFD], n;
		long long held = 0;

		for (n = 0; n < MAXFD; n++)
			fds[n] = colibri_dev_open();
		if (drop_to(NOBODY))
			_exit(2);
		for (n = 0; n < MAXFD && held < (64LL << 20); n++) {
			struct colibri_attach a;
			int ret = colibri_dev_attach(fds[n], "acct", 256, PRIVATE_BATCH, &a);

			if (ret) {
				self->out[1] = ret;
				break;
			}
			held += a.bytes;
		}
		self->out[0] = n;
		self->out[2] = held;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	TH_LOG("%lld sessions, %lld bytes, then %s", self->out[0], self->out[2],
	       strerror(-self->out[1]));
	EXPECT_TRUE(self->out[1] == -ENOMEM || self->out[1] == -EDQUOT);
	if (r.rlim_cur != RLIM_INFINITY)
		EXPECT_GE((long long)r.rlim_cur, self->out[2]);
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
}

TEST_HARNESS_MAIN
