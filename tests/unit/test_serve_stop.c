// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_serve_stop - colibri serve's stop strings (serve_stop.h): a stop
 * string is found wherever the token boundaries fall in it, the text
 * before it is all sent and nothing from it on, text that only looks
 * like the start of one is held back and then sent, the earliest of
 * several wins, and what is sent is whole UTF-8 characters.
 */
#include <stdlib.h>
#include <string.h>

#include "cb_test.h"
#include "serve_stop.h"

static void set_stops(struct stop_strings *ss, const char *const *s, unsigned int n)
{
	unsigned int i;

	memset(ss, 0, sizeof(*ss));
	for (i = 0; i < n; i++) {
		ss->len[i] = strlen(s[i]);
		memcpy(ss->s[i], s[i], ss->len[i]);
	}
	ss->n = n;
}

/*
 * @text cut into pieces at @cuts (a bitmask: bit i set = a cut after byte
 * i) through the matcher; the text sent into @out, 1 if a stop string hit.
 */
static int feed(const struct stop_strings *ss, const char *text, unsigned long long cuts,
		char *out, size_t *outlen)
{
	struct stop_match m;
	char buf[STOP_LEN_MAX + 64];
	size_t n = strlen(text), from = 0, i, k;
	int hit = 0;

	stop_match_init(&m, ss);
	*outlen = 0;
	for (i = 0; i < n && !hit; i++) {
		if (i + 1 < n && !(cuts >> i & 1))
			continue;
		k = stop_feed(&m, text + from, i + 1 - from, buf, &hit);
		memcpy(out + *outlen, buf, k);
		*outlen += k;
		from = i + 1;
	}
	if (!hit) {
		k = stop_flush(&m, buf);
		memcpy(out + *outlen, buf, k);
		*outlen += k;
	}
	out[*outlen] = 0;
	return hit;
}

/* Every way of cutting a short text gives the same answer. */
static void test_a_stop_string_is_found_across_every_split(void)
{
	static const char *const stops[] = { "END" };
	static const char text[] = "abcENDxyz";
	struct stop_strings ss;
	char out[64];
	size_t n;
	unsigned long long cuts;
	int bad = 0;

	set_stops(&ss, stops, 1);
	for (cuts = 0; cuts < 1ull << (sizeof(text) - 2); cuts++) {
		int hit = feed(&ss, text, cuts, out, &n);

		if (!hit || strcmp(out, "abc"))
			bad++;
	}
	CB_CHECK(!bad, "%d of %llu splits sent something else than \"abc\"", bad,
		 1ull << (sizeof(text) - 2));
}

static void test_a_false_start_is_held_then_sent(void)
{
	static const char *const stops[] = { "\n\nUSER:" };
	struct stop_strings ss;
	char out[128];
	size_t n;
	int hit;

	set_stops(&ss, stops, 1);
	/* "\n\nUS" at a piece's end could be the stop string: it is held, then sent. */
	hit = feed(&ss, "one\n\nUSE two\n\nUSER: three", 0x7ffffff, out, &n);
	CB_CHECK(hit && !strcmp(out, "one\n\nUSE two"), "token by token: hit %d, '%s'", hit, out);
	hit = feed(&ss, "one\n\nUS", 1ull << 5, out, &n);
	CB_CHECK(!hit && !strcmp(out, "one\n\nUS"), "held to the end, then sent: hit %d, '%s'", hit,
		 out);
}

static void test_nothing_held_is_sent_before_it_is_known(void)
{
	static const char *const stops[] = { "STOP" };
	struct stop_strings ss;
	struct stop_match m;
	char buf[STOP_LEN_MAX + 16];
	int hit;
	size_t k;

	set_stops(&ss, stops, 1);
	stop_match_init(&m, &ss);
	k = stop_feed(&m, "go ST", 5, buf, &hit);
	CB_CHECK(k == 3 && !memcmp(buf, "go ", 3) && !hit, "sent %zu bytes", k);
	k = stop_feed(&m, "O", 1, buf, &hit);
	CB_CHECK(k == 0 && !hit, "'STO' is still a start: sent %zu", k);
	k = stop_feed(&m, "P and more", 10, buf, &hit);
	CB_CHECK(k == 0 && hit, "the stop string completes: sent %zu, hit %d", k, hit);
}

/*
 * Of several, the first completed: "cd" is whole before "bcde" (which
 * began earlier) could be, so generation would have stopped there.  The
 * same in one piece as byte by byte; a tie goes to the one begun first.
 */
static void test_the_first_completed_of_several_wins_however_cut(void)
{
	static const char *const stops[] = { "cd", "bcde", "x", "e" };
	static const char *const tie[] = { "cd", "bcd" };
	struct stop_strings ss;
	char out[64];
	size_t n;
	unsigned long long cuts;
	int hit, bad = 0;

	set_stops(&ss, stops, 4);
	for (cuts = 0; cuts < 1ull << 6; cuts++) {
		hit = feed(&ss, "abcdefx", cuts, out, &n);
		bad += !hit || strcmp(out, "ab");
	}
	CB_CHECK(!bad, "%d of 64 splits did not stop at 'ab'", bad);
	set_stops(&ss, tie, 2);
	hit = feed(&ss, "abcdx", 0, out, &n);
	CB_CHECK(hit && !strcmp(out, "a"), "a tie of ends: '%s'", out);
}

/* Held bytes are a stop string's start, and that starts a character. */
static void test_what_is_sent_is_whole_characters(void)
{
	static const char *const stops[] = { "\xc3\xa9t\xc3\xa9" };	/* "été" */
	static const char text[] = "caf\xc3\xa9 \xc3\xa9t\xc3\xa8 \xc3\xa9t\xc3\xa9 fin";
	struct stop_strings ss;
	struct stop_match m;
	char buf[STOP_LEN_MAX + 16], all[64] = "";
	size_t i, k, total = 0;
	int hit = 0, split = 0;

	set_stops(&ss, stops, 1);
	stop_match_init(&m, &ss);
	/* Pieces of whole characters, as the streaming decoder gives them. */
	for (i = 0; text[i] && !hit;) {
		size_t c = (unsigned char)text[i] >= 0xc0 ? 2 : 1, j;

		k = stop_feed(&m, text + i, c, buf, &hit);
		for (j = 0; j < k; j++)
			split |= j + 1 == k && (unsigned char)buf[j] >= 0xc0;
		memcpy(all + total, buf, k);
		total += k;
		i += c;
	}
	all[total] = 0;
	CB_CHECK(hit && !strcmp(all, "caf\xc3\xa9 \xc3\xa9t\xc3\xa8 "), "sent '%s'", all);
	CB_CHECK(!split, "a piece ended inside a character");
}

static void test_no_stop_strings_sends_everything_at_once(void)
{
	struct stop_strings ss = { 0 };
	struct stop_match m;
	char buf[STOP_LEN_MAX + 16];
	int hit;
	size_t k;

	stop_match_init(&m, &ss);
	k = stop_feed(&m, "anything", 8, buf, &hit);
	CB_CHECK(k == 8 && !hit && !stop_flush(&m, buf), "sent %zu", k);
}

int main(void)
{
	CB_RUN(test_a_stop_string_is_found_across_every_split);
	CB_RUN(test_a_false_start_is_held_then_sent);
	CB_RUN(test_nothing_held_is_sent_before_it_is_known);
	CB_RUN(test_the_first_completed_of_several_wins_however_cut);
	CB_RUN(test_what_is_sent_is_whole_characters);
	CB_RUN(test_no_stop_strings_sends_everything_at_once);
	return cb_test_done();
}
