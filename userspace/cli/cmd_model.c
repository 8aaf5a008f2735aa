// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri load | unload | ls - manage the models pinned in the kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_tmp.h"
#include "import/gguf.h"
#include "libcolibri.h"

static int open_device(const char *cmd)
{
	int fd = colibri_dev_open();

	if (fd < 0)
		fprintf(stderr, "colibri %s: cannot open %s: %s%s\n", cmd, COLIBRI_DEVICE_PATH,
			strerror(-fd), fd == -ENOENT ? " (is the colibri module loaded?)" : "");
	return fd;
}

/*
 * LOAD of a GGUF file.  The kernel reads .colibri files only (one format to
 * validate there), so the file is first converted as `colibri convert` does
 * (tensors kept byte for byte) into a private directory under $TMPDIR (else
 * /var/tmp), loaded, and removed: LOAD copies the weights into pinned memory,
 * nothing in the kernel refers to the file afterwards.  That needs free space
 * the size of the model there for the time of the call; the line on stderr
 * says where.  Returns 0, a negative errno from LOAD, or 1 (said on stderr).
 */
static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/*
 * The name a GGUF file is pinned under without --name: its general.name
 * when that is a name the tools can pass around ([A-Za-z0-9._-], not
 * starting with '.', at most COLIBRI_NAME_LEN - 1 bytes: "Mixtral 8x7B
 * Instruct v0.1" is not), else the file's name without ".gguf", every
 * other byte made '_', cut to fit.
 */
static void gguf_pin_name(const char *src, char out[COLIBRI_NAME_LEN])
{
	const char *base = strrchr(src, '/');
	struct gguf_file *gf;
	struct gguf_str gs;
	char err[256];
	size_t n, i;

	gf = gguf_open(src, err, sizeof(err));
	if (gf && !gguf_get_str(gf, "general.name", &gs) && gs.n && gs.n < COLIBRI_NAME_LEN &&
	    gs.p[0] != '.') {
		for (i = 0; i < gs.n && name_char(gs.p[i]); i++)
			;
		if (i == gs.n) {
			memcpy(out, gs.p, gs.n);
			out[gs.n] = 0;
			gguf_close(gf);
			return;
		}
	}
	if (gf)
		gguf_close(gf);
	base = base ? base + 1 : src;
	n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".gguf"))
		n -= 5;
	if (n > COLIBRI_NAME_LEN - 1)
		n = COLIBRI_NAME_LEN - 1;
	for (i = 0; i < n; i++)
		out[i] = name_char(base[i]) && (i || base[i] != '.') ? base[i] : '_';
	out[n] = 0;
}

static int load_gguf(int fd, const char *src, const char *name, unsigned int flags,
		     char *name_out, unsigned long long *bytes)
{
	char pin[COLIBRI_NAME_LEN];
	double mib;

	const char *td = getenv("TMPDIR"), *paths[3];
	char dir[PATH_MAX], out[PATH_MAX], tmp[PATH_MAX + 32], err[PATH_MAX + 256];
	struct stat st;
	int ret;

	if (snprintf(dir, sizeof(dir), "%s/colibri-load.XXXXXX", td && *td ? td : "/var/tmp") >=
	    (int)sizeof(dir) || !mkdtemp(dir)) {
		fprintf(stderr, "colibri load: a temporary directory in %s: %s\n",
			td && *td ? td : "/var/tmp", strerror(errno));
		return 1;
	}
	snprintf(out, sizeof(out), "%.*s/model.colibri", PATH_MAX - 16, dir);
	/* gguf_convert() writes OUT.tmp.PID and renames it to OUT */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid());
	paths[0] = tmp;
	paths[1] = out;
	paths[2] = dir;
	cli_tmp_guard(paths, 3);
	if (!*name) {
		gguf_pin_name(src, pin);
		name = pin;
	}
	mib = stat(src, &st) ? 0.0 : st.st_size / 1048576.0;
	fprintf(stderr, "colibri load: %s: GGUF, converting to a temporary .colibri in %s",
		src, dir);
	fprintf(stderr, " (%.1f MiB) to pin as %s\n", mib, name);
	ret = gguf_convert(src, out, NULL, 0, err, sizeof(err));
	if (ret)
		fprintf(stderr, "colibri load: %s\n", err);
	else
		ret = colibri_dev_load_flags(fd, out, name, flags, name_out, bytes);
	unlink(tmp);
	unlink(out);
	rmdir(dir);
	cli_tmp_guard(NULL, 0);
	return ret ? (ret < 0 ? ret : 1) : 0;
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "numa", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char usage[] =
		"usage: colibri load MODEL.colibri|MODEL.gguf [--name NAME]\n"
		"           [--numa local|interleave|replicate]\n";
	char name_out[COLIBRI_NAME_LEN];
	const char *name = "", *numa = "local";
	unsigned long long bytes;
	int c, fd, ret, flags;

	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			name = optarg;
			break;
		case 'N':
			numa = optarg;
			break;
		default:
			fprintf(stderr, "%s%s", usage, c != 'h' ? "" :
				"Pins the model in the kernel (needs CAP_SYS_ADMIN).  A GGUF file\n"
				"is converted first, into a temporary .colibri under $TMPDIR (else\n"
				"/var/tmp) that is removed once the kernel has the weights; without\n"
				"--name it is pinned under its general.name if that is a plain name\n"
				"([A-Za-z0-9._-]), else under its file name made one.\n"
				"--numa: where its weights go on a NUMA machine: the loading task's\n"
				"node (local, the default), spread over every node (interleave), or\n"
				"a copy on every node, each read by that node's CPUs (replicate).\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	flags = colibri_numa_flags(numa);
	if (flags < 0) {
		fprintf(stderr, "colibri load: --numa %s: not local, interleave or replicate\n",
			numa);
		return 2;
	}
	fd = open_device("load");
	if (fd < 0)
		return 1;
	if (gguf_is_gguf(argv[optind]) == 1)
		ret = load_gguf(fd, argv[optind], name, (unsigned int)flags, name_out, &bytes);
	else
		ret = colibri_dev_load_flags(fd, argv[optind], name, (unsigned int)flags,
					     name_out, &bytes);
	close(fd);
	if (ret == 1)
		return 1;
	if (ret) {
		fprintf(stderr, "colibri load: %s: %s%s\n", argv[optind], strerror(-ret),
			ret == -EINVAL ? " (the kernel log says why)" :
			ret == -EPERM ? " (loading needs CAP_SYS_ADMIN)" : "");
		return 1;
	}
	printf("loaded %s: %llu bytes pinned (numa %s)\n", name_out, bytes, numa);
	return 0;
}

int cmd_unload(int argc, char **argv)
{
	int wait = 0, fd, ret, i;
	const char *name = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else if (argv[i][0] == '-' || name) {
			fprintf(stderr, "usage: colibri unload NAME [--wait]\n");
			return 2;
		} else {
			name = argv[i];
		}
	}
	if (!name) {
		fprintf(stderr, "usage: colibri unload NAME [--wait]\n");
		return 2;
	}
	fd = open_device("unload");
	if (fd < 0)
		return 1;
	ret = colibri_dev_unload(fd, name, wait);
	close(fd);
	if (ret) {
		fprintf(stderr, "colibri unload: %s: %s%s\n", name, strerror(-ret),
			ret == -EBUSY ? " (sessions are attached; --wait waits for them)" : "");
		return 1;
	}
	printf("unloaded %s\n", name);
	return 0;
}

int cmd_ls(int argc, char **argv)
{
	struct colibri_model_entry ents[64];
	int fd, n, i;

	if (argc > 1) {
		fprintf(stderr, "usage: colibri ls\n");
		return 2;
	}
	fd = open_device("ls");
	if (fd < 0)
		return 1;
	n = colibri_dev_list(fd, ents, 64);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "colibri ls: %s\n", strerror(-n));
		return 1;
	}
	printf("%-24s %-10s %6s %7s %5s %9s %12s %10s\n", "NAME", "ARCH", "LAYERS", "EXPERTS",
	       "TOP-K", "SESSIONS", "BYTES", "TOKENS");
	for (i = 0; i < n && i < 64; i++)
		printf("%-24s %-10s %6u %7u %5u %9u %12llu %10llu\n", ents[i].name,
		       colibri_arch_name(ents[i].arch), ents[i].n_layers, ents[i].n_experts,
		       ents[i].top_k, ents[i].sessions, (unsigned long long)ents[i].bytes,
		       (unsigned long long)ents[i].tokens);
	return 0;
}
