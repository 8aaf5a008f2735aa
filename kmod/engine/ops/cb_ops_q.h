/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_ops_q.h - the gemms and activation quantizers of the block types added
 * to the ops tables from their own files: cb_ops_scalar_q.c (the scalar
 * references) and cb_kq_x86_tmpl.h, instantiated by cb_kq_avx2.c and
 * (twice: without and with VNNI) cb_kq_avx512.c.  Each has the signature
 * of cb_gemm_fn (cb_ops.h) and reads the activation form cb_dtype_act()
 * names.
 *
 * FPU-side header: only engine objects include it.
 */
#ifndef CB_OPS_Q_H
#define CB_OPS_Q_H

#include "ops/cb_ops.h"

#define CB_GEMM_PROTO(name)						\
	void name(float *out, cb_size ldo, const void *w, cb_size w_row_bytes,	\
		  const void *act, cb_size act_stride, int M, int nrows, int k)

/*
 * The gemms of each variant (scalar, avx2, avx512, avx512_vnni) for the new
 * block types.
 */
CB_GEMM_PROTO(cb_scalar_gemm_q4_1);
CB_GEMM_PROTO(cb_scalar_gemm_q5_0);
CB_GEMM_PROTO(cb_scalar_gemm_q5_1);
CB_GEMM_PROTO(cb_scalar_gemm_iq4_nl);
CB_GEMM_PROTO(cb_scalar_gemm_q2_K);
CB_GEMM_PROTO(cb_scalar_gemm_q3_K);
CB_GEMM_PROTO(cb_scalar_gemm_q4_K);
CB_GEMM_PROTO(cb_scalar_gemm_q5_K);
CB_GEMM_PROTO(cb_scalar_gemm_q6_K);
CB_GEMM_PROTO(cb_scalar_gemm_iq4_xs);
CB_GEMM_PROTO(cb_scalar_gemm_mxfp4);

CB_GEMM_PROTO(cb_avx2_gemm_q4_1);
CB_GEMM_PROTO(cb_avx2_gemm_q5_0);
CB_GEMM_PROTO(cb_avx2_gemm_q5_1);
CB_GEMM_PROTO(cb_avx2_gemm_iq4_nl);
CB_GEMM_PROTO(cb_avx2_gemm_q2_K);
CB_GEMM_PROTO(cb_avx2_gemm_q3_K);
CB_GEMM_PROTO(cb_avx2_gemm_q4_K);
CB_GEMM_PROTO(cb_avx2_gemm_q5_K);
CB_GEMM_PROTO(cb_avx2_gemm_q6_K);
CB_GEMM_PROTO(cb_avx2_gemm_iq4_xs);
CB_GEMM_PROTO(cb_avx2_gemm_mxfp4);

CB_GEMM_PROTO(cb_avx512_gemm_q4_1);
CB_GEMM_PROTO(cb_avx512_gemm_q5_0);
CB_GEMM_PROTO(cb_avx512_gemm_q5_1);
CB_GEMM_PROTO(cb_avx512_gemm_iq4_nl);
CB_GEMM_PROTO(cb_avx512_gemm_q2_K);
CB_GEMM_PROTO(cb_avx512_gemm_q3_K);
CB_GEMM_PROTO(cb_avx512_gemm_q4_K);
CB_GEMM_PROTO(cb_avx512_gemm_q5_K);
CB_GEMM_PROTO(cb_avx512_gemm_q6_K);
CB_GEMM_PROTO(cb_avx512_gemm_iq4_xs);
CB_GEMM_PROTO(cb_avx512_gemm_mxfp4);

CB_GEMM_PROTO(cb_avx512_vnni_gemm_q4_1);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q5_0);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q5_1);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_iq4_nl);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q2_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q3_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q4_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q5_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_q6_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_iq4_xs);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_mxfp4);

/*
 * The designated initialisers of an ops table's gemm entries for them;
 * _NO_Q46: all but q4_K and q6_K, for a table that takes other gemms there.
 */
#define CB_GEMM_Q_TABLE_NO_Q46(v)			\
	[CB_DT_Q4_1] = cb_##v##_gemm_q4_1,		\
	[CB_DT_Q5_0] = cb_##v##_gemm_q5_0,		\
	[CB_DT_Q5_1] = cb_##v##_gemm_q5_1,		\
	[CB_DT_IQ4_NL] = cb_##v##_gemm_iq4_nl,		\
	[CB_DT_Q2_K] = cb_##v##_gemm_q2_K,		\
	[CB_DT_Q3_K] = cb_##v##_gemm_q3_K,		\
	[CB_DT_Q5_K] = cb_##v##_gemm_q5_K,		\
	[CB_DT_IQ4_XS] = cb_##v##_gemm_iq4_xs,		\
	[CB_DT_MXFP4] = cb_##v##_gemm_mxfp4
#define CB_GEMM_Q_TABLE(v)				\
	[CB_DT_Q4_K] = cb_##v##_gemm_q4_K,		\
	[CB_DT_Q6_K] = cb_##v##_gemm_q6_K,		\
	CB_GEMM_Q_TABLE_NO_Q46(v)

/* The VNNI gemms over packed q8_0 activations and the packer (cb_pack_avx512.c) */
CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q8_0);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q4_0);
void cb_avx512_vnni_pack_q8_0(void *dst, const void *src, int k);
/* The AVX2 (and AVX-512 without VNNI) ones, their packer (cb_pack_avx2.c) */
CB_GEMM_PROTO(cb_avx2_gemm_pk_q8_0);
CB_GEMM_PROTO(cb_avx2_gemm_pk_q4_0);
void cb_avx2_pack_q8_0(void *dst, const void *src, int k);
/* The AVX2 (and AVX-512 without VNNI) q4_K gemm over packed q8_K rows (cb_pack_k_avx2.c) */
CB_GEMM_PROTO(cb_avx2_gemm_pk_q4_K);
void cb_avx2_pack_q8_K(void *dst, const void *src, int k);
/*
 * The AVX2 q4_K and q6_K gemms of a few tokens (cb_kq_few_avx2.c): gemm[] of
 * the avx2 and avx512 variants, which take M = 1 on to their own gemms.
 */
CB_GEMM_PROTO(cb_avx2_gemm_few_q4_K);
CB_GEMM_PROTO(cb_avx2_gemm_few_q6_K);
CB_GEMM_PROTO(cb_avx512_gemm_few_q4_K);
CB_GEMM_PROTO(cb_avx512_gemm_few_q6_K);
/*
 * The VNNI q4_K, q5_K, q6_K gemms over packed q8_K activations, the packer
 * (cb_pack_k_avx512.c)
 */
CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q4_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q5_K);
CB_GEMM_PROTO(cb_avx512_vnni_gemm_pk_q6_K);
void cb_avx512_vnni_pack_q8_K(void *dst, const void *src, int k);

/* The VNNI gemms at M = 1 (cb_q_dec_avx512.c): out[r] = row r . act */
void cb_avx512_vnni_gemm_dec_q8_0(float *out, const void *w, cb_size w_row_bytes,
				  const void *act, int nrows, int k);
void cb_avx512_vnni_gemm_dec_q4_0(float *out, const void *w, cb_size w_row_bytes,
				  const void *act, int nrows, int k);

/* q8_1 and q8_K activation quantizers of the SIMD variants (cb_kq_*.c) */
void cb_avx2_quantize_q8_1(void *dst, const float *x, int n);
void cb_avx2_quantize_q8_K(void *dst, const float *x, int n);
void cb_avx512_quantize_q8_1(void *dst, const float *x, int n);
void cb_avx512_quantize_q8_K(void *dst, const float *x, int n);

#endif /* CB_OPS_Q_H */
