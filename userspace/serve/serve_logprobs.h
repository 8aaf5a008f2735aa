/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_logprobs.h - a request's logprobs: for each token generated, its
 * log-probability and the likeliest tokens of its position.
 *
 * As vLLM's by default, the probabilities are the model's own: the
 * softmax of each position's logits as the engine returns them, before
 * the request's temperature, penalties, bias or grammar.  Every token
 * generated is recorded (reasoning and tool calls too) but the end of the
 * turn.  The logits come through libcolibri's on_logits, so both backends
 * give the same.
 */
#ifndef COLIBRI_SERVE_LOGPROBS_H
#define COLIBRI_SERVE_LOGPROBS_H

#include <stddef.h>
#include <stdint.h>

struct cb_tokenizer;

/* The most top_logprobs a request may ask (OpenAI's chat limit). */
#define SERVE_MAX_TOP_LOGPROBS 20

struct lp_top {
	int32_t token;
	float logprob;
};

/* One token generated: its log-probability, and its position's likeliest. */
struct lp_rec {
	int32_t token;
	float logprob;
	uint32_t offset;	/* the bytes of the tokens before it */
	uint32_t n_top;
	struct lp_top top[SERVE_MAX_TOP_LOGPROBS];
};

/**
 * struct gen_logprobs - a generation's logprobs.
 * @rec, @n: the tokens so far; @sent: how many the answer has written;
 *	@bytes: the bytes of their text.
 * @k: the likeliest tokens to keep per position (top_logprobs).
 * @raw, @vocab: the position being drawn: its logits as they came,
 *	@lse their log-sum-exp, @top its likeliest.
 */
struct gen_logprobs {
	struct lp_rec *rec;
	size_t n, cap, sent;
	uint32_t bytes;
	uint32_t k;
	float *raw;
	uint32_t vocab;
	float lse;
	uint32_t n_top;
	struct lp_top top[SERVE_MAX_TOP_LOGPROBS];
};

/* 0, or -1 (out of memory). */
int logprobs_init(struct gen_logprobs *lp, uint32_t k, uint32_t vocab);
void logprobs_release(struct gen_logprobs *lp);
/* A position's logits, before anything changes them. */
void logprobs_look(struct gen_logprobs *lp, const float *logits);
/* The token drawn there: recorded.  0, or -1 (out of memory). */
int logprobs_take(struct gen_logprobs *lp, int32_t token, const struct cb_tokenizer *tok);

#endif /* COLIBRI_SERVE_LOGPROBS_H */
