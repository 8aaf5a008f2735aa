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

static const struct file_operations colibri_fops;

/* The device: the misc device, and the scheduler its files' requests run on. */
static struct colibri_dev {
	struct miscdevice misc;
	struct colibri_sched *sched;
} colibri_dev = {
	.misc = {
		.minor	= MISC_DYNAMIC_MINOR,
		.name	= COLIBRI_NAME,
		.fops	= &colibri_fops,
		.mode	= 0600,
	},
};

static int colibri_open(struct inode *inode, struct file *file)
{
	struct colibri_file *cf = kzalloc(sizeof(*cf), GFP_KERNEL);

	if (!cf)
		return -ENOMEM;
	cf->sched = colibri_dev.sched;
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

/**
 * colibri_dev_register() - create /dev/colibri.
 * @sc: the scheduler its files' requests run on.
 *
 * Return: 0 or misc_register()'s error.
 */
int colibri_dev_register(struct colibri_sched *sc)
{
	int ret;

	colibri_dev.sched = sc;
	ret = misc_register(&colibri_dev.misc);
	if (ret)
		pr_err("cannot register /dev/%s: %d\n", COLIBRI_NAME, ret);
	return ret;
}

/* Remove /dev/colibri (no file is open); give back its scheduler. */
struct colibri_sched *colibri_dev_unregister(void)
{
	misc_deregister(&colibri_dev.misc);
	return colibri_dev.sched;
}
