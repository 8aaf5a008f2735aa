// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cli_opts.c - the colibri commands' shared options and number parsing
 * (cli_opts.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_opts.h"
#include "colibri.h"
#include "core/cb_engine.h"

void cli_common_init(struct cli_common *co, enum colibri_backend backend)
{
	memset(co, 0, sizeof(*co));
	co->isa = -1;
	co->backend = backend;
	co->io = COLIBRI_IO_IOCTL;
}

/* @s is one of @names ([n]): its index, or -1. */
static int pick(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int cli_common_opt(const char *cmd, int c, const char *arg, struct cli_common *co)
{
	static const char *const backends[] = {
		[COLIBRI_BACKEND_AUTO] = "auto",
		[COLIBRI_BACKEND_KERNEL] = "kernel",
		[COLIBRI_BACKEND_USER] = "user",
	};
	static const char *const ios[] = {
		[COLIBRI_IO_IOCTL] = "ioctl",
		[COLIBRI_IO_URING] = "uring",
	};
	int v;

	switch (c) {
	case CLI_OPT_MODEL:
		co->model = arg;
		co->given |= CLI_O_MODEL;
		return 1;
	case CLI_OPT_THREADS:
		if (cli_int(cmd, "--threads", arg, 1, 1024, &co->threads))
			return -1;
		co->given |= CLI_O_THREADS;
		return 1;
	case CLI_OPT_ISA:
		v = cb_isa_level_of(arg);
		if (v < 0) {
			char list[128];

			fprintf(stderr, "colibri %s: --isa is %s, not '%s'\n", cmd,
				cb_isa_name_list(list, sizeof(list)), arg);
			return -1;
		}
		co->isa = v;
		co->given |= CLI_O_ISA;
		return 1;
	case CLI_OPT_BACKEND:
		v = pick(arg, backends, 3);
		if (v < 0) {
			fprintf(stderr, "colibri %s: --backend is auto, kernel or user, not '%s'\n",
				cmd, arg);
			return -1;
		}
		co->backend = (enum colibri_backend)v;
		co->given |= CLI_O_BACKEND;
		return 1;
	case CLI_OPT_IO:
		v = pick(arg, ios, 2);
		if (v < 0) {
			fprintf(stderr, "colibri %s: --io is ioctl or uring, not '%s'\n", cmd, arg);
			return -1;
		}
		co->io = (enum colibri_io)v;
		co->given |= CLI_O_IO;
		return 1;
	}
	return 0;
}

int cli_sampling_opt(const char *cmd, int c, const char *arg, struct colibri_sampling *sp)
{
	double t;

	switch (c) {
	case CLI_OPT_TEMPERATURE:
		if (cli_double(cmd, "--temperature", arg, 0, 100, &t))
			return -1;
		sp->temperature_milli = (uint32_t)(t * 1000 + 0.5);
		return 1;
	case CLI_OPT_TOP_P:
		if (cli_double(cmd, "--top-p", arg, 0, 1, &t))
			return -1;
		sp->top_p_ppm = (uint32_t)(t * 1e6 + 0.5);
		return 1;
	case CLI_OPT_TOP_K:
		return cli_u32(cmd, "--top-k", arg, 0, UINT32_MAX, &sp->top_k) ? -1 : 1;
	case CLI_OPT_SEED:
		return cli_u64(cmd, "--seed", arg, &sp->seed) ? -1 : 1;
	}
	return 0;
}

int cli_common_check(const char *cmd, const struct cli_common *co)
{
	if (co->backend == COLIBRI_BACKEND_KERNEL && co->given & (CLI_O_THREADS | CLI_O_ISA)) {
		fprintf(stderr, "colibri %s: --%s sets the in-process engine; the kernel runs its own "
			"(the module's worker threads and its max_isa parameter)\n", cmd,
			co->given & CLI_O_THREADS ? "threads" : "isa");
		return -1;
	}
	if (co->backend == COLIBRI_BACKEND_USER && co->given & CLI_O_IO) {
		fprintf(stderr, "colibri %s: --io is for --backend kernel\n", cmd);
		return -1;
	}
	return 0;
}

void cli_model_opts(const struct cli_common *co, struct colibri_model_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = co->backend;
	o->io = co->io;
	o->threads = co->threads;
	o->isa = co->isa;
	o->dtype = -1;
}

/* Decimal, or hexadecimal after 0x (never octal: 010 is ten). */
static int base_of(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

/* Parses all of @s as an unsigned integer; 0 or -1. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, base_of(s));
	return errno || *end ? -1 : 0;
}

int cli_u32(const char *cmd, const char *opt, const char *s, uint32_t min, uint32_t max,
	    uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v < min || v > max) {
		fprintf(stderr, "colibri %s: %s wants an integer from %u to %u, not '%s'\n",
			cmd, opt, min, max, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	if (parse_u64(s, out)) {
		fprintf(stderr, "colibri %s: %s wants a non-negative integer below 2^64, not '%s'\n",
			cmd, opt, s);
		return -1;
	}
	return 0;
}

int cli_int(const char *cmd, const char *opt, const char *s, int min, int max, int *out)
{
	long long v;
	char *end;

	errno = 0;
	v = *s && *s != ' ' ? strtoll(s, &end, base_of(s)) : 0;
	if (!*s || *s == ' ' || errno || *end || v < min || v > max) {
		fprintf(stderr, "colibri %s: %s wants an integer from %d to %d, not '%s'\n",
			cmd, opt, min, max, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int cli_double(const char *cmd, const char *opt, const char *s, double min, double max,
	       double *out)
{
	char *end;
	double v;

	errno = 0;
	v = *s && *s != ' ' ? strtod(s, &end) : NAN;
	if (!*s || *s == ' ' || errno || *end || !(v >= min && v <= max)) {
		fprintf(stderr, "colibri %s: %s wants a number from %g to %g, not '%s'\n", cmd, opt,
			min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
