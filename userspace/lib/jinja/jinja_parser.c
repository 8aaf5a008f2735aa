// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_parser.c - the parser's token helpers (jinja_parser.h): where the
 * parser is, what the next token is, expecting one, a new node, a node
 * list, one more level of nesting.  The expressions (jinja_expr.c) and the
 * statements (jinja_parse.c) are parsed on them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_parser.h"

const char *jp_kind_name(enum jj_tok_kind k)
{
	static const char *const names[] = {
		"text", "number", "string", "name", "'='", "'('", "')'", "'{%'", "'%}'",
		"'{{'", "'}}'", "'['", "']'", "'{'", "'}'", "','", "'.'", "':'", "'|'",
		"operator", "operator", "'**'", "comparison", "unary operator", "comment",
	};

	return names[k];
}

uint32_t jp_pos(const struct parser *p)
{
	return p->i < p->n ? p->t[p->i].pos : (uint32_t)p->c->srclen;
}

bool jp_is(const struct parser *p, enum jj_tok_kind k)
{
	return p->i < p->n && p->t[p->i].k == k;
}

bool jp_is_word(const struct parser *p, size_t off, const char *w)
{
	const struct jj_tok *t;

	if (p->i + off >= p->n)
		return false;
	t = &p->t[p->i + off];
	return t->k == JT_IDENT && t->n == strlen(w) && !memcmp(t->s, w, t->n);
}

int jp_unexpected(struct parser *p, const char *what)
{
	if (p->i >= p->n)
		return jj_fail(p->c, jp_pos(p), "unexpected end of template, expected %s", what);
	return jj_fail(p->c, jp_pos(p), "unexpected %s, expected %s", jp_kind_name(p->t[p->i].k),
		       what);
}

int jp_expect(struct parser *p, enum jj_tok_kind k)
{
	if (!jp_is(p, k))
		return jp_unexpected(p, jp_kind_name(k));
	p->i++;
	return 0;
}

struct jj_node *jp_node(struct parser *p, enum jj_node_kind k, uint32_t pos)
{
	struct jj_node *n = jj_alloc(p->c, sizeof(*n));

	if (n) {
		n->k = k;
		n->pos = pos;
	}
	return n;
}

int jp_push(struct parser *p, struct nlist *l, struct jj_node *x)
{
	if (!x)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct jj_node **v = jj_alloc(p->c, cap * sizeof(*v));

		if (!v)
			return -1;
		if (l->n)
			memcpy(v, l->v, l->n * sizeof(*v));
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return 0;
}

bool jp_nest(struct parser *p)
{
	if (++p->depth > JJ_MAX_NEST) {
		jj_fail(p->c, jp_pos(p), "template nests deeper than %d", JJ_MAX_NEST);
		return false;
	}
	return true;
}
