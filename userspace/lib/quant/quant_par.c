// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * quant_par.c - cb_quantize_st_rows(): a parallel_for over ranges of rows,
 * each chunk with its own f32 row buffer.
 */
#include <stdlib.h>

#include "ops/cb_ops.h"
#include "quant/quant_par.h"
#include "quant/quantize.h"
#include "import/safetensors.h"

struct qjob {
	const struct st_tensor *t;
	uint32_t cols;
	uint64_t first, n, per;
	int dt, failed;
	size_t rb;
	char *dst;
};

static void qchunk(void *arg, int c)
{
	struct qjob *j = arg;
	uint64_t r0 = (uint64_t)c * j->per, r;
	float *row = malloc(sizeof(float) * j->cols);

	if (!row) {
		__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (r = r0; r < r0 + j->per && r < j->n; r++) {
		st_to_f32(row, j->t, (j->first + r) * j->cols, j->cols);
		cb_quantize_row_fast((unsigned int)j->dt, j->dst + r * j->rb, row, (int)j->cols);
	}
	free(row);
}

int cb_quantize_st_rows(struct cb_exec *ex, const struct st_tensor *t, uint32_t cols,
			uint64_t first, uint64_t n, int dt, void *dst)
{
	struct qjob j = { .t = t, .cols = cols, .first = first, .n = n, .dt = dt,
			  .rb = cb_dtype_row_bytes((cb_u32)dt, cols), .dst = dst };
	uint64_t chunks = (uint64_t)(ex->nthreads > 0 ? ex->nthreads : 1) * 4;

	if (!n)
		return 0;
	if (chunks > n)
		chunks = n;
	j.per = (n + chunks - 1) / chunks;
	ex->parallel_for(ex, qchunk, &j, (int)((n + j.per - 1) / j.per));
	return j.failed ? -1 : 0;
}
