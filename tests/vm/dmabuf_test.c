// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmabuf_test - COLIBRI_IOC_EXPORT_DMABUF: a model's weights as a read-only
 * dma-buf.  Permissions, the bytes a mapping shows, refused writes, the
 * model's lifetime under unload, and a real importer (vgem).
 *
 * Runs inside the vm-run guest with colibri.ko loaded, once per memory
 * provider (scripts/run-tests).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/dma-buf.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"

/*
 * The few DRM ioctls the importer test uses.  The uapi headers are not
 * installed everywhere (Debian ships them in libdrm-dev), so the stable ABI
 * is spelled out here when they are missing.
 */
#if __has_include(<drm/drm.h>)
#include <drm/drm.h>
#include <drm/drm_mode.h>
#else
struct drm_version {
	int version_major;
	int version_minor;
	int version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};
struct drm_gem_close { __u32 handle; __u32 pad; };
struct drm_gem_flink { __u32 handle; __u32 name; };
struct drm_gem_open { __u32 name; __u32 handle; __u64 size; };
struct drm_prime_handle { __u32 handle; __u32 flags; __s32 fd; };
struct drm_mode_map_dumb { __u32 handle; __u32 pad; __u64 offset; };
#define DRM_IOCTL_VERSION		_IOWR('d', 0x00, struct drm_version)
#define DRM_IOCTL_GEM_CLOSE		_IOW('d', 0x09, struct drm_gem_close)
#define DRM_IOCTL_GEM_FLINK		_IOWR('d', 0x0a, struct drm_gem_flink)
#define DRM_IOCTL_GEM_OPEN		_IOWR('d', 0x0b, struct drm_gem_open)
#define DRM_IOCTL_PRIME_HANDLE_TO_FD	_IOWR('d', 0x2d, struct drm_prime_handle)
#define DRM_IOCTL_PRIME_FD_TO_HANDLE	_IOWR('d', 0x2e, struct drm_prime_handle)
#define DRM_IOCTL_MODE_MAP_DUMB		_IOWR('d', 0xB3, struct drm_mode_map_dumb)
#endif

#define MODEL "dmb"

static int export_raw(int fd, struct colibri_export *e)
{
	return ioctl(fd, COLIBRI_IOC_EXPORT_DMABUF, e) ? -errno : 0;
}

/* Exports @name; returns the dma-buf fd or -errno; *bytes gets its size. */
static int export(int fd, const char *name, unsigned long long *bytes)
{
	struct colibri_export e = { .size = sizeof(e) };
	int ret;

	strncpy(e.name, name, sizeof(e.name) - 1);
	ret = export_raw(fd, &e);
	if (ret)
		return ret;
	if (bytes)
		*bytes = e.bytes;
	return e.fd;
}

static int model_listed(int fd, const char *name)
{
	struct colibri_model_entry e[16];
	int n = colibri_dev_list(fd, e, 16);

	for (int i = 0; i < n && i < 16; i++)
		if (!strcmp(e[i].name, name))
			return 1;
	return 0;
}

/* Compares a mapping of the whole dma-buf with the file's data region. */
static int same_as_file(const unsigned char *map, unsigned long long bytes,
			const struct cbfile *f, char *why, size_t whylen)
{
	const unsigned char *data = f->map + f->info.data_offset;
	unsigned long long n = f->info.data_size, i;

	if (bytes < n) {
		snprintf(why, whylen, "dma-buf %llu bytes < data region %llu", bytes, n);
		return 0;
	}
	if (memcmp(map, data, n)) {
		for (i = 0; i < n && map[i] == data[i]; i++)
			;
		snprintf(why, whylen, "first difference at byte %llu of %llu", i, n);
		return 0;
	}
	for (i = n; i < bytes; i++)
		if (map[i]) {
			snprintf(why, whylen, "padding byte %llu is %u, not 0", i, map[i]);
			return 0;
		}
	return 1;
}

FIXTURE(dmabuf) {
	int fd;
	char path[4096];
	struct cbfile *file;
	unsigned long long bytes;	/* the model's pinned bytes (LOAD) */
	unsigned long long used0;	/* mem_used before the load */
};

FIXTURE_SETUP(dmabuf)
{
	char err[256] = "";

	ASSERT_EQ(0, fixture("mixtral-f32", self->path, sizeof(self->path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", self->path);
	self->file = cbfile_open(self->path, 0, err, sizeof(err));
	ASSERT_NE(NULL, self->file) TH_LOG("%s", err);
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	self->used0 = info_now(self->fd).mem_used;
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, MODEL, NULL, &self->bytes));
}

FIXTURE_TEARDOWN(dmabuf)
{
	colibri_dev_unload(self->fd, MODEL, 0);
	close(self->fd);
	cbfile_close(self->file);
}

TEST_F(dmabuf, export_gives_a_read_only_cloexec_fd_of_the_model_size)
{
	unsigned long long bytes = 0, page = sysconf(_SC_PAGESIZE);
	char link[64], target[256] = "";
	int dfd = export(self->fd, MODEL, &bytes);

	ASSERT_LE(0, dfd) TH_LOG("export: %s", strerror(-dfd));
	EXPECT_EQ(O_RDONLY, fcntl(dfd, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(FD_CLOEXEC, fcntl(dfd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(self->bytes, bytes);
	EXPECT_EQ((self->file->info.data_size + page - 1) / page * page, bytes);
	EXPECT_EQ((off_t)bytes, lseek(dfd, 0, SEEK_END));
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
	EXPECT_LT(0, readlink(link, target, sizeof(target) - 1));
	EXPECT_EQ(0, strncmp(target, "/dmabuf:", 8)) TH_LOG("fd is %s", target);
	close(dfd);
}

TEST_F(dmabuf, export_needs_cap_sys_admin)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		/* Drop to nobody in the device's group: every capability goes. */
		if (vm_drop_to_member(65534))
			_exit(10);
		fd = open(COLIBRI_DEVICE_PATH, O_RDWR);
		if (fd < 0)
			_exit(11);
		_exit(export(fd, MODEL, NULL) == -EPERM ? 0 : 12);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(dmabuf, bad_arguments_are_refused)
{
	struct colibri_export e;

	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	strcpy(e.name, MODEL);
	e.flags = 1;
	EXPECT_EQ(-EINVAL, export_raw(self->fd, &e));
	e.flags = 0;
	e.reserved0 = 1;
	EXPECT_EQ(-EINVAL, export_raw(self->fd, &e));
	e.reserved0 = 0;
	e.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, export_raw(self->fd, &e));
	e.reserved[3] = 0;
	e.size = COLIBRI_EXPORT_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, export_raw(self->fd, &e));
	e.size = sizeof(e);
	EXPECT_EQ(-EFAULT, ioctl(self->fd, COLIBRI_IOC_EXPORT_DMABUF, (void *)8) ? -errno : 0);
	EXPECT_EQ(-ENOENT, export(self->fd, "nosuch", NULL));
	EXPECT_EQ(-EINVAL, export(self->fd, "", NULL));
	EXPECT_EQ(-EINVAL, export(self->fd, "bad/name", NULL));
}

TEST_F(dmabuf, mmap_shows_exactly_the_files_data_region)
{
	unsigned long long bytes = 0, page = sysconf(_SC_PAGESIZE);
	char why[128] = "";
	unsigned char *map, *priv, *tail;
	int dfd = export(self->fd, MODEL, &bytes);

	ASSERT_LE(0, dfd);
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, dfd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_TRUE(same_as_file(map, bytes, self->file, why, sizeof(why))) TH_LOG("%s", why);

	/* A private read-only mapping shows the same bytes. */
	priv = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, dfd, 0);
	ASSERT_NE(MAP_FAILED, priv);
	EXPECT_EQ(0, memcmp(map, priv, bytes));
	munmap(priv, bytes);

	/* So does a mapping of the last page alone, at its offset. */
	tail = mmap(NULL, page, PROT_READ, MAP_SHARED, dfd, bytes - page);
	ASSERT_NE(MAP_FAILED, tail);
	EXPECT_EQ(0, memcmp(map + bytes - page, tail, page));
	munmap(tail, page);

	/* Nothing past the end. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, page, PROT_READ, MAP_SHARED, dfd, bytes));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, bytes + page, PROT_READ, MAP_SHARED, dfd, 0));
	munmap(map, bytes);
	close(dfd);
}

TEST_F(dmabuf, write_access_is_refused)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	unsigned long long bytes = 0;
	unsigned char *map;
	int dfd = export(self->fd, MODEL, &bytes);

	ASSERT_LE(0, dfd);
	/* Shared writable: the file is read-only (the core says so). */
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0));
	EXPECT_EQ(EACCES, errno);
	/* Private writable (copy-on-write): the exporter says no. */
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, dfd, 0));
	EXPECT_EQ(EPERM, errno);
	/* Nor can write permission be added later, shared or private. */
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, dfd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(-1, mprotect(map, bytes, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(map, bytes);
	map = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, dfd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(-1, mprotect(map, bytes, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(map, bytes);

	/* CPU access for reading is fine; for writing it is refused. */
	EXPECT_EQ(0, ioctl(dfd, DMA_BUF_IOCTL_SYNC, &sync));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	EXPECT_EQ(0, ioctl(dfd, DMA_BUF_IOCTL_SYNC, &sync));
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE;
	EXPECT_EQ(-1, ioctl(dfd, DMA_BUF_IOCTL_SYNC, &sync));
	EXPECT_EQ(EPERM, errno);
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
	EXPECT_EQ(-1, ioctl(dfd, DMA_BUF_IOCTL_SYNC, &sync));
	EXPECT_EQ(EPERM, errno);
	close(dfd);
}

TEST_F(dmabuf, two_exports_are_independent_dma_bufs)
{
	unsigned long long bytes = 0;
	struct stat a, b;
	unsigned char *map;
	char why[128] = "";
	int d1 = export(self->fd, MODEL, &bytes), d2 = export(self->fd, MODEL, NULL);

	ASSERT_LE(0, d1);
	ASSERT_LE(0, d2);
	ASSERT_EQ(0, fstat(d1, &a));
	ASSERT_EQ(0, fstat(d2, &b));
	EXPECT_NE(a.st_ino, b.st_ino);
	close(d1);
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, d2, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_TRUE(same_as_file(map, bytes, self->file, why, sizeof(why))) TH_LOG("%s", why);
	munmap(map, bytes);
	close(d2);
}

TEST_F(dmabuf, unload_unpublishes_and_memory_goes_with_the_last_dma_buf)
{
	unsigned long long bytes = 0;
	unsigned char *map;
	char why[128] = "";
	int d1 = export(self->fd, MODEL, &bytes), d2 = export(self->fd, MODEL, NULL);

	ASSERT_LE(0, d1);
	ASSERT_LE(0, d2);
	EXPECT_EQ(self->used0 + bytes, info_now(self->fd).mem_used);
	ASSERT_EQ(0, colibri_dev_unload(self->fd, MODEL, 0));
	/* Unpublished: gone from the list, the count and new exports ... */
	EXPECT_EQ(0, model_listed(self->fd, MODEL));
	EXPECT_EQ(0, info_now(self->fd).nr_models);
	EXPECT_EQ(-ENOENT, export(self->fd, MODEL, NULL));
	EXPECT_EQ(-1, access("/sys/kernel/colibri/models/" MODEL, F_OK));
	/* ... but its memory stays, and still holds the weights. */
	EXPECT_EQ(self->used0 + bytes, info_now(self->fd).mem_used);
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, d1, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_TRUE(same_as_file(map, bytes, self->file, why, sizeof(why))) TH_LOG("%s", why);
	/* The name is free for a new load meanwhile. */
	EXPECT_EQ(0, colibri_dev_load(self->fd, self->path, MODEL, NULL, NULL));
	EXPECT_EQ(self->used0 + 2 * bytes, info_now(self->fd).mem_used);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, MODEL, 0));
	EXPECT_EQ(self->used0 + bytes, info_now(self->fd).mem_used);

	/* A mapping holds the dma-buf as well as its fd does. */
	close(d1);
	EXPECT_EQ(self->used0 + bytes, info_now(self->fd).mem_used);
	close(d2);
	EXPECT_EQ(self->used0 + bytes, info_now(self->fd).mem_used);
	EXPECT_EQ(0, memcmp(map, self->file->map + self->file->info.data_offset,
			    self->file->info.data_size));
	munmap(map, bytes);
	EXPECT_EQ(self->used0, info_now(self->fd).mem_used);
}

TEST_F(dmabuf, sessions_and_dma_bufs_both_hold_the_model)
{
	unsigned long long bytes = 0;
	int s = colibri_dev_open(), dfd;

	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, MODEL, 64, 4, NULL));
	dfd = export(self->fd, MODEL, &bytes);
	ASSERT_LE(0, dfd);
	/* A session still refuses a plain unload; a dma-buf does not. */
	EXPECT_EQ(-EBUSY, colibri_dev_unload(self->fd, MODEL, 0));
	close(s);
	ASSERT_EQ(0, colibri_dev_unload(self->fd, MODEL, 0));
	/* The session's arena is gone; the weights stay for the dma-buf. */
	EXPECT_EQ(self->used0 + bytes, info_now(self->fd).mem_used);
	EXPECT_EQ(0, info_now(self->fd).nr_sessions);
	close(dfd);
	EXPECT_EQ(self->used0, info_now(self->fd).mem_used);

	/* The other order: the dma-buf goes first, the session last. */
	ASSERT_EQ(0, colibri_dev_load(self->fd, self->path, MODEL, NULL, NULL));
	s = colibri_dev_open();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, colibri_dev_attach(s, MODEL, 64, 4, NULL));
	dfd = export(self->fd, MODEL, NULL);
	ASSERT_LE(0, dfd);
	close(dfd);
	EXPECT_EQ(-EBUSY, colibri_dev_unload(self->fd, MODEL, 0));
	close(s);
	EXPECT_EQ(0, colibri_dev_unload(self->fd, MODEL, 0));
	EXPECT_EQ(self->used0, info_now(self->fd).mem_used);
}

TEST_F(dmabuf, the_module_stays_while_a_dma_buf_exists)
{
	int dfd = export(self->fd, MODEL, NULL);

	ASSERT_LE(0, dfd);
	ASSERT_EQ(0, colibri_dev_unload(self->fd, MODEL, 0));
	close(self->fd);
	self->fd = -1;
	/* No /dev/colibri file is open, but the dma-buf holds the module. */
	EXPECT_EQ(-1, syscall(SYS_delete_module, "colibri", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	close(dfd);
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(self->used0, info_now(self->fd).mem_used);
}

/* --- a real importer: vgem --------------------------------------------- */

/* Opens the DRM primary node whose driver is vgem, loading it if needed. */
static int open_vgem(void)
{
	char path[64], name[32];
	int tries;

	for (tries = 0; tries < 2; tries++) {
		DIR *d = opendir("/dev/dri");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			struct drm_version v;
			int fd;

			if (strncmp(de->d_name, "card", 4))
				continue;
			snprintf(path, sizeof(path), "/dev/dri/%s", de->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			memset(&v, 0, sizeof(v));
			memset(name, 0, sizeof(name));
			v.name = name;
			v.name_len = sizeof(name) - 1;
			if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem")) {
				closedir(d);
				return fd;
			}
			close(fd);
		}
		if (d)
			closedir(d);
		if (!tries && system("modprobe vgem >/dev/null 2>&1"))
			break;
	}
	return -1;
}

/* Does debugfs' bufinfo list a dma-buf named @name attached to @dev? */
static int bufinfo_attached(const char *name, const char *dev)
{
	char line[512];
	int in = 0, found = 0;
	FILE *f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A buffer's line ends with its exporter and name. */
		if (strstr(line, "colibri"))
			in = strstr(line, name) != NULL;
		else if (in && strstr(line, dev))
			found = 1;
	}
	fclose(f);
	return found;
}

FIXTURE(vgem) {
	int fd;		/* /dev/colibri */
	int card;	/* vgem */
	struct cbfile *file;
	unsigned long long used0;
};

FIXTURE_SETUP(vgem)
{
	char path[4096], err[256] = "";

	self->card = -1;
	ASSERT_EQ(0, fixture("mixtral-f32", path, sizeof(path)))
		TH_LOG("missing fixture %s (run tests/vm/make-fixtures)", path);
	self->file = cbfile_open(path, 0, err, sizeof(err));
	ASSERT_NE(NULL, self->file) TH_LOG("%s", err);
	self->fd = colibri_dev_open();
	ASSERT_LE(0, self->fd);
	self->used0 = info_now(self->fd).mem_used;
	ASSERT_EQ(0, colibri_dev_load(self->fd, path, MODEL, NULL, NULL));
	self->card = open_vgem();
}

FIXTURE_TEARDOWN(vgem)
{
	if (self->card >= 0)
		close(self->card);
	colibri_dev_unload(self->fd, MODEL, 0);
	close(self->fd);
	cbfile_close(self->file);
}

TEST_F(vgem, vgem_imports_maps_and_holds_the_weights)
{
	struct drm_prime_handle ph = { .flags = 0 };
	struct drm_mode_map_dumb md = { 0 };
	struct drm_gem_flink fl = { 0 };
	struct drm_gem_open go = { 0 };
	struct drm_gem_close gc = { 0 };
	unsigned long long bytes = 0;
	struct stat a, b;
	unsigned char *map;
	char why[128] = "";
	int dfd, back, r;

	/* The harness runs the test even when its setup skips: decide here. */
	if (self->card < 0)
		SKIP(return, "no vgem DRM device (modprobe vgem failed)");
	dfd = export(self->fd, MODEL, &bytes);
	ASSERT_LE(0, dfd);
	/* Import: vgem attaches and maps the attachment (our sg_table). */
	ph.fd = dfd;
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph))
		TH_LOG("PRIME_FD_TO_HANDLE: %s", strerror(errno));
	r = bufinfo_attached(MODEL, "vgem");
	if (r < 0)
		TH_LOG("no debugfs dma_buf/bufinfo: the attachment list is not checked");
	else
		EXPECT_EQ(1, r) TH_LOG("bufinfo does not show vgem attached");

	/* The importer sees the dma-buf's size. */
	fl.handle = ph.handle;
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_GEM_FLINK, &fl))
		TH_LOG("GEM_FLINK: %s", strerror(errno));
	go.name = fl.name;
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_GEM_OPEN, &go));
	EXPECT_EQ(bytes, go.size);
	gc.handle = go.handle;		/* a second handle of the same object */
	EXPECT_EQ(0, ioctl(self->card, DRM_IOCTL_GEM_CLOSE, &gc));

	/*
	 * Mapping through the card: DRM refuses a dumb map offset for an
	 * imported object (drm_gem_dumb_map_offset(): "Don't allow imported
	 * objects to be mapped", -EINVAL), in 6.1 and 6.12 alike, and vgem
	 * has no mmap-offset ioctl of its own.  Should a kernel allow it, the
	 * mapping must show the weights.
	 */
	md.handle = ph.handle;
	if (ioctl(self->card, DRM_IOCTL_MODE_MAP_DUMB, &md)) {
		EXPECT_EQ(EINVAL, errno);
		TH_LOG("MODE_MAP_DUMB of an imported object: %s (DRM refuses it)",
		       strerror(errno));
	} else {
		map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, self->card, md.offset);
		ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap of the card: %s", strerror(errno));
		EXPECT_TRUE(same_as_file(map, bytes, self->file, why, sizeof(why)))
			TH_LOG("%s", why);
		munmap(map, bytes);
	}

	/* Re-export gives back our dma-buf, whose mapping shows the weights. */
	ph.fd = -1;
	ph.flags = O_CLOEXEC;
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph));
	back = ph.fd;
	ASSERT_EQ(0, fstat(dfd, &a));
	ASSERT_EQ(0, fstat(back, &b));
	EXPECT_EQ(a.st_ino, b.st_ino);
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, back, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_TRUE(same_as_file(map, bytes, self->file, why, sizeof(why))) TH_LOG("%s", why);
	munmap(map, bytes);
	close(back);

	/* The importer alone keeps the model's memory alive. */
	close(dfd);
	ASSERT_EQ(0, colibri_dev_unload(self->fd, MODEL, 0));
	EXPECT_EQ(0, info_now(self->fd).nr_models);
	EXPECT_LT(self->used0, info_now(self->fd).mem_used);
	gc.handle = ph.handle;
	EXPECT_EQ(0, ioctl(self->card, DRM_IOCTL_GEM_CLOSE, &gc));
	/* vgem lets go of the dma-buf when the object's last handle goes. */
	EXPECT_EQ(self->used0, info_now(self->fd).mem_used);
}

TEST_HARNESS_MAIN
