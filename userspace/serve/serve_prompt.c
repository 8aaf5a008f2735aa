// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_prompt.c - conversations into prompt tokens through the model's
 * chat template (serve_prompt.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/chat_harmony.h"
#include "chat/chat_template.h"
#include "serve_prompt.h"
#include "tokenizer.h"

long chat_prompt(const struct cb_chat *chat, const struct cb_tokenizer *tok,
		 const cJSON *messages, const cJSON *tools, const cJSON *vars, uint32_t **ids,
		 char *err, size_t errlen)
{
	unsigned int flags = chat->tmpl ? 0 : CB_TOK_ADD_SPECIAL;
	int32_t *ids32 = NULL;
	char *text = NULL;
	size_t len;
	long n, i;

	*ids = NULL;
	if (cb_chat_render(chat, messages, tools, 1, vars, &text, &len, err, errlen))
		return -1;
	n = cb_tok_encode_alloc(tok, text, len, flags, &ids32);
	free(text);
	if (n < 0) {
		snprintf(err, errlen, "the prompt cannot be encoded (%ld)", n);
		return -1;
	}
	*ids = malloc((n ? n : 1) * sizeof(**ids));
	if (!*ids) {
		free(ids32);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++)
		(*ids)[i] = (uint32_t)ids32[i];
	free(ids32);
	return n;
}

/* The token printed right after an assistant message, if it is a special one. */
static int32_t probe_end_of_turn(const struct cb_chat *chat, const struct cb_tokenizer *tok)
{
	static const char mark[] = "colibri-end-of-turn-probe";
	cJSON *msgs = cJSON_Parse("[{\"role\": \"user\", \"content\": \"Hi\"},"
				  " {\"role\": \"assistant\", \"content\": \"colibri-end-of-turn-probe\"}]");
	int32_t id = -1, first;
	char err[256], *text = NULL;
	const char *after;
	size_t len;
	long n;

	if (!msgs || !chat->tmpl)
		goto out;
	/* A template that refuses this conversation has no end of turn we can see. */
	if (cb_chat_render(chat, msgs, NULL, 0, NULL, &text, &len, err, sizeof(err)))
		goto out;
	after = strstr(text, mark);
	if (!after)
		goto out;
	after += sizeof(mark) - 1;
	n = cb_tok_encode(tok, after, strlen(after), 0, &first, 1);
	if (n >= 1 && cb_tok_is_special(tok, first))
		id = first;
out:
	free(text);
	cJSON_Delete(msgs);
	return id;
}

static int add_end(int32_t *ids, int n, int max, int32_t id, int32_t eos)
{
	int i;

	if (id < 0 || id == eos || n >= max)
		return n;
	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return n;
	ids[n] = id;
	return n + 1;
}

/* harmony templates close a (last) answer with <|end|> or <|return|> */
static int harmony_end(const struct cb_tokenizer *tok, int32_t id)
{
	return id >= 0 && cb_chat_harmony_vocab(tok) &&
	       (id == cb_tok_token_id(tok, "<|end|>", 7) ||
		id == cb_tok_token_id(tok, "<|return|>", 10));
}

int chat_is_harmony(const struct cb_chat *chat, const struct cb_tokenizer *tok)
{
	return harmony_end(tok, probe_end_of_turn(chat, tok));
}

int chat_end_of_turn(const struct cb_chat *chat, const struct cb_tokenizer *tok,
		     int32_t eos, int32_t *ids, int max)
{
	int32_t id = probe_end_of_turn(chat, tok);

	if (harmony_end(tok, id)) {
		int n = add_end(ids, 0, max, cb_tok_token_id(tok, "<|return|>", 10), eos);

		return add_end(ids, n, max, cb_tok_token_id(tok, "<|call|>", 8), eos);
	}
	return add_end(ids, 0, max, id, eos);
}
