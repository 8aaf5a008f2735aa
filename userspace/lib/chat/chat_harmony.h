/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * chat_harmony.h - the harmony chat format (GPT-OSS) built into colibri:
 * the template used for a model without one whose vocabulary has
 * harmony's special tokens (<|start|>, <|message|>, <|channel|>, <|end|>,
 * <|return|>, <|call|>).  A model's own template always wins.
 * docs/chat-template.md describes what it renders.
 */
#ifndef COLIBRI_CHAT_HARMONY_H
#define COLIBRI_CHAT_HARMONY_H

struct cb_chat;
struct cb_tokenizer;

/* The Jinja source of the built-in harmony template. */
const char *cb_chat_harmony_template(void);

/* 1 when @tok has each of harmony's tokens as a special token, else 0. */
int cb_chat_harmony_vocab(const struct cb_tokenizer *tok);

/*
 * cb_chat_builtin() - when @c has no template and @tok a harmony
 * vocabulary, give @c the built-in harmony template (source "built-in
 * harmony").  0 (also when nothing changed), or -1 (out of memory).
 */
int cb_chat_builtin(struct cb_chat *c, const struct cb_tokenizer *tok);

/* The same, with the tokenizer of the model at @path (directory, .colibri, GGUF). */
int cb_chat_builtin_for_model(struct cb_chat *c, const char *path);

#endif /* COLIBRI_CHAT_HARMONY_H */
