/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_logits.h - a request's logit rules (struct logit_rules in serve.h:
 * logit_bias, repetition_penalty, presence and frequency penalties, min_p)
 * applied to the logits of each position before its token is drawn, with
 * what they need to know of the tokens so far.
 *
 * libcolibri's colibri_generation.on_logits() hands the logits over and
 * draws the token from them with the engine's own sampler, so a request
 * with rules is answered alike by the kernel and in process, and one whose
 * rules change nothing draws the tokens the engine would have.
 */
#ifndef COLIBRI_SERVE_LOGITS_H
#define COLIBRI_SERVE_LOGITS_H

#include <stddef.h>
#include <stdint.h>

struct logit_rules;

/*
 * struct logit_state - one generation's.
 * @hist: the prompt's tokens, then those drawn (@n_prompt, @n_hist).
 * @count: per token, how many times it was drawn.
 * @mark, @marks: per token, the last pass that looked at it (to see each
 *	token of a window once).
 */
struct logit_state {
	const struct logit_rules *lr;
	float temperature;
	uint32_t vocab;
	uint32_t *hist;
	size_t n_prompt, n_hist, cap;
	uint32_t *count, *mark;
	uint32_t marks;
};

/* 0, or -1 (out of memory). */
int logit_state_init(struct logit_state *ls, const struct logit_rules *lr, float temperature,
		     uint32_t vocab, const uint32_t *prompt, size_t n_prompt);
void logit_state_release(struct logit_state *ls);
/* A token was drawn: 0, or -1 (out of memory). */
int logit_state_add(struct logit_state *ls, uint32_t token);
/* The rules, on the @ls->vocab logits of the next position. */
void logit_rules_apply(struct logit_state *ls, float *logits);

#endif /* COLIBRI_SERVE_LOGITS_H */
