// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri load | unload | ls - manage the models pinned in the kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "libcolibri.h"

static int open_device(const char *cmd)
{
	int fd = colibri_dev_open();

	if (fd < 0)
		fprintf(stderr, "colibri %s: cannot open %s: %s%s\n", cmd, COLIBRI_DEVICE_PATH,
			strerror(-fd), fd == -ENOENT ? " (is the colibri module loaded?)" : "");
	return fd;
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
		"usage: colibri load MODEL.colibri [--name NAME] [--numa local|interleave|replicate]\n";
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
				"Pins the model in the kernel (needs CAP_SYS_ADMIN).\n"
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
	ret = colibri_dev_load_flags(fd, argv[optind], name, (unsigned int)flags, name_out,
				     &bytes);
	close(fd);
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
