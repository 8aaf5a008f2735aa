// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_sizes.c - scratch sizes and layouts of the engine's FPU-side helpers:
 * the routed expert of cb_expert.c and the sampler of cb_sample.c.
 *
 * Integer only, and built with the kernel's normal flags (no SSE at all:
 * Kbuild's cb-int-only-dirs), so the module may call these anywhere, outside
 * FPU sections: a size is asked for when memory is allocated.  The FPU
 * code that carves the scratch uses the same layout function, so the size
 * and the carving never disagree.
 */
#include "core/cb_engine_priv.h"

/* *off = *total; *total += rows * bytes, 64-byte aligned; 0 or -CB_EOVERFLOW */
static int part(cb_u64 *total, cb_u64 *off, cb_u64 bytes, cb_u64 rows)
{
	cb_u64 v;

	*off = *total;
	if (__builtin_mul_overflow(bytes, rows, &v) ||
	    __builtin_add_overflow(v, (cb_u64)63, &v) ||
	    __builtin_add_overflow(*total, v & ~(cb_u64)63, total))
		return -CB_EOVERFLOW;
	return 0;
}

/**
 * cb_expert_layout() - the scratch of cb_expert_ffn() for @n rows.
 * @hidden: the model's hidden size.
 * @ffn: the expert's intermediate size.
 * @n: rows.
 * @lo: out: the offset of each part and the total.
 *
 * Parts, each 64-byte aligned: the input rows in every quantized
 * activation form, the gate and up outputs (f32), the activation rows in
 * every quantized form.  A form whose blocks the row length does not fit
 * has no bytes.  Every part grows with @n, so a scratch sized for
 * max_tokens holds any n <= max_tokens.
 *
 * Return: 0, or -CB_EOVERFLOW.
 */
int cb_expert_layout(cb_u32 hidden, cb_u32 ffn, cb_u64 n, struct cb_expert_layout *lo)
{
	cb_u64 total = 0;
	cb_u32 k;
	int r = 0;

	for (k = CB_ACT_F32 + 1; k < CB_ACT__COUNT; k++)
		r |= part(&total, &lo->x[k], cb_act_row_bytes(k, hidden), n);
	r |= part(&total, &lo->g, (cb_u64)ffn * sizeof(float), n);
	r |= part(&total, &lo->u, (cb_u64)ffn * sizeof(float), n);
	for (k = CB_ACT_F32 + 1; k < CB_ACT__COUNT; k++)
		r |= part(&total, &lo->a[k], cb_act_row_bytes(k, ffn), n);
	lo->size = total;
	return r ? -CB_EOVERFLOW : 0;
}

/**
 * cb_expert_scratch_size() - scratch bytes for cb_expert_ffn().
 * @hidden: the model's hidden size (gate/up columns, down rows).
 * @expert_ffn: the expert's intermediate size.
 * @max_tokens: most rows one call will carry.
 *
 * Return: the size, or 0 if a size is out of the engine's limits or the
 * result overflows.
 */
cb_u64 cb_expert_scratch_size(cb_u32 hidden, cb_u32 expert_ffn, cb_u32 max_tokens)
{
	struct cb_expert_layout lo;

	if (!hidden || !expert_ffn || !max_tokens || hidden > CB_MAX_HIDDEN ||
	    expert_ffn > CB_MAX_FFN)
		return 0;
	if (cb_expert_layout(hidden, expert_ffn, max_tokens, &lo))
		return 0;
	return lo.size;
}

static cb_u64 al64(cb_u64 x)
{
	return (x + 63) & ~(cb_u64)63;
}

/**
 * cb_sample_layout() - the sampler's scratch for a vocabulary of @n.
 * @n: tokens.
 * @lo: out: the offset of each part and the total.
 *
 * No overflow is possible: n < 2^32, so every part is below 2^36.
 */
void cb_sample_layout(cb_u32 n, struct cb_sample_layout *lo)
{
	cb_u64 nch = ((cb_u64)n + CB_SMP_CHUNK - 1) / CB_SMP_CHUNK, off = CB_SMP_STATE;

	lo->nch = nch;
	lo->w = off;
	off += al64((cb_u64)n * 4);
	lo->cmax = off;
	off += al64(nch * 4);
	lo->carg = off;
	off += al64(nch * 4);
	lo->cties = off;
	off += al64(nch * 4);
	lo->cmass = off;
	off += al64(nch * 8);
	lo->hcnt = off;
	off += al64(nch * CB_SMP_HSTRIDE * 4);
	lo->hmass = off;
	off += al64(nch * CB_SMP_HSTRIDE * 8);
	lo->rcnt = off;
	off += al64(CB_SMP_LEVELS * CB_SMP_BINS * 4);
	lo->rmass = off;
	lo->size = off + al64(CB_SMP_LEVELS * CB_SMP_BINS * 8);
}

/* Scratch bytes cb_sample() needs for a vocabulary of n tokens. */
cb_u64 cb_sample_scratch_size(cb_u32 n)
{
	struct cb_sample_layout lo;

	cb_sample_layout(n, &lo);
	return lo.size;
}
