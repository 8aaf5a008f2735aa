// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_jinja.c - the Jinja interpreter's constructs and, above all, its
 * errors: every refusal names the construct and its line:column, bounded
 * resources hold on hostile templates, and the chat layer (special tokens,
 * named templates, the fallback).  Agreement with @huggingface/jinja on
 * real templates and a constructs corpus is tests/chat_template/run's job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "cb_test.h"
#include "chat/chat_template.h"
#include "jinja/jinja.h"

static char err[512];

/* Render @tmpl with @vars_json (or none); NULL on failure (err holds why). */
static char *render(const char *tmpl, const char *vars_json)
{
	cJSON *vars = vars_json ? cJSON_Parse(vars_json) : NULL;
	struct cb_jinja *t = cb_jinja_parse(tmpl, strlen(tmpl), err, sizeof(err));
	char *out = NULL;
	size_t n;

	if (t && cb_jinja_render(t, vars, &out, &n, err, sizeof(err)))
		out = NULL;
	if (out && strlen(out) != n) {
		snprintf(err, sizeof(err), "length %zu but strlen %zu", n, strlen(out));
		free(out);
		out = NULL;
	}
	cb_jinja_free(t);
	cJSON_Delete(vars);
	return out;
}

#define RENDERS(tmpl, vars, want)						\
	do {									\
		char *o_ = render(tmpl, vars);					\
		CB_CHECK(o_ && !strcmp(o_, want), "%s -> %s (want %s)", tmpl,	\
			 o_ ? o_ : err, want);					\
		free(o_);							\
	} while (0)

/* Fails, and the message contains @needle (which starts with "L:C: "). */
#define FAILS(tmpl, vars, needle)						\
	do {									\
		char *o_ = render(tmpl, vars);					\
		CB_CHECK(!o_ && strstr(err, needle), "%s -> %s (want error '%s')",	\
			 tmpl, o_ ? o_ : err, needle);				\
		free(o_);							\
	} while (0)

static void test_statements(void)
{
	RENDERS("{% if a %}A{% elif b %}B{% else %}C{% endif %}", "{\"b\": 1}", "B");
	RENDERS("{% for x in xs %}{{ loop.index }}{{ x }}{% else %}none{% endfor %}",
		"{\"xs\": [\"a\", \"b\"]}", "1a2b");
	RENDERS("{% for x in [] %}x{% else %}none{% endfor %}", NULL, "none");
	RENDERS("{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}"
		"{% endfor %}{{ ns.n }}", NULL, "6");
	RENDERS("{% macro f(a, b='x') %}{{ a }}{{ b }}{% endmacro %}{{ f(1) }}{{ f(2, b=3) }}",
		NULL, "1x23");
	RENDERS("{% set s %}in {{ 1 + 1 }}{% endset %}[{{ s }}]", NULL, "[in 2]");
	RENDERS("{% filter upper %}abc{% endfilter %}", NULL, "ABC");
	RENDERS("a\n{%- if true %}\n  b{% endif %}\n", NULL, "a  b");
	RENDERS("{{ 'x' }}\n", NULL, "x");	/* one trailing newline dropped */
	RENDERS("{% generation %}g{% endgeneration %}", NULL, "g");
}

static void test_expressions(void)
{
	RENDERS("{{ 7 // 2 }} {{ 7 / 2 }} {{ 2 ** 3 }} {{ 1.0 }} {{ -0.0 }} {{ 2 if false }}",
		NULL, "3 3.5 8 1.0 -0.0 ");
	RENDERS("{{ x }}|{{ y }}", "{\"x\": 1e21, \"y\": 0.1}", "1e+21|0.1");
	RENDERS("{{ [1, 'a', none, true] }} {{ {'k': [2.5]} }}", NULL,
		"[1, \"a\", null, true] {\"k\": [2.5]}");
	RENDERS("{{ 'ab'[::-1] }} {{ [1, 2, 3][1:] }} {{ 'héllo'[1] }}", NULL, "ba [2, 3] é");
	RENDERS("{{ 'a' ~ 1.0 ~ true }} {{ 1 == 1.0 }} {{ 'b' in 'abc' }}", NULL,
		"a1true true true");
	RENDERS("{{ d|tojson }} {{ 'x\"\\n'|tojson }}", "{\"d\": {\"a\": [1, null]}}",
		"{\"a\": [1, null]} \"x\\\"\\n\"");
	RENDERS("{{ ' a b '.strip() }}|{{ 'a,b'.split(',') }}|{{ 'aXa'.replace('a', 'b') }}", NULL,
		"a b|[\"a\", \"b\"]|bXb");
	RENDERS("{{ messages[-1]['role'] }} {{ messages|length }} {{ m is defined }}",
		"{\"messages\": [{\"role\": \"user\"}, {\"role\": \"tool\"}]}", "tool 2 false");
	/* JSON input: integer-like keys first, as JavaScript objects order them */
	RENDERS("{% for k in d %}{{ k }}{% endfor %}", "{\"d\": {\"b\": 1, \"2\": 0, \"1\": 0}}",
		"12b");
}

/* Syntax errors and unsupported statements: name and line:column. */
static void test_parse_errors(void)
{
	FAILS("{% include 'x' %}", NULL, "1:4: 'include' is not supported");
	FAILS("line one\n  {% call m() %}{% endcall %}", NULL, "2:6: 'call' is not supported");
	FAILS("{% import 'm' as m %}", NULL, "1:4: 'import' is not supported");
	FAILS("{% raw %}x{% endraw %}", NULL, "'raw' is not supported");
	FAILS("{% frob %}", NULL, "1:4: unknown statement 'frob'");
	FAILS("{{ 6 is divisibleby(3) }}", NULL,
	      "1:9: test 'divisibleby' with an argument is not supported");
	FAILS("{{ f(*xs) }}", NULL, "1:6: argument unpacking (* and **) is not supported");
	FAILS("{% if x %}open", NULL, "unexpected end of template, expected {% elif %}");
	FAILS("{% for x in %}{% endfor %}", NULL, "1:13: unexpected '%}', expected an expression");
	FAILS("{{ 1 + }}", NULL, "1:8: unexpected '}}', expected an expression");
	FAILS("ok\n{{ 'unterminated }}", NULL, "2:4: unterminated string");
	FAILS("{{ x ", NULL, "unexpected end of template");
	FAILS("{# never closed", NULL, "1:1: comment is not closed");
	FAILS("{{ 'a\\qb' }}", NULL, "unexpected escaped character 'q'");
	FAILS("{{ 'é' ✓ }}", NULL, "1:8: unexpected character U+2713");
	FAILS("{% macro m(a, a) %}{% endmacro %}", NULL, "duplicate parameter 'a'");
	FAILS("{% for 1 in x %}{% endfor %}", NULL, "expected a name or a tuple of names");
	FAILS("{% endif %}", NULL, "1:4: unknown statement 'endif'");
}

/* Run-time refusals: never rendered some other way. */
static void test_runtime_errors(void)
{
	FAILS("{{ 'x'|wordcount }}", NULL, "1:8: filter 'wordcount' is not supported for a string");
	FAILS("\n  {{ 5|upper }}", NULL, "2:8: filter 'upper' is not supported for an integer");
	FAILS("{{ 1 is prime }}", NULL, "1:9: test 'prime' is not supported");
	FAILS("{{ foo() }}", NULL, "1:4: cannot call undefined");
	FAILS("{{ x + 1 }}", NULL, "1:6: operation on an undefined value");
	FAILS("{{ 'a' < 'b' }}", NULL, "operator not defined between a string and a string");
	FAILS("{{ raise_exception('No system role!') }}", NULL,
	      "1:4: raise_exception: No system role!");
	FAILS("{% for c in 'abc' %}{% endfor %}", NULL, "1:13: cannot loop over a string");
	FAILS("{% set d = {} %}{% set d.x = 1 %}", NULL, "can only set attributes of a namespace()");
	FAILS("{% break %}", NULL, "1:4: break outside of a loop");
	FAILS("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", NULL,
	      "macro 'm' takes not more than 1 argument(s)");
	FAILS("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}", NULL,
	      "macro 'm' takes no keyword argument 'b'");
	FAILS("{{ (1, 2)|tojson }}", NULL, "cannot convert a tuple to JSON");
	FAILS("{{ {'a': 1}|tojson(sort_keys=true) }}", NULL, "tojson(sort_keys=true) is not supported");
	FAILS("{{ 'Straße'.upper() }}", NULL, "upper case of U+00DF (special casing) is not supported");
	FAILS("{{ 'ΟΔΟΣ'|lower }}", NULL, "lower case of U+03A3");
	FAILS("{{ x[0] }}", "{\"x\": \"\\ud83d\\ude00\"}", "falls inside a character outside the BMP");
	FAILS("{{ [1] == 'a' }}", NULL, "comparing a list with a string is not supported");
	FAILS("{{ ['a']|map('upper')|list }}", NULL, "map without attribute= is not supported");
	FAILS("{{ [1, 'a']|sort }}", NULL, "cannot compare an integer with a string");
	FAILS("{{ []|first }}", NULL, "first of an empty list");
	FAILS("{{ 'x'.split('') }}", NULL, "split(): empty separator");
	FAILS("{{ range(1, 2, 0) }}", NULL, "range() step must not be zero");
	FAILS("{{ x }}", "{\"true\": 1}", "variable 'true' is a built-in name");
	RENDERS("{{ nothing }}{% if false %}x{% endif %}", NULL, "");
}

/* Hostile templates stay bounded: depth, recursion, loop and output sizes. */
static void test_limits(void)
{
	char *deep = malloc(20000), *o;
	size_t i;

	for (i = 0; i < 3000; i++)
		deep[i] = '(';
	strcpy(deep + 3000, "1");
	for (i = 0; i < 3000; i++)
		strcat(deep + 3000, ")");
	{
		char *t = malloc(strlen(deep) + 16);

		sprintf(t, "{{ %s }}", deep);
		o = render(t, NULL);
		CB_CHECK(!o && strstr(err, "nests deeper than"), "deep parens: %s", o ? o : err);
		free(o);
		free(t);
	}
	free(deep);
	FAILS("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", NULL,
	      "nests deeper than");
	FAILS("{{ range(100000000) }}", NULL, "range() longer than");
	FAILS("{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(40) %}"
	      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}", NULL, "");
	CB_CHECK(strstr(err, "memory") || strstr(err, "MiB"), "doubling string: %s", err);
}

/* Big dicts (past the linear-search size) keep order, lookups and last-wins. */
static void test_big_dicts(void)
{
	size_t cap = 5000 * 24 + 64, i, o = 0;
	char *js = malloc(cap), *out;

	o += snprintf(js + o, cap - o, "{\"d\": {");
	for (i = 0; i < 5000; i++)
		o += snprintf(js + o, cap - o, "%s\"k%zu\": %zu", i ? ", " : "", i, i);
	o += snprintf(js + o, cap - o, ", \"k17\": \"again\", \"42\": 0, \"7\": 1}}");
	out = render("{{ d.k4999 }} {{ d['k17'] }} {{ 'k123' in d }} {{ 'k5000' in d }} "
		     "{{ d|length }} {{ d.keys()[:3] }} {{ d.keys()[-1] }}", js);
	CB_CHECK(out && !strcmp(out, "4999 again true false 5002 [\"7\", \"42\", \"k0\"] k4999"),
		 "big dict: %s", out ? out : err);
	free(out);
	free(js);
	RENDERS("{% set ns = namespace() %}{% for i in range(300) %}{% set ns.x = i %}{% endfor %}"
		"{{ ns.x }}", NULL, "299");
}

static void test_strftime_now(void)
{
	char want[64], *out;
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(want, sizeof(want), "%Y-%m-%d %B %b %%%%Q", &tm);
	out = render("{{ strftime_now('%Y-%m-%d %B %b %%%Q') }}", NULL);
	/* %Q is not one of the reference's: kept as it is */
	CB_CHECK(out && !strcmp(out, want), "strftime_now: %s, want %s", out ? out : err, want);
	free(out);
}

static void test_chat_layer(void)
{
	static const char cfg[] =
		"{\"bos_token\": {\"content\": \"<s>\", \"__type\": \"AddedToken\"},"
		" \"eos_token\": \"</s>\", \"pad_token\": null,"
		" \"chat_template\": [{\"name\": \"default\", \"template\": \"{{ bos_token }}D"
		"{{ pad_token is none }}\"}, {\"name\": \"tool_use\", \"template\": \"T{{ tools|length }}\"}]}";
	cJSON *msgs = cJSON_Parse("[{\"role\": \"user\", \"content\": \"hi\"},"
				  " {\"role\": \"assistant\", \"content\": \"yo\"}]");
	cJSON *tools = cJSON_Parse("[{\"type\": \"function\"}]");
	struct cb_chat c;
	char *out = NULL;
	size_t n;

	CB_CHECK(!cb_chat_from_tokenizer_config(&c, cfg, sizeof(cfg) - 1, 0, err, sizeof(err)),
		 "config: %s", err);
	CB_CHECK(!cb_chat_render(&c, msgs, NULL, 0, NULL, &out, &n, err, sizeof(err)) && out &&
		 !strcmp(out, "<s>Dtrue"), "default template: %s", out ? out : err);
	free(out);
	cb_chat_release(&c);
	CB_CHECK(!cb_chat_from_tokenizer_config(&c, cfg, sizeof(cfg) - 1, 1, err, sizeof(err)),
		 "config: %s", err);
	CB_CHECK(!cb_chat_render(&c, msgs, tools, 0, NULL, &out, &n, err, sizeof(err)) && out &&
		 !strcmp(out, "T1"), "tool_use template: %s", out ? out : err);
	free(out);
	cb_chat_release(&c);
	/* no template: the documented fallback */
	CB_CHECK(!cb_chat_from_tokenizer_config(&c, "{}", 2, 0, err, sizeof(err)) && !c.tmpl,
		 "empty config: %s", err);
	CB_CHECK(!cb_chat_render(&c, msgs, NULL, 1, NULL, &out, &n, err, sizeof(err)) && out &&
		 !strcmp(out, "USER:\nhi\n\nASSISTANT:\nyo\n\nASSISTANT:\n"),
		 "fallback: %s", out ? out : err);
	free(out);
	CB_CHECK(cb_chat_render(&c, tools->child, NULL, 1, NULL, &out, &n, err, sizeof(err)) &&
		 strstr(err, "messages must be a JSON array"), "messages not a list: %s", err);
	cb_chat_release(&c);
	CB_CHECK(cb_chat_from_tokenizer_config(&c, "{\"chat_template\": 5}", 20, 0, err,
					       sizeof(err)) && strstr(err, "neither a string"),
		 "bad chat_template: %s", err);
	cJSON_Delete(msgs);
	cJSON_Delete(tools);
}

int main(void)
{
	CB_RUN(test_statements);
	CB_RUN(test_expressions);
	CB_RUN(test_parse_errors);
	CB_RUN(test_runtime_errors);
	CB_RUN(test_limits);
	CB_RUN(test_big_dicts);
	CB_RUN(test_strftime_now);
	CB_RUN(test_chat_layer);
	return cb_test_done();
}
