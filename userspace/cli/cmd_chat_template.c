// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * colibri chat-template - render a conversation through a model's chat
 * template and print the prompt text.
 *
 *   colibri chat-template (--model M | --tokenizer-config F) --messages FILE.json
 *                         [--tools FILE.json] [--vars FILE.json]
 *                         [--add-generation-prompt]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "chat/chat_harmony.h"
#include "chat/chat_template.h"
#include "cli.h"
#include "cli_opts.h"
#include "util/util.h"

#define JSON_MAX	(256u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: colibri chat-template (--model M | --tokenizer-config FILE) --messages FILE\n"
		"                             [--tools FILE] [--vars FILE] [--add-generation-prompt]\n"
		"       colibri chat-template (--model M | --tokenizer-config FILE) --print-template\n"
		"  --model M                a HF model directory, a .colibri or a GGUF file\n"
		"  --tokenizer-config FILE  a tokenizer_config.json with chat_template\n"
		"  --messages FILE          JSON array of {\"role\", \"content\", ...} ('-': stdin)\n"
		"  --tools FILE             JSON array of tool definitions\n"
		"  --vars FILE              JSON object of further template variables\n"
		"  --add-generation-prompt  end with the start of the assistant's turn\n"
		"  --print-template         print the template's Jinja source instead\n"
		"A model without a template uses the built-in harmony template when its vocabulary\n"
		"has harmony's tokens (GPT-OSS), else the plain fallback (docs/chat-template.md).\n");
}

/* A JSON file ('-' for stdin), or NULL with a message printed. */
static cJSON *read_json(const char *what, const char *path)
{
	struct cb_sbuf b = { 0 };
	char buf[65536], *text = NULL;
	size_t n = 0, r;
	cJSON *j;

	if (!strcmp(path, "-")) {
		while ((r = fread(buf, 1, sizeof(buf), stdin)) > 0)
			if (cb_sbuf_add(&b, buf, r)) {
				free(b.p);
				fprintf(stderr, "colibri chat-template: out of memory\n");
				return NULL;
			}
		text = b.p;
		n = b.n;
	} else {
		text = cb_read_file(path, JSON_MAX, &n);
	}
	if (!text) {
		fprintf(stderr, "colibri chat-template: %s: cannot be read\n", path);
		return NULL;
	}
	j = cJSON_ParseWithLength(text, n);
	free(text);
	if (!j)
		fprintf(stderr, "colibri chat-template: %s (%s): not valid JSON\n", path, what);
	return j;
}

int cmd_chat_template(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_OPTION_MODEL,
		{ "tokenizer-config", required_argument, NULL, 'c' },
		{ "messages", required_argument, NULL, 'M' },
		{ "tools", required_argument, NULL, 't' },
		{ "vars", required_argument, NULL, 'v' },
		{ "add-generation-prompt", no_argument, NULL, 'g' },
		{ "print-template", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *model = NULL, *config = NULL, *mpath = NULL, *tpath = NULL, *vpath = NULL;
	cJSON *messages = NULL, *tools = NULL, *vars = NULL;
	struct cb_chat chat = { 0 };
	char err[512], *out = NULL;
	int agp = 0, print = 0, o, rc = 1;
	size_t n;

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case CLI_OPT_MODEL: model = optarg; break;
		case 'c': config = optarg; break;
		case 'M': mpath = optarg; break;
		case 't': tpath = optarg; break;
		case 'v': vpath = optarg; break;
		case 'g': agp = 1; break;
		case 'p': print = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || !mpath == !print || !model == !config) {
		usage(stderr);
		return 2;
	}
	if (!print && !(messages = read_json("messages", mpath)))
		goto out;
	if ((tpath && !(tools = read_json("tools", tpath))) ||
	    (vpath && !(vars = read_json("vars", vpath))))
		goto out;
	if (config) {
		char *text = cb_read_file(config, JSON_MAX, &n);

		if (!text) {
			fprintf(stderr, "colibri chat-template: %s: cannot be read\n", config);
			goto out;
		}
		o = cb_chat_from_tokenizer_config(&chat, text, n, tools != NULL, err, sizeof(err));
		free(text);
		if (o) {
			fprintf(stderr, "colibri chat-template: %s: %s\n", config, err);
			goto out;
		}
	} else if (cb_chat_from_model(&chat, model, tools != NULL, err, sizeof(err))) {
		fprintf(stderr, "colibri chat-template: %s\n", err);
		goto out;
	} else if (cb_chat_builtin_for_model(&chat, model)) {
		fprintf(stderr, "colibri chat-template: out of memory\n");
		goto out;
	}
	if (print) {
		static const char fallback[] = CB_CHAT_FALLBACK_TEMPLATE;
		const char *t = chat.tmpl ? chat.tmpl : fallback;

		n = chat.tmpl ? chat.tmpl_len : sizeof(fallback) - 1;
		rc = fwrite(t, 1, n, stdout) != n || fflush(stdout);
		if (rc)
			fprintf(stderr, "colibri chat-template: cannot write the output\n");
		goto out;
	}
	if (cb_chat_render(&chat, messages, tools, agp, vars, &out, &n, err, sizeof(err))) {
		fprintf(stderr, "colibri chat-template: %s: %s\n", model ? model : config, err);
		goto out;
	}
	if (fwrite(out, 1, n, stdout) != n || fflush(stdout)) {
		fprintf(stderr, "colibri chat-template: cannot write the output\n");
		goto out;
	}
	rc = 0;
out:
	free(out);
	cb_chat_release(&chat);
	cJSON_Delete(messages);
	cJSON_Delete(tools);
	cJSON_Delete(vars);
	return rc;
}
