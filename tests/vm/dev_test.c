// SPDX-License-Identifier: GPL-2.0-only
/*
 * dev_test - /dev/colibri and COLIBRI_IOC_GET_INFO against the real module.
 *
 * Runs inside the vm-run guest with colibri.ko loaded (kselftest harness,
 * KTAP output).  Each test names the behaviour it proves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "colibri.h"

/* Reads an integer module parameter; the module must be loaded. */
static long modparam(const char *name)
{
	char path[256], buf[64];
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/colibri/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1000000;
	v = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 0) : -1000000;
	fclose(f);
	return v;
}

/* Size of the memmap= range the module was given, or 0. */
static unsigned long long memmap_size(void)
{
	char buf[128] = "", *at;
	unsigned long long v;
	FILE *f = fopen("/sys/module/colibri/parameters/memmap", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	at = strpbrk(buf, "@$");
	if (!at || !strncmp(buf, "(null)", 6))
		return 0;
	v = strtoull(buf, &at, 0);
	switch (*at) {
	case 'G': case 'g': v <<= 30; break;
	case 'M': case 'm': v <<= 20; break;
	case 'K': case 'k': v <<= 10; break;
	}
	return v;
}

/* The ISA level the engine must pick on this CPU, from /proc/cpuinfo. */
static int expected_isa(void)
{
	char line[8192];
	int level = COLIBRI_ISA_SCALAR;
	long cap = modparam("max_isa");
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		if (strstr(line, " avx2") && strstr(line, " fma") && strstr(line, " f16c"))
			level = COLIBRI_ISA_AVX2;
		if (strstr(line, " avx512f") && strstr(line, " avx512bw") &&
		    strstr(line, " avx512vl") && level == COLIBRI_ISA_AVX2)
			level = COLIBRI_ISA_AVX512;
		if (strstr(line, " avx512_vnni") && level == COLIBRI_ISA_AVX512)
			level = COLIBRI_ISA_AVX512_VNNI;
		break;
	}
	if (f)
		fclose(f);
	if (cap >= 0 && level > cap)
		level = cap;
	return level;
}

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(COLIBRI_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", COLIBRI_DEVICE_PATH, strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

static int get_info(int fd, void *arg)
{
	return ioctl(fd, COLIBRI_IOC_GET_INFO, arg) ? -errno : 0;
}

TEST_F(dev, get_info_reports_abi_isa_provider_limits)
{
	struct colibri_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, get_info(self->fd, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(COLIBRI_ABI_VERSION, info.abi_version);
	EXPECT_EQ(expected_isa(), (int)info.isa_level);
	EXPECT_NE(0, info.isa_name[0]);
	EXPECT_EQ(0, info.isa_name[sizeof(info.isa_name) - 1]);
	if (memmap_size()) {
		unsigned long long lim = (unsigned long long)modparam("mem_limit_mb") << 20;

		EXPECT_EQ(COLIBRI_MEM_MEMMAP, info.mem_provider);
		EXPECT_EQ(memmap_size(), info.mem_total);
		EXPECT_EQ(lim < memmap_size() ? lim : memmap_size(), info.mem_limit);
	} else {
		EXPECT_EQ(COLIBRI_MEM_PAGES, info.mem_provider);
		EXPECT_EQ(0, info.mem_total);
		EXPECT_EQ((unsigned long long)modparam("mem_limit_mb") << 20, info.mem_limit);
	}
	EXPECT_EQ(modparam("max_models"), info.max_models);
	EXPECT_EQ(modparam("max_sessions"), info.max_sessions);
	EXPECT_EQ(0, info.nr_models);
	EXPECT_EQ(0, info.nr_sessions);
	EXPECT_EQ(0, info.mem_used);
	EXPECT_LE(1, info.numa_nodes);	/* numa_test checks the count */
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0, info.reserved[i]);
	TH_LOG("isa %u (%s), provider %u, limit %llu", info.isa_level, info.isa_name,
	       info.mem_provider, (unsigned long long)info.mem_limit);
}

/* MemTotal of /proc/meminfo in kB, or -1. */
static long long memtotal_kb(void)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/*
 * Loaded without mem_limit_mb, the module may pin half of RAM (the rest
 * keeps the machine alive), or the whole range it was given with
 * memmap=; the parameter shows the limit in force.  It once defaulted to
 * 1024 MiB whatever the machine had, more than a 1 GiB guest's RAM.
 */
TEST_F(dev, default_memory_limit_is_half_of_ram_or_the_range)
{
	struct colibri_info info = { .size = sizeof(info) };
	long long want = memmap_size() ? (long long)(memmap_size() >> 20) : memtotal_kb() / 2048;

	ASSERT_EQ(0, get_info(self->fd, &info));
	ASSERT_LT(0, want);
	EXPECT_EQ(want, modparam("mem_limit_mb"));
	EXPECT_EQ((unsigned long long)want << 20, info.mem_limit);
	/* The per-user share: a quarter of it, unless set. */
	EXPECT_EQ(want / 4 ? want / 4 : 1, modparam("mem_limit_per_user_mb"));
	EXPECT_EQ(modparam("max_sessions") / 4, modparam("max_sessions_per_user"));
}

TEST_F(dev, get_info_rejects_sizes_below_ver0)
{
	struct colibri_info info;
	__u32 sizes[] = { 0, 4, 8, COLIBRI_INFO_SIZE_VER0 - 8, COLIBRI_INFO_SIZE_VER0 - 1 };

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizes[i];
		EXPECT_EQ(-EINVAL, get_info(self->fd, &info)) TH_LOG("size %u", sizes[i]);
		EXPECT_EQ(0, info.abi_version) TH_LOG("size %u wrote output", sizes[i]);
	}
}

TEST_F(dev, get_info_accepts_larger_zero_tailed_struct)
{
	struct {
		struct colibri_info info;
		__u64 future[6];
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	ASSERT_EQ(0, get_info(self->fd, &big));
	EXPECT_EQ(COLIBRI_ABI_VERSION, big.info.abi_version);
	/* The kernel reports the size it knows and leaves the tail alone. */
	EXPECT_EQ(sizeof(big.info), big.info.size);
	for (int i = 0; i < 6; i++)
		EXPECT_EQ(0, big.future[i]);
}

TEST_F(dev, get_info_rejects_larger_struct_with_nonzero_tail)
{
	struct {
		struct colibri_info info;
		__u64 future[2];
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	big.future[1] = 1;
	/* copy_struct_from_user()'s answer, as openat2() and clone3() give */
	EXPECT_EQ(-E2BIG, get_info(self->fd, &big));
	EXPECT_EQ(0, big.info.abi_version);
}

TEST_F(dev, get_info_rejects_size_beyond_a_page)
{
	size_t len = 2 * getpagesize();
	struct colibri_info *info = calloc(1, len);

	ASSERT_NE(NULL, info);
	info->size = getpagesize() + 8;
	EXPECT_EQ(-EINVAL, get_info(self->fd, info));
	free(info);
}

TEST_F(dev, get_info_rejects_unknown_flags)
{
	for (int bit = 0; bit < 32; bit++) {
		struct colibri_info info = { .size = sizeof(info), .flags = 1u << bit };

		EXPECT_EQ(-EINVAL, get_info(self->fd, &info)) TH_LOG("flag bit %d", bit);
	}
}

TEST_F(dev, get_info_rejects_nonzero_reserved)
{
	/* numa_nodes is out only: in, it must be zero as it once was */
	struct colibri_info info = { .size = sizeof(info), .numa_nodes = 1 };

	EXPECT_EQ(-EINVAL, get_info(self->fd, &info));
	for (int i = 0; i < 4; i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.reserved[i] = 1ULL << 63;
		EXPECT_EQ(-EINVAL, get_info(self->fd, &info)) TH_LOG("reserved[%d]", i);
	}
}

TEST_F(dev, bad_user_pointers_are_efault)
{
	long page = getpagesize();
	char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct colibri_info *straddle;

	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(-EFAULT, get_info(self->fd, NULL));
	EXPECT_EQ(-EFAULT, get_info(self->fd, (void *)1));
	EXPECT_EQ(-EFAULT, get_info(self->fd, (void *)-4096L));

	/* A struct whose tail runs into an unmapped page. */
	ASSERT_EQ(0, munmap(map + page, page));
	straddle = (struct colibri_info *)(map + page - 16);
	memset(straddle, 0, 16);
	straddle->size = sizeof(*straddle);
	EXPECT_EQ(-EFAULT, get_info(self->fd, straddle));

	/* A read-only struct: input is fine, output cannot be written. */
	memset(map, 0, sizeof(struct colibri_info));
	((struct colibri_info *)map)->size = sizeof(struct colibri_info);
	ASSERT_EQ(0, mprotect(map, page, PROT_READ));
	EXPECT_EQ(-EFAULT, get_info(self->fd, map));
	munmap(map, page);
}

TEST_F(dev, unknown_ioctls_are_enotty)
{
	struct colibri_info info = { .size = sizeof(info) };

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(COLIBRI_IOC_MAGIC, 0x7f, struct colibri_info), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('X', 0x00, struct colibri_info), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(COLIBRI_IOC_MAGIC, 0x00, struct colibri_info), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO(COLIBRI_IOC_MAGIC, 0x00)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, FIONREAD, &info));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, ioctl_size_bits_are_ignored_struct_size_rules)
{
	struct colibri_info info = { .size = sizeof(info) };
	unsigned long cmd = _IOC(_IOC_READ | _IOC_WRITE, COLIBRI_IOC_MAGIC, 0x00, 8);

	ASSERT_EQ(0, ioctl(self->fd, cmd, &info));
	EXPECT_EQ(COLIBRI_ABI_VERSION, info.abi_version);
}

TEST(device_is_not_seekable_or_readable)
{
	int fd = open(COLIBRI_DEVICE_PATH, O_RDONLY);
	char c;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	EXPECT_EQ(-1, read(fd, &c, 1));
	close(fd);
}

TEST(many_opens_and_closes)
{
	int fds[256];

	for (int i = 0; i < 256; i++) {
		fds[i] = open(COLIBRI_DEVICE_PATH, O_RDWR);
		ASSERT_LE(0, fds[i]);
	}
	for (int i = 0; i < 256; i++)
		ASSERT_EQ(0, close(fds[i]));
}

TEST_HARNESS_MAIN
