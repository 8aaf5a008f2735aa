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
	ST_OTHER,	/* present in the file but not supported here */
};

#define ST_MAX_DIMS 4

struct st_tensor {
	char *name;
	enum st_dtype dtype;
	char dtype_name[8];
	int ndim;
	uint64_t shape[ST_MAX_DIMS];
	uint64_t nelem;
	const void *data;	/* inside the mapping */
	uint64_t nbytes;
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

/* Convert n elements of a tensor's data (any supported dtype) to f32. */
void st_to_f32(float *dst, const struct st_tensor *t, uint64_t first, uint64_t n);

#endif /* COLIBRI_SAFETENSORS_H */
