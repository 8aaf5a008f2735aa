// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri - command-line front end over libcolibri.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcommand subcommands[] = {
	{ "device", cmd_device, "show what /dev/colibri reports (GET_INFO)" },
	{ "load", cmd_load, "pin a model (.colibri or GGUF) in the kernel" },
	{ "unload", cmd_unload, "remove a model from the kernel" },
	{ "ls", cmd_ls, "list the models loaded in the kernel" },
	{ "stats", cmd_stats, "per model: expert jobs run on the CPU and on each accelerator" },
	{ "generate", cmd_generate, "generate text from a prompt (kernel or in-process)" },
	{ "bench-gemm", cmd_bench_gemm, "gemm throughput of each ISA variant vs memory bandwidth" },
	{ "bench", cmd_bench, "prefill/decode tok/s of a model vs memory bandwidth" },
	{ "synth", cmd_synth, "write a random-weight .colibri model of any shape" },
	{ "logits", cmd_logits, "run a model (.colibri, GGUF, HF directory) in-process, print logits" },
	{ "tokenize", cmd_tokenize, "encode text to token ids, or decode ids (--decode)" },
	{ "convert", cmd_convert, "convert a Hugging Face directory or a GGUF file to .colibri" },
	{ "info", cmd_info, "describe a .colibri, GGUF file or HF directory (--json)" },
	{ "chat-template", cmd_chat_template, "render chat messages through a model's chat template" },
	{ "serve", cmd_serve, "an OpenAI-compatible HTTP server over a model" },
	{ "chat", cmd_chat, "chat with a model in the terminal" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: colibri COMMAND [ARGS...]\n\ncommands:\n");
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (subcommands[i].fn != cmd_serve || cli_has_serve)
			fprintf(f, "  %-10s %s\n", subcommands[i].name, subcommands[i].help);
	fprintf(f, "\n'colibri COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "colibri: unknown command '%s' (try 'colibri --help')\n", argv[1]);
	return 2;
}
