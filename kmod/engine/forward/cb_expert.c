// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_expert.c - one routed expert, outside the engine, bit for bit.
 *
 * An executor that takes routed experts off the engine (struct
 * cb_expert_task, see cb_engine.h) must hand back exactly what the engine
 * would have computed, or logits would depend on who ran what.  This file
 * is that computation on its own: the same ops table, the same activation
 * forms (cb_dtype_act(): rows quantized by ops->quantize_act for the block
 * weights, f32 rows for the others) and the same SwiGLU as the forward
 * pass.  A gemm row's result does not depend on how many rows or tokens one
 * call covers (cb_ops.h), so one call over all @n tokens equals the
 * engine's chunked jobs.
 *
 * It needs only the ops (cb_ops_*.c, cb_isa.c, cb_isa_valid.c),
 * cb_quant.c, cb_math.c and its scratch layout (cb_sizes.c, integer only,
 * where cb_expert_scratch_size() lives), so a separate module (an
 * accelerator, a reference executor) can link it without the engine proper.
 */
#include "core/cb_engine_priv.h"
#include "ops/cb_math.h"

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
	struct cb_expert_layout lo;
	cb_u32 H, F, t, kg, ku, kd;
	const void *xg, *xu, *gact;
	cb_size xs_g, xs_u, gs, qh[CB_ACT__COUNT], qf[CB_ACT__COUNT];
	char *s = scratch;
	float *g, *u;
	int dg, du, dd, i;

	if (!w || !x || !y || !scratch || !n || n > 0x7fffffffu ||
	    ((cb_uptr)scratch & 63) || ((cb_uptr)x & 3) || ((cb_uptr)y & 3))
		return -CB_EINVAL;
	H = w->gate.cols;
	F = w->gate.rows;
	if (!H || !F || H > CB_MAX_HIDDEN || F > CB_MAX_FFN ||
	    check_matrix(&w->gate, F, H) || check_matrix(&w->up, F, H) ||
	    check_matrix(&w->down, H, F))
		return -CB_EINVAL;
	if (cb_expert_layout(H, F, n, &lo))
		return -CB_EINVAL;

	ops = cb_isa_select(isa_max_level);
	dg = (int)w->gate.dtype;
	du = (int)w->up.dtype;
	dd = (int)w->down.dtype;
	kg = cb_dtype_act(dg);
	ku = cb_dtype_act(du);
	kd = cb_dtype_act(dd);
	for (i = 0; i < CB_ACT__COUNT; i++) {
		qh[i] = (cb_size)cb_act_row_bytes(i, H);
		qf[i] = (cb_size)cb_act_row_bytes(i, F);
	}
	g = (float *)(s + lo.g);
	u = (float *)(s + lo.u);

	/* x in the forms gate and up read (f32 is x itself) */
	for (i = CB_ACT_F32 + 1; i < CB_ACT__COUNT; i++)
		if (kg == (cb_u32)i || ku == (cb_u32)i)
			for (t = 0; t < n; t++)
				ops->quantize_act[i](s + lo.x[i] + t * qh[i],
						     (const float *)x + (cb_size)t * H, (int)H);
	xg = kg == CB_ACT_F32 ? x : (const void *)(s + lo.x[kg]);
	xs_g = qh[kg];
	xu = ku == CB_ACT_F32 ? x : (const void *)(s + lo.x[ku]);
	xs_u = qh[ku];

	/* g = Wg x, u = Wu x: [n][F] */
	ops->gemm[dg](g, F, w->gate.data, cb_dtype_row_bytes(dg, H), xg, xs_g,
		      (int)n, (int)F, (int)H);
	ops->gemm[du](u, F, w->up.data, cb_dtype_row_bytes(du, H), xu, xs_u,
		      (int)n, (int)F, (int)H);

	/* SwiGLU in place (the variant's swiglu_f32, as the engine), in the form down reads */
	for (t = 0; t < n; t++) {
		float *gr = g + (cb_size)t * F;

		ops->swiglu_f32(gr, u + (cb_size)t * F, (int)F);
		if (kd != CB_ACT_F32)
			ops->quantize_act[kd](s + lo.a[kd] + t * qf[kd], gr, (int)F);
	}
	gact = kd == CB_ACT_F32 ? (const void *)g : (const void *)(s + lo.a[kd]);
	gs = qf[kd];

	/* y = Wd silu(g) * u: [n][H] */
	ops->gemm[dd](y, H, w->down.data, cb_dtype_row_bytes(dd, F), gact, gs,
		      (int)n, (int)H, (int)F);
	return 0;
}
