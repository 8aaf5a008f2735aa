/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_mask.h - constrained decoding: a grammar (serve_grammar.h) decides
 * which tokens may come next, and the token drawn is one of them.
 *
 * The vocabulary is indexed once per model: its tokens sorted by the bytes
 * they decode to, each with the length of the prefix it shares with the one
 * before (struct vocab_index), so that the mask walks the grammar once per
 * distinct prefix and drops at once every token under a prefix the grammar
 * refused; the grammar's steps by byte are remembered (serve_states.h).
 * Special tokens are symbols of their own, allowed only where the grammar
 * names them; the tokens that end the answer are allowed where the grammar
 * may end.
 *
 * A step first asks the grammar about the token the engine drew, which is
 * a walk over that token's bytes alone; only when it is refused are all
 * the tokens masked (or the mask of the same state taken from the cache),
 * and the token drawn again from what is left with a draw of its own
 * (serve_gen.c).  Drawn from p, kept if allowed, else drawn
 * from p restricted to the allowed set A: a token t of A comes with
 * probability p(t) + (1 - p(A)) p(t) / p(A) = p(t) / p(A), the masked
 * distribution, as if every step had been masked (exactly so without top_k
 * and top_p, which truncate before the grammar sees the draw).
 */
#ifndef COLIBRI_SERVE_MASK_H
#define COLIBRI_SERVE_MASK_H

#include <stddef.h>
#include <stdint.h>

#include "serve_grammar.h"
#include "serve_states.h"

struct cb_tokenizer;

/**
 * struct vocab_index - a model's vocabulary as the grammar sees it.
 * @vocab: the model's vocabulary size (ids from the tokenizer's size up
 *	are never allowed).
 * @sorted, @n_sorted: the tokens that decode to bytes, sorted by them.
 * @piece, @len: each sorted token's bytes.
 * @lcp: each sorted token's bytes shared with the one before.
 * @special: per id, 1 for a special token (a symbol of its own).
 * @others, @n_others: the ids not sorted: special tokens, tokens that
 *	decode to nothing, ids past the tokenizer's.
 * @max_len: the longest piece.
 */
struct vocab_index {
	uint32_t vocab;
	uint32_t *sorted, n_sorted;
	const uint8_t **piece;
	uint32_t *len, *lcp;
	uint8_t *special;
	uint32_t *others, n_others;
	uint32_t max_len;
};

int vocab_index_build(struct vocab_index *vi, const struct cb_tokenizer *tok, uint32_t vocab);
void vocab_index_release(struct vocab_index *vi);

/* The most tokens that end an answer (EOS, the template's end of turn). */
#define CONSTRAINT_MAX_ENDS 8
/* Masks kept, by the grammar's state (the least recently used goes). */
#define MASK_CACHE 8

/*
 * struct mask_entry - the tokens one state of the grammar allows.
 * @heads, @n: the state (its stacks, sorted).
 * @bits, @n_ok: the tokens allowed, a bit each, and how many.
 */
struct mask_entry {
	uint32_t *heads, n, cap;
	uint64_t *bits;
	uint32_t n_ok;
	uint64_t used;
};

/**
 * struct constraint - one generation's grammar and what it has matched.
 * @vi: the vocabulary.
 * @tok: the tokenizer (a token's bytes).
 * @run: the grammar's recognizer.
 * @ends: the tokens that end the answer.
 * @states, @ids: the mask's walk: the grammar's states and their steps
 *	(serve_states.h), a state per depth into a token's bytes.
 * @cache, @key, @tick: masks of the states seen last: a state that comes
 *	back (inside a string, every plain character) is masked at once.
 * @n_checked, @n_masked: steps whose drawn token was asked about, and
 *	those that needed the whole mask (@n_cached of them found it made);
 *	@ns_checked, @ns_masked: their time, @ns_walked the part of it spent
 *	making masks.
 */
struct constraint {
	const struct vocab_index *vi;
	const struct cb_tokenizer *tok;
	struct gram_run run;
	int32_t ends[CONSTRAINT_MAX_ENDS];
	int n_ends;
	struct gram_states states;
	int32_t *ids;
	struct mask_entry cache[MASK_CACHE];
	uint32_t *key, cap_key;
	uint64_t tick;
	uint64_t n_checked, n_masked, n_cached, ns_checked, ns_masked, ns_walked;
};

/* Start @g (finished; it must outlive @c): 0, or -1 (out of memory, a bad grammar). */
int constraint_init(struct constraint *c, const struct grammar *g, const struct vocab_index *vi,
		    const struct cb_tokenizer *tok, const int32_t *ends, int n_ends);
void constraint_release(struct constraint *c);
/* 1 if @token may come next. */
int constraint_allows(struct constraint *c, int32_t token);
/* Every token that may not come next set to -inf in @logits: how many may (0: none). */
uint32_t constraint_mask(struct constraint *c, float *logits);
/* @token came (it was allowed): 0, or -1 (it was not, or out of memory). */
int constraint_take(struct constraint *c, int32_t token);

#endif /* COLIBRI_SERVE_MASK_H */
