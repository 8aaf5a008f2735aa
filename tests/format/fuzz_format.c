// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * fuzz_format.c - libFuzzer harness for the .colibri validator.
 *
 * The input is a whole file.  The harness runs exactly what the kernel will
 * run: cb_format_check_header(), cb_format_check_directory(), and on
 * success cb_format_bind() plus a read of the first and last byte of every
 * bound tensor and its CRC.  Invariants (abort on violation):
 *   - the reason string is NUL-terminated and non-empty on every failure;
 *   - whatever the validator accepts, bind accepts and the engine's own
 *     cb_engine_check_model() accepts;
 *   - every bound tensor lies inside the input (ASan checks the reads).
 *
 * The header checksum would stop the fuzzer at the first mutation, so for
 * most inputs the harness writes the correct CRC into its copy before
 * validating (inputs whose size is a multiple of 7 keep theirs, so the
 * mismatch path stays covered).  tests/format/replay.c calls this entry
 * point on the stored corpus, with gcc, as a regression test.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/cb_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reseal(uint8_t *b, size_t size)
{
	uint32_t n, crc;
	uint64_t end;

	if (size < COLIBRI_FILE_HEADER_SIZE)
		return;
	memcpy(&n, b + 40, 4);		/* n_tensors */
	end = COLIBRI_FILE_HEADER_SIZE + (uint64_t)n * COLIBRI_FILE_TENSOR_SIZE;
	if (end > size)
		return;
	crc = cb_crc32c(0, b, COLIBRI_FILE_HEADER_CRC_OFFSET);
	crc = cb_crc32c(crc, "\0\0\0\0", 4);
	crc = cb_crc32c(crc, b + COLIBRI_FILE_HEADER_CRC_OFFSET + 4,
			end - COLIBRI_FILE_HEADER_CRC_OFFSET - 4);
	memcpy(b + COLIBRI_FILE_HEADER_CRC_OFFSET, &crc, 4);
}

static void check_why(int r, const char *why)
{
	if (r && (!why[0] || strlen(why) >= CB_FORMAT_WHY_LEN))
		abort();
}

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[CB_FORMAT_WHY_LEN];
	struct cb_format_info info;
	struct cb_model_config cfg;
	struct cb_model_weights w;
	uint8_t *b = NULL;
	void *mem = NULL;
	uint64_t msz;
	uint32_t i;
	int r;

	/* page-aligned exact-size copy: the data region is 64-byte aligned as
	 * in a real mapping, and ASan sees any read past the end */
	if (posix_memalign((void **)&b, 4096, size ? size : 1))
		return 0;
	memcpy(b, data, size);
	if (size % 7)
		reseal(b, size);

	why[0] = 0;
	r = cb_format_check_header(b, size, size, &info, why, sizeof(why));
	check_why(r, why);
	why[0] = 0;
	r = cb_format_check_directory(b, size, size, &info, why, sizeof(why));
	check_why(r, why);
	if (r)
		goto out;

	msz = cb_format_bind_size(&info);
	if (!msz || msz > (64u << 20) || posix_memalign(&mem, 64, msz))
		abort();
	r = cb_format_bind(&info, b, b + info.data_offset, info.data_size, mem, msz, &cfg, &w,
			   why, sizeof(why));
	if (r || cb_engine_check_model(&cfg, &w))
		abort();	/* validated but not bindable: a validator hole */
	for (i = 0; i < info.n_tensors; i++) {
		const struct colibri_file_tensor *t =
			(const void *)(b + info.dir_offset + (uint64_t)i * COLIBRI_FILE_TENSOR_SIZE);
		const uint8_t *p = b + info.data_offset + t->offset;

		sink ^= p[0] ^ p[t->size - 1];
		sink ^= (uint8_t)cb_format_tensor_crc_ok(b, &info, i, b + info.data_offset);
	}
	sink ^= ((const uint8_t *)w.embed.data)[0];
out:
	free(mem);
	free(b);
	return 0;
}
