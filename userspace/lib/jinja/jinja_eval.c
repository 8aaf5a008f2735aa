// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_eval.c - running the syntax tree: statements write into one output
 * buffer, expressions make values; and the public parse/render entry points.
 *
 * Scopes follow the reference: a for loop gets one scope for all its
 * iterations (so {% set %} inside a loop does not leak out), a macro call
 * gets a scope under the caller's, if blocks share their scope.  As in the
 * reference, {% break %} and {% continue %} discard what the current
 * iteration printed before them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_internal.h"

struct cb_jinja {
	struct jj_ctx c;		/* the template's arena and source */
	struct jj_node **body;
	size_t n;
};

static struct jj_env *new_env(struct jj_ctx *c, struct jj_env *parent)
{
	struct jj_env *e = jj_alloc(c, sizeof(*e));

	if (e)
		e->parent = parent;
	return e;
}

struct jj_val jj_lookup(struct jj_env *e, const char *name, size_t n)
{
	for (; e; e = e->parent) {
		struct jj_val *v = jj_map_get(&e->vars, name, n);

		if (v)
			return *v;
	}
	return jj_undef();
}

static int set_var(struct jj_ctx *c, struct jj_env *e, const char *name, size_t n,
		   struct jj_val v)
{
	return jj_map_set(c, &e->vars, name, n, v);
}

/* ---- expressions ----------------------------------------------------------- */

int jj_eval_args(struct jj_ctx *c, struct jj_node *const *list, size_t n, struct jj_env *e,
		 struct jj_args *args)
{
	size_t i;

	args->pos = n ? jj_alloc(c, n * sizeof(*args->pos)) : NULL;
	args->npos = 0;
	args->kw = (struct jj_map){ 0 };
	if (n && !args->pos)
		return -1;
	/* positional arguments are all evaluated before keyword values */
	for (i = 0; i < n; i++)
		if (list[i]->k != JN_KWARG && jj_eval(c, list[i], e, &args->pos[args->npos++]))
			return -1;
	for (i = 0; i < n; i++) {
		struct jj_val v;

		if (list[i]->k != JN_KWARG)
			continue;
		if (jj_map_get(&args->kw, list[i]->s, list[i]->n))
			return jj_fail(c, list[i]->pos, "keyword argument '%.*s' given twice",
				       (int)list[i]->n, list[i]->s);
		if (jj_eval(c, list[i]->a, e, &v) ||
		    jj_map_set(c, &args->kw, list[i]->s, list[i]->n, v))
			return -1;
	}
	return 0;
}

static int call_macro(struct jj_ctx *c, const struct jj_func *f, struct jj_args *args,
		      struct jj_env *caller, struct jj_val *out)
{
	const struct jj_node *m = f->macro;
	struct jj_env *e = new_env(c, caller);
	const struct jj_map *kw = &args->kw;
	bool *taken = jj_alloc(c, (kw->n + 1) * sizeof(*taken));
	bool *given = jj_alloc(c, (m->nlist2 + 1) * sizeof(*given));
	struct cb_sbuf b = { 0 };
	size_t i, j;
	int r;

	if (!e || !taken || !given)
		return -1;
	if (++c->calls > JJ_MAX_CALLS)
		return jj_fail(c, args->at, "macro calls nest deeper than %d", JJ_MAX_CALLS);
	/* bind every parameter first, then evaluate the defaults of the rest */
	for (i = 0; i < m->nlist2; i++) {
		const struct jj_node *p = m->list2[i];
		struct jj_val v = jj_undef();

		if (i < args->npos) {
			v = args->pos[i];
			given[i] = true;
		} else {
			for (j = 0; j < kw->n; j++)
				if (!taken[j] && kw->klen[j] == p->n &&
				    !memcmp(kw->key[j], p->s, p->n)) {
					v = kw->val[j];
					taken[j] = given[i] = true;
				}
		}
		if (set_var(c, e, p->s, p->n, v))
			return -1;
	}
	if (m->num) {
		struct jj_val rest = jj_new_map(c, JV_OBJECT);

		for (j = 0; j < kw->n; j++)
			if (!taken[j] && jj_map_set(c, rest.o, kw->key[j], kw->klen[j], kw->val[j]))
				return -1;
		if (!rest.o || set_var(c, e, "kwargs", 6, rest))
			return -1;
	} else {
		for (j = 0; j < kw->n; j++)
			if (!taken[j])
				return jj_fail(c, args->at,
					       "macro '%.*s' takes no keyword argument '%.*s'",
					       (int)m->n, m->s, (int)kw->klen[j], kw->key[j]);
	}
	if (m->flag) {
		struct jj_val va = jj_new_list(c, JV_ARRAY, 0);

		for (i = m->nlist2; i < args->npos; i++)
			if (jj_list_push(c, va.a, args->pos[i]))
				return -1;
		if (!va.a || set_var(c, e, "varargs", 7, va))
			return -1;
	} else if (args->npos > m->nlist2) {
		return jj_fail(c, args->at, "macro '%.*s' takes not more than %zu argument(s)",
			       (int)m->n, m->s, m->nlist2);
	}
	for (i = 0; i < m->nlist2; i++) {
		const struct jj_node *p = m->list2[i];
		struct jj_val v;

		if (p->k != JN_KWARG || given[i])
			continue;
		if (jj_eval(c, p->a, e, &v) || set_var(c, e, p->s, p->n, v))
			return -1;
	}
	r = jj_exec_block(c, m->list, m->nlist, e, &b);
	c->calls--;
	if (r == JJ_BREAK || r == JJ_CONTINUE)
		r = jj_fail(c, m->pos, "break or continue outside of a loop in macro '%.*s'",
			    (int)m->n, m->s);
	if (r) {
		free(b.p);
		return -1;
	}
	return jj_str_take(c, &b, out);
}

int jj_call(struct jj_ctx *c, const struct jj_val *fn, struct jj_args *args, struct jj_env *e,
	    struct jj_val *out)
{
	if (fn->k != JV_FUNC)
		return jj_fail(c, args->at, "cannot call %s", jj_kind_name(fn->k));
	if (fn->f->id == JB_MACRO)
		return call_macro(c, fn->f, args, e, out);
	return jj_call_builtin(c, fn->f, args, out);
}

/* The reference's slice(): Python semantics on the list (or the characters). */
static int eval_slice(struct jj_ctx *c, const struct jj_val *obj, const struct jj_node *s,
		      struct jj_env *e, struct jj_val *out)
{
	struct jj_val part[3];
	const struct jj_node *pn[3] = { s->a, s->b, s->c };
	double lim[3] = { 0 };
	size_t len, i, *cps = NULL;
	long long start, stop, step, k;
	int j;

	if (!jj_is_list(obj) && obj->k != JV_STR)
		return jj_fail(c, s->pos, "cannot slice %s", jj_kind_name(obj->k));
	for (j = 0; j < 3; j++) {
		part[j] = jj_undef();
		if (pn[j] && jj_eval(c, pn[j], e, &part[j]))
			return -1;
		if (part[j].k != JV_UNDEF && part[j].k != JV_INT)
			return jj_fail(c, s->pos, "slice bounds must be integers");
		lim[j] = part[j].num;
	}
	if (obj->k == JV_STR) {
		/* by code points, as Array.from(string) */
		cps = jj_alloc(c, (obj->n + 1) * sizeof(*cps));
		if (!cps)
			return -1;
		for (i = 0, len = 0; i < obj->n; len++) {
			uint32_t cp;

			cps[len] = i;
			i += jj_u8_get(obj->s + i, obj->n - i, &cp);
		}
		cps[len] = obj->n;
	} else {
		len = obj->a ? obj->a->n : 0;
	}
	step = part[2].k == JV_UNDEF ? 1 : (long long)lim[2];
	if (step == 0)
		return jj_fail(c, s->pos, "slice step cannot be zero");
	if (step > 0) {
		start = part[0].k == JV_UNDEF ? 0 : (long long)lim[0];
		stop = part[1].k == JV_UNDEF ? (long long)len : (long long)lim[1];
		start = start < 0 ? (start + (long long)len > 0 ? start + (long long)len : 0) :
			(start < (long long)len ? start : (long long)len);
		stop = stop < 0 ? (stop + (long long)len > 0 ? stop + (long long)len : 0) :
		       (stop < (long long)len ? stop : (long long)len);
	} else {
		start = part[0].k == JV_UNDEF ? (long long)len - 1 : (long long)lim[0];
		stop = part[1].k == JV_UNDEF ? -1 : (long long)lim[1];
		start = start < 0 ? (start + (long long)len > -1 ? start + (long long)len : -1) :
			(start < (long long)len - 1 ? start : (long long)len - 1);
		stop = stop < -1 ? (stop + (long long)len > -1 ? stop + (long long)len : -1) :
		       (stop < (long long)len - 1 ? stop : (long long)len - 1);
	}
	if (obj->k == JV_STR) {
		struct cb_sbuf b = { 0 };

		for (k = start; step > 0 ? k < stop : k > stop; k += step)
			if (cb_sbuf_add(&b, obj->s + cps[k], cps[k + 1] - cps[k])) {
				free(b.p);
				return jj_fail(c, s->pos, "out of memory");
			}
		return jj_str_take(c, &b, out);
	}
	*out = jj_new_list(c, JV_ARRAY, 0);
	for (k = start; step > 0 ? k < stop : k > stop; k += step)
		if (jj_list_push(c, out->a, obj->a->v[k]))
			return -1;
	return c->failed ? -1 : 0;
}

static int arith(struct jj_ctx *c, const struct jj_node *n, const struct jj_val *l,
		 const struct jj_val *r, struct jj_val *out)
{
	double a = l->num, b = r->num, x;
	bool fl = l->k == JV_FLOAT || r->k == JV_FLOAT;

	switch (n->op) {
	case JO_ADD: x = a + b; break;
	case JO_SUB: x = a - b; break;
	case JO_MUL: x = a * b; break;
	case JO_DIV: *out = jj_float(a / b); return 0;
	case JO_FLOORDIV: x = floor(a / b); break;
	case JO_MOD: x = fmod(a, b); break;
	case JO_LT: *out = jj_bool(a < b); return 0;
	case JO_GT: *out = jj_bool(a > b); return 0;
	case JO_LE: *out = jj_bool(a <= b); return 0;
	case JO_GE: *out = jj_bool(a >= b); return 0;
	default: return 1;
	}
	*out = fl ? jj_float(x) : jj_int(x);
	return 0;
}

static int concat(struct jj_ctx *c, const struct jj_val *l, const struct jj_val *r, uint32_t pos,
		  struct jj_val *out)
{
	struct cb_sbuf b = { 0 };

	if (jj_append_raw(c, &b, l, pos) || jj_append_raw(c, &b, r, pos)) {
		free(b.p);
		return -1;
	}
	return jj_str_take(c, &b, out);
}

static bool contains(const struct jj_val *hay, const struct jj_val *x)
{
	size_t i;

	if (jj_is_list(hay)) {
		for (i = 0; hay->a && i < hay->a->n; i++)
			if (jj_strict_eq(&hay->a->v[i], x))
				return true;
		return false;
	}
	if (hay->k == JV_STR)
		return x->n == 0 || (x->n <= hay->n && memmem(hay->s, hay->n, x->s, x->n));
	return jj_map_get(hay->o, x->s, x->n) != NULL;
}

static int binary(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e, struct jj_val *out)
{
	struct jj_val l, r;
	int eq;

	if (jj_eval(c, n->a, e, &l))
		return -1;
	if (n->op == JO_AND || n->op == JO_OR) {
		if (jj_truthy(&l) == (n->op == JO_OR)) {
			*out = l;
			return 0;
		}
		return jj_eval(c, n->b, e, out);
	}
	if (jj_eval(c, n->b, e, &r))
		return -1;
	if (n->op == JO_EQ || n->op == JO_NE) {
		eq = jj_loose_eq(c, &l, &r, n->pos);
		if (eq < 0)
			return -1;
		*out = jj_bool(n->op == JO_EQ ? eq : !eq);
		return 0;
	}
	if (l.k == JV_UNDEF || r.k == JV_UNDEF) {
		if (r.k == JV_UNDEF && (n->op == JO_IN || n->op == JO_NOT_IN)) {
			*out = jj_bool(n->op == JO_NOT_IN);
			return 0;
		}
		return jj_fail(c, n->pos, "operation on an undefined value");
	}
	if (l.k == JV_NULL || r.k == JV_NULL)
		return jj_fail(c, n->pos, "operation on none");
	if (n->op == JO_CONCAT)
		return concat(c, &l, &r, n->pos, out);
	if (n->op == JO_POW && (jj_is_num(&l) || l.k == JV_BOOL) && (jj_is_num(&r) || r.k == JV_BOOL)) {
		double a = l.k == JV_BOOL ? l.b : l.num, b = r.k == JV_BOOL ? r.b : r.num, x;

		if (a == 0 && b < 0)
			return jj_fail(c, n->pos, "0 cannot be raised to a negative power");
		x = pow(a, b);
		if (!isfinite(x))
			return jj_fail(c, n->pos, "the power is not a finite real number");
		*out = l.k == JV_FLOAT || r.k == JV_FLOAT || b < 0 ? jj_float(x) : jj_int(x);
		return 0;
	}
	if (jj_is_num(&l) && jj_is_num(&r)) {
		if (!arith(c, n, &l, &r, out))
			return 0;
	} else if (jj_is_list(&l) && jj_is_list(&r)) {
		if (n->op == JO_ADD) {
			size_t i;

			*out = jj_new_list(c, JV_ARRAY, l.a->n + r.a->n);
			for (i = 0; i < l.a->n; i++)
				if (jj_list_push(c, out->a, l.a->v[i]))
					return -1;
			for (i = 0; i < r.a->n; i++)
				if (jj_list_push(c, out->a, r.a->v[i]))
					return -1;
			return c->failed ? -1 : 0;
		}
	} else if (jj_is_list(&r) && (n->op == JO_IN || n->op == JO_NOT_IN)) {
		*out = jj_bool(contains(&r, &l) == (n->op == JO_IN));
		return 0;
	}
	if ((l.k == JV_STR || r.k == JV_STR) && n->op == JO_ADD)
		return concat(c, &l, &r, n->pos, out);
	if (l.k == JV_STR && (r.k == JV_STR || jj_is_obj(&r)) &&
	    (n->op == JO_IN || n->op == JO_NOT_IN)) {
		*out = jj_bool(contains(&r, &l) == (n->op == JO_IN));
		return 0;
	}
	return jj_fail(c, n->pos, "operator not defined between %s and %s",
		       jj_kind_name(l.k), jj_kind_name(r.k));
}

static int unary(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e, struct jj_val *out)
{
	struct jj_val v;
	double x;

	if (jj_eval(c, n->a, e, &v))
		return -1;
	if (n->op == JO_NOT) {
		*out = jj_bool(!jj_truthy(&v));
		return 0;
	}
	if (!jj_is_num(&v) && v.k != JV_BOOL)
		return jj_fail(c, n->pos, "unary %c of %s", n->op == JO_NEG ? '-' : '+',
			       jj_kind_name(v.k));
	x = v.k == JV_BOOL ? v.b : v.num;
	x = n->op == JO_NEG ? -1 * x : x;
	*out = v.k == JV_FLOAT ? jj_float(x) : jj_int(x);
	return 0;
}

static int eval_member(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e,
		       struct jj_val *out)
{
	struct jj_val obj, prop;

	if (jj_eval(c, n->a, e, &obj))
		return -1;
	if (n->flag && n->b->k == JN_SLICE)
		return eval_slice(c, &obj, n->b, e, out);
	if (n->flag) {
		if (jj_eval(c, n->b, e, &prop))
			return -1;
	} else if (n->b->k == JN_INT) {
		prop = jj_int(n->b->num);
	} else {
		prop = jj_str(n->b->s, n->b->n);
	}
	return jj_member(c, &obj, &prop, n->pos, out);
}

static int eval_literal_list(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e,
			     struct jj_val *out)
{
	size_t i;

	*out = jj_new_list(c, n->k == JN_TUPLE ? JV_TUPLE : JV_ARRAY, n->nlist);
	for (i = 0; i < n->nlist; i++) {
		struct jj_val v;

		if (jj_eval(c, n->list[i], e, &v) || jj_list_push(c, out->a, v))
			return -1;
	}
	return c->failed ? -1 : 0;
}

static int eval_object(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e,
		       struct jj_val *out)
{
	size_t i;

	*out = jj_new_map(c, JV_OBJECT);
	for (i = 0; i < n->nlist; i++) {
		struct jj_val k, v;

		if (jj_eval(c, n->list[i], e, &k))
			return -1;
		if (k.k != JV_STR)
			return jj_fail(c, n->list[i]->pos, "dict keys must be strings, not %s",
				       jj_kind_name(k.k));
		if (jj_eval(c, n->list2[i], e, &v) || jj_map_set(c, out->o, k.s, k.n, v))
			return -1;
	}
	return c->failed ? -1 : 0;
}

/*
 * Filter node @f on @v: its arguments (when it has parentheses) are
 * evaluated here, and the filter (jinja_filters.c) runs on values only.
 */
static int apply_filter(struct jj_ctx *c, const struct jj_node *f, struct jj_val *v,
			struct jj_env *e, struct jj_val *out)
{
	struct jj_args a;

	if (!f->flag)
		return jj_apply_filter(c, f, v, NULL, out);
	if (jj_eval_args(c, f->list, f->nlist, e, &a))
		return -1;
	a.at = f->pos;
	return jj_apply_filter(c, f, v, &a, out);
}

int jj_eval(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e, struct jj_val *out)
{
	struct jj_val v, fn;
	struct jj_args args;
	int r = 0;

	if (++c->depth > JJ_MAX_NEST)
		return jj_fail(c, n->pos, "evaluation nests deeper than %d", JJ_MAX_NEST);
	switch (n->k) {
	case JN_STR:
	case JN_TEXT:
		*out = jj_str(n->s, n->n);
		break;
	case JN_INT:
		*out = jj_int(n->num);
		break;
	case JN_FLOAT:
		*out = jj_float(n->num);
		break;
	case JN_ARRAY:
	case JN_TUPLE:
		r = eval_literal_list(c, n, e, out);
		break;
	case JN_OBJECT:
		r = eval_object(c, n, e, out);
		break;
	case JN_IDENT:
		*out = jj_lookup(e, n->s, n->n);
		break;
	case JN_MEMBER:
		r = eval_member(c, n, e, out);
		break;
	case JN_CALL:
		r = jj_eval_args(c, n->list, n->nlist, e, &args);
		args.at = n->a->pos;	/* errors point at what is called */
		if (!r)
			r = jj_eval(c, n->a, e, &fn);
		if (!r)
			r = jj_call(c, &fn, &args, e, out);
		break;
	case JN_UNARY:
		r = unary(c, n, e, out);
		break;
	case JN_BINARY:
		r = binary(c, n, e, out);
		break;
	case JN_FILTER:
		r = jj_eval(c, n->a, e, &v);
		if (!r)
			r = apply_filter(c, n, &v, e, out);
		break;
	case JN_TEST:
		r = jj_eval(c, n->a, e, &v);
		if (!r) {
			r = jj_test(c, n->s, n->n, &v, NULL, n->pos);
			if (r >= 0) {
				*out = jj_bool(n->flag ? !r : r);
				r = 0;
			}
		}
		break;
	case JN_SELECT:
		r = jj_eval(c, n->b, e, &v);
		if (!r && !jj_truthy(&v))
			*out = jj_undef();
		else if (!r)
			r = jj_eval(c, n->a, e, out);
		break;
	case JN_TERNARY:
		r = jj_eval(c, n->c, e, &v);
		if (!r)
			r = jj_eval(c, jj_truthy(&v) ? n->a : n->b, e, out);
		break;
	default:
		r = jj_fail(c, n->pos, "not an expression");
	}
	c->depth--;
	return r ? -1 : 0;
}

/* ---- statements -------------------------------------------------------------- */

static int assign(struct jj_ctx *c, const struct jj_node *target, struct jj_val v,
		  struct jj_env *e)
{
	size_t i;

	if (target->k == JN_IDENT)
		return set_var(c, e, target->s, target->n, v);
	if (target->k == JN_TUPLE) {
		if (!jj_is_list(&v))
			return jj_fail(c, target->pos, "cannot unpack %s", jj_kind_name(v.k));
		if (v.a->n != target->nlist)
			return jj_fail(c, target->pos, "too %s values to unpack (%zu for %zu)",
				       v.a->n < target->nlist ? "few" : "many", v.a->n,
				       target->nlist);
		for (i = 0; i < target->nlist; i++) {
			if (target->list[i]->k != JN_IDENT)
				return jj_fail(c, target->list[i]->pos,
					       "can only unpack into names");
			if (set_var(c, e, target->list[i]->s, target->list[i]->n, v.a->v[i]))
				return -1;
		}
		return 0;
	}
	if (target->k == JN_MEMBER) {
		struct jj_val obj;

		if (jj_eval(c, target->a, e, &obj))
			return -1;
		if (obj.k != JV_NS)
			return jj_fail(c, target->pos, "can only set attributes of a namespace(), "
				       "not of %s", jj_kind_name(obj.k));
		if (target->flag || target->b->k != JN_IDENT)
			return jj_fail(c, target->pos, "expected an attribute name");
		return jj_map_set(c, obj.o, target->b->s, target->b->n, v);
	}
	return jj_fail(c, target->pos, "cannot assign to this expression");
}

static int exec_for(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e,
		    struct cb_sbuf *out)
{
	struct jj_env *scope = new_env(c, e), *test_scope;
	struct jj_val it, *items, loop;
	size_t i, len, count = 0, mark;
	bool none = true;
	int r;

	if (!scope || jj_eval(c, n->b, scope, &it))
		return JJ_ERR;
	if (jj_is_obj(&it)) {
		/* a dict loops over its keys */
		struct jj_val keys = jj_new_list(c, JV_ARRAY, it.o->n);

		for (i = 0; i < it.o->n; i++)
			if (jj_list_push(c, keys.a, jj_str(it.o->key[i], it.o->klen[i])))
				return JJ_ERR;
		it = keys;
	} else if (it.k != JV_ARRAY && it.k != JV_TUPLE) {
		return jj_fail(c, n->b->pos, "cannot loop over %s", jj_kind_name(it.k));
	}
	len = it.a ? it.a->n : 0;
	items = jj_alloc(c, (len + 1) * sizeof(*items));
	if (!items)
		return JJ_ERR;
	for (i = 0; i < len; i++) {
		struct jj_val cur = it.a->v[i], t;

		/* as the reference: only lists unpack into loop tuples */
		if (n->a->k == JN_TUPLE && cur.k != JV_ARRAY)
			return jj_fail(c, n->a->pos, "cannot unpack %s", jj_kind_name(cur.k));
		if (n->c) {
			test_scope = new_env(c, scope);
			if (!test_scope || assign(c, n->a, cur, test_scope) ||
			    jj_eval(c, n->c, test_scope, &t))
				return JJ_ERR;
			if (!jj_truthy(&t))
				continue;
		}
		items[count++] = cur;
	}
	c->in_loop++;
	for (i = 0; i < count; i++) {
		loop = jj_new_map(c, JV_OBJECT);
		if (!loop.o ||
		    jj_map_set(c, loop.o, "index", 5, jj_int((double)i + 1)) ||
		    jj_map_set(c, loop.o, "index0", 6, jj_int((double)i)) ||
		    jj_map_set(c, loop.o, "revindex", 8, jj_int((double)(count - i))) ||
		    jj_map_set(c, loop.o, "revindex0", 9, jj_int((double)(count - i - 1))) ||
		    jj_map_set(c, loop.o, "first", 5, jj_bool(i == 0)) ||
		    jj_map_set(c, loop.o, "last", 4, jj_bool(i == count - 1)) ||
		    jj_map_set(c, loop.o, "length", 6, jj_int((double)count)) ||
		    jj_map_set(c, loop.o, "previtem", 8, i ? items[i - 1] : jj_undef()) ||
		    jj_map_set(c, loop.o, "nextitem", 8, i + 1 < count ? items[i + 1] : jj_undef()) ||
		    set_var(c, scope, "loop", 4, loop) || assign(c, n->a, items[i], scope))
			return JJ_ERR;
		mark = out->n;
		r = jj_exec_block(c, n->list, n->nlist, scope, out);
		if (r == JJ_ERR)
			return JJ_ERR;
		if (r == JJ_BREAK || r == JJ_CONTINUE) {
			out->n = mark;	/* the reference loses the iteration's output */
			if (out->p)
				out->p[mark] = 0;
			if (r == JJ_BREAK)
				break;
			continue;
		}
		none = false;
	}
	c->in_loop--;
	if (none)
		return jj_exec_block(c, n->list2, n->nlist2, scope, out) == JJ_ERR ? JJ_ERR : JJ_OK;
	return JJ_OK;
}

static int exec_one(struct jj_ctx *c, const struct jj_node *n, struct jj_env *e,
		    struct cb_sbuf *out)
{
	struct jj_val v;
	struct cb_sbuf b = { 0 };

	switch (n->k) {
	case JN_TEXT:
		if (out->n + n->n > JJ_MAX_OUT)
			return jj_fail(c, n->pos, "output longer than %u MiB", JJ_MAX_OUT >> 20);
		return cb_sbuf_add(out, n->s, n->n) ? jj_fail(c, n->pos, "out of memory") : JJ_OK;
	case JN_COMMENT:
		return JJ_OK;
	case JN_OUTPUT:
		if (jj_eval(c, n->a, e, &v))
			return JJ_ERR;
		return jj_append_text(c, out, &v, n->a->pos);
	case JN_IF:
		if (jj_eval(c, n->c, e, &v))
			return JJ_ERR;
		return jj_truthy(&v) ? jj_exec_block(c, n->list, n->nlist, e, out) :
				       jj_exec_block(c, n->list2, n->nlist2, e, out);
	case JN_FOR:
		return exec_for(c, n, e, out);
	case JN_SET:
		if (n->b) {
			if (jj_eval(c, n->b, e, &v))
				return JJ_ERR;
		} else {
			int r = jj_exec_block(c, n->list, n->nlist, e, &b);

			if (r) {
				free(b.p);
				return r;
			}
			if (jj_str_take(c, &b, &v))
				return JJ_ERR;
		}
		return assign(c, n->a, v, e) ? JJ_ERR : JJ_OK;
	case JN_MACRO:
		v = jj_func_val(c, JB_MACRO, jj_undef(), n, NULL);
		return !v.f || set_var(c, e, n->s, n->n, v) ? JJ_ERR : JJ_OK;
	case JN_BREAK:
	case JN_CONTINUE:
		if (!c->in_loop)
			return jj_fail(c, n->pos, "%s outside of a loop",
				       n->k == JN_BREAK ? "break" : "continue");
		return n->k == JN_BREAK ? JJ_BREAK : JJ_CONTINUE;
	case JN_FILTER_BLOCK: {
		int r = jj_exec_block(c, n->list, n->nlist, e, &b);
		struct jj_val res;

		if (r) {
			free(b.p);
			return r;
		}
		if (jj_str_take(c, &b, &v) || apply_filter(c, n->a, &v, e, &res))
			return JJ_ERR;
		return jj_append_text(c, out, &res, n->pos);
	}
	default:
		/* a bare expression cannot appear as a statement */
		return jj_fail(c, n->pos, "not a statement");
	}
}

int jj_exec_block(struct jj_ctx *c, struct jj_node *const *body, size_t n, struct jj_env *e,
		  struct cb_sbuf *out)
{
	size_t i;
	int r;

	if (++c->depth > JJ_MAX_NEST)
		return jj_fail(c, n ? body[0]->pos : 0, "template nests deeper than %d",
			       JJ_MAX_NEST);
	for (i = 0; i < n; i++) {
		r = exec_one(c, body[i], e, out);
		if (r) {
			c->depth--;
			return r;
		}
	}
	c->depth--;
	return JJ_OK;
}

/* ---- entry points ------------------------------------------------------------- */

struct cb_jinja *cb_jinja_parse(const char *src, size_t len, char *err, size_t errlen)
{
	struct cb_jinja *t = calloc(1, sizeof(*t));
	struct jj_tok *toks;
	size_t ntoks;
	char *copy;

	if (err && errlen)
		err[0] = 0;
	if (!t) {
		cb_set_err(err, errlen, "out of memory");
		return NULL;
	}
	t->c.err = err;
	t->c.errlen = errlen;
	copy = jj_strdup(&t->c, src, len);
	if (!copy)
		goto fail;
	t->c.src = copy;
	t->c.srclen = len;
	if (jj_lex(&t->c, &toks, &ntoks) || jj_parse(&t->c, toks, ntoks, &t->body, &t->n))
		goto fail;
	t->c.err = NULL;
	t->c.errlen = 0;
	return t;
fail:
	cb_jinja_free(t);
	return NULL;
}

void cb_jinja_free(struct cb_jinja *t)
{
	if (!t)
		return;
	jj_arena_free(&t->c.ar);
	free(t);
}

int cb_jinja_render(const struct cb_jinja *t, const cJSON *vars, char **out, size_t *outlen,
		    char *err, size_t errlen)
{
	struct jj_ctx c = { .src = t->c.src, .srclen = t->c.srclen, .err = err, .errlen = errlen };
	struct cb_sbuf b = { 0 };
	struct jj_env *g;
	const cJSON *it;
	int r = -1;

	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	g = new_env(&c, NULL);
	if (!g || jj_globals(&c, g))
		goto done;
	cJSON_ArrayForEach(it, vars) {
		struct jj_val v;

		c.depth = 0;
		if (!it->string)
			goto done;
		/* as the reference: the globals cannot be redefined */
		if (jj_map_get(&g->vars, it->string, strlen(it->string))) {
			jj_fail(&c, 0, "variable '%s' is a built-in name", it->string);
			goto done;
		}
		if (jj_from_json(&c, it, &v) || set_var(&c, g, it->string, strlen(it->string), v))
			goto done;
	}
	c.depth = 0;
	r = jj_exec_block(&c, t->body, t->n, g, &b);
	if (r == JJ_BREAK || r == JJ_CONTINUE)
		r = jj_fail(&c, 0, "break or continue outside of a loop");
	if (!r && cb_sbuf_reserve(&b, 0))
		r = jj_fail(&c, 0, "out of memory");
	if (!r)
		b.p[b.n] = 0;	/* also when nothing was printed */
done:
	jj_arena_free(&c.ar);
	if (r) {
		free(b.p);
		return -1;
	}
	*out = b.p;
	if (outlen)
		*outlen = b.n;
	return 0;
}
