/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * quant_par.h - quantizing many rows of a source tensor on every core.
 *
 * The k-quant quantizers search per sub-block (cb_quant_k.c) and take tens
 * of nanoseconds per weight; the converter runs them through the host
 * thread pool, a range of rows per chunk.  Each row's bytes depend only on
 * that row, so the output is the same for any thread count.
 */
#ifndef COLIBRI_QUANT_PAR_H
#define COLIBRI_QUANT_PAR_H

#include <stdint.h>

struct cb_exec;
struct st_tensor;

/**
 * cb_quantize_st_rows() - rows of a safetensors tensor to weight type dt.
 * @ex: the thread pool (cb_host_exec_create()).
 * @t: the source tensor, rows of @cols elements.
 * @first: first row.
 * @n: rows.
 * @dt: enum cb_dtype; @cols a whole number of its blocks.
 * @dst: n * cb_dtype_row_bytes(dt, cols) bytes.
 *
 * Return: 0, or -1 when memory for the row buffers ran out.
 */
int cb_quantize_st_rows(struct cb_exec *ex, const struct st_tensor *t, uint32_t cols,
			uint64_t first, uint64_t n, int dt, void *dst);

#endif /* COLIBRI_QUANT_PAR_H */
