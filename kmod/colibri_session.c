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
 *
 * A session lets go of its memory and its model when its file closes, or
 * earlier when an UNLOAD(WAIT) revokes it: then as soon as no request
 * holds it, on the unloader's thread or (if a request was still in a
 * pass) on colibri_wq, after the scheduler finished that request.
 *
 * Its io buffers (->io: the tokens a submission brings, the logits and
 * routing trace it takes back) are not part of that: they are the file's
 * mailbox, in unpinned kernel memory that lives as long as the struct.
 * A submitter copies user memory into and out of them without any lock
 * (a page fault may take for ever: a FUSE file that never answers, a
 * userfaultfd nobody serves), so revoking a session never waits for one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/mm.h>
#include <linux/cred.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "colibri_internal.h"

/* Session ids for the tracepoints: from 1, never reused while loaded. */
static atomic64_t colibri_session_ids = ATOMIC64_INIT(0);

static atomic_t colibri_nr_sessions = ATOMIC_INIT(0);
/* Detaches revoked sessions the scheduler finished with (it must not sleep on ->lock). */
static struct workqueue_struct *colibri_wq;

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
 * @charge: a private engine's session charge (its memory is charged to
 * the attaching user and cgroup), or NULL for the model's shared engine.
 */
static struct colibri_batcher *colibri_batcher_new(struct colibri_model *m, u32 tokens,
						   u32 n_slots, u32 ctx,
						   struct colibri_charge *charge)
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

	if (charge) {
		ret = colibri_charge_bytes(charge, PAGE_ALIGN(total));
		if (ret)
			return ERR_PTR(ret);
	}
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	ret = -ENOMEM;
	b->reqs = kcalloc(n_slots, sizeof(*b->reqs), GFP_KERNEL_ACCOUNT);
	b->take = kcalloc(n_slots, sizeof(*b->take), GFP_KERNEL_ACCOUNT);
	if (!b->reqs || !b->take)
		goto err_free;
	ret = colibri_buf_alloc(&b->buf, total, !!charge);
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

/**
 * colibri_model_context() - the most positions a session of @m may hold.
 * @m: the model.
 *
 * Its file's max_context, or default_context when the file leaves it
 * unspecified (0): never a context nobody asked the model for.
 */
u32 colibri_model_context(const struct colibri_model *m)
{
	return m->cfg.max_context ?: colibri_default_context;
}

/* Positions per slot of @m's shared engine: its context, capped. */
static u32 colibri_shared_context(const struct colibri_model *m)
{
	return min(colibri_default_context, colibri_model_context(m));
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
		b = colibri_batcher_new(m, colibri_max_batch_tokens, colibri_batch_slots, ctx,
					NULL);
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

/*
 * Lets go of everything the session holds but the struct: its slot or
 * engine, its buffers, its place in the counts, its model reference.
 * Caller holds ->lock; only once no request holds the session (the last
 * one to end calls colibri_session_req_done(), which comes back here).
 */
static void colibri_session_detach_locked(struct colibri_session *s)
{
	lockdep_assert_held(&s->lock);
	if (s->detached || atomic_read(&s->nr_reqs))
		return;
	s->detached = true;
	if (s->shared)
		colibri_session_unshare(s);
	else
		colibri_batcher_free(s->bat);
	s->bat = NULL;
	colibri_uncharge(&s->charge);
	atomic_dec(&colibri_nr_sessions);
	colibri_model_drop_session(s->model, &s->model_node);
	s->model = NULL;
}

static void colibri_session_detach_work(struct work_struct *w)
{
	struct colibri_session *s = container_of(w, struct colibri_session, detach_work);

	mutex_lock(&s->lock);
	colibri_session_detach_locked(s);
	mutex_unlock(&s->lock);
	colibri_session_put(s);		/* the work's */
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
 * Everything the session alone pins is charged to the calling task's
 * user and memory cgroup first (colibri_acct.c).
 *
 * Return: the session, or ERR_PTR(-ENOSPC) at max_sessions, -EDQUOT over
 * a per-user limit, -ENOMEM over the memory limit or RLIMIT_MEMLOCK,
 * -EINTR on a fatal signal, -EINVAL if the engine refuses the shape,
 * -ENOENT if the model is being unloaded.
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
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		goto err_count;
	ret = colibri_charge_session(&s->charge);
	if (ret)
		goto err_free;
	s->model = m;
	s->id = atomic64_inc_return(&colibri_session_ids);
	s->owner = get_task_pid(current, PIDTYPE_TGID);
	s->uid = current_uid();
	get_task_comm(s->comm, current->group_leader);
	if (!colibri_session_share(s, max_context, max_batch)) {
		s->bat = colibri_batcher_new(m, max_batch, 1, max_context, &s->charge);
		if (IS_ERR(s->bat)) {
			ret = PTR_ERR(s->bat);
			goto err_charge;
		}
		s->slot = 0;
	}

	trace_per_token = m->cfg.n_layers * m->cfg.top_k * 2;
	io_bytes = 4 * ALIGN((u64)max_batch * 4, 64) + ALIGN(max_batch, 64) +
		   ALIGN((u64)m->cfg.vocab_size * 4, 64) +
		   ALIGN((u64)max_batch * trace_per_token * 4, 64);
	ret = colibri_charge_bytes(&s->charge, PAGE_ALIGN(io_bytes));
	if (ret)
		goto err_bat;
	ret = -ENOMEM;
	s->io = kvzalloc(io_bytes, GFP_KERNEL_ACCOUNT);
	if (!s->io)
		goto err_bat;

	cur = s->io;
	s->tokens = colibri_carve(&cur, (u64)max_batch * 4);
	s->seq = colibri_carve(&cur, (u64)max_batch * 4);
	s->pos = colibri_carve(&cur, (u64)max_batch * 4);
	s->logits_mask = colibri_carve(&cur, max_batch);
	s->logits = colibri_carve(&cur, (u64)m->cfg.vocab_size * 4);
	s->trace = colibri_carve(&cur, (u64)max_batch * trace_per_token * 4);

	kref_init(&s->ref);
	mutex_init(&s->lock);
	INIT_WORK(&s->detach_work, colibri_session_detach_work);
	s->bytes = PAGE_ALIGN(io_bytes) + (s->shared ? 0 : s->bat->buf.size);
	s->max_context = max_context;
	s->max_batch = max_batch;
	s->vocab = m->cfg.vocab_size;
	s->trace_per_token = trace_per_token;
	/* Last: from here on an UNLOAD(WAIT) may revoke it. */
	ret = colibri_model_add_session(m, &s->model_node);
	if (ret)
		goto err_io;
	return s;

err_io:
	mutex_destroy(&s->lock);
	kvfree(s->io);
err_bat:
	if (s->shared)
		colibri_session_unshare(s);
	else
		colibri_batcher_free(s->bat);
err_charge:
	colibri_uncharge(&s->charge);
err_free:
	put_pid(s->owner);
	kfree(s);
err_count:
	atomic_dec(&colibri_nr_sessions);
	return ERR_PTR(ret);
}

static void colibri_session_release(struct kref *ref)
{
	struct colibri_session *s = container_of(ref, struct colibri_session, ref);

	/* The last reference: no request holds it, nobody holds ->lock. */
	mutex_lock(&s->lock);
	colibri_session_detach_locked(s);
	mutex_unlock(&s->lock);
	WARN_ON_ONCE(!s->detached);
	mutex_destroy(&s->lock);
	kvfree(s->io);
	put_pid(s->owner);
	kfree(s);
}

void colibri_session_put(struct colibri_session *s)
{
	kref_put(&s->ref, colibri_session_release);
}

/**
 * colibri_session_lock() - take ->lock of a session that is still live.
 * @s: the session.
 *
 * Whoever touches the session's memory (its buffers, its engine slot) or
 * makes a request for it outside the scheduler does so under this.
 * Return: 0 with ->lock held, or -ENODEV (not held): its model was
 * unloaded and the session revoked.
 */
int colibri_session_lock(struct colibri_session *s)
{
	mutex_lock(&s->lock);
	if (s->revoked) {
		mutex_unlock(&s->lock);
		return -ENODEV;
	}
	return 0;
}

/**
 * colibri_session_model_get() - the model of a live session.
 * @s: the session.
 *
 * Return: its model with a reference, or NULL once it is revoked.
 */
struct colibri_model *colibri_session_model_get(struct colibri_session *s)
{
	struct colibri_model *m;

	if (colibri_session_lock(s))
		return NULL;
	m = s->model;
	kobject_get(&m->kobj);
	colibri_session_unlock(s);
	return m;
}

/**
 * colibri_session_req_done() - a request made for @s is finished.
 * @s: the session; the request still holds its reference.
 *
 * Called by the scheduler (which must not sleep on ->lock here: a user
 * may hold it while its copy_to_user() faults) and by whoever drops a
 * request that never reached the scheduler.  The last request of a
 * revoked session hands the detaching to colibri_wq.
 */
void colibri_session_req_done(struct colibri_session *s)
{
	/* atomic_dec_and_test() is a full barrier: see colibri_session_revoked_idle(). */
	if (!atomic_dec_and_test(&s->nr_reqs) || !READ_ONCE(s->revoked))
		return;
	kref_get(&s->ref);		/* the work's */
	if (!queue_work(colibri_wq, &s->detach_work))
		colibri_session_put(s);	/* queued already: it holds one */
}

/**
 * colibri_session_revoke() - stop a session for good: its model is going.
 * @s: the session; the caller holds a reference.
 *
 * From here on its SUBMITs say -ENODEV and the scheduler drops its
 * requests.  The caller then purges the one still queued and calls
 * colibri_session_revoked_idle() (colibri_sched_revoke() does both).
 */
void colibri_session_revoke(struct colibri_session *s)
{
	mutex_lock(&s->lock);
	WRITE_ONCE(s->revoked, true);
	mutex_unlock(&s->lock);
}

/**
 * colibri_session_revoked_idle() - detach a revoked session nobody uses.
 * @s: the session, revoked; the caller holds a reference.
 *
 * Its memory and its model reference go at once if no request holds it,
 * else when the last one ends (colibri_session_req_done()).  The struct
 * lives on with its file.
 */
void colibri_session_revoked_idle(struct colibri_session *s)
{
	/* Pairs with colibri_session_req_done(): one of us sees the other. */
	smp_mb();
	if (atomic_read(&s->nr_reqs))
		return;
	mutex_lock(&s->lock);
	colibri_session_detach_locked(s);
	mutex_unlock(&s->lock);
}

/**
 * colibri_session_get_live() - a session of @m not yet revoked.
 * @m: a model being unloaded (->dying: no session is added any more).
 *
 * Return: the session with a reference, or NULL when every one is revoked.
 */
struct colibri_session *colibri_session_get_live(struct colibri_model *m)
{
	struct colibri_session *s = NULL, *it;

	mutex_lock(&m->sessions_lock);
	list_for_each_entry(it, &m->sessions, model_node) {
		if (!READ_ONCE(it->revoked) && kref_get_unless_zero(&it->ref)) {
			s = it;
			break;
		}
	}
	mutex_unlock(&m->sessions_lock);
	return s;
}

int colibri_sessions_init(void)
{
	colibri_wq = alloc_workqueue("colibri", WQ_UNBOUND, 0);
	return colibri_wq ? 0 : -ENOMEM;
}

/* Module exit: no file is open; wait for the detaching still queued. */
void colibri_sessions_exit(void)
{
	destroy_workqueue(colibri_wq);
}
