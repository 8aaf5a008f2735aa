// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_filters.c - the filters (x | name, x | name(args)) and tests
 * (x is name) of the reference, per operand type as it defines them:
 *
 *   any:     safe, tojson[(indent, ensure_ascii, separators)], default(v, boolean)
 *   list:    list first last length reverse sort[(reverse, case_sensitive,
 *            attribute)] join[(sep)] string unique selectattr rejectattr
 *            map(attribute=, default=)
 *   string:  length upper lower title capitalize trim indent[(width, first,
 *            blank)] join string int[(default)] float[(default)] replace(...)
 *   number:  abs int float string           boolean: bool int float string
 *   dict:    items length, and its methods (get, keys, values, dictsort)
 *
 * A filter the reference does not have for a type is refused by name.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_internal.h"

static bool named(const char *s, size_t n, const char *w)
{
	return n == strlen(w) && !memcmp(s, w, n);
}

/* Positional argument i, else keyword @kw, else NULL. */
static const struct jj_val *arg(const struct jj_args *a, size_t i, const char *kw)
{
	if (i < a->npos)
		return &a->pos[i];
	return kw ? jj_map_get(&a->kw, kw, strlen(kw)) : NULL;
}

static int want_bool(struct jj_ctx *c, const struct jj_val *v, bool def, uint32_t pos,
		     const char *what, bool *out)
{
	if (!v) {
		*out = def;
		return 0;
	}
	if (v->k != JV_BOOL)
		return jj_fail(c, pos, "%s must be a boolean", what);
	*out = v->b;
	return 0;
}

/* JavaScript's parseInt(s, 10) / parseFloat(s); false for NaN. */
static bool parse_number(const char *s, size_t n, bool integer, double *out)
{
	char buf[400];
	size_t i = 0;
	bool digits = false;

	jj_trim(&s, &n, true, false);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (i < n && (buf[i] == '+' || buf[i] == '-'))
		i++;
	if (!integer && !strncmp(buf + i, "Infinity", 8)) {
		*out = buf[0] == '-' ? -INFINITY : INFINITY;
		return true;
	}
	while (i < n && buf[i] >= '0' && buf[i] <= '9') {
		i++;
		digits = true;
	}
	if (!integer && i < n && buf[i] == '.') {
		i++;
		while (i < n && buf[i] >= '0' && buf[i] <= '9') {
			i++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (!integer && i < n && (buf[i] == 'e' || buf[i] == 'E')) {
		size_t j = i + 1;

		if (j < n && (buf[j] == '+' || buf[j] == '-'))
			j++;
		if (j < n && buf[j] >= '0' && buf[j] <= '9') {
			while (j < n && buf[j] >= '0' && buf[j] <= '9')
				j++;
			i = j;
		}
	}
	buf[i] = 0;
	*out = strtod(buf, NULL);
	return true;
}

/* One element of a join: JavaScript's Array.prototype.join of raw values. */
static int join_item(struct jj_ctx *c, struct cb_sbuf *b, const struct jj_val *v, uint32_t pos)
{
	if (v->k == JV_NULL || v->k == JV_UNDEF)
		return 0;
	return jj_append_raw(c, b, v, pos);
}

static int join(struct jj_ctx *c, const struct jj_val *v, const char *sep, size_t sepn,
		uint32_t pos, struct jj_val *out)
{
	struct cb_sbuf b = { 0 };
	size_t i, l;
	uint32_t cp;
	int r = 0;

	if (v->k == JV_STR) {
		for (i = 0; i < v->n && !r; i += l) {
			l = jj_u8_get(v->s + i, v->n - i, &cp);
			if (i)
				r = cb_sbuf_add(&b, sep, sepn);
			if (!r)
				r = cb_sbuf_add(&b, v->s + i, l);
		}
		if (r)
			r = jj_fail(c, pos, "out of memory");
	} else {
		for (i = 0; i < v->a->n && !r; i++) {
			if (i && cb_sbuf_add(&b, sep, sepn))
				r = jj_fail(c, pos, "out of memory");
			if (!r)
				r = join_item(c, &b, &v->a->v[i], pos);
		}
	}
	if (r) {
		free(b.p);
		return -1;
	}
	return jj_str_take(c, &b, out);
}

static int indent(struct jj_ctx *c, const struct jj_val *v, long width, bool first, bool blank,
		  uint32_t pos, struct jj_val *out)
{
	struct cb_sbuf b = { 0 };
	size_t i = 0, line = 0;
	long k;
	int r = 0;

	if (width < 0 || width > 4096)
		width = width < 0 ? 0 : 4096;
	while (!r) {
		const char *nl = memchr(v->s + i, '\n', v->n - i);
		size_t end = nl ? (size_t)(nl - v->s) : v->n;

		if ((first || line) && (blank || end > i))
			for (k = 0; k < width && !r; k++)
				r = cb_sbuf_add(&b, " ", 1);
		if (!r)
			r = cb_sbuf_add(&b, v->s + i, end - i);
		if (!nl)
			break;
		if (!r)
			r = cb_sbuf_add(&b, "\n", 1);
		i = end + 1;
		line++;
	}
	if (r) {
		free(b.p);
		return jj_fail(c, pos, "out of memory");
	}
	return jj_str_take(c, &b, out);
}

/* Stable merge sort of @v (n items) with jj_compare; -1 on a type error. */
struct sort_key {
	struct jj_val item, key;
};

static int merge_sort(struct jj_ctx *c, struct sort_key *v, struct sort_key *tmp, size_t n,
		      bool cs, bool rev, uint32_t pos)
{
	size_t h = n / 2, i = 0, j = h, o = 0;

	if (n < 2)
		return 0;
	if (merge_sort(c, v, tmp, h, cs, rev, pos) ||
	    merge_sort(c, v + h, tmp, n - h, cs, rev, pos))
		return -1;
	while (i < h && j < n) {
		int r = jj_compare(c, &v[i].key, &v[j].key, cs, pos);

		if (r == -2)
			return -1;
		if (rev)
			r = -r;
		tmp[o++] = r <= 0 ? v[i++] : v[j++];
	}
	while (i < h)
		tmp[o++] = v[i++];
	while (j < n)
		tmp[o++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
	return 0;
}

/* getAttributeValue(): "a.b.0" through dicts, namespaces and lists. */
static struct jj_val attr_path(const struct jj_val *item, const char *p, size_t n)
{
	struct jj_val v = *item;
	size_t i = 0;

	while (i <= n) {
		const char *dot = memchr(p + i, '.', n - i);
		size_t end = dot ? (size_t)(dot - p) : n;
		struct jj_val *x;

		if (jj_is_obj(&v) || v.k == JV_NS) {
			x = jj_map_get(v.o, p + i, end - i);
			v = x ? *x : jj_undef();
		} else if (v.k == JV_ARRAY || v.k == JV_TUPLE) {
			char buf[24];
			long idx;
			char *e;

			if (end - i == 0 || end - i >= sizeof(buf))
				return jj_undef();
			memcpy(buf, p + i, end - i);
			buf[end - i] = 0;
			idx = strtol(buf, &e, 10);
			if (e == buf || idx < 0 || (size_t)idx >= v.a->n)
				return jj_undef();
			v = v.a->v[idx];
		} else {
			return jj_undef();
		}
		if (!dot)
			break;
		i = end + 1;
	}
	return v;
}

static int sort_list(struct jj_ctx *c, const struct jj_val *v, bool rev, bool cs,
		     const struct jj_val *attr, uint32_t pos, struct jj_val *out)
{
	size_t n = v->a->n, i;
	struct sort_key *k = jj_alloc(c, (n + 1) * sizeof(*k));
	struct sort_key *tmp = jj_alloc(c, (n + 1) * sizeof(*tmp));
	char buf[40];

	if (!k || !tmp)
		return -1;
	for (i = 0; i < n; i++) {
		k[i].item = v->a->v[i];
		if (!attr || attr->k == JV_NULL)
			k[i].key = k[i].item;
		else if (attr->k == JV_INT)
			k[i].key = attr_path(&k[i].item, buf, jj_fmt_num(buf, sizeof(buf), attr->num));
		else
			k[i].key = attr_path(&k[i].item, attr->s, attr->n);
	}
	if (merge_sort(c, k, tmp, n, cs, rev, pos))
		return -1;
	*out = jj_new_list(c, JV_ARRAY, n);
	for (i = 0; i < n; i++)
		if (jj_list_push(c, out->a, k[i].item))
			return -1;
	return c->failed ? -1 : 0;
}

static int select_attr(struct jj_ctx *c, const struct jj_node *f, const struct jj_val *v,
		       const struct jj_args *args, bool select, struct jj_val *out)
{
	struct jj_val a[3] = { jj_undef(), jj_undef(), jj_undef() };
	size_t i;

	for (i = 0; i < v->a->n; i++)
		if (!jj_is_obj(&v->a->v[i]) && v->a->v[i].k != JV_NS)
			return jj_fail(c, f->pos, "%.*s can only filter a list of dicts",
				       (int)f->n, f->s);
	if (!f->nlist || f->nlist > 3)
		return jj_fail(c, f->pos, "%.*s takes an attribute, a test and a value",
			       (int)f->n, f->s);
	for (i = 0; i < f->nlist; i++) {
		if (f->list[i]->k != JN_STR)
			return jj_fail(c, f->list[i]->pos,
				       "the arguments of %.*s must be string literals",
				       (int)f->n, f->s);
		a[i] = args->pos[i];
	}
	*out = jj_new_list(c, JV_ARRAY, 0);
	for (i = 0; i < v->a->n; i++) {
		struct jj_val *x = jj_map_get(v->a->v[i].o, a[0].s, a[0].n);
		int r = 0;

		if (x && f->nlist >= 2)
			r = jj_test(c, a[1].s, a[1].n, x, f->nlist >= 3 ? &a[2] : NULL, f->pos);
		else if (x)
			r = jj_truthy(x);
		if (r < 0)
			return -1;
		if ((r != 0) == select && jj_list_push(c, out->a, v->a->v[i]))
			return -1;
	}
	return c->failed ? -1 : 0;
}

static int map_attr(struct jj_ctx *c, const struct jj_node *f, const struct jj_val *v,
		    const struct jj_args *args, struct jj_val *out)
{
	const struct jj_val *attr = jj_map_get(&args->kw, "attribute", 9);
	const struct jj_val *def = jj_map_get(&args->kw, "default", 7);
	size_t i;

	if (!attr)
		return jj_fail(c, f->pos, "map without attribute= is not supported");
	if (attr->k != JV_STR)
		return jj_fail(c, f->pos, "map: attribute must be a string");
	*out = jj_new_list(c, JV_ARRAY, v->a->n);
	for (i = 0; i < v->a->n; i++) {
		struct jj_val x;

		if (!jj_is_obj(&v->a->v[i]) && v->a->v[i].k != JV_NS)
			return jj_fail(c, f->pos, "map: the items must be dicts");
		x = attr_path(&v->a->v[i], attr->s, attr->n);
		if (x.k == JV_UNDEF && def)
			x = *def;
		if (jj_list_push(c, out->a, x))
			return -1;
	}
	return c->failed ? -1 : 0;
}

static int tojson(struct jj_ctx *c, const struct jj_node *f, const struct jj_val *v,
		  const struct jj_args *args, struct jj_val *out)
{
	struct jj_json_opts o = { .undef_null = true };
	const struct jj_val *x;
	struct cb_sbuf b = { 0 };
	bool sort = false;

	if (args) {
		x = jj_map_get(&args->kw, "indent", 6);
		if (x && x->k != JV_INT && x->k != JV_NULL)
			return jj_fail(c, f->pos, "tojson: indent must be an integer");
		if (x && x->k == JV_INT)
			o.indent = x->num < 0 ? 0 : x->num > 64 ? 64 : (int)x->num;
		if (want_bool(c, jj_map_get(&args->kw, "ensure_ascii", 12), false, f->pos,
			      "tojson: ensure_ascii", &o.ensure_ascii) ||
		    want_bool(c, jj_map_get(&args->kw, "sort_keys", 9), false, f->pos,
			      "tojson: sort_keys", &sort))
			return -1;
		if (sort)
			return jj_fail(c, f->pos, "tojson(sort_keys=true) is not supported");
		x = jj_map_get(&args->kw, "separators", 10);
		if (x && x->k != JV_NULL) {
			if (!jj_is_list(x) || x->a->n != 2 || x->a->v[0].k != JV_STR ||
			    x->a->v[1].k != JV_STR)
				return jj_fail(c, f->pos, "tojson: separators must be two strings");
			o.item_sep = x->a->v[0].s;
			o.item_sep_n = x->a->v[0].n;
			o.key_sep = x->a->v[1].s;
			o.key_sep_n = x->a->v[1].n;
		}
	}
	if (jj_to_json(c, &b, v, &o, 0, f->pos)) {
		free(b.p);
		return -1;
	}
	return jj_str_take(c, &b, out);
}

/* A string method with no arguments (|upper etc. share them). */
static int string_method(struct jj_ctx *c, enum jj_builtin id, const struct jj_val *v,
			 uint32_t pos, struct jj_val *out)
{
	struct jj_func f = { .id = id, .self = *v };
	struct jj_args a = { .at = pos };

	return jj_call_builtin(c, &f, &a, out);
}

static int no_filter(struct jj_ctx *c, const struct jj_node *f, const struct jj_val *v)
{
	return jj_fail(c, f->pos, "filter '%.*s' is not supported for %s", (int)f->n, f->s,
		       jj_kind_name(v->k));
}

static int plain_filter(struct jj_ctx *c, const struct jj_node *f, struct jj_val *v,
			struct jj_val *out)
{
	const char *s = f->s;
	size_t n = f->n, i;

	if (named(s, n, "safe")) {
		*out = *v;
		return 0;
	}
	if (named(s, n, "tojson"))
		return tojson(c, f, v, NULL, out);
	if (jj_is_list(v)) {
		struct jj_list *l = v->a;

		if (named(s, n, "list")) {
			*out = *v;
		} else if (named(s, n, "first") || named(s, n, "last")) {
			if (!l->n)
				return jj_fail(c, f->pos, "%.*s of an empty list", (int)n, s);
			*out = l->v[named(s, n, "first") ? 0 : l->n - 1];
		} else if (named(s, n, "length")) {
			*out = jj_int((double)l->n);
		} else if (named(s, n, "reverse")) {
			*out = jj_new_list(c, JV_ARRAY, l->n);
			for (i = l->n; i-- > 0;)
				if (jj_list_push(c, out->a, l->v[i]))
					return -1;
		} else if (named(s, n, "sort")) {
			return sort_list(c, v, false, false, NULL, f->pos, out);
		} else if (named(s, n, "join")) {
			return join(c, v, "", 0, f->pos, out);
		} else if (named(s, n, "string")) {
			struct jj_json_opts o = { 0 };
			struct cb_sbuf b = { 0 };

			if (jj_to_json(c, &b, v, &o, 0, f->pos)) {
				free(b.p);
				return -1;
			}
			return jj_str_take(c, &b, out);
		} else if (named(s, n, "unique")) {
			size_t j;

			*out = jj_new_list(c, JV_ARRAY, 0);
			for (i = 0; i < l->n; i++) {
				for (j = 0; j < out->a->n; j++)
					if (jj_strict_eq(&out->a->v[j], &l->v[i]))
						break;
				if (j == out->a->n && jj_list_push(c, out->a, l->v[i]))
					return -1;
			}
		} else {
			return no_filter(c, f, v);
		}
		return c->failed ? -1 : 0;
	}
	if (v->k == JV_STR) {
		double x;

		if (named(s, n, "length")) {
			*out = jj_int((double)jj_u16_len(v->s, v->n));
		} else if (named(s, n, "upper") || named(s, n, "lower") || named(s, n, "title") ||
			   named(s, n, "capitalize")) {
			return string_method(c, named(s, n, "upper") ? JB_UPPER :
					     named(s, n, "lower") ? JB_LOWER :
					     named(s, n, "title") ? JB_TITLE : JB_CAPITALIZE,
					     v, f->pos, out);
		} else if (named(s, n, "trim")) {
			*out = *v;
			jj_trim(&out->s, &out->n, true, true);
		} else if (named(s, n, "indent")) {
			return indent(c, v, 4, false, false, f->pos, out);
		} else if (named(s, n, "join") || named(s, n, "string")) {
			*out = *v;
		} else if (named(s, n, "int")) {
			*out = jj_int(parse_number(v->s, v->n, true, &x) ? x : 0);
		} else if (named(s, n, "float")) {
			*out = jj_float(parse_number(v->s, v->n, false, &x) ? x : 0);
		} else {
			return no_filter(c, f, v);
		}
		return 0;
	}
	if (jj_is_num(v)) {
		if (named(s, n, "abs"))
			*out = v->k == JV_INT ? jj_int(fabs(v->num)) : jj_float(fabs(v->num));
		else if (named(s, n, "int"))
			*out = jj_int(floor(v->num));
		else if (named(s, n, "float"))
			*out = jj_float(v->num);
		else if (named(s, n, "string"))
			return jj_to_text(c, v, f->pos, out);
		else
			return no_filter(c, f, v);
		return 0;
	}
	if (jj_is_obj(v)) {
		struct jj_func m = { .self = *v };
		struct jj_args a = { .at = f->pos };

		if (named(s, n, "items"))
			*out = jj_items(c, v->o);
		else if (named(s, n, "length"))
			*out = jj_int((double)v->o->n);
		else if (named(s, n, "get") || named(s, n, "keys") || named(s, n, "values") ||
			 named(s, n, "dictsort")) {
			m.id = named(s, n, "get") ? JB_GET : named(s, n, "keys") ? JB_KEYS :
			       named(s, n, "values") ? JB_VALUES : JB_DICTSORT;
			return jj_call_builtin(c, &m, &a, out);
		} else {
			return no_filter(c, f, v);
		}
		return c->failed ? -1 : 0;
	}
	if (v->k == JV_BOOL) {
		if (named(s, n, "bool"))
			*out = *v;
		else if (named(s, n, "int"))
			*out = jj_int(v->b);
		else if (named(s, n, "float"))
			*out = jj_float(v->b);
		else if (named(s, n, "string"))
			*out = jj_str(v->b ? "true" : "false", v->b ? 4 : 5);
		else
			return no_filter(c, f, v);
		return 0;
	}
	return no_filter(c, f, v);
}

int jj_apply_filter(struct jj_ctx *c, const struct jj_node *f, struct jj_val *v,
		    const struct jj_args *args, struct jj_val *out)
{
	const char *s = f->s;
	size_t n = f->n;
	struct jj_args a;
	const struct jj_val *x;
	bool b1 = false, b2 = false;

	if (!f->flag)
		return plain_filter(c, f, v, out);
	a = *args;
	if (named(s, n, "tojson"))
		return tojson(c, f, v, &a, out);
	if (named(s, n, "join")) {
		if (v->k != JV_STR && !jj_is_list(v))
			return no_filter(c, f, v);
		x = arg(&a, 0, "separator");
		if (x && x->k != JV_STR)
			return jj_fail(c, f->pos, "join: the separator must be a string");
		return join(c, v, x ? x->s : "", x ? x->n : 0, f->pos, out);
	}
	if (named(s, n, "int") || named(s, n, "float")) {
		bool integer = named(s, n, "int");
		double num;

		x = arg(&a, 0, "default");
		if (v->k == JV_STR) {
			if (parse_number(v->s, v->n, integer, &num))
				*out = integer ? jj_int(num) : jj_float(num);
			else
				*out = x ? *x : integer ? jj_int(0) : jj_float(0);
		} else if (jj_is_num(v)) {
			*out = *v;
		} else if (v->k == JV_BOOL) {
			*out = integer ? jj_int(v->b) : jj_float(v->b);
		} else {
			return no_filter(c, f, v);
		}
		return 0;
	}
	if (named(s, n, "default")) {
		x = a.npos > 1 ? &a.pos[1] : jj_map_get(&a.kw, "boolean", 7);
		if (want_bool(c, x, false, f->pos, "default: boolean", &b1))
			return -1;
		if (v->k == JV_UNDEF || (b1 && !jj_truthy(v)))
			*out = a.npos ? a.pos[0] : jj_str("", 0);
		else
			*out = *v;
		return 0;
	}
	if (jj_is_list(v)) {
		if (named(s, n, "sort")) {
			x = arg(&a, 2, "attribute");
			if (want_bool(c, arg(&a, 0, "reverse"), false, f->pos, "sort: reverse", &b1) ||
			    want_bool(c, arg(&a, 1, "case_sensitive"), false, f->pos,
				      "sort: case_sensitive", &b2))
				return -1;
			if (x && x->k != JV_STR && x->k != JV_INT && x->k != JV_NULL)
				return jj_fail(c, f->pos, "sort: attribute must be a string or an integer");
			return sort_list(c, v, b1, b2, x, f->pos, out);
		}
		if (named(s, n, "selectattr") || named(s, n, "rejectattr"))
			return select_attr(c, f, v, &a, named(s, n, "selectattr"), out);
		if (named(s, n, "map"))
			return map_attr(c, f, v, &a, out);
		return no_filter(c, f, v);
	}
	if (v->k == JV_STR) {
		if (named(s, n, "indent")) {
			x = arg(&a, 0, "width");
			if (x && x->k != JV_INT)
				return jj_fail(c, f->pos, "indent: width must be an integer");
			b1 = jj_truthy(arg(&a, 1, "first") ? arg(&a, 1, "first") :
				       &(struct jj_val){ .k = JV_BOOL });
			b2 = jj_truthy(arg(&a, 2, "blank") ? arg(&a, 2, "blank") :
				       &(struct jj_val){ .k = JV_BOOL });
			return indent(c, v, x ? (long)x->num : 4, b1, b2, f->pos, out);
		}
		if (named(s, n, "replace")) {
			struct jj_func m = { .id = JB_REPLACE, .self = *v };

			return jj_call_builtin(c, &m, &a, out);
		}
		return no_filter(c, f, v);
	}
	if (jj_is_obj(v)) {
		struct jj_func m = { .self = *v };

		if (named(s, n, "get"))
			m.id = JB_GET;
		else if (named(s, n, "items"))
			m.id = JB_ITEMS;
		else if (named(s, n, "keys"))
			m.id = JB_KEYS;
		else if (named(s, n, "values"))
			m.id = JB_VALUES;
		else if (named(s, n, "dictsort"))
			m.id = JB_DICTSORT;
		else
			return no_filter(c, f, v);
		return jj_call_builtin(c, &m, &a, out);
	}
	return no_filter(c, f, v);
}

/* ---- tests ---------------------------------------------------------------- */

int jj_test(struct jj_ctx *c, const char *s, size_t n, const struct jj_val *v,
	    const struct jj_val *a, uint32_t pos)
{
	struct jj_val m;

	if (named(s, n, "boolean"))
		return v->k == JV_BOOL;
	if (named(s, n, "callable"))
		return v->k == JV_FUNC;
	if (named(s, n, "odd") || named(s, n, "even")) {
		if (v->k != JV_INT)
			return jj_fail(c, pos, "test '%.*s' of %s", (int)n, s, jj_kind_name(v->k));
		return (fmod(v->num, 2) != 0) == named(s, n, "odd");
	}
	if (named(s, n, "false"))
		return v->k == JV_BOOL && !v->b;
	if (named(s, n, "true"))
		return v->k == JV_BOOL && v->b;
	if (named(s, n, "none"))
		return v->k == JV_NULL;
	if (named(s, n, "string"))
		return v->k == JV_STR;
	if (named(s, n, "number"))
		return jj_is_num(v);
	if (named(s, n, "integer"))
		return v->k == JV_INT;
	if (named(s, n, "iterable"))
		return v->k == JV_ARRAY || v->k == JV_STR;
	if (named(s, n, "mapping"))
		return jj_is_obj(v);
	if (named(s, n, "sequence"))
		return jj_is_list(v) || jj_is_obj(v) || v->k == JV_STR;
	if (named(s, n, "lower") || named(s, n, "upper")) {
		if (v->k != JV_STR)
			return 0;
		if (jj_case_map(c, v->s, v->n, named(s, n, "upper"), pos, &m))
			return -1;
		return m.n == v->n && !memcmp(m.s, v->s, v->n);
	}
	if (named(s, n, "defined"))
		return v->k != JV_UNDEF;
	if (named(s, n, "undefined"))
		return v->k == JV_UNDEF;
	if (named(s, n, "equalto") || named(s, n, "eq")) {
		if (!a)
			return jj_fail(c, pos, "test '%.*s' needs a value to compare with", (int)n, s);
		return jj_strict_eq(v, a);
	}
	return jj_fail(c, pos, "test '%.*s' is not supported", (int)n, s);
}
