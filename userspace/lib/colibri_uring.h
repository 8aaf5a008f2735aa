/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * colibri_uring.h - COLIBRI_IOC_SUBMIT through io_uring: a small ring that
 * carries the steps of many sessions at once.
 *
 * A step is a struct colibri_submit, exactly as for the ioctl; the kernel
 * reads it (and the tokens) when the ring is entered, and writes token,
 * n_past, logits and trace back before the completion is posted.  So the
 * struct and its buffers must stay valid from colibri_ring_queue() until
 * its completion is reaped.  One step per session at a time: a second one
 * on the same fd completes with -EBUSY.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; none prints anything.
 */
#ifndef COLIBRI_URING_H
#define COLIBRI_URING_H

#include <stdint.h>

#include "colibri.h"

struct io_uring_sqe;
struct colibri_ring;

/* One reaped completion. */
struct colibri_completion {
	uint64_t user_data;	/* as given to colibri_ring_queue() */
	int32_t res;		/* the sampled token (>= 0) or -errno */
	uint32_t n_past;	/* the sequence's length after it (0 on error) */
};

/*
 * Fills @sqe (64 bytes, or 128 with @sqe128) with a SUBMIT of @s on the
 * attached /dev/colibri file @fd: for callers with their own ring.  Sets
 * s->size.  user_data and sqe flags are left for the caller (zero).
 */
void colibri_uring_prep_submit(struct io_uring_sqe *sqe, int sqe128, int fd,
			       struct colibri_submit *s);

/*
 * A ring with room for @entries steps in flight (0: 64).  It belongs to
 * the thread that creates it: queue, submit and reap from that thread only
 * (IORING_SETUP_SINGLE_ISSUER; completions are processed when it reaps).
 */
int colibri_ring_create(struct colibri_ring **out, unsigned int entries);
void colibri_ring_destroy(struct colibri_ring *r);

/*
 * Queues a SUBMIT of @s on session @fd, tagged @user_data; nothing reaches
 * the kernel before colibri_ring_submit().  -EBUSY when the submission
 * queue is full (submit, then reap, first).
 */
int colibri_ring_queue(struct colibri_ring *r, int fd, struct colibri_submit *s,
		       uint64_t user_data);
/* Queues an IORING_OP_ASYNC_CANCEL of the step tagged @target, tagged @user_data. */
int colibri_ring_queue_cancel(struct colibri_ring *r, uint64_t target, uint64_t user_data);
/* Hands everything queued to the kernel; returns how many. */
int colibri_ring_submit(struct colibri_ring *r);
/*
 * Reaps up to @max completions into @c, waiting until at least @min are
 * there (0: do not wait).  Returns how many; -EINTR if a signal came first.
 */
int colibri_ring_reap(struct colibri_ring *r, struct colibri_completion *c, unsigned int max,
		      unsigned int min);
/* Steps queued or submitted and not reaped yet. */
unsigned int colibri_ring_inflight(const struct colibri_ring *r);

/*
 * One step through the ring, waited for: the io_uring twin of
 * colibri_dev_submit() (0 or -errno; s->token holds the token).  The ring
 * must have nothing else in flight.
 */
int colibri_ring_step(struct colibri_ring *r, int fd, struct colibri_submit *s);

#endif /* COLIBRI_URING_H */
