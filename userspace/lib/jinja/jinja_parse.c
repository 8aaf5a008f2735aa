// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_parse.c - tokens to a syntax tree: the statements, on the token
 * helpers (jinja_parser.c) and the expressions (jinja_expr.c).  The grammar
 * is @huggingface/jinja's; expressions in precedence order, lowest first:
 *
 *   x if c else y, x if c      or      and      not
 *   in, not in, == != < > <= >=      + - ~      * / // %      **
 *   x is [not] test      x | filter[(args)]      unary + -
 *   calls, x.attr, x[i], x[a:b:c]      literals, names, ( ), [ ], { }
 *
 * Statements: if/elif/else, for/else, set (= or block), macro, filter
 * blocks, break, continue.  Everything else ({% include %}, {% call %},
 * {% raw %}, argument unpacking, tests with arguments...) is refused with
 * its name and position.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_parser.h"

/* {% name ... */
static bool is_stmt(const struct parser *p, const char *name)
{
	return jp_is(p, JT_OPEN_STMT) && jp_is_word(p, 1, name);
}

static int expect_word(struct parser *p, const char *w)
{
	if (!jp_is_word(p, 0, w)) {
		char what[32];

		snprintf(what, sizeof(what), "'%s'", w);
		return jp_unexpected(p, what);
	}
	p->i++;
	return 0;
}

static struct jj_node *any(struct parser *p);


/* Statements of a block, up to one of the given {% names %}. */
static int block(struct parser *p, struct nlist *body, const char *const *ends)
{
	for (;;) {
		const char *const *e;

		if (p->i >= p->n) {
			char what[64];

			snprintf(what, sizeof(what), "{%% %s %%}", ends[0]);
			return jp_unexpected(p, what);
		}
		for (e = ends; *e; e++)
			if (is_stmt(p, *e))
				return 0;
		if (jp_push(p, body, any(p)))
			return -1;
	}
}

static struct jj_node *if_stmt(struct parser *p, uint32_t at)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	static const char *const endif[] = { "endif", NULL };
	struct jj_node *n = jp_node(p, JN_IF, at);
	struct nlist body = { 0 }, alt = { 0 };

	if (!n || !jp_nest(p))
		return NULL;
	n->c = jp_expression(p);
	if (!n->c || jp_expect(p, JT_CLOSE_STMT) || block(p, &body, ends))
		return NULL;
	if (is_stmt(p, "elif")) {
		uint32_t e = p->t[p->i + 1].pos;

		p->i += 2;
		if (jp_push(p, &alt, if_stmt(p, e)))
			return NULL;
	} else if (is_stmt(p, "else")) {
		p->i += 2;
		if (jp_expect(p, JT_CLOSE_STMT) || block(p, &alt, endif))
			return NULL;
	}
	n->list = body.v;
	n->nlist = body.n;
	n->list2 = alt.v;
	n->nlist2 = alt.n;
	p->depth--;
	return n;
}

static struct jj_node *for_stmt(struct parser *p, uint32_t at)
{
	static const char *const ends[] = { "endfor", "else", NULL };
	static const char *const endfor[] = { "endfor", NULL };
	struct jj_node *n = jp_node(p, JN_FOR, at), *it;
	struct nlist body = { 0 }, alt = { 0 };

	if (!n || !jp_nest(p))
		return NULL;
	n->a = jp_sequence(p, true);
	if (!n->a)
		return NULL;
	if (n->a->k != JN_IDENT && n->a->k != JN_TUPLE) {
		jj_fail(p->c, n->a->pos, "expected a name or a tuple of names to loop with");
		return NULL;
	}
	if (expect_word(p, "in"))
		return NULL;
	it = jp_expression(p);
	if (!it)
		return NULL;
	if (it->k == JN_SELECT) {	/* for x in xs if cond */
		n->b = it->a;
		n->c = it->b;
	} else {
		n->b = it;
	}
	if (jp_expect(p, JT_CLOSE_STMT) || block(p, &body, ends))
		return NULL;
	if (is_stmt(p, "else")) {
		p->i += 2;
		if (jp_expect(p, JT_CLOSE_STMT) || block(p, &alt, endfor))
			return NULL;
	}
	n->list = body.v;
	n->nlist = body.n;
	n->list2 = alt.v;
	n->nlist2 = alt.n;
	p->depth--;
	return n;
}

static struct jj_node *set_stmt(struct parser *p, uint32_t at)
{
	static const char *const ends[] = { "endset", NULL };
	struct jj_node *n = jp_node(p, JN_SET, at);
	struct nlist body = { 0 };

	if (!n)
		return NULL;
	n->a = jp_sequence(p, false);
	if (!n->a)
		return NULL;
	if (jp_is(p, JT_EQUALS)) {
		p->i++;
		n->b = jp_sequence(p, false);
		if (!n->b)
			return NULL;
	} else {
		if (jp_expect(p, JT_CLOSE_STMT) || block(p, &body, ends))
			return NULL;
		p->i++;		/* {% */
		if (expect_word(p, "endset"))
			return NULL;
		n->list = body.v;
		n->nlist = body.n;
	}
	return jp_expect(p, JT_CLOSE_STMT) ? NULL : n;
}

/* Does @n (a macro body) read the name @w before setting it?  (kwargs/varargs) */
static bool reads_name(const struct jj_node *n, const char *w)
{
	size_t k, len = strlen(w);

	if (!n)
		return false;
	if (n->k == JN_IDENT && n->n == len && !memcmp(n->s, w, len))
		return true;
	if (n->k == JN_MACRO)
		return false;	/* a nested macro has its own */
	if (n->k != JN_MEMBER || n->flag || n->b->k != JN_IDENT)
		if (reads_name(n->b, w))
			return true;
	if (reads_name(n->a, w) || reads_name(n->c, w))
		return true;
	for (k = 0; k < n->nlist; k++)
		if (reads_name(n->list[k], w))
			return true;
	for (k = 0; k < n->nlist2; k++)
		if (reads_name(n->list2[k], w))
			return true;
	return false;
}

static struct jj_node *macro_stmt(struct parser *p, uint32_t at)
{
	static const char *const ends[] = { "endmacro", NULL };
	struct jj_node *n = jp_node(p, JN_MACRO, at), *name;
	struct nlist params = { 0 }, body = { 0 };
	size_t k;

	if (!n || !jp_nest(p))
		return NULL;
	name = jp_primary(p);
	if (!name)
		return NULL;
	if (name->k != JN_IDENT) {
		jj_fail(p->c, name->pos, "expected the macro's name");
		return NULL;
	}
	n->s = name->s;
	n->n = name->n;
	if (jp_expect(p, JT_LPAREN) || jp_arguments(p, &params, true) || jp_expect(p, JT_RPAREN) ||
	    jp_expect(p, JT_CLOSE_STMT) || block(p, &body, ends))
		return NULL;
	n->list = body.v;
	n->nlist = body.n;
	n->list2 = params.v;
	n->nlist2 = params.n;
	for (k = 0; k < body.n; k++) {
		n->flag |= reads_name(body.v[k], "varargs");
		if (reads_name(body.v[k], "kwargs"))
			n->num = 1;
	}
	p->depth--;
	return n;
}

static struct jj_node *filter_block(struct parser *p, uint32_t at)
{
	static const char *const ends[] = { "endfilter", NULL };
	struct jj_node *n = jp_node(p, JN_FILTER_BLOCK, at), *f, *name;
	struct nlist body = { 0 }, args = { 0 };

	if (!n || !jp_nest(p))
		return NULL;
	name = jp_primary(p);
	if (!name)
		return NULL;
	if (name->k != JN_IDENT) {
		jj_fail(p->c, name->pos, "expected a filter name");
		return NULL;
	}
	f = jp_node(p, JN_FILTER, name->pos);
	if (!f)
		return NULL;
	f->s = name->s;
	f->n = name->n;
	if (jp_is(p, JT_LPAREN)) {
		p->i++;
		if (jp_arguments(p, &args, false) || jp_expect(p, JT_RPAREN))
			return NULL;
		f->list = args.v;
		f->nlist = args.n;
		f->flag = true;
	}
	if (jp_expect(p, JT_CLOSE_STMT) || block(p, &body, ends))
		return NULL;
	n->a = f;
	n->list = body.v;
	n->nlist = body.n;
	p->depth--;
	return n;
}

/* {% name ... %} */
static struct jj_node *statement(struct parser *p)
{
	static const char *const unsupported[] = {
		"include", "import", "from", "extends", "block", "call", "raw", "with",
		"do", "autoescape", "trans", NULL,
	};
	const struct jj_tok *t;
	struct jj_node *n;
	const char *end = NULL;
	size_t k;

	p->i++;		/* {% */
	if (!jp_is(p, JT_IDENT)) {
		jp_unexpected(p, "a statement name");
		return NULL;
	}
	t = &p->t[p->i++];
#define NAMED(w) (t->n == strlen(w) && !memcmp(t->s, w, t->n))
	if (NAMED("if")) {
		n = if_stmt(p, t->pos);
		end = "endif";
	} else if (NAMED("for")) {
		n = for_stmt(p, t->pos);
		end = "endfor";
	} else if (NAMED("set")) {
		return set_stmt(p, t->pos);
	} else if (NAMED("macro")) {
		n = macro_stmt(p, t->pos);
		end = "endmacro";
	} else if (NAMED("filter")) {
		n = filter_block(p, t->pos);
		end = "endfilter";
	} else if (NAMED("break") || NAMED("continue")) {
		n = jp_node(p, NAMED("break") ? JN_BREAK : JN_CONTINUE, t->pos);
		return n && !jp_expect(p, JT_CLOSE_STMT) ? n : NULL;
	} else {
		for (k = 0; unsupported[k]; k++)
			if (NAMED(unsupported[k])) {
				jj_fail(p->c, t->pos, "'%s' is not supported", unsupported[k]);
				return NULL;
			}
		jj_fail(p->c, t->pos, "unknown statement '%.*s'", (int)t->n, t->s);
		return NULL;
	}
#undef NAMED
	if (!n || jp_expect(p, JT_OPEN_STMT) || expect_word(p, end) || jp_expect(p, JT_CLOSE_STMT))
		return NULL;
	return n;
}

static struct jj_node *any(struct parser *p)
{
	const struct jj_tok *t = &p->t[p->i];
	struct jj_node *n;

	switch (t->k) {
	case JT_COMMENT:
		p->i++;
		return jp_node(p, JN_COMMENT, t->pos);
	case JT_TEXT:
		p->i++;
		n = jp_node(p, JN_TEXT, t->pos);
		if (n) {
			n->s = t->s;
			n->n = t->n;
		}
		return n;
	case JT_OPEN_STMT:
		return statement(p);
	case JT_OPEN_EXPR:
		p->i++;
		n = jp_node(p, JN_OUTPUT, t->pos);
		if (!n)
			return NULL;
		n->a = jp_expression(p);
		if (!n->a || jp_expect(p, JT_CLOSE_EXPR))
			return NULL;
		return n;
	default:
		jj_fail(p->c, t->pos, "unexpected %s outside of {{ }} or {%% %%}",
			jp_kind_name(t->k));
		return NULL;
	}
}

int jj_parse(struct jj_ctx *c, const struct jj_tok *toks, size_t ntoks,
	     struct jj_node ***body, size_t *nbody)
{
	struct parser p = { .c = c, .t = toks, .n = ntoks };
	struct nlist l = { 0 };

	while (p.i < p.n)
		if (jp_push(&p, &l, any(&p)))
			return -1;
	*body = l.v;
	*nbody = l.n;
	return 0;
}

