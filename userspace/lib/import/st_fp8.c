// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * st_fp8.c - FP8 weights of safetensors checkpoints with block scales
 * (DeepSeek-V3/R1, Kimi-K2 and any model whose config.json says
 * quantization_config {quant_method "fp8", weight_block_size [BR, BC]}).
 *
 * Codes (safetensors dtype, torch type):
 *   F8_E4M3 float8_e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits;
 *           exponent 0 is subnormal (m / 8 * 2^-6); no infinities; 0x7f
 *           and 0xff are NaN, so 0x7e (448) is the largest value.
 *   F8_E5M2 float8_e5m2: sign, 5 exponent bits (bias 15), 2 mantissa bits;
 *           exponent 0 is subnormal (m / 4 * 2^-14); exponent 31 is
 *           infinity (mantissa 0) or NaN; the largest value is 57344.
 * 0x80 is -0 in both; it stays -0 (times a positive factor) in f32 output,
 * and the quantized types store it as 0.  A factor of 0 or below is taken
 * as given (a block of zeros, or of flipped signs): only factors that are
 * not finite, or that make the largest code overflow f32, are refused.
 *
 * Each 2-D FP8 weight W [R, C] comes with an F32 tensor W_scale_inv
 * [ceil(R / BR), ceil(C / BC)]: W[r][c] = fp8(W[r][c]) * scale_inv[r / BR]
 * [c / BC], one f32 multiplication (the last blocks of a row or column may
 * be partial).  The name is HF's: the factor that undoes the quantizer's
 * division by amax / 448.  Weights are dequantized as they are read, a
 * range of elements at a time (st_to_f32()); nothing is copied whole.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import/safetensors.h"

float st_f8_e4m3_to_f32(uint8_t b)
{
	uint32_t s = (uint32_t)(b >> 7) << 31, e = (b >> 3) & 15, m = b & 7;
	union { uint32_t u; float f; } v;

	if (e == 15 && m == 7) {
		v.u = s | 0x7fc00000u;
	} else if (!e) {
		v.f = (float)m * 0x1p-9f;	/* m / 8 * 2^-6, exact */
		v.u |= s;
	} else {
		v.u = s | (e + 127 - 7) << 23 | m << 20;
	}
	return v.f;
}

float st_f8_e5m2_to_f32(uint8_t b)
{
	uint32_t s = (uint32_t)(b >> 7) << 31, e = (b >> 2) & 31, m = b & 3;
	union { uint32_t u; float f; } v;

	if (e == 31) {
		v.u = s | 0x7f800000u | (m ? 0x400000u : 0);
	} else if (!e) {
		v.f = (float)m * 0x1p-16f;	/* m / 4 * 2^-14, exact */
		v.u |= s;
	} else {
		v.u = s | (e + 127 - 15) << 23 | m << 21;
	}
	return v.f;
}

static float f32_at(const struct st_tensor *t, uint64_t i)
{
	float f;

	memcpy(&f, (const char *)t->data + 4 * i, 4);	/* the data may be unaligned */
	return f;
}

void st_fp8_to_f32(float *dst, const struct st_tensor *t, uint64_t first, uint64_t n)
{
	const uint8_t *p = t->data;
	int e5 = t->dtype == ST_F8_E5M2;
	uint64_t cols = t->ndim >= 2 ? t->shape[t->ndim - 1] : t->nelem, i = 0;
	const struct st_tensor *sc = t->scale;

	if (!cols)
		return;
	while (i < n) {
		uint64_t e = first + i, r = e / cols, c = e % cols, k = 0;
		uint64_t run = cols - c < n - i ? cols - c : n - i;

		while (k < run) {
			/* the elements of this row in one column block */
			uint64_t end = run, cb = 0;
			float f = 1.0f;

			if (sc) {
				cb = (c + k) / t->block_cols;
				end = (cb + 1) * t->block_cols - c;
				if (end > run)
					end = run;
				f = f32_at(sc, (r / t->block_rows) * sc->shape[1] + cb);
			}
			for (; k < end; k++)
				dst[i + k] = (e5 ? st_f8_e5m2_to_f32(p[e + k]) :
					     st_f8_e4m3_to_f32(p[e + k])) * f;
		}
		i += run;
	}
}

static int is_fp8(const struct st_tensor *t)
{
	return t->dtype == ST_F8_E4M3 || t->dtype == ST_F8_E5M2;
}

/* Check and attach one FP8 tensor's scale. */
static int attach(const struct st_set *s, struct st_tensor *t, uint32_t br, uint32_t bc,
		  char *err, size_t errlen)
{
	/* the largest finite code: the factor times it must stay finite */
	float big = t->dtype == ST_F8_E4M3 ? 448.0f : 57344.0f;
	const struct st_tensor *sc;
	char name[512];
	uint64_t want_r, want_c, i;

	if (!br || !bc) {
		snprintf(err, errlen, "tensor '%s' is %s, but config.json's quantization_config "
			 "does not declare fp8 block scales (quant_method \"fp8\", "
			 "weight_block_size)", t->name, t->dtype_name);
		return -1;
	}
	if (t->ndim != 2) {
		snprintf(err, errlen, "tensor '%s' (%s): %d dimensions; block scales are read "
			 "for 2-D weights only", t->name, t->dtype_name, t->ndim);
		return -1;
	}
	if (snprintf(name, sizeof(name), "%s_scale_inv", t->name) >= (int)sizeof(name)) {
		snprintf(err, errlen, "tensor '%s': name too long", t->name);
		return -1;
	}
	sc = st_set_find(s, name);
	if (!sc) {
		snprintf(err, errlen, "tensor '%s' (%s): its block scale '%s' is missing",
			 t->name, t->dtype_name, name);
		return -1;
	}
	want_r = (t->shape[0] + br - 1) / br;
	want_c = (t->shape[1] + bc - 1) / bc;
	if (sc->dtype != ST_F32 || sc->ndim != 2 || sc->shape[0] != want_r ||
	    sc->shape[1] != want_c) {
		char shape[96];
		int k = 0, d;

		for (d = 0; d < sc->ndim; d++)
			k += snprintf(shape + k, sizeof(shape) - k, "%s%llu", d ? ", " : "",
				      (unsigned long long)sc->shape[d]);
		shape[k] = 0;
		snprintf(err, errlen, "tensor '%s': block scale '%s' must be F32 [%llu, %llu] "
			 "(%llu x %llu weights in blocks of %u x %u), not %s [%s]",
			 t->name, name, (unsigned long long)want_r, (unsigned long long)want_c,
			 (unsigned long long)t->shape[0], (unsigned long long)t->shape[1], br, bc,
			 sc->dtype_name, shape);
		return -1;
	}
	for (i = 0; i < sc->nelem; i++) {
		float f = f32_at(sc, i);

		if (!isfinite(f) || !isfinite(f * big)) {
			snprintf(err, errlen, "tensor '%s': block scale '%s' [%llu, %llu] is %g: "
				 "%s", t->name, name, (unsigned long long)(i / want_c),
				 (unsigned long long)(i % want_c), f,
				 isfinite(f) ? "the block's weights would overflow f32" :
				 "not finite");
			return -1;
		}
	}
	t->scale = sc;
	t->block_rows = br;
	t->block_cols = bc;
	return 0;
}

int st_set_fp8_blocks(struct st_set *s, uint32_t block_rows, uint32_t block_cols, char *err,
		      size_t errlen)
{
	int i, j;

	for (i = 0; i < s->nfiles; i++)
		for (j = 0; j < s->files[i]->ntensors; j++) {
			struct st_tensor *t = &s->files[i]->tensors[j];

			if (is_fp8(t) && attach(s, t, block_rows, block_cols, err, errlen))
				return -1;
		}
	return 0;
}

int st_check_values(const struct st_tensor *t, char *err, size_t errlen)
{
	/* e4m3fn: NaN is all of exponent and mantissa; e5m2: exponent 31 */
	uint8_t mask = t->dtype == ST_F8_E4M3 ? 0x7f : 0x7c;
	const uint8_t *p = t->data;
	uint64_t i, j, cols;

	if (!is_fp8(t))
		return 0;
	for (i = 0; i < t->nbytes; i += 4096) {
		uint64_t end = t->nbytes - i < 4096 ? t->nbytes : i + 4096;
		int hit = 0;

		for (j = i; j < end; j++)	/* no early exit: vectorizes */
			hit |= (p[j] & mask) == mask;
		if (!hit)
			continue;
		for (j = i; (p[j] & mask) != mask; j++)
			;
		cols = t->ndim >= 2 ? t->shape[t->ndim - 1] : t->nelem;
		snprintf(err, errlen, "tensor '%s' (%s): element [%llu, %llu] is code 0x%02x, %s "
			 "(a damaged checkpoint)", t->name, t->dtype_name,
			 (unsigned long long)(j / cols), (unsigned long long)(j % cols), p[j],
			 t->dtype == ST_F8_E5M2 && !(p[j] & 3) ? "infinite" : "NaN");
		return -1;
	}
	return 0;
}
