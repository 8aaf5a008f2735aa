// SPDX-License-Identifier: GPL-2.0-only
/*
 * session_chat_test - colibri_model_chat() on the kernel backend: the chat
 * template and special tokens of a model pinned in the kernel are those of
 * the file it was loaded from, by path and by name alone, for a model with
 * a real tokenizer and template (llama3-chat), one with a template and no
 * tokenizer (mixtral-tmpl: no special tokens), and one without a template
 * (the shipped model: the fallback).  tests/unit/test_model_chat.c runs
 * the in-process side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "chat/chat_template.h"
#include "colibri_session.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define DEMO "models/shakespeare-moe.colibri"

FIXTURE(chat) {
	int fd;
};

FIXTURE_SETUP(chat)
{
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(chat)
{
	close(self->fd);
}

static struct colibri_model *open_as(const char *model, enum colibri_backend b, unsigned int flags)
{
	struct colibri_model_opts o = { .backend = b, .isa = -1, .dtype = -1, .threads = 1,
					.flags = flags };
	struct colibri_model *m = NULL;
	char err[256];

	if (colibri_model_open(&m, model, &o, err, sizeof(err)))
		fprintf(stderr, "# %s: %s\n", model, err);
	return m;
}

/* The kernel's chat of @path (loaded for this test), then by name, against the file's. */
static void same_as_the_file(struct __test_metadata *_metadata, FIXTURE_DATA(chat) *self,
			     const char *path, const char *name, int has_tmpl, int has_tokens)
{
	struct colibri_model *u = open_as(path, COLIBRI_BACKEND_USER, 0), *k, *byname;
	const struct cb_chat *uc, *kc, *nc;
	char err[256] = "", *a, *b;

	colibri_dev_unload(self->fd, name, 1);
	ASSERT_NE(NULL, u);
	k = open_as(path, COLIBRI_BACKEND_KERNEL, COLIBRI_MODEL_UNLOAD);
	ASSERT_NE(NULL, k);
	byname = open_as(name, COLIBRI_BACKEND_KERNEL, COLIBRI_MODEL_NO_LOAD);
	ASSERT_NE(NULL, byname);
	uc = colibri_model_chat(u, err, sizeof(err));
	ASSERT_NE(NULL, uc) TH_LOG("%s", err);
	kc = colibri_model_chat(k, err, sizeof(err));
	ASSERT_NE(NULL, kc) TH_LOG("%s", err);
	nc = colibri_model_chat(byname, err, sizeof(err));
	ASSERT_NE(NULL, nc) TH_LOG("%s", err);
	EXPECT_EQ(has_tmpl, uc->tmpl != NULL);
	EXPECT_EQ(uc->tmpl_len, kc->tmpl_len);
	EXPECT_EQ(uc->tmpl_len, nc->tmpl_len);
	if (uc->tmpl && kc->tmpl && nc->tmpl && uc->tmpl_len == kc->tmpl_len &&
	    uc->tmpl_len == nc->tmpl_len) {
		EXPECT_EQ(0, memcmp(uc->tmpl, kc->tmpl, uc->tmpl_len));
		EXPECT_EQ(0, memcmp(uc->tmpl, nc->tmpl, uc->tmpl_len));
	}
	a = cJSON_PrintUnformatted(uc->special);
	b = cJSON_PrintUnformatted(nc->special);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_STREQ(a, b);
	EXPECT_EQ(has_tokens, !!strstr(b, "eos_token")) TH_LOG("special tokens: %s", b);
	free(a);
	free(b);
	/* Loaded once: the same pointer again. */
	EXPECT_EQ(nc, colibri_model_chat(byname, err, sizeof(err)));
	colibri_model_close(byname);
	colibri_model_close(k);
	colibri_model_close(u);
	/* The kernel as it was: what this test loaded is gone with its last handle. */
	EXPECT_EQ(-1, vm_model_attr(name, "sessions"));
}

TEST_F(chat, a_real_template_and_its_tokens_come_from_the_kernel_as_in_the_file)
{
	char path[4096];

	ASSERT_EQ(0, fixture("llama3-chat", path, sizeof(path))) TH_LOG("%s: run tests/vm/make-fixtures", path);
	same_as_the_file(_metadata, self, path, "llama3-chat", 1, 1);
}

TEST_F(chat, a_template_without_a_tokenizer_has_no_special_tokens)
{
	char path[4096];

	ASSERT_EQ(0, fixture("mixtral-tmpl", path, sizeof(path)));
	same_as_the_file(_metadata, self, path, "mixtral-tmpl", 1, 0);
}

TEST_F(chat, a_model_without_a_template_gets_none_from_the_kernel)
{
	same_as_the_file(_metadata, self, DEMO, "shakespeare-moe", 0, 1);
}

TEST_HARNESS_MAIN
