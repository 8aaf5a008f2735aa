// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_dev.c - /dev/colibri: the misc device, its file operations and
 * the ioctl dispatcher.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "colibri_internal.h"
#include "colibri.h"

/*
 * Copy an extensible argument struct in.  The caller's struct starts with
 * __u32 size; @ver0 is the first published size of this struct.  This is
 * copy_struct_from_user(): smaller (down to @ver0) is zero-extended, larger
 * must have an all-zero tail, else -E2BIG, as openat2() and clone3() say.
 * A size below @ver0 or above a page is -EINVAL.
 */
int colibri_copy_arg(void *karg, size_t ksize, size_t ver0,
		     void __user *uarg, u32 *usize)
{
	if (get_user(*usize, (u32 __user *)uarg))
		return -EFAULT;
	if (*usize < ver0 || *usize > PAGE_SIZE)
		return -EINVAL;
	return copy_struct_from_user(karg, ksize, uarg, *usize);
}

static int colibri_ioc_get_info(void __user *uarg)
{
	struct colibri_info info;
	u32 usize;
	int ret;

	ret = colibri_copy_arg(&info, sizeof(info), COLIBRI_INFO_SIZE_VER0,
			       uarg, &usize);
	if (ret)
		return ret;
	if (info.flags || info.reserved0 ||
	    memchr_inv(info.reserved, 0, sizeof(info.reserved)))
		return -EINVAL;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.abi_version = COLIBRI_ABI_VERSION;
	info.isa_level = colibri_caps.isa_level;
	strscpy(info.isa_name, colibri_caps.isa_name, sizeof(info.isa_name));
	info.mem_provider = colibri_mem_provider();
	info.mem_limit = colibri_mem_limit();
	info.mem_total = colibri_mem_total();
	info.mem_used = colibri_mem_used();
	info.max_models = colibri_max_models;
	info.max_sessions = colibri_max_sessions;
	info.nr_models = colibri_models_count();
	info.nr_sessions = colibri_sessions_count();

	/* A larger caller struct keeps its (checked zero) tail. */
	if (copy_to_user(uarg, &info, min_t(size_t, usize, sizeof(info))))
		return -EFAULT;
	return 0;
}

static int colibri_ioc_load(void __user *uarg)
{
	struct colibri_load arg;
	struct colibri_model *m;
	struct file *src;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_LOAD_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) < 0)
		return -EINVAL;
	src = fget(arg.fd);
	if (!src)
		return -EBADF;
	ret = colibri_model_load(src, arg.name, &m);
	fput(src);
	if (ret)
		return ret;

	strscpy_pad(arg.name, m->name, sizeof(arg.name));
	arg.bytes = m->mem.size;
	colibri_model_put(m);
	/* The model is published; a failed copy-out only loses the report. */
	if (copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg))))
		return -EFAULT;
	return 0;
}

/*
 * UNLOAD: unpublish; with COLIBRI_UNLOAD_WAIT, revoke the model's sessions
 * and wait until they have given their memory back.  The calling file's
 * own session of that model would be revoked under it: -EDEADLK.
 */
static int colibri_ioc_unload(struct colibri_file *cf, void __user *uarg)
{
	struct colibri_model *m, *own = NULL;
	struct colibri_session *s;
	struct colibri_unload arg;
	bool wait;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_UNLOAD_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags & ~COLIBRI_UNLOAD_FLAGS_ALL ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) <= 0)
		return -EINVAL;
	wait = arg.flags & COLIBRI_UNLOAD_WAIT;
	if (wait) {
		if (mutex_lock_interruptible(&cf->lock))
			return -EINTR;
		s = cf->sess;
		if (s)
			own = colibri_session_model_get(s);
		mutex_unlock(&cf->lock);
	}
	ret = colibri_model_unload(arg.name, wait, own, &m);
	if (own)
		colibri_model_put(own);
	if (ret)
		return ret;
	if (wait) {
		colibri_sessions_revoke(m);
		ret = colibri_model_wait_sessions(m);
	}
	pr_info("model %s unloaded%s\n", m->name,
		ret ? " (its memory goes as its revoked sessions end)" : "");
	colibri_model_put(m);
	return ret;
}

static int colibri_ioc_list(void __user *uarg)
{
	struct colibri_model_entry *ents;
	struct colibri_list arg;
	u32 usize, cap, n, i;
	int ret;

	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_LIST_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    (arg.capacity && arg.entry_size < COLIBRI_MODEL_ENTRY_SIZE_VER0) ||
	    arg.entry_size > PAGE_SIZE)
		return -EINVAL;
	if (arg.capacity && !arg.entries)
		return -EFAULT;
	cap = min(arg.capacity, colibri_max_models);
	ents = kcalloc(max(cap, 1U), sizeof(*ents), GFP_KERNEL);
	if (!ents)
		return -ENOMEM;
	n = colibri_models_list(ents, cap);
	ret = 0;
	for (i = 0; i < min(n, cap) && !ret; i++) {
		void __user *dst = u64_to_user_ptr(arg.entries) + (u64)i * arg.entry_size;

		/* A larger caller entry gets its tail zeroed. */
		if (copy_to_user(dst, &ents[i], min_t(u32, arg.entry_size, sizeof(*ents))) ||
		    (arg.entry_size > sizeof(*ents) &&
		     clear_user(dst + sizeof(*ents), arg.entry_size - sizeof(*ents))))
			ret = -EFAULT;
	}
	kfree(ents);
	if (ret)
		return ret;
	arg.count = n;
	arg.entry_size = min_t(u32, arg.entry_size, sizeof(*ents));
	if (copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg))))
		return -EFAULT;
	return 0;
}

static int colibri_ioc_get_tokenizer(void __user *uarg)
{
	struct colibri_tokenizer arg;
	struct colibri_model *m;
	const void *sec;
	u64 sec_size;
	u32 usize;
	int ret;

	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_TOKENIZER_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags & ~COLIBRI_TOKENIZER_FLAGS_ALL || arg.reserved0 ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) <= 0)
		return -EINVAL;
	m = colibri_model_find(arg.name);
	if (!m)
		return -ENOENT;
	/* The sections are immutable while we hold the model. */
	if (arg.flags & COLIBRI_TOKENIZER_CHAT_TEMPLATE) {
		sec = m->tmpl;
		sec_size = m->tmpl_size;
	} else {
		sec = m->tok;
		sec_size = m->tok_size;
	}
	ret = 0;
	if (sec_size && arg.buf_len >= sec_size &&
	    copy_to_user(u64_to_user_ptr(arg.buf), sec, sec_size))
		ret = -EFAULT;
	arg.section_size = sec_size;
	arg.tok_kind = m->tok_kind;
	arg.tok_flags = m->tok_flags;
	arg.bos_id = m->bos_id;
	arg.eos_id = m->eos_id;
	arg.pad_id = m->pad_id;
	colibri_model_put(m);
	if (!ret && copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg))))
		ret = -EFAULT;
	return ret;
}

static int colibri_file_drop_revoked(struct colibri_file *cf);

static int colibri_ioc_attach(struct colibri_file *cf, void __user *uarg)
{
	struct colibri_attach arg;
	struct colibri_model *m;
	struct colibri_session *s;
	u32 usize, ctx, batch;
	int ret;

	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_ATTACH_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) <= 0)
		return -EINVAL;
	ret = colibri_file_drop_revoked(cf);
	if (ret)
		return ret;

	m = colibri_model_find(arg.name);
	if (!m)
		return -ENOENT;
	/* Never more context than the model's (default_context if unspecified). */
	ctx = arg.max_context ? arg.max_context :
	      min(colibri_default_context, colibri_model_context(m));
	batch = arg.max_batch ? arg.max_batch : 64;
	ret = -EINVAL;
	if (ctx > colibri_model_context(m) || batch > COLIBRI_MAX_BATCH)
		goto out_put;
	s = colibri_session_create(m, ctx, batch);
	ret = PTR_ERR_OR_ZERO(s);
	if (ret)
		goto out_put;

	arg.max_context = ctx;
	arg.max_batch = batch;
	arg.bytes = s->bytes;
	arg.vocab_size = m->cfg.vocab_size;
	arg.n_layers = m->cfg.n_layers;
	arg.top_k = m->cfg.n_experts ? m->cfg.top_k : 0;
	if (copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg)))) {
		colibri_session_put(s);
		ret = -EFAULT;
		goto out_put;
	}
	cf->sess = s;		/* the file owns the session's first reference */
	ret = 0;
out_put:
	colibri_model_put(m);
	return ret;
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

/*
 * ATTACH on a file: -EBUSY while it has a live session; a session revoked
 * by an UNLOAD(WAIT) is let go (once nothing of it is in flight), so the
 * file can attach again.  Caller holds cf->lock.
 */
static int colibri_file_drop_revoked(struct colibri_file *cf)
{
	struct colibri_session *s = cf->sess;
	int ret;

	if (!s)
		return 0;
	/* Cleared without ->lock by its completion: pairs with the release. */
	if (smp_load_acquire(&cf->uop))
		return -EBUSY;
	if (!colibri_session_lock(s)) {
		colibri_session_unlock(s);
		return -EBUSY;
	}
	ret = colibri_file_idle(cf, false);
	if (ret)
		return ret;
	cf->sess = NULL;
	cf->need_reset = false;
	colibri_session_put(s);
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

/*
 * Runs one piece of at most max_batch tokens already in s->tokens.  Called
 * with the session's lock held; drops it while the piece runs and takes
 * it back after (-ENODEV, not held, if the session was revoked meanwhile).
 */
static int colibri_submit_piece(struct colibri_file *cf, const struct colibri_submit *a,
				u32 n, u32 first_pos, bool last)
{
	struct colibri_session *s = cf->sess;
	struct colibri_req *req = colibri_piece_req(s, a, n, first_pos, last);
	int ret;

	if (IS_ERR(req)) {
		colibri_session_unlock(s);
		return PTR_ERR(req);
	}
	colibri_session_unlock(s);
	colibri_sched_queue(req);
	ret = colibri_sched_wait(req);
	if (ret == -EINTR && !completion_done(&req->done)) {
		/* Still running: the next call waits for it, then resets. */
		s->inflight = req;
		cf->need_reset = true;
		return -EINTR;
	}
	colibri_req_put(req);
	if (ret < 0) {
		cf->need_reset = true;
		return ret;
	}
	/* Our session's buffers hold the results: read them under its lock. */
	return colibri_session_lock(s) ?: ret;
}

static int colibri_ioc_submit(struct colibri_file *cf, void __user *uarg)
{
	struct colibri_session *s = cf->sess;
	struct colibri_submit arg;
	u32 usize, done = 0, n, pos;
	int ret, token = 0;

	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_SUBMIT_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (!s)
		return -ENOTCONN;
	/* An io_uring submission owns the session until its completion. */
	if (smp_load_acquire(&cf->uop))
		return -EBUSY;
	ret = colibri_submit_validate(s, &arg);
	if (ret)
		return ret;
	ret = colibri_file_idle(cf, true);
	if (ret)
		return ret;
	ret = colibri_submit_begin(cf, arg.flags & COLIBRI_SUBMIT_RESET);
	if (ret)
		return ret;
	/* From here on the session's lock is held but while a piece runs. */
	pos = colibri_session_len(s);
	ret = -ENOSPC;
	if ((u64)pos + arg.n_tokens > s->max_context)
		goto out_unlock;

	while (done < arg.n_tokens) {
		n = min(arg.n_tokens - done, s->max_batch);
		ret = -EFAULT;
		if (copy_from_user(s->tokens, u64_to_user_ptr(arg.tokens) + done * 4ULL,
				   n * 4ULL))
			goto out_unlock;
		ret = colibri_submit_piece(cf, &arg, n, pos + done, done + n == arg.n_tokens);
		if (ret < 0) {
			cf->need_reset |= done > 0;	/* pieces ran: start over */
			return ret;	/* not held */
		}
		if (arg.flags & COLIBRI_SUBMIT_TRACE &&
		    copy_to_user(u64_to_user_ptr(arg.trace) +
				 (u64)done * s->trace_per_token * 4, s->trace,
				 (u64)n * s->trace_per_token * 4)) {
			ret = -EFAULT;
			goto out_unlock;
		}
		token = ret;
		done += n;
	}
	ret = -EFAULT;
	if (arg.n_tokens && arg.flags & COLIBRI_SUBMIT_LOGITS &&
	    copy_to_user(u64_to_user_ptr(arg.logits), s->logits, (u64)s->vocab * 4))
		goto out_unlock;
	arg.token = arg.n_tokens ? token : -1;
	arg.n_past = colibri_session_len(s);
	colibri_session_unlock(s);
	if (copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg))))
		return -EFAULT;
	return 0;

out_unlock:
	cf->need_reset |= done > 0;
	colibri_session_unlock(s);
	return ret;
}

static long colibri_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct colibri_file *cf = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	/* Size bits are ignored on purpose: the struct's @size rules. */
	if (_IOC_TYPE(cmd) != COLIBRI_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(COLIBRI_IOC_GET_INFO):
		return colibri_ioc_get_info(uarg);
	case _IOC_NR(COLIBRI_IOC_LOAD):
		return colibri_ioc_load(uarg);
	case _IOC_NR(COLIBRI_IOC_UNLOAD):
		return colibri_ioc_unload(cf, uarg);
	case _IOC_NR(COLIBRI_IOC_LIST):
		return colibri_ioc_list(uarg);
	case _IOC_NR(COLIBRI_IOC_GET_TOKENIZER):
		return colibri_ioc_get_tokenizer(uarg);
	case _IOC_NR(COLIBRI_IOC_EXPORT_DMABUF):
		return colibri_ioc_export_dmabuf(uarg);
	case _IOC_NR(COLIBRI_IOC_ATTACH):
	case _IOC_NR(COLIBRI_IOC_SUBMIT):
		break;
	default:
		return -ENOTTY;
	}

	if (mutex_lock_interruptible(&cf->lock))
		return -EINTR;
	if (_IOC_NR(cmd) == _IOC_NR(COLIBRI_IOC_ATTACH))
		ret = colibri_ioc_attach(cf, uarg);
	else
		ret = colibri_ioc_submit(cf, uarg);
	mutex_unlock(&cf->lock);
	return ret;
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
