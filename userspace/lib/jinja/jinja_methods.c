// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_methods.c - members and built-in functions: x.attr and x[i] on
 * dicts, namespaces, lists and strings; the string methods (upper lower
 * strip lstrip rstrip title capitalize startswith endswith split replace,
 * and length); the dict methods (get items keys values dictsort); and the
 * globals every render starts with (namespace, range, raise_exception,
 * strftime_now, true/false/none in both spellings).
 *
 * As in the reference, strip/lstrip/rstrip remove whitespace and ignore an
 * argument, and keyword arguments of methods arrive as a trailing dict.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinja_internal.h"

struct jj_val jj_items(struct jj_ctx *c, const struct jj_map *m)
{
	struct jj_val out = jj_new_list(c, JV_ARRAY, m ? m->n : 0);
	size_t i;

	for (i = 0; m && i < m->n; i++) {
		struct jj_val pair = jj_new_list(c, JV_ARRAY, 2);

		if (jj_list_push(c, pair.a, jj_str(m->key[i], m->klen[i])) ||
		    jj_list_push(c, pair.a, m->val[i]) || jj_list_push(c, out.a, pair))
			break;
	}
	return out;
}

static bool named(const struct jj_val *p, const char *w)
{
	return p->n == strlen(w) && !memcmp(p->s, w, p->n);
}

static const struct {
	const char *name;
	enum jj_builtin id;
} str_methods[] = {
	{ "upper", JB_UPPER }, { "lower", JB_LOWER }, { "strip", JB_STRIP },
	{ "title", JB_TITLE }, { "capitalize", JB_CAPITALIZE }, { "rstrip", JB_RSTRIP },
	{ "lstrip", JB_LSTRIP }, { "startswith", JB_STARTSWITH }, { "endswith", JB_ENDSWITH },
	{ "split", JB_SPLIT }, { "replace", JB_REPLACE },
}, dict_methods[] = {
	{ "get", JB_GET }, { "items", JB_ITEMS }, { "keys", JB_KEYS }, { "values", JB_VALUES },
	{ "dictsort", JB_DICTSORT },
};

/* s.at(i) in UTF-16 units; fails if it would split a surrogate pair. */
static int char_at(struct jj_ctx *c, const struct jj_val *s, double idx, uint32_t pos,
		   struct jj_val *out)
{
	size_t units = jj_u16_len(s->s, s->n), i = 0, u = 0, l;
	long long k = (long long)idx;
	uint32_t cp;

	if (k < 0)
		k += (long long)units;
	if (k < 0 || (size_t)k >= units) {
		*out = jj_undef();
		return 0;
	}
	while (i < s->n) {
		l = jj_u8_get(s->s + i, s->n - i, &cp);
		if (u == (size_t)k && cp < 0x10000) {
			*out = jj_str(s->s + i, l);
			return 0;
		}
		u += cp >= 0x10000 ? 2 : 1;
		if (u > (size_t)k)
			break;
		i += l;
	}
	return jj_fail(c, pos, "index %lld falls inside a character outside the BMP", k);
}

int jj_member(struct jj_ctx *c, const struct jj_val *obj, const struct jj_val *prop,
	      uint32_t pos, struct jj_val *out)
{
	struct jj_val *x;
	size_t i;

	*out = jj_undef();
	if (jj_is_obj(obj) || obj->k == JV_NS) {
		if (prop->k != JV_STR)
			return jj_fail(c, pos, "%s is indexed by strings, not by %s",
				       jj_kind_name(obj->k), jj_kind_name(prop->k));
		x = jj_map_get(obj->o, prop->s, prop->n);
		if (x) {
			*out = *x;
			return 0;
		}
		if (obj->k == JV_NS)
			return 0;
		for (i = 0; i < sizeof(dict_methods) / sizeof(dict_methods[0]); i++)
			if (named(prop, dict_methods[i].name)) {
				*out = jj_func_val(c, dict_methods[i].id, *obj, NULL,
						   dict_methods[i].name);
				return out->f ? 0 : -1;
			}
		return 0;
	}
	if (jj_is_list(obj) || obj->k == JV_STR) {
		if (prop->k == JV_INT) {
			long long k = (long long)prop->num;

			if (obj->k == JV_STR)
				return char_at(c, obj, prop->num, pos, out);
			if (k < 0)
				k += (long long)obj->a->n;
			if (k >= 0 && (size_t)k < obj->a->n)
				*out = obj->a->v[k];
			return 0;
		}
		if (prop->k != JV_STR)
			return jj_fail(c, pos, "%s is indexed by integers, not by %s",
				       jj_kind_name(obj->k), jj_kind_name(prop->k));
		if (named(prop, "length")) {
			*out = jj_int(obj->k == JV_STR ? (double)jj_u16_len(obj->s, obj->n) :
				      (double)obj->a->n);
			return 0;
		}
		if (obj->k != JV_STR)
			return 0;
		for (i = 0; i < sizeof(str_methods) / sizeof(str_methods[0]); i++)
			if (named(prop, str_methods[i].name)) {
				*out = jj_func_val(c, str_methods[i].id, *obj, NULL,
						   str_methods[i].name);
				return out->f ? 0 : -1;
			}
		return 0;
	}
	if (prop->k != JV_STR)
		return jj_fail(c, pos, "cannot index %s with %s", jj_kind_name(obj->k),
			       jj_kind_name(prop->k));
	return 0;	/* numbers, booleans, none, undefined: no attributes */
}

/* ---- string methods ------------------------------------------------------- */

static bool ascii_word(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

static int title(struct jj_ctx *c, const struct jj_val *s, struct jj_val *out)
{
	char *d = jj_strdup(c, s->s, s->n);
	size_t i;

	if (!d)
		return -1;
	/* value.replace(/\b\w/g, c => c.toUpperCase()): ASCII word starts */
	for (i = 0; i < s->n; i++)
		if (ascii_word(d[i]) && (!i || !ascii_word(d[i - 1])) && d[i] >= 'a' && d[i] <= 'z')
			d[i] -= 32;
	*out = jj_str(d, s->n);
	return 0;
}

static int capitalize(struct jj_ctx *c, const struct jj_val *s, uint32_t pos,
		      struct jj_val *out)
{
	struct jj_val first;
	struct cb_sbuf b = { 0 };
	uint32_t cp;
	size_t l;

	if (!s->n) {
		*out = *s;
		return 0;
	}
	l = jj_u8_get(s->s, s->n, &cp);
	if (cp >= 0x10000) {	/* charAt(0) is half of it: left as it is */
		*out = *s;
		return 0;
	}
	if (jj_case_map(c, s->s, l, true, pos, &first))
		return -1;
	if (cb_sbuf_add(&b, first.s, first.n) || cb_sbuf_add(&b, s->s + l, s->n - l)) {
		free(b.p);
		return jj_fail(c, pos, "out of memory");
	}
	return jj_str_take(c, &b, out);
}

static bool starts(const struct jj_val *s, const struct jj_val *p, bool end)
{
	if (p->n > s->n)
		return false;
	return !memcmp(end ? s->s + s->n - p->n : s->s, p->s, p->n);
}

static int affix(struct jj_ctx *c, const struct jj_val *s, const struct jj_val *av, size_t ac,
		 bool end, uint32_t pos, struct jj_val *out)
{
	const char *what = end ? "endswith" : "startswith";
	size_t i;

	if (!ac)
		return jj_fail(c, pos, "%s() needs an argument", what);
	if (av[0].k == JV_STR) {
		*out = jj_bool(starts(s, &av[0], end));
		return 0;
	}
	if (av[0].k != JV_ARRAY && av[0].k != JV_TUPLE)
		return jj_fail(c, pos, "%s() takes a string or a tuple of strings", what);
	for (i = 0; i < av[0].a->n; i++) {
		if (av[0].a->v[i].k != JV_STR)
			return jj_fail(c, pos, "%s(): the tuple must hold strings", what);
		if (starts(s, &av[0].a->v[i], end)) {
			*out = jj_bool(true);
			return 0;
		}
	}
	*out = jj_bool(false);
	return 0;
}

static int push_str(struct jj_ctx *c, struct jj_val *list, const char *s, size_t n)
{
	return jj_list_push(c, list->a, jj_str(s, n));
}

/* Python's str.split(sep=None, maxsplit=-1), as the reference does it. */
static int split(struct jj_ctx *c, const struct jj_val *s, const struct jj_val *av, size_t ac,
		 uint32_t pos, struct jj_val *out)
{
	const struct jj_val *sep = ac > 0 ? &av[0] : NULL, *ms = ac > 1 ? &av[1] : NULL;
	long long max = -1, parts = 0;
	const char *p = s->s;
	size_t n = s->n, i, l;

	if (sep && sep->k != JV_STR && sep->k != JV_NULL)
		return jj_fail(c, pos, "split(): the separator must be a string or none");
	if (ms && ms->k != JV_INT)
		return jj_fail(c, pos, "split(): maxsplit must be an integer");
	if (ms)
		max = (long long)ms->num;
	*out = jj_new_list(c, JV_ARRAY, 0);
	if (!out->a)
		return -1;
	if (!sep || sep->k == JV_NULL) {
		jj_trim(&p, &n, true, false);
		i = 0;
		while (i < n) {
			size_t start = i;

			if (max != -1 && parts >= max)
				return push_str(c, out, p + i, n - i);
			while (i < n && !jj_ws_len(p + i, n - i))
				i += jj_u8_get(p + i, n - i, &(uint32_t){ 0 });
			if (push_str(c, out, p + start, i - start))
				return -1;
			parts++;
			while (i < n && (l = jj_ws_len(p + i, n - i)))
				i += l;
		}
		return 0;
	}
	if (!sep->n)
		return jj_fail(c, pos, "split(): empty separator");
	i = 0;
	for (;;) {
		const char *hit = sep->n <= n - i ? memmem(p + i, n - i, sep->s, sep->n) : NULL;

		if (!hit || (max != -1 && parts >= max))
			return push_str(c, out, p + i, n - i);
		if (push_str(c, out, p + i, (size_t)(hit - (p + i))))
			return -1;
		parts++;
		i = (size_t)(hit - p) + sep->n;
	}
}

/* Python's str.replace(old, new[, count]); an empty old inserts between characters. */
static int replace(struct jj_ctx *c, const struct jj_val *s, const struct jj_val *av, size_t ac,
		   uint32_t pos, struct jj_val *out)
{
	const struct jj_val *cnt = NULL;
	struct cb_sbuf b = { 0 };
	long long left = -1;
	size_t i = 0, l;
	int r = 0;

	if (ac < 2)
		return jj_fail(c, pos, "replace() needs two arguments");
	if (av[0].k != JV_STR || av[1].k != JV_STR)
		return jj_fail(c, pos, "replace(): the arguments must be strings");
	if (ac > 2)
		cnt = av[2].k == JV_KWARGS ? jj_map_get(av[2].o, "count", 5) : &av[2];
	if (cnt && cnt->k != JV_INT && cnt->k != JV_NULL)
		return jj_fail(c, pos, "replace(): count must be an integer or none");
	if (cnt && cnt->k == JV_INT)
		left = cnt->num < 0 ? -1 : (long long)cnt->num;
	if (left == 0) {
		*out = *s;
		return 0;
	}
	if (!av[0].n) {
		/* before every character and at the end */
		for (;;) {
			if (left != 0) {
				r |= cb_sbuf_add(&b, av[1].s, av[1].n);
				if (left > 0)
					left--;
			}
			if (i >= s->n)
				break;
			l = jj_u8_get(s->s + i, s->n - i, &(uint32_t){ 0 });
			r |= cb_sbuf_add(&b, s->s + i, l);
			i += l;
		}
	} else {
		while (i < s->n) {
			const char *hit = left != 0 && av[0].n <= s->n - i ?
					  memmem(s->s + i, s->n - i, av[0].s, av[0].n) : NULL;

			if (!hit) {
				r |= cb_sbuf_add(&b, s->s + i, s->n - i);
				break;
			}
			r |= cb_sbuf_add(&b, s->s + i, (size_t)(hit - (s->s + i)));
			r |= cb_sbuf_add(&b, av[1].s, av[1].n);
			i = (size_t)(hit - s->s) + av[0].n;
			if (left > 0)
				left--;
		}
	}
	if (r) {
		free(b.p);
		return jj_fail(c, pos, "out of memory");
	}
	return jj_str_take(c, &b, out);
}

/* ---- dict methods ---------------------------------------------------------- */

static int dictsort(struct jj_ctx *c, const struct jj_map *m, const struct jj_val *av,
		    size_t ac, uint32_t pos, struct jj_val *out)
{
	const struct jj_map *kw = NULL;
	const struct jj_val *cs, *by, *rev;
	struct jj_val items = jj_items(c, m), t;
	size_t np = ac, i, j;
	bool byval;

	if (ac && av[ac - 1].k == JV_KWARGS) {
		kw = av[ac - 1].o;
		np--;
	}
	cs = np > 0 ? &av[0] : kw ? jj_map_get(kw, "case_sensitive", 14) : NULL;
	by = np > 1 ? &av[1] : kw ? jj_map_get(kw, "by", 2) : NULL;
	rev = np > 2 ? &av[2] : kw ? jj_map_get(kw, "reverse", 7) : NULL;
	if ((cs && cs->k != JV_BOOL) || (rev && rev->k != JV_BOOL))
		return jj_fail(c, pos, "dictsort(): case_sensitive and reverse must be booleans");
	if (by && (by->k != JV_STR || (!named(by, "key") && !named(by, "value"))))
		return jj_fail(c, pos, "dictsort(): by must be 'key' or 'value'");
	byval = by && named(by, "value");
	if (!items.a)
		return -1;
	/* insertion sort: stable, and dicts in templates are small */
	for (i = 1; i < items.a->n; i++) {
		for (j = i; j > 0; j--) {
			int r = jj_compare(c, &items.a->v[j - 1].a->v[byval],
					   &items.a->v[j].a->v[byval], cs && cs->b, pos);

			if (r == -2)
				return -1;
			if (rev && rev->b)
				r = -r;
			if (r <= 0)
				break;
			t = items.a->v[j - 1];
			items.a->v[j - 1] = items.a->v[j];
			items.a->v[j] = t;
		}
	}
	*out = items;
	return 0;
}

/* ---- globals ----------------------------------------------------------------- */

static int namespace(struct jj_ctx *c, const struct jj_val *av, size_t ac,
		     const struct jj_map *kw, uint32_t pos, struct jj_val *out)
{
	size_t i;

	if (ac > 1)
		return jj_fail(c, pos, "namespace() takes at most one positional argument");
	*out = jj_new_map(c, JV_NS);
	if (!out->o)
		return -1;
	if (ac && jj_is_obj(&av[0])) {
		for (i = 0; i < av[0].o->n; i++)
			if (jj_map_set(c, out->o, av[0].o->key[i], av[0].o->klen[i], av[0].o->val[i]))
				return -1;
	} else if (ac && jj_is_list(&av[0])) {
		for (i = 0; i < av[0].a->n; i++) {
			const struct jj_val *p = &av[0].a->v[i];

			if (!jj_is_list(p) || p->a->n != 2 || p->a->v[0].k != JV_STR)
				return jj_fail(c, pos, "namespace() takes (key, value) pairs");
			if (jj_map_set(c, out->o, p->a->v[0].s, p->a->v[0].n, p->a->v[1]))
				return -1;
		}
	} else if (ac) {
		return jj_fail(c, pos, "namespace() cannot take %s", jj_kind_name(av[0].k));
	}
	for (i = 0; kw && i < kw->n; i++)
		if (jj_map_set(c, out->o, kw->key[i], kw->klen[i], kw->val[i]))
			return -1;
	return 0;
}

static int range(struct jj_ctx *c, const struct jj_val *av, size_t ac, uint32_t pos,
		 struct jj_val *out)
{
	double start = 0, stop, step = 1, x;
	size_t i;

	if (!ac || ac > 3)
		return jj_fail(c, pos, "range() takes one to three numbers");
	for (i = 0; i < ac; i++)
		if (!jj_is_num(&av[i]))
			return jj_fail(c, pos, "range() takes numbers, not %s",
				       jj_kind_name(av[i].k));
	stop = av[0].num;
	if (ac > 1) {
		start = av[0].num;
		stop = av[1].num;
	}
	if (ac > 2)
		step = av[2].num;
	if (step == 0 || isnan(step))
		return jj_fail(c, pos, "range() step must not be zero");
	if (fabs((stop - start) / step) > JJ_MAX_ITEMS)
		return jj_fail(c, pos, "range() longer than %u items", JJ_MAX_ITEMS);
	*out = jj_new_list(c, JV_ARRAY, 0);
	for (x = start; step > 0 ? x < stop : x > stop; x += step)
		if (jj_list_push(c, out->a, floor(x) == x ? jj_int(x) : jj_float(x)))
			return -1;
	return c->failed ? -1 : 0;
}

/* %Y %m %d %b %B %H %M %% of the local time, as the reference's strftime. */
static int strftime_now(struct jj_ctx *c, const struct jj_val *av, size_t ac, uint32_t pos,
			struct jj_val *out)
{
	static const char *const mon[] = {
		"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December",
	};
	struct cb_sbuf b = { 0 };
	time_t now = time(NULL);
	struct tm tm;
	char buf[32];
	size_t i;
	int r = 0;

	if (!ac || av[0].k != JV_STR)
		return jj_fail(c, pos, "strftime_now() takes a format string");
	localtime_r(&now, &tm);
	for (i = 0; i < av[0].n && !r; i++) {
		char ch = av[0].s[i], f = i + 1 < av[0].n ? av[0].s[i + 1] : 0;
		int n = -1;

		if (ch == '%' && f && strchr("YmdbBHM%", f)) {
			switch (f) {
			case 'Y': n = snprintf(buf, sizeof(buf), "%d", tm.tm_year + 1900); break;
			case 'm': n = snprintf(buf, sizeof(buf), "%02d", tm.tm_mon + 1); break;
			case 'd': n = snprintf(buf, sizeof(buf), "%02d", tm.tm_mday); break;
			case 'b': n = snprintf(buf, sizeof(buf), "%.3s", mon[tm.tm_mon]); break;
			case 'B': n = snprintf(buf, sizeof(buf), "%s", mon[tm.tm_mon]); break;
			case 'H': n = snprintf(buf, sizeof(buf), "%02d", tm.tm_hour); break;
			case 'M': n = snprintf(buf, sizeof(buf), "%02d", tm.tm_min); break;
			default: n = snprintf(buf, sizeof(buf), "%%"); break;
			}
			r = cb_sbuf_add(&b, buf, (size_t)n);
			i++;
			continue;
		}
		r = cb_sbuf_add(&b, &ch, 1);
	}
	if (r) {
		free(b.p);
		return jj_fail(c, pos, "out of memory");
	}
	return jj_str_take(c, &b, out);
}

int jj_call_builtin(struct jj_ctx *c, const struct jj_func *f, struct jj_args *args,
		    struct jj_val *out)
{
	const struct jj_val *self = &f->self;
	struct jj_val *av = args->pos, kwv;
	size_t ac = args->npos;
	uint32_t pos = args->at;
	struct cb_sbuf b = { 0 };

	/* methods see keyword arguments as a trailing dict, as in the reference */
	if (args->kw.n && f->id != JB_NAMESPACE) {
		av = jj_alloc(c, (ac + 1) * sizeof(*av));
		if (!av)
			return -1;
		if (ac)
			memcpy(av, args->pos, ac * sizeof(*av));
		kwv = jj_new_map(c, JV_KWARGS);
		if (!kwv.o)
			return -1;
		*kwv.o = args->kw;
		av[ac++] = kwv;
	}
	switch (f->id) {
	case JB_NAMESPACE:
		return namespace(c, av, ac, &args->kw, pos, out);
	case JB_RAISE:
		if (ac && jj_append_raw(c, &b, &av[0], pos) == 0) {
			jj_fail(c, pos, "raise_exception: %.*s", (int)(b.n > 400 ? 400 : b.n),
				b.p ? b.p : "");
			free(b.p);
			return -1;
		}
		free(b.p);
		return c->failed ? -1 : jj_fail(c, pos, "raise_exception: undefined");
	case JB_RANGE:
		return range(c, av, ac, pos, out);
	case JB_STRFTIME:
		return strftime_now(c, av, ac, pos, out);
	case JB_UPPER:
	case JB_LOWER:
		return jj_case_map(c, self->s, self->n, f->id == JB_UPPER, pos, out);
	case JB_STRIP:
	case JB_LSTRIP:
	case JB_RSTRIP:
		*out = *self;
		jj_trim(&out->s, &out->n, f->id != JB_RSTRIP, f->id != JB_LSTRIP);
		return 0;
	case JB_TITLE:
		return title(c, self, out);
	case JB_CAPITALIZE:
		return capitalize(c, self, pos, out);
	case JB_STARTSWITH:
	case JB_ENDSWITH:
		return affix(c, self, av, ac, f->id == JB_ENDSWITH, pos, out);
	case JB_SPLIT:
		return split(c, self, av, ac, pos, out);
	case JB_REPLACE:
		return replace(c, self, av, ac, pos, out);
	case JB_GET:
		if (!ac || av[0].k != JV_STR)
			return jj_fail(c, pos, "get(): the key must be a string");
		{
			struct jj_val *x = jj_map_get(self->o, av[0].s, av[0].n);

			*out = x ? *x : ac > 1 ? av[1] : jj_null();
		}
		return 0;
	case JB_ITEMS:
		*out = jj_items(c, self->o);
		return c->failed ? -1 : 0;
	case JB_KEYS:
	case JB_VALUES: {
		size_t i;

		*out = jj_new_list(c, JV_ARRAY, self->o->n);
		for (i = 0; i < self->o->n; i++)
			if (jj_list_push(c, out->a, f->id == JB_KEYS ?
					 jj_str(self->o->key[i], self->o->klen[i]) : self->o->val[i]))
				return -1;
		return c->failed ? -1 : 0;
	}
	case JB_DICTSORT:
		return dictsort(c, self->o, av, ac, pos, out);
	default:
		return jj_fail(c, pos, "not a function");
	}
}

int jj_globals(struct jj_ctx *c, struct jj_env *e)
{
	static const struct {
		const char *name;
		enum jj_builtin id;
	} fns[] = {
		{ "namespace", JB_NAMESPACE }, { "raise_exception", JB_RAISE },
		{ "range", JB_RANGE }, { "strftime_now", JB_STRFTIME },
	};
	size_t i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct jj_val f = jj_func_val(c, fns[i].id, jj_undef(), NULL, fns[i].name);

		if (!f.f || jj_map_set(c, &e->vars, fns[i].name, strlen(fns[i].name), f))
			return -1;
	}
	if (jj_map_set(c, &e->vars, "true", 4, jj_bool(true)) ||
	    jj_map_set(c, &e->vars, "false", 5, jj_bool(false)) ||
	    jj_map_set(c, &e->vars, "none", 4, jj_null()) ||
	    jj_map_set(c, &e->vars, "True", 4, jj_bool(true)) ||
	    jj_map_set(c, &e->vars, "False", 5, jj_bool(false)) ||
	    jj_map_set(c, &e->vars, "None", 4, jj_null()))
		return -1;
	return 0;
}
