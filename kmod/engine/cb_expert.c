// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_expert.c - one routed expert, outside the engine, bit for bit.
 *
 * An executor that takes routed experts off the engine (struct
 * cb_expert_task, see cb_engine.h) must hand back exactly what the engine
 * would have computed, or logits would depend on who ran what.  This file
 * is that computation on its own: the same ops table, the same activation
 * forms (q8_0 rows from ops->quantize_q8_0 for block weights, f32 rows
 * otherwise) and the same SwiGLU as cb_forward.c.  A gemm row's result does
 * not depend on how many rows or tokens one call covers (cb_ops.h), so one
 * call over all @n tokens equals the engine's chunked jobs.
 *
 * It needs only the ops (cb_ops_*.c, cb_isa.c), cb_quant.c and cb_math.c,
 * so a separate module (an accelerator, a reference executor) can link it
 * without the engine proper.
 *
 * cb_expert_scratch_size() may be called from non-FPU kernel code although
 * this file is compiled with the FPU enabled; see CB_GPR_ONLY.
 */
#include "cb_engine.h"
#include "cb_math.h"
#include "cb_ops.h"

/*
 * Integer-only functions of an FPU-compiled file.  Integer source is not
 * enough: the kernel's zero-initialisation of locals
 * (CONFIG_INIT_STACK_ALL_ZERO) and the vectoriser store through SSE
 * registers, which non-FPU kernel code must not touch.  GCC can be told
 * per function; other compilers get no guarantee (call it in an FPU
 * section there).
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CB_GPR_ONLY __attribute__((__target__("general-regs-only")))
#else
#define CB_GPR_ONLY
#endif

/* the engine's limit on hidden and FFN sizes (check_config in cb_model.c) */
#define CB_EXPERT_MAX_DIM 0x100000u	/* 1 << 20 */

/* q8_0 bytes of a row of n, or 0 when n is not a whole number of blocks */
static CB_GPR_ONLY cb_u64 q8_row_bytes(cb_u32 n)
{
	return n % CB_QK ? 0 : (cb_u64)n / CB_QK * sizeof(struct cb_block_q8_0);
}

static int is_block(cb_u32 dt)
{
	return dt == CB_DT_Q8_0 || dt == CB_DT_Q4_0;
}

/*
 * The scratch of @n rows: q8_0 input rows, gate and up outputs (f32), q8_0
 * activation rows, each part 64-byte aligned.  Every part grows with @n, so
 * a scratch sized for max_tokens holds any n <= max_tokens.  Sets *size and
 * the offsets; returns 0, or -CB_EOVERFLOW.
 */
static CB_GPR_ONLY int expert_layout(cb_u32 hidden, cb_u32 ffn, cb_u64 n,
				     cb_u64 off[4], cb_u64 *size)
{
	cb_u64 part[4], total = 0, v;
	int i;

	part[0] = q8_row_bytes(hidden);
	part[1] = (cb_u64)ffn * sizeof(float);
	part[2] = part[1];
	part[3] = q8_row_bytes(ffn);
	for (i = 0; i < 4; i++) {
		off[i] = total;
		if (__builtin_mul_overflow(part[i], n, &v) ||
		    __builtin_add_overflow(v, (cb_u64)63, &v) ||
		    __builtin_add_overflow(total, v & ~(cb_u64)63, &total))
			return -CB_EOVERFLOW;
	}
	*size = total;
	return 0;
}

/**
 * cb_expert_scratch_size() - scratch bytes for cb_expert_ffn().
 * @hidden: the model's hidden size (gate/up columns, down rows).
 * @expert_ffn: the expert's intermediate size.
 * @max_tokens: most rows one call will carry.
 *
 * Integer arithmetic only: non-FPU kernel code may call it.
 * Return: the size, or 0 if a size is out of the engine's limits or the
 * result overflows.
 */
CB_GPR_ONLY
cb_u64 cb_expert_scratch_size(cb_u32 hidden, cb_u32 expert_ffn, cb_u32 max_tokens)
{
	cb_u64 off[4], size;

	if (!hidden || !expert_ffn || !max_tokens || hidden > CB_EXPERT_MAX_DIM ||
	    expert_ffn > CB_EXPERT_MAX_DIM)
		return 0;
	if (expert_layout(hidden, expert_ffn, max_tokens, off, &size))
		return 0;
	return size;
}

/* @t is a usable [rows, cols] matrix (block types need whole blocks) */
static int check_matrix(const struct cb_tensor *t, cb_u32 rows, cb_u32 cols)
{
	if (!t->data || t->rows != rows || t->cols != cols || t->dtype >= CB_DT__COUNT)
		return -CB_EINVAL;
	return cb_dtype_row_bytes(t->dtype, cols) ? 0 : -CB_EINVAL;
}

/**
 * cb_expert_ffn() - y = down(silu(gate x) * up x) over @n rows, as the
 * engine computes it at the same ISA level.
 * @isa_max_level: cap for the ISA variant, as in struct cb_engine_params.
 * @w: the expert (gate, up [F, H]; down [H, F]; H = gate.cols).
 * @n: rows of @x and @y, at least 1.
 * @x: f32 [n][H] in.
 * @y: f32 [n][H] out.
 * @scratch: cb_expert_scratch_size(H, F, >= n) bytes, 64-byte aligned.
 *
 * Single-threaded; floating point (kernel callers hold the FPU).
 * Return: 0, or -CB_EINVAL for a bad shape, dtype, pointer or alignment.
 */
int cb_expert_ffn(int isa_max_level, const struct cb_expert_weights *w, cb_u32 n,
		  const void *x, void *y, void *scratch)
{
	const struct cb_isa_ops *ops;
	cb_u32 H, F, t;
	cb_u64 off[4], size, qh, qf;
	const void *xg, *xu, *gact;
	cb_size xs_g, xs_u, gs;
	char *s = scratch;
	float *g, *u;
	int dg, du, dd, i;

	if (!w || !x || !y || !scratch || !n || n > 0x7fffffffu ||
	    ((cb_uptr)scratch & 63) || ((cb_uptr)x & 3) || ((cb_uptr)y & 3))
		return -CB_EINVAL;
	H = w->gate.cols;
	F = w->gate.rows;
	if (!H || !F || H > CB_EXPERT_MAX_DIM || F > CB_EXPERT_MAX_DIM ||
	    check_matrix(&w->gate, F, H) || check_matrix(&w->up, F, H) ||
	    check_matrix(&w->down, H, F))
		return -CB_EINVAL;
	if (expert_layout(H, F, n, off, &size))
		return -CB_EINVAL;

	ops = cb_isa_select(isa_max_level);
	dg = (int)w->gate.dtype;
	du = (int)w->up.dtype;
	dd = (int)w->down.dtype;
	qh = q8_row_bytes(H);
	qf = q8_row_bytes(F);
	g = (float *)(s + off[1]);
	u = (float *)(s + off[2]);

	/* block weights read q8_0 rows of x, the float types f32 rows */
	if (is_block(dg) || is_block(du))
		for (t = 0; t < n; t++)
			ops->quantize_q8_0(s + off[0] + t * qh,
					   (const float *)x + (cb_size)t * H, (int)H);
	xg = is_block(dg) ? (const void *)(s + off[0]) : x;
	xs_g = is_block(dg) ? qh : (cb_size)H * sizeof(float);
	xu = is_block(du) ? (const void *)(s + off[0]) : x;
	xs_u = is_block(du) ? qh : (cb_size)H * sizeof(float);

	/* g = Wg x, u = Wu x: [n][F] */
	ops->gemm[dg](g, F, w->gate.data, cb_dtype_row_bytes(dg, H), xg, xs_g,
		      (int)n, (int)F, (int)H);
	ops->gemm[du](u, F, w->up.data, cb_dtype_row_bytes(du, H), xu, xs_u,
		      (int)n, (int)F, (int)H);

	/* SwiGLU in place (cb_siluf, as the engine), q8_0 rows for block down */
	for (t = 0; t < n; t++) {
		float *gr = g + (cb_size)t * F;
		const float *ur = u + (cb_size)t * F;

		for (i = 0; i < (int)F; i++)
			gr[i] = cb_siluf(gr[i]) * ur[i];
		if (is_block(dd))
			ops->quantize_q8_0(s + off[3] + t * qf, gr, (int)F);
	}
	gact = is_block(dd) ? (const void *)(s + off[3]) : (const void *)g;
	gs = is_block(dd) ? qf : (cb_size)F * sizeof(float);

	/* y = Wd silu(g) * u: [n][H] */
	ops->gemm[dd](y, H, w->down.data, cb_dtype_row_bytes(dd, F), gact, gs,
		      (int)n, (int)H, (int)F);
	return 0;
}
