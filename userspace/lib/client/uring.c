// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * uring.c - libcolibri's io_uring client: SUBMIT as IORING_OP_URING_CMD.
 *
 * Debian 12's liburing (2.3) knows IORING_OP_URING_CMD and sqe->cmd_op but
 * has no prep helper for it, so the SQE is built by hand: zeroed whole
 * (64 bytes, or 128 on an SQE128 ring), then opcode, fd, cmd_op and the
 * 16-byte payload (struct colibri_uring_cmd) in sqe->cmd.  The ring is
 * made with IORING_SETUP_CQE32 so each completion also carries n_past, and
 * with SINGLE_ISSUER | DEFER_TASKRUN where the kernel has them (6.1 does):
 * the kernel's completion work then runs only when we reap, instead of
 * interrupting whatever else the thread is doing (TIF_NOTIFY_SIGNAL breaks
 * interruptible waits, an ioctl SUBMIT's among them, with -EINTR).
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "colibri_uring.h"

struct colibri_ring {
	struct io_uring ring;
	unsigned int inflight;		/* queued or submitted, not reaped */
};

void colibri_uring_prep_submit(struct io_uring_sqe *sqe, int sqe128, int fd,
			       struct colibri_submit *s)
{
	struct colibri_uring_cmd pl = { .submit = (uintptr_t)s };

	memset(sqe, 0, sqe128 ? 128 : 64);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = COLIBRI_IOC_SUBMIT;
	s->size = sizeof(*s);
	memcpy(sqe->cmd, &pl, sizeof(pl));
}

int colibri_ring_create(struct colibri_ring **out, unsigned int entries)
{
	struct colibri_ring *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	ret = io_uring_queue_init(entries ? entries : 64, &r->ring, IORING_SETUP_CQE32 |
				  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (ret == -EINVAL)
		ret = io_uring_queue_init(entries ? entries : 64, &r->ring, IORING_SETUP_CQE32);
	if (ret) {
		free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void colibri_ring_destroy(struct colibri_ring *r)
{
	if (!r)
		return;
	io_uring_queue_exit(&r->ring);
	free(r);
}

int colibri_ring_queue(struct colibri_ring *r, int fd, struct colibri_submit *s,
		       uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe)
		return -EBUSY;
	colibri_uring_prep_submit(sqe, !!(r->ring.flags & IORING_SETUP_SQE128), fd, s);
	io_uring_sqe_set_data64(sqe, user_data);
	r->inflight++;
	return 0;
}

int colibri_ring_queue_cancel(struct colibri_ring *r, uint64_t target, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel64(sqe, target, 0);
	io_uring_sqe_set_data64(sqe, user_data);
	r->inflight++;
	return 0;
}

int colibri_ring_submit(struct colibri_ring *r)
{
	return io_uring_submit(&r->ring);
}

int colibri_ring_reap(struct colibri_ring *r, struct colibri_completion *c, unsigned int max,
		      unsigned int min)
{
	struct io_uring_cqe *cqe;
	unsigned int n = 0;
	int ret;

	/* Deferred completion work runs only on entering the kernel. */
	if (!min && r->ring.flags & IORING_SETUP_DEFER_TASKRUN) {
		ret = io_uring_get_events(&r->ring);
		if (ret < 0 && ret != -EINTR)
			return ret;
	}
	while (n < max) {
		ret = n < min ? io_uring_wait_cqe(&r->ring, &cqe) : io_uring_peek_cqe(&r->ring, &cqe);
		if (ret == -EAGAIN)
			break;		/* nothing more without waiting */
		if (ret)
			return n ? (int)n : ret;
		c[n].user_data = cqe->user_data;
		c[n].res = cqe->res;
		c[n].n_past = cqe->res >= 0 ? (uint32_t)cqe->big_cqe[0] : 0;
		io_uring_cqe_seen(&r->ring, cqe);
		if (r->inflight)
			r->inflight--;
		n++;
	}
	return n;
}

unsigned int colibri_ring_inflight(const struct colibri_ring *r)
{
	return r->inflight;
}

int colibri_ring_step(struct colibri_ring *r, int fd, struct colibri_submit *s)
{
	struct colibri_completion c;
	int ret;

	if (r->inflight)
		return -EBUSY;
	ret = colibri_ring_queue(r, fd, s, 0);
	if (ret)
		return ret;
	ret = colibri_ring_submit(r);
	if (ret <= 0) {
		r->inflight = 0;	/* (never seen: the SQE always goes in) */
		return ret ? ret : -EIO;
	}
	/* The kernel has the step: wait for it even through signals. */
	do
		ret = colibri_ring_reap(r, &c, 1, 1);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	/* The kernel wrote token and n_past into *s, as the ioctl does. */
	return c.res < 0 ? c.res : 0;
}
