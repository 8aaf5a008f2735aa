// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_expr.c - the expression half of the parser (precedence climbing as
 * @huggingface/jinja does it; the table is at the top of jinja_parse.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_parser.h"

static struct jj_node *call(struct parser *p, struct jj_node *callee);

int jp_arguments(struct parser *p, struct nlist *args, bool params)
{
	bool kw_seen = false;
	size_t k;

	while (!jp_is(p, JT_RPAREN)) {
		struct jj_node *a;
		uint32_t at = jp_pos(p);

		if (jp_is(p, JT_POW) || (jp_is(p, JT_MUL) && p->t[p->i].n == 1 && p->t[p->i].s[0] == '*'))
			return jj_fail(p->c, at, "argument unpacking (* and **) is not supported");
		a = jp_expression(p);
		if (!a)
			return -1;
		if (jp_is(p, JT_EQUALS)) {
			struct jj_node *kw;

			p->i++;
			if (a->k != JN_IDENT)
				return jj_fail(p->c, at, params ?
					       "expected a name for a parameter" :
					       "expected a name for a keyword argument");
			kw = jp_node(p, JN_KWARG, at);
			if (!kw)
				return -1;
			kw->s = a->s;
			kw->n = a->n;
			kw->a = jp_expression(p);
			if (!kw->a)
				return -1;
			a = kw;
			kw_seen = true;
		} else if (kw_seen) {
			return jj_fail(p->c, at, params ?
				       "a parameter without default follows one with a default" :
				       "a positional argument follows a keyword argument");
		}
		if (params) {
			if (a->k != JN_IDENT && a->k != JN_KWARG)
				return jj_fail(p->c, at, "expected a name for a parameter");
			for (k = 0; k < args->n; k++)
				if (args->v[k]->n == a->n && !memcmp(args->v[k]->s, a->s, a->n))
					return jj_fail(p->c, at, "duplicate parameter '%.*s'",
						       (int)a->n, a->s);
		}
		if (jp_push(p, args, a))
			return -1;
		if (jp_is(p, JT_COMMA))
			p->i++;
	}
	return 0;
}

static struct jj_node *member(struct parser *p, struct jj_node *obj)
{
	while (obj && (jp_is(p, JT_DOT) || jp_is(p, JT_LBRACKET))) {
		bool computed = jp_is(p, JT_LBRACKET);
		uint32_t at = jp_pos(p);
		struct jj_node *m = jp_node(p, JN_MEMBER, at), *parts[3] = { NULL }, *prop;
		int np = 0;
		bool slice = false;

		p->i++;
		if (!m)
			return NULL;
		m->a = obj;
		m->flag = computed;
		if (!computed) {
			prop = jp_primary(p);
			if (!prop)
				return NULL;
			if (prop->k != JN_IDENT && prop->k != JN_INT) {
				jj_fail(p->c, prop->pos, "expected a name or an integer after '.'");
				return NULL;
			}
			m->b = prop;
			obj = m;
			continue;
		}
		while (!jp_is(p, JT_RBRACKET)) {
			if (p->i >= p->n) {
				jp_unexpected(p, "']'");
				return NULL;
			}
			if (np == 3) {
				jj_fail(p->c, at, "a slice takes at most three parts");
				return NULL;
			}
			if (jp_is(p, JT_COLON)) {
				parts[np++] = NULL;
				p->i++;
				slice = true;
				continue;
			}
			parts[np] = jp_expression(p);
			if (!parts[np++])
				return NULL;
			if (jp_is(p, JT_COLON)) {
				p->i++;
				slice = true;
			}
		}
		if (!np) {
			jj_fail(p->c, at, "expected an index or a slice inside [ ]");
			return NULL;
		}
		p->i++;		/* ] */
		if (slice) {
			prop = jp_node(p, JN_SLICE, at);
			if (!prop)
				return NULL;
			prop->a = parts[0];
			prop->b = parts[1];
			prop->c = parts[2];
		} else {
			prop = parts[0];
		}
		m->b = prop;
		obj = m;
	}
	return obj;
}

static struct jj_node *call(struct parser *p, struct jj_node *callee)
{
	struct jj_node *n = jp_node(p, JN_CALL, jp_pos(p));
	struct nlist args = { 0 };

	if (!n || jp_expect(p, JT_LPAREN) || jp_arguments(p, &args, false) || jp_expect(p, JT_RPAREN))
		return NULL;
	n->a = callee;
	n->list = args.v;
	n->nlist = args.n;
	n = member(p, n);
	if (n && jp_is(p, JT_LPAREN))
		n = call(p, n);
	return n;
}

/* a, b, c as a tuple (or just a); @prim: targets of for (primaries only). */
struct jj_node *jp_sequence(struct parser *p, bool prim)
{
	struct jj_node *first = prim ? jp_primary(p) : jp_expression(p), *t;
	struct nlist l = { 0 };

	if (!first || !jp_is(p, JT_COMMA))
		return first;
	t = jp_node(p, JN_TUPLE, first->pos);
	if (!t || jp_push(p, &l, first))
		return NULL;
	while (jp_is(p, JT_COMMA)) {
		p->i++;
		if (jp_push(p, &l, prim ? jp_primary(p) : jp_expression(p)))
			return NULL;
	}
	t->list = l.v;
	t->nlist = l.n;
	return t;
}

static struct jj_node *number(struct parser *p, const struct jj_tok *t)
{
	char buf[64];
	struct jj_node *n;
	bool dot = memchr(t->s, '.', t->n) != NULL;

	if (t->n >= sizeof(buf)) {
		jj_fail(p->c, t->pos, "number literal too long");
		return NULL;
	}
	memcpy(buf, t->s, t->n);
	buf[t->n] = 0;
	n = jp_node(p, dot ? JN_FLOAT : JN_INT, t->pos);
	if (n)
		n->num = strtod(buf, NULL);
	return n;
}

struct jj_node *jp_primary(struct parser *p)
{
	const struct jj_tok *t;
	struct jj_node *n;
	struct nlist a = { 0 }, b = { 0 };

	if (p->i >= p->n) {
		jp_unexpected(p, "an expression");
		return NULL;
	}
	if (!jp_nest(p))
		return NULL;
	t = &p->t[p->i++];
	switch (t->k) {
	case JT_NUM:
		n = number(p, t);
		break;
	case JT_STR: {
		struct cb_sbuf s = { 0 };

		n = jp_node(p, JN_STR, t->pos);
		if (!n)
			break;
		n->s = t->s;
		n->n = t->n;
		if (!jp_is(p, JT_STR))
			break;
		/* adjacent literals concatenate */
		if (cb_sbuf_add(&s, t->s, t->n))
			goto oom;
		while (jp_is(p, JT_STR)) {
			if (cb_sbuf_add(&s, p->t[p->i].s, p->t[p->i].n)) {
				free(s.p);
				goto oom;
			}
			p->i++;
		}
		n->s = jj_strdup(p->c, s.p, s.n);
		n->n = s.n;
		free(s.p);
		if (!n->s)
			n = NULL;
		break;
	}
	case JT_IDENT:
		n = jp_node(p, JN_IDENT, t->pos);
		if (n) {
			n->s = t->s;
			n->n = t->n;
		}
		break;
	case JT_LPAREN:
		n = jp_sequence(p, false);
		if (n && jp_expect(p, JT_RPAREN))
			n = NULL;
		break;
	case JT_LBRACKET:
		n = jp_node(p, JN_ARRAY, t->pos);
		while (n && !jp_is(p, JT_RBRACKET)) {
			if (p->i >= p->n) {
				jp_unexpected(p, "']'");
				return NULL;
			}
			if (jp_push(p, &a, jp_expression(p)))
				return NULL;
			if (jp_is(p, JT_COMMA))
				p->i++;
		}
		if (!n)
			break;
		p->i++;
		n->list = a.v;
		n->nlist = a.n;
		break;
	case JT_LBRACE:
		n = jp_node(p, JN_OBJECT, t->pos);
		while (n && !jp_is(p, JT_RBRACE)) {
			if (p->i >= p->n) {
				jp_unexpected(p, "'}'");
				return NULL;
			}
			if (jp_push(p, &a, jp_expression(p)) || jp_expect(p, JT_COLON) ||
			    jp_push(p, &b, jp_expression(p)))
				return NULL;
			if (jp_is(p, JT_COMMA))
				p->i++;
		}
		if (!n)
			break;
		p->i++;
		n->list = a.v;
		n->nlist = a.n;
		n->list2 = b.v;
		n->nlist2 = b.n;
		break;
	default:
		p->i--;
		jp_unexpected(p, "an expression");
		return NULL;
	}
	p->depth--;
	return n;
oom:
	jj_fail(p->c, t->pos, "out of memory");
	return NULL;
}

static struct jj_node *unary_sign(struct parser *p)
{
	struct jj_node *n;

	if (p->i < p->n && (p->t[p->i].k == JT_UNARY || p->t[p->i].k == JT_ADD) &&
	    p->t[p->i].n == 1 && (p->t[p->i].s[0] == '-' || p->t[p->i].s[0] == '+')) {
		if (!jp_nest(p))
			return NULL;
		n = jp_node(p, JN_UNARY, jp_pos(p));
		if (!n)
			return NULL;
		n->op = p->t[p->i].s[0] == '-' ? JO_NEG : JO_POS;
		p->i++;
		n->a = unary_sign(p);
		p->depth--;
		return n->a ? n : NULL;
	}
	n = member(p, jp_primary(p));
	if (n && jp_is(p, JT_LPAREN))
		n = call(p, n);
	return n;
}

static struct jj_node *filter_expr(struct parser *p)
{
	struct jj_node *operand = unary_sign(p);

	while (operand && jp_is(p, JT_PIPE)) {
		struct jj_node *f, *name;

		p->i++;
		name = jp_primary(p);
		if (!name)
			return NULL;
		if (name->k != JN_IDENT) {
			jj_fail(p->c, name->pos, "expected a filter name after '|'");
			return NULL;
		}
		f = jp_node(p, JN_FILTER, name->pos);
		if (!f)
			return NULL;
		f->s = name->s;
		f->n = name->n;
		f->a = operand;
		if (jp_is(p, JT_LPAREN)) {
			struct nlist args = { 0 };

			p->i++;
			if (jp_arguments(p, &args, false) || jp_expect(p, JT_RPAREN))
				return NULL;
			f->list = args.v;
			f->nlist = args.n;
			f->flag = true;
			if (jp_is(p, JT_DOT) || jp_is(p, JT_LBRACKET) || jp_is(p, JT_LPAREN)) {
				jj_fail(p->c, jp_pos(p), "a member or call after a filter call "
					"needs parentheses around the filter");
				return NULL;
			}
		}
		operand = f;
	}
	return operand;
}

static struct jj_node *test_expr(struct parser *p)
{
	struct jj_node *operand = filter_expr(p);

	while (operand && jp_is_word(p, 0, "is")) {
		struct jj_node *t, *name;
		bool neg;

		p->i++;
		neg = jp_is_word(p, 0, "not");
		p->i += neg;
		name = jp_primary(p);
		if (!name)
			return NULL;
		if (name->k != JN_IDENT) {
			jj_fail(p->c, name->pos, "expected a test name after 'is'");
			return NULL;
		}
		if (jp_is(p, JT_LPAREN) || (p->i < p->n && (p->t[p->i].k == JT_STR ||
							  p->t[p->i].k == JT_NUM))) {
			jj_fail(p->c, name->pos, "test '%.*s' with an argument is not supported",
				(int)name->n, name->s);
			return NULL;
		}
		t = jp_node(p, JN_TEST, name->pos);
		if (!t)
			return NULL;
		t->s = name->s;
		t->n = name->n;
		t->flag = neg;
		t->a = operand;
		operand = t;
	}
	return operand;
}

static struct jj_node *binary(struct parser *p, struct jj_node *l, enum jj_op op,
			      struct jj_node *(*next)(struct parser *), uint32_t at)
{
	struct jj_node *n = jp_node(p, JN_BINARY, at);

	if (!n || !l)
		return NULL;
	n->op = op;
	n->a = l;
	n->b = next(p);
	return n->b ? n : NULL;
}

static enum jj_op op_of(const struct jj_tok *t)
{
	static const struct {
		const char *s;
		enum jj_op op;
	} ops[] = {
		{ "==", JO_EQ }, { "!=", JO_NE }, { "<", JO_LT }, { ">", JO_GT }, { "<=", JO_LE },
		{ ">=", JO_GE }, { "+", JO_ADD }, { "-", JO_SUB }, { "~", JO_CONCAT },
		{ "*", JO_MUL }, { "/", JO_DIV }, { "//", JO_FLOORDIV }, { "%", JO_MOD },
		{ "**", JO_POW },
	};
	size_t k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (t->n == strlen(ops[k].s) && !memcmp(t->s, ops[k].s, t->n))
			return ops[k].op;
	return JO_NONE;
}

static struct jj_node *power(struct parser *p)
{
	struct jj_node *l = test_expr(p);

	while (l && jp_is(p, JT_POW)) {
		uint32_t at = jp_pos(p);

		p->i++;
		l = binary(p, l, JO_POW, test_expr, at);
	}
	return l;
}

static struct jj_node *multiplicative(struct parser *p)
{
	struct jj_node *l = power(p);

	while (l && jp_is(p, JT_MUL)) {
		uint32_t at = jp_pos(p);
		enum jj_op op = op_of(&p->t[p->i++]);

		l = binary(p, l, op, power, at);
	}
	return l;
}

static struct jj_node *additive(struct parser *p)
{
	struct jj_node *l = multiplicative(p);

	while (l && jp_is(p, JT_ADD)) {
		uint32_t at = jp_pos(p);
		enum jj_op op = op_of(&p->t[p->i++]);

		l = binary(p, l, op, multiplicative, at);
	}
	return l;
}

static struct jj_node *comparison(struct parser *p)
{
	struct jj_node *l = additive(p);

	while (l) {
		uint32_t at = jp_pos(p);
		enum jj_op op;

		if (jp_is_word(p, 0, "not") && jp_is_word(p, 1, "in")) {
			op = JO_NOT_IN;
			p->i += 2;
		} else if (jp_is_word(p, 0, "in")) {
			op = JO_IN;
			p->i++;
		} else if (jp_is(p, JT_CMP)) {
			op = op_of(&p->t[p->i++]);
		} else {
			break;
		}
		l = binary(p, l, op, additive, at);
	}
	return l;
}

static struct jj_node *logical_not(struct parser *p)
{
	struct jj_node *n = NULL;

	/* as the reference: "not not x" keeps only the last "not" */
	while (jp_is_word(p, 0, "not")) {
		uint32_t at = jp_pos(p);

		if (!jp_nest(p))
			return NULL;
		p->i++;
		n = jp_node(p, JN_UNARY, at);
		if (!n)
			return NULL;
		n->op = JO_NOT;
		n->a = logical_not(p);
		p->depth--;
		if (!n->a)
			return NULL;
	}
	return n ? n : comparison(p);
}

static struct jj_node *logical_and(struct parser *p)
{
	struct jj_node *l = logical_not(p);

	while (l && jp_is_word(p, 0, "and")) {
		uint32_t at = jp_pos(p);

		p->i++;
		l = binary(p, l, JO_AND, logical_not, at);
	}
	return l;
}

static struct jj_node *logical_or(struct parser *p)
{
	struct jj_node *l = logical_and(p);

	while (l && jp_is_word(p, 0, "or")) {
		uint32_t at = jp_pos(p);

		p->i++;
		l = binary(p, l, JO_OR, logical_and, at);
	}
	return l;
}

struct jj_node *jp_expression(struct parser *p)
{
	struct jj_node *a, *n;
	uint32_t at;

	if (!jp_nest(p))
		return NULL;
	a = logical_or(p);
	if (!a || !jp_is_word(p, 0, "if")) {
		p->depth--;
		return a;
	}
	at = jp_pos(p);
	p->i++;
	n = jp_node(p, JN_SELECT, at);
	if (!n)
		return NULL;
	n->a = a;
	n->b = logical_or(p);
	if (!n->b)
		return NULL;
	if (jp_is_word(p, 0, "else")) {
		p->i++;
		n->k = JN_TERNARY;
		n->c = n->b;
		n->b = jp_expression(p);
		if (!n->b)
			return NULL;
	}
	p->depth--;
	return n;
}
