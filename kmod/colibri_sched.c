// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_sched.c - the scheduler kthread: owns the request queue and runs
 * the engine on the worker pool, one forward pass at a time, each pass
 * carrying the queued requests of every session on one engine instance
 * (continuous batching: see colibri_pick()).
 *
 * Callers queue a request and sleep interruptibly on its completion.  A
 * caller that gives up (signal, kill) marks the request cancelled and drops
 * its reference; the scheduler drops it at the end of the pass it is in
 * (or at the next step boundary, when nobody in the pass is left who
 * wants it; see colibri_yield()), and drops its own.  The request and the
 * session it points to live until both are done with them.
 *
 * Asynchronous submitters (io_uring, colibri_uring.c) do not sleep: they
 * queue with colibri_sched_queue() and get ->end called once, on this
 * thread, when the request is finished; colibri_sched_cancel() takes a
 * request back.  A request also stops when its ->owner task is dying:
 * Linux 6.1's io_uring never cancels the uring_cmds of an exiting task,
 * so nobody else would.
 *
 * An UNLOAD(WAIT) revokes its model's sessions here (colibri_sched_revoke()):
 * taking their requests back is the scheduler's part of it, so the session
 * code below never calls up into the scheduler.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <asm/fpu/api.h>

#include "colibri_internal.h"
#include "colibri_trace.h"

/*
 * The scheduler: made at load (colibri_sched_start()), reached by the
 * device's files (struct colibri_file) and, on its own thread, by the
 * engine's hooks through the executor's ->host.
 */
struct colibri_sched {
	struct task_struct *task;
	spinlock_t queue_lock;		/* the queue, and whether a request is on it */
	struct list_head queue;		/* protected by ->queue_lock */
	wait_queue_head_t wq;		/* the thread waits for the queue */
	struct cb_exec *ex;		/* the worker pool; ->host is us */
	/* the running pass: scheduler thread only (workers read it in its jobs) */
	struct colibri_batcher *running;
	struct colibri_accel_pass accel;
};

/*
 * Nobody wants the request's result any more: its caller cancelled it, the
 * task that owns it is dying, or its session was revoked (its model is
 * being unloaded).  Reading another task's flags and signal state without
 * its locks is a hint, and a hint is all this needs: a late answer costs
 * one more step.  Every reason only ever turns true.
 */
static bool colibri_req_abandoned(struct colibri_req *req)
{
	struct task_struct *t = req->owner;

	if (READ_ONCE(req->cancelled) || READ_ONCE(req->sess->revoked))
		return true;
	return t && ((READ_ONCE(t->flags) & PF_EXITING) || fatal_signal_pending(t));
}

/* The result of an abandoned request. */
static int colibri_req_abandon_ret(struct colibri_req *req)
{
	return READ_ONCE(req->sess->revoked) ? -ENODEV : -EINTR;
}

/*
 * The engine's yield hook, called between steps on the scheduler thread,
 * which is inside an FPU section: leave it, let others run, come back.
 *
 * The pass stops only when nobody wants any of it: every request in it
 * abandoned.  A request abandoned while others in the pass are live costs
 * them nothing: its rows run to the end of the pass and are dropped there
 * (colibri_sched_pass()), at most one pass of wasted work.  Stopping the
 * pass for it would throw away the others' work too, and rerunning it
 * from scratch each time lets a neighbour who keeps interrupting its own
 * steps hold every other session off for as long as it likes.
 */
static int colibri_yield(struct cb_exec *ex)
{
	struct colibri_sched *sc = ex->host;
	struct colibri_batcher *b = sc->running;
	u32 i;

	kernel_fpu_end();
	cond_resched();
	kernel_fpu_begin();
	if (kthread_should_stop())
		return -ESHUTDOWN;
	for (i = 0; i < b->nr; i++)
		if (b->take[i] && !colibri_req_abandoned(b->reqs[i]))
			return 0;
	return -EINTR;
}

/*
 * Picks the next pass, under ->queue_lock: the oldest request's
 * engine, and every queued request on it.  Single-token steps (decode)
 * come first, one token each; then the others in queue order, each with
 * as many of its remaining tokens as the budget leaves (a piece may take
 * several passes).  There are no more slots than tokens per pass, so the
 * oldest request always gets at least one token: nobody starves.
 * Abandoned requests are taken too, with no tokens, to be ended.
 */
static struct colibri_batcher *colibri_pick(struct colibri_sched *sc)
{
	struct colibri_req *head = list_first_entry(&sc->queue, struct colibri_req, node);
	struct colibri_batcher *b = head->sess->bat;
	struct colibri_req *r, *tmp;
	u32 budget = b->max_tokens, left;
	int round;

	b->nr = 0;
	for (round = 0; round < 2; round++) {
		list_for_each_entry_safe(r, tmp, &sc->queue, node) {
			if (r->sess->bat != b || b->nr == b->n_slots)
				continue;
			left = r->batch.n_tokens - r->ran;
			if (colibri_req_abandoned(r)) {
				b->take[b->nr] = 0;
			} else if ((left == 1) != (round == 0) || !budget) {
				continue;
			} else {
				b->take[b->nr] = min(left, budget);
				budget -= b->take[b->nr];
			}
			list_del_init(&r->node);
			b->reqs[b->nr++] = r;
		}
	}
	return b;
}

/*
 * One colibri_route event per token and layer of a pass that ran: the
 * pass's routing trace, [token][layer][rank][2] (expert id, weight bits),
 * which the engine writes for every pass.  Only with the event enabled.
 */
static void colibri_trace_route(const struct cb_batch *batch, u32 n_layers, u32 k)
{
	u32 i, l;

	if (!k)
		return;
	for (i = 0; i < batch->n_tokens; i++)
		for (l = 0; l < n_layers; l++)
			trace_colibri_route(batch->pos[i], l, k,
					    batch->route_trace + ((u64)i * n_layers + l) * k * 2);
}

/*
 * Runs the pass colibri_pick() chose, in one forward call: each request's
 * tokens on its session's slot; then each request's logits row and trace
 * rows are copied to its session's buffers and a finished request samples
 * its token.  A request abandoned during the pass is dropped: its rows
 * ran but are not copied, and it ends with -EINTR.  Requests whose piece
 * was split go back to the head of the queue in order; the others are
 * ended last, as that may free the batcher.
 */
static void colibri_sched_pass(struct colibri_sched *sc, struct colibri_batcher *b)
{
	struct cb_exec *ex = sc->ex;
	struct colibri_model *m = b->model;
	u32 vocab = m->cfg.vocab_size;
	u32 tpt = m->cfg.n_layers * m->cfg.top_k * 2;
	struct cb_batch batch = {
		.tokens = b->tokens, .seq = b->seq, .pos = b->pos,
		.logits_mask = b->mask, .logits = b->logits, .route_trace = b->trace,
	};
	struct colibri_req *ended[COLIBRI_MAX_SLOTS];
	u32 i, k, n = 0, row = 0, live = 0, n_end = 0;
	u64 dropped = 0;	/* requests abandoned during the pass */
	int ret = 0;

	for (i = 0; i < b->nr; i++) {
		struct colibri_req *r = b->reqs[i];

		if (!b->take[i]) {
			r->ret = colibri_req_abandon_ret(r);
			continue;
		}
		live++;
		if (!r->ran)
			trace_colibri_req_started(r->sess->id, r->batch.n_tokens);
		for (k = r->ran; k < r->ran + b->take[i]; k++, n++) {
			b->tokens[n] = r->batch.tokens[k];
			b->seq[n] = r->sess->slot;
			b->pos[n] = r->batch.pos[k];
			b->mask[n] = r->batch.logits_mask[k];
		}
	}
	batch.n_tokens = n;

	if (n) {
		u64 t0 = ktime_get_ns();

		sc->running = b;
		colibri_accel_pass_begin(&sc->accel, m);
		/* All engine code runs in FPU sections; see colibri_exec.c. */
		kernel_fpu_begin();
		ret = cb_engine_forward(b->eng, ex, &batch);
		for (i = 0, n = 0; i < b->nr && !ret; i++) {
			struct colibri_req *r = b->reqs[i];

			if (!b->take[i])
				continue;
			/* Decided once: a dropped request's rows are skipped, unread. */
			if (colibri_req_abandoned(r)) {
				dropped |= BIT_ULL(i);
				r->ret = colibri_req_abandon_ret(r);
				for (k = 0; k < b->take[i]; k++, n++)
					row += !!b->mask[n];
				continue;
			}
			if (r->batch.route_trace)
				memcpy(r->batch.route_trace + (u64)r->ran * tpt,
				       b->trace + (u64)n * tpt, (u64)b->take[i] * tpt * 4);
			for (k = r->ran; k < r->ran + b->take[i]; k++, n++) {
				if (!b->mask[n])
					continue;
				memcpy(r->batch.logits, (u8 *)b->logits + (u64)row * vocab * 4,
				       (u64)vocab * 4);
				row++;
			}
			r->ran += b->take[i];
			if (r->ran == r->batch.n_tokens)
				r->ret = !r->sample ? 0 :
					 cb_engine_sample_ex(b->eng, ex, r->batch.logits,
							     &r->sp, r->counter);
		}
		kernel_fpu_end();
		colibri_accel_pass_end(&sc->accel);
		sc->running = NULL;
		trace_colibri_forward(m->name, live, batch.n_tokens, ktime_get_ns() - t0, ret);
		if (!ret && trace_colibri_route_enabled())
			colibri_trace_route(&batch, m->cfg.n_layers, m->cfg.top_k);
		if (!ret) {
			atomic64_add(batch.n_tokens, &m->tokens);
			atomic64_inc(&m->forwards);
			if (live > atomic_read(&m->batch_max))
				atomic_set(&m->batch_max, live);
		}
	}

	/*
	 * Ending the last request of the batcher's last session frees the
	 * batcher: collect the requests to end first, touch @b no more after.
	 */
	spin_lock(&sc->queue_lock);
	for (i = b->nr; i-- > 0;) {
		struct colibri_req *r = b->reqs[i];

		if (b->take[i] && !(dropped & BIT_ULL(i))) {
			/* (-EINTR: every request was abandoned; none is live.) */
			if (ret == -EINTR && !colibri_req_abandoned(r)) {
				list_add(&r->node, &sc->queue);	/* run it again */
				continue;
			} else if (ret == -EINTR) {
				r->ret = colibri_req_abandon_ret(r);
			} else if (ret) {
				r->ret = ret;
			} else if (r->ran < r->batch.n_tokens) {
				list_add(&r->node, &sc->queue);	/* the rest of its piece */
				continue;
			}
		}
		ended[n_end++] = r;
	}
	b->nr = 0;
	spin_unlock(&sc->queue_lock);
	while (n_end)
		colibri_req_end(ended[--n_end]);
}

static int colibri_sched_thread(void *data)
{
	struct colibri_sched *sc = data;

	while (!kthread_should_stop()) {
		struct colibri_batcher *b = NULL;

		wait_event_interruptible(sc->wq,
					 !list_empty_careful(&sc->queue) ||
					 kthread_should_stop());
		spin_lock(&sc->queue_lock);
		if (!list_empty(&sc->queue))
			b = colibri_pick(sc);
		spin_unlock(&sc->queue_lock);
		if (!b)
			continue;

		colibri_sched_pass(sc, b);
		cond_resched();
	}

	/*
	 * Stopping: fail whatever is still queued (nobody can be waiting on
	 * an unloading module, but be exact anyway).
	 */
	spin_lock(&sc->queue_lock);
	while (!list_empty(&sc->queue)) {
		struct colibri_req *req = list_first_entry(&sc->queue,
							   struct colibri_req, node);

		list_del_init(&req->node);
		spin_unlock(&sc->queue_lock);
		req->ret = -ESHUTDOWN;
		colibri_req_end(req);
		spin_lock(&sc->queue_lock);
	}
	spin_unlock(&sc->queue_lock);
	return 0;
}

/**
 * colibri_sched_wait() - wait for a queued request.
 * @req: a request queued with colibri_sched_queue(); the caller keeps its
 *	own reference.
 *
 * Sleeps interruptibly.  On a signal the request is marked cancelled and
 * -EINTR returned while the scheduler may still hold it: the caller must
 * wait for ->done before it reuses the session's buffers.
 *
 * Return: the request's result (token >= 0, 0, or -errno), or -EINTR.
 */
int colibri_sched_wait(struct colibri_req *req)
{
	if (colibri_wait_done(&req->done)) {
		WRITE_ONCE(req->cancelled, true);
		return -EINTR;
	}
	return req->ret;
}

/**
 * colibri_sched_queue() - queue a request without waiting for it.
 * @sc: the scheduler.
 * @req: a request; the caller keeps its own reference.
 *
 * The scheduler takes its own reference.  When the request is finished
 * (run, failed, cancelled or shut down), ->ret holds the result, ->done is
 * completed and ->end, if set, is called once from the scheduler thread
 * (or from colibri_sched_cancel()); it must not sleep for long.
 */
void colibri_sched_queue(struct colibri_sched *sc, struct colibri_req *req)
{
	kref_get(&req->ref);		/* the scheduler's reference */
	req->queued_ns = ktime_get_ns();
	trace_colibri_req_queued(req->sess->id, req->batch.n_tokens);
	spin_lock(&sc->queue_lock);
	list_add_tail(&req->node, &sc->queue);
	spin_unlock(&sc->queue_lock);
	wake_up(&sc->wq);
}

/**
 * colibri_sched_cancel() - take back a queued or running request.
 * @sc: the scheduler it was queued to.
 * @req: a request queued with colibri_sched_queue(); the caller holds a
 *	reference.
 *
 * A request still in the queue is finished at once with -ECANCELED (->end
 * is called from here); a running one stops at the next step boundary
 * with -EINTR.  A finished request is left alone.  Does not sleep.
 */
void colibri_sched_cancel(struct colibri_sched *sc, struct colibri_req *req)
{
	bool queued;

	WRITE_ONCE(req->cancelled, true);
	spin_lock(&sc->queue_lock);
	queued = !list_empty(&req->node);
	if (queued)
		list_del_init(&req->node);
	spin_unlock(&sc->queue_lock);
	if (queued) {
		req->ret = -ECANCELED;
		colibri_req_end(req);
	}
}

/**
 * colibri_sched_purge() - end a revoked session's request still queued.
 * @sc: the scheduler.
 * @s: the session, revoked.
 *
 * A session has at most one request made at a time; if it is queued it
 * ends now with -ENODEV.  One in a pass is dropped at the end of it (see
 * colibri_req_abandoned()).
 */
static void colibri_sched_purge(struct colibri_sched *sc, struct colibri_session *s)
{
	struct colibri_req *r, *found = NULL;

	spin_lock(&sc->queue_lock);
	list_for_each_entry(r, &sc->queue, node) {
		if (r->sess == s) {
			list_del_init(&r->node);
			found = r;
			break;
		}
	}
	spin_unlock(&sc->queue_lock);
	if (found) {
		found->ret = -ENODEV;
		colibri_req_end(found);
	}
}

/**
 * colibri_sched_revoke() - revoke every session of a model.
 * @sc: the scheduler.
 * @m: a model being unloaded (->dying: no session is added any more).
 *
 * Each session says -ENODEV to its SUBMITs from now on; a request of it
 * still queued ends now with -ENODEV, one in a pass at the end of that
 * pass.  Its memory and its model reference go at once if no request
 * holds it, else when the last one ends.
 */
void colibri_sched_revoke(struct colibri_sched *sc, struct colibri_model *m)
{
	struct colibri_session *s;

	while ((s = colibri_session_get_live(m))) {
		colibri_session_revoke(s);
		colibri_sched_purge(sc, s);
		colibri_session_revoked_idle(s);
		colibri_session_put(s);
	}
}

/* The engine's experts hooks: the accelerators, on the running pass. */
static int colibri_experts_submit(struct cb_exec *ex, struct cb_expert_task *t, int n)
{
	struct colibri_sched *sc = ex->host;

	return colibri_accel_experts_submit(&sc->accel, t, n);
}

static int colibri_experts_wait(struct cb_exec *ex, struct cb_expert_task *t, int n)
{
	struct colibri_sched *sc = ex->host;

	return colibri_accel_experts_wait(&sc->accel, t, n);
}

/*
 * The engine's weight_local hook, in a gemm chunk of the running pass (on
 * any worker: ->running is set before the pass's first parallel_for and
 * cleared after its last): the copy of the model on this CPU's node.
 */
static const void *colibri_weight_local(struct cb_exec *ex, const void *w)
{
	struct colibri_sched *sc = ex->host;

	return colibri_numa_local(sc->running->model, w);
}

/**
 * colibri_sched_start() - start the worker pool and the scheduler thread.
 *
 * Return: the scheduler (stopped with colibri_sched_stop()), or ERR_PTR().
 */
struct colibri_sched *colibri_sched_start(void)
{
	struct colibri_sched *sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	int ret;

	if (!sc)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&sc->queue_lock);
	INIT_LIST_HEAD(&sc->queue);
	init_waitqueue_head(&sc->wq);
	sc->ex = colibri_exec_start(colibri_yield, sc);
	if (IS_ERR(sc->ex)) {
		ret = PTR_ERR(sc->ex);
		goto err_free;
	}
	/* Routed experts may go to accelerators (colibri_accel.c). */
	sc->ex->experts_submit = colibri_experts_submit;
	sc->ex->experts_wait = colibri_experts_wait;
	/* Replicated weights: each node's CPUs read their copy (colibri_numa.c). */
	sc->ex->weight_local = colibri_weight_local;
	sc->task = kthread_run(colibri_sched_thread, sc, "colibri-sched");
	if (IS_ERR(sc->task)) {
		ret = PTR_ERR(sc->task);
		goto err_exec;
	}
	return sc;

err_exec:
	colibri_exec_stop(sc->ex);
err_free:
	kfree(sc);
	return ERR_PTR(ret);
}

/* Threads the engine runs on: the workers and the scheduler. */
int colibri_sched_nr_threads(const struct colibri_sched *sc)
{
	return sc->ex->nthreads;
}

void colibri_sched_stop(struct colibri_sched *sc)
{
	kthread_stop(sc->task);
	colibri_exec_stop(sc->ex);
	kfree(sc);
}
