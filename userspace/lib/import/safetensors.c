// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * safetensors.c - mmap and validate .safetensors files, single or sharded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "import/safetensors.h"
#include "util/util.h"

/* Header JSON larger than this is refused (real ones are a few MB). */
#define ST_MAX_HEADER (100u << 20)

static int dtype_of(const char *s, enum st_dtype *dt, unsigned *esize)
{
	static const struct {
		const char *name;
		enum st_dtype dt;
		unsigned size;
	} tab[] = {
		{ "F32", ST_F32, 4 }, { "F16", ST_F16, 2 }, { "BF16", ST_BF16, 2 },
		{ "F64", ST_OTHER, 8 }, { "I64", ST_OTHER, 8 }, { "I32", ST_OTHER, 4 },
		{ "I16", ST_OTHER, 2 }, { "I8", ST_OTHER, 1 }, { "U8", ST_OTHER, 1 },
		{ "BOOL", ST_OTHER, 1 }, { "F8_E4M3", ST_F8_E4M3, 1 },
		{ "F8_E5M2", ST_F8_E5M2, 1 }, { "U16", ST_OTHER, 2 },
		{ "U32", ST_OTHER, 4 }, { "U64", ST_OTHER, 8 },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].name)) {
			*dt = tab[i].dt;
			*esize = tab[i].size;
			return 0;
		}
	return -1;
}

/* A JSON number that is a non-negative integer exactly representable. */
static int json_u64(const cJSON *n, uint64_t *out)
{
	double d;

	if (!cJSON_IsNumber(n))
		return -1;
	d = n->valuedouble;
	if (!(d >= 0) || d > 9007199254740992.0 || d != (double)(uint64_t)d)
		return -1;
	*out = (uint64_t)d;
	return 0;
}

static int parse_tensor(struct st_file *f, const cJSON *item, uint64_t data_size,
			struct st_tensor *t, char *err, size_t errlen)
{
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
	const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
	const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
	const cJSON *d;
	uint64_t b, e, n = 1, bytes;
	unsigned es;
	int i = 0;

	if (!cJSON_IsObject(item) || !cJSON_IsString(dt) || !cJSON_IsArray(shape) ||
	    !cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2) {
		cb_set_err(err, errlen, "%s: tensor '%s': malformed header entry", f->path,
		       item->string);
		return -1;
	}
	if (dtype_of(dt->valuestring, &t->dtype, &es)) {
		cb_set_err(err, errlen, "%s: tensor '%s': unknown dtype '%s'", f->path,
		       item->string, dt->valuestring);
		return -1;
	}
	snprintf(t->dtype_name, sizeof(t->dtype_name), "%s", dt->valuestring);
	if (cJSON_GetArraySize(shape) > ST_MAX_DIMS) {
		cb_set_err(err, errlen, "%s: tensor '%s': more than %d dimensions", f->path,
		       item->string, ST_MAX_DIMS);
		return -1;
	}
	cJSON_ArrayForEach(d, shape) {
		if (json_u64(d, &t->shape[i]) ||
		    __builtin_mul_overflow(n, t->shape[i], &n)) {
			cb_set_err(err, errlen, "%s: tensor '%s': bad shape", f->path,
			       item->string);
			return -1;
		}
		i++;
	}
	t->ndim = i;
	t->nelem = n;
	if (json_u64(cJSON_GetArrayItem(offs, 0), &b) ||
	    json_u64(cJSON_GetArrayItem(offs, 1), &e) || b > e || e > data_size ||
	    __builtin_mul_overflow(n, (uint64_t)es, &bytes) || bytes != e - b) {
		cb_set_err(err, errlen,
		       "%s: tensor '%s': data_offsets do not match its shape or lie outside the file",
		       f->path, item->string);
		return -1;
	}
	t->nbytes = bytes;
	t->name = strdup(item->string);
	if (!t->name) {
		cb_set_err(err, errlen, "%s: out of memory", f->path);
		return -1;
	}
	t->data = (const char *)f->map + 8 + (f->map_size - 8 - data_size) + b;
	return 0;
}

struct st_file *st_open(const char *path, char *err, size_t errlen)
{
	struct st_file *f = calloc(1, sizeof(*f));
	struct stat sb;
	uint64_t hlen, data_size;
	cJSON *root = NULL, *item;
	int fd = -1, n;

	if (!f) {
		cb_set_err(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	f->path = strdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		cb_set_err(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (sb.st_size < 8) {
		cb_set_err(err, errlen, "%s: too short for a safetensors file", path);
		goto fail;
	}
	f->map_size = (size_t)sb.st_size;
	f->map = mmap(NULL, f->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		cb_set_err(err, errlen, "%s: mmap: %s", path, strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	memcpy(&hlen, f->map, 8);	/* little-endian hosts only (x86) */
	if (hlen > ST_MAX_HEADER || hlen > f->map_size - 8) {
		cb_set_err(err, errlen, "%s: header length %llu exceeds the file", path,
		       (unsigned long long)hlen);
		goto fail;
	}
	data_size = f->map_size - 8 - hlen;
	root = cJSON_ParseWithLength((const char *)f->map + 8, (size_t)hlen);
	if (!cJSON_IsObject(root)) {
		cb_set_err(err, errlen, "%s: header is not a JSON object", path);
		goto fail;
	}
	n = cJSON_GetArraySize(root);
	f->tensors = calloc(n ? n : 1, sizeof(*f->tensors));
	if (!f->tensors) {
		cb_set_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	cJSON_ArrayForEach(item, root) {
		if (!strcmp(item->string, "__metadata__"))
			continue;
		if (parse_tensor(f, item, data_size, &f->tensors[f->ntensors], err, errlen))
			goto fail;
		f->ntensors++;
	}
	cJSON_Delete(root);
	return f;
fail:
	if (fd >= 0)
		close(fd);
	cJSON_Delete(root);
	st_close(f);
	return NULL;
}

void st_close(struct st_file *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->ntensors; i++)
		free(f->tensors[i].name);
	free(f->tensors);
	if (f->map)
		munmap(f->map, f->map_size);
	free(f->path);
	free(f);
}

const struct st_tensor *st_find(const struct st_file *f, const char *name)
{
	int i;

	for (i = 0; i < f->ntensors; i++)
		if (!strcmp(f->tensors[i].name, name))
			return &f->tensors[i];
	return NULL;
}

static int set_add(struct st_set *s, const char *path, char *err, size_t errlen)
{
	struct st_file **nf, *f;

	f = st_open(path, err, errlen);
	if (!f)
		return -1;
	nf = realloc(s->files, (s->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		st_close(f);
		cb_set_err(err, errlen, "%s: out of memory", path);
		return -1;
	}
	s->files = nf;
	s->files[s->nfiles++] = f;
	return 0;
}

struct st_set *st_set_open_dir(const char *dir, char *err, size_t errlen)
{
	struct st_set *s = calloc(1, sizeof(*s));
	char path[PATH_MAX];
	cJSON *root = NULL, *map, *it, *jt;
	char *txt;
	size_t len;

	if (!s) {
		cb_set_err(err, errlen, "%s: out of memory", dir);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/model.safetensors.index.json", dir);
	txt = cb_read_file(path, 64u << 20, &len);
	if (!txt) {
		snprintf(path, sizeof(path), "%s/model.safetensors", dir);
		if (access(path, R_OK)) {
			cb_set_err(err, errlen,
			       "%s: no model.safetensors or model.safetensors.index.json", dir);
			goto fail;
		}
		if (set_add(s, path, err, errlen))
			goto fail;
		return s;
	}
	root = cJSON_ParseWithLength(txt, len);
	free(txt);
	map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
	if (!cJSON_IsObject(map)) {
		cb_set_err(err, errlen, "%s: no weight_map object", path);
		goto fail;
	}
	/* open each distinct shard once, in order of first mention */
	cJSON_ArrayForEach(it, map) {
		int seen = 0;

		if (!cJSON_IsString(it) || strchr(it->valuestring, '/') ||
		    !strcmp(it->valuestring, "..")) {
			cb_set_err(err, errlen, "%s: bad shard name for '%s'", path, it->string);
			goto fail;
		}
		for (jt = map->child; jt != it; jt = jt->next)
			if (!strcmp(jt->valuestring, it->valuestring))
				seen = 1;
		if (seen)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, it->valuestring);
		if (set_add(s, path, err, errlen))
			goto fail;
	}
	cJSON_Delete(root);
	return s;
fail:
	cJSON_Delete(root);
	st_set_close(s);
	return NULL;
}

void st_set_close(struct st_set *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nfiles; i++)
		st_close(s->files[i]);
	free(s->files);
	free(s);
}

const struct st_tensor *st_set_find(const struct st_set *s, const char *name)
{
	const struct st_tensor *t;
	int i;

	for (i = 0; i < s->nfiles; i++)
		if ((t = st_find(s->files[i], name)))
			return t;
	return NULL;
}
