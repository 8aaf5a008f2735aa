// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * access_test - who may use /dev/colibri (issue 18, item 2; docs/kernel.md
 * "Privilege and accounting").  The node is root:colibri 0660 as
 * 60-colibri.rules makes it (vm_drop_to_member() does the rule's work: the
 * guest has no udevd): a uid outside the group cannot open it (EACCES); a
 * member may attach and submit, but LOAD and UNLOAD stay -EPERM without
 * CAP_SYS_ADMIN.
 *
 * Runs inside the vm-run guest with colibri.ko loaded, as root; each case
 * drops privileges in a child.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define MEMBER		65534
#define OUTSIDER	65533

FIXTURE(access) {
	int fd;
	char path[4096];
};

FIXTURE_SETUP(access)
{
	struct stat st;

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fixture("mixtral-f32", self->path, sizeof(self->path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", self->path);
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, "m", NULL, NULL));
	/* What the rule makes of it, as a member's drop would. */
	ASSERT_EQ(0, chown(COLIBRI_DEVICE_PATH, 0, VM_COLIBRI_GID));
	ASSERT_EQ(0, chmod(COLIBRI_DEVICE_PATH, 0660));
	ASSERT_EQ(0, stat(COLIBRI_DEVICE_PATH, &st));
	ASSERT_EQ(0660, st.st_mode & 07777);
}

FIXTURE_TEARDOWN(access)
{
	colibri_dev_unload(self->fd, "m", 1);
	close(self->fd);
}

/* Runs @fn in a child as @uid (dropped by @drop); returns its exit code. */
static int as_child(int (*drop)(uid_t), uid_t uid, int (*fn)(const char *), const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		if (drop(uid))
			_exit(100);
		_exit(fn(path));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int outsider_opens(const char *path)
{
	int fd = open(COLIBRI_DEVICE_PATH, O_RDWR);

	(void)path;
	if (fd >= 0)
		return 1;
	return errno == EACCES ? 0 : 2;
}

static int member_uses(const char *path)
{
	uint32_t toks[3] = { 1, 2, 3 };
	struct colibri_submit s;
	int fd = open(COLIBRI_DEVICE_PATH, O_RDWR);

	if (fd < 0)
		return 10;
	if (colibri_dev_attach(fd, "m", 64, 0, NULL))
		return 11;
	memset(&s, 0, sizeof(s));
	s.tokens = (uintptr_t)toks;
	s.n_tokens = 3;
	if (colibri_dev_submit(fd, &s))
		return 12;
	if (s.n_past != 3)
		return 13;
	close(fd);
	/* A second descriptor, never attached: the privileged commands. */
	fd = open(COLIBRI_DEVICE_PATH, O_RDWR);
	if (fd < 0)
		return 14;
	if (colibri_dev_load(fd, path, "x", NULL, NULL) != -EPERM)
		return 15;
	if (colibri_dev_unload(fd, "m", 0) != -EPERM)
		return 16;
	close(fd);
	return 0;
}

TEST_F(access, outsider_gets_eacces)
{
	EXPECT_EQ(0, as_child(vm_drop_to_outsider, OUTSIDER, outsider_opens, self->path));
}

TEST_F(access, member_attaches_and_submits_but_cannot_load)
{
	struct colibri_model_entry e[4];

	EXPECT_EQ(0, as_child(vm_drop_to_member, MEMBER, member_uses, self->path));
	/* The member's LOAD published nothing; "m" is still there. */
	ASSERT_EQ(1, colibri_dev_list(self->fd, e, 4));
	EXPECT_STREQ("m", e[0].name);
}

TEST_HARNESS_MAIN
