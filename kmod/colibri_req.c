// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_req.c - the request: one forward pass (and maybe a sample) of a
 * session, from its making to its last reference.
 *
 * A submission (colibri_ioctl.c, colibri_uring.c) is checked against its
 * file's live session, which it then takes (colibri_submit_begin()), and
 * makes a request per piece of at most max_batch tokens under the
 * session's lock (colibri_piece_req()); the scheduler runs it and ends it
 * (colibri_req_end()); whoever holds a reference drops it with
 * colibri_req_put().  A request interrupted by a signal lives on in
 * s->inflight until the file's next submission waits it out
 * (colibri_file_idle()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "colibri_internal.h"
#include "colibri_trace.h"

static void colibri_req_release(struct kref *ref)
{
	struct colibri_req *req = container_of(ref, struct colibri_req, ref);

	/* A request that never reached the scheduler still holds its session. */
	if (req->sess) {
		colibri_session_req_done(req->sess);
		colibri_session_put(req->sess);
	}
	if (req->owner)
		put_task_struct(req->owner);
	kfree(req);
}

void colibri_req_put(struct colibri_req *req)
{
	kref_put(&req->ref, colibri_req_release);
}

/* A new request for @s: made under its live lock, counted until it ends. */
static struct colibri_req *colibri_req_new(struct colibri_session *s)
{
	struct colibri_req *req = kzalloc(sizeof(*req), GFP_KERNEL);

	lockdep_assert_held(&s->lock);
	if (!req)
		return NULL;
	kref_init(&req->ref);
	INIT_LIST_HEAD(&req->node);
	init_completion(&req->done);
	kref_get(&s->ref);
	atomic_inc(&s->nr_reqs);
	req->sess = s;
	return req;
}

static int colibri_submit_validate(struct colibri_session *s, const struct colibri_submit *a)
{
	if (a->flags & ~COLIBRI_SUBMIT_FLAGS_ALL || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!a->n_tokens && !(a->flags & COLIBRI_SUBMIT_RESET))
		return -EINVAL;
	if (a->n_tokens > s->max_context)
		return -ENOSPC;
	if (a->n_tokens && !a->tokens)
		return -EFAULT;
	if (a->flags & COLIBRI_SUBMIT_LOGITS && (a->logits_len < s->vocab || !a->n_tokens))
		return -EINVAL;
	if (a->flags & COLIBRI_SUBMIT_TRACE &&
	    (u64)a->trace_len < (u64)a->n_tokens * s->trace_per_token)
		return -EINVAL;
	return 0;
}

/**
 * colibri_piece_req() - a request for one piece of a submission.
 * @s: the session; its caller holds its live lock and owns its io buffers.
 * @a: the validated submission.
 * @n: tokens in the piece (at most max_batch), already in s->tokens.
 * @first_pos: the position of the first of them.
 * @last: the last piece: sample after it.
 *
 * Return: the request (one reference, the caller's), or ERR_PTR(-EINVAL)
 * for a token id beyond the vocabulary, ERR_PTR(-ENOMEM).
 */
struct colibri_req *colibri_piece_req(struct colibri_session *s, const struct colibri_submit *a,
				      u32 n, u32 first_pos, bool last)
{
	struct colibri_req *req;
	u32 i;

	for (i = 0; i < n; i++) {
		if (s->tokens[i] >= s->vocab)
			return ERR_PTR(-EINVAL);
		s->seq[i] = 0;
		s->pos[i] = first_pos + i;
		s->logits_mask[i] = last && i == n - 1;
	}
	req = colibri_req_new(s);
	if (!req)
		return ERR_PTR(-ENOMEM);
	req->batch.n_tokens = n;
	req->batch.tokens = s->tokens;
	req->batch.seq = s->seq;
	req->batch.pos = s->pos;
	req->batch.logits_mask = s->logits_mask;
	req->batch.logits = s->logits;
	req->batch.route_trace = a->flags & COLIBRI_SUBMIT_TRACE ? s->trace : NULL;
	req->sample = last;
	req->sp.temperature_milli = a->temperature_milli;
	req->sp.top_k = a->top_k;
	req->sp.top_p_ppm = a->top_p_ppm;
	req->sp.seed = a->seed;
	req->counter = first_pos + n - 1;
	return req;
}

/**
 * colibri_req_end() - finish a request the scheduler held.
 * @req: the request, taken off the queue or out of a pass, ->ret set.
 *
 * Let go of its session, wake the caller, drop the scheduler's reference;
 * on the scheduler thread (or in colibri_sched_cancel()).  The session
 * goes first: once ->done is complete (or ->end has posted the CQE) the
 * caller may close its file, and then the session and its pinned memory
 * must go with the close, not whenever the scheduler next runs.  Nobody
 * reads ->sess of a finished request.
 */
void colibri_req_end(struct colibri_req *req)
{
	struct colibri_session *s = req->sess;

	trace_colibri_req_completed(s->id, req->ran, req->ret, ktime_get_ns() - req->queued_ns);
	req->sess = NULL;
	colibri_session_req_done(s);
	colibri_session_put(s);
	complete(&req->done);
	if (req->end)
		req->end(req);
	colibri_req_put(req);
}

/**
 * colibri_file_idle() - wait out a request a signal interrupted earlier.
 * @cf: an attached file; the caller holds ->lock.
 * @wait: sleep for it (interruptibly); else -EBUSY while it still runs.
 *
 * The sequence it may have left half done is reset by the next
 * submission, under the session's lock (cf->need_reset).
 * Return: 0 when the session is free, -EINTR or -EBUSY.
 */
int colibri_file_idle(struct colibri_file *cf, bool wait)
{
	struct colibri_session *s = cf->sess;

	if (s->inflight) {
		if (!wait && !completion_done(&s->inflight->done))
			return -EBUSY;
		if (colibri_wait_done(&s->inflight->done))
			return -EINTR;
		colibri_req_put(s->inflight);
		s->inflight = NULL;
	}
	return 0;
}

/**
 * colibri_submit_begin() - a submission, checked, takes its live session.
 * @cf: the file; the caller holds ->lock.
 * @a: the submission, copied in.
 * @wait: wait (interruptibly) for a step an earlier signal left running;
 *	else that is -EBUSY (io_uring issues do not sleep on it).
 * @pos: the sequence's length before the submission.
 *
 * Checks @a against the file's session, resets the sequence if @a asks
 * for it or an earlier submission left it half done, and reads its
 * length; the session's lock is held only for that, never across a user
 * copy, so it is not held on return.
 * Return: 0, or -ENOTCONN (no session), -EBUSY (an io_uring submission
 * owns it, or a step still runs), @a's own error (see
 * colibri_submit_validate()), -EINTR, -ENODEV (revoked), -ENOSPC (@a's
 * tokens do not fit the context left).
 */
int colibri_submit_begin(struct colibri_file *cf, const struct colibri_submit *a, bool wait,
			 u32 *pos)
{
	struct colibri_session *s = cf->sess;
	int ret;

	if (!s)
		return -ENOTCONN;
	/* Cleared without ->lock by an io_uring completion: pairs with its release. */
	if (smp_load_acquire(&cf->uop))
		return -EBUSY;
	ret = colibri_submit_validate(s, a);
	if (ret)
		return ret;
	ret = colibri_file_idle(cf, wait);
	if (ret)
		return ret;
	ret = colibri_session_lock(s);
	if (ret)
		return ret;
	if (cf->need_reset || a->flags & COLIBRI_SUBMIT_RESET)
		colibri_session_reset(s);
	cf->need_reset = false;
	*pos = colibri_session_len(s);
	colibri_session_unlock(s);
	return (u64)*pos + a->n_tokens > s->max_context ? -ENOSPC : 0;
}

/**
 * colibri_wait_done() - wait for a completion, interruptibly by signals.
 * @done: the completion.
 *
 * A pending task-work notification alone (TIF_NOTIFY_SIGNAL: io_uring
 * completions for this task, run on its way back to user space) makes
 * signal_pending() true without a signal; it must not fail the wait, or
 * a task that also uses io_uring would see -EINTR for nothing.  Then this
 * sleeps a tick at a time, killably, checking for a real signal between.
 *
 * Return: 0 when @done completed, -EINTR on a signal.
 */
int colibri_wait_done(struct completion *done)
{
	for (;;) {
		if (!wait_for_completion_interruptible(done))
			return 0;
		if (task_sigpending(current) || fatal_signal_pending(current))
			return -EINTR;
		if (wait_for_completion_killable_timeout(done, 1) > 0)
			return 0;
	}
}
