// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * chat_harmony.c - the harmony chat format of GPT-OSS, built in for a model
 * whose vocabulary has harmony's special tokens but which ships no chat
 * template (chat_harmony.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/cbfile.h"
#include "chat/chat_harmony.h"
#include "chat/chat_template.h"
#include "import/gguf.h"
#include "import/hf_tiktoken.h"
#include "tokenizer.h"
#include "util/util.h"

/*
 * Messages <|start|>ROLE<|message|>CONTENT<|end|>; a system message with the
 * model identity, the knowledge cutoff, the date (current_date, when
 * given), the reasoning effort (reasoning_effort: low, medium, high) and
 * the valid channels; the first system or developer message becomes the
 * developer message's instructions, with the tools as functions.*; the
 * assistant speaks in the analysis (its thinking or reasoning_content,
 * kept only after the last user message), commentary (tool calls, ended by
 * <|call|>) and final channels; tool results come from functions.NAME; the
 * generation prompt is <|start|>assistant.  Written with explicit '\\n'
 * strings so that it renders the same with or without trim_blocks.
 */
static const char harmony_template[] =
	"{#- The harmony format of GPT-OSS, built into colibri for models without a template. -#}\n"
	"{%- set ns = namespace(last_user=-1, tool='') -%}\n"
	"{%- for m in messages -%}\n"
	"  {%- if m.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}\n"
	"{%- endfor -%}\n"
	"{{- '<|start|>system<|message|>' -}}\n"
	"{{- model_identity | default('You are ChatGPT, a large language model trained by OpenAI.') -}}\n"
	"{{- '\\nKnowledge cutoff: 2024-06\\n' -}}\n"
	"{%- if current_date is defined -%}{{- 'Current date: ' ~ current_date ~ '\\n' -}}{%- endif -%}\n"
	"{{- '\\nReasoning: ' ~ (reasoning_effort | default('medium')) ~ '\\n\\n' -}}\n"
	"{{- '# Valid channels: analysis, commentary, final. Channel must be included for every message.' -}}\n"
	"{%- if tools -%}{{- \"\\nCalls to these tools must go to the commentary channel: 'functions'.\" -}}{%- endif -%}\n"
	"{{- '<|end|>' -}}\n"
	"{%- set ins = messages[0].content if messages and messages[0].role in ['system', 'developer'] else '' -%}\n"
	"{%- if ins or tools -%}\n"
	"  {{- '<|start|>developer<|message|>' -}}\n"
	"  {%- if ins -%}{{- '# Instructions\\n\\n' ~ ins -}}{%- if tools -%}{{- '\\n\\n' -}}{%- endif -%}{%- endif -%}\n"
	"  {%- if tools -%}\n"
	"    {{- '# Tools\\n\\n## functions\\n\\nnamespace functions {\\n\\n' -}}\n"
	"    {%- for t in tools -%}\n"
	"      {%- set f = t.function if t.function is defined else t -%}\n"
	"      {%- if f.description is defined and f.description -%}{{- '// ' ~ f.description ~ '\\n' -}}{%- endif -%}\n"
	"      {{- 'type ' ~ f.name ~ ' = (_: ' ~ (f.parameters | tojson) ~ ') => any;\\n\\n' -}}\n"
	"    {%- endfor -%}\n"
	"    {{- '} // namespace functions' -}}\n"
	"  {%- endif -%}\n"
	"  {{- '<|end|>' -}}\n"
	"{%- endif -%}\n"
	"{%- for m in messages -%}\n"
	"  {%- if m.role == 'user' -%}\n"
	"    {{- '<|start|>user<|message|>' ~ m.content ~ '<|end|>' -}}\n"
	"  {%- elif m.role == 'assistant' -%}\n"
	"    {%- set thinking = m.thinking if m.thinking is defined else (m.reasoning_content if m.reasoning_content is defined else '') -%}\n"
	"    {#- the chain of thought of earlier turns is dropped, as harmony asks -#}\n"
	"    {%- if thinking and loop.index0 > ns.last_user -%}\n"
	"      {{- '<|start|>assistant<|channel|>analysis<|message|>' ~ thinking ~ '<|end|>' -}}\n"
	"    {%- endif -%}\n"
	"    {%- if m.tool_calls is defined and m.tool_calls -%}\n"
	"      {%- for c in m.tool_calls -%}\n"
	"        {%- set f = c.function if c.function is defined else c -%}\n"
	"        {%- set ns.tool = f.name -%}\n"
	"        {{- '<|start|>assistant<|channel|>commentary to=functions.' ~ f.name ~ ' <|constrain|>json<|message|>' -}}\n"
	"        {%- if f.arguments is string -%}{{- f.arguments -}}{%- else -%}{{- f.arguments | tojson -}}{%- endif -%}\n"
	"        {{- '<|call|>' -}}\n"
	"      {%- endfor -%}\n"
	"    {%- elif m.content -%}\n"
	"      {{- '<|start|>assistant<|channel|>final<|message|>' ~ m.content ~ '<|end|>' -}}\n"
	"    {%- endif -%}\n"
	"  {%- elif m.role == 'tool' -%}\n"
	"    {{- '<|start|>functions.' ~ (m.name if m.name is defined else ns.tool) ~ ' to=assistant<|channel|>commentary<|message|>' ~ m.content ~ '<|end|>' -}}\n"
	"  {%- endif -%}\n"
	"{%- endfor -%}\n"
	"{%- if add_generation_prompt -%}{{- '<|start|>assistant' -}}{%- endif -%}\n";

const char *cb_chat_harmony_template(void)
{
	return harmony_template;
}

/* The tokens every harmony conversation uses, each one special token. */
static const char *const harmony_tokens[] = {
	"<|start|>", "<|message|>", "<|channel|>", "<|end|>", "<|return|>", "<|call|>",
};

int cb_chat_harmony_vocab(const struct cb_tokenizer *tok)
{
	size_t i;

	if (!tok)
		return 0;
	for (i = 0; i < sizeof(harmony_tokens) / sizeof(harmony_tokens[0]); i++) {
		int32_t id = cb_tok_token_id(tok, harmony_tokens[i], strlen(harmony_tokens[i]));

		if (id < 0 || !cb_tok_is_special(tok, id))
			return 0;
	}
	return 1;
}

int cb_chat_builtin(struct cb_chat *c, const struct cb_tokenizer *tok)
{
	if (c->tmpl || !cb_chat_harmony_vocab(tok))
		return 0;
	c->tmpl = strdup(harmony_template);
	if (!c->tmpl)
		return -1;
	c->tmpl_len = sizeof(harmony_template) - 1;
	c->source = "built-in harmony";
	return 0;
}

/* The tokenizer of a HF directory, .colibri or GGUF file, or NULL. */
static struct cb_tokenizer *model_tokenizer(const char *path)
{
	struct cb_tokenizer *tok = NULL;
	char err[256];
	struct stat sb;
	size_t n;

	if (stat(path, &sb))
		return NULL;
	if (S_ISDIR(sb.st_mode)) {
		return hf_tokenizer_load(path, err, sizeof(err));
	}
	if (cbfile_is_colibri(path) == 1) {
		struct cbfile *f = cbfile_open(path, 0, err, sizeof(err));

		if (f && cbfile_tokenizer(f, &n))
			tok = cbfile_load_tokenizer(f, err, sizeof(err));
		cbfile_close(f);
	} else if (gguf_is_gguf(path) == 1) {
		struct gguf_file *g = gguf_open(path, err, sizeof(err));

		if (g) {
			tok = gguf_tokenizer_load(g, err, sizeof(err));
			gguf_close(g);
		}
	}
	return tok;
}

int cb_chat_builtin_for_model(struct cb_chat *c, const char *path)
{
	struct cb_tokenizer *tok;
	int r;

	if (c->tmpl)
		return 0;
	tok = model_tokenizer(path);
	r = cb_chat_builtin(c, tok);
	cb_tok_free(tok);
	return r;
}
