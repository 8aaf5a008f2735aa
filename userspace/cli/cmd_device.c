// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri device - what the loaded module says about itself (GET_INFO).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "libcolibri.h"

static void print_mib(const char *what, unsigned long long bytes)
{
	printf("%-14s %llu MiB (%llu bytes)\n", what, bytes >> 20, bytes);
}

/* Each loaded model's placement: "model numa     NAME: replicate, 2 copies". */
static void print_models_numa(int fd)
{
	struct colibri_model_entry ents[64];
	int n = colibri_dev_list(fd, ents, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (ents[i].numa_copies)	/* 0: a module from before NUMA placement */
			printf("%-14s %s: %s, %u cop%s\n", "model numa", ents[i].name,
			       colibri_numa_name(ents[i].numa), ents[i].numa_copies,
			       ents[i].numa_copies == 1 ? "y" : "ies");
}

int cmd_device(int argc, char **argv)
{
	struct colibri_info info;
	int fd, ret;

	if (argc > 1) {
		if (strcmp(argv[1], "--help") && strcmp(argv[1], "-h"))
			fprintf(stderr, "colibri device: unexpected argument '%s'\n", argv[1]);
		fprintf(stderr, "usage: colibri device\n"
			"Prints what /dev/colibri reports about the module (ABI, engine ISA,\n"
			"memory provider and limits, NUMA nodes and each model's placement).\n");
		return 2;
	}
	fd = colibri_dev_open();
	if (fd < 0) {
		fprintf(stderr, "colibri device: cannot open %s: %s%s\n", COLIBRI_DEVICE_PATH,
			strerror(-fd), fd == -2 ? " (is the colibri module loaded?)" : "");
		return 1;
	}
	ret = colibri_dev_get_info(fd, &info);
	if (ret) {
		fprintf(stderr, "colibri device: GET_INFO failed: %s\n", strerror(-ret));
		return 1;
	}
	printf("%-14s %s\n", "device", COLIBRI_DEVICE_PATH);
	printf("%-14s %u\n", "abi", info.abi_version);
	printf("%-14s %s (level %u, variant \"%.*s\")\n", "engine isa",
	       colibri_isa_name(info.isa_level), info.isa_level,
	       (int)sizeof(info.isa_name), info.isa_name);
	printf("%-14s %s\n", "memory", colibri_mem_provider_name(info.mem_provider));
	print_mib("memory limit", info.mem_limit);
	print_mib("memory total", info.mem_total);
	print_mib("memory used", info.mem_used);
	printf("%-14s %u of %u\n", "models", info.nr_models, info.max_models);
	printf("%-14s %u of %u\n", "sessions", info.nr_sessions, info.max_sessions);
	if (info.numa_nodes)	/* 0: a module from before NUMA placement */
		printf("%-14s %u node%s with memory\n", "numa", info.numa_nodes,
		       info.numa_nodes == 1 ? "" : "s");
	print_models_numa(fd);
	return 0;
}
