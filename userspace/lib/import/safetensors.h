/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * safetensors.h - read-only access to Hugging Face .safetensors files.
 *
 * Format: 8-byte little-endian header length N, N bytes of JSON
 * ({"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 * "__metadata__": {...}}), then the data; offsets are relative to the end of
 * the header.  The file is mmap'ed; every offset, size and shape is checked
 * against the file before a tensor is handed out.
 */
#ifndef COLIBRI_SAFETENSORS_H
#define COLIBRI_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

enum st_dtype {
	ST_F32,
	ST_F16,
	ST_BF16,
	ST_F8_E4M3,	/* float8_e4m3fn: with block scales (st_fp8.c) */
	ST_F8_E5M2,	/* float8_e5m2: the same */
	ST_OTHER,	/* present in the file but not supported here */
};

#define ST_MAX_DIMS 8	/* a vision tower's conv3d has 5 */

struct st_tensor {
	char *name;
	enum st_dtype dtype;
	char dtype_name[8];
	int ndim;
	uint64_t shape[ST_MAX_DIMS];
	uint64_t nelem;
	const void *data;	/* inside the mapping */
	uint64_t nbytes;
	/*
	 * FP8 only, set by st_set_fp8_blocks(): the F32 tensor of per-block
	 * factors ("<name>_scale_inv", [ceil(rows / block_rows),
	 * ceil(cols / block_cols)]); weight = fp8 value * its block's factor.
	 */
	const struct st_tensor *scale;
	uint32_t block_rows, block_cols;
};

struct st_file {
	char *path;
	void *map;
	size_t map_size;
	struct st_tensor *tensors;
	int ntensors;
};

/*
 * Open and validate one file.  On failure returns NULL and writes a one-line
 * reason to err (errlen bytes).
 */
struct st_file *st_open(const char *path, char *err, size_t errlen);
void st_close(struct st_file *f);
const struct st_tensor *st_find(const struct st_file *f, const char *name);

/*
 * A model's tensors, possibly spread over several shards
 * (model.safetensors.index.json) or in one model.safetensors.
 */
struct st_set {
	struct st_file **files;
	int nfiles;
};

struct st_set *st_set_open_dir(const char *dir, char *err, size_t errlen);
void st_set_close(struct st_set *s);
const struct st_tensor *st_set_find(const struct st_set *s, const char *name);

/* ---- values for the engine (st_convert.c) ------------------------------ */

/*
 * Convert n elements of a tensor's data (any supported dtype) to f32; FP8
 * elements are multiplied by their block's scale (1 without one).  A NaN
 * or infinite FP8 code gives NaN or infinity: st_check_values() first.
 */
void st_to_f32(float *dst, const struct st_tensor *t, uint64_t first, uint64_t n);

/*
 * st_cb_dtype() - the engine type (enum cb_dtype) whose bytes the tensor
 * holds as stored, or -1 (FP8: the engine has no such type).
 * st_keep_dtype() - what "--quant keep" makes of it: the same type, and
 * bf16 for FP8 (the type DeepSeek's own fp8 -> bf16 conversion writes).
 */
int st_cb_dtype(const struct st_tensor *t);
int st_keep_dtype(const struct st_tensor *t);

/* ---- FP8 (st_fp8.c) ---------------------------------------------------- */

/* One FP8 code as f32 (NaN and infinity as such; 0x80 is -0). */
float st_f8_e4m3_to_f32(uint8_t b);
float st_f8_e5m2_to_f32(uint8_t b);

/*
 * st_set_fp8_blocks() - attach to every FP8 tensor of @s its block scale
 * "<name>_scale_inv" (block_rows x block_cols weights per factor, from
 * config.json's quantization_config; 0 x 0: the config declares none).
 * Refused, naming the tensor: an FP8 tensor without the declaration, not
 * 2-D, without its scale, with a scale that is not F32 of the right shape,
 * or with a factor that is not finite or that would make the largest FP8
 * value overflow f32.  0, or -1 with one line in @err.
 */
int st_set_fp8_blocks(struct st_set *s, uint32_t block_rows, uint32_t block_cols, char *err,
		      size_t errlen);

/*
 * st_check_values() - a tensor's stored values are all finite: FP8 codes
 * that are NaN (e4m3fn 0x7f, 0xff; e5m2 exponent 31 with a mantissa) or
 * infinite (e5m2 0x7c, 0xfc) are refused, naming the tensor and the first
 * such element's row and column.  Other dtypes pass unread.  0 or -1.
 */
int st_check_values(const struct st_tensor *t, char *err, size_t errlen);

/* st_to_f32() of an FP8 tensor. */
void st_fp8_to_f32(float *dst, const struct st_tensor *t, uint64_t first, uint64_t n);

#endif /* COLIBRI_SAFETENSORS_H */
