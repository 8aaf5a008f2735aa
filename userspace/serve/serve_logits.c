// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_logits.c - a request's logit rules (serve_logits.h), in the order
 * vLLM applies them: the bias, then the repetition penalty over the
 * window, then the presence and frequency penalties over what was drawn,
 * then min_p at the request's temperature.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_logits.h"

int logit_state_init(struct logit_state *ls, const struct logit_rules *lr, float temperature,
		     uint32_t vocab, const uint32_t *prompt, size_t n_prompt)
{
	memset(ls, 0, sizeof(*ls));
	ls->lr = lr;
	ls->temperature = temperature;
	ls->vocab = vocab;
	ls->cap = n_prompt + 256;
	ls->hist = malloc(ls->cap * sizeof(*ls->hist));
	ls->count = calloc(vocab, sizeof(*ls->count));
	ls->mark = calloc(vocab, sizeof(*ls->mark));
	if (!ls->hist || !ls->count || !ls->mark) {
		logit_state_release(ls);
		return -1;
	}
	if (n_prompt)
		memcpy(ls->hist, prompt, n_prompt * sizeof(*prompt));
	ls->n_prompt = ls->n_hist = n_prompt;
	return 0;
}

void logit_state_release(struct logit_state *ls)
{
	free(ls->hist);
	free(ls->count);
	free(ls->mark);
	memset(ls, 0, sizeof(*ls));
}

int logit_state_add(struct logit_state *ls, uint32_t token)
{
	uint32_t *h;

	if (token >= ls->vocab)
		return 0;
	if (ls->n_hist == ls->cap) {
		h = realloc(ls->hist, 2 * ls->cap * sizeof(*h));
		if (!h)
			return -1;
		ls->hist = h;
		ls->cap *= 2;
	}
	ls->hist[ls->n_hist++] = token;
	ls->count[token]++;
	return 0;
}

/* A new pass over the tokens: 1 the first time @t is seen in it. */
static int first_look(struct logit_state *ls, uint32_t t)
{
	if (ls->mark[t] == ls->marks)
		return 0;
	ls->mark[t] = ls->marks;
	return 1;
}

void logit_rules_apply(struct logit_state *ls, float *logits)
{
	const struct logit_rules *lr = ls->lr;
	size_t i, from;
	float max, floor;
	uint32_t t;

	for (i = 0; i < lr->n_bias; i++)
		logits[lr->bias[i].token] += lr->bias[i].value;
	if (lr->repetition != 0 && lr->repetition != 1) {
		ls->marks++;
		from = lr->repeat_last_n < 0 || (size_t)lr->repeat_last_n >= ls->n_hist ? 0 :
		       ls->n_hist - (size_t)lr->repeat_last_n;
		for (i = from; i < ls->n_hist; i++) {
			t = ls->hist[i];
			if (first_look(ls, t))
				logits[t] = logits[t] > 0 ? logits[t] / lr->repetition :
					    logits[t] * lr->repetition;
		}
	}
	if (lr->presence != 0 || lr->frequency != 0) {
		ls->marks++;
		for (i = ls->n_prompt; i < ls->n_hist; i++) {
			t = ls->hist[i];
			if (first_look(ls, t))
				logits[t] -= lr->presence + lr->frequency * (float)ls->count[t];
		}
	}
	if (lr->min_p > 0 && ls->temperature > 0) {
		/* p_t / p_max = exp((l_t - l_max) / T) below min_p: dropped */
		max = -INFINITY;
		for (i = 0; i < ls->vocab; i++)
			max = logits[i] > max ? logits[i] : max;
		floor = max + ls->temperature * logf(lr->min_p);
		for (i = 0; i < ls->vocab; i++)
			if (logits[i] < floor)
				logits[i] = -INFINITY;
	}
}
