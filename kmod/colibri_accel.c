// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_accel.c - routed experts on accelerators (colibri_accel.h).
 *
 * A binding is one (accelerator, published model) pair: the model's
 * weights and an activation staging buffer ("io"), both as dma-bufs, a
 * fixed table of jobs whose rows live in io, and counters in sysfs
 * (models/NAME/accel/ACCEL/).  Bindings exist exactly while both the
 * accelerator is registered and the model is published; both transitions
 * happen under the registry's colibri_models_publish_lock: the registry
 * tells colibri_accel_model_added()/_gone() (its observer hook,
 * colibri_accel_init()), accelerators register under it.
 *
 * The engine hands a MoE layer's experts to the host (struct
 * cb_expert_task).  On the scheduler thread, experts_submit() offers each
 * task to the model's bindings in turn, copying its input rows into free
 * rows of that binding's staging first; the engine runs the rest on the CPU
 * meanwhile; experts_wait() then sleeps until every offered job completed
 * or accel_timeout_ms passed, copies the rows of the successful ones into
 * the engine and gives the others back to the CPU.  Accelerators never see
 * engine memory, so a late or failed job cannot disturb anything: a job
 * whose result nobody waits for any more is "abandoned" and only goes back
 * to the free list when the accelerator completes it.
 *
 * Job states, under the binding's ->lock:
 *   FREE -> RUNNING (taken by submit) -> DONE (completed) -> FREE (consumed)
 *   RUNNING -> ABANDONED (timed out, pass aborted) -> FREE (completed late)
 * ->outstanding counts RUNNING + ABANDONED: the jobs in the driver's hands.
 * A job that is not FREE owns its rows of the staging buffer.
 *
 * Locks: colibri_models_publish_lock (a mutex) serialises registration,
 * binding and unbinding with model publication; it may be held while a driver finishes
 * its jobs.  The scheduler never takes it: it offers jobs under
 * colibri_accel_offer_lock, which guards the model's list of bindings and
 * is held only for one layer's offers, so a slow driver being unbound never
 * stalls inference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/dma-buf.h>
#include <linux/jiffies.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/wait.h>
#include <asm/fpu/api.h>

#include "colibri_internal.h"
#include "colibri_accel.h"
#include "colibri_trace.h"

/* Each model's ->bindings list, and the offering of jobs to them. */
static DEFINE_MUTEX(colibri_accel_offer_lock);
/*
 * Registered accelerators and every binding are protected by the model
 * registry's colibri_models_publish_lock: bindings come and go with both.
 */
static LIST_HEAD(colibri_accels);
/* Woken by every completion: pass waiters and unregister/unbind waiters. */
static DECLARE_WAIT_QUEUE_HEAD(colibri_accel_wq);

/* How long unbinding waits for a driver before it says so, once. */
#define COLIBRI_ACCEL_WARN_MS	10000

enum colibri_job_state {
	COLIBRI_JOB_FREE,
	COLIBRI_JOB_RUNNING,
	COLIBRI_JOB_DONE,
	COLIBRI_JOB_ABANDONED,
};

struct colibri_binding;

struct colibri_bjob {
	struct colibri_expert_job job;	/* the driver's view */
	struct colibri_binding *b;
	int state;			/* enum colibri_job_state; b->lock */
	int status;			/* the completion's; b->lock */
	u32 row;			/* its first staging row, unless FREE */
	u64 submit_ns;			/* ktime_get_ns() when offered */
};

struct colibri_binding {
	struct kobject kobj;		/* models/NAME/accel/ACCEL; lifetime */
	struct list_head model_node;	/* in model->bindings */
	struct list_head acc_node;	/* in the accelerator's list */
	struct colibri_accel *acc;
	struct colibri_model *model;	/* ->am.weights holds it */
	struct colibri_accel_model am;	/* the driver's view */
	struct colibri_buf io;		/* f32 rows: [n_rows] in, then [n_rows] out */
	u64 row_bytes;			/* hidden * 4 */
	u32 n_rows;
	unsigned long *rows_used;	/* bitmap; ->lock */
	bool added;			/* kobj is in sysfs */
	spinlock_t lock;		/* job states, rows_used */
	u32 n_jobs;
	struct colibri_bjob *jobs;
	atomic_t outstanding;		/* RUNNING + ABANDONED */
	atomic64_t done, failed, timeouts, refused;
};

/* colibri's state of one registered accelerator (acc->priv). */
struct colibri_accel_priv {
	struct list_head bindings;	/* struct colibri_binding */
};

/* --- sysfs ------------------------------------------------------------------- */

#define to_binding(k) container_of(k, struct colibri_binding, kobj)

#define COLIBRI_BINDING_ATTR(_name, _expr)					\
static ssize_t _name##_show(struct kobject *k, struct kobj_attribute *a,	\
			    char *buf)						\
{										\
	struct colibri_binding *b = to_binding(k);				\
										\
	return sysfs_emit(buf, "%lld\n", (long long)(_expr));			\
}										\
static struct kobj_attribute colibri_battr_##_name = __ATTR_RO(_name)

COLIBRI_BINDING_ATTR(jobs, atomic64_read(&b->done));
COLIBRI_BINDING_ATTR(failed, atomic64_read(&b->failed));
COLIBRI_BINDING_ATTR(timeouts, atomic64_read(&b->timeouts));
COLIBRI_BINDING_ATTR(refused, atomic64_read(&b->refused));
COLIBRI_BINDING_ATTR(inflight, atomic_read(&b->outstanding));
COLIBRI_BINDING_ATTR(io_bytes, b->io.size);

static struct attribute *colibri_binding_attrs[] = {
	&colibri_battr_jobs.attr,
	&colibri_battr_failed.attr,
	&colibri_battr_timeouts.attr,
	&colibri_battr_refused.attr,
	&colibri_battr_inflight.attr,
	&colibri_battr_io_bytes.attr,
	NULL,
};
ATTRIBUTE_GROUPS(colibri_binding);

static void colibri_binding_release(struct kobject *kobj)
{
	struct colibri_binding *b = to_binding(kobj);

	colibri_buf_free(&b->io);
	bitmap_free(b->rows_used);
	kfree(b->jobs);
	kfree(b);
}

static const struct kobj_type colibri_binding_ktype = {
	.release = colibri_binding_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = colibri_binding_groups,
};

/* --- binding ----------------------------------------------------------------- */

/* Under j->b->lock: back to the free list, its rows with it. */
static void colibri_job_free_locked(struct colibri_bjob *j)
{
	j->state = COLIBRI_JOB_FREE;
	bitmap_clear(j->b->rows_used, j->row, j->job.n_tokens);
}

static void colibri_accel_tensor(struct colibri_accel_tensor *at, const struct cb_tensor *t,
				 const struct colibri_model *m)
{
	at->offset = (const u8 *)t->data - (const u8 *)m->mem.vaddr;
	at->dtype = t->dtype;
	at->rows = t->rows;
	at->cols = t->cols;
	at->bytes = cb_dtype_row_bytes(t->dtype, t->cols) * t->rows;
}

/* Caller holds colibri_models_publish_lock; @m is published. */
static void colibri_bind(struct colibri_accel *acc, struct colibri_model *m)
{
	struct colibri_accel_priv *ap = acc->priv;
	const struct cb_model_config *c = &m->cfg;
	struct colibri_binding *b;
	u32 rows = colibri_max_batch_tokens, i;
	int ret = -ENOMEM;

	if (!c->n_experts || !m->accel_kobj)
		return;		/* dense: nothing to offload */
	if (acc->max_tokens)
		rows = min(rows, acc->max_tokens);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		goto fail;
	kobject_init(&b->kobj, &colibri_binding_ktype);
	spin_lock_init(&b->lock);
	b->acc = acc;
	b->model = m;
	/*
	 * A layer of a pass has at most rows * top_k (token, expert) rows in
	 * all; room for two layers' worth: one running while the jobs of an
	 * earlier one, abandoned to a late driver, still hold theirs.
	 */
	b->n_rows = 2 * rows * c->top_k;
	b->n_jobs = min(2 * c->n_experts, b->n_rows);
	b->row_bytes = (u64)c->hidden * sizeof(float);
	b->jobs = kcalloc(b->n_jobs, sizeof(*b->jobs), GFP_KERNEL);
	b->rows_used = bitmap_zalloc(b->n_rows, GFP_KERNEL);
	if (!b->jobs || !b->rows_used)
		goto put;
	ret = colibri_buf_alloc(&b->io, 2 * b->row_bytes * b->n_rows, false);
	if (ret)
		goto put;
	for (i = 0; i < b->n_jobs; i++) {
		b->jobs[i].b = b;
		b->jobs[i].job.model = &b->am;
		INIT_LIST_HEAD(&b->jobs[i].job.node);
	}

	b->am.name = m->name;
	b->am.io_bytes = b->io.size;
	b->am.hidden = c->hidden;
	b->am.expert_ffn = c->expert_ffn;
	b->am.n_layers = c->n_layers;
	b->am.n_experts = c->n_experts;
	b->am.top_k = c->top_k;
	b->am.max_tokens = rows;
	b->am.cpu_isa_level = colibri_caps.isa_level;

	ret = kobject_add(&b->kobj, m->accel_kobj, "%s", acc->name);
	if (ret)
		goto put;
	b->added = true;
	b->am.weights = colibri_dmabuf_export(&m->mem, &m->kobj, m->name, false);
	if (IS_ERR(b->am.weights)) {
		ret = PTR_ERR(b->am.weights);
		b->am.weights = NULL;
		goto put;
	}
	b->am.io = colibri_dmabuf_export(&b->io, &b->kobj, acc->name, true);
	if (IS_ERR(b->am.io)) {
		ret = PTR_ERR(b->am.io);
		b->am.io = NULL;
		goto put;
	}
	ret = acc->ops->bind(acc, &b->am);
	if (ret)
		goto put;
	mutex_lock(&colibri_accel_offer_lock);
	list_add_tail(&b->model_node, &m->bindings);
	mutex_unlock(&colibri_accel_offer_lock);
	list_add_tail(&b->acc_node, &ap->bindings);
	pr_info("model %s bound to accelerator %s (%llu bytes of staging)\n",
		m->name, acc->name, b->io.size);
	return;

put:
	if (b->am.io)
		dma_buf_put(b->am.io);
	if (b->am.weights)
		dma_buf_put(b->am.weights);
	if (b->added)
		kobject_del(&b->kobj);
	kobject_put(&b->kobj);
fail:
	pr_warn_ratelimited("model %s: accelerator %s not bound (%d): it runs on the CPU\n",
			    m->name, acc->name, ret);
}

static bool colibri_binding_idle(struct colibri_binding *b)
{
	return !atomic_read(&b->outstanding);
}

/*
 * Caller holds colibri_models_publish_lock.  Once @b is off the model's list no new
 * job reaches the driver; wait for it to complete what it holds, then
 * unbind it.  A pass may still hold references to @b (and read its rows):
 * the last put frees.
 */
static void colibri_unbind(struct colibri_binding *b)
{
	struct colibri_accel *acc = b->acc;

	mutex_lock(&colibri_accel_offer_lock);
	list_del(&b->model_node);
	mutex_unlock(&colibri_accel_offer_lock);
	list_del(&b->acc_node);
	if (!wait_event_timeout(colibri_accel_wq, colibri_binding_idle(b),
				msecs_to_jiffies(COLIBRI_ACCEL_WARN_MS))) {
		pr_warn("accelerator %s still holds %d jobs of model %s; waiting\n",
			acc->name, atomic_read(&b->outstanding), b->model->name);
		wait_event(colibri_accel_wq, colibri_binding_idle(b));
	}
	/* The last completer may still be inside b->lock: let it leave. */
	spin_lock_irq(&b->lock);
	spin_unlock_irq(&b->lock);

	acc->ops->unbind(acc, &b->am);
	dma_buf_put(b->am.io);
	dma_buf_put(b->am.weights);
	kobject_del(&b->kobj);
	kobject_put(&b->kobj);
}

/**
 * colibri_accel_model_added() - bind a just-published model.
 * @m: the model.
 *
 * Caller holds colibri_models_publish_lock (and published @m under it).
 */
static void colibri_accel_model_added(struct colibri_model *m)
{
	struct colibri_accel *acc;

	lockdep_assert_held(&colibri_models_publish_lock);
	m->accel_kobj = kobject_create_and_add("accel", &m->kobj);
	if (!m->accel_kobj)
		return;		/* no sysfs directory: CPU only */
	list_for_each_entry(acc, &colibri_accels, node)
		colibri_bind(acc, m);
}

/**
 * colibri_accel_model_gone() - unbind a model being unpublished.
 * @m: the model.
 *
 * Caller holds colibri_models_publish_lock.  Waits for the accelerators to finish
 * the jobs of @m they hold.
 */
static void colibri_accel_model_gone(struct colibri_model *m)
{
	struct colibri_binding *b, *tmp;

	lockdep_assert_held(&colibri_models_publish_lock);
	list_for_each_entry_safe(b, tmp, &m->bindings, model_node)
		colibri_unbind(b);
	kobject_put(m->accel_kobj);
	m->accel_kobj = NULL;
}

/* --- registration ------------------------------------------------------------ */

static struct colibri_model_observer colibri_accel_observer = {
	.added = colibri_accel_model_added,
	.gone = colibri_accel_model_gone,
};

/* Module load: bind every model published from now on. */
void colibri_accel_init(void)
{
	colibri_models_observe(&colibri_accel_observer);
}

/* Module exit, once every model is retired. */
void colibri_accel_exit(void)
{
	colibri_models_unobserve(&colibri_accel_observer);
}

static bool colibri_accel_name_ok(const char *name)
{
	size_t i, n;

	if (!name)
		return false;
	n = strnlen(name, 32);
	if (!n || n == 32)
		return false;
	for (i = 0; i < n; i++)
		if (!islower(name[i]) && !isdigit(name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

/**
 * colibri_accel_register() - make an accelerator available to colibri.
 * @acc: the driver's; ->name, ->owner and ->ops (all three callbacks) set.
 *
 * Binds every published MoE model to @acc (calling ->bind() for each,
 * before this returns); models loaded later are bound as they come.  A
 * model whose bind fails stays on the CPU for @acc.
 * Context: process, may sleep.
 * Return: 0, -EINVAL (bad name or ops), -EEXIST (name taken) or -ENOMEM.
 */
int colibri_accel_register(struct colibri_accel *acc)
{
	struct colibri_accel_priv *ap;
	struct colibri_model **ms;
	struct colibri_accel *a;
	unsigned int i, n;
	int ret = 0;

	if (!acc || !colibri_accel_name_ok(acc->name) || !acc->ops ||
	    !acc->ops->bind || !acc->ops->unbind || !acc->ops->submit)
		return -EINVAL;
	ap = kzalloc(sizeof(*ap), GFP_KERNEL);
	if (!ap)
		return -ENOMEM;
	INIT_LIST_HEAD(&ap->bindings);

	mutex_lock(&colibri_models_publish_lock);
	list_for_each_entry(a, &colibri_accels, node) {
		if (!strcmp(a->name, acc->name)) {
			ret = -EEXIST;
			goto out;
		}
	}
	acc->priv = ap;
	list_add_tail(&acc->node, &colibri_accels);
	ms = colibri_models_snapshot(&n);
	for (i = 0; i < n; i++) {
		colibri_bind(acc, ms[i]);
		colibri_model_put(ms[i]);
	}
	kfree(ms);
	pr_info("accelerator %s registered\n", acc->name);
out:
	mutex_unlock(&colibri_models_publish_lock);
	if (ret)
		kfree(ap);
	return ret;
}
EXPORT_SYMBOL_GPL(colibri_accel_register);

/**
 * colibri_accel_unregister() - stop using an accelerator.
 * @acc: a registered accelerator.
 *
 * No job is offered to @acc once this has begun.  Waits until @acc has
 * completed every job it took (keep completing them), calls ->unbind()
 * for each model and returns; colibri never calls @acc again.  Jobs that
 * were waiting for @acc run on the CPU.
 * Context: process, may sleep.
 */
void colibri_accel_unregister(struct colibri_accel *acc)
{
	struct colibri_accel_priv *ap = acc->priv;
	struct colibri_binding *b, *tmp;

	mutex_lock(&colibri_models_publish_lock);
	list_del(&acc->node);
	list_for_each_entry_safe(b, tmp, &ap->bindings, acc_node)
		colibri_unbind(b);
	mutex_unlock(&colibri_models_publish_lock);
	acc->priv = NULL;
	kfree(ap);
	pr_info("accelerator %s unregistered\n", acc->name);
}
EXPORT_SYMBOL_GPL(colibri_accel_unregister);

/**
 * colibri_accel_complete() - a driver finished a job.
 * @job: a job it took in ->submit().
 * @status: 0 when its output rows are written; -errno when they are not
 *	(the CPU then runs the expert).
 *
 * The driver must not touch @job afterwards.
 * Context: any (takes a spinlock with interrupts disabled).
 */
void colibri_accel_complete(struct colibri_expert_job *job, int status)
{
	struct colibri_bjob *j = container_of(job, struct colibri_bjob, job);
	struct colibri_binding *b = j->b;
	unsigned long flags;

	/* Before the job is given back: its fields are still the driver's. */
	trace_colibri_accel_job(b->acc->name, job->layer, job->expert, job->n_tokens, status,
				ktime_get_ns() - j->submit_ns);
	spin_lock_irqsave(&b->lock, flags);
	if (j->state == COLIBRI_JOB_RUNNING) {
		j->state = COLIBRI_JOB_DONE;
		j->status = status;
	} else if (!WARN_ON_ONCE(j->state != COLIBRI_JOB_ABANDONED)) {
		colibri_job_free_locked(j);	/* nobody waits for it any more */
	}
	atomic_dec(&b->outstanding);
	spin_unlock_irqrestore(&b->lock, flags);
	wake_up_all(&colibri_accel_wq);
}
EXPORT_SYMBOL_GPL(colibri_accel_complete);

/* --- the scheduler's side ---------------------------------------------------- */

/* Called by the scheduler thread around each forward pass of @m. */
void colibri_accel_pass_begin(struct colibri_accel_pass *pass, struct colibri_model *m)
{
	pass->m = m;
	pass->n = 0;
}

/* A free job of @b with @n staging rows, now RUNNING, or NULL. */
static struct colibri_bjob *colibri_job_get(struct colibri_binding *b, u32 n)
{
	struct colibri_bjob *j = NULL;
	unsigned long row;
	u32 i;

	spin_lock_irq(&b->lock);
	for (i = 0; i < b->n_jobs; i++) {
		if (b->jobs[i].state != COLIBRI_JOB_FREE)
			continue;
		row = bitmap_find_next_zero_area(b->rows_used, b->n_rows, 0, n, 0);
		if (row >= b->n_rows)
			break;
		bitmap_set(b->rows_used, row, n);
		j = &b->jobs[i];
		j->state = COLIBRI_JOB_RUNNING;
		j->status = 0;
		j->row = row;
		j->job.n_tokens = n;
		j->job.in_offset = row * b->row_bytes;
		j->job.out_offset = (b->n_rows + row) * b->row_bytes;
		break;
	}
	spin_unlock_irq(&b->lock);
	return j;
}

/*
 * Lets go of the pass's job @i: a result not consumed is dropped, a job the
 * driver still runs is abandoned to it.  Drops the pass's reference on the
 * binding.  Process context.
 */
static void colibri_job_release(struct colibri_accel_pass *pass, int i)
{
	struct colibri_bjob *j = pass->job[i];
	struct colibri_binding *b;

	if (!j)
		return;
	b = j->b;
	spin_lock_irq(&b->lock);
	if (j->state == COLIBRI_JOB_RUNNING)
		j->state = COLIBRI_JOB_ABANDONED;
	else if (j->state == COLIBRI_JOB_DONE)
		colibri_job_free_locked(j);
	spin_unlock_irq(&b->lock);
	pass->job[i] = NULL;
	kobject_put(&b->kobj);
}

/* The pass is over (finished or aborted): nothing of it stays taken. */
void colibri_accel_pass_end(struct colibri_accel_pass *pass)
{
	int i;

	for (i = 0; i < pass->n; i++)
		colibri_job_release(pass, i);
	pass->n = 0;
	pass->m = NULL;
}

/*
 * Offers task @t to @b.  Return: the job it took, or NULL (no room, too
 * many rows, or refused).
 */
static struct colibri_bjob *colibri_offer(struct colibri_binding *b, const struct cb_expert_task *t)
{
	const struct cb_expert_weights *w = t->w;
	u64 row = (u64)b->am.hidden * sizeof(float);
	struct colibri_bjob *j;
	int ret;

	if (t->n_tokens > b->am.max_tokens)
		return NULL;
	j = colibri_job_get(b, t->n_tokens);
	if (!j)
		return NULL;
	j->job.layer = t->layer;
	j->job.expert = t->expert;
	colibri_accel_tensor(&j->job.gate, &w->gate, b->model);
	colibri_accel_tensor(&j->job.up, &w->up, b->model);
	colibri_accel_tensor(&j->job.down, &w->down, b->model);
	memcpy((u8 *)b->io.vaddr + j->job.in_offset, t->x, row * t->n_tokens);

	kobject_get(&b->kobj);		/* the pass's */
	atomic_inc(&b->outstanding);
	j->submit_ns = ktime_get_ns();
	ret = b->acc->ops->submit(b->acc, &j->job);
	if (!ret)
		return j;
	/* Refused: it never was the driver's. */
	atomic_dec(&b->outstanding);
	spin_lock_irq(&b->lock);
	colibri_job_free_locked(j);
	spin_unlock_irq(&b->lock);
	kobject_put(&b->kobj);
	atomic64_inc(&b->refused);
	return NULL;
}

/**
 * colibri_accel_experts_submit() - the engine's experts_submit hook.
 * @pass: the scheduler's running pass.
 * @t: the layer's tasks.
 * @n: how many.
 *
 * Runs on the scheduler thread inside its FPU section; leaves it only when
 * some accelerator is bound to the model.
 * Return: 0.
 */
int colibri_accel_experts_submit(struct colibri_accel_pass *pass, struct cb_expert_task *t, int n)
{
	struct colibri_model *m = pass->m;
	struct colibri_binding *b;
	unsigned int timeout;
	int i, cpu = n;

	pass->n = 0;
	if (!m)
		return 0;
	if (list_empty_careful(&m->bindings)) {
		atomic64_add(n, &m->experts_cpu);
		return 0;
	}
	timeout = clamp(READ_ONCE(colibri_accel_timeout_ms), 1U, 600000U);
	kernel_fpu_end();
	mutex_lock(&colibri_accel_offer_lock);
	pass->deadline = jiffies + msecs_to_jiffies(timeout);
	for (i = 0; i < n && i < CB_MAX_EXPERTS; i++) {
		struct colibri_bjob *j = NULL;

		list_for_each_entry(b, &m->bindings, model_node) {
			j = colibri_offer(b, &t[i]);
			if (j)
				break;
		}
		pass->job[i] = j;
		if (j) {
			t[i].state = CB_TASK_TAKEN;
			cpu--;
		}
	}
	pass->n = i;
	mutex_unlock(&colibri_accel_offer_lock);
	atomic64_add(cpu, &m->experts_cpu);
	kernel_fpu_begin();
	return 0;
}

static bool colibri_pass_settled(struct colibri_accel_pass *pass)
{
	int i;

	for (i = 0; i < pass->n; i++) {
		struct colibri_bjob *j = pass->job[i];

		if (j && READ_ONCE(j->state) == COLIBRI_JOB_RUNNING)
			return false;
	}
	return true;
}

/**
 * colibri_accel_experts_wait() - the engine's experts_wait hook.
 * @pass: the scheduler's running pass.
 * @t: the layer's tasks, as submitted.
 * @n: how many.
 *
 * Sleeps (outside the FPU section) until every job of the layer completed
 * or the deadline passed.  A successful job's rows are copied into the
 * engine (DONE); a failed or late one goes back to the CPU.
 * Return: 0.
 */
int colibri_accel_experts_wait(struct colibri_accel_pass *pass, struct cb_expert_task *t, int n)
{
	struct colibri_model *m = pass->m;
	long left;
	int i;

	kernel_fpu_end();
	left = (long)(pass->deadline - jiffies);
	if (left > 0)
		wait_event_timeout(colibri_accel_wq, colibri_pass_settled(pass), left);
	for (i = 0; i < pass->n && i < n; i++) {
		struct colibri_bjob *j = pass->job[i];
		struct colibri_binding *b;
		int state, status;

		if (!j)
			continue;
		b = j->b;
		spin_lock_irq(&b->lock);
		state = j->state;
		status = j->status;
		spin_unlock_irq(&b->lock);
		if (state == COLIBRI_JOB_DONE && !status) {
			memcpy(t[i].y, (u8 *)b->io.vaddr + j->job.out_offset,
			       (u64)b->am.hidden * sizeof(float) * t[i].n_tokens);
			t[i].state = CB_TASK_DONE;
			atomic64_inc(&b->done);
			atomic64_inc(&m->experts_offloaded);
		} else {
			t[i].state = CB_TASK_CPU;
			atomic64_inc(state == COLIBRI_JOB_DONE ? &b->failed : &b->timeouts);
			atomic64_inc(&m->experts_cpu);
		}
		colibri_job_release(pass, i);
	}
	pass->n = 0;
	kernel_fpu_begin();
	return 0;
}
