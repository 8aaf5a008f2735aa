// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * tok_bpe.c - byte-pair encoding of one pre-tokenized piece.
 */
#include <stdlib.h>

#include "tok_internal.h"

static bool cand_less(const struct cand *x, const struct cand *y)
{
	return x->rank < y->rank || (x->rank == y->rank && x->pos < y->pos);
}

static int heap_push(struct work *w, struct cand c)
{
	size_t i;

	if (w->heap_n == w->heap_cap) {
		size_t cap = w->heap_cap ? w->heap_cap * 2 : 64;
		struct cand *p = realloc(w->heap, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->heap = p;
		w->heap_cap = cap;
	}
	i = w->heap_n++;
	while (i) {
		size_t up = (i - 1) / 2;

		if (!cand_less(&c, &w->heap[up]))
			break;
		w->heap[i] = w->heap[up];
		i = up;
	}
	w->heap[i] = c;
	return 0;
}

static struct cand heap_pop(struct work *w)
{
	struct cand top = w->heap[0], last = w->heap[--w->heap_n];
	size_t i = 0, n = w->heap_n;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && cand_less(&w->heap[c + 1], &w->heap[c]))
			c++;
		if (!cand_less(&w->heap[c], &last))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (n)
		w->heap[i] = last;
	return top;
}

static int sym_add(struct work *w, size_t *n, int32_t id)
{
	if (*n == w->sym_cap) {
		size_t cap = w->sym_cap ? w->sym_cap * 2 : 64;
		struct sym *p = realloc(w->sym, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->sym = p;
		w->sym_cap = cap;
	}
	w->sym[*n].id = id;
	w->sym[*n].prev = (int32_t)*n - 1;
	w->sym[*n].next = (int32_t)*n + 1;
	w->sym[*n].dead = false;
	(*n)++;
	return 0;
}

static int push_pair(const struct cb_tokenizer *tok, struct work *w, int32_t pos)
{
	const struct mmap_ent *m;
	int32_t nx = w->sym[pos].next;

	m = tok_mmap_get(&tok->merges, w->sym[pos].id, w->sym[nx].id);
	if (!m)
		return 0;
	return heap_push(w, (struct cand){ m->rank, (uint32_t)pos, m->id });
}

/*
 * BPE on one piece, the way HF's Word::merge_all does it: a heap of
 * candidate merges ordered by (rank, position), each checked against the
 * current symbols when popped.  O(n log n) in the piece length.
 */
int tok_bpe(const struct cb_tokenizer *tok, struct work *w, const char *s, size_t n)
{
	size_t nsym = 0, i;
	int32_t unk = -1, k;
	int ret;

	if (!n)
		return 0;
	if (tok->ignore_merges) {
		int32_t id = tok_smap_get(&tok->vocab, tok->arena.p, s, n);

		if (id >= 0)
			return ivec_push(&w->out, id);
	}
	/* initial symbols: bytes (byte-level) or characters */
	for (i = 0; i < n;) {
		size_t l = 1;
		int32_t id, cp;

		if (!tok->bytelevel)
			l = tok_u8_get(s + i, n - i, &cp);
		id = tok_smap_get(&tok->vocab, tok->arena.p, s + i, l);
		if (id >= 0) {
			if (unk >= 0 && (ret = sym_add(w, &nsym, unk)))
				return ret;
			unk = -1;
			if ((ret = sym_add(w, &nsym, id)))
				return ret;
		} else {
			size_t j;
			bool all = tok->byte_fallback;

			for (j = 0; all && j < l; j++)
				all = tok->byte_id[(unsigned char)s[i + j]] >= 0;
			if (all) {
				/* HF adds byte tokens without flushing a pending unk */
				for (j = 0; j < l; j++)
					if ((ret = sym_add(w, &nsym,
							   tok->byte_id[(unsigned char)s[i + j]])))
						return ret;
			} else if (tok->unk_id >= 0) {
				if (unk >= 0 && !tok->fuse_unk && (ret = sym_add(w, &nsym, unk)))
					return ret;
				unk = tok->unk_id;
			}
			/* no unk token: the character is dropped, as in HF */
		}
		i += l;
	}
	if (unk >= 0 && (ret = sym_add(w, &nsym, unk)))
		return ret;
	if (!nsym)
		return 0;
	w->sym[nsym - 1].next = -1;

	w->heap_n = 0;
	for (k = 0; k + 1 < (int32_t)nsym; k++)
		if ((ret = push_pair(tok, w, k)))
			return ret;
	while (w->heap_n) {
		struct cand c = heap_pop(w);
		struct sym *a = &w->sym[c.pos];
		const struct mmap_ent *m;
		int32_t nx;

		if (a->dead || a->next < 0)
			continue;
		nx = a->next;
		m = tok_mmap_get(&tok->merges, a->id, w->sym[nx].id);
		if (!m || m->id != c.id)
			continue;	/* stale: the pair changed since it was queued */
		a->id = c.id;
		a->next = w->sym[nx].next;
		w->sym[nx].dead = true;
		if (a->next >= 0)
			w->sym[a->next].prev = c.pos;
		if (a->prev >= 0 && (ret = push_pair(tok, w, a->prev)))
			return ret;
		if (a->next >= 0 && (ret = push_pair(tok, w, c.pos)))
			return ret;
	}
	for (k = 0; k >= 0; k = w->sym[k].next)
		if ((ret = ivec_push(&w->out, w->sym[k].id)))
			return ret;
	return 0;
}
