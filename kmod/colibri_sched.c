// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_sched.c - the scheduler kthread: owns the request queue and runs
 * the engine, one request at a time, on the worker pool.
 *
 * Callers queue a request and sleep interruptibly on its completion.  A
 * caller that gives up (signal, kill) marks the request cancelled and drops
 * its reference; the scheduler notices at the next step boundary (the
 * engine's yield hook), stops, and drops its own.  The request and the
 * session it points to live until both are done with them.
 *
 * Asynchronous submitters (io_uring, colibri_uring.c) do not sleep: they
 * queue with colibri_sched_queue() and get ->end called once, on this
 * thread, when the request is finished; colibri_sched_cancel() takes a
 * request back.  A request also stops when its ->owner task is dying:
 * Linux 6.1's io_uring never cancels the uring_cmds of an exiting task,
 * so nobody else would.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <asm/fpu/api.h>

#include "colibri_internal.h"

static struct task_struct *colibri_sched_task;
static DEFINE_SPINLOCK(colibri_queue_lock);
static LIST_HEAD(colibri_queue);		/* protected by colibri_queue_lock */
static DECLARE_WAIT_QUEUE_HEAD(colibri_sched_wq);
static struct colibri_req *colibri_current;	/* scheduler thread only */

static void colibri_req_release(struct kref *ref)
{
	struct colibri_req *req = container_of(ref, struct colibri_req, ref);

	colibri_session_put(req->sess);
	if (req->owner)
		put_task_struct(req->owner);
	kfree(req);
}

void colibri_req_put(struct colibri_req *req)
{
	kref_put(&req->ref, colibri_req_release);
}

/*
 * Nobody wants the request's result any more: its caller cancelled it, or
 * the task that owns it is dying.  Reading another task's flags and signal
 * state without its locks is a hint, and a hint is all this needs: a late
 * answer costs one more step.
 */
static bool colibri_req_abandoned(struct colibri_req *req)
{
	struct task_struct *t = req->owner;

	if (READ_ONCE(req->cancelled))
		return true;
	return t && ((READ_ONCE(t->flags) & PF_EXITING) || fatal_signal_pending(t));
}

/* Finishes a request the scheduler held: wake the caller, drop our ref. */
static void colibri_req_end(struct colibri_req *req)
{
	complete(&req->done);
	if (req->end)
		req->end(req);
	colibri_req_put(req);
}

/*
 * The engine's yield hook, called between steps on the scheduler thread,
 * which is inside an FPU section: leave it, let others run, come back.
 */
static int colibri_yield(struct cb_exec *ex)
{
	kernel_fpu_end();
	cond_resched();
	kernel_fpu_begin();
	if (colibri_req_abandoned(colibri_current))
		return -EINTR;
	if (kthread_should_stop())
		return -ESHUTDOWN;
	return 0;
}

static void colibri_sched_one(struct colibri_req *req)
{
	struct colibri_session *s = req->sess;
	struct cb_exec *ex = colibri_exec_get();
	int ret;

	if (colibri_req_abandoned(req)) {
		req->ret = -EINTR;
		return;
	}
	colibri_current = req;
	/* All engine code runs in FPU sections; see colibri_exec.c. */
	kernel_fpu_begin();
	ret = cb_engine_forward(s->eng, ex, &req->batch);
	if (!ret && req->sample)
		ret = cb_engine_sample(s->eng, s->logits, &req->sp, req->counter);
	kernel_fpu_end();
	colibri_current = NULL;
	if (ret >= 0) {
		atomic64_add(req->batch.n_tokens, &s->model->tokens);
		atomic64_inc(&s->model->forwards);
	}
	req->ret = ret;
}

static int colibri_sched_thread(void *unused)
{
	while (!kthread_should_stop()) {
		struct colibri_req *req = NULL;

		wait_event_interruptible(colibri_sched_wq,
					 !list_empty_careful(&colibri_queue) ||
					 kthread_should_stop());
		spin_lock(&colibri_queue_lock);
		if (!list_empty(&colibri_queue)) {
			req = list_first_entry(&colibri_queue, struct colibri_req, node);
			list_del_init(&req->node);
		}
		spin_unlock(&colibri_queue_lock);
		if (!req)
			continue;

		colibri_sched_one(req);
		colibri_req_end(req);
		cond_resched();
	}

	/*
	 * Stopping: fail whatever is still queued (nobody can be waiting on
	 * an unloading module, but be exact anyway).
	 */
	spin_lock(&colibri_queue_lock);
	while (!list_empty(&colibri_queue)) {
		struct colibri_req *req = list_first_entry(&colibri_queue,
							   struct colibri_req, node);

		list_del_init(&req->node);
		spin_unlock(&colibri_queue_lock);
		req->ret = -ESHUTDOWN;
		colibri_req_end(req);
		spin_lock(&colibri_queue_lock);
	}
	spin_unlock(&colibri_queue_lock);
	return 0;
}

/**
 * colibri_sched_run() - queue a request and wait for it.
 * @req: a request; the caller keeps its own reference.
 *
 * Sleeps interruptibly.  On a signal the request is marked cancelled and
 * -EINTR returned while the scheduler may still hold it: the caller must
 * wait for ->done before it reuses the session's buffers.
 *
 * Return: the request's result (token >= 0, 0, or -errno), or -EINTR.
 */
int colibri_sched_run(struct colibri_req *req)
{
	int ret;

	colibri_sched_queue(req);
	if (wait_for_completion_interruptible(&req->done)) {
		WRITE_ONCE(req->cancelled, true);
		ret = -EINTR;
	} else {
		ret = req->ret;
	}
	return ret;
}

/**
 * colibri_sched_queue() - queue a request without waiting for it.
 * @req: a request; the caller keeps its own reference.
 *
 * The scheduler takes its own reference.  When the request is finished
 * (run, failed, cancelled or shut down), ->ret holds the result, ->done is
 * completed and ->end, if set, is called once from the scheduler thread
 * (or from colibri_sched_cancel()); it must not sleep for long.
 */
void colibri_sched_queue(struct colibri_req *req)
{
	kref_get(&req->ref);		/* the scheduler's reference */
	spin_lock(&colibri_queue_lock);
	list_add_tail(&req->node, &colibri_queue);
	spin_unlock(&colibri_queue_lock);
	wake_up(&colibri_sched_wq);
}

/**
 * colibri_sched_cancel() - take back a queued or running request.
 * @req: a request queued with colibri_sched_queue(); the caller holds a
 *	reference.
 *
 * A request still in the queue is finished at once with -ECANCELED (->end
 * is called from here); a running one stops at the next step boundary
 * with -EINTR.  A finished request is left alone.  Does not sleep.
 */
void colibri_sched_cancel(struct colibri_req *req)
{
	bool queued;

	WRITE_ONCE(req->cancelled, true);
	spin_lock(&colibri_queue_lock);
	queued = !list_empty(&req->node);
	if (queued)
		list_del_init(&req->node);
	spin_unlock(&colibri_queue_lock);
	if (queued) {
		req->ret = -ECANCELED;
		colibri_req_end(req);
	}
}

int colibri_sched_start(void)
{
	int ret = colibri_exec_start(colibri_yield);

	if (ret)
		return ret;
	colibri_sched_task = kthread_run(colibri_sched_thread, NULL, "colibri-sched");
	if (IS_ERR(colibri_sched_task)) {
		ret = PTR_ERR(colibri_sched_task);
		colibri_sched_task = NULL;
		colibri_exec_stop();
		return ret;
	}
	return 0;
}

void colibri_sched_stop(void)
{
	if (colibri_sched_task)
		kthread_stop(colibri_sched_task);
	colibri_sched_task = NULL;
	colibri_exec_stop();
}
