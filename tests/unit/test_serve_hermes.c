// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_hermes - Hermes-format answers (Qwen2.5/3, QwQ, Hermes) split
 * into reasoning, content and tool calls (serve_hermes.h): each answer
 * below cut into two and three pieces at every place (the tags split
 * anywhere, as tokens split them), and its parts always the same: the
 * calls with their arguments, the thinking, the content, no tag left in
 * what was parsed and no text lost of what was not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "serve_hermes.h"

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
static void run(const char *text, size_t a, size_t b, struct parts *p, unsigned int *calls)
{
	struct hermes h;
	size_t n = strlen(text);

	memset(p, 0, sizeof(*p));
	hermes_init(&h, emit, p);
	CB_CHECK(!hermes_feed(&h, text, a) && !hermes_feed(&h, text + a, b - a) &&
		 !hermes_feed(&h, text + b, n - b) && !hermes_end(&h), "feed failed");
	*calls = h.n_calls;
	hermes_release(&h);
}

struct want {
	const char *text, *content, *reasoning, *calls;
	unsigned int n_calls;
};

static const struct want cases[] = {
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
};

static void test_every_cut(void)
{
	size_t i, a, b, n, runs = 0;
	struct parts p;
	unsigned int calls;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct want *w = &cases[i];
		int bad = 0;

		n = strlen(w->text);
		for (a = 0; a <= n && !bad; a++)
			for (b = a; b <= n && !bad; b++) {
				run(w->text, a, b, &p, &calls);
				runs++;
				if (strcmp(p.content, w->content) || strcmp(p.reasoning, w->reasoning) ||
				    strcmp(p.calls, w->calls) || calls != w->n_calls) {
					bad = 1;
					CB_CHECK(0, "case %zu cut at %zu, %zu: content '%s' reasoning '%s' calls '%s' (%u)",
						 i, a, b, p.content, p.reasoning, p.calls, calls);
				}
			}
	}
	printf("# %zu cases, %zu ways of cutting them\n", sizeof(cases) / sizeof(cases[0]), runs);
}

/* A call's JSON past HERMES_CALL_MAX is no call: out as content, nothing lost. */
static void test_long_call(void)
{
	size_t n = HERMES_CALL_MAX + 100, i;
	char *s = malloc(n + 1);
	struct parts p;
	struct hermes h;

	memset(&p, 0, sizeof(p));
	if (!s)
		return;
	memcpy(s, "<tool_call>", 11);
	for (i = 11; i < n; i++)
		s[i] = 'x';
	s[n] = 0;
	hermes_init(&h, emit, &p);
	for (i = 0; i < n; i += 1000)
		CB_CHECK(!hermes_feed(&h, s + i, i + 1000 < n ? 1000 : n - i), "feed");
	CB_CHECK(!hermes_end(&h), "end");
	CB_CHECK(h.n_calls == 0 && p.content_bytes == n && !strncmp(p.content, "<tool_call>", 11),
		 "a long 'call': %u calls, %zu of %zu bytes as content ('%.20s')", h.n_calls,
		 p.content_bytes, n, p.content);
	hermes_release(&h);
	free(s);
}

int main(void)
{
	CB_RUN(test_every_cut);
	CB_RUN(test_long_call);
	return cb_test_done();
}
