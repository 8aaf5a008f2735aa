// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_acct.c - what a session costs the user who attaches it.
 *
 * /dev/colibri may be open to unprivileged users, and a session pins
 * memory (its buffers, and a private engine's KV cache) that no reclaim
 * can take back.  So every ATTACH is charged, to the attaching task:
 *
 * - per user (the task's real uid, as RLIMIT_NPROC counts): at most
 *   max_sessions_per_user sessions and mem_limit_per_user_mb of pinned
 *   memory, -EDQUOT beyond (with a rate-limited line naming the uid);
 *   CAP_SYS_RESOURCE is exempt, as it is from quotas;
 * - RLIMIT_MEMLOCK, charged to the user's locked_vm the way io_uring
 *   charges its rings and registered buffers (__io_account_mem()), unless
 *   the task has CAP_IPC_LOCK: -ENOMEM beyond, as mlock() says.  Not an
 *   mm's locked_vm (vfio's account_locked_vm()) or pinned_vm (RDMA's
 *   umem): the memory belongs to an open file, not to an address space; it
 *   outlives the process that attached when the file is passed on or
 *   inherited, and a per-mm count would let one user pin RLIMIT_MEMLOCK
 *   once per process it forks.  user->locked_vm is the one count the
 *   kernel keeps per user for memory pinned on its behalf;
 * - the task's memory cgroup: the pages are allocated with __GFP_ACCOUNT
 *   (colibri_buf_alloc()), so memory.max limits them too.
 *
 * A session on its model's shared engine is charged its own buffers only:
 * the shared engine is part of the model's cost (its size is fixed by the
 * module parameters and the model, not by any user), counted against
 * mem_limit_mb with the model.  Models themselves are loaded by
 * CAP_SYS_ADMIN and counted against mem_limit_mb only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>

#include "colibri_internal.h"

/* One user with sessions: what it holds. */
struct colibri_user {
	struct hlist_node node;		/* in colibri_users */
	kuid_t uid;
	unsigned int sessions;		/* protected by colibri_users_lock */
	u64 bytes;			/* protected by colibri_users_lock */
};

static DEFINE_SPINLOCK(colibri_users_lock);
static DEFINE_HASHTABLE(colibri_users, 6);	/* protected by colibri_users_lock */

static unsigned int colibri_uid(kuid_t uid)
{
	return from_kuid_munged(&init_user_ns, uid);
}

/* Caller holds colibri_users_lock. */
static struct colibri_user *colibri_user_lookup(kuid_t uid)
{
	struct colibri_user *u;

	hash_for_each_possible(colibri_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * colibri_charge_session() - count one more session of the current user.
 * @c: the session's charge, zeroed by the caller.
 *
 * Return: 0, -EDQUOT at max_sessions_per_user, -ENOMEM.
 */
int colibri_charge_session(struct colibri_charge *c)
{
	unsigned int max = READ_ONCE(colibri_max_sessions_per_user);
	struct colibri_user *u, *fresh;
	kuid_t uid = current_uid();
	int ret = 0;

	c->uid = uid;
	if (capable(CAP_SYS_RESOURCE))
		return 0;		/* exempt, and not counted */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&colibri_users_lock);
	u = colibri_user_lookup(uid);
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hash_add(colibri_users, &u->node, __kuid_val(uid));
	}
	if (u->sessions >= max) {
		ret = -EDQUOT;
	} else {
		u->sessions++;
		c->user = u;
	}
	if (!u->sessions) {
		hash_del(&u->node);
		fresh = u;		/* freed below */
	}
	spin_unlock(&colibri_users_lock);
	kfree(fresh);
	if (ret)
		pr_warn_ratelimited("uid %u: attach refused: max_sessions_per_user=%u sessions attached\n",
				    colibri_uid(uid), max);
	return ret;
}

/* RLIMIT_MEMLOCK of the current task, charged to its user's locked_vm. */
static int colibri_charge_memlock(struct colibri_charge *c, unsigned long pages)
{
	unsigned long limit, cur, new;
	struct user_struct *user;

	if (capable(CAP_IPC_LOCK))
		return 0;
	user = c->locked ? c->locked : get_current_user();
	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	cur = atomic_long_read(&user->locked_vm);
	do {
		if (check_add_overflow(cur, pages, &new) || new > limit) {
			if (!c->locked)
				free_uid(user);
			pr_warn_ratelimited("uid %u: attach of %lu bytes refused: RLIMIT_MEMLOCK is %lu bytes, %lu locked\n",
					    colibri_uid(c->uid), pages << PAGE_SHIFT,
					    limit << PAGE_SHIFT, cur << PAGE_SHIFT);
			return -ENOMEM;
		}
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	c->locked = user;
	c->pages += pages;
	return 0;
}

/**
 * colibri_charge_bytes() - charge pinned bytes to the current user.
 * @c: the session's charge (colibri_charge_session() done).
 * @bytes: page-aligned bytes about to be allocated for the session.
 *
 * Return: 0; -EDQUOT over mem_limit_per_user_mb; -ENOMEM over
 * RLIMIT_MEMLOCK.  Nothing is charged on failure.
 */
int colibri_charge_bytes(struct colibri_charge *c, u64 bytes)
{
	u64 max = (u64)READ_ONCE(colibri_mem_limit_per_user_mb) << 20, held = 0;
	int ret = 0;

	if (c->user) {
		spin_lock(&colibri_users_lock);
		held = c->user->bytes;
		if (held + bytes > max)
			ret = -EDQUOT;
		else
			c->user->bytes += bytes;
		spin_unlock(&colibri_users_lock);
		if (ret) {
			pr_warn_ratelimited("uid %u: attach of %llu bytes refused: mem_limit_per_user_mb=%llu, %llu bytes held\n",
					    colibri_uid(c->uid), bytes, max >> 20, held);
			return ret;
		}
	}
	ret = colibri_charge_memlock(c, bytes >> PAGE_SHIFT);
	if (ret) {
		if (c->user) {
			spin_lock(&colibri_users_lock);
			c->user->bytes -= bytes;
			spin_unlock(&colibri_users_lock);
		}
		return ret;
	}
	c->bytes += bytes;
	return 0;
}

/**
 * colibri_uncharge() - give back everything charged to @c.
 * @c: the charge; may be all zero.
 */
void colibri_uncharge(struct colibri_charge *c)
{
	struct colibri_user *u = c->user, *gone = NULL;

	if (c->locked) {
		atomic_long_sub(c->pages, &c->locked->locked_vm);
		free_uid(c->locked);
	}
	if (u) {
		spin_lock(&colibri_users_lock);
		u->bytes -= c->bytes;
		if (!--u->sessions) {
			WARN_ON_ONCE(u->bytes);
			hash_del(&u->node);
			gone = u;
		}
		spin_unlock(&colibri_users_lock);
		kfree(gone);
	}
	memset(c, 0, sizeof(*c));
}
