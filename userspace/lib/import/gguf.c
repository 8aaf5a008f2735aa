// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * gguf.c - GGUF v2/v3 parser.  The file is untrusted: the cursor below never
 * reads a byte it has not checked is inside the file, every count is bounded
 * by the bytes left before anything is allocated for it, and every size is
 * computed with overflow checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/gguf.h"
#include "quant/cb_quant.h"

#define GGUF_MAGIC "GGUF"

/*
 * Real files have a few dozen metadata keys (the vocabulary is one array)
 * and at most some thousands of tensors; these caps keep a hostile header
 * from making us allocate or compare without bound.
 */
#define GGUF_MAX_KV 4096
#define GGUF_MAX_TENSORS (1u << 20)

struct cursor {
	const uint8_t *p;
	size_t size;
	size_t off;
	int fail;
};

/* ggml types: name, elements per block, bytes per block (0 = unknown). */
static const struct {
	const char *name;
	uint32_t blck;
	uint32_t size;
} ggml_types[] = {
	[0] = { "F32", 1, 4 },		[1] = { "F16", 1, 2 },
	[2] = { "Q4_0", 32, 18 },	[3] = { "Q4_1", 32, 20 },
	[6] = { "Q5_0", 32, 22 },	[7] = { "Q5_1", 32, 24 },
	[8] = { "Q8_0", 32, 34 },	[9] = { "Q8_1", 32, 36 },
	[10] = { "Q2_K", 256, 84 },	[11] = { "Q3_K", 256, 110 },
	[12] = { "Q4_K", 256, 144 },	[13] = { "Q5_K", 256, 176 },
	[14] = { "Q6_K", 256, 210 },	[15] = { "Q8_K", 256, 292 },
	[16] = { "IQ2_XXS", 0, 0 },	[17] = { "IQ2_XS", 0, 0 },
	[18] = { "IQ3_XXS", 0, 0 },	[19] = { "IQ1_S", 0, 0 },
	[20] = { "IQ4_NL", 32, 18 },	[21] = { "IQ3_S", 0, 0 },
	[22] = { "IQ2_S", 0, 0 },	[23] = { "IQ4_XS", 256, 136 },
	[24] = { "I8", 1, 1 },		[25] = { "I16", 1, 2 },
	[26] = { "I32", 1, 4 },		[27] = { "I64", 1, 8 },
	[28] = { "F64", 1, 8 },		[29] = { "IQ1_M", 0, 0 },
	[30] = { "BF16", 1, 2 },	[34] = { "TQ1_0", 0, 0 },
	[35] = { "TQ2_0", 0, 0 },	[39] = { "MXFP4", 32, 17 },
};
#define N_GGML_TYPES (sizeof(ggml_types) / sizeof(ggml_types[0]))

/*
 * The engine's type of the same name (case aside: "Q4_K" is "q4_K") and
 * the same block, which stores it byte for byte as ggml does.  A new
 * engine weight type needs nothing here when ggml has it.
 */
int gguf_type_to_cb(uint32_t type)
{
	uint32_t dt;

	if (type >= N_GGML_TYPES || !ggml_types[type].blck)
		return -1;
	for (dt = 0; dt < CB_DT__COUNT; dt++) {
		const struct cb_block_info *b = cb_dtype_info(dt);

		if (!strcasecmp(b->name, ggml_types[type].name) &&
		    b->block == ggml_types[type].blck && b->block_bytes == ggml_types[type].size)
			return (int)dt;
	}
	return -1;
}

/* In the engine's order of types (its table's): floats, then blocks. */
const char *gguf_supported_types(char *buf, size_t len)
{
	size_t n = 0;
	uint32_t t;
	int dt;

	buf[0] = 0;
	for (dt = 0; dt < CB_DT__COUNT; dt++)
		for (t = 0; t < N_GGML_TYPES; t++)
			if (gguf_type_to_cb(t) == dt && n < len)
				n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
						      ggml_types[t].name);
	return buf;
}

static const char *const vtype_names[GGUF_VT__COUNT] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array",
	"u64", "i64", "f64",
};

/* Bytes of one scalar of a value type (0 for string/array). */
static const uint8_t vtype_size[GGUF_VT__COUNT] = {
	1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8,
};

const char *gguf_type_name(uint32_t type)
{
	static __thread char buf[24];

	if (type < N_GGML_TYPES && ggml_types[type].name)
		return ggml_types[type].name;
	snprintf(buf, sizeof(buf), "type %u", type);
	return buf;
}

const char *gguf_vtype_name(uint32_t vtype)
{
	return vtype < GGUF_VT__COUNT ? vtype_names[vtype] : "unknown";
}

uint64_t gguf_type_bytes(uint32_t type, uint64_t n)
{
	uint64_t b;

	if (type >= N_GGML_TYPES || !ggml_types[type].size)
		return 0;
	if (n % ggml_types[type].blck)
		return 0;
	if (__builtin_mul_overflow(n / ggml_types[type].blck,
				   (uint64_t)ggml_types[type].size, &b))
		return 0;
	return b;
}

static void seterr(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	n = snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
}

static size_t left(const struct cursor *c)
{
	return c->size - c->off;
}

static const uint8_t *take(struct cursor *c, uint64_t n)
{
	const uint8_t *p;

	if (c->fail || n > left(c)) {
		c->fail = 1;
		return NULL;
	}
	p = c->p + c->off;
	c->off += n;
	return p;
}

static uint32_t rd32(struct cursor *c)
{
	const uint8_t *p = take(c, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);	/* little-endian host (x86-64, arm64) */
	return v;
}

static uint64_t rd64(struct cursor *c)
{
	const uint8_t *p = take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

static int rdstr(struct cursor *c, struct gguf_str *s)
{
	uint64_t n = rd64(c);
	const uint8_t *p;

	if (c->fail)
		return -1;
	p = take(c, n);
	if (!p)
		return -1;
	s->p = (const char *)p;
	s->n = n;
	return 0;
}

void gguf_close(struct gguf_file *f)
{
	uint64_t i;

	if (!f)
		return;
	for (i = 0; i < f->n_tensors && f->tensors; i++)
		free(f->tensors[i].name);
	free(f->tensors);
	free(f->by_name);
	free(f->kv);
	if (f->mapped && f->map)
		munmap((void *)f->map, f->size);
	free(f->path);
	free(f);
}

/* A key, printable and bounded, for messages. */
static void keyname(char *buf, size_t n, const struct gguf_str *k)
{
	size_t i, m = k->n < n - 1 ? (size_t)k->n : n - 1;

	for (i = 0; i < m; i++)
		buf[i] = k->p[i] >= 0x20 && k->p[i] < 0x7f ? k->p[i] : '?';
	buf[m] = 0;
}

static int str_eq(const struct gguf_str *s, const char *z)
{
	size_t n = strlen(z);

	return s->n == n && !memcmp(s->p, z, n);
}

static int cmp_name(const void *a, const void *b)
{
	const struct gguf_tensor *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int cmp_u64(const void *a, const void *b)
{
	const struct gguf_tensor *const *x = a, *const *y = b;

	if ((*x)->offset != (*y)->offset)
		return (*x)->offset < (*y)->offset ? -1 : 1;
	return 0;
}

/* Reads one value of @type at the cursor (arrays: one level, no nesting). */
static int parse_value(struct cursor *c, struct gguf_kv *kv, const char *name,
		       const char *key, char *err, size_t errlen)
{
	uint64_t n, i, bytes;
	struct gguf_str s;
	size_t start;

	if (kv->type >= GGUF_VT__COUNT) {
		seterr(err, errlen, name, "metadata '%s': unknown value type %u", key, kv->type);
		return -1;
	}
	if (kv->type == GGUF_VT_STRING) {
		start = c->off;
		if (rdstr(c, &s))
			goto eof;
		kv->val = c->p + start;
		kv->val_size = c->off - start;
		return 0;
	}
	if (kv->type != GGUF_VT_ARRAY) {
		kv->val = take(c, vtype_size[kv->type]);
		if (!kv->val)
			goto eof;
		kv->val_size = vtype_size[kv->type];
		if (kv->type == GGUF_VT_BOOL && *kv->val > 1) {
			seterr(err, errlen, name, "metadata '%s': bool value %u", key, *kv->val);
			return -1;
		}
		return 0;
	}
	kv->arr_type = rd32(c);
	n = rd64(c);
	if (c->fail)
		goto eof;
	if (kv->arr_type >= GGUF_VT__COUNT || kv->arr_type == GGUF_VT_ARRAY) {
		seterr(err, errlen, name, "metadata '%s': array of %s is not supported", key,
		       kv->arr_type == GGUF_VT_ARRAY ? "arrays" : "unknown type");
		return -1;
	}
	kv->arr_n = n;
	kv->val = c->p + c->off;
	if (kv->arr_type != GGUF_VT_STRING) {
		/* n * size <= bytes left, without overflow */
		if (n > left(c) / vtype_size[kv->arr_type]) {
			seterr(err, errlen, name, "metadata '%s': array of %llu %s runs past "
			       "the end of the file", key, (unsigned long long)n,
			       vtype_names[kv->arr_type]);
			return -1;
		}
		bytes = n * vtype_size[kv->arr_type];
		take(c, bytes);
		kv->val_size = bytes;
		if (kv->arr_type == GGUF_VT_BOOL)
			for (i = 0; i < n; i++)
				if (kv->val[i] > 1) {
					seterr(err, errlen, name, "metadata '%s': bool value %u",
					       key, kv->val[i]);
					return -1;
				}
		return 0;
	}
	/* every string takes at least its 8-byte length */
	if (n > left(c) / 8) {
		seterr(err, errlen, name, "metadata '%s': array of %llu strings runs past the "
		       "end of the file", key, (unsigned long long)n);
		return -1;
	}
	start = c->off;
	for (i = 0; i < n; i++)
		if (rdstr(c, &s)) {
			seterr(err, errlen, name, "metadata '%s': string %llu of the array runs "
			       "past the end of the file", key, (unsigned long long)i);
			return -1;
		}
	kv->val_size = c->off - start;
	return 0;
eof:
	seterr(err, errlen, name, "metadata '%s': value runs past the end of the file", key);
	return -1;
}

static int parse_kvs(struct gguf_file *f, struct cursor *c, char *err, size_t errlen)
{
	const char *name = f->path;
	char key[96];
	uint64_t i, j;

	/* a key/value takes at least 8 (key length) + 4 (type) + 1 bytes */
	if (f->n_kv > GGUF_MAX_KV) {
		seterr(err, errlen, name, "header claims %llu metadata entries (at most %u are "
		       "supported)", (unsigned long long)f->n_kv, GGUF_MAX_KV);
		return -1;
	}
	if (f->n_kv > left(c) / 13) {
		seterr(err, errlen, name, "header claims %llu metadata entries, more than the "
		       "file can hold", (unsigned long long)f->n_kv);
		return -1;
	}
	f->kv = calloc(f->n_kv ? f->n_kv : 1, sizeof(*f->kv));
	if (!f->kv) {
		seterr(err, errlen, name, "out of memory");
		return -1;
	}
	for (i = 0; i < f->n_kv; i++) {
		struct gguf_kv *kv = &f->kv[i];

		if (rdstr(c, &kv->key)) {
			seterr(err, errlen, name, "metadata entry %llu: key runs past the end "
			       "of the file", (unsigned long long)i);
			return -1;
		}
		keyname(key, sizeof(key), &kv->key);
		kv->type = rd32(c);
		if (c->fail) {
			seterr(err, errlen, name, "metadata '%s': runs past the end of the file",
			       key);
			return -1;
		}
		if (parse_value(c, kv, name, key, err, errlen))
			return -1;
	}
	/* duplicate keys would make look-ups ambiguous; n_kv <= GGUF_MAX_KV */
	for (i = 0; i < f->n_kv; i++)
		for (j = i + 1; j < f->n_kv; j++)
			if (f->kv[i].key.n == f->kv[j].key.n &&
			    !memcmp(f->kv[i].key.p, f->kv[j].key.p, f->kv[i].key.n)) {
				keyname(key, sizeof(key), &f->kv[i].key);
				seterr(err, errlen, name, "metadata key '%s' appears twice", key);
				return -1;
			}
	return 0;
}

static int parse_tensor_infos(struct gguf_file *f, struct cursor *c, char *err,
			      size_t errlen)
{
	const char *name = f->path;
	uint64_t i, k;

	/* a tensor info takes at least 8 + 4 + 8 + 4 + 8 bytes */
	if (f->n_tensors > GGUF_MAX_TENSORS) {
		seterr(err, errlen, name, "header claims %llu tensors (at most %u are supported)",
		       (unsigned long long)f->n_tensors, GGUF_MAX_TENSORS);
		return -1;
	}
	if (f->n_tensors > left(c) / 32) {
		seterr(err, errlen, name, "header claims %llu tensors, more than the file "
		       "can hold", (unsigned long long)f->n_tensors);
		return -1;
	}
	f->tensors = calloc(f->n_tensors ? f->n_tensors : 1, sizeof(*f->tensors));
	if (!f->tensors) {
		seterr(err, errlen, name, "out of memory");
		return -1;
	}
	for (i = 0; i < f->n_tensors; i++) {
		struct gguf_tensor *t = &f->tensors[i];
		struct gguf_str s;
		uint64_t nel = 1;

		if (rdstr(c, &s)) {
			seterr(err, errlen, name, "tensor %llu: name runs past the end of the file",
			       (unsigned long long)i);
			return -1;
		}
		if (!s.n || s.n > 255 || memchr(s.p, 0, s.n)) {
			seterr(err, errlen, name, "tensor %llu: bad name (length %llu)",
			       (unsigned long long)i, (unsigned long long)s.n);
			return -1;
		}
		t->name = strndup(s.p, s.n);
		if (!t->name) {
			seterr(err, errlen, name, "out of memory");
			return -1;
		}
		t->n_dims = rd32(c);
		if (c->fail)
			goto eof;
		if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS) {
			seterr(err, errlen, name, "tensor '%s': %u dimensions (1 to %d allowed)",
			       t->name, t->n_dims, GGUF_MAX_DIMS);
			return -1;
		}
		for (k = 0; k < GGUF_MAX_DIMS; k++)
			t->ne[k] = 1;
		for (k = 0; k < t->n_dims; k++) {
			t->ne[k] = rd64(c);
			if (c->fail)
				goto eof;
			if (!t->ne[k] || t->ne[k] > INT64_MAX ||
			    __builtin_mul_overflow(nel, t->ne[k], &nel) || nel > INT64_MAX) {
				seterr(err, errlen, name, "tensor '%s': bad shape (dimension %llu "
				       "is %llu)", t->name, (unsigned long long)k,
				       (unsigned long long)t->ne[k]);
				return -1;
			}
		}
		t->type = rd32(c);
		t->offset = rd64(c);
		if (c->fail)
			goto eof;
		if (t->type >= N_GGML_TYPES || !ggml_types[t->type].name) {
			seterr(err, errlen, name, "tensor '%s': unknown ggml type %u", t->name,
			       t->type);
			return -1;
		}
		if (ggml_types[t->type].size) {
			if (t->ne[0] % ggml_types[t->type].blck) {
				seterr(err, errlen, name, "tensor '%s': row of %llu elements is not "
				       "a whole number of %s blocks", t->name,
				       (unsigned long long)t->ne[0], gguf_type_name(t->type));
				return -1;
			}
			t->nbytes = gguf_type_bytes(t->type, nel);
			if (!t->nbytes) {
				seterr(err, errlen, name, "tensor '%s': size overflows", t->name);
				return -1;
			}
		}
	}
	return 0;
eof:
	seterr(err, errlen, name, "tensor '%s': info runs past the end of the file",
	       f->tensors[i].name);
	return -1;
}

/* Place the tensors: aligned offsets, inside the file, no overlaps. */
static int place_tensors(struct gguf_file *f, char *err, size_t errlen)
{
	const char *name = f->path;
	struct gguf_tensor **by_off;
	uint64_t i, j, room = f->size - f->data_offset, end;

	for (i = 0; i < f->n_tensors; i++) {
		struct gguf_tensor *t = &f->tensors[i];

		if (t->offset % f->alignment) {
			seterr(err, errlen, name, "tensor '%s': offset %llu is not a multiple of "
			       "the alignment %u", t->name, (unsigned long long)t->offset,
			       f->alignment);
			return -1;
		}
		if (t->offset > room || t->nbytes > room - t->offset) {
			seterr(err, errlen, name, "tensor '%s': data (offset %llu, %llu bytes) "
			       "lies outside the file (data section has %llu bytes)", t->name,
			       (unsigned long long)t->offset, (unsigned long long)t->nbytes,
			       (unsigned long long)room);
			return -1;
		}
		t->data = f->map + f->data_offset + t->offset;
	}
	by_off = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof(*by_off));
	if (!by_off) {
		seterr(err, errlen, name, "out of memory");
		return -1;
	}
	for (i = 0; i < f->n_tensors; i++)
		by_off[i] = &f->tensors[i];
	qsort(by_off, f->n_tensors, sizeof(*by_off), cmp_u64);
	for (i = 1; i < f->n_tensors; i++) {
		end = by_off[i - 1]->offset + by_off[i - 1]->nbytes;
		if (by_off[i]->offset < end && by_off[i - 1]->nbytes) {
			seterr(err, errlen, name, "tensors '%s' and '%s' overlap",
			       by_off[i - 1]->name, by_off[i]->name);
			free(by_off);
			return -1;
		}
	}
	free(by_off);
	/* a sorted index serves look-ups and finds duplicate names */
	f->by_name = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof(*f->by_name));
	if (!f->by_name) {
		seterr(err, errlen, name, "out of memory");
		return -1;
	}
	for (i = 0; i < f->n_tensors; i++)
		f->by_name[i] = &f->tensors[i];
	qsort(f->by_name, f->n_tensors, sizeof(*f->by_name), cmp_name);
	for (j = 1; j < f->n_tensors; j++)
		if (!strcmp(f->by_name[j - 1]->name, f->by_name[j]->name)) {
			seterr(err, errlen, name, "tensor '%s' appears twice", f->by_name[j]->name);
			return -1;
		}
	return 0;
}

struct gguf_file *gguf_parse(const char *name, const void *buf, size_t size, char *err,
			     size_t errlen)
{
	struct cursor c = { .p = buf, .size = size };
	struct gguf_file *f = calloc(1, sizeof(*f));
	const struct gguf_kv *al;
	uint64_t pad;

	if (f)
		f->path = strdup(name);
	if (!f || !f->path) {
		free(f);
		seterr(err, errlen, name, "out of memory");
		return NULL;
	}
	f->map = buf;
	f->size = size;
	if (size < 4 || memcmp(buf, GGUF_MAGIC, 4)) {
		seterr(err, errlen, name, "not a GGUF file (no \"GGUF\" magic)");
		goto fail;
	}
	take(&c, 4);
	f->version = rd32(&c);
	if (c.fail) {
		seterr(err, errlen, name, "file ends inside the GGUF header");
		goto fail;
	}
	if (f->version == 1) {
		seterr(err, errlen, name, "GGUF version 1 (32-bit counts) is not supported; "
		       "versions 2 and 3 are");
		goto fail;
	}
	if (f->version > 0xffff && !(f->version & 0xffff)) {
		seterr(err, errlen, name, "big-endian GGUF files are not supported");
		goto fail;
	}
	if (f->version != 2 && f->version != 3) {
		seterr(err, errlen, name, "GGUF version %u is not supported; versions 2 and 3 "
		       "are", f->version);
		goto fail;
	}
	f->n_tensors = rd64(&c);
	f->n_kv = rd64(&c);
	if (c.fail) {
		seterr(err, errlen, name, "file ends inside the GGUF header");
		goto fail;
	}
	if (parse_kvs(f, &c, err, errlen) || parse_tensor_infos(f, &c, err, errlen))
		goto fail;

	f->alignment = GGUF_DEFAULT_ALIGNMENT;
	al = gguf_find_kv(f, "general.alignment");
	if (al) {
		uint32_t a;

		if (al->type != GGUF_VT_U32) {
			seterr(err, errlen, name, "general.alignment has type %s, not u32",
			       gguf_vtype_name(al->type));
			goto fail;
		}
		memcpy(&a, al->val, 4);
		if (!a || (a & (a - 1))) {
			seterr(err, errlen, name, "general.alignment %u is not a power of two", a);
			goto fail;
		}
		f->alignment = a;
	}
	pad = (f->alignment - c.off % f->alignment) % f->alignment;
	if (pad > left(&c)) {
		if (f->n_tensors) {
			seterr(err, errlen, name, "file ends before the tensor data section");
			goto fail;
		}
		pad = left(&c);
	}
	f->data_offset = c.off + pad;
	if (place_tensors(f, err, errlen))
		goto fail;
	return f;
fail:
	gguf_close(f);
	return NULL;
}

struct gguf_file *gguf_open(const char *path, char *err, size_t errlen)
{
	struct gguf_file *f;
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		seterr(err, errlen, path, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		seterr(err, errlen, path, "not a regular file");
		close(fd);
		return NULL;
	}
	if (st.st_size < 24) {
		seterr(err, errlen, path, "file too small (%lld bytes) for a GGUF header",
		       (long long)st.st_size);
		close(fd);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		seterr(err, errlen, path, "mmap: %s", strerror(errno));
		return NULL;
	}
	f = gguf_parse(path, map, (size_t)st.st_size, err, errlen);
	if (!f) {
		munmap(map, (size_t)st.st_size);
		return NULL;
	}
	f->mapped = 1;
	return f;
}

int gguf_is_gguf(const char *path)
{
	char magic[4];
	struct stat st;
	int fd, r = 0;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, magic, 4) == 4 && !memcmp(magic, GGUF_MAGIC, 4))
		r = 1;
	close(fd);
	return r;
}

const struct gguf_kv *gguf_find_kv(const struct gguf_file *f, const char *key)
{
	uint64_t i;

	for (i = 0; i < f->n_kv; i++)
		if (str_eq(&f->kv[i].key, key))
			return &f->kv[i];
	return NULL;
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *f, const char *name)
{
	uint64_t lo = 0, hi = f->n_tensors;

	if (!f->by_name)
		return NULL;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, f->by_name[mid]->name);

		if (!r)
			return f->by_name[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Scalar at p of integer type t as int64 (-1 for u64 above INT64_MAX). */
static int scalar_int(uint32_t t, const uint8_t *p, int64_t *out)
{
	union {
		int8_t i8;
		uint16_t u16;
		int16_t i16;
		uint32_t u32;
		int32_t i32;
		uint64_t u64;
		int64_t i64;
	} v;

	switch (t) {
	case GGUF_VT_U8:
	case GGUF_VT_BOOL:
		*out = *p;
		return 0;
	case GGUF_VT_I8:
		*out = (int8_t)*p;
		return 0;
	case GGUF_VT_U16:
		memcpy(&v.u16, p, 2);
		*out = v.u16;
		return 0;
	case GGUF_VT_I16:
		memcpy(&v.i16, p, 2);
		*out = v.i16;
		return 0;
	case GGUF_VT_U32:
		memcpy(&v.u32, p, 4);
		*out = v.u32;
		return 0;
	case GGUF_VT_I32:
		memcpy(&v.i32, p, 4);
		*out = v.i32;
		return 0;
	case GGUF_VT_I64:
		memcpy(&v.i64, p, 8);
		*out = v.i64;
		return 0;
	case GGUF_VT_U64:
		memcpy(&v.u64, p, 8);
		if (v.u64 > INT64_MAX)
			return -1;
		*out = (int64_t)v.u64;
		return 0;
	default:
		return -1;
	}
}

int gguf_get_uint(const struct gguf_file *f, const char *key, uint64_t *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);
	int64_t v;

	if (!kv)
		return -1;
	if (kv->type == GGUF_VT_BOOL || kv->type == GGUF_VT_ARRAY ||
	    scalar_int(kv->type, kv->val, &v) || v < 0)
		return -2;
	*out = (uint64_t)v;
	return 0;
}

int gguf_get_f32(const struct gguf_file *f, const char *key, float *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv)
		return -1;
	if (kv->type == GGUF_VT_F32) {
		memcpy(out, kv->val, 4);
		return 0;
	}
	if (kv->type == GGUF_VT_F64) {
		double d;

		memcpy(&d, kv->val, 8);
		*out = (float)d;
		return 0;
	}
	return -2;
}

int gguf_get_bool(const struct gguf_file *f, const char *key, int *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);
	int64_t v;

	if (!kv)
		return -1;
	if (kv->type == GGUF_VT_ARRAY || scalar_int(kv->type, kv->val, &v) ||
	    (v != 0 && v != 1))
		return -2;
	*out = (int)v;
	return 0;
}

int gguf_get_str(const struct gguf_file *f, const char *key, struct gguf_str *out)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv)
		return -1;
	if (kv->type != GGUF_VT_STRING)
		return -2;
	/* validated by the parser: u64 length then the bytes */
	memcpy(&out->n, kv->val, 8);
	out->p = (const char *)kv->val + 8;
	return 0;
}

struct gguf_str *gguf_str_array(const struct gguf_kv *kv)
{
	struct gguf_str *a;
	const uint8_t *p;
	uint64_t i;

	if (!kv || kv->type != GGUF_VT_ARRAY || kv->arr_type != GGUF_VT_STRING)
		return NULL;
	a = malloc((kv->arr_n ? kv->arr_n : 1) * sizeof(*a));
	if (!a)
		return NULL;
	p = kv->val;
	for (i = 0; i < kv->arr_n; i++) {
		memcpy(&a[i].n, p, 8);
		a[i].p = (const char *)p + 8;
		p += 8 + a[i].n;	/* in bounds: checked by parse_value() */
	}
	return a;
}

int64_t gguf_arr_int(const struct gguf_kv *kv, uint64_t i)
{
	int64_t v = 0;

	if (kv->arr_type < GGUF_VT__COUNT && vtype_size[kv->arr_type] && i < kv->arr_n)
		scalar_int(kv->arr_type, kv->val + i * vtype_size[kv->arr_type], &v);
	return v;
}

double gguf_arr_num(const struct gguf_kv *kv, uint64_t i)
{
	const uint8_t *p;
	int64_t v = 0;

	if (kv->arr_type >= GGUF_VT__COUNT || !vtype_size[kv->arr_type] || i >= kv->arr_n)
		return 0;
	p = kv->val + i * vtype_size[kv->arr_type];
	if (kv->arr_type == GGUF_VT_F32) {
		float x;

		memcpy(&x, p, 4);
		return x;
	}
	if (kv->arr_type == GGUF_VT_F64) {
		double x;

		memcpy(&x, p, 8);
		return x;
	}
	scalar_int(kv->arr_type, p, &v);
	return (double)v;
}
