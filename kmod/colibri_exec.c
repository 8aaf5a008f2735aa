// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_exec.c - the engine's struct cb_exec in the kernel: per-CPU worker
 * kthreads that run parallel chunks inside bounded FPU sections.
 *
 * Only the scheduler thread calls parallel_for(), one job at a time.  The
 * scheduler works on the job too.  A job is open while its chunks are being
 * handed out; a worker joins it under ->lock only while it is open and has
 * a chunk left, and leaves when no chunk is left, and the caller closes the
 * job and waits for every joined worker to leave before it returns.  So no
 * worker can ever run a chunk index of one job with the function of another.
 *
 * Every sleep and wake-up here costs the caller of SUBMIT latency (under
 * QEMU TCG a wake-up of an idle vCPU can cost a host scheduler tick; see
 * docs/performance.md), so the pool avoids the ones that buy nothing: a
 * one-chunk job runs inline without touching the pool, the worker bound to
 * the CPU the scheduler is on is not woken (it could only take turns with
 * the scheduler on that CPU), and a worker that finds every chunk handed
 * out does not join (the caller would have to wait for it to leave).
 *
 * Every chunk runs between kernel_fpu_begin() and kernel_fpu_end().  A
 * thread keeps its FPU section across chunks for at most fpu_slice_us, then
 * leaves it and calls cond_resched(): preemption is never off for longer
 * than one slice plus one chunk (the engine keeps chunks small).
 *
 * The scheduler thread runs all engine code inside an FPU section (the
 * engine's serial steps between parallel jobs are compiled with SSE too);
 * it leaves the section only here, to sleep while workers finish a job or to
 * let another task run after a one-chunk job, and in the yield hook between
 * steps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <asm/fpu/api.h>

#include "colibri_internal.h"
#include "core/cb_platform.h"

struct colibri_pool {
	struct cb_exec ex;
	spinlock_t lock;		/* guards the job fields and ->open */
	/* the current job: written by the caller under ->lock while closed */
	void (*fn)(void *arg, int chunk);
	void *arg;
	int nchunks;
	bool open;		/* protected by ->lock */
	unsigned long gen;	/* protected by ->lock; bumped per job */
	atomic_t next;		/* next chunk to hand out */
	atomic_t done;		/* chunks finished */
	atomic_t active;	/* workers inside the job */
	wait_queue_head_t done_wq;
	int nr_workers;
	struct colibri_worker_slot {
		struct task_struct *task;
		unsigned int cpu;	/* the CPU it is bound to */
	} workers[];
};

/*
 * Runs chunks of the current job until none is left.  @in_fpu: the caller
 * (the scheduler) is inside an FPU section already and stays in one.
 */
static void colibri_run_chunks(struct colibri_pool *p, void (*fn)(void *, int),
			       void *arg, int nchunks, bool in_fpu)
{
	u64 slice_ns = (u64)colibri_fpu_slice_us * NSEC_PER_USEC, t0;
	int i;

	if (!in_fpu)
		kernel_fpu_begin();
	t0 = local_clock();
	while ((i = atomic_fetch_inc(&p->next)) < nchunks) {
		fn(arg, i);
		if (atomic_inc_return(&p->done) == nchunks)
			wake_up(&p->done_wq);
		if (local_clock() - t0 >= slice_ns) {
			kernel_fpu_end();
			cond_resched();
			kernel_fpu_begin();
			t0 = local_clock();
		}
	}
	if (!in_fpu)
		kernel_fpu_end();
}

static int colibri_worker(void *data)
{
	struct colibri_pool *p = data;
	unsigned long seen = 0;

	while (!kthread_should_stop()) {
		void (*fn)(void *arg, int chunk);
		void *arg;
		int nchunks;

		/* Woken by wake_up_process(): gen is bumped before the wake-up. */
		for (;;) {
			set_current_state(TASK_INTERRUPTIBLE);
			if (READ_ONCE(p->gen) != seen || kthread_should_stop())
				break;
			schedule();
		}
		__set_current_state(TASK_RUNNING);
		spin_lock(&p->lock);
		seen = p->gen;
		if (!p->open || atomic_read(&p->next) >= p->nchunks) {
			spin_unlock(&p->lock);
			continue;
		}
		fn = p->fn;
		arg = p->arg;
		nchunks = p->nchunks;
		atomic_inc(&p->active);
		spin_unlock(&p->lock);

		colibri_run_chunks(p, fn, arg, nchunks, false);
		if (atomic_dec_and_test(&p->active))
			wake_up(&p->done_wq);
		cond_resched();
	}
	return 0;
}

static void colibri_parallel_for(struct cb_exec *ex, void (*fn)(void *arg, int chunk),
				 void *arg, int nchunks)
{
	struct colibri_pool *p = container_of(ex, struct colibri_pool, ex);
	unsigned int here;
	int i;

	if (nchunks <= 0)
		return;
	if (nchunks == 1) {
		/* Nothing to share: no wake-ups, no wait; stay preemptible per chunk. */
		fn(arg, 0);
		if (need_resched()) {
			kernel_fpu_end();
			cond_resched();
			kernel_fpu_begin();
		}
		return;
	}
	spin_lock(&p->lock);
	p->fn = fn;
	p->arg = arg;
	p->nchunks = nchunks;
	atomic_set(&p->next, 0);
	atomic_set(&p->done, 0);
	p->open = true;
	p->gen++;
	spin_unlock(&p->lock);
	/* In an FPU section: preemption is off, this CPU stays ours. */
	here = smp_processor_id();
	for (i = 0; i < p->nr_workers; i++)
		if (p->workers[i].cpu != here)
			wake_up_process(p->workers[i].task);

	colibri_run_chunks(p, fn, arg, nchunks, true);

	/* Sleeping: leave the FPU section the scheduler is in. */
	kernel_fpu_end();
	wait_event(p->done_wq, atomic_read(&p->done) == nchunks);
	spin_lock(&p->lock);
	p->open = false;
	spin_unlock(&p->lock);
	wait_event(p->done_wq, !atomic_read(&p->active));
	kernel_fpu_begin();
}

static void colibri_exec_stop_pool(struct colibri_pool *p, int n)
{
	while (n--)
		kthread_stop(p->workers[n].task);
	kfree(p);
}

/**
 * colibri_exec_start() - start the worker threads.
 * @yield: the engine's yield hook.
 * @host: the scheduler, the executor's ->host.
 *
 * Return: the executor, for the scheduler thread only (stopped with
 * colibri_exec_stop()), or ERR_PTR(-ENOMEM) or the kthread's error.
 */
struct cb_exec *colibri_exec_start(int (*yield)(struct cb_exec *ex), void *host)
{
	unsigned int cpu, n = 0, want = num_online_cpus();
	struct colibri_pool *p;

	p = kzalloc(struct_size(p, workers, want), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&p->lock);
	init_waitqueue_head(&p->done_wq);
	p->ex.parallel_for = colibri_parallel_for;
	p->ex.yield = yield;
	p->ex.host = host;

	/* One worker per online CPU at load time, bound to it. */
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		if (n == want)
			break;
		t = kthread_create_on_cpu(colibri_worker, p, cpu, "colibri-w/%u");
		if (IS_ERR(t)) {
			colibri_exec_stop_pool(p, n);
			return ERR_CAST(t);
		}
		p->workers[n].task = t;
		p->workers[n++].cpu = cpu;
		wake_up_process(t);
	}
	p->nr_workers = n;
	/* The scheduler works on every job too. */
	p->ex.nthreads = n + 1;
	return &p->ex;
}

void colibri_exec_stop(struct cb_exec *ex)
{
	struct colibri_pool *p = container_of(ex, struct colibri_pool, ex);

	colibri_exec_stop_pool(p, p->nr_workers);
}
