// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * client.c - libcolibri's device client.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/cb_arch.h"
#include "core/cb_engine.h"
#include "libcolibri.h"

int colibri_dev_open(void)
{
	const char *path = getenv("COLIBRI_DEVICE");
	int fd = open(path && *path ? path : COLIBRI_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int colibri_dev_get_info(int fd, struct colibri_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, COLIBRI_IOC_GET_INFO, info) ? -errno : 0;
}

const char *colibri_isa_name(unsigned int isa_level)
{
	/* uapi's COLIBRI_ISA_* are the engine's levels (kmod/colibri_main.c) */
	return isa_level < CB_ISA__COUNT ? cb_isa_names[isa_level] : "unknown";
}

const char *colibri_mem_provider_name(unsigned int provider)
{
	switch (provider) {
	case COLIBRI_MEM_PAGES:
		return "pages";
	case COLIBRI_MEM_MEMMAP:
		return "memmap";
	default:
		return "unknown";
	}
}

/*
 * @dst (COLIBRI_NAME_LEN bytes) = @name, NUL-padded.  @name may be @dst
 * itself (colibri_dev_ensure_model() callers pass one buffer for name and
 * name_out): copy first, then clear the tail, never the other way round.
 */
static int colibri_set_name(char *dst, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n >= COLIBRI_NAME_LEN)
		return -ENAMETOOLONG;
	if (n)
		memmove(dst, name, n);
	memset(dst + n, 0, COLIBRI_NAME_LEN - n);
	return 0;
}

static const char *const colibri_numa_names[] = {
	[COLIBRI_NUMA_LOCAL] = "local",
	[COLIBRI_NUMA_INTERLEAVE] = "interleave",
	[COLIBRI_NUMA_REPLICATE] = "replicate",
};

const char *colibri_numa_name(unsigned int numa)
{
	return numa < sizeof(colibri_numa_names) / sizeof(colibri_numa_names[0]) ?
	       colibri_numa_names[numa] : "unknown";
}

int colibri_numa_flags(const char *name)
{
	if (!strcmp(name, "local"))
		return 0;
	if (!strcmp(name, "interleave"))
		return COLIBRI_LOAD_NUMA_INTERLEAVE;
	if (!strcmp(name, "replicate"))
		return COLIBRI_LOAD_NUMA_REPLICATE;
	return -EINVAL;
}

int colibri_dev_load(int fd, const char *path, const char *name, char *name_out,
		     unsigned long long *bytes)
{
	return colibri_dev_load_flags(fd, path, name, 0, name_out, bytes);
}

int colibri_dev_load_flags(int fd, const char *path, const char *name, unsigned int flags,
			   char *name_out, unsigned long long *bytes)
{
	struct colibri_load arg;
	int mfd, ret;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.flags = flags;
	ret = colibri_set_name(arg.name, name);
	if (ret)
		return ret;
	mfd = open(path, O_RDONLY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	arg.fd = mfd;
	ret = ioctl(fd, COLIBRI_IOC_LOAD, &arg) ? -errno : 0;
	close(mfd);
	if (ret)
		return ret;
	if (name_out)
		memcpy(name_out, arg.name, COLIBRI_NAME_LEN);
	if (bytes)
		*bytes = arg.bytes;
	return 0;
}

int colibri_dev_unload(int fd, const char *name, int wait)
{
	struct colibri_unload arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.flags = wait ? COLIBRI_UNLOAD_WAIT : 0;
	ret = colibri_set_name(arg.name, name);
	if (ret)
		return ret;
	return ioctl(fd, COLIBRI_IOC_UNLOAD, &arg) ? -errno : 0;
}

int colibri_dev_list(int fd, struct colibri_model_entry *ents, unsigned int cap)
{
	struct colibri_list arg;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.entries = (uintptr_t)ents;
	arg.capacity = cap;
	arg.entry_size = sizeof(*ents);
	return ioctl(fd, COLIBRI_IOC_LIST, &arg) ? -errno : (int)arg.count;
}

int colibri_dev_attach(int fd, const char *name, unsigned int max_context,
		       unsigned int max_batch, struct colibri_attach *out)
{
	struct colibri_attach arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.max_context = max_context;
	arg.max_batch = max_batch;
	ret = colibri_set_name(arg.name, name);
	if (ret)
		return ret;
	if (ioctl(fd, COLIBRI_IOC_ATTACH, &arg))
		return -errno;
	if (out)
		*out = arg;
	return 0;
}

/* GET_TOKENIZER of one section (@flags) into a malloc'ed buffer. */
static int colibri_dev_get_section(int fd, const char *name, unsigned int flags, void **buf,
				   size_t *len, struct colibri_tokenizer *out)
{
	struct colibri_tokenizer arg;
	void *p = NULL;
	int ret, tries;

	*buf = NULL;
	*len = 0;
	memset(&arg, 0, sizeof(arg));
	arg.flags = flags;
	ret = colibri_set_name(arg.name, name);
	if (ret)
		return ret;
	/* Ask for the size, then fetch (a reload in between may change it). */
	for (tries = 0; tries < 4; tries++) {
		arg.size = sizeof(arg);
		if (ioctl(fd, COLIBRI_IOC_GET_TOKENIZER, &arg)) {
			ret = -errno;
			free(p);
			return ret;
		}
		if (arg.section_size <= arg.buf_len)
			break;
		free(p);
		p = malloc(arg.section_size);
		if (!p)
			return -ENOMEM;
		arg.buf = (uintptr_t)p;
		arg.buf_len = arg.section_size;
	}
	if (tries == 4) {
		free(p);
		return -EAGAIN;
	}
	if (!arg.section_size) {
		free(p);
		p = NULL;
	}
	*buf = p;
	*len = arg.section_size;
	if (out)
		*out = arg;
	return 0;
}

int colibri_dev_get_tokenizer(int fd, const char *name, void **buf, size_t *len,
			      struct colibri_tokenizer *out)
{
	return colibri_dev_get_section(fd, name, 0, buf, len, out);
}

int colibri_dev_get_chat_template(int fd, const char *name, char **tmpl, size_t *len)
{
	void *p;
	int ret = colibri_dev_get_section(fd, name, COLIBRI_TOKENIZER_CHAT_TEMPLATE, &p, len,
					  NULL);
	char *s;

	*tmpl = NULL;
	if (ret || !p)
		return ret;
	/* A C string for the template engine: one more byte, NUL. */
	s = realloc(p, *len + 1);
	if (!s) {
		free(p);
		return -ENOMEM;
	}
	s[*len] = 0;
	*tmpl = s;
	return 0;
}

int colibri_dev_submit(int fd, struct colibri_submit *s)
{
	s->size = sizeof(*s);
	return ioctl(fd, COLIBRI_IOC_SUBMIT, s) ? -errno : 0;
}

const char *colibri_arch_name(unsigned int arch)
{
	const struct cb_arch_desc *a = cb_arch_of(arch);

	return a ? a->name : "unknown";
}

int colibri_dev_ensure_model(int fd, const char *path, const char *name, char *name_out,
			     int *loaded)
{
	struct colibri_model_entry ents[64];
	int n, i, ret;

	*loaded = 0;
	if (name && *name) {
		n = colibri_dev_list(fd, ents, 64);
		if (n < 0)
			return n;
		for (i = 0; i < n && i < 64; i++) {
			if (!strcmp(ents[i].name, name)) {
				ret = colibri_set_name(name_out, name);
				return ret;
			}
		}
	}
	ret = colibri_dev_load(fd, path, name, name_out, NULL);
	if (!ret)
		*loaded = 1;
	return ret;
}
