// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_mask.c - which tokens a grammar lets come next (serve_mask.h): the
 * vocabulary sorted by its bytes, walked with the grammar's recognizer one
 * shared prefix at a time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve_mask.h"
#include "serve_states.h"
#include "tokenizer.h"

struct piece {
	const uint8_t *p;
	uint32_t len, id;
};

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len;
	int d = memcmp(x->p, y->p, n);

	if (d)
		return d;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int vocab_index_build(struct vocab_index *vi, const struct cb_tokenizer *tok, uint32_t vocab)
{
	uint32_t n_tok = (uint32_t)cb_tok_vocab_size(tok), i, k, n = 0;
	struct piece *all;
	const char *s;
	size_t len;
	uint32_t n_others = 0;

	memset(vi, 0, sizeof(*vi));
	vi->vocab = vocab;
	if (n_tok > vocab)
		n_tok = vocab;
	all = malloc((size_t)(n_tok ? n_tok : 1) * sizeof(*all));
	vi->special = calloc(vocab ? vocab : 1, 1);
	vi->others = malloc((size_t)(vocab ? vocab : 1) * sizeof(*vi->others));
	if (!all || !vi->special || !vi->others)
		goto oom;
	for (i = 0; i < vocab; i++) {
		s = i < n_tok ? cb_tok_piece(tok, (int32_t)i, &len) : NULL;
		if (i < n_tok && cb_tok_is_special(tok, (int32_t)i)) {
			vi->special[i] = 1;
		} else if (s && len) {
			all[n++] = (struct piece){ (const uint8_t *)s, (uint32_t)len, i };
			continue;
		}
		vi->others[n_others++] = i;
	}
	vi->n_others = n_others;
	qsort(all, n, sizeof(*all), piece_cmp);
	vi->sorted = malloc((size_t)(n ? n : 1) * sizeof(*vi->sorted));
	vi->piece = malloc((size_t)(n ? n : 1) * sizeof(*vi->piece));
	vi->len = malloc((size_t)(n ? n : 1) * sizeof(*vi->len));
	vi->lcp = malloc((size_t)(n ? n : 1) * sizeof(*vi->lcp));
	if (!vi->sorted || !vi->piece || !vi->len || !vi->lcp)
		goto oom;
	for (i = 0; i < n; i++) {
		vi->sorted[i] = all[i].id;
		vi->piece[i] = all[i].p;
		vi->len[i] = all[i].len;
		k = 0;
		if (i)
			while (k < all[i].len && k < all[i - 1].len &&
			       all[i].p[k] == all[i - 1].p[k])
				k++;
		vi->lcp[i] = k;
		if (all[i].len > vi->max_len)
			vi->max_len = all[i].len;
	}
	vi->n_sorted = n;
	free(all);
	return 0;
oom:
	free(all);
	vocab_index_release(vi);
	return -1;
}

void vocab_index_release(struct vocab_index *vi)
{
	free(vi->sorted);
	free(vi->piece);
	free(vi->len);
	free(vi->lcp);
	free(vi->special);
	free(vi->others);
	memset(vi, 0, sizeof(*vi));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int constraint_init(struct constraint *c, const struct grammar *g, const struct vocab_index *vi,
		    const struct cb_tokenizer *tok, const int32_t *ends, int n_ends)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->vi = vi;
	c->tok = tok;
	for (i = 0; i < n_ends && c->n_ends < CONSTRAINT_MAX_ENDS; i++)
		if (ends[i] >= 0 && (uint32_t)ends[i] < vi->vocab)
			c->ends[c->n_ends++] = ends[i];
	c->ids = malloc(((size_t)vi->max_len + 1) * sizeof(*c->ids));
	if (!c->ids || gram_run_init(&c->run, g)) {
		free(c->ids);
		memset(c, 0, sizeof(*c));
		return -1;
	}
	states_init(&c->states, &c->run);
	return 0;
}

void constraint_release(struct constraint *c)
{
	int i;

	for (i = 0; i < MASK_CACHE; i++) {
		free(c->cache[i].heads);
		free(c->cache[i].bits);
	}
	free(c->key);
	states_release(&c->states);
	gram_run_release(&c->run);
	free(c->ids);
	memset(c, 0, sizeof(*c));
}

static int is_end(const struct constraint *c, int32_t token)
{
	int i;

	for (i = 0; i < c->n_ends; i++)
		if (c->ends[i] == token)
			return 1;
	return 0;
}

/* A special token or an end: whether it may come now. */
static int symbol_allowed(struct constraint *c, int32_t token)
{
	if (c->vi->special[token] && gram_set_wants_token(&c->run, c->run.cur, (uint32_t)token))
		return 1;
	return is_end(c, token) && gram_set_done(&c->run, c->run.cur);
}

/* The set after @token's bytes from the current one (n 0: refused), in the arena. */
static struct gram_set walk(struct constraint *c, int32_t token)
{
	struct gram_set s = c->run.cur, t = { 0, 0 };
	const char *p;
	size_t len, i;

	p = cb_tok_piece(c->tok, token, &len);
	if (!p || !len)
		return t;
	for (i = 0; i < len; i++) {
		if (!gram_advance(&c->run, s, (uint8_t)p[i], &t))
			return t;
		s = t;
	}
	return s;
}

int constraint_allows(struct constraint *c, int32_t token)
{
	struct gram_mark m = gram_mark(&c->run);
	uint64_t t0 = now_ns();
	int ok;

	if (token < 0 || (uint32_t)token >= c->vi->vocab)
		return 0;
	if (c->vi->special[token] || is_end(c, token)) {
		ok = symbol_allowed(c, token);
	} else {
		ok = walk(c, token).n != 0;
		gram_reset(&c->run, m);
	}
	c->n_checked++;
	c->ns_checked += now_ns() - t0;
	return ok;
}

#define BIT(bits, i) ((bits)[(i) >> 6] >> ((i) & 63) & 1)
#define SET_BIT(bits, i) ((bits)[(i) >> 6] |= 1ull << ((i) & 63))

/*
 * The tokens the current set allows, as bits: how many.  The sorted
 * vocabulary walked a state id per depth into a token's bytes, the steps
 * remembered (serve_states.h); a prefix no stack takes drops every token
 * under it.
 */
static uint32_t walk_all(struct constraint *c, uint64_t *bits)
{
	const struct vocab_index *vi = c->vi;
	struct gram_states *st = &c->states;
	uint32_t i, id, have = 0, dead = UINT32_MAX, n_ok = 0, l;
	int32_t next;
	int e;

	memset(bits, 0, ((size_t)vi->vocab + 63) / 64 * sizeof(*bits));
	if (st->n > STATES_MAX_SETS || st->n_steps > STATES_MAX_STEPS)
		states_flush(st);
	c->ids[0] = states_id(st, c->run.cur);
	if (c->ids[0] < 0)
		return 0;
	for (i = 0; i < vi->n_sorted; i++) {
		id = vi->sorted[i];
		l = vi->lcp[i];
		if (dead != UINT32_MAX && l >= dead)
			continue;
		dead = UINT32_MAX;
		if (have > l)
			have = l;
		while (have < vi->len[i]) {
			next = states_next(st, c->ids[have], vi->piece[i][have]);
			if (next == -1)		/* out of memory: nothing allowed, the end */
				return 0;
			if (next == STATE_DEAD) {
				dead = have + 1;
				break;
			}
			c->ids[++have] = next;
		}
		if (dead == UINT32_MAX) {
			SET_BIT(bits, id);
			n_ok++;
		}
	}
	/* the ids the walk does not see: refused unless the grammar names them */
	for (i = 0; i < vi->n_others; i++) {
		id = vi->others[i];
		if (symbol_allowed(c, (int32_t)id)) {
			SET_BIT(bits, id);
			n_ok++;
		}
	}
	/* an end token is allowed by the grammar's state, whatever its bytes */
	for (e = 0; e < c->n_ends; e++) {
		id = (uint32_t)c->ends[e];
		if (!BIT(bits, id) && symbol_allowed(c, (int32_t)id)) {
			SET_BIT(bits, id);
			n_ok++;
		}
	}
	return n_ok;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The cache entry of the current set (its stacks sorted: the same state
 * reached another way is the same key), or the one to fill for it (*@hit 0).
 */
static struct mask_entry *cache_find(struct constraint *c, int *hit)
{
	struct gram_run *r = &c->run;
	struct mask_entry *m, *old = &c->cache[0];
	uint32_t n = r->cur.n, i;

	*hit = 0;
	if (n > c->cap_key) {
		uint32_t *k = realloc(c->key, (size_t)n * sizeof(*k));

		if (!k)
			return NULL;
		c->key = k;
		c->cap_key = n;
	}
	memcpy(c->key, r->heads + r->cur.off, (size_t)n * sizeof(*c->key));
	qsort(c->key, n, sizeof(*c->key), u32_cmp);
	c->tick++;
	for (i = 0; i < MASK_CACHE; i++) {
		m = &c->cache[i];
		if (m->bits && m->n == n &&
		    !memcmp(m->heads, c->key, (size_t)n * sizeof(*c->key))) {
			m->used = c->tick;
			*hit = 1;
			return m;
		}
		if (m->used < old->used)
			old = m;
	}
	if (n > old->cap) {
		uint32_t *h = realloc(old->heads, (size_t)n * sizeof(*h));

		if (!h)
			return NULL;
		old->heads = h;
		old->cap = n;
	}
	if (!old->bits) {
		old->bits = malloc(((size_t)c->vi->vocab + 63) / 64 * sizeof(*old->bits));
		if (!old->bits)
			return NULL;
	}
	memcpy(old->heads, c->key, (size_t)n * sizeof(*c->key));
	old->n = n;
	old->used = c->tick;
	return old;
}

uint32_t constraint_mask(struct constraint *c, float *logits)
{
	uint64_t t0 = now_ns();
	struct mask_entry *m;
	uint32_t i;
	int hit;

	m = cache_find(c, &hit);
	if (!m)
		return 0;	/* out of memory: nothing allowed, the answer ends */
	if (!hit) {
		m->n_ok = walk_all(c, m->bits);
		c->ns_walked += now_ns() - t0;
	} else {
		c->n_cached++;
	}
	for (i = 0; i < c->vi->vocab; i++)
		if (!BIT(m->bits, i))
			logits[i] = -INFINITY;
	c->n_masked++;
	c->ns_masked += now_ns() - t0;
	return m->n_ok;
}

int constraint_take(struct constraint *c, int32_t token)
{
	struct gram_set s;

	if (token < 0 || (uint32_t)token >= c->vi->vocab)
		return -1;
	if (c->vi->special[token] || is_end(c, token)) {
		if (gram_set_wants_token(&c->run, c->run.cur, (uint32_t)token)) {
			if (!gram_advance_token(&c->run, c->run.cur, (uint32_t)token, &s))
				return -1;
			c->run.cur = s;
			return 0;
		}
		return symbol_allowed(c, token) ? 0 : -1;
	}
	s = walk(c, token);
	if (!s.n)
		return -1;
	c->run.cur = s;
	return 0;
}
