// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_grammar.c - grammars over bytes and special tokens, built rule by
 * rule, and their recognizer: a set of persistent stacks advanced a byte
 * (or a token) at a time (serve_grammar.h).
 */
#include <stdlib.h>
#include <string.h>

#include "serve_grammar.h"
#include "util/util.h"

/* Deeper than this, a settle is taken for a grammar that recurses without end. */
#define GRAM_MAX_DEPTH 1024

void gram_init(struct grammar *g)
{
	memset(g, 0, sizeof(*g));
}

void gram_release(struct grammar *g)
{
	uint32_t i;

	for (i = 0; i < g->n_rules; i++)
		free(g->rules[i].e);
	free(g->rules);
	free(g->sets);
	free(g->elems);
	free(g->alts);
	free(g->alt_of);
	memset(g, 0, sizeof(*g));
}

uint32_t gram_rule_new(struct grammar *g)
{
	if (g->oom ||
	    cb_grow((void **)&g->rules, &g->cap_rules, g->n_rules + 1, sizeof(*g->rules))) {
		g->oom = 1;
		return 0;
	}
	memset(&g->rules[g->n_rules], 0, sizeof(g->rules[0]));
	return g->n_rules++;
}

static void add(struct grammar *g, uint32_t rule, uint32_t kind, uint32_t arg)
{
	struct gram_rule *r;

	if (g->oom || rule >= g->n_rules)
		return;
	r = &g->rules[rule];
	if (cb_grow((void **)&r->e, &r->cap, r->n + 1, sizeof(*r->e))) {
		g->oom = 1;
		return;
	}
	r->e[r->n++] = (struct gram_elem){ kind, arg };
}

void gram_add_set(struct grammar *g, uint32_t rule, const uint64_t set[4])
{
	uint32_t i;

	for (i = 0; i < g->n_sets; i++)
		if (!memcmp(g->sets[i], set, sizeof(g->sets[i])))
			break;
	if (i == g->n_sets) {
		if (g->oom || cb_grow((void **)&g->sets, &g->cap_sets, g->n_sets + 1,
				   sizeof(*g->sets))) {
			g->oom = 1;
			return;
		}
		memcpy(g->sets[g->n_sets++], set, sizeof(g->sets[0]));
	}
	add(g, rule, GK_BYTES, i);
}

void gram_add_range(struct grammar *g, uint32_t rule, uint8_t lo, uint8_t hi)
{
	uint64_t set[4] = { 0 };
	unsigned int b;

	for (b = lo; b <= hi; b++)
		set[b >> 6] |= 1ull << (b & 63);
	gram_add_set(g, rule, set);
}

void gram_add_byte(struct grammar *g, uint32_t rule, uint8_t b)
{
	gram_add_range(g, rule, b, b);
}

void gram_add_text(struct grammar *g, uint32_t rule, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		gram_add_byte(g, rule, (uint8_t)s[i]);
}

void gram_add_token(struct grammar *g, uint32_t rule, uint32_t token)
{
	add(g, rule, GK_TOKEN, token);
}

void gram_add_rule(struct grammar *g, uint32_t rule, uint32_t ref)
{
	add(g, rule, GK_RULE, ref);
}

void gram_or(struct grammar *g, uint32_t rule)
{
	add(g, rule, GK_END, 0);
}

int gram_finish(struct grammar *g)
{
	uint32_t r, i, n_e = 0, n_a = 0, e = 0, a = 0;
	struct gram_rule *ru;

	/* the open alternative (empty after a gram_or() that nothing followed) */
	for (r = 0; r < g->n_rules; r++)
		gram_or(g, r);
	if (g->oom || !g->n_rules)
		return -1;
	for (r = 0; r < g->n_rules; r++) {
		n_e += g->rules[r].n;
		for (i = 0; i < g->rules[r].n; i++)
			n_a += g->rules[r].e[i].kind == GK_END;
	}
	g->elems = malloc((size_t)n_e * sizeof(*g->elems));
	g->alts = malloc((size_t)n_a * sizeof(*g->alts));
	g->alt_of = malloc(((size_t)g->n_rules + 1) * sizeof(*g->alt_of));
	if (!g->elems || !g->alts || !g->alt_of)
		return -1;
	for (r = 0; r < g->n_rules; r++) {
		ru = &g->rules[r];
		g->alt_of[r] = a;
		g->alts[a++] = e;
		for (i = 0; i < ru->n; i++) {
			g->elems[e++] = ru->e[i];
			if (ru->e[i].kind == GK_END && i + 1 < ru->n)
				g->alts[a++] = e;
		}
	}
	g->alt_of[g->n_rules] = a;
	return 0;
}

uint32_t gram_opt(struct grammar *g, uint32_t r)
{
	uint32_t o = gram_rule_new(g);

	gram_add_rule(g, o, r);
	gram_or(g, o);
	return o;
}

uint32_t gram_star(struct grammar *g, uint32_t r)
{
	uint32_t s = gram_rule_new(g);

	gram_add_rule(g, s, r);
	gram_add_rule(g, s, s);
	gram_or(g, s);
	return s;
}

uint32_t gram_repeat(struct grammar *g, uint32_t r, uint32_t min, uint32_t max)
{
	uint32_t out = gram_rule_new(g), tail, next, i;

	/* max > min: nested options, r (r (r)?)? ... */
	tail = GRAM_NIL;
	if (max == GRAM_NIL) {
		tail = gram_star(g, r);
	} else {
		for (i = min; i < max; i++) {
			next = gram_rule_new(g);
			gram_add_rule(g, next, r);
			if (tail != GRAM_NIL)
				gram_add_rule(g, next, tail);
			gram_or(g, next);
			tail = next;
		}
	}
	for (i = 0; i < min; i++)
		gram_add_rule(g, out, r);
	if (tail != GRAM_NIL)
		gram_add_rule(g, out, tail);
	return out;
}

uint32_t gram_literal(struct grammar *g, const char *s, size_t n)
{
	uint32_t r = gram_rule_new(g);

	gram_add_text(g, r, s, n);
	return r;
}

/* --- the recognizer ----------------------------------------------------------- */

static uint32_t node_hash(uint32_t pos, uint32_t next)
{
	return (pos * 0x9e3779b1u) ^ (next * 0x85ebca77u + (next >> 16));
}

/* Room for one more node in the table, kept at most half full. */
static int hash_room(struct gram_run *r)
{
	uint32_t cap = r->cap_hash ? r->cap_hash * 2 : 1024, i, k;
	uint32_t *t;

	if ((r->n_nodes + 1) * 2 <= r->cap_hash)
		return 0;
	t = malloc((size_t)cap * sizeof(*t));
	if (!t)
		return -1;
	memset(t, 0xff, (size_t)cap * sizeof(*t));
	for (k = 0; k < r->n_nodes; k++) {
		for (i = node_hash(r->nodes[k].pos, r->nodes[k].next) & (cap - 1); t[i] != GRAM_NIL;
		     i = (i + 1) & (cap - 1))
			;
		t[i] = k;
	}
	free(r->hash);
	r->hash = t;
	r->cap_hash = cap;
	return 0;
}

/*
 * The node (@pos, @next), made once: two stacks of the same positions all
 * the way down are the same index.
 */
static uint32_t node_get(struct gram_run *r, uint32_t pos, uint32_t next)
{
	uint32_t i, k;

	if (hash_room(r) ||
	    cb_grow((void **)&r->nodes, &r->cap_nodes, r->n_nodes + 1, sizeof(*r->nodes))) {
		r->err = 1;
		return GRAM_NIL;
	}
	for (i = node_hash(pos, next) & (r->cap_hash - 1); (k = r->hash[i]) != GRAM_NIL;
	     i = (i + 1) & (r->cap_hash - 1))
		if (r->nodes[k].pos == pos && r->nodes[k].next == next)
			return k;
	r->nodes[r->n_nodes] = (struct gram_node){ pos, next };
	r->hash[i] = r->n_nodes;
	return r->n_nodes++;
}

/*
 * Add stack @h to the set being made (from @off), unless it holds it
 * already; @r->tops has a bit for each stack in the set (hashed), so that
 * a new one is seen new without a look at the others.
 */
static void head_add(struct gram_run *r, uint32_t off, uint32_t h)
{
	uint64_t bit = 1ull << ((h * 0x9e3779b1u) >> 26);
	uint32_t i;

	if (r->tops & bit) {
		for (i = off; i < r->n_heads; i++)
			if (r->heads[i] == h)
				return;
	}
	r->tops |= bit;
	if (cb_grow((void **)&r->heads, &r->cap_heads, r->n_heads + 1, sizeof(*r->heads))) {
		r->err = 1;
		return;
	}
	r->heads[r->n_heads++] = h;
}

/*
 * Position @pos with @next below it, expanded until each stack's top waits
 * for a byte or a token (or the stack is empty), into the set from @off.
 */
static void settle(struct gram_run *r, uint32_t off, uint32_t pos, uint32_t next, int depth)
{
	const struct grammar *g = r->g;
	const struct gram_elem *e;
	uint32_t a, cont;

	if (r->err)
		return;
	if (depth > GRAM_MAX_DEPTH) {
		r->err = 1;
		return;
	}
	e = &g->elems[pos];
	switch (e->kind) {
	case GK_END:
		if (next == GRAM_NIL)
			head_add(r, off, GRAM_NIL);
		else
			settle(r, off, r->nodes[next].pos, r->nodes[next].next, depth + 1);
		return;
	case GK_BYTES:
	case GK_TOKEN:
		head_add(r, off, node_get(r, pos, next));
		return;
	default:
		/* what follows the rule, unless nothing does (a tail call) */
		cont = g->elems[pos + 1].kind == GK_END ? next : node_get(r, pos + 1, next);
		for (a = g->alt_of[e->arg]; a < g->alt_of[e->arg + 1]; a++)
			settle(r, off, g->alts[a], cont, depth + 1);
	}
}

int gram_run_init(struct gram_run *r, const struct grammar *g)
{
	uint32_t a;

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->cur.off = 0;
	r->tops = 0;
	for (a = g->alt_of[0]; a < g->alt_of[1]; a++)
		settle(r, 0, g->alts[a], GRAM_NIL, 0);
	r->cur.n = r->n_heads;
	if (r->err) {
		gram_run_release(r);
		return -1;
	}
	return 0;
}

void gram_run_release(struct gram_run *r)
{
	free(r->nodes);
	free(r->hash);
	free(r->heads);
	memset(r, 0, sizeof(*r));
}

static uint32_t advance(struct gram_run *r, struct gram_set from, uint32_t kind, uint32_t arg,
			struct gram_set *to)
{
	const struct grammar *g = r->g;
	const struct gram_elem *e;
	uint32_t i, h, pos;

	to->off = r->n_heads;
	r->tops = 0;
	for (i = 0; i < from.n && !r->err; i++) {
		h = r->heads[from.off + i];
		if (h == GRAM_NIL)
			continue;
		pos = r->nodes[h].pos;
		e = &g->elems[pos];
		if (e->kind != kind)
			continue;
		if (kind == GK_BYTES ? !(g->sets[e->arg][arg >> 6] >> (arg & 63) & 1) :
		    e->arg != arg)
			continue;
		settle(r, to->off, pos + 1, r->nodes[h].next, 0);
	}
	if (r->err)
		r->n_heads = to->off;
	to->n = r->n_heads - to->off;
	return to->n;
}

int gram_set_put(struct gram_run *r, const uint32_t *heads, uint32_t n, struct gram_set *s)
{
	if (cb_grow((void **)&r->heads, &r->cap_heads, r->n_heads + n, sizeof(*r->heads)))
		return -1;
	memcpy(r->heads + r->n_heads, heads, (size_t)n * sizeof(*heads));
	s->off = r->n_heads;
	s->n = n;
	r->n_heads += n;
	return 0;
}

uint32_t gram_advance(struct gram_run *r, struct gram_set from, uint8_t b, struct gram_set *to)
{
	return advance(r, from, GK_BYTES, b, to);
}

uint32_t gram_advance_token(struct gram_run *r, struct gram_set from, uint32_t token,
			    struct gram_set *to)
{
	return advance(r, from, GK_TOKEN, token, to);
}

int gram_set_done(const struct gram_run *r, struct gram_set s)
{
	uint32_t i;

	for (i = 0; i < s.n; i++)
		if (r->heads[s.off + i] == GRAM_NIL)
			return 1;
	return 0;
}

int gram_set_wants_token(const struct gram_run *r, struct gram_set s, uint32_t token)
{
	const struct gram_elem *e;
	uint32_t i, h;

	for (i = 0; i < s.n; i++) {
		h = r->heads[s.off + i];
		if (h == GRAM_NIL)
			continue;
		e = &r->g->elems[r->nodes[h].pos];
		if (e->kind == GK_TOKEN && e->arg == token)
			return 1;
	}
	return 0;
}
