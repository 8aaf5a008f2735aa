/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_why.h - the one-line reason the checks give for a refusal.
 *
 * Integer only: the validator and the config check run outside FPU
 * sections in the kernel.
 */
#ifndef CB_WHY_H
#define CB_WHY_H

#include "core/cb_platform.h"

/**
 * cb_why() - write a reason, return an error.
 * @why: the buffer (may be NULL: nothing is written).
 * @whylen: its size.
 * @err: returned as is.
 * @fmt: the reason: %s (string), %u (cb_u32), %d (int), %L (cb_u64); any
 *	other character after % is written as is.
 *
 * The output is always NUL-terminated and truncated to the buffer.
 * Return: @err.
 */
int cb_why(char *why, cb_u32 whylen, int err, const char *fmt, ...);

#endif /* CB_WHY_H */
