// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_kq_avx2.c - the AVX2 gemms of the k-quants, q4_1, q5_0, q5_1,
 * iq4_nl and mxfp4, and the q8_1 / q8_K quantizers (cb_kq_x86_tmpl.h), for
 * cb_isa_avx2's table.  Sixteen ymm registers: tiles of 4 rows x 2 tokens.
 */
/*
 * sparse cannot parse GCC's intrinsic headers (it lacks the target
 * builtins), so it checks nothing in this file; gcc -W builds it in full.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "x86/cb_kq_x86_util.h"
#include "ops/cb_math.h"
#include "ops/cb_ops_q.h"

#define KQ(n) cb_avx2_##n
#define KQ_LINKAGE
#define KQ_VNNI 0
#define KQ_PERMW 0
#define KQ_MT 2

#include "x86/cb_kq_x86_tmpl.h"
#endif /* __CHECKER__ */
