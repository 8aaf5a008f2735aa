// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_arena.c - the interpreter's memory and errors, under everything
 * else: arenas freed as a whole (the template's, one per render), and the
 * first error of a parse or a render, with the line:column of its
 * construct.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_internal.h"

struct jj_block {
	struct jj_block *next;
	size_t size, used;
	max_align_t data[];
};

void *jj_alloc(struct jj_ctx *c, size_t n)
{
	struct jj_arena *a = &c->ar;
	struct jj_block *b = a->head;
	void *p;

	if (c->failed)
		return NULL;
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (n > JJ_MAX_MEM || a->used + n > (a->limit ? a->limit : JJ_MAX_MEM)) {
		jj_fail(c, 0, "template needs more than %u MiB of memory", JJ_MAX_MEM >> 20);
		return NULL;
	}
	if (!b || b->size - b->used < n) {
		size_t size = n > 60000 ? n : 60000;

		b = malloc(sizeof(*b) + size);
		if (!b) {
			jj_fail(c, 0, "out of memory");
			return NULL;
		}
		b->size = size;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = (char *)b->data + b->used;
	b->used += n;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void jj_arena_free(struct jj_arena *a)
{
	while (a->head) {
		struct jj_block *b = a->head;

		a->head = b->next;
		free(b);
	}
	a->used = 0;
}

char *jj_strdup(struct jj_ctx *c, const char *s, size_t n)
{
	char *d = jj_alloc(c, n + 1);

	if (d && n)
		memcpy(d, s, n);
	return d;
}

/* 1-based line and column (in characters) of byte offset @pos. */
static void line_col(const struct jj_ctx *c, uint32_t pos, unsigned int *line, unsigned int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < pos && i < c->srclen; i++) {
		if (c->src[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)c->src[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

int jj_fail(struct jj_ctx *c, uint32_t pos, const char *fmt, ...)
{
	unsigned int line, col;
	va_list ap;
	int n;

	if (c->failed)
		return -1;
	c->failed = 1;
	if (!c->err || !c->errlen)
		return -1;
	line_col(c, pos, &line, &col);
	n = snprintf(c->err, c->errlen, "%u:%u: ", line, col);
	if (n < 0 || (size_t)n >= c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}
