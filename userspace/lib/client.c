// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * client.c - libcolibri's device client.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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
	static const char *const names[] = {
		[COLIBRI_ISA_SCALAR] = "scalar",
		[COLIBRI_ISA_AVX2] = "avx2",
		[COLIBRI_ISA_AVX512] = "avx512",
	};

	return isa_level < sizeof(names) / sizeof(names[0]) ? names[isa_level] : "unknown";
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
