/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cb_pack_walk.h - what every variant's gemm over packed activations
 * shares, written once: the tile shapes as functions, their table, and
 * the walk over them (cb_ops.h's gemm_pk).
 *
 * A variant's packed gemm is a tile, R weight rows by MT tokens, written
 * for its ISA (the instructions and the packed layout differ: AVX2's
 * vpmaddubsw by block, VNNI's vpdpbusd by pair of blocks).  Around it,
 * every variant does the same:
 *
 *   - the tile is instantiated with constant shapes, each a function of
 *     its own (the compiler unrolls the constant loops and keeps the
 *     accumulators in registers): R rows without the weights' prefetch,
 *     R rows with it, and one row (with it), each for 1..MT tokens;
 *   - the walk takes row groups outside and token tiles inside, the token
 *     tiles as even as they go (the fewest of at most MT tokens); the
 *     first token tile of a row group prefetches the weights, the later
 *     ones find them in L1.  Rows left over go one at a time.
 *
 * A (row, token) result depends on neither the tile nor the walk (the bit
 * contract of cb_ops.h): the walk only decides which tile computes it.
 *
 * The tile's signature: tile(out, ldo, w, wrb, pk, ps, R, MT, nb, dt, pf),
 * nb the weight row's blocks, dt its type, pf whether to prefetch.
 */
#ifndef CB_PACK_WALK_H
#define CB_PACK_WALK_H

#include "core/cb_platform.h"

#define CB_PK_ROWS 4	/* weight rows of every variant's tile */

typedef void (*cb_pk_tile_fn)(float *out, cb_size ldo, const char *w, cb_size wrb,
			      const char *pk, cb_size ps, int nb);

/* one shape of @tile, as the function NAME_RxMT_PF */
#define CB_PK_TILE(tile, name, dt, R, MT, pf)					\
static CB_NOINLINE void name##_##R##x##MT##_##pf(float *out, cb_size ldo,		\
						 const char *w, cb_size wrb,		\
						 const char *pk, cb_size ps, int nb)	\
{ tile(out, ldo, w, wrb, pk, ps, R, MT, nb, dt, pf); }

/*
 * The initializer of a table of a 4-row tile's shapes (each a CB_PK_TILE
 * of the file's), cb_pk_tile_fn NAME[3 * MT], [kind * MT + tokens - 1]
 * with kind 0: 4 rows without prefetch, 1: 4 rows, 2: one row.
 */
#define CB_PK_TABLE_4x2(name)							\
	{ name##_4x1_0, name##_4x2_0,						\
	  name##_4x1_1, name##_4x2_1,						\
	  name##_1x1_1, name##_1x2_1 }

#define CB_PK_TABLE_4x4(name)							\
	{ name##_4x1_0, name##_4x2_0, name##_4x3_0, name##_4x4_0,		\
	  name##_4x1_1, name##_4x2_1, name##_4x3_1, name##_4x4_1,		\
	  name##_1x1_1, name##_1x2_1, name##_1x3_1, name##_1x4_1 }

/*
 * The walk over @tiles (a table of CB_PK_TABLE_4xMT) for M tokens of packed
 * activations (row m at act + m * as) times nrows weight rows of nb blocks
 * (row r at w + r * wrb), into out[m * ldo + r].
 */
static inline CB_ALWAYS_INLINE void cb_pk_walk(const cb_pk_tile_fn *tiles, int MT, float *out,
					       cb_size ldo, const char *w, cb_size wrb,
					       const char *act, cb_size as, int M, int nrows,
					       int nb)
{
	int r0, m0, mt, step;

	for (r0 = 0; r0 < nrows; r0 += step) {
		step = r0 + CB_PK_ROWS <= nrows ? CB_PK_ROWS : 1;
		for (m0 = 0; m0 < M; m0 += mt) {
			int n = (M - m0 + MT - 1) / MT;
			int kind = step == 1 ? 2 : m0 == 0;

			mt = (M - m0 + n - 1) / n;
			tiles[kind * MT + mt - 1](out + (cb_size)m0 * ldo + r0, ldo,
						  w + (cb_size)r0 * wrb, wrb,
						  act + (cb_size)m0 * as, as, nb);
		}
	}
}

#endif /* CB_PACK_WALK_H */
