// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * api_test.c - behaviours of the tokenizer library that the peer comparison
 * (check.js) cannot see: the streaming decoder, buffer sizes, BOS/EOS,
 * errors, and tokenizer.json features the two real files do not use
 * (merges as arrays, lstrip/rstrip/single_word/normalized added tokens,
 * Metaspace, unknown-token fusing).
 *
 * usage: api_test QWEN_TOKENIZER_JSON LLAMA_TOKENIZER_JSON
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "tokenizer.h"

static struct cb_tokenizer *qwen, *llama;

static long enc(const struct cb_tokenizer *t, const char *s, unsigned int flags, int32_t *ids,
		size_t cap)
{
	return cb_tok_encode(t, s, strlen(s), flags, ids, cap);
}

static int ids_eq(const int32_t *a, long n, const int32_t *b, long m)
{
	return n == m && !memcmp(a, b, n * sizeof(*a));
}

static struct cb_tokenizer *load_str(const char *json)
{
	char err[256];
	struct cb_tokenizer *t = cb_tok_load(json, strlen(json), err, sizeof(err));

	if (!t)
		printf("# load failed: %s\n", err);
	return t;
}

/* A tiny character-level BPE: vocab a b c ' ' ab abc, merges a+b, ab+c. */
#define TINY_VOCAB "\"vocab\":{\"<unk>\":0,\"a\":1,\"b\":2,\"c\":3,\" \":4,\"ab\":5,\"abc\":6,\"x\":7}"

static void test_stream_holds_partial_utf8(void)
{
	/* U+4E2D is E4 B8 AD: three byte-fallback tokens */
	int32_t e4 = cb_tok_token_id(llama, "<0xE4>", 6), b8 = cb_tok_token_id(llama, "<0xB8>", 6);
	int32_t ad = cb_tok_token_id(llama, "<0xAD>", 6), ff = cb_tok_token_id(llama, "<0xFF>", 6);
	struct cb_tok_stream st;
	char out[256];
	long r1, r2, r3, r4, r5;

	CB_CHECK(e4 >= 0 && b8 >= 0 && ad >= 0 && ff >= 0, "byte tokens missing");
	cb_tok_stream_init(&st, llama, 0);
	r1 = cb_tok_stream_feed(&st, e4, out, sizeof(out));
	r2 = cb_tok_stream_feed(&st, b8, out, sizeof(out));
	r3 = cb_tok_stream_feed(&st, ad, out, sizeof(out));
	CB_CHECK(r1 == 0 && r2 == 0, "partial character emitted early (%ld, %ld)", r1, r2);
	CB_CHECK(r3 == 3 && !memcmp(out, "\xe4\xb8\xad", 3), "complete character not emitted (%ld)",
		 r3);
	/* a lone lead byte followed by ASCII: U+FFFD then the ASCII */
	r4 = cb_tok_stream_feed(&st, e4, out, sizeof(out));
	r5 = cb_tok_stream_feed(&st, cb_tok_token_id(llama, "x", 1), out, sizeof(out));
	CB_CHECK(r4 == 0 && r5 == 4 && !memcmp(out, "\xef\xbf\xbdx", 4),
		 "broken sequence not replaced (%ld, %ld)", r4, r5);
	/* an unfinished sequence at the end becomes U+FFFD on flush */
	cb_tok_stream_feed(&st, e4, out, sizeof(out));
	r1 = cb_tok_stream_feed(&st, b8, out, sizeof(out));
	r2 = cb_tok_stream_flush(&st, out, sizeof(out));
	CB_CHECK(r1 == 0 && r2 == 3 && !memcmp(out, "\xef\xbf\xbd", 3), "flush gave %ld bytes", r2);
	CB_CHECK(cb_tok_stream_feed(&st, e4, out, 2) == -ENOSPC, "tiny buffer accepted");
}

static void test_stream_strips_first_space_only(void)
{
	int32_t ids[16];
	long n = enc(llama, "Hello world", 0, ids, 16), i, o = 0, r;
	struct cb_tok_stream st;
	char out[256];

	cb_tok_stream_init(&st, llama, 0);
	for (i = 0; i < n; i++) {
		r = cb_tok_stream_feed(&st, ids[i], out + o, sizeof(out) - o);
		CB_CHECK(r >= 0, "feed failed: %ld", r);
		o += r;
	}
	o += cb_tok_stream_flush(&st, out + o, sizeof(out) - o);
	CB_CHECK(o == 11 && !memcmp(out, "Hello world", 11), "stream gave '%.*s'", (int)o, out);
}

static void test_stream_emoji_split_across_tokens(void)
{
	int32_t ids[16];
	long n = enc(qwen, "\xf0\x9f\xa6\x9c", 0, ids, 16), i, o = 0, r;	/* parrot */
	struct cb_tok_stream st;
	char out[64];

	CB_CHECK(n >= 2, "expected the emoji to take several byte-level tokens, got %ld", n);
	cb_tok_stream_init(&st, qwen, 0);
	for (i = 0; i < n; i++) {
		r = cb_tok_stream_feed(&st, ids[i], out + o, sizeof(out) - o);
		CB_CHECK(i == n - 1 ? r == 4 : r == 0, "token %ld gave %ld bytes", i, r);
		o += r > 0 ? r : 0;
	}
	CB_CHECK(o == 4 && !memcmp(out, "\xf0\x9f\xa6\x9c", 4), "stream result wrong");
}

static void test_encode_reports_full_count(void)
{
	int32_t all[64], few[2] = { -7, -7 };
	long n = enc(qwen, "the quick brown fox jumps", 0, all, 64);
	long m = enc(qwen, "the quick brown fox jumps", 0, few, 2);
	long z = enc(qwen, "the quick brown fox jumps", 0, NULL, 0);

	CB_CHECK(n == 5 && m == n && z == n, "counts %ld %ld %ld", n, m, z);
	CB_CHECK(few[0] == all[0] && few[1] == all[1], "prefix not stored");
	CB_CHECK(enc(qwen, "", 0, all, 64) == 0, "empty text gave ids");
	CB_CHECK(enc(qwen, "x", 1u << 20, all, 64) == -EINVAL, "unknown flag accepted");
}

static void test_bos_eos(void)
{
	int32_t ids[16];
	long n;

	CB_CHECK(cb_tok_bos_id(llama) == 1 && cb_tok_eos_id(llama) == 2, "llama bos %d eos %d",
		 cb_tok_bos_id(llama), cb_tok_eos_id(llama));
	CB_CHECK(cb_tok_bos_id(qwen) == -1 && cb_tok_eos_id(qwen) == 151643, "qwen bos %d eos %d",
		 cb_tok_bos_id(qwen), cb_tok_eos_id(qwen));
	n = enc(llama, "hi", CB_TOK_ADD_SPECIAL | CB_TOK_ADD_BOS | CB_TOK_ADD_EOS, ids, 16);
	CB_CHECK(n >= 3 && ids[0] == 1 && ids[1] != 1 && ids[n - 1] == 2,
		 "template + BOS should not double the BOS (n=%ld)", n);
	n = enc(qwen, "hi", CB_TOK_ADD_SPECIAL, ids, 16);
	CB_CHECK(n == 1, "qwen has no template tokens, got %ld ids", n);
	CB_CHECK(cb_tok_vocab_size(qwen) == 151669 && cb_tok_vocab_size(llama) == 32000,
		 "vocab sizes %zu %zu", cb_tok_vocab_size(qwen), cb_tok_vocab_size(llama));
}

static void test_apply_config(void)
{
	static const char cfg[] = "{\"bos_token\":null,\"eos_token\":\"<|im_end|>\"}";

	CB_CHECK(cb_tok_apply_config(qwen, cfg, strlen(cfg)) == 0, "config rejected");
	CB_CHECK(cb_tok_eos_id(qwen) == 151645, "eos %d", cb_tok_eos_id(qwen));
	CB_CHECK(cb_tok_apply_config(qwen, "{", 1) == -EINVAL, "bad config accepted");
	cb_tok_set_eos_id(qwen, 151643);
}

static void test_decode_errors_and_skip_special(void)
{
	int32_t bad[] = { 5, 999999 }, sp[] = { 151644, 9707 };
	char out[64];
	long r;

	CB_CHECK(cb_tok_decode(qwen, bad, 2, 0, out, sizeof(out)) == -EINVAL, "bad id decoded");
	r = cb_tok_decode(qwen, sp, 2, CB_TOK_SKIP_SPECIAL, out, sizeof(out));
	CB_CHECK(r == 5 && !memcmp(out, "Hello", 5), "skip special gave %ld", r);
	r = cb_tok_decode(qwen, sp, 2, 0, out, sizeof(out));
	CB_CHECK(r == 17 && !memcmp(out, "<|im_start|>Hello", 17), "with special gave %ld", r);
	CB_CHECK(cb_tok_is_special(qwen, 151644) && !cb_tok_is_special(qwen, 151667) &&
		 !cb_tok_is_special(qwen, 9707), "special flags wrong");
}

static void test_load_errors_name_the_problem(void)
{
	char err[256];
	struct cb_tokenizer *t;

	t = cb_tok_load("not json", 8, err, sizeof(err));
	CB_CHECK(!t && strstr(err, "JSON"), "err '%s'", err);
	t = cb_tok_load("{\"model\":{\"type\":\"WordPiece\"}}", 31, err, sizeof(err));
	CB_CHECK(!t && strstr(err, "WordPiece"), "err '%s'", err);
	t = cb_tok_load("{\"model\":{\"type\":\"BPE\"," TINY_VOCAB ",\"merges\":[\"a q\"]}}",
			strlen("{\"model\":{\"type\":\"BPE\"," TINY_VOCAB ",\"merges\":[\"a q\"]}}"),
			err, sizeof(err));
	CB_CHECK(!t && strstr(err, "merge 0"), "err '%s'", err);
	t = cb_tok_load_file("/nonexistent/tokenizer.json", err, sizeof(err));
	CB_CHECK(!t && strstr(err, "/nonexistent"), "err '%s'", err);
}

static void test_merges_array_and_string_forms_agree(void)
{
	struct cb_tokenizer *s = load_str("{\"model\":{\"type\":\"BPE\"," TINY_VOCAB
					  ",\"merges\":[\"a b\",\"ab c\"]}}");
	struct cb_tokenizer *a = load_str("{\"model\":{\"type\":\"BPE\"," TINY_VOCAB
					  ",\"merges\":[[\"a\",\"b\"],[\"ab\",\"c\"]]}}");
	int32_t x[16], y[16], want[] = { 6, 4, 5, 2, 4, 3 };
	long n, m;

	CB_CHECK(s && a, "tiny tokenizers do not load");
	if (!s || !a)
		goto out;
	n = enc(s, "abc abb c", 0, x, 16);
	m = enc(a, "abc abb c", 0, y, 16);
	CB_CHECK(ids_eq(x, n, y, m) && ids_eq(x, n, want, 6), "n=%ld m=%ld", n, m);
out:
	cb_tok_free(s);
	cb_tok_free(a);
}

static void test_unknown_chars_fuse_or_not(void)
{
	struct cb_tokenizer *f = load_str("{\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\","
					  "\"fuse_unk\":true," TINY_VOCAB ",\"merges\":[]}}");
	struct cb_tokenizer *u = load_str("{\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\","
					  TINY_VOCAB ",\"merges\":[]}}");
	int32_t x[16], w1[] = { 1, 0, 2 }, w2[] = { 1, 0, 0, 2 };
	long n;

	CB_CHECK(f && u, "tiny tokenizers do not load");
	if (!f || !u)
		goto out;
	n = enc(f, "a??b", 0, x, 16);
	CB_CHECK(ids_eq(x, n, w1, 3), "fused: n=%ld", n);
	n = enc(u, "a\xc3\xa9?b", 0, x, 16);
	CB_CHECK(ids_eq(x, n, w2, 4), "unfused: n=%ld", n);
out:
	cb_tok_free(f);
	cb_tok_free(u);
}

static void test_added_token_flags(void)
{
	/* <X> strips spaces on both sides; "ab" as a single_word token; "c" normalized */
	struct cb_tokenizer *t = load_str(
		"{\"added_tokens\":["
		"{\"id\":10,\"content\":\"<X>\",\"lstrip\":true,\"rstrip\":true,\"special\":true,"
		"\"normalized\":false},"
		"{\"id\":11,\"content\":\"ab\",\"single_word\":true,\"special\":false,"
		"\"normalized\":false},"
		"{\"id\":12,\"content\":\"x\",\"special\":false,\"normalized\":true}],"
		"\"normalizer\":{\"type\":\"Lowercase\"},"
		"\"model\":{\"type\":\"BPE\"," TINY_VOCAB ",\"merges\":[\"a b\",\"ab c\"]}}");
	int32_t x[16];
	int32_t w1[] = { 1, 10, 2 }, w2[] = { 6, 4, 11, 4, 3 }, w3[] = { 12, 1 };
	long n;

	CB_CHECK(t != NULL, "tokenizer does not load");
	if (!t)
		return;
	n = enc(t, "a  <X>  b", 0, x, 16);
	CB_CHECK(ids_eq(x, n, w1, 3), "lstrip/rstrip: n=%ld", n);
	/* "abc" is not a single word "ab"; " ab " is */
	n = enc(t, "abc ab c", 0, x, 16);
	CB_CHECK(ids_eq(x, n, w2, 5), "single_word: n=%ld first=%d", n, x[0]);
	/* the normalized token is found after lowercasing */
	n = enc(t, "XA", 0, x, 16);
	CB_CHECK(ids_eq(x, n, w3, 2), "normalized: n=%ld first=%d", n, x[0]);
	cb_tok_free(t);
}

static void test_metaspace_pretokenizer(void)
{
	struct cb_tokenizer *t = load_str(
		"{\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\xe2\x96\x81\","
		"\"prepend_scheme\":\"first\",\"split\":true},"
		"\"decoder\":{\"type\":\"Metaspace\",\"replacement\":\"\xe2\x96\x81\","
		"\"prepend_scheme\":\"first\",\"split\":true},"
		"\"model\":{\"type\":\"BPE\",\"vocab\":{\"\xe2\x96\x81\":0,\"a\":1,\"b\":2,"
		"\"\xe2\x96\x81" "a\":3,\"\xe2\x96\x81" "ab\":4,\"ab\":5},"
		"\"merges\":[\"\xe2\x96\x81 a\",\"\xe2\x96\x81" "a b\",\"a b\"]}}");
	int32_t x[16], w[] = { 4, 3, 5 };
	char out[32];
	long n, d;

	CB_CHECK(t != NULL, "tokenizer does not load");
	if (!t)
		return;
	/* "▁ab" "▁aab": ▁+a, then ▁a+b; in the second piece ▁+a wins first, then a+b */
	n = enc(t, "ab aab", 0, x, 16);
	CB_CHECK(n == 3 && x[0] == 4 && x[1] == 3 && x[2] == 5, "n=%ld (%d %d %d)", n, x[0], x[1],
		 x[2]);
	d = cb_tok_decode(t, w, 3, 0, out, sizeof(out));
	CB_CHECK(d == 6 && !memcmp(out, "ab aab", 6), "decode gave '%.*s'", (int)d, out);
	cb_tok_free(t);
}

static void test_invalid_utf8_input_is_replaced(void)
{
	int32_t a[16], b[16];
	long n = cb_tok_encode(qwen, "a\xff" "b", 3, 0, a, 16);
	long m = enc(qwen, "a\xef\xbf\xbd" "b", 0, b, 16);

	CB_CHECK(n > 0 && ids_eq(a, n, b, m), "invalid byte not treated as U+FFFD");
}

/*
 * cb_tok_stream_cap() is room enough for every token, even behind held
 * bytes of an unfinished character (llama: <0xE4><0xB8> held first);
 * serve and the CLI size their buffers by it, and a token that did not fit
 * would be left out of the text.
 */
static void stream_cap_fits(const struct cb_tokenizer *t, const char *name, int32_t h1,
			    int32_t h2)
{
	size_t cap = cb_tok_stream_cap(t), n = cb_tok_vocab_size(t), longest = 0;
	char *out = malloc(cap);
	struct cb_tok_stream st;
	long r, bad = 0;
	int32_t id, worst = -1;

	CB_CHECK(out && cap >= 3 * cb_tok_max_token_bytes(t), "%s: cap %zu", name, cap);
	for (id = 0; out && (size_t)id < n; id++) {
		cb_tok_stream_init(&st, t, 0);
		st.at_start = 0;
		if (h1 >= 0 && (cb_tok_stream_feed(&st, h1, out, cap) != 0 ||
				cb_tok_stream_feed(&st, h2, out, cap) != 0))
			break;
		r = cb_tok_stream_feed(&st, id, out, cap);
		if (r < 0 && r != -EINVAL)
			bad++;
		if (r >= 0 && (size_t)r > longest) {
			longest = (size_t)r;
			worst = id;
		}
	}
	CB_CHECK((size_t)id == n, "%s: held bytes not held (stopped at id %d)", name, id);
	CB_CHECK(!bad, "%s: %ld tokens did not fit %zu bytes", name, bad, cap);
	CB_CHECK(longest >= cb_tok_max_token_bytes(t), "%s: longest output %zu (id %d) < %zu",
		 name, longest, worst, cb_tok_max_token_bytes(t));
	free(out);
}

static void test_stream_cap_fits_every_token(void)
{
	stream_cap_fits(llama, "llama", cb_tok_token_id(llama, "<0xE4>", 6),
			cb_tok_token_id(llama, "<0xB8>", 6));
	stream_cap_fits(qwen, "qwen", -1, -1);
}

int main(int argc, char **argv)
{
	char err[256];

	if (argc != 3) {
		fprintf(stderr, "usage: %s QWEN_JSON LLAMA_JSON\n", argv[0]);
		return 2;
	}
	qwen = cb_tok_load_file(argv[1], err, sizeof(err));
	if (qwen)
		llama = cb_tok_load_file(argv[2], err, sizeof(err));
	if (!qwen || !llama) {
		printf("not ok 1 - load the tokenizers\n# %s\n1..1\n", err);
		return 1;
	}
	CB_RUN(test_stream_holds_partial_utf8);
	CB_RUN(test_stream_strips_first_space_only);
	CB_RUN(test_stream_emoji_split_across_tokens);
	CB_RUN(test_stream_cap_fits_every_token);
	CB_RUN(test_encode_reports_full_count);
	CB_RUN(test_bos_eos);
	CB_RUN(test_apply_config);
	CB_RUN(test_decode_errors_and_skip_special);
	CB_RUN(test_load_errors_name_the_problem);
	CB_RUN(test_merges_array_and_string_forms_agree);
	CB_RUN(test_unknown_chars_fuse_or_not);
	CB_RUN(test_added_token_flags);
	CB_RUN(test_metaspace_pretokenizer);
	CB_RUN(test_invalid_utf8_input_is_replaced);
	cb_tok_free(qwen);
	cb_tok_free(llama);
	return cb_test_done();
}
