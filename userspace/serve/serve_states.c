// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_states.c - a grammar run's states interned, and their steps by
 * byte remembered (serve_states.h).
 */
#include <stdlib.h>
#include <string.h>

#include "serve_states.h"
#include "util/util.h"

void states_init(struct gram_states *st, struct gram_run *run)
{
	memset(st, 0, sizeof(*st));
	st->run = run;
}

void states_release(struct gram_states *st)
{
	free(st->pool);
	free(st->sets);
	free(st->tab);
	free(st->skey);
	free(st->sval);
	memset(st, 0, sizeof(*st));
}

void states_flush(struct gram_states *st)
{
	st->n_pool = 0;
	st->n = 0;
	st->n_steps = 0;
	if (st->tab)
		memset(st->tab, 0xff, (size_t)st->cap_tab * sizeof(*st->tab));
	if (st->skey)
		memset(st->skey, 0, (size_t)st->cap_steps * sizeof(*st->skey));
}

static uint32_t hash_of(const uint32_t *h, uint32_t n)
{
	uint32_t x = 2166136261u ^ n, i;

	for (i = 0; i < n; i++)
		x = (x ^ h[i]) * 16777619u;
	return x ^ (x >> 15);
}

/* A table of twice the room, the ids put back in. */
static int tab_grow(struct gram_states *st)
{
	uint32_t cap = st->cap_tab ? st->cap_tab * 2 : 1024, id, i;
	uint32_t *t = malloc((size_t)cap * sizeof(*t));

	if (!t)
		return -1;
	memset(t, 0xff, (size_t)cap * sizeof(*t));
	for (id = 0; id < st->n; id++) {
		for (i = hash_of(st->pool + st->sets[id].off, st->sets[id].len) & (cap - 1); t[i] != UINT32_MAX;
		     i = (i + 1) & (cap - 1))
			;
		t[i] = id;
	}
	free(st->tab);
	st->tab = t;
	st->cap_tab = cap;
	return 0;
}

int32_t states_id(struct gram_states *st, struct gram_set s)
{
	const uint32_t *h = st->run->heads + s.off;
	uint32_t i, id;

	if ((st->n + 1) * 2 > st->cap_tab && tab_grow(st))
		return -1;
	for (i = hash_of(h, s.n) & (st->cap_tab - 1); (id = st->tab[i]) != UINT32_MAX;
	     i = (i + 1) & (st->cap_tab - 1))
		if (st->sets[id].len == s.n &&
		    !memcmp(st->pool + st->sets[id].off, h, (size_t)s.n * sizeof(*h)))
			return (int32_t)id;
	if (cb_grow((void **)&st->pool, &st->cap_pool, st->n_pool + s.n, sizeof(*st->pool)) ||
	    cb_grow((void **)&st->sets, &st->cap, st->n + 1, sizeof(*st->sets)))
		return -1;
	memcpy(st->pool + st->n_pool, h, (size_t)s.n * sizeof(*h));
	st->sets[st->n].off = st->n_pool;
	st->sets[st->n].len = s.n;
	st->n_pool += s.n;
	st->tab[i] = st->n;
	return (int32_t)st->n++;
}

static int steps_grow(struct gram_states *st)
{
	uint32_t cap = st->cap_steps ? st->cap_steps * 2 : 4096, i, k;
	uint64_t *key = calloc(cap, sizeof(*key));
	int32_t *val = malloc((size_t)cap * sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	for (k = 0; k < st->cap_steps; k++) {
		if (!st->skey[k])
			continue;
		for (i = (uint32_t)(st->skey[k] * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1); key[i];
		     i = (i + 1) & (cap - 1))
			;
		key[i] = st->skey[k];
		val[i] = st->sval[k];
	}
	free(st->skey);
	free(st->sval);
	st->skey = key;
	st->sval = val;
	st->cap_steps = cap;
	return 0;
}

int32_t states_next(struct gram_states *st, int32_t id, uint8_t b)
{
	struct gram_run *r = st->run;
	uint64_t key = ((uint64_t)id << 8 | b) + 1;
	struct gram_mark m;
	struct gram_set from, to;
	uint32_t i;
	int32_t next;

	if ((st->n_steps + 1) * 2 > st->cap_steps && steps_grow(st))
		return -1;
	for (i = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & (st->cap_steps - 1); st->skey[i];
	     i = (i + 1) & (st->cap_steps - 1))
		if (st->skey[i] == key)
			return st->sval[i];
	/* not seen: the state's stacks into the run's arena, one step, and back */
	m = gram_mark(r);
	if (gram_set_put(r, st->pool + st->sets[id].off, st->sets[id].len, &from))
		return -1;
	if (!gram_advance(r, from, b, &to))
		next = r->err ? -1 : STATE_DEAD;
	else
		next = states_id(st, to);
	gram_reset(r, m);
	if (next == -1)
		return -1;
	/* slot i is still free: states_id() keeps to its own table */
	st->skey[i] = key;
	st->sval[i] = next;
	st->n_steps++;
	return next;
}
