// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * st_convert.c - a safetensors tensor's values for the engine: any
 * supported dtype as f32 (st_to_f32(); FP8 through st_fp8.c, which sits
 * below, next to the file reader safetensors.c), and the engine type its
 * bytes are (st_cb_dtype(), st_keep_dtype()).
 */
#include <string.h>

#include "ops/cb_ops.h"
#include "import/safetensors.h"

void st_to_f32(float *dst, const struct st_tensor *t, uint64_t first, uint64_t n)
{
	const unsigned char *p = t->data;
	uint64_t i;
	uint16_t h;

	switch (t->dtype) {
	case ST_F32:
		memcpy(dst, p + first * 4, n * 4);
		break;
	case ST_F16:
		for (i = 0; i < n; i++) {
			memcpy(&h, p + (first + i) * 2, 2);
			dst[i] = cb_f16_to_f32(h);
		}
		break;
	case ST_BF16:
		for (i = 0; i < n; i++) {
			memcpy(&h, p + (first + i) * 2, 2);
			dst[i] = cb_bf16_to_f32(h);
		}
		break;
	case ST_F8_E4M3:
	case ST_F8_E5M2:
		st_fp8_to_f32(dst, t, first, n);
		break;
	default:
		memset(dst, 0, n * 4);
	}
}

int st_cb_dtype(const struct st_tensor *t)
{
	switch (t->dtype) {
	case ST_F32: return CB_DT_F32;
	case ST_F16: return CB_DT_F16;
	case ST_BF16: return CB_DT_BF16;
	default: return -1;
	}
}

int st_keep_dtype(const struct st_tensor *t)
{
	return t->dtype == ST_F32 ? CB_DT_F32 : t->dtype == ST_F16 ? CB_DT_F16 : CB_DT_BF16;
}
