// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * replay.c - run the fuzz harness (fuzz_format.c) over files, without
 * libFuzzer: the regression test for the stored corpus and crash inputs.
 * Prints TAP, one test per file; a crash or abort ends the run (and the
 * test driver reports it).
 *
 * usage: replay FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i, fails = 0;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		long n = -1;

		if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
			buf = malloc(n ? (size_t)n : 1);
			if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
				n = -1;
		}
		if (f)
			fclose(f);
		if (!buf || n < 0) {
			printf("not ok %d - replay %s (cannot read)\n", i, argv[i]);
			fails++;
		} else {
			LLVMFuzzerTestOneInput(buf, (size_t)n);
			printf("ok %d - replay %s\n", i, argv[i]);
		}
		free(buf);
		fflush(stdout);
	}
	printf("1..%d\n", argc - 1);
	return fails ? 1 : 0;
}
