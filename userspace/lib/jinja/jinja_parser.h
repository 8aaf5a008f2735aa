/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * jinja_parser.h - what the two halves of the parser share: the parser's
 * state, its token helpers (jinja_parser.c) and the expression entry points
 * (jinja_expr.c) that the statements (jinja_parse.c) use.
 */
#ifndef COLIBRI_JINJA_PARSER_H
#define COLIBRI_JINJA_PARSER_H

#include "jinja_internal.h"

struct parser {
	struct jj_ctx *c;
	const struct jj_tok *t;
	size_t n, i;
	int depth;
};

/* A growable node list in the arena. */
struct nlist {
	struct jj_node **v;
	size_t n, cap;
};

/* ---- token helpers (jinja_parser.c) ---- */
/* A token kind as errors name it ("'('", "name", ...). */
const char *jp_kind_name(enum jj_tok_kind k);
uint32_t jp_pos(const struct parser *p);
bool jp_is(const struct parser *p, enum jj_tok_kind k);
bool jp_is_word(const struct parser *p, size_t off, const char *w);
int jp_unexpected(struct parser *p, const char *what);
int jp_expect(struct parser *p, enum jj_tok_kind k);
struct jj_node *jp_node(struct parser *p, enum jj_node_kind k, uint32_t pos);
int jp_push(struct parser *p, struct nlist *l, struct jj_node *x);
/* One more level of nesting; false (and the error) beyond JJ_MAX_NEST. */
bool jp_nest(struct parser *p);

/* ---- expressions (jinja_expr.c) ---- */
struct jj_node *jp_expression(struct parser *p);
struct jj_node *jp_primary(struct parser *p);
/* a, b, c as a tuple (or just a); @prim: targets of for (primaries only). */
struct jj_node *jp_sequence(struct parser *p, bool prim);
/* Arguments of a call or a macro's parameters, after the '('. */
int jp_arguments(struct parser *p, struct nlist *args, bool params);

#endif /* COLIBRI_JINJA_PARSER_H */
