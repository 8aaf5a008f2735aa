// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * serve_schema.c - a JSON Schema into grammar rules (serve_schema.h).
 *
 * Each schema becomes a rule; the JSON pieces every schema shares
 * (whitespace, strings, numbers, any value) are made once per grammar.
 * An object's properties come in the schema's order: for property k,
 * first_k is "the rest, nothing written yet" and more_k "the rest, after
 * a property" (a comma first), so optional properties may be skipped
 * without a stray comma.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_grammar.h"
#include "serve_range.h"
#include "serve_schema.h"

/* Schemas nested deeper than this (through $ref too) are refused. */
#define SCHEMA_MAX_DEPTH 64
/* The most a minLength, maxLength, minItems or maxItems may say. */
#define SCHEMA_MAX_COUNT 1024
/* The most $ref targets one schema may have. */
#define SCHEMA_MAX_REFS 256
/* Digits of a number before and after its point; whitespace in a row. */
#define JSON_MAX_DIGITS 16
#define JSON_MAX_SPACE 24

struct sc {
	struct grammar *g;
	const cJSON *root;
	char *err;
	size_t errlen;
	int failed;
	/* made once: GRAM_NIL until then */
	uint32_t ws, chr[2], string, number, integer, value;
	struct {
		const cJSON *at;
		uint32_t rule;
	} refs[SCHEMA_MAX_REFS];
	unsigned int n_refs;
};

static uint32_t fail(struct sc *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->failed) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	c->failed = 1;
	return GRAM_NIL;
}

/* --- the JSON pieces every schema shares ---------------------------------- */

/* "" | " " | "\n" [ \t]{0,24}: a space, or a new line and its indent */
static uint32_t ws(struct sc *c)
{
	struct grammar *g = c->g;
	uint32_t one, r;
	uint64_t set[4] = { 0 };

	if (c->ws != GRAM_NIL)
		return c->ws;
	set[0] = 1ull << ' ' | 1ull << '\t';
	one = gram_rule_new(g);
	gram_add_set(g, one, set);
	r = gram_rule_new(g);
	gram_add_byte(g, r, ' ');
	gram_or(g, r);
	gram_add_byte(g, r, '\n');
	gram_add_rule(g, r, gram_repeat(g, one, 0, JSON_MAX_SPACE));
	c->ws = gram_opt(g, r);
	return c->ws;
}

uint32_t schema_ws_rule(struct grammar *g)
{
	struct sc c = { .g = g, .ws = GRAM_NIL };

	return ws(&c);
}

/*
 * One character of a string: printable ASCII, an escape, or a whole UTF-8
 * one.  @bmp: of the Basic Multilingual Plane only (no 4-byte UTF-8, no
 * surrogate escape), for strings of a bounded length, which JSON Schema
 * counts in code points and JavaScript's validators (zod) in UTF-16 units:
 * the two agree on such strings.
 */
static uint32_t chr(struct sc *c, int bmp)
{
	struct grammar *g = c->g;
	uint64_t plain[4] = { 0 }, esc[4] = { 0 };
	uint32_t r, hex;
	unsigned int b;
	const char *e;

	if (c->chr[bmp] != GRAM_NIL)
		return c->chr[bmp];
	for (b = 0x20; b < 0x80; b++)
		if (b != '"' && b != '\\')
			plain[b >> 6] |= 1ull << (b & 63);
	for (e = "\"\\/bfnrt"; *e; e++)
		esc[(uint8_t)*e >> 6] |= 1ull << ((uint8_t)*e & 63);
	hex = gram_rule_new(g);
	gram_add_range(g, hex, '0', '9');
	gram_or(g, hex);
	gram_add_range(g, hex, 'a', 'f');
	gram_or(g, hex);
	gram_add_range(g, hex, 'A', 'F');
	r = gram_rule_new(g);
	gram_add_set(g, r, plain);
	gram_or(g, r);
	gram_add_byte(g, r, '\\');
	gram_add_set(g, r, esc);
	gram_or(g, r);
	gram_add_text(g, r, "\\u", 2);
	if (bmp) {
		/* no surrogate: not \uD800 to \uDFFF */
		uint64_t first[4] = { 0 };

		for (e = "0123456789abcefABCEF"; *e; e++)
			first[(uint8_t)*e >> 6] |= 1ull << ((uint8_t)*e & 63);
		gram_add_set(g, r, first);
		gram_add_rule(g, r, hex);
		gram_add_rule(g, r, hex);
		gram_add_rule(g, r, hex);
		gram_or(g, r);
		gram_add_text(g, r, "\\u", 2);
		gram_add_range(g, r, 'd', 'd');
		gram_add_range(g, r, '0', '7');
		gram_add_rule(g, r, hex);
		gram_add_rule(g, r, hex);
		gram_or(g, r);
		gram_add_text(g, r, "\\u", 2);
		gram_add_range(g, r, 'D', 'D');
		gram_add_range(g, r, '0', '7');
	} else {
		gram_add_rule(g, r, hex);
		gram_add_rule(g, r, hex);
	}
	gram_add_rule(g, r, hex);
	gram_add_rule(g, r, hex);
	/* UTF-8 as RFC 3629 has it: no overlong form, no surrogate */
	gram_or(g, r);
	gram_add_range(g, r, 0xc2, 0xdf);
	gram_add_range(g, r, 0x80, 0xbf);
	gram_or(g, r);
	gram_add_byte(g, r, 0xe0);
	gram_add_range(g, r, 0xa0, 0xbf);
	gram_add_range(g, r, 0x80, 0xbf);
	gram_or(g, r);
	gram_add_range(g, r, 0xe1, 0xec);
	gram_add_range(g, r, 0x80, 0xbf);
	gram_add_range(g, r, 0x80, 0xbf);
	gram_or(g, r);
	gram_add_byte(g, r, 0xed);
	gram_add_range(g, r, 0x80, 0x9f);
	gram_add_range(g, r, 0x80, 0xbf);
	gram_or(g, r);
	gram_add_range(g, r, 0xee, 0xef);
	gram_add_range(g, r, 0x80, 0xbf);
	gram_add_range(g, r, 0x80, 0xbf);
	if (!bmp) {
		gram_or(g, r);
		gram_add_byte(g, r, 0xf0);
		gram_add_range(g, r, 0x90, 0xbf);
		gram_add_range(g, r, 0x80, 0xbf);
		gram_add_range(g, r, 0x80, 0xbf);
		gram_or(g, r);
		gram_add_range(g, r, 0xf1, 0xf3);
		gram_add_range(g, r, 0x80, 0xbf);
		gram_add_range(g, r, 0x80, 0xbf);
		gram_add_range(g, r, 0x80, 0xbf);
		gram_or(g, r);
		gram_add_byte(g, r, 0xf4);
		gram_add_range(g, r, 0x80, 0x8f);
		gram_add_range(g, r, 0x80, 0xbf);
		gram_add_range(g, r, 0x80, 0xbf);
	}
	c->chr[bmp] = r;
	return r;
}

/* A string of @min to @max characters (GRAM_NIL: no most). */
static uint32_t string_of(struct sc *c, uint32_t min, uint32_t max)
{
	uint32_t r = gram_rule_new(c->g);

	gram_add_byte(c->g, r, '"');
	gram_add_rule(c->g, r, gram_repeat(c->g, chr(c, min || max != GRAM_NIL), min, max));
	gram_add_byte(c->g, r, '"');
	return r;
}

static uint32_t string(struct sc *c)
{
	if (c->string == GRAM_NIL)
		c->string = string_of(c, 0, GRAM_NIL);
	return c->string;
}

static uint32_t digits(struct sc *c, uint32_t min, uint32_t max)
{
	uint32_t d = gram_rule_new(c->g);

	gram_add_range(c->g, d, '0', '9');
	return gram_repeat(c->g, d, min, max);
}

/* -?(0|[1-9][0-9]{0,15}) */
static uint32_t integer(struct sc *c)
{
	struct grammar *g = c->g;
	uint32_t r, minus;

	if (c->integer != GRAM_NIL)
		return c->integer;
	minus = gram_opt(g, gram_literal(g, "-", 1));
	r = gram_rule_new(g);
	gram_add_rule(g, r, minus);
	gram_add_byte(g, r, '0');
	gram_or(g, r);
	gram_add_rule(g, r, minus);
	gram_add_range(g, r, '1', '9');
	gram_add_rule(g, r, digits(c, 0, JSON_MAX_DIGITS - 1));
	c->integer = r;
	return r;
}

/* integer (.[0-9]{1,16})? ([eE][-+]?[0-9]{1,3})? */
static uint32_t number(struct sc *c)
{
	struct grammar *g = c->g;
	uint32_t r, frac, exp, sign;

	if (c->number != GRAM_NIL)
		return c->number;
	frac = gram_rule_new(g);
	gram_add_byte(g, frac, '.');
	gram_add_rule(g, frac, digits(c, 1, JSON_MAX_DIGITS));
	sign = gram_rule_new(g);
	gram_add_byte(g, sign, '-');
	gram_or(g, sign);
	gram_add_byte(g, sign, '+');
	gram_or(g, sign);
	exp = gram_rule_new(g);
	gram_add_range(g, exp, 'E', 'E');
	gram_add_rule(g, exp, sign);
	gram_add_rule(g, exp, digits(c, 1, 3));
	gram_or(g, exp);
	gram_add_byte(g, exp, 'e');
	gram_add_rule(g, exp, sign);
	gram_add_rule(g, exp, digits(c, 1, 3));
	r = gram_rule_new(g);
	gram_add_rule(g, r, integer(c));
	gram_add_rule(g, r, gram_opt(g, frac));
	gram_add_rule(g, r, gram_opt(g, exp));
	c->number = r;
	return r;
}

/* "[" ws (item ws ("," ws item ws){min-1,max-1})? "]" */
static uint32_t array_of(struct sc *c, uint32_t item, uint32_t min, uint32_t max)
{
	struct grammar *g = c->g;
	uint32_t r, first, more, list;

	first = gram_rule_new(g);
	gram_add_rule(g, first, item);
	gram_add_rule(g, first, ws(c));
	more = gram_rule_new(g);
	gram_add_byte(g, more, ',');
	gram_add_rule(g, more, ws(c));
	gram_add_rule(g, more, first);
	list = gram_rule_new(g);
	gram_add_rule(g, list, first);
	gram_add_rule(g, list, gram_repeat(g, more, min ? min - 1 : 0,
					   max == GRAM_NIL ? GRAM_NIL : max - 1));
	r = gram_rule_new(g);
	gram_add_byte(g, r, '[');
	gram_add_rule(g, r, ws(c));
	if (max != 0)
		gram_add_rule(g, r, min ? list : gram_opt(g, list));
	gram_add_byte(g, r, ']');
	return r;
}

/* "{" ws (member ("," ws member)*)? "}", member: string ws ":" ws value ws */
static uint32_t map_of(struct sc *c, uint32_t value)
{
	struct grammar *g = c->g;
	uint32_t r, member, more;

	member = gram_rule_new(g);
	gram_add_rule(g, member, string(c));
	gram_add_rule(g, member, ws(c));
	gram_add_byte(g, member, ':');
	gram_add_rule(g, member, ws(c));
	gram_add_rule(g, member, value);
	gram_add_rule(g, member, ws(c));
	more = gram_rule_new(g);
	gram_add_byte(g, more, ',');
	gram_add_rule(g, more, ws(c));
	gram_add_rule(g, more, member);
	r = gram_rule_new(g);
	gram_add_rule(g, r, member);
	gram_add_rule(g, r, gram_star(g, more));
	member = r;
	r = gram_rule_new(g);
	gram_add_byte(g, r, '{');
	gram_add_rule(g, r, ws(c));
	gram_add_rule(g, r, gram_opt(g, member));
	gram_add_byte(g, r, '}');
	return r;
}

/* Any JSON value. */
static uint32_t value(struct sc *c)
{
	struct grammar *g = c->g;
	uint32_t r;

	if (c->value != GRAM_NIL)
		return c->value;
	r = gram_rule_new(g);
	c->value = r;
	gram_add_rule(g, r, map_of(c, r));
	gram_or(g, r);
	gram_add_rule(g, r, array_of(c, r, 0, GRAM_NIL));
	gram_or(g, r);
	gram_add_rule(g, r, string(c));
	gram_or(g, r);
	gram_add_rule(g, r, number(c));
	gram_or(g, r);
	gram_add_text(g, r, "true", 4);
	gram_or(g, r);
	gram_add_text(g, r, "false", 5);
	gram_or(g, r);
	gram_add_text(g, r, "null", 4);
	return r;
}

/* --- schemas ------------------------------------------------------------------ */

static uint32_t compile(struct sc *c, const cJSON *s, int depth);

/* The JSON text of @v, as a rule that matches it alone. */
static uint32_t literal_of(struct sc *c, const cJSON *v)
{
	char *t = cJSON_PrintUnformatted(v);
	uint32_t r;

	if (!t)
		return fail(c, "out of memory");
	r = gram_literal(c->g, t, strlen(t));
	free(t);
	return r;
}

/* A count keyword (minItems, ...): @dflt when absent. */
static int count(struct sc *c, const cJSON *s, const char *key, uint32_t dflt, uint32_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);

	*out = dflt;
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > SCHEMA_MAX_COUNT ||
	    v->valuedouble != (double)(uint32_t)v->valuedouble) {
		fail(c, "%s must be a whole number from 0 to %u", key, SCHEMA_MAX_COUNT);
		return -1;
	}
	*out = (uint32_t)v->valuedouble;
	return 0;
}

static uint32_t object(struct sc *c, const cJSON *s, int depth)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
	struct grammar *g = c->g;
	uint32_t n, k, r, first, more, next_first = GRAM_NIL, next_more = GRAM_NIL, member;
	const cJSON *p, *q;
	int required;

	if (props && !cJSON_IsObject(props))
		return fail(c, "properties must be an object");
	if (req && !cJSON_IsArray(req))
		return fail(c, "required must be an array");
	cJSON_ArrayForEach(q, req) {
		if (!cJSON_IsString(q))
			return fail(c, "required must list names");
		if (!cJSON_GetObjectItemCaseSensitive(props, q->valuestring))
			return fail(c, "required names \"%s\", which is not in properties",
				    q->valuestring);
	}
	if (!props || !props->child) {
		if (req && req->child)
			return fail(c, "required without properties");
		return map_of(c, cJSON_IsObject(extra) ? compile(c, extra, depth + 1) : value(c));
	}
	n = (uint32_t)cJSON_GetArraySize(props);
	/* from the last property back: first_k and more_k need first_k+1 and more_k+1 */
	for (k = n; k-- > 0;) {
		p = cJSON_GetArrayItem(props, (int)k);
		required = 0;
		cJSON_ArrayForEach(q, req)
			required |= !strcmp(q->valuestring, p->string);
		member = gram_rule_new(g);
		{
			cJSON *key = cJSON_CreateString(p->string);

			if (!key)
				return fail(c, "out of memory");
			gram_add_rule(g, member, literal_of(c, key));
			cJSON_Delete(key);
		}
		gram_add_rule(g, member, ws(c));
		gram_add_byte(g, member, ':');
		gram_add_rule(g, member, ws(c));
		gram_add_rule(g, member, compile(c, p, depth + 1));
		gram_add_rule(g, member, ws(c));
		more = gram_rule_new(g);
		gram_add_byte(g, more, ',');
		gram_add_rule(g, more, ws(c));
		gram_add_rule(g, more, member);
		if (next_more != GRAM_NIL)
			gram_add_rule(g, more, next_more);
		first = gram_rule_new(g);
		gram_add_rule(g, first, member);
		if (next_more != GRAM_NIL)
			gram_add_rule(g, first, next_more);
		if (!required) {
			gram_or(g, more);
			if (next_more != GRAM_NIL)
				gram_add_rule(g, more, next_more);
			gram_or(g, first);
			if (next_first != GRAM_NIL)
				gram_add_rule(g, first, next_first);
		}
		next_more = more;
		next_first = first;
	}
	r = gram_rule_new(g);
	gram_add_byte(g, r, '{');
	gram_add_rule(g, r, ws(c));
	gram_add_rule(g, r, next_first);
	gram_add_byte(g, r, '}');
	return r;
}

/*
 * One end of a number's range: @incl (minimum, maximum) and @excl
 * (exclusiveMinimum, exclusiveMaximum: a number, or draft 4's true making
 * @incl exclusive), the tighter, into *@at and *@is_excl; @sign -1 for the
 * low end, +1 for the high.  @whole: integers (the bound rounded inwards);
 * else a bound must be whole.  0, or -1 (failed).
 */
static int bound(struct sc *c, const cJSON *s, const char *incl, const char *excl, int sign,
		 int whole, int64_t *at, int *is_excl)
{
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(s, incl);
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(s, excl);
	double v[2];
	int k, ex[2] = { 0, 1 }, have[2];

	have[0] = !!i;
	have[1] = x && !cJSON_IsBool(x);
	if ((i && !cJSON_IsNumber(i)) || (have[1] && !cJSON_IsNumber(x))) {
		fail(c, "%s and %s must be numbers", incl, excl);
		return -1;
	}
	if (cJSON_IsTrue(x))
		ex[0] = 1;
	v[0] = i ? i->valuedouble : 0;
	v[1] = have[1] ? x->valuedouble : 0;
	*at = sign * RANGE_MAX;
	*is_excl = 0;
	for (k = 0; k < 2; k++) {
		double b = v[k];
		int e = ex[k];
		int64_t w;

		if (!have[k])
			continue;
		if (whole) {
			/* the first integer inside: ceil of a low end, floor of a high one */
			b = sign < 0 ? (e ? floor(b) + 1 : ceil(b)) : (e ? ceil(b) - 1 : floor(b));
			e = 0;
		} else if (b != floor(b)) {
			fail(c, "%s %g: a number's bounds must be whole numbers", k ? excl : incl,
			     b);
			return -1;
		}
		w = b <= -RANGE_MAX ? -RANGE_MAX : b >= RANGE_MAX ? RANGE_MAX : (int64_t)b;
		if (sign < 0 ? (w > *at || (w == *at && e)) : (w < *at || (w == *at && e))) {
			*at = w;
			*is_excl = e;
		}
	}
	return 0;
}

/* A number or an integer, in its range if it has one. */
static uint32_t numeric(struct sc *c, const cJSON *s, int whole)
{
	int64_t lo, hi;
	int lo_excl, hi_excl;

	if (bound(c, s, "minimum", "exclusiveMinimum", -1, whole, &lo, &lo_excl) ||
	    bound(c, s, "maximum", "exclusiveMaximum", 1, whole, &hi, &hi_excl))
		return GRAM_NIL;
	if (lo == -RANGE_MAX && hi == RANGE_MAX)
		return whole ? integer(c) : number(c);
	if (lo > hi || (lo == hi && (lo_excl || hi_excl)))
		return fail(c, "no %s is within minimum and maximum", whole ? "integer" : "number");
	return whole ? range_integer(c->g, lo, hi) : range_number(c->g, lo, lo_excl, hi, hi_excl);
}

static uint32_t of_type(struct sc *c, const cJSON *s, const char *type, int depth)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
	uint32_t min, max;

	if (!strcmp(type, "object"))
		return object(c, s, depth);
	if (!strcmp(type, "array")) {
		if (items && !cJSON_IsObject(items) && !cJSON_IsBool(items))
			return fail(c, "items must be a schema (a list of them is not supported)");
		if (count(c, s, "minItems", 0, &min) || count(c, s, "maxItems", GRAM_NIL, &max))
			return GRAM_NIL;
		if (max < min)
			return fail(c, "maxItems is less than minItems");
		return array_of(c, items ? compile(c, items, depth + 1) : value(c), min, max);
	}
	if (!strcmp(type, "string")) {
		if (count(c, s, "minLength", 0, &min) || count(c, s, "maxLength", GRAM_NIL, &max))
			return GRAM_NIL;
		if (max < min)
			return fail(c, "maxLength is less than minLength");
		return min == 0 && max == GRAM_NIL ? string(c) : string_of(c, min, max);
	}
	if (!strcmp(type, "number") || !strcmp(type, "integer"))
		return numeric(c, s, type[0] == 'i');
	if (!strcmp(type, "boolean")) {
		uint32_t r = gram_rule_new(c->g);

		gram_add_text(c->g, r, "true", 4);
		gram_or(c->g, r);
		gram_add_text(c->g, r, "false", 5);
		return r;
	}
	if (!strcmp(type, "null"))
		return gram_literal(c->g, "null", 4);
	return fail(c, "unknown type \"%s\"", type);
}

/* Where "$ref" points: "#", "#/$defs/name" and other JSON pointers into the root. */
static const cJSON *resolve(struct sc *c, const char *ref)
{
	const cJSON *at = c->root;
	char part[256];
	const char *p;
	size_t n;

	if (ref[0] != '#')
		return NULL;
	for (p = ref + 1; *p == '/'; p += 0) {
		p++;
		for (n = 0; *p && *p != '/' && n + 1 < sizeof(part); p++) {
			if (*p == '~' && (p[1] == '0' || p[1] == '1')) {
				part[n++] = p[1] == '0' ? '~' : '/';
				p++;
			} else {
				part[n++] = *p;
			}
		}
		part[n] = 0;
		at = cJSON_IsArray(at) ? cJSON_GetArrayItem(at, atoi(part)) :
		     cJSON_GetObjectItemCaseSensitive(at, part);
		if (!at)
			return NULL;
	}
	return *p ? NULL : at;
}

static uint32_t ref(struct sc *c, const char *name, int depth)
{
	const cJSON *at = resolve(c, name);
	uint32_t r, i;

	if (!at)
		return fail(c, "$ref \"%s\" points nowhere in the schema", name);
	for (i = 0; i < c->n_refs; i++)
		if (c->refs[i].at == at)
			return c->refs[i].rule;
	if (c->n_refs == SCHEMA_MAX_REFS)
		return fail(c, "more than %u $ref targets", SCHEMA_MAX_REFS);
	/* made before its body, which may refer to it */
	r = gram_rule_new(c->g);
	c->refs[c->n_refs].at = at;
	c->refs[c->n_refs++].rule = r;
	gram_add_rule(c->g, r, compile(c, at, depth + 1));
	return r;
}

/* Keywords this compiler understands or may leave alone. */
static const char *const known[] = {
	"type", "properties", "required", "additionalProperties", "items", "minItems",
	"maxItems", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "enum", "const", "anyOf", "oneOf", "allOf",
	"nullable", "$ref", "$defs", "definitions", "title", "description", "default",
	"examples", "$schema", "$id", "$comment", "strict",
};

static uint32_t alternatives(struct sc *c, const cJSON *list, const char *key, int depth)
{
	uint32_t r = gram_rule_new(c->g);
	const cJSON *a;

	if (!cJSON_IsArray(list) || !list->child)
		return fail(c, "%s must be a list of schemas", key);
	cJSON_ArrayForEach(a, list) {
		if (a != list->child)
			gram_or(c->g, r);
		gram_add_rule(c->g, r, compile(c, a, depth + 1));
	}
	return r;
}

static uint32_t compile(struct sc *c, const cJSON *s, int depth)
{
	const cJSON *k, *type, *v;
	uint32_t r;
	size_t i;

	if (c->failed)
		return GRAM_NIL;
	if (depth > SCHEMA_MAX_DEPTH)
		return fail(c, "the schema nests deeper than %d", SCHEMA_MAX_DEPTH);
	if (cJSON_IsTrue(s))
		return value(c);
	if (!cJSON_IsObject(s))
		return fail(c, "a schema must be an object (or true)");
	cJSON_ArrayForEach(k, s) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(k->string, known[i]))
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			return fail(c, "the schema keyword \"%s\" is not supported", k->string);
	}
	v = cJSON_GetObjectItemCaseSensitive(s, "$ref");
	if (v)
		return cJSON_IsString(v) ? ref(c, v->valuestring, depth) :
		       fail(c, "$ref must be a string");
	v = cJSON_GetObjectItemCaseSensitive(s, "nullable");
	if (cJSON_IsTrue(v)) {
		cJSON *copy = cJSON_Duplicate(s, 1);

		if (!copy)
			return fail(c, "out of memory");
		cJSON_DeleteItemFromObjectCaseSensitive(copy, "nullable");
		r = gram_rule_new(c->g);
		gram_add_rule(c->g, r, compile(c, copy, depth + 1));
		cJSON_Delete(copy);
		gram_or(c->g, r);
		gram_add_text(c->g, r, "null", 4);
		return r;
	}
	v = cJSON_GetObjectItemCaseSensitive(s, "const");
	if (v)
		return literal_of(c, v);
	v = cJSON_GetObjectItemCaseSensitive(s, "enum");
	if (v) {
		if (!cJSON_IsArray(v) || !v->child)
			return fail(c, "enum must be a list of values");
		r = gram_rule_new(c->g);
		cJSON_ArrayForEach(k, v) {
			if (k != v->child)
				gram_or(c->g, r);
			gram_add_rule(c->g, r, literal_of(c, k));
		}
		return r;
	}
	v = cJSON_GetObjectItemCaseSensitive(s, "anyOf");
	if (!v)
		v = cJSON_GetObjectItemCaseSensitive(s, "oneOf");
	if (v)
		return alternatives(c, v, v->string, depth);
	v = cJSON_GetObjectItemCaseSensitive(s, "allOf");
	if (v) {
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 1)
			return fail(c, "allOf is supported with one schema only");
		return compile(c, v->child, depth + 1);
	}
	type = cJSON_GetObjectItemCaseSensitive(s, "type");
	if (cJSON_IsString(type))
		return of_type(c, s, type->valuestring, depth);
	if (cJSON_IsArray(type) && type->child) {
		r = gram_rule_new(c->g);
		cJSON_ArrayForEach(k, type) {
			if (!cJSON_IsString(k))
				return fail(c, "type must name types");
			if (k != type->child)
				gram_or(c->g, r);
			gram_add_rule(c->g, r, of_type(c, s, k->valuestring, depth));
		}
		return r;
	}
	if (type)
		return fail(c, "type must be a name or a list of names");
	if (cJSON_GetObjectItemCaseSensitive(s, "properties"))
		return object(c, s, depth);
	if (cJSON_GetObjectItemCaseSensitive(s, "items"))
		return of_type(c, s, "array", depth);
	return value(c);
}

uint32_t schema_rule(struct grammar *g, const cJSON *schema, char *err, size_t errlen)
{
	struct sc *c = calloc(1, sizeof(*c));
	uint32_t r;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return GRAM_NIL;
	}
	c->g = g;
	c->root = schema;
	c->err = err;
	c->errlen = errlen;
	c->ws = GRAM_NIL;
	c->chr[0] = GRAM_NIL;
	c->chr[1] = GRAM_NIL;
	c->string = GRAM_NIL;
	c->number = GRAM_NIL;
	c->integer = GRAM_NIL;
	c->value = GRAM_NIL;
	r = schema ? compile(c, schema, 0) : map_of(c, value(c));
	if (!c->failed && g->oom)
		fail(c, "out of memory");
	if (c->failed)
		r = GRAM_NIL;
	free(c);
	return r;
}
