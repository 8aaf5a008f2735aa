// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cb_kq_avx512.c - the AVX-512 gemms of the k-quants, q4_1, q5_0, q5_1,
 * iq4_nl and mxfp4, and the q8_1 / q8_K quantizers, for the two AVX-512
 * variants.
 *
 * cb_kq_x86_tmpl.h on 256-bit vectors with AVX-512VL/BW encodings (32
 * registers: tiles of 4 rows x 4 tokens, vpermw for the scale broadcasts),
 * instantiated twice: cb_avx512_* with vpmaddwd + vpaddd for cb_isa_avx512,
 * cb_avx512_vnni_* with vpdpwssd / vpdpbusd for cb_isa_avx512_vnni (whose
 * valid() asks for VNNI once: no per-call test here).  The integer sums are
 * the same, so both give the same bits.
 */
#ifndef __CHECKER__
#include <immintrin.h>

#include "x86/cb_kq_x86_util.h"
#include "ops/cb_math.h"
#include "ops/cb_ops_q.h"

#define KQ_PERMW 1
#define KQ_MT 4

#define KQ_LINKAGE

#define KQ(n) cb_avx512_##n
#define KQ_VNNI 0
#include "x86/cb_kq_x86_tmpl.h"
#undef KQ
#undef KQ_VNNI
#undef KQ_DOT16
#undef KQ_DOTU8
#undef KQ_CALL_MT
#undef KQ_DEFINE_GEMM
#undef KQ_TILE_ARGS
#undef KQ_TILES

/* the quantizers do not use VNNI: the table shares cb_avx512_quantize_* */
#define KQ(n) cb_avx512_vnni_##n
#define KQ_VNNI 1
#define KQ_NO_QUANT
#include "x86/cb_kq_x86_tmpl.h"
#endif /* __CHECKER__ */
