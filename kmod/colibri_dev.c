// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_dev.c - /dev/colibri: the misc device, its file operations and
 * the ioctl dispatcher.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "colibri_internal.h"
#include "colibri.h"

/*
 * Copy an extensible argument struct in.  The caller's struct starts with
 * __u32 size; @ver0 is the first published size of this struct.  Mirrors
 * copy_struct_from_user(): smaller (down to @ver0) is zero-extended, larger
 * must have an all-zero tail.  Every failure of the size rule is -EINVAL
 * (copy_struct_from_user() says -E2BIG for a non-zero tail; the ABI
 * promises -EINVAL for any bad size).
 */
static int colibri_copy_arg(void *karg, size_t ksize, size_t ver0,
			    void __user *uarg, u32 *usize)
{
	int ret;

	if (get_user(*usize, (u32 __user *)uarg))
		return -EFAULT;
	if (*usize < ver0 || *usize > PAGE_SIZE)
		return -EINVAL;
	ret = copy_struct_from_user(karg, ksize, uarg, *usize);
	if (ret == -E2BIG)
		return -EINVAL;
	return ret;
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
	info.mem_provider = COLIBRI_MEM_PAGES;
	info.mem_limit = (u64)colibri_mem_limit_mb << 20;
	info.max_models = colibri_max_models;
	info.max_sessions = colibri_max_sessions;

	/* A larger caller struct keeps its (checked zero) tail. */
	if (copy_to_user(uarg, &info, min_t(size_t, usize, sizeof(info))))
		return -EFAULT;
	return 0;
}

static long colibri_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	/* Size bits are ignored on purpose: the struct's @size rules. */
	if (_IOC_TYPE(cmd) != COLIBRI_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(COLIBRI_IOC_GET_INFO):
		return colibri_ioc_get_info(uarg);
	default:
		return -ENOTTY;
	}
}

static int colibri_open(struct inode *inode, struct file *file)
{
	/* Every open file is its own (unattached) session context later on. */
	return nonseekable_open(inode, file);
}

static int colibri_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations colibri_fops = {
	.owner		= THIS_MODULE,
	.open		= colibri_open,
	.release	= colibri_release,
	.unlocked_ioctl	= colibri_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
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
