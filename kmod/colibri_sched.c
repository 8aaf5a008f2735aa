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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched.h>
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
	kfree(req);
}

void colibri_req_put(struct colibri_req *req)
{
	kref_put(&req->ref, colibri_req_release);
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
	if (READ_ONCE(colibri_current->cancelled))
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

	if (READ_ONCE(req->cancelled)) {
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
		complete(&req->done);
		colibri_req_put(req);
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
		complete(&req->done);
		colibri_req_put(req);
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

	kref_get(&req->ref);		/* the scheduler's reference */
	spin_lock(&colibri_queue_lock);
	list_add_tail(&req->node, &colibri_queue);
	spin_unlock(&colibri_queue_lock);
	wake_up(&colibri_sched_wq);

	if (wait_for_completion_interruptible(&req->done)) {
		WRITE_ONCE(req->cancelled, true);
		ret = -EINTR;
	} else {
		ret = req->ret;
	}
	return ret;
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
