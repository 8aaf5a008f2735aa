// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_session.c - sessions: an engine instance per attached file, with
 * its KV cache, scratch and io buffers carved from one pinned buffer.
 * Nothing is allocated on the inference path after this.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "colibri_internal.h"

static atomic_t colibri_nr_sessions = ATOMIC_INIT(0);

unsigned int colibri_sessions_count(void)
{
	return atomic_read(&colibri_nr_sessions);
}

/* Bump allocator over the session buffer, after the engine's own part. */
static void *colibri_carve(u8 **cur, u64 bytes)
{
	void *p = *cur;

	*cur += ALIGN(bytes, 64);
	return p;
}

/**
 * colibri_session_create() - attach a new session to a model.
 * @m: the model; the session takes its own reference.
 * @max_context: positions the session may hold (validated by the caller).
 * @max_batch: tokens per forward pass.
 *
 * Return: the session, or ERR_PTR(-ENOSPC) at max_sessions, -ENOMEM over
 * the memory limit, -EINVAL if the engine refuses the shape.
 */
struct colibri_session *colibri_session_create(struct colibri_model *m,
					       u32 max_context, u32 max_batch)
{
	struct cb_engine_params p = {
		.max_batch_tokens = max_batch,
		.n_seqs = 1,
		.max_context = max_context,
		.isa_max_level = colibri_caps.isa_level,
	};
	struct colibri_session *s;
	u64 eng_bytes, io_bytes, total;
	u32 trace_per_token;
	u8 *cur;
	int ret;

	if (!atomic_add_unless(&colibri_nr_sessions, 1, colibri_max_sessions))
		return ERR_PTR(-ENOSPC);

	ret = -EINVAL;
	eng_bytes = cb_engine_arena_size(&m->cfg, &p);
	if (!eng_bytes)
		goto err_count;
	trace_per_token = m->cfg.n_layers * m->cfg.top_k * 2;
	io_bytes = 4 * ALIGN((u64)max_batch * 4, 64) + ALIGN(max_batch, 64) +
		   ALIGN((u64)m->cfg.vocab_size * 4, 64) +
		   ALIGN((u64)max_batch * trace_per_token * 4, 64);
	if (check_add_overflow(ALIGN(eng_bytes, 64), io_bytes, &total))
		goto err_count;

	ret = -ENOMEM;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		goto err_count;
	ret = colibri_buf_alloc(&s->arena, total);
	if (ret)
		goto err_free;
	ret = cb_engine_init(&s->eng, &m->cfg, &m->w, &p, s->arena.vaddr, eng_bytes);
	if (ret)
		goto err_buf;

	cur = (u8 *)s->arena.vaddr + ALIGN(eng_bytes, 64);
	s->tokens = colibri_carve(&cur, (u64)max_batch * 4);
	s->seq = colibri_carve(&cur, (u64)max_batch * 4);
	s->pos = colibri_carve(&cur, (u64)max_batch * 4);
	s->logits_mask = colibri_carve(&cur, max_batch);
	s->logits = colibri_carve(&cur, (u64)m->cfg.vocab_size * 4);
	s->trace = colibri_carve(&cur, (u64)max_batch * trace_per_token * 4);

	kref_init(&s->ref);
	kobject_get(&m->kobj);
	s->model = m;
	s->max_context = max_context;
	s->max_batch = max_batch;
	s->vocab = m->cfg.vocab_size;
	s->trace_per_token = trace_per_token;
	atomic_inc(&m->nr_sessions);
	return s;

err_buf:
	colibri_buf_free(&s->arena);
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
