/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * serve_grammar.h - context-free grammars over bytes and special tokens,
 * and their incremental recognizer: what constrained decoding
 * (serve_mask.h) asks at each step is which tokens may come next.
 *
 * A grammar is a set of rules; a rule is alternatives; an alternative is a
 * sequence of elements: a byte out of a set, a special token (a symbol of
 * its own: "<|end|>" written as text is not the token), or another rule.
 * Rule 0 is the root.  Rules may recurse, but not on the left, and a
 * repetition must not be of something that may be empty (gram_finish()
 * does not check: the recognizer stops such a grammar with an error).
 *
 * The recognizer is a set of stacks, each a persistent list of the
 * positions still to match (a tail shared by many), whose top is always a
 * byte set or a token: the grammar's alternatives, all followed at once,
 * as llama.cpp's GBNF sampler does.  A stack that is empty has matched the
 * whole root.  Each node is made once (hash-consed), so two stacks of the
 * same positions are one index, and so are two equal sets' members: a
 * state that comes back (text inside a string) is the same set.
 */
#ifndef COLIBRI_SERVE_GRAMMAR_H
#define COLIBRI_SERVE_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

/* One element of an alternative. */
enum gram_kind {
	GK_END,		/* the end of an alternative */
	GK_BYTES,	/* a byte of set @arg */
	GK_TOKEN,	/* the special token @arg */
	GK_RULE,	/* rule @arg */
};

struct gram_elem {
	uint32_t kind;
	uint32_t arg;
};

struct gram_rule {
	struct gram_elem *e;	/* the alternatives, each ended by GK_END */
	uint32_t n, cap;
};

/**
 * struct grammar - rules while built, then frozen by gram_finish().
 * @rules, @n_rules: what gram_rule_new() made.
 * @sets, @n_sets: the byte sets (256 bits each), shared.
 * @elems: gram_finish(): every rule's alternatives in one array.
 * @alts, @alt_of: the first element of each alternative; rule r's are
 *	alts[alt_of[r]] up to alts[alt_of[r + 1]].
 * @oom: an allocation failed while building: gram_finish() says -1.
 */
struct grammar {
	struct gram_rule *rules;
	uint32_t n_rules, cap_rules;
	uint64_t (*sets)[4];
	uint32_t n_sets, cap_sets;
	struct gram_elem *elems;
	uint32_t *alts, *alt_of;
	int oom;
};

/* --- building ------------------------------------------------------------ */

void gram_init(struct grammar *g);
void gram_release(struct grammar *g);
/* A new rule with no alternative yet: its id (or 0 after an allocation failure). */
uint32_t gram_rule_new(struct grammar *g);
/* Append to @rule's current alternative. */
void gram_add_set(struct grammar *g, uint32_t rule, const uint64_t set[4]);
void gram_add_byte(struct grammar *g, uint32_t rule, uint8_t b);
void gram_add_range(struct grammar *g, uint32_t rule, uint8_t lo, uint8_t hi);
void gram_add_text(struct grammar *g, uint32_t rule, const char *s, size_t n);
void gram_add_token(struct grammar *g, uint32_t rule, uint32_t token);
void gram_add_rule(struct grammar *g, uint32_t rule, uint32_t ref);
/* End @rule's current alternative; what follows starts the next one. */
void gram_or(struct grammar *g, uint32_t rule);
/* Ends the last alternatives, lays the rules out: 0, or -1 (out of memory). */
int gram_finish(struct grammar *g);

/* Helpers: a new rule of ... */
uint32_t gram_opt(struct grammar *g, uint32_t r);		/* r | "" */
uint32_t gram_star(struct grammar *g, uint32_t r);		/* r* */
uint32_t gram_repeat(struct grammar *g, uint32_t r, uint32_t min, uint32_t max); /* r{min,max} */
uint32_t gram_literal(struct grammar *g, const char *s, size_t n);

/* --- recognizing ----------------------------------------------------------- */

/* A set of stacks: heads[off .. off + n) of its run. */
struct gram_set {
	uint32_t off, n;
};

/**
 * struct gram_run - a grammar being matched.
 * @nodes: the stacks' nodes (an element's index, the node below or
 *	GRAM_NIL), each made once and kept for the run; @hash finds them
 *	(open addressing, at most half full).
 * @heads: the sets' stacks, an arena cut back by gram_reset().
 * @cur: what has been matched so far.
 * @tops: the set being made: its top positions, hashed to a bit each.
 * @err: the grammar recursed without end (left recursion, a repetition of
 *	the empty string) or memory ran out: every set is then empty.
 */
#define GRAM_NIL UINT32_MAX
struct gram_node {
	uint32_t pos, next;
};

struct gram_run {
	const struct grammar *g;
	struct gram_node *nodes;
	uint32_t n_nodes, cap_nodes;
	uint32_t *hash, cap_hash;
	uint32_t *heads;
	uint32_t n_heads, cap_heads;
	struct gram_set cur;
	uint64_t tops;
	int err;
};

/* Start matching @g (finished): 0, or -1 (out of memory, or @g recursed). */
int gram_run_init(struct gram_run *r, const struct grammar *g);
void gram_run_release(struct gram_run *r);

/* The sets' arena, to go back to with gram_reset() (the sets made after are dropped). */
struct gram_mark {
	uint32_t heads;
};

static inline struct gram_mark gram_mark(const struct gram_run *r)
{
	return (struct gram_mark){ r->n_heads };
}

static inline void gram_reset(struct gram_run *r, struct gram_mark m)
{
	r->n_heads = m.heads;
}

/* Stacks @heads (@n of them, of this run) as a new set @s: 0, or -1 (out of memory). */
int gram_set_put(struct gram_run *r, const uint32_t *heads, uint32_t n, struct gram_set *s);
/* @from after byte @b, or after special token @token, into @to: @to->n (0: no stack can). */
uint32_t gram_advance(struct gram_run *r, struct gram_set from, uint8_t b, struct gram_set *to);
uint32_t gram_advance_token(struct gram_run *r, struct gram_set from, uint32_t token,
			    struct gram_set *to);
/* 1 if a stack of @s has matched the whole root. */
int gram_set_done(const struct gram_run *r, struct gram_set s);
/* 1 if some stack of @s waits for special token @token. */
int gram_set_wants_token(const struct gram_run *r, struct gram_set s, uint32_t token);

#endif /* COLIBRI_SERVE_GRAMMAR_H */
