// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cmd_bench_gemm.c - "colibri bench-gemm": how close each ISA variant's
 * gemm comes to the machine's memory read bandwidth.
 *
 * One run measures the read bandwidth (membw.c) and then streams a weight
 * matrix of the same size through every valid variant with the host
 * thread pool, chunked by rows as the forward pass does (microbench.c); it
 * reports the achieved weight bytes per second as a fraction of that
 * bandwidth (and the arithmetic rate), never a bare time.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cb_engine.h"
#include "quant/cb_quant.h"
#include "cli.h"
#include "cli_opts.h"
#include "colibri.h"
#include "bench/membw.h"
#include "bench/microbench.h"

static void bench_usage(FILE *f)
{
	int dt, col = 33;

	fprintf(f,
		"usage: colibri bench-gemm [--threads N] [--isa I] [-d DTYPE] [-m TOKENS] [-k K]\n"
		"         [-g GIB]\n"
		CLI_HELP_THREADS CLI_HELP_ISA
		"  -d, --dtype T    weight type:");
	/* every type of the engine's table, wrapped */
	for (dt = 0; dt < CB_DT__COUNT; dt++) {
		const char *n = cb_dtype_name((cb_u32)dt);

		if (col + 1 + (int)strlen(n) > 78) {
			fprintf(f, "\n%18s", "");
			col = 18;
		}
		col += fprintf(f, " %s", n);
	}
	fprintf(f,
		" (default q8_0)\n"
		"  -m, --tokens M   activation rows M (default 1: decode)\n"
		"  -k, --k K        row length (default 4096)\n"
		"  -g, --gib G      weight matrix size in GiB, well above the last-level\n"
		"                   cache (default: max(1 GiB, 4 x L3), at most half the\n"
		"                   memory available)\n"
		"Variants up to --isa (every one this CPU has by default) are timed.  Gop/s\n"
		"per CPU-second: the operations over the CPU time of all threads (the\n"
		"speed per core while the kernel ran; other tenants do not count).\n");
}

int cmd_bench_gemm(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_OPTION_THREADS, CLI_OPTION_ISA,
		{ "dtype", required_argument, NULL, 'd' },
		{ "tokens", required_argument, NULL, 'm' },
		{ "k", required_argument, NULL, 'k' },
		{ "gib", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *cmd = "bench-gemm";
	struct cli_common co;
	struct cb_gemm_bench *b;
	int dt = CB_DT_Q8_0, M = 1, k = 4096, opt, lvl, r = 0, top;
	double gib = 0, bw;	/* 0: cb_read_bw_default() */
	size_t total;

	cli_common_init(&co, COLIBRI_BACKEND_USER);
	while ((opt = getopt_long(argc, argv, "d:m:k:g:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			for (dt = 0; dt < CB_DT__COUNT; dt++)
				if (!strcasecmp(optarg, cb_dtype_name(dt)))
					break;
			if (dt == CB_DT__COUNT) {
				fprintf(stderr, "colibri bench-gemm: unknown dtype '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm': r = cli_int(cmd, "-m", optarg, 1, 4096, &M); break;
		case 'k': r = cli_int(cmd, "-k", optarg, 32, 1 << 20, &k); break;
		case 'g': r = cli_double(cmd, "-g", optarg, 0, 64, &gib); break;
		case 'h': bench_usage(stdout); return 0;
		default:
			r = cli_common_opt(cmd, opt, optarg, &co);
			if (!r) {
				bench_usage(stderr);
				return 2;
			}
			r = r < 0 ? -1 : 0;
		}
		if (r)
			return 2;
	}
	if (optind != argc) {
		bench_usage(stderr);
		return 2;
	}
	if (!cb_dtype_row_bytes(dt, k)) {
		fprintf(stderr, "colibri bench-gemm: rows of %d do not fit %s blocks\n", k,
			cb_dtype_name(dt));
		return 2;
	}
	total = gib > 0 ? (size_t)(gib * (1ull << 30)) : cb_read_bw_default();

	bw = cb_measure_read_bw(co.threads, total);
	if (bw <= 0) {
		fprintf(stderr, "colibri bench-gemm: cannot measure bandwidth over %zu bytes (give a smaller -g)\n",
			total);
		return 1;
	}
	r = cb_gemm_bench_new(&b, dt, M, k, total, co.threads);
	if (r) {
		fprintf(stderr, "colibri bench-gemm: out of memory for a %.2f GiB matrix\n",
			total / (double)(1ull << 30));
		return 1;
	}
	printf("read bandwidth: %.2f GB/s with %d threads over %.2f GiB\n", bw / 1e9,
	       cb_gemm_bench_threads(b), total / (double)(1ull << 30));
	printf("gemm %s, k=%d, M=%d, %d rows (%.2f GiB of weights):\n", cb_dtype_name(dt),
	       k, M, cb_gemm_bench_rows(b),
	       (double)cb_gemm_bench_rows(b) * cb_dtype_row_bytes(dt, k) / (1ull << 30));
	top = co.isa >= 0 ? co.isa : CB_ISA__COUNT - 1;	/* every level */
	for (lvl = COLIBRI_ISA_SCALAR; lvl <= top; lvl++) {
		struct cb_gemm_result res;

		if (cb_gemm_bench_run(b, lvl, &res))
			continue;	/* not on this CPU */
		printf("  %-11s %6.2f GB/s of weights = %5.1f%% of read bandwidth, %6.1f Gop/s,",
		       res.variant, res.weight_bytes / res.seconds / 1e9,
		       100.0 * res.weight_bytes / res.seconds / bw, res.ops / res.seconds / 1e9);
		printf(" %6.1f Gop/s per CPU-second\n", res.ops / res.cpu_seconds / 1e9);
	}
	cb_gemm_bench_free(b);
	return 0;
}
