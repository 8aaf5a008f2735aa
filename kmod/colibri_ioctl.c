// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_ioctl.c - the ioctls of /dev/colibri: the dispatcher and one
 * handler per COLIBRI_IOC_* command.  Each handler copies its argument
 * struct in (colibri_copy_arg()), checks it, asks the part of the module
 * that owns the job (models, sessions, requests, dma-bufs) and copies the
 * answer out.  SUBMIT through io_uring is colibri_uring.c.
 *
 * User memory may fault for as long as its owner likes (a FUSE file that
 * never answers, a userfaultfd nobody serves), so no handler touches it
 * while holding a lock or a reference that anyone else waits for: not a
 * session's ->lock (revocation takes it), not a model (UNLOAD(WAIT) waits
 * for its memory to go).  The one lock held across user copies is the
 * file's own ->lock, which only this file's callers take, interruptibly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/dma-buf.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
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
	if (info.flags || info.numa_nodes ||
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
	info.numa_nodes = colibri_numa_nodes();

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
	u32 usize, numa;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_LOAD_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags & ~COLIBRI_LOAD_FLAGS_ALL ||
	    (arg.flags & COLIBRI_LOAD_FLAGS_ALL) == COLIBRI_LOAD_FLAGS_ALL ||
	    arg.reserved0 || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) < 0)
		return -EINVAL;
	numa = arg.flags & COLIBRI_LOAD_NUMA_INTERLEAVE ? COLIBRI_NUMA_INTERLEAVE :
	       arg.flags & COLIBRI_LOAD_NUMA_REPLICATE ? COLIBRI_NUMA_REPLICATE :
	       COLIBRI_NUMA_LOCAL;
	src = fget(arg.fd);
	if (!src)
		return -EBADF;
	ret = colibri_model_load(src, arg.name, numa, &m);
	fput(src);
	if (ret)
		return ret;

	strscpy_pad(arg.name, m->name, sizeof(arg.name));
	arg.bytes = colibri_numa_bytes(m);
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
		colibri_sched_revoke(cf->sched, m);
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

/*
 * GET_TOKENIZER: the section is copied out holding the section alone, not
 * the model, so a copy that faults for ever keeps no model memory pinned
 * past an UNLOAD(WAIT) (struct colibri_section).
 */
static int colibri_ioc_get_tokenizer(void __user *uarg)
{
	struct colibri_tokenizer arg;
	struct colibri_section *sec;
	struct colibri_model *m;
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
	sec = colibri_section_get(arg.flags & COLIBRI_TOKENIZER_CHAT_TEMPLATE ? m->tmpl : m->tok);
	arg.section_size = sec ? sec->size : 0;
	arg.tok_kind = m->tok_kind;
	arg.tok_flags = m->tok_flags;
	arg.bos_id = m->bos_id;
	arg.eos_id = m->eos_id;
	arg.pad_id = m->pad_id;
	colibri_model_put(m);

	ret = 0;
	if (sec && arg.buf_len >= sec->size &&
	    copy_to_user(u64_to_user_ptr(arg.buf), sec->data, sec->size))
		ret = -EFAULT;
	colibri_section_put(sec);
	if (!ret && copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg))))
		ret = -EFAULT;
	return ret;
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
 * colibri_ioc_export_dmabuf() - COLIBRI_IOC_EXPORT_DMABUF.
 * @uarg: struct colibri_export in userspace.
 *
 * The descriptor is installed only once the answer has been copied out, so
 * a bad pointer leaves neither a descriptor nor a dma-buf behind.
 * Return: 0 or -errno (see struct colibri_export).
 */
static int colibri_ioc_export_dmabuf(void __user *uarg)
{
	struct colibri_export arg;
	struct colibri_model *m;
	struct dma_buf *dmabuf;
	u32 usize;
	int ret, fd;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_EXPORT_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) <= 0)
		return -EINVAL;

	m = colibri_model_find(arg.name);
	if (!m)
		return -ENOENT;
	dmabuf = colibri_dmabuf_export(&m->mem, &m->kobj, m->name, false);
	colibri_model_put(m);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	arg.fd = fd;
	arg.bytes = dmabuf->size;
	if (copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg)))) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return -EFAULT;
	}
	fd_install(fd, dmabuf->file);
	return 0;
}

/*
 * ATTACH, under the file's lock: a new session for @arg, answered in
 * @arg.  The model's reference is dropped before the caller copies the
 * answer out: the session holds its own, which an UNLOAD(WAIT) revokes.
 */
static int colibri_attach_locked(struct colibri_file *cf, struct colibri_attach *arg)
{
	struct colibri_model *m;
	struct colibri_session *s;
	u32 ctx, batch;
	int ret;

	ret = colibri_file_drop_revoked(cf);
	if (ret)
		return ret;

	m = colibri_model_find(arg->name);
	if (!m)
		return -ENOENT;
	/* Never more context than the model's (default_context if unspecified). */
	ctx = arg->max_context ? arg->max_context :
	      min(colibri_default_context, colibri_model_context(m));
	batch = arg->max_batch ? arg->max_batch : 64;
	ret = -EINVAL;
	if (ctx > colibri_model_context(m) || batch > COLIBRI_MAX_BATCH)
		goto out_put;
	s = colibri_session_create(m, ctx, batch);
	ret = PTR_ERR_OR_ZERO(s);
	if (ret)
		goto out_put;

	arg->max_context = ctx;
	arg->max_batch = batch;
	arg->bytes = s->bytes;
	arg->vocab_size = m->cfg.vocab_size;
	arg->n_layers = m->cfg.n_layers;
	arg->top_k = m->cfg.n_experts ? m->cfg.top_k : 0;
	cf->sess = s;		/* the file owns the session's first reference */
out_put:
	colibri_model_put(m);
	return ret;
}

/*
 * The file's lock is held across the copy-out so that a failed one can
 * take the session back; nobody but this file's own callers waits on it,
 * and they wait interruptibly (or not at all: io_uring).
 */
static int colibri_ioc_attach(struct colibri_file *cf, void __user *uarg)
{
	struct colibri_attach arg;
	u32 usize;
	int ret;

	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_ATTACH_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    colibri_name_valid(arg.name, sizeof(arg.name)) <= 0)
		return -EINVAL;
	if (mutex_lock_interruptible(&cf->lock))
		return -EINTR;
	ret = colibri_attach_locked(cf, &arg);
	if (!ret && copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg)))) {
		colibri_session_put(cf->sess);
		cf->sess = NULL;
		ret = -EFAULT;
	}
	mutex_unlock(&cf->lock);
	return ret;
}

/*
 * Runs one piece of at most max_batch tokens already in s->tokens: makes
 * its request under the session's live lock, queues it and waits for it.
 * Called, and returns, with no session lock held.
 * Return: the sampled token (last piece), 0, or -errno (-ENODEV: revoked).
 */
static int colibri_submit_piece(struct colibri_file *cf, const struct colibri_submit *a,
				u32 n, u32 first_pos, bool last)
{
	struct colibri_session *s = cf->sess;
	struct colibri_req *req;
	int ret;

	ret = colibri_session_lock(s);
	if (ret)
		return ret;
	req = colibri_piece_req(s, a, n, first_pos, last);
	colibri_session_unlock(s);
	if (IS_ERR(req))
		return PTR_ERR(req);
	colibri_sched_queue(cf->sched, req);
	ret = colibri_sched_wait(req);
	if (ret == -EINTR && !completion_done(&req->done)) {
		/* Still running: the next call waits for it, then resets. */
		s->inflight = req;
		cf->need_reset = true;
		return -EINTR;
	}
	colibri_req_put(req);
	if (ret < 0)
		cf->need_reset = true;
	return ret;
}

/*
 * SUBMIT, under the file's lock, which owns the session's io buffers:
 * the tokens are copied in and the trace and logits out with no session
 * lock held, so a fault that never resolves holds up this file alone,
 * never an UNLOAD(WAIT) revoking the session or the scheduler.  A session
 * revoked meanwhile makes the submission -ENODEV, results or not.
 */
static int colibri_submit_run(struct colibri_file *cf, struct colibri_submit *a)
{
	struct colibri_session *s = cf->sess;
	u32 done = 0, n, pos;
	int ret, token = 0;

	ret = colibri_submit_begin(cf, a, true, &pos);
	if (ret)
		return ret;

	while (done < a->n_tokens) {
		n = min(a->n_tokens - done, s->max_batch);
		ret = -EFAULT;
		if (copy_from_user(s->tokens, u64_to_user_ptr(a->tokens) + done * 4ULL, n * 4ULL))
			goto fail;
		ret = colibri_submit_piece(cf, a, n, pos + done, done + n == a->n_tokens);
		if (ret < 0)
			goto fail;
		token = ret;
		done += n;
		if (a->flags & COLIBRI_SUBMIT_TRACE &&
		    copy_to_user(u64_to_user_ptr(a->trace) +
				 (u64)(done - n) * s->trace_per_token * 4, s->trace,
				 (u64)n * s->trace_per_token * 4)) {
			ret = -EFAULT;
			goto fail;
		}
	}
	ret = -EFAULT;
	if (a->n_tokens && a->flags & COLIBRI_SUBMIT_LOGITS &&
	    copy_to_user(u64_to_user_ptr(a->logits), s->logits, (u64)s->vocab * 4))
		goto fail;
	/* The answer holds only if the session still does. */
	ret = colibri_session_lock(s);
	if (ret)
		return ret;
	a->token = a->n_tokens ? token : -1;
	a->n_past = colibri_session_len(s);
	colibri_session_unlock(s);
	return 0;

fail:
	cf->need_reset |= done > 0;	/* pieces ran: start over */
	return ret;
}

static int colibri_ioc_submit(struct colibri_file *cf, void __user *uarg)
{
	struct colibri_submit arg;
	u32 usize;
	int ret;

	ret = colibri_copy_arg(&arg, sizeof(arg), COLIBRI_SUBMIT_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (mutex_lock_interruptible(&cf->lock))
		return -EINTR;
	ret = colibri_submit_run(cf, &arg);
	mutex_unlock(&cf->lock);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &arg, min_t(size_t, usize, sizeof(arg))))
		return -EFAULT;
	return 0;
}

/**
 * colibri_ioctl() - /dev/colibri's unlocked_ioctl.
 * @file: an open /dev/colibri.
 * @cmd: COLIBRI_IOC_*.
 * @arg: its argument struct in userspace.
 *
 * Return: the handler's result, -ENOTTY for a command that is not ours.
 */
long colibri_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct colibri_file *cf = file->private_data;
	void __user *uarg = (void __user *)arg;

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
		return colibri_ioc_attach(cf, uarg);
	case _IOC_NR(COLIBRI_IOC_SUBMIT):
		return colibri_ioc_submit(cf, uarg);
	default:
		return -ENOTTY;
	}
}
