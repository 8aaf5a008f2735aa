/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * quantize.h - weight rows in any weight type, for the tools that write
 * model files (`colibri convert`, `colibri synth`) without reaching into
 * the engine's ISA variants themselves.
 */
#ifndef COLIBRI_QUANTIZE_H
#define COLIBRI_QUANTIZE_H

/*
 * cb_quantize_row_fast() - @n floats at @x as one row of weight type @dt
 * (enum cb_dtype) at @dst (cb_dtype_row_bytes(dt, n) bytes): the bytes of
 * the engine's scalar reference, cb_quantize_row(), made by the fastest
 * variant of this CPU where one exists (q8_0).  Thread safe.
 */
void cb_quantize_row_fast(unsigned int dt, void *dst, const float *x, int n);

#endif /* COLIBRI_QUANTIZE_H */
