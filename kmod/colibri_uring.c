// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_uring.c - COLIBRI_IOC_SUBMIT through io_uring (IORING_OP_URING_CMD).
 *
 * Issue, in the submitting task: read the SQE's payload once (it lives in
 * the ring shared with userspace), copy the struct colibri_submit in,
 * claim the file's session (cf->uop), copy the first piece's tokens in and
 * queue the piece to the scheduler; return -EIOCBQUEUED.  As for the
 * ioctl (colibri_ioctl.c), user memory is never touched under a lock
 * anyone else waits for: the claimed session's io buffers are the uop's.
 * The scheduler calls ->end on its own thread when the piece is finished;
 * that only schedules task work, so everything that touches user memory
 * runs again in the submitter's context (colibri_uring_tw): copy the trace
 * out, queue the next piece of a long submission, and at the end copy the
 * logits and the struct out, release the session and post the CQE.
 *
 * Ownership: a uop lives from issue to the CQE and is freed right before
 * io_uring_cmd_done(); it holds one reference on the piece in flight
 * (->req), the scheduler another.  The uring_cmd pins the file, so the file
 * (and cf->sess) outlive the uop.  Every queued piece ends exactly once,
 * through ->end, so every uop reaches io_uring_cmd_done() exactly once.
 *
 * Cancellation: 6.7+ call ->uring_cmd with IO_URING_F_CANCEL for commands
 * marked cancelable when the ring closes or the submitter exits; 6.1 has
 * no such call, and the scheduler stops the pieces of a dying ->owner
 * itself (colibri_sched.c).  Either way the piece ends early and the CQE
 * says -ECANCELED.  IORING_OP_ASYNC_CANCEL does not reach uring_cmds on
 * either kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "colibri_internal.h"
#include "colibri_compat.h"

/* One submission through io_uring, from issue to CQE. */
struct colibri_uop {
	struct io_uring_cmd *cmd;
	struct colibri_file *cf;
	struct colibri_session *sess;	/* cf->sess: set for the file's life */
	struct task_struct *owner;	/* the submitter (io_uring holds it) */
	void __user *uarg;		/* the user's struct colibri_submit */
	u32 usize;			/* ... and its size */
	struct colibri_submit arg;	/* our copy of it */
	u32 pos;			/* sequence length before the submission */
	u32 done;			/* tokens run so far */
	u32 n;				/* tokens in the piece in flight */
	spinlock_t lock;		/* orders ->req against a cancel */
	struct colibri_req *req;	/* protected by ->lock */
	bool cancelled;			/* protected by ->lock */
};

static struct colibri_uop **colibri_uop_slot(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct colibri_uop *) > sizeof(cmd->pdu));
	return (struct colibri_uop **)cmd->pdu;
}

static void colibri_uring_tw(struct io_uring_cmd *cmd, unsigned int issue_flags);

/* ->end of a piece, on the scheduler thread: back to the submitter. */
static void colibri_uring_end(struct colibri_req *req)
{
	struct colibri_uop *uop = req->end_data;

	/* The task work may free @uop at once: nothing touches it after. */
	io_uring_cmd_complete_in_task(uop->cmd, colibri_uring_tw);
}

/*
 * Hands a piece to the scheduler.  A cancel that came first (uop->req still
 * NULL) is honoured here; one that comes later finds ->req.
 */
static void colibri_uring_queue(struct colibri_uop *uop, struct colibri_req *req)
{
	struct colibri_sched *sc = uop->cf->sched;
	bool cancelled;

	req->end = colibri_uring_end;
	req->end_data = uop;
	req->owner = get_task_struct(uop->owner);
	kref_get(&req->ref);		/* ours, across the queueing below */
	spin_lock(&uop->lock);
	uop->req = req;			/* the uop's reference */
	cancelled = uop->cancelled;
	spin_unlock(&uop->lock);
	colibri_sched_queue(sc, req);
	/* From here on the piece may end and the uop be gone. */
	if (cancelled)
		colibri_sched_cancel(sc, req);
	colibri_req_put(req);
}

/*
 * Copies the next piece's tokens in (we are in the submitter's context,
 * and the uop owns the session's io buffers: no lock is held across the
 * copy) and builds its request under the session's live lock.
 * Return: 0 or -errno (-ENODEV: revoked).
 */
static int colibri_uring_next(struct colibri_uop *uop, struct colibri_req **reqp)
{
	struct colibri_session *s = uop->sess;
	const struct colibri_submit *a = &uop->arg;
	u32 n = min(a->n_tokens - uop->done, s->max_batch);
	struct colibri_req *req;
	int ret;

	if (copy_from_user(s->tokens, u64_to_user_ptr(a->tokens) + uop->done * 4ULL,
			   n * 4ULL))
		return -EFAULT;
	ret = colibri_session_lock(s);
	if (ret)
		return ret;
	req = colibri_piece_req(s, a, n, uop->pos + uop->done,
				uop->done + n == a->n_tokens);
	colibri_session_unlock(s);
	if (IS_ERR(req))
		return PTR_ERR(req);
	uop->n = n;
	*reqp = req;
	return 0;
}

/*
 * The CQE: copy the results out (unless the submitter is gone), reset the
 * sequence after a failure, release the session and complete.  The logits
 * and the struct are copied with no lock held; a session revoked by then
 * makes it -ENODEV, and nothing of its memory is touched.
 */
static void colibri_uring_finish(struct colibri_uop *uop, int ret, bool dead,
				 unsigned int issue_flags)
{
	struct io_uring_cmd *cmd = uop->cmd;
	struct colibri_file *cf = uop->cf;
	struct colibri_session *s = uop->sess;
	struct colibri_submit *a = &uop->arg;
	u32 n_past = 0;

	if (ret >= 0 && a->flags & COLIBRI_SUBMIT_LOGITS &&
	    copy_to_user(u64_to_user_ptr(a->logits), s->logits, (u64)s->vocab * 4))
		ret = -EFAULT;
	if (colibri_session_lock(s)) {
		ret = dead || ret == -ECANCELED ? -ECANCELED : -ENODEV;
	} else if (ret >= 0) {
		a->token = ret;
		n_past = colibri_session_len(s);
		a->n_past = n_past;
		colibri_session_unlock(s);
	} else {
		/* Some pieces may have run: start over, as an interrupted ioctl does. */
		colibri_session_reset(s);
		if (dead || ret == -EINTR)
			ret = -ECANCELED;
		colibri_session_unlock(s);
	}
	if (ret >= 0 && copy_to_user(uop->uarg, a, min_t(size_t, uop->usize, sizeof(*a))))
		ret = -EFAULT;
	kfree(uop);
	/* The session is free again; publish its state with it. */
	smp_store_release(&cf->uop, NULL);
	io_uring_cmd_done(cmd, ret, n_past, issue_flags);
}

/*
 * A piece ended: task work in the submitter's context (or, if it is dying,
 * in its exit path or a kworker, where user memory is off limits).
 */
static void colibri_uring_tw(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct colibri_uop *uop = *colibri_uop_slot(cmd);
	struct colibri_session *s = uop->sess;
	bool dead = colibri_ucmd_task_dead(issue_flags);
	struct colibri_req *req;
	bool cancelled;
	int ret;

	spin_lock(&uop->lock);
	req = uop->req;
	uop->req = NULL;
	cancelled = uop->cancelled;
	spin_unlock(&uop->lock);
	ret = req->ret;
	colibri_req_put(req);

	if (cancelled || dead) {
		colibri_uring_finish(uop, -ECANCELED, dead, issue_flags);
		return;
	}
	if (ret < 0)
		goto finish;
	uop->done += uop->n;
	/* The piece's trace, out of our io buffers: no lock held. */
	if (uop->arg.flags & COLIBRI_SUBMIT_TRACE &&
	    copy_to_user(u64_to_user_ptr(uop->arg.trace) +
			 (u64)(uop->done - uop->n) * s->trace_per_token * 4, s->trace,
			 (u64)uop->n * s->trace_per_token * 4)) {
		ret = -EFAULT;
		goto finish;
	}
	if (uop->done == uop->arg.n_tokens)
		goto finish;
	ret = colibri_uring_next(uop, &req);
	if (ret)
		goto finish;
	colibri_uring_queue(uop, req);
	return;
finish:
	colibri_uring_finish(uop, ret, false, issue_flags);
}

/*
 * IO_URING_F_CANCEL (6.7+): the ring is closing or the submitter exits.
 * The CQE is not posted from here: the piece must leave the scheduler
 * first (at once if queued, at its next step boundary if running), and its
 * ->end brings the task work that posts -ECANCELED.  io_uring calls this
 * again (under ->uring_lock, running task work in between) until then.
 */
static void colibri_uring_cancel(struct io_uring_cmd *cmd)
{
	struct colibri_uop *uop = *colibri_uop_slot(cmd);
	struct colibri_sched *sc = uop->cf->sched;
	struct colibri_req *req;

	spin_lock(&uop->lock);
	uop->cancelled = true;
	req = uop->req;
	if (req)
		kref_get(&req->ref);
	spin_unlock(&uop->lock);
	pr_debug("uring_cmd cancelled by io_uring (%s)\n", req ? "in flight" : "between pieces");
	/* The piece ends (now if queued, at its next step if running). */
	if (req) {
		colibri_sched_cancel(sc, req);
		colibri_req_put(req);
	}
}

/*
 * Under cf->lock: checks the submission against the session, applies a
 * reset, and claims the session's io buffers for the uop (cf->uop).
 * Return: 1 for a reset-only submission (done already, nothing claimed;
 * the caller copies the answer out), 0 once claimed, or -errno.
 */
static int colibri_uring_start(struct colibri_file *cf, struct colibri_uop *uop)
{
	struct colibri_submit *a = &uop->arg;
	int ret;

	ret = colibri_submit_begin(cf, a, false, &uop->pos);
	if (ret)
		return ret;
	uop->sess = cf->sess;
	if (!a->n_tokens) {
		a->token = -1;
		a->n_past = uop->pos;
		return 1;
	}
	WRITE_ONCE(cf->uop, uop);
	return 0;
}

/**
 * colibri_uring_cmd() - the ->uring_cmd file operation of /dev/colibri.
 * @cmd: the command; its payload is a struct colibri_uring_cmd.
 * @issue_flags: IO_URING_F_* from the io_uring core.
 *
 * Return: -EIOCBQUEUED when the submission was queued (the CQE follows),
 * 0 for a reset-only submission, or -errno (see uapi/colibri.h).
 */
int colibri_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct colibri_file *cf = cmd->file->private_data;
	const struct colibri_uring_cmd *pl;
	struct colibri_uop *uop;
	struct colibri_req *req = NULL;
	u32 op = READ_ONCE(cmd->cmd_op);
	u64 uptr;
	int ret;

	if (colibri_ucmd_is_cancel(issue_flags)) {
		colibri_uring_cancel(cmd);
		return 0;
	}
	/* The ioctl's rule: type and number decide, the size bits do not. */
	if (_IOC_TYPE(op) != COLIBRI_IOC_MAGIC || _IOC_DIR(op) != (_IOC_READ | _IOC_WRITE) ||
	    _IOC_NR(op) != _IOC_NR(COLIBRI_IOC_SUBMIT))
		return -EOPNOTSUPP;
	if (cmd->flags & IORING_URING_CMD_FIXED)
		return -EINVAL;

	/* The payload is in memory userspace may rewrite: one read each. */
	pl = colibri_ucmd_payload(cmd);
	uptr = READ_ONCE(pl->submit);
	if (READ_ONCE(pl->reserved))
		return -EINVAL;
	if (issue_flags & IO_URING_F_SQE128 &&
	    memchr_inv((const u8 *)pl + sizeof(*pl), 0, 80 - sizeof(*pl)))
		return -EINVAL;

	uop = kzalloc(sizeof(*uop), GFP_KERNEL);
	if (!uop)
		return -ENOMEM;
	spin_lock_init(&uop->lock);
	uop->cmd = cmd;
	uop->cf = cf;
	uop->owner = colibri_ucmd_task(cmd);
	uop->uarg = u64_to_user_ptr(uptr);
	ret = colibri_copy_arg(&uop->arg, sizeof(uop->arg), COLIBRI_SUBMIT_SIZE_VER0,
			       uop->uarg, &uop->usize);
	if (ret)
		goto err_free;

	/* An ATTACH or SUBMIT ioctl at work on this file: do not wait. */
	if (!mutex_trylock(&cf->lock)) {
		ret = -EBUSY;
		goto err_free;
	}
	ret = colibri_uring_start(cf, uop);
	mutex_unlock(&cf->lock);
	if (ret == 1 && copy_to_user(uop->uarg, &uop->arg,
				     min_t(size_t, uop->usize, sizeof(uop->arg))))
		ret = -EFAULT;
	if (ret)
		goto err_free;

	/* cf->uop is ours: the session's io buffers are, until the CQE. */
	ret = colibri_uring_next(uop, &req);
	if (ret) {
		/* Give the session back, as the completion does. */
		smp_store_release(&cf->uop, NULL);
		goto err_free;
	}
	*colibri_uop_slot(cmd) = uop;
	colibri_ucmd_mark_cancelable(cmd, issue_flags);
	colibri_uring_queue(uop, req);
	return -EIOCBQUEUED;

err_free:
	kfree(uop);
	return ret == 1 ? 0 : ret;
}
