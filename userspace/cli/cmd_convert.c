// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri convert - a Hugging Face directory or a GGUF file -> .colibri.
 *
 *   colibri convert SRC -o OUT.colibri [--quant T] [--threads N]
 *                   [--name NAME] [--no-tokenizer]
 *
 * The options, a progress bar, and the removal of OUT.tmp.PID on SIGINT and
 * SIGTERM; the conversions are libcolibri's (hf_convert.c, gguf_convert.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_tmp.h"
#include "import/gguf.h"
#include "convert/hf_convert.h"
#include "quant/quant_preset.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: colibri convert HF_DIR -o OUT.colibri "
		"[--quant T] [--threads N] [--name NAME] [--no-tokenizer]\n"
		"       colibri convert FILE.gguf -o OUT.colibri [--name NAME] [--no-tokenizer]\n");
}

/* ---- progress ---------------------------------------------------------- */

/* A bar on a terminal's stderr, redrawn at each whole percent. */
static void progress(void *arg, uint64_t done, uint64_t total)
{
	int *last = arg, pct, i;

	if (!total)
		return;
	pct = (int)(done * 100 / total);
	if (pct == *last)
		return;
	*last = pct;
	fputs("\r[", stderr);
	for (i = 0; i < 40; i++)
		fputc(i < pct * 40 / 100 ? '#' : ' ', stderr);
	fprintf(stderr, "] %3d%% %.1f/%.1f MiB", pct, done / 1048576.0, total / 1048576.0);
	if (done >= total)
		fputc('\n', stderr);
}

static int is_dir(const char *p)
{
	struct stat sb;

	return !stat(p, &sb) && S_ISDIR(sb.st_mode);
}

int cmd_convert(int argc, char **argv)
{
	struct hf_convert_opts o = { .quant = { CB_PRESET_NONE, CB_QUANT_KEEP } };
	const char *src = NULL, *out = NULL, *tmp;
	char err[2 * PATH_MAX], tmp_path[PATH_MAX + 32];
	int i, rc, last = -1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--no-tokenizer")) {
			o.no_tokenizer = 1;
		} else if (a[0] == '-' && i + 1 >= argc) {
			usage(stderr);
			return 2;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			out = argv[++i];
		} else if (!strcmp(a, "--name")) {
			o.name = argv[++i];
		} else if (!strcmp(a, "--quant")) {
			if (cb_quant_parse(argv[++i], &o.quant)) {
				fprintf(stderr, "colibri convert: unknown --quant '%s' (%s)\n",
					argv[i], cb_quant_names());
				return 2;
			}
		} else if (!strcmp(a, "--threads")) {
			o.threads = atoi(argv[++i]);
		} else if (a[0] != '-' && !src) {
			src = a;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!src || !out) {
		usage(stderr);
		return 2;
	}
	if (gguf_is_gguf(src)) {
		/* GGUF input: tensors kept as stored */
		if (o.quant.preset || o.quant.dtype != CB_QUANT_KEEP) {
			fprintf(stderr, "colibri convert: %s: --quant is not supported for GGUF "
				"input (tensors are kept as stored)\n", src);
			return 2;
		}
	} else if (!is_dir(src)) {
		if (access(src, F_OK))
			fprintf(stderr, "colibri convert: %s: %s\n", src, strerror(errno));
		else
			fprintf(stderr, "colibri convert: %s: neither a Hugging Face model "
				"directory nor a GGUF file\n", src);
		return 1;
	}
	/* the writer inside names its temporary file this way */
	snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.%ld", out, (long)getpid());
	tmp = tmp_path;
	cli_tmp_guard(&tmp, 1);
	if (gguf_is_gguf(src)) {
		rc = gguf_convert(src, out, o.name, o.no_tokenizer, err, sizeof(err));
	} else {
		if (isatty(2)) {
			o.progress = progress;
			o.progress_arg = &last;
		}
		rc = hf_convert(src, out, &o, err, sizeof(err));
	}
	cli_tmp_guard(NULL, 0);
	if (rc) {
		fprintf(stderr, "colibri convert: %s\n", err);
		return 1;
	}
	return 0;
}
