// SPDX-License-Identifier: GPL-2.0-only
/*
 * lifecycle_test - a model's life against everything that races it: LOAD
 * and UNLOAD of one name in a loop while other threads look the name up
 * (ATTACH, GET_TOKENIZER, EXPORT_DMABUF, LIST), and what UNLOAD does to the
 * sessions of the model it removes.
 *
 * Runs inside the vm-run guest with colibri.ko loaded; fixtures come from
 * $COLIBRI_BUILD/vm-fixtures/ (tests/vm/make-fixtures).  Each race also
 * reads the kernel log it produced, so a refcount warning or an oops fails
 * the test that caused it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- LOAD racing UNLOAD ---------------------------------------------------- */

struct race {
	const char *path;
	double until;
	unsigned long long bytes;	/* what a good LOAD reports */
	int loads, unloads, lookups;
	int bad_load;			/* a LOAD that said 0 with a wrong answer */
	int bad_err;			/* an errno no caller should see */
	char why[160];
};

static void *race_loader(void *p)
{
	struct race *r = p;
	int fd = colibri_dev_open();

	while (fd >= 0 && now_s() < r->until) {
		char name[COLIBRI_NAME_LEN] = "";
		unsigned long long bytes = 0;
		int ret = colibri_dev_load(fd, r->path, "race", name, &bytes);

		if (!ret) {
			__atomic_add_fetch(&r->loads, 1, __ATOMIC_RELAXED);
			if (bytes != r->bytes || strcmp(name, "race")) {
				snprintf(r->why, sizeof(r->why), "LOAD said 0 with %llu bytes, name '%.31s'",
					 bytes, name);
				__atomic_add_fetch(&r->bad_load, 1, __ATOMIC_RELAXED);
			}
		} else if (ret != -EEXIST) {
			snprintf(r->why, sizeof(r->why), "LOAD: %s", strerror(-ret));
			__atomic_add_fetch(&r->bad_err, 1, __ATOMIC_RELAXED);
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *race_unloader(void *p)
{
	struct race *r = p;
	int fd = colibri_dev_open();

	while (fd >= 0 && now_s() < r->until) {
		int ret = colibri_dev_unload(fd, "race", 0);

		if (!ret)
			__atomic_add_fetch(&r->unloads, 1, __ATOMIC_RELAXED);
		else if (ret != -ENOENT && ret != -EBUSY) {
			snprintf(r->why, sizeof(r->why), "UNLOAD: %s", strerror(-ret));
			__atomic_add_fetch(&r->bad_err, 1, __ATOMIC_RELAXED);
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Every path that finds a model by name, on the name being raced. */
static void *race_lookups(void *p)
{
	struct race *r = p;
	int fd = colibri_dev_open();

	while (fd >= 0 && now_s() < r->until) {
		struct colibri_export e = { .size = sizeof(e), .name = "race" };
		struct colibri_model_entry ents[8];
		void *tok = NULL;
		size_t len;
		int s = colibri_dev_open();

		if (s >= 0 && !colibri_dev_attach(s, "race", 16, 1, NULL))
			__atomic_add_fetch(&r->lookups, 1, __ATOMIC_RELAXED);
		if (s >= 0)
			close(s);
		if (!colibri_dev_get_tokenizer(fd, "race", &tok, &len, NULL))
			free(tok);
		if (!ioctl(fd, COLIBRI_IOC_EXPORT_DMABUF, &e))
			close(e.fd);
		colibri_dev_list(fd, ents, 8);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * Two threads load and unload one name as fast as they can while a third
 * looks it up every way there is.  A LOAD that succeeds must report the
 * model it loaded (its name and its bytes), every error must be one the
 * ABI names, and the kernel must log nothing: LOAD once took its caller's
 * reference only after publishing, and an UNLOAD in between freed the
 * model under it ("refcount_t: addition on 0; use-after-free").
 */
TEST(load_racing_unload_of_one_name)
{
	struct race r = { .bytes = 0 };
	char path[4096], first[512];
	pthread_t t[3];
	int fd = colibri_dev_open(), kmsg = kmsg_open();

	ASSERT_LE(0, fd);
	ASSERT_LE(0, kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
	ASSERT_EQ(0, fixture("mixtral-q4_0", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "race", NULL, &r.bytes));
	ASSERT_EQ(0, colibri_dev_unload(fd, "race", 0));
	r.path = path;
	/* The two alone (the tightest loop), then with the lookups. */
	for (int phase = 0; phase < 2; phase++) {
		r.until = now_s() + 4;
		ASSERT_EQ(0, pthread_create(&t[0], NULL, race_loader, &r));
		ASSERT_EQ(0, pthread_create(&t[1], NULL, race_unloader, &r));
		if (phase)
			ASSERT_EQ(0, pthread_create(&t[2], NULL, race_lookups, &r));
		for (int i = 0; i < 2 + phase; i++)
			pthread_join(t[i], NULL);
	}
	colibri_dev_unload(fd, "race", 1);
	TH_LOG("%d loads, %d unloads, %d attaches in 8 s", r.loads, r.unloads, r.lookups);
	EXPECT_EQ(0, r.bad_load) TH_LOG("%s", r.why);
	EXPECT_EQ(0, r.bad_err) TH_LOG("%s", r.why);
	EXPECT_LT(10, r.loads);
	EXPECT_LT(10, r.unloads);
	EXPECT_EQ(0, kmsg_bad(kmsg, first, sizeof(first))) TH_LOG("kernel: %s", first);
	EXPECT_EQ(0, info_now(fd).nr_models);
	EXPECT_EQ(0, info_now(fd).nr_sessions);
	EXPECT_EQ(0, info_now(fd).mem_used);
	close(kmsg);
	close(fd);
}

TEST_HARNESS_MAIN
