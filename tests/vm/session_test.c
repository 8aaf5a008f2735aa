// SPDX-License-Identifier: GPL-2.0-only
/*
 * session_test - libcolibri's session API (colibri_session.h) on the
 * kernel backend, by ioctl and by io_uring: the same tokens and logits as
 * the in-process engine, a model opened by name with the kernel's
 * tokenizer, what is loaded and unloaded when, the end of the context,
 * cancellation from another thread, many sessions on many threads.
 * tests/unit/test_session.c runs the in-process side natively.
 *
 * Runs from the top of the work tree (models/shakespeare-moe.colibri, whose
 * name is "shakespeare-moe" and context 256 positions).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "colibri_session.h"
#include "tokenizer.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define DEMO "models/shakespeare-moe.colibri"
#define NAME "shakespeare-moe"
#define GEN 30

static const struct colibri_sampling warm = { .temperature_milli = 800, .top_p_ppm = 950000,
					      .seed = 7 };

static int is_loaded(int fd, const char *name)
{
	struct colibri_model_entry ents[64];
	int n = colibri_dev_list(fd, ents, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (!strcmp(ents[i].name, name))
			return 1;
	return 0;
}

static struct colibri_model_opts mopts(enum colibri_backend b, enum colibri_io io,
				       unsigned int flags)
{
	return (struct colibri_model_opts){ .backend = b, .io = io, .isa = -1, .dtype = -1,
					    .threads = 2, .flags = flags };
}

/* A prompt, then GEN warm tokens, the last logits in @logits[vocab]. */
static int run_gen(struct colibri_model *m, uint32_t salt, int32_t *out, float *logits)
{
	struct colibri_session_opts so = { .max_context = 128 };
	struct colibri_step st = { .logits = logits };
	struct colibri_session *s;
	struct colibri_sampling sp = warm;
	uint32_t t[21], V = colibri_model_info(m)->vocab_size, i;
	char err[256];
	int ret;

	ret = colibri_session_open(&s, m, &so, err, sizeof(err));
	if (ret)
		return ret;
	sp.seed = salt;
	colibri_session_set_sampling(s, &sp);
	test_tokens(t, 21, V, salt);
	ret = colibri_session_prefill(s, t, 21, &st);
	for (i = 0; i < GEN && !ret; i++) {
		out[i] = st.token;
		ret = colibri_session_step(s, (uint32_t)st.token, &st);
	}
	colibri_session_close(s);
	return ret;
}

FIXTURE(sess) {
	int fd;
	struct colibri_model *user;
	int32_t want[GEN];
	float want_logits[4096];
};

FIXTURE_SETUP(sess)
{
	struct colibri_model_opts uo = mopts(COLIBRI_BACKEND_USER, 0, 0);
	char err[256];

	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	colibri_dev_unload(self->fd, NAME, 1);
	/* The in-process reference runs the kernel's ISA level. */
	setenv("COLIBRI_ISA", colibri_isa_name(info_now(self->fd).isa_level), 1);
	ASSERT_EQ(0, colibri_model_open(&self->user, DEMO, &uo, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_GE(4096, colibri_model_info(self->user)->vocab_size);
	ASSERT_EQ(0, run_gen(self->user, 3, self->want, self->want_logits));
}

FIXTURE_TEARDOWN(sess)
{
	colibri_model_close(self->user);
	colibri_dev_unload(self->fd, NAME, 1);
	close(self->fd);
}

static void same_as_in_process(struct __test_metadata *_metadata, FIXTURE_DATA(sess) *self,
			       enum colibri_io io)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, io, 0);
	static float logits[4096];
	int32_t got[GEN];
	struct colibri_model *m;
	char err[256];

	ko.threads = 0;
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(COLIBRI_BACKEND_KERNEL, colibri_model_info(m)->backend);
	EXPECT_EQ(1, colibri_model_info(m)->loaded);
	EXPECT_STREQ(NAME, colibri_model_info(m)->name);
	ASSERT_EQ(0, run_gen(m, 3, got, logits));
	EXPECT_EQ(0, memcmp(self->want, got, sizeof(got)));
	EXPECT_EQ(0, memcmp(self->want_logits, logits,
			    colibri_model_info(m)->vocab_size * sizeof(float)));
	colibri_model_close(m);
	/* Loaded without COLIBRI_MODEL_UNLOAD: it stays for the next process. */
	EXPECT_EQ(1, is_loaded(self->fd, NAME));
}

TEST_F(sess, kernel_by_ioctl_gives_the_in_process_tokens_and_logits)
{
	same_as_in_process(_metadata, self, COLIBRI_IO_IOCTL);
}

TEST_F(sess, kernel_by_uring_gives_the_in_process_tokens_and_logits)
{
	same_as_in_process(_metadata, self, COLIBRI_IO_URING);
}

TEST_F(sess, a_model_by_name_carries_its_tokenizer)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, 0, 0);
	struct cb_tokenizer *kt, *ut;
	struct colibri_model *m;
	int32_t *a = NULL, *b = NULL, got[GEN];
	const char *text = "ROMEO:\nWhat light through yonder window breaks?";
	char err[256];
	long na, nb;

	ko.threads = 0;
	ASSERT_EQ(0, colibri_dev_load(self->fd, DEMO, NULL, NULL, NULL));
	ASSERT_EQ(0, colibri_model_open(&m, NAME, &ko, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, colibri_model_info(m)->loaded);
	kt = colibri_model_tokenizer(m, err, sizeof(err));
	ASSERT_NE(NULL, kt) TH_LOG("%s", err);
	ut = colibri_model_tokenizer(self->user, err, sizeof(err));
	ASSERT_NE(NULL, ut);
	na = cb_tok_encode_alloc(kt, text, strlen(text), CB_TOK_ADD_SPECIAL, &a);
	nb = cb_tok_encode_alloc(ut, text, strlen(text), CB_TOK_ADD_SPECIAL, &b);
	ASSERT_LT(0, na);
	EXPECT_EQ(nb, na);
	EXPECT_EQ(0, memcmp(a, b, na * sizeof(*a)));
	EXPECT_EQ(cb_tok_eos_id(ut), cb_tok_eos_id(kt));
	ASSERT_EQ(0, run_gen(m, 3, got, NULL));
	EXPECT_EQ(0, memcmp(self->want, got, sizeof(got)));
	/* the weights are only in the kernel: no byte counts */
	EXPECT_EQ(-ENODATA, colibri_model_weight_bytes(m, &(double){ 0 }));
	free(a);
	free(b);
	colibri_model_close(m);
}

TEST_F(sess, a_name_that_is_not_loaded_is_enoent_and_no_load_loads_nothing)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, 0, COLIBRI_MODEL_NO_LOAD);
	struct colibri_model *m = NULL;
	char err[256];

	ko.threads = 0;
	EXPECT_EQ(-ENOENT, colibri_model_open(&m, "no-such-model", &ko, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no-such-model"));
	EXPECT_EQ(-ENOENT, colibri_model_open(&m, DEMO, &ko, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, NAME)) TH_LOG("%s", err);
	EXPECT_EQ(0, is_loaded(self->fd, NAME));
}

/*
 * COLIBRI_MODEL_UNLOAD: what this open loaded goes when the model's last
 * session is closed (never while one of ours is attached, which an
 * UNLOAD with wait would wait for for ever), and stays while someone else
 * is attached.
 */
TEST_F(sess, unload_on_close_comes_after_the_last_session)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, 0, COLIBRI_MODEL_UNLOAD);
	struct colibri_session *s;
	struct colibri_model *m;
	char err[256];
	int other;

	ko.threads = 0;
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, colibri_session_open(&s, m, NULL, err, sizeof(err))) TH_LOG("%s", err);
	colibri_model_close(m);
	EXPECT_EQ(1, is_loaded(self->fd, NAME));
	EXPECT_EQ(0, colibri_session_prefill(s, (uint32_t[]){ 1, 2, 3 }, 3, NULL));
	colibri_session_close(s);
	EXPECT_EQ(0, is_loaded(self->fd, NAME));
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);

	/* someone else attached: it stays */
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	other = colibri_dev_open();
	ASSERT_EQ(0, colibri_dev_attach(other, NAME, 0, 0, NULL));
	colibri_model_close(m);
	EXPECT_EQ(1, is_loaded(self->fd, NAME));
	close(other);
}

TEST_F(sess, the_end_of_the_context_as_in_process)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, 0, 0);
	struct colibri_session_opts so = { .max_context = 24 };
	struct colibri_generation gk = { .max_new = 100, .eos = -1 }, gu = gk;
	struct colibri_session *k, *u;
	struct colibri_model *m;
	uint32_t t[20];
	char err[256];

	ko.threads = 0;
	test_tokens(t, 20, 256, 9);
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, colibri_session_open(&k, m, &so, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, colibri_session_open(&u, self->user, &so, err, sizeof(err)));
	EXPECT_EQ(24, colibri_session_max_context(k));
	colibri_session_set_sampling(k, &warm);
	colibri_session_set_sampling(u, &warm);
	ASSERT_EQ(0, colibri_session_generate(k, t, 20, &gk)) TH_LOG("%s", colibri_session_error(k));
	ASSERT_EQ(0, colibri_session_generate(u, t, 20, &gu));
	EXPECT_EQ(COLIBRI_STOP_CONTEXT, gk.stop);
	EXPECT_EQ(24 - 20 + 1, gk.n_new);
	EXPECT_EQ(gu.n_new, gk.n_new);
	EXPECT_EQ(gu.step.token, gk.step.token);
	/* one more is refused before the kernel sees it, and nothing is lost */
	EXPECT_EQ(-ENOSPC, colibri_session_step(k, 1, NULL));
	EXPECT_EQ(24, colibri_session_n_past(k));
	colibri_session_close(k);
	colibri_session_close(u);
	colibri_model_close(m);
}

struct canceller {
	struct colibri_session *s;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int n, asked, done;
};

static void *cancel_thread(void *arg)
{
	struct canceller *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->asked)
		pthread_cond_wait(&c->cond, &c->lock);
	colibri_session_cancel(c->s);
	c->done = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* At the 4th token the generating thread has another one cancel it. */
static int cancel_at_4(void *arg, int32_t token, const struct colibri_step *st)
{
	struct canceller *c = arg;

	if (++c->n == 4) {
		pthread_mutex_lock(&c->lock);
		c->asked = 1;
		pthread_cond_broadcast(&c->cond);
		while (!c->done)
			pthread_cond_wait(&c->cond, &c->lock);
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

TEST_F(sess, cancel_from_another_thread_and_go_on)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, COLIBRI_IO_URING, 0);
	struct canceller c = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct colibri_generation g = { .max_new = 50, .eos = -1, .on_token = cancel_at_4,
					.arg = &c };
	struct colibri_session *s;
	struct colibri_model *m;
	struct colibri_step st = { 0 };
	uint32_t t[5] = { 5, 6, 7, 8, 9 };
	char err[256];
	pthread_t th;

	ko.threads = 0;
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, colibri_session_open(&s, m, NULL, err, sizeof(err))) TH_LOG("%s", err);
	c.s = s;
	pthread_create(&th, NULL, cancel_thread, &c);
	EXPECT_EQ(-ECANCELED, colibri_session_generate(s, t, 5, &g));
	pthread_join(th, NULL);
	EXPECT_EQ(4, g.n_new);
	EXPECT_EQ(0, colibri_session_n_past(s));
	/* The kernel's sequence was reset too: the same prompt, the same token. */
	ASSERT_EQ(0, colibri_session_prefill(s, t, 5, &st)) TH_LOG("%s", colibri_session_error(s));
	EXPECT_EQ(5, st.n_past);
	colibri_session_close(s);
	colibri_model_close(m);
}

#define NT 4

struct worker {
	struct colibri_model *m;
	uint32_t salt;
	int32_t out[GEN];
	int ret;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	w->ret = run_gen(w->m, w->salt, w->out, NULL);
	return NULL;
}

/* Sessions on threads of their own, batched by the module: as alone. */
static void concurrent(struct __test_metadata *_metadata, FIXTURE_DATA(sess) *self,
		       enum colibri_io io)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, io, 0);
	struct worker w[NT];
	int32_t alone[NT][GEN];
	struct colibri_model *m;
	pthread_t th[NT];
	char err[256];
	int i;

	ko.threads = 0;
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < NT; i++) {
		ASSERT_EQ(0, run_gen(self->user, 40 + i, alone[i], NULL));
		w[i] = (struct worker){ .m = m, .salt = 40 + i };
	}
	for (i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, work, &w[i]);
	for (i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].ret);
		EXPECT_EQ(0, memcmp(alone[i], w[i].out, sizeof(alone[i])))
			TH_LOG("session %d differs", i);
	}
	colibri_model_close(m);
}

TEST_F(sess, concurrent_sessions_by_ioctl_give_what_each_gives_alone)
{
	concurrent(_metadata, self, COLIBRI_IO_IOCTL);
}

TEST_F(sess, concurrent_sessions_by_uring_give_what_each_gives_alone)
{
	concurrent(_metadata, self, COLIBRI_IO_URING);
}

struct hop {
	struct colibri_session *s;
	struct colibri_step *st;
	int ret;
};

static void *step_here(void *arg)
{
	struct hop *h = arg;

	h->ret = colibri_session_step(h->s, (uint32_t)h->st->token, h->st);
	return NULL;
}

/* io_uring rings serve the thread that made them: a session that moves
 * from thread to thread (a server's worker pool) still steps. */
TEST_F(sess, a_uring_session_may_move_between_threads)
{
	struct colibri_model_opts ko = mopts(COLIBRI_BACKEND_KERNEL, COLIBRI_IO_URING, 0);
	struct colibri_session_opts so = { .max_context = 128 };
	struct colibri_sampling sp = warm;
	struct colibri_step st = { 0 };
	struct colibri_session *s;
	struct colibri_model *m;
	uint32_t t[21];
	int32_t got[GEN];
	char err[256];
	int i;

	ko.threads = 0;
	ASSERT_EQ(0, colibri_model_open(&m, DEMO, &ko, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, colibri_session_open(&s, m, &so, err, sizeof(err)));
	sp.seed = 3;
	colibri_session_set_sampling(s, &sp);
	test_tokens(t, 21, colibri_model_info(m)->vocab_size, 3);
	ASSERT_EQ(0, colibri_session_prefill(s, t, 21, &st));
	for (i = 0; i < GEN; i++) {
		struct hop h = { .s = s, .st = &st };
		pthread_t th;

		got[i] = st.token;
		if (i % 2) {
			step_here(&h);
		} else {
			pthread_create(&th, NULL, step_here, &h);
			pthread_join(th, NULL);
		}
		ASSERT_EQ(0, h.ret) TH_LOG("step %d: %s", i, colibri_session_error(s));
	}
	EXPECT_EQ(0, memcmp(self->want, got, sizeof(got)));
	colibri_session_close(s);
	colibri_model_close(m);
}

TEST_HARNESS_MAIN
