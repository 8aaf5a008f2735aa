/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * colibri_compat.h - every difference between the kernels the module builds
 * for (Debian's 6.1 and 6.12) that the module's own code must spell two
 * ways, each behind one helper, so that no other file tests a version.
 */
#ifndef COLIBRI_COMPAT_H
#define COLIBRI_COMPAT_H

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/version.h>

/* vm_flags became read-only behind vm_flags_clear() & co in 6.3. */
static inline void colibri_vma_clear_maywrite(struct vm_area_struct *vma)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
}

/*
 * io_uring commands (colibri_uring.c).  6.1 keeps the payload at ->cmd and
 * has no cancel hook; 6.7 moved the uring_cmd API to <linux/io_uring/cmd.h>,
 * reads the payload through ->sqe and added cancelable commands.  Both
 * have io_uring_cmd_done() with four arguments and
 * io_uring_cmd_complete_in_task(cmd, cb).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#include <linux/io_uring/cmd.h>

static inline const void *colibri_ucmd_payload(struct io_uring_cmd *cmd)
{
	return io_uring_sqe_cmd(cmd->sqe);
}

static inline struct task_struct *colibri_ucmd_task(struct io_uring_cmd *cmd)
{
	return io_uring_cmd_get_task(cmd);
}

static inline bool colibri_ucmd_is_cancel(unsigned int issue_flags)
{
	return issue_flags & IO_URING_F_CANCEL;
}

static inline void colibri_ucmd_mark_cancelable(struct io_uring_cmd *cmd,
						unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
}

static inline bool colibri_ucmd_task_dead(unsigned int issue_flags)
{
	return (issue_flags & IO_URING_F_TASK_DEAD) ||
	       (current->flags & (PF_EXITING | PF_KTHREAD));
}
#else
#include <linux/io_uring.h>
#include <linux/io_uring_types.h>

static inline const void *colibri_ucmd_payload(struct io_uring_cmd *cmd)
{
	return cmd->cmd;
}

static inline struct task_struct *colibri_ucmd_task(struct io_uring_cmd *cmd)
{
	return cmd_to_io_kiocb(cmd)->task;
}

static inline bool colibri_ucmd_is_cancel(unsigned int issue_flags)
{
	return false;
}

/* Nothing to mark: colibri_req_abandoned() watches the owner instead. */
static inline void colibri_ucmd_mark_cancelable(struct io_uring_cmd *cmd,
						unsigned int issue_flags)
{
}

/* Task work of a dying task runs in it (PF_EXITING) or in a kworker. */
static inline bool colibri_ucmd_task_dead(unsigned int issue_flags)
{
	return current->flags & (PF_EXITING | PF_KTHREAD);
}
#endif

/* __assign_str() of tracepoints lost its source argument in 6.10. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define colibri_trace_assign_str(dst, src) __assign_str(dst)
#else
#define colibri_trace_assign_str(dst, src) __assign_str(dst, src)
#endif

#endif /* COLIBRI_COMPAT_H */
