// SPDX-License-Identifier: GPL-2.0-only
/*
 * libcolibri_test - the example program of docs/libcolibri.md
 * (tests/libcolibri/generate_example.c, linked against libcolibri only)
 * through the kernel, by ioctl and by io_uring, by file and by name: it
 * prints the greedy continuation tests/demo/expected.txt records, as it
 * does in-process (tests/libcolibri/run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "vm_cmd.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define DEMO "models/shakespeare-moe.colibri"
#define NAME "shakespeare-moe"

static const char *example(void)
{
	static char path[4096];
	const char *b = getenv("COLIBRI_BUILD");

	snprintf(path, sizeof(path), "%s/tests/libcolibri/generate_example", b ? b : "build");
	return path;
}

FIXTURE(ex) {
	int fd;
	struct vm_cmd user, r;
};

FIXTURE_SETUP(ex)
{
	char *argv[] = { (char *)example(), DEMO, "ROMEO:", "40", "user", NULL };

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	colibri_dev_unload(self->fd, NAME, 1);
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(self->fd).isa_level), 1);
	ASSERT_EQ(0, vm_cmd_run(&self->user, 120, argv));
	ASSERT_EQ(0, self->user.status) TH_LOG("%s", self->user.err);
	ASSERT_LT(strlen("ROMEO:\n"), strlen(self->user.out));
}

FIXTURE_TEARDOWN(ex)
{
	colibri_dev_unload(self->fd, NAME, 1);
	close(self->fd);
}

static void through_the_kernel(struct __test_metadata *_metadata, FIXTURE_DATA(ex) *self,
			       const char *model, const char *how)
{
	char *argv[] = { (char *)example(), (char *)model, "ROMEO:", "40", (char *)how, NULL };

	ASSERT_EQ(0, vm_cmd_run(&self->r, 120, argv));
	ASSERT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.err, "kernel (/dev/colibri")) TH_LOG("%s", self->r.err);
	EXPECT_STREQ(self->user.out, self->r.out);
}

TEST_F(ex, by_ioctl_prints_what_it_prints_in_process)
{
	through_the_kernel(_metadata, self, DEMO, "kernel");
}

TEST_F(ex, by_uring_prints_what_it_prints_in_process)
{
	through_the_kernel(_metadata, self, DEMO, "kernel-uring");
}

TEST_F(ex, auto_uses_the_kernel_and_a_second_one_goes_by_name)
{
	through_the_kernel(_metadata, self, DEMO, "auto");
	through_the_kernel(_metadata, self, NAME, "auto");
}

TEST_HARNESS_MAIN
