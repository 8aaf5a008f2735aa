// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_vocab.c - the tokenizer's hash maps: piece string -> id (keys in the
 * tokenizer's string arena) and (left id, right id) -> (rank, merged id).
 */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}


int tok_smap_init(struct smap *m, size_t n)
{
	size_t cap = 16, i;

	while (cap < n * 2)
		cap *= 2;
	m->e = malloc(cap * sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		m->e[i].id = -1;
	m->mask = cap - 1;
	m->n = 0;
	return 0;
}

int32_t tok_smap_get(const struct smap *m, const char *arena, const char *s, size_t n)
{
	size_t i = cb_hash_bytes(s, n) & m->mask;

	if (!m->e)
		return -1;
	for (;; i = (i + 1) & m->mask) {
		const struct smap_ent *e = &m->e[i];

		if (e->id < 0)
			return -1;
		if (e->len == n && !memcmp(arena + e->off, s, n))
			return e->id;
	}
}

/* Insert; an existing key keeps its first id (as a JSON object would not repeat). */
void tok_smap_put(struct smap *m, const char *arena, uint32_t off, uint32_t len, int32_t id)
{
	size_t i = cb_hash_bytes(arena + off, len) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		struct smap_ent *e = &m->e[i];

		if (e->id < 0) {
			e->off = off;
			e->len = len;
			e->id = id;
			m->n++;
			return;
		}
		if (e->len == len && !memcmp(arena + e->off, arena + off, len))
			return;
	}
}

int tok_mmap_init(struct mmap *m, size_t n)
{
	size_t cap = 16, i;

	while (cap < n * 2)
		cap *= 2;
	m->e = malloc(cap * sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		m->e[i].key = UINT64_MAX;
	m->mask = cap - 1;
	m->n = 0;
	return 0;
}

const struct mmap_ent *tok_mmap_get(const struct mmap *m, int32_t a, int32_t b)
{
	uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	size_t i = hash_u64(key) & m->mask;

	if (!m->e)
		return NULL;
	for (;; i = (i + 1) & m->mask) {
		if (m->e[i].key == key)
			return &m->e[i];
		if (m->e[i].key == UINT64_MAX)
			return NULL;
	}
}

/* First merge of a pair wins, as in the HF loader (later duplicates are shadowed). */
void tok_mmap_put(struct mmap *m, int32_t a, int32_t b, uint32_t rank, int32_t id)
{
	uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	size_t i = hash_u64(key) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		if (m->e[i].key == key)
			return;
		if (m->e[i].key == UINT64_MAX) {
			m->e[i].key = key;
			m->e[i].rank = rank;
			m->e[i].id = id;
			m->n++;
			return;
		}
	}
}
