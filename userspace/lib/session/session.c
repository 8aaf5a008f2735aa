// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * session.c - libcolibri's session API (colibri_session.h): what the
 * kernel and the in-process backends do alike.
 *
 * A prefill goes in pieces of the session's max_batch tokens (the kernel
 * reports the value it uses at ATTACH; the in-process engine is built for
 * it), so that a cancellation takes effect between two forward passes on
 * either backend.  Splitting does not change a result: the engine's logits
 * do not depend on how a sequence is cut, and the token drawn after the
 * last piece uses the same (seed, position) counter.
 *
 * Lifetimes: a model holds one reference for its opener and one per open
 * session; whoever drops the last frees it, so sessions may outlive the
 * opener's colibri_model_close().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cb_engine.h"
#include "chat/chat_harmony.h"
#include "chat/chat_template.h"
#include "session/session_priv.h"
#include "tokenizer.h"

void session_err(struct colibri_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

int session_take_cancel(struct colibri_session *s)
{
	return atomic_exchange(&s->cancel, 0);
}

static void model_put(struct colibri_model *m)
{
	if (atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	m->be->model_close(m);
	if (m->tok)
		cb_tok_free(m->tok);
	if (m->chat)
		cb_chat_release(m->chat);
	free(m->chat);
	pthread_mutex_destroy(&m->tok_lock);
	pthread_mutex_destroy(&m->chat_lock);
	free(m);
}

void colibri_model_close(struct colibri_model *m)
{
	if (m)
		model_put(m);
}

const struct colibri_model_info *colibri_model_info(const struct colibri_model *m)
{
	return &m->info;
}

struct cb_tokenizer *colibri_model_tokenizer(struct colibri_model *m, char *err, size_t errlen)
{
	struct cb_tokenizer *tok;

	pthread_mutex_lock(&m->tok_lock);
	if (!m->tok && m->be->tokenizer(m, &m->tok, err, errlen))
		m->tok = NULL;
	tok = m->tok;
	pthread_mutex_unlock(&m->tok_lock);
	return tok;
}

/* No template of its own: the built-in one of its vocabulary (harmony), if any. */
static int chat_builtin(struct colibri_model *m, struct cb_chat *c, char *err, size_t errlen)
{
	char terr[256];

	if (cb_chat_builtin(c, colibri_model_tokenizer(m, terr, sizeof(terr)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

const struct cb_chat *colibri_model_chat(struct colibri_model *m, char *err, size_t errlen)
{
	struct cb_chat *c;

	pthread_mutex_lock(&m->chat_lock);
	if (!m->chat) {
		c = calloc(1, sizeof(*c));
		if (!c)
			snprintf(err, errlen, "out of memory");
		else if (m->be->chat(m, c, err, errlen) ||
			 (!c->tmpl && chat_builtin(m, c, err, errlen))) {
			cb_chat_release(c);
			free(c);
			c = NULL;
		}
		m->chat = c;
	}
	c = m->chat;
	pthread_mutex_unlock(&m->chat_lock);
	return c;
}

int colibri_model_weight_bytes(const struct colibri_model *m, double *bytes)
{
	if (!m->cfg)
		return -ENODATA;
	*bytes = cb_weight_bytes(m->cfg, m->w);
	return 0;
}

int colibri_model_pass_bytes(const struct colibri_model *m, const uint32_t *trace, uint32_t n,
			     double *bytes)
{
	if (!m->cfg)
		return -ENODATA;
	*bytes = cb_pass_bytes(m->cfg, m->w, trace, n);
	return 0;
}

/* --- sessions ---------------------------------------------------------------- */

int colibri_session_open_group(struct colibri_session **out, unsigned int n,
			       struct colibri_model *m, const struct colibri_session_opts *opts,
			       char *err, size_t errlen)
{
	static const struct colibri_session_opts defaults;
	const struct colibri_session_opts *o = opts ? opts : &defaults;
	unsigned int i;
	int ret;

	if (!n || n > COLIBRI_GROUP_MAX) {
		snprintf(err, errlen, "a group is 1 to %d sessions, not %u", COLIBRI_GROUP_MAX, n);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		out[i] = calloc(1, sizeof(**out));
		if (!out[i]) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			goto err_free;
		}
		out[i]->m = m;
		out[i]->fd = -1;
		out[i]->last_token = -1;
		atomic_init(&out[i]->cancel, 0);
	}
	ret = m->be->sessions_open(out, n, o, err, errlen);
	if (ret)
		goto err_free;
	atomic_fetch_add(&m->refs, (int)n);
	return 0;

err_free:
	while (i--) {
		free(out[i]);
		out[i] = NULL;
	}
	return ret;
}

int colibri_session_open(struct colibri_session **out, struct colibri_model *m,
			 const struct colibri_session_opts *opts, char *err, size_t errlen)
{
	return colibri_session_open_group(out, 1, m, opts, err, errlen);
}

void colibri_session_close(struct colibri_session *s)
{
	struct colibri_model *m;

	if (!s)
		return;
	m = s->m;
	m->be->session_close(s);
	free(s);
	model_put(m);
}

uint32_t colibri_session_max_context(const struct colibri_session *s)
{
	return s->max_context;
}

uint32_t colibri_session_max_batch(const struct colibri_session *s)
{
	return s->max_batch;
}

uint32_t colibri_session_n_past(const struct colibri_session *s)
{
	return s->n_past;
}

void colibri_session_set_sampling(struct colibri_session *s, const struct colibri_sampling *sp)
{
	s->sp = *sp;
}

/* The sampler's scratch for a vocabulary of @n (free() it), or NULL. */
static void *sample_scratch(uint32_t n)
{
	return aligned_alloc(64, (cb_sample_scratch_size(n) + 63) & ~(uint64_t)63);
}

/* colibri_sample() in @scratch (sample_scratch(n)). */
static int sample_in(const float *logits, uint32_t n, const struct colibri_sampling *sp,
		     uint32_t pos, void *scratch)
{
	struct cb_sample_params p = {
		.temperature_milli = sp->temperature_milli,
		.top_k = sp->top_k,
		.top_p_ppm = sp->top_p_ppm,
		.seed = sp->seed,
	};

	return cb_sample(logits, n, &p, pos, scratch);
}

int colibri_sample(const float *logits, uint32_t n, const struct colibri_sampling *sp,
		   uint32_t pos)
{
	void *scratch;
	int ret;

	if (!n)
		return -EINVAL;
	scratch = sample_scratch(n);
	if (!scratch)
		return -ENOMEM;
	ret = sample_in(logits, n, sp, pos, scratch);
	free(scratch);
	return ret;
}

void colibri_session_cancel(struct colibri_session *s)
{
	atomic_store(&s->cancel, 1);
}

const char *colibri_session_error(const struct colibri_session *s)
{
	return s->err;
}

int colibri_session_reset(struct colibri_session *s)
{
	s->m->be->reset(s);
	s->n_past = 0;
	s->last_token = -1;
	return 0;
}

/* After a failure: an empty sequence, and words for @ret if none were left. */
static int session_failed(struct colibri_session *s, int ret)
{
	if (ret == -ECANCELED) {
		session_take_cancel(s);
		session_err(s, "cancelled");
	} else if (!s->err[0]) {
		session_err(s, "%s", strerror(-ret));
	}
	colibri_session_reset(s);
	return ret;
}

/* The checks that need nothing fed: flags, the context, the token ids. */
static int prefill_check(struct colibri_session *s, const uint32_t *toks, uint32_t n,
			 const struct colibri_step *st)
{
	const struct colibri_model_info *mi = &s->m->info;
	uint32_t i;

	if (!n || (st->flags & ~COLIBRI_STEP_ALL_LOGITS)) {
		session_err(s, n ? "unknown step flags %#x" : "no token to feed", st->flags);
		return -EINVAL;
	}
	if (st->flags & COLIBRI_STEP_ALL_LOGITS && !s->m->be->all_logits) {
		session_err(s, "the logits of every position are not available from %s",
			    mi->description);
		return -EOPNOTSUPP;
	}
	if ((uint64_t)s->n_past + n > s->max_context) {
		session_err(s, "%u tokens do not fit the context: %u of its %u positions are taken",
			    n, s->n_past, s->max_context);
		return -ENOSPC;
	}
	for (i = 0; i < n; i++)
		if (toks[i] >= mi->vocab_size) {
			session_err(s, "token %u is outside the vocabulary (%u tokens)", toks[i],
				    mi->vocab_size);
			return -EINVAL;
		}
	return 0;
}

int colibri_session_prefill(struct colibri_session *s, const uint32_t *toks, uint32_t n,
			    struct colibri_step *st)
{
	const struct colibri_model_info *mi = &s->m->info;
	uint32_t tper = mi->n_layers * mi->top_k * 2, done, k;
	struct colibri_step none = { 0 };
	int ret;

	if (!st)
		st = &none;
	s->err[0] = 0;
	ret = prefill_check(s, toks, n, st);
	if (ret)
		return ret;
	for (done = 0; done < n; done += k) {
		int last;
		float *logits = NULL;

		k = n - done < s->max_batch ? n - done : s->max_batch;
		last = done + k == n;
		if (atomic_load(&s->cancel))
			return session_failed(s, -ECANCELED);
		if (st->logits && st->flags & COLIBRI_STEP_ALL_LOGITS)
			logits = st->logits + (size_t)done * mi->vocab_size;
		else if (last)
			logits = st->logits;
		ret = s->m->be->piece(s, toks + done, k, last, st, logits,
				      st->trace ? st->trace + (size_t)done * tper : NULL);
		if (ret)
			return session_failed(s, ret);
	}
	st->n_past = s->n_past;
	s->last_token = st->token;
	return 0;
}

int colibri_session_step(struct colibri_session *s, uint32_t token, struct colibri_step *st)
{
	return colibri_session_prefill(s, &token, 1, st);
}

int colibri_session_step_group(struct colibri_session **ss, unsigned int n,
			       const uint32_t *toks, struct colibri_step *st)
{
	struct colibri_step none[COLIBRI_GROUP_MAX];
	unsigned int i, j;
	int ret = 0;

	if (!n || n > COLIBRI_GROUP_MAX)
		return -EINVAL;
	if (!st) {
		memset(none, 0, sizeof(none));
		st = none;
	}
	for (i = 0; i < n; i++) {
		ss[i]->err[0] = 0;
		for (j = 0; j < i; j++)
			if (ss[j] == ss[i] || ss[j]->m != ss[i]->m) {
				session_err(ss[i], "a group step takes distinct sessions of one model");
				return -EINVAL;
			}
		if (st[i].flags) {
			session_err(ss[i], "a group step takes no step flags");
			return -EINVAL;
		}
		ret = prefill_check(ss[i], &toks[i], 1, &st[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++)
		if (atomic_load(&ss[i]->cancel)) {
			ret = -ECANCELED;
			break;
		}
	if (!ret)
		ret = ss[0]->m->be->step_group(ss, n, toks, st);
	if (ret) {
		for (i = 0; i < n; i++)
			session_failed(ss[i], ret);
		return ret;
	}
	for (i = 0; i < n; i++) {
		st[i].n_past = ss[i]->n_past;
		ss[i]->last_token = st[i].token;
	}
	return 0;
}

/*
 * The caller's say on the token a pass sampled (on_logits): the token it
 * chose, or its logits changed and the token drawn again from them.  0, 1
 * (stop), or an error.
 */
static int own_token(struct colibri_session *s, struct colibri_generation *g, void *scratch)
{
	uint32_t n = s->m->info.vocab_size, pos = g->step.n_past - 1;
	int32_t tok = g->step.token;

	if (!g->on_logits)
		return 0;
	if (g->on_logits(g->arg, g->step.logits, n, pos, &tok))
		return 1;
	if (tok < 0) {
		tok = sample_in(g->step.logits, n, &s->sp, pos, scratch);
		if (tok < 0) {
			session_err(s, "sampling failed (%d)", tok);
			return tok;
		}
	} else if ((uint32_t)tok >= n) {
		session_err(s, "on_logits chose token %d, outside the vocabulary", tok);
		return -EINVAL;
	}
	g->step.token = tok;
	s->last_token = tok;
	return 0;
}

static int generate(struct colibri_session *s, const uint32_t *prompt, uint32_t n,
		    struct colibri_generation *g, void *scratch);

/* With on_logits: a logits buffer (unless the caller gave one) and the sampler's scratch, once. */
int colibri_session_generate(struct colibri_session *s, const uint32_t *prompt, uint32_t n,
			     struct colibri_generation *g)
{
	float *given = g->step.logits, *own = NULL;
	void *scratch = NULL;
	int ret;

	if (g->on_logits) {
		if (!given)
			own = malloc((size_t)s->m->info.vocab_size * sizeof(*own));
		scratch = sample_scratch(s->m->info.vocab_size);
		if ((!given && !own) || !scratch) {
			free(own);
			free(scratch);
			session_err(s, "out of memory");
			return -ENOMEM;
		}
		if (!given)
			g->step.logits = own;
	}
	ret = generate(s, prompt, n, g, scratch);
	g->step.logits = given;
	free(own);
	free(scratch);
	return ret;
}

static int generate(struct colibri_session *s, const uint32_t *prompt, uint32_t n,
		    struct colibri_generation *g, void *scratch)
{
	int32_t tok;
	int ret;

	g->n_new = 0;
	g->stop = COLIBRI_STOP_NONE;
	if (!n && s->last_token < 0) {
		session_err(s, "no prompt, and no token sampled before to go on from");
		return -EINVAL;
	}
	if (!n && s->n_past == s->max_context) {
		g->stop = COLIBRI_STOP_CONTEXT;
		return 0;
	}
	ret = n ? colibri_session_prefill(s, prompt, n, &g->step) :
	      colibri_session_step(s, (uint32_t)s->last_token, &g->step);
	if (ret)
		return ret;
	ret = own_token(s, g, scratch);
	if (ret) {
		g->stop = ret > 0 ? COLIBRI_STOP_CALLER : COLIBRI_STOP_NONE;
		return ret > 0 ? 0 : ret;
	}
	if (!g->max_new) {
		g->stop = COLIBRI_STOP_LENGTH;
		return 0;
	}
	for (;;) {
		tok = g->step.token;
		g->n_new++;
		if (tok == g->eos && g->eos >= 0) {
			g->stop = COLIBRI_STOP_EOS;
			break;
		}
		if (g->on_token && g->on_token(g->arg, tok, &g->step)) {
			g->stop = COLIBRI_STOP_CALLER;
			break;
		}
		if (g->n_new >= g->max_new) {
			g->stop = COLIBRI_STOP_LENGTH;
			break;
		}
		/* Full: the last token was sampled, it cannot be fed. */
		if (s->n_past >= s->max_context) {
			g->stop = COLIBRI_STOP_CONTEXT;
			break;
		}
		ret = colibri_session_step(s, (uint32_t)tok, &g->step);
		if (!ret)
			ret = own_token(s, g, scratch);
		if (ret > 0) {
			g->stop = COLIBRI_STOP_CALLER;
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}
