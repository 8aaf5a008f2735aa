// SPDX-License-Identifier: GPL-2.0-only
/*
 * client_test - libcolibri's device client (userspace/lib/client/client.c) against
 * the module: what its functions promise their callers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#define DEMO "models/shakespeare-moe.colibri"
#define NAME "client-demo"

FIXTURE(client) {
	int fd;
};

FIXTURE_SETUP(client)
{
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	colibri_dev_unload(self->fd, NAME, 1);
}

FIXTURE_TEARDOWN(client)
{
	colibri_dev_unload(self->fd, NAME, 1);
	close(self->fd);
}

/*
 * Callers pass one buffer as name and name_out; the second call, which
 * finds the model loaded, used to clear the buffer before copying from it
 * and hand back "" (then ATTACH said -EINVAL).
 */
TEST_F(client, ensure_model_with_one_buffer_for_name_and_name_out)
{
	char name[COLIBRI_NAME_LEN] = NAME;
	int loaded = -1, s;

	ASSERT_EQ(0, colibri_dev_ensure_model(self->fd, DEMO, name, name, &loaded));
	EXPECT_EQ(1, loaded);
	EXPECT_STREQ(NAME, name);
	ASSERT_EQ(0, colibri_dev_ensure_model(self->fd, DEMO, name, name, &loaded));
	EXPECT_EQ(0, loaded);
	EXPECT_STREQ(NAME, name);
	s = colibri_dev_open();
	ASSERT_LE(0, s);
	EXPECT_EQ(0, colibri_dev_attach(s, name, 0, 0, NULL));
	close(s);
}

TEST_HARNESS_MAIN
