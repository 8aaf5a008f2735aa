// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_dev.c - /dev/colibri: the misc device and its file operations
 * (the ioctls are colibri_ioctl.c's, io_uring commands colibri_uring.c's).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "colibri_internal.h"
#include "colibri.h"

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
 * colibri_submit_begin() - a submission takes its live session.
 * @cf: the file; the caller holds ->lock and the session is idle.
 * @reset: the submission asks for a reset.
 *
 * Return: 0 with the session's lock held and its sequence reset if it
 * was asked for or left half done; -ENODEV (revoked).
 */
int colibri_submit_begin(struct colibri_file *cf, bool reset)
{
	struct colibri_session *s = cf->sess;
	int ret = colibri_session_lock(s);

	if (ret)
		return ret;
	if (cf->need_reset || reset)
		colibri_session_reset(s);
	cf->need_reset = false;
	return 0;
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

int colibri_submit_validate(struct colibri_session *s, const struct colibri_submit *a)
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

static int colibri_open(struct inode *inode, struct file *file)
{
	struct colibri_file *cf = kzalloc(sizeof(*cf), GFP_KERNEL);

	if (!cf)
		return -ENOMEM;
	mutex_init(&cf->lock);
	file->private_data = cf;
	return nonseekable_open(inode, file);
}

static int colibri_release(struct inode *inode, struct file *file)
{
	struct colibri_file *cf = file->private_data;

	/* A pending uring_cmd holds the file: it cannot be pending now. */
	WARN_ON_ONCE(cf->uop);
	/*
	 * A request interrupted earlier may still run: it holds its own
	 * session reference, so dropping ours here is safe either way.
	 */
	if (cf->sess) {
		if (cf->sess->inflight)
			colibri_req_put(cf->sess->inflight);
		colibri_session_put(cf->sess);
	}
	mutex_destroy(&cf->lock);
	kfree(cf);
	return 0;
}

static const struct file_operations colibri_fops = {
	.owner		= THIS_MODULE,
	.open		= colibri_open,
	.release	= colibri_release,
	.unlocked_ioctl	= colibri_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.uring_cmd	= colibri_uring_cmd,
};

static struct miscdevice colibri_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= COLIBRI_NAME,
	.fops	= &colibri_fops,
	.mode	= 0666,
};

int colibri_dev_register(void)
{
	int ret = misc_register(&colibri_misc);

	if (ret)
		pr_err("cannot register /dev/%s: %d\n", COLIBRI_NAME, ret);
	return ret;
}

void colibri_dev_unregister(void)
{
	misc_deregister(&colibri_misc);
}
