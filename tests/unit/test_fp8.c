// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_fp8.c - FP8 safetensors weights with block scales (st_fp8.c): every
 * e4m3fn and e5m2 code decodes as an independent definition says (written
 * here with ldexp from sign, exponent and mantissa), weights are the code
 * times their block's factor for blocks that are not square and do not
 * divide the shape, over any range of elements, and damaged inputs are
 * refused naming the tensor: NaN and infinite codes, a missing, misshaped,
 * non-finite or overflowing scale, FP8 without a declared block size.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_test.h"
#include "import/safetensors.h"

static char path[] = "/tmp/colibri-test-fp8-XXXXXX";

/* The definition: (-1)^s * 2^(e - bias) * (1 + m / 2^mb), or subnormal. */
static double ref_decode(unsigned int b, int eb, int mb, int *nonfinite)
{
	int bias = (1 << (eb - 1)) - 1, s = b >> 7, e = (b >> mb) & ((1 << eb) - 1);
	int m = b & ((1 << mb) - 1);
	double v;

	*nonfinite = 0;
	if (eb == 4 && e == 15 && m == 7)
		*nonfinite = 1;			/* e4m3fn: only S.1111.111 is NaN */
	else if (eb == 5 && e == 31)
		*nonfinite = m ? 1 : 2;		/* e5m2: NaN, or infinity */
	if (*nonfinite)
		return 0;
	v = e ? ldexp(1.0 + m / (double)(1 << mb), e - bias) : ldexp(m / (double)(1 << mb),
								 1 - bias);
	return s ? -v : v;
}

static void test_every_code_decodes(void)
{
	unsigned int b;
	int nf, pass;

	for (pass = 0; pass < 2; pass++)
		for (b = 0; b < 256; b++) {
			float got = pass ? st_f8_e5m2_to_f32((uint8_t)b) :
				    st_f8_e4m3_to_f32((uint8_t)b);
			double want = ref_decode(b, pass ? 5 : 4, pass ? 2 : 3, &nf);

			if (nf == 1)
				CB_CHECK(isnan(got), "%s 0x%02x: %g, want NaN", pass ? "e5m2" : "e4m3",
					 b, got);
			else if (nf == 2)
				CB_CHECK(isinf(got) && (got < 0) == (b >> 7), "e5m2 0x%02x: %g", b,
					 got);
			else
				CB_CHECK((double)got == want && !signbit(got) == !signbit(want),
					 "%s 0x%02x: %.9g, want %.9g", pass ? "e5m2" : "e4m3", b,
					 got, want);
		}
	/* anchors of the definition itself */
	CB_CHECK(st_f8_e4m3_to_f32(0x7e) == 448.0f && st_f8_e4m3_to_f32(0x38) == 1.0f &&
		 st_f8_e4m3_to_f32(0x01) == 0x1p-9f && st_f8_e5m2_to_f32(0x7b) == 57344.0f &&
		 st_f8_e5m2_to_f32(0x01) == 0x1p-16f, "anchor values");
	CB_CHECK(signbit(st_f8_e4m3_to_f32(0x80)) && st_f8_e4m3_to_f32(0x80) == 0.0f,
		 "0x80 is -0");
}

/* A safetensors file of up to 4 tensors, 2-D or 1-D. */
struct tdesc {
	const char *name, *dtype;
	int ndim;
	uint64_t shape[2];
	const void *data;
	size_t bytes;
};

static struct st_file *write_open(const struct tdesc *t, int n, char *err, size_t errlen)
{
	char hdr[2048];
	unsigned char *buf;
	size_t off = 0, k = 0, hl, total = 0;
	FILE *f;
	int i;

	k += snprintf(hdr + k, sizeof(hdr) - k, "{");
	for (i = 0; i < n; i++) {
		k += snprintf(hdr + k, sizeof(hdr) - k, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%llu",
			      i ? "," : "", t[i].name, t[i].dtype, (unsigned long long)t[i].shape[0]);
		if (t[i].ndim == 2)
			k += snprintf(hdr + k, sizeof(hdr) - k, ",%llu",
				      (unsigned long long)t[i].shape[1]);
		k += snprintf(hdr + k, sizeof(hdr) - k, "],\"data_offsets\":[%zu,%zu]}", off,
			      off + t[i].bytes);
		off += t[i].bytes;
	}
	k += snprintf(hdr + k, sizeof(hdr) - k, "}");
	hl = k + 1;	/* one space: the data starts at an odd offset, unaligned */
	buf = malloc(8 + hl + off);
	memcpy(buf, &hl, 8);
	memcpy(buf + 8, hdr, k);
	buf[8 + k] = ' ';
	for (i = 0; i < n; i++) {
		memcpy(buf + 8 + hl + total, t[i].data, t[i].bytes);
		total += t[i].bytes;
	}
	f = fopen(path, "wb");
	fwrite(buf, 1, 8 + hl + off, f);
	fclose(f);
	free(buf);
	return st_open(path, err, errlen);
}

/* w [5, 7] in e4m3 with blocks of 2 x 3: scales [3, 3], edges in both */
static uint8_t w57[35];
static float s33[9] = { 0.5f, -2.0f, 0.1f, 3.0f, 1e-3f, 7.25f, 0.0f, 1.5f, -0.75f };

static int attach(struct st_file *f, uint32_t br, uint32_t bc, char *err, size_t errlen)
{
	struct st_set s = { .files = &f, .nfiles = 1 };

	return st_set_fp8_blocks(&s, br, bc, err, errlen);
}

static void test_block_scales_with_partial_edges(void)
{
	struct tdesc t[2] = {
		{ "m.w", "F8_E4M3", 2, { 5, 7 }, w57, 35 },
		{ "m.w_scale_inv", "F32", 2, { 3, 3 }, s33, 36 },
	};
	char err[512];
	struct st_file *f;
	const struct st_tensor *w;
	float got[35];
	int i, r, c, first;

	for (i = 0; i < 35; i++)
		w57[i] = (uint8_t)(i * 37 + 11) == 0x7f ? 0 : (uint8_t)(i * 37 + 11);
	for (i = 0; i < 35; i++)
		if ((w57[i] & 0x7f) == 0x7f)
			w57[i] = 0x3a;
	f = write_open(t, 2, err, sizeof(err));
	CB_CHECK(f, "open: %s", err);
	if (!f)
		return;
	CB_CHECK(!attach(f, 2, 3, err, sizeof(err)), "attach: %s", err);
	w = st_find(f, "m.w");
	CB_CHECK(w && w->dtype == ST_F8_E4M3 && w->scale, "no scale attached");
	CB_CHECK(!st_check_values(w, err, sizeof(err)), "finite codes refused: %s", err);
	/* whole, then every sub-range starting anywhere */
	for (first = 0; first < 35; first += 3) {
		st_to_f32(got, w, first, 35 - first);
		for (i = first; i < 35; i++) {
			float want;

			r = i / 7;
			c = i % 7;
			want = st_f8_e4m3_to_f32(w57[i]) * s33[(r / 2) * 3 + c / 3];
			CB_CHECK(memcmp(&got[i - first], &want, 4) == 0,
				 "from %d: [%d,%d] = %g, want %g", first, r, c, got[i - first],
				 want);
		}
	}
	st_close(f);

	/* a NaN code is refused with its position */
	w57[2 * 7 + 5] = 0xff;
	f = write_open(t, 2, err, sizeof(err));
	CB_CHECK(f && !attach(f, 2, 3, err, sizeof(err)), "attach: %s", err);
	if (f) {
		w = st_find(f, "m.w");
		CB_CHECK(st_check_values(w, err, sizeof(err)) && strstr(err, "'m.w'") &&
			 strstr(err, "[2, 5]") && strstr(err, "NaN"), "0xff: '%s'", err);
		st_close(f);
	}
	w57[2 * 7 + 5] = 0x7f;
	f = write_open(t, 2, err, sizeof(err));
	if (f) {
		CB_CHECK(st_check_values(st_find(f, "m.w"), err, sizeof(err)) &&
			 strstr(err, "0x7f"), "0x7f: '%s'", err);
		st_close(f);
	}
	w57[2 * 7 + 5] = 0;
}

static void expect_refused(const struct tdesc *t, int n, uint32_t br, uint32_t bc,
			   const char *want1, const char *want2)
{
	char err[512] = "";
	struct st_file *f = write_open(t, n, err, sizeof(err));

	CB_CHECK(f, "open: %s", err);
	if (!f)
		return;
	CB_CHECK(attach(f, br, bc, err, sizeof(err)) && strstr(err, want1) &&
		 (!want2 || strstr(err, want2)), "want '%s' / '%s', got '%s'", want1,
		 want2 ? want2 : "", err);
	st_close(f);
}

static void test_bad_scales_refused(void)
{
	float s32[6] = { 1, 1, 1, 1, 1, 1 }, bad[9];
	uint8_t e5[35] = { 0x7c };
	struct tdesc t[2] = {
		{ "m.w", "F8_E4M3", 2, { 5, 7 }, w57, 35 },
		{ "m.w_scale_inv", "F32", 2, { 3, 3 }, s33, 36 },
	};
	char err[256];
	struct st_file *f;

	expect_refused(t, 1, 2, 3, "'m.w'", "'m.w_scale_inv' is missing");
	expect_refused(t, 2, 0, 0, "'m.w' is F8_E4M3", "does not declare fp8 block scales");
	/* blocks of 3 x 2 want [2, 4] */
	expect_refused(t, 2, 3, 2, "block scale 'm.w_scale_inv' must be F32 [2, 4]", NULL);
	t[1].shape[0] = 2;
	t[1].shape[1] = 3;
	t[1].data = s32;
	t[1].bytes = 24;
	expect_refused(t, 2, 2, 3, "must be F32 [3, 3]", "not F32 [2, 3]");
	t[1] = (struct tdesc){ "m.w_scale_inv", "F32", 1, { 9 }, s33, 36 };
	expect_refused(t, 2, 2, 3, "must be F32 [3, 3]", "not F32 [9]");
	t[1] = (struct tdesc){ "m.w_scale_inv", "BF16", 2, { 3, 3 }, s33, 18 };
	expect_refused(t, 2, 2, 3, "not BF16 [3, 3]", NULL);
	memcpy(bad, s33, sizeof(bad));
	t[1] = (struct tdesc){ "m.w_scale_inv", "F32", 2, { 3, 3 }, bad, 36 };
	bad[4] = INFINITY;
	expect_refused(t, 2, 2, 3, "'m.w_scale_inv' [1, 1] is inf: not finite", "'m.w'");
	bad[4] = NAN;
	expect_refused(t, 2, 2, 3, "[1, 1] is nan: not finite", NULL);
	bad[4] = 1e37f;	/* finite, but 448 times it is not */
	expect_refused(t, 2, 2, 3, "[1, 1]", "would overflow f32");
	/* 3-D FP8 weights have no block scales here */
	t[0] = (struct tdesc){ "m.w", "F8_E4M3", 1, { 35 }, w57, 35 };
	expect_refused(t, 1, 2, 3, "1 dimensions", "2-D weights only");
	/* e5m2: infinity is refused as such, NaN as NaN */
	t[0] = (struct tdesc){ "m.e", "F8_E5M2", 2, { 5, 7 }, e5, 35 };
	f = write_open(t, 1, err, sizeof(err));
	if (f) {
		CB_CHECK(st_check_values(st_find(f, "m.e"), err, sizeof(err)) &&
			 strstr(err, "[0, 0]") && strstr(err, "infinite"), "e5m2 inf: '%s'", err);
		st_close(f);
	}
	e5[0] = 0;
	e5[34] = 0xfe;
	f = write_open(t, 1, err, sizeof(err));
	if (f) {
		CB_CHECK(st_check_values(st_find(f, "m.e"), err, sizeof(err)) &&
			 strstr(err, "[4, 6]") && strstr(err, "NaN"), "e5m2 NaN: '%s'", err);
		st_close(f);
	}
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	CB_RUN(test_every_code_decodes);
	CB_RUN(test_block_scales_with_partial_edges);
	CB_RUN(test_bad_scales_refused);
	unlink(path);
	return cb_test_done();
}
