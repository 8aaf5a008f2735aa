// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_session.c - sessions: a sequence slot of an engine instance per
 * attached file, and its io buffers in pinned memory.
 *
 * The sessions of a model share one engine (struct colibri_batcher), made
 * at the first ATTACH with batch_slots sequence slots of the model's
 * context capped by default_context, max_batch_tokens per forward pass,
 * and freed with its last session; the scheduler runs every session's
 * requests on it in one forward pass.  A session that does not fit it
 * (more context or batch, every slot taken, not enough memory) gets a
 * private engine of one slot instead.  Nothing is allocated on the
 * inference path after ATTACH.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "colibri_internal.h"

static atomic_t colibri_nr_sessions = ATOMIC_INIT(0);

unsigned int colibri_sessions_count(void)
{
	return atomic_read(&colibri_nr_sessions);
}

/* Bump allocator over a buffer. */
static void *colibri_carve(u8 **cur, u64 bytes)
{
	void *p = *cur;

	*cur += ALIGN(bytes, 64);
	return p;
}

/*
 * Makes an engine instance of @n_slots sequence slots of @ctx positions,
 * @tokens per forward pass, with the scratch a pass is assembled in.
 */
static struct colibri_batcher *colibri_batcher_new(struct colibri_model *m, u32 tokens,
						   u32 n_slots, u32 ctx)
{
	struct cb_engine_params p = {
		.max_batch_tokens = tokens,
		.n_seqs = n_slots,
		.max_context = ctx,
		.isa_max_level = colibri_caps.isa_level,
	};
	u64 tpt = (u64)m->cfg.n_layers * m->cfg.top_k * 2;
	struct colibri_batcher *b;
	u64 eng_bytes, io_bytes, total;
	u8 *cur;
	int ret;

	eng_bytes = cb_engine_arena_size(&m->cfg, &p);
	if (!eng_bytes)
		return ERR_PTR(-EINVAL);
	io_bytes = 3 * ALIGN((u64)tokens * 4, 64) + ALIGN(tokens, 64) +
		   ALIGN((u64)n_slots * m->cfg.vocab_size * 4, 64) +
		   ALIGN((u64)tokens * tpt * 4, 64);
	if (check_add_overflow(ALIGN(eng_bytes, 64), io_bytes, &total))
		return ERR_PTR(-EINVAL);

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return ERR_PTR(-ENOMEM);
	ret = -ENOMEM;
	b->reqs = kcalloc(n_slots, sizeof(*b->reqs), GFP_KERNEL);
	b->take = kcalloc(n_slots, sizeof(*b->take), GFP_KERNEL);
	if (!b->reqs || !b->take)
		goto err_free;
	ret = colibri_buf_alloc(&b->buf, total);
	if (ret)
		goto err_free;
	ret = cb_engine_init(&b->eng, &m->cfg, &m->w, &p, b->buf.vaddr, eng_bytes);
	if (ret)
		goto err_buf;
	cur = (u8 *)b->buf.vaddr + ALIGN(eng_bytes, 64);
	b->tokens = colibri_carve(&cur, (u64)tokens * 4);
	b->seq = colibri_carve(&cur, (u64)tokens * 4);
	b->pos = colibri_carve(&cur, (u64)tokens * 4);
	b->mask = colibri_carve(&cur, tokens);
	b->logits = colibri_carve(&cur, (u64)n_slots * m->cfg.vocab_size * 4);
	b->trace = colibri_carve(&cur, (u64)tokens * tpt * 4);
	b->model = m;
	b->max_tokens = tokens;
	b->n_slots = n_slots;
	b->max_context = ctx;
	return b;

err_buf:
	colibri_buf_free(&b->buf);
err_free:
	kfree(b->take);
	kfree(b->reqs);
	kfree(b);
	return ERR_PTR(ret);
}

static void colibri_batcher_free(struct colibri_batcher *b)
{
	colibri_buf_free(&b->buf);
	kfree(b->take);
	kfree(b->reqs);
	kfree(b);
}

/* Positions per slot of @m's shared engine: its context, capped. */
static u32 colibri_shared_context(const struct colibri_model *m)
{
	u32 ctx = colibri_default_context;

	if (m->cfg.max_context)
		ctx = min(ctx, m->cfg.max_context);
	return ctx;
}

/*
 * Puts @s on a free slot of its model's shared engine, making the engine
 * first if this is its first session.  Return: true if it did; false if
 * the session does not fit (bigger context or batch than the shared
 * engine's, every slot taken, sharing off, or no memory for the engine):
 * the session then gets an engine of its own, as a session always did.
 */
static bool colibri_session_share(struct colibri_session *s, u32 max_context, u32 max_batch)
{
	struct colibri_model *m = s->model;
	u32 ctx = colibri_shared_context(m);
	struct colibri_batcher *b;
	bool ok = false;

	if (!colibri_batch_slots || max_context > ctx || max_batch > colibri_max_batch_tokens)
		return false;
	mutex_lock(&m->batch_lock);
	b = m->shared;
	if (!b) {
		b = colibri_batcher_new(m, colibri_max_batch_tokens, colibri_batch_slots, ctx);
		if (IS_ERR(b)) {
			pr_debug("no shared engine for %s: %ld\n", m->name, PTR_ERR(b));
			goto out;
		}
		m->shared = b;
		atomic64_set(&m->shared_bytes, b->buf.size);
	}
	if (hweight64(b->slots) < b->n_slots) {
		s->slot = ffz(b->slots);
		b->slots |= BIT_ULL(s->slot);
		cb_engine_seq_reset(b->eng, s->slot);
		s->bat = b;
		s->shared = true;
		atomic_inc(&m->shared_sessions);
		ok = true;
	}
out:
	mutex_unlock(&m->batch_lock);
	return ok;
}

/* Gives @s's slot back; the last session of the shared engine frees it. */
static void colibri_session_unshare(struct colibri_session *s)
{
	struct colibri_model *m = s->model;
	struct colibri_batcher *b = s->bat;

	mutex_lock(&m->batch_lock);
	b->slots &= ~BIT_ULL(s->slot);
	atomic_dec(&m->shared_sessions);
	if (!b->slots) {
		m->shared = NULL;
		atomic64_set(&m->shared_bytes, 0);
		colibri_batcher_free(b);
	}
	mutex_unlock(&m->batch_lock);
}

/**
 * colibri_session_bytes() - pinned memory a session alone occupies.
 * @s: the session.
 *
 * Return: its buffers, plus its engine unless it shares the model's.
 */
u64 colibri_session_bytes(const struct colibri_session *s)
{
	return s->arena.size + (s->shared ? 0 : s->bat->buf.size);
}

/**
 * colibri_session_create() - attach a new session to a model.
 * @m: the model; the session takes its own reference.
 * @max_context: positions the session may hold (validated by the caller).
 * @max_batch: tokens per forward pass.
 *
 * The session takes a sequence slot of the model's shared engine when it
 * fits (colibri_session_share()), else it gets an engine of its own.
 *
 * Return: the session, or ERR_PTR(-ENOSPC) at max_sessions, -ENOMEM over
 * the memory limit, -EINVAL if the engine refuses the shape.
 */
struct colibri_session *colibri_session_create(struct colibri_model *m,
					       u32 max_context, u32 max_batch)
{
	struct colibri_session *s;
	u32 trace_per_token;
	u64 io_bytes;
	u8 *cur;
	int ret;

	if (!atomic_add_unless(&colibri_nr_sessions, 1, colibri_max_sessions))
		return ERR_PTR(-ENOSPC);

	ret = -ENOMEM;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		goto err_count;
	s->model = m;
	if (!colibri_session_share(s, max_context, max_batch)) {
		s->bat = colibri_batcher_new(m, max_batch, 1, max_context);
		if (IS_ERR(s->bat)) {
			ret = PTR_ERR(s->bat);
			goto err_free;
		}
		s->slot = 0;
	}

	trace_per_token = m->cfg.n_layers * m->cfg.top_k * 2;
	io_bytes = 4 * ALIGN((u64)max_batch * 4, 64) + ALIGN(max_batch, 64) +
		   ALIGN((u64)m->cfg.vocab_size * 4, 64) +
		   ALIGN((u64)max_batch * trace_per_token * 4, 64);
	ret = colibri_buf_alloc(&s->arena, io_bytes);
	if (ret)
		goto err_bat;

	cur = (u8 *)s->arena.vaddr;
	s->tokens = colibri_carve(&cur, (u64)max_batch * 4);
	s->seq = colibri_carve(&cur, (u64)max_batch * 4);
	s->pos = colibri_carve(&cur, (u64)max_batch * 4);
	s->logits_mask = colibri_carve(&cur, max_batch);
	s->logits = colibri_carve(&cur, (u64)m->cfg.vocab_size * 4);
	s->trace = colibri_carve(&cur, (u64)max_batch * trace_per_token * 4);

	kref_init(&s->ref);
	kobject_get(&m->kobj);
	s->max_context = max_context;
	s->max_batch = max_batch;
	s->vocab = m->cfg.vocab_size;
	s->trace_per_token = trace_per_token;
	atomic_inc(&m->nr_sessions);
	return s;

err_bat:
	if (s->shared)
		colibri_session_unshare(s);
	else
		colibri_batcher_free(s->bat);
err_free:
	kfree(s);
err_count:
	atomic_dec(&colibri_nr_sessions);
	return ERR_PTR(ret);
}

static void colibri_session_release(struct kref *ref)
{
	struct colibri_session *s = container_of(ref, struct colibri_session, ref);
	struct colibri_model *m = s->model;

	if (s->shared)
		colibri_session_unshare(s);
	else
		colibri_batcher_free(s->bat);
	colibri_buf_free(&s->arena);
	kfree(s);
	atomic_dec(&colibri_nr_sessions);
	if (atomic_dec_and_test(&m->nr_sessions))
		wake_up_all(&m->sessions_wq);
	colibri_model_put(m);
}

void colibri_session_put(struct colibri_session *s)
{
	kref_put(&s->ref, colibri_session_release);
}
