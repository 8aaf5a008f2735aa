// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_tagged - answers with tagged tool calls (serve_tagged.h:
 * Hermes, Llama 3.x, Mistral, DeepSeek and GLM's formats) split into
 * reasoning, content and tool calls: each answer below cut into two and
 * three pieces at every place (the tags split anywhere, as tokens split
 * them), and its parts always the same: the calls with their arguments,
 * the thinking, the content, no tag left in what was parsed and no text
 * lost of what was not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "serve_tagged.h"

struct parts {
	char content[512], reasoning[256], calls[512];
	size_t nc, nr, nk;
	size_t content_bytes;		/* all of it, whether it fit or not */
};

static void add(char *buf, size_t *n, size_t cap, const char *s, size_t len)
{
	if (*n + len < cap) {
		memcpy(buf + *n, s, len);
		*n += len;
		buf[*n] = 0;
	}
}

static int emit(void *arg, enum text_part part, const char *s, size_t n)
{
	struct parts *p = arg;

	switch (part) {
	case PART_CONTENT:
		p->content_bytes += n;
		add(p->content, &p->nc, sizeof(p->content), s, n);
		break;
	case PART_REASONING:
		add(p->reasoning, &p->nr, sizeof(p->reasoning), s, n);
		break;
	case PART_TOOL_NAME:
		add(p->calls, &p->nk, sizeof(p->calls), s, n);
		add(p->calls, &p->nk, sizeof(p->calls), "(", 1);
		break;
	case PART_TOOL_ARGS:
		add(p->calls, &p->nk, sizeof(p->calls), s, n);
		add(p->calls, &p->nk, sizeof(p->calls), ");", 2);
		break;
	}
	return 0;
}

/* @text fed in pieces ending at @a and @b (a <= b), then the end. */
static void run(enum call_family f, const cJSON *tools, const char *text, size_t a, size_t b,
		struct parts *p, unsigned int *calls)
{
	struct tagged h;
	size_t n = strlen(text);

	memset(p, 0, sizeof(*p));
	tagged_init(&h, f, tools, emit, p);
	CB_CHECK(!tagged_feed(&h, text, a) && !tagged_feed(&h, text + a, b - a) &&
		 !tagged_feed(&h, text + b, n - b) && !tagged_end(&h), "feed failed");
	*calls = h.n_calls;
	tagged_release(&h);
}

struct want {
	const char *text, *content, *reasoning, *calls;
	unsigned int n_calls;
};

/* DeepSeek's tags (serve_call_syntax.h) */
#define CB DS_CALLS_BEGIN
#define CE DS_CALLS_END
#define B1 DS_CALL_BEGIN
#define E1 DS_CALL_END
#define SP DS_SEP

static const struct want hermes_cases[] = {
	{ "Hello there.", "Hello there.", "", "", 0 },
	{ "<think>\nLet me see.\n</think>\n\nHi.", "Hi.", "\nLet me see.\n", "", 0 },
	{ "Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
	  "Sure.", "", "f({\"city\":\"Oslo\"});", 1 },
	{ "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\n"
	  "<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>",
	  "", "", "f({\"a\":1});g({});", 2 },
	{ "<think>hmm</think><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
	  "", "hmm", "f({});", 1 },
	/* arguments as JSON text; "parameters" for "arguments" */
	{ "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>",
	  "", "", "f({\"a\": 1});", 1 },
	{ "<tool_call>{\"name\": \"f\", \"parameters\": {\"b\": [1, 2]}}</tool_call>",
	  "", "", "f({\"b\":[1,2]});", 1 },
	/* not calls: all as content, tags and all */
	{ "<tool_call>not json</tool_call>after", "<tool_call>not json</tool_call>after", "", "", 0 },
	{ "<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>",
	  "", "", 0 },
	{ "<tool_call>{\"name\": \"f\", \"arguments\": 3}</tool_call>",
	  "<tool_call>{\"name\": \"f\", \"arguments\": 3}</tool_call>", "", "", 0 },
	{ "a <tool_call>{\"name\": \"f\", ", "a <tool_call>{\"name\": \"f\", ", "", "", 0 },
	/* a call whose end tag never came, its JSON whole: a call */
	{ "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"y\"}}\n", "", "",
	  "f({\"x\":\"y\"});", 1 },
	/* the start of a tag at the end is text */
	{ "a <tool", "a <tool", "", "", 0 },
	{ "<thi", "<thi", "", "", 0 },
	/* <think> only at the start; an open one is all reasoning */
	{ "x<think>y</think>", "x<think>y</think>", "", "", 0 },
	{ "<think>still thinking", "", "still thinking", "", 0 },
	/* text after a call */
	{ "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\n\nDone.", "Done.", "",
	  "f({});", 1 },
	{ NULL },
};

static const struct want llama3_cases[] = {
	{ "Hello.", "Hello.", "", "", 0 },
	/* JSON-based tool calling: the answer is the call */
	{ " {\"name\": \"f\", \"parameters\": {\"city\": \"Oslo\"}}", "", "",
	  "f({\"city\":\"Oslo\"});", 1 },
	/* JSON that is not a call: content, whole (a request without tools never holds it) */
	{ "{\"answer\": 42}", "{\"answer\": 42}", "", "", 0 },
	{ "<|python_tag|>{\"name\": \"g\", \"parameters\": {}}<|eom_id|>", "", "", "g({});", 1 },
	{ "Let me look.<|python_tag|>{\"name\": \"g\", \"parameters\": {\"q\": 1}}", "Let me look.",
	  "", "g({\"q\":1});", 1 },
	{ "a<|python_tag|>not a call", "a<|python_tag|>not a call", "", "", 0 },
	{ NULL },
};

static const struct want mistral_cases[] = {
	{ "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}}, "
	  "{\"name\": \"g\", \"arguments\": {}}]", "", "", "f({\"a\":1});g({});", 2 },
	{ "Sure. [TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]", "Sure. ", "", "f({});", 1 },
	/* v11: NAME[ARGS]{...}, each call led by [TOOL_CALLS] */
	{ "[TOOL_CALLS]f[ARGS]{\"a\": 1}[TOOL_CALLS]g[CALL_ID]abc123456[ARGS]{}", "", "",
	  "f({\"a\":1});g({});", 2 },
	{ "[TOOL_CALLS]oops", "[TOOL_CALLS]oops", "", "", 0 },
	{ "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": 1}]",
	  "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": 1}]", "", "", 0 },
	{ NULL },
};

static const struct want deepseek_cases[] = {
	/* V3 */
	{ "Checking." CB B1 "function" SP "f\n```json\n{\"city\": \"Oslo\"}\n```" E1 "\n"
	  B1 "function" SP "g\n```json\n{}\n```" E1 CE, "Checking.", "",
	  "f({\"city\":\"Oslo\"});g({});", 2 },
	/* V3.1, thinking first */
	{ "<think>hm</think>" CB B1 "f" SP "{\"a\": [1]}" E1 CE, "", "hm", "f({\"a\":[1]});", 1 },
	{ CB B1 "function" SP "f\n```json\n{\"a\": 1" E1 CE,
	  CB B1 "function" SP "f\n```json\n{\"a\": 1" E1 CE, "", "", 0 },
	{ NULL },
};

static const struct want glm_cases[] = {
	{ "<think>ok</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
	  "<arg_value>Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
	  "</tool_call>", "", "ok", "get_weather({\"city\":\"Oslo\",\"days\":3});", 1 },
	/* a string parameter stays a string, digits and all */
	{ "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>123</arg_value>\n</tool_call>"
	  "<tool_call>add\n<arg_key>a</arg_key><arg_value>1</arg_value>"
	  "<arg_key>b</arg_key><arg_value>[2]</arg_value></tool_call>", "", "",
	  "get_weather({\"city\":\"123\"});add({\"a\":1,\"b\":[2]});", 2 },
	{ "<tool_call>f\n</tool_call>", "", "", "f({});", 1 },
	{ "<tool_call>f\n<arg_key>x</tool_call>", "<tool_call>f\n<arg_key>x</tool_call>", "", "", 0 },
	{ NULL },
};

/* Kimi-K2's tags (serve_call_syntax.h) */
#define KB KIMI_CALLS_BEGIN
#define KE KIMI_CALLS_END
#define K1 KIMI_CALL_BEGIN
#define KA KIMI_ARGS_BEGIN
#define KZ KIMI_CALL_END

static const struct want kimi_cases[] = {
	{ "Let me check." KB K1 "functions.get_weather:0" KA "{\"city\": \"Oslo\"}" KZ
	  K1 "functions.add:1" KA "{\"a\": 1}" KZ KE, "Let me check.", "",
	  "get_weather({\"city\":\"Oslo\"});add({\"a\":1});", 2 },
	/* thinking first; an id that is the name alone */
	{ "<think>hm</think>" KB " " K1 "f" KA "{}" KZ " " KE, "", "hm", "f({});", 1 },
	/* a name with a colon but no index keeps it */
	{ KB K1 "functions.ns:tool" KA "{}" KZ KE, "", "", "ns:tool({});", 1 },
	/* not calls: arguments that are not an object, a call never ended */
	{ KB K1 "functions.f:0" KA "[1]" KZ KE, KB K1 "functions.f:0" KA "[1]" KZ KE, "", "", 0 },
	{ KB K1 "functions.f:0" KA "{}" KE, KB K1 "functions.f:0" KA "{}" KE, "", "", 0 },
	{ NULL },
};

static const struct {
	enum call_family family;
	const struct want *cases;
} families[] = {
	{ CALLS_HERMES, hermes_cases },
	{ CALLS_LLAMA3, llama3_cases },
	{ CALLS_MISTRAL, mistral_cases },
	{ CALLS_DEEPSEEK, deepseek_cases },
	{ CALLS_GLM, glm_cases },
	{ CALLS_KIMI, kimi_cases },
};

/* The tools GLM's string parameters are known by. */
static const char tools_json[] =
	"[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\":"
	" {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"},"
	" \"days\": {\"type\": \"integer\"}}}}}]";

static void test_every_cut(void)
{
	cJSON *tools = cJSON_Parse(tools_json);
	size_t f, i, a, b, n, runs = 0, total = 0;
	struct parts p;
	unsigned int calls;

	CB_CHECK(tools != NULL, "the tools parse");
	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
	for (i = 0; families[f].cases[i].text; i++, total++) {
		const struct want *w = &families[f].cases[i];
		int bad = 0;

		n = strlen(w->text);
		for (a = 0; a <= n && !bad; a++)
			for (b = a; b <= n && !bad; b++) {
				run(families[f].family, tools, w->text, a, b, &p, &calls);
				runs++;
				if (strcmp(p.content, w->content) || strcmp(p.reasoning, w->reasoning) ||
				    strcmp(p.calls, w->calls) || calls != w->n_calls) {
					bad = 1;
					CB_CHECK(0, "%s case %zu cut at %zu, %zu: content '%s' reasoning '%s' calls '%s' (%u)",
						 call_syntax(families[f].family)->name, i, a, b,
						 p.content, p.reasoning, p.calls, calls);
				}
			}
	}
	printf("# %zu cases of %zu formats, %zu ways of cutting them\n", total,
	       sizeof(families) / sizeof(families[0]), runs);
	cJSON_Delete(tools);
}

/* Without tools in the request, a Llama 3.x answer of JSON is content as it comes. */
static void test_bare_json_needs_tools(void)
{
	static const char text[] = "{\"name\": \"f\", \"parameters\": {}}";
	struct tagged h;
	struct parts p;

	memset(&p, 0, sizeof(p));
	tagged_init(&h, CALLS_LLAMA3, NULL, emit, &p);
	CB_CHECK(!tagged_feed(&h, text, 10), "feed");
	CB_CHECK(p.content_bytes == 10, "%zu bytes out before the end, not 10", p.content_bytes);
	CB_CHECK(!tagged_feed(&h, text + 10, strlen(text) - 10) && !tagged_end(&h), "end");
	CB_CHECK(!strcmp(p.content, text) && h.n_calls == 0, "content '%s', %u calls", p.content,
		 h.n_calls);
	tagged_release(&h);
}

/* A call's JSON past TAGGED_CALL_MAX is no call: out as content, nothing lost. */
static void test_long_call(void)
{
	size_t n = TAGGED_CALL_MAX + 100, i;
	char *s = malloc(n + 1);
	struct parts p;
	struct tagged h;

	memset(&p, 0, sizeof(p));
	if (!s)
		return;
	memcpy(s, "<tool_call>", 11);
	for (i = 11; i < n; i++)
		s[i] = 'x';
	s[n] = 0;
	tagged_init(&h, CALLS_HERMES, NULL, emit, &p);
	for (i = 0; i < n; i += 1000)
		CB_CHECK(!tagged_feed(&h, s + i, i + 1000 < n ? 1000 : n - i), "feed");
	CB_CHECK(!tagged_end(&h), "end");
	CB_CHECK(h.n_calls == 0 && p.content_bytes == n && !strncmp(p.content, "<tool_call>", 11),
		 "a long 'call': %u calls, %zu of %zu bytes as content ('%.20s')", h.n_calls,
		 p.content_bytes, n, p.content);
	tagged_release(&h);
	free(s);
}

int main(void)
{
	CB_RUN(test_every_cut);
	CB_RUN(test_long_call);
	CB_RUN(test_bare_json_needs_tools);
	return cb_test_done();
}
