/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_states.h - a grammar run's states (sets of stacks, serve_grammar.h)
 * given ids, and the step from a state by a byte remembered: what the mask
 * (serve_mask.c) walks the vocabulary with.  Inside a string every plain
 * byte leads a state back to itself, so after the first token that shows
 * it, every other token's bytes are table lookups.
 *
 * Nodes are never freed during a run, so an id's stacks stay what they
 * were; states_flush() forgets everything (ids, steps) when the tables
 * grow past their bound.
 */
#ifndef COLIBRI_SERVE_STATES_H
#define COLIBRI_SERVE_STATES_H

#include <stdint.h>

#include "serve_grammar.h"

/* No stack takes the byte. */
#define STATE_DEAD (-2)

/* Past these, states_flush() at the next walk's start. */
#define STATES_MAX_SETS 16384u
#define STATES_MAX_STEPS (1u << 20)

/**
 * struct gram_states - ids of states, and the steps between them.
 * @run: the grammar run whose sets these are.
 * @pool, @n_pool: every state's stacks, one after another.
 * @sets, @n: state id's stacks are pool[sets[id].off .. + sets[id].len].
 * @tab, @cap_tab: state ids by their stacks' hash (open addressing).
 * @skey, @sval, @n_steps, @cap_steps: (id << 8 | byte) + 1 -> the next
 *	state (an id or STATE_DEAD), open addressing.
 */
struct gram_states {
	struct gram_run *run;
	uint32_t *pool, n_pool, cap_pool;
	struct {
		uint32_t off, len;
	} *sets;
	uint32_t n, cap;
	uint32_t *tab, cap_tab;
	uint64_t *skey;
	int32_t *sval;
	uint32_t n_steps, cap_steps;
};

void states_init(struct gram_states *st, struct gram_run *run);
void states_release(struct gram_states *st);
void states_flush(struct gram_states *st);
/* The id of set @s of the run: >= 0, or -1 (out of memory). */
int32_t states_id(struct gram_states *st, struct gram_set s);
/* The state after byte @b from state @id: an id, STATE_DEAD, or -1 (out of memory). */
int32_t states_next(struct gram_states *st, int32_t id, uint8_t b);

#endif /* COLIBRI_SERVE_STATES_H */
