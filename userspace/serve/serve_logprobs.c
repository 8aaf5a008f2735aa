// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_logprobs.c - each generated token's log-probability and its
 * position's likeliest tokens (serve_logprobs.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve_logprobs.h"
#include "tokenizer.h"

int logprobs_init(struct gen_logprobs *lp, uint32_t k, uint32_t vocab)
{
	memset(lp, 0, sizeof(*lp));
	lp->k = k < SERVE_MAX_TOP_LOGPROBS ? k : SERVE_MAX_TOP_LOGPROBS;
	lp->vocab = vocab;
	lp->raw = malloc((size_t)(vocab ? vocab : 1) * sizeof(*lp->raw));
	return lp->raw ? 0 : -1;
}

void logprobs_release(struct gen_logprobs *lp)
{
	free(lp->rec);
	free(lp->raw);
	memset(lp, 0, sizeof(*lp));
}

void logprobs_look(struct gen_logprobs *lp, const float *logits)
{
	float max = -INFINITY;
	double sum = 0;
	uint32_t i, j;

	memcpy(lp->raw, logits, (size_t)lp->vocab * sizeof(*logits));
	lp->n_top = 0;
	for (i = 0; i < lp->vocab; i++) {
		if (logits[i] > max)
			max = logits[i];
		/* the likeliest k, kept sorted: a token in goes where it belongs */
		if (lp->k && (lp->n_top < lp->k || logits[i] > lp->top[lp->n_top - 1].logprob)) {
			j = lp->n_top < lp->k ? lp->n_top++ : lp->k - 1;
			for (; j > 0 && lp->top[j - 1].logprob < logits[i]; j--)
				lp->top[j] = lp->top[j - 1];
			lp->top[j] = (struct lp_top){ (int32_t)i, logits[i] };
		}
	}
	for (i = 0; i < lp->vocab; i++)
		sum += exp((double)logits[i] - max);
	lp->lse = max + (float)log(sum);
	for (j = 0; j < lp->n_top; j++)
		lp->top[j].logprob -= lp->lse;
}

int logprobs_take(struct gen_logprobs *lp, int32_t token, const struct cb_tokenizer *tok)
{
	struct lp_rec *r;
	size_t len;

	if (token < 0 || (uint32_t)token >= lp->vocab)
		return 0;
	if (lp->n == lp->cap) {
		size_t cap = lp->cap ? 2 * lp->cap : 64;

		r = realloc(lp->rec, cap * sizeof(*r));
		if (!r)
			return -1;
		lp->rec = r;
		lp->cap = cap;
	}
	r = &lp->rec[lp->n++];
	r->token = token;
	r->logprob = lp->raw[token] - lp->lse;
	r->offset = lp->bytes;
	if (cb_tok_piece(tok, token, &len))
		lp->bytes += (uint32_t)len;
	r->n_top = lp->n_top;
	memcpy(r->top, lp->top, lp->n_top * sizeof(r->top[0]));
	return 0;
}
