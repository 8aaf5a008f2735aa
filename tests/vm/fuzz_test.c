// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_test - the attack suite, part 1: random commands and hostile files.
 *
 * - random_ioctls_and_uring_cmds: processes (root and nobody) send random
 *   ioctl command numbers with random sizes and contents, bad, unaligned,
 *   read-only and kernel pointers, and random URING_CMDs; meanwhile timers
 *   interrupt them, threads close their descriptors and fork in the middle
 *   of calls, and the parent kills and replaces them.
 * - hostile_model_files_with_valid_checksums: fixture and generated model
 *   files with random fields of header, config and directory changed and
 *   every checksum made right again, so that only the validator stands
 *   between them and the engine; the ones it accepts are attached and run.
 *
 * Each part is seeded and time-boxed (attack.h).  Each ends with the
 * module holding nothing and a clean kernel log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "attack.h"
#include "colibri_format.h"
#include "format/cb_format.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

/* --- the random command fuzzer --------------------------------------------- */

#define NWORKERS 4	/* two as root, two as nobody */
#define NFD 4		/* device descriptors per worker */
#define BUF 8192

/* What the workers did, all together (shared memory; relaxed adds). */
struct fz_counts {
	long ioctls, urings, cqes, mid_calls, attaches;
	long err[134];			/* ioctl results by errno (0: success) */
};

static struct fz_counts *fz_n;

static void fz_count(int ret)
{
	__atomic_add_fetch(&fz_n->err[-ret >= 0 && -ret < 134 ? -ret : 133], 1, __ATOMIC_RELAXED);
}

/* What one worker plays with. */
struct fz {
	struct rng r;
	int fds[NFD];
	int files[6];		/* descriptors LOAD is given */
	char *buf;		/* BUF bytes, then an unmapped guard page */
	char *ro;		/* a read-only page */
	struct io_uring ring;
	int has_ring;
	char path[4096];
};

static void fill(struct fz *z, void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = below(&z->r, 4) ? 0 : (uint8_t)rnd(&z->r);
}

/* The struct sizes of the commands, by number (LIST: 48, EXPORT: 88). */
static uint32_t struct_size(unsigned int nr)
{
	static const uint32_t sz[] = { 112, 88, 56, 104, 104, 48, 120 };

	return nr < ARRAY_SIZE(sz) ? sz[nr] : nr == 0x10 ? 88 : 64;
}

/* A size the kernel will weigh: the struct's own, around it, or anything. */
static uint32_t pick_size(struct fz *z, unsigned int nr)
{
	switch (below(&z->r, 5)) {
	case 0:
	case 1:
		return struct_size(nr);
	case 2:		/* larger, zero-tailed or not */
		return struct_size(nr) + 8 * below(&z->r, 8);
	case 3:
		return struct_size(nr) + below(&z->r, 16) - 8;
	default:
		return below(&z->r, 5000);
	}
}

/* An argument pointer: mostly the buffer, sometimes one to make it fault. */
static void *pick_ptr(struct fz *z, size_t want)
{
	switch (below(&z->r, 20)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)below(&z->r, 4096);
	case 2:
		return (void *)(0xffffffff80000000ULL + below(&z->r, 1 << 20));
	case 3:		/* runs into the guard page */
		return z->buf + BUF - below(&z->r, want + 1);
	case 4:
		return z->ro;
	case 5:
		return z->buf + 1 + below(&z->r, 7);	/* unaligned */
	default:
		return z->buf + 8 * below(&z->r, 64);
	}
}

static unsigned long pick_cmd(struct fz *z)
{
	static const unsigned int nrs[] = { 0, 1, 2, 3, 4, 5, 6, 0x10 };
	unsigned int nr = below(&z->r, 8) ? nrs[below(&z->r, ARRAY_SIZE(nrs))] : below(&z->r, 256);
	unsigned int dir = below(&z->r, 8) ? _IOC_READ | _IOC_WRITE : below(&z->r, 4);

	/* Mostly commands that pass the dispatcher, so that the handlers see them. */
	if (!below(&z->r, 16))
		return (unsigned long)(uint32_t)rnd(&z->r);
	return _IOC(dir, below(&z->r, 32) ? COLIBRI_IOC_MAGIC : below(&z->r, 256), nr,
		    below(&z->r, 1 << 14));
}

/*
 * A random argument in the buffer: its size field, random flags, the model
 * name where the named commands keep it (offset 8, LOAD's at 16), a file
 * descriptor where LOAD keeps one, and now and then valid pointers into
 * the buffer where the structs keep theirs.
 */
static void shape_arg(struct fz *z, char *a, unsigned int nr)
{
	memset(a, 0, 256);
	if (!below(&z->r, 4))
		fill(z, a, 256);
	else
		for (int k = below(&z->r, 4); k > 0; k--)	/* a few stray bytes */
			a[below(&z->r, 256)] = (char)rnd(&z->r);
	*(uint32_t *)a = pick_size(z, nr);
	*(uint32_t *)(a + 4) = below(&z->r, 3) ? 0 : 1u << below(&z->r, 32);
	if (below(&z->r, 3)) {
		const char *name = below(&z->r, 4) ? "fz" : "fz2";

		memset(a + (nr == 1 ? 16 : 8), 0, COLIBRI_NAME_LEN);
		strcpy(a + (nr == 1 ? 16 : 8), name);
	}
	if (nr == 1)
		*(int32_t *)(a + 8) = z->files[below(&z->r, ARRAY_SIZE(z->files))];
	for (int i = 0; i < 3 && below(&z->r, 2); i++)
		*(uint64_t *)(a + 8 * (1 + below(&z->r, 12))) =
			(uintptr_t)(z->buf + 2048 + 8 * below(&z->r, 128));
	if (nr == 4 && below(&z->r, 2)) {	/* a plausible SUBMIT */
		struct colibri_submit *s = (void *)a;

		s->size = sizeof(*s);
		s->flags &= COLIBRI_SUBMIT_FLAGS_ALL;
		s->tokens = (uintptr_t)(z->buf + 4096);
		s->n_tokens = below(&z->r, 80);
		s->logits = (uintptr_t)(z->buf + 4096);
		s->logits_len = below(&z->r, 2) ? 1024 : below(&z->r, 100000);
		memset(s->reserved, 0, sizeof(s->reserved));
	}
}

static void fz_ioctl(struct fz *z)
{
	unsigned long cmd = pick_cmd(z);
	char *a = pick_ptr(z, 256);
	int fd = z->fds[below(&z->r, NFD)];

	int ret;

	if (a >= z->buf && a + 256 <= z->buf + BUF)
		shape_arg(z, a, _IOC_NR(cmd));
	ret = ioctl(fd, cmd, a) ? -errno : 0;
	__atomic_add_fetch(&fz_n->ioctls, 1, __ATOMIC_RELAXED);
	fz_count(ret);
	if (!ret && _IOC_NR(cmd) == 0x10 && a >= z->buf && a + 48 <= z->buf + BUF)
		close(*(int32_t *)(a + 40));	/* an exported dma-buf */
}

static void fz_attach(struct fz *z, int fd)
{
	int ret = colibri_dev_attach(fd, below(&z->r, 4) ? "fz" : "fz2", below(&z->r, 300),
				     below(&z->r, 4) ? below(&z->r, 80) : below(&z->r, 5000), NULL);

	__atomic_add_fetch(&fz_n->attaches, !ret, __ATOMIC_RELAXED);
}

static void fz_uring(struct fz *z)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { 0, 20 * 1000 * 1000 };
	char *a = z->buf + 64 * below(&z->r, 16);

	if (!z->has_ring)
		return;
	sqe = io_uring_get_sqe(&z->ring);
	if (!sqe)
		goto reap;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = z->fds[below(&z->r, NFD)];
	sqe->cmd_op = below(&z->r, 4) ? COLIBRI_IOC_SUBMIT : (uint32_t)pick_cmd(z);
	sqe->uring_cmd_flags = below(&z->r, 8) ? 0 : (uint32_t)rnd(&z->r);
	shape_arg(z, a, 4);
	*(uint64_t *)sqe->cmd = below(&z->r, 8) ? (uintptr_t)a : (uintptr_t)pick_ptr(z, 104);
	*(uint64_t *)(sqe->cmd + 8) = below(&z->r, 8) ? 0 : rnd(&z->r);
	io_uring_sqe_set_data64(sqe, rnd(&z->r));
	if (io_uring_submit(&z->ring) > 0)
		__atomic_add_fetch(&fz_n->urings, 1, __ATOMIC_RELAXED);
reap:
	while (!io_uring_wait_cqe_timeout(&z->ring, &cqe, &ts)) {
		__atomic_add_fetch(&fz_n->cqes, 1, __ATOMIC_RELAXED);
		io_uring_cqe_seen(&z->ring, cqe);
	}
}

/* A SUBMIT that takes a while, for the close/fork-mid-call moves. */
static void *fz_long_submit(void *p)
{
	struct fz *z = p;
	uint32_t *t = (uint32_t *)(z->buf + 4096);
	struct colibri_submit s = { .size = sizeof(s) };

	for (int i = 0; i < 64; i++)
		t[i] = i;
	s.tokens = (uintptr_t)t;
	s.n_tokens = 64;
	s.flags = COLIBRI_SUBMIT_RESET;
	ioctl(z->fds[0], COLIBRI_IOC_SUBMIT, &s);
	return NULL;
}

static void fz_mid_call(struct fz *z)
{
	pthread_t t;
	int fork_it = below(&z->r, 2);

	fz_attach(z, z->fds[0]);
	if (pthread_create(&t, NULL, fz_long_submit, z))
		return;
	__atomic_add_fetch(&fz_n->mid_calls, 1, __ATOMIC_RELAXED);
	usleep(below(&z->r, 20000));
	if (fork_it) {
		/*
		 * The child outlives nothing: killed with this worker (a
		 * fork clears the parent-death signal; attack_fork() sets it
		 * again), reaped by the part's process (part_end()).
		 */
		pid_t pid = attack_fork();

		if (!pid) {
			for (int i = 0; i < 8; i++)
				fz_ioctl(z);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	} else {
		/* The descriptor goes (or becomes another file) under the call. */
		int nul = open("/dev/null", O_RDWR);

		if (below(&z->r, 2))
			dup2(nul, z->fds[0]);
		else
			close(z->fds[0]);
		close(nul);
	}
	pthread_join(t, NULL);
	close(z->fds[0]);
	z->fds[0] = colibri_dev_open();
}

static void fz_worker(uint64_t seed, int as_nobody, double until, const char *model)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	struct fz z = { .r = rng_of(seed) };
	int p[2];

	attack_signals();
	z.buf = mmap(NULL, BUF + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z.buf == MAP_FAILED)
		_exit(2);
	munmap(z.buf + BUF, 4096);			/* the guard page */
	z.ro = z.buf + BUF + 4096;
	mprotect(z.ro, 4096, PROT_READ);
	for (int i = 0; i < NFD; i++)
		z.fds[i] = colibri_dev_open();
	/* What LOAD gets: the model, nothing, a pipe, the device, a directory, a bad number. */
	z.files[0] = open(model, O_RDONLY);
	z.files[1] = open("/dev/null", O_RDONLY);
	z.files[2] = pipe(p) ? -1 : p[0];
	z.files[3] = z.fds[1];
	z.files[4] = open("/tmp", O_RDONLY | O_DIRECTORY);
	z.files[5] = 9999;
	if (as_nobody && drop_to(NOBODY))
		_exit(3);
	attack_signals();
	z.has_ring = !io_uring_queue_init(8, &z.ring, below(&z.r, 2) ? IORING_SETUP_SQE128 : 0);

	while (mono_now() < until) {
		uint32_t move = below(&z.r, 100);

		if (!below(&z.r, 16)) {		/* an interrupt 1-20 ms from now */
			it.it_value.tv_usec = 1000 + below(&z.r, 19000);
			setitimer(ITIMER_REAL, &it, NULL);
		}
		if (move < 45)
			fz_ioctl(&z);
		else if (move < 65)
			fz_uring(&z);
		else if (move < 80)
			fz_attach(&z, z.fds[below(&z.r, NFD)]);
		else if (move < 88)
			fz_mid_call(&z);
		else if (move < 95) {
			int i = below(&z.r, NFD);

			close(z.fds[i]);
			z.fds[i] = colibri_dev_open();
		} else {
			usleep(below(&z.r, 5000));
		}
	}
	_exit(0);
}

/*
 * Random commands from four processes (two as root, so that LOAD, UNLOAD
 * and EXPORT_DMABUF are reached past their capability check) for the time
 * box, with the parent killing and replacing one every second or so.
 * Afterwards: nothing pinned, no session, a clean kernel log.
 */
TEST(random_ioctls_and_uring_cmds)
{
	struct rng r = rng_of(part_seed("random_ioctls_and_uring_cmds", 1));
	double until = mono_now() + attack_secs(), mid = until - attack_secs() / 2;
	int fd = colibri_dev_open(), kmsg = kmsg_open(), kills = 0, orphans, n;
	long half = -1;		/* calls in the first half of the time box */
	pid_t w[NWORKERS];
	char path[4096], first[512];

	ASSERT_LE(0, fd);
	ASSERT_LE(0, kmsg);
	fz_n = mmap(NULL, sizeof(*fz_n), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fz_n);
	ASSERT_EQ(0, fixture("mixtral-q4_0", path, sizeof(path)));
	unload_all(fd);
	ASSERT_EQ(0, colibri_dev_load(fd, path, "fz", NULL, NULL));
	part_begin();
	for (int i = 0; i < NWORKERS; i++) {
		w[i] = attack_fork();
		ASSERT_LE(0, w[i]);
		if (!w[i])
			fz_worker(rnd(&r), i >= 2, until, path);
	}
	while (mono_now() < until) {
		int i = below(&r, NWORKERS);
		double nap = 0.5 + below(&r, 1000) / 1000.0, now = mono_now();

		/* wake at the middle of the time box once, to count the first half */
		if (half < 0 && now + nap > mid)
			nap = mid > now ? mid - now : 0;
		usleep((useconds_t)(nap * 1e6));
		if (half < 0 && mono_now() >= mid)
			half = __atomic_load_n(&fz_n->ioctls, __ATOMIC_RELAXED);
		if (mono_now() >= until)
			break;
		kill(w[i], SIGKILL);
		waitpid(w[i], NULL, 0);
		kills++;
		w[i] = attack_fork();
		ASSERT_LE(0, w[i]);
		if (!w[i])
			fz_worker(rnd(&r), i >= 2, until, path);
	}
	for (int i = 0; i < NWORKERS; i++) {
		kill(w[i], SIGKILL);
		waitpid(w[i], NULL, 0);
	}
	/* The children of killed workers too, before anything is checked. */
	orphans = part_end();
	n = colibri_dev_list(fd, NULL, 0);
	TH_LOG("%d workers killed and replaced, %d orphans of theirs reaped; %d models loaded at the end",
	       kills, orphans, n);
	{
		char hist[512] = "";

		for (int e = 0; e < 134; e++)
			if (fz_n->err[e])
				snprintf(hist + strlen(hist), sizeof(hist) - strlen(hist), " %s %ld",
					 e ? strerrorname_np(e) ?: "?" : "ok", fz_n->err[e]);
		TH_LOG("%ld ioctls (%ld in the first half):%s", fz_n->ioctls, half, hist);
	}
	TH_LOG("%ld sessions attached, %ld URING_CMDs submitted, %ld completions reaped, %ld close/fork mid-call",
	       fz_n->attaches, fz_n->urings, fz_n->cqes, fz_n->mid_calls);
	/*
	 * A fuzzer that stalls or dies early makes (nearly) no calls in one
	 * half of the time box.  Not a rate: work per wall-clock second falls
	 * with the host's load (50 per second is usual; 22 were seen in a
	 * soak with the host's two cores running three guests, below the
	 * 25 per second an earlier floor assumed), so each half only needs a
	 * few calls, far below any load yet seen.
	 */
	EXPECT_LE(10, half) TH_LOG("the fuzzer hardly ran in the first half: %ld ioctls", half);
	EXPECT_LE(10, fz_n->ioctls - half)
		TH_LOG("the fuzzer stalled: %ld ioctls in the first half, %ld in the second", half,
		       fz_n->ioctls - half);
	EXPECT_LT(0, fz_n->err[0]);
	EXPECT_LT(0, fz_n->cqes);
	unload_all(fd);
	EXPECT_EQ(0, settle_to(fd, 0, 20000));
	EXPECT_EQ(0, info_now(fd).nr_sessions);
	EXPECT_EQ(0, info_now(fd).nr_models);
	EXPECT_EQ(0, kmsg_bad(kmsg, first, sizeof(first))) TH_LOG("kernel: %s", first);
	close(kmsg);
	close(fd);
}

/* --- hostile model files ------------------------------------------------------ */

/* Checksums over the bytes as they are now: tensors, tokenizer, header. */
static void reseal(uint8_t *b, size_t size)
{
	struct colibri_file_header *h = (void *)b;
	uint64_t dir_end;
	uint32_t crc;

	if (size < COLIBRI_FILE_HEADER_SIZE)
		return;
	dir_end = COLIBRI_FILE_HEADER_SIZE + (uint64_t)h->n_tensors * COLIBRI_FILE_TENSOR_SIZE;
	if (dir_end > size)
		return;
	for (uint32_t i = 0; i < h->n_tensors; i++) {
		struct colibri_file_tensor *t = (void *)(b + COLIBRI_FILE_HEADER_SIZE +
							 (uint64_t)i * COLIBRI_FILE_TENSOR_SIZE);
		uint64_t at = h->data_offset + t->offset;

		if (h->data_offset <= size && t->offset <= size && at <= size && t->size <= size - at)
			t->crc32c = cb_crc32c(0, b + at, t->size);
	}
	if (h->tok_offset <= size && h->tok_size <= size - h->tok_offset)
		h->tok_crc32c = cb_crc32c(0, b + h->tok_offset, h->tok_size);
	crc = cb_crc32c(0, b, COLIBRI_FILE_HEADER_CRC_OFFSET);
	crc = cb_crc32c(crc, "\0\0\0\0", 4);
	crc = cb_crc32c(crc, b + COLIBRI_FILE_HEADER_CRC_OFFSET + 4,
			dir_end - COLIBRI_FILE_HEADER_CRC_OFFSET - 4);
	h->header_crc32c = crc;
}

/* A value that tends to break things: edges, powers of two, anything. */
static uint64_t nasty(struct rng *r)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 7, 64, 4095, 4096, 65535, 1u << 20, 1u << 24,
				      0x7fffffff, 0x80000000, 0xffffffff, 1ULL << 32,
				      1ULL << 48, ~0ULL };

	return below(r, 3) ? v[below(r, ARRAY_SIZE(v))] : rnd(r) >> below(r, 64);
}

static void mutate(struct rng *r, uint8_t **bp, size_t *sizep)
{
	uint8_t *b = *bp;
	size_t size = *sizep;
	struct colibri_file_header *h = (void *)b;
	uint32_t n = size >= 512 ? h->n_tensors : 0;

	switch (below(r, 6)) {
	case 0:		/* a header field */
		if (size >= 512) {
			size_t off = 8 + 4 * below(r, (336 - 8) / 4);

			if (off >= 112 && off < 176)
				off = 64;	/* not the name */
			*(uint32_t *)(b + off) = (uint32_t)nasty(r);
		}
		break;
	case 1:		/* a config field */
		if (size >= 512)
			*(uint32_t *)(b + 176 + 4 * below(r, 24)) = (uint32_t)nasty(r);
		break;
	case 2:		/* a directory field */
		if (n && 512 + (uint64_t)n * 64 <= size) {
			uint8_t *t = b + 512 + 64 * below(r, n);
			uint32_t f = below(r, 8);

			if (f < 6)
				*(uint32_t *)(t + 4 * f) = (uint32_t)nasty(r);
			else
				*(uint64_t *)(t + 24 + 8 * (f - 6)) = nasty(r);
		}
		break;
	case 3:		/* two entries swapped */
		if (n > 1 && 512 + (uint64_t)n * 64 <= size) {
			uint8_t tmp[64], *a = b + 512 + 64 * below(r, n), *c = b + 512 + 64 * below(r, n);

			memcpy(tmp, a, 64);
			memcpy(a, c, 64);
			memcpy(c, tmp, 64);
		}
		break;
	case 4: {	/* shorter, or longer (the size field may follow) */
		size_t ns = below(r, 2) ? below(r, size + 1) : size + below(r, 8192);
		uint8_t *nb = realloc(b, ns ? ns : 1);

		if (nb) {
			if (ns > size)
				memset(nb + size, below(r, 2) ? 0 : 0x41, ns - size);
			b = nb;
			size = ns;
			if (size >= 512 && below(r, 2))
				((struct colibri_file_header *)b)->file_size = size;
		}
		break;
	}
	default:	/* a data byte: only the checksum would tell */
		if (size > 4096)
			b[4096 + below(r, size - 4096)] ^= 1 + below(r, 255);
		break;
	}
	*bp = b;
	*sizep = size;
}

static int read_whole(const char *path, uint8_t **b, size_t *n)
{
	struct stat st;
	int fd = open(path, O_RDONLY), ok;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	*b = malloc(st.st_size ? st.st_size : 1);
	*n = st.st_size;
	ok = *b && read(fd, *b, st.st_size) == st.st_size;
	close(fd);
	return ok ? 0 : -1;
}

/* The bases: every fixture, the validator's fuzz corpus, generated shapes. */
static int bases(char paths[][512], int max, struct rng *r)
{
	const char *dirs[] = { fixtures(), "tests/format/corpus" };
	int n = 0;

	for (unsigned int d = 0; d < ARRAY_SIZE(dirs); d++) {
		DIR *dh = opendir(dirs[d]);
		struct dirent *e;

		while (dh && (e = readdir(dh)) && n < max - 8) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "hf"))
				continue;
			snprintf(paths[n++], 512, "%s/%s", dirs[d], e->d_name);
		}
		if (dh)
			closedir(dh);
	}
	for (int i = 0; i < 6 && n < max; i++) {
		struct cb_model_config c = vm_tiny_config();

		c.arch = below(r, 5);
		c.n_layers = 1 + below(r, 3);
		c.n_experts = c.arch ? 2 + below(r, 3) : 0;
		c.top_k = c.n_experts ? 1 + below(r, 2) : 0;
		c.dense_ffn = c.n_experts ? 0 : 16;
		c.expert_ffn = c.n_experts ? 16 : 0;
		c.max_context = below(r, 2) ? 0 : 32;
		snprintf(paths[n], 512, "/tmp/fz-gen-%d.colibri", i);
		if (!vm_write_model(paths[n], &c, rnd(r)))
			n++;
	}
	return n;
}

/*
 * Mutated files with every checksum right: the validator alone decides.
 * Each LOAD either succeeds or says -EINVAL (or -ENOMEM/-EDQUOT for a
 * size it cannot have); what loads is attached and runs a few tokens.
 */
TEST(hostile_model_files_with_valid_checksums)
{
	struct rng r = rng_of(part_seed("hostile_model_files_with_valid_checksums", 2));
	double until = mono_now() + attack_secs();
	static char paths[64][512];
	int fd = colibri_dev_open(), kmsg = kmsg_open(), nb, tried = 0, loaded = 0, ran = 0;
	int bad = 0;
	char first[512];
	const char *out = "/tmp/fz-hostile.colibri";

	ASSERT_LE(0, fd);
	ASSERT_LE(0, kmsg);
	unload_all(fd);
	nb = bases(paths, 64, &r);
	ASSERT_LT(4, nb);
	while (mono_now() < until) {
		uint8_t *b;
		size_t size;
		int ofd, ret;

		if (read_whole(paths[below(&r, nb)], &b, &size))
			continue;
		for (int m = 1 + below(&r, 3); m > 0; m--)
			mutate(&r, &b, &size);
		if (below(&r, 8))
			reseal(b, size);
		ofd = open(out, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		ASSERT_LE(0, ofd);
		ASSERT_EQ((ssize_t)size, write(ofd, b, size));
		close(ofd);
		free(b);
		tried++;
		ret = colibri_dev_load(fd, out, "hostile", NULL, NULL);
		if (ret) {
			if (ret != -EINVAL && ret != -ENOMEM) {
				TH_LOG("LOAD of a hostile file: %s", strerror(-ret));
				bad++;
			}
			continue;
		}
		loaded++;
		{
			struct colibri_attach a;
			int s = colibri_dev_open();

			if (!colibri_dev_attach(s, "hostile", 0, 0, &a)) {
				uint32_t t[4];
				struct colibri_submit sub = { .size = sizeof(sub) };

				for (int i = 0; i < 4; i++)
					t[i] = below(&r, a.vocab_size);
				sub.tokens = (uintptr_t)t;
				sub.n_tokens = 4;
				ret = colibri_dev_submit(s, &sub);
				ran += !ret;
				if (ret && ret != -ENOSPC)
					TH_LOG("SUBMIT on a hostile file: %s", strerror(-ret));
			}
			close(s);
		}
		EXPECT_EQ(0, colibri_dev_unload(fd, "hostile", 1));
	}
	TH_LOG("%d hostile files: %d loaded, %d ran tokens", tried, loaded, ran);
	EXPECT_EQ(0, bad);
	EXPECT_LT(20, tried);
	unload_all(fd);
	EXPECT_EQ(0, settle_to(fd, 0, 10000));
	EXPECT_EQ(0, kmsg_bad(kmsg, first, sizeof(first))) TH_LOG("kernel: %s", first);
	unlink(out);
	close(kmsg);
	close(fd);
}

TEST_HARNESS_MAIN
