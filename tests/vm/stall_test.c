// SPDX-License-Identifier: GPL-2.0-only
/*
 * stall_test - a user page fault that does not resolve, in the middle of
 * an ioctl or an io_uring command, holds nobody up but its own caller.
 *
 * An unprivileged user can make any access to its memory wait for as long
 * as it likes: a FUSE file whose READ is never answered, mapped and passed
 * as a buffer.  Root's userfaultfd is the same stall, served by the test:
 * the buffer's page is registered, the kernel's copy faults on it, and the
 * test sees the fault arrive on the userfaultfd before it acts.  While the
 * copy waits, UNLOAD(COLIBRI_UNLOAD_WAIT) of the model must return within a
 * bound with the model's memory gone (GET_INFO's mem_used back to what it
 * was before the LOAD) and no session left; once the test serves the fault,
 * the stalled call ends with -ENODEV (its session was revoked) or, for a
 * call that needs no session, its answer intact.
 *
 * Where it stalls: the tokens a SUBMIT copies in, the routing trace and the
 * logits it copies out, by ioctl and by io_uring (the copy-out there runs
 * as task work in the submitter); the struct ATTACH copies out (a
 * write-protected page: the copy-in reads it, the copy-out faults); the
 * section GET_TOKENIZER copies out.  Each failed before the fix (issue 30):
 * the SUBMITs held the session's lock across the copy, so the unload sat
 * in D state in colibri_session_revoke(); ATTACH and GET_TOKENIZER held a
 * reference on the model, so the unload returned with it still pinned.
 *
 * Runs inside the vm-run guest as root, from the top of the work tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "colibri_uring.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define DEMO "models/shakespeare-moe.colibri"
#define NAME "stall"

/* UNLOAD(WAIT) revokes one idle session: well under the hung-task timeout. */
#define UNLOAD_BOUND_S	15.0
/* The first fault: a forward pass comes first for the copy-outs (emulated). */
#define FAULT_WAIT_MS	120000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- a region whose faults the test serves ---------------------------------- */

struct stall_region {
	int uffd;
	uint8_t *base;
	size_t len;
	int wp;			/* write-protect mode: present pages, writes fault */
	uint8_t *fill;		/* a page served into a missing one */
};

/*
 * @len bytes at a fresh mapping, registered with a new userfaultfd: in
 * missing mode (every first touch faults) or, with @wp, write-protect
 * mode (the pages hold @init and can be read; a write faults).
 * Return: 0, or -errno (-EOPNOTSUPP: this kernel cannot).
 */
static int region_make(struct stall_region *r, size_t len, int wp, const void *init,
		       size_t init_len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	long page = sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	r->len = (len + page - 1) / page * page;
	r->wp = wp;
	r->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (r->uffd < 0)
		return -errno;
	if (ioctl(r->uffd, UFFDIO_API, &api))
		return -errno;
	if (wp && !(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP))
		return -EOPNOTSUPP;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r->fill = aligned_alloc(page, page);
	if (r->base == MAP_FAILED || !r->fill)
		return -ENOMEM;
	memset(r->fill, 0, page);
	if (wp) {
		memset(r->base, 0, r->len);	/* present pages */
		if (init)
			memcpy(r->base, init, init_len);
	}
	reg.range.start = (uintptr_t)r->base;
	reg.range.len = r->len;
	reg.mode = wp ? UFFDIO_REGISTER_MODE_WP : UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(r->uffd, UFFDIO_REGISTER, &reg))
		return errno == EINVAL && wp ? -EOPNOTSUPP : -errno;
	if (wp) {
		struct uffdio_writeprotect w = {
			.range = { .start = (uintptr_t)r->base, .len = r->len },
			.mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};

		if (ioctl(r->uffd, UFFDIO_WRITEPROTECT, &w))
			return -errno;
	}
	return 0;
}

static void region_free(struct stall_region *r)
{
	if (r->base && r->base != MAP_FAILED)
		munmap(r->base, r->len);
	if (r->uffd >= 0)
		close(r->uffd);
	free(r->fill);
}

/* Waits up to @ms for a fault on the region. Return: 1 seen, 0 not. */
static int region_fault_seen(struct stall_region *r, int ms)
{
	struct pollfd p = { .fd = r->uffd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/*
 * Serves every fault on the region until *@done: missing pages get the
 * fill page, write-protection is lifted from the whole range.
 */
static void region_serve_until(struct stall_region *r, const int *done)
{
	long page = sysconf(_SC_PAGESIZE);

	if (r->wp) {
		struct uffdio_writeprotect w = {
			.range = { .start = (uintptr_t)r->base, .len = r->len },
		};

		ioctl(r->uffd, UFFDIO_WRITEPROTECT, &w);	/* wakes the faulting */
	}
	while (!__atomic_load_n(done, __ATOMIC_ACQUIRE)) {
		struct uffd_msg msg;
		struct uffdio_copy c = { 0 };

		if (!region_fault_seen(r, 50))
			continue;
		if (read(r->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT || r->wp)
			continue;
		c.dst = msg.arg.pagefault.address & ~(page - 1);
		c.src = (uintptr_t)r->fill;
		c.len = page;
		ioctl(r->uffd, UFFDIO_COPY, &c);	/* EEXIST: served already */
	}
}

/* --- the stalled call, on a thread of its own -------------------------------- */

struct stalled {
	int fd;
	unsigned long cmd;		/* the ioctl; 0: a SUBMIT through io_uring */
	void *arg;
	int ret;			/* 0 or -errno */
	int done;
};

static void *stalled_call(void *p)
{
	struct stalled *c = p;
	struct colibri_ring *ring;

	if (c->cmd) {
		c->ret = ioctl(c->fd, c->cmd, c->arg) ? -errno : 0;
	} else {
		/* The ring's own thread (libcolibri's rings are single-issuer). */
		c->ret = colibri_ring_create(&ring, 4);
		if (!c->ret) {
			c->ret = colibri_ring_step(ring, c->fd, c->arg);
			colibri_ring_destroy(ring);
		}
	}
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct unloader {
	int fd;
	int ret;
	int done;
	double took;
};

static void *unload_call(void *p)
{
	struct unloader *u = p;
	double t0 = now_s();

	u->ret = colibri_dev_unload(u->fd, NAME, 1);
	u->took = now_s() - t0;
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The heart of every test: with @c stalled on @r, UNLOAD(WAIT) must return
 * within UNLOAD_BOUND_S and leave nothing pinned and no session; then the
 * faults are served and @c must end.  Its result is left in c->ret.
 */
static void unload_under_stall(struct __test_metadata *_metadata, int fd,
			       struct stall_region *r, struct stalled *c, uint64_t mem0)
{
	struct unloader u = { .fd = fd };
	pthread_t ct, ut;
	double t0;
	int returned;

	ASSERT_EQ(0, pthread_create(&ct, NULL, stalled_call, c));
	ASSERT_EQ(1, region_fault_seen(r, FAULT_WAIT_MS))
		TH_LOG("the call never reached its user copy (it returned %d)", c->ret);
	ASSERT_EQ(0, __atomic_load_n(&c->done, __ATOMIC_ACQUIRE));

	ASSERT_EQ(0, pthread_create(&ut, NULL, unload_call, &u));
	t0 = now_s();
	while (!__atomic_load_n(&u.done, __ATOMIC_ACQUIRE) && now_s() - t0 < UNLOAD_BOUND_S)
		usleep(10 * 1000);
	returned = __atomic_load_n(&u.done, __ATOMIC_ACQUIRE);
	EXPECT_TRUE(returned)
		TH_LOG("UNLOAD(WAIT) still waits after %.0f s on a stalled user copy", UNLOAD_BOUND_S);
	if (returned) {
		struct colibri_info info = info_now(fd);

		TH_LOG("UNLOAD(WAIT) returned %d in %.3f s with the copy stalled", u.ret, u.took);
		EXPECT_EQ(0, u.ret);
		EXPECT_EQ(0, info.nr_models);
		EXPECT_EQ(0, info.nr_sessions);
		EXPECT_EQ(mem0, info.mem_used)
			TH_LOG("%llu bytes still pinned after UNLOAD(WAIT) returned",
			       (unsigned long long)(info.mem_used - mem0));
	}
	/* Whatever happened, let everything finish: serve the faults. */
	EXPECT_EQ(0, __atomic_load_n(&c->done, __ATOMIC_ACQUIRE));
	region_serve_until(r, &c->done);
	pthread_join(ct, NULL);
	pthread_join(ut, NULL);
	EXPECT_EQ(0, u.ret);
	EXPECT_EQ(mem0, info_now(fd).mem_used);
}

/* --- SUBMIT stalled at each of its user copies -------------------------------- */

enum stall_at { AT_TOKENS, AT_TRACE, AT_LOGITS };

/*
 * What both fixtures hold: the unloader's descriptor, the holder's (with
 * the model loaded as NAME), mem_used before the LOAD, the stall region.
 */
struct stall_base {
	int fd, s;
	uint64_t mem0;
	struct stall_region r;
};

static void base_setup(struct __test_metadata *_metadata, struct stall_base *b)
{
	b->r.uffd = -1;
	b->fd = colibri_dev_open();
	ASSERT_LE(0, b->fd);
	colibri_dev_unload(b->fd, NAME, 1);
	b->mem0 = info_now(b->fd).mem_used;
	ASSERT_EQ(0, colibri_dev_load(b->fd, DEMO, NAME, NULL, NULL));
	b->s = colibri_dev_open();
	ASSERT_LE(0, b->s);
}

static void base_teardown(struct stall_base *b)
{
	close(b->s);
	colibri_dev_unload(b->fd, NAME, 1);
	region_free(&b->r);
	close(b->fd);
}

FIXTURE(submit) {
	struct stall_base b;
	struct colibri_attach a;
};

FIXTURE_VARIANT(submit) {
	enum stall_at at;
	int uring;
};

FIXTURE_VARIANT_ADD(submit, tokens_ioctl) { .at = AT_TOKENS, .uring = 0 };
FIXTURE_VARIANT_ADD(submit, tokens_uring) { .at = AT_TOKENS, .uring = 1 };
FIXTURE_VARIANT_ADD(submit, trace_ioctl) { .at = AT_TRACE, .uring = 0 };
FIXTURE_VARIANT_ADD(submit, trace_uring) { .at = AT_TRACE, .uring = 1 };
FIXTURE_VARIANT_ADD(submit, logits_ioctl) { .at = AT_LOGITS, .uring = 0 };
FIXTURE_VARIANT_ADD(submit, logits_uring) { .at = AT_LOGITS, .uring = 1 };

FIXTURE_SETUP(submit)
{
	base_setup(_metadata, &self->b);
	ASSERT_EQ(0, colibri_dev_attach(self->b.s, NAME, 64, 0, &self->a));
}

FIXTURE_TEARDOWN(submit)
{
	base_teardown(&self->b);
}

TEST_F(submit, unload_wait_returns_and_the_submit_ends_enodev)
{
	uint32_t toks[2] = { 1, 2 }, tpt = self->a.n_layers * self->a.top_k * 2;
	size_t logits_len = (size_t)self->a.vocab_size * 4, trace_len = 2 * (size_t)tpt * 4;
	struct colibri_submit *sub = calloc(1, sizeof(*sub));
	void *logits = calloc(1, logits_len), *trace = calloc(1, trace_len);
	struct stalled c = { .fd = self->b.s, .arg = sub };
	uint8_t *at;

	ASSERT_TRUE(sub && logits && trace);
	ASSERT_LT(0, tpt);
	ASSERT_EQ(0, region_make(&self->b.r, variant->at == AT_LOGITS ? logits_len :
				 variant->at == AT_TRACE ? trace_len : sizeof(toks), 0, NULL, 0));
	at = self->b.r.base;
	/* The fill page served into a missing tokens page: valid token ids. */
	memcpy(self->b.r.fill, toks, sizeof(toks));

	sub->size = sizeof(*sub);
	sub->flags = COLIBRI_SUBMIT_RESET | COLIBRI_SUBMIT_LOGITS | COLIBRI_SUBMIT_TRACE;
	sub->n_tokens = 2;
	sub->tokens = (uintptr_t)(variant->at == AT_TOKENS ? at : (uint8_t *)toks);
	sub->logits = (uintptr_t)(variant->at == AT_LOGITS ? at : logits);
	sub->logits_len = self->a.vocab_size;
	sub->trace = (uintptr_t)(variant->at == AT_TRACE ? at : trace);
	sub->trace_len = 2 * tpt;
	c.cmd = variant->uring ? 0 : COLIBRI_IOC_SUBMIT;

	unload_under_stall(_metadata, self->b.fd, &self->b.r, &c, self->b.mem0);
	EXPECT_EQ(-ENODEV, c.ret)
		TH_LOG("the stalled SUBMIT (%s) ended with %s", variant->uring ? "io_uring" : "ioctl",
		       strerror(-c.ret));
	/* The file's session is dead, and says so; it may attach anew. */
	sub->tokens = (uintptr_t)toks;
	sub->flags = COLIBRI_SUBMIT_RESET;
	EXPECT_EQ(-ENODEV, colibri_dev_submit(self->b.s, sub));
	free(sub);
	free(logits);
	free(trace);
}

/* --- ATTACH and GET_TOKENIZER stalled at their copy-out ---------------------- */

FIXTURE(copyout) {
	struct stall_base b;
};

FIXTURE_SETUP(copyout)
{
	base_setup(_metadata, &self->b);
}

FIXTURE_TEARDOWN(copyout)
{
	base_teardown(&self->b);
}

/*
 * The answer of an ATTACH stalls on a write-protected page: the session
 * is made, then revoked by the unload, which must not find the model
 * held.  The ATTACH itself succeeds once served; its session is dead.
 */
TEST_F(copyout, attach_answer_stalled_unload_wait_leaves_nothing_pinned)
{
	struct colibri_attach a = { .size = sizeof(a), .max_context = 64 };
	struct stalled c = { .fd = self->b.s, .cmd = COLIBRI_IOC_ATTACH };
	uint32_t tok = 1;
	struct colibri_submit sub = {
		.size = sizeof(sub), .flags = COLIBRI_SUBMIT_RESET,
		.tokens = (uintptr_t)&tok, .n_tokens = 1,
	};
	int ret;

	strncpy(a.name, NAME, sizeof(a.name) - 1);
	ret = region_make(&self->b.r, sizeof(a), 1, &a, sizeof(a));
	if (ret == -EOPNOTSUPP)
		SKIP(return, "this kernel has no userfaultfd write-protection for anonymous memory");
	ASSERT_EQ(0, ret);
	c.arg = self->b.r.base;

	unload_under_stall(_metadata, self->b.fd, &self->b.r, &c, self->b.mem0);
	EXPECT_EQ(0, c.ret) TH_LOG("the stalled ATTACH ended with %s", strerror(-c.ret));
	EXPECT_EQ(-ENODEV, colibri_dev_submit(self->b.s, &sub));
}

/*
 * GET_TOKENIZER's copy of the section stalls: the unload must still find
 * the model unreferenced and free it; the caller then gets the section
 * whole, as the file has it.
 */
TEST_F(copyout, tokenizer_copy_stalled_unload_wait_leaves_nothing_pinned)
{
	struct colibri_tokenizer t = { .size = sizeof(t) };
	struct stalled c = { .fd = self->b.s, .cmd = COLIBRI_IOC_GET_TOKENIZER, .arg = &t };
	struct cbfile *file;
	const char *json;
	char err[256];
	size_t len;

	file = cbfile_open(DEMO, 0, err, sizeof(err));
	ASSERT_NE(NULL, file) TH_LOG("%s", err);
	json = cbfile_tokenizer(file, &len);
	ASSERT_NE(NULL, json);
	strncpy(t.name, NAME, sizeof(t.name) - 1);
	ASSERT_EQ(0, region_make(&self->b.r, len, 0, NULL, 0));
	t.buf = (uintptr_t)self->b.r.base;
	t.buf_len = len;

	unload_under_stall(_metadata, self->b.fd, &self->b.r, &c, self->b.mem0);
	EXPECT_EQ(0, c.ret) TH_LOG("the stalled GET_TOKENIZER ended with %s", strerror(-c.ret));
	EXPECT_EQ(len, t.section_size);
	EXPECT_EQ(0, memcmp(self->b.r.base, json, len));
	cbfile_close(file);
}

TEST_HARNESS_MAIN
