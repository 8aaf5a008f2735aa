// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_session - libcolibri's session API (colibri_session.h) on the
 * in-process backend, with the shipped model: results that do not depend
 * on how a sequence is fed, the end of the context, errors that leave the
 * session usable, cancellation from another thread, many sessions on many
 * threads, groups.  tests/vm/session_test.c runs the kernel backend.
 * Run from the top of the work tree.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "colibri_session.h"
#include "tokenizer.h"

#define DEMO "models/shakespeare-moe.colibri"

static struct colibri_model *model;
static uint32_t V, TPER;

static const struct colibri_sampling warm = { .temperature_milli = 800, .top_p_ppm = 950000,
					      .seed = 7 };

static void toks(uint32_t *t, uint32_t n, uint32_t salt)
{
	for (uint32_t i = 0; i < n; i++)
		t[i] = (i * 7919u + salt * 104729u + 13) % V;
}

static struct colibri_session *open_s(uint32_t ctx, uint32_t batch)
{
	struct colibri_session_opts so = { .max_context = ctx, .max_batch = batch };
	struct colibri_session *s = NULL;
	char err[256];
	int ret = colibri_session_open(&s, model, &so, err, sizeof(err));

	CB_CHECK(!ret, "session_open: %d %s", ret, err);
	return s;
}

/* A prompt in one prefill, in pieces of 3, and token by token: same bits. */
static void test_prefill_pieces_and_steps_give_the_same_logits(void)
{
	struct colibri_session *a = open_s(64, 0), *b = open_s(64, 3), *c = open_s(64, 0);
	float *la = calloc(V, 4), *lb = calloc(V, 4), *lc = calloc(V, 4);
	struct colibri_step sa = { .logits = la }, sb = { .logits = lb }, sc = { .logits = lc };
	uint32_t t[20], i;

	if (!a || !b || !c)
		return;
	toks(t, 20, 1);
	CB_CHECK(!colibri_session_prefill(a, t, 20, &sa), "%s", colibri_session_error(a));
	CB_CHECK(!colibri_session_prefill(b, t, 20, &sb), "%s", colibri_session_error(b));
	for (i = 0; i < 20; i++)
		CB_CHECK(!colibri_session_step(c, t[i], &sc), "%s", colibri_session_error(c));
	CB_CHECK(!memcmp(la, lb, V * 4), "pieces of 3 changed the logits");
	CB_CHECK(!memcmp(la, lc, V * 4), "token by token changed the logits");
	CB_CHECK(sa.token == sb.token && sa.token == sc.token, "%d %d %d", sa.token, sb.token,
		 sc.token);
	CB_CHECK(sa.n_past == 20 && colibri_session_n_past(c) == 20, "n_past %u", sa.n_past);
	colibri_session_close(a);
	colibri_session_close(b);
	colibri_session_close(c);
	free(la);
	free(lb);
	free(lc);
}

/* colibri_sample() on a step's logits draws the token the step drew. */
static void test_sample_draws_what_a_step_draws(void)
{
	struct colibri_session *s = open_s(64, 0);
	float *l = calloc(V, 4);
	struct colibri_step st = { .logits = l };
	struct colibri_sampling sp = warm;
	uint32_t t[6], i;
	int differ = 0;

	if (!s)
		return;
	toks(t, 6, 8);
	for (i = 0; i < 24; i++) {
		sp.seed = i;
		colibri_session_set_sampling(s, &sp);
		colibri_session_reset(s);
		CB_CHECK(!colibri_session_prefill(s, t, 6, &st), "%s", colibri_session_error(s));
		CB_CHECK(colibri_sample(l, V, &sp, 5) == st.token, "seed %u: %d, the step drew %d",
			 i, colibri_sample(l, V, &sp, 5), st.token);
		differ += colibri_sample(l, V, &sp, 6) != st.token;
	}
	CB_CHECK(differ, "the position never changed the draw");
	CB_CHECK(colibri_sample(l, 0, &sp, 0) == -EINVAL, "n = 0");
	colibri_session_close(s);
	free(l);
}

/* COLIBRI_STEP_ALL_LOGITS and the trace of a prefill equal those of its steps. */
static void test_all_logits_and_trace_of_a_prefill_equal_its_steps(void)
{
	struct colibri_session *a = open_s(64, 4), *b = open_s(64, 0);
	float *la = calloc((size_t)12 * V, 4), *lb = calloc((size_t)12 * V, 4);
	uint32_t *ta = calloc((size_t)12 * TPER, 4), *tb = calloc((size_t)12 * TPER, 4);
	struct colibri_step sa = { .logits = la, .trace = ta, .flags = COLIBRI_STEP_ALL_LOGITS };
	uint32_t t[12], i;

	if (!a || !b)
		return;
	toks(t, 12, 2);
	CB_CHECK(!colibri_session_prefill(a, t, 12, &sa), "%s", colibri_session_error(a));
	for (i = 0; i < 12; i++) {
		struct colibri_step sb = { .logits = lb + (size_t)i * V, .trace = tb + i * TPER };

		CB_CHECK(!colibri_session_step(b, t[i], &sb), "%s", colibri_session_error(b));
	}
	CB_CHECK(!memcmp(la, lb, (size_t)12 * V * 4), "logits of every position differ");
	CB_CHECK(!memcmp(ta, tb, (size_t)12 * TPER * 4), "routing traces differ");
	CB_CHECK(ta[0] < 8 && ta[1] != 0, "trace[0] = expert %u weight bits %#x", ta[0], ta[1]);
	colibri_session_close(a);
	colibri_session_close(b);
	free(la);
	free(lb);
	free(ta);
	free(tb);
}

/* Up to the context, then -ENOSPC with nothing fed, and generate stops there. */
static void test_the_end_of_the_context(void)
{
	struct colibri_session *s = open_s(16, 0), *u = open_s(16, 0);
	struct colibri_generation g = { .max_new = 100, .eos = -1 };
	struct colibri_step st = { 0 };
	uint32_t t[10], n = 0;
	int ret;

	if (!s || !u)
		return;
	toks(t, 10, 3);
	CB_CHECK(colibri_session_max_context(s) == 16, "%u", colibri_session_max_context(s));
	CB_CHECK(!colibri_session_prefill(s, t, 10, &st), "%s", colibri_session_error(s));
	while (colibri_session_n_past(s) < 16 && !colibri_session_step(s, st.token, &st))
		n++;
	CB_CHECK(n == 6, "%u steps", n);
	ret = colibri_session_step(s, st.token, &st);
	CB_CHECK(ret == -ENOSPC && strstr(colibri_session_error(s), "context"), "%d %s", ret,
		 colibri_session_error(s));
	CB_CHECK(colibri_session_n_past(s) == 16, "a refused step changed the sequence: %u",
		 colibri_session_n_past(s));
	ret = colibri_session_generate(u, t, 10, &g);
	CB_CHECK(!ret && g.stop == COLIBRI_STOP_CONTEXT && g.n_new == 16 - 10 + 1,
		 "ret %d stop %d n_new %u", ret, g.stop, g.n_new);
	ret = colibri_session_prefill(u, t, 1, NULL);
	CB_CHECK(ret == -ENOSPC, "%d", ret);
	colibri_session_close(s);
	colibri_session_close(u);
}

/* A context beyond the model's own (256) is refused at open. */
static void test_a_context_beyond_the_models_is_refused(void)
{
	struct colibri_session_opts so = { .max_context = 257 };
	struct colibri_session *s = NULL;
	char err[256] = "";
	int ret = colibri_session_open(&s, model, &so, err, sizeof(err));

	CB_CHECK(ret == -EINVAL && !s && strstr(err, "256"), "%d %s", ret, err);
	s = open_s(0, 0);
	CB_CHECK(s && colibri_session_max_context(s) == 256, "default context %u",
		 s ? colibri_session_max_context(s) : 0);
	colibri_session_close(s);
}

static int stop_at_5(void *arg, int32_t token, const struct colibri_step *st)
{
	return ++*(int *)arg == 5;
}

static int record(void *arg, int32_t token, const struct colibri_step *st)
{
	int32_t *t = arg;

	t[t[0] + 1] = token;
	t[0]++;
	return 0;
}

static void test_generate_stops_for_length_eos_and_caller(void)
{
	struct colibri_session *s = open_s(128, 0);
	struct colibri_generation g = { .max_new = 12, .eos = -1 };
	int32_t seen[16] = { 0 }, want;
	uint32_t t[4];
	int calls = 0, ret, i;

	if (!s)
		return;
	colibri_session_set_sampling(s, &warm);
	toks(t, 4, 4);
	g.on_token = record;
	g.arg = seen;
	ret = colibri_session_generate(s, t, 4, &g);
	CB_CHECK(!ret && g.stop == COLIBRI_STOP_LENGTH && g.n_new == 12 && seen[0] == 12 &&
		 colibri_session_n_past(s) == 4 + 11, "%d %d %u %u", ret, g.stop, g.n_new,
		 colibri_session_n_past(s));
	/* the same generation with its 3rd token as end-of-sequence stops there */
	colibri_session_reset(s);
	g.eos = seen[3];
	g.on_token = NULL;
	ret = colibri_session_generate(s, t, 4, &g);
	for (i = 1, want = 0; !want; i++)
		if (seen[i] == g.eos)
			want = i;
	CB_CHECK(!ret && g.stop == COLIBRI_STOP_EOS && g.n_new == (uint32_t)want, "%d %d %u %d",
		 ret, g.stop, g.n_new, want);
	/* and it goes on from there, with no prompt, as it would have */
	g.eos = -1;
	g.max_new = 2;
	ret = colibri_session_generate(s, NULL, 0, &g);
	CB_CHECK(!ret && g.n_new == 2 && g.step.token == seen[want + 2], "%d %d %d", ret,
		 g.step.token, seen[want + 2]);
	colibri_session_reset(s);
	g.max_new = 100;
	g.on_token = stop_at_5;
	g.arg = &calls;
	ret = colibri_session_generate(s, t, 4, &g);
	CB_CHECK(!ret && g.stop == COLIBRI_STOP_CALLER && g.n_new == 5 && calls == 5, "%d %d %u",
		 ret, g.stop, g.n_new);
	colibri_session_close(s);
}

/* Bad input: a clear message, nothing fed, the session goes on. */
static void test_a_bad_token_is_refused_and_the_session_goes_on(void)
{
	struct colibri_session *s = open_s(64, 0);
	uint32_t t[3] = { 1, V, 2 };
	int ret;

	if (!s)
		return;
	ret = colibri_session_prefill(s, t, 1, NULL);
	CB_CHECK(!ret, "%d", ret);
	ret = colibri_session_prefill(s, t, 3, NULL);
	CB_CHECK(ret == -EINVAL && strstr(colibri_session_error(s), "vocabulary"), "%d %s", ret,
		 colibri_session_error(s));
	CB_CHECK(colibri_session_n_past(s) == 1, "%u", colibri_session_n_past(s));
	ret = colibri_session_prefill(s, t, 0, NULL);
	CB_CHECK(ret == -EINVAL, "%d", ret);
	ret = colibri_session_prefill(s, &t[2], 1, NULL);
	CB_CHECK(!ret && colibri_session_n_past(s) == 2 && !*colibri_session_error(s), "%d %s",
		 ret, colibri_session_error(s));
	colibri_session_close(s);
}

struct canceller {
	struct colibri_session *s;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int asked, done;
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

/* At the 4th token, another thread cancels; the generation ends there. */
static int cancel_at_4(void *arg, int32_t token, const struct colibri_step *st)
{
	static int n;
	struct canceller *c = arg;

	if (++n == 4) {
		pthread_mutex_lock(&c->lock);
		c->asked = 1;
		pthread_cond_broadcast(&c->cond);
		while (!c->done)
			pthread_cond_wait(&c->cond, &c->lock);
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

static void test_cancel_from_another_thread(void)
{
	struct canceller c = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct colibri_generation g = { .max_new = 50, .eos = -1, .on_token = cancel_at_4,
					.arg = &c };
	struct colibri_session *s = open_s(128, 0);
	uint32_t t[4];
	pthread_t th;
	int ret;

	if (!s)
		return;
	c.s = s;
	toks(t, 4, 5);
	pthread_create(&th, NULL, cancel_thread, &c);
	ret = colibri_session_generate(s, t, 4, &g);
	pthread_join(th, NULL);
	CB_CHECK(ret == -ECANCELED && g.n_new == 4, "%d, %u tokens", ret, g.n_new);
	CB_CHECK(!strcmp(colibri_session_error(s), "cancelled"), "%s", colibri_session_error(s));
	CB_CHECK(colibri_session_n_past(s) == 0, "after a cancel the sequence is empty: %u",
		 colibri_session_n_past(s));
	/* the cancellation was taken: the session works again */
	ret = colibri_session_prefill(s, t, 4, NULL);
	CB_CHECK(!ret && colibri_session_n_past(s) == 4, "%d %s", ret, colibri_session_error(s));
	/* a cancel between calls ends the next one at once, and only it */
	colibri_session_cancel(s);
	ret = colibri_session_step(s, t[0], NULL);
	CB_CHECK(ret == -ECANCELED && colibri_session_n_past(s) == 0, "%d %u", ret,
		 colibri_session_n_past(s));
	ret = colibri_session_prefill(s, t, 2, NULL);
	CB_CHECK(!ret, "%d", ret);
	colibri_session_close(s);
}

#define NT 4
#define GEN 24

struct worker {
	struct colibri_session *s;
	uint32_t salt;
	int32_t out[GEN];
	int ret;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct colibri_sampling sp = warm;
	struct colibri_step st = { 0 };
	uint32_t t[9], i;

	sp.seed = w->salt;
	colibri_session_set_sampling(w->s, &sp);
	toks(t, 9, w->salt);
	w->ret = colibri_session_prefill(w->s, t, 9, &st);
	for (i = 0; i < GEN && !w->ret; i++) {
		w->out[i] = st.token;
		w->ret = colibri_session_step(w->s, st.token, &st);
	}
	return NULL;
}

/* Sessions on threads of their own give what each gives alone. */
static void test_concurrent_sessions_give_what_each_gives_alone(void)
{
	struct worker alone[NT], together[NT];
	pthread_t th[NT];
	int i;

	for (i = 0; i < NT; i++) {
		alone[i] = (struct worker){ .s = open_s(64, 0), .salt = 10 + i };
		work(&alone[i]);
		colibri_session_close(alone[i].s);
		together[i] = (struct worker){ .s = open_s(64, 0), .salt = 10 + i };
	}
	for (i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, work, &together[i]);
	for (i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		CB_CHECK(!alone[i].ret && !together[i].ret, "%d %d", alone[i].ret, together[i].ret);
		CB_CHECK(!memcmp(alone[i].out, together[i].out, sizeof(alone[i].out)),
			 "session %d differs when run with the others", i);
		colibri_session_close(together[i].s);
	}
	CB_CHECK(memcmp(alone[0].out, alone[1].out, sizeof(alone[0].out)),
		 "different seeds and prompts gave the same tokens");
}

/* A group step is one pass, and gives what separate sessions give. */
static void test_a_group_step_equals_separate_sessions(void)
{
	struct colibri_session *g[3], *one[3], *twice[2];
	struct colibri_session_opts so = { .max_context = 64 };
	uint32_t two[2] = { 1, 2 };
	struct colibri_step gs[3], os;
	float *lg = calloc((size_t)3 * V, 4), *lo = calloc(V, 4);
	uint32_t t[3][7], next[3], i, k;
	char err[256];

	if (colibri_session_open_group(g, 3, model, &so, err, sizeof(err))) {
		CB_CHECK(0, "open_group: %s", err);
		return;
	}
	for (i = 0; i < 3; i++) {
		struct colibri_sampling sp = warm;
		struct colibri_step st = { 0 };

		sp.seed = i;
		one[i] = open_s(64, 0);
		colibri_session_set_sampling(g[i], &sp);
		colibri_session_set_sampling(one[i], &sp);
		toks(t[i], 7 - i, 20 + i);
		CB_CHECK(!colibri_session_prefill(g[i], t[i], 7 - i, &st), "%s",
			 colibri_session_error(g[i]));
		next[i] = st.token;
		CB_CHECK(!colibri_session_prefill(one[i], t[i], 7 - i, NULL), "prefill");
	}
	for (k = 0; k < 5; k++) {
		uint32_t fed[3];

		for (i = 0; i < 3; i++) {
			gs[i] = (struct colibri_step){ .logits = lg + (size_t)i * V };
			fed[i] = next[i];
		}
		CB_CHECK(!colibri_session_step_group(g, 3, fed, gs), "%s",
			 colibri_session_error(g[0]));
		for (i = 0; i < 3; i++) {
			os = (struct colibri_step){ .logits = lo };
			CB_CHECK(!colibri_session_step(one[i], fed[i], &os), "step");
			CB_CHECK(os.token == gs[i].token && !memcmp(lo, lg + (size_t)i * V, V * 4),
				 "step %u session %u: group %d, alone %d", k, i, gs[i].token,
				 os.token);
			CB_CHECK(gs[i].n_past == 7 - i + k + 1, "n_past %u", gs[i].n_past);
			next[i] = gs[i].token;
		}
	}
	/* the same session twice in one group step is refused */
	twice[0] = twice[1] = g[0];
	CB_CHECK(colibri_session_step_group(twice, 2, two, NULL) == -EINVAL, "twice");
	for (i = 0; i < 3; i++) {
		colibri_session_close(g[i]);
		colibri_session_close(one[i]);
	}
	free(lg);
	free(lo);
}

/* Sessions keep their model: the opener may close it first. */
static void test_sessions_outlive_the_model_handle(void)
{
	struct colibri_model *m;
	struct colibri_session *s;
	char err[256];
	uint32_t t[3];

	toks(t, 3, 6);
	CB_CHECK(!colibri_model_open(&m, DEMO, &(struct colibri_model_opts){
		.backend = COLIBRI_BACKEND_USER, .threads = 1, .isa = -1, .dtype = -1 },
		err, sizeof(err)), "%s", err);
	CB_CHECK(!colibri_session_open(&s, m, NULL, err, sizeof(err)), "%s", err);
	colibri_model_close(m);
	CB_CHECK(!colibri_session_prefill(s, t, 3, NULL), "%s", colibri_session_error(s));
	colibri_session_close(s);
}

static void test_the_models_tokenizer_is_its_own(void)
{
	char err[256];
	struct cb_tokenizer *a = colibri_model_tokenizer(model, err, sizeof(err));
	struct cb_tokenizer *b = colibri_model_tokenizer(model, err, sizeof(err));
	int32_t *ids = NULL;
	long n;

	CB_CHECK(a && a == b, "%p %p %s", (void *)a, (void *)b, err);
	if (!a)
		return;
	n = cb_tok_encode_alloc(a, "ROMEO:", 6, CB_TOK_ADD_SPECIAL, &ids);
	/* tests/demo/expected.txt: prompt: 834 58 */
	CB_CHECK(n == 2 && ids[0] == 834 && ids[1] == 58, "%ld ids", n);
	free(ids);
}

static void test_open_errors_name_the_problem(void)
{
	struct colibri_model_opts user = { .backend = COLIBRI_BACKEND_USER, .isa = -1,
					   .dtype = -1 };
	struct colibri_model *m = NULL;
	char err[256] = "";
	int ret;

	ret = colibri_model_open(&m, "no/such.colibri", &user, err, sizeof(err));
	CB_CHECK(ret == -ENOENT && !m && strstr(err, "no/such.colibri"), "%d %s", ret, err);
	ret = colibri_model_open(&m, "tests", &user, err, sizeof(err));
	CB_CHECK(ret == -EINVAL && strstr(err, "tests"), "a directory that is no model: %d %s",
		 ret, err);
	ret = colibri_model_open(&m, "README.md", &user, err, sizeof(err));
	CB_CHECK(ret == -EINVAL && strstr(err, "README.md"), "%d %s", ret, err);
	user.dtype = 3;
	ret = colibri_model_open(&m, DEMO, &user, err, sizeof(err));
	CB_CHECK(ret == -EINVAL && strstr(err, "--quant"), "dtype on a .colibri: %d %s", ret, err);
	user.dtype = -1;
	user.name = "a-name-of-more-than-thirty-one-bytes";
	ret = colibri_model_open(&m, DEMO, &user, err, sizeof(err));
	CB_CHECK(ret == -ENAMETOOLONG, "%d %s", ret, err);
}

int main(void)
{
	struct colibri_model_opts mo = { .backend = COLIBRI_BACKEND_USER, .threads = 2, .isa = -1,
					 .dtype = -1 };
	char err[256];
	const struct colibri_model_info *mi;

	if (colibri_model_open(&model, DEMO, &mo, err, sizeof(err))) {
		printf("not ok 1 - open %s: %s\n1..1\n", DEMO, err);
		return 1;
	}
	mi = colibri_model_info(model);
	V = mi->vocab_size;
	TPER = mi->n_layers * mi->top_k * 2;
	CB_RUN(test_prefill_pieces_and_steps_give_the_same_logits);
	CB_RUN(test_all_logits_and_trace_of_a_prefill_equal_its_steps);
	CB_RUN(test_sample_draws_what_a_step_draws);
	CB_RUN(test_the_end_of_the_context);
	CB_RUN(test_a_context_beyond_the_models_is_refused);
	CB_RUN(test_generate_stops_for_length_eos_and_caller);
	CB_RUN(test_a_bad_token_is_refused_and_the_session_goes_on);
	CB_RUN(test_cancel_from_another_thread);
	CB_RUN(test_concurrent_sessions_give_what_each_gives_alone);
	CB_RUN(test_a_group_step_equals_separate_sessions);
	CB_RUN(test_sessions_outlive_the_model_handle);
	CB_RUN(test_the_models_tokenizer_is_its_own);
	CB_RUN(test_open_errors_name_the_problem);
	colibri_model_close(model);
	return cb_test_done();
}
