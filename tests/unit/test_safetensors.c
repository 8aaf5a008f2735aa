// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_safetensors.c - the safetensors reader accepts a valid file, finds
 * its tensors and converts them, and refuses (never crashes on, never hands
 * out out-of-file pointers for) damaged ones: truncations, bad header
 * lengths, offsets outside the data, shapes that disagree with the offsets,
 * and thousands of random byte mutations of the header.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/cb_ops.h"
#include "cb_test.h"
#include "import/safetensors.h"

static char path[] = "/tmp/colibri-test-st-XXXXXX";
static unsigned char good[4096];
static size_t good_len;

/* two tensors: a [2,3] F32 and a [4] BF16, then padding for alignment */
static void make_good(void)
{
	const char *hdr =
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
		"\"b\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]},"
		"\"__metadata__\":{\"format\":\"pt\"}}";
	uint64_t n = strlen(hdr), pad = (8 - n % 8) % 8, hl = n + pad;
	float a[6] = { 1, 2, 3, 4, 5, -6.5f };
	uint16_t b[4] = { 0x3f80, 0x4000, 0xc040, 0x0000 };	/* 1, 2, -3, 0 */

	memcpy(good, &hl, 8);
	memcpy(good + 8, hdr, n);
	memset(good + 8 + n, ' ', pad);
	memcpy(good + 8 + hl, a, 24);
	memcpy(good + 8 + hl + 24, b, 8);
	good_len = 8 + hl + 32;
}

static void write_file(const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	fwrite(p, 1, n, f);
	fclose(f);
}

/* Open; if accepted, every tensor must lie inside the mapping. */
static int open_check(int *inside)
{
	char err[256];
	struct st_file *f = st_open(path, err, sizeof(err));
	int i;

	*inside = 1;
	if (!f)
		return 0;
	for (i = 0; i < f->ntensors; i++) {
		const char *d = f->tensors[i].data, *m = f->map;

		if (d < m + 8 || d + f->tensors[i].nbytes > m + f->map_size)
			*inside = 0;
	}
	st_close(f);
	return 1;
}

static void test_valid_file_reads_back(void)
{
	char err[256];
	struct st_file *f;
	const struct st_tensor *t;
	float v[6];

	write_file(good, good_len);
	f = st_open(path, err, sizeof(err));
	CB_CHECK(f, "refused a valid file: %s", err);
	if (!f)
		return;
	t = st_find(f, "a");
	CB_CHECK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 &&
		 t->dtype == ST_F32, "tensor a wrong");
	if (t) {
		st_to_f32(v, t, 0, 6);
		CB_CHECK(v[0] == 1 && v[5] == -6.5f, "a data %g %g", v[0], v[5]);
	}
	t = st_find(f, "b");
	CB_CHECK(t && t->dtype == ST_BF16 && t->nelem == 4, "tensor b wrong");
	if (t) {
		st_to_f32(v, t, 0, 4);
		CB_CHECK(v[0] == 1 && v[1] == 2 && v[2] == -3 && v[3] == 0, "b data");
	}
	CB_CHECK(!st_find(f, "__metadata__") && !st_find(f, "c"), "phantom tensor");
	st_close(f);
}

static void test_truncations_refused(void)
{
	size_t n;
	int inside;

	for (n = 0; n < good_len; n++) {
		write_file(good, n);
		CB_CHECK(!open_check(&inside), "accepted a file truncated to %zu bytes", n);
	}
}

static void test_bad_header_fields_refused(void)
{
	static const char *const bad[] = {
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,28]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,4],\"data_offsets\":[0,24]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[8,0]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[-8,16]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0.5,24]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
		"\"data_offsets\":[0,0]}}",
		"{\"a\":{\"dtype\":\"Q9\",\"shape\":[2,3],\"data_offsets\":[0,24]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,6],\"data_offsets\":[0,24]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":\"6\",\"data_offsets\":[0,24]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3]}}",
		"[1,2,3]",
		"{\"a\":",
	};
	unsigned char buf[512];
	uint64_t big;
	size_t i;
	int inside;

	for (i = 0; i < CB_ARRAY_SIZE(bad); i++) {
		uint64_t n = strlen(bad[i]);

		memcpy(buf, &n, 8);
		memcpy(buf + 8, bad[i], n);
		memset(buf + 8 + n, 0, 32);
		write_file(buf, 8 + n + 32);
		CB_CHECK(!open_check(&inside), "accepted header %zu: %s", i, bad[i]);
	}
	/* header length larger than the file, and absurdly large */
	memcpy(buf, good, good_len);
	big = good_len;
	memcpy(buf, &big, 8);
	write_file(buf, good_len);
	CB_CHECK(!open_check(&inside), "accepted header length = file size");
	big = UINT64_MAX;
	memcpy(buf, &big, 8);
	write_file(buf, good_len);
	CB_CHECK(!open_check(&inside), "accepted header length 2^64-1");
}

static void test_random_mutations_stay_inside(void)
{
	unsigned char buf[sizeof(good)];
	unsigned long long s = 12345;
	int i, j, accepted = 0, inside;

	for (i = 0; i < 3000; i++) {
		memcpy(buf, good, good_len);
		for (j = 0; j < 1 + i % 4; j++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			buf[8 + (s >> 33) % (good_len - 8)] = (unsigned char)(s >> 20);
		}
		write_file(buf, good_len);
		accepted += open_check(&inside);
		CB_CHECK(inside, "mutation %d: a tensor points outside the file", i);
	}
	printf("# %d of 3000 mutated files were still accepted (data bytes mutated)\n",
	       accepted);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	make_good();
	CB_RUN(test_valid_file_reads_back);
	CB_RUN(test_truncations_refused);
	CB_RUN(test_bad_header_fields_refused);
	CB_RUN(test_random_mutations_stay_inside);
	unlink(path);
	return cb_test_done();
}
