/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_prompt.h - a conversation into the tokens a model is prompted
 * with, through its own chat template (colibri serve's chat completions,
 * colibri chat).
 *
 * The template renders the messages and the opening of the assistant's
 * turn; the text is encoded as Hugging Face's apply_chat_template() does:
 * without the tokenizer's own special tokens, since the template prints
 * bos_token itself where the model wants it.  The plain fallback format
 * of a model without a template prints none, so there the tokenizer adds
 * what it adds to any text (as colibri generate does).
 */
#ifndef COLIBRI_SERVE_PROMPT_H
#define COLIBRI_SERVE_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

struct cb_chat;
struct cb_tokenizer;

/*
 * chat_prompt() - the tokens of @messages (and @tools, may be NULL; @vars,
 * further variables of the template, may be NULL) with the generation
 * prompt, in a malloc'ed *@ids.  Returns their number, or
 * -1 with one line in @err (the template refused: a construct, or its own
 * raise_exception message).
 */
long chat_prompt(const struct cb_chat *chat, const struct cb_tokenizer *tok,
		 const cJSON *messages, const cJSON *tools, const cJSON *vars, uint32_t **ids,
		 char *err, size_t errlen);

/*
 * chat_end_of_turn() - the tokens that end an assistant's answer in this
 * template besides @eos, at most @max of them into @ids; returns how many.
 * The one the template prints right after an assistant message when it is
 * a special token other than @eos (Llama 3's <|eot_id|>, ChatML's
 * <|im_end|>, Gemma's <end_of_turn>): a model of that template says it
 * when its answer is done, so generation stops there as at the
 * end-of-sequence token.  None for the fallback format or a template that
 * ends turns with EOS itself.  Harmony (GPT-OSS) is the exception: <|end|>
 * closes each message of an answer (the analysis comes before the final
 * one), so an answer ends at <|return|> and at <|call|> (a tool call).
 */
#define CHAT_END_MAX 4
/*
 * chat_is_harmony() - 1 when @chat's answers are harmony's (GPT-OSS's own
 * template or the built-in one, on a harmony vocabulary: the template
 * closes an assistant message with <|end|> or <|return|>), else 0.
 */
int chat_is_harmony(const struct cb_chat *chat, const struct cb_tokenizer *tok);

int chat_end_of_turn(const struct cb_chat *chat, const struct cb_tokenizer *tok,
		     int32_t eos, int32_t *ids, int max);

#endif /* COLIBRI_SERVE_PROMPT_H */
