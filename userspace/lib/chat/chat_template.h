/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * chat_template.h - a model's chat template, and chat messages rendered
 * through it (userspace; the interpreter is jinja.h).
 *
 * The template comes from where the model carries it: chat_template in a
 * Hugging Face tokenizer_config.json (a string, or a list of named templates
 * of which "default" is used, or "tool_use" when tools are given and it
 * exists), tokenizer.chat_template in GGUF metadata, or the chat template
 * section of a .colibri file.  The special tokens the templates print
 * (bos_token, eos_token, unk_token, pad_token) come from the same place.
 * A model without a template gets CB_CHAT_FALLBACK_TEMPLATE.
 *
 * docs/chat-template.md describes the variables a template sees.
 */
#ifndef COLIBRI_CHAT_TEMPLATE_H
#define COLIBRI_CHAT_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/*
 * The plain format of models without a template, one block per message:
 *   ROLE:\nCONTENT\n\n          (ROLE upper-cased: SYSTEM, USER, ASSISTANT...)
 * and, with add_generation_prompt, a final "ASSISTANT:\n".  It suits the
 * play-script style of the shipped demo model ("ROMEO:\n...").
 */
#define CB_CHAT_FALLBACK_TEMPLATE						\
	"{% for message in messages %}{{ message['role'] | upper }}:\n"		\
	"{{ message['content'] }}\n\n{% endfor %}"				\
	"{% if add_generation_prompt %}ASSISTANT:\n{% endif %}"

/**
 * struct cb_chat - what rendering a model's chats needs.
 * @tmpl:     the Jinja source (malloc'ed), or NULL when the model has none
 * @tmpl_len: its length
 * @special:  a JSON object with those of bos_token, eos_token, unk_token and
 *            pad_token the model defines (strings, or null)
 * @source:   where the template came from, for messages ("tokenizer_config.json",
 *            "GGUF metadata", ".colibri file", or "fallback")
 */
struct cb_chat {
	char *tmpl;
	size_t tmpl_len;
	cJSON *special;
	const char *source;
};

/*
 * From the text of a tokenizer_config.json.  @tools selects "tool_use" from
 * a list of named templates.  Return: 0 (c->tmpl NULL if it has no
 * chat_template), or -1 with a reason in err.
 */
int cb_chat_from_tokenizer_config(struct cb_chat *c, const char *json, size_t len, int tools,
				  char *err, size_t errlen);

/* From a model: a Hugging Face directory, a .gguf or a .colibri file. */
int cb_chat_from_model(struct cb_chat *c, const char *path, int tools, char *err,
		       size_t errlen);

void cb_chat_release(struct cb_chat *c);

struct cb_tokenizer;

/*
 * cb_chat_add_special_ids() - c->special (made if NULL) gets the text of
 * the tokens @bos, @eos and @pad of @tok as bos_token, eos_token and
 * pad_token; an id < 0, or one @tok cannot decode, is left out.  For a
 * model that keeps the ids and the tokenizer rather than the strings (a
 * .colibri file, a model pinned in the kernel).  0, or -1 (out of memory).
 */
int cb_chat_add_special_ids(struct cb_chat *c, const struct cb_tokenizer *tok, int32_t bos,
			    int32_t eos, int32_t pad);

/**
 * cb_chat_render() - the prompt text of a conversation.
 * @c:        the model's template (the fallback when c->tmpl is NULL)
 * @messages: a JSON array of {"role": ..., "content": ...} (and whatever else
 *            the template reads: tool_calls, reasoning_content, ...)
 * @tools:    a JSON array of tool definitions, or NULL (the template sees none)
 * @add_generation_prompt: end with the opening of the assistant's turn
 * @extra:    a JSON object of further variables (e.g. enable_thinking), or NULL
 * @out:      malloc'ed NUL-terminated text; @len its length
 *
 * Return: 0, or -1 with one line in err (a refused construct with its
 * line:column in the template, or the template's raise_exception message).
 */
int cb_chat_render(const struct cb_chat *c, const cJSON *messages, const cJSON *tools,
		   int add_generation_prompt, const cJSON *extra, char **out, size_t *len,
		   char *err, size_t errlen);

#endif /* COLIBRI_CHAT_TEMPLATE_H */
