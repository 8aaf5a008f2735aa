// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * jinja_value.c - the interpreter's values: containers, JSON input, and
 * the reference's conversions: to text (what {{ x }} prints), to JSON
 * (tojson), truthiness, == and ordering.
 *
 * The reference is JavaScript, so numbers print as JavaScript prints them
 * (String(x), with floats that are whole getting ".0"), true/false are
 * lower case, and lists and dicts print as JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_internal.h"

/* ---- containers ------------------------------------------------------------ */

const char *jj_kind_name(enum jj_kind k)
{
	/* with their article, for messages: "cannot loop over a string" */
	static const char *const names[] = {
		"undefined", "none", "a boolean", "an integer", "a float", "a string",
		"a list", "a tuple", "a dict", "keyword arguments", "a namespace", "a function",
	};

	return names[k];
}

struct jj_val jj_new_list(struct jj_ctx *c, enum jj_kind k, size_t cap)
{
	struct jj_val v = { .k = k };

	v.a = jj_alloc(c, sizeof(*v.a));
	if (v.a && cap) {
		v.a->v = jj_alloc(c, cap * sizeof(*v.a->v));
		v.a->cap = v.a->v ? cap : 0;
	}
	return v;
}

struct jj_val jj_new_map(struct jj_ctx *c, enum jj_kind k)
{
	struct jj_val v = { .k = k };

	v.o = jj_alloc(c, sizeof(*v.o));
	return v;
}

int jj_list_push(struct jj_ctx *c, struct jj_list *l, struct jj_val v)
{
	if (!l)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct jj_val *p;

		if (cap > JJ_MAX_ITEMS)
			return jj_fail(c, 0, "list longer than %u items", JJ_MAX_ITEMS);
		p = jj_alloc(c, cap * sizeof(*p));
		if (!p)
			return -1;
		if (l->n)
			memcpy(p, l->v, l->n * sizeof(*p));
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

#define MAP_LINEAR	16	/* entries searched linearly before there is an index */

struct jj_val *jj_map_get(const struct jj_map *m, const char *k, size_t n)
{
	size_t i;

	if (!m)
		return NULL;
	if (m->slot) {
		for (i = cb_hash_bytes(k, n) & m->smask; m->slot[i]; i = (i + 1) & m->smask) {
			size_t e = m->slot[i] - 1;

			if (m->klen[e] == n && !memcmp(m->key[e], k, n))
				return &m->val[e];
		}
		return NULL;
	}
	for (i = m->n; i-- > 0;)
		if (m->klen[i] == n && !memcmp(m->key[i], k, n))
			return &m->val[i];
	return NULL;
}

static void map_index(struct jj_map *m, size_t e)
{
	size_t i = cb_hash_bytes(m->key[e], m->klen[e]) & m->smask;

	while (m->slot[i])
		i = (i + 1) & m->smask;
	m->slot[i] = (uint32_t)(e + 1);
}

/* (Re)build the index at a load of at most 1/2. */
static int map_reindex(struct jj_ctx *c, struct jj_map *m)
{
	size_t cap = 64, e;

	while (cap < 4 * m->n)
		cap *= 2;
	m->slot = jj_alloc(c, cap * sizeof(*m->slot));
	if (!m->slot)
		return -1;
	m->smask = cap - 1;
	for (e = 0; e < m->n; e++)
		map_index(m, e);
	return 0;
}

int jj_map_set(struct jj_ctx *c, struct jj_map *m, const char *k, size_t n, struct jj_val v)
{
	struct jj_val *old = jj_map_get(m, k, n);

	if (!m)
		return -1;
	if (old) {
		*old = v;
		return 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		const char **key = jj_alloc(c, cap * sizeof(*key));
		size_t *klen = jj_alloc(c, cap * sizeof(*klen));
		struct jj_val *val = jj_alloc(c, cap * sizeof(*val));

		if (!key || !klen || !val)
			return -1;
		if (m->n) {
			memcpy(key, m->key, m->n * sizeof(*key));
			memcpy(klen, m->klen, m->n * sizeof(*klen));
			memcpy(val, m->val, m->n * sizeof(*val));
		}
		m->key = key;
		m->klen = klen;
		m->val = val;
		m->cap = cap;
	}
	m->key[m->n] = k;
	m->klen[m->n] = n;
	m->val[m->n] = v;
	m->n++;
	if (m->n > JJ_MAX_ITEMS)
		return jj_fail(c, 0, "dict larger than %u entries", JJ_MAX_ITEMS);
	if (m->n > MAP_LINEAR && (!m->slot || 2 * m->n > m->smask + 1))
		return map_reindex(c, m);
	if (m->slot)
		map_index(m, m->n - 1);
	return 0;
}

struct jj_val jj_func_val(struct jj_ctx *c, enum jj_builtin id, struct jj_val self,
			  const struct jj_node *macro, const char *name)
{
	struct jj_func *f = jj_alloc(c, sizeof(*f));
	struct jj_val v = { .k = JV_FUNC };

	if (f) {
		f->id = id;
		f->self = self;
		f->macro = macro;
		f->name = name;
	}
	v.f = f;
	return v;
}

struct jj_val jj_str_copy(struct jj_ctx *c, const char *s, size_t n)
{
	char *d = jj_strdup(c, s, n);

	return jj_str(d ? d : "", d ? n : 0);
}

int jj_str_take(struct jj_ctx *c, struct cb_sbuf *b, struct jj_val *out)
{
	char *d = jj_strdup(c, b->p ? b->p : "", b->n);

	*out = jj_str(d ? d : "", d ? b->n : 0);
	free(b->p);
	*b = (struct cb_sbuf){ 0 };
	return d ? 0 : -1;
}

/* ---- JSON input ------------------------------------------------------------ */

/* A canonical array index ("0", "17", not "01"): JavaScript lists these first. */
static bool index_key(const char *k, double *v)
{
	size_t n = strlen(k), i;

	if (!n || n > 10 || (n > 1 && k[0] == '0'))
		return false;
	for (i = 0; i < n; i++)
		if (k[i] < '0' || k[i] > '9')
			return false;
	*v = strtod(k, NULL);
	return *v < 4294967295.0;
}

struct idx_key {
	double v;
	size_t order;
	const cJSON *j;
};

static int cmp_idx_key(const void *a, const void *b)
{
	const struct idx_key *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int jj_from_json(struct jj_ctx *c, const cJSON *j, struct jj_val *out)
{
	const cJSON *it;
	double x;

	if (++c->depth > JJ_MAX_NEST)
		return jj_fail(c, 0, "JSON input nests deeper than %d", JJ_MAX_NEST);
	if (cJSON_IsNull(j)) {
		*out = jj_null();
	} else if (cJSON_IsBool(j)) {
		*out = jj_bool(cJSON_IsTrue(j));
	} else if (cJSON_IsNumber(j)) {
		x = j->valuedouble;
		*out = isfinite(x) && floor(x) == x ? jj_int(x) : jj_float(x);
	} else if (cJSON_IsString(j)) {
		*out = jj_str(j->valuestring, strlen(j->valuestring));
	} else if (cJSON_IsArray(j)) {
		*out = jj_new_list(c, JV_ARRAY, 0);
		cJSON_ArrayForEach(it, j) {
			struct jj_val v;

			if (jj_from_json(c, it, &v) || jj_list_push(c, out->a, v))
				return -1;
		}
	} else if (cJSON_IsObject(j)) {
		struct idx_key *ik;
		size_t nk = 0, i, total = 0;

		*out = jj_new_map(c, JV_OBJECT);
		cJSON_ArrayForEach(it, j)
			total++;
		ik = jj_alloc(c, (total + 1) * sizeof(*ik));
		if (!out->o || !ik)
			return -1;
		/* integer-like keys first, ascending (Object.entries order) */
		cJSON_ArrayForEach(it, j) {
			if (index_key(it->string, &x)) {
				ik[nk] = (struct idx_key){ x, nk, it };
				nk++;
			}
		}
		qsort(ik, nk, sizeof(*ik), cmp_idx_key);
		for (i = 0; i < nk; i++) {
			struct jj_val v;

			if (jj_from_json(c, ik[i].j, &v) ||
			    jj_map_set(c, out->o, ik[i].j->string, strlen(ik[i].j->string), v))
				return -1;
		}
		cJSON_ArrayForEach(it, j) {
			struct jj_val v;

			if (index_key(it->string, &x))
				continue;
			if (jj_from_json(c, it, &v) ||
			    jj_map_set(c, out->o, it->string, strlen(it->string), v))
				return -1;
		}
	} else {
		return jj_fail(c, 0, "unsupported JSON value");
	}
	c->depth--;
	return c->failed ? -1 : 0;
}

/* ---- numbers as JavaScript prints them -------------------------------------- */

size_t jj_fmt_num(char *buf, size_t len, double x)
{
	char e[40], digits[24];
	int p, k = 0, n, exp10, i, o = 0;
	const char *s;

	if (isnan(x))
		return snprintf(buf, len, "NaN");
	if (isinf(x))
		return snprintf(buf, len, x < 0 ? "-Infinity" : "Infinity");
	if (x == 0)
		return snprintf(buf, len, "0");
	if (x < 0) {
		buf[o++] = '-';
		x = -x;
	}
	/* the shortest digits that read back as x */
	for (p = 1; p <= 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	for (s = e; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			digits[k++] = *s;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = 0;
	exp10 = atoi(s + 1);
	n = exp10 + 1;	/* x = 0.digits * 10^n */
	if (k <= n && n <= 21) {
		o += snprintf(buf + o, len - o, "%s", digits);
		for (i = 0; i < n - k; i++)
			buf[o++] = '0';
	} else if (0 < n && n <= 21) {
		o += snprintf(buf + o, len - o, "%.*s.%s", n, digits, digits + n);
	} else if (-6 < n && n <= 0) {
		buf[o++] = '0';
		buf[o++] = '.';
		for (i = 0; i < -n; i++)
			buf[o++] = '0';
		o += snprintf(buf + o, len - o, "%s", digits);
	} else if (k == 1) {
		o += snprintf(buf + o, len - o, "%se%c%d", digits, n - 1 < 0 ? '-' : '+',
			      abs(n - 1));
	} else {
		o += snprintf(buf + o, len - o, "%c.%se%c%d", digits[0], digits + 1,
			      n - 1 < 0 ? '-' : '+', abs(n - 1));
	}
	buf[o] = 0;
	return o;
}

size_t jj_fmt_float(char *buf, size_t len, double x)
{
	if (x == 0 && signbit(x))
		return snprintf(buf, len, "-0.0");
	if (isfinite(x) && floor(x) == x && fabs(x) < 1e21)
		return snprintf(buf, len, "%.1f", x);	/* toFixed(1) */
	return jj_fmt_num(buf, len, x);
}

/* ---- text ------------------------------------------------------------------- */

int jj_append_text(struct jj_ctx *c, struct cb_sbuf *out, const struct jj_val *v,
		   uint32_t pos)
{
	struct jj_json_opts o = { 0 };
	char num[40];
	size_t n;

	switch (v->k) {
	case JV_UNDEF:
	case JV_NULL:
		return 0;
	case JV_BOOL:
		n = snprintf(num, sizeof(num), "%s", v->b ? "true" : "false");
		break;
	case JV_INT:
		n = jj_fmt_num(num, sizeof(num), v->num);
		break;
	case JV_FLOAT:
		n = jj_fmt_float(num, sizeof(num), v->num);
		break;
	case JV_STR:
		if (out->n + v->n > JJ_MAX_OUT)
			return jj_fail(c, pos, "output longer than %u MiB", JJ_MAX_OUT >> 20);
		return cb_sbuf_add(out, v->s, v->n) ? jj_fail(c, pos, "out of memory") : 0;
	case JV_FUNC:
		return jj_fail(c, pos, "cannot print a function");
	default:
		return jj_to_json(c, out, v, &o, 0, pos);
	}
	return cb_sbuf_add(out, num, n) ? jj_fail(c, pos, "out of memory") : 0;
}

int jj_to_text(struct jj_ctx *c, const struct jj_val *v, uint32_t pos, struct jj_val *out)
{
	struct cb_sbuf b = { 0 };

	if (v->k == JV_STR) {
		*out = *v;
		return 0;
	}
	if (jj_append_text(c, &b, v, pos)) {
		free(b.p);
		return -1;
	}
	return jj_str_take(c, &b, out);
}

int jj_append_raw(struct jj_ctx *c, struct cb_sbuf *out, const struct jj_val *v,
		  uint32_t pos)
{
	char num[40];
	size_t n;

	switch (v->k) {
	case JV_STR:
		return cb_sbuf_add(out, v->s, v->n) ? jj_fail(c, pos, "out of memory") : 0;
	case JV_BOOL:
		n = snprintf(num, sizeof(num), "%s", v->b ? "true" : "false");
		break;
	case JV_INT:
	case JV_FLOAT:
		n = jj_fmt_num(num, sizeof(num), v->num);
		break;
	default:
		return jj_fail(c, pos, "cannot join %s to a string (convert it first, "
			       "e.g. with |tojson)", jj_kind_name(v->k));
	}
	return cb_sbuf_add(out, num, n) ? jj_fail(c, pos, "out of memory") : 0;
}

/* ---- JSON output (the reference's toJSON) -------------------------------- */

/* JSON.stringify of a string; \uXXXX for non-ASCII if @ascii. */
static int json_string(struct cb_sbuf *b, const char *s, size_t n, bool ascii)
{
	size_t i = 0, l;
	uint32_t cp;
	char e[16];
	int r = cb_sbuf_add(b, "\"", 1);

	while (!r && i < n) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x80) {
			l = jj_u8_get(s + i, n - i, &cp);
			if (!ascii) {
				r = cb_sbuf_add(b, s + i, l);
			} else if (cp < 0x10000) {
				r = cb_sbuf_add(b, e, snprintf(e, sizeof(e), "\\u%04x", cp));
			} else {
				cp -= 0x10000;
				r = cb_sbuf_add(b, e, snprintf(e, sizeof(e), "\\u%04x\\u%04x",
							       0xd800 + (cp >> 10),
							       0xdc00 + (cp & 0x3ff)));
			}
			i += l;
			continue;
		}
		switch (ch) {
		case '"': r = cb_sbuf_add(b, "\\\"", 2); break;
		case '\\': r = cb_sbuf_add(b, "\\\\", 2); break;
		case '\b': r = cb_sbuf_add(b, "\\b", 2); break;
		case '\f': r = cb_sbuf_add(b, "\\f", 2); break;
		case '\n': r = cb_sbuf_add(b, "\\n", 2); break;
		case '\r': r = cb_sbuf_add(b, "\\r", 2); break;
		case '\t': r = cb_sbuf_add(b, "\\t", 2); break;
		default:
			if (ch < 0x20)
				r = cb_sbuf_add(b, e, snprintf(e, sizeof(e), "\\u%04x", ch));
			else if (ch == 0x7f && ascii)
				r = cb_sbuf_add(b, "\\u007f", 6);
			else
				r = cb_sbuf_add(b, s + i, 1);
		}
		i++;
	}
	return r ? r : cb_sbuf_add(b, "\"", 1);
}

static int pad(struct cb_sbuf *b, int indent, int depth)
{
	int k, r = cb_sbuf_add(b, "\n", 1);

	for (k = 0; !r && k < indent * depth; k++)
		r = cb_sbuf_add(b, " ", 1);
	return r;
}

int jj_to_json(struct jj_ctx *c, struct cb_sbuf *out, const struct jj_val *v,
	       const struct jj_json_opts *o, int depth, uint32_t pos)
{
	const char *is = o->item_sep ? o->item_sep : o->indent ? "," : ", ";
	size_t isn = o->item_sep ? o->item_sep_n : strlen(is);
	const char *ks = o->key_sep ? o->key_sep : ": ";
	size_t ksn = o->key_sep ? o->key_sep_n : 2, i, n;
	char num[40];
	int r = 0;

	if (depth > JJ_MAX_NEST)
		return jj_fail(c, pos, "value nests deeper than %d", JJ_MAX_NEST);
	if (out->n > JJ_MAX_OUT)
		return jj_fail(c, pos, "output longer than %u MiB", JJ_MAX_OUT >> 20);
	switch (v->k) {
	case JV_NULL:
		r = cb_sbuf_add(out, "null", 4);
		break;
	case JV_UNDEF:
		r = o->undef_null ? cb_sbuf_add(out, "null", 4) : cb_sbuf_add(out, "undefined", 9);
		break;
	case JV_BOOL:
		r = v->b ? cb_sbuf_add(out, "true", 4) : cb_sbuf_add(out, "false", 5);
		break;
	case JV_INT:
	case JV_FLOAT:
		n = isfinite(v->num) ? jj_fmt_num(num, sizeof(num), v->num) :
		    (size_t)snprintf(num, sizeof(num), "null");
		r = cb_sbuf_add(out, num, n);
		break;
	case JV_STR:
		r = json_string(out, v->s, v->n, o->ensure_ascii);
		break;
	case JV_ARRAY:
		n = v->a ? v->a->n : 0;
		r = cb_sbuf_add(out, "[", 1);
		for (i = 0; i < n && !r; i++) {
			if (i)
				r = cb_sbuf_add(out, is, isn);
			if (!r && o->indent)
				r = pad(out, o->indent, depth + 1);
			if (!r && jj_to_json(c, out, &v->a->v[i], o, depth + 1, pos))
				return -1;
		}
		if (!r && o->indent && n)
			r = pad(out, o->indent, depth);
		if (!r)
			r = cb_sbuf_add(out, "]", 1);
		break;
	case JV_OBJECT:
	case JV_NS:
		n = v->o ? v->o->n : 0;
		r = cb_sbuf_add(out, "{", 1);
		for (i = 0; i < n && !r; i++) {
			if (i)
				r = cb_sbuf_add(out, is, isn);
			if (!r && o->indent)
				r = pad(out, o->indent, depth + 1);
			if (!r)
				r = json_string(out, v->o->key[i], v->o->klen[i], o->ensure_ascii);
			if (!r)
				r = cb_sbuf_add(out, ks, ksn);
			if (!r && jj_to_json(c, out, &v->o->val[i], o, depth + 1, pos))
				return -1;
		}
		if (!r && o->indent && n)
			r = pad(out, o->indent, depth);
		if (!r)
			r = cb_sbuf_add(out, "}", 1);
		break;
	default:	/* the reference cannot either: tuples, kwargs, functions */
		return jj_fail(c, pos, "cannot convert %s to JSON", jj_kind_name(v->k));
	}
	return r ? jj_fail(c, pos, "out of memory") : 0;
}

/* ---- truthiness, equality, order ---------------------------------------------- */

bool jj_truthy(const struct jj_val *v)
{
	switch (v->k) {
	case JV_BOOL: return v->b;
	case JV_INT:
	case JV_FLOAT: return v->num != 0 && !isnan(v->num);
	case JV_STR: return v->n > 0;
	case JV_ARRAY:
	case JV_TUPLE: return v->a && v->a->n > 0;
	case JV_OBJECT:
	case JV_KWARGS: return v->o && v->o->n > 0;
	case JV_NS:
	case JV_FUNC: return true;
	default: return false;
	}
}

/* JavaScript's ToNumber of a string. */
static double str_to_num(const char *s, size_t n)
{
	char buf[64], *end;
	double x;

	jj_trim(&s, &n, true, true);
	if (!n)
		return 0;
	if (n >= sizeof(buf))
		return NAN;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!strcmp(buf, "Infinity") || !strcmp(buf, "+Infinity"))
		return INFINITY;
	if (!strcmp(buf, "-Infinity"))
		return -INFINITY;
	if (strpbrk(buf, "iInNpP") && !(n > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')))
		return NAN;	/* strtod's inf/nan/hex-float spellings are not JavaScript's */
	if (n > 2 && buf[0] == '0' && strchr("xXoObB", buf[1])) {
		int base = buf[1] == 'x' || buf[1] == 'X' ? 16 : buf[1] == 'o' || buf[1] == 'O' ? 8 : 2;

		x = (double)strtoull(buf + 2, &end, base);
		return *end ? NAN : x;
	}
	x = strtod(buf, &end);
	return *end ? NAN : x;
}

static bool is_primitive(enum jj_kind k)
{
	return k <= JV_STR;
}

int jj_loose_eq(struct jj_ctx *c, const struct jj_val *a, const struct jj_val *b,
		uint32_t pos)
{
	double x, y;

	if ((a->k == JV_NULL || a->k == JV_UNDEF) || (b->k == JV_NULL || b->k == JV_UNDEF))
		return (a->k == JV_NULL || a->k == JV_UNDEF) && (b->k == JV_NULL || b->k == JV_UNDEF);
	if (a->k == JV_STR && b->k == JV_STR)
		return a->n == b->n && !memcmp(a->s, b->s, a->n);
	if (is_primitive(a->k) && is_primitive(b->k)) {
		x = a->k == JV_STR ? str_to_num(a->s, a->n) : a->k == JV_BOOL ? a->b : a->num;
		y = b->k == JV_STR ? str_to_num(b->s, b->n) : b->k == JV_BOOL ? b->b : b->num;
		return x == y;
	}
	if (!is_primitive(a->k) && !is_primitive(b->k)) {
		if (a->k == JV_FUNC || b->k == JV_FUNC)
			return a->k == b->k && a->f == b->f;
		if (jj_is_list(a) != jj_is_list(b))
			return 0;
		return jj_is_list(a) ? a->a == b->a : a->o == b->o;	/* identity */
	}
	return jj_fail(c, pos, "comparing %s with %s is not supported",
		       jj_kind_name(a->k), jj_kind_name(b->k));
}

bool jj_strict_eq(const struct jj_val *a, const struct jj_val *b)
{
	if (jj_is_num(a) && jj_is_num(b))
		return a->num == b->num;
	if (a->k != b->k) {
		if (jj_is_list(a) && jj_is_list(b))
			return a->a == b->a;
		if (jj_is_obj(a) && jj_is_obj(b))
			return a->o == b->o;
		return false;
	}
	switch (a->k) {
	case JV_UNDEF:
	case JV_NULL: return true;
	case JV_BOOL: return a->b == b->b;
	case JV_STR: return a->n == b->n && !memcmp(a->s, b->s, a->n);
	case JV_ARRAY:
	case JV_TUPLE: return a->a == b->a;
	case JV_FUNC: return a->f == b->f;
	default: return a->o == b->o;
	}
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
	int r = memcmp(a, b, an < bn ? an : bn);

	if (r)
		return r < 0 ? -1 : 1;
	return an < bn ? -1 : an > bn;
}

int jj_compare(struct jj_ctx *c, const struct jj_val *a, const struct jj_val *b,
	       bool case_sensitive, uint32_t pos)
{
	struct jj_val la, lb;
	double x, y;

	if (a->k == JV_NULL && b->k == JV_NULL)
		return 0;
	if (a->k == JV_UNDEF && b->k == JV_UNDEF)
		return 0;
	if (a->k == JV_NULL || b->k == JV_NULL || a->k == JV_UNDEF || b->k == JV_UNDEF)
		goto bad;
	if ((jj_is_num(a) || a->k == JV_BOOL) && (jj_is_num(b) || b->k == JV_BOOL)) {
		x = a->k == JV_BOOL ? a->b : a->num;
		y = b->k == JV_BOOL ? b->b : b->num;
		return x < y ? -1 : x > y;
	}
	if (a->k != JV_STR || b->k != JV_STR)
		goto bad;
	if (case_sensitive)
		return cmp_bytes(a->s, a->n, b->s, b->n);
	if (jj_case_map(c, a->s, a->n, false, pos, &la) ||
	    jj_case_map(c, b->s, b->n, false, pos, &lb))
		return -2;
	return cmp_bytes(la.s, la.n, lb.s, lb.n);
bad:
	jj_fail(c, pos, "cannot compare %s with %s", jj_kind_name(a->k), jj_kind_name(b->k));
	return -2;
}
