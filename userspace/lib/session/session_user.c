// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * session_user.c - the session API's in-process backend: the engine linked
 * into libcolibri, on the pthread executor of host.c.
 *
 * The model owns the weights (a .colibri file mapped and bound in place, a
 * GGUF file, a Hugging Face directory) and one thread pool.  A pool runs
 * one parallel_for at a time, so the model's sessions take turns: every
 * forward pass and every sampling runs under ->lock.  A group of sessions
 * (colibri_session_open_group()) is the sequence slots of one engine, so
 * that a group step is one forward pass carrying one token of each; a lone
 * session is a group of one.  An engine's arena holds its KV cache for
 * max_context positions per slot and scratch for max_batch tokens.
 *
 * Cancellation inside a pass: the pool the engine sees is a thin wrapper
 * of the real one whose yield() reports the running session's cancel flag;
 * the engine calls it between the phases of a pass and aborts, and an
 * aborted pass leaves the slot as it was (cb_engine_forward()).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/cb_engine.h"
#include "ops/cb_ops.h"
#include "model/cbfile.h"
#include "chat/chat_template.h"
#include "import/gguf.h"
#include "import/hf_tiktoken.h"
#include "import/hfmodel.h"
#include "quant/quant_preset.h"
#include "util/host.h"
#include "session/session_priv.h"
#include "tokenizer.h"

#define DEFAULT_CONTEXT 2048	/* as the module's default_context */
#define DEFAULT_BATCH 64	/* as the module's ATTACH */

struct user_model {
	struct cb_exec ex;		/* what the engine runs on: ->pool, plus yield */
	struct cb_exec *pool;
	pthread_mutex_t lock;		/* one pass (or sampling) at a time on ->pool */
	struct colibri_session *running;	/* whose pass runs; protected by ->lock */
	int isa_level;
	char path[4096];
	struct hf_model *hf;		/* a Hugging Face directory */
	struct gguf_model *gm;		/* a GGUF file */
	/* COLIBRI_MODEL_HUGEPAGES: the weights copied, and bound there */
	void *hp_data, *hp_bind;
	struct cb_model_config hp_cfg;
	struct cb_model_weights hp_w;
};

/* The slots of one engine. */
struct user_group {
	int refs;			/* sessions; protected by the model's ->lock */
	struct cb_engine *e;
	void *arena;
	uint32_t n_slots, max_tokens;	/* max_tokens: the engine's max_batch_tokens */
	uint32_t *seq, *pos;		/* [max_tokens] */
	uint8_t *mask;			/* [max_tokens] */
	float *logits;			/* [max_tokens][vocab] */
	uint32_t *trace;		/* [max_tokens][n_layers][top_k][2] */
};

static struct user_model *um_of(const struct colibri_model *m)
{
	return m->user;
}

static void um_parallel_for(struct cb_exec *ex, void (*fn)(void *arg, int chunk), void *arg,
			    int nchunks)
{
	struct user_model *um = (struct user_model *)((char *)ex - offsetof(struct user_model, ex));

	um->pool->parallel_for(um->pool, fn, arg, nchunks);
}

static int um_yield(struct cb_exec *ex)
{
	struct user_model *um = (struct user_model *)((char *)ex - offsetof(struct user_model, ex));

	return um->running && atomic_load(&um->running->cancel) ? -ECANCELED : 0;
}

/* The weights of a .colibri file in anonymous huge pages (bench --hugepages). */
static int copy_to_hugepages(struct colibri_model *m, struct user_model *um, char *err,
			     size_t errlen)
{
	const struct cbfile *f = m->cf;
	size_t dsz = (f->info.data_size + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	uint64_t bsz = cb_format_bind_size(&f->info);
	char why[CB_FORMAT_WHY_LEN];

	um->hp_data = aligned_alloc(2u << 20, dsz ? dsz : (2u << 20));
	um->hp_bind = aligned_alloc(64, (bsz + 63) & ~63ull);
	if (!um->hp_data || !um->hp_bind) {
		snprintf(err, errlen, "out of memory for a copy of the weights");
		return -ENOMEM;
	}
	madvise(um->hp_data, dsz, MADV_HUGEPAGE);
	memcpy(um->hp_data, f->map + f->info.data_offset, f->info.data_size);
	if (cb_format_bind(&f->info, f->map, um->hp_data, f->info.data_size, um->hp_bind, bsz,
			   &um->hp_cfg, &um->hp_w, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", f->path, why);
		return -EINVAL;
	}
	m->cfg = &um->hp_cfg;
	m->w = &um->hp_w;
	return 0;
}

/* The last component of @path, for a model without a name of its own. */
static void base_name(const char *path, char *out, size_t len)
{
	size_t n = strlen(path);
	const char *b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (b = path + n; b > path && b[-1] != '/'; b--)
		;
	snprintf(out, len, "%.*s", (int)(path + n - b), b);
}

/* Maps or loads the weights of @path into m->cfg / m->w. */
static int load_weights(struct colibri_model *m, struct user_model *um, const char *path,
			char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st)) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 strchr(path, '/') ? "" : " (the in-process engine needs a file)");
		return -ENOENT;
	}
	if (S_ISDIR(st.st_mode)) {
		struct cb_quant q = { m->preset, m->dtype < 0 ? CB_QUANT_KEEP : m->dtype };

		um->hf = hf_model_load(path, &q, err, errlen);
		if (!um->hf)
			return -EINVAL;
		m->cfg = &um->hf->cfg;
		m->w = &um->hf->w;
		base_name(path, m->info.name, sizeof(m->info.name));
		return 0;
	}
	if (m->dtype >= 0 || m->preset) {
		snprintf(err, errlen, "%s: converting weights at load is for Hugging Face directories (colibri convert --quant makes a file)",
			 path);
		return -EINVAL;
	}
	if (gguf_is_gguf(path)) {
		um->gm = gguf_model_load(path, err, errlen);
		if (!um->gm)
			return -EINVAL;
		m->cfg = &um->gm->hf.cfg;
		m->w = &um->gm->hf.w;
		base_name(path, m->info.name, sizeof(m->info.name));
		return 0;
	}
	if (!cbfile_is_colibri(path)) {
		snprintf(err, errlen, "%s: neither a .colibri file, a GGUF file nor a Hugging Face directory",
			 path);
		return -EINVAL;
	}
	m->cf = cbfile_open(path, 0, err, errlen);
	if (!m->cf)
		return -EINVAL;
	m->cfg = &m->cf->cfg;
	m->w = &m->cf->w;
	snprintf(m->info.name, sizeof(m->info.name), "%s", m->cf->info.name);
	if (m->flags & COLIBRI_MODEL_HUGEPAGES)
		return copy_to_hugepages(m, um, err, errlen);
	return 0;
}

static void user_model_close(struct colibri_model *m)
{
	struct user_model *um = um_of(m);

	if (!um)
		return;
	cb_host_exec_destroy(um->pool);
	pthread_mutex_destroy(&um->lock);
	if (um->gm)
		gguf_model_free(um->gm);
	if (um->hf)
		hf_model_free(um->hf);
	cbfile_close(m->cf);
	m->cf = NULL;
	free(um->hp_data);
	free(um->hp_bind);
	free(um);
	m->user = NULL;
}

static int user_model_open(struct colibri_model *m, const char *model, char *err, size_t errlen)
{
	struct user_model *um = calloc(1, sizeof(*um));
	int cap = cb_host_isa_cap(), ret;

	if (!um) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->user = um;
	pthread_mutex_init(&um->lock, NULL);
	snprintf(um->path, sizeof(um->path), "%s", model);
	ret = load_weights(m, um, model, err, errlen);
	if (ret)
		goto err;
	um->pool = cb_host_exec_create(m->threads);
	if (!um->pool) {
		snprintf(err, errlen, "cannot start the engine's threads");
		ret = -ENOMEM;
		goto err;
	}
	um->ex.parallel_for = um_parallel_for;
	um->ex.yield = um_yield;
	um->ex.nthreads = um->pool->nthreads;
	um->isa_level = m->isa >= 0 && m->isa < cap ? m->isa : cap;
	m->info.backend = COLIBRI_BACKEND_USER;
	m->info.description = "in-process engine";
	snprintf(m->info.isa, sizeof(m->info.isa), "%s", cb_isa_names[cb_isa_select(um->isa_level)->level]);
	m->info.threads = um->pool->nthreads;
	m->info.arch = m->cfg->arch;
	m->info.vocab_size = m->cfg->vocab_size;
	m->info.n_layers = m->cfg->n_layers;
	m->info.n_experts = m->cfg->n_experts;
	m->info.top_k = m->cfg->n_experts ? m->cfg->top_k : 0;
	m->info.max_context = m->cfg->max_context;
	return 0;

err:
	user_model_close(m);
	return ret;
}

static int user_tokenizer(struct colibri_model *m, struct cb_tokenizer **tok, char *err,
			  size_t errlen)
{
	struct user_model *um = um_of(m);

	if (m->cf) {
		*tok = cbfile_load_tokenizer(m->cf, err, errlen);
	} else if (um->gm) {
		*tok = gguf_tokenizer_load(um->gm->gf, err, errlen);
	} else {
		*tok = hf_tokenizer_load(um->path, err, errlen);
	}
	return *tok ? 0 : -ENODATA;
}

/* Where the weights came from: the template and tokens are beside them. */
static int user_chat(struct colibri_model *m, struct cb_chat *c, char *err, size_t errlen)
{
	return cb_chat_from_model(c, um_of(m)->path, 0, err, errlen) ? -EINVAL : 0;
}

static void group_put(struct user_group *g)
{
	if (--g->refs)
		return;
	free(g->arena);
	free(g->seq);
	free(g->pos);
	free(g->mask);
	free(g->logits);
	free(g->trace);
	free(g);
}

static int user_sessions_open(struct colibri_session **ss, unsigned int n,
			      const struct colibri_session_opts *o, char *err, size_t errlen)
{
	struct colibri_model *m = ss[0]->m;
	struct user_model *um = um_of(m);
	const struct cb_model_config *c = m->cfg;
	uint32_t ctx = o->max_context, batch = o->max_batch ? o->max_batch : DEFAULT_BATCH;
	uint32_t tper = m->info.n_layers * m->info.top_k * 2;
	struct cb_engine_params p = { .n_seqs = n, .isa_max_level = (cb_u32)um->isa_level };
	struct user_group *g;
	uint64_t asz;
	unsigned int i;
	int ret;

	if (c->max_context && ctx > c->max_context) {
		snprintf(err, errlen, "a context of %u positions is beyond the model's %u", ctx,
			 c->max_context);
		return -EINVAL;
	}
	if (!ctx)
		ctx = c->max_context && c->max_context < DEFAULT_CONTEXT ? c->max_context :
		      DEFAULT_CONTEXT;
	p.max_context = ctx;
	p.max_batch_tokens = batch > n ? batch : n;
	asz = cb_engine_arena_size(c, &p);
	if (!asz) {
		snprintf(err, errlen, "the engine refuses %u slots of %u positions, %u tokens a pass",
			 n, ctx, p.max_batch_tokens);
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		goto err_nomem;
	g->n_slots = n;
	g->max_tokens = p.max_batch_tokens;
	g->arena = aligned_alloc(64, (asz + 63) & ~63ull);
	g->seq = calloc(g->max_tokens, sizeof(*g->seq));
	g->pos = calloc(g->max_tokens, sizeof(*g->pos));
	g->mask = calloc(g->max_tokens, 1);
	g->logits = calloc((size_t)g->max_tokens * c->vocab_size, sizeof(float));
	g->trace = calloc((size_t)g->max_tokens * (tper ? tper : 1), sizeof(*g->trace));
	if (!g->arena || !g->seq || !g->pos || !g->mask || !g->logits || !g->trace)
		goto err_nomem;
	ret = cb_engine_init(&g->e, c, m->w, &p, g->arena, asz);
	if (ret) {
		snprintf(err, errlen, "the engine refused the model (%d)", ret);
		g->refs = 1;
		group_put(g);
		return -EINVAL;
	}
	pthread_mutex_lock(&um->lock);
	g->refs = (int)n;
	pthread_mutex_unlock(&um->lock);
	for (i = 0; i < n; i++) {
		ss[i]->group = g;
		ss[i]->slot = i;
		ss[i]->max_context = ctx;
		ss[i]->max_batch = batch;
	}
	return 0;

err_nomem:
	snprintf(err, errlen, "out of memory (an arena of %llu bytes)", (unsigned long long)asz);
	if (g) {
		g->refs = 1;
		group_put(g);
	}
	return -ENOMEM;
}

static void user_session_close(struct colibri_session *s)
{
	struct user_model *um = um_of(s->m);

	pthread_mutex_lock(&um->lock);
	group_put(s->group);
	pthread_mutex_unlock(&um->lock);
}

static struct cb_sample_params sample_params(const struct colibri_session *s)
{
	struct cb_sample_params sp = {
		.temperature_milli = s->sp.temperature_milli,
		.top_k = s->sp.top_k,
		.top_p_ppm = s->sp.top_p_ppm,
		.seed = s->sp.seed,
	};

	return sp;
}

/* Runs @b for @s on the pool, its cancellation watched; under ->lock. */
static int run_pass(struct user_model *um, struct colibri_session *s, struct user_group *g,
		    const struct cb_batch *b)
{
	int ret;

	um->running = s;
	ret = cb_engine_forward(g->e, &um->ex, b);
	um->running = NULL;
	return ret;
}

static int user_piece(struct colibri_session *s, const uint32_t *toks, uint32_t n, int last,
		      struct colibri_step *st, float *logits, uint32_t *trace)
{
	const size_t V = s->m->info.vocab_size;
	struct user_model *um = um_of(s->m);
	struct user_group *g = s->group;
	int all = !!(st->flags & COLIBRI_STEP_ALL_LOGITS), ret;
	struct cb_sample_params sp = sample_params(s);
	struct cb_batch b = {
		.n_tokens = n,
		.tokens = toks,
		.seq = g->seq,
		.pos = g->pos,
		.logits_mask = all ? NULL : g->mask,
		.logits = all && logits ? logits : g->logits,
		.route_trace = trace && s->m->info.top_k ? trace : NULL,
	};
	const float *row;
	uint32_t i;

	pthread_mutex_lock(&um->lock);
	for (i = 0; i < n; i++) {
		g->seq[i] = s->slot;
		g->pos[i] = s->n_past + i;
		g->mask[i] = last && i == n - 1;
	}
	if (all && !logits)
		b.logits_mask = g->mask;	/* nowhere to put them: only the last */
	ret = run_pass(um, s, g, &b);
	if (ret || !last)
		goto out;
	row = b.logits_mask ? g->logits : logits + (n - 1) * V;
	ret = cb_engine_sample_ex(g->e, &um->ex, row, &sp, s->n_past + n - 1);
	if (ret < 0)
		goto out;
	st->token = ret;
	ret = 0;
	if (logits && !all)
		memcpy(logits, row, V * sizeof(float));
out:
	pthread_mutex_unlock(&um->lock);
	if (ret) {
		session_err(s, "the engine's forward pass failed (%d)", ret);
		return ret == -ECANCELED ? ret : -EIO;
	}
	s->n_past += n;
	return 0;
}

/* One token of each session: one pass when they share an engine. */
static int user_step_group(struct colibri_session **ss, unsigned int n, const uint32_t *toks,
			   struct colibri_step *st)
{
	struct user_model *um = um_of(ss[0]->m);
	struct user_group *g = ss[0]->group;
	const size_t V = ss[0]->m->info.vocab_size;
	uint32_t tper = ss[0]->m->info.n_layers * ss[0]->m->info.top_k * 2;
	struct cb_batch b = {
		.n_tokens = n, .tokens = toks, .seq = g->seq, .pos = g->pos,
		.logits = g->logits, .route_trace = tper ? g->trace : NULL,
	};
	unsigned int i;
	int ret = 0;

	for (i = 1; i < n; i++)
		if (ss[i]->group != g)
			break;
	if (i < n || n > g->max_tokens) {
		for (i = 0; i < n && !ret; i++)
			ret = user_piece(ss[i], &toks[i], 1, 1, &st[i], st[i].logits, st[i].trace);
		return ret;
	}
	pthread_mutex_lock(&um->lock);
	for (i = 0; i < n; i++) {
		g->seq[i] = ss[i]->slot;
		g->pos[i] = ss[i]->n_past;
	}
	/* A group pass is watched for the first session's cancellation only. */
	ret = run_pass(um, ss[0], g, &b);
	for (i = 0; i < n && !ret; i++) {
		struct cb_sample_params sp = sample_params(ss[i]);
		const float *row = g->logits + i * V;

		ret = cb_engine_sample_ex(g->e, &um->ex, row, &sp, ss[i]->n_past);
		if (ret < 0)
			break;
		st[i].token = ret;
		ret = 0;
		if (st[i].logits)
			memcpy(st[i].logits, row, V * sizeof(float));
		if (st[i].trace && tper)
			memcpy(st[i].trace, g->trace + (size_t)i * tper, tper * sizeof(uint32_t));
	}
	pthread_mutex_unlock(&um->lock);
	if (ret) {
		for (i = 0; i < n; i++)
			session_err(ss[i], "the engine's forward pass failed (%d)", ret);
		return ret == -ECANCELED ? ret : -EIO;
	}
	for (i = 0; i < n; i++)
		ss[i]->n_past++;
	return 0;
}

static void user_reset(struct colibri_session *s)
{
	struct user_model *um = um_of(s->m);

	pthread_mutex_lock(&um->lock);
	cb_engine_seq_reset(s->group->e, s->slot);
	pthread_mutex_unlock(&um->lock);
}

const struct session_backend session_user_backend = {
	.model_open = user_model_open,
	.model_close = user_model_close,
	.tokenizer = user_tokenizer,
	.chat = user_chat,
	.sessions_open = user_sessions_open,
	.session_close = user_session_close,
	.piece = user_piece,
	.step_group = user_step_group,
	.reset = user_reset,
	.all_logits = 1,
};
