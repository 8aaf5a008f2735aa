// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_model_chat - colibri_model_chat(), the chat template and special
 * tokens of an open model, on the in-process backend: none for the shipped
 * model (the fallback renders), the file's own for a copy of it that
 * carries one, loaded once and shared by threads.  tests/vm/
 * session_chat_test.c checks that the kernel hands out the same.  Run from
 * the top of the work tree.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "cb_test.h"
#include "model/cbfile.h"
#include "chat/chat_template.h"
#include "colibri_session.h"
#include "tokenizer.h"

#define DEMO "models/shakespeare-moe.colibri"

static const char tmpl[] = "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}"
			   "{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant] "
			   "{% endif %}";

static char copy_path[64];

/* The shipped model again, with @tmpl as its chat template section. */
static int write_copy_with_template(void)
{
	struct cbfile *f;
	struct cbfile_writer *w = NULL;
	struct cbfile_meta meta = { 0 };
	char err[256];
	uint32_t i;

	f = cbfile_open(DEMO, 0, err, sizeof(err));
	if (!f) {
		printf("# %s\n", err);
		return -1;
	}
	meta.name = "demo-tmpl";
	meta.tokenizer_json = cbfile_tokenizer(f, &meta.tokenizer_len);
	meta.bos_id = f->info.bos_id;
	meta.eos_id = f->info.eos_id;
	meta.pad_id = f->info.pad_id;
	meta.chat_template = tmpl;
	meta.chat_template_len = sizeof(tmpl) - 1;
	snprintf(copy_path, sizeof(copy_path), "/tmp/test_model_chat.%d.colibri", (int)getpid());
	w = cbfile_writer_begin(copy_path, &f->cfg, &meta, err, sizeof(err));
	if (!w)
		goto fail;
	for (i = 0; i < f->info.n_tensors; i++)
		if (cbfile_writer_set_dtype(w, f->dir[i].role, f->dir[i].layer, f->dir[i].expert,
					    f->dir[i].dtype))
			goto fail;
	if (cbfile_writer_layout(w))
		goto fail;
	for (i = 0; i < f->info.n_tensors; i++)
		if (cbfile_writer_put(w, f->dir[i].role, f->dir[i].layer, f->dir[i].expert,
				      f->map + f->dir[i].offset, f->dir[i].size))
			goto fail;
	if (cbfile_writer_finish(w, err, sizeof(err))) {
		w = NULL;
		goto fail;
	}
	cbfile_close(f);
	return 0;
fail:
	printf("# writing %s: %s\n", copy_path, w ? cbfile_writer_error(w) : err);
	cbfile_writer_abort(w);
	cbfile_close(f);
	return -1;
}

static struct colibri_model *open_user(const char *path)
{
	struct colibri_model_opts o = { .backend = COLIBRI_BACKEND_USER, .threads = 1, .isa = -1,
					.dtype = -1 };
	struct colibri_model *m = NULL;
	char err[256];

	CB_CHECK(!colibri_model_open(&m, path, &o, err, sizeof(err)), "%s: %s", path, err);
	return m;
}

/* The text of token @id of @m's tokenizer. */
static void token_text(struct colibri_model *m, int32_t id, char *buf, size_t cap)
{
	char err[256];
	struct cb_tokenizer *tok = colibri_model_tokenizer(m, err, sizeof(err));
	long n = tok ? cb_tok_decode(tok, &id, 1, 0, buf, cap - 1) : -1;

	buf[n >= 0 && (size_t)n < cap ? n : 0] = 0;
}

static const char *special(const struct cb_chat *c, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->special, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *render(const struct cb_chat *c)
{
	cJSON *msgs = cJSON_Parse("[{\"role\": \"user\", \"content\": \"Hi\"}]");
	char err[256], *out = NULL;
	size_t n;

	CB_CHECK(!cb_chat_render(c, msgs, NULL, 1, NULL, &out, &n, err, sizeof(err)), "%s", err);
	cJSON_Delete(msgs);
	return out;
}

static void test_the_shipped_model_has_no_template_and_renders_the_fallback(void)
{
	struct colibri_model *m = open_user(DEMO);
	const struct cb_chat *c;
	char err[256] = "", eos[64];
	char *out;

	if (!m)
		return;
	c = colibri_model_chat(m, err, sizeof(err));
	CB_CHECK(c && !c->tmpl, "%s", err);
	if (c) {
		token_text(m, 2047, eos, sizeof(eos));
		CB_CHECK(eos[0] && special(c, "eos_token") &&
			 !strcmp(special(c, "eos_token"), eos), "eos_token %s, not %s",
			 special(c, "eos_token"), eos);
		out = render(c);
		CB_CHECK(out && !strcmp(out, "USER:\nHi\n\nASSISTANT:\n"), "fallback: '%s'", out);
		free(out);
	}
	colibri_model_close(m);
}

static void test_a_files_template_is_the_models(void)
{
	struct colibri_model *m = open_user(copy_path);
	const struct cb_chat *c;
	char err[256] = "", want[256], eos[64];
	char *out;

	if (!m)
		return;
	c = colibri_model_chat(m, err, sizeof(err));
	CB_CHECK(c && c->tmpl && c->tmpl_len == sizeof(tmpl) - 1 && !memcmp(c->tmpl, tmpl,
									     c->tmpl_len),
		 "template %s: %s", c && c->tmpl ? c->tmpl : "(none)", err);
	if (c && c->tmpl) {
		token_text(m, 2047, eos, sizeof(eos));
		snprintf(want, sizeof(want), "%s[user] Hi%s[assistant] ", eos, eos);
		out = render(c);
		CB_CHECK(out && !strcmp(out, want), "rendered '%s', not '%s'", out, want);
		free(out);
	}
	colibri_model_close(m);
}

struct race {
	struct colibri_model *m;
	const struct cb_chat *got;
};

static void *race_fn(void *arg)
{
	struct race *r = arg;
	char err[256];

	r->got = colibri_model_chat(r->m, err, sizeof(err));
	return NULL;
}

/* Loaded once: every call, from any thread, gets the same one. */
static void test_it_is_loaded_once_for_every_thread(void)
{
	struct colibri_model *m = open_user(copy_path);
	struct race r[4];
	pthread_t th[4];
	char err[256];
	int i;

	if (!m)
		return;
	for (i = 0; i < 4; i++) {
		r[i].m = m;
		r[i].got = NULL;
		pthread_create(&th[i], NULL, race_fn, &r[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 4; i++)
		CB_CHECK(r[i].got && r[i].got == r[0].got, "thread %d: %p, thread 0: %p", i,
			 (void *)r[i].got, (void *)r[0].got);
	CB_CHECK(colibri_model_chat(m, err, sizeof(err)) == r[0].got, "a later call differs");
	colibri_model_close(m);
}

int main(void)
{
	if (write_copy_with_template()) {
		printf("not ok 1 - a copy of the shipped model with a template\n1..1\n");
		return 1;
	}
	CB_RUN(test_the_shipped_model_has_no_template_and_renders_the_fallback);
	CB_RUN(test_a_files_template_is_the_models);
	CB_RUN(test_it_is_loaded_once_for_every_thread);
	unlink(copy_path);
	return cb_test_done();
}
