// SPDX-License-Identifier: GPL-2.0-only
/*
 * tokenizer_test - COLIBRI_IOC_GET_TOKENIZER and the tokenizer checksum at
 * LOAD: a model pinned in the kernel carries its tokenizer, verified, so a
 * process can use the model by name alone.
 *
 * Runs inside the vm-run guest with colibri.ko loaded, from the top of the
 * work tree (the shipped model is models/shakespeare-moe.colibri).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

#define DEMO "models/shakespeare-moe.colibri"

static int get_tok(int fd, struct colibri_tokenizer *t)
{
	return ioctl(fd, COLIBRI_IOC_GET_TOKENIZER, t) ? -errno : 0;
}

static void tok_arg(struct colibri_tokenizer *t, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->size = sizeof(*t);
	strncpy(t->name, name, sizeof(t->name) - 1);
}

FIXTURE(tok) {
	int fd;
	struct cbfile *file;
	const char *json;
	size_t len;
};

FIXTURE_SETUP(tok)
{
	char err[256];

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	self->file = cbfile_open(DEMO, 0, err, sizeof(err));
	ASSERT_NE(NULL, self->file) TH_LOG("%s", err);
	self->json = cbfile_tokenizer(self->file, &self->len);
	ASSERT_NE(NULL, self->json);
	ASSERT_EQ(0, colibri_dev_load(self->fd, DEMO, "demo-tok", NULL, NULL));
}

FIXTURE_TEARDOWN(tok)
{
	colibri_dev_unload(self->fd, "demo-tok", 0);
	cbfile_close(self->file);
	close(self->fd);
}

TEST_F(tok, returns_the_files_section_verbatim)
{
	struct colibri_tokenizer t;
	size_t len;
	void *buf;

	ASSERT_EQ(0, colibri_dev_get_tokenizer(self->fd, "demo-tok", &buf, &len, &t));
	ASSERT_EQ(self->len, len);
	EXPECT_EQ(0, memcmp(buf, self->json, len));
	EXPECT_EQ(COLIBRI_TOK_HF_JSON, t.tok_kind);
	EXPECT_EQ(self->file->info.bos_id, t.bos_id);
	EXPECT_EQ(self->file->info.eos_id, t.eos_id);
	EXPECT_EQ(self->file->info.pad_id, t.pad_id);
	EXPECT_EQ(self->file->info.tok_flags, t.tok_flags);
	free(buf);
}

TEST_F(tok, a_short_buffer_gets_the_size_and_no_bytes)
{
	struct colibri_tokenizer t;
	char *buf = malloc(self->len);
	size_t written = 0;

	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, self->len);
	tok_arg(&t, "demo-tok");
	t.buf = (uintptr_t)buf;
	t.buf_len = self->len - 1;
	ASSERT_EQ(0, get_tok(self->fd, &t));
	EXPECT_EQ(self->len, t.section_size);
	for (size_t i = 0; i < self->len; i++)
		written += buf[i] != 0x5a;
	EXPECT_EQ(0, written);
	/* Size only: no buffer at all. */
	tok_arg(&t, "demo-tok");
	ASSERT_EQ(0, get_tok(self->fd, &t));
	EXPECT_EQ(self->len, t.section_size);
	free(buf);
}

TEST_F(tok, bad_arguments)
{
	struct colibri_tokenizer t;
	struct {
		struct colibri_tokenizer t;
		__u64 future[2];
	} big;

	tok_arg(&t, "no-such-model");
	EXPECT_EQ(-ENOENT, get_tok(self->fd, &t));
	tok_arg(&t, "demo-tok");
	t.flags = 2;
	EXPECT_EQ(-EINVAL, get_tok(self->fd, &t));
	tok_arg(&t, "demo-tok");
	t.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, get_tok(self->fd, &t));
	tok_arg(&t, "demo-tok");
	t.reserved0 = 1;
	EXPECT_EQ(-EINVAL, get_tok(self->fd, &t));
	tok_arg(&t, "");
	EXPECT_EQ(-EINVAL, get_tok(self->fd, &t));
	tok_arg(&t, "demo-tok");
	t.size = COLIBRI_TOKENIZER_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, get_tok(self->fd, &t));
	/* A buffer the kernel cannot write. */
	tok_arg(&t, "demo-tok");
	t.buf = 8;
	t.buf_len = self->len;
	EXPECT_EQ(-EFAULT, get_tok(self->fd, &t));
	/* A newer, larger struct: a zero tail is fine, garbage is -E2BIG. */
	memset(&big, 0, sizeof(big));
	tok_arg(&big.t, "demo-tok");
	big.t.size = sizeof(big);
	EXPECT_EQ(0, get_tok(self->fd, &big.t));
	EXPECT_EQ(self->len, big.t.section_size);
	big.future[1] = 1;
	EXPECT_EQ(-E2BIG, get_tok(self->fd, &big.t));
}

TEST(model_without_tokenizer_reports_none)
{
	struct colibri_tokenizer t;
	char path[4096];
	size_t len = 1;
	void *buf = (void *)1;
	int fd = colibri_dev_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)));
	ASSERT_EQ(0, colibri_dev_load(fd, path, "no-tok", NULL, NULL));
	EXPECT_EQ(0, colibri_dev_get_tokenizer(fd, "no-tok", &buf, &len, &t));
	EXPECT_EQ(NULL, buf);
	EXPECT_EQ(0, len);
	EXPECT_EQ(COLIBRI_TOK_NONE, t.tok_kind);
	EXPECT_EQ(0, colibri_dev_unload(fd, "no-tok", 0));
	close(fd);
}

TEST(chat_template_is_the_files_section_verbatim)
{
	struct cbfile *f;
	const char *want;
	char path[4096], err[256], *tmpl;
	size_t want_len, len;
	int fd = colibri_dev_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fixture("mixtral-tmpl", path, sizeof(path)));
	f = cbfile_open(path, 0, err, sizeof(err));
	ASSERT_NE(NULL, f) TH_LOG("%s", err);
	want = cbfile_chat_template(f, &want_len);
	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, colibri_dev_load(fd, path, "tmpl", NULL, NULL));
	ASSERT_EQ(0, colibri_dev_get_chat_template(fd, "tmpl", &tmpl, &len));
	ASSERT_NE(NULL, tmpl);
	EXPECT_EQ(want_len, len);
	EXPECT_EQ(0, memcmp(tmpl, want, len));
	EXPECT_EQ(0, tmpl[len]);
	free(tmpl);
	/* The demo model has a tokenizer and no template. */
	ASSERT_EQ(0, colibri_dev_load(fd, DEMO, "no-tmpl", NULL, NULL));
	tmpl = (char *)1;
	EXPECT_EQ(0, colibri_dev_get_chat_template(fd, "no-tmpl", &tmpl, &len));
	EXPECT_EQ(NULL, tmpl);
	EXPECT_EQ(0, len);
	EXPECT_EQ(0, colibri_dev_unload(fd, "no-tmpl", 0));
	EXPECT_EQ(0, colibri_dev_unload(fd, "tmpl", 0));
	cbfile_close(f);
	close(fd);
}

/* Copies @src to @dst with the byte at @off flipped. */
static int copy_flipped(const char *src, const char *dst, unsigned long long off)
{
	char buf[65536];
	unsigned char c;
	int in, out, ret = -1;
	ssize_t n;

	in = open(src, O_RDONLY);
	out = open(dst, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto out;
	if (pread(out, &c, 1, off) != 1)
		goto out;
	c ^= 0x20;
	if (pwrite(out, &c, 1, off) != 1)
		goto out;
	ret = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

/* LOAD of @path fails with -EINVAL and leaves nothing behind. */
static void expect_refused(struct __test_metadata *_metadata, const char *path)
{
	struct colibri_info before, after;
	int fd = colibri_dev_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, colibri_dev_get_info(fd, &before));
	EXPECT_EQ(-EINVAL, colibri_dev_load(fd, path, "bad-section", NULL, NULL));
	ASSERT_EQ(0, colibri_dev_get_info(fd, &after));
	EXPECT_EQ(before.nr_models, after.nr_models);
	EXPECT_EQ(before.mem_used, after.mem_used);
	close(fd);
}

TEST(load_refuses_a_chat_template_with_a_bad_checksum)
{
	const char *bad = "/tmp/bad-template.colibri";
	char path[4096], err[256];
	unsigned long long off;
	struct cbfile *f;

	ASSERT_EQ(0, fixture("mixtral-tmpl", path, sizeof(path)));
	f = cbfile_open(path, 0, err, sizeof(err));
	ASSERT_NE(NULL, f) TH_LOG("%s", err);
	off = f->info.tmpl_offset + f->info.tmpl_size / 2;
	cbfile_close(f);
	ASSERT_EQ(0, copy_flipped(path, bad, off));
	expect_refused(_metadata, bad);
	unlink(bad);
}

/*
 * The header's checksum covers only header and directory; the tokenizer
 * section has its own.  A flipped byte in it must fail LOAD with -EINVAL
 * and leave nothing pinned.
 */
TEST(load_refuses_a_tokenizer_with_a_bad_checksum)
{
	const char *bad = "/tmp/bad-tokenizer.colibri";
	unsigned long long off;
	struct cbfile *f;
	char err[256];
	int fd;

	f = cbfile_open(DEMO, 0, err, sizeof(err));
	ASSERT_NE(NULL, f) TH_LOG("%s", err);
	off = f->info.tok_offset + f->info.tok_size / 2;
	cbfile_close(f);
	ASSERT_EQ(0, copy_flipped(DEMO, bad, off));
	expect_refused(_metadata, bad);
	/* The same file, mended, loads: the flipped byte was the only fault. */
	fd = colibri_dev_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, colibri_dev_load(fd, DEMO, "good-tok", NULL, NULL));
	EXPECT_EQ(0, colibri_dev_unload(fd, "good-tok", 0));
	close(fd);
	unlink(bad);
}

TEST_HARNESS_MAIN
