/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * cli_opts.h - the options the colibri commands share, parsed in one place
 * and spelled one way everywhere, and strict number parsing.
 *
 * A command lists the shared options it takes in its getopt_long table
 * (CLI_OPTION_MODEL, ...) next to its own, and hands every option it does
 * not know to cli_common_opt():
 *
 *	static const struct option opts[] = {
 *		CLI_OPTION_MODEL, CLI_OPTION_THREADS, { "prompt", ... }, { 0 }
 *	};
 *	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
 *		switch (c) {
 *		case 'n': if (cli_u32("generate", "--max-new-tokens", optarg, ...)) return 2; break;
 *		default:
 *			r = cli_common_opt("generate", c, optarg, &co);
 *			if (r <= 0) return 2;		// 0: not one of ours: usage
 *		}
 *	}
 *
 * Every parser prints one line naming the command, the option and the
 * value it refused ("colibri generate: --max-new-tokens wants an integer
 * from 0 to 1000000, not '12x'") and returns -1.
 */
#ifndef COLIBRI_CLI_OPTS_H
#define COLIBRI_CLI_OPTS_H

#include <getopt.h>
#include <stdint.h>

#include "colibri_session.h"

/* getopt_long values of the shared options, above any short option. */
enum {
	CLI_OPT_MODEL = 0x1000,
	CLI_OPT_THREADS,
	CLI_OPT_ISA,
	CLI_OPT_BACKEND,
	CLI_OPT_IO,
	CLI_OPT_TEMPERATURE,
	CLI_OPT_TOP_P,
	CLI_OPT_TOP_K,
	CLI_OPT_SEED,
};

#define CLI_OPTION_MODEL	{ "model", required_argument, NULL, CLI_OPT_MODEL }
#define CLI_OPTION_THREADS	{ "threads", required_argument, NULL, CLI_OPT_THREADS }
#define CLI_OPTION_ISA		{ "isa", required_argument, NULL, CLI_OPT_ISA }
#define CLI_OPTION_BACKEND	{ "backend", required_argument, NULL, CLI_OPT_BACKEND }
#define CLI_OPTION_IO		{ "io", required_argument, NULL, CLI_OPT_IO }
/* The sampling options, for cli_sampling_opt(). */
#define CLI_OPTION_SAMPLING \
	{ "temperature", required_argument, NULL, CLI_OPT_TEMPERATURE }, \
	{ "top-p", required_argument, NULL, CLI_OPT_TOP_P }, \
	{ "top-k", required_argument, NULL, CLI_OPT_TOP_K }, \
	{ "seed", required_argument, NULL, CLI_OPT_SEED }

/* The usage text of each, for the commands' help. */
#define CLI_HELP_THREADS \
	"  --threads N        threads of the in-process engine, the caller's included\n" \
	"                     (default: one per online CPU)\n"
#define CLI_HELP_ISA \
	"  --isa I            highest ISA level of the in-process engine: scalar, avx2,\n" \
	"                     avx512 or avx512_vnni (default: the best this CPU has;\n" \
	"                     COLIBRI_ISA caps it too)\n"
#define CLI_HELP_BACKEND \
	"  --backend B        auto (the kernel if /dev/colibri can run the model, else\n" \
	"                     in-process), kernel or user (in-process)\n"
#define CLI_HELP_IO \
	"  --io ioctl|uring   how kernel steps are submitted (default ioctl)\n"

/* CLI_O_*: which of struct cli_common were given. */
#define CLI_O_MODEL	(1u << 0)
#define CLI_O_THREADS	(1u << 1)
#define CLI_O_ISA	(1u << 2)
#define CLI_O_BACKEND	(1u << 3)
#define CLI_O_IO	(1u << 4)

/**
 * struct cli_common - the shared options, with their defaults.
 * @model: --model M.
 * @threads: --threads N, 1..1024; 0 (the default): one per online CPU.
 * @isa: --isa, a COLIBRI_ISA_* level; -1 (the default): the best.
 * @backend: --backend auto|kernel|user; the command sets the default.
 * @io: --io ioctl|uring (default ioctl).
 * @given: CLI_O_* of the options seen.
 */
struct cli_common {
	const char *model;
	int threads;
	int isa;
	enum colibri_backend backend;
	enum colibri_io io;
	unsigned int given;
};

/* The defaults, with @backend the command's. */
void cli_common_init(struct cli_common *co, enum colibri_backend backend);

/*
 * cli_common_opt() - getopt_long's @c (with @arg) if it is a shared
 * option: 1 taken, -1 a bad value (said on stderr), 0 not a shared option.
 */
int cli_common_opt(const char *cmd, int c, const char *arg, struct cli_common *co);

/*
 * cli_sampling_opt() - getopt_long's @c (with @arg) if it is one of
 * CLI_OPTION_SAMPLING: --temperature T (0..100), --top-p P (0..1),
 * --top-k K, --seed S into @sp.  1 taken, -1 a bad value (said on
 * stderr), 0 not a sampling option.
 */
int cli_sampling_opt(const char *cmd, int c, const char *arg, struct colibri_sampling *sp);

/*
 * cli_common_check() - what the options say together: --threads and
 * --isa set the in-process engine, and the kernel runs its own (the
 * module's worker threads and max_isa parameter).  0, or -1 (said).
 */
int cli_common_check(const char *cmd, const struct cli_common *co);

/* @co as colibri_model_opts (the other fields zero, dtype -1). */
void cli_model_opts(const struct cli_common *co, struct colibri_model_opts *o);

/*
 * Strict numbers: all of @s, decimal (or 0x hex for the integers), within
 * [min, max]; no sign on the unsigned ones.  0, or -1 with a message.
 */
int cli_u32(const char *cmd, const char *opt, const char *s, uint32_t min, uint32_t max,
	    uint32_t *out);
int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t *out);
int cli_int(const char *cmd, const char *opt, const char *s, int min, int max, int *out);
int cli_double(const char *cmd, const char *opt, const char *s, double min, double max,
	       double *out);

/* Monotonic seconds, for the timing lines. */
double now_s(void);

#endif /* COLIBRI_CLI_OPTS_H */
