// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_model.c - the model registry: load a .colibri file into pinned
 * memory, validate it in full, seal it, publish it under a name; unload;
 * sysfs under /sys/kernel/colibri/models/NAME/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/cred.h>
#include <linux/overflow.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "colibri_internal.h"
#include "arch/cb_arch.h"
#include "format/cb_format.h"

/*
 * Outer to colibri_models_lock: whoever publishes or unpublishes a model
 * holds it across the change and the observers' callbacks, so an observer
 * that takes it too (to walk the published models) sees them stand still.
 */
DEFINE_MUTEX(colibri_models_publish_lock);
static LIST_HEAD(colibri_model_observers);	/* colibri_models_publish_lock */
static DEFINE_MUTEX(colibri_models_lock);
/*
 * Held by a session giving its model reference back across the count's
 * drop and the put, so that an UNLOAD(WAIT) that saw the count reach 0
 * can wait for that put before it drops its own reference: then the
 * model's memory is gone when the UNLOAD returns, not a moment later.
 */
static DEFINE_MUTEX(colibri_session_gone_lock);
static LIST_HEAD(colibri_models);		/* protected by colibri_models_lock */
static unsigned int colibri_nr_models;		/* protected by colibri_models_lock */
static struct kobject *colibri_kobj;		/* /sys/kernel/colibri */
static struct kobject *colibri_models_kobj;	/* .../models */

/* --- observers ------------------------------------------------------------- */

/**
 * colibri_models_observe() - be told of every model published and retired.
 * @o: the observer; its callbacks run under colibri_models_publish_lock.
 *
 * A model published before the call is not announced: an observer that
 * wants those takes colibri_models_publish_lock and walks
 * colibri_models_snapshot() (colibri_accel_register() does).
 */
void colibri_models_observe(struct colibri_model_observer *o)
{
	mutex_lock(&colibri_models_publish_lock);
	list_add_tail(&o->node, &colibri_model_observers);
	mutex_unlock(&colibri_models_publish_lock);
}

void colibri_models_unobserve(struct colibri_model_observer *o)
{
	mutex_lock(&colibri_models_publish_lock);
	list_del(&o->node);
	mutex_unlock(&colibri_models_publish_lock);
}

/* Tells every observer that @m was just published (@added) or is retiring. */
static void colibri_models_notify(struct colibri_model *m, bool added)
{
	struct colibri_model_observer *o;

	lockdep_assert_held(&colibri_models_publish_lock);
	list_for_each_entry(o, &colibri_model_observers, node) {
		if (added)
			o->added(m);
		else
			o->gone(m);
	}
}

/* --- sysfs ----------------------------------------------------------------- */

#define to_model(k) container_of(k, struct colibri_model, kobj)

static ssize_t arch_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	const struct cb_arch_desc *arch = cb_arch_of(to_model(k)->cfg.arch);

	return sysfs_emit(buf, "%s\n", arch ? arch->name : "unknown");
}

#define COLIBRI_MODEL_ATTR(_name, _fmt, _expr)					\
static ssize_t _name##_show(struct kobject *k, struct kobj_attribute *a,	\
			    char *buf)						\
{										\
	struct colibri_model *m = to_model(k);					\
										\
	return sysfs_emit(buf, _fmt "\n", _expr);				\
}										\
static struct kobj_attribute colibri_attr_##_name = __ATTR_RO(_name)

COLIBRI_MODEL_ATTR(bytes, "%llu", colibri_numa_bytes(m));
COLIBRI_MODEL_ATTR(file_size, "%llu", m->file_size);
COLIBRI_MODEL_ATTR(sessions, "%d", atomic_read(&m->nr_sessions));
COLIBRI_MODEL_ATTR(tokens, "%lld", (long long)atomic64_read(&m->tokens));
COLIBRI_MODEL_ATTR(forwards, "%lld", (long long)atomic64_read(&m->forwards));
COLIBRI_MODEL_ATTR(shared_sessions, "%d", atomic_read(&m->shared_sessions));
COLIBRI_MODEL_ATTR(shared_bytes, "%lld", (long long)atomic64_read(&m->shared_bytes));
COLIBRI_MODEL_ATTR(batch_max, "%d", atomic_read(&m->batch_max));
COLIBRI_MODEL_ATTR(vocab_size, "%u", m->cfg.vocab_size);
COLIBRI_MODEL_ATTR(hidden, "%u", m->cfg.hidden);
COLIBRI_MODEL_ATTR(layers, "%u", m->cfg.n_layers);
COLIBRI_MODEL_ATTR(experts, "%u", m->cfg.n_experts);
COLIBRI_MODEL_ATTR(top_k, "%u", m->cfg.top_k);
COLIBRI_MODEL_ATTR(max_context, "%u", m->cfg.max_context);
COLIBRI_MODEL_ATTR(experts_cpu, "%lld", (long long)atomic64_read(&m->experts_cpu));
COLIBRI_MODEL_ATTR(experts_offloaded, "%lld",
		   (long long)atomic64_read(&m->experts_offloaded));
COLIBRI_MODEL_ATTR(numa, "%s", colibri_numa_name(m->numa.policy));
COLIBRI_MODEL_ATTR(numa_copies, "%u", m->numa.nr_copies);
static struct kobj_attribute colibri_attr_arch = __ATTR_RO(arch);

static ssize_t numa_pages_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return colibri_numa_pages_show(to_model(k), buf);
}

static ssize_t numa_reads_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return colibri_numa_reads_show(to_model(k), buf);
}

/*
 * session_owners: a line per attached session, "ID PID UID COMM": its id
 * (the tracepoints'), the process that attached it as the reader's pid
 * namespace and user namespace see them (0 and the overflow uid when they
 * cannot), and that process's name as it was then.  What /proc shows of
 * every process, and no more.  Past a page, a last line "+N more".
 */
static ssize_t session_owners_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct colibri_model *m = to_model(k);
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct colibri_session *s;
	unsigned int more = 0;
	int len = 0, n;

	mutex_lock(&m->sessions_lock);
	list_for_each_entry(s, &m->sessions, model_node) {
		n = more ? 0 : sysfs_emit_at(buf, len, "%llu %d %u %s\n", s->id,
					     pid_nr_ns(s->owner, ns),
					     from_kuid_munged(current_user_ns(), s->uid), s->comm);
		/* room kept for the "+N more" line */
		if (!n || len + n > PAGE_SIZE - 16) {
			more++;
			continue;
		}
		len += n;
	}
	mutex_unlock(&m->sessions_lock);
	if (more)
		len += sysfs_emit_at(buf, len, "+%u more\n", more);
	return len;
}

static struct kobj_attribute colibri_attr_session_owners = __ATTR_RO(session_owners);
static struct kobj_attribute colibri_attr_numa_pages = __ATTR_RO(numa_pages);
static struct kobj_attribute colibri_attr_numa_reads = __ATTR_RO(numa_reads);

static struct attribute *colibri_model_attrs[] = {
	&colibri_attr_arch.attr,
	&colibri_attr_bytes.attr,
	&colibri_attr_file_size.attr,
	&colibri_attr_sessions.attr,
	&colibri_attr_session_owners.attr,
	&colibri_attr_tokens.attr,
	&colibri_attr_forwards.attr,
	&colibri_attr_shared_sessions.attr,
	&colibri_attr_shared_bytes.attr,
	&colibri_attr_batch_max.attr,
	&colibri_attr_vocab_size.attr,
	&colibri_attr_hidden.attr,
	&colibri_attr_layers.attr,
	&colibri_attr_experts.attr,
	&colibri_attr_top_k.attr,
	&colibri_attr_max_context.attr,
	&colibri_attr_experts_cpu.attr,
	&colibri_attr_experts_offloaded.attr,
	&colibri_attr_numa.attr,
	&colibri_attr_numa_copies.attr,
	&colibri_attr_numa_pages.attr,
	&colibri_attr_numa_reads.attr,
	NULL,
};
ATTRIBUTE_GROUPS(colibri_model);

/* The last reference is gone: no session, no registry entry. */
static void colibri_model_release(struct kobject *kobj)
{
	struct colibri_model *m = to_model(kobj);

	colibri_numa_free(m);
	colibri_buf_free(&m->mem);
	kvfree(m->bind);
	colibri_section_put(m->tok);
	colibri_section_put(m->tmpl);
	mutex_destroy(&m->batch_lock);
	mutex_destroy(&m->sessions_lock);
	kfree(m);
}

static const struct kobj_type colibri_model_ktype = {
	.release = colibri_model_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = colibri_model_groups,
};

void colibri_model_put(struct colibri_model *m)
{
	kobject_put(&m->kobj);
}

unsigned int colibri_models_count(void)
{
	return READ_ONCE(colibri_nr_models);
}

/**
 * colibri_name_valid() - is @name an acceptable model name?
 * @name: a buffer of @len bytes from userspace.
 * @len: its size.
 *
 * Return: the name's length (1..len-1) if it is NUL-terminated inside the
 * buffer, zero-padded after the NUL and made of [A-Za-z0-9._-] not starting
 * with '.'; 0 for an empty name; -EINVAL otherwise.
 */
int colibri_name_valid(const char *name, size_t len)
{
	size_t n = strnlen(name, len), i;

	if (n == len || memchr_inv(name + n, 0, len - n))
		return -EINVAL;
	if (n && name[0] == '.')
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return -EINVAL;
	return n;
}

/* Caller holds colibri_models_lock. */
static struct colibri_model *colibri_model_lookup(const char *name)
{
	struct colibri_model *m;

	list_for_each_entry(m, &colibri_models, node)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

/**
 * colibri_model_find() - a published model, with a reference.
 * @name: its name.
 *
 * Return: the model (drop it with colibri_model_put()) or NULL.
 */
struct colibri_model *colibri_model_find(const char *name)
{
	struct colibri_model *m;

	mutex_lock(&colibri_models_lock);
	m = colibri_model_lookup(name);
	if (m)
		kobject_get(&m->kobj);
	mutex_unlock(&colibri_models_lock);
	return m;
}

/* --- loading ---------------------------------------------------------------- */

/* Reads exactly @len bytes at @pos, in bounded pieces, killable. */
static int colibri_read_full(struct file *f, void *buf, u64 len, loff_t pos)
{
	u64 done = 0;

	while (done < len) {
		size_t n = min_t(u64, len - done, SZ_8M);
		ssize_t r;

		if (fatal_signal_pending(current))
			return -EINTR;
		r = kernel_read(f, (u8 *)buf + done, n, &pos);
		if (r < 0)
			return r;
		if (!r)
			return -EIO;	/* the file shrank under us */
		done += r;
		cond_resched();
	}
	return 0;
}

/*
 * A block type's scales are all finite (the f16 exponent is not all ones):
 * a NaN or infinite scale would turn the model's output into NaN.  The
 * directory check proved dtype known and size a whole number of blocks.
 * Integer only, a few MiB of blocks at a time.
 */
static int colibri_check_scales(const struct colibri_file_tensor *t, u32 i, const u8 *p,
				char *why, size_t whylen)
{
	const struct cb_block_info *b = cb_dtype_info(t->dtype);
	u64 nb = t->size / b->block_bytes, done = 0, step = SZ_4M / b->block_bytes;
	s64 bad;

	while (done < nb) {
		u64 n = min_t(u64, nb - done, step);

		bad = cb_quant_find_bad_scale(t->dtype, p + done * b->block_bytes, n);
		if (bad >= 0) {
			snprintf(why, whylen,
				 "tensor %u (%s, layer %d, expert %d): %s block %llu has a scale that is not finite",
				 i, cb_format_role_name(t->role), (int)t->layer, (int)t->expert,
				 cb_dtype_name(t->dtype), done + (u64)bad);
			return -EINVAL;
		}
		done += n;
		cond_resched();
	}
	return 0;
}

/*
 * Every tensor's CRC32C, with the engine's portable slice-by-8 (integer only,
 * built without SSE: callable here), and every block scale finite.  The
 * kernel's crc32c() would pull in libcrc32c and the crypto API for a
 * one-time check at load.
 */
static int colibri_verify_tensors(const struct cb_format_info *info, const void *dir,
				  const void *data, char *why, size_t whylen)
{
	/* Fields are little-endian, as is the only CPU the engine runs on. */
	const struct colibri_file_tensor *t = (const void *)((const u8 *)dir + info->dir_offset);
	u32 i;
	int ret;

	for (i = 0; i < info->n_tensors; i++) {
		u64 off = t[i].offset, size = t[i].size, done = 0;
		u32 crc = 0;

		/* bounds were proven by cb_format_check_directory() */
		while (done < size) {
			u64 n = min_t(u64, size - done, SZ_4M);

			crc = cb_crc32c(crc, (const u8 *)data + off + done, n);
			done += n;
			cond_resched();
		}
		if (crc != t[i].crc32c) {
			snprintf(why, whylen,
				 "tensor %u (%s, layer %d, expert %d): checksum mismatch", i,
				 cb_format_role_name(t[i].role),
				 (int)t[i].layer, (int)t[i].expert);
			return -EINVAL;
		}
		ret = colibri_check_scales(&t[i], i, (const u8 *)data + off, why, whylen);
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

/*
 * A section of the file outside the data region (the tokenizer, the chat
 * template), read into unpinned kernel memory and checked against its
 * CRC32C from the header, so that GET_TOKENIZER can hand it to a process
 * that knows the model by name only.  @size was bounded by the validator.
 * Counted on its own (struct colibri_section), so that GET_TOKENIZER
 * copies it to user memory holding the section, not the model.
 */
static int colibri_read_section(struct file *f, u64 off, u64 size, u32 want_crc,
				const char *what, struct colibri_section **out, char *why)
{
	struct colibri_section *sec;
	u64 done = 0;
	u32 crc = 0;
	int ret;

	sec = kvmalloc(struct_size(sec, data, size), GFP_KERNEL_ACCOUNT);
	if (!sec)
		return -ENOMEM;
	kref_init(&sec->ref);
	sec->size = size;
	*out = sec;
	ret = colibri_read_full(f, sec->data, size, off);
	if (ret)
		return ret;
	while (done < size) {
		u64 n = min_t(u64, size - done, SZ_4M);

		crc = cb_crc32c(crc, sec->data + done, n);
		done += n;
		cond_resched();
	}
	if (crc != want_crc) {
		snprintf(why, CB_FORMAT_WHY_LEN, "%s section: checksum mismatch", what);
		return -EINVAL;
	}
	return 0;
}

static void colibri_section_release(struct kref *ref)
{
	kvfree(container_of(ref, struct colibri_section, ref));
}

/**
 * colibri_section_get() - a reference on a model's section.
 * @sec: the section, or NULL (a model without one).
 *
 * Return: @sec.
 */
struct colibri_section *colibri_section_get(struct colibri_section *sec)
{
	if (sec)
		kref_get(&sec->ref);
	return sec;
}

/**
 * colibri_section_put() - drop a reference taken with colibri_section_get().
 * @sec: the section, or NULL.
 */
void colibri_section_put(struct colibri_section *sec)
{
	if (sec)
		kref_put(&sec->ref, colibri_section_release);
}

static int colibri_read_tokenizer(struct file *f, const struct cb_format_info *info,
				  struct colibri_model *m, char *why)
{
	int ret = 0;

	m->tok_kind = info->tok_kind;
	m->tok_flags = info->tok_flags;
	m->bos_id = info->bos_id;
	m->eos_id = info->eos_id;
	m->pad_id = info->pad_id;
	if (info->tok_kind != COLIBRI_TOK_NONE) {
		ret = colibri_read_section(f, info->tok_offset, info->tok_size,
					   info->tok_crc32c, "tokenizer", &m->tok, why);
	}
	if (!ret && info->tmpl_size) {
		ret = colibri_read_section(f, info->tmpl_offset, info->tmpl_size,
					   info->tmpl_crc32c, "chat template", &m->tmpl, why);
	}
	return ret;
}

/* Validates @f and builds an unpublished model; logs why on failure. */
static int colibri_model_build(struct file *f, struct colibri_model *m, u32 numa, char *why)
{
	struct cb_format_info *info;
	u64 file_size = i_size_read(file_inode(f));
	void *hdr = NULL;
	u64 bind_size;
	int ret;

	info = kzalloc(sizeof(*info), GFP_KERNEL);
	hdr = kvmalloc(COLIBRI_FILE_HEADER_SIZE, GFP_KERNEL);
	ret = -ENOMEM;
	if (!info || !hdr)
		goto out;

	/* 1. The header, then header + directory, before anything else. */
	ret = -EINVAL;
	if (file_size < COLIBRI_FILE_HEADER_SIZE) {
		snprintf(why, CB_FORMAT_WHY_LEN, "file is %llu bytes, shorter than a header",
			 file_size);
		goto out;
	}
	ret = colibri_read_full(f, hdr, COLIBRI_FILE_HEADER_SIZE, 0);
	if (ret)
		goto out;
	ret = cb_format_check_header(hdr, COLIBRI_FILE_HEADER_SIZE, file_size, info,
				     why, CB_FORMAT_WHY_LEN);
	if (ret)
		goto out;
	kvfree(hdr);
	hdr = kvmalloc(info->dir_end, GFP_KERNEL);
	ret = -ENOMEM;
	if (!hdr)
		goto out;
	ret = colibri_read_full(f, hdr, info->dir_end, 0);
	if (ret)
		goto out;
	ret = cb_format_check_directory(hdr, info->dir_end, file_size, info,
					why, CB_FORMAT_WHY_LEN);
	if (ret)
		goto out;

	/* 2. The tokenizer, checksummed; then the data, into pinned memory. */
	ret = colibri_read_tokenizer(f, info, m, why);
	if (ret)
		goto out;
	ret = colibri_numa_alloc(m, info->data_size, numa, why);
	if (ret)
		goto out;
	ret = colibri_read_full(f, m->mem.vaddr, info->data_size, info->data_offset);
	if (ret)
		goto out;

	/* 3. Sealed read-only, then checksummed and bound where it stays. */
	ret = colibri_buf_seal(&m->mem);
	if (ret)
		goto out;
	ret = colibri_verify_tensors(info, hdr, m->mem.vaddr, why, CB_FORMAT_WHY_LEN);
	if (ret)
		goto out;
	bind_size = cb_format_bind_size(info);
	m->bind = kvzalloc(bind_size, GFP_KERNEL);
	ret = -ENOMEM;
	if (!m->bind)
		goto out;
	ret = cb_format_bind(info, hdr, m->mem.vaddr, m->mem.size, m->bind, bind_size,
			     &m->cfg, &m->w, why, CB_FORMAT_WHY_LEN);
	if (ret)
		goto out;
	/* 4. The other nodes' copies of the sealed weights (replicate). */
	ret = colibri_numa_replicate(m, why);
	if (ret)
		goto out;
	m->file_size = file_size;
	if (!m->name[0] && strscpy(m->name, info->name, sizeof(m->name)) < 0) {
		snprintf(why, CB_FORMAT_WHY_LEN,
			 "the file's model name is longer than %zu bytes: give a name",
			 sizeof(m->name) - 1);
		ret = -EINVAL;
	}
out:
	kvfree(hdr);
	kfree(info);
	/*
	 * The validator says -EOVERFLOW for sizes outside the file: to the
	 * caller every malformed file is -EINVAL.
	 */
	return ret == -EOVERFLOW ? -EINVAL : ret;
}

/**
 * colibri_model_load() - load, validate, seal and publish a model.
 * @f: the .colibri file.
 * @name: name to publish under, or "" for the file's own name.
 * @numa: COLIBRI_NUMA_*: where its weights go (colibri_numa.c).
 * @out: the model, with a reference for the caller (taken before it is
 *	published, so it is valid even if an UNLOAD has removed it since).
 *
 * A refused load leaves nothing allocated and logs why (rate-limited).
 * Return: 0 or -errno (see struct colibri_load).
 */
int colibri_model_load(struct file *f, const char *name, u32 numa,
		       struct colibri_model **out)
{
	struct colibri_model *m;
	char *why;
	int ret;

	if (!(f->f_mode & FMODE_READ) || !S_ISREG(file_inode(f)->i_mode))
		return -EBADF;
	why = kzalloc(CB_FORMAT_WHY_LEN, GFP_KERNEL);
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m || !why) {
		kfree(why);
		kfree(m);
		return -ENOMEM;
	}
	kobject_init(&m->kobj, &colibri_model_ktype);
	INIT_LIST_HEAD(&m->node);
	INIT_LIST_HEAD(&m->bindings);
	INIT_LIST_HEAD(&m->sessions);
	init_waitqueue_head(&m->sessions_wq);
	mutex_init(&m->batch_lock);
	mutex_init(&m->sessions_lock);
	strscpy(m->name, name, sizeof(m->name));

	ret = colibri_model_build(f, m, numa, why);
	if (!ret && colibri_name_valid(m->name, sizeof(m->name)) <= 0) {
		snprintf(why, CB_FORMAT_WHY_LEN,
			 "the file's model name is not usable: give a name");
		ret = -EINVAL;
	}
	if (ret)
		goto err;

	mutex_lock(&colibri_models_publish_lock);
	mutex_lock(&colibri_models_lock);
	if (colibri_model_lookup(m->name)) {
		snprintf(why, CB_FORMAT_WHY_LEN, "a model named '%s' is loaded", m->name);
		ret = -EEXIST;
	} else if (colibri_nr_models >= colibri_max_models) {
		snprintf(why, CB_FORMAT_WHY_LEN, "max_models=%u are loaded", colibri_max_models);
		ret = -ENOSPC;
	} else {
		/*
		 * The caller's reference, taken before the model can be found:
		 * once it is published an UNLOAD may drop the registry's at any
		 * time, and then only this one keeps it.
		 */
		kobject_get(&m->kobj);
		ret = kobject_add(&m->kobj, colibri_models_kobj, "%s", m->name);
		if (!ret) {
			list_add_tail(&m->node, &colibri_models);
			WRITE_ONCE(colibri_nr_models, colibri_nr_models + 1);
		} else {
			kobject_put(&m->kobj);
		}
	}
	mutex_unlock(&colibri_models_lock);
	if (!ret)
		colibri_models_notify(m, true);
	mutex_unlock(&colibri_models_publish_lock);
	if (ret)
		goto err;

	pr_info("model %s loaded: %s, %u layers, %u experts (top %u), %llu bytes pinned (numa %s, %u %s)\n",
		m->name, cb_arch_of(m->cfg.arch)->name, m->cfg.n_layers, m->cfg.n_experts,
		m->cfg.top_k, colibri_numa_bytes(m), colibri_numa_name(m->numa.policy),
		m->numa.nr_copies, m->numa.nr_copies == 1 ? "copy" : "copies");
	kfree(why);
	*out = m;
	return 0;

err:
	pr_warn_ratelimited("load of %s refused (%d): %s\n", name[0] ? name : "a model",
			    ret, why[0] ? why : "see the error code");
	kfree(why);
	kobject_put(&m->kobj);		/* frees whatever was built */
	return ret;
}

/*
 * Caller holds colibri_models_publish_lock and colibri_models_lock, and has marked
 * the model ->dying (no session is added from here on): takes it off the
 * registry's list, so that no lookup finds it any more.
 */
static void colibri_model_unpublish(struct colibri_model *m)
{
	list_del_init(&m->node);
	WRITE_ONCE(colibri_nr_models, colibri_nr_models - 1);
}

/*
 * After colibri_model_unpublish(), still under colibri_models_publish_lock (so a
 * model of the same name cannot appear in sysfs before this one left it)
 * but not colibri_models_lock: the observers let go of the model (the
 * accelerators wait for the jobs they hold; their sysfs directories live
 * under the model's), then it leaves sysfs.  The caller drops the registry's reference later.
 */
static void colibri_model_retire(struct colibri_model *m)
{
	colibri_models_notify(m, false);
	kobject_del(&m->kobj);
}

/**
 * colibri_model_unload() - unpublish a model.
 * @name: the model.
 * @wait: the caller will revoke its sessions and wait for them; without
 *	it, a model with sessions is refused.
 * @own: the model of the caller's own live session, or NULL.
 * @out: the unpublished model, with the registry's reference, now the
 *	caller's: it revokes the sessions (with @wait), waits for them with
 *	colibri_model_wait_sessions() and puts it.
 *
 * The check for sessions and the unpublishing are one step under the
 * model's ->sessions_lock: an UNLOAD without @wait that succeeds leaves no
 * session, and no ATTACH can add one afterwards.
 * Return: 0, -ENOENT, -EBUSY (sessions and no @wait) or -EDEADLK (@wait
 * and @own is this model: the caller would revoke its own session).
 */
int colibri_model_unload(const char *name, bool wait, const struct colibri_model *own,
			 struct colibri_model **out)
{
	struct colibri_model *m;
	int ret = 0;

	mutex_lock(&colibri_models_publish_lock);
	mutex_lock(&colibri_models_lock);
	m = colibri_model_lookup(name);
	if (!m)
		ret = -ENOENT;
	else if (wait && m == own)
		ret = -EDEADLK;
	if (!ret) {
		mutex_lock(&m->sessions_lock);
		if (atomic_read(&m->nr_sessions) && !wait)
			ret = -EBUSY;
		else
			m->dying = true;
		mutex_unlock(&m->sessions_lock);
	}
	if (ret) {
		mutex_unlock(&colibri_models_lock);
		mutex_unlock(&colibri_models_publish_lock);
		return ret;
	}
	colibri_model_unpublish(m);
	mutex_unlock(&colibri_models_lock);
	colibri_model_retire(m);
	mutex_unlock(&colibri_models_publish_lock);
	*out = m;
	return 0;
}

/**
 * colibri_model_wait_sessions() - wait until an unpublished model's
 *	sessions have given their memory and their references back.
 * @m: the model; the caller holds a reference (its last use).
 *
 * The caller has revoked them (colibri_sched_revoke()), so this waits
 * for steps in flight to reach the end of their pass, not for anyone's
 * close().  Interruptible: the revoked sessions detach anyway.
 * Return: 0 or -EINTR.
 */
int colibri_model_wait_sessions(struct colibri_model *m)
{
	if (wait_event_interruptible(m->sessions_wq, !atomic_read(&m->nr_sessions)))
		return -EINTR;
	/* The last session's put is done once its holder lets go of this. */
	mutex_lock(&colibri_session_gone_lock);
	mutex_unlock(&colibri_session_gone_lock);
	return 0;
}

/**
 * colibri_model_add_session() - count a new session of @m.
 * @m: the model; the caller holds a reference.
 * @node: the session's node for ->sessions.
 *
 * Takes the session's own model reference.
 * Return: 0, or -ENOENT once the model is being unloaded.
 */
int colibri_model_add_session(struct colibri_model *m, struct list_head *node)
{
	int ret = 0;

	mutex_lock(&m->sessions_lock);
	if (m->dying) {
		ret = -ENOENT;
	} else {
		kobject_get(&m->kobj);
		list_add_tail(node, &m->sessions);
		atomic_inc(&m->nr_sessions);
	}
	mutex_unlock(&m->sessions_lock);
	return ret;
}

/**
 * colibri_model_drop_session() - a session of @m gives its reference back.
 * @m: the model.
 * @node: the session's node, as added.
 *
 * The session's memory is gone already: an UNLOAD(WAIT) woken here may
 * return, and finds the model's own memory gone with this put.
 */
void colibri_model_drop_session(struct colibri_model *m, struct list_head *node)
{
	bool last;

	mutex_lock(&colibri_session_gone_lock);
	mutex_lock(&m->sessions_lock);
	list_del_init(node);
	last = atomic_dec_and_test(&m->nr_sessions);
	mutex_unlock(&m->sessions_lock);
	if (last)
		wake_up_all(&m->sessions_wq);
	colibri_model_put(m);
	mutex_unlock(&colibri_session_gone_lock);
}

int colibri_models_init(void)
{
	colibri_kobj = kobject_create_and_add("colibri", kernel_kobj);
	if (!colibri_kobj)
		return -ENOMEM;
	colibri_models_kobj = kobject_create_and_add("models", colibri_kobj);
	if (!colibri_models_kobj) {
		kobject_put(colibri_kobj);
		return -ENOMEM;
	}
	return 0;
}

/* Module exit: no file is open, so no session exists; unload everything. */
void colibri_models_exit(void)
{
	struct colibri_model *m;

	mutex_lock(&colibri_models_publish_lock);
	do {
		mutex_lock(&colibri_models_lock);
		m = list_first_entry_or_null(&colibri_models, struct colibri_model, node);
		if (m) {
			mutex_lock(&m->sessions_lock);
			m->dying = true;
			mutex_unlock(&m->sessions_lock);
			colibri_model_unpublish(m);
		}
		mutex_unlock(&colibri_models_lock);
		if (m) {
			colibri_model_retire(m);
			colibri_model_put(m);
		}
	} while (m);
	mutex_unlock(&colibri_models_publish_lock);
	kobject_put(colibri_models_kobj);
	kobject_put(colibri_kobj);
}

/**
 * colibri_models_snapshot() - every published model, with a reference each.
 * @n: out, how many.
 *
 * Return: a kmalloc'ed array (kfree it, put each model), or NULL when
 * there is none or no memory.
 */
struct colibri_model **colibri_models_snapshot(unsigned int *n)
{
	struct colibri_model **ms, *m;
	unsigned int i = 0;

	*n = 0;
	mutex_lock(&colibri_models_lock);
	ms = kcalloc(max(colibri_nr_models, 1U), sizeof(*ms), GFP_KERNEL);
	if (ms) {
		list_for_each_entry(m, &colibri_models, node) {
			kobject_get(&m->kobj);
			ms[i++] = m;
		}
		*n = i;
	}
	mutex_unlock(&colibri_models_lock);
	return ms;
}

/**
 * colibri_models_list() - fill LIST entries.
 * @ents: kernel array of @cap entries to fill (zeroed by the caller).
 * @cap: its capacity.
 *
 * Return: the number of models loaded (may exceed @cap).
 */
u32 colibri_models_list(struct colibri_model_entry *ents, u32 cap)
{
	struct colibri_model *m;
	u32 n = 0;

	mutex_lock(&colibri_models_lock);
	list_for_each_entry(m, &colibri_models, node) {
		if (n < cap) {
			struct colibri_model_entry *e = &ents[n];

			strscpy_pad(e->name, m->name, sizeof(e->name));
			e->arch = m->cfg.arch;
			e->sessions = atomic_read(&m->nr_sessions);
			e->bytes = colibri_numa_bytes(m);
			e->numa = m->numa.policy;
			e->numa_copies = m->numa.nr_copies;
			e->tokens = atomic64_read(&m->tokens);
			e->vocab_size = m->cfg.vocab_size;
			e->n_layers = m->cfg.n_layers;
			e->n_experts = m->cfg.n_experts;
			e->top_k = m->cfg.top_k;
		}
		n++;
	}
	mutex_unlock(&colibri_models_lock);
	return n;
}
