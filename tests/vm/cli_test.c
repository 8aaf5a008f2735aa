// SPDX-License-Identifier: GPL-2.0-only
/*
 * cli_test - the colibri tool itself ($COLIBRI_BUILD/colibri), run in the
 * guest the way a user runs it, against the module: the defects plain use
 * found (issue 12, items 8 to 11) stay fixed.
 *
 *  - `colibri logits --backend kernel` of a file not yet loaded returns
 *    (it used to UNLOAD with wait while its own session was attached, and
 *    hang for ever), and leaves the kernel as it found it;
 *  - a second `colibri generate` of the same file works, by ioctl and by
 *    io_uring, and so does one by the model's name alone, with the
 *    tokenizer the kernel keeps: the main job is many processes on one
 *    pinned model;
 *  - generation past the context stops there, exit 0, with the text the
 *    in-process engine prints;
 *  - `colibri bench` fits the guest's memory (1 GiB);
 *  - `colibri load X.gguf` pins a GGUF file (converted on the way in) and
 *    leaves no temporary file; the kernel's logits of it are the in-process
 *    engine's of the GGUF itself.
 *
 * Runs from the top of the work tree (the shipped model is
 * models/shakespeare-moe.colibri, named "shakespeare-moe", 256 positions).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "vm_cmd.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600

#define DEMO "models/shakespeare-moe.colibri"
#define DEMO_NAME "shakespeare-moe"
/* Generous: software emulation, two cores shared with other guests. */
#define RUN_S 240.0

/* Is a model of this name loaded?  1, 0, or -errno. */
static int loaded(int fd, const char *name)
{
	struct colibri_model_entry ents[64];
	int n = colibri_dev_list(fd, ents, 64), i;

	if (n < 0)
		return n;
	for (i = 0; i < n && i < 64; i++)
		if (!strcmp(ents[i].name, name))
			return 1;
	return 0;
}

static void log_run(struct __test_metadata *_metadata, const char *what,
		    const struct vm_cmd *r)
{
	TH_LOG("%s: status %d after %.1f s; stderr: %s", what, r->status, r->seconds, r->err);
}

FIXTURE(cli) {
	int fd;
	struct vm_cmd r, r2;
};

FIXTURE_SETUP(cli)
{
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	/* An earlier test (or a failed run) may have left it behind. */
	colibri_dev_unload(self->fd, DEMO_NAME, 1);
	ASSERT_EQ(0, loaded(self->fd, DEMO_NAME));
	/* The in-process runs must use the kernel's ISA level. */
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(self->fd).isa_level), 1);
}

FIXTURE_TEARDOWN(cli)
{
	colibri_dev_unload(self->fd, DEMO_NAME, 1);
	close(self->fd);
}

TEST_F(cli, logits_through_the_kernel_of_an_unloaded_file_returns_and_unloads_it)
{
	struct vm_cmd *r = &self->r, *u = &self->r2;

	ASSERT_EQ(0, vm_colibri_run(r, RUN_S, "logits", "--backend", "kernel", "--model", DEMO,
				    "--tokens", "44 10", "--greedy", "6", NULL));
	log_run(_metadata, "logits --backend kernel", r);
	ASSERT_NE(-1, r->status) TH_LOG("it hung (killed after %.0f s)", RUN_S);
	ASSERT_EQ(0, r->status);
	/* It loaded the model for itself, so it took it out again. */
	EXPECT_EQ(0, loaded(self->fd, DEMO_NAME));
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	ASSERT_EQ(0, vm_colibri_run(u, RUN_S, "logits", "--backend", "user", "--model", DEMO,
				    "--tokens", "44 10", "--greedy", "6", NULL));
	ASSERT_EQ(0, u->status);
	EXPECT_STREQ(u->out, r->out);
}

TEST_F(cli, logits_through_the_kernel_leaves_a_loaded_model_loaded)
{
	struct vm_cmd *r = &self->r;

	ASSERT_EQ(0, colibri_dev_load(self->fd, DEMO, NULL, NULL, NULL));
	ASSERT_EQ(0, vm_colibri_run(r, RUN_S, "logits", "--backend", "kernel", "--model", DEMO,
				    "--tokens", "44 10", "--greedy", "2", NULL));
	log_run(_metadata, "logits --backend kernel", r);
	ASSERT_EQ(0, r->status);
	EXPECT_EQ(1, loaded(self->fd, DEMO_NAME));
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
}

/* generate @model 12 greedy tokens through the kernel with @io into @r. */
static int gen(struct vm_cmd *r, const char *model, const char *io, const char *max_new)
{
	return vm_colibri_run(r, RUN_S, "generate", "--backend", "kernel", "--io", io,
			      "--model", model, "--prompt", "ROMEO:", "--max-new-tokens",
			      max_new, "--temperature", "0", NULL);
}

static void second_process_shares_the_model(struct __test_metadata *_metadata,
					    FIXTURE_DATA(cli) *self, const char *io)
{
	struct vm_cmd *a = &self->r, *b = &self->r2;

	ASSERT_EQ(0, gen(a, DEMO, io, "12"));
	log_run(_metadata, "first generate", a);
	ASSERT_EQ(0, a->status);
	ASSERT_EQ(1, loaded(self->fd, DEMO_NAME));
	EXPECT_NE(NULL, strstr(a->err, "loaded " DEMO));
	ASSERT_EQ(0, gen(b, DEMO, io, "12"));
	log_run(_metadata, "second generate", b);
	ASSERT_EQ(0, b->status);
	/* The second one used the pinned model, and got the same text. */
	EXPECT_EQ(NULL, strstr(b->err, "loaded " DEMO));
	EXPECT_STREQ(a->out, b->out);
	EXPECT_LT(strlen("ROMEO:\n"), strlen(b->out));
}

TEST_F(cli, a_second_generate_of_a_loaded_file_shares_it_by_ioctl)
{
	second_process_shares_the_model(_metadata, self, "ioctl");
}

TEST_F(cli, a_second_generate_of_a_loaded_file_shares_it_by_uring)
{
	second_process_shares_the_model(_metadata, self, "uring");
}

TEST_F(cli, generate_by_name_takes_the_tokenizer_from_the_kernel)
{
	struct vm_cmd *a = &self->r, *b = &self->r2;

	ASSERT_EQ(0, gen(a, DEMO, "ioctl", "12"));
	ASSERT_EQ(0, a->status);
	ASSERT_EQ(0, gen(b, DEMO_NAME, "ioctl", "12"));
	log_run(_metadata, "generate by name", b);
	ASSERT_EQ(0, b->status);
	EXPECT_STREQ(a->out, b->out);
	ASSERT_EQ(0, gen(b, DEMO_NAME, "uring", "12"));
	EXPECT_EQ(0, b->status);
	EXPECT_STREQ(a->out, b->out);
}

TEST_F(cli, generate_by_the_name_of_no_model_says_so)
{
	struct vm_cmd *r = &self->r;

	ASSERT_EQ(0, gen(r, "no-such-model", "ioctl", "4"));
	EXPECT_EQ(1, r->status);
	EXPECT_NE(NULL, strstr(r->err, "no-such-model")) TH_LOG("stderr: %s", r->err);
}

TEST_F(cli, generate_past_the_context_stops_at_it_as_in_process)
{
	struct vm_cmd *k = &self->r, *u = &self->r2;

	/* 2 prompt tokens + 300 > the model's 256 positions. */
	ASSERT_EQ(0, gen(k, DEMO, "ioctl", "300"));
	log_run(_metadata, "generate --max-new-tokens 300 (kernel)", k);
	ASSERT_EQ(0, k->status);
	EXPECT_NE(NULL, strstr(k->err, "context"));
	ASSERT_EQ(0, vm_colibri_run(u, RUN_S, "generate", "--backend", "user", "--model", DEMO,
				    "--prompt", "ROMEO:", "--max-new-tokens", "300",
				    "--temperature", "0", NULL));
	log_run(_metadata, "generate --max-new-tokens 300 (in-process)", u);
	ASSERT_EQ(0, u->status);
	EXPECT_NE(NULL, strstr(u->err, "context"));
	EXPECT_STREQ(u->out, k->out);
}

/*
 * --backend auto (the default) as a user who may not load models: the
 * kernel refuses the LOAD, so the file runs in-process, and it says why.
 */
TEST_F(cli, generate_auto_without_the_right_to_load_runs_in_process)
{
	char *argv[] = { (char *)vm_colibri(), "generate", "--model", DEMO, "--prompt", "ROMEO:",
			 "--max-new-tokens", "12", "--temperature", "0", NULL };
	struct vm_cmd *r = &self->r, *u = &self->r2;

	ASSERT_EQ(0, vm_cmd_run_as(r, RUN_S, 65534, argv));
	log_run(_metadata, "generate as uid 65534", r);
	ASSERT_EQ(0, r->status);
	EXPECT_NE(NULL, strstr(r->err, "running in-process"));
	EXPECT_NE(NULL, strstr(r->err, "backend: in-process engine"));
	EXPECT_EQ(0, loaded(self->fd, DEMO_NAME));
	ASSERT_EQ(0, vm_colibri_run(u, RUN_S, "generate", "--backend", "user", "--model", DEMO,
				    "--prompt", "ROMEO:", "--max-new-tokens", "12", "--temperature",
				    "0", NULL));
	EXPECT_STREQ(u->out, r->out);
}

TEST_F(cli, bench_fits_the_memory_of_the_guest)
{
	struct vm_cmd *r = &self->r;

	ASSERT_EQ(0, vm_colibri_run(r, RUN_S, "bench", "--backend", "kernel", "--model", DEMO,
				    "--prompt-tokens", "8", "--gen-tokens", "4", "--reps", "1",
				    NULL));
	log_run(_metadata, "bench --backend kernel", r);
	ASSERT_EQ(0, r->status);
	EXPECT_NE(NULL, strstr(r->out, "roofline ratio")) TH_LOG("stdout: %s", r->out);
}

/* Entries of /tmp whose name starts with @prefix. */
static int tmp_entries(const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir("/tmp");
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

#define GGUF_NAME "mixtral-gguf"

TEST_F(cli, load_of_a_gguf_file_pins_it_and_removes_its_temporary_file)
{
	struct vm_cmd *r = &self->r, *u = &self->r2;
	char gguf[4200];
	int before;

	snprintf(gguf, sizeof(gguf), "%s/mixtral-f32.gguf", fixtures());
	ASSERT_EQ(0, access(gguf, R_OK)) TH_LOG("%s: run tests/vm/make-fixtures", gguf);
	colibri_dev_unload(self->fd, GGUF_NAME, 1);
	/* the guest's root is read-only; its /tmp is not */
	setenv("TMPDIR", "/tmp", 1);
	before = tmp_entries("colibri-load.");
	ASSERT_LE(0, before);
	ASSERT_EQ(0, vm_colibri_run(r, RUN_S, "load", gguf, "--name", GGUF_NAME, NULL));
	log_run(_metadata, "load X.gguf", r);
	ASSERT_EQ(0, r->status);
	EXPECT_NE(NULL, strstr(r->err, "converting to a temporary .colibri in /tmp/"));
	EXPECT_NE(NULL, strstr(r->out, "loaded " GGUF_NAME ":")) TH_LOG("stdout: %s", r->out);
	EXPECT_EQ(1, loaded(self->fd, GGUF_NAME));
	EXPECT_EQ(before, tmp_entries("colibri-load."));
	/* by the name alone: the pinned copy, against the GGUF in-process */
	ASSERT_EQ(0, vm_colibri_run(r, RUN_S, "logits", "--backend", "kernel", "--model",
				    GGUF_NAME, "--tokens", "5 17 200 3", "--greedy", "6", NULL));
	log_run(_metadata, "logits --backend kernel (pinned GGUF)", r);
	ASSERT_EQ(0, r->status);
	ASSERT_EQ(0, vm_colibri_run(u, RUN_S, "logits", "--backend", "user", "--model", gguf,
				    "--tokens", "5 17 200 3", "--greedy", "6", NULL));
	log_run(_metadata, "logits --backend user (the GGUF)", u);
	ASSERT_EQ(0, u->status);
	EXPECT_NE(0, strlen(u->out));
	EXPECT_STREQ(u->out, r->out);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, GGUF_NAME, 1));
}

TEST_HARNESS_MAIN
